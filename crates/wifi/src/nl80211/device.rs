//! The replies about the radio and its interfaces: wiphys (split dumps merged), an
//! interface, the power save state, the regulatory domain and its rules' flags.

use super::numbers::*;
use crate::channel::{Band, Chandef};
use crate::netlink::{Attrs, NetlinkError};

/// A radio, from a wiphy dump.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wiphy {
    pub index: u32,
    /// `phy0`, ...
    pub name: String,
    /// The 2.4 and 5 GHz bands (60 GHz, 6 GHz and S1G are left out).
    pub bands: Vec<BandInfo>,
    pub iftypes: Vec<IfType>,
    /// The [`ATTR_EXT_FEATURES`] bitmap; ask with [`Wiphy::has_ext_feature`].
    pub ext_features: Vec<u8>,
    /// [`ATTR_FEATURE_FLAGS`] (`FEATURE_*` bits); 0 when not sent.
    pub features: u32,
    /// Suite selectors ([`WLAN_CIPHER_SUITE_CCMP`], ...).
    pub cipher_suites: Vec<u32>,
}

impl Wiphy {
    /// Whether extended feature number `bit` (`EXT_FEATURE_*`) is set.
    pub fn has_ext_feature(&self, bit: u32) -> bool {
        let byte = self.ext_features.get((bit / 8) as usize).copied();
        byte.is_some_and(|b| b & (1 << (bit % 8)) != 0)
    }

    /// A channel of any band by frequency (MHz).
    pub fn freq(&self, mhz: u32) -> Option<&FreqInfo> {
        self.bands
            .iter()
            .flat_map(|b| &b.freqs)
            .find(|f| f.mhz == mhz)
    }
}

/// One band of a wiphy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BandInfo {
    pub band: Band,
    /// The HT Capabilities element's HT Capability Information field, when the band has HT
    /// (802.11n).
    pub ht_capa: Option<u16>,
    /// The VHT Capabilities element's VHT Capabilities Information field, when the band has
    /// VHT (802.11ac).
    pub vht_capa: Option<u32>,
    pub freqs: Vec<FreqInfo>,
}

/// One channel of a band, as the regulatory domain currently allows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreqInfo {
    pub mhz: u32,
    pub disabled: bool,
    /// No initiating radiation: no AP, IBSS or active scan here.
    pub no_ir: bool,
    /// DFS channel: radar detection required.
    pub radar: bool,
    pub no_ht40_minus: bool,
    pub no_ht40_plus: bool,
    pub no_80mhz: bool,
    pub no_160mhz: bool,
    /// mBm; absent on disabled channels.
    pub max_power_mbm: Option<u32>,
}

/// Merges the replies of [`get_wiphy_dump`](super::get_wiphy_dump) (the attributes of each [`CMD_NEW_WIPHY`]
/// message, in order) into wiphys: the messages of one wiphy share its [`ATTR_WIPHY`];
/// later values replace earlier ones, bands and channels accumulate (a channel seen twice
/// is replaced). Also reads an unsplit dump or a single `GET_WIPHY` reply.
pub fn parse_wiphys(msgs: &[&[u8]]) -> Result<Vec<Wiphy>, NetlinkError> {
    let mut out: Vec<Wiphy> = Vec::new();
    for attrs in msgs {
        let a = Attrs::new(attrs)?;
        let index = a
            .get_u32(ATTR_WIPHY)?
            .ok_or(NetlinkError::Missing("NL80211_ATTR_WIPHY"))?;
        let i = match out.iter().position(|w| w.index == index) {
            Some(i) => i,
            None => {
                out.push(Wiphy {
                    index,
                    ..Wiphy::default()
                });
                out.len() - 1
            }
        };
        merge_wiphy(&mut out[i], &a)?;
    }
    Ok(out)
}

