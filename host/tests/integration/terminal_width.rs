//! The terminal text of `report`, `show` and `compare` written to a pipe, fitted to
//! `COLUMNS` (80, 100) or, with no `COLUMNS`, to 100 columns: no line wider, no number or
//! word split across the lines of a table cell, and the sections a run lacks named once
//! each with the document's reason.

use std::process::Command;

const DOCS: [&str; 3] = [
    "tests/data/qemu-virt-arm64-1.13.json",
    "tests/data/qemu-virt-arm64-qemu.json",
    "tests/data/rpi-zero-w-qemu.json",
];

/// The tool's standard output (a pipe) for `args`, `COLUMNS` set to `columns` or unset.
fn piped(args: &[&str], columns: Option<&str>) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_benchboot"));
    cmd.args(args).env_remove("COLUMNS");
    if let Some(c) = columns {
        cmd.env("COLUMNS", c);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The cells of a comfy-table row line (`│ a ┆ b │`), trimmed; `None` for other lines.
fn cells(line: &str) -> Option<Vec<&str>> {
    let t = line.trim();
    let inner = t.strip_prefix('│')?.strip_suffix('│')?;
    Some(inner.split('┆').map(str::trim).collect())
}

/// The tokens of `text` (between spaces, without `,;:()`), to tell a token cut in two
/// (`direct` + `ion`, `0.8/42` + `.9/0.0`) from two wrapped at a space.
fn tokens(text: &str) -> std::collections::HashSet<String> {
    text.split_whitespace()
        .map(|t| bare(t).to_owned())
        .collect()
}

fn bare(t: &str) -> &str {
    t.trim_matches(|c: char| ",;:()".contains(c))
}

/// What is wrong with `text` fitted to `width` (`whole`: the same output unfitted, its
/// words): lines wider than `width`, and table cells whose continuation line (one with
/// an empty cell: a wrapped row) goes on mid-number or mid-word.
fn problems(name: &str, text: &str, width: usize, whole: &str) -> Vec<String> {
    let known = tokens(whole);
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let w = unicode_width::UnicodeWidthStr::width(*l);
        if w > width {
            out.push(format!("{name}: line {} is {w} wide: {l}", i + 1));
        }
    }
    for pair in lines.windows(2) {
        let (Some(a), Some(b)) = (cells(pair[0]), cells(pair[1])) else {
            continue;
        };
        if a.len() != b.len() || !b.iter().any(|c| c.is_empty()) {
            continue;
        }
        for (x, y) in a.iter().zip(&b) {
            let (Some(end), Some(start)) = (x.chars().last(), y.chars().next()) else {
                continue;
            };
            let last = x.split_whitespace().last().unwrap_or("");
            let first = y.split_whitespace().next().unwrap_or("");
            // A number never starts with `.`; a token of the whole text cut in two.
            let number = end.is_ascii_digit() && start == '.';
            let word = known.contains(bare(&format!("{last}{first}")));
            if number || word {
                out.push(format!("{name}: `{x}` / `{y}` split"));
            }
        }
    }
    out
}

#[test]
fn piped_text_fits_columns_and_never_splits_a_number_or_a_word() {
    let mut all = Vec::new();
    let mut outputs: Vec<(String, Vec<String>)> = DOCS
        .iter()
        .map(|d| (format!("report {d}"), vec!["report".into(), d.to_string()]))
        .collect();
    outputs.push(("show".into(), vec!["show".into(), DOCS[0].into()]));
    outputs.push((
        "compare".into(),
        ["compare", DOCS[1], DOCS[2]].map(String::from).to_vec(),
    ));
    for (name, args) in &outputs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let whole = piped(&args, Some("10000"));
        for width in [80, 100] {
            let text = piped(&args, Some(&width.to_string()));
            all.extend(problems(
                &format!("{name} at {width}"),
                &text,
                width,
                &whole,
            ));
        }
        // Neither a terminal nor COLUMNS: 100 columns.
        let default = piped(&args, None);
        assert_eq!(default, piped(&args, Some("100")), "{name}");
    }
    // The library's fitting itself (what a terminal of that width gets).
    for d in DOCS {
        let (_, r) = benchboot::report::load_run(d).unwrap();
        let doc = benchboot::render::document(&r);
        for width in [80u16, 100] {
            let text = doc.text_width(Some(width));
            all.extend(problems(
                &format!("text_width {d} at {width}"),
                &text,
                usize::from(width),
                &doc.text(),
            ));
        }
    }
    assert!(
        all.is_empty(),
        "{} problem(s):\n{}",
        all.len(),
        all.join("\n")
    );
}

#[test]
fn each_section_a_run_lacks_is_named_once_with_the_reason() {
    let zero = piped(&["report", DOCS[2]], None);
    let head: Vec<&str> = zero.lines().take(12).collect();
    for section in [
        "memory",
        "card check",
        "network over the USB gadget",
        "wired network",
        "WiFi",
    ] {
        let line = format!("- not run: {section}: not in the plan");
        assert_eq!(
            zero.lines().filter(|l| *l == line).count(),
            1,
            "{line} in {head:#?}"
        );
    }
    let virt = piped(&["report", DOCS[0]], None);
    assert!(!virt.contains("not run: "), "it ran all it planned");
}
