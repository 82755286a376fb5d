//! What PID 1 does so a power trace can be tied to its steps: the mark lines
//! at every step's window edges, the sync patterns at the run's start and end, the idle
//! phases (radios off, then each measured link up), and the boot's stages. The line
//! formats and the slot arithmetic are `benchboot_energy::{marks, schedule}`, tested on
//! the host; this module runs them on the board's clock (`CLOCK_BOOTTIME`, [`sys`]).
//!
//! The plan's marks ([`benchboot_plan::EnergyPlan`]) are set once ([`set_plan`]) when the
//! plan is final; until then, and with the marks off, nothing is printed or run. The
//! boot stages' instants (the first step's begin, the results link up) are kept here
//! and written into the document at every save ([`fill`]), with the on-board sensor's
//! samples ([`crate::onboard`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use benchboot_energy::marks::{self, Edge, SyncAt};
use benchboot_energy::schedule;
use benchboot_plan::energy::SYNC_CODE;
use benchboot_plan::EnergyPlan;
use benchboot_results::energy::{IdleMark, SyncMark};
use benchboot_results::{Reading, RunResults, Severity};

use crate::console::say;
use crate::{heart, sys};

static PLAN: OnceLock<EnergyPlan> = OnceLock::new();
/// `CLOCK_BOOTTIME` at PID 1's start, ns (0: not yet known).
static INIT_NS: AtomicU64 = AtomicU64::new(0);
/// `CLOCK_BOOTTIME` at the first step's begin mark, ns (0: none yet).
static FIRST_STEP_NS: AtomicU64 = AtomicU64::new(0);
/// `CLOCK_BOOTTIME` when the results link came up, ns (0: not yet).
static LINK_NS: AtomicU64 = AtomicU64::new(0);

/// The energy marks of the plan PID 1 runs; the first call wins, and starts the
/// on-board sensor's sampler when the plan names one ([`crate::onboard`]).
pub fn set_plan(plan: &EnergyPlan, results: &mut RunResults) {
    if PLAN.set(plan.clone()).is_err() {
        return;
    }
    if let Some(sensor) = &plan.sensor {
        crate::onboard::start(sensor, results);
    }
}

/// The plan's marks when they are on.
fn plan() -> Option<&'static EnergyPlan> {
    PLAN.get().filter(|p| !p.is_off())
}

/// PID 1's start (`CLOCK_BOOTTIME`, ns) and the stages before it: `kernel_to_init_ns`
/// and `before_kernel_ns` into `results.boot`. `emulated`: the counter is QEMU's.
pub fn boot_started(started_ns: u64, emulated: bool, results: &mut RunResults) {
    INIT_NS.store(started_ns, Ordering::Relaxed);
    results.boot.kernel_to_init_ns = Reading::ok(
        started_ns,
        "CLOCK_BOOTTIME at PID 1's first instruction (its first clock read)",
    );
    results.boot.before_kernel_ns = before_kernel(emulated);
}

/// The ARM generic timer's count minus `CLOCK_MONOTONIC`, or why there is none.
fn before_kernel(emulated: bool) -> Reading<u64> {
    let read = sys::generic_timer()
        .and_then(|(count, freq, mono)| schedule::before_kernel_ns(count, freq, mono));
    match read {
        Ok(ns) if emulated => Reading::ok(
            ns,
            "CNTVCT/CNTFRQ minus CLOCK_MONOTONIC under QEMU: the counter starts at QEMU's \
             start, so this is QEMU's own start and its emulated loader, not a board's",
        ),
        Ok(ns) => Reading::ok(
            ns,
            "CNTVCT/CNTFRQ (ARM generic timer, running since the firmware started it) minus \
             CLOCK_MONOTONIC",
        ),
        Err(why) => Reading::unavailable(why),
    }
}

/// The results link is up (the gadget's lease, or the static interface serving): the
/// first call counts.
pub fn results_link_up() {
    let _ = LINK_NS.compare_exchange(0, sys::boottime_ns(), Ordering::Relaxed, Ordering::Relaxed);
}

/// Writes what is known so far into the document: the on-board sensor's samples
/// ([`crate::onboard::fill`]) and the boot stages, PID 1's start to the first step and
/// to the results link.
pub fn fill(results: &mut RunResults) {
    crate::onboard::fill(results);
    let init = INIT_NS.load(Ordering::Relaxed);
    if init == 0 {
        return;
    }
    let (first, link) = since_init(
        init,
        FIRST_STEP_NS.load(Ordering::Relaxed),
        LINK_NS.load(Ordering::Relaxed),
    );
    results.boot.init_to_first_step_ns = first;
    results.boot.init_to_link_ns = link;
}

