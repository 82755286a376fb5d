//! The energy rows of a comparison over the fixture's run (exact figures): two traces,
//! the second with twice the power above the base, and a run without a trace.

use benchboot_energy::Clock;

use super::*;
use crate::doc::Doc;
use crate::power::energy::fixture;

fn info(letter: &str) -> EntryInfo {
    EntryInfo {
        letter: letter.into(),
        kind: "run".into(),
        name: format!("run-{letter}"),
        board: "fixture-board".into(),
        emulated: false,
        file: None,
        description: String::new(),
    }
}

fn energy(scale: f64) -> Energy {
    let t = fixture::trace_with(Clock::Board, 0.0, scale);
    Energy::of(t, "t".into(), &fixture::results())
}

fn text(c: &EnergyComparison) -> String {
    let mut d = Doc::default();
    d.extend(blocks(c, "A"));
    d.text()
}

#[test]
fn two_runs_with_traces_get_ratios_and_one_without_is_named() {
    let (a, b) = (energy(1.0), energy(2.0));
    let (ia, ib, ic) = (info("A"), info("B"), info("C"));
    let c = comparison(&[(&ia, Ok(Some(&a))), (&ib, Ok(Some(&b))), (&ic, Ok(None))]).unwrap();
    assert_eq!(c.letters, ["A", "B"]);
    assert_eq!(c.left_out, ["C (run-C): no trace"]);
    let row = |step: &str, unit: &str| {
        c.rows
            .iter()
            .find(|r| r.step == step && r.unit == unit)
            .unwrap_or_else(|| panic!("{step} {unit}"))
    };
    // Storage: 90 J against 120 J (1 W against 2 W above the 2 W base, 30 s).
    let st = row("storage.ext4.sync.bs4096", "J");
    let near = |x: Option<f64>, y: f64| x.is_some_and(|x| (x - y).abs() < 1e-9);
    assert!(near(st.ratios[1], 0.75), "{:?}", st.ratios);
    assert_eq!(st.verdicts[1].as_deref(), Some("apart"));
    let per_bit = row("network.usb0.tcp.board-to-host", "nJ/bit");
    assert!(near(per_bit.cells[0].map(|c| c.value), 6.5625));
    assert!(near(per_bit.cells[1].map(|c| c.value), 9.375));
    assert_eq!(per_bit.verdicts[1], None, "no ± per bit");
    // The idle power is the same: within ±.
    let idle = row("idle (radios off)", "W");
    assert!(near(idle.ratios[1], 1.0));
    assert_eq!(idle.verdicts[1].as_deref(), Some("within ±"));
    // A step neither has a figure for: a row of dashes.
    let short = row("random.ext4.read.qd1", "J");
    assert_eq!((short.cells[0], short.ratios[1]), (None, None));
    let t = text(&c);
    assert!(
        t.starts_with("\nEnergy, W, J, J/GiB, nJ/bit (each run's power trace)\n"),
        "{t}"
    );
    assert!(t.contains("- C (run-C): no trace\n"), "{t}");
    assert!(
        t.contains("│ storage.ext4.sync.bs4096         ┆ J           ┆  90.00 ± 0.15 ┆ 120.00 ± 0.30 ┆ 0.75 ┆    apart │"),
        "{t}"
    );
    assert!(!t.contains("EMULATED"));
}

#[test]
fn with_one_trace_there_is_nothing_to_compare_and_the_first_run_says_no_trace() {
    let b = energy(1.0);
    let (ia, ib) = (info("A"), info("B"));
    let c = comparison(&[(&ia, Ok(None)), (&ib, Ok(Some(&b)))]).unwrap();
    assert_eq!(c.left_out, ["A (run-A): no trace"]);
    let t = text(&c);
    assert!(
        t.contains("- only B has a power trace tied to its steps: nothing to compare (see benchboot report)\n- A (run-A): no trace\n"),
        "{t}"
    );
    assert!(!t.contains('┆'), "no table: {t}");
    // No run with a trace: no section at all.
    assert_eq!(comparison(&[(&ia, Ok(None)), (&ib, Ok(None))]), None);
    // An unreadable or unaligned trace is named with its reason.
    let mut flat = energy(1.0);
    flat.report = Err("sync pattern `start` not found".into());
    let c = comparison(&[
        (&ia, Err("bad.json: not a power trace")),
        (&ib, Ok(Some(&flat))),
    ])
    .unwrap();
    assert_eq!(
        c.left_out,
        [
            "A (run-A): its trace cannot be read: bad.json: not a power trace",
            "B (run-B): its trace is not aligned: sync pattern `start` not found"
        ]
    );
}

#[test]
fn an_emulated_trace_marks_the_energy_section() {
    let (a, mut b) = (energy(1.0), energy(1.0));
    b.emulated = true;
    let (ia, ib) = (info("A"), info("B"));
    let c = comparison(&[(&ia, Ok(Some(&a))), (&ib, Ok(Some(&b)))]).unwrap();
    assert_eq!(c.emulated, ["B"]);
    let t = text(&c);
    assert!(t.starts_with("\nEnergy, W, J, J/GiB, nJ/bit (each run's power trace) (EMULATED: B)\nEMULATED ENERGY: B is "), "{t}");
}

#[test]
fn compare_finds_the_traces_stored_with_the_runs() {
    let dir = tempfile::tempdir().unwrap();
    let runs_dir = dir.path().join(crate::store::RUNS_DIR);
    std::fs::create_dir_all(&runs_dir).unwrap();
    let mut runs = Vec::new();
    for id in ["run-a", "run-b"] {
        let mut r = fixture::results();
        r.run_id = id.into();
        let path = runs_dir.join(format!("{id}.json"));
        std::fs::write(&path, r.to_json()).unwrap();
        runs.push((path, r));
    }
    let name =
        benchboot_results::name::SafeName::new(benchboot_results::name::NameKind::RunId, "run-a")
            .unwrap();
    crate::power::trace_file::write(
        &crate::power::trace_file::in_store(dir.path(), &name),
        &fixture::trace(),
    )
    .unwrap();
    let mut c = crate::compare::compare(&runs, &[]).unwrap();
    assert_eq!(c.energy, None, "compare itself reads no trace");
    c.energy = crate::compare::energy_of(&runs, &c.entries);
    let e = c.energy.as_ref().unwrap();
    assert_eq!(
        (e.letters.clone(), e.left_out.clone()),
        (vec!["A".to_owned()], vec!["B (run-b): no trace".to_owned()])
    );
    let t = crate::compare::output::document(&c).text();
    assert!(
        t.contains("- only A has a power trace tied to its steps"),
        "{t}"
    );
}
