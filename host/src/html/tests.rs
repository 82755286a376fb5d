//! The page's shape and its escaping, over hand-built documents.

use super::*;
use crate::chart::{Chart, FigureSection, Point, Series, XAxis, YScale};

fn chart() -> Chart {
    Chart {
        title: "Write, mode sync".into(),
        x_desc: "block size (log2 scale)".into(),
        y_desc: "MiB/s (2^20 B/s)".into(),
        x_axis: XAxis::Log2Bytes,
        y_max: None,
        legend_right: false,
        bands: Vec::new(),
        series: vec![Series {
            label: "ext4".into(),
            points: vec![
                Point::single(3.0, 0.05),
                Point::single(12.0, 4.0),
                Point::single(22.0, 210.0),
            ],
        }],
    }
}

fn figure(y_scale: YScale) -> PlotFigure {
    PlotFigure {
        stem: "run-storage-sync-write".into(),
        title: "board: write throughput".into(),
        panels: vec![chart()],
        columns: 1,
        section: FigureSection::Storage,
        y_scale,
    }
}

#[test]
fn text_escapes_markup_and_control_characters() {
    assert_eq!(
        text("<script>alert('x')</script> & \"\u{1b}[2J\u{202e}"),
        "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;\\u{1b}[2J\\u{202e}"
    );
}

/// A board name, a heading, a cell and a link from a hostile document: none opens a tag,
/// none leaves a raw control character, and the page still forbids every request.
#[test]
fn hostile_text_stays_text_everywhere_on_the_page() {
    let evil = "<img src=x onerror=alert(1)>\u{1b}]0;pwn\u{7}";
    let mut g = Grid::new(vec![evil.into(), "MiB/s".into()]);
    g.push(vec![evil.into(), "1.00".into()]);
    g.links.push(Some("\"><script>x()</script>.html".into()));
    let doc = Doc {
        blocks: vec![
            Block::Title(evil.into()),
            Block::Alert(evil.into()),
            Block::Heading(evil.into()),
            Block::Text(format!("{evil}\nsecond line")),
            Block::List(vec![evil.into()]),
            Block::Grid(g),
            Block::Pre(vec![evil.into()]),
        ],
    };
    let html = page(&doc).unwrap();
    assert!(!html.contains("<img"), "{html}");
    assert!(!html.contains("<script>x()"), "{html}");
    assert!(!html.contains('\u{1b}') && !html.contains('\u{7}'));
    // <title>, h1, the alert, h2, the paragraph, the list item, th, td and pre.
    assert_eq!(
        html.matches("&lt;img src=x onerror=alert(1)&gt;").count(),
        9
    );
    assert!(html.contains("<a href=\"&quot;&gt;&lt;script&gt;x()&lt;/script&gt;.html\">"));
    assert!(html.contains(&format!("content=\"{CSP}\"")));
    assert!(html.contains("second line</p>") && html.contains("<br>"));
}

/// The page's skeleton: one `<title>`, a contents line linking every heading, one
/// sortable table per grid with numbers right-aligned, the script once at the end.
#[test]
fn the_page_holds_every_block_in_order() {
    let mut g = Grid::new(vec!["block size".into(), "ext4".into()]);
    g.push(vec!["4 KiB".into(), "12.00".into()]);
    g.tones.push((0, 1, Tone::Significant));
    let doc = Doc {
        blocks: vec![
            Block::Title("benchboot report: run r on b".into()),
            Block::Heading("Context".into()),
            Block::Text("plan: built in".into()),
            Block::Heading("Storage".into()),
            Block::Grid(g),
        ],
    };
    let html = page(&doc).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
    assert!(html.contains("<title>benchboot report: run r on b</title>"));
    assert!(html.contains("<nav><a href=\"#s1\">Context</a>\n<a href=\"#s2\">Storage</a>\n</nav>"));
    // The contents line sits under the title.
    assert!(html.contains("run r on b</h1>\n<nav>"));
    let (h1, h2, t) = (
        html.find("<h1>").unwrap(),
        html.find("<h2 id=\"s2\">Storage</h2>").unwrap(),
        html.find("<table class=\"sortable\" id=\"t1\">").unwrap(),
    );
    assert!(h1 < h2 && h2 < t);
    assert!(
        html.contains("<th scope=\"col\">block size</th><th scope=\"col\" class=\"num\">ext4</th>")
    );
    assert!(html.contains("<td>4 KiB</td><td class=\"num significant\">12.00</td>"));
    assert_eq!(html.matches("<script>").count(), 1);
    assert!(html.trim_end().ends_with("</script>\n</body>\n</html>"));
}

