//! Each program writes to its terminal through one module that escapes every line.
//!
//! PID 1 writes to its console only through `firmware/src/console.rs`: there every line
//! gets the `benchboot:` prefix and has its control and bidi characters written out
//! (`benchboot_results::text::escape`), so a label, a card's file name or an SSID quoted
//! in a line cannot start a fake protocol line or drive the reader's terminal. The host
//! tool writes only through `host/src/out.rs` (`out!`, `outln!`, `err!`, `errln!`,
//! `out::json`), which escapes every line a document, log, card, plan or network gave.
//! Anywhere else in those crates' code, `print!`, `println!`, `eprint!`, `eprintln!`,
//! `dbg!` and a handle from `io::stdout` / `io::stderr` / `stdio::stdout` are refused.
//! Test files (`tests.rs`, `tests/`) may print.

use crate::files::is_test_file;
use crate::lex;
use crate::Violation;

/// The one firmware file that writes to the console.
pub const CONSOLE_FILE: &str = "firmware/src/console.rs";

/// The one host tool file that writes to the terminal.
pub const HOST_OUT_FILE: &str = "host/src/out.rs";

/// The console writes of one file of `firmware/src/` other than [`CONSOLE_FILE`].
pub fn console_writes(path: &str, text: &str) -> Vec<Violation> {
    writes_outside(
        path,
        text,
        "firmware/src/",
        CONSOLE_FILE,
        "print with `console::say` (or `tell!`), which prefixes and escapes the line",
    )
}

/// The terminal writes of one file of `host/src/` other than [`HOST_OUT_FILE`].
pub fn host_writes(path: &str, text: &str) -> Vec<Violation> {
    writes_outside(
        path,
        text,
        "host/src/",
        HOST_OUT_FILE,
        "print with `crate::outln!` / `errln!` / `out!` / `err!` (or `out::json`), which \
         escape every line",
    )
}

/// Writes to the terminal in a non-test `.rs` file under `dir` other than `allowed`.
fn writes_outside(path: &str, text: &str, dir: &str, allowed: &str, fix: &str) -> Vec<Violation> {
    if !path.starts_with(dir) || !path.ends_with(".rs") || path == allowed || is_test_file(path) {
        return Vec::new();
    }
    let code = lex::lex(text).code;
    let toks = lex::tokens(&code);
    let word = |k: usize| toks.get(k).map_or("", |t| t.text);
    let mut v = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let what = match t.text {
            "print" | "println" | "eprint" | "eprintln" | "dbg" if word(i + 1) == "!" => {
                format!("`{}!`", t.text)
            }
            "stdout" | "stderr"
                if i >= 2 && word(i - 1) == "::" && matches!(word(i - 2), "io" | "stdio") =>
            {
                format!("`{}::{}`", word(i - 2), t.text)
            }
            _ => continue,
        };
        v.push(Violation::new(
            path,
            lex::line_of(text, t.at),
            format!("{what} bypasses {allowed}: {fix}"),
        ));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_outside_the_console_module_are_refused() {
        let src =
            "//! x\nfn f() {\n    println!(\"{}\", label);\n    let _ = std::io::stderr();\n}\n";
        let v = console_writes("firmware/src/steps.rs", src);
        let got: Vec<(usize, bool)> = v
            .iter()
            .map(|v| (v.line, v.message.contains("console::say")))
            .collect();
        assert_eq!(got, [(3, true), (4, true)], "{v:?}");
        assert!(v[0].message.starts_with("`println!`"), "{}", v[0]);
        assert!(v[1].message.starts_with("`io::stderr`"), "{}", v[1]);
        // The console module itself, other crates, and words in comments or strings pass.
        assert!(console_writes(CONSOLE_FILE, src).is_empty());
        assert!(console_writes("host/src/main.rs", src).is_empty());
        assert!(console_writes("firmware/src/sys/tests.rs", src).is_empty());
        let quiet =
            "//! println!\nfn f() { let s = \"eprintln!(x)\"; // dbg!(s)\n cmd.stdout(p); }\n";
        assert!(console_writes("firmware/src/x.rs", quiet).is_empty());
    }

    #[test]
    fn host_prints_outside_its_out_module_are_refused() {
        let src = "//! x\nfn f() {\n    eprint!(\"{}\", ssid);\n    dbg!(x);\n}\n";
        let v = host_writes("host/src/peer.rs", src);
        let got: Vec<usize> = v.iter().map(|v| v.line).collect();
        assert_eq!(got, [3, 4], "{v:?}");
        assert!(
            v[0].message.contains("bypasses host/src/out.rs"),
            "{}",
            v[0]
        );
        assert!(host_writes(HOST_OUT_FILE, src).is_empty());
        assert!(host_writes("host/src/compare/tests.rs", src).is_empty());
        assert!(host_writes("host/tests/integration/fetch.rs", src).is_empty());
        let gated = "//! x\nfn f() { crate::errln!(\"{}\", ssid); crate::out!(\"x\"); }\n";
        assert!(host_writes("host/src/peer.rs", gated).is_empty());
    }
}
