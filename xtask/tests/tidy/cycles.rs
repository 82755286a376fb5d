//! No module cycles, at any depth: per crate root (`src/lib.rs`, `src/main.rs`), the
//! modules under it form a tree (files, and inline `mod x { .. }` blocks), and for every
//! module the graph of its children must have no cycle. A reference from module `F` to
//! module `T` is an edge between the two children of their deepest common ancestor that
//! lead to `F` and to `T`: `crate::store::temp::f` written in `store/recover.rs` is the
//! edge `recover -> temp` among the children of `store`, and the edge `a -> b` among the
//! root's when written in `a/x.rs` about `crate::b::y`.
//!
//! A reference is a path that starts with `crate`, `$crate`, `super` or `self`, in code
//! or in a `use` tree (`use super::{temp::{self, Temp}, Plan}`), or a `use` path whose
//! first name is a child module or an import of the module it is written in. A path
//! walks the tree as far as its names are modules, then through the imports of the module
//! it has reached (`pub use temp::Temp;` in `store/mod.rs` makes `super::Temp` a path
//! into `store::temp`, private `use` alike, since children see their ancestors' imports).
//! Glob imports are not followed. `#[cfg(test)]` inline modules, files their parent
//! declares under `#[cfg(test)]`, `tests.rs` and `tests/` folders are left out: tests may
//! reach anywhere. Every edge inside a strongly connected component of more than one
//! child is a violation.

use std::collections::{BTreeMap, BTreeSet};

use crate::lex::{self, Tok};
use crate::Violation;

/// A module's path from the crate root: `["store", "temp"]`; the root is `[]`.
type ModPath = Vec<String>;

/// One `use` binding: the name it brings into scope, the path written (first segment
/// included: `crate`, `super`, `self` or a name) and the byte offset of that path.
#[derive(Debug, Clone)]
struct UsePath {
    name: String,
    segs: Vec<String>,
    at: usize,
}

/// One source file of the tree: its module path and blanked code.
struct Source<'a> {
    path: &'a str,
    module: ModPath,
    text: &'a str,
    code: String,
}

/// The module tree of one crate root.
struct Tree {
    modules: BTreeSet<ModPath>,
    /// Per module, the names its (non-glob) `use` items bind: name -> (written in, path).
    imports: BTreeMap<ModPath, BTreeMap<String, Vec<String>>>,
}

impl Tree {
    /// The module a path written in `base` reaches: `None` for a path outside the crate
    /// (an external crate, std), else the deepest module its names walk to.
    fn resolve(&self, base: &[String], segs: &[String], hops: usize) -> Option<ModPath> {
        let (mut abs, rest): (ModPath, &[String]) = match segs.first().map(String::as_str) {
            Some("crate") => (Vec::new(), &segs[1..]),
            Some("self") => (base.to_vec(), &segs[1..]),
            Some("super") => {
                let ups = segs.iter().take_while(|s| *s == "super").count();
                let keep = base.len().checked_sub(ups)?;
                (base[..keep].to_vec(), &segs[ups..])
            }
            Some(first) => {
                let mut child = base.to_vec();
                child.push(first.to_string());
                if self.modules.contains(&child) {
                    (base.to_vec(), segs)
                } else {
                    let import = self.imports.get(base)?.get(first)?;
                    if hops == 0 {
                        return None;
                    }
                    let to = self.resolve(base, import, hops - 1)?;
                    return self.walk(to, &segs[1..], hops - 1);
                }
            }
            None => return None,
        };
        if rest.is_empty() {
            return Some(abs);
        }
        abs = self.walk(abs, rest, hops)?;
        Some(abs)
    }

