//! The board as a WiFi AP, one plan entry (hardware: brcmfmac answers association in
//! its firmware): the board's own AP (`START_AP` with a beacon built for the entry's
//! channel), a DHCP server for the station, the offer sent over the results link to
//! `benchboot peer --wifi` until a station takes a lease (a session with that peer held
//! meanwhile, naming the board: [`super::hold`]), the tests against it
//! ([`super::measure`]), `STOP_AP` and the interface back as a station.

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use benchboot_netbench::wifi_offer::{WifiOffer, WIFI_OFFER_PORT};
use benchboot_plan::{Plan, WifiEntry, WifiSecurity};
use benchboot_results::wifi::WifiEntryResult;
use benchboot_results::RunResults;
use benchboot_wifi::channel::Chandef;
use benchboot_wifi::nl80211::{self, IfType, Interface, Wiphy};
use benchboot_wifi::{ie, psk};

use super::entry::{channel_flags, channel_record, measure, Ctx};
use super::hold;
use crate::console::say;
use crate::radio::Radio;
use crate::sys;

/// The board's address on its own AP, and the station's lease (a /24 apart from the
/// gadget's 10.55, the stand-in LAN's 10.56 and the wired links' 10.57).
const AP_BOARD: [u8; 4] = [10, 58, 0, 1];
const AP_STATION: [u8; 4] = [10, 58, 0, 2];
const AP_PREFIX: u8 = 24;
/// Beacon interval of the board's AP, TU (1.024 ms): the usual 100.
const BEACON_TU: u16 = 100;

/// One AP entry (hardware): the board's AP on the entry's channel, offered to the host
/// over the results link, the tests against the station that joins.
pub(super) fn ap_entry(
    cx: &mut Ctx,
    e: &WifiEntry,
    security: WifiSecurity,
    r: &mut WifiEntryResult,
) -> Result<(), String> {
    let (w, phy, iface) = (cx.w, cx.phy, cx.iface);
    let c = e
        .asked
        .and_then(|a| a.chandef().ok())
        .ok_or("an AP entry without a channel")?;
    r.channel_flags = channel_flags(phy, c.control_mhz);
    let ssid = e.ssid.clone().ok_or("an AP entry without an SSID")?;
    let passphrase = ap_passphrase(phy, security, r)?;
    if let Err(e) = start_board_ap(
        cx.radio,
        phy,
        iface,
        &ssid,
        c,
        passphrase.as_deref(),
        &w.country,
    ) {
        // Back to a station interface: the next entry starts from there.
        stop_board_ap(cx.radio, iface);
        return Err(e);
    }
    r.obtained = cx
        .radio
        .interface(iface.ifindex)
        .ok()
        .and_then(|i| i.chandef)
        .map(|c| channel_record(&c));
    r.bssid = iface.mac.map(|m| benchboot_plan::network::mac_text(&m));
    let offer = WifiOffer {
        ssid: ssid.as_bytes().to_vec(),
        passphrase,
        freq_mhz: c.control_mhz,
        width_mhz: c.width.mhz(),
        board: AP_BOARD.into(),
    };
    let outcome = serve_ap(cx, &offer, r);
    stop_board_ap(cx.radio, iface);
    outcome
}

/// The AP's WPA2 passphrase (random, with the radio's AP 4-way handshake offload), or
/// none: an open entry, or WPA2 asked of a radio without the offload (the AP runs open
/// and the record says so).
fn ap_passphrase(
    phy: &Wiphy,
    security: WifiSecurity,
    r: &mut WifiEntryResult,
) -> Result<Option<String>, String> {
    match security {
        WifiSecurity::Open => Ok(None),
        WifiSecurity::Wpa2Psk
            if phy.has_ext_feature(nl80211::EXT_FEATURE_4WAY_HANDSHAKE_AP_PSK) =>
        {
            r.security_note = Some("4-way handshake offloaded to the radio".into());
            Ok(Some(random_passphrase()?))
        }
        WifiSecurity::Wpa2Psk => {
            r.security = "open".into();
            r.security_note = Some(
                "WPA2 asked, the radio offers no AP 4-way handshake offload (4WAY_HANDSHAKE_AP_PSK): the AP ran open"
                    .into(),
            );
            Ok(None)
        }
    }
}

/// With the board's AP up: its address, a DHCP server for the station, `offer` sent
/// over the results link (a session with its peers held meanwhile) until a station
/// takes a lease, then the tests against it.
fn serve_ap(cx: &mut Ctx, offer: &WifiOffer, r: &mut WifiEntryResult) -> Result<(), String> {
    let (plan, w, iface) = (cx.plan, cx.w, cx.iface);
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
    let targets = offer_targets(plan, cx.results);
    say(&format!(
        "wifi {}: AP {:?} up on {} MHz; waiting {} s for `benchboot peer --wifi` (offered to {targets:?})",
        r.link,
        String::from_utf8_lossy(&offer.ssid),
        offer.freq_mhz,
        w.connect_wait_ms / 1000
    ));
    let peers = hold::results_link_peers(plan, cx.results);
    if peers.is_empty() {
        say(&format!(
            "wifi {}: no peer met on the results link: `benchboot peer --wifi` takes an \
             offer only from a board holding a session with it; offering all the same",
            r.link
        ));
    }
    let holding = Arc::new(AtomicBool::new(false));
    let holder = hold::hold(peers, plan.board.clone(), holding.clone()).ok();
    let t0 = sys::boottime_ns();
    let lease = offer_until_lease(
        offer,
        &targets,
        &lease_rx,
        Duration::from_millis(w.connect_wait_ms),
    );
    holding.store(true, Ordering::Relaxed);
    if let Some(h) = holder {
        let _ = h.join();
    }
    let outcome = match lease {
        None => Err(format!(
            "no station joined within {} s (run `benchboot peer --wifi` on a host with WiFi, on the results link)",
            w.connect_wait_ms / 1000
        )),
        Some(l) => {
            r.connect_ns = Some(sys::boottime_ns().saturating_sub(t0));
            r.peer_address = Some(l.address.octets());
            r.peer_found_by = Some("lease".into());
            measure(cx, l.address, r);
            Ok(())
        }
    };
    stop.store(true, Ordering::Relaxed);
    let _ = dhcp.join();
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
pub(super) fn start_board_ap(
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

pub(super) fn stop_board_ap(radio: &mut Radio, iface: &Interface) {
    let _ = radio.stop_ap(iface.ifindex);
    back_to_station(radio, iface);
}

/// The interface back as a station with no address, as the next entry expects it.
pub(super) fn back_to_station(radio: &mut Radio, iface: &Interface) {
    let _ = sys::ifconfig_up(&iface.name, [0; 4], 0);
    let _ = sys::link_down(&iface.name);
    let _ = radio.set_type(iface.ifindex, IfType::Station);
    let _ = sys::link_up(&iface.name);
}
