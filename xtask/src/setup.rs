//! `cargo xtask setup [--tests]`: installs what the main job, or the tests too, need on a
//! Debian machine, and says what each package is for.
//!
//! - `cargo xtask setup` (the main job, `cargo xtask qemu --board rpi-zero-w`, and
//!   `cargo xtask image`): [`MAIN_APT`] (QEMU's `raspi0` machine, the init's gate under
//!   qemu-user, mke2fs, fdtput, readelf), PyPI's `ziglang` (the init's C compiler,
//!   musl and linker) and rustup's `rust-src` (`-Zbuild-std`); then [`prebuild`]: the
//!   main job's host tool, kernel packages and init, so the main job starts from its image.
//! - `cargo xtask setup --tests` (what `.ci/run` calls): the installs above, without the
//!   prebuild (434 s of `.ci/run` on 2026-12-07; the tests build what they boot
//!   themselves, in the order they need it), plus [`TESTS_APT`] (the
//!   tests' checkers, chromium for the browser tests, LAVA's python, wine and MinGW for
//!   the Windows build, Debian's cross compilers, the benches' reference tools); QEMU 10
//!   from bookworm-backports on bookworm (the `bpim2u` and `raspi4b` machines,
//!   [`QEMU_MACHINES`]); Debian's LAVA packages (pinned) unpacked into `target/lava/`;
//!   rustup's `clippy` and `rustfmt` and the host tool's cross targets
//!   ([`crate::host_cross::DIST_TARGETS`]).
//!
//! Each step is skipped when already satisfied; `--dry-run` prints the commands only.

use std::process::Command;

use anyhow::{bail, Result};

/// How long apt waits for another apt or dpkg (a machine's unattended upgrade, a
/// second terminal) to release its lock instead of failing at once: apt.conf(5)'s
/// `DPkg::Lock::Timeout`, seconds (apt 1.9.11 and later; Debian 11 on).
pub const APT_LOCK_WAIT: &str = "DPkg::Lock::Timeout=600";

/// Debian packages of the main job and `cargo xtask image`: (package, what for).
pub const MAIN_APT: &[(&str, &str)] = &[
    (
        "qemu-system-arm",
        "QEMU: boots the card (raspi0 for rpi-zero-w, virt...)",
    ),
    (
        "qemu-user-static",
        "runs the built init on the board's CPU (its gate) under qemu-arm",
    ),
    ("e2fsprogs", "mke2fs: the card's ext2/3/4 partitions"),
    (
        "device-tree-compiler",
        "fdtput/fdtget: the board's device-tree fix-ups",
    ),
    (
        "binutils",
        "readelf -A: the init's gate checks its CPU and FPU attributes",
    ),
];

/// Debian packages the tests, benches and `cargo xtask host` / `dist` add: (package,
/// what for).
pub const TESTS_APT: &[(&str, &str)] = &[
    (
        "dosfstools",
        "fsck.vfat: the tests check the card's FAT partitions",
    ),
    (
        "fdisk",
        "sfdisk --dump: the tests check the card's partition table",
    ),
    ("file", "the tests name what a built file is"),
    ("xz-utils", "xz: the tests' compressed files"),
    ("iproute2", "ip: the DHCP test over a veth pair"),
    ("fio", "cargo xtask bench storage: the reference tool"),
    ("iperf3", "cargo xtask bench net: the reference tool"),
    ("chromium", "the HTML pages' browser tests (headless)"),
    (
        "fonts-dejavu-core",
        "text in the browser tests' screenshots",
    ),
    (
        "python3-yaml",
        "LAVA's own checks of the jobs (xtask/src/lava/tools.rs)",
    ),
    ("python3-jinja2", "LAVA's checks"),
    ("python3-pexpect", "LAVA's checks"),
    ("python3-requests", "LAVA's checks"),
    ("python3-voluptuous", "LAVA's checks"),
    ("python3-setproctitle", "LAVA's checks"),
    ("python3-configobj", "LAVA's checks"),
    ("python3-pyudev", "LAVA's checks"),
    ("python3-netifaces", "LAVA's checks"),
    ("python3-magic", "LAVA's checks"),
    ("python3-tz", "LAVA's checks"),
    (
        "tftpd-hpa",
        "lava-run --validate looks for a TFTP server's config",
    ),
    ("u-boot-tools", "lava-run --validate looks for mkimage"),
    ("udev", "lava-run --validate looks for udevadm"),
    ("telnet", "lava-run --validate looks for telnet"),
    ("ipxe-qemu", "the NIC option ROM of LAVA's qemu device type"),
    (
        "binutils-mingw-w64-x86-64",
        "dlltool: the host tool's Windows build (raw-dylib imports)",
    ),
    ("wine64", "runs the Windows build and its tests"),
    (
        "gcc-aarch64-linux-gnu",
        "the /dev/vcio module against the arm64 kernels' headers",
    ),
    (
        "gcc-arm-linux-gnueabihf",
        "the /dev/vcio module against the armmp kernels' headers",
    ),
    ("make", "kbuild, for the /dev/vcio module"),
];

