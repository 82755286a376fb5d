//! The HTML pages (`--format html`) in a real browser, Debian's headless chromium: the
//! report of the two committed QEMU runs (rpi-zero-w and qemu-virt-arm64, host's
//! `tests/data/`), the runs page of a store holding both (and each run's page beside
//! it), and their comparison. Each page: no request leaves the file, no console error,
//! the DOM holds every table and SVG; sorting a column reorders the rows; a screenshot
//! is not blank (and is the README's picture, from the schema 1.13 run:
//! `BENCHBOOT_SCREENSHOT=$PWD/docs/snapshots/report.png` writes it there). Measured in
//! the laid-out page ([`browser::measure`]): every plot's text at least 11 px at a
//! phone's 400 px and at 1280 px; the runs page's cells all on screen at 1400 px and
//! at 400 px (stacked there); its bar charts switch with the select; each run's page
//! links back; the comparison page under 1 MiB. The QEMU tiers
//! open their own fresh run's report the same way (`qemu_smoke`, `qemu_virt`).

use std::path::{Path, PathBuf};

use benchboot::doc::{Block, Doc};
use benchboot::report::{render, Format};
use benchboot::results_file::load_path;
use benchboot_results::RunResults;
use benchboot_tests::browser::{
    self, assert_page, cells_off_screen, console_errors, dom, file_url, measure, png_colours,
    requests_leaving, screenshot, smallest_plot_text, table_rows,
};

/// The smallest font a plot's text may render at, CSS px, at a phone's width (400 px)
/// and on a desktop (1280 px).
const MIN_PLOT_TEXT_PX: f64 = 11.0;

/// What the page checks found wrong: every check runs and prints its figure, then the
/// test fails naming each failure.
#[derive(Default)]
struct Failures(Vec<String>);

impl Failures {
    fn check(&mut self, ok: bool, what: String) {
        eprintln!("{} {what}", if ok { "ok  " } else { "FAIL" });
        if !ok {
            self.0.push(what);
        }
    }
}

/// Every plot's text of page `file` at 400 and 1280 px is at least [`MIN_PLOT_TEXT_PX`].
fn check_plot_text(f: &mut Failures, file: &Path) {
    for width in [400, 1280] {
        let (px, text, inner, svgs) = smallest_plot_text(file, width).unwrap();
        f.check(
            px >= MIN_PLOT_TEXT_PX && svgs > 0,
            format!(
                "{} at {width} px (inner width {inner}): smallest plot text {px:.1} px ({text:?}) in {svgs} SVG(s)",
                file.file_name().unwrap().to_string_lossy()
            ),
        );
    }
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../host/tests/data")
        .join(name)
}

/// Tables and inline SVGs a page of `doc` has: a grid is a table, a figure one SVG or
/// two (with the log-y toggle).
fn expected(doc: &Doc) -> (usize, usize) {
    doc.blocks.iter().fold((0, 0), |(t, s), b| match b {
        Block::Grid(_) => (t + 1, s),
        Block::Figure(f) => (t, s + f.y_scale.page_svgs()),
        _ => (t, s),
    })
}

fn report_doc(r: &RunResults) -> Doc {
    benchboot::render::document_with_figures(r, &benchboot::plot::report_figures(r))
}

/// Writes `r`'s report page into `dir` and opens it: returns the file.
pub fn check_report_page(r: &RunResults, dir: &Path) -> PathBuf {
    let page = render(r, Format::Html).unwrap();
    assert!(
        page.len() < 1 << 20,
        "{}: {} bytes, over 1 MB",
        r.run_id,
        page.len()
    );
    let file = dir.join(format!("{}.html", benchboot::chart::file_stem(&r.run_id)));
    std::fs::write(&file, &page).unwrap();
    let (tables, svgs) = expected(&report_doc(r));
    let loaded = assert_page(&file, tables, svgs);
    // The page's first words are the terminal report's.
    assert!(loaded.dom.contains(&format!(
        "<h1>benchboot report: run {} on {}</h1>",
        r.run_id, r.board
    )));
    if r.emulated {
        assert!(loaded.dom.contains("EMULATED"), "{}", file.display());
    }
    file
}

