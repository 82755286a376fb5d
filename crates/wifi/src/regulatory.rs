//! What the regulatory domain allows a plan entry, as the radio reports it.
//!
//! After PID 1 sets the plan's country (`NL80211_CMD_REQ_SET_REG`), the kernel rewrites
//! each channel's flags from regulatory.db (net/wireless/reg.c: `handle_channel`,
//! `reg_process_ht_flags`) and `NL80211_CMD_GET_WIPHY` reports them
//! ([`FreqInfo`]). From those flags and a [`Chandef`]:
//!
//! - [`forbidden`]: why an entry cannot run (the channel is absent or disabled; an AP, or
//!   the QEMU stand-in's AP, on a DFS or no-IR channel; the width not allowed around the
//!   primary: `no-ht40+` / `no-ht40-` by which side the secondary 20 MHz lies, `no-80mhz`,
//!   `no-160mhz`);
//! - [`channel_flags`]: the primary channel's flags as results list them;
//! - [`rule_line`], [`dfs_region_name`]: the domain's rules as results write them.

use crate::channel::{Chandef, Width};
use crate::nl80211::{reg_rule_flag_names, FreqInfo, RegRule, Wiphy};

/// Why the regulatory domain (or the role) forbids an entry's channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forbidden {
    /// The radio lists no channel at the primary frequency (MHz).
    NoChannel { control_mhz: u32 },
    /// The primary channel is disabled in the domain.
    Disabled { control_mhz: u32 },
    /// A DFS (radar) channel and the board or stand-in would be the AP: an AP must first
    /// listen for radar (CAC, 60 s or more), which is not measured.
    Radar,
    /// A no-IR (passive only) channel and the board or stand-in would be the AP.
    NoIr,
    /// The primary channel's flags forbid this width around it (`no-ht40+` for a
    /// secondary above, `no-ht40-` below, `no-80mhz`, `no-160mhz`).
    TooWide { width_mhz: u32, control_mhz: u32 },
}

impl Forbidden {
    /// The sentence results and the console give, naming the entry as `asked`
    /// (`5 GHz ch 52 20 MHz`) and the domain as `country` (`DE`).
    pub fn reason(&self, asked: &str, country: &str) -> String {
        match *self {
            Self::NoChannel { control_mhz } => {
                format!("the radio has no {control_mhz} MHz channel ({asked})")
            }
            Self::Disabled { control_mhz } => {
                format!("{asked} ({control_mhz} MHz) is not allowed in regulatory domain {country}")
            }
            Self::Radar => format!(
                "{asked} is a DFS channel in {country}: an AP must first listen for radar for 60 s or more (CAC); not measured"
            ),
            Self::NoIr => {
                format!("{asked} is no-IR (passive only) in {country}: no AP may start there")
            }
            Self::TooWide {
                width_mhz,
                control_mhz,
            } => format!(
                "{width_mhz} MHz around {control_mhz} is not allowed in {country} (channel flags)"
            ),
        }
    }
}

/// Why `phy`'s channel flags forbid chandef `c`, `None` when they allow it. `ap_side`:
/// an AP transmits first on this channel (the board's own AP, or the QEMU stand-in's
/// hostapd), so DFS and no-IR channels are refused too; a client may join an AP there.
/// Checked in this order: absent, disabled, radar, no-IR, width.
pub fn forbidden(phy: &Wiphy, c: &Chandef, ap_side: bool) -> Option<Forbidden> {
    let Some(f) = phy.freq(c.control_mhz) else {
        return Some(Forbidden::NoChannel {
            control_mhz: c.control_mhz,
        });
    };
    if f.disabled {
        return Some(Forbidden::Disabled {
            control_mhz: c.control_mhz,
        });
    }
    if ap_side && f.radar {
        return Some(Forbidden::Radar);
    }
    if ap_side && f.no_ir {
        return Some(Forbidden::NoIr);
    }
    too_wide(f, c).then_some(Forbidden::TooWide {
        width_mhz: c.width.mhz(),
        control_mhz: c.control_mhz,
    })
}

/// Whether the primary channel's flags forbid `c`'s width: at 40 MHz the flag of the
/// side the secondary lies on (centre above the primary: HT40+).
fn too_wide(f: &FreqInfo, c: &Chandef) -> bool {
    match c.width {
        Width::W40 => {
            if c.center1_mhz > c.control_mhz {
                f.no_ht40_plus
            } else {
                f.no_ht40_minus
            }
        }
        Width::W80 => f.no_80mhz,
        Width::W160 => f.no_160mhz,
        Width::NoHt20 | Width::W20 => false,
    }
}

/// The flags of `phy`'s channel at `mhz`, as results list them, in this order:
/// `disabled`, `no-ir`, `radar`, `no-ht40-`, `no-ht40+`, `no-80mhz`, `no-160mhz`;
/// `["absent"]` when the radio has no such channel, empty when nothing is flagged.
pub fn channel_flags(phy: &Wiphy, mhz: u32) -> Vec<&'static str> {
    let Some(f) = phy.freq(mhz) else {
        return vec!["absent"];
    };
    [
        (f.disabled, "disabled"),
        (f.no_ir, "no-ir"),
        (f.radar, "radar"),
        (f.no_ht40_minus, "no-ht40-"),
        (f.no_ht40_plus, "no-ht40+"),
        (f.no_80mhz, "no-80mhz"),
        (f.no_160mhz, "no-160mhz"),
    ]
    .into_iter()
    .filter(|&(on, _)| on)
    .map(|(_, n)| n)
    .collect()
}

/// One rule of the domain as results write it: `5250-5350 MHz @ 80 MHz, 20.00 dBm,
/// NO-OUTDOOR DFS AUTO-BW` (range and bandwidth in whole MHz, rounded down from kHz;
/// EIRP from mBm; the flags as [`reg_rule_flag_names`] names them, when any).
pub fn rule_line(r: &RegRule) -> String {
    let flags = reg_rule_flag_names(r.flags);
    format!(
        "{}-{} MHz @ {} MHz, {}.{:02} dBm{}{}",
        r.start_khz / 1000,
        r.end_khz / 1000,
        r.max_bw_khz / 1000,
        r.max_eirp_mbm / 100,
        r.max_eirp_mbm % 100,
        if flags.is_empty() { "" } else { ", " },
        flags.join(" ")
    )
}

/// `NL80211_ATTR_DFS_REGION` by name: 1 `FCC`, 2 `ETSI`, 3 `JP`, anything else `unset`
/// (`enum nl80211_dfs_regions`).
pub fn dfs_region_name(region: u8) -> &'static str {
    match region {
        1 => "FCC",
        2 => "ETSI",
        3 => "JP",
        _ => "unset",
    }
}

#[cfg(test)]
mod tests;
