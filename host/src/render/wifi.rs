//! The WiFi figures of a run (results schema 1.8, `network.wifi`), as the write-ups
//! tabled them: per plan entry and direction the channel asked and obtained, the
//! security, the spread of the single-stream TCP run's intervals (MiB/s = 2^20 B/s,
//! Mbit/s = 10^6 bit/s, counted at the receiver after the warm-up), the PHY rate,
//! signal, power save, retries and the neighbours sharing the channel. The throughput
//! runs are the ordinary `network.throughput` records whose `link` is the entry's.
//!
//! Units as nl80211 gives them ([`benchboot_results::wifi`]): MHz, dBm, mBm (1/100
//! dBm), bitrates in 100 kbit/s. [`station`] reads the station and the scan;
//! [`blocks`] lays the section out.

pub mod blocks;
pub mod station;

pub use station::*;

use benchboot_results::counters::NetDirection;
use benchboot_results::network::{mbit_per_s, NetworkResults, ThroughputRun};
use benchboot_results::wifi::{Regulatory, WifiChannel, WifiEntryResult, WifiResults};
use benchboot_results::{mib_per_s, Summary};

use crate::units::duration_label_ns;

/// The directions in table order.
pub const DIRECTIONS: [NetDirection; 2] = [NetDirection::BoardToHost, NetDirection::HostToBoard];

/// The spread of one direction's single-stream TCP intervals over one entry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntervalSpread {
    /// MiB/s (2^20 B/s) per interval.
    pub mib: Summary,
    /// Mbit/s (10^6 bit/s) per interval.
    pub mbit: Summary,
    /// The median interval length, ns (the plan's `interval_ms`; a last short interval
    /// counts at its own length).
    pub interval_ns: u64,
    /// The warm-up left out before the first interval, ns (the longest of the runs).
    pub omit_ns: u64,
}

/// The single-stream TCP runs over `link` in `direction`, in document order.
pub fn single_stream_runs<'a>(
    n: &'a NetworkResults,
    link: &str,
    direction: NetDirection,
) -> Vec<&'a ThroughputRun> {
    n.throughput
        .iter()
        .filter(|t| t.link == link && t.streams == 1 && t.direction == direction)
        .collect()
}

/// MiB/s and Mbit/s of every interval of `runs` (empty intervals left out), pooled.
pub fn interval_spread(runs: &[&ThroughputRun]) -> Option<IntervalSpread> {
    let spans: Vec<(u64, u64)> = runs
        .iter()
        .flat_map(|t| t.intervals.iter())
        .map(|i| (i.bytes, i.end_ns.saturating_sub(i.start_ns)))
        .filter(|&(_, ns)| ns > 0)
        .collect();
    let mib: Vec<f64> = spans.iter().map(|&(b, ns)| mib_per_s(b, ns)).collect();
    let mbit: Vec<f64> = spans.iter().map(|&(b, ns)| mbit_per_s(b, ns)).collect();
    let lengths: Vec<f64> = spans.iter().map(|&(_, ns)| ns as f64).collect();
    Some(IntervalSpread {
        mib: Summary::of(&mib)?,
        mbit: Summary::of(&mbit)?,
        interval_ns: Summary::of(&lengths)?.median as u64,
        omit_ns: runs.iter().map(|t| t.omit_ns).max().unwrap_or(0),
    })
}

/// One row of the WiFi table: an entry in one direction, or the entry alone when it
/// was skipped or has no single-stream TCP run.
#[derive(Debug, Clone, PartialEq)]
pub struct WifiRow<'a> {
    pub entry: &'a WifiEntryResult,
    /// `None`: skipped, or no single-stream TCP run over the entry.
    pub direction: Option<NetDirection>,
    pub spread: Option<IntervalSpread>,
}

/// Every row of the WiFi table, entries in plan order, board → host before host →
/// board.
pub fn wifi_rows(n: &NetworkResults) -> Vec<WifiRow<'_>> {
    let mut out = Vec::new();
    for e in &n.wifi.entries {
        let mut any = false;
        if e.skipped.is_none() {
            for d in DIRECTIONS {
                let runs = single_stream_runs(n, &e.link, d);
                if runs.is_empty() {
                    continue;
                }
                any = true;
                out.push(WifiRow {
                    entry: e,
                    direction: Some(d),
                    spread: interval_spread(&runs),
                });
            }
        }
        if !any {
            out.push(WifiRow {
                entry: e,
                direction: None,
                spread: None,
            });
        }
    }
    out
}

/// True when the run has anything WiFi to show.
pub fn has_wifi(w: &WifiResults) -> bool {
    w.radio.is_some() || w.regulatory.is_some() || !w.entries.is_empty() || !w.checks.is_empty()
}

/// True when the kernel reports another regulatory domain than the plan asked for.
pub fn regulatory_mismatch(g: &Regulatory) -> bool {
    !g.asked.eq_ignore_ascii_case(&g.alpha2)
}

/// The WiFi entry whose runs carry `link`.
pub fn wifi_entry<'a>(n: &'a NetworkResults, link: &str) -> Option<&'a WifiEntryResult> {
    n.wifi.entries.iter().find(|e| e.link == link)
}

