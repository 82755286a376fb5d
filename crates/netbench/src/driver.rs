//! The board's side: connects to the peer and drives every test of a plan, like an
//! iperf3 client. [`run`] never panics and never stops early: each failure becomes an
//! error string and the remaining tests go on (over a fresh control connection when the
//! old one is out of step; skipped, each with its own error string, once the peer is
//! gone).

use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use benchboot_plan::NetTests;
use benchboot_results::counters::{NetDirection, NetTest};
use benchboot_results::network::{HttpRun, LatencyRun, NetworkResults, ThroughputRun, UdpRun};

use crate::control::{encode, unexpected, Control, Greeting, Reply, Request, MAX_STREAMS, VERSION};
use crate::interval::{merge, slice, Timing};
use crate::tcp::{self, Streams, BLOCK};
use crate::{http, procstat, udp, Context, NetError};

/// How long one connect may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the peer may take to answer a request that starts a test.
pub const SETUP_TIMEOUT: Duration = Duration::from_secs(20);
/// How long the peer may take to report once the board's window closed.
pub const END_TIMEOUT: Duration = Duration::from_secs(30);
/// The slowest link an HTTP transfer is given time for, bytes/s (the one bound both
/// ends use: [`http::SLOWEST_TRANSFER`]).
pub const SLOWEST_TRANSFER: u64 = http::SLOWEST_TRANSFER;
/// How long streams may take to end on their own once stopped.
pub const END_GRACE: Duration = Duration::from_secs(10);
/// How long a reconnect may take after a test left the control connection out of step
/// (the peer may still be finishing the old session's wait: 30 s at most).
pub const RECONNECT_WAIT: Duration = Duration::from_secs(45);
/// How long the peer may take to hear the board's UDP hello and answer `UdpStarted`
/// (it gives up after [`crate::peer::UDP_HELLO_WAIT`] and says why).
pub const UDP_SETUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How often the board sends its UDP hello until the peer answers.
pub const UDP_HELLO_EVERY: Duration = Duration::from_millis(50);
/// Most round trips of one latency run.
pub const MAX_LATENCY_SAMPLES: u32 = 1_000_000;
/// Largest HTTP object (it is held in RAM).
pub const MAX_HTTP_BYTES: u64 = 1 << 30;

/// One control session with the peer. Each test method runs one test to its end; a
/// method that fails half-way leaves the session [`Session::is_broken`] (replies may be
/// pending), and the caller should drop it and connect again.
#[derive(Debug)]
pub struct Session {
    ctl: Control,
    peer: SocketAddr,
    id: u64,
    next_test: u64,
    cpu: procstat::Reader,
    stat_path: PathBuf,
    buf: Vec<u8>,
    broken: bool,
}

impl Session {
    /// Connects to the peer and says hello, retrying (refused, busy) until `wait` is
    /// over. CPU counters come from `stat_path` (`/proc/stat`).
    pub fn connect(
        peer: SocketAddr,
        wait: Duration,
        stat_path: &Path,
    ) -> Result<Session, NetError> {
        Session::connect_as(peer, wait, stat_path, None)
    }

