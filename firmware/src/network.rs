//! The gadget step of PID 1: USB gadget links (configfs), DHCP for the host and the
//! network tests against a peer over them.
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
//!
//! The step goes to the kernel through [`crate::netkit`]'s edges ([`LinkOps`], [`Roots`]):
//! its tests run it over a temp configfs/sysfs tree and a recording fake.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use benchboot_dhcp::{Lease, Server};
use benchboot_plan::net_steps::{gadget_steps, GadgetStep};
use benchboot_plan::{GadgetFunction, GadgetPlan, Plan, BOARD_LINK_LOCAL};
use benchboot_results::network::LinkRecord;
use benchboot_results::{RunResults, Severity};

use crate::console::say;
use crate::gadget::{self, Op};
use crate::netkit::{
    fail, host_side_failure, run_tests, spawn_host_side, start_dhcp, stop_within_5s, warn, Kernel,
    LinkOps, Roots, LINK_PREFIX,
};
use crate::wait::{wait_for, wait_until};
use crate::{link, sys, worker};

/// Runs the gadget part of the plan (if any) on the board's kernel. Every failure
/// becomes an event.
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
    let serial = gadget::board_serial();
    run_gadget_on(plan, g, &Kernel, &Roots::board(), &serial, results);
}

/// What the gadget step works with once a UDC is chosen: the plan and its gadget, the
/// kernel edges, the UDC's name and the board serial the MACs derive from.
pub(crate) struct GadgetRun<'a> {
    /// The whole plan (its network tests).
    pub plan: &'a Plan,
    /// The plan's gadget.
    pub g: &'a GadgetPlan,
    /// The link calls (addresses, bounce).
    pub ops: &'a dyn LinkOps,
    /// Where the gadget's configfs folder and `/sys/class/net` are.
    pub roots: &'a Roots,
    /// The UDC bound to (a name under `roots.udc`).
    pub udc: String,
    /// The board serial the MACs and the USB serial derive from ([`gadget::mac_for`]).
    pub serial: &'a str,
}

/// The gadget step over `ops` and `roots`: waits up to the plan's `link_wait_ms` for a
/// UDC under `roots.udc` (an error event `gadget.udc` when none appears or the plan's is
/// not there: nothing is written to configfs then), then runs the plan's gadget steps.
pub(crate) fn run_gadget_on(
    plan: &Plan,
    g: &GadgetPlan,
    ops: &dyn LinkOps,
    roots: &Roots,
    serial: &str,
    results: &mut RunResults,
) {
    let udc_dir = roots.udc.as_path();
    let wait = Duration::from_millis(g.link_wait_ms);
    if !wait_until(wait, || {
        std::fs::read_dir(udc_dir).is_ok_and(|mut d| d.next().is_some())
    }) {
        return fail(
            results,
            "gadget.udc",
            format!(
                "no UDC appeared in {} (is the port in peripheral mode, the UDC driver loaded?)",
                udc_dir.display()
            ),
        );
    }
    let udc = match gadget::find_udc(g.udc.as_deref(), udc_dir) {
        Ok(u) => u,
        Err(e) => return fail(results, "gadget.udc", e.to_string()),
    };
    let cx = GadgetRun {
        plan,
        g,
        ops,
        roots,
        udc,
        serial,
    };
    for step in gadget_steps(g) {
        match step {
            GadgetStep::InTurn {
                index,
                function: f,
                attempts,
            } => in_turn(&cx, (index, f), attempts, results),
            GadgetStep::Composite { .. } => composite(&cx, results),
        }
    }
}

/// One function in turn, tried up to `attempts` times until a host takes a lease.
fn in_turn(
    cx: &GadgetRun,
    (index, f): (usize, GadgetFunction),
    attempts: u32,
    results: &mut RunResults,
) {
    for attempt in 1..=attempts {
        let last = attempt == attempts;
        if one_function(cx, (index, f), last, results) {
            break;
        }
        if !last {
            say(&format!(
                "gadget {}: no lease, retrying once",
                f.configfs_type()
            ));
        }
    }
}

