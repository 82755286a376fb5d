//! The store's one lock: an exclusive lock on `<store>/benchboot.lock`, held by `runs
//! --reindex` for its whole run and by every write (opening the store for writing,
//! storing one run), so a reindex and a collect never interleave: a collect never
//! writes its row into a database a reindex is about to replace, and a reindex never
//! lists `runs/` while a document goes in without its row.
//!
//! Unix: `flock(2)` on the file; Windows: the file opened for writing, sharing reads
//! only (no second writer can open it; a waiter can still read who holds it). Either way
//! the lock goes with the holder's file handle, so a killed holder frees it at once, and
//! a waiter is never fooled by a stale file. Readers (`runs`, `report`, `compare`) never
//! wait for it: SQLite shows them the database before or after a write, and a reindex
//! replaces it by a rename, which an open reader does not see; a reader of a writable
//! store takes it only to tidy stale temp files, and only when it is free at once
//! ([`Holder::Tidy`]). The holder writes `<pid> <what>` into the file, so a waiter can
//! say who it waits for.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The lock file in the store folder.
pub const LOCK_FILE: &str = "benchboot.lock";
/// How long a writer waits for the lock before it gives up: a minute, longer than a
/// collect's write (milliseconds) and than a reindex of thousands of documents
/// (seconds), short enough for a person waiting at the terminal.
pub const LOCK_WAIT: Duration = Duration::from_secs(60);
/// How often a waiter tries again.
const POLL: Duration = Duration::from_millis(50);

/// What the holder of the lock is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// Opening the store for writing or storing a run (`collect`, `probe --full`).
    Store,
    /// `runs --reindex`.
    Reindex,
    /// A reader tidying the store (stale temp files) on the way in.
    Tidy,
    /// Attaching a power trace to a stored run (`power import`).
    Power,
}

impl Holder {
    const ALL: [Holder; 4] = [Holder::Store, Holder::Reindex, Holder::Tidy, Holder::Power];

    fn tag(self) -> &'static str {
        match self {
            Holder::Store => "store",
            Holder::Reindex => "reindex",
            Holder::Tidy => "tidy",
            Holder::Power => "power",
        }
    }

    fn doing(self) -> &'static str {
        match self {
            Holder::Store => "storing a run (`collect`)",
            Holder::Reindex => "rebuilding the index (`runs --reindex`)",
            Holder::Tidy => "removing stale temp files",
            Holder::Power => "attaching a power trace to a run (`power import`)",
        }
    }
}

/// The store was locked by another benchboot for all of [`LOCK_WAIT`].
#[derive(Debug, thiserror::Error)]
#[error(
    "the store {} is in use: another benchboot {who}, and has held it for over {} s: try \
     again once it is done",
    dir.display(),
    LOCK_WAIT.as_secs()
)]
pub struct Busy {
    /// The store folder.
    pub dir: PathBuf,
    /// Who held it, in words: `(pid 4242) is rebuilding the index (...)`.
    pub who: String,
}

/// The held lock; dropping it releases it.
#[derive(Debug)]
pub struct StoreLock {
    file: File,
}

/// Takes the store's lock for `holder`, waiting up to [`LOCK_WAIT`] (one line on
/// stderr when it has to wait).
///
/// # Errors
/// [`Busy`] after the wait; the lock file cannot be created or opened (with its path).
pub fn acquire(dir: &Path, holder: Holder) -> anyhow::Result<StoreLock> {
    let until = Instant::now() + LOCK_WAIT;
    let mut said = false;
    loop {
        if let Some(lock) = try_acquire(dir, holder)? {
            return Ok(lock);
        }
        if Instant::now() >= until {
            return Err(Busy {
                dir: dir.to_owned(),
                who: who(dir),
            }
            .into());
        }
        if !said {
            crate::errln!(
                "waiting for the store {}: another benchboot {}",
                dir.display(),
                who(dir)
            );
            said = true;
        }
        std::thread::sleep(POLL);
    }
}

