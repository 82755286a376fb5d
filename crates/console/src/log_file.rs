//! A board's console as a log file: a serial capture (text, any prefix before
//! `benchboot: `), or a LAVA job log, where every line is one record
//! `{"dt": ..., "lvl": ..., "msg": ...}` (YAML flow style, `- ` first in the server's
//! files, JSON lines from `lava-run` without a server: lava_common/log.py). From a LAVA
//! log come the board's lines (`lvl: target`, and `feedback`, what LAVA reads after the
//! test action) and the results LAVA stored (`lvl: results`).
//!
//! Behind the `log-file` feature: the host reads logs, PID 1 only writes them.

use crate::lava::LavaResult;
use anyhow::{bail, Context, Result};
use yaml_serde::Value;

/// What a log holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConsoleLog {
    /// The board's console lines with their line numbers in the file (1-based).
    pub lines: Vec<(usize, String)>,
    /// The results a LAVA log records; `None` for a plain capture.
    pub lava: Option<Vec<LavaResult>>,
}

/// Reads `text`, the contents of `file` (named in errors).
///
/// # Errors
/// A LAVA log with a line that is no record (naming file and line).
pub fn parse(file: &str, text: &str) -> Result<ConsoleLog> {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if !is_lava_record(first) {
        return Ok(ConsoleLog {
            lines: text
                .lines()
                .enumerate()
                .map(|(i, l)| (i + 1, l.to_owned()))
                .collect(),
            lava: None,
        });
    }
    let mut out = ConsoleLog {
        lines: Vec::new(),
        lava: Some(Vec::new()),
    };
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let record = line.strip_prefix("- ").unwrap_or(line);
        let v: Value = yaml_serde::from_str(record).with_context(|| {
            format!(
                "{file}: line {n}: not a LAVA log record ({{\"dt\": ..., \"lvl\": ..., \"msg\": \
                 ...}}): the file is cut or mixes formats"
            )
        })?;
        match (v["lvl"].as_str(), &v["msg"]) {
            (Some("target" | "feedback"), Value::String(msg)) => out.lines.push((n, msg.clone())),
            (Some("results"), msg @ Value::Mapping(_)) => {
                if let Some(r) = result(msg) {
                    out.lava.get_or_insert_with(Vec::new).push(r);
                }
            }
            (None, _) => bail!("{file}: line {n}: a LAVA log record without `lvl`"),
            _ => {}
        }
    }
    Ok(out)
}

fn is_lava_record(line: &str) -> bool {
    let l = line
        .trim_start()
        .strip_prefix("- ")
        .unwrap_or(line.trim_start());
    l.starts_with('{') && l.contains("\"lvl\"")
}

/// A scalar as text, through a YAML tag (LAVA writes measurements as `! "12.5"`).
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Tagged(t) => scalar(&t.value),
        _ => None,
    }
}

/// One stored result: `definition` (the suite), `case`, `result`, `measurement`, `units`.
fn result(msg: &Value) -> Option<LavaResult> {
    Some(LavaResult {
        suite: scalar(&msg["definition"])?,
        case: scalar(&msg["case"])?,
        result: scalar(&msg["result"])?,
        measurement: scalar(&msg["measurement"]).and_then(|m| m.trim().parse().ok()),
        units: scalar(&msg["units"]),
    })
}

