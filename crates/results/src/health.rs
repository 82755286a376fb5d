//! Board health around every test: CPU clock, SoC temperature and the firmware's
//! throttle / under-voltage flags, read before and after each step ([`StepHealth`]).
//!
//! Every value says where it came from; a value no source could give is recorded as
//! [`Reading::Unavailable`] with the reason, never invented. Units are in the field
//! names: Hz, kHz (cpufreq's unit), millidegrees Celsius.
//!
//! The flag word is the one of the firmware's `GET_THROTTLED` mailbox property (tag
//! 0x00030046, the same word `vcgencmd get_throttled` prints); its bits, from the
//! Raspberry Pi documentation ("vcgencmd", `get_throttled`,
//! raspberrypi.com/documentation/computers/os.html#get_throttled):
//!
//! | bit | meaning |
//! |---|---|
//! | 0 | under-voltage detected |
//! | 1 | ARM frequency capped |
//! | 2 | currently throttled |
//! | 3 | soft temperature limit active |
//! | 16 | under-voltage has occurred |
//! | 17 | ARM frequency capping has occurred |
//! | 18 | throttling has occurred |
//! | 19 | soft temperature limit has occurred |
//!
//! Bits 16-19 are sticky "since boot" flags, unless something asks the firmware to
//! reset them: Linux's raspberrypi-hwmon driver does so every 2 s (it sends 0xffff as
//! the request value, drivers/hwmon/raspberrypi-hwmon.c), so with that driver loaded
//! they mean "since the driver's last poll".

use benchboot_plan::Mode;
use serde::{Deserialize, Serialize};

use crate::RandomOp;

pub mod facts;
pub mod sysfs;

pub use facts::{health_facts, FactState, FactStatus, HealthFact};

/// One value and its source, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum Reading<T> {
    /// Read from `source` (a sysfs path, or `mailbox:<TAG>` for the firmware).
    Ok { value: T, source: String },
    /// No source gave a value; `reason` names what was tried and what failed.
    Unavailable { reason: String },
}

impl<T> Reading<T> {
    /// A value read from `source`.
    pub fn ok(value: T, source: impl Into<String>) -> Reading<T> {
        Reading::Ok {
            value,
            source: source.into(),
        }
    }

    /// No value, for `reason`.
    pub fn unavailable(reason: impl Into<String>) -> Reading<T> {
        Reading::Unavailable {
            reason: reason.into(),
        }
    }

    /// The value, if there is one.
    pub fn value(&self) -> Option<&T> {
        match self {
            Reading::Ok { value, .. } => Some(value),
            Reading::Unavailable { .. } => None,
        }
    }

    /// Where the value came from, if there is one.
    pub fn source(&self) -> Option<&str> {
        match self {
            Reading::Ok { source, .. } => Some(source),
            Reading::Unavailable { .. } => None,
        }
    }
}

impl<T> Default for Reading<T> {
    fn default() -> Reading<T> {
        Reading::unavailable("not recorded")
    }
}

/// A condition the firmware flags (each has a "now" and a "has occurred" bit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Condition {
    UnderVoltage,
    FrequencyCapped,
    Throttled,
    SoftTempLimit,
}

impl Condition {
    /// Every condition, in bit order.
    pub const ALL: [Condition; 4] = [
        Condition::UnderVoltage,
        Condition::FrequencyCapped,
        Condition::Throttled,
        Condition::SoftTempLimit,
    ];

    /// `under-voltage`, `frequency-capped`, `throttled`, `soft-temp-limit`.
    pub fn name(self) -> &'static str {
        match self {
            Condition::UnderVoltage => "under-voltage",
            Condition::FrequencyCapped => "frequency-capped",
            Condition::Throttled => "throttled",
            Condition::SoftTempLimit => "soft-temp-limit",
        }
    }

    /// The "now" bit of the flag word; the "has occurred" bit is 16 above it.
    pub fn bit(self) -> u32 {
        match self {
            Condition::UnderVoltage => 0,
            Condition::FrequencyCapped => 1,
            Condition::Throttled => 2,
            Condition::SoftTempLimit => 3,
        }
    }
}

