//! The board's sessions with the peer over its results link while it offers its AP.
//! `benchboot peer --wifi` takes an offer only from the board at the far end of one of
//! the host's point-to-point links (a gadget link's or a direct cable's /30) holding a
//! live session, come in on that link, that named the board the SSID is of (the host's
//! `wifi_join::offers::admit` asks the peer's registry), so while the offer goes out PID 1 holds one session to
//! every peer it met on a results link, its hello naming the plan's board, and opens it
//! again when the peer closed it (a session that runs no test is closed after the
//! peer's idle timeout, 120 s, as long as an AP waits).

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use benchboot_netbench::driver::Session;
use benchboot_plan::Plan;
use benchboot_results::RunResults;

use crate::netkit::PROC_STAT;

/// How often a closed or never opened session is tried again.
const RETRY_EVERY: Duration = Duration::from_secs(2);

/// The peers the board met on its results link: the host end of every gadget link that
/// took a lease, and the peer of the wired link on the static results interface (the
/// offer's broadcast goes out there), at the plan's peer port. The offer goes out on
/// those links, so it leaves from the address each session comes from.
pub(super) fn results_link_peers(plan: &Plan, results: &RunResults) -> Vec<SocketAddr> {
    let Some(port) = plan.network.tests.as_ref().map(|t| t.peer_port) else {
        return Vec::new();
    };
    let n = &plan.network;
    let gadget = results.network.links.iter().filter_map(|l| l.host_address);
    let wired = results
        .network
        .wired
        .iter()
        .filter(|w| !n.interface.is_empty() && w.interface == n.interface)
        .filter_map(|w| w.peer_address);
    let mut out: Vec<SocketAddr> = Vec::new();
    for a in gadget.chain(wired) {
        let at = SocketAddr::from((Ipv4Addr::from(a), port));
        if !out.contains(&at) {
            out.push(at);
        }
    }
    out
}

/// A thread holding a session named `board` to each of `peers` until `stop` is set;
/// then each session says goodbye.
pub(super) fn hold(
    peers: Vec<SocketAddr>,
    board: String,
    stop: Arc<AtomicBool>,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("wifi-offer-hold".into())
        .spawn(move || {
            let mut sessions: Vec<Option<Session>> = peers.iter().map(|_| None).collect();
            while !stop.load(Ordering::Relaxed) {
                for (peer, s) in peers.iter().zip(sessions.iter_mut()) {
                    if s.as_ref().is_some_and(Session::is_open) {
                        continue;
                    }
                    *s = Session::connect_as(
                        *peer,
                        Duration::ZERO,
                        Path::new(PROC_STAT),
                        Some(&board),
                    )
                    .ok();
                }
                let mut slept = Duration::ZERO;
                while slept < RETRY_EVERY && !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
                    slept += Duration::from_millis(100);
                }
            }
            for s in sessions.into_iter().flatten() {
                s.close();
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchboot_plan::NetTests;
    use benchboot_results::network::{LinkRecord, WiredLink};

    #[test]
    fn the_peers_are_those_met_on_the_results_links() {
        let mut plan = Plan::example();
        plan.network.tests = Some(NetTests {
            peer_port: 5300,
            ..NetTests::hardware()
        });
        plan.network.interface = "eth0".into();
        let mut r = RunResults::new(
            "t".into(),
            plan.clone(),
            benchboot_storage::system::system_info(0),
        );
        let link = |host: Option<[u8; 4]>| LinkRecord {
            function: "ncm".into(),
            udc: "20980000.usb".into(),
            board_interface: "usb0".into(),
            board_mac: String::new(),
            host_mac: String::new(),
            board_address: [10, 55, 0, 1],
            host_address: host,
            lease_ns: None,
        };
        r.network.links = vec![link(Some([10, 55, 0, 2])), link(None)];
        let wired = |interface: &str, peer: [u8; 4]| WiredLink {
            name: "eth".into(),
            kind: "builtin".into(),
            interface: interface.into(),
            mac: String::new(),
            facts: Default::default(),
            topology: "direct".into(),
            board_address: [10, 57, 0, 1],
            prefix_len: 30,
            peer_address: Some(peer),
            peer_found_by: Some("lease".into()),
            lease_ns: None,
            dhcp_server: None,
            counters: Vec::new(),
        };
        // The static results interface's peer counts; another interface's does not.
        r.network.wired = vec![wired("eth0", [10, 57, 0, 2]), wired("eth1", [10, 57, 1, 2])];
        assert_eq!(
            results_link_peers(&plan, &r),
            [
                SocketAddr::from(([10, 55, 0, 2], 5300)),
                SocketAddr::from(([10, 57, 0, 2], 5300))
            ]
        );
        plan.network.tests = None;
        assert_eq!(results_link_peers(&plan, &r), []);
    }

    /// Against a real peer on loopback: the session names the board while held (the
    /// registry `peer --wifi` asks shows it), is opened again when the peer closes it,
    /// and says goodbye when the offer ends.
    #[test]
    fn a_held_session_names_the_board_and_comes_back_when_closed() {
        use benchboot_netbench::peer;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let at = l.local_addr().unwrap();
        let registry = peer::Registry::new();
        let r = registry.clone();
        let options = peer::PeerOptions {
            idle_timeout: Duration::from_millis(300),
            ..peer::PeerOptions::default()
        };
        std::thread::spawn(move || {
            peer::serve_with_registry(l, Path::new(PROC_STAT), &options, r, |_| {})
        });
        let stop = Arc::new(AtomicBool::new(false));
        let holder = hold(vec![at], "rpi-4b".into(), stop.clone()).unwrap();
        let local = std::net::IpAddr::from([127, 0, 0, 1]);
        let named = || {
            registry
                .boards_at(local)
                .iter()
                .flatten()
                .map(|b| b.as_str().to_owned())
                .collect::<Vec<_>>()
        };
        let eventually = |what: &str, done: &dyn Fn() -> bool| {
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while !done() {
                assert!(std::time::Instant::now() < deadline, "never: {what}");
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        eventually("a session naming rpi-4b", &|| named() == ["rpi-4b"]);
        // The peer closes it after 300 ms without a test; it is opened again.
        eventually("closed by the peer", &|| registry.sessions() == 0);
        eventually("opened again", &|| named() == ["rpi-4b"]);
        stop.store(true, Ordering::Relaxed);
        holder.join().unwrap();
        eventually("closed at the end", &|| registry.sessions() == 0);
    }
}
