//! The QEMU stand-in AP: the `hostapd.conf` that a system test runs hostapd with, in a
//! network namespace on a mac80211_hwsim radio, for one plan entry (never on a board).
//!
//! Keys as hostapd's own `hostapd/hostapd.conf` documents them (w1.fi): `interface`,
//! `driver=nl80211`, `ssid`, `country_code` + `ieee80211d=1` (advertise the country,
//! needed for 5 GHz), `hw_mode` (`g` = 2.4 GHz, `a` = 5 GHz, also for 802.11n/ac),
//! `channel`, `ieee80211n`, `wmm_enabled` ("needed for full HT functionality"), `ht_capab`
//! (`[HT40+]` / `[HT40-]`: secondary channel above / below the primary), `ieee80211ac`,
//! `vht_oper_chwidth` (0 = 20/40, 1 = 80, 2 = 160 MHz), `vht_oper_centr_freq_seg0_idx`
//! (the centre channel: 42 for 36-48 at 80 MHz, 50 for 36-64 at 160), `vht_capab`,
//! `ieee80211h` (DFS), `wpa=2` + `wpa_key_mgmt=WPA-PSK` + `rsn_pairwise=CCMP` +
//! `wpa_passphrase` (8..63 characters) or `wpa_psk` (64 hex digits). No `ctrl_interface`:
//! nothing talks to it.
//!
//! hostapd reads the file a line at a time and takes everything after `key=` as the
//! value, so a newline in any value would add lines of the caller's choosing: every field
//! is checked, and a control character anywhere is refused.

use crate::channel::{Band, Chandef, Width};
use crate::ie::{centre_fits, ht40_above};
use crate::psk::{classify, PskError, Secret};
use std::fmt::Write;

/// One stand-in AP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StandInAp<'a> {
    /// The hwsim radio's AP interface in the namespace (`wlan1`).
    pub interface: &'a str,
    /// 1..=32 bytes.
    pub ssid: &'a str,
    pub chandef: Chandef,
    /// ISO 3166-1 alpha-2 (`DE`): the regulatory domain hostapd sets and advertises.
    pub country: &'a str,
    /// WPA2-PSK with this passphrase (or 64-hex-digit PSK); open when `None`.
    pub passphrase: Option<&'a str>,
}

/// Why no hostapd.conf can be written for a stand-in AP.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostapdError {
    #[error("the {field} contains a control character; in hostapd.conf a newline would start a line of its own")]
    ControlCharacter { field: &'static str },
    #[error("the SSID has {0} bytes; hostapd takes 1 to 32 (IEEE 802.11-2020 §9.4.2.2)")]
    SsidLength(usize),
    #[error("{0:?} is not a Linux interface name (1 to 15 bytes, no '/', ':' or whitespace)")]
    Interface(String),
    #[error("country {0:?} is not two ASCII capital letters (ISO 3166-1 alpha-2)")]
    Country(String),
    #[error(
        "no hostapd channel for a {width} MHz channel with its primary at {control_mhz} MHz \
         and centre at {center1_mhz} MHz"
    )]
    Channel {
        width: u32,
        control_mhz: u32,
        center1_mhz: u32,
    },
    #[error(transparent)]
    Passphrase(#[from] PskError),
}

