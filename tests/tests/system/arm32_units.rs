//! The boards are 32-bit ARM and the host is not: the pure logic the boards run (plans,
//! results maths, the network engine, the DHCP server, the init's parsers and engines,
//! and the parsers PID 1 runs on the board: nl80211 and regulatory (`benchboot-wifi`),
//! the results journal's ring, kernel modules and modalias (`benchboot-kmod`), the
//! fake-capacity probe, the console protocol and the SD card's registers) also runs its
//! own unit tests on `armv7-unknown-linux-musleabihf` under qemu-user, where `usize` is
//! 32 bits, `u64` atomics and alignment are the board's and integer overflow shows up as
//! it would there.
//!
//! The route is `cargo xtask firmware`'s zig route (xtask/src/toolchain.rs): std built
//! from source (`-Zbuild-std`, `RUSTC_BOOTSTRAP=1`, rustup's `rust-src`), `zig cc` as
//! linker and musl libc, and `qemu-arm-static -cpu cortex-a7` as
//! `CARGO_TARGET_<TRIPLE>_RUNNER`. All of it comes with `cargo xtask setup`; without it
//! the test fails under CI and is skipped elsewhere (`benchboot_tests::needs`). The build
//! shares the workspace's target folder (`target/armv7-unknown-linux-musleabihf/`).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Instant;

use xtask::firmware::{zig_wrapper, CpuTarget};
use xtask::toolchain::Available;

const TRIPLE: &str = "armv7-unknown-linux-musleabihf";

/// The crates whose unit tests (`--lib`) run on the board's architecture: what PID 1
/// computes and parses without touching the board.
const CRATES: &[&str] = &[
    "benchboot-plan",
    "benchboot-results",
    "benchboot-netbench",
    "benchboot-dhcp",
    "benchboot-storage",
    "benchboot-memory",
    "benchboot-firmware",
    "benchboot-wifi",
    "benchboot-journal",
    "benchboot-kmod",
    "benchboot-probe",
    "benchboot-console",
    "benchboot-sdcard",
];

/// The test totals of one `cargo test` output: (test binaries run, passed, failed,
/// ignored), summed over its `test result:` lines.
fn totals(out: &str) -> (usize, u64, u64, u64) {
    let mut t = (0, 0, 0, 0);
    for line in out.lines().filter(|l| l.starts_with("test result: ")) {
        let count = |word: &str| -> u64 {
            line.split(';')
                .find_map(|part| {
                    let mut w = part.split_whitespace().rev();
                    (w.next() == Some(word)).then(|| w.next()?.parse().ok())?
                })
                .unwrap_or(0)
        };
        t.0 += 1;
        t.1 += count("passed");
        t.2 += count("failed");
        t.3 += count("ignored");
    }
    t
}

#[test]
fn totals_read_every_result_line() {
    let out = "test result: ok. 12 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out\n\
               noise\n\
               test result: FAILED. 3 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out";
    assert_eq!(totals(out), (2, 15, 2, 1));
}

#[test]
fn pure_logic_unit_tests_pass_on_armv7_under_qemu_user() {
    const TEST: &str = "pure_logic_unit_tests_pass_on_armv7_under_qemu_user";
    // A cross build of std and thirteen crates: not beside a QEMU boot.
    let _slot = benchboot_tests::qemu_slot(module_path!());
    let have = Available::probe();
    let qemu = Command::new("qemu-arm-static")
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success());
    for (ok, what) in [
        (
            qemu,
            "qemu-arm-static (apt: qemu-user-static) is not installed",
        ),
        (
            have.rust_src,
            "rustup's rust-src component is not installed",
        ),
        (
            have.zig,
            "`python3 -m ziglang` (pip: ziglang) is not installed",
        ),
    ] {
        if !ok {
            benchboot_tests::missing(TEST, what, "run `cargo xtask setup`");
            return;
        }
    }
    let cpu = CpuTarget::baseline(TRIPLE).unwrap();
    let cc = zig_wrapper(&cpu).unwrap();
    let env_triple = TRIPLE.to_uppercase().replace('-', "_");
    let (mut reader, writer) = std::io::pipe().unwrap();
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.arg("test");
    for c in CRATES {
        cmd.args(["-p", c]);
    }
    cmd.args(["--lib", "--target", TRIPLE, "-Zbuild-std"])
        .current_dir(xtask::repo_root())
        .env("RUSTC_BOOTSTRAP", "1")
        .env(format!("CARGO_TARGET_{env_triple}_LINKER"), &cc)
        .env(format!("CC_{}", TRIPLE.replace('-', "_")), &cc)
        .env(
            format!("CARGO_TARGET_{env_triple}_RUSTFLAGS"),
            "-C link-self-contained=no",
        )
        .env(
            format!("CARGO_TARGET_{env_triple}_RUNNER"),
            format!("qemu-arm-static -cpu {}", cpu.qemu_cpu),
        )
        .env("CARGO_TERM_COLOR", "never")
        .stdin(Stdio::null())
        .stdout(writer.try_clone().unwrap())
        .stderr(writer);
    let started = Instant::now();
    let mut child = cmd.spawn().expect("cargo runs");
    // The command holds the pipe's write ends: drop them so the read ends with cargo.
    drop(cmd);
    let mut out = String::new();
    reader.read_to_string(&mut out).unwrap();
    let status = child.wait().unwrap();
    let secs = started.elapsed().as_secs_f64();
    assert!(
        status.success(),
        "cargo test --target {TRIPLE} failed ({status}):\n{out}"
    );
    let (binaries, passed, failed, ignored) = totals(&out);
    let on_arm = out
        .lines()
        .filter(|l| l.trim_start().starts_with("Running unittests "))
        .filter(|l| l.contains(&format!("/{TRIPLE}/")))
        .count();
    assert_eq!(
        (binaries, on_arm),
        (CRATES.len(), CRATES.len()),
        "one {TRIPLE} unit-test binary per crate of {CRATES:?}:\n{out}"
    );
    assert!(passed > 0 && failed == 0, "{out}");
    eprintln!(
        "{TRIPLE} under qemu-arm-static -cpu {}: {passed} passed, {ignored} ignored in \
         {binaries} crates ({}), {secs:.1} s with the build",
        cpu.qemu_cpu,
        CRATES.join(", ")
    );
}
