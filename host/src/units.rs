//! How figures print as words, wherever they appear: block sizes (`4 KiB`), byte sizes
//! and caps (`256 MiB`, `1.5 MiB`), durations (`250 ms`, `10 s`, `5 min`) and counts
//! with thousands separators (`12,345`). The one place for these: other modules call
//! it (`devices::human_bytes` is [`size_label`]).

/// Binary units from the largest: (bytes in one, name).
const BINARY_UNITS: [(u64, &str); 5] = [
    (1 << 50, "PiB"),
    (1 << 40, "TiB"),
    (1 << 30, "GiB"),
    (1 << 20, "MiB"),
    (1 << 10, "KiB"),
];

/// The largest binary unit `bytes` is a whole number of: `(count, unit)`.
fn exact_unit(bytes: u64) -> Option<(u64, &'static str)> {
    BINARY_UNITS
        .iter()
        .find(|(size, _)| bytes >= *size && bytes.is_multiple_of(*size))
        .map(|&(size, unit)| (bytes / size, unit))
}

/// A block size as a table row names it: "8 B", "4 KiB", "1 MiB", and "1536 B" (never
/// rounded: rows must tell 1536 from 1024).
pub fn block_size_label(bytes: u64) -> String {
    match exact_unit(bytes) {
        Some((n, unit)) => format!("{n} {unit}"),
        None => format!("{bytes} B"),
    }
}

/// A size in bytes as a person writes it ([`benchboot_plan::units::fmt_bytes`]: the
/// largest binary unit not above it, whole when exact: `256 MiB`, else `1.5 MiB`).
/// `u64::MAX` (no limit) prints as `none`.
pub fn size_label(bytes: u64) -> String {
    if bytes == u64::MAX {
        return "none".into();
    }
    benchboot_plan::units::fmt_bytes(bytes)
}

/// A duration given in milliseconds as a person writes it, exactly
/// ([`benchboot_plan::units::fmt_millis`]: `250 ms`, `1.5 s`, `5 min`, `90 s`).
pub fn duration_label_ms(ms: u64) -> String {
    benchboot_plan::units::fmt_millis(ms)
}

/// A duration given in nanoseconds, as [`duration_label_ms`] (whole milliseconds; a
/// sub-millisecond rest is rounded to the nearest).
pub fn duration_label_ns(ns: u64) -> String {
    duration_label_ms(ns.saturating_add(500_000) / 1_000_000)
}

/// A latency per call given in nanoseconds, to three significant figures in the unit a
/// storage engineer reads it in (fio's clat lines switch the same way): `850 ns`,
/// `12.3 µs`, `812 µs`, `1.20 ms`, `471 ms`, `1.50 s`.
pub fn latency_label(ns: u64) -> String {
    let v = ns as f64;
    let (value, unit) = if ns < 1_000 {
        return format!("{ns} ns");
    } else if ns < 1_000_000 {
        (v / 1e3, "µs")
    } else if ns < 1_000_000_000 {
        (v / 1e6, "ms")
    } else {
        (v / 1e9, "s")
    };
    // Three significant figures; a value that rounds up to 1000 stays in its unit.
    let decimals = if value >= 99.95 {
        0
    } else if value >= 9.995 {
        1
    } else {
        2
    };
    format!("{value:.decimals$} {unit}")
}

/// `12345` → `12,345`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A UTC calendar time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Civil {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

/// `YYYY-MM-DD HH:MM` in UTC of a unix time in seconds (proleptic Gregorian calendar).
pub fn utc(unix_s: i64) -> String {
    let c = civil_utc(unix_s);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}",
        c.year, c.month, c.day, c.hour, c.minute
    )
}

/// `unix_s` (seconds since 1970, UTC) as a calendar date and time.
pub fn civil_utc(unix_s: i64) -> Civil {
    let (days, secs) = (unix_s.div_euclid(86_400), unix_s.rem_euclid(86_400));
    // Days to civil date: H. Hinnant, "chrono-Compatible Low-Level Date Algorithms".
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    Civil {
        year: yoe + era * 400 + i64::from(m <= 2),
        month: m as u32,
        day: d as u32,
        hour: (secs / 3600) as u32,
        minute: (secs % 3600 / 60) as u32,
        second: (secs % 60) as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00");
        assert_eq!(utc(1_700_000_000), "2023-11-14 22:13");
        assert_eq!(utc(-60), "1969-12-31 23:59");
    }

    #[test]
    fn block_size_labels() {
        assert_eq!(block_size_label(8), "8 B");
        assert_eq!(block_size_label(4096), "4 KiB");
        assert_eq!(block_size_label(1 << 20), "1 MiB");
        assert_eq!(block_size_label(1536), "1536 B");
    }

    #[test]
    fn sizes_print_in_the_largest_exact_unit_else_one_decimal() {
        assert_eq!(size_label(0), "0 B");
        assert_eq!(size_label(512), "512 B");
        assert_eq!(size_label(1023), "1023 B");
        assert_eq!(size_label(4096), "4 KiB");
        assert_eq!(size_label(262_144 << 10), "256 MiB");
        assert_eq!(size_label(64 << 20), "64 MiB");
        assert_eq!(size_label(3 << 19), "1.5 MiB");
        assert_eq!(size_label(1536), "1.5 KiB");
        assert_eq!(size_label(256 << 30), "256 GiB");
        assert_eq!(size_label(31_914_983_424), "29.7 GiB");
        assert_eq!(size_label(2 << 40), "2 TiB");
        assert_eq!(size_label(u64::MAX), "none");
    }

    #[test]
    fn durations_print_in_the_unit_a_person_writes() {
        assert_eq!(duration_label_ms(0), "0 ms");
        assert_eq!(duration_label_ms(250), "250 ms");
        assert_eq!(duration_label_ms(1000), "1 s");
        assert_eq!(duration_label_ms(1500), "1.5 s");
        assert_eq!(duration_label_ms(1250), "1.25 s");
        assert_eq!(duration_label_ms(10_000), "10 s");
        assert_eq!(duration_label_ms(60_000), "1 min");
        assert_eq!(duration_label_ms(90_000), "90 s");
        assert_eq!(duration_label_ms(300_000), "5 min");
        assert_eq!(duration_label_ms(7_200_000), "2 h");
        assert_eq!(duration_label_ms(5_400_000), "90 min");
        assert_eq!(duration_label_ns(1_000_000_000), "1 s");
        assert_eq!(duration_label_ns(250_000_000), "250 ms");
        assert_eq!(duration_label_ns(1_499_999), "1 ms");
    }

    #[test]
    fn latencies_print_to_three_figures_in_ns_us_ms_or_s() {
        let labels: Vec<String> = [
            0,
            850,
            999,
            1_000,
            12_345,
            812_400,
            999_999,
            1_200_000,
            471_000_000,
            1_500_000_000,
        ]
        .map(latency_label)
        .to_vec();
        assert_eq!(
            labels,
            [
                "0 ns", "850 ns", "999 ns", "1.00 µs", "12.3 µs", "812 µs", "1000 µs", "1.20 ms",
                "471 ms", "1.50 s"
            ]
        );
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000), "1,000");
        assert_eq!(grouped(12_345_678), "12,345,678");
        assert_eq!(grouped(u64::MAX), "18,446,744,073,709,551,615");
    }
}
