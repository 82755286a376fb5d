//! The WiFi step of PID 1: the plan's `network.wifi`, after the wired links. This file
//! is the step's order; the roles and the QEMU stand-in sit beside it.
//!
//! 1. The radio: the first wiphy the kernel lists (brcmfmac probes it after loading its
//!    firmware, so PID 1 waits for it), the country set from the plan and read back, the
//!    facts recorded (driver, firmware version, chip revision, bands, offloads).
//! 2. Per entry, in plan order (the plan crate's `net_steps::wifi_steps`): skipped when
//!    the plan says so or the regulatory domain forbids its channel, else the board as client
//!    ([`client`]: scan, `CONNECT`, lease, peer, tests) or as AP ([`ap`]: `START_AP`, a
//!    DHCP server, the offer to `benchboot peer --wifi`, tests); power save off and the
//!    station read around the tests ([`measure`]).
//! 3. QEMU only ([`standin`]): the board's AP beacons seen by the other hwsim radio,
//!    then an IBSS smoke between the two.
//!
//! Every failure is one error event naming the entry; the next entry and the rest of
//! the plan run.

mod ap;
mod client;
mod hold;
mod standin;

use std::net::Ipv4Addr;
use std::time::Duration;

use benchboot_plan::net_steps::{self, WifiAction, WifiCheckStep};
use benchboot_plan::{NetTests, Plan, WifiEntry, WifiPlan, WifiRole};
use benchboot_results::wifi::{
    BandName, Bitrate, RadioFacts, Regulatory, StationInfo, WifiChannel, WifiEntryResult,
};
use benchboot_results::{RunResults, Severity};
use benchboot_wifi::channel::{Band, Chandef, Width};
use benchboot_wifi::nl80211::{self, IfType, Interface, RateInfo, Station, Wiphy};
use benchboot_wifi::{psk, rate, regulatory};

use crate::console::say;
use crate::network::fail;
use crate::radio::Radio;
use crate::wait::wait_until;
use crate::wired::tests_with_counters;
use crate::{link, sys};

/// How long brcmfmac may take to load its firmware and register the radio.
const RADIO_WAIT: Duration = Duration::from_secs(20);
/// How long a scan may take to find the entry's AP.
const SCAN_WAIT: Duration = Duration::from_millis(benchboot_plan::wifi::SCAN_WAIT_MS);

/// What one entry of the WiFi step works with: the plan, the board's radio (its wiphy
/// and interface as read after the country was set), the tests (the plan's, with the
/// WiFi warm-up) and the results the entry writes into.
struct Ctx<'a> {
    plan: &'a Plan,
    w: &'a WifiPlan,
    radio: &'a mut Radio,
    phy: &'a Wiphy,
    iface: &'a Interface,
    tests: &'a NetTests,
    results: &'a mut RunResults,
}

