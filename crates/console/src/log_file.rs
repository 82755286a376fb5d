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

/// Most lines a log may have: 2^22 = 4,194,304. A LAVA job log of the standard plan
/// is some tens of thousands of lines (kernel boot, progress, figures, the document's
/// chunks: 64 MiB of JSON, the most a document has, compresses to some 150,000 chunk
/// lines). Each line kept costs 32 bytes besides its text, so 256 MiB of empty lines
/// (the byte bound of `collect --from-log`) would have built 8.6 GB.
pub const MAX_LINES: usize = 1 << 22;
/// Longest LAVA log record (one line), bytes: 64 KiB. A record carries one line of the
/// board's console (PID 1's longest are the document chunks, some 170 bytes) or one
/// result; YAML builds some 50 bytes per node, so a record is bounded in what it
/// builds by its length.
pub const MAX_RECORD_BYTES: usize = 64 << 10;
/// Most YAML nodes of LAVA's results export (`parse_results_export`), counted from
/// above: 2^20. A run's export is one mapping of some ten keys per figure and verdict,
/// a few thousand cases.
pub const MAX_EXPORT_NODES: usize = 1 << 20;

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
    if let Some((n, _)) = text.lines().enumerate().nth(MAX_LINES) {
        bail!(
            "{file}: more than {MAX_LINES} lines (line {}): a console log of a run has some \
             tens of thousands; give the log of one run",
            n + 1
        );
    }
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
        if record.len() > MAX_RECORD_BYTES {
            bail!(
                "{file}: line {n}: a LAVA log record of {} bytes, more than any has ({} KiB \
                 at most): the file is damaged or crafted",
                record.len(),
                MAX_RECORD_BYTES >> 10
            );
        }
        yaml_budget(record, MAX_RECORD_BYTES)
            .map_err(|why| anyhow::anyhow!("{file}: line {n}: {why}"))?;
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

/// What YAML `text` may build, checked before the parser builds it: at most `max`
/// nodes and no alias. Nodes are counted from above, with no YAML lexer: every node
/// but the first follows one of `\n , [ { : - ?` (a block entry, a key, a value, a
/// flow item), so their count, quotes or not, bounds the nodes. An alias (`*name`)
/// makes the parser build its anchor's node again at each use (`[*a, *a, ...]` over
/// a long `&a` list builds its square: a billion values from a line of 64 KiB);
/// neither LAVA's logs nor its exports use one, so one is refused.
///
/// # Errors
/// Why, in words.
pub fn yaml_budget(text: &str, max: usize) -> Result<(), String> {
    let mut nodes = 1usize;
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    let mut prev = b' ';
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if matches!(b, b'\n' | b',' | b'[' | b'{' | b':' | b'-' | b'?') {
            nodes += 1;
            if nodes > max {
                return Err(format!(
                    "more than {max} YAML nodes by byte {i}: damaged or crafted"
                ));
            }
        }
        match quote {
            // A backslash escapes the next byte in a double-quoted scalar.
            Some(b'"') if escaped => escaped = false,
            Some(b'"') if b == b'\\' => escaped = true,
            // `''` inside a single-quoted scalar is one quote: it closes and opens again.
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if matches!(b, b'"' | b'\'') && (starts_node(prev) || prev == b'\'') => {
                quote = Some(b)
            }
            None if b == b'*' && starts_node(prev) => {
                return Err(format!(
                    "a YAML alias at byte {i} (`*name`): LAVA writes none; the file is \
                     damaged or crafted"
                ));
            }
            None => {}
        }
        prev = b;
    }
    Ok(())
}

