//! Bands, channels, frequencies and widths.
//!
//! Channel numbering: IEEE 802.11-2020 Annex E (Table E-4): 2.4 GHz channel `c` (1..=13) is
//! `2407 + 5 c` MHz and channel 14 is 2484 MHz; 5 GHz channel `c` is `5000 + 5 c` MHz.
//! The wider channels of 5 GHz are the fixed blocks of §21.3.14 (VHT): 40 MHz pairs
//! (36+40, 44+48, ...), 80 MHz blocks centred on channels 42, 58, 106, 122, 138, 155 and
//! 160 MHz blocks centred on 50, 114, 163. At 2.4 GHz a 40 MHz channel is the primary
//! plus a secondary 20 MHz above (HT40+, primary 1..=9) or below (HT40-, primary 5..=13).

use std::fmt;

/// A frequency band the plan and the radio speak of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Band {
    /// 2.4 GHz (802.11b/g/n), channels 1..=14.
    Ghz2,
    /// 5 GHz (802.11a/n/ac), channels 32..=177.
    Ghz5,
}

impl Band {
    /// `2.4` / `5`, as plans and tables write it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ghz2 => "2.4",
            Self::Ghz5 => "5",
        }
    }

    /// Parses `2.4` / `5` (also `2.4GHz`, `5 GHz`).
    pub fn parse(s: &str) -> Option<Band> {
        let t = s
            .trim()
            .trim_end_matches("GHz")
            .trim_end_matches("ghz")
            .trim();
        match t {
            "2.4" | "2" => Some(Self::Ghz2),
            "5" => Some(Self::Ghz5),
            _ => None,
        }
    }

    /// The band a centre frequency in MHz lies in.
    pub fn of_mhz(mhz: u32) -> Option<Band> {
        match mhz {
            2400..=2500 => Some(Self::Ghz2),
            5000..=5925 => Some(Self::Ghz5),
            _ => None,
        }
    }
}

impl fmt::Display for Band {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} GHz", self.name())
    }
}

/// The primary channel's frequency, MHz; `None` for a channel number the band lacks.
pub fn channel_to_mhz(band: Band, channel: u8) -> Option<u32> {
    let c = u32::from(channel);
    match band {
        Band::Ghz2 => match channel {
            1..=13 => Some(2407 + 5 * c),
            14 => Some(2484),
            _ => None,
        },
        Band::Ghz5 => match channel {
            32..=177 => Some(5000 + 5 * c),
            _ => None,
        },
    }
}

/// The channel number of a 20 MHz channel's frequency, MHz.
pub fn mhz_to_channel(mhz: u32) -> Option<(Band, u8)> {
    match mhz {
        2484 => Some((Band::Ghz2, 14)),
        2412..=2472 if (mhz - 2407).is_multiple_of(5) => {
            Some((Band::Ghz2, ((mhz - 2407) / 5) as u8))
        }
        5160..=5885 if mhz.is_multiple_of(5) => Some((Band::Ghz5, ((mhz - 5000) / 5) as u8)),
        _ => None,
    }
}

/// A channel width, MHz.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Width {
    /// 20 MHz without HT (802.11a/g); only what a radio reports, never asked by a plan.
    NoHt20,
    /// 20 MHz HT/VHT.
    W20,
    W40,
    W80,
    W160,
}

impl Width {
    /// The width in MHz.
    pub fn mhz(self) -> u32 {
        match self {
            Self::NoHt20 | Self::W20 => 20,
            Self::W40 => 40,
            Self::W80 => 80,
            Self::W160 => 160,
        }
    }

    /// 20 / 40 / 80 / 160 (a plan's width in MHz).
    pub fn from_mhz(mhz: u32) -> Option<Width> {
        match mhz {
            20 => Some(Self::W20),
            40 => Some(Self::W40),
            80 => Some(Self::W80),
            160 => Some(Self::W160),
            _ => None,
        }
    }
}

/// A channel as the kernel's `cfg80211_chan_def` has it: the primary 20 MHz channel, the
/// width and the centre of the whole channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Chandef {
    /// Primary channel frequency, MHz.
    pub control_mhz: u32,
    pub width: Width,
    /// Centre frequency of the whole channel, MHz (= `control_mhz` at 20 MHz).
    pub center1_mhz: u32,
}

