//! `benchboot peer` against strangers (clients that are not our board), over loopback only: a hello
//! from another address, requests over the plan's and the link's bounds, 200 idle
//! connections and a silent session beside a real board, control characters in what a
//! client sends. The peer's timeouts are set short in [`peer::PeerOptions`].
#![forbid(unsafe_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use benchboot_netbench::control::{encode, Greeting, Reply, Request, VERSION};
use benchboot_netbench::{driver, peer, udp};
use benchboot_plan::NetTests;
use benchboot_results::network::NetDirection;

const LOCALHOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

type Lines = Arc<Mutex<Vec<String>>>;

/// A peer on 127.0.0.1 with `options`, its log lines collected.
fn start_peer(options: peer::PeerOptions) -> (SocketAddr, Lines) {
    let l = TcpListener::bind((LOCALHOST, 0)).unwrap();
    let addr = l.local_addr().unwrap();
    let lines: Lines = Arc::default();
    let keep = lines.clone();
    thread::spawn(move || {
        peer::serve_with_options(l, Path::new("/proc/stat"), &options, move |line| {
            keep.lock().unwrap().push(line.to_owned())
        })
    });
    (addr, lines)
}

fn short() -> peer::PeerOptions {
    peer::PeerOptions {
        greeting_timeout: Duration::from_millis(1000),
        idle_timeout: Duration::from_millis(2000),
        udp_hello_wait: Duration::from_millis(1000),
        ..Default::default()
    }
}

