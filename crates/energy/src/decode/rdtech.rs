//! RDTech UM24C / UM25C / UM34C USB meters: the 130-byte frame each sends in answer to
//! one byte `0xF0`, over Bluetooth SPP (`/dev/rfcommN`) or a serial port at 9600 8N1.
//!
//! Layout and scales: libsigrok `src/hardware/rdtech-um/protocol.c` (channel table:
//! V at byte 2, I at 4, T at 10, D+ at 96, D- at 98, the record's mWh at 106; the UM25C
//! profile's V 0.001 and I 0.0001, the others' 0.01 and 0.001; checksums
//! `poll_csum_fff1`, `poll_csum_um34c`) and `protocol.h` (model ids); kolinger/rd-usb
//! `interfaces/um.py` (power, u32 mW at byte 6). The data groups (selected group at byte
//! 14, ten groups of u32 mAh + u32 mWh from byte 16): sigrok wiki, "RDTech UM series",
//! "Protocol". Every field is big-endian.

use super::{be16, be32, DecodeError};
use crate::Sample;

/// The byte that asks for one frame (libsigrok `UM_CMD_POLL`).
pub const REQUEST: u8 = 0xF0;
/// A frame's length, bytes (libsigrok `UM_POLL_LEN`).
pub const FRAME_LEN: usize = 130;
/// The serial speed the meters use over a wired UART, baud (libsigrok's default
/// `serialcomm` for the driver, `9600/8n1`; rd-usb opens the port at 9600).
pub const BAUD: u32 = 9600;
/// The time sigrok leaves between two requests, s (libsigrok `UM_POLL_PERIOD_MS`).
pub const POLL_PERIOD_S: f64 = 0.1;
/// How long sigrok waits for a frame, s (libsigrok `UM_TIMEOUT_MS`).
pub const TIMEOUT_S: f64 = 1.0;

/// Which meter sent a frame: its first two bytes (libsigrok `protocol.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// Id 0x0963.
    Um24c,
    /// Id 0x09C9.
    Um25c,
    /// Id 0x0D4C.
    Um34c,
}

impl Model {
    /// Every model, for lookups.
    pub const ALL: [Model; 3] = [Model::Um24c, Model::Um25c, Model::Um34c];

    /// The frame's first two bytes, big-endian.
    pub fn id(self) -> u16 {
        match self {
            Model::Um24c => 0x0963,
            Model::Um25c => 0x09c9,
            Model::Um34c => 0x0d4c,
        }
    }

    /// The model of a frame's first two bytes, if known.
    pub fn from_id(id: u16) -> Option<Model> {
        Model::ALL.into_iter().find(|m| m.id() == id)
    }

    /// As `benchboot power list` names it: `rdtech-um25c`.
    pub fn name(self) -> &'static str {
        match self {
            Model::Um24c => "rdtech-um24c",
            Model::Um25c => "rdtech-um25c",
            Model::Um34c => "rdtech-um34c",
        }
    }

    /// One count of the voltage field, V: 0.001 on the UM25C, 0.01 on the others.
    pub fn volts_lsb(self) -> f64 {
        match self {
            Model::Um25c => 0.001,
            Model::Um24c | Model::Um34c => 0.01,
        }
    }

    /// One count of the current field, A: 0.0001 on the UM25C, 0.001 on the others.
    pub fn amps_lsb(self) -> f64 {
        match self {
            Model::Um25c => 0.0001,
            Model::Um24c | Model::Um34c => 0.001,
        }
    }

    /// The smallest step of V × A at `volts` and `amps`, W: one count of either field.
    pub fn resolution_w(self, volts: f64, amps: f64) -> f64 {
        volts.abs() * self.amps_lsb() + amps.abs() * self.volts_lsb()
    }
}

/// One decoded frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    pub model: Model,
    /// Bus voltage, V.
    pub volts: f64,
    /// Current, A.
    pub amps: f64,
    /// The meter's own power field (u32 at byte 6, mW), W.
    pub meter_watts: f64,
    /// The meter's temperature, °C (u16 at byte 10).
    pub temp_c: f64,
    /// The data group selected on the meter, 0..=9 (u16 at byte 14).
    pub group: u8,
    /// That group's charge, mAh (u32 at 16 + 8 × group).
    pub group_mah: u32,
    /// That group's energy, mWh (u32 at 20 + 8 × group).
    pub group_mwh: u32,
}

