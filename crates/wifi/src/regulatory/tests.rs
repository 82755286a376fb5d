//! Tests of the regulatory rules on a wiphy and a domain laid out as the kernel sends
//! them, and of the centre frequencies the rules and the nl80211 requests carry.

use super::*;
use crate::channel::Band;
use crate::netlink::{genl_reply, split_messages, Attrs, Reply};
use crate::nl80211::{
    self, parse_reg, parse_wiphys, ApParams, ATTR_CENTER_FREQ1, ATTR_CHANNEL_WIDTH,
    ATTR_DFS_REGION, ATTR_FREQ_RANGE_END, ATTR_FREQ_RANGE_MAX_BW, ATTR_FREQ_RANGE_START,
    ATTR_POWER_RULE_MAX_EIRP, ATTR_REG_ALPHA2, ATTR_REG_RULES, ATTR_REG_RULE_FLAGS,
    ATTR_WIPHY_FREQ, FREQUENCY_ATTR_DISABLED, FREQUENCY_ATTR_NO_160MHZ, FREQUENCY_ATTR_NO_80MHZ,
    FREQUENCY_ATTR_NO_HT40_MINUS, FREQUENCY_ATTR_NO_HT40_PLUS, FREQUENCY_ATTR_NO_IR,
    FREQUENCY_ATTR_RADAR, RRF_AUTO_BW, RRF_DFS, RRF_NO_OUTDOOR,
};
use crate::testkit::{nest, nla, u32a, wiphy_msg};

const NO_IR: u16 = FREQUENCY_ATTR_NO_IR;
const RADAR: u16 = FREQUENCY_ATTR_RADAR;
const HT40M: u16 = FREQUENCY_ATTR_NO_HT40_MINUS;
const HT40P: u16 = FREQUENCY_ATTR_NO_HT40_PLUS;
const NO80: u16 = FREQUENCY_ATTR_NO_80MHZ;
const NO160: u16 = FREQUENCY_ATTR_NO_160MHZ;

/// A 2.4 + 5 GHz radio after `REQ_SET_REG` to a European domain, the flags as
/// reg.c's `reg_process_ht_flags` leaves them: ch 1 has no channel 4 below it (no
/// HT40-), ch 13 none above (no HT40+), ch 14 disabled; 5 GHz pairs 36+40 / 52+56 flag
/// the side without a partner, ch 52 is DFS and no-IR until a CAC, ch 140 lies in no
/// 80 MHz block the domain allows (132-144 reaches past 5725 MHz), ch 36 in no 160 MHz
/// block of the domain's 80 MHz rule.
fn phy() -> Wiphy {
    let msg = wiphy_msg(&[
        (2412, &[HT40M]),
        (2437, &[]),
        (2462, &[HT40P]),
        (2472, &[HT40P]),
        (2484, &[FREQUENCY_ATTR_DISABLED]),
        (5180, &[HT40M, NO160]),
        (5200, &[HT40P, NO160]),
        (5260, &[NO_IR, RADAR, HT40M, NO160]),
        (5700, &[NO_IR, RADAR, NO80, NO160]),
    ]);
    let mut w = parse_wiphys(&[&msg]).unwrap();
    assert_eq!(w.len(), 1);
    w.remove(0)
}

fn chandef(band: Band, channel: u8, width: Width) -> Chandef {
    Chandef::new(band, channel, width).unwrap()
}

