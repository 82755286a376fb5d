//! Text from a document that would drive the terminal (escape and control sequences): a board name
//! with ESC sequences and a RIGHT-TO-LEFT OVERRIDE, a target label with an OSC title
//! sequence, BEL and a C1 CSI. `show`, `report` (table, Markdown, CSV, JSON, plots),
//! `compare`, `collect` and `runs` print them escaped (`\u{1b}`), never raw; and a
//! document's names never choose where a file is written.

use std::path::{Path, PathBuf};
use std::process::Command;

const BOARD: &str = "rpi\u{1b}[2J\u{1b}[31mX\u{202e}fdp.exe";
const BOARD_SHOWN: &str = r"rpi\u{1b}[2J\u{1b}[31mX\u{202e}fdp.exe";
const TARGET: &str = "ext\u{1b}]0;pwned\u{7}4\u{9b}2J";
const TARGET_SHOWN: &str = r"ext\u{1b}]0;pwned\u{7}4\u{9b}2J";

/// `handmade-a.json` with `board` (top level and plan) set to `board`, the target
/// labelled `ext4` renamed to `target` everywhere, and run id `run_id`.
fn hostile_doc(run_id: &str, board: &str, target: &str) -> String {
    fn rename(v: &mut serde_json::Value, target: &str) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    match (k.as_str(), &*x) {
                        ("label" | "target", serde_json::Value::String(s)) if s == "ext4" => {
                            *x = target.into();
                        }
                        ("targets", serde_json::Value::Array(a))
                            if a.iter().any(|t| t == "ext4") =>
                        {
                            for t in x.as_array_mut().unwrap() {
                                if t == "ext4" {
                                    *t = target.into();
                                }
                            }
                        }
                        _ => rename(x, target),
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| rename(x, target)),
            _ => {}
        }
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/handmade-a.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    rename(&mut v, target);
    v["board"] = board.into();
    v["plan"]["board"] = board.into();
    v["run_id"] = run_id.into();
    serde_json::to_string_pretty(&v).unwrap()
}

/// Runs the built `benchboot`; stdout and stderr together.
fn benchboot(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_benchboot"))
        .args(args)
        .output()
        .unwrap();
    let mut text = String::from_utf8(out.stdout).unwrap();
    text.push_str(&String::from_utf8(out.stderr).unwrap());
    (out.status.success(), text)
}

/// No control character (but line breaks) and no bidi override in `text`.
fn assert_clean(what: &str, text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| c != '\n' && benchboot_results::text::needs_escape(c))
        .collect();
    assert!(bad.is_empty(), "{what}: raw {bad:?} in:\n{text}");
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn every_printer_escapes_what_a_document_says() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hostile.json");
    std::fs::write(&file, hostile_doc("hostile-1", BOARD, TARGET)).unwrap();
    let other = dir.path().join("hostile-2.json");
    std::fs::write(&other, hostile_doc("hostile-2", BOARD, TARGET)).unwrap();
    let f = s(&file);

    for (what, args, shown) in [
        ("show", vec!["show", f], vec![BOARD_SHOWN, TARGET_SHOWN]),
        ("report", vec!["report", f], vec![BOARD_SHOWN, TARGET_SHOWN]),
        (
            "report markdown",
            vec!["report", f, "--format", "markdown"],
            vec![BOARD_SHOWN, TARGET_SHOWN],
        ),
        (
            "report csv",
            vec!["report", f, "--format", "csv"],
            vec![BOARD_SHOWN, TARGET_SHOWN],
        ),
        // JSON keeps the values: escapes a JSON reader decodes to the same text.
        (
            "report json",
            vec!["report", f, "--json"],
            vec![r"rpi\u001b[2J\u001b[31mX\u202efdp.exe"],
        ),
        ("compare", vec!["compare", f, s(&other)], vec![TARGET_SHOWN]),
        (
            "compare markdown",
            vec!["compare", f, s(&other), "--format", "markdown"],
            vec![TARGET_SHOWN],
        ),
    ] {
        let (ok, out) = benchboot(&args);
        assert!(ok, "{what}: {out}");
        assert_clean(what, &out);
        for want in shown {
            assert!(out.contains(want), "{what}: no {want} in:\n{out}");
        }
    }

    // Plots: SVG text escaped too (raw controls are not even well-formed XML).
    let plots = dir.path().join("plots");
    let (ok, out) = benchboot(&["report", f, "--plots", s(&plots)]);
    assert!(ok, "{out}");
    let mut svgs = 0;
    for e in std::fs::read_dir(&plots).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "svg") {
            let svg = std::fs::read_to_string(&p).unwrap();
            assert_clean(s(&p), &svg);
            svgs += 1;
        }
    }
    assert!(svgs > 0, "no SVG in {}", plots.display());

    // Collected from a card and listed from the store.
    let card = dir.path().join("card");
    std::fs::create_dir_all(&card).unwrap();
    std::fs::copy(&file, card.join("results.json")).unwrap();
    let store = dir.path().join("store");
    let (ok, out) = benchboot(&["collect", "--from-card", s(&card), "--store", s(&store)]);
    assert!(ok, "{out}");
    assert_clean("collect", &out);
    assert!(out.contains(&format!("(board {BOARD_SHOWN},")), "{out}");
    for (what, args, want) in [
        ("runs", vec!["runs", "--store", s(&store)], BOARD_SHOWN),
        (
            "runs json",
            vec!["runs", "--json", "--store", s(&store)],
            r"rpi\u001b[2J\u001b[31mX\u202efdp.exe",
        ),
        (
            "collect json",
            vec![
                "collect",
                "--json",
                "--from-card",
                s(&card),
                "--store",
                s(&store),
            ],
            "hostile-1",
        ),
    ] {
        let (ok, out) = benchboot(&args);
        assert!(ok, "{what}: {out}");
        assert_clean(what, &out);
        assert!(out.contains(want), "{what}: no {want} in:\n{out}");
    }
}

