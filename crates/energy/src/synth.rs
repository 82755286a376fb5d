//! Synthetic runs and meters for the tests: a board timeline of known power (idle
//! phases, two sync patterns, one step of each kind) and a meter that watches it with
//! its own offset, skew, averaging, noise, time-stamp jitter, quantisation and dropped
//! samples, all from a fixed-seed LCG. Exact answers come from the timeline itself.

use benchboot_plan::{Filesystem, Mode, Plan};
use benchboot_results::counters::{NetDirection, NetTest};
use benchboot_results::energy::{IdleMark, SyncMark};
use benchboot_results::health::{HealthScope, StepHealth};
use benchboot_results::network::{LatencyRun, ThroughputRun};
use benchboot_results::{
    DeviceRead, DeviceReadKind, Direction, Health, RandomIo, RandomOp, RunResults, StopReason,
    StorageMeasurement, SystemInfo, Verify,
};

use crate::{Clock, Sample, Trace};

/// Barker 13, the default sync code.
pub const BARKER13: &str = "1111100110101";

/// Knuth's MMIX LCG; `gauss` is Irwin-Hall (4 uniforms), near enough to normal.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next_f64(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Mean 0, standard deviation 1.
    pub fn gauss(&mut self) -> f64 {
        let s: f64 = (0..4).map(|_| self.next_f64()).sum();
        (s - 2.0) * 3f64.sqrt()
    }
}

/// One step of the timeline: name, scope, board seconds, watts.
pub struct Step {
    pub name: String,
    pub scope: HealthScope,
    pub begin_s: f64,
    pub end_s: f64,
    pub watts: f64,
}

/// A run: piecewise-constant power on the board's clock (board seconds).
pub struct Run {
    /// Power between everything else, W.
    pub base_w: f64,
    /// Power of a busy sync slot, W.
    pub busy_w: f64,
    pub steps: Vec<Step>,
    /// (begin s, end s, watts): `radios-off` then `link usb0`.
    pub idle: Vec<(f64, f64, f64)>,
    /// (begin s, slot s): `start`, `end`.
    pub sync: Vec<(f64, f64)>,
    /// How long the board overran each sync pattern, s (recorded in `end_ns`).
    pub overrun_s: f64,
    pub end_s: f64,
    /// Every constant piece, (begin s, end s, watts), sorted, not overlapping.
    pub pieces: Vec<(f64, f64, f64)>,
}

fn ns(s: f64) -> u64 {
    (s * 1e9).round() as u64
}

impl Run {
    /// The standard timeline with 0.5 s sync slots.
    pub fn standard() -> Run {
        Run::new(0.5, 0.0)
    }

