//! The console lines PID 1 prints at every energy mark, and their parser: the host reads
//! them back from a console log or a live console and stamps each with its arrival time
//! (`crate::Trace::console`). One line per event, printable ASCII, after [`PREFIX`] and
//! a space:
//!
//! | line (after `benchboot: `) | when |
//! |---|---|
//! | `mark begin <step> t_ns=<n>` | a step's window opens (after its before-snapshot) |
//! | `mark end <step> t_ns=<n>` | it closes (before its after-snapshot) |
//! | `sync <start\|end> t_ns=<begin> slot_ns=<n> code=<bits>` | just before a sync pattern's first slot, which starts at `begin` |
//! | `idle <phase> begin t_ns=<n>` | an idle phase starts (`radios-off`, `link%20<if>`) |
//! | `idle <phase> end t_ns=<n>` | it ends |
//!
//! Times are the board's `CLOCK_BOOTTIME`, ns. `<step>` is the step id of the step's
//! `StepHealth` and `<phase>` the `IdleMark::phase`, each escaped by [`escape_name`]:
//! every byte outside `!`..=`~` and `%` itself becomes `%XX` (so `link usb0` is
//! `link%20usb0`), and a name is one space-free token. Names are 1 to
//! [`MAX_NAME_BYTES`] bytes; a name outside that gets no line.
//!
//! The parser ([`parse`]) takes any line at all (prefix noise, ANSI escape sequences,
//! `\r`, a stranger's log): it returns `None` for anything that is not exactly one of
//! these lines, and never panics.

use std::fmt::Write as _;

/// The prefix of every PID 1 console line (`benchboot_console::PREFIX`).
pub const PREFIX: &str = "benchboot:";

/// Longest step or phase name a mark line carries, bytes (before escaping).
pub const MAX_NAME_BYTES: usize = 200;

/// Longest line [`parse`] looks at, bytes; longer lines are no mark.
pub const MAX_LINE_BYTES: usize = 4096;

/// Longest sync code, slots.
pub const MAX_CODE_SLOTS: usize = 64;

/// Which edge of a window a line marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    Begin,
    End,
}

impl Edge {
    /// `begin` or `end`.
    pub fn name(self) -> &'static str {
        match self {
            Edge::Begin => "begin",
            Edge::End => "end",
        }
    }

    fn from_name(s: &str) -> Option<Edge> {
        match s {
            "begin" => Some(Edge::Begin),
            "end" => Some(Edge::End),
            _ => None,
        }
    }
}

/// Which of the two sync patterns a line announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncAt {
    /// At the run's start, before the first measurement.
    Start,
    /// At the run's end, after the last network test.
    End,
}

impl SyncAt {
    /// `start` or `end` (`SyncMark::at`).
    pub fn name(self) -> &'static str {
        match self {
            SyncAt::Start => "start",
            SyncAt::End => "end",
        }
    }

    fn from_name(s: &str) -> Option<SyncAt> {
        match s {
            "start" => Some(SyncAt::Start),
            "end" => Some(SyncAt::End),
            _ => None,
        }
    }
}

/// One mark line, read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    /// `mark <edge> <step> t_ns=<n>`.
    Step { edge: Edge, step: String, t_ns: u64 },
    /// `sync <at> t_ns=<begin> slot_ns=<n> code=<bits>`.
    Sync {
        at: SyncAt,
        /// `CLOCK_BOOTTIME` at the first slot's start, ns.
        begin_ns: u64,
        /// One slot, ns.
        slot_ns: u64,
        /// `'1'` busy, `'0'` idle, one per slot.
        code: String,
    },
    /// `idle <phase> <edge> t_ns=<n>`.
    Idle {
        phase: String,
        edge: Edge,
        t_ns: u64,
    },
}

impl Mark {
    /// The board time the line carries, ns (a sync line's first slot's start).
    pub fn t_ns(&self) -> u64 {
        match self {
            Mark::Step { t_ns, .. } | Mark::Idle { t_ns, .. } => *t_ns,
            Mark::Sync { begin_ns, .. } => *begin_ns,
        }
    }
}

