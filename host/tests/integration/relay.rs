//! `benchboot relay`: what QEMU's guest forward runs for each guest connection. Bytes
//! pass both ways, and each side's close reaches the other.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn the_relay_joins_stdin_and_stdout_to_the_peer_and_passes_each_close_on() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = listener.local_addr().unwrap();
    // The far end: reads all the relay sends until its close, answers with those bytes
    // reversed and 1 MiB more, then closes.
    let far = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).unwrap();
        got.reverse();
        s.write_all(&got).unwrap();
        s.write_all(&vec![7u8; 1 << 20]).unwrap();
        got
    });
    let mut relay = Command::new(env!("CARGO_BIN_EXE_benchboot"))
        .args(["relay", &at.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = relay.stdin.take().unwrap();
    stdin.write_all(b"benchboot").unwrap();
    drop(stdin);
    let mut out = Vec::new();
    relay.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    assert_eq!(far.join().unwrap(), b"toobhcneb");
    assert_eq!(&out[..9], b"toobhcneb");
    assert_eq!(out.len(), 9 + (1 << 20));
    let t0 = Instant::now();
    while relay.try_wait().unwrap().is_none() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = relay
        .try_wait()
        .unwrap()
        .expect("the relay ended with both closes");
    assert!(status.success(), "{status}");
}

#[test]
fn a_relay_to_nobody_says_where_it_tried() {
    let free = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_benchboot"))
        .args(["relay", &free.to_string()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("relay: connecting to {free}")),
        "{err}"
    );
}
