//! A comparison as terminal tables, Markdown, tidy CSV or JSON, the list of built-in
//! references, and overlaid plots.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use benchboot_results::figures::Metric;
use serde::{Deserialize, Serialize};

use super::{Comparison, Key, Row, Section, SpreadVerdict, Stat, ALPHA};
use crate::chart::{Chart, FigureSection, PlotFigure, Point, Series, XAxis, YScale};
use crate::doc::{Block, Doc, Grid, Tone};
use crate::plot;
use crate::reference;
use crate::report::Format;
use crate::units::block_size_label;

/// `12.34 (12.00–13.00)`, `12.34`, `1.51–3.37` (range only) in the section's decimals.
pub fn stat_text(s: &Stat, section: Section) -> String {
    let d = section.decimals();
    match s.median {
        Some(m) if s.n > 1 => format!("{m:.d$} ({:.d$}–{:.d$})", s.min, s.max),
        Some(m) => format!("{m:.d$}"),
        None => format!("{:.d$}–{:.d$}", s.min, s.max),
    }
}

fn direction_label(d: &str) -> String {
    match d {
        "board-to-host" => "board → host".into(),
        "host-to-board" => "host → board".into(),
        other => other.into(),
    }
}

/// The label columns of a row and their headers.
fn labels(k: &Key) -> (Vec<&'static str>, Vec<String>) {
    let link = || {
        if k.target.is_empty() {
            "(reference only: no matching link)".to_owned()
        } else {
            k.target.clone()
        }
    };
    let streams = || {
        if k.param == 0 {
            "—".to_owned()
        } else {
            k.param.to_string()
        }
    };
    match k.section {
        Section::Storage => (
            vec!["block size"],
            vec![block_size_label(k.block_size_bytes)],
        ),
        Section::DeviceRead => (
            vec!["device", "reads"],
            vec![k.target.clone(), k.direction.clone()],
        ),
        Section::Random => (
            vec!["target", "op", "block", "QD"],
            vec![
                k.target.clone(),
                k.direction.clone(),
                block_size_label(k.block_size_bytes),
                k.param.to_string(),
            ],
        ),
        Section::Tcp | Section::TcpBoardCpuSystem | Section::TcpBoardCpuSoftirq => (
            vec!["link", "direction", "streams"],
            vec![link(), direction_label(&k.direction), streams()],
        ),
        Section::Http => (
            vec!["link", "direction"],
            vec![link(), direction_label(&k.direction)],
        ),
        Section::MemoryBandwidth => (
            vec!["test", "kernel"],
            vec![k.direction.clone(), k.mode.clone()],
        ),
        Section::MemoryLatency => (
            vec!["block size"],
            vec![block_size_label(k.block_size_bytes)],
        ),
        Section::Figure => (
            vec!["target", "case", "direction", "block", "param"],
            vec![
                k.target.clone(),
                k.mode.clone(),
                k.direction.clone(),
                if k.block_size_bytes == 0 {
                    "—".into()
                } else {
                    block_size_label(k.block_size_bytes)
                },
                streams(),
            ],
        ),
        Section::Card => (
            vec!["figure"],
            vec![match k.direction.as_str() {
                "write" => "write, average".to_owned(),
                "read" => "read back, average".to_owned(),
                "sustained" => "write, sustained (after the fast cache)".to_owned(),
                other => other.to_owned(),
            }],
        ),
    }
}

