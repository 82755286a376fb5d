//! The request builders: one whole nl80211 message per command PID 1 sends (genl version
//! 0; `*_dump` with `NLM_F_DUMP`, the others with `NLM_F_ACK`), what each command
//! requires as `net/wireless/nl80211.c` reads it.

use super::numbers::*;
use crate::channel::Chandef;
use crate::netlink::{MsgBuilder, NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST};

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
/// replies with [`parse_wiphys`](super::parse_wiphys).
pub fn get_wiphy_dump(family: u16, seq: u32) -> Vec<u8> {
    dump(family, seq, CMD_GET_WIPHY)
        .flag(ATTR_SPLIT_WIPHY_DUMP)
        .finish()
}

/// Every wireless interface (one [`CMD_NEW_INTERFACE`] each, for [`parse_interface`](super::parse_interface)).
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
/// ([`CMD_NEW_INTERFACE`], for [`parse_interface`](super::parse_interface): its ifindex) and the ack.
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

/// Asks the power save state (reply for [`parse_power_save`](super::parse_power_save)).
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

/// Asks the regulatory domain (reply for [`parse_reg`](super::parse_reg)): the global one, or with `wiphy`
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
/// [`parse_bss`](super::parse_bss)).
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
/// [`CMD_NEW_STATION`] each, for [`parse_station`](super::parse_station)).
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
/// [`Width::NoHt20`](crate::channel::Width::NoHt20) chandef is legacy 20 MHz ([`CHAN_WIDTH_20_NOHT`]), what every driver
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
