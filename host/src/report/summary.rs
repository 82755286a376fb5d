//! The report as data for scripts (`--format json`): every table's figures as numbers
//! with their units in the field names, plus context and warnings.

use benchboot_plan::{Filesystem, Mode};
use benchboot_results::counters::{NetDirection, NetTest};
use benchboot_results::figures::{self, Figure};
use benchboot_results::health::conditions_during;
use benchboot_results::network::{
    CpuShare, HttpRun, LatencyRun, LinkFacts, ThroughputRun, UdpRun, WiredLink,
};
use benchboot_results::{
    a1_verdict, mb_per_s, mib_per_s, Condition, DeviceReadKind, Direction, Health, HealthScope,
    RandomOp, RunResults, StepHealth, Summary,
};
use serde::{Deserialize, Serialize};

pub mod memory;
pub mod wifi;

use super::other_figures::FigureCell;
use crate::context::{context, warnings, Context, Warning, EMULATED_NOTICE};
use crate::render::{
    cell_values, device_read_values, interval_mbits, link_facts_lines, percentile,
};

/// What `--format json` prints: shape version 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportJson {
    /// Always `benchboot-report`.
    pub kind: String,
    /// Shape version of this JSON (1).
    pub version: u32,
    /// True for a QEMU run: never a hardware result.
    pub emulated: bool,
    /// [`EMULATED_NOTICE`] for a QEMU run.
    pub notice: Option<String>,
    pub context: Context,
    pub warnings: Vec<Warning>,
    /// One entry per target × mode asked × direction × block size of the plan.
    pub storage: Vec<StorageCell>,
    pub device_reads: Vec<DeviceReadCell>,
    pub random: Vec<RandomCell>,
    pub a1: Vec<A1Cell>,
    pub network: NetworkSummary,
    pub verify: Vec<VerifyCell>,
    /// Board health before and after every step, with what was flagged during it.
    #[serde(default)]
    pub health: Vec<HealthStep>,
    /// The memory step (tinymembench's figures); absent when the run has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<memory::MemorySummary>,
    /// The CPU clock checks, MHz; absent when the run has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clock_checks: Vec<memory::ClockCell>,
    /// Every figure of the run no field above shows (a plan command's, the card check's,
    /// a figure added to the model): [`super::other_figures`]. Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<FigureCell>,
}

/// One step's health: the snapshots and the conditions they flag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HealthStep {
    pub step: String,
    pub scope: HealthScope,
    /// Conditions flagged during the step (now in a snapshot, or raised between them);
    /// the step's figures carry them in `health_flags`.
    pub during: Vec<Condition>,
    /// "Has occurred" flags already set when the step began.
    pub earlier: Vec<Condition>,
    pub before: Health,
    pub after: Health,
}

impl HealthStep {
    fn of(h: &StepHealth) -> HealthStep {
        HealthStep {
            step: h.step.clone(),
            scope: h.scope.clone(),
            during: h.during(),
            earlier: h.earlier(),
            before: h.before.clone(),
            after: h.after.clone(),
        }
    }
}

/// Median, min and max of `n` repetitions, in the unit the field holding it names.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// `None` for no values.
    pub fn of(values: &[f64]) -> Option<Spread> {
        Summary::of(values).map(|s| Spread {
            n: s.count,
            median: s.median,
            min: s.min,
            max: s.max,
        })
    }
}

/// One cell of the seeds' storage table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StorageCell {
    pub target: String,
    pub filesystem: Filesystem,
    /// The mode the plan asked for (the table the cell is in).
    pub mode: Mode,
    pub direction: Direction,
    pub block_size_bytes: u64,
    /// MiB/s (2^20 bytes per second) over the repetitions; `None` when not measured.
    pub mib_per_s: Option<Spread>,
    /// The mode that ran instead of `mode` (an O_DIRECT fallback), if any.
    pub ran_as: Option<Mode>,
    /// Board health flagged while this cell was measured (empty: none, or not recorded).
    #[serde(default)]
    pub health_flags: Vec<Condition>,
}

