//! The whole-card pass (`benchboot probe --full`, a plan's `[card-check] full`) in the
//! host's output: its lines ([`lines`]), its speed profile as a figure
//! ([`profile_figure`]), its section of a report ([`report_blocks`]) and the profiles
//! of several runs overlaid ([`compare_figure`]). On every platform: a report of a
//! board's run or of a probe made elsewhere reads anywhere.

use benchboot_probe::full::{FullReport, Interval};
use benchboot_results::text::escape;
use benchboot_results::RunResults;

use crate::chart::{Chart, FigureSection, PlotFigure, Point, Series, XAxis, YScale};
use crate::doc::Block;

/// The whole-card pass as `benchboot probe --full` prints it, one line per fact: the
/// texts a document carries (the stop's reason, I/O errors) escaped to one line each
/// ([`benchboot_results::text::escape`]).
pub fn lines(f: &FullReport) -> String {
    use benchboot_probe::{human, human_offset};
    // The summary and the errors quote the device or a document: one line each.
    let mut s = format!("{}\n", escape(&f.summary()));
    let ms = |ns: u64| {
        let ms = ns as f64 / 1e6;
        if ms < 10.0 {
            format!("{ms:.2} ms")
        } else {
            format!("{ms:.1} ms")
        }
    };
    let speeds = |p: &[Interval]| {
        let mut v: Vec<f64> = p.iter().map(Interval::mib_s).collect();
        v.sort_by(f64::total_cmp);
        match (v.first(), v.get(v.len() / 2), v.last()) {
            (Some(lo), Some(mid), Some(hi)) => {
                format!("{lo:.1} / {mid:.1} / {hi:.1} MiB/s (lowest / median / highest)")
            }
            _ => "-".into(),
        }
    };
    s += &format!(
        "intervals     {} each, I/O {} at a time\n",
        human(f.interval_bytes),
        human(f.io_bytes)
    );
    s += &format!("write speed   {}\n", speeds(&f.write_profile));
    s += &format!("read speed    {}\n", speeds(&f.read_profile));
    if f.falls.is_empty() {
        s += "falls         none: the write speed held across the card\n";
    }
    for (i, x) in f.falls.iter().enumerate() {
        // In bytes written since the card was opened (the quick probe's included) when
        // they were counted; an older document has the position in the pass alone.
        let cache = f.cache_words(x, i == 0).map_or_else(
            || " into the pass (what was written before it was not counted)".to_owned(),
            |w| format!(" into the pass: {w}"),
        );
        s += &format!(
            "falls at      {}: {:.1} -> {:.1} MiB/s{cache}\n",
            human_offset(x.at.saturating_sub(f.region.0)),
            x.before_mib_s,
            x.after_mib_s
        );
    }
    if let Some(w) = f.idle_words() {
        s += &format!("idle          {}\n", w.trim_start_matches("idle "));
    }
    if let Some(w) = f.idle_check_words() {
        s += &format!("idle pause    {w}\n");
    }
    for l in f.write_latency.iter().chain(&f.latency_by_size) {
        s += &format!(
            "write latency {:>8} writes of {:>9}: p50 {}, p99 {}, p99.9 {}, longest {} at {}\n",
            l.count,
            human(l.io_bytes),
            ms(l.p50_ns),
            ms(l.p99_ns),
            ms(l.p999_ns),
            ms(l.max_ns),
            human_offset(l.max_at)
        );
    }
    if let Some(why) = &f.latency_stopped {
        s += &format!(
            "              (the latency sampling stopped: {})\n",
            escape(why)
        );
    }
    if !f.latency_by_size.is_empty() {
        s += "              (the smaller sizes: chunks spread over the card written again once \
              it was verified, its cache full)\n";
    }
    s += &format!("stalls        {}", f.stall_count);
    if f.stall_count > 0 {
        s += " (a write twice its neighbours' median and 100 ms over it)";
    }
    s += "\n";
    for x in f.stalls.iter().take(8) {
        s += &format!(
            "  {:>24}  {} (+{})\n",
            human_offset(x.at),
            ms(x.ns),
            ms(x.excess_ns)
        );
    }
    if f.bad_region_count > 0 {
        s += &format!(
            "bad regions   {} ({} bad, {} held their data)\n",
            f.bad_region_count,
            human(f.bad_bytes),
            human(f.good_bytes)
        );
        for r in f.bad.iter().take(8) {
            s += &format!(
                "  {}..{}  {}\n",
                human_offset(r.start),
                human_offset(r.end),
                escape(&r.found.describe())
            );
        }
    }
    s
}