    /// [`Session::connect`], the hello naming `board` (the plan's board name): a board
    /// offering its WiFi AP holds such a session over its results link, so the peer
    /// takes the offer ([`crate::control::Greeting::Hello`]).
    pub fn connect_as(
        peer: SocketAddr,
        wait: Duration,
        stat_path: &Path,
        board: Option<&str>,
    ) -> Result<Session, NetError> {
        let deadline = Instant::now() + wait;
        loop {
            let (e, retry) = match Session::try_connect(peer, stat_path, board) {
                Ok(s) => return Ok(s),
                Err(x) => x,
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if !retry || left.is_zero() {
                return Err(e);
            }
            thread::sleep(left.min(Duration::from_millis(250)));
        }
    }

    /// One attempt; on failure, whether another attempt may do better (nobody
    /// listening yet, or the peer busy with another board).
    fn try_connect(
        peer: SocketAddr,
        stat_path: &Path,
        board: Option<&str>,
    ) -> Result<Session, (NetError, bool)> {
        let s = TcpStream::connect_timeout(&peer, CONNECT_TIMEOUT)
            .ctx(&format!("connecting to the peer at {peer}"))
            .map_err(|e| (e, true))?;
        let fail = |e: NetError| {
            let busy = matches!(&e, NetError::Peer(m) if m.starts_with("busy"));
            (e, busy)
        };
        s.set_write_timeout(Some(tcp::IO_TIMEOUT))
            .ctx("control: socket options")
            .map_err(fail)?;
        let _ = s.set_nodelay(true);
        let mut ctl = Control::new(s);
        ctl.send(&Greeting::Hello {
            version: VERSION,
            board: board.map(str::to_owned),
        })
        .map_err(fail)?;
        match ctl.reply(SETUP_TIMEOUT).map_err(fail)? {
            Reply::Hello { version, session } if version == VERSION => Ok(Session {
                ctl,
                peer,
                id: session,
                next_test: 1,
                cpu: procstat::Reader::new(stat_path),
                stat_path: stat_path.to_owned(),
                buf: Vec::new(),
                broken: false,
            }),
            Reply::Hello { version, .. } => Err(fail(NetError::Protocol(format!(
                "the peer speaks protocol version {version}, this board {VERSION}: \
                 run the benchboot that matches the image"
            )))),
            other => Err(fail(unexpected("Hello", &other))),
        }
    }

    /// True when the last test stopped half-way: the session is out of step.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// True while the peer has not closed the control connection (it closes a session
    /// that runs no test for its idle timeout). Does not block.
    pub fn is_open(&self) -> bool {
        !self.ctl.closed()
    }

    /// The board's address on the control connection (what the peer sees).
    pub fn local_ip(&self) -> Option<IpAddr> {
        self.ctl.stream().local_addr().ok().map(|a| a.ip())
    }

    /// The first failure to read the CPU counters since the last call.
    pub fn take_cpu_error(&mut self) -> Option<String> {
        self.cpu.take_error()
    }

    fn begin(&mut self) -> u64 {
        self.broken = true;
        self.next_test += 1;
        self.next_test
    }

    /// Opens one data connection of `test`.
    fn data_connection(&self, test: u64, stream: u32) -> Result<TcpStream, NetError> {
        let what = format!("data connection {stream}");
        let mut s = TcpStream::connect_timeout(&self.peer, CONNECT_TIMEOUT).ctx(&what)?;
        tcp::prepare(&s).ctx(&what)?;
        s.write_all(&encode(&Greeting::Data {
            session: self.id,
            test,
            stream,
        }))
        .ctx(&what)?;
        Ok(s)
    }

    /// One iperf-style run of `streams` parallel TCP streams; `t` is its clock.
    pub fn throughput(
        &mut self,
        link: &str,
        direction: NetDirection,
        streams: u32,
        t: &Timing,
    ) -> Result<ThroughputRun, NetError> {
        t.check().map_err(|e| NetError::Invalid(e.to_string()))?;
        if streams == 0 || streams > MAX_STREAMS {
            return Err(NetError::Invalid(format!(
                "streams must be 1..={MAX_STREAMS}, not {streams}"
            )));
        }
        let test = self.begin();
        self.ctl.send(&Request::Throughput {
            test,
            direction,
            streams,
            omit_ms: t.omit_ns / 1_000_000,
            duration_ms: t.duration_ns / 1_000_000,
            interval_ms: t.interval_ns / 1_000_000,
        })?;
        let mut conns = Vec::with_capacity(streams as usize);
        for i in 0..streams {
            conns.push(self.data_connection(test, i)?);
        }
        // HostToBoard: the board receives and its counts are the figures.
        let receiver = direction == NetDirection::HostToBoard;
        let mut running = None;
        if receiver {
            let mut pairs = Vec::with_capacity(conns.len());
            for c in conns.drain(..) {
                let socket = c.try_clone().ctx("data connection")?;
                pairs.push((c, socket));
            }
            running = Some(Streams::receive(pairs).ctx("starting the stream threads")?);
        }
        match self.ctl.reply(SETUP_TIMEOUT)? {
            Reply::Started { test: x } if x == test => {}
            other => return Err(unexpected("Started", &other)),
        }
        let start = Instant::now();
        let streams_ = match running {
            Some(s) => s,
            None => Streams::send(conns).ctx("starting the stream threads")?,
        };
        let samples = tcp::sample(start, t, Some(&streams_), &mut self.cpu);
        let board = slice(&samples, t);
        if receiver {
            // The window is closed: what arrives from now on is the tail.
            streams_.stop();
            self.ctl.send(&Request::Stop { test })?;
        }
        let host = match self.ctl.reply(END_TIMEOUT)? {
            Reply::ThroughputDone { test: x, side } if x == test => side,
            other => return Err(unexpected("ThroughputDone", &other)),
        };
        let results = streams_.finish(END_GRACE);
        self.broken = false;

        let failed: Vec<String> = results
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.as_ref().err().map(|e| format!("stream {i}: {e}")))
            .collect();
        if !failed.is_empty() {
            return Err(NetError::Failed(failed.join("; ")));
        }
        let received = if receiver { &board } else { &host };
        if !board.complete || !host.complete {
            return Err(NetError::Failed(format!(
                "run cut short: {} of {} intervals on the board, {} on the peer",
                board.intervals.len(),
                t.intervals(),
                host.intervals.len()
            )));
        }
        let m = merge(received, &board, &host);
        Ok(ThroughputRun {
            link: link.to_owned(),
            direction,
            streams,
            omit_ns: t.omit_ns,
            intervals: m.intervals,
            bytes: m.bytes,
            nanos: m.nanos,
            board_cpu: m.board_cpu,
            host_cpu: m.host_cpu,
            board_tcp: m.board_tcp,
            host_tcp: m.host_tcp,
        })
    }

