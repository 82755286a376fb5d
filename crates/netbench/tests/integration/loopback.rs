//! The driver against the peer over loopback (127.0.0.1, ephemeral ports, short runs),
//! and against peers that misbehave. No speed or timing assertions: only that every
//! test completes with sane shapes, and that failures are error strings, not panics or
//! hangs.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use benchboot_netbench::control::{encode, Reply, MAX_LINE};
use benchboot_netbench::interval::Timing;
use benchboot_netbench::{driver, peer, udp};
use benchboot_plan::NetTests;
use benchboot_results::counters::NetDirection;
use benchboot_results::network::{NetworkResults, UdpRun};

const LOCALHOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// A fixed `/proc/stat` for the board side: every CPU delta reads 0.
fn fake_stat(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("netbench-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("stat");
    std::fs::write(
        &path,
        "cpu  4705 356 584 3699 23 23 0 0 0 0\ncpu0 4705 356 584 3699 23 23 0 0 0 0\n",
    )
    .unwrap();
    path
}

fn start_peer() -> SocketAddr {
    let l = TcpListener::bind((LOCALHOST, 0)).unwrap();
    let addr = l.local_addr().unwrap();
    thread::spawn(move || peer::serve(l, Path::new("/proc/stat")));
    addr
}

fn tests(port: u16) -> NetTests {
    NetTests {
        peer_port: port,
        peer_wait_ms: 5000,
        duration_ms: 300,
        interval_ms: 100,
        omit_ms: 100,
        streams: vec![1, 3],
        latency_samples: 20,
        http_bytes: 1 << 20,
        board_http_port: 0,
        udp_bitrate: 0,
        udp_datagram_bytes: benchboot_plan::net_tests::DEFAULT_UDP_DATAGRAM,
    }
}

/// Runs the driver on its own thread; a hang fails the test after `limit`.
fn run_bounded(
    peer: SocketAddr,
    t: NetTests,
    stat: PathBuf,
    limit: Duration,
) -> (NetworkResults, Vec<String>) {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(driver::run(peer, LOCALHOST, "static", &t, &stat));
    });
    rx.recv_timeout(limit)
        .expect("the driver must end (bounded waits), not hang")
}

#[test]
fn driver_against_peer_completes_every_test() {
    let peer = start_peer();
    let stat = fake_stat("full");
    let t = tests(peer.port());
    let (r, errors) = run_bounded(peer, t.clone(), stat.clone(), Duration::from_secs(120));
    assert_eq!(errors, Vec::<String>::new());

    let shape: Vec<(NetDirection, u32)> = r
        .throughput
        .iter()
        .map(|x| (x.direction, x.streams))
        .collect();
    use NetDirection::*;
    assert_eq!(
        shape,
        [
            (BoardToHost, 1),
            (HostToBoard, 1),
            (BoardToHost, 3),
            (HostToBoard, 3)
        ]
    );
    for run in &r.throughput {
        assert_eq!(run.link, "static");
        assert!(run.bytes > 0, "{run:?}");
        assert_eq!(run.omit_ns, 100_000_000);
        // 300 ms in 100 ms intervals.
        assert_eq!(run.intervals.len(), 3);
        assert_eq!(
            run.intervals.iter().map(|i| i.bytes).sum::<u64>(),
            run.bytes
        );
        assert_eq!(run.intervals[0].start_ns, 0);
        assert_eq!(run.intervals[2].end_ns, run.nanos);
        for w in run.intervals.windows(2) {
            assert_eq!(w[0].end_ns, w[1].start_ns);
        }
        // The board read the fake /proc/stat: nothing moved.
        assert_eq!(run.board_cpu.total(), 0);
    }

    assert_eq!(r.latency.len(), 1);
    assert_eq!(r.latency[0].rtt_ns.len(), 20);
    assert!(r.latency[0].rtt_ns.iter().all(|&ns| ns > 0));

    let http: Vec<(NetDirection, u64)> = r.http.iter().map(|h| (h.direction, h.bytes)).collect();
    assert_eq!(http, [(HostToBoard, 1 << 20), (BoardToHost, 1 << 20)]);
    assert!(r.http.iter().all(|h| h.nanos > 0));

    // The peer serves forever: a second board session works as the first did.
    let mut t2 = tests(peer.port());
    t2.streams = vec![2];
    t2.http_bytes = 0;
    let (r2, errors) = run_bounded(peer, t2, stat, Duration::from_secs(120));
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(r2.throughput.len(), 2);
    assert!(r2.http.is_empty());
    assert_eq!(r2.latency[0].rtt_ns.len(), 20);
}

