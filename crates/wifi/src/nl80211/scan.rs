//! The scan results: one BSS per [`CMD_NEW_SCAN_RESULTS`] message (`nl80211_send_bss`).

use super::numbers::*;
use crate::netlink::{Attrs, NetlinkError};

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
