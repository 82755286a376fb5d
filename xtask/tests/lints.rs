//! The workspace's lints hold: a scratch crate that takes the root `Cargo.toml`'s
//! `[workspace.lints]` exactly as written (`[lints] workspace = true`) is checked by
//! `cargo clippy`, once with each kind of unsafe code the rules refuse and once with the
//! same code written the allowed way. The tidy test (`tidy.rs`) keeps every member crate
//! on these lints and `unsafe` in the files ARCHITECTURE.md names; this test proves the
//! lints themselves fire, so the compiler holds the line.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The root `Cargo.toml`'s `[workspace.lints]` table, as TOML text.
fn workspace_lints() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let t: toml::Table = std::fs::read_to_string(root.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let lints = t["workspace"]["lints"].clone();
    let mut ws = toml::Table::new();
    ws.insert("lints".into(), lints);
    let mut doc = toml::Table::new();
    doc.insert("workspace".into(), toml::Value::Table(ws));
    toml::to_string(&doc).unwrap()
}

/// A scratch crate in a fresh folder under the target dir: `files` are `(path in src/,
/// text)`. Returns clippy's exit success and its stderr.
fn clippy(name: &str, files: &[(&str, &str)]) -> (bool, String) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("lints-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"lints-{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
             publish = false\n\n[lints]\nworkspace = true\n\n{}",
            workspace_lints()
        ),
    )
    .unwrap();
    for (path, text) in files {
        std::fs::write(dir.join("src").join(path), text).unwrap();
    }
    let out = Command::new(env!("CARGO"))
        .args(["clippy", "--offline", "--quiet", "--color", "never"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo clippy runs (`rustup component add clippy`; `cargo xtask setup` does)");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn unsafe_code_outside_an_allowed_module_and_without_its_safety_text_fails() {
    let (ok, err) = clippy(
        "refused",
        &[
            (
                "lib.rs",
                "//! x\npub mod open;\n#[allow(unsafe_code)]\npub mod edge;\n",
            ),
            // unsafe in a module the crate root did not allow.
            (
                "open.rs",
                "//! x\npub fn read(p: &u8) -> u8 {\n    // SAFETY: a reference.\n    \
                 unsafe { std::ptr::read(p) }\n}\n",
            ),
            // Allowed module: a block without `// SAFETY:`, an `unsafe fn` without
            // `# Safety`.
            (
                "edge.rs",
                "//! x\npub fn read(p: &u8) -> u8 {\n    unsafe { std::ptr::read(p) }\n}\n\n\
                 /// Reads.\npub unsafe fn read_raw(p: *const u8) -> u8 {\n    \
                 // SAFETY: the caller's promise.\n    unsafe { std::ptr::read(p) }\n}\n",
            ),
        ],
    );
    assert!(!ok, "clippy passed code the lints refuse:\n{err}");
    for (lint, place) in [
        ("usage of an `unsafe` block", "src/open.rs:4"),
        ("unsafe block missing a safety comment", "src/edge.rs:3"),
        (
            "unsafe function's docs are missing a `# Safety` section",
            "src/edge.rs:7",
        ),
    ] {
        let at = err
            .find(lint)
            .unwrap_or_else(|| panic!("no `{lint}` in clippy's output:\n{err}"));
        let next_line = err[at..].lines().nth(1).unwrap_or_default();
        assert!(
            next_line.contains(place),
            "`{lint}` at {next_line}, not {place}:\n{err}"
        );
    }
}

#[test]
fn the_same_code_in_an_allowed_module_with_its_safety_text_passes() {
    let (ok, err) = clippy(
        "allowed",
        &[
            ("lib.rs", "//! x\n#[allow(unsafe_code)]\npub mod edge;\n"),
            (
                "edge.rs",
                "//! x\npub fn read(p: &u8) -> u8 {\n    // SAFETY: `p` is a reference: valid, \
                 aligned, initialised.\n    unsafe { std::ptr::read(p) }\n}\n\n\
                 /// Reads.\n///\n/// # Safety\n/// `p` is valid for a read of one byte.\n\
                 pub unsafe fn read_raw(p: *const u8) -> u8 {\n    \
                 // SAFETY: the caller's promise.\n    unsafe { std::ptr::read(p) }\n}\n",
            ),
        ],
    );
    assert!(ok, "clippy refused the allowed form:\n{err}");
}