/// The interface under `net_root` whose MAC is `mac` (`<if>/address`): the USB host side
/// of a gadget function carries the function's `host_addr` (u_ether: ECM/NCM send it as
/// iMACAddress, RNDIS answers OID_802_3_PERMANENT_ADDRESS with it).
fn interface_with_mac(net_root: &Path, mac: &[u8; 6]) -> Option<String> {
    let want = gadget::mac_text(mac);
    std::fs::read_dir(net_root)
        .ok()?
        .filter_map(|e| e.ok())
        .find(|e| std::fs::read_to_string(e.path().join("address")).is_ok_and(|a| a.trim() == want))
        .map(|e| e.file_name().to_string_lossy().into_owned())
}

/// A bound gadget: its configfs operations (for the teardown) and the links.
pub(crate) struct Bound {
    /// What [`gadget::layout`] laid out, for [`gadget::tear_down`].
    pub ops: Vec<Op>,
    /// Per function: the function, its board-side interface and its record.
    pub links: Vec<(GadgetFunction, String, LinkRecord)>,
    /// CLOCK_BOOTTIME when the UDC was bound, ns (the clock leases carry).
    pub bound_ns: u64,
}

/// Lays out, applies and binds the gadget with `functions` (each with its plan index,
/// so each function keeps its own /30), then addresses every board-side interface:
/// `.1` of its /30 and the link-local fallback `fe80::1/64` (a failure of the latter is
/// said, not recorded). Errors name the configfs path, the UDC or the interface.
pub(crate) fn bring_up(
    cx: &GadgetRun,
    functions: &[(usize, GadgetFunction)],
) -> Result<Bound, String> {
    let root = cx.roots.gadget.as_path();
    let only: Vec<_> = functions.iter().map(|(_, f)| *f).collect();
    let (ops, setups) = gadget::layout(cx.g, &only, cx.serial);
    if root.exists() {
        let _ = gadget::tear_down(root, &ops);
    }
    gadget::apply(root, &ops).map_err(|e| format!("configfs: {e}"))?;
    let udc = cx.udc.as_str();
    gadget::bind(root, udc).map_err(|e| format!("binding to UDC {udc}: {e}"))?;
    let bound_ns = sys::boottime_ns();
    let mut links = Vec::new();
    for ((index, f), setup) in functions.iter().zip(&setups) {
        let ifname =
            gadget::ifname(root, *f).map_err(|e| format!("{} ifname: {e}", f.configfs_type()))?;
        let (board, _host) = cx.g.link_addresses(*index);
        if !wait_for(&cx.roots.net.join(&ifname), Duration::from_secs(10)) {
            return Err(format!("{ifname} never appeared"));
        }
        cx.ops
            .set_ipv4(&ifname, board, LINK_PREFIX)
            .map_err(|e| format!("{ifname}: {e}"))?;
        // The well-known link-local fallback; the link still works without it.
        if let Err(e) = cx.ops.add_ipv6(&ifname, BOARD_LINK_LOCAL, 64) {
            say(&format!("{ifname}: no fe80::1 ({e}); IPv4 only"));
        }
        let record = LinkRecord {
            function: f.configfs_type().into(),
            udc: udc.into(),
            board_interface: ifname.clone(),
            board_mac: gadget::mac_text(&setup.dev_mac),
            host_mac: gadget::mac_text(&setup.host_mac),
            board_address: board,
            host_address: None,
            lease_ns: None,
        };
        links.push((*f, ifname, record));
    }
    Ok(Bound {
        ops,
        links,
        bound_ns,
    })
}

