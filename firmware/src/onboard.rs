//! The on-board power sensor PID 1 samples itself (plan `[energy] sensor`): a thread
//! that reads it every [`ONBOARD_PERIOD_MS`] on the board's own clock (`CLOCK_BOOTTIME`,
//! so the trace needs no alignment) from the plan's start to the end of the run or
//! [`MAX_ONBOARD_SAMPLES`], whichever comes first.
//!
//! - `axp20x-usb`: the AXP20x PMIC's USB input through the kernel's power-supply class
//!   (`voltage_now` µV, `current_now` µA), decoded by `benchboot_energy::decode::axp`.
//! - `ina219|ina226 i2c-<n> 0x<addr> <shunt>`: the chip's shunt and bus voltage registers
//!   over i2c-dev ([`sys::i2c_open`]), decoded by `benchboot_energy::decode::ina2xx`
//!   (current = shunt voltage / the plan's shunt: no calibration register written).
//!
//! The samples and what went wrong sit here until the next save copies them into the
//! document ([`fill`]): the sampler never holds the results.

use std::fs::File;
use std::path::PathBuf;
use std::sync::Mutex;

use benchboot_energy::decode::{axp, ina2xx};
use benchboot_energy::Sample;
use benchboot_plan::energy::{Sensor, MAX_ONBOARD_SAMPLES, ONBOARD_PERIOD_MS};
use benchboot_results::energy::OnboardTrace;
use benchboot_results::{RunResults, Severity};

use crate::console::say;
use crate::sys;

/// The trace so far (`None`: no sensor read).
static TRACE: Mutex<Option<OnboardTrace>> = Mutex::new(None);
/// What the sampler could not do, for the next save's events.
static PROBLEMS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Reads in a row that may fail before the sampler gives up: 20 (5 s at 250 ms).
const MAX_FAILED_READS: u32 = 20;

/// The step name of the sampler's events.
pub const STEP: &str = "energy.onboard";

/// One open sensor.
enum Reader {
    /// The power-supply folder.
    Axp(PathBuf),
    /// `/dev/i2c-<n>` pointed at the chip.
    Ina {
        file: File,
        chip: ina2xx::Chip,
        shunt_ohm: f64,
    },
}

impl Reader {
    /// Opens `sensor`; an INA226 must answer its manufacturer id.
    fn open(sensor: &Sensor) -> Result<Reader, String> {
        match *sensor {
            Sensor::Axp20xUsb => Ok(Reader::Axp(PathBuf::from(sensor.path()))),
            Sensor::Ina2xx {
                ina226,
                bus,
                address,
                shunt_uohm,
            } => {
                let file = sys::i2c_open(bus, address).map_err(|e| {
                    format!(
                        "{}: {e} (is i2c-dev loaded and the bus enabled?)",
                        sensor.path()
                    )
                })?;
                let chip = if ina226 {
                    let id = sys::i2c_read_word(&file, ina2xx::reg::MANUFACTURER_ID)
                        .map_err(|e| format!("{sensor}: no answer at 0x{address:02x}: {e}"))?;
                    if id != ina2xx::INA226_MANUFACTURER_ID {
                        return Err(format!(
                            "{sensor}: manufacturer id reads 0x{id:04x}, not an INA226's \
                             0x{:04x}",
                            ina2xx::INA226_MANUFACTURER_ID
                        ));
                    }
                    ina2xx::Chip::Ina226
                } else {
                    ina2xx::Chip::Ina219
                };
                Ok(Reader::Ina {
                    file,
                    chip,
                    shunt_ohm: shunt_uohm as f64 * 1e-6,
                })
            }
        }
    }

    /// One reading at `t_s` and its resolution, W.
    fn read(&self, t_s: f64) -> Result<(Sample, f64), String> {
        match self {
            Reader::Axp(dir) => {
                let text = |f: &str| {
                    std::fs::read_to_string(dir.join(f))
                        .map_err(|e| format!("{}: {e}", dir.join(f).display()))
                };
                let s = axp::sample(t_s, &text("voltage_now")?, &text("current_now")?)
                    .map_err(|e| e.0)?;
                let res = axp::resolution_w(s.volts.unwrap_or(0.0), s.amps.unwrap_or(0.0));
                Ok((s, res))
            }
            Reader::Ina {
                file,
                chip,
                shunt_ohm,
            } => {
                let word = |r: u8| {
                    sys::i2c_read_word(file, r).map_err(|e| format!("register 0x{r:02x}: {e}"))
                };
                let shunt = word(ina2xx::reg::SHUNT)?;
                let bus = word(ina2xx::reg::BUS)?;
                let r = chip.read(shunt, bus, *shunt_ohm).map_err(|e| e.0)?;
                let res = chip.resolution_w(r.volts, r.amps, *shunt_ohm);
                Ok((r.sample(t_s), res))
            }
        }
    }
}

