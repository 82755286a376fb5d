//! `benchboot fetch`'s checks of what a board serves, against the fake board.

use std::time::Duration;

use benchboot::fetch::fetch;

use crate::fake_board;

#[test]
fn wrong_major_version_is_refused() {
    let addr =
        fake_board::serve_results("{\"schema_version\": {\"major\": 9, \"minor\": 0}}".into());
    let err = format!("{:#}", fetch(&addr, Duration::from_secs(5)).unwrap_err());
    assert!(err.contains("schema version 9"), "{err}");
    assert!(err.contains("update benchboot"), "{err}");
}

/// What `fetch` prints (the main job's report) fits the width a pipe asks for
/// (`COLUMNS`), as `report` and `show` do: the context table was 345 columns and more.
#[test]
fn the_fetched_report_fits_columns() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/qemu-virt-arm64-1.13.json"
    ))
    .unwrap();
    let addr = fake_board::serve_results(doc);
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_benchboot"))
        .args(["fetch", "--timeout", "5", "--addr", &addr, "--out"])
        .arg(dir.path().join("run.json"))
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("Context"), "{text}");
    let wide: Vec<&str> = text.lines().filter(|l| l.chars().count() > 80).collect();
    assert!(
        wide.is_empty(),
        "{} lines over 80 columns: {:?}",
        wide.len(),
        &wide[..wide.len().min(3)]
    );
}

#[test]
fn nothing_listening_names_the_address() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let err = format!("{:#}", fetch(&addr, Duration::from_secs(2)).unwrap_err());
    assert!(err.contains(&addr), "{err}");
}

/// A served document whose run id climbs out of the folder (`../.vscode/tasks`, an
/// absolute path, a Windows device) is refused before anything is written: no file
/// appears, inside or outside the working folder.
#[test]
fn a_run_id_that_names_another_folder_is_never_a_path() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/handmade-a.json"
    ))
    .unwrap();
    for id in [
        "../.vscode/tasks",
        "/tmp/benchboot-fetch-abs",
        "nul",
        ".hidden",
    ] {
        let mut v: serde_json::Value = serde_json::from_str(&doc).unwrap();
        v["run_id"] = id.into();
        let addr = fake_board::serve_results(v.to_string());
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_benchboot"))
            .args(["fetch", "--timeout", "5", "--addr", &addr])
            .current_dir(&work)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{id}: {err}");
        assert!(err.contains("cannot name a file"), "{id}: {err}");
        assert!(err.contains("--out FILE"), "{id}: {err}");
        let left = walk(dir.path());
        assert_eq!(left, std::slice::from_ref(&work), "{id}: written: {left:?}");
        assert!(!std::path::Path::new("/tmp/benchboot-fetch-abs.json").exists());
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        v.push(e.path());
        if e.path().is_dir() {
            v.extend(walk(&e.path()));
        }
    }
    v.sort();
    v
}

/// With no address, `fetch` never takes what answers on 127.0.0.1:18080 (the port
/// `cargo xtask qemu` forwards), where any local user can listen: it looks only where a
/// board can be and says to name a QEMU board.
#[test]
fn discovery_never_takes_a_loopback_answer() {
    let listener = std::net::TcpListener::bind(("127.0.0.1", benchboot_plan::QEMU_RESULTS_FORWARD))
        .expect("127.0.0.1:18080 is free in the host's test binary");
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/handmade-a.json"
    ))
    .unwrap();
    fake_board::serve_results_on(listener, doc);
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_benchboot"))
        .args(["fetch", "--timeout", "1"])
        .env_remove(benchboot::discover::BOARD_ENV)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("no board answered"), "{err}");
    assert!(err.contains("--addr 127.0.0.1:18080"), "{err}");
    assert!(!err.contains("found a board"), "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
