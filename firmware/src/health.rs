//! Board health snapshots ([`Health`]) around every step: CPU clock, SoC temperature,
//! throttle / under-voltage flags, governor; with them the interrupt counts
//! ([`crate::interrupts`]), recorded as what each source raised during the step. Each
//! value names its source; a value no source gives is recorded as unavailable with the
//! reason, never invented.
//!
//! Sources, in order:
//! - the firmware, through `/dev/vcio` ([`crate::mailbox`]: Raspberry Pi kernels, or
//!   benchboot's `benchboot_vcio` module on Debian's kernels where the board file sets
//!   `modules.vcio`; Debian has no vcio driver of its own): measured ARM and core
//!   clocks, the ARM clock set, the `GET_THROTTLED` flag word, the temperature;
//! - cpufreq (`/sys/devices/system/cpu/cpu0/cpufreq`): `cpuinfo_cur_freq` (the
//!   driver's answer: on Debian's Pi kernels raspberrypi-cpufreq + cpufreq-dt, i.e. the
//!   rate the firmware set) else `scaling_cur_freq`, kHz; `scaling_governor`;
//!   `cpuinfo_max_freq`, kHz (what a capped clock falls short of);
//! - the SoC's thermal zone (`/sys/class/thermal/thermal_zone*/temp`, millidegrees C,
//!   the CPU/SoC zone by `type` first: [`benchboot_results::health::sysfs::soc_zone`];
//!   bcm2835_thermal / bcm2711_thermal on the Pis), else the mailbox;
//! - Linux raspberrypi-hwmon (`/sys/class/hwmon/*` named `rpi_volt`,
//!   `in0_lcrit_alarm`, Documentation/hwmon/raspberrypi-hwmon.rst): the under-voltage
//!   alarm. That driver resets the firmware's sticky bits every 2 s, so with it loaded
//!   the "has occurred" flags cover only the last 2 s. It is built only in Debian's rpi
//!   flavour; where neither it nor vcio answers, the reason names the kernel
//!   ([`benchboot_results::health::facts::under_voltage_unknown`]).
//!
//! Each snapshot updates the run's per-fact summary ([`RunResults::health_facts`]:
//! real and from where, or unknown and why); under-voltage seen during a step is a
//! warning event ([`UNDER_VOLTAGE_STEP`]), once per run.
//!
//! Every reader returns a `Result`; nothing here panics (PID 1 runs it).

use std::path::{Path, PathBuf};

use benchboot_results::health::facts::{printable, under_voltage_unknown};
use benchboot_results::health::health_facts;
use benchboot_results::health::sysfs::{
    parse_alarm, parse_number, soc_zone, ThermalZone, RPI_HWMON_ALARM, RPI_HWMON_NAME,
};
use benchboot_results::{
    Condition, Health, HealthScope, Reading, RunResults, Severity, StepHealth, Throttled,
};

use benchboot_energy::marks::Edge;

use crate::console::say;
use crate::mailbox::{self, Property, CLOCK_ARM, CLOCK_CORE};
use crate::{interrupts, sys};

/// The Raspberry Pi kernel's mailbox device.
pub const VCIO: &str = "/dev/vcio";
/// Where sysfs is mounted.
pub const SYS: &str = "/sys";

/// Something that answers mailbox property messages in place.
pub trait Mailbox {
    /// Sends `msg` ([`mailbox::encode`]) and leaves the answer in it.
    ///
    /// # Errors
    /// Why the message could not be exchanged.
    fn call(&mut self, msg: &mut [u32]) -> Result<(), String>;
}

/// The firmware through `/dev/vcio` (or another device path).
#[derive(Debug, Clone)]
pub struct Vcio(pub PathBuf);

impl Default for Vcio {
    fn default() -> Vcio {
        Vcio(PathBuf::from(VCIO))
    }
}

impl Mailbox for Vcio {
    fn call(&mut self, msg: &mut [u32]) -> Result<(), String> {
        sys::vcio_property(&self.0, msg).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "{}: {e} (no vcio driver: Debian's kernels have none; benchboot_vcio \
                     gives one to boards whose file sets modules.vcio)",
                    self.0.display()
                )
            } else {
                format!("{}: {e}", self.0.display())
            }
        })
    }
}

