//! A report as a list of blocks (titles, text, lists, tables) that renders to terminal
//! text (comfy-table) or Markdown from the same content.
//!
//! Blocks hold text as it came (a board name, a run id, a target label from a results
//! document); rendering is the print boundary, so both renderings pass every piece
//! through [`escape`] ([`escape_lines`] for text of several lines): a control character
//! or bidi override prints as `\u{1b}`, never reaching the terminal or the Markdown.

use std::fmt;

use benchboot_results::text::{escape, escape_lines};
use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, ContentArrangement, Table};

use crate::chart::PlotFigure;

pub mod facts;
pub mod fit;

/// A table: a header row and rows of cells, all text. Columns from `left_columns` on
/// are right-aligned (numbers).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Grid {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// How many leading columns are labels (left-aligned).
    pub left_columns: usize,
    /// A link per row (parallel to `rows`; shorter is fine): the HTML page puts it on
    /// the row's first cell. The terminal and Markdown leave links out.
    pub links: Vec<Option<String>>,
    /// Cells with a [`Tone`], as (row, column, tone): the HTML page colours them.
    pub tones: Vec<(usize, usize, Tone)>,
    /// A wide table the HTML page lets wrap, and on a narrow screen shows as one block
    /// per row (each cell a `column: value` line) instead of scrolling sideways.
    pub stacked: bool,
    /// Columns a narrow terminal may leave out ([`fit::table`]): each gives a figure
    /// another column gives in another unit (MB/s and MiB/s beside Mbit/s).
    pub narrow_drop: Vec<usize>,
}

/// How a cell's figure reads against the rank test (compare's ratio cells).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// The Mann–Whitney test says the difference is significant (p below the level).
    Significant,
    /// The test ran and cannot tell the two apart.
    Undecided,
}

impl Grid {
    /// A table with `header`; the first column is the label column.
    pub fn new(header: Vec<String>) -> Grid {
        Grid {
            header,
            rows: Vec::new(),
            left_columns: 1,
            links: Vec::new(),
            tones: Vec::new(),
            stacked: false,
            narrow_drop: Vec::new(),
        }
    }

    /// The [`Tone`] of the cell at `row`, `column`, if any.
    pub fn tone(&self, row: usize, column: usize) -> Option<Tone> {
        self.tones
            .iter()
            .find(|(r, c, _)| (*r, *c) == (row, column))
            .map(|t| t.2)
    }

    /// Appends one row (cells as text).
    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// The terminal table (UTF-8 borders), label columns left, numbers right; cells
    /// through [`escape_lines`]. Natural width whatever stdout is (no terminal
    /// detection: the same text in a pipe, a test and a terminal).
    pub fn table(&self) -> Table {
        let cells = |row: &[String]| -> Vec<String> {
            row.iter().map(|c| escape_lines(c).into_owned()).collect()
        };
        let mut t = Table::new();
        t.force_no_tty().load_preset(UTF8_FULL_CONDENSED);
        t.set_header(cells(&self.header));
        for row in &self.rows {
            t.add_row(cells(row));
        }
        let columns = self
            .rows
            .iter()
            .map(Vec::len)
            .chain([self.header.len()])
            .max()
            .unwrap_or(0);
        for i in 0..columns {
            if let Some(c) = t.column_mut(i) {
                c.set_cell_alignment(if i < self.left_columns {
                    CellAlignment::Left
                } else {
                    CellAlignment::Right
                });
            }
        }
        t
    }

    /// A GitHub-flavoured Markdown table (`|` in cells escaped, line breaks as spaces,
    /// the rest through [`escape`]; numbers right-aligned).
    pub fn markdown(&self) -> String {
        let esc = |s: &str| escape(&s.replace('|', "\\|").replace('\n', " ")).into_owned();
        let line = |cells: &[String]| {
            let cells: Vec<String> = cells.iter().map(|c| esc(c)).collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let mut out = line(&self.header);
        let rule: Vec<&str> = (0..self.header.len())
            .map(|i| if i < self.left_columns { "---" } else { "---:" })
            .collect();
        out.push_str(&format!("|{}|\n", rule.join("|")));
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }
}

/// The width text written to a pipe or a file is fitted to without `COLUMNS`.
pub const DEFAULT_WIDTH: u16 = 100;

/// The width, in columns, standard output's tables and text are fitted to
/// ([`Doc::text_width`]): the terminal's when stdout is one, else `COLUMNS` when it is
/// a number of at least 20, else [`DEFAULT_WIDTH`].
pub fn terminal_width() -> Option<u16> {
    let probe = || {
        let mut probe = Table::new();
        probe.set_content_arrangement(ContentArrangement::Dynamic);
        probe.width()
    };
    let tty = crate::out::is_terminal(crate::out::Stream::Out)
        .then(probe)
        .flatten();
    Some(tty.unwrap_or_else(|| width_of(std::env::var("COLUMNS").ok().as_deref())))
}

/// The width `COLUMNS` (`columns`) asks for: a number of at least 20, else
/// [`DEFAULT_WIDTH`].
pub fn width_of(columns: Option<&str>) -> u16 {
    columns
        .and_then(|c| c.trim().parse::<u16>().ok())
        .filter(|&w| w >= 20)
        .unwrap_or(DEFAULT_WIDTH)
}

impl fmt::Display for Grid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.table())
    }
}

