//! The local results store survives damage: a zero-length or damaged
//! database, temp files of a killed `collect`, a read-only store, and `--store` on the
//! commands that read it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};

use benchboot::store::{self, Store};
use benchboot_plan::Plan;
use benchboot_results::{RunResults, SystemInfo};

/// A store in `dir` with the complete runs `ids`, collected at 1000, 2000, ... from
/// `src-<id>`.
fn stored(dir: &Path, ids: &[&str]) {
    let mut s = Store::open(dir).unwrap();
    for (i, id) in ids.iter().enumerate() {
        let mut r = RunResults::new(
            (*id).into(),
            Plan::example(),
            SystemInfo {
                kernel_release: "6.1.0-test".into(),
                written_ns: 5,
                ..SystemInfo::default()
            },
        );
        r.complete = true;
        let text = r.to_json();
        s.put(&r, &text, &format!("src-{id}"), 1000 * (i as i64 + 1))
            .unwrap();
    }
}

fn ids(s: &Store) -> Vec<String> {
    let mut v: Vec<String> = s.list().unwrap().into_iter().map(|r| r.run_id).collect();
    v.sort();
    v
}

fn benchboot(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_benchboot"))
        .args(args)
        // Never the developer's own store.
        .env("BENCHBOOT_STORE", "/nonexistent/benchboot-store")
        .output()
        .expect("benchboot runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_zero_length_database_is_rebuilt_from_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    stored(d, &["rpi-zero-w-0001", "rpi-1b-0002", "bbb-0003"]);
    std::fs::write(d.join("runs/broken.json"), "{\"run_id\": ").unwrap();
    std::fs::write(d.join("benchboot.db"), b"").unwrap();

    let out = benchboot(&["runs", "--store", d.to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "rebuilt the index of {} from 3 documents in runs/",
            d.display()
        )),
        "{stderr}"
    );
    let broken = d.join("runs").join("broken.json");
    assert!(
        stderr.contains(&format!(
            "  {}: not indexed: not a results document",
            broken.display()
        )),
        "{stderr}"
    );
    for id in ["rpi-zero-w-0001", "rpi-1b-0002", "bbb-0003"] {
        assert!(stdout.contains(id), "{id} not listed:\n{stdout}");
    }
    assert!(!stdout.contains("no runs stored"), "{stdout}");
    // Saved: the next open finds the index and says nothing.
    let s = Store::open_existing(d).unwrap().unwrap();
    assert_eq!(ids(&s), ["bbb-0003", "rpi-1b-0002", "rpi-zero-w-0001"]);
    assert_eq!(s.notes(), [] as [String; 0]);
    // Collected at: when collect placed the file (its mtime), the source is unknown.
    let row = s.get("bbb-0003").unwrap().unwrap();
    assert_eq!(row.source, store::recover::REINDEXED_SOURCE);
    let mtime = std::fs::metadata(&row.json_path)
        .unwrap()
        .modified()
        .unwrap();
    let mtime = mtime
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert_eq!(row.collected_at, mtime as i64);
}

#[test]
fn a_deleted_database_is_rebuilt_by_collect_too() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    stored(d, &["a-1", "b-2"]);
    std::fs::remove_file(d.join("benchboot.db")).unwrap();
    let s = Store::open(d).unwrap();
    assert_eq!(ids(&s), ["a-1", "b-2"]);
    assert_eq!(
        s.notes(),
        [format!(
            "rebuilt the index of {} from 2 documents in runs/",
            d.display()
        )]
    );
}

