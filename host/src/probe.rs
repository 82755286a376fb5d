//! `benchboot probe DEV`: is the card as large as it claims? Runs `benchboot-probe`
//! (position-stamped blocks, read back after writing far away) on a whole card, and
//! `benchboot flash --probe` runs it before writing an image.
//!
//! The device is refused exactly as `flash` refuses it
//! ([`crate::target_disk::lookup_disk`], [`crate::devices::Device::verdict`]);
//! `--allow-virtual` lifts only the refusal of virtual disks (loop devices: how the
//! system tests make a fake card). I/O goes
//! through `O_DIRECT | O_EXCL`; between writing and reading back: fsync, BLKFLSBUF
//! (`blockdev --flushbufs`, the host crate has no unsafe code), close and open again.

mod disk;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use benchboot_probe::counted::Counted;
use benchboot_probe::full::{full_pass, FullOptions, FullReport, MonotonicClock};
use benchboot_probe::{BlockDevice, ProbeOptions, ProbeReport, Verdict};

use crate::devices::{Device, Limits, Refusal, Use};
pub use disk::{ProbeDisk, SectorDisk};

/// `benchboot probe` as clap parses it.
#[derive(Debug, Clone, clap::Args)]
pub struct ProbeArgs {
    /// The whole card (`/dev/sdb`, `/dev/mmcblk0`; Windows `\\.\PhysicalDrive2` or `E:`,
    /// the disk holding that volume). Everything on it is destroyed.
    pub device: PathBuf,
    /// Do not ask for confirmation (required without a terminal).
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Also write the report as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub tuning: ProbeTuning,
    /// Probe a disk larger than a sane card (256 GiB).
    #[arg(long)]
    pub allow_large: bool,
    /// Probe a virtual disk (a loop device): for testing the probe itself.
    #[arg(long)]
    pub allow_virtual: bool,
    /// After the quick probe, write every sector once (4 MiB O_DIRECT writes of
    /// position-stamped data, each timed) and read every one back: the write and read
    /// speed across the card, where the sustained write speed falls (the end of its fast
    /// cache), write latencies and stalls, every bad region. Takes as long as writing
    /// and reading the whole card; Ctrl-C stops it and says what was covered.
    #[arg(long)]
    pub full: bool,
    /// With --full: after the pass, when its write speed fell, rest SECONDS without I/O
    /// and write again from the card's start until the speed falls: how much fast cache
    /// an idle pause gives back (cards move SLC contents to TLC/QLC while idle). Costs
    /// the pause, the time to write what came back fast, and three slow writes (12 MiB;
    /// at most twice the cache the pass found). Off by default.
    #[arg(long, value_name = "SECONDS", requires = "full")]
    pub idle_check: Option<u64>,
    /// With --full: draw the speed profile into DIR (probe-profile.png and .svg).
    #[arg(long, value_name = "DIR", requires = "full")]
    pub plots: Option<PathBuf>,
    /// With --full: the results store to keep the run in (as `collect` keeps a board's;
    /// `benchboot report` and `compare` read it by its id). Default: $BENCHBOOT_STORE,
    /// else $XDG_DATA_HOME/benchboot, else ~/.local/share/benchboot (root's under sudo).
    #[arg(long, value_name = "DIR", requires = "full")]
    pub store: Option<PathBuf>,
    /// With --full: do not keep the run in the results store.
    #[arg(long, requires = "full", conflicts_with = "store")]
    pub no_store: bool,
}

/// How finely and how hard to probe.
#[derive(Debug, Clone, clap::Args)]
pub struct ProbeTuning {
    /// Stamped data written between writing the samples and reading them back, to push
    /// them out of the card's write cache, MiB.
    #[arg(long, default_value_t = 32, value_name = "MIB")]
    pub cache_flush_mib: u64,
    /// Refine the real size to this, MiB (default: max(1 MiB, claimed / 4096)).
    #[arg(long, value_name = "MIB")]
    pub resolution_mib: Option<u64>,
}

