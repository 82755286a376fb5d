//! The one fake board the host tests fetch from: an HTTP server on loopback that serves
//! a results document as `/results.json`, as PID 1 does (firmware/src/http.rs).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

/// Serves `body` as `GET /results.json` on 127.0.0.1 (a free port) until the test binary
/// ends, and returns the address (`127.0.0.1:PORT`).
///
/// A connection that sends nothing (a TCP probe: connect and close) gets nothing; any
/// other request gets `404`. Each connection is answered on its own thread, so a probe
/// that stays open does not hold up the next request.
pub fn serve_results(body: String) -> String {
    serve_results_on(TcpListener::bind("127.0.0.1:0").unwrap(), body)
}

/// [`serve_results`] on a listener the test bound itself (a given port).
pub fn serve_results_on(listener: TcpListener, body: String) -> String {
    let addr = listener.local_addr().unwrap().to_string();
    let body: std::sync::Arc<str> = body.into();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(s) = stream else { continue };
            let body = body.clone();
            std::thread::spawn(move || answer(s, &body));
        }
    });
    addr
}

fn answer(mut s: TcpStream, body: &str) {
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    if head.is_empty() {
        return;
    }
    let _ = if head.starts_with(b"GET /results.json ") {
        write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        )
    } else {
        write!(
            s,
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
    };
}
