//! FNIRSI FNB48, FNB48S, FNB58 and C1 USB meters: 64-byte HID reports.
//!
//! Source: baryluk/fnirsi-usb-power-data-logger `fnirsi_logger.py` (commit 746e4d3):
//! the USB ids (`VID`, `PID_FNB48`, `PID_C1`, `VID_FNB58`, `PID_FNB58`, `VID_FNB48S`,
//! `PID_FNB48S`), the requests (`request_data`: `aa 81`, `aa 82`, then `aa 83`, or a
//! second `aa 82` on the FNB58 / FNB48S, each padded with zeros to 63 bytes and ended by
//! its CRC), the refresh (`aa 83` every 1 s on the FNB58 / FNB48S, every 3 ms on the
//! others), the sample report (`decode`: byte 0 `aa`, byte 1 type `04`, four samples of
//! 15 bytes from byte 2: u32 LE voltage and u32 LE current in 1e-5 V and A, u16 LE D+
//! and D- in mV, one unknown byte, u16 LE temperature in 0.1 °C; 100 samples/s) and its
//! check (`setup_crc`: CRC-8, polynomial 0x39, initial 0x42, no reflection, no final
//! XOR, over bytes 1..=62, compared with byte 63).

use super::{le16, le32, DecodeError};
use crate::Sample;

/// A report's length, bytes.
pub const REPORT_LEN: usize = 64;
/// Samples per report.
pub const SAMPLES_PER_REPORT: usize = 4;
/// The time between two samples, s (100 samples/s, `fnirsi_logger.py` `sps`).
pub const SAMPLE_PERIOD_S: f64 = 0.01;
/// One count of voltage and of current: 1e-5 V, 1e-5 A.
pub const LSB: f64 = 1e-5;
/// The report type byte of a sample report.
pub const SAMPLE_TYPE: u8 = 0x04;

/// A model and its USB ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// 0483:003a.
    Fnb48,
    /// 0483:003b.
    C1,
    /// 2e3c:0049.
    Fnb48s,
    /// 2e3c:5558.
    Fnb58,
}

/// Every model with its USB vendor and product id.
pub const MODELS: [(Model, u16, u16); 4] = [
    (Model::Fnb48, 0x0483, 0x003a),
    (Model::C1, 0x0483, 0x003b),
    (Model::Fnb48s, 0x2e3c, 0x0049),
    (Model::Fnb58, 0x2e3c, 0x5558),
];

impl Model {
    /// The model with these USB ids, if any.
    pub fn from_ids(vid: u16, pid: u16) -> Option<Model> {
        MODELS
            .iter()
            .find(|&&(_, v, p)| v == vid && p == pid)
            .map(|&(m, _, _)| m)
    }

    /// As `benchboot power list` names it: `fnirsi-fnb58`.
    pub fn name(self) -> &'static str {
        match self {
            Model::Fnb48 => "fnirsi-fnb48",
            Model::C1 => "fnirsi-c1",
            Model::Fnb48s => "fnirsi-fnb48s",
            Model::Fnb58 => "fnirsi-fnb58",
        }
    }

    /// The reports to send to start the samples, in order.
    pub fn start(self) -> Vec<[u8; REPORT_LEN]> {
        match self {
            Model::Fnb58 | Model::Fnb48s => vec![request(0x81), request(0x82), request(0x82)],
            Model::Fnb48 | Model::C1 => vec![request(0x81), request(0x82), request(0x83)],
        }
    }

    /// How often to send [`refresh`] to keep the samples coming, s.
    pub fn refresh_period_s(self) -> f64 {
        match self {
            Model::Fnb58 | Model::Fnb48s => 1.0,
            Model::Fnb48 | Model::C1 => 0.003,
        }
    }
}

/// The report that keeps the samples coming (`aa 83`).
pub fn refresh() -> [u8; REPORT_LEN] {
    request(0x83)
}

/// A request report: `aa`, `cmd`, zeros, then the CRC-8 of bytes 1..=62.
pub fn request(cmd: u8) -> [u8; REPORT_LEN] {
    let mut r = [0u8; REPORT_LEN];
    r[0] = 0xaa;
    r[1] = cmd;
    r[REPORT_LEN - 1] = crc8(&r[1..REPORT_LEN - 1]);
    r
}

