//! Fitting terminal text to a width without splitting a number or a word.
//!
//! A table gets each column at least as wide as its longest word (a cell wraps only at
//! spaces), the spare width shared out to the columns that want more. When even that is
//! too wide, the grid's [`Grid::narrow_drop`] columns (a figure another column gives in
//! another unit) are left out, and what still does not fit goes to tables of their own
//! below, each repeating the row labels. Paragraphs and list items wrap at spaces. Only a
//! word wider than the whole width (a long path) is ever cut.

use benchboot_results::text::escape_lines;
use comfy_table::{ColumnConstraint, ContentArrangement, Width};
use unicode_width::UnicodeWidthStr;

use super::Grid;

/// Columns of text a string takes on a terminal.
fn cols(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// A table's width beyond its cells' (UTF-8 condensed borders): one space each side of
/// a cell and a border between and around them.
fn overhead(columns: usize) -> usize {
    3 * columns + 1
}

/// `text` wrapped at spaces to at most `width` columns (a word wider than `width` on a
/// line of its own, cut only then); continuation lines start with `indent`.
pub fn wrap(text: &str, width: usize, indent: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.split('\n') {
        if cols(line) <= width {
            out.push(line.to_owned());
            continue;
        }
        let mut cur: String = line.chars().take_while(|c| *c == ' ').collect();
        let mut has_word = false;
        for word in line.split(' ').filter(|w| !w.is_empty()) {
            if has_word && cols(&cur) + 1 + cols(word) > width {
                out.push(std::mem::replace(&mut cur, indent.to_owned()));
                has_word = false;
            }
            if has_word {
                cur.push(' ');
            }
            cur.push_str(word);
            has_word = true;
            // A word wider than the whole line: cut, the only place anything is.
            while cols(&cur) > width && width > cols(indent) + 1 {
                let mut end = 0;
                for (i, c) in cur.char_indices() {
                    if cols(&cur[..i + c.len_utf8()]) > width {
                        break;
                    }
                    end = i + c.len_utf8();
                }
                let rest = format!("{indent}{}", &cur[end..]);
                cur.truncate(end);
                out.push(std::mem::replace(&mut cur, rest));
            }
        }
        out.push(cur);
    }
    out
}

/// The widths of one table's columns (`min`: longest word, `natural`: longest line of a
/// cell) within `width`: each gets its minimum, then the spare width goes first to the
/// columns that want least more, up to their natural width. Minimums wider than `width`
/// together: the widest columns narrowed (their longest words then cut).
fn share(min: &[usize], natural: &[usize], width: usize) -> Vec<usize> {
    let mut w = min.to_vec();
    let room = width.saturating_sub(overhead(min.len())).max(min.len());
    while w.iter().sum::<usize>() > room {
        let widest = (0..w.len()).max_by_key(|&i| w[i]).unwrap_or(0);
        w[widest] -= 1;
    }
    let mut spare = room - w.iter().sum::<usize>();
    let mut order: Vec<usize> = (0..min.len()).collect();
    order.sort_by_key(|&i| natural[i].saturating_sub(w[i]));
    for (k, &i) in order.iter().enumerate() {
        let fair = spare / (order.len() - k);
        let give = natural[i].saturating_sub(w[i]).min(fair);
        w[i] += give;
        spare -= give;
    }
    w
}

/// `g` as terminal text at most `width` columns wide (see the module's text).
pub fn table(g: &Grid, width: usize) -> String {
    let (natural, min) = column_widths(g);
    let n = natural.len();
    let all: Vec<usize> = (0..n).collect();
    if total(&all, &natural) <= width {
        return format!("{}\n", g.table());
    }
    let mut keep = all.clone();
    let mut dropped = Vec::new();
    if total(&keep, &min) > width && !g.narrow_drop.is_empty() {
        keep.retain(|i| !g.narrow_drop.contains(i));
        dropped = g
            .narrow_drop
            .iter()
            .filter_map(|&i| g.header.get(i).map(|h| escape_lines(h).into_owned()))
            .collect();
    }
    let mut out = String::new();
    for (k, part) in parts(g, &keep, &min, width).iter().enumerate() {
        if k > 0 {
            out.push_str("(continued)\n");
        }
        out.push_str(&render_part(g, part, &min, &natural, width));
        out.push('\n');
    }
    if !dropped.is_empty() {
        out.push_str(
            &wrap(
                &format!(
                    "({} left out to fit {width} columns: the same figures in another unit)",
                    dropped.join(", ")
                ),
                width,
                " ",
            )
            .join("\n"),
        );
        out.push('\n');
    }
    out
}

/// Each column's natural width (its longest line) and least width (its longest word,
/// at least 1), in terminal columns, over the header and the rows, escaped as printed.
fn column_widths(g: &Grid) -> (Vec<usize>, Vec<usize>) {
    let esc = |c: &String| escape_lines(c).into_owned();
    let header: Vec<String> = g.header.iter().map(esc).collect();
    let rows: Vec<Vec<String>> = g.rows.iter().map(|r| r.iter().map(esc).collect()).collect();
    let n = rows
        .iter()
        .map(Vec::len)
        .chain([header.len()])
        .max()
        .unwrap_or(0);
    let cells = |i: usize| {
        std::iter::once(header.get(i))
            .chain(rows.iter().map(move |r| r.get(i)))
            .flatten()
    };
    let widest = |i: usize, split: fn(&str) -> Vec<&str>| {
        cells(i).flat_map(|c| split(c)).map(cols).max().unwrap_or(0)
    };
    let natural = (0..n).map(|i| widest(i, |c| c.lines().collect())).collect();
    let min = (0..n)
        .map(|i| widest(i, |c| c.split_whitespace().collect()).max(1))
        .collect();
    (natural, min)
}

/// The width of columns `ix` of widths `w` with the table's borders and padding.
fn total(ix: &[usize], w: &[usize]) -> usize {
    ix.iter().map(|&i| w[i]).sum::<usize>() + overhead(ix.len())
}

/// The columns `keep` cut into parts that each fit `width` at their least widths, each
/// part led by the label columns (the first alone when they are too wide).
fn parts(g: &Grid, keep: &[usize], min: &[usize], width: usize) -> Vec<Vec<usize>> {
    let mut labels: Vec<usize> = keep
        .iter()
        .copied()
        .filter(|&i| i < g.left_columns)
        .collect();
    let mut values: Vec<usize> = keep
        .iter()
        .copied()
        .filter(|&i| i >= g.left_columns)
        .collect();
    if values.is_empty() && labels.len() > 1 {
        values = labels.split_off(1);
    }
    let labels = if labels.len() > 1
        && values.iter().any(|&v| {
            let mut ix = labels.clone();
            ix.push(v);
            total(&ix, min) > width
        }) {
        labels[..1].to_vec()
    } else {
        labels
    };
    if total(keep, min) <= width {
        return vec![keep.to_vec()];
    }
    let mut parts: Vec<Vec<usize>> = Vec::new();
    let mut cur = labels.clone();
    for &v in &values {
        let mut next = cur.clone();
        next.push(v);
        if total(&next, min) > width && cur.len() > labels.len() {
            parts.push(std::mem::replace(&mut cur, labels.clone()));
            cur.push(v);
        } else {
            cur = next;
        }
    }
    parts.push(cur);
    parts
}

/// One part's table: its columns of `g`, each given its share of `width`.
fn render_part(g: &Grid, part: &[usize], min: &[usize], natural: &[usize], width: usize) -> String {
    let sub = Grid {
        header: part
            .iter()
            .map(|&i| g.header.get(i).cloned().unwrap_or_default())
            .collect(),
        rows: g
            .rows
            .iter()
            .map(|r| {
                part.iter()
                    .map(|&i| r.get(i).cloned().unwrap_or_default())
                    .collect()
            })
            .collect(),
        left_columns: part.iter().filter(|&&i| i < g.left_columns).count(),
        ..Grid::default()
    };
    let pmin: Vec<usize> = part.iter().map(|&i| min[i]).collect();
    let pnat: Vec<usize> = part.iter().map(|&i| natural[i]).collect();
    // A word wider than the width left for it is the one case cut (by comfy-table).
    let widths = share(&pmin, &pnat, width);
    let mut t = sub.table();
    t.set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(u16::try_from(width).unwrap_or(u16::MAX));
    for (c, w) in widths.iter().enumerate() {
        if let Some(col) = t.column_mut(c) {
            col.set_constraint(ColumnConstraint::Absolute(Width::Fixed(
                u16::try_from(w + 2).unwrap_or(u16::MAX),
            )));
        }
    }
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::{width_of, DEFAULT_WIDTH};

    #[test]
    fn columns_is_a_width_of_at_least_20_else_the_default() {
        assert_eq!(width_of(Some("80")), 80);
        assert_eq!(width_of(Some(" 132\n")), 132);
        for bad in [
            None,
            Some(""),
            Some("wide"),
            Some("0"),
            Some("19"),
            Some("-80"),
        ] {
            assert_eq!(width_of(bad), DEFAULT_WIDTH, "{bad:?}");
        }
    }

    #[test]
    fn text_wraps_at_spaces_and_cuts_only_a_word_wider_than_the_line() {
        assert_eq!(
            wrap("- one two three four", 10, "  "),
            ["- one two", "  three", "  four"]
        );
        assert_eq!(wrap("short", 10, ""), ["short"]);
        assert_eq!(
            wrap("a /very/long/path/x", 8, " "),
            ["a", " /very/l", " ong/pat", " h/x"]
        );
    }

    /// A network row at 60 columns: MB/s and MiB/s left out and said so, the CPU shares
    /// in a table of their own below with the row labels, no figure cut.
    #[test]
    fn a_narrow_table_leaves_out_unit_columns_then_continues_below() {
        let mut g = Grid::new(
            [
                "test",
                "MB/s",
                "MiB/s",
                "Mbit/s",
                "board CPU % usr/sys/irq/sirq/idle",
            ]
            .map(String::from)
            .to_vec(),
        );
        g.narrow_drop = vec![1, 2];
        g.push(
            [
                "TCP, 1 stream",
                "48.1",
                "45.8",
                "384.4",
                "0.6/16.0/0.0/55.6/27.9",
            ]
            .map(String::from)
            .to_vec(),
        );
        let text = table(&g, 40);
        assert!(text.lines().all(|l| cols(l) <= 40), "{text}");
        assert!(!text.contains("48.1") && !text.contains("45.8"), "{text}");
        assert!(
            text.contains("(MB/s, MiB/s left out to fit 40 columns"),
            "{text}"
        );
        assert!(
            text.contains("384.4") && text.contains("0.6/16.0/0.0/55.6/27.9"),
            "{text}"
        );
        assert_eq!(text.matches("TCP, 1").count(), 2, "labels repeated: {text}");
        // Wide enough: the table as it is.
        assert_eq!(table(&g, 200), format!("{}\n", g.table()));
    }
}
