//! 802.11 information elements: reading a scan result's, and writing an AP's beacon.
//!
//! An element is `id (1 octet) | length (1 octet) | body (length octets)` (IEEE
//! 802.11-2020 §9.4.2.1); the element IDs are those of Table 9-92. A scan result's
//! `NL80211_BSS_INFORMATION_ELEMENTS` is a run of them (the frame body after the fixed
//! fields); [`parse`] reads the ones that tell what a BSS is and where it operates, and
//! stops at the first element that runs past the end, never panicking.
//!
//! [`beacon`] builds the two halves of a Beacon frame (§9.3.3.2) that
//! `NL80211_CMD_START_AP` takes: `NL80211_ATTR_BEACON_HEAD` is "the portion of the beacon
//! before the TIM IE" and `NL80211_ATTR_BEACON_TAIL` "the portion after" it
//! (`include/uapi/linux/nl80211.h`); the kernel (mac80211, or the FullMAC firmware) writes
//! the TIM element between them, from `NL80211_ATTR_DTIM_PERIOD` and the stations' power
//! save state.

use crate::channel::{channel_to_mhz, Band, Chandef, Width};

// Element IDs, IEEE 802.11-2020 Table 9-92.
const EID_SSID: u8 = 0;
const EID_SUPPORTED_RATES: u8 = 1;
const EID_DS_PARAMETER_SET: u8 = 3;
const EID_COUNTRY: u8 = 7;
const EID_ERP: u8 = 42;
const EID_HT_CAPABILITIES: u8 = 45;
const EID_RSN: u8 = 48;
const EID_EXTENDED_SUPPORTED_RATES: u8 = 50;
const EID_HT_OPERATION: u8 = 61;
const EID_VHT_CAPABILITIES: u8 = 191;
const EID_VHT_OPERATION: u8 = 192;
const EID_VENDOR_SPECIFIC: u8 = 221;

/// Cipher suite 00-0F-AC:2, TKIP (IEEE 802.11-2020 §9.4.2.24.2), as nl80211's
/// `WLAN_CIPHER_SUITE_TKIP` writes it: OUI in the top three octets, suite type in the last.
pub const CIPHER_TKIP: u32 = 0x000F_AC02;
/// Cipher suite 00-0F-AC:4, CCMP-128 (§9.4.2.24.2); `WLAN_CIPHER_SUITE_CCMP`.
pub const CIPHER_CCMP: u32 = 0x000F_AC04;
/// AKM suite 00-0F-AC:1, IEEE 802.1X (§9.4.2.24.3); the RSN element's default.
pub const AKM_8021X: u32 = 0x000F_AC01;
/// AKM suite 00-0F-AC:2, PSK (WPA2-Personal, §9.4.2.24.3); `WLAN_AKM_SUITE_PSK`.
pub const AKM_PSK: u32 = 0x000F_AC02;
/// AKM suite 00-0F-AC:8, SAE (WPA3-Personal, §9.4.2.24.3); `WLAN_AKM_SUITE_SAE`.
pub const AKM_SAE: u32 = 0x000F_AC08;

/// What a scan result's elements say about its BSS. Where an element appears more than
/// once, the first counts (rates: all of them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ies {
    /// SSID element (§9.4.2.2): 0..=32 octets, not necessarily UTF-8; empty when hidden.
    pub ssid: Option<Vec<u8>>,
    /// DS Parameter Set element (§9.4.2.4): the current channel number.
    pub ds_channel: Option<u8>,
    /// Country element (§9.4.2.8): the ISO 3166-1 alpha-2 code of its country string.
    pub country: Option<String>,
    /// HT Operation element (§9.4.2.56).
    pub ht_operation: Option<HtOperation>,
    /// VHT Operation element (§9.4.2.158).
    pub vht_operation: Option<VhtOperation>,
    /// An HT Capabilities element (§9.4.2.55) is present (802.11n).
    pub has_ht_capabilities: bool,
    /// A VHT Capabilities element (§9.4.2.157) is present (802.11ac).
    pub has_vht_capabilities: bool,
    /// RSN element (§9.4.2.24): WPA2/WPA3.
    pub rsn: Option<Rsn>,
    /// Supported Rates and Extended Supported Rates (§9.4.2.3, §9.4.2.12) in units of
    /// 500 kb/s (2 = 1 Mb/s, 108 = 54 Mb/s), the basic-rate bit cleared and the BSS
    /// membership selectors (HT PHY, VHT PHY, SAE H2E, ...; §9.4.2.3) left out.
    pub supported_rates_500kbps: Vec<u8>,
}

/// The start of the HT Operation element (IEEE 802.11-2020 §9.4.2.56).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HtOperation {
    /// Primary Channel: the channel number of the primary 20 MHz channel.
    pub primary: u8,
    /// Secondary Channel Offset (HT Operation Information bits 0-1): 0 none (20 MHz),
    /// 1 above the primary (SCA), 3 below (SCB); 2 is reserved.
    pub secondary_offset: u8,
    /// STA Channel Width (bit 2): 1 allows any width of the supported set (40 MHz), 0
    /// only 20 MHz.
    pub sta_channel_width_any: bool,
}

/// The VHT Operation Information of the VHT Operation element (IEEE 802.11-2020
/// §9.4.2.158).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VhtOperation {
    /// Channel Width: 0 = 20 or 40 MHz (per HT Operation), 1 = 80, 160 or 80+80 MHz;
    /// 2 (160) and 3 (80+80) are the deprecated encodings.
    pub channel_width: u8,
    /// Channel Center Frequency Segment 0: the centre channel number of the 80 MHz
    /// channel (of the 80 MHz half holding the primary, at 160 MHz).
    pub seg0: u8,
    /// Channel Center Frequency Segment 1: 0 at 80 MHz; the centre channel of the whole
    /// 160 MHz channel (8 from `seg0`), or of the second segment of 80+80 MHz.
    pub seg1: u8,
}

