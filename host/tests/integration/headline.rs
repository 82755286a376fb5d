//! The headline opens every report (terminal, Markdown, HTML) before the context, with
//! the figures of the document; the runs page's columns come from it (the card's ext4,
//! the card by name, no latency figure under QEMU).

use std::path::Path;

use benchboot::doc::{Block, Grid};
use benchboot::power::energy::Energy;
use benchboot::report::{render, render_with, Format};
use benchboot::results_file::load_path;
use benchboot::runs_page::{document, PageRun, LATENCY_UNDER_QEMU};
use benchboot::store::Store;

const VIRT13: &str = "tests/data/qemu-virt-arm64-1.13.json";
const VIRT13_TRACE: &str = "tests/data/qemu-virt-arm64-1.13.power.json";
const CARD: &str = "tests/data/handmade-card.json";

fn virt13_with_energy() -> (benchboot_results::RunResults, Energy) {
    let r = load_path(Path::new(VIRT13)).unwrap();
    let e = Energy::find(Path::new(VIRT13), Some(Path::new(VIRT13_TRACE)), &r)
        .unwrap()
        .unwrap();
    (r, e)
}

/// Terminal: the title, then the headline (verdict first), all of it within 80
/// columns, before the context table.
#[test]
fn the_terminal_report_opens_with_the_headline() {
    let (r, e) = virt13_with_energy();
    let text = render_with(&r, Some(&e), Format::Table).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("benchboot report: run "),
        "{}",
        lines[0]
    );
    assert_eq!(
        lines[1],
        "EMULATED (QEMU): these figures say nothing about the hardware"
    );
    assert_eq!(
        lines[2],
        "Run complete: every step of the plan ran; 2 failures (see Warnings)."
    );
    assert_eq!(
        lines[3],
        "seq. write / read   201 / 853 MiB/s     EMULATED; ext4 on the card, 1 MiB blocks"
            .trim_end()
    );
    let context = text.find("\nContext\n").expect("a context heading");
    let head = &text[..context];
    for want in [
        "4 KiB random r / w  3,131 / 2,527 IOPS  EMULATED; read / write, ext4 on the",
        "TCP ncm             384 / 330 Mbit/s    EMULATED; USB gadget: board→host /",
        "memory latency      —                   EMULATED; not measurable under QEMU: TCG",
        "energy              599.54 ± 0.50 J     EMULATED; the run (231 s, sync to sync);",
    ] {
        assert!(head.contains(want), "{want:?} not in\n{head}");
    }
    // The headline block (title to the first blank line) fits 80 columns.
    let block: Vec<&str> = lines[1..]
        .iter()
        .take_while(|l| !l.is_empty())
        .copied()
        .collect();
    assert!(block.len() > 15, "{block:#?}");
    assert!(block.iter().all(|l| l.chars().count() <= 80), "{block:#?}");
}

/// Markdown: the verdict as bold quotes right under the title, the figures as a list,
/// all before `### Context`; the hardware run has no EMULATED in its headline.
#[test]
fn the_markdown_report_opens_with_the_headline() {
    let (r, e) = virt13_with_energy();
    let md = render_with(&r, Some(&e), Format::Markdown).unwrap();
    let context = md.find("### Context").unwrap();
    let head = &md[..context];
    let after_title = head.split_once("\n\n").unwrap().1;
    assert!(
        after_title
            .starts_with("> **EMULATED (QEMU): these figures say nothing about the hardware**\n\n"),
        "{after_title}"
    );
    assert!(head.contains(
        "- **seq. write / read**: 201 / 853 MiB/s (EMULATED; ext4 on the card, 1 MiB blocks \
         (largest run), direct, one repetition)\n"
    ));
    assert!(head.contains(
        "- **energy**: 599.54 ± 0.50 J (EMULATED; the run (231 s, sync to sync); idle 1.522 ± \
         0.060 W)\n"
    ));

    let card = load_path(Path::new(CARD)).unwrap();
    let md = render(&card, Format::Markdown).unwrap();
    let head = &md[..md.find("### Context").unwrap()];
    assert!(!head.contains("EMULATED"), "{head}");
    assert!(head.contains(
        "- **4 KiB random r / w**: 6,886 / 5,557 IOPS (read / write, ext4 on the card, QD1; \
         meets A1, the card claims A2)\n"
    ));
    assert!(head.contains("- **card**: SanDisk SN64G, 59.5 GiB (mmcblk0; size by its CSD;"));
}

