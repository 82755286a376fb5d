//! The tidy rules over single files and the README: the `//!` header, the 800-line limit
//! and its shrinking allowlist, README "Navigating" naming every workspace member, no
//! binary outside a test-data folder, no "issue N" in comments. Each is a pure function
//! of paths and contents returning the violations.

use crate::lex;
use crate::Violation;

/// The line limit of a non-test `.rs` file.
pub const LINE_LIMIT: usize = 800;

/// The folder names that hold test data, where committed binaries are allowed.
pub const DATA_FOLDERS: &[&str] = &["fixtures", "testdata", "snapshots"];

/// Extensions that are binary whatever their first bytes say.
pub const BINARY_EXTENSIONS: &[&str] = &[
    "whl", "so", "a", "o", "bin", "img", "gz", "xz", "zip", "elf", "deb",
];

/// A `.rs` file must open with a `//!` line (after a `#!` shebang line, if it is a
/// script): the header that says what the file is.
pub fn header(path: &str, text: &str) -> Vec<Violation> {
    if !path.ends_with(".rs") {
        return Vec::new();
    }
    let mut lines = text.lines().enumerate();
    let mut first = lines.next();
    if let Some((_, l)) = first {
        if l.starts_with("#!") && !l.starts_with("#![") {
            first = lines.next();
        }
    }
    match first {
        Some((_, l)) if l.starts_with("//!") => Vec::new(),
        other => vec![Violation::new(
            path,
            other.map_or(1, |(i, _)| i + 1),
            "no `//!` header: open the file with `//!` lines saying what it is",
        )],
    }
}

/// A test file: under a `tests/` folder or named `tests.rs`; exempt from the line limit.
pub fn is_test_file(path: &str) -> bool {
    path.split('/').any(|c| c == "tests") || path.ends_with("/tests.rs") || path == "tests.rs"
}

/// Files over [`LINE_LIMIT`] lines: `lines` is `(path, line count)` of every `.rs` file,
/// `allow` the allowlist `(path, its line count when listed)`. Fails a file over the limit
/// that is not listed or has grown past its entry, and a stale entry (file gone, under
/// the limit, or shorter than listed: lower the entry).
pub fn long_files(lines: &[(&str, usize)], allow: &[(&str, usize)]) -> Vec<Violation> {
    let mut v = Vec::new();
    for &(path, n) in lines {
        if is_test_file(path) || n <= LINE_LIMIT {
            continue;
        }
        match allow.iter().find(|(p, _)| *p == path) {
            None => v.push(Violation::new(
                path,
                n,
                format!(
                    "{n} lines, over {LINE_LIMIT}: split it (the allowlist in \
                     xtask/tests/tidy.rs only shrinks)"
                ),
            )),
            Some(&(_, max)) if n > max => v.push(Violation::new(
                path,
                n,
                format!("{n} lines, over its allowlisted {max}: split it, do not raise the entry"),
            )),
            Some(_) => {}
        }
    }
    for &(path, max) in allow {
        let fix = match lines.iter().find(|(p, _)| *p == path) {
            None => "the file is gone: remove its entry from the allowlist".to_string(),
            Some(&(_, n)) if n <= LINE_LIMIT => {
                format!("now {n} lines, within {LINE_LIMIT}: remove its entry from the allowlist")
            }
            Some(&(_, n)) if n < max => {
                format!("now {n} lines: lower its allowlist entry from {max} to {n}")
            }
            Some(_) => continue,
        };
        v.push(Violation::new(path, 1, fix));
    }
    v
}

/// The workspace members of the root `Cargo.toml`, in its order.
pub fn members(cargo_toml: &str) -> Vec<String> {
    let t: toml::Table = cargo_toml.parse().expect("the root Cargo.toml parses");
    t["workspace"]["members"]
        .as_array()
        .expect("workspace.members is a list")
        .iter()
        .map(|m| m.as_str().expect("a member is a string").to_string())
        .collect()
}

