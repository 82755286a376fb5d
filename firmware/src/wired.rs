//! The wired step of PID 1: every `network.wired` link of the plan (built-in Ethernet, USB
//! Ethernet adapters) found by MAC or driver, brought up, addressed by its topology and
//! measured with the same network tests as the gadget link.
//!
//! - direct: a cable to the host. The board is `.1` of the link's /30 and its DHCP server
//!   leases `.2` to the host (no router, no DNS): the peer is at the leased address (at
//!   `.2` all the same, with a warning, when the host never asks: a static address). The
//!   server keeps running for the rest of the boot so the host keeps its lease.
//! - LAN: the board asks the LAN's DHCP server for a lease (`crates/dhcp`'s client), then
//!   reaches the peer at the plan's address or at the first `benchboot peer --announce`
//!   it hears on [`PEER_ANNOUNCE_PORT`].
//!
//! QEMU (`host_in_namespace`): the cable's other end is an interface of this same guest
//! (two NICs on one QEMU hub); PID 1 moves it into a network namespace where a forked
//! child plays the host: for direct it takes the lease and runs the peer, for LAN it is
//! the LAN's DHCP server and the peer, announcing itself.
//!
//! Every failure (a link the board lacks, no interface, no carrier, no lease, no peer) is
//! one error event naming the link; the next link and the rest of the plan run.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use benchboot_netbench::driver::Stage;
use benchboot_plan::network::{direct_addresses, mac_text, parse_mac};
use benchboot_plan::{NetTests, Plan, Topology, WiredPlan, PEER_ANNOUNCE_PORT};
use benchboot_results::counters::{CounterSpan, NetTest};
use benchboot_results::network::WiredLink;
use benchboot_results::{RunResults, Severity};

use crate::console::say;
use crate::network::{
    host_side_failure, run_tests, spawn_host_side, spawn_in_netns, start_dhcp, HOST_NO_ADDRESS,
    HOST_NO_LISTEN, PROC_STAT,
};
use crate::wait::wait_until;
use crate::{link, sys, worker};

/// Where the kernel lists network interfaces (Documentation/ABI/testing/sysfs-class-net).
const NET_ROOT: &str = "/sys/class/net";
/// The /30 of a direct link.
const DIRECT_PREFIX: u8 = 30;

/// A QEMU stand-in LAN (namespace child): its router / DHCP server / peer address
/// (`.1` of a /24) and the address it leases the board (`.2`).
#[derive(Debug, Clone, Copy)]
pub struct StandInLan {
    pub router: [u8; 4],
    pub lease: [u8; 4],
}

/// The wired stand-in LAN: 10.56.0.0/24.
pub const WIRED_STAND_IN: StandInLan = StandInLan {
    router: [10, 56, 0, 1],
    lease: [10, 56, 0, 2],
};
const STAND_IN_PREFIX: u8 = 24;

/// Runs every wired link of the plan, in order.
pub fn run_wired(plan: &Plan, results: &mut RunResults) {
    let mut in_use: Vec<String> = results
        .network
        .links
        .iter()
        .map(|l| l.board_interface.clone())
        .collect();
    for w in &plan.network.wired {
        if let Some(ifname) = one_link(plan, w, &in_use, results) {
            in_use.push(ifname);
        }
    }
}

fn fail(results: &mut RunResults, w: &WiredPlan, msg: String) {
    let step = format!("network.wired.{}", w.name);
    say(&format!("{step}: {msg}"));
    results.event(step, Severity::Error, msg);
}

