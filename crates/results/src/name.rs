//! The one gate from a name that came from outside benchboot (a results document, a
//! console log, a card, the network: run ids, board names, labels, file names) to a
//! path component.
//!
//! A [`SafeName`] is one path component on Linux, macOS and Windows alike: 1 to
//! [`MAX_LEN`] bytes of ASCII letters, digits, `.`, `_` and `-`; not starting with `.`
//! (hidden, `..`) or `-` (read as an option by the tools a path is handed to); not
//! ending with `.` (Windows drops it, so `a.` and `a` would be one file); never one of
//! Windows' device names (`CON`, `PRN`, `AUX`, `NUL`, `COM0`-`COM9`, `LPT0`-`LPT9`, in
//! any case and with any extension: `nul.json` is the null device there; Microsoft,
//! "Naming Files, Paths, and Namespaces"). No separator, drive, stream (`:`) or
//! control character can pass.
//!
//! Two ways through, and no other: [`SafeName::new`] refuses what breaks a rule (a run
//! id, a board name: the file must be named exactly as the document says), and
//! [`SafeName::lossy`] replaces what breaks one (the stem of a plot or a page derived
//! from a name, where a readable file beats a refusal). Every place the host tool names
//! a file, or looks one up, from such a name takes a `SafeName`; the tidy test
//! (`xtask/tests/tidy.rs`) fails on a path built from a run id, board or label any
//! other way.

use std::fmt;
use std::path::{Path, PathBuf};

/// The longest name, in bytes: well under every file system's 255 and leaves room for
/// an extension and the store's temp-file decoration (`.<name>.<pid>.benchboot.tmp`).
pub const MAX_LEN: usize = 128;

/// What the name is, for messages: "run id", "board name", ...
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameKind {
    /// A results document's `run_id`.
    RunId,
    /// A board name (`rpi-zero-w`).
    Board,
    /// A filesystem or partition label.
    Label,
    /// A file's name as another system wrote it (a card's folder).
    FileName,
}

impl NameKind {
    fn words(self) -> &'static str {
        match self {
            NameKind::RunId => "run id",
            NameKind::Board => "board name",
            NameKind::Label => "label",
            NameKind::FileName => "file name",
        }
    }
}

/// A name refused by [`SafeName::new`]: what it is, the name (escaped for printing) and
/// the rule it breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameError {
    /// What kind of name.
    pub kind: NameKind,
    /// The name as received, escaped ([`crate::text::escape`]) and cut to 80 characters.
    pub shown: String,
    /// The rule it breaks, in words.
    pub rule: &'static str,
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the {} `{}` cannot name a file: {} (a {} is 1-{MAX_LEN} ASCII letters, \
             digits, '.', '_' or '-', not starting with '.' or '-')",
            self.kind.words(),
            self.shown,
            self.rule,
            self.kind.words()
        )
    }
}

impl std::error::Error for NameError {}

/// One path component made from an outside name (see the module doc for the rules).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SafeName(String);

fn allowed(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')
}

/// Windows' reserved device names: the part before the first `.`, any case.
fn is_windows_device(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name).to_ascii_uppercase();
    match stem.as_str() {
        "CON" | "PRN" | "AUX" | "NUL" => true,
        s if s.len() == 4 && (s.starts_with("COM") || s.starts_with("LPT")) => {
            s.as_bytes()[3].is_ascii_digit()
        }
        _ => false,
    }
}

/// The first rule `name` breaks, if any.
fn broken_rule(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("it is empty");
    }
    if name.len() > MAX_LEN {
        return Some("it is too long");
    }
    if let Some(b) = name.bytes().find(|b| !allowed(*b)) {
        return Some(match b {
            b'/' | b'\\' => "it holds a path separator",
            b':' => "it holds a ':' (a drive or stream on Windows)",
            b if b.is_ascii_control() || b >= 0x80 => "it holds a control or non-ASCII character",
            _ => "it holds a character outside the allowed set",
        });
    }
    if name.starts_with('.') {
        return Some("it starts with '.' (hidden, or a parent folder)");
    }
    if name.starts_with('-') {
        return Some("it starts with '-' (an option to the tools it is given to)");
    }
    if name.ends_with('.') {
        return Some("it ends with '.' (Windows drops it)");
    }
    if is_windows_device(name) {
        return Some("it is a Windows device name");
    }
    None
}

impl SafeName {
    /// `raw` as it is, when it keeps every rule.
    ///
    /// # Errors
    /// [`NameError`] naming the kind, the name (escaped) and the first rule it breaks.
    pub fn new(kind: NameKind, raw: &str) -> Result<SafeName, NameError> {
        match broken_rule(raw) {
            None => Ok(SafeName(raw.to_owned())),
            Some(rule) => {
                let escaped = crate::text::escape(raw);
                let shown = match escaped.char_indices().nth(80) {
                    Some((i, _)) => format!("{}...", &escaped[..i]),
                    None => escaped.into_owned(),
                };
                Err(NameError { kind, shown, rule })
            }
        }
    }

