//! `benchboot power import RUN FILE`: attaches a power trace to a stored run, as the
//! store's `power/<name>.json` ([`super::trace_file::in_store`]), written whole or not
//! at all under the store's lock; a trace already there is replaced only when asked.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context as _, Result};
use benchboot_energy::decode::csv;
use benchboot_energy::Trace;
use benchboot_results::name::{NameKind, SafeName};

use super::trace_file;
use crate::store::{lock, Store, StoreError};

/// What to import where.
#[derive(Debug, Clone)]
pub struct Import {
    /// A stored run's name (its run id, or a prefix of exactly one).
    pub run: String,
    /// The trace: `.json` as `benchboot power record` writes it, or a meter's `.csv`.
    pub file: PathBuf,
    /// Replace a trace the run has already.
    pub replace: bool,
    /// Where the meter sat, in words; overrides the trace's own.
    pub position: Option<String>,
}

/// What [`import`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The run's stored name.
    pub run: String,
    /// The trace file in the store.
    pub path: PathBuf,
    pub samples: usize,
    /// A trace was there before and was replaced.
    pub replaced: bool,
}

/// Reads the trace in `file` by its extension: `.json` ([`trace_file::read`]), `.csv`
/// (`benchboot_energy::decode::csv`, at most its `MAX_FILE_BYTES`, read through
/// `benchboot_input`; the trace's clock is the file's own, aligned by the sync patterns).
///
/// # Errors
/// Another extension (the message lists those read), or the reader's error.
pub fn read_source(file: &Path) -> Result<Trace> {
    let ext = file
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("json") => trace_file::read(file),
        Some("csv") => {
            let text = benchboot_input::read_text(
                file,
                "a power trace (CSV: time_s,watts or time_s,volts,amps)",
                csv::MAX_FILE_BYTES,
            )?;
            let shown = file.file_name().map(|n| n.to_string_lossy().into_owned());
            let meter = format!("csv {}", shown.unwrap_or_default());
            let trace = csv::trace(&meter, text.strip_prefix('\u{feff}').unwrap_or(&text))
                .map_err(|e| anyhow!("{}: {e}", file.display()))?;
            trace_file::check(&trace)
                .map_err(|e| anyhow!("{}: {e}: give a CSV of at least two rows", file.display()))?;
            Ok(trace)
        }
        _ => bail!(
            "{}: not a trace this benchboot reads: give a .json trace `benchboot power \
             record` wrote, or a meter's .csv (header time_s,watts or time_s,volts,amps)",
            file.display()
        ),
    }
}

/// Attaches the trace in `what.file` to the run `what.run` of the store in
/// `store_dir`. The trace is read and checked first, then the run looked up, then,
/// under the store's lock, written as `power/<name>.json`.
///
/// # Errors
/// No store, no such run ([`StoreError`]); the file is no trace, or holds no sample; the
/// run has a trace and `replace` is false (the message names it and `--replace`); the
/// lock is held past [`lock::LOCK_WAIT`]; the file cannot be written.
pub fn import(store_dir: &Path, what: &Import) -> Result<Imported> {
    let mut trace = read_source(&what.file)?;
    if trace.samples.is_empty() {
        bail!(
            "{}: the trace holds no sample: record one (`benchboot power record`) while \
             the run runs",
            what.file.display()
        );
    }
    if let Some(p) = &what.position {
        trace.position = Some(p.clone());
    }
    let store = Store::open_existing(store_dir)?
        .ok_or_else(|| StoreError::NoStore(store_dir.to_owned()))?;
    let row = store.find(&what.run)?;
    let name = SafeName::new(NameKind::RunId, &row.stored_as).map_err(StoreError::BadRunId)?;
    let path = trace_file::in_store(store_dir, &name);
    let not_attached = || format!("the trace was not attached to run {}", row.stored_as);
    let locked = lock::acquire(store_dir, lock::Holder::Power).with_context(not_attached)?;
    let replaced = std::fs::symlink_metadata(&path).is_ok();
    if replaced && !what.replace {
        return Err(anyhow!(
            "run {} has a power trace already ({}): give --replace to replace it",
            row.stored_as,
            path.display()
        ));
    }
    trace_file::write(&path, &trace).with_context(not_attached)?;
    locked.release();
    Ok(Imported {
        run: row.stored_as,
        path,
        samples: trace.samples.len(),
        replaced,
    })
}

/// One line for a person: `attached 1234 samples to run r-1 (…/power/r-1.json)`.
pub fn summary(done: &Imported) -> String {
    format!(
        "attached {} samples to run {} ({}){}",
        done.samples,
        done.run,
        done.path.display(),
        if done.replaced {
            ", replacing its earlier trace"
        } else {
            ""
        }
    )
}

#[cfg(test)]
mod tests;
