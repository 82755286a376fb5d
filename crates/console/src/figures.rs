//! The figures of a run: one number with units per measurement, each with the case id
//! its console line carries (`case=<id> value=<number> units=<unit>`).
//!
//! Each function maps one part of the results document to its figures, so PID 1 prints
//! a figure the moment it is measured and the host derives the same list from the
//! document ([`all`]). Rates come from the results crate (the one place that turns
//! bytes and ns into MiB/s, MB/s, IOPS, Mbit/s).

use std::path::Path;

use benchboot_results::command::CommandRun;
use benchboot_results::memory::{ClockCheck, Cores, MemoryResults, Pages};
use benchboot_results::network::{mbit_per_s, NetTest, NetworkResults};
use benchboot_results::summary::{iops, mib_per_s};
use benchboot_results::wifi::WifiEntryResult;
use benchboot_results::{
    CardCheck, DeviceRead, DeviceReadKind, Direction, RandomIo, RandomOp, RunResults,
    StorageMeasurement, Verify,
};

/// One figure: `value` in `units` under the case id `id` (dotted, as PID 1 names its
/// steps; [`crate::lava::fold_id`] gives LAVA's form).
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub id: String,
    pub value: f64,
    pub units: String,
}

fn figure(id: impl Into<String>, value: f64, units: &str) -> Figure {
    Figure {
        id: id.into(),
        value,
        units: units.to_owned(),
    }
}

/// `storage.<target>.<mode asked>.bs<bytes>.r<repetition>.<write|read>`, MiB/s.
pub fn storage(m: &StorageMeasurement) -> Figure {
    let dir = match m.direction {
        Direction::Write => "write",
        Direction::Read => "read",
    };
    figure(
        format!(
            "{}.{dir}",
            storage_step(
                &m.target,
                m.requested_mode.name(),
                m.block_size,
                m.repetition
            )
        ),
        mib_per_s(m.bytes, m.nanos),
        "MiB/s",
    )
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
    let kind = match r.kind {
        DeviceReadKind::Cached => "cached",
        DeviceReadKind::Buffered => "buffered",
    };
    figure(
        format!("{}.{kind}", device_read_step(&r.device)),
        mib_per_s(r.bytes, r.nanos),
        "MiB/s",
    )
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
    figure(
        random_step(&r.target, r.op, r.queue_depth),
        iops(r.ios, r.nanos),
        "IOPS",
    )
}

/// The step id of one random-I/O run.
pub fn random_step(target: &str, op: RandomOp, queue_depth: u32) -> String {
    let op = match op {
        RandomOp::Read => "read",
        RandomOp::Write => "write",
    };
    format!("random.{target}.{op}.qd{queue_depth}")
}

/// `verify.<target>`: bytes written and read back (the verdict says whether they
/// matched).
pub fn verify(v: &Verify) -> Figure {
    figure(format!("verify.{}", v.target), v.bytes as f64, "bytes")
}

/// `card.check`: what the card holds of its claimed size, MiB (the claimed size for a
/// genuine card).
pub fn card_check(c: &CardCheck) -> Figure {
    let holds = c.report.real_bytes.unwrap_or(c.report.claimed_bytes);
    figure("card.check", (holds >> 20) as f64, "MiB")
}

/// `clock.<at>.measured`: the calibrated loop's clock, MHz.
pub fn clock(c: &ClockCheck) -> Figure {
    figure(
        format!("clock.{}.measured", c.at),
        c.measured_hz as f64 / 1e6,
        "MHz",
    )
}

