//! The memory step's results (schema 1.9): bandwidth samples per kernel and core set,
//! latency tables per page size, the CPU facts they were taken on, and the CPU clock as
//! measured beside what cpufreq and the firmware claim ([`ClockCheck`]).
//!
//! Raw figures only: bytes and ns per sample, ns per latency repeat. MB/s (10^6 B/s, the
//! unit tinymembench and sbc-bench publish) and ns per read are derived here and nowhere
//! else, so the report, CSV and `compare` agree.

use serde::{Deserialize, Serialize};

/// What the memory step measured on one machine (a board's PID 1 or `benchboot memory`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryResults {
    pub cpu: CpuFacts,
    /// Bytes of each bandwidth buffer (source and destination are each this size) and
    /// why that size.
    pub buffer_bytes: u64,
    pub sizing: String,
    /// One per kernel and core set, in the order they ran.
    pub bandwidth: Vec<BandwidthTest>,
    /// One per page kind (4 KiB pages; transparent huge pages where the kernel has them).
    pub latency: Vec<LatencyTable>,
    /// What the plan asked that this machine does not have (huge pages on a kernel
    /// without them); a kernel the CPU lacks is in `cpu.kernels_skipped` instead.
    #[serde(default)]
    pub skipped: Vec<String>,
    /// What went wrong (a CPU that could not be pinned, a kernel whose destination was
    /// wrong after its passes): each is also a warning event of the step.
    #[serde(default)]
    pub problems: Vec<String>,
}

/// The CPU as the memory engine found it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuFacts {
    /// `std::env::consts::ARCH` of the binary: `arm`, `aarch64`, `x86_64`.
    pub arch: String,
    /// `/proc/cpuinfo`: `model name`, else the implementer/part decoded (e.g. `ARM1176`,
    /// `Cortex-A53`), else what the file says.
    pub model: String,
    /// Online CPUs (`/sys/devices/system/cpu/online`).
    pub cores: u32,
    /// Features the kernels choose by: the ELF auxiliary vector's AT_HWCAP decoded
    /// (`vfp`, `neon`, `asimd`, ...; `sse2`, `avx2` on x86_64 from CPUID).
    pub features: Vec<String>,
    /// Last-level cache, bytes, and where that came from (sysfs `cache/index*/size`, or
    /// the assumption used when the kernel does not say).
    pub llc_bytes: u64,
    pub llc_source: String,
    /// `MemTotal` of /proc/meminfo, bytes.
    pub mem_total_bytes: u64,
    /// Kernel ids that ran, in order.
    pub kernels: Vec<String>,
    /// Kernels built into this binary that this CPU cannot run, with the reason (e.g.
    /// `neon-vld1-vst1: no NEON (AT_HWCAP bit 12 clear)`).
    #[serde(default)]
    pub kernels_skipped: Vec<String>,
}

/// What a bandwidth kernel does to its buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemOp {
    /// Source to destination; bytes counted once (tinymembench, sbc-bench).
    Copy,
    /// A constant into the destination.
    Fill,
    /// Every byte of the source read, nothing written.
    Read,
}

/// Where a bandwidth test ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cores {
    /// One thread pinned to this CPU (`sched_setaffinity`).
    One(u32),
    /// One thread per online CPU, each pinned and with its own buffers, started together;
    /// a sample's bytes are all threads' and its ns from the common start to the last end.
    All(u32),
}

/// One kernel over one core set: every sample kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandwidthTest {
    /// Stable id (`libc-memcpy`, `arm-vldm-vstm`, `a64-ldp-stp`, ...).
    pub kernel: String,
    /// tinymembench-style label (`standard memcpy`, `VFP copy (VLDM/VSTM)`).
    pub label: String,
    pub op: MemOp,
    pub cores: Cores,
    /// Each sample: bytes moved (copy: counted once) and ns it took (CLOCK_MONOTONIC).
    pub samples: Vec<BandwidthSample>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BandwidthSample {
    pub bytes: u64,
    pub ns: u64,
}

impl BandwidthSample {
    /// MB/s (10^6 B/s); 0 for a sample of 0 ns.
    pub fn mb_per_s(&self) -> f64 {
        if self.ns == 0 {
            0.0
        } else {
            self.bytes as f64 * 1e3 / self.ns as f64
        }
    }
}

