//! What a report says around its tables: the run's context (board, kernel, clock...,
//! the isolation proof: census verdict, interrupts per step group, command line,
//! modules) and its warnings (emulated, mode fallbacks, error/warning events,
//! incomplete run, foreign processes, board health: throttling, frequency capping,
//! under-voltage, soft temperature limit).

use benchboot_results::{
    Condition, HealthScope, InterruptDelta, Reading, RunResults, Severity, StepHealth,
};
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
    /// From PID 1's start to the last write of the results, seconds.
    pub run_seconds: f64,
    /// True once every step of the plan was attempted.
    pub complete: bool,
}

/// The interrupts raised during one group of steps, summed per source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterruptGroup {
    /// `storage`, `device reads`, `random I/O`, `verify` or `network`.
    pub group: String,
    /// Steps of the group with interrupt counts.
    pub steps: usize,
    /// Every interrupt of the group.
    pub total: u64,
    /// How many sources raised any.
    pub sources: usize,
    /// The sources that raised the most, most first ([`TOP_SOURCES`]).
    pub top: Vec<InterruptDelta>,
}

/// How many sources a group names.
pub const TOP_SOURCES: usize = 3;

/// The group a step belongs to, in report order.
fn scope_group(s: &HealthScope) -> (u8, &'static str) {
    match s {
        HealthScope::Storage { .. } => (0, "storage"),
        HealthScope::DeviceRead { .. } => (1, "device reads"),
        HealthScope::Random { .. } => (2, "random I/O"),
        HealthScope::Verify { .. } => (3, "verify"),
        HealthScope::Network { .. } => (4, "network"),
    }
}

/// The interrupts per group of steps (only steps that recorded them).
pub fn interrupt_groups(health: &[StepHealth]) -> Vec<InterruptGroup> {
    let mut groups: Vec<(u8, &str, usize, Vec<InterruptDelta>)> = Vec::new();
    for h in health {
        let Some(deltas) = h.interrupts.value() else {
            continue;
        };
        let (order, name) = scope_group(&h.scope);
        let i = match groups.iter().position(|g| g.0 == order) {
            Some(i) => i,
            None => {
                groups.push((order, name, 0, Vec::new()));
                groups.len() - 1
            }
        };
        let g = &mut groups[i];
        g.2 += 1;
        for d in deltas {
            match g.3.iter_mut().find(|s| s.source == d.source) {
                Some(s) => s.count = s.count.saturating_add(d.count),
                None => g.3.push(d.clone()),
            }
        }
    }
    groups.sort_by_key(|g| g.0);
    groups
        .into_iter()
        .map(|(_, name, steps, mut sums)| {
            sums.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.source.cmp(&b.source)));
            InterruptGroup {
                group: name.into(),
                steps,
                total: sums.iter().fold(0u64, |a, d| a.saturating_add(d.count)),
                sources: sums.len(),
                top: sums.into_iter().take(TOP_SOURCES).collect(),
            }
        })
        .collect()
}

/// `12345` → `12,345`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The census verdict over the run in words; `None` without a census.
fn isolation_summary(r: &RunResults) -> Option<String> {
    let iso = r.isolation();
    if iso.censuses == 0 {
        return None;
    }
    let at = if iso.censuses == 1 {
        "at the 1 census".to_owned()
    } else {
        format!("at all {} censuses", iso.censuses)
    };
    let threads = match iso.kernel_threads {
        Some((lo, hi)) if lo != hi => format!("; {lo}–{hi} kernel threads"),
        Some((n, _)) => format!("; {n} kernel threads"),
        None => String::new(),
    };
    if !iso.isolated {
        let who: Vec<String> = iso
            .foreign
            .iter()
            .map(|(at, p)| format!("{} {} (parent {}) at {at}", p.pid, p.comm, p.ppid))
            .collect();
        return Some(format!(
            "NOT ISOLATED: foreign user-space process(es) {}{threads}",
            who.join(", ")
        ));
    }
    let who = if iso.max_workers == 0 {
        "PID 1 only in user space".to_owned()
    } else {
        format!(
            "PID 1 + its own workers only (up to {} at once) in user space",
            iso.max_workers
        )
    };
    Some(format!("{who} {at}{threads}"))
}

