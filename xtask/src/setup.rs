//! `cargo xtask setup`: installs what the build and the tests need on a Debian machine.
//!
//! - apt: QEMU (system + user; on bookworm QEMU 10 from bookworm-backports, for the
//!   `bpim2u` and `raspi4b` machines), mkfs/fsck tools, fdisk (sfdisk), device-tree-compiler
//!   (fdtput), binutils (readelf), file, iproute2 (the DHCP veth test); fio and
//!   iperf3 for the benches.
//! - apt, for LAVA's own checks of the jobs `cargo xtask lava` writes
//!   (`xtask::lava::tools`): the python3-* packages LAVA imports, and what `lava-run
//!   --validate` looks for on a worker (tftpd-hpa's /etc/default/tftpd-hpa, mkimage,
//!   udevadm, telnet) plus ipxe-qemu (the option ROM of the virtio-net-pci NIC LAVA's
//!   `qemu` device type gives the guest).
//! - Debian's LAVA packages (pinned), downloaded and unpacked into `target/lava/`.
//! - apt, for the host tool's Windows build (`cargo xtask host`): MinGW's dlltool and
//!   wine64.
//! - apt: Debian's cross compilers `gcc-aarch64-linux-gnu` and `gcc-arm-linux-gnueabihf`
//!   and `make`, for the `/dev/vcio` module (`xtask::vcio`).
//! - PyPI: `ziglang` (C compiler, musl libc and linker for the zig route, and for the
//!   host tool's macOS and Windows builds).
//! - rustup: the `rust-src` component (std sources for `-Zbuild-std`), `clippy` (the
//!   lint test, `xtask/tests/lints.rs`) and the standard libraries of the host tool's
//!   cross targets (`xtask::host_cross::TARGETS`).
//!
//! Each step is skipped when already satisfied; `--dry-run` prints the commands only.

use std::process::Command;

use anyhow::{bail, Result};

/// How long apt waits for another apt or dpkg (a machine's unattended upgrade, a
/// second terminal) to release its lock instead of failing at once: apt.conf(5)'s
/// `DPkg::Lock::Timeout`, seconds (apt 1.9.11 and later; Debian 11 on).
pub const APT_LOCK_WAIT: &str = "DPkg::Lock::Timeout=600";

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
    // the HTML pages' browser tests (tests/src/browser.rs): headless, no display;
    // fonts-dejavu-core so text renders in the screenshot.
    "chromium",
    "fonts-dejavu-core",
    // LAVA's tools (xtask/src/lava/tools.rs) run on Debian's python with these.
    "python3-yaml",
    "python3-jinja2",
    "python3-pexpect",
    "python3-requests",
    "python3-voluptuous",
    "python3-setproctitle",
    "python3-configobj",
    "python3-pyudev",
    "python3-netifaces",
    "python3-magic",
    "python3-tz",
    // What `lava-run --validate` checks a worker has, and the qemu device's NIC ROM.
    "tftpd-hpa",
    "u-boot-tools",
    "udev",
    "telnet",
    "ipxe-qemu",
    // The host tool cross-built for Windows (xtask/src/host_cross.rs): rustc's dlltool
    // for the raw-dylib imports; wine runs the Windows build's tests.
    "binutils-mingw-w64-x86-64",
    "wine64",
    // Debian's cross compilers (gcc-12, the version the pinned kernels were built with)
    // for the vcio module built against the pinned kernels' headers (xtask/src/vcio.rs):
    // arm64 and armmp. `make` runs kbuild.
    "gcc-aarch64-linux-gnu",
    "gcc-arm-linux-gnueabihf",
    "make",
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

/// QEMU machines the tests boot that Debian bookworm's QEMU 7.2 lacks (`bpim2u` came in
/// QEMU 8.0, `raspi4b` in 9.0): bookworm-backports serves QEMU 10 (boards-and-boot.md).
pub const QEMU_MACHINES: &[(&str, &str)] = &[
    ("qemu-system-arm", "bpim2u"),
    ("qemu-system-aarch64", "raspi4b"),
];
/// The apt source that adds bookworm-backports (deb822 format).
const BACKPORTS_SOURCE: &str = "/etc/apt/sources.list.d/benchboot-bookworm-backports.sources";