/// Asks the firmware one property.
///
/// # Errors
/// The exchange failed or the answer did not decode (the message says which).
pub fn property(mb: &mut dyn Mailbox, p: Property) -> Result<u32, String> {
    let mut msg = mailbox::encode(p);
    mb.call(&mut msg)?;
    mailbox::decode(p, &msg).map_err(|e| format!("{}: {e}", p.source()))
}

fn read_trimmed(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn read_number<T: std::str::FromStr>(path: &Path) -> Result<T, String> {
    parse_number(&read_trimmed(path)?).map_err(|e| format!("{}: {e}", path.display()))
}

/// CPU 0's current frequency, kHz, and its file (the memory engine's reader:
/// `cpuinfo_cur_freq`, else `scaling_cur_freq`, both kHz).
///
/// # Errors
/// No cpufreq, or neither file reads as a number.
pub fn cpufreq_khz(sys: &Path) -> Result<(u64, String), String> {
    benchboot_memory::cpu::cpufreq_khz(sys, 0).map_err(|e| e.to_string())
}

/// CPU 0's cpufreq folder, or why there is none (as the reason a reading is unknown).
fn cpufreq_dir(sys: &Path) -> Result<std::path::PathBuf, String> {
    benchboot_memory::cpu::cpufreq_dir(sys, 0).map_err(|e| e.to_string())
}

/// CPU 0's governor in effect (`scaling_governor`).
///
/// # Errors
/// No cpufreq, or the file does not read.
pub fn governor(sys: &Path) -> Result<(String, String), String> {
    let f = cpufreq_dir(sys)?.join("scaling_governor");
    read_trimmed(&f).map(|g| (g, f.display().to_string()))
}

/// CPU 0's highest frequency (`cpuinfo_max_freq`), kHz, and its file.
///
/// # Errors
/// No cpufreq, or the file does not read as a number.
pub fn cpufreq_max_khz(sys: &Path) -> Result<(u64, String), String> {
    let f = cpufreq_dir(sys)?.join("cpuinfo_max_freq");
    read_number(&f).map(|v| (v, f.display().to_string()))
}

/// The SoC's temperature, millidegrees C (sysfs-api: `temp` is in millidegrees
/// Celsius), from the zone [`soc_zone`] picks among every `thermal_zone*`, with the
/// zone's `type` in the source.
///
/// # Errors
/// No thermal zone, or none whose `temp` reads as a number (some sensors answer
/// EAGAIN or ENODATA before their first conversion).
pub fn thermal_millicelsius(sys: &Path) -> Result<(i64, String), String> {
    let class = sys.join("class/thermal");
    let zones: Vec<ThermalZone> = std::fs::read_dir(&class)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let zone = e.file_name().to_string_lossy().into_owned();
            zone.starts_with("thermal_zone").then(|| {
                let dir = e.path();
                ThermalZone {
                    kind: read_trimmed(&dir.join("type")).unwrap_or_default(),
                    temp: read_number(&dir.join("temp")),
                    zone,
                }
            })
        })
        .collect();
    let z = soc_zone(&zones).map_err(|e| format!("{}: {e}", class.display()))?;
    let f = class.join(&z.zone).join("temp");
    let source = if z.kind.is_empty() {
        f.display().to_string()
    } else {
        format!("{} ({})", f.display(), printable(&z.kind))
    };
    Ok((z.temp.clone()?, source))
}

