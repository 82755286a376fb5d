//! `benchboot memory`: the board's memory engine (`benchboot_memory::run`) on this
//! machine, with the hardware plan's step by default, so a board's bandwidth and latency
//! can be set beside the machine it is compared with (and beside tinymembench run here).
//!
//! Its document is a host run like `benchboot storage`'s ([`crate::host_run::host_plan`]:
//! board [`HOST_BOARD`], clock from the command's start), with `memory` and
//! `clock_checks` filled and no storage target, so `report`, `compare` and `collect`
//! read it as any other. Problems and clock mismatches are warning events, as PID 1
//! records them.

use benchboot_plan::limits::{MAX_COUNT, MAX_LATENCY_READS};
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use benchboot_plan::MemoryPlan;
use benchboot_results::{RunResults, Severity};

use crate::context::HOST_BOARD;

/// The step id of the memory step's events (PID 1's too).
pub const STEP: &str = "memory";

/// `benchboot memory` arguments; the defaults are the hardware plan's
/// ([`MemoryPlan::HARDWARE`]).
#[derive(Debug, Clone, clap::Args)]
pub struct MemoryArgs {
    /// Least time of one bandwidth sample, ms: each kernel repeats, doubling its count,
    /// until a sample lasts this long (tinymembench: 500).
    #[arg(long, default_value_t = MemoryPlan::HARDWARE.sample_ms)]
    pub sample_ms: u64,
    /// Samples per kernel and core set (1..=10000, a plan's own bound); the best is
    /// reported.
    #[arg(long, default_value_t = MemoryPlan::HARDWARE.samples,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_COUNT)))]
    pub samples: u32,
    /// Largest latency block, MiB (a power of two; tables run 1 KiB ... this).
    #[arg(long, default_value_t = MemoryPlan::HARDWARE.latency_max_bytes >> 20)]
    pub latency_max_mib: u64,
    /// Dependent reads per latency repeat, 1..=1000000000 (a plan's own bound; rounded
    /// down to a multiple of 16, at least 16).
    #[arg(long, default_value_t = MemoryPlan::HARDWARE.latency_reads,
          value_parser = clap::value_parser!(u64).range(1..=MAX_LATENCY_READS))]
    pub latency_reads: u64,
    /// Skip the latency table with transparent huge pages.
    #[arg(long)]
    pub no_huge_pages: bool,
    /// Measure libc memcpy/memset on the first CPU only: not on each other CPU nor on
    /// all at once.
    #[arg(long)]
    pub no_per_core: bool,
    /// Each bandwidth buffer, MiB, instead of max(32 MiB, 4 x LLC): e.g. 32 to run at
    /// tinymembench's size on a machine with a large L3 (then cache hits count).
    #[arg(long)]
    pub buffer_mib: Option<u64>,
    /// Save the results document (JSON, as `benchboot fetch` saves a board's) here.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

impl MemoryArgs {
    /// The memory plan these arguments ask for.
    ///
    /// # Errors
    /// A time of 0, a latency size that is not a power of two, naming the option (the
    /// counts' ranges are clap's: `0 is not in 1..=1000000000`).
    pub fn plan(&self) -> Result<MemoryPlan> {
        if self.sample_ms == 0 {
            bail!("--sample-ms: must be at least 1 ms");
        }
        if !self.latency_max_mib.is_power_of_two() || self.latency_max_mib > 1 << 10 {
            bail!(
                "--latency-max-mib {}: must be a power of two from 1 to 1024 (MiB)",
                self.latency_max_mib
            );
        }
        if self.buffer_mib == Some(0) {
            bail!("--buffer-mib: must be at least 1 (MiB)");
        }
        Ok(MemoryPlan {
            sample_ms: self.sample_ms,
            samples: self.samples,
            latency_max_bytes: self.latency_max_mib << 20,
            latency_reads: self.latency_reads,
            huge_pages: !self.no_huge_pages,
            per_core: !self.no_per_core,
            buffer_bytes: self.buffer_mib.map(|m| m << 20),
            ..MemoryPlan::HARDWARE
        })
    }
}

/// The plan a `benchboot memory` document records: the memory step and no storage.
pub fn plan(memory: MemoryPlan) -> benchboot_plan::Plan {
    crate::host_run::host_plan(crate::host_run::no_storage(), Some(memory))
}

