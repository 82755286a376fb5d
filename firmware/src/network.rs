//! The network step of PID 1: USB gadget links (configfs), DHCP for the host, the
//! network tests against a peer, and the static results interface.
//!
//! Two gadget modes (plan `network.gadget.in_turn`):
//! - composite (hardware): every function at once; a DHCP server per board-side
//!   interface runs for the rest of the boot so the host keeps its lease; the tests run
//!   over the first link a host takes a lease on, against `benchboot peer` on the host.
//! - in turn (QEMU + dummy_hcd): one function at a time is bound, leased, tested and torn
//!   down. With `host_in_namespace` the USB host side is this same kernel: a forked
//!   child takes a new network namespace, PID 1 moves the host-side interface into it,
//!   and the child runs the DHCP client and the peer, so traffic really crosses the
//!   emulated USB instead of the loopback.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use benchboot_dhcp::{Lease, Server};
use benchboot_plan::net_steps::{gadget_steps, GadgetStep};
use benchboot_plan::{GadgetFunction, GadgetPlan, NetTests, Plan, BOARD_LINK_LOCAL};
use benchboot_results::counters::{NetDirection, NetTest};
use benchboot_results::network::LinkRecord;
use benchboot_results::{HealthScope, RunResults, Severity};

use benchboot_netbench::driver::Stage;

use benchboot_console::figures::network_step;

use crate::console::{self, say};
use crate::gadget::{self, Op};
use crate::wait::{wait_for, wait_until};
use crate::{health, link, sys, worker};

/// The kernel's CPU counters, sampled around every network test.
pub(crate) const PROC_STAT: &str = "/proc/stat";
/// The /30 of every gadget link.
const LINK_PREFIX: u8 = 30;
/// Netmask of [`LINK_PREFIX`].
const LINK_NETMASK: Ipv4Addr = Ipv4Addr::new(255, 255, 255, 252);

/// Runs the gadget part of the plan (if any). Every failure becomes an event.
pub fn run_gadget(plan: &Plan, results: &mut RunResults) {
    let Some(g) = &plan.network.gadget else {
        return;
    };
    // configfs is a module on Debian's kernels (loaded with libcomposite): mount it now.
    if !Path::new(gadget::GADGETS_DIR).exists() {
        if let Err(e) = sys::mount(
            "configfs",
            gadget::CONFIGFS_DIR,
            "configfs",
            rustix::mount::MountFlags::empty(),
        ) {
            return fail(
                results,
                "gadget.configfs",
                format!("mounting configfs: {e}"),
            );
        }
    }
    let udc_dir = Path::new(gadget::UDC_DIR);
    let wait = Duration::from_millis(g.link_wait_ms);
    if !wait_until(wait, || {
        std::fs::read_dir(udc_dir).is_ok_and(|mut d| d.next().is_some())
    }) {
        fail(
            results,
            "gadget.udc",
            format!(
                "no UDC appeared in {} (is the port in peripheral mode, the UDC driver loaded?)",
                udc_dir.display()
            ),
        );
        return;
    }
    let udc = match gadget::find_udc(g.udc.as_deref(), udc_dir) {
        Ok(u) => u,
        Err(e) => return fail(results, "gadget.udc", e.to_string()),
    };
    let serial = gadget::board_serial();
    for step in gadget_steps(g) {
        match step {
            GadgetStep::InTurn {
                index,
                function: f,
                attempts,
            } => {
                for attempt in 1..=attempts {
                    let last = attempt == attempts;
                    let got_lease = one_function(plan, g, &udc, &serial, (index, f), last, results);
                    if got_lease {
                        break;
                    }
                    if attempt < attempts {
                        say(&format!(
                            "gadget {}: no lease, retrying once",
                            f.configfs_type()
                        ));
                    }
                }
            }
            GadgetStep::Composite { .. } => composite(plan, g, &udc, &serial, results),
        }
    }
}

/// Says `msg` on the console and records it as `step`'s error event.
pub(crate) fn fail(results: &mut RunResults, step: &str, msg: String) {
    say(&format!("{step}: {msg}"));
    results.event(step, Severity::Error, msg);
}

