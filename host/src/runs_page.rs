//! `benchboot runs --format html -o FILE`: every stored run in one sortable table
//! (board, date, kernel, card and the headline figures), each row linking to its own
//! report page, written beside FILE as `<run id>.html`. What a board-comparison page does
//! for boards, for a user's own runs.
//!
//! The headline figures ([`headlines`]) are the report's headline's
//! ([`crate::headline`]): fixed rules, each stated in the column head, pick the target
//! that has the figure (the card's ext4, else raw), so two runs' cells are the same
//! measurement where both plans had it. The card column names the card by its
//! registers (manufacturer, name, size), not by its kernel name.

pub mod bars;

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use benchboot_results::RunResults;

use crate::chart::file_stem;
use crate::doc::{Block, Doc, Grid};
use crate::headline::{headline, Latency, LinkTcp};
use crate::store::RunRow;
use crate::units::{block_size_label, utc};

/// The headline columns, in order, with what each cell holds.
pub const HEADLINE_COLUMNS: [&str; 7] = [
    "seq. write MiB/s (largest block; the card's ext4, else raw; direct if run)",
    "seq. read MiB/s (same cell)",
    "4 KiB random read IOPS (lowest queue depth; the card's ext4, else raw)",
    "TCP board→host Mbit/s (best link and streams)",
    "TCP host→board Mbit/s (best link and streams)",
    "memcpy MB/s (libc, one core)",
    "latency ns over L1 (largest block, 4 KiB pages)",
];

/// The latency cell of a QEMU run, which has no latency figure.
pub const LATENCY_UNDER_QEMU: &str = "— (EMULATED: not measurable under QEMU, TCG has no caches)";

/// The unit of each [`HEADLINE_COLUMNS`] entry and whether a higher value is better
/// (the bar charts' heads: [`bars`]).
pub const HEADLINE_UNITS: [(&str, bool); 7] = [
    ("MiB/s", true),
    ("MiB/s", true),
    ("IOPS", true),
    ("Mbit/s", true),
    ("Mbit/s", true),
    ("MB/s", true),
    ("ns", false),
];

/// `name (rule)` as two lines, so a wide table's head wraps at the rule.
fn two_lines(s: &str) -> String {
    s.replacen(" (", "\n(", 1)
}

/// One headline cell: the figure and where it was measured (`4 MiB ext4 direct`).
#[derive(Debug, Clone, PartialEq)]
pub struct Headline {
    pub value: f64,
    pub detail: String,
}

impl Headline {
    /// `12.3 (4 MiB ext4 direct)`: the number first, so the page sorts by it.
    pub fn text(&self) -> String {
        let v = if self.value >= 100.0 {
            format!("{:.0}", self.value)
        } else {
            format!("{:.2}", self.value)
        };
        if self.detail.is_empty() {
            v
        } else {
            format!("{v} ({})", self.detail)
        }
    }
}

/// The run's headline figures, one per [`HEADLINE_COLUMNS`] entry (`None`: the plan had
/// no such measurement, or, for latency, a QEMU run), taken from the report's headline
/// ([`crate::headline::headline`], whose rules pick the target):
/// - sequential write and read: the median of the repetitions at the largest block size
///   run on the card's ext4 target, else its raw one, else the first target with
///   figures; mode direct when that cell ran direct, else sync;
/// - 4 KiB random reads: the same choice of target, among those with random I/O, at
///   the lowest queue depth (median);
/// - TCP: the highest Mbit/s of any link and stream count, per direction;
/// - memcpy: libc memcpy on one core, MB/s;
/// - latency: single random reads over L1 at the largest block, 4 KiB pages, ns.
pub fn headlines(r: &RunResults) -> Vec<Option<Headline>> {
    columns(&headline(r, None))
}