/// The table a row goes in: storage by mode, direction and target; one per other section.
fn group_title(k: &Key) -> String {
    let dir = |d: &str| {
        let mut s = d.to_owned();
        if let Some(c) = s.get_mut(0..1) {
            c.make_ascii_uppercase();
        }
        s
    };
    match k.section {
        Section::Storage => format!(
            "{}, MiB/s, mode {}, target {}",
            dir(&k.direction),
            k.mode,
            k.target
        ),
        Section::DeviceRead => "Device reads (like hdparm -T / -t), MiB/s".into(),
        Section::Random => "Random I/O (O_DIRECT), IOPS".into(),
        Section::Tcp => "TCP throughput, Mbit/s (10^6 bit/s), counted at the receiver".into(),
        Section::TcpBoardCpuSystem => "Board CPU during TCP runs: system, % of all CPU time".into(),
        Section::TcpBoardCpuSoftirq => {
            "Board CPU during TCP runs: softirq, % of all CPU time".into()
        }
        Section::Http => "HTTP GET of an object in RAM, Mbit/s".into(),
        Section::MemoryBandwidth => format!(
            "Memory bandwidth, MB/s (10^6 B/s), best sample, {}",
            if k.target.is_empty() {
                "the first CPU"
            } else {
                &k.target
            }
        ),
        Section::MemoryLatency => format!(
            "Memory latency, {} pages, {} random read: ns per read over L1, fastest repeat",
            k.mode, k.direction
        ),
        Section::Card => {
            "The whole card (every sector written with O_DIRECT and read back), MiB/s".into()
        }
        Section::Figure => format!("Figures of {}, {}", k.metric, k.units),
    }
}

/// The p99 latency row beside storage or random-I/O row `k` in `rows`: the same cell's
/// [`Metric::StorageLatencyP99`] or [`Metric::RandomLatencyP99`] figures (schema 1.14),
/// if the comparison has them.
pub fn p99_row<'a>(rows: &'a [Row], k: &Key) -> Option<&'a Row> {
    let metric = match k.section {
        Section::Storage => Metric::StorageLatencyP99,
        Section::Random => Metric::RandomLatencyP99,
        _ => return None,
    };
    rows.iter().find(|r| {
        let p = &r.key;
        p.section == Section::Figure
            && p.metric == metric.name()
            && (&p.mode, &p.direction, &p.target) == (&k.mode, &k.direction, &k.target)
            && (p.block_size_bytes, p.param) == (k.block_size_bytes, k.param)
    })
}

/// Entry `i`'s p99 latency ÷ the first run's (the inverse of the row's first ÷ entry
/// ratio), with which way it goes for entry `i`: lower latency is better, so above 1 is
/// `worse` (its slowest calls take longer), below 1 `better`. `None` without both.
pub fn p99_ratio_text(p99: &Row, i: usize) -> Option<String> {
    let first_over_entry = p99.against.get(i)?.as_ref()?.ratio?;
    let x = 1.0 / first_over_entry;
    if !x.is_finite() {
        return None;
    }
    let text = format!("{x:.2}");
    let way = if text == "1.00" {
        "same"
    } else if x > 1.0 {
        "worse"
    } else {
        "better"
    };
    Some(format!("{text} ({way})"))
}

fn ratio_text(a: &super::Against) -> String {
    let r = match (a.ratio, a.ratio_range) {
        (Some(r), _) => format!("{r:.2}"),
        (None, Some((lo, hi))) => format!("{lo:.2}–{hi:.2}"),
        _ => "—".into(),
    };
    match a.caveat.as_deref().and_then(|c| c.split(':').next()) {
        Some(what) => format!("{r} ({what})"),
        None => r,
    }
}

