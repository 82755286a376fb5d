//! The only I/O of the crate: UDP sockets bound to one interface.
//!
//! Both ends use ordinary UDP sockets, bound to 0.0.0.0 and to the interface with
//! `SO_BINDTODEVICE` (socket(7)), with `SO_BROADCAST` and `SO_REUSEADDR`. On Linux such a
//! socket can send to 255.255.255.255 and receive broadcasts even while its interface
//! has no IPv4 address (the source address is then 0.0.0.0), so the client needs no
//! packet socket; tests/veth.rs checks this between two network namespaces.
//!
//! rustix 1.x has no setter for `SO_BINDTODEVICE`, so that one option is set with
//! `libc::setsockopt` in [`crate::bindtodevice`] (the only `unsafe` in the crate).

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::net::{ipproto, sockopt, AddressFamily, SocketFlags, SocketType};

use crate::codec::{Message, MessageType, Op, Options, BROADCAST_FLAG, CLIENT_PORT, SERVER_PORT};
use crate::server::{reply_destination, Server};
use crate::Lease;

/// How often [`serve`] looks at its stop flag (its socket read timeout).
pub const STOP_POLL: Duration = Duration::from_millis(200);
/// How long [`client_lease`] waits for a reply before sending its message again. RFC
/// 2131 §4.1 suggests 4 s, doubling; a test on a virtual link does not need to wait that
/// long.
pub const CLIENT_RETRY: Duration = Duration::from_secs(1);
/// Receive buffer: an Ethernet MTU holds any DHCP message we accept, bytes.
const RECV_LEN: usize = 1500;

/// A UDP socket on 0.0.0.0:`port` that only sends and receives through `interface`.
pub fn bind_udp(interface: &str, port: u16) -> io::Result<UdpSocket> {
    let fd = rustix::net::socket_with(
        AddressFamily::INET,
        SocketType::DGRAM,
        SocketFlags::CLOEXEC,
        Some(ipproto::UDP),
    )?;
    sockopt::set_socket_reuseaddr(&fd, true)?;
    sockopt::set_socket_broadcast(&fd, true)?;
    bind_to_device(fd.as_fd(), interface)?;
    rustix::net::bind(&fd, &SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port))?;
    Ok(UdpSocket::from(fd))
}

/// `SO_BINDTODEVICE` (socket(7)): the socket only sees packets of `interface`, and its
/// packets, broadcasts included, leave through it.
fn bind_to_device(fd: BorrowedFd<'_>, interface: &str) -> io::Result<()> {
    // An empty name would *remove* the binding and serve every interface.
    if interface.is_empty() || interface.len() >= libc::IFNAMSIZ || interface.contains('\0') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{interface:?} is not an interface name (1..=15 bytes, no NUL)"),
        ));
    }
    crate::bindtodevice::set(fd, interface)
}

