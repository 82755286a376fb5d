//! The console: human progress lines and the machine-readable protocol lines.
//!
//! Protocol (for board farms such as LAVA and for the QEMU tests), one line each:
//! `benchboot: start run=<id> board=<name>`, then per measurement
//! `benchboot: case=<id> result=pass|fail|skip value=<number> units=<unit>`, then
//! `benchboot: saved storage=<n> ...` each time the document is on stable storage
//! ([`crate::init::saved_line`]), `benchboot: end run=<id> ...` and `benchboot: ready ...`
//! once results are served.

use std::io::Write;

/// Prefix of every line PID 1 prints.
pub const PREFIX: &str = "benchboot:";
/// The line the host waits for: results are on disk and served.
pub const READY: &str = "benchboot: ready";

/// Prints one line to the console. Never panics: a broken console is ignored, since
/// PID 1 must go on (and `println!` would panic). A line is progress: it beats the
/// watchdog heart ([`crate::heart::beat`]).
pub fn say(line: &str) {
    crate::heart::beat();
    print_line(line);
}

/// Tells one event to both of PID 1's readers: the console line `line` (a `String` or
/// `&str`, printed by [`say`] byte for byte, so protocol lines stay what the tests and
/// board farms parse) and one frame of the init's log (`crate::log`) at defmt `level`
/// with its own format and typed arguments (a few bytes a frame, decoded on the host
/// with the ELF). The console line comes first.
///
/// `tell!(info, format!("start run={id}"); "start run={=str}", id.as_str())`
macro_rules! tell {
    ($level:ident, $line:expr; $($frame:tt)+) => {{
        $crate::console::say(&$line);
        ::defmt::$level!($($frame)+);
    }};
}
pub(crate) use tell;

/// Prints one line like [`say`] without beating the watchdog heart: for the watchdog's
/// own thread, whose lines are no sign of the main sequence's progress.
pub fn print_line(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{PREFIX} {line}");
    let _ = out.flush();
}

/// Outcome of one protocol case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseResult {
    Pass,
    Fail,
    Skip,
}

/// Longest case id on the console, bytes: the limit LAVA's pattern matching takes.
pub const MAX_CASE_ID_BYTES: usize = 100;

/// One protocol line (without the prefix). Case ids have whitespace replaced by `_` and
/// are cut to at most [`MAX_CASE_ID_BYTES`] bytes, at a character boundary (a label may
/// hold multi-byte UTF-8).
pub fn case_line(id: &str, result: CaseResult, value: f64, units: &str) -> String {
    let mut id: String = id.replace(char::is_whitespace, "_");
    let mut end = id.len().min(MAX_CASE_ID_BYTES);
    while !id.is_char_boundary(end) {
        end -= 1;
    }
    id.truncate(end);
    let result = match result {
        CaseResult::Pass => "pass",
        CaseResult::Fail => "fail",
        CaseResult::Skip => "skip",
    };
    format!("case={id} result={result} value={value:.3} units={units}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_line_shape() {
        assert_eq!(
            case_line(
                "storage.ext4.write.bs4096",
                CaseResult::Pass,
                12.34567,
                "MiB/s"
            ),
            "case=storage.ext4.write.bs4096 result=pass value=12.346 units=MiB/s"
        );
    }

    #[test]
    fn case_id_has_no_spaces_and_is_bounded() {
        let long = "a b".repeat(60);
        let line = case_line(&long, CaseResult::Fail, 0.0, "MiB/s");
        let id = line.split(' ').next().unwrap();
        assert_eq!(id.len(), "case=".len() + 100);
        assert!(!id.contains(' '));
    }

    #[test]
    fn case_id_is_cut_at_a_char_boundary() {
        // 99 ASCII bytes, then "é" (2 bytes) straddles the 100-byte limit: it goes whole.
        let id = format!("{}é✓", "x".repeat(99));
        let line = case_line(&id, CaseResult::Pass, 1.0, "MiB/s");
        let cut = line
            .strip_prefix("case=")
            .and_then(|l| l.split(' ').next())
            .unwrap();
        assert_eq!(cut, "x".repeat(99));
        // A 3-byte char ending exactly at byte 100 stays.
        let id = format!("{}✓tail", "y".repeat(97));
        let line = case_line(&id, CaseResult::Pass, 1.0, "MiB/s");
        assert!(
            line.starts_with(&format!("case={}✓ result=pass", "y".repeat(97))),
            "{line}"
        );
        // Multi-byte labels well under the limit are untouched; whitespace becomes `_`.
        assert_eq!(
            case_line("storage.bénch ✓.bs512", CaseResult::Skip, 0.0, "-"),
            "case=storage.bénch_✓.bs512 result=skip value=0.000 units=-"
        );
    }
}
