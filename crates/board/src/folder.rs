//! Reading a user's board folder (`--boards DIR`) within bounds: each file through the
//! one reader of named files (crates/input), the folder listed no further than
//! [`MAX_FOLDER_ENTRIES`] entries, error lines naming at most [`MAX_NAMES_LISTED`] boards.

use std::path::Path;

use crate::BoardError;

/// Largest board file (or `shared.toml`) read: 256 KiB. The shipped board files are at
/// most 6 KiB and `shared.toml` 9 KiB: a board file lists settings, not data.
pub const MAX_BOARD_FILE_BYTES: u64 = 256 << 10;
/// Most entries of a board folder ([`crate::list`], `--boards DIR`) looked at: 4096. The
/// project's `boards/` has a dozen; a folder with more is not one of board files (a
/// home folder, `/dev`), and listing it whole would make an error line of megabytes.
pub const MAX_FOLDER_ENTRIES: usize = 4096;
/// Most board names an error lists ([`BoardError::Unknown`]'s `known`).
pub const MAX_NAMES_LISTED: usize = 32;

/// The text of the board file (or `shared.toml`) `file`, through the one reader of
/// named files: a regular file of at most [`MAX_BOARD_FILE_BYTES`], UTF-8.
///
/// # Errors
/// [`BoardError::Input`]: not found, no regular file, too large, not UTF-8.
pub fn read_board_file(file: &Path) -> Result<String, BoardError> {
    Ok(benchboot_input::read_text(
        file,
        "a board file",
        MAX_BOARD_FILE_BYTES,
    )?)
}

/// `names` joined for a message, at most [`MAX_NAMES_LISTED`] of them and how many
/// more.
pub fn known_list(names: &[String]) -> String {
    let mut s = names
        .iter()
        .take(MAX_NAMES_LISTED)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > MAX_NAMES_LISTED {
        s.push_str(&format!(" and {} more", names.len() - MAX_NAMES_LISTED));
    }
    s
}