/// Hardware mode: one composite gadget for the rest of the boot.
fn composite(cx: &GadgetRun, results: &mut RunResults) {
    let g = cx.g;
    let functions: Vec<_> = g.functions.iter().copied().enumerate().collect();
    let bound = match bring_up(cx, &functions) {
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
        "gadget up on {}: {}; waiting for a host to take a lease",
        cx.udc,
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
    if let (Some((i, lease)), Some(tests)) = (first, &cx.plan.network.tests) {
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

/// The DHCP server thread of a test-mode link.
type Dhcp = Option<JoinHandle<std::io::Result<Server>>>;

/// Test mode: one function (with its plan index) bound, leased, tested, torn down.
/// Returns whether the host side took a lease; a missing lease is an error on the
/// `last_attempt`, a warning before it. A function that cannot be brought up is an
/// error event `gadget.<function>` and the gadget is torn down.
pub(crate) fn one_function(
    cx: &GadgetRun,
    (index, f): (usize, GadgetFunction),
    last_attempt: bool,
    results: &mut RunResults,
) -> bool {
    let name = f.configfs_type();
    let bound = match bring_up(cx, &[(index, f)]) {
        Ok(b) => b,
        Err(e) => {
            fail(results, &format!("gadget.{name}"), e);
            let _ = gadget::tear_down(&cx.roots.gadget, &gadget::layout(cx.g, &[f], cx.serial).0);
            return false;
        }
    };
    let (_, ifname, mut link) = bound.links[0].clone();
    let (board, host) = cx.g.link_addresses(index);
    let (tx, rx) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let mut dhcp = Some(start_dhcp(
        &ifname,
        board,
        host,
        cx.g.lease_secs,
        0,
        tx,
        stop.clone(),
    ));
    let wait = Duration::from_millis(cx.g.link_wait_ms);
    // The host side's child and the interface it was given.
    let mut host_side = if cx.g.host_in_namespace {
        host_side_up(cx, f, wait, results)
    } else {
        None
    };
    let lease = await_lease(cx, &rx, &ifname, host_side.is_some(), name, results);
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
            let why = no_lease_report(cx, &ifname, &mut host_side, &stop, &mut dhcp);
            let step = format!("gadget.{name}");
            if last_attempt {
                fail(results, &step, why)
            } else {
                warn(results, &step, why)
            }
        }
    }
    results.network.links.push(link.clone());
    let got = lease.is_some();
    if let (Some(l), Some(tests)) = (lease, &cx.plan.network.tests) {
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
    if !stop_within_5s(&stop, dhcp.as_ref()) {
        results.event(
            format!("gadget.{name}.dhcp"),
            Severity::Warning,
            "the DHCP server thread did not stop within 5 s; left running",
        );
    }
    tear_down_function(cx, f, &bound, host_side, results);
    got
}

/// QEMU: finds the host side's interface of function `f` (by its `host_addr`) within
/// `wait` and forks the host side's child on it; its pid and interface, or `None` with
/// an error event.
fn host_side_up(
    cx: &GadgetRun,
    f: GadgetFunction,
    wait: Duration,
    results: &mut RunResults,
) -> Option<(i32, String)> {
    let step = format!("gadget.{}", f.configfs_type());
    let host_mac = gadget::mac_for(cx.serial, f, "host");
    let mut host_if = None;
    wait_until(wait, || {
        host_if = interface_with_mac(&cx.roots.net, &host_mac);
        host_if.is_some()
    });
    let Some(host_if) = host_if else {
        fail(
            results,
            &step,
            "the host-side interface never appeared (dummy_hcd, host driver loaded?)".into(),
        );
        return None;
    };
    match spawn_host_side(&host_if, host_mac, cx.plan, wait) {
        Ok(pid) => Some((pid, host_if)),
        Err(e) => {
            fail(results, &step, e);
            None
        }
    }
}

/// The lease a test-mode link's host takes within the plan's wait. With a host side
/// (QEMU), none after [`KICK_AFTER`] bounces the board's interface once (an info event
/// `gadget.<name>.kick`).
fn await_lease(
    cx: &GadgetRun,
    rx: &mpsc::Receiver<(usize, Lease)>,
    ifname: &str,
    host_side: bool,
    name: &str,
    results: &mut RunResults,
) -> Option<Lease> {
    let wait = Duration::from_millis(cx.g.link_wait_ms);
    let mut lease = rx.recv_timeout(KICK_AFTER.min(wait)).ok();
    if lease.is_none() && host_side {
        // Seen under dummy_hcd: the host side's carrier never comes up and its packets
        // never leave it (tx 0). Taking the board's interface down and up makes the
        // function send its link state to the host again (f_ecm/f_ncm: a
        // NETWORK_CONNECTION notification; f_rndis: a media-state indication).
        let how = match bounce(cx.ops, ifname) {
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
    lease.map(|(_, l)| l)
}

/// Why a test-mode link got no lease: what each end saw (the host side's counters while
/// its namespace lives, how it ended, the board's DHCP server once stopped, the board
/// interface's state). Forgets a host side that has ended.
fn no_lease_report(
    cx: &GadgetRun,
    ifname: &str,
    host_side: &mut Option<(i32, String)>,
    stop: &AtomicBool,
    dhcp: &mut Dhcp,
) -> String {
    // The host side's counters first, while its namespace lives (its client tries
    // HOST_GRACE longer than PID 1 waits).
    let host_state = host_side.as_ref().map(|(pid, host_if)| {
        link::namespace_state_text(&proc_net_dev(*pid), host_if, "host side")
    });
    let mut why = "no DHCP lease taken".to_owned();
    if let Some(code) = host_side
        .as_ref()
        .and_then(|(pid, _)| worker::exit_code(*pid))
    {
        *host_side = None;
        why += &format!("; the host side ended: {}", host_side_failure(code));
    }
    // What each end saw: which way the packets stopped.
    why += &format!(
        "; the board's DHCP server on {ifname} {}; {}",
        server_report(stop, dhcp),
        link::state_text(&cx.roots.net, ifname, "board")
    );
    if let Some(state) = host_state {
        why += &format!("; {state}");
    }
    why
}

/// Tears the gadget of function `f` down (a warning event when configfs refuses) and
/// ends the host side: its interface goes with the gadget (USB disconnect); it is
/// waited for to leave the child's namespace before the child ends, as a namespace that
/// ends hands its interfaces back to PID 1's, where the next attempt (same MAC) would
/// find this one, about to vanish, instead of its own.
fn tear_down_function(
    cx: &GadgetRun,
    f: GadgetFunction,
    bound: &Bound,
    host_side: Option<(i32, String)>,
    results: &mut RunResults,
) {
    let name = f.configfs_type();
    if let Err(e) = gadget::tear_down(&cx.roots.gadget, &bound.ops) {
        results.event(
            format!("gadget.{name}.teardown"),
            Severity::Warning,
            e.to_string(),
        );
    }
    let host_mac = gadget::mac_for(cx.serial, f, "host");
    let net = cx.roots.net.as_path();
    let mut lingering = None;
    if let Some((pid, host_if)) = host_side {
        if !wait_until(HOST_IF_GONE, || !in_namespace_of(pid, &host_if)) {
            lingering = Some(format!("{host_if} (in the host side's namespace)"));
        }
        worker::kill_and_reap(pid);
    }
    if !wait_until(HOST_IF_GONE, || {
        interface_with_mac(net, &host_mac).is_none()
    }) {
        lingering = interface_with_mac(net, &host_mac).or(lingering);
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
}

/// How long a test-mode link waits for its lease before the board's interface is
/// bounced ([`bounce`]); leases took 0.1-1.6 s in QEMU when nothing was wrong.
const KICK_AFTER: Duration = Duration::from_secs(5);

/// Takes the board's gadget interface down and up again, and puts back the IPv6
/// link-local fallback (Linux drops IPv6 addresses on down; IPv4 ones stay).
fn bounce(ops: &dyn LinkOps, ifname: &str) -> std::io::Result<()> {
    ops.link_down(ifname)?;
    ops.link_up(ifname)?;
    let _ = ops.add_ipv6(ifname, BOARD_LINK_LOCAL, 64);
    Ok(())
}

/// How long the host side's interface may take to go once the gadget is torn down (a
/// USB disconnect, handled by the hub thread), s.
const HOST_IF_GONE: Duration = Duration::from_secs(10);

/// Stops (its flag `stop` set) and joins the DHCP server thread of `dhcp` within 5 s,
/// and says what it heard or how it ended.
fn server_report(stop: &AtomicBool, dhcp: &mut Dhcp) -> String {
    if !stop_within_5s(stop, dhcp.as_ref()) {
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

#[cfg(test)]
mod tests;
