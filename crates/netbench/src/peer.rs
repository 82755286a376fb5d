//! The peer: what `benchboot peer` runs on the host (like `iperf3 -s`). It serves one
//! board at a time, forever: the board drives, the peer receives or sends as asked,
//! echoes round trips, serves its object from RAM, fetches the board's, and reports its
//! own receive counts and `/proc/stat` CPU for every interval.
//!
//! Every connection to the port is classified by its first line (see [`crate::control`])
//! on a short-lived thread of its own, so a client that connects and says nothing
//! delays nobody. A second board gets a `busy` error until the first one is done.
//!
//! UDP runs use one UDP socket bound to the same address and port number as the TCP
//! listener (as `iperf3 -s` does); the board's hello datagram tells the peer where the
//! board's UDP socket is, as a NAT on the way maps it.

use std::io::{self, BufReader};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use benchboot_results::network::NetDirection;

use crate::control::{
    read_line, Control, Greeting, Reply, Request, MAX_GREETING, MAX_STREAMS, VERSION,
};
use crate::interval::{slice, Timing};
use crate::tcp::{self, Streams, BLOCK};
use crate::{announce, http, procstat, udp, Context, NetError};

/// How long a new connection may take to send its first line.
pub const GREETING_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the board may take to open a test's data connections.
pub const SETUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a session may sit idle between requests.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(600);
/// How long to wait for the board's `Stop` after the peer's own window closed.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long streams may take to end on their own once stopped.
pub const END_GRACE: Duration = Duration::from_secs(10);
/// How long the board may take to fetch after `HttpReady`.
pub const HTTP_WAIT: Duration = Duration::from_secs(30);
/// How long the peer waits for the board's UDP hello before it answers an error.
pub const UDP_HELLO_WAIT: Duration = Duration::from_secs(5);
/// Largest object the peer will hold in RAM (the plan's limit).
pub const MAX_HTTP_BYTES: u64 = 1 << 30;
/// Where the RAM available for the HTTP object is read.
const MEMINFO: &str = "/proc/meminfo";
/// How often waits for connections look whether the board hung up.
const POLL: Duration = Duration::from_millis(200);
/// Connections being classified at once; more are closed at once.
const MAX_PENDING: usize = 128;

type Log = Arc<dyn Fn(&str) + Send + Sync>;

struct DataConn {
    session: u64,
    test: u64,
    stream: u32,
    conn: BufReader<TcpStream>,
}

struct HttpConn {
    conn: BufReader<TcpStream>,
    request_line: Vec<u8>,
}

/// The classifier's outlets.
#[derive(Clone)]
struct Outlets {
    control: Sender<(Control, SocketAddr)>,
    data: Sender<DataConn>,
    http: Sender<HttpConn>,
    busy: Arc<AtomicBool>,
    pending: Arc<AtomicUsize>,
    log: Log,
}

/// How the peer serves, beyond its port.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeerOptions {
    /// Where the board's HTTP server is reached from here, when a NAT stands between
    /// (QEMU's user network forwards `127.0.0.1:HOSTPORT` to the board's fixed
    /// `board_http_port`): the host and port of the URL the board sends in
    /// `HttpFromBoard` are replaced with it ([`rewrite_url`]), and the check that the
    /// URL names the board's own address is skipped (the operator named it).
    pub board_address: Option<SocketAddr>,
    /// Announce this peer to `announce_to` once a second ([`crate::announce`]; the
    /// CLI's `--announce` sends to [`crate::announce::BROADCAST`]). `None`: silent.
    pub announce_to: Option<SocketAddr>,
}

/// Serves boards on `listener` one at a time, forever, reading this machine's CPU
/// counters from `stat_path` (`/proc/stat`). Returns only when `accept` keeps failing.
pub fn serve(listener: TcpListener, stat_path: &Path) -> io::Result<()> {
    serve_with_log(listener, stat_path, |_| {})
}

