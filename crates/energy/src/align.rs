//! Where the board's clock falls on the meter's: `meter s = offset_s + rate × board s`.
//!
//! Three ways, most precise first:
//! - **Same clock** ([`Clock::Board`]): a sensor PID 1 read itself; offset 0, rate 1.
//! - **Sync patterns** ([`SyncMark`]): slot `i` of a pattern ran every CPU busy when
//!   `code[i]` is `'1'`, idle when `'0'`. Each pattern is looked for in the trace by
//!   correlating the slot means of the power (from the cumulative integral, so one
//!   candidate start costs O(slots), O(slots × log n) when refining) with the code,
//!   over the whole trace (or around where the console stamps put it) at a step of
//!   `min(period/2, slot/10)`, then on a grid ten times finer around the best with a
//!   parabola through the top three. Two patterns give offset and rate; one gives the
//!   offset with rate 1.
//! - **Console stamps** (`Trace::console`): the lower envelope of `host − board`; a
//!   line's latency only ever delays it.
//!
//! ## Accepting a match
//! A pattern is found where the Pearson correlation of its slot means with the code is
//! at least [`MIN_CORRELATION`] (0.9) *and* the busy − idle contrast is at least
//! [`MIN_CONTRAST_SIGMAS`] (10) times the noise of one slot mean (the readings' noise,
//! estimated from successive differences, over √(samples per slot)) and at least two
//! resolution steps. Why both: a correlation of 0.9 over 13 slots already means the
//! two levels stand about 4.5 of their own scatters apart, but pure noise scanned over
//! an hour of candidate starts reaches 0.9 somewhere; its contrast is then a few
//! slot-noises, never ten. Two patterns (or more) must then agree: their meter times
//! must be as far apart as their board times, to within [`MAX_SKEW`] (1000 ppm; cheap
//! crystals are 20-100 ppm) and two slots. A place that matches as well but that no
//! mark explains, or two ways of assigning the matches to the marks that explain
//! equally many, is refused as ambiguous ([`AlignError::SyncNotFound`]).
//!
//! ## `error_s`
//! For one found pattern: half the fine search step, plus a quarter of the meter's
//! period (linear interpolation of a meter's averaged readings places an edge up to
//! that far off, the same way at every edge when the slot is a whole number of
//! periods), plus twice the timing scatter the fit leaves (`σ_res × slot / (contrast ×
//! √edges)`, `σ_res` the scatter of the slot means about the two levels, `edges` the
//! slot boundaries where the power steps), plus how long the board overran the pattern
//! (`end_ns` past `begin_ns + slots × slot_ns`). With two patterns, the alignment
//! interpolates between them: anywhere between the two starts its error is at most the
//! larger of the two (plus the residual of the line when there are more than two);
//! outside, it grows with the distance times the rate's error. With one pattern the
//! rate is taken as 1, and the error adds [`ASSUMED_SKEW`] (200 ppm) times the trace's
//! length: the farthest any window can be from the pattern.
//!
//! A meter's reading is the mean over its interval, ending at or centred on its
//! time stamp depending on the meter. A sync alignment is found in the same trace the
//! steps are integrated from, so that convention cancels; for the console it does not,
//! and its error adds half a period.

use serde::{Deserialize, Serialize};

use benchboot_results::energy::{EnergyMarks, SyncMark};

use crate::error::AlignError;
use crate::series::Series;
use crate::{Clock, Trace};

/// Least Pearson correlation of slot means with the code for a match.
pub const MIN_CORRELATION: f64 = 0.9;
/// Least busy − idle contrast of a match, in noises of one slot mean.
pub const MIN_CONTRAST_SIGMAS: f64 = 10.0;
/// Widest clock rate difference the pattern pairing accepts (1000 ppm).
pub const MAX_SKEW: f64 = 1e-3;
/// Rate difference assumed when one pattern gives the offset alone (200 ppm).
pub const ASSUMED_SKEW: f64 = 200e-6;
/// Most slots a pattern may have (a longer code is refused, not scanned).
pub const MAX_SLOTS: usize = 256;
/// Most sync patterns a run may record.
pub const MAX_PATTERNS: usize = 16;
/// Most slot boundaries one scan evaluates (candidate starts × (slots + 1)): past it
/// the coarse step grows, so a hostile trace (days long, a tiny period) or code costs
/// bounded time.
const MAX_EVALUATIONS: f64 = 268_435_456.0;
/// Most distinct places a pattern may match before the search gives up as ambiguous.
const MAX_PEAKS: usize = 64;
/// The least latency a console line has: a 60-character line at 115200 baud takes
/// 5 ms to arrive after its board stamp.
pub const CONSOLE_FLOOR_S: f64 = 0.005;