/// The cipher and key-management suites of an RSN element (IEEE 802.11-2020
/// §9.4.2.24.1-3), each as a 32-bit OUI:type (for example [`CIPHER_CCMP`], [`AKM_PSK`]);
/// fields the element leaves out take the §9.4.2.24.1 defaults (CCMP-128, 802.1X).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rsn {
    pub pairwise: Vec<u32>,
    pub akm: Vec<u32>,
    pub group: u32,
}

impl Rsn {
    /// Whether a WPA2-Personal station (PSK, CCMP) can join: the AKM list has PSK, the
    /// pairwise list CCMP.
    pub fn wpa2_psk_ccmp(&self) -> bool {
        self.akm.contains(&AKM_PSK) && self.pairwise.contains(&CIPHER_CCMP)
    }
}

/// The elements of `ies` as (element ID, body), in order; ends at the first element whose
/// length runs past the end of the buffer.
pub fn elements(ies: &[u8]) -> impl Iterator<Item = (u8, &[u8])> {
    let mut rest = ies;
    std::iter::from_fn(move || {
        let [id, len, tail @ ..] = rest else {
            return None;
        };
        let (body, after) = tail.split_at_checked(usize::from(*len))?;
        rest = after;
        Some((*id, body))
    })
}

/// Reads the elements of a scan result (`NL80211_BSS_INFORMATION_ELEMENTS` or
/// `NL80211_BSS_BEACON_IES`). Truncated or malformed input gives what could be read.
pub fn parse(ies: &[u8]) -> Ies {
    let mut out = Ies::default();
    for (id, body) in elements(ies) {
        match (id, body) {
            (EID_SSID, _) if out.ssid.is_none() => out.ssid = Some(body.to_vec()),
            (EID_SUPPORTED_RATES | EID_EXTENDED_SUPPORTED_RATES, _) => out
                .supported_rates_500kbps
                .extend(body.iter().filter_map(|&r| rate_500kbps(r))),
            (EID_DS_PARAMETER_SET, [channel, ..]) => {
                out.ds_channel.get_or_insert(*channel);
            }
            (EID_COUNTRY, [a, b, ..])
                if out.country.is_none()
                    && a.is_ascii_alphanumeric()
                    && b.is_ascii_alphanumeric() =>
            {
                out.country = Some(String::from_utf8_lossy(&[*a, *b]).into_owned());
            }
            (EID_HT_CAPABILITIES, _) => out.has_ht_capabilities = true,
            (EID_HT_OPERATION, [primary, info, ..]) => {
                out.ht_operation.get_or_insert(HtOperation {
                    primary: *primary,
                    secondary_offset: info & 0x03,
                    sta_channel_width_any: info & 0x04 != 0,
                });
            }
            (EID_VHT_CAPABILITIES, _) => out.has_vht_capabilities = true,
            (EID_VHT_OPERATION, [channel_width, seg0, seg1, ..]) => {
                out.vht_operation.get_or_insert(VhtOperation {
                    channel_width: *channel_width,
                    seg0: *seg0,
                    seg1: *seg1,
                });
            }
            (EID_RSN, _) if out.rsn.is_none() => out.rsn = parse_rsn(body),
            _ => {}
        }
    }
    out
}

/// A rate octet (§9.4.2.3): bit 7 marks a basic rate; with it set, values 122..=127 are
/// BSS membership selectors (§9.4.2.3), not rates.
fn rate_500kbps(octet: u8) -> Option<u8> {
    let value = octet & 0x7f;
    let selector = octet & 0x80 != 0 && value >= 122;
    (value != 0 && !selector).then_some(value)
}

/// The RSN element body (§9.4.2.24.1): version 1, group suite, pairwise
/// count + suites, AKM count + suites, then capabilities and PMKIDs (not read).
fn parse_rsn(body: &[u8]) -> Option<Rsn> {
    let [1, 0, rest @ ..] = body else {
        return None;
    };
    let (group, rest) = match rest.split_first_chunk::<4>() {
        Some((suite, rest)) => (u32::from_be_bytes(*suite), rest),
        None => (CIPHER_CCMP, rest),
    };
    let (pairwise, rest) = suite_list(rest, CIPHER_CCMP);
    let (akm, _) = match rest {
        Some(rest) => suite_list(rest, AKM_8021X),
        None => (vec![AKM_8021X], None),
    };
    Some(Rsn {
        pairwise,
        akm,
        group,
    })
}

/// A suite count (u16 LE) and that many 4-octet suites, and what follows them: `default`
/// alone when the count is absent; as many whole suites as there are when the list is cut
/// short. No rest in either case: the fields after are absent too.
fn suite_list(bytes: &[u8], default: u32) -> (Vec<u32>, Option<&[u8]>) {
    let Some((count, mut rest)) = bytes.split_first_chunk::<2>() else {
        return (vec![default], None);
    };
    let mut suites = Vec::new();
    for _ in 0..u16::from_le_bytes(*count) {
        let Some((suite, after)) = rest.split_first_chunk::<4>() else {
            return (suites, None);
        };
        suites.push(u32::from_be_bytes(*suite));
        rest = after;
    }
    (suites, Some(rest))
}

/// Where a BSS's whole channel is centred, relative to its primary.
enum Centre {
    Primary,
    /// MHz from the primary channel's frequency.
    Offset(i32),
    /// A channel number of the band.
    Channel(u8),
}

impl Ies {
    /// The primary channel number: HT Operation's, else the DS Parameter Set's.
    pub fn primary_channel(&self) -> Option<u8> {
        self.ht_operation.map(|h| h.primary).or(self.ds_channel)
    }

