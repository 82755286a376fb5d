//! Network results: the links the gadget and the wired step brought up and what was
//! measured over them.
//!
//! Raw figures only: bytes, nanoseconds and `/proc/stat` jiffy deltas. Mbit/s and CPU
//! percentages are derived when rendering ([`CpuTimes::share`], [`mbit_per_s`]).

use serde::{Deserialize, Serialize};

use crate::counters::{CounterSpan, NetDirection, NetTest};

/// Everything network in one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct NetworkResults {
    /// Each link brought up (one per gadget function in turn, or the composite's links).
    pub links: Vec<LinkRecord>,
    pub throughput: Vec<ThroughputRun>,
    pub latency: Vec<LatencyRun>,
    pub http: Vec<HttpRun>,
    /// UDP runs at a set offered load (schema 1.7).
    #[serde(default)]
    pub udp: Vec<UdpRun>,
    /// Wired links: built-in Ethernet and USB Ethernet adapters (schema 1.7).
    #[serde(default)]
    pub wired: Vec<WiredLink>,
    /// WiFi: the radio, the regulatory domain and each entry (schema 1.8).
    #[serde(default)]
    pub wifi: crate::wifi::WifiResults,
}

/// One wired link as PID 1 found it and brought it up: what the kernel says it is, how
/// the board and the peer reached each other, and the interface counters around every
/// test. Its runs carry its `name` as their `link`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WiredLink {
    /// The plan's name for the link (`eth`, `usb-eth`).
    pub name: String,
    /// `builtin` or `usb-adapter`.
    pub kind: String,
    /// The interface the kernel named (`eth0`, `eth1`, `enx...`).
    pub interface: String,
    /// Its MAC, `aa:bb:..`.
    pub mac: String,
    pub facts: LinkFacts,
    /// `direct` (the board's DHCP server leased the host its address) or `lan` (the
    /// board took a lease from the LAN).
    pub topology: String,
    pub board_address: [u8; 4],
    pub prefix_len: u8,
    /// The peer's address, once known.
    pub peer_address: Option<[u8; 4]>,
    /// How the peer's address was found: `lease` (direct: the address leased to the
    /// host), `static` (direct: no lease taken, the host's `.2` tried all the same),
    /// `plan` or `announce` (LAN).
    pub peer_found_by: Option<String>,
    /// From the interface coming up to the DHCP lease being acknowledged (either way), ns.
    pub lease_ns: Option<u64>,
    /// The LAN's DHCP server (LAN topology).
    #[serde(default)]
    pub dhcp_server: Option<[u8; 4]>,
    /// Interface counters right before and right after each test.
    pub counters: Vec<CounterSpan>,
}

/// What the kernel reports about a wired link (sysfs and the ethtool ioctl); a fact it
/// does not report is `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkFacts {
    /// The driver bound to the interface's device (`smsc95xx`, `cdc_ether`).
    pub driver: Option<String>,
    /// ETHTOOL_GDRVINFO: driver version, firmware version, bus info.
    pub driver_version: Option<String>,
    pub firmware_version: Option<String>,
    pub bus_info: Option<String>,
    /// Negotiated speed, Mbit/s (`/sys/class/net/<if>/speed`; absent or -1 when unknown).
    pub speed_mbit: Option<u32>,
    /// `full`, `half` (`/sys/class/net/<if>/duplex`).
    pub duplex: Option<String>,
    /// Autonegotiation on (ETHTOOL_GLINKSETTINGS / ETHTOOL_GSET).
    pub autoneg: Option<bool>,
    /// What the port is rated for (the plan's `rated_mbit`), Mbit/s.
    pub rated_mbit: Option<u32>,
    pub mtu: Option<u32>,
    /// Carrier when the tests started.
    pub carrier: bool,
    /// For a USB adapter: where and how fast it enumerated.
    pub usb: Option<UsbFacts>,
}

