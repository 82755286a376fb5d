//! The network section on a hand-made run with one gadget link and two wired links: the
//! tables' exact cells, the facts lines, UDP loss and jitter, the degraded-link alert,
//! interface errors. [`wired_run`] is shared with the CSV/JSON and compare tests.

use super::*;
use crate::render::report;
use benchboot_plan::Plan;
use benchboot_results::counters::{CounterSpan, IfCounters};
use benchboot_results::network::{LatencyRun, LinkFacts, NetInterval, UsbFacts};
use benchboot_results::{Health, Reading, RunResults, SystemInfo, Throttled};

fn cpu(user: u64, system: u64, softirq: u64, idle: u64) -> CpuTimes {
    CpuTimes {
        user,
        system,
        softirq,
        idle,
        ..CpuTimes::default()
    }
}

/// The cells of one rendered row (outer `│`, inner `┆` borders).
fn cells(row: &str) -> Vec<&str> {
    row.split(['│', '┆'])
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

/// The rendered row of `grid` whose first cells are `test` and `direction`.
fn row_of(grid: &Grid, test: &str, direction: &str) -> Vec<String> {
    let text = grid.to_string();
    let row = text
        .lines()
        .map(cells)
        .find(|c| c.len() > 2 && c[0] == test && c[1] == direction)
        .unwrap_or_else(|| panic!("no row {test} / {direction} in\n{text}"));
    row.into_iter().map(String::from).collect()
}

fn interval(start_s: u64, bytes: u64) -> NetInterval {
    NetInterval {
        start_ns: start_s * 1_000_000_000,
        end_ns: (start_s + 5) * 1_000_000_000,
        bytes,
        board_cpu: CpuTimes::default(),
        host_cpu: CpuTimes::default(),
        board_tcp: None,
        host_tcp: None,
    }
}

fn tcp(link: &str, direction: NetDirection, streams: u32, bytes: u64, nanos: u64) -> ThroughputRun {
    ThroughputRun {
        link: link.into(),
        direction,
        streams,
        omit_ns: 2_000_000_000,
        intervals: vec![],
        bytes,
        nanos,
        board_cpu: CpuTimes::default(),
        host_cpu: CpuTimes::default(),
        board_tcp: None,
        host_tcp: None,
    }
}

fn http(link: &str, direction: NetDirection, nanos: u64) -> HttpRun {
    HttpRun {
        link: link.into(),
        direction,
        bytes: 100 << 20,
        nanos,
        board_cpu: CpuTimes::default(),
        host_cpu: CpuTimes::default(),
    }
}

fn counters(rx_dropped: u64, tx_errors: u64) -> IfCounters {
    IfCounters {
        rx_dropped,
        tx_errors,
        ..IfCounters::default()
    }
}

fn wired(name: &str, kind: &str, interface: &str, facts: LinkFacts) -> WiredLink {
    WiredLink {
        name: name.into(),
        kind: kind.into(),
        interface: interface.into(),
        mac: "02:00:00:00:00:01".into(),
        facts,
        topology: "direct".into(),
        board_address: [10, 57, 0, 1],
        prefix_len: 24,
        peer_address: Some([10, 57, 0, 2]),
        peer_found_by: Some("lease".into()),
        lease_ns: Some(1_500_000_000),
        dhcp_server: None,
        counters: vec![CounterSpan {
            test: NetTest::Latency,
            before: IfCounters::default(),
            after: IfCounters::default(),
        }],
    }
}

/// A hardware run on a Banana Pi M1 with three links:
/// - `ncm` (gadget): TCP 4 streams board → host, 125 MB in 10 s (two 5 s intervals of
///   50 and 75 MB: 80 and 120 Mbit/s), 1000 round trips of 1..=100 µs, HTTP 100 MiB into
///   the board in 8 s;
/// - `eth` (built-in, 1000 Mb/s full on a 1000 Mb/s port, direct cable): TCP 1 stream
///   board → host 125,000,000 B in 1 s, HTTP 100 MiB into the board in 1 s and out of it
///   in 2 s, UDP board → host at 500 Mbit/s (990 of 1000 datagrams, 3 out of order,
///   jitter 0.125 ms); no errors;
/// - `usb-eth` (LAN7500 on smsc75xx enumerated at USB full speed, 12M, over a LAN):
///   HTTP 100 MiB into the board in 100 s; 3 drops + 2 errors over two tests.
pub(crate) fn wired_run() -> RunResults {
    let mut r = RunResults::new("run-w".into(), Plan::example(), SystemInfo::default());
    r.board = "bananapi-m1".into();
    r.emulated = false;
    let mut ncm_tcp = tcp(
        "ncm",
        NetDirection::BoardToHost,
        4,
        125_000_000,
        10_000_000_000,
    );
    ncm_tcp.intervals = vec![interval(0, 50_000_000), interval(5, 75_000_000)];
    ncm_tcp.board_cpu = cpu(1, 47, 52, 0);
    ncm_tcp.host_cpu = cpu(2, 3, 1, 194);
    let mut ncm_http = http("ncm", NetDirection::HostToBoard, 8_000_000_000);
    ncm_http.board_cpu = cpu(0, 40, 60, 0);
    let eth = wired(
        "eth",
        "builtin",
        "eth0",
        LinkFacts {
            driver: Some("st_gmac".into()),
            driver_version: Some("Jan_2016".into()),
            firmware_version: None,
            bus_info: Some("1c50000.ethernet".into()),
            speed_mbit: Some(1000),
            duplex: Some("full".into()),
            autoneg: Some(true),
            rated_mbit: Some(1000),
            mtu: Some(1500),
            carrier: true,
            usb: None,
        },
    );
    let mut usb_eth = wired(
        "usb-eth",
        "usb-adapter",
        "eth1",
        LinkFacts {
            driver: Some("smsc75xx".into()),
            driver_version: Some("1.0.0".into()),
            firmware_version: None,
            bus_info: Some("usb-1c14000.usb-1.3".into()),
            speed_mbit: Some(1000),
            duplex: Some("full".into()),
            autoneg: Some(true),
            rated_mbit: Some(1000),
            mtu: Some(1500),
            carrier: true,
            usb: Some(UsbFacts {
                speed: "12".into(),
                speed_mbit: Some(12.0),
                path: "1-1.3".into(),
                vendor_id: Some(0x0424),
                product_id: Some(0x7500),
                manufacturer: Some("SMSC".into()),
                product: Some("LAN7500".into()),
            }),
        },
    );
    usb_eth.topology = "lan".into();
    usb_eth.board_address = [192, 168, 1, 50];
    usb_eth.peer_address = Some([192, 168, 1, 10]);
    usb_eth.peer_found_by = Some("announce".into());
    usb_eth.dhcp_server = Some([192, 168, 1, 1]);
    usb_eth.counters = vec![
        CounterSpan {
            test: NetTest::Http {
                direction: NetDirection::HostToBoard,
            },
            before: counters(10, 0),
            after: counters(13, 0),
        },
        CounterSpan {
            test: NetTest::Latency,
            before: counters(13, 1),
            after: counters(13, 3),
        },
    ];
    let mut eth_tcp = tcp(
        "eth",
        NetDirection::BoardToHost,
        1,
        125_000_000,
        1_000_000_000,
    );
    eth_tcp.board_cpu = cpu(10, 20, 30, 40);
    r.network = NetworkResults {
        links: vec![],
        throughput: vec![ncm_tcp, eth_tcp],
        latency: vec![LatencyRun {
            link: "ncm".into(),
            // 1..=100 µs: median 50.5, p99 99 (nearest rank), max 100.
            rtt_ns: (1..=100u64).rev().map(|i| i * 1000).collect(),
        }],
        http: vec![
            ncm_http,
            http("eth", NetDirection::BoardToHost, 2_000_000_000),
            http("eth", NetDirection::HostToBoard, 1_000_000_000),
            http("usb-eth", NetDirection::HostToBoard, 100_000_000_000),
        ],
        udp: vec![UdpRun {
            link: "eth".into(),
            direction: NetDirection::BoardToHost,
            target_bitrate: 500_000_000,
            datagram_bytes: 1448,
            sent: 1000,
            received: 990,
            lost: 10,
            out_of_order: 3,
            bytes: 990 * 1448,
            nanos: 1_000_000_000,
            jitter_ns: 125_000,
            board_cpu: cpu(5, 5, 10, 80),
            host_cpu: CpuTimes::default(),
        }],
        wired: vec![eth, usb_eth],
        wifi: Default::default(),
    };
    r
}

#[test]
fn links_come_in_report_order_each_once() {
    assert_eq!(
        network_links(&wired_run().network),
        ["eth", "usb-eth", "ncm"]
    );
}

#[test]
fn gadget_table_keeps_rates_spread_and_cpu() {
    let r = wired_run();
    let g = link_table(&r.network, &[], "ncm");
    // No UDP over ncm: no UDP columns.
    assert_eq!(g.header.len(), 9);
    assert_eq!(
        row_of(&g, "TCP, 4 streams", "board → host"),
        [
            "TCP, 4 streams",
            "board → host",
            "10.00 s",
            "12.5",
            "11.9",
            "100.0",
            "100.0 (80.0–120.0)",
            "1.0/47.0/0.0/52.0/0.0",
            "1.0/1.5/0.0/0.5/97.0",
        ]
    );
    // 100 MiB in 8 s = 13.1 MB/s = 12.5 MiB/s = 104.9 Mbit/s; the host's span was empty.
    assert_eq!(
        row_of(&g, "HTTP GET", "host → board"),
        [
            "HTTP GET",
            "host → board",
            "100.0 MiB in 8.00 s",
            "13.1",
            "12.5",
            "104.9",
            "—",
            "0.0/40.0/0.0/60.0/0.0",
            "—",
        ]
    );
}

#[test]
fn wired_table_has_mb_mib_mbit_and_udp_loss_and_jitter() {
    let r = wired_run();
    let g = link_table(&r.network, &[], "eth");
    assert_eq!(
        g.header,
        [
            "test",
            "direction",
            "measured",
            "MB/s",
            "MiB/s",
            "Mbit/s",
            "per interval Mbit/s",
            "board CPU % usr/sys/irq/sirq/idle",
            "host CPU % usr/sys/irq/sirq/idle",
            "offered Mbit/s",
            "loss %",
            "out of order",
            "jitter ms",
        ]
    );
    // Rows: TCP, then HTTP by direction, then UDP.
    let tests: Vec<(&str, &str)> = g.rows.iter().map(|r| (&*r[0], &*r[1])).collect();
    assert_eq!(
        tests,
        [
            ("TCP, 1 stream", "board → host"),
            ("HTTP GET", "board → host"),
            ("HTTP GET", "host → board"),
            ("UDP, 1448 B datagrams", "board → host"),
        ]
    );
    // 125,000,000 B in 1 s = 125.0 MB/s = 119.2 MiB/s = 1000 Mbit/s.
    assert_eq!(
        row_of(&g, "TCP, 1 stream", "board → host"),
        [
            "TCP, 1 stream",
            "board → host",
            "1.00 s",
            "125.0",
            "119.2",
            "1000.0",
            "—",
            "10.0/20.0/0.0/30.0/40.0",
            "—",
            "—",
            "—",
            "—",
            "—",
        ]
    );
    // 100 MiB in 1 s = 104.9 MB/s = 100.0 MiB/s = 838.9 Mbit/s.
    let h = row_of(&g, "HTTP GET", "host → board");
    assert_eq!(h[2..6], ["100.0 MiB in 1.00 s", "104.9", "100.0", "838.9"]);
    // 990 × 1448 B in 1 s = 1.4 MB/s = 1.4 MiB/s = 11.5 Mbit/s; 10 lost of 1000 = 1 %.
    assert_eq!(
        row_of(&g, "UDP, 1448 B datagrams", "board → host"),
        [
            "UDP, 1448 B datagrams",
            "board → host",
            "1.00 s",
            "1.4",
            "1.4",
            "11.5",
            "—",
            "5.0/5.0/0.0/10.0/80.0",
            "—",
            "500.0",
            "1.00",
            "3",
            "0.125",
        ]
    );
    let u = &r.network.udp[0];
    assert_eq!(u.loss_pct(), Some(1.0));
}

#[test]
fn facts_lines_say_driver_speed_usb_topology_and_errors() {
    let r = wired_run();
    let eth = link_facts_lines(&r.network.wired[0]);
    assert_eq!(
        eth,
        [
            "eth0 (02:00:00:00:00:01), driver st_gmac Jan_2016, 1000 Mb/s full, autoneg on \
             (port rated 1000 Mb/s), MTU 1500",
            "direct cable, host leased 10.57.0.2; board 10.57.0.1/24, lease in 1.5 s; no \
             errors or drops during the tests",
        ]
    );
    let usb = link_facts_lines(&r.network.wired[1]);
    assert_eq!(
        usb,
        [
            "eth1 (02:00:00:00:00:01), driver smsc75xx 1.0.0, 1000 Mb/s full, autoneg on \
             (port rated 1000 Mb/s), MTU 1500, USB 12M at 1-1.3 (0424:7500 LAN7500)",
            "LAN, lease from 192.168.1.1, peer 192.168.1.10 (announced); board \
             192.168.1.50/24, lease in 1.5 s; 5 ERRORS OR DROPS during the tests",
        ]
    );
}

#[test]
fn degraded_link_is_an_alert_heading_the_report_and_a_warning() {
    let r = wired_run();
    let doc = crate::render::document(&r);
    let alerts: Vec<&str> = doc
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Alert(s) => Some(s.as_str()),
            _ => None,
        })
        .collect();
    // Only the 12M adapter: the built-in port runs at its rating.
    assert_eq!(
        alerts,
        [
            "LINK BELOW ITS RATING: usb-eth: the USB adapter enumerated at 12 Mbit/s, below \
          USB 2.0 high speed (480): a full-speed port or hub caps everything"
        ]
    );
    // It heads the report: right after the title and the headline.
    let Block::Facts(headline) = &doc.blocks[1] else {
        panic!("{:?}", doc.blocks[1]);
    };
    assert!(matches!(&doc.blocks[2], Block::Alert(_)));
    let text = report(&r);
    assert!(text.starts_with(&format!(
        "benchboot report: run run-w on bananapi-m1\n{}\nLINK BELOW ITS RATING: usb-eth",
        headline.text(None)
    )));
    assert!(!text.contains("LINK BELOW ITS RATING: eth:"));
    let kinds: Vec<String> = crate::context::warnings(&r)
        .into_iter()
        .map(|w| format!("{}: {}", w.kind, w.message))
        .collect();
    assert!(kinds
        .iter()
        .any(|k| k.starts_with("link-degraded: LINK BELOW ITS RATING: usb-eth")));
    assert!(kinds.iter().any(|k| k
        == "link-errors: usb-eth (eth1): 5 interface error(s) or drop(s) during the tests \
            (/sys/class/net/eth1/statistics)"));
    // A port negotiated below its rating is the other kind of alert.
    let mut slow = r.clone();
    slow.network.wired[0].facts.speed_mbit = Some(100);
    assert!(report(&slow)
        .contains("LINK BELOW ITS RATING: eth: negotiated 100 Mb/s on a port rated 1000 Mb/s"));
}

