//! One self-contained HTML page from a [`Doc`] (`--format html`): the same blocks, in
//! the same order, as the terminal report and Markdown, plus the plots inline as SVG.
//!
//! - **Self-contained.** CSS, the small sorting script and every plot are in the file. A
//!   Content-Security-Policy (`default-src 'none'`) stops the page from loading anything,
//!   even if a value from a results document slipped past the escaping.
//! - **Readable without JavaScript.** Tables are plain `<table>`s; the log-y toggle of
//!   the throughput plots is a CSS checkbox. The script only adds sorting: click a column
//!   head, or open the page with `#sort=<table id>.<column>.<asc|desc>` (column from 0).
//! - **Printable, and readable on a phone.** `@media print` hides the toggles and keeps
//!   tables and figures whole, plots fitted to the paper. On a screen a plot keeps its
//!   own width (its smallest text about 11 px) and scrolls sideways in its box; a
//!   [`Grid::stacked`](crate::doc::Grid) table shows a block per row on a narrow screen.
//! - **Hostile text.** Every string from a document goes through
//!   [`benchboot_results::text::escape`] (control and bidi characters written out) and
//!   then HTML's five entities, so a board name cannot open a tag or a script.

use std::fmt::Write as _;

use anyhow::Result;
use benchboot_results::text::{escape, escape_lines};

use crate::chart::{PlotFigure, YScale};
use crate::doc::facts::{Facts, EMULATED_MARK};
use crate::doc::{Block, Doc, Grid, Tone};
use crate::plot::svg_untitled;

