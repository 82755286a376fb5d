//! What a plan may ask for at all, beyond each value on its own: a total duration a
//! person can wait for, each list entry once, counts a board gets through. Refusals go
//! through [`crate::Plan::validate`] (so the plan file's error names file, line and
//! key, [`crate::locate`]); what is allowed but likely a slip is a warning
//! ([`crate::Plan::warnings`]), printed by `benchboot plan check` and `plan write`.

use crate::estimate::{estimate, total_ms};
use crate::units::{fmt_bytes, fmt_span_ms};
use crate::Plan;

/// Longest a plan's time caps may allow in total: 7 days, ms. A plan that could run
/// longer is a slip (a `time-cap` in hours, a repetition count with three zeros too
/// many): the estimate ([`crate::estimate`]) above it is refused.
pub const MAX_PLAN_MS: u64 = 7 * 24 * 3_600_000;

/// Above this total (24 h, ms) and up to [`MAX_PLAN_MS`], `plan check` warns.
pub const WARN_PLAN_MS: u64 = 24 * 3_600_000;

use crate::limits::{MAX_COUNT, MAX_LATENCY_READS};

/// The key of the cap that drives a step's bound, as [`crate::PlanError::Invalid`]
/// names fields.
fn step_field(plan: &Plan, step: &str) -> String {
    match step {
        "memory" => "memory.latency_reads".into(),
        "energy" => "energy.idle_ms".into(),
        "storage" => "storage.time_cap_ms".into(),
        "device-reads" => "storage.device_reads.buffered_ms".into(),
        "random" => "storage.random.duration_ms".into(),
        "card-check" => "card_check.time_limit_ms".into(),
        s if s.starts_with("network") => "network.tests.duration_ms".into(),
        s => {
            let id = s.strip_prefix("command.").unwrap_or(s);
            let i = plan.commands.iter().position(|c| c.id == id).unwrap_or(0);
            format!("commands[{i}].time_limit_ms")
        }
    }
}

/// The first entry of `xs` that repeats an earlier one: (index, value).
fn repeated<T: PartialEq>(xs: &[T]) -> Option<(usize, &T)> {
    xs.iter().enumerate().find(|(i, x)| xs[..*i].contains(x))
}

/// Refusals beyond [`crate::Plan::validate`]'s field checks: (field, why).
pub(crate) fn check(plan: &Plan) -> Result<(), (String, String)> {
    plan.energy.check().map_err(|(f, m)| (f.to_owned(), m))?;
    let s = &plan.storage;
    if let Some((i, b)) = repeated(&s.block_sizes) {
        return Err((
            format!("storage.block_sizes[{i}]"),
            format!(
                "{} is listed twice: each size runs once a repetition; remove one (or raise \
                 `repetitions`)",
                fmt_bytes(*b)
            ),
        ));
    }
    if let Some((i, m)) = repeated(&s.modes) {
        return Err((
            format!("storage.modes[{i}]"),
            format!("`{}` is listed twice; name each mode once", m.name()),
        ));
    }
    if let Some(r) = &s.random {
        if let Some((i, d)) = repeated(&r.queue_depths) {
            return Err((
                format!("storage.random.queue_depths[{i}]"),
                format!("depth {d} is listed twice; name each depth once"),
            ));
        }
        if r.duration_ms == 0 {
            return Err((
                "storage.random.duration_ms".into(),
                "must be above 0 ms".into(),
            ));
        }
    }
    if let Some(d) = &s.device_reads {
        if d.cached_ms == 0 || d.buffered_ms == 0 {
            let f = if d.cached_ms == 0 {
                "cached_ms"
            } else {
                "buffered_ms"
            };
            return Err((
                format!("storage.device_reads.{f}"),
                "must be above 0 ms (hdparm: 2 s cached, 3 s buffered)".into(),
            ));
        }
    }
    if let Some(t) = &plan.network.tests {
        if let Some((i, n)) = repeated(&t.streams) {
            return Err((
                format!("network.tests.streams[{i}]"),
                format!("{n} streams is listed twice; name each count once"),
            ));
        }
        if t.latency_samples > MAX_COUNT {
            return Err((
                "network.tests.latency_samples".into(),
                format!("{} round trips: at most {MAX_COUNT}", t.latency_samples),
            ));
        }
    }
    if let Some(m) = &plan.memory {
        if m.sample_ms == 0 {
            return Err((
                "memory.sample_ms".into(),
                "must be above 0 ms (tinymembench: 0.5 s)".into(),
            ));
        }
        if m.latency_reads > MAX_LATENCY_READS {
            return Err((
                "memory.latency_reads".into(),
                format!(
                    "{} reads a repeat: at most {MAX_LATENCY_READS} (tinymembench does 10000000)",
                    m.latency_reads
                ),
            ));
        }
        for (f, n) in [
            ("memory.samples", m.samples),
            ("memory.latency_repeats", m.latency_repeats),
        ] {
            if n > MAX_COUNT {
                return Err((f.into(), format!("{n}: at most {MAX_COUNT}")));
            }
        }
    }
    let steps = estimate(plan);
    let total = total_ms(&steps);
    if total > MAX_PLAN_MS {
        let big = steps.iter().max_by_key(|s| s.at_most_ms);
        let (field, step) = big.map_or_else(
            || ("storage.time_cap_ms".to_owned(), String::new()),
            |b| {
                (
                    step_field(plan, &b.step),
                    format!("; {} alone: {}", b.step, fmt_span_ms(b.at_most_ms)),
                )
            },
        );
        return Err((
            field,
            format!(
                "the time caps allow up to {} in total{step}, above the bound of {} \
                 (benchboot_plan::sanity::MAX_PLAN_MS); lower this cap, the repetitions or \
                 the lists",
                fmt_span_ms(total),
                fmt_span_ms(MAX_PLAN_MS),
            ),
        ));
    }
    Ok(())
}

/// What a plan allows but is likely a slip: (field, message) each, as
/// [`crate::PlanError::Invalid`] names fields.
pub(crate) fn warnings(plan: &Plan) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let total = total_ms(&estimate(plan));
    if total > WARN_PLAN_MS {
        out.push((
            "storage.time_cap_ms".to_owned(),
            format!(
                "the time caps allow up to {} in total (over {}); is that meant?",
                fmt_span_ms(total),
                fmt_span_ms(WARN_PLAN_MS)
            ),
        ));
    }
    let s = &plan.storage;
    if let Some(&big) = s.block_sizes.iter().max() {
        if s.byte_cap < big && !s.targets.is_empty() {
            out.push((
                "storage.byte_cap".to_owned(),
                format!(
                    "{} is below the largest block size, {}: a cell of a larger block moves \
                     one block, past the cap (one call: no sustained rate)",
                    fmt_bytes(s.byte_cap),
                    fmt_bytes(big)
                ),
            ));
        }
    }
    out
}
