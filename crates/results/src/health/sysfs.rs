//! The text of the sysfs files health reads, parsed: hwmon alarms, thermal zones,
//! cpufreq frequencies. Pure (PID 1 reads the files: firmware/src/health.rs).
//!
//! - hwmon (Documentation/hwmon/sysfs-interface.rst): `in<N>_lcrit_alarm` is `0` or
//!   `1`. raspberrypi-hwmon names its device `rpi_volt` and has one attribute,
//!   `in0_lcrit_alarm`, the firmware's sticky under-voltage bit at its last 2 s poll
//!   (drivers/hwmon/raspberrypi-hwmon.c; Documentation/hwmon/raspberrypi-hwmon.rst).
//! - thermal (Documentation/driver-api/thermal/sysfs-api.rst):
//!   `/sys/class/thermal/thermal_zone<N>/temp` in millidegrees Celsius, `type` the
//!   zone's name (the device tree's thermal zone node name, e.g. `cpu-thermal`).
//! - cpufreq (Documentation/admin-guide/pm/cpufreq.rst): `scaling_cur_freq`,
//!   `cpuinfo_cur_freq`, `cpuinfo_max_freq` in kHz, `scaling_governor` a name.

/// The hwmon device raspberrypi-hwmon registers (`devm_hwmon_device_register_with_info`
/// name in drivers/hwmon/raspberrypi-hwmon.c).
pub const RPI_HWMON_NAME: &str = "rpi_volt";
/// Its under-voltage alarm attribute (hwmon `in` channel 0, `lcrit_alarm`).
pub const RPI_HWMON_ALARM: &str = "in0_lcrit_alarm";

/// Why a sysfs health file's text, or the thermal zones, gave no reading. The caller
/// prefixes the file it read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SysfsError {
    /// An alarm attribute other than `0` or `1` (the text, trimmed).
    #[error("not an alarm (0 or 1): {0:?}")]
    NotAlarm(String),
    /// A file that should hold a whole number does not (the text, trimmed).
    #[error("not a number: {0:?}")]
    NotNumber(String),
    /// `/sys/class/thermal` lists no zone.
    #[error("no thermal zone: no thermal sensor driver bound")]
    NoZone,
    /// No zone's `temp` reads: each zone's name, type and reason, in zone order.
    #[error("{}", .0.iter().map(|(zone, kind, why)| format!("{zone} ({kind}): {why}")).collect::<Vec<_>>().join("; "))]
    NoReadableZone(Vec<(String, String, String)>),
}

/// An alarm attribute's text (`0\n` / `1\n`).
///
/// # Errors
/// [`SysfsError::NotAlarm`]: anything else, quoted.
pub fn parse_alarm(text: &str) -> Result<bool, SysfsError> {
    match text.trim() {
        "0" => Ok(false),
        "1" => Ok(true),
        other => Err(SysfsError::NotAlarm(other.to_owned())),
    }
}

/// A whole number in a sysfs file (kHz, millidegrees).
///
/// # Errors
/// [`SysfsError::NotNumber`], quoted.
pub fn parse_number<T: std::str::FromStr>(text: &str) -> Result<T, SysfsError> {
    let t = text.trim();
    t.parse().map_err(|_| SysfsError::NotNumber(t.to_owned()))
}

/// One thermal zone as read: its directory name (`thermal_zone0`), `type`, and `temp`
/// parsed (or why not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThermalZone {
    pub zone: String,
    pub kind: String,
    pub temp: Result<i64, String>,
}

/// `thermal_zone12` → 12 (zones sort by number, not by name).
pub fn zone_number(zone: &str) -> Option<u32> {
    zone.strip_prefix("thermal_zone")?.parse().ok()
}

/// Types that name the SoC's or CPU's own sensor (the zones PID 1 prefers): the device
/// trees' `cpu-thermal` / `cpu_thermal`, `soc-thermal`, `soc_thermal`.
fn is_soc_zone(kind: &str) -> bool {
    let k = kind.to_ascii_lowercase();
    k.contains("cpu") || k.contains("soc")
}