/// `name` as one token of a mark line: bytes outside `!`..=`~`, and `%`, as `%XX`
/// (upper-case hex). `None` for an empty name or one over [`MAX_NAME_BYTES`].
pub fn escape_name(name: &str) -> Option<String> {
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return None;
    }
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if (b'!'..=b'~').contains(&b) && b != b'%' {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    Some(out)
}

/// The name `token` escapes ([`escape_name`]); `None` unless it is exactly such a token:
/// printable ASCII, every `%` followed by two hex digits, UTF-8 once decoded, 1 to
/// [`MAX_NAME_BYTES`] bytes.
pub fn unescape_name(token: &str) -> Option<String> {
    let bytes = token.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !(b'!'..=b'~').contains(&b) {
            return None;
        }
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            if !hex.bytes().all(|h| h.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    if out.is_empty() || out.len() > MAX_NAME_BYTES {
        return None;
    }
    String::from_utf8(out).ok()
}

/// `mark <begin|end> <step> t_ns=<n>` (without [`PREFIX`]); `None` for a step name
/// [`escape_name`] refuses.
pub fn step_line(edge: Edge, step: &str, t_ns: u64) -> Option<String> {
    Some(format!(
        "mark {} {} t_ns={t_ns}",
        edge.name(),
        escape_name(step)?
    ))
}

/// `sync <start|end> t_ns=<begin> slot_ns=<n> code=<bits>` (without [`PREFIX`]); `None`
/// for a code that is empty, longer than [`MAX_CODE_SLOTS`] or not all `0`/`1`.
pub fn sync_line(at: SyncAt, begin_ns: u64, slot_ns: u64, code: &str) -> Option<String> {
    valid_code(code).then(|| {
        format!(
            "sync {} t_ns={begin_ns} slot_ns={slot_ns} code={code}",
            at.name()
        )
    })
}

/// `idle <phase> <begin|end> t_ns=<n>` (without [`PREFIX`]); `None` for a phase name
/// [`escape_name`] refuses.
pub fn idle_line(phase: &str, edge: Edge, t_ns: u64) -> Option<String> {
    Some(format!(
        "idle {} {} t_ns={t_ns}",
        escape_name(phase)?,
        edge.name()
    ))
}

fn valid_code(code: &str) -> bool {
    !code.is_empty() && code.len() <= MAX_CODE_SLOTS && code.bytes().all(|b| b == b'0' || b == b'1')
}

/// `value` of `key=value` when `token` is exactly that, as a decimal `u64` (digits only:
/// no sign, no spaces, at most 20 of them).
fn number(token: &str, key: &str) -> Option<u64> {
    let v = token.strip_prefix(key)?.strip_prefix('=')?;
    if v.is_empty() || v.len() > 20 || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse().ok()
}

/// `text` without ANSI escape sequences: CSI (`ESC [` ... a final byte `@`..=`~`), OSC
/// (`ESC ]` ... `BEL` or `ESC \`) and two-byte escapes (`ESC` and one more character).
/// An unterminated sequence drops the rest of the text.
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The mark a console line carries, if it carries one: `line` is any text (a console
/// log's line, with or without its `\n`, `\r\n`, ANSI colours, a timestamp or other
/// noise before [`PREFIX`]); the part after the last `\r` that holds a mark wins (a
/// terminal shows what follows a `\r`). `None` for anything else; never panics.
pub fn parse(line: &str) -> Option<Mark> {
    if line.len() > MAX_LINE_BYTES {
        return None;
    }
    let clean = strip_ansi(line);
    clean.split(['\r', '\n']).rev().find_map(parse_segment)
}

/// A mark in one segment: the first `benchboot: ` in it from which the rest is exactly
/// a mark's body.
fn parse_segment(seg: &str) -> Option<Mark> {
    let pat = format!("{PREFIX} ");
    seg.match_indices(&pat)
        .find_map(|(i, _)| parse_body(seg.get(i + pat.len()..)?.trim_end()))
}

/// A mark's body (after `benchboot: `), exactly.
fn parse_body(body: &str) -> Option<Mark> {
    let tokens: Vec<&str> = body.split(' ').collect();
    match tokens.as_slice() {
        ["mark", edge, step, t] => Some(Mark::Step {
            edge: Edge::from_name(edge)?,
            step: unescape_name(step)?,
            t_ns: number(t, "t_ns")?,
        }),
        ["sync", at, t, slot, code] => {
            let code = code.strip_prefix("code=")?;
            if !valid_code(code) {
                return None;
            }
            Some(Mark::Sync {
                at: SyncAt::from_name(at)?,
                begin_ns: number(t, "t_ns")?,
                slot_ns: number(slot, "slot_ns")?,
                code: code.to_owned(),
            })
        }
        ["idle", phase, edge, t] => Some(Mark::Idle {
            phase: unescape_name(phase)?,
            edge: Edge::from_name(edge)?,
            t_ns: number(t, "t_ns")?,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(body: &str) -> String {
        format!("{PREFIX} {body}")
    }

    #[test]
    fn lines_are_as_documented() {
        assert_eq!(
            step_line(Edge::Begin, "storage.ext4.sync", 12_345).unwrap(),
            "mark begin storage.ext4.sync t_ns=12345"
        );
        assert_eq!(
            step_line(Edge::End, "memory", u64::MAX).unwrap(),
            "mark end memory t_ns=18446744073709551615"
        );
        assert_eq!(
            sync_line(SyncAt::Start, 5_000_000_000, 1_000_000_000, "1111100110101").unwrap(),
            "sync start t_ns=5000000000 slot_ns=1000000000 code=1111100110101"
        );
        assert_eq!(
            idle_line("radios-off", Edge::Begin, 7).unwrap(),
            "idle radios-off begin t_ns=7"
        );
        assert_eq!(
            idle_line("link usb0", Edge::End, 8).unwrap(),
            "idle link%20usb0 end t_ns=8"
        );
    }

    #[test]
    fn every_line_reads_back() {
        let cases = [
            (
                step_line(Edge::Begin, "network.gadget.ncm", 1).unwrap(),
                Mark::Step {
                    edge: Edge::Begin,
                    step: "network.gadget.ncm".into(),
                    t_ns: 1,
                },
            ),
            (
                step_line(Edge::End, "x y\tz%\u{1b}[31mé", 2).unwrap(),
                Mark::Step {
                    edge: Edge::End,
                    step: "x y\tz%\u{1b}[31mé".into(),
                    t_ns: 2,
                },
            ),
            (
                sync_line(SyncAt::End, 9, 500_000_000, "10").unwrap(),
                Mark::Sync {
                    at: SyncAt::End,
                    begin_ns: 9,
                    slot_ns: 500_000_000,
                    code: "10".into(),
                },
            ),
            (
                idle_line("link wlan0", Edge::Begin, 3).unwrap(),
                Mark::Idle {
                    phase: "link wlan0".into(),
                    edge: Edge::Begin,
                    t_ns: 3,
                },
            ),
        ];
        for (body, want) in cases {
            assert!(
                body.is_ascii() && !body.contains(['\r', '\n', '\u{1b}']),
                "{body}"
            );
            assert_eq!(parse(&full(&body)), Some(want.clone()), "{body}");
            // As a console log and a terminal carry it.
            assert_eq!(parse(&format!("{}\r\n", full(&body))), Some(want.clone()));
            assert_eq!(
                parse(&format!(
                    "[   12.345678] \u{1b}[32m{}\u{1b}[0m",
                    full(&body)
                )),
                Some(want.clone())
            );
            assert_eq!(
                parse(&format!("progress 40%\r{}", full(&body))),
                Some(want.clone())
            );
            assert_eq!(
                parse(&format!("2026-12-07T02:00:00Z {}", full(&body))),
                Some(want)
            );
        }
    }

    #[test]
    fn names_outside_the_bounds_get_no_line() {
        assert_eq!(step_line(Edge::Begin, "", 1), None);
        assert_eq!(
            idle_line(&"a".repeat(MAX_NAME_BYTES + 1), Edge::End, 1),
            None
        );
        assert!(step_line(Edge::Begin, &"a".repeat(MAX_NAME_BYTES), 1).is_some());
        assert_eq!(sync_line(SyncAt::Start, 1, 1, ""), None);
        assert_eq!(sync_line(SyncAt::Start, 1, 1, "1012"), None);
        assert_eq!(sync_line(SyncAt::Start, 1, 1, &"1".repeat(65)), None);
    }

    #[test]
    fn hostile_lines_are_no_marks() {
        let bad = [
            "",
            "benchboot:",
            "benchboot: ",
            "benchboot: mark",
            "benchboot: mark begin",
            "benchboot: mark begin step",
            "benchboot: mark begin step t_ns=",
            "benchboot: mark begin step t_ns=-1",
            "benchboot: mark begin step t_ns=+1",
            "benchboot: mark begin step t_ns=1x",
            "benchboot: mark begin step t_ns=18446744073709551616",
            "benchboot: mark begin step t_ns=99999999999999999999999",
            "benchboot: mark begin step  t_ns=1",
            "benchboot: mark begin step t_ns=1 extra",
            "benchboot: mark middle step t_ns=1",
            "benchboot: mark begin ste%p t_ns=1",
            "benchboot: mark begin ste%zzp t_ns=1",
            "benchboot: mark begin step% t_ns=1",
            "benchboot: mark begin %FF t_ns=1",
            "benchboot: mark begin %00%C3 t_ns=1",
            "benchboot: mark begin stép t_ns=1",
            "benchboot: mark begin step T_NS=1",
            "benchboot: mark begin step ns=1",
            "benchboot:mark begin step t_ns=1",
            "benchboot:  mark begin step t_ns=1",
            "BENCHBOOT: mark begin step t_ns=1",
            "benchboot: sync middle t_ns=1 slot_ns=1 code=1",
            "benchboot: sync start t_ns=1 slot_ns=1 code=",
            "benchboot: sync start t_ns=1 slot_ns=1 code=102",
            "benchboot: sync start slot_ns=1 t_ns=1 code=1",
            "benchboot: sync start t_ns=1 slot_ns=1",
            "benchboot: idle radios-off t_ns=1",
            "benchboot: idle radios-off begin",
            "benchboot: idle link usb0 begin t_ns=1",
            "benchboot: case=storage.x value=1.000 units=MB/s",
            "benchboot: ready serving http://10.55.0.1:8080/results.json (read-only)",
            "\u{1b}[",
            "\u{1b}]0;title",
            "\u{1b}",
            "%%%%",
            "\0\0\0benchboot: \0",
        ];
        for line in bad {
            assert_eq!(parse(line), None, "{line:?}");
        }
        // A printk cut into the line spoils it.
        assert_eq!(
            parse("benchboot: mark beg[  3.1] usb 1-1: new device in t_ns=5"),
            None
        );
        assert_eq!(parse(&"benchboot: ".repeat(2000)), None);
        assert_eq!(
            parse(&format!(
                "benchboot: mark begin step t_ns=1{}",
                " ".repeat(5000)
            )),
            None
        );
        // Noise with the prefix in it, then a real line: the real line is found.
        assert_eq!(
            parse("benchboot: junk benchboot: mark end s t_ns=4").map(|m| m.t_ns()),
            Some(4)
        );
        // Trailing blanks and \r are a console's, not the line's.
        assert_eq!(
            parse("benchboot: idle radios-off end t_ns=10  \r").map(|m| m.t_ns()),
            Some(10)
        );
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        // A deterministic walk over short strings of the characters that matter.
        let alphabet = [
            'b', 'e', 'n', 'c', 'h', 'o', 't', ':', ' ', 'm', 'a', 'r', 'k', '%', '0', '1', '=',
            '_', 's', '\u{1b}', '[', ']', '\r', '\n', '\u{7}', '\\', 'é', '\u{0}',
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            let len = (state % 40) as usize;
            let mut s = String::new();
            for _ in 0..len {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                s.push(alphabet[(state % alphabet.len() as u64) as usize]);
            }
            let _ = parse(&s);
            let _ = parse(&format!("benchboot: mark begin {s} t_ns=1"));
            let _ = unescape_name(&s);
        }
    }

    #[test]
    fn escaping_round_trips_every_byte_class() {
        let all: String = (1u8..=127).map(char::from).collect();
        let e = escape_name(&all).unwrap();
        assert!(e.bytes().all(|b| (b'!'..=b'~').contains(&b)), "{e}");
        assert_eq!(unescape_name(&e).as_deref(), Some(all.as_str()));
        assert_eq!(escape_name("a%b").unwrap(), "a%25b");
        assert_eq!(unescape_name("a%25b").unwrap(), "a%b");
        assert_eq!(unescape_name("%2a").unwrap(), "*");
    }
}