    /// `raw` with every character outside the set replaced by `_`, cut to [`MAX_LEN`]
    /// bytes, a leading `.` or `-` and a trailing `.` replaced, a Windows device name
    /// given a leading `_`, and an empty name written `_`: never refused, so two names
    /// may meet (the caller deals with that where it matters).
    pub fn lossy(raw: &str) -> SafeName {
        let mut s: String = raw
            .chars()
            .map(|c| {
                if c.is_ascii() && allowed(c as u8) {
                    c
                } else {
                    '_'
                }
            })
            .take(MAX_LEN)
            .collect();
        if is_windows_device(&s) {
            s.insert(0, '_');
            s.truncate(MAX_LEN);
        }
        if s.starts_with(['.', '-']) {
            s.replace_range(..1, "_");
        }
        if s.ends_with('.') {
            s.pop();
            s.push('_');
        }
        if s.is_empty() {
            s.push('_');
        }
        debug_assert!(broken_rule(&s).is_none(), "{s:?}");
        SafeName(s)
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `<name>.<ext>` (`ext` is benchboot's own: `json`, `png`): still one component.
    pub fn with_ext(&self, ext: &str) -> String {
        debug_assert!(!ext.is_empty() && ext.bytes().all(|b| b.is_ascii_alphanumeric()));
        format!("{}.{ext}", self.0)
    }

    /// `dir/<name>.<ext>`: the file this name gives in `dir`, never outside it.
    pub fn path_in(&self, dir: &Path, ext: &str) -> PathBuf {
        dir.join(self.with_ext(ext))
    }
}

impl fmt::Display for SafeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for SafeName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Component;

    /// Names a stranger could send, each refused by `new` with the rule given.
    const HOSTILE: &[(&str, &str)] = &[
        ("", "empty"),
        ("../.vscode/tasks", "separator"),
        ("..", "starts with '.'"),
        (".", "starts with '.'"),
        (".hidden", "starts with '.'"),
        ("/etc/passwd", "separator"),
        ("a/b", "separator"),
        ("a\\b", "separator"),
        ("..\\..\\x", "separator"),
        ("C:x", "':'"),
        ("x:stream", "':'"),
        ("-rf", "starts with '-'"),
        ("run.", "ends with '.'"),
        ("NUL", "device"),
        ("nul.json", "device"),
        ("Com1", "device"),
        ("lpt9.txt", "device"),
        ("aux", "device"),
        ("a\u{1b}[2J", "control"),
        ("a\nb", "control"),
        ("caf\u{e9}", "non-ASCII"),
        ("a\u{202e}b", "non-ASCII"),
        ("a b", "outside the allowed set"),
        ("a*b", "outside the allowed set"),
        ("a\0b", "control"),
    ];

    #[test]
    fn hostile_names_are_refused_with_their_rule() {
        for (raw, rule) in HOSTILE {
            let e = SafeName::new(NameKind::RunId, raw).unwrap_err();
            assert!(e.rule.contains(rule), "{raw:?}: {}", e.rule);
            let msg = e.to_string();
            assert!(msg.starts_with("the run id "), "{msg}");
            assert!(!msg.chars().any(crate::text::needs_escape), "{msg:?}");
        }
        let long = "a".repeat(MAX_LEN + 1);
        assert_eq!(
            SafeName::new(NameKind::Board, &long).unwrap_err().rule,
            "it is too long"
        );
        let shown = SafeName::new(NameKind::Label, &"/".repeat(500))
            .unwrap_err()
            .shown;
        assert_eq!(shown.len(), 83, "{shown}");
    }

    #[test]
    fn names_benchboot_writes_pass_unchanged() {
        for ok in [
            "rpi-zero-w-a0111b486424",
            "host-1.2_3",
            "BBRESULTS",
            "a",
            "console.log",
            "COM10",
            "nullable",
            "conf",
            &"x".repeat(MAX_LEN),
        ] {
            let n = SafeName::new(NameKind::RunId, ok).unwrap();
            assert_eq!(n.as_str(), ok);
            assert_eq!(SafeName::lossy(ok), n, "lossy changes no safe name");
        }
    }

    /// Whatever goes in, what comes out is one normal component of the folder it is
    /// joined to, and `new` accepts it.
    #[test]
    fn lossy_always_gives_one_component() {
        let mut inputs: Vec<String> = HOSTILE.iter().map(|(s, _)| (*s).to_owned()).collect();
        inputs.extend(
            ["-", "--", ".-", "..", "a.", "con", "CON.json", "\u{1F600}"].map(String::from),
        );
        inputs.push("é".repeat(300));
        inputs.push(format!("nul{}", ".".repeat(200)));
        // Every byte value as a name of its own and in the middle of one.
        for b in 0u8..=255 {
            let c = char::from(b);
            inputs.push(c.to_string());
            inputs.push(format!("a{c}b"));
        }
        let dir = Path::new("store/runs");
        for raw in &inputs {
            let n = SafeName::lossy(raw);
            assert!(
                SafeName::new(NameKind::FileName, n.as_str()).is_ok(),
                "{raw:?} -> {n}"
            );
            let p = n.path_in(dir, "json");
            assert_eq!(p.parent(), Some(dir), "{raw:?}");
            let last: Vec<_> = p.components().skip(2).collect();
            assert!(
                matches!(last.as_slice(), [Component::Normal(_)]),
                "{raw:?}: {p:?}"
            );
        }
        assert_eq!(
            SafeName::lossy("../.vscode/tasks").as_str(),
            "_._.vscode_tasks"
        );
        assert_eq!(SafeName::lossy("nul").as_str(), "_nul");
        assert_eq!(SafeName::lossy("").as_str(), "_");
        assert_eq!(SafeName::lossy("run.").as_str(), "run_");
    }

    #[test]
    fn paths_stay_in_their_folder() {
        let n = SafeName::new(NameKind::RunId, "rpi-4b-1").unwrap();
        assert_eq!(
            n.path_in(Path::new("/s/runs"), "json"),
            Path::new("/s/runs/rpi-4b-1.json")
        );
    }
}
