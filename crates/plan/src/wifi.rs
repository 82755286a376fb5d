//! The WiFi part of a plan: the board as access point sweeping the channels the plan
//! lists, or as a client of the user's AP; each entry runs the same network tests as the
//! wired links.
//!
//! Bad values here (a country code that is not one, a passphrase WPA2 refuses, a channel
//! the radio lacks) do not refuse the plan: the WiFi step records each as an error (or
//! skips the entry with the reason) and the rest of the plan runs. `benchboot plan
//! check` shows them as warnings before a card is written.

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::file::WifiSection;
use crate::spelling::WifiBand;

/// The WiFi step of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WifiPlan {
    /// ISO 3166-1 alpha-2 code the regulatory domain is set to (`DE`), or `00` (the
    /// world domain: no AP on 5 GHz, channels 12-13 passive).
    pub country: String,
    pub role: WifiRole,
    /// One measurement each, in order. AP role: the channels swept. Client role: one
    /// entry (the user's AP picks the channel), or in QEMU one per stand-in AP.
    pub entries: Vec<WifiEntry>,
    /// How long to wait for a station to join the board's AP (AP role) or for the
    /// association and the DHCP lease (client role), ms.
    pub connect_wait_ms: u64,
    /// Warm-up at the start of each WiFi throughput run, measured but not counted, ms
    /// (at least 3 s: rate adaptation settles; the tests' own `omit_ms` if longer).
    pub warmup_ms: u64,
    /// Why the WiFi step cannot run at all (no radio, no firmware, a bad country code
    /// or passphrase): PID 1 records each as an error and runs the rest of the plan.
    #[serde(default)]
    pub problems: Vec<String>,
    /// QEMU only: the other end is the second mac80211_hwsim radio of the same guest.
    #[serde(default)]
    pub stand_in: Option<WifiStandIn>,
    /// The tests over WiFi when not the plan's own `network.tests` (QEMU's shorter set).
    #[serde(default)]
    pub tests: Option<crate::net_tests::NetTests>,
    /// The board file's name for the radio chip (`CYW43438`), for the results.
    #[serde(default)]
    pub chip: Option<String>,
    /// What the image cannot drive (board file `wifi.firmware-missing`): said with the
    /// error when no radio appears.
    #[serde(default)]
    pub firmware_missing: Option<String>,
}

/// Which end of the WiFi link the board is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "kebab-case")]
pub enum WifiRole {
    /// The board is the AP, one SSID of its own per entry (announced on the results
    /// link with its passphrase); `benchboot peer --wifi` on the host joins it.
    AccessPoint { security: WifiSecurity },
    /// The board joins the user's AP; the peer is `benchboot peer` on that LAN (the
    /// plan's `peer`, else the first one announcing itself). Only a hash of the SSID
    /// goes into results ([`crate::Plan::redacted`]).
    Client {
        ssid: String,
        /// WPA2-PSK passphrase (8..=63 printable ASCII) or 64 hex digits; `None`: an
        /// open network.
        passphrase: Option<String>,
        peer: Option<[u8; 4]>,
    },
}

/// How the board's own AP is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WifiSecurity {
    Open,
    /// WPA2-PSK with CCMP, the 4-way handshake done by the radio's firmware (brcmfmac's
    /// `4WAY_HANDSHAKE_AP_PSK` offload); a radio without the offload runs open and the
    /// results say so.
    Wpa2Psk,
}

impl WifiSecurity {
    /// `open` / `wpa2`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Wpa2Psk => "wpa2",
        }
    }
}