    /// The width the BSS operates at on `band`: VHT Operation 80 or 160 MHz (160 when
    /// segment 1 is 8 channels from segment 0, §9.4.2.158; 80+80 counts as 80, the
    /// primary's segment) at 5 GHz; else 40 MHz when HT Operation names a secondary
    /// channel; else 20 MHz HT; [`Width::NoHt20`] without an HT Operation element
    /// (802.11a/b/g).
    pub fn width(&self, band: Band) -> Width {
        self.shape(band).0
    }

    /// The centre frequency of the BSS's whole channel, MHz (the primary's at 20 MHz).
    pub fn center1_mhz(&self, band: Band) -> Option<u32> {
        let primary = channel_to_mhz(band, self.primary_channel()?)?;
        match self.shape(band).1 {
            Centre::Primary => Some(primary),
            Centre::Offset(mhz) => primary.checked_add_signed(mhz),
            Centre::Channel(c) => channel_to_mhz(band, c),
        }
    }

    /// The BSS's channel as a [`Chandef`], when its primary channel is known.
    pub fn chandef(&self, band: Band) -> Option<Chandef> {
        Some(Chandef {
            control_mhz: channel_to_mhz(band, self.primary_channel()?)?,
            width: self.width(band),
            center1_mhz: self.center1_mhz(band)?,
        })
    }

    fn shape(&self, band: Band) -> (Width, Centre) {
        let Some(ht) = self.ht_operation else {
            return (Width::NoHt20, Centre::Primary);
        };
        if let (Band::Ghz5, Some(v)) = (band, self.vht_operation) {
            match v.channel_width {
                1 if v.seg1 != 0 && v.seg0.abs_diff(v.seg1) == 8 => {
                    return (Width::W160, Centre::Channel(v.seg1));
                }
                1 | 3 => return (Width::W80, Centre::Channel(v.seg0)),
                2 => return (Width::W160, Centre::Channel(v.seg0)),
                _ => {}
            }
        }
        match ht.secondary_offset {
            1 => (Width::W40, Centre::Offset(10)),
            3 => (Width::W40, Centre::Offset(-10)),
            _ => (Width::W20, Centre::Primary),
        }
    }
}

/// Whether the secondary 20 MHz channel of the 40 MHz channel holding the primary lies
/// above it (HT40+, HT Operation's "SCA"), for a 40, 80 or 160 MHz chandef; `None` at 20.
/// At 80/160 MHz the 40 MHz halves are fixed by the block (§21.3.14): 36 is HT40+, 40
/// HT40-, 44 HT40+, 48 HT40- in the 80 MHz block centred on 42.
pub fn ht40_above(chandef: &Chandef) -> Option<bool> {
    let control = chandef.control_mhz;
    let centre = chandef.center1_mhz;
    let toward = |c: u32, d: u32| if control < c { c - d } else { c + d };
    let centre40 = match chandef.width {
        Width::NoHt20 | Width::W20 => return None,
        Width::W40 => centre,
        Width::W80 => toward(centre, 20),
        Width::W160 => toward(toward(centre, 40), 20),
    };
    Some(control < centre40)
}

/// What goes into a beacon (and what the radio can do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BeaconParams<'a> {
    /// The AP interface's MAC address: source address and BSSID.
    pub mac: [u8; 6],
    /// 0..=32 octets.
    pub ssid: &'a [u8],
    pub chandef: Chandef,
    /// Beacon Interval field (§9.4.1.3), in TU (1024 µs); 100 is usual.
    pub beacon_interval_tu: u16,
    /// WPA2-Personal (RSN element with PSK and CCMP; Privacy bit); open otherwise.
    pub wpa2: bool,
    /// ISO 3166-1 alpha-2 code (upper case) for the Country element.
    pub country: [u8; 2],
    /// The radio's HT Capability Information (`NL80211_BAND_ATTR_HT_CAPA` of GET_WIPHY,
    /// §9.4.2.55.2); `None`: no 802.11n.
    pub ht_capa: Option<u16>,
    /// The radio's VHT Capabilities Information (`NL80211_BAND_ATTR_VHT_CAPA`,
    /// §9.4.2.157.2); `None`: no 802.11ac.
    pub vht_capa: Option<u32>,
}

/// Why a beacon cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BeaconError {
    #[error("the SSID has {0} bytes; an SSID has at most 32 (IEEE 802.11-2020 §9.4.2.2)")]
    SsidTooLong(usize),
    #[error("{0} MHz is not the frequency of a 2.4 or 5 GHz channel (IEEE 802.11-2020 Annex E)")]
    NoChannel(u32),
    #[error(
        "a {width} MHz channel with its primary at {control_mhz} MHz cannot be centred on \
         {center1_mhz} MHz"
    )]
    BadCentre {
        width: u32,
        control_mhz: u32,
        center1_mhz: u32,
    },
    #[error("a {width} MHz channel needs {needs}, which the radio did not report")]
    Unsupported { width: u32, needs: &'static str },
    #[error("country {0:?} is not two ASCII capital letters (ISO 3166-1 alpha-2)")]
    Country(String),
}

/// 2.4 GHz rates, 500 kb/s units, bit 7 = basic (§9.4.2.3): 1, 2, 5.5, 11 Mb/s (basic,
/// DSSS/HR-DSSS) and 6, 9, 12, 18 (ERP-OFDM); 24, 36, 48, 54 go into Extended Supported
/// Rates, as Supported Rates holds 8 at most.
const RATES_2GHZ: [u8; 8] = [0x82, 0x84, 0x8b, 0x96, 0x0c, 0x12, 0x18, 0x24];
const EXT_RATES_2GHZ: [u8; 4] = [0x30, 0x48, 0x60, 0x6c];
/// 5 GHz (OFDM): 6, 12, 24 Mb/s basic (the mandatory rates, §17.3.8.2) and 9, 18, 36,
/// 48, 54.
const RATES_5GHZ: [u8; 8] = [0x8c, 0x12, 0x98, 0x24, 0xb0, 0x48, 0x60, 0x6c];

