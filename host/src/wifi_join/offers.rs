//! The offer listener: a UDP socket on
//! [`WIFI_OFFER_PORT`](benchboot_netbench::wifi_offer::WIFI_OFFER_PORT) (the address
//! `benchboot peer --listen` names, every interface by default: the offers come over
//! the results link, gadget or Ethernet), one [`WifiOffer`] per datagram.
//!
//! A datagram can come from anyone, and joining makes this host leave its network: an
//! offer is acted on only when [`admit`] lets it in, the one gate. Its sender must be
//! the board on a link only the board can be on: the other end of a point-to-point
//! link of this host (a /30 or /31 this host holds an address in:
//! [`crate::point_to_point::link_to`]), holding a live session on this host's peer
//! (the [`Registry`] the peer owns and shares) that came in on this host's end of that
//! same link and named the board whose `bb-<board>-` prefix the SSID carries; and the
//! SSID and passphrase must have the shapes a board makes ([`ValidOffer`]). A refused
//! offer is one line saying why and what to do, at most one per
//! [`REFUSAL_LINE_EVERY`] ([`Throttle`]: a flood cannot fill the terminal). Every line
//! printed passes [`escape_lines`] (SSIDs, the by-hand text, the tools' words).
//!
//! This host's addresses come from [`HostLinks`]: read from the system (at most once
//! per [`LINKS_FRESH_FOR`]: the gadget link appears while the board boots) or given
//! (tests over loopback).
//!
//! A board repeats its offer once a second until a station joins, so [`Tracker`] acts
//! once per new SSID: an SSID joined (or told by hand) is not joined again while it is
//! the current one; a failed join is tried again after [`RETRY_AFTER`] (NetworkManager
//! may not have scanned the new AP yet).

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use benchboot_netbench::peer::{LiveSession, Registry, Throttle, REFUSAL_LINE_EVERY};
use benchboot_netbench::wifi_offer::{WifiOffer, MAX_LEN};
use benchboot_results::name::SafeName;
use benchboot_results::text::{escape, escape_lines};

use super::{security_word, Joiner, Outcome, ValidOffer};
use crate::point_to_point::{self, HostAddr};

/// How long after a failed join the same SSID is tried again.
pub const RETRY_AFTER: Duration = Duration::from_secs(15);

/// How often the listener looks at its stop flag.
const POLL: Duration = Duration::from_millis(200);

/// How long this host's addresses read from the system are used before they are read
/// again.
pub const LINKS_FRESH_FOR: Duration = Duration::from_secs(1);

/// The offer socket on `addr` (`0.0.0.0:5203`; `benchboot peer` binds the address of
/// its `--listen`).
///
/// # Errors
/// The port is taken (another `benchboot peer --wifi`?), naming it.
pub fn bind(addr: SocketAddr) -> Result<UdpSocket> {
    UdpSocket::bind(addr).with_context(|| {
        format!(
            "listening for WiFi offers on UDP {addr}: is another `benchboot peer --wifi` \
             running? Stop it first"
        )
    })
}

/// Which offers to act on.
#[derive(Debug, Default)]
pub struct Tracker {
    /// The SSID joined (or told by hand) last.
    current: Option<Vec<u8>>,
    /// When each SSID last failed to join.
    failed: HashMap<Vec<u8>, Instant>,
}

impl Tracker {
    /// Whether an offer of `ssid` arriving at `now` is acted on.
    pub fn should_join(&self, ssid: &[u8], now: Instant) -> bool {
        if self.current.as_deref() == Some(ssid) {
            return false;
        }
        match self.failed.get(ssid) {
            Some(at) => now.saturating_duration_since(*at) >= RETRY_AFTER,
            None => true,
        }
    }

    /// Records what came of acting on `ssid` at `now`.
    pub fn record(&mut self, ssid: &[u8], outcome: &Outcome, now: Instant) {
        match outcome {
            Outcome::Joined(_) | Outcome::ByHand(_) => {
                self.failed.remove(ssid);
                self.current = Some(ssid.to_vec());
            }
            Outcome::Failed(_) => {
                self.failed.insert(ssid.to_vec(), now);
            }
        }
    }
}

/// An offer [`admit`] let in: what to join, the board that offered it and this host's
/// address on the link it came over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    pub offer: ValidOffer,
    pub board: SafeName,
    /// This host's end of the point-to-point link the offer and the session came over.
    pub link: HostAddr,
}

