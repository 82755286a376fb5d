//! `benchboot runs --format html -o FILE`: every stored run in one sortable table
//! (board, date, kernel, card and the headline figures), each row linking to its own
//! report page, written beside FILE as `<run id>.html`. What a board-comparison page does
//! for boards, for a user's own runs.
//!
//! The headline figures ([`headlines`]) are picked from the run's figures
//! ([`benchboot_results::figures::figures`]) by fixed rules, each stated in the column
//! head, so two runs' cells are the same measurement where both plans had it.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use benchboot_results::figures::{figures, Figure, Metric};
use benchboot_results::{RunResults, Summary};

use crate::doc::{Block, Doc, Grid};
use crate::plot::file_stem;
use crate::store::RunRow;
use crate::units::{block_size_label, utc};

/// The headline columns, in order, with what each cell holds.
pub const HEADLINE_COLUMNS: [&str; 7] = [
    "seq. write MiB/s (largest block, first target, direct if planned)",
    "seq. read MiB/s (same cell)",
    "4 KiB random read IOPS (lowest queue depth, first target)",
    "TCP board→host Mbit/s (best link and streams)",
    "TCP host→board Mbit/s (best link and streams)",
    "memcpy MB/s (libc, first core set)",
    "latency ns over L1 (largest block, 4 KiB pages)",
];

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

fn median(fs: &[&Figure]) -> Option<f64> {
    let v: Vec<f64> = fs.iter().map(|f| f.value).collect();
    Summary::of(&v).map(|s| s.median)
}

/// The run's headline figures, one per [`HEADLINE_COLUMNS`] entry (`None`: the plan had
/// no such measurement):
/// - sequential write and read: the median of the repetitions at the plan's largest
///   block size on its first target, mode direct when the plan has it, else sync;
/// - 4 KiB random reads: the first target's read IOPS at the lowest queue depth;
/// - TCP: the highest Mbit/s of any link and stream count, per direction;
/// - memcpy: libc memcpy on the first core set measured, MB/s;
/// - latency: single random reads over L1 at the largest block, 4 KiB pages, ns.
///
/// An emulated run has none the emulator cannot give (latency: QEMU has no caches,
/// [`Metric::emulator_gives`]).
pub fn headlines(r: &RunResults) -> Vec<Option<Headline>> {
    let all: Vec<Figure> = figures(r)
        .into_iter()
        .filter(|f| !r.emulated || f.metric.emulator_gives())
        .collect();
    let of = |m: Metric| all.iter().filter(move |f| f.metric == m);
    let target = r.plan.storage.targets.first().map(|t| t.label.clone());
    let block = r.plan.storage.block_sizes.iter().max().copied();
    let mode = if of(Metric::Storage).any(|f| f.context.mode == "direct") {
        "direct"
    } else {
        "sync"
    };
    let seq = |dir: &str| -> Option<Headline> {
        let (t, bs) = (target.as_deref()?, block?);
        let fs: Vec<&Figure> = of(Metric::Storage)
            .filter(|f| {
                let c = &f.context;
                c.target == t && c.block_size == bs && c.mode == mode && c.direction == dir
            })
            .collect();
        Some(Headline {
            value: median(&fs)?,
            detail: format!("{} {t} {mode}", block_size_label(bs)),
        })
    };
    let iops = || -> Option<Headline> {
        let t = target.as_deref()?;
        let f = of(Metric::Random)
            .filter(|f| {
                f.context.target == t
                    && f.context.block_size == 4096
                    && f.context.direction == "read"
            })
            .min_by_key(|f| f.context.param)?;
        Some(Headline {
            value: f.value,
            detail: format!("{t} qd{}", f.context.param),
        })
    };
    let tcp = |dir: &str| -> Option<Headline> {
        let f = of(Metric::Tcp)
            .filter(|f| f.context.direction == dir)
            .max_by(|a, b| a.value.total_cmp(&b.value))?;
        Some(Headline {
            value: f.value,
            detail: format!("{} x{}", f.context.target, f.context.param),
        })
    };
    let memcpy = || -> Option<Headline> {
        let f = of(Metric::MemoryBandwidth).find(|f| f.context.mode == "libc-memcpy")?;
        Some(Headline {
            value: f.value,
            detail: f.context.target.clone(),
        })
    };
    let latency = || -> Option<Headline> {
        let f = of(Metric::MemoryLatency)
            .filter(|f| f.context.mode == "base")
            .max_by_key(|f| f.context.block_size)?;
        Some(Headline {
            value: f.value,
            detail: block_size_label(f.context.block_size),
        })
    };
    vec![
        seq("write"),
        seq("read"),
        iops(),
        tcp("board-to-host"),
        tcp("host-to-board"),
        memcpy(),
        latency(),
    ]
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
    /// `row` with its document read from the store ([`crate::report::load_path`]).
    pub fn of(row: &'a RunRow) -> PageRun<'a> {
        PageRun {
            row,
            results: crate::report::load_path(&row.json_path).map_err(|e| format!("{e:#}")),
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
    header.extend(HEADLINE_COLUMNS.map(String::from));
    let mut g = Grid::new(header);
    g.left_columns = 6;
    let mut order: Vec<&PageRun<'_>> = runs.iter().collect();
    order.sort_by_key(|r| std::cmp::Reverse(r.row.collected_at));
    for run in order {
        let row = run.row;
        let mut state = if row.complete { "complete" } else { "partial" }.to_owned();
        if row.emulated {
            state.push_str(", EMULATED");
        }
        let (card, heads) = match &run.results {
            Ok(r) => (
                r.boot_card
                    .as_ref()
                    .map(|c| c.found.clone().unwrap_or_else(|| c.nominal.clone()))
                    .unwrap_or_else(|| "—".into()),
                headlines(r),
            ),
            Err(e) => (format!("document unreadable: {e}"), vec![None; 7]),
        };
        let mut cells = vec![
            row.stored_as.clone(),
            row.board.clone(),
            utc(row.collected_at),
            row.kernel.clone(),
            state,
            card,
        ];
        cells.extend(
            heads
                .iter()
                .map(|h| h.as_ref().map_or("—".into(), Headline::text)),
        );
        g.links.push(run.page.clone());
        g.push(cells);
    }
    d.push(Block::Grid(g));
    d
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
    pages.push((
        out.to_path_buf(),
        crate::html::page(&document(&runs, store))?,
    ));
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
        let doc = crate::report::load_path(Path::new("tests/data/handmade-a.json")).unwrap();
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
        let r =
            crate::report::load_path(Path::new("../crates/results/tests/data/every-figure.json"))
                .unwrap();
        let texts: Vec<String> = headlines(&r)
            .iter()
            .map(|h| h.as_ref().map_or("—".into(), Headline::text))
            .collect();
        // ext4 is the first target, 1 MiB the largest block; the four direct
        // repetitions wrote 40, 42, 44, 46 and read 60, 63, 66, 69 MiB/s.
        assert_eq!(
            texts,
            [
                "43.00 (1 MiB ext4 direct)",
                "64.50 (1 MiB ext4 direct)",
                "1600 (ext4 qd1)",
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
