//! Tests of the element reader and the beacon writer: real captures, hand-built elements,
//! truncated and hostile input.

use super::beacon::WMM_PARAMETERS;
use super::*;
use crate::channel::{Band, Chandef, Width};

fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

const MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x01, 0x00];
/// CYW43455-like: LDPC off, HT20/40, SM PS disabled, SGI 20/40, DSSS/CCK 40.
const HT_CAPA: u16 = 0x1062 | 0x000c;
const VHT_CAPA: u32 = 0x0000_0060;

fn params(band: Band, channel: u8, width: Width) -> BeaconParams<'static> {
    BeaconParams {
        mac: MAC,
        ssid: b"benchboot",
        chandef: Chandef::new(band, channel, width).unwrap(),
        beacon_interval_tu: 100,
        wpa2: true,
        country: *b"DE",
        ht_capa: Some(HT_CAPA),
        vht_capa: Some(VHT_CAPA),
    }
}

/// The elements of head (after the 24-octet header and 12 octets of fixed fields)
/// and tail, as a scan would see them (the kernel's TIM between them left out).
fn built(p: &BeaconParams) -> (Vec<u8>, Ies) {
    let (head, tail) = beacon(p).unwrap();
    let mut ies = head[36..].to_vec();
    ies.extend_from_slice(&tail);
    let parsed = parse(&ies);
    (head, parsed)
}

#[test]
fn beacon_head_is_the_header_fixed_fields_ssid_rates_and_channel() {
    let (head, tail) = beacon(&params(Band::Ghz2, 1, Width::W20)).unwrap();
    let want = unhex(
        "8000 0000 ffffffffffff 020000000100 020000000100 0000
         0000000000000000 6400 3104
         0009 62656e6368626f6f74
         0108 82848b960c121824
         0301 01",
    );
    assert_eq!(head, want);
    // Country, ERP, Extended Supported Rates, RSN lead the tail, in §9.3.3.2 order.
    let want_tail = unhex(
        "0706 444520 010d14
         2a01 00
         3204 3048606c
         3014 0100 000fac04 0100 000fac04 0100 000fac02 0c00",
    );
    assert_eq!(tail[..want_tail.len()], want_tail[..]);
    // The WMM Parameter element closes it.
    let wmm = &tail[tail.len() - 26..];
    assert_eq!((wmm[0], wmm[1]), (EID_VENDOR_SPECIFIC, 24));
    assert_eq!(wmm[2..], WMM_PARAMETERS);
}

#[test]
fn built_beacons_parse_back_to_their_channel() {
    let cases = [
        (Band::Ghz2, 1, Width::W20, 2412, None),
        (Band::Ghz2, 11, Width::W40, 2452, Some(3)),
        (Band::Ghz5, 36, Width::W40, 5190, Some(1)),
        (Band::Ghz5, 36, Width::W80, 5210, Some(1)),
        (Band::Ghz5, 48, Width::W80, 5210, Some(3)),
        (Band::Ghz5, 100, Width::W160, 5570, Some(1)),
        (Band::Ghz5, 128, Width::W160, 5570, Some(3)),
    ];
    for (band, channel, width, centre, offset) in cases {
        let p = params(band, channel, width);
        let (_, ies) = built(&p);
        let what = format!("{band} ch{channel}/{}", width.mhz());
        assert_eq!(ies.ssid.as_deref(), Some(&b"benchboot"[..]), "{what}");
        assert_eq!(ies.ds_channel, Some(channel), "{what}");
        assert_eq!(ies.primary_channel(), Some(channel), "{what}");
        assert_eq!(ies.country.as_deref(), Some("DE"), "{what}");
        assert_eq!(ies.width(band), width, "{what}");
        assert_eq!(ies.center1_mhz(band), Some(centre), "{what}");
        assert_eq!(ies.chandef(band), Some(p.chandef), "{what}");
        let ht = ies.ht_operation.unwrap();
        assert_eq!(ht.secondary_offset, offset.unwrap_or(0), "{what}");
        assert_eq!(ht.sta_channel_width_any, offset.is_some(), "{what}");
        let wide = width.mhz() >= 80;
        assert_eq!(ies.vht_operation.is_some(), wide, "{what}");
        assert_eq!(ies.has_vht_capabilities, wide, "{what}");
        assert!(ies.has_ht_capabilities, "{what}");
        assert!(ies.rsn.as_ref().unwrap().wpa2_psk_ccmp(), "{what}");
    }
    // 160 MHz: segment 0 the primary's 80 MHz half, segment 1 the whole channel.
    let (_, ies) = built(&params(Band::Ghz5, 128, Width::W160));
    assert_eq!(
        ies.vht_operation,
        Some(VhtOperation {
            channel_width: 1,
            seg0: 122,
            seg1: 114
        })
    );
}

