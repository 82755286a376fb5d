//! `benchboot log --elf <board>.init.elf --frames log.defmt`: the init's log as lines.
//!
//! The init encodes its log as defmt frames (firmware/src/log.rs: rzCOBS, wire format
//! version 4, a `{=u64:us}` timestamp of `CLOCK_BOOTTIME`) and writes them to its results
//! partition as `log.defmt`, next to `results.json`. The format strings are not on the
//! board: they are symbols of the unstripped init that `cargo xtask image` kept beside the
//! image (`target/images/<board>.init.elf`). Decode with the ELF of the very build that
//! ran: another build's table gives malformed frames or wrong text.

use std::path::PathBuf;

use anyhow::{Context, Result};
use defmt_decoder::{DecodeError, Table};

/// Largest `--elf` read: 64 MiB. The unstripped init is a few MiB (its code, symbols
/// and the defmt table; the `firmware` profile builds no debug info); a file past
/// this is not an init.
pub const MAX_ELF_BYTES: u64 = 64 << 20;
/// Largest `--frames` read: 16 MiB, 64 times the init's log buffer (firmware/src/log.rs
/// `CAPACITY`, 256 KiB: the init drops frames past it and writes at most that much
/// as `log.defmt`).
pub const MAX_FRAMES_BYTES: u64 = 16 << 20;

/// Arguments of `benchboot log`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:
  benchboot log --elf target/images/rpi-zero-w.init.elf --frames /media/$USER/BBRESULTS/log.defmt")]
pub struct LogArgs {
    /// The unstripped init that wrote the frames: `target/images/<board>.init.elf`, kept
    /// by `cargo xtask image` beside the image it built.
    #[arg(long)]
    pub elf: PathBuf,
    /// The frames: `log.defmt` from the card's results partition.
    #[arg(long)]
    pub frames: PathBuf,
}

/// One log frame, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Seconds since boot (`CLOCK_BOOTTIME`) with µs, as defmt prints `{=u64:us}`:
    /// `12.345678`; empty if the build had no timestamp.
    pub timestamp: String,
    /// `trace`, `debug`, `info`, `warn`, `error`; empty for `defmt::println!`.
    pub level: String,
    pub message: String,
}

/// Every frame of a stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decoded {
    pub lines: Vec<Line>,
    /// Frames the table could not decode (corrupt, or another build's ELF).
    pub malformed: usize,
    /// Bytes after the last whole frame (a file cut short).
    pub trailing_bytes: usize,
}

/// Decodes `frames` (a stream of rzCOBS defmt frames) with the table of `elf`, every
/// line kept (for tests; `benchboot log` prints each line as it is decoded instead,
/// [`decode_each`]).
///
/// # Errors
/// As [`decode_each`].
pub fn decode(elf: &[u8], frames: &[u8]) -> Result<Decoded> {
    let mut lines = Vec::new();
    let mut out = decode_each(elf, frames, |l| lines.push(l))?;
    out.lines = lines;
    Ok(out)
}

/// Decodes `frames` with the table of `elf`, giving each line to `each` as it is
/// decoded: nothing is kept (a frame of a few bytes can name a long format string, so
/// a file's lines can take far more memory than the file). The result counts the
/// malformed frames and trailing bytes; its `lines` is empty.
///
/// # Errors
/// When `elf` is not an ELF file, has no defmt table (a stripped init: the image's own
/// copy) or was built with another defmt wire version than this decoder reads.
pub fn decode_each(elf: &[u8], frames: &[u8], mut each: impl FnMut(Line)) -> Result<Decoded> {
    if !elf.starts_with(b"\x7fELF") {
        anyhow::bail!(
            "not an ELF file: give the unstripped init the image build kept, \
             target/images/<board>.init.elf"
        );
    }
    let table = Table::parse(elf)
        .context("reading its defmt table")?
        .context(
            "it has no defmt table (.defmt section and symbols): give the unstripped init, \
             target/images/<board>.init.elf, not the stripped copy in the image",
        )?;
    let mut stream = table.new_stream_decoder();
    let mut out = Decoded::default();
    // One frame (up to and with its 0x00 separator) given to the decoder at a time: its
    // buffer then holds one frame, and removing a decoded frame from its front moves
    // nothing else. The whole file at once made every frame move the rest of the
    // buffer: quadratic (800,000 four-byte frames took 31 s, 16 MiB of them minutes).
    for frame in frames.split_inclusive(|&b| b == 0) {
        stream.received(frame);
        loop {
            match stream.decode() {
                Ok(f) => each(Line {
                    timestamp: f
                        .display_timestamp()
                        .map(|t| t.to_string())
                        .unwrap_or_default(),
                    level: f.level().map(|l| l.as_str().to_owned()).unwrap_or_default(),
                    message: f.display_message().to_string(),
                }),
                Err(DecodeError::Malformed) => out.malformed += 1,
                Err(DecodeError::UnexpectedEof) => break,
            }
        }
    }
    out.trailing_bytes = frames.len() - frames.iter().rposition(|&b| b == 0).map_or(0, |i| i + 1);
    Ok(out)
}

