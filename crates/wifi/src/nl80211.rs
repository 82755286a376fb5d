//! The nl80211 commands benchboot's PID 1 uses: requests built as bytes, replies parsed into
//! typed structs. The socket is not here (`firmware/src/radio.rs`).
//!
//! Sources:
//! - every number: `include/uapi/linux/nl80211.h` of the pinned 6.1 kernel (each constant
//!   below was checked by compiling against linux-libc-dev 6.1.187); the constants are the
//!   header's names without the `NL80211_` prefix (`NL80211_ATTR_IFINDEX` = [`ATTR_IFINDEX`]);
//! - the cipher and AKM suite selectors: `include/linux/ieee80211.h` (IEEE 802.11 RSNE
//!   suite selectors, OUI 00-0F-AC: cipher 4 = CCMP-128, AKM 2 = PSK);
//! - what a command requires and what a reply holds: `net/wireless/nl80211.c` of 6.1
//!   (`nl80211_connect`, `nl80211_start_ap`, `nl80211_crypto_settings`, `nl80211_send_wiphy`,
//!   `nl80211_send_iface`, `nl80211_send_bss`, `nl80211_send_station`,
//!   `nl80211_put_regdom`), named at each item.
//!
//! Conventions:
//! - a builder takes the family id ([`crate::netlink::parse_family`] of `"nl80211"`) and a
//!   sequence number and returns one whole message, genl version 0 (what iw and
//!   wpa_supplicant send; the kernel ignores it);
//! - `*_dump` builders send `NLM_F_REQUEST | NLM_F_DUMP`: answered by data messages and
//!   `NLMSG_DONE`; every other builder sends `NLM_F_REQUEST | NLM_F_ACK`: answered by its
//!   data reply, if any, then an ack or an error (see [`crate::netlink`]);
//! - a parser takes the attributes of one [`crate::netlink::Reply::Data`] and fails only on
//!   malformed bytes or a missing attribute the kernel always sends;
//! - units: frequencies in MHz (regulatory rules: kHz); power in mBm (1/100 dBm); station
//!   signals in dBm; bitrates in 100 kbit/s; times as named (`_ms`, `_s`, `_tu` = 1024 µs).
//!
//! Files, each re-exported here (every item's path is `nl80211::<name>`):
//! `numbers.rs` the header's numbers and their typed forms ([`IfType`], widths);
//! `requests.rs` the builders; `device.rs` the wiphy, interface, power save and
//! regulatory replies; `scan.rs` the scan results ([`Bss`]); `station.rs` the station
//! records ([`Station`], [`RateInfo`]).

mod device;
mod numbers;
mod requests;
mod scan;
mod station;

pub use device::*;
pub use numbers::*;
pub use requests::*;
pub use scan::*;
pub use station::*;

#[cfg(test)]
mod tests;
