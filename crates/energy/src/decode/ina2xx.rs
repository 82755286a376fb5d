//! TI INA219 and INA226 current/power monitors: register words (as read over I2C,
//! big-endian, already assembled into a `u16`) to V, A, W.
//!
//! Sources: TI SBOS448 (INA219 datasheet), "Register Maps": shunt voltage register 01h,
//! signed, LSB 10 µV (sign-extended for every PGA range); bus voltage register 02h, BD12..BD0
//! in bits 15..3, LSB 4 mV, CNVR bit 1, OVF bit 0; "Programming the INA219": calibration
//! `Cal = trunc(0.04096 / (Current_LSB × R_SHUNT))` (Equation 1, bit 0 unused),
//! `Power_LSB = 20 × Current_LSB`, current register = shunt × Cal / 4096. TI SBOS547
//! (INA226 datasheet), "Register Maps" and "Programming": shunt register 01h signed,
//! LSB 2.5 µV; bus register 02h, bits 14..0, LSB 1.25 mV; calibration
//! `CAL = 0.00512 / (Current_LSB × R_SHUNT)` (15 bits), `Power_LSB = 25 × Current_LSB`,
//! current register = shunt × CAL / 2048; manufacturer id register FEh reads 5449h
//! ("TI"), die id FFh 2260h. In both, `Current_LSB` is chosen as the largest expected
//! current / 2^15.
//!
//! [`Chip::read`] computes the current from the shunt voltage and the resistance the
//! caller gives, so it needs no calibration written; the current and power registers are
//! decoded by [`Chip::current_register`] and [`Chip::power_register`] for callers that
//! program the chip.

use super::DecodeError;
use crate::Sample;

/// Register addresses (both chips).
pub mod reg {
    /// Configuration.
    pub const CONFIG: u8 = 0x00;
    /// Shunt voltage.
    pub const SHUNT: u8 = 0x01;
    /// Bus voltage.
    pub const BUS: u8 = 0x02;
    /// Power (after calibration).
    pub const POWER: u8 = 0x03;
    /// Current (after calibration).
    pub const CURRENT: u8 = 0x04;
    /// Calibration.
    pub const CALIBRATION: u8 = 0x05;
    /// INA226 only: manufacturer id, reads [`super::INA226_MANUFACTURER_ID`].
    pub const MANUFACTURER_ID: u8 = 0xfe;
    /// INA226 only: die id, reads [`super::INA226_DIE_ID`].
    pub const DIE_ID: u8 = 0xff;
}

/// The INA226's manufacturer id register value, "TI" in ASCII (SBOS547).
pub const INA226_MANUFACTURER_ID: u16 = 0x5449;
/// The INA226's die id register value (SBOS547).
pub const INA226_DIE_ID: u16 = 0x2260;

/// Which chip the words come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chip {
    Ina219,
    Ina226,
}

/// One reading.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// Bus voltage, V.
    pub volts: f64,
    /// Shunt voltage, V (signed).
    pub shunt_volts: f64,
    /// Current, A: shunt voltage / shunt resistance (signed).
    pub amps: f64,
    /// V × A, W.
    pub watts: f64,
}

impl Reading {
    /// As a [`Sample`] at `t_s` (the board's clock when PID 1 reads the chip).
    pub fn sample(&self, t_s: f64) -> Sample {
        Sample::volts_amps(t_s, self.volts, self.amps)
    }
}

impl Chip {
    /// One count of the shunt voltage register, V: 10 µV (INA219), 2.5 µV (INA226).
    pub fn shunt_lsb_v(self) -> f64 {
        match self {
            Chip::Ina219 => 10e-6,
            Chip::Ina226 => 2.5e-6,
        }
    }

    /// One count of the bus voltage, V: 4 mV (INA219), 1.25 mV (INA226).
    pub fn bus_lsb_v(self) -> f64 {
        match self {
            Chip::Ina219 => 4e-3,
            Chip::Ina226 => 1.25e-3,
        }
    }