/// `init_to_first_step_ns` and `init_to_link_ns` from PID 1's start `init`, the first
/// step's begin `first` and the link's `link` (0: not yet). Pure.
fn since_init(init: u64, first: u64, link: u64) -> (Reading<u64>, Reading<u64>) {
    let since = |t: u64, source: &str, none: &str| match t {
        0 => Reading::unavailable(none),
        t => Reading::ok(t.saturating_sub(init), source),
    };
    (
        since(
            first,
            "CLOCK_BOOTTIME at the first step's begin mark minus PID 1's start",
            "no step has begun",
        ),
        since(
            link,
            "CLOCK_BOOTTIME when the results link came up minus PID 1's start",
            "the results link has not come up",
        ),
    )
}

/// A step's window edge: `mark <begin|end> <step> t_ns=<now>` on the console when the
/// plan's marks are on (the first begin is the boot's first step either way).
pub fn step_mark(edge: Edge, step: &str) {
    let t = sys::boottime_ns();
    if edge == Edge::Begin {
        let _ = FIRST_STEP_NS.compare_exchange(0, t, Ordering::Relaxed, Ordering::Relaxed);
    }
    if plan().is_some() {
        if let Some(line) = marks::step_line(edge, step, t) {
            say(&line);
        }
    }
}

/// Runs one sync pattern ([`SYNC_CODE`]) when the plan asks for them: announced by its
/// `sync` line, the first slot [`schedule::LEAD_NS`] later; slot `k` ends at
/// `begin + (k + 1) x slot` (no drift). A busy slot spins one thread per CPU PID 1 may
/// run on, each pinned to its CPU, to the slot's end; an idle slot sleeps to it.
/// Recorded in `results.energy.sync`; a CPU that could not be pinned or a thread that
/// could not start is a warning (the pattern runs with what it has).
pub fn sync(at: SyncAt, results: &mut RunResults) {
    let Some(p) = plan().filter(|p| p.sync) else {
        return;
    };
    let slot_ns = p.slot_ms.saturating_mul(1_000_000);
    let begin_ns = sys::boottime_ns().saturating_add(schedule::LEAD_NS);
    if let Some(line) = marks::sync_line(at, begin_ns, slot_ns, SYNC_CODE) {
        say(&line);
    }
    let cpus = benchboot_memory::cpu::allowed_cpus();
    let (end_ns, problems) = run_pattern(SYNC_CODE, begin_ns, slot_ns, &cpus);
    results.energy.sync.push(SyncMark {
        at: at.name().to_owned(),
        begin_ns,
        slot_ns,
        code: SYNC_CODE.to_owned(),
        end_ns,
    });
    if !problems.is_empty() {
        results.event(
            format!("energy.sync.{}", at.name()),
            Severity::Warning,
            format!(
                "the busy slots ran without every CPU: {}",
                problems.join("; ")
            ),
        );
    }
}

/// Runs `code` from `begin_ns` in slots of `slot_ns` on `cpus`: sleeps to `begin_ns`,
/// then each slot to its absolute end, busy slots spinning every CPU. Returns
/// `CLOCK_BOOTTIME` at the end, ns, and what went wrong.
fn run_pattern(code: &str, begin_ns: u64, slot_ns: u64, cpus: &[u32]) -> (u64, Vec<String>) {
    let mut problems: Vec<String> = Vec::new();
    sys::sleep_until_boottime(begin_ns);
    for (busy, end) in schedule::slots(code, begin_ns, slot_ns) {
        if busy {
            spin_all(cpus, end, &mut problems);
        }
        sys::sleep_until_boottime(end);
        heart::beat();
    }
    (sys::boottime_ns(), problems)
}

/// One spinning thread per CPU of `cpus`, pinned, to `end_ns`; joined. What failed goes
/// into `problems`, once each.
fn spin_all(cpus: &[u32], end_ns: u64, problems: &mut Vec<String>) {
    let mut note = |p: String| {
        if !problems.contains(&p) {
            problems.push(p);
        }
    };
    let mut handles = Vec::new();
    for &cpu in cpus {
        let spawned = std::thread::Builder::new()
            .name(format!("sync-cpu{cpu}"))
            .spawn(move || {
                let pinned = benchboot_memory::cpu::pin(cpu).map_err(|e| e.to_string());
                while sys::boottime_ns() < end_ns {
                    std::hint::spin_loop();
                }
                pinned
            });
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => note(format!("CPU {cpu}: no thread: {e}")),
        }
    }
    for h in handles {
        match h.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => note(e),
            Err(_) => note("a spinning thread panicked".into()),
        }
    }
}

