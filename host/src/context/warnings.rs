//! A run's warnings: what the reader should know before trusting its figures.

use benchboot_results::{Condition, Reading, RunResults, Severity, StepHealth};
use serde::{Deserialize, Serialize};

use super::health::{condition_label, labels, snapshots};
use super::EMULATED_NOTICE;
use crate::units::block_size_label;

/// One thing the reader should know before trusting the figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// `emulated`, `mode-fallback`, `error`, `warning` (events), `incomplete`,
    /// `census` (a foreign user-space process), `verify`, `governor`, `health` (a condition flagged during steps),
    /// `health-earlier` (flags set since boot before the first step) or
    /// `health-unknown` (a hardware run whose throttle flags were not readable) or
    /// `schema-newer` (a document of a newer minor schema: its new fields are not shown),
    /// `link-degraded` (a wired link below its rating) or `link-errors` (interface errors
    /// or drops during the network tests), or `no-driver` (a device PID 1 found with no
    /// driver bound and none in the image: `USB 0bda:8153 (interface class ff, vendor
    /// specific): no driver in this image (...)`).
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
            Severity::Info => "note",
        };
        out.push(warn(kind, format!("{}: {}", e.step, e.message)));
    }
    for n in &r.modalias.no_driver {
        out.push(warn("no-driver", n.line()));
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
    for a in super::link_alerts(&r.network) {
        out.push(warn("link-degraded", a));
    }
    for e in super::link_error_lines(&r.network) {
        out.push(warn("link-errors", e));
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
            "only under-voltage was watched (raspberrypi-hwmon)".to_owned()
        } else {
            match super::health::facts(r)
                .into_iter()
                .find(|f| f.fact == benchboot_results::health::HealthFact::UnderVoltage)
                .map(|f| f.status)
            {
                Some(benchboot_results::health::FactStatus::Unknown { why }) => format!(
                    "under-voltage was not watched either ({})",
                    benchboot_results::health::facts::printable(&why)
                ),
                _ => "under-voltage was not watched either".to_owned(),
            }
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
