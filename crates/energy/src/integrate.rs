//! The energy of each window of a run: the integral of the trace's power over the
//! window mapped to meter time (trapezoids, linearly interpolated at the edges), with
//! what it says per byte and per bit, and how far it can be off.
//!
//! ## No figure
//! A window gets no figure, and says why, when it is not wholly inside the trace, when
//! it holds fewer than [`MIN_SAMPLES`] (10) readings (a step shorter than ten samples
//! of the meter has no trustworthy energy), or when the meter lost readings inside it:
//! two successive readings more than [`MAX_GAP_PERIODS`] (3) periods apart.
//!
//! ## Uncertainty, J (all terms added linearly: each is a bound, or a 2σ figure, and
//! they are not independent of each other in any way one could rely on)
//! - **Resolution**: ±resolution/2 per reading, as a bound over the window:
//!   `seconds × resolution / 2`. Linear, not in quadrature: on a steady load a meter
//!   reads the same quantised value again and again, so the rounding errors do not
//!   average out; they can all lean the same way.
//! - **Reading noise**: `2 σ √N × period`, `σ` the readings' scatter in the window
//!   (from successive differences, robust to the load's own steps), `N` the readings.
//! - **Edges**: at each edge, `|P inside − P outside| × (error_s + spacing/4)`: the
//!   alignment may put the edge off by `error_s`, and linear interpolation between a
//!   meter's averaged readings places a step up to a quarter of their spacing off
//!   (half of it where readings are missing at the edge: interpolating across a gap
//!   `g` over a step can be off by up to `ΔP × g/2`). The powers are the means over
//!   `max(3 periods, 2 error_s)` on each side, past the step's smear (the spacing) and
//!   `error_s`, where the window has room.
//! - **Above idle**, beside the above: the idle baseline's own ± times the window.
//!
//! J/GiB use 2^30 bytes and the whole energy of the window (what the step cost at the
//! meter's position); nJ/bit the bits the network test moved.

use serde::{Deserialize, Serialize};

use benchboot_results::RunResults;

use crate::align::{self, AlignMethod, Alignment};
use crate::error::AlignError;
use crate::series::Series;
use crate::windows::{windows, Window, WindowKind};
use crate::Trace;

/// Fewest readings a window needs for a figure.
pub const MIN_SAMPLES: usize = 10;
/// Readings further apart than this many periods are a gap: no figure over it.
pub const MAX_GAP_PERIODS: f64 = 3.0;
const GIB: f64 = (1u64 << 30) as f64;

/// A value and its ± (same unit, given by the field holding it).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub value: f64,
    pub plus_minus: f64,
}

/// The parts of a step's uncertainty, J (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Uncertainty {
    pub resolution_j: f64,
    pub noise_j: f64,
    pub edges_j: f64,
}

/// What a window cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepFigure {
    /// Energy over the window, J.
    pub energy_j: f64,
    /// Mean power, W.
    pub mean_w: f64,
    /// Mean power above the idle baseline, W (`None`: no baseline).
    pub above_idle_w: Option<f64>,
    /// Energy above the idle baseline, J.
    pub above_idle_j: Option<f64>,
    /// `energy_j` per GiB written, J/GiB: only for a window that wrote and did not read.
    pub j_per_gib_written: Option<f64>,
    /// `energy_j` per GiB read, J/GiB: only for a window that read and did not write.
    pub j_per_gib_read: Option<f64>,
    /// `energy_j` per GiB moved either way, J/GiB.
    pub j_per_gib: Option<f64>,
    /// `energy_j` per bit a network test moved, nJ/bit.
    pub nj_per_bit: Option<f64>,
    /// ± of `energy_j`, J: the sum of `parts`.
    pub uncertainty_j: f64,
    /// ± of `above_idle_j`, J: `uncertainty_j` + the baseline's ± × the window.
    pub above_idle_uncertainty_j: Option<f64>,
    pub parts: Uncertainty,
}

/// One window's energy, or why it has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepEnergy {
    pub step: String,
    pub kind: WindowKind,
    /// Length on the board's clock, s.
    pub seconds: f64,
    /// Readings inside the window.
    pub samples: usize,
    pub figure: Result<StepFigure, String>,
}

