//! The throughput engine: N parallel TCP streams, one thread each, and a sampler.
//!
//! A sender writes one [`BLOCK`]-byte buffer in a loop until told to stop, then shuts
//! its write side down; a receiver reads into one [`BLOCK`]-byte buffer until the end of
//! the stream. Each thread publishes its running byte count in its own cache-line-sized
//! [`Counter`] (a plain store: one writer, no read-modify-write, no lock), so the hot
//! loop is one syscall and one store. The [`sample`] loop reads the counters and
//! `/proc/stat` at each interval boundary. The receiver's counts are the reported ones,
//! as iperf3 reports the receiver side.
//!
//! The figures are the bytes counted inside the test's window. What is still queued when
//! the window closes (the sender's socket buffer, a relay's, a slow link's) is the
//! stream's tail: [`Streams::finish`] gives it a grace period to arrive, then resets the
//! connection (`SO_LINGER` 0, so the queue is dropped rather than drained into the next
//! test), as iperf3 closes its data sockets at the end of a test. Only an I/O error
//! before the window closed fails a stream.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::interval::{Sample, Timing};
use crate::procstat;

/// Bytes per write (and per read at most): iperf3's default TCP block, 128 KiB.
pub const BLOCK: usize = 128 * 1024;

/// Longest a data read or write may block; a silent peer fails the stream after this.
pub const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// Bytes moved by one stream so far; alone on its cache line so streams on different
/// cores do not share one.
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct Counter(AtomicU64);

impl Counter {
    pub fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// Sets the data-socket options both ends use: I/O timeouts of [`IO_TIMEOUT`].
pub fn prepare(s: &TcpStream) -> io::Result<()> {
    s.set_read_timeout(Some(IO_TIMEOUT))?;
    s.set_write_timeout(Some(IO_TIMEOUT))
}

/// The running threads of one run's streams.
#[derive(Debug)]
pub struct Streams {
    counters: Vec<Arc<Counter>>,
    /// Handles to shut the sockets down, which wakes any thread blocked on them.
    sockets: Vec<TcpStream>,
    threads: Vec<JoinHandle<io::Result<u64>>>,
    live: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

/// Decrements the live count when a stream thread ends, however it ends.
struct Alive(Arc<AtomicUsize>);

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Relaxed);
    }
}

impl Streams {
    fn new(n: usize) -> Streams {
        Streams {
            counters: Vec::with_capacity(n),
            sockets: Vec::with_capacity(n),
            threads: Vec::with_capacity(n),
            live: Arc::new(AtomicUsize::new(0)),
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    fn spawn(
        &mut self,
        socket: TcpStream,
        body: impl FnOnce(&Counter, &AtomicBool) -> io::Result<u64> + Send + 'static,
    ) -> io::Result<()> {
        let counter = Arc::new(Counter::default());
        let (c, stop) = (counter.clone(), self.stop.clone());
        self.live.fetch_add(1, Relaxed);
        let alive = Alive(self.live.clone());
        let spawned = thread::Builder::new()
            .name(format!("netbench-{}", self.threads.len()))
            .spawn(move || {
                let _alive = alive;
                body(&c, &stop)
            });
        // On a spawn failure the closure (and its `Alive`) is dropped: the count is right.
        self.threads.push(spawned?);
        self.counters.push(counter);
        self.sockets.push(socket);
        Ok(())
    }

    /// Starts one sender per connection. They write until [`Streams::stop`].
    pub fn send(conns: Vec<TcpStream>) -> io::Result<Streams> {
        let mut s = Streams::new(conns.len());
        for conn in conns {
            let handle = conn.try_clone()?;
            if let Err(e) = s.spawn(handle, move |c, stop| send_loop(conn, c, stop)) {
                s.abort();
                return Err(e);
            }
        }
        Ok(s)
    }

    /// Starts one receiver per connection: `(reader, socket)` where `reader` reads the
    /// socket (possibly through a buffer that holds its first bytes already). They read
    /// until the end of the stream.
    pub fn receive<R: Read + Send + 'static>(conns: Vec<(R, TcpStream)>) -> io::Result<Streams> {
        let mut s = Streams::new(conns.len());
        for (reader, socket) in conns {
            if let Err(e) = s.spawn(socket, move |c, stop| recv_loop(reader, c, stop)) {
                s.abort();
                return Err(e);
            }
        }
        Ok(s)
    }

    /// Bytes moved so far, all streams.
    pub fn bytes(&self) -> u64 {
        self.counters.iter().map(|c| c.get()).sum()
    }

    /// Every stream's TCP_INFO now (crates/tcpinfo), in stream order: `None` for one
    /// whose socket the kernel would not answer for, and for all off Linux.
    pub fn tcp_info(&self) -> Vec<Option<benchboot_tcpinfo::TcpInfo>> {
        self.sockets
            .iter()
            .map(benchboot_tcpinfo::of_stream)
            .collect()
    }

    /// Streams still running.
    pub fn live(&self) -> usize {
        self.live.load(Relaxed)
    }

    /// Tells senders to stop after their current write.
    pub fn stop(&self) {
        self.stop.store(true, Relaxed);
    }

    /// Resets every connection: `SO_LINGER` 0 (the close that follows sends RST and
    /// drops what is queued instead of draining it), then shuts the sockets down, so
    /// blocked threads return at once.
    fn abort(&self) {
        for s in &self.sockets {
            let _ = socket2::SockRef::from(s).set_linger(Some(Duration::ZERO));
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    /// Closes the window: stops senders, waits up to `grace` for every stream to end on
    /// its own (its tail arrives), then resets the rest and joins all. Per stream: the
    /// bytes its thread moved, or why it failed before the window closed. A stream whose
    /// tail was cut ends with `cut: true`: its figures, taken inside the window, stand.
    pub fn finish(mut self, grace: Duration) -> Vec<Result<Ended, StreamError>> {
        self.stop();
        let deadline = Instant::now() + grace;
        while self.live() > 0 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(2));
        }
        let cut = self.live() > 0;
        if cut {
            self.abort();
        } else {
            // Every stream ended on its own: closed plainly, so the kernel still delivers
            // what a sender queued (the reset of `Drop` would throw that tail away, and
            // the receiver would count less than was sent).
            self.sockets.clear();
        }
        std::mem::take(&mut self.threads)
            .into_iter()
            .map(|t| match t.join() {
                Ok(Ok(bytes)) => Ok(Ended { bytes, cut }),
                Ok(Err(e)) => Err(StreamError::Io(e)),
                Err(_) => Err(StreamError::Panicked),
            })
            .collect()
    }
}

impl Drop for Streams {
    /// Streams never outlive their run: dropped unfinished (an error path), they stop
    /// and their sockets are shut down, so no thread keeps sending or waiting.
    fn drop(&mut self) {
        self.stop();
        self.abort();
    }
}

/// Why one stream failed before its window closed ([`Streams::finish`]).
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// Its socket failed (the connection reset or refused mid-window, ...).
    #[error("{0}")]
    Io(std::io::Error),
    /// Its thread panicked.
    #[error("the stream's thread panicked")]
    Panicked,
}