/// Both ends read every stream's TCP_INFO at each boundary (Linux): each interval has
/// the board's and the host's, with a window and an srtt; the run's retransmits are the
/// sum of its intervals'.
#[cfg(target_os = "linux")]
#[test]
fn tcp_info_is_read_on_both_ends_every_interval() {
    let peer = start_peer();
    let mut t = tests(peer.port());
    t.streams = vec![2];
    t.latency_samples = 1;
    t.http_bytes = 0;
    let (r, errors) = run_bounded(peer, t, fake_stat("tcpinfo"), Duration::from_secs(120));
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(r.throughput.len(), 2);
    for run in &r.throughput {
        assert_eq!(run.intervals.len(), 3);
        for i in &run.intervals {
            for side in [i.board_tcp, i.host_tcp] {
                let s = side.unwrap_or_else(|| panic!("TCP_INFO on both ends: {i:?}"));
                assert_eq!(s.streams, 2, "{s:?}");
                assert!(s.cwnd_bytes > 0, "{s:?}");
                assert!(s.srtt_us > 0 && s.srtt_max_us >= s.srtt_us, "{s:?}");
            }
        }
        let sender = run.sender_tcp().expect("the sender's totals");
        let summed: u64 = run
            .intervals
            .iter()
            .map(|i| i.sender_tcp(run.direction).unwrap().retransmits)
            .sum();
        assert_eq!(sender.retransmits, summed);
        assert!(sender.srtt_us > 0 && sender.srtt_max_us >= sender.srtt_us);
        assert!(run.board_tcp.is_some() && run.host_tcp.is_some());
    }
}

