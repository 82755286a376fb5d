//! The user's own workloads (plan `commands`, plan file `[[command]]`): what each run
//! did and the measurements it printed.
//!
//! A command reports a measurement by printing one line to its standard output:
//! `case=<id> value=<number> units=<unit>` (the shape of PID 1's own protocol lines).
//! The three keys may come in any order and other `key=value` words are ignored (so
//! `case=x result=pass value=1 units=ms` reads too); every other line is the
//! command's own business.

use serde::{Deserialize, Serialize};

use crate::{Health, InterruptDelta, Reading};

/// One run of one command step (`command.<id>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandRun {
    /// The plan's `CommandStep::id`.
    pub id: String,
    /// The binary, relative to the results partition, as the plan named it.
    pub path: String,
    /// Its exit status when it ended on its own; `None` when it never started, was
    /// killed at its time limit or by a signal (the matching [`crate::WorkerFault`]
    /// says which).
    pub exit_code: Option<i32>,
    /// From start to its end (or its kill), ns of CLOCK_BOOTTIME.
    pub elapsed_ns: u64,
    /// The measurement lines it printed, in order (also those of a failed run).
    pub measurements: Vec<CommandMeasurement>,
    /// The board's health just before and after it ran; `None` when it never ran.
    /// (Kept here rather than in [`crate::RunResults::health`], whose scopes readers
    /// of schema 1.5 know all of.)
    #[serde(default)]
    pub health: Option<CommandHealth>,
}

/// The board's health around one command, as [`crate::StepHealth`] has it for the
/// other steps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandHealth {
    pub before: Health,
    pub after: Health,
    /// The interrupts raised between the two snapshots, per source with a non-zero
    /// count, most first (`/proc/interrupts`).
    pub interrupts: Reading<Vec<InterruptDelta>>,
}

/// One `case=<id> value=<number> units=<unit>` line of a command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandMeasurement {
    /// The command's own case id (the console shows `command.<step id>.<case>`).
    pub case: String,
    /// A finite number, in `units`.
    pub value: f64,
    /// As the command wrote it, e.g. `iterations/s`.
    pub units: String,
}

/// The measurement on `line`, if it is one: `case=`, `value=` and `units=` each once,
/// non-empty, with a finite decimal `value` (`1.5`, `-2`, `3e6`; not `NaN`, `inf`).
/// Surrounding whitespace and a trailing `\r` are ignored.
pub fn parse_line(line: &str) -> Option<CommandMeasurement> {
    let (mut case, mut value, mut units) = (None, None, None);
    for word in line.split_whitespace() {
        let (key, v) = word.split_once('=')?;
        let slot = match key {
            "case" => &mut case,
            "value" => &mut value,
            "units" => &mut units,
            _ => continue,
        };
        if v.is_empty() || slot.replace(v).is_some() {
            return None;
        }
    }
    let value: f64 = value?.parse().ok().filter(|v: &f64| v.is_finite())?;
    Some(CommandMeasurement {
        case: case?.to_owned(),
        value,
        units: units?.to_owned(),
    })
}

/// Every measurement line of a command's standard output, in order ([`parse_line`]);
/// other lines are skipped.
pub fn parse_output(stdout: &str) -> Vec<CommandMeasurement> {
    stdout.lines().filter_map(parse_line).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(case: &str, value: f64, units: &str) -> CommandMeasurement {
        CommandMeasurement {
            case: case.into(),
            value,
            units: units.into(),
        }
    }

    #[test]
    fn measurement_lines() {
        assert_eq!(
            parse_line("case=coremark value=1234.5 units=iterations/s"),
            Some(m("coremark", 1234.5, "iterations/s"))
        );
        // Any order, extra keys ignored, CRLF and spacing tolerated.
        assert_eq!(
            parse_line("  units=ms  result=pass case=boot.t value=-2e3\r"),
            Some(m("boot.t", -2000.0, "ms"))
        );
        assert_eq!(parse_line("case=a value=0 units=-"), Some(m("a", 0.0, "-")));
    }

    #[test]
    fn other_lines_are_not_measurements() {
        for line in [
            "",
            "CoreMark 1.0 : 1234.5 / GCC",
            "case=a value=1",             // no units
            "value=1 units=ms",           // no case
            "case=a value= units=ms",     // empty value
            "case= value=1 units=ms",     // empty case
            "case=a value=fast units=ms", // not a number
            "case=a value=NaN units=ms",  // JSON holds no NaN
            "case=a value=inf units=ms",
            "case=a value=1 units=ms case=b",     // a key twice
            "case=a value=1 units=ms and more",   // a word that is no key=value
            "benchboot: case=a value=1 units=ms", // a prefix
        ] {
            assert_eq!(parse_line(line), None, "{line:?}");
        }
    }

    #[test]
    fn output_keeps_the_measurements_in_order() {
        let out = "starting\ncase=one value=1 units=s\nnoise\n\ncase=two value=2.5 units=s\n";
        assert_eq!(parse_output(out), [m("one", 1.0, "s"), m("two", 2.5, "s")]);
        assert!(parse_output("").is_empty());
    }

    #[test]
    fn a_run_round_trips_through_json() {
        let run = CommandRun {
            id: "coremark".into(),
            path: "bin/coremark".into(),
            exit_code: Some(0),
            elapsed_ns: 12_000_000_000,
            measurements: vec![m("coremark", 1234.5, "iterations/s")],
            health: None,
        };
        let text = serde_json::to_string(&run).unwrap();
        assert_eq!(
            text,
            r#"{"id":"coremark","path":"bin/coremark","exit_code":0,"elapsed_ns":12000000000,"measurements":[{"case":"coremark","value":1234.5,"units":"iterations/s"}],"health":null}"#
        );
        assert_eq!(serde_json::from_str::<CommandRun>(&text).unwrap(), run);
    }
}
