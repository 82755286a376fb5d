//! The nl80211 commands benchboot's PID 1 uses: requests built as bytes, replies parsed into
//! typed structs. The socket is not here (`firmware/src/wifi_socket.rs`).
//!
//! Sources:
//! - every number: `include/uapi/linux/nl80211.h` of the pinned 6.1 kernel (each constant
//!   below was checked by compiling against linux-libc-dev 6.1.187); the constants are the
//!   header's names without the `NL80211_` prefix (`NL80211_ATTR_IFINDEX` = [`ATTR_IFINDEX`]);
//! - the cipher and AKM suite selectors: `include/linux/ieee80211.h` (IEEE 802.11 RSNE
//!   suite selectors, OUI 00-0F-AC: cipher 4 = CCMP-128, AKM 2 = PSK);
//! - what a command requires and what a reply holds: `net/wireless/nl80211.c` of 6.1
//!   (`nl80211_connect`, `nl80211_start_ap`, `nl80211_crypto_settings`, `nl80211_send_wiphy`,
//!   `nl80211_send_iface`, `nl80211_send_bss`, `nl80211_send_station`,
//!   `nl80211_put_regdom`), named at each item.
//!
//! Conventions:
//! - a builder takes the family id ([`crate::netlink::parse_family`] of `"nl80211"`) and a
//!   sequence number and returns one whole message, genl version 0 (what iw and
//!   wpa_supplicant send; the kernel ignores it);
//! - `*_dump` builders send `NLM_F_REQUEST | NLM_F_DUMP`: answered by data messages and
//!   `NLMSG_DONE`; every other builder sends `NLM_F_REQUEST | NLM_F_ACK`: answered by its
//!   data reply, if any, then an ack or an error (see [`crate::netlink`]);
//! - a parser takes the attributes of one [`crate::netlink::Reply::Data`] and fails only on
//!   malformed bytes or a missing attribute the kernel always sends;
//! - units: frequencies in MHz (regulatory rules: kHz); power in mBm (1/100 dBm); station
//!   signals in dBm; bitrates in 100 kbit/s; times as named (`_ms`, `_s`, `_tu` = 1024 µs).

use crate::channel::{Band, Chandef, Width};
use crate::netlink::{Attrs, MsgBuilder, NetlinkError, NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST};

/// The generic netlink family name.
pub const GENL_NAME: &str = "nl80211";
/// The genl header version the builders send.
pub const GENL_VERSION: u8 = 0;

// enum nl80211_commands
pub const CMD_GET_WIPHY: u8 = 1;
/// Reply command of [`CMD_GET_WIPHY`].
pub const CMD_NEW_WIPHY: u8 = 3;
pub const CMD_GET_INTERFACE: u8 = 5;
pub const CMD_SET_INTERFACE: u8 = 6;
/// Creates an interface; also the reply command of [`CMD_GET_INTERFACE`].
pub const CMD_NEW_INTERFACE: u8 = 7;
pub const CMD_DEL_INTERFACE: u8 = 8;
pub const CMD_START_AP: u8 = 15;
pub const CMD_STOP_AP: u8 = 16;
pub const CMD_GET_STATION: u8 = 17;
/// Reply command of [`CMD_GET_STATION`].
pub const CMD_NEW_STATION: u8 = 19;
pub const CMD_REQ_SET_REG: u8 = 27;
pub const CMD_GET_REG: u8 = 31;
pub const CMD_GET_SCAN: u8 = 32;
pub const CMD_TRIGGER_SCAN: u8 = 33;
/// Reply command of [`CMD_GET_SCAN`]; also the "scan finished" event of the `scan` group.
pub const CMD_NEW_SCAN_RESULTS: u8 = 34;
pub const CMD_SCAN_ABORTED: u8 = 35;
pub const CMD_JOIN_IBSS: u8 = 43;
pub const CMD_LEAVE_IBSS: u8 = 44;
pub const CMD_CONNECT: u8 = 46;
pub const CMD_DISCONNECT: u8 = 48;
pub const CMD_SET_WIPHY_NETNS: u8 = 49;
pub const CMD_SET_POWER_SAVE: u8 = 61;
pub const CMD_GET_POWER_SAVE: u8 = 62;

// enum nl80211_attrs
/// Wiphy index, u32.
pub const ATTR_WIPHY: u16 = 1;
/// Wiphy name (`phy0`), string.
pub const ATTR_WIPHY_NAME: u16 = 2;
/// Network interface index, u32.
pub const ATTR_IFINDEX: u16 = 3;
/// Network interface name, string.
pub const ATTR_IFNAME: u16 = 4;
/// Interface type, u32 (`enum nl80211_iftype`, [`IfType`]).
pub const ATTR_IFTYPE: u16 = 5;
/// MAC address, 6 bytes (the interface's, or the station's, or the BSSID to connect to).
pub const ATTR_MAC: u16 = 6;
/// Flag: an IBSS stays on its channel (no merge onto another).
pub const ATTR_FREQ_FIXED: u16 = 60;
/// Beacon interval, u32, TU.
pub const ATTR_BEACON_INTERVAL: u16 = 12;
/// DTIM period, u32, beacons.
pub const ATTR_DTIM_PERIOD: u16 = 13;
/// Beacon frame up to the TIM element, bytes.
pub const ATTR_BEACON_HEAD: u16 = 14;
/// Beacon frame after the TIM element, bytes.
pub const ATTR_BEACON_TAIL: u16 = 15;
/// Station statistics, nested `STA_INFO_*`.
pub const ATTR_STA_INFO: u16 = 21;
/// Bands, nested by band number (`BAND_*`), each nested `BAND_ATTR_*`.
pub const ATTR_WIPHY_BANDS: u16 = 22;
/// Supported interface types, nested flags whose types are `IFTYPE_*`.
pub const ATTR_SUPPORTED_IFTYPES: u16 = 32;
/// ISO 3166 country (`"DE"`, `"00"` = world), string.
pub const ATTR_REG_ALPHA2: u16 = 33;
/// Regulatory rules, nested by index, each nested `ATTR_REG_RULE_FLAGS` etc.
pub const ATTR_REG_RULES: u16 = 34;
/// Channel, u32, MHz (the control channel).
pub const ATTR_WIPHY_FREQ: u16 = 38;
/// Legacy channel type, u32 (`enum nl80211_channel_type`); superseded by
/// [`ATTR_CHANNEL_WIDTH`].
pub const ATTR_WIPHY_CHANNEL_TYPE: u16 = 39;
/// Information elements to add to (re)association requests, bytes.
pub const ATTR_IE: u16 = 42;
/// Frequencies to scan, nested u32 MHz.
pub const ATTR_SCAN_FREQUENCIES: u16 = 44;
/// SSIDs to probe for, nested bytes.
pub const ATTR_SCAN_SSIDS: u16 = 45;
/// Generation counter, u32.
pub const ATTR_GENERATION: u16 = 46;
/// One scan result, nested `BSS_*`.
pub const ATTR_BSS: u16 = 47;
/// SSID, 1..=32 bytes.
pub const ATTR_SSID: u16 = 52;
/// Authentication type, u32 (`AUTHTYPE_*`).
pub const ATTR_AUTH_TYPE: u16 = 53;
/// IEEE 802.11 reason code, u16.
pub const ATTR_REASON_CODE: u16 = 54;
/// Supported cipher suites, array of u32 suite selectors.
pub const ATTR_CIPHER_SUITES: u16 = 57;
/// Flag: the network uses encryption.
pub const ATTR_PRIVACY: u16 = 70;
/// Pairwise ciphers, array of u32 suite selectors.
pub const ATTR_CIPHER_SUITES_PAIRWISE: u16 = 73;
/// Group cipher, u32 suite selector.
pub const ATTR_CIPHER_SUITE_GROUP: u16 = 74;
/// WPA versions, u32 bitmap (`WPA_VERSION_*`).
pub const ATTR_WPA_VERSIONS: u16 = 75;
/// AKM suites, array of u32 suite selectors.
pub const ATTR_AKM_SUITES: u16 = 76;
/// Process id whose network namespace to move to, u32.
pub const ATTR_PID: u16 = 82;
/// Power save state, u32 (`PS_*`).
pub const ATTR_PS_STATE: u16 = 93;
/// Transmit power, u32, mBm.
pub const ATTR_WIPHY_TX_POWER_LEVEL: u16 = 98;
/// Hidden SSID mode, u32 (`HIDDEN_SSID_*`).
pub const ATTR_HIDDEN_SSID: u16 = 126;
/// Feature flags, u32 (`FEATURE_*`).
pub const ATTR_FEATURE_FLAGS: u16 = 143;
/// DFS region, u8 (`DFS_*`).
pub const ATTR_DFS_REGION: u16 = 146;
/// Station inactivity timeout, u16, s.
pub const ATTR_INACTIVITY_TIMEOUT: u16 = 150;
/// Wireless device id, u64.
pub const ATTR_WDEV: u16 = 153;
/// Channel width, u32 (`CHAN_WIDTH_*`).
pub const ATTR_CHANNEL_WIDTH: u16 = 159;
/// Centre of the whole channel, u32, MHz.
pub const ATTR_CENTER_FREQ1: u16 = 160;
/// Centre of the second segment (80+80 MHz), u32, MHz.
pub const ATTR_CENTER_FREQ2: u16 = 161;
/// Flag: dump wiphys the split way ([`get_wiphy_dump`]).
pub const ATTR_SPLIT_WIPHY_DUMP: u16 = 174;
/// Flag: the regulatory domain is the wiphy's own.
pub const ATTR_WIPHY_SELF_MANAGED_REG: u16 = 216;
/// Extended features, bitmap: bit `n` of byte `n / 8` is `EXT_FEATURE_*` number `n`.
pub const ATTR_EXT_FEATURES: u16 = 217;
/// Padding before 64-bit values where the architecture needs it.
pub const ATTR_PAD: u16 = 229;
/// Pairwise master key, 32 bytes.
pub const ATTR_PMK: u16 = 254;

