//! The figures of a run: the one place that walks a results document's measurements
//! into numbers with units ([`figures`]). Each [`Figure`] has what it measures
//! ([`Metric`]), its case id (dotted, as PID 1 names its steps:
//! `storage.ext4.sync.bs4096.r0.write`), its value in its unit, and its [`Context`]
//! (target, mode, direction, block size, queue depth or streams, repetition).
//!
//! Readers: PID 1's console lines and LAVA's case ids (`benchboot_console::figures`,
//! which folds ids LAVA's way), the host's `compare` (every metric [`Metric::compared`]
//! says), report CSV and JSON (a figure no section of theirs shows is written as a
//! figure: [`Metric::name`], id, value, units, context), the headline. Rates come from the unit
//! conversions of this crate ([`crate::mib_per_s`], [`crate::iops`],
//! [`crate::network::mbit_per_s`], [`crate::memory`]'s MB/s and ns over L1).
//!
//! Adding a results field that is a figure: a [`Metric`] variant, its figures in the
//! function of its part below (and so in [`figures`]), then each rendering
//! (ARCHITECTURE.md, "Add a results field").

use std::path::Path;

use crate::command::CommandRun;
use crate::counters::NetTest;
use crate::memory::{ClockCheck, Cores, MemoryResults, Pages};
use crate::network::{mbit_per_s, HttpRun, LatencyRun, NetworkResults, ThroughputRun, UdpRun};
use crate::wifi::WifiEntryResult;
use crate::{
    iops, mib_per_s, CardCheck, DeviceRead, DeviceReadKind, Direction, RandomIo, RandomOp,
    RunResults, StorageMeasurement, Verify,
};

/// What a figure measures, and so its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    /// One timed storage pass (one repetition, one direction), MiB/s.
    Storage,
    /// One `hdparm -T` / `-t`-style read of a disk, MiB/s.
    DeviceRead,
    /// One random-I/O run at one queue depth, IOPS.
    Random,
    /// Bytes written and read back by a verification.
    Verify,
    /// What the card holds of its claimed size, MiB (the claimed size for a genuine card).
    CardCheck,
    /// The whole-card pass's speeds, MiB/s: average write and read over the card, and
    /// the sustained write speed (after the last fall).
    CardSpeed,
    /// The calibrated loop's CPU clock, MHz.
    Clock,
    /// One memory bandwidth test's best sample, MB/s (10^6 B/s: tinymembench's figure).
    MemoryBandwidth,
    /// One latency row's fastest single-read repeat over the L1 baseline, ns.
    MemoryLatency,
    /// What a plan command printed, in its own units.
    Command,
    /// One TCP run, Mbit/s.
    Tcp,
    /// The board's system CPU share during a TCP run, % (not on the console).
    TcpBoardCpuSystem,
    /// The board's softirq CPU share during a TCP run, % (not on the console).
    TcpBoardCpuSoftirq,
    /// Segments the sender retransmitted in a TCP run, from its TCP_INFO (not on the
    /// console).
    TcpRetransmits,
    /// The sender's smoothed RTT (srtt) over a TCP run, mean over its intervals, µs
    /// (`us`), from its TCP_INFO (not on the console).
    TcpSrtt,
    /// The median round trip of a latency run, µs (`us`).
    RoundTrip,
    /// One HTTP GET of an object in RAM, Mbit/s.
    Http,
    /// One UDP run at an offered load, Mbit/s received.
    Udp,
    /// The datagrams a UDP run lost, % of those seen (received + lost); none for a run
    /// that saw nothing.
    UdpLoss,
    /// A WiFi entry's obtained primary frequency, MHz.
    WifiFrequency,
    /// A WiFi entry's obtained channel width, MHz.
    WifiWidth,
    /// A WiFi entry's obtained centre frequency, MHz.
    WifiCentre,
    /// The peer's signal before a WiFi entry's tests, dBm.
    WifiSignal,
    /// The p99 completion latency of one storage pass's timed calls, µs (`us`; fio's
    /// bucket value, [`crate::latency::Latency::percentile`]; schema 1.14, not on the
    /// console).
    StorageLatencyP99,
    /// The p99 completion latency of one random-I/O run's I/Os, µs (`us`; schema 1.14,
    /// not on the console).
    RandomLatencyP99,
}

