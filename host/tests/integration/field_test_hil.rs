//! `benchboot field-test` as a process.
//!
//! The hardware-in-the-loop test runs only when `BENCHBOOT_FIELD_BOARD` (a board name)
//! and `BENCHBOOT_FIELD_DEVICE` (its card, e.g. /dev/sdb) are set: then the real
//! command runs with `--yes` (it erases that card), prints what to plug where, and
//! must end with a stored run and its report. Optional: `BENCHBOOT_FIELD_IMAGE` (skip
//! the build), `BENCHBOOT_FIELD_TIMEOUT` (seconds), `BENCHBOOT_FIELD_STORE` (keep the
//! run there; default a temporary store). Without them it says why it is skipped and
//! passes.
//!
//! The other tests need no hardware: the command refuses an unknown board, a device
//! that is not a disk and the system's own disk, each with a clear message and nothing
//! written; and a rehearsal with a regular file as the card and the fake board
//! (`fake_board`) on 127.0.0.1 goes through every step.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BOARD_ENV: &str = "BENCHBOOT_FIELD_BOARD";
const DEVICE_ENV: &str = "BENCHBOOT_FIELD_DEVICE";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_owned()
}

/// `benchboot field-test ARGS` in the workspace, stdin closed (no terminal to confirm
/// on), `$BENCHBOOT_BOARD` unset.
fn field_test(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_benchboot"))
        .arg("field-test")
        .args(args)
        .current_dir(workspace())
        .env_remove("BENCHBOOT_BOARD")
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .output()
        .expect("benchboot runs")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A 2 MiB disk image: zeros and the MBR boot signature.
fn image(dir: &Path) -> PathBuf {
    let mut bytes = vec![0u8; 2 << 20];
    bytes[510] = 0x55;
    bytes[511] = 0xaa;
    bytes[4096..8192].fill(0xa5);
    let path = dir.join("board.img");
    std::fs::write(&path, &bytes).unwrap();
    path
}

#[test]
fn field_test_on_real_hardware() {
    let (Ok(board), Ok(device)) = (std::env::var(BOARD_ENV), std::env::var(DEVICE_ENV)) else {
        eprintln!(
            "SKIPPED: no board attached: set {BOARD_ENV}=<board> and {DEVICE_ENV}=<card, e.g. \
             /dev/sdb> to run the field test (it erases that card)"
        );
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let store = std::env::var("BENCHBOOT_FIELD_STORE")
        .map(PathBuf::from)
        .unwrap_or_else(|_| tmp.path().join("store"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_benchboot"));
    cmd.args([
        "field-test",
        "--board",
        &board,
        "--device",
        &device,
        "--yes",
    ])
    .arg("--store")
    .arg(&store)
    .current_dir(workspace())
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::inherit());
    if let Ok(image) = std::env::var("BENCHBOOT_FIELD_IMAGE") {
        cmd.args(["--image", &image]);
    }
    if let Ok(timeout) = std::env::var("BENCHBOOT_FIELD_TIMEOUT") {
        cmd.args(["--timeout", &timeout]);
    }
    // It inherits this process's environment ($BENCHBOOT_BOARD among it).
    let mut child = {
        let _env = crate::env_lock();
        cmd.spawn().expect("benchboot runs")
    };
    // The instructions must reach the person while the test runs: copy stdout to the
    // real stderr (not the captured one) line by line, and keep it.
    let mut out = String::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let _ = writeln!(std::io::stderr().lock(), "{line}");
        out.push_str(&line);
        out.push('\n');
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "field-test failed ({status})");
    for want in [
        "[4/7] plug in\n".to_string(),
        "[5/7] found the board at ".to_string(),
        "stored in ".to_string(),
        format!(" on {board}\n"),
    ] {
        assert!(out.contains(&want), "`{want}` missing from:\n{out}");
    }
    let runs = std::fs::read_dir(store.join("runs")).unwrap().count();
    assert!(runs >= 1, "no run in {}", store.display());
}

#[test]
fn an_unknown_board_is_refused_with_the_known_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let card = tmp.path().join("card.img");
    let img = image(tmp.path());
    let o = field_test(&[
        "--board",
        "no-such-board",
        "--device",
        card.to_str().unwrap(),
        "--image",
        img.to_str().unwrap(),
        "--yes",
    ]);
    let (out, err) = text(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("no board named `no-such-board` among the boards built in; ")
            && err.contains("known boards: bananapi-m1, beaglebone-black, "),
        "{err}"
    );
    assert_eq!(out, "");
    assert!(!card.exists(), "the card file was created");
}

#[test]
fn an_emulated_board_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let card = tmp.path().join("card.img");
    let o = field_test(&[
        "--board",
        "qemu-virt-arm64",
        "--device",
        card.to_str().unwrap(),
        "--yes",
    ]);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("runs only in QEMU")
            && err.contains("cargo xtask qemu --board qemu-virt-arm64"),
        "{err}"
    );
    assert!(!card.exists());
}

