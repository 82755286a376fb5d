//! Power traces and what they say about a run: the energy each step cost.
//!
//! Pure: no I/O but what a caller hands in. The host's meters (`host/src/power`) and
//! PID 1's on-board sensors produce [`Trace`]s through the decoders of [`decode`];
//! [`align`] finds where the board's clock falls on the meter's (the sync patterns
//! PID 1 runs, or the console lines' arrival times); [`integrate`] gives each step's
//! joules, watts above idle, J/GiB and nJ/bit with their uncertainty, from the step
//! windows [`windows`] reads out of a results document.
//!
//! Units are in names: `_s` seconds, `_w` watts, `_j` joules, `_ns` nanoseconds.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

pub mod align;
pub mod decode;
pub mod integrate;
mod series;
#[cfg(test)]
mod synth;
pub mod windows;

pub use align::{align, AlignError, AlignMethod, Alignment, SyncFound};
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
    /// The readings, in time order.
    pub samples: Vec<Sample>,
    /// The meter's own energy counter at the first and last sample, J, where it has one
    /// (Shelly `total`, Tasmota `Total`, the RDTech meters' mWh of the selected group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_j: Option<(f64, f64)>,
    /// Console lines with a board time (`benchboot: mark ...`, `benchboot: sync ...`) as
    /// they arrived on the recording host: `(host s, board CLOCK_BOOTTIME ns)`; only for
    /// [`Clock::Host`] traces whose recorder read the console.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub console: Vec<(f64, u64)>,
}