/// A byte after which a YAML node may start (so `*` starts an alias, a quote a quoted
/// scalar).
fn starts_node(prev: u8) -> bool {
    matches!(
        prev,
        b' ' | b'\t' | b'\n' | b'\r' | b'[' | b'{' | b',' | b':' | b'-' | b'?' | b'!'
    )
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
    yaml_budget(text, MAX_EXPORT_NODES)
        .map_err(|why| anyhow::anyhow!("{file}: LAVA's results export: {why}"))?;
    let v: Value = yaml_serde::from_str(text)
        .with_context(|| format!("{file}: not YAML (LAVA's results export)"))?;
    let list = v.as_sequence().with_context(|| {
        let got = match &v {
            Value::Mapping(_) => "a mapping (key: value)",
            Value::String(_) => "a text",
            Value::Number(_) => "a number",
            Value::Bool(_) => "true or false",
            Value::Null => "nothing (empty or null)",
            _ => "a tagged value",
        };
        format!(
            "{file}: LAVA's results export is a YAML list of test cases (`- {{name: ..., \
             result: ...}}`); this is {got}: is it the job's `yaml` results export?"
        )
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
        assert!(
            e.ends_with(
                "a YAML list of test cases (`- {name: ..., result: ...}`); this is a \
                 mapping (key: value): is it the job's `yaml` results export?"
            ),
            "{e}"
        );
    }

    /// 4 MiB of empty lines: each kept as a line of 32 bytes and more; 256 MiB of them
    /// (the byte bound) built 8.6 GB.
    #[test]
    fn a_log_of_more_lines_than_any_run_is_refused() {
        let text = "\n".repeat(MAX_LINES + 1);
        let e = format!("{:#}", parse("cap.txt", &text).unwrap_err());
        assert_eq!(
            e,
            "cap.txt: more than 4194304 lines (line 4194305): a console log of a run has \
             some tens of thousands; give the log of one run"
        );
        assert_eq!(parse("cap.txt", &text[1..]).unwrap().lines.len(), MAX_LINES);
    }

    /// `[*a, *a, ...]` over `&a [0, 0, ...]`: on one line of 48 KiB, the parser built
    /// 8,000 copies of a list of 8,000 (64 million values).
    #[test]
    fn yaml_aliases_are_refused_before_the_parser_expands_them() {
        let list = vec!["0"; 8000].join(",");
        let uses = vec!["*a"; 8000].join(",");
        let record = format!(
            "{{\"dt\": \"x\", \"lvl\": \"results\", \"a\": &a [{list}], \"msg\": [{uses}]}}"
        );
        assert!(record.len() < MAX_RECORD_BYTES);
        let text = format!("{{\"dt\": \"x\", \"lvl\": \"info\", \"msg\": \"a\"}}\n{record}\n");
        let e = format!("{:#}", parse("job.log", &text).unwrap_err());
        assert!(
            e.starts_with(
                "job.log: line 2: a YAML alias at byte 16049 (`*name`): LAVA writes none"
            ),
            "{e}"
        );
        let export = "- &a {name: a, suite: s, result: pass}\n- *a\n";
        let e = format!("{:#}", parse_results_export("t.yaml", export).unwrap_err());
        assert!(
            e.contains("t.yaml: LAVA's results export: a YAML alias at byte 41"),
            "{e}"
        );
    }

    #[test]
    fn stars_and_quotes_inside_scalars_are_no_aliases() {
        for ok in [
            r#"{"dt": "x", "lvl": "target", "msg": "benchboot: a *b, 'c' \"*d\" \\"}"#,
            r#"{'msg': 'it''s *x', "lvl": "info", "x": a*b}"#,
            r#"{"measurement": ! "1.5", "lvl": "results"}"#,
        ] {
            assert_eq!(yaml_budget(ok, 100), Ok(()), "{ok}");
        }
        assert!(yaml_budget("[*x]", 100).is_err());
        assert!(yaml_budget("{k: *x}", 100).is_err());
    }

    #[test]
    fn an_export_of_more_nodes_than_any_run_is_refused() {
        let export = "- 0\n".repeat(MAX_EXPORT_NODES / 2);
        let e = format!("{:#}", parse_results_export("t.yaml", &export).unwrap_err());
        assert!(
            e.starts_with("t.yaml: LAVA's results export: more than 1048576 YAML nodes by byte"),
            "{e}"
        );
    }

    #[test]
    fn a_record_longer_than_any_is_refused_by_its_length() {
        let long = format!(
            "{{\"dt\": \"x\", \"lvl\": \"target\", \"msg\": \"{}\"}}",
            "x".repeat(MAX_RECORD_BYTES)
        );
        let e = format!("{:#}", parse("job.log", &long).unwrap_err());
        assert!(
            e.starts_with("job.log: line 1: a LAVA log record of 65575 bytes"),
            "{e}"
        );
    }
}
