//! benchboot's build automation, as a library so tests call the same code as `cargo xtask`.
//!
//! [`cli`] defines the verbs (clap) and `main.rs` dispatches each to its module:
//!
//! - `setup` ([`setup`]): the apt packages, ziglang and rustup components the main job
//!   needs (`--tests`: and the tests, benches and dist).
//! - `firmware` ([`firmware`]): the static init, cross-built for a board and gated.
//! - `host` ([`host_cross`]): the host tool for macOS and Windows, built with zig.
//! - `dist` ([`dist`]): a release's files in `target/dist/`, reproducibly.
//! - `image` ([`image`]): `target/images/<board>.img` and its manifest.
//! - `qemu` ([`qemu`]): the image booted in QEMU, its results fetched.
//! - `bench storage` ([`bench`](mod@bench)), `bench memory` ([`bench_memory`]), `bench net`,
//!   `bench net-udp` and `bench net-http` ([`bench_net`]), `bench card`
//!   ([`bench_card`]): benchboot beside the reference tools on this machine.
//! - `lava` ([`lava`]): a board's LAVA jobs and the files they name.
//! - `lock` ([`lock`]): `boards/packages.lock.toml` re-pinned to the Debian mirror.
//! - `boards` ([`boards`]): every board file checked, the README's board table.
//!
//! Plus the pieces they share: packages (pinned Debian `.deb`s, [`packages`]), kernel
//! modules ([`modules`], [`drivers`], [`vcio`]), the radio files ([`radio`]), the
//! initramfs ([`initramfs`]), the U-Boot card check ([`bootcheck`]), the toolchain
//! ([`toolchain`]) and reproducible ids and times ([`reproducible`]).
#![forbid(unsafe_code)]

pub mod bench;
pub mod bench_card;
pub mod bench_memory;
pub mod bench_net;
pub mod boards;
pub mod bootcheck;
pub mod cli;
pub mod dist;
pub mod drivers;
pub mod dtb;
pub mod firmware;
pub mod host_cross;
pub mod image;
pub mod initramfs;
pub mod lava;
pub mod lock;
pub mod modules;
pub mod packages;
pub mod qemu;
pub mod radio;
pub mod reproducible;
pub mod setup;
pub mod timing;
pub mod toolchain;
pub mod vcio;

use std::path::{Path, PathBuf};

/// The repository root (the folder holding the workspace `Cargo.toml`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// `<repo>/boards`.
pub fn boards_dir() -> PathBuf {
    repo_root().join("boards")
}

/// `<repo>/target`, or `CARGO_TARGET_DIR` when set.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"))
}

/// Loads a board by name from `boards/`, with the file named in any error.
pub fn load_board(name: &str) -> anyhow::Result<benchboot_board::Board> {
    Ok(benchboot_board::load(&boards_dir(), name)?)
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename,
/// so a reader never sees half a file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use anyhow::Context;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    std::io::Write::write_all(&mut tmp, bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)
        .with_context(|| format!("renaming into {}", path.display()))?;
    Ok(())
}

/// [`write_atomically`], then mode 0755: a generated wrapper script.
pub fn write_script(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    write_atomically(path, text.as_bytes())?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

/// Every regular file below `dir`, recursively, sorted by path (so a search that takes
/// the first match, and anything built from the list, does not depend on the order the
/// filesystem lists a folder in).
pub fn walk_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    use anyhow::Context;
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).with_context(|| format!("reading {}", d.display()))? {
            let p = e?.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Lowercase hex SHA-256 of a byte slice.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(bytes))
}

/// Lowercase hex SHA-256 of a file, streamed.
pub fn sha256_file(path: &Path) -> anyhow::Result<String> {
    use anyhow::Context;
    use sha2::Digest;
    let mut f = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut h = sha2::Sha256::new();
    std::io::copy(&mut f, &mut h).with_context(|| format!("reading {}", path.display()))?;
    Ok(hex(&h.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    /// The verbs `lib.rs`'s `//!` docs name, each in backticks as typed (`bench net-udp`).
    fn documented(lib_rs: &str, verbs: &[String]) -> Vec<String> {
        let docs: String = lib_rs
            .lines()
            .filter_map(|l| l.strip_prefix("//!"))
            .collect::<Vec<_>>()
            .join(" ");
        let docs = docs.split_whitespace().collect::<Vec<_>>().join(" ");
        verbs
            .iter()
            .filter(|v| !docs.contains(&format!("`{v}`")))
            .cloned()
            .collect()
    }

    /// Every subcommand of `cargo xtask`, nested ones as `bench storage`.
    fn verbs() -> Vec<String> {
        fn walk(cmd: &clap::Command, prefix: &str, out: &mut Vec<String>) {
            for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
                let name = format!("{prefix}{}", sub.get_name());
                out.push(name.clone());
                walk(sub, &format!("{name} "), out);
            }
        }
        let mut out = Vec::new();
        walk(
            &<crate::cli::Cli as clap::CommandFactory>::command(),
            "",
            &mut out,
        );
        out
    }

    #[test]
    fn the_docs_name_every_verb() {
        let verbs = verbs();
        assert!(verbs.len() >= 14, "{verbs:?}");
        assert!(verbs.iter().any(|v| v == "bench net-udp"), "{verbs:?}");
        let missing = documented(include_str!("lib.rs"), &verbs);
        assert!(
            missing.is_empty(),
            "xtask/src/lib.rs's `//!` docs do not name {missing:?}"
        );
        // A verb left out of the docs is caught (the same check on docs without `lock`).
        let without = include_str!("lib.rs").replace("`lock`", "lock");
        assert_eq!(documented(&without, &verbs), ["lock"]);
    }

    #[test]
    fn sha256_of_abc() {
        // FIPS 180-2, appendix B.1.
        assert_eq!(
            super::sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn atomic_write_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        super::write_atomically(&path, b"{}").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