/// `benchboot flash --probe` / `--force-fake`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct FlashProbeFlags {
    /// Probe the card for fake capacity first (it is about to be overwritten anyway);
    /// refuse to flash a fake card.
    #[arg(long)]
    pub probe: bool,
    /// With --probe: flash even a card found fake or failing (the image must fit in
    /// what the card really holds).
    #[arg(long, requires = "probe")]
    pub force_fake: bool,
}

/// The card `device` names, accepted by the rules of `flash` (with `allow_virtual`, a
/// loop device too); `root` is `/` or a fake sysfs tree.
///
/// # Errors
/// Not a block device, a partition, not listed, or refused (every reason).
#[cfg_attr(windows, allow(unused_variables))]
pub fn check_card(
    device: &Path,
    allow_large: bool,
    allow_virtual: bool,
    root: &Path,
) -> Result<(Device, Vec<PathBuf>)> {
    #[cfg(windows)]
    let found = crate::target_disk::find_windows_disk(
        "",
        &device.to_string_lossy(),
        &crate::devices::scan_system()?,
    )?;
    #[cfg(unix)]
    let found = None;
    let dev = match found {
        Some(d) => d,
        None => lookup_card(device, root)?,
    };
    judge_card(dev, allow_large, allow_virtual)
}

/// The disk `device` names by its node (Linux, macOS); on Windows a path that is no
/// disk or volume name (a file, or nothing).
fn lookup_card(device: &Path, root: &Path) -> Result<Device> {
    #[cfg(unix)]
    {
        use crate::identity::What;
        let found = crate::identity::lookup(device, root)?;
        match &found.what {
            What::New { .. } | What::Nowhere { .. } => bail!(
                "{}: no such device; `benchboot devices` lists the cards this machine sees",
                device.display()
            ),
            What::File { .. } => bail!(
                "{}: a regular file, not a card: the probe needs the card itself (a file \
                 cannot be fake)",
                device.display()
            ),
            _ => crate::target_disk::disk_of("", &found),
        }
    }
    #[cfg(windows)]
    {
        let meta = std::fs::metadata(device).with_context(|| {
            format!(
                "{}: no such device; `benchboot devices` lists the cards this machine sees",
                device.display()
            )
        })?;
        if meta.is_file() {
            bail!(
                "{}: a regular file, not a card: the probe needs the card itself (a file \
                 cannot be fake)",
                device.display()
            );
        }
        let _ = root;
        bail!(
            "{}: not a disk; name the card as \\\\.\\PhysicalDriveN or by its drive letter \
             (`benchboot devices`)",
            device.display()
        )
    }
}

/// The rules of `flash` on `dev`, `allow_virtual` lifting the refusal of a virtual disk.
fn judge_card(
    dev: Device,
    allow_large: bool,
    allow_virtual: bool,
) -> Result<(Device, Vec<PathBuf>)> {
    let mut verdict = dev.verdict(&Limits::new(allow_large));
    if allow_virtual {
        verdict
            .refusals
            .retain(|r| !matches!(r, Refusal::Virtual { .. }));
    }
    if !verdict.refusals.is_empty() {
        return Err(crate::target_disk::Refused {
            device: dev.describe(),
            refusals: verdict.refusals,
            command: Use::Probe,
        })
        .context("benchboot probe refuses the same disks as benchboot flash");
    }
    Ok((dev, verdict.unmount))
}

/// A nonce for this run: time and process id.
pub fn nonce() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    t ^ (u64::from(std::process::id()) << 40)
}

/// The options of a whole-card probe.
pub fn options(t: &ProbeTuning) -> ProbeOptions {
    ProbeOptions {
        start_bytes: 0,
        end_bytes: None,
        nonce: nonce(),
        resolution_bytes: t.resolution_mib.map(|m| m << 20),
        cache_flush_bytes: t.cache_flush_mib << 20,
    }
}