/// WMM Parameter Element (Wi-Fi Alliance WMM Specification §2.2.2: vendor-specific OUI
/// 00-50-F2, type 2, subtype 1, version 1), QoS Info 0, with the default AP EDCA
/// parameters of IEEE 802.11-2020 Table 9-155 (hostapd's `wmm_ac_*` defaults): per AC
/// ACI/AIFSN, ECWmin/ECWmax, TXOP limit (32 µs units, LE): BE AIFSN 3 CW 15-1023; BK
/// AIFSN 7 CW 15-1023; VI AIFSN 2 CW 7-15 TXOP 3.008 ms; VO AIFSN 2 CW 3-7 TXOP 1.504 ms.
const WMM_PARAMETERS: [u8; 24] = [
    0x00, 0x50, 0xf2, 0x02, 0x01, 0x01, 0x00, 0x00, //
    0x03, 0xa4, 0x00, 0x00, // AC_BE
    0x27, 0xa4, 0x00, 0x00, // AC_BK
    0x42, 0x43, 0x5e, 0x00, // AC_VI
    0x62, 0x32, 0x2f, 0x00, // AC_VO
];

/// The head and tail of a Beacon frame (IEEE 802.11-2020 §9.3.3.2, in the element order
/// of its frame body table) for `NL80211_CMD_START_AP`'s `NL80211_ATTR_BEACON_HEAD` and
/// `NL80211_ATTR_BEACON_TAIL`; the kernel puts the TIM element between them.
///
/// Head: management header (Frame Control 0x0080 = Beacon, Duration 0, DA broadcast,
/// SA = BSSID = `mac`, Sequence Control 0: the driver numbers frames), Timestamp 0 (the
/// hardware writes it), Beacon Interval, Capability Information (§9.4.1.4: ESS; Privacy
/// with WPA2; Short Preamble and Short Slot Time at 2.4 GHz, where they mean something),
/// SSID, Supported Rates, DS Parameter Set.
///
/// Tail: Country (§9.4.2.8; one triplet, 20 dBm: channels 1-13 at 2.4 GHz, the 20 MHz
/// channels in use at 5 GHz; the kernel's regulatory domain is what limits power), ERP (2.4 GHz: no protection, no non-ERP stations),
/// Extended Supported Rates (2.4 GHz), RSN (WPA2: CCMP group and pairwise, PSK AKM,
/// 16 replay counters when WMM is on, as hostapd writes it), HT Capabilities and HT
/// Operation (when the radio has HT; one spatial stream, MCS 0-7: both Pi radios are
/// 1x1), VHT Capabilities and VHT Operation (80 and 160 MHz; 1 stream, MCS 0-9), and the
/// WMM Parameter element whenever HT is on, without which mac80211 stations turn HT off
/// ("WMM/QoS not supported").
pub fn beacon(p: &BeaconParams) -> Result<(Vec<u8>, Vec<u8>), BeaconError> {
    let c = &p.chandef;
    if p.ssid.len() > 32 {
        return Err(BeaconError::SsidTooLong(p.ssid.len()));
    }
    let no_channel = BeaconError::NoChannel(c.control_mhz);
    let band = c.band().ok_or(no_channel.clone())?;
    let channel = c.channel().ok_or(no_channel)?;
    if !centre_fits(c, band) {
        return Err(BeaconError::BadCentre {
            width: c.width.mhz(),
            control_mhz: c.control_mhz,
            center1_mhz: c.center1_mhz,
        });
    }
    if !p.country.iter().all(u8::is_ascii_uppercase) {
        return Err(BeaconError::Country(
            String::from_utf8_lossy(&p.country).into_owned(),
        ));
    }
    let unsupported = |needs| BeaconError::Unsupported {
        width: c.width.mhz(),
        needs,
    };
    let ht = match (c.width, p.ht_capa) {
        (Width::NoHt20, _) => None,
        (_, Some(capa)) => Some(capa),
        (Width::W20, None) => None,
        (_, None) => return Err(unsupported("HT (802.11n)")),
    };
    let vht = match (c.width, p.vht_capa) {
        (Width::W80 | Width::W160, Some(capa)) if ht.is_some() => Some(capa),
        (Width::W80 | Width::W160, _) => return Err(unsupported("VHT (802.11ac)")),
        _ => None,
    };
    let ghz2 = band == Band::Ghz2;

    let mut capability: u16 = 0x0001; // ESS
    if p.wpa2 {
        capability |= 0x0010; // Privacy
    }
    if ghz2 {
        capability |= 0x0020 | 0x0400; // Short Preamble, Short Slot Time
    }
    let mut head = Vec::with_capacity(64);
    head.extend_from_slice(&[0x80, 0x00, 0x00, 0x00]); // Frame Control, Duration
    head.extend_from_slice(&[0xff; 6]); // DA
    head.extend_from_slice(&p.mac); // SA
    head.extend_from_slice(&p.mac); // BSSID
    head.extend_from_slice(&[0x00, 0x00]); // Sequence Control
    head.extend_from_slice(&[0x00; 8]); // Timestamp
    head.extend_from_slice(&p.beacon_interval_tu.to_le_bytes());
    head.extend_from_slice(&capability.to_le_bytes());
    push(&mut head, EID_SSID, p.ssid);
    let rates = if ghz2 { &RATES_2GHZ } else { &RATES_5GHZ };
    push(&mut head, EID_SUPPORTED_RATES, rates);
    push(&mut head, EID_DS_PARAMETER_SET, &[channel]);

    let mut tail = Vec::with_capacity(160);
    let [a, b] = p.country;
    let (first, count) = match (band, channel) {
        (Band::Ghz2, 1..=13) => (1, 13),
        (Band::Ghz2, _) => (channel, 1),
        // The lowest 20 MHz channel of the block, and how many it spans.
        (Band::Ghz5, _) => (
            ((c.center1_mhz - 5000) / 5 - (c.width.mhz() / 10 - 2)) as u8,
            (c.width.mhz() / 20) as u8,
        ),
    };
    push(&mut tail, EID_COUNTRY, &[a, b, b' ', first, count, 20]);
    if ghz2 {
        push(&mut tail, EID_ERP, &[0x00]);
        push(&mut tail, EID_EXTENDED_SUPPORTED_RATES, &EXT_RATES_2GHZ);
    }
    if p.wpa2 {
        let capabilities: u16 = if ht.is_some() { 0x000c } else { 0 };
        let mut rsn = vec![0x01, 0x00];
        rsn.extend_from_slice(&CIPHER_CCMP.to_be_bytes());
        rsn.extend_from_slice(&[0x01, 0x00]);
        rsn.extend_from_slice(&CIPHER_CCMP.to_be_bytes());
        rsn.extend_from_slice(&[0x01, 0x00]);
        rsn.extend_from_slice(&AKM_PSK.to_be_bytes());
        rsn.extend_from_slice(&capabilities.to_le_bytes());
        push(&mut tail, EID_RSN, &rsn);
    }
    if let Some(capa) = ht {
        push(
            &mut tail,
            EID_HT_CAPABILITIES,
            &ht_capabilities(capa, c.width),
        );
        push(
            &mut tail,
            EID_HT_OPERATION,
            &ht_operation(channel, ht40_above(c)),
        );
    }
    if let Some(capa) = vht {
        push(&mut tail, EID_VHT_CAPABILITIES, &vht_capabilities(capa));
        push(&mut tail, EID_VHT_OPERATION, &vht_operation(c));
    }
    if ht.is_some() {
        push(&mut tail, EID_VENDOR_SPECIFIC, &WMM_PARAMETERS);
    }
    Ok((head, tail))
}