#[test]
fn report_has_one_table_per_link_with_facts_above_and_round_trips_apart() {
    let r = wired_run();
    let text = report(&r);
    let at = |s: &str| {
        text.find(s)
            .unwrap_or_else(|| panic!("no `{s}` in\n{text}"))
    };
    let eth = at("Link eth (built-in Ethernet, eth0)");
    let usb = at("Link usb-eth (USB Ethernet adapter, eth1)");
    let ncm = at("Link ncm (USB gadget NCM)");
    assert!(eth < at("direct cable, host leased 10.57.0.2") && eth < usb && usb < ncm);
    assert!(at("TCP round trips over ncm") > ncm);
    let rtt = latency_table(&r.network, &[], "ncm").to_string();
    let row = rtt
        .lines()
        .map(cells)
        .find(|c| c.first() == Some(&"100"))
        .unwrap();
    assert_eq!(row, ["100", "1.0", "50.5", "99.0", "100.0"]);
    assert!(text.contains(
        "TCP counted at the receiver after a 2 s warm-up; HTTP GET of an object in the \
         sender's RAM"
    ));
    assert!(!text.contains("EMULATED"));
}

#[test]
fn health_marks_the_rates_of_a_flagged_run() {
    let r = wired_run();
    let snap = Health {
        throttled: Reading::ok(Throttled::from_raw(0x4), "mailbox:GET_THROTTLED"),
        ..Health::default()
    };
    let health = vec![StepHealth {
        step: "net.eth.tcp".into(),
        scope: HealthScope::Network {
            link: "eth".into(),
            test: NetTest::Tcp {
                direction: NetDirection::BoardToHost,
                streams: 1,
            },
        },
        before: snap.clone(),
        after: snap,
        interrupts: Reading::default(),
    }];
    let g = link_table(&r.network, &health, "eth");
    assert_eq!(
        row_of(&g, "TCP, 1 stream", "board → host")[3..6],
        ["125.0!", "119.2!", "1000.0!"]
    );
    assert_eq!(row_of(&g, "HTTP GET", "host → board")[3], "104.9");
    let blocks = network_blocks(&r.network, &health, false);
    assert!(blocks.contains(&Block::Text(crate::render::HEALTH_LEGEND.into())));
}

