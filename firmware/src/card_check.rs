//! The optional full-card check (plan `[card-check]`): the fake-capacity probe
//! (crates/probe) over the boot card's unpartitioned space, for cards already flashed.
//! It writes only past the last partition, so on a genuine card the board, its results
//! partition and the test partitions stay as they were. On a fake card, writes past its
//! real size land wherever the card maps them, which may be inside the partitions: PID 1
//! runs from its initramfs in RAM, so it still records the verdict and serves the
//! results over the link, but such a card is to be reflashed (or thrown away).
//!
//! The card is opened with O_DIRECT (no page cache between the probe and the card),
//! flushed with fsync (the kernel sends the card a cache flush) and reopened between
//! writing and reading back.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use benchboot_plan::{CardCheckPlan, Plan};
use benchboot_probe::counted::Counted;
use benchboot_probe::full::{full_pass, FullOptions, MonotonicClock};
use benchboot_probe::{BlockDevice, ProbeOptions, Verdict};
use benchboot_results::{CardCheck, RunResults, Severity};
use benchboot_storage::Bounce;

use crate::console::{self, say};
use crate::steps::in_worker_for;

const STEP: &str = "card-check";
const SYS_BLOCK: &str = "/sys/block";
/// Partitions end here at the latest before the check region starts: 1 MiB, the
/// alignment every partitioning tool uses (and the card's erase blocks divide).
const REGION_ALIGN: u64 = 1 << 20;

/// Runs the plan's card check, if it has one, on the disk holding the results
/// partition. A region too small, a disk that cannot be read or a failed worker is
/// recorded (event or fault) and the plan goes on; a fake card is an error event.
pub fn run_card_check(plan: &Plan, results: &mut RunResults) {
    let Some(c) = plan.card_check else {
        return;
    };
    let part = plan.results.device.trim_start_matches("/dev/");
    let disk = crate::blkid::disk_of(Path::new(SYS_BLOCK), part);
    let region = match unpartitioned_region(&Path::new(SYS_BLOCK).join(&disk)) {
        Ok((start, end)) if end.saturating_sub(start) >= c.min_region_bytes => (start, end),
        Ok((start, end)) => {
            let why = format!(
                "skipped: /dev/{disk} has {} MiB unpartitioned past its last partition, \
                 below the {} MiB the check needs (an image that fills the card)",
                end.saturating_sub(start) >> 20,
                c.min_region_bytes >> 20
            );
            say(&format!("card-check: {why}"));
            results.event(STEP, Severity::Warning, why);
            return;
        }
        Err(e) => {
            results.event(STEP, Severity::Error, e);
            return;
        }
    };
    let device = format!("/dev/{disk}");
    say(&format!(
        "card-check: fake-capacity probe of {device} bytes {}..{} (unpartitioned)",
        region.0, region.1
    ));
    let limit = Duration::from_millis(c.time_limit_ms);
    let path = PathBuf::from(&device);
    let nonce = nonce(&results.run_id);
    let report = in_worker_for(results, STEP, limit, move || {
        let started = std::time::Instant::now();
        // Every write counted from here: the fast cache's end in bytes written, the
        // quick probe's included.
        let mut dev = DirectDisk::open(&path)
            .map(|d| Counted::new(d, MonotonicClock::new()))
            .map_err(|e| std::io::Error::other(format!("{}: {e}", path.display())))?;
        let opts = options(&c, region, nonce);
        let mut report = benchboot_probe::probe(&mut dev, &opts, &mut |_| {})
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        if c.full {
            // Stop at 90 % of the worker's limit: a report of what was covered beats a
            // worker killed with nothing.
            let deadline = limit.mul_f64(0.9);
            let full = FullOptions {
                start_bytes: region.0,
                end_bytes: Some(region.1),
                nonce: nonce ^ 0x0f11,
                cache_flush_bytes: c.cache_flush_bytes,
                ..FullOptions::default()
            };
            let f = full_pass(
                &mut dev,
                &mut MonotonicClock::new(),
                &full,
                &mut |_| {},
                &mut || started.elapsed() >= deadline,
            )
            .map_err(|e| std::io::Error::other(e.to_string()))?;
            report.full = Some(f);
        }
        Ok(report)
    });
    let Some(report) = report else {
        return;
    };
    let pass = matches!(report.verdict, Verdict::Genuine);
    say(&format!("card-check: {}", report.summary()));
    if !pass {
        results.event(STEP, Severity::Error, report.summary());
    }
    if let Some(f) = &report.full {
        say(&format!("card-check: {}", f.summary()));
        match f.verdict() {
            Some(Verdict::Genuine) => {}
            // Stopped at 90 % of the time limit: what it covered held.
            None => results.event(STEP, Severity::Warning, f.summary()),
            Some(_) => results.event(STEP, Severity::Error, f.summary()),
        }
        for (i, x) in f.falls.iter().enumerate() {
            let cache = f
                .cache_words(x, i == 0)
                .map(|w| format!(": {w}"))
                .unwrap_or_default();
            say(&format!(
                "card-check: write speed falls at {} bytes into the pass: {:.1} -> {:.1} MiB/s{cache}",
                x.at.saturating_sub(f.region.0),
                x.before_mib_s,
                x.after_mib_s
            ));
        }
        for w in f.idle_words().into_iter().chain(f.idle_check_words()) {
            say(&format!("card-check: {w}"));
        }
    }
    let check = CardCheck { device, report };
    // What the card holds of the claimed size, MiB, and the whole-card pass's speeds;
    // the verdict comes with the others.
    for f in benchboot_console::figures::card_check(&check) {
        console::figure(&f);
    }
    results.card_check = Some(check);
}

