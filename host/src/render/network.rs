//! The network section: one table per link (gadget function or wired link) in the
//! seeds' shape: rows = test (TCP per stream count, HTTP, UDP) and direction, columns =
//! MB/s (10^6 B/s), MiB/s (2^20 B/s), Mbit/s (10^6 bit/s), the per-interval spread and
//! the board's and the host's CPU; UDP rows add offered load, loss, reordering and
//! jitter. Above a wired link's table its facts (driver, speed, USB, topology, errors),
//! above a WiFi entry's its SSID, BSSID and join times; round trips in a small table of
//! their own per link. The WiFi section is [`super::wifi::blocks`], after this one.

use benchboot_results::counters::{NetDirection, NetTest};
use benchboot_results::network::{
    mbit_per_s, CpuTimes, HttpRun, NetworkResults, ThroughputRun, UdpRun, WiredLink,
};
use benchboot_results::{mb_per_s, mib_per_s, HealthScope, StepHealth, Summary};

use super::wifi::{entry_description, entry_facts_line, has_wifi, wifi_entry};
use super::{health_mark, HEALTH_LEGEND};
use crate::context::errors_and_drops;
use crate::doc::{Block, Doc, Grid};
use crate::units::duration_label_ns;

/// "board → host" / "host → board".
pub fn net_direction_label(d: NetDirection) -> &'static str {
    match d {
        NetDirection::BoardToHost => "board → host",
        NetDirection::HostToBoard => "host → board",
    }
}

/// System-wide CPU shares of a span as `usr/sys/irq/sirq/idle` percent, one decimal
/// each (user includes nice, idle includes iowait and steal); `—` for an empty span.
pub fn cpu_cell(t: &CpuTimes) -> String {
    match t.share() {
        None => "—".into(),
        Some(s) => format!(
            "{:.1}/{:.1}/{:.1}/{:.1}/{:.1}",
            s.user,
            s.system,
            s.irq,
            s.softirq,
            s.idle + s.iowait
        ),
    }
}

const CPU_HEADER: &str = "CPU % usr/sys/irq/sirq/idle";

/// Mbit/s of every interval of a throughput run (10^6 bit/s).
pub fn interval_mbits(r: &ThroughputRun) -> Vec<f64> {
    r.intervals
        .iter()
        .map(|i| mbit_per_s(i.bytes, i.end_ns.saturating_sub(i.start_ns)))
        .collect()
}

/// Nearest-rank percentile `p` (0 < p <= 100) of sorted values.
pub fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

fn net_mark(health: &[StepHealth], link: &str, test: NetTest) -> &'static str {
    health_mark(
        health,
        &HealthScope::Network {
            link: link.to_owned(),
            test,
        },
    )
}

/// Every link of `n` in report order: the gadget links as brought up, then the wired
/// links, then the WiFi entries in plan order, then any other link a run names, each
/// once.
pub fn network_links(n: &NetworkResults) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let names = n
        .links
        .iter()
        .map(|l| l.function.as_str())
        .chain(n.wired.iter().map(|w| w.name.as_str()))
        .chain(n.wifi.entries.iter().map(|e| e.link.as_str()))
        .chain(n.throughput.iter().map(|t| t.link.as_str()))
        .chain(n.http.iter().map(|h| h.link.as_str()))
        .chain(n.udp.iter().map(|u| u.link.as_str()))
        .chain(n.latency.iter().map(|l| l.link.as_str()));
    for name in names {
        if !out.iter().any(|o| o == name) {
            out.push(name.to_owned());
        }
    }
    out
}

/// The wired link called `link`, if it is one.
pub fn wired_link<'a>(n: &'a NetworkResults, link: &str) -> Option<&'a WiredLink> {
    n.wired.iter().find(|w| w.name == link)
}

/// What a link is, in a few words: `built-in Ethernet, eth0`, `USB Ethernet adapter,
/// enx00…`, `USB gadget NCM`, `WiFi 2.4 GHz ch 1 20 MHz, board as AP`.
pub fn link_description(n: &NetworkResults, link: &str) -> String {
    if let Some(w) = wired_link(n, link) {
        let what = match w.kind.as_str() {
            "builtin" => "built-in Ethernet",
            "usb-adapter" => "USB Ethernet adapter",
            other => other,
        };
        return format!("{what}, {}", w.interface);
    }
    if let Some(e) = wifi_entry(n, link) {
        return entry_description(e);
    }
    match link {
        "ncm" | "ecm" | "rndis" => format!("USB gadget {}", link.to_uppercase()),
        _ => match n.links.iter().find(|l| l.function == link) {
            Some(l) => format!("{}, {}", l.function, l.board_interface),
            None => link.to_owned(),
        },
    }
}