/// HTML: the headline is a `<dl>` between the title (and its contents line) and the
/// first section heading; an emulated figure's note opens with the EMULATED mark.
#[test]
fn the_html_report_opens_with_the_headline() {
    let (r, e) = virt13_with_energy();
    let page = render_with(&r, Some(&e), Format::Html).unwrap();
    let h1 = page.find("</h1>").unwrap();
    let facts = page.find("<section class=\"facts\">").unwrap();
    let first_h2 = page.find("<h2").unwrap();
    let nav = page.find("<nav>").unwrap();
    // Title, headline, then the contents line and the sections.
    assert!(
        h1 < facts && facts < nav && nav < first_h2,
        "{h1} {facts} {nav} {first_h2}"
    );
    let section = &page[facts..first_h2];
    assert!(section.contains(
        "<p class=\"alert\" role=\"alert\"><strong>EMULATED (QEMU): these figures say nothing \
         about the hardware</strong></p>"
    ));
    assert!(section.contains(
        "<dt>seq. write / read</dt><dd><span class=\"fig\">201 / 853 MiB/s</span> <span \
         class=\"note\"><strong class=\"emu\">EMULATED</strong>; ext4 on the card, 1 MiB \
         blocks (largest run), direct, one repetition</span></dd>"
    ));
    assert!(section.contains("<dt>energy</dt><dd><span class=\"fig\">599.54 ± 0.50 J</span>"));
    // Every figure line is marked.
    assert_eq!(
        section.matches("<dt>").count(),
        section
            .matches("<strong class=\"emu\">EMULATED</strong>")
            .count()
    );

    let card = load_path(Path::new(CARD)).unwrap();
    let page = render(&card, Format::Html).unwrap();
    let section = &page[page.find("<section class=\"facts\">").unwrap()..page.find("<h2").unwrap()];
    assert!(!section.contains("EMULATED"), "{section}");
    assert!(section.contains("<dt>card</dt><dd><span class=\"fig\">SanDisk SN64G, 59.5 GiB</span>"));
}

fn runs_grid(store_dir: &Path) -> Grid {
    let store = Store::open(store_dir).unwrap();
    let rows = store.list().unwrap();
    let runs: Vec<PageRun<'_>> = rows.iter().map(PageRun::of).collect();
    document(&runs, store_dir)
        .blocks
        .into_iter()
        .find_map(|b| match b {
            Block::Grid(g) => Some(g),
            _ => None,
        })
        .unwrap()
}

/// The runs page: the card's ext4 target (not ext2, the plan's first, which has no
/// random I/O), the card by its registers, and no 0.00 ns latency for a QEMU run.
#[test]
fn the_runs_page_takes_the_headlines_target_and_card() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path()).unwrap();
    for (path, at) in [(VIRT13, 1_764_000_000), (CARD, 1_764_100_000)] {
        let text = std::fs::read_to_string(path).unwrap();
        let r = load_path(Path::new(path)).unwrap();
        store.put(&r, &text, "test", at).unwrap();
    }
    drop(store);
    let g = runs_grid(dir.path());
    let col = |name: &str| g.header.iter().position(|h| h.starts_with(name)).unwrap();
    let (card, write, iops, latency) = (
        col("card"),
        col("seq. write"),
        col("4 KiB random read"),
        col("latency"),
    );
    // Newest first: the hardware-shaped run, then the QEMU one.
    // The page wraps a cell at its rule (" (" becomes a new line): read it on one line.
    let one_line =
        |row: &Vec<String>| -> Vec<String> { row.iter().map(|c| c.replace('\n', " ")).collect() };
    let (hw, qemu) = (one_line(&g.rows[0]), one_line(&g.rows[1]));
    assert_eq!(hw[0], "handmade-card");
    assert_eq!(hw[card], "SanDisk SN64G, 59.5 GiB");
    assert_eq!(hw[write], "20.06 (1 MiB ext4 direct)");
    assert_eq!(hw[iops], "6886 (ext4 qd1)");
    assert_eq!(hw[latency], "300 (64 MiB)");
    assert_eq!(qemu[card], "vda, 1.0 GiB");
    assert_eq!(qemu[write], "201 (1 MiB ext4 direct)");
    assert_eq!(qemu[iops], "3131 (ext4 qd1)");
    assert_eq!(qemu[latency], LATENCY_UNDER_QEMU.replace('\n', " "));
}