/// CRC-8, polynomial 0x39, initial value 0x42, MSB first, no final XOR.
pub fn crc8(bytes: &[u8]) -> u8 {
    let mut c: u8 = 0x42;
    for &b in bytes {
        c ^= b;
        for _ in 0..8 {
            c = if c & 0x80 != 0 {
                (c << 1) ^ 0x39
            } else {
                c << 1
            };
        }
    }
    c
}

/// One sample of a report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// Bus voltage, V.
    pub volts: f64,
    /// Current, A.
    pub amps: f64,
    /// D+ line, V.
    pub dp_volts: f64,
    /// D- line, V.
    pub dn_volts: f64,
    /// The meter's temperature, °C.
    pub temp_c: f64,
}

impl Reading {
    /// As a [`Sample`] at `t_s`.
    pub fn sample(&self, t_s: f64) -> Sample {
        Sample::volts_amps(t_s, self.volts, self.amps)
    }

    /// The smallest step of V × A at this reading, W: one count of either.
    pub fn resolution_w(&self) -> f64 {
        (self.volts.abs() + self.amps.abs()) * LSB
    }
}

/// Decodes one report: `Ok(None)` for a report of another type (the FNB58's first answer
/// to `aa 81`), the four samples, oldest first, for a sample report.
///
/// # Errors
/// A length other than 64, a first byte other than `aa`, or a CRC that does not match.
pub fn decode(report: &[u8]) -> Result<Option<[Reading; SAMPLES_PER_REPORT]>, DecodeError> {
    if report.len() != REPORT_LEN {
        return Err(DecodeError::new(format!(
            "a FNIRSI report is {REPORT_LEN} bytes; {} came",
            report.len()
        )));
    }
    if report[0] != 0xaa {
        return Err(DecodeError::new(format!(
            "a FNIRSI report starts with 0xaa; this one with 0x{:02x}: is the device a FNIRSI \
             meter?",
            report[0]
        )));
    }
    if report[1] != SAMPLE_TYPE {
        return Ok(None);
    }
    let want = crc8(&report[1..REPORT_LEN - 1]);
    if want != report[REPORT_LEN - 1] {
        return Err(DecodeError::new(format!(
            "the FNIRSI sample report's CRC is 0x{:02x}, its bytes give 0x{want:02x}: damaged \
             in transit",
            report[REPORT_LEN - 1]
        )));
    }
    let one = |i: usize| {
        let o = 2 + 15 * i;
        Reading {
            volts: f64::from(le32(report, o)) * LSB,
            amps: f64::from(le32(report, o + 4)) * LSB,
            dp_volts: f64::from(le16(report, o + 8)) * 1e-3,
            dn_volts: f64::from(le16(report, o + 10)) * 1e-3,
            temp_c: f64::from(le16(report, o + 13)) * 0.1,
        }
    };
    Ok(Some([one(0), one(1), one(2), one(3)]))
}