/// Finds, brings up, addresses and measures one link; returns the interface it used.
fn one_link(
    plan: &Plan,
    w: &WiredPlan,
    in_use: &[String],
    results: &mut RunResults,
) -> Option<String> {
    if let Some(why) = &w.unavailable {
        fail(results, w, why.clone());
        return None;
    }
    crate::modalias::scan(&format!("network.wired.{}", w.name), results);
    let wait = Duration::from_millis(w.link_wait_ms);
    let mac = w.mac.as_deref().and_then(parse_mac);
    let mut exclude: Vec<String> = in_use.to_vec();
    // The namespace stand-in's interface is the cable's other end, never this link.
    exclude.extend(
        w.host_in_namespace
            .as_deref()
            .and_then(parse_mac)
            .and_then(|m| link::find_interface(Path::new(NET_ROOT), Some(&m), &[], &[])),
    );
    let mut ifname = None;
    wait_until(wait, || {
        crate::modalias::poll();
        ifname = link::find_interface(Path::new(NET_ROOT), mac.as_ref(), &w.drivers, &exclude);
        ifname.is_some()
    });
    let Some(ifname) = ifname else {
        let by = match &w.mac {
            Some(m) => format!("with MAC {m}"),
            None if w.drivers.is_empty() => "with a device".to_owned(),
            None => format!("driven by {}", w.drivers.join(" or ")),
        };
        fail(
            results,
            w,
            format!(
                "no interface {by} appeared within {} ms (adapter plugged in? driver in the image?)",
                w.link_wait_ms
            ),
        );
        return None;
    };
    if let Err(e) = sys::link_up(&ifname) {
        fail(results, w, format!("{ifname}: cannot bring it up: {e}"));
        return Some(ifname);
    }
    let up_ns = sys::boottime_ns();
    let net = Path::new(NET_ROOT);
    let carrier = wait_until(wait, || link::facts(net, &ifname).carrier);
    let facts = link::full_facts(&ifname, w.rated_mbit);
    let mut record = WiredLink {
        name: w.name.clone(),
        kind: w.kind.name().into(),
        interface: ifname.clone(),
        mac: std::fs::read_to_string(net.join(&ifname).join("address"))
            .map(|s| s.trim().to_owned())
            .unwrap_or_default(),
        facts,
        topology: w.topology.name().into(),
        board_address: [0; 4],
        prefix_len: 0,
        peer_address: None,
        peer_found_by: None,
        lease_ns: None,
        dhcp_server: None,
        counters: Vec::new(),
    };
    say(&format!(
        "wired {}: {ifname} ({}), {}",
        w.name,
        record.facts.driver.as_deref().unwrap_or("driver unknown"),
        match (record.facts.speed_mbit, record.facts.duplex.as_deref()) {
            (Some(s), Some(d)) => format!("{s} Mb/s {d} duplex"),
            (Some(s), None) => format!("{s} Mb/s"),
            _ => "speed unknown".into(),
        }
    ));
    if !carrier {
        fail(
            results,
            w,
            format!(
                "{ifname}: no carrier within {} ms (cable in? the other end up?)",
                w.link_wait_ms
            ),
        );
        results.network.wired.push(record);
        return Some(ifname);
    }
    if let Some(why) = record.facts.degraded() {
        let step = format!("network.wired.{}", w.name);
        say(&format!("{step}: {why}"));
        results.event(step, Severity::Warning, why);
    }
    let mut stand_in = None;
    let mut setup = Setup {
        plan,
        w,
        ifname: &ifname,
        up_ns,
        record: &mut record,
        stand_in: &mut stand_in,
        results: &mut *results,
    };
    let peer = match &w.topology {
        Topology::Direct { subnet, lease_secs } => direct(&mut setup, *subnet, *lease_secs),
        Topology::Lan { peer } => lan(&mut setup, *peer),
    };
    if let (Some(peer), Some(tests)) = (peer, &plan.network.tests) {
        measure(&ifname, &mut record, peer, tests, results);
    }
    if let Some(pid) = stand_in {
        worker::kill_and_reap(pid);
    }
    results.network.wired.push(record);
    Some(ifname)
}

/// One wired link as [`direct`] and [`lan`] set it up: the plan and the link's entry,
/// its interface and when it came up (boot time, ns), its record (addresses, peer,
/// lease), the QEMU stand-in child's pid once forked (killed after the tests) and the
/// results the failures go to.
struct Setup<'a> {
    plan: &'a Plan,
    w: &'a WiredPlan,
    ifname: &'a str,
    up_ns: u64,
    record: &'a mut WiredLink,
    stand_in: &'a mut Option<i32>,
    results: &'a mut RunResults,
}