/// One grid per group of rows, in row order. An entry with no figure in a group gets
/// no columns there; the verdict column appears only where some row has a spread.
fn grids(c: &Comparison) -> Vec<(String, Option<Grid>)> {
    let base = &c.entries[0].letter;
    let mut groups: Vec<(String, Vec<&Row>)> = Vec::new();
    for row in &c.rows {
        let title = group_title(&row.key);
        match groups.last_mut() {
            Some((t, rows)) if *t == title => rows.push(row),
            _ => groups.push((title, vec![row])),
        }
    }
    let mut out = Vec::new();
    for (title, rows) in groups {
        let present: Vec<bool> = (0..c.entries.len())
            .map(|i| rows.iter().any(|r| r.cells[i].is_some()))
            .collect();
        if present.iter().filter(|&&p| p).count() < 2 {
            out.push((title, None));
            continue;
        }
        let with_spread: Vec<bool> = (0..c.entries.len())
            .map(|i| {
                rows.iter().any(|r| {
                    r.against[i]
                        .as_ref()
                        .is_some_and(|a| a.spread != SpreadVerdict::NoSpread)
                })
            })
            .collect();
        // The p99 latency ratio beside each storage and random-I/O cell's, where the
        // runs carry latency.
        let p99: Vec<Option<&Row>> = rows.iter().map(|r| p99_row(&c.rows, &r.key)).collect();
        let with_p99: Vec<bool> = (0..c.entries.len())
            .map(|i| p99.iter().flatten().any(|p| p99_ratio_text(p, i).is_some()))
            .collect();
        let (label_headers, _) = labels(&rows[0].key);
        let mut header: Vec<String> = label_headers.iter().map(|s| s.to_string()).collect();
        header.push(base.clone());
        for (i, e) in c
            .entries
            .iter()
            .enumerate()
            .skip(1)
            .filter(|(i, _)| present[*i])
        {
            header.push(e.letter.clone());
            if i > 0 {
                header.push(format!("{base}÷{}", e.letter));
                if with_spread[i] {
                    header.push(format!("{base} vs {}", e.letter));
                }
                if with_p99[i] {
                    header.push(format!("p99 {}÷{base}", e.letter));
                }
            }
        }
        let mut g = Grid::new(header);
        g.left_columns = label_headers.len();
        for (row, p99) in rows.iter().zip(&p99) {
            let (_, mut cells) = labels(&row.key);
            for (i, cell) in row
                .cells
                .iter()
                .enumerate()
                .filter(|(i, _)| *i == 0 || present[*i])
            {
                cells.push(
                    cell.as_ref()
                        .map_or("—".into(), |s| stat_text(s, row.key.section)),
                );
                if i > 0 {
                    let a = row.against[i].as_ref();
                    // The HTML page colours the ratio and its verdict by the rank test.
                    let tone = a.and_then(|a| a.test.as_ref()).map(|t| {
                        if t.p < ALPHA {
                            Tone::Significant
                        } else {
                            Tone::Undecided
                        }
                    });
                    let first = cells.len();
                    cells.push(a.map_or("—".into(), ratio_text));
                    if with_spread[i] {
                        cells.push(a.map_or("—".into(), |a| a.note.clone()));
                    }
                    if let Some(tone) = tone {
                        let r = g.rows.len();
                        g.tones
                            .extend((first..cells.len()).map(|col| (r, col, tone)));
                    }
                    if with_p99[i] {
                        let text = p99.and_then(|p| p99_ratio_text(p, i));
                        cells.push(text.unwrap_or_else(|| "—".into()));
                    }
                }
            }
            g.push(cells);
        }
        out.push((title, Some(g)));
    }
    out
}

/// The comparison as a document (tables or Markdown).
pub fn document(c: &Comparison) -> Doc {
    let mut d = Doc::default();
    let letters: Vec<String> = c
        .entries
        .iter()
        .map(|e| format!("{} = {}", e.letter, e.name))
        .collect();
    d.push(Block::Title(format!(
        "benchboot compare: {}",
        letters.join(", ")
    )));
    if let Some(n) = &c.notice {
        d.push(Block::Alert(n.clone()));
    }
    // The verdicts in words first, the tables after.
    d.extend(super::verdict::blocks(c));
    if let Some(w) = &c.plan_warning {
        d.push(Block::Alert(format!("DIFFERENT PLANS: {w}")));
    }
    for c in &c.caveats {
        d.push(Block::Alert(format!("NOT THE SAME LINK: {c}")));
    }
    d.push(Block::Heading("Entries".into()));
    let mut g = Grid::new(vec![
        "".into(),
        "kind".into(),
        "name".into(),
        "board".into(),
        "what".into(),
    ]);
    g.left_columns = 5;
    for e in &c.entries {
        g.push(vec![
            e.letter.clone(),
            if e.emulated {
                "run, EMULATED".into()
            } else {
                e.kind.clone()
            },
            e.name.clone(),
            e.board.clone(),
            match &e.file {
                Some(f) => format!("{} — {f}", e.description),
                None => e.description.clone(),
            },
        ]);
    }
    d.push(Block::Grid(g));
    let base = &c.entries[0].letter;
    d.push(Block::Text(legend(c, base)));
    let mut alone = Vec::new();
    for (title, g) in grids(c) {
        match g {
            Some(g) => {
                d.push(Block::Heading(title));
                d.push(Block::Grid(g));
            }
            None => alone.push(title),
        }
    }
    d.extend(c.not_compared.iter().map(|l| Block::Text(l.clone())));
    if !alone.is_empty() {
        d.push(Block::Heading(
            "Measured by one entry only (nothing to compare; see benchboot report)".into(),
        ));
        d.push(Block::List(alone));
    }
    if let Some(e) = &c.energy {
        d.extend(super::energy::blocks(e, base));
    }
    d
}

