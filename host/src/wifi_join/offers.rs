//! The offer listener: a UDP socket on
//! [`WIFI_OFFER_PORT`](benchboot_netbench::wifi_offer::WIFI_OFFER_PORT) (every
//! interface: the offers come over the results link, gadget or Ethernet), one
//! [`WifiOffer`] per datagram. A board repeats its offer once a second until a station
//! joins, so [`Tracker`] acts once per new SSID: an SSID joined (or told by hand) is not
//! joined again while it is the current one; a failed join is tried again after
//! [`RETRY_AFTER`] (NetworkManager may not have scanned the new AP yet).

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use benchboot_netbench::wifi_offer::{WifiOffer, MAX_LEN};

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

/// `` `bb-rpi-4b-ch1-20` (WPA2, 2412 MHz, 20 MHz wide, board 10.58.0.1) ``. The SSID
/// came in a datagram from anyone on the network: its control characters are written
/// escaped ([`benchboot_results::text::escape`]).
pub fn describe(o: &WifiOffer) -> String {
    format!(
        "`{}` ({}, {} MHz, {} MHz wide, board {})",
        benchboot_results::text::escape(&String::from_utf8_lossy(&o.ssid)),
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

/// Acts on the offers arriving on `sock` with `joiner` until `stop` is set, telling
/// `log` one line per offer acted on and one per outcome.
///
/// # Errors
/// When the socket fails.
pub fn serve(
    sock: &UdpSocket,
    joiner: &Joiner,
    stop: &AtomicBool,
    log: &dyn Fn(&str),
) -> io::Result<()> {
    sock.set_read_timeout(Some(POLL))?;
    let mut tracker = Tracker::default();
    while !stop.load(Ordering::Relaxed) {
        let Some((offer, from)) = next(sock)? else {
            continue;
        };
        if !tracker.should_join(&offer.ssid, Instant::now()) {
            continue;
        }
        log(&format!(
            "WiFi offer from {from}: {}; joining with {}",
            describe(&offer),
            joiner.describe()
        ));
        let outcome = joiner.join(&offer);
        match &outcome {
            Outcome::Joined(said) => log(&format!(
                "joined `{}`{}; the board's tests come in over it",
                String::from_utf8_lossy(&offer.ssid),
                if said.is_empty() {
                    String::new()
                } else {
                    format!(" ({said})")
                }
            )),
            Outcome::Failed(why) => log(&format!(
                "could not join `{}`: {why}; trying again in {} s if it is still offered",
                String::from_utf8_lossy(&offer.ssid),
                RETRY_AFTER.as_secs()
            )),
            Outcome::ByHand(what) => log(what),
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
