//! A power trace on disk: the JSON of a [`Trace`] as `benchboot power record` writes it
//! (compact, atomically: [`crate::atomic_file`]), and the one reader of such a file
//! ([`read`]), which bounds what it reads and builds and checks what it got.
//!
//! In the results store a run's trace is `<store>/power/<name>.json`, `<name>` the
//! run's stored name through [`SafeName`] ([`in_store`]); never in `runs/`, whose every
//! `*.json` is a results document to the index (and a run id may end in `.power`).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context as _, Result};
use benchboot_energy::{Trace, MAX_SAMPLES};
use benchboot_results::name::{NameKind, SafeName};

use crate::store::POWER_DIR;

/// The most bytes a trace file may have: 160 per sample for [`MAX_SAMPLES`] samples
/// (640 MiB). A sample as this writer writes it (`{"t_s":..,"watts":..,"volts":..,
/// "amps":..}`, four shortest-round-trip `f64`s of at most 24 characters each) is at
/// most 131 bytes; the rest is room for the console lines.
pub const MAX_TRACE_BYTES: u64 = MAX_SAMPLES as u64 * 160;

/// What the reader calls a trace file in its messages.
const WHAT: &str = "a power trace (JSON, as `benchboot power record` writes it)";

/// Reads and checks the trace file `path`: a regular file of at most
/// [`MAX_TRACE_BYTES`] (read through `benchboot_input`), UTF-8 JSON of a [`Trace`]
/// with at most [`MAX_SAMPLES`] samples and console lines, then [`check`]ed.
///
/// # Errors
/// Names the file, what is wrong (with the sample's index and time where one is) and
/// what to give instead.
pub fn read(path: &Path) -> Result<Trace> {
    let text = benchboot_input::read_text(path, WHAT, MAX_TRACE_BYTES)?;
    let trace: Trace = serde_json::from_str(text.strip_prefix('\u{feff}').unwrap_or(&text))
        .map_err(|e| {
            anyhow!(
                "{}: not a power trace: {e}: give a trace `benchboot power record` wrote, or \
                 a meter's CSV (`benchboot power import RUN FILE.csv`)",
                path.display()
            )
        })?;
    check(&trace).map_err(|e| {
        anyhow!(
            "{}: {e}: record it again (`benchboot power record`), or import the meter's own \
             file",
            path.display()
        )
    })?;
    Ok(trace)
}

/// What is wrong with `t`, if anything: every time and value finite, sample times
/// strictly increasing, the resolution finite and not negative, the period finite and
/// above zero, the counter finite. An empty trace passes (a recording cut before its
/// first sample); importing one is refused ([`super::import`]).
///
/// # Errors
/// One sentence, naming the sample (0-based index) and its time.
pub fn check(t: &Trace) -> Result<(), String> {
    if !(t.resolution_w.is_finite() && t.resolution_w >= 0.0) {
        return Err(format!(
            "its resolution_w {} is not a power step (finite, 0 or more)",
            t.resolution_w
        ));
    }
    if !(t.period_s.is_finite() && t.period_s > 0.0) {
        return Err(format!(
            "its period_s {} is not a time between samples (finite, above 0)",
            t.period_s
        ));
    }
    if let Some((a, b)) = t.counter_j {
        if !(a.is_finite() && b.is_finite()) {
            return Err(format!("its energy counter ({a}, {b}) J is not finite"));
        }
    }
    let mut last: Option<f64> = None;
    for (i, s) in t.samples.iter().enumerate() {
        let values = [Some(s.t_s), Some(s.watts), s.volts, s.amps];
        if values.iter().flatten().any(|v| !v.is_finite()) {
            return Err(format!(
                "sample {i} (t_s {}) holds a value that is not a finite number",
                s.t_s
            ));
        }
        if let Some(prev) = last.filter(|&p| s.t_s <= p) {
            return Err(format!(
                "sample {i} (t_s {}) is not after the one before it (t_s {prev}): a trace's \
                 samples are in time order",
                s.t_s
            ));
        }
        last = Some(s.t_s);
    }
    if let Some((i, (host_s, _))) = t
        .console
        .iter()
        .enumerate()
        .find(|(_, (h, _))| !h.is_finite())
    {
        return Err(format!(
            "console line {i} has a host time {host_s} that is not a finite number"
        ));
    }
    Ok(())
}

/// Writes `t` to `path` as compact JSON, whole or not at all ([`crate::atomic_file`]).
///
/// # Errors
/// `t` fails [`check`] (nothing is written), or the file cannot be written (its path).
pub fn write(path: &Path, t: &Trace) -> Result<()> {
    check(t).map_err(|e| anyhow!("not writing {}: the trace {e}", path.display()))?;
    let text = serde_json::to_string(t).context("encoding the trace")?;
    crate::atomic_file::write(path, &text)
}

