//! A block of key figures, one a line: a label, the figure with its unit and a short
//! qualifier (the headline that opens a report, [`crate::headline`]). Drawn here for the
//! terminal (aligned columns fitted to a width, wrapped only between words, so a number
//! is never split) and Markdown (a list); the HTML page draws it as a `<dl>`
//! ([`crate::html`]).
//!
//! Text is kept as it came; both renderings here pass it through [`escape`].

use benchboot_results::text::escape;

/// The mark a figure of a QEMU run carries wherever it is printed.
pub const EMULATED_MARK: &str = "EMULATED";

/// One line of a [`Facts`] block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// What the figure is (`seq. write / read`, `TCP ncm`).
    pub label: String,
    /// The figure with its unit (`20.1 / 85.3 MiB/s`), or the words that stand for it
    /// (`not measurable under QEMU`).
    pub figure: String,
    /// Where and how it was measured, in a few words.
    pub note: String,
    /// A QEMU figure: every rendering puts [`EMULATED_MARK`] before the note.
    pub emulated: bool,
}

impl Fact {
    /// The note as printed: `EMULATED; <note>` for an emulated figure.
    pub fn note_marked(&self) -> String {
        match (self.emulated, self.note.is_empty()) {
            (false, _) => self.note.clone(),
            (true, true) => EMULATED_MARK.to_owned(),
            (true, false) => format!("{EMULATED_MARK}; {}", self.note),
        }
    }
}

/// Lead sentences (the verdict in words) and then the figures.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Facts {
    /// Printed first, one a line; the page shows them as alerts when `alert` is set.
    pub lead: Vec<String>,
    /// Whether the lead is something the reader must not miss (EMULATED, incomplete).
    pub alert: bool,
    pub rows: Vec<Fact>,
}

/// Width the terminal block is fitted to when the terminal's is not known.
pub const DEFAULT_WIDTH: usize = 80;

/// The words of `s`, a number kept with the word after it (`4 KiB`, `64 MiB`): a
/// line never ends between a figure and its unit.
fn words(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in s.split(' ').filter(|w| !w.is_empty()) {
        match out.last_mut() {
            Some(last)
                if last.ends_with(|c: char| c.is_ascii_digit())
                    && w.starts_with(|c: char| c.is_alphabetic()) =>
            {
                last.push(' ');
                last.push_str(w);
            }
            _ => out.push(w.to_owned()),
        }
    }
    out
}

