//! `unsafe` only where ARCHITECTURE.md says: an `unsafe` block, fn, impl or trait, and an
//! `allow(unsafe_code)` / `expect(unsafe_code)`, only in the files of [`UNSAFE_FILES`].
//! An outer `#[allow(unsafe_code)]` on a `mod x;` declaration counts as being in `x`'s
//! file (that is how a crate root allows one module). Comments, strings and lint names
//! (`unsafe_op_in_unsafe_fn`, `forbid(unsafe_code)`) are not unsafe code.

use crate::lex;
use crate::Violation;

/// The files allowed unsafe code: the syscall edges and the memory kernels.
pub const UNSAFE_FILES: &[&str] = &[
    "firmware/src/sys.rs",
    "firmware/src/log.rs",
    "crates/dhcp/src/bindtodevice.rs",
    "crates/tcpinfo/src/sys.rs",
    "crates/memory/src/kernels.rs",
    "crates/memory/src/mhz.rs",
    "crates/memory/src/sys.rs",
    "crates/windisk/src/sys.rs",
];

/// The files a `mod name;` declared in `path` may live in.
fn child_files(path: &str, name: &str) -> [String; 2] {
    let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
    let base = match file {
        "lib.rs" | "main.rs" | "mod.rs" => dir.to_string(),
        f => format!("{dir}/{}", f.trim_end_matches(".rs")),
    };
    [format!("{base}/{name}.rs"), format!("{base}/{name}/mod.rs")]
}

/// The unsafe code of one `.rs` file outside `allowed`.
pub fn unsafe_outside(path: &str, text: &str, allowed: &[&str]) -> Vec<Violation> {
    if !path.ends_with(".rs") || allowed.contains(&path) {
        return Vec::new();
    }
    let code = lex::lex(text).code;
    let toks = lex::tokens(&code);
    let mut v = Vec::new();
    let fix = format!(
        "move it into one of the modules allowed unsafe code ({}), or add the file to \
         UNSAFE_FILES in xtask/tests/tidy and to ARCHITECTURE.md's invariant, saying why",
        allowed.join(", ")
    );
    for (i, t) in toks.iter().enumerate() {
        let word = |k: usize| toks.get(k).map_or("", |t| t.text);
        if t.text == "unsafe" {
            v.push(Violation::new(
                path,
                lex::line_of(text, t.at),
                format!("`unsafe`: {fix}"),
            ));
        } else if t.text == "unsafe_code" {
            // The lint list it is in: back to its `(`, the lint level before it.
            let mut open = i;
            while open > 0
                && i - open < 16
                && !matches!(word(open), "(" | "[" | "]" | ";" | "{" | "}")
            {
                open -= 1;
            }
            if word(open) != "(" || open == 0 || !matches!(word(open - 1), "allow" | "expect") {
                continue;
            }
            // Find the attribute's end, then the item it is on.
            let inner = open >= 3 && word(open - 2) == "[" && word(open - 3) == "!";
            let mut j = i;
            while j < toks.len() && word(j) != "]" {
                j += 1;
            }
            j += 1;
            // Skip further attributes and `pub` / `pub(crate)`.
            loop {
                match word(j) {
                    "#" => {
                        while j < toks.len() && word(j) != "]" {
                            j += 1;
                        }
                        j += 1;
                    }
                    "pub" if word(j + 1) == "(" => j += 4,
                    "pub" => j += 1,
                    _ => break,
                }
            }
            let on_module = !inner && word(j) == "mod" && word(j + 2) == ";";
            let ok = on_module
                && child_files(path, word(j + 1))
                    .iter()
                    .any(|f| allowed.contains(&f.as_str()));
            if !ok {
                v.push(Violation::new(
                    path,
                    lex::line_of(text, t.at),
                    format!("`allow(unsafe_code)`: {fix}"),
                ));
            }
        }
    }
    v
}

/// ARCHITECTURE.md names every file of `allowed`.
pub fn architecture_names(architecture: &str, allowed: &[&str]) -> Vec<Violation> {
    allowed
        .iter()
        .filter(|f| !architecture.contains(**f))
        .map(|f| {
            Violation::new(
                "ARCHITECTURE.md",
                1,
                format!(
                    "`{f}` may hold unsafe code but the invariant on `unsafe` does not name it"
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALLOWED: &[&str] = &["k/src/sys.rs", "k/src/deep/raw.rs"];

    #[test]
    fn unsafe_code_fires_outside_the_allowed_files() {
        let clean = "//! No unsafe here (the word in a comment is fine).\n\
                     #![forbid(unsafe_code)]\n#![deny(unsafe_op_in_unsafe_fn)]\n\
                     #[allow(unsafe_code)]\nmod sys;\nmod deep { }\n\
                     fn f() -> &'static str { \"unsafe { }\" }\n";
        assert!(unsafe_outside("k/src/lib.rs", clean, ALLOWED).is_empty());
        let in_deep = "//! D.\n#[allow(unsafe_code)]\npub(crate) mod raw;\n";
        assert!(unsafe_outside("k/src/deep.rs", in_deep, ALLOWED).is_empty());
        assert!(unsafe_outside("k/src/sys.rs", "unsafe fn f() {}", ALLOWED).is_empty());

        let bad = "//! Bad.\nfn f() {\n    unsafe { g() }\n}\nunsafe impl Send for X {}\n\
                   #[allow(unsafe_code)]\nmod other;\n#[allow(unsafe_code)]\nfn h() {}\n\
                   #![allow(unsafe_code)]\n";
        let v = unsafe_outside("k/src/lib.rs", bad, ALLOWED);
        let lines: Vec<usize> = v.iter().map(|v| v.line).collect();
        assert_eq!(lines, [3, 5, 6, 8, 10], "{v:#?}");
        assert!(v[0].message.starts_with("`unsafe`: move it"), "{}", v[0]);
        assert!(v[2].message.starts_with("`allow(unsafe_code)`"), "{}", v[2]);
    }

    #[test]
    fn architecture_must_name_every_allowed_file() {
        let doc = "`unsafe` lives in `k/src/sys.rs` only.";
        let v = architecture_names(doc, ALLOWED);
        assert_eq!(v.len(), 1);
        assert!(v[0].message.contains("k/src/deep/raw.rs"));
        assert!(architecture_names("k/src/sys.rs, k/src/deep/raw.rs", ALLOWED).is_empty());
    }
}
