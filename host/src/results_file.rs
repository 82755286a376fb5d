//! Reading one results document from a file ([`load_path`]): bounded, checked, and a
//! message that says what to give instead. `benchboot report`, `show`, `compare` and
//! `power show` read through it (re-exported as `crate::results_file::load_path`).

use std::path::Path;

use anyhow::{bail, Result};
use benchboot_results::{ResultsError, RunResults};

/// Reads and checks the results document at `path`.
///
/// # Errors
/// Names the file and says what was expected when it is not a benchboot results document.
pub fn load_path(path: &Path) -> Result<RunResults> {
    // A regular file of at most 64 MiB: a device or a pipe (`report /dev/zero`) may
    // have no end, and is refused unread.
    let bytes = benchboot_results::read_document_file(path)?;
    let Ok(text) = String::from_utf8(bytes) else {
        bail!(
            "{}: not text, so not a benchboot results document (a JSON file saved by \
             `benchboot fetch` / `collect`)",
            path.display()
        );
    };
    let results = RunResults::from_json(&text).map_err(|e| {
        let hint = match &e {
            ResultsError::Json(_) | ResultsError::NoVersion | ResultsError::Shape(_) => {
                "\n  expected a benchboot results document (JSON with schema_version, run_id, \
                 plan, storage, ..., as saved by `benchboot fetch`)"
            }
            ResultsError::BadVersion(_)
            | ResultsError::Value { .. }
            | ResultsError::TooManyValues(_) => {
                "\n  read it again from the board (`benchboot fetch`) or the card \
                 (`benchboot collect --from-card`)"
            }
            // The error itself says to update benchboot.
            ResultsError::UnsupportedVersion { .. } => "",
        };
        anyhow::anyhow!("{}: {e}{hint}", path.display())
    })?;
    if let Some(note) = results.newer_schema_note() {
        crate::errln!("note: {}: {note}", path.display());
    }
    Ok(results)
}
