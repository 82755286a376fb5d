//! `benchboot relay ADDRESS:PORT` (hidden): joins its stdin and stdout to one TCP
//! connection. QEMU's user network runs it for every guest connection to a guest forward
//! (`guestfwd=...-cmd:benchboot relay 127.0.0.1:PORT`, QEMU's inetd-like mode: stdin and
//! stdout are one socket to slirp), so the board in QEMU reaches `benchboot peer` on this
//! machine's loopback with the user network still `restrict=on`.
//!
//! The relay must not become a queue of its own: the emulated link moves 1-2 Mbit/s and
//! loopback lets the peer run megabytes ahead (autotuned socket buffers), which then
//! drain for tens of seconds after the peer stopped sending, past the board's wait for
//! the end of a run. So its receive buffer is fixed small before connecting (no
//! autotuning, a small window: the peer's send buffer stays small too), and each end's
//! close is passed on as a half-close at once.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// The relay's TCP receive buffer, bytes (the kernel doubles it, socket(7)): about
/// 0.5 s at the 1-2 Mbit/s QEMU's usb-net moves.
pub const RELAY_BUFFER: usize = 64 * 1024;

/// How long the relay waits for the guest's side to close after the peer closed.
const CLOSE_WAIT: Duration = Duration::from_secs(30);

/// Copies stdin to the connection and the connection to stdout; the peer's close is
/// passed to stdout as a half-close (the guest sees its FIN at once), stdin's to the
/// peer; returns when both directions ended (or [`CLOSE_WAIT`] after the peer's).
///
/// # Errors
/// When `to` cannot be reached.
pub fn run(to: SocketAddr) -> Result<()> {
    let stream = connect_small(to).with_context(|| format!("relay: connecting to {to}"))?;
    let _ = stream.set_nodelay(true);
    let mut up = stream.try_clone().context("relay: cloning the socket")?;
    let upward = std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut up);
        let _ = up.shutdown(Shutdown::Write);
    });
    let mut down = stream;
    let mut buf = vec![0u8; 16 * 1024];
    {
        let mut out = crate::out::relay_channel().lock();
        loop {
            let n = match down.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            if out.write_all(&buf[..n]).and_then(|()| out.flush()).is_err() {
                break;
            }
        }
    }
    // stdout is slirp's socket: half-close it so the guest reads the end now.
    let _ = rustix::net::shutdown(crate::out::relay_channel(), rustix::net::Shutdown::Write);
    let deadline = Instant::now() + CLOSE_WAIT;
    while !upward.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// A TCP connection to `to` whose receive buffer was set to [`RELAY_BUFFER`] before
/// connecting (so the window it offers is that small from the handshake on).
fn connect_small(to: SocketAddr) -> std::io::Result<TcpStream> {
    use rustix::net::{sockopt, AddressFamily, SocketType};
    let family = if to.is_ipv4() {
        AddressFamily::INET
    } else {
        AddressFamily::INET6
    };
    let fd = rustix::net::socket(family, SocketType::STREAM, None)?;
    sockopt::set_socket_recv_buffer_size(&fd, RELAY_BUFFER)?;
    rustix::net::connect(&fd, &to)?;
    Ok(TcpStream::from(fd))
}
