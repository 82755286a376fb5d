//! The storage latency and throughput-over-time figures (schema 1.14): per filesystem
//! target, p50, p99 and the longest call against block size (one panel per mode asked
//! and direction; the HTML page offers a log10 y axis, since a 4 MiB call takes a
//! thousand times an 8 B one), and MiB/s per interval of every pass long enough to
//! show a fall (an SD card's SLC cache filling, a stall). Documents without latency or
//! timelines get neither figure.

use benchboot_plan::Mode;
use benchboot_results::latency::{interval_rates, IntervalRate};
use benchboot_results::{Direction, RunResults, StorageMeasurement};

use crate::chart::{emulated_prefix, file_stem, Chart, FigureSection, PlotFigure, Point, Series};
use crate::chart::{XAxis, YScale};
use crate::plot::direction_title;
use crate::render::latency::cell_latency;
use crate::render::target_labels;
use crate::units::block_size_label;

/// A pass shows its throughput over time when it lasted at least this long, ns (2 s: at
/// the recorder's first interval of 250 ms that is 8 intervals; a shorter pass is one
/// figure, its MiB/s in the tables).
pub const TIMELINE_MIN_NS: u64 = 2_000_000_000;

/// …and its timeline has at least this many points (intervals).
pub const TIMELINE_MIN_POINTS: usize = 4;

/// µs of `ns`, as the latency charts' y axis reads.
fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// One panel of `target`: p50, p99 and max per call against block size (log2 x), for
/// `mode` and `dir`; `None` when no cell has latency.
pub fn latency_chart(r: &RunResults, target: &str, mode: Mode, dir: Direction) -> Option<Chart> {
    let cells: Vec<(f64, benchboot_results::latency::Percentiles)> = r
        .plan
        .storage
        .block_sizes
        .iter()
        .filter_map(|&bs| {
            let l = cell_latency(r, target, bs, dir, mode)?;
            Some(((bs as f64).log2(), l.percentiles()))
        })
        .collect();
    if cells.is_empty() {
        return None;
    }
    let series = |label: &str, pick: fn(&benchboot_results::latency::Percentiles) -> u64| Series {
        label: label.into(),
        points: cells
            .iter()
            .map(|(x, p)| Point::single(*x, us(pick(p))))
            .collect(),
    };
    Some(Chart {
        title: format!("{}, mode {}", direction_title(dir), mode.name()),
        x_desc: "block size (log2 scale)".into(),
        y_desc: "µs per call".into(),
        x_axis: XAxis::Log2Bytes,
        y_max: None,
        legend_right: false,
        bands: Vec::new(),
        series: vec![
            series("p50", |p| p.p50_ns),
            series("p99", |p| p.p99_ns),
            series("max", |p| p.max_ns),
        ],
    })
}

/// `<run>-latency-<target>` per target with latency: one panel per mode asked and
/// direction, in the plan's order.
pub fn latency_figures(r: &RunResults) -> Vec<PlotFigure> {
    let stem = file_stem(&r.run_id);
    let pre = emulated_prefix(r.emulated);
    let mut out = Vec::new();
    for target in target_labels(r) {
        let panels: Vec<Chart> = r
            .plan
            .storage
            .modes
            .iter()
            .flat_map(|&m| [(m, Direction::Write), (m, Direction::Read)])
            .filter_map(|(m, d)| latency_chart(r, target, m, d))
            .collect();
        if panels.is_empty() {
            continue;
        }
        out.push(PlotFigure {
            stem: format!("{stem}-latency-{}", file_stem(target)),
            title: format!(
                "{pre}{}: latency per call by block size, {target} (p50, p99, max)",
                r.board
            ),
            columns: panels.len().min(2),
            panels,
            section: FigureSection::Storage,
            y_scale: YScale::Log,
        });
    }
    out
}

/// Whether pass `m` shows its throughput over time ([`TIMELINE_MIN_NS`],
/// [`TIMELINE_MIN_POINTS`]).
pub fn has_timeline(m: &StorageMeasurement) -> bool {
    m.nanos >= TIMELINE_MIN_NS && m.timeline.len() >= TIMELINE_MIN_POINTS
}

/// The series of one pass: MiB/s over each interval at the interval's end, s. The last
/// point is the pass's end, after the write's closing fsync(2): an interval shorter than
/// half the one before it (the flush alone, a few ms with no call in it) joins that one,
/// or the plot would show a fall to 0 MiB/s that no block saw.
pub fn timeline_series(m: &StorageMeasurement) -> Series {
    let mut rates = interval_rates(&m.timeline);
    if let [.., a, b] = rates.as_slice() {
        if (b.end_ns - b.start_ns) * 2 < a.end_ns - a.start_ns {
            let (start_ns, end_ns, bytes) = (a.start_ns, b.end_ns, a.bytes + b.bytes);
            rates.pop();
            if let Some(last) = rates.last_mut() {
                *last = IntervalRate {
                    start_ns,
                    end_ns,
                    bytes,
                    mib_per_s: benchboot_results::mib_per_s(bytes, end_ns - start_ns),
                };
            }
        }
    }
    Series {
        label: format!("{}, r{}", block_size_label(m.block_size), m.repetition),
        points: rates
            .iter()
            .map(|i| Point::single(i.end_ns as f64 / 1e9, i.mib_per_s))
            .collect(),
    }
}