#[test]
fn the_observer_brackets_every_test_that_runs() {
    use benchboot_results::counters::NetTest;
    use driver::Stage;
    let peer = start_peer();
    let stat = fake_stat("observed");
    let mut t = tests(peer.port());
    t.streams = vec![1];
    t.latency_samples = 3;
    t.http_bytes = 4096;
    t.udp_bitrate = 10_000_000;
    let mut seen = Vec::new();
    let (r, errors) = driver::run_observed(
        peer,
        LOCALHOST,
        "static",
        &t,
        &[NetDirection::HostToBoard],
        &stat,
        &mut |stage, test| seen.push((stage, *test)),
    );
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(r.throughput.len(), 1);
    use NetDirection::*;
    let order = [
        NetTest::Tcp {
            direction: HostToBoard,
            streams: 1,
        },
        NetTest::Latency,
        NetTest::Http {
            direction: HostToBoard,
        },
        NetTest::Http {
            direction: BoardToHost,
        },
        NetTest::Udp {
            direction: HostToBoard,
        },
    ];
    let want: Vec<(Stage, NetTest)> = order
        .iter()
        .flat_map(|&x| [(Stage::Before, x), (Stage::After, x)])
        .collect();
    assert_eq!(seen, want);
    assert_eq!(r.udp.len(), 1);
    assert_eq!(r.udp[0].direction, HostToBoard);
    assert_eq!(r.udp[0].target_bitrate, 10_000_000);
    // No peer: nothing runs, nothing is observed.
    let dead = TcpListener::bind((LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap();
    let mut t = tests(dead.port());
    t.peer_wait_ms = 200;
    let mut seen = 0;
    let (_, errors) = driver::run_observed(
        dead,
        LOCALHOST,
        "static",
        &t,
        &[HostToBoard],
        &stat,
        &mut |_, _| seen += 1,
    );
    assert!(!errors.is_empty());
    assert_eq!(seen, 0);
}

#[test]
fn no_peer_is_one_error() {
    // A port nobody listens on (bound, then closed).
    let port = TcpListener::bind((LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut t = tests(port);
    t.peer_wait_ms = 300;
    let (r, errors) = run_bounded(
        (LOCALHOST, port).into(),
        t,
        fake_stat("nopeer"),
        Duration::from_secs(60),
    );
    assert_eq!(r, NetworkResults::default());
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("no peer at"), "{errors:?}");
}

/// Reads one line of a fake peer's connection.
fn line(r: &mut impl BufRead) -> String {
    let mut s = String::new();
    r.read_line(&mut s).unwrap();
    s
}

#[test]
fn a_peer_that_closes_mid_test_is_an_error_not_a_hang() {
    let l = TcpListener::bind((LOCALHOST, 0)).unwrap();
    let addr = l.local_addr().unwrap();
    let fake = thread::spawn(move || {
        let (c, _) = l.accept().unwrap();
        let mut r = BufReader::new(c.try_clone().unwrap());
        let mut w = c;
        assert!(line(&mut r).contains("Hello"));
        w.write_all(&encode(&Reply::Hello {
            version: benchboot_netbench::control::VERSION,
            session: 7,
        }))
        .unwrap();
        let req = line(&mut r);
        assert!(req.contains("Throughput"), "{req}");
        let (d, _) = l.accept().unwrap();
        let mut d = BufReader::new(d);
        assert!(line(&mut d).contains("\"session\":7"));
        w.write_all(&encode(&Reply::Started { test: 2 })).unwrap();
        // Take data for a moment, then vanish: control, data and listener.
        let until = Instant::now() + Duration::from_millis(150);
        let mut buf = vec![0u8; 1 << 16];
        while Instant::now() < until {
            if d.read(&mut buf).unwrap_or(0) == 0 {
                break;
            }
        }
    });
    let mut t = tests(addr.port());
    t.peer_wait_ms = 500;
    t.duration_ms = 2000;
    t.streams = vec![1];
    let (r, errors) = run_bounded(addr, t, fake_stat("closes"), Duration::from_secs(90));
    fake.join().unwrap();
    assert!(r.throughput.is_empty() && r.latency.is_empty() && r.http.is_empty());
    assert!(
        errors[0].starts_with("network: throughput board-to-host 1 stream(s): "),
        "{errors:?}"
    );
    // The rest were tried (or skipped), each with its own error.
    assert!(errors.iter().any(|e| e.contains("gone")), "{errors:?}");
    assert!(
        errors.iter().any(|e| e.contains("latency: skipped")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("http board-to-host: skipped")),
        "{errors:?}"
    );
}

#[test]
fn an_endless_line_from_the_peer_is_refused() {
    let l = TcpListener::bind((LOCALHOST, 0)).unwrap();
    let addr = l.local_addr().unwrap();
    thread::spawn(move || {
        let (c, _) = l.accept().unwrap();
        let mut r = BufReader::new(c.try_clone().unwrap());
        let mut w = c;
        let _ = line(&mut r);
        let junk = vec![b'x'; 64 * 1024];
        for _ in 0..(MAX_LINE / junk.len() + 2) {
            if w.write_all(&junk).is_err() {
                break;
            }
        }
        drop(l);
    });
    let mut t = tests(addr.port());
    t.peer_wait_ms = 300;
    let (_, errors) = run_bounded(addr, t, fake_stat("endless"), Duration::from_secs(60));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("longer than"), "{errors:?}");
}

#[test]
fn a_second_board_is_served_beside_the_first() {
    let peer = start_peer();
    let first = driver::Session::connect(peer, Duration::from_secs(5), &fake_stat("busy")).unwrap();
    // No waiting: sessions run side by side: a second board is not held up by the first.
    let second = driver::Session::connect(peer, Duration::ZERO, &fake_stat("busy2")).unwrap();
    first.close();
    second.close();
}

#[test]
fn the_peer_outlives_boards_that_vanish() {
    use benchboot_netbench::control::{Greeting, Request, VERSION};
    let peer = start_peer();
    // A fake board's session, retried while the peer is still busy with the last one.
    let hello = || -> (std::net::TcpStream, u64) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let mut c = std::net::TcpStream::connect(peer).unwrap();
            c.write_all(&encode(&Greeting::Hello {
                version: VERSION,
                board: None,
            }))
            .unwrap();
            let mut r = BufReader::new(c.try_clone().unwrap());
            match serde_json::from_str::<Reply>(&line(&mut r)).unwrap() {
                Reply::Hello { session, .. } => return (c, session),
                Reply::Error { message } if message.starts_with("busy") => {
                    assert!(Instant::now() < deadline, "the peer stays busy");
                    thread::sleep(Duration::from_millis(100));
                }
                other => panic!("{other:?}"),
            }
        }
    };
    let throughput = |direction| Request::Throughput {
        test: 1,
        direction,
        streams: 1,
        omit_ms: 0,
        duration_ms: 10_000,
        interval_ms: 1000,
    };
    // Asks for a run, opens no data connection, hangs up.
    let (mut c, _) = hello();
    c.write_all(&encode(&throughput(NetDirection::BoardToHost)))
        .unwrap();
    drop(c);
    // Starts a run in each direction and hangs up in the middle.
    for direction in [NetDirection::BoardToHost, NetDirection::HostToBoard] {
        let (mut c, session) = hello();
        c.write_all(&encode(&throughput(direction))).unwrap();
        let mut d = std::net::TcpStream::connect(peer).unwrap();
        d.write_all(&encode(&Greeting::Data {
            session,
            test: 1,
            stream: 0,
        }))
        .unwrap();
        let mut r = BufReader::new(c.try_clone().unwrap());
        assert!(line(&mut r).contains("Started"));
        d.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let _ = d.write_all(&[1u8; 4096]);
        let _ = d.read(&mut [0u8; 4096]);
        drop((c, d, r));
    }
    // A real board is served as if nothing happened (after at most the peer's waits).
    let mut t = tests(peer.port());
    t.streams = vec![1];
    t.latency_samples = 5;
    t.http_bytes = 0;
    t.peer_wait_ms = 60_000;
    let (r, errors) = run_bounded(peer, t, fake_stat("vanish"), Duration::from_secs(120));
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(r.throughput.len(), 2);
}