/// Appends one element; bodies here are all at most 32 octets.
fn push(out: &mut Vec<u8>, id: u8, body: &[u8]) {
    out.push(id);
    out.push(body.len() as u8);
    out.extend_from_slice(body);
}

/// Whether the centre sits where the width puts it: on the primary at 20 MHz, 10 MHz off at
/// 40, 10 or 30 at 80, 10..=70 at 160 (80 and 160 at 5 GHz only), on a channel number.
pub(crate) fn centre_fits(c: &Chandef, band: Band) -> bool {
    let off = c.control_mhz.abs_diff(c.center1_mhz);
    let fits = match c.width {
        Width::NoHt20 | Width::W20 => off == 0,
        Width::W40 => off == 10,
        Width::W80 => band == Band::Ghz5 && matches!(off, 10 | 30),
        Width::W160 => band == Band::Ghz5 && matches!(off, 10 | 30 | 50 | 70),
    };
    fits && c.center_channel().is_some()
}

/// HT Capabilities element body (§9.4.2.55, 26 octets). Capability Information is the
/// radio's, with Supported Channel Width Set (bit 1) and Short GI for 40 MHz (bit 6)
/// cleared on a 20 MHz channel (as hostapd does without `[HT40±]`). A-MPDU Parameters:
/// maximum length exponent 3 (65 535 octets), minimum start spacing 16 µs (what
/// brcmfmac reports; more than mac80211_hwsim needs). Supported MCS Set: Rx MCS 0-7
/// (one spatial stream), Tx MCS Set Defined, equal to Rx.
fn ht_capabilities(capa: u16, width: Width) -> [u8; 26] {
    let capa = if width.mhz() >= 40 {
        capa
    } else {
        capa & !(0x0002 | 0x0040)
    };
    let mut body = [0u8; 26];
    body[..2].copy_from_slice(&capa.to_le_bytes());
    body[2] = 0x1f;
    body[3] = 0xff; // Rx MCS bitmask, MCS 0-7
    body[3 + 12] = 0x01; // Tx MCS Set Defined
    body
}

/// HT Operation element body (§9.4.2.56, 22 octets): primary channel; Secondary Channel
/// Offset 1 (above) / 3 (below) and STA Channel Width 1 on a 40+ MHz channel; HT
/// Protection none; Basic HT-MCS Set empty.
fn ht_operation(primary: u8, secondary_above: Option<bool>) -> [u8; 22] {
    let mut body = [0u8; 22];
    body[0] = primary;
    body[1] = match secondary_above {
        Some(true) => 0x01 | 0x04,
        Some(false) => 0x03 | 0x04,
        None => 0x00,
    };
    body
}

/// VHT Capabilities element body (§9.4.2.157, 12 octets): the radio's VHT Capabilities
/// Information; Rx and Tx VHT-MCS Map 0xfffe (one spatial stream, MCS 0-9; the others
/// not supported), highest data rates 0 (not stated).
fn vht_capabilities(capa: u32) -> [u8; 12] {
    let mut body = [0u8; 12];
    body[..4].copy_from_slice(&capa.to_le_bytes());
    body[4..6].copy_from_slice(&0xfffe_u16.to_le_bytes());
    body[8..10].copy_from_slice(&0xfffe_u16.to_le_bytes());
    body
}

