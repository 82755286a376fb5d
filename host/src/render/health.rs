//! Health over time in text: a few rows of the run's health snapshots (board time, the
//! step, CPU clock, temperature, the flags set), as sbc-bench's "System health while
//! running" prints them, not the hundreds a run records. The HTML page plots them all
//! ([`crate::plot::health`]). Under QEMU there is no clock or temperature to show: the
//! section says so, with the document's own reasons.

use benchboot_results::{Health, Reading, RunResults};

use crate::context::condition_label;
use crate::doc::{Block, Grid};

/// The most rows the text shows.
pub const MAX_ROWS: usize = 10;

/// One health snapshot of a run: the step it was taken around and the snapshot.
#[derive(Debug, Clone, Copy)]
pub struct Snapshot<'a> {
    pub step: &'a str,
    pub health: &'a Health,
}

impl Snapshot<'_> {
    /// Board time, s (`CLOCK_BOOTTIME`).
    pub fn at_s(&self) -> f64 {
        self.health.at_ns as f64 / 1e9
    }

    /// CPU clock, MHz ([`Health::cpu_clock_hz`]).
    pub fn clock_mhz(&self) -> Option<f64> {
        self.health.cpu_clock_hz().map(|(hz, _)| hz as f64 / 1e6)
    }

    /// SoC temperature, °C.
    pub fn temp_c(&self) -> Option<f64> {
        self.health
            .temperature_millicelsius
            .value()
            .map(|&m| m as f64 / 1e3)
    }

    /// The conditions flagged now, named, comma-separated ("none" when the flags were
    /// read and clear, "—" when they could not be read).
    pub fn flags(&self) -> String {
        let now = self.health.now();
        if !now.is_empty() {
            now.iter()
                .map(|&c| condition_label(c))
                .collect::<Vec<_>>()
                .join(", ")
        } else if self.health.throttled.value().is_some()
            || self.health.under_voltage_alarm.value().is_some()
        {
            "none".into()
        } else {
            "—".into()
        }
    }
}

/// Every snapshot of `r` (each step's before and after), in board time order.
pub fn snapshots(r: &RunResults) -> Vec<Snapshot<'_>> {
    let mut out: Vec<Snapshot<'_>> = r
        .health
        .iter()
        .flat_map(|h| {
            [&h.before, &h.after].map(|health| Snapshot {
                step: &h.step,
                health,
            })
        })
        .collect();
    out.sort_by_key(|s| s.health.at_ns);
    out
}

/// True when some snapshot has a CPU clock or a temperature.
pub fn has_values(snaps: &[Snapshot<'_>]) -> bool {
    snaps
        .iter()
        .any(|s| s.clock_mhz().is_some() || s.temp_c().is_some())
}

/// Which snapshots the text shows, at most `max`, in order: every one whose flags
/// differ from the one before (the first included), then the last, the hottest and
/// the slowest clock, then evenly spaced ones.
pub fn pick(snaps: &[Snapshot<'_>], max: usize) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    let add = |i: usize, out: &mut Vec<usize>| {
        if out.len() < max && !out.contains(&i) {
            out.push(i);
        }
    };
    for i in 0..snaps.len() {
        if i == 0 || snaps[i].flags() != snaps[i - 1].flags() {
            add(i, &mut out);
        }
    }
    if let Some(last) = snaps.len().checked_sub(1) {
        add(last, &mut out);
    }
    let by = |f: &dyn Fn(&Snapshot<'_>) -> Option<f64>, most: bool| {
        (0..snaps.len())
            .filter_map(|i| f(&snaps[i]).map(|v| (i, if most { v } else { -v })))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|x| x.0)
    };
    for i in [by(&|s| s.temp_c(), true), by(&|s| s.clock_mhz(), false)]
        .into_iter()
        .flatten()
    {
        add(i, &mut out);
    }
    let n = snaps.len();
    let free = max.saturating_sub(out.len());
    for k in 0..free {
        add(k * n / free.max(1), &mut out);
    }
    out.sort_unstable();
    out
}

fn reason<T>(r: &Reading<T>) -> Option<&str> {
    match r {
        Reading::Unavailable { reason } => Some(reason),
        Reading::Ok { .. } => None,
    }
}

