//! `benchboot relay ADDRESS:PORT` (hidden): joins its stdin and stdout to one TCP
//! connection. QEMU's user network runs it for every guest connection to a guest forward
//! (`guestfwd=...-cmd:benchboot relay 127.0.0.1:PORT`, QEMU's inetd-like mode), so the
//! board in QEMU reaches `benchboot peer` on this machine's loopback with the user
//! network still `restrict=on`.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};

use anyhow::{Context, Result};

/// Copies stdin to the connection and the connection to stdout until the connection's
/// far end closes; stdin's end closes the connection's sending half.
///
/// # Errors
/// When `to` cannot be reached.
pub fn run(to: SocketAddr) -> Result<()> {
    let stream = TcpStream::connect(to).with_context(|| format!("relay: connecting to {to}"))?;
    let _ = stream.set_nodelay(true);
    let mut up = stream.try_clone().context("relay: cloning the socket")?;
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut up);
        let _ = up.shutdown(Shutdown::Write);
    });
    let mut down = stream;
    let mut out = std::io::stdout().lock();
    let mut buf = vec![0u8; 128 * 1024];
    loop {
        let n = match down.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if out.write_all(&buf[..n]).and_then(|()| out.flush()).is_err() {
            break;
        }
    }
    Ok(())
}
