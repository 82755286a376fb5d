//! Sizes and durations as a person writes them in a plan file (`"256 MiB"`, `"10 s"`)
//! and as benchboot prints them back: one place for both directions.
//!
//! Sizes are binary (KiB = 2^10 bytes, MiB = 2^20, GiB = 2^30, IEC 80000-13); decimal
//! `KB`/`MB`/`GB` are refused rather than guessed. A bare TOML integer is bytes.
//! Durations always carry a unit: `ms`, `s`, `min`, `h`.

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

/// Why a size, duration or bit rate was refused; each message quotes the text and says
/// what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// A bit rate without a whole number and a unit.
    #[error("\"{0}\": write a whole number and a unit, e.g. \"100 Mbit/s\"")]
    BitrateForm(String),
    /// A bit rate in a unit other than bit/s, kbit/s, Mbit/s, Gbit/s.
    #[error("\"{0}\": the unit must be bit/s, kbit/s, Mbit/s or Gbit/s (network rates are bits, decimal)")]
    BitrateUnit(String),
    /// A bit rate above 2^64 - 1 bit/s.
    #[error("\"{0}\" does not fit in 64 bits")]
    BitrateOverflow(String),
    /// A size without a whole number and one of B, KiB, MiB, GiB.
    #[error("`{0}`: write a whole number and one of B, KiB, MiB, GiB, e.g. \"4 KiB\"")]
    SizeForm(String),
    /// A size in a decimal unit (`MB`): `binary` is the unit meant, 2^`bits` bytes.
    #[error("`{text}`: sizes are binary here; write \"{n} {binary}\" ({binary} = 2^{bits} bytes)")]
    DecimalSize {
        /// The text as written.
        text: String,
        /// Its number.
        n: u64,
        /// `KiB`, `MiB` or `GiB`.
        binary: &'static str,
        /// 10, 20 or 30.
        bits: u32,
    },
    /// A size above 2^64 - 1 bytes.
    #[error("`{0}` does not fit in 64 bits")]
    SizeOverflow(String),
    /// A duration without a whole number and one of ms, s, min, h.
    #[error("`{0}`: write a whole number and one of ms, s, min, h, e.g. \"10 s\"")]
    DurationForm(String),
    /// A duration above 2^64 - 1 ms.
    #[error("`{0}` does not fit in 64 bits of ms")]
    DurationOverflow(String),
}

/// A size in bytes, read from `4096`, `"4 KiB"` or `"1 MiB"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bytes(pub u64);

/// A bit rate in bit/s, read from `"100 Mbit/s"`, `"1 Gbit/s"` or `"500 kbit/s"`
/// (decimal: k = 10^3, M = 10^6, G = 10^9, as network rates are always written).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bitrate(pub u64);

const RATE_UNITS: [(&str, u64); 4] = [
    ("Gbit/s", 1_000_000_000),
    ("Mbit/s", 1_000_000),
    ("kbit/s", 1_000),
    ("bit/s", 1),
];

/// Parses a bit rate: `"100 Mbit/s"`, `"1 Gbit/s"`, `"0 bit/s"`.
///
/// # Errors
/// [`UnitError`]: no unit, bytes per second, overflow.
pub fn parse_bitrate(text: &str) -> Result<u64, UnitError> {
    let Some((n, unit)) = number_and_unit(text) else {
        return Err(UnitError::BitrateForm(text.into()));
    };
    let Some((_, mult)) = RATE_UNITS.iter().find(|(u, _)| *u == unit) else {
        return Err(UnitError::BitrateUnit(text.into()));
    };
    n.checked_mul(*mult)
        .ok_or_else(|| UnitError::BitrateOverflow(text.into()))
}

/// A bit rate the way benchboot prints it: `100 Mbit/s`, `1.5 Gbit/s`, `64 kbit/s`.
pub fn fmt_bitrate(bps: u64) -> String {
    for (unit, mult) in RATE_UNITS {
        if bps >= mult && mult > 1 {
            let v = bps as f64 / mult as f64;
            return if bps.is_multiple_of(mult) {
                format!("{} {unit}", bps / mult)
            } else {
                format!("{v:.1} {unit}")
            };
        }
    }
    format!("{bps} bit/s")
}

