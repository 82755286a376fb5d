//! What network results and WiFi results share, below both: the test a run was
//! (`NetTest`, with its `NetDirection`) and the interface counters around it
//! (`IfCounters`, `CounterSpan`). Re-exported from [`crate::network`], where they are
//! documented to live; `NetTest`'s constructors from runs are there too.

use serde::{Deserialize, Serialize};

/// `/sys/class/net/<if>/statistics/*` at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IfCounters {
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_errors: u64,
    pub tx_errors: u64,
    pub rx_dropped: u64,
    pub tx_dropped: u64,
}

impl IfCounters {
    /// Errors and drops (rx + tx) between `self` (before) and `after`; counters that
    /// went backwards (a driver reset) count as 0.
    pub fn trouble_since(&self, after: &IfCounters) -> u64 {
        [
            after.rx_errors.saturating_sub(self.rx_errors),
            after.tx_errors.saturating_sub(self.tx_errors),
            after.rx_dropped.saturating_sub(self.rx_dropped),
            after.tx_dropped.saturating_sub(self.tx_dropped),
        ]
        .into_iter()
        .fold(0, u64::saturating_add)
    }
}

/// The interface counters around one test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterSpan {
    pub test: NetTest,
    pub before: IfCounters,
    pub after: IfCounters,
}

/// Which way the bytes went over the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetDirection {
    BoardToHost,
    HostToBoard,
}

impl NetDirection {
    /// `board-to-host` / `host-to-board`, as the results and the case ids spell it.
    pub fn name(self) -> &'static str {
        match self {
            NetDirection::BoardToHost => "board-to-host",
            NetDirection::HostToBoard => "host-to-board",
        }
    }
}

/// One network test of a plan, as named in [`crate::health::HealthScope::Network`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum NetTest {
    /// A [`ThroughputRun`](crate::network::ThroughputRun).
    Tcp {
        direction: NetDirection,
        streams: u32,
    },
    /// A [`LatencyRun`](crate::network::LatencyRun).
    Latency,
    /// An [`HttpRun`](crate::network::HttpRun).
    Http { direction: NetDirection },
    /// A [`UdpRun`](crate::network::UdpRun).
    Udp { direction: NetDirection },
}
