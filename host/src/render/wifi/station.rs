//! What the board saw of the link in one WiFi entry, as the table's cells say it: the
//! peer station (`NL80211_CMD_GET_STATION` right before and right after the tests: PHY
//! rates in 100 kbit/s, signal in dBm, transmit retries and failures), power save, and
//! the other BSSs the scan before the tests saw on the entry's channel.

use benchboot_results::counters::NetDirection;
use benchboot_results::wifi::{Bitrate, Neighbour, StationInfo, WifiEntryResult};

use super::measured_channel;
use crate::units::grouped;

/// A PHY rate as `72.2 Mbit/s HT MCS 7, NSS 1, short GI, 20 MHz`: the parts the driver
/// gave (a legacy rate has no MCS, streams or guard interval).
pub fn bitrate_label(b: &Bitrate) -> String {
    let mut parts = vec![match b.mbit() {
        Some(m) => format!("{m:.1} Mbit/s"),
        None => "rate not given".into(),
    }];
    let mut mode = if b.kind == "legacy" {
        "legacy".to_owned()
    } else {
        b.kind.to_uppercase()
    };
    if let Some(m) = b.mcs {
        mode.push_str(&format!(" MCS {m}"));
    }
    if !mode.is_empty() {
        parts.push(mode);
    }
    let mut rest = Vec::new();
    if let Some(n) = b.nss {
        rest.push(format!("NSS {n}"));
    }
    if b.kind != "legacy" && !b.kind.is_empty() {
        rest.push(if b.short_gi { "short GI" } else { "long GI" }.to_owned());
    }
    if let Some(w) = b.width_mhz {
        rest.push(format!("{w} MHz"));
    }
    let mut s = parts.join(" ");
    if !rest.is_empty() {
        s.push_str(&format!(", {}", rest.join(", ")));
    }
    s
}

/// The station as the report reads it: right after the tests (the rate adapted to
/// the traffic), else right before.
pub fn station(e: &WifiEntryResult) -> Option<&StationInfo> {
    e.station_after.as_ref().or(e.station_before.as_ref())
}

/// The PHY rate the board used in `direction`: its transmit rate to the peer station
/// (board → host) or its receive rate from it (host → board); both without a direction.
pub fn phy_cell(e: &WifiEntryResult, direction: Option<NetDirection>) -> String {
    let Some(s) = station(e) else {
        return "—".into();
    };
    let one = |b: &Option<Bitrate>| b.as_ref().map_or("not given".into(), bitrate_label);
    match direction {
        Some(NetDirection::BoardToHost) => format!("tx {}", one(&s.tx_bitrate)),
        Some(NetDirection::HostToBoard) => format!("rx {}", one(&s.rx_bitrate)),
        None => format!("tx {} / rx {}", one(&s.tx_bitrate), one(&s.rx_bitrate)),
    }
}

/// `-52 dBm (avg -53, chains -50/-55)`: the peer station's signal as the board heard
/// it; `—` when the driver gave none.
pub fn signal_cell(e: &WifiEntryResult) -> String {
    let Some(s) = station(e) else {
        return "—".into();
    };
    let mut extra = Vec::new();
    let head = match (s.signal_dbm, s.signal_avg_dbm) {
        (Some(v), avg) => {
            if let Some(a) = avg.filter(|&a| a != v) {
                extra.push(format!("avg {a}"));
            }
            format!("{v} dBm")
        }
        (None, Some(a)) => format!("avg {a} dBm"),
        (None, None) => return "not given".into(),
    };
    if !s.chain_signal_dbm.is_empty() {
        let chains: Vec<String> = s.chain_signal_dbm.iter().map(i8::to_string).collect();
        extra.push(format!("chains {}", chains.join("/")));
    }
    if extra.is_empty() {
        head
    } else {
        format!("{head} ({})", extra.join(", "))
    }
}

/// Power save on the board's interface, read right before the tests: `off`, `ON` (it
/// must be off: the radio sleeps between beacons and the figures suffer), `not read`.
pub fn power_save_cell(e: &WifiEntryResult) -> String {
    match e.power_save {
        Some(false) => "off".into(),
        Some(true) => "ON (figures suffer)".into(),
        None => "not read".into(),
    }
}