/// The zone whose temperature is the SoC's: the lowest-numbered readable zone of a CPU
/// or SoC type, else the lowest-numbered readable zone.
///
/// # Errors
/// [`SysfsError::NoZone`], or [`SysfsError::NoReadableZone`] with each zone's reason.
pub fn soc_zone(zones: &[ThermalZone]) -> Result<&ThermalZone, SysfsError> {
    let mut sorted: Vec<&ThermalZone> = zones.iter().collect();
    sorted.sort_by_key(|z| (zone_number(&z.zone).unwrap_or(u32::MAX), z.zone.clone()));
    let readable = || sorted.iter().copied().filter(|z| z.temp.is_ok());
    if let Some(z) = readable()
        .find(|z| is_soc_zone(&z.kind))
        .or_else(|| readable().next())
    {
        return Ok(z);
    }
    if sorted.is_empty() {
        return Err(SysfsError::NoZone);
    }
    Err(SysfsError::NoReadableZone(
        sorted
            .iter()
            .filter_map(|z| {
                let why = z.temp.as_ref().err()?;
                Some((z.zone.clone(), z.kind.clone(), why.clone()))
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alarms_and_numbers_as_sysfs_prints_them() {
        assert_eq!(parse_alarm("0\n"), Ok(false));
        assert_eq!(parse_alarm("1\n"), Ok(true));
        assert_eq!(parse_alarm("7\n"), Err(SysfsError::NotAlarm("7".into())));
        assert_eq!(
            parse_alarm("7\n").unwrap_err().to_string(),
            "not an alarm (0 or 1): \"7\""
        );
        assert_eq!(parse_number::<u64>("1500000\n"), Ok(1_500_000));
        assert_eq!(parse_number::<i64>("-2500\n"), Ok(-2500));
        assert_eq!(
            parse_number::<i64>("n/a\n").unwrap_err().to_string(),
            "not a number: \"n/a\""
        );
    }

    fn zone(n: u32, kind: &str, temp: Result<i64, &str>) -> ThermalZone {
        ThermalZone {
            zone: format!("thermal_zone{n}"),
            kind: kind.into(),
            temp: temp.map_err(str::to_owned),
        }
    }

    #[test]
    fn the_soc_zone_is_the_cpus_when_there_are_several() {
        // An A20 with sun4i-ts and an AXP209 PMIC zone; the PMIC's registered first.
        let zones = [
            zone(1, "cpu-thermal", Ok(41_200)),
            zone(0, "axp20x-thermal", Ok(38_000)),
        ];
        assert_eq!(soc_zone(&zones).unwrap().zone, "thermal_zone1");
        // Zone 10 sorts after zone 2.
        let zones = [zone(10, "gpu", Ok(1)), zone(2, "board", Ok(2))];
        assert_eq!(soc_zone(&zones).unwrap().zone, "thermal_zone2");
        // The CPU's unreadable (EAGAIN before its first conversion): another one.
        let zones = [
            zone(0, "cpu-thermal", Err("Resource temporarily unavailable")),
            zone(1, "board", Ok(30_000)),
        ];
        assert_eq!(soc_zone(&zones).unwrap().zone, "thermal_zone1");
    }

    #[test]
    fn no_readable_zone_says_why() {
        assert_eq!(soc_zone(&[]), Err(SysfsError::NoZone));
        assert_eq!(
            soc_zone(&[]).unwrap_err().to_string(),
            "no thermal zone: no thermal sensor driver bound"
        );
        let zones = [
            zone(0, "cpu-thermal", Err("No data available")),
            zone(1, "board", Err("Resource temporarily unavailable")),
        ];
        assert_eq!(
            soc_zone(&zones).unwrap_err().to_string(),
            "thermal_zone0 (cpu-thermal): No data available; \
             thermal_zone1 (board): Resource temporarily unavailable"
        );
    }
}