    /// `samples` round trips of one byte each way.
    pub fn latency(&mut self, link: &str, samples: u32) -> Result<LatencyRun, NetError> {
        if samples == 0 || samples > MAX_LATENCY_SAMPLES {
            return Err(NetError::Invalid(format!(
                "latency samples must be 1..={MAX_LATENCY_SAMPLES}, not {samples}"
            )));
        }
        let test = self.begin();
        self.ctl.send(&Request::Latency { test, samples })?;
        let mut s = self.data_connection(test, 0)?;
        match self.ctl.reply(SETUP_TIMEOUT)? {
            Reply::Started { test: t } if t == test => {}
            other => return Err(unexpected("Started", &other)),
        }
        let rtt_ns = crate::latency::ping(&mut s, samples).ctx("latency: round trip")?;
        s.shutdown(std::net::Shutdown::Write)
            .ctx("latency: closing")?;
        match self.ctl.reply(END_TIMEOUT)? {
            Reply::LatencyDone { test: t, .. } if t == test => {}
            other => return Err(unexpected("LatencyDone", &other)),
        }
        self.broken = false;
        Ok(LatencyRun {
            link: link.to_owned(),
            rtt_ns,
        })
    }

    fn check_bytes(bytes: u64) -> Result<(), NetError> {
        if bytes == 0 || bytes > MAX_HTTP_BYTES {
            return Err(NetError::Invalid(format!(
                "http bytes must be 1 ..= {MAX_HTTP_BYTES}, not {bytes}"
            )));
        }
        Ok(())
    }

    /// The board GETs `bytes` held in the peer's RAM (`host-to-board`).
    pub fn http_from_peer(&mut self, link: &str, bytes: u64) -> Result<HttpRun, NetError> {
        Session::check_bytes(bytes)?;
        let test = self.begin();
        self.ctl.send(&Request::HttpFromPeer { test, bytes })?;
        let path = match self.ctl.reply(SETUP_TIMEOUT + Duration::from_secs(40))? {
            Reply::HttpReady { test: t, path } if t == test => path,
            other => return Err(unexpected("HttpReady", &other)),
        };
        if self.buf.len() != BLOCK {
            self.buf = vec![0; BLOCK];
        }
        let before = self.cpu.read();
        let fetch = http::get(self.peer, &path, &mut self.buf)?;
        let after = self.cpu.read();
        let host_cpu = match self.ctl.reply(END_TIMEOUT)? {
            Reply::HttpServed { test: t, cpu, .. } if t == test => cpu,
            other => return Err(unexpected("HttpServed", &other)),
        };
        self.broken = false;
        if fetch.bytes != bytes {
            return Err(NetError::Failed(format!(
                "http: got {} of {bytes} bytes",
                fetch.bytes
            )));
        }
        Ok(HttpRun {
            link: link.to_owned(),
            direction: NetDirection::HostToBoard,
            bytes: fetch.bytes,
            nanos: fetch.nanos,
            board_cpu: procstat::delta(&before, &after),
            host_cpu,
        })
    }

