//! The time windows of a run a power trace is integrated over, read out of its results
//! document: one per step PID 1 took health around ([`benchboot_results::StepHealth`]:
//! `before.at_ns ..= after.at_ns`), one per idle phase and one per sync pattern
//! ([`benchboot_results::EnergyMarks`]). Every time is the board's `CLOCK_BOOTTIME`, ns.
//!
//! A document comes from strangers: a window whose end precedes its begin is dropped,
//! and byte counts add up saturating, never overflowing.

use benchboot_results::counters::NetTest;
use benchboot_results::health::HealthScope;
use benchboot_results::{Direction, RandomOp, RunResults};
use serde::{Deserialize, Serialize};

/// What a window covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WindowKind {
    /// One block size of one storage target in one mode, write and read, every
    /// repetition ([`HealthScope::Storage`]).
    Storage,
    /// One timed write or read pass of a storage cell, from the measurement's own
    /// `begin_ns` and `nanos` (schema 1.13): joules per GiB written or read alone.
    StoragePass,
    /// The cached and buffered reads of one disk.
    DeviceRead,
    /// One random-I/O run.
    Random,
    /// The pattern verification of one target.
    Verify,
    /// The memory step.
    Memory,
    /// One network test over one link.
    Network,
    /// An idle phase (`radios-off`, `link <name>`): PID 1 asleep.
    Idle,
    /// A sync pattern.
    Sync,
}

impl WindowKind {
    /// `storage`, `storage-pass`, `device-read`, `random`, `verify`, `memory`, `network`, `idle`, `sync`.
    pub fn name(self) -> &'static str {
        match self {
            WindowKind::Storage => "storage",
            WindowKind::StoragePass => "storage-pass",
            WindowKind::DeviceRead => "device-read",
            WindowKind::Random => "random",
            WindowKind::Verify => "verify",
            WindowKind::Memory => "memory",
            WindowKind::Network => "network",
            WindowKind::Idle => "idle",
            WindowKind::Sync => "sync",
        }
    }
}

/// One stretch of the board's time and what it moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// The step id (`storage.ext4.sync.bs4096`), `idle <phase>` or `sync <at>`.
    pub step: String,
    pub kind: WindowKind,
    /// Board `CLOCK_BOOTTIME` at the start, ns.
    pub begin_ns: u64,
    /// Board `CLOCK_BOOTTIME` at the end, ns (≥ `begin_ns`).
    pub end_ns: u64,
    /// Bytes the step wrote to storage in its timed regions (0: none, or not known).
    pub bytes_written: u64,
    /// Bytes the step read from storage (or the page cache, for cached device reads).
    pub bytes_read: u64,
    /// Bits of payload a network test moved (`bytes × 8` of its runs; 0 for the latency
    /// test and every non-network window).
    pub bits: u64,
}

impl Window {
    /// Length, s (board clock).
    pub fn seconds(&self) -> f64 {
        self.end_ns.saturating_sub(self.begin_ns) as f64 / 1e9
    }

    /// Bytes moved either way (saturating).
    pub fn bytes_moved(&self) -> u64 {
        self.bytes_written.saturating_add(self.bytes_read)
    }
}

/// Every window of `results`: the health steps in the document's order (each storage
/// cell followed by its timed passes, where the measurements carry `begin_ns`: step
/// `<cell>.<write|read>.<repetition>`), then the idle phases, then the sync patterns.
/// Windows whose end precedes their begin are left out.
pub fn windows(results: &RunResults) -> Vec<Window> {
    let mut out = Vec::new();
    for h in &results.health {
        let (kind, written, read, bits) = moved(results, &h.scope);
        out.push(Window {
            step: h.step.clone(),
            kind,
            begin_ns: h.before.at_ns,
            end_ns: h.after.at_ns,
            bytes_written: written,
            bytes_read: read,
            bits,
        });
        if let HealthScope::Storage {
            target,
            mode,
            block_size,
        } = &h.scope
        {
            out.extend(passes(results, &h.step, target, *mode, *block_size));
        }
    }
    for i in &results.energy.idle {
        out.push(Window {
            step: format!("idle {}", i.phase),
            kind: WindowKind::Idle,
            begin_ns: i.begin_ns,
            end_ns: i.end_ns,
            bytes_written: 0,
            bytes_read: 0,
            bits: 0,
        });
    }
    for s in &results.energy.sync {
        out.push(Window {
            step: format!("sync {}", s.at),
            kind: WindowKind::Sync,
            begin_ns: s.begin_ns,
            end_ns: s.end_ns,
            bytes_written: 0,
            bytes_read: 0,
            bits: 0,
        });
    }
    out.retain(|w| w.end_ns >= w.begin_ns);
    out
}