/// One WiFi measurement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WifiEntry {
    /// The link name its runs carry (`wifi-ch1-20`; `wifi` for a client of the user's
    /// AP): 1..=15 characters.
    pub name: String,
    /// The channel asked for; `None`: whatever the user's AP uses.
    pub asked: Option<AskedChannel>,
    /// The SSID of this entry's AP: the board's own (AP role) or the QEMU stand-in's;
    /// `None`: the user's AP (the role's SSID).
    pub ssid: Option<String>,
    /// Why this entry cannot run on this radio (a band it lacks, a width wider than it
    /// has): recorded, the next entry runs. The regulatory domain's refusals (DFS,
    /// no-IR) are found by PID 1 after setting the country.
    #[serde(default)]
    pub skip: Option<String>,
}

/// A channel as a plan asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskedChannel {
    /// `2.4` or `5`.
    pub band: WifiBand,
    /// The primary 20 MHz channel's number.
    pub channel: u8,
    /// 20, 40, 80 or 160 MHz.
    pub width_mhz: u32,
}

impl AskedChannel {
    /// The kernel's channel definition for it.
    ///
    /// # Errors
    /// A channel number the band lacks, a width no block of the band has there.
    pub fn chandef(
        &self,
    ) -> Result<benchboot_wifi::channel::Chandef, benchboot_wifi::channel::ChannelError> {
        let width = benchboot_wifi::channel::Width::from_mhz(self.width_mhz).ok_or(
            benchboot_wifi::channel::ChannelError::NoBlock {
                band: self.band.band(),
                channel: self.channel,
                width: self.width_mhz,
            },
        )?;
        benchboot_wifi::channel::Chandef::new(self.band.band(), self.channel, width)
    }

    /// `2.4 GHz ch 1 20 MHz`.
    pub fn describe(&self) -> String {
        format!(
            "{} GHz ch {} {} MHz",
            self.band.name(),
            self.channel,
            self.width_mhz
        )
    }

    /// The entry's link name, `wifi-ch<channel>-<width>` (channel numbers of the two
    /// bands do not overlap).
    pub fn link_name(&self) -> String {
        format!("wifi-ch{}-{}", self.channel, self.width_mhz)
    }
}

/// QEMU's stand-in for the other end of the WiFi link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WifiStandIn {
    /// Client role: each entry's AP is Debian's hostapd (a QEMU-only worker in the
    /// initramfs, at this path) on the second hwsim radio, moved into a network
    /// namespace with the DHCP server and the announcing peer.
    pub hostapd: String,
    /// Also start an AP on the board's radio (`START_AP` with a built beacon) and check
    /// the other radio's scan sees its beacons (mac80211 has no AP association in the
    /// kernel: that is as far as hwsim goes without hostapd on the board).
    pub ap_beacon_check: bool,
    /// Also join both radios to one IBSS (in the kernel, no user space) and pass TCP.
    pub ibss_smoke: bool,
}

/// The radio an image's board has (board file `[wifi]`), as plans check against it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WifiFacts {
    /// `CYW43438`, `CYW43455`, `mac80211_hwsim`.
    pub chip: String,
    /// The bands it has.
    pub bands: Vec<WifiBand>,
    /// The widths it can use, MHz.
    pub widths_mhz: Vec<u32>,
    /// Why the image cannot drive it (no firmware for the chip revision).
    #[serde(default)]
    pub firmware_missing: Option<String>,
}

impl WifiFacts {
    /// Why this radio cannot run `c` (`None`: it can, as far as the board file says).
    pub fn cannot(&self, c: &AskedChannel) -> Option<String> {
        if !self.bands.contains(&c.band) {
            let has: Vec<&str> = self.bands.iter().map(|b| b.name()).collect();
            return Some(format!(
                "the {} has no {} GHz radio (bands: {} GHz)",
                self.chip,
                c.band.name(),
                has.join(" and ")
            ));
        }
        if !self.widths_mhz.contains(&c.width_mhz) {
            let has: Vec<String> = self.widths_mhz.iter().map(u32::to_string).collect();
            return Some(format!(
                "the {} cannot use {} MHz channels (widths: {} MHz)",
                self.chip,
                c.width_mhz,
                has.join("/")
            ));
        }
        None
    }
}