    /// The bus voltage register word to V.
    ///
    /// # Errors
    /// INA219: the OVF bit (bit 0) is set: the power or current calculation overflowed,
    /// so the chip's range setting is too small. INA226: bit 15 is set (it always reads 0;
    /// a set bit means the word is not the bus register).
    pub fn bus_volts(self, word: u16) -> Result<f64, DecodeError> {
        match self {
            Chip::Ina219 => {
                if word & 1 != 0 {
                    return Err(DecodeError::new(
                        "INA219 bus voltage register 0x02 has OVF (bit 0) set: the current or \
                         power overflowed; raise the PGA range (configuration register) or \
                         use a larger Current_LSB",
                    ));
                }
                Ok(f64::from(word >> 3) * self.bus_lsb_v())
            }
            Chip::Ina226 => {
                if word & 0x8000 != 0 {
                    return Err(DecodeError::new(format!(
                        "INA226 bus voltage register 0x02 reads 0x{word:04x}: bit 15 always \
                         reads 0, so this is not the bus register (wrong address or chip?)"
                    )));
                }
                Ok(f64::from(word) * self.bus_lsb_v())
            }
        }
    }

    /// The shunt voltage register word to V (two's complement).
    pub fn shunt_volts(self, word: u16) -> f64 {
        f64::from(word as i16) * self.shunt_lsb_v()
    }

    /// Bus V, shunt V, A and W from the bus and shunt registers and the shunt, Ω.
    ///
    /// # Errors
    /// As [`Chip::bus_volts`]; a shunt resistance that is not a finite positive number.
    pub fn read(
        self,
        shunt_word: u16,
        bus_word: u16,
        shunt_ohm: f64,
    ) -> Result<Reading, DecodeError> {
        check_shunt(shunt_ohm)?;
        let volts = self.bus_volts(bus_word)?;
        let shunt_volts = self.shunt_volts(shunt_word);
        let amps = shunt_volts / shunt_ohm;
        Ok(Reading {
            volts,
            shunt_volts,
            amps,
            watts: volts * amps,
        })
    }

    /// The calibration word to write to register 05h for `current_lsb_a` and
    /// `shunt_ohm`: INA219 `trunc(0.04096 / (Current_LSB × R))` with bit 0 cleared,
    /// INA226 `trunc(0.00512 / (Current_LSB × R))`.
    ///
    /// # Errors
    /// Non-positive or non-finite inputs, or a result that does not fit the register
    /// (INA219 1..=0xFFFE, INA226 1..=0x7FFF): choose a larger Current_LSB.
    pub fn calibration(self, current_lsb_a: f64, shunt_ohm: f64) -> Result<u16, DecodeError> {
        check_shunt(shunt_ohm)?;
        if !(current_lsb_a.is_finite() && current_lsb_a > 0.0) {
            return Err(DecodeError::new(format!(
                "Current_LSB {current_lsb_a} A is not a positive number"
            )));
        }
        let (k, max) = match self {
            Chip::Ina219 => (0.04096, 0xfffe_u32),
            Chip::Ina226 => (0.00512, 0x7fff_u32),
        };
        let cal = (k / (current_lsb_a * shunt_ohm)).trunc();
        if !(1.0..=f64::from(max)).contains(&cal) {
            return Err(DecodeError::new(format!(
                "{self:?}: calibration for Current_LSB {current_lsb_a} A and {shunt_ohm} Ω is \
                 {cal}, outside 1..={max}: choose Current_LSB near the largest expected \
                 current / 32768"
            )));
        }
        let cal = cal as u16;
        Ok(match self {
            Chip::Ina219 => cal & !1,
            Chip::Ina226 => cal,
        })
    }

    /// One count of the power register, W: 20 × Current_LSB (INA219), 25 × (INA226).
    pub fn power_lsb_w(self, current_lsb_a: f64) -> f64 {
        match self {
            Chip::Ina219 => 20.0 * current_lsb_a,
            Chip::Ina226 => 25.0 * current_lsb_a,
        }
    }

    /// The current register word (signed) to A, given the Current_LSB calibrated for.
    pub fn current_register(self, word: u16, current_lsb_a: f64) -> f64 {
        f64::from(word as i16) * current_lsb_a
    }

    /// The power register word to W, given the Current_LSB calibrated for.
    pub fn power_register(self, word: u16, current_lsb_a: f64) -> f64 {
        f64::from(word) * self.power_lsb_w(current_lsb_a)
    }

    /// The smallest step of V × A at `volts` and `amps` with `shunt_ohm`, W: one shunt
    /// count (as current) times the volts plus one bus count times the amps.
    pub fn resolution_w(self, volts: f64, amps: f64, shunt_ohm: f64) -> f64 {
        volts.abs() * self.shunt_lsb_v() / shunt_ohm + amps.abs() * self.bus_lsb_v()
    }
}

