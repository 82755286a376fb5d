//! Tests of the network step plans: gadget order, and WiFi entries against a radio's
//! channel flags.

use benchboot_wifi::channel::Band;
use benchboot_wifi::nl80211::{BandInfo, FreqInfo};

use super::*;
use crate::spelling::WifiBand;
use crate::wifi::{AskedChannel, WifiStandIn};

#[test]
fn gadget_functions_in_turn_or_at_once() {
    let mut g = GadgetPlan::default_for("rpi3b");
    assert_eq!(
        gadget_steps(&g),
        [GadgetStep::Composite {
            functions: vec![
                GadgetFunction::Ncm,
                GadgetFunction::Ecm,
                GadgetFunction::Rndis
            ]
        }]
    );
    g.in_turn = true;
    g.functions = vec![GadgetFunction::Rndis, GadgetFunction::Ncm];
    assert_eq!(
        gadget_steps(&g),
        [
            GadgetStep::InTurn {
                index: 0,
                function: GadgetFunction::Rndis,
                attempts: 2
            },
            GadgetStep::InTurn {
                index: 1,
                function: GadgetFunction::Ncm,
                attempts: 2
            },
        ]
    );
}

/// A channel with only the flags named set.
fn freq(mhz: u32, flags: &[&str]) -> FreqInfo {
    let on = |n| flags.contains(&n);
    FreqInfo {
        mhz,
        disabled: on("disabled"),
        no_ir: on("no-ir"),
        radar: on("radar"),
        no_ht40_minus: on("no-ht40-"),
        no_ht40_plus: on("no-ht40+"),
        no_80mhz: on("no-80mhz"),
        no_160mhz: on("no-160mhz"),
        max_power_mbm: Some(2000),
    }
}

/// A 2.4 + 5 GHz radio in domain DE: ch 1 open, ch 13 no-ht40+, ch 36 open, ch 52 DFS
/// (radar, no-IR), ch 140 no-80mhz; ch 165 absent.
fn phy() -> Wiphy {
    let band = |band, freqs| BandInfo {
        band,
        ht_capa: None,
        vht_capa: None,
        freqs,
    };
    Wiphy {
        index: 0,
        name: "phy0".into(),
        bands: vec![
            band(
                Band::Ghz2,
                vec![freq(2412, &["no-ht40-"]), freq(2472, &["no-ht40+"])],
            ),
            band(
                Band::Ghz5,
                vec![
                    freq(5180, &["no-ht40-"]),
                    freq(5260, &["no-ir", "radar"]),
                    freq(5700, &["no-80mhz"]),
                ],
            ),
        ],
        ..Wiphy::default()
    }
}

fn entry(band: WifiBand, channel: u8, width_mhz: u32, skip: Option<&str>) -> WifiEntry {
    WifiEntry {
        name: format!("wifi-ch{channel}-{width_mhz}"),
        asked: Some(AskedChannel {
            band,
            channel,
            width_mhz,
        }),
        ssid: Some(format!("bb-ch{channel}")),
        skip: skip.map(str::to_owned),
    }
}

fn plan(role: WifiRole, stand_in: Option<WifiStandIn>) -> WifiPlan {
    WifiPlan {
        country: "DE".into(),
        role,
        entries: vec![
            entry(WifiBand::Ghz2, 1, 40, None),
            entry(WifiBand::Ghz5, 52, 20, None),
            entry(WifiBand::Ghz5, 36, 80, Some("the radio has no 80 MHz")),
            entry(WifiBand::Ghz5, 140, 80, None),
            entry(WifiBand::Ghz5, 165, 20, None),
            entry(WifiBand::Ghz2, 13, 40, None),
            // Skipped by the plan and forbidden by the domain: the plan's reason.
            entry(WifiBand::Ghz5, 165, 40, Some("the radio has no 5.8 GHz")),
        ],
        connect_wait_ms: 30_000,
        warmup_ms: 3000,
        problems: vec![],
        stand_in,
        tests: None,
        chip: None,
        firmware_missing: None,
    }
}

fn actions(s: &WifiSteps) -> Vec<(String, WifiAction)> {
    s.entries
        .iter()
        .map(|(e, a)| (e.name.clone(), a.clone()))
        .collect()
}

#[test]
fn an_ap_sweep_skips_what_the_domain_forbids_an_ap() {
    let w = plan(
        WifiRole::AccessPoint {
            security: WifiSecurity::Wpa2Psk,
        },
        None,
    );
    let ap = WifiAction::AccessPoint(WifiSecurity::Wpa2Psk);
    let skip = |s: &str| WifiAction::Skip(s.into());
    let steps = wifi_steps(&w, &phy());
    assert_eq!(
        actions(&steps),
        [
            ("wifi-ch1-40".into(), ap.clone()),
            (
                "wifi-ch52-20".into(),
                skip("5 GHz ch 52 20 MHz is a DFS channel in DE: an AP must first listen for radar for 60 s or more (CAC); not measured")
            ),
            ("wifi-ch36-80".into(), skip("the radio has no 80 MHz")),
            (
                "wifi-ch140-80".into(),
                skip("80 MHz around 5700 is not allowed in DE (channel flags)")
            ),
            (
                "wifi-ch165-20".into(),
                skip("the radio has no 5825 MHz channel (5 GHz ch 165 20 MHz)")
            ),
            ("wifi-ch13-40".into(), ap),
            ("wifi-ch165-40".into(), skip("the radio has no 5.8 GHz")),
        ]
    );
    assert!(steps.checks.is_empty());
}

#[test]
fn a_client_may_join_on_dfs_but_the_stand_in_ap_may_not() {
    let client = WifiRole::Client {
        ssid: "home".into(),
        passphrase: None,
        peer: None,
    };
    let w = plan(client.clone(), None);
    assert!(!ap_side(&w));
    let steps = wifi_steps(&w, &phy());
    let a = actions(&steps);
    assert_eq!(a[0].1, WifiAction::Client);
    assert_eq!(a[1].1, WifiAction::Client, "DFS: the user's AP did the CAC");
    assert_eq!(a[2].1, WifiAction::Skip("the radio has no 80 MHz".into()));
    assert!(
        matches!(a[3].1, WifiAction::Skip(_)),
        "width flags bind clients too"
    );
    // QEMU: the stand-in's hostapd is an AP on the entry's channel.
    let stand_in = WifiStandIn {
        hostapd: "/usr/sbin/hostapd".into(),
        ap_beacon_check: true,
        ibss_smoke: true,
    };
    let w = plan(client, Some(stand_in.clone()));
    assert!(ap_side(&w));
    let steps = wifi_steps(&w, &phy());
    assert!(matches!(actions(&steps)[1].1, WifiAction::Skip(_)));
    assert_eq!(
        steps.checks,
        [WifiCheckStep::ApBeacons, WifiCheckStep::Ibss]
    );
    let only_ibss = WifiStandIn {
        ap_beacon_check: false,
        ..stand_in
    };
    let w = plan(
        WifiRole::AccessPoint {
            security: WifiSecurity::Open,
        },
        Some(only_ibss),
    );
    assert_eq!(wifi_steps(&w, &phy()).checks, [WifiCheckStep::Ibss]);
}