/// Runs the plan's WiFi step.
pub fn run_wifi(plan: &Plan, results: &mut RunResults) {
    let Some(w) = &plan.network.wifi else {
        return;
    };
    let Some(tests) = w.tests.as_ref().or(plan.network.tests.as_ref()) else {
        return;
    };
    if !w.problems.is_empty() {
        for p in &w.problems {
            fail(results, "network.wifi", p.clone());
        }
        for e in &w.entries {
            results.network.wifi.entries.push(skipped(
                w,
                e,
                "not run: see the WiFi errors above".into(),
            ));
        }
        return;
    }
    let mut radio = match Radio::open() {
        Ok(r) => r,
        Err(e) => {
            fail(
                results,
                "network.wifi",
                format!("nl80211: {e} (is cfg80211 loaded? the board file's [wifi] modules)"),
            );
            return;
        }
    };
    let Some((phy, iface)) = board_radio(&mut radio) else {
        fail(
            results,
            "network.wifi",
            format!(
                "no WiFi radio appeared within {} s: {}",
                RADIO_WAIT.as_secs(),
                w.firmware_missing.as_deref().unwrap_or(
                    "firmware files missing or the chip revision unsupported? (the kernel log names what brcmfmac asked for)"
                )
            ),
        );
        return;
    };
    let reg = set_country(&mut radio, &w.country, results);
    // The channel flags change with the country: read the radio again.
    let phy = radio
        .wiphys()
        .ok()
        .and_then(|l| l.into_iter().find(|p| p.index == phy.index))
        .unwrap_or(phy);
    results.network.wifi.radio = Some(radio_facts(plan, &phy, &iface));
    results.network.wifi.regulatory = reg;
    let _ = sys::link_up(&iface.name);
    let stand_in_phy = w
        .stand_in
        .as_ref()
        .and_then(|_| other_radio(&mut radio, phy.index));
    if w.stand_in.is_some() && stand_in_phy.is_none() {
        fail(
            results,
            "network.wifi",
            "QEMU: no second hwsim radio for the stand-in".into(),
        );
        return;
    }
    let mut tests = tests.clone();
    tests.omit_ms = tests.omit_ms.max(w.warmup_ms);
    let mut cx = Ctx {
        plan,
        w,
        radio: &mut radio,
        phy: &phy,
        iface: &iface,
        tests: &tests,
        results: &mut *results,
    };
    let steps = net_steps::wifi_steps(w, &phy);
    for (e, action) in steps.entries {
        let mut r = entry_record(w, e);
        let outcome = match action {
            WifiAction::Skip(why) => {
                say(&format!("wifi {}: skipped: {why}", e.name));
                r.skipped = Some(why);
                Ok(())
            }
            WifiAction::Client => client::client_entry(&mut cx, e, stand_in_phy.as_ref(), &mut r),
            WifiAction::AccessPoint(security) => ap::ap_entry(&mut cx, e, security, &mut r),
        };
        if let Err(why) = outcome {
            fail(cx.results, &format!("network.wifi.{}", e.name), why.clone());
            r.skipped = Some(why);
        }
        crate::console::figures(&benchboot_console::figures::wifi_entry(&r));
        cx.results.network.wifi.entries.push(r);
    }
    let Some(other) = &stand_in_phy else {
        return;
    };
    for check in steps.checks {
        let c = match check {
            WifiCheckStep::ApBeacons => {
                standin::ap_beacon_check(w, &mut radio, &phy, &iface, other)
            }
            WifiCheckStep::Ibss => standin::ibss_smoke(&mut radio, &iface, other, &tests, results),
        };
        say(&format!(
            "wifi check {}: {} ({})",
            c.name,
            if c.passed { "pass" } else { "FAIL" },
            c.detail
        ));
        results.network.wifi.checks.push(c);
    }
}

/// The record of an entry before it runs.
fn entry_record(w: &WifiPlan, e: &WifiEntry) -> WifiEntryResult {
    let (role, security, ssid) = match &w.role {
        WifiRole::AccessPoint { security } => ("ap", security.name(), e.ssid.clone()),
        WifiRole::Client {
            passphrase, ssid, ..
        } => (
            "client",
            if passphrase.is_some() { "wpa2" } else { "open" },
            e.ssid.clone().or_else(|| Some(ssid.clone())),
        ),
    };
    let own = e.ssid.is_some();
    WifiEntryResult {
        link: e.name.clone(),
        role: role.into(),
        security: security.into(),
        ssid_hash: ssid
            .as_deref()
            .map(|s| psk::ssid_hash(s.as_bytes()))
            .unwrap_or_default(),
        // Only the board's own and QEMU's stand-in SSIDs are written out.
        ssid: ssid.filter(|_| own),
        asked: e
            .asked
            .and_then(|a| a.chandef().ok())
            .map(|c| channel_record(&c)),
        ..WifiEntryResult::default()
    }
}

fn skipped(w: &WifiPlan, e: &WifiEntry, why: String) -> WifiEntryResult {
    WifiEntryResult {
        skipped: Some(why),
        ..entry_record(w, e)
    }
}

/// A chandef as results record it.
fn channel_record(c: &Chandef) -> WifiChannel {
    WifiChannel {
        band: match c.band() {
            Some(Band::Ghz5) => BandName::Ghz5,
            _ => BandName::Ghz2,
        },
        channel: c.channel().unwrap_or(0),
        freq_mhz: c.control_mhz,
        width_mhz: c.width.mhz(),
        center1_mhz: c.center1_mhz,
        no_ht: c.width == Width::NoHt20,
    }
}

