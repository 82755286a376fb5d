//! The energy section over the fixture's run and trace ([`fixture`]: known power, no
//! noise, so every figure below is exact).

use benchboot_energy::Clock;

use super::fixture;
use super::*;
use crate::doc::Doc;

fn doc(e: &Energy) -> Doc {
    let mut d = Doc::default();
    d.extend(blocks(e));
    d
}

fn board() -> Energy {
    Energy::of(fixture::trace(), "trace t.json".into(), &fixture::results())
}

fn report(e: &Energy) -> &EnergyReport {
    e.report.as_ref().unwrap()
}

/// The rows of every step, pass, idle phase: what the fixture's power makes them.
#[test]
fn the_rows_of_a_known_trace_are_exact() {
    let e = board();
    assert_eq!(
        headline(&e),
        "idle 2.000 ± 0.000 W (radios off); run 400.82 ± 0.33 J over 145.5 s (first sync \
         pattern to last); meter fixture meter"
    );
    let rep = report(&e);
    assert_eq!(
        alignment_line(rep),
        "alignment: none needed, the trace is on the board's clock (error ± 50.0 ms)"
    );
    let g = step_grid(rep, &mut Reasons::default());
    assert_eq!(
        g.header,
        [
            "step",
            "s",
            "samples",
            "mean, W",
            "above idle, W",
            "energy, J",
            "above idle, J",
            "J/GiB moved",
            "nJ/bit"
        ]
    );
    let row = |cells: &[&str]| cells.iter().map(|c| c.to_string()).collect::<Vec<_>>();
    // 3 W for 30 s over 2 GiB + 64 MiB moved; 3.5 W for 15 s over 8 × 10^9 bits.
    assert_eq!(
        g.rows,
        [
            row(&[
                "storage.ext4.sync.bs4096",
                "30.0",
                "301",
                "3.000",
                "1.000",
                "90.00 ± 0.15",
                "30.00 ± 0.15",
                "43.6",
                "—"
            ]),
            row(&[
                "memory",
                "15.0",
                "151",
                "4.000",
                "2.000",
                "60.00 ± 0.30",
                "30.00 ± 0.30",
                "—",
                "—"
            ]),
            row(&[
                "random.ext4.read.qd1",
                "0.500",
                "6",
                "—",
                "—",
                "no figure [1]",
                "—",
                "—",
                "—"
            ]),
            row(&[
                "network.usb0.tcp.board-to-host",
                "15.0",
                "151",
                "3.500",
                "1.500",
                "52.50 ± 0.23",
                "22.50 ± 0.23",
                "—",
                "6.56"
            ]),
        ]
    );
    // The passes fold under their cell: 30 J over 1 GiB each way; the 0.5 s write has
    // no figure.
    let p = pass_grid(rep, &mut Reasons::default()).unwrap();
    assert_eq!(
        p.rows,
        [row(&[
            "storage.ext4.sync.bs4096",
            "1 of 2",
            "30.0",
            "1 of 1",
            "30.0"
        ])]
    );
    let i = idle_grid(rep, &mut Reasons::default());
    assert_eq!(
        i.rows,
        [
            row(&[
                "radios-off",
                "20.0",
                "201",
                "2.000",
                "0.000",
                "40.000 ± 0.000"
            ]),
            row(&[
                "link usb0",
                "10.0",
                "101",
                "2.500",
                "0.500",
                "25.000 ± 0.075"
            ]),
        ]
    );
    // No counter, no note left to say; the trace starts on a powered board, so no
    // power-on: the section ends with that, in words.
    let Some(Block::List(tail)) = doc(&e).blocks.last().cloned() else {
        panic!("{:?}", doc(&e).blocks.last())
    };
    assert_eq!(
        tail,
        [
            "[1] no figure: shorter than 10 samples of this meter (10 samples/s)",
            "power-on: not shown: the trace starts with the board already drawing 2.000 W: \
             start the meter before powering the board"
        ]
    );
}

#[test]
fn a_pass_cell_without_any_figure_gives_the_reason() {
    let mut r = fixture::results();
    // Every pass 0.5 s: none has ten samples.
    for m in &mut r.storage {
        m.nanos = 500_000_000;
    }
    let e = Energy::of(fixture::trace(), "t".into(), &r);
    let mut reasons = Reasons::default();
    let p = pass_grid(report(&e), &mut reasons).unwrap();
    assert_eq!(p.rows[0][1], "0 of 2");
    assert_eq!(p.rows[0][2], "no figure [1]");
    // Every pass's reason is the same sentence but for its length: one note.
    assert_eq!(
        reasons.lines(),
        ["[1] no figure: shorter than 10 samples of this meter (10 samples/s)"]
    );
}

#[test]
fn the_counter_is_set_beside_the_traces_integral() {
    let mut t = fixture::trace();
    t.counter_j = Some((1000.0, 1450.0));
    let e = Energy::of(t, "t".into(), &fixture::results());
    let rep = report(&e);
    assert!((rep.trace_j - 410.04).abs() < 1e-6, "{}", rep.trace_j);
    assert_eq!(
        counter_line(rep).unwrap(),
        "the meter's own counter: 450 J from its first reading to its last; the trace's \
         integral over the same span: 410 J (-8.9 %)"
    );
    assert!(doc(&e).text().contains("the meter's own counter: 450 J"));
}

