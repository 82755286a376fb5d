//! A power trace recorded by another tool, as CSV: one header line naming the columns,
//! then one reading per line.
//!
//! Accepted headers (names are matched after trimming spaces and are case-sensitive; the
//! columns may come in any order, since each is known by its name, never its place):
//! `time_s,watts` or `time_s,volts,amps` (so also `watts,time_s`, `time_s, amps, volts`).
//! Not accepted: other names (a `time` or `ms` column's unit is a guess), extra columns
//! (a typo would go unseen), `watts` together with `volts`/`amps` (two powers that may
//! disagree). A UTF-8 byte-order mark and CRLF line ends are accepted; blank lines are
//! skipped; no quoting (no field needs it).
//!
//! Times are seconds on any clock with any offset (the trace's clock is
//! [`crate::Clock::Own`]: aligned by the sync patterns) and must increase strictly.
//! Watts must be finite and not negative; volts and amps too.

use crate::{Clock, Sample, Trace, MAX_SAMPLES};

/// The largest CSV file read, bytes: 256 MiB ([`MAX_SAMPLES`] rows of up to 64 bytes).
pub const MAX_FILE_BYTES: u64 = 64 * MAX_SAMPLES as u64;

/// Why a CSV trace was refused: where, what, and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}{}: {what}; {fix}", column.map(|c| format!(", column {c}")).unwrap_or_default())]
pub struct CsvError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (field), when one field is at fault.
    pub column: Option<usize>,
    /// What is wrong.
    pub what: String,
    /// What to do about it.
    pub fix: String,
}

fn err(line: usize, column: Option<usize>, what: String, fix: &str) -> CsvError {
    CsvError {
        line,
        column,
        what,
        fix: fix.to_owned(),
    }
}

#[derive(Clone, Copy)]
enum Layout {
    /// Columns of time and watts.
    Watts { t: usize, w: usize },
    /// Columns of time, volts and amps.
    VoltsAmps { t: usize, v: usize, a: usize },
}

const HEADER_FIX: &str =
    "the first line must name the columns: time_s,watts or time_s,volts,amps (any order)";

fn layout(header: &str) -> Result<(Layout, usize), CsvError> {
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    let col = |name: &str| -> Result<Option<usize>, CsvError> {
        let mut found = names.iter().enumerate().filter(|(_, n)| **n == name);
        let first = found.next().map(|(i, _)| i);
        if let Some((i, _)) = found.next() {
            return Err(err(
                1,
                Some(i + 1),
                format!("`{name}` is named twice"),
                HEADER_FIX,
            ));
        }
        Ok(first)
    };
    let (t, w, v, a) = (col("time_s")?, col("watts")?, col("volts")?, col("amps")?);
    for (i, n) in names.iter().enumerate() {
        if !["time_s", "watts", "volts", "amps"].contains(n) {
            let shown: String = n.chars().take(40).collect();
            return Err(err(
                1,
                Some(i + 1),
                format!("column `{shown}` is none of time_s, watts, volts, amps"),
                HEADER_FIX,
            ));
        }
    }
    let Some(t) = t else {
        return Err(err(1, None, "no `time_s` column".into(), HEADER_FIX));
    };
    let l = match (w, v, a) {
        (Some(w), None, None) => Layout::Watts { t, w },
        (None, Some(v), Some(a)) => Layout::VoltsAmps { t, v, a },
        (Some(_), _, _) => {
            return Err(err(
                1,
                None,
                "both `watts` and `volts`/`amps`".into(),
                "keep either watts or volts and amps, not both (they could disagree)",
            ))
        }
        _ => {
            return Err(err(
                1,
                None,
                "no `watts`, nor both `volts` and `amps`".into(),
                HEADER_FIX,
            ))
        }
    };
    Ok((l, names.len()))
}

