//! The memory step (crates/memory in a forked worker): bandwidth per kernel and core
//! set, latency, and the CPU clock measured around it; plus the clock checks PID 1 takes
//! before the storage and network steps ([`clock_check`]).
//!
//! The worker pins itself; PID 1 never does (its later workers would inherit the
//! affinity). The Pi firmware's measured ARM clock (mailbox) is added here, in PID 1.

use std::path::Path;
use std::time::Duration;

use benchboot_plan::Plan;
use benchboot_results::memory::{ClockCheck, MemoryResults};
use benchboot_results::{HealthScope, RunResults, Severity};

use crate::console::{case_line, say, CaseResult};
use crate::health::{self, Vcio};
use crate::mailbox::{Property, CLOCK_ARM};
use crate::steps::in_worker_for;

const STEP: &str = "memory";
const PROC: &str = "/proc";
const SYS: &str = "/sys";

/// Runs the plan's memory step, if it has one, and records it (results, clock checks,
/// health around it, console lines). A failed worker is a fault; the plan goes on.
pub fn run_memory(plan: &Plan, results: &mut RunResults) {
    let Some(m) = plan.memory else {
        return;
    };
    say("memory: bandwidth and latency (tinymembench's method)");
    let limit = Duration::from_millis(m.time_limit_ms);
    let out = health::around(results, STEP, HealthScope::Memory, |results| {
        in_worker_for(results, STEP, limit, || {
            let o = benchboot_memory::run(&m, Path::new(PROC), Path::new(SYS));
            Ok((o.results, o.clock_checks))
        })
    });
    let Some((memory, checks)) = out else {
        return;
    };
    for line in case_lines(&memory) {
        say(&line);
    }
    for p in &memory.problems {
        results.event(STEP, Severity::Warning, p.clone());
    }
    for c in checks {
        push_check(results, c);
    }
    results.memory = Some(memory);
}

/// The CPU clock now, measured in a worker pinned to the first CPU, recorded as `at`.
pub fn clock_check(results: &mut RunResults, at: &str) {
    let step = format!("clock.{at}");
    let check = in_worker_for(results, &step, Duration::from_secs(30), || {
        let cpu = benchboot_memory::cpu::allowed_cpus()
            .first()
            .copied()
            .unwrap_or(0);
        let _ = benchboot_memory::cpu::pin(cpu);
        Ok(benchboot_memory::mhz::measure(
            at,
            cpu,
            Path::new(SYS),
            10_000_000,
        ))
    });
    if let Some(c) = check {
        push_check(results, c);
    }
}

/// Adds the firmware's measured clock (Pi only), says the figure and any mismatch.
fn push_check(results: &mut RunResults, mut c: ClockCheck) {
    c.firmware_hz = health::property(&mut Vcio::default(), Property::ClockRateMeasured(CLOCK_ARM))
        .ok()
        .map(u64::from);
    say(&case_line(
        &format!("clock.{}.measured", c.at),
        CaseResult::Pass,
        c.measured_hz as f64 / 1e6,
        "MHz",
    ));
    // Under QEMU the loop measures TCG, not a clock: nothing to compare.
    if !results.emulated {
        for m in c.mismatches() {
            say(&format!("CLOCK MISMATCH {m}"));
            results.event(format!("clock.{}", c.at), Severity::Warning, m);
        }
    }
    results.clock_checks.push(c);
}

/// One line per bandwidth test (best MB/s, tinymembench's figure) and per latency row
/// (ns over L1, single chain): `memory.<kernel>.cpu<N>|all<N>` and
/// `memory.latency.<pages>.<block>`.
pub fn case_lines(m: &MemoryResults) -> Vec<String> {
    use benchboot_results::memory::{Cores, Pages};
    let mut out = Vec::new();
    for t in &m.bandwidth {
        let Some((best, _)) = t.best_and_spread() else {
            continue;
        };
        let cores = match t.cores {
            Cores::One(c) => format!("cpu{c}"),
            Cores::All(n) => format!("all{n}"),
        };
        out.push(case_line(
            &format!("memory.{}.{cores}", t.kernel),
            CaseResult::Pass,
            best,
            "MB/s",
        ));
    }
    for t in &m.latency {
        let pages = match t.pages {
            Pages::Base(_) => "base",
            Pages::Huge => "huge",
        };
        for r in &t.rows {
            if let Some((single, _)) = t.extra_ns(r) {
                out.push(case_line(
                    &format!("memory.latency.{pages}.bs{}", r.block_bytes),
                    CaseResult::Pass,
                    single,
                    "ns",
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchboot_results::memory::*;

    #[test]
    fn every_test_and_row_has_a_console_line() {
        let m = MemoryResults {
            cpu: CpuFacts {
                arch: "arm".into(),
                model: "ARM1176".into(),
                cores: 1,
                features: vec!["vfp".into()],
                llc_bytes: 1 << 20,
                llc_source: "assumed".into(),
                mem_total_bytes: 512 << 20,
                kernels: vec!["libc-memcpy".into()],
                kernels_skipped: vec![],
            },
            buffer_bytes: 32 << 20,
            sizing: String::new(),
            bandwidth: vec![BandwidthTest {
                kernel: "libc-memcpy".into(),
                label: "standard memcpy".into(),
                op: MemOp::Copy,
                cores: Cores::One(0),
                samples: vec![BandwidthSample {
                    bytes: 426_000_000,
                    ns: 1_000_000_000,
                }],
            }],
            latency: vec![LatencyTable {
                pages: Pages::Base(4096),
                core: 0,
                reads: 1000,
                baseline_ns: vec![4000],
                rows: vec![LatencyRow {
                    block_bytes: 64 << 20,
                    single_ns: vec![288_000],
                    dual_ns: vec![500_000],
                }],
            }],
            skipped: vec![],
            problems: vec![],
        };
        assert_eq!(
            case_lines(&m),
            [
                "case=memory.libc-memcpy.cpu0 result=pass value=426.000 units=MB/s",
                "case=memory.latency.base.bs67108864 result=pass value=284.000 units=ns",
            ]
        );
    }
}