// enum nl80211_iftype (numbers of [`IfType`])
pub const IFTYPE_UNSPECIFIED: u32 = 0;
pub const IFTYPE_ADHOC: u32 = 1;
pub const IFTYPE_STATION: u32 = 2;
pub const IFTYPE_AP: u32 = 3;
pub const IFTYPE_AP_VLAN: u32 = 4;
pub const IFTYPE_WDS: u32 = 5;
pub const IFTYPE_MONITOR: u32 = 6;
pub const IFTYPE_MESH_POINT: u32 = 7;
pub const IFTYPE_P2P_CLIENT: u32 = 8;
pub const IFTYPE_P2P_GO: u32 = 9;
pub const IFTYPE_P2P_DEVICE: u32 = 10;
pub const IFTYPE_OCB: u32 = 11;
pub const IFTYPE_NAN: u32 = 12;

// enum nl80211_chan_width
pub const CHAN_WIDTH_20_NOHT: u32 = 0;
pub const CHAN_WIDTH_20: u32 = 1;
pub const CHAN_WIDTH_40: u32 = 2;
pub const CHAN_WIDTH_80: u32 = 3;
pub const CHAN_WIDTH_80P80: u32 = 4;
pub const CHAN_WIDTH_160: u32 = 5;
pub const CHAN_WIDTH_5: u32 = 6;
pub const CHAN_WIDTH_10: u32 = 7;
pub const CHAN_WIDTH_320: u32 = 13;

// enum nl80211_band (the attribute types inside ATTR_WIPHY_BANDS)
pub const BAND_2GHZ: u16 = 0;
pub const BAND_5GHZ: u16 = 1;
pub const BAND_60GHZ: u16 = 2;
pub const BAND_6GHZ: u16 = 3;

// enum nl80211_band_attr
/// Channels, nested by index, each nested `FREQUENCY_ATTR_*`.
pub const BAND_ATTR_FREQS: u16 = 1;
pub const BAND_ATTR_RATES: u16 = 2;
pub const BAND_ATTR_HT_MCS_SET: u16 = 3;
/// HT capabilities info field, u16 (present when the band has HT).
pub const BAND_ATTR_HT_CAPA: u16 = 4;
/// VHT capabilities info field, u32 (present when the band has VHT).
pub const BAND_ATTR_VHT_CAPA: u16 = 8;

// enum nl80211_frequency_attr
/// Centre frequency, u32, MHz.
pub const FREQUENCY_ATTR_FREQ: u16 = 1;
pub const FREQUENCY_ATTR_DISABLED: u16 = 2;
/// Flag: no initiating radiation (no beaconing, no active scan) here.
pub const FREQUENCY_ATTR_NO_IR: u16 = 3;
/// Flag: radar detection (DFS) required.
pub const FREQUENCY_ATTR_RADAR: u16 = 5;
/// Maximum transmit power, u32, mBm.
pub const FREQUENCY_ATTR_MAX_TX_POWER: u16 = 6;
pub const FREQUENCY_ATTR_NO_HT40_MINUS: u16 = 9;
pub const FREQUENCY_ATTR_NO_HT40_PLUS: u16 = 10;
pub const FREQUENCY_ATTR_NO_80MHZ: u16 = 11;
pub const FREQUENCY_ATTR_NO_160MHZ: u16 = 12;

// enum nl80211_bss
pub const BSS_BSSID: u16 = 1;
/// u32, MHz.
pub const BSS_FREQUENCY: u16 = 2;
pub const BSS_TSF: u16 = 3;
/// u16, TU.
pub const BSS_BEACON_INTERVAL: u16 = 4;
/// IEEE 802.11 capability information, u16.
pub const BSS_CAPABILITY: u16 = 5;
/// The latest IEs (probe response or beacon), bytes.
pub const BSS_INFORMATION_ELEMENTS: u16 = 6;
/// Signal, s32, mBm.
pub const BSS_SIGNAL_MBM: u16 = 7;
pub const BSS_SIGNAL_UNSPEC: u16 = 8;
/// Our relation to this BSS, u32 (`BSS_STATUS_*`).
pub const BSS_STATUS: u16 = 9;
/// Age of the result, u32, ms.
pub const BSS_SEEN_MS_AGO: u16 = 10;
/// The beacon's IEs, bytes.
pub const BSS_BEACON_IES: u16 = 11;
pub const BSS_CHAN_WIDTH: u16 = 12;
pub const BSS_LAST_SEEN_BOOTTIME: u16 = 15;

// enum nl80211_bss_status
pub const BSS_STATUS_AUTHENTICATED: u32 = 0;
pub const BSS_STATUS_ASSOCIATED: u32 = 1;
pub const BSS_STATUS_IBSS_JOINED: u32 = 2;

// enum nl80211_sta_info
/// u32, ms.
pub const STA_INFO_INACTIVE_TIME: u16 = 1;
/// u32 (wraps; prefer [`STA_INFO_RX_BYTES64`]).
pub const STA_INFO_RX_BYTES: u16 = 2;
pub const STA_INFO_TX_BYTES: u16 = 3;
/// Signal of the last received frame, s8 (sent as u8), dBm.
pub const STA_INFO_SIGNAL: u16 = 7;
/// Nested `RATE_INFO_*`.
pub const STA_INFO_TX_BITRATE: u16 = 8;
pub const STA_INFO_RX_PACKETS: u16 = 9;
pub const STA_INFO_TX_PACKETS: u16 = 10;
pub const STA_INFO_TX_RETRIES: u16 = 11;
pub const STA_INFO_TX_FAILED: u16 = 12;
/// Average signal, s8, dBm.
pub const STA_INFO_SIGNAL_AVG: u16 = 13;
pub const STA_INFO_RX_BITRATE: u16 = 14;
/// Nested `STA_BSS_PARAM_*`.
pub const STA_INFO_BSS_PARAM: u16 = 15;
/// u32, s.
pub const STA_INFO_CONNECTED_TIME: u16 = 16;
/// `struct nl80211_sta_flag_update`, 8 bytes.
pub const STA_INFO_STA_FLAGS: u16 = 17;
pub const STA_INFO_BEACON_LOSS: u16 = 18;
/// u64.
pub const STA_INFO_RX_BYTES64: u16 = 23;
pub const STA_INFO_TX_BYTES64: u16 = 24;
/// Per-chain signal, nested s8 dBm by chain number (from 0).
pub const STA_INFO_CHAIN_SIGNAL: u16 = 25;
pub const STA_INFO_CHAIN_SIGNAL_AVG: u16 = 26;
/// u32, kbit/s.
pub const STA_INFO_EXPECTED_THROUGHPUT: u16 = 27;

