//! The console: human progress lines and the machine-readable protocol lines.
//!
//! The protocol (start line, figures as measured, then the verdicts and the whole
//! results document, then `ready`) is `benchboot_console`'s: its docs list every line.
//! This module prints: [`say`] a line, [`figure`] a measured figure, [`report`] the
//! closing blocks.

use std::io::Write;

use benchboot_console::stdio::Stdout;
use benchboot_console::{lines, Figure};
use benchboot_results::RunResults;

pub use benchboot_console::PREFIX;
/// The line the host waits for: results are on disk and served.
pub const READY: &str = "benchboot: ready";

/// Prints one line to the console. Never panics: a broken console is ignored, since
/// PID 1 must go on (and `println!` would panic). A line is progress: it beats the
/// watchdog heart ([`crate::heart::beat`]).
pub fn say(line: &str) {
    crate::heart::beat();
    print_line(line);
}

/// Tells one event to both of PID 1's readers: the console line `line` (a `String` or
/// `&str`, printed by [`say`] byte for byte, so protocol lines stay what the tests and
/// board farms parse) and one frame of the init's log (`crate::log`) at defmt `level`
/// with its own format and typed arguments (a few bytes a frame, decoded on the host
/// with the ELF). The console line comes first.
///
/// `tell!(info, format!("start run={id}"); "start run={=str}", id.as_str())`
macro_rules! tell {
    ($level:ident, $line:expr; $($frame:tt)+) => {{
        $crate::console::say(&$line);
        ::defmt::$level!($($frame)+);
    }};
}
pub(crate) use tell;

/// Prints one line like [`say`] without beating the watchdog heart: for the watchdog's
/// own thread, whose lines are no sign of the main sequence's progress.
pub fn print_line(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", console_line(line));
    let _ = out.flush();
}

/// The console text of `line`: [`PREFIX`], a space, and `line` with every control and
/// bidi character written out (`benchboot_results::text::escape`, `\u{1b}` form). Lines
/// quote what a plan, a card or the network said (a label, a file's error); a newline
/// in one would start a line of its own (a fake `benchboot: ready` for the host and
/// LAVA), an escape sequence would drive the reader's terminal. Protocol lines are
/// printable ASCII and pass unchanged.
pub fn console_line(line: &str) -> String {
    format!("{PREFIX} {}", benchboot_results::text::escape(line))
}

/// Prints `f`'s figure line (`case=<id> value=<number> units=<unit>`); a value that is
/// not a finite number is left off the console (the document keeps the measurement).
pub fn figure(f: &Figure) {
    if let Some(line) = lines::figure(f) {
        say(&line);
    }
}

/// Prints every figure of `figures`.
pub fn figures(figures: &[Figure]) {
    figures.iter().for_each(figure);
}

/// PID 1's stdout as the kernel gave it ([`benchboot_console::stdio`]): `fstat(2)` of
/// fd 1, a character device 5:1 for `/dev/console`, 1:3 for the `/dev/null` Rust's
/// runtime put there when the kernel had no console. `Other` when fstat fails.
pub fn stdout_kind() -> Stdout {
    match rustix::fs::fstat(rustix::stdio::stdout()) {
        Ok(st) => {
            let kind = rustix::fs::FileType::from_raw_mode(st.st_mode);
            let rdev = st.st_rdev;
            Stdout::classify(
                kind == rustix::fs::FileType::CharacterDevice,
                rustix::fs::major(rdev),
                rustix::fs::minor(rdev),
            )
        }
        Err(_) => Stdout::Other,
    }
}

/// The warning for a run with no console ([`benchboot_console::stdio::missing_console`]):
/// reads fd 1 ([`stdout_kind`]) and, only then, the kernel's log for its line about it.
pub fn missing_console(cmdline: &str) -> Option<String> {
    let kind = stdout_kind();
    if kind != Stdout::Null {
        return None;
    }
    let log = crate::sys::kernel_log().ok();
    benchboot_console::stdio::missing_console(kind, cmdline, log.as_deref())
}

/// The closing blocks of a run, for readers with nothing but the console (a LAVA farm, a
/// serial cable): the end of the figures, the whole results document `json` (the bytes
/// served) in checksummed chunks, then the verdicts of the whole run (last: a farm
/// stops reading at their end line, the document must be in its log by then). While
/// they are printed the kernel's console log level is lowered to emergencies only
/// (`/proc/sys/kernel/printk`, restored after), so no kernel message lands inside a
/// line.
pub fn report(r: &RunResults, json: &str) {
    let saved = std::fs::read_to_string(PRINTK).ok();
    if saved.is_some() {
        let _ = std::fs::write(PRINTK, "1");
    }
    let count = benchboot_console::figures::all(r)
        .iter()
        .filter(|f| f.value.is_finite())
        .count();
    say(&lines::figures_end(&r.run_id, count));
    for line in benchboot_console::document::encode(&r.run_id, json.as_bytes()) {
        say(&line);
    }
    let verdicts = benchboot_console::verdicts::all(r);
    say(&lines::verdicts_begin(&r.run_id));
    for v in &verdicts {
        say(&lines::verdict(v));
    }
    say(&lines::verdicts_end(&r.run_id, &verdicts));
    if let Some(level) = saved.as_deref().and_then(|t| t.split_whitespace().next()) {
        let _ = std::fs::write(PRINTK, level);
    }
}

/// The kernel's console log levels (proc(5): console, default, minimum, boot-time
/// default); writing one number sets the console level.
const PRINTK: &str = "/proc/sys/kernel/printk";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_newline_or_escape_cannot_make_a_line_of_its_own() {
        // A card label that ends one line and fakes the host's ready marker, then
        // clears the reader's screen.
        let hostile = "storage: target \"x\nbenchboot: ready\u{1b}[2J\" refused";
        let printed = console_line(hostile);
        assert_eq!(
            printed,
            "benchboot: storage: target \"x\\u{a}benchboot: ready\\u{1b}[2J\" refused"
        );
        assert_eq!(printed.lines().count(), 1);
        // Protocol lines are printed byte for byte.
        let figure = "figure case=storage.card.seq-read.1m value=21.5 units=MiB/s";
        assert_eq!(console_line(figure), format!("benchboot: {figure}"));
    }
}
