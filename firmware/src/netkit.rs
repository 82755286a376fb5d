//! The floor under PID 1's network steps: what the gadget step ([`crate::network`]), the
//! wired step ([`crate::wired`]) and the WiFi step ([`crate::wifi`]) share, so that no
//! step imports another. Nothing here imports a step.
//!
//! - the kernel edges a step goes through: [`LinkOps`] (bring a link up or down, set its
//!   addresses; [`Kernel`] is the real one over [`crate::sys`]) and [`Roots`] (where the
//!   sysfs and configfs trees are; the board's, or a temp tree in the tests);
//! - the error event of a step ([`fail`]), the DHCP server thread of a link
//!   ([`start_dhcp`]), the network tests over a link ([`run_tests`],
//!   [`tests_with_counters`]) and the LAN's peer ([`lan_peer`]);
//! - the QEMU stand-ins' namespace children ([`spawn_in_netns_moving`],
//!   [`spawn_host_side`], [`stand_in_lan_body`]) and what their exit codes mean
//!   ([`host_side_failure`]).

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use benchboot_console::figures::network_step;
use benchboot_dhcp::{Lease, Server};
use benchboot_netbench::driver::Stage;
use benchboot_plan::{NetTests, Plan, PEER_ANNOUNCE_PORT};
use benchboot_results::counters::{CounterSpan, NetDirection, NetTest};
use benchboot_results::{HealthScope, RunResults, Severity};

use crate::console::{self, say};
use crate::wait::wait_until;
use crate::{gadget, health, link, sys, worker};

/// The kernel's CPU counters, sampled around every network test (proc(5)).
pub(crate) const PROC_STAT: &str = "/proc/stat";
/// The prefix length of every gadget link and direct cable: a /30 (board `.1`, host `.2`).
pub(crate) const LINK_PREFIX: u8 = 30;
/// Netmask of [`LINK_PREFIX`].
const LINK_NETMASK: Ipv4Addr = Ipv4Addr::new(255, 255, 255, 252);
/// The prefix length of a QEMU stand-in LAN: a /24.
const STAND_IN_PREFIX: u8 = 24;

/// The link calls the network steps make on the kernel (rtnetlink and the interface
/// ioctls of [`crate::sys`]). Narrow on purpose: the steps' rules are tested over a
/// recording fake ([`fake::Recorder`]); the board uses [`Kernel`].
///
/// Errors are the kernel's (`io::Error` with its errno); a step records them as events,
/// never panics.
pub trait LinkOps {
    /// Sets `ifname` up (`IFF_UP`), addresses unchanged.
    fn link_up(&self, ifname: &str) -> io::Result<()>;
    /// Sets `ifname` down; Linux drops its IPv6 addresses, IPv4 ones stay.
    fn link_down(&self, ifname: &str) -> io::Result<()>;
    /// Gives `ifname` the IPv4 `address`/`prefix_len` (bits, 0..=32) and sets it up;
    /// `[0; 4]`/0 clears the address.
    fn set_ipv4(&self, ifname: &str, address: [u8; 4], prefix_len: u8) -> io::Result<()>;
    /// Adds the IPv6 `address`/`prefix_len` (bits, 0..=128) to `ifname`.
    fn add_ipv6(&self, ifname: &str, address: [u8; 16], prefix_len: u32) -> io::Result<()>;
}

/// The board's [`LinkOps`]: [`sys::link_up`], [`sys::link_down`], [`sys::ifconfig_up`]
/// and [`sys::add_ipv6`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Kernel;

impl LinkOps for Kernel {
    fn link_up(&self, ifname: &str) -> io::Result<()> {
        sys::link_up(ifname)
    }
    fn link_down(&self, ifname: &str) -> io::Result<()> {
        sys::link_down(ifname)
    }
    fn set_ipv4(&self, ifname: &str, address: [u8; 4], prefix_len: u8) -> io::Result<()> {
        sys::ifconfig_up(ifname, address, prefix_len)
    }
    fn add_ipv6(&self, ifname: &str, address: [u8; 16], prefix_len: u32) -> io::Result<()> {
        sys::add_ipv6(ifname, address, prefix_len)
    }
}

