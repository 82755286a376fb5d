//! LAVA's side of the protocol: the test monitors its jobs carry, the case ids it
//! stores, and the check of what a LAVA job stored against the results document.
//!
//! A monitor (lava_dispatcher/actions/test/monitor.py) waits for its `start` string,
//! then matches `pattern` until its `end` string. A match without a `result` group
//! becomes a case with result `pass` and a numeric measurement (`float()` of the
//! `measurement` group) with `units`; a match with one keeps the result. LAVA folds the
//! `test_case_id` group: stripped, lower-cased, every run of `\W` replaced by `_`
//! ([`fold_id`]). Monitors run one after the other, so figures and verdicts are two
//! blocks with their own start and end lines. Each pattern stays on one line and ends
//! its last group with a look-ahead for the line's end, so a match never takes half a
//! number that the serial line has not finished sending.

use std::collections::HashMap;

use benchboot_results::RunResults;

use crate::figures::{self, Figure};
use crate::lines::value_text;
use crate::verdicts::{self, Outcome};

/// One LAVA test monitor (job definition `test: monitors:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Monitor {
    /// The test suite LAVA files the cases under (`^[-_a-zA-Z0-9.]+$`).
    pub name: &'static str,
    pub start: &'static str,
    pub end: &'static str,
    /// A Python `re` pattern.
    pub pattern: &'static str,
}

/// The figures: numbers with units, from the run's start line to the line after the
/// last figure ([`crate::lines::figures_end`]).
pub const FIGURES: Monitor = Monitor {
    name: "benchboot-figures",
    start: "benchboot: start run=",
    end: "benchboot: figures end run=",
    pattern: r"benchboot: case=(?P<test_case_id>[-_.A-Za-z0-9]+) value=(?P<measurement>-?[0-9]+(?:\.[0-9]+)?) units=(?P<units>[^ \r\n]+)(?=[ \r\n])",
};

/// The verdicts: pass, fail or skip.
pub const VERDICTS: Monitor = Monitor {
    name: "benchboot-verdicts",
    start: "benchboot: verdicts begin run=",
    end: "benchboot: verdicts end run=",
    pattern: r"benchboot: verdict=(?P<test_case_id>[-_.A-Za-z0-9]+) result=(?P<result>pass|fail|skip)(?=[ \r\n])",
};

/// Both monitors, in the order the run prints their blocks.
pub const MONITORS: [Monitor; 2] = [FIGURES, VERDICTS];

/// The case id LAVA stores for `id`: `test_case_id.strip().lower()`, then
/// `re.sub(r"\W+", "_", ...)` (ASCII ids: `\W` is anything but `[A-Za-z0-9_]`).
pub fn fold_id(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    let mut in_run = false;
    for c in id.trim().chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() || c == '_' {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('_');
            in_run = true;
        }
    }
    out
}

/// One result as LAVA keeps it (a `results` line of the job log, or an entry of the
/// job's `/api/v0.2/jobs/<id>/yaml/` export).
#[derive(Debug, Clone, PartialEq)]
pub struct LavaResult {
    /// The test suite: the monitor's name (LAVA prefixes it with the action's level in
    /// some exports: `0_benchboot-figures`; either is accepted).
    pub suite: String,
    pub case: String,
    /// `pass`, `fail`, `skip`, `unknown`.
    pub result: String,
    pub measurement: Option<f64>,
    pub units: Option<String>,
}

/// What [`check`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Checked {
    /// Figures and verdicts LAVA holds that match the document.
    pub matched: usize,
    /// Every disagreement, one line each.
    pub problems: Vec<String>,
}

fn suite_is(suite: &str, monitor: &Monitor) -> bool {
    suite == monitor.name
        || suite.split_once('_').is_some_and(|(level, name)| {
            name == monitor.name && level.chars().all(|c| c.is_ascii_digit() || c == '.')
        })
}

