//! Plots (PNG and SVG, `plotters`): storage throughput against block size (log2 x axis)
//! per filesystem, one file per mode and direction; per-interval network throughput
//! with the board's CPU softirq and system shares, one file per link (gadget function
//! or wired link), one series per run. Text uses DejaVu Sans compiled into
//! the binary (`dejavu` crate, `ab_glyph`), so no system font or fontconfig is needed.
//! The memory latency against block size ([`memory`]). A QEMU run's plots say EMULATED
//! in their title. Every text drawn (titles, axis names, series labels: board names,
//! run ids and target labels from the document) goes through
//! [`benchboot_results::text::escape`], so a control character is drawn as `\u{1b}` and
//! the SVG stays well-formed XML (plotters escapes `<`, `&`, quotes).

use std::path::{Path, PathBuf};
use std::sync::Once;

use anyhow::{anyhow, Context as _, Result};
use benchboot_plan::Mode;
use benchboot_results::text::escape;
use benchboot_results::{Direction, RunResults};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{register_font, FontStyle};

use crate::chart::{emulated_prefix, file_stem};
use crate::render::{
    cell_values, interval_mbits, link_description, net_direction_label, network_links,
    target_labels,
};
use crate::units::block_size_label;

pub mod health;
pub mod latency;
pub mod memory;
pub mod power;

use crate::chart::{Band, Chart, FigureSection, PlotFigure, Point, Series, XAxis, YScale};

/// The most points a series is drawn with a dot on each.
const DOTS_UP_TO: usize = 200;

/// Font family name the plots use (registered once from the bundled DejaVu Sans).
const FONT: &str = "sans-serif";

/// The smallest font size a plot's text is given (tick labels, legends, step bands), in
/// plotters' units: its SVG writes `font-size` as this ÷ 1.24, so 14 is 11.3 px at the
/// SVG's own width (the HTML page never draws a plot narrower than that: it scrolls).
pub const SMALL_FONT: u32 = 14;

/// The figure title's font size (plotters' units) and the height of one of its lines, px.
const TITLE_FONT: u32 = 22;
const TITLE_LINE: u32 = 30;

fn fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bundled fonts are valid TrueType files; a failure would only lose text.
        let _ = register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// Colours of series, in order (the "tab10" palette).
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// `chart` with every y, lo and hi as its log10 (points at or below 0 left out, since a
/// log axis has no place for them) and the y axis named so.
pub fn log10_chart(chart: &Chart) -> Chart {
    let mut c = chart.clone();
    c.y_desc = format!("{} (log10 scale)", chart.y_desc);
    c.y_max = None;
    for s in &mut c.series {
        s.points = s
            .points
            .iter()
            .filter(|p| p.y > 0.0)
            .map(|p| Point {
                x: p.x,
                y: p.y.log10(),
                lo: if p.lo > 0.0 { p.lo } else { p.y }.log10(),
                hi: p.hi.max(p.y).log10(),
            })
            .collect();
    }
    c
}

/// A y tick of a log10 axis: 10^y at whole decades ("0.01", "1", "1000"), else no label.
fn decade_label(y: f64) -> String {
    let r = y.round();
    if (y - r).abs() > 1e-6 {
        return String::new();
    }
    let v = 10f64.powi(r as i32);
    if r < 0.0 {
        format!("{v:.*}", (-r) as usize)
    } else {
        format!("{v:.0}")
    }
}

