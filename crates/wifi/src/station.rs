//! What a scan says around an entry: the BSS the board joins and its neighbours.
//!
//! From the BSS list of `NL80211_CMD_GET_SCAN` ([`Bss`], its information elements read
//! by [`crate::ie`]):
//!
//! - [`best_bss`]: the BSS carrying the entry's SSID on the entry's channel, strongest
//!   first (the one a client connects to);
//! - [`neighbours`]: every BSS on the entry's band with its channel, signal, operating
//!   width and hashed SSID, the entry's own AP marked: what else shares the air.

use crate::channel::Band;
use crate::ie;
use crate::nl80211::Bss;
use crate::psk;

/// A BSS seen by the scan, as results record it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeighbourBss {
    /// Primary channel, MHz.
    pub freq_mhz: u32,
    /// dBm (nl80211's mBm / 100, rounded toward zero).
    pub signal_dbm: Option<i32>,
    /// The width it operates at (its HT / VHT Operation elements, [`ie::Ies::width`]),
    /// MHz; 20 when the band is unknown.
    pub width_mhz: u32,
    /// [`psk::ssid_hash`] of its SSID (of no bytes when it sent none).
    pub ssid_hash: String,
    /// The entry's own AP: the same BSSID with the same SSID.
    pub ours: bool,
}

/// The BSS a client joins: among `list` the ones whose SSID element is `ssid` and, when
/// `freqs` is not empty, whose primary channel is one of `freqs` (MHz), the strongest
/// (no signal counts as weakest). `None` when none carries the SSID there.
pub fn best_bss(list: Vec<Bss>, freqs: &[u32], ssid: &[u8]) -> Option<Bss> {
    list.into_iter()
        .filter(|b| ie::parse(&b.ies).ssid.as_deref() == Some(ssid))
        .filter(|b| freqs.is_empty() || freqs.contains(&b.freq_mhz))
        .max_by_key(|b| b.signal_mbm.unwrap_or(i32::MIN))
}

/// Every BSS of `list` on the band of `ours` (the BSS joined), in scan order. A BSS is
/// `ours` only with both `ours`' BSSID and its SSID: the scan cache may still hold the
/// same BSSID under the previous entry's SSID.
pub fn neighbours(list: &[Bss], ours: &Bss) -> Vec<NeighbourBss> {
    let band = Band::of_mhz(ours.freq_mhz);
    let our_ssid = ie::parse(&ours.ies).ssid;
    list.iter()
        .filter(|b| Band::of_mhz(b.freq_mhz) == band)
        .map(|b| {
            let ies = ie::parse(&b.ies);
            NeighbourBss {
                freq_mhz: b.freq_mhz,
                signal_dbm: b.signal_mbm.map(|m| m / 100),
                width_mhz: band.map_or(20, |bd| ies.width(bd).mhz()),
                ssid_hash: psk::ssid_hash(ies.ssid.as_deref().unwrap_or_default()),
                ours: b.bssid == ours.bssid && ies.ssid == our_ssid,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netlink::{genl_reply, hex_fixture, split_messages, Reply};
    use crate::nl80211::parse_bss;

    /// testdata/scan_dump_reply.hex: a captured `NEW_SCAN_RESULTS` (BSSID
    /// d6:b2:6a:a8:bc:b1, "Test-WIFI", 2412 MHz, -30.00 dBm, no HT Operation element),
    /// its nlmsghdr put back in front.
    fn captured() -> Bss {
        let payload = hex_fixture(include_str!("testdata/scan_dump_reply.hex"));
        let mut buf = ((16 + payload.len()) as u32).to_le_bytes().to_vec();
        buf.extend_from_slice(&0x2eu16.to_le_bytes());
        buf.extend_from_slice(&[0; 10]);
        buf.extend_from_slice(&payload);
        let msgs = split_messages(&buf).unwrap();
        let Reply::Data { attrs, .. } = genl_reply(&msgs[0]).unwrap() else {
            panic!("not data")
        };
        parse_bss(attrs).unwrap()
    }

    /// A BSS with an SSID element and, with `ht`, an HT Operation element (IEEE
    /// 802.11-2020 §9.4.2.56: primary channel, then the secondary channel offset in
    /// bits 0-1: 1 above, 3 below).
    fn bss(last: u8, mhz: u32, mbm: i32, ssid: &[u8], ht: Option<(u8, u8)>) -> Bss {
        let mut ies = vec![0, ssid.len() as u8];
        ies.extend_from_slice(ssid);
        if let Some((primary, offset)) = ht {
            let mut op = vec![61, 22, primary, offset | 0x04];
            op.extend_from_slice(&[0; 20]);
            ies.extend(op);
        }
        Bss {
            bssid: [2, 0, 0, 0, 0, last],
            freq_mhz: mhz,
            signal_mbm: Some(mbm),
            beacon_interval: Some(100),
            capability: None,
            status: None,
            ies,
            seen_ms_ago: None,
        }
    }

    #[test]
    fn the_captured_bss_is_ours_and_its_neighbours_are_on_its_band() {
        let ours = captured();
        assert_eq!((ours.freq_mhz, ours.signal_mbm), (2412, Some(-3000)));
        let list = vec![
            ours.clone(),
            bss(2, 2437, -6550, b"cafe", Some((6, 1))),
            bss(3, 2462, -7000, b"", Some((11, 0))),
            bss(4, 5180, -5000, b"Test-WIFI", Some((36, 1))),
            // The joined BSSID, still cached under the previous entry's SSID.
            Bss {
                ies: vec![0, 3, b'o', b'l', b'd'],
                ..ours.clone()
            },
        ];
        let n = neighbours(&list, &ours);
        let row = |n: &NeighbourBss| (n.freq_mhz, n.signal_dbm, n.width_mhz, n.ours);
        assert_eq!(
            n.iter().map(row).collect::<Vec<_>>(),
            [
                (2412, Some(-30), 20, true),
                (2437, Some(-65), 40, false),
                (2462, Some(-70), 20, false),
                (2412, Some(-30), 20, false),
            ]
        );
        assert_eq!(n[0].ssid_hash, psk::ssid_hash(b"Test-WIFI"));
        assert_eq!(n[2].ssid_hash, psk::ssid_hash(b""));
    }

    #[test]
    fn the_strongest_bss_with_the_ssid_on_the_channel_is_joined() {
        let list = vec![
            captured(),
            bss(2, 2412, -2500, b"Test-WIFIx", None),
            bss(3, 2437, -2000, b"Test-WIFI", None),
            bss(4, 2412, -4000, b"Test-WIFI", None),
        ];
        let on_1 = best_bss(list.clone(), &[2412], b"Test-WIFI").unwrap();
        assert_eq!(on_1.bssid, [0xd6, 0xb2, 0x6a, 0xa8, 0xbc, 0xb1]);
        let anywhere = best_bss(list.clone(), &[], b"Test-WIFI").unwrap();
        assert_eq!(anywhere.bssid, [2, 0, 0, 0, 0, 3]);
        assert_eq!(best_bss(list, &[5180], b"Test-WIFI"), None);
    }
}
