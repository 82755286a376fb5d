//! The WiFi step of PID 1: the plan's `network.wifi`, after the wired links.
//!
//! - The radio: the first wiphy the kernel lists (brcmfmac probes it after loading its
//!   firmware, so PID 1 waits for it), the country set from the plan and read back, the
//!   facts recorded (driver, firmware version, chip revision, bands, offloads).
//! - Client role: per entry scan for the SSID, `CONNECT` (open, or WPA2-PSK through the
//!   radio's 4-way handshake offload; without the offload the entry is recorded as
//!   needing a supplicant), a DHCP lease, the peer from the plan or its announcement,
//!   power save off, the network tests with the station read before and after.
//! - AP role (hardware: brcmfmac answers association in its firmware): per entry the
//!   board's own AP (`START_AP` with a built beacon) on the entry's channel, a DHCP
//!   server for the station, the offer sent over the results link to `benchboot peer
//!   --wifi`, the tests against the station that joined, `STOP_AP`.
//!
//! QEMU (`stand_in`): mac80211_hwsim's second radio is moved into a network namespace
//! (`NL80211_CMD_SET_WIPHY_NETNS`) whose child runs Debian's hostapd (a QEMU-only worker)
//! as each entry's AP, with the stand-in LAN's DHCP server and announcing peer; then the
//! board's AP beacons checked by the other radio's scan and an IBSS smoke (both in the
//! kernel, no user space).
//!
//! Every failure is one error event naming the entry; the next entry and the rest of
//! the plan run.

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use benchboot_netbench::wifi_offer::{WifiOffer, WIFI_OFFER_PORT};
use benchboot_plan::{NetTests, Plan, WifiEntry, WifiPlan, WifiRole, WifiSecurity};
use benchboot_results::wifi::{
    BandName, Bitrate, Neighbour, RadioFacts, Regulatory, StationInfo, WifiChannel, WifiCheck,
    WifiEntryResult,
};
use benchboot_results::{RunResults, Severity};
use benchboot_wifi::channel::{Band, Chandef, Width};
use benchboot_wifi::nl80211::{self, Bss, IfType, Interface, RateInfo, Station, Wiphy};
use benchboot_wifi::{hostapd, ie, psk, rate, regulatory, station};

use crate::console::say;
use crate::network::{fail, spawn_in_netns_moving, HOST_NO_ADDRESS};
use crate::radio::Radio;
use crate::wait::wait_until;
use crate::wired::{lan_peer, stand_in_lan_body, tests_with_counters, StandInLan};
use crate::{link, sys, worker};