/// Transmit retries and failures of the board towards the peer station.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retries {
    /// Retries; `None` when the driver gives none.
    pub retries: Option<u32>,
    /// Frames given up after the last retry; `None` when not given.
    pub failed: Option<u32>,
    /// Frames sent over the same span, when given.
    pub packets: Option<u32>,
    /// True: counted from before to after the tests; false: since the association
    /// (only the counters after the tests were read).
    pub during_tests: bool,
}

/// Whether the driver listed a station field as not given (`absent`: `tx_retries`,
/// `tx_failed`, ...; matched by the words `retr` and `fail`).
fn absent(e: &WifiEntryResult, word: &str) -> bool {
    e.absent.iter().any(|a| a.contains(word))
}

/// The entry's retries and failures, before → after the tests where both were read.
pub fn retries(e: &WifiEntryResult) -> Retries {
    let after = e.station_after.as_ref();
    let before = e.station_before.as_ref();
    let delta = |f: fn(&StationInfo) -> Option<u32>| -> (Option<u32>, bool) {
        match (before.and_then(f), after.and_then(f)) {
            (Some(b), Some(a)) => (Some(a.saturating_sub(b)), true),
            (None, Some(a)) => (Some(a), false),
            (Some(b), None) => (Some(b), false),
            (None, None) => (None, false),
        }
    };
    let (retries, r_during) = delta(|s| s.tx_retries);
    let (failed, f_during) = delta(|s| s.tx_failed);
    let (packets, _) = delta(|s| s.tx_packets);
    Retries {
        retries: retries.filter(|_| !absent(e, "retr")),
        failed: failed.filter(|_| !absent(e, "fail")),
        packets,
        during_tests: r_during || f_during,
    }
}

/// What the retries cell says when the driver does not count them.
pub const NOT_GIVEN: &str = "not given by the driver";

/// `37 retries, 0 failed of 41,230 frames`; [`NOT_GIVEN`] for a count the driver does
/// not give (`absent`); `(since association)` when only the counters after the tests
/// were read.
pub fn retries_cell(e: &WifiEntryResult) -> String {
    if station(e).is_none() {
        return "—".into();
    }
    let r = retries(e);
    let count = |v: Option<u32>, what: &str| match v {
        Some(v) => format!("{} {what}", grouped(u64::from(v))),
        None => format!("{what} {NOT_GIVEN}"),
    };
    if r.retries.is_none() && r.failed.is_none() {
        return NOT_GIVEN.into();
    }
    let mut s = format!(
        "{}, {}",
        count(r.retries, "retries"),
        count(r.failed, "failed")
    );
    if let Some(p) = r.packets {
        s.push_str(&format!(" of {} frames", grouped(u64::from(p))));
    }
    if !r.during_tests {
        s.push_str(" (since association)");
    }
    s
}

/// The other BSSs whose primary 20 MHz channel overlaps any part of the entry's
/// channel (`|freq - centre| < (width + 20) / 2`, MHz), strongest first.
pub fn on_channel(e: &WifiEntryResult) -> Vec<&Neighbour> {
    let Some(c) = measured_channel(e) else {
        return Vec::new();
    };
    let mut v: Vec<&Neighbour> = e
        .neighbours
        .iter()
        .filter(|b| !b.ours)
        .filter(|b| {
            (i64::from(b.freq_mhz) - i64::from(c.center1_mhz)).unsigned_abs()
                < u64::from(c.width_mhz + 20) / 2
        })
        .collect();
    v.sort_by_key(|b| std::cmp::Reverse(b.signal_dbm.unwrap_or(i32::MIN)));
    v
}

/// `2 (strongest -61 dBm), 5 on the band`; `none, 3 on the band`.
pub fn neighbours_cell(e: &WifiEntryResult) -> String {
    let on = on_channel(e);
    let band = e.neighbours.iter().filter(|b| !b.ours).count();
    let here = match on.first() {
        None => "none".to_owned(),
        Some(b) => match b.signal_dbm {
            Some(s) => format!("{} (strongest {s} dBm)", on.len()),
            None => on.len().to_string(),
        },
    };
    format!("{here}, {band} on the band")
}
