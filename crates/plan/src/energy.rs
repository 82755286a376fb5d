//! The energy marks of a plan ([`EnergyPlan`]): the idle phases and the busy/idle sync
//! patterns PID 1 runs so a power trace taken by a meter on the host can be aligned with
//! the run's steps and an idle baseline subtracted (issue 44; method:
//! `/work/shared/notes/energy.md`, "Aligning a trace"). Plan file `[energy]`
//! ([`crate::file::EnergySection`]).

use serde::{Deserialize, Serialize};

/// The sync pattern PID 1 runs at the start and at the end of a run: Barker 13, the
/// longest binary Barker code (peak autocorrelation 13, side lobes at most 1), so a
/// cross-correlation with the trace has one clear peak. `'1'`: every CPU busy for the
/// slot, `'0'`: PID 1 asleep.
pub const SYNC_CODE: &str = "1111100110101";

/// Longest idle phase a plan may ask for: 10 min, ms (sbc-bench waits 4 min before its
/// idle reading; more is a slip, a duration in hours).
pub const MAX_IDLE_MS: u64 = 10 * 60_000;

/// Shortest sync slot: 100 ms, ms (about ten samples of the fastest polled meters
/// the notes list, 100 samples/s; shorter slots fall below what a polled meter shows).
pub const MIN_SLOT_MS: u64 = 100;

/// Longest sync slot: 10 s, ms (13 of them are over 2 min per pattern).
pub const MAX_SLOT_MS: u64 = 10_000;

/// What PID 1 runs for energy measurement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnergyPlan {
    /// Length of each idle phase (`radios-off` after the start pattern, `link <if>` on
    /// each measured link once it is up), ms; 0: no idle phases.
    pub idle_ms: u64,
    /// Run the sync pattern ([`SYNC_CODE`]) at the run's start and end.
    pub sync: bool,
    /// Length of one slot of the sync pattern, ms ([`MIN_SLOT_MS`] ..= [`MAX_SLOT_MS`]).
    pub slot_ms: u64,
    /// An on-board power sensor PID 1 samples itself, as the plan file names it
    /// (`axp20x-usb`, `ina226 i2c-1 0x40 0.1ohm`); reserved: this init reads none yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensor: Option<String>,
}

impl EnergyPlan {
    /// The hardware plans': 30 s idle phases, the sync patterns in 1 s slots (13 s each).
    pub const HARDWARE: EnergyPlan = EnergyPlan {
        idle_ms: 30_000,
        sync: true,
        slot_ms: 1_000,
        sensor: None,
    };

    /// The QEMU plans': 0.5 s idle phases, 0.25 s slots (the emulated meter reads QEMU's
    /// CPU time 100 times a second: 50 readings per phase, 25 per slot; a short pattern
    /// tests the protocol, not a meter, and every QEMU boot of the tests pays for it).
    pub const QEMU: EnergyPlan = EnergyPlan {
        idle_ms: 500,
        sync: true,
        slot_ms: 250,
        sensor: None,
    };

    /// Nothing for energy: plans written before schema 1.13 (the serde default), and
    /// plans whose run must not change its timing (the power-cut test).
    pub const OFF: EnergyPlan = EnergyPlan {
        idle_ms: 0,
        sync: false,
        slot_ms: 1_000,
        sensor: None,
    };

    /// True when PID 1 runs no idle phase and no sync pattern.
    pub fn is_off(&self) -> bool {
        self.idle_ms == 0 && !self.sync
    }

    /// Length of one sync pattern, ms (0 when `sync` is off).
    pub fn pattern_ms(&self) -> u64 {
        if self.sync {
            crate::estimate::product(&[SYNC_CODE.len() as u64, self.slot_ms])
        } else {
            0
        }
    }

    /// The time these marks add to a run with `links` measured links, ms: two
    /// patterns, the `radios-off` idle phase and one idle phase per link.
    pub fn estimate_ms(&self, links: u64) -> u64 {
        let phases = if self.idle_ms > 0 { 1 + links } else { 0 };
        crate::estimate::sum([
            crate::estimate::product(&[2, self.pattern_ms()]),
            crate::estimate::product(&[phases, self.idle_ms]),
        ])
    }

