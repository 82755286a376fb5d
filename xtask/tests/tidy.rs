//! The tidy test: the written rules of ARCHITECTURE.md and the repository's standards,
//! checked on every tracked file (`git ls-files` from the workspace root) by a plain
//! `cargo test -p xtask --test tidy`. Each rule is a pure function of paths and contents
//! (in `tidy/`), with a unit test that feeds it a breaking case; the tests here run every
//! rule over the repository and print each violation as `path:line: what, and the fix`.
//!
//! The rules:
//! - every `.rs` file opens with a `//!` header (after a `#!` shebang line, if any);
//! - a non-test `.rs` file (not under a `tests/` folder, not `tests.rs`) has at most 800
//!   lines, or is on [`LONG_FILES`] with its line count, which may only shrink: a grown
//!   file fails, and so does a stale entry (file gone, under the limit, or shorter than
//!   listed);
//! - a non-test function spans fewer than 120 lines (`tidy/functions.rs`), or is on
//!   [`LONG_FUNCTIONS`] with its length, which may only shrink, like [`LONG_FILES`];
//! - no module cycles at any depth: among the children of every module, a crate root's
//!   top-level modules included (`tidy/cycles.rs`; test modules, `#[cfg(test)]` ones and
//!   `tests.rs` / `tests/` files, are left out);
//! - each member links its integration tests into one binary (`tests/<name>/main.rs`),
//!   unless [`SEVERAL_TEST_BINARIES`] lists it with its reason, and every test binary's
//!   root is `#![forbid(unsafe_code)]`;
//! - no `pub use crate::..` / `pub use super::..` outside a crate root: an item has one
//!   path, where it is defined or the root's re-export;
//! - README's "## Navigating" names every workspace member, and every member's
//!   `Cargo.toml` takes the workspace's lints (`[lints] workspace = true`);
//! - no committed binary (a NUL byte in the first 8 KiB, or an extension such as `.whl`,
//!   `.so`, `.img`, `.gz`, `.deb`) outside a test-data folder: `fixtures/`, `testdata/`
//!   or `snapshots/` anywhere in its path;
//! - no "issue N" in the comments of `.rs` and `.toml` files;
//! - `unsafe` (and `allow(unsafe_code)`) only in the files of `UNSAFE_FILES`, each named
//!   in ARCHITECTURE.md;
//! - PID 1 writes to its console only through `firmware/src/console.rs` (which prefixes
//!   and escapes every line): no `println!`, `eprintln!`, `dbg!` or `io::stdout()`
//!   elsewhere in the firmware;
//! - the host tool writes to the terminal only through `host/src/out.rs`, which escapes
//!   every line (`tidy/console.rs`);
//! - in the host tool, a name from outside (run id, board, label, SSID, a card's file
//!   name) becomes a path only through `benchboot_results::name::SafeName`
//!   (`tidy/names.rs`);
//! - the host tool defines no rate of its own (`*per_s*`, `*loss_pct*`, `iops`): rates
//!   and UDP loss come from `crates/results` (`tidy/rates.rs`).
#![forbid(unsafe_code)]

#[path = "tidy/console.rs"]
mod console;
#[path = "tidy/cycles.rs"]
mod cycles;
#[path = "tidy/files.rs"]
mod files;
#[path = "tidy/functions.rs"]
mod functions;
#[path = "tidy/lex.rs"]
mod lex;
#[path = "tidy/names.rs"]
mod names;
#[path = "tidy/rates.rs"]
mod rates;
#[path = "tidy/unsafe_code.rs"]
mod unsafe_code;

use std::fmt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The non-test `.rs` files allowed over 800 lines, with their line counts: split them
/// and lower (or remove) their entries; the test fails on an entry higher than its file.
const LONG_FILES: &[(&str, usize)] = &[("crates/wifi/src/netlink.rs", 861)];

/// The functions allowed at [`functions::FN_LIMIT`] lines or more, `(file, name, lines)`:
/// split them and lower (or remove) their entries; the test fails on an entry higher
/// than its function.
const LONG_FUNCTIONS: &[(&str, &str, usize)] = &[
    ("firmware/src/steps.rs", "run_storage", 174),
    ("host/src/context/grid.rs", "context_grid", 120),
    ("host/src/devices/windows.rs", "scan", 154),
    ("host/src/plot.rs", "draw_chart", 165),
];

/// The members with more than one integration-test binary, and why.
const SEVERAL_TEST_BINARIES: &[(&str, &str)] = &[(
    "xtask",
    "each file is a gate run alone by name (`--test tidy`, `lints`, `docs`, `cli`, `boards`)",
)];

/// One broken rule: the file, the 1-based line, what is wrong and how to fix it.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    pub path: String,
    pub line: usize,
    pub message: String,
}

impl Violation {
    pub fn new(path: &str, line: usize, message: impl Into<String>) -> Self {
        Violation {
            path: path.to_string(),
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.path, self.line, self.message)
    }
}

/// The tracked files of the checkout, `(path from the root, bytes)`; files deleted in
/// the work tree but still tracked are left out.
struct Repo {
    files: Vec<(String, Vec<u8>)>,
}

impl Repo {
    fn text(&self, path: &str) -> &str {
        let (_, b) = self
            .files
            .iter()
            .find(|(p, _)| p == path)
            .unwrap_or_else(|| panic!("{path} is tracked"));
        std::str::from_utf8(b).expect("UTF-8")
    }

    /// The tracked `.rs` files as text.
    fn rust(&self) -> impl Iterator<Item = (&str, &str)> {
        self.files
            .iter()
            .filter(|(p, _)| p.ends_with(".rs"))
            .map(|(p, b)| {
                let t = std::str::from_utf8(b).unwrap_or_else(|_| panic!("{p} is not UTF-8"));
                (p.as_str(), t)
            })
    }
}