#[test]
fn reindex_on_demand_keeps_where_runs_came_from_and_lists_bad_documents() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    stored(d, &["a-1", "b-2"]);
    // A document under another run's name: not indexed, the file and the fix named.
    std::fs::copy(d.join("runs/a-1.json"), d.join("runs/c-3.json")).unwrap();
    // A hostile name: its control characters are not printed raw.
    #[cfg(unix)]
    std::fs::write(d.join("runs/e\x1b[2Jvil.json"), "[]").unwrap();
    // Larger than any document (sparse): read no further than the bound, listed.
    let huge = d.join("runs").join("huge.json");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(benchboot_results::MAX_DOCUMENT_BYTES + 1)
        .unwrap();
    let done = store::reindex(d).unwrap();
    assert_eq!(done.moved_aside, None);
    assert_eq!(done.filled.documents, 2);
    let mut want = vec![
        format!(
            "rebuilt the index of {} from 2 documents in runs/",
            d.display()
        ),
        format!(
            "  {c3}: not indexed: its run id is `a-1`, and it is a copy of a-1.json: remove it \
             (`rm {c3}`)",
            c3 = d.join("runs").join("c-3.json").display()
        ),
    ];
    if cfg!(unix) {
        let line = &done.lines()[2];
        assert!(
            line.starts_with(&format!(
                "  {}/runs/e\\u{{1b}}[2Jvil.json: not indexed: not a results document",
                d.display()
            )),
            "{line}"
        );
        want.push(line.clone());
    }
    want.push(format!(
        "  {}: not indexed: more than a results document has (64 MiB at most)",
        huge.display()
    ));
    assert_eq!(done.lines(), want);
    let s = Store::open_existing(d).unwrap().unwrap();
    let b = s.get("b-2").unwrap().unwrap();
    assert_eq!((b.source.as_str(), b.collected_at), ("src-b-2", 2000));
    // No temp database left behind.
    let names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}

/// Every page after the first (the header and the schema) overwritten with garbage.
fn damage(db: &Path) {
    let len = std::fs::metadata(db).unwrap().len() as usize;
    assert!(len > 4096, "{len}");
    let mut bytes = std::fs::read(db).unwrap();
    for (i, b) in bytes[4096..].iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(151).wrapping_add(7);
    }
    std::fs::write(db, bytes).unwrap();
}

#[test]
fn a_damaged_database_names_the_file_and_the_fix_and_reindex_moves_it_aside() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    stored(d, &["a-1", "b-2", "c-3"]);
    let db = d.join("benchboot.db");
    damage(&db);

    let fix = format!(
        "`benchboot runs --reindex --store {}` moves it aside as benchboot.db.damaged-<time> \
         and rebuilds the index from the 3 documents in {}",
        d.display(),
        d.join("runs").display()
    );
    for err in [
        Store::open_existing(d).err().unwrap(),
        Store::open(d).err().unwrap(),
        store::resolve("a-1", Some(d)).unwrap_err(),
    ] {
        let err = format!("{err:#}");
        assert!(err.contains(&format!("{}: damaged", db.display())), "{err}");
        assert!(err.contains(&fix), "{err}");
        // SQLite's own words on the first problem, not its "*** in database main ***".
        assert!(!err.contains("***") && !err.contains("damaged ()"), "{err}");
    }
    let out = benchboot(&["runs", "--store", d.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains(&fix), "{}", text(&out.stderr));

    let out = benchboot(&["runs", "--reindex", "--store", d.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("moved the damaged database aside as "),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "rebuilt the index of {} from 3 documents",
            d.display()
        )),
        "{stderr}"
    );
    let aside: Vec<PathBuf> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("benchboot.db.damaged-")
        })
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    let name = aside[0].file_name().unwrap().to_string_lossy().into_owned();
    // benchboot.db.damaged-YYYYMMDDTHHMMSSZ
    assert_eq!(name.len(), "benchboot.db.damaged-".len() + 16, "{name}");
    assert!(name.ends_with('Z') && name.as_bytes()[29] == b'T', "{name}");
    assert!(stderr.contains(&aside[0].display().to_string()), "{stderr}");
    let s = Store::open_existing(d).unwrap().unwrap();
    assert_eq!(ids(&s), ["a-1", "b-2", "c-3"]);
    assert_eq!(
        store::resolve("b-2", Some(d)).unwrap(),
        d.join("runs/b-2.json")
    );
}

fn set_age(p: &Path, age: Duration) {
    let f = std::fs::File::options().write(true).open(p).unwrap();
    f.set_modified(SystemTime::now() - age).unwrap();
}

