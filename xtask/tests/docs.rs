//! The documents a newcomer reads: every relative link in `README.md`, `ARCHITECTURE.md`
//! and `docs/*.md` names a file that exists, every file in `docs/` is linked from the
//! README, and the README's first screen (50 lines) holds the two commands and the path
//! to a first result on a board; the fuzz targets ARCHITECTURE.md and `fuzz/README.md`
//! list are those of `fuzz/Cargo.toml`.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

/// The relative link targets of one Markdown text: `](target)` with no scheme, the
/// `#fragment` dropped. Links inside code spans are rare enough here to count too.
fn relative_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = &rest[..end];
        rest = &rest[end..];
        if target.contains("://") || target.starts_with('#') || target.starts_with("mailto:") {
            continue;
        }
        let path = target.split('#').next().unwrap_or(target);
        if !path.is_empty() {
            out.push(path.to_owned());
        }
    }
    out
}

fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

#[test]
fn every_relative_link_in_the_documents_resolves() {
    let root = xtask::repo_root();
    let mut broken = Vec::new();
    for file in markdown_files(&root) {
        let text = std::fs::read_to_string(&file).expect("readable");
        let dir = file.parent().expect("a folder");
        for link in relative_links(&text) {
            if !dir.join(&link).exists() {
                broken.push(format!("{}: {link}", file.display()));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}

#[test]
fn every_topic_in_docs_is_linked_from_the_readme() {
    let root = xtask::repo_root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let links = relative_links(&readme);
    let missing: Vec<String> = markdown_files(&root)
        .into_iter()
        .filter_map(|p| {
            let rel = p.strip_prefix(&root).ok()?.to_str()?.to_owned();
            rel.starts_with("docs/").then_some(rel)
        })
        .filter(|rel| !links.contains(rel))
        .collect();
    assert!(
        missing.is_empty(),
        "docs the README does not link: {missing:?}"
    );
}

#[test]
fn the_readme_opens_with_the_two_commands_and_the_path_to_a_first_result() {
    let readme = std::fs::read_to_string(xtask::repo_root().join("README.md")).expect("README");
    let first_screen: Vec<&str> = readme.lines().take(50).collect();
    let screen = first_screen.join("\n");
    for needle in [
        "cargo xtask qemu --board rpi-zero-w",
        "bash .ci/run",
        "No board has run benchboot yet",
        "## Your first result on your own board",
        "benchboot flash",
        "benchboot collect",
        "benchboot report",
    ] {
        assert!(
            screen.contains(needle),
            "README's first 50 lines lack `{needle}`: the newcomer's path must fit one screen"
        );
    }
}

#[test]
fn relative_links_skip_urls_and_fragments() {
    let links = relative_links("[a](docs/x.md#y) [b](https://e.org) [c](#here) [d](../R.md)");
    assert_eq!(links, ["docs/x.md", "../R.md"]);
}

/// The `[[bin]]` names of `fuzz/Cargo.toml`: the fuzz targets.
fn fuzz_targets(cargo_toml: &str) -> Vec<String> {
    let t: toml::Table = cargo_toml.parse().expect("fuzz/Cargo.toml parses");
    t["bin"]
        .as_array()
        .expect("fuzz/Cargo.toml has [[bin]] targets")
        .iter()
        .map(|b| b["name"].as_str().expect("a target has a name").to_string())
        .collect()
}

/// The backticked words of `text`: `` `a` and `b_c` `` gives `["a", "b_c"]`.
fn code_words(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

#[test]
fn the_fuzz_targets_are_the_ones_the_documents_list() {
    let root = xtask::repo_root();
    let read = |p: &str| std::fs::read_to_string(root.join(p)).expect(p);
    let targets = fuzz_targets(&read("fuzz/Cargo.toml"));
    let arch = read("ARCHITECTURE.md");
    let bullet = arch
        .split("\n- ")
        .find(|b| b.starts_with("**`fuzz/`**"))
        .expect("ARCHITECTURE.md has a `fuzz/` bullet");
    let named: Vec<&str> = code_words(bullet)
        .into_iter()
        .filter(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '_') && w.contains('_'))
        .collect();
    let mut want: Vec<&str> = targets.iter().map(String::as_str).collect();
    want.sort_unstable();
    let mut got = named.clone();
    got.sort_unstable();
    assert_eq!(
        got, want,
        "ARCHITECTURE.md's fuzz bullet against fuzz/Cargo.toml"
    );

    let readme = read("fuzz/README.md");
    // The first cell of each row of the table headed `| target | what it feeds`.
    let rows: Vec<&str> = readme
        .lines()
        .skip_while(|l| !l.starts_with("| target | what it feeds"))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| {
            l.strip_prefix("| `")?
                .split_once("` |")
                .map(|(name, _)| name)
        })
        .collect();
    let mut rows_sorted = rows.clone();
    rows_sorted.sort_unstable();
    assert_eq!(
        rows_sorted, want,
        "fuzz/README.md's table against fuzz/Cargo.toml"
    );
}