/// Why no step has interrupt counts: the first reason recorded, if any.
fn interrupts_reason(health: &[StepHealth]) -> Option<String> {
    health.iter().find_map(|h| match &h.interrupts {
        Reading::Unavailable { reason } if reason != "not recorded" => Some(reason.clone()),
        _ => None,
    })
}

/// Builds the context of `r`.
pub fn context(r: &RunResults) -> Context {
    let s = &r.system;
    let clocks: Vec<(u64, &str)> = snapshots(&r.health)
        .filter_map(|h| h.cpu_clock_hz())
        .collect();
    let temps: Vec<i64> = snapshots(&r.health)
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
    let isolation = isolation_summary(r);
    if isolation.is_none() {
        not_recorded.push("isolation".into());
    }
    let interrupts = interrupt_groups(&r.health);
    let interrupts_unavailable = if interrupts.is_empty() {
        interrupts_reason(&r.health)
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
        throttled: throttle_summary(&r.health),
        isolation,
        interrupts,
        interrupts_unavailable,
        kernel_cmdline,
        modules,
        not_recorded,
        run_seconds: s.written_ns.saturating_sub(s.init_started_ns) as f64 / 1e9,
        complete: r.complete,
    }
}

/// Every health snapshot of the run, in order (before, after of each step).
fn snapshots(health: &[StepHealth]) -> impl Iterator<Item = &benchboot_results::Health> {
    health.iter().flat_map(|h| [&h.before, &h.after])
}

/// How a report names a condition.
pub fn condition_label(c: Condition) -> &'static str {
    match c {
        Condition::UnderVoltage => "under-voltage",
        Condition::FrequencyCapped => "ARM frequency capping",
        Condition::Throttled => "throttling",
        Condition::SoftTempLimit => "soft temperature limit",
    }
}

