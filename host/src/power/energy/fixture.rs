//! A small run and its power trace for the tests: piecewise-constant power sampled 10
//! times a second without noise, so every figure of the energy section is known.
//!
//! Board time (s): sync `start` 1-7.5 (0.5 s slots, Barker 13, busy 4.2 W); idle
//! `radios-off` 10-30 (2.0 W, the base); `link usb0` 31-41 (2.5 W); the storage cell
//! `storage.ext4.sync.bs4096` 50-80 (3.0 W; timed passes: write 50-60 of 1 GiB, write
//! 62-62.5 of 64 MiB, read 65-75 of 1 GiB); `memory` 90-105 (4.0 W);
//! `random.ext4.read.qd1` 110-110.5 (2.8 W: too short for a 10 samples/s meter);
//! `network.usb0.tcp.board-to-host` 120-135 (3.5 W, 10^9 bytes); sync `end` 140-146.5.
//! A sample on a piece's edge reads the piece's power.

use benchboot_energy::{Clock, Sample, Trace};
use benchboot_plan::{Filesystem, Mode, Plan};
use benchboot_results::counters::{NetDirection, NetTest};
use benchboot_results::energy::{IdleMark, SyncMark};
use benchboot_results::health::{HealthScope, StepHealth};
use benchboot_results::network::ThroughputRun;
use benchboot_results::{
    Direction, Health, RandomOp, RunResults, StopReason, StorageMeasurement, SystemInfo,
};

/// Barker 13, the default sync code.
pub const CODE: &str = "1111100110101";
const SLOT_S: f64 = 0.5;
const SYNC: [(&str, f64); 2] = [("start", 1.0), ("end", 140.0)];
/// The power between the pieces, W.
pub const BASE_W: f64 = 2.0;
/// The trace's last sample, board s.
const END_S: f64 = 150.0;

/// The steps: id, scope, begin s, end s, W.
fn steps() -> Vec<(&'static str, HealthScope, f64, f64, f64)> {
    vec![
        (
            "storage.ext4.sync.bs4096",
            HealthScope::Storage {
                target: "ext4".into(),
                mode: Mode::Sync,
                block_size: 4096,
            },
            50.0,
            80.0,
            3.0,
        ),
        ("memory", HealthScope::Memory, 90.0, 105.0, 4.0),
        (
            "random.ext4.read.qd1",
            HealthScope::Random {
                target: "ext4".into(),
                op: RandomOp::Read,
                queue_depth: 1,
            },
            110.0,
            110.5,
            2.8,
        ),
        (
            "network.usb0.tcp.board-to-host",
            HealthScope::Network {
                link: "usb0".into(),
                test: NetTest::Tcp {
                    direction: NetDirection::BoardToHost,
                    streams: 1,
                },
            },
            120.0,
            135.0,
            3.5,
        ),
    ]
}

/// Every piece of power above the base: (begin s, end s, W).
fn pieces() -> Vec<(f64, f64, f64)> {
    let mut out = vec![(31.0, 41.0, 2.5)];
    out.extend(steps().into_iter().map(|(_, _, b, e, w)| (b, e, w)));
    for (_, at) in SYNC {
        for (i, c) in CODE.chars().enumerate() {
            if c == '1' {
                let b = at + i as f64 * SLOT_S;
                out.push((b, b + SLOT_S, 4.2));
            }
        }
    }
    out
}

fn ns(s: f64) -> u64 {
    (s * 1e9).round() as u64
}

/// The run's results document (run id `run-e`, board `fixture-board`).
pub fn results() -> RunResults {
    let mut r = RunResults::new("run-e".into(), Plan::example(), SystemInfo::default());
    r.board = "fixture-board".into();
    r.emulated = false;
    for (step, scope, b, e, _) in steps() {
        r.health.push(StepHealth {
            step: step.into(),
            scope,
            before: Health {
                at_ns: ns(b),
                ..Health::default()
            },
            after: Health {
                at_ns: ns(e),
                ..Health::default()
            },
            interrupts: Default::default(),
        });
    }
    let pass = |direction, repetition, begin_s: f64, s: f64, bytes| StorageMeasurement {
        target: "ext4".into(),
        filesystem: Filesystem::Ext4,
        block_size: 4096,
        direction,
        mode: Mode::Sync,
        requested_mode: Mode::Sync,
        note: None,
        repetition,
        bytes,
        nanos: ns(s),
        stopped_by: StopReason::Bytes,
        begin_ns: Some(ns(begin_s)),
        latency: None,
        timeline: Vec::new(),
    };
    r.storage
        .push(pass(Direction::Write, 0, 50.0, 10.0, 1 << 30));
    r.storage
        .push(pass(Direction::Write, 1, 62.0, 0.5, 64 << 20));
    r.storage
        .push(pass(Direction::Read, 0, 65.0, 10.0, 1 << 30));
    r.network.throughput.push(ThroughputRun {
        link: "usb0".into(),
        direction: NetDirection::BoardToHost,
        streams: 1,
        omit_ns: 0,
        intervals: Vec::new(),
        bytes: 1_000_000_000,
        nanos: ns(15.0),
        board_cpu: Default::default(),
        host_cpu: Default::default(),
        board_tcp: None,
        host_tcp: None,
    });
    for (phase, b, e) in [("radios-off", 10.0, 30.0), ("link usb0", 31.0, 41.0)] {
        r.energy.idle.push(IdleMark {
            phase: phase.into(),
            begin_ns: ns(b),
            end_ns: ns(e),
        });
    }
    for (at, b) in SYNC {
        r.energy.sync.push(SyncMark {
            at: at.into(),
            begin_ns: ns(b),
            slot_ns: ns(SLOT_S),
            code: CODE.into(),
            end_ns: ns(b + SLOT_S * CODE.len() as f64),
        });
    }
    r
}

/// The power at board second `t`, each piece's power above the base times `scale`.
fn watts_at(t: f64, scale: f64) -> f64 {
    pieces()
        .iter()
        .filter(|(b, e, _)| (*b..=*e).contains(&t))
        .map(|(_, _, w)| BASE_W + (w - BASE_W) * scale)
        .fold(BASE_W, f64::max)
}

/// The trace on the board's clock (no alignment needed), meter `fixture meter`, 10
/// samples/s from board 0 to 150 s, between supply and board.
pub fn trace() -> Trace {
    trace_with(Clock::Board, 0.0, 1.0)
}

/// The trace on `clock` with meter time = `offset_s` + board time, each piece's power
/// above the base times `scale`. On a clock of its own the odd samples read 1 mW more
/// (a flat trace has no noise to hold a sync pattern's contrast against).
pub fn trace_with(clock: Clock, offset_s: f64, scale: f64) -> Trace {
    let n = (END_S * 10.0) as usize;
    let dither = if clock == Clock::Board { 0.0 } else { 0.001 };
    Trace {
        meter: "fixture meter".into(),
        clock,
        emulated: false,
        resolution_w: 0.0,
        period_s: 0.1,
        position: Some("between supply and board".into()),
        samples: (0..=n)
            .map(|k| {
                let t = k as f64 / 10.0;
                let w = watts_at(t, scale) + if k % 2 == 1 { dither } else { 0.0 };
                Sample::watts(offset_s + t, w)
            })
            .collect(),
        counter_j: None,
        console: Vec::new(),
    }
}