#[test]
fn emulated_runs_keep_their_marking() {
    let mut r = RunResults::new("run-n".into(), Plan::example(), SystemInfo::default());
    assert!(r.emulated);
    assert!(!report(&r).contains("Network"));
    r.network = wired_run().network;
    r.network.wired.clear();
    let text = report(&r);
    assert!(text.contains("EMULATED (QEMU)"));
    assert!(text.contains("Network (EMULATED: QEMU's virtual network, not the board's)"));
    assert!(text.contains("Link ncm (USB gadget NCM), EMULATED"));
    assert_eq!(percentile(&[7], 99.0), Some(7));
    assert_eq!(percentile(&[], 99.0), None);
}

#[test]
fn csv_and_json_carry_the_link_of_every_row() {
    let r = wired_run();
    let rows = crate::report::tidy::rows(&r);
    let net: Vec<(&str, &str, &str)> = rows
        .iter()
        .filter(|x| ["tcp", "http", "udp"].contains(&x.section.as_str()))
        .map(|x| (x.section.as_str(), x.target.as_str(), x.direction.as_str()))
        .collect();
    assert_eq!(
        net,
        [
            ("tcp", "ncm", "board-to-host"),
            ("tcp", "eth", "board-to-host"),
            ("http", "ncm", "host-to-board"),
            ("http", "eth", "board-to-host"),
            ("http", "eth", "host-to-board"),
            ("http", "usb-eth", "host-to-board"),
            ("udp", "eth", "board-to-host"),
        ]
    );
    let udp = rows.iter().find(|x| x.section == "udp").unwrap();
    assert_eq!(
        (
            udp.loss_pct,
            udp.jitter_ms,
            udp.out_of_order,
            udp.offered_mbit_per_s
        ),
        (Some(1.0), Some(0.125), Some(3), Some(500.0))
    );
    assert_eq!(udp.datagrams_lost, Some(10));
    let tcp = rows
        .iter()
        .find(|x| x.section == "tcp" && x.target == "eth")
        .unwrap();
    assert_eq!((tcp.mb_per_s, tcp.mbit_per_s), (Some(125.0), Some(1000.0)));
    // CSV round trip keeps the new columns.
    let csv = crate::report::tidy::to_csv(&rows).unwrap();
    assert!(csv.lines().next().unwrap().contains(",mb_per_s,"));
    assert_eq!(crate::report::tidy::from_csv(&csv).unwrap(), rows);

    let j = crate::report::summary::summary(&r);
    let links: Vec<&str> = j.network.http.iter().map(|h| h.link.as_str()).collect();
    assert_eq!(links, ["ncm", "eth", "eth", "usb-eth"]);
    assert_eq!(j.network.udp[0].link, "eth");
    assert_eq!(j.network.udp[0].loss_pct, Some(1.0));
    assert_eq!(j.network.udp[0].jitter_ms, 0.125);
    let w: Vec<(&str, u64, bool)> = j
        .network
        .wired
        .iter()
        .map(|w| (w.link.as_str(), w.errors_and_drops, w.degraded.is_some()))
        .collect();
    assert_eq!(w, [("eth", 0, false), ("usb-eth", 5, true)]);
    assert_eq!(j.network.wired[0].board_address, "10.57.0.1/24");
    assert_eq!(j.network.throughput[1].mb_per_s, 125.0);
}

