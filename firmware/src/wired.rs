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

use std::net::Ipv4Addr;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use benchboot_plan::network::{direct_addresses, mac_text, parse_mac};
use benchboot_plan::{NetTests, Plan, Topology, WiredPlan, PEER_ANNOUNCE_PORT};
use benchboot_results::network::{LinkFacts, WiredLink};
use benchboot_results::RunResults;

use crate::console::say;
use crate::netkit::{
    host_side_failure, lan_peer, spawn_host_side, spawn_in_netns, stand_in_lan_body, start_dhcp,
    stop_within_5s, tests_with_counters, warn, Kernel, LinkOps, Roots, StandInLan, LINK_PREFIX,
};
use crate::wait::wait_until;
use crate::{link, sys, worker};

/// The wired stand-in LAN: 10.56.0.0/24.
pub const WIRED_STAND_IN: StandInLan = StandInLan {
    router: [10, 56, 0, 1],
    lease: [10, 56, 0, 2],
};

/// Runs every wired link of the plan, in order, on the board's kernel.
pub fn run_wired(plan: &Plan, results: &mut RunResults) {
    let roots = Roots::board();
    let mut in_use: Vec<String> = results
        .network
        .links
        .iter()
        .map(|l| l.board_interface.clone())
        .collect();
    for w in &plan.network.wired {
        if w.unavailable.is_none() {
            // The drivers of what is plugged in, before the interface is looked for.
            crate::modalias::scan(&format!("network.wired.{}", w.name), results);
        }
        let edge = Edge {
            ops: &Kernel,
            roots: &roots,
        };
        if let Some(ifname) = one_link(plan, w, &in_use, &edge, results) {
            in_use.push(ifname);
        }
    }
}

/// The kernel edges of the wired step: the link calls and the sysfs tree.
pub(crate) struct Edge<'a> {
    /// Link up, addresses.
    pub ops: &'a dyn LinkOps,
    /// Where `/sys/class/net` is (`roots.net`).
    pub roots: &'a Roots,
}

fn step(w: &WiredPlan) -> String {
    format!("network.wired.{}", w.name)
}

fn fail(results: &mut RunResults, w: &WiredPlan, msg: String) {
    crate::netkit::fail(results, &step(w), msg);
}

/// Finds, brings up, addresses and measures one link; returns the interface it used.
/// Failures are error events `network.wired.<name>`: the link unavailable, no
/// interface, the link refused up (no record then), no carrier (recorded with its
/// facts, not addressed).
pub(crate) fn one_link(
    plan: &Plan,
    w: &WiredPlan,
    in_use: &[String],
    edge: &Edge,
    results: &mut RunResults,
) -> Option<String> {
    if let Some(why) = &w.unavailable {
        fail(results, w, why.clone());
        return None;
    }
    let wait = Duration::from_millis(w.link_wait_ms);
    let net = edge.roots.net.as_path();
    let ifname = match find_link(w, in_use, net) {
        Ok(i) => i,
        Err(e) => {
            fail(results, w, e);
            return None;
        }
    };
    if let Err(e) = edge.ops.link_up(&ifname) {
        fail(results, w, format!("{ifname}: cannot bring it up: {e}"));
        return Some(ifname);
    }
    let up_ns = sys::boottime_ns();
    let carrier = wait_until(wait, || link::facts(net, &ifname).carrier);
    let facts = link::full_facts(net, &ifname, w.rated_mbit);
    let mut record = link_record(w, &ifname, net, facts);
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
        warn(results, &step(w), why);
    }
    let mut stand_in = None;
    let mut setup = Setup {
        plan,
        w,
        ifname: &ifname,
        up_ns,
        edge,
        record: &mut record,
        stand_in: &mut stand_in,
        results: &mut *results,
    };
    let peer = match &w.topology {
        Topology::Direct { subnet, lease_secs } => direct(&mut setup, *subnet, *lease_secs),
        Topology::Lan { peer } => lan(&mut setup, *peer),
    };
    if let (Some(peer), Some(tests)) = (peer, &plan.network.tests) {
        measure(&ifname, net, &mut record, peer, tests, results);
    }
    if let Some(pid) = stand_in {
        worker::kill_and_reap(pid);
    }
    results.network.wired.push(record);
    Some(ifname)
}

