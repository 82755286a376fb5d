//! What a plan will run, step by step, and how long it can take: the bound its time caps
//! set (`benchboot plan check`).
//!
//! Every timed loop of a step stops at its byte cap or its time cap, so the sum of the
//! time caps bounds the step ("at most"). What a time cap does not bound is listed
//! apart (`unbounded`): an `fsync(2)` after a write region, verification (writes and
//! reads `byte_cap` per target at whatever speed the device has), HTTP transfers of a
//! fixed size, boot, module loading and mounting.

use crate::net_tests::NetTests;
use crate::network::NetworkPlan;
use crate::units::{fmt_bytes, fmt_millis};
use crate::{CardCheckPlan, CommandStep, DeviceReadPlan, Plan, RandomPlan, StoragePlan};

/// `1 target`, `3 targets`.
fn count(n: usize, what: &str) -> String {
    if n == 1 {
        return format!("1 {what}");
    }
    // English plural of the nouns used here: "entry" -> "entries", "key" -> "keys".
    match what.strip_suffix('y') {
        Some(stem) if !stem.ends_with(['a', 'e', 'i', 'o', 'u']) => format!("{n} {stem}ies"),
        _ => format!("{n} {what}s"),
    }
}

/// One step of a plan as `plan check` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepEstimate {
    /// `storage`, `device-reads`, `random`, `verify`, `network`, `command.<id>`.
    pub step: String,
    /// What runs: counts and caps, in the units a person writes.
    pub what: String,
    /// Upper bound from the time caps, ms.
    pub at_most_ms: u64,
    /// What the time caps do not bound, if anything.
    pub unbounded: Option<String>,
}

/// Every step of `plan`, in run order.
pub fn estimate(plan: &Plan) -> Vec<StepEstimate> {
    let s = &plan.storage;
    let mut out = Vec::new();
    out.extend(energy_step(plan));
    out.extend(memory_step(plan));
    out.extend(storage_step(s));
    out.extend(s.device_reads.as_ref().map(device_reads_step));
    out.extend(s.random.as_ref().map(random_step));
    out.extend(verify_step(s));
    out.extend(plan.card_check.as_ref().map(card_check_step));
    out.extend(plan.commands.iter().map(command_step));
    out.extend(network_step(&plan.network));
    out.extend(wifi_step(&plan.network));
    out
}

/// The energy marks (sync patterns, idle phases, the on-board sensor), unless off.
fn energy_step(plan: &Plan) -> Option<StepEstimate> {
    let e = &plan.energy;
    if e.is_off() {
        return None;
    }
    let links = energy_links(plan);
    let mut parts = Vec::new();
    if e.sync {
        parts.push(format!(
            "sync pattern {} at the start and the end, {} slots",
            crate::energy::SYNC_CODE,
            fmt_millis(e.slot_ms)
        ));
    }
    if e.idle_ms > 0 {
        let on_links = match links {
            0 => String::new(),
            n => format!(" and on each of {}", count(n as usize, "measured link")),
        };
        parts.push(format!(
            "idle {} with radios off{on_links}",
            fmt_millis(e.idle_ms)
        ));
    }
    if let Some(sensor) = &e.sensor {
        parts.push(format!(
            "on-board sensor {sensor} read every {} for the whole run",
            fmt_millis(crate::energy::ONBOARD_PERIOD_MS)
        ));
    }
    Some(StepEstimate {
        step: "energy".into(),
        what: parts.join("; "),
        at_most_ms: e.estimate_ms(links),
        unbounded: None,
    })
}

/// The memory step, if any: its kernels and latency sweep, bounded by its time limit.
fn memory_step(plan: &Plan) -> Option<StepEstimate> {
    let m = plan.memory.as_ref()?;
    Some(StepEstimate {
        step: "memory".into(),
        what: format!(
            "every copy/fill/read kernel the CPU has, {} of >= {} each{}; latency 1 KiB .. {}, \
             {} x {} reads{}",
            count(m.samples as usize, "sample"),
            fmt_millis(m.sample_ms),
            if m.per_core {
                ", libc memcpy/memset per core and on all cores"
            } else {
                ""
            },
            fmt_bytes(m.latency_max_bytes),
            count(m.latency_repeats as usize, "repeat"),
            m.latency_reads,
            if m.huge_pages {
                ", base and huge pages"
            } else {
                ""
            },
        ),
        at_most_ms: m.estimate_ms().min(m.time_limit_ms),
        unbounded: None,
    })
}

