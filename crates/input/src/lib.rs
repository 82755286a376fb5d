//! The one reader of files a person names on the command line or in a folder they give
//! (`plan check FILE`, `report FILE`, `log --elf/--frames`, `--boards DIR`, `collect
//! --from-log FILE`, a card's plan file, ...): every such file is read through [`read`].
//!
//! Rules, the same for every caller:
//! - The file is opened without blocking (`O_NONBLOCK` on Unix: opening a FIFO with no
//!   writer returns at once) and judged by what was opened (`fstat` of the handle, not
//!   the name): anything but a regular file is refused ([`InputError::NotAFile`]). A
//!   FIFO or a terminal may never end and `/dev/zero` never does; reading them "up to a
//!   cap" would still wait for ever on a silent writer.
//! - At most `max_bytes` are read: a file whose size is larger is refused before a byte
//!   is read, and one that grows while it is read is refused after `max_bytes` + 1
//!   ([`InputError::TooLarge`]). Each caller's cap is a constant documented where it is
//!   defined, with its source.
//! - Every message names the file, says what it is or how big, the cap, and what to do.
//!
//! [`open`] is the same check for readers that take a disk too (the card reader): it
//! lets block devices through as well (and on macOS the raw `/dev/rdiskN`, which are
//! character devices), never FIFOs, sockets or other character devices.
#![forbid(unsafe_code)]

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Why a named file was not read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be opened (not found, no permission, ...). The OS's error
    /// is in the message, not a `source` (a chain printer would repeat it).
    #[error("reading {}: {io}", path.display())]
    Open { path: PathBuf, io: io::Error },
    /// Not a regular file (or, for [`open`] with [`Accept::FileOrDisk`], not a disk
    /// either): `kind` says what it is, e.g. `a FIFO (named pipe)`.
    #[error(
        "{}: {kind}, not a regular file: {what} is read only from a file (a device or a \
         pipe may never end); save it to a file and give that",
        path.display()
    )]
    NotAFile {
        path: PathBuf,
        kind: &'static str,
        what: String,
    },
    /// More bytes than `what` can have: by the file's size (`size` `Some`) or by what a
    /// read gave (`None`: the file grew while read).
    #[error(
        "{}: {} is more than {what} has ({} at most): check that it is {what}",
        path.display(),
        size.map_or("what it gives".to_owned(), size_text),
        size_text(*max)
    )]
    TooLarge {
        path: PathBuf,
        size: Option<u64>,
        max: u64,
        what: String,
    },
    /// A read error after the file was opened.
    #[error("reading {}: {io}", path.display())]
    Read { path: PathBuf, io: io::Error },
}

impl InputError {
    /// The [`io::ErrorKind`] this error is closest to (for callers that return
    /// `io::Result`): `NotFound` / `PermissionDenied` as opening said, `InvalidInput`
    /// for a file of the wrong kind, `FileTooLarge`, or the read's own.
    pub fn kind(&self) -> io::ErrorKind {
        match self {
            InputError::Open { io, .. } | InputError::Read { io, .. } => io.kind(),
            InputError::NotAFile { .. } => io::ErrorKind::InvalidInput,
            InputError::TooLarge { .. } => io::ErrorKind::FileTooLarge,
        }
    }
}

impl From<InputError> for io::Error {
    fn from(e: InputError) -> io::Error {
        io::Error::new(e.kind(), e.to_string())
    }
}

/// What the OS said of `e`, in its words only: std's `Display` of an OS error adds
/// `(os error N)` (`No such file or directory (os error 2)`), a number for no reader of
/// a message; the first letter lowered, as messages start (`no such file or
/// directory`; Windows's closing period dropped). Errors that are not the OS's are as
/// `Display` says.
pub fn os_words(e: &io::Error) -> String {
    let text = e.to_string();
    let Some(code) = e.raw_os_error() else {
        return text;
    };
    // Windows ends its words with a period.
    let words = text
        .strip_suffix(&format!(" (os error {code})"))
        .unwrap_or(&text)
        .trim_end_matches('.');
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => format!("error {code} of the OS"),
    }
}