impl Reading {
    /// V × A, W (more resolution than [`Reading::meter_watts`] on the UM25C).
    pub fn watts(&self) -> f64 {
        self.volts * self.amps
    }

    /// The selected group's energy counter, J (mWh × 3.6).
    pub fn counter_j(&self) -> f64 {
        f64::from(self.group_mwh) * 3.6
    }

    /// The reading as a [`Sample`] at `t_s`.
    pub fn sample(&self, t_s: f64) -> Sample {
        Sample::volts_amps(t_s, self.volts, self.amps)
    }
}

/// The model a frame's first two bytes name, or why not.
///
/// # Errors
/// Fewer than two bytes, or an id none of the three models has.
pub fn model_of(frame: &[u8]) -> Result<Model, DecodeError> {
    if frame.len() < 2 {
        return Err(DecodeError::new(format!(
            "an RDTech frame starts with a two-byte model id; {} byte(s) came",
            frame.len()
        )));
    }
    let id = be16(frame, 0);
    Model::from_id(id).ok_or_else(|| {
        DecodeError::new(format!(
            "model id 0x{id:04x} is none of the UM24C (0x0963), UM25C (0x09c9) or UM34C \
             (0x0d4c): is this an RDTech UM meter, and is the port the meter's?"
        ))
    })
}

/// Where the first byte pair that is a known model id starts in `buf` (libsigrok's
/// `recv_poll_data` skips one byte at a time until the first two name the model).
pub fn sync(buf: &[u8]) -> Option<usize> {
    buf.windows(2)
        .position(|w| Model::from_id(u16::from_be_bytes([w[0], w[1]])).is_some())
}

/// The bytes the UM34C's check byte XORs (libsigrok `poll_csum_um34c`).
const UM34C_POSITIONS: [usize; 32] = [
    1, 3, 7, 9, 15, 17, 19, 23, 31, 39, 41, 45, 49, 53, 55, 57, 59, 63, 67, 69, 73, 79, 83, 89, 97,
    99, 109, 111, 113, 119, 121, 127,
];

/// Whether a whole frame's check holds: UM24C and UM25C end in `FF F1`; the UM34C's last
/// byte is the XOR of the bytes at libsigrok's 32 positions (`poll_csum_um34c`).
fn check_ok(model: Model, f: &[u8]) -> bool {
    match model {
        Model::Um24c | Model::Um25c => be16(f, FRAME_LEN - 2) == 0xfff1,
        Model::Um34c => UM34C_POSITIONS.iter().fold(0u8, |x, &i| x ^ f[i]) == f[FRAME_LEN - 1],
    }
}

/// A frame carrying `r` (the inverse of [`decode`], for emulating a meter in tests):
/// V and A rounded to the model's counts, the selected group's mAh and mWh set, the other
/// groups zero, the end marker or checksum the model uses.
pub fn encode(r: &Reading) -> [u8; FRAME_LEN] {
    let mut f = [0u8; FRAME_LEN];
    let counts = |x: f64, lsb: f64| (x / lsb).round().clamp(0.0, 65535.0) as u16;
    f[0..2].copy_from_slice(&r.model.id().to_be_bytes());
    f[2..4].copy_from_slice(&counts(r.volts, r.model.volts_lsb()).to_be_bytes());
    f[4..6].copy_from_slice(&counts(r.amps, r.model.amps_lsb()).to_be_bytes());
    let mw = (r.meter_watts * 1000.0)
        .round()
        .clamp(0.0, f64::from(u32::MAX)) as u32;
    f[6..10].copy_from_slice(&mw.to_be_bytes());
    f[10..12].copy_from_slice(&(r.temp_c.round().clamp(0.0, 65535.0) as u16).to_be_bytes());
    let group = r.group.min(9);
    f[14..16].copy_from_slice(&u16::from(group).to_be_bytes());
    let g = 16 + 8 * usize::from(group);
    f[g..g + 4].copy_from_slice(&r.group_mah.to_be_bytes());
    f[g + 4..g + 8].copy_from_slice(&r.group_mwh.to_be_bytes());
    match r.model {
        Model::Um34c => f[FRAME_LEN - 1] = UM34C_POSITIONS.iter().fold(0u8, |x, &i| x ^ f[i]),
        Model::Um24c | Model::Um25c => f[FRAME_LEN - 2..].copy_from_slice(&[0xff, 0xf1]),
    }
    f
}