fn draw_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &Chart,
    log_y: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    // A point that is not finite everywhere (a block size of 0 is -inf on a log2 axis; a
    // document can say so) has no place on any axis: it is left out, not drawn as an
    // endless range.
    let mut clean = chart.clone();
    for s in &mut clean.series {
        s.points
            .retain(|p| [p.x, p.y, p.lo, p.hi].iter().all(|v| v.is_finite()));
    }
    let chart = if log_y { log10_chart(&clean) } else { clean };
    let chart = &chart;
    let points = || chart.series.iter().flat_map(|s| s.points.iter());
    let bands: Vec<&Band> = chart
        .bands
        .iter()
        .filter(|b| b.x0.is_finite() && b.x1.is_finite() && b.x1 > b.x0)
        .collect();
    let (mut x0, mut x1) = points()
        .map(|p| (p.x, p.x))
        .chain(bands.iter().map(|b| (b.x0, b.x1)))
        .fold((f64::MAX, f64::MIN), |(a, b), (lo, hi)| {
            (a.min(lo), b.max(hi))
        });
    if x0 > x1 {
        (x0, x1) = (0.0, 1.0);
    }
    if x1 - x0 < 1e-9 {
        x1 = x0 + 1.0;
    }
    let pad = match chart.x_axis {
        XAxis::Log2Bytes => 0.3,
        XAxis::Linear => {
            x0 = x0.min(0.0);
            0.0
        }
    };
    let y1 = points().fold(0.0f64, |m, p| m.max(p.hi).max(p.y));
    // Linear charts get headroom so the legend sits above the lines.
    let headroom = match chart.x_axis {
        XAxis::Log2Bytes => 1.1,
        XAxis::Linear => 1.15 + 0.06 * chart.series.len() as f64,
    };
    let (y0, y1) = if log_y {
        // Whole decades from below the lowest point to above the highest, with room
        // for the legend.
        let lo = points().fold(f64::MAX, |m, p| m.min(p.lo).min(p.y));
        let lo = if lo == f64::MAX { 0.0 } else { lo.floor() };
        let hi = y1.max(lo + 1.0);
        (lo, hi + 0.15 * (hi - lo) + 0.1 * chart.series.len() as f64)
    } else {
        let top = chart
            .y_max
            .unwrap_or(if y1 > 0.0 { y1 * headroom } else { 1.0 });
        (0.0, top)
    };
    let mut c = ChartBuilder::on(area)
        .caption(
            escape(&chart.title),
            (FONT, 18).into_font().style(FontStyle::Bold),
        )
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d((x0 - pad)..(x1 + pad), y0..y1)?;
    // Every tick labelled where there is room (about 56 px per label), else every 2nd...
    let ticks = (x1 - x0).round().max(1.0);
    let step = ((56.0 * ticks / f64::from(area.dim_in_pixel().0.max(1))).ceil()).max(1.0);
    let fmt_x = |x: &f64| -> String {
        match chart.x_axis {
            XAxis::Log2Bytes => {
                let r = x.round();
                if (x - r).abs() < 1e-6
                    && (0.0..63.0).contains(&r)
                    && ((r - x0.round()) % step).abs() < 1e-6
                {
                    block_size_label(1u64 << r as u32)
                } else {
                    String::new()
                }
            }
            XAxis::Linear => format!("{x:.1}"),
        }
    };
    let x_labels = match chart.x_axis {
        XAxis::Log2Bytes => ((x1 - x0).round() as usize + 1).clamp(2, 24),
        XAxis::Linear => 10,
    };
    let fmt_y = |y: &f64| decade_label(*y);
    let mut mesh = c.configure_mesh();
    if log_y {
        mesh.y_labels(((y1 - y0).ceil() as usize + 1).clamp(2, 12))
            .y_label_formatter(&fmt_y);
    }
    mesh.x_desc(escape(&chart.x_desc))
        .y_desc(escape(&chart.y_desc))
        .x_labels(x_labels)
        .x_label_formatter(&fmt_x)
        .label_style((FONT, SMALL_FONT))
        .axis_desc_style((FONT, SMALL_FONT + 2))
        .light_line_style(RGBColor(235, 235, 235))
        // No light lines between the labelled ones: on a log2 axis of 20 block sizes
        // plotters drew some 1,300 of them per panel, most of a comparison page's bytes.
        .max_light_lines(0)
        .draw()?;
    // Bands under the lines, alternately shaded; a label where the band is wide enough
    // for a few characters (about 8 px each).
    let px_per_x = f64::from(area.dim_in_pixel().0) * 0.85 / (x1 - x0 + 2.0 * pad);
    for (i, b) in bands.iter().enumerate() {
        let shade = if i % 2 == 0 {
            RGBColor(210, 225, 245)
        } else {
            RGBColor(235, 225, 245)
        };
        c.draw_series(std::iter::once(Rectangle::new(
            [(b.x0, y0), (b.x1, y1)],
            shade.mix(0.6).filled(),
        )))?;
        let room = ((b.x1 - b.x0) * px_per_x / 8.0) as usize;
        let label: String = escape(&b.label).chars().take(room).collect();
        if room >= 3 {
            c.draw_series(std::iter::once(Text::new(
                label,
                (b.x0, y1 - (y1 - y0) * 0.01),
                (FONT, SMALL_FONT).into_font(),
            )))?;
        }
    }
    for (i, s) in chart.series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let line: Vec<(f64, f64)> = s.points.iter().map(|p| (p.x, p.y)).collect();
        c.draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))?
            .label(escape(&s.label))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        // A dense series (a power trace) is a line: a dot per point would hide it and
        // swell the page.
        if line.len() <= DOTS_UP_TO {
            c.draw_series(line.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
        }
        c.draw_series(
            s.points
                .iter()
                .filter(|p| p.hi > p.lo)
                .map(|p| PathElement::new(vec![(p.x, p.lo), (p.x, p.hi)], color.stroke_width(1))),
        )?;
    }
    if !chart.series.is_empty() {
        c.configure_series_labels()
            .position(if chart.legend_right {
                SeriesLabelPosition::UpperRight
            } else {
                SeriesLabelPosition::UpperLeft
            })
            .label_font((FONT, SMALL_FONT))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
    }
    Ok(())
}