impl Metric {
    /// Every metric, in declaration order.
    pub const ALL: [Metric; 25] = [
        Metric::Storage,
        Metric::DeviceRead,
        Metric::Random,
        Metric::Verify,
        Metric::CardCheck,
        Metric::CardSpeed,
        Metric::Clock,
        Metric::MemoryBandwidth,
        Metric::MemoryLatency,
        Metric::Command,
        Metric::Tcp,
        Metric::TcpBoardCpuSystem,
        Metric::TcpBoardCpuSoftirq,
        Metric::TcpRetransmits,
        Metric::TcpSrtt,
        Metric::RoundTrip,
        Metric::Http,
        Metric::Udp,
        Metric::UdpLoss,
        Metric::WifiFrequency,
        Metric::WifiWidth,
        Metric::WifiCentre,
        Metric::WifiSignal,
        Metric::StorageLatencyP99,
        Metric::RandomLatencyP99,
    ];

    /// The metric's name as outputs write it (kebab case: `device-read`, `udp-loss`):
    /// the CSV's and JSON's `metric` of a figure no section of their own shows.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Storage => "storage",
            Metric::DeviceRead => "device-read",
            Metric::Random => "random",
            Metric::Verify => "verify",
            Metric::CardCheck => "card-check",
            Metric::CardSpeed => "card-speed",
            Metric::Clock => "clock",
            Metric::MemoryBandwidth => "memory-bandwidth",
            Metric::MemoryLatency => "memory-latency",
            Metric::Command => "command",
            Metric::Tcp => "tcp",
            Metric::TcpBoardCpuSystem => "tcp-board-cpu-system",
            Metric::TcpBoardCpuSoftirq => "tcp-board-cpu-softirq",
            Metric::TcpRetransmits => "tcp-retransmits",
            Metric::TcpSrtt => "tcp-srtt",
            Metric::RoundTrip => "round-trip",
            Metric::Http => "http",
            Metric::Udp => "udp",
            Metric::UdpLoss => "udp-loss",
            Metric::WifiFrequency => "wifi-frequency",
            Metric::WifiWidth => "wifi-width",
            Metric::WifiCentre => "wifi-centre",
            Metric::WifiSignal => "wifi-signal",
            Metric::StorageLatencyP99 => "storage-latency-p99",
            Metric::RandomLatencyP99 => "random-latency-p99",
        }
    }

    /// Whether `compare` lines figures of this metric up across runs. Not: a UDP run
    /// and its loss (the figure's context has no offered load to line runs up by), the
    /// round trip, the bytes a verification moved, the card's real size, the clock
    /// (a check, not a speed) and a WiFi entry's channel and signal (facts of the
    /// radio). Every other metric, a new one too, is compared.
    pub fn compared(self) -> bool {
        !matches!(
            self,
            Metric::Udp
                | Metric::UdpLoss
                | Metric::RoundTrip
                | Metric::Verify
                | Metric::CardCheck
                | Metric::Clock
                | Metric::WifiFrequency
                | Metric::WifiWidth
                | Metric::WifiCentre
                | Metric::WifiSignal
        )
    }

    /// Whether PID 1 prints figures of this metric on the console (and LAVA files
    /// them): all but the board's CPU shares, the sender's TCP_INFO figures and the
    /// storage latency percentiles, which only the host's tables show.
    pub fn on_console(self) -> bool {
        !matches!(
            self,
            Metric::TcpBoardCpuSystem
                | Metric::TcpBoardCpuSoftirq
                | Metric::TcpRetransmits
                | Metric::TcpSrtt
                | Metric::StorageLatencyP99
                | Metric::RandomLatencyP99
        )
    }

    /// Whether an emulator gives a figure of this metric at all: not memory latency
    /// over L1 (QEMU's TCG models no caches) nor the CPU clock (TCG has no clock of its
    /// own). An emulated run's figures of the others carry its EMULATED mark; these are
    /// left out of the console and shown as words, never numbers, by the host.
    pub fn emulator_gives(self) -> bool {
        !matches!(self, Metric::MemoryLatency | Metric::Clock)
    }
}