// enum nl80211_rate_info
/// u16, 100 kbit/s (absent when it does not fit).
pub const RATE_INFO_BITRATE: u16 = 1;
/// HT MCS, u8.
pub const RATE_INFO_MCS: u16 = 2;
pub const RATE_INFO_40_MHZ_WIDTH: u16 = 3;
pub const RATE_INFO_SHORT_GI: u16 = 4;
/// u32, 100 kbit/s.
pub const RATE_INFO_BITRATE32: u16 = 5;
pub const RATE_INFO_VHT_MCS: u16 = 6;
pub const RATE_INFO_VHT_NSS: u16 = 7;
pub const RATE_INFO_80_MHZ_WIDTH: u16 = 8;
pub const RATE_INFO_80P80_MHZ_WIDTH: u16 = 9;
pub const RATE_INFO_160_MHZ_WIDTH: u16 = 10;
pub const RATE_INFO_10_MHZ_WIDTH: u16 = 11;
pub const RATE_INFO_5_MHZ_WIDTH: u16 = 12;
pub const RATE_INFO_HE_MCS: u16 = 13;
pub const RATE_INFO_HE_NSS: u16 = 14;
pub const RATE_INFO_320_MHZ_WIDTH: u16 = 18;

// enum nl80211_reg_rule_attr
/// u32, `RRF_*` bits.
pub const ATTR_REG_RULE_FLAGS: u16 = 1;
/// u32, kHz.
pub const ATTR_FREQ_RANGE_START: u16 = 2;
pub const ATTR_FREQ_RANGE_END: u16 = 3;
/// u32, kHz.
pub const ATTR_FREQ_RANGE_MAX_BW: u16 = 4;
/// u32, mBi.
pub const ATTR_POWER_RULE_MAX_ANT_GAIN: u16 = 5;
/// u32, mBm.
pub const ATTR_POWER_RULE_MAX_EIRP: u16 = 6;
/// u32, ms.
pub const ATTR_DFS_CAC_TIME: u16 = 7;

// enum nl80211_reg_rule_flags
pub const RRF_NO_OFDM: u32 = 1 << 0;
pub const RRF_NO_CCK: u32 = 1 << 1;
pub const RRF_NO_INDOOR: u32 = 1 << 2;
pub const RRF_NO_OUTDOOR: u32 = 1 << 3;
pub const RRF_DFS: u32 = 1 << 4;
pub const RRF_PTP_ONLY: u32 = 1 << 5;
pub const RRF_PTMP_ONLY: u32 = 1 << 6;
pub const RRF_NO_IR: u32 = 1 << 7;
pub const RRF_AUTO_BW: u32 = 1 << 11;
pub const RRF_IR_CONCURRENT: u32 = 1 << 12;
pub const RRF_NO_HT40MINUS: u32 = 1 << 13;
pub const RRF_NO_HT40PLUS: u32 = 1 << 14;
pub const RRF_NO_80MHZ: u32 = 1 << 15;
pub const RRF_NO_160MHZ: u32 = 1 << 16;
pub const RRF_NO_HE: u32 = 1 << 17;
pub const RRF_NO_320MHZ: u32 = 1 << 18;

// enum nl80211_dfs_regions
pub const DFS_UNSET: u8 = 0;
pub const DFS_FCC: u8 = 1;
pub const DFS_ETSI: u8 = 2;
pub const DFS_JP: u8 = 3;

// enum nl80211_auth_type
pub const AUTHTYPE_OPEN_SYSTEM: u32 = 0;

// enum nl80211_wpa_versions
pub const WPA_VERSION_1: u32 = 1 << 0;
pub const WPA_VERSION_2: u32 = 1 << 1;

// enum nl80211_hidden_ssid
pub const HIDDEN_SSID_NOT_IN_USE: u32 = 0;
pub const HIDDEN_SSID_ZERO_LEN: u32 = 1;
pub const HIDDEN_SSID_ZERO_CONTENTS: u32 = 2;

// enum nl80211_ps_state
pub const PS_DISABLED: u32 = 0;
pub const PS_ENABLED: u32 = 1;

// enum nl80211_feature_flags
/// The driver honours [`ATTR_INACTIVITY_TIMEOUT`] in AP mode.
pub const FEATURE_INACTIVITY_TIMER: u32 = 1 << 2;
/// IBSS may use HT (20/40 MHz) channels.
pub const FEATURE_HT_IBSS: u32 = 1 << 1;

// enum nl80211_ext_feature_index (bit numbers in ATTR_EXT_FEATURES)
/// IBSS may use VHT (80 MHz and wider) channels.
pub const EXT_FEATURE_VHT_IBSS: u32 = 0;
/// The driver does the WPA2-PSK 4-way handshake in station mode, given [`ATTR_PMK`] in
/// `CMD_CONNECT` (brcmfmac with firmware supplicant; not mac80211).
pub const EXT_FEATURE_4WAY_HANDSHAKE_STA_PSK: u32 = 15;
/// Likewise for 802.1X, asked by `NL80211_ATTR_WANT_1X_4WAY_HS` (not for PSK).
pub const EXT_FEATURE_4WAY_HANDSHAKE_STA_1X: u32 = 16;
/// The control port (EAPOL) can go over nl80211 instead of the netdev.
pub const EXT_FEATURE_CONTROL_PORT_OVER_NL80211: u32 = 26;
/// The driver does SAE (WPA3) in station mode.
pub const EXT_FEATURE_SAE_OFFLOAD: u32 = 38;
/// The driver does the WPA2-PSK 4-way handshake in AP mode, given [`ATTR_PMK`] in
/// `CMD_START_AP`.
pub const EXT_FEATURE_4WAY_HANDSHAKE_AP_PSK: u32 = 50;
/// The driver does SAE in AP mode.
pub const EXT_FEATURE_SAE_OFFLOAD_AP: u32 = 51;

/// Cipher suite selector CCMP-128 (00-0F-AC:4), as nl80211 carries it (a u32).
pub const WLAN_CIPHER_SUITE_CCMP: u32 = 0x000F_AC04;
/// AKM suite selector PSK (00-0F-AC:2).
pub const WLAN_AKM_SUITE_PSK: u32 = 0x000F_AC02;

/// The RSN element (ID 48, IEEE 802.11-2020 "RSNE") of a WPA2-PSK CCMP station: version 1, group
/// CCMP, one pairwise CCMP, one AKM PSK, capabilities 0. [`connect`] puts it in
/// [`ATTR_IE`] as wpa_supplicant and iwd do: cfg80211's SME sends it in the association
/// request and brcmfmac hands it to the firmware (its `wpaie`).
pub const RSN_IE_WPA2_PSK_CCMP: [u8; 22] = [
    0x30, 20, 1, 0, 0x00, 0x0f, 0xac, 4, 1, 0, 0x00, 0x0f, 0xac, 4, 1, 0, 0x00, 0x0f, 0xac, 2, 0, 0,
];

/// An interface type (`enum nl80211_iftype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IfType {
    Unspecified,
    /// IBSS (ad-hoc).
    Adhoc,
    /// A client ("managed").
    Station,
    Ap,
    ApVlan,
    Wds,
    Monitor,
    MeshPoint,
    P2pClient,
    P2pGo,
    P2pDevice,
    Ocb,
    Nan,
    /// A number this table does not know.
    Unknown(u32),
}