/// `hdparm -T`/`-t`-style reads of one disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceReadCell {
    pub device: String,
    pub kind: DeviceReadKind,
    /// MiB/s.
    pub mib_per_s: Spread,
    #[serde(default)]
    pub health_flags: Vec<Condition>,
}

/// Random I/O of one target, operation and queue depth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RandomCell {
    pub target: String,
    pub op: RandomOp,
    pub block_size_bytes: u64,
    pub queue_depth: u32,
    /// Operations per second.
    pub iops: Spread,
    #[serde(default)]
    pub health_flags: Vec<Condition>,
}

/// The A1 verdict of one target (`verdict: None` when a deciding figure is missing).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct A1Cell {
    pub target: String,
    pub verdict: Option<A1Figures>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct A1Figures {
    /// The floors met; not a verdict when `emulated`.
    pub passes: bool,
    /// An emulated run: QEMU's virtual disk is no card, the floors are not judged
    /// ([`benchboot_results::A1Outcome::Emulated`]).
    #[serde(default)]
    pub emulated: bool,
    /// MB/s (10^6 bytes per second, as the console's verdict gives it); the floor is 10.
    pub seq_write_mb_per_s: f64,
    /// 4 KiB at QD1; floors 500 (write) and 1,500 (read).
    pub random_write_iops: f64,
    pub random_read_iops: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct NetworkSummary {
    pub throughput: Vec<TcpCell>,
    pub latency: Vec<LatencyCell>,
    pub http: Vec<HttpCell>,
    #[serde(default)]
    pub udp: Vec<UdpCell>,
    /// The wired links with their facts (each run names its link in `link`).
    #[serde(default)]
    pub wired: Vec<WiredCell>,
    /// The WiFi section (schema 1.8); absent when the run has nothing WiFi.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wifi: Option<wifi::WifiSummary>,
}

/// One wired link: what the kernel says it is, how the peer was reached, its trouble.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WiredCell {
    /// The plan's name, as the runs' `link`.
    pub link: String,
    /// `builtin` or `usb-adapter`.
    pub kind: String,
    pub interface: String,
    pub mac: String,
    pub facts: LinkFacts,
    /// `direct` or `lan`.
    pub topology: String,
    /// `a.b.c.d/prefix`.
    pub board_address: String,
    pub peer_address: Option<String>,
    /// `lease`, `plan` or `announce`.
    pub peer_found_by: Option<String>,
    /// Interface errors and drops (rx + tx) during the tests, packets.
    pub errors_and_drops: u64,
    /// Why the link runs below its rating (the report's LINK BELOW ITS RATING alert).
    pub degraded: Option<String>,
    /// The facts as the report prints them above the link's table.
    pub facts_text: Vec<String>,
}

/// One UDP run at a set offered load, counted at the receiver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UdpCell {
    pub link: String,
    pub direction: NetDirection,
    /// Offered load, Mbit/s (10^6 bit/s) of UDP payload.
    pub offered_mbit_per_s: f64,
    pub datagram_bytes: u32,
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    /// lost / (received + lost) × 100; `None` when nothing was expected.
    pub loss_pct: Option<f64>,
    pub out_of_order: u64,
    /// RFC 3550 interarrival jitter at the end of the run, ms.
    pub jitter_ms: f64,
    pub seconds: f64,
    /// Payload received: MB/s (10^6 B/s), MiB/s (2^20 B/s), Mbit/s (10^6 bit/s).
    pub mb_per_s: f64,
    pub mib_per_s: f64,
    pub mbit_per_s: f64,
    pub board_cpu: Option<CpuShare>,
    pub host_cpu: Option<CpuShare>,
    #[serde(default)]
    pub health_flags: Vec<Condition>,
}