/// The storage sweep: targets x modes x sizes x repetitions, each cell written and read
/// within the time cap; `None` without targets.
fn storage_step(s: &StoragePlan) -> Option<StepEstimate> {
    let n_t = s.targets.len() as u64;
    if n_t == 0 {
        return None;
    }
    let cells = product(&[
        n_t,
        s.modes.len() as u64,
        s.block_sizes.len() as u64,
        u64::from(s.repetitions),
    ]);
    let labels: Vec<&str> = s.targets.iter().map(|t| t.label.as_str()).collect();
    Some(StepEstimate {
        step: "storage".into(),
        what: format!(
            "{} ({}) x {} x {} ({} .. {}) x {}, <= {} or {} per cell and direction (write, read)",
            count(labels.len(), "target"),
            labels.join(", "),
            count(s.modes.len(), "mode"),
            count(s.block_sizes.len(), "size"),
            fmt_bytes(s.block_sizes.iter().copied().min().unwrap_or(0)),
            fmt_bytes(s.block_sizes.iter().copied().max().unwrap_or(0)),
            count(s.repetitions as usize, "rep"),
            fmt_bytes(s.byte_cap),
            fmt_millis(s.time_cap_ms),
        ),
        // The long cell's write and read run under its own time cap instead.
        at_most_ms: product(&[cells, 2, s.time_cap_ms]).saturating_add(
            s.long_cell.as_ref().map_or(0, |c| {
                product(&[
                    2,
                    u64::from(s.repetitions),
                    c.time_cap_ms.saturating_sub(s.time_cap_ms),
                ])
            }),
        ),
        unbounded: Some("the fsync(2) that ends each write region".into()),
    })
}

/// The device reads: per disk, the cached then the device reads' durations.
fn device_reads_step(d: &DeviceReadPlan) -> StepEstimate {
    StepEstimate {
        step: "device-reads".into(),
        what: format!(
            "{} ({}), {} chunks: {} cached (hdparm -T) + {} from the device (hdparm -t)",
            count(d.disks.len(), "disk"),
            d.disks.join(", "),
            fmt_bytes(d.chunk_bytes),
            fmt_millis(d.cached_ms),
            fmt_millis(d.buffered_ms)
        ),
        at_most_ms: product(&[
            d.disks.len() as u64,
            d.cached_ms.saturating_add(d.buffered_ms),
        ]),
        unbounded: None,
    }
}

/// Random IOPS: targets x queue depths, each for its duration.
fn random_step(r: &RandomPlan) -> StepEstimate {
    StepEstimate {
        step: "random".into(),
        what: format!(
            "{} ({}) x depths {:?}, {} O_DIRECT over {}, {} each",
            count(r.targets.len(), "target"),
            r.targets.join(", "),
            r.queue_depths,
            fmt_bytes(r.block_size),
            fmt_bytes(r.region_bytes),
            fmt_millis(r.duration_ms)
        ),
        at_most_ms: product(&[
            r.targets.len() as u64,
            r.queue_depths.len() as u64,
            r.duration_ms,
        ]),
        unbounded: None,
    }
}

/// Verification, when on and there are targets: no time cap bounds it.
fn verify_step(s: &StoragePlan) -> Option<StepEstimate> {
    let n_t = s.targets.len() as u64;
    (s.verify && n_t > 0).then(|| StepEstimate {
        step: "verify".into(),
        what: format!(
            "{n_t} targets, {} written and read back each",
            fmt_bytes(s.byte_cap)
        ),
        at_most_ms: 0,
        unbounded: Some(format!(
            "{} per target at the device's speed",
            fmt_bytes(s.byte_cap.saturating_mul(2))
        )),
    })
}

/// The full-card check of the unpartitioned space.
fn card_check_step(c: &CardCheckPlan) -> StepEstimate {
    StepEstimate {
        step: "card-check".into(),
        what: format!(
            "fake-capacity probe of the card's unpartitioned space (DESTRUCTIVE there), \
             resolution {}, {} past the card's cache",
            fmt_bytes(c.resolution_bytes),
            fmt_bytes(c.cache_flush_bytes)
        ),
        at_most_ms: c.estimate_ms(),
        unbounded: None,
    }
}