/// The firmware's throttle flags, decoded (see the module docs for the bit layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Throttled {
    /// The word as the firmware returned it.
    pub raw: u32,
    /// Bit 0.
    pub under_voltage_now: bool,
    /// Bit 1.
    pub frequency_capped_now: bool,
    /// Bit 2.
    pub throttled_now: bool,
    /// Bit 3.
    pub soft_temp_limit_now: bool,
    /// Bit 16.
    pub under_voltage_occurred: bool,
    /// Bit 17.
    pub frequency_capped_occurred: bool,
    /// Bit 18.
    pub throttled_occurred: bool,
    /// Bit 19.
    pub soft_temp_limit_occurred: bool,
}

/// Bits of the flag word that mean something (0-3 and 16-19).
pub const THROTTLE_KNOWN_BITS: u32 = 0x000f_000f;

impl Throttled {
    /// Decodes the `GET_THROTTLED` word. Bits outside 0-3 and 16-19 are kept in `raw` only.
    pub fn from_raw(raw: u32) -> Throttled {
        let bit = |n: u32| raw & (1 << n) != 0;
        Throttled {
            raw,
            under_voltage_now: bit(0),
            frequency_capped_now: bit(1),
            throttled_now: bit(2),
            soft_temp_limit_now: bit(3),
            under_voltage_occurred: bit(16),
            frequency_capped_occurred: bit(17),
            throttled_occurred: bit(18),
            soft_temp_limit_occurred: bit(19),
        }
    }

    /// Whether `c` is flagged right now.
    pub fn is_now(&self, c: Condition) -> bool {
        match c {
            Condition::UnderVoltage => self.under_voltage_now,
            Condition::FrequencyCapped => self.frequency_capped_now,
            Condition::Throttled => self.throttled_now,
            Condition::SoftTempLimit => self.soft_temp_limit_now,
        }
    }

    /// Whether `c` has occurred (since boot, or since the last reset of the sticky bits).
    pub fn has_occurred(&self, c: Condition) -> bool {
        match c {
            Condition::UnderVoltage => self.under_voltage_occurred,
            Condition::FrequencyCapped => self.frequency_capped_occurred,
            Condition::Throttled => self.throttled_occurred,
            Condition::SoftTempLimit => self.soft_temp_limit_occurred,
        }
    }

    /// The conditions flagged now, in bit order.
    pub fn now(&self) -> Vec<Condition> {
        Condition::ALL
            .into_iter()
            .filter(|&c| self.is_now(c))
            .collect()
    }

    /// The conditions that have occurred, in bit order.
    pub fn occurred(&self) -> Vec<Condition> {
        Condition::ALL
            .into_iter()
            .filter(|&c| self.has_occurred(c))
            .collect()
    }

    /// True when no flag is set.
    pub fn is_clear(&self) -> bool {
        self.now().is_empty() && self.occurred().is_empty()
    }
}

