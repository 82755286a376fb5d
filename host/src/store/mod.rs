//! The local results store: an SQLite database of collected runs (`<store>/benchboot.db`,
//! table `runs`) plus each run's raw JSON (`<store>/runs/<run id>.json`).
//!
//! The store lives in `--store DIR`, else `$BENCHBOOT_STORE`, else
//! `$XDG_DATA_HOME/benchboot`, else `~/.local/share/benchboot`. One row per run id:
//! collecting a run again updates its row and file, never adds a second one.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use benchboot_results::name::{NameKind, SafeName};
use benchboot_results::RunResults;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, TransactionBehavior};

pub mod recover;
pub mod temp;

pub use recover::{reindex, Reindexed};
use serde::Serialize;

/// Environment variable that names the store folder.
pub const STORE_ENV: &str = "BENCHBOOT_STORE";
/// The database file inside the store folder.
pub const DB_FILE: &str = "benchboot.db";
/// The folder of raw JSON files inside the store folder.
pub const RUNS_DIR: &str = "runs";
/// Version of the store's own tables (`PRAGMA user_version`).
const STORE_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs (
    run_id            TEXT PRIMARY KEY NOT NULL,
    board             TEXT NOT NULL,
    emulated          INTEGER NOT NULL,
    complete          INTEGER NOT NULL,
    kernel            TEXT NOT NULL,
    collected_at      INTEGER NOT NULL, -- unix time, s
    source            TEXT NOT NULL,    -- HOST:PORT, or the card path it was read from
    json_path         TEXT NOT NULL,    -- relative to the store folder
    schema_major      INTEGER NOT NULL,
    schema_minor      INTEGER NOT NULL,
    written_ns        INTEGER NOT NULL, -- system.written_ns of the document
    storage_count     INTEGER NOT NULL,
    device_read_count INTEGER NOT NULL,
    random_count      INTEGER NOT NULL,
    verify_count      INTEGER NOT NULL,
    network_count     INTEGER NOT NULL,
    event_count       INTEGER NOT NULL
);";

const COLUMNS: &str = "run_id, board, emulated, complete, kernel, collected_at, source, \
    json_path, schema_major, schema_minor, written_ns, storage_count, device_read_count, \
    random_count, verify_count, network_count, event_count";

/// Why a run could not be found in the store (wrapped in [`anyhow::Error`]; downcast to
/// tell the cases apart).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "no stored run matches `{query}` in {}: `benchboot runs` lists the stored runs; \
         a results file can be given by its path",
        store.display()
    )]
    NotFound { query: String, store: PathBuf },
    #[error(
        "`{query}` matches {} stored runs ({}): give more of the run id",
        matches.len(),
        matches.join(", ")
    )]
    Ambiguous { query: String, matches: Vec<String> },
    #[error(
        "no results store at {}: collect a run first (`benchboot collect`), or set \
         ${STORE_ENV} to the store's folder, or give --store DIR",
        .0.display()
    )]
    NoStore(PathBuf),
    #[error("{0}: is this a benchboot results document?")]
    BadRunId(benchboot_results::name::NameError),
}

/// Measurements in a document, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Counts {
    /// Timed storage passes.
    pub storage: u64,
    /// `hdparm`-style device reads.
    pub device_reads: u64,
    /// Random-I/O runs.
    pub random: u64,
    /// Verification passes.
    pub verify: u64,
    /// Network runs: throughput + latency + HTTP.
    pub network: u64,
    /// Events (failed or warned steps).
    pub events: u64,
}

impl Counts {
    /// Counts the measurements of `r`.
    pub fn of(r: &RunResults) -> Counts {
        let n = |l: usize| l as u64;
        Counts {
            storage: n(r.storage.len()),
            device_reads: n(r.device_reads.len()),
            random: n(r.random.len()),
            verify: n(r.verify.len()),
            network: n(r.network.throughput.len() + r.network.latency.len() + r.network.http.len()),
            events: n(r.events.len()),
        }
    }

    /// All measurements (events not counted).
    pub fn measurements(&self) -> u64 {
        self.storage + self.device_reads + self.random + self.verify + self.network
    }
}

/// One stored run (a row of `runs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunRow {
    pub run_id: String,
    pub board: String,
    /// True: figures from QEMU, not hardware.
    pub emulated: bool,
    /// False: a partial run (not every step of the plan was attempted).
    pub complete: bool,
    /// `uname -r` of the board.
    pub kernel: String,
    /// When it was collected, unix time in seconds.
    pub collected_at: i64,
    /// `HOST:PORT` it was fetched from, or the card path it was read from.
    pub source: String,
    /// The raw JSON in the store (absolute path).
    pub json_path: PathBuf,
    /// `schema_version` of the document: major, minor.
    pub schema: (u32, u32),
    /// `system.written_ns` of the document (CLOCK_BOOTTIME of the board when written, ns).
    pub written_ns: u64,
    pub counts: Counts,
}

