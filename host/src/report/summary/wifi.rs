//! The WiFi section as data (`--format json`, `network.wifi`): the radio and the
//! regulatory domain as the results give them, and per entry what was asked and
//! obtained, the station before and after, and per direction the spread of the
//! single-stream TCP intervals in MiB/s (2^20 B/s) and Mbit/s (10^6 bit/s), as the
//! report's WiFi table prints them ([`crate::render::wifi`]).

use benchboot_results::counters::NetDirection;
use benchboot_results::network::NetworkResults;
use benchboot_results::wifi::{
    Bitrate, RadioFacts, Regulatory, StationInfo, WifiChannel, WifiCheck, WifiEntryResult,
};
use serde::{Deserialize, Serialize};

use super::Spread;
use crate::render::wifi::blocks::EMULATED_WIFI;
use crate::render::wifi::{
    channel_mismatch, has_wifi, mode_cell, on_channel, phy_cell, regulatory_mismatch, retries,
    station, wifi_rows,
};

/// Everything WiFi in a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WifiSummary {
    /// Set for a QEMU run: hwsim radios, not hardware.
    pub notice: Option<String>,
    pub radio: Option<RadioFacts>,
    pub regulatory: Option<Regulatory>,
    /// True when the kernel reports another domain than the plan asked for.
    pub regulatory_mismatch: bool,
    /// One per plan entry, in plan order.
    pub entries: Vec<WifiEntryCell>,
    /// QEMU's checks (`ap-beacons`, `ibss`).
    pub checks: Vec<WifiCheck>,
}

/// One plan entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WifiEntryCell {
    /// The link its runs carry (`wifi-ch1-20`).
    pub link: String,
    /// `ap` or `client`.
    pub role: String,
    pub security: String,
    pub security_note: Option<String>,
    pub asked: Option<WifiChannel>,
    pub obtained: Option<WifiChannel>,
    /// The radio obtained another band, channel, width or centre than asked.
    pub channel_mismatch: bool,
    /// The mode as the report's table prints it.
    pub mode_text: String,
    /// Why the entry did not run.
    pub skipped: Option<String>,
    /// Power save, read right before the tests (it must be off).
    pub power_save: Option<bool>,
    /// The peer station right before and right after the tests.
    pub station_before: Option<StationInfo>,
    pub station_after: Option<StationInfo>,
    /// Signal of the peer station as the board heard it, dBm (after the tests, else
    /// before).
    pub signal_dbm: Option<i8>,
    /// The board's transmit retries and failures, from before to after the tests
    /// (`retries_during_tests: false`: since the association); `None`: not given by
    /// the driver.
    pub tx_retries: Option<u32>,
    pub tx_failed: Option<u32>,
    pub retries_during_tests: bool,
    /// Station fields the driver did not give.
    pub absent: Vec<String>,
    /// Other BSSs overlapping the entry's channel, and on its band.
    pub neighbours_on_channel: usize,
    pub neighbours_on_band: usize,
    /// One per direction with a single-stream TCP run, board → host first.
    pub directions: Vec<WifiDirectionCell>,
}

/// One direction of one entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WifiDirectionCell {
    pub direction: NetDirection,
    /// Per interval of the single-stream TCP run(s), after the warm-up: MiB/s (2^20
    /// B/s) and Mbit/s (10^6 bit/s); `None` when the runs hold no interval.
    pub mib_per_s: Option<Spread>,
    pub mbit_per_s: Option<Spread>,
    /// The median interval length and the warm-up left out, seconds.
    pub interval_s: Option<f64>,
    pub omit_s: Option<f64>,
    /// The PHY rate the board used this way: its transmit rate (board → host) or its
    /// receive rate (host → board), after the tests.
    pub phy: Option<Bitrate>,
    pub phy_text: String,
}

fn spread(s: benchboot_results::Summary) -> Spread {
    Spread {
        n: s.count,
        median: s.median,
        min: s.min,
        max: s.max,
    }
}

fn entry_cell(n: &NetworkResults, e: &WifiEntryResult) -> WifiEntryCell {
    let r = retries(e);
    let directions = wifi_rows(n)
        .into_iter()
        .filter(|row| std::ptr::eq(row.entry, e))
        .filter_map(|row| {
            let d = row.direction?;
            let phy = station(e).and_then(|s| match d {
                NetDirection::BoardToHost => s.tx_bitrate.clone(),
                NetDirection::HostToBoard => s.rx_bitrate.clone(),
            });
            Some(WifiDirectionCell {
                direction: d,
                mib_per_s: row.spread.map(|s| spread(s.mib)),
                mbit_per_s: row.spread.map(|s| spread(s.mbit)),
                interval_s: row.spread.map(|s| s.interval_ns as f64 / 1e9),
                omit_s: row.spread.map(|s| s.omit_ns as f64 / 1e9),
                phy,
                phy_text: phy_cell(e, Some(d)),
            })
        })
        .collect();
    WifiEntryCell {
        link: e.link.clone(),
        role: e.role.clone(),
        security: e.security.clone(),
        security_note: e.security_note.clone(),
        asked: e.asked,
        obtained: e.obtained,
        channel_mismatch: channel_mismatch(e),
        mode_text: mode_cell(e),
        skipped: e.skipped.clone(),
        power_save: e.power_save,
        station_before: e.station_before.clone(),
        station_after: e.station_after.clone(),
        signal_dbm: station(e).and_then(|s| s.signal_dbm.or(s.signal_avg_dbm)),
        tx_retries: r.retries,
        tx_failed: r.failed,
        retries_during_tests: r.during_tests,
        absent: e.absent.clone(),
        neighbours_on_channel: on_channel(e).len(),
        neighbours_on_band: e.neighbours.iter().filter(|b| !b.ours).count(),
        directions,
    }
}

/// The WiFi section of `n`; `None` when the run has nothing WiFi (the JSON then has no
/// `wifi` key, as before schema 1.8).
pub fn wifi_summary(n: &NetworkResults, emulated: bool) -> Option<WifiSummary> {
    let w = &n.wifi;
    has_wifi(w).then(|| WifiSummary {
        notice: emulated.then(|| EMULATED_WIFI.to_owned()),
        radio: w.radio.clone(),
        regulatory: w.regulatory.clone(),
        regulatory_mismatch: w.regulatory.as_ref().is_some_and(regulatory_mismatch),
        entries: w.entries.iter().map(|e| entry_cell(n, e)).collect(),
        checks: w.checks.clone(),
    })
}
