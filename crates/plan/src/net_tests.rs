//! The network tests a plan runs over every link (the gadget's, each wired link, each
//! WiFi entry), with their bounds: below `network.rs` and `wifi.rs`, which both hold
//! them; `network` re-exports them.

use serde::{Deserialize, Serialize};

/// The network tests (iperf-style TCP both ways, TCP round trips, HTTP from RAM).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetTests {
    /// Control and data port of the peer (`benchboot peer` on the host).
    pub peer_port: u16,
    /// How long the board retries connecting to the peer, ms.
    pub peer_wait_ms: u64,
    /// Measured time per throughput run (after the omitted warm-up), ms.
    pub duration_ms: u64,
    /// Report interval, ms.
    pub interval_ms: u64,
    /// Warm-up at the start of each run that is measured but not counted, ms.
    pub omit_ms: u64,
    /// Parallel stream counts to run, each in both directions.
    pub streams: Vec<u32>,
    /// TCP round trips (1-byte ping-pong) for the latency figure.
    pub latency_samples: u32,
    /// Size of the HTTP object served from RAM, bytes (the seeds used 100 MiB).
    pub http_bytes: u64,
    /// TCP port of the board's HTTP server (board-to-host HTTP); 0: any free port.
    /// Fixed where a NAT forwards it (QEMU's user network).
    #[serde(default)]
    pub board_http_port: u16,
    /// UDP runs, each direction: offered load in bit/s of UDP payload (as `iperf3 -u
    /// -b`); 0 skips UDP.
    #[serde(default)]
    pub udp_bitrate: u64,
    /// UDP payload per datagram, bytes (iperf3 `-l`).
    #[serde(default = "default_udp_datagram")]
    pub udp_datagram_bytes: u32,
}

/// Longest measured time of one network run, ms: 10 min (the presets use 30 s,
/// iperf3's own default is 10 s). `benchboot peer` refuses longer runs.
pub const MAX_DURATION_MS: u64 = 600_000;

/// Longest warm-up of one network run, ms: 1 min (the presets use 2 s).
/// `benchboot peer` refuses longer warm-ups.
pub const MAX_OMIT_MS: u64 = 60_000;

/// Highest UDP offered load a plan may ask, bit/s: 100 Gbit/s (the fastest Ethernet
/// there is; the peer's own bound is the boards' link, 1 Gbit/s, unless raised).
pub const MAX_UDP_BITRATE: u64 = 100_000_000_000;

/// 1448 B of UDP payload: fits a 1500 B Ethernet MTU with IPv4, UDP and room for
/// options (iperf3's default for UDP is the TCP MSS it sees, 1448 on Ethernet with
/// timestamps).
pub const DEFAULT_UDP_DATAGRAM: u32 = 1448;

fn default_udp_datagram() -> u32 {
    DEFAULT_UDP_DATAGRAM
}

impl NetTests {
    /// The hardware defaults: 30 s runs with 1 s intervals after a 2 s warm-up, 1 and 4
    /// streams, 1000 round trips, 100 MiB over HTTP (measuring.md: the seeds' wget test).
    pub fn hardware() -> NetTests {
        NetTests {
            peer_port: 5202,
            peer_wait_ms: 120_000,
            duration_ms: 30_000,
            interval_ms: 1000,
            omit_ms: 2000,
            streams: vec![1, 4],
            latency_samples: 1000,
            http_bytes: 100 << 20,
            board_http_port: 0,
            // Off unless a plan sets it (the presets do, from v2).
            udp_bitrate: 0,
            udp_datagram_bytes: DEFAULT_UDP_DATAGRAM,
        }
    }
}
