//! WiFi results (schema 1.8): the radio, the regulatory domain, and per plan entry what
//! was asked, what was obtained, the station's view of the link and the neighbours on
//! the channel. The throughput, round-trip, HTTP and UDP runs over an entry sit with
//! the other links' in [`crate::network::NetworkResults`], carrying the entry's `link`
//! name (`wifi-ch36-80`).
//!
//! Units as nl80211 gives them: frequencies MHz, signal dBm, transmit power mBm
//! (1/100 dBm), bitrates in 100 kbit/s (`bitrate_100kbps`: 650 = 65.0 Mbit/s).

use serde::{Deserialize, Serialize};

use crate::counters::CounterSpan;

/// Everything WiFi in one run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WifiResults {
    /// The board's radio as the kernel and its firmware describe it.
    pub radio: Option<RadioFacts>,
    /// The regulatory domain after the plan's country was set.
    pub regulatory: Option<Regulatory>,
    /// One per plan entry, in plan order (skipped ones too, with the reason).
    pub entries: Vec<WifiEntryResult>,
    /// QEMU's extra checks (`ap-beacons`, `ibss`).
    #[serde(default)]
    pub checks: Vec<WifiCheck>,
}

/// The radio.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RadioFacts {
    /// The board file's name for the chip (`CYW43438`).
    pub chip: Option<String>,
    /// The driver bound to the interface (`brcmfmac`, `mac80211_hwsim`).
    pub driver: Option<String>,
    /// ETHTOOL_GDRVINFO's firmware version (brcmfmac: the firmware's version string).
    pub firmware_version: Option<String>,
    /// The chip revision as the driver logged it (brcmfmac: `BCM43430/1`), when known.
    pub chip_revision: Option<String>,
    /// The firmware, NVRAM and CLM files the image carries for it.
    pub files: Vec<String>,
    /// `phy0`.
    pub phy: String,
    pub interface: String,
    pub mac: String,
    /// Bands the radio reports, `2.4` / `5`.
    pub bands: Vec<String>,
    /// nl80211 extended features of note, by name (`4way-handshake-sta-psk`, ...).
    pub ext_features: Vec<String>,
    /// Interface types the radio supports (`station`, `ap`, `adhoc`, `monitor`, ...).
    pub iftypes: Vec<String>,
}

/// The regulatory domain.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Regulatory {
    /// What the plan asked for.
    pub asked: String,
    /// What the kernel reports after asking (`DE`, `00`).
    pub alpha2: String,
    /// `FCC`, `ETSI`, `JP`, or unset.
    pub dfs_region: Option<String>,
    /// The rules, one line each: `2400-2483 MHz @ 40 MHz, 20.00 dBm`, flags appended.
    pub rules: Vec<String>,
}

/// A channel: asked for or obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WifiChannel {
    /// `2.4` / `5` as a string in JSON.
    pub band: BandName,
    pub channel: u8,
    /// Primary channel frequency, MHz.
    pub freq_mhz: u32,
    pub width_mhz: u32,
    /// Centre frequency of the whole channel, MHz.
    pub center1_mhz: u32,
    /// 20 MHz without HT (802.11a/g): only in what a radio reports.
    #[serde(default)]
    pub no_ht: bool,
}

/// A band's name in results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BandName {
    #[serde(rename = "2.4")]
    Ghz2,
    #[serde(rename = "5")]
    Ghz5,
}

impl BandName {
    /// `2.4` / `5`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ghz2 => "2.4",
            Self::Ghz5 => "5",
        }
    }
}

