//! The store's folders (the store itself and its `runs/`): made when missing, or what
//! stands in their place said in words: `/dev/null is a character device, not a
//! folder`, never the OS's `File exists (os error 17)`.

use std::path::Path;

use anyhow::{anyhow, Result};

/// What `path` is when it is there and no folder (a link followed): `a file`, `a
/// character device`, `a symbolic link to nothing`, ...; `None` for a folder or
/// nothing at all.
pub fn not_a_folder(path: &Path) -> Option<&'static str> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => None,
        Ok(m) if m.is_file() => Some("a file"),
        Ok(m) => Some(benchboot_input::kind_of(&m.file_type())),
        Err(_) => std::fs::symlink_metadata(path)
            .is_ok_and(|m| m.file_type().is_symlink())
            .then_some("a symbolic link to nothing"),
    }
}

/// Refuses a store `dir` that is there and no folder.
///
/// # Errors
/// What `dir` is, and to give `--store DIR` for a folder.
pub fn check_store(dir: &Path) -> Result<()> {
    match not_a_folder(dir) {
        Some(kind) => Err(anyhow!("{}", store_is(dir, kind))),
        None => Ok(()),
    }
}

fn store_is(dir: &Path, kind: &str) -> String {
    format!(
        "the results store {} is {kind}, not a folder: give --store DIR for a folder",
        dir.display()
    )
}

/// The results store's folder `dir`, made when missing (with its parents).
///
/// # Errors
/// `dir` or a folder above it is something else (what it is, and to give `--store DIR`
/// for a folder); it cannot be made (read-only: [`super::words::read_only_error`];
/// else the OS's words).
pub fn create_store(dir: &Path) -> Result<()> {
    create(dir, |p| {
        if p == dir {
            store_is(p, not_a_folder(p).unwrap_or("no folder"))
        } else {
            format!(
                "the results store {}: {} is {}, not a folder: give --store DIR elsewhere",
                dir.display(),
                p.display(),
                not_a_folder(p).unwrap_or("no folder")
            )
        }
    })
}

/// Refuses a store `dir` whose `runs` is there and no folder (for `runs --reindex`,
/// which would index nothing).
///
/// # Errors
/// What `runs` is, and to move it away.
pub fn check_runs(dir: &Path) -> Result<()> {
    let runs = dir.join(super::RUNS_DIR);
    match not_a_folder(&runs) {
        Some(kind) => Err(anyhow!("{}", runs_is(dir, &runs, kind))),
        None => Ok(()),
    }
}

fn runs_is(dir: &Path, runs: &Path, kind: &str) -> String {
    format!(
        "the results store's runs folder {} is {kind}, not a folder: move it out of {} (the \
         store keeps each run's document in runs/), or give --store DIR elsewhere",
        runs.display(),
        dir.display()
    )
}

/// The store's `runs/` folder in `dir` (the store's folder, there), made when missing.
///
/// # Errors
/// `runs` is something else (what it is, and to move it away); it cannot be made.
pub fn create_runs(dir: &Path) -> Result<()> {
    let runs = dir.join(super::RUNS_DIR);
    create(&runs, |p| {
        runs_is(dir, p, not_a_folder(p).unwrap_or("no folder"))
    })
}

/// Makes `d` and its parents; when that fails for a part of the path that is there and
/// no folder, `said` says it of that part.
fn create(d: &Path, said: impl Fn(&Path) -> String) -> Result<()> {
    let Err(e) = std::fs::create_dir_all(d) else {
        return Ok(());
    };
    // The topmost part that stands in the way: `a/b` of `a/b/c/store` when `a/b` is a
    // file.
    let parts: Vec<&Path> = d
        .ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .collect();
    if let Some(p) = parts.into_iter().rev().find(|p| not_a_folder(p).is_some()) {
        return Err(anyhow!("{}", said(p)));
    }
    use std::io::ErrorKind as K;
    Err(match e.kind() {
        K::ReadOnlyFilesystem | K::PermissionDenied => super::words::read_only_error(d, e),
        _ => anyhow!(
            "creating the results store {}: {}: give --store DIR elsewhere",
            d.display(),
            benchboot_input::os_words(&e)
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_stands_where_a_folder_should_be_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("store");
        std::fs::write(&file, b"").unwrap();
        assert_eq!(not_a_folder(&file), Some("a file"));
        assert_eq!(not_a_folder(dir.path()), None);
        assert_eq!(not_a_folder(&dir.path().join("none")), None);
        #[cfg(unix)]
        {
            assert_eq!(
                not_a_folder(Path::new("/dev/null")),
                Some("a character device")
            );
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(dir.path().join("none"), &link).unwrap();
            assert_eq!(not_a_folder(&link), Some("a symbolic link to nothing"));
        }
        // Below a file: the file is named, not the folder that cannot be.
        let e = create_store(&file.join("a/b")).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "the results store {}: {} is a file, not a folder: give --store DIR elsewhere",
                file.join("a/b").display(),
                file.display()
            )
        );
    }
}
