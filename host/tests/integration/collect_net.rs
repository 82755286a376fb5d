//! `collect` over loopback: the fake board (`fake_board`) serves a results document,
//! the store is a temp folder.

use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use benchboot::collect::{self, Options};
use benchboot::store::Outcome;
use benchboot_results::RunResults;

use crate::fake_board::serve_results;

/// A real results document when there is one, else a generated one.
fn real() -> (RunResults, String) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/rpi-zero-w-qemu.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|_| {
        let mut r = RunResults::new(
            "rpi-zero-w-generated".into(),
            benchboot_plan::Plan::example(),
            benchboot_results::SystemInfo::default(),
        );
        r.complete = true;
        r.to_json()
    });
    (RunResults::from_json(&text).unwrap(), text)
}

fn opts(addr: &str, store: &Path) -> Options {
    Options {
        addr: Some(addr.into()),
        from_card: None,
        from_log: None,
        run: None,
        token: None,
        lava_check: true,
        store: Some(store.to_owned()),
        timeout: Duration::from_secs(10),
        progress: false,
    }
}

#[test]
fn collect_over_loopback_stores_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let (r, text) = real();
    let addr = serve_results(text.clone());
    let c = collect::collect(&opts(&addr, dir.path())).unwrap();
    assert_eq!(c.outcome, Outcome::Inserted);
    assert_eq!(c.results.run_id, r.run_id);
    assert_eq!(c.row.source, addr);
    assert_eq!(
        c.row.json_path,
        dir.path().join(format!("runs/{}.json", r.run_id))
    );
    assert_eq!(std::fs::read_to_string(&c.row.json_path).unwrap(), text);
    let s = collect::summary(&c);
    assert!(s.contains(&format!("collected {}", r.run_id)), "{s}");
    assert!(s.contains(&format!("from {addr}")), "{s}");
    let v: serde_json::Value = serde_json::from_str(&collect::to_json(&c)).unwrap();
    assert_eq!(v["outcome"], "inserted");
    assert_eq!(v["complete"], r.complete);
}

#[test]
fn a_partial_run_is_stored_and_said_partial_then_replaced_when_complete() {
    let dir = tempfile::tempdir().unwrap();
    let (mut r, _) = real();
    r.run_id = "rpi-zero-w-partial".into();
    r.complete = false;
    r.system.written_ns = 1;
    let partial = r.to_json();
    let c = collect::collect(&opts(&serve_results(partial), dir.path())).unwrap();
    assert_eq!(c.outcome, Outcome::Inserted);
    assert!(!c.row.complete);
    let w = collect::warnings(&c.results).join("\n");
    assert!(w.contains("run rpi-zero-w-partial is partial"), "{w}");
    assert!(collect::summary(&c).contains("partial"));

    r.complete = true;
    r.system.written_ns = 2;
    let complete = r.to_json();
    let c = collect::collect(&opts(&serve_results(complete.clone()), dir.path())).unwrap();
    assert_eq!(c.outcome, Outcome::Updated);
    assert!(c.row.complete);
    assert_eq!(std::fs::read_to_string(&c.row.json_path).unwrap(), complete);
    assert!(!collect::warnings(&c.results)
        .join("\n")
        .contains("is partial"));
    let listed = collect::runs(Some(dir.path()), true).unwrap();
    let v: serde_json::Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1, "{listed}");
}

#[test]
fn an_unknown_major_version_is_refused_and_not_stored() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let addr = serve_results("{\"schema_version\": {\"major\": 9, \"minor\": 0}}".into());
    let err = format!("{:#}", collect::collect(&opts(&addr, &store)).unwrap_err());
    assert!(err.contains("update benchboot"), "{err}");
    assert!(!store.exists());
}

#[test]
fn no_board_names_the_address_and_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let mut o = opts(&addr, dir.path());
    o.timeout = Duration::from_secs(1);
    let err = format!("{:#}", collect::collect(&o).unwrap_err());
    assert!(err.contains(&addr), "{err}");
    assert!(
        err.contains("--timeout") && err.contains("--from-card"),
        "{err}"
    );
}