/// One plan entry as it ran (or why it did not).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WifiEntryResult {
    /// The link name its runs carry.
    pub link: String,
    /// `ap` or `client`.
    pub role: String,
    /// `open` or `wpa2-psk`; with how the handshake was done in `security_note`.
    pub security: String,
    pub security_note: Option<String>,
    /// The board's own SSID (AP role, QEMU stand-in); a user's AP is only hashed.
    pub ssid: Option<String>,
    /// First 16 hex digits of the SHA-256 of the SSID.
    pub ssid_hash: String,
    pub asked: Option<WifiChannel>,
    pub obtained: Option<WifiChannel>,
    /// The primary channel's flags in the regulatory domain (`no-ir`, `radar`,
    /// `no-ht40+`, `no-80mhz`, ...).
    pub channel_flags: Vec<String>,
    /// The BSSID joined (client) or the board's (AP).
    pub bssid: Option<String>,
    /// Power save, read right before the tests (it must be off).
    pub power_save: Option<bool>,
    /// Transmit power, mBm.
    pub txpower_mbm: Option<u32>,
    /// The station (the AP, seen from the board as client; the host, seen from the
    /// board as AP) right before and right after the tests.
    pub station_before: Option<StationInfo>,
    pub station_after: Option<StationInfo>,
    /// Station fields the driver did not give (brcmfmac: no tx retries, legacy bitrate
    /// only).
    pub absent: Vec<String>,
    /// The other BSSs a scan saw on this entry's band before the tests.
    pub neighbours: Vec<Neighbour>,
    /// From asking (CONNECT / START_AP) to associated (client) or a station joined (AP), ns.
    pub connect_ns: Option<u64>,
    /// From associated to the DHCP lease acknowledged, ns.
    pub lease_ns: Option<u64>,
    pub board_address: Option<[u8; 4]>,
    pub peer_address: Option<[u8; 4]>,
    /// `lease`, `plan`, `announce`.
    pub peer_found_by: Option<String>,
    /// Why this entry did not run (the radio or the regulatory domain forbids it, no
    /// station joined, no association): the next entry runs.
    pub skipped: Option<String>,
    /// Interface counters around each test.
    pub counters: Vec<CounterSpan>,
}

/// What `NL80211_CMD_GET_STATION` said about the peer station; a field the driver did
/// not give is `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StationInfo {
    pub signal_dbm: Option<i8>,
    pub signal_avg_dbm: Option<i8>,
    /// Per antenna chain, dBm.
    #[serde(default)]
    pub chain_signal_dbm: Vec<i8>,
    pub tx_bitrate: Option<Bitrate>,
    pub rx_bitrate: Option<Bitrate>,
    pub tx_retries: Option<u32>,
    pub tx_failed: Option<u32>,
    pub tx_packets: Option<u32>,
    pub rx_packets: Option<u32>,
    pub tx_bytes: Option<u64>,
    pub rx_bytes: Option<u64>,
    pub beacon_loss: Option<u32>,
    /// The driver's own throughput estimate, kbit/s.
    pub expected_throughput_kbps: Option<u32>,
}

/// A PHY rate (`NL80211_RATE_INFO_*`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bitrate {
    /// 100 kbit/s units (650 = 65.0 Mbit/s).
    pub bitrate_100kbps: Option<u32>,
    /// HT MCS index (0..=31), or VHT / HE MCS with `nss`.
    pub mcs: Option<u8>,
    /// `ht`, `vht`, `he` or `legacy`.
    pub kind: String,
    pub nss: Option<u8>,
    pub width_mhz: Option<u32>,
    pub short_gi: bool,
}

impl Bitrate {
    /// Mbit/s, when given.
    pub fn mbit(&self) -> Option<f64> {
        self.bitrate_100kbps.map(|b| f64::from(b) / 10.0)
    }
}

/// A BSS seen by the scan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Neighbour {
    pub freq_mhz: u32,
    /// dBm (nl80211's mBm / 100).
    pub signal_dbm: Option<i32>,
    /// The width it operates at (from its HT / VHT operation elements), MHz.
    pub width_mhz: u32,
    pub ssid_hash: String,
    /// This entry's own AP.
    pub ours: bool,
}

/// A QEMU check of a path hwsim can only partly model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WifiCheck {
    /// `ap-beacons`: the board's START_AP beacons seen by the other radio's scan;
    /// `ibss`: both radios in one IBSS, TCP across.
    pub name: String,
    pub passed: bool,
    pub detail: String,
}
