//! The X-Powers AXP20x PMIC's USB input as the kernel's power-supply class shows it:
//! `/sys/class/power_supply/axp20x-usb/voltage_now` (µV) and `current_now` (µA), each a
//! decimal integer and a newline.
//!
//! Source: Linux `drivers/power/supply/axp20x_usb_power.c` (`axp20x_usb_power_get_property`:
//! `POWER_SUPPLY_PROP_VOLTAGE_NOW` and `_CURRENT_NOW` from the VBUS ADC, in µV and µA;
//! the ADC steps 1.7 mV and 0.375 mA, `AXP20X_VBUS_V_...`/`AXP20X_VBUS_I_...` scales in
//! `drivers/iio/adc/axp20x_adc.c`) and the power-supply class ABI
//! (`Documentation/ABI/testing/sysfs-class-power`: `voltage_now` in µV, `current_now` in µA).

use super::DecodeError;
use crate::Sample;

/// One step of the VBUS voltage ADC, V (1.7 mV).
pub const VOLTS_STEP_V: f64 = 1.7e-3;
/// One step of the VBUS current ADC, A (0.375 mA).
pub const AMPS_STEP_A: f64 = 0.375e-3;
/// The longest text either file can hold, bytes: a 20-digit integer, sign and newline.
pub const MAX_TEXT_BYTES: usize = 24;

/// One attribute's text, e.g. `5020000\n`, times 1e-6.
///
/// # Errors
/// Longer than [`MAX_TEXT_BYTES`], or not a decimal integer (the message names `what`).
pub fn micro(text: &str, what: &str) -> Result<f64, DecodeError> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(DecodeError::new(format!(
            "{what}: {} bytes, longer than any integer the kernel writes",
            text.len()
        )));
    }
    let t = text.trim();
    let n: i64 = t.parse().map_err(|_| {
        DecodeError::new(format!(
            "{what} reads `{}`, not a decimal integer: is this a power-supply class file?",
            t.escape_debug()
        ))
    })?;
    Ok(n as f64 * 1e-6)
}

/// A [`Sample`] at `t_s` from the texts of `voltage_now` (µV) and `current_now` (µA).
///
/// # Errors
/// As [`micro`]; a negative voltage or current (the USB input only sinks).
pub fn sample(t_s: f64, voltage_now: &str, current_now: &str) -> Result<Sample, DecodeError> {
    let volts = micro(voltage_now, "voltage_now")?;
    let amps = micro(current_now, "current_now")?;
    if volts < 0.0 || amps < 0.0 {
        return Err(DecodeError::new(format!(
            "the USB input reads {volts} V, {amps} A: a negative value is not an input's"
        )));
    }
    Ok(Sample::volts_amps(t_s, volts, amps))
}

/// The smallest step of V × A at `volts` and `amps`, W.
pub fn resolution_w(volts: f64, amps: f64) -> f64 {
    volts.abs() * AMPS_STEP_A + amps.abs() * VOLTS_STEP_V
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_texts_to_a_sample() {
        // 2953 ADC steps of 1.7 mV = 5.0201 V; 1200 steps of 0.375 mA = 0.45 A.
        let s = sample(3.0, "5020100\n", "450000\n").unwrap();
        assert_eq!(s.t_s, 3.0);
        assert!((s.volts.unwrap() - 5.0201).abs() < 1e-12);
        assert!((s.amps.unwrap() - 0.45).abs() < 1e-12);
        assert!((s.watts - 5.0201 * 0.45).abs() < 1e-12);
        assert!((resolution_w(5.0, 0.5) - (5.0 * 0.375e-3 + 0.5 * 1.7e-3)).abs() < 1e-15);
    }

    #[test]
    fn bad_texts_are_named() {
        let e = sample(0.0, "", "1\n").unwrap_err().to_string();
        assert!(e.starts_with("voltage_now reads ``"), "{e}");
        let e = sample(0.0, "5000000\n", "0x10\n").unwrap_err().to_string();
        assert!(e.starts_with("current_now reads `0x10`"), "{e}");
        assert!(sample(0.0, "5000000\n", "-1\n")
            .unwrap_err()
            .to_string()
            .contains("negative"));
        assert!(micro(&"9".repeat(30), "x")
            .unwrap_err()
            .to_string()
            .contains("longer"));
        assert!(micro("99999999999999999999", "x").is_err()); // past i64
        for b in 0..=255u8 {
            let _ = micro(&String::from_utf8_lossy(&[b, b'1', b]), "x");
        }
    }
}
