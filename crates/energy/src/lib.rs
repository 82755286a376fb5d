//! Power traces and what they say about a run: the energy each step cost.
//!
//! Pure: no I/O but what a caller hands in. The host's meters (`host/src/power`) and
//! PID 1's on-board sensors produce [`Trace`]s through the decoders of [`decode`];
//! [`mod@align`] finds where the board's clock falls on the meter's (the sync patterns
//! PID 1 runs, or the console lines' arrival times); [`mod@integrate`] gives each step's
//! joules, watts above idle, J/GiB and nJ/bit with their uncertainty, from the step
//! windows [`mod@windows`] reads out of a results document; [`energy_report`] does all
//! three. A sensor PID 1 read itself becomes a trace through [`onboard_trace`].
//! [`marks`] is the console lines PID 1 prints at each mark and their parser;
//! [`schedule`] the sync pattern's slot times and the boot stages' arithmetic PID 1 uses.
//!
//! Units are in names: `_s` seconds, `_w` watts, `_j` joules, `_ns` nanoseconds.
#![forbid(unsafe_code)]

use benchboot_results::energy::OnboardTrace;
use serde::{Deserialize, Serialize};

pub mod align;
mod bound;
pub mod decode;
mod error;
pub mod integrate;
pub mod marks;
pub mod power_on;
pub mod schedule;
mod series;
#[cfg(test)]
mod synth;
pub mod windows;

pub use align::{align, AlignMethod, Alignment, SyncFound};
pub use error::AlignError;
pub use integrate::{energy_report, integrate, EnergyReport, Figure, StepEnergy, StepFigure};
pub use windows::{windows, Window, WindowKind};

/// Most samples a trace holds: 2^22, 11.6 hours at 100 samples/s (each sample 32 bytes,
/// 128 MiB). Readers stop with an error past it, never grow without bound.
pub const MAX_SAMPLES: usize = 1 << 22;

/// One reading. `t_s` is on the trace's [`Clock`]; the watts are the mean over the
/// meter's own sampling interval ending at (or centred on, per meter) `t_s`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds on the trace's clock.
    pub t_s: f64,
    /// Power, W.
    pub watts: f64,
    /// Bus voltage, V, when the meter gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volts: Option<f64>,
    /// Current, A, when the meter gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amps: Option<f64>,
}

impl Sample {
    /// A reading of power alone.
    pub fn watts(t_s: f64, watts: f64) -> Sample {
        Sample {
            t_s,
            watts,
            volts: None,
            amps: None,
        }
    }

    /// A reading of voltage and current; power is their product.
    pub fn volts_amps(t_s: f64, volts: f64, amps: f64) -> Sample {
        Sample {
            t_s,
            watts: volts * amps,
            volts: Some(volts),
            amps: Some(amps),
        }
    }
}

/// Whose clock a trace's times are on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Clock {
    /// The recording host's monotonic clock (`Instant`, seconds from an arbitrary
    /// origin the whole recording shares); console lines read on that host are too.
    Host,
    /// The board's `CLOCK_BOOTTIME` (an on-board sensor PID 1 read): no alignment needed.
    Board,
    /// The meter's or a file's own clock, offset and rate unknown: aligned by the sync
    /// patterns only.
    Own,
}

/// A power trace and what is known of the meter that took it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// The meter, as `benchboot power list` names it, e.g. `rdtech-um25c /dev/rfcomm0`,
    /// `fnirsi-fnb58`, `shelly-gen2 http://192.168.1.20`, `csv run7.csv`,
    /// `emulated (QEMU pid 1234)`.
    pub meter: String,
    pub clock: Clock,
    /// True when the power is a model, not a measurement (the emulated meter).
    pub emulated: bool,
    /// The smallest step of one power reading, W (from the meter's units; for V × A
    /// meters the V and I steps at the trace's typical operating point).
    pub resolution_w: f64,
    /// The meter's nominal time between samples, s.
    pub period_s: f64,
    /// Where the meter sits, in words (`between supply and board`, `at the wall`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<String>,
    /// The readings, in time order; at most [`MAX_SAMPLES`] (a reader refuses more).
    #[serde(deserialize_with = "bound::at_most_max_samples")]
    pub samples: Vec<Sample>,
    /// The meter's own energy counter at the first and last sample, J, where it has one
    /// (Shelly `total`, Tasmota `Total`, the RDTech meters' mWh of the selected group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_j: Option<(f64, f64)>,
    /// Console lines with a board time (`benchboot: mark ...`, `benchboot: sync ...`) as
    /// they arrived on the recording host: `(host s, board CLOCK_BOOTTIME ns)`; only for
    /// [`Clock::Host`] traces whose recorder read the console.
    /// At most [`MAX_SAMPLES`] (a reader refuses more).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "bound::at_most_max_samples"
    )]
    pub console: Vec<(f64, u64)>,
}

