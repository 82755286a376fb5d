//! Tests of the figure model: ids, units, values and context per part, and the whole
//! list of the fixture document with every kind of figure.

use super::*;
use crate::counters::NetDirection;
use crate::memory::{BandwidthSample, BandwidthTest, CpuFacts, LatencyRow, LatencyTable, MemOp};
use crate::network::{CpuTimes, HttpRun, LatencyRun, ThroughputRun};
use crate::StopReason;
use benchboot_plan::{Filesystem, Mode};

fn every_figure() -> RunResults {
    let text = include_str!("../../tests/data/every-figure.json");
    RunResults::from_json(text).unwrap()
}

/// (id, value, units) of `f`, the value to 3 decimals (as the console prints it).
fn triple(f: &Figure) -> (String, String, String) {
    (f.id.clone(), format!("{:.3}", f.value), f.units.clone())
}

#[test]
fn storage_ids_name_the_cell_and_rates_are_mib_per_s() {
    let m = StorageMeasurement {
        target: "usb-ext4".into(),
        filesystem: Filesystem::Ext4,
        block_size: 4096,
        direction: Direction::Read,
        mode: Mode::Sync,
        requested_mode: Mode::Direct,
        note: Some("fallback".into()),
        repetition: 2,
        bytes: 3 << 20,
        nanos: 1_500_000_000,
        stopped_by: StopReason::Bytes,
        begin_ns: None,
        latency: None,
        timeline: Vec::new(),
    };
    // The id carries the mode asked for: a fallback cell keeps its place; the context
    // says what ran.
    assert_eq!(
        storage(&m),
        Figure {
            metric: Metric::Storage,
            id: "storage.usb-ext4.direct.bs4096.r2.read".into(),
            value: 2.0,
            units: "MiB/s".into(),
            context: Context {
                target: "usb-ext4".into(),
                mode: "direct".into(),
                mode_ran: "sync".into(),
                direction: "read".into(),
                block_size: 4096,
                param: 0,
                repetition: Some(2),
            },
        }
    );
}

