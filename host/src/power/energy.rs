//! The energy section of a run's report: what a power trace says about each step
//! ([`benchboot_energy::energy_report`]) as [`Block`]s the terminal, Markdown and HTML
//! share ([`blocks`]); `benchboot power show` prints it alone ([`super::show`]) and
//! `benchboot compare` sets the runs' figures side by side (`crate::compare::energy`).
//!
//! It opens with what matters: the idle power and the run's joules, the meter, EMULATED
//! when the trace or the run is; then where the meter sat, how the trace was tied to
//! the board's clock, every step (a step without a figure says why), the storage
//! cells' timed passes per GiB written and read, the idle phases above radios-off and
//! the meter's own counter beside the trace's integral. A trace that cannot be tied to
//! the steps gives the reason instead of figures; the rest of the report is unchanged.
//!
//! Text is kept as it came (a meter's name, a step id): the renderings escape it.

use std::path::Path;

use anyhow::{Context as _, Result};
use benchboot_energy::{
    energy_report, onboard_trace, AlignMethod, EnergyReport, StepEnergy, StepFigure, Trace,
    WindowKind,
};
use benchboot_results::RunResults;

use super::{position, trace_file};
use crate::doc::{Block, Grid};

/// The section's alert when the power is the emulated meter's model.
pub const EMULATED_METER: &str = "EMULATED ENERGY: the power is the emulated meter's model of \
     QEMU's load, not a measurement: these joules say nothing about any board";

/// The section's alert when a real meter watched a QEMU run.
pub const EMULATED_RUN: &str = "EMULATED (QEMU): the run is QEMU's, so the meter measured the \
     machine running it, not a board";

/// A run's energy as the report shows it.
#[derive(Debug, Clone)]
pub struct Energy {
    pub trace: Trace,
    /// Where the trace came from, in words (`trace <path>`, `the board's own sensor`).
    pub source: String,
    /// True when the trace is the emulated meter's or the run is a QEMU run.
    pub emulated: bool,
    /// The figures, or why the trace could not be tied to the run's steps.
    pub report: Result<EnergyReport, String>,
}

impl Energy {
    /// Aligns and integrates `trace` against `r` ([`energy_report`]).
    pub fn of(trace: Trace, source: String, r: &RunResults) -> Energy {
        Energy {
            report: energy_report(&trace, r).map_err(|e| e.to_string()),
            emulated: trace.emulated || r.emulated,
            trace,
            source,
        }
    }

    /// The energy of the run `r` read from `results_path`: the trace file `power` when
    /// given, else the store's trace of that run ([`trace_file::beside`]), else the
    /// samples of a sensor PID 1 read itself; `None` without any of them.
    ///
    /// # Errors
    /// The trace file cannot be read or is not a trace ([`trace_file::read`]).
    pub fn find(
        results_path: &Path,
        power: Option<&Path>,
        r: &RunResults,
    ) -> Result<Option<Energy>> {
        let file = match power {
            Some(p) => Some(p.to_path_buf()),
            None => trace_file::beside(results_path),
        };
        if let Some(p) = file {
            let t = trace_file::read(&p)
                .with_context(|| format!("the power trace of run {}", r.run_id))?;
            return Ok(Some(Energy::of(t, format!("trace {}", p.display()), r)));
        }
        Ok(r.energy.onboard.as_ref().map(|o| {
            Energy::of(
                onboard_trace(o),
                "the board's own sensor, read by PID 1".into(),
                r,
            )
        }))
    }
}

/// `x` with the decimals its ± `u` warrants (two significant digits of `u`, 0 to 3).
pub fn with_pm(x: f64, u: f64) -> String {
    let d = if u > 0.0 && u.is_finite() {
        (1.0 - u.log10().floor()).clamp(0.0, 3.0) as usize
    } else {
        3
    };
    format!("{x:.d$} ± {u:.d$}")
}

/// A figure with three or four significant digits: `2976`, `45.0`, `4.38`, `0.125`.
pub fn sig(x: f64) -> String {
    let a = x.abs();
    let d = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    format!("{x:.d$}")
}

/// Seconds: `0.050`, `8.00`, `30.0`.
pub fn secs(x: f64) -> String {
    let d = if x < 1.0 {
        3
    } else if x < 10.0 {
        2
    } else {
        1
    };
    format!("{x:.d$}")
}

/// Watts, to the milliwatt.
fn watts(x: f64) -> String {
    format!("{x:.3}")
}

