//! Network results: the links the gadget brought up and what was measured over them.
//!
//! Raw figures only: bytes, nanoseconds and `/proc/stat` jiffy deltas. Mbit/s and CPU
//! percentages are derived when rendering ([`CpuTimes::share`], [`mbit_per_s`]).

use serde::{Deserialize, Serialize};

/// Everything network in one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct NetworkResults {
    /// Each link brought up (one per gadget function in turn, or the composite's links).
    pub links: Vec<LinkRecord>,
    pub throughput: Vec<ThroughputRun>,
    pub latency: Vec<LatencyRun>,
    pub http: Vec<HttpRun>,
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

/// Which way the bytes went over the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetDirection {
    BoardToHost,
    HostToBoard,
}

/// One network test of a plan, as named in [`crate::health::HealthScope::Network`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum NetTest {
    /// A [`ThroughputRun`].
    Tcp {
        direction: NetDirection,
        streams: u32,
    },
    /// A [`LatencyRun`].
    Latency,
    /// An [`HttpRun`].
    Http { direction: NetDirection },
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
