//! `benchboot compare RUN RUN... [--reference NAME]`: runs and built-in references side
//! by side, cell by cell, with the ratio of the first run to each other entry and, where
//! both sides have repetitions, whether the difference is larger than the run-to-run
//! spread (min–max ranges apart or not, and a Mann–Whitney U test where the sample
//! sizes allow one). Output as tables, Markdown, tidy CSV or JSON; overlaid plots.

pub mod energy;
pub mod memory;
pub mod output;
pub mod rank_test;
pub mod verdict;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use anyhow::{bail, Result};
use benchboot_results::figures::{figures, Figure, Metric};
use benchboot_results::RunResults;
use serde::{Deserialize, Serialize};

use crate::figure::{Key, LinkClass, Section, Stat};
use crate::power::energy::Energy;
use crate::reference::{self, LinkMatch, RefData, RefLink, Reference};
use crate::report::{Format, OutputArgs};
use memory::EMULATED_CAVEAT;
use rank_test::{mann_whitney, MannWhitney};

/// Significance level of the rank test, two-sided.
pub const ALPHA: f64 = 0.05;

/// Whether two entries' repetitions are further apart than their spread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpreadVerdict {
    /// One side has fewer than two repetitions (or is a reference): no spread to compare.
    NoSpread,
    /// The min–max ranges overlap: the difference is within run-to-run spread.
    Overlap,
    /// The min–max ranges do not overlap.
    Apart,
}

/// The first run against one other entry in one cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Against {
    /// First run's median ÷ this entry's median.
    pub ratio: Option<f64>,
    /// When this entry has only a range: first run's median ÷ its max, ÷ its min.
    pub ratio_range: Option<(f64, f64)>,
    pub spread: SpreadVerdict,
    /// Two-sided Mann–Whitney U test, when both sides have at least two repetitions.
    pub test: Option<MannWhitney>,
    /// The verdict in words, as the tables print it.
    pub note: String,
    /// Why this reference is not quite the same thing (`different adapter: ...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caveat: Option<String>,
}

/// Compares `a` (the first run) with `b`.
pub fn against(a: &Stat, b: &Stat, b_is_reference: bool) -> Against {
    let ratio = match (a.median, b.median) {
        (Some(x), Some(y)) if y > 0.0 => Some(x / y),
        _ => None,
    };
    let ratio_range = match (a.median, b.median) {
        (Some(x), None) if b.min > 0.0 => Some((x / b.max, x / b.min)),
        _ => None,
    };
    if a.n < 2 || b.n < 2 {
        let note = if b_is_reference {
            "no spread: a reference is one published figure".into()
        } else {
            format!("no spread: n = {}+{}", a.n, b.n)
        };
        return Against {
            ratio,
            ratio_range,
            spread: SpreadVerdict::NoSpread,
            test: None,
            note,
            caveat: None,
        };
    }
    let spread = if a.max < b.min || b.max < a.min {
        SpreadVerdict::Apart
    } else {
        SpreadVerdict::Overlap
    };
    let test = mann_whitney(&a.values, &b.values);
    let words = match spread {
        SpreadVerdict::Apart => "ranges apart",
        _ => "within spread",
    };
    let note = match &test {
        Some(t) if t.min_p > ALPHA => format!(
            "{words}; n = {}+{}: too few for a rank test (p ≥ {:.2})",
            a.n, b.n, t.min_p
        ),
        Some(t) => format!(
            "{words}; U = {}, p = {:.3}{}",
            t.u_x,
            t.p,
            if t.p < ALPHA { " < 0.05" } else { "" }
        ),
        None => words.into(),
    };
    Against {
        ratio,
        ratio_range,
        spread,
        test,
        note,
        caveat: None,
    }
}

/// One entry of a comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryInfo {
    /// `A`, `B`, ... in argument order, runs first.
    pub letter: String,
    /// `run` or `reference`.
    pub kind: String,
    /// Run id or reference name.
    pub name: String,
    pub board: String,
    /// True for a QEMU run: never a hardware result.
    pub emulated: bool,
    /// The results file of a run.
    pub file: Option<String>,
    /// What it is, in a few words (a reference's title).
    pub description: String,
}