/// The board's radio and its interface: the lowest-numbered wiphy with an interface,
/// waited for ([`RADIO_WAIT`]).
fn board_radio(radio: &mut Radio) -> Option<(Wiphy, Interface)> {
    let mut found = None;
    wait_until(RADIO_WAIT, || {
        let (Ok(phys), Ok(ifs)) = (radio.wiphys(), radio.interfaces()) else {
            return false;
        };
        let mut phys = phys;
        phys.sort_by_key(|p| p.index);
        found = phys.into_iter().find_map(|p| {
            let i = ifs.iter().find(|i| i.wiphy == p.index)?.clone();
            Some((p, i))
        });
        found.is_some()
    });
    found
}

/// QEMU: the other hwsim radio (the stand-in's), waited for: it comes back to this
/// namespace only once the last stand-in's namespace is gone.
fn other_radio(radio: &mut Radio, board_phy: u32) -> Option<(Wiphy, Interface)> {
    let mut found = None;
    wait_until(Duration::from_secs(15), || {
        let (Ok(phys), Ok(ifs)) = (radio.wiphys(), radio.interfaces()) else {
            return false;
        };
        found = phys
            .into_iter()
            .filter(|p| p.index != board_phy)
            .find_map(|p| {
                let i = ifs.iter().find(|i| i.wiphy == p.index)?.clone();
                Some((p, i))
            });
        found.is_some()
    });
    found
}

/// Sets the regulatory domain and reads it back (the kernel applies it from
/// regulatory.db asynchronously).
fn set_country(radio: &mut Radio, country: &str, results: &mut RunResults) -> Option<Regulatory> {
    if let Err(e) = radio.set_reg(country) {
        fail(
            results,
            "network.wifi",
            format!("setting the country to {country}: {e} (regulatory.db in /lib/firmware?)"),
        );
    }
    let mut reg = None;
    wait_until(Duration::from_secs(5), || {
        reg = radio.reg().ok();
        reg.as_ref().is_some_and(|r| r.alpha2 == country)
    });
    let reg = reg?;
    if reg.alpha2 != country {
        let msg = format!(
            "asked for country {country}, the kernel keeps {}: channels follow {}",
            reg.alpha2, reg.alpha2
        );
        say(&format!("network.wifi: {msg}"));
        results.event("network.wifi", Severity::Warning, msg);
    }
    Some(Regulatory {
        asked: country.into(),
        alpha2: reg.alpha2.clone(),
        dfs_region: reg
            .dfs_region
            .map(|d| regulatory::dfs_region_name(d).to_owned()),
        rules: reg.rules.iter().map(regulatory::rule_line).collect(),
    })
}

/// What the results say about the radio.
fn radio_facts(plan: &Plan, phy: &Wiphy, iface: &Interface) -> RadioFacts {
    let facts = link::full_facts(&iface.name, None);
    let bands = phy.bands.iter().map(|b| b.band.name().to_owned()).collect();
    RadioFacts {
        chip: plan.network.wifi.as_ref().and_then(|w| w.chip.clone()),
        driver: facts.driver,
        firmware_version: facts.firmware_version,
        chip_revision: chip_revision(),
        files: radio_files(),
        phy: phy.name.clone(),
        interface: iface.name.clone(),
        mac: iface
            .mac
            .map(|m| benchboot_plan::network::mac_text(&m))
            .unwrap_or_default(),
        bands,
        ext_features: OFFLOADS
            .iter()
            .filter(|(bit, _)| phy.has_ext_feature(*bit))
            .map(|(_, n)| (*n).to_owned())
            .collect(),
        iftypes: phy.iftypes.iter().map(|t| iftype_name(*t)).collect(),
    }
}

/// The nl80211 extended features results name (handshake and SAE offloads).
const OFFLOADS: [(u32, &str); 4] = [
    (
        nl80211::EXT_FEATURE_4WAY_HANDSHAKE_STA_PSK,
        "4way-handshake-sta-psk",
    ),
    (
        nl80211::EXT_FEATURE_4WAY_HANDSHAKE_AP_PSK,
        "4way-handshake-ap-psk",
    ),
    (nl80211::EXT_FEATURE_SAE_OFFLOAD, "sae-offload"),
    (nl80211::EXT_FEATURE_SAE_OFFLOAD_AP, "sae-offload-ap"),
];