/// `<run>-timeline-<target>` per target with a pass long enough ([`has_timeline`]): one
/// panel per mode asked and direction, a line per such pass (block size, repetition).
pub fn timeline_figures(r: &RunResults) -> Vec<PlotFigure> {
    let stem = file_stem(&r.run_id);
    let pre = emulated_prefix(r.emulated);
    let mut out = Vec::new();
    for target in target_labels(r) {
        let mut panels = Vec::new();
        for &mode in &r.plan.storage.modes {
            for dir in [Direction::Write, Direction::Read] {
                let series: Vec<Series> = r
                    .storage
                    .iter()
                    .filter(|m| {
                        m.target == target
                            && m.requested_mode == mode
                            && m.direction == dir
                            && has_timeline(m)
                    })
                    .map(timeline_series)
                    .collect();
                if series.is_empty() {
                    continue;
                }
                panels.push(Chart {
                    title: format!("{}, mode {}", direction_title(dir), mode.name()),
                    x_desc: "seconds into the pass".into(),
                    y_desc: "MiB/s (2^20 B/s) per interval".into(),
                    x_axis: XAxis::Linear,
                    y_max: None,
                    legend_right: true,
                    bands: Vec::new(),
                    series,
                });
            }
        }
        if panels.is_empty() {
            continue;
        }
        out.push(PlotFigure {
            stem: format!("{stem}-timeline-{}", file_stem(target)),
            title: format!(
                "{pre}{}: throughput over time of the passes longer than 2 s, {target}",
                r.board
            ),
            columns: 1,
            panels,
            section: FigureSection::Storage,
            y_scale: YScale::Linear,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::latency::tests::latency_run;
    use benchboot_results::latency::TimelinePoint;

    /// The made-up run's ext4 cells (4 KiB: p50 1 ms, p99 50 ms; 64 KiB: 2 ms, 8 ms):
    /// one figure for ext4, its write panel with p50/p99/max in µs at log2 of the block
    /// size; vfat has no latency, no figure.
    #[test]
    fn latency_figure_plots_p50_p99_and_max_by_block_size() {
        let r = latency_run();
        let figs = latency_figures(&r);
        let stems: Vec<&str> = figs.iter().map(|f| f.stem.as_str()).collect();
        assert_eq!(stems, ["run-l-latency-ext4"]);
        let w = &figs[0].panels[0];
        assert_eq!(w.title, "Write, mode direct");
        let got: Vec<(&str, Vec<(f64, f64)>)> = w
            .series
            .iter()
            .map(|s| {
                (
                    s.label.as_str(),
                    s.points.iter().map(|p| (p.x, p.y)).collect(),
                )
            })
            .collect();
        let p = |ns: u64| {
            benchboot_results::latency::bucket_value(benchboot_results::latency::bucket_of(ns))
                as f64
                / 1e3
        };
        assert_eq!(
            got,
            [
                ("p50", vec![(12.0, p(1_000_000)), (16.0, p(2_000_000))]),
                // Each p99 is the slowest call's bucket, held at that call (the exact max).
                ("p99", vec![(12.0, 50_000.0), (16.0, 8_000.0)]),
                ("max", vec![(12.0, 50_000.0), (16.0, 8_000.0)]),
            ]
        );
        // Latency spans decades: log10 in the files and on the page, never linear.
        assert_eq!(figs[0].y_scale, YScale::Log);
        let dir = tempfile::tempdir().unwrap();
        let files = crate::plot::write_figures(dir.path(), &figs[..1]).unwrap();
        let svg = std::fs::read_to_string(&files[1]).unwrap();
        assert!(svg.contains("µs per call (log10 scale)"), "{svg}");
    }

    /// A 3 s pass with 12 points gets a timeline; a 1 s pass and one without points do
    /// not; the MiB/s per interval come from the results crate (4 MiB per 250 ms = 16).
    #[test]
    fn timeline_figure_has_only_the_long_passes() {
        let r = latency_run();
        let figs = timeline_figures(&r);
        assert_eq!(figs.len(), 1);
        assert_eq!(figs[0].stem, "run-l-timeline-ext4");
        let panel = &figs[0].panels[0];
        assert_eq!(panel.series.len(), 1);
        let s = &panel.series[0];
        assert_eq!(s.label, "64 KiB, r0");
        assert_eq!(s.points.len(), 12);
        assert_eq!((s.points[0].x, s.points[0].y), (0.25, 16.0));
        // The fall halfway: 4 MiB/s over the last six intervals.
        assert_eq!((s.points[11].x, s.points[11].y), (3.0, 4.0));
        // The pass's end 20 ms after the last boundary, after the flush, with no call in
        // it: no fall to 0 MiB/s, the flush joins the last interval (4 MiB in 270 ms).
        let mut m = r.storage[2].clone();
        let last = *m.timeline.last().unwrap();
        m.timeline.push(TimelinePoint {
            end_ns: last.end_ns + 20_000_000,
            bytes: last.bytes,
        });
        let s = timeline_series(&m);
        assert_eq!(s.points.len(), 12);
        let p = s.points[11];
        assert_eq!(p.x, 3.02);
        assert!((p.y - 1.0 / 0.27).abs() < 1e-9, "{p:?}");
    }
}
