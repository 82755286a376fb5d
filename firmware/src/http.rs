//! The read-only results server: HTTP/1.0 `GET` of one document, nothing else.
//!
//! No request changes anything on the board (design invariant). The request parsing and
//! response building are pure and unit-tested; [`serve`] is the accept loop.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

/// The path the results are served at.
pub const RESULTS_PATH: &str = "/results.json";

/// Builds the full response for one request head (`GET /results.json HTTP/1.1 ...`).
/// `GET` of [`RESULTS_PATH`] or `/` returns the body; other paths 404; other methods 405.
pub fn respond(request_head: &str, body: &str) -> String {
    let mut words = request_head.lines().next().unwrap_or("").split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let (status, content_type, body) = match (method, path) {
        ("GET", RESULTS_PATH | "/") => ("200 OK", "application/json", body),
        ("GET", _) => (
            "404 Not Found",
            "text/plain",
            "not found: try /results.json\n",
        ),
        _ => (
            "405 Method Not Allowed",
            "text/plain",
            "read-only: GET only\n",
        ),
    };
    format!(
        "HTTP/1.0 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Serves `body` to every client, one at a time, forever. A client that stalls is
/// dropped after 5 s. Errors on one connection never end the loop.
pub fn serve(listener: &TcpListener, body: &str) -> ! {
    loop {
        let Ok((mut stream, _)) = listener.accept() else {
            std::thread::sleep(Duration::from_millis(100));
            continue;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let _ = stream.set_write_timeout(Some(Duration::from_secs(30)));
        let mut head = Vec::new();
        let mut buf = [0u8; 512];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 8192 {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
        let response = respond(&String::from_utf8_lossy(&head), body);
        let _ = stream.write_all(response.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_results() {
        let r = respond("GET /results.json HTTP/1.1\r\nHost: x\r\n\r\n", "{\"a\":1}");
        assert!(r.starts_with("HTTP/1.0 200 OK\r\n"), "{r}");
        assert!(r.contains("Content-Length: 7\r\n"));
        assert!(r.ends_with("\r\n\r\n{\"a\":1}"));
    }

    #[test]
    fn other_path_is_404_and_post_is_405() {
        assert!(respond("GET /etc/passwd HTTP/1.0\r\n\r\n", "x").starts_with("HTTP/1.0 404"));
        assert!(respond("POST /results.json HTTP/1.0\r\n\r\n", "x").starts_with("HTTP/1.0 405"));
        assert!(respond("", "x").starts_with("HTTP/1.0 405"));
    }
}