fn merge_wiphy(w: &mut Wiphy, a: &Attrs) -> Result<(), NetlinkError> {
    if let Some(name) = a.get_str(ATTR_WIPHY_NAME)? {
        name.clone_into(&mut w.name);
    }
    if let Some(types) = a.nested(ATTR_SUPPORTED_IFTYPES)? {
        w.iftypes = types.map(|(t, _)| IfType::from_u32(t.into())).collect();
    }
    if let Some(bits) = a.get(ATTR_EXT_FEATURES) {
        w.ext_features = bits.to_vec();
    }
    if let Some(f) = a.get_u32(ATTR_FEATURE_FLAGS)? {
        w.features = f;
    }
    if let Some(suites) = a.get(ATTR_CIPHER_SUITES) {
        w.cipher_suites = u32_array(suites, ATTR_CIPHER_SUITES)?;
    }
    for (number, band_attrs) in a.nested(ATTR_WIPHY_BANDS)?.unwrap_or_default() {
        let band = match number {
            BAND_2GHZ => Band::Ghz2,
            BAND_5GHZ => Band::Ghz5,
            _ => continue,
        };
        let b = Attrs::new(band_attrs)?;
        let i = match w.bands.iter().position(|i| i.band == band) {
            Some(i) => i,
            None => {
                w.bands.push(BandInfo {
                    band,
                    ht_capa: None,
                    vht_capa: None,
                    freqs: Vec::new(),
                });
                w.bands.len() - 1
            }
        };
        let info = &mut w.bands[i];
        if let Some(h) = b.get_u16(BAND_ATTR_HT_CAPA)? {
            info.ht_capa = Some(h);
        }
        if let Some(v) = b.get_u32(BAND_ATTR_VHT_CAPA)? {
            info.vht_capa = Some(v);
        }
        for (_, f) in b.nested(BAND_ATTR_FREQS)?.unwrap_or_default() {
            let f = Attrs::new(f)?;
            let Some(mhz) = f.get_u32(FREQUENCY_ATTR_FREQ)? else {
                continue;
            };
            let fi = FreqInfo {
                mhz,
                disabled: f.has(FREQUENCY_ATTR_DISABLED),
                no_ir: f.has(FREQUENCY_ATTR_NO_IR),
                radar: f.has(FREQUENCY_ATTR_RADAR),
                no_ht40_minus: f.has(FREQUENCY_ATTR_NO_HT40_MINUS),
                no_ht40_plus: f.has(FREQUENCY_ATTR_NO_HT40_PLUS),
                no_80mhz: f.has(FREQUENCY_ATTR_NO_80MHZ),
                no_160mhz: f.has(FREQUENCY_ATTR_NO_160MHZ),
                max_power_mbm: f.get_u32(FREQUENCY_ATTR_MAX_TX_POWER)?,
            };
            match info.freqs.iter_mut().find(|x| x.mhz == mhz) {
                Some(x) => *x = fi,
                None => info.freqs.push(fi),
            }
        }
    }
    Ok(())
}

/// An array of u32 (suite selectors).
fn u32_array(v: &[u8], ty: u16) -> Result<Vec<u32>, NetlinkError> {
    if !v.len().is_multiple_of(4) {
        return Err(NetlinkError::AttrSize {
            ty,
            want: v.len() / 4 * 4 + 4,
            got: v.len(),
        });
    }
    Ok(v.chunks_exact(4)
        .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// A wireless interface (`nl80211_send_iface`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    pub ifindex: u32,
    pub name: String,
    pub wiphy: u32,
    pub iftype: IfType,
    pub mac: Option<[u8; 6]>,
    /// The SSID of the AP run, the network joined or the IBSS, once there is one.
    pub ssid: Option<Vec<u8>>,
    /// The operating channel, when there is one and its width is one of [`Width`](crate::channel::Width).
    pub chandef: Option<Chandef>,
    /// mBm.
    pub txpower_mbm: Option<u32>,
}

/// Parses a [`CMD_NEW_INTERFACE`] reply. A wireless device without a network interface
/// (P2P-device, NAN) has no ifindex: `Err(Missing)`, skip it.
pub fn parse_interface(attrs: &[u8]) -> Result<Interface, NetlinkError> {
    let a = Attrs::new(attrs)?;
    let ifindex = a
        .get_u32(ATTR_IFINDEX)?
        .ok_or(NetlinkError::Missing("NL80211_ATTR_IFINDEX"))?;
    let name = a
        .get_str(ATTR_IFNAME)?
        .ok_or(NetlinkError::Missing("NL80211_ATTR_IFNAME"))?;
    let wiphy = a
        .get_u32(ATTR_WIPHY)?
        .ok_or(NetlinkError::Missing("NL80211_ATTR_WIPHY"))?;
    let iftype = a
        .get_u32(ATTR_IFTYPE)?
        .ok_or(NetlinkError::Missing("NL80211_ATTR_IFTYPE"))?;
    let freq = a.get_u32(ATTR_WIPHY_FREQ)?;
    let width = a.get_u32(ATTR_CHANNEL_WIDTH)?.and_then(width_of);
    let center = a.get_u32(ATTR_CENTER_FREQ1)?;
    let chandef = match (freq, width) {
        (Some(control_mhz), Some(width)) => Some(Chandef {
            control_mhz,
            width,
            center1_mhz: center.unwrap_or(control_mhz),
        }),
        _ => None,
    };
    Ok(Interface {
        ifindex,
        name: name.to_owned(),
        wiphy,
        iftype: IfType::from_u32(iftype),
        mac: a.get_array(ATTR_MAC)?,
        ssid: a.get(ATTR_SSID).map(<[u8]>::to_vec),
        chandef,
        txpower_mbm: a.get_u32(ATTR_WIPHY_TX_POWER_LEVEL)?,
    })
}

/// Parses a [`CMD_GET_POWER_SAVE`] reply: whether power save is on.
pub fn parse_power_save(attrs: &[u8]) -> Result<Option<bool>, NetlinkError> {
    Ok(Attrs::new(attrs)?
        .get_u32(ATTR_PS_STATE)?
        .map(|s| s == PS_ENABLED))
}

/// A regulatory domain (`nl80211_put_regdom`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reg {
    /// `"DE"`, `"00"` (world), `"99"` (built from a driver's own rules).
    pub alpha2: String,
    /// `DFS_*`.
    pub dfs_region: Option<u8>,
    /// Set when this is a wiphy's own domain rather than the global one.
    pub wiphy: Option<u32>,
    pub rules: Vec<RegRule>,
}

