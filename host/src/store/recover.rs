//! Recovering the store's index (`benchboot.db`) from its documents (`runs/*.json`):
//! the index holds nothing a document does not, except when and from where each run
//! was collected, so it can always be rebuilt. A zero-length or deleted database over
//! documents is rebuilt when the store opens; a damaged one (SQLite's "database disk
//! image is malformed", "file is not a database") is refused with the fix,
//! `benchboot runs --reindex`, which moves it aside as `benchboot.db.damaged-<time>`
//! (nothing is deleted) and builds a new one. Also: telling a read-only store apart.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context as _, Result};
use benchboot_results::RunResults;
use rusqlite::{Connection, ErrorCode, OpenFlags};

use super::rows::{insert, row_of, SCHEMA, STORE_VERSION};
use super::words::{said, shown, READ_ONLY_FIX};
use super::{lock, misfiled, run_file_name, same_run, StoreError, DB_FILE, RUNS_DIR};

/// Where and when each run was collected (`collected_at`, unix s; `source`), by its name
/// in the store ([`super::RunRow::stored_as`]): what a rebuilt index keeps from the old
/// one when it can still be read.
pub type Salvage = HashMap<String, (i64, String)>;

/// The `source` of a run whose row was rebuilt without the old one.
pub const REINDEXED_SOURCE: &str = "runs/ (reindexed)";

/// The documents of the store in `dir`: `runs/*.json`, regular files only (not links,
/// folders, FIFOs), not hidden (temp files, macOS `._*` litter), sorted by name.
pub fn documents(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir.join(RUNS_DIR)) else {
        return Vec::new();
    };
    let mut docs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            !name.starts_with('.')
                && name.ends_with(".json")
                && e.file_type().is_ok_and(|t| t.is_file())
        })
        .map(|e| e.path())
        .collect();
    docs.sort();
    docs
}

/// What [`fill`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Filled {
    /// Documents indexed.
    pub documents: usize,
    /// Documents not indexed: the file and why.
    pub failed: Vec<(PathBuf, String)>,
}

impl Filled {
    /// One line per document not indexed: `  <file>: not indexed: <why>`.
    pub fn failure_lines(&self) -> Vec<String> {
        self.failed
            .iter()
            .map(|(f, e)| format!("  {}: not indexed: {e}", shown(f)))
            .collect()
    }
}

/// Adds a row for each document of the store in `dir` to `conn` (tables made).
/// `collected_at` and `source` come from `salvage`, else the file's modification time
/// (set when `collect` placed it) and [`REINDEXED_SOURCE`]. A document that cannot be
/// read, is not a results document, whose file name is not its run id (or `<run
/// id>.<n>`, [`same_run::is_name_of`]), or that is a second name of another (a hard
/// link) is listed in [`Filled::failed`], not indexed, with every entry of `runs/` that
/// is no document ([`misfiled::strangers`]), sorted by file.
pub fn fill(conn: &Connection, dir: &Path, salvage: &Salvage) -> Filled {
    let mut filled = Filled::default();
    let mut indexed = misfiled::Indexed::default();
    for path in documents(dir) {
        // Indexed already under another name: the same file, by identity.
        if let Some(first) = indexed.twin(&path) {
            let why = format!(
                "it is {} under a second name (a hard link: the same file): remove this name \
                 (`rm {}`)",
                misfiled::name_of(first),
                shown(&path)
            );
            filled.failed.push((path, why));
            continue;
        }
        match index_one(conn, dir, &path, salvage) {
            Ok(()) => {
                filled.documents += 1;
                indexed.add(&path);
            }
            Err(e) => filled.failed.push((path, format!("{e:#}"))),
        }
    }
    filled.failed.extend(misfiled::strangers(dir));
    filled.failed.sort();
    filled
}

fn index_one(conn: &Connection, dir: &Path, path: &Path, salvage: &Salvage) -> Result<()> {
    // A regular file, bounded ([`benchboot_results::MAX_DOCUMENT_BYTES`]), as every
    // document reader is: a FIFO left in the store is refused, not waited on.
    let (f, meta) =
        benchboot_input::open(path, "a results document", benchboot_input::Accept::File)?;
    let bytes = benchboot_results::read_document(f)?;
    let text = String::from_utf8(bytes).map_err(|_| anyhow!("not UTF-8 text"))?;
    let r = RunResults::from_json(&text).map_err(|e| anyhow!("not a results document: {e}"))?;
    let id = run_file_name(&r.run_id)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !same_run::is_name_of(&stem, &r.run_id) {
        anyhow::bail!("{}", misfiled::misnamed(path, &id, text.as_bytes()));
    }
    let name = run_file_name(&stem)?;
    let (collected_at, source) = salvage.get(&stem).cloned().unwrap_or_else(|| {
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        (mtime, REINDEXED_SOURCE.to_owned())
    });
    insert(conn, &row_of(dir, &name, &r, &source, collected_at))?;
    Ok(())
}