pub fn run(dry_run: bool) -> Result<()> {
    let missing: Vec<&str> = APT_PACKAGES
        .iter()
        .copied()
        .filter(|p| !succeeds("dpkg-query", &["-W", "-f=${Status}", p]) || !installed(p))
        .collect();
    let old_qemu = !qemu_has_machines();
    if !missing.is_empty() || old_qemu {
        let root = rustix_is_root();
        let pre: Vec<&str> = if root { vec![] } else { vec!["sudo"] };
        let backports = old_qemu && os_codename().as_deref() == Some("bookworm");
        if backports && !std::path::Path::new(BACKPORTS_SOURCE).exists() {
            eprintln!("setup: adding bookworm-backports for QEMU 10 ({BACKPORTS_SOURCE})");
            if !dry_run {
                std::fs::write(
                    BACKPORTS_SOURCE,
                    "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\n\
                     Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n",
                )?;
            }
        }
        let mut update = pre.clone();
        update.extend(["apt-get", "update", "-q", "-o", APT_LOCK_WAIT]);
        // An index of an unrelated suite failing (a mirror mid-sync) must not stop the
        // install: apt-get install reports what it really cannot find.
        if let Err(e) = step(dry_run, &update) {
            eprintln!("setup: warning: {e}; going on with the indexes apt has");
        }
        let mut install = pre.clone();
        install.extend([
            "env",
            "DEBIAN_FRONTEND=noninteractive",
            "apt-get",
            "install",
            "-y",
            "-q",
            "-o",
            APT_LOCK_WAIT,
            "--no-install-recommends",
        ]);
        // One install: with QEMU from bookworm-backports, the rest of QEMU's family
        // must come from there too. A machine image can already carry a backports
        // qemu-utils, which Breaks bookworm's qemu-system-common: installing bookworm's
        // QEMU first, then upgrading, cannot resolve (seen on a fresh CI machine).
        let mut wanted: Vec<&str> = missing.clone();
        if backports {
            install.extend(["-t", "bookworm-backports"]);
            for p in ["qemu-system-arm", "qemu-user-static"] {
                if !wanted.contains(&p) {
                    wanted.push(p);
                }
            }
        }
        install.extend(wanted.iter().copied());
        if !wanted.is_empty() {
            step(dry_run, &install)?;
        }
    }
    crate::lava::tools::unpack(dry_run)?;
    if !succeeds("python3", &["-m", "ziglang", "version"]) {
        step(dry_run, &["python3", "-m", "pip", "install", "-q", ZIGLANG])?;
    }
    if crate::toolchain::rust_src_dir().is_none() {
        step(dry_run, &["rustup", "component", "add", "rust-src"])?;
    }
    // xtask/tests/lints.rs runs clippy on a scratch crate with the workspace's lints.
    if !succeeds("cargo", &["clippy", "--version"]) {
        step(dry_run, &["rustup", "component", "add", "clippy"])?;
    }
    let have = crate::toolchain::installed_targets();
    for t in crate::host_cross::TARGETS {
        if !have.iter().any(|i| i == t.triple) {
            step(dry_run, &["rustup", "target", "add", t.triple])?;
        }
    }
    eprintln!("setup: done");
    Ok(())
}

/// True when QEMU knows every machine of [`QEMU_MACHINES`].
fn qemu_has_machines() -> bool {
    QEMU_MACHINES.iter().all(|(system, machine)| {
        Command::new(system)
            .args(["-machine", "help"])
            .output()
            .is_ok_and(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .any(|l| l.split_whitespace().next() == Some(machine))
            })
    })
}

/// `VERSION_CODENAME` of /etc/os-release (`bookworm`, `trixie`...).
fn os_codename() -> Option<String> {
    let text = std::fs::read_to_string("/etc/os-release").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("VERSION_CODENAME="))
        .map(|v| v.trim_matches('"').to_owned())
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