    /// From module `abs`, down through child modules, then through an import.
    fn walk(&self, mut abs: ModPath, rest: &[String], hops: usize) -> Option<ModPath> {
        for (k, seg) in rest.iter().enumerate() {
            let mut child = abs.clone();
            child.push(seg.clone());
            if self.modules.contains(&child) {
                abs = child;
                continue;
            }
            let via = self.imports.get(&abs).and_then(|m| m.get(seg));
            return match via {
                Some(import) if hops > 0 => {
                    let to = self.resolve(&abs, import, hops - 1)?;
                    self.walk(to, &rest[k + 1..], hops - 1).or(Some(abs))
                }
                _ => Some(abs),
            };
        }
        Some(abs)
    }
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

/// The leaves of the `use` tree starting at `toks[i]` under `prefix`; returns them and
/// the index after the tree.
fn use_tree(toks: &[Tok<'_>], mut i: usize, prefix: &[String], out: &mut Vec<UsePath>) -> usize {
    let mut segs = prefix.to_vec();
    let mut at = toks.get(i).map_or(0, |t| t.at);
    loop {
        let Some(t) = toks.get(i) else { return i };
        match t.text {
            "{" => {
                i += 1;
                while toks.get(i).is_some_and(|t| t.text != "}") {
                    i = use_tree(toks, i, &segs, out);
                    if toks.get(i).is_some_and(|t| t.text == ",") {
                        i += 1;
                    }
                }
                return i + 1;
            }
            "*" => return i + 1,
            "::" | "$" => i += 1,
            "," | "}" | ";" => {
                push_leaf(&segs, None, at, out);
                return i;
            }
            "as" => {
                let alias = toks.get(i + 1).map(|t| t.text.to_string());
                push_leaf(&segs, alias, at, out);
                return i + 2;
            }
            w => {
                if segs.len() == prefix.len() {
                    at = t.at;
                }
                segs.push(w.to_string());
                i += 1;
            }
        }
    }
}

/// One `use` leaf: `a::b` binds `b`, `a::{self}` binds `a`, `a::b as c` binds `c`.
fn push_leaf(segs: &[String], alias: Option<String>, at: usize, out: &mut Vec<UsePath>) {
    let mut segs = segs.to_vec();
    if segs.last().map(String::as_str) == Some("self") {
        segs.pop();
    }
    let Some(last) = segs.last().cloned() else {
        return;
    };
    out.push(UsePath {
        name: alias.unwrap_or(last),
        segs,
        at,
    });
}

/// Every path of one file, each with the module it is written in (the file's module,
/// deepened by inline `mod x { .. }` blocks), and whether it is a top-level `use` of that
/// module (an import others may walk through).
fn paths(file: &Source<'_>) -> Vec<(ModPath, UsePath, bool)> {
    let toks = lex::tokens(&file.code);
    let mut out = Vec::new();
    let mut braces = 0usize;
    // (brace depth at which the block opened, module name)
    let mut inline: Vec<(usize, String)> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i];
        let prev = i.checked_sub(1).map(|p| toks[p].text);
        // The module the token is written in: the file's, deepened by inline blocks.
        let base = || -> ModPath {
            let mut b = file.module.clone();
            b.extend(inline.iter().map(|(_, n)| n.clone()));
            b
        };
        match t.text {
            "{" => {
                braces += 1;
                if i >= 2 && toks[i - 2].text == "mod" {
                    inline.push((braces, toks[i - 1].text.to_string()));
                }
            }
            "}" => {
                if inline.last().is_some_and(|(d, _)| *d == braces) {
                    inline.pop();
                }
                braces = braces.saturating_sub(1);
            }
            "use" if prev != Some("::") => {
                let top = braces == inline.last().map_or(0, |(d, _)| *d);
                let (base, mut leaves) = (base(), Vec::new());
                i = use_tree(&toks, i + 1, &[], &mut leaves);
                out.extend(leaves.into_iter().map(|u| (base.clone(), u, top)));
                continue;
            }
            "crate" | "super" | "self"
                if prev != Some("::") && toks.get(i + 1).is_some_and(|n| n.text == "::") =>
            {
                let mut segs = vec![t.text.to_string()];
                let mut j = i + 1;
                while toks.get(j).is_some_and(|n| n.text == "::")
                    && toks.get(j + 1).is_some_and(|n| {
                        n.text
                            .starts_with(|c: char| c.is_alphanumeric() || c == '_')
                    })
                {
                    segs.push(toks[j + 1].text.to_string());
                    j += 2;
                }
                let name = segs.last().cloned().unwrap_or_default();
                out.push((
                    base(),
                    UsePath {
                        name,
                        segs,
                        at: t.at,
                    },
                    false,
                ));
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The inline modules a file declares (outside `#[cfg(test)]`), as paths below `module`.
fn inline_modules(module: &[String], code: &str) -> Vec<ModPath> {
    let toks = lex::tokens(code);
    let mut out = Vec::new();
    let mut stack: Vec<(usize, ModPath)> = vec![(0, module.to_vec())];
    let mut braces = 0usize;
    for (i, t) in toks.iter().enumerate() {
        match t.text {
            "{" => {
                braces += 1;
                if i >= 2 && toks[i - 2].text == "mod" {
                    let mut m = stack.last().map(|(_, m)| m.clone()).unwrap_or_default();
                    m.push(toks[i - 1].text.to_string());
                    out.push(m.clone());
                    stack.push((braces, m));
                }
            }
            "}" => {
                if stack.len() > 1 && stack.last().is_some_and(|(d, _)| *d == braces) {
                    stack.pop();
                }
                braces = braces.saturating_sub(1);
            }
            _ => {}
        }
    }
    out
}

/// The non-test source files of the crate at `member` under one root's top-level modules.
fn sources<'a>(
    member: &str,
    files: &[(&'a str, &'a str)],
    mods: &BTreeSet<String>,
) -> Vec<Source<'a>> {
    let src = format!("{member}/src/");
    let mut out = Vec::new();
    for &(path, text) in files {
        let Some(rel) = path.strip_prefix(&src) else {
            continue;
        };
        if crate::files::is_test_file(path) || !rel.ends_with(".rs") || rel.starts_with("bin/") {
            continue;
        }
        let mut module: ModPath = rel
            .trim_end_matches(".rs")
            .split('/')
            .map(str::to_string)
            .collect();
        if module.last().map(String::as_str) == Some("mod") {
            module.pop();
        }
        let is_root = rel == "lib.rs" || rel == "main.rs";
        if is_root {
            module.clear();
        } else if !module.first().is_some_and(|m| mods.contains(m)) {
            continue;
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
        let code = lex::without_test_modules(&lex::lex(text).code);
        out.push(Source {
            path,
            module,
            text,
            code,
        });
    }
    out
}

/// One reference between two children of a module: where the first is.
#[derive(Debug, Clone)]
struct Edge {
    path: String,
    line: usize,
    count: usize,
}

/// The module cycles, at every depth, of the crate at `member` (e.g. `crates/plan`):
/// `files` are the crate's `(path, text)` pairs (others are ignored).
pub fn module_cycles(member: &str, files: &[(&str, &str)]) -> Vec<Violation> {
    let src = format!("{member}/src/");
    let mut roots: Vec<(&str, &str)> = files
        .iter()
        .filter(|(p, _)| {
            p.strip_prefix(&src)
                .is_some_and(|r| r == "lib.rs" || r == "main.rs")
        })
        .copied()
        .collect();
    roots.sort();
    let mut v = Vec::new();
    for (root, root_text) in roots {
        let mods = declared_modules(root_text, false);
        let own: Vec<(&str, &str)> = files
            .iter()
            .copied()
            .filter(|(p, _)| {
                let r = p.strip_prefix(&src).unwrap_or("");
                (r != "lib.rs" && r != "main.rs") || *p == root
            })
            .collect();
        let sources = sources(member, &own, &mods);
        let mut tree = Tree {
            modules: BTreeSet::new(),
            imports: BTreeMap::new(),
        };
        for s in &sources {
            for k in 0..=s.module.len() {
                tree.modules.insert(s.module[..k].to_vec());
            }
            tree.modules.extend(inline_modules(&s.module, &s.code));
        }
        let all: Vec<(usize, ModPath, UsePath, bool)> = sources
            .iter()
            .enumerate()
            .flat_map(|(k, s)| paths(s).into_iter().map(move |(b, u, t)| (k, b, u, t)))
            .collect();
        for (_, base, u, top) in &all {
            if *top {
                tree.imports
                    .entry(base.clone())
                    .or_default()
                    .insert(u.name.clone(), u.segs.clone());
            }
        }
        // parent -> child -> child -> first reference
        let mut graph: BTreeMap<ModPath, BTreeMap<String, BTreeMap<String, Edge>>> =
            BTreeMap::new();
        for (k, base, u, _) in &all {
            let Some(to) = tree.resolve(base, &u.segs, 8) else {
                continue;
            };
            let common = base.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common >= base.len() || common >= to.len() {
                continue;
            }
            let s = &sources[*k];
            let e = graph
                .entry(base[..common].to_vec())
                .or_default()
                .entry(base[common].clone())
                .or_default()
                .entry(to[common].clone())
                .or_insert(Edge {
                    path: s.path.to_string(),
                    line: lex::line_of(s.text, u.at),
                    count: 0,
                });
            e.count += 1;
        }
        for (parent, children) in &graph {
            v.extend(cycle_violations(root, parent, children));
        }
    }
    v
}

/// Every edge inside a strongly connected component of more than one child of `parent`.
fn cycle_violations(
    root: &str,
    parent: &[String],
    graph: &BTreeMap<String, BTreeMap<String, Edge>>,
) -> Vec<Violation> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(n) = todo.pop() {
            for m in graph.get(&n).into_iter().flat_map(|e| e.keys()) {
                if seen.insert(m.clone()) {
                    todo.push(m.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&str, BTreeSet<String>> =
        graph.keys().map(|n| (n.as_str(), reach(n))).collect();
    let within = if parent.is_empty() {
        format!("under {root}")
    } else {
        format!("in `{}` under {root}", parent.join("::"))
    };
    let mut v = Vec::new();
    for (a, edges) in graph {
        for (b, e) in edges {
            if !reaches.get(b.as_str()).is_some_and(|r| r.contains(a)) {
                continue;
            }
            let names: Vec<&str> = reaches[a.as_str()]
                .iter()
                .filter(|n| reaches.get(n.as_str()).is_some_and(|r| r.contains(a)))
                .map(String::as_str)
                .collect();
            v.push(Violation::new(
                &e.path,
                e.line,
                format!(
                    "module cycle {{{}}} {within}: `{a}` uses `{b}` here ({} reference(s)), \
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

    fn at(v: &[Violation]) -> Vec<String> {
        v.iter().map(|v| format!("{}:{}", v.path, v.line)).collect()
    }

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
        assert_eq!(
            at(&v),
            ["c/src/a.rs:2", "c/src/b.rs:3", "c/src/c.rs:3"],
            "{v:#?}"
        );
        assert!(
            v[0].message.contains("{a, b, c} under c/src/lib.rs"),
            "{}",
            v[0]
        );
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

        // A child naming its ancestor's items is no edge; naming an uncle is.
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

    #[test]
    fn a_cycle_one_level_down_fires_through_the_parents_reexport() {
        let files = [
            ("h/src/main.rs", "//! H.\nmod store;\nmod render;\n"),
            (
                "h/src/store/mod.rs",
                "//! Store.\nmod recover;\nmod temp;\npub use temp::Temp;\n",
            ),
            (
                "h/src/store/recover.rs",
                "//! R.\nuse super::Temp;\npub fn scan() {}\n",
            ),
            (
                "h/src/store/temp.rs",
                "//! T.\npub struct Temp;\nfn f() { super::recover::scan() }\n",
            ),
            ("h/src/render.rs", "//! R.\nuse crate::store::Temp;\n"),
        ];
        let v = module_cycles("h", &files);
        assert_eq!(
            at(&v),
            ["h/src/store/recover.rs:2", "h/src/store/temp.rs:3"],
            "{v:#?}"
        );
        assert!(
            v[0].message
                .contains("{recover, temp} in `store` under h/src/main.rs"),
            "{}",
            v[0]
        );
        // One way only: the parent's module is below both.
        let mut fixed = files;
        fixed[3].1 = "//! T.\npub struct Temp;\n";
        assert!(module_cycles("h", &fixed).is_empty());

        // Two levels down, inside a directory module, through `use` groups and `self`.
        let deep = [
            ("w/src/lib.rs", "//! W.\npub mod wifi;\n"),
            ("w/src/wifi/mod.rs", "//! W.\nmod client;\nmod standin;\n"),
            (
                "w/src/wifi/client.rs",
                "//! C.\nuse super::{standin::{self, Hold}, Other};\n",
            ),
            (
                "w/src/wifi/standin.rs",
                "//! S.\npub struct Hold;\nfn g() -> crate::wifi::client::X { todo!() }\n",
            ),
        ];
        let v = module_cycles("w", &deep);
        assert_eq!(
            at(&v),
            ["w/src/wifi/client.rs:2", "w/src/wifi/standin.rs:3"],
            "{v:#?}"
        );
        // An inline module is a child like a file.
        let inline = [
            (
                "i/src/lib.rs",
                "//! I.\nmod a {\n    pub fn f() { super::b::g() }\n}\nmod b {\n    pub fn g() { crate::a::f() }\n}\n",
            ),
        ];
        assert_eq!(
            at(&module_cycles("i", &inline)),
            ["i/src/lib.rs:3", "i/src/lib.rs:6"]
        );
    }
}
