//! Which health facts a board gave, per fact: real (and from which source) or unknown
//! (and why), over every snapshot of a run ([`health_facts`]).
//!
//! Debian's kernels have no `/dev/vcio` (a Raspberry Pi downstream driver; benchboot's
//! own `benchboot_vcio` module gives it to boards whose file sets `modules.vcio`), so
//! without it the firmware's flags and clocks are never read; what the upstream kernel exposes
//! instead is raspberrypi-hwmon's under-voltage alarm (built only in the rpi flavour:
//! `CONFIG_SENSORS_RASPBERRYPI_HWMON=m` in config-6.1.0-50-rpi, not set in -armmp and
//! -arm64), thermal zones and cpufreq. A report must say which is which.

use serde::{Deserialize, Serialize};

use super::{Health, Reading};

/// One fact the health snapshots carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HealthFact {
    /// The supply sagged: the firmware's flag word (bits 0/16) or raspberrypi-hwmon's
    /// `in0_lcrit_alarm`.
    UnderVoltage,
    /// The firmware's whole flag word: throttling, frequency capping, soft temperature
    /// limit (mailbox `GET_THROTTLED` only).
    ThrottleFlags,
    /// The ARM clock the firmware measured (mailbox only), Hz.
    ArmClockMeasured,
    /// cpufreq's current CPU 0 frequency, kHz.
    Cpufreq,
    /// cpufreq's highest CPU 0 frequency (`cpuinfo_max_freq`), kHz.
    CpufreqMax,
    /// cpufreq's governor.
    Governor,
    /// The SoC temperature, millidegrees Celsius.
    Temperature,
}

impl HealthFact {
    /// Every fact, in report order.
    pub const ALL: [HealthFact; 7] = [
        HealthFact::UnderVoltage,
        HealthFact::ThrottleFlags,
        HealthFact::ArmClockMeasured,
        HealthFact::Cpufreq,
        HealthFact::CpufreqMax,
        HealthFact::Governor,
        HealthFact::Temperature,
    ];

    /// How a report names it.
    pub fn label(self) -> &'static str {
        match self {
            HealthFact::UnderVoltage => "under-voltage",
            HealthFact::ThrottleFlags => "throttle flags",
            HealthFact::ArmClockMeasured => "CPU clock (firmware measured)",
            HealthFact::Cpufreq => "cpufreq clock",
            HealthFact::CpufreqMax => "cpufreq max clock",
            HealthFact::Governor => "governor",
            HealthFact::Temperature => "temperature",
        }
    }
}

/// Whether a fact was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum FactStatus {
    /// Read from `source` in at least one snapshot (the first such source).
    Real { source: String },
    /// No snapshot had it; `why` is the first snapshot's reason.
    Unknown { why: String },
}

/// One fact and its status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactState {
    pub fact: HealthFact,
    #[serde(flatten)]
    pub status: FactStatus,
}

impl FactState {
    /// `under-voltage: real (/sys/class/hwmon/hwmon1/in0_lcrit_alarm)` or
    /// `under-voltage: unknown: <why>`.
    pub fn line(&self) -> String {
        match &self.status {
            FactStatus::Real { source } => format!("{}: real ({source})", self.fact.label()),
            FactStatus::Unknown { why } => format!("{}: unknown: {why}", self.fact.label()),
        }
    }

    /// True when the fact was read.
    pub fn is_real(&self) -> bool {
        matches!(self.status, FactStatus::Real { .. })
    }
}

fn first<'a, T: 'a>(readings: impl Iterator<Item = &'a Reading<T>> + Clone) -> FactStatus {
    if let Some(source) = readings.clone().find_map(Reading::source) {
        return FactStatus::Real {
            source: source.to_owned(),
        };
    }
    let why = readings
        .map(|r| match r {
            Reading::Unavailable { reason } => reason.clone(),
            Reading::Ok { .. } => String::new(),
        })
        .next()
        .unwrap_or_else(|| "no health snapshot was taken".into());
    FactStatus::Unknown { why }
}

