//! The memory step (crates/memory in a forked worker): bandwidth per kernel and core
//! set, latency, and the CPU clock measured around it; plus the clock checks PID 1 takes
//! before the storage and network steps ([`clock_check`]).
//!
//! The worker pins itself; PID 1 never does (its later workers would inherit the
//! affinity). The Pi firmware's measured ARM clock (mailbox) is added here, in PID 1.

use std::path::Path;
use std::time::Duration;

use benchboot_plan::Plan;
use benchboot_results::memory::ClockCheck;
use benchboot_results::{HealthScope, RunResults, Severity};

use crate::console::{self, say};
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
    console::figures(&benchboot_console::figures::memory(
        &memory,
        results.emulated,
    ));
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
    if let Some(f) = benchboot_console::figures::clock(&c, results.emulated) {
        console::figure(&f);
    }
    // Under QEMU the loop measures TCG, not a clock: nothing to compare.
    if !results.emulated {
        for m in c.mismatches() {
            say(&format!("CLOCK MISMATCH {m}"));
            results.event(format!("clock.{}", c.at), Severity::Warning, m);
        }
    }
    results.clock_checks.push(c);
}
