//! The clock checks: the CPU clock measured by a calibrated loop before and after the
//! memory step and before the storage and network steps, beside cpufreq's and the
//! firmware's figure, with a CLOCK MISMATCH line for each claim more than 9 % away
//! ([`ClockCheck::mismatches`]). Under QEMU the loop measures TCG, not a clock: no
//! mismatch is judged (as PID 1 judges none).

use benchboot_results::memory::{ClockCheck, CLOCK_TOLERANCE};
use benchboot_results::RunResults;

use super::memory::emulated_mark;
use crate::doc::{Block, Grid};

/// What a mismatch line starts with.
pub const CLOCK_MISMATCH: &str = "CLOCK MISMATCH";

/// MHz (10^6 Hz) with no decimals, `—` when unknown.
fn mhz(hz: Option<f64>) -> String {
    hz.map_or("—".into(), |h| format!("{:.0}", h / 1e6))
}

/// What an emulated run's measured clock cell says: TCG has no clock of its own.
pub const EMULATED_CLOCK: &str = "EMULATED: no clock";

/// One row per check: when, CPU, measured MHz, cpufreq MHz, firmware MHz; the measured
/// cell of an emulated run (`emulated`) is [`EMULATED_CLOCK`], no number.
pub fn clock_grid(checks: &[ClockCheck], emulated: bool) -> Grid {
    let mut g = Grid::new(vec![
        "at".into(),
        "CPU".into(),
        "measured MHz".into(),
        "cpufreq MHz".into(),
        "firmware MHz".into(),
    ]);
    g.left_columns = 2;
    for c in checks {
        g.push(vec![
            c.at.clone(),
            c.cpu.to_string(),
            if emulated {
                EMULATED_CLOCK.into()
            } else {
                mhz(Some(c.measured_hz as f64))
            },
            mhz(c.cpufreq_khz.map(|k| k as f64 * 1e3)),
            mhz(c.firmware_hz.map(|h| h as f64)),
        ]);
    }
    g
}

/// `CLOCK MISMATCH after-memory: cpufreq says 1000 MHz, measured 700 MHz (-30 %)`, one
/// per claim out of tolerance in every check.
pub fn mismatch_lines(checks: &[ClockCheck]) -> Vec<String> {
    checks
        .iter()
        .flat_map(ClockCheck::mismatches)
        .map(|m| format!("{CLOCK_MISMATCH} {m}"))
        .collect()
}

/// The clock section; empty when the run has no clock checks.
pub fn clock_blocks(r: &RunResults) -> Vec<Block> {
    if r.clock_checks.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        Block::Heading(format!(
            "CPU clock: calibrated loop vs cpufreq vs firmware{}",
            emulated_mark(r.emulated)
        )),
        Block::Text(format!(
            "measured = (extra adds) ÷ (extra time) of a long and a short dependent-add loop \
             (wtarreau/mhz's method); a claim more than {:.0} % away is a mismatch \
             (sbc-bench's threshold)",
            CLOCK_TOLERANCE * 100.0
        )),
        Block::Grid(clock_grid(&r.clock_checks, r.emulated)),
    ];
    if r.emulated {
        out.push(Block::Text(
            "EMULATED: the loop ran under QEMU's TCG, which has no clock of its own: no \
             clock is shown and no mismatch is judged"
                .into(),
        ));
    } else {
        let lines = mismatch_lines(&r.clock_checks);
        if !lines.is_empty() {
            out.push(Block::List(lines));
            out.push(Block::Text(
                "the figures were taken at the measured clock, not the one claimed".into(),
            ));
        }
    }
    out
}
