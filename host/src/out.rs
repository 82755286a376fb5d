//! The one way the host tool writes to the terminal. Text from outside (a results
//! document, a console log, a card, a plan file, an SSID, a disk's model string)
//! reaches almost every line benchboot prints; here every line passes
//! [`escape_lines`](benchboot_results::text::escape_lines) (control and bidi characters
//! written as `\u{1b}`, line breaks kept) and JSON passes
//! [`escape_json`](benchboot_results::text::escape_json) (the same document to a JSON
//! reader), so nothing a stranger wrote can clear the screen, move the cursor, retitle
//! the window or fake a line. Escaping is idempotent: text escaped earlier (the
//! report's cells) comes through unchanged.
//!
//! The tidy test (`xtask/tests/tidy.rs`, rule `host_prints_only_through_its_out_module`) refuses
//! `print!`, `println!`, `eprint!`, `eprintln!`, `dbg!`, `io::stdout` and `io::stderr`
//! anywhere else in `host/src/` but test files. A write that fails (a closed pipe:
//! `benchboot report | head`) is dropped instead of panicking as `println!` does.

use std::io::Write;

use benchboot_results::text::{escape_json, escape_lines};

/// Where a write goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output: the command's product (tables, reports, JSON).
    Out,
    /// Standard error: progress, notes, warnings, errors, questions.
    Err,
}

/// `s` as it is written: escaped, line breaks kept.
pub fn escaped(s: &str) -> std::borrow::Cow<'_, str> {
    escape_lines(s)
}

fn write(stream: Stream, s: &str) {
    // A closed pipe or a full disk behind a redirect is the reader's choice, not an
    // error worth a panic; there is nowhere left to report it.
    let _ = match stream {
        Stream::Out => {
            let mut o = std::io::stdout().lock();
            o.write_all(s.as_bytes()).and_then(|()| o.flush())
        }
        Stream::Err => {
            let mut e = std::io::stderr().lock();
            e.write_all(s.as_bytes()).and_then(|()| e.flush())
        }
    };
}

/// True when `stream` is a terminal (tables fit its width, questions can be asked).
pub fn is_terminal(stream: Stream) -> bool {
    use std::io::IsTerminal as _;
    match stream {
        Stream::Out => std::io::stdout().is_terminal(),
        Stream::Err => std::io::stderr().is_terminal(),
    }
}

/// Standard output as a byte channel, unescaped: only for `benchboot relay`, whose
/// standard output is the socket QEMU's guestfwd hands it (never a terminal), carrying
/// the board's bytes unchanged.
pub fn relay_channel() -> std::io::Stdout {
    std::io::stdout()
}

/// `message` without std's ` (os error N)` after the OS's own words (`No such file or
/// directory (os error 2)` is `No such file or directory`): the number says nothing the
/// words do not, on Linux and macOS. Windows keeps it (its hints name the codes).
pub fn without_os_error_codes(message: &str) -> String {
    if cfg!(windows) {
        return message.to_owned();
    }
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find(" (os error ") {
        let tail = &rest[i + " (os error ".len()..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && tail[digits..].starts_with(')') {
            out.push_str(&rest[..i]);
            rest = &tail[digits + 1..];
        } else {
            out.push_str(&rest[..i + 1]);
            rest = &rest[i + 1..];
        }
    }
    out.push_str(rest);
    out
}

/// Writes `s` escaped to `stream`, as it is (no line break added).
pub fn text(stream: Stream, s: &str) {
    write(stream, &escape_lines(s));
}

/// Writes `s` escaped and a line break to `stream`.
pub fn line(stream: Stream, s: &str) {
    let mut t = escape_lines(s).into_owned();
    t.push('\n');
    write(stream, &t);
}

/// Writes JSON text (serde_json's) to standard output through
/// [`escape_json`](benchboot_results::text::escape_json), and a line break.
pub fn json(s: &str) {
    let mut t = escape_json(s).into_owned();
    if !t.ends_with('\n') {
        t.push('\n');
    }
    write(Stream::Out, &t);
}

/// `print!` through [`text`]: the command's product on standard output, escaped.
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => { $crate::out::text($crate::out::Stream::Out, &format!($($t)*)) };
}

/// `println!` through [`line`]: one line on standard output, escaped.
#[macro_export]
macro_rules! outln {
    ($($t:tt)*) => { $crate::out::line($crate::out::Stream::Out, &format!($($t)*)) };
}

/// `eprint!` through [`text`]: standard error with no line break (a question), escaped.
#[macro_export]
macro_rules! err {
    ($($t:tt)*) => { $crate::out::text($crate::out::Stream::Err, &format!($($t)*)) };
}

/// `eprintln!` through [`line`]: one line on standard error, escaped.
#[macro_export]
macro_rules! errln {
    ($($t:tt)*) => { $crate::out::line($crate::out::Stream::Err, &format!($($t)*)) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_escaped_and_escaping_twice_changes_nothing() {
        let hostile = "plan x\u{1b}[2J\u{1b}[Hfake line\r\nnext\u{202e}";
        let once = escaped(hostile);
        assert_eq!(
            once,
            "plan x\\u{1b}[2J\\u{1b}[Hfake line\\u{d}\nnext\\u{202e}"
        );
        assert_eq!(escaped(&once), once);
        assert_eq!(escaped("plain\ntext\n"), "plain\ntext\n");
    }

    #[cfg(unix)]
    #[test]
    fn os_error_codes_are_left_out_and_nothing_else() {
        assert_eq!(
            without_os_error_codes(
                "reading a.json: No such file or directory (os error 2): x (os error) (os error 7x)"
            ),
            "reading a.json: No such file or directory: x (os error) (os error 7x)"
        );
        assert_eq!(without_os_error_codes("plain"), "plain");
    }

    #[test]
    fn json_stays_json() {
        let doc = serde_json::json!({ "id": "a\u{202e}b\u{7f}\u{1b}" }).to_string();
        let shown = escape_json(&doc);
        assert!(!shown.chars().any(benchboot_results::text::needs_escape));
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back["id"], "a\u{202e}b\u{7f}\u{1b}");
    }
}