/// The centre frequencies of IEEE 802.11-2020 Annex E as the kernel and iw compute
/// them: 40 MHz at 2.4 GHz is the primary ±10 MHz (net/wireless/chan.c,
/// `cfg80211_chandef_create`: HT40PLUS `center_freq + 10`, HT40MINUS `- 10`); 80 MHz
/// blocks start at 5180, 5260, 5500, 5580, 5660, 5745 MHz and are centred 30 MHz above
/// their first channel (iw util.c, `get_cf1`); 160 MHz blocks at 5180 and 5500, 70 MHz
/// above.
#[test]
fn centre_frequencies_follow_the_channel_tables() {
    let cases = [
        (Band::Ghz2, 6, Width::W40, 2437, 2447, Some(true)),
        (Band::Ghz2, 1, Width::W40, 2412, 2422, Some(true)),
        (Band::Ghz2, 11, Width::W40, 2462, 2452, Some(false)),
        (Band::Ghz2, 13, Width::W40, 2472, 2462, Some(false)),
        (Band::Ghz2, 6, Width::W20, 2437, 2437, None),
        (Band::Ghz5, 36, Width::W40, 5180, 5190, Some(true)),
        (Band::Ghz5, 44, Width::W40, 5220, 5230, Some(true)),
        (Band::Ghz5, 48, Width::W40, 5240, 5230, Some(false)),
        (Band::Ghz5, 36, Width::W80, 5180, 5210, None),
        (Band::Ghz5, 44, Width::W80, 5220, 5210, None),
        (Band::Ghz5, 52, Width::W80, 5260, 5290, None),
        (Band::Ghz5, 100, Width::W80, 5500, 5530, None),
        (Band::Ghz5, 161, Width::W80, 5805, 5775, None),
        (Band::Ghz5, 36, Width::W160, 5180, 5250, None),
        (Band::Ghz5, 128, Width::W160, 5640, 5570, None),
    ];
    for (band, ch, width, control, centre, above) in cases {
        let c = chandef(band, ch, width);
        assert_eq!(
            (c.control_mhz, c.center1_mhz, c.secondary_above()),
            (control, centre, above),
            "{band} ch {ch} at {} MHz",
            width.mhz()
        );
    }
    assert_eq!(
        chandef(Band::Ghz5, 36, Width::W80).center_channel(),
        Some(42)
    );
}

/// The attributes of the one request message `msg`.
fn request_attrs(msg: &[u8]) -> Vec<(u16, Vec<u8>)> {
    let msgs = split_messages(msg).unwrap();
    let Reply::Data { attrs, .. } = genl_reply(&msgs[0]).unwrap() else {
        panic!("not a data message")
    };
    Attrs::new(attrs)
        .unwrap()
        .map(|(t, v)| (t, v.to_vec()))
        .collect()
}

/// `START_AP` on channel 36 at 80 MHz carries the chandef as nl80211 reads it
/// (`nl80211_parse_chandef`): WIPHY_FREQ the primary, CHANNEL_WIDTH
/// `NL80211_CHAN_WIDTH_80` (3), CENTER_FREQ1 the block's centre 5210 MHz; channel 6
/// HT40+ gives width 2 (`NL80211_CHAN_WIDTH_40`) and centre 2447.
#[test]
fn requests_carry_the_centre_frequency() {
    let u32_of = |attrs: &[(u16, Vec<u8>)], ty| {
        attrs
            .iter()
            .find(|(t, _)| *t == ty)
            .map(|(_, v)| u32::from_le_bytes(v[..4].try_into().unwrap()))
    };
    for (c, width_attr, centre) in [
        (chandef(Band::Ghz5, 36, Width::W80), 3, 5210),
        (chandef(Band::Ghz2, 6, Width::W40), 2, 2447),
        (chandef(Band::Ghz5, 100, Width::W160), 5, 5570),
        (chandef(Band::Ghz2, 1, Width::W20), 1, 2412),
    ] {
        let msg = nl80211::start_ap(
            0x1c,
            1,
            3,
            &ApParams {
                beacon_head: &[0x80, 0],
                beacon_tail: &[],
                beacon_interval_tu: 100,
                dtim_period: 2,
                ssid: b"bb",
                chandef: c,
                psk: None,
                hidden: false,
                inactivity_timeout_s: None,
            },
        );
        let a = request_attrs(&msg);
        assert_eq!(u32_of(&a, ATTR_WIPHY_FREQ), Some(c.control_mhz));
        assert_eq!(u32_of(&a, ATTR_CHANNEL_WIDTH), Some(width_attr));
        assert_eq!(u32_of(&a, ATTR_CENTER_FREQ1), Some(centre));
    }
}

