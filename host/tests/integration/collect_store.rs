//! The local results store: insert, re-collect (update, never duplicate), list, resolve
//! by id and prefix, refusals.

use benchboot::store::{self, Outcome, Store, StoreError};
use benchboot_plan::Plan;
use benchboot_results::{RunResults, SystemInfo};

/// A generated document: `id`, complete or not, written at `written_ns`, `storage` empty.
fn doc(id: &str, complete: bool, written_ns: u64) -> (RunResults, String) {
    let mut r = RunResults::new(
        id.into(),
        Plan::example(),
        SystemInfo {
            kernel_release: "6.1.0-test".into(),
            machine: "armv6l".into(),
            written_ns,
            ..SystemInfo::default()
        },
    );
    r.complete = complete;
    let text = r.to_json();
    (r, text)
}

#[test]
fn round_trip_and_recollect() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path()).unwrap();

    let (partial, partial_text) = doc("rpi-zero-w-0001", false, 100);
    let stored = s
        .put(&partial, &partial_text, "10.55.0.1:8080", 1_000)
        .unwrap();
    let (outcome, row) = (stored.outcome, stored.row);
    assert_eq!(outcome, Outcome::Inserted);
    assert_eq!(row.json_path, dir.path().join("runs/rpi-zero-w-0001.json"));
    assert_eq!(
        std::fs::read_to_string(&row.json_path).unwrap(),
        partial_text
    );
    assert!(!row.complete);

    // The same run collected later, now complete: replaces the partial copy.
    let (complete, complete_text) = doc("rpi-zero-w-0001", true, 200);
    let stored = s
        .put(&complete, &complete_text, "/dev/sdb p2 (BBRESULTS)", 2_000)
        .unwrap();
    let (outcome, row) = (stored.outcome, stored.row);
    assert_eq!(outcome, Outcome::Updated);
    assert!(row.complete);
    assert_eq!(
        std::fs::read_to_string(&row.json_path).unwrap(),
        complete_text
    );

    // An older partial copy does not replace the complete one.
    let (stale, stale_text) = doc("rpi-zero-w-0001", false, 150);
    let stored = s.put(&stale, &stale_text, "x", 3_000).unwrap();
    let (outcome, kept) = (stored.outcome, stored.row);
    assert_eq!(outcome, Outcome::KeptStored);
    assert!(kept.complete && kept.source == "/dev/sdb p2 (BBRESULTS)");
    assert_eq!(
        std::fs::read_to_string(&kept.json_path).unwrap(),
        complete_text
    );

    let (other, other_text) = doc("qemu-virt-arm64-0002", true, 50);
    s.put(&other, &other_text, "127.0.0.1:18080", 4_000)
        .unwrap();

    // One row per run id, most recently collected first, persisted across opens.
    drop(s);
    let s = Store::open_existing(dir.path()).unwrap().unwrap();
    let rows = s.list().unwrap();
    let ids: Vec<&str> = rows.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(ids, ["qemu-virt-arm64-0002", "rpi-zero-w-0001"]);
    let r = &rows[1];
    assert_eq!(
        (r.board.as_str(), r.kernel.as_str(), r.collected_at),
        ("rpi-zero-w", "6.1.0-test", 2_000)
    );
    assert_eq!(r.schema, (1, benchboot_results::SCHEMA_MINOR));
    assert_eq!(r.written_ns, 200);
    assert_eq!(
        std::fs::read_dir(dir.path().join("runs")).unwrap().count(),
        2,
        "no temp files left"
    );
}

#[test]
fn measurement_counts_of_a_real_document() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/rpi-zero-w-qemu.json"
    );
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!("skipped: {path} is not there");
        return;
    };
    let r = RunResults::from_json(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path()).unwrap();
    let row = s.put(&r, &text, "test", 0).unwrap().row;
    assert_eq!(row.counts.storage, r.storage.len() as u64);
    assert_eq!(row.counts.random, r.random.len() as u64);
    assert_eq!(row.emulated, r.emulated);
    assert_eq!(s.get(&r.run_id).unwrap().unwrap(), row);
}

#[test]
fn resolve_by_id_and_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path()).unwrap();
    for id in [
        "rpi-zero-w-aaaa11",
        "rpi-zero-w-aaaa22",
        "rpi-zero-w-bbbb",
        "x-1",
        "x-12",
    ] {
        let (r, t) = doc(id, true, 1);
        s.put(&r, &t, "test", 0).unwrap();
    }
    let path = |id: &str| dir.path().join(format!("runs/{id}.json"));
    assert_eq!(
        s.resolve("rpi-zero-w-bbbb").unwrap(),
        path("rpi-zero-w-bbbb")
    );
    assert_eq!(s.resolve("rpi-zero-w-b").unwrap(), path("rpi-zero-w-bbbb"));
    assert_eq!(
        s.resolve("rpi-zero-w-aaaa2").unwrap(),
        path("rpi-zero-w-aaaa22")
    );
    // An exact id wins over the longer ids it prefixes.
    assert_eq!(s.resolve("x-1").unwrap(), path("x-1"));

    let err = s.resolve("rpi-zero-w-aaaa").unwrap_err();
    match err.downcast_ref::<StoreError>() {
        Some(StoreError::Ambiguous { matches, .. }) => {
            assert_eq!(matches, &["rpi-zero-w-aaaa11", "rpi-zero-w-aaaa22"]);
        }
        other => panic!("{other:?}"),
    }
    let msg = err.to_string();
    assert!(msg.contains("give more of the run id"), "{msg}");

    let err = s.resolve("nope").unwrap_err();
    assert!(
        matches!(
            err.downcast_ref::<StoreError>(),
            Some(StoreError::NotFound { .. })
        ),
        "{err}"
    );
    assert!(err.to_string().contains("benchboot runs"), "{err}");
    // LIKE wildcards are not wildcards here.
    assert!(s.resolve("rpi%").is_err() && s.resolve("rpi_zero").is_err());

    // The row is there but its file is gone: say so.
    std::fs::remove_file(path("x-12")).unwrap();
    let err = s.resolve("x-12").unwrap_err().to_string();
    assert!(err.contains("collect the run again"), "{err}");
}

