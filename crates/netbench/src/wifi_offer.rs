//! The board's WiFi AP offered to the host: while its AP for one sweep entry waits for
//! a station, PID 1 sends one datagram a second over the results link (the gadget or
//! Ethernet link the host already has) to [`WIFI_OFFER_PORT`]; `benchboot peer --wifi`
//! listens there, joins the offered network with the host's WiFi adapter and serves the
//! peer on it.
//!
//! One line of text (SSID and passphrase hex-encoded: they may hold spaces):
//! `benchboot-wifi 1 ssid=<hex> security=wpa2|open psk=<hex>|- freq=<MHz> width=<MHz> board=<IPv4>\n`.
//! `board` is the board's address on its AP (its DHCP server leases the host `.2`).
//!
//! A datagram can come from anyone: the host acts on an offer only from the far end of
//! a point-to-point link of its own (a /30 or /31 it holds an address in) where a board
//! holds a live session on its peer, come in on the host's end of that link, and only
//! for that board's own SSIDs ([`WifiOffer::is_of_board`]); `benchboot peer --wifi`
//! (the host's `wifi_join::offers::admit`) holds that gate.

use std::net::Ipv4Addr;

/// UDP port the host listens on for offers: the peer's control port + 1.
pub const WIFI_OFFER_PORT: u16 = 5203;

/// The word an offer starts with.
pub const MAGIC: &str = "benchboot-wifi";

/// Version of the offer line.
pub const VERSION: u32 = 1;

/// Longest offer accepted, bytes (SSID 32 B and passphrase 63 B hex-encoded fit).
pub const MAX_LEN: usize = 512;

/// One network the board offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WifiOffer {
    /// 1..=32 bytes.
    pub ssid: Vec<u8>,
    /// WPA2-PSK passphrase; `None`: open.
    pub passphrase: Option<String>,
    /// Primary channel, MHz.
    pub freq_mhz: u32,
    pub width_mhz: u32,
    /// The board's address on its AP.
    pub board: Ipv4Addr,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

impl WifiOffer {
    /// The offer's datagram.
    pub fn encode(&self) -> String {
        let (security, psk) = match &self.passphrase {
            Some(p) => ("wpa2", hex(p.as_bytes())),
            None => ("open", "-".to_owned()),
        };
        format!(
            "{MAGIC} {VERSION} ssid={} security={security} psk={psk} freq={} width={} board={}\n",
            hex(&self.ssid),
            self.freq_mhz,
            self.width_mhz,
            self.board
        )
    }

    /// Whether the SSID is one of `board`'s own APs: it starts with `bb-<board>-`
    /// ([`benchboot_plan::wifi::ap_ssid_prefix`], the plan's SSID rule).
    pub fn is_of_board(&self, board: &str) -> bool {
        self.ssid
            .starts_with(benchboot_plan::wifi::ap_ssid_prefix(board).as_bytes())
    }

    /// An offer from a datagram; `None` for junk, another version, a missing field,
    /// an SSID outside 1..=32 bytes or a passphrase that is not text.
    pub fn parse(datagram: &[u8]) -> Option<WifiOffer> {
        if datagram.len() > MAX_LEN {
            return None;
        }
        let text = std::str::from_utf8(datagram).ok()?;
        let mut words = text.strip_suffix('\n').unwrap_or(text).split(' ');
        if words.next()? != MAGIC || words.next()?.parse::<u32>().ok()? != VERSION {
            return None;
        }
        let mut field = |key: &str| words.next()?.strip_prefix(key)?.strip_prefix('=');
        let ssid = unhex(field("ssid")?)?;
        let security = field("security")?;
        let psk = field("psk")?;
        let freq_mhz = field("freq")?.parse().ok()?;
        let width_mhz = field("width")?.parse().ok()?;
        let board = field("board")?.parse().ok()?;
        if ssid.is_empty() || ssid.len() > 32 {
            return None;
        }
        let passphrase = match (security, psk) {
            ("open", "-") => None,
            ("wpa2", p) => Some(String::from_utf8(unhex(p)?).ok()?),
            _ => return None,
        };
        if words.next().is_some() {
            return None;
        }
        Some(WifiOffer {
            ssid,
            passphrase,
            freq_mhz,
            width_mhz,
            board,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offer_round_trips_and_junk_is_refused() {
        let o = WifiOffer {
            ssid: b"bb-rpi-zero-w-ch1-20".to_vec(),
            passphrase: Some("a b c d e f".into()),
            freq_mhz: 2412,
            width_mhz: 20,
            board: Ipv4Addr::new(10, 58, 0, 1),
        };
        let line = o.encode();
        assert!(line.starts_with("benchboot-wifi 1 ssid=62622d"), "{line}");
        assert!(line.contains(" security=wpa2 psk=6120"), "{line}");
        assert!(
            line.ends_with(" freq=2412 width=20 board=10.58.0.1\n"),
            "{line}"
        );
        assert_eq!(WifiOffer::parse(line.as_bytes()), Some(o.clone()));
        let open = WifiOffer {
            passphrase: None,
            ..o
        };
        assert!(open.encode().contains("security=open psk=- "));
        assert_eq!(
            WifiOffer::parse(open.encode().as_bytes()),
            Some(open.clone())
        );
        for bad in [
            "",
            "benchboot-wifi 2 ssid=61 security=open psk=- freq=1 width=20 board=1.2.3.4",
            "benchboot-wifi 1 ssid=6 security=open psk=- freq=1 width=20 board=1.2.3.4",
            "benchboot-wifi 1 ssid= security=open psk=- freq=1 width=20 board=1.2.3.4",
            "benchboot-wifi 1 ssid=61 security=wep psk=- freq=1 width=20 board=1.2.3.4",
            "benchboot-wifi 1 ssid=61 security=open psk=- freq=1 width=20 board=1.2.3",
            "benchboot-wifi 1 ssid=61 security=open psk=- freq=1 width=20 board=1.2.3.4 x=1",
            "benchboot-peer 1 port=5202",
        ] {
            assert_eq!(WifiOffer::parse(bad.as_bytes()), None, "{bad}");
        }
        assert_eq!(WifiOffer::parse(&[b'x'; MAX_LEN + 1]), None);
    }

    #[test]
    fn an_ssid_is_a_boards_own_only_with_its_whole_name_and_the_dash() {
        let o = |ssid: &str| WifiOffer {
            ssid: ssid.as_bytes().to_vec(),
            passphrase: None,
            freq_mhz: 2412,
            width_mhz: 20,
            board: Ipv4Addr::new(10, 58, 0, 1),
        };
        assert!(o("bb-rpi-4b-ch1-20").is_of_board("rpi-4b"));
        assert!(!o("bb-rpi-4b-ch1-20").is_of_board("rpi-4"));
        assert!(!o("bb-rpi-4bx").is_of_board("rpi-4b"));
        assert!(!o("home-wifi").is_of_board("rpi-4b"));
        assert!(!o("xbb-rpi-4b-ch1-20").is_of_board("rpi-4b"));
    }
}