    /// The timeline with sync slots of `slot_s`, every step `stretch_s` longer.
    pub fn new(slot_s: f64, stretch_s: f64) -> Run {
        let code = BARKER13.len() as f64;
        let mut at = 5.0;
        let mut pieces = Vec::new();
        let busy_w = 4.2;
        let mut idle = Vec::new();
        let mut sync = Vec::new();
        let mut steps = Vec::new();
        // radios-off idle
        idle.push((at, at + 20.0, 2.0));
        at += 21.0;
        let mut pattern = |at: &mut f64, pieces: &mut Vec<(f64, f64, f64)>| {
            sync.push((*at, slot_s));
            for (i, c) in BARKER13.chars().enumerate() {
                if c == '1' {
                    let b = *at + i as f64 * slot_s;
                    pieces.push((b, b + slot_s, busy_w));
                }
            }
            *at += code * slot_s + 1.5;
        };
        pattern(&mut at, &mut pieces);
        let net = |test| HealthScope::Network {
            link: "ncm".into(),
            test,
        };
        let plan: Vec<(&str, HealthScope, f64, f64)> = vec![
            (
                "storage.ext4.sync.bs4096",
                HealthScope::Storage {
                    target: "ext4".into(),
                    mode: Mode::Sync,
                    block_size: 4096,
                },
                30.0,
                3.1,
            ),
            (
                "device-read.mmcblk0",
                HealthScope::DeviceRead {
                    device: "mmcblk0".into(),
                },
                8.0,
                2.6,
            ),
            (
                "random.ext4.read.qd1",
                HealthScope::Random {
                    target: "ext4".into(),
                    op: RandomOp::Read,
                    queue_depth: 1,
                },
                3.0,
                2.8,
            ),
            (
                "random.ext4.write.qd4",
                HealthScope::Random {
                    target: "ext4".into(),
                    op: RandomOp::Write,
                    queue_depth: 4,
                },
                6.0,
                2.9,
            ),
            (
                "verify.ext4",
                HealthScope::Verify {
                    target: "ext4".into(),
                },
                12.0,
                3.0,
            ),
            ("memory", HealthScope::Memory, 15.0, 3.8),
            (
                "network.ncm.tcp.board-to-host",
                net(NetTest::Tcp {
                    direction: NetDirection::BoardToHost,
                    streams: 1,
                }),
                15.0,
                3.5,
            ),
            ("network.ncm.latency", net(NetTest::Latency), 5.0, 2.4),
        ];
        for (name, scope, len, watts) in plan {
            if name.starts_with("network.ncm.tcp") {
                idle.push((at, at + 10.0, 2.3));
                pieces.push((at, at + 10.0, 2.3));
                at += 11.0;
            }
            let len = if len < 5.0 { len } else { len + stretch_s };
            steps.push(Step {
                name: name.into(),
                scope,
                begin_s: at,
                end_s: at + len,
                watts,
            });
            pieces.push((at, at + len, watts));
            at += len + 1.0;
        }
        at += 1.0;
        pattern(&mut at, &mut pieces);
        pieces.sort_by(|a, b| a.0.total_cmp(&b.0));
        Run {
            base_w: 2.0,
            busy_w,
            steps,
            idle,
            sync,
            overrun_s: 0.002,
            end_s: at + 6.0,
            pieces,
        }
    }

    /// Exact energy from board second `b0` to `b1`, J.
    pub fn energy(&self, b0: f64, b1: f64) -> f64 {
        let mut e = self.base_w * (b1 - b0);
        for &(p0, p1, w) in &self.pieces {
            let lo = p0.max(b0);
            let hi = p1.min(b1);
            if hi > lo {
                e += (w - self.base_w) * (hi - lo);
            }
        }
        e
    }

    /// The results document of this run.
    pub fn results(&self) -> RunResults {
        let mut r = RunResults::new("synth".into(), Plan::example(), SystemInfo::default());
        for s in &self.steps {
            r.health.push(StepHealth {
                step: s.name.clone(),
                scope: s.scope.clone(),
                before: Health {
                    at_ns: ns(s.begin_s),
                    ..Health::default()
                },
                after: Health {
                    at_ns: ns(s.end_s),
                    ..Health::default()
                },
                interrupts: Default::default(),
            });
        }
        let st = |bs: u64, direction, repetition| StorageMeasurement {
            target: "ext4".into(),
            filesystem: Filesystem::Ext4,
            block_size: bs,
            direction,
            mode: Mode::Sync,
            requested_mode: Mode::Sync,
            note: None,
            repetition,
            bytes: 8 << 20,
            nanos: 1_000_000_000,
            stopped_by: StopReason::Bytes,
            begin_ns: None,
            latency: None,
            timeline: Vec::new(),
        };
        for rep in 0..2 {
            r.storage.push(st(4096, Direction::Write, rep));
            r.storage.push(st(4096, Direction::Read, rep));
        }
        r.storage.push(st(512, Direction::Write, 0));
        for (kind, bytes) in [
            (DeviceReadKind::Cached, 64 << 20),
            (DeviceReadKind::Buffered, 32 << 20),
        ] {
            r.device_reads.push(DeviceRead {
                device: "mmcblk0".into(),
                kind,
                bytes,
                nanos: 1_000_000_000,
            });
        }
        for (op, qd, ios) in [(RandomOp::Read, 1, 1000), (RandomOp::Write, 4, 500)] {
            r.random.push(RandomIo {
                target: "ext4".into(),
                op,
                block_size: 4096,
                queue_depth: qd,
                region_bytes: 16 << 20,
                ios,
                nanos: 1_000_000_000,
                latency: None,
            });
        }
        r.verify.push(Verify {
            target: "ext4".into(),
            bytes: 32 << 20,
            first_mismatch: None,
        });
        r.network.throughput.push(ThroughputRun {
            link: "ncm".into(),
            direction: NetDirection::BoardToHost,
            streams: 1,
            omit_ns: 1_000_000_000,
            intervals: Vec::new(),
            bytes: 250_000_000,
            nanos: 10_000_000_000,
            board_cpu: Default::default(),
            host_cpu: Default::default(),
            board_tcp: None,
            host_tcp: None,
        });
        r.network.latency.push(LatencyRun {
            link: "ncm".into(),
            rtt_ns: vec![300_000; 10],
        });
        for (i, &(b0, b1, _)) in self.idle.iter().enumerate() {
            r.energy.idle.push(IdleMark {
                phase: if i == 0 {
                    "radios-off".into()
                } else {
                    "link usb0".into()
                },
                begin_ns: ns(b0),
                end_ns: ns(b1),
            });
        }
        for (i, &(b0, slot)) in self.sync.iter().enumerate() {
            r.energy.sync.push(SyncMark {
                at: if i == 0 { "start".into() } else { "end".into() },
                begin_ns: ns(b0),
                slot_ns: ns(slot),
                code: BARKER13.into(),
                end_ns: ns(b0 + slot * BARKER13.len() as f64 + self.overrun_s),
            });
        }
        r
    }
}