/// raspberrypi-hwmon's under-voltage alarm: `in0_lcrit_alarm` of the hwmon device
/// named `rpi_volt` (drivers/hwmon/raspberrypi-hwmon.c).
///
/// # Errors
/// No such hwmon device, or the alarm does not read as 0/1.
pub fn under_voltage_alarm(sys: &Path) -> Result<(bool, String), String> {
    let class = sys.join("class/hwmon");
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&class)
        .map_err(|e| format!("{}: {e}", class.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    let dev = entries
        .into_iter()
        .find(|d| read_trimmed(&d.join("name")).is_ok_and(|n| n == RPI_HWMON_NAME))
        .ok_or_else(|| {
            format!(
                "no hwmon device named {RPI_HWMON_NAME} in {} (raspberrypi-hwmon not loaded, \
                 or not a Raspberry Pi)",
                class.display()
            )
        })?;
    let f = dev.join(RPI_HWMON_ALARM);
    let text = read_trimmed(&f)?;
    parse_alarm(&text)
        .map(|a| (a, f.display().to_string()))
        .map_err(|e| format!("{}: {e}", f.display()))
}

/// The device tree root's `compatible` strings (NUL-separated), if sysfs has them.
fn compatible(sys: &Path) -> Option<String> {
    std::fs::read(sys.join("firmware/devicetree/base/compatible"))
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

fn reading<T>(r: Result<(T, String), String>) -> Reading<T> {
    match r {
        Ok((v, source)) => Reading::ok(v, source),
        Err(reason) => Reading::unavailable(reason),
    }
}

fn from_mailbox(mb: &mut dyn Mailbox, p: Property) -> Result<(u32, String), String> {
    property(mb, p).map(|v| (v, p.source()))
}

/// One snapshot from sysfs under `sys` and the firmware behind `mb`, stamped `at_ns`;
/// `release` (`uname -r`) goes into the reason when under-voltage has no source.
pub fn snapshot(sys: &Path, mb: &mut dyn Mailbox, at_ns: u64, release: &str) -> Health {
    let mut clock = |id| reading(from_mailbox(mb, id).map(|(hz, s)| (u64::from(hz), s)));
    let arm_measured_hz = clock(Property::ClockRateMeasured(CLOCK_ARM));
    let arm_set_hz = clock(Property::ClockRate(CLOCK_ARM));
    let core_measured_hz = clock(Property::ClockRateMeasured(CLOCK_CORE));
    let temperature_millicelsius = match thermal_millicelsius(sys) {
        Ok((v, s)) => Reading::ok(v, s),
        Err(zone) => match from_mailbox(mb, Property::Temperature) {
            Ok((v, s)) => Reading::ok(i64::from(v), s),
            Err(fw) => Reading::unavailable(format!("{zone}; {fw}")),
        },
    };
    let throttled =
        reading(from_mailbox(mb, Property::Throttled).map(|(w, s)| (Throttled::from_raw(w), s)));
    let under_voltage_alarm = match (under_voltage_alarm(sys), &throttled) {
        (Ok((v, s)), _) => Reading::ok(v, s),
        (Err(hwmon), Reading::Unavailable { reason: vcio }) => Reading::unavailable(
            under_voltage_unknown(release, compatible(sys).as_deref(), &hwmon, vcio),
        ),
        (Err(hwmon), Reading::Ok { .. }) => Reading::unavailable(hwmon),
    };
    Health {
        at_ns,
        arm_measured_hz,
        arm_set_hz,
        core_measured_hz,
        cpufreq_khz: reading(cpufreq_khz(sys)),
        cpufreq_max_khz: reading(cpufreq_max_khz(sys)),
        governor: reading(governor(sys)),
        temperature_millicelsius,
        throttled,
        under_voltage_alarm,
    }
}

/// What is taken before and after every step: the board's health and the interrupt
/// counts ([`interrupts`]); only the counts' difference goes into the results.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub health: Health,
    /// `/proc/interrupts`, or why it could not be read.
    pub interrupts: Result<interrupts::Counts, String>,
}

/// `uname -r` of the running kernel (`/proc/sys/kernel/osrelease`), empty when
/// unreadable.
fn kernel_release() -> String {
    read_trimmed(Path::new("/proc/sys/kernel/osrelease")).unwrap_or_default()
}

/// A snapshot of this board now (`/sys`, `/dev/vcio`, CLOCK_BOOTTIME).
pub fn take_health() -> Health {
    snapshot(
        Path::new(SYS),
        &mut Vcio::default(),
        sys::boottime_ns(),
        &kernel_release(),
    )
}

/// The event step of under-voltage seen during a step (one per run).
pub const UNDER_VOLTAGE_STEP: &str = "health.under-voltage";

/// The warning for under-voltage seen during `step`, flagged by `source`.
pub fn under_voltage_warning(step: &str, source: &str) -> String {
    format!(
        "under-voltage during {step} ({source}): the supply sagged and the firmware may \
         have slowed the CPU; figures measured while it was flagged are marked. Use a supply \
         rated for the board (a Pi 4 B: 5.1 V, 3 A; a computer's USB port gives 0.5-0.9 A)"
    )
}

/// The source that flagged under-voltage in `h`: the firmware's word, else the hwmon
/// alarm.
fn under_voltage_source(h: &StepHealth) -> String {
    [&h.before, &h.after]
        .into_iter()
        .find_map(|s| {
            s.throttled
                .value()
                .filter(|t| {
                    t.is_now(Condition::UnderVoltage) || t.has_occurred(Condition::UnderVoltage)
                })
                .and(s.throttled.source())
                .or(s
                    .under_voltage_alarm
                    .value()
                    .filter(|a| **a)
                    .and(s.under_voltage_alarm.source()))
        })
        .unwrap_or("firmware flags")
        .to_owned()
}

/// Before a step: health first, the interrupt counts last (closest to the step).
pub fn take() -> Snapshot {
    let health = take_health();
    let interrupts = interrupts::read(Path::new(interrupts::PROC_INTERRUPTS));
    Snapshot { health, interrupts }
}

/// After a step: the interrupt counts first (closest to the step), then health.
pub fn take_after() -> Snapshot {
    let interrupts = interrupts::read(Path::new(interrupts::PROC_INTERRUPTS));
    let health = take_health();
    Snapshot { health, interrupts }
}

/// [`take`], then the step's begin mark (`mark begin <step> t_ns=<n>`,
/// [`crate::energy::step_mark`]): the window opens right after the before-snapshot.
pub fn take_for(step: &str) -> Snapshot {
    let s = take();
    crate::energy::step_mark(Edge::Begin, step);
    s
}

/// The step's end mark (`mark end <step> t_ns=<n>`), then [`take_after`]: the window
/// closes right before the after-snapshot.
pub fn take_after_for(step: &str) -> Snapshot {
    crate::energy::step_mark(Edge::End, step);
    take_after()
}

/// Records `before`/`after` as the health of `step`, with the interrupts raised between
/// them; says on the console what was flagged during it.
pub fn record(
    results: &mut RunResults,
    step: &str,
    scope: HealthScope,
    before: Snapshot,
    after: Snapshot,
) {
    let h = StepHealth {
        step: step.to_owned(),
        scope,
        interrupts: interrupts::reading(&before.interrupts, &after.interrupts),
        before: before.health,
        after: after.health,
    };
    let during = h.during();
    if !during.is_empty() {
        let names: Vec<&str> = during.iter().map(|c| c.name()).collect();
        let raw = h
            .after
            .throttled
            .value()
            .map_or(String::new(), |t| format!(" (firmware flags {:#x})", t.raw));
        say(&format!("health {step}: {}{raw}", names.join(", ")));
        if during.contains(&Condition::UnderVoltage)
            && !results.events.iter().any(|e| e.step == UNDER_VOLTAGE_STEP)
        {
            let message = under_voltage_warning(step, &under_voltage_source(&h));
            say(&message);
            results.event(UNDER_VOLTAGE_STEP, Severity::Warning, message);
        }
    }
    results.health.push(h);
    results.health_facts = health_facts(results.health.iter().flat_map(|h| [&h.before, &h.after]));
}

/// Runs `work` between two snapshots of this board and records them for `step`.
pub fn around<T>(
    results: &mut RunResults,
    step: &str,
    scope: HealthScope,
    work: impl FnOnce(&mut RunResults) -> T,
) -> T {
    let before = take_for(step);
    let out = work(results);
    let after = take_after_for(step);
    record(results, step, scope, before, after);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchboot_results::Condition;
    use mailbox::{STATUS_SUCCESS, TAG_RESPONSE};

    /// A firmware stand-in: answers every tag it knows from a table.
    struct FakeFirmware {
        throttled: u32,
        arm_measured: u32,
        calls: Vec<u32>,
    }

    impl Mailbox for FakeFirmware {
        fn call(&mut self, msg: &mut [u32]) -> Result<(), String> {
            self.calls.push(msg[2]);
            // vcio sets the buffer code to success whenever the firmware did not fail.
            msg[1] = STATUS_SUCCESS;
            let (len, value): (u32, Vec<u32>) = match (msg[2], msg[5]) {
                (mailbox::GET_THROTTLED, _) => (4, vec![self.throttled]),
                (mailbox::GET_CLOCK_RATE_MEASURED, 3) => (8, vec![3, self.arm_measured]),
                (mailbox::GET_CLOCK_RATE_MEASURED, 4) => (8, vec![4, 250_000_000]),
                (mailbox::GET_CLOCK_RATE, 3) => (8, vec![3, 1_000_000_000]),
                (mailbox::GET_TEMPERATURE, 0) => (8, vec![0, 51_540]),
                _ => return Ok(()), // unknown: left unanswered
            };
            msg[4] = TAG_RESPONSE | len;
            msg[5..5 + value.len()].copy_from_slice(&value);
            Ok(())
        }
    }

    struct NoDevice;

    impl Mailbox for NoDevice {
        fn call(&mut self, _: &mut [u32]) -> Result<(), String> {
            Err("/dev/vcio: No such file or directory (os error 2)".into())
        }
    }

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// A fake sysfs as Debian's rpi kernel shows a Pi Zero W with raspberrypi-cpufreq,
    /// cpufreq-dt and raspberrypi-hwmon loaded.
    fn fake_sys(root: &Path) {
        let cpufreq = "devices/system/cpu/cpu0/cpufreq";
        write(root, &format!("{cpufreq}/cpuinfo_cur_freq"), "1000000\n");
        write(root, &format!("{cpufreq}/scaling_cur_freq"), "700000\n");
        write(
            root,
            &format!("{cpufreq}/scaling_governor"),
            "performance\n",
        );
        write(root, "class/thermal/thermal_zone0/temp", "48312\n");
        write(root, "class/thermal/thermal_zone0/type", "cpu-thermal\n");
        write(root, "class/hwmon/hwmon0/name", "cpu_thermal\n");
        write(root, "class/hwmon/hwmon1/name", "rpi_volt\n");
        write(root, "class/hwmon/hwmon1/in0_lcrit_alarm", "1\n");
    }

    #[test]
    fn sysfs_readers_read_cpufreq_thermal_zone_and_hwmon() {
        let root = tempfile::tempdir().unwrap();
        let sys = root.path();
        fake_sys(sys);
        let (khz, src) = cpufreq_khz(sys).unwrap();
        assert_eq!(khz, 1_000_000);
        assert!(src.ends_with("cpu0/cpufreq/cpuinfo_cur_freq"), "{src}");
        assert_eq!(governor(sys).unwrap().0, "performance");
        let (mc, src) = thermal_millicelsius(sys).unwrap();
        assert_eq!(mc, 48_312);
        assert!(src.ends_with("thermal_zone0/temp (cpu-thermal)"), "{src}");
        let (alarm, src) = under_voltage_alarm(sys).unwrap();
        assert!(alarm);
        assert!(src.ends_with("hwmon1/in0_lcrit_alarm"), "{src}");

        // cpuinfo_cur_freq unreadable (not root): scaling_cur_freq.
        std::fs::remove_file(sys.join("devices/system/cpu/cpu0/cpufreq/cpuinfo_cur_freq")).unwrap();
        let (khz, src) = cpufreq_khz(sys).unwrap();
        assert_eq!(khz, 700_000);
        assert!(src.ends_with("scaling_cur_freq"), "{src}");
        // Garbage is an error that names the file.
        write(sys, "class/thermal/thermal_zone0/temp", "n/a\n");
        let err = thermal_millicelsius(sys).unwrap_err();
        assert!(err.contains("thermal_zone0/temp: not a number"), "{err}");
        write(sys, "class/hwmon/hwmon1/in0_lcrit_alarm", "7\n");
        assert!(under_voltage_alarm(sys).is_err());
    }

    #[test]
    fn missing_sysfs_entries_say_why() {
        let root = tempfile::tempdir().unwrap();
        let sys = root.path();
        let err = cpufreq_khz(sys).unwrap_err();
        assert!(err.contains("no cpufreq driver bound"), "{err}");
        assert!(governor(sys)
            .unwrap_err()
            .contains("no cpufreq driver bound"));
        assert!(thermal_millicelsius(sys)
            .unwrap_err()
            .contains("no thermal sensor driver bound"));
        assert!(under_voltage_alarm(sys)
            .unwrap_err()
            .contains("class/hwmon"));
        write(sys, "class/hwmon/hwmon0/name", "cpu_thermal\n");
        assert!(under_voltage_alarm(sys)
            .unwrap_err()
            .contains("no hwmon device named rpi_volt"));
    }

    #[test]
    fn snapshot_with_the_firmware_names_every_source() {
        let root = tempfile::tempdir().unwrap();
        fake_sys(root.path());
        let mut fw = FakeFirmware {
            throttled: 0x50005,
            arm_measured: 699_999_000,
            calls: Vec::new(),
        };
        let h = snapshot(root.path(), &mut fw, 42, "6.1.0-50-rpi");
        assert_eq!(h.at_ns, 42);
        assert_eq!(
            h.arm_measured_hz,
            Reading::ok(699_999_000, "mailbox:GET_CLOCK_RATE_MEASURED(ARM)")
        );
        assert_eq!(
            h.arm_set_hz,
            Reading::ok(1_000_000_000, "mailbox:GET_CLOCK_RATE(ARM)")
        );
        assert_eq!(h.core_measured_hz.value(), Some(&250_000_000));
        assert_eq!(h.cpufreq_khz.value(), Some(&1_000_000));
        assert_eq!(h.governor.value().map(String::as_str), Some("performance"));
        // The thermal zone first; the mailbox is not asked for the temperature.
        assert_eq!(h.temperature_millicelsius.value(), Some(&48_312));
        assert!(!fw.calls.contains(&mailbox::GET_TEMPERATURE));
        let t = h.throttled.value().unwrap();
        assert_eq!(t.raw, 0x50005);
        assert!(t.under_voltage_now && t.throttled_now);
        assert_eq!(h.under_voltage_alarm.value(), Some(&true));
        assert_eq!(h.now(), [Condition::UnderVoltage, Condition::Throttled]);
        assert_eq!(h.cpu_clock_hz().unwrap().0, 699_999_000);
    }

    #[test]
    fn snapshot_without_anything_records_unavailable_with_reasons() {
        let root = tempfile::tempdir().unwrap();
        let h = snapshot(root.path(), &mut NoDevice, 7, "6.1.0-50-arm64");
        for (name, r) in [
            ("arm_measured_hz", &h.arm_measured_hz),
            ("arm_set_hz", &h.arm_set_hz),
            ("core_measured_hz", &h.core_measured_hz),
            ("cpufreq_khz", &h.cpufreq_khz),
        ] {
            assert!(r.value().is_none(), "{name}: {r:?}");
        }
        let Reading::Unavailable { reason } = &h.temperature_millicelsius else {
            panic!("{:?}", h.temperature_millicelsius)
        };
        assert!(
            reason.contains("no thermal zone") && reason.contains("/dev/vcio"),
            "{reason}"
        );
        let Reading::Unavailable { reason } = &h.throttled else {
            panic!("{:?}", h.throttled)
        };
        assert!(reason.contains("/dev/vcio"), "{reason}");
        assert!(h.now().is_empty());
        assert!(h.cpu_clock_hz().is_none());
    }

    #[test]
    fn temperature_falls_back_to_the_mailbox_and_unknown_tags_are_unavailable() {
        let root = tempfile::tempdir().unwrap();
        let mut fw = FakeFirmware {
            throttled: 0,
            arm_measured: 1,
            calls: Vec::new(),
        };
        let h = snapshot(root.path(), &mut fw, 0, "6.1.0-50-rpi");
        assert_eq!(
            h.temperature_millicelsius,
            Reading::ok(51_540, "mailbox:GET_TEMPERATURE")
        );
        assert_eq!(h.throttled.value(), Some(&Throttled::from_raw(0)));
        // A firmware that ignores a tag: unavailable, saying so.
        let err = property(&mut fw, Property::ClockRate(CLOCK_CORE)).unwrap_err();
        assert!(err.contains("did not answer"), "{err}");
    }

    /// A fake sysfs as Debian's arm64 kernel shows a Pi 4 B: cpufreq (raspberrypi-cpufreq
    /// and cpufreq-dt), bcm2711_thermal's zone, the device tree's compatible; no
    /// raspberrypi-hwmon (not built in arm64), no vcio.
    fn debian_arm64_pi4(root: &Path) {
        let cpufreq = "devices/system/cpu/cpu0/cpufreq";
        write(root, &format!("{cpufreq}/scaling_cur_freq"), "600000\n");
        write(root, &format!("{cpufreq}/cpuinfo_max_freq"), "1500000\n");
        write(root, &format!("{cpufreq}/scaling_governor"), "ondemand\n");
        write(root, "class/thermal/thermal_zone0/temp", "44790\n");
        write(root, "class/thermal/thermal_zone0/type", "cpu-thermal\n");
        write(root, "class/hwmon/hwmon0/name", "cpu_thermal\n");
        write(
            root,
            "firmware/devicetree/base/compatible",
            "raspberrypi,4-model-b\0brcm,bcm2711\0",
        );
    }

    #[test]
    fn debians_arm64_kernel_on_a_pi_4_says_which_facts_are_real() {
        let root = tempfile::tempdir().unwrap();
        debian_arm64_pi4(root.path());
        let h = snapshot(root.path(), &mut NoDevice, 1, "6.1.0-50-arm64");
        assert_eq!(h.cpufreq_khz.value(), Some(&600_000));
        assert_eq!(h.cpufreq_max_khz.value(), Some(&1_500_000));
        assert!(h
            .cpufreq_max_khz
            .source()
            .unwrap()
            .ends_with("cpuinfo_max_freq"));
        assert_eq!(h.temperature_millicelsius.value(), Some(&44_790));
        assert_eq!(
            h.under_voltage_alarm,
            Reading::unavailable(
                "this kernel (6.1.0-50-arm64) has no raspberrypi-hwmon \
                 (CONFIG_SENSORS_RASPBERRYPI_HWMON is not set in Debian's arm64 flavour) and \
                 no /dev/vcio (Debian has no vcio driver; benchboot_vcio gives one to \
                 boards whose file sets modules.vcio)"
            )
        );
        let mut results = RunResults::new(
            "t".into(),
            benchboot_plan::Plan::example(),
            benchboot_results::SystemInfo::default(),
        );
        let snap = |health: Health| Snapshot {
            health,
            interrupts: Err("n/a".into()),
        };
        let scope = HealthScope::Memory;
        record(&mut results, "memory", scope, snap(h.clone()), snap(h));
        let lines: Vec<String> = results.health_facts.iter().map(|f| f.line()).collect();
        assert!(lines[0].starts_with("under-voltage: unknown: this kernel (6.1.0-50-arm64)"));
        assert!(
            lines.iter().any(|l| l.starts_with("temperature: real (")),
            "{lines:?}"
        );
        assert!(results.events.is_empty(), "nothing seen, nothing warned");
    }

    #[test]
    fn the_soc_zone_is_read_among_several() {
        let root = tempfile::tempdir().unwrap();
        let sys = root.path();
        write(sys, "class/thermal/thermal_zone0/temp", "30000\n");
        write(sys, "class/thermal/thermal_zone0/type", "axp20x-thermal\n");
        write(sys, "class/thermal/thermal_zone1/temp", "41200\n");
        write(sys, "class/thermal/thermal_zone1/type", "cpu-thermal\n");
        let (mc, src) = thermal_millicelsius(sys).unwrap();
        assert_eq!(mc, 41_200);
        assert!(src.ends_with("thermal_zone1/temp (cpu-thermal)"), "{src}");
    }

    #[test]
    fn under_voltage_from_raspberrypi_hwmon_is_a_warning_once() {
        let mut results = RunResults::new(
            "t".into(),
            benchboot_plan::Plan::example(),
            benchboot_results::SystemInfo::default(),
        );
        let alarm = |on: bool| Snapshot {
            health: Health {
                under_voltage_alarm: Reading::ok(on, "/sys/class/hwmon/hwmon1/in0_lcrit_alarm"),
                ..Health::default()
            },
            interrupts: Err("n/a".into()),
        };
        let scope = || HealthScope::Verify {
            target: "ext4".into(),
        };
        record(
            &mut results,
            "verify.ext4",
            scope(),
            alarm(false),
            alarm(false),
        );
        assert!(results.events.is_empty());
        record(
            &mut results,
            "verify.ext4",
            scope(),
            alarm(false),
            alarm(true),
        );
        record(
            &mut results,
            "verify.vfat",
            scope(),
            alarm(true),
            alarm(true),
        );
        let warned: Vec<&benchboot_results::Event> = results
            .events
            .iter()
            .filter(|e| e.step == UNDER_VOLTAGE_STEP)
            .collect();
        assert_eq!(warned.len(), 1, "once per run");
        assert_eq!(warned[0].severity, Severity::Warning);
        assert!(
            warned[0].message.starts_with(
                "under-voltage during verify.ext4 (/sys/class/hwmon/hwmon1/in0_lcrit_alarm)"
            ),
            "{}",
            warned[0].message
        );
        assert_eq!(
            results.health_facts[0].line(),
            "under-voltage: real (/sys/class/hwmon/hwmon1/in0_lcrit_alarm)"
        );
    }

    #[test]
    fn around_records_before_and_after_for_the_step() {
        let mut results = RunResults::new(
            "t".into(),
            benchboot_plan::Plan::example(),
            benchboot_results::SystemInfo::default(),
        );
        let scope = HealthScope::Verify {
            target: "ext4".into(),
        };
        let got = around(&mut results, "verify.ext4", scope.clone(), |_| 5);
        assert_eq!(got, 5);
        assert_eq!(results.health.len(), 1);
        let h = &results.health[0];
        assert_eq!((h.step.as_str(), &h.scope), ("verify.ext4", &scope));
        assert!(h.before.at_ns <= h.after.at_ns);
        // This host's /proc/interrupts, or why not: recorded either way.
        match &h.interrupts {
            Reading::Ok { source, .. } => assert_eq!(source, interrupts::PROC_INTERRUPTS),
            Reading::Unavailable { reason } => assert!(!reason.is_empty()),
        }
    }

    #[test]
    fn record_keeps_the_interrupts_of_the_step() {
        let mut results = RunResults::new(
            "t".into(),
            benchboot_plan::Plan::example(),
            benchboot_results::SystemInfo::default(),
        );
        let counts = |mmc: u64| {
            interrupts::parse(&format!(
                "  CPU0 CPU1\n 38: {mmc} 0 GICv2 126 Level mmc1\n 11: 100 100 GICv2 30 Level arch_timer\n"
            ))
        };
        let snap = |mmc| Snapshot {
            health: Health::default(),
            interrupts: counts(mmc),
        };
        let scope = HealthScope::Verify {
            target: "ext4".into(),
        };
        record(
            &mut results,
            "verify.ext4",
            scope.clone(),
            snap(5),
            snap(905),
        );
        let got = results.health[0].interrupts.value().unwrap();
        assert_eq!(got.len(), 1, "unchanged sources are left out");
        assert_eq!((got[0].source.as_str(), got[0].count), ("38 mmc1", 900));
        let failed = Snapshot {
            health: Health::default(),
            interrupts: Err("/proc/interrupts: Permission denied".into()),
        };
        record(&mut results, "verify.ext4", scope, snap(5), failed);
        assert_eq!(
            results.health[1].interrupts,
            Reading::unavailable("/proc/interrupts: Permission denied")
        );
    }
}
