//! `benchboot report` output formats: CSV and JSON round trips, EMULATED in every format,
//! and what the user is told when RUN is not a results document.

use benchboot::report::summary::ReportJson;
use benchboot::report::tidy::{from_csv, rows, to_csv};
use benchboot::report::{load_run, render, resolve_run, Format};
use benchboot::results_file::load_path;
use serde_json::Value;

const RPI: &str = "tests/data/rpi-zero-w-qemu.json";
const VIRT: &str = "tests/data/qemu-virt-arm64-qemu.json";
const HAND_A: &str = "tests/data/handmade-a.json";

/// JSON trees equal, numbers to 1e-12 relative (serde_json's float parsing may differ in
/// the last bit).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= 1e-12 * x.abs().max(y.abs()).max(1.0)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn csv_round_trips_one_row_per_measurement() {
    for path in [RPI, VIRT, HAND_A] {
        let (_, r) = load_run(path).unwrap();
        let rows = rows(&r);
        let latency: usize = r.network.latency.iter().map(|l| l.rtt_ns.len()).sum();
        let intervals: usize = r.network.throughput.iter().map(|t| t.intervals.len()).sum();
        assert_eq!(
            rows.len(),
            r.storage.len()
                + r.device_reads.len()
                + r.random.len()
                + r.network.throughput.len()
                + intervals
                + latency
                + r.network.http.len()
                + r.verify.len(),
            "{path}"
        );
        let text = to_csv(&rows).unwrap();
        assert_eq!(from_csv(&text).unwrap(), rows, "{path}");
        assert_eq!(render(&r, Format::Csv).unwrap(), text);
        assert!(text.starts_with(
            "run_id,board,emulated,section,target,filesystem,mode,requested_mode,direction,\
             block_size_bytes,queue_depth,streams,repetition,bytes,ios,ns,mib_per_s,"
        ));
    }
}

#[test]
fn csv_rows_keep_raw_bytes_and_nanoseconds_next_to_the_rate() {
    let (_, r) = load_run(RPI).unwrap();
    let row = rows(&r)
        .into_iter()
        .find(|x| {
            x.section == "storage"
                && x.target == "ext4"
                && x.block_size_bytes == Some(4096)
                && x.direction == "write"
                && x.requested_mode == "sync"
        })
        .unwrap();
    // From the file: 262144 bytes in 49108000 ns.
    assert_eq!((row.bytes, row.ns), (Some(262_144), 49_108_000));
    let expect = 0.25 / 0.049_108;
    assert!((row.mib_per_s.unwrap() - expect).abs() < 1e-9);
    // A direct-mode cell that fell back says so.
    let fb = rows(&r)
        .into_iter()
        .find(|x| x.requested_mode == "direct" && x.mode == "sync")
        .unwrap();
    assert!(fb.note.contains("O_DIRECT impossible"), "{}", fb.note);
}

#[test]
fn json_round_trips_and_carries_units_in_field_names() {
    for path in [RPI, VIRT, HAND_A] {
        let (_, r) = load_run(path).unwrap();
        let text = render(&r, Format::Json).unwrap();
        let back: ReportJson = serde_json::from_str(&text).unwrap();
        let again = serde_json::to_value(&back).unwrap();
        let first: Value = serde_json::from_str(&text).unwrap();
        assert!(same(&first, &again), "{path}");
        assert_eq!(back.kind, "benchboot-report");
    }
    let (_, r) = load_run(HAND_A).unwrap();
    let j: Value = serde_json::from_str(&render(&r, Format::Json).unwrap()).unwrap();
    let cell = &j["storage"][0];
    assert_eq!(cell["target"], "ext4");
    assert_eq!(cell["mib_per_s"]["n"], 4);
    assert!(j["context"]["not_recorded"]
        .as_array()
        .unwrap()
        .contains(&Value::from("temperature_millicelsius")));
    let kinds: Vec<&str> = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["warning", "error", "incomplete"]);
}

#[test]
fn emulated_runs_say_so_in_every_format() {
    for path in [RPI, VIRT] {
        let (_, r) = load_run(path).unwrap();
        assert!(r.emulated);
        for f in [Format::Table, Format::Markdown] {
            let t = render(&r, f).unwrap();
            assert!(t.contains("EMULATED (QEMU)"), "{path} {f:?}");
        }
        let csv = from_csv(&render(&r, Format::Csv).unwrap()).unwrap();
        assert!(csv.iter().all(|row| row.emulated), "{path}");
        let j: Value = serde_json::from_str(&render(&r, Format::Json).unwrap()).unwrap();
        assert_eq!(j["emulated"], true);
        assert!(j["notice"].as_str().unwrap().contains("EMULATED"));
        assert_eq!(j["warnings"][0]["kind"], "emulated");
    }
    // And a hardware run does not.
    let (_, r) = load_run(HAND_A).unwrap();
    for f in [Format::Table, Format::Markdown, Format::Json] {
        assert!(!render(&r, f).unwrap().contains("EMULATED"), "{f:?}");
    }
}