/// How one stream ended ([`Streams::finish`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    /// Bytes this end's thread moved, window and tail.
    pub bytes: u64,
    /// The tail had not arrived within the grace period: the connection was reset.
    pub cut: bool,
}

/// Whether an I/O error ends the stream (`Ok(total)`) or fails it: once the window has
/// closed (`stop` set), an error is the tail being cut (the other end reset it after
/// its own grace period), not a failure of the figures.
fn ended(e: io::Error, total: u64, stop: &AtomicBool) -> io::Result<u64> {
    if stop.load(Relaxed) {
        Ok(total)
    } else {
        Err(e)
    }
}

/// Non-zero filler, so no link layer can compress the payload.
pub fn pattern(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(2654435761).to_be_bytes()[0] | 1)
        .collect()
}

fn send_loop(mut s: TcpStream, c: &Counter, stop: &AtomicBool) -> io::Result<u64> {
    let buf = pattern(BLOCK);
    let mut total = 0u64;
    while !stop.load(Relaxed) {
        match s.write(&buf) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                total += n as u64;
                c.0.store(total, Relaxed);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return ended(e, total, stop),
        }
    }
    match s.shutdown(Shutdown::Write) {
        Err(e) if e.kind() != io::ErrorKind::NotConnected => ended(e, total, stop),
        _ => Ok(total),
    }
}

fn recv_loop(mut r: impl Read, c: &Counter, stop: &AtomicBool) -> io::Result<u64> {
    let mut buf = vec![0u8; BLOCK];
    let mut total = 0u64;
    loop {
        match r.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => {
                total += n as u64;
                c.0.store(total, Relaxed);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return ended(e, total, stop),
        }
    }
}

/// Longest single sleep of the sampler, so it notices streams that died.
const WAKE: Duration = Duration::from_millis(100);

