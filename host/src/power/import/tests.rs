//! `power import`: a trace attached to a stored run, refused over one already there
//! without `--replace`, never to a run the store lacks.

use super::*;
use benchboot_energy::{Clock, Sample};
use benchboot_results::RunResults;

const DOC: &str = include_str!("../../../tests/data/handmade-a.json");

fn store_with_run() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let r = RunResults::from_json(DOC).unwrap();
    Store::open(dir.path())
        .unwrap()
        .put(&r, DOC, "test", 0)
        .unwrap();
    dir
}

fn trace(n: usize) -> Trace {
    Trace {
        meter: "fake".into(),
        clock: Clock::Own,
        emulated: false,
        resolution_w: 0.01,
        period_s: 0.1,
        position: None,
        samples: (0..n).map(|i| Sample::watts(i as f64 * 0.1, 2.5)).collect(),
        counter_j: None,
        console: Vec::new(),
    }
}

fn file(dir: &Path, t: &Trace) -> PathBuf {
    let p = dir.join("in.json");
    trace_file::write(&p, t).unwrap();
    p
}

#[test]
fn a_trace_is_stored_beside_the_run_and_replaced_only_when_asked() {
    let store = store_with_run();
    let src = tempfile::tempdir().unwrap();
    let mut what = Import {
        run: "handmade".into(),
        file: file(src.path(), &trace(3)),
        replace: false,
        position: Some("at the wall".into()),
    };
    let done = import(store.path(), &what).unwrap();
    let path = store.path().join("power").join("handmade-a.json");
    assert_eq!(
        done,
        Imported {
            run: "handmade-a".into(),
            path: path.clone(),
            samples: 3,
            replaced: false
        }
    );
    let stored = trace_file::read(&path).unwrap();
    assert_eq!(stored.samples.len(), 3);
    assert_eq!(stored.position.as_deref(), Some("at the wall"));
    // The report of the stored run finds it.
    let doc = crate::store::resolve("handmade-a", Some(store.path())).unwrap();
    assert_eq!(trace_file::beside(&doc), Some(path.clone()));

    what.file = file(src.path(), &trace(5));
    let e = format!("{:#}", import(store.path(), &what).unwrap_err());
    assert_eq!(
        e,
        format!(
            "run handmade-a has a power trace already ({}): give --replace to replace it",
            path.display()
        )
    );
    assert_eq!(trace_file::read(&path).unwrap().samples.len(), 3);
    what.replace = true;
    let done = import(store.path(), &what).unwrap();
    assert!(done.replaced);
    assert_eq!(trace_file::read(&path).unwrap().samples.len(), 5);
    assert_eq!(
        summary(&done),
        format!(
            "attached 5 samples to run handmade-a ({}), replacing its earlier trace",
            path.display()
        )
    );
}

#[test]
fn an_unknown_run_an_empty_trace_and_another_format_are_refused() {
    let store = store_with_run();
    let src = tempfile::tempdir().unwrap();
    let what = Import {
        run: "nothing-like-it".into(),
        file: file(src.path(), &trace(2)),
        replace: false,
        position: None,
    };
    let e = import(store.path(), &what).unwrap_err();
    assert!(
        matches!(
            e.downcast_ref::<StoreError>(),
            Some(StoreError::NotFound { .. })
        ),
        "{e:#}"
    );
    let empty = Import {
        run: "handmade-a".into(),
        file: file(src.path(), &trace(0)),
        ..what.clone()
    };
    let e = format!("{:#}", import(store.path(), &empty).unwrap_err());
    assert!(
        e.ends_with(
            ": the trace holds no sample: record one (`benchboot power record`) while the run runs"
        ),
        "{e}"
    );
    let txt = src.path().join("in.txt");
    std::fs::write(&txt, "1,2").unwrap();
    let other = Import {
        file: txt.clone(),
        ..empty
    };
    let e = format!("{:#}", import(store.path(), &other).unwrap_err());
    assert!(
        e.starts_with(&format!(
            "{}: not a trace this benchboot reads",
            txt.display()
        )),
        "{e}"
    );
    assert!(!store.path().join("power").exists());
}

#[test]
fn a_csv_trace_is_imported_on_its_own_clock() {
    let store = store_with_run();
    let src = tempfile::tempdir().unwrap();
    let csv = src.path().join("um25c.csv");
    std::fs::write(&csv, "time_s,watts\n10.0,2.5\n10.1,2.75\n10.2,3.0\n").unwrap();
    let what = Import {
        run: "handmade-a".into(),
        file: csv,
        replace: false,
        position: None,
    };
    assert_eq!(import(store.path(), &what).unwrap().samples, 3);
    let t = trace_file::read(&store.path().join("power").join("handmade-a.json")).unwrap();
    assert_eq!(t.meter, "csv um25c.csv");
    assert_eq!(t.clock, Clock::Own);
    assert_eq!(t.samples[1], Sample::watts(10.1, 2.75));
}