/// Checks what LAVA stored (`lava`) against the results document `r`: every figure of
/// the document is a case of [`FIGURES`] with the printed value (three decimals) and
/// units, every verdict a case of [`VERDICTS`] with the same result, and LAVA holds
/// nothing of those suites that the document lacks. Other suites (LAVA's own `lava`)
/// are ignored.
pub fn check(r: &RunResults, lava: &[LavaResult]) -> Checked {
    let mut out = Checked::default();
    let mut figures: HashMap<String, Figure> = HashMap::new();
    for f in figures::all(r).into_iter().filter(|f| f.value.is_finite()) {
        let id = fold_id(&crate::lines::console_id(&f.id));
        if figures.contains_key(&id) {
            out.problems.push(format!(
                "the document has two figures LAVA would file as `{id}`"
            ));
        }
        figures.insert(id, f);
    }
    let mut verdicts: HashMap<String, Outcome> = verdicts::all(r)
        .into_iter()
        .map(|v| (fold_id(&crate::lines::console_id(&v.id)), v.outcome))
        .collect();
    for x in lava {
        if suite_is(&x.suite, &FIGURES) {
            let Some(f) = figures.remove(&x.case) else {
                out.problems.push(format!(
                    "LAVA has figure `{}` = {:?}, the document has no such figure",
                    x.case, x.measurement
                ));
                continue;
            };
            let printed: f64 = value_text(f.value).parse().unwrap_or(f64::NAN);
            let units = if f.units.is_empty() {
                "-".to_owned()
            } else {
                f.units.replace(char::is_whitespace, "_")
            };
            match x.measurement {
                Some(m)
                    if (m - printed).abs() <= 5e-4 * printed.abs().max(1.0)
                        && x.units.as_deref() == Some(units.as_str())
                        && x.result == "pass" =>
                {
                    out.matched += 1;
                }
                _ => out.problems.push(format!(
                    "figure `{}`: LAVA has {} {:?} ({}), the document {} {units}",
                    x.case,
                    x.measurement
                        .map_or_else(|| "no number".to_owned(), |m| m.to_string()),
                    x.units.as_deref().unwrap_or(""),
                    x.result,
                    value_text(f.value)
                )),
            }
        } else if suite_is(&x.suite, &VERDICTS) {
            match verdicts.remove(&x.case) {
                Some(o) if o.name() == x.result => out.matched += 1,
                Some(o) => out.problems.push(format!(
                    "verdict `{}`: LAVA has {}, the document {}",
                    x.case,
                    x.result,
                    o.name()
                )),
                None => out.problems.push(format!(
                    "LAVA has verdict `{}` = {}, the document has no such verdict",
                    x.case, x.result
                )),
            }
        }
    }
    let mut missing: Vec<String> = figures
        .keys()
        .map(|k| format!("figure `{k}`"))
        .chain(verdicts.keys().map(|k| format!("verdict `{k}`")))
        .collect();
    missing.sort();
    for m in missing {
        out.problems
            .push(format!("{m} is in the document, not in LAVA's results"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lines;

    #[test]
    fn ids_fold_as_lava_folds_them() {
        assert_eq!(
            fold_id("storage.usb-ext4.direct.bs4096.r0.write"),
            "storage_usb_ext4_direct_bs4096_r0_write"
        );
        assert_eq!(
            fold_id(" Memory.LIBC-memcpy..cpu0 "),
            "memory_libc_memcpy_cpu0"
        );
        assert_eq!(fold_id("a__b"), "a__b");
        assert_eq!(
            fold_id("network.wifi-ch36-40.freq"),
            "network_wifi_ch36_40_freq"
        );
    }

    /// The monitors' patterns, run by a regex engine with Python's look-ahead, take
    /// exactly what the lines carry; a line the serial port has not finished is not
    /// taken (its number could be cut).
    #[test]
    fn patterns_match_the_lines() {
        let fig = fancy_regex::Regex::new(FIGURES.pattern).unwrap();
        let line = format!(
            "benchboot: {}\r\n",
            lines::figure(&Figure::bare(
                crate::figures::Metric::MemoryLatency,
                "memory.latency.base.bs1024",
                -0.25,
                "ns"
            ))
            .unwrap()
        );
        let c = fig.captures(&line).unwrap().unwrap();
        assert_eq!(&c["test_case_id"], "memory.latency.base.bs1024");
        assert_eq!(&c["measurement"], "-0.250");
        assert_eq!(&c["units"], "ns");
        assert!(fig
            .captures("benchboot: case=a value=12.3")
            .unwrap()
            .is_none());
        assert!(fig
            .captures("benchboot: case=a value=12.345 units=Mi")
            .unwrap()
            .is_none());
        let ver = fancy_regex::Regex::new(VERDICTS.pattern).unwrap();
        let c = ver
            .captures("benchboot: verdict=a1.ext4 result=fail why=slow\r\n")
            .unwrap()
            .unwrap();
        assert_eq!((&c["test_case_id"], &c["result"]), ("a1.ext4", "fail"));
        assert!(ver
            .captures("benchboot: verdict=a result=pa")
            .unwrap()
            .is_none());
        // The start and end strings are the lines' own beginnings.
        assert!(lines::figures_end("r1", 3).starts_with(&FIGURES.end["benchboot: ".len()..]));
        assert!(lines::verdicts_begin("r1").starts_with(&VERDICTS.start["benchboot: ".len()..]));
        assert!(lines::verdicts_end("r1", &[]).starts_with(&VERDICTS.end["benchboot: ".len()..]));
    }

    fn doc() -> RunResults {
        RunResults::from_json(include_str!(
            "../../../host/tests/data/qemu-virt-arm64-qemu.json"
        ))
        .unwrap()
    }

    /// What a LAVA job files for `r`: its printed lines, folded as LAVA folds them.
    fn as_lava(r: &RunResults) -> Vec<LavaResult> {
        let mut out: Vec<LavaResult> = figures::all(r)
            .iter()
            .filter_map(lines::figure)
            .map(|l| {
                let f = lines::parse_figure(&l).unwrap();
                LavaResult {
                    suite: FIGURES.name.into(),
                    case: fold_id(&f.id),
                    result: "pass".into(),
                    measurement: Some(f.value),
                    units: Some(f.units),
                }
            })
            .collect();
        out.extend(verdicts::all(r).iter().map(|v| {
            let (id, o) = lines::parse_verdict(&lines::verdict(v)).unwrap();
            LavaResult {
                suite: format!("0_{}", VERDICTS.name),
                case: fold_id(&id),
                result: o.name().into(),
                measurement: None,
                units: None,
            }
        }));
        out
    }

    #[test]
    fn a_faithful_farm_checks_clean_and_every_difference_is_named() {
        let r = doc();
        let lava = as_lava(&r);
        let ok = check(&r, &lava);
        assert!(ok.problems.is_empty(), "{:#?}", ok.problems);
        assert_eq!(ok.matched, lava.len());
        assert!(ok.matched > 400, "{}", ok.matched);

        let mut bad = lava.clone();
        let i = bad
            .iter()
            .position(|x| x.case.starts_with("storage_"))
            .unwrap();
        let case = bad[i].case.clone();
        bad[i].measurement = Some(bad[i].measurement.unwrap() + 1.0);
        bad.retain(|x| x.case != "run_complete");
        bad.push(LavaResult {
            suite: FIGURES.name.into(),
            case: "made_up".into(),
            result: "pass".into(),
            measurement: Some(1.0),
            units: Some("s".into()),
        });
        bad.push(LavaResult {
            suite: "lava".into(),
            case: "job".into(),
            result: "pass".into(),
            measurement: None,
            units: None,
        });
        let c = check(&r, &bad);
        assert_eq!(c.problems.len(), 3, "{:#?}", c.problems);
        assert!(c.problems.iter().any(|p| p.contains(&case)));
        assert!(c.problems.iter().any(|p| p.contains("made_up")));
        assert!(c
            .problems
            .iter()
            .any(|p| p == "verdict `run_complete` is in the document, not in LAVA's results"));
    }

    /// Every id of a rich run (storage, memory, network, WiFi) stays unique once folded.
    #[test]
    fn folded_ids_are_unique() {
        let r = doc();
        let mut ids: Vec<String> = figures::all(&r).iter().map(|f| fold_id(&f.id)).collect();
        let n = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), n);
    }
}