/// The fix for a damaged database of the store in `dir`.
fn fix(dir: &Path) -> String {
    format!(
        "`benchboot runs --reindex --store {}` moves it aside as {DB_FILE}.damaged-<time> and \
         rebuilds the index from the {} documents in {}",
        dir.display(),
        documents(dir).len(),
        dir.join(RUNS_DIR).display()
    )
}

/// True for SQLite's "database disk image is malformed" (11) and "file is not a
/// database" (26).
fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    )
}

/// `e` as a damaged-database error naming the database of `dir` and the fix; `None`
/// when `e` is another error.
pub fn damaged(dir: &Path, e: &rusqlite::Error) -> Option<anyhow::Error> {
    is_damage(e).then(|| {
        anyhow!(
            "{}: damaged, or not a benchboot store database ({e}): {}",
            dir.join(DB_FILE).display(),
            fix(dir)
        )
    })
}

/// SQLite's own check of every page of `conn` (`PRAGMA quick_check`, O(database
/// size): the store's database holds one short row per run).
///
/// # Errors
/// A damaged page: the database and the fix ([`damaged`]).
pub fn check_intact(dir: &Path, conn: &Connection) -> Result<()> {
    // At most the first problem: SQLite's first line says only which database.
    let verdict = conn.query_row("PRAGMA quick_check(1)", [], |r| r.get::<_, String>(0));
    match verdict {
        Ok(v) if v == "ok" => Ok(()),
        Ok(v) => Err(anyhow!(
            "{}: damaged ({}): {}",
            dir.join(DB_FILE).display(),
            v.lines()
                .filter(|l| !l.starts_with("***") && !l.trim().is_empty())
                .collect::<Vec<_>>()
                .join("; "),
            fix(dir)
        )),
        Err(e) => Err(damaged(dir, &e).unwrap_or_else(|| {
            anyhow!(e).context(format!("checking {}", dir.join(DB_FILE).display()))
        })),
    }
}

/// Why the store in `dir` cannot be written, if it cannot: the first of the folder,
/// its database and its `runs/` folder that is on a read-only file system, not writable
/// by this user, or has no write permission for anyone (mode `0555`: refused even to
/// root, who the kernel lets write anyway, as `rm` asks before removing such a file).
pub fn read_only(dir: &Path) -> Option<String> {
    [dir.to_owned(), dir.join(DB_FILE), dir.join(RUNS_DIR)]
        .into_iter()
        .filter_map(|p| std::fs::metadata(&p).ok().map(|m| (p, m)))
        .find_map(|(p, m)| {
            why_read_only(&p, &m).map(|why| format!("{} is read-only ({why})", p.display()))
        })
}

#[cfg(unix)]
fn why_read_only(p: &Path, m: &std::fs::Metadata) -> Option<String> {
    use std::os::unix::fs::PermissionsExt as _;
    // The mode first: the same words for root and for anyone else.
    let mode = m.permissions().mode() & 0o7777;
    if mode & 0o222 == 0 {
        return Some(format!("mode {mode:04o}, no write permission for anyone"));
    }
    match rustix::fs::access(p, rustix::fs::Access::WRITE_OK) {
        Err(rustix::io::Errno::ROFS) => Some("a read-only file system".into()),
        Err(e) => Some(format!(
            "not writable by this user: {}",
            benchboot_input::os_words(&e.into())
        )),
        Ok(()) => None,
    }
}

#[cfg(not(unix))]
fn why_read_only(_: &Path, m: &std::fs::Metadata) -> Option<String> {
    (m.is_file() && m.permissions().readonly()).then(|| "the read-only attribute is set".into())
}

/// Refuses to write to a read-only store ([`read_only`]); `consequence` says what was
/// not done (`nothing was stored`, `the index was not rebuilt`).
///
/// # Errors
/// The store is read-only: the path, why, what was not done, and the fix.
pub fn check_writable(dir: &Path, consequence: &str) -> Result<()> {
    match read_only(dir) {
        Some(why) => Err(anyhow!("{why}: {consequence}: {READ_ONLY_FIX}")),
        None => Ok(()),
    }
}