/// A run's energy: every window's, the idle baseline and the alignment used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnergyReport {
    pub meter: String,
    /// The power is a model (the emulated meter), not a measurement.
    pub emulated: bool,
    pub alignment: Alignment,
    /// The `radios-off` idle phase's mean power, W, ± its uncertainty per second.
    pub idle_w: Option<Figure>,
    /// Every idle phase (above the `radios-off` baseline: what a link up costs).
    pub idle_phases: Vec<StepEnergy>,
    /// Every step PID 1 took health around, in the document's order.
    pub steps: Vec<StepEnergy>,
    /// From the first sync pattern's start to the last one's end (`None`: fewer than
    /// two patterns).
    pub run: Option<StepEnergy>,
    /// The meter's own counter from its first to its last reading, J.
    pub counter_j: Option<f64>,
    /// When the board was powered, `(board s, ± s)` (negative: before the kernel's clock
    /// started), or why the trace cannot tell ([`crate::power_on`]).
    pub power_on: Result<(f64, f64), String>,
    /// The trace's integral over the same span, J (to hold beside `counter_j`).
    pub trace_j: f64,
    pub notes: Vec<String>,
}

/// `x` with up to 3 decimals, trailing zeros dropped: `3`, `0.4`, `0.25`.
fn short(x: f64) -> String {
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_owned()
}

fn per_second(period_s: f64) -> String {
    let r = 1.0 / period_s;
    if (r - 1.0).abs() < 1e-9 {
        "1 sample/s".into()
    } else {
        format!("{} samples/s", short(r))
    }
}

/// The energy of `window` in `trace` placed by `alignment`; above `idle_w` (W ± W)
/// when given. A trace that is not one gives no figure, with the reason.
pub fn integrate(
    trace: &Trace,
    alignment: &Alignment,
    window: &Window,
    idle_w: Option<&Figure>,
) -> StepEnergy {
    match Series::new(trace) {
        Ok(s) => integrate_series(&s, alignment, window, idle_w),
        Err(e) => StepEnergy {
            step: window.step.clone(),
            kind: window.kind,
            seconds: window.seconds(),
            samples: 0,
            figure: Err(e.to_string()),
        },
    }
}

pub(crate) fn integrate_series(
    s: &Series,
    a: &Alignment,
    w: &Window,
    idle: Option<&Figure>,
) -> StepEnergy {
    let seconds = w.seconds();
    let mut samples = 0;
    let figure = figure(s, a, w, idle, &mut samples);
    StepEnergy {
        step: w.step.clone(),
        kind: w.kind,
        seconds,
        samples,
        figure,
    }
}

