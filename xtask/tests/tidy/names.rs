//! A name from outside becomes a path only through the one gate,
//! `benchboot_results::name::SafeName` (`crates/results/src/name.rs`). In the host tool
//! (`host/src/`, the code that reads documents, logs, cards and the network) and in PID 1
//! (`firmware/src/`, which reads a card another computer may have written), a call that
//! builds a path (`join`, `PathBuf::from`, `Path::new`, `with_file_name`,
//! `set_file_name`, `with_extension`) whose arguments name a run id, board, label, SSID
//! or card file name (the words `run_id`, `board`, `label`, `ssid`, `file_name` in its
//! code or in a format string's inline arguments) must take it through the gate: the
//! arguments then hold `SafeName`, `path_in`, `with_ext` or `file_stem` (the host's
//! wrapper of `SafeName::lossy`). Test files are left out.

use crate::files::is_test_file;
use crate::lex;
use crate::Violation;

/// Calls that turn text into a path.
const PATH_CALLS: &[&str] = &[
    "join",
    "from",
    "new",
    "with_file_name",
    "set_file_name",
    "with_extension",
];

/// Words that name something an outside document, log, card or network gave.
const OUTSIDE_WORDS: &[&str] = &["run_id", "board", "label", "ssid", "file_name"];

/// What shows a name went through the gate.
const GATE_MARKS: &[&str] = &["SafeName", "path_in", "with_ext", "file_stem"];

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// True when `text` holds `word` as a whole identifier (inside format strings too:
/// `{run_id}`, `{}.json", r.run_id`).
fn has_word(text: &str, word: &str) -> bool {
    let b = text.as_bytes();
    text.match_indices(word).any(|(i, _)| {
        let before = i.checked_sub(1).map(|k| b[k]);
        let after = b.get(i + word.len()).copied();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

/// The end (exclusive) of the parenthesised arguments opening at `open` in `code`.
fn close_of(code: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (k, &c) in code.iter().enumerate().skip(open) {
        match c {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return k + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// The path-building calls of one file of `host/src/` or `firmware/src/` that take an
/// outside name past the gate.
pub fn paths_from_outside_names(path: &str, text: &str) -> Vec<Violation> {
    let gated = path.starts_with("host/src/") || path.starts_with("firmware/src/");
    if !gated || !path.ends_with(".rs") || is_test_file(path) {
        return Vec::new();
    }
    let code = lex::lex(text).code;
    let toks = lex::tokens(&code);
    let word = |k: usize| toks.get(k).map_or("", |t| t.text);
    let mut v = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if !PATH_CALLS.contains(&t.text) || word(i + 1) != "(" {
            continue;
        }
        // `from` and `new` only as `PathBuf::from` / `Path::new`.
        let owner = if i >= 2 && word(i - 1) == "::" {
            word(i - 2)
        } else {
            ""
        };
        let qualified = match t.text {
            "from" => owner == "PathBuf",
            "new" => owner == "Path",
            _ => i >= 1 && word(i - 1) == ".",
        };
        if !qualified {
            continue;
        }
        let open = toks[i + 1].at;
        // The raw text of the arguments: strings included, for `{run_id}`.
        let args = &text[open..close_of(code.as_bytes(), open)];
        let Some(outside) = OUTSIDE_WORDS.iter().find(|w| has_word(args, w)) else {
            continue;
        };
        if GATE_MARKS.iter().any(|m| args.contains(m)) {
            continue;
        }
        v.push(Violation::new(
            path,
            lex::line_of(text, t.at),
            format!(
                "a path built from `{outside}` past the gate: name the file through \
                 `benchboot_results::name::SafeName` (`SafeName::new(kind, name)?.path_in(dir, \
                 ext)`, or `SafeName::lossy` for a derived stem)"
            ),
        ));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_names_past_the_gate_are_refused() {
        let bad = [
            "PathBuf::from(\"out\").join(format!(\"{}.json\", results.run_id))",
            "dir.join(format!(\"{run_id}.json\"))",
            "Path::new(&doc.board)",
            "dir.join(&entry.file_name)",
            "p.with_file_name(format!(\"{label}.txt\"))",
            "PathBuf::from(ssid)",
        ];
        for call in bad {
            let src = format!("//! x\nfn f() {{\n    let _ = {call};\n}}\n");
            let v = paths_from_outside_names("host/src/x.rs", &src);
            assert_eq!(v.len(), 1, "{call}: {v:?}");
            assert_eq!(v[0].line, 3, "{call}");
        }
    }

    #[test]
    fn gated_names_and_other_paths_pass() {
        let good = [
            "name.path_in(&dir.join(RUNS_DIR), \"json\")",
            "dir.join(SafeName::new(NameKind::RunId, &r.run_id)?.with_ext(\"json\"))",
            "dir.join(format!(\"{}.png\", file_stem(&r.run_id)))",
            "dir.join(DB_FILE)",
            "Path::new(\"/sys/class/net\")",
            "dir.join(format!(\"{boarding}.x\"))",
            "some.new(run_id)",
            "x.from(board)",
        ];
        for call in good {
            let src = format!("//! x\nfn f() {{\n    let _ = {call};\n}}\n");
            assert_eq!(
                paths_from_outside_names("host/src/x.rs", &src),
                [],
                "{call}"
            );
        }
        // Outside the host tool, and in tests, the rule does not apply.
        let src = "//! x\nfn f() { let _ = dir.join(run_id); }\n";
        assert_eq!(paths_from_outside_names("xtask/src/x.rs", src), []);
        assert_eq!(paths_from_outside_names("host/src/x/tests.rs", src), []);
        assert_eq!(paths_from_outside_names("host/src/x.rs", src).len(), 1);
    }
}