/// One rule of a regulatory domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegRule {
    /// `RRF_*` bits; names by [`reg_rule_flag_names`].
    pub flags: u32,
    pub start_khz: u32,
    pub end_khz: u32,
    pub max_bw_khz: u32,
    pub max_eirp_mbm: u32,
}

/// Parses a [`CMD_GET_REG`] reply.
pub fn parse_reg(attrs: &[u8]) -> Result<Reg, NetlinkError> {
    let a = Attrs::new(attrs)?;
    let alpha2 = a
        .get_str(ATTR_REG_ALPHA2)?
        .ok_or(NetlinkError::Missing("NL80211_ATTR_REG_ALPHA2"))?;
    let mut rules = Vec::new();
    for (_, rule) in a.nested(ATTR_REG_RULES)?.unwrap_or_default() {
        let r = Attrs::new(rule)?;
        rules.push(RegRule {
            flags: r.get_u32(ATTR_REG_RULE_FLAGS)?.unwrap_or(0),
            start_khz: r
                .get_u32(ATTR_FREQ_RANGE_START)?
                .ok_or(NetlinkError::Missing("NL80211_ATTR_FREQ_RANGE_START"))?,
            end_khz: r
                .get_u32(ATTR_FREQ_RANGE_END)?
                .ok_or(NetlinkError::Missing("NL80211_ATTR_FREQ_RANGE_END"))?,
            max_bw_khz: r.get_u32(ATTR_FREQ_RANGE_MAX_BW)?.unwrap_or(0),
            max_eirp_mbm: r.get_u32(ATTR_POWER_RULE_MAX_EIRP)?.unwrap_or(0),
        });
    }
    Ok(Reg {
        alpha2: alpha2.to_owned(),
        dfs_region: a.get_u8(ATTR_DFS_REGION)?,
        wiphy: a.get_u32(ATTR_WIPHY)?,
        rules,
    })
}

/// The names of a rule's flags as wireless-regdb and iw write them (`NO-IR`, `DFS`, ...);
/// unknown bits are left out.
pub fn reg_rule_flag_names(flags: u32) -> Vec<&'static str> {
    const NAMES: [(u32, &str); 16] = [
        (RRF_NO_OFDM, "NO-OFDM"),
        (RRF_NO_CCK, "NO-CCK"),
        (RRF_NO_INDOOR, "NO-INDOOR"),
        (RRF_NO_OUTDOOR, "NO-OUTDOOR"),
        (RRF_DFS, "DFS"),
        (RRF_PTP_ONLY, "PTP-ONLY"),
        (RRF_PTMP_ONLY, "PTMP-ONLY"),
        (RRF_NO_IR, "NO-IR"),
        (RRF_AUTO_BW, "AUTO-BW"),
        (RRF_IR_CONCURRENT, "IR-CONCURRENT"),
        (RRF_NO_HT40MINUS, "NO-HT40MINUS"),
        (RRF_NO_HT40PLUS, "NO-HT40PLUS"),
        (RRF_NO_80MHZ, "NO-80MHZ"),
        (RRF_NO_160MHZ, "NO-160MHZ"),
        (RRF_NO_HE, "NO-HE"),
        (RRF_NO_320MHZ, "NO-320MHZ"),
    ];
    NAMES
        .iter()
        .filter(|&&(bit, _)| flags & bit != 0)
        .map(|&(_, name)| name)
        .collect()
}