/// Direct cable: the board's DHCP server leases the host `.2`; returns the peer's address.
fn direct(cx: &mut Setup, subnet: [u8; 4], lease_secs: u32) -> Option<Ipv4Addr> {
    let (plan, w, ifname, up_ns) = (cx.plan, cx.w, cx.ifname, cx.up_ns);
    let (board, host) = direct_addresses(subnet);
    if let Err(e) = sys::ifconfig_up(ifname, board, DIRECT_PREFIX) {
        fail(
            cx.results,
            w,
            format!("{ifname}: cannot set {}: {e}", Ipv4Addr::from(board)),
        );
        return None;
    }
    cx.record.board_address = board;
    cx.record.prefix_len = DIRECT_PREFIX;
    let (tx, rx) = mpsc::channel();
    // Runs for the rest of the boot on hardware, so the host keeps its lease.
    let stop = Arc::new(AtomicBool::new(false));
    let dhcp = start_dhcp(ifname, board, host, lease_secs, 0, tx, stop.clone());
    let wait = Duration::from_millis(
        w.link_wait_ms
            .max(plan.network.tests.as_ref().map_or(0, |t| t.peer_wait_ms)),
    );
    if let Some(host_mac) = w.host_in_namespace.as_deref().and_then(parse_mac) {
        match link::find_interface(Path::new(NET_ROOT), Some(&host_mac), &[], &[]) {
            None => fail(
                cx.results,
                w,
                format!(
                    "the stand-in host's interface {} is missing",
                    mac_text(&host_mac)
                ),
            ),
            Some(host_if) => match spawn_host_side(&host_if, host_mac, plan, wait) {
                Ok(pid) => *cx.stand_in = Some(pid),
                Err(e) => fail(cx.results, w, e),
            },
        }
    }
    say(&format!(
        "wired {}: {ifname} at {}/30, waiting for the host to take {}",
        w.name,
        Ipv4Addr::from(board),
        Ipv4Addr::from(host)
    ));
    let lease = rx.recv_timeout(wait).ok().map(|(_, l)| l);
    if cx.stand_in.is_some() {
        stop.store(true, Ordering::Relaxed);
        let _ = wait_until(Duration::from_secs(5), || dhcp.is_finished());
    }
    match lease {
        Some(l) => {
            cx.record.peer_address = Some(l.address.octets());
            cx.record.peer_found_by = Some("lease".into());
            cx.record.lease_ns = Some(l.acked_ns.saturating_sub(up_ns));
            say(&format!(
                "wired {}: host {} took {}",
                w.name,
                mac_text(&l.mac),
                l.address
            ));
            Some(l.address)
        }
        None => match cx.stand_in.and_then(worker::exit_code) {
            Some(code) => {
                *cx.stand_in = None;
                let why = format!(
                    "no DHCP lease taken; the stand-in host ended: {}",
                    host_side_failure(code)
                );
                fail(cx.results, w, why);
                None
            }
            None if cx.stand_in.is_some() => {
                fail(
                    cx.results,
                    w,
                    format!(
                        "the stand-in host took no lease within {} ms",
                        wait.as_millis()
                    ),
                );
                None
            }
            None => {
                // A host whose end has a static address never asks: try it at `.2`; the
                // driver says so when no peer answers there either.
                let msg = format!(
                    "no host took a DHCP lease within {} ms; trying the peer at {} (a static \
                     address on the host's end?)",
                    wait.as_millis(),
                    Ipv4Addr::from(host)
                );
                say(&format!("network.wired.{}: {msg}", w.name));
                cx.results
                    .event(format!("network.wired.{}", w.name), Severity::Warning, msg);
                cx.record.peer_address = Some(host);
                cx.record.peer_found_by = Some("static".into());
                Some(host.into())
            }
        },
    }
}

