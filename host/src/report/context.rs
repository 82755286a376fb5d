//! What a report says around its tables: the run's context (board, kernel, clock...)
//! and its warnings (emulated, mode fallbacks, error/warning events, incomplete run,
//! board health: throttling, frequency capping, under-voltage, soft temperature limit).

use benchboot_results::{Condition, Reading, RunResults, Severity, StepHealth};
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
    /// `census`, `verify`, `governor`, `health` (a condition flagged during steps),
    /// `health-earlier` (flags set since boot before the first step) or
    /// `health-unknown` (a hardware run whose throttle flags were not readable).
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
    use benchboot_results::{Health, HealthScope, SystemInfo, Throttled};

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