/// Takes the store's lock for `holder` if no one holds it, without waiting.
///
/// # Errors
/// The lock file cannot be created or opened, or is a link, a folder, a FIFO or a device
/// (with its path and the fix).
pub fn try_acquire(dir: &Path, holder: Holder) -> anyhow::Result<Option<StoreLock>> {
    let path = dir.join(LOCK_FILE);
    let Some(mut file) = open_locked(&path).map_err(|e| lock_error(&path, &e))? else {
        return Ok(None);
    };
    // A FIFO or a device where the lock file should be: flock(2) may take it, but a
    // waiter reading who holds it could wait for ever.
    if let Some(kind) = file
        .metadata()
        .ok()
        .filter(|m| !m.is_file())
        .map(|m| benchboot_input::kind_of(&m.file_type()))
    {
        anyhow::bail!(
            "the store's lock file {} is {kind}, not a file benchboot made: remove it (`rm \
             {}`); it is made again",
            path.display(),
            path.display()
        );
    }
    // Who holds it, for a waiter; the lock does not depend on it.
    let _ = file
        .set_len(0)
        .and_then(|()| writeln!(file, "{} {}", std::process::id(), holder.tag()));
    Ok(Some(StoreLock { file }))
}

/// Why the lock file at `path` could not be opened, in words, with the fix: a symbolic
/// link or a folder in its place is named as one (remove it), a read-only one says to
/// make it writable, anything else in the OS's words.
fn lock_error(path: &Path, e: &std::io::Error) -> anyhow::Error {
    let shown = path.display();
    let is = std::fs::symlink_metadata(path).ok().map(|m| m.file_type());
    if is.is_some_and(|t| t.is_symlink()) {
        let to = std::fs::read_link(path).unwrap_or_default();
        return anyhow::anyhow!(
            "the store's lock file {shown} is a symbolic link (to {}): benchboot never follows \
             one there, so that no link makes it write elsewhere; remove it (`rm {shown}`); \
             it is made again",
            to.display()
        );
    }
    if is.is_some_and(|t| t.is_dir()) {
        return anyhow::anyhow!(
            "the store's lock file {shown} is a folder: move it out of the store; benchboot \
             makes the file again"
        );
    }
    let words = benchboot_input::os_words(e);
    use std::io::ErrorKind as K;
    match e.kind() {
        K::PermissionDenied | K::ReadOnlyFilesystem => anyhow::anyhow!(
            "the store's lock file {shown}: {words}: give --store DIR for a writable folder, \
             or make it writable (chmod u+w)"
        ),
        _ => anyhow::anyhow!("the store's lock file {shown}: {words}: give --store DIR elsewhere"),
    }
}

