//! A comparison's verdicts in words: per section, each other entry against the first (the
//! baseline), faster or slower (lower or higher, better or worse where less is better),
//! by how much in percent, where (targets, block sizes, links, grouped), and whether the
//! difference is larger than the run-to-run spread ([`super::against`]'s min–max ranges
//! and rank test); with the geometric mean of the ratios where every cell has the same
//! unit and more is better. What `compare` prints first.

use serde::{Deserialize, Serialize};

use super::energy::EnergyComparison;
use super::{Against, Comparison, Key, Section, SpreadVerdict, ALPHA};
use crate::doc::Block;
use crate::units::block_size_label;

/// Which way is better for a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Better {
    /// Throughput, IOPS, bandwidth.
    Higher,
    /// Latency, energy.
    Lower,
}

/// What one cell (or a group of cells) says about the entry against the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// Better by more than the spread (or, untested, by at least 0.5 %).
    Better,
    /// Worse by more than the spread (or, untested, by at least 0.5 %).
    Worse,
    /// Within the run-to-run spread: ranges overlap and no rank test says otherwise.
    Noise,
    /// Not tested and less than 0.5 % apart.
    Same,
}

/// Whether a cell's difference could be tested against its spread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tested {
    /// Both sides have at least two values: min–max ranges and the rank test.
    Yes,
    /// One value on each side.
    OneRunEach,
    /// One value on one side.
    OneRunOneSide,
    /// The other entry is a published figure.
    Reference,
}

impl Tested {
    fn words(self) -> &'static str {
        match self {
            Tested::Yes => "",
            Tested::OneRunEach => "one run each: not tested",
            Tested::OneRunOneSide => "one run on one side: not tested",
            Tested::Reference => "one published figure: not tested",
        }
    }
}

/// One place of a section where the entry did one thing: `ext4`, `ext4 at 4 KiB to 1 MiB`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Place {
    /// The top place: a target, a link, a device.
    pub place: String,
    /// Where inside it, when its cells disagree (`at 4 KiB to 1 MiB`); empty: all of it.
    pub within: String,
    pub change: Change,
    pub tested: Tested,
    /// The entry's figure ÷ the baseline's, per cell (median ÷ median).
    pub ratios: Vec<f64>,
    /// The largest run-to-run spread of its cells, ± percent of the median (half the
    /// min–max range); 0 when untested.
    pub spread_pct: f64,
}

/// The geometric mean of a section's ratios (entry ÷ baseline).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GeoMean {
    pub cells: usize,
    pub ratio: f64,
}

/// One section's verdict for one entry against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// `Sequential write, mode sync`, `TCP on ncm`, `Memory latency`, `Energy`.
    pub section: String,
    pub better: Better,
    /// The entry or the baseline is a QEMU run (or an emulated meter's trace).
    pub emulated: bool,
    pub places: Vec<Place>,
    /// Where more is better and every cell has one unit, over at least two cells.
    pub geomean: Option<GeoMean>,
    /// The verdict in words, as printed: `[EMULATED: ]Section: words`.
    pub text: String,
}

/// Every verdict of one entry against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntryVerdicts {
    /// `B`.
    pub letter: String,
    /// `A`.
    pub base: String,
    /// The heading: `B (run-b) against A (run-a), the baseline`.
    pub heading: String,
    pub verdicts: Vec<Verdict>,
    /// The sections one side did not measure, by title.
    pub one_side_only: Vec<String>,
}