/// Where a figure was measured. Empty strings and zeros mean "does not apply".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    /// The storage, random-I/O or verification target label; the disk as the document
    /// names it (`/dev/mmcblk0`: device reads, card check); the network link (gadget
    /// function, wired link or WiFi entry); the memory core set (`cpu0`, `all4`); the
    /// clock check's moment (`before-memory`); the command's step id.
    pub target: String,
    /// Storage: the mode asked (`sync`, `direct`); random I/O: `direct`; memory
    /// bandwidth: the kernel id (`libc-memcpy`); memory latency: the page kind (`base`,
    /// `huge`); a command: its measurement's case.
    pub mode: String,
    /// Storage: the mode that ran (a fallback differs from [`Context::mode`]).
    pub mode_ran: String,
    /// `write`/`read` (storage, random I/O), `cached`/`buffered` (device reads),
    /// `board-to-host`/`host-to-board` (network), `copy`/`fill`/`read` (memory
    /// bandwidth), `single` (memory latency).
    pub direction: String,
    /// Block size, bytes (storage, random I/O, memory latency), else 0.
    pub block_size: u64,
    /// Queue depth (random I/O) or TCP streams, else 0.
    pub param: u32,
    /// Storage: the 0-based repetition.
    pub repetition: Option<u32>,
}

/// One figure: `value` in `units` under the case id `id`.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub metric: Metric,
    /// Dotted case id (`random.ext4.read.qd1`): the console's `case=`, LAVA's test case
    /// once folded.
    pub id: String,
    pub value: f64,
    /// `MiB/s`, `IOPS`, `bytes`, `MiB`, `MHz`, `MB/s`, `ns`, `Mbit/s`, `us`, `%`, `dBm`, or
    /// a command's own.
    pub units: String,
    pub context: Context,
}

impl Figure {
    /// A figure with no context (a test's, or a line read back).
    pub fn bare(metric: Metric, id: impl Into<String>, value: f64, units: &str) -> Figure {
        Figure {
            metric,
            id: id.into(),
            value,
            units: units.to_owned(),
            context: Context::default(),
        }
    }

    fn with(mut self, context: Context) -> Figure {
        self.context = context;
        self
    }
}

fn ctx(target: &str) -> Context {
    Context {
        target: target.to_owned(),
        ..Context::default()
    }
}

/// `write`, `read`.
pub fn direction_name(d: Direction) -> &'static str {
    match d {
        Direction::Write => "write",
        Direction::Read => "read",
    }
}

/// `cached`, `buffered`.
pub fn device_read_kind_name(k: DeviceReadKind) -> &'static str {
    match k {
        DeviceReadKind::Cached => "cached",
        DeviceReadKind::Buffered => "buffered",
    }
}

/// `read`, `write`.
pub fn random_op_name(op: RandomOp) -> &'static str {
    match op {
        RandomOp::Read => "read",
        RandomOp::Write => "write",
    }
}

/// `storage.<target>.<mode asked>.bs<bytes>.r<repetition>.<write|read>`, MiB/s.
pub fn storage(m: &StorageMeasurement) -> Figure {
    let dir = direction_name(m.direction);
    let mode = m.requested_mode.name();
    let id = format!(
        "{}.{dir}",
        storage_step(&m.target, mode, m.block_size, m.repetition)
    );
    Figure::bare(Metric::Storage, id, mib_per_s(m.bytes, m.nanos), "MiB/s").with(Context {
        mode: mode.into(),
        mode_ran: m.mode.name().into(),
        direction: dir.into(),
        block_size: m.block_size,
        repetition: Some(m.repetition),
        ..ctx(&m.target)
    })
}