/// `station`, `ap`, `adhoc`, ... (iw's names).
fn iftype_name(t: IfType) -> String {
    match t {
        IfType::Station => "station".into(),
        IfType::Ap => "ap".into(),
        IfType::Adhoc => "adhoc".into(),
        IfType::Monitor => "monitor".into(),
        IfType::MeshPoint => "mesh".into(),
        IfType::P2pClient => "p2p-client".into(),
        IfType::P2pGo => "p2p-go".into(),
        IfType::P2pDevice => "p2p-device".into(),
        other => format!("{other:?}").to_lowercase(),
    }
}

/// The chip revision brcmfmac logs when it starts the firmware (`Firmware: BCM43430/1
/// wl0: ...`), from the kernel log.
fn chip_revision() -> Option<String> {
    let log = sys::kernel_log().ok()?;
    let line = log.lines().find(|l| l.contains("Firmware: BCM"))?;
    let at = line.find("Firmware: ")? + "Firmware: ".len();
    line[at..].split_whitespace().next().map(str::to_owned)
}

/// The radio files the image carries (`/lib/firmware/brcm/*`, `regulatory.db*`).
fn radio_files() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["/lib/firmware", "/lib/firmware/brcm"] {
        if let Ok(rd) = std::fs::read_dir(dir) {
            for e in rd.flatten() {
                if e.file_type().is_ok_and(|t| t.is_file()) {
                    out.push(format!("{dir}/{}", e.file_name().to_string_lossy()));
                }
            }
        }
    }
    out.sort();
    out
}

/// The primary channel's flags, as results list them.
fn channel_flags(phy: &Wiphy, mhz: u32) -> Vec<String> {
    regulatory::channel_flags(phy, mhz)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// Power save off and read back, the station before and after, the tests against
/// `peer`: the end of a client entry and of an AP entry alike.
fn measure(cx: &mut Ctx, peer: Ipv4Addr, r: &mut WifiEntryResult) {
    let Ctx {
        radio,
        iface,
        tests,
        results,
        ..
    } = cx;
    let _ = radio.set_power_save(iface.ifindex, false);
    r.power_save = radio.power_save(iface.ifindex).ok().flatten();
    if r.power_save == Some(true) {
        let msg = format!(
            "{}: power save is still on: the figures include its sleep",
            r.link
        );
        results.event(format!("network.wifi.{}", r.link), Severity::Warning, msg);
    }
    let first = |radio: &mut Radio| {
        radio
            .stations(iface.ifindex)
            .ok()
            .and_then(|s| s.into_iter().next())
    };
    // The idle phase with the link up, before the station is read and the tests run.
    crate::energy::idle_on_link(&iface.name, results);
    let before = first(radio);
    if let Some(s) = &before {
        r.absent = s.absent().iter().map(|a| (*a).to_owned()).collect();
    }
    r.station_before = before.as_ref().map(station_info);
    let board = r.board_address.unwrap_or([0; 4]);
    r.counters = tests_with_counters(&r.link, &iface.name, board, peer, tests, results);
    r.station_after = first(radio).as_ref().map(station_info);
}

/// A station as results record it.
fn station_info(s: &Station) -> StationInfo {
    StationInfo {
        signal_dbm: s.signal_dbm,
        signal_avg_dbm: s.signal_avg_dbm,
        chain_signal_dbm: s.chain_signal_dbm.clone(),
        tx_bitrate: s.tx_bitrate.as_ref().map(bitrate),
        rx_bitrate: s.rx_bitrate.as_ref().map(bitrate),
        tx_retries: s.tx_retries,
        tx_failed: s.tx_failed,
        tx_packets: s.tx_packets,
        rx_packets: s.rx_packets,
        tx_bytes: s.tx_bytes,
        rx_bytes: s.rx_bytes,
        beacon_loss: s.beacon_loss,
        expected_throughput_kbps: s.expected_throughput_kbps,
    }
}

/// A rate as results record it ([`rate::classify`]).
fn bitrate(b: &RateInfo) -> Bitrate {
    let r = rate::classify(b);
    Bitrate {
        bitrate_100kbps: b.bitrate_100kbps,
        mcs: r.mcs,
        kind: r.kind.name().into(),
        nss: r.nss,
        width_mhz: Some(b.width_mhz),
        short_gi: b.short_gi,
    }
}