/// Why `code` is not a country code the regulatory database could know: ISO 3166-1
/// alpha-2, upper case, or `00` (the world domain).
pub fn country_problem(code: &str) -> Option<String> {
    if code == "00" || ISO_3166_ALPHA2.binary_search(&code).is_ok() {
        return None;
    }
    let upper = code.to_ascii_uppercase();
    let hint = if upper != code && ISO_3166_ALPHA2.binary_search(&upper.as_str()).is_ok() {
        format!(" (write it in upper case: \"{upper}\")")
    } else {
        " (ISO 3166-1 alpha-2, e.g. \"DE\", \"US\", \"GB\", or \"00\" for the world domain)"
            .to_owned()
    };
    Some(format!("`{code}` is not a country code{hint}"))
}

/// ISO 3166-1 alpha-2 codes, sorted (Debian iso-codes 4.15.0, `iso_3166-1.json`).
const ISO_3166_ALPHA2: [&str; 249] = [
    "AD", "AE", "AF", "AG", "AI", "AL", "AM", "AO", "AQ", "AR", "AS", "AT", "AU", "AW", "AX", "AZ",
    "BA", "BB", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BL", "BM", "BN", "BO", "BQ", "BR", "BS",
    "BT", "BV", "BW", "BY", "BZ", "CA", "CC", "CD", "CF", "CG", "CH", "CI", "CK", "CL", "CM", "CN",
    "CO", "CR", "CU", "CV", "CW", "CX", "CY", "CZ", "DE", "DJ", "DK", "DM", "DO", "DZ", "EC", "EE",
    "EG", "EH", "ER", "ES", "ET", "FI", "FJ", "FK", "FM", "FO", "FR", "GA", "GB", "GD", "GE", "GF",
    "GG", "GH", "GI", "GL", "GM", "GN", "GP", "GQ", "GR", "GS", "GT", "GU", "GW", "GY", "HK", "HM",
    "HN", "HR", "HT", "HU", "ID", "IE", "IL", "IM", "IN", "IO", "IQ", "IR", "IS", "IT", "JE", "JM",
    "JO", "JP", "KE", "KG", "KH", "KI", "KM", "KN", "KP", "KR", "KW", "KY", "KZ", "LA", "LB", "LC",
    "LI", "LK", "LR", "LS", "LT", "LU", "LV", "LY", "MA", "MC", "MD", "ME", "MF", "MG", "MH", "MK",
    "ML", "MM", "MN", "MO", "MP", "MQ", "MR", "MS", "MT", "MU", "MV", "MW", "MX", "MY", "MZ", "NA",
    "NC", "NE", "NF", "NG", "NI", "NL", "NO", "NP", "NR", "NU", "NZ", "OM", "PA", "PE", "PF", "PG",
    "PH", "PK", "PL", "PM", "PN", "PR", "PS", "PT", "PW", "PY", "QA", "RE", "RO", "RS", "RU", "RW",
    "SA", "SB", "SC", "SD", "SE", "SG", "SH", "SI", "SJ", "SK", "SL", "SM", "SN", "SO", "SR", "SS",
    "ST", "SV", "SX", "SY", "SZ", "TC", "TD", "TF", "TG", "TH", "TJ", "TK", "TL", "TM", "TN", "TO",
    "TR", "TT", "TV", "TW", "TZ", "UA", "UG", "UM", "US", "UY", "UZ", "VA", "VC", "VE", "VG", "VI",
    "VN", "VU", "WF", "WS", "YE", "YT", "ZA", "ZM", "ZW",
];

pub use benchboot_wifi::psk::ssid_hash;

