//! Bar charts across runs for the runs page, as sbc-reviews draws them: one chart per
//! figure, a bar per run (best first, runs without the figure last with a dash), the
//! unit and which way is better in the chart's head. Plain HTML and CSS (bar widths
//! as inline styles), so the charts show without script; a `<select>` chooses the one
//! shown when script runs (inline, no external file).

use std::fmt::Write as _;

use crate::html::text;

/// What one chart shows: its name (a column head), the unit of its values and whether
/// a higher value is better.
#[derive(Debug, Clone, PartialEq)]
pub struct BarColumn {
    pub name: String,
    pub unit: &'static str,
    pub higher_is_better: bool,
}

/// One run's bars: its label (the run id), whether it ran under QEMU, and per column its
/// value (`None`: no such figure) with a detail (where it was measured).
#[derive(Debug, Clone, PartialEq)]
pub struct BarRun {
    pub label: String,
    pub emulated: bool,
    pub values: Vec<Option<(f64, String)>>,
}

const CSS: &str = "\
.bars{margin:.5rem 0 1.5rem}.bars[hidden]{display:none}\
.bars h3{font-size:1rem;margin:.5rem 0}\
.bar-row{display:grid;grid-template-columns:minmax(6rem,16rem) 1fr minmax(6rem,auto);gap:.5rem;align-items:center;font-size:.9rem;margin:.2rem 0}\
.bar-label{overflow-wrap:anywhere}\
.bar-track{background:var(--head);height:1.1rem;border-radius:2px}\
.bar{display:block;height:100%;background:#1f77b4;border-radius:2px}\
.bar.emulated{background:repeating-linear-gradient(45deg,#d1242f 0 6px,#f0a0a6 6px 12px)}\
.bar-value{font-variant-numeric:tabular-nums;white-space:nowrap}\
@media (max-width:40rem){.bar-row{grid-template-columns:1fr;gap:0}}\
@media print{#bars-choose{display:none}.bars[hidden]{display:block}}";

const SCRIPT: &str = "(function(){var s=document.getElementById('bars-pick');if(!s)return;\
function show(){Array.prototype.forEach.call(document.querySelectorAll('.bars'),\
function(b){b.hidden=b.id!==s.value;});}\
s.addEventListener('change',show);show();})();";

/// A value as the bars print it: no decimals from 100 up, else two.
fn number(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The charts' HTML (a heading, the chooser, one `<div class="bars" id="bars-<i>">` per
/// column, its style and script): every text through [`text`]. Empty when no run has
/// any figure.
pub fn html(columns: &[BarColumn], runs: &[BarRun]) -> String {
    let has = |i: usize| {
        runs.iter()
            .any(|r| matches!(r.values.get(i), Some(Some(_))))
    };
    if !(0..columns.len()).any(has) {
        return String::new();
    }
    let mut out = format!("<style>{CSS}</style>\n<h2 id=\"bars\">Bar charts across runs</h2>\n");
    out.push_str(
        "<p id=\"bars-choose\"><label for=\"bars-pick\">Figure: </label><select id=\"bars-pick\">",
    );
    for (i, c) in columns.iter().enumerate() {
        let _ = write!(out, "<option value=\"bars-{i}\">{}</option>", text(&c.name));
    }
    out.push_str("</select></p>\n");
    for (i, c) in columns.iter().enumerate() {
        let better = if c.higher_is_better {
            "higher is better"
        } else {
            "lower is better"
        };
        let _ = writeln!(
            out,
            "<div class=\"bars\" id=\"bars-{i}\"><h3>{} ({}, {better})</h3>",
            text(&c.name),
            text(c.unit)
        );
        let mut order: Vec<(&BarRun, Option<&(f64, String)>)> = runs
            .iter()
            .map(|r| (r, r.values.get(i).and_then(Option::as_ref)))
            .collect();
        // Best first; no figure last.
        order.sort_by(|a, b| match (a.1, b.1) {
            (Some(x), Some(y)) if c.higher_is_better => y.0.total_cmp(&x.0),
            (Some(x), Some(y)) => x.0.total_cmp(&y.0),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
        let max = order
            .iter()
            .filter_map(|(_, v)| v.map(|v| v.0))
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::max);
        for (run, v) in order {
            let badge = if run.emulated {
                "<span class=\"badge\">EMULATED</span>"
            } else {
                ""
            };
            let (bar, value) = match v {
                Some((v, detail)) if v.is_finite() => {
                    let pct = if max > 0.0 {
                        (v / max * 100.0).clamp(0.0, 100.0)
                    } else {
                        0.0
                    };
                    let class = if run.emulated { "bar emulated" } else { "bar" };
                    let detail = if detail.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", text(detail))
                    };
                    (
                        format!("<span class=\"{class}\" style=\"width:{pct:.1}%\"></span>"),
                        format!("{} {}{detail}", number(*v), text(c.unit)),
                    )
                }
                _ => (String::new(), "—".to_owned()),
            };
            let _ = writeln!(
                out,
                "<div class=\"bar-row\"><span class=\"bar-label\">{badge}{}</span><span class=\"bar-track\">{bar}</span><span class=\"bar-value\">{value}</span></div>",
                text(&run.label)
            );
        }
        out.push_str("</div>\n");
    }
    let _ = writeln!(out, "<script>{SCRIPT}</script>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Best first (lower for latency), a run without the figure last with a dash, the
    /// widest bar the best value, the unit and direction in the head, text escaped.
    #[test]
    fn bars_best_first_with_units() {
        let columns = [BarColumn {
            name: "latency <ns>".into(),
            unit: "ns",
            higher_is_better: false,
        }];
        let run = |label: &str, v: Option<f64>| BarRun {
            label: label.into(),
            emulated: label == "q",
            values: vec![v.map(|v| (v, "64 MiB".into()))],
        };
        let html = html(
            &columns,
            &[
                run("a", Some(200.0)),
                run("none", None),
                run("q", Some(100.0)),
            ],
        );
        assert!(
            html.contains("<h3>latency &lt;ns&gt; (ns, lower is better)</h3>"),
            "{html}"
        );
        let (q, a, none) = (
            html.find(">q</span>").unwrap(),
            html.find(">a</span>").unwrap(),
            html.find(">none</span>").unwrap(),
        );
        assert!(q < a && a < none, "{html}");
        assert!(html.contains("<span class=\"bar\" style=\"width:100.0%\"></span></span><span class=\"bar-value\">200 ns (64 MiB)</span>"));
        assert!(html.contains("<span class=\"badge\">EMULATED</span>q"));
        assert!(html.contains("<span class=\"bar-value\">—</span>"));
        assert_eq!(super::html(&columns, &[run("none", None)]), "");
    }
}