/// `N GiB`, `N MiB` or `N KiB` when `n` is a whole number of them, else `N bytes`.
pub fn size_text(n: u64) -> String {
    if n >= 1 << 30 && n.is_multiple_of(1 << 30) {
        format!("{} GiB", n >> 30)
    } else if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

/// What [`open`] lets through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accept {
    /// Regular files only.
    File,
    /// Regular files and disks (block devices; on macOS also the raw character devices
    /// `/dev/rdiskN`): for a card or an image of one.
    FileOrDisk,
}

/// Opens `path` for reading without blocking and checks what it is, by the opened
/// handle: a regular file (or a disk, for [`Accept::FileOrDisk`]). `what` names the
/// expected content in messages, e.g. `a plan file`.
///
/// # Errors
/// [`InputError::Open`], or [`InputError::NotAFile`] naming what the path is.
pub fn open(path: &Path, what: &str, accept: Accept) -> Result<(File, Metadata), InputError> {
    let file = open_nonblocking(path).map_err(|io| InputError::Open {
        path: path.to_owned(),
        io,
    })?;
    let meta = file.metadata().map_err(|io| InputError::Read {
        path: path.to_owned(),
        io,
    })?;
    check(path, &meta, what, accept)?;
    Ok((file, meta))
}

/// Judges `meta` (of `path`, as [`open`] does of its handle): for a caller that opens
/// `path` itself, e.g. to write it (`plan write --card`), after `std::fs::metadata`.
///
/// # Errors
/// [`InputError::NotAFile`] naming what the path is.
pub fn check(path: &Path, meta: &Metadata, what: &str, accept: Accept) -> Result<(), InputError> {
    let ft = meta.file_type();
    let ok = ft.is_file() || (accept == Accept::FileOrDisk && is_disk(&ft));
    if !ok {
        return Err(InputError::NotAFile {
            path: path.to_owned(),
            kind: kind_of(&ft),
            what: what.to_owned(),
        });
    }
    Ok(())
}

/// The bytes of the regular file `path`, at most `max_bytes` of them. `what` names the
/// expected content in messages (`a plan file`, `a defmt log (log.defmt)`).
///
/// # Errors
/// [`InputError::Open`], [`InputError::NotAFile`] (a FIFO, a device, a folder, a
/// socket), [`InputError::TooLarge`] (by its size before reading, or after reading
/// `max_bytes` + 1 when it grew), [`InputError::Read`].
pub fn read(path: &Path, what: &str, max_bytes: u64) -> Result<Vec<u8>, InputError> {
    let (file, meta) = open(path, what, Accept::File)?;
    let too_large = |size| InputError::TooLarge {
        path: path.to_owned(),
        size,
        max: max_bytes,
        what: what.to_owned(),
    };
    if meta.len() > max_bytes {
        return Err(too_large(Some(meta.len())));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|io| InputError::Read {
            path: path.to_owned(),
            io,
        })?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(None));
    }
    Ok(bytes)
}

/// [`read`] as UTF-8 text, a leading byte-order mark kept (callers that allow one
/// strip it).
///
/// # Errors
/// As [`read`]; [`InputError::Read`] with `InvalidData` when the bytes are not UTF-8.
pub fn read_text(path: &Path, what: &str, max_bytes: u64) -> Result<String, InputError> {
    let bytes = read(path, what, max_bytes)?;
    String::from_utf8(bytes).map_err(|e| InputError::Read {
        path: path.to_owned(),
        io: io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text (byte {} of the file): is it {what}?",
                e.utf8_error().valid_up_to()
            ),
        ),
    })
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// What a file of type `ft` is, in words for a message: `a FIFO (named pipe)`, `a
/// folder`, `a symbolic link` (of `symlink_metadata`), `a regular file`, ...
pub fn kind_of(ft: &std::fs::FileType) -> &'static str {
    if ft.is_symlink() {
        return "a symbolic link";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if ft.is_socket() {
            return "a socket";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
    }
    if ft.is_dir() {
        "a folder"
    } else if ft.is_file() {
        "a regular file"
    } else {
        "not a file"
    }
}

/// A block device; on macOS also a character device (`/dev/rdiskN`, the raw disk).
fn is_disk(ft: &std::fs::FileType) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        ft.is_block_device() || (cfg!(target_os = "macos") && ft.is_char_device())
    }
    #[cfg(not(unix))]
    {
        let _ = ft;
        false
    }
}

#[cfg(test)]
mod tests;