#[test]
fn every_channel_round_trips() {
    let widths = [Width::W20, Width::W40, Width::W80, Width::W160];
    let mut n = 0;
    for (band, channels) in [(Band::Ghz2, 1..=14), (Band::Ghz5, 32..=177)] {
        for channel in channels {
            for width in widths {
                let Ok(chandef) = Chandef::new(band, channel, width) else {
                    continue;
                };
                let p = BeaconParams {
                    chandef,
                    ..params(Band::Ghz2, 1, Width::W20)
                };
                let (_, ies) = built(&p);
                assert_eq!(
                    ies.chandef(band),
                    Some(chandef),
                    "{band} {channel} {width:?}"
                );
                n += 1;
            }
        }
    }
    assert!(n > 100, "{n}");
}

#[test]
fn garbage_never_panics() {
    let mut x: u32 = 1;
    let mut next = || {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        (x >> 16) as u8
    };
    for _ in 0..2000 {
        let len = usize::from(next());
        let bytes: Vec<u8> = (0..len).map(|_| next()).collect();
        let ies = parse(&bytes);
        let _ = (ies.chandef(Band::Ghz2), ies.chandef(Band::Ghz5));
    }
}

#[test]
fn rates_and_capabilities_follow_the_band() {
    let (head, ies) = built(&params(Band::Ghz2, 6, Width::W20));
    assert_eq!(
        ies.supported_rates_500kbps,
        [2, 4, 11, 22, 12, 18, 24, 36, 48, 72, 96, 108]
    );
    assert_eq!(u16::from_le_bytes([head[34], head[35]]), 0x0431);
    let mut open = params(Band::Ghz5, 36, Width::W20);
    open.wpa2 = false;
    let (head, ies) = built(&open);
    assert_eq!(
        ies.supported_rates_500kbps,
        [12, 18, 24, 36, 48, 72, 96, 108]
    );
    assert_eq!(u16::from_le_bytes([head[34], head[35]]), 0x0001);
    assert_eq!(ies.rsn, None);
    // HT Capabilities at 20 MHz: no 40 MHz support or 40 MHz short GI advertised.
    let (_, tail) = beacon(&open).unwrap();
    let (_, ht_cap) = elements(&tail)
        .find(|&(id, _)| id == EID_HT_CAPABILITIES)
        .unwrap();
    assert_eq!(u16::from_le_bytes([ht_cap[0], ht_cap[1]]), HT_CAPA & !0x42);
}

#[test]
fn a_radio_without_ht_beacons_802_11g() {
    let mut p = params(Band::Ghz2, 6, Width::W20);
    p.ht_capa = None;
    p.vht_capa = None;
    let (_, ies) = built(&p);
    assert_eq!(ies.ht_operation, None);
    assert_eq!(ies.width(Band::Ghz2), Width::NoHt20);
    assert_eq!(ies.center1_mhz(Band::Ghz2), Some(2437));
}

