//! A checked trace: times strictly increasing and finite, watts finite, and the
//! cumulative integral of power (trapezoids) so the energy between any two times costs
//! O(log n), or O(1) amortised through a [`Cursor`] walking forward.

use crate::error::AlignError;
use crate::{Trace, MAX_SAMPLES};

pub(crate) struct Series {
    pub t: Vec<f64>,
    pub w: Vec<f64>,
    /// `cum[i]`: J from `t[0]` to `t[i]`.
    pub cum: Vec<f64>,
    pub period_s: f64,
    pub resolution_w: f64,
}

impl Series {
    /// Checks `trace` and builds the cumulative integral.
    ///
    /// # Errors
    /// [`AlignError::Trace`] for fewer than 2 samples, more than [`MAX_SAMPLES`], a time
    /// or power that is not finite, times not strictly increasing, a period or
    /// resolution that is not a finite positive (resolution: non-negative) number.
    pub fn new(trace: &Trace) -> Result<Series, AlignError> {
        let bad = |why: String| Err(AlignError::Trace(why));
        let n = trace.samples.len();
        if n < 2 {
            return bad(format!("{n} samples: at least 2 are needed"));
        }
        if n > MAX_SAMPLES {
            return bad(format!(
                "{n} samples: more than a trace holds ({MAX_SAMPLES})"
            ));
        }
        if !(trace.period_s.is_finite() && trace.period_s > 0.0) {
            return bad(format!(
                "the meter's period is {} s: it must be a positive number",
                trace.period_s
            ));
        }
        if !(trace.resolution_w.is_finite() && trace.resolution_w >= 0.0) {
            return bad(format!(
                "the meter's resolution is {} W: it must be a number ≥ 0",
                trace.resolution_w
            ));
        }
        let mut t = Vec::with_capacity(n);
        let mut w = Vec::with_capacity(n);
        let mut cum = Vec::with_capacity(n);
        for (i, s) in trace.samples.iter().enumerate() {
            if !s.t_s.is_finite() || !s.watts.is_finite() {
                return bad(format!(
                    "sample {i}: time {} s, power {} W: not a number",
                    s.t_s, s.watts
                ));
            }
            if let Some(&prev) = t.last() {
                if s.t_s <= prev {
                    return bad(format!(
                        "sample {i} at {} s does not come after sample {} at {prev} s",
                        s.t_s,
                        i - 1
                    ));
                }
                let pw: f64 = *w.last().unwrap_or(&0.0);
                let c: f64 = *cum.last().unwrap_or(&0.0);
                cum.push(c + (s.t_s - prev) * (pw + s.watts) / 2.0);
            } else {
                cum.push(0.0);
            }
            t.push(s.t_s);
            w.push(s.watts);
        }
        if !cum.last().is_some_and(|c| c.is_finite()) {
            return bad(
                "the energy over the trace is not a finite number (power or times too large)"
                    .into(),
            );
        }
        Ok(Series {
            t,
            w,
            cum,
            period_s: trace.period_s,
            resolution_w: trace.resolution_w,
        })
    }

    pub fn first(&self) -> f64 {
        self.t[0]
    }

    pub fn last(&self) -> f64 {
        self.t[self.t.len() - 1]
    }

    /// Index of the segment `[t[i], t[i+1]]` holding `x` (clamped to the trace).
    fn segment(&self, x: f64) -> usize {
        let i = self.t.partition_point(|&t| t <= x);
        i.saturating_sub(1).min(self.t.len() - 2)
    }

    /// The energy in segment `i` from `t[i]` to `x`, J, and the power at `x`, W.
    fn partial(&self, i: usize, x: f64) -> (f64, f64) {
        let (t0, t1) = (self.t[i], self.t[i + 1]);
        let x = x.clamp(t0, t1);
        let f = (x - t0) / (t1 - t0);
        let px = self.w[i] + (self.w[i + 1] - self.w[i]) * f;
        ((x - t0) * (self.w[i] + px) / 2.0, px)
    }

    /// J from the first sample to `x` (clamped to the trace).
    pub fn cum_at(&self, x: f64) -> f64 {
        let i = self.segment(x);
        self.cum[i] + self.partial(i, x).0
    }

    /// J from `a` to `b` (both clamped to the trace).
    pub fn energy(&self, a: f64, b: f64) -> f64 {
        self.cum_at(b) - self.cum_at(a)
    }

