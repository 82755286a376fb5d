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
//!
//! Files, each re-exported here (every item's path is `ie::<name>`): this one the element
//! IDs and [`elements`]; `scan.rs` the reader ([`Ies`], [`parse`]); `rsn.rs` the RSN
//! element's suites ([`Rsn`]); `beacon.rs` the writer ([`beacon`]).

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

mod beacon;
mod rsn;
mod scan;

pub use beacon::*;
pub use rsn::*;
pub use scan::*;

#[cfg(test)]
mod tests;
