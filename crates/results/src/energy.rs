//! What PID 1 records so a power trace can be tied to its steps (schema 1.13): the idle
//! baselines, the sync patterns a meter with its own clock is aligned by, the samples of
//! a sensor PID 1 reads itself, and the boot's stages. Every time is the board's
//! `CLOCK_BOOTTIME`, ns, the clock of [`crate::Health::at_ns`] (so every step's window,
//! `health[].before.at_ns ..= health[].after.at_ns`, is on it too).
//!
//! The alignment and the joules are computed by `benchboot-energy` on the host; this
//! module only holds what the board saw.

use serde::{Deserialize, Serialize};

use crate::Reading;

/// Everything of a run that a power trace is aligned and integrated against.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EnergyMarks {
    /// The busy/idle patterns, in the order they ran (`start` first, `end` last).
    #[serde(default)]
    pub sync: Vec<SyncMark>,
    /// The idle phases: nothing runs but PID 1 sleeping (`radios-off` first, then one
    /// per link brought up, named `link <name>`).
    #[serde(default)]
    pub idle: Vec<IdleMark>,
    /// Samples of a power sensor PID 1 read itself, on its own clock (`None`: the board
    /// has none, or the plan did not ask).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub onboard: Option<OnboardTrace>,
}

impl EnergyMarks {
    /// True when PID 1 recorded nothing for energy.
    pub fn is_empty(&self) -> bool {
        self.sync.is_empty() && self.idle.is_empty() && self.onboard.is_none()
    }
}

/// One sync pattern: slot `i` ran from `begin_ns + i * slot_ns` for `slot_ns`, every CPU
/// busy when `code[i]` is `'1'`, PID 1 asleep when `'0'`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncMark {
    /// `start` or `end`.
    pub at: String,
    /// `CLOCK_BOOTTIME` at the first slot's start, ns.
    pub begin_ns: u64,
    /// Length of one slot, ns.
    pub slot_ns: u64,
    /// The slots, `'1'` busy and `'0'` idle (Barker 13 by default: `1111100110101`).
    pub code: String,
    /// `CLOCK_BOOTTIME` when the last slot ended, as measured (≥ begin + len × slot).
    pub end_ns: u64,
}

impl SyncMark {
    /// The slots as booleans (anything but `'1'` is idle).
    pub fn slots(&self) -> Vec<bool> {
        self.code.chars().map(|c| c == '1').collect()
    }
}

/// One idle phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdleMark {
    /// `radios-off`, or `link <interface>` with that link up.
    pub phase: String,
    pub begin_ns: u64,
    pub end_ns: u64,
}

/// A sensor's samples as PID 1 read them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct OnboardTrace {
    /// What was read, e.g. `axp20x-usb /sys/class/power_supply/axp20x-usb` or
    /// `ina226 i2c-1 0x40 (shunt 0.1 ohm)`.
    pub sensor: String,
    /// One reading's resolution, W.
    pub resolution_w: f64,
    /// `(CLOCK_BOOTTIME ns, W)`, in time order.
    pub samples: Vec<(u64, f64)>,
}

/// How long the boot took, stage by stage; a stage this run cannot show says why.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BootStages {
    /// Before the kernel's clock started (the boot ROM, the firmware or boot loader and
    /// the kernel's own unpacking), ns: the ARM generic timer's count (running since the
    /// firmware started it) minus `CLOCK_MONOTONIC`, both read by PID 1 together.
    pub before_kernel_ns: Reading<u64>,
    /// The kernel's clock at PID 1's first instruction, ns (`CLOCK_BOOTTIME`).
    pub kernel_to_init_ns: Reading<u64>,
    /// PID 1's start to the results link up, ns.
    pub init_to_link_ns: Reading<u64>,
    /// PID 1's start to the first measurement's start, ns.
    pub init_to_first_step_ns: Reading<u64>,
}