/// Whether the offer `offer`, sent from `from`, is acted on, given `live`: the live
/// sessions from `from` on this host's peer ([`Registry::sessions_at`]), and `host`:
/// this host's IPv4 addresses with their prefixes. Let in only when, in this order:
///
/// 1. its SSID and passphrase have the shapes a board makes ([`ValidOffer::new`]);
/// 2. `from` is the other end of a point-to-point link of this host (a /30 or /31
///    `host` holds an address in, [`point_to_point::link_to`]): only the board can be
///    there; on a LAN anyone can;
/// 3. a session from `from` came in on this host's end of that link
///    ([`LiveSession::local`]);
/// 4. one such session named the board whose `bb-<board>-` prefix the SSID carries.
///
/// # Errors
/// The first of these that fails, in words, with what to do (the SSID escaped).
pub fn admit(
    offer: &WifiOffer,
    from: IpAddr,
    live: &[LiveSession],
    host: &[HostAddr],
) -> Result<Admitted, String> {
    let valid = ValidOffer::new(offer)?;
    let from = from.to_canonical();
    let Some(link) = point_to_point::link_to(host, from) else {
        let key = match valid.passphrase() {
            Some(p) => format!(", passphrase `{p}`"),
            None => String::new(),
        };
        return Err(format!(
            "{from} is not the other end of a point-to-point link of this host (a /30 or \
             /31 this host holds an address in, as the gadget link's or a direct cable's), \
             the only place where no one but the board can be; if it is your board on a \
             LAN, join `{}` ({}{key}) by hand: this peer keeps serving",
            valid.ssid(),
            security_word(offer)
        ));
    };
    if live.is_empty() {
        return Err(format!(
            "no board holds a session with this peer from {from} (a board offers its AP \
             over the results link while it holds one)"
        ));
    }
    let here: Vec<&LiveSession> = live
        .iter()
        .filter(|s| s.local.to_canonical() == IpAddr::V4(link.addr))
        .collect();
    if here.is_empty() {
        let mut locals: Vec<String> = live.iter().map(|s| s.local.to_string()).collect();
        locals.sort();
        locals.dedup();
        return Err(format!(
            "the sessions from {from} came in on {}, not on this host's end of the link \
             from {from} ({}): run `benchboot peer` on every interface (the default) or \
             with --listen {}:PORT",
            locals.join(", "),
            link.addr,
            link.addr
        ));
    }
    let named: Vec<&SafeName> = here.iter().filter_map(|s| s.board.as_ref()).collect();
    if let Some(b) = named.iter().find(|b| offer.is_of_board(b.as_str())) {
        return Ok(Admitted {
            offer: valid,
            board: (*b).clone(),
            link,
        });
    }
    if named.is_empty() {
        return Err(format!(
            "the session from {from} did not say which board it is: run the benchboot \
             that matches the image"
        ));
    }
    let prefixes: Vec<String> = named
        .iter()
        .map(|b| benchboot_plan::wifi::ap_ssid_prefix(b.as_str()))
        .collect();
    Err(format!(
        "the SSID is not one of the board's own ({}...) that holds the session from {from}",
        prefixes.join("..., ")
    ))
}

/// Where [`serve`] takes this host's addresses from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostLinks {
    /// Read from the system ([`point_to_point::read`]) at most once per
    /// [`LINKS_FRESH_FOR`].
    System,
    /// These (tests over loopback, where no interface is point-to-point).
    Given(Vec<HostAddr>),
}

/// This host's addresses as [`HostLinks`] says, kept for [`LINKS_FRESH_FOR`].
struct LinkCache {
    read_at: Option<Instant>,
    got: Result<Vec<HostAddr>, String>,
}

impl LinkCache {
    fn now<'a>(
        &'a mut self,
        links: &'a HostLinks,
        now: Instant,
    ) -> Result<&'a [HostAddr], &'a str> {
        match links {
            HostLinks::Given(v) => return Ok(v),
            HostLinks::System => {
                let stale = self
                    .read_at
                    .is_none_or(|at| now.saturating_duration_since(at) >= LINKS_FRESH_FOR);
                if stale {
                    self.got = point_to_point::read().map_err(|e| e.to_string());
                    self.read_at = Some(now);
                }
            }
        }
        match &self.got {
            Ok(v) => Ok(v),
            Err(e) => Err(e),
        }
    }
}

/// The offer's SSID for printing: `` `bb-rpi-4b-ch1-20` ``, invalid UTF-8 replaced and
/// every control character escaped ([`escape`]).
pub fn ssid_shown(o: &WifiOffer) -> String {
    format!("`{}`", escape(&String::from_utf8_lossy(&o.ssid)))
}