/// What [`Store::put`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// A run id not stored before.
    Inserted,
    /// Replaced the stored copy (a later or more complete one).
    Updated,
    /// The stored copy is complete (or written later) and this one is not: kept it.
    KeptStored,
}

/// The local results store.
pub struct Store {
    dir: PathBuf,
    conn: Connection,
    notes: Vec<String>,
}

/// Reading or writing: a store opened for reading creates nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Read,
    Write,
}

/// The store folder: `explicit`, else `$BENCHBOOT_STORE`, else
/// `$XDG_DATA_HOME/benchboot` (when absolute), else `$HOME/.local/share/benchboot`.
/// On Windows `%LOCALAPPDATA%` (`C:\Users\<user>\AppData\Local`) stands where
/// `$XDG_DATA_HOME` does: `%LOCALAPPDATA%\benchboot`.
///
/// # Errors
/// None of them is set; the message says to give `--store`.
pub fn default_dir(explicit: Option<&Path>) -> Result<PathBuf> {
    let var = |k: &str| std::env::var_os(k).map(PathBuf::from);
    let data_home = if cfg!(windows) {
        "LOCALAPPDATA"
    } else {
        "XDG_DATA_HOME"
    };
    dir_from(explicit, var(STORE_ENV), var(data_home), var("HOME")).with_context(|| {
        format!("no place for the results store: $HOME is not set; give --store DIR or set ${STORE_ENV}")
    })
}

/// [`default_dir`] without the environment: empty values count as unset.
pub fn dir_from(
    explicit: Option<&Path>,
    store_env: Option<PathBuf>,
    xdg_data_home: Option<PathBuf>,
    home: Option<PathBuf>,
) -> Option<PathBuf> {
    let set = |p: Option<PathBuf>| p.filter(|p| !p.as_os_str().is_empty());
    explicit
        .map(Path::to_owned)
        .or_else(|| set(store_env))
        .or_else(|| {
            set(xdg_data_home)
                .filter(|p| p.is_absolute())
                .map(|p| p.join("benchboot"))
        })
        .or_else(|| set(home).map(|h| h.join(".local/share/benchboot")))
}

/// Maps `run` to a results file, for `report`/`compare`: a path to an existing file is
/// returned as it is; otherwise `run` is a run id, or a prefix of exactly one, in the
/// store `store` (`--store DIR`; `None`: [`default_dir`]), opened for reading
/// ([`Store::open_existing`]). An exact id wins over longer ids it prefixes.
///
/// # Errors
/// [`StoreError`] (no store, no match, ambiguous prefix), the store's database is
/// damaged, or the stored file is gone.
pub fn resolve(run: &str, store: Option<&Path>) -> Result<PathBuf> {
    let p = Path::new(run);
    if p.is_file() {
        return Ok(p.to_owned());
    }
    let dir = default_dir(store)?;
    match Store::open_existing(&dir)? {
        Some(store) => store.resolve(run),
        None => Err(StoreError::NoStore(dir).into()),
    }
}

impl Store {
    /// Opens the store in `dir` for writing (`collect`), creating the folder and database
    /// when missing. Stale temp files of interrupted collects are removed first
    /// ([`temp::clean`]); a database without its tables (zero-length after a full disk
    /// or a crash, or deleted) over documents in `runs/` is rebuilt from them
    /// ([`recover`]). Each of these is a line of [`Store::notes`], also printed on stderr.
    ///
    /// # Errors
    /// The folder cannot be created; the store is read-only (the message names the path
    /// and the fix); the database is damaged (the message names `benchboot runs
    /// --reindex`); or it was made by a newer benchboot.
    pub fn open(dir: &Path) -> Result<Store> {
        let create = |d: &Path| {
            std::fs::create_dir_all(d)
                .map_err(|e| recover::read_only_error(d, e))
                .with_context(|| {
                    format!(
                        "creating the results store {}: give --store DIR elsewhere",
                        d.display()
                    )
                })
        };
        create(dir)?;
        recover::check_writable(dir)?;
        let notes = temp::clean(dir);
        // The runs folder only once the database is known good: a refused store is
        // left as it was found.
        let mut store = Self::connect(dir, Mode::Write)?;
        create(&dir.join(RUNS_DIR))?;
        store.notes.splice(0..0, notes);
        Ok(store)
    }

