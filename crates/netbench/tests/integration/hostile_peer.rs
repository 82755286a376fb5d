//! `benchboot peer` against strangers (clients that are not our board), over loopback only: a hello
//! from another address, requests over the plan's and the link's bounds, 200 idle
//! connections and a silent session beside a real board, control characters in what a
//! client sends. The peer's timeouts are set short in [`peer::PeerOptions`].

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use benchboot_netbench::control::{encode, Greeting, Reply, Request, VERSION};
use benchboot_netbench::{driver, peer, udp};
use benchboot_plan::NetTests;
use benchboot_results::counters::NetDirection;

const LOCALHOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

type Lines = Arc<Mutex<Vec<String>>>;

/// A peer on 127.0.0.1 with `options`, its log lines collected.
fn start_peer(options: peer::PeerOptions) -> (SocketAddr, Lines) {
    let (addr, lines, _) = start_peer_with_registry(options);
    (addr, lines)
}

/// [`start_peer`], with the peer's registry: its live sessions and its accounting.
fn start_peer_with_registry(options: peer::PeerOptions) -> (SocketAddr, Lines, peer::Registry) {
    let l = TcpListener::bind((LOCALHOST, 0)).unwrap();
    let addr = l.local_addr().unwrap();
    let lines: Lines = Arc::default();
    let keep = lines.clone();
    let registry = peer::Registry::new();
    let r = registry.clone();
    thread::spawn(move || {
        peer::serve_with_registry(l, Path::new("/proc/stat"), &options, r, move |line| {
            keep.lock().unwrap().push(line.to_owned())
        })
    });
    (addr, lines, registry)
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
    c.write_all(&encode(&Greeting::Hello {
        version: VERSION,
        board: None,
    }))
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
        log.contains("test 2: UDP host-to-board at 18446744073709551615 bit/s in 1448-byte")
            && log.contains("is more than 1000000000 bit/s")
            && log.contains("ended after")
            && log.contains("goodbye from the board"),
        "{log}"
    );
}

#[test]
fn two_hundred_idle_connections_hold_nobody() {
    let (peer, lines) = start_peer(short());
    // From a stranger's address: the board's own address has its own share of places.
    let idle: Vec<TcpStream> = (0..200).map(|_| connect_from(STRANGER, peer)).collect();
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
        log.contains("no test request within 2000 ms: closed"),
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

/// A TCP connection to `peer` from the loopback address `from` (127.0.0.2, 127.0.0.3:
/// all of 127.0.0.0/8 is loopback on Linux), as a stranger on another host would make.
fn connect_from(from: Ipv4Addr, peer: SocketAddr) -> TcpStream {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    s.bind(&SocketAddr::from((from, 0)).into()).unwrap();
    s.connect(&peer.into()).unwrap();
    s.into()
}

/// A control session from `from`: the stream and its reader, or the peer's refusal.
fn hello_from(
    from: Ipv4Addr,
    peer: SocketAddr,
) -> Result<(TcpStream, BufReader<TcpStream>), String> {
    let mut c = connect_from(from, peer);
    c.write_all(&encode(&Greeting::Hello {
        version: VERSION,
        board: None,
    }))
    .unwrap();
    let mut r = BufReader::new(c.try_clone().unwrap());
    r.get_ref()
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    match reply(&mut r) {
        Reply::Hello { .. } => Ok((c, r)),
        Reply::Error { message } => Err(message),
        other => panic!("{other:?}"),
    }
}

/// Reads until the peer closes `r`'s connection or `limit` passes; true when it closed.
fn closed_within(r: &mut BufReader<TcpStream>, limit: Duration) -> bool {
    r.get_ref().set_read_timeout(Some(limit)).unwrap();
    let mut rest = Vec::new();
    match r.read_to_end(&mut rest) {
        Ok(_) => true,
        Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
    }
}

const STRANGER: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);
const OTHER_STRANGER: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 3);