fn field(
    fields: &[&str],
    i: usize,
    name: &str,
    line: usize,
    nonneg: bool,
) -> Result<f64, CsvError> {
    let text = fields[i].trim();
    let shown: String = text.chars().take(40).collect();
    let x: f64 = text.parse().map_err(|_| {
        err(
            line,
            Some(i + 1),
            format!("{name} `{shown}` is not a number"),
            "write a decimal number such as 1.25 (a dot, no unit)",
        )
    })?;
    if !x.is_finite() {
        return Err(err(
            line,
            Some(i + 1),
            format!("{name} is {shown}"),
            "every value must be a finite number; drop the row",
        ));
    }
    if nonneg && x < 0.0 {
        return Err(err(
            line,
            Some(i + 1),
            format!("{name} is negative ({shown})"),
            "a power trace has no negative readings: check the meter's wiring or the column",
        ));
    }
    Ok(x)
}

/// The samples of a CSV trace, in file order.
///
/// # Errors
/// A bad header (said with the headers accepted), a row with the wrong number of fields,
/// a field not a number, a non-finite or negative reading, a time not after the one
/// before, no rows, or more than [`MAX_SAMPLES`] rows: each with its line and column.
pub fn parse(text: &str) -> Result<Vec<Sample>, CsvError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let Some((_, header)) = lines.next() else {
        return Err(err(1, None, "the file is empty".into(), HEADER_FIX));
    };
    let (layout, width) = layout(header)?;
    let mut out: Vec<Sample> = Vec::new();
    let mut last_t: Option<f64> = None;
    for (line, l) in lines {
        if l.trim().is_empty() {
            continue;
        }
        if out.len() == MAX_SAMPLES {
            return Err(err(
                line,
                None,
                format!("more than {MAX_SAMPLES} readings"),
                "split the trace, or keep every n-th row",
            ));
        }
        let fields: Vec<&str> = l.splitn(width + 1, ',').collect();
        if fields.len() != width {
            return Err(err(
                line,
                None,
                format!(
                    "{} field(s), the header names {width}",
                    fields.len().min(width + 1)
                ),
                "every row needs one value per column, separated by commas",
            ));
        }
        let s = match layout {
            Layout::Watts { t, w } => Sample::watts(
                field(&fields, t, "time_s", line, false)?,
                field(&fields, w, "watts", line, true)?,
            ),
            Layout::VoltsAmps { t, v, a } => Sample::volts_amps(
                field(&fields, t, "time_s", line, false)?,
                field(&fields, v, "volts", line, true)?,
                field(&fields, a, "amps", line, true)?,
            ),
        };
        if !s.watts.is_finite() {
            return Err(err(
                line,
                None,
                "volts × amps overflows".into(),
                "check the units of the volts and amps columns",
            ));
        }
        if let Some(prev) = last_t {
            if s.t_s <= prev {
                let col = match layout {
                    Layout::Watts { t, .. } | Layout::VoltsAmps { t, .. } => t + 1,
                };
                return Err(err(
                    line,
                    Some(col),
                    format!("time_s {} is not after the row before's {prev}", s.t_s),
                    "rows must be in time order with no repeated time; sort the file",
                ));
            }
        }
        last_t = Some(s.t_s);
        out.push(s);
    }
    if out.is_empty() {
        return Err(err(
            2,
            None,
            "no readings after the header".into(),
            "the file needs at least one row",
        ));
    }
    Ok(out)
}