/// Samples bytes (of `streams`, 0 without), `/proc/stat` and every stream's TCP_INFO
/// ([`crate::tcpstate::Tracker`]; none without streams or off Linux) at every boundary
/// of `t` counted from `start`, until the last boundary, or earlier once every stream
/// ended.
pub fn sample(
    start: Instant,
    t: &Timing,
    streams: Option<&Streams>,
    cpu: &mut procstat::Reader,
) -> Vec<Sample> {
    let n = t.intervals();
    let mut out = Vec::with_capacity(n as usize + 1);
    let mut tracker = crate::tcpstate::Tracker::default();
    for k in 0..=n {
        let at = start + Duration::from_nanos(t.boundary(k));
        loop {
            let now = Instant::now();
            if now >= at {
                break;
            }
            if streams.is_some_and(|s| s.live() == 0) {
                return out;
            }
            thread::sleep((at - now).min(WAKE));
        }
        let elapsed_ns = start.elapsed().as_nanos() as u64;
        let bytes = streams.map_or(0, Streams::bytes);
        let tcp = streams.and_then(|s| tracker.observe(&s.tcp_info()));
        out.push(Sample {
            elapsed_ns,
            bytes,
            cpu: cpu.read(),
            tcp,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        prepare(&a).unwrap();
        prepare(&b).unwrap();
        (a, b)
    }

    #[test]
    fn streams_move_bytes_and_end_cleanly() {
        let (a1, b1) = pair();
        let (a2, b2) = pair();
        let rx = Streams::receive(vec![
            (b1.try_clone().unwrap(), b1),
            (b2.try_clone().unwrap(), b2),
        ])
        .unwrap();
        let tx = Streams::send(vec![a1, a2]).unwrap();
        while rx.bytes() < 4 * BLOCK as u64 {
            thread::sleep(Duration::from_millis(1));
        }
        let sent: u64 = tx
            .finish(Duration::from_secs(10))
            .into_iter()
            .map(|r| r.unwrap())
            .inspect(|e| assert!(!e.cut))
            .map(|e| e.bytes)
            .sum();
        let got: Vec<_> = rx.finish(Duration::from_secs(10));
        let received: u64 = got.into_iter().map(|r| r.unwrap().bytes).sum();
        assert_eq!(sent, received);
        assert!(received >= 4 * BLOCK as u64);
    }

    #[test]
    fn a_receiver_whose_sender_vanishes_ends() {
        let (a, b) = pair();
        let rx = Streams::receive(vec![(b.try_clone().unwrap(), b)]).unwrap();
        drop(a);
        match rx.finish(Duration::from_secs(10)).as_slice() {
            [Ok(e)] => assert_eq!(
                *e,
                Ended {
                    bytes: 0,
                    cut: false
                }
            ),
            other => panic!("{other:?}"),
        }
    }

    /// A sender that goes on past the window (a slow link's queue) is cut after the
    /// grace period: the receiver's bytes stand, and the reset reaches the sender, whose
    /// next write fails instead of draining into the next test.
    #[test]
    fn a_tail_longer_than_the_grace_is_cut_not_a_failure() {
        let (mut a, b) = pair();
        let endless = thread::spawn(move || loop {
            if let Err(e) = a.write_all(&pattern(BLOCK)) {
                return e.kind();
            }
        });
        let rx = Streams::receive(vec![(b.try_clone().unwrap(), b)]).unwrap();
        while rx.bytes() < 2 * BLOCK as u64 {
            thread::sleep(Duration::from_millis(1));
        }
        rx.stop();
        let started = Instant::now();
        let r = rx.finish(Duration::from_millis(200));
        assert!(started.elapsed() < Duration::from_secs(5));
        match r.as_slice() {
            [Ok(Ended { bytes, cut: true })] => assert!(*bytes >= 2 * BLOCK as u64),
            other => panic!("{other:?}"),
        }
        let kind = endless.join().unwrap();
        assert!(
            matches!(
                kind,
                io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe
            ),
            "{kind:?}"
        );
    }

    /// A reset inside the window fails the stream: its figures are not whole.
    #[test]
    fn a_reset_inside_the_window_fails_the_stream() {
        let (a, b) = pair();
        let rx = Streams::receive(vec![(b.try_clone().unwrap(), b)]).unwrap();
        let (mut w, r) = (a.try_clone().unwrap(), a);
        w.write_all(&pattern(1000)).unwrap();
        socket2::SockRef::from(&r)
            .set_linger(Some(Duration::ZERO))
            .unwrap();
        // Unread bytes in `r`'s receive queue are not needed: linger 0 resets on close.
        drop((w, r));
        while rx.live() > 0 {
            thread::sleep(Duration::from_millis(1));
        }
        match rx.finish(Duration::from_secs(1)).as_slice() {
            [Err(StreamError::Io(e))] => {
                assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sampler_takes_one_sample_per_boundary() {
        let t = Timing::from_ms(20, 10, 30);
        let mut cpu = procstat::Reader::new(std::path::Path::new("/nonexistent/stat"));
        let s = sample(Instant::now(), &t, None, &mut cpu);
        assert_eq!(s.len(), 4);
        for (k, x) in s.iter().enumerate() {
            assert!(x.elapsed_ns >= t.boundary(k as u64));
        }
        assert!(cpu.take_error().is_some());
    }

    #[test]
    fn pattern_has_no_zero_bytes() {
        assert!(pattern(BLOCK).iter().all(|&b| b != 0));
    }
}
