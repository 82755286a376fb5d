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

/// One protocol line (without the prefix). Case ids have spaces replaced by `_` and are
/// cut to 100 characters, the limit LAVA's pattern matching takes.
pub fn case_line(id: &str, result: CaseResult, value: f64, units: &str) -> String {
    let mut id: String = id.replace(char::is_whitespace, "_");
    id.truncate(100);
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
}