/// The x axis of profiles over regions of up to `span` bytes: MiB, or GiB from 4 GiB.
fn axis(span: u64) -> (&'static str, f64) {
    if span >= 4 << 30 {
        ("GiB", (1u64 << 30) as f64)
    } else {
        ("MiB", (1u64 << 20) as f64)
    }
}

/// A profile as points: (offset from the region's start in `div` bytes, MiB/s).
fn points(f: &FullReport, p: &[Interval], div: f64) -> Vec<Point> {
    p.iter()
        .map(|i| Point::single(i.offset.saturating_sub(f.region.0) as f64 / div, i.mib_s()))
        .filter(|p| p.y.is_finite())
        .collect()
}

fn span(f: &FullReport) -> u64 {
    f.region.1.saturating_sub(f.region.0)
}

/// The speed profile as a figure (`probe-profile`): write and read MiB/s against the
/// offset (MiB, or GiB from 4 GiB).
pub fn profile_figure(f: &FullReport) -> PlotFigure {
    let (unit, div) = axis(span(f));
    let series = |label: String, p: &[Interval]| Series {
        label,
        points: points(f, p, div),
    };
    PlotFigure {
        stem: "probe-profile".into(),
        title: format!(
            "benchboot probe --full: {} of {}",
            benchboot_probe::human(f.written_bytes),
            benchboot_probe::human(f.claimed_bytes)
        ),
        panels: vec![Chart {
            title: "speed across the card".into(),
            x_desc: format!("offset written, {unit}"),
            y_desc: "MiB/s".into(),
            x_axis: XAxis::Linear,
            y_max: None,
            legend_right: true,
            bands: Vec::new(),
            series: vec![
                series(
                    format!("write, {} at a time", benchboot_probe::human(f.io_bytes)),
                    &f.write_profile,
                ),
                series("read back".into(), &f.read_profile),
            ],
        }],
        columns: 1,
        section: FigureSection::Storage,
        y_scale: YScale::Linear,
    }
}

/// The whole-card pass of run `r`, when it has one.
pub fn pass(r: &RunResults) -> Option<&FullReport> {
    r.card_check.as_ref()?.report.full.as_ref()
}

/// A run's whole-card section of a report: a heading, then the pass's [`lines`] (empty
/// when the run has no pass).
pub fn report_blocks(r: &RunResults) -> Vec<Block> {
    let Some(f) = pass(r) else {
        return Vec::new();
    };
    let device = r.card_check.as_ref().map_or("", |c| c.device.as_str());
    vec![
        Block::Heading(format!("The whole card: {}", escape(device))),
        Block::Pre(lines(f).lines().map(str::to_owned).collect()),
    ]
}

/// A run's profile figure for its report (`<run>-card-profile`), titled with the board.
pub fn report_figure(r: &RunResults) -> Option<PlotFigure> {
    let f = pass(r)?;
    let mut fig = profile_figure(f);
    fig.stem = crate::chart::file_stem(&format!("{}-card-profile", r.run_id));
    fig.title = format!(
        "{}{}: the whole card, {} written of {}",
        crate::chart::emulated_prefix(r.emulated),
        r.board,
        benchboot_probe::human(f.written_bytes),
        benchboot_probe::human(f.claimed_bytes)
    );
    Some(fig)
}

/// The label of an entry's series in a comparison's plots: `A: <name>`, marked when
/// emulated.
pub fn series_label(letter: &str, name: &str, emulated: bool) -> String {
    format!(
        "{letter}: {name}{}",
        if emulated { " (EMULATED)" } else { "" }
    )
}

