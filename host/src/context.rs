//! What a report says around its tables: the run's context (board, kernel, clock...,
//! the isolation proof: census verdict, interrupts per step group, command line,
//! modules) and its warnings (emulated, mode fallbacks, error/warning events,
//! incomplete run, foreign processes, board health: throttling, frequency capping,
//! under-voltage, soft temperature limit, a wired link below its rating or with
//! interface errors).
//!
//! One module per section: `health` (clock, temperature, throttling), `isolation` (the
//! census verdict), `interrupts` (per step group), `links` (wired links' alerts); `grid` prints the context as a
//! table, `warnings` lists what the reader must know. Below [`crate::render`], which
//! puts it into the report.

mod grid;
mod health;
mod interrupts;
mod isolation;
mod links;
mod warnings;

use benchboot_results::RunResults;
use serde::{Deserialize, Serialize};

pub use grid::context_grid;
pub use health::condition_label;
pub use interrupts::{interrupt_groups, InterruptGroup, TOP_SOURCES};
pub use links::{errors_and_drops, link_alerts, link_error_lines, LINK_BELOW_RATING};
pub use warnings::{health_warnings, warnings, Warning};

/// The board name of a run made on this machine by `benchboot storage` (no board, no
/// PID 1): its clock starts with the command ([`crate::storage`]).
pub const HOST_BOARD: &str = "host";

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
    /// Lowest CPU clock seen in the health snapshots, Hz (`None`: not recorded).
    pub cpu_clock_hz: Option<u64>,
    /// Highest CPU clock seen in the health snapshots, Hz.
    #[serde(default)]
    pub cpu_clock_max_hz: Option<u64>,
    /// Where the CPU clock came from (firmware measurement or cpufreq).
    #[serde(default)]
    pub cpu_clock_source: Option<String>,
    /// Highest SoC temperature seen, millidegrees Celsius (`None`: not recorded).
    pub temperature_millicelsius: Option<i64>,
    /// Lowest SoC temperature seen, millidegrees Celsius.
    #[serde(default)]
    pub temperature_min_millicelsius: Option<i64>,
    /// Throttling / under-voltage flags over the run, in words (`None`: not recorded).
    pub throttled: Option<String>,
    /// Per health fact, `real (<source>)` or `unknown: <why>`, in
    /// [`benchboot_results::health::HealthFact::ALL`] order (empty: no health recorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub health_facts: Vec<(String, String)>,
    /// The census verdict over the run in words (`None`: no census).
    #[serde(default)]
    pub isolation: Option<String>,
    /// The interrupts raised during each group of steps (empty: not recorded).
    #[serde(default)]
    pub interrupts: Vec<InterruptGroup>,
    /// Why the interrupts were not readable, when no step has them.
    #[serde(default)]
    pub interrupts_unavailable: Option<String>,
    /// `/proc/cmdline` (`None`: not recorded).
    #[serde(default)]
    pub kernel_cmdline: Option<String>,
    /// The names of the modules loaded (`None`: not recorded).
    #[serde(default)]
    pub modules: Option<Vec<String>>,
    /// Names of the context fields this document does not record.
    pub not_recorded: Vec<String>,
    /// From PID 1's start to the last write of the results, seconds; for a host run
    /// (`host_run`) from the command's start (0 in documents before that was recorded).
    pub run_seconds: f64,
    /// True for a run made on this machine by `benchboot storage` ([`HOST_BOARD`]), not
    /// by a board's PID 1.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub host_run: bool,
    /// The command that made a host run: `benchboot memory` (a memory step and no
    /// storage target) or `benchboot storage`; empty for a board's run. Not in the JSON.
    #[serde(skip)]
    pub host_command: &'static str,
    /// True once every step of the plan was attempted.
    pub complete: bool,
    /// The SD card's identity from its own registers, one line per card (empty: no SD
    /// card, or a document before schema 1.10).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cards: Vec<String>,
    /// Where PID 1 found the boot card and how (`None`: not recorded, documents before
    /// 1.11 and host runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_card: Option<String>,
    /// The full-card check's verdict line (`None`: not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_check: Option<String>,
    /// The boot's stages in words ([`boot_line`]; `None`: not recorded, documents
    /// before 1.13).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot: Option<String>,
}

/// The boot's stages in words: each measured stage in seconds, each other stage with
/// why it has no figure; `None` when the document recorded none (before schema 1.13).
pub fn boot_line(r: &RunResults) -> Option<String> {
    use benchboot_results::Reading;
    let b = &r.boot;
    let stages = [
        ("before the kernel's clock", &b.before_kernel_ns),
        ("kernel to PID 1", &b.kernel_to_init_ns),
        ("PID 1 to the first step", &b.init_to_first_step_ns),
        ("PID 1 to the results link", &b.init_to_link_ns),
    ];
    let recorded = |s: &Reading<u64>| s != &Reading::default();
    if !stages.iter().any(|(_, s)| recorded(s)) {
        return None;
    }
    let p = benchboot_results::health::facts::printable;
    let words: Vec<String> = stages
        .iter()
        .map(|(name, s)| match s {
            Reading::Ok { value, source } => {
                let emulated = if r.emulated && source.contains("QEMU") {
                    " (EMULATED: QEMU's own start)"
                } else {
                    ""
                };
                format!("{name} {:.2} s{emulated}", *value as f64 / 1e9)
            }
            Reading::Unavailable { reason } => format!("{name}: not measured ({})", p(reason)),
        })
        .collect();
    Some(words.join("; "))
}