    /// Opens the store in `dir` for reading (`runs`, `report`, `compare`): the database
    /// is opened read-only and nothing is created. `None` when there is neither a
    /// database nor a document in `runs/`. A store without an index over documents is
    /// indexed as [`Store::open`] does when it is writable; when it is read-only, the
    /// index is built in memory for this command only (a line of [`Store::notes`]).
    /// Stale temp files are removed when the store is writable.
    ///
    /// # Errors
    /// As [`Store::open`], except that a read-only store is not one.
    pub fn open_existing(dir: &Path) -> Result<Option<Store>> {
        let db = dir.join(DB_FILE);
        let has_db = db.is_file();
        if !has_db && recover::documents(dir).is_empty() {
            return Ok(None);
        }
        let writable = recover::read_only(dir).is_none();
        if has_db && writable {
            recover::roll_back(dir)?;
        }
        if has_db {
            let store = Self::connect(dir, Mode::Read)?;
            if store.indexed()? {
                let mut store = store;
                if writable {
                    store.notes = temp::clean(dir);
                }
                return Ok(Some(store));
            }
        }
        if writable {
            return Self::open(dir).map(Some);
        }
        let mut store = Store {
            dir: dir.to_owned(),
            conn: Connection::open_in_memory()?,
            notes: Vec::new(),
        };
        store.conn.execute_batch(SCHEMA)?;
        let tx = store.conn.transaction()?;
        let filled = recover::fill(&tx, dir, &Default::default());
        tx.commit()?;
        let mut notes = vec![format!(
            "the index of {} is empty and the store is read-only: read {} documents in \
             runs/ for this command only (make the store writable to keep the index)",
            dir.display(),
            filled.documents
        )];
        notes.extend(filled.failure_lines());
        for n in &notes {
            eprintln!("{n}");
        }
        store.notes = notes;
        Ok(Some(store))
    }