/// The interface link `w` means under `net` (by MAC, else driver; [`link::find_interface`]),
/// not one `in_use` nor the QEMU stand-in's own end, waited for up to the link's
/// `link_wait_ms`. The error says what was looked for.
pub(crate) fn find_link(w: &WiredPlan, in_use: &[String], net: &Path) -> Result<String, String> {
    let wait = Duration::from_millis(w.link_wait_ms);
    let mac = w.mac.as_deref().and_then(parse_mac);
    let mut exclude: Vec<String> = in_use.to_vec();
    // The namespace stand-in's interface is the cable's other end, never this link.
    exclude.extend(
        w.host_in_namespace
            .as_deref()
            .and_then(parse_mac)
            .and_then(|m| link::find_interface(net, Some(&m), &[], &[])),
    );
    let mut ifname = None;
    wait_until(wait, || {
        crate::modalias::poll();
        ifname = link::find_interface(net, mac.as_ref(), &w.drivers, &exclude);
        ifname.is_some()
    });
    ifname.ok_or_else(|| {
        let by = match &w.mac {
            Some(m) => format!("with MAC {m}"),
            None if w.drivers.is_empty() => "with a device".to_owned(),
            None => format!("driven by {}", w.drivers.join(" or ")),
        };
        format!(
            "no interface {by} appeared within {} ms (adapter plugged in? driver in the image?)",
            w.link_wait_ms
        )
    })
}

/// The record of link `w` on `ifname` before it is addressed: its facts, its MAC from
/// `<net>/<if>/address` (empty when unreadable), says what it negotiated.
fn link_record(w: &WiredPlan, ifname: &str, net: &Path, facts: LinkFacts) -> WiredLink {
    let record = WiredLink {
        name: w.name.clone(),
        kind: w.kind.name().into(),
        interface: ifname.to_owned(),
        mac: std::fs::read_to_string(net.join(ifname).join("address"))
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
    record
}

/// One wired link as [`direct`] and [`lan`] set it up: the plan and the link's entry,
/// its interface and when it came up (boot time, ns), the kernel edges, its record
/// (addresses, peer, lease), the QEMU stand-in child's pid once forked (killed after
/// the tests) and the results the failures go to.
struct Setup<'a> {
    plan: &'a Plan,
    w: &'a WiredPlan,
    ifname: &'a str,
    up_ns: u64,
    edge: &'a Edge<'a>,
    record: &'a mut WiredLink,
    stand_in: &'a mut Option<i32>,
    results: &'a mut RunResults,
}