/// Runs the memory step of `memory` on this machine (`/proc`, `/sys`) and returns its
/// document: the results, the clock checks, the problems and mismatches as warnings.
pub fn run(memory: MemoryPlan) -> RunResults {
    run_with(memory, Path::new("/proc"), Path::new("/sys"))
}

/// [`run`] over other `/proc` and `/sys` roots.
pub fn run_with(memory: MemoryPlan, proc_root: &Path, sys_root: &Path) -> RunResults {
    let started = std::time::Instant::now();
    let system = benchboot_storage::system::system_info(0);
    let mut r = RunResults::new(
        format!("{HOST_BOARD}-memory-{}", std::process::id()),
        plan(memory),
        system,
    );
    let o = benchboot_memory::run(&memory, proc_root, sys_root);
    for p in &o.results.problems {
        r.event(STEP, Severity::Warning, p.clone());
    }
    for c in &o.clock_checks {
        for m in c.mismatches() {
            r.event(format!("clock.{}", c.at), Severity::Warning, m);
        }
    }
    r.memory = Some(o.results);
    r.clock_checks = o.clock_checks;
    r.complete = true;
    r.system.written_ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    r
}

/// Runs `benchboot memory`: measures, saves the document with `--out`, prints the report.
///
/// # Errors
/// A bad option, or the document could not be saved.
pub fn run_command(args: &MemoryArgs) -> Result<()> {
    let plan = args.plan()?;
    anyhow::ensure!(
        cfg!(target_os = "linux"),
        "`benchboot memory` runs on Linux only: it sizes buffers from /proc/meminfo and \
         /sys's cache sizes and pins threads per CPU (sched_setaffinity), which {} lacks; \
         run it on a Linux host or let the board's plan measure the board",
        std::env::consts::OS
    );
    crate::errln!(
        "memory: bandwidth and latency on this machine (up to {} s)",
        plan.estimate_ms().div_ceil(1000)
    );
    let results = run(plan);
    if let Some(out) = &args.out {
        let saved = crate::fetch::save(out, &results.to_json())?;
        crate::outln!("saved {}", saved.display());
    }
    crate::out!("{}", crate::render::report_fitted(&results));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> MemoryArgs {
        MemoryArgs {
            sample_ms: 5,
            samples: 1,
            latency_max_mib: 1,
            latency_reads: 1000,
            no_huge_pages: true,
            no_per_core: true,
            buffer_mib: None,
            out: None,
        }
    }

    #[test]
    fn options_become_the_plan_and_bad_ones_name_themselves() {
        let p = args().plan().unwrap();
        assert_eq!(
            (p.sample_ms, p.samples, p.latency_max_bytes, p.latency_reads),
            (5, 1, 1 << 20, 1000)
        );
        assert!(!p.huge_pages && !p.per_core);
        assert_eq!(p.latency_repeats, MemoryPlan::HARDWARE.latency_repeats);
        let e = MemoryArgs {
            latency_max_mib: 3,
            ..args()
        }
        .plan()
        .unwrap_err()
        .to_string();
        assert!(e.contains("--latency-max-mib 3"), "{e}");
        // Counts out of range are clap's to refuse, with the range
        // (`memory_cli.rs` a_count_out_of_range_gives_its_range).
        let p = MemoryArgs {
            buffer_mib: Some(32),
            ..args()
        }
        .plan()
        .unwrap();
        assert_eq!(p.buffer_bytes, Some(32 << 20));
        assert_eq!(args().plan().unwrap().buffer_bytes, None);
    }

    /// A short run here: a host document with memory, the clock twice, no storage
    /// section, and a report that prints the memcpy line.
    #[test]
    fn a_host_run_is_a_document_report_reads() {
        let r = run(args().plan().unwrap());
        assert_eq!(r.board, HOST_BOARD);
        assert!(r.complete && !r.emulated);
        let m = r.memory.as_ref().unwrap();
        assert!(m.bandwidth.iter().any(|t| t.kernel == "libc-memcpy"));
        assert_eq!(r.clock_checks.len(), 2);
        let back = RunResults::from_json(&r.to_json()).unwrap();
        assert_eq!(back, r);
        let text = crate::render::report(&back);
        assert!(text.contains("standard memcpy"), "{text}");
        assert!(!text.contains("\nStorage\n"), "{text}");
    }
}
