//! Peer announcement on a LAN: `benchboot peer --announce` broadcasts one datagram a
//! second to `255.255.255.255:`[`PEER_ANNOUNCE_PORT`]; a board with no peer address in
//! its plan listens there and takes the first peer it hears.
//!
//! The datagram is one line of text: `benchboot-peer VERSION port=PORT\n`, where
//! `VERSION` is [`VERSION`] and `PORT` the peer's control (TCP) port. The board connects
//! to the sender's source address at that port.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

pub use benchboot_plan::network::PEER_ANNOUNCE_PORT;

use crate::{Context, NetError};

/// Version of the announcement line.
pub const VERSION: u32 = 1;

/// The word an announcement starts with.
pub const MAGIC: &str = "benchboot-peer";

/// Longest announcement accepted, bytes (a real one is about 28).
pub const MAX_LEN: usize = 256;

/// How often `benchboot peer --announce` broadcasts.
pub const EVERY: Duration = Duration::from_secs(1);

/// The limited broadcast address and the announcement port (RFC 919: 255.255.255.255
/// reaches every host on the local link and is never forwarded by routers).
pub const BROADCAST: SocketAddr =
    SocketAddr::new(IpAddr::V4(Ipv4Addr::BROADCAST), PEER_ANNOUNCE_PORT);

/// The announcement of a peer whose control port is `control_port`:
/// `benchboot-peer 1 port=5202\n`.
pub fn encode(control_port: u16) -> String {
    format!("{MAGIC} {VERSION} port={control_port}\n")
}

/// The control port of an announcement; `None` for junk, another version, a missing or
/// zero port, or extra words.
pub fn parse(datagram: &[u8]) -> Option<u16> {
    if datagram.len() > MAX_LEN {
        return None;
    }
    let text = std::str::from_utf8(datagram).ok()?;
    let line = text.strip_suffix('\n').unwrap_or(text);
    let mut words = line.split(' ');
    if words.next()? != MAGIC || words.next()?.parse::<u32>().ok()? != VERSION {
        return None;
    }
    let port: u16 = words.next()?.strip_prefix("port=")?.parse().ok()?;
    if port == 0 || words.next().is_some() {
        return None;
    }
    Some(port)
}

/// Waits on `sock` for an announcement: the sender's address with the announced port.
/// Anything else that arrives is ignored; an error after `timeout`.
pub fn wait(sock: &UdpSocket, timeout: Duration) -> Result<SocketAddr, NetError> {
    let deadline = Instant::now() + timeout;
    let mut buf = [0u8; MAX_LEN + 1];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(NetError::Timeout(format!(
                "listening for a `benchboot peer --announce` for {} ms",
                timeout.as_millis()
            )));
        }
        sock.set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .ctx("announce: socket options")?;
        match sock.recv_from(&mut buf) {
            Ok((n, from)) => {
                if let Some(port) = parse(&buf[..n]) {
                    return Ok(SocketAddr::new(from.ip(), port));
                }
            }
            Err(e) if crate::quiet_receive(&e) => {}
            Err(e) => return Err(NetError::io("announce: receiving", e)),
        }
    }
}

/// The board's side: binds `bind_ip:`[`PEER_ANNOUNCE_PORT`] (`0.0.0.0`: every
/// interface, which broadcasts need) and returns the first peer heard within `timeout`
/// (its source address and announced control port).
pub fn listen(bind_ip: Ipv4Addr, timeout: Duration) -> Result<SocketAddr, NetError> {
    let sock = UdpSocket::bind((bind_ip, PEER_ANNOUNCE_PORT)).ctx(&format!(
        "announce: binding {bind_ip}:{PEER_ANNOUNCE_PORT} (UDP)"
    ))?;
    wait(&sock, timeout)
}

/// Sends one announcement of `control_port` from `sock` to `to`.
pub fn announce_once(sock: &UdpSocket, to: SocketAddr, control_port: u16) -> io::Result<()> {
    sock.send_to(encode(control_port).as_bytes(), to)
        .map(|_| ())
}