impl LinkFacts {
    /// The link runs below what its port is rated for (a GbE port at 100 Mb/s), or a
    /// USB adapter enumerated below high speed (480 Mbit/s): the figures are the slow
    /// link's, and the report says so loudly.
    pub fn degraded(&self) -> Option<String> {
        if let (Some(speed), Some(rated)) = (self.speed_mbit, self.rated_mbit) {
            if speed < rated {
                return Some(format!(
                    "negotiated {speed} Mb/s on a port rated {rated} Mb/s (cable, switch port or autonegotiation?)"
                ));
            }
        }
        if let Some(u) = &self.usb {
            if u.speed_mbit.is_some_and(|s| s < 480.0) {
                return Some(format!(
                    "the USB adapter enumerated at {} Mbit/s, below USB 2.0 high speed (480): a full-speed port or hub caps everything",
                    u.speed
                ));
            }
        }
        None
    }
}

/// A USB device as sysfs describes it (`/sys/bus/usb/devices/<path>/`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UsbFacts {
    /// The sysfs `speed` attribute as written (`480`, `12`, `5000`, `1.5`), Mbit/s.
    pub speed: String,
    /// `speed` as a number, Mbit/s.
    pub speed_mbit: Option<f64>,
    /// The device's path on the bus (`1-1.3`: bus 1, root port 1, hub port 3).
    pub path: String,
    pub vendor_id: Option<u16>,
    pub product_id: Option<u16>,
    pub manufacturer: Option<String>,
    pub product: Option<String>,
}

impl Eq for UsbFacts {}

/// One UDP run at a set offered load, as `iperf3 -u` reports it: the receiver counts
/// datagrams by sequence number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UdpRun {
    pub link: String,
    pub direction: NetDirection,
    /// Offered load, bit/s of UDP payload.
    pub target_bitrate: u64,
    /// UDP payload per datagram, bytes.
    pub datagram_bytes: u32,
    /// Datagrams the sender sent, after the warm-up.
    pub sent: u64,
    /// Datagrams the receiver got (duplicates not counted).
    pub received: u64,
    /// Sequence numbers never seen: `sent - received` as the receiver knows it
    /// (highest sequence + 1 - received).
    pub lost: u64,
    /// Datagrams that arrived after a higher sequence number had.
    pub out_of_order: u64,
    /// Payload bytes received after the warm-up.
    pub bytes: u64,
    /// The measured span, ns.
    pub nanos: u64,
    /// Interarrival jitter at the end of the run, ns (RFC 3550 §6.4.1: J += (|D| - J)/16
    /// over the transit-time differences of consecutive datagrams).
    pub jitter_ns: u64,
    pub board_cpu: CpuTimes,
    pub host_cpu: CpuTimes,
}

impl UdpRun {
    /// The datagrams lost as a percentage of those the receiver should have seen:
    /// `lost / (received + lost) × 100`. `None` when it saw nothing (no datagram
    /// received and none known lost): no loss can be stated, and 0 % would claim a
    /// clean link. The one definition: the console's figure ([`crate::figures::udp_loss`])
    /// and every host output take it.
    pub fn loss_pct(&self) -> Option<f64> {
        let seen = self.received.saturating_add(self.lost);
        (seen > 0).then(|| 100.0 * self.lost as f64 / seen as f64)
    }
}

/// One gadget link as the board set it up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkRecord {
    /// `ncm`, `ecm`, `rndis`, or `static` for a non-gadget interface.
    pub function: String,
    /// The UDC the gadget was bound to (`/sys/class/udc/<name>`).
    pub udc: String,
    /// Board-side interface, e.g. `usb0`.
    pub board_interface: String,
    /// Board (device) and host MAC addresses, `aa:bb:..`, locally administered.
    pub board_mac: String,
    pub host_mac: String,
    pub board_address: [u8; 4],
    /// The address leased to the host, once it took one.
    pub host_address: Option<[u8; 4]>,
    /// From binding the UDC to the host's DHCP request being acknowledged, ns.
    pub lease_ns: Option<u64>,
}

impl NetTest {
    /// The test of a throughput run.
    pub fn of_throughput(r: &ThroughputRun) -> NetTest {
        NetTest::Tcp {
            direction: r.direction,
            streams: r.streams,
        }
    }

    /// The test of an HTTP run.
    pub fn of_http(r: &HttpRun) -> NetTest {
        NetTest::Http {
            direction: r.direction,
        }
    }

    /// The test of a UDP run.
    pub fn of_udp(r: &UdpRun) -> NetTest {
        NetTest::Udp {
            direction: r.direction,
        }
    }
}