/// The results of a job as LAVA's REST API exports them in YAML
/// (`/api/v0.2/jobs/<id>/yaml/`: a list of `{name, suite, result, measurement, unit,
/// ...}`; lava_results_app `export_testcase`; `measurement` is text, `None` when empty).
///
/// # Errors
/// Text that is no such list (naming `file`).
pub fn parse_results_export(file: &str, text: &str) -> Result<Vec<LavaResult>> {
    let v: Value = yaml_serde::from_str(text)
        .with_context(|| format!("{file}: not YAML (LAVA's results export)"))?;
    let list = v.as_sequence().with_context(|| {
        format!("{file}: LAVA's results export is a YAML list of test cases; this is not")
    })?;
    list.iter()
        .enumerate()
        .map(|(i, c)| {
            let field = |k: &str| {
                scalar(&c[k]).with_context(|| format!("{file}: test case {}: no `{k}`", i + 1))
            };
            Ok(LavaResult {
                suite: field("suite")?,
                case: field("name")?,
                result: field("result")?,
                measurement: scalar(&c["measurement"])
                    .and_then(|m| m.trim().parse().ok())
                    .filter(|_| c["measurement"].as_str() != Some("None")),
                units: scalar(&c["unit"]).filter(|u| !u.is_empty()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_serial_capture_is_lines() {
        let log = parse("cap.txt", "[ 1.0] boot\nbenchboot: start run=r board=b\r\n").unwrap();
        assert_eq!(log.lava, None);
        // `str::lines` drops the CR of a CR LF line end.
        assert_eq!(log.lines[1], (2, "benchboot: start run=r board=b".into()));
    }

    /// Records as lava-run writes them (JSON lines) and as the server stores them (`- `
    /// first): the board's lines, LAVA's other messages skipped, results with their
    /// measurement behind PyYAML's `!` tag.
    #[test]
    fn lava_records_both_forms() {
        let text = concat!(
            r#"{"dt": "2026-12-02T06:07:47.6", "lvl": "info", "msg": "start: 1 tmpfs-deploy"}"#,
            "\n",
            r#"- {"dt": "2026-12-02T06:08:16.6", "lvl": "target", "msg": "benchboot: case=a value=1.500 units=MiB/s"}"#,
            "\n",
            r#"{"dt": "2026-12-02T06:12:17.3", "lvl": "results", "msg": {"case": "a", "definition": "benchboot-figures", "extra": {"test_case_id": "a"}, "level": "3.1", "measurement": ! "1.5", "result": "pass", "units": "MiB/s"}}"#,
            "\n",
            r#"{"dt": "2026-12-02T06:13:58.8", "lvl": "results", "msg": {"case": "run_complete", "definition": "benchboot-verdicts", "level": "3.1", "result": "pass"}}"#,
            "\n",
            r#"- {"dt": "2026-12-02T06:13:59.0", "lvl": "feedback", "msg": "benchboot: ready", "ns": "common"}"#,
            "\n"
        );
        let log = parse("job.log", text).unwrap();
        assert_eq!(
            log.lines,
            [
                (2, "benchboot: case=a value=1.500 units=MiB/s".to_owned()),
                (5, "benchboot: ready".to_owned())
            ]
        );
        let lava = log.lava.unwrap();
        assert_eq!(lava.len(), 2);
        assert_eq!(lava[0].measurement, Some(1.5));
        assert_eq!(lava[0].units.as_deref(), Some("MiB/s"));
        assert_eq!(
            (lava[1].case.as_str(), lava[1].measurement),
            ("run_complete", None)
        );
    }

    #[test]
    fn a_broken_record_names_its_line() {
        let text =
            "{\"dt\": \"x\", \"lvl\": \"info\", \"msg\": \"a\"}\n{\"dt\": \"x\", \"lvl\": \"tar";
        let e = format!("{:#}", parse("job.log", text).unwrap_err());
        assert!(
            e.starts_with("job.log: line 2: not a LAVA log record"),
            "{e}"
        );
    }

    #[test]
    fn the_results_export() {
        let text = "- {name: a, suite: 0_benchboot-figures, result: pass, measurement: '1.5000000000', unit: MiB/s, job: '7'}\n\
                    - {name: run_complete, suite: 0_benchboot-verdicts, result: pass, measurement: 'None', unit: ''}\n";
        let r = parse_results_export("tests.yaml", text).unwrap();
        assert_eq!(r[0].measurement, Some(1.5));
        assert_eq!((r[1].measurement, r[1].units.clone()), (None, None));
        let e = format!("{:#}", parse_results_export("t.yaml", "a: 1").unwrap_err());
        assert!(e.contains("a YAML list of test cases"), "{e}");
    }
}