/// One TCP throughput run, counted at the receiver after the warm-up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TcpCell {
    pub link: String,
    pub direction: NetDirection,
    pub streams: u32,
    /// Warm-up left out, seconds.
    pub omit_s: f64,
    /// Mbit/s (10^6 bit/s) over the whole run.
    pub mbit_per_s: f64,
    /// MiB/s (2^20 B/s).
    pub mib_per_s: f64,
    /// MB/s (10^6 B/s).
    #[serde(default)]
    pub mb_per_s: f64,
    /// Mbit/s of each interval, in order.
    pub interval_mbit_per_s: Vec<f64>,
    pub board_cpu: Option<CpuShare>,
    pub host_cpu: Option<CpuShare>,
    #[serde(default)]
    pub health_flags: Vec<Condition>,
}

/// TCP round trips of one link, microseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyCell {
    pub link: String,
    pub round_trips: usize,
    pub min_us: Option<f64>,
    pub median_us: Option<f64>,
    /// Nearest-rank 99th percentile.
    pub p99_us: Option<f64>,
    pub max_us: Option<f64>,
    #[serde(default)]
    pub health_flags: Vec<Condition>,
}

/// One HTTP GET of an object in the sender's RAM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpCell {
    pub link: String,
    pub direction: NetDirection,
    pub bytes: u64,
    pub seconds: f64,
    /// MiB/s (2^20 B/s).
    pub mib_per_s: f64,
    /// Mbit/s (10^6 bit/s).
    pub mbit_per_s: f64,
    /// MB/s (10^6 B/s).
    #[serde(default)]
    pub mb_per_s: f64,
    pub board_cpu: Option<CpuShare>,
    pub host_cpu: Option<CpuShare>,
    #[serde(default)]
    pub health_flags: Vec<Condition>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifyCell {
    pub target: String,
    pub bytes: u64,
    /// Byte offset of the first wrong byte; `None` when everything matched.
    pub first_mismatch: Option<u64>,
    #[serde(default)]
    pub health_flags: Vec<Condition>,
}

/// The whole report of `r` as data.
pub fn summary(r: &RunResults) -> ReportJson {
    let (mem, clock_checks) = memory::of_run(r);
    ReportJson {
        kind: "benchboot-report".into(),
        version: 1,
        emulated: r.emulated,
        notice: r.emulated.then(|| EMULATED_NOTICE.to_owned()),
        context: context(r),
        warnings: warnings(r),
        storage: storage_cells(r),
        device_reads: device_read_cells(r),
        random: random_cells(r),
        a1: a1_cells(r),
        network: network_summary(r),
        verify: verify_cells(r),
        health: r.health.iter().map(HealthStep::of).collect(),
        memory: mem,
        clock_checks,
        figures: figure_cells(&super::other_figures::of_run(r)),
    }
}

/// `figures` as the JSON's `figures` list.
pub fn figure_cells(figures: &[Figure]) -> Vec<FigureCell> {
    figures.iter().map(FigureCell::of).collect()
}

/// The health conditions flagged during the step of `scope`.
fn flags(r: &RunResults, scope: HealthScope) -> Vec<Condition> {
    conditions_during(&r.health, &scope)
}

/// The health conditions flagged during the network test `test` on `link`.
fn net_flags(r: &RunResults, link: &str, test: NetTest) -> Vec<Condition> {
    flags(
        r,
        HealthScope::Network {
            link: link.to_owned(),
            test,
        },
    )
}