/// The board's address on its own AP, and the station's lease (a /24 apart from the
/// gadget's 10.55, the stand-in LAN's 10.56 and the wired links' 10.57).
const AP_BOARD: [u8; 4] = [10, 58, 0, 1];
const AP_STATION: [u8; 4] = [10, 58, 0, 2];
const AP_PREFIX: u8 = 24;
/// QEMU: the WiFi stand-in AP's LAN, apart from the wired stand-in's 10.56.0.0/24 (whose
/// interface is still up: two routes into one subnet would carry the tests over it).
const WIFI_STAND_IN: StandInLan = StandInLan {
    router: [10, 60, 0, 1],
    lease: [10, 60, 0, 2],
};
/// The IBSS smoke's BSSID, fixed so both radios join one IBSS (no merge to wait for).
const IBSS_BSSID: [u8; 6] = [0x02, 0xbb, 0, 0, 0, 0x01];
/// The IBSS smoke's two ends.
const IBSS_BOARD: [u8; 4] = [10, 59, 0, 1];
const IBSS_PEER: [u8; 4] = [10, 59, 0, 2];
/// How long brcmfmac may take to load its firmware and register the radio.
const RADIO_WAIT: Duration = Duration::from_secs(20);
/// How long a scan may take to find the entry's AP.
const SCAN_WAIT: Duration = Duration::from_millis(benchboot_plan::wifi::SCAN_WAIT_MS);
/// Beacon interval of the board's AP, TU (1.024 ms): the usual 100.
const BEACON_TU: u16 = 100;
/// Exit codes of the stand-in children.
const STAND_IN_NO_HOSTAPD: i32 = 20;
const STAND_IN_NO_BEACON: i32 = 21;
const STAND_IN_NO_IBSS: i32 = 22;

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
    for e in &w.entries {
        let mut r = entry_record(w, e);
        if let Some(why) = e.skip.clone().or_else(|| forbidden(w, e, &phy)) {
            say(&format!("wifi {}: skipped: {why}", e.name));
            r.skipped = Some(why);
        } else {
            let outcome = match &w.role {
                WifiRole::Client { .. } => client_entry(
                    plan,
                    w,
                    e,
                    &mut radio,
                    &phy,
                    &iface,
                    stand_in_phy.as_ref(),
                    &tests,
                    &mut r,
                    results,
                ),
                WifiRole::AccessPoint { security } => ap_entry(
                    plan, w, e, *security, &mut radio, &phy, &iface, &tests, &mut r, results,
                ),
            };
            if let Err(why) = outcome {
                fail(results, &format!("network.wifi.{}", e.name), why.clone());
                r.skipped = Some(why);
            }
        }
        crate::console::figures(&benchboot_console::figures::wifi_entry(&r));
        results.network.wifi.entries.push(r);
    }
    if let (Some(s), Some(other)) = (&w.stand_in, &stand_in_phy) {
        if s.ap_beacon_check {
            let c = ap_beacon_check(w, &mut radio, &phy, &iface, other);
            say(&format!(
                "wifi check {}: {} ({})",
                c.name,
                if c.passed { "pass" } else { "FAIL" },
                c.detail
            ));
            results.network.wifi.checks.push(c);
        }
        if s.ibss_smoke {
            let c = ibss_smoke(&mut radio, &iface, other, &tests, results);
            say(&format!(
                "wifi check {}: {} ({})",
                c.name,
                if c.passed { "pass" } else { "FAIL" },
                c.detail
            ));
            results.network.wifi.checks.push(c);
        }
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

/// Why the regulatory domain (as the radio reports it after the country was set) or the
/// role forbids the entry's channel (crates/wifi's [`regulatory::forbidden`]): the AP
/// side is the board's own AP or the QEMU stand-in's.
fn forbidden(w: &WifiPlan, e: &WifiEntry, phy: &Wiphy) -> Option<String> {
    let asked = e.asked?;
    let c = asked.chandef().ok()?;
    let ap_side = matches!(w.role, WifiRole::AccessPoint { .. }) || w.stand_in.is_some();
    regulatory::forbidden(phy, &c, ap_side).map(|f| f.reason(&asked.describe(), &w.country))
}

/// The primary channel's flags, as results list them.
fn channel_flags(phy: &Wiphy, mhz: u32) -> Vec<String> {
    regulatory::channel_flags(phy, mhz)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// One client entry: scan, connect, lease, peer, tests, disconnect.
#[allow(clippy::too_many_arguments)]
fn client_entry(
    plan: &Plan,
    w: &WifiPlan,
    e: &WifiEntry,
    radio: &mut Radio,
    phy: &Wiphy,
    iface: &Interface,
    stand_in: Option<&(Wiphy, Interface)>,
    tests: &NetTests,
    r: &mut WifiEntryResult,
    results: &mut RunResults,
) -> Result<(), String> {
    let WifiRole::Client {
        ssid: user_ssid,
        passphrase,
        peer,
    } = &w.role
    else {
        return Err("not a client plan".into());
    };
    let ssid = e.ssid.clone().unwrap_or_else(|| user_ssid.clone());
    let chandef = e.asked.and_then(|a| a.chandef().ok());
    if let Some(c) = &chandef {
        r.channel_flags = channel_flags(phy, c.control_mhz);
    }
    let pmk = match passphrase {
        None => None,
        Some(p) => {
            if !phy.has_ext_feature(nl80211::EXT_FEATURE_4WAY_HANDSHAKE_STA_PSK) {
                return Err(
                    "WPA2-PSK needs a supplicant: this radio offers no 4-way handshake offload (nl80211 ext feature 4WAY_HANDSHAKE_STA_PSK); not measured"
                        .into(),
                );
            }
            r.security_note = Some("4-way handshake offloaded to the radio".into());
            Some(psk::pmk(p, ssid.as_bytes()).map_err(|e| e.to_string())?)
        }
    };
    // QEMU: this entry's AP, on the other radio.
    let mut child = None;
    if let (Some(s), Some((other, other_if)), Some(c)) = (&w.stand_in, stand_in, &chandef) {
        let conf = hostapd::config(&hostapd::StandInAp {
            interface: &other_if.name,
            ssid: &ssid,
            chandef: *c,
            country: &w.country,
            passphrase: passphrase.as_deref(),
        })
        .map_err(|e| format!("stand-in AP: {e}"))?;
        let port = tests.peer_port;
        child = Some(spawn_stand_in(
            radio,
            other.index,
            &other_if.name,
            "the stand-in AP",
            {
                let hostapd_path = s.hostapd.clone();
                let ifname = other_if.name.clone();
                move || {
                    if let Err(code) = start_hostapd(&hostapd_path, &conf) {
                        return code;
                    }
                    stand_in_lan_body(&ifname, port, WIFI_STAND_IN)
                }
            },
        )?);
    }
    let mut outcome = connect_and_measure(
        plan, w, radio, phy, iface, &ssid, chandef, pmk, *peer, tests, r, results,
    );
    if let (Err(e), Some(pid)) = (&mut outcome, child) {
        if let Some(code) = worker::exit_code(pid) {
            child = None;
            e.push_str(&format!(
                "; the stand-in AP had exited: {}",
                stand_in_failure(code)
            ));
        }
    }
    let _ = radio.disconnect(iface.ifindex);
    let _ = sys::ifconfig_up(&iface.name, [0; 4], 0);
    if let Some(pid) = child {
        worker::kill_and_reap(pid);
    }
    outcome
}

/// Scan, connect, lease, tests: the part of a client entry between its AP coming up
/// and the disconnect.
#[allow(clippy::too_many_arguments)]
fn connect_and_measure(
    plan: &Plan,
    w: &WifiPlan,
    radio: &mut Radio,
    phy: &Wiphy,
    iface: &Interface,
    ssid: &str,
    chandef: Option<Chandef>,
    pmk: Option<[u8; 32]>,
    peer: Option<[u8; 4]>,
    tests: &NetTests,
    r: &mut WifiEntryResult,
    results: &mut RunResults,
) -> Result<(), String> {
    let _ = phy;
    let freqs: Vec<u32> = chandef.map(|c| vec![c.control_mhz]).unwrap_or_default();
    let bss = scan_for(radio, iface.ifindex, &freqs, ssid.as_bytes())?;
    r.neighbours = neighbours(&radio.scan_results(iface.ifindex).unwrap_or_default(), &bss);
    r.bssid = Some(benchboot_plan::network::mac_text(&bss.bssid));
    let wait = Duration::from_millis(w.connect_wait_ms);
    let t0 = sys::boottime_ns();
    radio
        .connect(
            iface.ifindex,
            &nl80211::ConnectParams {
                ssid: ssid.as_bytes(),
                freq_mhz: Some(bss.freq_mhz),
                bssid: Some(bss.bssid),
                psk: pmk,
            },
        )
        .map_err(|e| format!("CONNECT to {}: {e}", r.bssid.as_deref().unwrap_or("?")))?;
    let mut joined = None;
    wait_until(wait, || {
        joined = radio
            .interface(iface.ifindex)
            .ok()
            .filter(|i| i.ssid.as_deref() == Some(ssid.as_bytes()) && i.chandef.is_some());
        joined.is_some()
    });
    let joined = joined.ok_or_else(|| {
        format!(
            "not associated with {} within {} ms",
            r.bssid.as_deref().unwrap_or("?"),
            w.connect_wait_ms
        )
    })?;
    let up_ns = sys::boottime_ns();
    r.connect_ns = Some(up_ns.saturating_sub(t0));
    r.obtained = joined.chandef.map(|c| channel_record(&c));
    r.txpower_mbm = joined.txpower_mbm;
    say(&format!(
        "wifi {}: associated with {} on {} MHz, {} MHz wide (centre {} MHz)",
        r.link,
        r.bssid.as_deref().unwrap_or("?"),
        r.obtained.map_or(0, |c| c.freq_mhz),
        r.obtained.map_or(0, |c| c.width_mhz),
        r.obtained.map_or(0, |c| c.center1_mhz),
    ));
    let mac = iface.mac.ok_or("the interface has no MAC address")?;
    let lease = benchboot_dhcp::client_lease(&iface.name, mac, wait).map_err(|e| {
        format!(
            "no DHCP lease over WiFi within {} ms: {e}",
            w.connect_wait_ms
        )
    })?;
    r.lease_ns = Some(lease.acked_ns.saturating_sub(up_ns));
    let prefix = u32::from(lease.netmask).count_ones() as u8;
    sys::ifconfig_up(&iface.name, lease.address.octets(), prefix)
        .map_err(|e| format!("setting the leased {}: {e}", lease.address))?;
    r.board_address = Some(lease.address.octets());
    let found = lan_peer(plan, peer, wait)?;
    if let Some(other) = std::fs::read_to_string("/proc/net/route")
        .ok()
        .and_then(|t| link::other_route(&t, &iface.name, found.address.octets()))
    {
        return Err(format!(
            "the peer {} is also routed over {other} (a link in the same subnet as the WiFi lease): the tests would measure {other}, not WiFi; put the WiFi on another subnet or unplug {other}",
            found.address
        ));
    }
    r.peer_address = Some(found.address.octets());
    r.peer_found_by = Some(found.by.into());
    measure(radio, iface, found.address, tests, r, results);
    Ok(())
}

/// Power save off and read back, the station before and after, the tests.
fn measure(
    radio: &mut Radio,
    iface: &Interface,
    peer: Ipv4Addr,
    tests: &NetTests,
    r: &mut WifiEntryResult,
    results: &mut RunResults,
) {
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
    let before = first(radio);
    if let Some(s) = &before {
        r.absent = s.absent().iter().map(|a| (*a).to_owned()).collect();
    }
    r.station_before = before.as_ref().map(station_info);
    let board = r.board_address.unwrap_or([0; 4]);
    r.counters = tests_with_counters(&r.link, &iface.name, board, peer, tests, results);
    r.station_after = first(radio).as_ref().map(station_info);
}

/// Scans `freqs` (all when empty) for `ssid` until a BSS carrying it is seen.
fn scan_for(radio: &mut Radio, ifindex: u32, freqs: &[u32], ssid: &[u8]) -> Result<Bss, String> {
    let deadline = Instant::now() + SCAN_WAIT;
    let mut last_err = String::new();
    while Instant::now() < deadline {
        if let Err(e) = radio.trigger_scan(ifindex, freqs, &[ssid]) {
            // EBUSY: a scan is still running.
            last_err = e.to_string();
        }
        std::thread::sleep(Duration::from_millis(1500));
        if let Ok(list) = radio.scan_results(ifindex) {
            if let Some(b) = station::best_bss(list, freqs, ssid) {
                return Ok(b);
            }
        }
    }
    Err(format!(
        "no AP with the SSID in {} s of scanning{}",
        SCAN_WAIT.as_secs(),
        if last_err.is_empty() {
            String::new()
        } else {
            format!(" (last scan: {last_err})")
        }
    ))
}

/// The BSSs of the scan on the entry's band ([`station::neighbours`]).
fn neighbours(list: &[Bss], ours: &Bss) -> Vec<Neighbour> {
    station::neighbours(list, ours)
        .into_iter()
        .map(|n| Neighbour {
            freq_mhz: n.freq_mhz,
            signal_dbm: n.signal_dbm,
            width_mhz: n.width_mhz,
            ssid_hash: n.ssid_hash,
            ours: n.ours,
        })
        .collect()
}

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

/// One AP entry (hardware): the board's AP on the entry's channel, offered to the host
/// over the results link, the tests against the station that joins.
#[allow(clippy::too_many_arguments)]
fn ap_entry(
    plan: &Plan,
    w: &WifiPlan,
    e: &WifiEntry,
    security: WifiSecurity,
    radio: &mut Radio,
    phy: &Wiphy,
    iface: &Interface,
    tests: &NetTests,
    r: &mut WifiEntryResult,
    results: &mut RunResults,
) -> Result<(), String> {
    let c = e
        .asked
        .and_then(|a| a.chandef().ok())
        .ok_or("an AP entry without a channel")?;
    r.channel_flags = channel_flags(phy, c.control_mhz);
    let ssid = e.ssid.clone().ok_or("an AP entry without an SSID")?;
    let passphrase = match security {
        WifiSecurity::Open => None,
        WifiSecurity::Wpa2Psk
            if phy.has_ext_feature(nl80211::EXT_FEATURE_4WAY_HANDSHAKE_AP_PSK) =>
        {
            r.security_note = Some("4-way handshake offloaded to the radio".into());
            Some(random_passphrase()?)
        }
        WifiSecurity::Wpa2Psk => {
            r.security = "open".into();
            r.security_note = Some(
                "WPA2 asked, the radio offers no AP 4-way handshake offload (4WAY_HANDSHAKE_AP_PSK): the AP ran open"
                    .into(),
            );
            None
        }
    };
    if let Err(e) = start_board_ap(
        radio,
        phy,
        iface,
        &ssid,
        c,
        passphrase.as_deref(),
        &w.country,
    ) {
        // Back to a station interface: the next entry starts from there.
        stop_board_ap(radio, iface);
        return Err(e);
    }
    r.obtained = radio
        .interface(iface.ifindex)
        .ok()
        .and_then(|i| i.chandef)
        .map(|c| channel_record(&c));
    r.bssid = iface.mac.map(|m| benchboot_plan::network::mac_text(&m));
    let outcome = (|| {
        sys::ifconfig_up(&iface.name, AP_BOARD, AP_PREFIX)
            .map_err(|e| format!("{}: {e}", iface.name))?;
        r.board_address = Some(AP_BOARD);
        let stop = Arc::new(AtomicBool::new(false));
        let (lease_tx, lease_rx) = mpsc::channel();
        let server = benchboot_dhcp::Server::new(
            AP_BOARD.into(),
            AP_STATION.into(),
            Ipv4Addr::new(255, 255, 255, 0),
            3600,
        );
        let dhcp_if = iface.name.clone();
        let dhcp_stop = stop.clone();
        let dhcp = std::thread::spawn(move || {
            benchboot_dhcp::serve(&dhcp_if, server, dhcp_stop, |l| {
                let _ = lease_tx.send(l);
            })
        });
        let offer = WifiOffer {
            ssid: ssid.as_bytes().to_vec(),
            passphrase: passphrase.clone(),
            freq_mhz: c.control_mhz,
            width_mhz: c.width.mhz(),
            board: AP_BOARD.into(),
        };
        let targets = offer_targets(plan, results);
        say(&format!(
            "wifi {}: AP {ssid:?} up on {} MHz; waiting {} s for `benchboot peer --wifi` (offered to {targets:?})",
            r.link,
            c.control_mhz,
            w.connect_wait_ms / 1000
        ));
        let t0 = sys::boottime_ns();
        let lease = offer_until_lease(
            &offer,
            &targets,
            &lease_rx,
            Duration::from_millis(w.connect_wait_ms),
        );
        let outcome = match lease {
            None => Err(format!(
                "no station joined within {} s (run `benchboot peer --wifi` on a host with WiFi, on the results link)",
                w.connect_wait_ms / 1000
            )),
            Some(l) => {
                r.connect_ns = Some(sys::boottime_ns().saturating_sub(t0));
                r.peer_address = Some(l.address.octets());
                r.peer_found_by = Some("lease".into());
                measure(radio, iface, l.address, tests, r, results);
                Ok(())
            }
        };
        stop.store(true, Ordering::Relaxed);
        let _ = dhcp.join();
        outcome
    })();
    stop_board_ap(radio, iface);
    outcome
}

/// 16 random hex digits from the kernel's CSPRNG (`/dev/urandom`): the passphrase of
/// one AP entry, announced with it.
fn random_passphrase() -> Result<String, String> {
    use std::io::Read;
    let mut b = [0u8; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(|e| format!("/dev/urandom: {e}"))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Where the offer goes: the host end of every gadget link, and the subnet broadcast
/// of the static results interface.
fn offer_targets(plan: &Plan, results: &RunResults) -> Vec<SocketAddr> {
    let mut out: Vec<SocketAddr> = results
        .network
        .links
        .iter()
        .filter_map(|l| l.host_address)
        .map(|a| SocketAddr::from((a, WIFI_OFFER_PORT)))
        .collect();
    let n = &plan.network;
    if !n.interface.is_empty() && n.prefix_len < 32 {
        let mask = u32::MAX
            .checked_shl(32 - u32::from(n.prefix_len))
            .unwrap_or(0);
        let bcast = u32::from_be_bytes(n.address) | !mask;
        out.push(SocketAddr::from((bcast.to_be_bytes(), WIFI_OFFER_PORT)));
    }
    out
}

/// Sends the offer once a second until the DHCP server leases an address (the station
/// joined) or `wait` ends.
fn offer_until_lease(
    offer: &WifiOffer,
    targets: &[SocketAddr],
    leases: &mpsc::Receiver<benchboot_dhcp::Lease>,
    wait: Duration,
) -> Option<benchboot_dhcp::Lease> {
    let sock = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).ok();
    if let Some(s) = &sock {
        let _ = s.set_broadcast(true);
    }
    let line = offer.encode();
    let deadline = Instant::now() + wait;
    while Instant::now() < deadline {
        if let Some(s) = &sock {
            for t in targets {
                let _ = s.send_to(line.as_bytes(), t);
            }
        }
        if let Ok(l) = leases.recv_timeout(Duration::from_secs(1)) {
            return Some(l);
        }
    }
    None
}

/// The board's AP: interface type AP, `START_AP` with a beacon built for the channel.
fn start_board_ap(
    radio: &mut Radio,
    phy: &Wiphy,
    iface: &Interface,
    ssid: &str,
    c: Chandef,
    passphrase: Option<&str>,
    country: &str,
) -> Result<(), String> {
    let _ = sys::link_down(&iface.name);
    radio
        .set_type(iface.ifindex, IfType::Ap)
        .map_err(|e| format!("{}: interface type AP: {e}", iface.name))?;
    sys::link_up(&iface.name).map_err(|e| format!("{}: up: {e}", iface.name))?;
    let band = c.band().ok_or("no band")?;
    let caps = phy.bands.iter().find(|b| b.band == band);
    let cc = country.as_bytes();
    let country_code = if cc.len() == 2 && cc != b"00" {
        [cc[0], cc[1]]
    } else {
        *b"XX"
    };
    let mac = iface.mac.ok_or("the interface has no MAC address")?;
    let (head, tail) = ie::beacon(&ie::BeaconParams {
        mac,
        ssid: ssid.as_bytes(),
        chandef: c,
        beacon_interval_tu: BEACON_TU,
        wpa2: passphrase.is_some(),
        country: country_code,
        ht_capa: caps.and_then(|b| b.ht_capa),
        vht_capa: caps.and_then(|b| b.vht_capa),
    })
    .map_err(|e| format!("beacon: {e}"))?;
    let psk = passphrase
        .map(|p| psk::pmk(p, ssid.as_bytes()))
        .transpose()
        .map_err(|e| e.to_string())?;
    radio
        .start_ap(
            iface.ifindex,
            &nl80211::ApParams {
                beacon_head: &head,
                beacon_tail: &tail,
                beacon_interval_tu: u32::from(BEACON_TU),
                dtim_period: 2,
                ssid: ssid.as_bytes(),
                chandef: c,
                psk,
                hidden: false,
                inactivity_timeout_s: None,
            },
        )
        .map_err(|e| format!("START_AP on {} MHz: {e}", c.control_mhz))
}

fn stop_board_ap(radio: &mut Radio, iface: &Interface) {
    let _ = radio.stop_ap(iface.ifindex);
    back_to_station(radio, iface);
}

/// The interface back as a station with no address, as the next entry expects it.
fn back_to_station(radio: &mut Radio, iface: &Interface) {
    let _ = sys::ifconfig_up(&iface.name, [0; 4], 0);
    let _ = sys::link_down(&iface.name);
    let _ = radio.set_type(iface.ifindex, IfType::Station);
    let _ = sys::link_up(&iface.name);
}

/// Forks a stand-in child in a new network namespace, moves radio `wiphy` (and its
/// interface `ifname`) there and runs `body`; returns its pid. The radio comes back to
/// this namespace only once the last child's namespace is gone (the kernel tears it
/// down asynchronously): waited for first.
fn spawn_stand_in(
    radio: &mut Radio,
    wiphy: u32,
    ifname: &str,
    who: &str,
    body: impl FnOnce() -> i32,
) -> Result<i32, String> {
    let home = wait_until(Duration::from_secs(15), || {
        radio
            .interfaces()
            .is_ok_and(|l| l.iter().any(|i| i.wiphy == wiphy && i.name == ifname))
    });
    if !home {
        return Err(format!(
            "phy{wiphy} ({ifname}) did not come back from the last stand-in's namespace within 15 s"
        ));
    }
    spawn_in_netns_moving(
        ifname,
        who,
        |pid| {
            radio
                .move_wiphy(wiphy, pid)
                .map_err(|e| format!("moving phy{wiphy} into {who}'s namespace: {e}"))
        },
        body,
    )
}

/// In a stand-in child: an nl80211 socket of its own namespace and the radio's
/// interface there, by name.
fn own_radio(ifname: &str) -> Option<(Radio, Interface)> {
    let mut r = Radio::open().ok()?;
    let i = r
        .interfaces()
        .ok()?
        .into_iter()
        .find(|i| i.name == ifname)?;
    Some((r, i))
}

/// What a stand-in child's exit code means.
fn stand_in_failure(code: i32) -> String {
    match code {
        STAND_IN_NO_HOSTAPD => {
            "hostapd did not bring the AP up (its lines are on the console)".into()
        }
        STAND_IN_NO_BEACON => "its scan did not see the beacons".into(),
        STAND_IN_NO_IBSS => "it could not join the IBSS".into(),
        c => crate::network::host_side_failure(c),
    }
}

/// In the stand-in child: writes the config, runs hostapd (killed with this child:
/// PR_SET_PDEATHSIG) and waits for its `AP-ENABLED`.
fn start_hostapd(path: &str, conf: &str) -> Result<(), i32> {
    use std::io::BufRead;
    let _ = std::fs::create_dir_all("/tmp");
    let conf_path = format!("/tmp/hostapd-{}.conf", std::process::id());
    std::fs::write(&conf_path, conf).map_err(|_| STAND_IN_NO_HOSTAPD)?;
    let mut cmd = std::process::Command::new(path);
    cmd.arg(&conf_path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    sys::die_with_parent(&mut cmd);
    let mut child = cmd.spawn().map_err(|_| STAND_IN_NO_HOSTAPD)?;
    let out = child.stdout.take().ok_or(STAND_IN_NO_HOSTAPD)?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            // QEMU only: hostapd's own few lines (state changes, stations) on the console.
            say(&format!("qemu stand-in hostapd: {line}"));
            if line.contains("AP-ENABLED") {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(30))
        .map_err(|_| STAND_IN_NO_HOSTAPD)
}

/// QEMU: the board's own AP (`START_AP`, no user space) seen by the other radio's scan.
fn ap_beacon_check(
    w: &WifiPlan,
    radio: &mut Radio,
    phy: &Wiphy,
    iface: &Interface,
    other: &(Wiphy, Interface),
) -> WifiCheck {
    let ssid = "bb-qemu-ap-beacons";
    let c = Chandef::new(Band::Ghz2, 6, Width::W20).expect("channel 6 at 20 MHz");
    let check = |passed, detail: String| WifiCheck {
        name: "ap-beacons".into(),
        passed,
        detail,
    };
    if let Err(e) = start_board_ap(radio, phy, iface, ssid, c, None, &w.country) {
        stop_board_ap(radio, iface);
        return check(false, e);
    }
    let ifname = other.1.name.clone();
    let outcome = spawn_stand_in(
        radio,
        other.0.index,
        &other.1.name,
        "the beacon scanner",
        move || {
            let Some((mut r, i)) = own_radio(&ifname) else {
                return STAND_IN_NO_BEACON;
            };
            match scan_for(&mut r, i.ifindex, &[c.control_mhz], ssid.as_bytes()) {
                Ok(b) if b.freq_mhz == c.control_mhz => 0,
                _ => STAND_IN_NO_BEACON,
            }
        },
    );
    let detail = match outcome {
        Err(e) => Err(e),
        Ok(pid) => {
            let mut code = None;
            wait_until(SCAN_WAIT + Duration::from_secs(5), || {
                code = worker::exit_code(pid);
                code.is_some()
            });
            if code.is_none() {
                worker::kill_and_reap(pid);
            }
            match code {
                Some(0) => Ok(()),
                Some(c) => Err(format!(
                    "the other radio's scan did not see the beacons (exit {c})"
                )),
                None => Err("the scanner did not finish".into()),
            }
        }
    };
    stop_board_ap(radio, iface);
    match detail {
        Ok(()) => check(
            true,
            format!("{ssid:?} on {} MHz seen by the other radio's scan; association needs hostapd on mac80211 (brcmfmac: in firmware, hardware only)", c.control_mhz),
        ),
        Err(e) => check(false, e),
    }
}

/// QEMU: both radios in one IBSS on 2412 MHz (joined in the kernel), a round-trip run
/// across.
fn ibss_smoke(
    radio: &mut Radio,
    iface: &Interface,
    other: &(Wiphy, Interface),
    tests: &NetTests,
    results: &mut RunResults,
) -> WifiCheck {
    let ssid = "bb-qemu-ibss";
    let c = Chandef::new(Band::Ghz2, 1, Width::NoHt20).expect("channel 1");
    let check = |passed, detail: String| WifiCheck {
        name: "ibss".into(),
        passed,
        detail,
    };
    let port = tests.peer_port;
    let ifname = other.1.name.clone();
    let child = spawn_stand_in(
        radio,
        other.0.index,
        &other.1.name,
        "the IBSS peer",
        move || {
            let Some((mut r, i)) = own_radio(&ifname) else {
                return STAND_IN_NO_IBSS;
            };
            if join_ibss(&mut r, &i, ssid, c).is_err() {
                return STAND_IN_NO_IBSS;
            }
            if sys::ifconfig_up(&ifname, IBSS_PEER, 24).is_err() {
                return HOST_NO_ADDRESS;
            }
            match std::net::TcpListener::bind((Ipv4Addr::from(IBSS_PEER), port)) {
                Ok(l) => {
                    let _ =
                        benchboot_netbench::peer::serve(l, Path::new(crate::network::PROC_STAT));
                    0
                }
                Err(_) => crate::network::HOST_NO_LISTEN,
            }
        },
    );
    let pid = match child {
        Ok(p) => p,
        Err(e) => return check(false, e),
    };
    let outcome = (|| {
        join_ibss(radio, iface, ssid, c)?;
        sys::ifconfig_up(&iface.name, IBSS_BOARD, 24).map_err(|e| e.to_string())?;
        let smoke = NetTests {
            streams: vec![],
            latency_samples: 20,
            http_bytes: 0,
            udp_bitrate: 0,
            ..tests.clone()
        };
        let before = results.network.latency.len();
        let _ = tests_with_counters(
            "wifi-ibss",
            &iface.name,
            IBSS_BOARD,
            IBSS_PEER.into(),
            &smoke,
            results,
        );
        match results.network.latency[before..]
            .iter()
            .find(|l| l.link == "wifi-ibss")
        {
            Some(l) => Ok(format!(
                "IBSS {ssid:?} on {} MHz joined by both radios; {} TCP round trips across",
                c.control_mhz,
                l.rtt_ns.len()
            )),
            None => Err(format!(
                "joined, but no TCP round trip across{}",
                worker::exit_code(pid)
                    .map(|c| format!(" (the IBSS peer had exited: {})", stand_in_failure(c)))
                    .unwrap_or_default()
            )),
        }
    })();
    let _ = radio.leave_ibss(iface.ifindex);
    back_to_station(radio, iface);
    worker::kill_and_reap(pid);
    match outcome {
        Ok(d) => check(true, d),
        Err(e) => check(false, e),
    }
}

/// Interface type IBSS, up, `JOIN_IBSS`, and wait until the kernel reports the channel.
fn join_ibss(radio: &mut Radio, iface: &Interface, ssid: &str, c: Chandef) -> Result<(), String> {
    let _ = sys::link_down(&iface.name);
    radio
        .set_type(iface.ifindex, IfType::Adhoc)
        .map_err(|e| format!("interface type IBSS: {e}"))?;
    sys::link_up(&iface.name).map_err(|e| e.to_string())?;
    radio
        .join_ibss(iface.ifindex, ssid.as_bytes(), c, Some(IBSS_BSSID))
        .map_err(|e| format!("JOIN_IBSS: {e}"))
}
