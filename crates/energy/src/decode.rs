//! Decoders: bytes as a meter sends them to [`crate::Sample`]s. Each module cites the
//! document its layout comes from; none does I/O.
//!
//! - [`rdtech`]: RDTech UM24C / UM25C / UM34C, the 130-byte answer to `0xF0`.
//! - [`fnirsi`]: FNIRSI FNB48 / FNB48S / FNB58 / C1, 64-byte HID reports.
//! - [`plugs`]: Shelly gen1 and gen2, Tasmota and NETIO answers over HTTP.
//! - [`csv`]: a trace file someone recorded with another tool.
//! - [`ina2xx`]: TI INA219 and INA226 register words.
//! - [`axp`]: the AXP20x PMIC's power-supply class texts.
//!
//! The RDTech TC66C (AES-encrypted 192-byte frames, kolinger/rd-usb `interfaces/tc.py`)
//! has no decoder yet: record it with rd-usb and import its CSV.

pub mod axp;
pub mod csv;
pub mod fnirsi;
pub mod ina2xx;
pub mod plugs;
pub mod rdtech;

/// What a decoder refused, in words that name the field or byte and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DecodeError(pub String);

impl DecodeError {
    pub(crate) fn new(s: impl Into<String>) -> DecodeError {
        DecodeError(s.into())
    }
}

/// A big-endian u16 at `at` (callers check the length first).
pub(crate) fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// A big-endian u32 at `at` (callers check the length first).
pub(crate) fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// A little-endian u32 at `at` (callers check the length first).
pub(crate) fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// A little-endian u16 at `at` (callers check the length first).
pub(crate) fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

#[cfg(test)]
pub(crate) mod noise {
    /// A small deterministic generator (xorshift64*) for hostile-input tests: no
    /// dependency, the same bytes on every run.
    pub struct Noise(pub u64);

    impl Noise {
        pub fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.0 = x;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        pub fn bytes(&mut self, n: usize) -> Vec<u8> {
            (0..n).map(|_| self.next() as u8).collect()
        }
    }
}