/// `None`: another handle holds the lock.
#[cfg(unix)]
fn open_locked(path: &Path) -> std::io::Result<Option<File>> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        // The lock file itself, never what a link planted there points to.
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)?;
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(file)),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// `None`: another handle holds the lock.
#[cfg(windows)]
fn open_locked(path: &Path) -> std::io::Result<Option<File>> {
    use std::os::windows::fs::OpenOptionsExt as _;
    /// ERROR_SHARING_VIOLATION: another handle has the file open without sharing writes.
    const SHARING_VIOLATION: i32 = 32;
    /// FILE_SHARE_READ (winnt.h): others may open it to read, never to write.
    const SHARE_READ: u32 = 0x1;
    match File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .share_mode(SHARE_READ)
        .open(path)
    {
        Ok(f) => Ok(Some(f)),
        Err(e) if e.raw_os_error() == Some(SHARING_VIOLATION) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Neither Unix nor Windows: no lock is taken.
#[cfg(not(any(unix, windows)))]
fn open_locked(path: &Path) -> std::io::Result<Option<File>> {
    File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map(Some)
}

/// Who holds the lock of the store in `dir`, in words, from what the holder wrote:
/// `(pid 4242) is rebuilding the index (...)`; `is writing to it` when it cannot be read
/// or says nothing this benchboot knows.
fn who(dir: &Path) -> String {
    // Through the one reader: a FIFO planted there is not waited on.
    let text = benchboot_input::read_text(&dir.join(LOCK_FILE), "the store's lock file", 64)
        .unwrap_or_default();
    let said = text.trim_end().split_once(' ').and_then(|(pid, tag)| {
        let pid = pid
            .parse::<u32>()
            .ok()
            .filter(|_| pid.bytes().all(|b| b.is_ascii_digit()))?;
        let holder = Holder::ALL.into_iter().find(|h| h.tag() == tag)?;
        Some((pid, holder))
    });
    match said {
        Some((pid, holder)) => format!("(pid {pid}) is {}", holder.doing()),
        None => "is writing to it".into(),
    }
}

impl StoreLock {
    /// Releases the lock (as dropping it does).
    pub fn release(self) {
        drop(self.file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time_and_a_waiter_is_told_who() {
        let dir = tempfile::tempdir().unwrap();
        let held = try_acquire(dir.path(), Holder::Reindex).unwrap().unwrap();
        assert!(try_acquire(dir.path(), Holder::Store).unwrap().is_none());
        assert_eq!(
            who(dir.path()),
            format!(
                "(pid {}) is rebuilding the index (`runs --reindex`)",
                std::process::id()
            )
        );
        held.release();
        let again = try_acquire(dir.path(), Holder::Store).unwrap();
        assert!(again.is_some());
    }

    #[test]
    fn a_busy_store_says_who_and_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let _held = try_acquire(dir.path(), Holder::Store).unwrap().unwrap();
        let busy = Busy {
            dir: dir.path().to_owned(),
            who: who(dir.path()),
        };
        assert_eq!(
            busy.to_string(),
            format!(
                "the store {} is in use: another benchboot (pid {}) is storing a run \
                 (`collect`), and has held it for over 60 s: try again once it is done",
                dir.path().display(),
                std::process::id()
            )
        );
    }

    /// The error of a lock not taken, as printed.
    fn refused(r: anyhow::Result<Option<StoreLock>>) -> String {
        match r {
            Ok(l) => panic!("taken: {l:?}"),
            Err(e) => format!("{e:#}"),
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_link_a_fifo_or_a_folder_in_the_lock_files_place_is_named_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join(LOCK_FILE);
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, b"mine").unwrap();
        std::os::unix::fs::symlink(&elsewhere, &lock).unwrap();
        assert_eq!(
            refused(try_acquire(dir.path(), Holder::Store)),
            format!(
                "the store's lock file {l} is a symbolic link (to {e}): benchboot never \
                 follows one there, so that no link makes it write elsewhere; remove it (`rm \
                 {l}`); it is made again",
                l = lock.display(),
                e = elsewhere.display()
            )
        );
        assert_eq!(std::fs::read(&elsewhere).unwrap(), b"mine");
        std::fs::remove_file(&lock).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &lock,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert_eq!(
            refused(try_acquire(dir.path(), Holder::Store)),
            format!(
                "the store's lock file {l} is a FIFO (named pipe), not a file benchboot made: \
                 remove it (`rm {l}`); it is made again",
                l = lock.display()
            )
        );
        // A waiter asking who holds it is not held up by the FIFO either.
        assert_eq!(who(dir.path()), "is writing to it");
        std::fs::remove_file(&lock).unwrap();
        std::fs::create_dir(&lock).unwrap();
        assert_eq!(
            refused(try_acquire(dir.path(), Holder::Store)),
            format!(
                "the store's lock file {} is a folder: move it out of the store; benchboot \
                 makes the file again",
                lock.display()
            )
        );
    }

    #[test]
    fn a_lock_file_saying_something_else_names_no_one() {
        let dir = tempfile::tempdir().unwrap();
        for text in [
            "",
            "x reindex\n",
            "12 \u{1b}[2J\n",
            "-1 store\n",
            "+3 store",
        ] {
            std::fs::write(dir.path().join(LOCK_FILE), text).unwrap();
            assert_eq!(who(dir.path()), "is writing to it", "{text:?}");
        }
    }
}