#[cfg(unix)]
#[test]
fn stale_temp_files_are_removed_and_a_live_collects_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    stored(d, &["a-1"]);
    let runs = d.join("runs");
    // A killed collect's: unlocked, two hours old, 1 MiB.
    let stale = runs.join(".rpi-1b-0001.json.4242.benchboot.tmp");
    std::fs::write(&stale, vec![b'{'; 1 << 20]).unwrap();
    set_age(&stale, Duration::from_secs(7200));
    // A killed reindex's database and SQLite's journal of it.
    let stale_db = d.join(".benchboot.db.4243.benchboot.tmp");
    std::fs::write(&stale_db, b"x").unwrap();
    set_age(&stale_db, Duration::from_secs(7200));
    let stale_journal = d.join(".benchboot.db.4243.benchboot.tmp-journal");
    std::fs::write(&stale_journal, b"jj").unwrap();
    set_age(&stale_journal, Duration::from_secs(7200));
    // A concurrent collect's: locked (as atomic_file locks it), however old.
    let live = runs.join(".rpi-1b-0002.json.4244.benchboot.tmp");
    std::fs::write(&live, b"{").unwrap();
    set_age(&live, Duration::from_secs(7200));
    let held = std::fs::File::open(&live).unwrap();
    benchboot::atomic_file::lock(&held).unwrap();
    // Just created, not yet locked: within the grace.
    let fresh = runs.join(".rpi-1b-0003.json.4245.benchboot.tmp");
    std::fs::write(&fresh, b"{").unwrap();

    let s = Store::open(d).unwrap();
    assert_eq!(
        s.notes(),
        [
            format!(
                "removed {} (1 B), a temp file left by an interrupted `runs --reindex`",
                stale_db.display()
            ),
            format!(
                "removed {} (2 B), a temp file left by an interrupted `runs --reindex`",
                stale_journal.display()
            ),
            format!(
                "removed {} (1 MiB), a temp file left by an interrupted `collect`",
                stale.display()
            ),
        ]
    );
    assert!(!stale.exists() && !stale_db.exists() && !stale_journal.exists());
    assert!(live.exists() && fresh.exists());
    assert_eq!(ids(&s), ["a-1"]);
    drop(held);
}

/// The store may be any folder (`--store ~`): opening it removes only benchboot's own
/// temp names, never a person's or another program's `*.tmp`, however old.
#[test]
fn a_store_in_a_home_folder_leaves_other_temp_files_alone() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let old = Duration::from_secs(3 * 3600);
    let theirs = [
        home.join(".notes.tmp"),
        home.join(".cache.1234.tmp"),
        // Older benchboot's shapes: not of the one shape benchboot writes now.
        home.join(".benchboot.db.4243.tmp"),
        home.join("runs/.draft.tmp"),
        home.join("runs/.r-1.json.4242.tmp"),
        // Benchboot's shape, but no file benchboot writes there.
        home.join(".notes.txt.4242.benchboot.tmp"),
        home.join("runs/.notes.txt.4242.benchboot.tmp"),
    ];
    std::fs::create_dir_all(home.join("runs")).unwrap();
    for f in &theirs {
        std::fs::write(f, b"mine").unwrap();
        set_age(f, old);
    }
    stored(home, &["a-1"]);
    let s = Store::open_existing(home).unwrap().unwrap();
    assert!(s.notes().is_empty(), "{:?}", s.notes());
    let out = benchboot(&["runs", "--store", home.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("removed"),
        "{}",
        text(&out.stderr)
    );
    for f in &theirs {
        assert_eq!(std::fs::read(f).unwrap(), b"mine", "{}", f.display());
    }
    assert_eq!(ids(&s), ["a-1"]);
}