/// How a trace's clock relates to the board's: `meter s = offset_s + rate × board s`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Alignment {
    /// Meter time at board time 0, s.
    pub offset_s: f64,
    /// Meter seconds per board second: 1 + the skew.
    pub rate: f64,
    /// How far off a board time's meter time may be, s, anywhere between the first and
    /// the last alignment point (module docs: how each method states it).
    pub error_s: f64,
    pub method: AlignMethod,
}

impl Alignment {
    /// Meter time of board `CLOCK_BOOTTIME` `board_ns`, s.
    pub fn meter_s(&self, board_ns: u64) -> f64 {
        self.offset_s + self.rate * (board_ns as f64 / 1e9)
    }

    /// Skew, parts per million (`(rate − 1) × 10^6`).
    pub fn skew_ppm(&self) -> f64 {
        (self.rate - 1.0) * 1e6
    }
}

/// What the alignment rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum AlignMethod {
    /// The trace is on the board's clock.
    SameClock,
    /// Sync patterns found in the trace.
    Sync { found: Vec<SyncFound> },
    /// The lower envelope of `lines` console stamps.
    Console { lines: usize },
}

/// One sync pattern found in the trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncFound {
    /// The mark's `at` (`start`, `end`).
    pub at: String,
    /// Its index in `EnergyMarks::sync`.
    pub index: usize,
    /// Meter time of its first slot's start, s.
    pub meter_s: f64,
    /// Pearson correlation of the slot means with the code, -1..=1.
    pub correlation: f64,
    /// Mean of the busy slots − mean of the idle slots, W.
    pub contrast_w: f64,
    /// Noise of one slot mean the contrast was held against, W.
    pub slot_noise_w: f64,
    /// This pattern's own timing error, s (module docs).
    pub error_s: f64,
}

/// Aligns `trace` with the board's clock through `marks` (module docs).
///
/// # Errors
/// [`AlignError::Trace`] for a trace that is not one (fewer than 2 samples, times not
/// strictly increasing, NaN); [`AlignError::BadMark`] for a pattern no board writes;
/// [`AlignError::SyncNotFound`] when the patterns are not (unambiguously) in the
/// trace; [`AlignError::Console`] for unusable stamps; [`AlignError::Nothing`] when the
/// trace has its own clock and the run no sync pattern.
pub fn align(trace: &Trace, marks: &EnergyMarks) -> Result<Alignment, AlignError> {
    let s = Series::new(trace)?;
    match trace.clock {
        Clock::Board => Ok(Alignment {
            offset_s: 0.0,
            rate: 1.0,
            error_s: s.period_s / 2.0,
            method: AlignMethod::SameClock,
        }),
        _ if !marks.sync.is_empty() => {
            let prior = match trace.clock {
                Clock::Host if !trace.console.is_empty() => console(trace).ok(),
                _ => None,
            };
            sync(&s, &marks.sync, prior.as_ref())
        }
        Clock::Host if !trace.console.is_empty() => console(trace),
        _ => Err(AlignError::Nothing(
            "the run recorded no sync pattern and the trace has no console stamps: \
             nothing ties the meter's clock to the board's"
                .into(),
        )),
    }
}

