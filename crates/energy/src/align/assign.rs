//! Sync patterns placed in the trace together: each mark's candidate places, the
//! assignment of places to marks that the run's board times agree with most, and the
//! clock line through the places chosen.

use benchboot_results::energy::SyncMark;

use super::{
    candidates, AlignMethod, Alignment, Candidates, Pattern, SyncFound, ASSUMED_SKEW, MAX_SKEW,
};
use crate::error::AlignError;
use crate::series::Series;

/// One way of placing the marks: the candidate each mark takes, if any.
struct Choice {
    /// Per mark, the index of its chosen candidate.
    picks: Vec<Option<usize>>,
    /// How many marks have a place.
    support: usize,
    /// How many marks without a place should have been inside the trace.
    contradictions: usize,
    /// Sum of the chosen places' correlations.
    r: f64,
}

/// Aligns through `marks` (their checked patterns `pats`), each looked for in its meter
/// time range `ranges[i]` (s).
pub(super) fn sync_in(
    s: &Series,
    marks: &[SyncMark],
    pats: &[Pattern],
    ranges: &[(f64, f64)],
) -> Result<Alignment, AlignError> {
    let (cands, why) = all_candidates(s, marks, pats, ranges)?;
    let choices = choices(s, &cands, pats);
    let top = best_choice(&choices, marks, &why)?;
    let found: Vec<SyncFound> = top
        .picks
        .iter()
        .enumerate()
        .filter_map(|(j, p)| p.map(|b| cands[j][b].clone()))
        .collect();
    check_explained(&found, &cands, pats)?;
    let (offset_s, rate, error_s) = clock_line(s, &found, pats)?;
    if !(offset_s.is_finite() && rate.is_finite() && (rate - 1.0).abs() <= MAX_SKEW) {
        return Err(AlignError::SyncNotFound {
            pattern: found[0].at.clone(),
            why: format!(
                "the patterns found give a clock rate of {rate}, more than {} ppm from 1",
                MAX_SKEW * 1e6
            ),
        });
    }
    Ok(Alignment {
        offset_s,
        rate,
        error_s,
        method: AlignMethod::Sync { found },
    })
}

/// Every mark's candidate places and why none was taken; scans of the same code and
/// slot over the same range are shared.
fn all_candidates(
    s: &Series,
    marks: &[SyncMark],
    pats: &[Pattern],
    ranges: &[(f64, f64)],
) -> Result<(Vec<Vec<SyncFound>>, Vec<String>), AlignError> {
    let mut done: Vec<(usize, Candidates)> = Vec::new();
    let mut cands: Vec<Vec<SyncFound>> = Vec::new();
    let mut why: Vec<String> = Vec::new();
    for (i, (m, p)) in marks.iter().zip(pats).enumerate() {
        let same = done.iter().find(|(j, _)| {
            marks[*j].code == m.code && marks[*j].slot_ns == m.slot_ns && ranges[*j] == ranges[i]
        });
        let c = match same {
            Some((_, c)) => shared(c, m, i, p, pats),
            None => candidates(s, m, i, p, ranges[i])?,
        };
        cands.push(c.found.clone());
        why.push(c.why_not.clone());
        if same.is_none() {
            done.push((i, c));
        }
    }
    Ok((cands, why))
}

/// Another mark's candidates `c` as mark `i`'s (`m`, pattern `p`): its name and index,
/// the error with `p`'s overrun for the other's.
fn shared(c: &Candidates, m: &SyncMark, i: usize, p: &Pattern, pats: &[Pattern]) -> Candidates {
    Candidates {
        found: c
            .found
            .iter()
            .map(|f| SyncFound {
                at: m.at.clone(),
                index: i,
                error_s: f.error_s - pats[f.index].overrun_s + p.overrun_s,
                ..f.clone()
            })
            .collect(),
        why_not: c.why_not.clone(),
    }
}

/// Every way of placing the marks: each mark anchored at each of its places, and the
/// other marks at a place their board time puts them.
fn choices(s: &Series, cands: &[Vec<SyncFound>], pats: &[Pattern]) -> Vec<Choice> {
    let mut choices: Vec<Choice> = Vec::new();
    for (i, ci) in cands.iter().enumerate() {
        for (a, anchor) in ci.iter().enumerate() {
            choices.push(anchored(s, cands, pats, i, a, anchor));
        }
    }
    choices
}

