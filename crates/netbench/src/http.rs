//! HTTP from RAM, as the seeds' `wget` of a file on a RAM disk: a minimal HTTP/1.1 GET
//! client that counts and discards the body, and a read-only server of one object held
//! in RAM (`GET /blob` → the object, anything else → 404).
//!
//! Bounded on both ends: request and response heads are size-limited, every read and
//! write has a timeout, and the server serves one connection at a time.

use std::io::{self, BufReader, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use benchboot_results::network::CpuTimes;

use crate::control::{read_line, read_line_by};
use crate::tcp::{self, BLOCK};
use crate::{procstat, Context, NetError};

pub mod head;

/// The one path served.
pub const BLOB_PATH: &str = "/blob";

/// Longest request head (request line, headers and the empty line) either server
/// reads, bytes ([`head::parse_request`] decides every head within it).
pub const MAX_REQUEST: usize = 8 * 1024;

/// Longest response head the client reads, bytes.
pub const MAX_RESPONSE_HEAD: usize = 64 * 1024;

/// How long a connect may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The slowest link an HTTP transfer is given time for, bytes/s (256 kbit/s): QEMU's
/// full-speed usb-net behind its user network moves ~60 kB/s (0.5 Mbit/s, measured on
/// the rpi-3b tier), slower still when several guests share the host's cores.
pub const SLOWEST_TRANSFER: u64 = 32_000;

/// How long moving `bytes` over HTTP may take: a minute plus the time at
/// [`SLOWEST_TRANSFER`] bytes/s. A guard against a hung (or deliberately slow) other
/// end, not a speed limit: the board waits this long for the peer's object, the peer
/// serves its object for this long at most.
pub fn transfer_time(bytes: u64) -> Duration {
    Duration::from_secs(60 + bytes / SLOWEST_TRANSFER)
}

/// How much of the object one write hands the socket, bytes: between two writes the
/// server looks at its deadline.
const WRITE_CHUNK: usize = 1 << 20;

/// The object: `len` bytes of a non-zero pattern, written out so every page is really
/// backed by RAM (a zero-filled allocation could be the kernel's shared zero page).
/// Refused, rather than risking the OOM killer (on the board: PID 1), when `len` is
/// more than half of `MemAvailable` in `meminfo` (`/proc/meminfo`; unreadable: not
/// checked) or cannot be allocated.
pub fn blob(len: u64, meminfo: &Path) -> Result<Vec<u8>, NetError> {
    if let Some(avail) = std::fs::read_to_string(meminfo)
        .ok()
        .and_then(|t| mem_available(&t))
    {
        if len > avail / 2 {
            return Err(NetError::Invalid(format!(
                "an HTTP object of {} MiB does not fit: {} MiB of RAM available",
                len >> 20,
                avail >> 20
            )));
        }
    }
    let too_big = || NetError::Invalid(format!("cannot allocate {len} bytes"));
    let len = usize::try_from(len).map_err(|_| too_big())?;
    let chunk = tcp::pattern(BLOCK);
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| too_big())?;
    while v.len() < len {
        let n = (len - v.len()).min(chunk.len());
        v.extend_from_slice(&chunk[..n]);
    }
    Ok(v)
}

/// `MemAvailable` of a `/proc/meminfo` text, bytes (proc(5); Linux 3.14+).
pub fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `http://IP:PORT/path` (or `http://IP/path`, port 80; `[v6]` in brackets) → address
/// and path. Host names are refused: nothing here resolves names.
pub fn parse_url(url: &str) -> Result<(SocketAddr, String), NetError> {
    let bad = |why: &str| NetError::Protocol(format!("url `{url}`: {why}"));
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| bad("only http:// is supported"))?;
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let addr = host
        .parse::<SocketAddr>()
        .or_else(|_| {
            host.trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
                .map(|ip| SocketAddr::new(ip, 80))
        })
        .map_err(|_| bad("the host must be an IP address"))?;
    if path.bytes().any(|b| b.is_ascii_control() || b == b' ') {
        return Err(bad("the path holds spaces or control characters"));
    }
    Ok((addr, path.to_owned()))
}