/// A whole [`Trace`] from a CSV file's text: clock [`Clock::Own`]; `period_s` the median
/// time between rows (0 for one row); `resolution_w` the smallest non-zero difference
/// between two rows' watts (the file does not say its meter's step; 0 when all equal).
///
/// # Errors
/// As [`parse`].
pub fn trace(meter: &str, text: &str) -> Result<Trace, CsvError> {
    let samples = parse(text)?;
    let mut gaps: Vec<f64> = samples.windows(2).map(|w| w[1].t_s - w[0].t_s).collect();
    gaps.sort_by(f64::total_cmp);
    let period_s = gaps.get(gaps.len() / 2).copied().unwrap_or(0.0);
    let resolution_w = samples
        .windows(2)
        .map(|w| (w[1].watts - w[0].watts).abs())
        .filter(|d| *d > 0.0)
        .fold(f64::INFINITY, f64::min);
    Ok(Trace {
        meter: meter.to_owned(),
        clock: Clock::Own,
        emulated: false,
        resolution_w: if resolution_w.is_finite() {
            resolution_w
        } else {
            0.0
        },
        period_s,
        position: None,
        samples,
        counter_j: None,
        console: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::noise::Noise;

    #[test]
    fn watts_and_volts_amps_files_in_any_column_order() {
        let s = parse("time_s,watts\n100.0,2.5\n100.5,3.25\n").unwrap();
        assert_eq!(
            s,
            vec![Sample::watts(100.0, 2.5), Sample::watts(100.5, 3.25)]
        );
        let s = parse("\u{feff}time_s, volts, amps\r\n-1.5, 5.1, 0.5\r\n\r\n-1.0,5.0,0.25\r\n")
            .unwrap();
        assert_eq!(s[0], Sample::volts_amps(-1.5, 5.1, 0.5));
        assert!((s[0].watts - 2.55).abs() < 1e-12);
        assert_eq!(s[1].t_s, -1.0);
        let s = parse("amps,time_s,volts\n0.5,7,5\n").unwrap();
        assert_eq!(s, vec![Sample::volts_amps(7.0, 5.0, 0.5)]);
        let t = trace("csv run7.csv", "watts,time_s\n2,0\n2.5,1\n2.5,2\n4,3.5\n").unwrap();
        assert_eq!(
            (t.clock, t.period_s, t.resolution_w),
            (Clock::Own, 1.0, 0.5)
        );
        assert_eq!(t.samples.len(), 4);
    }

    fn e(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn errors_name_the_line_column_and_fix() {
        assert_eq!(
            e("time,watts\n0,1\n"),
            "line 1, column 1: column `time` is none of time_s, watts, volts, amps; the first \
             line must name the columns: time_s,watts or time_s,volts,amps (any order)"
        );
        assert!(e("time_s,watts,volts,amps\n").contains("both `watts` and"));
        assert!(e("time_s,volts\n").contains("no `watts`, nor both"));
        assert!(e("watts\n").contains("no `time_s` column"));
        assert!(e("time_s,watts,watts\n").contains("line 1, column 3: `watts` is named twice"));
        assert_eq!(
            e("time_s,watts\n0,1\n1,abc\n"),
            "line 3, column 2: watts `abc` is not a number; write a decimal number such as \
             1.25 (a dot, no unit)"
        );
        assert!(e("time_s,watts\n0,-1\n").starts_with("line 2, column 2: watts is negative (-1)"));
        assert!(e("time_s,watts\n0,NaN\n").starts_with("line 2, column 2: watts is NaN"));
        assert!(e("time_s,watts\n0,inf\n").contains("finite"));
        assert!(e("time_s,volts,amps\n0,5,-0.1\n").contains("column 3: amps is negative"));
        assert!(e("time_s,watts\n1,1\n1,2\n")
            .starts_with("line 3, column 1: time_s 1 is not after the row before's 1"));
        assert!(e("time_s,watts\n1,1\n0.5,2\n").contains("sort the file"));
        assert!(e("time_s,watts\n1,1,3\n").starts_with("line 2: 3 field(s), the header names 2"));
        assert!(e("time_s,watts\n1\n").starts_with("line 2: 1 field(s)"));
        assert!(e("time_s,watts\n\n").contains("no readings"));
        assert!(e("").contains("empty"));
        assert!(e("time_s,volts,amps\n0,1e300,1e300\n").contains("overflows"));
    }

    #[test]
    fn hostile_text_never_panics() {
        let mut n = Noise(99);
        let seed = "time_s,volts,amps\n0,5.0,0.5\n0.01,5.0,0.6\n";
        for _ in 0..2000 {
            let mut b = seed.as_bytes().to_vec();
            for _ in 0..(n.next() % 4) {
                let i = (n.next() as usize) % b.len();
                b[i] = n.next() as u8;
            }
            let cut = (n.next() as usize) % (b.len() + 1);
            let text = String::from_utf8_lossy(&b[..cut]);
            let _ = parse(&text);
            let _ = trace("x", &text);
        }
    }
}
