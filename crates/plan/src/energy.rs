//! The energy marks of a plan ([`EnergyPlan`]): the idle phases and the busy/idle sync
//! patterns PID 1 runs so a power trace taken by a meter on the host can be aligned with
//! the run's steps (by a power signature, or by the console lines' arrival) and an idle
//! baseline subtracted, and the on-board sensor it may read itself ([`Sensor`]). Plan
//! file `[energy]` ([`crate::file::EnergySection`]).

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
    /// An on-board power sensor PID 1 samples itself from the start of the run, as the
    /// plan file names it ([`Sensor::parse`]: `axp20x-usb`, `ina226 i2c-1 0x40 0.1ohm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensor: Option<String>,
}

/// How often PID 1 reads an on-board sensor: every 250 ms, ms (4 readings a second: 120
/// in a 30 s idle phase, 4 in a 1 s sync slot; the AXP209's ADC updates at 25 Hz by
/// default, an INA226 at its 1.1 ms conversion time).
pub const ONBOARD_PERIOD_MS: u64 = 250;

/// Most on-board samples a run keeps: 57,600 (4 hours at [`ONBOARD_PERIOD_MS`]; about
/// 2 MiB of the results document, written at every save). The sampler stops there and
/// says so.
pub const MAX_ONBOARD_SAMPLES: usize = 57_600;

/// An on-board power sensor, as a plan file names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sensor {
    /// `axp20x-usb`: the AXP20x PMIC's USB input (Banana Pi M1), through the kernel's
    /// power-supply class: `/sys/class/power_supply/axp20x-usb/{voltage_now,current_now}`.
    Axp20xUsb,
    /// `ina219|ina226 i2c-<bus> 0x<address> <shunt>ohm`: a TI current monitor on
    /// `/dev/i2c-<bus>` at a 7-bit address, its shunt in µΩ.
    Ina2xx {
        /// `true`: INA226; `false`: INA219.
        ina226: bool,
        bus: u8,
        address: u8,
        shunt_uohm: u64,
    },
}

/// The power-supply class folder of [`Sensor::Axp20xUsb`].
pub const AXP20X_USB_DIR: &str = "/sys/class/power_supply/axp20x-usb";

impl Sensor {
    /// Parses a plan's sensor text: `axp20x-usb`, or `ina226 i2c-1 0x40 0.1ohm`
    /// (chip `ina219` or `ina226`; bus `i2c-<n>`, n 0..=255; a 7-bit address
    /// `0x03`..=`0x77`, hex; the shunt in ohms, `0.1ohm`, or milliohms, `100mohm`,
    /// 1 µΩ ..= 1 kΩ). Words are separated by blanks.
    ///
    /// # Errors
    /// What is wrong with which word, and what to write.
    pub fn parse(text: &str) -> Result<Sensor, String> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let form = "write `axp20x-usb`, or `ina226 i2c-1 0x40 0.1ohm` (chip, bus, address, shunt)";
        match words.as_slice() {
            ["axp20x-usb"] => Ok(Sensor::Axp20xUsb),
            [chip, bus, address, shunt] => {
                let ina226 = match *chip {
                    "ina226" => true,
                    "ina219" => false,
                    other => {
                        return Err(format!(
                            "`{other}` is no sensor this init reads: ina219 or ina226"
                        ))
                    }
                };
                let bus = bus
                    .strip_prefix("i2c-")
                    .and_then(|n| n.parse::<u8>().ok())
                    .ok_or_else(|| format!("`{bus}` is no I2C bus: write i2c-<n>, e.g. i2c-1"))?;
                let address = address
                    .strip_prefix("0x")
                    .and_then(|a| u8::from_str_radix(a, 16).ok())
                    .filter(|a| (0x03..=0x77).contains(a))
                    .ok_or_else(|| {
                        format!(
                            "`{address}` is no 7-bit I2C address: write 0x03 ..= 0x77, e.g. 0x40"
                        )
                    })?;
                let shunt_uohm = parse_shunt(shunt).ok_or_else(|| {
                    format!(
                        "`{shunt}` is no shunt resistance: write it in ohm or mohm, e.g. 0.1ohm                          or 100mohm (1 µΩ ..= 1 kΩ)"
                    )
                })?;
                Ok(Sensor::Ina2xx {
                    ina226,
                    bus,
                    address,
                    shunt_uohm,
                })
            }
            _ => Err(format!("`{text}`: {form}")),
        }
    }

    /// The device file PID 1 reads: the power-supply folder, or `/dev/i2c-<bus>`.
    pub fn path(&self) -> String {
        match self {
            Sensor::Axp20xUsb => AXP20X_USB_DIR.into(),
            Sensor::Ina2xx { bus, .. } => format!("/dev/i2c-{bus}"),
        }
    }
}

impl std::fmt::Display for Sensor {
    /// The text [`Sensor::parse`] reads back: `axp20x-usb`, `ina226 i2c-1 0x40 0.1ohm`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Sensor::Axp20xUsb => f.write_str("axp20x-usb"),
            Sensor::Ina2xx {
                ina226,
                bus,
                address,
                shunt_uohm,
            } => {
                let chip = if *ina226 { "ina226" } else { "ina219" };
                let whole = shunt_uohm / 1_000_000;
                let frac = shunt_uohm % 1_000_000;
                let ohm = if frac == 0 {
                    format!("{whole}")
                } else {
                    format!("{whole}.{}", format!("{frac:06}").trim_end_matches('0'))
                };
                write!(f, "{chip} i2c-{bus} 0x{address:02x} {ohm}ohm")
            }
        }
    }
}