/// A sample report carrying `readings` (volts and amps; D+, D- and temperature as given),
/// with its CRC: the inverse of [`decode`], for emulating a meter in tests.
pub fn encode(readings: &[Reading; SAMPLES_PER_REPORT]) -> [u8; REPORT_LEN] {
    let mut r = [0u8; REPORT_LEN];
    r[0] = 0xaa;
    r[1] = SAMPLE_TYPE;
    let counts = |x: f64, lsb: f64| (x / lsb).round().clamp(0.0, f64::from(u32::MAX)) as u32;
    for (i, s) in readings.iter().enumerate() {
        let o = 2 + 15 * i;
        r[o..o + 4].copy_from_slice(&counts(s.volts, LSB).to_le_bytes());
        r[o + 4..o + 8].copy_from_slice(&counts(s.amps, LSB).to_le_bytes());
        r[o + 8..o + 10].copy_from_slice(&(counts(s.dp_volts, 1e-3) as u16).to_le_bytes());
        r[o + 10..o + 12].copy_from_slice(&(counts(s.dn_volts, 1e-3) as u16).to_le_bytes());
        r[o + 12] = 1;
        r[o + 13..o + 15].copy_from_slice(&(counts(s.temp_c, 0.1) as u16).to_le_bytes());
    }
    r[REPORT_LEN - 1] = crc8(&r[1..REPORT_LEN - 1]);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::noise::Noise;

    #[test]
    fn the_requests_end_in_the_bytes_the_logger_sends() {
        // fnirsi_logger.py writes b"\xaa\x81" + 61 zeros + b"\x8e", "\x82 ... \x96",
        // "\x83 ... \x9e": the trailing byte is the CRC-8 the module doc gives.
        for (cmd, last) in [(0x81, 0x8e), (0x82, 0x96), (0x83, 0x9e)] {
            let r = request(cmd);
            assert_eq!((r[0], r[1], r[63]), (0xaa, cmd, last));
            assert!(r[2..63].iter().all(|&b| b == 0));
        }
        assert_eq!(Model::Fnb58.start()[2][1], 0x82);
        assert_eq!(Model::Fnb48.start()[2][1], 0x83);
        assert_eq!(Model::from_ids(0x2e3c, 0x5558), Some(Model::Fnb58));
        assert_eq!(Model::from_ids(0x0483, 0x003b), Some(Model::C1));
        assert_eq!(Model::from_ids(0x0483, 0x5740), None);
    }

    /// A sample report built byte by byte: sample 0 is 5.12345 V, 0.98765 A, D+ 1.184 V,
    /// D- 1.031 V, 30.5 °C.
    fn report() -> [u8; REPORT_LEN] {
        let mut r = [0u8; REPORT_LEN];
        r[0] = 0xaa;
        r[1] = 0x04;
        for i in 0..4 {
            let o = 2 + 15 * i;
            // 512345 = 0x0007_D159, little-endian
            r[o..o + 4].copy_from_slice(&[0x59, 0xd1, 0x07, 0x00]);
            // 98765 + i = 0x0001_81CD + i
            r[o + 4..o + 8].copy_from_slice(&[0xcd + i as u8, 0x81, 0x01, 0x00]);
            r[o + 8..o + 10].copy_from_slice(&[0xa0, 0x04]); // 1184 mV
            r[o + 10..o + 12].copy_from_slice(&[0x07, 0x04]); // 1031 mV
            r[o + 12] = 1;
            r[o + 13..o + 15].copy_from_slice(&[0x31, 0x01]); // 305 = 30.5 °C
        }
        r[62] = 0x5a; // the logger's "random" byte, covered by the CRC
        r[63] = crc8(&r[1..63]);
        r
    }

    #[test]
    fn a_sample_report_gives_four_readings() {
        let s = decode(&report()).unwrap().unwrap();
        assert!((s[0].volts - 5.12345).abs() < 1e-12, "{}", s[0].volts);
        assert!((s[0].amps - 0.98765).abs() < 1e-12, "{}", s[0].amps);
        assert!((s[3].amps - 0.98768).abs() < 1e-12, "{}", s[3].amps);
        assert!((s[0].dp_volts - 1.184).abs() < 1e-12);
        assert!((s[0].dn_volts - 1.031).abs() < 1e-12);
        assert!((s[0].temp_c - 30.5).abs() < 1e-12);
        assert!((s[0].sample(0.0).watts - 5.12345 * 0.98765).abs() < 1e-12);
        assert_eq!(decode(&encode(&s)).unwrap().unwrap(), s);
    }

    #[test]
    fn other_reports_and_damage() {
        let mut r = report();
        r[1] = 0x03;
        assert_eq!(decode(&r).unwrap(), None);
        let mut r = report();
        r[10] ^= 0x40;
        let e = decode(&r).unwrap_err().to_string();
        assert!(e.contains("CRC"), "{e}");
        let mut r = report();
        r[0] = 0x00;
        assert!(decode(&r).unwrap_err().to_string().contains("0x00"));
        assert!(decode(&report()[..63])
            .unwrap_err()
            .to_string()
            .contains("64 bytes; 63 came"));
    }

    #[test]
    fn hostile_bytes_never_panic() {
        let mut n = Noise(42);
        for len in [0, 1, 2, 63, 64, 65, 128] {
            for _ in 0..300 {
                let mut b = n.bytes(len);
                if len == 64 {
                    b[0] = 0xaa;
                    b[1] = 0x04;
                    b[63] = crc8(&b[1..63]);
                    let s = decode(&b).unwrap().unwrap();
                    assert!(s.iter().all(|r| r.volts.is_finite() && r.amps >= 0.0));
                } else {
                    assert!(decode(&b).is_err());
                }
            }
        }
    }
}