/// One `[[command]]`: its command line, bounded by its time limit.
fn command_step(c: &CommandStep) -> StepEstimate {
    StepEstimate {
        step: format!("command.{}", c.id),
        what: format!("{} {}", c.path, c.args.join(" "))
            .trim_end()
            .to_owned(),
        at_most_ms: c.time_limit_ms,
        unbounded: None,
    }
}

/// The network tests over the gadget's and the wired links, with the wired links' waits
/// for carrier and lease; `None` without tests.
fn network_step(n: &NetworkPlan) -> Option<StepEstimate> {
    let t = n.tests.as_ref()?;
    let gadget_links = n
        .gadget
        .as_ref()
        .map_or(0, |g| if g.in_turn { g.functions.len() } else { 1 });
    let wired: Vec<_> = n.wired.iter().filter(|w| w.unavailable.is_none()).collect();
    let links = (gadget_links + wired.len()).max(1) as u64;
    let runs = throughput_runs(t);
    // Each wired link may wait for its interface and carrier, then for a lease.
    let link_waits = sum(wired.iter().map(|w| w.link_wait_ms.saturating_mul(2)));
    let udp = if t.udp_bitrate > 0 {
        format!(
            "; UDP at {} each way",
            crate::units::fmt_bitrate(t.udp_bitrate)
        )
    } else {
        String::new()
    };
    Some(StepEstimate {
        step: "network".into(),
        what: format!(
            "{} x streams {:?} x 2 directions, {} + {} warm-up each; {} round trips; HTTP {} each way{udp}",
            count(links as usize, "link"),
            t.streams,
            fmt_millis(t.duration_ms),
            fmt_millis(t.omit_ms),
            t.latency_samples,
            fmt_bytes(t.http_bytes)
        ),
        at_most_ms: product(&[
            links,
            product(&[runs, t.duration_ms.saturating_add(t.omit_ms)]).saturating_add(t.peer_wait_ms),
        ])
        .saturating_add(link_waits),
        unbounded: Some(format!("HTTP: {} per link at the link's speed", fmt_bytes(t.http_bytes.saturating_mul(2)))),
    })
}

/// Timed runs per link: every stream count both ways, and UDP both ways when on.
fn throughput_runs(t: &NetTests) -> u64 {
    let udp_runs = if t.udp_bitrate > 0 { 2 } else { 0 };
    t.streams.len() as u64 * 2 + udp_runs
}

/// The WiFi entries not skipped, each with its waits (ms) and its tests (WiFi's own, else
/// the network's); `None` without WiFi or tests.
fn wifi_step(n: &NetworkPlan) -> Option<StepEstimate> {
    let w = n.wifi.as_ref()?;
    let t = w.tests.as_ref().or(n.tests.as_ref())?;
    let run: Vec<_> = w.entries.iter().filter(|e| e.skip.is_none()).collect();
    let omit = t.omit_ms.max(w.warmup_ms);
    let runs = throughput_runs(t);
    // Per entry: the wait for a station (AP) or for the scan, the association,
    // the lease and the peer's announcement (client), then the tests.
    let waits = match w.role {
        crate::WifiRole::AccessPoint { .. } => w.connect_wait_ms,
        crate::WifiRole::Client { .. } => sum([
            crate::wifi::SCAN_WAIT_MS,
            w.connect_wait_ms,
            w.connect_wait_ms,
            t.peer_wait_ms,
        ]),
    };
    let per_entry = waits.saturating_add(product(&[runs, t.duration_ms.saturating_add(omit)]));
    Some(StepEstimate {
        step: "network.wifi".into(),
        what: format!(
            "{} ({}) x streams {:?} x 2 directions, {} + {} warm-up each; up to {} per entry waiting for {}",
            count(run.len(), "WiFi entry"),
            run.iter().map(|e| e.name.as_str()).collect::<Vec<_>>().join(", "),
            t.streams,
            fmt_millis(t.duration_ms),
            fmt_millis(omit),
            fmt_millis(w.connect_wait_ms),
            match w.role {
                crate::WifiRole::AccessPoint { .. } => "`benchboot peer --wifi` to join",
                crate::WifiRole::Client { .. } => "the association and a lease",
            }
        ),
        at_most_ms: product(&[run.len() as u64, per_entry]),
        unbounded: (t.http_bytes > 0).then(|| {
            format!("HTTP: {} per entry at the link's speed", fmt_bytes(t.http_bytes.saturating_mul(2)))
        }),
    })
}