#[test]
fn context_says_what_is_not_recorded() {
    let (_, r) = load_run(RPI).unwrap();
    let t = render(&r, Format::Table).unwrap();
    for line in ["CPU clock", "temperature", "throttling / under-voltage"] {
        let l = t.lines().find(|l| l.contains(line)).unwrap();
        assert!(l.contains("not recorded"), "{l}");
    }
    assert!(t.contains("mode-fallback: 60 measurement(s) asked for direct but ran sync"));
}

#[test]
fn a_file_that_is_not_results_names_itself_and_what_was_expected() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("notes.json");
    std::fs::write(&p, r#"{"hello": "world"}"#).unwrap();
    let e = format!("{:#}", load_path(&p).unwrap_err());
    assert!(e.contains("notes.json"), "{e}");
    assert!(e.contains("expected a benchboot results document"), "{e}");
    std::fs::write(&p, "not json").unwrap();
    let e = format!("{:#}", load_path(&p).unwrap_err());
    assert!(e.contains("notes.json") && e.contains("not JSON"), "{e}");
    std::fs::write(&p, r#"{"schema_version": {"major": 9, "minor": 0}}"#).unwrap();
    let e = format!("{:#}", load_path(&p).unwrap_err());
    assert!(e.contains("update benchboot"), "{e}");
}

#[test]
fn resolve_run_says_what_to_pass() {
    let e = resolve_run("no-such-run-1234").unwrap_err().to_string();
    assert!(
        e.contains("no results file or stored run `no-such-run-1234`"),
        "{e}"
    );
    assert!(
        e.contains("benchboot fetch") && e.contains("benchboot runs"),
        "{e}"
    );
    let e = resolve_run("tests/data").unwrap_err().to_string();
    assert!(e.contains("is a folder"), "{e}");
    assert_eq!(resolve_run(RPI).unwrap(), std::path::PathBuf::from(RPI));
}

/// On a terminal the tables fit its width: every line of the QEMU runs' reports and of
/// the document with every kind of figure stays within 100 columns (the context and
/// latency tables ran past 200), long cells wrapped, not cut: every word of the fitted
/// text is one of the natural-width text, and the natural text's words are all there but
/// the figures of the unit columns a narrow table leaves out (MB/s, MiB/s beside Mbit/s).
#[test]
fn tables_fit_a_terminal_of_100_columns() {
    use benchboot::render::document;
    use std::collections::BTreeSet;
    use unicode_width::UnicodeWidthStr;
    let words = |t: &str| -> BTreeSet<String> {
        t.split(|c: char| c.is_whitespace() || ('\u{2500}'..='\u{257f}').contains(&c))
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let number = |w: &str| {
        w.trim_end_matches(['!', ','])
            .replace(',', "")
            .parse::<f64>()
            .is_ok()
    };
    let note = words(
        "(continued) (MB/s, MiB/s left out to fit 100 columns: the same figures in another unit)",
    );
    for path in [RPI, VIRT, "../crates/results/tests/data/every-figure.json"] {
        let (_, r) = load_run(path).unwrap();
        let natural = document(&r).text();
        assert!(
            natural.lines().any(|l| l.width() > 150),
            "{path}: a table wider than 150 columns to begin with"
        );
        let fitted = document(&r).text_width(Some(100));
        for l in fitted.lines() {
            assert!(l.width() <= 100, "{path}: {} columns: {l}", l.width());
        }
        let (a, b) = (words(&natural), words(&fitted));
        let invented: Vec<&String> = b.difference(&a).filter(|w| !note.contains(*w)).collect();
        assert!(
            invented.is_empty(),
            "{path}: words cut or made up: {invented:?}"
        );
        let lost: Vec<&String> = a
            .difference(&b)
            .filter(|w| !number(w) && !["MB/s", "MiB/s"].contains(&w.as_str()))
            .collect();
        assert!(lost.is_empty(), "{path}: text lost in fitting: {lost:?}");
    }
}

/// `--format html` is a page of the same report: the title, every heading of the
/// terminal report in its order, and the plots inline.
#[test]
fn html_holds_the_terminal_reports_headings_in_order() {
    use benchboot::doc::Block;
    use benchboot::render::document;
    for path in [RPI, VIRT, HAND_A] {
        let (_, r) = load_run(path).unwrap();
        let page = render(&r, Format::Html).unwrap();
        let mut at = 0;
        for b in &document(&r).blocks {
            if let Block::Heading(h) = b {
                let tag = format!(">{}</h2>", benchboot::html::text(h));
                let i = page[at..]
                    .find(&tag)
                    .unwrap_or_else(|| panic!("{path}: heading {h} missing or out of order"));
                at += i + tag.len();
            }
        }
        assert!(page.contains("<svg "), "{path}: no plot");
        assert!(page.len() < 1 << 20, "{path}: {} bytes", page.len());
    }
}
