//! TCP round trips: one byte out, the same byte back, TCP_NODELAY on both ends so
//! Nagle's algorithm does not hold the byte back.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Instant;

/// Sends one byte and waits for it to come back, `samples` times. Every round-trip
/// time, ns, in the order measured. The socket's read timeout bounds each wait.
pub fn ping(s: &mut TcpStream, samples: u32) -> io::Result<Vec<u64>> {
    s.set_nodelay(true)?;
    let mut rtt = Vec::with_capacity(samples as usize);
    let mut back = [0u8; 1];
    for i in 0..samples {
        let out = [(i % 251) as u8];
        let t0 = Instant::now();
        s.write_all(&out)?;
        s.read_exact(&mut back)?;
        let ns = t0.elapsed().as_nanos() as u64;
        if back != out {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("round trip {i}: sent {}, got {} back", out[0], back[0]),
            ));
        }
        rtt.push(ns);
    }
    Ok(rtt)
}

/// Writes back every byte read until the other end closes; bytes echoed.
pub fn echo(mut r: impl Read, w: &mut TcpStream) -> io::Result<u64> {
    w.set_nodelay(true)?;
    let mut buf = [0u8; 64];
    let mut total = 0u64;
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        w.write_all(&buf[..n])?;
        total += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Shutdown, TcpListener};

    #[test]
    fn ping_pong_over_loopback() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        let t = std::thread::spawn(move || {
            let mut w = b.try_clone().unwrap();
            echo(b, &mut w)
        });
        let rtt = ping(&mut a, 50).unwrap();
        assert_eq!(rtt.len(), 50);
        assert!(rtt.iter().all(|&ns| ns > 0));
        a.shutdown(Shutdown::Write).unwrap();
        assert_eq!(t.join().unwrap().unwrap(), 50);
    }
}