/// UDP at 50 Mbit/s for 300 ms after a 100 ms warm-up.
const UDP_RATE: u64 = 50_000_000;
const UDP_LEN: u32 = 1448;

fn udp_timing() -> Timing {
    Timing::from_ms(100, 100, 300)
}

fn check_udp_run(run: &UdpRun, direction: NetDirection) {
    assert_eq!(run.direction, direction);
    assert_eq!(run.link, "static");
    assert_eq!(
        (run.target_bitrate, run.datagram_bytes),
        (UDP_RATE, UDP_LEN)
    );
    assert!(run.received > 0, "{run:?}");
    // The receiver knows of highest + 1 = received + lost datagrams: no more than sent.
    assert!(run.received + run.lost <= run.sent, "{run:?}");
    assert!(run.out_of_order <= run.received, "{run:?}");
    assert_eq!(run.bytes, run.received * u64::from(UDP_LEN));
    assert_eq!(run.nanos, 300_000_000);
    // Pacing: the sender offered the load it was asked for (loose: a loaded machine).
    let offered = (run.sent * u64::from(UDP_LEN) * 8) as f64 / 0.3;
    let ratio = offered / UDP_RATE as f64;
    assert!(
        (0.75..=1.25).contains(&ratio),
        "offered {offered} bit/s: {run:?}"
    );
    // Loopback loses little at this load; the receiver got most of it.
    assert!(run.received * 2 >= run.sent, "{run:?}");
    // Real /proc/stat on both ends.
    assert!(run.board_cpu.total() > 0, "{run:?}");
    assert!(run.host_cpu.total() > 0, "{run:?}");
}

#[test]
fn udp_runs_both_ways_at_the_offered_load() {
    let peer = start_peer();
    let mut s =
        driver::Session::connect(peer, Duration::from_secs(5), Path::new("/proc/stat")).unwrap();
    for d in [NetDirection::BoardToHost, NetDirection::HostToBoard] {
        let run = s
            .udp("static", d, &udp_timing(), UDP_RATE, UDP_LEN)
            .unwrap();
        check_udp_run(&run, d);
    }
    // The session is in step after both.
    assert!(!s.is_broken());
    let again = s
        .udp(
            "static",
            NetDirection::BoardToHost,
            &udp_timing(),
            UDP_RATE,
            UDP_LEN,
        )
        .unwrap();
    check_udp_run(&again, NetDirection::BoardToHost);
    s.close();
}

#[test]
fn junk_datagrams_at_the_peer_are_ignored() {
    let peer = start_peer();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    let junk = thread::spawn(move || {
        let u = UdpSocket::bind((LOCALHOST, 0)).unwrap();
        let mut full = vec![0u8; UDP_LEN as usize];
        let mut n = 0u64;
        while !flag.load(std::sync::atomic::Ordering::Relaxed) {
            // Short, right-length with plausible headers, and hello-shaped.
            let _ = u.send_to(b"junk", peer);
            udp::put_header(&mut full, n % 100, 200_000_000);
            let _ = u.send_to(&full, peer);
            let _ = u.send_to(&udp::hello(1, 2), peer);
            let _ = u.send_to(&[0xffu8; 26], peer);
            n += 1;
            thread::sleep(Duration::from_micros(500));
        }
        n
    });
    let mut s =
        driver::Session::connect(peer, Duration::from_secs(5), Path::new("/proc/stat")).unwrap();
    for d in [NetDirection::BoardToHost, NetDirection::HostToBoard] {
        let run = s
            .udp("static", d, &udp_timing(), UDP_RATE, UDP_LEN)
            .unwrap();
        check_udp_run(&run, d);
    }
    s.close();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(junk.join().unwrap() > 100, "junk was sent throughout");
}

