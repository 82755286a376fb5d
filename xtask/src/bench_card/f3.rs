//! f3 (Debian's package `f3`, `f3write` / `f3read` / `f3probe`): one pass on a
//! filesystem made on the device under test, and what its output says.
//!
//! f3 8.0's units: `adjust_unit` (utils.c) divides by 1024 while the value is 1024 or
//! more and names the steps "Byte", "KB", "MB", "GB": its "MB/s" is MiB/s (2^20 B/s).
//!
//! What its averages time (libflow.c): the data goes in chunks, each written (or read)
//! in calls of at most 2 MiB, f3write's ended by `fdatasync` and
//! `posix_fadvise(DONTNEED)`; the chunk size starts at 512 B and doubles while a chunk
//! takes at most 1 s, then holds chunks near 1 s. The data is generated (a 64-bit LCG
//! per 8 bytes) inside the timed chunk; opening and closing each 1 GiB file are outside.
//! The average is the bytes of the completed chunks over their time in whole ms, once
//! that time passes 1 s (`has_enough_measurements`); before that, the bytes of the
//! completed chunks over the whole run's time. A device that takes the filesystem's
//! free space in about 1 s or less (a 1 GiB loop device at 1,000 MiB/s and up) never
//! gets there: its last chunk, up to half the data, never completes, and the average is
//! the other half over the whole time, about half the real speed. On a card at tens of
//! MiB/s it does not arise.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

/// The filesystem f3 writes its files on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fs {
    /// `mkfs.ext4 -q -F -m 0 -E lazy_itable_init=0,lazy_journal_init=0`: nothing left to
    /// initialise in the background during the timed writes, no reserved blocks.
    Ext4,
    /// `mkfs.exfat`, mounted with `-t exfat-fuse`: what a card of 64 GB and up is sold
    /// with, its metadata all at the start. exFAT through FUSE because this machine's
    /// kernel has neither vfat nor exfat (`/proc/filesystems`); ext4's journal sits in
    /// the middle of the device, where a fake that wraps at or drops past 16-64 MiB of
    /// 256 loses it, and the filesystem no longer mounts.
    Exfat,
}

impl Fs {
    /// The mkfs command line before the device.
    pub fn mkfs(self) -> &'static [&'static str] {
        match self {
            Fs::Ext4 => &[
                "mkfs.ext4",
                "-q",
                "-F",
                "-m",
                "0",
                "-E",
                "lazy_itable_init=0,lazy_journal_init=0",
            ],
            Fs::Exfat => &["mkfs.exfat"],
        }
    }

    /// `mount`'s arguments before the device.
    pub fn mount(self) -> &'static [&'static str] {
        match self {
            Fs::Ext4 => &[],
            Fs::Exfat => &["-t", "exfat-fuse"],
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Fs::Ext4 => "ext4",
            Fs::Exfat => "exfat",
        }
    }
}

/// f3 8.0's size with its unit (`adjust_unit`: powers of 1024), e.g. `392.55 MB` ->
/// bytes.
pub fn parse_size(value: &str, unit: &str) -> Option<f64> {
    let v: f64 = value.parse().ok()?;
    let power = ["Byte", "KB", "MB", "GB", "TB", "PB", "EB"]
        .iter()
        .position(|u| *u == unit)?;
    Some(v * 1024f64.powi(power as i32))
}

/// `Average writing speed: 392.55 MB/s` (`what` = "writing") or `Average reading
/// speed: ...` ("reading") -> bytes/s; None when f3 printed no speed ("Writing speed
/// not available").
pub fn parse_speed(out: &str, what: &str) -> Option<f64> {
    let prefix = format!("Average {what} speed: ");
    let rest = out.lines().find_map(|l| l.trim().strip_prefix(&prefix))?;
    let (value, unit) = rest.split_once(' ')?;
    parse_size(value, unit.strip_suffix("/s")?)
}

/// What f3read found, in 512-byte sectors (its `SECTOR_SIZE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Found {
    pub ok: u64,
    pub lost: u64,
    pub corrupted: u64,
    pub changed: u64,
    pub overwritten: u64,
    /// "WARNING: Not all data was read due to I/O error(s)".
    pub io_errors: bool,
    /// "WARNING: Not all F3 files in the range ... are available" or a "Missing file".
    pub missing_files: bool,
}

impl Found {
    /// f3's verdict as its manual reads it: the card is good when no data was lost,
    /// every file was there and read whole, and something was read at all.
    pub fn good(&self) -> bool {
        self.lost == 0 && !self.io_errors && !self.missing_files && self.ok > 0
    }
}

/// f3read's closing lines: `  Data OK: 1.00 GB (2097152 sectors)`, `Data LOST: ...`,
/// `Corrupted:`, `Slightly changed:`, `Overwritten:` and its two warnings.
pub fn parse_read(out: &str) -> Option<Found> {
    let sectors = |label: &str| -> Option<u64> {
        let line = out.lines().find(|l| l.trim_start().starts_with(label))?;
        let inner = line.rsplit_once('(')?.1;
        inner.split_whitespace().next()?.parse().ok()
    };
    Some(Found {
        ok: sectors("Data OK:")?,
        lost: sectors("Data LOST:")?,
        corrupted: sectors("Corrupted:")?,
        changed: sectors("Slightly changed:")?,
        overwritten: sectors("Overwritten:")?,
        io_errors: out.contains("WARNING: Not all data was read"),
        missing_files: out.contains("WARNING: Not all F3 files") || out.contains("Missing file"),
    })
}