/// One piece of a report.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// The report's title (Markdown `#`).
    Title(String),
    /// Something the reader must not miss, e.g. EMULATED (Markdown: a bold quote).
    Alert(String),
    /// A section heading (Markdown `###`), printed after a blank line.
    Heading(String),
    /// A paragraph, one or more lines.
    Text(String),
    /// A bulleted list.
    List(Vec<String>),
    Grid(Grid),
    /// Lines whose columns line up (tinymembench's `label : figure` shape): printed as
    /// they are, in Markdown a fenced `text` block.
    Pre(Vec<String>),
    /// Key figures, one a line after a lead (the headline that opens a report:
    /// [`facts::Facts`]).
    Facts(facts::Facts),
    /// A plot, drawn inline by the HTML page only: the terminal and Markdown leave it
    /// out (`--plots DIR` writes it as files).
    Figure(Box<PlotFigure>),
}

/// A whole report or comparison.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Doc {
    pub blocks: Vec<Block>,
}

impl Doc {
    pub fn push(&mut self, b: Block) {
        self.blocks.push(b);
    }

    pub fn extend(&mut self, bs: impl IntoIterator<Item = Block>) {
        self.blocks.extend(bs);
    }

    /// Terminal text: tables drawn with comfy-table at their natural width, all text
    /// through [`escape_lines`].
    pub fn text(&self) -> String {
        self.text_width(None)
    }

    /// [`Doc::text`] fitted to `width` columns ([`fit`]): tables never split a number or
    /// a word (narrow: unit columns left out, the rest in tables of their own below),
    /// paragraphs and list items wrapped at spaces; `None`: natural width.
    pub fn text_width(&self, width: Option<u16>) -> String {
        let mut out = String::new();
        // One piece of text, escaped, wrapped at spaces to the width (continuation lines
        // start with `indent`).
        let wrapped = |s: &str, indent: &str| -> String {
            let s = escape_lines(s);
            match width {
                Some(w) => fit::wrap(&s, usize::from(w), indent).join("\n") + "\n",
                None => format!("{s}\n"),
            }
        };
        for b in &self.blocks {
            match b {
                Block::Title(s) | Block::Alert(s) | Block::Text(s) => {
                    out.push_str(&wrapped(s, ""));
                }
                Block::Heading(s) => {
                    out.push('\n');
                    out.push_str(&wrapped(s, ""));
                }
                Block::List(items) => {
                    for i in items {
                        out.push_str(&wrapped(&format!("- {i}"), "  "));
                    }
                }
                Block::Grid(g) => match width {
                    Some(w) => out.push_str(&fit::table(g, usize::from(w))),
                    None => out.push_str(&format!("{}\n", g.table())),
                },
                Block::Pre(lines) => {
                    for l in lines {
                        out.push_str(&wrapped(l, "  "));
                    }
                }
                Block::Facts(f) => {
                    out.push_str(&f.text(width));
                    out.push('\n');
                }
                Block::Figure(_) => {}
            }
        }
        out
    }

    /// GitHub-flavoured Markdown, all text through [`escape`] (paragraphs: per line).
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        for b in &self.blocks {
            match b {
                Block::Title(s) => out.push_str(&format!("# {}\n\n", escape(s))),
                Block::Alert(s) => out.push_str(&format!("> **{}**\n\n", escape(s))),
                Block::Heading(s) => out.push_str(&format!("### {}\n\n", escape(s))),
                Block::Text(s) => {
                    // Markdown joins lines of a paragraph: keep the breaks.
                    out.push_str(&escape_lines(s).lines().collect::<Vec<_>>().join("  \n"));
                    out.push_str("\n\n");
                }
                Block::List(items) => {
                    for i in items {
                        out.push_str(&format!("- {}\n", escape(i)));
                    }
                    out.push('\n');
                }
                Block::Grid(g) => {
                    out.push_str(&g.markdown());
                    out.push('\n');
                }
                Block::Pre(lines) => {
                    out.push_str("```text\n");
                    for l in lines {
                        out.push_str(&escape(l));
                        out.push('\n');
                    }
                    out.push_str("```\n\n");
                }
                Block::Facts(f) => out.push_str(&f.markdown()),
                Block::Figure(_) => {}
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_table_escapes_and_aligns() {
        let mut g = Grid::new(vec!["block size".into(), "a|b".into()]);
        g.push(vec!["8 B".into(), "1.00".into()]);
        assert_eq!(
            g.markdown(),
            "| block size | a\\|b |\n|---|---:|\n| 8 B | 1.00 |\n"
        );
    }

    #[test]
    fn text_and_markdown_of_the_same_blocks() {
        let doc = Doc {
            blocks: vec![
                Block::Title("t".into()),
                Block::Alert("EMULATED".into()),
                Block::Heading("h".into()),
                Block::List(vec!["x".into()]),
                Block::Pre(vec!["a   : 1".into()]),
            ],
        };
        assert_eq!(doc.text(), "t\nEMULATED\n\nh\n- x\na   : 1\n");
        assert_eq!(
            doc.markdown(),
            "# t\n\n> **EMULATED**\n\n### h\n\n- x\n\n```text\na   : 1\n```\n\n"
        );
    }
}
