//! The board as a WiFi client, one plan entry: its AP found by a scan (the QEMU
//! stand-in's, started first, on the other radio), `CONNECT` (open, or WPA2-PSK through
//! the radio's 4-way handshake offload; without the offload the entry is recorded as
//! needing a supplicant), a DHCP lease, the peer from the plan or its announcement, the
//! tests ([`super::measure`]), the disconnect.

use std::time::Duration;

use benchboot_plan::{WifiEntry, WifiRole};
use benchboot_results::wifi::{Neighbour, WifiEntryResult};
use benchboot_wifi::channel::Chandef;
use benchboot_wifi::nl80211::{self, Bss, Interface, Wiphy};
use benchboot_wifi::{hostapd, psk, station};

use super::entry::{channel_flags, channel_record, measure, Ctx};
use super::scan::scan_for;
use super::standin;
use crate::console::say;
use crate::netkit::lan_peer;
use crate::wait::wait_until;
use crate::{link, sys, worker};

/// One client entry: scan, connect, lease, peer, tests, disconnect. `stand_in` (QEMU):
/// the other hwsim radio, where this entry's AP runs.
pub(super) fn client_entry(
    cx: &mut Ctx,
    e: &WifiEntry,
    stand_in: Option<&(Wiphy, Interface)>,
    r: &mut WifiEntryResult,
) -> Result<(), String> {
    let (w, phy, iface) = (cx.w, cx.phy, cx.iface);
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
        let ap = hostapd::StandInAp {
            interface: &other_if.name,
            ssid: &ssid,
            chandef: *c,
            country: &w.country,
            passphrase: passphrase.as_deref(),
        };
        child = Some(standin::spawn_ap(
            cx.radio,
            &s.hostapd,
            (other, other_if),
            &ap,
            cx.tests.peer_port,
        )?);
    }
    let mut outcome = connect_and_measure(cx, &ssid, chandef, pmk, *peer, r);
    if let (Err(e), Some(pid)) = (&mut outcome, child) {
        if let Some(code) = worker::exit_code(pid) {
            child = None;
            e.push_str(&format!(
                "; the stand-in AP had exited: {}",
                standin::stand_in_failure(code)
            ));
        }
    }
    let _ = cx.radio.disconnect(iface.ifindex);
    let _ = sys::ifconfig_up(&iface.name, [0; 4], 0);
    if let Some(pid) = child {
        worker::kill_and_reap(pid);
    }
    outcome
}

/// Scan, connect, lease, tests: the part of a client entry between its AP coming up
/// and the disconnect: `ssid` on `chandef`'s primary channel (any channel without
/// one), with the WPA2 `pmk` when the entry has a passphrase, the peer at `peer` when
/// the plan gives it (else announced).
fn connect_and_measure(
    cx: &mut Ctx,
    ssid: &str,
    chandef: Option<Chandef>,
    pmk: Option<[u8; 32]>,
    peer: Option<[u8; 4]>,
    r: &mut WifiEntryResult,
) -> Result<(), String> {
    let (plan, w, iface) = (cx.plan, cx.w, cx.iface);
    let up_ns = associate(cx, ssid, chandef, pmk, r)?;
    let wait = Duration::from_millis(w.connect_wait_ms);
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
    measure(cx, found.address, r);
    Ok(())
}

/// Scans for `ssid` (on `chandef`'s primary channel, else everywhere), records the
/// neighbours and the BSSID, `CONNECT`s (with `pmk` for WPA2) and waits for the
/// association; records how long it took, the channel obtained and the transmit power.
/// Returns when the link came up (CLOCK_BOOTTIME, ns).
fn associate(
    cx: &mut Ctx,
    ssid: &str,
    chandef: Option<Chandef>,
    pmk: Option<[u8; 32]>,
    r: &mut WifiEntryResult,
) -> Result<u64, String> {
    let (w, iface) = (cx.w, cx.iface);
    let radio = &mut *cx.radio;
    let freqs: Vec<u32> = chandef.map(|c| vec![c.control_mhz]).unwrap_or_default();
    let bss = scan_for(radio, iface.ifindex, &freqs, ssid.as_bytes())?;
    r.neighbours = neighbours(&radio.scan_results(iface.ifindex).unwrap_or_default(), &bss);
    r.bssid = Some(benchboot_plan::network::mac_text(&bss.bssid));
    let bssid = r.bssid.clone().unwrap_or_default();
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
        .map_err(|e| format!("CONNECT to {bssid}: {e}"))?;
    let mut joined = None;
    wait_until(Duration::from_millis(w.connect_wait_ms), || {
        joined = radio
            .interface(iface.ifindex)
            .ok()
            .filter(|i| i.ssid.as_deref() == Some(ssid.as_bytes()) && i.chandef.is_some());
        joined.is_some()
    });
    let joined = joined.ok_or_else(|| {
        format!(
            "not associated with {bssid} within {} ms",
            w.connect_wait_ms
        )
    })?;
    let up_ns = sys::boottime_ns();
    r.connect_ns = Some(up_ns.saturating_sub(t0));
    r.obtained = joined.chandef.map(|c| channel_record(&c));
    r.txpower_mbm = joined.txpower_mbm;
    say(&format!(
        "wifi {}: associated with {bssid} on {} MHz, {} MHz wide (centre {} MHz)",
        r.link,
        r.obtained.map_or(0, |c| c.freq_mhz),
        r.obtained.map_or(0, |c| c.width_mhz),
        r.obtained.map_or(0, |c| c.center1_mhz),
    ));
    Ok(up_ns)
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