/// The legend under the entries: how to read the ratios, the spread test, and the notes
/// that only some comparisons need (memory cells, p99 latency, references).
fn legend(c: &Comparison, base: &str) -> String {
    let mut legend = format!(
        "{base}÷X = median of {base} ÷ median of X (a range when X gives only min and max). \
         Cells: median (min–max) of the repetitions."
    );
    if c.rows.iter().any(|r| {
        r.against
            .iter()
            .flatten()
            .any(|a| a.spread != SpreadVerdict::NoSpread)
    }) {
        legend.push_str(&format!(
            "\n{base} vs X: \"ranges apart\" when the min–max ranges do not overlap, \"within \
             spread\" when they do; p = two-sided Mann–Whitney U test (exact up to 40 values), \
             printed only where the numbers of repetitions can reach p < {ALPHA}."
        ));
    } else {
        legend.push_str(
            "\nNo cell has at least two repetitions on both sides: ratios only, nothing says \
             whether a difference exceeds the run-to-run spread.",
        );
    }
    let memory = |r: &&Row| {
        matches!(
            r.key.section,
            Section::MemoryBandwidth | Section::MemoryLatency
        )
    };
    if c.rows.iter().any(|r| memory(&r)) {
        legend.push_str(
            "\nMemory cells: tinymembench's figure, the best sample (MB/s) or the fastest \
             repeat (ns over L1), with the min–max of all samples or repeats; a memory \
             reference is one entry per published run, its clock, kernel and source in \
             Entries.",
        );
    }
    if c.rows.iter().any(|r| p99_row(&c.rows, &r.key).is_some()) {
        legend.push_str(&format!(
            "\np99 X÷{base} = p99 latency per call of X ÷ that of {base} (storage and random \
             I/O cells, repetitions' medians): lower latency is better, so above 1 (worse) \
             X's slowest calls take longer than {base}'s, below 1 (better) they are quicker."
        ));
    }
    if c.entries.iter().any(|e| e.kind == "reference") {
        legend.push_str(
            "\nReferences are published figures of other boards (dd, wget, iperf; storage \
             compared with mode sync); provenance: benchboot compare --list-references.",
        );
    }
    legend
}

/// One tidy CSV row: one entry's figure in one cell, against the first run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareCsvRow {
    pub section: Section,
    pub mode: String,
    pub direction: String,
    pub target: String,
    pub block_size_bytes: u64,
    /// Queue depth or streams; 0 when none.
    pub param: u32,
    pub unit: String,
    pub entry: String,
    pub entry_kind: String,
    pub entry_name: String,
    pub board: String,
    /// True for a QEMU run: never a hardware result.
    pub emulated: bool,
    pub n: usize,
    pub median: Option<f64>,
    pub min: f64,
    pub max: f64,
    /// First run's median ÷ this entry's median.
    pub ratio_first_over_entry: Option<f64>,
    pub spread: Option<SpreadVerdict>,
    pub u: Option<f64>,
    pub p_value: Option<f64>,
    pub note: String,
}