#[test]
fn network_figures_with_the_boards_cpu_shares_beside_tcp() {
    let n = NetworkResults {
        throughput: vec![ThroughputRun {
            link: "ncm".into(),
            direction: NetDirection::BoardToHost,
            streams: 2,
            omit_ns: 0,
            intervals: vec![],
            bytes: 125_000_000,
            nanos: 10_000_000_000,
            board_cpu: CpuTimes {
                user: 10,
                system: 30,
                softirq: 60,
                ..CpuTimes::default()
            },
            host_cpu: CpuTimes::default(),
            board_tcp: None,
            host_tcp: None,
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
    let got = network(&n);
    let tcp = Context {
        target: "ncm".into(),
        direction: "board-to-host".into(),
        param: 2,
        ..Context::default()
    };
    assert_eq!(
        got,
        [
            Figure::bare(
                Metric::Tcp,
                "network.ncm.tcp.board-to-host.s2",
                100.0,
                "Mbit/s"
            )
            .with(tcp.clone()),
            Figure::bare(
                Metric::TcpBoardCpuSystem,
                "network.ncm.tcp.board-to-host.s2.board-cpu-system",
                30.0,
                "%"
            )
            .with(tcp.clone()),
            Figure::bare(
                Metric::TcpBoardCpuSoftirq,
                "network.ncm.tcp.board-to-host.s2.board-cpu-softirq",
                60.0,
                "%"
            )
            .with(tcp),
            Figure::bare(Metric::RoundTrip, "network.ncm.rtt.median", 200.0, "us").with(ctx("ncm")),
            Figure::bare(
                Metric::Http,
                "network.ecm.http.host-to-board",
                100.0,
                "Mbit/s"
            )
            .with(Context {
                direction: "host-to-board".into(),
                ..ctx("ecm")
            }),
        ]
    );
    let console: Vec<Metric> = got
        .iter()
        .map(|f| f.metric)
        .filter(|m| m.on_console())
        .collect();
    assert_eq!(console, [Metric::Tcp, Metric::RoundTrip, Metric::Http]);
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
    let got = memory(&m);
    let ids: Vec<_> = got.iter().map(triple).collect();
    assert_eq!(
        ids,
        [
            (
                "memory.libc-memcpy.cpu0".into(),
                "426.000".into(),
                "MB/s".into()
            ),
            (
                "memory.latency.base.bs67108864".into(),
                "284.000".into(),
                "ns".into()
            ),
        ]
    );
    assert_eq!(
        (got[0].context.target.as_str(), got[0].context.mode.as_str()),
        ("cpu0", "libc-memcpy")
    );
    assert_eq!(
        (got[1].context.mode.as_str(), got[1].context.block_size),
        ("base", 64 << 20)
    );
}

/// The fixture with every kind of figure: how many of each metric, in PID 1's order,
/// and one figure of each kind with its value and context.
#[test]
fn every_kind_of_figure_of_the_fixture() {
    let all = figures(&every_figure());
    let mut order: Vec<Metric> = all.iter().map(|f| f.metric).collect();
    order.dedup();
    use Metric::*;
    assert_eq!(
        order,
        [
            Clock,
            MemoryBandwidth,
            MemoryLatency,
            Storage,
            StorageLatencyP99,
            DeviceRead,
            Random,
            RandomLatencyP99,
            Verify,
            CardCheck,
            Command,
            Tcp,
            TcpBoardCpuSystem,
            TcpBoardCpuSoftirq,
            TcpRetransmits,
            TcpSrtt,
            Tcp,
            TcpBoardCpuSystem,
            TcpBoardCpuSoftirq,
            TcpRetransmits,
            TcpSrtt,
            Tcp,
            TcpBoardCpuSystem,
            TcpBoardCpuSoftirq,
            TcpRetransmits,
            TcpSrtt,
            Tcp,
            TcpBoardCpuSystem,
            TcpBoardCpuSoftirq,
            // The wired run with no intervals has no TCP_INFO: no figure.
            Tcp,
            TcpRetransmits,
            TcpSrtt,
            Tcp,
            TcpRetransmits,
            TcpSrtt,
            Tcp,
            TcpRetransmits,
            TcpSrtt,
            Tcp,
            TcpRetransmits,
            TcpSrtt,
            RoundTrip,
            Http,
            Udp,
            UdpLoss,
            WifiFrequency,
            WifiWidth,
            WifiCentre,
            WifiSignal,
            WifiFrequency,
            WifiWidth,
            WifiCentre,
        ]
    );
    let count = |m: Metric| all.iter().filter(|f| f.metric == m).count();
    assert_eq!(
        (count(Storage), count(Random), count(Tcp), count(Http)),
        (96, 8, 8, 7)
    );
    let find = |id: &str| all.iter().find(|f| f.id == id).unwrap();
    let dev = find("device-read.sda.buffered");
    assert_eq!(
        (
            dev.value,
            dev.context.target.as_str(),
            dev.context.direction.as_str()
        ),
        (30.0, "/dev/sda", "buffered")
    );
    let rnd = find("random.ext4.write.qd1");
    assert_eq!((rnd.value, rnd.units.as_str()), (450.0, "IOPS"));
    assert_eq!(
        (
            rnd.context.block_size,
            rnd.context.param,
            rnd.context.mode.as_str()
        ),
        (4096, 1, "direct")
    );
    let card = find("card.check");
    assert_eq!(
        (
            card.value,
            card.units.as_str(),
            card.context.target.as_str()
        ),
        (16384.0, "MiB", "/dev/mmcblk0")
    );
    let udp = find("network.eth.udp.board-to-host");
    assert_eq!(triple(udp).1, "11.468");
    assert_eq!(find("network.eth.udp.board-to-host.loss").value, 1.0);
    let wifi = find("network.wifi-ch36-80.width");
    assert_eq!(
        (wifi.value, wifi.context.target.as_str()),
        (40.0, "wifi-ch36-80")
    );
    let cmd = find("command.coremark.score");
    assert_eq!(
        (cmd.value, cmd.units.as_str(), cmd.context.mode.as_str()),
        (1234.5, "iterations/s", "score")
    );
    // Schema 1.14's distributions (tests/data/add_distributions.py): ecm board → host
    // over 2 intervals, the board sending: retransmits 1 + 2, srtt (2000 + 2500) / 2 µs;
    // host → board, the host sending: 0 + 1, (2250 + 2750) / 2.
    let tcp = |id: &str| (find(id).value, find(id).units.clone());
    assert_eq!(
        tcp("network.ecm.tcp.board-to-host.s1.retransmits"),
        (3.0, "segments".into())
    );
    assert_eq!(
        tcp("network.ecm.tcp.board-to-host.s1.srtt"),
        (2250.0, "us".into())
    );
    assert_eq!(tcp("network.ecm.tcp.host-to-board.s1.retransmits").0, 1.0);
    assert_eq!(tcp("network.ecm.tcp.host-to-board.s1.srtt").0, 2500.0);
    // Random read QD1, 1600 I/Os in 1 s: 1584 at 562.5 µs, 16 at 6.25 ms; p99's rank
    // ⌈0.99 × 1600⌉ = 1584 is the last fast one: its bucket's middle (561,152 ns) held
    // up to the exact minimum.
    let p99 = find("random.ext4.read.qd1.p99");
    assert_eq!((p99.value, p99.units.as_str()), (562.5, "us"));
    let mid = crate::latency::bucket_value(crate::latency::bucket_of(562_500));
    assert_eq!(mid, 561_152);
    let clk = find("clock.before-memory.measured");
    assert_eq!((clk.value, clk.units.as_str()), (700.0, "MHz"));
}

/// A UDP run's Mbit/s and loss; a run that saw nothing has no loss figure; the median
/// round trip of an even count is the upper middle one; no round trip, no figure.
#[test]
fn udp_loss_and_round_trips() {
    let mut u = crate::network::UdpRun {
        link: "eth".into(),
        direction: NetDirection::HostToBoard,
        target_bitrate: 100_000_000,
        datagram_bytes: 1448,
        sent: 1000,
        received: 750,
        lost: 250,
        out_of_order: 0,
        bytes: 12_500_000,
        nanos: 2_000_000_000,
        jitter_ns: 0,
        board_cpu: CpuTimes::default(),
        host_cpu: CpuTimes::default(),
    };
    assert_eq!(
        (udp(&u).id.as_str(), udp(&u).value),
        ("network.eth.udp.host-to-board", 50.0)
    );
    let loss = udp_loss(&u).unwrap();
    assert_eq!(
        (loss.id.as_str(), loss.value, loss.units.as_str()),
        ("network.eth.udp.host-to-board.loss", 25.0, "%")
    );
    assert_eq!(loss.context.direction, "host-to-board");
    (u.received, u.lost) = (0, 0);
    assert_eq!(udp_loss(&u), None);
    assert_eq!(u.loss_pct(), None);
    let rtt = |ns: &[u64]| {
        round_trip(&LatencyRun {
            link: "ncm".into(),
            rtt_ns: ns.to_vec(),
        })
        .map(|f| f.value)
    };
    assert_eq!(rtt(&[4_000, 1_000, 3_000, 2_000]), Some(3.0));
    assert_eq!(rtt(&[]), None);
}

/// The whole-card pass's speeds: averages over the card and the speed after the fall,
/// exact on a device with a 16 MiB cache at 40 MiB/s and 4 MiB/s after it.
#[test]
fn the_whole_card_pass_gives_its_speeds() {
    const MIB: u64 = 1 << 20;
    let check = |report: &benchboot_probe::ProbeReport| CardCheck {
        device: "/dev/sdb".into(),
        report: report.clone(),
    };
    let mut report =
        benchboot_probe::fake::probed_in_full(64 * MIB, 16 * MIB, 40 * MIB, 4 * MIB, 20 * MIB);
    let quick = benchboot_probe::ProbeReport {
        full: None,
        ..report.clone()
    };
    assert_eq!(card_check(&check(&quick)).len(), 1, "the quick probe alone");
    let figs = card_check(&check(&report));
    let got: Vec<(&str, &str, &str, &str)> = figs
        .iter()
        .map(|f| {
            (
                f.id.as_str(),
                f.units.as_str(),
                f.context.direction.as_str(),
                f.context.target.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("card.check", "MiB", "", "/dev/sdb"),
            ("card.full.write", "MiB/s", "write", "/dev/sdb"),
            ("card.full.read", "MiB/s", "read", "/dev/sdb"),
            ("card.full.sustained", "MiB/s", "sustained", "/dev/sdb"),
        ]
    );
    // The fall sits at an interval's edge: 16 MiB less 9216 bytes went at 40 MiB/s.
    let fast = (16 * MIB - 9216) as f64 / MIB as f64;
    let write = 64.0 / (fast / 40.0 + (64.0 - fast) / 4.0);
    assert!((figs[1].value - write).abs() < 1e-3, "{}", figs[1].value);
    assert!((figs[2].value - 20.0).abs() < 1e-5, "{}", figs[2].value);
    assert!((figs[3].value - 4.0).abs() < 1e-5, "{}", figs[3].value);
    // A pass stopped before it wrote anything: no speeds.
    let f = report.full.as_mut().unwrap();
    (f.written_bytes, f.write_ns, f.read_bytes, f.read_ns) = (0, 0, 0, 0);
    f.write_profile.clear();
    f.falls.clear();
    assert_eq!(card_check(&check(&report)).len(), 1);
}

/// Every metric has its own name, in kebab case (digits allowed: `p99`); `ALL` lists each once; the metrics
/// compare leaves out are the ones its docs name.
#[test]
fn metric_names_are_distinct_kebab_words() {
    let names: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    assert!(names.iter().all(|n| n
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')));
    // Every variant of the fixture's figures is in ALL.
    for f in figures(&every_figure()) {
        assert!(Metric::ALL.contains(&f.metric), "{:?}", f.metric);
    }
    let compared: Vec<&str> = Metric::ALL
        .iter()
        .filter(|m| m.compared())
        .map(|m| m.name())
        .collect();
    assert_eq!(
        compared,
        [
            "storage",
            "device-read",
            "random",
            "card-speed",
            "memory-bandwidth",
            "memory-latency",
            "command",
            "tcp",
            "tcp-board-cpu-system",
            "tcp-board-cpu-softirq",
            "tcp-retransmits",
            "tcp-srtt",
            "http",
            "storage-latency-p99",
            "random-latency-p99"
        ]
    );
}

/// The sender's TCP_INFO totals are figures of their own beside the run's Mbit/s (so
/// `compare` lines them up), the receiver's never; off the console.
#[test]
fn the_senders_retransmits_and_srtt_are_figures() {
    use crate::network::TcpTotals;
    let totals = |retransmits, srtt_us| {
        Some(TcpTotals {
            retransmits,
            srtt_us,
            srtt_max_us: srtt_us * 2,
        })
    };
    let run = |direction| ThroughputRun {
        link: "ncm".into(),
        direction,
        streams: 1,
        omit_ns: 0,
        intervals: vec![],
        bytes: 1,
        nanos: 1,
        board_cpu: CpuTimes::default(),
        host_cpu: CpuTimes::default(),
        board_tcp: totals(7, 2500),
        host_tcp: totals(1, 90),
    };
    let got: Vec<_> = tcp_sender(&run(NetDirection::BoardToHost))
        .iter()
        .map(|f| (f.metric, f.id.clone(), f.value, f.units.clone()))
        .collect();
    assert_eq!(
        got,
        [
            (
                Metric::TcpRetransmits,
                "network.ncm.tcp.board-to-host.s1.retransmits".to_string(),
                7.0,
                "segments".to_string()
            ),
            (
                Metric::TcpSrtt,
                "network.ncm.tcp.board-to-host.s1.srtt".to_string(),
                2500.0,
                "us".to_string()
            ),
        ]
    );
    let up = tcp_sender(&run(NetDirection::HostToBoard));
    assert_eq!(up.iter().map(|f| f.value).collect::<Vec<_>>(), [1.0, 90.0]);
    let mut none = run(NetDirection::HostToBoard);
    none.host_tcp = None;
    assert!(tcp_sender(&none).is_empty());
    assert!(!Metric::TcpRetransmits.on_console() && Metric::TcpSrtt.compared());
}