/// A throughput figure comes as two inline SVGs (linear and log10 y) behind a CSS
/// checkbox; any other figure as one, a latency figure on log10 only. No external
/// reference: the only `http` is SVG's namespace.
#[test]
fn figures_are_inline_svg_with_the_log_toggle_where_asked() {
    let doc = Doc {
        blocks: vec![
            Block::Figure(Box::new(figure(YScale::LinearOrLog))),
            Block::Figure(Box::new(figure(YScale::Linear))),
            Block::Figure(Box::new(figure(YScale::Log))),
        ],
    };
    let html = page(&doc).unwrap();
    assert_eq!(html.matches("<svg ").count(), 4);
    // The toggle's log SVG and the log-only figure; the linear one has none.
    assert_eq!(html.matches("(log10 scale)").count(), 2);
    assert!(html.contains("<div class=\"plot\"><svg role=\"img\" aria-labelledby=\"f3-title\""));
    assert_eq!(
        html.matches("<input type=\"checkbox\" class=\"logy\"")
            .count(),
        1
    );
    assert!(html.contains("<figcaption id=\"f1-title\">board: write throughput</figcaption>"));
    assert!(html.contains("<div class=\"plot log\"><svg role=\"img\" aria-labelledby=\"f1-title\""));
    // Titled once: the caption above the plot, not again inside the SVG (three figures).
    assert_eq!(html.matches("board: write throughput").count(), 3);
    assert!(html.contains("MiB/s (2^20 B/s) (log10 scale)"));
    let without_ns = html.replace("http://www.w3.org/2000/svg", "");
    assert!(!without_ns.contains("http:") && !without_ns.contains("https:"));
    assert!(!html.contains(" src=") && !html.contains("url(") && !html.contains("@import"));
}

#[test]
fn the_log_axis_takes_log10_and_drops_zeros() {
    use crate::plot::log10_chart;
    let c = log10_chart(&chart());
    let ys: Vec<f64> = c.series[0].points.iter().map(|p| p.y).collect();
    assert!((ys[0] - 0.05f64.log10()).abs() < 1e-12 && (ys[2] - 210f64.log10()).abs() < 1e-12);
    // A point at zero has no place on a log axis.
    let mut zero = chart();
    zero.series[0].points[0].y = 0.0;
    assert_eq!(log10_chart(&zero).series[0].points.len(), 2);
}

/// A figure's title, axis names and series labels come from documents too (board names,
/// target labels): inside the inline SVG they stay text (plotters escapes `<`, `&` and
/// quotes; control characters are written out first), so the page's one script is its
/// own.
#[test]
fn hostile_labels_inside_a_figure_stay_text() {
    let evil = "<script>alert(1)</script>\u{1b}[31m";
    let mut f = figure(YScale::LinearOrLog);
    f.title = evil.into();
    f.panels[0].title = evil.into();
    f.panels[0].series[0].label = evil.into();
    let html = page(&Doc {
        blocks: vec![Block::Figure(Box::new(f))],
    })
    .unwrap();
    assert_eq!(html.matches("<script>").count(), 1, "only the page's own");
    assert!(!html.contains('\u{1b}'));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;\\u{1b}[31m"));
}

/// A stacked grid (the runs page's): its class, every cell labelled with its column
/// head for the narrow layout (escaped), EMULATED as a badge; an EMULATED figure's
/// caption opens with the badge, the rest of its title escaped.
#[test]
fn stacked_tables_label_their_cells_and_emulated_is_a_badge() {
    let mut g = Grid::new(vec![
        "run <id>".into(),
        "state".into(),
        "MiB/s\n(rule)".into(),
    ]);
    g.left_columns = 2;
    g.stacked = true;
    g.push(vec![
        "r1".into(),
        "complete, EMULATED".into(),
        "99.51\n(1 MiB)".into(),
    ]);
    let html = table(&g, "t1");
    assert!(
        html.contains("<table class=\"sortable stacked\" id=\"t1\">"),
        "{html}"
    );
    assert!(html
        .contains("<td data-label=\"state\">complete, <span class=\"badge\">EMULATED</span></td>"));
    assert!(
        html.contains("<td data-label=\"run &lt;id&gt;\">r1</td>"),
        "{html}"
    );
    assert!(
        html.contains("<td class=\"num\" data-label=\"MiB/s (rule)\">99.51<br>\n(1 MiB)</td>"),
        "{html}"
    );
    g.stacked = false;
    assert!(!table(&g, "t1").contains("data-label"));
    let mut f = figure(YScale::Linear);
    f.title = format!("{}b<a>: latency", crate::chart::emulated_prefix(true));
    let html = page(&Doc {
        blocks: vec![Block::Figure(Box::new(f))],
    })
    .unwrap();
    assert!(html.contains(
        "<figcaption id=\"f1-title\"><span class=\"badge\">EMULATED</span>(QEMU, not hardware) b&lt;a&gt;: latency</figcaption>"
    ), "{html}");
}