/// Where a network step finds the kernel's trees. [`Roots::board`] is the board's; the
/// tests point every field into a temp folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    /// The network interfaces, `/sys/class/net` (Documentation/ABI/testing/sysfs-class-net).
    pub net: PathBuf,
    /// The USB device controllers, `/sys/class/udc` (Documentation/ABI/testing/sysfs-class-udc).
    pub udc: PathBuf,
    /// The gadget's own configfs folder, `/sys/kernel/config/usb_gadget/benchboot`
    /// (Documentation/usb/gadget_configfs.rst).
    pub gadget: PathBuf,
}

impl Roots {
    /// The board's trees: [`link::SYS_CLASS_NET`], [`gadget::UDC_DIR`] and
    /// [`gadget::GADGETS_DIR`]/[`gadget::GADGET_NAME`].
    pub fn board() -> Roots {
        Roots {
            net: PathBuf::from(link::SYS_CLASS_NET),
            udc: PathBuf::from(gadget::UDC_DIR),
            gadget: Path::new(gadget::GADGETS_DIR).join(gadget::GADGET_NAME),
        }
    }
}

/// Says `msg` on the console and records it as `step`'s error event.
pub(crate) fn fail(results: &mut RunResults, step: &str, msg: String) {
    say(&format!("{step}: {msg}"));
    results.event(step, Severity::Error, msg);
}

/// Says `msg` on the console and records it as `step`'s warning event.
pub(crate) fn warn(results: &mut RunResults, step: &str, msg: String) {
    say(&format!("{step}: {msg}"));
    results.event(step, Severity::Warning, msg);
}

/// Starts a DHCP server thread on `ifname` (board address `board`, a /30) handing out
/// `host` for `lease_secs`; leases arrive on `tx` tagged `tag`. It serves until `stop`.
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
    let net = Path::new(link::SYS_CLASS_NET);
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

/// The peer on a LAN, and how it was found.
pub(crate) struct LanPeer {
    /// The peer's address.
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
    let IpAddr::V4(address) = at.ip() else {
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

// Exit codes of the host-side and stand-in children (theirs start at 20).
const HOST_NO_NETNS: i32 = 3;
const HOST_NO_LINK: i32 = 4;
const HOST_NO_LEASE: i32 = 5;
/// A namespace child's exit code: it could not set its address.
pub(crate) const HOST_NO_ADDRESS: i32 = 6;
/// A namespace child's exit code: it could not listen for the peer.
pub(crate) const HOST_NO_LISTEN: i32 = 7;

/// What a namespace child's exit `code` means, in words.
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

/// How much longer the host side's DHCP client tries than PID 1 waits for its lease, so
/// that a link without a lease is inspected while the child and its namespace live.
pub(crate) const HOST_GRACE: Duration = Duration::from_secs(10);

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
        serve_peer(lease.address, port)
    })
}

/// In a namespace child: serves the peer at `address`:`port` until the child is killed;
/// its exit code (0, or [`HOST_NO_LISTEN`]).
pub(crate) fn serve_peer(address: Ipv4Addr, port: u16) -> i32 {
    match std::net::TcpListener::bind((address, port)) {
        Ok(l) => {
            let _ = benchboot_netbench::peer::serve(l, Path::new(PROC_STAT));
            0
        }
        Err(_) => HOST_NO_LISTEN,
    }
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

/// A QEMU stand-in LAN (namespace child): its router / DHCP server / peer address
/// (`.1` of a /24) and the address it leases the board (`.2`).
#[derive(Debug, Clone, Copy)]
pub struct StandInLan {
    /// The child's own address, IPv4 octets.
    pub router: [u8; 4],
    /// The address its DHCP server leases, IPv4 octets.
    pub lease: [u8; 4],
}

/// A QEMU stand-in LAN, in a namespace child that has `ifname`: sets `lan.router`/24 on
/// it, leases `lan.lease` over DHCP, announces the peer (control port `port`) to the
/// LAN's broadcast address once a second and serves it. Returns the child's exit code
/// ([`host_side_failure`]'s).
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
    serve_peer(lan.router.into(), port)
}

