//! A station's PHY rate as results name it: which generation it is, its MCS and number
//! of spatial streams, and its bitrate in Mbit/s.
//!
//! nl80211 reports a rate (`nl80211_put_sta_rate`, parsed into [`RateInfo`]) with an HE,
//! VHT or HT MCS when the driver knows one, else only a legacy bitrate. VHT and HE give
//! the number of streams (NSS) beside the MCS; HT folds it into the MCS index (IEEE
//! 802.11-2020 §19.5: MCS 0-7 one stream, 8-15 two, 16-23 three, 24-31 four).

use crate::nl80211::RateInfo;

/// The PHY generation of a rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateKind {
    /// 802.11a/b/g: only a bitrate.
    Legacy,
    /// 802.11n (HT).
    Ht,
    /// 802.11ac (VHT).
    Vht,
    /// 802.11ax (HE).
    He,
}

impl RateKind {
    /// `legacy`, `ht`, `vht`, `he` (results' `kind`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Legacy => "legacy",
            Self::Ht => "ht",
            Self::Vht => "vht",
            Self::He => "he",
        }
    }
}

/// A rate's generation, MCS and spatial streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub kind: RateKind,
    /// The MCS index as the driver gave it (HT: 0..=76 across streams; VHT 0..=9; HE
    /// 0..=11); `None` for a legacy rate.
    pub mcs: Option<u8>,
    /// Spatial streams: VHT's and HE's own NSS, HT's from its MCS index
    /// ([`ht_streams`]); `None` for a legacy rate or an HT index past 76.
    pub nss: Option<u8>,
}

/// The spatial streams of an HT MCS index (IEEE 802.11-2020, 19.5 "Parameters for HT
/// MCSs"): 0..=31 are 8 per stream count (equal modulation, `mcs / 8 + 1`); 32 is the
/// one-stream 40 MHz duplicate; 33..=38 two streams, 39..=52 three, 53..=76 four
/// (unequal modulation); past 76 none is defined.
pub fn ht_streams(mcs: u8) -> Option<u8> {
    match mcs {
        0..=31 => Some(mcs / 8 + 1),
        32 => Some(1),
        33..=38 => Some(2),
        39..=52 => Some(3),
        53..=76 => Some(4),
        _ => None,
    }
}

/// The generation, MCS and streams of `r`, the newest generation the driver named
/// first (HE, then VHT, then HT).
pub fn classify(r: &RateInfo) -> Rate {
    let (kind, mcs, nss) = if r.he_mcs.is_some() {
        (RateKind::He, r.he_mcs, r.he_nss)
    } else if r.vht_mcs.is_some() {
        (RateKind::Vht, r.vht_mcs, r.vht_nss)
    } else if r.mcs.is_some() {
        (RateKind::Ht, r.mcs, r.mcs.and_then(ht_streams))
    } else {
        (RateKind::Legacy, None, None)
    };
    Rate { kind, mcs, nss }
}

