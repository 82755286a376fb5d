//! Writing a file so that a reader, a crash or a power cut sees the old file or the
//! whole new one, never half of it.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The end of every temp file benchboot writes: `.<name>.<pid>.benchboot.tmp`
/// ([`temp_path`]). The store's cleanup removes only names of this exact shape
/// ([`temp_target`]), never another program's `*.tmp`.
pub const TEMP_SUFFIX: &str = ".benchboot.tmp";

/// The temp file `path` is written through: `.<name>.<pid>.benchboot.tmp` in its folder,
/// `<pid>` this process's id. The one place a temp name is made; [`temp_target`] reads
/// it back.
pub fn temp_path(path: &Path) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new(""));
    let name = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.join(format!(".{name}.{}{TEMP_SUFFIX}", std::process::id()))
}

/// For a file name of the exact shape [`temp_path`] gives, `.<name>.<pid>.benchboot.tmp`:
/// the file it was written for (`<name>`, not empty) and its writer's pid (decimal, no
/// sign, fits a `u32`). `None` for any other name: a user's `.notes.tmp`, an editor's
/// swap file, another program's temp file.
pub fn temp_target(file_name: &str) -> Option<(&str, u32)> {
    let inner = file_name.strip_prefix('.')?.strip_suffix(TEMP_SUFFIX)?;
    let (name, pid) = inner.rsplit_once('.')?;
    let digits = !pid.is_empty() && pid.len() <= 10 && pid.bytes().all(|b| b.is_ascii_digit());
    let pid = pid.parse::<u32>().ok().filter(|_| digits)?;
    (!name.is_empty()).then_some((name, pid))
}

/// Writes `text` to `path`: a temp file in the same folder ([`temp_path`], locked
/// while it is written, see [`crate::store::temp`]), fsync, rename over `path`, fsync
/// of the folder. Creates the folder when missing.
/// On failure the temp file is removed and `path` is as it was.
///
/// # Errors
/// The folder cannot be created, or the temp file cannot be written or renamed; the
/// message names the path.
pub fn write(path: &Path, text: &str) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let tmp = temp_path(path);
    let write = || -> std::io::Result<std::fs::File> {
        let mut f = std::fs::File::create(&tmp)?;
        // Held until after the rename: a store opening meanwhile sees a live writer's
        // file ([`crate::store::temp`]); the kernel drops it if this process is killed.
        lock(&f)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        Ok(f)
    };
    let placed = write()
        .with_context(|| format!("writing {}", tmp.display()))
        .and_then(|locked| {
            std::fs::rename(&tmp, path)
                .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
                .map(|()| drop(locked))
        });
    if placed.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    placed?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Checks that `-o path` may be replaced by [`write`]: it is missing or a regular file.
/// A folder is refused, and so is anything else that exists: a symbolic link, a FIFO,
/// a device (`/dev/stdout`, `/dev/null`), which the rename would replace with a regular
/// file instead of writing through.
///
/// # Errors
/// Names the path, what it is, and what to pass instead.
pub fn check_output(path: &Path) -> Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if meta.is_dir() {
        anyhow::bail!(
            "-o {}: is a folder; name a file (e.g. {})",
            path.display(),
            path.join("report.html").display()
        );
    }
    if !meta.is_file() {
        anyhow::bail!(
            "-o {}: is not a regular file (a link, a pipe or a device), and writing it would \
             replace it; name a new file, or leave -o out to print",
            path.display()
        );
    }
    Ok(())
}

/// Takes the writer's exclusive `flock` on temp file `f`, held until `f` is closed (a
/// no-op without `flock`, on Windows). The store tells a live writer's temp file from a
/// dead one's by it ([`crate::store::temp`]).
///
/// # Errors
/// The lock cannot be taken (another process holds it).
pub fn lock(f: &std::fs::File) -> std::io::Result<()> {
    #[cfg(unix)]
    rustix::fs::flock(f, rustix::fs::FlockOperation::NonBlockingLockExclusive)?;
    #[cfg(not(unix))]
    let _ = f;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn an_output_that_is_not_a_regular_file_is_one_plain_sentence() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("link.html");
        std::os::unix::fs::symlink("/etc/passwd", &link).unwrap();
        let e = format!("{:#}", check_output(&link).unwrap_err());
        assert_eq!(
            e,
            format!(
                "-o {}: is not a regular file (a link, a pipe or a device), and writing it \
                 would replace it; name a new file, or leave -o out to print",
                link.display()
            )
        );
    }

    #[test]
    fn writes_the_whole_file_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/r.json");
        write(&p, "{}").unwrap();
        write(&p, "{\"a\": 1}").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\"a\": 1}");
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["r.json"]);
    }

    #[test]
    fn temp_names_read_back_and_no_other_name_does() {
        let tmp = temp_path(Path::new("/s/runs/r-1.json"));
        let name = tmp.file_name().unwrap().to_str().unwrap();
        assert_eq!(tmp.parent(), Some(Path::new("/s/runs")));
        assert_eq!(temp_target(name), Some(("r-1.json", std::process::id())));
        assert_eq!(
            temp_target(".benchboot.db.4243.benchboot.tmp"),
            Some(("benchboot.db", 4243))
        );
        for other in [
            ".notes.tmp",
            ".r-1.json.4242.tmp",
            ".r-1.json.benchboot.tmp",
            "..4242.benchboot.tmp",
            ".r.json.-1.benchboot.tmp",
            ".r.json.+1.benchboot.tmp",
            ".r.json.99999999999.benchboot.tmp",
            "r.json.1.benchboot.tmp",
            ".r.json.1.benchboot.tmp-journal",
        ] {
            assert_eq!(temp_target(other), None, "{other}");
        }
    }

    #[test]
    fn a_failed_rename_removes_the_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("taken");
        std::fs::create_dir_all(p.join("inside")).unwrap();
        let err = format!("{:#}", write(&p, "x").unwrap_err());
        assert!(err.contains("renaming") && err.contains("taken"), "{err}");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["taken"]);
    }
}