/// Every [`HealthFact`] over `snapshots`: real when any snapshot read it.
/// Under-voltage is real from the firmware's flag word or from raspberrypi-hwmon's
/// alarm; unknown, it gives the alarm's reason (PID 1 writes there why neither
/// source exists: [`under_voltage_unknown`]).
pub fn health_facts<'a>(snapshots: impl IntoIterator<Item = &'a Health>) -> Vec<FactState> {
    let snaps: Vec<&Health> = snapshots.into_iter().collect();
    let it = snaps.iter();
    HealthFact::ALL
        .into_iter()
        .map(|fact| {
            let status = match fact {
                HealthFact::UnderVoltage => match first(it.clone().map(|h| &h.throttled)) {
                    real @ FactStatus::Real { .. } => real,
                    FactStatus::Unknown { .. } => first(it.clone().map(|h| &h.under_voltage_alarm)),
                },
                HealthFact::ThrottleFlags => first(it.clone().map(|h| &h.throttled)),
                HealthFact::ArmClockMeasured => first(it.clone().map(|h| &h.arm_measured_hz)),
                HealthFact::Cpufreq => first(it.clone().map(|h| &h.cpufreq_khz)),
                HealthFact::CpufreqMax => first(it.clone().map(|h| &h.cpufreq_max_khz)),
                HealthFact::Governor => first(it.clone().map(|h| &h.governor)),
                HealthFact::Temperature => first(it.clone().map(|h| &h.temperature_millicelsius)),
            };
            FactState { fact, status }
        })
        .collect()
}

/// `text` with every control character escaped (`\u{1b}`), so that text from a board
/// (a zone's type, the device tree's strings, a document) reaches a terminal inert.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Debian's kernel flavour of a `uname -r` (`6.1.0-50-arm64` → `arm64`): the text
/// after the ABI number, `None` for another kernel's release.
pub fn debian_flavour(release: &str) -> Option<&str> {
    let mut parts = release.splitn(3, '-');
    let (_version, abi, flavour) = (parts.next()?, parts.next()?, parts.next()?);
    (abi.bytes().all(|b| b.is_ascii_digit()) && !abi.is_empty()).then_some(flavour)
}

