//! Where the host tool finds board files: the ones built into the binary (every
//! `boards/<name>.toml` and `boards/shared.toml` of the tree it was built from, listed by
//! `crates/board/build.rs`), and a user's own folder (`--boards DIR`), whose files win
//! by name. An installed or copied binary needs no source tree; xtask and the tests read
//! the checkout's `boards/` ([`crate::boards_dir`]).

use std::path::{Path, PathBuf};

use crate::{Board, BoardError, Shared, SHARED_FILE};

include!(concat!(env!("OUT_DIR"), "/builtin_boards.rs"));

/// How a built-in board file is named in messages: `built-in boards/<name>.toml` (its
/// stem is the board's name, as for a file on disk).
pub const BUILTIN_DIR: &str = "built-in boards";

/// The board files a command can use: built in, and optionally a user's folder.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// The user's folder (`--boards DIR`): its `<name>.toml` files win over the built-in
    /// ones of the same name; its `shared.toml`, if any, serves its own board files.
    dir: Option<PathBuf>,
}

impl Catalog {
    /// The board files built into this binary only.
    pub fn builtin() -> Catalog {
        Catalog { dir: None }
    }

    /// The built-in board files, with `dir`'s (if any) winning by name.
    pub fn with_dir(dir: Option<PathBuf>) -> Catalog {
        Catalog { dir }
    }

    /// Names of the board files built in, sorted.
    pub fn builtin_names() -> Vec<String> {
        BUILTIN_BOARDS
            .iter()
            .map(|(n, _)| (*n).to_owned())
            .collect()
    }

    /// The user's folder's board names, sorted; none without a folder.
    ///
    /// # Errors
    /// [`BoardError::Folder`] naming the folder when it cannot be listed
    /// ([`crate::folder::user_folder`]).
    fn user_names(&self) -> Result<Vec<String>, BoardError> {
        match &self.dir {
            None => Ok(Vec::new()),
            Some(dir) => crate::folder::user_folder(dir),
        }
    }

    /// Every board name this catalog knows (the user's and the built-in ones), sorted,
    /// each once.
    ///
    /// # Errors
    /// [`BoardError::Folder`] when the user's folder cannot be listed.
    pub fn names(&self) -> Result<Vec<String>, BoardError> {
        let mut names = self.user_names()?;
        names.extend(Catalog::builtin_names());
        names.sort();
        names.dedup();
        Ok(names)
    }

    /// Where the boards come from, for messages: `the boards built in`, or `DIR and the
    /// boards built in`.
    pub fn describe(&self) -> String {
        match &self.dir {
            None => "the boards built in".to_owned(),
            Some(d) => format!("{} and the boards built in", d.display()),
        }
    }

    /// The built-in `shared.toml`, parsed.
    ///
    /// # Errors
    /// As [`Shared::from_toml`] (only if this binary was built from a broken tree).
    pub fn builtin_shared() -> Result<Shared, BoardError> {
        Shared::from_toml(&Path::new(BUILTIN_DIR).join(SHARED_FILE), BUILTIN_SHARED)
    }

    /// Loads board `name`: the user's `DIR/<name>.toml` (checked against `DIR/shared.toml`
    /// when there is one, else the built-in one), else the built-in file.
    ///
    /// # Errors
    /// [`BoardError::Unknown`] listing the known boards (the first 32) when `name` is
    /// none of them; a user's folder that is none or has more than
    /// [`crate::MAX_FOLDER_ENTRIES`] entries ([`BoardError::Folder`]); a user's file that cannot be read
    /// ([`BoardError::Input`]: also a FIFO, a device, one past
    /// [`crate::MAX_BOARD_FILE_BYTES`]), parsed ([`BoardError::Parse`]: file, line and
    /// column) or used ([`BoardError::Invalid`]: file and field).
    pub fn load(&self, name: &str) -> Result<Board, BoardError> {
        if let Some(dir) = &self.dir {
            if self.user_names()?.iter().any(|n| n == name) {
                let file = dir.join(format!("{name}.toml"));
                // A regular file of at most MAX_BOARD_FILE_BYTES: a FIFO or a device
                // in the folder is refused, not waited on.
                let text = crate::read_board_file(&file)?;
                let shared = if dir.join(SHARED_FILE).exists() {
                    Shared::load(dir)?
                } else {
                    Catalog::builtin_shared()?
                };
                return Board::from_toml(&file, &text, &shared);
            }
        }
        let Some((_, text)) = BUILTIN_BOARDS.iter().find(|(n, _)| *n == name) else {
            return Err(BoardError::Unknown {
                name: name.to_owned(),
                from: self.describe(),
                known: crate::known_list(&self.names()?),
            });
        };
        let file = Path::new(BUILTIN_DIR).join(format!("{name}.toml"));
        Board::from_toml(&file, text, &Catalog::builtin_shared()?)
    }
}