/// The timed passes of one storage cell that say when they began.
fn passes<'a>(
    r: &'a RunResults,
    step: &'a str,
    target: &'a str,
    mode: benchboot_plan::Mode,
    block_size: u64,
) -> impl Iterator<Item = Window> + 'a {
    r.storage
        .iter()
        .filter(move |m| {
            m.target == target && m.requested_mode == mode && m.block_size == block_size
        })
        .filter_map(move |m| {
            let begin_ns = m.begin_ns?;
            let (name, written, read) = match m.direction {
                Direction::Write => ("write", m.bytes, 0),
                Direction::Read => ("read", 0, m.bytes),
            };
            Some(Window {
                step: format!("{step}.{name}.{}", m.repetition),
                kind: WindowKind::StoragePass,
                begin_ns,
                end_ns: begin_ns.saturating_add(m.nanos),
                bytes_written: written,
                bytes_read: read,
                bits: 0,
            })
        })
}

fn sum(it: impl Iterator<Item = u64>) -> u64 {
    it.fold(0, u64::saturating_add)
}

/// The window kind of `scope` and what its measurements moved: (bytes written, bytes
/// read, bits over the network).
fn moved(r: &RunResults, scope: &HealthScope) -> (WindowKind, u64, u64, u64) {
    match scope {
        HealthScope::Storage {
            target,
            mode,
            block_size,
        } => {
            let of = |d: Direction| {
                sum(r
                    .storage
                    .iter()
                    .filter(|m| {
                        &m.target == target
                            && m.requested_mode == *mode
                            && m.block_size == *block_size
                            && m.direction == d
                    })
                    .map(|m| m.bytes))
            };
            (
                WindowKind::Storage,
                of(Direction::Write),
                of(Direction::Read),
                0,
            )
        }
        HealthScope::DeviceRead { device } => {
            let read = sum(r
                .device_reads
                .iter()
                .filter(|d| &d.device == device)
                .map(|d| d.bytes));
            (WindowKind::DeviceRead, 0, read, 0)
        }
        HealthScope::Random {
            target,
            op,
            queue_depth,
        } => {
            let bytes = sum(r
                .random
                .iter()
                .filter(|x| &x.target == target && x.op == *op && x.queue_depth == *queue_depth)
                .map(|x| x.ios.saturating_mul(x.block_size)));
            match op {
                RandomOp::Write => (WindowKind::Random, bytes, 0, 0),
                RandomOp::Read => (WindowKind::Random, 0, bytes, 0),
            }
        }
        HealthScope::Verify { target } => {
            // The pattern is written over `bytes`, then read back.
            let bytes = sum(r
                .verify
                .iter()
                .filter(|v| &v.target == target)
                .map(|v| v.bytes));
            (WindowKind::Verify, bytes, bytes, 0)
        }
        HealthScope::Memory => (WindowKind::Memory, 0, 0, 0),
        HealthScope::Network { link, test } => {
            let n = &r.network;
            let bytes = match test {
                NetTest::Tcp { .. } => sum(n
                    .throughput
                    .iter()
                    .filter(|t| &t.link == link && NetTest::of_throughput(t) == *test)
                    .map(|t| t.bytes)),
                NetTest::Http { .. } => sum(n
                    .http
                    .iter()
                    .filter(|h| &h.link == link && NetTest::of_http(h) == *test)
                    .map(|h| h.bytes)),
                NetTest::Udp { .. } => sum(n
                    .udp
                    .iter()
                    .filter(|u| &u.link == link && NetTest::of_udp(u) == *test)
                    .map(|u| u.bytes)),
                // One byte each way per round trip: no payload worth a figure per bit.
                NetTest::Latency => 0,
            };
            (WindowKind::Network, 0, 0, bytes.saturating_mul(8))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth;

    #[test]
    fn every_step_idle_phase_and_sync_pattern_has_its_window_and_bytes() {
        let run = synth::Run::standard();
        let w = windows(&run.results());
        let names: Vec<&str> = w.iter().map(|w| w.step.as_str()).collect();
        assert_eq!(
            names,
            [
                "storage.ext4.sync.bs4096",
                "device-read.mmcblk0",
                "random.ext4.read.qd1",
                "random.ext4.write.qd4",
                "verify.ext4",
                "memory",
                "network.ncm.tcp.board-to-host",
                "network.ncm.latency",
                "idle radios-off",
                "idle link usb0",
                "sync start",
                "sync end",
            ]
        );
        let by = |s: &str| w.iter().find(|w| w.step == s).unwrap();
        // Two repetitions of 8 MiB written and read; the other block size not counted.
        let st = by("storage.ext4.sync.bs4096");
        assert_eq!(
            (st.bytes_written, st.bytes_read, st.bits),
            (16 << 20, 16 << 20, 0)
        );
        assert_eq!(st.kind, WindowKind::Storage);
        assert_eq!(by("device-read.mmcblk0").bytes_read, 96 << 20);
        assert_eq!(
            (
                by("random.ext4.read.qd1").bytes_read,
                by("random.ext4.read.qd1").bytes_written
            ),
            (1000 * 4096, 0)
        );
        assert_eq!(by("random.ext4.write.qd4").bytes_written, 500 * 4096);
        assert_eq!(by("verify.ext4").bytes_moved(), 2 * (32 << 20));
        assert_eq!(by("network.ncm.tcp.board-to-host").bits, 8 * 250_000_000);
        assert_eq!(by("network.ncm.latency").bits, 0);
        let idle = by("idle radios-off");
        assert_eq!(idle.kind, WindowKind::Idle);
        assert_eq!(idle.seconds(), run.idle[0].1 - run.idle[0].0);
        assert_eq!(by("sync end").kind, WindowKind::Sync);
    }

    /// Passes that say when they began get a window each, right after their cell, with
    /// the bytes of their one direction; the other block size's pass stays out.
    #[test]
    fn timed_passes_split_a_cell_by_direction() {
        let mut r = synth::Run::standard().results();
        let cell = r.health[0].clone();
        for (i, m) in r.storage.iter_mut().enumerate() {
            m.begin_ns = Some(cell.before.at_ns + 10_000_000 + i as u64 * 1_500_000_000);
        }
        let w = windows(&r);
        let steps: Vec<&str> = w.iter().take(5).map(|w| w.step.as_str()).collect();
        assert_eq!(
            steps,
            [
                "storage.ext4.sync.bs4096",
                "storage.ext4.sync.bs4096.write.0",
                "storage.ext4.sync.bs4096.read.0",
                "storage.ext4.sync.bs4096.write.1",
                "storage.ext4.sync.bs4096.read.1",
            ]
        );
        let read1 = &w[4];
        assert_eq!(read1.kind, WindowKind::StoragePass);
        assert_eq!(
            (read1.bytes_written, read1.bytes_read, read1.seconds()),
            (0, 8 << 20, 1.0)
        );
        assert_eq!(
            read1.begin_ns,
            cell.before.at_ns + 10_000_000 + 3 * 1_500_000_000
        );
        assert_eq!(w[1].bytes_written, 8 << 20);
        assert!(!w.iter().any(|w| w.step.contains("bs512")));
    }

    #[test]
    fn hostile_windows_are_dropped_and_huge_counts_saturate() {
        let run = synth::Run::standard();
        let mut r = run.results();
        // A step that ends before it begins, an idle phase likewise.
        r.health[0].after.at_ns = r.health[0].before.at_ns - 1;
        r.energy.idle[1].end_ns = 0;
        for x in &mut r.random {
            x.ios = u64::MAX;
        }
        r.network.throughput[0].bytes = u64::MAX / 2;
        let w = windows(&r);
        assert_eq!(w.len(), 10);
        assert!(!w.iter().any(|w| w.step == "storage.ext4.sync.bs4096"));
        assert!(!w.iter().any(|w| w.step == "idle link usb0"));
        let rnd = w.iter().find(|w| w.step == "random.ext4.read.qd1").unwrap();
        assert_eq!(rnd.bytes_read, u64::MAX);
        let tcp = w.iter().find(|w| w.kind == WindowKind::Network).unwrap();
        assert_eq!(tcp.bits, u64::MAX);
    }
}