fn figure(
    s: &Series,
    a: &Alignment,
    w: &Window,
    idle: Option<&Figure>,
    samples: &mut usize,
) -> Result<StepFigure, String> {
    let seconds = w.seconds();
    let (m0, m1) = (a.meter_s(w.begin_ns), a.meter_s(w.end_ns));
    if !(m0.is_finite() && m1.is_finite() && a.error_s.is_finite()) {
        return Err("the alignment puts the window at no finite meter time".into());
    }
    if m0 < s.first() || m1 > s.last() {
        return Err(format!(
            "outside the trace: the window falls at meter {:.1}-{:.1} s, the meter recorded {:.1}-{:.1} s",
            m0,
            m1,
            s.first(),
            s.last()
        ));
    }
    if m1 <= m0 {
        return Err(format!("{} s: an empty window", short(seconds)));
    }
    let i0 = s.first_at_or_after(m0);
    let i1 = s.t.partition_point(|&t| t <= m1);
    *samples = i1.saturating_sub(i0);
    // Gaps: segments overlapping the window longer than MAX_GAP_PERIODS periods.
    let mut dropped = 0.0;
    for k in i0.saturating_sub(1)..i1.min(s.t.len() - 1) {
        let (t0, t1) = (s.t[k], s.t[k + 1]);
        // (A hair over, so readings stamped exactly 3 periods apart are not a gap.)
        if t1 - t0 > MAX_GAP_PERIODS * s.period_s * (1.0 + 1e-6) {
            dropped += t1.min(m1) - t0.max(m0);
        }
    }
    if dropped > 0.0 {
        return Err(format!(
            "the meter dropped {} s of samples in this {} s window",
            short(dropped),
            short(seconds)
        ));
    }
    if *samples < MIN_SAMPLES {
        return Err(format!(
            "{} s: shorter than {MIN_SAMPLES} samples of this meter ({})",
            short(seconds),
            per_second(s.period_s)
        ));
    }
    let dur = m1 - m0;
    let energy_j = s.energy(m0, m1);
    let mean_w = energy_j / dur;
    let resolution_j = dur * s.resolution_w / 2.0;
    let sigma = s.noise_w(i0, i1);
    let noise_j = 2.0 * sigma * (*samples as f64).sqrt() * s.period_s;
    let near = (MAX_GAP_PERIODS * s.period_s).max(2.0 * a.error_s);
    let edge = |at: f64, into: f64| {
        // `into` is +1 for the begin edge (inside is later), -1 for the end edge.
        let k0 = s.first_at_or_after(at - s.period_s).saturating_sub(1);
        let k1 = s.first_at_or_after(at + s.period_s).min(s.t.len() - 1);
        let gap = (k0..k1)
            .map(|k| s.t[k + 1] - s.t[k])
            .fold(s.period_s, f64::max);
        // Past the smear of the step and the alignment's error, where there is room.
        let skip = gap + a.error_s;
        let (i0, i1) = if skip + near <= dur / 2.0 {
            (skip, skip + near)
        } else {
            (0.0, dur / 2.0)
        };
        let span = |x: f64, y: f64| {
            let (x, y) = (x.clamp(s.first(), s.last()), y.clamp(s.first(), s.last()));
            (y > x).then(|| s.mean(x, y))
        };
        let (lo, hi) = (at + into * i0, at + into * i1);
        let p_in = span(lo.min(hi), lo.max(hi)).unwrap_or(0.0);
        let (lo, hi) = (at - into * skip, at - into * (skip + near));
        let p_out = span(lo.min(hi), lo.max(hi)).unwrap_or(p_in);
        let interp = if gap <= 1.5 * s.period_s {
            gap / 4.0
        } else {
            gap / 2.0
        };
        (p_in - p_out).abs() * (a.error_s + interp)
    };
    let edges_j = edge(m0, 1.0) + edge(m1, -1.0);
    let uncertainty_j = resolution_j + noise_j + edges_j;
    let above_idle_j = idle.map(|i| energy_j - i.value * dur);
    let above_idle_uncertainty_j = idle.map(|i| uncertainty_j + i.plus_minus * dur);
    let gib = |b: u64| b as f64 / GIB;
    let (wr, rd) = (w.bytes_written, w.bytes_read);
    let fig = StepFigure {
        energy_j,
        mean_w,
        above_idle_w: above_idle_j.map(|j| j / dur),
        above_idle_j,
        j_per_gib_written: (wr > 0 && rd == 0).then(|| energy_j / gib(wr)),
        j_per_gib_read: (rd > 0 && wr == 0).then(|| energy_j / gib(rd)),
        j_per_gib: (w.bytes_moved() > 0).then(|| energy_j / gib(w.bytes_moved())),
        nj_per_bit: (w.bits > 0).then(|| energy_j * 1e9 / w.bits as f64),
        uncertainty_j,
        above_idle_uncertainty_j,
        parts: Uncertainty {
            resolution_j,
            noise_j,
            edges_j,
        },
    };
    if !(fig.energy_j.is_finite() && fig.uncertainty_j.is_finite()) {
        return Err("the energy is not a finite number".into());
    }
    Ok(fig)
}