#[test]
fn an_emulated_trace_is_marked_in_every_rendering() {
    let mut t = fixture::trace();
    t.emulated = true;
    let e = Energy::of(t, "t".into(), &fixture::results());
    assert!(headline(&e).starts_with("EMULATED: idle 2.000"));
    let d = doc(&e);
    assert_eq!(d.blocks[0], Block::Heading("Energy (EMULATED)".into()));
    assert_eq!(d.blocks[1], Block::Alert(EMULATED_METER.into()));
    assert!(d.markdown().contains("> **EMULATED ENERGY: "));
    // A real meter on a QEMU run: the run's words.
    let mut r = fixture::results();
    r.emulated = true;
    let e = Energy::of(fixture::trace(), "t".into(), &r);
    assert_eq!(doc(&e).blocks[1], Block::Alert(EMULATED_RUN.into()));
    assert!(headline(&e).starts_with("EMULATED: "));
    // Neither: no mark.
    assert!(!doc(&board()).text().contains("EMULATED"));
}

#[test]
fn a_hostile_meter_name_is_escaped() {
    let mut t = fixture::trace();
    t.meter = "evil\u{1b}[2J\u{7}meter\u{202e}".into();
    t.position = Some("on\u{1b}]0;title\u{7} the bench".into());
    let e = Energy::of(t, "t".into(), &fixture::results());
    let d = doc(&e);
    for out in [d.text(), d.markdown(), crate::html::page(&d).unwrap()] {
        assert!(!out.contains('\u{1b}') && !out.contains('\u{7}') && !out.contains('\u{202e}'));
        assert!(out.contains("evil\\u{1b}[2J\\u{7}meter\\u{202e}"), "{out}");
    }
}

#[test]
fn sync_patterns_give_the_offset_and_each_patterns_correlation() {
    let t = fixture::trace_with(Clock::Own, 1000.0, 1.0);
    let e = Energy::of(t, "t".into(), &fixture::results());
    let line = alignment_line(report(&e));
    assert!(
        line.starts_with(
            "alignment: by 2 sync patterns: offset 1000.000 s, skew 0.0 ppm, error ± "
        ),
        "{line}"
    );
    assert!(line.contains("; `start` correlation 0.99"), "{line}");
    assert!(line.contains(", `end` correlation 0.99"), "{line}");
    let f = report(&e).steps[0].figure.as_ref().unwrap();
    assert!((f.energy_j - 90.0).abs() <= f.uncertainty_j, "{f:?}");
}

#[test]
fn a_trace_that_does_not_align_says_why_and_the_report_renders_the_rest() {
    // A flat trace on its own clock: no sync pattern in it.
    let t = fixture::trace_with(Clock::Own, 1000.0, 0.0);
    let r = fixture::results();
    let e = Energy::of(t, "t".into(), &r);
    let why = e.report.as_ref().unwrap_err();
    assert!(
        why.starts_with("sync pattern `start` not found in the power trace: "),
        "{why}"
    );
    let d = doc(&e);
    assert_eq!(
        d.blocks.last(),
        Some(&Block::Alert(format!(
            "NO ENERGY FIGURES: the trace could not be tied to the run's steps: {why}"
        )))
    );
    assert!(headline(&e).starts_with("no energy figures: the trace is not aligned (below)"));
    let text = crate::render::document_full(&r, Some(&e), &[]).text();
    assert!(text.contains("\nEnergy\n") && text.contains("NO ENERGY FIGURES"));
    assert!(
        text.contains("\nWarnings\n"),
        "the rest of the report is there"
    );
    // No figure to draw without board time.
    assert!(crate::plot::power::energy_figure(&e, &r).is_none());
}

#[test]
fn the_html_page_holds_the_section_and_its_plot_with_the_steps() {
    let r = fixture::results();
    let e = board();
    let page = crate::report::render_with(&r, Some(&e), crate::report::Format::Html).unwrap();
    assert!(page.contains(">Energy</h2>"));
    let at = page.find(">Energy</h2>").unwrap();
    let svg = page[at..]
        .find("<svg")
        .expect("the power plot after the section");
    assert!(
        page[at + svg..].contains("storage.ext4.sync.bs"),
        "a band per step, labelled"
    );
    assert!(page.len() < 1 << 20, "{} bytes", page.len());
    let f = crate::plot::power::energy_figure(&e, &r).unwrap();
    // Board time: the first band is the first step's, at 50-80 s.
    let b = &f.panels[0].bands[0];
    assert_eq!(
        (b.label.as_str(), b.x0, b.x1),
        ("storage.ext4.sync.bs4096", 50.0, 80.0)
    );
    let first = f.panels[0].series[0].points[0].x;
    assert!((0.0..0.2).contains(&first), "{first}");
    // Without a trace the report is as it was.
    assert_eq!(
        crate::report::render_with(&r, None, crate::report::Format::Table).unwrap(),
        crate::report::render(&r, crate::report::Format::Table).unwrap()
    );
}

#[test]
fn power_show_prints_the_section_and_refuses_a_trace_that_does_not_align() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("run.json");
    std::fs::write(&results, fixture::results().to_json()).unwrap();
    let good = dir.path().join("good.json");
    trace_file::write(&good, &fixture::trace()).unwrap();
    let text = super::super::show::text(&results, &good).unwrap();
    assert!(text.starts_with("\nEnergy\nidle 2.000 ± 0.000 W"), "{text}");
    let flat = dir.path().join("flat.json");
    trace_file::write(&flat, &fixture::trace_with(Clock::Own, 1000.0, 0.0)).unwrap();
    let e = format!(
        "{:#}",
        super::super::show::text(&results, &flat).unwrap_err()
    );
    assert!(
        e.starts_with(&format!(
            "{} cannot be tied to the steps of {} (run run-e): sync pattern `start` not found \
             in the power trace: ",
            flat.display(),
            results.display()
        )),
        "{e}"
    );
    assert!(e.ends_with("give the trace recorded during this run (its meter must see the run's sync patterns, or its recorder the board's console)"), "{e}");
}