/// Why under-voltage is unknown on this board, once neither raspberrypi-hwmon
/// (`hwmon_why`) nor the firmware mailbox (`vcio_why`) answered: `release` is
/// `uname -r`, `compatible` the device tree root's `compatible` strings.
/// - not a Raspberry Pi: no firmware flags supply sag on it;
/// - a Debian flavour without raspberrypi-hwmon (armmp, arm64: its config has
///   `CONFIG_SENSORS_RASPBERRYPI_HWMON` not set): the kernel cannot tell;
/// - the rpi flavour (`=m`): the driver exists but no `rpi_volt` device is bound.
pub fn under_voltage_unknown(
    release: &str,
    compatible: Option<&str>,
    hwmon_why: &str,
    vcio_why: &str,
) -> String {
    if let Some(c) = compatible {
        if !c.split(['\0', ' ']).any(|s| s.starts_with("raspberrypi,")) {
            let first = printable(c.split('\0').next().unwrap_or(c));
            return format!(
                "this board ({first}) has no Raspberry Pi firmware, the only source of an \
                 under-voltage flag benchboot reads"
            );
        }
    }
    match debian_flavour(release) {
        Some(f @ ("arm64" | "armmp" | "armmp-lpae")) => format!(
            "this kernel ({release}) has no raspberrypi-hwmon (CONFIG_SENSORS_RASPBERRYPI_HWMON \
             is not set in Debian's {f} flavour) and no /dev/vcio (Debian has no vcio driver; \
             benchboot_vcio gives one to boards whose file sets modules.vcio)"
        ),
        Some("rpi") => format!(
            "this kernel ({release}) builds raspberrypi-hwmon as a module, but no rpi_volt \
             hwmon device is bound ({hwmon_why}); and no /dev/vcio"
        ),
        _ => format!("{hwmon_why}; {vcio_why}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::Throttled;

    fn debian_arm64_pi4() -> Health {
        // What a Pi 4 on Debian's arm64 kernel gives: cpufreq and the thermal zone,
        // no vcio, no hwmon.
        Health {
            arm_measured_hz: Reading::unavailable("/dev/vcio: No such file or directory"),
            arm_set_hz: Reading::unavailable("/dev/vcio: No such file or directory"),
            core_measured_hz: Reading::unavailable("/dev/vcio: No such file or directory"),
            cpufreq_khz: Reading::ok(
                1_500_000,
                "/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
            ),
            cpufreq_max_khz: Reading::ok(
                1_500_000,
                "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",
            ),
            governor: Reading::ok(
                "performance".into(),
                "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            ),
            temperature_millicelsius: Reading::ok(
                45_277,
                "/sys/class/thermal/thermal_zone0/temp (cpu-thermal)",
            ),
            throttled: Reading::unavailable("/dev/vcio: No such file or directory"),
            under_voltage_alarm: Reading::unavailable(under_voltage_unknown(
                "6.1.0-50-arm64",
                Some("raspberrypi,4-model-b\0brcm,bcm2711\0"),
                "no hwmon device named rpi_volt",
                "/dev/vcio: No such file or directory",
            )),
            ..Health::default()
        }
    }

    #[test]
    fn a_pi_4_on_debians_arm64_kernel_knows_clock_and_temperature_not_the_supply() {
        let h = debian_arm64_pi4();
        let facts = health_facts([&h, &h]);
        let lines: Vec<String> = facts.iter().map(FactState::line).collect();
        assert_eq!(
            lines,
            [
                "under-voltage: unknown: this kernel (6.1.0-50-arm64) has no raspberrypi-hwmon \
                 (CONFIG_SENSORS_RASPBERRYPI_HWMON is not set in Debian's arm64 flavour) and no \
                 /dev/vcio (Debian has no vcio driver; benchboot_vcio gives one to boards \
                 whose file sets modules.vcio)",
                "throttle flags: unknown: /dev/vcio: No such file or directory",
                "CPU clock (firmware measured): unknown: /dev/vcio: No such file or directory",
                "cpufreq clock: real (/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq)",
                "cpufreq max clock: real (/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq)",
                "governor: real (/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor)",
                "temperature: real (/sys/class/thermal/thermal_zone0/temp (cpu-thermal))",
            ]
        );
    }

    #[test]
    fn under_voltage_is_real_from_hwmon_or_the_firmware_in_any_snapshot() {
        let none = debian_arm64_pi4();
        let hwmon = Health {
            under_voltage_alarm: Reading::ok(false, "/sys/class/hwmon/hwmon1/in0_lcrit_alarm"),
            ..debian_arm64_pi4()
        };
        // The driver bound late: the second snapshot has it.
        let f = health_facts([&none, &hwmon]);
        assert_eq!(
            f[0].status,
            FactStatus::Real {
                source: "/sys/class/hwmon/hwmon1/in0_lcrit_alarm".into()
            }
        );
        assert!(!f[1].is_real(), "hwmon gives no throttle word");
        let fw = Health {
            throttled: Reading::ok(Throttled::from_raw(0), "mailbox:GET_THROTTLED"),
            ..hwmon.clone()
        };
        let f = health_facts([&fw]);
        assert_eq!(
            f[0].line(),
            "under-voltage: real (mailbox:GET_THROTTLED)",
            "the firmware's word first"
        );
        assert!(f[1].is_real());
        // No snapshot at all: every fact unknown, saying so.
        let f = health_facts([]);
        assert!(f.iter().all(|s| s.status
            == FactStatus::Unknown {
                why: "no health snapshot was taken".into()
            }));
    }

    #[test]
    fn why_under_voltage_is_unknown_names_the_kernel_or_the_board() {
        let pi = Some("raspberrypi,3-model-b\0brcm,bcm2837\0");
        let armmp = under_voltage_unknown("6.1.0-50-armmp", pi, "h", "v");
        assert!(
            armmp.contains("this kernel (6.1.0-50-armmp) has no raspberrypi-hwmon"),
            "{armmp}"
        );
        let rpi = under_voltage_unknown(
            "6.1.0-50-rpi",
            Some("raspberrypi,model-zero-w\0brcm,bcm2835\0"),
            "no hwmon device named rpi_volt in /sys/class/hwmon",
            "v",
        );
        assert!(
            rpi.contains("builds raspberrypi-hwmon as a module"),
            "{rpi}"
        );
        assert!(rpi.contains("no hwmon device named rpi_volt"), "{rpi}");
        let bbb = under_voltage_unknown(
            "6.1.0-50-armmp",
            Some("ti,am335x-bone-black\0ti,am335x-bone\0ti,am33xx\0"),
            "h",
            "v",
        );
        assert_eq!(
            bbb,
            "this board (ti,am335x-bone-black) has no Raspberry Pi firmware, the only source \
             of an under-voltage flag benchboot reads"
        );
        let odd = under_voltage_unknown("6.1.0-50-armmp", Some("evil\x1b[2J\0x"), "h", "v");
        assert!(odd.contains("(evil\\u{1b}[2J)"), "{odd}");
        // Not a Debian kernel, no device tree: both reasons as they are.
        assert_eq!(under_voltage_unknown("6.6.1", None, "h", "v"), "h; v");
        assert_eq!(debian_flavour("6.1.0-50-armmp-lpae"), Some("armmp-lpae"));
        assert_eq!(debian_flavour("6.1.0-rc1"), None);
    }

    #[test]
    fn fact_states_serialise_flat() {
        let s = FactState {
            fact: HealthFact::UnderVoltage,
            status: FactStatus::Unknown { why: "w".into() },
        };
        let j = serde_json::to_string(&s).unwrap();
        assert_eq!(
            j,
            r#"{"fact":"under-voltage","status":"unknown","why":"w"}"#
        );
        assert_eq!(serde_json::from_str::<FactState>(&j).unwrap(), s);
    }
}