/// The alignment from the console stamps alone (module docs): the lower envelope of
/// `host − board` (a line fit with a rate once the stamps span 60 s or more).
///
/// # Errors
/// [`AlignError::Console`] without stamps or with a time that is not finite;
/// [`AlignError::Trace`] as [`align`].
pub fn console(trace: &Trace) -> Result<Alignment, AlignError> {
    let s = Series::new(trace)?;
    let n = trace.console.len();
    if n == 0 {
        return Err(AlignError::Console("none recorded".into()));
    }
    if n > crate::MAX_SAMPLES {
        return Err(AlignError::Console(format!(
            "{n} lines: more than a trace holds"
        )));
    }
    let mut p: Vec<(f64, f64)> = Vec::with_capacity(n);
    for (i, &(h, b)) in trace.console.iter().enumerate() {
        if !h.is_finite() {
            return Err(AlignError::Console(format!("line {i}: host time {h} s")));
        }
        let b = b as f64 / 1e9;
        p.push((b, h - b));
    }
    p.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.total_cmp(&y.1)));
    let span = p[n - 1].0 - p[0].0;
    // Offset alone: the fastest line.
    let mut best = (p.iter().map(|q| q.1).fold(f64::INFINITY, f64::min), 0.0);
    if span >= 60.0 {
        // Lower convex hull of (board, host − board); the hull edge under which the
        // lines sit least far on average is the envelope (the lines' latencies are
        // ≥ 0, so every admissible line is under every point).
        let mut hull: Vec<(f64, f64)> = Vec::new();
        for &q in &p {
            while hull.len() >= 2 {
                let (a, b) = (hull[hull.len() - 2], hull[hull.len() - 1]);
                if (b.0 - a.0) * (q.1 - a.1) - (b.1 - a.1) * (q.0 - a.0) <= 0.0 {
                    hull.pop();
                } else {
                    break;
                }
            }
            hull.push(q);
        }
        let (sb, sd) = p
            .iter()
            .fold((0.0, 0.0), |acc, q| (acc.0 + q.0, acc.1 + q.1));
        let mut least = f64::INFINITY;
        for e in hull.windows(2) {
            let (a, b) = (e[0], e[1]);
            if b.0 - a.0 <= 0.0 {
                continue;
            }
            let slope = (b.1 - a.1) / (b.0 - a.0);
            if slope.abs() > MAX_SKEW {
                continue;
            }
            let icpt = a.1 - slope * a.0;
            let sum = sd - n as f64 * icpt - slope * sb;
            if sum < least {
                least = sum;
                best = (icpt, slope);
            }
        }
    }
    let (offset_s, slope) = best;
    let mut resid: Vec<f64> = p.iter().map(|q| q.1 - (offset_s + slope * q.0)).collect();
    let mid = resid.len() / 2;
    let (_, median, _) = resid.select_nth_unstable_by(mid, f64::total_cmp);
    let error_s = median.max(0.0).max(CONSOLE_FLOOR_S) + s.period_s / 2.0;
    if !(offset_s.is_finite() && error_s.is_finite()) {
        return Err(AlignError::Console(
            "the stamps give no finite offset".into(),
        ));
    }
    Ok(Alignment {
        offset_s,
        rate: 1.0 + slope,
        error_s,
        method: AlignMethod::Console { lines: n },
    })
}

/// A pattern's code and timing, checked.
struct Pattern {
    slots: Vec<bool>,
    slot_s: f64,
    begin_s: f64,
    overrun_s: f64,
    /// Boundaries where the power steps (in the code, and the outer edges of busy end slots).
    edges: usize,
}

fn pattern(m: &SyncMark) -> Result<Pattern, AlignError> {
    let bad = |why: String| {
        Err(AlignError::BadMark {
            pattern: m.at.clone(),
            why,
        })
    };
    let slots = m.slots();
    if slots.len() > MAX_SLOTS {
        return bad(format!("{} slots: more than {MAX_SLOTS}", slots.len()));
    }
    if !slots.iter().any(|&b| b) || slots.iter().all(|&b| b) {
        return bad(format!(
            "code `{}` needs both busy (1) and idle (0) slots",
            m.code.chars().take(40).collect::<String>()
        ));
    }
    if m.slot_ns == 0 {
        return bad("slot of 0 ns".into());
    }
    let nominal = (m.slot_ns as f64) * slots.len() as f64;
    let overrun = m.end_ns as f64 - m.begin_ns as f64 - nominal;
    if overrun < 0.0 {
        return bad(format!(
            "ended {:.3} s after it began, before its {} slots of {:.3} s could",
            (m.end_ns as f64 - m.begin_ns as f64) / 1e9,
            slots.len(),
            m.slot_ns as f64 / 1e9
        ));
    }
    let inner = slots.windows(2).filter(|p| p[0] != p[1]).count();
    let outer = usize::from(slots[0]) + usize::from(slots[slots.len() - 1]);
    Ok(Pattern {
        edges: 2 * inner + outer,
        slots,
        slot_s: m.slot_ns as f64 / 1e9,
        begin_s: m.begin_ns as f64 / 1e9,
        overrun_s: overrun / 1e9,
    })
}

/// The slot statistics of the pattern starting at meter time `m`.
#[derive(Debug, Clone, Copy)]
struct Score {
    m: f64,
    r: f64,
    contrast: f64,
    /// Scatter of the slot means about their two levels, W.
    resid: f64,
}