fn dotted(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

/// A wired link's facts in two lines: what the kernel says it is (interface, MAC,
/// driver with version and firmware, `1000 Mb/s full, autoneg on`, MTU, the USB
/// enumeration of an adapter), then how the board and the peer met and the interface
/// errors and drops during the tests.
pub fn link_facts_lines(w: &WiredLink) -> Vec<String> {
    let f = &w.facts;
    let mut first = format!("{} ({})", w.interface, w.mac);
    match &f.driver {
        Some(d) => {
            first.push_str(&format!(", driver {d}"));
            if let Some(v) = &f.driver_version {
                first.push_str(&format!(" {v}"));
            }
            if let Some(fw) = f.firmware_version.as_deref().filter(|s| !s.is_empty()) {
                first.push_str(&format!(" (firmware {fw})"));
            }
        }
        None => first.push_str(", driver unknown"),
    }
    if !f.carrier {
        first.push_str(", NO CARRIER");
    }
    let mut link = match f.speed_mbit {
        Some(s) => format!("{s} Mb/s"),
        None => "speed unknown".into(),
    };
    if let Some(d) = &f.duplex {
        link.push_str(&format!(" {d}"));
    }
    if let Some(a) = f.autoneg {
        link.push_str(if a { ", autoneg on" } else { ", autoneg off" });
    }
    first.push_str(&format!(", {link}"));
    if let Some(r) = f.rated_mbit {
        first.push_str(&format!(" (port rated {r} Mb/s)"));
    }
    if let Some(m) = f.mtu {
        first.push_str(&format!(", MTU {m}"));
    }
    if let Some(u) = &f.usb {
        first.push_str(&format!(", USB {}M at {}", u.speed, u.path));
        let ids = match (u.vendor_id, u.product_id) {
            (Some(v), Some(p)) => Some(format!("{v:04x}:{p:04x}")),
            _ => None,
        };
        let name = u.product.clone().or_else(|| u.manufacturer.clone());
        match (ids, name) {
            (Some(i), Some(n)) => first.push_str(&format!(" ({i} {n})")),
            (Some(i), None) => first.push_str(&format!(" ({i})")),
            (None, Some(n)) => first.push_str(&format!(" ({n})")),
            (None, None) => {}
        }
    }
    let peer = w.peer_address.map(dotted);
    let mut second = match w.topology.as_str() {
        "direct" => match (&peer, w.peer_found_by.as_deref()) {
            (Some(p), Some("lease") | None) => format!("direct cable, host leased {p}"),
            (Some(p), Some(by)) => format!("direct cable, peer {p} ({})", found_by(by)),
            (None, _) => "direct cable, no host took a lease".into(),
        },
        "lan" => {
            let mut s = "LAN".to_owned();
            if let Some(d) = w.dhcp_server {
                s.push_str(&format!(", lease from {}", dotted(d)));
            }
            match (&peer, w.peer_found_by.as_deref()) {
                (Some(p), Some(by)) => s.push_str(&format!(", peer {p} ({})", found_by(by))),
                (Some(p), None) => s.push_str(&format!(", peer {p}")),
                (None, _) => s.push_str(", peer not found"),
            }
            s
        }
        other => other.to_owned(),
    };
    second.push_str(&format!(
        "; board {}/{}",
        dotted(w.board_address),
        w.prefix_len
    ));
    if let Some(ns) = w.lease_ns {
        second.push_str(&format!(", lease in {}", duration_label_ns(ns)));
    }
    second.push_str(&match errors_and_drops(w) {
        _ if w.counters.is_empty() => "; interface counters not recorded".to_owned(),
        0 => "; no errors or drops during the tests".to_owned(),
        k => format!("; {k} ERRORS OR DROPS during the tests"),
    });
    vec![first, second]
}

fn found_by(by: &str) -> &str {
    match by {
        "announce" => "announced",
        "plan" => "from the plan",
        "lease" => "leased",
        "static" => "no lease taken: the host's static address, tried",
        other => other,
    }
}

/// One row of a link's table, whatever the test: the one place a direction row is
/// formatted ([`link_table`]).
struct DirectionRow<'a> {
    test: String,
    direction: NetDirection,
    /// What was timed: `10.00 s`, `100.0 MiB in 8.00 s`.
    measured: String,
    bytes: u64,
    nanos: u64,
    /// Mbit/s per interval (TCP only).
    intervals: Vec<f64>,
    board_cpu: &'a CpuTimes,
    host_cpu: &'a CpuTimes,
    udp: Option<&'a UdpRun>,
    mark: &'static str,
}

