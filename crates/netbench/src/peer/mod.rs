//! The peer: what `benchboot peer` runs on the host (like `iperf3 -s`). It serves
//! boards forever: each board drives its own session, the peer receives or sends as
//! asked, echoes round trips, serves its object from RAM, fetches the board's, and
//! reports its own receive counts and `/proc/stat` CPU for every interval.
//!
//! Every connection to the port is classified by its first line (see [`crate::control`])
//! on a thread of its own, which then serves the session when the line was a hello.
//! A stranger on the network cannot turn the peer against others or hold it; every
//! bound below is a [`PeerOptions`] field whose default is a constant of this module,
//! its reason in its docstring:
//!
//! - places are shared out by address: at most [`PeerOptions::max_sessions`] sessions,
//!   [`PeerOptions::max_sessions_per_ip`] from one address (more get `busy`), so two
//!   addresses never hold every place; at most [`PeerOptions::max_pending`]
//!   connections wait for their first line, [`PeerOptions::max_pending_per_ip`] from
//!   one address (more are closed at once), so a flood from one address closes no
//!   other address's connection;
//! - time is bounded by deadlines, not per read: a connection's whole first line is due
//!   within [`PeerOptions::greeting_timeout`], and a session is closed
//!   [`PeerOptions::idle_timeout`] after the last test it ran (a refused request, a
//!   request that failed, bytes trickled without a line: none of these counts), so a
//!   silent or babbling client holds its place for that long at most;
//! - RAM for HTTP objects is one budget, [`PeerOptions::http_budget`] for every session
//!   together ([`Registry::http_held`]): an object is reserved before it is built
//!   (waiting, smallest first, up to [`HTTP_BUDGET_WAIT`]) and freed once its wait for
//!   the `GET` ([`PeerOptions::http_wait`]) or its delivery is over;
//! - UDP goes only to the address of the session's own control connection: a hello
//!   datagram from any other address is ignored and logged; data connections from
//!   another address than their session's are closed;
//! - runs are bounded by the plan's limits ([`benchboot_plan::network::MAX_DURATION_MS`],
//!   [`benchboot_plan::network::MAX_OMIT_MS`]) and the UDP load by the fastest link of
//!   any board ([`LINK_MAX_BITRATE`], [`PeerOptions::max_udp_bitrate`]); a request over a
//!   bound is answered with the reason;
//! - every session is logged (address, the board it declared, each request in words
//!   ([`crate::control::Request::words`]), what was sent, how it ended) with control
//!   characters escaped once
//!   ([`benchboot_results::text::escape`]); connections closed for a bound are logged
//!   at most once per [`REFUSAL_LINE_EVERY`] ([`Throttle`]).
//!
//! The [`Registry`] of live sessions is the peer's to own and to share: `benchboot peer
//! --wifi` hands it to its WiFi offer listener, which takes an offer only from the far
//! end of a point-to-point link of the host holding a live session that came in on the
//! host's end of that link ([`LiveSession::local`]) and named the board whose name the
//! offered SSID carries.
//!
//! UDP runs use one UDP socket bound to the same address and port number as the TCP
//! listener (as `iperf3 -s` does), one run at a time; the board's hello datagram tells
//! the peer which port the board's UDP socket is on, as a NAT on the way maps it.

mod registry;
mod session;
mod throttle;

pub use registry::{LiveSession, Registry};
pub use throttle::Throttle;

use std::io::{self, BufReader};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use benchboot_plan::net_tests::{MAX_DURATION_MS, MAX_OMIT_MS, MAX_UDP_BITRATE};
use benchboot_results::name::{NameKind, SafeName};

use crate::control::{read_line_by, Control, Greeting, Reply, MAX_GREETING, MAX_STREAMS, VERSION};
use crate::interval::Timing;
use crate::{announce, http, procstat, tcp, NetError};