/// `<storage id>.p99`: the p99 latency per call of pass `m`, µs, with the context of
/// its throughput figure ([`storage`]); `None` for a pass without latency (documents
/// before schema 1.14).
pub fn storage_latency_p99(m: &StorageMeasurement) -> Option<Figure> {
    let p99 = m.latency.as_ref()?.percentile(0.99);
    let of = storage(m);
    let id = format!("{}.p99", of.id);
    Some(Figure::bare(Metric::StorageLatencyP99, id, p99 as f64 / 1e3, "us").with(of.context))
}

/// The id of one storage cell (all its repetitions): `storage.<target>.<mode>.bs<bytes>`.
pub fn storage_cell(target: &str, mode: &str, block_size: u64) -> String {
    format!("storage.{target}.{mode}.bs{block_size}")
}

/// The step id of one storage repetition: `storage.<target>.<mode>.bs<bytes>.r<rep>`.
pub fn storage_step(target: &str, mode: &str, block_size: u64, repetition: u32) -> String {
    format!("{}.r{repetition}", storage_cell(target, mode, block_size))
}

/// `device-read.<disk>.<cached|buffered>` (hdparm -T / -t), MiB/s.
pub fn device_read(r: &DeviceRead) -> Figure {
    let kind = device_read_kind_name(r.kind);
    let id = format!("{}.{kind}", device_read_step(&r.device));
    Figure::bare(Metric::DeviceRead, id, mib_per_s(r.bytes, r.nanos), "MiB/s").with(Context {
        direction: kind.into(),
        ..ctx(&r.device)
    })
}

/// The step id of the device reads of `disk` (`/dev/mmcblk0`): `device-read.mmcblk0`.
pub fn device_read_step(disk: &str) -> String {
    let name = Path::new(disk)
        .file_name()
        .map_or_else(|| disk.to_owned(), |n| n.to_string_lossy().into_owned());
    format!("device-read.{name}")
}

/// `random.<target>.<read|write>.qd<depth>`, IOPS.
pub fn random(r: &RandomIo) -> Figure {
    let id = random_step(&r.target, r.op, r.queue_depth);
    Figure::bare(Metric::Random, id, iops(r.ios, r.nanos), "IOPS").with(Context {
        mode: "direct".into(),
        direction: random_op_name(r.op).into(),
        block_size: r.block_size,
        param: r.queue_depth,
        ..ctx(&r.target)
    })
}

/// `<random id>.p99`: the p99 latency per I/O of run `r`, µs, with the context of its
/// IOPS figure ([`random`]); `None` for a run without latency.
pub fn random_latency_p99(r: &RandomIo) -> Option<Figure> {
    let p99 = r.latency.as_ref()?.percentile(0.99);
    let of = random(r);
    let id = format!("{}.p99", of.id);
    Some(Figure::bare(Metric::RandomLatencyP99, id, p99 as f64 / 1e3, "us").with(of.context))
}

/// The step id of one random-I/O run.
pub fn random_step(target: &str, op: RandomOp, queue_depth: u32) -> String {
    format!("random.{target}.{}.qd{queue_depth}", random_op_name(op))
}

/// `verify.<target>`: bytes written and read back (the verdict says whether they
/// matched).
pub fn verify(v: &Verify) -> Figure {
    let id = format!("verify.{}", v.target);
    Figure::bare(Metric::Verify, id, v.bytes as f64, "bytes").with(ctx(&v.target))
}

