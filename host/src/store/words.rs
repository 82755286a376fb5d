//! The store's words for paths and errors, below every store module that reports: a
//! path with its control characters escaped, an I/O error in the OS's words, and the
//! read-only message with its fix.

use std::path::Path;

use anyhow::anyhow;

/// `p` for a terminal: control characters (a hostile file name) escaped.
pub fn shown(p: &Path) -> String {
    p.display()
        .to_string()
        .chars()
        .flat_map(|c| {
            let esc: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            esc
        })
        .collect()
}

/// The fix of a read-only store.
pub const READ_ONLY_FIX: &str =
    "give --store DIR for a writable folder, or make it writable (chmod u+w)";

/// An I/O error on `path` of a store before anything was written, as the read-only
/// message when it says so.
pub fn read_only_error(path: &Path, e: std::io::Error) -> anyhow::Error {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::ReadOnlyFilesystem | K::PermissionDenied => anyhow!(
            "{} is read-only ({}): nothing was stored: {READ_ONLY_FIX}",
            path.display(),
            benchboot_input::os_words(&e)
        ),
        _ => said(e, format!("writing {}", path.display())),
    }
}

/// An I/O error while `doing` something, the OS's words without its number
/// ([`benchboot_input::os_words`]): `creating /s/benchboot.db: permission denied`.
pub fn said(e: std::io::Error, doing: String) -> anyhow::Error {
    anyhow!("{doing}: {}", benchboot_input::os_words(&e))
}
