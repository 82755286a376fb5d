//! The station records (`nl80211_send_station`): the AP of a client interface or a
//! client of an AP, with their signal, counters and transmit/receive rates.

use super::numbers::*;
use crate::netlink::{Attrs, NetlinkError};

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

pub(super) fn parse_rate(r: &Attrs) -> Result<RateInfo, NetlinkError> {
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