/// A fake peer that says hello and answers the first request with `answer` (nothing:
/// it keeps the connection open and silent for `hold`).
fn fake_udp_peer(answer: Vec<Reply>, hold: Duration) -> (SocketAddr, thread::JoinHandle<String>) {
    let l = TcpListener::bind((LOCALHOST, 0)).unwrap();
    let addr = l.local_addr().unwrap();
    let t = thread::spawn(move || {
        let (c, _) = l.accept().unwrap();
        let mut r = BufReader::new(c.try_clone().unwrap());
        let mut w = c;
        assert!(line(&mut r).contains("Hello"));
        w.write_all(&encode(&Reply::Hello {
            version: benchboot_netbench::control::VERSION,
            session: 7,
        }))
        .unwrap();
        let req = line(&mut r);
        for a in &answer {
            w.write_all(&encode(a)).unwrap();
        }
        thread::sleep(hold);
        req
    });
    (addr, t)
}

#[test]
fn a_peer_that_never_answers_udp_is_an_error_in_bounded_time() {
    let (addr, fake) = fake_udp_peer(vec![], Duration::from_secs(20));
    let mut s =
        driver::Session::connect(addr, Duration::from_secs(5), &fake_stat("udpsilent")).unwrap();
    let t0 = Instant::now();
    let e = s
        .udp(
            "static",
            NetDirection::BoardToHost,
            &udp_timing(),
            UDP_RATE,
            UDP_LEN,
        )
        .unwrap_err();
    let took = t0.elapsed();
    assert!(matches!(e, benchboot_netbench::NetError::Timeout(_)), "{e}");
    assert!(took >= driver::UDP_SETUP_TIMEOUT, "{took:?}");
    assert!(
        took < driver::UDP_SETUP_TIMEOUT + Duration::from_secs(5),
        "{took:?}"
    );
    assert!(s.is_broken());
    drop(s);
    let req = fake.join().unwrap();
    assert!(req.contains("\"Udp\""), "{req}");
    assert!(req.contains("\"bitrate\":50000000"), "{req}");
}

#[test]
fn a_peer_whose_datagrams_never_arrive_is_an_error_not_a_loss_figure() {
    // Says it started and that it sent, but sends nothing.
    let (addr, fake) = fake_udp_peer(
        vec![
            Reply::UdpStarted { test: 2 },
            Reply::UdpSent {
                test: 2,
                sent: 1234,
                cpu: Default::default(),
            },
        ],
        Duration::from_secs(1),
    );
    let mut s =
        driver::Session::connect(addr, Duration::from_secs(5), &fake_stat("udpnone")).unwrap();
    let t0 = Instant::now();
    let e = s
        .udp(
            "static",
            NetDirection::HostToBoard,
            &udp_timing(),
            UDP_RATE,
            UDP_LEN,
        )
        .unwrap_err();
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    assert!(e.to_string().contains("none of the 1234 datagrams"), "{e}");
    s.close();
    fake.join().unwrap();
}

#[test]
fn the_real_peer_without_a_board_hello_says_why() {
    use benchboot_netbench::control::{Greeting, Request, VERSION};
    let peer = start_peer();
    let mut c = std::net::TcpStream::connect(peer).unwrap();
    c.write_all(&encode(&Greeting::Hello {
        version: VERSION,
        board: None,
    }))
    .unwrap();
    let mut r = BufReader::new(c.try_clone().unwrap());
    assert!(line(&mut r).contains("Hello"));
    c.write_all(&encode(&Request::Udp {
        test: 2,
        direction: NetDirection::HostToBoard,
        bitrate: UDP_RATE,
        datagram_bytes: UDP_LEN,
        omit_ms: 0,
        duration_ms: 100,
    }))
    .unwrap();
    let t0 = Instant::now();
    let reply: Reply = serde_json::from_str(&line(&mut r)).unwrap();
    assert!(t0.elapsed() < peer::UDP_HELLO_WAIT + Duration::from_secs(3));
    match reply {
        Reply::Error { message } => assert!(message.contains("no hello"), "{message}"),
        other => panic!("{other:?}"),
    }
}