/// One GET: body bytes received and ns from sending the request to the last body byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fetch {
    pub bytes: u64,
    pub nanos: u64,
}

/// GETs `path` from `addr`, reading the body into `buf` (reused, not kept; must not be
/// empty) until Content-Length bytes (or the end of the stream without one).
pub fn get(addr: SocketAddr, path: &str, buf: &mut [u8]) -> Result<Fetch, NetError> {
    let s = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT)
        .ctx(&format!("http: connecting to {addr}"))?;
    tcp::prepare(&s).ctx("http: socket options")?;
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: benchboot\r\nAccept: */*\r\nConnection: close\r\n\r\n"
    );
    let mut r = BufReader::with_capacity(16 * 1024, &s);
    let t0 = Instant::now();
    (&s).write_all(request.as_bytes())
        .ctx("http: sending the request")?;

    let mut line = Vec::new();
    let mut head = 0usize;
    let mut next = |r: &mut BufReader<&TcpStream>, line: &mut Vec<u8>| match read_line(
        r,
        line,
        MAX_RESPONSE_HEAD.saturating_sub(head),
    ) {
        Ok(true) => {
            head += line.len() + 2;
            Ok(())
        }
        Ok(false) => Err(NetError::Closed("http: response head".into())),
        Err(e) => Err(NetError::io("http: reading the response head", e)),
    };
    next(&mut r, &mut line)?;
    let status = String::from_utf8_lossy(&line).into_owned();
    let code = status
        .strip_prefix("HTTP/1.")
        .and_then(|s| s.get(2..5))
        .ok_or_else(|| NetError::Protocol(format!("http: not a status line: `{status}`")))?;
    if code != "200" {
        return Err(NetError::Protocol(format!(
            "http: {addr}{path}: `{status}`"
        )));
    }
    let mut length: Option<u64> = None;
    loop {
        next(&mut r, &mut line)?;
        if line.is_empty() {
            break;
        }
        let text = String::from_utf8_lossy(&line);
        let Some((name, value)) = text.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length =
                Some(value.parse().map_err(|_| {
                    NetError::Protocol(format!("http: bad Content-Length `{value}`"))
                })?);
        } else if name.eq_ignore_ascii_case("transfer-encoding")
            && !value.eq_ignore_ascii_case("identity")
        {
            return Err(NetError::Protocol(format!(
                "http: Transfer-Encoding `{value}` is not supported (send Content-Length)"
            )));
        }
    }

    let mut got = 0u64;
    loop {
        let want = match length {
            Some(l) => (l - got).min(buf.len() as u64) as usize,
            None => buf.len(),
        };
        if want == 0 {
            break;
        }
        let n = match r.read(&mut buf[..want]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(NetError::io("http: reading the body", e)),
        };
        if n == 0 {
            if let Some(l) = length {
                return Err(NetError::Closed(format!(
                    "http: body cut short after {got} of {l} bytes"
                )));
            }
            break;
        }
        got += n as u64;
    }
    Ok(Fetch {
        bytes: got,
        nanos: t0.elapsed().as_nanos() as u64,
    })
}

/// A served object: body bytes written, and CPU from the request to the client closing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Served {
    pub bytes: u64,
    pub cpu: CpuTimes,
}

/// Reads a request head (its request line from `first` when the caller read it
/// already), the whole head due by `deadline`, and parses it ([`head::parse_request`]):
/// `Ok(Ok((method, path)))`, or `Ok(Err(_))` for a head the parser refuses (answered with
/// its status).
fn read_request(
    r: &mut BufReader<TcpStream>,
    first: Option<Vec<u8>>,
    deadline: Instant,
) -> Result<Result<(String, String), head::Error>, NetError> {
    let mut line = Vec::new();
    let mut seen = 0usize;
    let mut next = |r: &mut BufReader<TcpStream>, line: &mut Vec<u8>| match read_line_by(
        r,
        line,
        MAX_REQUEST.saturating_sub(seen),
        deadline,
    ) {
        Ok(true) => {
            seen += line.len() + 2;
            Ok(())
        }
        Ok(false) => Err(NetError::Closed("http: request".into())),
        Err(e) => Err(NetError::io("http: reading the request", e)),
    };
    let mut bytes = match first {
        Some(l) => l,
        None => {
            next(r, &mut line)?;
            std::mem::take(&mut line)
        }
    };
    bytes.extend_from_slice(b"\r\n");
    loop {
        next(r, &mut line)?;
        bytes.extend_from_slice(&line);
        bytes.extend_from_slice(b"\r\n");
        if line.is_empty() {
            break;
        }
    }
    Ok(head::parse_request(&bytes).map(|q| (q.method.to_owned(), q.path.to_owned())))
}

/// Writes `blob` to `s` by `deadline`: up to [`WRITE_CHUNK`] bytes a call and, once less
/// than [`tcp::IO_TIMEOUT`] is left, a write timeout of what is left, so a client that
/// reads slowly but steadily cannot stretch one write past it.
///
/// # Errors
/// [`NetError::Timeout`] at the deadline; the socket's error otherwise.
fn send_by(s: &mut TcpStream, blob: &[u8], deadline: Instant) -> Result<(), NetError> {
    let too_slow = || {
        NetError::Timeout(format!(
            "http: sending the object ({} bytes) to a client this slow",
            blob.len()
        ))
    };
    let mut rest = blob;
    while !rest.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(too_slow());
        }
        if left < tcp::IO_TIMEOUT {
            s.set_write_timeout(Some(left))
                .ctx("http: sending the object")?;
        }
        let n = rest.len().min(WRITE_CHUNK);
        match s.write(&rest[..n]) {
            Ok(0) => {
                return Err(io::Error::from(io::ErrorKind::WriteZero))
                    .ctx("http: sending the object")
            }
            Ok(n) => rest = &rest[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) && Instant::now() >= deadline =>
            {
                return Err(too_slow())
            }
            Err(e) => return Err(e).ctx("http: sending the object"),
        }
    }
    Ok(())
}

/// Answers one connection: `GET /blob` gets `blob` (then the server waits for the client
/// to close, so the CPU span covers the delivery) → `Some`; anything else, or anything
/// at all without a `blob`, a 404 → `None`. All of it ends by `deadline` (give
/// [`transfer_time`] of the object): a client that reads too slowly to have the object
/// by then is cut off with [`NetError::Timeout`]; one that has it but never closes is
/// left at the deadline, or at most [`tcp::IO_TIMEOUT`] past it (the object was served).
pub fn answer(
    mut r: BufReader<TcpStream>,
    first: Option<Vec<u8>>,
    blob: Option<&[u8]>,
    cpu: &mut procstat::Reader,
    deadline: Instant,
) -> Result<Option<Served>, NetError> {
    tcp::prepare(r.get_ref()).ctx("http: socket options")?;
    let request = read_request(&mut r, first, deadline)?;
    let mut s = r.into_inner();
    let (method, path) = match request {
        Ok(mp) => mp,
        Err(e) => {
            let head = format!(
                "HTTP/1.1 {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                e.status()
            );
            let _ = s.write_all(head.as_bytes());
            return Ok(None);
        }
    };
    let Some(blob) = blob.filter(|_| method == "GET" && path == BLOB_PATH) else {
        let body = b"not found: this server only has GET /blob\n";
        let head = format!(
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = s.write_all(head.as_bytes()).and_then(|_| s.write_all(body));
        return Ok(None);
    };
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        blob.len()
    );
    let before = cpu.read();
    s.write_all(head.as_bytes())
        .ctx("http: sending the object")?;
    send_by(&mut s, blob, deadline)?;
    // Wait for the client to close (it has read everything then); a client that stays
    // silent ends the wait after the read timeout, one that keeps sending at the
    // deadline.
    let mut sink = [0u8; 512];
    while Instant::now() <= deadline {
        match s.read(&mut sink) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let after = cpu.read();
    Ok(Some(Served {
        bytes: blob.len() as u64,
        cpu: procstat::delta(&before, &after),
    }))
}

/// A temporary read-only server of one object, on its own thread.
#[derive(Debug)]
pub struct BlobServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Result<Served, NetError>>,
}

impl BlobServer {
    /// Listens on `bind` (port 0: any free port) and serves `blob` at `GET /blob` to
    /// one connection at a time until [`BlobServer::finish`].
    pub fn start(bind: SocketAddr, blob: Arc<Vec<u8>>, stat_path: &Path) -> io::Result<BlobServer> {
        let listener = TcpListener::bind(bind)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let mut cpu = procstat::Reader::new(stat_path);
        let thread = thread::Builder::new()
            .name("netbench-http".into())
            .spawn(move || {
                let mut last = Err(NetError::Protocol(
                    "http: nothing fetched the object".into(),
                ));
                for conn in listener.incoming() {
                    if flag.load(Relaxed) {
                        break;
                    }
                    let Ok(conn) = conn else {
                        thread::sleep(Duration::from_millis(10));
                        continue;
                    };
                    let by = Instant::now() + transfer_time(blob.len() as u64);
                    match answer(BufReader::new(conn), None, Some(&blob), &mut cpu, by) {
                        Ok(Some(served)) => last = Ok(served),
                        Ok(None) => {}
                        Err(e) => {
                            if last.is_err() {
                                last = Err(e);
                            }
                        }
                    }
                }
                last
            })?;
        Ok(BlobServer { addr, stop, thread })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR/blob`.
    pub fn url(&self) -> String {
        format!("http://{}{BLOB_PATH}", self.addr)
    }

    /// Stops the server (waking its `accept` with a connection of its own) and returns
    /// the last object served, or why none was.
    pub fn finish(self) -> Result<Served, NetError> {
        self.stop.store(true, Relaxed);
        let mut wake = self.addr;
        if wake.ip().is_unspecified() {
            wake.set_ip(match wake {
                SocketAddr::V4(_) => IpAddr::from([127, 0, 0, 1]),
                SocketAddr::V6(_) => IpAddr::from([0u16, 0, 0, 0, 0, 0, 0, 1]),
            });
        }
        let _ = TcpStream::connect_timeout(&wake, CONNECT_TIMEOUT);
        self.thread
            .join()
            .unwrap_or_else(|_| Err(NetError::Protocol("http: server thread panicked".into())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            parse_url("http://10.55.0.1:40000/blob").unwrap(),
            ("10.55.0.1:40000".parse().unwrap(), "/blob".to_owned())
        );
        assert_eq!(
            parse_url("http://[::1]:8080/blob").unwrap().0,
            "[::1]:8080".parse().unwrap()
        );
        assert_eq!(
            parse_url("http://10.0.0.1").unwrap(),
            ("10.0.0.1:80".parse().unwrap(), "/".to_owned())
        );
        assert!(parse_url("https://10.0.0.1/").is_err());
        assert!(parse_url("http://example.com/blob").is_err());
        assert!(parse_url("http://10.0.0.1/a b").is_err());
    }

    #[test]
    fn blob_is_exact_and_not_zero() {
        let b = blob(BLOCK as u64 * 2 + 5, Path::new("/proc/meminfo")).unwrap();
        assert_eq!(b.len(), BLOCK * 2 + 5);
        assert!(b.iter().all(|&x| x != 0));
    }

    #[test]
    fn a_blob_beyond_half_the_available_ram_is_refused() {
        let info = "MemTotal:         443508 kB\nMemFree:          301204 kB\nMemAvailable:     358100 kB\n";
        assert_eq!(mem_available(info), Some(358100 * 1024));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
        let dir = std::env::temp_dir().join(format!("netbench-meminfo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("meminfo");
        std::fs::write(&path, info).unwrap();
        // A Pi Zero with 350 MiB available: 100 MiB fits, 1 GiB does not.
        let e = blob(1 << 30, &path).unwrap_err();
        assert!(
            e.to_string().contains("1024 MiB does not fit: 349 MiB"),
            "{e}"
        );
        assert!(blob(1 << 20, &path).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn serves_the_blob_and_404s_the_rest() {
        let stat = Path::new("/proc/stat");
        let server = BlobServer::start(
            "127.0.0.1:0".parse().unwrap(),
            Arc::new(blob(300_000, Path::new("/proc/meminfo")).unwrap()),
            stat,
        )
        .unwrap();
        let mut buf = vec![0u8; 4096];
        let f = get(server.addr(), BLOB_PATH, &mut buf).unwrap();
        assert_eq!(f.bytes, 300_000);
        let e = get(server.addr(), "/results.json", &mut buf).unwrap_err();
        assert!(e.to_string().contains("404"), "{e}");
        // A request head beyond the bound is refused, and the server goes on.
        let mut s = TcpStream::connect(server.addr()).unwrap();
        let _ = s.write_all(
            format!(
                "GET /blob HTTP/1.1\r\nX: {}\r\n\r\n",
                "a".repeat(MAX_REQUEST)
            )
            .as_bytes(),
        );
        drop(s);
        assert_eq!(
            get(server.addr(), BLOB_PATH, &mut buf).unwrap().bytes,
            300_000
        );
        assert_eq!(server.finish().unwrap().bytes, 300_000);
    }

    /// A client that reads slowly but steadily (4 KiB every 20 ms, ~200 KiB/s) is cut
    /// off at the deadline: a write that makes a little progress each time cannot
    /// stretch past it (a 32 MiB object at that pace would hold the server for minutes).
    #[test]
    fn a_slow_steady_reader_is_cut_off_at_the_deadline() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let done = Arc::new(AtomicBool::new(false));
        let stop = done.clone();
        let reader = thread::spawn(move || {
            let mut c = TcpStream::connect(addr).unwrap();
            c.write_all(b"GET /blob HTTP/1.1\r\n\r\n").unwrap();
            let mut buf = [0u8; 4096];
            while !stop.load(Relaxed) && c.read(&mut buf).is_ok_and(|n| n > 0) {
                thread::sleep(Duration::from_millis(20));
            }
        });
        let (s, _) = listener.accept().unwrap();
        let object = vec![7u8; 32 << 20];
        let mut cpu = procstat::Reader::new(Path::new("/proc/stat"));
        let start = Instant::now();
        let deadline = start + Duration::from_millis(500);
        let r = answer(BufReader::new(s), None, Some(&object), &mut cpu, deadline);
        let took = start.elapsed();
        match r {
            Err(NetError::Timeout(why)) => assert!(why.contains("this slow"), "{why}"),
            other => panic!("{other:?}"),
        }
        done.store(true, Relaxed);
        reader.join().unwrap();
        assert!(took < Duration::from_secs(3), "{took:?}");
    }

    #[test]
    fn a_server_nobody_fetched_from_says_so() {
        let server = BlobServer::start(
            "127.0.0.1:0".parse().unwrap(),
            Arc::new(blob(10, Path::new("/proc/meminfo")).unwrap()),
            Path::new("/proc/stat"),
        )
        .unwrap();
        let e = server.finish().unwrap_err();
        assert!(e.to_string().contains("nothing fetched"), "{e}");
    }

    #[test]
    fn the_blob_server_refuses_a_bad_head_with_the_parsers_status() {
        let server = BlobServer::start(
            "127.0.0.1:0".parse().unwrap(),
            Arc::new(blob(10, Path::new("/proc/meminfo")).unwrap()),
            Path::new("/proc/stat"),
        )
        .unwrap();
        let ask = |head: &[u8]| {
            let mut c = TcpStream::connect(server.addr()).unwrap();
            c.write_all(head).unwrap();
            let mut answer = String::new();
            let _ = c.read_to_string(&mut answer);
            answer.lines().next().unwrap_or("").to_owned()
        };
        assert_eq!(
            ask(b"GET /../blob HTTP/1.1\r\n\r\n"),
            "HTTP/1.1 400 Bad Request"
        );
        assert_eq!(
            ask(b"GET /blob HTTP/1.1\r\nno colon\r\n\r\n"),
            "HTTP/1.1 400 Bad Request"
        );
        assert_eq!(
            ask(b"GET /other HTTP/1.1\r\n\r\n"),
            "HTTP/1.1 404 Not Found"
        );
        // A good head still gets the object.
        let fetched = get(server.addr(), BLOB_PATH, &mut [0u8; 64]).unwrap();
        assert_eq!(fetched.bytes, 10);
        server.finish().unwrap();
    }
}