fn score(p: &Pattern, means: &[f64], m: f64) -> Score {
    let n = means.len() as f64;
    let ones = p.slots.iter().filter(|&&b| b).count() as f64;
    let xbar = ones / n;
    let ybar = means.iter().sum::<f64>() / n;
    let (mut sxy, mut syy, mut sxx, mut busy, mut idle) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (&x, &y) in p.slots.iter().zip(means) {
        let xc = f64::from(u8::from(x)) - xbar;
        sxy += xc * (y - ybar);
        syy += (y - ybar) * (y - ybar);
        sxx += xc * xc;
        if x {
            busy += y;
        } else {
            idle += y;
        }
    }
    let r = if syy > 0.0 {
        sxy / (sxx * syy).sqrt()
    } else {
        0.0
    };
    let (busy, idle) = (busy / ones, idle / (n - ones));
    let ss: f64 = p
        .slots
        .iter()
        .zip(means)
        .map(|(&x, &y)| (y - if x { busy } else { idle }).powi(2))
        .sum();
    let resid = (ss / (n - 2.0).max(1.0)).sqrt();
    Score {
        m,
        r: if r.is_finite() { r } else { 0.0 },
        contrast: busy - idle,
        resid,
    }
}

/// Slot means of the pattern at `m`, through binary search.
fn means_at(s: &Series, p: &Pattern, m: f64, out: &mut Vec<f64>) {
    out.clear();
    let mut prev = s.cum_at(m);
    for i in 1..=p.slots.len() {
        let c = s.cum_at(m + i as f64 * p.slot_s);
        out.push((c - prev) / p.slot_s);
        prev = c;
    }
}

/// What one scan saw: every place passing the thresholds (refined), and the best
/// correlation anywhere (for the message when nothing passes).
struct Scan {
    peaks: Vec<Score>,
    best: Option<Score>,
    min_contrast: f64,
    fine_step: f64,
    slot_noise: f64,
}

fn scan(s: &Series, p: &Pattern, lo: f64, hi: f64) -> Result<Scan, String> {
    let len_s = p.slot_s * p.slots.len() as f64;
    let (lo, hi) = (lo.max(s.first()), hi.min(s.last() - len_s));
    if hi.is_nan() || lo.is_nan() || hi < lo {
        return Err(format!(
            "the trace ({:.1} s) does not hold the pattern ({:.1} s) where it was looked for",
            s.last() - s.first(),
            len_s
        ));
    }
    let mut step = (s.period_s / 2.0).min(p.slot_s / 10.0);
    let most = MAX_EVALUATIONS / (p.slots.len() + 1) as f64;
    if (hi - lo) / step > most {
        step = (hi - lo) / most;
    }
    let fine_step = step / 10.0;
    let per_slot = (p.slot_s / s.period_s).max(1.0);
    let noise = s.noise_w(0, s.w.len());
    let slot_noise = noise / per_slot.sqrt();
    let min_contrast = (MIN_CONTRAST_SIGMAS * slot_noise).max(2.0 * s.resolution_w);
    let passes = |sc: &Score| sc.r >= MIN_CORRELATION && sc.contrast >= min_contrast;
    let k_max = ((hi - lo) / step).floor() as u64;
    let mut cursors: Vec<_> = (0..=p.slots.len()).map(|_| s.cursor()).collect();
    let mut cums = vec![0.0; p.slots.len() + 1];
    let mut means = Vec::with_capacity(p.slots.len());
    let mut best: Option<Score> = None;
    let mut coarse: Vec<Score> = Vec::new();
    for k in 0..=k_max {
        let m = lo + k as f64 * step;
        for (j, c) in cursors.iter_mut().enumerate() {
            cums[j] = c.cum_at(m + j as f64 * p.slot_s);
        }
        means.clear();
        means.extend(cums.windows(2).map(|c| (c[1] - c[0]) / p.slot_s));
        let sc = score(p, &means, m);
        if best.is_none_or(|b| sc.r > b.r) {
            best = Some(sc);
        }
        if passes(&sc) {
            // A new place once more than a slot from the last one kept.
            match coarse.last_mut() {
                Some(last) if sc.m - last.m < p.slot_s => {
                    if sc.r > last.r {
                        *last = sc;
                    }
                }
                _ => {
                    if coarse.len() >= MAX_PEAKS {
                        return Err(format!(
                            "it matches at more than {MAX_PEAKS} places: the trace does not single it out"
                        ));
                    }
                    coarse.push(sc);
                }
            }
        }
    }
    let peaks = coarse
        .iter()
        .map(|c| refine(s, p, c.m, step, fine_step))
        .filter(|sc| passes(sc))
        .collect();
    Ok(Scan {
        peaks,
        best,
        min_contrast,
        fine_step,
        slot_noise,
    })
}