/// One idle phase `phase` when the plan asks for them: PID 1 sleeps for the plan's
/// `idle_ms` (to an absolute end, waking once a second to beat the heart) between the
/// `idle <phase> begin` and `end` lines; recorded in `results.energy.idle`.
pub fn idle(phase: &str, results: &mut RunResults) {
    let Some(p) = plan().filter(|p| p.idle_ms > 0) else {
        return;
    };
    let begin_ns = sys::boottime_ns();
    if let Some(line) = marks::idle_line(phase, Edge::Begin, begin_ns) {
        say(&line);
    }
    let until = begin_ns.saturating_add(p.idle_ms.saturating_mul(1_000_000));
    loop {
        let now = sys::boottime_ns();
        if now >= until {
            break;
        }
        sys::sleep_until_boottime(until.min(now.saturating_add(1_000_000_000)));
        heart::beat();
    }
    let end_ns = sys::boottime_ns();
    if let Some(line) = marks::idle_line(phase, Edge::End, end_ns) {
        say(&line);
    }
    results.energy.idle.push(IdleMark {
        phase: phase.to_owned(),
        begin_ns,
        end_ns,
    });
}

/// The idle phase of a measured link that is up, before its tests: `link <ifname>`.
pub fn idle_on_link(ifname: &str, results: &mut RunResults) {
    idle(&link_phase(ifname), results);
}

/// The idle phase's name for interface `ifname`.
pub fn link_phase(ifname: &str) -> String {
    format!("link {ifname}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_is_the_consoles() {
        assert_eq!(marks::PREFIX, benchboot_console::PREFIX);
        // A mark line passes the console's escaping unchanged.
        let line = marks::idle_line(&link_phase("usb0"), Edge::Begin, 5).unwrap();
        assert_eq!(
            crate::console::console_line(&line),
            "benchboot: idle link%20usb0 begin t_ns=5"
        );
        assert_eq!(
            marks::parse(&crate::console::console_line(&line)),
            Some(marks::Mark::Idle {
                phase: "link usb0".into(),
                edge: Edge::Begin,
                t_ns: 5
            })
        );
    }

    #[test]
    fn before_kernel_says_why_on_a_host() {
        // The build host is no ARM board with the timer as a clocksource (or, if it is
        // one, the figure is a count of ns).
        match before_kernel(false) {
            Reading::Unavailable { reason } => assert!(!reason.is_empty()),
            Reading::Ok { value, source } => {
                assert!(source.contains("CNTVCT"), "{source}");
                assert!(value < 3_600_000_000_000, "{value}");
            }
        }
    }

    /// CPU time of this process (`thread`: of the calling thread), ns.
    fn cpu_ns_of(thread: bool) -> u64 {
        let id = if thread {
            rustix::time::ClockId::ThreadCPUTime
        } else {
            rustix::time::ClockId::ProcessCPUTime
        };
        let t = rustix::time::clock_gettime(id);
        t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
    }

    fn cpu_ns() -> u64 {
        cpu_ns_of(false)
    }

    #[test]
    fn a_pattern_keeps_its_absolute_slots_and_busies_every_cpu() {
        let slot = 40_000_000;
        let cpus = benchboot_memory::cpu::allowed_cpus();
        // Busy, idle, busy: 3 slots from 20 ms on.
        let begin = sys::boottime_ns() + 20_000_000;
        let cpu_before = cpu_ns();
        let (end, problems) = run_pattern("101", begin, slot, &cpus);
        let spent = cpu_ns() - cpu_before;
        assert!(problems.is_empty(), "{problems:?}");
        assert!(end >= begin + 3 * slot, "{end} < {}", begin + 3 * slot);
        // No drift: the end is the third slot's, give or take the scheduler.
        assert!(end < begin + 3 * slot + 60_000_000, "{}", end - begin);
        // Two busy slots on every CPU: at least half of 2 x slot x CPUs of CPU time
        // (other tests share the machine), and at most all of it plus the idle slot's.
        let full = 2 * slot * cpus.len() as u64;
        assert!(spent >= full / 2, "{spent} ns of CPU for {full}");
        // An all-idle pattern: PID 1's thread sleeps through it.
        let cpu_before = cpu_ns_of(true);
        let begin = sys::boottime_ns();
        let (end, _) = run_pattern("00", begin, slot, &cpus);
        assert!(end >= begin + 2 * slot);
        assert!(cpu_ns_of(true) - cpu_before < slot / 4);
    }

    #[test]
    fn the_boot_stages_count_from_pid_1s_start() {
        let (first, link) = since_init(1_000, 0, 0);
        assert_eq!(first.value(), None);
        assert_eq!(link.value(), None);
        assert!(matches!(link, Reading::Unavailable { reason } if reason.contains("link")));
        let (first, link) = since_init(1_000, 3_500, 10_000);
        assert_eq!(first.value(), Some(&2_500));
        assert_eq!(link.value(), Some(&9_000));
        assert!(first.source().unwrap().contains("first step"));
    }
}