/// Probes the open card with a progress bar on stderr.
///
/// # Errors
/// The probe could not start (region, block size).
pub fn probe_with_progress(disk: &mut dyn BlockDevice, opts: &ProbeOptions) -> Result<ProbeReport> {
    use indicatif::{ProgressBar, ProgressStyle};
    let bar = ProgressBar::new(1);
    bar.set_style(
        ProgressStyle::with_template("{msg:18} [{bar:32}] {pos}/{len} blocks: {prefix}")
            .expect("progress template")
            .progress_chars("=> "),
    );
    let mut last = None;
    let report = benchboot_probe::probe(disk, opts, &mut |p| {
        if last != Some((p.pass, p.phase)) {
            last = Some((p.pass, p.phase));
            bar.set_message(format!("pass {} {:?}", p.pass, p.phase).to_lowercase());
            bar.set_length(p.total.max(1));
        }
        bar.set_position(p.done);
        bar.set_prefix(format!(
            "{} written, {} read",
            p.blocks_written, p.blocks_read
        ));
    });
    bar.finish_and_clear();
    Ok(report?)
}

/// The report as `benchboot probe` prints it.
pub fn render(r: &ProbeReport) -> String {
    use benchboot_probe::{human, human_offset};
    let mut s = format!("{}\n", r.summary());
    s += &format!("claimed       {}\n", human_offset(r.claimed_bytes));
    if r.region != (0, r.claimed_bytes) {
        s += &format!(
            "region        {}..{}\n",
            human_offset(r.region.0),
            human_offset(r.region.1)
        );
    }
    let opt = |o: Option<u64>| o.map_or("-".to_string(), human_offset);
    s += &format!("highest good  {}\n", opt(r.highest_good));
    s += &format!("first bad     {}\n", opt(r.first_bad));
    if let Some(m) = r.wraps_at {
        s += &format!("wraps every   {}\n", human_offset(m));
    }
    if r.real_bytes.is_some() {
        s += &format!(
            "real size     {} (to {}, aimed at {})\n",
            opt(r.real_bytes),
            human(r.uncertainty_bytes),
            human(r.resolution_bytes)
        );
    }
    if !r.bad.is_empty() {
        s += &format!(
            "bad blocks    {} (first {} listed)\n",
            r.bad_count,
            r.bad.len().min(8)
        );
        for b in r.bad.iter().take(8) {
            s += &format!("  {:>24}  {}\n", human_offset(b.offset), b.found.describe());
        }
        if r.good_above_first_bad > 0 && r.wraps_at.is_none() {
            s += &format!(
                "  {} samples above the first bad one held their data (a fake that keeps its \
                 last MiB, or scattered bad blocks)\n",
                r.good_above_first_bad
            );
        }
    }
    s += &format!(
        "I/O           {} blocks written ({}), {} read, {} passes, {:.1} s\n",
        r.blocks_written,
        human(r.bytes_written),
        r.blocks_read,
        r.passes,
        r.nanos as f64 / 1e9
    );
    if let Some(a) = &r.aborted {
        s += &format!("stopped early {a}\n");
    }
    s
}

/// The card at `path` opened for the probe, every write to it counted from now
/// ([`Counted`]: the quick probe's and the whole-card pass's go through the same one).
///
/// # Errors
/// Open failure, with what to do.
pub fn open_card(path: &Path, sector: u64) -> Result<Counted<ProbeDisk, MonotonicClock>> {
    let disk = ProbeDisk::open(path, sector).map_err(|e| {
        #[cfg(windows)]
        let hint = crate::target_disk::windows_open_hint(&e, "probe");
        #[cfg(unix)]
        let hint = match e.raw_os_error().map(rustix::io::Errno::from_raw_os_error) {
            Some(rustix::io::Errno::BUSY) => "it is mounted or open: unmount it first",
            Some(rustix::io::Errno::ACCESS | rustix::io::Errno::PERM) => "run as root (sudo)",
            _ => "check the card and the reader",
        };
        anyhow::anyhow!("opening {}: {e}: {hint}", path.display())
    })?;
    Ok(Counted::new(disk, MonotonicClock::new()))
}

/// Probes an already checked, unmounted card at `path`: opens, probes, closes.
///
/// # Errors
/// Open failure (with what to do) or a probe that cannot start.
pub fn probe_card(path: &Path, sector: u64, tuning: &ProbeTuning) -> Result<ProbeReport> {
    probe_with_progress(&mut open_card(path, sector)?, &options(tuning))
}

