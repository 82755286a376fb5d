//! Writing an AP's Beacon frame (§9.3.3.2) as the head and tail halves
//! `NL80211_CMD_START_AP` takes, with the SSID, rates, DS Parameter Set, Country, ERP, RSN,
//! HT and VHT Capabilities and Operation elements and the WMM vendor element.

use super::*;
use crate::channel::{Band, Chandef, Width};

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
pub(super) const WMM_PARAMETERS: [u8; 24] = [
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
