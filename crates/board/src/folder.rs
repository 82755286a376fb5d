//! Reading a user's board folder (`--boards DIR`) within bounds: each file through the
//! one reader of named files (crates/input), the folder listed no further than
//! [`MAX_FOLDER_ENTRIES`] entries, error lines naming at most [`MAX_NAMES_LISTED`] boards.
//! A folder that cannot be listed is said in words ([`user_folder`]): a board file
//! given in its place, the bound, the OS's words without its error number.

use std::path::{Path, PathBuf};

use crate::{names, BoardError, Unlisted};

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

/// The board names of a user's folder `dir` (`--boards DIR`), as [`crate::list`].
///
/// # Errors
/// [`BoardError::Folder`]: `dir` is a file (give the folder that holds it), something
/// else or nothing, holds more than [`MAX_FOLDER_ENTRIES`] entries, or cannot be read
/// (the OS's words, without its error number).
pub fn user_folder(dir: &Path) -> Result<Vec<String>, BoardError> {
    let said = |message: String| BoardError::Folder {
        dir: dir.to_owned(),
        message,
    };
    const TAKES: &str = "--boards takes a folder of board files (<name>.toml)";
    match std::fs::metadata(dir) {
        Ok(m) if m.is_file() => {
            let holder = match dir.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
                _ => PathBuf::from("."),
            };
            return Err(said(format!(
                " is a file: {TAKES}, not one board file; give the folder that holds it \
                 (--boards {}) or copy the file into a folder of its own",
                holder.display()
            )));
        }
        Ok(m) if !m.is_dir() => {
            return Err(said(format!(
                " is {}: {TAKES}",
                benchboot_input::kind_of(&m.file_type())
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(said(format!(": no such folder: {TAKES}")));
        }
        _ => {}
    }
    names(dir).map_err(|e| match e {
        Unlisted::TooMany => said(format!(
            " holds more than {MAX_FOLDER_ENTRIES} entries, the most a board folder is read \
             to (the project's has a dozen board files): give the folder of your board \
             files, or move what is not one out of it"
        )),
        Unlisted::Io(e) => said(format!(
            ": cannot list it: {}: {TAKES}",
            benchboot_input::os_words(&e)
        )),
    })
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