/// Starts sampling the plan's sensor `text` ([`Sensor::parse`]); an unusable sensor is
/// a warning event of `results` and nothing is sampled.
pub fn start(text: &str, results: &mut RunResults) {
    let opened = Sensor::parse(text).and_then(|s| Ok((s, Reader::open(&s)?)));
    let (sensor, reader) = match opened {
        Ok(x) => x,
        Err(e) => {
            let msg = format!("on-board sensor not read: {e}");
            say(&msg);
            results.event(STEP, Severity::Warning, msg);
            return;
        }
    };
    let name = format!("{sensor} {}", sensor.path());
    if let Ok(mut t) = TRACE.lock() {
        *t = Some(OnboardTrace {
            sensor: name.clone(),
            resolution_w: 0.0,
            samples: Vec::new(),
        });
    }
    let spawned = std::thread::Builder::new()
        .name("onboard".into())
        .spawn(move || sample_until_bound(&reader, &name));
    match spawned {
        Ok(_) => say(&format!(
            "on-board sensor {sensor}: a reading every {ONBOARD_PERIOD_MS} ms"
        )),
        Err(e) => results.event(STEP, Severity::Warning, format!("no sampler thread: {e}")),
    }
}

/// The sampler: a reading every period on an absolute schedule, to the sample bound or
/// [`MAX_FAILED_READS`] failures in a row.
fn sample_until_bound(reader: &Reader, name: &str) {
    let period = ONBOARD_PERIOD_MS * 1_000_000;
    let mut next = sys::boottime_ns();
    let mut failed = 0u32;
    loop {
        sys::sleep_until_boottime(next);
        next = next.saturating_add(period);
        let before = sys::boottime_ns();
        let read = reader.read(before as f64 * 1e-9);
        let t = before + (sys::boottime_ns() - before) / 2;
        match read {
            Ok((s, res)) => {
                failed = 0;
                let Ok(mut g) = TRACE.lock() else { return };
                let Some(trace) = g.as_mut() else { return };
                if trace.samples.is_empty() {
                    trace.resolution_w = res;
                }
                trace.samples.push((t, s.watts));
                if trace.samples.len() >= MAX_ONBOARD_SAMPLES {
                    drop(g);
                    problem(format!(
                        "{name}: stopped at {MAX_ONBOARD_SAMPLES} samples (the bound); the \
                         rest of the run has none"
                    ));
                    return;
                }
            }
            Err(last) => {
                failed += 1;
                if failed >= MAX_FAILED_READS {
                    problem(format!(
                        "{name}: {failed} readings in a row failed, the sampler stopped; \
                         the last: {last}"
                    ));
                    return;
                }
            }
        }
    }
}

fn problem(p: String) {
    if let Ok(mut v) = PROBLEMS.lock() {
        v.push(p);
    }
}

/// Copies the trace so far into `results.energy.onboard` and the sampler's problems
/// into events. `try_lock`: a save never waits on the sampler (the next one copies).
pub fn fill(results: &mut RunResults) {
    if let Ok(t) = TRACE.try_lock() {
        if t.is_some() {
            results.energy.onboard.clone_from(&t);
        }
    }
    if let Ok(mut p) = PROBLEMS.try_lock() {
        for m in p.drain(..) {
            results.event(STEP, Severity::Warning, m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_axp_folder_reads_as_watts_with_its_resolution() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("voltage_now"), "5020100\n").unwrap();
        std::fs::write(dir.path().join("current_now"), "450000\n").unwrap();
        let r = Reader::Axp(dir.path().to_owned());
        let (s, res) = r.read(2.0).unwrap();
        assert!((s.watts - 5.0201 * 0.45).abs() < 1e-9, "{}", s.watts);
        // 5.02 V x 0.375 mA + 0.45 A x 1.7 mV.
        assert!((res - (5.0201 * 0.375e-3 + 0.45 * 1.7e-3)).abs() < 1e-12);
        std::fs::write(dir.path().join("current_now"), "junk\n").unwrap();
        let e = r.read(3.0).unwrap_err();
        assert!(e.contains("current_now"), "{e}");
        std::fs::remove_file(dir.path().join("voltage_now")).unwrap();
        assert!(r.read(3.0).unwrap_err().contains("voltage_now"));
    }

    #[test]
    fn a_missing_bus_is_said_not_panicked() {
        let s = Sensor::parse("ina226 i2c-250 0x40 0.1ohm").unwrap();
        let e = Reader::open(&s).err().unwrap();
        assert!(e.contains("/dev/i2c-250"), "{e}");
    }
}
