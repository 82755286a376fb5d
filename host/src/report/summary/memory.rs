//! The memory step and the clock checks in the report JSON: tinymembench's figures
//! (best MB/s and spread per test, ns over L1 per latency row) with the CPU facts, and
//! each clock check in MHz with its mismatches.

use benchboot_results::memory::{ClockCheck, Cores, CpuFacts, MemOp, MemoryResults, Pages};
use benchboot_results::RunResults;
use serde::{Deserialize, Serialize};

use crate::render::memory::fastest_per_read_ns;

/// The memory step of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemorySummary {
    pub cpu: CpuFacts,
    /// Bytes of each bandwidth buffer, and why that size.
    pub buffer_bytes: u64,
    pub sizing: String,
    pub bandwidth: Vec<BandwidthCell>,
    pub latency: Vec<LatencyCell>,
    pub skipped: Vec<String>,
    pub problems: Vec<String>,
}

/// One kernel on one core set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandwidthCell {
    pub kernel: String,
    pub label: String,
    pub op: MemOp,
    pub cores: Cores,
    pub samples: usize,
    /// The best sample, MB/s (10^6 B/s); `None` without samples.
    pub best_mb_per_s: Option<f64>,
    /// The samples' standard deviation as a percentage of the best.
    pub spread_pct: Option<f64>,
}

/// One block size of one latency table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyCell {
    pub pages: Pages,
    pub core: u32,
    pub block_size_bytes: u64,
    /// ns per read over the L1 baseline, fastest repeat (tinymembench's figures).
    pub single_ns: Option<f64>,
    pub dual_ns: Option<f64>,
    /// Raw ns per read of the fastest repeat, baseline included.
    pub single_ns_per_read: Option<f64>,
    pub dual_ns_per_read: Option<f64>,
    /// The L1 baseline, ns per read.
    pub baseline_ns_per_read: Option<f64>,
}

/// One clock check, MHz (10^6 Hz).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockCell {
    pub at: String,
    pub cpu: u32,
    pub measured_mhz: f64,
    pub cpufreq_mhz: Option<f64>,
    pub firmware_mhz: Option<f64>,
    /// [`ClockCheck::mismatches`]: claims more than 9 % from the measured clock.
    pub mismatches: Vec<String>,
}

/// The memory summary of `m`; for an emulated run (`emulated`) the latency over L1 is
/// left out (`null`: QEMU's TCG models no caches), the raw ns per read kept.
pub fn memory_summary(m: &MemoryResults, emulated: bool) -> MemorySummary {
    MemorySummary {
        cpu: m.cpu.clone(),
        buffer_bytes: m.buffer_bytes,
        sizing: m.sizing.clone(),
        bandwidth: m
            .bandwidth
            .iter()
            .map(|t| {
                let best = t.best_and_spread();
                BandwidthCell {
                    kernel: t.kernel.clone(),
                    label: t.label.clone(),
                    op: t.op,
                    cores: t.cores,
                    samples: t.samples.len(),
                    best_mb_per_s: best.map(|b| b.0),
                    spread_pct: best.map(|b| b.1),
                }
            })
            .collect(),
        latency: m
            .latency
            .iter()
            .flat_map(|t| {
                t.rows.iter().map(move |row| {
                    let extra = t.extra_ns(row).filter(|_| !emulated);
                    LatencyCell {
                        pages: t.pages,
                        core: t.core,
                        block_size_bytes: row.block_bytes,
                        single_ns: extra.map(|e| e.0),
                        dual_ns: extra.map(|e| e.1),
                        single_ns_per_read: fastest_per_read_ns(&row.single_ns, t.reads),
                        dual_ns_per_read: fastest_per_read_ns(&row.dual_ns, t.reads),
                        baseline_ns_per_read: t.baseline_per_read(),
                    }
                })
            })
            .collect(),
        skipped: m.skipped.clone(),
        problems: m.problems.clone(),
    }
}

/// One clock check in MHz.
pub fn clock_cell(c: &ClockCheck) -> ClockCell {
    ClockCell {
        at: c.at.clone(),
        cpu: c.cpu,
        measured_mhz: benchboot_results::figures::clock(c).value,
        cpufreq_mhz: c.cpufreq_khz.map(|k| k as f64 / 1e3),
        firmware_mhz: c.firmware_hz.map(|h| h as f64 / 1e6),
        mismatches: c.mismatches(),
    }
}

/// The memory summary of `r` and its clock checks.
pub fn of_run(r: &RunResults) -> (Option<MemorySummary>, Vec<ClockCell>) {
    (
        r.memory.as_ref().map(|m| memory_summary(m, r.emulated)),
        r.clock_checks.iter().map(clock_cell).collect(),
    )
}

#[cfg(test)]
mod tests {
    use crate::render::memory::tests::memory_run;

    #[test]
    fn the_json_has_tinymembench_figures_and_the_clock() {
        let j = crate::report::summary::summary(&memory_run());
        let m = j.memory.as_ref().unwrap();
        let memcpy = &m.bandwidth[0];
        assert_eq!((memcpy.best_mb_per_s, memcpy.samples), (Some(400.0), 3));
        let deep = m
            .latency
            .iter()
            .find(|c| c.block_size_bytes == 64 << 20)
            .unwrap();
        assert_eq!((deep.single_ns, deep.dual_ns), (Some(284.0), Some(146.0)));
        assert_eq!(j.clock_checks[0].measured_mhz, 700.0);
        assert_eq!(j.clock_checks[0].mismatches.len(), 1);
        let text = serde_json::to_string(&j).unwrap();
        // Read back (serde_json's float parsing may differ in the last bit: the exact
        // fields only).
        let back: crate::report::summary::ReportJson = serde_json::from_str(&text).unwrap();
        assert_eq!(back.clock_checks, j.clock_checks);
        let b = back.memory.unwrap();
        assert_eq!((&b.cpu, b.bandwidth.len(), b.latency.len()), (&m.cpu, 3, 3));
    }
}
