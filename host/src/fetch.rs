//! Fetching a results document from a board's read-only results server.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use benchboot_results::RunResults;

pub use crate::discover::{discover, BOARD_ENV};

/// Downloads `http://<addr>/results.json` and checks its schema version.
///
/// # Errors
/// Network errors (with the address), a non-200 answer, or a document this version of
/// benchboot cannot read (the message says to update benchboot).
pub fn fetch(addr: &str, timeout: Duration) -> Result<(RunResults, String)> {
    let url = format!("http://{addr}/results.json");
    let sock = crate::discover::parse_addr(addr)?;
    // The address is resolved here (IPv6 link-local zones included, which URLs cannot
    // carry): ureq connects to it whatever the URL's host says.
    let agent = ureq::AgentBuilder::new()
        .timeout(timeout)
        .resolver(move |_: &str| Ok(vec![sock]))
        .build();
    // A zone (fe80::1%usb0) cannot go in a URL: such addresses are named `board` there.
    let host = match sock {
        std::net::SocketAddr::V6(v6) if v6.scope_id() != 0 => format!("board:{}", sock.port()),
        _ => sock.to_string(),
    };
    let resp = agent
        .get(&format!("http://{host}/results.json"))
        .call()
        .with_context(|| {
            format!("GET {url}: is the board up and its ready line printed? is the address right?")
        })?;
    let text = resp
        .into_string()
        .with_context(|| format!("reading {url}"))?;
    let results = RunResults::from_json(&text).with_context(|| url.to_string())?;
    Ok((results, text))
}

/// Saves `text` to `path` atomically ([`crate::atomic_file::write`]); returns `path`.
pub fn save(path: &Path, text: &str) -> Result<PathBuf> {
    crate::atomic_file::write(path, text)?;
    Ok(path.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// Serves one canned HTTP response on loopback.
    fn serve_once(body: String) -> String {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            let _ = write!(
                s,
                "HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
        });
        addr
    }

    #[test]
    fn wrong_major_version_is_refused() {
        let addr = serve_once("{\"schema_version\": {\"major\": 9, \"minor\": 0}}".into());
        let err = format!("{:#}", fetch(&addr, Duration::from_secs(5)).unwrap_err());
        assert!(err.contains("schema version 9"), "{err}");
        assert!(err.contains("update benchboot"), "{err}");
    }

    #[test]
    fn nothing_listening_names_the_address() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let err = format!("{:#}", fetch(&addr, Duration::from_secs(2)).unwrap_err());
        assert!(err.contains(&addr), "{err}");
    }
}