/// `title` in lines of at most `width` px of bold text at [`TITLE_FONT`] (about 0.62 of
/// the font size a character), broken at blanks; a word longer than a line is cut into
/// pieces. Nothing is left out, so nothing is clipped.
pub fn title_lines(title: &str, width: u32) -> Vec<String> {
    let per_line = ((f64::from(width) - 24.0) / (f64::from(TITLE_FONT) * 0.62)).max(8.0) as usize;
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in title.split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        while word.len() > per_line {
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            lines.push(word.drain(..per_line).collect());
        }
        let word: String = word.into_iter().collect();
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > per_line {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

fn draw_all<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: Option<&str>,
    panels: &[Chart],
    columns: usize,
    log_y: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let body = match title {
        Some(title) => {
            let lines = title_lines(&escape(title), root.dim_in_pixel().0);
            let center = root.dim_in_pixel().0 as i32 / 2;
            let style = (FONT, TITLE_FONT)
                .into_font()
                .style(FontStyle::Bold)
                .into_text_style(&root)
                .pos(Pos::new(HPos::Center, VPos::Top));
            for (i, l) in lines.iter().enumerate() {
                root.draw(&Text::new(
                    l.clone(),
                    (center, 8 + (i as u32 * TITLE_LINE) as i32),
                    style.clone(),
                ))?;
            }
            root.split_vertically(16 + lines.len() as u32 * TITLE_LINE)
                .1
        }
        None => root.clone(),
    };
    let cols = columns.clamp(1, panels.len().max(1));
    let rows = panels.len().div_ceil(cols).max(1);
    for (area, chart) in body.split_evenly((rows, cols)).iter().zip(panels) {
        draw_chart(area, chart, log_y)?;
    }
    root.present()
}

/// Pixel size of a figure of `n` panels in `columns` columns, with `title_lines` lines
/// of title above them (0: untitled, the HTML page's heading names it).
fn size(n: usize, columns: usize, title_lines: usize) -> (u32, u32) {
    let cols = columns.clamp(1, n.max(1));
    let rows = n.div_ceil(cols).max(1);
    let title = if title_lines == 0 {
        0
    } else {
        16 + TITLE_LINE as usize * title_lines
    };
    ((560 * cols).max(960) as u32, (title + 420 * rows) as u32)
}

/// The pixel size of `f` drawn with its title, and the title's lines.
fn titled_size(f: &PlotFigure) -> (u32, u32) {
    let width = size(f.panels.len(), f.columns, 0).0;
    let lines = title_lines(&escape(&f.title), width).len();
    size(f.panels.len(), f.columns, lines)
}

/// Draws each figure into `<dir>/<stem>.png` and `.svg` (y axes as its
/// [`YScale::files_log`] says); returns the paths, two per figure.
///
/// # Errors
/// When `dir` is a file, or the folder cannot be created or a file written.
pub fn write_figures(dir: &Path, figures: &[PlotFigure]) -> Result<Vec<PathBuf>> {
    fonts();
    if dir.exists() && !dir.is_dir() {
        anyhow::bail!(
            "--plots {}: is a file, not a folder; name a folder (it is created if missing)",
            dir.display()
        );
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the plot folder {}", dir.display()))?;
    let mut out = Vec::new();
    for f in figures {
        let wh = titled_size(f);
        let png = dir.join(format!("{}.png", f.stem));
        draw_all(
            BitMapBackend::new(&png, wh).into_drawing_area(),
            Some(&f.title),
            &f.panels,
            f.columns,
            f.y_scale.files_log(),
        )
        .map_err(|e| anyhow!("{e}"))
        .with_context(|| format!("drawing {}", png.display()))?;
        out.push(png);
        let svg = dir.join(format!("{}.svg", f.stem));
        let text = svg_string(f, f.y_scale.files_log())?;
        std::fs::write(&svg, text).with_context(|| format!("writing {}", svg.display()))?;
        out.push(svg);
    }
    Ok(out)
}

/// `figure` as one SVG document (UTF-8 text), its title above the panels (wrapped into
/// lines that fit: [`title_lines`]), the y axes linear or, with `log_y`, log10. Text is
/// drawn as `<text>` in the `sans-serif` family, so a browser uses its own font.
///
/// # Errors
/// When plotters fails to draw (it does not for finite data; the error is passed on).
pub fn svg_string(figure: &PlotFigure, log_y: bool) -> Result<String> {
    svg_of(figure, log_y, true)
}

/// [`svg_string`] without the figure's title, for a page whose own heading names it.
///
/// # Errors
/// As [`svg_string`].
pub fn svg_untitled(figure: &PlotFigure, log_y: bool) -> Result<String> {
    svg_of(figure, log_y, false)
}

fn svg_of(figure: &PlotFigure, log_y: bool, titled: bool) -> Result<String> {
    fonts();
    let wh = if titled {
        titled_size(figure)
    } else {
        size(figure.panels.len(), figure.columns, 0)
    };
    let mut out = String::new();
    draw_all(
        SVGBackend::with_string(&mut out, wh).into_drawing_area(),
        titled.then_some(figure.title.as_str()),
        &figure.panels,
        figure.columns,
        log_y,
    )
    .map_err(|e| anyhow!("drawing {}: {e}", figure.stem))?;
    Ok(out)
}

/// "Write" / "Read".
pub fn direction_title(d: Direction) -> &'static str {
    match d {
        Direction::Write => "Write",
        Direction::Read => "Read",
    }
}

/// One chart of throughput against block size for one mode and direction of `r`: a
/// line per target (median, whiskers min–max).
pub fn storage_chart(r: &RunResults, mode: Mode, dir: Direction) -> Chart {
    let series = target_labels(r)
        .into_iter()
        .map(|t| Series {
            label: t.to_owned(),
            points: r
                .plan
                .storage
                .block_sizes
                .iter()
                .filter_map(|&bs| {
                    let (v, _) = cell_values(r, t, bs, dir, mode);
                    Point::of((bs as f64).log2(), &v)
                })
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    Chart {
        title: format!("{}, mode {}", direction_title(dir), mode.name()),
        x_desc: "block size (log2 scale)".into(),
        y_desc: "MiB/s (2^20 B/s)".into(),
        x_axis: XAxis::Log2Bytes,
        y_max: None,
        legend_right: false,
        bands: Vec::new(),
        series,
    }
}

/// Every plot of a report into `dir` ([`report_figures`], each as PNG and SVG).
/// Returns the files written.
///
/// # Errors
/// When a file cannot be written.
pub fn report_plots(r: &RunResults, dir: &Path) -> Result<Vec<PathBuf>> {
    write_figures(dir, &report_figures(r))
}

/// Every figure of a report, in the report's order: `<run>-storage-<mode>-<direction>`
/// per mode and direction, `<run>-latency-<target>` and `<run>-timeline-<target>` per
/// target with latency per call or a pass longer than 2 s ([`latency`]),
/// `<run>-card-profile` for a whole-card pass
/// ([`crate::whole_card::report_figure`]), `<run>-net-<link>` per network link with TCP runs and
/// `<run>-memory-latency`.
pub fn report_figures(r: &RunResults) -> Vec<PlotFigure> {
    let stem = file_stem(&r.run_id);
    let pre = emulated_prefix(r.emulated);
    let mut out = Vec::new();
    out.extend(storage_figures(r, &stem, pre));
    out.extend(latency::latency_figures(r));
    out.extend(latency::timeline_figures(r));
    out.extend(crate::whole_card::report_figure(r));
    // Every link with a TCP run, once each (gadget functions and wired links alike),
    // in the report's order.
    let links: Vec<String> = network_links(&r.network)
        .into_iter()
        .filter(|l| r.network.throughput.iter().any(|t| &t.link == l))
        .collect();
    out.extend(links.iter().map(|link| link_figure(r, link, &stem, pre)));
    out.extend(memory::memory_figure(r));
    out.extend(health::health_figure(r, None));
    out
}

/// One throughput-by-block-size figure per mode and direction the run measured.
fn storage_figures(r: &RunResults, stem: &str, pre: &str) -> Vec<PlotFigure> {
    let mut out = Vec::new();
    for &mode in &r.plan.storage.modes {
        for dir_ in [Direction::Write, Direction::Read] {
            let chart = storage_chart(r, mode, dir_);
            if chart.series.is_empty() {
                continue;
            }
            let title = format!(
                "{pre}{}: {} throughput by block size, mode {}",
                r.board,
                direction_title(dir_).to_lowercase(),
                mode.name()
            );
            out.push(PlotFigure {
                stem: format!(
                    "{stem}-storage-{}-{}",
                    mode.name(),
                    direction_title(dir_).to_lowercase()
                ),
                title,
                panels: vec![chart],
                columns: 1,
                section: FigureSection::Storage,
                y_scale: YScale::LinearOrLog,
            });
        }
    }
    out
}

/// One link's figure: TCP throughput per interval of each run, and the board's CPU.
fn link_figure(r: &RunResults, link: &str, stem: &str, pre: &str) -> PlotFigure {
    let runs: Vec<_> = r
        .network
        .throughput
        .iter()
        .filter(|t| t.link == link)
        .collect();
    let name = |t: &benchboot_results::network::ThroughputRun| {
        format!(
            "{}, {} stream(s)",
            net_direction_label(t.direction),
            t.streams
        )
    };
    let time = |ns: u64| ns as f64 / 1e9;
    let throughput = Chart {
        title: format!("TCP throughput per interval, link {link}"),
        x_desc: "seconds after the warm-up".into(),
        y_desc: "Mbit/s (10^6 bit/s)".into(),
        x_axis: XAxis::Linear,
        y_max: None,
        legend_right: false,
        bands: Vec::new(),
        series: runs
            .iter()
            .map(|t| Series {
                label: name(t),
                points: t
                    .intervals
                    .iter()
                    .zip(interval_mbits(t))
                    .map(|(i, v)| Point::single(time(i.end_ns), v))
                    .collect(),
            })
            .collect(),
    };
    let mut cpu = Vec::new();
    for t in &runs {
        for (what, pick) in [
            (
                "softirq",
                (|s: &benchboot_results::network::CpuShare| s.softirq) as fn(&_) -> f64,
            ),
            ("system", |s| s.system),
        ] {
            cpu.push(Series {
                label: format!("{what}: {}", name(t)),
                points: t
                    .intervals
                    .iter()
                    .filter_map(|i| {
                        let s = i.board_cpu.share()?;
                        Some(Point::single(time(i.end_ns), pick(&s)))
                    })
                    .collect(),
            });
        }
    }
    let cpu = Chart {
        title: format!("board CPU per interval (system-wide /proc/stat), link {link}"),
        x_desc: "seconds after the warm-up".into(),
        y_desc: "% of all CPU time".into(),
        x_axis: XAxis::Linear,
        y_max: Some(100.0),
        legend_right: true,
        bands: Vec::new(),
        series: cpu,
    };
    let title = format!(
        "{pre}{}: network link {link} ({}){}",
        r.board,
        link_description(&r.network, link),
        if r.emulated {
            " (QEMU's virtual network)"
        } else {
            ""
        }
    );
    PlotFigure {
        stem: format!("{stem}-net-{}", file_stem(link)),
        title,
        panels: vec![throughput, cpu],
        columns: 1,
        section: FigureSection::Network,
        y_scale: YScale::Linear,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A latency row of 0 bytes (log2 is -inf) or a NaN figure from a document: the
    /// point is left out; the chart draws (an add overflowed on the endless x range).
    #[test]
    fn points_that_are_not_finite_are_left_out() {
        let mut c = Chart {
            title: "t".into(),
            x_desc: "x".into(),
            y_desc: "y".into(),
            x_axis: XAxis::Log2Bytes,
            y_max: None,
            legend_right: false,
            bands: Vec::new(),
            series: vec![Series {
                label: "s".into(),
                points: vec![
                    Point::single(0f64.log2(), 1.0),
                    Point::single(12.0, f64::NAN),
                    Point::single(13.0, 2.0),
                ],
            }],
        };
        let figure = |c: &Chart| PlotFigure {
            stem: "f".into(),
            title: "f".into(),
            panels: vec![c.clone()],
            columns: 1,
            section: FigureSection::Memory,
            y_scale: YScale::LinearOrLog,
        };
        for log_y in [false, true] {
            assert!(svg_string(&figure(&c), log_y).unwrap().contains("<svg"));
        }
        c.series[0].points.clear();
        assert!(svg_string(&figure(&c), true).unwrap().contains("<svg"));
    }

    /// A long EMULATED title (it was drawn on one line and clipped at both ends, the
    /// word EMULATED first to go) is broken at blanks into lines of at most 68
    /// characters at 960 px; nothing is lost, and EMULATED opens the first line.
    #[test]
    fn long_titles_wrap_instead_of_clipping() {
        let title = "EMULATED (QEMU, not hardware) — qemu-virt-arm64: network link ncm \
                     (USB gadget NCM, usb0 to the host) (QEMU's virtual network)";
        let lines = title_lines(title, 960);
        assert_eq!(
            lines,
            [
                "EMULATED (QEMU, not hardware) — qemu-virt-arm64: network link ncm",
                "(USB gadget NCM, usb0 to the host) (QEMU's virtual network)"
            ]
        );
        assert!(lines.iter().all(|l| l.chars().count() <= 68));
        assert_eq!(title_lines(&"x".repeat(150), 960).len(), 3);
        assert_eq!(title_lines("", 960), [""]);
    }

    #[test]
    fn a_log_axis_labels_whole_decades_only() {
        let labels: Vec<String> = [-2.0, -1.0, 0.0, 0.5, 3.0, 3.0000000001]
            .map(decade_label)
            .to_vec();
        assert_eq!(labels, ["0.01", "0.1", "1", "", "1000", "1000"]);
    }

    /// The render tests' run: TCP over the gadget link `ncm` and the wired link `eth`
    /// (interleaved in the document), none over `usb-eth`.
    #[test]
    fn every_link_with_tcp_runs_gets_one_network_plot() {
        let mut r = crate::render::network::tests::wired_run();
        // ncm, eth, ncm: one file per link all the same.
        let mut again = r.network.throughput[0].clone();
        again.direction = benchboot_results::counters::NetDirection::HostToBoard;
        r.network.throughput.push(again);
        let dir = tempfile::tempdir().unwrap();
        let files = report_plots(&r, dir.path()).unwrap();
        let names: Vec<String> = files
            .iter()
            .filter_map(|f| f.file_name()?.to_str().map(String::from))
            .filter(|n| n.contains("-net-"))
            .collect();
        assert_eq!(
            names,
            [
                "run-w-net-eth.png",
                "run-w-net-eth.svg",
                "run-w-net-ncm.png",
                "run-w-net-ncm.svg"
            ]
        );
        let svg = std::fs::read_to_string(dir.path().join("run-w-net-eth.svg")).unwrap();
        assert!(
            svg.contains("network link eth (built-in Ethernet, eth0)"),
            "title"
        );
        let svg = std::fs::read_to_string(dir.path().join("run-w-net-ncm.svg")).unwrap();
        assert!(
            svg.contains("host → board, 4 stream(s)") && svg.contains("board → host, 4 stream(s)")
        );
    }

    /// WiFi entries are links like any other: one plot per entry with TCP runs, titled
    /// with the channel; the skipped entry gets none.
    #[test]
    fn every_wifi_entry_with_tcp_runs_gets_its_plot() {
        let r = crate::render::wifi::tests::wifi_run();
        let dir = tempfile::tempdir().unwrap();
        let files = report_plots(&r, dir.path()).unwrap();
        let names: Vec<String> = files
            .iter()
            .filter_map(|f| f.file_name()?.to_str().map(String::from))
            .filter(|n| n.contains("-net-"))
            .collect();
        assert_eq!(
            names,
            [
                "run-wifi-net-wifi-ch1-20.png",
                "run-wifi-net-wifi-ch1-20.svg",
                "run-wifi-net-wifi-ch36-80.png",
                "run-wifi-net-wifi-ch36-80.svg"
            ]
        );
        let svg = std::fs::read_to_string(dir.path().join("run-wifi-net-wifi-ch1-20.svg")).unwrap();
        // The title is wrapped into lines that fit, each drawn whole.
        let title = report_figures(&r)
            .into_iter()
            .find(|f| f.stem == "run-wifi-net-wifi-ch1-20")
            .unwrap()
            .title;
        assert!(
            title.ends_with("network link wifi-ch1-20 (WiFi 2.4 GHz ch 1 20 MHz, board as AP)"),
            "{title}"
        );
        for line in title_lines(&title, 960) {
            assert!(svg.contains(&format!(">\n{line}\n</text>")), "{line}");
        }
        assert!(
            svg.contains("host → board, 1 stream(s)") && svg.contains("board → host, 4 stream(s)")
        );
    }
}