/// `Err` for a verdict that is not genuine: the exit code of `benchboot probe`.
pub fn verdict_result(r: &ProbeReport, device: &Path) -> Result<()> {
    match r.verdict {
        Verdict::Genuine => match r.full.as_ref().map(|f| (f, f.verdict())) {
            Some((f, None)) => bail!(
                "{} passed the quick probe; the whole-card pass stopped before the end: {}",
                device.display(),
                f.summary()
            ),
            Some((f, Some(v))) if v != Verdict::Genuine => bail!(
                "{} passed the quick probe but not the whole-card pass: {}",
                device.display(),
                f.summary()
            ),
            _ => Ok(()),
        },
        Verdict::Fake { real_bytes } => {
            let (what, about) = match r.wraps_at {
                Some(_) => ("a wrap-around fake", ""),
                None => ("a fake", "about "),
            };
            bail!(
                "{} is {what}: it claims {} but holds {about}{}; return it, or use only its \
                 first {}",
                device.display(),
                benchboot_probe::human(r.claimed_bytes),
                benchboot_probe::human(real_bytes),
                benchboot_probe::human(real_bytes)
            )
        }
        Verdict::IoErrors { first_at } => bail!(
            "{} fails reads or writes from {}: do not trust it with data",
            device.display(),
            benchboot_probe::human_offset(first_at)
        ),
    }
}

