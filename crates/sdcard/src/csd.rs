//! The SD CSD register (card-specific data): capacity, TRAN_SPEED and command classes.

use serde::{Deserialize, Serialize};

use crate::hex::Bits;

/// The decoded SD CSD, Physical Layer Simplified Spec. section 5.3 (5.3.2 v1.0,
/// 5.3.3 v2.0, 5.3.4 v3.0). Not used for MMC cards (a different JEDEC layout).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Csd {
    /// CSD_STRUCTURE [127:126] as text: "1.0" (SDSC), "2.0" (SDHC/SDXC), "3.0" (SDUC).
    pub version: String,
    /// Capacity in bytes. v1.0: (C_SIZE+1) * 2^(C_SIZE_MULT+2) * 2^READ_BL_LEN;
    /// v2.0 and v3.0: (C_SIZE+1) * 512 KiB.
    pub capacity_bytes: u64,
    /// C_SIZE: v1.0 [73:62] (12 bits), v2.0 [69:48] (22 bits), v3.0 [75:48] (28 bits).
    pub c_size: u32,
    /// C_SIZE_MULT [49:47], v1.0 only.
    #[serde(default)]
    pub c_size_mult: Option<u8>,
    /// READ_BL_LEN [83:80]: the block length is 2^READ_BL_LEN bytes.
    pub read_bl_len: u8,
    /// TRAN_SPEED [103:96], raw (0x32 = 25 MHz, 0x5a = 50 MHz, 0x0b = 100 MHz, 0x2b = 200 MHz).
    pub tran_speed_raw: u8,
    /// TRAN_SPEED decoded: the maximum data transfer rate per line, bit/s, i.e. the
    /// maximum clock in Hz (section 5.3.2, table 5-6); 0 for reserved codes.
    pub tran_speed_hz: u64,
    /// CCC [95:84]: the card command classes supported, as a bit mask.
    pub ccc: u16,
    /// The classes set in CCC, ascending (class 10 = switch, 8 = application specific).
    pub ccc_classes: Vec<u8>,
    /// PERM_WRITE_PROTECT [13].
    pub perm_write_protect: bool,
    /// TMP_WRITE_PROTECT [12].
    pub tmp_write_protect: bool,
}

pub(crate) fn decode(bytes: &[u8]) -> Result<Csd, String> {
    let b = Bits(bytes);
    let structure = b.field(127, 126);
    let (version, c_size, mult, capacity) = match structure {
        0 => {
            let c = b.field(73, 62);
            let m = b.field(49, 47);
            let bl = b.field(83, 80);
            ("1.0", c, Some(m as u8), (c + 1) << (m + 2 + bl))
        }
        1 => {
            let c = b.field(69, 48);
            ("2.0", c, None, (c + 1) * 512 * 1024)
        }
        2 => {
            let c = b.field(75, 48);
            ("3.0", c, None, (c + 1) * 512 * 1024)
        }
        _ => return Err("csd: CSD_STRUCTURE 3 is reserved".to_string()),
    };
    let tran = b.field(103, 96) as u8;
    let ccc = b.field(95, 84) as u16;
    Ok(Csd {
        version: version.to_string(),
        capacity_bytes: capacity,
        c_size: c_size as u32,
        c_size_mult: mult,
        read_bl_len: b.field(83, 80) as u8,
        tran_speed_raw: tran,
        tran_speed_hz: tran_speed_hz(tran),
        ccc,
        ccc_classes: (0..12).filter(|i| ccc & (1 << i) != 0).collect(),
        perm_write_protect: b.bit(13) == 1,
        tmp_write_protect: b.bit(12) == 1,
    })
}

/// TRAN_SPEED: bits [2:0] the unit (100 kbit/s .. 100 Mbit/s), bits [6:3] the
/// multiplier 1.0 .. 8.0 (table 5-6); Linux sd.c tran_exp/tran_mant.
fn tran_speed_hz(raw: u8) -> u64 {
    const UNIT: [u64; 8] = [10_000, 100_000, 1_000_000, 10_000_000, 0, 0, 0, 0];
    const MANT: [u64; 16] = [
        0, 10, 12, 13, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 70, 80,
    ];
    UNIT[usize::from(raw & 7)] * MANT[usize::from((raw >> 3) & 0xf)]
}

#[cfg(test)]
mod tests {
    #[test]
    fn tran_speed() {
        assert_eq!(super::tran_speed_hz(0x32), 25_000_000);
        assert_eq!(super::tran_speed_hz(0x5a), 50_000_000);
        assert_eq!(super::tran_speed_hz(0x0b), 100_000_000);
        assert_eq!(super::tran_speed_hz(0x2b), 200_000_000);
        assert_eq!(super::tran_speed_hz(0xff), 0);
    }
}
