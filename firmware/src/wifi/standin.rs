//! QEMU only: the stand-ins for the other end of the WiFi link. mac80211_hwsim's second
//! radio is moved into a network namespace (`NL80211_CMD_SET_WIPHY_NETNS`) whose forked
//! child plays that end:
//!
//! - [`spawn_ap`]: each client entry's AP, Debian's hostapd (a QEMU-only worker in the
//!   initramfs), with the stand-in LAN's DHCP server and announcing peer;
//! - [`ap_beacon_check`]: the board's own AP (`START_AP`, no user space) seen by the
//!   other radio's scan;
//! - [`ibss_smoke`]: both radios in one IBSS (joined in the kernel), TCP round trips
//!   across.

use std::sync::mpsc;
use std::time::Duration;

use benchboot_plan::{NetTests, WifiPlan};
use benchboot_results::wifi::WifiCheck;
use benchboot_results::RunResults;
use benchboot_wifi::channel::{Band, Chandef, Width};
use benchboot_wifi::hostapd;
use benchboot_wifi::nl80211::{IfType, Interface, Wiphy};

use super::ap::{back_to_station, start_board_ap, stop_board_ap};
use super::scan::{scan_for, SCAN_WAIT};
use crate::console::say;
use crate::netkit::{
    host_side_failure, serve_peer, spawn_in_netns_moving, stand_in_lan_body, tests_with_counters,
    StandInLan, HOST_NO_ADDRESS,
};
use crate::radio::Radio;
use crate::wait::wait_until;
use crate::{sys, worker};

/// The WiFi stand-in AP's LAN, apart from the wired stand-in's 10.56.0.0/24 (whose
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
/// Exit codes of the stand-in children.
const STAND_IN_NO_HOSTAPD: i32 = 20;
const STAND_IN_NO_BEACON: i32 = 21;
const STAND_IN_NO_IBSS: i32 = 22;

/// A client entry's AP: writes `ap`'s hostapd.conf and forks a stand-in child that takes
/// the `other` radio into its namespace, runs hostapd (at `hostapd_path`) there and, once
/// the AP is up, the stand-in LAN ([`stand_in_lan_body`], the peer's control port
/// `port`). Returns the child's pid. Errors: the config cannot be written for `ap`, the
/// radio did not come back from the last stand-in, the fork or the move failed.
pub(super) fn spawn_ap(
    radio: &mut Radio,
    hostapd_path: &str,
    other: (&Wiphy, &Interface),
    ap: &hostapd::StandInAp,
    port: u16,
) -> Result<i32, String> {
    let conf = hostapd::config(ap).map_err(|e| format!("stand-in AP: {e}"))?;
    let (other, other_if) = other;
    spawn_stand_in(radio, other.index, &other_if.name, "the stand-in AP", {
        let hostapd_path = hostapd_path.to_owned();
        let ifname = other_if.name.clone();
        move || {
            if let Err(code) = start_hostapd(&hostapd_path, &conf) {
                return code;
            }
            stand_in_lan_body(&ifname, port, WIFI_STAND_IN)
        }
    })
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
pub(super) fn stand_in_failure(code: i32) -> String {
    match code {
        STAND_IN_NO_HOSTAPD => {
            "hostapd did not bring the AP up (its lines are on the console)".into()
        }
        STAND_IN_NO_BEACON => "its scan did not see the beacons".into(),
        STAND_IN_NO_IBSS => "it could not join the IBSS".into(),
        c => host_side_failure(c),
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
pub(super) fn ap_beacon_check(
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
pub(super) fn ibss_smoke(
    radio: &mut Radio,
    iface: &Interface,
    other: &(Wiphy, Interface),
    tests: &NetTests,
    results: &mut RunResults,
) -> WifiCheck {
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
        move || ibss_peer(&ifname, c, port),
    );
    let pid = match child {
        Ok(p) => p,
        Err(e) => return check(false, e),
    };
    let outcome = ibss_round_trips(radio, iface, c, pid, tests, results);
    let _ = radio.leave_ibss(iface.ifindex);
    back_to_station(radio, iface);
    worker::kill_and_reap(pid);
    match outcome {
        Ok(d) => check(true, d),
        Err(e) => check(false, e),
    }
}

/// The IBSS smoke's SSID.
const IBSS_SSID: &str = "bb-qemu-ibss";

/// In the IBSS peer child: its own radio's interface `ifname` joins the IBSS on `c`,
/// takes [`IBSS_PEER`] and serves the peer on `port`. Its exit code.
fn ibss_peer(ifname: &str, c: Chandef, port: u16) -> i32 {
    let Some((mut r, i)) = own_radio(ifname) else {
        return STAND_IN_NO_IBSS;
    };
    if join_ibss(&mut r, &i, IBSS_SSID, c).is_err() {
        return STAND_IN_NO_IBSS;
    }
    if sys::ifconfig_up(ifname, IBSS_PEER, 24).is_err() {
        return HOST_NO_ADDRESS;
    }
    serve_peer(IBSS_PEER.into(), port)
}

/// The board's side of the IBSS smoke: joins, takes [`IBSS_BOARD`] and runs round trips
/// only against the peer child `pid`; what it saw, or why not (with how the child
/// ended, if it did).
fn ibss_round_trips(
    radio: &mut Radio,
    iface: &Interface,
    c: Chandef,
    pid: i32,
    tests: &NetTests,
    results: &mut RunResults,
) -> Result<String, String> {
    join_ibss(radio, iface, IBSS_SSID, c)?;
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
            "IBSS {IBSS_SSID:?} on {} MHz joined by both radios; {} TCP round trips across",
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