/// `card.check`: what the card holds of its claimed size, MiB (the claimed size for a
/// genuine card); with the whole-card pass, its speeds in MiB/s ([`Metric::CardSpeed`],
/// direction `write`, `read`, `sustained`): `card.full.write` and `card.full.read`, the
/// averages over what it covered, and `card.full.sustained`, the median write speed
/// from the profile's last fall to the end (the card's speed once its fast cache is
/// full), or over the whole profile when it has no fall. Speeds of passes that moved no data are left
/// out.
pub fn card_check(c: &CardCheck) -> Vec<Figure> {
    let holds = c.report.real_bytes.unwrap_or(c.report.claimed_bytes);
    let mut out = vec![
        Figure::bare(Metric::CardCheck, "card.check", (holds >> 20) as f64, "MiB")
            .with(ctx(&c.device)),
    ];
    let Some(f) = &c.report.full else {
        return out;
    };
    let speed = |dir: &str, v: f64| {
        (v > 0.0 && v.is_finite()).then(|| {
            Figure::bare(Metric::CardSpeed, format!("card.full.{dir}"), v, "MiB/s").with(Context {
                direction: dir.into(),
                ..ctx(&c.device)
            })
        })
    };
    out.extend(speed("write", f.write_mib_s()));
    out.extend(speed("read", f.read_mib_s()));
    out.extend(speed("sustained", f.sustained_write_mib_s()));
    out
}

/// `clock.<at>.measured`: the calibrated loop's clock, MHz.
pub fn clock(c: &ClockCheck) -> Figure {
    let id = format!("clock.{}.measured", c.at);
    Figure::bare(Metric::Clock, id, c.measured_hz as f64 / 1e6, "MHz").with(ctx(&c.at))
}

/// `cpu<N>` (one core), `all<N>` (all N cores at once).
pub fn cores_id(c: Cores) -> String {
    match c {
        Cores::One(n) => format!("cpu{n}"),
        Cores::All(n) => format!("all{n}"),
    }
}

/// `base`, `huge`.
pub fn pages_id(p: Pages) -> &'static str {
    match p {
        Pages::Base(_) => "base",
        Pages::Huge => "huge",
    }
}

/// Per bandwidth test with samples the best MB/s (tinymembench's figure) as
/// `memory.<kernel>.cpu<N>|all<N>`, per latency row the ns over L1 (single read) as
/// `memory.latency.<base|huge>.bs<bytes>`.
pub fn memory(m: &MemoryResults) -> Vec<Figure> {
    let mut out = Vec::new();
    for t in &m.bandwidth {
        let Some((best, _)) = t.best_and_spread() else {
            continue;
        };
        let cores = cores_id(t.cores);
        let id = format!("memory.{}.{cores}", t.kernel);
        let op = match t.op {
            crate::memory::MemOp::Copy => "copy",
            crate::memory::MemOp::Fill => "fill",
            crate::memory::MemOp::Read => "read",
        };
        out.push(
            Figure::bare(Metric::MemoryBandwidth, id, best, "MB/s").with(Context {
                mode: t.kernel.clone(),
                direction: op.into(),
                ..ctx(&cores)
            }),
        );
    }
    for t in &m.latency {
        let pages = pages_id(t.pages);
        for r in &t.rows {
            if let Some((single, _)) = t.extra_ns(r) {
                let id = format!("memory.latency.{pages}.bs{}", r.block_bytes);
                out.push(
                    Figure::bare(Metric::MemoryLatency, id, single, "ns").with(Context {
                        target: format!("cpu{}", t.core),
                        mode: pages.into(),
                        direction: "single".into(),
                        block_size: r.block_bytes,
                        ..Context::default()
                    }),
                );
            }
        }
    }
    out
}

/// The step id of a network test: `network.ncm.tcp.board-to-host.s4`,
/// `network.ncm.rtt`, `network.ncm.http.host-to-board`, `network.eth.udp.board-to-host`.
pub fn network_step(link: &str, test: &NetTest) -> String {
    match test {
        NetTest::Tcp { direction, streams } => {
            format!("network.{link}.tcp.{}.s{streams}", direction.name())
        }
        NetTest::Latency => format!("network.{link}.rtt"),
        NetTest::Http { direction } => format!("network.{link}.http.{}", direction.name()),
        NetTest::Udp { direction } => format!("network.{link}.udp.{}", direction.name()),
    }
}