const IFTYPES: [(IfType, u32); 13] = [
    (IfType::Unspecified, IFTYPE_UNSPECIFIED),
    (IfType::Adhoc, IFTYPE_ADHOC),
    (IfType::Station, IFTYPE_STATION),
    (IfType::Ap, IFTYPE_AP),
    (IfType::ApVlan, IFTYPE_AP_VLAN),
    (IfType::Wds, IFTYPE_WDS),
    (IfType::Monitor, IFTYPE_MONITOR),
    (IfType::MeshPoint, IFTYPE_MESH_POINT),
    (IfType::P2pClient, IFTYPE_P2P_CLIENT),
    (IfType::P2pGo, IFTYPE_P2P_GO),
    (IfType::P2pDevice, IFTYPE_P2P_DEVICE),
    (IfType::Ocb, IFTYPE_OCB),
    (IfType::Nan, IFTYPE_NAN),
];

impl IfType {
    pub fn from_u32(v: u32) -> IfType {
        IFTYPES
            .iter()
            .find(|&&(_, n)| n == v)
            .map_or(IfType::Unknown(v), |&(t, _)| t)
    }

    pub fn to_u32(self) -> u32 {
        match self {
            IfType::Unknown(v) => v,
            t => IFTYPES
                .iter()
                .find(|&&(k, _)| k == t)
                .map_or(IFTYPE_UNSPECIFIED, |&(_, n)| n),
        }
    }
}

/// The `NL80211_CHAN_WIDTH_*` of a width.
pub fn chan_width(w: Width) -> u32 {
    match w {
        Width::NoHt20 => CHAN_WIDTH_20_NOHT,
        Width::W20 => CHAN_WIDTH_20,
        Width::W40 => CHAN_WIDTH_40,
        Width::W80 => CHAN_WIDTH_80,
        Width::W160 => CHAN_WIDTH_160,
    }
}

/// The width of an `NL80211_CHAN_WIDTH_*`; `None` for 5, 10, 80+80, 320 MHz and S1G.
pub fn width_of(v: u32) -> Option<Width> {
    match v {
        CHAN_WIDTH_20_NOHT => Some(Width::NoHt20),
        CHAN_WIDTH_20 => Some(Width::W20),
        CHAN_WIDTH_40 => Some(Width::W40),
        CHAN_WIDTH_80 => Some(Width::W80),
        CHAN_WIDTH_160 => Some(Width::W160),
        _ => None,
    }
}

fn request(family: u16, seq: u32, cmd: u8) -> MsgBuilder {
    MsgBuilder::new(family, NLM_F_REQUEST | NLM_F_ACK, seq, cmd, GENL_VERSION)
}

fn dump(family: u16, seq: u32, cmd: u8) -> MsgBuilder {
    MsgBuilder::new(family, NLM_F_REQUEST | NLM_F_DUMP, seq, cmd, GENL_VERSION)
}

fn put_chandef(b: MsgBuilder, c: &Chandef) -> MsgBuilder {
    b.u32(ATTR_WIPHY_FREQ, c.control_mhz)
        .u32(ATTR_CHANNEL_WIDTH, chan_width(c.width))
        .u32(ATTR_CENTER_FREQ1, c.center1_mhz)
}

/// WPA2-PSK with CCMP and the PMK for the driver's own 4-way handshake
/// (`nl80211_crypto_settings`).
fn put_wpa2_psk(b: MsgBuilder, pmk: &[u8; 32]) -> MsgBuilder {
    b.flag(ATTR_PRIVACY)
        .u32(ATTR_WPA_VERSIONS, WPA_VERSION_2)
        .bytes(
            ATTR_CIPHER_SUITES_PAIRWISE,
            &WLAN_CIPHER_SUITE_CCMP.to_ne_bytes(),
        )
        .u32(ATTR_CIPHER_SUITE_GROUP, WLAN_CIPHER_SUITE_CCMP)
        .bytes(ATTR_AKM_SUITES, &WLAN_AKM_SUITE_PSK.to_ne_bytes())
        .bytes(ATTR_PMK, pmk)
}

/// Every wiphy, the split way ([`ATTR_SPLIT_WIPHY_DUMP`]): the kernel
/// (`nl80211_send_wiphy`) then sends each wiphy as several [`CMD_NEW_WIPHY`] messages,
/// each with [`ATTR_WIPHY`] and its name, the bands one channel per message, and includes
/// what an unsplit dump leaves out (bands above 5 GHz, extended features). Merge the
/// replies with [`parse_wiphys`].
pub fn get_wiphy_dump(family: u16, seq: u32) -> Vec<u8> {
    dump(family, seq, CMD_GET_WIPHY)
        .flag(ATTR_SPLIT_WIPHY_DUMP)
        .finish()
}

/// Every wireless interface (one [`CMD_NEW_INTERFACE`] each, for [`parse_interface`]).
pub fn get_interface_dump(family: u16, seq: u32) -> Vec<u8> {
    dump(family, seq, CMD_GET_INTERFACE).finish()
}

/// One interface (reply: [`CMD_NEW_INTERFACE`] then the ack).
pub fn get_interface(family: u16, seq: u32, ifindex: u32) -> Vec<u8> {
    request(family, seq, CMD_GET_INTERFACE)
        .u32(ATTR_IFINDEX, ifindex)
        .finish()
}

/// Changes an interface's type (station, AP, IBSS...). Do it with the interface down:
/// cfg80211 first stops what the old type was doing, and drivers that cannot switch a
/// running interface answer `EBUSY`.
pub fn set_interface_type(family: u16, seq: u32, ifindex: u32, iftype: IfType) -> Vec<u8> {
    request(family, seq, CMD_SET_INTERFACE)
        .u32(ATTR_IFINDEX, ifindex)
        .u32(ATTR_IFTYPE, iftype.to_u32())
        .finish()
}

/// Creates an interface on a wiphy; the kernel answers with the new interface
/// ([`CMD_NEW_INTERFACE`], for [`parse_interface`]: its ifindex) and the ack.
pub fn new_interface(family: u16, seq: u32, wiphy: u32, name: &str, iftype: IfType) -> Vec<u8> {
    request(family, seq, CMD_NEW_INTERFACE)
        .u32(ATTR_WIPHY, wiphy)
        .str(ATTR_IFNAME, name)
        .u32(ATTR_IFTYPE, iftype.to_u32())
        .finish()
}

/// Turns station power save on or off ([`ATTR_PS_STATE`]).
pub fn set_power_save(family: u16, seq: u32, ifindex: u32, on: bool) -> Vec<u8> {
    let state = if on { PS_ENABLED } else { PS_DISABLED };
    request(family, seq, CMD_SET_POWER_SAVE)
        .u32(ATTR_IFINDEX, ifindex)
        .u32(ATTR_PS_STATE, state)
        .finish()
}

/// Asks the power save state (reply for [`parse_power_save`]).
pub fn get_power_save(family: u16, seq: u32, ifindex: u32) -> Vec<u8> {
    request(family, seq, CMD_GET_POWER_SAVE)
        .u32(ATTR_IFINDEX, ifindex)
        .finish()
}

/// Asks for a country's regulatory domain (`"DE"`; `"00"` = world), as a user hint; ASCII
/// letters are upper-cased. The ack comes at once; the new domain applies when the
/// kernel's regulatory code has processed it (a `regulatory` group event; [`get_reg`]
/// shows it).
pub fn req_set_reg(family: u16, seq: u32, alpha2: &str) -> Vec<u8> {
    request(family, seq, CMD_REQ_SET_REG)
        .str(ATTR_REG_ALPHA2, &alpha2.to_ascii_uppercase())
        .finish()
}

/// Asks the regulatory domain (reply for [`parse_reg`]): the global one, or with `wiphy`
/// that wiphy's own if it has one (self-managed drivers; otherwise the global one).
pub fn get_reg(family: u16, seq: u32, wiphy: Option<u32>) -> Vec<u8> {
    let b = request(family, seq, CMD_GET_REG);
    match wiphy {
        Some(w) => b.u32(ATTR_WIPHY, w),
        None => b,
    }
    .finish()
}