/// Every (row, entry) with a figure as tidy rows.
pub fn csv_rows(c: &Comparison) -> Vec<CompareCsvRow> {
    let mut out = Vec::new();
    for r in &c.rows {
        for (i, (cell, e)) in r.cells.iter().zip(&c.entries).enumerate() {
            let Some(s) = cell else { continue };
            let a = r.against[i].as_ref();
            let usable_test = a.and_then(|a| a.test).filter(|t| t.min_p <= ALPHA);
            out.push(CompareCsvRow {
                section: r.key.section,
                mode: r.key.mode.clone(),
                direction: r.key.direction.clone(),
                target: r.key.target.clone(),
                block_size_bytes: r.key.block_size_bytes,
                param: r.key.param,
                unit: r.unit.clone(),
                entry: e.letter.clone(),
                entry_kind: e.kind.clone(),
                entry_name: e.name.clone(),
                board: e.board.clone(),
                emulated: e.emulated,
                n: s.n,
                median: s.median,
                min: s.min,
                max: s.max,
                ratio_first_over_entry: a.and_then(|a| a.ratio),
                spread: a.map(|a| a.spread),
                u: a.and_then(|a| a.test).map(|t| t.u_x),
                p_value: usable_test.map(|t| t.p),
                note: a.map_or(String::new(), |a| match &a.caveat {
                    Some(c) => format!("{}; {c}", a.note),
                    None => a.note.clone(),
                }),
            });
        }
    }
    out
}

/// The comparison in `format`.
pub fn render(c: &Comparison, format: Format) -> Result<String> {
    Ok(match format {
        Format::Table => document(c).text(),
        Format::Markdown => document(c).markdown(),
        Format::Csv => {
            let mut w = csv::Writer::from_writer(Vec::new());
            for row in csv_rows(c) {
                w.serialize(row).context("writing a CSV row")?;
            }
            let csv = String::from_utf8(w.into_inner().context("finishing the CSV")?)?;
            // Board names, run ids and labels from the documents: no control characters
            // reach a terminal or a spreadsheet.
            benchboot_results::text::escape_lines(&csv).into_owned()
        }
        Format::Json => {
            let s = serde_json::to_string_pretty(c)?;
            // C1 and bidi characters as JSON escapes: the same values, safe to print.
            benchboot_results::text::escape_json(&s).into_owned() + "\n"
        }
        Format::Html => crate::html::page(&html_document(c))?,
    })
}

/// The HTML page's content: [`document`], then the overlaid plots
/// ([`compare_figures`]) under "Plots".
pub fn html_document(c: &Comparison) -> Doc {
    let mut d = document(c);
    let figures = compare_figures(c);
    if !figures.is_empty() {
        d.push(Block::Heading("Plots".into()));
        d.extend(figures.into_iter().map(|f| Block::Figure(Box::new(f))));
    }
    d
}

/// `--list-references` in `format`.
pub fn references_text(format: Format) -> Result<String> {
    let list = reference::list();
    Ok(match format {
        Format::Json => serde_json::to_string_pretty(&list)? + "\n",
        Format::Csv => {
            let mut w = csv::Writer::from_writer(Vec::new());
            w.write_record([
                "name", "kind", "title", "measured", "method", "source", "files",
            ])?;
            for r in &list {
                w.write_record([
                    r.name,
                    r.kind,
                    r.title,
                    r.measured,
                    r.method,
                    r.source,
                    &r.files.join(" "),
                ])?;
            }
            String::from_utf8(w.into_inner().context("finishing the CSV")?)?
        }
        Format::Table | Format::Markdown | Format::Html => {
            let mut d = Doc::default();
            d.push(Block::Title(
                "Built-in references (benchboot compare --reference NAME)".into(),
            ));
            d.push(Block::Text(
                "Published measurements of other people's boards (2014–2019; memory: sbc-bench \
                 results), not ground truth."
                    .into(),
            ));
            let mut g = Grid::new(vec!["name".into(), "kind".into(), "what".into()]);
            g.left_columns = 3;
            for r in &list {
                g.push(vec![r.name.into(), r.kind.into(), r.title.into()]);
            }
            d.push(Block::Grid(g));
            for r in &list {
                d.push(Block::Heading(r.name.into()));
                d.push(Block::List(vec![
                    format!("what: {}", r.title),
                    format!("measured: {}", r.measured),
                    format!("how: {}", r.method),
                    format!("source: {}", r.source),
                    format!("files: {}", r.files.join(", ")),
                ]));
            }
            match format {
                Format::Table => d.text(),
                Format::Html => crate::html::page(&d)?,
                _ => d.markdown(),
            }
        }
    })
}