impl BandwidthTest {
    /// The best sample's MB/s (tinymembench reports the maximum) and the samples'
    /// standard deviation as a percentage of it (its "(0.3%)"); `None` without samples.
    pub fn best_and_spread(&self) -> Option<(f64, f64)> {
        let speeds: Vec<f64> = self.samples.iter().map(BandwidthSample::mb_per_s).collect();
        let best = speeds
            .iter()
            .copied()
            .fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.max(s))))?;
        let n = speeds.len() as f64;
        let spread = if speeds.len() < 2 || best <= 0.0 {
            0.0
        } else {
            let mean = speeds.iter().sum::<f64>() / n;
            let var = speeds.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (n - 1.0);
            var.sqrt() / best * 100.0
        };
        Some((best, spread))
    }
}

/// Pages the latency buffer sat in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pages {
    /// The base page size, bytes (4096 on every board here).
    Base(u64),
    /// `madvise(MADV_HUGEPAGE)` on a 2 MiB-aligned buffer (transparent huge pages).
    Huge,
}

/// Dependent random reads over blocks 1 KiB ... the largest, on one CPU: tinymembench's
/// `random_read_test` and `random_dual_read_test` (crates/memory/src/latency.rs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyTable {
    pub pages: Pages,
    pub core: u32,
    /// Reads (dual: steps) per repeat, each row and the baselines; a multiple of 16.
    pub reads: u64,
    /// The single-read loop over a 2-byte block (always an L1 hit): the loop's, the
    /// LCG's and the L1 load's cost, subtracted from every row's single figure. ns per
    /// repeat.
    pub baseline_ns: Vec<u64>,
    /// The dual-read loop over the same 2 bytes, subtracted from the dual figures (its
    /// LCG does five draws a step, not three). ns per repeat. Schema 1.12; empty in older
    /// documents, whose dual figures used `baseline_ns`.
    #[serde(default)]
    pub baseline_dual_ns: Vec<u64>,
    pub rows: Vec<LatencyRow>,
}

/// One block size: ns of each repeat (each at another random offset in the buffer,
/// aligned to the block's size).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencyRow {
    pub block_bytes: u64,
    /// `reads` dependent byte reads at random addresses of the block.
    pub single_ns: Vec<u64>,
    /// `reads` steps of two independent reads each (the step waits for both); the time
    /// per step over the single read's shows the memory-level parallelism.
    pub dual_ns: Vec<u64>,
}

impl LatencyTable {
    /// ns per read of the fastest baseline repeat.
    pub fn baseline_per_read(&self) -> Option<f64> {
        per_read(&self.baseline_ns, self.reads)
    }

    /// (single, dual) ns per read (dual: per step) over the L1 baselines, as
    /// tinymembench prints them: the fastest repeat minus the fastest baseline of its
    /// loop (dual: `baseline_dual_ns`, or `baseline_ns` in a document without it),
    /// floored at 0.
    pub fn extra_ns(&self, row: &LatencyRow) -> Option<(f64, f64)> {
        let base = self.baseline_per_read()?;
        let dual_base = if self.baseline_dual_ns.is_empty() {
            base
        } else {
            per_read(&self.baseline_dual_ns, self.reads)?
        };
        let s = per_read(&row.single_ns, self.reads)?;
        let d = per_read(&row.dual_ns, self.reads)?;
        Some(((s - base).max(0.0), (d - dual_base).max(0.0)))
    }
}

fn per_read(ns: &[u64], reads: u64) -> Option<f64> {
    fastest_per_read_ns(ns, reads)
}

/// ns per read of each repeat (its ns / `reads`), in the order run; empty for 0 reads.
pub fn per_read_ns(ns: &[u64], reads: u64) -> Vec<f64> {
    if reads == 0 {
        return Vec::new();
    }
    ns.iter().map(|&n| n as f64 / reads as f64).collect()
}

/// ns per read of the fastest repeat; `None` without repeats or for 0 reads.
pub fn fastest_per_read_ns(ns: &[u64], reads: u64) -> Option<f64> {
    let min = *ns.iter().min()?;
    (reads > 0).then(|| min as f64 / reads as f64)
}

/// How far the measured clock may be from the claimed one before the figures are said to
/// be taken at another clock: 9 %, sbc-bench's threshold (ThomasKaiser/sbc-bench,
/// sbc-bench.sh, the "cpufreq OPP" check).
pub const CLOCK_TOLERANCE: f64 = 0.09;

/// The CPU clock at one moment: a calibrated dependent-add loop's figure beside what
/// cpufreq and, on a Pi, the firmware say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockCheck {
    /// `before-memory`, `after-memory`, `before-storage`, `before-network`, `host`.
    pub at: String,
    pub cpu: u32,
    /// The loop's figure, Hz: dependent adds retire one per cycle on every core here, so
    /// (extra adds) / (extra time) of a long and a short loop is the clock
    /// (wtarreau/mhz's method: the difference cancels the loop's own cost).
    pub measured_hz: u64,
    /// The two loops' add counts and ns (fastest of the repeats).
    pub short_ops: u64,
    pub short_ns: u64,
    pub long_ops: u64,
    pub long_ns: u64,
    /// cpufreq's current frequency, kHz (`cpuinfo_cur_freq`, else `scaling_cur_freq`).
    #[serde(default)]
    pub cpufreq_khz: Option<u64>,
    /// The Pi firmware's measured ARM clock (mailbox `GET_CLOCK_RATE_MEASURED`), Hz.
    #[serde(default)]
    pub firmware_hz: Option<u64>,
}

