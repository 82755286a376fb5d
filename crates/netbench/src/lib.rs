//! The network test engine: iperf-style TCP throughput (N streams, both directions,
//! per-interval figures after a warm-up), TCP round-trip latency, HTTP GETs of an
//! object held in RAM and `iperf3 -u`-style UDP at an offered load ([`udp`]), with
//! system-wide `/proc/stat` CPU shares on both ends. A peer on a LAN can announce
//! itself by broadcast ([`announce`]). A wired link's facts (sysfs speed, duplex,
//! carrier; `/proc/net/dev` counters; `/proc/net/route`) are read from the kernel's texts
//! by [`link_facts`].
//!
//! The board drives, like an iperf3 client ([`driver::run`]); the host runs the peer,
//! like `iperf3 -s` ([`peer::serve`], `benchboot peer`). They talk over one TCP control
//! connection of line-delimited JSON ([`control`]); data travels on extra connections to
//! the same port. Plain std Rust (no `unsafe`, no libc): it runs on the board (static
//! musl, in PID 1 or a forked worker) and on the host alike.
//!
//! Every line is bounded ([`control::MAX_LINE`]) and every wait has a timeout, so a bad
//! or vanished peer costs a bounded time and becomes an error string, never a hang.

#![forbid(unsafe_code)]

use std::io;

pub mod announce;
pub mod control;
pub mod driver;
pub mod http;
pub mod interval;
pub mod latency;
pub mod link_facts;
pub mod peer;
pub mod procstat;
pub mod tcp;
pub mod tcpstate;
pub mod udp;
pub mod wifi_offer;

/// True for what a UDP receive with a timeout returns when nothing (usable) came: the
/// timeout (`WouldBlock` / `TimedOut`, by platform), a signal, or an ICMP port
/// unreachable from an earlier send (`ConnectionRefused`, which Linux reports on the
/// next receive of a connected or sending socket): wait on, it is not a failure.
pub(crate) fn quiet_receive(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock
            | io::ErrorKind::TimedOut
            | io::ErrorKind::Interrupted
            | io::ErrorKind::ConnectionRefused
    )
}

/// What went wrong in a network test.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// A socket call failed; `what` says which one and where.
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: io::Error,
    },
    /// The other end sent something this protocol does not allow.
    #[error("protocol: {0}")]
    Protocol(String),
    /// The peer reported a failure of its own.
    #[error("peer: {0}")]
    Peer(String),
    /// A wait ran out.
    #[error("{0}: timed out")]
    Timeout(String),
    /// The other end closed the connection.
    #[error("{0}: connection closed by the other end")]
    Closed(String),
    /// A test ran but its figures are unusable (a stream failed, the run was cut short).
    #[error("{0}")]
    Failed(String),
    /// A parameter is out of the range this engine accepts.
    #[error("invalid: {0}")]
    Invalid(String),
}

impl NetError {
    /// Wraps an `io::Error`, mapping read timeouts and end of stream to their own variants.
    pub fn io(what: impl Into<String>, source: io::Error) -> NetError {
        let what = what.into();
        match source.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => NetError::Timeout(what),
            io::ErrorKind::UnexpectedEof => NetError::Closed(what),
            _ => NetError::Io { what, source },
        }
    }
}

/// `io::Result` → `Result<_, NetError>` with a note of what was being done.
pub(crate) trait Context<T> {
    fn ctx(self, what: &str) -> Result<T, NetError>;
}

impl<T> Context<T> for io::Result<T> {
    fn ctx(self, what: &str) -> Result<T, NetError> {
        self.map_err(|e| NetError::io(what, e))
    }
}