/// Decodes one 130-byte frame.
///
/// # Errors
/// A length other than 130, an unknown model id, a failed end marker or checksum, or a
/// selected group outside 0..=9.
pub fn decode(frame: &[u8]) -> Result<Reading, DecodeError> {
    let model = model_of(frame)?;
    if frame.len() != FRAME_LEN {
        return Err(DecodeError::new(format!(
            "an RDTech {} frame is {FRAME_LEN} bytes; {} came (cut short, or two frames \
             run together)",
            model.name(),
            frame.len()
        )));
    }
    if !check_ok(model, frame) {
        return Err(DecodeError::new(match model {
            Model::Um34c => format!(
                "the {} frame's checksum (last byte 0x{:02x}) does not match its bytes: \
                 damaged in transit",
                model.name(),
                frame[FRAME_LEN - 1]
            ),
            _ => format!(
                "the {} frame ends in 0x{:04x}, not the end marker 0xfff1: damaged in \
                 transit, or out of step with the meter",
                model.name(),
                be16(frame, FRAME_LEN - 2)
            ),
        }));
    }
    let group = be16(frame, 14);
    if group > 9 {
        return Err(DecodeError::new(format!(
            "the {} frame's selected data group is {group}; the meter has groups 0 to 9",
            model.name()
        )));
    }
    let g = 16 + 8 * usize::from(group);
    Ok(Reading {
        model,
        volts: f64::from(be16(frame, 2)) * model.volts_lsb(),
        amps: f64::from(be16(frame, 4)) * model.amps_lsb(),
        meter_watts: f64::from(be32(frame, 6)) * 0.001,
        temp_c: f64::from(be16(frame, 10)),
        group: group as u8,
        group_mah: be32(frame, g),
        group_mwh: be32(frame, g + 4),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::noise::Noise;

    /// A frame built field by field at the offsets the module doc cites.
    pub(crate) fn frame(model: Model, v: u16, i: u16, mw: u32, group: u16) -> [u8; FRAME_LEN] {
        let mut f = [0u8; FRAME_LEN];
        f[0..2].copy_from_slice(&model.id().to_be_bytes());
        f[2..4].copy_from_slice(&v.to_be_bytes());
        f[4..6].copy_from_slice(&i.to_be_bytes());
        f[6..10].copy_from_slice(&mw.to_be_bytes());
        f[10..12].copy_from_slice(&31u16.to_be_bytes()); // 31 °C
        f[12..14].copy_from_slice(&88u16.to_be_bytes()); // 88 °F
        f[14..16].copy_from_slice(&group.to_be_bytes());
        for g in 0..10u32 {
            let at = 16 + 8 * g as usize;
            f[at..at + 4].copy_from_slice(&(100 + g).to_be_bytes()); // mAh
            f[at + 4..at + 8].copy_from_slice(&(1000 + g).to_be_bytes()); // mWh
        }
        f[96..98].copy_from_slice(&60u16.to_be_bytes()); // D+ 0.60 V
        match model {
            Model::Um34c => f[FRAME_LEN - 1] = UM34C_POSITIONS.iter().fold(0, |x, &i| x ^ f[i]),
            _ => f[128..130].copy_from_slice(&[0xff, 0xf1]),
        }
        f
    }

    #[test]
    fn um25c_scales_are_1_mv_and_0_1_ma() {
        // 5.123 V, 0.4567 A (UM25C: 1 mV, 0.1 mA counts), 2.339 W in the power field.
        let f = frame(Model::Um25c, 5123, 4567, 2339, 3);
        let r = decode(&f).unwrap();
        assert_eq!(r.model, Model::Um25c);
        assert!((r.volts - 5.123).abs() < 1e-12, "{}", r.volts);
        assert!((r.amps - 0.4567).abs() < 1e-12, "{}", r.amps);
        assert!((r.watts() - 5.123 * 0.4567).abs() < 1e-12);
        assert!((r.meter_watts - 2.339).abs() < 1e-12);
        assert_eq!(r.temp_c, 31.0);
        assert_eq!((r.group, r.group_mah, r.group_mwh), (3, 103, 1003));
        assert!((r.counter_j() - 1003.0 * 3.6).abs() < 1e-9);
        let s = r.sample(2.5);
        assert_eq!((s.t_s, s.volts, s.amps), (2.5, Some(r.volts), Some(r.amps)));
    }

    #[test]
    fn um24c_and_um34c_scales_are_10_mv_and_1_ma() {
        for m in [Model::Um24c, Model::Um34c] {
            let r = decode(&frame(m, 512, 457, 2339, 0)).unwrap();
            assert_eq!(r.model, m);
            assert!((r.volts - 5.12).abs() < 1e-12, "{m:?} {}", r.volts);
            assert!((r.amps - 0.457).abs() < 1e-12, "{m:?} {}", r.amps);
            assert_eq!((r.group_mah, r.group_mwh), (100, 1000));
        }
        assert!((Model::Um25c.resolution_w(5.0, 1.0) - (5.0 * 1e-4 + 1e-3)).abs() < 1e-15);
    }

    #[test]
    fn encode_is_decodes_inverse() {
        let r = decode(&frame(Model::Um34c, 512, 457, 2339, 7)).unwrap();
        assert_eq!(decode(&encode(&r)).unwrap(), r);
        let r = decode(&frame(Model::Um25c, 5123, 4567, 2339, 2)).unwrap();
        assert_eq!(decode(&encode(&r)).unwrap(), r);
    }

    #[test]
    fn damaged_frames_are_refused_by_name() {
        let mut f = frame(Model::Um25c, 5000, 1000, 500, 0);
        f[129] = 0xf2;
        let e = decode(&f).unwrap_err().to_string();
        assert!(
            e.contains("ends in 0xfff2, not the end marker 0xfff1"),
            "{e}"
        );
        let mut f = frame(Model::Um34c, 500, 100, 500, 0);
        f[3] ^= 1; // position 3 is in the checksum
        let e = decode(&f).unwrap_err().to_string();
        assert!(e.contains("checksum"), "{e}");
        let e = decode(&[0x12, 0x34, 0]).unwrap_err().to_string();
        assert!(e.contains("model id 0x1234"), "{e}");
        let f = frame(Model::Um24c, 500, 100, 500, 0);
        let e = decode(&f[..129]).unwrap_err().to_string();
        assert!(e.contains("130 bytes; 129 came"), "{e}");
        let e = decode(&frame(Model::Um24c, 500, 100, 500, 10))
            .unwrap_err()
            .to_string();
        assert!(e.contains("group is 10"), "{e}");
    }

    #[test]
    fn sync_finds_the_model_id_after_noise() {
        let f = frame(Model::Um25c, 5000, 1000, 500, 0);
        let mut buf = vec![0x00, 0x55, 0xaa];
        buf.extend_from_slice(&f);
        assert_eq!(sync(&buf), Some(3));
        assert_eq!(decode(&buf[3..3 + FRAME_LEN]).unwrap().volts, 5.0);
        assert_eq!(sync(&[0, 1, 2]), None);
    }

    #[test]
    fn hostile_bytes_never_panic() {
        let mut n = Noise(0x5eed);
        for len in [0, 1, 2, 3, 64, 129, 130, 131, 500] {
            for _ in 0..200 {
                let mut b = n.bytes(len);
                if len >= 2 && n.next().is_multiple_of(2) {
                    b[0..2].copy_from_slice(&Model::Um34c.id().to_be_bytes());
                }
                let _ = decode(&b);
                let _ = sync(&b);
            }
        }
        let f = frame(Model::Um25c, 5000, 1000, 500, 0);
        for cut in 0..FRAME_LEN {
            assert!(decode(&f[..cut]).is_err());
        }
    }
}