/// The host's UDP loss and MB/s are the results crate's, the console's own: every UDP
/// run's loss in the table, the CSV and the JSON is the console's figure, and a run
/// whose receiver saw nothing has neither a console figure nor a host value (never 0 %).
#[test]
fn udp_loss_is_the_consoles_everywhere_even_when_nothing_was_seen() {
    let mut r = wired_run();
    let mut none = r.network.udp[0].clone();
    none.direction = NetDirection::HostToBoard;
    (none.received, none.lost, none.bytes) = (0, 0, 0);
    r.network.udp.push(none);
    let console: Vec<Option<f64>> = r
        .network
        .udp
        .iter()
        .map(|u| {
            let id = format!("{}.loss", benchboot_results::figures::udp(u).id);
            benchboot_console::figures::network(&r.network)
                .into_iter()
                .find(|f| f.id == id)
                .map(|f| f.value)
        })
        .collect();
    assert_eq!(console, [Some(1.0), None]);
    let csv: Vec<Option<f64>> = crate::report::tidy::rows(&r)
        .iter()
        .filter(|x| x.section == "udp")
        .map(|x| x.loss_pct)
        .collect();
    let json: Vec<Option<f64>> = crate::report::summary::summary(&r)
        .network
        .udp
        .iter()
        .map(|u| u.loss_pct)
        .collect();
    assert_eq!((&csv, &json), (&console, &console));
    let g = link_table(&r.network, &[], "eth");
    assert_eq!(
        row_of(&g, "UDP, 1448 B datagrams", "board → host")[10],
        "1.00"
    );
    assert_eq!(row_of(&g, "UDP, 1448 B datagrams", "host → board")[10], "—");
    // MB/s is the results crate's 10^6 B/s.
    assert_eq!(
        benchboot_results::mb_per_s(125_000_000, 1_000_000_000),
        125.0
    );
}