#[test]
fn the_domain_forbids_what_its_flags_say() {
    let p = phy();
    let f = |band, ch, width, ap| forbidden(&p, &chandef(band, ch, width), ap);
    // Allowed: plain 20 MHz channels; 40 MHz on the side the flags leave open.
    assert_eq!(f(Band::Ghz2, 6, Width::W20, true), None);
    assert_eq!(f(Band::Ghz2, 6, Width::W40, true), None);
    assert_eq!(f(Band::Ghz2, 1, Width::W40, true), None, "ch 1 HT40+");
    assert_eq!(f(Band::Ghz2, 11, Width::W40, true), None, "ch 11 HT40-");
    assert_eq!(f(Band::Ghz5, 36, Width::W40, true), None, "36 HT40+");
    assert_eq!(f(Band::Ghz5, 40, Width::W40, true), None, "40 HT40-");
    assert_eq!(f(Band::Ghz5, 36, Width::W80, true), None);
    // 13 HT40- is allowed (no-ht40+ only), the flag of the other side would refuse it.
    assert_eq!(f(Band::Ghz2, 13, Width::W40, true), None);
    // The channel.
    assert_eq!(
        f(Band::Ghz5, 165, Width::W20, false),
        Some(Forbidden::NoChannel { control_mhz: 5825 })
    );
    assert_eq!(
        f(Band::Ghz2, 14, Width::W20, false),
        Some(Forbidden::Disabled { control_mhz: 2484 })
    );
    // DFS and no-IR: an AP may not start there, a client may join.
    assert_eq!(f(Band::Ghz5, 52, Width::W20, true), Some(Forbidden::Radar));
    assert_eq!(f(Band::Ghz5, 52, Width::W20, false), None);
    let no_ir_only = wiphy_msg(&[(2472, &[NO_IR])]);
    let q = &parse_wiphys(&[&no_ir_only]).unwrap()[0];
    let c13 = chandef(Band::Ghz2, 13, Width::W20);
    assert_eq!(forbidden(q, &c13, true), Some(Forbidden::NoIr));
    assert_eq!(forbidden(q, &c13, false), None);
    // Widths.
    let too_wide = |width_mhz, control_mhz| {
        Some(Forbidden::TooWide {
            width_mhz,
            control_mhz,
        })
    };
    assert_eq!(f(Band::Ghz5, 52, Width::W40, false), None, "52 HT40+");
    assert_eq!(f(Band::Ghz2, 11, Width::W20, false), None);
    let ht40_plus_on_11 = wiphy_msg(&[(2462, &[HT40M])]);
    let q = &parse_wiphys(&[&ht40_plus_on_11]).unwrap()[0];
    assert_eq!(
        forbidden(q, &chandef(Band::Ghz2, 11, Width::W40), false),
        too_wide(40, 2462),
        "ch 11 at 40 MHz is HT40-: its no-ht40- flag counts"
    );
    assert_eq!(
        f(Band::Ghz5, 40, Width::W20, false),
        None,
        "no-ht40+ says nothing of 20 MHz"
    );
    let ht40_plus_refused = wiphy_msg(&[(2437, &[HT40P])]);
    let q = &parse_wiphys(&[&ht40_plus_refused]).unwrap()[0];
    assert_eq!(
        forbidden(q, &chandef(Band::Ghz2, 6, Width::W40), false),
        too_wide(40, 2437),
        "ch 6 at 40 MHz is HT40+"
    );
    assert_eq!(f(Band::Ghz5, 140, Width::W80, false), too_wide(80, 5700));
    assert_eq!(f(Band::Ghz5, 36, Width::W160, false), too_wide(160, 5180));
    // Disabled before radar, radar before no-IR, no-IR before width.
    assert_eq!(f(Band::Ghz5, 140, Width::W80, true), Some(Forbidden::Radar));
}