/// How long a new connection may take to send its whole first line (default of
/// [`PeerOptions::greeting_timeout`]): the board sends it at once after connecting.
pub const GREETING_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the board may take to open a test's data connections.
pub const SETUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a session may go without a test (default of [`PeerOptions::idle_timeout`]);
/// only a request the peer served counts, so a client that sends nothing, refused
/// requests or a line a byte at a time is closed this long after its last test.
/// Between two tests the board saves its results (temp file, fsync, rename on the
/// card) and may change its link (a WiFi channel or width, an association): an
/// emulated Pi 3 B on a loaded 2-core host took over 10 s between two throughput
/// requests (CI rehearsal, 2026-12-03), so 10 s closed real sessions. The places a
/// client can hold meanwhile are bounded by the session caps ([`MAX_SESSIONS`],
/// [`MAX_SESSIONS_PER_IP`]).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// How long to wait for the board's `Stop` after the peer's own window closed.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long streams may take to end on their own once stopped.
pub const END_GRACE: Duration = Duration::from_secs(10);
/// How long the board may take to fetch after `HttpReady` (default of
/// [`PeerOptions::http_wait`]); the object is freed when it passes.
pub const HTTP_WAIT: Duration = Duration::from_secs(30);
/// How long an `HttpFromPeer` may wait for its share of the HTTP budget
/// ([`PeerOptions::http_budget`]) before it is answered `busy`: the board hears why
/// before its own wait for `HttpReady` ends (the driver's
/// [`crate::driver::SETUP_TIMEOUT`] + 40 s).
pub const HTTP_BUDGET_WAIT: Duration = Duration::from_secs(40);
/// How long the peer waits for the board's UDP hello (and for another board's UDP run
/// to end) before it answers an error (default of [`PeerOptions::udp_hello_wait`]).
pub const UDP_HELLO_WAIT: Duration = Duration::from_secs(5);
/// Largest object the peer will hold in RAM (the plan's limit).
pub const MAX_HTTP_BYTES: u64 = 1 << 30;
/// RAM for the HTTP objects of every session together, bytes (default of
/// [`PeerOptions::http_budget`]): one object as large as a plan may ask
/// ([`MAX_HTTP_BYTES`], 1 GiB), or several smaller ones at once. Each object must also
/// fit in half of `MemAvailable` when it is built ([`http::blob`]).
pub const HTTP_BUDGET: u64 = MAX_HTTP_BYTES;
/// Sessions served at once (default of [`PeerOptions::max_sessions`]).
pub const MAX_SESSIONS: usize = 8;
/// Sessions from one IP address at once (default of [`PeerOptions::max_sessions_per_ip`]):
/// a board needs one (two for a moment when it reconnects after a broken test, while
/// the peer finishes the old one), two boards behind one NAT fit; and with a quarter of
/// [`MAX_SESSIONS`] each, two strangers' addresses leave half the places to others.
pub const MAX_SESSIONS_PER_IP: usize = 2;
/// Connections waiting for their first line at once (default of
/// [`PeerOptions::max_pending`]); each holds a small thread ([`THREAD_STACK`]) for at
/// most [`GREETING_TIMEOUT`].
pub const MAX_PENDING: usize = 1024;
/// Connections from one IP address waiting for their first line at once (default of
/// [`PeerOptions::max_pending_per_ip`]): the data connections of the widest run
/// ([`MAX_STREAMS`], 64) of two boards, opened together; more from one address are
/// closed at once, so one address never takes the places of others (eight addresses
/// are needed to fill [`MAX_PENDING`]).
pub const MAX_PENDING_PER_IP: usize = 2 * MAX_STREAMS as usize;
/// The highest UDP load the peer offers or takes by default, bit/s: 1 Gbit/s, the
/// fastest link of any board benchboot boots (1000BASE-T: the Raspberry Pi 4 B's
/// BCM54213PE and the Banana Pi M1's RTL8211E, `rated-mbit = 1000` in
/// `boards/rpi-4b.toml` and `boards/bananapi-m1.toml`; the others are 100 Mbit/s or
/// USB 2.0). `benchboot peer --max-udp-bitrate` raises it, up to the plan's
/// [`MAX_UDP_BITRATE`] (loopback benchmarks).
pub const LINK_MAX_BITRATE: u64 = 1_000_000_000;
/// At most one log line per this long about connections closed for a bound (the
/// lines in between are counted in the next): a flood cannot fill the terminal.
pub const REFUSAL_LINE_EVERY: Duration = Duration::from_secs(10);
/// Where the RAM available for the HTTP object is read.
const MEMINFO: &str = "/proc/meminfo";
/// How often waits for connections look whether the board hung up.
const POLL: Duration = Duration::from_millis(200);
/// Stack of a connection's thread: classifying and serving a session need little.
const THREAD_STACK: usize = 256 << 10;
/// `GET`s queued for one session: the board fetches once per request; the rest are
/// strays, answered 404 by the classifier.
const HTTP_QUEUE: usize = 4;
/// `accept` failures in a row after which [`serve`] gives up (each followed by
/// [`ACCEPT_PAUSE`]): out of file descriptors for 10 s is not going to pass.
const ACCEPT_FAILURES: u32 = 100;
/// Pause after a failed `accept`.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

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

