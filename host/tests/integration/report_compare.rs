//! `benchboot compare`: a ratio against a built-in reference checked by hand, spread and
//! rank-test verdicts on hand-made runs with repetitions, CSV/JSON round trips, EMULATED
//! in every format, and the command line (help examples, errors that say what to do).

use std::process::Command;

use benchboot::compare::output::{csv_rows, render, CompareCsvRow};
use benchboot::compare::{compare, Comparison, SpreadVerdict};
use benchboot::figure::{Key, Section};
use benchboot::reference;
use benchboot::report::{load_run, Format};

const RPI: &str = "tests/data/rpi-zero-w-qemu.json";
const HAND_A: &str = "tests/data/handmade-a.json";
const HAND_B: &str = "tests/data/handmade-b.json";

fn cmp(runs: &[&str], refs: &[&str]) -> Comparison {
    let runs: Vec<_> = runs.iter().map(|p| load_run(p).unwrap()).collect();
    let refs: Vec<_> = refs.iter().map(|n| reference::find(n).unwrap()).collect();
    compare(&runs, &refs).unwrap()
}

#[test]
fn ratio_against_pi_model_b_for_one_cell_computed_by_hand() {
    let c = cmp(&[RPI], &["pi-model-b-usb-hdd"]);
    let row = c
        .rows
        .iter()
        .find(|r| r.key == Key::storage("sync", "write", "ext4", 4096))
        .unwrap();
    // The run: 262,144 bytes in 49,108,000 ns (tests/data/rpi-zero-w-qemu.json).
    let run_mib_s = (262_144.0 / 1_048_576.0) / (49_108_000.0 / 1e9);
    // The reference: storage-raspberry-pi-model-b-usb-disk-write-results.csv, 4096, ext4.
    let reference_mib_s = 22.5;
    assert!((row.cells[0].as_ref().unwrap().median.unwrap() - run_mib_s).abs() < 1e-9);
    assert_eq!(row.cells[1].as_ref().unwrap().median, Some(reference_mib_s));
    let ratio = row.against[1].as_ref().unwrap().ratio.unwrap();
    assert!(
        (ratio - run_mib_s / reference_mib_s).abs() < 1e-12,
        "{ratio}"
    );
    assert!((ratio - 0.2263).abs() < 1e-4);
    assert_eq!(
        row.against[1].as_ref().unwrap().spread,
        SpreadVerdict::NoSpread
    );
    // The reference has no direct mode: those cells stay empty, never matched.
    let direct = c
        .rows
        .iter()
        .find(|r| r.key == Key::storage("direct", "write", "ext4", 4096))
        .unwrap();
    assert!(direct.cells[1].is_none() && direct.against[1].is_none());
    // And the table shows it: the 4 KiB row of the ext4 write table.
    let text = render(&c, Format::Table).unwrap();
    let table = text
        .split("Write, MiB/s, mode sync, target ext4")
        .nth(1)
        .unwrap();
    let line = table.lines().find(|l| l.contains("4 KiB")).unwrap();
    assert!(
        line.contains("5.09") && line.contains("22.50") && line.contains("0.23"),
        "{line}"
    );
}

#[test]
fn repetitions_get_spread_and_rank_test_verdicts() {
    let c = cmp(&[HAND_A, HAND_B], &[]);
    let get = |k: Key| {
        c.rows.iter().find(|r| r.key == k).unwrap().against[1]
            .clone()
            .unwrap()
    };
    // 4 vs 4 repetitions, B twice as fast: ranges apart, exact p = 2/70.
    let a = get(Key::storage("sync", "write", "ext4", 4096));
    assert_eq!(a.spread, SpreadVerdict::Apart);
    let t = a.test.unwrap();
    assert_eq!(t.u_x, 0.0);
    assert!((t.p - 2.0 / 70.0).abs() < 1e-12);
    assert!(a.note.contains("p = 0.029 < 0.05"), "{}", a.note);
    // Same figures: within spread, p = 1.
    let a = get(Key::storage("sync", "write", "ext4", 1 << 20));
    assert_eq!(a.spread, SpreadVerdict::Overlap);
    assert!((a.test.unwrap().p - 1.0).abs() < 1e-12);
    // B has 3 repetitions on vfat: 4+3 cannot reach p < 0.05, and the note says so
    // instead of printing a p-value.
    let a = get(Key::storage("sync", "read", "vfat", 4096));
    assert_eq!(a.spread, SpreadVerdict::Apart);
    assert!(
        a.note.contains("too few for a rank test (p ≥ 0.06)"),
        "{}",
        a.note
    );
    let csv = csv_rows(&c);
    let row = csv
        .iter()
        .find(|r| r.entry == "B" && r.target == "vfat" && r.block_size_bytes == 4096)
        .unwrap();
    assert_eq!(row.p_value, None);
    // Single TCP runs: no spread, ratio only.
    let a = get(Key::network(Section::Tcp, "board-to-host", "ecm", 1));
    assert_eq!(a.spread, SpreadVerdict::NoSpread);
    assert!((a.ratio.unwrap() - 152.0 / 228.0).abs() < 1e-9);
}

