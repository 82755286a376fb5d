//! One board's session on the peer: its requests, one at a time, each logged with what
//! was sent and how the session ended.

use std::io::BufReader;
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{MutexGuard, TryLockError};
use std::thread;
use std::time::Instant;

use benchboot_results::counters::NetDirection;

use super::registry::Registered;
use super::{
    check_bitrate, check_timing, rewrite_url, Shared, END_GRACE, HTTP_BUDGET_WAIT, MAX_HTTP_BYTES,
    MEMINFO, POLL, SETUP_TIMEOUT, STOP_TIMEOUT,
};
use crate::control::{Control, Reply, Request, MAX_STREAMS, VERSION};
use crate::interval::{slice, Timing};
use crate::tcp::{self, Streams, BLOCK};
use crate::{http, procstat, udp, Context, NetError};

/// State of one board's session.
struct Session<'a> {
    ctl: Control,
    from: SocketAddr,
    reg: Registered,
    shared: &'a Shared,
    cpu: procstat::Reader,
    buf: Vec<u8>,
}

/// Serves the session `reg` on `ctl` until the board says goodbye, runs no test for
/// the idle timeout, or breaks the protocol; logs it.
pub(super) fn run(ctl: Control, from: SocketAddr, reg: Registered, shared: &Shared) {
    let log = &*shared.log;
    let id = reg.id;
    let began = Instant::now();
    let board = reg
        .registry()
        .slots()
        .get(&id)
        .and_then(|s| s.board.as_ref())
        .map_or_else(String::new, |b| format!(" by board {}", b.as_str()));
    let mut s = Session {
        ctl,
        from,
        reg,
        shared,
        cpu: procstat::Reader::new(&shared.stat),
        buf: Vec::new(),
    };
    let who = format!("peer: {from} session {id:016x}");
    log(&format!("{who}: opened{board}"));
    let _ = s.ctl.stream().set_write_timeout(Some(tcp::IO_TIMEOUT));
    let hello = Reply::Hello {
        version: VERSION,
        session: id,
    };
    let ended = match s.ctl.send(&hello) {
        Ok(()) => s.serve(&who),
        Err(e) => e.to_string(),
    };
    log(&format!(
        "{who}: ended after {:.1} s: {ended}",
        began.elapsed().as_secs_f64()
    ));
}