/// One line of output: `      12.345678 INFO  message`.
pub fn format_line(l: &Line) -> String {
    // The message's arguments are the board's (names from the plan, the card, the
    // network): a control character in one is printed escaped.
    format!(
        "{:>15} {:<5} {}",
        l.timestamp,
        l.level.to_uppercase(),
        benchboot_results::text::escape_lines(&l.message)
    )
}

/// `benchboot log`: prints every frame as a line; problems go to stderr.
///
/// # Errors
/// When a file cannot be read, or as [`decode`].
pub fn run(args: &LogArgs) -> Result<()> {
    // Regular files only, bounded: `--frames /dev/zero` grew to the memory limit and
    // a FIFO waited for ever.
    let elf = benchboot_input::read(&args.elf, "an init ELF", MAX_ELF_BYTES).context("--elf")?;
    let frames = benchboot_input::read(&args.frames, "a defmt log (log.defmt)", MAX_FRAMES_BYTES)
        .context("--frames")?;
    let mut lines = 0usize;
    let decoded = decode_each(&elf, &frames, |l| {
        lines += 1;
        crate::outln!("{}", format_line(&l));
    })
    .with_context(|| format!("--elf {}", args.elf.display()))?;
    if lines == 0 && decoded.malformed == 0 {
        crate::errln!(
            "benchboot log: {} holds no frames ({} bytes): the init had logged nothing \
             when it last saved, or this is not a log.defmt",
            args.frames.display(),
            frames.len()
        );
    }
    if decoded.malformed > 0 {
        crate::errln!(
            "benchboot log: {} frame(s) could not be decoded: is {} the build that ran?",
            decoded.malformed,
            args.elf.display()
        );
    }
    if decoded.trailing_bytes > 0 {
        crate::errln!(
            "benchboot log: {} ends with {} byte(s) of an incomplete frame",
            args.frames.display(),
            decoded.trailing_bytes
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_a_defmt_table_is_refused_with_what_to_give() {
        let err = format!("{:#}", decode(b"not an elf", &[]).unwrap_err());
        assert!(err.starts_with("not an ELF file"), "{err}");
        assert!(err.contains("target/images/<board>.init.elf"), "{err}");
        // An ELF built without defmt: any system program.
        let ls = std::fs::read("/bin/ls").expect("/bin/ls");
        let err = format!("{:#}", decode(&ls, &[]).unwrap_err());
        assert!(err.contains("no defmt table"), "{err}");
    }

    /// `--frames /dev/zero` read until the memory ran out; a FIFO waited for ever.
    #[cfg(unix)]
    #[test]
    fn frames_from_a_device_are_refused_unread() {
        let args = LogArgs {
            elf: "/bin/ls".into(),
            frames: "/dev/zero".into(),
        };
        let e = format!("{:#}", run(&args).unwrap_err());
        assert_eq!(
            e,
            "--frames: /dev/zero: a character device, not a regular file: \
             a defmt log (log.defmt) is read only from a file (a device or a pipe may never \
             end); save it to a file and give that"
        );
        let args = LogArgs {
            elf: "/dev/zero".into(),
            frames: "/dev/null".into(),
        };
        let e = format!("{:#}", run(&args).unwrap_err());
        assert!(e.starts_with("--elf: /dev/zero: a character device"), "{e}");
    }

    #[test]
    fn an_elf_past_the_bound_is_refused_by_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let elf = dir.path().join("big.elf");
        std::fs::File::create(&elf)
            .unwrap()
            .set_len(MAX_ELF_BYTES + 1)
            .unwrap();
        let args = LogArgs {
            elf: elf.clone(),
            frames: "/dev/null".into(),
        };
        let e = format!("{:#}", run(&args).unwrap_err());
        assert!(
            e.ends_with(": 67108865 bytes is more than an init ELF has (64 MiB at most): check that it is an init ELF"),
            "{e}"
        );
    }

    #[test]
    fn lines_are_aligned() {
        let l = Line {
            timestamp: "12.345678".into(),
            level: "warn".into(),
            message: "hot".into(),
        };
        assert_eq!(format_line(&l), "      12.345678 WARN  hot");
    }
}