/// Per bandwidth test the best MB/s (tinymembench's figure) as
/// `memory.<kernel>.cpu<N>|all<N>`, per latency row the ns over L1 (single read) as
/// `memory.latency.<base|huge>.bs<bytes>`.
pub fn memory(m: &MemoryResults) -> Vec<Figure> {
    let mut out = Vec::new();
    for t in &m.bandwidth {
        let Some((best, _)) = t.best_and_spread() else {
            continue;
        };
        let cores = match t.cores {
            Cores::One(c) => format!("cpu{c}"),
            Cores::All(n) => format!("all{n}"),
        };
        out.push(figure(format!("memory.{}.{cores}", t.kernel), best, "MB/s"));
    }
    for t in &m.latency {
        let pages = match t.pages {
            Pages::Base(_) => "base",
            Pages::Huge => "huge",
        };
        for r in &t.rows {
            if let Some((single, _)) = t.extra_ns(r) {
                out.push(figure(
                    format!("memory.latency.{pages}.bs{}", r.block_bytes),
                    single,
                    "ns",
                ));
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

/// Mbit/s per throughput run, HTTP GET and UDP run (+ its loss, %), the median round
/// trip in µs (`network.<link>.rtt.median`).
pub fn network(n: &NetworkResults) -> Vec<Figure> {
    let mut v = Vec::new();
    for t in &n.throughput {
        let id = network_step(&t.link, &NetTest::of_throughput(t));
        v.push(figure(id, mbit_per_s(t.bytes, t.nanos), "Mbit/s"));
    }
    for l in &n.latency {
        let mut rtt = l.rtt_ns.clone();
        rtt.sort_unstable();
        if let Some(&median) = rtt.get(rtt.len() / 2) {
            let id = format!("{}.median", network_step(&l.link, &NetTest::Latency));
            v.push(figure(id, median as f64 / 1e3, "us"));
        }
    }
    for h in &n.http {
        let id = network_step(&h.link, &NetTest::of_http(h));
        v.push(figure(id, mbit_per_s(h.bytes, h.nanos), "Mbit/s"));
    }
    for u in &n.udp {
        let id = network_step(&u.link, &NetTest::of_udp(u));
        v.push(figure(id.clone(), mbit_per_s(u.bytes, u.nanos), "Mbit/s"));
        let seen = u.received.saturating_add(u.lost);
        let loss = if seen == 0 {
            0.0
        } else {
            100.0 * u.lost as f64 / seen as f64
        };
        v.push(figure(format!("{id}.loss"), loss, "%"));
    }
    v
}

/// A WiFi entry that ran: the obtained primary frequency, width and centre (MHz), and
/// the peer's signal (dBm) before the tests. A skipped entry has none (its verdict says
/// why).
pub fn wifi_entry(r: &WifiEntryResult) -> Vec<Figure> {
    let id = |what: &str| format!("network.{}.{what}", r.link);
    let mut out = Vec::new();
    if let (None, Some(o)) = (&r.skipped, &r.obtained) {
        out.push(figure(id("freq"), f64::from(o.freq_mhz), "MHz"));
        out.push(figure(id("width"), f64::from(o.width_mhz), "MHz"));
        out.push(figure(id("centre"), f64::from(o.center1_mhz), "MHz"));
    }
    if let Some(s) = r.station_before.as_ref().and_then(|s| s.signal_dbm) {
        out.push(figure(id("signal"), f64::from(s), "dBm"));
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
            figure(
                format!("{}.{}", command_step(&c.id), m.case),
                m.value,
                &m.units,
            )
        })
        .collect()
}

/// Every figure of `r`, part by part (the console prints them in the order they were
/// measured; compare as a set).
pub fn all(r: &RunResults) -> Vec<Figure> {
    let mut out = Vec::new();
    out.extend(r.clock_checks.iter().map(clock));
    if let Some(m) = &r.memory {
        out.extend(memory(m));
    }
    out.extend(r.storage.iter().map(storage));
    out.extend(r.device_reads.iter().map(device_read));
    out.extend(r.random.iter().map(random));
    out.extend(r.verify.iter().map(verify));
    out.extend(r.card_check.iter().map(card_check));
    out.extend(r.commands.iter().flat_map(command));
    out.extend(network(&r.network));
    out.extend(r.network.wifi.entries.iter().flat_map(wifi_entry));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchboot_plan::Mode;
    use benchboot_results::memory::{
        BandwidthSample, BandwidthTest, CpuFacts, LatencyRow, LatencyTable, MemOp,
    };
    use benchboot_results::network::{CpuTimes, HttpRun, LatencyRun, NetDirection, ThroughputRun};
    use benchboot_results::StopReason;

    #[test]
    fn storage_ids_name_the_cell_and_rates_are_mib_per_s() {
        let m = StorageMeasurement {
            target: "usb-ext4".into(),
            filesystem: benchboot_plan::Filesystem::Ext4,
            block_size: 4096,
            direction: Direction::Read,
            mode: Mode::Sync,
            requested_mode: Mode::Direct,
            note: Some("fallback".into()),
            repetition: 2,
            bytes: 3 << 20,
            nanos: 1_500_000_000,
            stopped_by: StopReason::Bytes,
        };
        // The id carries the mode asked for: a fallback cell keeps its place.
        assert_eq!(
            storage(&m),
            figure("storage.usb-ext4.direct.bs4096.r2.read", 2.0, "MiB/s")
        );
    }

    #[test]
    fn network_figures() {
        let n = NetworkResults {
            throughput: vec![ThroughputRun {
                link: "ncm".into(),
                direction: NetDirection::BoardToHost,
                streams: 2,
                omit_ns: 0,
                intervals: vec![],
                bytes: 125_000_000,
                nanos: 10_000_000_000,
                board_cpu: CpuTimes::default(),
                host_cpu: CpuTimes::default(),
            }],
            latency: vec![LatencyRun {
                link: "ncm".into(),
                rtt_ns: vec![300_000, 100_000, 200_000],
            }],
            http: vec![HttpRun {
                link: "ecm".into(),
                direction: NetDirection::HostToBoard,
                bytes: 50_000_000,
                nanos: 4_000_000_000,
                board_cpu: CpuTimes::default(),
                host_cpu: CpuTimes::default(),
            }],
            ..NetworkResults::default()
        };
        assert_eq!(
            network(&n),
            [
                figure("network.ncm.tcp.board-to-host.s2", 100.0, "Mbit/s"),
                figure("network.ncm.rtt.median", 200.0, "us"),
                figure("network.ecm.http.host-to-board", 100.0, "Mbit/s"),
            ]
        );
    }

    #[test]
    fn device_reads_are_named_by_the_kernel_name() {
        assert_eq!(device_read_step("/dev/mmcblk0"), "device-read.mmcblk0");
        assert_eq!(device_read_step("sda"), "device-read.sda");
    }

    #[test]
    fn every_memory_test_and_row_has_a_figure() {
        let m = MemoryResults {
            cpu: CpuFacts {
                arch: "arm".into(),
                model: "ARM1176".into(),
                cores: 1,
                features: vec!["vfp".into()],
                llc_bytes: 1 << 20,
                llc_source: "assumed".into(),
                mem_total_bytes: 512 << 20,
                kernels: vec!["libc-memcpy".into()],
                kernels_skipped: vec![],
            },
            buffer_bytes: 32 << 20,
            sizing: String::new(),
            bandwidth: vec![BandwidthTest {
                kernel: "libc-memcpy".into(),
                label: "standard memcpy".into(),
                op: MemOp::Copy,
                cores: Cores::One(0),
                samples: vec![BandwidthSample {
                    bytes: 426_000_000,
                    ns: 1_000_000_000,
                }],
            }],
            latency: vec![LatencyTable {
                pages: Pages::Base(4096),
                core: 0,
                reads: 1000,
                baseline_ns: vec![4000],
                baseline_dual_ns: vec![],
                rows: vec![LatencyRow {
                    block_bytes: 64 << 20,
                    single_ns: vec![288_000],
                    dual_ns: vec![500_000],
                }],
            }],
            skipped: vec![],
            problems: vec![],
        };
        assert_eq!(
            memory(&m),
            [
                figure("memory.libc-memcpy.cpu0", 426.0, "MB/s"),
                figure("memory.latency.base.bs67108864", 284.0, "ns"),
            ]
        );
    }
}