    /// Mean power from `a` to `b`, W (`a < b`, inside the trace).
    pub fn mean(&self, a: f64, b: f64) -> f64 {
        self.energy(a, b) / (b - a)
    }

    /// Index of the first sample at or after `x`.
    pub fn first_at_or_after(&self, x: f64) -> usize {
        self.t.partition_point(|&t| t < x)
    }

    /// The readings' noise, W: a robust standard deviation from the median absolute
    /// difference of successive readings (steps of the load are rare among
    /// differences, so the median ignores them), never below the quantisation noise
    /// `resolution/√12`.
    pub fn noise_w(&self, from: usize, to: usize) -> f64 {
        let to = to.min(self.w.len());
        let floor = self.resolution_w / 12f64.sqrt();
        if to < from + 3 {
            return floor;
        }
        let mut d: Vec<f64> = self.w[from..to]
            .windows(2)
            .map(|p| (p[1] - p[0]).abs())
            .collect();
        let mid = d.len() / 2;
        let (_, m, _) = d.select_nth_unstable_by(mid, f64::total_cmp);
        (1.4826 * *m / 2f64.sqrt()).max(floor)
    }

    pub fn cursor(&self) -> Cursor<'_> {
        Cursor { s: self, i: 0 }
    }
}

/// Evaluates the cumulative integral at non-decreasing times in O(1) amortised.
pub(crate) struct Cursor<'a> {
    s: &'a Series,
    i: usize,
}

impl Cursor<'_> {
    pub fn cum_at(&mut self, x: f64) -> f64 {
        let n = self.s.t.len();
        while self.i + 2 < n && self.s.t[self.i + 1] <= x {
            self.i += 1;
        }
        self.s.cum[self.i] + self.s.partial(self.i, x).0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Clock, Sample};

    pub(crate) fn trace(samples: Vec<Sample>) -> Trace {
        Trace {
            meter: "t".into(),
            clock: Clock::Own,
            emulated: false,
            resolution_w: 0.01,
            period_s: 1.0,
            position: None,
            samples,
            counter_j: None,
            console: Vec::new(),
        }
    }

    #[test]
    fn trapezoids_and_interpolation_at_the_edges() {
        let s = Series::new(&trace(vec![
            Sample::watts(0.0, 1.0),
            Sample::watts(1.0, 3.0),
            Sample::watts(3.0, 3.0),
        ]))
        .unwrap();
        assert_eq!(s.cum, [0.0, 2.0, 8.0]);
        // 0.5 s: power 2 W; 0 → 0.5 s is (1 + 2) / 2 × 0.5 = 0.75 J.
        assert!((s.cum_at(0.5) - 0.75).abs() < 1e-12);
        assert!((s.energy(0.5, 2.0) - (2.0 - 0.75 + 3.0)).abs() < 1e-12);
        let mut c = s.cursor();
        for x in [0.0, 0.5, 1.0, 2.5, 3.0] {
            assert!((c.cum_at(x) - s.cum_at(x)).abs() < 1e-12, "{x}");
        }
    }

    #[test]
    fn hostile_traces_are_refused_not_panicked_on() {
        let ok = |v: Vec<Sample>| {
            Series::new(&trace(v))
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        assert!(ok(vec![Sample::watts(0.0, 1.0)])
            .unwrap_err()
            .contains("1 samples"));
        assert!(ok(vec![Sample::watts(0.0, 1.0), Sample::watts(0.0, 1.0)])
            .unwrap_err()
            .contains("does not come after"));
        assert!(ok(vec![Sample::watts(1.0, 1.0), Sample::watts(0.0, 1.0)]).is_err());
        assert!(
            ok(vec![Sample::watts(0.0, f64::NAN), Sample::watts(1.0, 1.0)])
                .unwrap_err()
                .contains("not a number")
        );
        assert!(ok(vec![
            Sample::watts(f64::INFINITY, 1.0),
            Sample::watts(1.0, 1.0)
        ])
        .is_err());
        assert!(
            ok(vec![Sample::watts(0.0, 1e308), Sample::watts(1e300, 1e308)])
                .unwrap_err()
                .contains("not a finite number")
        );
        let mut t = trace(vec![Sample::watts(0.0, 1.0), Sample::watts(1.0, 1.0)]);
        t.period_s = f64::NAN;
        assert!(Series::new(&t).is_err());
        t.period_s = 1.0;
        t.resolution_w = -1.0;
        assert!(Series::new(&t).is_err());
    }
}