/// `benchboot probe`.
///
/// # Errors
/// A refused or unopenable device, not confirmed, the JSON file not written, or the
/// card is fake or fails (after the report is printed).
pub fn run(args: &ProbeArgs) -> Result<()> {
    let (dev, unmount) = check_card(
        &args.device,
        args.allow_large,
        args.allow_virtual,
        Path::new("/"),
    )?;
    if cfg!(unix) && !unmount.is_empty() {
        bail!(
            "{} has mounted filesystems ({}): unmount them first",
            dev.describe(),
            unmount
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    crate::target_disk::confirm_erase(
        &dev.describe(),
        "probe it for fake capacity (writes stamped blocks all over it)",
        args.yes,
    )?;
    // Windows: its volumes locked and dismounted for as long as the probe runs; the
    // disk itself opened (`--device E:` names it by a volume).
    #[cfg(windows)]
    let (_held, device) = (crate::target_disk::lock_volumes(&dev)?, &dev.path);
    #[cfg(unix)]
    let device = &args.device;
    let started = std::time::Instant::now();
    // One handle for both passes: the counter sees the quick probe's writes too.
    let mut disk = open_card(device, dev.logical_block_size)?;
    let mut report = probe_with_progress(&mut disk, &options(&args.tuning))?;
    if args.full {
        crate::out!("{}", render(&report));
        let idle_ns = args.idle_check.unwrap_or(0).saturating_mul(1_000_000_000);
        report.full = Some(full_card(&mut disk, &args.tuning, idle_ns)?);
        if let Some(f) = &report.full {
            crate::out!("{}", crate::whole_card::lines(f));
            if let Some(dir) = &args.plots {
                for p in crate::plot::write_figures(dir, &[crate::whole_card::profile_figure(f)])? {
                    crate::outln!("plot          {}", p.display());
                }
            }
        }
    } else {
        crate::out!("{}", render(&report));
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)? + "\n";
        crate::atomic_file::write(path, &text)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    // A store that fails is said, and the card's verdict still decides the exit.
    let stored = if args.full && !args.no_store {
        store_run(&args.device, &report, args, started)
    } else {
        Ok(())
    };
    let verdict = verdict_result(&report, &args.device);
    match (verdict, stored) {
        (Err(v), Err(s)) => {
            crate::errln!("error: {s:#}");
            Err(v)
        }
        (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
        (Ok(()), Ok(())) => Ok(()),
    }
}

/// Keeps a `probe --full` run in the store ([`document`]) and says where.
fn store_run(
    device: &Path,
    report: &ProbeReport,
    args: &ProbeArgs,
    started: std::time::Instant,
) -> Result<()> {
    let doc = document(device, report, &args.tuning, started);
    let dir = crate::store::default_dir(args.store.as_deref())?;
    let mut store = crate::store::Store::open(&dir)?;
    let row = store
        .put(
            &doc,
            &doc.to_json(),
            "benchboot probe --full",
            crate::collect::unix_now(),
        )
        .context("keeping the run in the store (the card's verdict is above)")?
        .row;
    crate::outln!(
        "stored        run {} in {} (benchboot report {} / compare)",
        row.stored_as,
        dir.display(),
        row.stored_as
    );
    Ok(())
}

/// The results document of a `probe --full` run on this machine: a host run
/// ([`crate::context::HOST_BOARD`], no storage sweep) whose card check is `report` on
/// `device`, with the plan's `[card-check]` as the options ran, so `report`, `compare`
/// and `runs` read it as any other run. Its id: `host-probe-<unix seconds>-<pid>`.
pub fn document(
    device: &Path,
    report: &ProbeReport,
    tuning: &ProbeTuning,
    started: std::time::Instant,
) -> benchboot_results::RunResults {
    let mut plan = crate::host_run::host_plan(crate::host_run::no_storage(), None);
    plan.card_check = Some(benchboot_plan::CardCheckPlan {
        resolution_bytes: report.resolution_bytes,
        cache_flush_bytes: tuning.cache_flush_mib << 20,
        min_region_bytes: 0,
        time_limit_ms: 0,
        full: true,
    });
    let mut r = benchboot_results::RunResults::new(
        format!(
            "{}-probe-{}-{}",
            crate::context::HOST_BOARD,
            crate::collect::unix_now(),
            std::process::id()
        ),
        plan,
        crate::host_run::system_info(),
    );
    r.card_check = Some(benchboot_results::CardCheck {
        device: device.display().to_string(),
        report: report.clone(),
    });
    // A pass stopped before its end (Ctrl-C) is a partial run.
    r.complete = report.full.as_ref().is_none_or(|f| f.stopped.is_none());
    r.system.written_ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    r
}

/// Set by Ctrl-C while a whole-card pass runs.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The whole-card pass over the open card `disk` (the quick probe's handle, so its
/// writes are counted before the pass's) with a progress bar (bytes, speed, time left)
/// on stderr, then the idle check when `idle_check_ns` is not 0; Ctrl-C ends it cleanly
/// (the report says what was covered).
///
/// # Errors
/// A pass that cannot start.
pub fn full_card(
    disk: &mut dyn BlockDevice,
    tuning: &ProbeTuning,
    idle_check_ns: u64,
) -> Result<FullReport> {
    use indicatif::{ProgressBar, ProgressStyle};
    use std::sync::atomic::Ordering;
    INTERRUPTED.store(false, Ordering::SeqCst);
    // Once per process; a second call keeps the first handler, which sets the same flag.
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
    let bar = ProgressBar::new(1);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:5} [{bar:32}] {bytes}/{total_bytes} {binary_bytes_per_sec}, {eta} left",
        )
        .expect("progress template")
        .progress_chars("=> "),
    );
    let mut phase = None;
    let opts = FullOptions {
        nonce: nonce(),
        cache_flush_bytes: tuning.cache_flush_mib << 20,
        idle_check_ns,
        ..FullOptions::default()
    };
    let report = full_pass(
        disk,
        &mut MonotonicClock::new(),
        &opts,
        &mut |p| {
            if phase != Some(p.phase) {
                phase = Some(p.phase);
                bar.reset();
                bar.set_message(format!("{:?}", p.phase).to_lowercase());
                bar.set_length(p.total.max(1));
            }
            bar.set_position(p.done);
        },
        &mut || INTERRUPTED.load(Ordering::SeqCst),
    );
    bar.finish_and_clear();
    Ok(report?)
}

