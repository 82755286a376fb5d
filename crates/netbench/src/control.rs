//! The control protocol: line-delimited JSON over one TCP connection from the board
//! (the driver) to the peer.
//!
//! Every connection to the peer's port starts with one line that says what it is: a
//! [`Greeting::Hello`] opens a control session (the peer answers [`Reply::Hello`] with a
//! session id), a [`Greeting::Data`] joins stream `stream` of test `test` of that
//! session, and an HTTP request line (`GET /blob HTTP/1.1`) is a fetch of the peer's
//! object held in RAM. On the control connection the board then sends [`Request`]s,
//! each answered by one [`Reply`] (a throughput run by two: `Started`, then
//! `ThroughputDone`).
//!
//! ```text
//! board                                     peer
//! {"Hello":{"version":1}}              ─►
//!                                      ◄─   {"Hello":{"version":1,"session":…}}
//! {"Throughput":{"test":1,…}}          ─►
//! N × connect, {"Data":{…,"stream":i}} ─►   (collects the N data connections)
//!                                      ◄─   {"Started":{"test":1}}   ← both clocks start
//!        data for omit + duration; each side samples /proc/stat per interval
//! {"Stop":{"test":1}}  (only when the board received)
//!                                      ◄─   {"ThroughputDone":{"test":1,"side":…}}
//!
//! {"Udp":{"test":2,…}}                 ─►
//! UDP hello datagrams (every 50 ms)    ─►   (learns the board's UDP address:port)
//!                                      ◄─   {"UdpStarted":{"test":2}}   ← clocks start
//!        datagrams for omit + duration, paced (either way)
//!                                      ◄─   {"UdpReceived":…} or {"UdpSent":…}
//! ```
//!
//! Lines are at most [`MAX_LINE`] bytes; every read has a timeout. A peer that breaks
//! either rule costs a bounded wait and an error, never a hang.

use std::io::{self, BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use benchboot_results::counters::NetDirection;
use benchboot_results::network::CpuTimes;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::interval::Sliced;
use crate::udp::Counts;
use crate::NetError;

/// Protocol version; both ends must speak the same.
pub const VERSION: u32 = 1;

/// Longest control line accepted, bytes. A `ThroughputDone` carries every interval,
/// ~500 bytes each at worst with its TCP_INFO figures (every number at its maximum:
/// 1,796,995 bytes for [`crate::interval::MAX_INTERVALS`] intervals and the total,
/// `the_longest_run_fits_a_line`), so runs are limited to that many intervals.
pub const MAX_LINE: usize = 2 << 20;

/// Longest first line of a connection (greeting or HTTP request line), bytes.
pub const MAX_GREETING: usize = 4096;

/// Most parallel streams of one run (the plan allows 1..=64).
pub const MAX_STREAMS: u32 = 64;

/// The first line of every connection to the peer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Greeting {
    /// Opens a control session. `board` is the board's name (`rpi-zero-w`, the plan's
    /// `board`) when it says who it is: the WiFi offers of a board as access point are
    /// taken only from a board whose session declared the name its SSID carries
    /// (`bb-<board>-...`). Absent from older boards and from `benchboot net`; the
    /// peer refuses a hello whose name is not a board name
    /// ([`benchboot_results::name::SafeName`]).
    Hello {
        version: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        board: Option<String>,
    },
    /// A data connection of test `test` in session `session`.
    Data {
        session: u64,
        test: u64,
        stream: u32,
    },
}

/// What the board asks of the peer, one per line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Request {
    /// A TCP run: the board opens `streams` data connections. `BoardToHost`: the board
    /// sends and the peer receives (and reports the bytes); `HostToBoard`: the reverse.
    Throughput {
        test: u64,
        direction: NetDirection,
        streams: u32,
        omit_ms: u64,
        duration_ms: u64,
        interval_ms: u64,
    },
    /// The board, as receiver, has closed its window of test `test`: the peer stops
    /// sending and answers `ThroughputDone`.
    Stop { test: u64 },
    /// Echo every byte of one data connection of test `test` until it closes.
    Latency { test: u64, samples: u32 },
    /// Hold `bytes` in RAM and serve them once at `GET /blob` on the peer port.
    HttpFromPeer { test: u64, bytes: u64 },
    /// Fetch `url` (`http://BOARD-IP:PORT/blob`, the board's own address only) and
    /// discard the body.
    HttpFromBoard { test: u64, url: String },
    /// A UDP run (see [`crate::udp`]): `bitrate` bit/s of UDP payload offered in
    /// `datagram_bytes`-byte datagrams for `omit_ms` + `duration_ms`. The board then
    /// sends [`crate::udp::hello`] datagrams from its UDP socket to the peer's (the
    /// peer's port number, in UDP) until the peer answers `UdpStarted`; the peer sends
    /// to (`HostToBoard`) or receives from (`BoardToHost`) where they came from.
    Udp {
        test: u64,
        direction: NetDirection,
        bitrate: u64,
        datagram_bytes: u32,
        omit_ms: u64,
        duration_ms: u64,
    },
    /// End of session.
    Bye,
}

