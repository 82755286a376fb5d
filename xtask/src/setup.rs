//! `cargo xtask setup`: installs what the build and the tests need on a Debian machine.
//!
//! - apt: QEMU (system + user), mkfs/fsck tools, fdisk (sfdisk), device-tree-compiler
//!   (fdtput), binutils (readelf), file, iproute2 (the DHCP veth test); fio and
//!   iperf3 for the benches.
//! - PyPI: `ziglang` (C compiler, musl libc and linker for the zig route).
//! - rustup: the `rust-src` component (std sources for `-Zbuild-std`).
//!
//! Each step is skipped when already satisfied; `--dry-run` prints the commands only.

use std::process::Command;

use anyhow::{bail, Result};

/// Debian packages the build and tests use.
pub const APT_PACKAGES: &[&str] = &[
    "qemu-system-arm",
    "qemu-user-static",
    "dosfstools",
    "e2fsprogs",
    "fdisk",
    "device-tree-compiler",
    "binutils",
    "file",
    "xz-utils",
    // `ip` for the DHCP test over a veth pair between network namespaces
    "iproute2",
    // reference tools for `cargo xtask bench storage` and `bench net`
    "fio",
    "iperf3",
];
/// The zig release the route was checked with (toolchain.md).
pub const ZIGLANG: &str = "ziglang==0.17.0";

fn succeeds(prog: &str, args: &[&str]) -> bool {
    Command::new(prog)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn step(dry_run: bool, argv: &[&str]) -> Result<()> {
    eprintln!("setup: {}", argv.join(" "));
    if dry_run {
        return Ok(());
    }
    let status = Command::new(argv[0]).args(&argv[1..]).status()?;
    if !status.success() {
        bail!("`{}` failed ({status})", argv.join(" "));
    }
    Ok(())
}

pub fn run(dry_run: bool) -> Result<()> {
    let missing: Vec<&str> = APT_PACKAGES
        .iter()
        .copied()
        .filter(|p| !succeeds("dpkg-query", &["-W", "-f=${Status}", p]) || !installed(p))
        .collect();
    if !missing.is_empty() {
        let root = rustix_is_root();
        let mut pre: Vec<&str> = if root { vec![] } else { vec!["sudo"] };
        let mut update = pre.clone();
        update.extend(["apt-get", "update", "-q"]);
        step(dry_run, &update)?;
        pre.extend([
            "env",
            "DEBIAN_FRONTEND=noninteractive",
            "apt-get",
            "install",
            "-y",
            "-q",
            "--no-install-recommends",
        ]);
        pre.extend(missing.iter().copied());
        step(dry_run, &pre)?;
    }
    if !succeeds("python3", &["-m", "ziglang", "version"]) {
        step(dry_run, &["python3", "-m", "pip", "install", "-q", ZIGLANG])?;
    }
    if crate::toolchain::rust_src_dir().is_none() {
        step(dry_run, &["rustup", "component", "add", "rust-src"])?;
    }
    eprintln!("setup: done");
    Ok(())
}

fn installed(pkg: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", pkg])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
}

fn rustix_is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}