/// The channels an AP sweeps when the plan lists none: 2.4 GHz 1, 6 and 11 at 20 MHz,
/// the three that do not overlap (what every radio has, in every regulatory domain).
pub const DEFAULT_SWEEP: [AskedChannel; 3] = [
    AskedChannel {
        band: WifiBand::Ghz2,
        channel: 1,
        width_mhz: 20,
    },
    AskedChannel {
        band: WifiBand::Ghz2,
        channel: 6,
        width_mhz: 20,
    },
    AskedChannel {
        band: WifiBand::Ghz2,
        channel: 11,
        width_mhz: 20,
    },
];

/// Rate adaptation settles within this, ms: each WiFi run's warm-up is at least this.
pub const MIN_WARMUP_MS: u64 = 3000;
/// The start of every SSID the board's own AP takes, `bb-<board>-` (the whole SSID is
/// `bb-<board>-ch<channel>-<width>`): `benchboot peer --wifi` joins only an offered SSID
/// that starts with the name the offering board declared in its session.
pub fn ap_ssid_prefix(board: &str) -> String {
    format!("bb-{board}-")
}

/// How long the board's AP waits for `benchboot peer --wifi` to join, ms.
pub const AP_CONNECT_WAIT_MS: u64 = 120_000;
/// How long PID 1 scans for a client entry's AP, ms (a full 2.4 + 5 GHz active scan
/// takes 2-4 s on hardware, longer under QEMU's TCG).
pub const SCAN_WAIT_MS: u64 = 20_000;
/// How long a client waits for association and a DHCP lease, ms.
pub const CLIENT_CONNECT_WAIT_MS: u64 = 30_000;

/// A refusal of the WiFi section: (key under `network.wifi`, span, message).
pub(crate) type WifiError = (String, Option<std::ops::Range<usize>>, String);

/// The WiFi step for this image from the merged `[network.wifi]`; `None` when the plan
/// has none (`enabled = false`, or no section on a board without a radio). A board with
/// a radio and no section sweeps [`DEFAULT_SWEEP`] as AP, on hardware (`emulated`
/// false: QEMU's raspi machines model no radio, and a QEMU plan's WiFi is its own).
pub(crate) fn resolve(
    section: Option<&WifiSection>,
    facts: Option<&WifiFacts>,
    board: &str,
    emulated: bool,
) -> Result<Option<WifiPlan>, WifiError> {
    let default = WifiSection::default();
    let s = match section {
        Some(s) => s,
        None if facts.is_some() && !emulated => &default,
        None => return Ok(None),
    };
    if s.enabled == Some(false) {
        return Ok(None);
    }
    let mut problems = Vec::new();
    if facts.is_none() {
        problems.push(format!(
            "{board} has no WiFi radio (boards/{board}.toml has no [wifi]); remove [network.wifi] or set enabled = false"
        ));
    }
    let country = s
        .country
        .as_ref()
        .map_or_else(|| "00".to_owned(), |c| c.get_ref().clone());
    if let Some(p) = country_problem(&country) {
        problems.push(format!("network.wifi.country: {p}"));
    }
    let warmup_ms = warmup_ms(s)?;
    let (role, entries, connect_wait_ms) = match s.role.as_ref().map(|r| r.get_ref().as_str()) {
        None | Some("ap") => access_point(s, facts, board)?,
        Some("client") => client(s, &mut problems)?,
        Some(other) => {
            return Err(refuse(
                "role",
                span_of(&s.role),
                format!("`{other}`: write \"ap\" (the board is the access point) or \"client\""),
            ))
        }
    };
    Ok(Some(WifiPlan {
        country,
        role,
        entries,
        connect_wait_ms: s.connect_wait.map_or(connect_wait_ms, |w| w.0),
        warmup_ms,
        problems,
        stand_in: None,
        tests: None,
        chip: facts.map(|f| f.chip.clone()),
        firmware_missing: facts.and_then(|f| f.firmware_missing.clone()),
    }))
}

/// A role, its entries and how long each waits to connect, ms.
type RoleEntries = (WifiRole, Vec<WifiEntry>, u64);