/// A database error of the store in `dir` before anything was written, as the
/// read-only message when SQLite says the database is read-only, and in words when the
/// database file was replaced under an open connection (SQLite's
/// `SQLITE_READONLY_DBMOVED`, also "readonly").
pub fn read_only_sqlite(dir: &Path, e: rusqlite::Error) -> anyhow::Error {
    let db = dir.join(DB_FILE);
    let moved = matches!(&e, rusqlite::Error::SqliteFailure(f, _)
        if f.extended_code == rusqlite::ffi::SQLITE_READONLY_DBMOVED);
    if moved {
        anyhow!(
            "{} was replaced while this benchboot had it open (by another benchboot's `runs \
             --reindex`?) ({e}): nothing was stored; run the command again",
            db.display()
        )
    } else if e.sqlite_error_code() == Some(ErrorCode::ReadOnly) {
        anyhow!(
            "{} is read-only ({e}): nothing was stored: {READ_ONLY_FIX}",
            db.display()
        )
    } else {
        damaged(dir, &e).unwrap_or_else(|| e.into())
    }
}

/// Lets SQLite undo a write that was cut short (a killed `collect`, a power cut): a
/// `benchboot.db-journal` beside the database is "hot" and a read-only connection cannot
/// roll it back ("attempt to write a readonly database"), so a writable store is opened
/// read-write once first. Nothing to do without a journal.
///
/// # Errors
/// The database is damaged ([`damaged`]) or cannot be opened.
pub fn roll_back(dir: &Path) -> Result<()> {
    let db = dir.join(DB_FILE);
    if !dir.join(format!("{DB_FILE}-journal")).exists()
        && !dir.join(format!("{DB_FILE}-wal")).exists()
    {
        return Ok(());
    }
    let undo = || -> rusqlite::Result<i64> {
        let conn = Connection::open_with_flags(&db, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
    };
    undo().map(drop).map_err(|e| {
        damaged(dir, &e).unwrap_or_else(|| anyhow!(e).context(format!("opening {}", db.display())))
    })
}

/// The error of a read-only store whose last write was cut short: only a writable one
/// can roll back its journal ([`roll_back`]).
pub fn journal_on_read_only(dir: &Path, e: rusqlite::Error) -> anyhow::Error {
    anyhow!(
        "{}: a write to it was cut short and its journal ({DB_FILE}-journal) must be rolled \
         back, which a read-only store cannot ({e}): make {} writable (chmod u+w) and run \
         again",
        dir.join(DB_FILE).display(),
        dir.display()
    )
}

/// What [`reindex`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reindexed {
    /// The store folder.
    pub dir: PathBuf,
    /// Documents indexed, and those that could not be (file, why).
    pub filled: Filled,
    /// Where the damaged database was moved, when it was.
    pub moved_aside: Option<PathBuf>,
    /// Stale temp files removed ([`super::temp::clean`]), one line each.
    pub temp_notes: Vec<String>,
}

impl Reindexed {
    /// What happened, one line each: the database moved aside, the documents indexed,
    /// each document not indexed, each temp file removed.
    pub fn lines(&self) -> Vec<String> {
        let mut l = self.temp_notes.clone();
        if let Some(m) = &self.moved_aside {
            l.push(format!(
                "moved the damaged database aside as {}",
                m.display()
            ));
        }
        l.push(format!(
            "rebuilt the index of {} from {} documents in runs/",
            self.dir.display(),
            self.filled.documents
        ));
        l.extend(self.filled.failure_lines());
        l
    }
}