/// Starts a scan. `freqs_mhz` empty = every allowed channel. `ssids` says how to probe:
/// empty = a passive scan (listen for beacons only, no probe requests); `&[b""]` (one
/// zero-length SSID) = an active wildcard scan, what `iw dev wlan0 scan` sends; named
/// SSIDs = probe for those (hidden networks). The ack means started; the results are in
/// [`get_scan_dump`] once the `scan` group announces [`CMD_NEW_SCAN_RESULTS`] (or PID 1's
/// poll sees them); `EBUSY` while another scan runs.
pub fn trigger_scan(
    family: u16,
    seq: u32,
    ifindex: u32,
    freqs_mhz: &[u32],
    ssids: &[&[u8]],
) -> Vec<u8> {
    let mut b = request(family, seq, CMD_TRIGGER_SCAN).u32(ATTR_IFINDEX, ifindex);
    if !ssids.is_empty() {
        b = b.nest(ATTR_SCAN_SSIDS, |mut n| {
            for (i, s) in (1u16..).zip(ssids) {
                n = n.bytes(i, s);
            }
            n
        });
    }
    if !freqs_mhz.is_empty() {
        b = b.nest(ATTR_SCAN_FREQUENCIES, |mut n| {
            for (i, &f) in (1u16..).zip(freqs_mhz) {
                n = n.u32(i, f);
            }
            n
        });
    }
    b.finish()
}

/// The scan results of an interface (one [`CMD_NEW_SCAN_RESULTS`] per BSS, for
/// [`parse_bss`]).
pub fn get_scan_dump(family: u16, seq: u32, ifindex: u32) -> Vec<u8> {
    dump(family, seq, CMD_GET_SCAN)
        .u32(ATTR_IFINDEX, ifindex)
        .finish()
}

/// What [`connect`] asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectParams<'a> {
    pub ssid: &'a [u8],
    /// Only this channel (MHz); `None` lets the kernel pick from its scan results.
    pub freq_mhz: Option<u32>,
    /// Only this BSS.
    pub bssid: Option<[u8; 6]>,
    /// WPA2-PSK: the PMK ([`crate::psk`]); `None` for an open network.
    pub psk: Option<[u8; 32]>,
}

/// Connects a station interface (`nl80211_connect`): SSID, optional channel and BSSID,
/// open system authentication. Open network: no privacy. With a PSK: [`ATTR_PRIVACY`],
/// WPA versions 2, CCMP pairwise and group, AKM PSK, [`ATTR_PMK`] and the
/// [`RSN_IE_WPA2_PSK_CCMP`] in [`ATTR_IE`]. That asks the driver to do the 4-way handshake
/// itself: `nl80211_crypto_settings` rejects a PMK (`EINVAL`) unless the wiphy has
/// [`EXT_FEATURE_4WAY_HANDSHAKE_STA_PSK`] (or `_AP_PSK`); mac80211 drivers (hwsim) have
/// neither and need a supplicant. (`NL80211_ATTR_WANT_1X_4WAY_HS` is the 802.1X offload,
/// not used for PSK.) The ack means the attempt started; the outcome is a
/// [`CMD_CONNECT`] event on the `mlme` group, or the interface's SSID / the BSS status
/// once associated.
pub fn connect(family: u16, seq: u32, ifindex: u32, p: &ConnectParams) -> Vec<u8> {
    let mut b = request(family, seq, CMD_CONNECT)
        .u32(ATTR_IFINDEX, ifindex)
        .bytes(ATTR_SSID, p.ssid);
    if let Some(f) = p.freq_mhz {
        b = b.u32(ATTR_WIPHY_FREQ, f);
    }
    if let Some(mac) = p.bssid {
        b = b.bytes(ATTR_MAC, &mac);
    }
    b = b.u32(ATTR_AUTH_TYPE, AUTHTYPE_OPEN_SYSTEM);
    if let Some(pmk) = &p.psk {
        b = put_wpa2_psk(b, pmk).bytes(ATTR_IE, &RSN_IE_WPA2_PSK_CCMP);
    }
    b.finish()
}

/// Disconnects a station (reason: the kernel's default, "deauthenticated, leaving").
pub fn disconnect(family: u16, seq: u32, ifindex: u32) -> Vec<u8> {
    request(family, seq, CMD_DISCONNECT)
        .u32(ATTR_IFINDEX, ifindex)
        .finish()
}

/// The stations of an interface (its AP when a client, its clients when an AP; one
/// [`CMD_NEW_STATION`] each, for [`parse_station`]).
pub fn get_station_dump(family: u16, seq: u32, ifindex: u32) -> Vec<u8> {
    dump(family, seq, CMD_GET_STATION)
        .u32(ATTR_IFINDEX, ifindex)
        .finish()
}

/// What [`start_ap`] asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApParams<'a> {
    /// The beacon frame up to (not including) the TIM element ([`crate::ie`]).
    pub beacon_head: &'a [u8],
    /// The beacon's elements after the TIM (RSN element here when secured).
    pub beacon_tail: &'a [u8],
    /// TU (1024 µs); 100 is usual.
    pub beacon_interval_tu: u32,
    /// Beacons; 2 is usual.
    pub dtim_period: u32,
    pub ssid: &'a [u8],
    pub chandef: Chandef,
    /// WPA2-PSK: the PMK, for a driver that does the 4-way handshake itself
    /// ([`EXT_FEATURE_4WAY_HANDSHAKE_AP_PSK`]); `None` for an open network.
    pub psk: Option<[u8; 32]>,
    /// Beacons carry an empty SSID ([`HIDDEN_SSID_ZERO_LEN`]) instead of
    /// [`HIDDEN_SSID_NOT_IN_USE`]; the beacon head must match.
    pub hidden: bool,
    /// Disconnect stations idle this long (s); needs [`FEATURE_INACTIVITY_TIMER`].
    pub inactivity_timeout_s: Option<u16>,
}

/// Starts an AP on an interface of type AP (`nl80211_start_ap`: beacon head, interval and
/// DTIM period are required): beacon, SSID, hidden mode, open system authentication, the
/// channel as [`ATTR_WIPHY_FREQ`] + [`ATTR_CHANNEL_WIDTH`] + [`ATTR_CENTER_FREQ1`], and
/// with a PSK the same WPA2 attributes as [`connect`] (the RSN element goes in the beacon
/// tail). `EBUSY` if already started; the channel must allow beaconing (no `NO_IR`, no
/// uncleared radar).
pub fn start_ap(family: u16, seq: u32, ifindex: u32, p: &ApParams) -> Vec<u8> {
    let hidden = if p.hidden {
        HIDDEN_SSID_ZERO_LEN
    } else {
        HIDDEN_SSID_NOT_IN_USE
    };
    let mut b = request(family, seq, CMD_START_AP)
        .u32(ATTR_IFINDEX, ifindex)
        .bytes(ATTR_BEACON_HEAD, p.beacon_head)
        .bytes(ATTR_BEACON_TAIL, p.beacon_tail)
        .u32(ATTR_BEACON_INTERVAL, p.beacon_interval_tu)
        .u32(ATTR_DTIM_PERIOD, p.dtim_period)
        .bytes(ATTR_SSID, p.ssid)
        .u32(ATTR_HIDDEN_SSID, hidden)
        .u32(ATTR_AUTH_TYPE, AUTHTYPE_OPEN_SYSTEM);
    b = put_chandef(b, &p.chandef);
    if let Some(pmk) = &p.psk {
        b = put_wpa2_psk(b, pmk);
    }
    if let Some(t) = p.inactivity_timeout_s {
        b = b.u16(ATTR_INACTIVITY_TIMEOUT, t);
    }
    b.finish()
}

pub fn stop_ap(family: u16, seq: u32, ifindex: u32) -> Vec<u8> {
    request(family, seq, CMD_STOP_AP)
        .u32(ATTR_IFINDEX, ifindex)
        .finish()
}

/// Joins (or creates) an open IBSS on an ad-hoc interface (`nl80211_join_ibss`). A
/// [`Width::NoHt20`] chandef is legacy 20 MHz ([`CHAN_WIDTH_20_NOHT`]), what every driver
/// takes; HT widths need [`FEATURE_HT_IBSS`], 80 MHz and wider also
/// [`EXT_FEATURE_VHT_IBSS`]. With `bssid` every member joins that one BSSID and stays
/// on the channel ([`ATTR_FREQ_FIXED`]): no two IBSSs of one SSID to merge.
pub fn join_ibss(
    family: u16,
    seq: u32,
    ifindex: u32,
    ssid: &[u8],
    chandef: Chandef,
    bssid: Option<[u8; 6]>,
) -> Vec<u8> {
    let mut b = request(family, seq, CMD_JOIN_IBSS)
        .u32(ATTR_IFINDEX, ifindex)
        .bytes(ATTR_SSID, ssid);
    if let Some(m) = bssid {
        b = b.bytes(ATTR_MAC, &m).flag(ATTR_FREQ_FIXED);
    }
    put_chandef(b, &chandef).finish()
}