/// Jiffy deltas of the `cpu` line of `/proc/stat` over some span (proc(5)); all CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

/// CPU time shares in percent of the span (all CPUs together = 100; user includes
/// nice, idle includes steal).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CpuShare {
    pub user: f64,
    pub system: f64,
    pub irq: f64,
    pub softirq: f64,
    pub iowait: f64,
    pub idle: f64,
}

impl CpuTimes {
    /// Sum of every field, jiffies. Saturates: a document is outside input, and counts
    /// near `u64::MAX` must not overflow.
    pub fn total(&self) -> u64 {
        [
            self.nice,
            self.system,
            self.idle,
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
        ]
        .into_iter()
        .fold(self.user, u64::saturating_add)
    }

    /// Percent shares (user includes nice); `None` for an empty span.
    pub fn share(&self) -> Option<CpuShare> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let pct = |x: u64| 100.0 * x as f64 / total as f64;
        Some(CpuShare {
            user: pct(self.user.saturating_add(self.nice)),
            system: pct(self.system),
            irq: pct(self.irq),
            softirq: pct(self.softirq),
            iowait: pct(self.iowait),
            idle: pct(self.idle.saturating_add(self.steal)),
        })
    }
}

/// One report interval of a throughput run, counted at the receiver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetInterval {
    /// Start and end relative to the end of the omitted warm-up, ns.
    pub start_ns: u64,
    pub end_ns: u64,
    /// Payload bytes received in the interval, all streams.
    pub bytes: u64,
    pub board_cpu: CpuTimes,
    pub host_cpu: CpuTimes,
    /// The board's TCP_INFO over the interval, all streams (schema 1.14; absent where
    /// the kernel gave none, and in older documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_tcp: Option<TcpSample>,
    /// The host's, likewise (absent from a macOS or Windows peer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_tcp: Option<TcpSample>,
}

/// One side's TCP internals over one interval, all its streams, from
/// `getsockopt(TCP_INFO)` (linux/include/uapi/linux/tcp.h, `struct tcp_info`) read at
/// the interval's boundaries, as iperf3's `-J` intervals carry them (schema 1.14).
/// The sender's are the ones that say something: its kernel runs the congestion
/// control; a receiver's cwnd and srtt stay near their initial values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TcpSample {
    /// Segments retransmitted within the interval: the change of `tcpi_total_retrans`
    /// summed over the streams (a stream gone quiet keeps its last count).
    pub retransmits: u64,
    /// Congestion window at the interval's end, summed over the streams, bytes
    /// (`tcpi_snd_cwnd` segments × `tcpi_snd_mss`).
    pub cwnd_bytes: u64,
    /// Smoothed RTT (srtt, `tcpi_rtt`) at the interval's end, mean over the streams, µs.
    pub srtt_us: u32,
    /// The largest stream's srtt, µs.
    pub srtt_max_us: u32,
    /// RTT mean deviation (`tcpi_rttvar`), mean over the streams, µs.
    pub rttvar_us: u32,
    /// Streams whose TCP_INFO was read at the interval's end.
    pub streams: u32,
}

/// One side's TCP internals over a whole run (schema 1.14): the sums and extremes of
/// its intervals' [`TcpSample`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TcpTotals {
    /// Segments retransmitted after the warm-up, all streams.
    pub retransmits: u64,
    /// Mean over the intervals of their mean srtt, µs.
    pub srtt_us: u32,
    /// Largest srtt of any stream at any interval's end, µs.
    pub srtt_max_us: u32,
}

impl TcpTotals {
    /// The totals of `intervals` (those without a sample are left out); `None` when no
    /// interval has one.
    pub fn of(intervals: impl IntoIterator<Item = TcpSample>) -> Option<TcpTotals> {
        let (mut n, mut sum, mut t) = (0u64, 0u64, TcpTotals::default());
        for s in intervals {
            n += 1;
            sum = sum.saturating_add(u64::from(s.srtt_us));
            t.retransmits = t.retransmits.saturating_add(s.retransmits);
            t.srtt_max_us = t.srtt_max_us.max(s.srtt_max_us);
        }
        if n == 0 {
            return None;
        }
        t.srtt_us = u32::try_from(sum / n).unwrap_or(u32::MAX);
        Some(t)
    }
}

