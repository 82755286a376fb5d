//! The CPU's real clock, measured: a loop of `N` dependent adds per iteration retires
//! one add per cycle on every core here (ARM1176, Cortex-A7/A8/A53/A72, x86-64: integer
//! ADD has a 1-cycle result latency, per each core's Technical Reference Manual /
//! Agner Fog's tables). A short and a long loop run the same iterations; the extra adds
//! over the extra time is the clock, the loop's own branch and counter cancelling out
//! (wtarreau/mhz's method, the one sbc-bench uses beside cpufreq's claim).
//!
//! Under QEMU the figure is TCG's speed, not a clock: the results say `emulated`.

use benchboot_results::memory::ClockCheck;
use std::path::Path;

use crate::timing::Clock;

/// Adds per iteration of the short and the long loop.
pub const SHORT: u64 = 64;
pub const LONG: u64 = 192;

/// `iters` iterations of `N` dependent adds; returns the sum (so the chain stays).
#[inline(never)]
pub fn adds<const N: usize>(iters: u64) -> u64 {
    #[allow(unused_mut)]
    let mut x: usize = 0;
    let n = iters.max(1) as usize;
    #[cfg(target_arch = "aarch64")]
    // SAFETY: register arithmetic and a backward branch only: no memory is touched
    // (`nomem`), no stack (`nostack`), and the two registers used are declared `inout`.
    unsafe {
        core::arch::asm!(
            "2:",
            ".rept {k}",
            "add {x}, {x}, #1",
            ".endr",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            k = const N,
            x = inout(reg) x,
            n = inout(reg) n => _,
            options(nomem, nostack),
        );
    }
    #[cfg(target_arch = "arm")]
    // SAFETY: as the aarch64 loop: register arithmetic and a branch, no memory or stack.
    unsafe {
        core::arch::asm!(
            "2:",
            ".rept {k}",
            "add {x}, {x}, #1",
            ".endr",
            "subs {n}, {n}, #1",
            "bne 2b",
            k = const N,
            x = inout(reg) x,
            n = inout(reg) n => _,
            options(nomem, nostack),
        );
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as the aarch64 loop: register arithmetic and a branch, no memory or stack.
    // The 1 comes from a register: Intel's Golden Cove and later cores fold a chain of
    // `add reg, imm` at rename, several a cycle (measured here: 21-25 G adds/s on a
    // 2.6 GHz Xeon VM), where a register operand has to execute, one a cycle.
    unsafe {
        core::arch::asm!(
            "2:",
            ".rept {k}",
            "add {x}, {one}",
            ".endr",
            "dec {n}",
            "jnz 2b",
            k = const N,
            x = inout(reg) x,
            n = inout(reg) n => _,
            one = in(reg) 1usize,
            options(nomem, nostack),
        );
    }
    #[cfg(not(any(target_arch = "aarch64", target_arch = "arm", target_arch = "x86_64")))]
    {
        for _ in 0..n * N {
            x = std::hint::black_box(x + 1);
        }
    }
    x as u64
}

/// Hz from the two loops' (adds, ns): (long - short adds) / (long - short ns). `None`
/// when the long loop was not slower (a clock too coarse or a preempted short run).
pub fn hz_from(short_ops: u64, short_ns: u64, long_ops: u64, long_ns: u64) -> Option<u64> {
    let ops = long_ops.checked_sub(short_ops)?;
    let ns = long_ns.checked_sub(short_ns).filter(|&d| d > 0)?;
    Some((ops as u128 * 1_000_000_000 / ns as u128) as u64)
}

/// The fastest of `repeats` timings of `f`, ns.
fn fastest(clock: &mut impl Clock, repeats: u32, mut f: impl FnMut()) -> u64 {
    (0..repeats.max(1))
        .map(|_| {
            let t0 = clock.now_ns();
            f();
            clock.now_ns().saturating_sub(t0)
        })
        .min()
        .unwrap_or(0)
}

/// Measures the clock of the CPU this thread runs on (pin it first: [`crate::cpu::pin`]):
/// iterations doubled until the short loop lasts `least_ns`, then the fastest of 3 runs
/// of each loop (`measured_hz` 0 when even 4 tries found the long loop no slower); beside it cpufreq's figure for `cpu` (from `sys`). `firmware_hz` is the
/// caller's (the Pi mailbox lives in the init).
pub fn measure(at: &str, cpu: u32, sys: &Path, least_ns: u64) -> ClockCheck {
    let mut clock = crate::timing::Monotonic;
    let mut iters = 1024u64;
    loop {
        let t = fastest(&mut clock, 1, || {
            std::hint::black_box(adds::<{ SHORT as usize }>(iters));
        });
        if t >= least_ns || iters >= 1 << 40 {
            break;
        }
        iters *= 2;
    }
    // A preempted short run (or an emulator's translation pause) can make the long loop
    // look no slower: then again with twice the iterations, up to 4 times.
    let (mut short_ns, mut long_ns) = (0, 0);
    for tries in 0..4 {
        short_ns = fastest(&mut clock, 3, || {
            std::hint::black_box(adds::<{ SHORT as usize }>(iters));
        });
        long_ns = fastest(&mut clock, 3, || {
            std::hint::black_box(adds::<{ LONG as usize }>(iters));
        });
        if hz_from(SHORT * iters, short_ns, LONG * iters, long_ns).is_some() || tries == 3 {
            break;
        }
        iters *= 2;
    }
    let (short_ops, long_ops) = (SHORT * iters, LONG * iters);
    ClockCheck {
        at: at.to_owned(),
        cpu,
        measured_hz: hz_from(short_ops, short_ns, long_ops, long_ns).unwrap_or(0),
        short_ops,
        short_ns,
        long_ops,
        long_ns,
        cpufreq_khz: crate::cpu::cpufreq_khz(sys, cpu).ok().map(|(k, _)| k),
        firmware_hz: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_adds_really_run_and_count() {
        assert_eq!(adds::<64>(10), 640);
        assert_eq!(adds::<192>(3), 576);
    }

    #[test]
    fn hz_is_the_extra_adds_over_the_extra_time() {
        // 1 GHz with a 2 ns loop overhead per iteration, 1000 iterations:
        // short 64k adds in 64 us + 2 us, long 192k adds in 192 us + 2 us.
        assert_eq!(
            hz_from(64_000, 66_000, 192_000, 194_000),
            Some(1_000_000_000)
        );
        assert_eq!(hz_from(64_000, 66_000, 192_000, 66_000), None);
        assert_eq!(hz_from(64_000, 66_000, 1, 100_000), None);
    }

    #[test]
    fn fastest_is_the_minimum_of_the_repeats() {
        let c = crate::timing::tests::MockClock::default();
        let mut d = [50u64, 20, 30].into_iter();
        let t = fastest(&mut c.clone(), 3, || c.advance(d.next().unwrap()));
        assert_eq!(t, 20);
    }

    /// On this machine the figure is a plausible clock (50 MHz .. 20 GHz, wide: qemu-user runs this too): the loop counts
    /// adds, not a constant.
    #[test]
    fn this_machine_measures_a_plausible_clock() {
        let c = measure("test", 0, Path::new("/sys"), 2_000_000);
        assert!(
            (50_000_000..20_000_000_000).contains(&c.measured_hz),
            "{c:?}"
        );
        assert!(c.long_ns > c.short_ns, "{c:?}");
    }
}