    /// The peer GETs `bytes` held in the board's RAM (`board-to-host`) from a temporary
    /// server on `board_ip` (unspecified: the address of the control connection) at TCP
    /// port `board_port` (0: any free port; fixed where a NAT forwards it to the board,
    /// as QEMU's user network does).
    pub fn http_from_board(
        &mut self,
        link: &str,
        board_ip: IpAddr,
        board_port: u16,
        bytes: u64,
    ) -> Result<HttpRun, NetError> {
        Session::check_bytes(bytes)?;
        let ip = match board_ip {
            ip if ip.is_unspecified() => self
                .local_ip()
                .ok_or_else(|| NetError::Protocol("control connection has no address".into()))?,
            ip => ip,
        };
        // `meminfo` beside `stat` (`/proc/meminfo`): the RAM check of the object.
        let blob = Arc::new(http::blob(
            bytes,
            &self.stat_path.with_file_name("meminfo"),
        )?);
        let server =
            http::BlobServer::start(SocketAddr::new(ip, board_port), blob, &self.stat_path).ctx(
                &format!(
                    "http: starting the board's server on {}",
                    SocketAddr::new(ip, board_port)
                ),
            )?;
        let test = self.begin();
        let sent = self.ctl.send(&Request::HttpFromBoard {
            test,
            url: server.url(),
        });
        let reply = sent.and_then(|_| self.ctl.reply(http::transfer_time(bytes)));
        let served = server.finish();
        let (got, nanos, host_cpu) = match reply? {
            Reply::HttpFetched {
                test: t,
                bytes,
                nanos,
                cpu,
            } if t == test => (bytes, nanos, cpu),
            other => return Err(unexpected("HttpFetched", &other)),
        };
        self.broken = false;
        let served = served?;
        if got != bytes {
            return Err(NetError::Failed(format!(
                "http: the peer got {got} of {bytes} bytes"
            )));
        }
        Ok(HttpRun {
            link: link.to_owned(),
            direction: NetDirection::BoardToHost,
            bytes: got,
            nanos,
            board_cpu: served.cpu,
            host_cpu,
        })
    }