/// How the peer serves, beyond its port. [`Default`] gives the constants above.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// Longest wait for a connection's whole first line; then it is closed.
    pub greeting_timeout: Duration,
    /// Longest a session may go without a test served; then it is closed.
    pub idle_timeout: Duration,
    /// Longest wait for the board's UDP hello (and for the UDP socket to be free).
    pub udp_hello_wait: Duration,
    /// Longest wait for the board's `GET` of the peer's object; then it is freed.
    pub http_wait: Duration,
    /// RAM for the HTTP objects of every session together, bytes.
    pub http_budget: u64,
    /// Sessions served at once; one more is answered `busy`.
    pub max_sessions: usize,
    /// Sessions from one IP address at once; one more is answered `busy`.
    pub max_sessions_per_ip: usize,
    /// Connections waiting for their first line at once; more are closed at once.
    pub max_pending: usize,
    /// Connections from one IP address waiting for their first line at once; more
    /// from that address are closed at once.
    pub max_pending_per_ip: usize,
    /// Highest UDP load offered or taken, bit/s ([`LINK_MAX_BITRATE`] by default;
    /// never above the plan's [`MAX_UDP_BITRATE`]).
    pub max_udp_bitrate: u64,
}

impl Default for PeerOptions {
    fn default() -> PeerOptions {
        PeerOptions {
            board_address: None,
            announce_to: None,
            greeting_timeout: GREETING_TIMEOUT,
            idle_timeout: IDLE_TIMEOUT,
            udp_hello_wait: UDP_HELLO_WAIT,
            http_wait: HTTP_WAIT,
            http_budget: HTTP_BUDGET,
            max_sessions: MAX_SESSIONS,
            max_sessions_per_ip: MAX_SESSIONS_PER_IP,
            max_pending: MAX_PENDING,
            max_pending_per_ip: MAX_PENDING_PER_IP,
            max_udp_bitrate: LINK_MAX_BITRATE,
        }
    }
}

/// Refuses a run longer than the plan allows: a measured time over
/// [`MAX_DURATION_MS`] or a warm-up over [`MAX_OMIT_MS`]. The message names the bound,
/// where it comes from and the plan key.
pub fn check_timing(t: &Timing) -> Result<(), NetError> {
    const MS: u64 = 1_000_000;
    if t.duration_ns > MAX_DURATION_MS * MS {
        return Err(NetError::Invalid(format!(
            "refused: a run of {} ms is longer than the plan allows ({MAX_DURATION_MS} ms, \
             network.tests.duration_ms)",
            t.duration_ns / MS
        )));
    }
    if t.omit_ns > MAX_OMIT_MS * MS {
        return Err(NetError::Invalid(format!(
            "refused: a warm-up of {} ms is longer than the plan allows ({MAX_OMIT_MS} ms, \
             network.tests.omit_ms)",
            t.omit_ns / MS
        )));
    }
    Ok(())
}

/// Refuses a UDP load above `max` bit/s (this peer's [`PeerOptions::max_udp_bitrate`],
/// itself never above the plan's [`MAX_UDP_BITRATE`]), naming the bound and its source.
pub fn check_bitrate(bitrate: u64, max: u64) -> Result<(), NetError> {
    let max = max.min(MAX_UDP_BITRATE);
    if bitrate > max {
        let why = if max <= LINK_MAX_BITRATE {
            "the fastest link of any board, Gigabit Ethernet on the Pi 4 B and Banana Pi M1"
        } else {
            "this peer's --max-udp-bitrate"
        };
        return Err(NetError::Invalid(format!(
            "refused: UDP at {bitrate} bit/s is more than {max} bit/s ({why}); lower \
             network.tests.udp_bitrate"
        )));
    }
    Ok(())
}