#[test]
fn resolve_takes_a_file_path_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("run.json");
    std::fs::write(&f, "{}").unwrap();
    assert_eq!(store::resolve(f.to_str().unwrap(), None).unwrap(), f);
}

#[test]
fn run_ids_that_are_not_file_names_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&dir.path().join("store")).unwrap();
    let (r, t) = doc("../escape", true, 1);
    let err = s.put(&r, &t, "test", 0).unwrap_err();
    assert!(
        matches!(
            err.downcast_ref::<StoreError>(),
            Some(StoreError::BadRunId(_))
        ),
        "{err}"
    );
    assert!(!dir.path().join("escape.json").exists());
    assert!(s.list().unwrap().is_empty());
}

#[test]
fn a_collect_refused_for_its_run_id_leaves_no_store_behind() {
    let dir = tempfile::tempdir().unwrap();
    let (_, text) = doc("../escape", true, 1);
    let card = dir.path().join("results.json");
    std::fs::write(&card, text).unwrap();
    let store = dir.path().join("store");
    let err = benchboot::collect::collect(&benchboot::collect::Options {
        addr: None,
        from_card: Some(card),
        from_log: None,
        run: None,
        token: None,
        lava_check: true,
        store: Some(store.clone()),
        timeout: std::time::Duration::from_secs(1),
        progress: false,
    })
    .unwrap_err();
    assert!(err.to_string().contains("cannot name a file"), "{err}");
    assert!(!store.exists());
}

#[test]
fn a_database_that_is_not_one_is_named_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("benchboot.db"), vec![b'x'; 4096]).unwrap();
    let err = format!("{:#}", Store::open(dir.path()).err().unwrap());
    let db = dir.path().join("benchboot.db");
    assert!(
        err.starts_with(&format!(
            "{}: damaged, or not a benchboot store database (file is not a database): \
             `benchboot runs --reindex --store {}` moves it aside",
            db.display(),
            dir.path().display()
        )),
        "{err}"
    );
    // Refused: the store folder is left as it was found.
    assert!(!dir.path().join("runs").exists());
}

#[test]
fn no_store_yet() {
    let dir = tempfile::tempdir().unwrap();
    assert!(Store::open_existing(dir.path()).unwrap().is_none());
}

/// A document that cannot be put in place (the stored copy it replaces became a folder
/// that is not empty) is an error naming both paths and saying it was not stored, and
/// leaves neither a temp file nor a changed row.
#[test]
fn a_failed_save_leaves_no_temp_file_and_no_row() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path()).unwrap();
    let runs = dir.path().join("runs");
    let (r, text) = doc("blocked", false, 1);
    s.put(&r, &text, "x", 1).unwrap();
    std::fs::remove_file(runs.join("blocked.json")).unwrap();
    std::fs::create_dir_all(runs.join("blocked.json/inside")).unwrap();
    let (r, text) = doc("blocked", true, 2);
    let err = format!("{:#}", s.put(&r, &text, "x", 2).unwrap_err());
    assert!(
        err.starts_with("run blocked was not stored: ")
            && err.contains("renaming")
            && err.contains("blocked.json"),
        "{err}"
    );
    let mut left: Vec<String> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["blocked.json"]);
    let rows = s.list().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].complete, rows[0].written_ns), (false, 1));
}

/// When the document is in place but its row cannot be written, the error says the
/// document was stored, where, and how to index it: never "nothing was stored".
#[test]
fn a_row_that_fails_after_the_document_is_stored_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path()).unwrap();
    // Every new row refused, as a database error after the document is written would.
    rusqlite::Connection::open(dir.path().join("benchboot.db"))
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER refuse BEFORE INSERT ON runs \
             BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;",
        )
        .unwrap();
    let (r, text) = doc("rpi-zero-w-0009", true, 1);
    let err = format!("{:#}", s.put(&r, &text, "x", 1).unwrap_err());
    let file = dir.path().join("runs").join("rpi-zero-w-0009.json");
    assert_eq!(
        err,
        format!(
            "run rpi-zero-w-0009: its document was stored as {}, but the index {} was not \
             updated (refused by the test): `benchboot runs --reindex --store {}` indexes it",
            file.display(),
            dir.path().join("benchboot.db").display(),
            dir.path().display()
        )
    );
    assert!(!err.contains("nothing was stored"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

/// A file in `runs/` the index does not list (copied in by hand, or a document that
/// did not parse) is never overwritten: a run of that name goes beside it.
#[test]
fn a_file_the_index_does_not_list_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(dir.path()).unwrap();
    let theirs = dir.path().join("runs/rpi-zero-w-0010.json");
    std::fs::write(&theirs, "kept by hand").unwrap();
    let (r, text) = doc("rpi-zero-w-0010", true, 1);
    let stored = s.put(&r, &text, "x", 1).unwrap();
    assert_eq!(stored.outcome, Outcome::KeptBoth);
    assert_eq!(stored.row.stored_as, "rpi-zero-w-0010.2");
    assert_eq!(
        stored.beside,
        [format!(
            "{}: a file the index does not list (`benchboot runs --reindex` lists it)",
            std::path::Path::new("runs")
                .join("rpi-zero-w-0010.json")
                .display()
        )]
    );
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "kept by hand");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("runs/rpi-zero-w-0010.2.json")).unwrap(),
        text
    );
}