/// The integration-test binaries cargo finds in `member` among `paths`:
/// `<member>/tests/<name>.rs` and `<member>/tests/<name>/main.rs`.
pub fn test_binaries<'a>(member: &str, paths: &[&'a str]) -> Vec<&'a str> {
    let dir = format!("{member}/tests/");
    paths
        .iter()
        .copied()
        .filter(|p| {
            p.strip_prefix(&dir).is_some_and(|r| {
                let parts: Vec<&str> = r.split('/').collect();
                matches!(parts.as_slice(), [f] if f.ends_with(".rs"))
                    || matches!(parts.as_slice(), [_, "main.rs"])
            })
        })
        .collect()
}

/// Each member links its integration tests into one binary (`tests/<name>/main.rs` with
/// a module per file: one link, not one per file), unless `several` lists it with its
/// reason; and every test binary's root holds `#![forbid(unsafe_code)]`. `binaries` are
/// `(member, [(root path, text)])`.
pub fn test_binary_rules(
    binaries: &[(&str, Vec<(&str, &str)>)],
    several: &[(&str, &str)],
) -> Vec<Violation> {
    let mut v = Vec::new();
    for (member, roots) in binaries {
        if roots.len() > 1 && !several.iter().any(|(m, _)| m == member) {
            let names: Vec<&str> = roots.iter().map(|(p, _)| *p).collect();
            v.push(Violation::new(
                roots[0].0,
                1,
                format!(
                    "{member} has {} integration-test binaries ({}): make them modules of \
                     one `{member}/tests/integration/main.rs`",
                    roots.len(),
                    names.join(", ")
                ),
            ));
        }
        for (path, text) in roots {
            if !lex::lex(text).code.contains("#![forbid(unsafe_code)]") {
                v.push(Violation::new(
                    path,
                    1,
                    "a test binary without `#![forbid(unsafe_code)]`: add it after the \
                     `//!` header",
                ));
            }
        }
    }
    for (m, _) in several {
        if !binaries.iter().any(|(b, r)| b == m && r.len() > 1) {
            v.push(Violation::new(
                &format!("{m}/tests"),
                1,
                format!("{m} is listed as having several test binaries but has one: remove it"),
            ));
        }
    }
    v
}

/// No second path to an item: a module other than a crate root (`lib.rs`, `main.rs`)
/// does not `pub use crate::..` or `pub use super::..` (an item reached by its old path
/// after a move, or by a sibling's): users name the item where it is defined, or the
/// crate root re-exports it. A module's own children (`pub use child::Item`) are fine.
pub fn second_paths(path: &str, text: &str) -> Vec<Violation> {
    if !path.ends_with(".rs")
        || is_test_file(path)
        || path.ends_with("/lib.rs")
        || path.ends_with("/main.rs")
    {
        return Vec::new();
    }
    let code = lex::without_test_modules(&lex::lex(text).code);
    let toks = lex::tokens(&code);
    let mut v = Vec::new();
    for w in toks.windows(4) {
        if w[0].text == "pub"
            && w[1].text == "use"
            && matches!(w[2].text, "crate" | "super")
            && w[3].text == "::"
        {
            v.push(Violation::new(
                path,
                lex::line_of(text, w[0].at),
                format!(
                    "`pub use {}::..` gives an item a second path: make the users name it \
                     where it is defined (or re-export it from the crate root), and make \
                     this a private `use` if this file needs it",
                    w[2].text
                ),
            ));
        }
    }
    v
}

/// A member crate's `Cargo.toml` (at `path`) takes the workspace's lints
/// (`[lints] workspace = true`): without it, `unsafe_code = "deny"` and the SAFETY-comment
/// lints of the root `[workspace.lints]` do not reach that crate.
pub fn takes_workspace_lints(path: &str, cargo_toml: &str) -> Vec<Violation> {
    let t: toml::Table = match cargo_toml.parse() {
        Ok(t) => t,
        Err(e) => return vec![Violation::new(path, 1, format!("does not parse: {e}"))],
    };
    let inherits = t
        .get("lints")
        .and_then(|l| l.get("workspace"))
        .and_then(toml::Value::as_bool)
        == Some(true);
    if inherits {
        return Vec::new();
    }
    vec![Violation::new(
        path,
        1,
        "no `[lints] workspace = true`: add it, so the workspace's lints (unsafe_code, \
         undocumented_unsafe_blocks) hold in this crate",
    )]
}