impl ClockCheck {
    /// The claims more than [`CLOCK_TOLERANCE`] away from the measured clock, as report
    /// lines (`cpufreq says 1000 MHz, measured 700 MHz (-30 %)`).
    pub fn mismatches(&self) -> Vec<String> {
        let measured = self.measured_hz as f64;
        let mut out = Vec::new();
        let claims = [
            ("cpufreq", self.cpufreq_khz.map(|k| k as f64 * 1e3)),
            ("the firmware", self.firmware_hz.map(|h| h as f64)),
        ];
        for (who, claim) in claims {
            let Some(claim) = claim.filter(|c| *c > 0.0) else {
                continue;
            };
            let off = measured / claim - 1.0;
            if off.abs() > CLOCK_TOLERANCE {
                out.push(format!(
                    "{}: {who} says {:.0} MHz, measured {:.0} MHz ({:+.0} %)",
                    self.at,
                    claim / 1e6,
                    measured / 1e6,
                    off * 100.0
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(samples: &[(u64, u64)]) -> BandwidthTest {
        BandwidthTest {
            kernel: "libc-memcpy".into(),
            label: "standard memcpy".into(),
            op: MemOp::Copy,
            cores: Cores::One(0),
            samples: samples
                .iter()
                .map(|&(bytes, ns)| BandwidthSample { bytes, ns })
                .collect(),
        }
    }

    #[test]
    fn best_is_the_fastest_sample_and_spread_its_stddev_share() {
        // 1000, 900, 800 MB/s: mean 900, sample stddev 100 -> 10 % of the best.
        let t = test(&[
            (1_000_000_000, 1_000_000_000),
            (900_000, 1_000_000),
            (800, 1_000),
        ]);
        let (best, spread) = t.best_and_spread().unwrap();
        assert!((best - 1000.0).abs() < 1e-9, "{best}");
        assert!((spread - 10.0).abs() < 1e-9, "{spread}");
        assert_eq!(test(&[]).best_and_spread(), None);
        assert_eq!(test(&[(5, 0)]).best_and_spread(), Some((0.0, 0.0)));
    }

    #[test]
    fn latency_is_the_fastest_repeat_over_the_baseline() {
        let t = LatencyTable {
            pages: Pages::Base(4096),
            core: 0,
            reads: 1000,
            baseline_ns: vec![5000, 4000],
            baseline_dual_ns: vec![],
            rows: vec![LatencyRow {
                block_bytes: 64 << 20,
                single_ns: vec![300_000, 284_000],
                dual_ns: vec![200_000, 150_000],
            }],
        };
        assert_eq!(t.baseline_per_read(), Some(4.0));
        // A 1.11 document: the dual figures over the single baseline.
        assert_eq!(t.extra_ns(&t.rows[0]), Some((280.0, 146.0)));
        // 1.12: the dual loop's own baseline.
        let t = LatencyTable {
            baseline_dual_ns: vec![9000, 7000, 8000],
            ..t
        };
        assert_eq!(t.extra_ns(&t.rows[0]), Some((280.0, 143.0)));
        let fast = LatencyRow {
            block_bytes: 1024,
            single_ns: vec![3000],
            dual_ns: vec![3500],
        };
        assert_eq!(t.extra_ns(&fast), Some((0.0, 0.0)), "floored at 0");
    }

    #[test]
    fn clock_mismatch_over_nine_percent_names_who_claimed_what() {
        let mut c = ClockCheck {
            at: "after-memory".into(),
            cpu: 0,
            measured_hz: 700_000_000,
            short_ops: 1,
            short_ns: 1,
            long_ops: 2,
            long_ns: 2,
            cpufreq_khz: Some(1_000_000),
            firmware_hz: Some(699_000_000),
        };
        assert_eq!(
            c.mismatches(),
            ["after-memory: cpufreq says 1000 MHz, measured 700 MHz (-30 %)"]
        );
        c.cpufreq_khz = Some(765_000); // 8.5 % off: within the tolerance
        assert!(c.mismatches().is_empty());
        c.cpufreq_khz = None;
        c.firmware_hz = None;
        assert!(c.mismatches().is_empty());
    }
}
