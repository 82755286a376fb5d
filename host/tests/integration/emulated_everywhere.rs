//! The emulated rule, walked through every output of a real QEMU run
//! (`tests/data/qemu-virt-arm64-1.13.json` with its emulated meter's trace): the report as
//! terminal tables, Markdown, CSV, JSON and HTML, its plots, `show`, `compare` against
//! another QEMU run, the runs page with the run stored, and the console's figure and
//! verdict lines. Each output carries the EMULATED mark; none shows a figure the
//! emulator cannot give as a plain number: memory latency over L1 (TCG has no caches),
//! the A1 verdict as pass or fail (QEMU's disk is no card), the CPU clock in MHz (TCG
//! has no clock).

use std::path::{Path, PathBuf};
use std::process::Command;

use benchboot_console::figures;
use benchboot_console::lines;
use benchboot_console::verdicts::{self, Outcome};
use benchboot_results::RunResults;

const DOC: &str = "tests/data/qemu-virt-arm64-1.13.json";
const POWER: &str = "tests/data/qemu-virt-arm64-1.13.power.json";
const RUN_ID: &str = "qemu-virt-arm64-2aaa14f0de31";

/// Runs the built tool with `args` (and `COLUMNS` wide enough that no table wraps);
/// its standard output.
fn benchboot(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_benchboot"))
        .args(args)
        .env("COLUMNS", "400")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "benchboot {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// An HTML page as lines of text: a table row as `| cell | cell |`, headings, paragraphs
/// and list items a line each, tags, styles and scripts left out.
fn html_text(html: &str) -> String {
    let mut s = html.to_owned();
    for (tag, end) in [("<style", "</style>"), ("<script", "</script>")] {
        while let Some(a) = s.find(tag) {
            let b = s[a..].find(end).map_or(s.len(), |b| a + b + end.len());
            s.replace_range(a..b, "");
        }
    }
    let s = s
        .replace("<tr", "\n|<tr")
        .replace("</td>", " |")
        .replace("</th>", " |")
        .replace("</tr>", "\n");
    let s = [
        "</h1>",
        "</h2>",
        "</h3>",
        "</p>",
        "<br>",
        "</li>",
        "</caption>",
        "</title>",
    ]
    .iter()
    .fold(s, |s, t| s.replace(t, &format!("{t}\n")));
    let mut out = String::new();
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&gt;", ">")
        .replace("&lt;", "<")
        .replace("&amp;", "&")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A table found in text output: the line before it (its caption), its header and rows.
#[derive(Debug)]
struct Table {
    caption: String,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

/// Every table of `text`: comfy-table's (`│ a ┆ b │`) and pipe tables (Markdown's, and
/// [`html_text`]'s).
fn tables(text: &str) -> Vec<Table> {
    let mut out: Vec<Table> = Vec::new();
    let mut caption = String::new();
    let mut open = false;
    for line in text.lines() {
        let t = line.trim();
        let cells: Option<Vec<String>> = if t.starts_with('│') {
            Some(
                t.trim_matches('│')
                    .split('┆')
                    .map(|c| c.trim().to_owned())
                    .collect(),
            )
        } else if t.starts_with('|') && t.ends_with('|') && t.len() > 1 {
            Some(
                t[1..t.len() - 1]
                    .split(" |")
                    .map(|c| c.trim().trim_start_matches('|').trim().to_owned())
                    .collect(),
            )
        } else {
            None
        };
        let border = t.starts_with(['┌', '╞', '├', '└']) || t.starts_with("|---");
        match cells {
            _ if border => {}
            Some(cells) if open => out.last_mut().unwrap().rows.push(cells),
            Some(cells) => {
                open = true;
                out.push(Table {
                    caption: caption.clone(),
                    header: cells,
                    rows: Vec::new(),
                });
            }
            None => {
                open = false;
                if !t.is_empty() {
                    caption = t.to_owned();
                }
            }
        }
    }
    out
}

/// True when `cell` starts with a number (`300 (64 MiB)`, `0.0`, `46,003`).
fn is_number(cell: &str) -> bool {
    cell.split_whitespace()
        .next()
        .is_some_and(|w| w.replace(',', "").parse::<f64>().is_ok())
}

/// The complaints about one text output `name`: an over-L1 latency or a CPU clock shown
/// as a number without EMULATED beside it, an A1 verdict line without EMULATED or with
/// PASS/FAIL.
fn complaints(name: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    if !text.contains("EMULATED") {
        out.push(format!("{name}: no EMULATED mark"));
    }
    for t in tables(text) {
        let latency_table = t.caption.contains("over L1");
        for (i, h) in t.header.iter().enumerate() {
            let latency = i > 0
                && !h.contains("raw")
                && (latency_table || h.contains("over L1") || h.starts_with("latency"));
            let clock =
                h.contains("MHz") && (h.contains("measured") || t.caption.contains("CPU clock"));
            if !(latency || clock) {
                continue;
            }
            for row in &t.rows {
                let Some(cell) = row.get(i) else { continue };
                if is_number(cell) && !cell.contains("EMULATED") {
                    out.push(format!(
                        "{name}: `{}` column `{h}` shows {cell:?} unmarked ({})",
                        t.caption,
                        if latency {
                            "latency over L1"
                        } else {
                            "CPU clock"
                        }
                    ));
                }
            }
        }
    }
    for line in text.lines().filter(|l| l.contains("A1 (")) {
        if !line.contains("EMULATED") || line.contains("PASS") || line.contains("FAIL") {
            out.push(format!("{name}: A1 verdict unmarked: {line}"));
        }
    }
    out
}

#[test]
fn every_output_of_an_emulated_run_marks_it_and_shows_nothing_the_emulator_cannot_give() {
    let dir = tempfile::tempdir().unwrap();
    let path = |p: &str| dir.path().join(p);
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    let report = |format: &str| benchboot(&["report", DOC, "--power", POWER, "--format", format]);
    let mut texts: Vec<(String, String)> = vec![
        ("report table".into(), report("table")),
        ("report markdown".into(), report("markdown")),
        ("show".into(), benchboot(&["show", DOC])),
    ];
    let html = path("report.html");
    benchboot(&[
        "report",
        DOC,
        "--power",
        POWER,
        "--format",
        "html",
        "-o",
        &s(&html),
    ]);
    let html = std::fs::read_to_string(&html).unwrap();
    texts.push(("report html".into(), html_text(&html)));

    // compare against another QEMU run: the same document under another run id.
    let other = path("other.json");
    let text = std::fs::read_to_string(DOC).unwrap();
    std::fs::write(&other, text.replace(RUN_ID, "qemu-virt-arm64-2aaa14f0de32")).unwrap();
    texts.push(("compare".into(), benchboot(&["compare", DOC, &s(&other)])));
    texts.push((
        "compare markdown".into(),
        benchboot(&["compare", DOC, &s(&other), "--format", "markdown"]),
    ));

    // The runs page with the run stored.
    let store = path("store");
    std::fs::create_dir_all(store.join("runs")).unwrap();
    std::fs::copy(DOC, store.join("runs").join(format!("{RUN_ID}.json"))).unwrap();
    benchboot(&["runs", "--store", &s(&store), "--reindex"]);
    let page = path("page/index.html");
    benchboot(&[
        "runs",
        "--store",
        &s(&store),
        "--format",
        "html",
        "-o",
        &s(&page),
    ]);
    for p in [page.clone(), path(&format!("page/{RUN_ID}.html"))] {
        let html = std::fs::read_to_string(&p).unwrap();
        texts.push((format!("runs page {}", p.display()), html_text(&html)));
    }

    let mut all: Vec<String> = texts
        .iter()
        .flat_map(|(name, text)| complaints(name, text))
        .collect();

    // The plots: each SVG marked; no latency plot (TCG has no caches to show).
    let plots = path("plots");
    let out = Command::new(env!("CARGO_BIN_EXE_benchboot"))
        .args(["report", DOC, "--power", POWER, "--plots", &s(&plots)])
        .output()
        .unwrap();
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    if !said.contains("no memory latency plot: EMULATED") {
        all.push(format!(
            "plots: no word why there is no latency plot: {said}"
        ));
    }
    let files: Vec<PathBuf> = std::fs::read_dir(&plots)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(files.len() > 4, "{files:?}");
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if name.contains("latency") {
            all.push(format!("plots: a latency plot {name}"));
        }
        if name.ends_with(".svg") && !std::fs::read_to_string(f).unwrap().contains("EMULATED") {
            all.push(format!("plots: {name} has no EMULATED mark"));
        }
    }
    if html.contains("memory latency by block size") {
        all.push("report html: a latency plot".into());
    }

    // CSV: every row says emulated; no over-L1 latency figure.
    let csv = report("csv");
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let (em, single, dual) = (
        col("emulated"),
        col("latency_single_ns"),
        col("latency_dual_ns"),
    );
    let mut rows = 0;
    for rec in reader.records() {
        let rec = rec.unwrap();
        rows += 1;
        if &rec[em] != "true" {
            all.push(format!("csv: a row not marked emulated: {rec:?}"));
        }
        if !rec[single].is_empty() || !rec[dual].is_empty() {
            all.push(format!("csv: a latency over L1 as a number: {rec:?}"));
        }
    }
    assert!(rows > 100);

    // JSON: marked; latency over L1 null; the A1 verdicts marked, in MB/s.
    let json: serde_json::Value = serde_json::from_str(&report("json")).unwrap();
    if json["emulated"] != true {
        all.push("json: emulated is not true".into());
    }
    for cell in json["memory"]["latency"].as_array().unwrap() {
        if !cell["single_ns"].is_null() || !cell["dual_ns"].is_null() {
            all.push(format!("json: a latency over L1 as a number: {cell}"));
        }
    }
    let a1 = json["a1"].as_array().unwrap();
    assert_eq!(a1.len(), 2, "{a1:?}");
    for cell in a1 {
        let v = &cell["verdict"];
        if v["emulated"] != true || v.get("seq_write_mb_per_s").is_none() {
            all.push(format!("json: A1 unmarked or not in MB/s: {cell}"));
        }
    }

    // The console: no latency or clock figure line, the A1 verdicts skipped as EMULATED
    // and in the report's unit.
    let r = RunResults::from_json(&text).unwrap();
    for f in figures::all(&r) {
        if let Some(line) = lines::figure(&f) {
            if f.id.starts_with("memory.latency.") || f.id.starts_with("clock.") {
                all.push(format!("console: {line}"));
            }
        }
    }
    let v = verdicts::all(&r);
    let table = &texts[0].1;
    for a in v.iter().filter(|v| v.id.starts_with("a1.")) {
        let why = a.why.as_deref().unwrap_or_default();
        if a.outcome != Outcome::Skip || !why.starts_with("EMULATED") {
            all.push(format!("console: {}", lines::verdict(a)));
        }
        // The same sequential write figure, in the same unit, in the report.
        let seq = why
            .split("sequential write ")
            .nth(1)
            .and_then(|w| w.split(" MB/s").next())
            .unwrap_or("?");
        let target = a.id.trim_start_matches("a1.");
        let line = table
            .lines()
            .find(|l| l.contains(&format!("A1 ({target})")))
            .unwrap_or_default();
        if !line.contains(&format!("sequential write {seq} MB/s")) {
            all.push(format!("A1 units differ: console `{why}`, report `{line}`"));
        }
    }
    assert!(
        all.is_empty(),
        "{} complaint(s):\n{}",
        all.len(),
        all.join("\n")
    );
}