/// The best start within `step` of `m`, on a grid of `fine` and a parabola through the
/// top three.
fn refine(s: &Series, p: &Pattern, m: f64, step: f64, fine: f64) -> Score {
    let mut means = Vec::with_capacity(p.slots.len());
    let n = (step / fine).round() as i64;
    let grid: Vec<Score> = (-n..=n)
        .map(|i| {
            let x = m + i as f64 * fine;
            means_at(s, p, x, &mut means);
            score(p, &means, x)
        })
        .collect();
    let (bi, b) = grid
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.r.total_cmp(&b.1.r))
        .map_or((0, grid[0]), |(i, sc)| (i, *sc));
    let mut x = b.m;
    if bi > 0 && bi + 1 < grid.len() {
        let (l, c, r) = (grid[bi - 1].r, b.r, grid[bi + 1].r);
        let den = l - 2.0 * c + r;
        if den < 0.0 {
            x += (0.5 * (l - r) / den * fine).clamp(-fine / 2.0, fine / 2.0);
        }
    }
    means_at(s, p, x, &mut means);
    let sc = score(p, &means, x);
    if sc.r >= b.r - 1e-9 {
        sc
    } else {
        b
    }
}

/// One mark's candidates: found places, with each one's error.
struct Candidates {
    found: Vec<SyncFound>,
    why_not: String,
}

fn candidates(
    s: &Series,
    m: &SyncMark,
    index: usize,
    p: &Pattern,
    range: (f64, f64),
) -> Result<Candidates, AlignError> {
    if p.slot_s < 2.0 * s.period_s {
        return Err(AlignError::SyncNotFound {
            pattern: m.at.clone(),
            why: format!(
                "its slots ({:.3} s) are shorter than 2 samples of this meter ({} s): \
                 the pattern cannot show in the trace",
                p.slot_s, s.period_s
            ),
        });
    }
    let sc = scan(s, p, range.0, range.1).map_err(|why| AlignError::SyncNotFound {
        pattern: m.at.clone(),
        why,
    })?;
    let why_not = match sc.best {
        Some(b) => format!(
            "the best match (meter {:.3} s) has correlation {:.2} and contrast {:.3} W; \
             a match needs ≥ {MIN_CORRELATION} and ≥ {:.3} W ({MIN_CONTRAST_SIGMAS} × \
             the noise of a slot mean, {:.4} W)",
            b.m, b.r, b.contrast, sc.min_contrast, sc.slot_noise
        ),
        None => "no candidate start".into(),
    };
    let found = sc
        .peaks
        .iter()
        .map(|x| {
            let timing = 2.0 * x.resid * p.slot_s / (x.contrast * (p.edges.max(1) as f64).sqrt());
            SyncFound {
                at: m.at.clone(),
                index,
                meter_s: x.m,
                correlation: x.r,
                contrast_w: x.contrast,
                slot_noise_w: sc.slot_noise,
                error_s: sc.fine_step / 2.0 + s.period_s / 4.0 + timing + p.overrun_s,
            }
        })
        .collect();
    Ok(Candidates { found, why_not })
}

fn sync(
    s: &Series,
    marks: &[SyncMark],
    prior: Option<&Alignment>,
) -> Result<Alignment, AlignError> {
    if marks.len() > MAX_PATTERNS {
        return Err(AlignError::BadMark {
            pattern: marks[0].at.clone(),
            why: format!("{} sync patterns: more than {MAX_PATTERNS}", marks.len()),
        });
    }
    let pats: Vec<Pattern> = marks.iter().map(pattern).collect::<Result<_, _>>()?;
    let whole = (f64::NEG_INFINITY, f64::INFINITY);
    if let Some(a) = prior {
        // Around where the console puts each pattern (a console line is only ever late:
        // the pattern can be earlier than the envelope says, never much later).
        let ranges: Vec<(f64, f64)> = pats
            .iter()
            .map(|p| {
                let at = a.offset_s + a.rate * p.begin_s;
                let w = 5.0 + 10.0 * a.error_s + p.slot_s * p.slots.len() as f64;
                (at - w, at + w)
            })
            .collect();
        if let Ok(al) = assign::sync_in(s, marks, &pats, &ranges) {
            return Ok(al);
        }
    }
    assign::sync_in(s, marks, &pats, &vec![whole; pats.len()])
}

mod assign;

#[cfg(test)]
mod tests;