#[test]
fn network_reference_sits_beside_links_of_its_kind_only() {
    let c = cmp(
        &[HAND_A],
        &["pi-zero-wh-usb-gadget", "wetab-wifi-11n-40mhz"],
    );
    let row = c
        .rows
        .iter()
        .find(|r| r.key == Key::network(Section::Tcp, "board-to-host", "ecm", 1))
        .unwrap();
    assert_eq!(row.cells[1].as_ref().unwrap().median, Some(152.0));
    assert!((row.against[1].as_ref().unwrap().ratio.unwrap() - 1.0).abs() < 1e-12);
    // A WiFi figure sits beside WiFi entries only: not beside the gadget's HTTP GET, but
    // on a row of its own, min–max only (no ratio: no run beside it).
    let http = c
        .rows
        .iter()
        .find(|r| r.key == Key::network(Section::Http, "host-to-board", "ecm", 0))
        .unwrap();
    assert!(http.cells[2].is_none() && http.against[2].is_none());
    let own = c
        .rows
        .iter()
        .find(|r| r.key == Key::network(Section::Http, "host-to-board", "", 0))
        .unwrap();
    let s = own.cells[2].as_ref().unwrap();
    assert_eq!(
        (s.median, s.min, s.max),
        (None, 2.08 * 8.388608, 6.14 * 8.388608)
    );
    assert!(own.cells[0].is_none() && own.against[2].is_none());
}

#[test]
fn csv_and_json_round_trip() {
    let c = cmp(&[HAND_A, HAND_B], &["desktop-usb2-hdd"]);
    let text = render(&c, Format::Csv).unwrap();
    let back: Vec<CompareCsvRow> = csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(back, csv_rows(&c));
    let json = render(&c, Format::Json).unwrap();
    let parsed: Comparison = serde_json::from_str(&json).unwrap();
    assert_eq!(parsed.entries, c.entries);
    assert_eq!(parsed.rows.len(), c.rows.len());
    assert_eq!(parsed.kind, "benchboot-compare");
}

#[test]
fn emulated_entries_are_marked_in_every_format() {
    let c = cmp(&[RPI, HAND_A], &[]);
    for f in [Format::Table, Format::Markdown, Format::Json] {
        assert!(render(&c, f).unwrap().contains("EMULATED (QEMU)"), "{f:?}");
    }
    for row in csv_rows(&c) {
        assert_eq!(row.emulated, row.entry == "A", "{row:?}");
    }
    assert!(c.entries[0].emulated && !c.entries[1].emulated);
    let c = cmp(&[HAND_A, HAND_B], &[]);
    assert!(c.notice.is_none());
    assert!(!render(&c, Format::Table).unwrap().contains("EMULATED"));
}

fn benchboot(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_benchboot"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn command_line_help_has_examples_and_errors_say_what_to_do() {
    for cmd in ["report", "compare"] {
        let (ok, out, _) = benchboot(&[cmd, "--help"]);
        assert!(ok && out.contains("Examples:") && out.contains(&format!("benchboot {cmd} ")));
    }
    let (ok, _, err) = benchboot(&["report", "Cargo.toml"]);
    assert!(!ok);
    assert!(
        err.contains("Cargo.toml") && err.contains("expected a benchboot results document"),
        "{err}"
    );
    let (ok, _, err) = benchboot(&["compare", HAND_A]);
    assert!(!ok && err.contains("--reference NAME"), "{err}");
    let (ok, _, err) = benchboot(&["compare", HAND_A, "--reference", "pi-9"]);
    assert!(!ok && err.contains("known: pi-model-b-usb-hdd"), "{err}");
    let (ok, out, _) = benchboot(&["compare", "--list-references", "--json"]);
    assert!(ok);
    let list: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list.as_array().unwrap().len(), reference::REFERENCES.len());
    let (ok, out, _) = benchboot(&["report", RPI, "--json"]);
    assert!(ok);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["emulated"], true);
}