pub fn leave_ibss(family: u16, seq: u32, ifindex: u32) -> Vec<u8> {
    request(family, seq, CMD_LEAVE_IBSS)
        .u32(ATTR_IFINDEX, ifindex)
        .finish()
}

/// Moves a wiphy (and its interfaces) into the network namespace of process `pid`.
pub fn set_wiphy_netns(family: u16, seq: u32, wiphy: u32, pid: u32) -> Vec<u8> {
    request(family, seq, CMD_SET_WIPHY_NETNS)
        .u32(ATTR_WIPHY, wiphy)
        .u32(ATTR_PID, pid)
        .finish()
}

/// A radio, from a wiphy dump.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wiphy {
    pub index: u32,
    /// `phy0`, ...
    pub name: String,
    /// The 2.4 and 5 GHz bands (60 GHz, 6 GHz and S1G are left out).
    pub bands: Vec<BandInfo>,
    pub iftypes: Vec<IfType>,
    /// The [`ATTR_EXT_FEATURES`] bitmap; ask with [`Wiphy::has_ext_feature`].
    pub ext_features: Vec<u8>,
    /// [`ATTR_FEATURE_FLAGS`] (`FEATURE_*` bits); 0 when not sent.
    pub features: u32,
    /// Suite selectors ([`WLAN_CIPHER_SUITE_CCMP`], ...).
    pub cipher_suites: Vec<u32>,
}

impl Wiphy {
    /// Whether extended feature number `bit` (`EXT_FEATURE_*`) is set.
    pub fn has_ext_feature(&self, bit: u32) -> bool {
        let byte = self.ext_features.get((bit / 8) as usize).copied();
        byte.is_some_and(|b| b & (1 << (bit % 8)) != 0)
    }

    /// A channel of any band by frequency (MHz).
    pub fn freq(&self, mhz: u32) -> Option<&FreqInfo> {
        self.bands
            .iter()
            .flat_map(|b| &b.freqs)
            .find(|f| f.mhz == mhz)
    }
}

/// One band of a wiphy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BandInfo {
    pub band: Band,
    /// The HT Capabilities element's HT Capability Information field, when the band has HT
    /// (802.11n).
    pub ht_capa: Option<u16>,
    /// The VHT Capabilities element's VHT Capabilities Information field, when the band has
    /// VHT (802.11ac).
    pub vht_capa: Option<u32>,
    pub freqs: Vec<FreqInfo>,
}

/// One channel of a band, as the regulatory domain currently allows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreqInfo {
    pub mhz: u32,
    pub disabled: bool,
    /// No initiating radiation: no AP, IBSS or active scan here.
    pub no_ir: bool,
    /// DFS channel: radar detection required.
    pub radar: bool,
    pub no_ht40_minus: bool,
    pub no_ht40_plus: bool,
    pub no_80mhz: bool,
    pub no_160mhz: bool,
    /// mBm; absent on disabled channels.
    pub max_power_mbm: Option<u32>,
}

/// Merges the replies of [`get_wiphy_dump`] (the attributes of each [`CMD_NEW_WIPHY`]
/// message, in order) into wiphys: the messages of one wiphy share its [`ATTR_WIPHY`];
/// later values replace earlier ones, bands and channels accumulate (a channel seen twice
/// is replaced). Also reads an unsplit dump or a single `GET_WIPHY` reply.
pub fn parse_wiphys(msgs: &[&[u8]]) -> Result<Vec<Wiphy>, NetlinkError> {
    let mut out: Vec<Wiphy> = Vec::new();
    for attrs in msgs {
        let a = Attrs::new(attrs)?;
        let index = a
            .get_u32(ATTR_WIPHY)?
            .ok_or(NetlinkError::Missing("NL80211_ATTR_WIPHY"))?;
        let i = match out.iter().position(|w| w.index == index) {
            Some(i) => i,
            None => {
                out.push(Wiphy {
                    index,
                    ..Wiphy::default()
                });
                out.len() - 1
            }
        };
        merge_wiphy(&mut out[i], &a)?;
    }
    Ok(out)
}

fn merge_wiphy(w: &mut Wiphy, a: &Attrs) -> Result<(), NetlinkError> {
    if let Some(name) = a.get_str(ATTR_WIPHY_NAME)? {
        name.clone_into(&mut w.name);
    }
    if let Some(types) = a.nested(ATTR_SUPPORTED_IFTYPES)? {
        w.iftypes = types.map(|(t, _)| IfType::from_u32(t.into())).collect();
    }
    if let Some(bits) = a.get(ATTR_EXT_FEATURES) {
        w.ext_features = bits.to_vec();
    }
    if let Some(f) = a.get_u32(ATTR_FEATURE_FLAGS)? {
        w.features = f;
    }
    if let Some(suites) = a.get(ATTR_CIPHER_SUITES) {
        w.cipher_suites = u32_array(suites, ATTR_CIPHER_SUITES)?;
    }
    for (number, band_attrs) in a.nested(ATTR_WIPHY_BANDS)?.unwrap_or_default() {
        let band = match number {
            BAND_2GHZ => Band::Ghz2,
            BAND_5GHZ => Band::Ghz5,
            _ => continue,
        };
        let b = Attrs::new(band_attrs)?;
        let i = match w.bands.iter().position(|i| i.band == band) {
            Some(i) => i,
            None => {
                w.bands.push(BandInfo {
                    band,
                    ht_capa: None,
                    vht_capa: None,
                    freqs: Vec::new(),
                });
                w.bands.len() - 1
            }
        };
        let info = &mut w.bands[i];
        if let Some(h) = b.get_u16(BAND_ATTR_HT_CAPA)? {
            info.ht_capa = Some(h);
        }
        if let Some(v) = b.get_u32(BAND_ATTR_VHT_CAPA)? {
            info.vht_capa = Some(v);
        }
        for (_, f) in b.nested(BAND_ATTR_FREQS)?.unwrap_or_default() {
            let f = Attrs::new(f)?;
            let Some(mhz) = f.get_u32(FREQUENCY_ATTR_FREQ)? else {
                continue;
            };
            let fi = FreqInfo {
                mhz,
                disabled: f.has(FREQUENCY_ATTR_DISABLED),
                no_ir: f.has(FREQUENCY_ATTR_NO_IR),
                radar: f.has(FREQUENCY_ATTR_RADAR),
                no_ht40_minus: f.has(FREQUENCY_ATTR_NO_HT40_MINUS),
                no_ht40_plus: f.has(FREQUENCY_ATTR_NO_HT40_PLUS),
                no_80mhz: f.has(FREQUENCY_ATTR_NO_80MHZ),
                no_160mhz: f.has(FREQUENCY_ATTR_NO_160MHZ),
                max_power_mbm: f.get_u32(FREQUENCY_ATTR_MAX_TX_POWER)?,
            };
            match info.freqs.iter_mut().find(|x| x.mhz == mhz) {
                Some(x) => *x = fi,
                None => info.freqs.push(fi),
            }
        }
    }
    Ok(())
}