/// How the synthetic meter sees the board.
#[derive(Debug, Clone)]
pub struct Meter {
    /// Meter time at board time 0, s.
    pub offset_s: f64,
    /// Meter seconds per board second.
    pub rate: f64,
    pub period_s: f64,
    /// Reading noise, W (standard deviation).
    pub noise_w: f64,
    /// Time-stamp jitter, s (standard deviation).
    pub jitter_s: f64,
    pub resolution_w: f64,
    /// Chance each sample is lost.
    pub drop: f64,
    /// A stretch the meter lost, (board s, length s).
    pub gap: Option<(f64, f64)>,
    pub seed: u64,
    pub clock: Clock,
}

impl Meter {
    /// A 100 samples/s USB meter (FNB58-like), 50 ppm fast, 1234.567 s ahead.
    pub fn usb(seed: u64) -> Meter {
        Meter {
            offset_s: 1234.567,
            rate: 1.0 + 50e-6,
            period_s: 0.01,
            noise_w: 0.02,
            jitter_s: 0.0005,
            resolution_w: 0.001,
            drop: 0.01,
            gap: None,
            seed,
            clock: Clock::Own,
        }
    }

    /// A smart plug: 1 sample/s, 0.1 W steps.
    pub fn plug(seed: u64) -> Meter {
        Meter {
            period_s: 1.0,
            noise_w: 0.02,
            jitter_s: 0.02,
            resolution_w: 0.1,
            drop: 0.0,
            ..Meter::usb(seed)
        }
    }

    /// Meter seconds of board second `b`.
    pub fn meter_s(&self, b: f64) -> f64 {
        self.offset_s + self.rate * b
    }

    /// What this meter records of `run`, from board second 1 to the run's end.
    pub fn trace(&self, run: &Run) -> Trace {
        let mut rng = Lcg(self.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let board = |m: f64| (m - self.offset_s) / self.rate;
        let first = self.meter_s(1.0);
        let last = self.meter_s(run.end_s);
        let mut samples = Vec::new();
        let mut k = 0u64;
        loop {
            let t = first + k as f64 * self.period_s;
            k += 1;
            if t > last {
                break;
            }
            let c = t + self.jitter_s * rng.gauss();
            let (b0, b1) = (
                board(c - self.period_s / 2.0),
                board(c + self.period_s / 2.0),
            );
            let mut w = run.energy(b0, b1) / (b1 - b0) + self.noise_w * rng.gauss();
            if self.resolution_w > 0.0 {
                w = (w / self.resolution_w).round() * self.resolution_w;
            }
            let lost = rng.next_f64() < self.drop
                || self
                    .gap
                    .is_some_and(|(g, len)| (g..g + len).contains(&board(t)));
            if !lost {
                samples.push(Sample::watts(t, w));
            }
        }
        Trace {
            meter: "synthetic".into(),
            clock: self.clock,
            emulated: false,
            resolution_w: self.resolution_w,
            period_s: self.period_s,
            position: None,
            samples,
            counter_j: None,
            console: Vec::new(),
        }
    }
}