/// Every workspace member of `cargo_toml` is named (as `` `crates/x` `` or `` `x/` ``) in
/// the "## Navigating" section of `readme` (up to the next heading).
pub fn readme_navigating(cargo_toml: &str, readme: &str) -> Vec<Violation> {
    let start = readme.lines().position(|l| l.trim_end() == "## Navigating");
    let Some(start) = start else {
        return vec![Violation::new("README.md", 1, "no `## Navigating` section")];
    };
    let section: Vec<&str> = readme
        .lines()
        .skip(start + 1)
        .take_while(|l| !l.starts_with('#'))
        .collect();
    let text = section.join("\n");
    members(cargo_toml)
        .into_iter()
        .filter(|m| !text.contains(&format!("`{m}`")) && !text.contains(&format!("`{m}/`")))
        .map(|m| {
            Violation::new(
                "README.md",
                start + 1,
                format!("workspace member `{m}` is not in \"## Navigating\": add a `- `{m}` – ...` line saying what it is"),
            )
        })
        .collect()
}

/// A tracked file is binary when its first 8 KiB hold a NUL byte or its extension is
/// one of [`BINARY_EXTENSIONS`]; it is allowed only under a folder named in
/// [`DATA_FOLDERS`]. `head` is the file's first bytes (8 KiB are enough).
pub fn binary(path: &str, head: &[u8]) -> Vec<Violation> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    let by_ext = ext.is_some_and(|e| BINARY_EXTENSIONS.contains(&e.as_str()));
    let by_nul = head.iter().take(8192).any(|&b| b == 0);
    let folders: Vec<&str> = path.split('/').collect();
    let in_data = folders[..folders.len() - 1]
        .iter()
        .any(|f| DATA_FOLDERS.contains(f));
    if (by_ext || by_nul) && !in_data {
        vec![Violation::new(
            path,
            1,
            format!(
                "a committed binary outside a test-data folder ({}): delete it, or move it \
                 under one if a test reads it",
                DATA_FOLDERS.join(", ")
            ),
        )]
    } else {
        Vec::new()
    }
}

/// The first "issue N" (`issue #?[0-9]+`, any case) in `text`.
pub fn issue_ref(text: &str) -> Option<&str> {
    let lower = text.to_ascii_lowercase();
    let b = lower.as_bytes();
    let mut from = 0;
    while let Some(k) = lower[from..].find("issue") {
        let at = from + k;
        from = at + 5;
        if at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
            continue;
        }
        let mut j = at + 5;
        let spaces = b[j..].iter().take_while(|&&c| c == b' ').count();
        if spaces == 0 {
            continue;
        }
        j += spaces;
        if b.get(j) == Some(&b'#') {
            j += 1;
        }
        let digits = b[j..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 {
            return Some(&text[at..j + digits]);
        }
    }
    None
}

/// No "issue N" in the comments of a `.rs` or `.toml` file: a comment says what it means,
/// not which ticket it came from.
pub fn issue_refs(path: &str, text: &str) -> Vec<Violation> {
    let comments: Vec<(usize, String)> = if path.ends_with(".rs") {
        lex::lex(text).comments
    } else if path.ends_with(".toml") {
        text.lines()
            .enumerate()
            .filter_map(|(i, l)| toml_comment(l).map(|c| (i + 1, c.to_string())))
            .collect()
    } else {
        return Vec::new();
    };
    let mut v = Vec::new();
    for (line, c) in comments {
        for (k, l) in c.lines().enumerate() {
            if let Some(r) = issue_ref(l) {
                v.push(Violation::new(
                    path,
                    line + k,
                    format!("\"{r}\" in a comment: say what it refers to instead"),
                ));
            }
        }
    }
    v
}