#[test]
fn impossible_beacons_are_refused() {
    let mut p = params(Band::Ghz2, 1, Width::W40);
    p.ht_capa = None;
    assert_eq!(
        beacon(&p),
        Err(BeaconError::Unsupported {
            width: 40,
            needs: "HT (802.11n)"
        })
    );
    let mut p = params(Band::Ghz5, 36, Width::W80);
    p.vht_capa = None;
    assert!(matches!(
        beacon(&p),
        Err(BeaconError::Unsupported { width: 80, .. })
    ));
    let long = [b'x'; 33];
    let mut p = params(Band::Ghz2, 1, Width::W20);
    p.ssid = &long;
    assert_eq!(beacon(&p), Err(BeaconError::SsidTooLong(33)));
    let mut p = params(Band::Ghz2, 1, Width::W20);
    p.country = *b"de";
    assert!(matches!(beacon(&p), Err(BeaconError::Country(_))));
    let mut p = params(Band::Ghz5, 36, Width::W40);
    p.chandef.center1_mhz = 5200;
    assert!(matches!(beacon(&p), Err(BeaconError::BadCentre { .. })));
    p.chandef.control_mhz = 5000;
    assert_eq!(beacon(&p), Err(BeaconError::NoChannel(5000)));
}

#[test]
fn ht40_sign_within_wide_blocks() {
    let sign = |ch, w| ht40_above(&Chandef::new(Band::Ghz5, ch, w).unwrap());
    assert_eq!(
        [36, 40, 44, 48].map(|c| sign(c, Width::W80)),
        [Some(true), Some(false), Some(true), Some(false)]
    );
    assert_eq!(sign(149, Width::W80), Some(true));
    assert_eq!(sign(161, Width::W80), Some(false));
    assert_eq!(sign(36, Width::W160), Some(true));
    assert_eq!(sign(64, Width::W160), Some(false));
    assert_eq!(sign(36, Width::W20), None);
    let c = Chandef::new(Band::Ghz2, 11, Width::W40).unwrap();
    assert_eq!(ht40_above(&c), Some(false));
}

/// A probe response of a real 5 GHz AP ("SevenNodes-50G-36", channel 36, 80 MHz, UK),
/// from the capture in kisom/pypcapfile `pcapfile/test/protocols_linklayer_wifi.py`
/// (`PROBE_RESPONSE`): its elements, after the 26-octet radiotap header, 24-octet
/// header and 12 octets of fixed fields.
const SEVENNODES_5GHZ_IES: &str = "
    0011536576656e4e6f6465732d3530472d3336 01088c129824b048606c
    07344742202401172801172c01173001173401173801173c011740011764011e68011e6c011e70011e
    74011e84011e88011e8c011e00 200100 23021400
    30140100000fac040100000fac040100000fac028000 0b0500004a0000
    2d1aef0917ffffff0000000000000000000000000000000000000000
    3d16240d0000000000000000000000000000000000000000 7f080000080000000040
    bf0cb259820feaff0000eaff0000 c005012a000000 c30402020202
    dd0b001ca8500101f5ba76e02a
    ddb00050f204104a0001101044000102103b00010310470010ac79c11cfad8dd17641ce15acd136f0a
    10210003536b7910230005455231313010240007312e302e302e301042000e41543133353132303330
    303030311054000800060050f204000110110009536b7920512048756210080002200c103c00010210
    49000e00372a0001200106ffffffffffff10580022007fc510001894c9f0c1646f4e2465260def16ec
    2b38303030303537616530000101
    dd090010180200001c0000 dd180050f2020101840003a4000027a4000042435e0062322f00
    46057200010000";

/// A beacon of a real AirTies Air 4820 ("AirTies_Air4820_01A9", channel 108, 80 MHz,
/// France, open), same capture (`BEACON_PACKET`).
const AIRTIES_5GHZ_IES: &str = "
    0014416972546965735f416972343832305f30314139 01088c1298243048606c 03016c
    051302030000000000000000000000000000000000
    07344652202401172801172c01173001173401173801173c011740011764011e68011e6c011e70011e
    74011e84011e88011e8c011e00 200100 c305021e1e1e00 2a0100
    2d1a6f0817fffffffffeffffffff1f000001000000000018e6e71900
    3d166c050000000000000000000000000000000000000000
    dd180050f2020101860003a4000027a4000042435e0062322f00
    bf0c3240c33faaff0000aaff0000 c005016a00fcff
    dd1e002686010300dd000000250400380006019a576938d30000000000000000
    dd37001ca837014169723438323000000000007168733834300000000054575f302e320000000031
    2e32362e322e3000000000000200000003
    dd0b001ca85001012a01aae26a
    dd5f0050f204104a0001101044000102104700108b3fddc4c80f0c0952b876f9549af4ca103c000102
    1049000e00372a0001200106ffffffffffff10490022007fc51000183737323838353834333933373535
    35333338383739323866300001 01";