    /// Why this energy plan cannot run, if it cannot: (field, message), as
    /// [`crate::PlanError::Invalid`] names it.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.idle_ms > MAX_IDLE_MS {
            return Err(("energy.idle_ms", idle_problem(self.idle_ms)));
        }
        if !(MIN_SLOT_MS..=MAX_SLOT_MS).contains(&self.slot_ms) {
            return Err(("energy.slot_ms", slot_problem(self.slot_ms)));
        }
        Ok(())
    }
}

impl Default for EnergyPlan {
    /// [`EnergyPlan::OFF`]: a plan without the field ran none.
    fn default() -> Self {
        EnergyPlan::OFF
    }
}

/// Why an idle phase of `ms` is refused.
pub(crate) fn idle_problem(ms: u64) -> String {
    format!(
        "{} is longer than an idle phase may be ({}); write e.g. \"30 s\", or \"0 s\" for none",
        crate::units::fmt_millis(ms),
        crate::units::fmt_millis(MAX_IDLE_MS)
    )
}

/// Why a sync slot of `ms` is refused.
pub(crate) fn slot_problem(ms: u64) -> String {
    format!(
        "{} is outside {} ..= {} for one sync slot; write e.g. \"1 s\"",
        crate::units::fmt_millis(ms),
        crate::units::fmt_millis(MIN_SLOT_MS),
        crate::units::fmt_millis(MAX_SLOT_MS)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn barker_13_is_the_sync_code() {
        assert_eq!(SYNC_CODE.len(), 13);
        // Aperiodic autocorrelation: 13 at lag 0, |side lobe| <= 1 everywhere else.
        let v: Vec<i32> = SYNC_CODE
            .chars()
            .map(|c| if c == '1' { 1 } else { -1 })
            .collect();
        for lag in 0..v.len() {
            let r: i32 = (0..v.len() - lag).map(|i| v[i] * v[i + lag]).sum();
            if lag == 0 {
                assert_eq!(r, 13);
            } else {
                assert!(r.abs() <= 1, "lag {lag}: {r}");
            }
        }
    }

    #[test]
    fn estimates_count_two_patterns_and_one_idle_per_link() {
        // 2 x 13 x 1 s + (1 + 2) x 30 s.
        assert_eq!(EnergyPlan::HARDWARE.estimate_ms(2), 26_000 + 90_000);
        // 2 x 13 x 0.25 s + 1 x 0.5 s.
        assert_eq!(EnergyPlan::QEMU.estimate_ms(0), 6_500 + 500);
        assert_eq!(EnergyPlan::OFF.estimate_ms(3), 0);
        let no_idle = EnergyPlan {
            idle_ms: 0,
            ..EnergyPlan::HARDWARE
        };
        assert_eq!(no_idle.estimate_ms(5), 26_000);
        assert!(!no_idle.is_off());
        assert!(EnergyPlan::OFF.is_off());
    }

    #[test]
    fn bounds_are_checked() {
        assert_eq!(EnergyPlan::HARDWARE.check(), Ok(()));
        assert_eq!(EnergyPlan::QEMU.check(), Ok(()));
        let long = EnergyPlan {
            idle_ms: MAX_IDLE_MS + 1,
            ..EnergyPlan::HARDWARE
        };
        assert_eq!(long.check().unwrap_err().0, "energy.idle_ms");
        for slot_ms in [0, 99, 10_001] {
            let p = EnergyPlan {
                slot_ms,
                ..EnergyPlan::HARDWARE
            };
            assert_eq!(p.check().unwrap_err().0, "energy.slot_ms", "{slot_ms}");
        }
        for slot_ms in [100, 10_000] {
            let p = EnergyPlan {
                slot_ms,
                ..EnergyPlan::HARDWARE
            };
            assert_eq!(p.check(), Ok(()));
        }
    }

    #[test]
    fn older_plans_read_as_off() {
        let p: EnergyPlan = serde_json::from_str(r#"{"idle_ms":5,"sync":true,"slot_ms":200}"#)
            .expect("a plan's energy");
        assert_eq!(p.sensor, None);
        assert_eq!(EnergyPlan::default(), EnergyPlan::OFF);
    }
}
