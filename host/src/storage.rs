//! `benchboot storage --path DIR`: the board's storage engine run on this machine, so its
//! figures can be set beside `dd` and `fio` on the same file and device.
//!
//! Same code as PID 1 ([`benchboot_storage::sweep`]), run in process; the page cache is
//! emptied of the test file with `posix_fadvise(DONTNEED)` (no root needed) instead of
//! the board's `drop_caches`.
//!
//! Its document says it is a host run: the plan's board is [`crate::context::HOST_BOARD`], and the
//! system info's clock starts with the command (`init_started_ns` 0, `written_ns` the
//! nanoseconds until the results were complete), since no PID 1 started.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use benchboot_plan::{Filesystem, Mode, Plan, RandomPlan, StoragePlan, StorageTarget};
use benchboot_results::{RandomOp, RunResults};
use benchboot_storage::engine::Caps;
use benchboot_storage::os::refuse_ram_filesystem;
use benchboot_storage::sweep::{self, FileCache, Place};

/// What to run on the host.
#[derive(Debug, Clone)]
pub struct HostRun {
    pub dir: PathBuf,
    pub block_sizes: Vec<u64>,
    pub modes: Vec<Mode>,
    pub byte_cap: u64,
    pub time_cap_ms: u64,
    pub repetitions: u32,
    /// Random 4 KiB I/O: region bytes, duration, queue depths; `None` skips it.
    pub random: Option<(u64, u64, Vec<u32>)>,
    pub verify: bool,
}

/// `benchboot storage` arguments (clap); [`StorageArgs::host_run`] makes the run.
#[derive(Debug, Clone, clap::Args)]
pub struct StorageArgs {
    /// A folder on the filesystem to measure (tmpfs/ramfs are refused).
    #[arg(long)]
    pub path: PathBuf,
    /// Block sizes in bytes, comma-separated; default: the seeds' 8 B ... 1 MiB.
    #[arg(long, value_delimiter = ',')]
    pub block_sizes: Vec<u64>,
    /// I/O modes: sync (buffered + fsync) and/or direct (O_DIRECT).
    #[arg(long, value_delimiter = ',', default_value = "sync,direct")]
    pub modes: Vec<ModeArg>,
    /// Per cell and direction, stop after this many MiB...
    #[arg(long, default_value_t = 64)]
    pub byte_cap_mib: u64,
    /// ...or this many seconds, whichever comes first.
    #[arg(long, default_value_t = 10.0)]
    pub time_cap_s: f64,
    /// How many times each cell runs.
    #[arg(long, default_value_t = 3)]
    pub repetitions: u32,
    /// Seconds of random 4 KiB I/O per queue depth and operation (0 skips it).
    #[arg(long, default_value_t = 5.0)]
    pub random_s: f64,
    /// Queue depths of random I/O.
    #[arg(long, value_delimiter = ',', default_value = "1,4")]
    pub queue_depths: Vec<u32>,
    /// Write a position-stamped pattern and read it back.
    #[arg(long)]
    pub verify: bool,
    /// Save the results JSON here.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `--modes`' values, as clap lists them in `--help` and in its error for any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    /// Buffered I/O, then fsync(2)
    Sync,
    /// O_DIRECT: the page cache bypassed
    Direct,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Sync => Mode::Sync,
            ModeArg::Direct => Mode::Direct,
        }
    }
}

impl StorageArgs {
    /// The run these arguments ask for: the seeds' block sizes when none are given,
    /// caps in bytes and ms.
    pub fn host_run(&self) -> HostRun {
        HostRun {
            dir: self.path.clone(),
            block_sizes: if self.block_sizes.is_empty() {
                benchboot_plan::seed_block_sizes()
            } else {
                self.block_sizes.clone()
            },
            modes: self.modes.iter().map(|&m| m.into()).collect(),
            byte_cap: self.byte_cap_mib << 20,
            time_cap_ms: (self.time_cap_s * 1000.0) as u64,
            repetitions: self.repetitions,
            random: (self.random_s > 0.0).then_some((
                self.byte_cap_mib << 20,
                (self.random_s * 1000.0) as u64,
                self.queue_depths.clone(),
            )),
            verify: self.verify,
        }
    }
}