/// The board's state at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Health {
    /// CLOCK_BOOTTIME when the snapshot was taken, ns.
    pub at_ns: u64,
    /// ARM clock as the firmware measures it (mailbox `GET_CLOCK_RATE_MEASURED`, clock
    /// 3), Hz: the clock the CPU really ran at, throttling included.
    pub arm_measured_hz: Reading<u64>,
    /// ARM clock the firmware has set (mailbox `GET_CLOCK_RATE`, clock 3), Hz.
    pub arm_set_hz: Reading<u64>,
    /// VideoCore core clock as measured (mailbox `GET_CLOCK_RATE_MEASURED`, clock 4), Hz.
    pub core_measured_hz: Reading<u64>,
    /// cpufreq's current frequency of CPU 0, kHz: `cpuinfo_cur_freq` (asked of the
    /// driver) where present, else `scaling_cur_freq`. On Raspberry Pis it can show
    /// the unthrottled clock; `arm_measured_hz` tells the truth.
    pub cpufreq_khz: Reading<u64>,
    /// cpufreq's highest frequency of CPU 0 (`cpuinfo_max_freq`), kHz: what the
    /// current one falls short of when the board is capped (schema 1.11; "not
    /// recorded" before).
    #[serde(default)]
    pub cpufreq_max_khz: Reading<u64>,
    /// cpufreq governor of CPU 0 in effect.
    pub governor: Reading<String>,
    /// SoC temperature, millidegrees Celsius (a thermal zone, else the mailbox's
    /// `GET_TEMPERATURE`).
    pub temperature_millicelsius: Reading<i64>,
    /// The firmware's throttle flags (mailbox `GET_THROTTLED`).
    pub throttled: Reading<Throttled>,
    /// Linux raspberrypi-hwmon's under-voltage alarm (`in0_lcrit_alarm` of the
    /// `rpi_volt` hwmon device: bit 16 of the flag word at the driver's last poll,
    /// every 2 s): the only flag Debian's kernels expose without `/dev/vcio`.
    pub under_voltage_alarm: Reading<bool>,
}

impl Health {
    /// The conditions flagged now: the firmware's "now" bits and the hwmon alarm.
    pub fn now(&self) -> Vec<Condition> {
        let mut v = self
            .throttled
            .value()
            .map(Throttled::now)
            .unwrap_or_default();
        if self.under_voltage_alarm.value() == Some(&true) && !v.contains(&Condition::UnderVoltage)
        {
            v.insert(0, Condition::UnderVoltage);
        }
        v
    }

    /// The CPU clock, Hz, and where it came from: the firmware's measurement where
    /// present, else cpufreq's.
    pub fn cpu_clock_hz(&self) -> Option<(u64, &str)> {
        match (&self.arm_measured_hz, &self.cpufreq_khz) {
            (Reading::Ok { value, source }, _) => Some((*value, source)),
            // Saturating: the kHz figure comes from outside input (a results document).
            (_, Reading::Ok { value, source }) => Some((value.saturating_mul(1000), source)),
            _ => None,
        }
    }
}

/// Which figures a step produced: the table cells its health applies to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum HealthScope {
    /// Every repetition, write and read, of one block size of one target in the mode the
    /// plan asked for (one row of a storage table column, both directions).
    Storage {
        target: String,
        mode: Mode,
        block_size: u64,
    },
    /// The cached and buffered reads of one disk (`device` as in [`crate::DeviceRead`]).
    DeviceRead { device: String },
    /// One random-I/O run.
    Random {
        target: String,
        op: RandomOp,
        queue_depth: u32,
    },
    /// The pattern verification of one target.
    Verify { target: String },
    /// The memory step, all of it (schema 1.9).
    Memory,
    /// One network test over `link`.
    Network {
        link: String,
        test: crate::counters::NetTest,
    },
}

/// The board's health before and after one step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepHealth {
    /// Step id as on the console and in events, e.g. `storage.ext4.sync.bs4096`.
    pub step: String,
    pub scope: HealthScope,
    pub before: Health,
    pub after: Health,
    /// The interrupts raised between the two snapshots, per source with a non-zero
    /// count, most first (`/proc/interrupts`; schema 1.4, "not recorded" before).
    #[serde(default)]
    pub interrupts: Reading<Vec<crate::InterruptDelta>>,
}

impl StepHealth {
    /// The conditions seen during the step: flagged "now" in either snapshot, raised
    /// ("has occurred" set after but not before) between them, or the hwmon alarm.
    pub fn during(&self) -> Vec<Condition> {
        let mut seen: Vec<Condition> = self.before.now();
        seen.extend(self.after.now());
        if let (Some(b), Some(a)) = (self.before.throttled.value(), self.after.throttled.value()) {
            seen.extend(
                Condition::ALL
                    .into_iter()
                    .filter(|&c| a.has_occurred(c) && !b.has_occurred(c)),
            );
        } else if let Some(a) = self.after.throttled.value() {
            // No word before the step: what "has occurred" after may be from this step.
            seen.extend(a.occurred());
        }
        seen.sort();
        seen.dedup();
        seen
    }

