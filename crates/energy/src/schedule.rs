//! The sync pattern's schedule and the boot stages' arithmetic: what PID 1 computes
//! around its clock reads, kept here so it is tested on the host.
//!
//! A pattern never drifts: slot `k` of a pattern that begins at `begin_ns` ends at
//! `begin_ns + (k + 1) * slot_ns` on the board's clock, however late the previous slot
//! ended (a busy slot's threads spin to that instant; an idle slot sleeps to it).

/// How far ahead of its announcement a pattern's first slot starts, ns: the `sync` line
/// is on the console before the pattern, and the CPUs are idle up to it (100 ms).
pub const LEAD_NS: u64 = 100_000_000;

/// Where slot `k` of a pattern (`begin_ns`, `slot_ns`) ends, ns; saturating.
pub fn slot_end_ns(begin_ns: u64, slot_ns: u64, k: usize) -> u64 {
    let n = (k as u64).saturating_add(1);
    begin_ns.saturating_add(n.saturating_mul(slot_ns))
}

/// The slots of `code` as `(busy, end_ns)`, in order ('1' busy, anything else idle).
pub fn slots(code: &str, begin_ns: u64, slot_ns: u64) -> Vec<(bool, u64)> {
    code.chars()
        .enumerate()
        .map(|(k, c)| (c == '1', slot_end_ns(begin_ns, slot_ns, k)))
        .collect()
}

/// How long to wait from `now_ns` to `until_ns`, ns (0 when it has passed).
pub fn wait_ns(now_ns: u64, until_ns: u64) -> u64 {
    until_ns.saturating_sub(now_ns)
}

/// The ARM generic timer's count as ns: `count` ticks at `freq_hz` (CNTVCT, CNTFRQ).
/// `None` for a frequency of 0 (firmware that never programmed CNTFRQ) or a result past
/// `u64`.
pub fn counter_ns(count: u64, freq_hz: u64) -> Option<u64> {
    if freq_hz == 0 {
        return None;
    }
    let ns = u128::from(count) * 1_000_000_000 / u128::from(freq_hz);
    u64::try_from(ns).ok()
}

/// The time before the kernel's clock started, ns: the generic timer's count (running
/// since the firmware started it) minus `CLOCK_MONOTONIC`, both read together
/// (`count`, `freq_hz`, `monotonic_ns`). `Err` says why there is no figure: no counter
/// frequency, or a counter behind the kernel's clock (a counter reset after the kernel
/// started, or a hypervisor's offset).
pub fn before_kernel_ns(count: u64, freq_hz: u64, monotonic_ns: u64) -> Result<u64, String> {
    let counter = counter_ns(count, freq_hz).ok_or_else(|| {
        format!("the generic timer's frequency (CNTFRQ) reads {freq_hz} Hz: not programmed by the firmware")
    })?;
    counter.checked_sub(monotonic_ns).ok_or_else(|| {
        format!(
            "the generic timer ({counter} ns) is behind CLOCK_MONOTONIC ({monotonic_ns} ns): \
             it was reset or offset after the kernel started"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_end_at_absolute_times() {
        let s = slots("1101", 1_000, 250);
        assert_eq!(
            s,
            [(true, 1_250), (true, 1_500), (false, 1_750), (true, 2_000)]
        );
        assert_eq!(slot_end_ns(0, 1_000_000_000, 12), 13_000_000_000);
        assert_eq!(slot_end_ns(u64::MAX - 1, 10, 3), u64::MAX);
        // A late slot does not move the next one.
        assert_eq!(wait_ns(1_300, 1_500), 200);
        assert_eq!(wait_ns(1_600, 1_500), 0);
    }

    #[test]
    fn before_kernel_is_counter_minus_monotonic() {
        // A Pi 4's 54 MHz timer at 8.5 s, the kernel's clock at 3.2 s: 5.3 s before it.
        let count = 54_000_000 * 17 / 2;
        assert_eq!(counter_ns(count, 54_000_000), Some(8_500_000_000));
        assert_eq!(
            before_kernel_ns(count, 54_000_000, 3_200_000_000),
            Ok(5_300_000_000)
        );
        // 19.2 MHz (BCM2837), 24 MHz (Allwinner A20): no rounding drift at whole counts.
        assert_eq!(counter_ns(19_200_000 * 3, 19_200_000), Some(3_000_000_000));
        assert_eq!(counter_ns(24_000_001, 24_000_000), Some(1_000_000_041));
        // The largest count at 1 GHz is u64's own ns.
        assert_eq!(counter_ns(u64::MAX, 1_000_000_000), Some(u64::MAX));
        assert_eq!(counter_ns(u64::MAX, 1), None);
        let e = before_kernel_ns(5, 0, 1).unwrap_err();
        assert!(e.contains("CNTFRQ"), "{e}");
        let e = before_kernel_ns(1_000, 1_000, 2_000_000_000).unwrap_err();
        assert!(e.contains("behind"), "{e}");
    }
}