/// How many times a measured link comes up (each has an idle phase): the gadget's
/// link when it has tests, each wired link the board has, each WiFi entry not skipped.
fn energy_links(plan: &Plan) -> u64 {
    let n = &plan.network;
    let gadget = u64::from(n.gadget.is_some() && n.tests.is_some());
    let wired = n.wired.iter().filter(|w| w.unavailable.is_none()).count() as u64;
    let wifi = n.wifi.as_ref().map_or(0, |w| {
        w.entries.iter().filter(|e| e.skip.is_none()).count() as u64
    });
    gadget + wired + wifi
}

/// Sum of the steps' bounds, ms (saturating: a plan's caps can name any u64).
pub fn total_ms(steps: &[StepEstimate]) -> u64 {
    sum(steps.iter().map(|s| s.at_most_ms))
}

/// Product of `xs`, saturating at `u64::MAX` (caps come from a plan file).
pub(crate) fn product(xs: &[u64]) -> u64 {
    xs.iter().fold(1u64, |a, &x| a.saturating_mul(x))
}

/// Sum of `xs`, saturating at `u64::MAX`.
pub(crate) fn sum(xs: impl IntoIterator<Item = u64>) -> u64 {
    xs.into_iter().fold(0u64, u64::saturating_add)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_say_the_plural_in_english() {
        assert_eq!(count(3, "WiFi entry"), "3 WiFi entries");
        assert_eq!(count(1, "WiFi entry"), "1 WiFi entry");
        assert_eq!(count(2, "key"), "2 keys");
        assert_eq!(count(0, "target"), "0 targets");
    }

    #[test]
    fn the_bound_is_the_sum_of_the_time_caps() {
        let plan = Plan::example();
        let steps = estimate(&plan);
        let names: Vec<&str> = steps.iter().map(|s| s.step.as_str()).collect();
        assert_eq!(names, ["memory", "storage", "random", "verify"]);
        // 16 tests x 5 samples x 2 x 0.5 s; latency 17 blocks x (single + dual) + the
        // baseline, x 2 page kinds x 3 repeats x 4 M reads at 400 ns.
        assert_eq!(
            steps[0].at_most_ms,
            80_000 + 35 * 2 * 3 * 4_000_000 * 400 / 1_000_000
        );
        assert!(
            steps[0].what.contains("latency 1 KiB .. 64 MiB"),
            "{}",
            steps[0].what
        );
        let steps = &steps[1..];
        // 1 target x 2 modes x 2 sizes x 1 rep x 2 directions x 2 s.
        assert_eq!(steps[0].at_most_ms, 16_000);
        assert!(
            steps[0].what.contains("<= 4 MiB or 2 s"),
            "{}",
            steps[0].what
        );
        assert!(
            steps[0].what.contains("512 B .. 4 KiB"),
            "{}",
            steps[0].what
        );
        // 1 target x 2 depths x 1 s.
        assert_eq!(steps[1].at_most_ms, 2_000);
        assert_eq!(total_ms(steps), 18_000);
        assert!(steps[2].unbounded.as_deref().unwrap().contains("8 MiB"));
    }

    #[test]
    fn energy_marks_come_first_with_their_bound() {
        let mut plan = Plan::example();
        plan.energy = crate::EnergyPlan::HARDWARE;
        plan.network.gadget = Some(crate::GadgetPlan::default_for("rpi-zero-w"));
        plan.network.tests = Some(crate::NetTests::hardware());
        let steps = estimate(&plan);
        assert_eq!(steps[0].step, "energy");
        // 2 patterns x 13 x 1 s, idle 30 s with radios off and on the gadget's link.
        assert_eq!(steps[0].at_most_ms, 26_000 + 60_000);
        assert!(
            steps[0].what.contains("1111100110101") && steps[0].what.contains("1 measured link"),
            "{}",
            steps[0].what
        );
        plan.energy = crate::EnergyPlan::OFF;
        assert_eq!(estimate(&plan)[0].step, "memory");
    }
}
