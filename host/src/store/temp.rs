//! Temp files of the store: a document is written as `runs/.<name>.<pid>.tmp` and
//! renamed into place ([`crate::atomic_file`]), a rebuilt index as
//! `.benchboot.db.<pid>.tmp`. A killed `collect` leaves its temp file behind; opening
//! the store removes such files.
//!
//! The rule (Unix): a temp file is stale when no process holds its lock and it was not
//! modified in the last [`UNLOCKED_GRACE`]. The writer takes an exclusive `flock` on
//! its temp file right after creating it and holds it until the rename; the kernel
//! drops the lock when the writer exits or is killed, so a lock tells a live writer
//! from a dead one exactly, whatever its age, without trusting pids (reused) or clocks.
//! The grace covers the instant between creating the file and locking it, and files
//! of writers that do not lock (older benchboot versions). Without `flock` (Windows) a
//! temp file is stale after [`STALE_AFTER`]: a document is written from memory in
//! seconds.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::{DB_FILE, RUNS_DIR};

/// An unlocked temp file younger than this is left alone (Unix).
pub const UNLOCKED_GRACE: Duration = Duration::from_secs(60);
/// Without locks (Windows), a temp file older than this is stale: an hour.
pub const STALE_AFTER: Duration = Duration::from_secs(3600);

/// The writer's exclusive lock on a temp file, taken by [`crate::atomic_file`].
pub use crate::atomic_file::lock;

/// The temp files of the store in `dir` (in it and in `runs/`): hidden regular files
/// named `.*.tmp`; links and folders are not.
pub fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for d in [dir.to_owned(), dir.join(RUNS_DIR)] {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.filter_map(|e| e.ok()) {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.')
                && name.ends_with(".tmp")
                && name.len() > ".tmp".len() + 1
                && e.file_type().is_ok_and(|t| t.is_file())
            {
                found.push(e.path());
            }
        }
    }
    found.sort();
    found
}

/// True when temp file `path` belongs to no live writer (see the module's rule).
pub fn is_stale(path: &Path, now: SystemTime) -> bool {
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let age = f
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| now.duration_since(t).ok())
        .unwrap_or_default();
    if cfg!(unix) {
        // Our probe lock goes when `f` is closed.
        age >= UNLOCKED_GRACE && lock(&f).is_ok()
    } else {
        age >= STALE_AFTER
    }
}

/// Removes the stale temp files of the store in `dir`; one line for each removed
/// (path and size), also printed on stderr. Files it cannot remove are left, silently:
/// they are tried again at the next open.
pub fn clean(dir: &Path) -> Vec<String> {
    let now = SystemTime::now();
    let mut notes = Vec::new();
    for path in temp_files(dir) {
        if !is_stale(&path, now) {
            continue;
        }
        let size = std::fs::metadata(&path).map_or(0, |m| m.len());
        if std::fs::remove_file(&path).is_ok() {
            let what = if path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&format!(".{DB_FILE}.")))
            {
                "an interrupted `runs --reindex`"
            } else {
                "an interrupted `collect`"
            };
            let note = format!(
                "removed {} ({}), a temp file left by {what}",
                super::recover::shown(&path),
                crate::units::size_label(size)
            );
            eprintln!("{note}");
            notes.push(note);
        }
    }
    notes
}