/// Longest part of a board's URL [`Request::words`] shows, characters.
const URL_SHOWN: usize = 120;

impl Request {
    /// The request in words for the peer's log: `test 3: TCP board-to-host, 4
    /// streams, 10000 ms after a 1000 ms warm-up`, `test 1: an HTTP object of 1048576
    /// bytes from the peer`. A URL is shown in backticks, cut to 120 characters; the
    /// log escapes its control characters.
    pub fn words(&self) -> String {
        match self {
            Request::Throughput {
                test,
                direction,
                streams,
                omit_ms,
                duration_ms,
                interval_ms,
            } => format!(
                "test {test}: TCP {}, {streams} stream(s), {duration_ms} ms after a \
                 {omit_ms} ms warm-up, {interval_ms} ms intervals",
                direction.name()
            ),
            Request::Stop { test } => format!("test {test}: stop"),
            Request::Latency { test, samples } => {
                format!("test {test}: latency, {samples} round trips")
            }
            Request::HttpFromPeer { test, bytes } => {
                format!("test {test}: an HTTP object of {bytes} bytes from the peer")
            }
            Request::HttpFromBoard { test, url } => {
                let shown: String = url.chars().take(URL_SHOWN).collect();
                let cut = if shown.len() < url.len() { "..." } else { "" };
                format!("test {test}: fetch `{shown}{cut}` from the board over HTTP")
            }
            Request::Udp {
                test,
                direction,
                bitrate,
                datagram_bytes,
                omit_ms,
                duration_ms,
            } => format!(
                "test {test}: UDP {} at {bitrate} bit/s in {datagram_bytes}-byte datagrams, \
                 {duration_ms} ms after a {omit_ms} ms warm-up",
                direction.name()
            ),
            Request::Bye => "goodbye".into(),
        }
    }
}

/// What the peer answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reply {
    Hello {
        version: u32,
        session: u64,
    },
    /// Every data connection is in; the run's clock starts now.
    Started {
        test: u64,
    },
    /// The peer's side of the run: the bytes it moved per interval (received, which are
    /// the run's figures, when it was the receiver) and its `/proc/stat` deltas for
    /// every interval.
    ThroughputDone {
        test: u64,
        side: Sliced,
    },
    LatencyDone {
        test: u64,
        echoed: u64,
    },
    /// The object is in RAM: `GET <path>` on the peer port.
    HttpReady {
        test: u64,
        path: String,
    },
    /// The object went out: body bytes written and the peer's CPU from the request to
    /// the client closing.
    HttpServed {
        test: u64,
        bytes: u64,
        cpu: CpuTimes,
    },
    /// The peer fetched the board's object: body bytes, ns from sending the request to
    /// the last body byte, its CPU over that span.
    HttpFetched {
        test: u64,
        bytes: u64,
        nanos: u64,
        cpu: CpuTimes,
    },
    /// The peer heard the board's UDP hello; the run's clock starts now.
    UdpStarted {
        test: u64,
    },
    /// The peer received (`BoardToHost`): its counts are the run's figures; its CPU
    /// from the end of the warm-up to the end of its window.
    UdpReceived {
        test: u64,
        counts: Counts,
        cpu: CpuTimes,
    },
    /// The peer sent (`HostToBoard`): measured datagrams sent and its CPU over them.
    UdpSent {
        test: u64,
        sent: u64,
        cpu: CpuTimes,
    },
    Error {
        message: String,
    },
}

/// [`read_line`] from a connection, the whole line due by `deadline`: the read timeout is
/// set to the time left before every read, so a line sent a byte at a time ends at the
/// deadline like a silent one (`TimedOut`), not one timeout per byte.
pub fn read_line_by(
    r: &mut BufReader<TcpStream>,
    out: &mut Vec<u8>,
    max: usize,
    deadline: Instant,
) -> io::Result<bool> {
    read_line(&mut ByDeadline { r, deadline }, out, max)
}

/// A connection's reader whose every read ends by one deadline.
struct ByDeadline<'a> {
    r: &'a mut BufReader<TcpStream>,
    deadline: Instant,
}

impl io::Read for ByDeadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = {
            let avail = self.fill_buf()?;
            let n = avail.len().min(buf.len());
            buf[..n].copy_from_slice(&avail[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for ByDeadline<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.r.buffer().is_empty() {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "deadline passed"));
            }
            set_read_timeout(self.r.get_ref(), left)?;
        }
        self.r.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.r.consume(n);
    }
}

