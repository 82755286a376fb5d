//! Text that came from outside benchboot (a results document, a console log, a card, the
//! network) made safe to print, and the litter other systems leave in a card's folders.
//!
//! [`escape`] is the one escaping function every printer uses: the host's tables,
//! reports, comparisons, listings and error messages. A board
//! name such as `rpi\u{1b}[2J` then shows as the text `rpi\u{1b}[2J` instead of
//! clearing the screen. [`is_card_litter`] is the one test of which names in a card
//! folder are not benchboot's (macOS, Windows, Linux desktops put them there).

use std::borrow::Cow;
use std::fmt::Write as _;

/// True for a character [`escape`] replaces: every Unicode control character (`Cc`:
/// C0 U+0000-U+001F including ESC and newline, DEL U+007F, C1 U+0080-U+009F) and the
/// bidirectional formatting characters that make displayed text differ from its bytes
/// (Unicode UAX #9; the "Trojan Source" list, CVE-2021-42574): the embeddings and
/// overrides U+202A-U+202E, the isolates U+2066-U+2069, and the marks U+200E, U+200F,
/// U+061C; and the LINE and PARAGRAPH SEPARATORs U+2028, U+2029 (a line break to some
/// terminals, editors and JavaScript, so a fake line of their own) and the byte order
/// mark U+FEFF (invisible).
pub fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}')
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}')
}

/// `s` with every character [`needs_escape`] says written as Rust writes a char escape,
/// `\u{` + lowercase hex + `}` (ESC is `\u{1b}`, a newline `\u{a}`, RIGHT-TO-LEFT
/// OVERRIDE `\u{202e}`); all other text, backslashes included, is unchanged. Borrowed
/// when nothing needed escaping. For one-line fields (names, ids, labels, cells); text
/// of several lines goes through [`escape_lines`].
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if needs_escape(c) {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// [`escape`] of each line of `s`, the line breaks (`\n`) kept: for paragraphs, error
/// chains, tables drawn as text and CSV. A `\r` is escaped like any other control, so
/// no line can overwrite another.
pub fn escape_lines(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c != '\n' && needs_escape(c)) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(s.split('\n').map(escape).collect::<Vec<_>>().join("\n"))
}

/// JSON text (as serde_json writes it) with the characters [`needs_escape`] says that
/// serde_json leaves raw (DEL, C1, the bidi formatting characters: it escapes only
/// U+0000-U+001F) written as JSON escapes, `\u202e`: the same document to a JSON reader,
/// harmless on a terminal. Such characters occur only inside strings of serde_json's
/// output, so no structure is touched.
pub fn escape_json(json: &str) -> Cow<'_, str> {
    let raw = |c: char| needs_escape(c) && u32::from(c) >= 0x7f;
    if !json.chars().any(raw) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 12);
    for c in json.chars() {
        if raw(c) {
            // Every such character is in the BMP (at most U+2069): four hex digits.
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// True for a name in a card folder that another system wrote and benchboot never
/// does, so listing a folder skips it: macOS's AppleDouble files (`._<name>`, the
/// extended attributes of `<name>`, starting with the bytes `00 05 16 07`), its
/// `.DS_Store`, Spotlight index (`.Spotlight-V100`), file-system event log
/// (`.fseventsd`) and trash (`.Trashes`); Windows' `System Volume Information`; a Linux
/// desktop's trash (`.Trash-<uid>`, e.g. `.Trash-1000`). Compared exactly as FAT
/// stores the names (case-insensitively for the fixed ones, as FAT looks them up).
pub fn is_card_litter(name: &str) -> bool {
    const FIXED: [&str; 5] = [
        ".DS_Store",
        ".Spotlight-V100",
        ".fseventsd",
        ".Trashes",
        "System Volume Information",
    ];
    name.starts_with("._")
        || FIXED.iter().any(|f| f.eq_ignore_ascii_case(name))
        || name
            .strip_prefix(".Trash-")
            .is_some_and(|uid| !uid.is_empty() && uid.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_writes_every_control_and_bidi_character_visibly() {
        assert_eq!(
            escape("rpi\u{1b}[2J\u{1b}[31mX"),
            r"rpi\u{1b}[2J\u{1b}[31mX"
        );
        assert_eq!(
            escape("a\u{0}b\tc\nd\re\u{7f}"),
            r"a\u{0}b\u{9}c\u{a}d\u{d}e\u{7f}"
        );
        // C1: CSI (U+009B) starts an escape sequence on some terminals.
        assert_eq!(escape("x\u{9b}2J\u{85}"), r"x\u{9b}2J\u{85}");
        assert_eq!(
            escape("user\u{202e}gnp.exe\u{2066}\u{2069}\u{200f}"),
            r"user\u{202e}gnp.exe\u{2066}\u{2069}\u{200f}"
        );
        assert_eq!(
            escape("line\u{2028}benchboot: ready\u{2029}\u{feff}"),
            r"line\u{2028}benchboot: ready\u{2029}\u{feff}"
        );
        // Text that is not a control stays as it is, borrowed.
        let plain = r"rpi-4b → MiB/s (ü) C:\cards";
        assert!(matches!(escape(plain), Cow::Borrowed(p) if p == plain));
        assert_eq!(escape("\u{a0}\u{2010}"), "\u{a0}\u{2010}");
    }

    #[test]
    fn escape_lines_keeps_line_breaks_only() {
        assert_eq!(escape_lines("a\u{1b}c\nb\r\n"), "a\\u{1b}c\nb\\u{d}\n");
        assert!(matches!(escape_lines("a\nb\n"), Cow::Borrowed("a\nb\n")));
    }

    #[test]
    fn escape_json_keeps_the_value_and_removes_raw_c1_and_bidi() {
        let v = serde_json::json!({"board": "rpi\u{1b}[2J\u{9b}2J\u{7f}\u{202e}x", "n": 1});
        let text = serde_json::to_string_pretty(&v).unwrap();
        let safe = escape_json(&text);
        assert_eq!(
            safe,
            "{\n  \"board\": \"rpi\\u001b[2J\\u009b2J\\u007f\\u202ex\",\n  \"n\": 1\n}"
        );
        assert!(
            !safe.chars().any(|c| c != '\n' && needs_escape(c)),
            "{safe}"
        );
        assert_eq!(serde_json::from_str::<serde_json::Value>(&safe).unwrap(), v);
        assert!(matches!(escape_json("{\"a\": \"ü\"}"), Cow::Borrowed(_)));
    }

    #[test]
    fn card_litter_is_what_macos_windows_and_linux_desktops_leave() {
        for litter in [
            "._rpi-4b-1.json",
            "._.Trashes",
            ".DS_Store",
            ".ds_store",
            ".Spotlight-V100",
            ".fseventsd",
            ".Trashes",
            "System Volume Information",
            ".Trash-1000",
        ] {
            assert!(is_card_litter(litter), "{litter}");
        }
        for ours in [
            "rpi-4b-1.json",
            "unreadable.json",
            "plan.toml",
            "runs",
            ".Trash-",
            ".Trash-me",
            "_x.json",
            ".x.json",
        ] {
            assert!(!is_card_litter(ours), "{ours}");
        }
    }
}
