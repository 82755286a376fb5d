//! What a report says around its tables: the run's context (board, kernel, clock...)
//! and its warnings (emulated, mode fallbacks, error/warning events, incomplete run).

use benchboot_results::{RunResults, Severity};
use serde::{Deserialize, Serialize};

use crate::render::{block_size_label, Grid};

/// The banner every output carries for a QEMU run.
pub const EMULATED_NOTICE: &str = "EMULATED (QEMU): these figures say nothing about the hardware";

/// The run's context. Fields the results format does not carry yet are `None` and
/// listed in `not_recorded`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Context {
    pub run_id: String,
    pub board: String,
    /// True for a QEMU run: never a hardware result.
    pub emulated: bool,
    /// `major.minor` of the results document.
    pub schema_version: String,
    /// `uname -r`.
    pub kernel_release: String,
    /// `uname -m`.
    pub machine: String,
    /// `MemTotal`, bytes.
    pub mem_total_bytes: u64,
    /// The cpufreq governor in force while measuring; `None`: no cpufreq on the board.
    pub governor: Option<String>,
    /// The governor the plan asked for.
    pub governor_asked: Option<String>,
    /// CPU clock while measuring, Hz (`None`: not recorded).
    pub cpu_clock_hz: Option<u64>,
    /// SoC temperature, millidegrees Celsius (`None`: not recorded).
    pub temperature_millicelsius: Option<i64>,
    /// Throttling / under-voltage flags (`None`: not recorded).
    pub throttled: Option<String>,
    /// Names of the context fields this document does not record.
    pub not_recorded: Vec<String>,
    /// From PID 1's start to the last write of the results, seconds.
    pub run_seconds: f64,
    /// True once every step of the plan was attempted.
    pub complete: bool,
}

/// Builds the context of `r`.
pub fn context(r: &RunResults) -> Context {
    let s = &r.system;
    Context {
        run_id: r.run_id.clone(),
        board: r.board.clone(),
        emulated: r.emulated,
        schema_version: format!("{}.{}", r.schema_version.major, r.schema_version.minor),
        kernel_release: s.kernel_release.clone(),
        machine: s.machine.clone(),
        mem_total_bytes: s.mem_total_bytes,
        governor: s.governor.clone(),
        governor_asked: r.plan.storage.governor.clone(),
        // The results format (schema 1.x) has no clock, temperature or throttle fields yet.
        cpu_clock_hz: None,
        temperature_millicelsius: None,
        throttled: None,
        not_recorded: vec![
            "cpu_clock_hz".into(),
            "temperature_millicelsius".into(),
            "throttled".into(),
        ],
        run_seconds: s.written_ns.saturating_sub(s.init_started_ns) as f64 / 1e9,
        complete: r.complete,
    }
}

const NOT_RECORDED: &str = "not recorded";

/// The context as a two-column table.
pub fn context_grid(c: &Context) -> Grid {
    let mut g = Grid::new(vec!["context".into(), "value".into()]);
    g.left_columns = 2;
    let opt = |v: Option<String>| v.unwrap_or_else(|| NOT_RECORDED.into());
    let rows: Vec<(&str, String)> = vec![
        ("board", c.board.clone()),
        ("run", c.run_id.clone()),
        (
            "hardware",
            if c.emulated {
                "EMULATED (QEMU), not a hardware result".into()
            } else {
                "real board".into()
            },
        ),
        ("kernel", c.kernel_release.clone()),
        ("machine", c.machine.clone()),
        ("memory", format!("{} MiB", c.mem_total_bytes >> 20)),
        (
            "cpufreq governor",
            match (&c.governor, &c.governor_asked) {
                (Some(g), _) => g.clone(),
                (None, Some(asked)) => format!("none (no cpufreq; the plan asked for {asked})"),
                (None, None) => "none (no cpufreq)".into(),
            },
        ),
        (
            "CPU clock",
            opt(c
                .cpu_clock_hz
                .map(|hz| format!("{:.0} MHz", hz as f64 / 1e6))),
        ),
        (
            "temperature",
            opt(c
                .temperature_millicelsius
                .map(|m| format!("{:.1} °C", m as f64 / 1000.0))),
        ),
        ("throttling / under-voltage", opt(c.throttled.clone())),
        ("results schema", c.schema_version.clone()),
        (
            "run length",
            format!("{:.1} s from PID 1 start", c.run_seconds),
        ),
        (
            "complete",
            if c.complete {
                "yes".into()
            } else {
                "NO: not every step ran".into()
            },
        ),
    ];
    for (k, v) in rows {
        g.push(vec![k.into(), v]);
    }
    g
}

/// One thing the reader should know before trusting the figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// `emulated`, `mode-fallback`, `error`, `warning` (events), `incomplete`,
    /// `census`, `verify` or `governor`.
    pub kind: String,
    pub message: String,
}

fn warn(kind: &str, message: String) -> Warning {
    Warning {
        kind: kind.into(),
        message,
    }
}

/// Every warning of `r`, the emulation first.
pub fn warnings(r: &RunResults) -> Vec<Warning> {
    let mut out = Vec::new();
    if r.emulated {
        out.push(warn("emulated", EMULATED_NOTICE.into()));
    }
    let fallbacks: Vec<_> = r
        .storage
        .iter()
        .filter(|m| m.mode != m.requested_mode)
        .collect();
    if !fallbacks.is_empty() {
        let mut sizes: Vec<u64> = fallbacks.iter().map(|m| m.block_size).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let sizes: Vec<String> = sizes.into_iter().map(block_size_label).collect();
        let why = fallbacks
            .iter()
            .find_map(|m| m.note.clone())
            .map_or(String::new(), |n| format!(" (e.g. \"{n}\")"));
        out.push(warn(
            "mode-fallback",
            format!(
                "{} measurement(s) asked for {} but ran {}: block sizes {}{why}",
                fallbacks.len(),
                fallbacks[0].requested_mode.name(),
                fallbacks[0].mode.name(),
                sizes.join(", ")
            ),
        ));
    }
    if let (Some(asked), Some(got)) = (&r.plan.storage.governor, &r.system.governor) {
        if asked != got {
            out.push(warn(
                "governor",
                format!("the plan asked for cpufreq governor {asked}, {got} was in force"),
            ));
        }
    }
    for e in &r.events {
        let kind = match e.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        out.push(warn(kind, format!("{}: {}", e.step, e.message)));
    }
    if !r.complete {
        out.push(warn(
            "incomplete",
            "the run did not finish every step of its plan".into(),
        ));
    }
    for c in r.census.iter().filter(|c| !c.only_pid1()) {
        out.push(warn(
            "census",
            format!(
                "census {}: other user-space processes ran besides PID 1",
                c.at
            ),
        ));
    }
    for v in &r.verify {
        if let Some(at) = v.first_mismatch {
            out.push(warn(
                "verify",
                format!(
                    "verify {}: data read back wrong at byte {at} of {}",
                    v.target, v.bytes
                ),
            ));
        }
    }
    out
}