/// LAN: the board takes a lease, then finds the peer; returns the peer's address.
fn lan(cx: &mut Setup, peer: Option<[u8; 4]>) -> Option<Ipv4Addr> {
    let (plan, w, ifname, up_ns) = (cx.plan, cx.w, cx.ifname, cx.up_ns);
    let wait = Duration::from_millis(w.link_wait_ms);
    if let Some(host_mac) = w.host_in_namespace.as_deref().and_then(parse_mac) {
        match link::find_interface(Path::new(NET_ROOT), Some(&host_mac), &[], &[]) {
            None => fail(
                cx.results,
                w,
                format!(
                    "the stand-in LAN's interface {} is missing",
                    mac_text(&host_mac)
                ),
            ),
            Some(host_if) => match spawn_stand_in_lan(&host_if, plan) {
                Ok(pid) => *cx.stand_in = Some(pid),
                Err(e) => fail(cx.results, w, e),
            },
        }
    }
    let Some(mac) = parse_mac(&cx.record.mac) else {
        fail(
            cx.results,
            w,
            format!("{ifname}: no MAC address to ask for a lease with"),
        );
        return None;
    };
    let lease = match benchboot_dhcp::client_lease(ifname, mac, wait) {
        Ok(l) => l,
        Err(e) => {
            fail(
                cx.results,
                w,
                format!(
                    "no DHCP lease from the LAN within {} ms: {e} (a DHCP server on the LAN?)",
                    w.link_wait_ms
                ),
            );
            return None;
        }
    };
    let prefix = u32::from(lease.netmask).count_ones() as u8;
    let prefix = if prefix == 0 { 24 } else { prefix };
    if let Err(e) = sys::ifconfig_up(ifname, lease.address.octets(), prefix) {
        fail(
            cx.results,
            w,
            format!("{ifname}: cannot set the leased {}: {e}", lease.address),
        );
        return None;
    }
    cx.record.board_address = lease.address.octets();
    cx.record.prefix_len = prefix;
    cx.record.lease_ns = Some(lease.acked_ns.saturating_sub(up_ns));
    cx.record.dhcp_server = Some(lease.server.octets());
    say(&format!(
        "wired {}: leased {}/{prefix} from {} for {} s",
        w.name, lease.address, lease.server, lease.lease_secs
    ));
    match lan_peer(plan, peer, wait) {
        Ok(found) => {
            cx.record.peer_address = Some(found.address.octets());
            cx.record.peer_found_by = Some(found.by.into());
            if let Some(msg) = found.warning {
                cx.results
                    .event(format!("network.wired.{}", w.name), Severity::Warning, msg);
            }
            Some(found.address)
        }
        Err(e) => {
            fail(cx.results, w, e);
            None
        }
    }
}

/// The peer on a LAN, and how it was found.
pub(crate) struct LanPeer {
    pub address: Ipv4Addr,
    /// `plan` or `announce`.
    pub by: &'static str,
    /// The announced port differs from the plan's (the plan's is used).
    pub warning: Option<String>,
}

/// The peer on a LAN the board just took a lease on: the plan's address, else the first
/// `benchboot peer --announce` heard on [`PEER_ANNOUNCE_PORT`] within the plan's peer
/// wait (`wait` without tests). Errors: no announcement, or an IPv6 one.
pub(crate) fn lan_peer(
    plan: &Plan,
    given: Option<[u8; 4]>,
    wait: Duration,
) -> Result<LanPeer, String> {
    if let Some(p) = given {
        return Ok(LanPeer {
            address: p.into(),
            by: "plan",
            warning: None,
        });
    }
    let peer_wait = plan
        .network
        .tests
        .as_ref()
        .map_or(wait, |t| Duration::from_millis(t.peer_wait_ms));
    say(&format!(
        "listening for `benchboot peer --announce` on UDP {PEER_ANNOUNCE_PORT}"
    ));
    let at = benchboot_netbench::announce::listen(Ipv4Addr::UNSPECIFIED, peer_wait).map_err(|e| {
        format!(
            "no peer announced itself within {} ms: {e} (run `benchboot peer --announce` on the LAN, or give `peer` in the plan)",
            peer_wait.as_millis()
        )
    })?;
    let std::net::IpAddr::V4(address) = at.ip() else {
        return Err(format!("the announced peer {at} is not IPv4"));
    };
    let warning = plan.network.tests.as_ref().and_then(|t| {
        (at.port() != t.peer_port).then(|| {
            format!(
                "the peer announced port {}, the plan says {}: using the plan's",
                at.port(),
                t.peer_port
            )
        })
    });
    Ok(LanPeer {
        address,
        by: "announce",
        warning,
    })
}