/// VHT Operation element body (§9.4.2.158, 5 octets): Channel Width 1; at 80 MHz segment
/// 0 = the centre channel and segment 1 = 0; at 160 MHz segment 0 = the centre of the
/// 80 MHz half holding the primary and segment 1 = the centre of the 160 MHz channel
/// (the current encoding of §9.4.2.158, which hostapd also sends). Basic VHT-MCS and NSS
/// Set 0xfffc: one stream, MCS 0-7.
fn vht_operation(c: &Chandef) -> [u8; 5] {
    let centre = ((c.center1_mhz - 5000) / 5) as u8;
    let (seg0, seg1) = if c.width == Width::W160 {
        let half = if c.control_mhz < c.center1_mhz {
            centre - 8
        } else {
            centre + 8
        };
        (half, centre)
    } else {
        (centre, 0)
    };
    [0x01, seg0, seg1, 0xfc, 0xff]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    const MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x01, 0x00];
    /// CYW43455-like: LDPC off, HT20/40, SM PS disabled, SGI 20/40, DSSS/CCK 40.
    const HT_CAPA: u16 = 0x1062 | 0x000c;
    const VHT_CAPA: u32 = 0x0000_0060;

    fn params(band: Band, channel: u8, width: Width) -> BeaconParams<'static> {
        BeaconParams {
            mac: MAC,
            ssid: b"benchboot",
            chandef: Chandef::new(band, channel, width).unwrap(),
            beacon_interval_tu: 100,
            wpa2: true,
            country: *b"DE",
            ht_capa: Some(HT_CAPA),
            vht_capa: Some(VHT_CAPA),
        }
    }

    /// The elements of head (after the 24-octet header and 12 octets of fixed fields)
    /// and tail, as a scan would see them (the kernel's TIM between them left out).
    fn built(p: &BeaconParams) -> (Vec<u8>, Ies) {
        let (head, tail) = beacon(p).unwrap();
        let mut ies = head[36..].to_vec();
        ies.extend_from_slice(&tail);
        let parsed = parse(&ies);
        (head, parsed)
    }

    #[test]
    fn beacon_head_is_the_header_fixed_fields_ssid_rates_and_channel() {
        let (head, tail) = beacon(&params(Band::Ghz2, 1, Width::W20)).unwrap();
        let want = unhex(
            "8000 0000 ffffffffffff 020000000100 020000000100 0000
             0000000000000000 6400 3104
             0009 62656e6368626f6f74
             0108 82848b960c121824
             0301 01",
        );
        assert_eq!(head, want);
        // Country, ERP, Extended Supported Rates, RSN lead the tail, in §9.3.3.2 order.
        let want_tail = unhex(
            "0706 444520 010d14
             2a01 00
             3204 3048606c
             3014 0100 000fac04 0100 000fac04 0100 000fac02 0c00",
        );
        assert_eq!(tail[..want_tail.len()], want_tail[..]);
        // The WMM Parameter element closes it.
        let wmm = &tail[tail.len() - 26..];
        assert_eq!((wmm[0], wmm[1]), (EID_VENDOR_SPECIFIC, 24));
        assert_eq!(wmm[2..], WMM_PARAMETERS);
    }

    #[test]
    fn built_beacons_parse_back_to_their_channel() {
        let cases = [
            (Band::Ghz2, 1, Width::W20, 2412, None),
            (Band::Ghz2, 11, Width::W40, 2452, Some(3)),
            (Band::Ghz5, 36, Width::W40, 5190, Some(1)),
            (Band::Ghz5, 36, Width::W80, 5210, Some(1)),
            (Band::Ghz5, 48, Width::W80, 5210, Some(3)),
            (Band::Ghz5, 100, Width::W160, 5570, Some(1)),
            (Band::Ghz5, 128, Width::W160, 5570, Some(3)),
        ];
        for (band, channel, width, centre, offset) in cases {
            let p = params(band, channel, width);
            let (_, ies) = built(&p);
            let what = format!("{band} ch{channel}/{}", width.mhz());
            assert_eq!(ies.ssid.as_deref(), Some(&b"benchboot"[..]), "{what}");
            assert_eq!(ies.ds_channel, Some(channel), "{what}");
            assert_eq!(ies.primary_channel(), Some(channel), "{what}");
            assert_eq!(ies.country.as_deref(), Some("DE"), "{what}");
            assert_eq!(ies.width(band), width, "{what}");
            assert_eq!(ies.center1_mhz(band), Some(centre), "{what}");
            assert_eq!(ies.chandef(band), Some(p.chandef), "{what}");
            let ht = ies.ht_operation.unwrap();
            assert_eq!(ht.secondary_offset, offset.unwrap_or(0), "{what}");
            assert_eq!(ht.sta_channel_width_any, offset.is_some(), "{what}");
            let wide = width.mhz() >= 80;
            assert_eq!(ies.vht_operation.is_some(), wide, "{what}");
            assert_eq!(ies.has_vht_capabilities, wide, "{what}");
            assert!(ies.has_ht_capabilities, "{what}");
            assert!(ies.rsn.as_ref().unwrap().wpa2_psk_ccmp(), "{what}");
        }
        // 160 MHz: segment 0 the primary's 80 MHz half, segment 1 the whole channel.
        let (_, ies) = built(&params(Band::Ghz5, 128, Width::W160));
        assert_eq!(
            ies.vht_operation,
            Some(VhtOperation {
                channel_width: 1,
                seg0: 122,
                seg1: 114
            })
        );
    }

    #[test]
    fn every_channel_round_trips() {
        let widths = [Width::W20, Width::W40, Width::W80, Width::W160];
        let mut n = 0;
        for (band, channels) in [(Band::Ghz2, 1..=14), (Band::Ghz5, 32..=177)] {
            for channel in channels {
                for width in widths {
                    let Ok(chandef) = Chandef::new(band, channel, width) else {
                        continue;
                    };
                    let p = BeaconParams {
                        chandef,
                        ..params(Band::Ghz2, 1, Width::W20)
                    };
                    let (_, ies) = built(&p);
                    assert_eq!(
                        ies.chandef(band),
                        Some(chandef),
                        "{band} {channel} {width:?}"
                    );
                    n += 1;
                }
            }
        }
        assert!(n > 100, "{n}");
    }

    #[test]
    fn garbage_never_panics() {
        let mut x: u32 = 1;
        let mut next = || {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (x >> 16) as u8
        };
        for _ in 0..2000 {
            let len = usize::from(next());
            let bytes: Vec<u8> = (0..len).map(|_| next()).collect();
            let ies = parse(&bytes);
            let _ = (ies.chandef(Band::Ghz2), ies.chandef(Band::Ghz5));
        }
    }

    #[test]
    fn rates_and_capabilities_follow_the_band() {
        let (head, ies) = built(&params(Band::Ghz2, 6, Width::W20));
        assert_eq!(
            ies.supported_rates_500kbps,
            [2, 4, 11, 22, 12, 18, 24, 36, 48, 72, 96, 108]
        );
        assert_eq!(u16::from_le_bytes([head[34], head[35]]), 0x0431);
        let mut open = params(Band::Ghz5, 36, Width::W20);
        open.wpa2 = false;
        let (head, ies) = built(&open);
        assert_eq!(
            ies.supported_rates_500kbps,
            [12, 18, 24, 36, 48, 72, 96, 108]
        );
        assert_eq!(u16::from_le_bytes([head[34], head[35]]), 0x0001);
        assert_eq!(ies.rsn, None);
        // HT Capabilities at 20 MHz: no 40 MHz support or 40 MHz short GI advertised.
        let (_, tail) = beacon(&open).unwrap();
        let (_, ht_cap) = elements(&tail)
            .find(|&(id, _)| id == EID_HT_CAPABILITIES)
            .unwrap();
        assert_eq!(u16::from_le_bytes([ht_cap[0], ht_cap[1]]), HT_CAPA & !0x42);
    }

    #[test]
    fn a_radio_without_ht_beacons_802_11g() {
        let mut p = params(Band::Ghz2, 6, Width::W20);
        p.ht_capa = None;
        p.vht_capa = None;
        let (_, ies) = built(&p);
        assert_eq!(ies.ht_operation, None);
        assert_eq!(ies.width(Band::Ghz2), Width::NoHt20);
        assert_eq!(ies.center1_mhz(Band::Ghz2), Some(2437));
    }

    #[test]
    fn impossible_beacons_are_refused() {
        let mut p = params(Band::Ghz2, 1, Width::W40);
        p.ht_capa = None;
        assert_eq!(
            beacon(&p),
            Err(BeaconError::Unsupported {
                width: 40,
                needs: "HT (802.11n)"
            })
        );
        let mut p = params(Band::Ghz5, 36, Width::W80);
        p.vht_capa = None;
        assert!(matches!(
            beacon(&p),
            Err(BeaconError::Unsupported { width: 80, .. })
        ));
        let long = [b'x'; 33];
        let mut p = params(Band::Ghz2, 1, Width::W20);
        p.ssid = &long;
        assert_eq!(beacon(&p), Err(BeaconError::SsidTooLong(33)));
        let mut p = params(Band::Ghz2, 1, Width::W20);
        p.country = *b"de";
        assert!(matches!(beacon(&p), Err(BeaconError::Country(_))));
        let mut p = params(Band::Ghz5, 36, Width::W40);
        p.chandef.center1_mhz = 5200;
        assert!(matches!(beacon(&p), Err(BeaconError::BadCentre { .. })));
        p.chandef.control_mhz = 5000;
        assert_eq!(beacon(&p), Err(BeaconError::NoChannel(5000)));
    }

    #[test]
    fn ht40_sign_within_wide_blocks() {
        let sign = |ch, w| ht40_above(&Chandef::new(Band::Ghz5, ch, w).unwrap());
        assert_eq!(
            [36, 40, 44, 48].map(|c| sign(c, Width::W80)),
            [Some(true), Some(false), Some(true), Some(false)]
        );
        assert_eq!(sign(149, Width::W80), Some(true));
        assert_eq!(sign(161, Width::W80), Some(false));
        assert_eq!(sign(36, Width::W160), Some(true));
        assert_eq!(sign(64, Width::W160), Some(false));
        assert_eq!(sign(36, Width::W20), None);
        let c = Chandef::new(Band::Ghz2, 11, Width::W40).unwrap();
        assert_eq!(ht40_above(&c), Some(false));
    }

    /// A probe response of a real 5 GHz AP ("SevenNodes-50G-36", channel 36, 80 MHz, UK),
    /// from the capture in kisom/pypcapfile `pcapfile/test/protocols_linklayer_wifi.py`
    /// (`PROBE_RESPONSE`): its elements, after the 26-octet radiotap header, 24-octet
    /// header and 12 octets of fixed fields.
    const SEVENNODES_5GHZ_IES: &str = "
        0011536576656e4e6f6465732d3530472d3336 01088c129824b048606c
        07344742202401172801172c01173001173401173801173c011740011764011e68011e6c011e70011e
        74011e84011e88011e8c011e00 200100 23021400
        30140100000fac040100000fac040100000fac028000 0b0500004a0000
        2d1aef0917ffffff0000000000000000000000000000000000000000
        3d16240d0000000000000000000000000000000000000000 7f080000080000000040
        bf0cb259820feaff0000eaff0000 c005012a000000 c30402020202
        dd0b001ca8500101f5ba76e02a
        ddb00050f204104a0001101044000102103b00010310470010ac79c11cfad8dd17641ce15acd136f0a
        10210003536b7910230005455231313010240007312e302e302e301042000e41543133353132303330
        303030311054000800060050f204000110110009536b7920512048756210080002200c103c00010210
        49000e00372a0001200106ffffffffffff10580022007fc510001894c9f0c1646f4e2465260def16ec
        2b38303030303537616530000101
        dd090010180200001c0000 dd180050f2020101840003a4000027a4000042435e0062322f00
        46057200010000";

    /// A beacon of a real AirTies Air 4820 ("AirTies_Air4820_01A9", channel 108, 80 MHz,
    /// France, open), same capture (`BEACON_PACKET`).
    const AIRTIES_5GHZ_IES: &str = "
        0014416972546965735f416972343832305f30314139 01088c1298243048606c 03016c
        051302030000000000000000000000000000000000
        07344652202401172801172c01173001173401173801173c011740011764011e68011e6c011e70011e
        74011e84011e88011e8c011e00 200100 c305021e1e1e00 2a0100
        2d1a6f0817fffffffffeffffffff1f000001000000000018e6e71900
        3d166c050000000000000000000000000000000000000000
        dd180050f2020101860003a4000027a4000042435e0062322f00
        bf0c3240c33faaff0000aaff0000 c005016a00fcff
        dd1e002686010300dd000000250400380006019a576938d30000000000000000
        dd37001ca837014169723438323000000000007168733834300000000054575f302e320000000031
        2e32362e322e3000000000000200000003
        dd0b001ca85001012a01aae26a
        dd5f0050f204104a0001101044000102104700108b3fddc4c80f0c0952b876f9549af4ca103c000102
        1049000e00372a0001200106ffffffffffff10490022007fc51000183737323838353834333933373535
        35333338383739323866300001 01";

    #[test]
    fn a_real_probe_response_parses() {
        let ies = parse(&unhex(SEVENNODES_5GHZ_IES));
        assert_eq!(ies.ssid.as_deref(), Some(&b"SevenNodes-50G-36"[..]));
        assert_eq!(ies.country.as_deref(), Some("GB"));
        assert_eq!(ies.ds_channel, None);
        assert_eq!(
            ies.ht_operation,
            Some(HtOperation {
                primary: 36,
                secondary_offset: 1,
                sta_channel_width_any: true
            })
        );
        assert_eq!(
            ies.vht_operation,
            Some(VhtOperation {
                channel_width: 1,
                seg0: 42,
                seg1: 0
            })
        );
        assert!(ies.has_ht_capabilities && ies.has_vht_capabilities);
        assert_eq!(
            ies.rsn,
            Some(Rsn {
                pairwise: vec![CIPHER_CCMP],
                akm: vec![AKM_PSK],
                group: CIPHER_CCMP
            })
        );
        assert_eq!(
            ies.supported_rates_500kbps,
            [12, 18, 24, 36, 48, 72, 96, 108]
        );
        assert_eq!(ies.width(Band::Ghz5), Width::W80);
        assert_eq!(ies.center1_mhz(Band::Ghz5), Some(5210));
    }

    #[test]
    fn a_real_beacon_parses() {
        let ies = parse(&unhex(AIRTIES_5GHZ_IES));
        assert_eq!(ies.ssid.as_deref(), Some(&b"AirTies_Air4820_01A9"[..]));
        assert_eq!(ies.country.as_deref(), Some("FR"));
        assert_eq!(ies.ds_channel, Some(108));
        assert_eq!(ies.rsn, None);
        assert_eq!(ies.width(Band::Ghz5), Width::W80);
        // Channel 108 (5540 MHz, the capture's radiotap frequency) in the block on 106.
        assert_eq!(
            ies.chandef(Band::Ghz5),
            Some(Chandef {
                control_mhz: 5540,
                width: Width::W80,
                center1_mhz: 5530
            })
        );
    }

    #[test]
    fn truncated_and_malformed_input_gives_what_was_read() {
        let full = unhex(SEVENNODES_5GHZ_IES);
        for len in 0..full.len() {
            let ies = parse(&full[..len]);
            // The SSID element is 19 octets; it is there exactly when it is whole.
            assert_eq!(ies.ssid.is_some(), len >= 19, "cut at {len}");
        }
        // An element running past the end is dropped, with everything after it.
        assert_eq!(parse(&unhex("0005 6162")), Ies::default());
        assert_eq!(parse(&unhex("0301 06 3d")).ds_channel, Some(6));
        // Too-short bodies of elements that need a few octets are skipped.
        let ies = parse(&unhex("3d01 24 c00201 2a 0300 0701 44 3000"));
        assert_eq!(
            (ies.ht_operation, ies.vht_operation, ies.ds_channel),
            (None, None, None)
        );
        assert_eq!((ies.country, ies.rsn), (None, None));
        // RSN: only the version means the defaults; a cut list keeps its whole suites.
        let rsn = parse(&unhex("3002 0100")).rsn.unwrap();
        assert_eq!(
            (rsn.group, rsn.pairwise, rsn.akm),
            (CIPHER_CCMP, vec![CIPHER_CCMP], vec![AKM_8021X])
        );
        let rsn = parse(&unhex("300e 0100 000fac02 0200 000fac04 000f"))
            .rsn
            .unwrap();
        assert_eq!(
            (rsn.group, rsn.pairwise, rsn.akm),
            (CIPHER_TKIP, vec![CIPHER_CCMP], vec![AKM_8021X])
        );
        assert_eq!(parse(&unhex("3004 0200 000f")).rsn, None);
        // Membership selectors (HT PHY 0xff, SAE H2E 0xfb) are not rates.
        let ies = parse(&unhex("0104 82 84 ff fb 3201 6c"));
        assert_eq!(ies.supported_rates_500kbps, [2, 4, 108]);
    }
}