/// The comment of one TOML line: from the first `#` outside a quoted string.
fn toml_comment(line: &str) -> Option<&str> {
    let mut quote = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some('"'), '\\') if !escaped => {
                escaped = true;
                continue;
            }
            (Some(q), c) if c == q && !escaped => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, '#') => return Some(&line[i..]),
            _ => {}
        }
        escaped = false;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_gives_no_item_a_second_path() {
        let text = "//! M.\npub use crate::a::B;\npub use child::C;\nuse crate::d::E;\n\
                    pub use super::F;\n#[cfg(test)]\nmod tests {\n    pub use crate::x::Y;\n}\n";
        let v = second_paths("c/src/m.rs", text);
        let lines: Vec<usize> = v.iter().map(|v| v.line).collect();
        assert_eq!(lines, [2, 5], "{v:?}");
        assert!(second_paths("c/src/lib.rs", text).is_empty());
        assert!(second_paths("c/tests/t.rs", text).is_empty());
    }

    #[test]
    fn one_test_binary_per_member_each_forbidding_unsafe() {
        let paths = [
            "c/tests/a.rs",
            "c/tests/b/main.rs",
            "c/tests/b/helper.rs",
            "c/tests/data/x.rs.txt",
            "c/src/tests/a.rs",
        ];
        assert_eq!(
            test_binaries("c", &paths),
            ["c/tests/a.rs", "c/tests/b/main.rs"]
        );
        let ok = "//! A.\n#![forbid(unsafe_code)]\n";
        let one = [("c", vec![("c/tests/b/main.rs", ok)])];
        assert!(test_binary_rules(&one, &[]).is_empty());
        let two = [("c", vec![("c/tests/a.rs", ok), ("c/tests/b/main.rs", ok)])];
        let v = test_binary_rules(&two, &[]);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            v[0].message.contains("2 integration-test binaries"),
            "{}",
            v[0]
        );
        assert!(test_binary_rules(&two, &[("c", "gates run by name")]).is_empty());
        let stale = test_binary_rules(&one, &[("c", "gates run by name")]);
        assert!(stale[0].message.contains("has one"), "{stale:?}");
        let open = [(
            "c",
            vec![("c/tests/b/main.rs", "//! A.\n// #![forbid(unsafe_code)]\n")],
        )];
        let v = test_binary_rules(&open, &[]);
        assert_eq!(
            (v.len(), v[0].path.as_str()),
            (1, "c/tests/b/main.rs"),
            "{v:?}"
        );
    }

    #[test]
    fn a_crate_without_the_workspace_lints_is_named() {
        let ok = "[package]\nname = \"x\"\n\n[lints]\nworkspace = true\n";
        assert!(takes_workspace_lints("crates/x/Cargo.toml", ok).is_empty());
        for bad in [
            "[package]\nname = \"x\"\n",
            "[package]\nname = \"x\"\n[lints]\nworkspace = false\n",
            "[package]\nname = \"x\"\n[lints.rust]\nunsafe_code = \"allow\"\n",
        ] {
            let v = takes_workspace_lints("crates/x/Cargo.toml", bad);
            assert_eq!(v.len(), 1, "{bad}");
            assert_eq!((v[0].path.as_str(), v[0].line), ("crates/x/Cargo.toml", 1));
            assert!(
                v[0].message.contains("`[lints] workspace = true`"),
                "{}",
                v[0]
            );
        }
    }

    #[test]
    fn header_fires_on_a_file_without_one() {
        assert!(header("a/x.rs", "//! X.\nfn f() {}\n").is_empty());
        assert!(header("a/x.rs", "#!/usr/bin/env run-cargo-script\n//! X.\n").is_empty());
        assert!(header("a/x.md", "# X\n").is_empty());
        let v = header("a/x.rs", "use super::*;\n");
        assert_eq!(v.len(), 1);
        assert_eq!((v[0].path.as_str(), v[0].line), ("a/x.rs", 1));
        assert_eq!(
            header("a/x.rs", "#![forbid(unsafe_code)]\n//! X.\n").len(),
            1
        );
        assert_eq!(header("a/x.rs", "").len(), 1);
    }

    #[test]
    fn long_files_fire_on_new_grown_and_stale_entries() {
        let files = [
            ("a/src/ok.rs", 800),
            ("a/src/new.rs", 801),
            ("a/src/listed.rs", 900),
            ("a/src/grown.rs", 950),
            ("a/src/shrunk.rs", 850),
            ("a/src/small.rs", 700),
            ("a/tests/big.rs", 5000),
            ("a/src/x/tests.rs", 5000),
        ];
        let allow = [
            ("a/src/listed.rs", 900),
            ("a/src/grown.rs", 940),
            ("a/src/shrunk.rs", 860),
            ("a/src/small.rs", 820),
            ("a/src/gone.rs", 900),
        ];
        let v = long_files(&files, &allow);
        let got: Vec<String> = v.iter().map(|v| v.to_string()).collect();
        assert_eq!(got.len(), 5, "{got:#?}");
        assert!(got[0].starts_with("a/src/new.rs:801: 801 lines, over 800"));
        assert!(got[1].starts_with("a/src/grown.rs:950: 950 lines, over its allowlisted 940"));
        assert!(got[2].contains(
            "a/src/shrunk.rs:1: now 850 lines: lower its allowlist entry from 860 to 850"
        ));
        assert!(got[3].contains("a/src/small.rs:1: now 700 lines, within 800: remove"));
        assert!(got[4].contains("a/src/gone.rs:1: the file is gone"));
    }

    #[test]
    fn readme_fires_on_a_missing_member() {
        let cargo = "[workspace]\nmembers = [\"crates/a\", \"host\", \"crates/b\"]\n";
        let readme = "# X\n\n## Navigating\n\n- `crates/a` – A.\n- `host/` – the CLI.\n\n## Next\n\n`crates/b`\n";
        let v = readme_navigating(cargo, readme);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].message.contains("`crates/b`"), "{}", v[0]);
        assert!(readme_navigating(cargo, "# X\n").len() == 1);
        let full = readme.replace("\n\n## Next", "\n- `crates/b` – B.\n\n## Next");
        assert!(readme_navigating(cargo, &full).is_empty());
    }

    #[test]
    fn binary_fires_outside_data_folders() {
        assert_eq!(
            binary("pycountry-26.2.16-py3-none-any.whl", b"PK\x03\x04").len(),
            1
        );
        assert_eq!(binary("docs/x.txt", b"ab\0cd").len(), 1);
        assert_eq!(binary("crates/a/src/blob.bin", b"text").len(), 1);
        assert!(binary("crates/a/src/testdata/scan.bin", b"\0\0").is_empty());
        assert!(binary("host/tests/fixtures/x/disk.img", b"\0").is_empty());
        assert!(binary("crates/a/src/lib.rs", b"//! A.\n").is_empty());
        // The folder must be a folder, not the file's own name.
        assert_eq!(binary("a/fixtures", b"\0").len(), 1);
    }

    #[test]
    fn issue_refs_fire_in_comments_only() {
        assert_eq!(issue_ref("see Issue #12 for"), Some("Issue #12"));
        assert_eq!(issue_ref("(issue 5 collect)"), Some("issue 5"));
        assert_eq!(
            issue_ref("an issue with 5 disks, tissue 3, issues/144"),
            None
        );
        let rs = "//! Header (issue 3).\nfn f() { let s = \"issue 4\"; } // issue #9\n/* a\n   issue 10 */\n";
        let v: Vec<usize> = issue_refs("a.rs", rs).iter().map(|v| v.line).collect();
        assert_eq!(v, [1, 2, 4]);
        let toml = "a = \"issue 1 # not\" # issue 2\n# ISSUE 3\nb = 'x#' \n";
        let v: Vec<usize> = issue_refs("a.toml", toml).iter().map(|v| v.line).collect();
        assert_eq!(v, [1, 2]);
        assert!(issue_refs("a.md", "issue 4").is_empty());
    }
}