/// The bitrate in Mbit/s (nl80211's unit is 100 kbit/s: 650 is 65.0); `None` when the
/// driver gave none (an HE rate it cannot express as a bitrate).
pub fn mbit(r: &RateInfo) -> Option<f64> {
    r.bitrate_100kbps.map(|b| f64::from(b) / 10.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netlink::hex_fixture;
    use crate::nl80211::{
        parse_station, ATTR_MAC, ATTR_STA_INFO, RATE_INFO_160_MHZ_WIDTH, RATE_INFO_BITRATE,
        RATE_INFO_BITRATE32, RATE_INFO_HE_MCS, RATE_INFO_HE_NSS, RATE_INFO_MCS, RATE_INFO_SHORT_GI,
        RATE_INFO_VHT_MCS, RATE_INFO_VHT_NSS, STA_INFO_RX_BITRATE, STA_INFO_TX_BITRATE,
    };
    use crate::testkit::{nest, nla, u32a};

    /// A station whose TX rate is `tx` and RX rate `rx` (the rates' attributes as
    /// `nl80211_put_sta_rate` writes them), parsed as the board reads a station dump.
    fn rates(tx: &[Vec<u8>], rx: &[Vec<u8>]) -> (RateInfo, RateInfo) {
        let attrs = [
            nla(ATTR_MAC, &[2, 0, 0, 0, 0, 1]),
            nest(
                ATTR_STA_INFO,
                &[nest(STA_INFO_TX_BITRATE, tx), nest(STA_INFO_RX_BITRATE, rx)],
            ),
        ]
        .concat();
        let s = parse_station(&attrs).unwrap();
        (s.tx_bitrate.unwrap(), s.rx_bitrate.unwrap())
    }

    #[test]
    fn a_captured_mac80211_station_has_ht_rates() {
        // testdata/station_mac80211.hex: TX {1040, MCS 13}, RX {390, MCS 4}.
        let s = parse_station(&hex_fixture(include_str!("testdata/station_mac80211.hex"))).unwrap();
        let (tx, rx) = (s.tx_bitrate.unwrap(), s.rx_bitrate.unwrap());
        let ht = |mcs, nss| Rate {
            kind: RateKind::Ht,
            mcs: Some(mcs),
            nss: Some(nss),
        };
        assert_eq!(classify(&tx), ht(13, 2), "MCS 13 is the second stream's");
        assert_eq!(classify(&rx), ht(4, 1));
        assert_eq!(mbit(&tx), Some(104.0));
        assert_eq!(mbit(&rx), Some(39.0));
        assert_eq!(classify(&tx).kind.name(), "ht");
    }

    #[test]
    fn ht_streams_follow_the_standards_mcs_table() {
        let got: Vec<(u8, Option<u8>)> =
            [0, 7, 8, 15, 16, 23, 24, 31, 32, 33, 38, 39, 52, 53, 76, 77]
                .into_iter()
                .map(|m| (m, ht_streams(m)))
                .collect();
        assert_eq!(
            got,
            [
                (0, Some(1)),
                (7, Some(1)),
                (8, Some(2)),
                (15, Some(2)),
                (16, Some(3)),
                (23, Some(3)),
                (24, Some(4)),
                (31, Some(4)),
                (32, Some(1)),
                (33, Some(2)),
                (38, Some(2)),
                (39, Some(3)),
                (52, Some(3)),
                (53, Some(4)),
                (76, Some(4)),
                (77, None),
            ]
        );
    }

    #[test]
    fn each_generation_is_named_by_its_own_mcs() {
        // brcmfmac: a legacy rate only, as BITRATE32 and BITRATE.
        let (tx, _) = rates(
            &[
                u32a(RATE_INFO_BITRATE32, 650),
                nla(RATE_INFO_BITRATE, &650u16.to_le_bytes()),
            ],
            &[nla(RATE_INFO_BITRATE, &540u16.to_le_bytes())],
        );
        assert_eq!(
            classify(&tx),
            Rate {
                kind: RateKind::Legacy,
                mcs: None,
                nss: None
            }
        );
        assert_eq!(mbit(&tx), Some(65.0));
        // VHT 80 MHz MCS 9 two streams short GI: 866.7 Mbit/s; HT MCS 31 four streams.
        let (vht, ht) = rates(
            &[
                u32a(RATE_INFO_BITRATE32, 8667),
                nla(RATE_INFO_VHT_MCS, &[9]),
                nla(RATE_INFO_VHT_NSS, &[2]),
                nla(RATE_INFO_SHORT_GI, &[]),
            ],
            &[
                nla(RATE_INFO_BITRATE, &6000u16.to_le_bytes()),
                nla(RATE_INFO_MCS, &[31]),
            ],
        );
        assert_eq!(
            (classify(&vht).kind, classify(&vht).mcs, classify(&vht).nss),
            (RateKind::Vht, Some(9), Some(2))
        );
        assert_eq!(mbit(&vht), Some(866.7));
        assert_eq!(
            (classify(&ht).kind, classify(&ht).nss),
            (RateKind::Ht, Some(4))
        );
        // HE 160 MHz MCS 11 two streams, no bitrate (a rate the driver cannot express).
        let (he, _) = rates(
            &[
                nla(RATE_INFO_160_MHZ_WIDTH, &[]),
                nla(RATE_INFO_HE_MCS, &[11]),
                nla(RATE_INFO_HE_NSS, &[2]),
            ],
            &[],
        );
        assert_eq!(
            classify(&he),
            Rate {
                kind: RateKind::He,
                mcs: Some(11),
                nss: Some(2)
            }
        );
        assert_eq!((mbit(&he), he.width_mhz), (None, 160));
        assert_eq!(
            [RateKind::Legacy, RateKind::Vht, RateKind::He].map(RateKind::name),
            ["legacy", "vht", "he"]
        );
    }
}
