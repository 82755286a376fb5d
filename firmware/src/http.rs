//! The read-only results server: HTTP/1.0 `GET` of one document, nothing else.
//!
//! No request changes anything on the board (design invariant). The request parsing and
//! the response building are pure, in `benchboot_netbench::http::head` (unit-tested and
//! fuzzed there, the one parser the blob server uses too); this file is the edge:
//! [`read_head`] reads a head off a socket within its bounds, [`serve`] is the accept loop.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use benchboot_netbench::http::head::{parse_request, respond, Error};

/// How long a client may take to send its whole request head.
pub const HEAD_DEADLINE: Duration = Duration::from_secs(10);

/// Reads one request head from `stream`: until it parses or is refused, the stream ends,
/// a read fails or times out, or [`HEAD_DEADLINE`] passes. Never holds much more than
/// [`MAX_REQUEST`](benchboot_netbench::http::MAX_REQUEST) bytes.
fn read_head(stream: &mut impl Read) -> Vec<u8> {
    let started = Instant::now();
    let mut head = Vec::new();
    let mut buf = [0u8; 512];
    while parse_request(&head) == Err(Error::Incomplete) && started.elapsed() < HEAD_DEADLINE {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    head
}

/// Serves `body` on every listener forever: the first on this thread, each other on a
/// thread of its own (a board with several results links binds one socket per link).
pub fn serve_all(listeners: &'static [TcpListener], body: &'static str) -> ! {
    for l in listeners.iter().skip(1) {
        let spawned = std::thread::Builder::new()
            .name("http".into())
            .spawn(move || serve(l, body));
        if let Err(e) = spawned {
            crate::console::say(&format!("results server thread: {e}"));
        }
    }
    match listeners.first() {
        Some(l) => serve(l, body),
        None => crate::wait::idle_forever(),
    }
}

/// Serves `body` to every client, one at a time, forever. A client that stalls is
/// dropped after 5 s without a byte or [`HEAD_DEADLINE`] in all. Errors on one
/// connection never end the loop.
pub fn serve(listener: &TcpListener, body: &str) -> ! {
    loop {
        let Ok((mut stream, _)) = listener.accept() else {
            std::thread::sleep(Duration::from_millis(100));
            continue;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let _ = stream.set_write_timeout(Some(Duration::from_secs(30)));
        let head = read_head(&mut stream);
        let response = respond(&head, body);
        let _ = stream.write_all(response.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchboot_netbench::http::head::MAX_LINE;

    fn status(head: &[u8]) -> String {
        let r = respond(head, "{}");
        r.lines().next().unwrap_or("").to_owned()
    }

    #[test]
    fn read_head_stops_at_the_bound() {
        // An endless stream of `a`: refused after one line's worth, not read forever.
        struct Endless(usize);
        impl Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.0 += buf.len();
                buf.fill(b'a');
                Ok(buf.len())
            }
        }
        let mut s = Endless(0);
        let head = read_head(&mut s);
        assert!(head.len() <= MAX_LINE + 512 + 1, "{}", head.len());
        assert!(status(&head).contains("414"));
        // A stream that ends early: 400.
        let head = read_head(&mut &b"GET /results.json HTTP/1.1\r\n"[..]);
        assert_eq!(status(&head), "HTTP/1.0 400 Bad Request");
        let head = read_head(&mut &b"GET /results.json HTTP/1.1\r\n\r\nrest"[..]);
        assert_eq!(status(&head), "HTTP/1.0 200 OK");
    }
}