/// Why a (band, channel, width) cannot be a channel at all (before any radio is asked).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChannelError {
    #[error("channel {channel} is not a {band} channel (2.4 GHz: 1-14; 5 GHz: 32-177)")]
    NoSuchChannel { band: Band, channel: u8 },
    #[error("channel {channel} at {width} MHz: no {width} MHz block of {band} contains it")]
    NoBlock { band: Band, channel: u8, width: u32 },
}

/// 5 GHz 40 MHz pairs by centre channel (36+40 on 38, ..., 149+153 on 151).
const HT40_CENTRES: [u8; 14] = [
    38, 46, 54, 62, 102, 110, 118, 126, 134, 142, 151, 159, 167, 175,
];
/// 5 GHz 80 MHz blocks by centre channel (802.11-2020 §21.3.14, Table 21-22 / Annex E).
const VHT80_CENTRES: [u8; 6] = [42, 58, 106, 122, 138, 155];
/// 5 GHz 160 MHz blocks by centre channel.
const VHT160_CENTRES: [u8; 3] = [50, 114, 163];

impl Chandef {
    /// The chandef for a plan entry. 2.4 GHz at 40 MHz puts the secondary channel above
    /// the primary (HT40+) for channels 1..=7 and below (HT40-) for 8..=13; 5 GHz
    /// 40/80/160 MHz use the fixed blocks. 80/160 MHz exist only at 5 GHz.
    pub fn new(band: Band, channel: u8, width: Width) -> Result<Chandef, ChannelError> {
        let control_mhz =
            channel_to_mhz(band, channel).ok_or(ChannelError::NoSuchChannel { band, channel })?;
        let no_block = ChannelError::NoBlock {
            band,
            channel,
            width: width.mhz(),
        };
        let center1_mhz = match (band, width) {
            (_, Width::NoHt20 | Width::W20) => control_mhz,
            (Band::Ghz2, Width::W40) => match channel {
                1..=7 => control_mhz + 10,
                8..=13 => control_mhz - 10,
                _ => return Err(no_block),
            },
            (Band::Ghz2, _) => return Err(no_block),
            (Band::Ghz5, Width::W40) => block_centre(channel, &HT40_CENTRES, 2)
                .map(|c| 5000 + 5 * u32::from(c))
                .ok_or(no_block)?,
            (Band::Ghz5, Width::W80) => block_centre(channel, &VHT80_CENTRES, 6)
                .map(|c| 5000 + 5 * u32::from(c))
                .ok_or(no_block)?,
            (Band::Ghz5, Width::W160) => block_centre(channel, &VHT160_CENTRES, 14)
                .map(|c| 5000 + 5 * u32::from(c))
                .ok_or(no_block)?,
        };
        Ok(Chandef {
            control_mhz,
            width,
            center1_mhz,
        })
    }

    /// The band of the primary channel.
    pub fn band(&self) -> Option<Band> {
        Band::of_mhz(self.control_mhz)
    }

    /// The primary channel's number.
    pub fn channel(&self) -> Option<u8> {
        mhz_to_channel(self.control_mhz).map(|(_, c)| c)
    }

    /// At 40 MHz: whether the secondary channel lies above the primary (HT40+).
    pub fn secondary_above(&self) -> Option<bool> {
        (self.width == Width::W40).then_some(self.center1_mhz > self.control_mhz)
    }

    /// The centre channel number of the whole channel (hostapd's
    /// `vht_oper_centr_freq_seg0_idx`).
    pub fn center_channel(&self) -> Option<u8> {
        mhz_to_channel(self.center1_mhz)
            .map(|(_, c)| c)
            .or_else(|| (self.center1_mhz > 5000).then(|| ((self.center1_mhz - 5000) / 5) as u8))
    }
}