/// One cell per target × mode asked × direction × block size of the plan, measured or
/// not.
fn storage_cells(r: &RunResults) -> Vec<StorageCell> {
    let mut storage = Vec::new();
    for t in &r.plan.storage.targets {
        for &mode in &r.plan.storage.modes {
            for dir in [Direction::Write, Direction::Read] {
                for &bs in &r.plan.storage.block_sizes {
                    let (values, fell_back) = cell_values(r, &t.label, bs, dir, mode);
                    let ran_as = fell_back
                        .then(|| {
                            r.storage
                                .iter()
                                .find(|m| {
                                    m.target == t.label
                                        && m.block_size == bs
                                        && m.direction == dir
                                        && m.requested_mode == mode
                                        && m.mode != mode
                                })
                                .map(|m| m.mode)
                        })
                        .flatten();
                    storage.push(StorageCell {
                        target: t.label.clone(),
                        filesystem: t.filesystem,
                        mode,
                        direction: dir,
                        block_size_bytes: bs,
                        mib_per_s: Spread::of(&values),
                        ran_as,
                        health_flags: flags(
                            r,
                            HealthScope::Storage {
                                target: t.label.clone(),
                                mode,
                                block_size: bs,
                            },
                        ),
                    });
                }
            }
        }
    }
    storage
}

/// Per disk and kind (cached, buffered) the spread of its reads.
fn device_read_cells(r: &RunResults) -> Vec<DeviceReadCell> {
    let mut device_reads = Vec::new();
    let mut devices: Vec<&str> = r.device_reads.iter().map(|d| d.device.as_str()).collect();
    devices.dedup();
    for dev in devices {
        for kind in [DeviceReadKind::Cached, DeviceReadKind::Buffered] {
            let v = device_read_values(r, dev, kind);
            if let Some(s) = Spread::of(&v) {
                device_reads.push(DeviceReadCell {
                    device: dev.into(),
                    kind,
                    mib_per_s: s,
                    health_flags: flags(r, HealthScope::DeviceRead { device: dev.into() }),
                });
            }
        }
    }
    device_reads
}