/// The Debian packages of `cargo xtask setup` (`tests`: of `--tests`), in install order.
pub fn apt_packages(tests: bool) -> Vec<&'static str> {
    let extra: &[(&str, &str)] = if tests { TESTS_APT } else { &[] };
    MAIN_APT.iter().chain(extra).map(|(p, _)| *p).collect()
}

/// What one setup installs beyond apt, each with what it is for (printed first).
pub fn other_steps(tests: bool) -> Vec<(&'static str, &'static str)> {
    let mut v = vec![
        (
            "pip: ziglang",
            "zig: the init's C compiler, musl libc and linker",
        ),
        (
            "rustup: rust-src",
            "std's sources, built for the board's CPU (-Zbuild-std)",
        ),
    ];
    if tests {
        v.extend([
            (
                "apt: QEMU 10 (bookworm-backports, on bookworm)",
                "the bpim2u and raspi4b machines of the system tests",
            ),
            (
                "Debian's LAVA (target/lava)",
                "lava-schema and lava-run --validate on the jobs",
            ),
            (
                "rustup: clippy, rustfmt",
                ".ci/run's format and lint gates, the lint test (xtask/tests/lints.rs)",
            ),
            (
                "rustup: the host tool's targets",
                "cargo xtask host / dist: Linux musl, macOS, Windows",
            ),
        ]);
    }
    v
}

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

/// Installs what the main job needs, and with `tests` what the tests need too
/// (module docs); prints each part and what it is for first.
///
/// # Errors
/// A step that fails (apt, pip, rustup), named with its command.
pub fn run(dry_run: bool, tests: bool) -> Result<()> {
    let which = if tests {
        "the main job and the tests (.ci/run)"
    } else {
        "the main job (cargo xtask qemu --board rpi-zero-w); `--tests` adds the tests' tools"
    };
    eprintln!("setup: for {which}:");
    let extra: &[(&str, &str)] = if tests { TESTS_APT } else { &[] };
    for (p, why) in MAIN_APT.iter().chain(extra) {
        eprintln!("setup:   apt {p:<26} {why}");
    }
    for (what, why) in other_steps(tests) {
        eprintln!("setup:   {what}: {why}");
    }
    let t0 = std::time::Instant::now();
    let missing: Vec<&str> = apt_packages(tests)
        .into_iter()
        .filter(|p| !succeeds("dpkg-query", &["-W", "-f=${Status}", p]) || !installed(p))
        .collect();
    let old_qemu = tests && !qemu_has_machines();
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
    if tests {
        crate::lava::tools::unpack(dry_run)?;
    }
    if !succeeds("python3", &["-m", "ziglang", "version"]) {
        step(dry_run, &["python3", "-m", "pip", "install", "-q", ZIGLANG])?;
    }
    if crate::toolchain::rust_src_dir().is_none() {
        step(dry_run, &["rustup", "component", "add", "rust-src"])?;
    }
    if tests {
        // .ci/run's gates (`cargo fmt --check`, `cargo clippy -D warnings`) and
        // xtask/tests/lints.rs, which runs clippy on a scratch crate with the lints.
        for (tool, component) in [("clippy", "clippy"), ("fmt", "rustfmt")] {
            if !succeeds("cargo", &[tool, "--version"]) {
                step(dry_run, &["rustup", "component", "add", component])?;
            }
        }
        let have = crate::toolchain::installed_targets();
        for t in crate::host_cross::DIST_TARGETS {
            if !have.iter().any(|i| i == t.triple) {
                step(dry_run, &["rustup", "target", "add", t.triple])?;
            }
        }
    }
    if !tests {
        prebuild(dry_run)?;
    }
    eprintln!("setup: done in {:.0} s", t0.elapsed().as_secs_f64());
    Ok(())
}