/// `s` broken between words into lines of at most `width` characters (a word longer
/// than `width` gets a line of its own, whole; a number stays with its unit).
pub fn wrap(s: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = String::new();
    for word in words(s) {
        let word = word.as_str();
        let need = line.chars().count() + usize::from(!line.is_empty()) + word.chars().count();
        if !line.is_empty() && need > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || out.is_empty() {
        out.push(line);
    }
    out
}

impl Facts {
    /// Terminal text fitted to `width` columns (`None`: [`DEFAULT_WIDTH`]; at most 100
    /// either way): the lead wrapped, then `label  figure  note` with the labels and
    /// figures in columns and the note wrapped under itself, or under the figure on a
    /// line of its own when the columns leave it less than 24 characters.
    pub fn text(&self, width: Option<u16>) -> String {
        let width = width.map_or(DEFAULT_WIDTH, usize::from).clamp(40, 100);
        let len = |s: &str| s.chars().count();
        let mut out = String::new();
        for l in &self.lead {
            for line in wrap(&escape(l), width) {
                out.push_str(&line);
                out.push('\n');
            }
        }
        let rows: Vec<(String, String, String)> = self
            .rows
            .iter()
            .map(|f| {
                (
                    escape(&f.label).into_owned(),
                    escape(&f.figure).into_owned(),
                    escape(&f.note_marked()).into_owned(),
                )
            })
            .collect();
        let lw = rows.iter().map(|r| len(&r.0)).max().unwrap_or(0).min(18);
        let fw = rows.iter().map(|r| len(&r.1)).max().unwrap_or(0).min(19);
        for (label, figure, note) in &rows {
            let mut line = format!("{label:<lw$}  {figure:<fw$}");
            let at = len(&line) + 2;
            if len(label) > lw || len(figure) > fw || width.saturating_sub(at) < 24 {
                // The note on lines of its own, under the figure; on a narrow terminal
                // the figure too, under the label.
                let mut indent = lw + 2;
                if len(line.trim_end()) > width {
                    indent = 2;
                    line = format!("{label}\n{:indent$}{figure}", "");
                }
                out.push_str(line.trim_end());
                out.push('\n');
                for l in wrap(note, width - indent) {
                    out.push_str(&format!("{:indent$}{l}\n", ""));
                }
                continue;
            }
            for (i, l) in wrap(note, width - at).into_iter().enumerate() {
                if i > 0 {
                    line = " ".repeat(at);
                } else {
                    line.push_str("  ");
                }
                line.push_str(&l);
                out.push_str(line.trim_end());
                out.push('\n');
            }
        }
        out
    }

    /// Markdown: the lead as bold quotes (alert) or a paragraph, the figures as a list
    /// `- **label**: figure (note)`.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        for l in &self.lead {
            if self.alert {
                out.push_str(&format!("> **{}**\n\n", escape(l)));
            } else {
                out.push_str(&format!("**{}**\n\n", escape(l)));
            }
        }
        for f in &self.rows {
            let note = f.note_marked();
            out.push_str(&format!(
                "- **{}**: {}",
                escape(&f.label),
                escape(&f.figure)
            ));
            if !note.is_empty() {
                out.push_str(&format!(" ({})", escape(&note)));
            }
            out.push('\n');
        }
        if !self.rows.is_empty() {
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> Facts {
        Facts {
            lead: vec!["EMULATED (QEMU): these figures say nothing about the hardware".into()],
            alert: true,
            rows: vec![
                Fact {
                    label: "seq. write / read".into(),
                    figure: "20.1 / 85.3 MiB/s".into(),
                    note: "ext4 on the card (mmcblk0p7), 1 MiB blocks: the largest the plan \
                           ran; direct I/O; median of 4 repetitions"
                        .into(),
                    emulated: true,
                },
                Fact {
                    label: "latency".into(),
                    figure: "not measurable under QEMU".into(),
                    note: "TCG has no caches".into(),
                    emulated: true,
                },
            ],
        }
    }

    /// At 80 columns every line fits, the note wraps under itself, words and numbers
    /// whole.
    #[test]
    fn terminal_lines_fit_and_wrap_between_words() {
        let t = facts().text(Some(80));
        // The figure column is at most 19 wide: a longer figure puts its note under it.
        assert_eq!(
            t,
            "EMULATED (QEMU): these figures say nothing about the hardware\n\
             seq. write / read  20.1 / 85.3 MiB/s    EMULATED; ext4 on the card (mmcblk0p7),\n\
             \x20                                       1 MiB blocks: the largest the plan ran;\n\
             \x20                                       direct I/O; median of 4 repetitions\n\
             latency            not measurable under QEMU\n\
             \x20                  EMULATED; TCG has no caches\n"
        );
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        // Narrow: the note goes under the figure.
        let t = facts().text(Some(40));
        assert!(t.lines().all(|l| l.chars().count() <= 40), "{t}");
        assert!(
            t.ends_with("\nlatency\n  not measurable under QEMU\n  EMULATED; TCG has no caches\n"),
            "{t}"
        );
    }

    #[test]
    fn markdown_is_a_list_after_the_lead() {
        assert_eq!(
            facts().markdown().lines().take(4).collect::<Vec<_>>(),
            [
                "> **EMULATED (QEMU): these figures say nothing about the hardware**",
                "",
                "- **seq. write / read**: 20.1 / 85.3 MiB/s (EMULATED; ext4 on the card \
                 (mmcblk0p7), 1 MiB blocks: the largest the plan ran; direct I/O; median of 4 \
                 repetitions)",
                "- **latency**: not measurable under QEMU (EMULATED; TCG has no caches)",
            ]
        );
    }
}