/// Refused requests are not activity: a session that only sends requests the peer
/// refuses (a UDP load over the link's bound, answered with the reason) is closed at
/// its idle timeout all the same.
#[test]
fn refused_requests_do_not_keep_a_session_open() {
    let (peer, lines) = start_peer(short());
    let (mut c, mut r, _) = hello(peer);
    let opened = Instant::now();
    // Well inside the 2 s idle timeout, again and again, for three times as long.
    let mut refused = 0;
    let closed = loop {
        if c.write_all(&encode(&udp_request(2, u64::MAX, 1000)))
            .is_err()
        {
            break true;
        }
        let mut s = String::new();
        match r.read_line(&mut s) {
            Ok(0) | Err(_) => break true,
            Ok(_) => refused += 1,
        }
        if opened.elapsed() > Duration::from_secs(6) {
            break false;
        }
        thread::sleep(Duration::from_millis(300));
    };
    assert!(
        closed,
        "{refused} refused requests kept the session open for 6 s"
    );
    assert!(refused >= 2, "{refused}");
    let log = lines.lock().unwrap().join("\n");
    assert!(
        log.contains("no test request within 2000 ms: closed"),
        "{log}"
    );
}

/// A request sent one byte at a time never finishes a line: the session still ends at
/// its idle timeout, not once per byte.
#[test]
fn a_request_trickled_byte_by_byte_does_not_keep_a_session_open() {
    let (peer, _) = start_peer(short());
    let (mut c, mut r, _) = hello(peer);
    let trickle = thread::spawn(move || {
        let opened = Instant::now();
        while opened.elapsed() < Duration::from_secs(8) {
            if c.write_all(b" ").is_err() {
                return true;
            }
            thread::sleep(Duration::from_millis(300));
        }
        false
    });
    assert!(
        closed_within(&mut r, Duration::from_secs(8)),
        "the trickled session was still open after 8 s (idle timeout 2 s)"
    );
    assert!(trickle.join().unwrap(), "the peer read the trickle for 8 s");
}

/// The same for a connection's first line: one byte at a time, it is closed at the
/// greeting timeout.
#[test]
fn a_first_line_trickled_byte_by_byte_is_closed_at_the_greeting_timeout() {
    let (peer, _) = start_peer(short());
    let mut c = TcpStream::connect(peer).unwrap();
    let mut r = BufReader::new(c.try_clone().unwrap());
    let trickle = thread::spawn(move || {
        let opened = Instant::now();
        while opened.elapsed() < Duration::from_secs(6) {
            if c.write_all(b"{").is_err() {
                return true;
            }
            thread::sleep(Duration::from_millis(200));
        }
        false
    });
    assert!(
        closed_within(&mut r, Duration::from_secs(6)),
        "the trickled first line was still read after 6 s (greeting timeout 1 s)"
    );
    assert!(trickle.join().unwrap(), "the peer read the trickle for 6 s");
}

/// Two strangers' addresses, each holding as many sessions as the peer gives one
/// address, leave places for a board from a third.
#[test]
fn two_addresses_cannot_hold_every_place() {
    let (peer, _) = start_peer(short());
    let mut held = Vec::new();
    for from in [STRANGER, OTHER_STRANGER] {
        loop {
            match hello_from(from, peer) {
                Ok(s) => held.push(s),
                Err(m) => {
                    assert!(m.contains("the most from one address"), "{m}");
                    break;
                }
            }
            assert!(held.len() <= 16, "no cap per address");
        }
    }
    let board = driver::Session::connect(peer, Duration::ZERO, &fake_stat("third"));
    assert!(
        board.is_ok(),
        "{} sessions from two addresses: {:?}",
        held.len(),
        board.err()
    );
    board.unwrap().close();
}

/// 1,500 connections from one address that never say a word: the peer closes those
/// past that address's share at once, and a board on another address runs its tests.
#[test]
fn silent_connections_from_one_address_block_no_other() {
    let (peer, _) = start_peer(peer::PeerOptions {
        greeting_timeout: Duration::from_secs(30),
        ..short()
    });
    let flood: Vec<TcpStream> = (0..1500).map(|_| connect_from(STRANGER, peer)).collect();
    let t = NetTests {
        peer_port: peer.port(),
        peer_wait_ms: 0,
        duration_ms: 200,
        interval_ms: 100,
        omit_ms: 0,
        streams: vec![2],
        latency_samples: 10,
        http_bytes: 0,
        board_http_port: 0,
        udp_bitrate: 0,
        udp_datagram_bytes: 1448,
    };
    let (got, errors) = driver::run(peer, LOCALHOST, "static", &t, &fake_stat("flood"));
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(got.throughput.len(), 2);
    assert_eq!(got.latency.len(), 1);
    drop(flood);
}