struct Entry {
    info: EntryInfo,
    figures: BTreeMap<Key, Stat>,
    reference: bool,
    /// A network reference: the links it is set beside.
    applies_to: Option<RefLink>,
    /// A memory reference row: its figures taken another way than tinymembench, by key.
    other_methods: BTreeMap<Key, String>,
}

/// One row of a comparison: a figure across every entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub key: Key,
    pub unit: String,
    /// One per entry, in entry order; `None` where the entry has no such figure.
    pub cells: Vec<Option<Stat>>,
    /// One per entry: the first run against that entry (`None` for the first run itself
    /// and where either side is missing).
    pub against: Vec<Option<Against>>,
}

/// A whole comparison (what `--format json` prints).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Always `benchboot-compare`.
    pub kind: String,
    /// Shape version (1).
    pub version: u32,
    /// Set when an entry is a QEMU run.
    pub notice: Option<String>,
    /// Set when the runs used different plans (block sizes, caps or targets may differ).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_warning: Option<String>,
    /// Reference figures set beside a link that is not quite what they measured, one
    /// line each (`usb-eth against B (...): different adapter: ...`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<String>,
    pub entries: Vec<EntryInfo>,
    pub rows: Vec<Row>,
    /// The whole-card passes of the runs that have one, as (series label, pass), for
    /// the overlaid profile ([`crate::whole_card::compare_figure`]); their figures are
    /// in `rows` (section `card`).
    #[serde(skip)]
    pub card_passes: Vec<(String, benchboot_probe::full::FullReport)>,
    /// The runs' energy, where some run has a power trace ([`energy`]; set by [`run`]
    /// from the traces stored with the runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<energy::EnergyComparison>,
    /// Figures left out of the rows, one line each with the reason (memory latency when
    /// a run is emulated: [`emulated_latency_line`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_compared: Vec<String>,
}

/// The line that replaces the memory latency rows of a comparison with an emulated run:
/// QEMU's TCG has no cache hierarchy to time, so its latencies are noise (mostly 0.0 ns
/// over L1), not compared. `emulated`: the letters of the emulated runs.
pub fn emulated_latency_line(emulated: &[String]) -> String {
    format!(
        "Memory latency: not compared, {} {} EMULATED (QEMU): TCG has no caches to time, its \
         latencies are noise (mostly 0.0 ns over L1), shown nowhere",
        verdict::and_list(emulated),
        if emulated.len() == 1 { "is" } else { "are" }
    )
}

/// Every comparable figure of a run ([`Key::of`]: each row gathers its repetitions;
/// storage (throughput and p99 latency) only in the cells of the run's plan; memory: [`memory::run_figures`]).
pub fn run_figures(r: &RunResults) -> BTreeMap<Key, Stat> {
    let s = &r.plan.storage;
    let in_plan = |f: &Figure| {
        !matches!(f.metric, Metric::Storage | Metric::StorageLatencyP99)
            || (s.targets.iter().any(|t| t.label == f.context.target)
                && s.modes.iter().any(|m| m.name() == f.context.mode)
                && s.block_sizes.contains(&f.context.block_size))
    };
    let mut acc: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
    for f in figures(r).into_iter().filter(in_plan) {
        if let Some(key) = Key::of(&f) {
            acc.entry(key).or_default().push(f.value);
        }
    }
    let mut out: BTreeMap<Key, Stat> = acc
        .into_iter()
        .filter_map(|(k, v)| Stat::of(&v).map(|s| (k, s)))
        .collect();
    out.extend(memory::run_figures(r));
    out
}

/// The warning of a comparison whose runs used different plans: each run's plan, by
/// letter (plans are compared by the SHA-256 of their text; documents before schema
/// 1.6 carry none and are not compared).
pub fn plan_warning(runs: &[(PathBuf, RunResults)]) -> Option<String> {
    let known: Vec<(usize, &benchboot_plan::PlanSource)> = runs
        .iter()
        .enumerate()
        .filter(|(_, (_, r))| !r.plan.source.sha256.is_empty())
        .map(|(i, (_, r))| (i, &r.plan.source))
        .collect();
    let first = known.first()?.1;
    if known.iter().all(|(_, s)| s.same_plan(first)) {
        return None;
    }
    let each: Vec<String> = known
        .iter()
        .map(|(i, s)| format!("{} ran {}", (b'A' + (*i % 26) as u8) as char, s.describe()))
        .collect();
    Some(format!(
        "the runs used different plans ({}): block sizes, caps and targets may differ, so \
         only the cells both measured compare",
        each.join("; ")
    ))
}