/// The geometric mean of `ratios` (each > 0); `None` when empty or one is not.
pub fn geometric_mean(ratios: &[f64]) -> Option<f64> {
    if ratios.is_empty() || ratios.iter().any(|r| !(r.is_finite() && *r > 0.0)) {
        return None;
    }
    Some((ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp())
}

/// A section's words: its title, which way is better, the subject's verb phrases (`{L}`
/// stands for the letter) and the preposition before its places.
struct Words {
    title: String,
    better: Better,
    /// `{L} writes`: before a percent.
    does: &'static str,
    /// `{L} is`: before "within noise" or "unchanged".
    is: &'static str,
    /// (better, worse): `faster`, `slower`.
    adjectives: (&'static str, &'static str),
    on: &'static str,
    /// The geometric mean makes sense (one unit, more is better).
    geomean: bool,
}

/// Where a cell sits below its top place: a block size (consecutive ones merge into a
/// range) or a label.
#[derive(Debug, Clone, PartialEq)]
enum Sub {
    None,
    Size(u64),
    Label(String),
}

/// One cell of one entry: its section, place and what it says.
struct Cell {
    section: String,
    top: String,
    sub: Sub,
    ratio: f64,
    change: Change,
    tested: Tested,
    spread_pct: f64,
}

fn direction_words(d: &str) -> String {
    match d {
        "board-to-host" => "board → host".into(),
        "host-to-board" => "host → board".into(),
        other => other.into(),
    }
}

/// The words and places of a compare row; `None` for the rows without a verdict (the
/// board's CPU shares during TCP).
fn words_of(k: &Key, several_modes: bool) -> Option<(Words, String, Sub)> {
    // More is better, one unit: faster or slower.
    let fast = |title: String, does, on| Words {
        title,
        better: Better::Higher,
        does,
        is: "{L} is",
        adjectives: ("faster", "slower"),
        on,
        geomean: true,
    };
    let label = |s: String| Sub::Label(s);
    Some(match k.section {
        Section::Storage => {
            let write = k.direction == "write";
            let mut title = format!("Sequential {}", if write { "write" } else { &k.direction });
            if several_modes {
                title.push_str(&format!(", mode {}", k.mode));
            }
            let does = if write { "{L} writes" } else { "{L} reads" };
            let w = fast(title, does, "on");
            (w, k.target.clone(), Sub::Size(k.block_size_bytes))
        }
        Section::DeviceRead => {
            let w = fast("Device reads".into(), "{L} reads", "on");
            (w, format!("{} {}", k.target, k.direction), Sub::None)
        }
        Section::Random => {
            let w = Words {
                does: "{L} does",
                adjectives: ("more IOPS", "fewer IOPS"),
                ..fast("Random I/O".into(), "", "on")
            };
            let bs = block_size_label(k.block_size_bytes);
            let sub = label(format!("{} {bs} QD {}", k.direction, k.param));
            (w, k.target.clone(), sub)
        }
        Section::Tcp if !k.target.is_empty() => {
            let w = fast(format!("TCP on {}", k.target), "{L} is", "");
            let s = if k.param == 1 { "" } else { "s" };
            let sub = label(format!("with {} stream{s}", k.param));
            (w, direction_words(&k.direction), sub)
        }
        Section::Http if !k.target.is_empty() => {
            let w = fast("HTTP GET".into(), "{L} is", "on");
            (w, k.target.clone(), label(direction_words(&k.direction)))
        }
        Section::MemoryBandwidth => {
            let w = fast("Memory bandwidth".into(), "{L} is", "on");
            let cores = match k.target.as_str() {
                "" => "the first CPU".to_owned(),
                t => t.to_owned(),
            };
            (w, cores, label(format!("in {}", k.direction)))
        }
        Section::MemoryLatency => {
            let w = Words {
                title: "Memory latency".into(),
                better: Better::Lower,
                does: "{L}'s latency is",
                is: "{L}'s latency is",
                adjectives: ("lower (better)", "higher (worse)"),
                on: "with",
                geomean: false,
            };
            let chain = format!("{} pages, {} chain", k.mode, k.direction);
            (w, chain, Sub::Size(k.block_size_bytes))
        }
        Section::Card => {
            let what = match k.direction.as_str() {
                "write" => "the average write",
                "read" => "the average read",
                "sustained" => "the sustained write",
                other => other,
            };
            (
                fast("Whole card".into(), "{L} is", "in"),
                what.into(),
                Sub::None,
            )
        }
        _ => return None,
    })
}

/// The entry's figure ÷ the baseline's and what the cell says, from the baseline's
/// [`Against`] (baseline ÷ entry); `None` without a usable ratio.
fn judge(a: &Against, n: (usize, usize), reference: bool, better: Better) -> Option<Cell> {
    let r = 1.0 / a.ratio.filter(|x| x.is_finite() && *x > 0.0)?;
    let improves = (r > 1.0) == (better == Better::Higher);
    let moved = if improves {
        Change::Better
    } else {
        Change::Worse
    };
    let (change, tested) = match a.spread {
        SpreadVerdict::NoSpread => {
            let tested = if reference {
                Tested::Reference
            } else if n.0 < 2 && n.1 < 2 {
                Tested::OneRunEach
            } else {
                Tested::OneRunOneSide
            };
            let same = ((r - 1.0).abs() * 100.0) < 0.5;
            (if same { Change::Same } else { moved }, tested)
        }
        SpreadVerdict::Apart => (moved, Tested::Yes),
        SpreadVerdict::Overlap => match a.test {
            Some(t) if t.p < ALPHA => (moved, Tested::Yes),
            _ => (Change::Noise, Tested::Yes),
        },
    };
    Some(Cell {
        section: String::new(),
        top: String::new(),
        sub: Sub::None,
        ratio: r,
        change,
        tested,
        spread_pct: 0.0,
    })
}

/// Half the min–max range of `s` as a percent of its median.
fn spread_pct(s: &super::Stat) -> f64 {
    match s.median {
        Some(m) if m > 0.0 && s.n > 1 => (s.max - s.min) / 2.0 / m * 100.0,
        _ => 0.0,
    }
}

/// The places of one section's cells: each top place whole when its cells agree, else
/// split into runs of consecutive cells that agree (`ext4 at 4 KiB to 1 MiB`); untested
/// cells of a place that disagree are one place judged by their geometric mean.
fn places(cells: &[&Cell], better: Better) -> Vec<Place> {
    let mut tops: Vec<&str> = Vec::new();
    for c in cells {
        if !tops.contains(&c.top.as_str()) {
            tops.push(&c.top);
        }
    }
    let mut out = Vec::new();
    for top in tops {
        let mine: Vec<&&Cell> = cells.iter().filter(|c| c.top == top).collect();
        let mut runs: Vec<Vec<&&Cell>> = Vec::new();
        for c in &mine {
            match runs.last_mut() {
                Some(run) if (run[0].change, run[0].tested) == (c.change, c.tested) => run.push(c),
                _ => runs.push(vec![c]),
            }
        }
        let tested = mine[0].tested;
        if runs.len() > 1 && tested != Tested::Yes && mine.iter().all(|c| c.tested == tested) {
            // Untested cells that point both ways: one place, judged by their mean,
            // rather than a place per single noisy figure.
            let ratios: Vec<f64> = mine.iter().map(|c| c.ratio).collect();
            let g = geometric_mean(&ratios).unwrap_or(1.0);
            let change = if percent(g) < 0.5 {
                Change::Same
            } else if (g > 1.0) == (better == Better::Higher) {
                Change::Better
            } else {
                Change::Worse
            };
            out.push(Place {
                place: top.to_owned(),
                within: "(mixed, overall)".into(),
                change,
                tested,
                ratios: vec![g],
                spread_pct: 0.0,
            });
            continue;
        }
        let whole = runs.len() == 1;
        for run in runs {
            out.push(Place {
                place: top.to_owned(),
                within: if whole {
                    String::new()
                } else {
                    sub_words(&run)
                },
                change: run[0].change,
                tested: run[0].tested,
                ratios: run.iter().map(|c| c.ratio).collect(),
                spread_pct: run.iter().map(|c| c.spread_pct).fold(0.0, f64::max),
            });
        }
    }
    out
}

/// `at 4 KiB to 1 MiB`, `at 4 KiB`, `read 4 KiB QD 1 and write 4 KiB QD 1`.
fn sub_words(run: &[&&Cell]) -> String {
    let sizes: Vec<u64> = run
        .iter()
        .filter_map(|c| match c.sub {
            Sub::Size(s) => Some(s),
            _ => None,
        })
        .collect();
    if sizes.len() == run.len() && !sizes.is_empty() {
        let (lo, hi) = (sizes[0], sizes[sizes.len() - 1]);
        return if lo == hi {
            format!("at {}", block_size_label(lo))
        } else {
            format!("at {} to {}", block_size_label(lo), block_size_label(hi))
        };
    }
    let labels: Vec<String> = run
        .iter()
        .filter_map(|c| match &c.sub {
            Sub::Label(l) => Some(l.clone()),
            Sub::Size(s) => Some(block_size_label(*s)),
            Sub::None => None,
        })
        .collect();
    and_list(&labels)
}

/// `a`, `a and b`, `a, b and c`.
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The places of one class in words: one place's parts joined (`ext4 at 8 B to 256 B
/// and 1 KiB to 1 MiB`), then places with the same parts together (`ext4 and vfat at
/// 4 KiB`), whole places first.
fn place_words(here: &[&Place]) -> String {
    let mut by_place: Vec<(String, Vec<String>)> = Vec::new();
    for p in here {
        match by_place.iter_mut().find(|(t, _)| *t == p.place) {
            Some((_, w)) => w.push(p.within.clone()),
            None => by_place.push((p.place.clone(), vec![p.within.clone()])),
        }
    }
    let mut by_within: Vec<(String, Vec<String>)> = Vec::new();
    for (place, withins) in by_place {
        let within = if withins.iter().any(String::is_empty) {
            String::new()
        } else if withins.iter().all(|w| w.starts_with("at ")) {
            let parts: Vec<String> = withins.iter().map(|w| w[3..].to_owned()).collect();
            format!("at {}", and_list(&parts))
        } else {
            and_list(&withins)
        };
        match by_within.iter_mut().find(|(w, _)| *w == within) {
            Some((_, ps)) => ps.push(place),
            None => by_within.push((within, vec![place])),
        }
    }
    by_within.sort_by_key(|(w, _)| !w.is_empty());
    by_within
        .into_iter()
        .map(|(w, ps)| {
            let names = and_list(&ps);
            if w.is_empty() {
                names
            } else {
                format!("{names} {w}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The percent a ratio (entry ÷ baseline) is away from 1, as a positive number.
fn percent(r: f64) -> f64 {
    (r - 1.0).abs() * 100.0
}

/// `25 %`, `0.4 %`, `210 % (3.10×)`, `55–75 %`.
fn percent_words(ratios: &[f64]) -> String {
    let fmt = |p: f64| {
        if p < 1.0 {
            format!("{p:.1}")
        } else {
            format!("{p:.0}")
        }
    };
    let per: Vec<f64> = ratios.iter().map(|r| percent(*r)).collect();
    let lo = per.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = per.iter().copied().fold(0.0, f64::max);
    let text = if hi - lo <= 5.0 {
        let g = geometric_mean(ratios).unwrap_or(1.0);
        let mut t = format!("{} %", fmt(percent(g)));
        if g >= 2.0 || g <= 0.5 {
            t.push_str(&format!(" ({g:.2}×)"));
        }
        t
    } else if hi >= 100.0 {
        let lo_r = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let hi_r = ratios.iter().copied().fold(0.0, f64::max);
        format!("{lo_r:.2}–{hi_r:.2}×")
    } else {
        format!("{}–{} %", fmt(lo), fmt(hi))
    };
    text
}

/// The sentence of one section: `B writes 25 % faster on ext4 and raw, 10 % slower on
/// vfat; B is within noise on ext2 (±3 %). Geometric mean of 24 cells: B 1.25× A.`
fn sentence(w: &Words, places: &[Place], letter: &str, base: &str, g: Option<GeoMean>) -> String {
    let l = |s: &str| s.replace("{L}", letter);
    let on = |p: &str| {
        if w.on.is_empty() {
            p.to_owned()
        } else {
            format!("{} {p}", w.on)
        }
    };
    let all_untested = places.iter().all(|p| p.tested != Tested::Yes)
        && places.windows(2).all(|x| x[0].tested == x[1].tested);
    let tag = |t: Tested| {
        if all_untested || t == Tested::Yes {
            String::new()
        } else {
            format!(" ({})", t.words())
        }
    };
    let mut moved: Vec<String> = Vec::new();
    let mut still: Vec<String> = Vec::new();
    let mut classes: Vec<(Change, Tested)> = places.iter().map(|p| (p.change, p.tested)).collect();
    classes.sort();
    classes.dedup();
    for (change, tested) in classes {
        let here: Vec<&Place> = places
            .iter()
            .filter(|p| (p.change, p.tested) == (change, tested))
            .collect();
        let names = place_words(&here);
        let ratios: Vec<f64> = here.iter().flat_map(|p| p.ratios.clone()).collect();
        match change {
            Change::Better | Change::Worse => {
                let adj = if change == Change::Better {
                    w.adjectives.0
                } else {
                    w.adjectives.1
                };
                let verb = if moved.is_empty() {
                    format!("{} ", l(w.does))
                } else {
                    String::new()
                };
                moved.push(format!(
                    "{verb}{} {adj} {}{}",
                    percent_words(&ratios),
                    on(&names),
                    tag(tested)
                ));
            }
            Change::Noise => {
                let spread = here.iter().map(|p| p.spread_pct).fold(0.0, f64::max);
                still.push(format!("within noise {} (±{spread:.0} %)", on(&names)));
            }
            Change::Same => still.push(format!("unchanged {}{}", on(&names), tag(tested))),
        }
    }
    let mut text = moved.join("; ");
    if !still.is_empty() {
        if !text.is_empty() {
            text.push_str("; ");
            text.push_str(&still.join("; "));
        } else {
            text = format!("{} {}", l(w.is), still.join("; "));
        }
    }
    if all_untested {
        if let Some(t) = places.first() {
            text.push_str(&format!(" ({})", t.tested.words()));
        }
    }
    text.push('.');
    if let Some(g) = g {
        text.push_str(&format!(
            " Geometric mean of {} cells: {letter} {:.2}× {base}.",
            g.cells, g.ratio
        ));
    }
    text
}

/// `EMULATED: Section: words` (the mark first when either side is emulated).
fn line(emulated: bool, section: &str, words: &str) -> String {
    format!(
        "{}{section}: {words}",
        if emulated { "EMULATED: " } else { "" }
    )
}

/// The verdicts of every entry after the first against the first.
pub fn verdicts(c: &Comparison) -> Vec<EntryVerdicts> {
    let Some(base) = c.entries.first() else {
        return Vec::new();
    };
    let mut modes: Vec<&str> = c
        .rows
        .iter()
        .filter(|r| r.key.section == Section::Storage)
        .map(|r| r.key.mode.as_str())
        .collect();
    modes.sort();
    modes.dedup();
    let several_modes = modes.len() > 1;
    let mut out = Vec::new();
    for (i, e) in c.entries.iter().enumerate().skip(1) {
        let emulated = base.emulated || e.emulated;
        let reference = e.kind == "reference";
        let mut cells: Vec<Cell> = Vec::new();
        let mut titles: Vec<String> = Vec::new();
        let mut words: Vec<Words> = Vec::new();
        let mut one_side: Vec<String> = Vec::new();
        for row in &c.rows {
            let Some((w, top, sub)) = words_of(&row.key, several_modes) else {
                continue;
            };
            let title = w.title.clone();
            let (a, b) = (row.cells[0].as_ref(), row.cells[i].as_ref());
            let judged = match (row.against[i].as_ref(), a, b) {
                (Some(v), Some(sa), Some(sb)) => {
                    judge(v, (sa.n, sb.n), reference, w.better).map(|c| Cell {
                        section: title.clone(),
                        top,
                        sub,
                        spread_pct: if c.tested == Tested::Yes {
                            spread_pct(sa).max(spread_pct(sb))
                        } else {
                            0.0
                        },
                        ..c
                    })
                }
                _ => None,
            };
            match judged {
                Some(cell) => {
                    if !words.iter().any(|x| x.title == title) {
                        words.push(w);
                    }
                    cells.push(cell);
                }
                None if (a.is_some() || b.is_some()) && !titles.contains(&title) => {
                    titles.push(title)
                }
                None => {}
            }
        }
        for t in titles {
            if !words.iter().any(|w| w.title == t) && !one_side.contains(&t) {
                one_side.push(t);
            }
        }
        let mut verdicts: Vec<Verdict> = words
            .iter()
            .map(|w| {
                let mine: Vec<&Cell> = cells.iter().filter(|c| c.section == w.title).collect();
                let ps = places(&mine, w.better);
                let ratios: Vec<f64> = mine.iter().map(|c| c.ratio).collect();
                let geomean = (w.geomean && ratios.len() > 1)
                    .then(|| geometric_mean(&ratios))
                    .flatten()
                    .map(|ratio| GeoMean {
                        cells: ratios.len(),
                        ratio,
                    });
                let text = line(
                    emulated,
                    &w.title,
                    &sentence(w, &ps, &e.letter, &base.letter, geomean),
                );
                Verdict {
                    section: w.title.clone(),
                    better: w.better,
                    emulated,
                    places: ps,
                    geomean,
                    text,
                }
            })
            .collect();
        if let Some(v) = c
            .energy
            .as_ref()
            .and_then(|en| energy_verdict(en, &base.letter, &e.letter))
        {
            verdicts.push(v);
        }
        out.push(EntryVerdicts {
            letter: e.letter.clone(),
            base: base.letter.clone(),
            heading: format!(
                "Verdict: {} ({}) against {} ({}), the baseline",
                e.letter, e.name, base.letter, base.name
            ),
            verdicts,
            one_side_only: one_side,
        });
    }
    out
}

/// The energy verdict of `letter` against `base` when both have aligned traces: less is
/// better; `apart` (± ranges apart) is a tested difference, `within ±` noise, a row
/// without ± untested.
fn energy_verdict(en: &EnergyComparison, base: &str, letter: &str) -> Option<Verdict> {
    if en.letters.first().map(String::as_str) != Some(base) {
        return None;
    }
    let i = en.letters.iter().position(|l| l == letter)?;
    let emulated = !en.emulated.is_empty();
    let w = Words {
        title: "Energy".into(),
        better: Better::Lower,
        does: "{L} uses",
        is: "{L} is",
        adjectives: ("less (better)", "more (worse)"),
        on: "for",
        geomean: false,
    };
    // The whole run's joules and the idle power: the steps' rows are the detail below.
    let cells: Vec<Cell> = en
        .rows
        .iter()
        .filter_map(|r| {
            let place = match (r.step.as_str(), r.unit.as_str()) {
                ("idle (radios off)", "W") => "idle power",
                ("run (first sync pattern to last)", "J") => "the whole run",
                _ => return None,
            };
            let x = r.ratios[i].filter(|x| x.is_finite() && *x > 0.0)?;
            let ratio = 1.0 / x;
            let (change, tested) = match r.verdicts[i].as_deref() {
                Some("within ±") => (Change::Noise, Tested::Yes),
                Some(_) => (
                    if ratio < 1.0 {
                        Change::Better
                    } else {
                        Change::Worse
                    },
                    Tested::Yes,
                ),
                None if percent(ratio) < 0.5 => (Change::Same, Tested::OneRunEach),
                None if ratio < 1.0 => (Change::Better, Tested::OneRunEach),
                None => (Change::Worse, Tested::OneRunEach),
            };
            let spread = match (r.cells[0], r.cells[i]) {
                (Some(a), Some(b)) => [a, b]
                    .iter()
                    .filter_map(|c| Some(c.plus_minus? / c.value.abs() * 100.0))
                    .fold(0.0, f64::max),
                _ => 0.0,
            };
            Some(Cell {
                section: w.title.clone(),
                top: place.into(),
                sub: Sub::None,
                ratio,
                change,
                tested,
                spread_pct: spread,
            })
        })
        .collect();
    if cells.is_empty() {
        return None;
    }
    let ps = places(&cells.iter().collect::<Vec<_>>(), w.better);
    let text = line(emulated, &w.title, &sentence(&w, &ps, letter, base, None));
    Some(Verdict {
        section: w.title,
        better: w.better,
        emulated,
        places: ps,
        geomean: None,
        text,
    })
}

/// The verdict blocks a comparison opens with: per other entry a heading (the direction,
/// stated once) and one line per section, `Section: words`; then the sections one side
/// did not measure and the figures not compared ([`Comparison::not_compared`]).
pub fn blocks(c: &Comparison) -> Vec<Block> {
    let mut out = Vec::new();
    for ev in verdicts(c) {
        out.push(Block::Heading(ev.heading.clone()));
        let mut lines: Vec<String> = ev.verdicts.iter().map(|v| v.text.clone()).collect();
        if lines.is_empty() {
            lines.push(format!(
                "no figure both {} and {} measured: nothing to compare",
                ev.base, ev.letter
            ));
        }
        if !ev.one_side_only.is_empty() {
            lines.push(format!(
                "Not compared, measured by one side only: {}.",
                ev.one_side_only.join("; ")
            ));
        }
        lines.extend(c.not_compared.iter().cloned());
        out.push(Block::List(lines));
    }
    out
}

#[cfg(test)]
mod tests;