/// An array of u32 (suite selectors).
fn u32_array(v: &[u8], ty: u16) -> Result<Vec<u32>, NetlinkError> {
    if !v.len().is_multiple_of(4) {
        return Err(NetlinkError::AttrSize {
            ty,
            want: v.len() / 4 * 4 + 4,
            got: v.len(),
        });
    }
    Ok(v.chunks_exact(4)
        .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// A wireless interface (`nl80211_send_iface`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    pub ifindex: u32,
    pub name: String,
    pub wiphy: u32,
    pub iftype: IfType,
    pub mac: Option<[u8; 6]>,
    /// The SSID of the AP run, the network joined or the IBSS, once there is one.
    pub ssid: Option<Vec<u8>>,
    /// The operating channel, when there is one and its width is one of [`Width`].
    pub chandef: Option<Chandef>,
    /// mBm.
    pub txpower_mbm: Option<u32>,
}

/// Parses a [`CMD_NEW_INTERFACE`] reply. A wireless device without a network interface
/// (P2P-device, NAN) has no ifindex: `Err(Missing)`, skip it.
pub fn parse_interface(attrs: &[u8]) -> Result<Interface, NetlinkError> {
    let a = Attrs::new(attrs)?;
    let ifindex = a
        .get_u32(ATTR_IFINDEX)?
        .ok_or(NetlinkError::Missing("NL80211_ATTR_IFINDEX"))?;
    let name = a
        .get_str(ATTR_IFNAME)?
        .ok_or(NetlinkError::Missing("NL80211_ATTR_IFNAME"))?;
    let wiphy = a
        .get_u32(ATTR_WIPHY)?
        .ok_or(NetlinkError::Missing("NL80211_ATTR_WIPHY"))?;
    let iftype = a
        .get_u32(ATTR_IFTYPE)?
        .ok_or(NetlinkError::Missing("NL80211_ATTR_IFTYPE"))?;
    let freq = a.get_u32(ATTR_WIPHY_FREQ)?;
    let width = a.get_u32(ATTR_CHANNEL_WIDTH)?.and_then(width_of);
    let center = a.get_u32(ATTR_CENTER_FREQ1)?;
    let chandef = match (freq, width) {
        (Some(control_mhz), Some(width)) => Some(Chandef {
            control_mhz,
            width,
            center1_mhz: center.unwrap_or(control_mhz),
        }),
        _ => None,
    };
    Ok(Interface {
        ifindex,
        name: name.to_owned(),
        wiphy,
        iftype: IfType::from_u32(iftype),
        mac: a.get_array(ATTR_MAC)?,
        ssid: a.get(ATTR_SSID).map(<[u8]>::to_vec),
        chandef,
        txpower_mbm: a.get_u32(ATTR_WIPHY_TX_POWER_LEVEL)?,
    })
}

/// Parses a [`CMD_GET_POWER_SAVE`] reply: whether power save is on.
pub fn parse_power_save(attrs: &[u8]) -> Result<Option<bool>, NetlinkError> {
    Ok(Attrs::new(attrs)?
        .get_u32(ATTR_PS_STATE)?
        .map(|s| s == PS_ENABLED))
}

/// A regulatory domain (`nl80211_put_regdom`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reg {
    /// `"DE"`, `"00"` (world), `"99"` (built from a driver's own rules).
    pub alpha2: String,
    /// `DFS_*`.
    pub dfs_region: Option<u8>,
    /// Set when this is a wiphy's own domain rather than the global one.
    pub wiphy: Option<u32>,
    pub rules: Vec<RegRule>,
}

/// One rule of a regulatory domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegRule {
    /// `RRF_*` bits; names by [`reg_rule_flag_names`].
    pub flags: u32,
    pub start_khz: u32,
    pub end_khz: u32,
    pub max_bw_khz: u32,
    pub max_eirp_mbm: u32,
}

/// Parses a [`CMD_GET_REG`] reply.
pub fn parse_reg(attrs: &[u8]) -> Result<Reg, NetlinkError> {
    let a = Attrs::new(attrs)?;
    let alpha2 = a
        .get_str(ATTR_REG_ALPHA2)?
        .ok_or(NetlinkError::Missing("NL80211_ATTR_REG_ALPHA2"))?;
    let mut rules = Vec::new();
    for (_, rule) in a.nested(ATTR_REG_RULES)?.unwrap_or_default() {
        let r = Attrs::new(rule)?;
        rules.push(RegRule {
            flags: r.get_u32(ATTR_REG_RULE_FLAGS)?.unwrap_or(0),
            start_khz: r
                .get_u32(ATTR_FREQ_RANGE_START)?
                .ok_or(NetlinkError::Missing("NL80211_ATTR_FREQ_RANGE_START"))?,
            end_khz: r
                .get_u32(ATTR_FREQ_RANGE_END)?
                .ok_or(NetlinkError::Missing("NL80211_ATTR_FREQ_RANGE_END"))?,
            max_bw_khz: r.get_u32(ATTR_FREQ_RANGE_MAX_BW)?.unwrap_or(0),
            max_eirp_mbm: r.get_u32(ATTR_POWER_RULE_MAX_EIRP)?.unwrap_or(0),
        });
    }
    Ok(Reg {
        alpha2: alpha2.to_owned(),
        dfs_region: a.get_u8(ATTR_DFS_REGION)?,
        wiphy: a.get_u32(ATTR_WIPHY)?,
        rules,
    })
}

/// The names of a rule's flags as wireless-regdb and iw write them (`NO-IR`, `DFS`, ...);
/// unknown bits are left out.
pub fn reg_rule_flag_names(flags: u32) -> Vec<&'static str> {
    const NAMES: [(u32, &str); 16] = [
        (RRF_NO_OFDM, "NO-OFDM"),
        (RRF_NO_CCK, "NO-CCK"),
        (RRF_NO_INDOOR, "NO-INDOOR"),
        (RRF_NO_OUTDOOR, "NO-OUTDOOR"),
        (RRF_DFS, "DFS"),
        (RRF_PTP_ONLY, "PTP-ONLY"),
        (RRF_PTMP_ONLY, "PTMP-ONLY"),
        (RRF_NO_IR, "NO-IR"),
        (RRF_AUTO_BW, "AUTO-BW"),
        (RRF_IR_CONCURRENT, "IR-CONCURRENT"),
        (RRF_NO_HT40MINUS, "NO-HT40MINUS"),
        (RRF_NO_HT40PLUS, "NO-HT40PLUS"),
        (RRF_NO_80MHZ, "NO-80MHZ"),
        (RRF_NO_160MHZ, "NO-160MHZ"),
        (RRF_NO_HE, "NO-HE"),
        (RRF_NO_320MHZ, "NO-320MHZ"),
    ];
    NAMES
        .iter()
        .filter(|&&(bit, _)| flags & bit != 0)
        .map(|&(_, name)| name)
        .collect()
}

/// One scan result (`nl80211_send_bss`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bss {
    pub bssid: [u8; 6],
    pub freq_mhz: u32,
    pub signal_mbm: Option<i32>,
    /// TU.
    pub beacon_interval: Option<u16>,
    /// IEEE 802.11 capability information (bit 0 ESS, 1 IBSS, 4 privacy, ...).
    pub capability: Option<u16>,
    /// `BSS_STATUS_*`: set on the BSS we are associated with or the IBSS joined.
    pub status: Option<u32>,
    /// The information elements, raw ([`crate::ie`] reads them): the latest frame's
    /// ([`BSS_INFORMATION_ELEMENTS`]), else the beacon's.
    pub ies: Vec<u8>,
    pub seen_ms_ago: Option<u32>,
}

/// Parses a [`CMD_NEW_SCAN_RESULTS`] reply.
pub fn parse_bss(attrs: &[u8]) -> Result<Bss, NetlinkError> {
    let b = Attrs::new(attrs)?
        .nested(ATTR_BSS)?
        .ok_or(NetlinkError::Missing("NL80211_ATTR_BSS"))?;
    let ies = b
        .get(BSS_INFORMATION_ELEMENTS)
        .filter(|v| !v.is_empty())
        .or(b.get(BSS_BEACON_IES))
        .unwrap_or_default();
    Ok(Bss {
        bssid: b
            .get_array(BSS_BSSID)?
            .ok_or(NetlinkError::Missing("NL80211_BSS_BSSID"))?,
        freq_mhz: b
            .get_u32(BSS_FREQUENCY)?
            .ok_or(NetlinkError::Missing("NL80211_BSS_FREQUENCY"))?,
        signal_mbm: b.get_i32(BSS_SIGNAL_MBM)?,
        beacon_interval: b.get_u16(BSS_BEACON_INTERVAL)?,
        capability: b.get_u16(BSS_CAPABILITY)?,
        status: b.get_u32(BSS_STATUS)?,
        ies: ies.to_vec(),
        seen_ms_ago: b.get_u32(BSS_SEEN_MS_AGO)?,
    })
}

