//! The numbers of `include/uapi/linux/nl80211.h` (6.1) benchboot uses, under the header's
//! names without the `NL80211_` prefix, the suite selectors of `include/linux/ieee80211.h`,
//! and their typed forms: [`IfType`] and the channel widths ([`chan_width`], [`width_of`]).

use crate::channel::Width;

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
/// Flag: dump wiphys the split way ([`get_wiphy_dump`](super::get_wiphy_dump)).
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
/// CCMP, one pairwise CCMP, one AKM PSK, capabilities 0. [`connect`](super::connect) puts it in
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