/// `benchboot storage`: runs the engine, saves the document (`--out`) and prints the
/// report.
///
/// # Errors
/// What [`run`] refuses or fails on; the document cannot be saved.
pub fn run_command(args: &StorageArgs) -> Result<()> {
    let results = run(&args.host_run(), &mut |step| {
        crate::errln!("storage: {step}")
    })?;
    if let Some(out) = &args.out {
        let saved = crate::fetch::save(out, &results.to_json())?;
        crate::outln!("saved {}", saved.display());
    }
    crate::out!("{}", crate::render::report_fitted(&results));
    Ok(())
}

/// The O_DIRECT alignment of the disk under `dir` (sysfs `/sys/dev/block/MAJ:MIN`),
/// or 4096 (valid for every logical block size up to 4 KiB) when it cannot be found.
pub fn logical_block_size(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(dir) else {
        return 4096;
    };
    let dev = meta.dev();
    #[allow(clippy::useless_conversion)] // dev_t is u64 on Linux, i32 on macOS
    let dev = u64::try_from(dev).unwrap_or_default();
    let name = format!(
        "{}:{}",
        rustix::fs::major(dev as _),
        rustix::fs::minor(dev as _)
    );
    sweep::block_sizes_of(Path::new("/sys/dev/block"), &name).map_or(4096, |(l, _)| l)
}

/// The plan a host run records in its results document.
pub fn plan(run: &HostRun) -> Plan {
    let label = Filesystem::Dir.name().to_owned();
    crate::host_run::host_plan(
        StoragePlan {
            targets: vec![StorageTarget {
                label: label.clone(),
                device: run.dir.display().to_string(),
                filesystem: Filesystem::Dir,
                optional: false,
            }],
            block_sizes: run.block_sizes.clone(),
            modes: run.modes.clone(),
            byte_cap: run.byte_cap,
            time_cap_ms: run.time_cap_ms,
            repetitions: run.repetitions,
            device_wait_ms: 0,
            device_reads: None,
            random: run.random.as_ref().map(|(region, ms, qds)| RandomPlan {
                targets: vec![label],
                block_size: 4096,
                region_bytes: *region,
                duration_ms: *ms,
                queue_depths: qds.clone(),
            }),
            verify: run.verify,
            governor: None,
            long_cell: None,
        },
        None,
    )
}