/// `2.4 GHz ch 1 20 MHz`, `5 GHz ch 36 80 MHz`, `2.4 GHz ch 6 20 MHz no HT (a/g)`.
pub fn channel_name(c: &WifiChannel) -> String {
    format!(
        "{} GHz ch {} {} MHz{}",
        c.band.name(),
        c.channel,
        c.width_mhz,
        if c.no_ht { " no HT (a/g)" } else { "" }
    )
}

/// [`channel_name`] with the frequencies: `…, centre 2412 MHz`, and the primary
/// channel's frequency where the centre is elsewhere (`…, centre 5210 MHz (primary
/// 5180)`).
pub fn channel_label(c: &WifiChannel) -> String {
    let mut s = format!("{}, centre {} MHz", channel_name(c), c.center1_mhz);
    if c.center1_mhz != c.freq_mhz {
        s.push_str(&format!(" (primary {})", c.freq_mhz));
    }
    s
}

/// True when the radio obtained another channel than asked: band, number, width or
/// centre differ (no HT is not compared: plans never ask for it).
pub fn channel_mismatch(e: &WifiEntryResult) -> bool {
    match (&e.asked, &e.obtained) {
        (Some(a), Some(o)) => {
            (a.band, a.channel, a.width_mhz, a.center1_mhz)
                != (o.band, o.channel, o.width_mhz, o.center1_mhz)
        }
        _ => false,
    }
}

/// The channel the entry's figures were measured on: obtained, else asked.
pub fn measured_channel(e: &WifiEntryResult) -> Option<&WifiChannel> {
    e.obtained.as_ref().or(e.asked.as_ref())
}

/// The word a mismatch is flagged with.
pub const MISMATCH: &str = "MISMATCH";

/// The mode cell: the channel with its frequencies; `asked … → got …  MISMATCH` when the
/// radio obtained another; `the AP's: …` for a client of the user's AP (nothing asked).
pub fn mode_cell(e: &WifiEntryResult) -> String {
    match (&e.asked, &e.obtained) {
        (Some(a), Some(o)) if channel_mismatch(e) => format!(
            "asked {} → got {} {MISMATCH}",
            channel_name(a),
            channel_label(o)
        ),
        (Some(_), Some(o)) => channel_label(o),
        (None, Some(o)) => format!("the AP's: {}", channel_label(o)),
        (Some(a), None) if e.skipped.is_some() => format!("asked {}", channel_label(a)),
        (Some(a), None) => format!("asked {} → nothing obtained", channel_name(a)),
        (None, None) => "the AP's channel (not read)".into(),
    }
}

/// `open`, `wpa2-psk (handshake offloaded to the radio's firmware)`.
pub fn security_cell(e: &WifiEntryResult) -> String {
    match &e.security_note {
        Some(n) if !n.is_empty() => format!("{} ({n})", e.security),
        _ => e.security.clone(),
    }
}

/// `board as AP` / `board as client`.
pub fn role_label(role: &str) -> &str {
    match role {
        "ap" => "board as AP",
        "client" => "board as client of your AP",
        other => other,
    }
}

/// What a WiFi link is, in a few words: `WiFi 2.4 GHz ch 1 20 MHz, board as AP`.
pub fn entry_description(e: &WifiEntryResult) -> String {
    match measured_channel(e) {
        Some(c) => format!("WiFi {}, {}", channel_name(c), role_label(&e.role)),
        None => format!("WiFi, {}", role_label(&e.role)),
    }
}

fn dotted(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

/// The facts printed above a WiFi link's table: SSID (or its hash), BSSID, transmit
/// power, how long joining and the lease took, the addresses and how the peer was found.
pub fn entry_facts_line(e: &WifiEntryResult) -> String {
    let mut parts = vec![match &e.ssid {
        Some(s) => format!("SSID {s}"),
        None => format!("SSID hash {}", e.ssid_hash),
    }];
    if let Some(b) = &e.bssid {
        parts.push(format!("BSSID {b}"));
    }
    if let Some(p) = e.txpower_mbm {
        parts.push(format!("tx power {:.2} dBm", f64::from(p) / 100.0));
    }
    if !e.channel_flags.is_empty() {
        parts.push(format!("channel flags {}", e.channel_flags.join(" ")));
    }
    let joined = if e.role == "ap" {
        "a station joined"
    } else {
        "associated"
    };
    if let Some(ns) = e.connect_ns {
        parts.push(format!("{joined} in {}", duration_label_ns(ns)));
    }
    if let Some(ns) = e.lease_ns {
        parts.push(format!("lease in {}", duration_label_ns(ns)));
    }
    if let Some(b) = e.board_address {
        let mut s = format!("board {}", dotted(b));
        if let Some(p) = e.peer_address {
            s.push_str(&format!(", peer {}", dotted(p)));
            if let Some(by) = &e.peer_found_by {
                s.push_str(&format!(" ({by})"));
            }
        }
        parts.push(s);
    }
    parts.join("; ")
}

#[cfg(test)]
pub(crate) mod tests;