/// The banner of a comparison with emulated entries.
pub fn emulated_notice(entries: &[EntryInfo]) -> Option<String> {
    let emu: Vec<String> = entries
        .iter()
        .filter(|e| e.emulated)
        .map(|e| format!("{} ({})", e.letter, e.name))
        .collect();
    (!emu.is_empty()).then(|| {
        format!(
            "EMULATED (QEMU): {} {} figures of an emulated board; they say nothing about the \
             hardware, and ratios against {} compare QEMU, not boards",
            emu.join(", "),
            if emu.len() == 1 { "holds" } else { "hold" },
            if emu.len() == 1 { "it" } else { "them" }
        )
    })
}

fn mode_rank(m: &str) -> u8 {
    match m {
        "sync" => 0,
        "direct" => 1,
        "base" => 3,
        "huge" => 4,
        _ => 2,
    }
}

fn dir_rank(d: &str) -> u8 {
    match d {
        "write" => 0,
        "read" => 1,
        "board-to-host" => 2,
        "host-to-board" => 3,
        "cached" => 4,
        "buffered" => 5,
        "single" => 6,
        "dual" => 7,
        _ => 9,
    }
}

/// A run's id as messages show it: escaped.
fn r_id(r: &RunResults) -> std::borrow::Cow<'_, str> {
    benchboot_results::text::escape(&r.run_id)
}

/// Builds the comparison of `runs` (path and results; the first is the baseline) and
/// `references`.
///
/// # Errors
/// When there are fewer than two entries, no run, or one run given twice (by the same
/// file or two files holding one run id).
pub fn compare(runs: &[(PathBuf, RunResults)], references: &[&Reference]) -> Result<Comparison> {
    check_entries(runs, references)?;
    let mut entries = run_entries(runs);
    reference_entries(&mut entries, runs, references)?;
    let look = Lookup::of(runs);
    let keys = look.row_keys(&entries);
    let mut caveats: Vec<String> = Vec::new();
    let rows: Vec<Row> = keys
        .into_iter()
        .map(|k| look.row(&entries, k, &mut caveats))
        .collect();
    let infos: Vec<EntryInfo> = entries.into_iter().map(|e| e.info).collect();
    let (rows, not_compared) = without_emulated_latency(runs, &infos, rows);
    let card_passes = infos
        .iter()
        .zip(runs)
        .filter_map(|(e, (_, r))| {
            let f = r.card_check.as_ref()?.report.full.clone()?;
            Some((
                crate::whole_card::series_label(&e.letter, &e.name, e.emulated),
                f,
            ))
        })
        .collect();
    Ok(Comparison {
        kind: "benchboot-compare".into(),
        version: 1,
        notice: emulated_notice(&infos),
        plan_warning: plan_warning(runs),
        caveats,
        entries: infos,
        rows,
        card_passes,
        energy: None,
        not_compared,
    })
}

/// Refuses a comparison of fewer than two entries, with no run, or of a run with
/// itself.
fn check_entries(runs: &[(PathBuf, RunResults)], references: &[&Reference]) -> Result<()> {
    if runs.is_empty() {
        bail!("compare needs at least one run (a results JSON file) as its first argument");
    }
    if runs.len() + references.len() < 2 {
        bail!(
            "compare needs two things to compare: two runs, or a run and --reference NAME \
             (benchboot compare --list-references lists the built-in ones)"
        );
    }
    // A run against itself shows only ratios of 1.00: say so instead of a report. The
    // same run is the store's rule (run id, board, start, boot card): two runs that
    // share only a run id are compared.
    for (j, (pj, rj)) in runs.iter().enumerate() {
        let same = |(_, ri): &&(_, RunResults)| crate::store::same_run::is_same_run(ri, rj);
        if let Some((pi, _)) = runs[..j].iter().find(same) {
            let how = if pi == pj {
                format!("{} is given twice", pi.display())
            } else {
                format!("{} and {} hold it", pi.display(), pj.display())
            };
            bail!(
                "run {} is given twice ({how}): a run compared with itself differs in nothing; \
                 give two different runs (benchboot runs lists them), or a run and --reference NAME",
                r_id(rj)
            );
        }
    }
    Ok(())
}