/// CLOCK_BOOTTIME, ns (includes time suspended).
fn boottime_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Serves DHCP on `interface` (which must exist, and should carry the board's
/// address): binds 0.0.0.0:67 to it, answers each request through `server`, and calls
/// `on_lease` after each DHCPACK that grants the lease (renewals included) was sent.
/// Replies go to 255.255.255.255:68, or unicast to the client's `ciaddr` when it has one
/// ([`reply_destination`]).
///
/// Runs until `stop` is set (checked every [`STOP_POLL`]), then returns the server (its
/// [`Server::traffic`] says what it heard); meant for its own thread. Errors: setting up
/// the socket, or a failed receive. A reply that cannot be sent is dropped and counted
/// ([`Server::send_failed`]; the client sends its request again).
pub fn serve(
    interface: &str,
    mut server: Server,
    stop: Arc<AtomicBool>,
    mut on_lease: impl FnMut(Lease),
) -> io::Result<Server> {
    let sock = bind_udp(interface, SERVER_PORT)?;
    sock.set_read_timeout(Some(STOP_POLL))?;
    let mut buf = [0u8; RECV_LEN];
    while !stop.load(Ordering::Relaxed) {
        let n = match sock.recv_from(&mut buf) {
            Ok((n, _from)) => n,
            Err(e) if is_timeout(&e) => continue,
            Err(e) => return Err(e),
        };
        let Ok(request) = Message::parse(&buf[..n]) else {
            continue;
        };
        let Some(reply) = server.handle(&request, boottime_ns()) else {
            continue;
        };
        let to = SocketAddrV4::new(reply_destination(&request, &reply), CLIENT_PORT);
        if sock.send_to(&reply.encode(), to).is_err() {
            server.send_failed();
            continue;
        }
        let granted =
            reply.options.message_type == Some(MessageType::Ack) && !reply.yiaddr.is_unspecified();
        if let (true, Some(lease)) = (granted, server.lease()) {
            on_lease(lease.clone());
        }
    }
    Ok(server)
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

/// A minimal DHCP client for tests: DHCPDISCOVER → DHCPOFFER → DHCPREQUEST → DHCPACK on
/// `interface`, as `mac` (`chaddr` and client identifier; the interface's own MAC is not
/// read), from 0.0.0.0:68 to 255.255.255.255:67 with the broadcast flag set. Resends
/// every [`CLIENT_RETRY`]; a DHCPNAK starts over. It does not configure the address.
///
/// Errors: setting up the socket, or `TimedOut` when no DHCPACK came within `timeout`.
pub fn client_lease(interface: &str, mac: [u8; 6], timeout: Duration) -> io::Result<Lease> {
    let sock = bind_udp(interface, CLIENT_PORT)?;
    let deadline = Instant::now() + timeout;
    let mut chaddr = [0; 16];
    chaddr[..6].copy_from_slice(&mac);
    let mut client_id = vec![crate::codec::HTYPE_ETHERNET];
    client_id.extend_from_slice(&mac);
    let xid = (boottime_ns() as u32) ^ u32::from_be_bytes([mac[2], mac[3], mac[4], mac[5]]);
    let base = Message {
        op: Op::BootRequest,
        xid,
        flags: BROADCAST_FLAG,
        chaddr,
        options: Options {
            client_id: Some(client_id),
            // Subnet mask, router, DNS: what hosts ask for; the server sends the mask only.
            parameter_list: Some(vec![1, 3, 6]),
            max_size: Some(RECV_LEN as u16),
            ..Options::default()
        },
        ..Message::default()
    };
    loop {
        let mut discover = base.clone();
        discover.options.message_type = Some(MessageType::Discover);
        let offer = exchange(&sock, &discover, deadline, |m| {
            m.options.message_type == Some(MessageType::Offer) && m.options.server_id.is_some()
        })?;
        let mut request = base.clone();
        request.options.message_type = Some(MessageType::Request);
        request.options.requested_ip = Some(offer.yiaddr);
        request.options.server_id = offer.options.server_id;
        let answer = exchange(&sock, &request, deadline, |m| {
            matches!(
                m.options.message_type,
                Some(MessageType::Ack | MessageType::Nak)
            )
        })?;
        if answer.options.message_type == Some(MessageType::Ack) {
            return Ok(Lease {
                mac,
                address: answer.yiaddr,
                server: answer.options.server_id.unwrap_or(Ipv4Addr::UNSPECIFIED),
                netmask: answer.options.subnet_mask.unwrap_or(Ipv4Addr::UNSPECIFIED),
                lease_secs: answer.options.lease_secs.unwrap_or(0),
                acked_ns: boottime_ns(),
                host_name: None,
                client_id: base.options.client_id.clone(),
            });
        }
    }
}

/// Sends `msg` (again every [`CLIENT_RETRY`]) until a reply to it that `wanted` accepts
/// arrives, or `deadline` passes (`TimedOut`).
fn exchange(
    sock: &UdpSocket,
    msg: &Message,
    deadline: Instant,
    wanted: impl Fn(&Message) -> bool,
) -> io::Result<Message> {
    let to = SocketAddrV4::new(Ipv4Addr::BROADCAST, SERVER_PORT);
    let bytes = msg.encode();
    let mut buf = [0u8; RECV_LEN];
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no DHCP reply to {:?}", msg.options.message_type),
            ));
        }
        sock.send_to(&bytes, to)?;
        let retry_at = deadline.min(now + CLIENT_RETRY);
        while let Some(left) = retry_at.checked_duration_since(Instant::now()) {
            if left.is_zero() {
                break;
            }
            sock.set_read_timeout(Some(left))?;
            let n = match sock.recv_from(&mut buf) {
                Ok((n, _from)) => n,
                Err(e) if is_timeout(&e) => continue,
                Err(e) => return Err(e),
            };
            let Ok(reply) = Message::parse(&buf[..n]) else {
                continue;
            };
            if reply.op == Op::BootReply
                && reply.xid == msg.xid
                && reply.chaddr == msg.chaddr
                && wanted(&reply)
            {
                return Ok(reply);
            }
        }
    }
}