/// [`serve`], telling `log` about each board and each failure (one line each).
pub fn serve_with_log(
    listener: TcpListener,
    stat_path: &Path,
    log: impl Fn(&str) + Send + Sync + 'static,
) -> io::Result<()> {
    serve_with_options(listener, stat_path, &PeerOptions::default(), log)
}

/// [`serve_with_log`] with `options`. UDP runs use a UDP socket bound to the
/// listener's own address and port; when that bind fails the peer serves on, and
/// answers UDP runs with the reason.
pub fn serve_with_options(
    listener: TcpListener,
    stat_path: &Path,
    options: &PeerOptions,
    log: impl Fn(&str) + Send + Sync + 'static,
) -> io::Result<()> {
    let log: Log = Arc::new(log);
    let local = listener.local_addr()?;
    let udp = UdpSocket::bind(local).map_err(|e| {
        let why = format!("this peer has no UDP socket on {local}: {e}");
        log(&format!("peer: {why}; UDP runs will fail"));
        why
    });
    if let Some(to) = options.announce_to {
        let l = log.clone();
        let port = local.port();
        thread::Builder::new()
            .name("netbench-announce".into())
            .spawn(move || {
                let never = AtomicBool::new(false);
                if let Err(e) = announce::broadcast(port, to, announce::EVERY, &never, &*l) {
                    l(&format!("peer: cannot announce to {to}: {e}"));
                }
            })?;
        log(&format!(
            "peer: announcing port {} to {to} once a second",
            local.port()
        ));
    }
    let board_address = options.board_address;
    let (control_tx, control_rx) = mpsc::channel();
    let (data_tx, data_rx) = mpsc::channel();
    let (http_tx, http_rx) = mpsc::channel();
    let out = Outlets {
        control: control_tx,
        data: data_tx,
        http: http_tx,
        busy: Arc::new(AtomicBool::new(false)),
        pending: Arc::new(AtomicUsize::new(0)),
        log: log.clone(),
    };
    let busy = out.busy.clone();
    let stat = stat_path.to_owned();
    thread::Builder::new()
        .name("netbench-peer".into())
        .spawn(move || {
            let rx = Inlets {
                data: data_rx,
                http: http_rx,
            };
            let shared = Shared {
                udp: udp.as_ref().map_err(Clone::clone),
                board_address,
            };
            for (ctl, from) in control_rx {
                session(ctl, from, &rx, &shared, &stat, &*log);
                busy.store(false, Ordering::SeqCst);
            }
        })?;
    let mut failures = 0u32;
    loop {
        match listener.accept() {
            Ok((conn, from)) => {
                failures = 0;
                if out.pending.fetch_add(1, Ordering::SeqCst) >= MAX_PENDING {
                    out.pending.fetch_sub(1, Ordering::SeqCst);
                    continue; // dropped: closed at once
                }
                let o = out.clone();
                let spawned =
                    thread::Builder::new()
                        .name("netbench-greet".into())
                        .spawn(move || {
                            classify(conn, from, &o);
                            o.pending.fetch_sub(1, Ordering::SeqCst);
                        });
                if spawned.is_err() {
                    out.pending.fetch_sub(1, Ordering::SeqCst);
                }
            }
            Err(e) => {
                if matches!(
                    e.kind(),
                    io::ErrorKind::Interrupted
                        | io::ErrorKind::ConnectionAborted
                        | io::ErrorKind::ConnectionReset
                ) {
                    continue;
                }
                failures += 1;
                (out.log)(&format!("peer: accept: {e}"));
                if failures >= 100 {
                    return Err(e);
                }
                thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

/// Reads a connection's first line and hands it on.
fn classify(conn: TcpStream, from: SocketAddr, out: &Outlets) {
    if conn.set_read_timeout(Some(GREETING_TIMEOUT)).is_err()
        || conn.set_write_timeout(Some(tcp::IO_TIMEOUT)).is_err()
    {
        return;
    }
    let mut r = BufReader::new(conn);
    let mut line = Vec::new();
    if !matches!(read_line(&mut r, &mut line, MAX_GREETING), Ok(true)) {
        return;
    }
    if line.ends_with(b" HTTP/1.1") || line.ends_with(b" HTTP/1.0") {
        let c = HttpConn {
            conn: r,
            request_line: line,
        };
        if out.busy.load(Ordering::SeqCst) {
            let _ = out.http.send(c);
        } else {
            // Nobody is waiting for a fetch: a 404, as for any other path.
            let mut no_cpu = procstat::Reader::new(Path::new(""));
            let _ = http::answer(c.conn, Some(c.request_line), None, &mut no_cpu);
        }
        return;
    }
    match serde_json::from_slice::<Greeting>(&line) {
        Ok(Greeting::Hello { version }) => {
            let mut ctl = Control::from_reader(r);
            if version != VERSION {
                let _ = ctl.send(&Reply::Error {
                    message: format!(
                        "this peer speaks protocol version {VERSION}, the board {version}: \
                         run the benchboot that matches the image"
                    ),
                });
                return;
            }
            if out
                .busy
                .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
            {
                let _ = ctl.send(&Reply::Error {
                    message: "busy: another board is being served, retry later".into(),
                });
                return;
            }
            (out.log)(&format!("peer: board {from} connected"));
            if out.control.send((ctl, from)).is_err() {
                out.busy.store(false, Ordering::SeqCst);
            }
        }
        Ok(Greeting::Data {
            session,
            test,
            stream,
        }) => {
            let _ = out.data.send(DataConn {
                session,
                test,
                stream,
                conn: r,
            });
        }
        Err(_) => {} // not ours: closed
    }
}

struct Inlets {
    data: Receiver<DataConn>,
    http: Receiver<HttpConn>,
}

impl Inlets {
    /// Drops connections left over from an earlier session or test.
    fn drain(&self) {
        while self.data.try_recv().is_ok() {}
        while self.http.try_recv().is_ok() {}
    }
}

fn new_session_id() -> u64 {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    t ^ (COUNT.fetch_add(1, Ordering::Relaxed) as u64).rotate_left(48)
}

/// What every session uses: the UDP socket (or why there is none) and the options.
struct Shared<'a> {
    udp: Result<&'a UdpSocket, String>,
    board_address: Option<SocketAddr>,
}

/// State of one board's session.
struct Session<'a> {
    ctl: Control,
    from: SocketAddr,
    id: u64,
    rx: &'a Inlets,
    shared: &'a Shared<'a>,
    cpu: procstat::Reader,
    blob: Option<Arc<Vec<u8>>>,
    buf: Vec<u8>,
}

fn session(
    ctl: Control,
    from: SocketAddr,
    rx: &Inlets,
    shared: &Shared<'_>,
    stat_path: &Path,
    log: &dyn Fn(&str),
) {
    rx.drain();
    let mut s = Session {
        ctl,
        from,
        id: new_session_id(),
        rx,
        shared,
        cpu: procstat::Reader::new(stat_path),
        blob: None,
        buf: Vec::new(),
    };
    let _ = s.ctl.stream().set_write_timeout(Some(tcp::IO_TIMEOUT));
    if s.ctl
        .send(&Reply::Hello {
            version: VERSION,
            session: s.id,
        })
        .is_err()
    {
        return;
    }
    loop {
        let req: Request = match s.ctl.recv(IDLE_TIMEOUT) {
            Ok(r) => r,
            Err(e) => {
                log(&format!("peer: board {from}: {e}"));
                return;
            }
        };
        let result = match req {
            Request::Throughput {
                test,
                direction,
                streams,
                omit_ms,
                duration_ms,
                interval_ms,
            } => s.throughput(
                test,
                direction,
                streams,
                Timing::from_ms(omit_ms, interval_ms, duration_ms),
                log,
            ),
            Request::Latency { test, .. } => s.latency(test),
            Request::HttpFromPeer { test, bytes } => s.http_from_peer(test, bytes),
            Request::HttpFromBoard { test, url } => s.http_from_board(test, &url),
            Request::Udp {
                test,
                direction,
                bitrate,
                datagram_bytes,
                omit_ms,
                duration_ms,
            } => s.udp(
                test,
                direction,
                bitrate,
                datagram_bytes,
                Timing::from_ms(omit_ms, duration_ms.max(1), duration_ms),
            ),
            Request::Stop { test } => Err(NetError::Protocol(format!(
                "Stop for test {test} outside its run"
            ))),
            Request::Bye => {
                log(&format!("peer: board {from} done"));
                return;
            }
        };
        if let Some(e) = s.cpu.take_error() {
            log(&format!("peer: cpu: {e}"));
        }
        if let Err(e) = result {
            log(&format!("peer: board {from}: {e}"));
            let sent = s.ctl.send(&Reply::Error {
                message: e.to_string(),
            });
            if sent.is_err() || matches!(e, NetError::Closed(_)) {
                return;
            }
        }
    }
}

impl Session<'_> {
    /// The `n` data connections of `test`, in stream order.
    fn collect(&self, test: u64, n: u32) -> Result<Vec<BufReader<TcpStream>>, NetError> {
        let deadline = Instant::now() + SETUP_TIMEOUT;
        let mut got: Vec<Option<BufReader<TcpStream>>> = (0..n).map(|_| None).collect();
        let mut count = 0;
        while count < n {
            if self.ctl.closed() {
                return Err(NetError::Closed("control".into()));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.data.recv_timeout(left.min(POLL)) {
                Ok(d) if d.session == self.id && d.test == test => {
                    if let Some(slot @ None) = got.get_mut(d.stream as usize) {
                        *slot = Some(d.conn);
                        count += 1;
                    }
                }
                Ok(_) => {} // stale: closed
                Err(RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
                Err(RecvTimeoutError::Timeout) => {
                    return Err(NetError::Timeout(format!(
                        "waiting for the data connections of test {test} ({count} of {n} came)"
                    )))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(NetError::Protocol("peer shutting down".into()))
                }
            }
        }
        let conns: Vec<_> = got.into_iter().flatten().collect();
        for c in &conns {
            tcp::prepare(c.get_ref()).ctx("data connection: socket options")?;
        }
        Ok(conns)
    }

    fn throughput(
        &mut self,
        test: u64,
        direction: NetDirection,
        n: u32,
        t: Timing,
        log: &dyn Fn(&str),
    ) -> Result<(), NetError> {
        t.check().map_err(NetError::Invalid)?;
        if n == 0 || n > MAX_STREAMS {
            return Err(NetError::Invalid(format!(
                "streams must be 1..={MAX_STREAMS}, not {n}"
            )));
        }
        let conns = self.collect(test, n)?;
        // BoardToHost: the peer receives and its counts are the figures. Receivers wait
        // before the clock starts, senders start with it (as on the board).
        let receiver = direction == NetDirection::BoardToHost;
        let start_streams = |conns: Vec<BufReader<TcpStream>>| {
            if receiver {
                let mut pairs = Vec::with_capacity(conns.len());
                for c in conns {
                    let socket = c.get_ref().try_clone()?;
                    pairs.push((c, socket));
                }
                Streams::receive(pairs)
            } else {
                Streams::send(conns.into_iter().map(BufReader::into_inner).collect())
            }
        };
        let what = "starting the stream threads";
        let (streams, start) = if receiver {
            let streams = start_streams(conns).ctx(what)?;
            let start = Instant::now();
            self.ctl.send(&Reply::Started { test })?;
            (streams, start)
        } else {
            let start = Instant::now();
            self.ctl.send(&Reply::Started { test })?;
            (start_streams(conns).ctx(what)?, start)
        };
        let samples = tcp::sample(start, &t, Some(&streams), &mut self.cpu);
        let side = slice(&samples, &t);
        let results = if receiver {
            // The window is closed: what arrives from now on is the tail.
            streams.stop();
            self.ctl.send(&Reply::ThroughputDone { test, side })?;
            streams.finish(END_GRACE)
        } else {
            match self.ctl.recv::<Request>(STOP_TIMEOUT)? {
                Request::Stop { test: t } if t == test => {}
                other => {
                    return Err(NetError::Protocol(format!(
                        "expected Stop for test {test}, got {other:?}"
                    )))
                }
            }
            let results = streams.finish(END_GRACE);
            self.ctl.send(&Reply::ThroughputDone { test, side })?;
            results
        };
        for (i, r) in results.iter().enumerate() {
            if let Err(e) = r {
                log(&format!(
                    "peer: board {}: test {test} stream {i}: {e}",
                    self.from
                ));
            }
        }
        Ok(())
    }

    fn latency(&mut self, test: u64) -> Result<(), NetError> {
        let mut conns = self.collect(test, 1)?;
        let r = conns
            .pop()
            .ok_or_else(|| NetError::Protocol("no connection".into()))?;
        let mut w = r.get_ref().try_clone().ctx("latency connection")?;
        self.ctl.send(&Reply::Started { test })?;
        let echoed = crate::latency::echo(r, &mut w).ctx("latency: echoing")?;
        self.ctl.send(&Reply::LatencyDone { test, echoed })
    }

    fn http_from_peer(&mut self, test: u64, bytes: u64) -> Result<(), NetError> {
        if bytes == 0 || bytes > MAX_HTTP_BYTES {
            return Err(NetError::Invalid(format!(
                "http bytes must be 1 ..= {MAX_HTTP_BYTES}, not {bytes}"
            )));
        }
        let blob = match &self.blob {
            Some(b) if b.len() as u64 == bytes => b.clone(),
            _ => {
                self.blob = None; // free the old one first
                let b = Arc::new(http::blob(bytes, Path::new(MEMINFO))?);
                self.blob = Some(b.clone());
                b
            }
        };
        while self.rx.http.try_recv().is_ok() {}
        self.ctl.send(&Reply::HttpReady {
            test,
            path: http::BLOB_PATH.into(),
        })?;
        let deadline = Instant::now() + HTTP_WAIT;
        loop {
            if self.ctl.closed() {
                return Err(NetError::Closed("control".into()));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let c = match self.rx.http.recv_timeout(left.min(POLL)) {
                Ok(c) => c,
                Err(RecvTimeoutError::Timeout) if Instant::now() < deadline => continue,
                Err(_) => return Err(NetError::Timeout("waiting for GET /blob".into())),
            };
            if let Some(served) =
                http::answer(c.conn, Some(c.request_line), Some(&blob), &mut self.cpu)?
            {
                return self.ctl.send(&Reply::HttpServed {
                    test,
                    bytes: served.bytes,
                    cpu: served.cpu,
                });
            }
        }
    }

    fn http_from_board(&mut self, test: u64, url: &str) -> Result<(), NetError> {
        let (addr, path) = match self.shared.board_address {
            Some(to) => http::parse_url(&rewrite_url(url, to)?)?,
            None => {
                let (addr, path) = http::parse_url(url)?;
                let board = self.from.ip().to_canonical();
                if addr.ip().to_canonical() != board {
                    return Err(NetError::Invalid(format!(
                        "refusing to fetch {url}: the peer only fetches from the board \
                         ({board}; behind a NAT, run the peer with --board-address)"
                    )));
                }
                (addr, path)
            }
        };
        if self.buf.len() != BLOCK {
            self.buf = vec![0; BLOCK];
        }
        let before = self.cpu.read();
        let fetch = http::get(addr, &path, &mut self.buf)?;
        let after = self.cpu.read();
        self.ctl.send(&Reply::HttpFetched {
            test,
            bytes: fetch.bytes,
            nanos: fetch.nanos,
            cpu: procstat::delta(&before, &after),
        })
    }
    /// One UDP run (see [`crate::udp`]): waits for the board's hello on the UDP socket,
    /// says `UdpStarted`, then receives from or sends to where the hello came from.
    fn udp(
        &mut self,
        test: u64,
        direction: NetDirection,
        bitrate: u64,
        datagram_bytes: u32,
        t: Timing,
    ) -> Result<(), NetError> {
        udp::check(bitrate, datagram_bytes)?;
        const HOUR_NS: u64 = 3600 * 1_000_000_000;
        if t.duration_ns == 0 || t.duration_ns > HOUR_NS || t.omit_ns > HOUR_NS {
            return Err(NetError::Invalid(
                "udp: duration must be 1 ms ..= 1 h, omit at most 1 h".into(),
            ));
        }
        let sock = self.shared.udp.clone().map_err(NetError::Failed)?;
        udp::drain(sock);
        let board = self.udp_hello(sock, test)?;
        let start = Instant::now();
        self.ctl.send(&Reply::UdpStarted { test })?;
        match direction {
            NetDirection::BoardToHost => {
                let (counts, cpu) = udp::receive(
                    sock,
                    board,
                    start,
                    &t,
                    bitrate,
                    datagram_bytes,
                    &mut self.cpu,
                )?;
                self.ctl.send(&Reply::UdpReceived { test, counts, cpu })
            }
            NetDirection::HostToBoard => {
                let s = udp::send(
                    sock,
                    board,
                    start,
                    &t,
                    bitrate,
                    datagram_bytes,
                    &mut self.cpu,
                )?;
                self.ctl.send(&Reply::UdpSent {
                    test,
                    sent: s.sent,
                    cpu: s.cpu,
                })
            }
        }
    }

    /// Where the board's hello for `test` came from (within [`UDP_HELLO_WAIT`]).
    fn udp_hello(&self, sock: &UdpSocket, test: u64) -> Result<SocketAddr, NetError> {
        let deadline = Instant::now() + UDP_HELLO_WAIT;
        sock.set_read_timeout(Some(POLL))
            .ctx("udp: socket options")?;
        let mut buf = [0u8; udp::HELLO_LEN + 1];
        while Instant::now() < deadline {
            if self.ctl.closed() {
                return Err(NetError::Closed("control".into()));
            }
            match sock.recv_from(&mut buf) {
                Ok((n, src)) if udp::parse_hello(&buf[..n]) == Some((self.id, test)) => {
                    return Ok(src)
                }
                Ok(_) => {} // junk, announcements, an old run's datagrams
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                            | io::ErrorKind::ConnectionRefused
                    ) => {}
                Err(e) => return Err(NetError::io("udp: waiting for the hello", e)),
            }
        }
        let port = sock.local_addr().map_or(0, |a| a.port());
        Err(NetError::Timeout(format!(
            "udp: no hello from the board on UDP port {port} within {} s (UDP blocked?)",
            UDP_HELLO_WAIT.as_secs()
        )))
    }
}

/// `url` with its host and port replaced by `to` (`http://10.0.2.15:8080/blob` with
/// `127.0.0.1:18081` → `http://127.0.0.1:18081/blob`): where a NAT forwards to the
/// board's server. The URL must parse as [`http::parse_url`] does.
pub fn rewrite_url(url: &str, to: SocketAddr) -> Result<String, NetError> {
    let (_, path) = http::parse_url(url)?;
    Ok(format!("http://{to}{path}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_rewritten_to_the_board_address() {
        let to: SocketAddr = "127.0.0.1:18081".parse().unwrap();
        assert_eq!(
            rewrite_url("http://10.0.2.15:8080/blob", to).unwrap(),
            "http://127.0.0.1:18081/blob"
        );
        assert_eq!(
            rewrite_url("http://10.0.2.15/blob?x=1", to).unwrap(),
            "http://127.0.0.1:18081/blob?x=1"
        );
        assert_eq!(
            rewrite_url("http://[fe80::1]:80", to).unwrap(),
            "http://127.0.0.1:18081/"
        );
        let v6: SocketAddr = "[::1]:9000".parse().unwrap();
        assert_eq!(
            rewrite_url("http://10.0.2.15:8080/blob", v6).unwrap(),
            "http://[::1]:9000/blob"
        );
        assert!(rewrite_url("https://10.0.2.15/blob", to).is_err());
        assert!(rewrite_url("http://board.local/blob", to).is_err());
        assert!(rewrite_url("http://10.0.2.15/a b", to).is_err());
    }
}