fn seconds(ns: u64) -> String {
    format!("{:.2} s", ns as f64 / 1e9)
}

impl DirectionRow<'_> {
    fn tcp<'a>(t: &'a ThroughputRun, health: &[StepHealth]) -> DirectionRow<'a> {
        DirectionRow {
            test: format!(
                "TCP, {} stream{}",
                t.streams,
                if t.streams == 1 { "" } else { "s" }
            ),
            direction: t.direction,
            measured: seconds(t.nanos),
            bytes: t.bytes,
            nanos: t.nanos,
            intervals: interval_mbits(t),
            board_cpu: &t.board_cpu,
            host_cpu: &t.host_cpu,
            udp: None,
            mark: net_mark(health, &t.link, NetTest::of_throughput(t)),
        }
    }

    fn http<'a>(h: &'a HttpRun, health: &[StepHealth]) -> DirectionRow<'a> {
        DirectionRow {
            test: "HTTP GET".into(),
            direction: h.direction,
            measured: format!(
                "{:.1} MiB in {}",
                h.bytes as f64 / (1u64 << 20) as f64,
                seconds(h.nanos)
            ),
            bytes: h.bytes,
            nanos: h.nanos,
            intervals: Vec::new(),
            board_cpu: &h.board_cpu,
            host_cpu: &h.host_cpu,
            udp: None,
            mark: net_mark(health, &h.link, NetTest::of_http(h)),
        }
    }

    fn udp<'a>(u: &'a UdpRun, health: &[StepHealth]) -> DirectionRow<'a> {
        DirectionRow {
            test: format!("UDP, {} B datagrams", u.datagram_bytes),
            direction: u.direction,
            measured: seconds(u.nanos),
            bytes: u.bytes,
            nanos: u.nanos,
            intervals: Vec::new(),
            board_cpu: &u.board_cpu,
            host_cpu: &u.host_cpu,
            udp: Some(u),
            mark: net_mark(health, &u.link, NetTest::of_udp(u)),
        }
    }

    fn cells(&self, udp_columns: bool) -> Vec<String> {
        let mark = self.mark;
        let mut out = vec![
            self.test.clone(),
            net_direction_label(self.direction).into(),
            self.measured.clone(),
            format!("{:.1}{mark}", mb_per_s(self.bytes, self.nanos)),
            format!("{:.1}{mark}", mib_per_s(self.bytes, self.nanos)),
            format!("{:.1}{mark}", mbit_per_s(self.bytes, self.nanos)),
            Summary::of(&self.intervals).map_or("—".into(), |s| {
                format!("{:.1} ({:.1}–{:.1})", s.median, s.min, s.max)
            }),
            cpu_cell(self.board_cpu),
            cpu_cell(self.host_cpu),
        ];
        if udp_columns {
            match self.udp {
                Some(u) => out.extend([
                    format!("{:.1}", u.target_bitrate as f64 / 1e6),
                    u.loss_pct().map_or("—".into(), |p| format!("{p:.2}")),
                    u.out_of_order.to_string(),
                    format!("{:.3}", u.jitter_ns as f64 / 1e6),
                ]),
                None => out.extend(vec!["—".to_owned(); 4]),
            }
        }
        out
    }
}

/// The header of [`link_table`]: the UDP columns only when `udp_columns`.
fn link_header(udp_columns: bool) -> Vec<String> {
    let mut h: Vec<String> = [
        "test",
        "direction",
        "measured",
        "MB/s",
        "MiB/s",
        "Mbit/s",
        "per interval Mbit/s",
    ]
    .map(String::from)
    .to_vec();
    h.push(format!("board {CPU_HEADER}"));
    h.push(format!("host {CPU_HEADER}"));
    if udp_columns {
        h.extend(["offered Mbit/s", "loss %", "out of order", "jitter ms"].map(String::from));
    }
    h
}