/// The section's first line: idle W ±, the run's J ±, the meter; `EMULATED` first when
/// the trace or the run is.
pub fn headline(e: &Energy) -> String {
    let mut parts = Vec::new();
    match &e.report {
        Ok(rep) => {
            parts.push(match &rep.idle_w {
                Some(f) => format!("idle {} W (radios off)", with_pm(f.value, f.plus_minus)),
                None => "idle: no figure".to_owned(),
            });
            parts.push(match &rep.run {
                Some(StepEnergy {
                    figure: Ok(f),
                    seconds,
                    ..
                }) => format!(
                    "run {} J over {} s (first sync pattern to last)",
                    with_pm(f.energy_j, f.uncertainty_j),
                    secs(*seconds)
                ),
                Some(StepEnergy {
                    figure: Err(why), ..
                }) => format!("run: no figure ({why})"),
                None => "run: no figure (fewer than two sync patterns)".to_owned(),
            });
        }
        Err(_) => parts.push("no energy figures: the trace is not aligned (below)".to_owned()),
    }
    parts.push(format!("meter {}", e.trace.meter));
    let line = parts.join("; ");
    if e.emulated {
        format!("EMULATED: {line}")
    } else {
        line
    }
}

/// The trace in a few words: where from, how many samples over how long, how often.
fn trace_line(e: &Energy) -> String {
    let s = &e.trace.samples;
    let span = match (s.first(), s.last()) {
        (Some(a), Some(b)) => b.t_s - a.t_s,
        _ => 0.0,
    };
    format!(
        "trace: {}; {} samples over {} s, one every {} s",
        e.source,
        s.len(),
        secs(span),
        sig(e.trace.period_s)
    )
}

/// How the trace was tied to the board's clock: method, offset, skew, error; for sync
/// patterns each one's correlation.
pub fn alignment_line(rep: &EnergyReport) -> String {
    let a = &rep.alignment;
    let numbers = format!(
        "offset {:.3} s, skew {:.1} ppm, error ± {:.1} ms",
        a.offset_s,
        a.skew_ppm(),
        a.error_s * 1e3
    );
    match &a.method {
        AlignMethod::SameClock => format!(
            "alignment: none needed, the trace is on the board's clock (error ± {:.1} ms)",
            a.error_s * 1e3
        ),
        AlignMethod::Console { lines } => {
            format!("alignment: by {lines} console lines' arrival times: {numbers}")
        }
        AlignMethod::Sync { found } => {
            let each: Vec<String> = found
                .iter()
                .map(|f| {
                    format!(
                        "`{}` correlation {:.3} (contrast {:.2} W)",
                        f.at, f.correlation, f.contrast_w
                    )
                })
                .collect();
            format!(
                "alignment: by {} sync pattern{}: {numbers}; {}",
                found.len(),
                if found.len() == 1 { "" } else { "s" },
                each.join(", ")
            )
        }
    }
}