/// The probe's options for `region` (bytes) of the card.
fn options(c: &CardCheckPlan, region: (u64, u64), nonce: u64) -> ProbeOptions {
    ProbeOptions {
        start_bytes: region.0,
        end_bytes: Some(region.1),
        nonce,
        resolution_bytes: Some(c.resolution_bytes),
        cache_flush_bytes: c.cache_flush_bytes,
    }
}

/// A per-run nonce from the run id (unique per boot): a stamp of an earlier run left on
/// the card never passes as this run's.
fn nonce(run_id: &str) -> u64 {
    // FNV-1a, 64-bit (a hash for uniqueness, not secrecy).
    run_id.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The space past the last partition of the disk at `disk_dir` (`/sys/block/<disk>`),
/// bytes `[start, end)`: `start` the end of the furthest partition rounded up to 1 MiB,
/// `end` the disk's size. Sizes in sysfs are 512-byte sectors
/// (Documentation/ABI/stable/sysfs-block).
///
/// # Errors
/// When the disk's size cannot be read.
pub fn unpartitioned_region(disk_dir: &Path) -> Result<(u64, u64), String> {
    let sectors =
        |p: &Path| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    let size = sectors(&disk_dir.join("size"))
        .ok_or_else(|| format!("{}/size: unreadable", disk_dir.display()))?;
    let mut last_end = 0;
    for e in std::fs::read_dir(disk_dir).map_err(|e| format!("{}: {e}", disk_dir.display()))? {
        let Ok(e) = e else { continue };
        let p = e.path();
        if !p.join("partition").exists() {
            continue;
        }
        if let (Some(start), Some(len)) = (sectors(&p.join("start")), sectors(&p.join("size"))) {
            last_end = last_end.max((start + len) * 512);
        }
    }
    let start = last_end.div_ceil(REGION_ALIGN) * REGION_ALIGN;
    Ok((start.min(size * 512), size * 512))
}

/// A whole disk opened for the probe: O_DIRECT, I/O through one aligned buffer
/// ([`Bounce`]).
struct DirectDisk {
    path: PathBuf,
    file: File,
    size: u64,
    block: u64,
    bounce: Bounce,
}

impl DirectDisk {
    fn open(path: &Path) -> std::io::Result<DirectDisk> {
        let file = Self::open_file(path)?;
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let sys = Path::new(SYS_BLOCK).join(name.as_ref());
        let read = |f: &str| -> Option<u64> {
            std::fs::read_to_string(sys.join(f))
                .ok()?
                .trim()
                .parse()
                .ok()
        };
        let size = read("size").unwrap_or(0) * 512;
        let block = read("queue/logical_block_size").unwrap_or(512).max(512);
        Ok(DirectDisk {
            path: path.to_owned(),
            file,
            size,
            block,
            bounce: Bounce::default(),
        })
    }

    fn open_file(path: &Path) -> std::io::Result<File> {
        benchboot_storage::os::open_direct(std::fs::OpenOptions::new().read(true).write(true), path)
    }
}

impl BlockDevice for DirectDisk {
    fn size_bytes(&self) -> u64 {
        self.size
    }

    fn block_bytes(&self) -> u64 {
        self.block
    }

    fn write_at(&mut self, offset: u64, buf: &[u8]) -> std::io::Result<()> {
        self.bounce.write_at(&self.file, offset, buf)
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.bounce.read_at(&self.file, offset, buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.sync_all()
    }

    fn reopen(&mut self) -> std::io::Result<()> {
        self.file = Self::open_file(&self.path)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The QEMU card's layout (crates/image/src/layout.rs defaults): p1 at 4 MiB, the
    /// extended p3 (2 sectors in sysfs) and its logical partitions; the last ends at
    /// 585 MiB of the 1024 MiB card.
    #[test]
    fn the_region_starts_past_the_furthest_partition() {
        let d = tempfile::tempdir().unwrap();
        let disk = d.path().join("mmcblk0");
        std::fs::create_dir_all(&disk).unwrap();
        std::fs::write(disk.join("size"), "2097152\n").unwrap();
        let mib = 2048u64;
        for (name, start, size) in [
            ("mmcblk0p1", 4 * mib, 64 * mib),
            ("mmcblk0p2", 68 * mib, 32 * mib),
            ("mmcblk0p3", 100 * mib, 2),
            ("mmcblk0p5", 100 * mib + 2048, 96 * mib),
            ("mmcblk0p9", 488 * mib + 2048, 96 * mib + 100),
        ] {
            let p = disk.join(name);
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(p.join("partition"), "1\n").unwrap();
            std::fs::write(p.join("start"), format!("{start}\n")).unwrap();
            std::fs::write(p.join("size"), format!("{size}\n")).unwrap();
        }
        // A non-partition entry with a `start` file is not a partition.
        std::fs::create_dir_all(disk.join("queue")).unwrap();
        let (start, end) = unpartitioned_region(&disk).unwrap();
        assert_eq!(end, 1024 << 20);
        // p9 ends at 585 MiB + 100 sectors: rounded up to 586 MiB.
        assert_eq!(start, 586 << 20);
        let e = unpartitioned_region(&d.path().join("nope")).unwrap_err();
        assert!(e.contains("nope/size"), "{e}");
    }

    #[test]
    fn nonces_differ_per_run() {
        assert_ne!(nonce("rpi-zero-w-aaaa"), nonce("rpi-zero-w-aaab"));
        assert_eq!(nonce("x"), nonce("x"));
    }
}
