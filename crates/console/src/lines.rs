//! The text of each protocol line (without [`crate::PREFIX`]) and its parser.
//!
//! Ids are dotted step names; on the console whitespace in them becomes `_` and they are
//! cut to [`MAX_CASE_ID_BYTES`] at a character boundary. Values are printed with three
//! decimals (`12.346`): what LAVA and the host read back.

use crate::figures::Figure;
use crate::verdicts::{Outcome, Verdict};
use crate::MAX_CASE_ID_BYTES;

/// `id` as the console carries it: whitespace replaced by `_`, at most
/// [`MAX_CASE_ID_BYTES`] bytes (cut at a character boundary: a label may hold
/// multi-byte UTF-8).
pub fn console_id(id: &str) -> String {
    let mut id: String = id.replace(char::is_whitespace, "_");
    let mut end = id.len().min(MAX_CASE_ID_BYTES);
    while !id.is_char_boundary(end) {
        end -= 1;
    }
    id.truncate(end);
    id
}

/// `value` as printed: three decimals.
pub fn value_text(value: f64) -> String {
    format!("{value:.3}")
}

/// `case=<id> value=<number> units=<unit>`; `None` for a value that is not finite (no
/// figure can carry it: the measurement is in the document, the line is left out).
/// Units with whitespace get `_` (the line is split on spaces).
pub fn figure(f: &Figure) -> Option<String> {
    f.value.is_finite().then(|| {
        let units = if f.units.is_empty() {
            "-".to_owned()
        } else {
            f.units.replace(char::is_whitespace, "_")
        };
        format!(
            "case={} value={} units={units}",
            console_id(&f.id),
            value_text(f.value)
        )
    })
}

/// `verdict=<id> result=<pass|fail|skip>`, then ` why=<text>` for a reason (one line:
/// line breaks become spaces).
pub fn verdict(v: &Verdict) -> String {
    let mut line = format!("verdict={} result={}", console_id(&v.id), v.outcome.name());
    if let Some(why) = &v.why {
        line.push_str(" why=");
        line.push_str(&why.replace(['\r', '\n'], " "));
    }
    line
}

/// The line after the last figure of run `run_id`: the first LAVA monitor's end.
pub fn figures_end(run_id: &str, count: usize) -> String {
    format!("figures end run={run_id} count={count}")
}

/// The line before the verdicts: the second LAVA monitor's start.
pub fn verdicts_begin(run_id: &str) -> String {
    format!("verdicts begin run={run_id}")
}

/// The line after the verdicts, with their counts: the second monitor's end.
pub fn verdicts_end(run_id: &str, verdicts: &[Verdict]) -> String {
    let n = |o: Outcome| verdicts.iter().filter(|v| v.outcome == o).count();
    format!(
        "verdicts end run={run_id} pass={} fail={} skip={}",
        n(Outcome::Pass),
        n(Outcome::Fail),
        n(Outcome::Skip)
    )
}

/// What a figure line says: (id, value as printed, units).
#[derive(Debug, Clone, PartialEq)]
pub struct FigureLine {
    pub id: String,
    pub value: f64,
    pub units: String,
}

/// The protocol text of a console line: what follows `benchboot: ` (anywhere in the
/// line: a capture may put a time stamp or a tag first), without a trailing `\r`.
pub fn protocol_text(line: &str) -> Option<&str> {
    let at = line.find(crate::PREFIX)?;
    Some(
        line[at + crate::PREFIX.len()..]
            .trim_start_matches(' ')
            .trim_end_matches(['\r', '\n']),
    )
}

/// The figure on `text` (a line's [`protocol_text`]), if it is one.
pub fn parse_figure(text: &str) -> Option<FigureLine> {
    let rest = text.strip_prefix("case=")?;
    let (id, rest) = rest.split_once(" value=")?;
    let (value, units) = rest.split_once(" units=")?;
    Some(FigureLine {
        id: id.to_owned(),
        value: value.parse().ok()?,
        units: units.split_whitespace().next()?.to_owned(),
    })
}

/// The verdict on `text`, if it is one: (id, outcome).
pub fn parse_verdict(text: &str) -> Option<(String, Outcome)> {
    let rest = text.strip_prefix("verdict=")?;
    let (id, rest) = rest.split_once(" result=")?;
    let outcome = rest.split_whitespace().next()?;
    Some((id.to_owned(), Outcome::from_name(outcome)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(id: &str, value: f64, units: &str) -> Figure {
        Figure::bare(crate::figures::Metric::Storage, id, value, units)
    }

    #[test]
    fn figure_line_shape_and_round_trip() {
        let line = figure(&f("storage.ext4.sync.bs4096.r0.write", 12.34567, "MiB/s")).unwrap();
        assert_eq!(
            line,
            "case=storage.ext4.sync.bs4096.r0.write value=12.346 units=MiB/s"
        );
        let back = parse_figure(&line).unwrap();
        assert_eq!(
            back,
            FigureLine {
                id: "storage.ext4.sync.bs4096.r0.write".into(),
                value: 12.346,
                units: "MiB/s".into()
            }
        );
        // A negative value (a signal, dBm), no units, units with a space.
        assert_eq!(
            figure(&f("network.wifi.signal", -41.0, "")).unwrap(),
            "case=network.wifi.signal value=-41.000 units=-"
        );
        assert_eq!(
            figure(&f("command.x.score", 1.0, "runs per s")).unwrap(),
            "case=command.x.score value=1.000 units=runs_per_s"
        );
        assert_eq!(figure(&f("a", f64::NAN, "ms")), None);
        assert_eq!(figure(&f("a", f64::INFINITY, "ms")), None);
    }

    #[test]
    fn case_id_has_no_spaces_and_is_bounded() {
        let long = "a b".repeat(60);
        let line = figure(&f(&long, 0.0, "MiB/s")).unwrap();
        let id = line.split(' ').next().unwrap();
        assert_eq!(id.len(), "case=".len() + 100);
        assert!(!id.contains(' '));
    }

    #[test]
    fn case_id_is_cut_at_a_char_boundary() {
        // 99 ASCII bytes, then "é" (2 bytes) straddles the 100-byte limit: it goes whole.
        assert_eq!(console_id(&format!("{}é✓", "x".repeat(99))), "x".repeat(99));
        // A 3-byte char ending exactly at byte 100 stays.
        let id = format!("{}✓tail", "y".repeat(97));
        assert_eq!(console_id(&id), format!("{}✓", "y".repeat(97)));
    }

    #[test]
    fn verdict_lines() {
        let v = Verdict {
            id: "verify.ext4".into(),
            outcome: Outcome::Fail,
            why: Some("read back wrong\nfrom byte 512".into()),
        };
        let line = verdict(&v);
        assert_eq!(
            line,
            "verdict=verify.ext4 result=fail why=read back wrong from byte 512"
        );
        assert_eq!(
            parse_verdict(&line),
            Some(("verify.ext4".into(), Outcome::Fail))
        );
        assert_eq!(parse_verdict("verdict=x result=maybe"), None);
    }

    #[test]
    fn protocol_text_finds_the_prefix_behind_a_capture_tag() {
        assert_eq!(
            protocol_text("[  12.5] benchboot: case=a value=1.000 units=s\r"),
            Some("case=a value=1.000 units=s")
        );
        assert_eq!(protocol_text("  | benchboot: ready"), Some("ready"));
        assert_eq!(protocol_text("[ 1.0] usb 1-1: new device"), None);
    }
}