/// A channel asked for, with its span in the file (`None`: the default sweep's).
type Asked = (AskedChannel, Option<std::ops::Range<usize>>);

/// The refusal of key `key` (under `network.wifi`) at `sp`, saying `m`.
fn refuse(key: &str, sp: Option<std::ops::Range<usize>>, m: String) -> WifiError {
    (key.to_owned(), sp, m)
}

/// The span of a string key, if the section sets it.
fn span_of(v: &Option<Spanned<String>>) -> Option<std::ops::Range<usize>> {
    v.as_ref().map(Spanned::span)
}

/// The warm-up of each throughput run, ms: the file's, at least [`MIN_WARMUP_MS`].
fn warmup_ms(s: &WifiSection) -> Result<u64, WifiError> {
    let warmup_ms = s.warm_up.map_or(MIN_WARMUP_MS, |w| w.0);
    if warmup_ms < MIN_WARMUP_MS {
        return Err(refuse(
            "warm-up",
            None,
            format!(
                "{warmup_ms} ms is too short: rate adaptation needs at least \"3 s\" to settle"
            ),
        ));
    }
    Ok(warmup_ms)
}

/// The board as access point: its security, one entry per channel asked (a channel the
/// radio cannot do is skipped with the reason), [`AP_CONNECT_WAIT_MS`].
fn access_point(
    s: &WifiSection,
    facts: Option<&WifiFacts>,
    board: &str,
) -> Result<RoleEntries, WifiError> {
    for (k, v) in [
        ("ssid", &s.ssid),
        ("passphrase", &s.passphrase),
        ("peer", &s.peer),
    ] {
        if v.is_some() {
            return Err(refuse(
                k,
                span_of(v),
                format!("`{k}` is for role = \"client\"; the board's own AP makes its SSID and passphrase per test"),
            ));
        }
    }
    let security = match s.security.as_ref().map(|v| v.get_ref().as_str()) {
        None | Some("wpa2") => WifiSecurity::Wpa2Psk,
        Some("open") => WifiSecurity::Open,
        Some(other) => {
            return Err(refuse(
                "security",
                span_of(&s.security),
                format!("`{other}`: write \"wpa2\" or \"open\""),
            ))
        }
    };
    let entries = channel_entries(&asked_channels(s)?, facts, board)?;
    Ok((
        WifiRole::AccessPoint { security },
        entries,
        AP_CONNECT_WAIT_MS,
    ))
}

/// The channels the section lists, each with its span, else [`DEFAULT_SWEEP`]; refused
/// when the list is empty.
fn asked_channels(s: &WifiSection) -> Result<Vec<Asked>, WifiError> {
    let asked: Vec<Asked> = match &s.channels {
        Some(c) => c
            .iter()
            .map(|c| {
                let v = c.get_ref();
                (
                    AskedChannel {
                        band: v.band,
                        channel: v.channel,
                        width_mhz: v.width,
                    },
                    Some(c.span()),
                )
            })
            .collect(),
        None => DEFAULT_SWEEP.iter().map(|c| (*c, None)).collect(),
    };
    if asked.is_empty() {
        return Err(refuse(
            "channels",
            None,
            "list at least one channel, or set enabled = false".into(),
        ));
    }
    Ok(asked)
}

/// One AP entry per channel in `asked`, its SSID made from `board`'s prefix; a channel
/// listed twice is refused, one the radio (`facts`) cannot do is skipped with why.
fn channel_entries(
    asked: &[Asked],
    facts: Option<&WifiFacts>,
    board: &str,
) -> Result<Vec<WifiEntry>, WifiError> {
    let mut entries: Vec<WifiEntry> = Vec::new();
    for (i, (c, sp)) in asked.iter().enumerate() {
        let name = c.link_name();
        if entries.iter().any(|e| e.name == name) {
            return Err(refuse(
                &format!("channels[{i}]"),
                sp.clone(),
                format!("{} is listed twice", c.describe()),
            ));
        }
        let skip = match c.chandef() {
            Err(e) => Some(e.to_string()),
            Ok(_) => facts.and_then(|f| f.cannot(c)),
        };
        entries.push(WifiEntry {
            ssid: Some(format!(
                "{}ch{}-{}",
                ap_ssid_prefix(board),
                c.channel,
                c.width_mhz
            )),
            name,
            asked: Some(*c),
            skip,
        });
    }
    Ok(entries)
}