/// Reads one `\n`-terminated line (without the `\n` and a `\r` before it) into `out`,
/// refusing lines longer than `max`. `Ok(false)` at end of stream before any byte.
pub fn read_line(r: &mut impl BufRead, out: &mut Vec<u8>, max: usize) -> io::Result<bool> {
    out.clear();
    loop {
        let avail = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            if out.is_empty() {
                return Ok(false);
            }
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "line cut short",
            ));
        }
        let (take, done) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (avail.len(), false),
        };
        if out.len() + take > max {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("line longer than {max} bytes"),
            ));
        }
        out.extend_from_slice(&avail[..take]);
        r.consume(take + usize::from(done));
        if done {
            if out.last() == Some(&b'\r') {
                out.pop();
            }
            return Ok(true);
        }
    }
}

/// One JSON line.
pub fn encode<T: Serialize>(msg: &T) -> Vec<u8> {
    // Serializing these plain enums cannot fail (no maps with non-string keys).
    let mut v = serde_json::to_vec(msg).unwrap_or_default();
    v.push(b'\n');
    v
}

/// Sets a read timeout; `Duration::ZERO` (which the socket refuses) becomes 1 ms.
pub fn set_read_timeout(s: &TcpStream, t: Duration) -> io::Result<()> {
    s.set_read_timeout(Some(t.max(Duration::from_millis(1))))
}

/// A control connection: buffered reads of bounded lines, whole-line writes.
#[derive(Debug)]
pub struct Control {
    r: BufReader<TcpStream>,
    line: Vec<u8>,
}

impl Control {
    pub fn new(stream: TcpStream) -> Control {
        Control::from_reader(BufReader::new(stream))
    }

    /// Takes over a connection whose greeting line was read from `r` already.
    pub fn from_reader(r: BufReader<TcpStream>) -> Control {
        Control {
            r,
            line: Vec::new(),
        }
    }

    pub fn stream(&self) -> &TcpStream {
        self.r.get_ref()
    }

    /// Writes one message as one line (bounded by the socket's write timeout).
    pub fn send<T: Serialize>(&mut self, msg: &T) -> Result<(), NetError> {
        self.r
            .get_mut()
            .write_all(&encode(msg))
            .map_err(|e| NetError::io("control: sending", e))
    }

    /// Reads one message, waiting at most `timeout` between two reads.
    pub fn recv<T: DeserializeOwned>(&mut self, timeout: Duration) -> Result<T, NetError> {
        let what = "control: waiting for the other end";
        set_read_timeout(self.r.get_ref(), timeout).map_err(|e| NetError::io(what, e))?;
        let got = read_line(&mut self.r, &mut self.line, MAX_LINE);
        self.parse(got)
    }

    /// Reads one message, the whole line due by `deadline` ([`read_line_by`]): a
    /// timeout ([`NetError::Timeout`]) once it passes, however the bytes trickle in.
    pub fn recv_by<T: DeserializeOwned>(&mut self, deadline: Instant) -> Result<T, NetError> {
        let got = read_line_by(&mut self.r, &mut self.line, MAX_LINE, deadline);
        self.parse(got)
    }

    fn parse<T: DeserializeOwned>(&self, got: io::Result<bool>) -> Result<T, NetError> {
        let what = "control: waiting for the other end";
        match got {
            Ok(true) => serde_json::from_slice(&self.line).map_err(|e| {
                let shown = String::from_utf8_lossy(&self.line[..self.line.len().min(120)]);
                NetError::Protocol(format!(
                    "a line this benchboot cannot read, `{shown}` ({}): run the benchboot \
                     that matches the image",
                    unreadable(&e)
                ))
            }),
            Ok(false) => Err(NetError::Closed("control".into())),
            Err(e) => Err(NetError::io(what, e)),
        }
    }

    /// True when the other end has closed (or reset) the connection and nothing it sent
    /// is left unread. Does not block.
    pub fn closed(&self) -> bool {
        if !self.r.buffer().is_empty() {
            return false;
        }
        let s = self.r.get_ref();
        if s.set_nonblocking(true).is_err() {
            return false;
        }
        let peeked = s.peek(&mut [0u8; 1]);
        let _ = s.set_nonblocking(false);
        match peeked {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => !matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            ),
        }
    }

    /// Reads a [`Reply`], turning a [`Reply::Error`] into [`NetError::Peer`].
    pub fn reply(&mut self, timeout: Duration) -> Result<Reply, NetError> {
        match self.recv(timeout)? {
            Reply::Error { message } => Err(NetError::Peer(message)),
            r => Ok(r),
        }
    }
}