impl Session<'_> {
    /// Serves requests; returns how the session ended. Only a request served counts as
    /// activity: the session ends the idle timeout after the last test it ran (or after
    /// it opened), however many refused requests or trickled bytes came since.
    fn serve(&mut self, who: &str) -> String {
        let log = &*self.shared.log;
        let idle = self.shared.options.idle_timeout;
        let mut last_test = Instant::now();
        loop {
            let req: Request = match self.ctl.recv_by(last_test + idle) {
                Ok(r) => r,
                Err(NetError::Timeout(_)) => {
                    return format!("no test request within {} ms: closed", idle.as_millis())
                }
                Err(e) => return e.to_string(),
            };
            // The request in words; the log escapes what the board wrote in it.
            let asked = req.words();
            let result = match req {
                Request::Throughput {
                    test,
                    direction,
                    streams,
                    omit_ms,
                    duration_ms,
                    interval_ms,
                } => self.throughput(
                    test,
                    direction,
                    streams,
                    Timing::from_ms(omit_ms, interval_ms, duration_ms),
                    who,
                ),
                Request::Latency { test, .. } => self.latency(test),
                Request::HttpFromPeer { test, bytes } => self.http_from_peer(test, bytes),
                Request::HttpFromBoard { test, url } => self.http_from_board(test, &url),
                Request::Udp {
                    test,
                    direction,
                    bitrate,
                    datagram_bytes,
                    omit_ms,
                    duration_ms,
                } => self.udp(
                    test,
                    direction,
                    bitrate,
                    datagram_bytes,
                    Timing::from_ms(omit_ms, duration_ms.max(1), duration_ms),
                    who,
                ),
                Request::Stop { test } => Err(NetError::Protocol(format!(
                    "Stop for test {test} outside its run"
                ))),
                Request::Bye => return "goodbye from the board".into(),
            };
            if let Some(e) = self.cpu.take_error() {
                log(&format!("{who}: cpu: {e}"));
            }
            match result {
                Ok(done) => {
                    last_test = Instant::now();
                    log(&format!("{who}: {asked}: {done}"));
                }
                Err(e) => {
                    log(&format!("{who}: {asked}: {e}"));
                    let sent = self.ctl.send(&Reply::Error {
                        message: e.to_string(),
                    });
                    if let Err(e) = sent {
                        return e.to_string();
                    }
                    if matches!(e, NetError::Closed(_)) {
                        return e.to_string();
                    }
                }
            }
        }
    }

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
            match self.reg.data.recv_timeout(left.min(POLL)) {
                Ok(d) if d.session == self.reg.id && d.test == test => {
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
        who: &str,
    ) -> Result<String, NetError> {
        t.check().map_err(|e| NetError::Invalid(e.to_string()))?;
        check_timing(&t)?;
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
                        "expected the board's stop of test {test}, got {}",
                        other.words()
                    )))
                }
            }
            let results = streams.finish(END_GRACE);
            self.ctl.send(&Reply::ThroughputDone { test, side })?;
            results
        };
        let mut bytes = 0u64;
        for (i, r) in results.iter().enumerate() {
            match r {
                Ok(e) => bytes = bytes.saturating_add(e.bytes),
                Err(e) => (self.shared.log)(&format!("{who}: test {test} stream {i}: {e}")),
            }
        }
        let verb = if receiver { "received" } else { "sent" };
        Ok(format!("{verb} {bytes} bytes on {n} TCP stream(s)"))
    }

    fn latency(&mut self, test: u64) -> Result<String, NetError> {
        let mut conns = self.collect(test, 1)?;
        let r = conns
            .pop()
            .ok_or_else(|| NetError::Protocol("no connection".into()))?;
        let mut w = r.get_ref().try_clone().ctx("latency connection")?;
        self.ctl.send(&Reply::Started { test })?;
        let echoed = crate::latency::echo(r, &mut w).ctx("latency: echoing")?;
        self.ctl.send(&Reply::LatencyDone { test, echoed })?;
        Ok(format!("echoed {echoed} bytes"))
    }

    /// `HttpFromPeer`: reserves `bytes` of the peer's shared HTTP budget (waiting up to
    /// [`HTTP_BUDGET_WAIT`]), builds the object, serves it to the session's `GET`, and
    /// frees both when the wait ([`super::PeerOptions::http_wait`]) or the delivery is
    /// over: nothing outlives the request.
    fn http_from_peer(&mut self, test: u64, bytes: u64) -> Result<String, NetError> {
        if bytes == 0 || bytes > MAX_HTTP_BYTES {
            return Err(NetError::Invalid(format!(
                "http bytes must be 1 ..= {MAX_HTTP_BYTES}, not {bytes}"
            )));
        }
        let ctl = &self.ctl;
        let _held = self
            .reg
            .registry()
            .reserve_http(
                bytes,
                self.shared.options.http_budget,
                Instant::now() + HTTP_BUDGET_WAIT,
                &|| ctl.closed(),
            )
            .map_err(NetError::Failed)?;
        let blob = http::blob(bytes, Path::new(MEMINFO))?;
        while self.reg.http.try_recv().is_ok() {}
        let wants = self.reg.wants_http.clone();
        wants.store(true, Ordering::SeqCst);
        let served = self.wait_for_get(test, &blob);
        wants.store(false, Ordering::SeqCst);
        served
    }

    fn wait_for_get(&mut self, test: u64, blob: &[u8]) -> Result<String, NetError> {
        self.ctl.send(&Reply::HttpReady {
            test,
            path: http::BLOB_PATH.into(),
        })?;
        let deadline = Instant::now() + self.shared.options.http_wait;
        loop {
            if self.ctl.closed() {
                return Err(NetError::Closed("control".into()));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let c = match self.reg.http.recv_timeout(left.min(POLL)) {
                Ok(c) => c,
                Err(RecvTimeoutError::Timeout) if Instant::now() < deadline => continue,
                Err(_) => return Err(NetError::Timeout("waiting for GET /blob".into())),
            };
            let by = Instant::now() + http::transfer_time(blob.len() as u64);
            if let Some(served) =
                http::answer(c.conn, Some(c.request_line), Some(blob), &mut self.cpu, by)?
            {
                self.ctl.send(&Reply::HttpServed {
                    test,
                    bytes: served.bytes,
                    cpu: served.cpu,
                })?;
                return Ok(format!("served {} bytes over HTTP", served.bytes));
            }
        }
    }

    fn http_from_board(&mut self, test: u64, url: &str) -> Result<String, NetError> {
        let (addr, path) = match self.shared.options.board_address {
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
        })?;
        Ok(format!("fetched {} bytes from {addr}", fetch.bytes))
    }

    /// One UDP run (see [`crate::udp`]): bounded by the plan and the link, waits for
    /// the UDP socket and the board's hello, says `UdpStarted`, then receives from or
    /// sends to where the hello came from (on the control connection's address only).
    fn udp(
        &mut self,
        test: u64,
        direction: NetDirection,
        bitrate: u64,
        datagram_bytes: u32,
        t: Timing,
        who: &str,
    ) -> Result<String, NetError> {
        udp::check(bitrate, datagram_bytes)?;
        check_bitrate(bitrate, self.shared.options.max_udp_bitrate)?;
        if t.duration_ns == 0 {
            return Err(NetError::Invalid(
                "udp: duration must be at least 1 ms".into(),
            ));
        }
        check_timing(&t)?;
        let shared: &Shared = self.shared;
        let sock = shared
            .udp
            .as_ref()
            .map_err(|e| NetError::Failed(e.clone()))?;
        let _one_at_a_time = udp_turn(shared)?;
        udp::drain(sock);
        let board = self.udp_hello(sock, test, who)?;
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
                self.ctl.send(&Reply::UdpReceived { test, counts, cpu })?;
                Ok(format!(
                    "received {} datagrams ({} bytes) from {board}",
                    counts.received, counts.bytes
                ))
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
                })?;
                Ok(format!(
                    "sent {} datagrams of {datagram_bytes} bytes to {board}",
                    s.sent
                ))
            }
        }
    }
}