/// The whole-card profiles of a comparison overlaid (`compare-card-profile`): a write
/// and a read panel, a series per run with a pass, against the offset from each
/// region's start; `None` without passes.
pub fn compare_figure(passes: &[(String, FullReport)], emulated: bool) -> Option<PlotFigure> {
    let widest = passes.iter().map(|(_, f)| span(f)).max()?;
    let (unit, div) = axis(widest);
    let panel = |title: &str, read: bool| Chart {
        title: title.into(),
        x_desc: format!("offset, {unit}"),
        y_desc: "MiB/s".into(),
        x_axis: XAxis::Linear,
        y_max: None,
        legend_right: false,
        bands: Vec::new(),
        series: passes
            .iter()
            .map(|(label, f)| Series {
                label: label.clone(),
                points: points(
                    f,
                    if read {
                        &f.read_profile
                    } else {
                        &f.write_profile
                    },
                    div,
                ),
            })
            .collect(),
    };
    Some(PlotFigure {
        stem: "compare-card-profile".into(),
        title: format!(
            "{}compare: the whole card, speed across it",
            crate::chart::emulated_prefix(emulated)
        ),
        panels: vec![panel("write", false), panel("read back", true)],
        columns: 2,
        section: FigureSection::Storage,
        y_scale: YScale::Linear,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchboot_results::{CardCheck, SystemInfo};

    const MIB: u64 = 1 << 20;

    /// A run whose card check holds a whole-card pass over 64 MiB that writes at
    /// `fast` MiB/s up to `knee` MiB and at 4 MiB/s after.
    fn run(id: &str, knee: u64, fast: u64) -> RunResults {
        let mut r = RunResults::new(
            id.into(),
            benchboot_plan::Plan::example(),
            SystemInfo::default(),
        );
        r.emulated = false;
        let report = benchboot_probe::fake::probed_in_full(
            64 * MIB,
            knee * MIB,
            fast * MIB,
            4 * MIB,
            20 * MIB,
        );
        r.card_check = Some(CardCheck {
            device: "/dev/sdb".into(),
            report,
        });
        r
    }

    #[test]
    fn a_report_has_the_pass_and_its_profile() {
        let r = run("card-a", 16, 40);
        let doc = crate::render::document_with_figures(&r, &crate::plot::report_figures(&r));
        let text = doc.text();
        assert!(text.contains("The whole card: /dev/sdb"), "{text}");
        assert!(
            text.contains("falls at      16.0 MiB (16768000): 40.0 -> 4.0 MiB/s"),
            "{text}"
        );
        assert!(text.contains("writes of   4.0 KiB: p50 0.98 ms"), "{text}");
        let figs = crate::plot::report_figures(&r);
        let f = figs
            .iter()
            .find(|f| f.stem == "card-a-card-profile")
            .unwrap_or_else(|| panic!("{:?}", figs.iter().map(|f| &f.stem).collect::<Vec<_>>()));
        let write = &f.panels[0].series[0];
        // 200 intervals of 655 sectors and the 72 sectors left over.
        assert_eq!(write.points.len(), 201);
        assert!(
            (write.points[0].y - 40.0).abs() < 0.01,
            "{:?}",
            write.points[0]
        );
        assert!(
            (write.points[200].y - 4.0).abs() < 0.01,
            "{:?}",
            write.points[200]
        );
        // No pass, no section and no figure.
        let mut bare = r.clone();
        bare.card_check = None;
        assert!(report_blocks(&bare).is_empty());
        assert!(report_figure(&bare).is_none());
    }

    /// The fall in bytes written since the card was opened, the idle gaps and the idle
    /// pause's sentence, in the lines and the context line; a document without the
    /// count says so.
    #[test]
    fn the_fall_in_bytes_written_with_the_idle_gaps() {
        let mut r = run("card-a", 16, 40);
        let old = lines(r.card_check.as_ref().unwrap().report.full.as_ref().unwrap());
        assert!(
            old.contains(
                "falls at      16.0 MiB (16768000): 40.0 -> 4.0 MiB/s into the pass (what was \
                 written before it was not counted)\n"
            ),
            "{old}"
        );
        assert!(!old.contains("idle          "), "{old}");
        let f = r.card_check.as_mut().unwrap().report.full.as_mut().unwrap();
        f.falls[0].written_at = Some(52 * MIB);
        f.before = Some(benchboot_probe::full::Before {
            written_bytes: 36 * MIB,
            first_write_after_open_ns: Some(0),
            idle_ns: 400_000_000,
            since_open: false,
        });
        let text = lines(f);
        for want in [
            "falls at      16.0 MiB (16768000): 40.0 -> 4.0 MiB/s into the pass: the fast cache \
             ends after 52.0 MiB written (36.0 MiB by the quick probe, 16.0 MiB into the full \
             pass)\n",
            "idle          0.00 s from opening the card to the quick probe's first write (before \
             that: unknown), 0.40 s from the quick probe's last write to the full pass\n",
            "idle pause    what an idle pause gives back was not measured: the pass began 0.40 s \
             after the last write before it",
        ] {
            assert!(text.contains(want), "{want}\n---\n{text}");
        }
        let line = crate::context::card_check_line(&r).unwrap();
        assert!(
            line.ends_with(
                "; write speed falls at 16.0 MiB: 40.0 -> 4.0 MiB/s into the pass, the fast \
                 cache ends after 52.0 MiB written (36.0 MiB by the quick probe, 16.0 MiB into \
                 the full pass) (0.40 s idle before the pass)"
            ),
            "{line}"
        );
    }

    /// A document's texts (the device, the stop's reason, an I/O error) cannot start a
    /// line of their own in the report, nor in the context line.
    #[test]
    fn a_documents_texts_stay_on_their_line() {
        let mut r = run("card-a", 16, 40);
        let c = r.card_check.as_mut().unwrap();
        c.device = "/dev/sdb\nfull pass: every sector held its data".into();
        let f = c.report.full.as_mut().unwrap();
        f.stopped = Some("x\nFORGED LINE\u{1b}[2J".into());
        f.latency_stopped = Some("y\nFORGED TOO".into());
        let text = crate::render::document(&r).text();
        for l in text.lines() {
            assert!(
                !l.starts_with("FORGED") && !l.starts_with("full pass: every sector held"),
                "{l}"
            );
        }
        assert!(!text.contains('\u{1b}'));
        assert!(text.contains("x\\u{a}FORGED LINE"), "{text}");
        let line = crate::context::card_check_line(&r).unwrap();
        assert!(!line.contains('\n'), "{line}");
    }

    #[test]
    fn compare_lines_up_two_cards_and_overlays_their_profiles() {
        let a = run("card-a", 16, 40);
        let mut b = run("card-b", 32, 20);
        // Another device name: still the same rows.
        b.card_check.as_mut().unwrap().device = "/dev/mmcblk0".into();
        let c =
            crate::compare::compare(&[("a.json".into(), a), ("b.json".into(), b)], &[]).unwrap();
        let rows: Vec<_> = crate::compare::output::section_rows(&c, crate::figure::Section::Card);
        let get = |dir: &str| {
            let row = rows.iter().find(|r| r.key.direction == dir).unwrap();
            let v = |i: usize| row.cells[i].as_ref().unwrap().median.unwrap();
            (v(0), v(1))
        };
        // Sustained: the speed after the fall, 4 MiB/s on both.
        let (sa, sb) = get("sustained");
        assert!(
            (sa - 4.0).abs() < 0.01 && (sb - 4.0).abs() < 0.01,
            "{sa} {sb}"
        );
        // Average write: 64 MiB in 16/40 + 48/4 s against 32/20 + 32/4 s.
        let (wa, wb) = get("write");
        assert!((wa - 64.0 / (16.0 / 40.0 + 12.0)).abs() < 0.05, "{wa}");
        assert!((wb - 64.0 / (32.0 / 20.0 + 8.0)).abs() < 0.05, "{wb}");
        let (ra, rb) = get("read");
        assert!((ra - 20.0).abs() < 0.01 && (rb - 20.0).abs() < 0.01);
        let figs = crate::compare::output::compare_figures(&c);
        let f = figs
            .iter()
            .find(|f| f.stem == "compare-card-profile")
            .unwrap();
        assert_eq!(f.panels.len(), 2);
        let labels: Vec<&str> = f.panels[0]
            .series
            .iter()
            .map(|s| s.label.as_str())
            .collect();
        assert_eq!(labels, ["A: card-a", "B: card-b"]);
        let n: Vec<usize> = f.panels[1].series.iter().map(|s| s.points.len()).collect();
        assert_eq!(n, [201, 201]);
        let text = crate::compare::output::render(&c, crate::report::Format::Table).unwrap();
        assert!(
            text.contains("write, sustained (after the fast cache)"),
            "{text}"
        );
    }
}