/// The peer's side: announces `control_port` to `to` ([`BROADCAST`] for a LAN) every
/// `every` until `stop`, from a socket of its own with `SO_BROADCAST` set. A failed send
/// (no route yet: the link is down) is told to `log` once per run of failures and
/// retried. Errs only when the socket cannot be made.
pub fn broadcast(
    control_port: u16,
    to: SocketAddr,
    every: Duration,
    stop: &AtomicBool,
    log: &dyn Fn(&str),
) -> io::Result<()> {
    let sock = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))?;
    sock.set_broadcast(true)?;
    let mut failing = false;
    while !stop.load(Ordering::Relaxed) {
        match announce_once(&sock, to, control_port) {
            Ok(()) => failing = false,
            Err(e) if !failing => {
                failing = true;
                log(&format!("peer: announcing to {to}: {e} (retrying)"));
            }
            Err(_) => {}
        }
        // Sleep in short steps so that `stop` is seen soon.
        let until = Instant::now() + every;
        while !stop.load(Ordering::Relaxed) && Instant::now() < until {
            thread::sleep(every.min(Duration::from_millis(100)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn announcements_round_trip() {
        assert_eq!(encode(5202), "benchboot-peer 1 port=5202\n");
        assert_eq!(parse(encode(5202).as_bytes()), Some(5202));
        assert_eq!(parse(b"benchboot-peer 1 port=65535"), Some(65535));
    }

    #[test]
    fn junk_other_versions_and_missing_ports_are_refused() {
        for bad in [
            &b""[..],
            b"\n",
            b"hello",
            b"benchboot-peer",
            b"benchboot-peer 1",
            b"benchboot-peer 1\n",
            b"benchboot-peer 2 port=5202\n",
            b"benchboot-peer x port=5202\n",
            b"benchboot-peer 1 port=\n",
            b"benchboot-peer 1 port=0\n",
            b"benchboot-peer 1 port=65536\n",
            b"benchboot-peer 1 port=5202 extra\n",
            b"benchboot-peer 1 5202\n",
            b"benchboot-peer  1 port=5202\n",
            b"iperf3 1 port=5202\n",
            b"benchboot-peer 1 port=5202\n\n",
            b"\xff\xfe benchboot-peer 1 port=5202\n",
        ] {
            assert_eq!(parse(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        let mut long = encode(5202).into_bytes();
        long.resize(MAX_LEN + 1, b' ');
        assert_eq!(parse(&long), None);
    }

    // Broadcast itself (255.255.255.255 reaching another host) cannot be asserted in
    // a unit test; these send announcements by unicast on loopback.
    #[test]
    fn the_listener_skips_junk_and_takes_the_sender_with_the_announced_port() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = rx.local_addr().unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.send_to(b"junk", to).unwrap();
        tx.send_to(b"benchboot-peer 2 port=1\n", to).unwrap();
        announce_once(&tx, to, 6000).unwrap();
        let got = wait(&rx, Duration::from_secs(5)).unwrap();
        assert_eq!(got, SocketAddr::from(([127, 0, 0, 1], 6000)));
    }

    #[test]
    fn silence_is_a_timeout_not_a_hang() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let t0 = Instant::now();
        let e = wait(&rx, Duration::from_millis(200)).unwrap_err();
        assert!(matches!(e, NetError::Timeout(_)), "{e}");
        assert!(t0.elapsed() >= Duration::from_millis(200));
        assert!(t0.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn the_broadcaster_repeats_until_stopped() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = rx.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let t = thread::spawn(move || {
            broadcast(7000, to, Duration::from_millis(20), &s, &|_| {}).unwrap()
        });
        for _ in 0..3 {
            let got = wait(&rx, Duration::from_secs(5)).unwrap();
            assert_eq!(got.port(), 7000);
            assert_eq!(got.ip(), IpAddr::V4(Ipv4Addr::LOCALHOST));
        }
        stop.store(true, Ordering::Relaxed);
        t.join().unwrap();
    }

    #[test]
    fn listen_binds_the_announcement_port() {
        // The real port: another process may hold it on this machine; then say so.
        let (tx, t0) = (UdpSocket::bind("127.0.0.1:0").unwrap(), Instant::now());
        let l = thread::spawn(|| listen(Ipv4Addr::LOCALHOST, Duration::from_secs(5)));
        let to = SocketAddr::from(([127, 0, 0, 1], PEER_ANNOUNCE_PORT));
        while !l.is_finished() && t0.elapsed() < Duration::from_secs(4) {
            let _ = announce_once(&tx, to, 5999);
            thread::sleep(Duration::from_millis(50));
        }
        match l.join().unwrap() {
            Ok(peer) => assert_eq!(peer, SocketAddr::from(([127, 0, 0, 1], 5999))),
            Err(NetError::Io { source, .. }) if source.kind() == io::ErrorKind::AddrInUse => {
                // Nothing on a CI machine holds it: there, that is a failure, not a skip.
                assert!(
                    std::env::var_os("CI").is_none(),
                    "CI: UDP port {PEER_ANNOUNCE_PORT} is in use: listen not exercised"
                );
                eprintln!("UDP port {PEER_ANNOUNCE_PORT} is in use here: listen not exercised");
            }
            Err(e) => panic!("{e}"),
        }
    }
}