#[test]
fn a_real_probe_response_parses() {
    let ies = parse(&unhex(SEVENNODES_5GHZ_IES));
    assert_eq!(ies.ssid.as_deref(), Some(&b"SevenNodes-50G-36"[..]));
    assert_eq!(ies.country.as_deref(), Some("GB"));
    assert_eq!(ies.ds_channel, None);
    assert_eq!(
        ies.ht_operation,
        Some(HtOperation {
            primary: 36,
            secondary_offset: 1,
            sta_channel_width_any: true
        })
    );
    assert_eq!(
        ies.vht_operation,
        Some(VhtOperation {
            channel_width: 1,
            seg0: 42,
            seg1: 0
        })
    );
    assert!(ies.has_ht_capabilities && ies.has_vht_capabilities);
    assert_eq!(
        ies.rsn,
        Some(Rsn {
            pairwise: vec![CIPHER_CCMP],
            akm: vec![AKM_PSK],
            group: CIPHER_CCMP
        })
    );
    assert_eq!(
        ies.supported_rates_500kbps,
        [12, 18, 24, 36, 48, 72, 96, 108]
    );
    assert_eq!(ies.width(Band::Ghz5), Width::W80);
    assert_eq!(ies.center1_mhz(Band::Ghz5), Some(5210));
}

#[test]
fn a_real_beacon_parses() {
    let ies = parse(&unhex(AIRTIES_5GHZ_IES));
    assert_eq!(ies.ssid.as_deref(), Some(&b"AirTies_Air4820_01A9"[..]));
    assert_eq!(ies.country.as_deref(), Some("FR"));
    assert_eq!(ies.ds_channel, Some(108));
    assert_eq!(ies.rsn, None);
    assert_eq!(ies.width(Band::Ghz5), Width::W80);
    // Channel 108 (5540 MHz, the capture's radiotap frequency) in the block on 106.
    assert_eq!(
        ies.chandef(Band::Ghz5),
        Some(Chandef {
            control_mhz: 5540,
            width: Width::W80,
            center1_mhz: 5530
        })
    );
}

#[test]
fn truncated_and_malformed_input_gives_what_was_read() {
    let full = unhex(SEVENNODES_5GHZ_IES);
    for len in 0..full.len() {
        let ies = parse(&full[..len]);
        // The SSID element is 19 octets; it is there exactly when it is whole.
        assert_eq!(ies.ssid.is_some(), len >= 19, "cut at {len}");
    }
    // An element running past the end is dropped, with everything after it.
    assert_eq!(parse(&unhex("0005 6162")), Ies::default());
    assert_eq!(parse(&unhex("0301 06 3d")).ds_channel, Some(6));
    // Too-short bodies of elements that need a few octets are skipped.
    let ies = parse(&unhex("3d01 24 c00201 2a 0300 0701 44 3000"));
    assert_eq!(
        (ies.ht_operation, ies.vht_operation, ies.ds_channel),
        (None, None, None)
    );
    assert_eq!((ies.country, ies.rsn), (None, None));
    // RSN: only the version means the defaults; a cut list keeps its whole suites.
    let rsn = parse(&unhex("3002 0100")).rsn.unwrap();
    assert_eq!(
        (rsn.group, rsn.pairwise, rsn.akm),
        (CIPHER_CCMP, vec![CIPHER_CCMP], vec![AKM_8021X])
    );
    let rsn = parse(&unhex("300e 0100 000fac02 0200 000fac04 000f"))
        .rsn
        .unwrap();
    assert_eq!(
        (rsn.group, rsn.pairwise, rsn.akm),
        (CIPHER_TKIP, vec![CIPHER_CCMP], vec![AKM_8021X])
    );
    assert_eq!(parse(&unhex("3004 0200 000f")).rsn, None);
    // Membership selectors (HT PHY 0xff, SAE H2E 0xfb) are not rates.
    let ies = parse(&unhex("0104 82 84 ff fb 3201 6c"));
    assert_eq!(ies.supported_rates_500kbps, [2, 4, 108]);
}