    /// Opens the database: read-only for [`Mode::Read`]; for [`Mode::Write`] its tables
    /// are created, and filled from `runs/` when they were missing.
    fn connect(dir: &Path, mode: Mode) -> Result<Store> {
        let db = dir.join(DB_FILE);
        let flags = match mode {
            Mode::Read => OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            Mode::Write => OpenFlags::default(),
        };
        let fail = |doing: &str, e: rusqlite::Error| {
            if mode == Mode::Read && e.sqlite_error_code() == Some(rusqlite::ErrorCode::ReadOnly) {
                return recover::journal_on_read_only(dir, e);
            }
            recover::damaged(dir, &e).unwrap_or_else(|| {
                anyhow::Error::from(e).context(format!("{doing} {}", db.display()))
            })
        };
        let mut conn = Connection::open_with_flags(&db, flags).map_err(|e| fail("opening", e))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| fail("reading", e))?;
        if version > STORE_VERSION {
            bail!(
                "{}: store version {version} is newer than this benchboot reads ({STORE_VERSION}): \
                 update benchboot, or give --store DIR for a new store",
                db.display()
            );
        }
        recover::check_intact(dir, &conn)?;
        let mut notes = Vec::new();
        if mode == Mode::Write && version < STORE_VERSION {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(|e| recover::read_only_sqlite(dir, e))
                .with_context(|| format!("creating the tables of {}", db.display()))?;
            tx.execute_batch(SCHEMA)
                .and_then(|()| tx.pragma_update(None, "user_version", STORE_VERSION))
                .map_err(|e| recover::read_only_sqlite(dir, e))
                .with_context(|| format!("creating the tables of {}", db.display()))?;
            if version == 0 && !recover::documents(dir).is_empty() {
                let filled = recover::fill(&tx, dir, &Default::default());
                notes.push(format!(
                    "rebuilt the index of {} from {} documents in runs/",
                    dir.display(),
                    filled.documents
                ));
                notes.extend(filled.failure_lines());
            }
            tx.commit()
                .map_err(|e| recover::read_only_sqlite(dir, e))
                .with_context(|| format!("creating the tables of {}", db.display()))?;
        }
        for n in &notes {
            eprintln!("{n}");
        }
        Ok(Store {
            dir: dir.to_owned(),
            conn,
            notes,
        })
    }

    /// True when the database has its tables (a zero-length file has none).
    fn indexed(&self) -> Result<bool> {
        let n: i64 = self.conn.query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'runs'",
            [],
            |r| r.get(0),
        )?;
        Ok(n == 1)
    }

    /// What opening the store did on its own, one line each (also printed on stderr):
    /// stale temp files removed, the index rebuilt from `runs/` and the documents that
    /// could not be indexed, an index built in memory for a read-only store.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The store folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The database file.
    pub fn db_path(&self) -> PathBuf {
        self.dir.join(DB_FILE)
    }

    /// Stores a run: its JSON `text` saved atomically (temp file, fsync, rename) as
    /// `<store>/runs/<run id>.json`, its row inserted or replaced, in one transaction.
    /// A stored copy is replaced unless it ranks higher: complete beats partial, then a
    /// later `system.written_ns` (the board writes the file again after each step)
    /// beats an earlier one. `collected_at` is unix time in seconds; `source` is where
    /// the document came from.
    ///
    /// # Errors
    /// A run id that cannot be a file name ([`StoreError::BadRunId`]), or I/O and
    /// database errors (with the path).
    pub fn put(
        &mut self,
        results: &RunResults,
        text: &str,
        source: &str,
        collected_at: i64,
    ) -> Result<(Outcome, RunRow)> {
        let name = run_file_name(&results.run_id)?;
        let row = row_of(&self.dir, &name, results, source, collected_at);
        let db = self.db_path();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| recover::read_only_sqlite(&self.dir, e))
            .with_context(|| format!("locking {}", db.display()))?;
        let stored: Option<RunRow> = tx
            .query_row(
                &format!("SELECT {COLUMNS} FROM runs WHERE run_id = ?1"),
                [&row.run_id],
                |r| row_from(r, &self.dir),
            )
            .optional()?;
        let outcome = match &stored {
            None => Outcome::Inserted,
            Some(s) if (s.complete, s.written_ns) > (row.complete, row.written_ns) => {
                return Ok((Outcome::KeptStored, s.clone()));
            }
            Some(_) => Outcome::Updated,
        };
        crate::atomic_file::write(&row.json_path, text)?;
        insert(&tx, &row)
            .map_err(|e| recover::read_only_sqlite(&self.dir, e))
            .with_context(|| format!("writing run {} to {}", row.run_id, db.display()))?;
        tx.commit()
            .with_context(|| format!("committing to {}", db.display()))?;
        Ok((outcome, row))
    }

    /// All stored runs, most recently collected first.
    ///
    /// # Errors
    /// Database errors.
    pub fn list(&self) -> Result<Vec<RunRow>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {COLUMNS} FROM runs ORDER BY collected_at DESC, run_id"
        ))?;
        let rows = st
            .query_map([], |r| row_from(r, &self.dir))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .with_context(|| format!("reading {}", self.db_path().display()))?;
        Ok(rows)
    }

    /// The stored run with id `run_id`, if any.
    ///
    /// # Errors
    /// Database errors.
    pub fn get(&self, run_id: &str) -> Result<Option<RunRow>> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM runs WHERE run_id = ?1"),
                [run_id],
                |r| row_from(r, &self.dir),
            )
            .optional()?)
    }

    /// The stored run whose id is `query`, or the only one it prefixes.
    ///
    /// # Errors
    /// [`StoreError::NotFound`], [`StoreError::Ambiguous`], or database errors.
    pub fn find(&self, query: &str) -> Result<RunRow> {
        if let Some(row) = self.get(query)? {
            return Ok(row);
        }
        let mut st = self.conn.prepare(&format!(
            "SELECT {COLUMNS} FROM runs WHERE substr(run_id, 1, length(?1)) = ?1 ORDER BY run_id"
        ))?;
        let mut rows = st
            .query_map([query], |r| row_from(r, &self.dir))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        match rows.len() {
            0 => Err(StoreError::NotFound {
                query: query.to_owned(),
                store: self.dir.clone(),
            }
            .into()),
            1 => Ok(rows.remove(0)),
            _ => Err(StoreError::Ambiguous {
                query: query.to_owned(),
                matches: rows.into_iter().map(|r| r.run_id).collect(),
            }
            .into()),
        }
    }

    /// The JSON file of the run [`Store::find`] finds.
    ///
    /// # Errors
    /// As [`Store::find`], or the file is no longer there.
    pub fn resolve(&self, query: &str) -> Result<PathBuf> {
        let row = self.find(query)?;
        if !row.json_path.is_file() {
            bail!(
                "stored run {}: its file {} is gone: collect the run again (`benchboot collect`)",
                row.run_id,
                row.json_path.display()
            );
        }
        Ok(row.json_path)
    }
}