impl<'de> Deserialize<'de> for Bitrate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Bitrate;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a bit rate with its unit, such as \"100 Mbit/s\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Bitrate, E> {
                Err(E::custom(format!(
                    "{v}: a bit rate needs its unit, e.g. \"{v} Mbit/s\""
                )))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Bitrate, E> {
                self.visit_i64(v as i64)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Bitrate, E> {
                parse_bitrate(v).map(Bitrate).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A duration in milliseconds, read from `"250 ms"`, `"10 s"`, `"5 min"` or `"1 h"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Millis(pub u64);

const SIZE_UNITS: [(&str, u64); 6] = [
    ("PiB", 1 << 50),
    ("TiB", 1 << 40),
    ("GiB", 1 << 30),
    ("MiB", 1 << 20),
    ("KiB", 1 << 10),
    ("B", 1),
];
const TIME_UNITS: [(&str, u64); 4] = [("h", 3_600_000), ("min", 60_000), ("s", 1_000), ("ms", 1)];

/// Splits `"12 MiB"` / `"12MiB"` into 12 and `MiB`.
fn number_and_unit(text: &str) -> Option<(u64, &str)> {
    let t = text.trim();
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n = t[..end].parse().ok()?;
    Some((n, t[end..].trim()))
}

/// Parses a size: `"512 B"`, `"4 KiB"`, `"64 MiB"`, `"1 GiB"`.
///
/// # Errors
/// [`UnitError`]: decimal units, no unit, overflow.
pub fn parse_bytes(text: &str) -> Result<u64, UnitError> {
    let (n, unit) = number_and_unit(text).ok_or_else(|| UnitError::SizeForm(text.into()))?;
    if let Some(&(_, scale)) = SIZE_UNITS.iter().find(|(u, _)| *u == unit) {
        return n
            .checked_mul(scale)
            .ok_or_else(|| UnitError::SizeOverflow(text.into()));
    }
    let (binary, bits) = match unit {
        "KB" | "kB" | "K" | "k" => ("KiB", 10),
        "MB" | "M" => ("MiB", 20),
        "GB" | "G" => ("GiB", 30),
        _ => return Err(UnitError::SizeForm(text.into())),
    };
    Err(UnitError::DecimalSize {
        text: text.into(),
        n,
        binary,
        bits,
    })
}

/// Parses a duration: `"250 ms"`, `"10 s"`, `"5 min"`, `"1 h"`, to milliseconds.
///
/// # Errors
/// [`UnitError`]: no unit, an unknown unit, overflow.
pub fn parse_millis(text: &str) -> Result<u64, UnitError> {
    let form = || UnitError::DurationForm(text.into());
    let (n, unit) = number_and_unit(text).ok_or_else(form)?;
    let &(_, scale) = TIME_UNITS
        .iter()
        .find(|(u, _)| *u == unit)
        .ok_or_else(form)?;
    n.checked_mul(scale)
        .ok_or_else(|| UnitError::DurationOverflow(text.into()))
}

/// A size as a person writes it, in the largest binary unit not above it: a whole
/// number when exact (`256 MiB`, not `262144 KiB`; `4 KiB`, `512 B`), else one decimal
/// (`1.5 MiB`, `29.7 GiB`, never `31166976 KiB`).
pub fn fmt_bytes(bytes: u64) -> String {
    match SIZE_UNITS
        .iter()
        .find(|(_, scale)| bytes >= *scale && *scale > 1)
    {
        Some(&(unit, scale)) if bytes.is_multiple_of(scale) => format!("{} {unit}", bytes / scale),
        Some(&(unit, scale)) => format!("{:.1} {unit}", bytes as f64 / scale as f64),
        None => format!("{bytes} B"),
    }
}

/// A duration (a cap, a limit) as a person writes it, exactly: `250 ms` below a second,
/// `10 s` / `1.5 s` below a minute, `5 min` / `2 h` when whole, else seconds (`90 s`,
/// `61.5 s`), so no figure is rounded away.
pub fn fmt_millis(ms: u64) -> String {
    const MINUTE: u64 = 60_000;
    const HOUR: u64 = 60 * MINUTE;
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms >= HOUR && ms.is_multiple_of(HOUR) {
        format!("{} h", ms / HOUR)
    } else if ms >= MINUTE && ms.is_multiple_of(MINUTE) {
        format!("{} min", ms / MINUTE)
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        // Thousandths of a second, trailing zeros dropped: 1.5 s, 1.25 s.
        let s = format!("{}.{:03}", ms / 1000, ms % 1000);
        format!("{} s", s.trim_end_matches('0'))
    }
}

/// A long span (an estimate) in at most two units, the smaller rounded down:
/// `1 h 58 min`, `2 min 30 s`, `45 s`, `250 ms`.
pub fn fmt_span_ms(ms: u64) -> String {
    if ms < 60_000 {
        return fmt_millis(ms - ms % 100);
    }
    let (big, small, bu, su) = if ms < 3_600_000 {
        (ms / 60_000, ms % 60_000 / 1_000, "min", "s")
    } else {
        (ms / 3_600_000, ms % 3_600_000 / 60_000, "h", "min")
    };
    if small == 0 {
        format!("{big} {bu}")
    } else {
        format!("{big} {bu} {small} {su}")
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Bytes;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a size: bytes as a whole number, or a string such as \"4 KiB\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Bytes, E> {
                u64::try_from(v)
                    .map(Bytes)
                    .map_err(|_| E::custom(format!("{v} bytes: a size cannot be negative")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Bytes, E> {
                parse_bytes(v).map(Bytes).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Millis {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Millis;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a duration with its unit, such as \"10 s\" or \"250 ms\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Millis, E> {
                Err(E::custom(format!(
                    "{v}: a duration needs its unit, e.g. \"{v} s\" or \"{v} ms\""
                )))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Millis, E> {
                self.visit_i64(v as i64)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Millis, E> {
                parse_millis(v).map(Millis).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_rates_are_decimal_bits_with_a_unit() {
        assert_eq!(parse_bitrate("100 Mbit/s"), Ok(100_000_000));
        assert_eq!(parse_bitrate("1Gbit/s"), Ok(1_000_000_000));
        assert_eq!(parse_bitrate("0 bit/s"), Ok(0));
        assert_eq!(
            parse_bitrate("100"),
            Err(UnitError::BitrateUnit("100".into()))
        );
        assert_eq!(
            parse_bitrate("fast").unwrap_err().to_string(),
            "\"fast\": write a whole number and a unit, e.g. \"100 Mbit/s\""
        );
        assert_eq!(
            parse_bitrate("10 MB/s").unwrap_err().to_string(),
            "\"10 MB/s\": the unit must be bit/s, kbit/s, Mbit/s or Gbit/s (network rates are bits, decimal)"
        );
        assert_eq!(
            parse_bitrate("99999999999 Gbit/s"),
            Err(UnitError::BitrateOverflow("99999999999 Gbit/s".into()))
        );
        assert_eq!(fmt_bitrate(100_000_000), "100 Mbit/s");
        assert_eq!(fmt_bitrate(1_500_000_000), "1.5 Gbit/s");
        assert_eq!(fmt_bitrate(999), "999 bit/s");
    }

    #[test]
    fn sizes_read_and_print_as_written() {
        assert_eq!(parse_bytes("4 KiB"), Ok(4096));
        assert_eq!(parse_bytes("64MiB"), Ok(64 << 20));
        assert_eq!(parse_bytes("8 B"), Ok(8));
        assert_eq!(parse_bytes(" 1 GiB "), Ok(1 << 30));
        assert_eq!(
            parse_bytes("4 MB").unwrap_err().to_string(),
            "`4 MB`: sizes are binary here; write \"4 MiB\" (MiB = 2^20 bytes)"
        );
        assert_eq!(
            parse_bytes("3 k").unwrap_err().to_string(),
            "`3 k`: sizes are binary here; write \"3 KiB\" (KiB = 2^10 bytes)"
        );
        assert_eq!(
            parse_bytes("MiB").unwrap_err().to_string(),
            "`MiB`: write a whole number and one of B, KiB, MiB, GiB, e.g. \"4 KiB\""
        );
        assert_eq!(
            parse_bytes("4 furlongs"),
            Err(UnitError::SizeForm("4 furlongs".into()))
        );
        assert_eq!(
            parse_bytes("99999999999 GiB"),
            Err(UnitError::SizeOverflow("99999999999 GiB".into()))
        );
        assert_eq!(fmt_bytes(256 << 20), "256 MiB");
        assert_eq!(fmt_bytes(262_144 << 10), "256 MiB");
        assert_eq!(fmt_bytes(4096), "4 KiB");
        assert_eq!(fmt_bytes(512), "512 B");
        assert_eq!(fmt_bytes(0), "0 B");
        assert_eq!(fmt_bytes((3 << 19) + 1), "1.5 MiB");
        assert_eq!(fmt_bytes(1536), "1.5 KiB");
        assert_eq!(fmt_bytes(1536 << 10), "1.5 MiB");
        assert_eq!(fmt_bytes(31_166_976 << 10), "29.7 GiB");
    }

    #[test]
    fn durations_read_and_print_as_written() {
        assert_eq!(parse_millis("250 ms"), Ok(250));
        assert_eq!(parse_millis("10 s"), Ok(10_000));
        assert_eq!(parse_millis("5 min"), Ok(300_000));
        assert_eq!(parse_millis("1h"), Ok(3_600_000));
        assert_eq!(
            parse_millis("10").unwrap_err().to_string(),
            "`10`: write a whole number and one of ms, s, min, h, e.g. \"10 s\""
        );
        assert_eq!(
            parse_millis("10 days"),
            Err(UnitError::DurationForm("10 days".into()))
        );
        assert_eq!(
            parse_millis("99999999999999999 h"),
            Err(UnitError::DurationOverflow("99999999999999999 h".into()))
        );
        assert_eq!(fmt_millis(250), "250 ms");
        assert_eq!(fmt_millis(10_000), "10 s");
        assert_eq!(fmt_millis(2_500), "2.5 s");
        assert_eq!(fmt_millis(300_000), "5 min");
        assert_eq!(fmt_millis(90_000), "90 s");
        assert_eq!(fmt_millis(1_250), "1.25 s");
        assert_eq!(fmt_span_ms(150_000), "2 min 30 s");
        assert_eq!(fmt_span_ms(7_080_000), "1 h 58 min");
        assert_eq!(fmt_span_ms(10_800_000), "3 h");
        assert_eq!(fmt_span_ms(45_050), "45 s");
    }
}
