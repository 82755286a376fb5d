//! The store's table, `runs`: its schema, and a [`RunRow`] to and from a row.

use std::path::{Path, PathBuf};

use benchboot_results::name::SafeName;
use benchboot_results::RunResults;
use rusqlite::{params, Connection};

use super::same_run::RunIdentity;
use super::{Counts, RunRow, RUNS_DIR};

/// Version of the store's own tables (`PRAGMA user_version`). 2: rows keyed by the
/// document's name in the store (`stored_as`), with what tells runs of one id apart;
/// a version 1 store is indexed again when it is first opened for writing.
pub const STORE_VERSION: i64 = 2;

/// The tables of [`STORE_VERSION`].
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs (
    stored_as          TEXT PRIMARY KEY NOT NULL, -- runs/<stored_as>.json: the run id, or <run id>.<n>
    run_id             TEXT NOT NULL,
    board              TEXT NOT NULL,
    emulated           INTEGER NOT NULL,
    complete           INTEGER NOT NULL,
    kernel             TEXT NOT NULL,
    collected_at       INTEGER NOT NULL, -- unix time, s
    source             TEXT NOT NULL,    -- HOST:PORT, or the card path it was read from
    json_path          TEXT NOT NULL,    -- relative to the store folder
    schema_major       INTEGER NOT NULL,
    schema_minor       INTEGER NOT NULL,
    written_ns         INTEGER NOT NULL, -- system.written_ns of the document
    storage_count      INTEGER NOT NULL,
    device_read_count  INTEGER NOT NULL,
    random_count       INTEGER NOT NULL,
    verify_count       INTEGER NOT NULL,
    network_count      INTEGER NOT NULL,
    event_count        INTEGER NOT NULL,
    started_ns         INTEGER NOT NULL, -- system.init_started_ns
    card_signature     TEXT,             -- boot_card.signature
    card_serial_sha256 TEXT              -- the boot disk's devices[].serial_sha256
);
CREATE INDEX IF NOT EXISTS runs_by_run_id ON runs (run_id);";

/// The columns of `runs`, in [`row_from`]'s order.
pub const COLUMNS: &str = "stored_as, run_id, board, emulated, complete, kernel, collected_at, \
    source, json_path, schema_major, schema_minor, written_ns, storage_count, \
    device_read_count, random_count, verify_count, network_count, event_count, started_ns, \
    card_signature, card_serial_sha256";

/// The row of `results` stored as `<dir>/runs/<name>.json`.
pub fn row_of(
    dir: &Path,
    name: &SafeName,
    results: &RunResults,
    source: &str,
    collected_at: i64,
) -> RunRow {
    let id = RunIdentity::of(results);
    RunRow {
        stored_as: name.as_str().to_owned(),
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
        started_ns: id.started_ns,
        card_signature: id.card_signature,
        card_serial_sha256: id.card_serial_sha256,
    }
}

/// Inserts or replaces `row` (its file at `runs/<stored_as>.json`, named by [`row_of`]).
pub fn insert(conn: &Connection, row: &RunRow) -> rusqlite::Result<usize> {
    let file = row.json_path.file_name().unwrap_or_default();
    let rel = Path::new(RUNS_DIR).join(file);
    let c = &row.counts;
    let big = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    conn.execute(
        &format!(
            "INSERT OR REPLACE INTO runs ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, \
             ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)"
        ),
        params![
            row.stored_as,
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
            big(row.written_ns),
            big(c.storage),
            big(c.device_reads),
            big(c.random),
            big(c.verify),
            big(c.network),
            big(c.events),
            big(row.started_ns),
            row.card_signature,
            row.card_serial_sha256,
        ],
    )
}

/// The [`RunRow`] of a row selected with [`COLUMNS`]; `dir` is the store folder.
pub fn row_from(r: &rusqlite::Row<'_>, dir: &Path) -> rusqlite::Result<RunRow> {
    let u = |i: usize| r.get::<_, i64>(i).map(|v| u64::try_from(v).unwrap_or(0));
    Ok(RunRow {
        stored_as: r.get(0)?,
        run_id: r.get(1)?,
        board: r.get(2)?,
        emulated: r.get(3)?,
        complete: r.get(4)?,
        kernel: r.get(5)?,
        collected_at: r.get(6)?,
        source: r.get(7)?,
        json_path: dir.join(r.get::<_, String>(8)?),
        schema: (r.get(9)?, r.get(10)?),
        written_ns: u(11)?,
        counts: Counts {
            storage: u(12)?,
            device_reads: u(13)?,
            random: u(14)?,
            verify: u(15)?,
            network: u(16)?,
            events: u(17)?,
        },
        started_ns: u(18)?,
        card_signature: r.get(19)?,
        card_serial_sha256: r.get(20)?,
    })
}

/// The rows of `conn` whose document has run id `id`, at most `limit`, oldest name
/// first (`<id>`, then its copies).
pub fn with_run_id(
    conn: &Connection,
    dir: &Path,
    id: &str,
    limit: u32,
) -> rusqlite::Result<Vec<RunRow>> {
    let mut st = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM runs WHERE run_id = ?1 ORDER BY length(stored_as), stored_as \
         LIMIT ?2"
    ))?;
    let rows = st
        .query_map(params![id, limit], |r| row_from(r, dir))?
        .collect();
    rows
}

/// True when `conn` has a row named `stored_as`.
pub fn has_name(conn: &Connection, stored_as: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM runs WHERE stored_as = ?1",
        [stored_as],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// A path for messages, relative to the store when inside it: `runs/x.json`.
pub fn shown_in(dir: &Path, p: &Path) -> PathBuf {
    p.strip_prefix(dir)
        .map_or_else(|_| p.to_owned(), Path::to_owned)
}