/// The interface whose MAC is `mac` (`/sys/class/net/*/address`): the USB host side of
/// a gadget function carries the function's `host_addr` (u_ether: ECM/NCM send it as
/// iMACAddress, RNDIS answers OID_802_3_PERMANENT_ADDRESS with it).
fn interface_with_mac(mac: &[u8; 6]) -> Option<String> {
    let want = gadget::mac_text(mac);
    std::fs::read_dir("/sys/class/net")
        .ok()?
        .filter_map(|e| e.ok())
        .find(|e| std::fs::read_to_string(e.path().join("address")).is_ok_and(|a| a.trim() == want))
        .map(|e| e.file_name().to_string_lossy().into_owned())
}

/// A bound gadget: its configfs operations (for the teardown) and the links.
struct Bound {
    ops: Vec<Op>,
    links: Vec<(GadgetFunction, String, LinkRecord)>,
    /// CLOCK_BOOTTIME when the UDC was bound, ns (the clock leases carry).
    bound_ns: u64,
}

/// Lays out, applies and binds the gadget with `functions`, then addresses every
/// board-side interface. `first_index` is the plan index of `functions[0]` (in-turn
/// mode) so each function keeps its own subnet.
fn bring_up(
    g: &GadgetPlan,
    udc: &str,
    serial: &str,
    functions: &[(usize, GadgetFunction)],
) -> Result<Bound, String> {
    let root = gadget::gadget_dir();
    let only: Vec<_> = functions.iter().map(|(_, f)| *f).collect();
    let (ops, setups) = gadget::layout(g, &only, serial);
    if root.exists() {
        let _ = gadget::tear_down(&root, &ops);
    }
    gadget::apply(&root, &ops).map_err(|e| format!("configfs: {e}"))?;
    gadget::bind(&root, udc).map_err(|e| format!("binding to UDC {udc}: {e}"))?;
    let bound_ns = sys::boottime_ns();
    let mut links = Vec::new();
    for ((index, f), setup) in functions.iter().zip(&setups) {
        let ifname =
            gadget::ifname(&root, *f).map_err(|e| format!("{} ifname: {e}", f.configfs_type()))?;
        let (board, _host) = g.link_addresses(*index);
        if !wait_for(
            &Path::new("/sys/class/net").join(&ifname),
            Duration::from_secs(10),
        ) {
            return Err(format!("{ifname} never appeared"));
        }
        sys::ifconfig_up(&ifname, board, LINK_PREFIX).map_err(|e| format!("{ifname}: {e}"))?;
        // The well-known link-local fallback; the link still works without it.
        if let Err(e) = sys::add_ipv6(&ifname, BOARD_LINK_LOCAL, 64) {
            say(&format!("{ifname}: no fe80::1 ({e}); IPv4 only"));
        }
        links.push((
            *f,
            ifname.clone(),
            LinkRecord {
                function: f.configfs_type().into(),
                udc: udc.into(),
                board_interface: ifname,
                board_mac: gadget::mac_text(&setup.dev_mac),
                host_mac: gadget::mac_text(&setup.host_mac),
                board_address: board,
                host_address: None,
                lease_ns: None,
            },
        ));
    }
    Ok(Bound {
        ops,
        links,
        bound_ns,
    })
}

