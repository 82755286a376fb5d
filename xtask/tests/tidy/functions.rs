//! The function-length rule: a function of a non-test `.rs` file (not under a `tests/`
//! folder, not `tests.rs`, not in a `#[cfg(test)]` inline module) spans fewer than
//! [`FN_LIMIT`] lines, from the line of its `fn` keyword to the line of its closing brace,
//! or is on the allowlist with its length, which may only shrink: a grown function fails,
//! and so does a stale entry (function gone, under the limit, or shorter than listed).
//! Nested functions count on their own and inside their parent; closures count in the
//! function that holds them.

use crate::lex;
use crate::Violation;

/// The length, in lines, from which a function must be split (or allowlisted).
pub const FN_LIMIT: usize = 120;

/// One function with a body: its name, the 1-based line of `fn` and its length in lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub name: String,
    pub line: usize,
    pub lines: usize,
}

/// The functions with a body in `text` (declarations `fn f();` and `fn(u8)` pointer types
/// are not functions), outside `#[cfg(test)]` inline modules.
pub fn functions(text: &str) -> Vec<Function> {
    let code = lex::without_test_modules(&lex::lex(text).code);
    let toks = lex::tokens(&code);
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if t.text != "fn" {
            continue;
        }
        let Some(name) = toks
            .get(i + 1)
            .filter(|n| n.text.starts_with(|c: char| c.is_alphabetic() || c == '_'))
        else {
            continue;
        };
        // The body's `{`: the first at bracket depth 0 after the name, unless a `;` ends
        // the signature first.
        let mut depth = 0i32;
        let mut open = None;
        for (k, s) in toks.iter().enumerate().skip(i + 2) {
            match s.text {
                "(" | "[" => depth += 1,
                ")" | "]" => depth -= 1,
                ";" if depth == 0 => break,
                "{" if depth == 0 => {
                    open = Some(k);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let mut braces = 0usize;
        let close = toks[open..].iter().find(|s| {
            match s.text {
                "{" => braces += 1,
                "}" => braces -= 1,
                _ => {}
            }
            braces == 0
        });
        let Some(close) = close else { continue };
        let first = lex::line_of(text, t.at);
        out.push(Function {
            name: name.text.to_string(),
            line: first,
            lines: lex::line_of(text, close.at) - first + 1,
        });
    }
    out
}

/// Functions of [`FN_LIMIT`] lines or more: `files` are `(path, text)` of every `.rs`
/// file, `allow` the allowlist `(path, function name, its length when listed)`; an entry
/// covers every function of that name in the file. Fails a long function not listed or
/// grown past its entry, and a stale entry.
pub fn long_functions(files: &[(&str, &str)], allow: &[(&str, &str, usize)]) -> Vec<Violation> {
    let mut v = Vec::new();
    let mut longest: Vec<Option<usize>> = vec![None; allow.len()];
    for &(path, text) in files {
        if crate::files::is_test_file(path) || !path.ends_with(".rs") {
            continue;
        }
        for f in functions(text) {
            let entry = allow.iter().position(|&(p, n, _)| p == path && n == f.name);
            if let Some(k) = entry {
                longest[k] = Some(longest[k].map_or(f.lines, |m: usize| m.max(f.lines)));
            }
            if f.lines < FN_LIMIT {
                continue;
            }
            match entry.map(|k| allow[k]) {
                None => v.push(Violation::new(
                    path,
                    f.line,
                    format!(
                        "`{}` is {} lines (limit {FN_LIMIT}): split it into functions that \
                         each do one step",
                        f.name, f.lines
                    ),
                )),
                Some((_, _, listed)) if f.lines > listed => v.push(Violation::new(
                    path,
                    f.line,
                    format!(
                        "`{}` grew to {} lines, past its allowlist entry ({listed}): split \
                         it, the list only shrinks",
                        f.name, f.lines
                    ),
                )),
                Some(_) => {}
            }
        }
    }
    for (k, &(path, name, listed)) in allow.iter().enumerate() {
        let stale = match longest[k] {
            None => Some("is gone: remove its entry".to_string()),
            Some(n) if n < FN_LIMIT => {
                Some(format!("is {n} lines, under the limit: remove its entry"))
            }
            Some(n) if n < listed => Some(format!("is {n} lines: lower its entry to {n}")),
            Some(_) => None,
        };
        if let Some(why) = stale {
            v.push(Violation::new(
                path,
                1,
                format!("`{name}` (listed at {listed} lines) {why}"),
            ));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(name: &str, n: usize) -> String {
        let mut s = format!("pub fn {name}(a: [u8; 2]) -> impl Fn() -> u8 {{\n");
        for _ in 0..n - 3 {
            s.push_str("    let _x = { 1 };\n");
        }
        s.push_str("    move || a[0]\n}\n");
        s
    }

    #[test]
    fn functions_are_measured_from_fn_to_the_closing_brace() {
        let text = format!(
            "//! X.\ntrait T {{\n    fn decl(&self);\n}}\ntype P = fn(u8) -> u8;\n{}\
             #[cfg(test)]\nmod tests {{\n{}}}\n",
            body("f", 5),
            body("in_test", 200)
        );
        assert_eq!(
            functions(&text),
            [Function {
                name: "f".into(),
                line: 6,
                lines: 5
            }]
        );
    }

    #[test]
    fn a_long_function_fails_unless_listed_and_the_list_only_shrinks() {
        let long = format!("//! X.\n{}", body("gather", 130));
        let files = [
            ("x/src/a.rs", long.as_str()),
            ("x/tests/t.rs", long.as_str()),
        ];
        let v = long_functions(&files, &[]);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!((v[0].path.as_str(), v[0].line), ("x/src/a.rs", 2));
        assert!(v[0].message.contains("`gather` is 130 lines"), "{}", v[0]);

        assert!(long_functions(&files, &[("x/src/a.rs", "gather", 130)]).is_empty());
        let grown = long_functions(&files, &[("x/src/a.rs", "gather", 125)]);
        assert!(grown[0].message.contains("grew to 130"), "{grown:?}");
        let stale = long_functions(&files, &[("x/src/a.rs", "gather", 140)]);
        assert!(
            stale[0].message.contains("lower its entry to 130"),
            "{stale:?}"
        );
        let gone = long_functions(
            &files,
            &[("x/src/b.rs", "gather", 130), ("x/src/a.rs", "gather", 130)],
        );
        assert_eq!(gone.len(), 1, "{gone:?}");
        assert!(gone[0].message.contains("is gone"), "{gone:?}");

        let short = format!("//! X.\n{}", body("gather", 119));
        let v = long_functions(
            &[("x/src/a.rs", short.as_str())],
            &[("x/src/a.rs", "gather", 130)],
        );
        assert!(v[0].message.contains("under the limit"), "{v:?}");
    }
}