/// Where the store in `store_dir` keeps the trace of the run stored as `name`:
/// `<store_dir>/power/<name>.json`.
pub fn in_store(store_dir: &Path, name: &SafeName) -> PathBuf {
    name.path_in(&store_dir.join(POWER_DIR), "json")
}

/// The trace of the stored run whose document is `results_path`
/// (`<store>/runs/<name>.json`), when there is one: `<store>/power/<name>.json`.
/// `None` for a results file outside a store's `runs/`, or when no trace was attached.
pub fn beside(results_path: &Path) -> Option<PathBuf> {
    let runs = results_path.parent()?;
    if runs.file_name()? != crate::store::RUNS_DIR {
        return None;
    }
    let store_dir = runs.parent()?;
    let stem = results_path.file_name()?.to_str()?.strip_suffix(".json")?;
    let name = SafeName::new(NameKind::RunId, stem).ok()?;
    let path = in_store(store_dir, &name);
    path.is_file().then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchboot_energy::{Clock, Sample};

    pub(crate) fn trace(samples: Vec<Sample>) -> Trace {
        Trace {
            meter: "fake".into(),
            clock: Clock::Host,
            emulated: false,
            resolution_w: 0.001,
            period_s: 0.01,
            position: Some("between supply and board".into()),
            samples,
            counter_j: None,
            console: Vec::new(),
        }
    }

    #[test]
    fn a_written_trace_reads_back_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.json");
        let t = trace(vec![
            Sample::watts(0.5, 2.25),
            Sample::volts_amps(0.51, 5.1, 0.4),
        ]);
        write(&p, &t).unwrap();
        assert_eq!(read(&p).unwrap(), t);
    }

    #[test]
    fn times_must_increase_and_values_be_finite() {
        let e = check(&trace(vec![
            Sample::watts(1.0, 2.0),
            Sample::watts(1.0, 2.0),
        ]))
        .unwrap_err();
        assert_eq!(
            e,
            "sample 1 (t_s 1) is not after the one before it (t_s 1): a trace's samples are \
             in time order"
        );
        let mut s = Sample::watts(1.0, 2.0);
        s.amps = Some(f64::INFINITY);
        let e = check(&trace(vec![s])).unwrap_err();
        assert_eq!(
            e,
            "sample 0 (t_s 1) holds a value that is not a finite number"
        );
        let mut t = trace(vec![]);
        t.period_s = 0.0;
        assert_eq!(
            check(&t).unwrap_err(),
            "its period_s 0 is not a time between samples (finite, above 0)"
        );
    }

    #[test]
    fn a_bad_file_is_named_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.json");
        std::fs::write(
            &p,
            r#"{"meter":"m","clock":"host","emulated":false,"resolution_w":0.01,
               "period_s":0.01,"samples":[{"t_s":2,"watts":1},{"t_s":1,"watts":1}]}"#,
        )
        .unwrap();
        let e = format!("{:#}", read(&p).unwrap_err());
        assert_eq!(
            e,
            format!(
                "{}: sample 1 (t_s 1) is not after the one before it (t_s 2): a trace's \
                 samples are in time order: record it again (`benchboot power record`), or \
                 import the meter's own file",
                p.display()
            )
        );
        std::fs::write(&p, "[1, 2]").unwrap();
        let e = format!("{:#}", read(&p).unwrap_err());
        assert!(
            e.starts_with(&format!("{}: not a power trace: invalid type", p.display())),
            "{e}"
        );
    }

    #[test]
    fn a_stored_runs_trace_is_found_in_power_and_nowhere_else() {
        let dir = tempfile::tempdir().unwrap();
        let doc = dir.path().join("runs/r-1.json");
        std::fs::create_dir_all(doc.parent().unwrap()).unwrap();
        std::fs::write(&doc, "{}").unwrap();
        assert_eq!(beside(&doc), None);
        let name = SafeName::new(NameKind::RunId, "r-1").unwrap();
        let t = in_store(dir.path(), &name);
        assert_eq!(t, dir.path().join("power/r-1.json"));
        write(&t, &trace(vec![])).unwrap();
        assert_eq!(beside(&doc), Some(t));
        // A results file outside a store's runs/ has no trace.
        let loose = dir.path().join("r-1.json");
        std::fs::write(&loose, "{}").unwrap();
        assert_eq!(beside(&loose), None);
    }
}