/// Runs the sweep (and random I/O, verification) in `run.dir`.
///
/// # Errors
/// A folder on one of the kernel's own filesystems ([`crate::identity`]) or on a RAM
/// filesystem, an invalid plan, or the first I/O error (with the step).
pub fn run(run: &HostRun, progress: &mut dyn FnMut(&str)) -> Result<RunResults> {
    if !run.dir.is_dir() {
        bail!("--path {}: not a directory", run.dir.display());
    }
    crate::identity::lookup(&run.dir, Path::new("/"))?
        .refuse_kernel_files("--path ", "pick a directory on the disk to test")?;
    refuse_ram_filesystem(&run.dir).map_err(anyhow::Error::msg)?;
    let started = std::time::Instant::now();
    let plan = plan(run);
    plan.validate()?;
    let system = benchboot_storage::system::system_info(0);
    let mut results = RunResults::new(format!("host-{}", std::process::id()), plan.clone(), system);
    progress(&format!("method: {}", benchboot_storage::os::METHOD));
    if cfg!(target_os = "macos") {
        // The tables say "direct" and "sync": on a Mac they mean something else.
        results.event(
            "storage.method",
            benchboot_results::Severity::Warning,
            format!(
                "macOS host: {}; the direct and sync rows are not O_DIRECT and fdatasync(2) \
                 as on a board or a Linux host",
                benchboot_storage::os::METHOD
            ),
        );
    }
    let place = Place {
        target: plan.storage.targets[0].clone(),
        path: run.dir.clone(),
        logical_block_size: logical_block_size(&run.dir),
        capacity: None,
    };
    let caps = Caps {
        bytes: run.byte_cap,
        time_ns: run.time_cap_ms * 1_000_000,
    };
    for &mode in &run.modes {
        for &bs in &run.block_sizes {
            for rep in 0..run.repetitions {
                progress(&format!("{} {bs} B r{rep}", mode.name()));
                let pair = sweep::measure_pair(&place, caps, bs, mode, rep, &FileCache)
                    .with_context(|| format!("{} {bs} B in {}", mode.name(), run.dir.display()))?;
                results.storage.extend(pair);
            }
        }
    }
    place.clean_up(sweep::BENCH_FILE);
    if let Some(rp) = &plan.storage.random {
        let region = sweep::prepare_region(&place, rp.region_bytes)?;
        for &qd in &rp.queue_depths {
            for op in [RandomOp::Read, RandomOp::Write] {
                progress(&format!("random {op:?} QD{qd}"));
                results.random.push(sweep::random_io(
                    &place,
                    op,
                    rp.block_size,
                    region,
                    qd,
                    Duration::from_millis(rp.duration_ms),
                )?);
            }
        }
        place.clean_up(sweep::RANDOM_FILE);
    }
    if run.verify {
        progress("verify");
        results
            .verify
            .push(sweep::verify(&place, run.byte_cap, 0xbb, &FileCache)?);
    }
    results.complete = true;
    results.system.written_ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: StorageArgs,
    }

    fn parse(extra: &[&str]) -> Result<StorageArgs, clap::Error> {
        use clap::Parser as _;
        let argv = ["storage", "--path", "/mnt/usb"].iter().chain(extra);
        Cli::try_parse_from(argv).map(|c| c.args)
    }

    #[test]
    fn modes_are_parsed_by_clap_and_a_wrong_one_names_the_right_ones() {
        let both = parse(&[]).unwrap().host_run();
        assert_eq!(both.modes, [Mode::Sync, Mode::Direct]);
        let direct = parse(&["--modes", "direct"]).unwrap().host_run();
        assert_eq!(direct.modes, [Mode::Direct]);
        let e = parse(&["--modes", "sync,fsync"]).err().unwrap().to_string();
        assert!(e.contains("invalid value 'fsync' for '--modes"), "{e}");
        assert!(e.contains("[possible values: sync, direct]"), "{e}");
        let run = parse(&["--byte-cap-mib", "2", "--random-s", "0"])
            .unwrap()
            .host_run();
        assert_eq!((run.byte_cap, run.random), (2 << 20, None));
        assert_eq!(run.block_sizes, benchboot_plan::seed_block_sizes());
    }
    use crate::context::HOST_BOARD;

    fn small(dir: &Path) -> HostRun {
        HostRun {
            dir: dir.to_owned(),
            block_sizes: vec![512, 65536],
            modes: vec![Mode::Sync, Mode::Direct],
            byte_cap: 1 << 20,
            time_cap_ms: 2000,
            repetitions: 2,
            random: Some((2 << 20, 100, vec![1, 2])),
            verify: true,
        }
    }

    #[test]
    fn host_run_fills_every_cell() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let r = run(&small(dir.path()), &mut |_| {}).unwrap();
        // 2 modes x 2 sizes x 2 repetitions x (write + read)
        assert_eq!(r.storage.len(), 16);
        assert!(r.storage.iter().all(|m| m.bytes == 1 << 20 && m.nanos > 0));
        // The run's length: from the command's start, longer than the timed regions.
        assert_eq!(
            (r.board.as_str(), r.system.init_started_ns),
            (HOST_BOARD, 0)
        );
        let timed: u64 = r.storage.iter().map(|m| m.nanos).sum();
        assert!(
            r.system.written_ns > timed,
            "{} <= {timed}",
            r.system.written_ns
        );
        assert_eq!(r.random.len(), 4);
        assert_eq!(r.verify[0].first_mismatch, None);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "nothing left behind"
        );
        let text = crate::render::report(&r);
        assert!(
            text.contains("mode direct") && text.contains("QD2 IOPS"),
            "{text}"
        );
    }

    #[test]
    fn tmpfs_is_refused() {
        let err = run(&small(Path::new("/dev/shm")), &mut |_| {})
            .unwrap_err()
            .to_string();
        assert!(err.contains("RAM filesystem"), "{err}");
    }

    #[test]
    fn missing_dir_is_named() {
        let err = run(&small(Path::new("/nonexistent/bench")), &mut |_| {})
            .unwrap_err()
            .to_string();
        assert!(err.contains("--path /nonexistent/bench"), "{err}");
    }
}
