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
mod entry;
mod hold;
mod scan;
mod standin;

use std::time::Duration;

use benchboot_plan::net_steps::{self, WifiAction, WifiCheckStep};
use benchboot_plan::{NetTests, Plan, WifiEntry, WifiPlan, WifiRole};
use benchboot_results::wifi::{RadioFacts, Regulatory, WifiEntryResult};
use benchboot_results::{RunResults, Severity};
use benchboot_wifi::nl80211::{self, IfType, Interface, Wiphy};
use benchboot_wifi::{psk, regulatory};

use crate::console::say;
use crate::netkit::fail;
use crate::radio::Radio;
use crate::wait::wait_until;
use crate::{link, sys};
use entry::{channel_record, Ctx};

/// How long brcmfmac may take to load its firmware and register the radio.
const RADIO_WAIT: Duration = Duration::from_secs(20);

/// Runs the plan's WiFi step.
pub fn run_wifi(plan: &Plan, results: &mut RunResults) {
    let Some((w, tests)) = preflight(plan, results) else {
        return;
    };
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
    let Some((phy, iface, stand_in_phy)) = set_up_radio(plan, w, &mut radio, results) else {
        return;
    };
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
        run_entry(&mut cx, e, action, stand_in_phy.as_ref());
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

/// The WiFi plan and its tests (the WiFi plan's own, else the network's), when the step
/// runs: not without a WiFi plan or tests, and not when the plan has problems, each an
/// error event `network.wifi` with every entry recorded as skipped.
fn preflight<'a>(plan: &'a Plan, results: &mut RunResults) -> Option<(&'a WifiPlan, &'a NetTests)> {
    let w = plan.network.wifi.as_ref()?;
    let tests = w.tests.as_ref().or(plan.network.tests.as_ref())?;
    if w.problems.is_empty() {
        return Some((w, tests));
    }
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
    None
}

/// A radio and its interface.
type PhyIf = (Wiphy, Interface);

/// The board's radio waited for, its country set and read back, its facts and the
/// regulatory domain recorded, its interface up; with the QEMU stand-in, the other
/// radio too. `None` (an error event) when a radio is missing.
fn set_up_radio(
    plan: &Plan,
    w: &WifiPlan,
    radio: &mut Radio,
    results: &mut RunResults,
) -> Option<(Wiphy, Interface, Option<PhyIf>)> {
    let Some((phy, iface)) = board_radio(radio) else {
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
        return None;
    };
    let reg = set_country(radio, &w.country, results);
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
        .and_then(|_| other_radio(radio, phy.index));
    if w.stand_in.is_some() && stand_in_phy.is_none() {
        fail(
            results,
            "network.wifi",
            "QEMU: no second hwsim radio for the stand-in".into(),
        );
        return None;
    }
    Some((phy, iface, stand_in_phy))
}

/// One entry: skipped as `action` says, or run in its role; its failure is an error
/// event `network.wifi.<entry>` and its record says why it was not measured.
fn run_entry(
    cx: &mut Ctx,
    e: &WifiEntry,
    action: WifiAction,
    stand_in_phy: Option<&(Wiphy, Interface)>,
) {
    let mut r = entry_record(cx.w, e);
    let outcome = match action {
        WifiAction::Skip(why) => {
            say(&format!("wifi {}: skipped: {why}", e.name));
            r.skipped = Some(why);
            Ok(())
        }
        WifiAction::Client => client::client_entry(cx, e, stand_in_phy, &mut r),
        WifiAction::AccessPoint(security) => ap::ap_entry(cx, e, security, &mut r),
    };
    if let Err(why) = outcome {
        fail(cx.results, &format!("network.wifi.{}", e.name), why.clone());
        r.skipped = Some(why);
    }
    crate::console::figures(&benchboot_console::figures::wifi_entry(&r));
    cx.results.network.wifi.entries.push(r);
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
    let facts = link::full_facts(std::path::Path::new(link::SYS_CLASS_NET), &iface.name, None);
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
    chip_revision_in(&sys::kernel_log().ok()?)
}

/// The chip revision of a kernel log's first `Firmware: BCM...` line: the word after
/// `Firmware: ` (`BCM43430/1`).
fn chip_revision_in(log: &str) -> Option<String> {
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

#[cfg(test)]
mod tests;