/// `A`, `B`, ... `Z`, then `A1`, `B1`...
fn letter(i: usize) -> String {
    let c = (b'A' + (i % 26) as u8) as char;
    if i < 26 {
        c.to_string()
    } else {
        format!("{c}{}", i / 26)
    }
}

/// The runs' entries, in argument order, with their figures ([`run_figures`]).
fn run_entries(runs: &[(PathBuf, RunResults)]) -> Vec<Entry> {
    runs.iter()
        .enumerate()
        .map(|(i, (path, r))| Entry {
            info: EntryInfo {
                letter: letter(i),
                kind: "run".into(),
                name: r.run_id.clone(),
                board: r.board.clone(),
                emulated: r.emulated,
                file: Some(path.display().to_string()),
                description: format!(
                    "{} run, kernel {} ({})",
                    if r.emulated {
                        "EMULATED (QEMU)"
                    } else {
                        "hardware"
                    },
                    r.system.kernel_release,
                    r.system.machine
                ) + &crate::context::card_lines(r)
                    .into_iter()
                    .chain(crate::context::card_check_line(r).map(|l| format!("check {l}")))
                    .map(|l| format!("; card {l}"))
                    .collect::<String>(),
            },
            figures: run_figures(r),
            reference: false,
            applies_to: None,
            other_methods: BTreeMap::new(),
        })
        .collect()
}

/// The references' entries after `entries`: a memory reference one per published run of
/// the runs' boards.
fn reference_entries(
    entries: &mut Vec<Entry>,
    runs: &[(PathBuf, RunResults)],
    references: &[&Reference],
) -> Result<()> {
    let run_docs: Vec<&RunResults> = runs.iter().map(|(_, r)| r).collect();
    for rf in references {
        if let RefData::Memory { csv } = rf.data {
            for row in memory::row_entries(rf.name, csv, &run_docs)? {
                entries.push(Entry {
                    info: EntryInfo {
                        letter: letter(entries.len()),
                        kind: "reference".into(),
                        name: row.name,
                        board: row.row.board.clone(),
                        emulated: false,
                        file: None,
                        description: row.row.description(),
                    },
                    figures: row.figures,
                    reference: true,
                    applies_to: None,
                    other_methods: row.other_methods,
                });
            }
            continue;
        }
        entries.push(Entry {
            info: EntryInfo {
                letter: letter(entries.len()),
                kind: "reference".into(),
                name: rf.name.into(),
                board: rf.board.into(),
                emulated: false,
                file: None,
                description: rf.title.into(),
            },
            figures: reference::figures(rf)?.into_iter().collect(),
            reference: true,
            applies_to: rf.applies_to(),
            other_methods: BTreeMap::new(),
        });
    }
    Ok(())
}

/// What the runs say that lines a reference's figures up with theirs and orders the
/// rows.
struct Lookup {
    /// The core set each run's first CPU ran every kernel on (`CPU 0`): what a memory
    /// reference's bandwidth figures (no target) are set beside.
    first_cpus: BTreeSet<String>,
    first_emulated: bool,
    /// Target label → filesystem, from the runs: a reference's columns are filesystems.
    fs_of: BTreeMap<String, String>,
    target_rank: BTreeMap<String, usize>,
    /// Link name → what kind of link, from the first run that has it: a network
    /// reference applies to some kinds only.
    class_of: BTreeMap<String, LinkClass>,
}

impl Lookup {
    fn of(runs: &[(PathBuf, RunResults)]) -> Lookup {
        let mut l = Lookup {
            first_cpus: runs
                .iter()
                .filter_map(|(_, r)| memory::first_cpu_label(r))
                .collect(),
            first_emulated: runs[0].1.emulated,
            fs_of: BTreeMap::new(),
            target_rank: BTreeMap::new(),
            class_of: BTreeMap::new(),
        };
        for (_, r) in runs {
            for link in crate::render::network_links(&r.network) {
                let class = LinkClass::of(&r.network, &link);
                l.class_of.entry(link).or_insert(class);
            }
            for t in &r.plan.storage.targets {
                l.fs_of
                    .entry(t.label.clone())
                    .or_insert(t.filesystem.name().into());
                let n = l.target_rank.len();
                l.target_rank.entry(t.label.clone()).or_insert(n);
            }
        }
        l
    }