/// A station: the AP of a client interface, or a client of an AP
/// (`nl80211_send_station`). Each field is what the driver filled in; see
/// [`Station::absent`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Station {
    pub mac: [u8; 6],
    pub signal_dbm: Option<i8>,
    pub signal_avg_dbm: Option<i8>,
    /// Per antenna chain; empty when not given.
    pub chain_signal_dbm: Vec<i8>,
    pub tx_bitrate: Option<RateInfo>,
    pub rx_bitrate: Option<RateInfo>,
    pub tx_retries: Option<u32>,
    pub tx_failed: Option<u32>,
    pub tx_packets: Option<u32>,
    pub rx_packets: Option<u32>,
    /// The 64-bit counter when given, else the 32-bit one (which wraps at 4 GiB).
    pub tx_bytes: Option<u64>,
    pub rx_bytes: Option<u64>,
    pub beacon_loss: Option<u32>,
    pub expected_throughput_kbps: Option<u32>,
    pub connected_time_s: Option<u32>,
    pub inactive_time_ms: Option<u32>,
}

/// A transmit or receive rate (`nl80211_put_sta_rate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateInfo {
    /// 100 kbit/s ([`RATE_INFO_BITRATE32`], else the 16-bit [`RATE_INFO_BITRATE`]).
    pub bitrate_100kbps: Option<u32>,
    /// HT (802.11n) MCS.
    pub mcs: Option<u8>,
    pub vht_mcs: Option<u8>,
    pub vht_nss: Option<u8>,
    pub he_mcs: Option<u8>,
    pub he_nss: Option<u8>,
    /// 20 (no width flag: legacy, HT20, VHT20), 5, 10, 40, 80, 160 (also 80+80), 320.
    pub width_mhz: u32,
    /// 400 ns guard interval (HT/VHT).
    pub short_gi: bool,
}

impl RateInfo {
    /// Whether the driver named a modulation and coding scheme (HT, VHT or HE) rather than
    /// only a legacy bitrate.
    pub fn has_mcs(&self) -> bool {
        self.mcs.is_some() || self.vht_mcs.is_some() || self.he_mcs.is_some()
    }
}

impl Station {
    /// The fields the driver did not give, by name (`"tx_retries"`, ...); for a rate given
    /// without any MCS (a legacy bitrate only) also `"tx_bitrate.mcs"` /
    /// `"rx_bitrate.mcs"`. brcmfmac, for one, gives no retries, average signal, beacon loss
    /// or expected throughput, and legacy bitrates only.
    pub fn absent(&self) -> Vec<&'static str> {
        let rate_mcs = |r: &Option<RateInfo>| r.as_ref().is_some_and(|r| !r.has_mcs());
        [
            ("signal_dbm", self.signal_dbm.is_none()),
            ("signal_avg_dbm", self.signal_avg_dbm.is_none()),
            ("chain_signal_dbm", self.chain_signal_dbm.is_empty()),
            ("tx_bitrate", self.tx_bitrate.is_none()),
            ("tx_bitrate.mcs", rate_mcs(&self.tx_bitrate)),
            ("rx_bitrate", self.rx_bitrate.is_none()),
            ("rx_bitrate.mcs", rate_mcs(&self.rx_bitrate)),
            ("tx_retries", self.tx_retries.is_none()),
            ("tx_failed", self.tx_failed.is_none()),
            ("tx_packets", self.tx_packets.is_none()),
            ("rx_packets", self.rx_packets.is_none()),
            ("tx_bytes", self.tx_bytes.is_none()),
            ("rx_bytes", self.rx_bytes.is_none()),
            ("beacon_loss", self.beacon_loss.is_none()),
            (
                "expected_throughput_kbps",
                self.expected_throughput_kbps.is_none(),
            ),
            ("connected_time_s", self.connected_time_s.is_none()),
            ("inactive_time_ms", self.inactive_time_ms.is_none()),
        ]
        .into_iter()
        .filter(|&(_, missing)| missing)
        .map(|(name, _)| name)
        .collect()
    }
}

/// Parses a [`CMD_NEW_STATION`] reply.
pub fn parse_station(attrs: &[u8]) -> Result<Station, NetlinkError> {
    let a = Attrs::new(attrs)?;
    let mac = a
        .get_array(ATTR_MAC)?
        .ok_or(NetlinkError::Missing("NL80211_ATTR_MAC"))?;
    let s = a.nested(ATTR_STA_INFO)?.unwrap_or_default();
    let mut chain_signal_dbm = Vec::new();
    for (ty, v) in s.nested(STA_INFO_CHAIN_SIGNAL)?.unwrap_or_default() {
        match v {
            [dbm] => chain_signal_dbm.push(*dbm as i8),
            _ => {
                return Err(NetlinkError::AttrSize {
                    ty,
                    want: 1,
                    got: v.len(),
                })
            }
        }
    }
    let rate = |ty| -> Result<Option<RateInfo>, NetlinkError> {
        s.nested(ty)?.map(|r| parse_rate(&r)).transpose()
    };
    let bytes = |ty64, ty32| -> Result<Option<u64>, NetlinkError> {
        Ok(s.get_u64(ty64)?.or(s.get_u32(ty32)?.map(u64::from)))
    };
    Ok(Station {
        mac,
        signal_dbm: s.get_i8(STA_INFO_SIGNAL)?,
        signal_avg_dbm: s.get_i8(STA_INFO_SIGNAL_AVG)?,
        chain_signal_dbm,
        tx_bitrate: rate(STA_INFO_TX_BITRATE)?,
        rx_bitrate: rate(STA_INFO_RX_BITRATE)?,
        tx_retries: s.get_u32(STA_INFO_TX_RETRIES)?,
        tx_failed: s.get_u32(STA_INFO_TX_FAILED)?,
        tx_packets: s.get_u32(STA_INFO_TX_PACKETS)?,
        rx_packets: s.get_u32(STA_INFO_RX_PACKETS)?,
        tx_bytes: bytes(STA_INFO_TX_BYTES64, STA_INFO_TX_BYTES)?,
        rx_bytes: bytes(STA_INFO_RX_BYTES64, STA_INFO_RX_BYTES)?,
        beacon_loss: s.get_u32(STA_INFO_BEACON_LOSS)?,
        expected_throughput_kbps: s.get_u32(STA_INFO_EXPECTED_THROUGHPUT)?,
        connected_time_s: s.get_u32(STA_INFO_CONNECTED_TIME)?,
        inactive_time_ms: s.get_u32(STA_INFO_INACTIVE_TIME)?,
    })
}

fn parse_rate(r: &Attrs) -> Result<RateInfo, NetlinkError> {
    let width_mhz = [
        (RATE_INFO_320_MHZ_WIDTH, 320),
        (RATE_INFO_160_MHZ_WIDTH, 160),
        (RATE_INFO_80P80_MHZ_WIDTH, 160),
        (RATE_INFO_80_MHZ_WIDTH, 80),
        (RATE_INFO_40_MHZ_WIDTH, 40),
        (RATE_INFO_10_MHZ_WIDTH, 10),
        (RATE_INFO_5_MHZ_WIDTH, 5),
    ]
    .into_iter()
    .find(|&(flag, _)| r.has(flag))
    .map_or(20, |(_, mhz)| mhz);
    Ok(RateInfo {
        bitrate_100kbps: match r.get_u32(RATE_INFO_BITRATE32)? {
            Some(b) => Some(b),
            None => r.get_u16(RATE_INFO_BITRATE)?.map(u32::from),
        },
        mcs: r.get_u8(RATE_INFO_MCS)?,
        vht_mcs: r.get_u8(RATE_INFO_VHT_MCS)?,
        vht_nss: r.get_u8(RATE_INFO_VHT_NSS)?,
        he_mcs: r.get_u8(RATE_INFO_HE_MCS)?,
        he_nss: r.get_u8(RATE_INFO_HE_NSS)?,
        width_mhz,
        short_gi: r.has(RATE_INFO_SHORT_GI),
    })
}

#[cfg(test)]
mod tests;