/// `0.1ohm`, `100mohm`, `2 ohm` (no blank inside: the words are split on blanks) to µΩ:
/// a decimal with at most 6 places (ohm) or 3 (mohm), 1 ..= 10^9 µΩ.
fn parse_shunt(text: &str) -> Option<u64> {
    let (number, scale_places): (&str, u32) = if let Some(n) = text.strip_suffix("mohm") {
        (n, 3)
    } else {
        (text.strip_suffix("ohm")?, 6)
    };
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && frac.is_empty() {
        return None;
    }
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(frac) || frac.len() > scale_places as usize || whole.len() > 9 {
        return None;
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let frac_value: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    let scale = 10u64.pow(scale_places);
    let frac_scaled = frac_value * 10u64.pow(scale_places - frac.len() as u32);
    // 10^6 per ohm, 10^3 per milliohm: µΩ either way.
    let uohm = whole.checked_mul(scale)?.checked_add(frac_scaled)?;
    (1..=1_000_000_000).contains(&uohm).then_some(uohm)
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

    /// True when PID 1 runs no idle phase, no sync pattern and reads no sensor.
    pub fn is_off(&self) -> bool {
        self.idle_ms == 0 && !self.sync && self.sensor.is_none()
    }

    /// Length of one sync pattern, ms (0 when `sync` is off).
    pub fn pattern_ms(&self) -> u64 {
        if self.sync {
            (SYNC_CODE.len() as u64).saturating_mul(self.slot_ms)
        } else {
            0
        }
    }

    /// The time these marks add to a run with `links` measured links, ms: two
    /// patterns, the `radios-off` idle phase and one idle phase per link.
    pub fn estimate_ms(&self, links: u64) -> u64 {
        let phases = if self.idle_ms > 0 { 1 + links } else { 0 };
        self.pattern_ms()
            .saturating_mul(2)
            .saturating_add(phases.saturating_mul(self.idle_ms))
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
        if let Some(s) = &self.sensor {
            Sensor::parse(s).map_err(|e| ("energy.sensor", e))?;
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
    fn sensors_parse_and_print_back() {
        assert_eq!(Sensor::parse("axp20x-usb"), Ok(Sensor::Axp20xUsb));
        assert_eq!(
            Sensor::Axp20xUsb.path(),
            "/sys/class/power_supply/axp20x-usb"
        );
        let ina = Sensor::parse("ina226 i2c-1 0x40 0.1ohm").unwrap();
        assert_eq!(
            ina,
            Sensor::Ina2xx {
                ina226: true,
                bus: 1,
                address: 0x40,
                shunt_uohm: 100_000
            }
        );
        assert_eq!(ina.to_string(), "ina226 i2c-1 0x40 0.1ohm");
        assert_eq!(ina.path(), "/dev/i2c-1");
        let ina = Sensor::parse("  ina219\ti2c-0   0x45 100mohm ").unwrap();
        assert_eq!(ina.to_string(), "ina219 i2c-0 0x45 0.1ohm");
        for (text, uohm) in [
            ("2ohm", 2_000_000),
            ("0.000001ohm", 1),
            (".5ohm", 500_000),
            ("2.5mohm", 2_500),
            ("1000ohm", 1_000_000_000),
        ] {
            let s = Sensor::parse(&format!("ina226 i2c-2 0x40 {text}")).unwrap();
            assert!(
                matches!(s, Sensor::Ina2xx { shunt_uohm, .. } if shunt_uohm == uohm),
                "{text}: {s:?}"
            );
            assert_eq!(Sensor::parse(&s.to_string()), Ok(s), "{text}");
        }
    }

    #[test]
    fn bad_sensors_say_what_to_write() {
        for (text, says) in [
            ("", "axp20x-usb"),
            ("axp20x", "axp20x-usb"),
            ("ina3221 i2c-1 0x40 0.1ohm", "ina219 or ina226"),
            ("ina226 i2c1 0x40 0.1ohm", "i2c-<n>"),
            ("ina226 i2c-256 0x40 0.1ohm", "i2c-<n>"),
            ("ina226 i2c-1 40 0.1ohm", "7-bit"),
            ("ina226 i2c-1 0x78 0.1ohm", "7-bit"),
            ("ina226 i2c-1 0x02 0.1ohm", "7-bit"),
            ("ina226 i2c-1 0x40 0.1", "shunt"),
            ("ina226 i2c-1 0x40 0ohm", "shunt"),
            ("ina226 i2c-1 0x40 0.0000001ohm", "shunt"),
            ("ina226 i2c-1 0x40 1001ohm", "shunt"),
            ("ina226 i2c-1 0x40 -1ohm", "shunt"),
            ("ina226 i2c-1 0x40 .ohm", "shunt"),
            ("ina226 i2c-1 0x40 99999999999999999999ohm", "shunt"),
            ("ina226 i2c-1 0x40 0.1ohm extra", "axp20x-usb"),
        ] {
            let e = Sensor::parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
        let p = EnergyPlan {
            sensor: Some("ina226 i2c-1 0x40".into()),
            ..EnergyPlan::HARDWARE
        };
        assert_eq!(p.check().unwrap_err().0, "energy.sensor");
        let sensor_only = EnergyPlan {
            sensor: Some("axp20x-usb".into()),
            ..EnergyPlan::OFF
        };
        assert!(!sensor_only.is_off());
        assert_eq!(sensor_only.check(), Ok(()));
    }

    #[test]
    fn older_plans_read_as_off() {
        let p: EnergyPlan = serde_json::from_str(r#"{"idle_ms":5,"sync":true,"slot_ms":200}"#)
            .expect("a plan's energy");
        assert_eq!(p.sensor, None);
        assert_eq!(EnergyPlan::default(), EnergyPlan::OFF);
    }
}
