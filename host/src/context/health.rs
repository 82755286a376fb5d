//! The context's board health: every snapshot of the run, how a report names each
//! condition, and the throttle / under-voltage state over the run in words.

use benchboot_results::health::facts::printable;
use benchboot_results::health::{health_facts, FactState, FactStatus};
use benchboot_results::{Condition, Health, Reading, RunResults, StepHealth};

/// Every health snapshot of the run, in order (before, after of each step).
pub(super) fn snapshots(health: &[StepHealth]) -> impl Iterator<Item = &Health> {
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

/// Conditions named, comma-separated.
pub(super) fn labels(cs: &[Condition]) -> String {
    cs.iter()
        .map(|&c| condition_label(c))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The throttle / under-voltage state over the run in words; `None` without health
/// records (documents before schema 1.3).
pub(super) fn throttle_summary(health: &[StepHealth]) -> Option<String> {
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

/// Which health facts the run gave and which it did not: the document's own summary
/// (PID 1 writes it), else derived from its snapshots (documents before 1.11).
pub fn facts(r: &RunResults) -> Vec<FactState> {
    if !r.health_facts.is_empty() {
        return r.health_facts.clone();
    }
    if r.health.is_empty() {
        return Vec::new();
    }
    health_facts(snapshots(&r.health))
}

/// [`facts`] as context rows: (`health: <fact>`, `real (<source>)` or
/// `unknown: <why>`).
pub(super) fn fact_rows(r: &RunResults) -> Vec<(String, String)> {
    facts(r)
        .into_iter()
        .map(|f| {
            let value = match f.status {
                FactStatus::Real { source } => format!("real ({})", printable(&source)),
                FactStatus::Unknown { why } => format!("unknown: {}", printable(&why)),
            };
            (format!("health: {}", f.fact.label()), value)
        })
        .collect()
}
