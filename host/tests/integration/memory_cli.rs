//! `benchboot memory` as a binary: a short run on this machine saves a document that
//! `report` (text, CSV, plots) and the library's loader read, and a bad option is a
//! message naming it.

use std::process::{Command, Output};

use benchboot::results_file::load_path;

/// The tool's output for `args`, tables at their natural width (`COLUMNS` far wider
/// than any: these tests read the content, `terminal_width` the fitting).
fn benchboot(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_benchboot"))
        .args(args)
        .env("COLUMNS", "10000")
        .output()
        .expect("benchboot runs")
}

#[test]
fn a_short_memory_run_saves_a_document_report_renders() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mem.json");
    let f = file.to_str().unwrap();
    let out = benchboot(&[
        "memory",
        "--samples",
        "1",
        "--sample-ms",
        "5",
        "--latency-max-mib",
        "1",
        "--latency-reads",
        "1000",
        "--no-huge-pages",
        "--out",
        f,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.starts_with(&format!("saved {f}\n")), "{stdout}");
    assert!(stdout.contains("standard memcpy"), "{stdout}");

    let r = load_path(&file).unwrap();
    assert_eq!(r.board, "host");
    let m = r.memory.as_ref().unwrap();
    assert!(m.bandwidth.iter().all(|t| t.samples.len() == 1));
    assert_eq!(m.latency.len(), 1, "base pages only");
    let blocks: Vec<u64> = m.latency[0].rows.iter().map(|x| x.block_bytes).collect();
    assert_eq!(blocks.first(), Some(&1024));
    assert_eq!(blocks.last(), Some(&(1 << 20)));
    // Rounded down to a multiple of 16 (tinymembench's loops read 16 at a time).
    assert_eq!(m.latency[0].reads, 992);
    assert_eq!(r.clock_checks.len(), 2);

    let report = benchboot(&["report", f]);
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    for want in [
        "Memory: bandwidth and latency (tinymembench's method)",
        "CPU 0:",
        "  standard memcpy ",
        " MB/s (",
        "Latency, base pages (4 KiB), CPU ",
        "single random read, ns",
        "1 MiB",
        "CPU clock: calibrated loop vs cpufreq vs firmware",
        "before-memory",
    ] {
        assert!(text.contains(want), "no {want:?} in\n{text}");
    }
    assert!(!text.contains("\nStorage\n"), "{text}");

    let csv = benchboot(&[
        "report",
        f,
        "--format",
        "csv",
        "--plots",
        dir.path().join("plots").to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&csv.stdout);
    assert!(csv.status.success());
    assert!(
        text.lines().any(|l| l.contains(",memory-bandwidth,cpu")),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.contains(",memory-latency,base,")),
        "{text}"
    );
    assert!(dir
        .path()
        .join("plots")
        .join(format!("{}-memory-latency.svg", r.run_id))
        .is_file());
}

#[test]
fn a_bad_option_names_itself() {
    let out = benchboot(&["memory", "--latency-max-mib", "3"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("error: --latency-max-mib 3: must be a power of two"),
        "{stderr}"
    );
}

/// A count out of range says the range (a plan's own bounds), before anything runs.
#[test]
fn a_count_out_of_range_gives_its_range() {
    for (args, want) in [
        (
            ["--latency-reads", "0"],
            "'--latency-reads <LATENCY_READS>': 0 is not in 1..=1000000000",
        ),
        (
            ["--latency-reads", "5000000000"],
            "5000000000 is not in 1..=1000000000",
        ),
        (
            ["--samples", "0"],
            "'--samples <SAMPLES>': 0 is not in 1..=10000",
        ),
        (["--samples", "20000"], "20000 is not in 1..=10000"),
    ] {
        let out = benchboot(&["memory", args[0], args[1]]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
    }
}