/// The SD cards of `r` in words, `<disk>: <summary>` each.
pub fn card_lines(r: &RunResults) -> Vec<String> {
    r.devices
        .iter()
        .filter_map(|d| Some(format!("{}: {}", d.name, d.card.as_ref()?.summary())))
        .collect()
}

/// The full-card check of `r` in one line, `None` when it did not run: the probe's
/// summary, then the whole-card pass's and where its write speed fell, when it ran.
pub fn card_check_line(r: &RunResults) -> Option<String> {
    let c = r.card_check.as_ref()?;
    // One line: what the document says is escaped (a newline in a reason or a device
    // name cannot start a line of its own).
    let esc = benchboot_results::text::escape;
    let mut line = format!("{}: {}", esc(&c.device), esc(&c.report.summary()));
    if let Some(f) = &c.report.full {
        line += &format!("; {}", esc(&f.summary()));
        for (i, x) in f.falls.iter().enumerate() {
            line += &format!(
                "; write speed falls at {}: {:.1} -> {:.1} MiB/s",
                benchboot_probe::human(x.at.saturating_sub(f.region.0)),
                x.before_mib_s,
                x.after_mib_s
            );
            // In bytes written since the card was opened, with the idle time before the
            // pass beside it (a document before schema 1.14 has neither).
            if let Some(w) = f.cache_words(x, i == 0) {
                line += &format!(" into the pass, {w}");
                if let (0, Some(b)) = (i, f.before) {
                    line += &format!(" ({:.2} s idle before the pass)", b.idle_ns as f64 / 1e9);
                }
            }
        }
    }
    Some(line)
}

/// Where the boot card was found, in one line: `mmcblk1: the whole disk whose MBR
/// carries ...`, or the nominal disk kept and why; `None` when not recorded.
pub fn boot_card_line(r: &RunResults) -> Option<String> {
    let c = r.boot_card.as_ref()?;
    let p = benchboot_results::health::facts::printable;
    Some(match &c.found {
        Some(found) => format!("{}: {}", p(found), p(&c.how)),
        None => format!(
            "{} (the image's name for it, not found): {}",
            p(&c.nominal),
            p(&c.how)
        ),
    })
}

/// Builds the context of `r`.
pub fn context(r: &RunResults) -> Context {
    let s = &r.system;
    let clocks: Vec<(u64, &str)> = health::snapshots(&r.health)
        .filter_map(|h| h.cpu_clock_hz())
        .collect();
    let temps: Vec<i64> = health::snapshots(&r.health)
        .filter_map(|h| h.temperature_millicelsius.value().copied())
        .collect();
    let mut not_recorded = Vec::new();
    if clocks.is_empty() {
        not_recorded.push("cpu_clock_hz".into());
    }
    if temps.is_empty() {
        not_recorded.push("temperature_millicelsius".into());
    }
    if r.health.is_empty() {
        not_recorded.push("throttled".into());
    }
    let isolation = isolation::isolation_summary(r);
    if isolation.is_none() {
        not_recorded.push("isolation".into());
    }
    let interrupts = interrupt_groups(&r.health);
    let interrupts_unavailable = if interrupts.is_empty() {
        interrupts::interrupts_reason(&r.health)
    } else {
        None
    };
    if interrupts.is_empty() && interrupts_unavailable.is_none() {
        not_recorded.push("interrupts".into());
    }
    let kernel_cmdline = s.kernel_cmdline.value().cloned();
    if kernel_cmdline.is_none() {
        not_recorded.push("kernel_cmdline".into());
    }
    let modules = s
        .modules
        .value()
        .map(|m| m.iter().map(|m| m.name.clone()).collect::<Vec<_>>());
    if modules.is_none() {
        not_recorded.push("modules".into());
    }
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
        cpu_clock_hz: clocks.iter().map(|c| c.0).min(),
        cpu_clock_max_hz: clocks.iter().map(|c| c.0).max(),
        cpu_clock_source: clocks.first().map(|c| c.1.to_owned()),
        temperature_millicelsius: temps.iter().copied().max(),
        temperature_min_millicelsius: temps.iter().copied().min(),
        throttled: health::throttle_summary(&r.health),
        health_facts: health::fact_rows(r),
        isolation,
        interrupts,
        interrupts_unavailable,
        kernel_cmdline,
        modules,
        not_recorded,
        run_seconds: s.written_ns.saturating_sub(s.init_started_ns) as f64 / 1e9,
        host_run: r.plan.board == HOST_BOARD,
        host_command: host_command(r),
        complete: r.complete,
        cards: card_lines(r),
        card_check: card_check_line(r),
        boot_card: boot_card_line(r),
        boot: boot_line(r),
    }
}

/// The command that made a host run ([`Context::host_command`]).
fn host_command(r: &RunResults) -> &'static str {
    if r.plan.board != HOST_BOARD {
        ""
    } else if r.plan.storage.targets.is_empty() && r.plan.memory.is_some() {
        "benchboot memory"
    } else {
        "benchboot storage"
    }
}

#[cfg(test)]
mod tests;