/// `network.<link>.tcp.<direction>.s<streams>`: one TCP run, Mbit/s.
pub fn tcp(t: &ThroughputRun) -> Figure {
    let id = network_step(&t.link, &NetTest::of_throughput(t));
    let mbit = mbit_per_s(t.bytes, t.nanos);
    Figure::bare(Metric::Tcp, id, mbit, "Mbit/s").with(Context {
        direction: t.direction.name().into(),
        param: t.streams,
        ..ctx(&t.link)
    })
}

/// The board's system and softirq CPU shares over a TCP run, %
/// (`<tcp id>.board-cpu-system|softirq`; not on the console); none when the board's
/// counters moved not at all.
pub fn tcp_board_cpu(t: &ThroughputRun) -> Vec<Figure> {
    let Some(share) = t.board_cpu.share() else {
        return Vec::new();
    };
    let of = tcp(t);
    [
        (Metric::TcpBoardCpuSystem, "system", share.system),
        (Metric::TcpBoardCpuSoftirq, "softirq", share.softirq),
    ]
    .into_iter()
    .map(|(metric, what, pct)| {
        let id = format!("{}.board-cpu-{what}", of.id);
        Figure::bare(metric, id, pct, "%").with(of.context.clone())
    })
    .collect()
}

/// The sender's TCP_INFO totals of a TCP run ([`ThroughputRun::sender_tcp`]):
/// `<tcp id>.retransmits` (segments) and `<tcp id>.srtt` (mean srtt, µs); none where the
/// sender's kernel gave none.
pub fn tcp_sender(t: &ThroughputRun) -> Vec<Figure> {
    let Some(s) = t.sender_tcp() else {
        return Vec::new();
    };
    let of = tcp(t);
    [
        (
            Metric::TcpRetransmits,
            "retransmits",
            s.retransmits as f64,
            "segments",
        ),
        (Metric::TcpSrtt, "srtt", f64::from(s.srtt_us), "us"),
    ]
    .into_iter()
    .map(|(metric, what, value, units)| {
        Figure::bare(metric, format!("{}.{what}", of.id), value, units).with(of.context.clone())
    })
    .collect()
}

/// `network.<link>.rtt.median`: the median round trip (the upper middle one of an even
/// count), µs; none for a run without round trips.
pub fn round_trip(l: &LatencyRun) -> Option<Figure> {
    let mut rtt = l.rtt_ns.clone();
    rtt.sort_unstable();
    let &median = rtt.get(rtt.len() / 2)?;
    let id = format!("{}.median", network_step(&l.link, &NetTest::Latency));
    let us = median as f64 / 1e3;
    Some(Figure::bare(Metric::RoundTrip, id, us, "us").with(ctx(&l.link)))
}

/// `network.<link>.http.<direction>`: one HTTP GET, Mbit/s.
pub fn http(h: &HttpRun) -> Figure {
    let id = network_step(&h.link, &NetTest::of_http(h));
    let mbit = mbit_per_s(h.bytes, h.nanos);
    Figure::bare(Metric::Http, id, mbit, "Mbit/s").with(Context {
        direction: h.direction.name().into(),
        ..ctx(&h.link)
    })
}

/// `network.<link>.udp.<direction>`: one UDP run, Mbit/s received.
pub fn udp(u: &UdpRun) -> Figure {
    let id = network_step(&u.link, &NetTest::of_udp(u));
    let mbit = mbit_per_s(u.bytes, u.nanos);
    Figure::bare(Metric::Udp, id, mbit, "Mbit/s").with(Context {
        direction: u.direction.name().into(),
        ..ctx(&u.link)
    })
}

/// `<udp id>.loss`: the datagrams a UDP run lost, % of those seen
/// ([`UdpRun::loss_pct`]); none when the receiver saw nothing.
pub fn udp_loss(u: &UdpRun) -> Option<Figure> {
    let loss = u.loss_pct()?;
    let of = udp(u);
    Some(Figure::bare(Metric::UdpLoss, format!("{}.loss", of.id), loss, "%").with(of.context))
}