/// The sender's TCP_INFO per TCP run, like iperf3's sender lines: the board's for
/// board → host, the host's for host → board; a run without it has no row, and a link
/// where none has it no table.
#[test]
fn tcp_info_table_shows_the_senders_retransmits_cwnd_and_srtt() {
    use benchboot_results::network::{TcpSample, TcpTotals};
    let s = |retransmits: u64, cwnd_kib: u64, srtt_us: u32| TcpSample {
        retransmits,
        cwnd_bytes: cwnd_kib * 1024,
        srtt_us,
        srtt_max_us: srtt_us + 500,
        rttvar_us: 100,
        streams: 1,
    };
    let mut up = tcp("ncm", NetDirection::BoardToHost, 1, 1 << 20, 10_000_000_000);
    up.intervals = vec![interval(0, 1), interval(5, 1), interval(10, 1)];
    for (i, x) in up
        .intervals
        .iter_mut()
        .zip([s(3, 64, 2000), s(0, 128, 4000), s(1, 96, 3000)])
    {
        i.board_tcp = Some(x);
        // The receiver's figures are not the ones shown.
        i.host_tcp = Some(s(99, 1, 1));
    }
    up.board_tcp = TcpTotals::of(up.intervals.iter().filter_map(|i| i.board_tcp));
    up.host_tcp = Some(TcpTotals {
        retransmits: 99,
        srtt_us: 1,
        srtt_max_us: 1,
    });
    let down = tcp("ncm", NetDirection::HostToBoard, 1, 1 << 20, 10_000_000_000);
    let n = NetworkResults {
        throughput: vec![down.clone(), up],
        ..NetworkResults::default()
    };
    let g = tcp_info_table(&n, "ncm").unwrap();
    assert_eq!(
        row_of(&g, "1 stream", "board → host"),
        [
            "1 stream",
            "board → host",
            "4",
            "96 (64–128)",
            "3000 (2000–4000)",
            "4500"
        ]
    );
    assert_eq!(g.rows.len(), 1, "the run without figures has no row");
    let text = network_report(&n, false);
    assert!(text.contains(TCP_INFO_NOTE), "{text}");
    let none = NetworkResults {
        throughput: vec![down],
        ..NetworkResults::default()
    };
    assert!(tcp_info_table(&none, "ncm").is_none());
    assert!(!network_report(&none, false).contains("TCP_INFO"));
}