/// The network tests over the link, with the interface counters read around each test.
fn measure(
    ifname: &str,
    record: &mut WiredLink,
    peer: Ipv4Addr,
    tests: &NetTests,
    results: &mut RunResults,
) {
    crate::energy::idle_on_link(ifname, results);
    let spans = tests_with_counters(
        &record.name,
        ifname,
        record.board_address,
        peer,
        tests,
        results,
    );
    record.counters = spans;
    let net = Path::new(NET_ROOT);
    // What the link was after the tests: the speed a flapping link renegotiated to.
    let after = link::facts(net, ifname);
    if after.speed_mbit != record.facts.speed_mbit {
        let msg = format!(
            "{ifname}: speed changed during the tests: {:?} -> {:?} Mb/s",
            record.facts.speed_mbit, after.speed_mbit
        );
        results.event(
            format!("network.wired.{}", record.name),
            Severity::Warning,
            msg,
        );
    }
}

/// Runs the network tests over link `label` (interface `ifname`, board address `board`)
/// against `peer`, reading the interface counters right before and after each test.
pub(crate) fn tests_with_counters(
    label: &str,
    ifname: &str,
    board: [u8; 4],
    peer: Ipv4Addr,
    tests: &NetTests,
    results: &mut RunResults,
) -> Vec<CounterSpan> {
    let net = Path::new(NET_ROOT);
    let mut before = None;
    let mut spans: Vec<CounterSpan> = Vec::new();
    let mut watch = |stage: Stage, test: &NetTest| match stage {
        Stage::Before => before = link::counters(net, ifname).ok(),
        Stage::After => {
            if let (Some(b), Ok(a)) = (before.take(), link::counters(net, ifname)) {
                spans.push(CounterSpan {
                    test: *test,
                    before: b,
                    after: a,
                });
            }
        }
    };
    run_tests(label, board, peer, tests, results, &mut watch);
    spans
}

/// Forks QEMU's stand-in LAN: a child in its own network namespace that takes
/// `host_if` and runs [`stand_in_lan_body`] there.
fn spawn_stand_in_lan(host_if: &str, plan: &Plan) -> Result<i32, String> {
    let port = plan
        .network
        .tests
        .as_ref()
        .map_or(PEER_ANNOUNCE_PORT, |t| t.peer_port);
    spawn_in_netns(host_if, "the stand-in LAN", || {
        stand_in_lan_body(host_if, port, WIRED_STAND_IN)
    })
}

/// A QEMU stand-in LAN, in a namespace child that has `ifname`: sets `lan.router`/24 on
/// it, leases `lan.lease` over DHCP, announces the peer (control port `port`) to the
/// LAN's broadcast address once a second and serves it. Returns the child's exit code
/// ([`crate::network::host_side_failure`]'s).
pub(crate) fn stand_in_lan_body(ifname: &str, port: u16, lan: StandInLan) -> i32 {
    if sys::ifconfig_up(ifname, lan.router, STAND_IN_PREFIX).is_err() {
        return HOST_NO_ADDRESS;
    }
    let server = benchboot_dhcp::Server::new(
        lan.router.into(),
        lan.lease.into(),
        Ipv4Addr::new(255, 255, 255, 0),
        3600,
    );
    let dhcp_if = ifname.to_owned();
    std::thread::spawn(move || {
        benchboot_dhcp::serve(&dhcp_if, server, Arc::new(AtomicBool::new(false)), |_| {})
    });
    let [a, b, c, _] = lan.router;
    let broadcast = SocketAddr::from(([a, b, c, 255], PEER_ANNOUNCE_PORT));
    std::thread::spawn(move || {
        // The LAN's own broadcast address: the namespace has no default route for
        // 255.255.255.255.
        let stop = AtomicBool::new(false);
        benchboot_netbench::announce::broadcast(
            port,
            broadcast,
            benchboot_netbench::announce::EVERY,
            &stop,
            &|_| {},
        )
    });
    match std::net::TcpListener::bind((Ipv4Addr::from(lan.router), port)) {
        Ok(l) => {
            let _ = benchboot_netbench::peer::serve(l, Path::new(PROC_STAT));
            0
        }
        Err(_) => HOST_NO_LISTEN,
    }
}