/// The samples of a sensor PID 1 read itself as a [`Trace`] on the board's clock
/// ([`Clock::Board`]: no alignment needed). The period is the median spacing of the
/// samples (1 s with fewer than two); samples out of order or repeated are kept as
/// they are, for [`align()`] and [`integrate()`] to refuse with a reason.
pub fn onboard_trace(o: &OnboardTrace) -> Trace {
    let mut gaps: Vec<f64> = o
        .samples
        .windows(2)
        .take(MAX_SAMPLES)
        .map(|p| p[1].0.saturating_sub(p[0].0) as f64 / 1e9)
        .collect();
    let period_s = if gaps.is_empty() {
        1.0
    } else {
        let mid = gaps.len() / 2;
        *gaps.select_nth_unstable_by(mid, f64::total_cmp).1
    };
    Trace {
        meter: o.sensor.clone(),
        clock: Clock::Board,
        emulated: false,
        resolution_w: o.resolution_w,
        period_s,
        position: None,
        samples: o
            .samples
            .iter()
            .take(MAX_SAMPLES + 1)
            .map(|&(ns, w)| Sample::watts(ns as f64 / 1e9, w))
            .collect(),
        counter_j: None,
        console: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{Meter, Run};

    #[test]
    fn an_onboard_sensor_needs_no_alignment_and_integrates_within_its_uncertainty() {
        let run = Run::standard();
        let t = Meter {
            clock: Clock::Board,
            offset_s: 0.0,
            rate: 1.0,
            ..Meter::usb(8)
        }
        .trace(&run);
        let o = OnboardTrace {
            sensor: "ina226 i2c-1 0x40".into(),
            resolution_w: t.resolution_w,
            samples: t
                .samples
                .iter()
                .map(|s| ((s.t_s * 1e9).round() as u64, s.watts))
                .collect(),
        };
        let mut results = run.results();
        results.energy.onboard = Some(o.clone());
        let trace = onboard_trace(&o);
        assert!((trace.period_s - 0.01).abs() < 1e-6);
        let rep = energy_report(&trace, &results).unwrap();
        assert_eq!(rep.alignment.method, AlignMethod::SameClock);
        for (st, e) in run.steps.iter().zip(&rep.steps) {
            let f = e.figure.as_ref().unwrap();
            assert!((f.energy_j - run.energy(st.begin_s, st.end_s)).abs() <= f.uncertainty_j);
        }
        // Hostile: out of order, one sample.
        let mut bad = o.clone();
        bad.samples.swap(0, 1);
        assert!(energy_report(&onboard_trace(&bad), &results).is_err());
        bad.samples.truncate(1);
        assert_eq!(onboard_trace(&bad).period_s, 1.0);
        assert!(energy_report(&onboard_trace(&bad), &results).is_err());
    }

    #[test]
    fn a_host_trace_whose_patterns_are_missing_falls_back_to_the_console_and_says_so() {
        let run = Run::standard();
        let m = Meter {
            clock: Clock::Host,
            ..Meter::usb(9)
        };
        let mut trace = m.trace(&run);
        let mut b = 6.0;
        while b < run.end_s - 1.0 {
            trace.console.push((m.meter_s(b) + 0.008, (b * 1e9) as u64));
            b += 2.0;
        }
        let mut results = run.results();
        for s in &mut results.energy.sync {
            s.code = "1010101010101".into();
        }
        let rep = energy_report(&trace, &results).unwrap();
        assert_eq!(
            rep.alignment.method,
            AlignMethod::Console {
                lines: trace.console.len()
            }
        );
        assert!(
            rep.notes[0].starts_with("sync pattern `start` not found"),
            "{:?}",
            rep.notes
        );
        assert!(rep.notes[0].ends_with("aligned by the console stamps instead"));
        // Console-aligned to ~10 ms: the long steps still have figures within their ±.
        let st = &run.steps[0];
        let f = rep.steps[0].figure.as_ref().unwrap();
        assert!((f.energy_j - run.energy(st.begin_s, st.end_s)).abs() <= f.uncertainty_j);
        // Without stamps, the same document is refused, naming the pattern.
        trace.console.clear();
        let e = energy_report(&trace, &results).unwrap_err();
        assert!(
            matches!(e, AlignError::SyncNotFound { ref pattern, .. } if pattern == "start"),
            "{e}"
        );
    }
}