/// Direct cable: the board takes `.1` of `subnet`'s /30 and its DHCP server leases the
/// host `.2`; returns the peer's address (the leased one, else `.2` with a warning when
/// no stand-in was asked for). An address the kernel refuses is an error event and no
/// peer.
fn direct(cx: &mut Setup, subnet: [u8; 4], lease_secs: u32) -> Option<Ipv4Addr> {
    let (plan, w, ifname) = (cx.plan, cx.w, cx.ifname);
    let (board, host) = direct_addresses(subnet);
    if let Err(e) = cx.edge.ops.set_ipv4(ifname, board, LINK_PREFIX) {
        fail(
            cx.results,
            w,
            format!("{ifname}: cannot set {}: {e}", Ipv4Addr::from(board)),
        );
        return None;
    }
    cx.record.board_address = board;
    cx.record.prefix_len = LINK_PREFIX;
    let (tx, rx) = mpsc::channel();
    // Runs for the rest of the boot on hardware, so the host keeps its lease.
    let stop = Arc::new(AtomicBool::new(false));
    let dhcp = start_dhcp(ifname, board, host, lease_secs, 0, tx, stop.clone());
    let wait = Duration::from_millis(
        w.link_wait_ms
            .max(plan.network.tests.as_ref().map_or(0, |t| t.peer_wait_ms)),
    );
    if let Some(host_mac) = w.host_in_namespace.as_deref().and_then(parse_mac) {
        match link::find_interface(&cx.edge.roots.net, Some(&host_mac), &[], &[]) {
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
        stop_within_5s(&stop, Some(&dhcp));
    }
    match lease {
        Some(l) => {
            cx.record.peer_address = Some(l.address.octets());
            cx.record.peer_found_by = Some("lease".into());
            cx.record.lease_ns = Some(l.acked_ns.saturating_sub(cx.up_ns));
            say(&format!(
                "wired {}: host {} took {}",
                w.name,
                mac_text(&l.mac),
                l.address
            ));
            Some(l.address)
        }
        None => no_direct_lease(cx, host, wait),
    }
}

/// A direct link whose host took no lease within `wait`: an error when the stand-in
/// host (QEMU) ended or took none; else the host's end may have a static address, so
/// the peer is tried at `host` (`.2`) with a warning.
fn no_direct_lease(cx: &mut Setup, host: [u8; 4], wait: Duration) -> Option<Ipv4Addr> {
    let w = cx.w;
    if let Some(code) = cx.stand_in.and_then(worker::exit_code) {
        *cx.stand_in = None;
        let why = format!(
            "no DHCP lease taken; the stand-in host ended: {}",
            host_side_failure(code)
        );
        fail(cx.results, w, why);
        return None;
    }
    if cx.stand_in.is_some() {
        fail(
            cx.results,
            w,
            format!(
                "the stand-in host took no lease within {} ms",
                wait.as_millis()
            ),
        );
        return None;
    }
    // A host whose end has a static address never asks: try it at `.2`; the driver says
    // so when no peer answers there either.
    let msg = format!(
        "no host took a DHCP lease within {} ms; trying the peer at {} (a static \
         address on the host's end?)",
        wait.as_millis(),
        Ipv4Addr::from(host)
    );
    warn(cx.results, &step(w), msg);
    cx.record.peer_address = Some(host);
    cx.record.peer_found_by = Some("static".into());
    Some(host.into())
}

/// LAN: the board takes a lease, then finds the peer; returns the peer's address.
fn lan(cx: &mut Setup, peer: Option<[u8; 4]>) -> Option<Ipv4Addr> {
    let (plan, w, ifname, up_ns) = (cx.plan, cx.w, cx.ifname, cx.up_ns);
    let wait = Duration::from_millis(w.link_wait_ms);
    if let Some(host_mac) = w.host_in_namespace.as_deref().and_then(parse_mac) {
        match link::find_interface(&cx.edge.roots.net, Some(&host_mac), &[], &[]) {
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
    let prefix = lease_prefix(lease.netmask);
    if let Err(e) = cx.edge.ops.set_ipv4(ifname, lease.address.octets(), prefix) {
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
                warn(cx.results, &step(w), msg);
            }
            Some(found.address)
        }
        Err(e) => {
            fail(cx.results, w, e);
            None
        }
    }
}

/// The prefix length of a leased `netmask` (its set bits); a lease without one (0) is
/// taken as a /24.
pub(crate) fn lease_prefix(netmask: Ipv4Addr) -> u8 {
    match u32::from(netmask).count_ones() as u8 {
        0 => 24,
        p => p,
    }
}

/// The network tests over the link, with the interface counters read around each test;
/// a speed that changed during them is a warning.
fn measure(
    ifname: &str,
    net: &Path,
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
    // What the link was after the tests: the speed a flapping link renegotiated to.
    let after = link::facts(net, ifname);
    if after.speed_mbit != record.facts.speed_mbit {
        let msg = format!(
            "{ifname}: speed changed during the tests: {:?} -> {:?} Mb/s",
            record.facts.speed_mbit, after.speed_mbit
        );
        results.event(
            format!("network.wired.{}", record.name),
            benchboot_results::Severity::Warning,
            msg,
        );
    }
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

#[cfg(test)]
mod tests;