/// Waits (up to a minute: a bound on a hang, not a timing target) until `done`.
fn eventually(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "never: {what}");
        thread::sleep(Duration::from_millis(20));
    }
}

const MIB: u64 = 1 << 20;

/// The RAM for HTTP objects is one budget for every session, and an object lives only
/// as long as its request: one larger than the whole budget is refused; a second that
/// does not fit beside the first waits until the first is freed (its wait for the `GET`
/// over, its session still open), so the peer never holds more than the budget.
#[test]
fn http_objects_share_one_budget_and_are_freed_after_their_wait() {
    let (peer, _, registry) = start_peer_with_registry(peer::PeerOptions {
        http_budget: 8 * MIB,
        http_wait: Duration::from_millis(500),
        ..short()
    });
    let (mut a, mut ar) = hello_from(STRANGER, peer).unwrap();
    let (mut b, mut br) = hello_from(STRANGER, peer).unwrap();
    let ask = |c: &mut TcpStream, test: u64, bytes: u64| {
        c.write_all(&encode(&Request::HttpFromPeer { test, bytes }))
            .unwrap()
    };
    ask(&mut b, 2, 16 * MIB);
    let e = error_of(&mut br);
    assert_eq!(
        e,
        "an HTTP object of 16 MiB is more than this peer holds at once (8 MiB for every \
         board together); lower network.tests.http_bytes"
    );
    ask(&mut a, 3, 6 * MIB);
    assert!(matches!(reply(&mut ar), Reply::HttpReady { test: 3, .. }));
    assert_eq!(registry.http_held(), 6 * MIB);
    ask(&mut b, 4, 6 * MIB);
    // Nobody fetches: the first object is freed after its wait and the second built.
    assert_eq!(error_of(&mut ar), "waiting for GET /blob: timed out");
    assert!(matches!(reply(&mut br), Reply::HttpReady { test: 4, .. }));
    assert_eq!(error_of(&mut br), "waiting for GET /blob: timed out");
    eventually("both objects freed", || registry.http_held() == 0);
    assert_eq!(
        registry.http_peak(),
        6 * MIB,
        "two objects were held at once"
    );
    // Both sessions are still open: the objects did not live as long as they.
    assert_eq!(registry.sessions(), 2);
    drop((a, ar, b, br));
}

/// The peer under abuse, all at once: two strangers' addresses hold every session
/// they may, with four large `HttpFromPeer` requests among them, and 1,000 connections
/// from them say nothing; a board from a third address runs its whole plan, and the
/// peer's own accounting shows it never held more RAM for HTTP objects than its budget
/// and holds none once the strangers are gone.
#[test]
fn a_board_completes_beside_hostile_sessions_a_flood_and_large_objects() {
    const BUDGET: u64 = 64 * MIB;
    const LARGE: u64 = 48 * MIB;
    let (peer, lines, registry) = start_peer_with_registry(peer::PeerOptions {
        http_budget: BUDGET,
        greeting_timeout: Duration::from_secs(30),
        ..peer::PeerOptions::default()
    });
    let mut hostile = Vec::new();
    for from in [STRANGER, OTHER_STRANGER] {
        for _ in 0..peer::MAX_SESSIONS_PER_IP {
            let (mut c, r) = hello_from(from, peer).unwrap();
            let test = hostile.len() as u64 + 2;
            c.write_all(&encode(&Request::HttpFromPeer { test, bytes: LARGE }))
                .unwrap();
            hostile.push((c, r));
        }
        let e = hello_from(from, peer).err().unwrap();
        assert!(e.contains("the most from one address"), "{e}");
    }
    // One large object is built; the other three wait for the budget.
    eventually("a large object held", || registry.http_held() == LARGE);
    let flood: Vec<TcpStream> = (0..1000)
        .map(|i| connect_from([STRANGER, OTHER_STRANGER][i % 2], peer))
        .collect();
    let t = NetTests {
        peer_port: peer.port(),
        peer_wait_ms: 5000,
        duration_ms: 300,
        interval_ms: 100,
        omit_ms: 100,
        streams: vec![1, 4],
        latency_samples: 20,
        http_bytes: MIB,
        board_http_port: 0,
        udp_bitrate: 10_000_000,
        udp_datagram_bytes: 1448,
    };
    let (got, errors) = driver::run(peer, LOCALHOST, "static", &t, &fake_stat("abuse"));
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(got.throughput.len(), 4);
    assert!(got.throughput.iter().all(|t| t.bytes > 0), "{got:?}");
    assert_eq!(got.latency[0].rtt_ns.len(), 20);
    assert_eq!(got.http.len(), 2);
    assert!(got.http.iter().all(|h| h.bytes == MIB), "{:?}", got.http);
    assert_eq!(got.udp.len(), 2);
    // The budget held: one large object and the board's beside it, never more.
    assert_eq!(registry.http_peak(), LARGE + MIB);
    assert!(registry.http_peak() <= BUDGET);
    drop((hostile, flood));
    eventually("every object freed, every session closed", || {
        registry.http_held() == 0 && registry.sessions() == 0
    });
    let log = lines.lock().unwrap().join("\n");
    assert!(
        log.contains("wait for their first line, the most from one address"),
        "{log}"
    );
}