/// The seeds' table of one link: one row per test and direction (TCP by stream count,
/// then HTTP, then UDP), MB/s (10^6 B/s), MiB/s (2^20 B/s) and Mbit/s (10^6 bit/s) over
/// the measured span, the per-interval median (min–max) of TCP runs, the board's and the
/// host's CPU shares; UDP rows add the offered load (Mbit/s), loss % (lost / (received +
/// lost)), datagrams out of order and the RFC 3550 jitter (ms). [`HEALTH_MARK`](super::HEALTH_MARK)
/// on the rates of runs the board's health flagged.
pub fn link_table(n: &NetworkResults, health: &[StepHealth], link: &str) -> Grid {
    let mut tcp: Vec<&ThroughputRun> = n.throughput.iter().filter(|t| t.link == link).collect();
    tcp.sort_by_key(|t| (t.streams, t.direction));
    let mut http: Vec<&HttpRun> = n.http.iter().filter(|h| h.link == link).collect();
    http.sort_by_key(|h| h.direction);
    let mut udp: Vec<&UdpRun> = n.udp.iter().filter(|u| u.link == link).collect();
    udp.sort_by_key(|u| u.direction);
    let udp_columns = !udp.is_empty();
    let mut g = Grid::new(link_header(udp_columns));
    g.left_columns = 3;
    // MB/s and MiB/s: the Mbit/s column's figure in other units.
    g.narrow_drop = vec![3, 4];
    let rows = tcp
        .into_iter()
        .map(|t| DirectionRow::tcp(t, health))
        .chain(http.into_iter().map(|h| DirectionRow::http(h, health)))
        .chain(udp.into_iter().map(|u| DirectionRow::udp(u, health)));
    for row in rows {
        g.push(row.cells(udp_columns));
    }
    g
}

/// `values` as `median (min–max)`, each by `fmt`; `—` when empty.
fn spread(values: &[f64], fmt: impl Fn(f64) -> String) -> String {
    Summary::of(values).map_or("—".into(), |s| {
        format!("{} ({}–{})", fmt(s.median), fmt(s.min), fmt(s.max))
    })
}

/// Words before [`tcp_info_table`], saying whose kernel the figures are from.
pub const TCP_INFO_NOTE: &str = "The sender's TCP_INFO (its kernel's figures, as iperf3 \
     reports them): segments retransmitted after the warm-up; congestion window (all \
     streams, KiB = 2^10 B) and smoothed RTT (srtt, mean of the streams, µs) at each \
     interval's end, median (min–max) over the intervals; the largest stream's srtt";

/// The sender's TCP internals of every TCP run over `link` that has them, in
/// [`link_table`]'s order: retransmits (total after the warm-up), the congestion window
/// (KiB, all streams) and the smoothed RTT (µs, mean over the streams) at each
/// interval's end as median (min–max), and the largest srtt of any stream. `None` when
/// no run has them (a sender without Linux's TCP_INFO, an older document).
pub fn tcp_info_table(n: &NetworkResults, link: &str) -> Option<Grid> {
    let mut tcp: Vec<&ThroughputRun> = n
        .throughput
        .iter()
        .filter(|t| t.link == link && t.sender_tcp().is_some())
        .collect();
    if tcp.is_empty() {
        return None;
    }
    tcp.sort_by_key(|t| (t.streams, t.direction));
    let mut g = Grid::new(
        [
            "TCP",
            "direction",
            "retransmits",
            "cwnd KiB",
            "srtt µs",
            "max srtt µs",
        ]
        .map(String::from)
        .to_vec(),
    );
    g.left_columns = 2;
    for t in tcp {
        let per: Vec<_> = t
            .intervals
            .iter()
            .filter_map(|i| i.sender_tcp(t.direction))
            .collect();
        let cwnd: Vec<f64> = per.iter().map(|s| s.cwnd_bytes as f64 / 1024.0).collect();
        let srtt: Vec<f64> = per.iter().map(|s| f64::from(s.srtt_us)).collect();
        let total = t.sender_tcp().unwrap_or_default();
        g.push(vec![
            format!(
                "{} stream{}",
                t.streams,
                if t.streams == 1 { "" } else { "s" }
            ),
            net_direction_label(t.direction).into(),
            total.retransmits.to_string(),
            spread(&cwnd, |x| format!("{x:.0}")),
            spread(&srtt, |x| format!("{x:.0}")),
            total.srtt_max_us.to_string(),
        ]);
    }
    Some(g)
}

/// TCP round trips over `link`: min, median, p99 and max per run, µs
/// ([`HEALTH_MARK`](super::HEALTH_MARK) on the median where the board's health was flagged).
pub fn latency_table(n: &NetworkResults, health: &[StepHealth], link: &str) -> Grid {
    let mut t = Grid::new(
        ["round trips", "min µs", "median µs", "p99 µs", "max µs"]
            .map(String::from)
            .to_vec(),
    );
    t.left_columns = 0;
    for r in n.latency.iter().filter(|l| l.link == link) {
        let mut v = r.rtt_ns.clone();
        v.sort_unstable();
        let us = |x: Option<u64>| x.map_or("—".into(), |ns| format!("{:.1}", ns as f64 / 1e3));
        let mark = net_mark(health, &r.link, NetTest::Latency);
        let median = Summary::of(&v.iter().map(|&x| x as f64).collect::<Vec<_>>())
            .map_or("—".into(), |s| format!("{:.1}{mark}", s.median / 1e3));
        t.push(vec![
            v.len().to_string(),
            us(v.first().copied()),
            median,
            us(percentile(&v, 99.0)),
            us(v.last().copied()),
        ]);
    }
    t
}