/// The centre channel of the block of `half_span` channels either side of its centre
/// that contains `channel` (primary channels are centre - half_span + 4k).
fn block_centre(channel: u8, centres: &[u8], half_span: u8) -> Option<u8> {
    centres.iter().copied().find(|&c| {
        let lo = c - half_span;
        let hi = c + half_span;
        channel >= lo && channel <= hi && (channel - lo).is_multiple_of(4)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frequencies_of_channels() {
        assert_eq!(channel_to_mhz(Band::Ghz2, 1), Some(2412));
        assert_eq!(channel_to_mhz(Band::Ghz2, 6), Some(2437));
        assert_eq!(channel_to_mhz(Band::Ghz2, 11), Some(2462));
        assert_eq!(channel_to_mhz(Band::Ghz2, 14), Some(2484));
        assert_eq!(channel_to_mhz(Band::Ghz2, 15), None);
        assert_eq!(channel_to_mhz(Band::Ghz5, 36), Some(5180));
        assert_eq!(channel_to_mhz(Band::Ghz5, 165), Some(5825));
        assert_eq!(channel_to_mhz(Band::Ghz5, 11), None);
        assert_eq!(mhz_to_channel(2437), Some((Band::Ghz2, 6)));
        assert_eq!(mhz_to_channel(5180), Some((Band::Ghz5, 36)));
        assert_eq!(mhz_to_channel(2484), Some((Band::Ghz2, 14)));
        assert_eq!(mhz_to_channel(2413), None);
    }

    #[test]
    fn wide_channels_take_the_fixed_blocks() {
        let c = Chandef::new(Band::Ghz2, 1, Width::W20).unwrap();
        assert_eq!((c.control_mhz, c.center1_mhz), (2412, 2412));
        let c = Chandef::new(Band::Ghz2, 1, Width::W40).unwrap();
        assert_eq!(c.center1_mhz, 2422);
        assert_eq!(c.secondary_above(), Some(true));
        let c = Chandef::new(Band::Ghz2, 11, Width::W40).unwrap();
        assert_eq!(c.center1_mhz, 2452);
        assert_eq!(c.secondary_above(), Some(false));
        // 5 GHz 40 MHz: 36+40 centred on 38 (5190), 40 is the upper of the same pair.
        let c = Chandef::new(Band::Ghz5, 36, Width::W40).unwrap();
        assert_eq!(c.center1_mhz, 5190);
        let c = Chandef::new(Band::Ghz5, 40, Width::W40).unwrap();
        assert_eq!((c.center1_mhz, c.secondary_above()), (5190, Some(false)));
        let c = Chandef::new(Band::Ghz5, 149, Width::W40).unwrap();
        assert_eq!(c.center1_mhz, 5755);
        let c = Chandef::new(Band::Ghz5, 157, Width::W40).unwrap();
        assert_eq!(c.center1_mhz, 5795);
        // 80 MHz: 36..48 centred on 42 (5210); 149..161 on 155 (5775).
        let c = Chandef::new(Band::Ghz5, 36, Width::W80).unwrap();
        assert_eq!((c.center1_mhz, c.center_channel()), (5210, Some(42)));
        let c = Chandef::new(Band::Ghz5, 48, Width::W80).unwrap();
        assert_eq!(c.center1_mhz, 5210);
        let c = Chandef::new(Band::Ghz5, 161, Width::W80).unwrap();
        assert_eq!(c.center1_mhz, 5775);
        let c = Chandef::new(Band::Ghz5, 100, Width::W160).unwrap();
        assert_eq!(c.center1_mhz, 5570);
    }

    #[test]
    fn impossible_channels_are_refused_with_the_reason() {
        assert_eq!(
            Chandef::new(Band::Ghz2, 36, Width::W20),
            Err(ChannelError::NoSuchChannel {
                band: Band::Ghz2,
                channel: 36
            })
        );
        assert!(matches!(
            Chandef::new(Band::Ghz2, 6, Width::W80),
            Err(ChannelError::NoBlock { .. })
        ));
        assert!(matches!(
            Chandef::new(Band::Ghz5, 165, Width::W80),
            Err(ChannelError::NoBlock { .. })
        ));
        assert!(matches!(
            Chandef::new(Band::Ghz2, 14, Width::W40),
            Err(ChannelError::NoBlock { .. })
        ));
        assert_eq!(Band::parse("2.4"), Some(Band::Ghz2));
        assert_eq!(Band::parse("5 GHz"), Some(Band::Ghz5));
        assert_eq!(Band::parse("6"), None);
        assert_eq!(Width::from_mhz(40), Some(Width::W40));
        assert_eq!(Width::from_mhz(30), None);
    }
}