/// The page's stylesheet (light, system fonts, numbers right-aligned and tabular).
const CSS: &str = r#"
:root{color-scheme:light;--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--head:#f6f8fa;--alert:#fff1e5;--alert-line:#d1242f}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);margin:0 auto;padding:1rem 1.25rem 3rem;max-width:78rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem}
h2{font-size:1.15rem;margin:2rem 0 .5rem;padding-bottom:.25rem;border-bottom:1px solid var(--line)}
nav{font-size:.9rem;color:var(--muted)}nav a{margin-right:.75rem;white-space:nowrap}
p.alert{background:var(--alert);border-left:4px solid var(--alert-line);padding:.5rem .75rem;margin:.5rem 0}
.scroll{overflow-x:auto;margin:.5rem 0 1rem}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;font-size:.9rem}
th,td{border:1px solid var(--line);padding:.25rem .5rem;vertical-align:top;text-align:left}
th{background:var(--head);font-weight:600}
td.num,th.num{text-align:right;white-space:nowrap}
table.sortable th{cursor:pointer}
table.sortable th[aria-sort=ascending]::after{content:" \25B2"}
table.sortable th[aria-sort=descending]::after{content:" \25BC"}
td.significant{background:#dafbe1;font-weight:600}
td.undecided{color:var(--muted)}
pre{background:var(--head);padding:.5rem .75rem;overflow-x:auto;font-size:.85rem}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:.5rem 0 1.5rem}
dl.facts dt{font-weight:600}dl.facts dd{margin:0}
.facts .fig{font-variant-numeric:tabular-nums;font-weight:600;white-space:nowrap}
.facts .note{color:var(--muted)}.facts .emu{color:var(--alert-line)}
@media (max-width:30rem){dl.facts{grid-template-columns:1fr}dl.facts dd{margin-bottom:.4rem}}
figure{margin:1.5rem 0;page-break-inside:avoid}
figure .plot{overflow-x:auto}
figure svg{display:block;max-width:none;height:auto}
figcaption{font-weight:600;margin:0 0 .25rem}
.badge{display:inline-block;white-space:nowrap;overflow-wrap:normal;background:var(--alert-line);color:#fff;font-size:.75rem;font-weight:700;letter-spacing:.03em;padding:0 .4em;border-radius:3px;margin-right:.4em;vertical-align:.1em}
.fig .log{display:none}
.fig .logy:checked~.log{display:block}
.fig .logy:checked~.lin{display:none}
.fig label{font-size:.85rem;color:var(--muted)}
table.stacked{font-size:.85rem}
table.stacked th,table.stacked th.num{min-width:4.5rem;white-space:normal}
table.stacked td.num{white-space:normal}
table.stacked td{overflow-wrap:anywhere}
.back{font-size:.9rem;margin:.25rem 0}
@media (max-width:62rem){
table.stacked thead{display:none}
table.stacked,table.stacked tbody,table.stacked tr,table.stacked td{display:block;width:100%}
table.stacked tr{border:1px solid var(--line);margin:0 0 .75rem;padding:.25rem 0}
table.stacked td,table.stacked td.num{border:0;text-align:left;padding:.1rem .5rem}
table.stacked td::before{content:attr(data-label) ": ";color:var(--muted);font-weight:600}
}
@media print{nav,.fig input,.fig label,.noprint{display:none}body{max-width:none;padding:0}table,figure{page-break-inside:avoid}figure .plot{overflow:visible}figure svg{max-width:100%}.fig .log{display:none!important}.fig .lin{display:block!important}}
"#;

/// Sorting: a click on a column head sorts the table's rows by that column. A cell that
/// starts with a number (then a blank, `(`, `%` or its end) sorts by value, B/KiB/MiB/
/// GiB/TiB as factors; other text in natural order, its digit runs as numbers, so dates
/// (`2026-12-05 07:40`) and kernels (`6.9` before `6.10`) sort right; empty and "—"
/// last. `#sort=<table id>.<column>.<asc|desc>` sorts at load.
const SCRIPT: &str = r#"
(function(){
"use strict";
var UNITS={"B":1,"KiB":1024,"MiB":1048576,"GiB":1073741824,"TiB":1099511627776};
var NUM=/^([-+]?[0-9][0-9,]*(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)(?:\s*(B|KiB|MiB|GiB|TiB)(?![A-Za-z]))?(?=\s|\(|%|$)/;
function key(cell){
  var t=(cell?cell.textContent:"").trim();
  if(t===""||t==="\u2014")return[2,[]];
  var m=NUM.exec(t);
  if(m){var v=parseFloat(m[1].replace(/,/g,""));if(m[2])v*=UNITS[m[2]];return[0,[v]];}
  var parts=t.toLowerCase().match(/[0-9]+|[^0-9]+/g)||[];
  return[1,parts.map(function(p){return /^[0-9]/.test(p)?+p:p;})];
}
function cmpParts(a,b){
  for(var i=0;i<a.length&&i<b.length;i++){
    var x=a[i],y=b[i];if(x===y)continue;
    var xn=typeof x==="number",yn=typeof y==="number";
    if(xn!==yn)return xn?-1:1;
    return x<y?-1:1;
  }
  return a.length-b.length;
}
function cmp(a,b){if(a[0]!==b[0])return a[0]-b[0];return cmpParts(a[1],b[1]);}
function sort(table,col,desc){
  var body=table.tBodies[0];if(!body)return;
  var rows=Array.prototype.slice.call(body.rows);
  rows.sort(function(x,y){var c=cmp(key(x.cells[col]),key(y.cells[col]));return desc?-c:c;});
  rows.forEach(function(r){body.appendChild(r);});
  var heads=table.tHead.rows[0].cells;
  for(var i=0;i<heads.length;i++){heads[i].removeAttribute("aria-sort");}
  heads[col].setAttribute("aria-sort",desc?"descending":"ascending");
}
var tables=document.querySelectorAll("table.sortable");
Array.prototype.forEach.call(tables,function(table){
  var heads=table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads,function(th,col){
    th.tabIndex=0;
    var go=function(){sort(table,col,th.getAttribute("aria-sort")==="ascending");};
    th.addEventListener("click",go);
    th.addEventListener("keydown",function(e){if(e.key==="Enter"||e.key===" "){e.preventDefault();go();}});
  });
});
var m=/^#sort=([A-Za-z0-9_-]+)\.([0-9]+)\.(asc|desc)$/.exec(location.hash);
if(m){var t=document.getElementById(m[1]);
  if(t&&t.tHead&&+m[2]<t.tHead.rows[0].cells.length)sort(t,+m[2],m[3]==="desc");}
})();
"#;

/// The Content-Security-Policy of every page: nothing is fetched, inline style and
/// script only, images only as data.
pub const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

/// `s` safe inside HTML text or a double-quoted attribute: control and bidi characters
/// written out ([`escape`]), then `&`, `<`, `>`, `"` and `'` as entities.
pub fn text(s: &str) -> String {
    entities(&escape(s))
}

fn entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Lines of `s` joined with `<br>`, each through [`text`].
fn lines(s: &str) -> String {
    escape_lines(s)
        .lines()
        .map(entities)
        .collect::<Vec<_>>()
        .join("<br>\n")
}

/// The page of `doc`: its title from the first [`Block::Title`], a contents line of its
/// headings (under a [`Block::Facts`] right after the title), every block, the plots inline (each [`PlotFigure`] as SVG; with
/// [`YScale::LinearOrLog`] a second SVG on a log10 y axis behind a checkbox).
///
/// # Errors
/// When a plot cannot be drawn ([`svg_string`]).
pub fn page(doc: &Doc) -> Result<String> {
    let title = doc
        .blocks
        .iter()
        .find_map(|b| match b {
            Block::Title(t) => Some(t.as_str()),
            _ => None,
        })
        .unwrap_or("benchboot");
    let mut body = String::new();
    let mut toc = Vec::new();
    let mut tables = 0usize;
    let mut figures = 0usize;
    for b in &doc.blocks {
        match b {
            Block::Title(s) => writeln!(body, "<h1>{}</h1>", text(s))?,
            Block::Alert(s) => writeln!(
                body,
                "<p class=\"alert\" role=\"alert\"><strong>{}</strong></p>",
                lines(s)
            )?,
            Block::Heading(s) => {
                let id = format!("s{}", toc.len() + 1);
                writeln!(body, "<h2 id=\"{id}\">{}</h2>", text(s))?;
                toc.push((id, s.clone()));
            }
            Block::Text(s) => writeln!(body, "<p>{}</p>", lines(s))?,
            Block::List(items) => {
                body.push_str("<ul>\n");
                for i in items {
                    writeln!(body, "<li>{}</li>", lines(i))?;
                }
                body.push_str("</ul>\n");
            }
            Block::Grid(g) => {
                tables += 1;
                body.push_str(&table(g, &format!("t{tables}")));
            }
            Block::Pre(ls) => {
                body.push_str("<pre>");
                for l in ls {
                    body.push_str(&text(l));
                    body.push('\n');
                }
                body.push_str("</pre>\n");
            }
            Block::Facts(f) => body.push_str(&facts(f)),
            Block::Figure(f) => {
                figures += 1;
                body.push_str(&figure(f, figures)?);
            }
        }
    }
    let mut out = String::new();
    writeln!(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>")?;
    writeln!(out, "<meta charset=\"utf-8\">")?;
    writeln!(
        out,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
    )?;
    writeln!(
        out,
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    )?;
    writeln!(
        out,
        "<meta name=\"generator\" content=\"benchboot {}\">",
        env!("CARGO_PKG_VERSION")
    )?;
    writeln!(out, "<title>{}</title>", text(title))?;
    writeln!(out, "<style>{CSS}</style>\n</head>\n<body>")?;
    // The contents line goes under the title (the first heading of the page).
    let mut nav = String::new();
    if toc.len() > 1 {
        nav.push_str("<nav>");
        for (id, h) in &toc {
            writeln!(nav, "<a href=\"#{id}\">{}</a>", text(h))?;
        }
        nav.push_str("</nav>\n");
    }
    let mut at = body.find("</h1>\n").map_or(0, |i| i + "</h1>\n".len());
    // A headline right under the title stays first: the contents line goes below it.
    if body[at..].starts_with(FACTS_OPEN) {
        at += body[at..]
            .find(FACTS_CLOSE)
            .map_or(0, |i| i + FACTS_CLOSE.len());
    }
    body.insert_str(at, &nav);
    out.push_str(&body);
    writeln!(out, "<script>{SCRIPT}</script>\n</body>\n</html>")?;
    Ok(out)
}

/// A [`Grid`] as a sortable table with id `id` inside a horizontally scrolling box:
/// label columns left, numbers right, a cell's [`Tone`] as its class, a row's link on
/// its first cell.
fn table(g: &Grid, id: &str) -> String {
    let class = |i: usize| {
        if i < g.left_columns {
            ""
        } else {
            " class=\"num\""
        }
    };
    let stacked = if g.stacked { " stacked" } else { "" };
    let mut out = format!(
        "<div class=\"scroll\"><table class=\"sortable{stacked}\" id=\"{id}\">\n<thead><tr>"
    );
    for (i, h) in g.header.iter().enumerate() {
        let _ = write!(out, "<th scope=\"col\"{}>{}</th>", class(i), lines(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (r, row) in g.rows.iter().enumerate() {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let mut classes = Vec::new();
            if i >= g.left_columns {
                classes.push("num");
            }
            match g.tone(r, i) {
                Some(Tone::Significant) => classes.push("significant"),
                Some(Tone::Undecided) => classes.push("undecided"),
                None => {}
            }
            let mut attr = if classes.is_empty() {
                String::new()
            } else {
                format!(" class=\"{}\"", classes.join(" "))
            };
            if g.stacked {
                let head = g.header.get(i).map_or("", String::as_str);
                let _ = write!(attr, " data-label=\"{}\"", text(&head.replace('\n', " ")));
            }
            // EMULATED in a cell (a run's state, a series of QEMU figures) as a badge.
            let cell = lines(cell).replace("EMULATED", "<span class=\"badge\">EMULATED</span>");
            let content = match (i, g.links.get(r).and_then(Option::as_ref)) {
                (0, Some(href)) => format!("<a href=\"{}\">{cell}</a>", text(href)),
                _ => cell,
            };
            let _ = write!(out, "<td{attr}>{content}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n");
    out
}

/// How a [`Facts`] block opens and closes on the page.
const FACTS_OPEN: &str = "<section class=\"facts\">";
const FACTS_CLOSE: &str = "</section>\n";

/// A [`Facts`] block: its lead as alerts (or a bold paragraph), its figures as a
/// `<dl class="facts">` (label, then the figure and its note; an emulated figure's note
/// opens with the EMULATED mark).
fn facts(f: &Facts) -> String {
    let mut out = format!("{FACTS_OPEN}\n");
    for l in &f.lead {
        if f.alert {
            let _ = writeln!(
                out,
                "<p class=\"alert\" role=\"alert\"><strong>{}</strong></p>",
                text(l)
            );
        } else {
            let _ = writeln!(out, "<p><strong>{}</strong></p>", text(l));
        }
    }
    if !f.rows.is_empty() {
        out.push_str("<dl class=\"facts\">\n");
        for r in &f.rows {
            let mark = if r.emulated {
                let sep = if r.note.is_empty() { "" } else { "; " };
                format!("<strong class=\"emu\">{EMULATED_MARK}</strong>{sep}")
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "<dt>{}</dt><dd><span class=\"fig\">{}</span> <span class=\"note\">{mark}{}</span></dd>",
                text(&r.label),
                text(&r.figure),
                text(&r.note)
            );
        }
        out.push_str("</dl>\n");
    }
    out.push_str(FACTS_CLOSE);
    out
}

/// `title` as HTML, the word EMULATED (and the prefix [`crate::chart::emulated_prefix`]
/// writes) as a badge in front.
pub fn title_with_badge(title: &str) -> String {
    let prefix = crate::chart::emulated_prefix(true);
    match title.strip_prefix(prefix) {
        Some(rest) => format!(
            "<span class=\"badge\">EMULATED</span>(QEMU, not hardware) {}",
            text(rest)
        ),
        None => text(title),
    }
}

/// One plot as `<figure>`, titled once: its caption (EMULATED first, as a badge) above
/// the SVG, which is drawn without a title of its own ([`svg_untitled`]), its y axes as
/// [`YScale`] says: linear, log10, or linear with the same on a log10 axis shown by a
/// checkbox (CSS, no script). The SVG keeps its own width and scrolls sideways on a
/// narrow screen, so its text is never drawn smaller than [`crate::plot::SMALL_FONT`]
/// gives (about 11 px).
fn figure(f: &PlotFigure, n: usize) -> Result<String> {
    let svg = |log_y: bool| -> Result<String> {
        let s = svg_untitled(f, log_y)?;
        // An accessible name for the image: the figure's caption.
        Ok(s.replacen(
            "<svg ",
            &format!("<svg role=\"img\" aria-labelledby=\"f{n}-title\" "),
            1,
        ))
    };
    let mut out = format!(
        "<figure class=\"fig\" id=\"f{n}\">\n<figcaption id=\"f{n}-title\">{}</figcaption>\n",
        title_with_badge(&f.title)
    );
    if f.y_scale == YScale::LinearOrLog {
        let _ = writeln!(
            out,
            "<input type=\"checkbox\" class=\"logy\" id=\"f{n}-log\"><label for=\"f{n}-log\">log y axis (the small block sizes)</label>"
        );
        let _ = writeln!(out, "<div class=\"plot lin\">{}</div>", svg(false)?);
        let _ = writeln!(out, "<div class=\"plot log\">{}</div>", svg(true)?);
    } else {
        let log_y = f.y_scale == YScale::Log;
        let _ = writeln!(out, "<div class=\"plot\">{}</div>", svg(log_y)?);
    }
    out.push_str("</figure>\n");
    Ok(out)
}

#[cfg(test)]
mod tests;
