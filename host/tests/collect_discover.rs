//! `collect` with no address finds the board ($BENCHBOOT_BOARD first). One test per
//! binary: it sets an environment variable, which no other thread may read meanwhile.

use std::io::{Read, Write};
use std::time::Duration;

#[test]
fn collect_finds_the_board_named_by_the_environment() {
    let mut r = benchboot_results::RunResults::new(
        "discovered-0001".into(),
        benchboot_plan::Plan::example(),
        benchboot_results::SystemInfo::default(),
    );
    r.complete = true;
    let body = r.to_json();
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for _ in 0..4 {
            let Ok((mut s, _)) = l.accept() else { return };
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let mut req = Vec::new();
            let mut buf = [0u8; 1024];
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => req.extend_from_slice(&buf[..n]),
                }
            }
            if !req.is_empty() {
                let _ = write!(
                    s,
                    "HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
            }
        }
    });
    std::env::set_var(benchboot::fetch::BOARD_ENV, &addr);
    let dir = tempfile::tempdir().unwrap();
    let c = benchboot::collect::collect(&benchboot::collect::Options {
        addr: None,
        from_card: None,
        store: Some(dir.path().to_owned()),
        timeout: Duration::from_secs(10),
        progress: false,
    })
    .unwrap();
    assert_eq!(c.results.run_id, "discovered-0001");
    assert_eq!(c.row.source, addr);
}