/// The "Health over time" section: a line of the range (snapshots, span, clock and
/// temperature from lowest to highest) and a table of [`pick`]ed rows; under QEMU, or
/// whenever no snapshot has a clock or temperature, one line saying so with the
/// document's reasons. Nothing for a run without health records.
pub fn health_blocks(r: &RunResults) -> Vec<Block> {
    let snaps = snapshots(r);
    if snaps.is_empty() {
        return Vec::new();
    }
    let mut out = vec![Block::Heading("Health over time".into())];
    if !has_values(&snaps) {
        let h = snaps[0].health;
        let clock = reason(&h.cpufreq_khz).or(reason(&h.arm_measured_hz));
        let temp = reason(&h.temperature_millicelsius);
        let qemu = if r.emulated {
            "EMULATED (QEMU): no CPU clock or temperature to show"
        } else {
            "no CPU clock or temperature to show"
        };
        out.push(Block::Text(format!(
            "{qemu} over {} snapshot(s): clock: {}; temperature: {}",
            snaps.len(),
            clock.unwrap_or("not recorded"),
            temp.unwrap_or("not recorded")
        )));
        return out;
    }
    let range = |f: &dyn Fn(&Snapshot<'_>) -> Option<f64>, unit: &str, digits: usize| {
        let v: Vec<f64> = snaps.iter().filter_map(f).collect();
        let lo = v.iter().copied().reduce(f64::min);
        let hi = v.iter().copied().reduce(f64::max);
        match (lo, hi) {
            (Some(lo), Some(hi)) => format!("{lo:.digits$}–{hi:.digits$} {unit}"),
            _ => "not recorded".into(),
        }
    };
    let span = snaps[snaps.len() - 1].at_s() - snaps[0].at_s();
    let rows = pick(&snaps, MAX_ROWS);
    out.push(Block::Text(format!(
        "{} snapshot(s) over {span:.0} s: CPU clock {}, temperature {}; {} shown (the \
         first, every change of flags, the last, the hottest, the slowest, and evenly \
         between)",
        snaps.len(),
        range(&|s| s.clock_mhz(), "MHz", 0),
        range(&|s| s.temp_c(), "°C", 1),
        rows.len()
    )));
    let mut g = Grid::new(
        ["time s", "step", "CPU MHz", "temp °C", "flags now"]
            .map(String::from)
            .to_vec(),
    );
    g.left_columns = 2;
    for i in rows {
        let s = &snaps[i];
        g.push(vec![
            format!("{:.1}", s.at_s()),
            s.step.to_owned(),
            s.clock_mhz().map_or("—".into(), |v| format!("{v:.0}")),
            s.temp_c().map_or("—".into(), |v| format!("{v:.1}")),
            s.flags(),
        ]);
    }
    out.push(Block::Grid(g));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn load(name: &str) -> RunResults {
        crate::results_file::load_path(&Path::new("tests/data").join(name)).unwrap()
    }

    /// The throttled fixture: 40 snapshots, a few rows, the throttled ones among them
    /// with their flags, the clock range from the document.
    #[test]
    fn a_few_rows_of_the_snapshots() {
        let r = load("handmade-throttled.json");
        let snaps = snapshots(&r);
        assert_eq!(snaps.len(), 40);
        let text = crate::doc::Doc {
            blocks: health_blocks(&r),
        }
        .text();
        assert!(text.trim_start().starts_with("Health over time\n40 snapshot(s) over 119 s: CPU clock 700–1000 MHz, temperature 45.0–65.0 °C; 9 shown"), "{text}");
        let Some(Block::Grid(g)) = health_blocks(&r).pop() else {
            panic!("no table")
        };
        assert!(g.rows.len() <= MAX_ROWS && g.rows.len() >= 5, "{text}");
        // Every change of flags is a row of its own.
        let changes = (1..snaps.len())
            .filter(|&i| snaps[i].flags() != snaps[i - 1].flags())
            .count();
        assert!(changes > 0, "the fixture is throttled");
        let flagged: Vec<[&str; 4]> = g
            .rows
            .iter()
            .filter(|row| row[4] != "none")
            .map(|row| [&*row[0], &*row[2], &*row[3], &*row[4]])
            .collect();
        assert_eq!(
            flagged,
            [
                ["14.0", "700", "47.0", "under-voltage, throttling"],
                ["110.0", "700", "63.0", "ARM frequency capping"]
            ],
            "{text}"
        );
        let times: Vec<f64> = g.rows.iter().map(|r| r[0].parse().unwrap()).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    }

    /// QEMU's run: no figure of clock or temperature, the document's reasons instead.
    #[test]
    fn under_qemu_the_reasons_not_an_empty_table() {
        let r = load("qemu-virt-arm64-1.13.json");
        let blocks = health_blocks(&r);
        assert_eq!(blocks.len(), 2);
        let Block::Text(t) = &blocks[1] else {
            panic!("{blocks:?}")
        };
        assert!(
            t.starts_with("EMULATED (QEMU): no CPU clock or temperature to show over 500 snapshot(s): clock: /sys/devices/system/cpu/cpu0/cpufreq absent"),
            "{t}"
        );
        assert!(
            t.contains("temperature: /sys/class/thermal: no thermal zone"),
            "{t}"
        );
    }
}