    /// One UDP run like `iperf3 -u -b BITRATE -l DATAGRAM_BYTES` (see [`crate::udp`]):
    /// `bitrate` bit/s of UDP payload offered in `datagram_bytes`-byte datagrams for
    /// `t.omit_ns` (warm-up, not counted) + `t.duration_ns` (`t.interval_ns` is not
    /// used). The board's UDP socket is on the control connection's address; the
    /// peer's is its control port number, in UDP. `BoardToHost`: the board sends and
    /// the peer counts; `HostToBoard`: the reverse, to the address the board's hello
    /// came from (so it works through a NAT). The receiver's counts are the figures;
    /// `sent` is the sender's count; `nanos` is `t.duration_ns`, the sender's measured
    /// span. A run in which no datagram arrived is an error (UDP blocked on the way),
    /// not a 100 % loss figure.
    pub fn udp(
        &mut self,
        link: &str,
        direction: NetDirection,
        t: &Timing,
        bitrate: u64,
        datagram_bytes: u32,
    ) -> Result<UdpRun, NetError> {
        t.check().map_err(|e| NetError::Invalid(e.to_string()))?;
        udp::check(bitrate, datagram_bytes)?;
        let ip = self
            .local_ip()
            .ok_or_else(|| NetError::Protocol("control connection has no address".into()))?;
        let sock = UdpSocket::bind(SocketAddr::new(ip, 0))
            .ctx(&format!("udp: binding a socket on {ip}"))?;
        let test = self.begin();
        self.ctl.send(&Request::Udp {
            test,
            direction,
            bitrate,
            datagram_bytes,
            omit_ms: t.omit_ns / 1_000_000,
            duration_ms: t.duration_ns / 1_000_000,
        })?;
        // Hellos until the peer says it heard one (a lost hello is sent again).
        let stop = Arc::new(AtomicBool::new(false));
        let hellos = {
            let (stop, sock) = (stop.clone(), sock.try_clone().ctx("udp: socket")?);
            let (to, hello) = (self.peer, udp::hello(self.id, test));
            thread::Builder::new()
                .name("netbench-hello".into())
                .spawn(move || {
                    let deadline = Instant::now() + UDP_SETUP_TIMEOUT;
                    while !stop.load(Relaxed) && Instant::now() < deadline {
                        let _ = sock.send_to(&hello, to);
                        thread::sleep(UDP_HELLO_EVERY);
                    }
                })
                .ctx("udp: starting the hello thread")?
        };
        let started = self.ctl.reply(UDP_SETUP_TIMEOUT);
        stop.store(true, Relaxed);
        let _ = hellos.join();
        match started? {
            Reply::UdpStarted { test: x } if x == test => {}
            other => return Err(unexpected("UdpStarted", &other)),
        }
        let start = Instant::now();
        let (sent, counts, board_cpu, host_cpu) = match direction {
            NetDirection::BoardToHost => {
                let s = udp::send(
                    &sock,
                    self.peer,
                    start,
                    t,
                    bitrate,
                    datagram_bytes,
                    &mut self.cpu,
                )?;
                match self.ctl.reply(END_TIMEOUT)? {
                    Reply::UdpReceived {
                        test: x,
                        counts,
                        cpu,
                    } if x == test => (s.sent, counts, s.cpu, cpu),
                    other => return Err(unexpected("UdpReceived", &other)),
                }
            }
            NetDirection::HostToBoard => {
                let (counts, board_cpu) = udp::receive(
                    &sock,
                    self.peer,
                    start,
                    t,
                    bitrate,
                    datagram_bytes,
                    &mut self.cpu,
                )?;
                match self.ctl.reply(END_TIMEOUT)? {
                    Reply::UdpSent { test: x, sent, cpu } if x == test => {
                        (sent, counts, board_cpu, cpu)
                    }
                    other => return Err(unexpected("UdpSent", &other)),
                }
            }
        };
        self.broken = false;
        if counts.received == 0 {
            return Err(NetError::Failed(format!(
                "udp {}: none of the {sent} datagrams sent arrived (is UDP to port {} \
                 blocked on the way?)",
                direction.name(),
                self.peer.port()
            )));
        }
        Ok(UdpRun {
            link: link.to_owned(),
            direction,
            target_bitrate: bitrate,
            datagram_bytes,
            sent,
            received: counts.received,
            lost: counts.lost,
            out_of_order: counts.out_of_order,
            bytes: counts.bytes,
            nanos: t.duration_ns,
            jitter_ns: counts.jitter_ns,
            board_cpu,
            host_cpu,
        })
    }

    /// Says goodbye (best effort) and closes.
    pub fn close(mut self) {
        if !self.broken {
            let _ = self.ctl.send(&Request::Bye);
        }
    }
}

/// Runs every test of `tests` against the peer at `peer`: each stream count in both
/// directions, then latency, then HTTP both ways (`http_bytes`; 0 skips HTTP,
/// `latency_samples` 0 skips latency; the board's HTTP server on `board_http_port`),
/// then UDP both ways at `udp_bitrate` (0 skips UDP). `board_ip` is where the peer can reach the
/// board's HTTP server (unspecified: the address the control connection went out on);
/// `link` labels every run (`ncm`, `static`, ...); `stat_path` is `/proc/stat` (tests
/// pass a fake one; `meminfo` beside it bounds the HTTP object to half the available
/// RAM). Results of what worked, and one error string per failure.
pub fn run(
    peer: SocketAddr,
    board_ip: IpAddr,
    link: &str,
    tests: &NetTests,
    stat_path: &Path,
) -> (NetworkResults, Vec<String>) {
    run_directions(
        peer,
        board_ip,
        link,
        tests,
        &[NetDirection::BoardToHost, NetDirection::HostToBoard],
        stat_path,
    )
}

/// [`run`], with the throughput and UDP runs limited to `directions` (in that order).
pub fn run_directions(
    peer: SocketAddr,
    board_ip: IpAddr,
    link: &str,
    tests: &NetTests,
    directions: &[NetDirection],
    stat_path: &Path,
) -> (NetworkResults, Vec<String>) {
    run_observed(
        peer,
        board_ip,
        link,
        tests,
        directions,
        stat_path,
        &mut |_, _| {},
    )
}

/// Before or after one test, for the observer of [`run_observed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Before,
    After,
}