/// The UDP socket to one session alone, once another board's run ended (within the
/// hello wait).
fn udp_turn(shared: &Shared) -> Result<MutexGuard<'_, ()>, NetError> {
    let wait = shared.options.udp_hello_wait;
    let deadline = Instant::now() + wait;
    loop {
        match shared.udp_busy.try_lock() {
            Ok(g) => return Ok(g),
            Err(TryLockError::Poisoned(p)) => return Ok(p.into_inner()),
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                thread::sleep(POLL / 4);
            }
            Err(TryLockError::WouldBlock) => {
                return Err(NetError::Failed(format!(
                    "busy: another board's UDP run held this peer's UDP socket for {} \
                         ms; UDP runs go one at a time, retry later",
                    wait.as_millis()
                )))
            }
        }
    }
}

impl Session<'_> {
    /// Where the board's hello for `test` came from (within the hello wait). Only a
    /// hello from the control connection's own IP address counts: one from elsewhere
    /// is ignored and logged, so nobody can aim the peer's UDP at a third address.
    fn udp_hello(&self, sock: &UdpSocket, test: u64, who: &str) -> Result<SocketAddr, NetError> {
        let wait = self.shared.options.udp_hello_wait;
        let deadline = Instant::now() + wait;
        let own = self.from.ip().to_canonical();
        sock.set_read_timeout(Some(POLL))
            .ctx("udp: socket options")?;
        let mut buf = [0u8; udp::HELLO_LEN + 1];
        let mut ignored = 0u64;
        while Instant::now() < deadline {
            if self.ctl.closed() {
                return Err(NetError::Closed("control".into()));
            }
            match sock.recv_from(&mut buf) {
                Ok((n, src)) if udp::parse_hello(&buf[..n]) == Some((self.reg.id, test)) => {
                    if src.ip().to_canonical() == own {
                        return Ok(src);
                    }
                    if ignored == 0 {
                        (self.shared.log)(&format!(
                            "{who}: ignored a UDP hello from {src}: not the address of the \
                             session's control connection ({own})"
                        ));
                    }
                    ignored += 1;
                }
                Ok(_) => {} // junk, announcements, an old run's datagrams
                Err(e) if crate::quiet_receive(&e) => {}
                Err(e) => return Err(NetError::io("udp: waiting for the hello", e)),
            }
        }
        let port = sock.local_addr().map_or(0, |a| a.port());
        let elsewhere = if ignored > 0 {
            format!(
                "; {ignored} hello(s) from other addresses ignored: UDP goes only to the \
                 control connection's address"
            )
        } else {
            String::new()
        };
        Err(NetError::Timeout(format!(
            "udp: no hello from the board ({own}) on UDP port {port} within {} ms \
             (UDP blocked?){elsewhere}",
            wait.as_millis()
        )))
    }
}