/// The placing with mark `i` at its candidate `a` (`anchor`): every other mark at its
/// best-correlated place within the skew's and two slots' tolerance of where the
/// anchor puts it, else a contradiction when that falls inside the trace.
fn anchored(
    s: &Series,
    cands: &[Vec<SyncFound>],
    pats: &[Pattern],
    i: usize,
    a: usize,
    anchor: &SyncFound,
) -> Choice {
    let mut picks = vec![None; cands.len()];
    picks[i] = Some(a);
    let mut contradictions = 0;
    for (j, cj) in cands.iter().enumerate() {
        if j == i {
            continue;
        }
        let db = pats[j].begin_s - pats[i].begin_s;
        let want = anchor.meter_s + db;
        let tol = db.abs() * MAX_SKEW + 2.0 * pats[j].slot_s;
        let hit = cj
            .iter()
            .enumerate()
            .filter(|(_, f)| (f.meter_s - want).abs() <= tol)
            .max_by(|x, y| x.1.correlation.total_cmp(&y.1.correlation));
        match hit {
            Some((b, _)) => picks[j] = Some(b),
            None => {
                let len = pats[j].slot_s * pats[j].slots.len() as f64;
                if want - tol >= s.first() && want + tol + len <= s.last() {
                    contradictions += 1;
                }
            }
        }
    }
    let support = picks.iter().flatten().count();
    let r = picks
        .iter()
        .enumerate()
        .filter_map(|(j, p)| p.map(|b| cands[j][b].correlation))
        .sum();
    Choice {
        picks,
        support,
        contradictions,
        r,
    }
}

/// The placing with the most marks placed, then the fewest contradictions, then the
/// most correlation; refused when none exists (`why` the first mark's reason) or another
/// places as many with as few contradictions differently.
fn best_choice<'a>(
    choices: &'a [Choice],
    marks: &[SyncMark],
    why: &[String],
) -> Result<&'a Choice, AlignError> {
    let Some(top) = choices.iter().max_by(|x, y| {
        x.support
            .cmp(&y.support)
            .then(y.contradictions.cmp(&x.contradictions))
            .then(x.r.total_cmp(&y.r))
    }) else {
        return Err(AlignError::SyncNotFound {
            pattern: marks[0].at.clone(),
            why: why[0].clone(),
        });
    };
    let rivals = choices
        .iter()
        .filter(|c| {
            c.support == top.support
                && c.contradictions == top.contradictions
                && c.picks != top.picks
        })
        .count();
    if rivals > 0 {
        let j = top.picks.iter().position(Option::is_some).unwrap_or(0);
        return Err(AlignError::SyncNotFound {
            pattern: marks[j].at.clone(),
            why: format!(
                "it matches at more than one place consistent with the run's other patterns \
                 ({} ways of placing {} of {} patterns): ambiguous",
                rivals + 1,
                top.support,
                marks.len()
            ),
        });
    }
    Ok(top)
}

/// Refuses the placing when a mark has a place as good as its chosen one (within half to
/// twice its contrast) that no mark explains: the choice would be a guess.
fn check_explained(
    found: &[SyncFound],
    cands: &[Vec<SyncFound>],
    pats: &[Pattern],
) -> Result<(), AlignError> {
    for f in found {
        let unexplained = cands[f.index].iter().find(|c| {
            !found
                .iter()
                .any(|g| (g.meter_s - c.meter_s).abs() < pats[f.index].slot_s)
                && c.contrast_w >= 0.5 * f.contrast_w
                && c.contrast_w <= 2.0 * f.contrast_w
        });
        if let Some(c) = unexplained {
            return Err(AlignError::SyncNotFound {
                pattern: f.at.clone(),
                why: format!(
                    "it matches at meter {:.3} s (correlation {:.2}) and at {:.3} s \
                     (correlation {:.2}), and the run's other patterns do not say which: \
                     ambiguous",
                    f.meter_s, f.correlation, c.meter_s, c.correlation
                ),
            });
        }
    }
    Ok(())
}

/// The clock line through the places `found`: (offset s, rate, error s). Two or more:
/// least squares through (board begin, meter place), the error the worst place's plus
/// the largest residual; one: rate 1, the error grown by [`ASSUMED_SKEW`] over the trace.
fn clock_line(
    s: &Series,
    found: &[SyncFound],
    pats: &[Pattern],
) -> Result<(f64, f64, f64), AlignError> {
    let err_max = found.iter().map(|f| f.error_s).fold(0.0, f64::max);
    if found.len() < 2 {
        let f = &found[0];
        let span = s.last() - s.first();
        return Ok((
            f.meter_s - pats[f.index].begin_s,
            1.0,
            err_max + ASSUMED_SKEW * span,
        ));
    }
    // Least squares line through (board begin, meter found).
    let pts: Vec<(f64, f64)> = found
        .iter()
        .map(|f| (pats[f.index].begin_s, f.meter_s))
        .collect();
    let n = pts.len() as f64;
    let bx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - bx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - bx) * (p.1 - my)).sum();
    if sxx <= 0.0 {
        return Err(AlignError::BadMark {
            pattern: found[0].at.clone(),
            why: "two patterns recorded at the same board time".into(),
        });
    }
    let rate = sxy / sxx;
    let offset = my - rate * bx;
    let resid = pts
        .iter()
        .map(|p| (p.1 - offset - rate * p.0).abs())
        .fold(0.0, f64::max);
    Ok((offset, rate, err_max + resid))
}