/// The optional per-amount columns of the step table: header and figure.
type PerColumn = (&'static str, fn(&StepFigure) -> Option<f64>);

const PER: [PerColumn; 4] = [
    ("J/GiB written", |f| f.j_per_gib_written),
    ("J/GiB read", |f| f.j_per_gib_read),
    ("J/GiB moved", |f| f.j_per_gib),
    ("nJ/bit", |f| f.nj_per_bit),
];

/// One row per step (storage cells, device reads, random I/O, verification, memory,
/// network tests; not the timed passes): s, samples, mean W, W above idle, J ±, J above
/// idle ±, and the J/GiB and nJ/bit columns some step has. A step without a figure
/// gives the reason in its energy cell.
pub fn step_grid(rep: &EnergyReport, reasons: &mut Reasons) -> Grid {
    let steps: Vec<&StepEnergy> = rep
        .steps
        .iter()
        .filter(|s| s.kind != WindowKind::StoragePass)
        .collect();
    let per: Vec<&PerColumn> = PER
        .iter()
        .filter(|(_, get)| {
            steps
                .iter()
                .any(|s| s.figure.as_ref().is_ok_and(|f| get(f).is_some()))
        })
        .collect();
    let mut header: Vec<String> = [
        "step",
        "s",
        "samples",
        "mean, W",
        "above idle, W",
        "energy, J",
        "above idle, J",
    ]
    .map(String::from)
    .into();
    header.extend(per.iter().map(|(h, _)| h.to_string()));
    let mut g = Grid::new(header);
    for s in steps {
        let mut row = vec![s.step.clone(), secs(s.seconds), s.samples.to_string()];
        match &s.figure {
            Ok(f) => {
                row.push(watts(f.mean_w));
                row.push(f.above_idle_w.map_or("—".into(), watts));
                row.push(with_pm(f.energy_j, f.uncertainty_j));
                row.push(match (f.above_idle_j, f.above_idle_uncertainty_j) {
                    (Some(j), Some(u)) => with_pm(j, u),
                    _ => "—".into(),
                });
                row.extend(per.iter().map(|(_, get)| get(f).map_or("—".into(), sig)));
            }
            Err(why) => {
                row.extend(["—".to_owned(), "—".to_owned()]);
                row.push(reasons.cell(why));
                row.push("—".into());
                row.extend(per.iter().map(|_| "—".to_owned()));
            }
        }
        g.push(row);
    }
    g
}

/// The timed passes of each storage cell folded into one row: how many passes each way
/// have a figure and their J/GiB, median (min–max); a cell none of whose passes has a
/// figure gives the first pass's reason. `None` when the run recorded no pass times.
pub fn pass_grid(rep: &EnergyReport, reasons: &mut Reasons) -> Option<Grid> {
    // (cell, [write passes, read passes])
    let mut cells: Vec<(String, [Vec<&StepEnergy>; 2])> = Vec::new();
    for s in &rep.steps {
        match s.kind {
            WindowKind::Storage => cells.push((s.step.clone(), [Vec::new(), Vec::new()])),
            WindowKind::StoragePass => {
                let rest = s.step.rsplit_once('.').map_or("", |(a, _)| a);
                let read = rest.ends_with(".read");
                if let Some((_, ways)) = cells.last_mut() {
                    ways[usize::from(read)].push(s);
                }
            }
            _ => {}
        }
    }
    cells.retain(|(_, w)| !w[0].is_empty() || !w[1].is_empty());
    if cells.is_empty() {
        return None;
    }
    let mut g = Grid::new(
        [
            "storage cell",
            "write passes",
            "J/GiB written",
            "read passes",
            "J/GiB read",
        ]
        .map(String::from)
        .into(),
    );
    for (cell, ways) in cells {
        let mut row = vec![cell];
        for (i, passes) in ways.iter().enumerate() {
            let get = |f: &StepFigure| {
                if i == 0 {
                    f.j_per_gib_written
                } else {
                    f.j_per_gib_read
                }
            };
            let values: Vec<f64> = passes
                .iter()
                .filter_map(|p| p.figure.as_ref().ok().and_then(get))
                .collect();
            row.push(format!("{} of {}", values.len(), passes.len()));
            row.push(match benchboot_results::Summary::of(&values) {
                Some(s) if s.count > 1 => {
                    format!("{} ({}–{})", sig(s.median), sig(s.min), sig(s.max))
                }
                Some(s) => sig(s.median),
                None => passes
                    .iter()
                    .find_map(|p| p.figure.as_ref().err())
                    .map_or("—".into(), |why| reasons.cell(why)),
            });
        }
        g.push(row);
    }
    Some(g)
}

/// Why steps have no figure, each reason once: a table cell says `no figure [n]` and the
/// reasons follow the tables as `[n] reason` (a reason in the cell made the energy
/// column as wide as the sentence). A reason's leading length (`0.082 s: `) is left out,
/// since the row's `s` column says it.
#[derive(Debug, Default)]
pub struct Reasons(Vec<String>);

impl Reasons {
    /// The cell for a step with no figure because of `why`.
    pub fn cell(&mut self, why: &str) -> String {
        let key = strip_length(why).to_owned();
        let n = match self.0.iter().position(|r| *r == key) {
            Some(i) => i + 1,
            None => {
                self.0.push(key);
                self.0.len()
            }
        };
        format!("no figure [{n}]")
    }

    /// `[n] reason`, in the order the cells first named them.
    pub fn lines(&self) -> Vec<String> {
        self.0
            .iter()
            .enumerate()
            .map(|(i, r)| format!("[{}] no figure: {r}", i + 1))
            .collect()
    }
}

/// `why` without a leading `<number> s: `.
fn strip_length(why: &str) -> &str {
    let Some((head, rest)) = why.split_once(" s: ") else {
        return why;
    };
    if !head.is_empty() && head.chars().all(|c| c.is_ascii_digit() || c == '.') {
        rest
    } else {
        why
    }
}

/// One row per idle phase: s, samples, mean W, W above radios-off, J ±.
pub fn idle_grid(rep: &EnergyReport, reasons: &mut Reasons) -> Grid {
    let mut g = Grid::new(
        [
            "idle phase",
            "s",
            "samples",
            "mean, W",
            "above radios-off, W",
            "energy, J",
        ]
        .map(String::from)
        .into(),
    );
    for p in &rep.idle_phases {
        let phase = p.step.strip_prefix("idle ").unwrap_or(&p.step).to_owned();
        let mut row = vec![phase, secs(p.seconds), p.samples.to_string()];
        match &p.figure {
            Ok(f) => {
                row.push(watts(f.mean_w));
                row.push(f.above_idle_w.map_or("—".into(), watts));
                row.push(with_pm(f.energy_j, f.uncertainty_j));
            }
            Err(why) => {
                row.extend(["—".to_owned(), "—".to_owned()]);
                row.push(reasons.cell(why));
            }
        }
        g.push(row);
    }
    g
}

/// The meter's own counter beside the trace's integral, when the meter has one.
pub fn counter_line(rep: &EnergyReport) -> Option<String> {
    let c = rep.counter_j?;
    let diff = if c > 0.0 {
        format!(" ({:+.1} %)", (rep.trace_j - c) / c * 100.0)
    } else {
        String::new()
    };
    Some(format!(
        "the meter's own counter: {} J from its first reading to its last; the trace's \
         integral over the same span: {} J{diff}",
        sig(c),
        sig(rep.trace_j)
    ))
}

/// Power-on, the boot's first stage, as the trace shows it (or why it cannot).
pub fn power_on_line(rep: &EnergyReport) -> String {
    match &rep.power_on {
        Ok((at, pm)) if *at <= 0.0 => format!(
            "power-on: {:.2} s ± {:.2} before the kernel's clock started (the trace's first \
             rise)",
            -at, pm
        ),
        Ok((at, pm)) => format!(
            "power-on: the trace's first rise is {at:.2} s ± {pm:.2} after the kernel's clock \
             started: not the board's power-on (a reset, or a trace of another boot)"
        ),
        Err(why) => format!("power-on: not shown: {why}"),
    }
}

/// The energy crate's notes the lines above do not already say.
fn notes(rep: &EnergyReport) -> Vec<String> {
    rep.notes
        .iter()
        .filter(|n| {
            !(n.starts_with("aligned by ")
                || n.as_str() == "the trace is on the board's clock"
                || n.starts_with("the power is a model")
                || n.starts_with("the meter's counter covers"))
        })
        .cloned()
        .collect()
}

/// The whole energy section of `e` (module docs).
pub fn blocks(e: &Energy) -> Vec<Block> {
    let mut out = vec![Block::Heading(if e.emulated {
        "Energy (EMULATED)".into()
    } else {
        "Energy".into()
    })];
    if e.emulated {
        out.push(Block::Alert(
            if e.trace.emulated {
                EMULATED_METER
            } else {
                EMULATED_RUN
            }
            .into(),
        ));
    }
    let mut lines = vec![
        headline(e),
        position::line(e.trace.position.as_deref()),
        trace_line(e),
    ];
    let rep = match &e.report {
        Ok(rep) => rep,
        Err(why) => {
            out.push(Block::Text(lines.join("\n")));
            out.push(Block::Alert(format!(
                "NO ENERGY FIGURES: the trace could not be tied to the run's steps: {why}"
            )));
            return out;
        }
    };
    lines.push(alignment_line(rep));
    out.push(Block::Text(lines.join("\n")));
    out.push(Block::Heading(
        "Energy per step (J ± its uncertainty; above idle: over the radios-off power)".into(),
    ));
    let mut reasons = Reasons::default();
    out.push(Block::Grid(step_grid(rep, &mut reasons)));
    if let Some(g) = pass_grid(rep, &mut reasons) {
        out.push(Block::Heading(
            "Energy per GiB of each storage cell's timed passes, median (min–max)".into(),
        ));
        out.push(Block::Grid(g));
    }
    if !rep.idle_phases.is_empty() {
        out.push(Block::Heading(
            "Idle phases (PID 1 asleep; above radios-off: what the link up costs)".into(),
        ));
        out.push(Block::Grid(idle_grid(rep, &mut reasons)));
    }
    let mut tail: Vec<String> = reasons.lines();
    tail.extend(counter_line(rep));
    tail.push(power_on_line(rep));
    tail.extend(notes(rep));
    if !tail.is_empty() {
        out.push(Block::List(tail));
    }
    out
}

#[cfg(test)]
pub(crate) mod fixture;
#[cfg(test)]
mod tests;
