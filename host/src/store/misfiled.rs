//! What the index leaves out of `runs/`, each said with what to do: a document under
//! another run's name (renamed only to a name nothing holds), a second name of a
//! document (a hard link: the same file, by device and inode), and every entry that is
//! no document (a link, a folder, a FIFO, a file not named `*.json`). Hidden names (the
//! store's temp files, macOS litter) are not said.

use std::path::{Path, PathBuf};

use benchboot_results::name::SafeName;

use super::words::shown;
use super::{same_run, RUNS_DIR};

/// A file's identity: `(st_dev, st_ino)` (Unix; `None` elsewhere and when it cannot be
/// stat'ed), links followed.
pub fn identity(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// The name of the document `path` of run `id` (`bytes`, read; `id` through the one
/// gate) that does not carry that id, in words with the fix: `<id>.json` when nothing holds that name; when a
/// file does, that this is the same file (remove this name), a copy of it (remove it),
/// or the first `<id>.<n>.json` nothing holds (the name `collect` gives a second run
/// with one id).
pub fn misnamed(path: &Path, id: &SafeName, bytes: &[u8]) -> String {
    let runs = path.parent().unwrap_or(Path::new(""));
    let right = id.path_in(runs, "json");
    let taken = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    let rm = format!("`rm {}`", shown(path));
    if !taken(&right) {
        return format!("its run id is `{id}`: rename it to {id}.json, or collect it again");
    }
    if identity(path).is_some() && identity(path) == identity(&right) {
        return format!(
            "its run id is `{id}`, and it is {id}.json under a second name (a hard link: \
             the same file): remove this name ({rm})"
        );
    }
    let same_bytes = benchboot_results::read_document_file(&right).is_ok_and(|b| b == bytes);
    if same_bytes {
        return format!("its run id is `{id}`, and it is a copy of {id}.json: remove it ({rm})");
    }
    let free = (2..=same_run::MAX_SAME_ID)
        .filter_map(|n| same_run::copy_name(id.as_str(), n).ok())
        .find(|n| !taken(&n.path_in(runs, "json")));
    match free {
        Some(n) => format!(
            "its run id is `{id}`, as {id}.json's: rename it to {n}.json (the name collect \
             gives another run with one id), or collect it again"
        ),
        None => format!(
            "its run id is `{id}`, which {} documents carry already (the most the store \
             keeps under one id): move it out of runs/",
            same_run::MAX_SAME_ID
        ),
    }
}

/// The entries of `dir`'s `runs/` that are no document, each with what it is and what
/// to do, sorted by name: not hidden, and not a regular file named `*.json` (a link is
/// not followed; [`super::recover::documents`] lists the rest).
pub fn strangers(dir: &Path) -> Vec<(PathBuf, String)> {
    let Ok(entries) = std::fs::read_dir(dir.join(RUNS_DIR)) else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, String)> = entries
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|e| {
            let path = e.path();
            let ft = e.file_type().ok()?;
            let json = path.extension().is_some_and(|x| x == "json");
            let why = if ft.is_symlink() {
                let to = std::fs::read_link(&path).unwrap_or_default();
                format!(
                    "a symbolic link (to {}), which the store never follows: put the document \
                     itself in its place, or remove the link",
                    shown(&to)
                )
            } else if ft.is_dir() {
                "a folder, not a document: move it out of runs/".to_owned()
            } else if !ft.is_file() {
                format!(
                    "{}, not a document: remove it",
                    benchboot_input::kind_of(&ft)
                )
            } else if !json {
                "not named <run id>.json, as every document in runs/ is: rename it if it is \
                 a results document, else move it out of runs/"
                    .to_owned()
            } else {
                return None;
            };
            Some((path, why))
        })
        .collect();
    out.sort();
    out
}

/// The name of `p` in its folder, for a message (control characters escaped).
pub fn name_of(p: &Path) -> String {
    p.file_name()
        .map_or_else(String::new, |n| shown(n.as_ref()))
}

/// The documents indexed so far, by identity ([`identity`]).
#[derive(Debug, Default)]
pub struct Indexed(std::collections::HashMap<(u64, u64), PathBuf>);

impl Indexed {
    /// The document indexed already that is the same file as `path`, if any.
    pub fn twin(&self, path: &Path) -> Option<&Path> {
        self.0.get(&identity(path)?).map(PathBuf::as_path)
    }

    /// Notes that `path` was indexed.
    pub fn add(&mut self, path: &Path) {
        if let Some(id) = identity(path) {
            self.0.entry(id).or_insert_with(|| path.to_owned());
        }
    }
}