/// The `flash --probe` step: probe the card at `path` (checked and unmounted by
/// flash), print the report, refuse a fake or failing card unless `force_fake` and the
/// image fits in what it holds.
///
/// # Errors
/// The probe could not run, or the card is fake / failing (and not forced).
pub fn before_flash(
    path: &Path,
    sector: u64,
    image_bytes: u64,
    flags: &FlashProbeFlags,
) -> Result<()> {
    crate::errln!(
        "probing {} for fake capacity first (--probe)",
        path.display()
    );
    let tuning = ProbeTuning {
        cache_flush_mib: 32,
        resolution_mib: None,
    };
    let report = probe_card(path, sector, &tuning)?;
    crate::out!("{}", render(&report));
    match verdict_result(&report, path) {
        Ok(()) => Ok(()),
        Err(e) if flags.force_fake => {
            let holds = report.real_bytes.or(report.first_bad).unwrap_or(0);
            if image_bytes > holds {
                bail!(
                    "{e:#}; --force-fake, but the image ({}) does not fit in what it holds",
                    benchboot_probe::human(image_bytes)
                );
            }
            crate::errln!("--force-fake: flashing anyway ({e:#})");
            Ok(())
        }
        Err(e) => Err(e.context("not flashing it (pass --force-fake to flash a fake card anyway)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchboot_probe::fake::{FakeDevice, Model};
    use benchboot_sector::Strict;
    use std::io;

    #[test]
    fn a_regular_file_is_not_a_card() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let e = check_card(f.path(), false, false, Path::new("/")).unwrap_err();
        assert!(format!("{e:#}").contains("not a card"), "{e:#}");
    }

    /// A whole-card probe with a 1 MiB cache flush: quick on a small file.
    fn quick() -> ProbeOptions {
        ProbeOptions {
            cache_flush_bytes: 1 << 20,
            ..options(&ProbeTuning {
                cache_flush_mib: 1,
                resolution_mib: None,
            })
        }
    }

    /// Linux and macOS's `ProbeDisk` on a file (Windows' asks the disk's length of an
    /// ioctl a file does not answer: its layer is tested just below).
    #[cfg(unix)]
    #[test]
    fn the_probe_disk_reads_back_what_it_wrote() {
        use benchboot_probe::BlockDevice;
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().set_len(64 << 20).unwrap();
        // A regular file stands in for the block device (O_DIRECT or its fallback).
        let mut d = ProbeDisk::open(f.path(), 512).unwrap();
        assert_eq!(d.size_bytes(), 64 << 20);
        let r = benchboot_probe::probe(&mut d, &quick(), &mut |_| {}).unwrap();
        assert_eq!(r.verdict, Verdict::Genuine, "{}", r.summary());
        assert!(verdict_result(&r, f.path()).is_ok());
    }

    /// The probe and the whole-card pass on a disk that takes whole sectors only, as
    /// Windows' raw disks do (Windows' `ProbeDisk` is a `SectorDisk` over its handle):
    /// through the test double that fails anything else, the card is genuine. This runs
    /// on Linux and, as a Windows build, under wine.
    #[test]
    fn the_probe_runs_on_a_disk_that_takes_whole_sectors_only() {
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().set_len(48 << 20).unwrap();
        for sector in [512, 4096] {
            let path = f.path().to_owned();
            let open = move || -> io::Result<Strict<std::fs::File>> {
                let file = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&path)?;
                Ok(Strict::new(file, sector as usize))
            };
            let mut d = SectorDisk::new(open().unwrap(), sector, 48 << 20, Box::new(open));
            let r = benchboot_probe::probe(&mut d, &quick(), &mut |_| {}).unwrap();
            assert_eq!(r.verdict, Verdict::Genuine, "{sector}: {}", r.summary());
            let full = full_pass(
                &mut d,
                &mut MonotonicClock::new(),
                &FullOptions {
                    cache_flush_bytes: 1 << 20,
                    ..FullOptions::default()
                },
                &mut |_| {},
                &mut || false,
            )
            .unwrap();
            assert_eq!(
                full.verdict(),
                Some(Verdict::Genuine),
                "{sector}: {}",
                full.summary()
            );
            assert_eq!(full.read_bytes, 48 << 20, "{sector}");
        }
    }

    #[test]
    fn a_fake_is_rendered_and_exits_non_zero() {
        let mut d = FakeDevice::new(4 << 30, 512, Model::Wrap { real: 1 << 30 });
        let r = benchboot_probe::probe(
            &mut d,
            &ProbeOptions {
                cache_flush_bytes: 4 << 20,
                ..ProbeOptions::default()
            },
            &mut |_| {},
        )
        .unwrap();
        let text = render(&r);
        assert!(text.starts_with("FAKE: claims 4.0 GiB"), "{text}");
        assert!(text.contains("wraps every"), "{text}");
        assert!(text.contains("(wrap-around)"), "{text}");
        let e = verdict_result(&r, Path::new("/dev/sdz")).unwrap_err();
        assert_eq!(
            format!("{e}"),
            "/dev/sdz is a wrap-around fake: it claims 4.0 GiB but holds 1.0 GiB; return it, \
             or use only its first 1.0 GiB"
        );
        // A fake that drops writes: its size is an estimate.
        let mut d = FakeDevice::new(
            4 << 30,
            512,
            Model::Drop {
                real: 1 << 30,
                fill: 0,
            },
        );
        let r = benchboot_probe::probe(&mut d, &ProbeOptions::default(), &mut |_| {}).unwrap();
        let e = verdict_result(&r, Path::new("/dev/sdz")).unwrap_err();
        assert!(
            format!("{e}")
                .starts_with("/dev/sdz is a fake: it claims 4.0 GiB but holds about 1.0 GiB"),
            "{e}"
        );
    }

    #[test]
    fn the_whole_card_pass_is_rendered_and_judged() {
        use benchboot_probe::fake::{FakeClock, TimedDevice, Timing};
        const MIB: u64 = 1 << 20;
        let clock = FakeClock::default();
        let mut dev = TimedDevice {
            inner: FakeDevice::new(
                128 * MIB,
                512,
                Model::Drop {
                    real: 100 * MIB,
                    fill: 0xff,
                },
            ),
            timing: Timing {
                knee: 32 * MIB,
                fast: 60 * MIB,
                slow: 6 * MIB,
                stall_every: 50 * MIB,
                stall_ns: 471_000_000,
                read: 80 * MIB,
                write_op_ns: 0,
            },
            clock: clock.clone(),
        };
        let f = full_pass(
            &mut dev,
            &mut clock.clone(),
            &FullOptions::default(),
            &mut |_| {},
            &mut || false,
        )
        .unwrap();
        let text = crate::whole_card::lines(&f);
        assert!(
            text.starts_with("full pass: FAKE: 28.0 MiB bad from 100.0 MiB (104857600)"),
            "{text}"
        );
        assert!(
            // At the edge of the interval that holds 32 MiB.
            text.contains("falls at      32.0 MiB (33536000): 60.0 -> 6.0 MiB/s"),
            "{text}"
        );
        assert!(text.contains("stalls        2 ("), "{text}");
        assert!(text.contains("(+471.0 ms)"), "{text}");
        assert!(
            text.contains("  100.0 MiB (104857600)..128.0 MiB (134217728)  all 0xff"),
            "{text}"
        );
        let fig = crate::whole_card::profile_figure(&f);
        assert_eq!(fig.panels[0].series.len(), 2);
        assert_eq!(fig.panels[0].series[0].points.len(), f.write_profile.len());

        // The quick probe passed (a card whose fake part it missed), the full pass did not.
        let mut d = FakeDevice::new(128 * MIB, 512, Model::Genuine);
        let mut r = benchboot_probe::probe(&mut d, &ProbeOptions::default(), &mut |_| {}).unwrap();
        assert!(verdict_result(&r, Path::new("/dev/sdz")).is_ok());
        r.full = Some(f);
        let e = verdict_result(&r, Path::new("/dev/sdz")).unwrap_err();
        assert!(
            format!("{e}").starts_with(
                "/dev/sdz passed the quick probe but not the whole-card pass: full pass: FAKE"
            ),
            "{e}"
        );
        // Stopped (Ctrl-C) with nothing bad in what it covered: not a pass either.
        let f = r.full.as_mut().unwrap();
        f.bad.clear();
        f.first_bad = None;
        f.stopped = Some("interrupted after reading back 1.0 MiB of 128.0 MiB".into());
        let e = verdict_result(&r, Path::new("/dev/sdz")).unwrap_err();
        assert!(
            format!("{e}").contains("the whole-card pass stopped before the end"),
            "{e}"
        );
    }
}
