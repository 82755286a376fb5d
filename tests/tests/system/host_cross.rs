//! The host tool on macOS and Windows (xtask/src/host_cross.rs): `cargo xtask host`
//! cross-builds `benchboot` for aarch64-apple-darwin, x86_64-apple-darwin and
//! x86_64-pc-windows-gnu with zig; each file is checked here by its own header bytes
//! (Mach-O 64-bit magic and CPU type, PE signature and machine). The Windows build then
//! runs under Debian's wine 8.0: its commands on the test documents, `flash` to a file,
//! `devices`, `flash` and `probe` on wine's one (system) disk, and the host crate's own
//! tests (unit and integration, `flash_raw` among them) built as Windows programs.
//!
//! The macOS builds cannot run here; their decision logic (diskutil) is tested on
//! captured outputs on Linux (host/tests/integration/flash_diskutil.rs).

use std::process::Command;
use std::time::{Duration, Instant};

use xtask::host_cross::{self, TARGETS};

/// Mach-O 64-bit: `MH_MAGIC_64` little-endian, then `cputype` (mach/machine.h:
/// `CPU_TYPE_ARM64` 0x0100000c, `CPU_TYPE_X86_64` 0x01000007) and `filetype`
/// `MH_EXECUTE` (2) at offset 12.
fn macho_cpu(data: &[u8]) -> Option<u32> {
    let word = |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().unwrap());
    (data.len() > 16 && word(0) == 0xfeed_facf && word(12) == 2).then(|| word(4))
}

/// PE: `MZ`, the PE header offset at 0x3c, `PE\0\0`, then the COFF `Machine`
/// (0x8664 = AMD64; Microsoft PE/COFF specification, "Machine Types").
fn pe_machine(data: &[u8]) -> Option<u16> {
    if data.len() < 0x40 || &data[..2] != b"MZ" {
        return None;
    }
    let at = u32::from_le_bytes(data[0x3c..0x40].try_into().unwrap()) as usize;
    (data.get(at..at + 4)? == b"PE\0\0")
        .then(|| u16::from_le_bytes(data[at + 4..at + 6].try_into().unwrap()))
}

/// The Windows `benchboot.exe` under wine, with the test prefix.
fn wine(env: &[(String, String)], args: &[&str]) -> std::process::Output {
    let exe = host_cross::HostTarget::of("x86_64-pc-windows-gnu")
        .unwrap()
        .binary();
    Command::new(host_cross::WINE)
        .arg(exe)
        .args(args)
        .current_dir(xtask::repo_root())
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap()
}

/// How long the host crate's tests may take as a Windows build under wine, their build
/// included: 25 min (about 5 on a clean 2-core machine). A test that hangs under wine
/// (one did: a failed assertion left a helper thread looping) fails this test with the
/// output so far instead of holding CI until its own limit.
const WINE_TESTS_LIMIT: Duration = Duration::from_secs(25 * 60);

/// Runs `cmd` in a process group of its own, its output in files; past `limit` the
/// whole group (cargo, the test program under wine, the programs it started) is killed.
/// Returns whether it succeeded, its stdout and its stderr (with a closing line saying
/// it was killed, when it was).
fn run_within(mut cmd: Command, limit: Duration) -> (bool, String, String) {
    use std::os::unix::process::CommandExt as _;
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let mut child = cmd
        .process_group(0)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > limit {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_secs(1));
    };
    let read =
        |p: &std::path::Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
    let mut errors = read(&err);
    if status.is_none() {
        errors.push_str(&format!(
            "\nstill running after {} s: killed (a test hangs under wine: the test \
             output above names it as running for over 60 seconds)",
            limit.as_secs()
        ));
    }
    (status.is_some_and(|s| s.success()), read(&out), errors)
}

