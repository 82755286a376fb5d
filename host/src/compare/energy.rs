//! Energy in a comparison: for the runs that have a power trace aligned with their steps
//! ([`crate::power::energy::Energy`]), the idle power, the run's joules and each step's
//! J, J/GiB and nJ/bit side by side, with the first run's figure ÷ each other's. Only
//! where both runs have a figure is there a ratio; a run without a trace, or whose trace
//! does not align, is named with the reason and left out of the table.

use serde::{Deserialize, Serialize};

use benchboot_energy::{StepEnergy, StepFigure, WindowKind};

use super::EntryInfo;
use crate::doc::{Block, Grid};
use crate::power::energy::{sig, with_pm, Energy};

/// One run's figure in one row: the value and its ± (J rows only).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EnergyCell {
    pub value: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plus_minus: Option<f64>,
}

/// One figure of one step across the runs with energy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnergyRow {
    /// The step id, `idle (radios off)` or `run (first sync pattern to last)`.
    pub step: String,
    /// `W`, `J`, `J/GiB written`, `J/GiB read`, `J/GiB moved` or `nJ/bit`.
    pub unit: String,
    /// One per run with energy (`EnergyComparison::letters`); `None`: no figure.
    pub cells: Vec<Option<EnergyCell>>,
    /// The first run's value ÷ each run's (parallel to `cells`; `None` for the first
    /// itself and where either has no figure).
    pub ratios: Vec<Option<f64>>,
    /// The first run against each run in words, where both figures have a ±: `apart`
    /// (the ± ranges do not overlap) or `within ±` (parallel to `cells`).
    pub verdicts: Vec<Option<String>>,
}

/// The energy part of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnergyComparison {
    /// The letters of the runs whose figures are in the rows, in entry order.
    pub letters: Vec<String>,
    /// The letters of those whose trace is the emulated meter's or whose run is QEMU's.
    pub emulated: Vec<String>,
    /// Why each other run is left out: `B (run-b): no trace`.
    pub left_out: Vec<String>,
    pub rows: Vec<EnergyRow>,
}

/// The rows' figures of one step: (unit, value, ±).
fn figures(f: &StepFigure) -> Vec<(&'static str, f64, Option<f64>)> {
    let mut out = vec![("J", f.energy_j, Some(f.uncertainty_j))];
    for (unit, v) in [
        ("J/GiB written", f.j_per_gib_written),
        ("J/GiB read", f.j_per_gib_read),
        ("J/GiB moved", f.j_per_gib),
        ("nJ/bit", f.nj_per_bit),
    ] {
        out.extend(v.map(|v| (unit, v, None)));
    }
    out
}

/// One run's figures by (step, unit), in its order.
fn run_figures(e: &Energy) -> Vec<((String, String), EnergyCell)> {
    let Ok(rep) = &e.report else {
        return Vec::new();
    };
    let cell = |value, plus_minus| EnergyCell { value, plus_minus };
    let mut out = Vec::new();
    if let Some(i) = &rep.idle_w {
        out.push((
            ("idle (radios off)".to_owned(), "W".to_owned()),
            cell(i.value, Some(i.plus_minus)),
        ));
    }
    if let Some(StepEnergy { figure: Ok(f), .. }) = &rep.run {
        out.push((
            ("run (first sync pattern to last)".into(), "J".into()),
            cell(f.energy_j, Some(f.uncertainty_j)),
        ));
    }
    for s in rep
        .steps
        .iter()
        .filter(|s| s.kind != WindowKind::StoragePass)
    {
        if let Ok(f) = &s.figure {
            for (unit, v, pm) in figures(f) {
                out.push(((s.step.clone(), unit.to_owned()), cell(v, pm)));
            }
        } else {
            // No figure: the step still gets its J row, empty.
            out.push(((s.step.clone(), "J".to_owned()), cell(f64::NAN, None)));
        }
    }
    out
}

/// One run of a comparison: its entry, and its energy (`Ok(None)`: no trace; `Err`: the
/// trace could not be read, why).
pub type RunEnergy<'a> = (&'a EntryInfo, Result<Option<&'a Energy>, &'a str>);

