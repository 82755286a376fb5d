//! Shared helpers for the system tests (`tests/system/`): image inspection with the real
//! tools, ([`browser`]) pages opened in headless chromium, ([`checks`]) what every QEMU
//! tier asserts of its run, ([`needs`]) what a test does when the machine lacks a tool
//! (fail under CI, skip elsewhere), ([`slot`]) the one QEMU slot of the test process and
//! ([`fake_card`]) a fake SD card as a loop device over a FUSE file.
#![forbid(unsafe_code)]

pub mod browser;
pub mod checks;
pub mod fake_card;
pub mod needs;
pub mod slot;

pub use needs::{missing, require_machine, under_ci};
pub use slot::{qemu_slot, QemuSlot};

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{ensure, Context, Result};
use benchboot_image::layout::{Layout, Part};

/// Copies partition `part` of `image` into a temporary file (the host kernel does not
/// scan partition tables on loop devices here, and fsck tools take a file).
pub fn extract_partition(image: &Path, part: &Part) -> Result<tempfile::NamedTempFile> {
    use std::io::{Read, Seek, SeekFrom};
    let mut src = std::fs::File::open(image)?;
    src.seek(SeekFrom::Start(part.offset_bytes()))?;
    let mut tmp = tempfile::NamedTempFile::new()?;
    let copied = std::io::copy(&mut src.by_ref().take(part.size_bytes()), tmp.as_file_mut())?;
    ensure!(
        copied == part.size_bytes(),
        "short partition p{}",
        part.number
    );
    Ok(tmp)
}

/// Runs a checker on `file`; returns its exit status and its stdout + stderr.
fn tool(prog: &str, args: &[&str], file: &Path) -> Result<(std::process::ExitStatus, String)> {
    let out = Command::new(prog)
        .args(args)
        .arg(file)
        .output()
        .with_context(|| format!("running {prog}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok((out.status, text))
}

/// Runs a checker and returns its output, whatever its exit status.
pub fn run_tool(prog: &str, args: &[&str], file: &Path) -> Result<String> {
    Ok(tool(prog, args, file)?.1)
}

/// Runs a checker and returns its output, failing with that output on a non-zero exit.
pub fn check_tool(prog: &str, args: &[&str], file: &Path) -> Result<String> {
    let (status, text) = tool(prog, args, file)?;
    ensure!(
        status.success(),
        "{prog} {args:?} failed ({status}):\n{text}"
    );
    Ok(text)
}

/// `sfdisk --dump`, `fsck.vfat -n` on every FAT partition, `e2fsck -fn` on every ext one
/// (the raw partition has no filesystem).
/// Returns the sfdisk dump.
pub fn fsck_image(image: &Path, layout: &Layout) -> Result<String> {
    let dump = check_tool("sfdisk", &["--dump"], image)?;
    for part in &layout.parts {
        let tmp = extract_partition(image, part)?;
        if part.mbr_type == benchboot_image::layout::TYPE_NON_FS_DATA {
            continue; // the raw test partition has no filesystem to check
        }
        if part.mbr_type == benchboot_image::layout::TYPE_FAT32_LBA {
            check_tool("fsck.vfat", &["-n"], tmp.path())
                .with_context(|| format!("p{}", part.number))?;
        } else {
            check_tool("e2fsck", &["-f", "-n"], tmp.path())
                .with_context(|| format!("p{}", part.number))?;
        }
    }
    Ok(dump)
}

/// `target/` of the workspace.
pub fn target_dir() -> PathBuf {
    xtask::target_dir()
}