/// A fixed `/proc/stat` for the board side.
fn fake_stat(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("netbench-h-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("stat");
    std::fs::write(&path, "cpu  4705 356 584 3699 23 23 0 0 0 0\n").unwrap();
    path
}

/// A raw client's control session: the stream, its reader and the session id.
fn hello(peer: SocketAddr) -> (TcpStream, BufReader<TcpStream>, u64) {
    let mut c = TcpStream::connect(peer).unwrap();
    c.write_all(&encode(&Greeting::Hello { version: VERSION }))
        .unwrap();
    let mut r = BufReader::new(c.try_clone().unwrap());
    r.get_ref()
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    match reply(&mut r) {
        Reply::Hello { session, .. } => (c, r, session),
        other => panic!("{other:?}"),
    }
}

fn reply(r: &mut impl BufRead) -> Reply {
    let mut s = String::new();
    r.read_line(&mut s).unwrap();
    serde_json::from_str(&s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

fn error_of(r: &mut impl BufRead) -> String {
    match reply(r) {
        Reply::Error { message } => message,
        other => panic!("expected an error, got {other:?}"),
    }
}

fn udp_request(test: u64, bitrate: u64, duration_ms: u64) -> Request {
    Request::Udp {
        test,
        direction: NetDirection::HostToBoard,
        bitrate,
        datagram_bytes: 1448,
        omit_ms: 0,
        duration_ms,
    }
}

#[test]
fn udp_goes_only_to_the_control_connections_address() {
    let (peer, lines) = start_peer(short());
    let (mut c, mut r, session) = hello(peer);
    // The third address: a socket on 127.0.0.2 says the hello of 127.0.0.1's session.
    let third = UdpSocket::bind("127.0.0.2:0").unwrap();
    let third_addr = third.local_addr().unwrap();
    c.write_all(&encode(&udp_request(2, 10_000_000, 500)))
        .unwrap();
    let (done_tx, done) = mpsc::channel::<()>();
    let sender = third.try_clone().unwrap();
    let hellos = thread::spawn(move || {
        while done.try_recv().is_err() {
            sender.send_to(&udp::hello(session, 2), peer).unwrap();
            thread::sleep(Duration::from_millis(50));
        }
    });
    let message = error_of(&mut r);
    done_tx.send(()).unwrap();
    hellos.join().unwrap();
    assert!(
        message.contains("no hello from the board (127.0.0.1)")
            && message.contains("hello(s) from other addresses ignored"),
        "{message}"
    );
    third
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let got = third.recv_from(&mut [0u8; 2048]);
    assert!(
        got.is_err(),
        "a datagram reached the third address: {got:?}"
    );
    let log = lines.lock().unwrap().join("\n");
    assert!(
        log.contains(&format!(
            "ignored a UDP hello from {third_addr}: not the address"
        )) && log.contains("control connection (127.0.0.1)"),
        "{log}"
    );
}

#[test]
fn runs_over_the_plan_and_link_bounds_are_refused_with_the_reason() {
    let (peer, lines) = start_peer(short());
    let (mut c, mut r, _) = hello(peer);
    let hour = 3_600_000;
    c.write_all(&encode(&udp_request(2, u64::MAX, hour)))
        .unwrap();
    let m = error_of(&mut r);
    assert_eq!(
        m,
        "invalid: refused: UDP at 18446744073709551615 bit/s is more than 1000000000 bit/s \
         (the fastest link of any board, Gigabit Ethernet on the Pi 4 B and Banana Pi M1); \
         lower network.tests.udp_bitrate"
    );
    c.write_all(&encode(&udp_request(3, 10_000_000, hour)))
        .unwrap();
    let m = error_of(&mut r);
    assert_eq!(
        m,
        "invalid: refused: a run of 3600000 ms is longer than the plan allows (600000 ms, \
         network.tests.duration_ms)"
    );
    c.write_all(&encode(&Request::Throughput {
        test: 4,
        direction: NetDirection::HostToBoard,
        streams: 1,
        omit_ms: 0,
        duration_ms: hour,
        interval_ms: 1000,
    }))
    .unwrap();
    assert!(error_of(&mut r).contains("a run of 3600000 ms is longer"));
    // The session goes on: the refusals did not break it.
    c.write_all(&encode(&Request::Bye)).unwrap();
    let mut rest = Vec::new();
    let _ = r.read_to_end(&mut rest);
    let log = lines.lock().unwrap().join("\n");
    assert!(
        log.contains("bitrate: 18446744073709551615")
            && log.contains("is more than 1000000000 bit/s")
            && log.contains("ended after")
            && log.contains("goodbye from the board"),
        "{log}"
    );
}

#[test]
fn two_hundred_idle_connections_hold_nobody() {
    let (peer, lines) = start_peer(short());
    let idle: Vec<TcpStream> = (0..200)
        .map(|_| TcpStream::connect(peer).unwrap())
        .collect();
    // A session that says hello and then nothing.
    let (_silent, mut silent_r, _) = hello(peer);
    let opened = Instant::now();
    // A real board's session meanwhile, with the board's own driver.
    let t = NetTests {
        peer_port: peer.port(),
        peer_wait_ms: 5000,
        duration_ms: 300,
        interval_ms: 100,
        omit_ms: 100,
        streams: vec![1],
        latency_samples: 20,
        http_bytes: 1 << 20,
        board_http_port: 0,
        udp_bitrate: 10_000_000,
        udp_datagram_bytes: 1448,
    };
    let (tx, rx) = mpsc::channel();
    let stat = fake_stat("idle");
    thread::spawn(move || {
        let _ = tx.send(driver::run(peer, LOCALHOST, "static", &t, &stat));
    });
    let (got, errors) = rx.recv_timeout(Duration::from_secs(120)).unwrap();
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(got.throughput.len(), 2);
    assert!(got.throughput.iter().all(|t| t.bytes > 0), "{got:?}");
    assert_eq!(got.latency.len(), 1);
    assert_eq!(got.latency[0].rtt_ns.len(), 20);
    assert_eq!(got.http.len(), 2);
    assert!(
        got.http.iter().all(|h| h.bytes == 1 << 20),
        "{:?}",
        got.http
    );
    assert_eq!(got.udp.len(), 2);
    for u in &got.udp {
        assert_eq!(u.target_bitrate, 10_000_000);
        assert!(u.received > 0, "{u:?}");
    }
    // The idle ones were closed by the peer: each read ends (0 bytes or a reset), none
    // times out.
    for mut c in idle {
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        match c.read(&mut [0u8; 16]) {
            Ok(0) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            other => panic!("an idle connection stayed open: {other:?}"),
        }
    }
    // So was the silent session, after the idle timeout.
    let mut rest = Vec::new();
    let _ = silent_r.read_to_end(&mut rest);
    assert!(opened.elapsed() >= Duration::from_millis(2000));
    let log = lines.lock().unwrap().join("\n");
    assert!(
        log.contains("no request within 2000 ms: closed"),
        "the silent session's end is logged: {log}"
    );
    assert!(
        log.contains("sent") && log.contains("datagrams of 1448 bytes to 127.0.0.1:"),
        "{log}"
    );
}

#[test]
fn sessions_from_one_address_are_capped_and_others_still_served() {
    let (peer, _) = start_peer(peer::PeerOptions {
        max_sessions_per_ip: 2,
        ..short()
    });
    let first = hello(peer);
    let second = hello(peer);
    let e = driver::Session::connect(peer, Duration::ZERO, &fake_stat("cap")).unwrap_err();
    assert!(
        e.to_string()
            .contains("busy: 2 sessions from 127.0.0.1 already, the most from one address"),
        "{e}"
    );
    drop((first, second));
    // Once they are gone, the next board is served.
    driver::Session::connect(peer, Duration::from_secs(5), &fake_stat("cap2"))
        .unwrap()
        .close();
}

#[test]
fn what_a_client_sends_reaches_the_log_escaped() {
    let (peer, lines) = start_peer(short());
    let (mut c, mut r, _) = hello(peer);
    c.write_all(&encode(&Request::HttpFromBoard {
        test: 2,
        url: "http://10.9.9.9/\u{1b}[2J\u{1b}[31mx".into(),
    }))
    .unwrap();
    let m = error_of(&mut r);
    assert!(
        m.contains("the path holds spaces or control characters"),
        "{m}"
    );
    drop((c, r));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !lines
        .lock()
        .unwrap()
        .iter()
        .any(|l| l.contains("the path holds"))
    {
        assert!(Instant::now() < deadline, "the refusal is never logged");
        thread::sleep(Duration::from_millis(20));
    }
    let lines = lines.lock().unwrap();
    let refused = lines.iter().find(|l| l.contains("the path holds")).unwrap();
    assert!(
        refused.contains("url `http://10.9.9.9/\\u{1b}[2J\\u{1b}[31mx`"),
        "{refused}"
    );
    for l in lines.iter() {
        assert!(!l.chars().any(char::is_control), "{l:?}");
    }
}