fn check_shunt(shunt_ohm: f64) -> Result<(), DecodeError> {
    if shunt_ohm.is_finite() && shunt_ohm > 0.0 {
        Ok(())
    } else {
        Err(DecodeError::new(format!(
            "the shunt resistance {shunt_ohm} Ω is not a positive number (a typical board's \
             is 0.1 Ω for the INA219, 0.002 to 0.1 Ω for the INA226)"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn ina219_words_to_volts_amps_watts() {
        // 5.0 V = 1250 counts of 4 mV in bits 15..3, CNVR (bit 1) set: 1250 << 3 | 2.
        let bus = (1250u16 << 3) | 0b10;
        // 0x0FA0 = 4000 counts of 10 µV = 40 mV across 0.1 Ω = 0.4 A.
        let r = Chip::Ina219.read(0x0fa0, bus, 0.1).unwrap();
        assert!(close(r.volts, 5.0), "{}", r.volts);
        assert!(close(r.shunt_volts, 0.04));
        assert!(close(r.amps, 0.4));
        assert!(close(r.watts, 2.0));
        // Negative shunt voltage: 0xF060 = -4000.
        assert!(close(Chip::Ina219.shunt_volts(0xf060), -0.04));
        let e = Chip::Ina219.bus_volts(bus | 1).unwrap_err().to_string();
        assert!(e.contains("OVF"), "{e}");
    }

    #[test]
    fn ina219_calibration_of_the_datasheet_example() {
        // SBOS448 "Programming the INA219" example: R_SHUNT 0.1 Ω, Current_LSB 100 µA:
        // Cal = trunc(0.04096 / (0.0001 × 0.1)) = 4096, Power_LSB = 2 mW.
        assert_eq!(Chip::Ina219.calibration(100e-6, 0.1).unwrap(), 4096);
        assert!(close(Chip::Ina219.power_lsb_w(100e-6), 0.002));
        // With that calibration the current register reads shunt × 4096 / 4096 = 4000
        // for 40 mV: 4000 × 100 µA = 0.4 A; power = 0.4 A × 5 V / 2 mW = 1000 counts.
        assert!(close(Chip::Ina219.current_register(4000, 100e-6), 0.4));
        assert!(close(Chip::Ina219.power_register(1000, 100e-6), 2.0));
        // Bit 0 of the INA219's calibration is cleared: 0.04096 / (61e-6 × 0.1) = 6714.7.
        assert_eq!(Chip::Ina219.calibration(61e-6, 0.1).unwrap(), 6714);
        assert_eq!(Chip::Ina219.calibration(60.9e-6, 0.1).unwrap(), 6724);
        assert!(Chip::Ina219.calibration(1e-9, 0.1).is_err());
        assert!(Chip::Ina219.calibration(1e-4, 0.0).is_err());
        assert!(Chip::Ina219.calibration(f64::NAN, 0.1).is_err());
    }

    #[test]
    fn ina226_words_calibration_and_resolution() {
        // 12.0 V = 9600 counts of 1.25 mV; 0x1000 = 4096 × 2.5 µV = 10.24 mV over 2 mΩ.
        let r = Chip::Ina226.read(0x1000, 9600, 0.002).unwrap();
        assert!(close(r.volts, 12.0));
        assert!(close(r.amps, 5.12));
        assert!(close(r.watts, 12.0 * 5.12));
        assert!(Chip::Ina226.bus_volts(0x8000).is_err());
        // CAL = 0.00512 / (1 mA × 2 mΩ) = 2560; the current register then reads
        // shunt × 2560 / 2048 = 5120 counts of 1 mA = 5.12 A; Power_LSB 25 mW.
        assert_eq!(Chip::Ina226.calibration(1e-3, 0.002).unwrap(), 2560);
        assert!(close(Chip::Ina226.current_register(5120, 1e-3), 5.12));
        assert!(close(Chip::Ina226.power_lsb_w(1e-3), 0.025));
        assert!(Chip::Ina226.calibration(1e-6, 0.002).is_err()); // 2 560 000 > 0x7FFF
                                                                 // 5 V, 1 A, 0.1 Ω: 5 × 25 µA + 1 × 1.25 mV = 1.375 mW.
        assert!(close(Chip::Ina226.resolution_w(5.0, 1.0, 0.1), 0.001375));
    }

    #[test]
    fn every_word_decodes_without_panic() {
        for w in 0..=u16::MAX {
            for c in [Chip::Ina219, Chip::Ina226] {
                if let Ok(r) = c.read(w, w, 0.1) {
                    assert!(r.volts.is_finite() && r.amps.is_finite() && r.watts.is_finite());
                }
            }
        }
    }
}