/// What every connection's thread shares.
struct Shared {
    udp: Result<UdpSocket, String>,
    /// Held for the whole of a UDP run: one at a time on the one socket.
    udp_busy: Mutex<()>,
    options: PeerOptions,
    stat: PathBuf,
    log: Log,
    registry: Registry,
}

/// Serves boards on `listener` forever, reading this machine's CPU counters from
/// `stat_path` (`/proc/stat`). Returns only when `accept` keeps failing.
pub fn serve(listener: TcpListener, stat_path: &Path) -> io::Result<()> {
    serve_with_log(listener, stat_path, |_| {})
}

/// [`serve`], telling `log` about each session and each failure (one line each, every
/// control character escaped).
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
    serve_with_registry(listener, stat_path, options, Registry::new(), log)
}

/// [`serve_with_options`], keeping the live sessions and the peer's accounting in
/// `registry`, which the caller may hold a clone of (the WiFi offer listener asks it
/// which boards are here; tests read the HTTP budget). One registry per peer.
pub fn serve_with_registry(
    listener: TcpListener,
    stat_path: &Path,
    options: &PeerOptions,
    registry: Registry,
    log: impl Fn(&str) + Send + Sync + 'static,
) -> io::Result<()> {
    let log: Log = Arc::new(move |l: &str| log(&benchboot_results::text::escape(l)));
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
    let shared = Arc::new(Shared {
        udp,
        udp_busy: Mutex::new(()),
        options: options.clone(),
        stat: stat_path.to_owned(),
        log,
        registry,
    });
    let mut failures = 0u32;
    let mut refusals = Throttle::new(REFUSAL_LINE_EVERY);
    loop {
        match listener.accept() {
            Ok((conn, from)) => {
                failures = 0;
                let place = match shared.registry.admit_pending(from.ip(), &shared.options) {
                    Ok(p) => p,
                    Err(why) => {
                        drop(conn); // closed at once
                        let line = format!("peer: {from}: closed a connection at once: {why}");
                        if let Some(l) = refusals.pass(&line, Instant::now()) {
                            (shared.log)(&l);
                        }
                        continue;
                    }
                };
                let s = shared.clone();
                let spawned = thread::Builder::new()
                    .name("netbench-conn".into())
                    .stack_size(THREAD_STACK)
                    .spawn(move || {
                        let hello = classify(conn, from, &s);
                        drop(place);
                        if let Some((ctl, reg)) = hello {
                            session::run(ctl, from, reg, &s);
                        }
                    });
                if let Err(e) = spawned {
                    let line = format!("peer: {from}: closed a connection at once: {e}");
                    if let Some(l) = refusals.pass(&line, Instant::now()) {
                        (shared.log)(&l);
                    }
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
                (shared.log)(&format!("peer: accept: {e}"));
                if failures >= ACCEPT_FAILURES {
                    return Err(e);
                }
                thread::sleep(ACCEPT_PAUSE);
            }
        }
    }
}

/// Reads a connection's first line (the whole of it due within the greeting timeout)
/// and hands it on; a hello that is let in comes back with its session's registration.
fn classify(
    conn: TcpStream,
    from: SocketAddr,
    shared: &Shared,
) -> Option<(Control, registry::Registered)> {
    let deadline = Instant::now() + shared.options.greeting_timeout;
    if conn.set_write_timeout(Some(tcp::IO_TIMEOUT)).is_err() {
        return None;
    }
    // The address of this host the connection came in on: a session is tied to it.
    let Ok(local) = conn.local_addr().map(|a| a.ip().to_canonical()) else {
        return None;
    };
    let mut r = BufReader::new(conn);
    let mut line = Vec::new();
    if !matches!(
        read_line_by(&mut r, &mut line, MAX_GREETING, deadline),
        Ok(true)
    ) {
        return None;
    }
    let ip = from.ip().to_canonical();
    if line.ends_with(b" HTTP/1.1") || line.ends_with(b" HTTP/1.0") {
        let c = HttpConn {
            conn: r,
            request_line: line,
        };
        // Only a session of the same address that waits for its fetch gets it.
        let c = {
            let sessions = shared.registry.slots();
            let waiting = sessions
                .values()
                .find(|s| s.ip == ip && s.wants_http.load(Ordering::SeqCst));
            match waiting {
                Some(s) => match s.http.try_send(c) {
                    Ok(()) => return None,
                    Err(mpsc::TrySendError::Full(c) | mpsc::TrySendError::Disconnected(c)) => c,
                },
                None => c,
            }
        };
        // Nobody is waiting for a fetch: a 404, as for any other path.
        let mut no_cpu = procstat::Reader::new(Path::new(""));
        let _ = http::answer(c.conn, Some(c.request_line), None, &mut no_cpu, deadline);
        return None;
    }
    match serde_json::from_slice::<Greeting>(&line) {
        Ok(Greeting::Hello { version, board }) => {
            let mut ctl = Control::from_reader(r);
            let refuse = |ctl: &mut Control, message: String| {
                (shared.log)(&format!("peer: {from}: {message}"));
                let _ = ctl.send(&Reply::Error { message });
            };
            if version != VERSION {
                refuse(
                    &mut ctl,
                    format!(
                        "this peer speaks protocol version {VERSION}, the board {version}: \
                         run the benchboot that matches the image"
                    ),
                );
                return None;
            }
            let board = match board
                .map(|b| SafeName::new(NameKind::Board, &b))
                .transpose()
            {
                Ok(b) => b,
                Err(e) => {
                    // `e.shown` is escaped already (and the log leaves escapes as they
                    // are): the name reaches the board and the log escaped once.
                    refuse(
                        &mut ctl,
                        format!("refused: `{}` is not a board name: {}", e.shown, e.rule),
                    );
                    return None;
                }
            };
            match shared.registry.register(ip, local, board, &shared.options) {
                Ok(reg) => Some((ctl, reg)),
                Err(message) => {
                    refuse(&mut ctl, message);
                    None
                }
            }
        }
        Ok(Greeting::Data {
            session,
            test,
            stream,
        }) => {
            let sessions = shared.registry.slots();
            match sessions.get(&session) {
                Some(s) if s.ip == ip => {
                    let _ = s.data.try_send(DataConn {
                        session,
                        test,
                        stream,
                        conn: r,
                    });
                }
                Some(s) => (shared.log)(&format!(
                    "peer: {from}: closed a data connection for the session of {}: not \
                     its address",
                    s.ip
                )),
                None => {} // an old session's: closed
            }
            None
        }
        Err(_) => None, // not ours: closed
    }
}

fn new_session_id() -> u64 {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    t ^ (COUNT.fetch_add(1, Ordering::Relaxed) as u64).rotate_left(48)
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

    #[test]
    fn runs_over_the_plan_and_link_bounds_are_refused_with_the_bound() {
        let hour = Timing::from_ms(0, 1000, 3_600_000);
        assert_eq!(
            check_timing(&hour).unwrap_err().to_string(),
            NetError::Invalid(
                "refused: a run of 3600000 ms is longer than the plan allows (600000 ms, \
                 network.tests.duration_ms)"
                    .into()
            )
            .to_string()
        );
        let warm = Timing::from_ms(3_600_000, 1000, 1000);
        assert!(check_timing(&warm)
            .unwrap_err()
            .to_string()
            .contains("warm-up of 3600000 ms is longer than the plan allows (60000 ms"));
        check_timing(&Timing::from_ms(MAX_OMIT_MS, 1000, MAX_DURATION_MS)).unwrap();
        let e = check_bitrate(u64::MAX, LINK_MAX_BITRATE)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("UDP at 18446744073709551615 bit/s is more than 1000000000 bit/s")
                && e.contains("Gigabit Ethernet on the Pi 4 B")
                && e.contains("network.tests.udp_bitrate"),
            "{e}"
        );
        check_bitrate(LINK_MAX_BITRATE, LINK_MAX_BITRATE).unwrap();
        // A raised bound never passes the plan's own.
        let e = check_bitrate(MAX_UDP_BITRATE + 1, u64::MAX)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than 100000000000 bit/s"), "{e}");
    }
}