fn repo() -> &'static Repo {
    static REPO: OnceLock<Repo> = OnceLock::new();
    REPO.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("xtask sits in the workspace root")
            .to_path_buf();
        let out = Command::new("git")
            .args(["ls-files", "-z"])
            .current_dir(&root)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git ls-files: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let list = String::from_utf8(out.stdout).expect("UTF-8 paths");
        let files = list
            .split('\0')
            .filter(|p| !p.is_empty())
            .filter_map(|p| Some((p.to_string(), std::fs::read(root.join(p)).ok()?)))
            .collect();
        Repo { files }
    })
}

fn assert_clean(rule: &str, v: Vec<Violation>) {
    let lines: Vec<String> = v.iter().map(Violation::to_string).collect();
    assert!(
        lines.is_empty(),
        "{rule}: {} violation(s)\n{}",
        lines.len(),
        lines.join("\n")
    );
}

#[test]
fn every_rust_file_has_a_header() {
    assert_clean(
        "//! header",
        repo()
            .rust()
            .flat_map(|(p, t)| files::header(p, t))
            .collect(),
    );
}

#[test]
fn long_files_only_shrink() {
    let lines: Vec<(&str, usize)> = repo().rust().map(|(p, t)| (p, t.lines().count())).collect();
    assert_clean("file length", files::long_files(&lines, LONG_FILES));
}

#[test]
fn long_functions_only_shrink() {
    let all: Vec<(&str, &str)> = repo().rust().collect();
    assert_clean(
        "function length",
        functions::long_functions(&all, LONG_FUNCTIONS),
    );
}

#[test]
fn no_module_cycles() {
    let r = repo();
    let all: Vec<(&str, &str)> = r.rust().collect();
    let mut v = Vec::new();
    for member in files::members(r.text("Cargo.toml")) {
        let prefix = format!("{member}/src/");
        let own: Vec<(&str, &str)> = all
            .iter()
            .copied()
            .filter(|(p, _)| p.starts_with(&prefix))
            .collect();
        v.extend(cycles::module_cycles(&member, &own));
    }
    assert_clean("module cycles", v);
}

#[test]
fn one_test_binary_per_crate_each_forbidding_unsafe() {
    let r = repo();
    let paths: Vec<&str> = r.files.iter().map(|(p, _)| p.as_str()).collect();
    let members = files::members(r.text("Cargo.toml"));
    let binaries: Vec<(&str, Vec<(&str, &str)>)> = members
        .iter()
        .map(|m| {
            let roots = files::test_binaries(m, &paths)
                .into_iter()
                .map(|p| (p, r.text(p)))
                .collect();
            (m.as_str(), roots)
        })
        .collect();
    assert_clean(
        "test binaries",
        files::test_binary_rules(&binaries, SEVERAL_TEST_BINARIES),
    );
}

#[test]
fn no_item_has_a_second_path() {
    assert_clean(
        "second paths",
        repo()
            .rust()
            .flat_map(|(p, t)| files::second_paths(p, t))
            .collect(),
    );
}

#[test]
fn readme_navigating_names_every_crate() {
    let r = repo();
    assert_clean(
        "README Navigating",
        files::readme_navigating(r.text("Cargo.toml"), r.text("README.md")),
    );
}

#[test]
fn every_crate_takes_the_workspace_lints() {
    let r = repo();
    assert_clean(
        "workspace lints",
        files::members(r.text("Cargo.toml"))
            .iter()
            .flat_map(|m| {
                let path = format!("{m}/Cargo.toml");
                files::takes_workspace_lints(&path, r.text(&path))
            })
            .collect(),
    );
}

#[test]
fn no_binaries_outside_test_data() {
    assert_clean(
        "binary files",
        repo()
            .files
            .iter()
            .flat_map(|(p, b)| files::binary(p, b))
            .collect(),
    );
}

#[test]
fn no_issue_numbers_in_comments() {
    let v = repo()
        .files
        .iter()
        .filter(|(p, _)| p.ends_with(".rs") || p.ends_with(".toml"))
        .flat_map(|(p, b)| files::issue_refs(p, &String::from_utf8_lossy(b)))
        .collect();
    assert_clean("issue numbers", v);
}

#[test]
fn unsafe_code_only_where_architecture_says() {
    let r = repo();
    let mut v: Vec<Violation> = r
        .rust()
        .flat_map(|(p, t)| unsafe_code::unsafe_outside(p, t, unsafe_code::UNSAFE_FILES))
        .collect();
    v.extend(unsafe_code::architecture_names(
        r.text("ARCHITECTURE.md"),
        unsafe_code::UNSAFE_FILES,
    ));
    assert_clean("unsafe code", v);
}

#[test]
fn pid1_prints_only_through_its_console_module() {
    assert_clean(
        "console writes",
        repo()
            .rust()
            .flat_map(|(p, t)| console::console_writes(p, t))
            .collect(),
    );
}

#[test]
fn outside_names_become_paths_only_through_the_gate() {
    assert_clean(
        "names to paths",
        repo()
            .rust()
            .flat_map(|(p, t)| names::paths_from_outside_names(p, t))
            .collect(),
    );
}

#[test]
fn host_prints_only_through_its_out_module() {
    assert_clean(
        "host terminal writes",
        repo()
            .rust()
            .flat_map(|(p, t)| console::host_writes(p, t))
            .collect(),
    );
}

#[test]
fn rates_only_in_the_results_crate() {
    assert_clean(
        "rates outside crates/results",
        repo()
            .rust()
            .flat_map(|(p, t)| rates::rates_outside_results(p, t))
            .collect(),
    );
}