    /// The "has occurred" flags already set when the step began: the condition
    /// happened earlier (at boot or in an earlier step). A recurrence during this step
    /// shows only through a "now" flag, since the sticky bit stays set.
    pub fn earlier(&self) -> Vec<Condition> {
        self.before
            .throttled
            .value()
            .map(Throttled::occurred)
            .unwrap_or_default()
    }

    /// True when this step's figures cover `scope`.
    pub fn covers(&self, scope: &HealthScope) -> bool {
        &self.scope == scope
    }
}

/// The conditions seen during the step whose scope is `scope` (none when no step of
/// `health` has that scope).
pub fn conditions_during(health: &[StepHealth], scope: &HealthScope) -> Vec<Condition> {
    let mut v: Vec<Condition> = health
        .iter()
        .filter(|h| h.covers(scope))
        .flat_map(StepHealth::during)
        .collect();
    v.sort();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::{NetDirection, NetTest};

    /// Regression, found while writing fuzz/ results_json (which aborts on it): a cpufreq
    /// reading near `u64::MAX` kHz overflowed the conversion to Hz.
    #[test]
    fn huge_cpufreq_khz_saturates() {
        let h = Health {
            arm_measured_hz: Reading::unavailable("no mailbox"),
            cpufreq_khz: Reading::ok(u64::MAX / 10, "cpuinfo_cur_freq"),
            ..Health::default()
        };
        assert_eq!(h.cpu_clock_hz(), Some((u64::MAX, "cpuinfo_cur_freq")));
    }

    #[test]
    fn throttle_word_0x50005_is_under_voltage_and_throttled_now_and_since_boot() {
        let t = Throttled::from_raw(0x50005);
        assert_eq!(
            t,
            Throttled {
                raw: 0x50005,
                under_voltage_now: true,
                frequency_capped_now: false,
                throttled_now: true,
                soft_temp_limit_now: false,
                under_voltage_occurred: true,
                frequency_capped_occurred: false,
                throttled_occurred: true,
                soft_temp_limit_occurred: false,
            }
        );
        assert_eq!(t.now(), [Condition::UnderVoltage, Condition::Throttled]);
        assert_eq!(
            t.occurred(),
            [Condition::UnderVoltage, Condition::Throttled]
        );
        assert!(!t.is_clear());
    }

    #[test]
    fn throttle_word_0_is_clear() {
        let t = Throttled::from_raw(0);
        assert_eq!(t, Throttled::default());
        assert!(t.is_clear());
        assert!(t.now().is_empty() && t.occurred().is_empty());
    }

    #[test]
    fn every_documented_bit_has_its_own_flag() {
        // bit -> (condition, now?)
        let layout = [
            (0, Condition::UnderVoltage, true),
            (1, Condition::FrequencyCapped, true),
            (2, Condition::Throttled, true),
            (3, Condition::SoftTempLimit, true),
            (16, Condition::UnderVoltage, false),
            (17, Condition::FrequencyCapped, false),
            (18, Condition::Throttled, false),
            (19, Condition::SoftTempLimit, false),
        ];
        for (bit, c, now) in layout {
            let t = Throttled::from_raw(1 << bit);
            if now {
                assert_eq!(t.now(), [c], "bit {bit}");
                assert!(t.occurred().is_empty(), "bit {bit}");
                assert_eq!(c.bit(), bit);
            } else {
                assert!(t.now().is_empty(), "bit {bit}");
                assert_eq!(t.occurred(), [c], "bit {bit}");
                assert_eq!(c.bit() + 16, bit);
            }
        }
        // Undocumented bits stay in raw only.
        let t = Throttled::from_raw(0x0010_0100);
        assert!(t.is_clear());
        assert_eq!(t.raw & THROTTLE_KNOWN_BITS, 0);
    }

    fn snap(raw: Option<u32>, alarm: Option<bool>) -> Health {
        Health {
            throttled: raw.map_or_else(
                || Reading::unavailable("no /dev/vcio"),
                |w| Reading::ok(Throttled::from_raw(w), "mailbox:GET_THROTTLED"),
            ),
            under_voltage_alarm: alarm.map_or_else(
                || Reading::unavailable("no rpi_volt hwmon"),
                |a| Reading::ok(a, "/sys/class/hwmon/hwmon0/in0_lcrit_alarm"),
            ),
            ..Health::default()
        }
    }

    fn step(before: Health, after: Health) -> StepHealth {
        StepHealth {
            step: "storage.ext4.sync.bs4096".into(),
            scope: HealthScope::Storage {
                target: "ext4".into(),
                mode: Mode::Sync,
                block_size: 4096,
            },
            before,
            after,
            interrupts: Reading::default(),
        }
    }

    #[test]
    fn during_a_step_counts_now_flags_raised_sticky_flags_and_the_alarm() {
        // Nothing at all.
        assert!(step(snap(Some(0), None), snap(Some(0), None))
            .during()
            .is_empty());
        // Throttled since boot before the step and nothing new: earlier, not during.
        let s = step(snap(Some(0x40000), None), snap(Some(0x40000), None));
        assert!(s.during().is_empty());
        assert_eq!(s.earlier(), [Condition::Throttled]);
        // Capping happened during the step (sticky bit raised, no longer current).
        let s = step(snap(Some(0), None), snap(Some(0x20000), None));
        assert_eq!(s.during(), [Condition::FrequencyCapped]);
        // Under-voltage now at the end.
        let s = step(snap(Some(0), None), snap(Some(0x50005), None));
        assert_eq!(s.during(), [Condition::UnderVoltage, Condition::Throttled]);
        // Only the hwmon alarm (Debian kernel, no mailbox).
        let s = step(snap(None, Some(false)), snap(None, Some(true)));
        assert_eq!(s.during(), [Condition::UnderVoltage]);
        assert!(s.earlier().is_empty());
        // Nothing readable: nothing claimed.
        assert!(step(snap(None, None), snap(None, None)).during().is_empty());
    }

    #[test]
    fn readings_serialise_with_their_source_or_reason() {
        let r: Reading<u64> = Reading::ok(1_000_000, "mailbox:GET_CLOCK_RATE_MEASURED(ARM)");
        let j = serde_json::to_string(&r).unwrap();
        assert_eq!(
            j,
            r#"{"status":"ok","value":1000000,"source":"mailbox:GET_CLOCK_RATE_MEASURED(ARM)"}"#
        );
        let u: Reading<u64> = Reading::unavailable("/dev/vcio: No such file or directory");
        let j = serde_json::to_string(&u).unwrap();
        assert_eq!(
            j,
            r#"{"status":"unavailable","reason":"/dev/vcio: No such file or directory"}"#
        );
        assert_eq!(serde_json::from_str::<Reading<u64>>(&j).unwrap(), u);
    }

    #[test]
    fn scopes_serialise_tagged() {
        let s = HealthScope::Network {
            link: "ncm".into(),
            test: NetTest::Tcp {
                direction: NetDirection::BoardToHost,
                streams: 4,
            },
        };
        let j = serde_json::to_string(&s).unwrap();
        assert_eq!(
            j,
            r#"{"kind":"network","link":"ncm","test":{"kind":"tcp","direction":"board-to-host","streams":4}}"#
        );
        assert_eq!(serde_json::from_str::<HealthScope>(&j).unwrap(), s);
    }

    #[test]
    fn cpu_clock_prefers_the_firmware_measurement() {
        let mut h = Health {
            cpufreq_khz: Reading::ok(1_000_000, "cpufreq"),
            ..Health::default()
        };
        assert_eq!(h.cpu_clock_hz(), Some((1_000_000_000, "cpufreq")));
        h.arm_measured_hz = Reading::ok(700_000_000, "mailbox");
        assert_eq!(h.cpu_clock_hz(), Some((700_000_000, "mailbox")));
    }
}
