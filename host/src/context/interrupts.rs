//! The context's interrupts: what each group of steps (storage, device reads, random
//! I/O, verify, network) raised, summed per source, the top sources named.

use benchboot_results::{HealthScope, InterruptDelta, Reading, StepHealth};
use serde::{Deserialize, Serialize};

use crate::units::grouped;

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

/// The group of steps a step belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Group {
    /// Its place in the report, in run order: memory first, network last.
    order: u8,
    name: &'static str,
}

/// The group `s`'s step belongs to.
fn scope_group(s: &HealthScope) -> Group {
    let (order, name) = match s {
        HealthScope::Memory => (0, "memory"),
        HealthScope::Storage { .. } => (1, "storage"),
        HealthScope::DeviceRead { .. } => (2, "device reads"),
        HealthScope::Random { .. } => (3, "random I/O"),
        HealthScope::Verify { .. } => (4, "verify"),
        HealthScope::Network { .. } => (5, "network"),
    };
    Group { order, name }
}

/// One group's interrupts while they are being summed.
struct Tally {
    group: Group,
    /// Steps of the group with interrupt counts.
    steps: usize,
    /// Per source, summed over those steps.
    sums: Vec<InterruptDelta>,
}

/// The interrupts per group of steps (only steps that recorded them).
pub fn interrupt_groups(health: &[StepHealth]) -> Vec<InterruptGroup> {
    let mut groups: Vec<Tally> = Vec::new();
    for h in health {
        let Some(deltas) = h.interrupts.value() else {
            continue;
        };
        let group = scope_group(&h.scope);
        let i = match groups.iter().position(|g| g.group == group) {
            Some(i) => i,
            None => {
                groups.push(Tally {
                    group,
                    steps: 0,
                    sums: Vec::new(),
                });
                groups.len() - 1
            }
        };
        let g = &mut groups[i];
        g.steps += 1;
        for d in deltas {
            match g.sums.iter_mut().find(|s| s.source == d.source) {
                Some(s) => s.count = s.count.saturating_add(d.count),
                None => g.sums.push(d.clone()),
            }
        }
    }
    groups.sort_by_key(|g| g.group.order);
    groups
        .into_iter()
        .map(|mut g| {
            g.sums
                .sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.source.cmp(&b.source)));
            InterruptGroup {
                group: g.group.name.into(),
                steps: g.steps,
                total: g.sums.iter().fold(0u64, |a, d| a.saturating_add(d.count)),
                sources: g.sums.len(),
                top: g.sums.into_iter().take(TOP_SOURCES).collect(),
            }
        })
        .collect()
}

/// Why no step has interrupt counts: the first reason recorded, if any.
pub(super) fn interrupts_reason(health: &[StepHealth]) -> Option<String> {
    health.iter().find_map(|h| match &h.interrupts {
        Reading::Unavailable { reason } if reason != "not recorded" => Some(reason.clone()),
        _ => None,
    })
}

/// `104 mmc1 12,345; 180 arch_timer 9,876; … (+4 more; 23,456 in all over 12 steps)`.
pub(super) fn interrupt_words(g: &InterruptGroup) -> String {
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
