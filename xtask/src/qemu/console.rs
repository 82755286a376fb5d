//! The board's console during a QEMU run: every line into `console.log`, and on the
//! terminal only what a person follows ([`Filter`]): the boot's milestones, PID 1's
//! step lines, one progress line per area measured and the verdicts, with stray bytes
//! (UART noise, control characters) taken out. The line grammar is `benchboot_console`'s.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

use benchboot_console::lines;
use benchboot_console::stdio::KERNEL_NO_CONSOLE;

/// Boot lines (kernel, U-Boot) that reach the terminal: the loader's and kernel's
/// milestones and the lines that say why a boot stopped. Any other line before PID 1
/// stays in the log.
pub const MILESTONES: &[&str] = &[
    "U-Boot SPL ",
    "U-Boot 20",
    "Starting kernel",
    "Booting Linux",
    "Kernel panic",
    "Internal error: Oops",
    "Unable to handle kernel",
    "Run /init",
    KERNEL_NO_CONSOLE,
];

/// What happened to each line: how many, and how many of each kind stayed off the
/// terminal (kind names: `document`, `figure`, `mark`, `saved`, `boot`, `hostapd`,
/// `verdicts begin`, `blank`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Lines the console printed (every one is in the log).
    pub lines: usize,
    /// Lines written to the terminal, progress lines included.
    pub shown: usize,
    /// Lines kept off the terminal, per kind.
    pub hidden: BTreeMap<&'static str, usize>,
}

impl Tally {
    /// `1869 lines, 62 on the terminal (551 document, 507 figure, ...)`.
    pub fn summary(&self) -> String {
        let mut kinds: Vec<(&&str, &usize)> = self.hidden.iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
        format!(
            "{} lines, {} on the terminal; kept off it: {}",
            self.lines,
            self.shown,
            if kinds.is_empty() {
                "none".to_string()
            } else {
                kinds.join(", ")
            }
        )
    }
}

/// Decides, line by line, what of the console reaches the terminal.
#[derive(Debug, Default)]
pub struct Filter {
    /// The area (first part of a figure's id) of the last progress line.
    area: Option<String>,
    /// Figures seen so far.
    figures: usize,
    pub tally: Tally,
}

impl Filter {
    /// The terminal's text for one console line (without its line end), or `None` when
    /// it stays in the log only. Console lines come back as `  | <line>` with control
    /// characters and U+FFFD (stray non-UTF-8 bytes) removed; the first figure of each
    /// new area as a progress line `  ~ measuring <area> (figure <n>)`.
    pub fn line(&mut self, raw: &str) -> Option<String> {
        self.tally.lines += 1;
        let out = self.decide(raw);
        match &out {
            Ok(_) => self.tally.shown += 1,
            Err(kind) => *self.tally.hidden.entry(kind).or_default() += 1,
        }
        out.ok()
    }

    fn decide(&mut self, raw: &str) -> Result<String, &'static str> {
        let text = printable(raw);
        if text.is_empty() {
            return Err("blank");
        }
        if benchboot_energy::marks::parse(&text).is_some() {
            return Err("mark");
        }
        // A line of PID 1's from its prefix on (UART noise can come first).
        let text = match text.find(benchboot_console::PREFIX) {
            Some(at) => text[at..].to_string(),
            None => text,
        };
        let Some(body) = text
            .starts_with(benchboot_console::PREFIX)
            .then(|| lines::protocol_text(&text))
            .flatten()
        else {
            return if MILESTONES.iter().any(|m| text.contains(m)) {
                Ok(format!("  | {text}"))
            } else {
                Err("boot")
            };
        };
        if let Some(f) = lines::parse_figure(body) {
            self.figures += 1;
            let area = f.id.split('.').next().unwrap_or_default();
            // Clock readings come between every area: no progress line of their own.
            if area == "clock" || self.area.as_deref() == Some(area) {
                return Err("figure");
            }
            self.area = Some(area.to_string());
            // The progress line stands for this figure line.
            return Ok(format!("  ~ measuring {area} (figure {})", self.figures));
        }
        if body.starts_with("document ") {
            return Err("document");
        }
        if body.starts_with("saved ") {
            return Err("saved");
        }
        if body.starts_with("verdicts begin ") {
            return Err("verdicts begin");
        }
        if body.starts_with("qemu stand-in hostapd: ") {
            return Err("hostapd");
        }
        Ok(format!("  | {text}"))
    }
}

/// `raw` without control characters (ANSI escape sequences whole), U+FFFD and
/// surrounding blanks; a tab becomes a space.
pub fn printable(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                // CSI: ESC [ parameters... final byte in @..~.
                if chars.peek() == Some(&'[') {
                    chars.next();
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
            }
            '\t' => out.push(' '),
            '\u{fffd}' => {}
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out.trim().to_string()
}

/// The emulated meter's stamps of the mark lines: (seconds since QEMU started, board ns).
pub type Stamps = Arc<Mutex<Vec<(f64, u64)>>>;

/// Reads QEMU's console `stdout` on a thread: every line (stray non-UTF-8 bytes read
/// lossily, line ends cut) into `log` and to `tx`, the energy marks stamped into
/// `stamps` ([`super::meter::stamp`]), the [`Filter`]'s lines on stderr. Returns the
/// tally, filled as lines come.
pub fn spawn_reader(
    stdout: impl Read + Send + 'static,
    mut log: std::fs::File,
    stamps: Option<Stamps>,
    started: Instant,
    tx: mpsc::Sender<String>,
) -> Arc<Mutex<Tally>> {
    let tally = Arc::new(Mutex::new(Tally::default()));
    let shared = Arc::clone(&tally);
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut filter = Filter::default();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let line = String::from_utf8_lossy(&buf)
                .trim_end_matches(['\r', '\n'])
                .to_owned();
            super::meter::stamp(stamps.as_deref(), &line, started);
            let _ = writeln!(log, "{line}");
            if let Some(shown) = filter.line(&line) {
                eprintln!("{shown}");
            }
            if let Ok(mut t) = shared.lock() {
                t.clone_from(&filter.tally);
            }
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    tally
}

/// The closing line of a run: how many console lines, how many reached the terminal,
/// and where all of them are.
pub fn closing_line(tally: &Mutex<Tally>, log: &Path) -> String {
    let summary = tally.lock().map(|t| t.summary()).unwrap_or_default();
    format!("qemu: console: {summary}; every line in {}", log.display())
}

#[cfg(test)]
mod tests;
