//! The local results store: an SQLite database of collected runs (`<store>/benchboot.db`,
//! table `runs`) plus each run's raw JSON (`<store>/runs/<name>.json`).
//!
//! The store lives in `--store DIR`, else `$BENCHBOOT_STORE`, else
//! `$XDG_DATA_HOME/benchboot`, else `~/.local/share/benchboot`. A document is named by
//! its run id; collecting the same run again replaces its copy, never adds a second one.
//! Another run that carries a stored run's id (a copied or forged document: another
//! board, boot card or start) is kept beside it as `<run id>.<n>` ([`same_run`]).
//! Every write holds the store's lock ([`lock`]); the folder holds only benchboot's
//! own names: `benchboot.db` (and SQLite's `-journal`), `benchboot.lock`, `runs/`,
//! `power/` (a run's power trace, `power/<name>.json`, written by `power import`),
//! and the temp files of [`crate::atomic_file::temp_path`], the only files it removes.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use benchboot_results::name::{NameKind, SafeName};
use benchboot_results::RunResults;
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior};

mod folder;
pub mod lock;
mod misfiled;
mod put;
pub mod recover;
mod rows;
pub mod same_run;
pub mod temp;
mod words;

pub use recover::{reindex, Reindexed};
pub use rows::STORE_VERSION;
use rows::{row_from, COLUMNS, SCHEMA};
pub use same_run::RunIdentity;
use serde::Serialize;

/// Environment variable that names the store folder.
pub const STORE_ENV: &str = "BENCHBOOT_STORE";
/// The database file inside the store folder.
pub const DB_FILE: &str = "benchboot.db";
/// The folder of raw JSON files inside the store folder.
pub const RUNS_DIR: &str = "runs";
/// The folder of the runs' power traces inside the store folder (`<name>.json`, named
/// as the run's document in [`RUNS_DIR`]).
pub const POWER_DIR: &str = "power";
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
    /// Its name in the store: `runs/<stored_as>.json`, what `report` and `compare` take.
    /// The run id, or `<run id>.<n>` for another run with a stored run's id.
    pub stored_as: String,
    /// The document's `run_id`.
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
    /// `system.init_started_ns`: PID 1's start on the board's boot clock, ns.
    pub started_ns: u64,
    /// The boot card's MBR disk signature (`boot_card.signature`).
    pub card_signature: Option<String>,
    /// SHA-256 of the boot card's serial number, hex.
    pub card_serial_sha256: Option<String>,
}

impl RunRow {
    /// What tells this run from another with its id ([`RunIdentity`]).
    pub fn identity(&self) -> RunIdentity {
        RunIdentity {
            board: self.board.clone(),
            started_ns: self.started_ns,
            card_signature: self.card_signature.clone(),
            card_serial_sha256: self.card_serial_sha256.clone(),
        }
    }
}

/// What [`Store::put`] did (`collect --json`: `inserted`, `updated`, `kept-stored`,
/// `kept-both`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// A run id not stored before.
    Inserted,
    /// Replaced the stored copy of the same run (a later or more complete one).
    Updated,
    /// The stored copy of the same run is complete (or written later) and this one is
    /// not: kept it.
    KeptStored,
    /// Another run with this id is stored (another board, boot card or start): both
    /// kept, this one as `<run id>.<n>`.
    KeptBoth,
}

impl Outcome {
    /// What happened, in words: `stored`, `stored, replacing ...`.
    pub fn words(self) -> &'static str {
        match self {
            Outcome::Inserted => "stored",
            Outcome::Updated => "stored, replacing the earlier copy of the same run",
            Outcome::KeptStored => {
                "not stored: the store's copy of the same run is complete or written later; kept it"
            }
            Outcome::KeptBoth => "stored beside another run with the same run id; both kept",
        }
    }
}

/// What [`Store::put`] did and the row it left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub outcome: Outcome,
    /// The stored row: the new one, or the one kept ([`Outcome::KeptStored`]).
    pub row: RunRow,
    /// [`Outcome::KeptBoth`]: each stored document of that run id kept beside it and
    /// what tells the runs apart (`rpi-4b-77: board rpi-4b (stored: rpi-zero-w)`), raw
    /// text from documents (escape it to print). Empty otherwise.
    pub beside: Vec<String>,
}