/// `` `bb-rpi-4b-ch1-20` (WPA2, 2412 MHz, 20 MHz wide, board 10.58.0.1) ``. The SSID
/// came in a datagram from anyone on the network: its control characters are written
/// escaped ([`escape`]).
pub fn describe(o: &WifiOffer) -> String {
    format!(
        "{} ({}, {} MHz, {} MHz wide, board {})",
        ssid_shown(o),
        security_word(o),
        o.freq_mhz,
        o.width_mhz,
        o.board
    )
}

/// Waits up to one poll for a datagram on `sock`: the offer and its sender; `None` for
/// nothing or junk.
fn next(sock: &UdpSocket) -> io::Result<Option<(WifiOffer, SocketAddr)>> {
    let mut buf = [0u8; MAX_LEN + 1];
    match sock.recv_from(&mut buf) {
        Ok((n, from)) => Ok(WifiOffer::parse(&buf[..n]).map(|o| (o, from))),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Acts on the offers arriving on `sock` with `joiner` until `stop` is set, each one
/// only when [`admit`] lets it in by what `live` (the running peer's registry) and
/// `links` (this host's addresses) say, telling `log` one line per offer acted on, one
/// per outcome and one per refusal (at most one per [`REFUSAL_LINE_EVERY`]), each
/// escaped.
///
/// # Errors
/// When the socket fails.
pub fn serve(
    sock: &UdpSocket,
    joiner: &Joiner,
    live: &Registry,
    links: &HostLinks,
    stop: &AtomicBool,
    log: &dyn Fn(&str),
) -> io::Result<()> {
    // The one gate to the terminal for everything this listener says.
    let say = |l: &str| log(&escape_lines(l));
    sock.set_read_timeout(Some(POLL))?;
    let mut tracker = Tracker::default();
    let mut refusals = Throttle::new(REFUSAL_LINE_EVERY);
    let mut cache = LinkCache {
        read_at: None,
        got: Ok(Vec::new()),
    };
    while !stop.load(Ordering::Relaxed) {
        let Some((offer, from)) = next(sock)? else {
            continue;
        };
        let sessions = live.sessions_at(from.ip());
        let verdict = match cache.now(links, Instant::now()) {
            Ok(host) => admit(&offer, from.ip(), &sessions, host),
            // No address of this host is known: no sender is the other end of one of
            // its links, and the refusal says so after the gate's own words.
            Err(e) => admit(&offer, from.ip(), &sessions, &[])
                .map_err(|why| format!("this host's addresses cannot be read ({e}): {why}")),
        };
        let admitted = match verdict {
            Ok(a) => a,
            Err(why) => {
                let line = format!(
                    "refused the WiFi offer from {from} of {}: {why}",
                    describe(&offer)
                );
                if let Some(l) = refusals.pass(&line, Instant::now()) {
                    say(&l);
                }
                continue;
            }
        };
        if !tracker.should_join(&offer.ssid, Instant::now()) {
            continue;
        }
        say(&format!(
            "WiFi offer from {from} (board {}, over this host's {}): {}; joining with {}",
            admitted.board.as_str(),
            admitted.link,
            describe(&offer),
            joiner.describe()
        ));
        let outcome = joiner.join(&admitted.offer);
        match &outcome {
            Outcome::Joined(said) => say(&format!(
                "joined {}{}; the board's tests come in over it",
                ssid_shown(&offer),
                if said.is_empty() {
                    String::new()
                } else {
                    format!(" ({said})")
                }
            )),
            Outcome::Failed(why) => say(&format!(
                "could not join {}: {why}; trying again in {} s if it is still offered",
                ssid_shown(&offer),
                RETRY_AFTER.as_secs()
            )),
            Outcome::ByHand(what) => say(what),
        }
        tracker.record(&offer.ssid, &outcome, Instant::now());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offer_is_described_with_its_ssid_escaped() {
        let o = WifiOffer {
            ssid: b"bb\x1b[2J\x1b]0;x\x07ch1".to_vec(),
            passphrase: None,
            freq_mhz: 2412,
            width_mhz: 20,
            board: std::net::Ipv4Addr::new(10, 58, 0, 1),
        };
        assert_eq!(
            describe(&o),
            r"`bb\u{1b}[2J\u{1b}]0;x\u{7}ch1` (open, 2412 MHz, 20 MHz wide, board 10.58.0.1)"
        );
    }
}
