//! `benchboot compare`'s verdicts in words: a run whose ext4 writes are 25 % faster than
//! its twin's is named so (section, percent, direction, target) and the rest said within
//! noise or unchanged; the geometric mean of known ratios; the verdict block first in the
//! terminal, Markdown and HTML; two QEMU runs marked EMULATED in every verdict, with no
//! memory latency rows (TCG noise) left in the comparison.

use benchboot::compare::output::{document, render};
use benchboot::compare::verdict::{verdicts, Change, EntryVerdicts, Tested, Verdict};
use benchboot::compare::{compare, Comparison};
use benchboot::figure::Section;
use benchboot::report::{load_run, Format};
use benchboot_results::{Direction, RunResults};

const HAND_A: &str = "tests/data/handmade-a.json";
const QEMU_113: &str = "tests/data/qemu-virt-arm64-1.13.json";
const QEMU_12: &str = "tests/data/qemu-virt-arm64-qemu.json";

/// handmade-a against a copy of itself (run id `handmade-a2`) whose storage passes
/// `scale` speeds up by the factor it returns for a (target, direction), by shortening
/// the timed region.
fn twin(scale: impl Fn(&str, Direction) -> f64) -> Comparison {
    let (pa, a) = load_run(HAND_A).unwrap();
    let mut b: RunResults = a.clone();
    b.run_id = "handmade-a2".into();
    for m in &mut b.storage {
        let f = scale(&m.target, m.direction);
        m.nanos = (m.nanos as f64 / f).round() as u64;
    }
    compare(&[(pa.clone(), a), (pa.with_file_name("twin.json"), b)], &[]).unwrap()
}

fn only(c: &Comparison) -> EntryVerdicts {
    let mut v = verdicts(c);
    assert_eq!(v.len(), 1);
    v.remove(0)
}

fn section<'a>(v: &'a EntryVerdicts, title: &str) -> &'a Verdict {
    v.verdicts
        .iter()
        .find(|x| x.section == title)
        .unwrap_or_else(|| panic!("no verdict {title}: {v:#?}"))
}

#[test]
fn a_quarter_faster_on_one_target_is_named_in_words_and_the_rest_is_noise() {
    let c = twin(|t, d| {
        if t == "ext4" && d == Direction::Write {
            1.25
        } else {
            1.0
        }
    });
    let v = only(&c);
    assert_eq!(
        v.heading,
        "Verdict: B (handmade-a2) against A (handmade-a), the baseline"
    );
    for mode in ["sync", "direct"] {
        let w = section(&v, &format!("Sequential write, mode {mode}"));
        // 4 + 4 repetitions 5 % apart each (1.00–1.15 against 1.25–1.44): ranges
        // apart, exact p = 2/70; vfat identical: within its spread of ±7 %.
        assert_eq!(
            w.text,
            format!(
                "Sequential write, mode {mode}: B writes 25 % faster on ext4; within noise on \
                 vfat (±7 %). Geometric mean of 6 cells: B 1.12× A."
            )
        );
        assert_eq!(w.places.len(), 2);
        assert_eq!(
            (w.places[0].place.as_str(), w.places[0].change),
            ("ext4", Change::Better)
        );
        assert_eq!(w.places[0].tested, Tested::Yes);
        assert!(w.places[0].ratios.iter().all(|r| (r - 1.25).abs() < 1e-9));
        assert_eq!(
            (w.places[1].place.as_str(), w.places[1].change),
            ("vfat", Change::Noise)
        );
        // Three cells at 1.25, three at 1: √1.25.
        let g = w.geomean.unwrap();
        assert_eq!(g.cells, 6);
        assert!((g.ratio - 1.25f64.sqrt()).abs() < 1e-9, "{}", g.ratio);
    }
    // Every other section: within noise (repetitions) or unchanged (single runs).
    for other in v.verdicts.iter().filter(|x| !x.section.contains("write")) {
        assert!(
            other
                .places
                .iter()
                .all(|p| matches!(p.change, Change::Noise | Change::Same)),
            "{other:#?}"
        );
        assert!(
            !other.text.contains("faster") && !other.text.contains("slower"),
            "{}",
            other.text
        );
    }
    assert_eq!(
        section(&v, "Sequential read, mode sync").text,
        "Sequential read, mode sync: B is within noise on ext4 and vfat (±7 %). Geometric \
         mean of 6 cells: B 1.00× A."
    );
    assert_eq!(
        section(&v, "TCP on ecm").text,
        "TCP on ecm: B is unchanged board → host and host → board (one run each: not \
         tested). Geometric mean of 2 cells: B 1.00× A."
    );
    assert!(v.verdicts.iter().all(|x| !x.emulated));
}

#[test]
fn a_geometric_mean_of_known_ratios_and_both_directions_in_one_line() {
    // ext4 twice as fast, vfat half as fast, reads untouched: (2³ · 0.5³)^(1/6) = 1.
    let c = twin(|t, d| match (t, d) {
        ("ext4", Direction::Write) => 2.0,
        ("vfat", Direction::Write) => 0.5,
        _ => 1.0,
    });
    let v = only(&c);
    let w = section(&v, "Sequential write, mode sync");
    assert_eq!(
        w.text,
        "Sequential write, mode sync: B writes 100 % (2.00×) faster on ext4; 50 % (0.50×) \
         slower on vfat. Geometric mean of 6 cells: B 1.00× A."
    );
    assert!((w.geomean.unwrap().ratio - 1.0).abs() < 1e-9);
    // Both write modes' 12 cells and the reads' 12 at 1: still 1.
    let all: Vec<f64> = v
        .verdicts
        .iter()
        .filter(|x| x.section.starts_with("Sequential"))
        .flat_map(|x| x.places.iter().flat_map(|p| p.ratios.clone()))
        .collect();
    assert_eq!(all.len(), 24);
    let g = benchboot::compare::verdict::geometric_mean(&all).unwrap();
    assert!((g - 1.0).abs() < 1e-9, "{g}");
}