#[test]
fn report_runs_and_compare_pages_in_headless_chromium() {
    let _slot = benchboot_tests::qemu_slot(module_path!());
    if !browser::require_chromium("browser") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let rpi = load_path(&data("rpi-zero-w-qemu.json")).unwrap();
    let virt = load_path(&data("qemu-virt-arm64-qemu.json")).unwrap();

    // The two reports: rpi-zero-w's 7 tables and its 4 storage sweeps (sync and direct,
    // write and read: a linear and a log-y SVG each); virt's 13 tables, its 4 sweeps and
    // one network figure per gadget function (ncm, ecm, rndis).
    assert_eq!(expected(&report_doc(&rpi)), (7, 8));
    assert_eq!(expected(&report_doc(&virt)), (13, 11));
    let rpi_page = check_report_page(&rpi, work.path());
    let virt_page = check_report_page(&virt, work.path());
    let current = load_path(&data("qemu-virt-arm64-1.13.json")).unwrap();
    let current_page = check_report_page(&current, work.path());
    let mut f = Failures::default();
    for page in [&rpi_page, &virt_page, &current_page] {
        check_plot_text(&mut f, page);
    }

    // A screenshot of a current (schema 1.13) report, its top and its first plot (the
    // README's picture): a page of text, tables and plots has hundreds of colours
    // (anti-aliasing); a blank or failed page has one or two.
    let full = work.path().join("report-full.png");
    // The top down to the first section, then the first figure.
    let tops: Vec<u32> = measure(
        &current_page,
        1280,
        900,
        "var y=function(id){return Math.round(document.getElementById(id).getBoundingClientRect().top+window.scrollY);};\
         window.benchbootMeasure=y('s1')+','+y('f1');",
    )
    .unwrap()
    .split(',')
    .map(|v| v.parse().unwrap())
    .collect();
    let (section, top) = (tops[0], tops[1]);
    screenshot(
        &file_url(&current_page, None).unwrap(),
        &full,
        1280,
        top + 1000,
    )
    .unwrap();
    let png = work.path().join("report.png");
    browser::png_rows(
        &full,
        &[0..section, top.saturating_sub(16)..top + 960],
        &png,
    )
    .unwrap();
    let colours = png_colours(&png, 10_000).unwrap();
    assert!(colours > 200, "screenshot has {colours} colours: blank?");
    if let Some(to) = std::env::var_os("BENCHBOOT_SCREENSHOT") {
        std::fs::copy(&png, &to).unwrap();
    }

    // Two stored runs: the runs page and a report per run beside it.
    let store_dir = work.path().join("store");
    let mut store = benchboot::store::Store::open(&store_dir).unwrap();
    for (r, name, at) in [
        (&rpi, "rpi-zero-w-qemu.json", 1_764_000_000),
        (&virt, "qemu-virt-arm64-qemu.json", 1_764_100_000),
    ] {
        let text = std::fs::read_to_string(data(name)).unwrap();
        store.put(r, &text, "test", at).unwrap();
    }
    let pages = work.path().join("pages");
    let index = pages.join("index.html");
    let rows = store.list().unwrap();
    let written = benchboot::runs_page::write(&rows, &store_dir, &index).unwrap();
    assert_eq!(written.len(), 3, "{written:?}");
    let loaded = assert_page(&index, 1, 0);
    let rows = table_rows(&loaded.dom, "t1");
    let ids: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    // Newest first, as written; every headline column has the figure or a dash.
    assert_eq!(ids, [virt.run_id.as_str(), rpi.run_id.as_str()]);
    assert!(rows.iter().all(|r| r.len() == 13), "{rows:?}");
    // Every column of the runs table on screen at 1400 px, and at 400 px (a phone) no
    // cell off-screen either: the narrow layout stacks them.
    for width in [1400, 400] {
        let (inner, cells, off) = cells_off_screen(&index, width).unwrap();
        f.check(
            off.is_empty() && cells >= 13,
            format!("runs page at {width} px (client width {inner}): {cells} cells shown, off-screen: {off:?}"),
        );
    }
    // The bar charts across runs: one per headline column, chosen by a select; picking
    // the second (sequential read) shows that chart alone, stating its unit and which
    // way is better, the best run first: virt read 148 MiB/s on ext4 (the headline's
    // target, the card's ext4), rpi 109.
    let picked = measure(
        &index,
        1400,
        900,
        r#"var s=document.getElementById("bars-pick");
        var o=s.options[1];s.value=o.value;s.dispatchEvent(new Event("change"));
        var shown=Array.prototype.filter.call(document.querySelectorAll(".bars"),function(b){return b.getClientRects().length>0;});
        window.benchbootMeasure=JSON.stringify({options:s.options.length,picked:o.value,
          shown:shown.map(function(b){return b.id;}),text:shown.length?shown[0].textContent:""});"#,
    );
    match picked {
        Ok(json) => {
            let v: serde_json::Value = serde_json::from_str(&json).unwrap();
            let text = v["text"].as_str().unwrap_or_default();
            f.check(
                v["options"] == 7
                    && v["shown"] == serde_json::json!([v["picked"]])
                    && text.contains("(MiB/s, higher is better)")
                    && matches!(
                        (text.find("148 MiB/s"), text.find("109 MiB/s")),
                        (Some(a), Some(b)) if a < b
                    ),
                format!("runs page bar charts: {json}"),
            );
        }
        Err(e) => f.check(false, format!("runs page bar charts: {e:#}")),
    }
    // Each run's page links back to the index.
    for p in &written[..2] {
        let html = std::fs::read_to_string(p).unwrap();
        f.check(
            html.contains("<a href=\"index.html\""),
            format!("{} links back to index.html", p.display()),
        );
    }
    assert!(
        rows[1][6].ends_with("direct)"),
        "rpi's sequential write: {:?}",
        rows[1]
    );
    for id in &ids {
        let link = format!("href=\"{}.html\"", benchboot::chart::file_stem(id));
        assert!(loaded.dom.contains(&link), "{link}");
        let (t, s) = expected_of(id, &rpi, &virt);
        assert_page(
            &pages.join(format!("{}.html", benchboot::chart::file_stem(id))),
            t,
            s,
        );
    }

    // Sorting: opened with #sort=t1.1.asc the board column reads in order (rpi-zero-w
    // before qemu-virt-arm64 is the reverse of the page's newest-first order), and
    // descending puts it back.
    let sorted = |frag: &str| {
        let l = dom(&file_url(&index, Some(frag)).unwrap()).unwrap();
        assert!(console_errors(&l).is_empty(), "{:?}", l.console);
        table_rows(&l.dom, "t1")
            .into_iter()
            .map(|r| r[1].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(sorted("sort=t1.1.asc"), ["qemu-virt-arm64", "rpi-zero-w"]);
    assert_eq!(sorted("sort=t1.1.desc"), ["rpi-zero-w", "qemu-virt-arm64"]);
    // Dates of one year sort by day and time (taken by their first number alone, 2025,
    // both tied and kept the page's order), and a figure by its value: rpi was collected
    // first; its 1 MiB direct write on ext2 was 105.1 MiB/s against virt's 99.5.
    assert_eq!(sorted("sort=t1.2.asc"), ["rpi-zero-w", "qemu-virt-arm64"]);
    assert_eq!(sorted("sort=t1.6.asc"), ["qemu-virt-arm64", "rpi-zero-w"]);
    assert_eq!(sorted("sort=t1.6.desc"), ["rpi-zero-w", "qemu-virt-arm64"]);

    // The comparison of the two runs, with its overlaid plots.
    let c = benchboot::compare::compare(
        &[
            (data("rpi-zero-w-qemu.json"), rpi.clone()),
            (data("qemu-virt-arm64-qemu.json"), virt.clone()),
        ],
        &[],
    )
    .unwrap();
    let page = benchboot::compare::output::render(&c, Format::Html).unwrap();
    let file = work.path().join("compare.html");
    std::fs::write(&file, &page).unwrap();
    let (ct, cs) = expected(&benchboot::compare::output::html_document(&c));
    assert!(ct >= 2 && cs >= 2, "{ct} {cs}");
    let loaded = assert_page(&file, ct, cs);
    assert!(loaded.dom.contains("<h1>benchboot compare: A = "), "title");
    f.check(
        page.len() < 1 << 20,
        format!("compare page: {} bytes (under 1 MiB)", page.len()),
    );
    check_plot_text(&mut f, &file);
    assert!(f.0.is_empty(), "{} check(s) failed: {:#?}", f.0.len(), f.0);
}

fn expected_of(id: &str, rpi: &RunResults, virt: &RunResults) -> (usize, usize) {
    let r = if id == rpi.run_id { rpi } else { virt };
    expected(&report_doc(r))
}

/// The checks can fail: a page that loads an image from the network, and one whose
/// script throws, are both caught.
#[test]
fn the_browser_checks_catch_a_leaking_page_and_a_script_error() {
    let _slot = benchboot_tests::qemu_slot(module_path!());
    if !browser::require_chromium("browser") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let leak = work.path().join("leak.html");
    std::fs::write(
        &leak,
        "<!DOCTYPE html><html><body><img src=\"http://203.0.113.9/x.png\"></body></html>",
    )
    .unwrap();
    let url = file_url(&leak, None).unwrap();
    let l = dom(&url).unwrap();
    assert_eq!(requests_leaving(&l, &url), ["http://203.0.113.9/x.png"]);

    let broken = work.path().join("broken.html");
    std::fs::write(
        &broken,
        "<!DOCTYPE html><html><body><script>undefinedFunction();</script></body></html>",
    )
    .unwrap();
    let l = dom(&file_url(&broken, None).unwrap()).unwrap();
    assert_eq!(console_errors(&l).len(), 1, "{:?}", l.console);
}
