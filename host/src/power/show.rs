//! `benchboot power show RESULTS.json TRACE.json`: the energy section of one run alone
//! ([`super::energy`]), for a results file and a trace file anywhere (`cargo xtask qemu
//! --meter emulated` runs it on the QEMU run's results and its emulated meter's trace).
//! A trace that cannot be tied to the run's steps is an error (exit status 1) saying
//! why.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use super::energy::{self, Energy};
use crate::doc::Doc;

/// `benchboot power show` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct ShowArgs {
    /// The run's results document (JSON, as `benchboot fetch` or `collect` saves it).
    pub results: PathBuf,
    /// The power trace recorded during that run (JSON, as `benchboot power record`
    /// writes it).
    pub trace: PathBuf,
}

/// The energy section of the run in `results` with the trace in `trace`, as terminal
/// text.
///
/// # Errors
/// Either file cannot be read or is not what it should be, or the trace cannot be
/// aligned with the run's steps (the reason, both files named).
pub fn text(results: &Path, trace: &Path) -> Result<String> {
    let r = crate::results_file::load_path(results)?;
    let t = super::trace_file::read(trace)?;
    let e = Energy::of(t, format!("trace {}", trace.display()), &r);
    if let Err(why) = &e.report {
        bail!(
            "{} cannot be tied to the steps of {} (run {}): {why}: give the trace recorded \
             during this run (its meter must see the run's sync patterns, or its recorder \
             the board's console)",
            trace.display(),
            results.display(),
            r.run_id
        );
    }
    let mut d = Doc::default();
    d.extend(energy::blocks(&e));
    Ok(d.text())
}

/// Runs `benchboot power show`: prints the section (escaped, [`crate::out`]).
///
/// # Errors
/// As [`text`].
pub fn run(a: &ShowArgs) -> Result<()> {
    crate::out::text(crate::out::Stream::Out, &text(&a.results, &a.trace)?);
    Ok(())
}