#[test]
fn the_host_tool_builds_for_macos_and_windows_and_its_windows_build_passes_under_wine() {
    let _slot = benchboot_tests::qemu_slot(module_path!());
    let all: Vec<_> = TARGETS.iter().collect();
    let bins = host_cross::build(&all).expect("cargo xtask host");
    let cpus: Vec<String> = bins
        .iter()
        .map(|p| {
            let data = std::fs::read(p).unwrap();
            match (macho_cpu(&data), pe_machine(&data)) {
                (Some(cpu), None) => format!("mach-o {cpu:#010x}"),
                (None, Some(m)) => format!("pe {m:#06x}"),
                other => panic!("{}: neither Mach-O nor PE: {other:?}", p.display()),
            }
        })
        .collect();
    assert_eq!(
        cpus,
        ["mach-o 0x0100000c", "mach-o 0x01000007", "pe 0x8664"]
    );

    // The Windows build's commands, under wine.
    let env = host_cross::wine_test_env().expect("wine prefix");
    let out = wine(&env, &["--version"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("benchboot {}", env!("CARGO_PKG_VERSION")),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = wine(&env, &["report", "host/tests/data/handmade-a.json"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        report.starts_with("benchboot report: run handmade-a on handmade-board"),
        "{report}"
    );
    // `flash` to a regular file takes Windows' own path: FILE_FLAG_NO_BUFFERING |
    // FILE_FLAG_WRITE_THROUGH, whole sectors (the image ends inside one), read back.
    let dir = tempfile::tempdir().unwrap();
    let (image, card) = (dir.path().join("board.img"), dir.path().join("card.img"));
    let mut bytes: Vec<u8> = (0..(3 << 20) + 700).map(|i| (i * 31 % 251) as u8).collect();
    bytes[510..512].copy_from_slice(&[0x55, 0xaa]);
    std::fs::write(&image, &bytes).unwrap();
    let (image_s, card_s) = (image.to_str().unwrap(), card.to_str().unwrap());
    let out = wine(&env, &["flash", image_s, "--device", card_s, "--yes"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH aligned to 4096 B"),
        "{said}"
    );
    assert!(said.contains("MiB/s, unbuffered, write-through)"), "{said}");
    assert!(said.contains("matches the image"), "{said}");
    assert!(
        std::fs::read(&card).unwrap() == bytes,
        "the card file differs from the image"
    );
    // The system's disk: refused, nothing opened; C: by its letter names no disk under
    // wine (its extents are empty), which is said.
    for (device, want) in [
        (
            r"\\.\PhysicalDrive0",
            r"error: refusing to write \\.\PhysicalDrive0",
        ),
        (
            "C:",
            "error: --device C:: no disk this machine lists holds that volume",
        ),
    ] {
        let out = wine(&env, &["flash", image_s, "--device", device, "--yes"]);
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(said.contains(want), "{device}: {said}");
    }
    // `probe`: a file is no card; the system's disk is refused as flash refuses it.
    let out = wine(&env, &["probe", card_s, "--yes"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("card.img: a regular file, not a card"),
        "{said}"
    );
    let out = wine(&env, &["probe", r"\\.\PhysicalDrive0", "--yes"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(r"error: benchboot probe refuses the same disks as benchboot flash: refusing to write \\.\PhysicalDrive0"),
        "{said}"
    );
    // `collect --from-card` of a raw disk opens it itself (no longer refused); wine
    // cannot tell its length (IOCTL_DISK_GET_LENGTH_INFO, ERROR_NOT_SUPPORTED).
    let store = dir.path().join("store");
    let out = wine(
        &env,
        &[
            "collect",
            "--from-card",
            r"\\.\PhysicalDrive0",
            "--store",
            store.to_str().unwrap(),
        ],
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains(r"error: \\.\PhysicalDrive0: the disk's length: "),
        "{said}"
    );

    // `devices` asks Windows' disk IOCTLs: wine 8.0 shows one disk, PhysicalDrive0,
    // with a made-up descriptor (SCSI, not removable) and a C: whose extents name no
    // disk; both rules refuse it, and the query wine does not support is a note.
    let out = wine(&env, &["devices", "--json"]);
    let json = String::from_utf8_lossy(&out.stdout);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{json}{said}");
    let list: serde_json::Value =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    let disk0 = list
        .as_array()
        .and_then(|a| a.iter().find(|d| d["name"] == "PhysicalDrive0"))
        .unwrap_or_else(|| panic!("no PhysicalDrive0: {json}{said}"));
    assert_eq!(disk0["path"], r"\\.\PhysicalDrive0", "{json}");
    assert_eq!(disk0["writable"], false, "{json}");
    let codes: Vec<&str> = disk0["refusals"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["reason"].as_str())
        .collect();
    assert_eq!(codes, ["not-removable", "holds-system"], "{json}");
    assert!(
        said.contains("every disk is refused as possibly holding it"),
        "{said}"
    );
    let out = wine(&env, &["devices"]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{table}");
    assert!(table.contains(r"\\.\PhysicalDrive0"), "{table}");

    // The host crate's tests as Windows programs, within WINE_TESTS_LIMIT.
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or("cargo".into()));
    cargo
        .current_dir(xtask::repo_root())
        .args(["test", "-p", "benchboot", "--lib", "--test", "integration"])
        .args([
            "--profile",
            host_cross::PROFILE,
            "--target",
            "x86_64-pc-windows-gnu",
        ])
        .envs(env.iter().map(|(k, v)| (k, v)));
    let (ok, text, errors) = run_within(cargo, WINE_TESTS_LIMIT);
    assert!(ok, "the host tests under wine failed:\n{text}\n{errors}");
    let passed: u32 = text
        .lines()
        .filter_map(|l| l.strip_prefix("test result: ok. "))
        .filter_map(|l| l.split(' ').next()?.parse::<u32>().ok())
        .sum();
    println!("host tests under wine: {passed} passed");
    // 95 unit and 68 integration tests ran as a Windows build when this was written.
    assert!(
        passed >= 150,
        "only {passed} host tests ran under wine:\n{text}"
    );
}