/// Per throughput run its Mbit/s ([`tcp`], then [`tcp_board_cpu`] and [`tcp_sender`]),
/// per latency run the
/// median round trip ([`round_trip`]), per HTTP GET its Mbit/s ([`http`]), per UDP run
/// its Mbit/s and loss ([`udp`], [`udp_loss`]).
pub fn network(n: &NetworkResults) -> Vec<Figure> {
    let mut v = Vec::new();
    for t in &n.throughput {
        v.push(tcp(t));
        v.extend(tcp_board_cpu(t));
        v.extend(tcp_sender(t));
    }
    v.extend(n.latency.iter().filter_map(round_trip));
    v.extend(n.http.iter().map(http));
    for u in &n.udp {
        v.push(udp(u));
        v.extend(udp_loss(u));
    }
    v
}

/// A WiFi entry that ran: the obtained primary frequency, width and centre (MHz), and
/// the peer's signal (dBm) before the tests. A skipped entry has none (its verdict says
/// why).
pub fn wifi_entry(r: &WifiEntryResult) -> Vec<Figure> {
    let f = |metric, what: &str, value: f64, units| {
        let id = format!("network.{}.{what}", r.link);
        Figure::bare(metric, id, value, units).with(ctx(&r.link))
    };
    let mut out = Vec::new();
    if let (None, Some(o)) = (&r.skipped, &r.obtained) {
        out.push(f(
            Metric::WifiFrequency,
            "freq",
            f64::from(o.freq_mhz),
            "MHz",
        ));
        out.push(f(Metric::WifiWidth, "width", f64::from(o.width_mhz), "MHz"));
        out.push(f(
            Metric::WifiCentre,
            "centre",
            f64::from(o.center1_mhz),
            "MHz",
        ));
    }
    if let Some(s) = r.station_before.as_ref().and_then(|s| s.signal_dbm) {
        out.push(f(Metric::WifiSignal, "signal", f64::from(s), "dBm"));
    }
    out
}

/// The step id of a plan command: `command.<id>`.
pub fn command_step(id: &str) -> String {
    format!("command.{id}")
}

/// What a plan command printed: `command.<id>.<its case>` in its own units.
pub fn command(c: &CommandRun) -> Vec<Figure> {
    c.measurements
        .iter()
        .map(|m| {
            let id = format!("{}.{}", command_step(&c.id), m.case);
            Figure::bare(Metric::Command, id, m.value, &m.units).with(Context {
                mode: m.case.clone(),
                ..ctx(&c.id)
            })
        })
        .collect()
}

/// Every figure of `r`, part by part, in the order PID 1 measures them: clock checks,
/// memory, storage (throughput, then p99 per call), device reads, random I/O (IOPS,
/// then p99 per I/O), verification, card check, commands,
/// network (throughput, round trips, HTTP, UDP), WiFi entries.
pub fn figures(r: &RunResults) -> Vec<Figure> {
    let mut out = Vec::new();
    out.extend(r.clock_checks.iter().map(clock));
    if let Some(m) = &r.memory {
        out.extend(memory(m));
    }
    out.extend(r.storage.iter().map(storage));
    out.extend(r.storage.iter().filter_map(storage_latency_p99));
    out.extend(r.device_reads.iter().map(device_read));
    out.extend(r.random.iter().map(random));
    out.extend(r.random.iter().filter_map(random_latency_p99));
    out.extend(r.verify.iter().map(verify));
    out.extend(r.card_check.iter().flat_map(card_check));
    out.extend(r.commands.iter().flat_map(command));
    out.extend(network(&r.network));
    out.extend(r.network.wifi.entries.iter().flat_map(wifi_entry));
    out
}

#[cfg(test)]
#[path = "figures/tests.rs"]
mod tests;