fn columns(h: &crate::headline::Headline) -> Vec<Option<Headline>> {
    let seq = |v: Option<f64>| -> Option<Headline> {
        let s = h.sequential.as_ref()?;
        Some(Headline {
            value: v?,
            detail: format!("{} {} {}", block_size_label(s.block_size), s.target, s.mode),
        })
    };
    let iops = || -> Option<Headline> {
        let x = h.random.as_ref()?;
        Some(Headline {
            value: x.read?,
            detail: format!("{} qd{}", x.target, x.queue_depth),
        })
    };
    let tcp = |pick: fn(&LinkTcp) -> Option<(f64, u32)>| -> Option<Headline> {
        let (l, (v, streams)) = h
            .tcp
            .iter()
            .filter_map(|l| Some((l, pick(l)?)))
            .max_by(|a, b| a.1 .0.total_cmp(&b.1 .0))?;
        Some(Headline {
            value: v,
            detail: format!("{} x{streams}", l.link),
        })
    };
    let memcpy = || -> Option<Headline> {
        let (v, set) = h.memcpy.as_ref()?.one.clone()?;
        Some(Headline {
            value: v,
            detail: set,
        })
    };
    let latency = || -> Option<Headline> {
        match h.latency.as_ref()? {
            Latency::Measured { ns, block_size, .. } => Some(Headline {
                value: *ns,
                detail: block_size_label(*block_size),
            }),
            Latency::NotUnderQemu => None,
        }
    };
    vec![
        seq(h.sequential.as_ref().and_then(|s| s.write)),
        seq(h.sequential.as_ref().and_then(|s| s.read)),
        iops(),
        tcp(|l| l.board_to_host),
        tcp(|l| l.host_to_board),
        memcpy(),
        latency(),
    ]
}

/// The card and headline cells of a run's row: the card by its registers
/// ([`crate::headline::CardIdentity::short`]), then [`HEADLINE_COLUMNS`] ("—" where the
/// run has no figure; [`LATENCY_UNDER_QEMU`] for a QEMU run's latency).
pub fn row_cells(r: &RunResults) -> Vec<String> {
    let h = headline(r, None);
    let mut cells = vec![h.card.as_ref().map_or("—".into(), |c| c.short())];
    cells.extend(
        columns(&h)
            .iter()
            .map(|c| c.as_ref().map_or("—".into(), Headline::text)),
    );
    if matches!(h.latency, Some(Latency::NotUnderQemu)) {
        if let Some(last) = cells.last_mut() {
            *last = LATENCY_UNDER_QEMU.into();
        }
    }
    cells
}

/// A stored run as the page shows it: its row, and its document or why it could not be
/// read.
pub struct PageRun<'a> {
    pub row: &'a RunRow,
    pub results: Result<RunResults, String>,
    /// The file name of its report page beside the index, once [`name_pages`] gave one.
    pub page: Option<String>,
}

