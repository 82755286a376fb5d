//! Temp files of the store: a document is written as
//! `runs/.<name>.json.<pid>.benchboot.tmp` and renamed into place
//! ([`crate::atomic_file`]), a rebuilt index as `.benchboot.db.<pid>.benchboot.tmp`
//! (with SQLite's `-journal` beside it while it is built), a run's power trace as
//! `power/.<name>.json.<pid>.benchboot.tmp`. A killed `collect`, `runs --reindex` or
//! `power import` leaves its temp file behind; opening the store removes it.
//!
//! Only those names: the exact shape [`crate::atomic_file::temp_path`] makes, for a
//! file benchboot writes in that folder (`benchboot.db` in the store, a document name
//! in `runs/`), and never another `*.tmp`, since the store may be any folder
//! (`--store ~`) and its `.notes.tmp` is not ours.
//!
//! The rule (Unix): a temp file is stale when no process holds its lock and it was not
//! modified in the last [`UNLOCKED_GRACE`]. The writer takes an exclusive `flock` on
//! its temp file right after creating it and holds it until the rename; the kernel
//! drops the lock when the writer exits or is killed, so a lock tells a live writer
//! from a dead one exactly, whatever its age, without trusting pids (reused) or clocks.
//! The grace covers the instant between creating the file and locking it. Cleaning
//! runs under the store's lock ([`super::lock`]), which every writer of the store
//! holds too. Without `flock` (Windows) a temp file is stale after [`STALE_AFTER`]: a
//! document is written from memory in seconds.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::atomic_file::temp_target;

use super::{run_file_name, DB_FILE, RUNS_DIR};

/// An unlocked temp file younger than this is left alone (Unix).
pub const UNLOCKED_GRACE: Duration = Duration::from_secs(60);
/// Without locks (Windows), a temp file older than this is stale: an hour.
pub const STALE_AFTER: Duration = Duration::from_secs(3600);

/// The writer's exclusive lock on a temp file, taken by [`crate::atomic_file`].
use crate::atomic_file::lock;

/// SQLite's rollback journal of the database at `db`: `<db>-journal`.
pub fn journal_of(db: &Path) -> PathBuf {
    let mut name = OsString::from(db.as_os_str());
    name.push("-journal");
    PathBuf::from(name)
}

/// True when `name`, in the store folder (`in_runs` false) or in its `runs/`, is a temp
/// file benchboot writes there: a rebuilt index's (and its SQLite journal) in the
/// store folder, a document's in `runs/`.
fn is_ours(name: &str, in_runs: bool) -> bool {
    if in_runs {
        return temp_target(name).is_some_and(|(target, _)| {
            target
                .strip_suffix(".json")
                .is_some_and(|stem| run_file_name(stem).is_ok())
        });
    }
    let db_temp = name.strip_suffix("-journal").unwrap_or(name);
    temp_target(db_temp).is_some_and(|(target, _)| target == DB_FILE)
}

/// The temp files of the store in `dir` (in it, in `runs/` and in `power/`, whose
/// files are named as `runs/`'s are): regular files whose
/// names are benchboot's own temp names there (see the module); links, folders and
/// every other name are not.
pub fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let power = dir.join(super::POWER_DIR);
    for (d, in_runs) in [
        (dir.to_owned(), false),
        (dir.join(RUNS_DIR), true),
        (power, true),
    ] {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.filter_map(|e| e.ok()) {
            let name = e.file_name();
            if name.to_str().is_some_and(|n| is_ours(n, in_runs))
                && e.file_type().is_ok_and(|t| t.is_file())
            {
                found.push(e.path());
            }
        }
    }
    // A database's temp file before its journal.
    found.sort();
    found
}

/// True when temp file `path` belongs to no live writer (see the module's rule). A
/// rebuilt index's journal follows its database: stale once that is gone or stale.
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
    let journal_of = path
        .to_str()
        .and_then(|p| p.strip_suffix("-journal"))
        .map(PathBuf::from);
    if let Some(db) = journal_of {
        let limit = if cfg!(unix) {
            UNLOCKED_GRACE
        } else {
            STALE_AFTER
        };
        return age >= limit && (!db.exists() || is_stale(&db, now));
    }
    if cfg!(unix) {
        // Our probe lock goes when `f` is closed.
        age >= UNLOCKED_GRACE && lock(&f).is_ok()
    } else {
        age >= STALE_AFTER
    }
}

/// Removes the stale temp files of the store in `dir`; one line for each removed
/// (path and size), also printed on stderr. Files it cannot remove are left, silently:
/// they are tried again at the next open. The caller holds the store's lock.
pub fn clean(dir: &Path) -> Vec<String> {
    let now = SystemTime::now();
    let mut notes = Vec::new();
    for path in temp_files(dir) {
        if !is_stale(&path, now) {
            continue;
        }
        let size = std::fs::metadata(&path).map_or(0, |m| m.len());
        if std::fs::remove_file(&path).is_ok() {
            let folder = path.parent().and_then(Path::file_name);
            let what = if path.parent() == Some(dir) {
                "an interrupted `runs --reindex`"
            } else if folder.is_some_and(|f| f == super::POWER_DIR) {
                "an interrupted `power import`"
            } else {
                "an interrupted `collect`"
            };
            let note = format!(
                "removed {} ({}), a temp file left by {what}",
                super::words::shown(&path),
                crate::units::size_label(size)
            );
            crate::errln!("{note}");
            notes.push(note);
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_benchboots_own_temp_names_are_ours() {
        for (name, in_runs) in [
            (".benchboot.db.4243.benchboot.tmp", false),
            (".benchboot.db.4243.benchboot.tmp-journal", false),
            (".rpi-1b-0001.json.4242.benchboot.tmp", true),
            (".rpi-1b-0001.2.json.4242.benchboot.tmp", true),
        ] {
            assert!(is_ours(name, in_runs), "{name}");
        }
        for (name, in_runs) in [
            // Another program's, or a person's.
            (".notes.tmp", false),
            (".notes.tmp", true),
            (".benchboot.db.4243.tmp", false),
            (".rpi-1b-0001.json.4242.tmp", true),
            // Ours in shape, but not a file benchboot writes in that folder.
            (".notes.txt.4242.benchboot.tmp", false),
            (".notes.txt.4242.benchboot.tmp", true),
            (".benchboot.db.4243.benchboot.tmp", true),
            (".rpi-1b-0001.json.4242.benchboot.tmp", false),
            (".-x.json.4242.benchboot.tmp", true),
            (".rpi-1b-0001.json.4242.benchboot.tmp-journal", true),
        ] {
            assert!(!is_ours(name, in_runs), "{name} in runs: {in_runs}");
        }
    }

    #[test]
    fn a_power_traces_temp_file_is_found_in_power() {
        let dir = tempfile::tempdir().unwrap();
        let power = dir.path().join(crate::store::POWER_DIR);
        std::fs::create_dir_all(&power).unwrap();
        let tmp = power.join(".r-1.json.4242.benchboot.tmp");
        std::fs::write(&tmp, "{").unwrap();
        std::fs::write(power.join("notes.tmp"), "").unwrap();
        assert_eq!(temp_files(dir.path()), [tmp]);
    }
}