/// f3read's summary block, from `Data OK:` to the end, for the report.
pub fn summary_block(out: &str) -> String {
    match out.find("Data OK:") {
        Some(i) => {
            let start = out[..i].rfind('\n').map_or(0, |n| n + 1);
            out[start..].trim_end().to_string()
        }
        None => out.trim_end().to_string(),
    }
}

/// One f3 pass: speeds in bytes/s, what f3read found, and what went wrong on the way.
#[derive(Debug, Clone, Default)]
pub struct Pass {
    /// f3write's and f3read's "Average ... speed", bytes/s.
    pub write_b_s: Option<f64>,
    pub read_b_s: Option<f64>,
    /// The bytes of the `.h2w` files f3write left, and the wall time of each tool's
    /// process, s.
    pub file_bytes: u64,
    pub write_wall_s: f64,
    pub read_wall_s: f64,
    /// What f3read found on the mount f3write wrote through.
    pub found: Option<Found>,
    /// With `remount`: what f3read found after an unmount and a mount (the device's
    /// last close drops its page cache: the "disconnect and connect back" of f3's
    /// manual), or why it could not run.
    pub after_remount: Option<std::result::Result<Found, String>>,
    /// f3write's and f3read's output (the first f3read's).
    pub write_out: String,
    pub read_out: String,
    /// The second f3read's output.
    pub reread_out: String,
    /// A step that failed (mkfs, mount, an f3 tool's exit status), in words.
    pub failures: Vec<String>,
}

/// Runs `cmd`, returning its exit success and its stdout + stderr.
fn output(cmd: &mut Command) -> Result<(bool, String)> {
    let o = cmd.output().with_context(|| format!("running {cmd:?}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    Ok((o.status.success(), text))
}

/// [`output`] and its wall time, s.
fn timed(cmd: &mut Command) -> Result<(bool, String, f64)> {
    let t = std::time::Instant::now();
    let (ok, text) = output(cmd)?;
    Ok((ok, text, t.elapsed().as_secs_f64()))
}

/// Mounted until dropped.
struct Mounted<'a>(&'a Path);

impl<'a> Mounted<'a> {
    fn new(dev: &Path, mnt: &'a Path, fs: Fs) -> Result<std::result::Result<Self, String>> {
        let (ok, text) = output(Command::new("mount").args(fs.mount()).arg(dev).arg(mnt))?;
        Ok(if ok {
            Ok(Mounted(mnt))
        } else {
            Err(format!(
                "mount failed: {}",
                text.trim().replace('\n', " / ")
            ))
        })
    }
}

impl Drop for Mounted<'_> {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0).status();
    }
}

/// The bytes of the `.h2w` files in `dir`.
fn h2w_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".h2w"))
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// f3's own use (its manual): make `fs` on `dev`, mount it on `mnt`, `f3write MNT`, then
/// `f3read MNT` on the same mount (f3read drops each file's pages with
/// `posix_fadvise(DONTNEED)` before reading it, so its reads reach the device); with
/// `remount`, unmount, mount and `f3read MNT` again; unmount. A failed mkfs or mount
/// ends the pass with the failure recorded, not an error: on a fake that is a finding.
pub fn pass(dev: &Path, mnt: &Path, fs: Fs, remount: bool) -> Result<Pass> {
    let mut p = Pass::default();
    std::fs::create_dir_all(mnt)?;
    let (ok, text) = output(Command::new(fs.mkfs()[0]).args(&fs.mkfs()[1..]).arg(dev))?;
    if !ok {
        p.failures
            .push(format!("mkfs.{} failed: {}", fs.name(), text.trim()));
        return Ok(p);
    }
    let mounted = match Mounted::new(dev, mnt, fs)? {
        Ok(m) => m,
        Err(e) => {
            p.failures.push(e);
            return Ok(p);
        }
    };
    let (ok, text, s) = timed(Command::new("f3write").arg(mnt))?;
    if !ok {
        p.failures.push("f3write exited non-zero".into());
    }
    (p.write_b_s, p.write_out, p.write_wall_s) = (parse_speed(&text, "writing"), text, s);
    p.file_bytes = h2w_bytes(mnt);
    let (ok, text, s) = timed(Command::new("f3read").arg(mnt))?;
    if !ok {
        p.failures.push("f3read exited non-zero".into());
    }
    (p.read_b_s, p.found, p.read_wall_s) = (parse_speed(&text, "reading"), parse_read(&text), s);
    p.read_out = text;
    drop(mounted);
    if remount {
        p.after_remount = Some(match Mounted::new(dev, mnt, fs)? {
            Err(e) => Err(e),
            Ok(m) => {
                let (_, text) = output(Command::new("f3read").arg(mnt))?;
                drop(m);
                let found =
                    parse_read(&text).ok_or_else(|| format!("no f3read summary: {}", text.trim()));
                p.reread_out = text;
                found
            }
        });
    }
    Ok(p)
}

/// `f3probe --destructive --time-ops DEV`: its exit code (0 for a good device, 100 +
/// its fake type otherwise: 101 "damaged", 102-104 the counterfeits) and everything it
/// printed.
pub fn probe(dev: &Path) -> Result<(Option<i32>, String)> {
    let o = Command::new("f3probe")
        .args(["--destructive", "--time-ops"])
        .arg(dev)
        .output()
        .context("running f3probe")?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    Ok((o.status.code(), text))
}

/// The installed f3's Debian version (`dpkg-query`), e.g. `8.0-2`.
pub fn version() -> Result<String> {
    let (ok, text) = output(Command::new("dpkg-query").args(["-W", "-f", "${Version}", "f3"]))?;
    if !ok {
        bail!("f3 is not installed: apt-get install f3 ({})", text.trim());
    }
    Ok(text.trim().to_string())
}