/// The hostapd.conf text for `p`, one `key=value` per line.
///
/// 802.11n is always on (a plan's 20 MHz is HT20). At 40, 80 and 160 MHz `ht_capab` names
/// the side of the secondary 20 MHz channel (within the fixed 80/160 MHz block at 5 GHz)
/// (no `noscan=1`: Debian's hostapd 2.10 refuses it as an unknown item, seen in QEMU;
/// the 20/40 MHz coexistence scan, `ieee80211n_check_40mhz()`, finds no other BSS on
/// hwsim's channels and the obtained width is checked by the test). 80 and 160 MHz turn on
/// 802.11ac; 160 MHz also advertises `[VHT160]` (as hostapd's own `test_ap_vht160`).
/// Channels touching 5250-5730 MHz (52-144) are DFS channels: `ieee80211h=1`, and hostapd
/// then waits out the channel availability check (at least 60 s) before it beacons.
pub fn config(p: &StandInAp) -> Result<String, HostapdError> {
    for (field, value) in [
        ("interface name", p.interface),
        ("SSID", p.ssid),
        ("country", p.country),
        ("passphrase", p.passphrase.unwrap_or("")),
    ] {
        if value.chars().any(char::is_control) {
            return Err(HostapdError::ControlCharacter { field });
        }
    }
    if !(1..=32).contains(&p.ssid.len()) {
        return Err(HostapdError::SsidLength(p.ssid.len()));
    }
    let name = p.interface;
    if name.is_empty()
        || name.len() > 15
        || name == "."
        || name == ".."
        || name.contains(|c: char| c == '/' || c == ':' || c.is_whitespace())
    {
        return Err(HostapdError::Interface(name.to_string()));
    }
    if p.country.len() != 2 || !p.country.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(HostapdError::Country(p.country.to_string()));
    }
    let secret = p.passphrase.map(classify).transpose()?;

    let c = &p.chandef;
    let bad_channel = HostapdError::Channel {
        width: c.width.mhz(),
        control_mhz: c.control_mhz,
        center1_mhz: c.center1_mhz,
    };
    let (Some(band), Some(channel), Some(centre)) = (c.band(), c.channel(), c.center_channel())
    else {
        return Err(bad_channel);
    };
    if !centre_fits(c, band) {
        return Err(bad_channel);
    }

    let mut out = String::new();
    let mut line = |key: &str, value: &dyn std::fmt::Display| {
        // Writing to a String cannot fail.
        let _ = writeln!(out, "{key}={value}");
    };
    line("interface", &name);
    line("driver", &"nl80211");
    line("ssid", &p.ssid);
    line("country_code", &p.country);
    line("ieee80211d", &1);
    line("hw_mode", &if band == Band::Ghz2 { "g" } else { "a" });
    line("channel", &channel);
    line("ieee80211n", &1);
    line("wmm_enabled", &1);
    if let Some(above) = ht40_above(c) {
        line("ht_capab", &if above { "[HT40+]" } else { "[HT40-]" });
    }
    if let Width::W80 | Width::W160 = c.width {
        line("ieee80211ac", &1);
        line(
            "vht_oper_chwidth",
            &if c.width == Width::W80 { 1 } else { 2 },
        );
        line("vht_oper_centr_freq_seg0_idx", &centre);
        if c.width == Width::W160 {
            line("vht_capab", &"[VHT160]");
        }
    }
    let half = c.width.mhz() / 2;
    if band == Band::Ghz5 && c.center1_mhz - half < 5730 && c.center1_mhz + half > 5250 {
        line("ieee80211h", &1);
    }
    if let Some(secret) = secret {
        line("wpa", &2);
        line("wpa_key_mgmt", &"WPA-PSK");
        line("rsn_pairwise", &"CCMP");
        match secret {
            Secret::Passphrase(passphrase) => line("wpa_passphrase", &passphrase),
            Secret::Hex(_) => line("wpa_psk", &p.passphrase.unwrap_or_default()),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ap(band: Band, channel: u8, width: Width) -> StandInAp<'static> {
        StandInAp {
            interface: "wlan1",
            ssid: "benchboot",
            chandef: Chandef::new(band, channel, width).unwrap(),
            country: "DE",
            passphrase: None,
        }
    }

    const HEAD: &str = "interface=wlan1\ndriver=nl80211\nssid=benchboot\ncountry_code=DE\n\
                        ieee80211d=1\n";

    #[test]
    fn ch1_20mhz() {
        assert_eq!(
            config(&ap(Band::Ghz2, 1, Width::W20)).unwrap(),
            format!("{HEAD}hw_mode=g\nchannel=1\nieee80211n=1\nwmm_enabled=1\n")
        );
    }

    #[test]
    fn ch11_40mhz_is_ht40_minus() {
        assert_eq!(
            config(&ap(Band::Ghz2, 11, Width::W40)).unwrap(),
            format!(
                "{HEAD}hw_mode=g\nchannel=11\nieee80211n=1\nwmm_enabled=1\n\
                 ht_capab=[HT40-]\n"
            )
        );
    }

    #[test]
    fn ch36_40mhz() {
        assert_eq!(
            config(&ap(Band::Ghz5, 36, Width::W40)).unwrap(),
            format!(
                "{HEAD}hw_mode=a\nchannel=36\nieee80211n=1\nwmm_enabled=1\n\
                 ht_capab=[HT40+]\n"
            )
        );
    }

    #[test]
    fn ch36_80mhz() {
        assert_eq!(
            config(&ap(Band::Ghz5, 36, Width::W80)).unwrap(),
            format!(
                "{HEAD}hw_mode=a\nchannel=36\nieee80211n=1\nwmm_enabled=1\n\
                 ht_capab=[HT40+]\nieee80211ac=1\nvht_oper_chwidth=1\n\
                 vht_oper_centr_freq_seg0_idx=42\n"
            )
        );
        // 48 is the upper channel of the 44+48 pair: HT40-, same block.
        let text = config(&ap(Band::Ghz5, 48, Width::W80)).unwrap();
        assert!(text.contains("\nht_capab=[HT40-]\n"), "{text}");
        assert!(
            text.contains("\nvht_oper_centr_freq_seg0_idx=42\n"),
            "{text}"
        );
    }

    #[test]
    fn ch36_160mhz_is_dfs() {
        assert_eq!(
            config(&ap(Band::Ghz5, 36, Width::W160)).unwrap(),
            format!(
                "{HEAD}hw_mode=a\nchannel=36\nieee80211n=1\nwmm_enabled=1\n\
                 ht_capab=[HT40+]\nieee80211ac=1\nvht_oper_chwidth=2\n\
                 vht_oper_centr_freq_seg0_idx=50\nvht_capab=[VHT160]\nieee80211h=1\n"
            )
        );
        let dfs = |ch, w| {
            config(&ap(Band::Ghz5, ch, w))
                .unwrap()
                .contains("ieee80211h=1")
        };
        assert!(!dfs(48, Width::W20) && dfs(52, Width::W20) && dfs(144, Width::W20));
        assert!(!dfs(149, Width::W80) && !dfs(36, Width::W80) && dfs(100, Width::W40));
    }

    #[test]
    fn wpa2() {
        let mut p = ap(Band::Ghz2, 6, Width::W20);
        p.passphrase = Some("correct horse");
        assert_eq!(
            config(&p).unwrap(),
            format!(
                "{HEAD}hw_mode=g\nchannel=6\nieee80211n=1\nwmm_enabled=1\n\
                 wpa=2\nwpa_key_mgmt=WPA-PSK\nrsn_pairwise=CCMP\n\
                 wpa_passphrase=correct horse\n"
            )
        );
        let psk = "f42c6fc52df0ebef9ebb4b90b38a5f902e83fe1b135a70e23aed762e9710a12e";
        p.passphrase = Some(psk);
        assert!(config(&p).unwrap().ends_with(&format!("\nwpa_psk={psk}\n")));
        p.passphrase = Some("short");
        assert_eq!(
            config(&p),
            Err(HostapdError::Passphrase(PskError::Length { len: 5 }))
        );
    }

    #[test]
    fn injection_and_bad_fields_are_refused() {
        let base = ap(Band::Ghz2, 1, Width::W20);
        let refused = |p: StandInAp| config(&p).unwrap_err();
        assert_eq!(
            refused(StandInAp {
                ssid: "x\nwpa=0",
                ..base
            }),
            HostapdError::ControlCharacter { field: "SSID" }
        );
        assert_eq!(
            refused(StandInAp {
                passphrase: Some("password1\nctrl_interface=/tmp"),
                ..base
            }),
            HostapdError::ControlCharacter {
                field: "passphrase"
            }
        );
        assert!(matches!(
            refused(StandInAp {
                interface: "wlan1\r",
                ..base
            }),
            HostapdError::ControlCharacter { .. }
        ));
        assert!(matches!(
            refused(StandInAp {
                country: "D\n",
                ..base
            }),
            HostapdError::ControlCharacter { .. }
        ));
        let long = "s".repeat(33);
        assert_eq!(
            refused(StandInAp {
                ssid: &long,
                ..base
            }),
            HostapdError::SsidLength(33)
        );
        assert!(config(&StandInAp {
            ssid: &long[..32],
            ..base
        })
        .is_ok());
        assert_eq!(
            refused(StandInAp { ssid: "", ..base }),
            HostapdError::SsidLength(0)
        );
        // 32 bytes, not characters: 11 three-byte characters are 33.
        assert_eq!(
            refused(StandInAp {
                ssid: &"€".repeat(11),
                ..base
            }),
            HostapdError::SsidLength(33)
        );
        for name in ["", "a/b", "a b", "wlan:1", "..", "sixteen_chars_xx"] {
            assert!(matches!(
                refused(StandInAp {
                    interface: name,
                    ..base
                }),
                HostapdError::Interface(_)
            ));
        }
        assert!(matches!(
            refused(StandInAp {
                country: "de",
                ..base
            }),
            HostapdError::Country(_)
        ));
        let mut off = base;
        off.chandef.center1_mhz += 10;
        assert!(matches!(refused(off), HostapdError::Channel { .. }));
    }
}
