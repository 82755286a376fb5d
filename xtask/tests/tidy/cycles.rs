//! No module cycles: per crate root (`src/lib.rs`, `src/main.rs`, `src/bin/*.rs`), the
//! graph of its top-level modules, an edge `a -> b` for every path from a file of `a` to
//! `b` (`crate::b`, `$crate::b`, `use crate::{b, ..}`, `super::` chains that climb to the
//! root, `pub use` re-exports alike, and `crate::Item` where the root re-exports `Item`
//! from `b`: `pub use b::Item;`). `#[cfg(test)]` inline modules, `tests.rs` and
//! `tests/` folders are left out: tests may reach anywhere. A strongly connected
//! component of more than one module is a violation at every edge inside it.

use std::collections::{BTreeMap, BTreeSet};

use crate::lex::{self, Tok};
use crate::Violation;

/// One reference of a module to another: where it is.
#[derive(Debug, Clone)]
struct Edge {
    path: String,
    line: usize,
    count: usize,
}

/// The modules a file declares at its top level (`mod x;` / `mod x { .. }`): those not
/// under `#[cfg(test)]`, or with `test` only those under it.
fn declared_modules(root_text: &str, test: bool) -> BTreeSet<String> {
    let code = lex::lex(root_text).code;
    let toks = lex::tokens(&code);
    let mut mods = BTreeSet::new();
    let mut depth = 0usize;
    let mut item_start = 0;
    for (i, t) in toks.iter().enumerate() {
        match t.text {
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    item_start = i + 1;
                }
            }
            ";" if depth == 0 => item_start = i + 1,
            "mod" if depth == 0 => {
                let attrs = &code[toks[item_start.min(i)].at..t.at];
                if let Some(name) = toks.get(i + 1) {
                    if attrs.replace(' ', "").contains("cfg(test)") == test {
                        mods.insert(name.text.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    mods
}

/// The items a crate root re-exports from its modules (`pub use net::{Plan, Wifi as W};`
/// makes `crate::Plan` a path into `net`): name -> module. Glob re-exports are not
/// followed.
fn root_reexports(root_text: &str, mods: &BTreeSet<String>) -> BTreeMap<String, String> {
    let code = lex::lex(root_text).code;
    let toks = lex::tokens(&code);
    let mut out = BTreeMap::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        match toks[i].text {
            "{" => depth += 1,
            "}" => depth = depth.saturating_sub(1),
            "use" if depth == 0 => {
                let end = (i..toks.len())
                    .find(|&k| toks[k].text == ";")
                    .unwrap_or(toks.len());
                let mut path: Vec<&str> = toks[i + 1..end].iter().map(|t| t.text).collect();
                if matches!(path.first(), Some(&"crate") | Some(&"self"))
                    && path.get(1) == Some(&"::")
                {
                    path.drain(..2);
                }
                if let Some(m) = path.first().copied().filter(|m| mods.contains(*m)) {
                    path.push(";");
                    for w in path.windows(2).skip(1) {
                        let leaf = matches!(w[1], "," | "}" | ";");
                        let name = w[0].starts_with(|c: char| c.is_alphabetic() || c == '_');
                        if leaf && name && w[0] != "self" {
                            out.insert(w[0].to_string(), m.to_string());
                        }
                    }
                }
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// `code` with every `#[cfg(test)] mod name { .. }` blanked.
fn without_test_modules(code: &str) -> String {
    let mut out = code.as_bytes().to_vec();
    let mut from = 0;
    while let Some(k) = code[from..].find("#[cfg(test)]") {
        let at = from + k;
        from = at + 1;
        let toks = lex::tokens(&code[at..]);
        // #, [, cfg, (, test, ), ], then maybe `pub`, `mod`, name, `{`.
        let rest: Vec<&str> = toks.iter().skip(7).take(4).map(|t| t.text).collect();
        let brace = match rest.as_slice() {
            ["mod", _, "{", ..] => 9,
            ["pub", "mod", _, "{"] => 10,
            _ => continue,
        };
        let mut depth = 0;
        for t in &toks[brace..] {
            match t.text {
                "{" => depth += 1,
                "}" => {
                    depth -= 1;
                    if depth == 0 {
                        let end = at + t.at + 1;
                        for b in &mut out[at..end] {
                            if *b != b'\n' {
                                *b = b' ';
                            }
                        }
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    String::from_utf8(out).expect("blanking keeps UTF-8")
}

/// The top-level names a path reaches after `crate ::` at `toks[i]` (`i` the token after
/// `::`): one name, or each first name of a `{a, b::c}` group.
fn names_after(toks: &[Tok<'_>], i: usize) -> Vec<(usize, String)> {
    match toks.get(i) {
        Some(t) if t.text == "{" => {
            let mut names = Vec::new();
            let mut depth = 0;
            let mut expect = true;
            for t in &toks[i..] {
                match t.text {
                    "{" => {
                        depth += 1;
                        if depth == 1 {
                            expect = true;
                        }
                    }
                    "}" => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    "," if depth == 1 => expect = true,
                    w if depth == 1 && expect => {
                        names.push((t.at, w.to_string()));
                        expect = false;
                    }
                    _ => {}
                }
            }
            names
        }
        Some(t) => vec![(t.at, t.text.to_string())],
        None => Vec::new(),
    }
}

/// The top-level modules one file of module path `module` (e.g. `["net", "wifi"]` for
/// `src/net/wifi.rs`) names, with the byte offset of each reference.
fn references(module: &[String], text: &str) -> Vec<(usize, String)> {
    let code = without_test_modules(&lex::lex(text).code);
    let toks = lex::tokens(&code);
    let mut refs = Vec::new();
    // Inline `mod x { .. }` blocks deepen the module path for `super::`.
    let mut braces = 0usize;
    let mut inline: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i];
        let prev = i.checked_sub(1).map(|p| toks[p].text);
        match t.text {
            "{" => {
                braces += 1;
                if i >= 2 && toks[i - 2].text == "mod" {
                    inline.push(braces);
                }
            }
            "}" => {
                if inline.last() == Some(&braces) {
                    inline.pop();
                }
                braces = braces.saturating_sub(1);
            }
            "crate" if prev != Some("::") && toks.get(i + 1).map(|t| t.text) == Some("::") => {
                refs.extend(names_after(&toks, i + 2));
            }
            "super" if prev != Some("::") => {
                let mut k = 0;
                let mut j = i;
                while toks.get(j).map(|t| t.text) == Some("super")
                    && toks.get(j + 1).map(|t| t.text) == Some("::")
                {
                    k += 1;
                    j += 2;
                }
                if k > 0 && k >= module.len() + inline.len() {
                    refs.extend(names_after(&toks, j));
                }
                i = j.max(i + 1);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    refs
}

/// The cycles among the top-level modules of the crate at `member` (e.g. `crates/plan`):
/// `files` are the crate's `(path, text)` pairs (others are ignored).
pub fn module_cycles(member: &str, files: &[(&str, &str)]) -> Vec<Violation> {
    let src = format!("{member}/src/");
    let mut roots: Vec<(&str, BTreeSet<String>, BTreeMap<String, String>)> = files
        .iter()
        .filter(|(p, _)| {
            p.strip_prefix(&src).is_some_and(|r| {
                r == "lib.rs" || r == "main.rs" || (r.starts_with("bin/") && !r[4..].contains('/'))
            })
        })
        .map(|&(p, t)| {
            let mods = declared_modules(t, false);
            let reexports = root_reexports(t, &mods);
            (p, mods, reexports)
        })
        .collect();
    roots.sort();
    let mut v = Vec::new();
    for (root, mods, reexports) in &roots {
        let mut graph: BTreeMap<&str, BTreeMap<&str, Edge>> = BTreeMap::new();
        for &(path, text) in files {
            let Some(rel) = path.strip_prefix(&src) else {
                continue;
            };
            if crate::files::is_test_file(path) || !rel.ends_with(".rs") {
                continue;
            }
            let mut module: Vec<String> = rel
                .trim_end_matches(".rs")
                .split('/')
                .map(str::to_string)
                .collect();
            if module.last().map(String::as_str) == Some("mod") {
                module.pop();
            }
            // A file its parent declares under #[cfg(test)] (`mod snapshot_tests;`).
            let test_only = (1..module.len()).any(|k| {
                let parent = module[..k].join("/");
                files
                    .iter()
                    .find(|(p, _)| {
                        *p == format!("{src}{parent}.rs") || *p == format!("{src}{parent}/mod.rs")
                    })
                    .is_some_and(|(_, t)| declared_modules(t, true).contains(&module[k]))
            });
            if test_only {
                continue;
            }
            let Some(top) = module.first().and_then(|m| mods.get(m)) else {
                continue;
            };
            if rel.starts_with("bin/") {
                continue;
            }
            for (at, name) in references(&module, text) {
                let Some(to) = mods.get(&name).or_else(|| reexports.get(&name)) else {
                    continue;
                };
                if to == top {
                    continue;
                }
                let e = graph.entry(top).or_default().entry(to).or_insert(Edge {
                    path: path.to_string(),
                    line: lex::line_of(text, at),
                    count: 0,
                });
                e.count += 1;
            }
        }
        v.extend(cycle_violations(root, &graph));
    }
    v
}

/// Every edge inside a strongly connected component of more than one module.
fn cycle_violations(root: &str, graph: &BTreeMap<&str, BTreeMap<&str, Edge>>) -> Vec<Violation> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from];
        while let Some(n) = todo.pop() {
            for &m in graph.get(n).into_iter().flat_map(|e| e.keys()) {
                if seen.insert(m) {
                    todo.push(m);
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&str, BTreeSet<&str>> = graph.keys().map(|&n| (n, reach(n))).collect();
    let mut v = Vec::new();
    for (&a, edges) in graph {
        for (&b, e) in edges {
            if !reaches.get(b).is_some_and(|r| r.contains(a)) {
                continue;
            }
            let scc: BTreeSet<&str> = reaches[a]
                .iter()
                .copied()
                .filter(|n| reaches.get(n).is_some_and(|r| r.contains(a)))
                .collect();
            let names: Vec<&str> = scc.into_iter().collect();
            v.push(Violation::new(
                &e.path,
                e.line,
                format!(
                    "module cycle {{{}}} under {root}: `{a}` uses `{b}` here ({} reference(s)), \
                     and `{b}` reaches `{a}`: move what they share into a module below both \
                     (keep public paths with `pub use`)",
                    names.join(", "),
                    e.count
                ),
            ));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_and_a_triangle_fire_a_chain_does_not() {
        let files = [
            ("c/src/lib.rs", "//! C.\npub mod a;\nmod b;\nmod c;\nmod d;\n#[cfg(test)]\nmod tests;\npub use a::A;\n"),
            ("c/src/a.rs", "//! A.\nuse crate::{b::B, d};\npub struct A;\n"),
            ("c/src/b.rs", "//! B.\n// crate::c is only a comment\npub struct B(super::c::C);\n"),
            ("c/src/c.rs", "//! C.\npub struct C;\nfn f() -> crate::a::A { crate::a::A }\n"),
            ("c/src/d/mod.rs", "//! D.\nmod inner { use super::super::e; }\n#[cfg(test)]\nmod tests { use crate::a; }\n#[cfg(test)]\nmod snap;\n"),
            ("c/src/tests.rs", "//! T.\nuse crate::d;\n"),
            ("c/src/d/snap.rs", "//! Snapshots.\nuse crate::a::A;\n"),
        ];
        let v = module_cycles("c", &files);
        let got: Vec<String> = v.iter().map(|v| format!("{}:{}", v.path, v.line)).collect();
        assert_eq!(
            got,
            ["c/src/a.rs:2", "c/src/b.rs:3", "c/src/c.rs:3"],
            "{v:#?}"
        );
        assert!(v[0].message.contains("{a, b, c}"), "{}", v[0]);
        assert!(v[2].message.contains("(2 reference(s))"), "{}", v[2]);

        // Break the triangle: c no longer reaches a.
        let mut fixed = files;
        fixed[3].1 = "//! C.\npub struct C;\n";
        assert!(module_cycles("c", &fixed).is_empty());

        // A path through the root's re-export is a path into the module.
        let reexported = [
            (
                "c/src/lib.rs",
                "//! C.\nmod a;\nmod b;\npub use a::{A, Other as O};\nuse b::{self, B};\n",
            ),
            ("c/src/a.rs", "//! A.\npub struct A(crate::B);\n"),
            ("c/src/b.rs", "//! B.\npub struct B(Box<crate::O>);\n"),
        ];
        let v = module_cycles("c", &reexported);
        assert_eq!(v.len(), 2, "{v:#?}");
        assert_eq!((v[1].path.as_str(), v[1].line), ("c/src/b.rs", 2));
        let mut one_way = reexported;
        one_way[2].1 = "//! B.\npub struct B(Box<crate::A2>);\n";
        assert!(module_cycles("c", &one_way).is_empty());

        // A file's own super:: (src/d/x.rs -> super::y is d::y) is no edge.
        let nested = [
            ("c/src/lib.rs", "//! C.\nmod a;\nmod d;\n"),
            ("c/src/a.rs", "//! A.\nuse crate::d::x;\n"),
            ("c/src/d/x.rs", "//! X.\nuse super::a::Y;\n"),
        ];
        assert!(module_cycles("c", &nested).is_empty());
        let nested_up = [
            nested[0],
            nested[1],
            ("c/src/d/x.rs", "//! X.\nuse super::super::a::Y;\n"),
        ];
        assert_eq!(module_cycles("c", &nested_up).len(), 2);
    }
}