impl<'a> PageRun<'a> {
    /// `row` with its document read from the store ([`crate::results_file::load_path`]).
    pub fn of(row: &'a RunRow) -> PageRun<'a> {
        PageRun {
            row,
            results: crate::results_file::load_path(&row.json_path).map_err(|e| format!("{e:#}")),
            page: None,
        }
    }
}

/// Gives every readable run its report page's file name: `<run id>.html`
/// ([`file_stem`]), with `-2`, `-3`... where the name would be the index's (`index`,
/// any case) or another run's: compared without case, since macOS and Windows file
/// systems take `Board-1.html` and `board-1.html` for one file.
pub fn name_pages(runs: &mut [PageRun<'_>], index: &str) {
    let mut taken = vec![index.to_lowercase()];
    for run in runs.iter_mut().filter(|r| r.results.is_ok()) {
        let stem = file_stem(&run.row.stored_as);
        let mut name = format!("{stem}.html");
        let mut n = 2;
        while taken.contains(&name.to_lowercase()) {
            name = format!("{stem}-{n}.html");
            n += 1;
        }
        taken.push(name.to_lowercase());
        run.page = Some(name);
    }
}

/// The runs page's content: one sortable table, newest first, a row per run: id (a link
/// to `<id>.html` when its document was read), board, collected (UTC), kernel, state,
/// card and [`HEADLINE_COLUMNS`].
pub fn document(runs: &[PageRun<'_>], store: &Path) -> Doc {
    let mut d = Doc::default();
    d.push(Block::Title(format!(
        "benchboot runs: {} stored",
        runs.len()
    )));
    if runs.iter().any(|r| r.row.emulated) {
        d.push(Block::Alert(
            "Runs marked EMULATED ran under QEMU: their figures are TCG's speed, never a \
             board's."
                .into(),
        ));
    }
    d.push(Block::Text(format!(
        "store: {}\nClick a column head to sort; each run id opens its report.",
        store.display()
    )));
    let mut header: Vec<String> = [
        "run id",
        "board",
        "collected (UTC)",
        "kernel",
        "state",
        "card",
    ]
    .map(String::from)
    .to_vec();
    header.extend(HEADLINE_COLUMNS.map(two_lines));
    let mut g = Grid::new(header);
    g.left_columns = 6;
    g.stacked = true;
    let mut order: Vec<&PageRun<'_>> = runs.iter().collect();
    order.sort_by_key(|r| std::cmp::Reverse(r.row.collected_at));
    for run in order {
        let row = run.row;
        let mut state = if row.complete { "complete" } else { "partial" }.to_owned();
        if row.emulated {
            state.push_str(", EMULATED");
        }
        let mut cells = vec![
            row.stored_as.clone(),
            row.board.clone(),
            utc(row.collected_at),
            row.kernel.clone(),
            state,
        ];
        match &run.results {
            Ok(r) => {
                let mut row = row_cells(r).into_iter();
                cells.extend(row.next());
                cells.extend(row.map(|c| two_lines(&c)));
            }
            Err(e) => {
                cells.push(format!("document unreadable: {e}"));
                cells.extend(HEADLINE_COLUMNS.map(|_| "—".to_owned()));
            }
        }
        g.links.push(run.page.clone());
        g.push(cells);
    }
    d.push(Block::Grid(g));
    d
}

/// The bar charts of the runs page ([`bars::html`]): one per [`HEADLINE_COLUMNS`] entry,
/// a bar per readable run, newest first before sorting.
pub fn bar_charts(runs: &[PageRun<'_>]) -> String {
    let columns: Vec<bars::BarColumn> = HEADLINE_COLUMNS
        .iter()
        .zip(HEADLINE_UNITS)
        .map(|(name, (unit, higher))| bars::BarColumn {
            name: (*name).to_owned(),
            unit,
            higher_is_better: higher,
        })
        .collect();
    let mut order: Vec<&PageRun<'_>> = runs.iter().filter(|r| r.results.is_ok()).collect();
    order.sort_by_key(|r| std::cmp::Reverse(r.row.collected_at));
    let runs: Vec<bars::BarRun> = order
        .into_iter()
        .filter_map(|run| {
            let r = run.results.as_ref().ok()?;
            Some(bars::BarRun {
                label: run.row.stored_as.clone(),
                emulated: run.row.emulated,
                values: headlines(r)
                    .into_iter()
                    .map(|h| h.map(|h| (h.value, h.detail)))
                    .collect(),
            })
        })
        .collect();
    bars::html(&columns, &runs)
}

/// Writes the runs page to `out` and every readable run's report beside it
/// ([`name_pages`], [`crate::report::render`] as HTML), each whole or not at all, and
/// only once every page has been drawn. Returns the files written, the page last.
///
/// # Errors
/// `out` is a folder, or a file cannot be written. A run whose document cannot be read
/// gets a row saying so and no page.
pub fn write(rows: &[RunRow], store: &Path, out: &Path) -> Result<Vec<PathBuf>> {
    crate::atomic_file::check_output(out)?;
    let dir = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut runs: Vec<PageRun<'_>> = rows.iter().map(PageRun::of).collect();
    let index = out
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    name_pages(&mut runs, &index);
    // Every page is drawn before any is written: a failure leaves the folder as it was.
    let mut pages = Vec::new();
    for run in &runs {
        if let (Ok(r), Some(name)) = (&run.results, &run.page) {
            let html = crate::report::render(r, crate::report::Format::Html)
                .with_context(|| format!("the report page of run {}", run.row.run_id))?;
            pages.push((dir.join(name), html));
        }
    }
    for (_, html) in &mut pages {
        let at = html.find("<body>\n").map_or(0, |i| i + "<body>\n".len());
        html.insert_str(
            at,
            &format!(
                "<p class=\"back noprint\"><a href=\"{}\">← all runs</a></p>\n",
                crate::html::text(&index)
            ),
        );
    }
    let mut page = crate::html::page(&document(&runs, store))?;
    let at = page.rfind("<script>").unwrap_or(page.len());
    page.insert_str(at, &bar_charts(&runs));
    pages.push((out.to_path_buf(), page));
    let mut written = Vec::new();
    for (path, html) in pages {
        crate::atomic_file::write(&path, &html)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run ids that differ only in case, or that are the index's name, get pages of
    /// their own (a case-blind file system would make them one file).
    #[test]
    fn report_pages_never_share_a_name_without_case() {
        let row = |id: &str| RunRow {
            stored_as: id.into(),
            run_id: id.into(),
            board: "b".into(),
            emulated: false,
            complete: true,
            kernel: "k".into(),
            collected_at: 0,
            source: "s".into(),
            json_path: PathBuf::from("x.json"),
            schema: (1, 0),
            written_ns: 0,
            counts: Default::default(),
            started_ns: 0,
            card_signature: None,
            card_serial_sha256: None,
        };
        let doc = crate::results_file::load_path(Path::new("tests/data/handmade-a.json")).unwrap();
        let rows = [row("Board-1"), row("board-1"), row("INDEX"), row("gone")];
        let mut runs: Vec<PageRun<'_>> = rows
            .iter()
            .map(|row| PageRun {
                row,
                results: Ok(doc.clone()),
                page: None,
            })
            .collect();
        runs[3].results = Err("unreadable".into());
        name_pages(&mut runs, "index.html");
        let names: Vec<Option<&str>> = runs.iter().map(|r| r.page.as_deref()).collect();
        assert_eq!(
            names,
            [
                Some("Board-1.html"),
                Some("board-1-2.html"),
                Some("INDEX-2.html"),
                None
            ]
        );
    }

    /// The document with every kind of figure: each headline is the cell its rule names.
    #[test]
    fn headlines_of_the_every_figure_document() {
        let r = crate::results_file::load_path(Path::new(
            "../crates/results/tests/data/every-figure.json",
        ))
        .unwrap();
        let texts: Vec<String> = headlines(&r)
            .iter()
            .map(|h| h.as_ref().map_or("—".into(), Headline::text))
            .collect();
        // ext4 is the first target, 1 MiB the largest block; the four direct
        // repetitions wrote 40, 42, 44, 46 and read 60, 63, 66, 69 MiB/s; the four
        // random reads at QD1 did 1600, 1610, 1620, 1630 IOPS (median 1615).
        assert_eq!(
            texts,
            [
                "43.00 (1 MiB ext4 direct)",
                "64.50 (1 MiB ext4 direct)",
                "1615 (ext4 qd1)",
                "1000 (eth x1)",
                "108 (ecm x1)",
                "400 (cpu0)",
                "284 (64 MiB)"
            ]
        );
        // A run without the measurements gets dashes, not zeros.
        let mut empty = r.clone();
        empty.storage.clear();
        empty.random.clear();
        empty.network = Default::default();
        empty.memory = None;
        assert!(headlines(&empty).iter().all(Option::is_none));
    }
}