/// Stops `stop`'s thread and waits up to 5 s for `handle` to end; whether it did (a
/// thread that panicked is parked by PID 1's hook and never ends).
pub(crate) fn stop_within_5s<T>(
    stop: &AtomicBool,
    handle: Option<&std::thread::JoinHandle<T>>,
) -> bool {
    stop.store(true, Ordering::Relaxed);
    wait_until(Duration::from_secs(5), || {
        handle.is_none_or(|d| d.is_finished())
    })
}

/// A recording [`LinkOps`] for the steps' tests.
#[cfg(test)]
pub(crate) mod fake {
    use super::*;
    use std::cell::RefCell;

    /// One call a step made, with its arguments.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum LinkCall {
        /// [`LinkOps::link_up`] of an interface.
        Up(String),
        /// [`LinkOps::link_down`] of an interface.
        Down(String),
        /// [`LinkOps::set_ipv4`]: interface, address, prefix length.
        Ipv4(String, [u8; 4], u8),
        /// [`LinkOps::add_ipv6`]: interface, address, prefix length.
        Ipv6(String, [u8; 16], u32),
    }

    /// Records every call in order; the calls `refuse` picks fail (`EPERM`-like).
    pub struct Recorder {
        /// Every call, in order (refused ones too).
        pub calls: RefCell<Vec<LinkCall>>,
        /// Which calls fail.
        pub refuse: fn(&LinkCall) -> bool,
    }

    impl Recorder {
        /// A recorder that refuses nothing.
        pub fn new() -> Self {
            Self::refusing(|_| false)
        }
        /// A recorder that refuses the calls `refuse` picks.
        pub fn refusing(refuse: fn(&LinkCall) -> bool) -> Self {
            Recorder {
                calls: RefCell::new(Vec::new()),
                refuse,
            }
        }
        /// The calls so far.
        pub fn calls(&self) -> Vec<LinkCall> {
            self.calls.borrow().clone()
        }
        fn call(&self, c: LinkCall) -> io::Result<()> {
            let refused = (self.refuse)(&c);
            self.calls.borrow_mut().push(c);
            if refused {
                Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    "refused by the fake",
                ))
            } else {
                Ok(())
            }
        }
    }

    impl LinkOps for Recorder {
        fn link_up(&self, ifname: &str) -> io::Result<()> {
            self.call(LinkCall::Up(ifname.into()))
        }
        fn link_down(&self, ifname: &str) -> io::Result<()> {
            self.call(LinkCall::Down(ifname.into()))
        }
        fn set_ipv4(&self, ifname: &str, address: [u8; 4], prefix_len: u8) -> io::Result<()> {
            self.call(LinkCall::Ipv4(ifname.into(), address, prefix_len))
        }
        fn add_ipv6(&self, ifname: &str, address: [u8; 16], prefix_len: u32) -> io::Result<()> {
            self.call(LinkCall::Ipv6(ifname.into(), address, prefix_len))
        }
    }

    /// A fresh results document for a step's test.
    pub fn results(plan: &Plan) -> RunResults {
        RunResults::new(
            "t".into(),
            plan.clone(),
            benchboot_storage::system::system_info(0),
        )
    }

    /// The events of `results` as `(step, severity, message)`.
    pub fn events(results: &RunResults) -> Vec<(String, Severity, String)> {
        results
            .events
            .iter()
            .map(|e| (e.step.clone(), e.severity, e.message.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_named() {
        assert!(host_side_failure(HOST_NO_NETNS).contains("CLONE_NEWNET"));
        assert!(host_side_failure(HOST_NO_LEASE).contains("no lease"));
        assert_eq!(host_side_failure(42), "exit status 42");
    }

    #[test]
    fn the_plans_peer_comes_first() {
        let plan = Plan::example();
        let p = lan_peer(&plan, Some([10, 1, 2, 3]), Duration::ZERO).unwrap();
        assert_eq!((p.address, p.by), (Ipv4Addr::new(10, 1, 2, 3), "plan"));
        assert!(p.warning.is_none());
    }

    #[test]
    fn the_board_roots_are_the_kernels_trees() {
        let r = Roots::board();
        assert_eq!(r.net, Path::new("/sys/class/net"));
        assert_eq!(r.udc, Path::new("/sys/class/udc"));
        assert_eq!(
            r.gadget,
            Path::new("/sys/kernel/config/usb_gadget/benchboot")
        );
    }
}
