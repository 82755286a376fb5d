//! Lists the board files of this tree's `boards/` (every `<name>.toml` but
//! `shared.toml` and `*.lock.toml`) and `boards/shared.toml` into
//! `$OUT_DIR/builtin_boards.rs`, as `include_str!`s: the board files a built binary
//! carries (`benchboot_board::Catalog`), so it needs no source tree once installed.
#![forbid(unsafe_code)]

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let dir = manifest.join("../../boards");
    println!("cargo:rerun-if-changed={}", dir.display());
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "{}: cannot list the board files to build in: {e} (build from a benchboot checkout)",
            dir.display()
        )
    });
    let mut boards: Vec<(String, PathBuf)> = Vec::new();
    for entry in entries {
        let path = entry.expect("a readable boards/ entry").path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(stem) = name.strip_suffix(".toml") else {
            continue;
        };
        if name == "shared.toml" || stem.ends_with(".lock") {
            continue;
        }
        boards.push((stem.to_owned(), path.canonicalize().expect("a board file")));
    }
    boards.sort();
    let shared = dir.join("shared.toml").canonicalize().unwrap_or_else(|e| {
        panic!("{}/shared.toml: {e}", dir.display());
    });
    let mut out = String::from(
        "/// The board files built in: (name, text), sorted by name.\n\
         pub const BUILTIN_BOARDS: &[(&str, &str)] = &[\n",
    );
    for (name, path) in &boards {
        writeln!(out, "    ({name:?}, include_str!({:?})),", path.display()).unwrap();
    }
    out.push_str("];\n\n/// `boards/shared.toml` as built in.\n");
    writeln!(
        out,
        "pub const BUILTIN_SHARED: &str = include_str!({:?});",
        shared.display()
    )
    .unwrap();
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    std::fs::write(dest.join("builtin_boards.rs"), out).expect("writing builtin_boards.rs");
}
