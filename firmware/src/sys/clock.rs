//! The clocks PID 1's energy marks run on, without `unsafe`: `CLOCK_MONOTONIC`, sleeps
//! to an absolute `CLOCK_BOOTTIME`, and the ARM generic timer behind the kernel's check
//! (its register reads, inline `asm!`, are [`super`]'s).

/// `CLOCK_MONOTONIC` in ns (the kernel's clock from its start, without suspend).
pub fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// `clock_nanosleep(CLOCK_BOOTTIME, TIMER_ABSTIME)` until `CLOCK_BOOTTIME` reads `ns`
/// (at once when it has passed); a signal's interruption sleeps on to the same instant.
pub fn sleep_until_boottime(ns: u64) {
    let t = rustix::time::Timespec {
        tv_sec: (ns / 1_000_000_000) as _,
        tv_nsec: (ns % 1_000_000_000) as _,
    };
    loop {
        match rustix::thread::clock_nanosleep_absolute(rustix::thread::ClockId::Boottime, &t) {
            Err(rustix::io::Errno::INTR) => continue,
            // Any other refusal (a kernel without CLOCK_BOOTTIME sleeps): a relative sleep.
            Err(_) => {
                let now = super::boottime_ns();
                if now < ns {
                    std::thread::sleep(std::time::Duration::from_nanos(ns - now));
                }
                return;
            }
            Ok(()) => return,
        }
    }
}

/// The clocksources this kernel registered
/// (`/sys/devices/system/clocksource/clocksource0/available_clocksource`).
pub const AVAILABLE_CLOCKSOURCE: &str =
    "/sys/devices/system/clocksource/clocksource0/available_clocksource";

/// The ARM generic timer's virtual count and frequency, read from user space right
/// around `CLOCK_MONOTONIC`: `(CNTVCT, CNTFRQ in Hz, CLOCK_MONOTONIC ns)`, the count the
/// midpoint of one read before and one after the clock's; or why not. Only where the
/// kernel registered the timer as a clocksource (`arch_sys_counter` in
/// [`AVAILABLE_CLOCKSOURCE`]): the kernel then lets user space read the virtual counter
/// (drivers/clocksource/arm_arch_timer.c `arch_counter_set_user_access` sets
/// CNTKCTL.PL0VCTEN, which makes CNTFRQ readable at PL0 too). On a CPU without the timer
/// (the BCM2835's ARM1176, the AM335x's Cortex-A8) the instructions are undefined: they
/// are never run there.
pub fn generic_timer() -> Result<(u64, u64, u64), String> {
    let sources = std::fs::read_to_string(AVAILABLE_CLOCKSOURCE)
        .map_err(|e| format!("{AVAILABLE_CLOCKSOURCE}: {e}"))?;
    if !sources.split_whitespace().any(|s| s == "arch_sys_counter") {
        return Err(format!(
            "no ARM generic timer: the kernel's clocksources are `{}` (no arch_sys_counter; \
             the BCM2835's ARM1176 and the AM335x's Cortex-A8 have none)",
            sources.trim()
        ));
    }
    let (first, freq) = super::read_generic_timer()?;
    let monotonic = monotonic_ns();
    let (second, _) = super::read_generic_timer()?;
    Ok((first + second.saturating_sub(first) / 2, freq, monotonic))
}