/// Starts a DHCP server thread on `ifname` handing out `host`; leases arrive on `tx`.
pub(crate) fn start_dhcp(
    ifname: &str,
    board: [u8; 4],
    host: [u8; 4],
    lease_secs: u32,
    tag: usize,
    tx: mpsc::Sender<(usize, Lease)>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<std::io::Result<Server>> {
    let server = Server::new(board.into(), host.into(), LINK_NETMASK, lease_secs);
    let ifname = ifname.to_owned();
    std::thread::spawn(move || {
        benchboot_dhcp::serve(&ifname, server, stop, move |lease| {
            let _ = tx.send((tag, lease));
        })
    })
}

/// Hardware mode: one composite gadget for the rest of the boot.
fn composite(plan: &Plan, g: &GadgetPlan, udc: &str, serial: &str, results: &mut RunResults) {
    let functions: Vec<_> = g.functions.iter().copied().enumerate().collect();
    let bound = match bring_up(g, udc, serial, &functions) {
        Ok(b) => b,
        Err(e) => return fail(results, "gadget.up", e),
    };
    let (tx, rx) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    for (i, (_, ifname, link)) in bound.links.iter().enumerate() {
        let (_, host) = g.link_addresses(functions[i].0);
        // Runs for the rest of the boot: the host renews its lease against it.
        start_dhcp(
            ifname,
            link.board_address,
            host,
            g.lease_secs,
            i,
            tx.clone(),
            stop.clone(),
        );
    }
    let mut links: Vec<LinkRecord> = bound.links.iter().map(|l| l.2.clone()).collect();
    say(&format!(
        "gadget up on {udc}: {}; waiting for a host to take a lease",
        links
            .iter()
            .map(|l| format!("{} {}", l.function, l.board_interface))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let first = rx.recv_timeout(Duration::from_millis(g.link_wait_ms)).ok();
    if let Some((i, lease)) = &first {
        links[*i].host_address = Some(lease.address.octets());
        links[*i].lease_ns = Some(lease.acked_ns.saturating_sub(bound.bound_ns));
        say(&format!(
            "host {} took {} on {}",
            gadget::mac_text(&lease.mac),
            lease.address,
            links[*i].board_interface
        ));
    } else {
        fail(
            results,
            "gadget.lease",
            "no host took a DHCP lease (cable in the data port? host interface up?)".into(),
        );
    }
    results.network.links.extend(links.iter().cloned());
    if first.is_some() {
        crate::energy::results_link_up();
    }
    if let (Some((i, lease)), Some(tests)) = (first, &plan.network.tests) {
        let l = &links[i];
        crate::energy::idle_on_link(&l.board_interface, results);
        run_tests(
            &l.function,
            l.board_address,
            lease.address,
            tests,
            results,
            &mut |_, _| {},
        );
    }
}

/// Test mode: one function (with its plan index) bound, leased, tested, torn down.
/// Returns whether the host side took a lease; a missing lease is an error on the
/// `last_attempt`, a warning before it.
fn one_function(
    plan: &Plan,
    g: &GadgetPlan,
    udc: &str,
    serial: &str,
    (index, f): (usize, GadgetFunction),
    last_attempt: bool,
    results: &mut RunResults,
) -> bool {
    let name = f.configfs_type();
    let bound = match bring_up(g, udc, serial, &[(index, f)]) {
        Ok(b) => b,
        Err(e) => {
            fail(results, &format!("gadget.{name}"), e);
            let _ = gadget::tear_down(&gadget::gadget_dir(), &gadget::layout(g, &[f], serial).0);
            return false;
        }
    };
    let (_, ifname, mut link) = bound.links[0].clone();
    let (board, host) = g.link_addresses(index);
    let (tx, rx) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let mut dhcp = Some(start_dhcp(
        &ifname,
        board,
        host,
        g.lease_secs,
        0,
        tx,
        stop.clone(),
    ));
    let wait = Duration::from_millis(g.link_wait_ms);
    // The host side's child and the interface it was given.
    let mut host_side: Option<(i32, String)> = None;
    if g.host_in_namespace {
        let host_mac = gadget::mac_for(serial, f, "host");
        let mut host_if = None;
        wait_until(wait, || {
            host_if = interface_with_mac(&host_mac);
            host_if.is_some()
        });
        match host_if {
            None => fail(
                results,
                &format!("gadget.{name}"),
                "the host-side interface never appeared (dummy_hcd, host driver loaded?)".into(),
            ),
            Some(host_if) => match spawn_host_side(&host_if, host_mac, plan, wait) {
                Ok(pid) => host_side = Some((pid, host_if)),
                Err(e) => fail(results, &format!("gadget.{name}"), e),
            },
        }
    }
    let mut lease = rx.recv_timeout(KICK_AFTER.min(wait)).ok();
    if lease.is_none() && host_side.is_some() {
        // Seen under dummy_hcd: the host side's carrier never comes up and its packets
        // never leave it (tx 0). Taking the board's interface down and up makes the
        // function send its link state to the host again (f_ecm/f_ncm: a
        // NETWORK_CONNECTION notification; f_rndis: a media-state indication).
        let how = match bounce(&ifname) {
            Ok(()) => format!(
                "no lease after {} s: {ifname} taken down and up to resend the link state",
                KICK_AFTER.as_secs()
            ),
            Err(e) => format!(
                "no lease after {} s; bouncing {ifname}: {e}",
                KICK_AFTER.as_secs()
            ),
        };
        say(&format!("gadget {name}: {how}"));
        results.event(format!("gadget.{name}.kick"), Severity::Info, how);
        lease = rx.recv_timeout(wait.saturating_sub(KICK_AFTER)).ok();
    }
    let lease = lease.map(|(_, l)| l);
    let got = lease.is_some();
    match &lease {
        Some(l) => {
            link.host_address = Some(l.address.octets());
            link.lease_ns = Some(l.acked_ns.saturating_sub(bound.bound_ns));
            say(&format!(
                "gadget {name}: host took {} on {ifname}",
                l.address
            ));
        }
        None => {
            // The host side's counters first, while its namespace lives (its client
            // tries HOST_GRACE longer than PID 1 waits).
            let host_state = host_side.as_ref().map(|(pid, host_if)| {
                link::namespace_state_text(&proc_net_dev(*pid), host_if, "host side")
            });
            let mut why = "no DHCP lease taken".to_owned();
            if let Some(code) = host_side
                .as_ref()
                .and_then(|(pid, _)| worker::exit_code(*pid))
            {
                host_side = None;
                why += &format!("; the host side ended: {}", host_side_failure(code));
            }
            // What each end saw: which way the packets stopped.
            stop.store(true, Ordering::Relaxed);
            why += &format!(
                "; the board's DHCP server on {ifname} {}; {}",
                server_report(&mut dhcp),
                link::state_text(Path::new(link::SYS_CLASS_NET), &ifname, "board")
            );
            if let Some(state) = host_state {
                why += &format!("; {state}");
            }
            if last_attempt {
                fail(results, &format!("gadget.{name}"), why)
            } else {
                say(&format!("gadget.{name}: {why}"));
                results.event(format!("gadget.{name}"), Severity::Warning, why);
            }
        }
    }
    results.network.links.push(link.clone());
    if let (Some(l), Some(tests)) = (lease, &plan.network.tests) {
        crate::energy::idle_on_link(&link.board_interface, results);
        run_tests(
            &link.function,
            link.board_address,
            l.address,
            tests,
            results,
            &mut |_, _| {},
        );
    }
    stop.store(true, Ordering::Relaxed);
    // Bounded: a DHCP thread that panicked is parked by PID 1's hook and never ends.
    if !wait_until(Duration::from_secs(5), || {
        dhcp.as_ref().is_none_or(|d| d.is_finished())
    }) {
        results.event(
            format!("gadget.{name}.dhcp"),
            Severity::Warning,
            "the DHCP server thread did not stop within 5 s; left running",
        );
    }
    if let Err(e) = gadget::tear_down(&gadget::gadget_dir(), &bound.ops) {
        results.event(
            format!("gadget.{name}.teardown"),
            Severity::Warning,
            e.to_string(),
        );
    }
    // The host side's interface goes with the gadget (USB disconnect). Wait for it to
    // leave the child's namespace before the child ends: a namespace that ends hands its
    // interfaces back to PID 1's, where the next attempt (same MAC) would find this
    // one, about to vanish, instead of its own.
    let host_mac = gadget::mac_for(serial, f, "host");
    let mut lingering = None;
    if let Some((pid, host_if)) = host_side {
        if !wait_until(HOST_IF_GONE, || !in_namespace_of(pid, &host_if)) {
            lingering = Some(format!("{host_if} (in the host side's namespace)"));
        }
        worker::kill_and_reap(pid);
    }
    if !wait_until(HOST_IF_GONE, || interface_with_mac(&host_mac).is_none()) {
        lingering = interface_with_mac(&host_mac).or(lingering);
    }
    if let Some(which) = lingering {
        results.event(
            format!("gadget.{name}.teardown"),
            Severity::Warning,
            format!(
                "the host side's interface {which} was still there {} s after the gadget \
                 went; the next function may find it",
                HOST_IF_GONE.as_secs()
            ),
        );
    }
    got
}

/// How long a test-mode link waits for its lease before the board's interface is
/// bounced ([`bounce`]); leases took 0.1-1.6 s in QEMU when nothing was wrong.
const KICK_AFTER: Duration = Duration::from_secs(5);

/// Takes the board's gadget interface down and up again, and puts back the IPv6
/// link-local fallback (Linux drops IPv6 addresses on down; IPv4 ones stay).
fn bounce(ifname: &str) -> std::io::Result<()> {
    sys::link_down(ifname)?;
    sys::link_up(ifname)?;
    let _ = sys::add_ipv6(ifname, BOARD_LINK_LOCAL, 64);
    Ok(())
}

/// How much longer the host side's DHCP client tries than PID 1 waits for its lease, so
/// that a link without a lease is inspected while the child and its namespace live.
const HOST_GRACE: Duration = Duration::from_secs(10);

/// How long the host side's interface may take to go once the gadget is torn down (a
/// USB disconnect, handled by the hub thread), s.
const HOST_IF_GONE: Duration = Duration::from_secs(10);

/// Stops (its flag is set) and joins the DHCP server thread of `dhcp` within 5 s, and
/// says what it heard or how it ended.
fn server_report(dhcp: &mut Option<std::thread::JoinHandle<std::io::Result<Server>>>) -> String {
    if !wait_until(Duration::from_secs(5), || {
        dhcp.as_ref().is_none_or(|d| d.is_finished())
    }) {
        return "did not stop within 5 s".into();
    }
    match dhcp.take().map(|d| d.join()) {
        None => "was not running".into(),
        Some(Ok(Ok(server))) => server.traffic().to_string(),
        Some(Ok(Err(e))) => format!("failed: {e}"),
        Some(Err(_)) => "panicked".into(),
    }
}

/// `/proc/<pid>/net/dev`: the interfaces of process `pid`'s network namespace; empty
/// when it cannot be read (the process ended).
fn proc_net_dev(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/net/dev")).unwrap_or_default()
}

/// Whether the network namespace of process `pid` has `ifname`.
fn in_namespace_of(pid: i32, ifname: &str) -> bool {
    link::parse_proc_net_dev(&proc_net_dev(pid))
        .iter()
        .any(|(n, _)| n == ifname)
}

// Exit codes of the host-side child.
const HOST_NO_NETNS: i32 = 3;
const HOST_NO_LINK: i32 = 4;
const HOST_NO_LEASE: i32 = 5;
pub(crate) const HOST_NO_ADDRESS: i32 = 6;
pub(crate) const HOST_NO_LISTEN: i32 = 7;

pub(crate) fn host_side_failure(code: i32) -> String {
    match code {
        HOST_NO_NETNS => "unshare(CLONE_NEWNET) failed".into(),
        HOST_NO_LINK => "the interface never arrived in its namespace".into(),
        HOST_NO_LEASE => "its DHCP client got no lease".into(),
        HOST_NO_ADDRESS => "it could not set the leased address".into(),
        HOST_NO_LISTEN => "it could not listen for the peer".into(),
        c => format!("exit status {c}"),
    }
}

/// Forks the USB host side's stand-in: a child in its own network namespace that takes
/// `host_if`, asks for a DHCP lease as `host_mac`, and serves the peer. Returns its pid.
pub(crate) fn spawn_host_side(
    host_if: &str,
    host_mac: [u8; 6],
    plan: &Plan,
    wait: Duration,
) -> Result<i32, String> {
    let peer_port = plan.network.tests.as_ref().map(|t| t.peer_port);
    let ifname = host_if;
    spawn_in_netns(host_if, "the host-side child", || {
        let Ok(lease) = benchboot_dhcp::client_lease(ifname, host_mac, wait + HOST_GRACE) else {
            return HOST_NO_LEASE;
        };
        if sys::ifconfig_up(ifname, lease.address.octets(), LINK_PREFIX).is_err() {
            return HOST_NO_ADDRESS;
        }
        let Some(port) = peer_port else {
            // No tests: keep the lease holder alive until PID 1 ends it.
            loop {
                std::thread::sleep(Duration::from_secs(60));
            }
        };
        match std::net::TcpListener::bind((lease.address, port)) {
            Ok(l) => {
                let _ = benchboot_netbench::peer::serve(l, Path::new(PROC_STAT));
                0
            }
            Err(_) => HOST_NO_LISTEN,
        }
    })
}

/// Forks a child that takes a new network namespace, waits for PID 1 to move `host_if`
/// into it (then brings it and `lo` up) and runs `body` there; its exit codes are
/// [`host_side_failure`]'s. `who` names the child in errors. Returns its pid.
pub(crate) fn spawn_in_netns(
    host_if: &str,
    who: &str,
    body: impl FnOnce() -> i32,
) -> Result<i32, String> {
    spawn_in_netns_moving(
        host_if,
        who,
        |pid| {
            sys::move_link_to_netns(host_if, pid)
                .map_err(|e| format!("moving {host_if} into {who}'s namespace: {e}"))
        },
        body,
    )
}

/// [`spawn_in_netns`] with what moves `host_if` into the child's namespace given:
/// `move_to(pid)` (the WiFi stand-ins move a whole radio, `NL80211_CMD_SET_WIPHY_NETNS`,
/// and its interface goes with it).
pub(crate) fn spawn_in_netns_moving(
    host_if: &str,
    who: &str,
    move_to: impl FnOnce(u32) -> Result<(), String>,
    body: impl FnOnce() -> i32,
) -> Result<i32, String> {
    let (ready_rx, ready_tx) = rustix::pipe::pipe().map_err(|e| format!("pipe: {e}"))?;
    // The child borrows the parent's descriptors: after fork(2) both have their own copy.
    let pid = sys::spawn_child(|| {
        if sys::unshare_netns().is_err() {
            return HOST_NO_NETNS;
        }
        let _ = rustix::io::write(&ready_tx, b"1");
        // Wait for PID 1 to move the interface into this namespace.
        if !wait_until(Duration::from_secs(10), || sys::link_up(host_if).is_ok()) {
            return HOST_NO_LINK;
        }
        let _ = sys::link_up("lo");
        body()
    })
    .map_err(|e| format!("fork: {e}"))?;
    drop(ready_tx);
    let mut byte = [0u8; 1];
    match rustix::io::read(&ready_rx, &mut byte) {
        Ok(1) => {}
        _ => {
            worker::kill_and_reap(pid);
            return Err(format!("{who} could not take a network namespace"));
        }
    }
    if let Err(e) = move_to(pid as u32) {
        worker::kill_and_reap(pid);
        return Err(e);
    }
    Ok(pid)
}

/// Runs the network tests over the link named `label` (a gadget function or a wired
/// link) whose board address is `board`, against the peer at `host`:`peer_port`;
/// `watch` is called right before and after each test (the wired step reads the
/// interface counters there).
pub(crate) fn run_tests(
    label: &str,
    board: [u8; 4],
    host: Ipv4Addr,
    tests: &NetTests,
    results: &mut RunResults,
    watch: &mut dyn FnMut(Stage, &NetTest),
) {
    let peer = SocketAddr::new(IpAddr::V4(host), tests.peer_port);
    say(&format!("network tests over {label} against peer {peer}"));
    let board_ip = IpAddr::V4(Ipv4Addr::from(board));
    // Board health right before and after every test.
    let mut pending = None;
    let mut snapshots = Vec::new();
    let (got, errors) = benchboot_netbench::driver::run_observed(
        peer,
        board_ip,
        label,
        tests,
        &[NetDirection::BoardToHost, NetDirection::HostToBoard],
        Path::new(PROC_STAT),
        &mut |stage, test| {
            let step = network_step(label, test);
            if stage == Stage::Before {
                pending = Some(health::take_for(&step));
            }
            watch(stage, test);
            if stage == Stage::After {
                if let Some(before) = pending.take() {
                    snapshots.push((*test, before, health::take_after_for(&step)));
                }
            }
        },
    );
    for (test, before, after) in snapshots {
        let scope = HealthScope::Network {
            link: label.to_owned(),
            test,
        };
        health::record(results, &network_step(label, &test), scope, before, after);
    }
    for e in errors {
        fail(results, &format!("network.{label}"), e);
    }
    console::figures(&benchboot_console::figures::network(&got));
    let n = &mut results.network;
    n.throughput.extend(got.throughput);
    n.latency.extend(got.latency);
    n.http.extend(got.http);
    n.udp.extend(got.udp);
}
