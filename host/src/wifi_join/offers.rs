//! The offer listener: a UDP socket on
//! [`WIFI_OFFER_PORT`](benchboot_netbench::wifi_offer::WIFI_OFFER_PORT) (every
//! interface: the offers come over the results link, gadget or Ethernet), one
//! [`WifiOffer`] per datagram.
//!
//! A datagram can come from anyone, and joining makes this host leave its network: an
//! offer is acted on only when [`admit`] lets it in, the one gate. Its sender's address
//! must have a live session on this host's peer (the [`Registry`] the peer owns and
//! shares), and the SSID must be one of the board's own, `bb-<board>-...` for a board
//! name that session declared. A refused offer is one line saying why, at most one per
//! [`REFUSAL_LINE_EVERY`] ([`Throttle`]: a flood cannot fill the terminal). Every line
//! printed passes [`escape_lines`] (SSIDs, the by-hand text, the tools' words).
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
use benchboot_netbench::peer::{Registry, Throttle, REFUSAL_LINE_EVERY};
use benchboot_netbench::wifi_offer::{WifiOffer, MAX_LEN};
use benchboot_results::name::SafeName;
use benchboot_results::text::{escape, escape_lines};

use super::{security_word, Joiner, Outcome};

/// How long after a failed join the same SSID is tried again.
pub const RETRY_AFTER: Duration = Duration::from_secs(15);

/// How often the listener looks at its stop flag.
const POLL: Duration = Duration::from_millis(200);

/// The offer socket on `addr` (`0.0.0.0:5203`).
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

/// Whether the offer `offer`, sent from `from`, is acted on, given `live`: the board
/// names the live sessions from `from` declared ([`Registry::boards_at`]). Let in: the
/// board whose SSID it is. Refused: why, in words (the SSID escaped).
///
/// # Errors
/// No session from that address; the sessions there named no board (an image older
/// than this benchboot); the SSID is not `bb-<board>-...` for any board they named.
pub fn admit(
    offer: &WifiOffer,
    from: IpAddr,
    live: &[Option<SafeName>],
) -> Result<SafeName, String> {
    let from = from.to_canonical();
    if live.is_empty() {
        return Err(format!(
            "no board holds a session with this peer from {from} (a board offers its AP \
             over the results link while it holds one)"
        ));
    }
    let named: Vec<&SafeName> = live.iter().flatten().collect();
    if let Some(b) = named.iter().find(|b| offer.is_of_board(b.as_str())) {
        return Ok((*b).clone());
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
/// only when [`admit`] lets it in by what `live` (the running peer's registry) knows,
/// telling `log` one line per offer acted on, one per outcome and one per refusal (at
/// most one per [`REFUSAL_LINE_EVERY`]), each escaped.
///
/// # Errors
/// When the socket fails.
pub fn serve(
    sock: &UdpSocket,
    joiner: &Joiner,
    live: &Registry,
    stop: &AtomicBool,
    log: &dyn Fn(&str),
) -> io::Result<()> {
    // The one gate to the terminal for everything this listener says.
    let say = |l: &str| log(&escape_lines(l));
    sock.set_read_timeout(Some(POLL))?;
    let mut tracker = Tracker::default();
    let mut refusals = Throttle::new(REFUSAL_LINE_EVERY);
    while !stop.load(Ordering::Relaxed) {
        let Some((offer, from)) = next(sock)? else {
            continue;
        };
        if let Err(why) = admit(&offer, from.ip(), &live.boards_at(from.ip())) {
            let line = format!(
                "refused the WiFi offer from {from} of {}: {why}",
                describe(&offer)
            );
            if let Some(l) = refusals.pass(&line, Instant::now()) {
                say(&l);
            }
            continue;
        }
        if !tracker.should_join(&offer.ssid, Instant::now()) {
            continue;
        }
        say(&format!(
            "WiFi offer from {from}: {}; joining with {}",
            describe(&offer),
            joiner.describe()
        ));
        let outcome = joiner.join(&offer);
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
