//! Fetching a results document from a board's read-only results server.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use benchboot_results::name::{NameKind, SafeName};
use benchboot_results::RunResults;

/// Downloads `http://<addr>/results.json` and checks its schema version.
///
/// # Errors
/// Network errors in words (with the address), a non-200 answer (no redirect is
/// followed: [`crate::http_get`]), more than a document's bound, or a document this version of
/// benchboot cannot read (the message says to update benchboot).
pub fn fetch(addr: &str, timeout: Duration) -> Result<(RunResults, String)> {
    let url = format!("http://{addr}/results.json");
    let sock = crate::discover::parse_addr(addr)?;
    // A zone (fe80::1%usb0) cannot go in a URL: such addresses are named `board` there,
    // and the request goes to the address resolved here whatever the URL's host says.
    let host = match sock {
        std::net::SocketAddr::V6(v6) if v6.scope_id() != 0 => format!("board:{}", sock.port()),
        _ => sock.to_string(),
    };
    // Bounded as every document reader is ([`benchboot_results::MAX_DOCUMENT_BYTES`]).
    let bytes = crate::http_get::get(&crate::http_get::Get {
        url: &format!("http://{host}/results.json"),
        shown: &url,
        timeout,
        at: Some(sock),
        token: None,
        max_bytes: benchboot_results::MAX_DOCUMENT_BYTES,
        what: "a results document",
        hint: ": is the board up and its ready line printed? is the address right?",
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{url}: not UTF-8 text (byte {})",
            e.utf8_error().valid_up_to()
        )
    })?;
    let results = RunResults::from_json(&text).with_context(|| url.to_string())?;
    Ok((results, text))
}

/// The folder `benchboot fetch` saves into when no `--out` is given.
pub const DEFAULT_DIR: &str = "benchboot-results";

/// Where `benchboot fetch` saves `results` with no `--out`: `benchboot-results/<run
/// id>.json`, the run id through the one gate ([`SafeName::new`]).
///
/// # Errors
/// A run id that cannot name a file (`../x`, `/abs`, `nul`): the document came from the
/// network, so it is refused, not written anywhere.
pub fn default_path(results: &RunResults) -> Result<PathBuf> {
    let name = SafeName::new(NameKind::RunId, &results.run_id)
        .context("not saved: give --out FILE to keep it under a name of your own")?;
    Ok(name.path_in(Path::new(DEFAULT_DIR), "json"))
}

/// Saves `text` to `path` atomically ([`crate::atomic_file::write`]); returns `path`.
pub fn save(path: &Path, text: &str) -> Result<PathBuf> {
    crate::atomic_file::write(path, text)?;
    Ok(path.to_owned())
}
