//! The SD configuration register (SCR), the SD Status (SSR) and the OCR.

use serde::{Deserialize, Serialize};

use crate::hex::Bits;

/// The decoded SCR, Physical Layer Simplified Spec. section 5.6 (table 5-17).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scr {
    /// SCR_STRUCTURE [63:60]; 0 is the only defined value.
    pub structure: u8,
    /// SD_SPEC [59:56].
    pub sd_spec: u8,
    /// SD_SPEC3 [47].
    pub sd_spec3: bool,
    /// SD_SPEC4 [42].
    pub sd_spec4: bool,
    /// SD_SPECX [41:38].
    pub sd_specx: u8,
    /// The physical layer version those fields give (table 5-18), e.g. "SD 3.0x",
    /// "SD 6.xx"; "SD (unknown)" for a combination the table does not define.
    pub spec_version: String,
    /// SD_SECURITY [54:52]: 0 none, 2 SDSC (1.01), 3 SDHC (2.00), 4 SDXC (3.xx).
    pub security: u8,
    /// SD_BUS_WIDTHS [51:48] as the widths in bits (1 and/or 4).
    pub bus_widths: Vec<u8>,
    /// DATA_STAT_AFTER_ERASE [55]: erased data reads as 1s.
    pub erased_ones: bool,
    /// CMD_SUPPORT [35:32] as a mask: bit0 CMD20, bit1 CMD23, bit2 CMD48/49, bit3 CMD58/59.
    pub cmd_support: u8,
}

pub(crate) fn decode_scr(bytes: &[u8]) -> Result<Scr, String> {
    let b = Bits(bytes);
    let structure = b.field(63, 60) as u8;
    if structure != 0 {
        return Err(format!("scr: SCR_STRUCTURE {structure} is not defined"));
    }
    let sd_spec = b.field(59, 56) as u8;
    let spec3 = b.bit(47) == 1;
    let spec4 = b.bit(42) == 1;
    let specx = b.field(41, 38) as u8;
    let version = match (sd_spec, spec3, spec4, specx) {
        (0, false, false, 0) => "SD 1.0x",
        (1, false, false, 0) => "SD 1.10",
        (2, false, false, 0) => "SD 2.00",
        (2, true, false, 0) => "SD 3.0x",
        (2, true, true, 0) => "SD 4.xx",
        (2, true, _, 1) => "SD 5.xx",
        (2, true, _, 2) => "SD 6.xx",
        (2, true, _, 3) => "SD 7.xx",
        (2, true, _, 4) => "SD 8.xx",
        (2, true, _, 5) => "SD 9.xx",
        _ => "SD (unknown)",
    };
    let widths = b.field(51, 48);
    Ok(Scr {
        structure,
        sd_spec,
        sd_spec3: spec3,
        sd_spec4: spec4,
        sd_specx: specx,
        spec_version: version.to_string(),
        security: b.field(54, 52) as u8,
        bus_widths: [(0, 1u8), (2, 4u8)]
            .iter()
            .filter(|(bit, _)| widths & (1 << bit) != 0)
            .map(|&(_, w)| w)
            .collect(),
        erased_ones: b.bit(55) == 1,
        cmd_support: b.field(35, 32) as u8,
    })
}

/// An application performance class (SSR APP_PERF_CLASS, section 4.10.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AppClass {
    /// A1: 1500 read / 500 write IOPS (4 KiB random), 10 MB/s sequential.
    A1,
    /// A2: 4000 read / 2000 write IOPS, needs command queue and cache on the host side.
    A2,
}

/// The decoded SD Status (512 bits), Physical Layer Simplified Spec. section 4.10.2
/// (table 4-44); Linux sd.c mmc_read_ssr reads AU_SIZE and the erase fields the same way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ssr {
    /// DAT_BUS_WIDTH [511:510] in bits (1 or 4; 0 for reserved codes).
    pub bus_width_bits: u8,
    /// SECURED_MODE [509].
    pub secured_mode: bool,
    /// SD_CARD_TYPE [495:480]: 0 regular, 1 ROM, 2 OTP.
    pub card_type: u16,
    /// SIZE_OF_PROTECTED_AREA [479:448], raw (bytes on SDHC/SDXC, blocks-based on SDSC).
    pub protected_area_raw: u32,
    /// SPEED_CLASS [447:440] as the class number 0, 2, 4, 6, 10 (None: reserved code).
    pub speed_class: Option<u8>,
    /// PERFORMANCE_MOVE [439:432] in MB/s (0: not defined, 0xff: infinity).
    pub performance_move: u8,
    /// AU_SIZE [431:428] in bytes (16 KiB .. 64 MiB); None when 0 (not defined).
    pub au_size_bytes: Option<u64>,
    /// ERASE_SIZE [423:408]: AUs erased per ERASE_TIMEOUT.
    pub erase_size: u16,
    /// ERASE_TIMEOUT [407:402] seconds.
    pub erase_timeout_s: u8,
    /// ERASE_OFFSET [401:400] seconds.
    pub erase_offset_s: u8,
    /// UHS_SPEED_GRADE [399:396]: 0 none, 1 U1 (10 MB/s), 3 U3 (30 MB/s).
    pub uhs_speed_grade: u8,
    /// VIDEO_SPEED_CLASS [391:384]: 0, 6, 10, 30, 60 or 90 (V6..V90).
    pub video_speed_class: u8,
    /// APP_PERF_CLASS [339:336]: 1 A1, 2 A2.
    pub app_perf_class: u8,
    /// DISCARD_SUPPORT [313].
    pub discard: bool,
    /// FULE_SUPPORT [312] (full user area logical erase).
    pub fule: bool,
    /// True when all 512 bits are 0: the kernel could not read the SD Status (it
    /// leaves raw_ssr zeroed) or the card is emulated (QEMU's is all zero).
    pub all_zero: bool,
}

