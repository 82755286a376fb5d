//! What a plot shows, as plain data: [`Chart`]s (panels of [`Series`] of [`Point`]s)
//! grouped into a [`PlotFigure`] with its title and the report section it belongs to.
//! [`crate::plot`] draws them (PNG and SVG files, or an SVG string for an HTML page);
//! [`crate::doc::Block::Figure`] carries one inside a report, so the HTML page
//! ([`crate::html`]) shows each figure beside its tables.

use benchboot_results::Summary;

/// One point in chart units (x: log2 of bytes for [`XAxis::Log2Bytes`]): `y` is the
/// median, `lo`..`hi` the spread drawn as a whisker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub lo: f64,
    pub hi: f64,
}

impl Point {
    /// One value at `x`, no spread.
    pub fn single(x: f64, y: f64) -> Point {
        Point { x, y, lo: y, hi: y }
    }

    /// The median and min–max of `values` at `x`; `None` for no values.
    pub fn of(x: f64, values: &[f64]) -> Option<Point> {
        Summary::of(values).map(|s| Point {
            x,
            y: s.median,
            lo: s.min,
            hi: s.max,
        })
    }
}

/// One line of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<Point>,
}

/// How the x axis reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XAxis {
    /// x is log2(bytes); ticks print as block sizes ("8 B", "4 KiB").
    Log2Bytes,
    /// Plain numbers.
    Linear,
}

/// One panel: a title, axes and its lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub x_axis: XAxis,
    /// Top of the y axis; `None`: fit the data with room for the legend.
    pub y_max: Option<f64>,
    /// Legend in the upper right corner instead of the upper left.
    pub legend_right: bool,
    pub series: Vec<Series>,
    /// Shaded x ranges drawn under the series, each labelled (a run's steps on a power
    /// trace); empty for most charts.
    pub bands: Vec<Band>,
}

/// A shaded x range of a [`Chart`]: `x0` to `x1` (x axis units), `label` written at its
/// top.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    pub label: String,
    pub x0: f64,
    pub x1: f64,
}

/// The report section a figure belongs with (the page puts it after that section's
/// tables).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FigureSection {
    Memory,
    Storage,
    Network,
    /// The energy section: a power trace over the run's steps.
    Energy,
    /// Health over time: clock, temperature and flags over the run's steps.
    Health,
}

/// One figure: `panels` in `columns` columns under `title`, written as `<stem>.png` and
/// `<stem>.svg` by [`crate::plot::write_figures`] or inlined by the HTML page.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotFigure {
    /// File name without extension, already safe ([`file_stem`]).
    pub stem: String,
    /// The title above the panels (EMULATED first for a QEMU run).
    pub title: String,
    pub panels: Vec<Chart>,
    pub columns: usize,
    pub section: FigureSection,
    /// The y axes' scale ([`YScale`]).
    pub y_scale: YScale,
}

/// How a figure's y axes are drawn, in its PNG and SVG files and on the HTML page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YScale {
    /// Linear everywhere.
    Linear,
    /// Linear in the files; the HTML page adds the same on a log10 axis behind a
    /// checkbox (two SVGs). Throughput against block size spans three or four decades
    /// (8 B calls against 4 MiB blocks), yet its linear form is the one read first.
    LinearOrLog,
    /// log10 everywhere (one SVG on the page): latency per call spans decades (a 256 B
    /// call in µs, a 1 MiB one in ms), so on a linear axis all but the largest blocks sit
    /// on zero.
    Log,
}

impl YScale {
    /// Whether the PNG and SVG files draw the y axes on log10.
    pub fn files_log(self) -> bool {
        self == YScale::Log
    }

    /// The SVGs the HTML page inlines for the figure: 2 for [`YScale::LinearOrLog`].
    pub fn page_svgs(self) -> usize {
        if self == YScale::LinearOrLog {
            2
        } else {
            1
        }
    }
}

/// `rpi-zero-w-0123` → safe as a file name, through the one gate for outside names
/// ([`SafeName::lossy`](benchboot_results::name::SafeName::lossy): letters, digits, `-`,
/// `_`, `.`; anything else, a leading `.` or `-`, a trailing `.` as `_`; a Windows
/// device name prefixed): a run id such as `../x`, `.hidden` or `nul` names no other
/// folder, no hidden file and no device.
pub fn file_stem(s: &str) -> String {
    benchboot_results::name::SafeName::lossy(s).to_string()
}

/// The title prefix for an emulated run.
pub fn emulated_prefix(emulated: bool) -> &'static str {
    if emulated {
        "EMULATED (QEMU, not hardware) — "
    } else {
        ""
    }
}