/// A run id with ESC: shown escaped, and refused by the store with the id escaped in
/// the message (it names a file there).
#[test]
fn a_run_id_with_controls_is_shown_escaped_and_never_stored() {
    let dir = tempfile::tempdir().unwrap();
    let card = dir.path().join("card");
    std::fs::create_dir_all(&card).unwrap();
    let id = "x\u{1b}[2J\u{1b}]0;t\u{7}";
    let file = card.join("results.json");
    std::fs::write(&file, hostile_doc(id, "rpi", "ext4")).unwrap();
    let (ok, out) = benchboot(&["show", s(&file)]);
    assert!(ok, "{out}");
    assert_clean("show", &out);
    assert!(out.contains(r"x\u{1b}[2J\u{1b}]0;t\u{7}"), "{out}");
    let store = dir.path().join("store");
    let (ok, out) = benchboot(&["collect", "--from-card", s(&card), "--store", s(&store)]);
    assert!(!ok, "{out}");
    assert!(out.starts_with("error: "), "{out}");
    assert_clean("collect", &out);
    assert!(out.contains(r"x\u{1b}[2J\u{1b}]0;t\u{7}"), "{out}");
    assert!(
        !store.join("runs").exists()
            || std::fs::read_dir(store.join("runs"))
                .unwrap()
                .next()
                .is_none()
    );
}

/// Every file below `dir`, as paths relative to it.
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_owned());
            }
        }
    }
    out.sort();
    out
}

/// A board name and run id that look like paths write nothing outside the store or
/// the plot folder: the store refuses the run id, plot names are made safe (and were
/// hidden files, `.._.._x-storage-...png`, before `file_stem` replaced a leading `.`).
#[test]
fn names_that_look_like_paths_stay_inside_the_store_and_plot_folder() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("a/b/c");
    std::fs::create_dir_all(work.join("card")).unwrap();
    let file = work.join("card/results.json");
    std::fs::write(
        &file,
        hostile_doc("../../../escaped", "../../../board/..", "ext4"),
    )
    .unwrap();
    let before = files_below(dir.path());

    let plots = work.join("plots");
    let (ok, out) = benchboot(&["report", s(&file), "--plots", s(&plots)]);
    assert!(ok, "{out}");
    let store = work.join("store");
    let (ok, out) = benchboot(&[
        "collect",
        "--from-card",
        s(&work.join("card")),
        "--store",
        s(&store),
    ]);
    assert!(!ok, "{out}");
    assert!(out.contains("../../../escaped"), "{out}");

    let new: Vec<PathBuf> = files_below(dir.path())
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    assert!(!new.is_empty());
    for p in &new {
        assert!(
            p.starts_with("a/b/c/plots") || p.starts_with("a/b/c/store"),
            "{} written outside the plot folder and the store: {new:?}",
            p.display()
        );
        // Plot names made of the run id: no `..`, and not hidden.
        let name = p.file_name().unwrap().to_string_lossy();
        assert!(!name.starts_with('.'), "{}", p.display());
    }
}

/// A shared plan file cannot drive the terminal of whoever checks it: its
/// `[[command]]` arguments and its own file name are printed escaped.
#[test]
fn plan_check_prints_a_plans_text_and_name_escaped() {
    let dir = tempfile::tempdir().unwrap();
    // Windows refuses control characters in file names: there the name carries a
    // right-to-left override, which it allows.
    let (name, shown) = if cfg!(windows) {
        ("evil\u{202e}name.toml", r"evil\u{202e}name.toml")
    } else {
        ("evil\u{1b}[31mname.toml", r"evil\u{1b}[31mname.toml")
    };
    let file = dir.path().join(name);
    std::fs::write(
        &file,
        "[[command]]\nid = \"a\"\npath = \"x\"\n\
         args = [\"\\u001b[2J\\u001b[Hfake line\", \"\\u202eexe.txt\"]\ntime-limit = \"1 s\"\n",
    )
    .unwrap();
    let (ok, out) = benchboot(&["plan", "check", "--board", "rpi-zero-w", s(&file)]);
    assert!(ok, "{out}");
    assert_clean("plan check", &out);
    assert!(out.contains(r"x \u{1b}[2J\u{1b}[Hfake line"), "{out}");
    assert!(out.contains(r"\u{202e}exe.txt"), "{out}");
    assert!(out.contains(shown), "{out}");
}
