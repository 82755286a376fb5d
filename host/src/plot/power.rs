//! A power trace over a run's board time: watts against seconds on the board's clock,
//! the steps as shaded bands ([`crate::chart::Band`]). The trace is cut to at most
//! [`MAX_POINTS`] points (each the mean of its slice of time, with the slice's lowest and
//! highest reading as its range), so a trace of millions of samples stays a small SVG.

use benchboot_energy::{windows, Trace, WindowKind};
use benchboot_results::RunResults;

use crate::chart::{emulated_prefix, file_stem, Band, Chart, FigureSection, PlotFigure, Point};
use crate::chart::{Series, XAxis, YScale};
use crate::power::energy::Energy;

/// The most points the trace is drawn with.
pub const MAX_POINTS: usize = 600;

/// The samples of `trace` as points on the board's clock (`board_s` maps a trace time
/// to board seconds), at most [`MAX_POINTS`]: equal slices of the trace's span, each the
/// mean of its samples (`y`) with their least and greatest (`lo`, `hi`), at the slice's
/// mean board time. Empty slices give no point.
pub fn points(trace: &Trace, board_s: impl Fn(f64) -> f64) -> Vec<Point> {
    let (Some(first), Some(last)) = (trace.samples.first(), trace.samples.last()) else {
        return Vec::new();
    };
    let span = last.t_s - first.t_s;
    let slices = trace.samples.len().min(MAX_POINTS);
    let mut acc: Vec<(usize, f64, f64, f64, f64)> =
        vec![(0, 0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY); slices];
    for s in &trace.samples {
        let i = if span > 0.0 {
            (((s.t_s - first.t_s) / span * slices as f64) as usize).min(slices - 1)
        } else {
            0
        };
        let a = &mut acc[i];
        a.0 += 1;
        a.1 += board_s(s.t_s);
        a.2 += s.watts;
        a.3 = a.3.min(s.watts);
        a.4 = a.4.max(s.watts);
    }
    acc.into_iter()
        .filter(|a| a.0 > 0)
        .map(|(n, x, y, lo, hi)| Point {
            x: x / n as f64,
            y: y / n as f64,
            lo,
            hi,
        })
        .collect()
}

/// The figure of `trace` over run `run_id`'s board time with `bands` (the steps, board
/// seconds), EMULATED in its title when the trace or the run is.
pub fn figure(
    trace: &Trace,
    board_s: impl Fn(f64) -> f64,
    bands: Vec<Band>,
    run_id: &str,
    emulated: bool,
) -> PlotFigure {
    let title = format!(
        "{}power over run {run_id} (meter {})",
        emulated_prefix(emulated || trace.emulated),
        trace.meter
    );
    PlotFigure {
        stem: format!("{}-power", file_stem(run_id)),
        title,
        panels: vec![Chart {
            title: "power, W (line: mean per slice; bar: lowest to highest reading)".into(),
            x_desc: "board time since boot, s".into(),
            y_desc: "W".into(),
            x_axis: XAxis::Linear,
            y_max: None,
            legend_right: true,
            series: vec![Series {
                label: "power".into(),
                points: points(trace, board_s),
            }],
            bands,
        }],
        columns: 1,
        section: FigureSection::Energy,
        y_scale: YScale::Linear,
    }
}

/// The steps of `r` as bands on board seconds: every step, idle phase and sync pattern
/// (the storage cells' timed passes fall inside their cell and are left out).
pub fn step_bands(r: &RunResults) -> Vec<Band> {
    windows(r)
        .into_iter()
        .filter(|w| w.kind != WindowKind::StoragePass)
        .map(|w| Band {
            label: w.step,
            x0: w.begin_ns as f64 / 1e9,
            x1: w.end_ns as f64 / 1e9,
        })
        .collect()
}

/// The figure of a run's energy section: its trace over the board's clock (board s =
/// (meter s − offset) ÷ rate) with every step, idle phase and sync pattern as a band
/// (the storage cells' timed passes fall inside their cell and are left out). `None`
/// when the trace is not aligned: no board time to draw it on.
pub fn energy_figure(e: &Energy, r: &RunResults) -> Option<PlotFigure> {
    let a = &e.report.as_ref().ok()?.alignment;
    let (offset_s, rate) = (a.offset_s, a.rate);
    Some(figure(
        &e.trace,
        |m| (m - offset_s) / rate,
        step_bands(r),
        &r.run_id,
        e.emulated,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchboot_energy::{Clock, Sample};

    fn trace(n: usize) -> Trace {
        Trace {
            meter: "fake <meter>".into(),
            clock: Clock::Host,
            emulated: false,
            resolution_w: 0.01,
            period_s: 0.01,
            position: None,
            samples: (0..n)
                .map(|i| Sample::watts(100.0 + i as f64 * 0.01, if i % 2 == 0 { 2.0 } else { 4.0 }))
                .collect(),
            counter_j: None,
            console: Vec::new(),
        }
    }

    #[test]
    fn a_long_trace_is_cut_to_slices_with_their_range() {
        let t = trace(60_000);
        let p = points(&t, |s| s - 90.0);
        assert_eq!(p.len(), MAX_POINTS);
        assert!((p[0].y - 3.0).abs() < 1e-9, "{:?}", p[0]);
        assert_eq!((p[0].lo, p[0].hi), (2.0, 4.0));
        // 100 samples per slice, the first at board time 10 s.
        assert!((p[0].x - 10.495).abs() < 1e-9, "{:?}", p[0]);
        let short = points(&trace(3), |s| s);
        assert_eq!(short.len(), 3);
        assert_eq!(
            short[1],
            Point {
                x: 100.01,
                y: 4.0,
                lo: 4.0,
                hi: 4.0
            }
        );
    }

    #[test]
    fn the_svg_shows_the_steps_and_stays_small() {
        let t = trace(1_000_000);
        let bands = vec![
            Band {
                label: "storage sdcard write".into(),
                x0: 1_000.0,
                x1: 5_000.0,
            },
            Band {
                label: "network\u{1b}[31m".into(),
                x0: 6_000.0,
                x1: 9_000.0,
            },
        ];
        let f = figure(&t, |s| s - 90.0, bands, "run-1", true);
        assert!(f.title.starts_with("EMULATED"), "{}", f.title);
        let svg = crate::plot::svg_string(&f, false).unwrap();
        assert!(svg.contains("storage sdcard write"), "no band label");
        assert!(svg.contains("network\\u{1b}[31m"), "the label is escaped");
        assert!(svg.contains("&lt;meter&gt;)"), "the meter is escaped");
        assert!(svg.len() < 200_000, "{} bytes", svg.len());
    }
}