/// The row of `results` stored as `<dir>/runs/<run id>.json`.
fn row_of(
    dir: &Path,
    name: &SafeName,
    results: &RunResults,
    source: &str,
    collected_at: i64,
) -> RunRow {
    RunRow {
        run_id: results.run_id.clone(),
        board: results.board.clone(),
        emulated: results.emulated,
        complete: results.complete,
        kernel: results.system.kernel_release.clone(),
        collected_at,
        source: source.to_owned(),
        json_path: name.path_in(&dir.join(RUNS_DIR), "json"),
        schema: (results.schema_version.major, results.schema_version.minor),
        written_ns: results.system.written_ns,
        counts: Counts::of(results),
    }
}

/// Inserts or replaces `row` (its file at `runs/<run id>.json`, named by [`row_of`]).
fn insert(conn: &Connection, row: &RunRow) -> rusqlite::Result<usize> {
    let file = row.json_path.file_name().unwrap_or_default();
    let rel = Path::new(RUNS_DIR).join(file);
    let c = &row.counts;
    conn.execute(
        &format!(
            "INSERT OR REPLACE INTO runs ({COLUMNS}) VALUES \
             (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)"
        ),
        params![
            row.run_id,
            row.board,
            row.emulated,
            row.complete,
            row.kernel,
            row.collected_at,
            row.source,
            rel.to_string_lossy(),
            row.schema.0,
            row.schema.1,
            i64::try_from(row.written_ns).unwrap_or(i64::MAX),
            c.storage as i64,
            c.device_reads as i64,
            c.random as i64,
            c.verify as i64,
            c.network as i64,
            c.events as i64,
        ],
    )
}

fn row_from(r: &rusqlite::Row<'_>, dir: &Path) -> rusqlite::Result<RunRow> {
    let u = |i: usize| r.get::<_, i64>(i).map(|v| u64::try_from(v).unwrap_or(0));
    Ok(RunRow {
        run_id: r.get(0)?,
        board: r.get(1)?,
        emulated: r.get(2)?,
        complete: r.get(3)?,
        kernel: r.get(4)?,
        collected_at: r.get(5)?,
        source: r.get(6)?,
        json_path: dir.join(r.get::<_, String>(7)?),
        schema: (r.get(8)?, r.get(9)?),
        written_ns: u(10)?,
        counts: Counts {
            storage: u(11)?,
            device_reads: u(12)?,
            random: u(13)?,
            verify: u(14)?,
            network: u(15)?,
            events: u(16)?,
        },
    })
}

/// A run id names a file in the store (`runs/<run id>.json`): through the one gate,
/// [`SafeName::new`] (ASCII letters, digits, `.`, `_`, `-`, at most 128 bytes, not
/// starting with `.` or `-`, no Windows device name).
///
/// # Errors
/// [`StoreError::BadRunId`] naming the rule the id breaks.
pub fn run_file_name(id: &str) -> Result<SafeName, StoreError> {
    SafeName::new(NameKind::RunId, id).map_err(StoreError::BadRunId)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn store_dir_order() {
        let p = |s: &str| Some(PathBuf::from(s));
        let explicit = Path::new("/x");
        assert_eq!(dir_from(Some(explicit), p("/s"), p("/d"), p("/h")), p("/x"));
        assert_eq!(dir_from(None, p("/s"), p("/d"), p("/h")), p("/s"));
        assert_eq!(dir_from(None, p(""), p("/d"), p("/h")), p("/d/benchboot"));
        // XDG says relative values are to be ignored.
        assert_eq!(
            dir_from(None, None, p("rel"), p("/h")),
            p("/h/.local/share/benchboot")
        );
        assert_eq!(dir_from(None, None, None, None), None);
    }

    #[cfg(windows)]
    #[test]
    fn store_dir_order() {
        let p = |s: &str| Some(PathBuf::from(s));
        let local = r"C:\Users\pi\AppData\Local";
        assert_eq!(
            dir_from(None, None, p(local), None),
            p(r"C:\Users\pi\AppData\Local\benchboot")
        );
        assert_eq!(dir_from(None, p(r"D:\runs"), p(local), None), p(r"D:\runs"));
        assert_eq!(dir_from(None, None, None, None), None);
    }

    #[test]
    fn run_ids_that_cannot_be_file_names_are_refused() {
        for bad in ["", "../x", "a/b", ".hidden", "a b", "ü", "nul", "-x"] {
            assert!(run_file_name(bad).is_err(), "{bad:?}");
        }
        run_file_name("rpi-zero-w-a0111b486424").unwrap();
        run_file_name("host-1.2_3").unwrap();
    }
}