/// True when there is anything network to show.
pub fn has_network(n: &NetworkResults) -> bool {
    !(n.throughput.is_empty()
        && n.latency.is_empty()
        && n.http.is_empty()
        && n.udp.is_empty()
        && n.wired.is_empty()
        && !has_wifi(&n.wifi))
}

/// True when a step of `health` covering a network test saw a flagged condition.
fn network_flagged(health: &[StepHealth]) -> bool {
    health
        .iter()
        .any(|h| matches!(h.scope, HealthScope::Network { .. }) && !h.during().is_empty())
}

fn has_runs(n: &NetworkResults, link: &str) -> bool {
    n.throughput.iter().any(|t| t.link == link)
        || n.http.iter().any(|h| h.link == link)
        || n.udp.iter().any(|u| u.link == link)
}

/// The network section as blocks: how it was measured, then per link its heading, a
/// wired link's facts ([`link_facts_lines`]) or a WiFi entry's
/// ([`entry_facts_line`]), its table ([`link_table`]) and its round trips
/// ([`latency_table`]); the [`HEALTH_MARK`](super::HEALTH_MARK) legend when a test was
/// flagged. The WiFi section follows in the report ([`super::wifi::blocks`]).
pub fn network_blocks(n: &NetworkResults, health: &[StepHealth], emulated: bool) -> Vec<Block> {
    let mut out = Vec::new();
    let mark = if emulated {
        " (EMULATED: QEMU's virtual network, not the board's)"
    } else {
        ""
    };
    out.push(Block::Heading(format!("Network{mark}")));
    let mut how = Vec::new();
    if let Some(omit) = n.throughput.iter().map(|r| r.omit_ns).max() {
        how.push(format!(
            "TCP counted at the receiver after a {} warm-up",
            duration_label_ns(omit)
        ));
    }
    if !n.http.is_empty() {
        how.push("HTTP GET of an object in the sender's RAM, request to last byte".into());
    }
    if !n.udp.is_empty() {
        how.push(
            "UDP at a set offered load, payload counted at the receiver; loss % = lost / \
             (received + lost); jitter as RFC 3550"
                .into(),
        );
    }
    how.push(
        "MB/s = 10^6 B/s, MiB/s = 2^20 B/s, Mbit/s = 10^6 bit/s; CPU = system-wide \
         /proc/stat shares"
            .into(),
    );
    out.push(Block::Text(how.join("; ")));
    for link in network_links(n) {
        let runs = has_runs(n, &link);
        let latency = n.latency.iter().any(|l| l.link == link);
        let wired = wired_link(n, &link);
        if !runs && !latency && wired.is_none() {
            continue;
        }
        out.push(Block::Heading(format!(
            "Link {link} ({}){}",
            link_description(n, &link),
            if emulated { ", EMULATED" } else { "" }
        )));
        if let Some(w) = wired {
            out.push(Block::Text(link_facts_lines(w).join("\n")));
        }
        if let Some(e) = wifi_entry(n, &link) {
            out.push(Block::Text(entry_facts_line(e)));
        }
        if runs {
            out.push(Block::Grid(link_table(n, health, &link)));
            if let Some(g) = tcp_info_table(n, &link) {
                out.push(Block::Text(format!("{TCP_INFO_NOTE}:")));
                out.push(Block::Grid(g));
            }
        } else {
            out.push(Block::Text("no throughput test ran over this link".into()));
        }
        if latency {
            out.push(Block::Text(format!(
                "TCP round trips over {link} (1 byte each way, TCP_NODELAY):"
            )));
            out.push(Block::Grid(latency_table(n, health, &link)));
        }
    }
    if network_flagged(health) {
        out.push(Block::Text(HEALTH_LEGEND.into()));
    }
    out
}

/// The network section as terminal text (no health records: the host's own runs).
pub fn network_report(n: &NetworkResults, emulated: bool) -> String {
    Doc {
        blocks: network_blocks(n, &[], emulated),
    }
    .text()
}

#[cfg(test)]
pub(crate) mod tests;
