//! Power-on from a trace: the first stage of the boot, which only a meter running before
//! the board was powered can show. The board's power-on is the first reading above
//! [`threshold_w`] after readings below it, placed on the board's clock through the
//! trace's alignment: a negative board time, seconds before the kernel's clock started.

use crate::align::Alignment;
use crate::Trace;

/// Readings below the threshold a trace must start with, so the board was off.
pub const OFF_READINGS: usize = 3;

/// What counts as the board drawing power, W: 50 mW (a board's leakage through its
/// power LED and regulators is above it), five meter steps, or a fifth of the idle
/// power, whichever is largest.
pub fn threshold_w(trace: &Trace, idle_w: Option<f64>) -> f64 {
    [0.05, 5.0 * trace.resolution_w, 0.2 * idle_w.unwrap_or(0.0)]
        .into_iter()
        .filter(|w| w.is_finite())
        .fold(0.0, f64::max)
}

/// When the board was powered: `(board s, ± s)` on the board's `CLOCK_BOOTTIME` (negative:
/// before the kernel's clock started), from the first reading above [`threshold_w`],
/// taken halfway between it and the reading before; ± half that gap plus the
/// alignment's error.
///
/// # Errors
/// Why there is no figure: the trace starts with the board already drawing power, or
/// never rises.
pub fn power_on(trace: &Trace, a: &Alignment, idle_w: Option<f64>) -> Result<(f64, f64), String> {
    let th = threshold_w(trace, idle_w);
    let s = &trace.samples;
    let Some(i) = s.iter().position(|x| x.watts > th) else {
        return Err(format!("the trace never rises above {th:.3} W"));
    };
    if i < OFF_READINGS {
        return Err(format!(
            "the trace starts with the board already drawing {:.3} W: start the meter \
             before powering the board",
            s[i].watts
        ));
    }
    let (before, on) = (s[i - 1].t_s, s[i].t_s);
    let meter_s = (before + on) / 2.0;
    let board_s = (meter_s - a.offset_s) / a.rate;
    let plus_minus = (on - before) / 2.0 + a.error_s;
    if board_s.is_finite() && plus_minus.is_finite() {
        Ok((board_s, plus_minus))
    } else {
        Err("the alignment gives no finite time".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::align::AlignMethod;
    use crate::{Clock, Sample};

    fn trace(watts: &[f64]) -> Trace {
        Trace {
            meter: "m".into(),
            clock: Clock::Own,
            emulated: false,
            resolution_w: 0.001,
            period_s: 0.1,
            position: None,
            samples: watts
                .iter()
                .enumerate()
                .map(|(i, w)| Sample::watts(100.0 + i as f64 * 0.1, *w))
                .collect(),
            counter_j: None,
            console: Vec::new(),
        }
    }

    fn aligned(offset_s: f64) -> Alignment {
        Alignment {
            offset_s,
            rate: 1.0,
            error_s: 0.01,
            method: AlignMethod::Console { lines: 1 },
        }
    }

    /// Off for 0.5 s, then 1.2 W: on between readings 5 and 6 (meter 100.45 s), which
    /// the alignment puts 4.55 s before the board's clock started.
    #[test]
    fn the_first_rise_is_power_on_on_the_board_clock() {
        let t = trace(&[0.0, 0.01, 0.0, 0.02, 0.0, 1.2, 1.5, 2.0]);
        let (at, pm) = power_on(&t, &aligned(105.0), Some(2.0)).unwrap();
        assert!((at - -4.55).abs() < 1e-9, "{at}");
        assert!((pm - 0.06).abs() < 1e-9, "{pm}");
        // The threshold: a fifth of 2 W idle, above 50 mW and five steps.
        assert_eq!(threshold_w(&t, Some(2.0)), 0.4);
        assert_eq!(threshold_w(&t, None), 0.05);
    }

    #[test]
    fn a_trace_started_on_a_powered_board_says_so() {
        let e = power_on(&trace(&[0.0, 1.5, 1.5, 1.5]), &aligned(0.0), None).unwrap_err();
        assert!(e.contains("already drawing 1.500 W"), "{e}");
        let e = power_on(&trace(&[0.0; 8]), &aligned(0.0), None).unwrap_err();
        assert!(e.contains("never rises"), "{e}");
        let nan = Alignment {
            rate: f64::NAN,
            ..aligned(0.0)
        };
        let e = power_on(&trace(&[0.0, 0.0, 0.0, 0.0, 2.0]), &nan, None).unwrap_err();
        assert!(e.contains("no finite"), "{e}");
    }
}