/// The overlaid plots of a comparison ([`compare_figures`]) into `dir`, PNG and SVG.
///
/// # Errors
/// When a file cannot be written.
pub fn compare_plots(c: &Comparison, dir: &Path) -> Result<Vec<PathBuf>> {
    plot::write_figures(dir, &compare_figures(c))
}

/// One figure per storage mode and direction (`compare-storage-<mode>-<direction>`): a
/// panel per target, a series per entry (references included), block size on a log2
/// axis; then the runs' whole-card profiles overlaid (`compare-card-profile`).
pub fn compare_figures(c: &Comparison) -> Vec<PlotFigure> {
    let pre = crate::chart::emulated_prefix(c.notice.is_some());
    let mut groups: Vec<(String, String, Vec<String>)> = Vec::new();
    for r in c.rows.iter().filter(|r| r.key.section == Section::Storage) {
        let k = &r.key;
        match groups
            .iter_mut()
            .find(|g| g.0 == k.mode && g.1 == k.direction)
        {
            Some(g) => {
                if !g.2.contains(&k.target) {
                    g.2.push(k.target.clone());
                }
            }
            None => groups.push((k.mode.clone(), k.direction.clone(), vec![k.target.clone()])),
        }
    }
    let mut out = Vec::new();
    for (mode, direction, targets) in groups {
        let panels: Vec<Chart> = targets
            .iter()
            .map(|t| Chart {
                title: format!("target {t}"),
                x_desc: "block size (log2 scale)".into(),
                y_desc: "MiB/s (2^20 B/s)".into(),
                x_axis: XAxis::Log2Bytes,
                y_max: None,
                legend_right: false,
                bands: Vec::new(),
                series: c
                    .entries
                    .iter()
                    .enumerate()
                    .map(|(i, e)| Series {
                        label: crate::whole_card::series_label(&e.letter, &e.name, e.emulated),
                        points: c
                            .rows
                            .iter()
                            .filter(|r| {
                                r.key.section == Section::Storage
                                    && r.key.mode == mode
                                    && r.key.direction == direction
                                    && &r.key.target == t
                            })
                            .filter_map(|r| {
                                let s = r.cells[i].as_ref()?;
                                Some(Point {
                                    x: (r.key.block_size_bytes as f64).log2(),
                                    y: s.median?,
                                    lo: s.min,
                                    hi: s.max,
                                })
                            })
                            .collect(),
                    })
                    .filter(|s| !s.points.is_empty())
                    .collect(),
            })
            .collect();
        let title = format!("{pre}compare: {direction} throughput by block size, mode {mode}");
        out.push(PlotFigure {
            stem: crate::chart::file_stem(&format!("compare-storage-{mode}-{direction}")),
            title,
            panels,
            columns: 2,
            section: FigureSection::Storage,
            y_scale: YScale::LinearOrLog,
        });
    }
    out.extend(crate::whole_card::compare_figure(
        &c.card_passes,
        c.notice.is_some(),
    ));
    out
}

/// The rows of one section (for tests and scripts).
pub fn section_rows(c: &Comparison, s: Section) -> Vec<&Row> {
    c.rows.iter().filter(|r| r.key.section == s).collect()
}