/// Where `needle` first appears in `text` (panics when it does not).
fn at(text: &str, needle: &str) -> usize {
    text.find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in:\n{text}"))
}

#[test]
fn the_verdict_block_comes_first_in_the_terminal_markdown_and_html() {
    let c = twin(|t, d| {
        if t == "ext4" && d == Direction::Write {
            1.25
        } else {
            1.0
        }
    });
    let line = "B writes 25 % faster on ext4";
    let terminal = document(&c).text_width(Some(80));
    for (name, text) in [
        ("terminal", terminal),
        ("table", render(&c, Format::Table).unwrap()),
        ("markdown", render(&c, Format::Markdown).unwrap()),
        ("html", render(&c, Format::Html).unwrap()),
    ] {
        let verdict = at(&text, "Verdict: B (handmade-a2) against A (handmade-a)");
        assert!(at(&text, line) > verdict, "{name}");
        // Before the entries and before every table.
        assert!(verdict < at(&text, "Entries"), "{name}");
        assert!(verdict < at(&text, "Write, MiB/s, mode sync"), "{name}");
        assert!(verdict < at(&text, "A÷X = median"), "{name}");
    }
}

#[test]
fn two_qemu_runs_are_emulated_in_every_verdict_and_latency_is_not_compared() {
    let runs: Vec<_> = [QEMU_113, QEMU_12]
        .iter()
        .map(|p| load_run(p).unwrap())
        .collect();
    let c = compare(&runs, &[]).unwrap();
    let v = only(&c);
    assert!(v.verdicts.len() >= 8, "{v:#?}");
    for x in &v.verdicts {
        assert!(x.emulated && x.text.starts_with("EMULATED: "), "{}", x.text);
        assert_ne!(x.section, "Memory latency");
    }
    assert_eq!(
        section(&v, "Sequential write, mode sync").text,
        "EMULATED: Sequential write, mode sync: B writes 31–88 % slower on ext2, ext3, \
         ext4, vfat and raw (one run each: not tested). Geometric mean of 90 cells: B 0.35× A."
    );
    // One run against the same run copied under another id: its 68 latency rows
    // (mostly 0.0 against 0.0) are gone, one line says why.
    let (p, a) = load_run(QEMU_113).unwrap();
    let mut b = a.clone();
    b.run_id.push_str("-copy");
    let c = compare(&[(p.clone(), a), (p.with_file_name("copy.json"), b)], &[]).unwrap();
    assert!(c
        .rows
        .iter()
        .all(|r| r.key.section != Section::MemoryLatency));
    assert!(c
        .rows
        .iter()
        .any(|r| r.key.section == Section::MemoryBandwidth));
    assert_eq!(
        c.not_compared,
        [
            "Memory latency: not compared, A and B are EMULATED (QEMU): TCG has no caches to \
          time, its latencies are noise (mostly 0.0 ns over L1), shown nowhere"
        ]
    );
    let v = only(&c);
    assert!(v.verdicts.iter().all(|x| x.text.starts_with("EMULATED: ")));
    assert_eq!(
        section(&v, "Memory bandwidth").text,
        "EMULATED: Memory bandwidth: B is within noise on CPU 0, CPU 1 and all 2 cores \
         (±25 %). Geometric mean of 13 cells: B 1.00× A."
    );
    for f in [Format::Table, Format::Markdown, Format::Html, Format::Csv] {
        let text = render(&c, f).unwrap();
        assert!(!text.contains("ns per read over L1"), "{f:?}");
        assert!(!text.contains("memory-latency"), "{f:?}");
        if f != Format::Csv {
            assert_eq!(
                text.matches("Memory latency: not compared").count(),
                2,
                "{f:?}: once in the verdict, once among the tables"
            );
        }
    }
}

/// Two stored QEMU runs with the emulated meter's trace each (the 1.13 run and its copy
/// under another id, `<store>/runs/` and `<store>/power/`): `benchboot compare` says the
/// energy verdict, EMULATED, first.
#[test]
fn stored_runs_with_traces_get_an_emulated_energy_verdict_first() {
    let store = tempfile::tempdir().unwrap();
    let (runs, power) = (store.path().join("runs"), store.path().join("power"));
    std::fs::create_dir_all(&runs).unwrap();
    std::fs::create_dir_all(&power).unwrap();
    let (_, a) = load_run(QEMU_113).unwrap();
    let mut b = a.clone();
    b.run_id.push_str("-copy");
    for (name, r) in [("a", &a), ("b", &b)] {
        std::fs::write(
            runs.join(format!("{name}.json")),
            serde_json::to_string(r).unwrap(),
        )
        .unwrap();
        std::fs::copy(
            "tests/data/qemu-virt-arm64-1.13.power.json",
            power.join(format!("{name}.json")),
        )
        .unwrap();
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_benchboot"))
        .arg("compare")
        .args([runs.join("a.json"), runs.join("b.json")])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let energy = at(
        &text,
        "- EMULATED: Energy: B is within noise for idle power and the whole run (±",
    );
    assert!(energy < at(&text, "Entries"), "{text}");
    assert!(at(&text, "Verdict: B (") < energy);
    // The per-step detail stays in the energy table below.
    assert!(at(&text, "EMULATED ENERGY") > at(&text, "Entries"));
}