/// [`run_directions`], calling `observe` right before and right after each test that
/// runs (not for tests skipped for want of a peer): the board reads its health there.
pub fn run_observed(
    peer: SocketAddr,
    board_ip: IpAddr,
    link: &str,
    tests: &NetTests,
    directions: &[NetDirection],
    stat_path: &Path,
    observe: &mut dyn FnMut(Stage, &NetTest),
) -> (NetworkResults, Vec<String>) {
    let mut out = NetworkResults::default();
    let wait = Duration::from_millis(tests.peer_wait_ms);
    let mut r = Runner {
        peer,
        stat_path,
        session: None,
        gone: false,
        cpu_error_told: false,
        errors: Vec::new(),
        reconnect_wait: wait.min(RECONNECT_WAIT),
        observe,
    };
    match Session::connect(peer, wait, stat_path) {
        Ok(s) => r.session = Some(s),
        Err(e) => {
            r.errors.push(format!(
                "network: no peer at {peer} within {} ms: {e} (run `benchboot peer` on the host)",
                tests.peer_wait_ms
            ));
            return (out, r.errors);
        }
    }
    let t = Timing::from_ms(tests.omit_ms, tests.interval_ms, tests.duration_ms);
    for &n in &tests.streams {
        for &d in directions {
            let what = format!("throughput {} {n} stream(s)", d.name());
            let test = NetTest::Tcp {
                direction: d,
                streams: n,
            };
            if let Some(run) = r.step(&what, test, |s| s.throughput(link, d, n, &t)) {
                out.throughput.push(run);
            }
        }
    }
    if tests.latency_samples > 0 {
        if let Some(run) = r.step("latency", NetTest::Latency, |s| {
            s.latency(link, tests.latency_samples)
        }) {
            out.latency.push(run);
        }
    }
    if tests.http_bytes > 0 {
        let bytes = tests.http_bytes;
        let test = NetTest::Http {
            direction: NetDirection::HostToBoard,
        };
        if let Some(run) = r.step("http host-to-board", test, |s| {
            s.http_from_peer(link, bytes)
        }) {
            out.http.push(run);
        }
        let test = NetTest::Http {
            direction: NetDirection::BoardToHost,
        };
        if let Some(run) = r.step("http board-to-host", test, |s| {
            s.http_from_board(link, board_ip, tests.board_http_port, bytes)
        }) {
            out.http.push(run);
        }
    }
    if tests.udp_bitrate > 0 {
        let (bitrate, len) = (tests.udp_bitrate, tests.udp_datagram_bytes);
        for &d in directions {
            let what = format!("udp {}", d.name());
            let test = NetTest::Udp { direction: d };
            if let Some(run) = r.step(&what, test, |s| s.udp(link, d, &t, bitrate, len)) {
                out.udp.push(run);
            }
        }
    }
    if let Some(s) = r.session.take() {
        s.close();
    }
    (out, r.errors)
}

struct Runner<'a> {
    peer: SocketAddr,
    stat_path: &'a Path,
    session: Option<Session>,
    gone: bool,
    cpu_error_told: bool,
    errors: Vec<String>,
    reconnect_wait: Duration,
    observe: &'a mut dyn FnMut(Stage, &NetTest),
}

impl Runner<'_> {
    /// Runs one test on the session (connecting again when the last one broke),
    /// between the observer's `Before` and `After`.
    fn step<T>(
        &mut self,
        what: &str,
        test: NetTest,
        f: impl FnOnce(&mut Session) -> Result<T, NetError>,
    ) -> Option<T> {
        if self.session.is_none() && !self.gone {
            match Session::connect(self.peer, self.reconnect_wait, self.stat_path) {
                Ok(s) => self.session = Some(s),
                Err(e) => {
                    self.gone = true;
                    self.errors
                        .push(format!("network: the peer at {} is gone: {e}", self.peer));
                }
            }
        }
        let Some(s) = self.session.as_mut() else {
            self.errors
                .push(format!("network: {what}: skipped, no peer"));
            return None;
        };
        (self.observe)(Stage::Before, &test);
        let result = f(s);
        (self.observe)(Stage::After, &test);
        if let Some(e) = s.take_cpu_error() {
            if !self.cpu_error_told {
                self.cpu_error_told = true;
                self.errors
                    .push(format!("network: cpu figures are zero: {e}"));
            }
        }
        if s.is_broken() {
            self.session = None;
        }
        match result {
            Ok(x) => Some(x),
            Err(e) => {
                self.errors.push(format!("network: {what}: {e}"));
                None
            }
        }
    }
}
