//! Reading a scan result's elements into [`Ies`]: SSID, rates, DS Parameter Set, Country,
//! HT and VHT Capabilities and Operation (§9.4.2.3-158), RSN ([`super::rsn`]), and the
//! BSS's channel (primary, width, centre) they describe.

use super::rsn::{parse_rsn, Rsn};
use super::*;
use crate::channel::{channel_to_mhz, Band, Chandef, Width};

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