#[test]
fn reasons_name_the_entry_and_the_domain() {
    let asked = "5 GHz ch 52 20 MHz";
    assert_eq!(
        Forbidden::NoChannel { control_mhz: 5825 }.reason(asked, "DE"),
        "the radio has no 5825 MHz channel (5 GHz ch 52 20 MHz)"
    );
    assert_eq!(
        Forbidden::Disabled { control_mhz: 2484 }.reason("2.4 GHz ch 14 20 MHz", "DE"),
        "2.4 GHz ch 14 20 MHz (2484 MHz) is not allowed in regulatory domain DE"
    );
    assert_eq!(
        Forbidden::Radar.reason(asked, "DE"),
        "5 GHz ch 52 20 MHz is a DFS channel in DE: an AP must first listen for radar for 60 s or more (CAC); not measured"
    );
    assert_eq!(
        Forbidden::NoIr.reason(asked, "US"),
        "5 GHz ch 52 20 MHz is no-IR (passive only) in US: no AP may start there"
    );
    assert_eq!(
        Forbidden::TooWide {
            width_mhz: 80,
            control_mhz: 5700
        }
        .reason(asked, "DE"),
        "80 MHz around 5700 is not allowed in DE (channel flags)"
    );
}

#[test]
fn channel_flags_in_results_order() {
    let p = phy();
    assert_eq!(channel_flags(&p, 2437), Vec::<&str>::new());
    assert_eq!(channel_flags(&p, 2412), ["no-ht40-"]);
    assert_eq!(channel_flags(&p, 2484), ["disabled"]);
    assert_eq!(
        channel_flags(&p, 5260),
        ["no-ir", "radar", "no-ht40-", "no-160mhz"]
    );
    assert_eq!(
        channel_flags(&p, 5700),
        ["no-ir", "radar", "no-80mhz", "no-160mhz"]
    );
    assert_eq!(channel_flags(&p, 5200), ["no-ht40+", "no-160mhz"]);
    assert_eq!(channel_flags(&p, 5825), ["absent"]);
}

/// Germany's domain as `nl80211_put_regdom` writes it (rules as wireless-regdb's
/// db.txt gives DE): 2400-2483.5 @ 40 (100 mW), 5150-5250 @ 80 (200 mW, NO-OUTDOOR,
/// AUTO-BW), 5250-5350 @ 80 (100 mW, NO-OUTDOOR, DFS, AUTO-BW).
#[test]
fn domain_rules_as_results_write_them() {
    let rule = |i, flags, start, end, bw, eirp| {
        nest(
            i,
            &[
                u32a(ATTR_REG_RULE_FLAGS, flags),
                u32a(ATTR_FREQ_RANGE_START, start),
                u32a(ATTR_FREQ_RANGE_END, end),
                u32a(ATTR_FREQ_RANGE_MAX_BW, bw),
                u32a(ATTR_POWER_RULE_MAX_EIRP, eirp),
            ],
        )
    };
    let attrs = [
        nla(ATTR_REG_ALPHA2, b"DE\0"),
        nla(ATTR_DFS_REGION, &[2]),
        nest(
            ATTR_REG_RULES,
            &[
                rule(0, 0, 2_400_000, 2_483_500, 40_000, 2000),
                rule(
                    1,
                    RRF_NO_OUTDOOR | RRF_AUTO_BW,
                    5_150_000,
                    5_250_000,
                    80_000,
                    2301,
                ),
                rule(
                    2,
                    RRF_NO_OUTDOOR | RRF_DFS | RRF_AUTO_BW,
                    5_250_000,
                    5_350_000,
                    80_000,
                    2000,
                ),
            ],
        ),
    ]
    .concat();
    let reg = parse_reg(&attrs).unwrap();
    let lines: Vec<String> = reg.rules.iter().map(rule_line).collect();
    assert_eq!(
        lines,
        [
            "2400-2483 MHz @ 40 MHz, 20.00 dBm",
            "5150-5250 MHz @ 80 MHz, 23.01 dBm, NO-OUTDOOR AUTO-BW",
            "5250-5350 MHz @ 80 MHz, 20.00 dBm, NO-OUTDOOR DFS AUTO-BW",
        ]
    );
    assert_eq!(dfs_region_name(reg.dfs_region.unwrap()), "ETSI");
    assert_eq!(
        [0, 1, 3, 9].map(dfs_region_name),
        ["unset", "FCC", "JP", "unset"]
    );
}