impl Stored {
    /// One line for a person: the outcome in words, and for [`Outcome::KeptBoth`] the
    /// name this one took and why. Raw text from documents: escape it to print.
    pub fn describe(&self) -> String {
        match self.outcome {
            Outcome::KeptBoth => format!(
                "stored as {} beside another run with run id {} ({}); both kept: `benchboot \
                 report {}` shows this one",
                self.row.stored_as,
                self.row.run_id,
                self.beside.join("; "),
                self.row.stored_as
            ),
            o => o.words().to_owned(),
        }
    }
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

/// Maps `run` to a results file, for `report`/`compare`/`show`: a path to an existing
/// file, or anything with a path separator or ending in `.json`, is returned as it is
/// (reading it then names a missing file); otherwise `run` is a stored run's name (its run id, or `<run
/// id>.<n>` for another run kept beside one with that id), or a prefix of exactly one,
/// in the store `store` (`--store DIR`; `None`: [`default_dir`]), opened for reading
/// ([`Store::open_existing`]). An exact name wins over longer names it prefixes.
///
/// # Errors
/// [`StoreError`] (no store, no match, ambiguous prefix), the store's database is
/// damaged, or the stored file is gone.
pub fn resolve(run: &str, store: Option<&Path>) -> Result<PathBuf> {
    let p = Path::new(run);
    // A file, or what can only be a path (a run id has no separator and no `.json`):
    // the caller's read then names the file with the OS's reason.
    let looks_like_a_path = run.contains(['/', std::path::MAIN_SEPARATOR])
        || run.to_ascii_lowercase().ends_with(".json");
    if p.is_file() || looks_like_a_path {
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
    /// when missing, under the store's lock ([`lock`], released on return). Stale temp
    /// files of interrupted collects are removed first ([`temp::clean`]); a database
    /// without its tables (zero-length after a full disk or a crash, or deleted), or
    /// with a previous version's, over documents in `runs/` is rebuilt from them
    /// ([`recover`]). Each of these is a line of [`Store::notes`], also printed on stderr.
    ///
    /// # Errors
    /// The folder or its `runs/` cannot be created (a file, a device or a dangling link
    /// in its place is named as what it is); the store is read-only (the message names the path
    /// and the fix); another benchboot holds the lock past [`lock::LOCK_WAIT`]; the
    /// database is damaged (the message names `benchboot runs --reindex`); or it was
    /// made by a newer benchboot.
    pub fn open(dir: &Path) -> Result<Store> {
        folder::create_store(dir)?;
        recover::check_writable(dir, "nothing was stored")?;
        let locked = lock::acquire(dir, lock::Holder::Store).context("nothing was stored")?;
        let notes = temp::clean(dir);
        // The runs folder only once the database is known good: a refused store is
        // left as it was found.
        let mut store = Self::connect(dir, Mode::Write)?;
        folder::create_runs(dir)?;
        locked.release();
        store.notes.splice(0..0, notes);
        Ok(store)
    }

    /// Opens the store in `dir` for reading (`runs`, `report`, `compare`): the database
    /// is opened read-only and nothing is created. `None` when there is neither a
    /// database nor a document in `runs/`. A store without an index over documents (or
    /// with a previous version's) is indexed as [`Store::open`] does when it is
    /// writable; when it is read-only, the index is built in memory for this command
    /// only (a line of [`Store::notes`]). Stale temp files are removed when the store is
    /// writable and no other benchboot holds its lock.
    ///
    /// # Errors
    /// `dir` is there and no folder; as [`Store::open`], except that a read-only store
    /// is not one.
    pub fn open_existing(dir: &Path) -> Result<Option<Store>> {
        folder::check_store(dir)?;
        let db = dir.join(DB_FILE);
        let has_db = db.is_file();
        if !has_db && recover::documents(dir).is_empty() {
            return Ok(None);
        }
        let writable = recover::read_only(dir).is_none();
        if has_db && writable {
            recover::roll_back(dir)?;
        }
        let mut unindexed = "is empty";
        if has_db {
            let store = Self::connect(dir, Mode::Read)?;
            if let Some(why) = store.unindexed()? {
                unindexed = why;
            } else {
                let mut store = store;
                if writable {
                    // Tidy only when no writer is at work; a reader never waits.
                    if let Ok(Some(locked)) = lock::try_acquire(dir, lock::Holder::Tidy) {
                        store.notes = temp::clean(dir);
                        locked.release();
                    }
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
            "the index of {} {unindexed} and the store is read-only: read {} documents in \
             runs/ for this command only (make the store writable to keep the index)",
            dir.display(),
            filled.documents
        )];
        notes.extend(filled.failure_lines());
        for n in &notes {
            crate::errln!("{n}");
        }
        store.notes = notes;
        Ok(Some(store))
    }

    /// Opens the database: read-only for [`Mode::Read`]; for [`Mode::Write`] (under the
    /// store's lock) its tables are created, and filled from `runs/` when they were
    /// missing or of a previous version.
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
            let creating = || format!("creating the tables of {}", db.display());
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(|e| recover::read_only_sqlite(dir, e))
                .with_context(creating)?;
            // A previous version's rows: where and when each run was collected is kept,
            // the rest is read again from the documents.
            let salvage = if version > 0 {
                recover::salvage_from(&tx, version)
                    .and_then(|s| tx.execute_batch("DROP TABLE runs").map(|()| s))
                    .map_err(|e| recover::read_only_sqlite(dir, e))
                    .with_context(creating)?
            } else {
                recover::Salvage::new()
            };
            tx.execute_batch(SCHEMA)
                .and_then(|()| tx.pragma_update(None, "user_version", STORE_VERSION))
                .map_err(|e| recover::read_only_sqlite(dir, e))
                .with_context(creating)?;
            if !recover::documents(dir).is_empty() {
                let filled = recover::fill(&tx, dir, &salvage);
                notes.push(format!(
                    "{} the index of {} from {} documents in runs/",
                    if version > 0 {
                        "a previous benchboot's index: rebuilt"
                    } else {
                        "rebuilt"
                    },
                    dir.display(),
                    filled.documents
                ));
                notes.extend(filled.failure_lines());
            }
            tx.commit()
                .map_err(|e| recover::read_only_sqlite(dir, e))
                .with_context(creating)?;
        }
        for n in &notes {
            crate::errln!("{n}");
        }
        Ok(Store {
            dir: dir.to_owned(),
            conn,
            notes,
        })
    }

    /// `None` when the database has this version's tables; else why not, in words: `is
    /// empty` (a zero-length file has none), `is from an older benchboot`.
    fn unindexed(&self) -> Result<Option<&'static str>> {
        let n: i64 = self.conn.query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'runs'",
            [],
            |r| r.get(0),
        )?;
        let version: i64 = self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))?;
        Ok(match (n, version) {
            (0, _) => Some("is empty"),
            (_, STORE_VERSION) => None,
            _ => Some("is from an older benchboot"),
        })
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

    /// All stored runs, most recently collected first.
    ///
    /// # Errors
    /// Database errors.
    pub fn list(&self) -> Result<Vec<RunRow>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {COLUMNS} FROM runs ORDER BY collected_at DESC, stored_as"
        ))?;
        let rows = st
            .query_map([], |r| row_from(r, &self.dir))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .with_context(|| format!("reading {}", self.db_path().display()))?;
        Ok(rows)
    }

    /// The stored run named `name` ([`RunRow::stored_as`]: its run id, or `<run
    /// id>.<n>` for another run with a stored run's id), if any.
    ///
    /// # Errors
    /// Database errors.
    pub fn get(&self, name: &str) -> Result<Option<RunRow>> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM runs WHERE stored_as = ?1"),
                [name],
                |r| row_from(r, &self.dir),
            )
            .optional()?)
    }

    /// The stored run named `query` ([`Store::get`]), or the only one whose name it
    /// prefixes.
    ///
    /// # Errors
    /// [`StoreError::NotFound`], [`StoreError::Ambiguous`], or database errors.
    pub fn find(&self, query: &str) -> Result<RunRow> {
        if let Some(row) = self.get(query)? {
            return Ok(row);
        }
        let mut st = self.conn.prepare(&format!(
            "SELECT {COLUMNS} FROM runs WHERE substr(stored_as, 1, length(?1)) = ?1 \
             ORDER BY stored_as"
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
                matches: rows.into_iter().map(|r| r.stored_as).collect(),
            }
            .into()),
        }
    }

    /// The other stored runs with the run id of `row` (their names), oldest name first.
    ///
    /// # Errors
    /// Database errors.
    pub fn others_with_id(&self, row: &RunRow) -> Result<Vec<String>> {
        Ok(
            rows::with_run_id(&self.conn, &self.dir, &row.run_id, same_run::MAX_SAME_ID)?
                .into_iter()
                .map(|r| r.stored_as)
                .filter(|n| *n != row.stored_as)
                .collect(),
        )
    }

    /// The JSON file of the run [`Store::find`] finds. When other stored runs carry its
    /// run id, a line on stderr names them (`report <name>` shows each).
    ///
    /// # Errors
    /// As [`Store::find`], or the file is no longer there.
    pub fn resolve(&self, query: &str) -> Result<PathBuf> {
        let row = self.find(query)?;
        if !row.json_path.is_file() {
            bail!(
                "stored run {}: its file {} is gone: collect the run again (`benchboot collect`)",
                row.stored_as,
                row.json_path.display()
            );
        }
        let others = self.others_with_id(&row)?;
        if !others.is_empty() {
            crate::errln!(
                "note: {} is stored run {}; another run with run id {} is stored as {} \
                 (give that name for it)",
                benchboot_results::text::escape(query),
                row.stored_as,
                row.run_id,
                others.join(", ")
            );
        }
        Ok(row.json_path)
    }
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