/// The energy comparison of the runs `runs`, in entry order; `None` when no run has a
/// trace.
pub fn comparison(runs: &[RunEnergy<'_>]) -> Option<EnergyComparison> {
    if runs.iter().all(|(_, e)| matches!(e, Ok(None))) {
        return None;
    }
    let mut letters = Vec::new();
    let mut emulated = Vec::new();
    let mut left_out = Vec::new();
    let mut per_run = Vec::new();
    for (info, e) in runs {
        let who = format!("{} ({})", info.letter, info.name);
        match e {
            Ok(None) => left_out.push(format!("{who}: no trace")),
            Err(why) => left_out.push(format!("{who}: its trace cannot be read: {why}")),
            Ok(Some(Energy {
                report: Err(why), ..
            })) => left_out.push(format!("{who}: its trace is not aligned: {why}")),
            Ok(Some(e)) => {
                letters.push(info.letter.clone());
                if e.emulated {
                    emulated.push(info.letter.clone());
                }
                per_run.push(run_figures(e));
            }
        }
    }
    let mut keys: Vec<(String, String)> = Vec::new();
    for figs in &per_run {
        for (k, _) in figs {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let rows = keys
        .into_iter()
        .map(|(step, unit)| {
            let cells: Vec<Option<EnergyCell>> = per_run
                .iter()
                .map(|figs| {
                    figs.iter()
                        .find(|(k, _)| k.0 == step && k.1 == unit)
                        .map(|(_, c)| *c)
                        .filter(|c| c.value.is_finite())
                })
                .collect();
            // Ratios against the first entry only when it is the first run with energy.
            let first = (letters.first() == runs.first().map(|r| &r.0.letter))
                .then(|| cells.first().copied().flatten())
                .flatten();
            let ratios = cells
                .iter()
                .enumerate()
                .map(|(i, c)| match (i, first, c) {
                    (0, _, _) => None,
                    (_, Some(a), Some(b)) if b.value != 0.0 => Some(a.value / b.value),
                    _ => None,
                })
                .collect();
            let verdicts = cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let (a, b) = (first?, (*c)?);
                    let (ua, ub) = (a.plus_minus?, b.plus_minus?);
                    (i > 0).then(|| {
                        // (Rounding aside: a ± of 0 is a noise-free model's.)
                        let slack = 1e-9 * a.value.abs().max(b.value.abs());
                        if (a.value - b.value).abs() > ua + ub + slack {
                            "apart".to_owned()
                        } else {
                            "within ±".to_owned()
                        }
                    })
                })
                .collect();
            EnergyRow {
                step,
                unit,
                cells,
                ratios,
                verdicts,
            }
        })
        .collect();
    Some(EnergyComparison {
        letters,
        emulated,
        left_out,
        rows,
    })
}

/// The energy section of a comparison's document: the runs left out and why, then one
/// table (step, unit, each run's figure and the first run's ÷ each other's); a
/// comparison with fewer than two runs with energy says there is nothing to compare.
pub fn blocks(c: &EnergyComparison, base: &str) -> Vec<Block> {
    let emu = if c.emulated.is_empty() {
        String::new()
    } else {
        format!(" (EMULATED: {})", c.emulated.join(", "))
    };
    let mut out = vec![Block::Heading(format!(
        "Energy, W, J, J/GiB, nJ/bit (each run's power trace){emu}"
    ))];
    if !c.emulated.is_empty() {
        out.push(Block::Alert(format!(
            "EMULATED ENERGY: {} {} the emulated meter's model or a QEMU run's: ratios \
             against {} compare models, not boards",
            c.emulated.join(", "),
            if c.emulated.len() == 1 { "is" } else { "are" },
            if c.emulated.len() == 1 { "it" } else { "them" }
        )));
    }
    let mut text = Vec::new();
    if c.letters.len() < 2 {
        text.push(format!(
            "only {} has a power trace tied to its steps: nothing to compare (see benchboot \
             report)",
            c.letters.first().map_or("no run", String::as_str)
        ));
    } else if c.letters.first().map(String::as_str) != Some(base) {
        text.push(format!(
            "{base} has no aligned trace: the runs' figures without ratios"
        ));
    } else {
        text.push(format!(
            "{base}÷X = {base}'s figure ÷ X's, only where both have one; J and W ± their \
             uncertainty; {base} vs X: \"apart\" when the ± ranges do not overlap, \"within \
             ±\" when they do; a step without a figure: —"
        ));
    }
    text.extend(c.left_out.iter().cloned());
    out.push(Block::List(text));
    if c.letters.len() < 2 {
        return out;
    }
    let mut header = vec!["step".to_owned(), "unit".to_owned()];
    for (i, l) in c.letters.iter().enumerate() {
        header.push(l.clone());
        if i > 0 {
            header.push(format!("{}÷{l}", c.letters[0]));
            header.push(format!("{} vs {l}", c.letters[0]));
        }
    }
    let mut g = Grid::new(header);
    g.left_columns = 2;
    for r in &c.rows {
        let mut row = vec![r.step.clone(), r.unit.clone()];
        for (i, cell) in r.cells.iter().enumerate() {
            row.push(match cell {
                Some(EnergyCell {
                    value,
                    plus_minus: Some(u),
                }) => with_pm(*value, *u),
                Some(c) => sig(c.value),
                None => "—".into(),
            });
            if i > 0 {
                row.push(r.ratios[i].map_or("—".into(), |x| format!("{x:.2}")));
                row.push(r.verdicts[i].clone().unwrap_or_else(|| "—".into()));
            }
        }
        g.push(row);
    }
    out.push(Block::Grid(g));
    out
}

#[cfg(test)]
mod tests;