/// The board as client of the user's AP: one entry, [`CLIENT_CONNECT_WAIT_MS`]. A bad
/// SSID or passphrase goes to `problems`, not a refusal.
fn client(s: &WifiSection, problems: &mut Vec<String>) -> Result<RoleEntries, WifiError> {
    for (k, present) in [
        ("channels", s.channels.is_some()),
        ("security", s.security.is_some()),
    ] {
        if present {
            return Err(refuse(
                k,
                None,
                format!("`{k}` is for role = \"ap\": as a client the board takes the user's AP as it is"),
            ));
        }
    }
    let ssid = s
        .ssid
        .as_ref()
        .map(|v| v.get_ref().clone())
        .unwrap_or_default();
    if ssid.is_empty() || ssid.len() > 32 {
        problems.push(format!(
            "network.wifi.ssid: an SSID has 1 to 32 bytes (IEEE 802.11 §9.4.2.2); {}",
            if ssid.is_empty() {
                "give the AP's `ssid`".to_owned()
            } else {
                format!("this one has {}", ssid.len())
            }
        ));
    }
    let passphrase = s.passphrase.as_ref().map(|v| v.get_ref().clone());
    if let Some(Err(e)) = passphrase.as_deref().map(benchboot_wifi::psk::check) {
        problems.push(format!("network.wifi.passphrase: {e}"));
    }
    let peer = client_peer(s)?;
    let entries = vec![WifiEntry {
        name: "wifi".into(),
        asked: None,
        ssid: None,
        skip: None,
    }];
    Ok((
        WifiRole::Client {
            ssid,
            passphrase,
            peer,
        },
        entries,
        CLIENT_CONNECT_WAIT_MS,
    ))
}

/// The client's `peer`, an IPv4 address as its four bytes, if the section sets one.
fn client_peer(s: &WifiSection) -> Result<Option<[u8; 4]>, WifiError> {
    let Some(p) = &s.peer else { return Ok(None) };
    p.get_ref()
        .parse::<std::net::Ipv4Addr>()
        .map(|a| Some(a.octets()))
        .map_err(|_| {
            refuse(
                "peer",
                Some(p.span()),
                format!(
                    "`{}` is no IPv4 address; write e.g. \"192.168.1.10\"",
                    p.get_ref()
                ),
            )
        })
}

impl WifiPlan {
    /// A copy fit for results: a client's SSID as its hash, its passphrase removed.
    pub fn redacted(&self) -> WifiPlan {
        let mut w = self.clone();
        if let WifiRole::Client {
            ssid, passphrase, ..
        } = &mut w.role
        {
            *ssid = format!("sha256:{}", ssid_hash(ssid.as_bytes()));
            if passphrase.is_some() {
                *passphrase = Some("(removed)".into());
            }
        }
        w
    }
}

/// A plan file's text with the values of `ssid` and `passphrase` keys replaced (the
/// SSID by its hash), for the copy results carry.
pub fn redact_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let key = line.split('=').next().unwrap_or("").trim();
        let value = line
            .split_once('=')
            .map(|(_, v)| v.trim().trim_matches('"'));
        match (key, value) {
            ("ssid", Some(v)) => {
                out.push_str(&format!("ssid = \"sha256:{}\"\n", ssid_hash(v.as_bytes())))
            }
            ("passphrase", Some(_)) => out.push_str("passphrase = \"(removed)\"\n"),
            _ => out.push_str(line),
        }
    }
    out
}
