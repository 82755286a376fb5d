//! WiFi for benchboot's PID 1 and host tool, with no C tools on the board.
//!
//! Everything here is pure (bytes in, bytes out) and unit-tested on x86_64; the netlink
//! socket itself lives at the syscall edge in `firmware/src/radio.rs`.
//!
//! - [`channel`]: bands, channel numbers and frequencies, widths and the centre
//!   frequency of a 40/80/160 MHz channel (IEEE 802.11-2020 Annex E).
//! - [`netlink`]: netlink + generic netlink framing and attributes (RFC 3549,
//!   `include/uapi/linux/netlink.h`, `genetlink.h`).
//! - [`nl80211`]: the nl80211 commands PID 1 uses, built and parsed
//!   (`include/uapi/linux/nl80211.h` of the pinned 6.1 kernel).
//! - [`ie`]: 802.11 information elements and beacon frames (IEEE 802.11-2020 §9.4.2,
//!   §9.3.3.2).
//! - [`psk`]: the WPA2 pairwise master key from a passphrase (IEEE 802.11-2020 §J.4).
//! - [`hostapd`]: the QEMU-only stand-in AP's `hostapd.conf` for one plan entry.
//! - [`regulatory`]: what the regulatory domain's channel flags forbid an entry, the
//!   flags and rules as results write them.
//! - [`rate`]: a station's PHY rate: generation, MCS, spatial streams, Mbit/s.
//! - [`station`]: the BSS a client joins and its neighbours in a scan.

#![forbid(unsafe_code)]

pub mod channel;
pub mod hostapd;
pub mod ie;
pub mod netlink;
pub mod nl80211;
pub mod psk;
pub mod rate;
pub mod regulatory;
pub mod station;
#[cfg(test)]
mod testkit;
