//! The latency plot: ns per read over L1 against block size (log2 x axis), the single
//! and dual random read series, one panel per page kind; the point is the fastest
//! repeat (tinymembench's figure), the whisker up to the slowest.

use benchboot_results::memory::LatencyTable;
use benchboot_results::RunResults;

use super::{file_stem, Chart, FigureSection, PlotFigure, Point, Series, XAxis, YScale};
use crate::render::memory::{pages_label, repeat_extra_ns};

/// The chart of one latency table: x = log2(block bytes), y = ns over L1.
pub fn latency_chart(t: &LatencyTable) -> Chart {
    let series = |label: &str, dual: bool| Series {
        label: label.into(),
        points: t
            .rows
            .iter()
            .filter_map(|row| {
                let (single, duals) = repeat_extra_ns(t, row);
                let v = if dual { duals } else { single };
                let lo = v.iter().copied().reduce(f64::min)?;
                let hi = v.iter().copied().reduce(f64::max)?;
                Some(Point {
                    x: (row.block_bytes as f64).log2(),
                    y: lo,
                    lo,
                    hi,
                })
            })
            .collect(),
    };
    Chart {
        title: format!("{}, CPU {}", pages_label(t.pages), t.core),
        x_desc: "block size (log2 scale)".into(),
        y_desc: "ns per read over L1".into(),
        x_axis: XAxis::Log2Bytes,
        y_max: None,
        legend_right: false,
        bands: Vec::new(),
        series: vec![
            series("single random read", false),
            series("dual random read (per step)", true),
        ],
    }
}

/// Why an emulated run has no latency plot.
pub const NO_PLOT: &str =
    "EMULATED: QEMU (TCG) models no caches, there is no latency over L1 to plot";

/// The latency figure of a run (`<run>-memory-latency`): one panel per page kind; `None`
/// when the run has no latency table, or is emulated (QEMU's TCG models no caches: the
/// section's text says so where the plot would be,
/// [`crate::render::memory::EMULATED_LATENCY`]).
pub fn memory_figure(r: &RunResults) -> Option<PlotFigure> {
    if r.emulated {
        return None;
    }
    let m = r.memory.as_ref().filter(|m| !m.latency.is_empty())?;
    Some(PlotFigure {
        stem: format!("{}-memory-latency", file_stem(&r.run_id)),
        title: format!(
            "{}: memory latency by block size (tinymembench's method)",
            r.board
        ),
        panels: m.latency.iter().map(latency_chart).collect(),
        columns: 1,
        section: FigureSection::Memory,
        y_scale: YScale::Linear,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::memory::tests::memory_run;

    #[test]
    fn the_latency_plot_has_a_panel_per_page_kind_and_both_series() {
        let r = memory_run();
        let c = latency_chart(&r.memory.as_ref().unwrap().latency[0]);
        assert_eq!(c.series.len(), 2);
        let deep = c.series[0].points[1];
        assert_eq!((deep.x, deep.y, deep.hi), (26.0, 284.0, 296.0));
        assert_eq!(c.series[1].points[1].y, 146.0);
        let dir = tempfile::tempdir().unwrap();
        let files = crate::plot::report_plots(&r, dir.path()).unwrap();
        let names: Vec<String> = files
            .iter()
            .filter_map(|f| f.file_name()?.to_str().map(String::from))
            .filter(|n| n.contains("-memory-"))
            .collect();
        assert_eq!(
            names,
            ["run-mem-memory-latency.png", "run-mem-memory-latency.svg"]
        );
        let svg = std::fs::read_to_string(dir.path().join("run-mem-memory-latency.svg")).unwrap();
        assert!(svg.contains("huge pages (transparent), CPU 0"), "panel");
        assert!(svg.contains("dual random read (per step)"), "legend");
    }
}
