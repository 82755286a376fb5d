//! `serve` and `client_lease` over real sockets: three network namespaces made for the
//! test (nothing leaves the machine). The "board" namespace has two veth links, as a
//! board with two gadget functions has two usb interfaces, each with its /30 address;
//! each "host" namespace holds the other end of one link, up and with no IPv4 address,
//! like a host that just saw the USB device appear.
//!
//! What it shows: a UDP socket bound to 0.0.0.0:68 and to an address-less interface can
//! broadcast a DISCOVER and receive the broadcast OFFER/ACK (no packet socket needed);
//! two servers on 0.0.0.0:67 in one namespace, each bound to its interface, answer only
//! their own link; a renewal from the configured address is answered by unicast; the
//! stop flag ends `serve`.
//!
//! Needs root and iproute2's `ip`; without them it prints why and passes.

use std::fs::File;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::os::fd::AsFd;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use benchboot_dhcp::codec::{CLIENT_PORT, SERVER_PORT};
use benchboot_dhcp::net::{bind_udp, STOP_POLL};
use benchboot_dhcp::{client_lease, serve, Lease, Message, MessageType, Op, Options, Server};
use rustix::thread::{move_into_link_name_space, LinkNameSpaceType};

/// Runs `ip ARGS`, panicking with its stderr on failure.
fn ip(args: &[&str]) -> String {
    let out = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Network namespaces deleted on drop (their veth ends go with them).
struct Namespaces(Vec<String>);

impl Drop for Namespaces {
    fn drop(&mut self) {
        for ns in &self.0 {
            let _ = Command::new("ip").args(["netns", "delete", ns]).status();
        }
    }
}

/// Runs `f` on a new thread inside network namespace `ns`.
fn in_netns<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> JoinHandle<T> {
    let path = format!("/run/netns/{ns}");
    std::thread::spawn(move || {
        let fd = File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        move_into_link_name_space(fd.as_fd(), Some(LinkNameSpaceType::Network))
            .unwrap_or_else(|e| panic!("setns {path}: {e}"));
        f()
    })
}

fn skip_reason() -> Option<String> {
    if !rustix::process::geteuid().is_root() {
        return Some("not root: network namespaces need CAP_SYS_ADMIN".into());
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Some("`ip` (iproute2) is not installed".into());
    }
    None
}

const BOARD: [Ipv4Addr; 2] = [Ipv4Addr::new(10, 55, 0, 1), Ipv4Addr::new(10, 55, 0, 5)];
const HOST: [Ipv4Addr; 2] = [Ipv4Addr::new(10, 55, 0, 2), Ipv4Addr::new(10, 55, 0, 6)];
const MASK: Ipv4Addr = Ipv4Addr::new(255, 255, 255, 252);
const MACS: [[u8; 6]; 2] = [[0x02, 0xbe, 0, 0, 0, 0x02], [0x02, 0xbe, 0, 0, 0, 0x06]];

fn boottime_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

#[test]
fn leases_over_veth_between_namespaces() {
    if let Some(why) = skip_reason() {
        // Straight to stderr: the test harness would swallow println! of a passing test.
        let _ = writeln!(
            std::io::stderr(),
            "skipped leases_over_veth_between_namespaces: {why}"
        );
        return;
    }
    let id = std::process::id();
    let board_ns = format!("bbdhcp-{id}-board");
    let host_ns = [format!("bbdhcp-{id}-host0"), format!("bbdhcp-{id}-host1")];
    // Interface names: at most 15 bytes (IFNAMSIZ - 1); a pid has at most 7 digits.
    let board_if = [format!("bd{id}b0"), format!("bd{id}b1")];
    let host_if = [format!("bd{id}h0"), format!("bd{id}h1")];

    let mut guard = Namespaces(Vec::new());
    for ns in std::iter::once(&board_ns).chain(&host_ns) {
        ip(&["netns", "add", ns]);
        guard.0.push(ns.clone());
    }
    for i in 0..2 {
        ip(&[
            "link",
            "add",
            &board_if[i],
            "netns",
            &board_ns,
            "type",
            "veth",
            "peer",
            "name",
            &host_if[i],
            "netns",
            &host_ns[i],
        ]);
        let cidr = format!("{}/30", BOARD[i]);
        ip(&["-n", &board_ns, "addr", "add", &cidr, "dev", &board_if[i]]);
        ip(&["-n", &board_ns, "link", "set", &board_if[i], "up"]);
        ip(&["-n", &host_ns[i], "link", "set", &host_if[i], "up"]);
        let v4 = ip(&[
            "-n",
            &host_ns[i],
            "-4",
            "-o",
            "addr",
            "show",
            "dev",
            &host_if[i],
        ]);
        assert!(
            v4.trim().is_empty(),
            "host end must start address-less: {v4}"
        );
    }

    // Two servers in the board namespace, both on 0.0.0.0:67.
    let stop = Arc::new(AtomicBool::new(false));
    let (leases_tx, leases_rx) = mpsc::channel::<(usize, Lease)>();
    let servers: Vec<_> = (0..2)
        .map(|i| {
            let (iface, stop, tx) = (board_if[i].clone(), stop.clone(), leases_tx.clone());
            in_netns(&board_ns, move || {
                let server = Server::new(BOARD[i], HOST[i], MASK, 3600);
                serve(&iface, server, stop, |lease| tx.send((i, lease)).unwrap())
            })
        })
        .collect();
    // An empty or unknown interface name is an error, not a server on every interface.
    let bad = in_netns(&board_ns, || {
        let s = Server::new(BOARD[0], HOST[0], MASK, 60);
        let never = Arc::new(AtomicBool::new(true));
        (
            serve("", s.clone(), never.clone(), |_| ())
                .unwrap_err()
                .kind(),
            serve("nosuchif0", s, never, |_| ())
                .unwrap_err()
                .raw_os_error(),
        )
    });
    let bad = bad.join().unwrap();
    assert_eq!(bad.0, std::io::ErrorKind::InvalidInput);
    assert_eq!(bad.1, Some(libc::ENODEV));

    // One client per host namespace, at the same time.
    let started_ns = boottime_ns();
    let clients: Vec<_> = (0..2)
        .map(|i| {
            let iface = host_if[i].clone();
            in_netns(&host_ns[i], move || {
                client_lease(&iface, MACS[i], Duration::from_secs(15))
            })
        })
        .collect();
    for (i, c) in clients.into_iter().enumerate() {
        let lease = c.join().unwrap().expect("client got a lease");
        assert_eq!(
            lease.address, HOST[i],
            "link {i} answered by its own server"
        );
        assert_eq!(lease.server, BOARD[i]);
        assert_eq!(lease.netmask, MASK);
        assert_eq!(lease.lease_secs, 3600);
        assert_eq!(lease.mac, MACS[i]);
        assert!(lease.acked_ns >= started_ns);
    }
    let mut reported: Vec<(usize, Lease)> = (0..2)
        .map(|_| leases_rx.recv_timeout(Duration::from_secs(5)).unwrap())
        .collect();
    reported.sort_by_key(|(i, _)| *i);
    for (i, lease) in &reported {
        assert_eq!((lease.mac, lease.address), (MACS[*i], HOST[*i]));
        assert_eq!(lease.server, BOARD[*i]);
        assert!(lease.acked_ns >= started_ns && lease.acked_ns <= boottime_ns());
        assert_eq!(
            lease.client_id.as_deref().map(|c| &c[1..]),
            Some(&MACS[*i][..])
        );
    }

    // The host configures its address and renews by unicast (RFC 2131 §4.4.5):
    // the ACK comes back by unicast from the board's address.
    let cidr = format!("{}/30", HOST[0]);
    ip(&["-n", &host_ns[0], "addr", "add", &cidr, "dev", &host_if[0]]);
    let iface = host_if[0].clone();
    let renew = in_netns(&host_ns[0], move || {
        let sock = bind_udp(&iface, CLIENT_PORT).unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        let mut chaddr = [0; 16];
        chaddr[..6].copy_from_slice(&MACS[0]);
        let request = Message {
            xid: 0x5eed_0002,
            ciaddr: HOST[0],
            chaddr,
            options: Options {
                message_type: Some(MessageType::Request),
                parameter_list: Some(vec![1, 3, 6, 15, 121]),
                ..Options::default()
            },
            ..Message::default()
        };
        let to = SocketAddrV4::new(BOARD[0], SERVER_PORT);
        let mut buf = [0u8; 1500];
        for _ in 0..5 {
            sock.send_to(&request.encode(), to).unwrap();
            if let Ok((n, from)) = sock.recv_from(&mut buf) {
                return (Message::parse(&buf[..n]).unwrap(), from);
            }
        }
        panic!("no answer to the renewal");
    });
    let (ack, from) = renew.join().unwrap();
    assert_eq!(
        from,
        SocketAddr::V4(SocketAddrV4::new(BOARD[0], SERVER_PORT))
    );
    assert_eq!(ack.op, Op::BootReply);
    assert_eq!(ack.xid, 0x5eed_0002);
    assert_eq!(ack.options.message_type, Some(MessageType::Ack));
    assert_eq!((ack.ciaddr, ack.yiaddr), (HOST[0], HOST[0]));
    assert_eq!(ack.options.subnet_mask, Some(MASK));
    assert_eq!(ack.options.lease_secs, Some(3600));
    assert!(ack.options.other.is_empty(), "no router, no DNS: {ack:?}");
    let (i, renewed) = leases_rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!((i, renewed.address), (0, HOST[0]));
    assert!(renewed.acked_ns >= reported[0].1.acked_ns);

    // The stop flag ends both servers within a poll period or so.
    let t = Instant::now();
    stop.store(true, Ordering::Relaxed);
    for s in servers {
        s.join().unwrap().expect("serve returns Ok when stopped");
    }
    assert!(
        t.elapsed() < STOP_POLL * 5,
        "stopped after {:?}",
        t.elapsed()
    );
    drop(guard);
}
