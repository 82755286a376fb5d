//! Places in a plan file's text, below both the parser (`file.rs`) and the error
//! locations of resolved plans (`locate.rs`): the line of a byte offset, and the dotted
//! key written on a line. Pure text, no TOML parser.

/// 1-based line of byte offset `at` in `text` (an offset past the end counts as the end).
pub fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The dotted key written on the line holding byte `at` of `text` (`key = value`),
/// under the table header above it: `memory.latency-reads`, `command[1].path`. For
/// errors the TOML parser reports with a place but no key (a number too large for 64
/// bits). `None` when that line assigns no key.
pub fn key_at(text: &str, at: usize) -> Option<String> {
    let at = at.min(text.len());
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next().unwrap_or_default();
    let (name, _) = line.split_once('=')?;
    let name = name.trim();
    if name.is_empty() || name.starts_with('#') || name.starts_with('[') {
        return None;
    }
    // The header this line sits under, and which entry of an array of tables.
    let above = &text[..start];
    let header = above
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['));
    let table = match header {
        Some(h) if h.starts_with("[[") => {
            let t = h.trim_start_matches("[[").split("]]").next()?.trim();
            let n = above
                .lines()
                .filter(|l| l.trim().starts_with("[[") && l.contains(t))
                .count();
            format!("{t}[{}].", n.saturating_sub(1))
        }
        Some(h) => format!("{}.", h.trim_start_matches('[').split(']').next()?.trim()),
        None => String::new(),
    };
    Some(format!("{table}{name}"))
}