#[cfg(unix)]
fn chmod(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Reading a chmod 0555 store creates nothing (the database is opened read-only; a
/// zero-length one is indexed in memory), writing to it is refused with the path and
/// the fix. Root may write there anyway: benchboot refuses a store no one may write.
#[cfg(unix)]
#[test]
fn a_read_only_store_is_read_and_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("store");
    stored(&d, &["a-1", "b-2"]);
    let db = d.join("benchboot.db");
    let before = std::fs::read(&db).unwrap();
    for p in [&db, &d.join("runs/a-1.json"), &d.join("runs/b-2.json")] {
        chmod(p, 0o444);
    }
    chmod(&d.join("runs"), 0o555);
    chmod(&d, 0o555);

    let s = Store::open_existing(&d).unwrap().unwrap();
    assert_eq!(ids(&s), ["a-1", "b-2"]);
    drop(s);
    let out = benchboot(&["report", "b-2", "--store", d.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&db).unwrap(), before);

    let err = format!("{:#}", Store::open(&d).err().unwrap());
    assert_eq!(
        err,
        format!(
            "{} is read-only (mode 0555, no write permission for anyone): nothing was stored: \
             give --store DIR for a writable folder, or make it writable (chmod u+w)",
            d.display()
        )
    );
    let err = format!("{:#}", store::reindex(&d).unwrap_err());
    assert!(
        err.starts_with(&format!("{} is read-only", d.display())),
        "{err}"
    );

    // Zero-length and read-only: indexed in memory, the file left as it is.
    chmod(&d, 0o755);
    chmod(&db, 0o644);
    std::fs::write(&db, b"").unwrap();
    chmod(&db, 0o444);
    chmod(&d, 0o555);
    let s = Store::open_existing(&d).unwrap().unwrap();
    assert_eq!(ids(&s), ["a-1", "b-2"]);
    assert_eq!(
        s.notes()[0],
        format!(
            "the index of {} is empty and the store is read-only: read 2 documents in runs/ \
             for this command only (make the store writable to keep the index)",
            d.display()
        )
    );
    assert_eq!(std::fs::metadata(&db).unwrap().len(), 0);
    chmod(&d, 0o755);
    chmod(&d.join("runs"), 0o755);
}

#[test]
fn report_and_compare_take_store_like_collect_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    stored(d, &["a-1", "b-2"]);
    let ds = d.to_str().unwrap();
    let out = benchboot(&["report", "a-1", "--store", ds, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("\"a-1\""),
        "{}",
        text(&out.stdout)
    );
    let out = benchboot(&["compare", "a-1", "b-2", "--store", ds, "--format", "csv"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    // The same help text, the same default.
    let help = |cmd: &str| {
        let h = text(&benchboot(&[cmd, "--help"]).stdout);
        let start = h
            .find("--store <DIR>")
            .unwrap_or_else(|| panic!("{cmd}: {h}"));
        // Up to a blank line or the next option's line.
        let mut lines = h[start..].lines();
        let first = lines.next().unwrap_or_default();
        let para: Vec<&str> = std::iter::once(first)
            .chain(lines.take_while(|l| !l.trim().is_empty() && !l.trim_start().starts_with('-')))
            .collect();
        para.join(" ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let collect = help("collect");
    assert_eq!(
        collect,
        "--store <DIR> The results store folder. Default: $BENCHBOOT_STORE, else \
         $XDG_DATA_HOME/benchboot, else ~/.local/share/benchboot"
    );
    for cmd in ["runs", "report", "compare"] {
        assert_eq!(help(cmd), collect, "{cmd}");
    }
}

/// A write cut short (a killed `collect`, a power cut) leaves a hot journal that only a
/// read-write connection can roll back: reading the store rolls it back first instead
/// of failing with "attempt to write a readonly database".
#[test]
fn a_write_cut_short_is_rolled_back_when_the_store_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let (live, cut) = (dir.path().join("live"), dir.path().join("cut"));
    stored(&live, &["a-1", "b-2"]);
    let conn = rusqlite::Connection::open(live.join("benchboot.db")).unwrap();
    // A small page cache: the transaction spills into the database file (and so its
    // journal is written) long before it commits.
    conn.execute_batch("PRAGMA cache_size = 5; BEGIN;").unwrap();
    for i in 0..3000 {
        conn.execute(
            "INSERT INTO runs SELECT ?1, ?1, board, emulated, complete, kernel, \
             collected_at, source, json_path, schema_major, schema_minor, written_ns, \
             storage_count, device_read_count, random_count, verify_count, network_count, \
             event_count, started_ns, card_signature, card_serial_sha256 \
             FROM runs WHERE stored_as = 'a-1'",
            [format!("x-{i:04}-{}", "y".repeat(200))],
        )
        .unwrap();
    }
    // The files as a power cut would leave them, mid-transaction.
    std::fs::create_dir_all(cut.join("runs")).unwrap();
    for name in ["benchboot.db", "benchboot.db-journal"] {
        std::fs::copy(live.join(name), cut.join(name)).unwrap();
    }
    for id in ["a-1", "b-2"] {
        let doc = format!("runs/{id}.json");
        std::fs::copy(live.join(&doc), cut.join(&doc)).unwrap();
    }
    drop(conn);
    // Read-only, it cannot be rolled back: said so, with the fix.
    #[cfg(unix)]
    {
        chmod(&cut, 0o555);
        let err = format!("{:#}", Store::open_existing(&cut).err().unwrap());
        chmod(&cut, 0o755);
        assert!(
            err.starts_with(&format!(
                "{}: a write to it was cut short and its journal (benchboot.db-journal) must \
                 be rolled back, which a read-only store cannot",
                cut.join("benchboot.db").display()
            )),
            "{err}"
        );
        assert!(
            err.ends_with(&format!(
                "make {} writable (chmod u+w) and run again",
                cut.display()
            )),
            "{err}"
        );
    }
    let s = Store::open_existing(&cut).unwrap().unwrap();
    assert_eq!(ids(&s), ["a-1", "b-2"]);
    assert!(!cut.join("benchboot.db-journal").exists());
}

/// A store written by the previous benchboot (store version 1: rows keyed by run id) is
/// indexed again when first opened for writing, keeping where and when each run was
/// collected; read-only, it is read from its documents for the command.
#[test]
fn a_previous_versions_store_is_indexed_again_keeping_where_runs_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    stored(d, &["a-1", "b-2"]);
    // The same store as version 1 wrote it.
    std::fs::remove_file(d.join("benchboot.db")).unwrap();
    let conn = rusqlite::Connection::open(d.join("benchboot.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE runs (run_id TEXT PRIMARY KEY NOT NULL, board TEXT NOT NULL, \
         emulated INTEGER NOT NULL, complete INTEGER NOT NULL, kernel TEXT NOT NULL, \
         collected_at INTEGER NOT NULL, source TEXT NOT NULL, json_path TEXT NOT NULL, \
         schema_major INTEGER NOT NULL, schema_minor INTEGER NOT NULL, \
         written_ns INTEGER NOT NULL, storage_count INTEGER NOT NULL, \
         device_read_count INTEGER NOT NULL, random_count INTEGER NOT NULL, \
         verify_count INTEGER NOT NULL, network_count INTEGER NOT NULL, \
         event_count INTEGER NOT NULL); \
         INSERT INTO runs VALUES ('a-1', 'rpi-zero-w', 1, 1, 'k', 1111, '10.55.0.1:8080', \
         'runs/a-1.json', 1, 0, 5, 0, 0, 0, 0, 0, 0); \
         INSERT INTO runs VALUES ('b-2', 'rpi-zero-w', 1, 1, 'k', 2222, '/dev/sdb p2', \
         'runs/b-2.json', 1, 0, 5, 0, 0, 0, 0, 0, 0); \
         PRAGMA user_version = 1;",
    )
    .unwrap();
    drop(conn);
    let s = Store::open_existing(d).unwrap().unwrap();
    assert_eq!(
        s.notes(),
        [format!(
            "a previous benchboot's index: rebuilt the index of {} from 2 documents in runs/",
            d.display()
        )]
    );
    let rows = s.list().unwrap();
    let kept: Vec<(&str, &str, i64, &str)> = rows
        .iter()
        .map(|r| {
            (
                r.stored_as.as_str(),
                r.run_id.as_str(),
                r.collected_at,
                r.source.as_str(),
            )
        })
        .collect();
    assert_eq!(
        kept,
        [
            ("b-2", "b-2", 2222, "/dev/sdb p2"),
            ("a-1", "a-1", 1111, "10.55.0.1:8080")
        ]
    );
    let version: i64 = rusqlite::Connection::open(d.join("benchboot.db"))
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, store::STORE_VERSION);
}

/// The error of a store that was not opened, as printed.
fn refused<T>(r: anyhow::Result<T>) -> String {
    match r {
        Ok(_) => panic!("opened"),
        Err(e) => format!("{e:#}"),
    }
}

#[test]
fn a_store_or_runs_folder_that_is_no_folder_is_said_to_be_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // `runs` is a file: said, and nothing half-made inside it.
    std::fs::write(d.join("runs"), b"notes").unwrap();
    let e = refused(Store::open(d));
    assert_eq!(
        e,
        format!(
            "the results store's runs folder {} is a file, not a folder: move it out of {} \
             (the store keeps each run's document in runs/), or give --store DIR elsewhere",
            d.join("runs").display(),
            d.display()
        )
    );
    assert_eq!(std::fs::read(d.join("runs")).unwrap(), b"notes");
    // A reindex would index nothing: it says so too.
    assert_eq!(format!("{:#}", store::reindex(d).unwrap_err()), e);
    // The store itself a file, for writing, reading and reindexing alike.
    let file = d.join("store.txt");
    std::fs::write(&file, b"").unwrap();
    let is_a_file = format!(
        "the results store {} is a file, not a folder: give --store DIR for a folder",
        file.display()
    );
    assert_eq!(refused(Store::open(&file)), is_a_file);
    assert_eq!(refused(Store::open_existing(&file)), is_a_file);
    assert_eq!(
        format!("{:#}", store::reindex(&file).unwrap_err()),
        is_a_file
    );
    // Below a file: that file is named.
    let below = file.join("benchboot");
    assert_eq!(
        refused(Store::open(&below)),
        format!(
            "the results store {}: {} is a file, not a folder: give --store DIR elsewhere",
            below.display(),
            file.display()
        )
    );
    // `--store /dev/null` on the command line.
    #[cfg(unix)]
    for args in [
        &["runs", "--store", "/dev/null"][..],
        &["runs", "--reindex", "--store", "/dev/null"][..],
    ] {
        let out = benchboot(args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains(
                "the results store /dev/null is a character device, not a folder: give \
                 --store DIR for a folder"
            ),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("os error"), "{stderr}");
    }
}

#[cfg(unix)]
#[test]
fn reindex_says_what_each_entry_it_leaves_out_is_and_never_to_rename_over_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    stored(d, &["handmade-a"]);
    let runs = d.join("runs");
    let doc = runs.join("handmade-a.json");
    // Second names of the document, sorted before and after it.
    std::fs::hard_link(&doc, runs.join("a.json")).unwrap();
    std::fs::hard_link(&doc, runs.join("hard.json")).unwrap();
    // Another run carrying its id.
    let mut other = RunResults::new("handmade-a".into(), Plan::example(), SystemInfo::default());
    other.board = "rpi-4b".into();
    std::fs::write(runs.join("other-a.json"), other.to_json()).unwrap();
    // No documents: a link, a FIFO, a folder, a file of notes.
    std::os::unix::fs::symlink("handmade-a.json", runs.join("link.json")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        runs.join("fifo.json"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    std::fs::create_dir(runs.join("old.json")).unwrap();
    std::fs::write(runs.join("notes.txt"), b"").unwrap();
    let done = store::reindex(d).unwrap();
    let at = |n: &str| runs.join(n).display().to_string();
    assert_eq!(
        done.lines(),
        [
            format!(
                "rebuilt the index of {} from 1 documents in runs/",
                d.display()
            ),
            format!(
                "  {a}: not indexed: its run id is `handmade-a`, and it is handmade-a.json under \
                 a second name (a hard link: the same file): remove this name (`rm {a}`)",
                a = at("a.json")
            ),
            format!(
                "  {}: not indexed: a FIFO (named pipe), not a document: remove it",
                at("fifo.json")
            ),
            format!(
                "  {h}: not indexed: it is handmade-a.json under a second name (a hard link: \
                 the same file): remove this name (`rm {h}`)",
                h = at("hard.json")
            ),
            format!(
                "  {}: not indexed: a symbolic link (to handmade-a.json), which the store never \
                 follows: put the document itself in its place, or remove the link",
                at("link.json")
            ),
            format!(
                "  {}: not indexed: not named <run id>.json, as every document in runs/ is: \
                 rename it if it is a results document, else move it out of runs/",
                at("notes.txt")
            ),
            format!(
                "  {}: not indexed: a folder, not a document: move it out of runs/",
                at("old.json")
            ),
            format!(
                "  {}: not indexed: its run id is `handmade-a`, as handmade-a.json's: rename it \
                 to handmade-a.2.json (the name collect gives another run with one id), or \
                 collect it again",
                at("other-a.json")
            ),
        ]
    );
    let s = Store::open_existing(d).unwrap().unwrap();
    assert_eq!(ids(&s), ["handmade-a"]);
}