/// Why serde_json could not read a message, in words: `the value `BoardToHost` is not
/// one this benchboot knows (it knows `board-to-host` or `host-to-board`), line 1
/// column 42`.
fn unreadable(e: &serde_json::Error) -> String {
    let at = format!("line {} column {}", e.line(), e.column());
    let said = e.to_string();
    let said = said
        .strip_suffix(&format!(" at {at}"))
        .unwrap_or(&said)
        .to_owned();
    let said = match said.strip_prefix("unknown variant ") {
        Some(rest) => match rest.split_once(", expected ") {
            Some((got, known)) => {
                format!("the value {got} is not one this benchboot knows (it knows {known})")
            }
            None => format!("the value {rest} is not one this benchboot knows"),
        },
        None => said,
    };
    format!("{said}, {at}")
}

/// An unexpected reply, named.
pub fn unexpected(wanted: &str, got: &Reply) -> NetError {
    let mut s = format!("{got:?}");
    s.truncate(120);
    NetError::Protocol(format!("expected {wanted}, got {s}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchboot_results::network::TcpSample;

    #[test]
    fn lines_are_bounded_and_split() {
        let mut r = BufReader::with_capacity(4, &b"ab\r\ncdefgh\n\nxyz"[..]);
        let mut out = Vec::new();
        assert!(read_line(&mut r, &mut out, 16).unwrap());
        assert_eq!(out, b"ab");
        assert!(read_line(&mut r, &mut out, 16).unwrap());
        assert_eq!(out, b"cdefgh"); // across several fills of a 4-byte buffer
        assert!(read_line(&mut r, &mut out, 16).unwrap());
        assert_eq!(out, b"");
        // A last line without `\n` is cut short.
        let e = read_line(&mut r, &mut out, 16).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        assert!(!read_line(&mut r, &mut out, 16).unwrap());

        let mut long = BufReader::new(&b"0123456789\n"[..]);
        let e = read_line(&mut long, &mut out, 9).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        let mut exact = BufReader::new(&b"012345678\n"[..]);
        assert!(read_line(&mut exact, &mut out, 9).unwrap());
    }

    #[test]
    fn a_closed_control_connection_is_noticed() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        let ctl = Control::new(b);
        assert!(!ctl.closed());
        a.write_all(b"x").unwrap();
        drop(a);
        // Unread data first: not closed until it is read.
        std::thread::sleep(Duration::from_millis(50));
        assert!(!ctl.closed());
        let mut ctl = ctl;
        assert!(ctl.recv::<Reply>(Duration::from_secs(1)).is_err());
        assert!(ctl.closed());
    }

    #[test]
    fn messages_are_one_line_of_json() {
        let m = Request::Throughput {
            test: 3,
            direction: NetDirection::HostToBoard,
            streams: 4,
            omit_ms: 2000,
            duration_ms: 30_000,
            interval_ms: 1000,
        };
        let line = encode(&m);
        assert_eq!(
            std::str::from_utf8(&line).unwrap(),
            "{\"Throughput\":{\"test\":3,\"direction\":\"host-to-board\",\"streams\":4,\
             \"omit_ms\":2000,\"duration_ms\":30000,\"interval_ms\":1000}}\n"
        );
        let back: Request = serde_json::from_slice(&line[..line.len() - 1]).unwrap();
        assert_eq!(back, m);
        assert_eq!(
            encode(&Greeting::Data {
                session: 9,
                test: 1,
                stream: 0
            }),
            b"{\"Data\":{\"session\":9,\"test\":1,\"stream\":0}}\n"
        );
        assert_eq!(encode(&Request::Bye), b"\"Bye\"\n");
    }

    #[test]
    fn the_longest_run_fits_a_line() {
        let big = CpuTimes {
            user: u64::MAX,
            nice: u64::MAX,
            system: u64::MAX,
            idle: u64::MAX,
            iowait: u64::MAX,
            irq: u64::MAX,
            softirq: u64::MAX,
            steal: u64::MAX,
        };
        let span = crate::interval::Span {
            start_ns: u64::MAX,
            end_ns: u64::MAX,
            bytes: u64::MAX,
            cpu: big,
            tcp: Some(TcpSample {
                retransmits: u64::MAX,
                cwnd_bytes: u64::MAX,
                srtt_us: u32::MAX,
                srtt_max_us: u32::MAX,
                rttvar_us: u32::MAX,
                streams: u32::MAX,
            }),
        };
        let side = Sliced {
            intervals: vec![span; crate::interval::MAX_INTERVALS as usize],
            total: span,
            complete: true,
        };
        let line = encode(&Reply::ThroughputDone {
            test: u64::MAX,
            side,
        });
        assert!(line.len() < MAX_LINE, "{}", line.len());
    }
}