/// `benchboot runs --reindex`: builds a new index of the store in `dir` from its
/// documents and puts it in place of `benchboot.db` (built as a temp file, then
/// renamed: a crash leaves the old one), holding the store's lock ([`lock`]) from start
/// to end, so no collect stores a run meanwhile. Where and when each run was collected
/// is kept from the old database while it can be read; a damaged one is moved aside as
/// `benchboot.db.damaged-<YYYYMMDDTHHMMSSZ>` with its journal files, never deleted.
///
/// # Errors
/// No store in `dir` (or it is no folder), the store is read-only, another benchboot holds the lock past
/// [`lock::LOCK_WAIT`], or the new database cannot be written.
pub fn reindex(dir: &Path) -> Result<Reindexed> {
    super::folder::check_store(dir)?;
    if !dir.is_dir() {
        return Err(StoreError::NoStore(dir.to_owned()).into());
    }
    super::folder::check_runs(dir)?;
    check_writable(dir, "the index was not rebuilt")?;
    let locked = lock::acquire(dir, lock::Holder::Reindex).context("the index was not rebuilt")?;
    let temp_notes = super::temp::clean(dir);
    let db = dir.join(DB_FILE);
    let mut moved_aside = None;
    let mut salvage = Salvage::new();
    if db.exists() {
        match read_salvage(dir) {
            Ok(s) => salvage = s,
            Err(_) => moved_aside = Some(move_aside(dir)?),
        }
    }
    let tmp = crate::atomic_file::temp_path(&db);
    // Locked while it is built, as a collect's temp file is: a store opened meanwhile
    // leaves it alone ([`super::temp`]).
    let built = std::fs::File::create(&tmp)
        .and_then(|f| crate::atomic_file::lock(&f).map(|()| f))
        .map_err(|e| said(e, format!("creating {}", tmp.display())))
        .and_then(|locked| {
            let filled = build(&tmp, dir, &salvage)?;
            std::fs::rename(&tmp, &db)
                .map_err(|e| said(e, format!("renaming {} to {}", tmp.display(), db.display())))?;
            drop(locked);
            Ok(filled)
        });
    if built.is_err() {
        let _ = std::fs::remove_file(&tmp);
        let _ = std::fs::remove_file(super::temp::journal_of(&tmp));
    }
    let filled = built?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    locked.release();
    Ok(Reindexed {
        dir: dir.to_owned(),
        filled,
        moved_aside,
        temp_notes,
    })
}

/// `collected_at` and `source` of each row of the database of `dir`, when it is intact.
fn read_salvage(dir: &Path) -> Result<Salvage> {
    let conn = Connection::open_with_flags(dir.join(DB_FILE), OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    check_intact(dir, &conn)?;
    let has_runs: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'runs'",
        [],
        |r| r.get(0),
    )?;
    if has_runs == 0 {
        return Ok(Salvage::new());
    }
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    Ok(salvage_from(&conn, version)?)
}

/// `collected_at` and `source` of each row of `runs` in `conn`, a store of `version`
/// (1: rows keyed by run id, which was also the document's name).
pub fn salvage_from(conn: &Connection, version: i64) -> rusqlite::Result<Salvage> {
    let key = if version <= 1 { "run_id" } else { "stored_as" };
    let mut st = conn.prepare(&format!("SELECT {key}, collected_at, source FROM runs"))?;
    let rows = st
        .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?
        .collect::<rusqlite::Result<Salvage>>();
    rows
}

/// Renames `benchboot.db` (and its `-journal`, `-wal`, `-shm`, which SQLite would
/// otherwise replay into the new one) to `<name>.damaged-<time>`.
fn move_aside(dir: &Path) -> Result<PathBuf> {
    let c = crate::units::civil_utc(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX)),
    );
    let stamp = format!(
        "damaged-{:04}{:02}{:02}T{:02}{:02}{:02}Z",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    );
    let mut aside = None;
    for suffix in ["", "-journal", "-wal", "-shm"] {
        let from = dir.join(format!("{DB_FILE}{suffix}"));
        if !from.exists() {
            continue;
        }
        let to = dir.join(format!("{DB_FILE}{suffix}.{stamp}"));
        std::fs::rename(&from, &to).map_err(|e| {
            said(
                e,
                format!("moving {} aside to {}", from.display(), to.display()),
            )
        })?;
        aside.get_or_insert(to);
    }
    aside.ok_or_else(|| {
        anyhow!(
            "{} vanished while it was moved aside",
            dir.join(DB_FILE).display()
        )
    })
}

/// A new database at `path` with the tables and a row per document of `dir`.
fn build(path: &Path, dir: &Path, salvage: &Salvage) -> Result<Filled> {
    let mut conn =
        Connection::open(path).with_context(|| format!("creating {}", path.display()))?;
    let tx = conn.transaction()?;
    tx.execute_batch(SCHEMA)?;
    tx.pragma_update(None, "user_version", STORE_VERSION)?;
    let filled = fill(&tx, dir, salvage);
    tx.commit()
        .with_context(|| format!("writing {}", path.display()))?;
    drop(conn);
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.sync_all();
    }
    Ok(filled)
}