impl Ssr {
    /// The application performance class the card claims.
    pub fn app_class(&self) -> Option<AppClass> {
        match self.app_perf_class {
            1 => Some(AppClass::A1),
            2 => Some(AppClass::A2),
            _ => None,
        }
    }

    /// The classes in label order, e.g. "C10 U3 V30 A2"; empty when none are claimed.
    pub fn classes_label(&self) -> String {
        let mut parts = Vec::new();
        if let Some(c) = self.speed_class.filter(|c| *c > 0) {
            parts.push(format!("C{c}"));
        }
        if self.uhs_speed_grade > 0 {
            parts.push(format!("U{}", self.uhs_speed_grade));
        }
        if self.video_speed_class > 0 {
            parts.push(format!("V{}", self.video_speed_class));
        }
        if let Some(a) = self.app_class() {
            parts.push(format!("{a:?}"));
        }
        parts.join(" ")
    }
}

pub(crate) fn decode_ssr(bytes: &[u8]) -> Ssr {
    let b = Bits(bytes);
    let au = b.field(431, 428) as u32;
    Ssr {
        bus_width_bits: match b.field(511, 510) {
            0 => 1,
            2 => 4,
            _ => 0,
        },
        secured_mode: b.bit(509) == 1,
        card_type: b.field(495, 480) as u16,
        protected_area_raw: b.field(479, 448) as u32,
        speed_class: match b.field(447, 440) {
            0 => Some(0),
            1 => Some(2),
            2 => Some(4),
            3 => Some(6),
            4 => Some(10),
            _ => None,
        },
        performance_move: b.field(439, 432) as u8,
        au_size_bytes: match au {
            0 => None,
            1..=10 => Some(16384u64 << (au - 1)),
            11 => Some(12 << 20),
            12 => Some(16 << 20),
            13 => Some(24 << 20),
            14 => Some(32 << 20),
            _ => Some(64 << 20),
        },
        erase_size: b.field(423, 408) as u16,
        erase_timeout_s: b.field(407, 402) as u8,
        erase_offset_s: b.field(401, 400) as u8,
        uhs_speed_grade: b.field(399, 396) as u8,
        video_speed_class: b.field(391, 384) as u8,
        app_perf_class: b.field(339, 336) as u8,
        discard: b.bit(313) == 1,
        fule: b.bit(312) == 1,
        all_zero: bytes.iter().all(|&x| x == 0),
    }
}

/// The decoded OCR, Physical Layer Simplified Spec. section 5.1 (table 5-1).
///
/// Caution: Linux's sysfs `ocr` attribute prints `card->ocr` ("0x%08x"), which
/// mmc_sd_init_card sets to the voltage window the host selected (two adjacent bits,
/// e.g. 0x00300000 = 3.2-3.4 V), not the card's R3 response: busy, CCS and S18A are
/// normally 0 there even on SDHC/UHS cards. Use the CSD version for the capacity class.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ocr {
    /// The 32 bits.
    pub raw: u32,
    /// Bit 31: card power-up finished (the "busy" bit; 0 = still busy).
    pub powered_up: bool,
    /// Bit 30: CCS, card capacity status (1 = SDHC/SDXC/SDUC).
    pub ccs: bool,
    /// Bit 29: UHS-II card status.
    pub uhs2: bool,
    /// Bit 24: S18A, switching to 1.8 V accepted.
    pub s18a: bool,
    /// Bits 23..15: the VDD window, lowest and highest millivolts set (e.g. 3200..3400).
    #[serde(default)]
    pub vdd_window_mv: Option<(u32, u32)>,
}

pub(crate) fn decode_ocr(bytes: &[u8]) -> Ocr {
    let raw = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let set: Vec<u32> = (15..=23).filter(|b| raw & (1 << b) != 0).collect();
    // Bit 15 is 2.7-2.8 V, bit 23 is 3.5-3.6 V: each bit 100 mV.
    let window = match (set.first(), set.last()) {
        (Some(lo), Some(hi)) => Some((2700 + (lo - 15) * 100, 2800 + (hi - 15) * 100)),
        _ => None,
    };
    Ocr {
        raw,
        powered_up: raw & (1 << 31) != 0,
        ccs: raw & (1 << 30) != 0,
        uhs2: raw & (1 << 29) != 0,
        s18a: raw & (1 << 24) != 0,
        vdd_window_mv: window,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ocr_fields() {
        let o = decode_ocr(&[0xc0, 0xff, 0x80, 0x00]);
        assert!(o.powered_up && o.ccs && !o.s18a);
        assert_eq!(o.vdd_window_mv, Some((2700, 3600)));
        let sysfs = decode_ocr(&[0x00, 0x30, 0x00, 0x00]);
        assert_eq!(sysfs.vdd_window_mv, Some((3200, 3400)));
        assert!(!sysfs.ccs);
    }
}