fn labels(cs: &[Condition]) -> String {
    cs.iter()
        .map(|&c| condition_label(c))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The throttle / under-voltage state over the run in words; `None` without health
/// records (documents before schema 1.3).
fn throttle_summary(health: &[StepHealth]) -> Option<String> {
    if health.is_empty() {
        return None;
    }
    let words = snapshots(health)
        .filter(|h| h.throttled.value().is_some())
        .count();
    let alarms = snapshots(health)
        .filter(|h| h.under_voltage_alarm.value().is_some())
        .count();
    let mut during: Vec<Condition> = health.iter().flat_map(StepHealth::during).collect();
    during.sort();
    during.dedup();
    let steps = health.iter().filter(|h| !h.during().is_empty()).count();
    let earlier = health
        .iter()
        .find(|h| h.before.throttled.value().is_some())
        .map(StepHealth::earlier)
        .unwrap_or_default();
    let mut parts = Vec::new();
    if !during.is_empty() {
        parts.push(format!("{} during {steps} step(s)", labels(&during)));
    }
    if !earlier.is_empty() {
        parts.push(format!("{} already flagged since boot", labels(&earlier)));
    }
    if words == 0 && alarms == 0 {
        let why = match snapshots(health).next().map(|h| &h.throttled) {
            Some(Reading::Unavailable { reason }) => reason.clone(),
            _ => "no source".into(),
        };
        parts.push(format!("not readable ({why})"));
    } else if parts.is_empty() {
        let what = if words > 0 {
            "firmware flags"
        } else {
            "under-voltage alarm only (raspberrypi-hwmon; the firmware's flags were not readable)"
        };
        parts.push(format!(
            "none flagged in {} snapshot(s) ({what})",
            words.max(alarms)
        ));
    } else if words == 0 {
        parts.push("under-voltage alarm only (raspberrypi-hwmon)".into());
    }
    Some(parts.join("; "))
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
            opt(c.cpu_clock_hz.map(|lo| {
                let mhz = |hz: u64| format!("{:.0}", hz as f64 / 1e6);
                let hi = c.cpu_clock_max_hz.unwrap_or(lo);
                let range = if hi == lo {
                    mhz(lo)
                } else {
                    format!("{}–{}", mhz(lo), mhz(hi))
                };
                let source = c
                    .cpu_clock_source
                    .as_deref()
                    .map_or(String::new(), |s| format!(" ({s})"));
                format!("{range} MHz{source}")
            })),
        ),
        (
            "temperature",
            opt(c.temperature_millicelsius.map(|hi| {
                let deg = |m: i64| format!("{:.1}", m as f64 / 1000.0);
                match c.temperature_min_millicelsius {
                    Some(lo) if lo != hi => format!("{}–{} °C", deg(lo), deg(hi)),
                    _ => format!("{} °C", deg(hi)),
                }
            })),
        ),
        ("throttling / under-voltage", opt(c.throttled.clone())),
        ("isolation", opt(c.isolation.clone())),
    ];
    let mut rows: Vec<(String, String)> =
        rows.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    if c.interrupts.is_empty() {
        rows.push((
            "interrupts".into(),
            match &c.interrupts_unavailable {
                Some(why) => format!("not readable ({why})"),
                None => NOT_RECORDED.into(),
            },
        ));
    }
    for g in &c.interrupts {
        rows.push((format!("interrupts during {}", g.group), interrupt_words(g)));
    }
    rows.push(("kernel command line".into(), opt(c.kernel_cmdline.clone())));
    rows.push((
        "modules".into(),
        opt(c.modules.as_ref().map(|m| {
            if m.is_empty() {
                "none loaded".into()
            } else {
                format!("{} loaded: {}", m.len(), m.join(", "))
            }
        })),
    ));
    let tail: Vec<(&str, String)> = vec![
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
    rows.extend(tail.into_iter().map(|(k, v)| (k.to_owned(), v)));
    for (k, v) in rows {
        g.push(vec![k, v]);
    }
    g
}

/// `104 mmc1 12,345; 180 arch_timer 9,876; … (+4 more; 23,456 in all over 12 steps)`.
fn interrupt_words(g: &InterruptGroup) -> String {
    if g.top.is_empty() {
        return format!("none counted over {} step(s)", g.steps);
    }
    let top: Vec<String> = g
        .top
        .iter()
        .map(|d| format!("{} {}", d.source, grouped(d.count)))
        .collect();
    let more = g.sources.saturating_sub(g.top.len());
    let more = if more > 0 {
        format!("+{more} more source(s); ")
    } else {
        String::new()
    };
    format!(
        "{} ({more}{} in all over {} step(s))",
        top.join("; "),
        grouped(g.total),
        g.steps
    )
}