/// Per target, operation, block size and queue depth the spread of its IOPS.
fn random_cells(r: &RunResults) -> Vec<RandomCell> {
    let mut random = Vec::new();
    let mut keys: Vec<(String, RandomOp, u64, u32)> = Vec::new();
    for x in &r.random {
        let k = (x.target.clone(), x.op, x.block_size, x.queue_depth);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for (target, op, bs, qd) in keys {
        let v: Vec<f64> = r
            .random
            .iter()
            .filter(|x| {
                x.target == target && x.op == op && x.block_size == bs && x.queue_depth == qd
            })
            .map(|x| figures::random(x).value)
            .collect();
        if let Some(s) = Spread::of(&v) {
            let health_flags = flags(
                r,
                HealthScope::Random {
                    target: target.clone(),
                    op,
                    queue_depth: qd,
                },
            );
            random.push(RandomCell {
                target,
                op,
                block_size_bytes: bs,
                queue_depth: qd,
                iops: s,
                health_flags,
            });
        }
    }
    random
}

/// The A1 verdict of every target the plan ran random I/O on.
fn a1_cells(r: &RunResults) -> Vec<A1Cell> {
    r.plan
        .storage
        .random
        .iter()
        .flat_map(|rp| rp.targets.iter())
        .map(|t| A1Cell {
            target: t.clone(),
            verdict: a1_verdict(r, t).map(|v| A1Figures {
                passes: v.passes,
                emulated: r.emulated,
                seq_write_mb_per_s: v.seq_write_mb_per_s(),
                random_write_iops: v.random_write_iops,
                random_read_iops: v.random_read_iops,
            }),
        })
        .collect()
}

/// Every verification: bytes and the first mismatch.
fn verify_cells(r: &RunResults) -> Vec<VerifyCell> {
    r.verify
        .iter()
        .map(|v| VerifyCell {
            target: v.target.clone(),
            bytes: v.bytes,
            first_mismatch: v.first_mismatch,
            health_flags: flags(
                r,
                HealthScope::Verify {
                    target: v.target.clone(),
                },
            ),
        })
        .collect()
}

/// The network section: TCP, round trips, HTTP, UDP, the wired links, WiFi.
fn network_summary(r: &RunResults) -> NetworkSummary {
    let n = &r.network;
    NetworkSummary {
        throughput: n.throughput.iter().map(|t| tcp_cell(r, t)).collect(),
        latency: n.latency.iter().map(|l| latency_cell(r, l)).collect(),
        http: n.http.iter().map(|h| http_cell(r, h)).collect(),
        udp: n.udp.iter().map(|u| udp_cell(r, u)).collect(),
        wired: n.wired.iter().map(wired_cell).collect(),
        wifi: wifi::wifi_summary(n, r.emulated),
    }
}

fn tcp_cell(r: &RunResults, t: &ThroughputRun) -> TcpCell {
    TcpCell {
        link: t.link.clone(),
        direction: t.direction,
        streams: t.streams,
        omit_s: t.omit_ns as f64 / 1e9,
        mbit_per_s: figures::tcp(t).value,
        mib_per_s: mib_per_s(t.bytes, t.nanos),
        mb_per_s: mb_per_s(t.bytes, t.nanos),
        interval_mbit_per_s: interval_mbits(t),
        board_cpu: t.board_cpu.share(),
        host_cpu: t.host_cpu.share(),
        health_flags: net_flags(r, &t.link, NetTest::of_throughput(t)),
    }
}

fn latency_cell(r: &RunResults, l: &LatencyRun) -> LatencyCell {
    let mut v = l.rtt_ns.clone();
    v.sort_unstable();
    let us = |x: Option<u64>| x.map(|ns| ns as f64 / 1e3);
    LatencyCell {
        link: l.link.clone(),
        round_trips: v.len(),
        min_us: us(v.first().copied()),
        median_us: Summary::of(&v.iter().map(|&x| x as f64).collect::<Vec<_>>())
            .map(|s| s.median / 1e3),
        p99_us: us(percentile(&v, 99.0)),
        max_us: us(v.last().copied()),
        health_flags: net_flags(r, &l.link, NetTest::Latency),
    }
}

fn http_cell(r: &RunResults, h: &HttpRun) -> HttpCell {
    HttpCell {
        link: h.link.clone(),
        direction: h.direction,
        bytes: h.bytes,
        seconds: h.nanos as f64 / 1e9,
        mib_per_s: mib_per_s(h.bytes, h.nanos),
        mbit_per_s: figures::http(h).value,
        mb_per_s: mb_per_s(h.bytes, h.nanos),
        board_cpu: h.board_cpu.share(),
        host_cpu: h.host_cpu.share(),
        health_flags: net_flags(r, &h.link, NetTest::of_http(h)),
    }
}

fn udp_cell(r: &RunResults, u: &UdpRun) -> UdpCell {
    UdpCell {
        link: u.link.clone(),
        direction: u.direction,
        offered_mbit_per_s: u.target_bitrate as f64 / 1e6,
        datagram_bytes: u.datagram_bytes,
        sent: u.sent,
        received: u.received,
        lost: u.lost,
        loss_pct: u.loss_pct(),
        out_of_order: u.out_of_order,
        jitter_ms: u.jitter_ns as f64 / 1e6,
        seconds: u.nanos as f64 / 1e9,
        mb_per_s: mb_per_s(u.bytes, u.nanos),
        mib_per_s: mib_per_s(u.bytes, u.nanos),
        mbit_per_s: figures::udp(u).value,
        board_cpu: u.board_cpu.share(),
        host_cpu: u.host_cpu.share(),
        health_flags: net_flags(r, &u.link, NetTest::of_udp(u)),
    }
}

fn wired_cell(w: &WiredLink) -> WiredCell {
    let ip = |a: [u8; 4]| format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3]);
    WiredCell {
        link: w.name.clone(),
        kind: w.kind.clone(),
        interface: w.interface.clone(),
        mac: w.mac.clone(),
        facts: w.facts.clone(),
        topology: w.topology.clone(),
        board_address: format!("{}/{}", ip(w.board_address), w.prefix_len),
        peer_address: w.peer_address.map(ip),
        peer_found_by: w.peer_found_by.clone(),
        errors_and_drops: crate::context::errors_and_drops(w),
        degraded: w.facts.degraded(),
        facts_text: link_facts_lines(w),
    }
}
