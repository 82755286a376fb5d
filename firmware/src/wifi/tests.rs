//! Tests of the WiFi step's choices that need no radio: the plan's problems stop it
//! before nl80211 with every entry recorded, the entry records (role, security, which
//! SSIDs are written out, the asked channel), the chip revision from the kernel log.
use super::*;
use crate::netkit::fake::{events, results};
use benchboot_plan::WifiSecurity;
use benchboot_results::wifi::BandName;
use benchboot_wifi::channel::{Band, Chandef, Width};

fn client(passphrase: Option<&str>) -> WifiPlan {
    WifiPlan {
        country: "DE".into(),
        role: WifiRole::Client {
            ssid: "home-net".into(),
            passphrase: passphrase.map(str::to_owned),
            peer: None,
        },
        entries: vec![entry("ch6", None), entry("qemu", Some("bb-qemu-ap"))],
        connect_wait_ms: 0,
        warmup_ms: 0,
        problems: Vec::new(),
        stand_in: None,
        tests: None,
        chip: None,
        firmware_missing: None,
    }
}

fn entry(name: &str, ssid: Option<&str>) -> WifiEntry {
    WifiEntry {
        name: name.into(),
        asked: None,
        ssid: ssid.map(str::to_owned),
        skip: None,
    }
}

fn plan_with(w: WifiPlan) -> Plan {
    let mut p = Plan::example();
    p.network.tests = Some(NetTests::hardware());
    p.network.wifi = Some(w);
    p
}

#[test]
fn plan_problems_are_errors_and_every_entry_is_recorded_skipped() {
    let mut w = client(None);
    w.problems = vec!["no country".into(), "bad channel".into()];
    let plan = plan_with(w);
    let mut r = results(&plan);
    assert!(preflight(&plan, &mut r).is_none());
    let ev = events(&r);
    assert_eq!(ev.len(), 2, "{ev:?}");
    assert!(ev
        .iter()
        .all(|e| e.0 == "network.wifi" && e.1 == Severity::Error));
    assert_eq!(ev[1].2, "bad channel");
    let entries = &r.network.wifi.entries;
    assert_eq!(entries.len(), 2);
    assert!(entries
        .iter()
        .all(|e| e.skipped.as_deref() == Some("not run: see the WiFi errors above")));
    assert_eq!(entries[1].link, "qemu");
}

#[test]
fn the_step_runs_only_with_a_wifi_plan_and_tests() {
    let plan = plan_with(client(None));
    let mut r = results(&plan);
    let (w, tests) = preflight(&plan, &mut r).unwrap();
    assert_eq!(w.country, "DE");
    assert_eq!(tests, plan.network.tests.as_ref().unwrap());
    // The WiFi plan's own tests win over the network's.
    let mut w = client(None);
    w.tests = Some(NetTests {
        peer_port: 6000,
        ..NetTests::hardware()
    });
    let plan = plan_with(w);
    assert_eq!(preflight(&plan, &mut r).unwrap().1.peer_port, 6000);
    let mut plan = plan_with(client(None));
    plan.network.tests = None;
    assert!(preflight(&plan, &mut r).is_none());
    plan.network.wifi = None;
    assert!(preflight(&plan, &mut r).is_none());
    assert!(r.events.is_empty() && r.network.wifi.entries.is_empty());
}

#[test]
fn entry_records_write_out_only_the_boards_own_ssids() {
    let w = client(Some("secret-pass"));
    let home = entry_record(&w, &w.entries[0]);
    assert_eq!(
        (home.role.as_str(), home.security.as_str()),
        ("client", "wpa2")
    );
    assert_eq!(home.ssid, None, "the user's SSID is never written out");
    assert_eq!(home.ssid_hash, psk::ssid_hash(b"home-net"));
    let own = entry_record(&w, &w.entries[1]);
    assert_eq!(own.ssid.as_deref(), Some("bb-qemu-ap"));
    assert_eq!(own.ssid_hash, psk::ssid_hash(b"bb-qemu-ap"));
    assert_eq!(entry_record(&client(None), &w.entries[0]).security, "open");
    let ap = WifiPlan {
        role: WifiRole::AccessPoint {
            security: WifiSecurity::Wpa2Psk,
        },
        ..client(None)
    };
    let r = entry_record(&ap, &entry("ap", Some("bb-ap")));
    assert_eq!((r.role.as_str(), r.security.as_str()), ("ap", "wpa2"));
    assert_eq!(r.ssid.as_deref(), Some("bb-ap"));
    // An AP entry without an SSID has no hash to write.
    assert_eq!(entry_record(&ap, &entry("x", None)).ssid_hash, "");
}

#[test]
fn channels_are_recorded_by_band_number_and_width() {
    let c = Chandef::new(Band::Ghz5, 36, Width::W80).unwrap();
    let rec = channel_record(&c);
    assert_eq!(rec.band, BandName::Ghz5);
    assert_eq!((rec.channel, rec.freq_mhz, rec.width_mhz), (36, 5180, 80));
    assert_eq!(rec.center1_mhz, 5210);
    assert!(!rec.no_ht);
    let legacy = channel_record(&Chandef::new(Band::Ghz2, 1, Width::NoHt20).unwrap());
    assert_eq!((legacy.band, legacy.freq_mhz), (BandName::Ghz2, 2412));
    assert!(legacy.no_ht);
}

#[test]
fn the_chip_revision_is_read_from_brcmfmacs_line() {
    let log = "[    5.1] brcmfmac: F1 signature read @0x18000000=0x1541a9a6\n\
               [    5.3] brcmfmac: brcmf_c_preinit_dcmds: Firmware: BCM43430/1 wl0: Oct 23 2017 03:55:53 version 7.45.98.38\n";
    assert_eq!(chip_revision_in(log).as_deref(), Some("BCM43430/1"));
    assert_eq!(chip_revision_in("no radio here\n"), None);
}

#[test]
fn interface_types_use_iws_names() {
    assert_eq!(iftype_name(IfType::Station), "station");
    assert_eq!(iftype_name(IfType::MeshPoint), "mesh");
    assert_eq!(iftype_name(IfType::P2pGo), "p2p-go");
}