/// One thing the reader should know before trusting the figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// `emulated`, `mode-fallback`, `error`, `warning` (events), `incomplete`,
    /// `census` (a foreign user-space process), `verify`, `governor`, `health` (a condition flagged during steps),
    /// `health-earlier` (flags set since boot before the first step) or
    /// `health-unknown` (a hardware run whose throttle flags were not readable) or
    /// `schema-newer` (a document of a newer minor schema: its new fields are not shown).
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
    let (major, minor) = (r.schema_version.major, r.schema_version.minor);
    if minor > benchboot_results::SCHEMA_MINOR {
        out.push(warn(
            "schema-newer",
            format!(
                "written with results schema {major}.{minor}, newer than this benchboot's \
                 {major}.{}: what the newer fields record is not shown; update benchboot",
                benchboot_results::SCHEMA_MINOR
            ),
        ));
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
    for c in &r.census {
        let foreign = c.offenders();
        if foreign.is_empty() {
            continue;
        }
        let who: Vec<String> = foreign
            .iter()
            .map(|p| format!("{} {} (parent {})", p.pid, p.comm, p.ppid))
            .collect();
        out.push(warn(
            "census",
            format!(
                "census {}: user-space process(es) besides PID 1 and its workers: {}; the \
                 run was not isolated",
                c.at,
                who.join(", ")
            ),
        ));
    }
    out.extend(health_warnings(r));
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

/// The board-health warnings: one per condition flagged during steps (naming them),
/// flags already set since boot before the first step, and a hardware run whose
/// throttle flags could not be read.
pub fn health_warnings(r: &RunResults) -> Vec<Warning> {
    let mut out = Vec::new();
    for c in Condition::ALL {
        let steps: Vec<&StepHealth> = r
            .health
            .iter()
            .filter(|h| h.during().contains(&c))
            .collect();
        if steps.is_empty() {
            continue;
        }
        let words: Vec<String> = steps
            .iter()
            .filter_map(|h| h.after.throttled.value().map(|t| format!("{:#x}", t.raw)))
            .collect();
        let flags = if words.is_empty() {
            " (raspberrypi-hwmon under-voltage alarm)".to_owned()
        } else {
            let mut w = words;
            w.dedup();
            format!(" (firmware flags after: {})", w.join(", "))
        };
        out.push(warn(
            "health",
            format!(
                "{} during {} step(s): {}{flags}; their figures are marked !",
                condition_label(c),
                steps.len(),
                steps
                    .iter()
                    .map(|h| h.step.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    if let Some(first) = r
        .health
        .iter()
        .find(|h| h.before.throttled.value().is_some())
    {
        let earlier = first.earlier();
        if !earlier.is_empty() {
            out.push(warn(
                "health-earlier",
                format!(
                    "the firmware's since-boot flags already showed {} before step {}: it \
                     happened at boot or earlier in the run; while that flag stays set, a \
                     recurrence shows only if current when a snapshot is taken",
                    labels(&earlier),
                    first.step
                ),
            ));
        }
    }
    let readable = snapshots(&r.health).any(|h| h.throttled.value().is_some());
    if !r.emulated && !r.health.is_empty() && !readable {
        let why = snapshots(&r.health)
            .find_map(|h| match &h.throttled {
                Reading::Unavailable { reason } => Some(reason.clone()),
                Reading::Ok { .. } => None,
            })
            .unwrap_or_default();
        let uv = if snapshots(&r.health).any(|h| h.under_voltage_alarm.value().is_some()) {
            "only under-voltage was watched (raspberrypi-hwmon)"
        } else {
            "under-voltage was not watched either"
        };
        out.push(warn(
            "health-unknown",
            format!(
                "the firmware's throttle flags could not be read ({why}): throttling and \
                 frequency capping are unknown; {uv}"
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchboot_plan::Plan;
    use benchboot_results::{Census, Health, KernelModule, Process, SystemInfo, Throttled};

    fn step(name: &str, before: u32, after: u32) -> StepHealth {
        let snap = |raw: u32| Health {
            throttled: Reading::ok(Throttled::from_raw(raw), "mailbox:GET_THROTTLED"),
            ..Health::default()
        };
        StepHealth {
            step: name.into(),
            scope: HealthScope::Verify {
                target: name.into(),
            },
            before: snap(before),
            after: snap(after),
            interrupts: Reading::default(),
        }
    }

    fn run(health: Vec<StepHealth>) -> RunResults {
        let mut r = RunResults::new("r".into(), Plan::example(), SystemInfo::default());
        r.emulated = false;
        r.health = health;
        r
    }

    fn kinds(r: &RunResults) -> Vec<String> {
        health_warnings(r).into_iter().map(|w| w.kind).collect()
    }

    #[test]
    fn flags_set_since_boot_before_the_first_step_are_an_earlier_warning_only() {
        let r = run(vec![
            step("a", 0x10000, 0x10000),
            step("b", 0x10000, 0x10000),
        ]);
        assert_eq!(kinds(&r), ["health-earlier"]);
        let w = &health_warnings(&r)[0];
        assert!(
            w.message.contains("under-voltage before step a"),
            "{}",
            w.message
        );
        assert_eq!(
            context(&r).throttled.as_deref(),
            Some("under-voltage already flagged since boot")
        );
    }

    #[test]
    fn soft_temperature_limit_during_a_step_is_named() {
        let r = run(vec![step("a", 0, 0), step("b", 0, 0x80008)]);
        let w = health_warnings(&r);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].kind, "health");
        assert!(
            w[0].message.starts_with(
                "soft temperature limit during 1 step(s): b (firmware flags after: 0x80008)"
            ),
            "{}",
            w[0].message
        );
    }

    #[test]
    fn unreadable_flags_on_hardware_are_a_warning_and_none_in_qemu() {
        let mut s = step("a", 0, 0);
        s.before.throttled = Reading::unavailable("/dev/vcio: No such file or directory");
        s.after.throttled = s.before.throttled.clone();
        let mut r = run(vec![s]);
        assert_eq!(kinds(&r), ["health-unknown"]);
        assert!(health_warnings(&r)[0].message.contains("/dev/vcio"));
        assert!(context(&r)
            .throttled
            .unwrap()
            .starts_with("not readable (/dev/vcio"));
        r.emulated = true;
        assert!(kinds(&r).is_empty());
        // No health at all (schema before 1.3): nothing said, context "not recorded".
        let r = run(vec![]);
        assert!(kinds(&r).is_empty());
        assert_eq!(context(&r).throttled, None);
        assert!(context(&r).not_recorded.contains(&"throttled".to_owned()));
    }

    fn process(pid: u32, ppid: u32, comm: &str) -> Process {
        Process {
            pid,
            ppid,
            comm: comm.into(),
        }
    }

    fn with_interrupts(mut h: StepHealth, scope: HealthScope, d: &[(&str, u64)]) -> StepHealth {
        h.scope = scope;
        h.interrupts = Reading::ok(
            d.iter()
                .map(|(s, n)| InterruptDelta {
                    source: (*s).into(),
                    count: *n,
                })
                .collect(),
            "/proc/interrupts",
        );
        h
    }

    fn value<'a>(g: &'a crate::render::Grid, key: &str) -> &'a str {
        &g.rows.iter().find(|r| r[0] == key).unwrap()[1]
    }

    #[test]
    fn isolation_interrupts_cmdline_and_modules_in_the_context() {
        let storage = |bs| HealthScope::Storage {
            target: "ext4".into(),
            mode: benchboot_plan::Mode::Sync,
            block_size: bs,
        };
        let mut r = run(vec![
            with_interrupts(
                step("storage.ext4.sync.bs512", 0, 0),
                storage(512),
                &[
                    ("104 mmc1", 12_000),
                    ("180 arch_timer", 900),
                    ("IPI0 Rescheduling interrupts", 4),
                ],
            ),
            with_interrupts(
                step("storage.ext4.sync.bs4096", 0, 0),
                storage(4096),
                &[
                    ("104 mmc1", 345),
                    ("180 arch_timer", 100),
                    ("62 DMA IRQ", 2),
                ],
            ),
            with_interrupts(
                step("verify.ext4", 0, 0),
                HealthScope::Verify {
                    target: "ext4".into(),
                },
                &[],
            ),
        ]);
        let init = process(1, 0, "benchboot-init");
        r.push_census(Census::new(
            "before-storage",
            vec![init.clone()],
            vec!["kthreadd".into(); 72],
        ));
        r.push_census(Census::new(
            "after-storage",
            vec![init.clone(), process(40, 1, "benchboot-init")],
            vec!["kthreadd".into(); 74],
        ));
        r.system.kernel_cmdline =
            Reading::ok("console=ttyS0 benchboot.plan=plan".into(), "/proc/cmdline");
        r.system.modules = Reading::ok(
            vec![KernelModule {
                name: "dwc2".into(),
                size_bytes: 1,
                refcount: Some(0),
                used_by: vec![],
            }],
            "/proc/modules",
        );
        let c = context(&r);
        assert_eq!(c.interrupts.len(), 2);
        assert_eq!(
            (
                c.interrupts[0].group.as_str(),
                c.interrupts[0].steps,
                c.interrupts[0].total,
                c.interrupts[0].sources
            ),
            ("storage", 2, 13_351, 4)
        );
        assert_eq!(c.interrupts[0].top[0].count, 12_345);
        let g = context_grid(&c);
        assert_eq!(
            value(&g, "isolation"),
            "PID 1 + its own workers only (up to 1 at once) in user space at all 2 censuses; \
             72–74 kernel threads"
        );
        assert_eq!(
            value(&g, "interrupts during storage"),
            "104 mmc1 12,345; 180 arch_timer 1,000; IPI0 Rescheduling interrupts 4 (+1 more \
             source(s); 13,351 in all over 2 step(s))"
        );
        assert_eq!(
            value(&g, "interrupts during verify"),
            "none counted over 1 step(s)"
        );
        assert_eq!(
            value(&g, "kernel command line"),
            "console=ttyS0 benchboot.plan=plan"
        );
        assert_eq!(value(&g, "modules"), "1 loaded: dwc2");
        assert!(
            warnings(&r).iter().all(|w| w.kind != "census"),
            "workers are allowed"
        );
        for k in ["isolation", "interrupts", "kernel_cmdline", "modules"] {
            assert!(!c.not_recorded.contains(&k.to_owned()), "{k}");
        }

        // A foreign process: the verdict says who, and a warning.
        r.push_census(Census::new(
            "after-network",
            vec![init, process(77, 2, "modprobe")],
            vec![],
        ));
        let g = context_grid(&context(&r));
        assert!(
            value(&g, "isolation").starts_with(
                "NOT ISOLATED: foreign user-space process(es) 77 modprobe (parent 2) at after-network"
            ),
            "{}",
            value(&g, "isolation")
        );
        let w: Vec<Warning> = warnings(&r)
            .into_iter()
            .filter(|w| w.kind == "census")
            .collect();
        assert_eq!(w.len(), 1);
        assert!(
            w[0].message.contains("after-network")
                && w[0].message.contains("77 modprobe (parent 2)")
        );
    }

    #[test]
    fn old_documents_say_not_recorded_and_unreadable_interrupts_say_why() {
        let r = run(vec![step("a", 0, 0)]);
        let c = context(&r);
        for k in ["isolation", "interrupts", "kernel_cmdline", "modules"] {
            assert!(c.not_recorded.contains(&k.to_owned()), "{k}");
        }
        let g = context_grid(&c);
        assert_eq!(value(&g, "isolation"), "not recorded");
        assert_eq!(value(&g, "interrupts"), "not recorded");
        let mut s = step("a", 0, 0);
        s.interrupts = Reading::unavailable("/proc/interrupts: No such file or directory");
        let g = context_grid(&context(&run(vec![s])));
        assert_eq!(
            value(&g, "interrupts"),
            "not readable (/proc/interrupts: No such file or directory)"
        );
    }

    #[test]
    fn a_newer_minor_schema_is_a_warning() {
        let mut r = run(Vec::new());
        assert!(warnings(&r).iter().all(|w| w.kind != "schema-newer"));
        r.schema_version.minor = benchboot_results::SCHEMA_MINOR + 94;
        let w: Vec<_> = warnings(&r)
            .into_iter()
            .filter(|w| w.kind == "schema-newer")
            .collect();
        assert_eq!(w.len(), 1);
        let newer = format!("1.{}", benchboot_results::SCHEMA_MINOR + 94);
        assert!(w[0].message.contains(&newer), "{}", w[0].message);
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000), "1,000");
        assert_eq!(grouped(12_345_678), "12,345,678");
        assert_eq!(grouped(u64::MAX), "18,446,744,073,709,551,615");
    }

    #[test]
    fn clean_flags_say_so() {
        let r = run(vec![step("a", 0, 0)]);
        assert!(kinds(&r).is_empty());
        assert_eq!(
            context(&r).throttled.as_deref(),
            Some("none flagged in 2 snapshot(s) (firmware flags)")
        );
    }
}
