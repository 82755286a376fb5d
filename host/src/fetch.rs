//! Fetching a results document from a board's read-only results server.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use benchboot_results::RunResults;

/// Environment variable that names the board (`HOST:PORT`) for `benchboot fetch`.
pub const BOARD_ENV: &str = "BENCHBOOT_BOARD";

/// Where `benchboot fetch` looks for a board when given no address, in order:
/// `$BENCHBOOT_BOARD`; the board's end of each gadget link (10.55.0.1, .5, .9: the
/// default subnet of the plan, one /30 per function, see crates/plan/src/network.rs);
/// the port `cargo xtask qemu` forwards on 127.0.0.1.
pub fn candidates(env: Option<&str>) -> Vec<String> {
    let mut v: Vec<String> = env.filter(|s| !s.is_empty()).map(str::to_owned).into_iter().collect();
    let g = benchboot_plan::GadgetPlan::default_for("");
    for i in 0..g.functions.len() {
        let (board, _) = g.link_addresses(i);
        v.push(format!(
            "{}.{}.{}.{}:{}",
            board[0],
            board[1],
            board[2],
            board[3],
            benchboot_plan::RESULTS_PORT
        ));
    }
    v.push(format!("127.0.0.1:{}", benchboot_plan::QEMU_RESULTS_FORWARD));
    v
}

/// True when this host reaches `board` over a link it has an address on: the source
/// address the kernel picks for it is in the board's /30 (a UDP `connect` sends nothing).
/// A gadget address is never probed through a default route, where a router or proxy
/// could answer in the board's name.
pub fn on_link(board: std::net::Ipv4Addr) -> bool {
    let Ok(sock) = std::net::UdpSocket::bind("0.0.0.0:0") else {
        return false;
    };
    if sock.connect((board, 9)).is_err() {
        return false;
    }
    match sock.local_addr() {
        Ok(std::net::SocketAddr::V4(local)) => same_slash_30(*local.ip(), board),
        _ => false,
    }
}

fn same_slash_30(a: std::net::Ipv4Addr, b: std::net::Ipv4Addr) -> bool {
    u32::from(a) & !3 == u32::from(b) & !3 && a != b
}

/// Finds a board: tries every [`candidates`] address (1 s connect timeout each), round
/// after round, until one accepts a TCP connection or `timeout` passes. Gadget
/// addresses are tried only when [`on_link`].
///
/// # Errors
/// No candidate answered in time; the message lists them and what to check.
pub fn discover(timeout: Duration) -> Result<String> {
    let list = candidates(std::env::var(BOARD_ENV).ok().as_deref());
    let until = std::time::Instant::now() + timeout;
    loop {
        for addr in &list {
            let Ok(sock) = addr.parse::<std::net::SocketAddr>() else {
                anyhow::bail!("{BOARD_ENV}={addr}: give HOST:PORT with an IP address, e.g. 10.55.0.1:8080");
            };
            let gadget = list_is_gadget(addr);
            if let (true, std::net::SocketAddr::V4(v4)) = (gadget, sock) {
                if !on_link(*v4.ip()) {
                    continue;
                }
            }
            if std::net::TcpStream::connect_timeout(&sock, Duration::from_secs(1)).is_ok() {
                return Ok(addr.clone());
            }
        }
        if std::time::Instant::now() >= until {
            anyhow::bail!(
                "no board answered at {} within {} s: is the cable in the board's USB data port \
                 and did the host take a DHCP lease on the new interface? Or name it: \
                 benchboot fetch --addr HOST:PORT",
                list.join(", "),
                timeout.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// True for the gadget links' board addresses (10.55.0.0/24 by default).
fn list_is_gadget(addr: &str) -> bool {
    let subnet = benchboot_plan::GadgetPlan::default_for("").subnet;
    addr.starts_with(&format!("{}.{}.{}.", subnet[0], subnet[1], subnet[2]))
}

/// Downloads `http://<addr>/results.json` and checks its schema version.
///
/// # Errors
/// Network errors (with the address), a non-200 answer, or a document this version of
/// benchboot cannot read (the message says to update benchboot).
pub fn fetch(addr: &str, timeout: Duration) -> Result<(RunResults, String)> {
    let url = format!("http://{addr}/results.json");
    let agent = ureq::AgentBuilder::new().timeout(timeout).build();
    let resp = agent.get(&url).call().with_context(|| {
        format!("GET {url}: is the board up and its ready line printed? is the address right?")
    })?;
    let text = resp
        .into_string()
        .with_context(|| format!("reading {url}"))?;
    let results = RunResults::from_json(&text).with_context(|| url.to_string())?;
    Ok((results, text))
}

/// Saves `text` to `path` atomically (temp file in the same folder + rename).
pub fn save(path: &Path, text: &str) -> Result<PathBuf> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let tmp = dir.join(format!(
        ".{}.tmp",
        path.file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default()
    ));
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))?;
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

    #[test]
    fn candidates_in_order() {
        let c = candidates(Some("192.168.7.2:8080"));
        assert_eq!(
            c,
            [
                "192.168.7.2:8080",
                "10.55.0.1:8080",
                "10.55.0.5:8080",
                "10.55.0.9:8080",
                "127.0.0.1:18080"
            ]
        );
        assert_eq!(candidates(None).len(), 4);
    }

    #[test]
    fn gadget_addresses_need_a_local_link() {
        use std::net::Ipv4Addr;
        assert!(same_slash_30(Ipv4Addr::new(10, 55, 0, 2), Ipv4Addr::new(10, 55, 0, 1)));
        assert!(!same_slash_30(Ipv4Addr::new(10, 55, 0, 6), Ipv4Addr::new(10, 55, 0, 1)));
        assert!(!same_slash_30(Ipv4Addr::new(192, 0, 2, 2), Ipv4Addr::new(10, 55, 0, 1)));
        assert!(list_is_gadget("10.55.0.5:8080") && !list_is_gadget("127.0.0.1:18080"));
    }

    #[test]
    fn save_is_atomic() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/r.json");
        save(&p, "{}").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{}");
        assert_eq!(
            std::fs::read_dir(dir.path().join("sub")).unwrap().count(),
            1
        );
    }
}