/// Aligns `trace` with `results` and integrates every window (module docs).
///
/// # Errors
/// What [`align::align`] gives, except that a run whose patterns are not found in a
/// host-clock trace with console stamps falls back to the stamps (and says so).
pub fn energy_report(trace: &Trace, results: &RunResults) -> Result<EnergyReport, AlignError> {
    let s = Series::new(trace)?;
    let mut notes = Vec::new();
    let alignment = match align::align(trace, &results.energy) {
        Ok(a) => a,
        Err(e @ AlignError::SyncNotFound { .. }) if !trace.console.is_empty() => {
            let a = align::console(trace)?;
            notes.push(format!("{e}; aligned by the console stamps instead"));
            a
        }
        Err(e) => return Err(e),
    };
    match &alignment.method {
        AlignMethod::SameClock => notes.push("the trace is on the board's clock".into()),
        AlignMethod::Sync { found } if found.len() == 1 => notes.push(format!(
            "one sync pattern found (`{}`): the clock rate is taken as 1, and the error \
             allows {} ppm over the trace's length; a window far from the pattern is off \
             by up to its distance times the true skew",
            found[0].at,
            align::ASSUMED_SKEW * 1e6
        )),
        AlignMethod::Sync { found } => notes.push(format!(
            "aligned by {} sync patterns: offset {:.6} s, skew {:.1} ppm, ± {:.4} s",
            found.len(),
            alignment.offset_s,
            alignment.skew_ppm(),
            alignment.error_s
        )),
        AlignMethod::Console { lines } => notes.push(format!(
            "aligned by {lines} console lines' arrival times: ± {:.4} s",
            alignment.error_s
        )),
    }
    if trace.emulated {
        notes.push("the power is a model (the emulated meter), not a measurement".into());
    }
    let all = windows(results);
    let baseline = all
        .iter()
        .find(|w| w.kind == WindowKind::Idle && w.step == "idle radios-off")
        .map(|w| integrate_series(&s, &alignment, w, None));
    let idle_w = match baseline.as_ref().map(|b| &b.figure) {
        Some(Ok(f)) => {
            let dur = f.energy_j / f.mean_w;
            Some(Figure {
                value: f.mean_w,
                plus_minus: f.uncertainty_j / dur,
            })
        }
        Some(Err(why)) => {
            notes.push(format!(
                "the radios-off idle phase has no figure ({why}): no figures above idle"
            ));
            None
        }
        None => {
            notes.push("the run has no radios-off idle phase: no figures above idle".into());
            None
        }
    };
    let idle_w = idle_w.filter(|f| f.value.is_finite() && f.plus_minus.is_finite());
    let of = |k: &dyn Fn(WindowKind) -> bool| -> Vec<StepEnergy> {
        all.iter()
            .filter(|w| k(w.kind))
            .map(|w| integrate_series(&s, &alignment, w, idle_w.as_ref()))
            .collect()
    };
    let idle_phases = of(&|k| k == WindowKind::Idle);
    let steps = of(&|k| !matches!(k, WindowKind::Idle | WindowKind::Sync));
    let sync = &results.energy.sync;
    let run = if sync.len() >= 2 {
        let begin_ns = sync.iter().map(|m| m.begin_ns).min().unwrap_or(0);
        let end_ns = sync.iter().map(|m| m.end_ns).max().unwrap_or(0);
        let w = Window {
            step: "run".into(),
            kind: WindowKind::Sync,
            begin_ns,
            end_ns,
            bytes_written: 0,
            bytes_read: 0,
            bits: 0,
        };
        Some(integrate_series(&s, &alignment, &w, idle_w.as_ref()))
    } else {
        None
    };
    let counter_j = match trace.counter_j {
        Some((a, b)) if a.is_finite() && b.is_finite() && b >= a => Some(b - a),
        Some((a, b)) => {
            notes.push(format!(
                "the meter's counter read {a} J then {b} J: left out"
            ));
            None
        }
        None => None,
    };
    let trace_j = s.energy(s.first(), s.last());
    if counter_j.is_some() {
        notes.push(
            "the meter's counter covers the whole trace, first reading to last; trace_j is \
             the readings' integral over the same span"
                .into(),
        );
    }
    let power_on = crate::power_on::power_on(trace, &alignment, idle_w.as_ref().map(|f| f.value));
    Ok(EnergyReport {
        meter: trace.meter.clone(),
        emulated: trace.emulated,
        power_on,
        alignment,
        idle_w,
        idle_phases,
        steps,
        run,
        counter_j,
        trace_j,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{Lcg, Meter, Run};

    fn fig(e: &StepEnergy) -> &StepFigure {
        e.figure
            .as_ref()
            .unwrap_or_else(|why| panic!("{}: {why}", e.step))
    }

    /// Each step with a figure against the exact integral: (worst |error| / uncertainty,
    /// steps with a figure).
    fn check(run: &Run, rep: &EnergyReport) -> (f64, usize) {
        let mut worst: f64 = 0.0;
        let mut n = 0;
        for (st, e) in run.steps.iter().zip(&rep.steps) {
            assert_eq!(st.name, e.step);
            let Ok(f) = &e.figure else { continue };
            n += 1;
            let exact = run.energy(st.begin_s, st.end_s);
            let off = (f.energy_j - exact).abs();
            assert!(
                off <= f.uncertainty_j,
                "{}: {} J, exact {exact} J, ± {} J ({:?})",
                e.step,
                f.energy_j,
                f.uncertainty_j,
                f.parts
            );
            worst = worst.max(off / f.uncertainty_j);
            let Some(idle) = rep.idle_w else { continue };
            let above = f.above_idle_j.unwrap();
            let exact_above = exact - run.base_w * (st.end_s - st.begin_s);
            assert!(
                (above - exact_above).abs() <= f.above_idle_uncertainty_j.unwrap(),
                "{}: above idle {above} J, exact {exact_above} J (idle {idle:?})",
                e.step
            );
        }
        (worst, n)
    }

    #[test]
    fn every_step_at_100_hz_is_within_its_uncertainty_of_the_exact_integral() {
        let run = Run::standard();
        let results = run.results();
        let m = Meter::usb(11);
        let mut trace = m.trace(&run);
        trace.counter_j = Some((10.0, 10.0 + 400.0));
        let rep = energy_report(&trace, &results).unwrap();
        let (worst, n) = check(&run, &rep);
        assert_eq!(n, run.steps.len());
        let idle = rep.idle_w.unwrap();
        assert!(
            (idle.value - 2.0).abs() <= idle.plus_minus && idle.plus_minus < 0.01,
            "{idle:?}"
        );
        for (st, e) in run.steps.iter().zip(&rep.steps) {
            let f = fig(e);
            eprintln!(
                "{:32} {:8.3} J (exact {:8.3}) ± {:.3} J [res {:.3} noise {:.3} edges {:.3}], {:.3} W, {:.3} W above idle",
                e.step,
                f.energy_j,
                run.energy(st.begin_s, st.end_s),
                f.uncertainty_j,
                f.parts.resolution_j,
                f.parts.noise_j,
                f.parts.edges_j,
                f.mean_w,
                f.above_idle_w.unwrap()
            );
            assert!((f.mean_w - st.watts).abs() < 0.01, "{}", e.step);
            assert!(e.samples >= 290 && e.samples as f64 <= 100.0 * e.seconds + 1.0);
        }
        eprintln!("100 Hz: worst |error| / uncertainty {worst:.2}");
        let by = |s: &str| fig(rep.steps.iter().find(|e| e.step == s).unwrap());
        // Storage: 16 MiB written and 16 MiB read in 30 s at 3.1 W: 93 J per 1/32 GiB.
        let st = by("storage.ext4.sync.bs4096");
        assert!((st.j_per_gib.unwrap() - st.energy_j * 32.0).abs() < 1e-9);
        assert_eq!((st.j_per_gib_written, st.j_per_gib_read), (None, None));
        let rd = by("random.ext4.read.qd1");
        assert!((rd.j_per_gib_read.unwrap() - rd.energy_j / (4_096_000.0 / GIB)).abs() < 1e-6);
        let tcp = by("network.ncm.tcp.board-to-host");
        assert!((tcp.nj_per_bit.unwrap() - tcp.energy_j * 1e9 / 2e9).abs() < 1e-9);
        assert!(by("memory").nj_per_bit.is_none() && by("memory").j_per_gib.is_none());
        // The link-up idle phase costs 0.3 W over radios-off.
        let link = fig(&rep.idle_phases[1]);
        assert!((link.above_idle_w.unwrap() - 0.3).abs() < 0.01);
        // The run, first sync start to last sync end.
        let r = rep.run.as_ref().unwrap();
        let (b0, b1) = (run.sync[0].0, run.sync[1].0 + 6.5 + run.overrun_s);
        let exact = run.energy(b0, b1);
        assert!(
            (fig(r).energy_j - exact).abs() <= fig(r).uncertainty_j,
            "{exact}"
        );
        assert_eq!(rep.counter_j, Some(400.0));
        assert!((rep.trace_j - run.energy(1.0, run.end_s)).abs() < 0.5);
        assert!(
            rep.notes[0].starts_with("aligned by 2 sync patterns"),
            "{:?}",
            rep.notes
        );
    }

    #[test]
    fn a_1_hz_meter_gives_no_figure_for_a_3_s_step_and_says_why() {
        let run = Run::new(2.0, 0.0);
        let rep = energy_report(&Meter::plug(3).trace(&run), &run.results()).unwrap();
        let short = rep
            .steps
            .iter()
            .find(|e| e.step == "random.ext4.read.qd1")
            .unwrap();
        assert_eq!(
            short.figure,
            Err("3 s: shorter than 10 samples of this meter (1 sample/s)".into())
        );
        assert_eq!(short.samples, 3);
        let (worst, n) = check(&run, &rep);
        // Only the steps of 10 s or more have a figure.
        assert_eq!(
            n,
            run.steps
                .iter()
                .filter(|s| s.end_s - s.begin_s >= 10.0)
                .count()
        );
        assert_eq!(n, 4);
        let dev = rep
            .steps
            .iter()
            .find(|e| e.step == "device-read.mmcblk0")
            .unwrap();
        assert_eq!(
            dev.figure,
            Err("8 s: shorter than 10 samples of this meter (1 sample/s)".into())
        );
        eprintln!("1 Hz: worst |error| / uncertainty {worst:.2}");
        let storage = fig(&rep.steps[0]);
        assert!(
            storage.uncertainty_j < 0.05 * storage.energy_j,
            "{storage:?}"
        );
    }

    #[test]
    fn a_gap_in_the_trace_gives_no_figure_for_the_steps_it_falls_in() {
        let run = Run::standard();
        let st = &run.steps[0];
        let m = Meter {
            gap: Some((st.begin_s + 5.0, 5.0)),
            ..Meter::usb(7)
        };
        let rep = energy_report(&m.trace(&run), &run.results()).unwrap();
        let why = rep.steps[0].figure.as_ref().unwrap_err();
        assert!(
            why.starts_with("the meter dropped 5.0")
                && why.ends_with("s of samples in this 30 s window"),
            "{why}"
        );
        assert!(rep.steps[1..].iter().all(|e| e.figure.is_ok()));
    }

    #[test]
    fn a_wrong_alignment_gives_energies_outside_the_uncertainty() {
        let run = Run::standard();
        let results = run.results();
        let trace = Meter::usb(21).trace(&run);
        let good = align::align(&trace, &results.energy).unwrap();
        let ws: Vec<Window> = windows(&results)
            .into_iter()
            .filter(|w| w.kind != WindowKind::Idle && w.kind != WindowKind::Sync)
            .collect();
        let outside = |a: &Alignment| {
            run.steps
                .iter()
                .zip(&ws)
                .filter(|(st, w)| {
                    let f = integrate(&trace, a, w, None).figure.unwrap();
                    (f.energy_j - run.energy(st.begin_s, st.end_s)).abs() > f.uncertainty_j
                })
                .count()
        };
        assert_eq!(outside(&good), 0);
        let shifted = |by: f64| Alignment {
            offset_s: good.offset_s + by,
            ..good.clone()
        };
        // One second off: every step (each flanked by idle) is outside its uncertainty.
        assert_eq!(outside(&shifted(1.0)), ws.len());
        assert_eq!(outside(&shifted(-1.0)), ws.len());
        // Even 50 ms off (ten times error_s) shows on most steps.
        assert!(
            outside(&shifted(0.05)) >= ws.len() - 2,
            "{}",
            outside(&shifted(0.05))
        );
        // A rate off by 1000 ppm drifts 0.1 s over the run.
        let skewed = Alignment {
            rate: good.rate + 1e-3,
            offset_s: good.offset_s - 1e-3 * run.sync[0].0,
            ..good.clone()
        };
        assert!(outside(&skewed) >= 4, "{}", outside(&skewed));
    }

    #[test]
    fn over_many_seeds_every_figure_is_within_its_uncertainty() {
        let run = Run::standard();
        let results = run.results();
        let mut worst: f64 = 0.0;
        let (mut figures, mut gaps) = (0, 0);
        for seed in 0..200 {
            let mut rng = Lcg(seed * 13 + 1);
            let m = Meter {
                period_s: [0.1, 0.05, 0.2][seed as usize % 3],
                offset_s: -50.0 + 3000.0 * rng.next_f64(),
                rate: 1.0 + (rng.next_f64() - 0.5) * 200e-6,
                noise_w: 0.05 * rng.next_f64(),
                jitter_s: 0.002 * rng.next_f64(),
                resolution_w: [0.001, 0.01, 0.05][seed as usize % 3],
                drop: 0.02 * rng.next_f64(),
                ..Meter::usb(seed)
            };
            let rep = energy_report(&m.trace(&run), &results)
                .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            let (w, n) = check(&run, &rep);
            // A step lacks a figure only where the meter lost 3 readings in a row.
            let lost = rep
                .steps
                .iter()
                .filter(|e| {
                    e.figure
                        .as_ref()
                        .is_err_and(|w| w.starts_with("the meter dropped"))
                })
                .count();
            assert_eq!(n + lost, run.steps.len(), "seed {seed}");
            (figures, gaps) = (figures + n, gaps + lost);
            worst = worst.max(w);
        }
        eprintln!("200 seeds: {figures} figures, {gaps} lost to gaps; worst |error| / uncertainty {worst:.2}");
        assert!(figures > 1500);
    }

    #[test]
    fn hostile_windows_alignments_and_traces_give_no_figure_never_a_panic() {
        let run = Run::standard();
        let trace = Meter::usb(1).trace(&run);
        let a = align::align(&trace, &run.results().energy).unwrap();
        let w = |b: u64, e: u64| Window {
            step: "x".into(),
            kind: WindowKind::Memory,
            begin_ns: b,
            end_ns: e,
            bytes_written: u64::MAX,
            bytes_read: 0,
            bits: u64::MAX,
        };
        let why = |a: &Alignment, w: &Window| integrate(&trace, a, w, None).figure.unwrap_err();
        assert!(why(&a, &w(0, 1)).starts_with("outside the trace"));
        assert!(why(&a, &w(u64::MAX - 1, u64::MAX)).starts_with("outside the trace"));
        assert_eq!(
            why(&a, &w(50_000_000_000, 50_000_000_000)),
            "0 s: an empty window"
        );
        assert_eq!(
            why(&a, &w(50_000_000_000, 50_050_000_000)),
            "0.05 s: shorter than 10 samples of this meter (100 samples/s)"
        );
        let nan = Alignment {
            offset_s: f64::NAN,
            ..a.clone()
        };
        assert!(why(&nan, &w(50_000_000_000, 60_000_000_000)).contains("no finite"));
        let huge = integrate(&trace, &a, &w(40_000_000_000, 60_000_000_000), None);
        let f = huge.figure.unwrap();
        assert!(f.j_per_gib_written.unwrap() > 0.0 && f.nj_per_bit.unwrap() > 0.0);
        let mut bad = trace.clone();
        bad.samples.swap(3, 4);
        assert!(integrate(&bad, &a, &w(0, 1), None)
            .figure
            .unwrap_err()
            .contains("does not come after"));
        assert!(energy_report(&bad, &run.results()).is_err());
        // A counter that runs backwards is left out, with a note.
        let mut t = trace.clone();
        t.counter_j = Some((5.0, f64::NAN));
        let rep = energy_report(&t, &run.results()).unwrap();
        assert_eq!(rep.counter_j, None);
        assert!(rep.notes.iter().any(|n| n.contains("counter")));
    }
}