#[test]
fn a_device_that_is_not_a_disk_is_refused_before_the_build() {
    // No --image: were /dev/null not refused, this would start a build.
    let o = field_test(&["--board", "rpi-zero-w", "--device", "/dev/null", "--yes"]);
    let (out, err) = text(&o);
    assert!(!o.status.success());
    assert!(
        err.contains(
            "--device /dev/null: not a block device or regular file; name the whole card \
             (`benchboot devices`) or an image file"
        ),
        "{err}"
    );
    assert!(!out.contains("[2/7]"), "{out}");
    let o = field_test(&["--board", "rpi-zero-w", "--device", "/dev/sdzz9", "--yes"]);
    let (_, err) = text(&o);
    assert!(
        err.contains("/dev/sdzz9: no such device; `benchboot devices` lists the cards"),
        "{err}"
    );
}

/// The block device `/` is mounted from, when it is one (not in a container's overlay).
fn system_disk() -> Option<String> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let source = info.lines().find_map(|l| {
        let (pre, post) = l.split_once(" - ")?;
        (pre.split(' ').nth(4)? == "/").then(|| post.split(' ').nth(1).map(str::to_owned))?
    })?;
    let meta = std::fs::metadata(&source).ok()?;
    use std::os::unix::fs::FileTypeExt;
    meta.file_type().is_block_device().then_some(source)
}

#[test]
fn the_system_disk_is_refused() {
    let Some(disk) = system_disk() else {
        eprintln!("SKIPPED: / is not on a block device here");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let img = image(tmp.path());
    // Refused by the rules; and --dry-run, no --yes, no terminal: three times nothing
    // written.
    let o = field_test(&[
        "--board",
        "rpi-zero-w",
        "--device",
        &disk,
        "--image",
        img.to_str().unwrap(),
        "--dry-run",
    ]);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    // A partition (/dev/vda1) or the whole disk (/dev/vda): refused either way.
    assert!(
        err.contains(&format!("--device {disk} is partition "))
            || (err.contains(&format!("refusing to write {disk} ("))
                && err.contains("holds the running system (/ on ")),
        "{err}"
    );
}

#[test]
fn a_rehearsal_with_a_file_as_card_goes_through_every_step() {
    let tmp = tempfile::tempdir().unwrap();
    let img = image(tmp.path());
    let card = tmp.path().join("card.img");
    let store = tmp.path().join("store");
    let body = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rpi-zero-w-qemu.json"),
    )
    .unwrap();
    let addr = crate::fake_board::serve_results(body);
    let o = field_test(&[
        "--board",
        "rpi-zero-w",
        "--device",
        card.to_str().unwrap(),
        "--image",
        img.to_str().unwrap(),
        "--yes",
        "--addr",
        &addr,
        "--peer",
        "127.0.0.1:0",
        "--timeout",
        "30",
        "--store",
        store.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let card_path = card.display().to_string();
    let mut at = 0;
    for want in [
        format!("[1/7] card: {card_path} (a regular file: a rehearsal, nothing boots from it)"),
        format!(
            "[2/7] build: skipped, flashing {} (--image)\n",
            img.display()
        ),
        "[3/7] flash\n".into(),
        format!("target   {card_path} (new regular file)\n"),
        "verified 2 MiB read back".into(),
        "[4/7] plug in\n".into(),
        format!("  1. {card_path} is a regular file, not a card"),
        "against the benchboot peer this command runs on 127.0.0.1:".into(),
        format!("  benchboot collect --from-card {card_path}\n"),
        "[5/7] wait: for rpi-zero-w on its USB gadget link (up to 30 s;".into(),
        format!("[5/7] found the board at {addr}\n"),
        "[6/7] collect\n".into(),
        "warning: run rpi-zero-w-a0111b486424 is emulated (QEMU)".into(),
        "collected rpi-zero-w-a0111b486424 (board rpi-zero-w, kernel 6.1.0-50-rpi, complete, "
            .into(),
        format!("from {addr}\n"),
        "[7/7] report\n".into(),
        "benchboot report: run rpi-zero-w-a0111b486424 on rpi-zero-w".into(),
    ] {
        match out[at..].find(&want) {
            Some(i) => at += i + want.len(),
            None => panic!("`{want}` not found after byte {at} of:\n{out}"),
        }
    }
    assert!(
        !out.contains("127.0.0.1:0 "),
        "the peer's real port is named: {out}"
    );
    assert_eq!(std::fs::read(&card).unwrap(), std::fs::read(&img).unwrap());
    assert!(store.join("runs/rpi-zero-w-a0111b486424.json").is_file());
}
