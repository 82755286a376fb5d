//! Test helpers shared by the unit tests of `regulatory`, `rate` and `station`: netlink
//! attributes laid out the way the kernel writes them (`nla_put`, nests without
//! `NLA_F_NESTED` as nl80211's replies have them), written independently of
//! [`crate::netlink::MsgBuilder`], and a wiphy message with its channels.

use crate::nl80211::{
    ATTR_GENERATION, ATTR_WIPHY, ATTR_WIPHY_BANDS, ATTR_WIPHY_NAME, BAND_2GHZ, BAND_5GHZ,
    BAND_ATTR_FREQS, FREQUENCY_ATTR_FREQ, FREQUENCY_ATTR_MAX_TX_POWER,
};

/// One attribute: u16 length (header included), u16 type, the value, padded to 4 bytes.
pub(crate) fn nla(ty: u16, value: &[u8]) -> Vec<u8> {
    let mut v = ((4 + value.len()) as u16).to_le_bytes().to_vec();
    v.extend_from_slice(&ty.to_le_bytes());
    v.extend_from_slice(value);
    while !v.len().is_multiple_of(4) {
        v.push(0);
    }
    v
}

/// A u32 attribute, little-endian (the board and x86_64 alike).
pub(crate) fn u32a(ty: u16, v: u32) -> Vec<u8> {
    nla(ty, &v.to_le_bytes())
}

/// A nest as `nla_nest_start_noflag` writes it.
pub(crate) fn nest(ty: u16, parts: &[Vec<u8>]) -> Vec<u8> {
    nla(ty, &parts.concat())
}

/// One unsplit `NL80211_CMD_NEW_WIPHY` reply's attributes (the layout of
/// `nl80211_send_wiphy`: WIPHY, WIPHY_NAME, GENERATION, then WIPHY_BANDS nested by band,
/// each band's FREQS nested by index, each channel as `nl80211_msg_put_channel` writes
/// it: FREQ, flag attributes, MAX_TX_POWER). `channels` are (MHz, flag attribute types).
pub(crate) fn wiphy_msg(channels: &[(u32, &[u16])]) -> Vec<u8> {
    let chan = |i: usize, &(mhz, flags): &(u32, &[u16])| {
        let mut parts = vec![u32a(FREQUENCY_ATTR_FREQ, mhz)];
        parts.extend(flags.iter().map(|&f| nla(f, &[])));
        parts.push(u32a(FREQUENCY_ATTR_MAX_TX_POWER, 2000));
        nest(i as u16, &parts)
    };
    let band = |b: u16, lo: u32, hi: u32| {
        let freqs: Vec<Vec<u8>> = channels
            .iter()
            .filter(|(mhz, _)| (lo..=hi).contains(mhz))
            .enumerate()
            .map(|(i, c)| chan(i, c))
            .collect();
        nest(b, &[nest(BAND_ATTR_FREQS, &freqs)])
    };
    [
        u32a(ATTR_WIPHY, 0),
        nla(ATTR_WIPHY_NAME, b"phy0\0"),
        u32a(ATTR_GENERATION, 1),
        nest(
            ATTR_WIPHY_BANDS,
            &[band(BAND_2GHZ, 2400, 2500), band(BAND_5GHZ, 5000, 5925)],
        ),
    ]
    .concat()
}