/// One iperf-style TCP run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThroughputRun {
    /// Link function (`ncm`, ...), as in [`LinkRecord::function`].
    pub link: String,
    pub direction: NetDirection,
    pub streams: u32,
    /// Warm-up excluded from every figure, ns.
    pub omit_ns: u64,
    pub intervals: Vec<NetInterval>,
    /// Bytes received after the warm-up, all streams.
    pub bytes: u64,
    /// Measured span after the warm-up, ns.
    pub nanos: u64,
    pub board_cpu: CpuTimes,
    pub host_cpu: CpuTimes,
    /// The board's TCP_INFO totals after the warm-up (schema 1.14; absent where its
    /// kernel gave none, and in older documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_tcp: Option<TcpTotals>,
    /// The host's, likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_tcp: Option<TcpTotals>,
}

impl ThroughputRun {
    /// The sender's TCP_INFO totals (the board's for `board-to-host`), as iperf3
    /// reports the sender's retransmits and srtt.
    pub fn sender_tcp(&self) -> Option<TcpTotals> {
        match self.direction {
            NetDirection::BoardToHost => self.board_tcp,
            NetDirection::HostToBoard => self.host_tcp,
        }
    }
}

impl NetInterval {
    /// The sender's TCP_INFO of this interval (`direction` is its run's).
    pub fn sender_tcp(&self, direction: NetDirection) -> Option<TcpSample> {
        match direction {
            NetDirection::BoardToHost => self.board_tcp,
            NetDirection::HostToBoard => self.host_tcp,
        }
    }
}

/// TCP round trips of one byte each way (TCP_NODELAY).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencyRun {
    pub link: String,
    /// Every round-trip time, ns, in the order measured.
    pub rtt_ns: Vec<u64>,
}

/// One HTTP GET of an object held in RAM by the sender.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpRun {
    pub link: String,
    /// `board-to-host`: the host fetched from the board's server.
    pub direction: NetDirection,
    /// Body bytes received.
    pub bytes: u64,
    /// From sending the request to the last body byte, ns.
    pub nanos: u64,
    pub board_cpu: CpuTimes,
    pub host_cpu: CpuTimes,
}

/// Megabits (10^6 bits) per second; 0 for an empty span.
pub fn mbit_per_s(bytes: u64, nanos: u64) -> f64 {
    if nanos == 0 {
        return 0.0;
    }
    bytes as f64 * 8.0 * 1e3 / nanos as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_and_fold_nice_and_steal() {
        let t = CpuTimes {
            user: 10,
            nice: 10,
            system: 30,
            idle: 20,
            iowait: 0,
            irq: 5,
            softirq: 20,
            steal: 5,
        };
        let s = t.share().unwrap();
        assert_eq!(t.total(), 100);
        assert_eq!(
            (s.user, s.system, s.softirq, s.idle),
            (20.0, 30.0, 20.0, 25.0)
        );
        assert!(CpuTimes::default().share().is_none());
    }

    /// Regression, found while writing fuzz/ results_json (which aborts on it): jiffy
    /// counts adding up past `u64::MAX` made `total` overflow (a panic in debug builds,
    /// nonsense shares in release).
    #[test]
    fn huge_jiffy_counts_saturate() {
        let t = CpuTimes {
            user: u64::MAX,
            system: 93,
            softirq: 107,
            steal: u64::MAX,
            ..CpuTimes::default()
        };
        assert_eq!(t.total(), u64::MAX);
        let s = t.share().unwrap();
        assert!(s.user <= 100.0 && s.idle <= 100.0, "{s:?}");
        let doc = r#"{"user":18446744073709551615,"nice":1,"system":0,"idle":0,"iowait":0,"irq":0,"softirq":0,"steal":0}"#;
        let t: CpuTimes = serde_json::from_str(doc).unwrap();
        assert_eq!(t.share().unwrap().user, 100.0);
    }

    #[test]
    fn megabits() {
        // 125 000 bytes in 10 ms = 100 Mbit/s.
        assert!((mbit_per_s(125_000, 10_000_000) - 100.0).abs() < 1e-9);
        assert_eq!(mbit_per_s(1, 0), 0.0);
    }
}