/// The board of the main job (`cargo xtask qemu --board rpi-zero-w`), whose build
/// [`prebuild`] does ahead.
pub const MAIN_JOB_BOARD: &str = "rpi-zero-w";

/// Builds what the main job would otherwise build first, so that it starts from its
/// image: the host tool (`cargo build -p benchboot`, the debug build `cargo xtask qemu`
/// runs), the pinned kernel and loader packages (downloaded once into the cache, then
/// unpacked), and [`MAIN_JOB_BOARD`]'s init, whose std is built from source
/// (`-Zbuild-std`: rustup serves no std for `arm-unknown-linux-musleabihf` here,
/// toolchain.md) with every dependency: 156 s of the main job on a fresh machine
/// before. After an edit the main job rebuilds only what changed.
///
/// # Errors
/// A build or download that fails, with its cause.
pub fn prebuild(dry_run: bool) -> Result<()> {
    let steps = [
        "cargo build -p benchboot (the host tool)",
        "the pinned kernel and loader packages",
        "cargo xtask firmware --board rpi-zero-w (std from source, the init)",
    ];
    for s in steps {
        eprintln!("setup: for the main job: {s}");
    }
    if dry_run {
        return Ok(());
    }
    let board = crate::load_board(MAIN_JOB_BOARD)?;
    let t = std::time::Instant::now();
    crate::qemu::build_host_tool(false)?;
    let lock = crate::packages::Lock::load_repo()?;
    crate::packages::unpacked(&lock, &board.kernel.package)?;
    if let Some(l) = &board.loader {
        crate::packages::unpacked(&lock, &l.package)?;
    }
    crate::firmware::build(&crate::firmware::CpuTarget::of_board(&board))?;
    eprintln!(
        "setup: the main job's host tool, packages and init built in {:.0} s",
        t.elapsed().as_secs_f64()
    );
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every package `cargo xtask setup` installed before it was split in two.
    const BEFORE_THE_SPLIT: [&str; 35] = [
        "qemu-system-arm",
        "qemu-user-static",
        "dosfstools",
        "e2fsprogs",
        "fdisk",
        "device-tree-compiler",
        "binutils",
        "file",
        "xz-utils",
        "iproute2",
        "fio",
        "iperf3",
        "chromium",
        "fonts-dejavu-core",
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
        "tftpd-hpa",
        "u-boot-tools",
        "udev",
        "telnet",
        "ipxe-qemu",
        "binutils-mingw-w64-x86-64",
        "wine64",
        "gcc-aarch64-linux-gnu",
        "gcc-arm-linux-gnueabihf",
        "make",
    ];

    #[test]
    fn the_main_job_gets_qemu_and_the_image_tools_only() {
        assert_eq!(
            apt_packages(false),
            [
                "qemu-system-arm",
                "qemu-user-static",
                "e2fsprogs",
                "device-tree-compiler",
                "binutils"
            ]
        );
        let main = other_steps(false);
        assert_eq!(
            main.iter().map(|s| s.0).collect::<Vec<_>>(),
            ["pip: ziglang", "rustup: rust-src"]
        );
    }

    #[test]
    fn the_tests_get_everything_setup_installed_before() {
        let all = apt_packages(true);
        for p in BEFORE_THE_SPLIT {
            assert!(all.contains(&p), "{p} is no longer installed for the tests");
        }
        assert_eq!(all.len(), BEFORE_THE_SPLIT.len(), "{all:?}");
        // The main set is a prefix: --tests installs it too.
        assert!(all.starts_with(&apt_packages(false)));
        for heavy in ["chromium", "wine64", "gcc-aarch64-linux-gnu", "tftpd-hpa"] {
            assert!(!apt_packages(false).contains(&heavy), "{heavy}");
        }
        let steps: Vec<&str> = other_steps(true).iter().map(|s| s.0).collect();
        assert!(steps.iter().any(|s| s.contains("LAVA")), "{steps:?}");
        assert!(steps.iter().any(|s| s.contains("backports")), "{steps:?}");
        // Every package says what it is for.
        assert!(MAIN_APT
            .iter()
            .chain(TESTS_APT)
            .all(|(_, why)| why.len() > 8));
    }
}
