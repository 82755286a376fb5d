//! The store is locked: `runs --reindex` and `collect` never interleave, so a reindex
//! racing collects loses no stored run, and a collect kept waiting says for whom.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use benchboot_plan::Plan;
use benchboot_results::{RunResults, SystemInfo};

fn benchboot(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_benchboot"));
    // Never the developer's own store.
    c.args(args)
        .env("BENCHBOOT_STORE", "/nonexistent/benchboot-store");
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A card folder holding run `id`'s document as `results.json`.
fn card(dir: &Path, id: &str) -> std::path::PathBuf {
    let mut r = RunResults::new(
        id.into(),
        Plan::example(),
        SystemInfo {
            kernel_release: "6.1.0-test".into(),
            written_ns: 5,
            ..SystemInfo::default()
        },
    );
    r.complete = true;
    let folder = dir.join(id);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("results.json"), r.to_json()).unwrap();
    folder
}

fn collect(card: &Path, store: &Path) -> Output {
    benchboot(&[
        "collect",
        "--from-card",
        card.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
    ])
    .output()
    .unwrap()
}

/// The run ids `benchboot runs --json` lists.
fn listed(store: &Path) -> Vec<String> {
    let out = benchboot(&["runs", "--json", "--store", store.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let mut ids: Vec<String> = rows
        .iter()
        .map(|r| r["run_id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

/// Sets its flag when dropped.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Collects one after another while `runs --reindex` runs over and over: every collect
/// succeeds and says where it stored its run, every reindex succeeds, and in the end
/// the index lists every run collected (a reindex that listed `runs/` before a
/// collect's document arrived, or a collect writing into the database a reindex then
/// replaced, would lose one).
#[test]
fn reindex_racing_collects_loses_no_run() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    // Enough documents that a reindex takes a while.
    let mut ids: Vec<String> = (0..120).map(|i| format!("rpi-zero-w-old{i:03}")).collect();
    for id in &ids {
        let c = card(dir.path(), id);
        assert!(collect(&c, &store).status.success());
    }
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        // Set when this body ends, also by a failed assertion: the reindexer stops and
        // the failure is reported instead of the scope waiting on it for ever.
        let stop = StopOnDrop(&done);
        let reindexer = scope.spawn(|| {
            let mut runs = 0;
            while !done.load(Ordering::Relaxed) {
                let out = benchboot(&["runs", "--reindex", "--store", store.to_str().unwrap()])
                    .output()
                    .unwrap();
                assert!(out.status.success(), "reindex: {}", text(&out.stderr));
                runs += 1;
            }
            runs
        });
        for i in 0..24 {
            let id = format!("rpi-zero-w-new{i:03}");
            let out = collect(&card(dir.path(), &id), &store);
            let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
            assert!(out.status.success(), "collect {id}: {stderr}");
            assert!(
                stdout.contains(&format!(
                    "stored in {}",
                    store.join("runs").join(format!("{id}.json")).display()
                )),
                "{stdout}"
            );
            assert!(!stderr.contains("read-only"), "{stderr}");
            ids.push(id);
        }
        drop(stop);
        let reindexed = reindexer.join().unwrap();
        assert!(reindexed > 0);
    });
    ids.sort();
    assert_eq!(listed(&store), ids);
}

/// A collect that finds the store locked by a reindex waits, and says for whom; once
/// the lock is free it stores its run.
#[test]
fn a_collect_kept_waiting_says_who_holds_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    std::fs::create_dir_all(&store).unwrap();
    let held = benchboot::store::lock::try_acquire(&store, benchboot::store::lock::Holder::Reindex)
        .unwrap()
        .unwrap();
    let c = card(dir.path(), "rpi-zero-w-wait");
    let mut child = benchboot(&[
        "collect",
        "--from-card",
        c.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert_eq!(
        line.trim_end(),
        format!(
            "waiting for the store {}: another benchboot (pid {}) is rebuilding the index \
             (`runs --reindex`)",
            store.display(),
            std::process::id()
        )
    );
    assert!(!store.join("runs/rpi-zero-w-wait.json").exists());
    held.release();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(store.join("runs/rpi-zero-w-wait.json").exists());
    assert_eq!(listed(&store), ["rpi-zero-w-wait"]);
}