    /// Entry `e`'s figure for run row `k` (a reference's by its own key), with a caveat
    /// when it is not quite the same kind of link.
    fn find(&self, e: &Entry, k: &Key) -> Option<(Key, Stat, Option<String>)> {
        // A memory reference: the first CPU's test beside its figure (no target), with
        // the caveats of an emulated first run and of another method than tinymembench.
        let memory = matches!(k.section, Section::MemoryBandwidth | Section::MemoryLatency);
        if e.reference && memory {
            let alt = if e.figures.contains_key(k) || !self.first_cpus.contains(&k.target) {
                k.clone()
            } else {
                Key {
                    target: String::new(),
                    ..k.clone()
                }
            };
            let s = e.figures.get(&alt)?;
            let caveat = [
                self.first_emulated.then(|| EMULATED_CAVEAT.to_owned()),
                e.other_methods.get(&alt).cloned(),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("; ");
            return Some((alt, s.clone(), (!caveat.is_empty()).then_some(caveat)));
        }
        if let Some(s) = e.figures.get(k) {
            return Some((k.clone(), s.clone(), None));
        }
        if !e.reference {
            return None;
        }
        if k.section == Section::Storage {
            let fs = self.fs_of.get(&k.target)?;
            let alt = Key {
                target: fs.clone(),
                ..k.clone()
            };
            return e.figures.get(&alt).map(|s| (alt, s.clone(), None));
        }
        let caveat = match e.applies_to {
            None => None,
            Some(applies) => {
                let class = self.class_of.get(&k.target).unwrap_or(&LinkClass::Other);
                match applies.matches(class) {
                    LinkMatch::No => return None,
                    LinkMatch::Yes => None,
                    LinkMatch::Caveat(c) => Some(c),
                }
            }
        };
        let alt = k.any_link();
        e.figures.get(&alt).map(|s| (alt, s.clone(), caveat))
    }

    /// Every run's figure's row, then the reference figures no run row picks up, in
    /// table order.
    fn row_keys(&self, entries: &[Entry]) -> Vec<Key> {
        let mut keys: BTreeSet<Key> = entries
            .iter()
            .filter(|e| !e.reference)
            .flat_map(|e| e.figures.keys().cloned())
            .collect();
        let mut used: BTreeSet<(usize, Key)> = BTreeSet::new();
        for k in &keys {
            for (i, e) in entries.iter().enumerate().filter(|(_, e)| e.reference) {
                if let Some((rk, _, _)) = self.find(e, k) {
                    used.insert((i, rk));
                }
            }
        }
        for (i, e) in entries.iter().enumerate().filter(|(_, e)| e.reference) {
            for k in e.figures.keys() {
                if !used.contains(&(i, k.clone())) {
                    keys.insert(k.clone());
                }
            }
        }
        let mut keys: Vec<Key> = keys.into_iter().collect();
        keys.sort_by_key(|k| {
            (
                k.section,
                k.metric.clone(),
                mode_rank(&k.mode),
                dir_rank(&k.direction),
                self.target_rank
                    .get(&k.target)
                    .copied()
                    .unwrap_or(usize::MAX),
                k.target.clone(),
                k.block_size_bytes,
                k.param,
            )
        });
        keys
    }

    /// Row `k`: each entry's figure and the first run against it; a link caveat also
    /// goes to `caveats`, once.
    fn row(&self, entries: &[Entry], k: Key, caveats: &mut Vec<String>) -> Row {
        let found: Vec<Option<(Stat, Option<String>)>> = entries
            .iter()
            .map(|e| self.find(e, &k).map(|(_, s, c)| (s, c)))
            .collect();
        let cells: Vec<Option<Stat>> = found
            .iter()
            .map(|f| f.as_ref().map(|(s, _)| s.clone()))
            .collect();
        let against = cells
            .iter()
            .enumerate()
            .map(|(i, c)| match (i, &cells[0], c) {
                (0, _, _) => None,
                (_, Some(a), Some(b)) => {
                    let mut v = against(a, b, entries[i].reference);
                    v.caveat = found[i].as_ref().and_then(|(_, c)| c.clone());
                    // Links only: a memory caveat stays in its cell and CSV row.
                    let link =
                        !matches!(k.section, Section::MemoryBandwidth | Section::MemoryLatency);
                    if let Some(c) = v.caveat.as_ref().filter(|_| link) {
                        let line = format!(
                            "{} against {} ({}): {c}",
                            k.target, entries[i].info.letter, entries[i].info.name
                        );
                        if !caveats.contains(&line) {
                            caveats.push(line);
                        }
                    }
                    Some(v)
                }
                _ => None,
            })
            .collect();
        Row {
            unit: k.unit(),
            key: k,
            cells,
            against,
        }
    }
}

/// `rows` without memory latency when an entry is emulated (TCG noise), and the line
/// that says so.
fn without_emulated_latency(
    runs: &[(PathBuf, RunResults)],
    infos: &[EntryInfo],
    mut rows: Vec<Row>,
) -> (Vec<Row>, Vec<String>) {
    let emulated: Vec<String> = infos
        .iter()
        .filter(|e| e.emulated)
        .map(|e| e.letter.clone())
        .collect();
    let mut not_compared = Vec::new();
    // (An emulated run's own latencies never become rows, `memory::run_figures`; the
    // line is said whenever a run measured latency, so the reader knows why none shows.)
    let latency_measured = runs
        .iter()
        .any(|(_, r)| r.memory.as_ref().is_some_and(|m| !m.latency.is_empty()));
    if !emulated.is_empty()
        && (latency_measured || rows.iter().any(|r| r.key.section == Section::MemoryLatency))
    {
        rows.retain(|r| r.key.section != Section::MemoryLatency);
        not_compared.push(emulated_latency_line(&emulated));
    }
    (rows, not_compared)
}

/// `benchboot compare` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct CompareArgs {
    /// Runs: results JSON files or stored run ids (or their start) from `benchboot runs`.
    /// The first is the baseline of every ratio.
    pub runs: Vec<String>,
    /// Also compare with a built-in reference (repeatable); see --list-references.
    #[arg(long = "reference", value_name = "NAME")]
    pub references: Vec<String>,
    /// List the built-in references with their provenance and exit.
    #[arg(long)]
    pub list_references: bool,
    /// The results store folder. Default: $BENCHBOOT_STORE, else
    /// $XDG_DATA_HOME/benchboot, else ~/.local/share/benchboot.
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The energy comparison of `runs` (their entries first in `entries`): each run's trace
/// as `benchboot report` finds it ([`Energy::find`]); a trace that cannot be read is
/// named with the reason, the comparison goes on.
pub(crate) fn energy_of(
    runs: &[(PathBuf, RunResults)],
    entries: &[EntryInfo],
) -> Option<energy::EnergyComparison> {
    let found: Vec<Result<Option<Energy>, String>> = runs
        .iter()
        .map(|(path, r)| Energy::find(path, None, r).map_err(|e| format!("{e:#}")))
        .collect();
    let pairs: Vec<_> = entries
        .iter()
        .zip(&found)
        .map(|(e, f)| (e, f.as_ref().map(Option::as_ref).map_err(String::as_str)))
        .collect();
    energy::comparison(&pairs)
}

/// Runs `benchboot compare`: prints the comparison; plot paths go to stderr.
pub fn run(args: &CompareArgs) -> Result<()> {
    if args.list_references {
        args.output
            .emit(&output::references_text(args.output.format())?)?;
        return Ok(());
    }
    let runs = args
        .runs
        .iter()
        .map(|r| crate::report::load_run_in(r, args.store.as_deref()))
        .collect::<Result<Vec<_>>>()?;
    let refs = args
        .references
        .iter()
        .map(|n| reference::find(n))
        .collect::<Result<Vec<_>>>()?;
    let mut c = compare(&runs, &refs)?;
    c.energy = energy_of(&runs, &c.entries);
    let text = match (args.output.format(), &args.output.out) {
        // On a terminal the tables fit its width (long cells wrapped).
        (Format::Table, None) => output::document(&c).text_width(crate::doc::terminal_width()),
        (format, _) => output::render(&c, format)?,
    };
    args.output.emit(&text)?;
    if let Some(dir) = &args.output.plots {
        for f in output::compare_plots(&c, dir)? {
            crate::errln!("plot {}", f.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