/// The log tells each request in words, never as Rust's `Debug` of the message: a
/// refused request (`test 1: an HTTP object of ... bytes from the peer: invalid: ...`),
/// a line the peer cannot read (a direction spelled as the Rust variant), and a hello
/// whose board name holds control characters, escaped once in the reply and the log.
#[test]
fn the_log_tells_requests_in_words_and_a_bad_board_name_escaped_once() {
    let (peer, lines) = start_peer(short());
    let (mut c, mut r, _) = hello(peer);
    c.write_all(&encode(&Request::HttpFromPeer {
        test: 1,
        bytes: u64::MAX,
    }))
    .unwrap();
    let m = error_of(&mut r);
    assert!(m.starts_with("invalid: http bytes must be 1 ..= "), "{m}");
    c.write_all(
        b"{\"Throughput\":{\"test\":3,\"direction\":\"BoardToHost\",\"streams\":1,\
          \"omit_ms\":0,\"duration_ms\":100,\"interval_ms\":100}}\n",
    )
    .unwrap();
    assert!(closed_within(&mut r, Duration::from_secs(10)));
    let mut evil = TcpStream::connect(peer).unwrap();
    evil.write_all(b"{\"Hello\":{\"version\":1,\"board\":\"\\u001b[31mx\"}}\n")
        .unwrap();
    let mut er = BufReader::new(evil.try_clone().unwrap());
    er.get_ref()
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let refusal = error_of(&mut er);
    assert_eq!(
        refusal,
        "refused: `\\u{1b}[31mx` is not a board name: it holds a control or non-ASCII \
         character"
    );
    eventually("every line logged", || {
        let l = lines.lock().unwrap();
        l.iter().any(|l| l.contains("ended after"))
            && l.iter().any(|l| l.contains("is not a board name"))
    });
    let lines = lines.lock().unwrap();
    let line = |what: &str| {
        lines
            .iter()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("no `{what}` in {lines:#?}"))
            .clone()
    };
    assert!(
        line("test 1:").ends_with(&format!(
            ": test 1: an HTTP object of {} bytes from the peer: invalid: http bytes must \
             be 1 ..= 1073741824, not {}",
            u64::MAX,
            u64::MAX
        )),
        "{lines:#?}"
    );
    let ended = line("ended after");
    assert!(
        ended.contains(
            "(the value `BoardToHost` is not one this benchboot knows (it knows \
             `board-to-host` or `host-to-board`), line 1 column "
        ) && ended.ends_with("): run the benchboot that matches the image"),
        "{ended}"
    );
    assert!(
        line("is not a board name").ends_with(&format!(": {refusal}")),
        "{lines:#?}"
    );
    for l in lines.iter() {
        assert!(
            !l.contains("HttpFromPeer {") && !l.contains("unknown variant"),
            "{l}"
        );
        assert!(!l.contains("\\\\u"), "escaped twice: {l}");
    }
}
