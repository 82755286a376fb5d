//! Health over time as a figure: the CPU clock and the SoC temperature of every health
//! snapshot against the board's time, the flags set (one line per condition, 1 while
//! flagged) when any was, and the power trace when the run has an aligned one, every
//! panel with the run's steps as bands ([`super::power::step_bands`]) on the same
//! time axis. No figure when no snapshot has a clock or temperature (QEMU): the text
//! says why ([`crate::render::health`]).

use benchboot_results::{Condition, RunResults};

use super::power::{points, step_bands};
use crate::chart::{emulated_prefix, file_stem, Chart, FigureSection, PlotFigure, Point};
use crate::chart::{Series, XAxis, YScale};
use crate::context::condition_label;
use crate::power::energy::Energy;
use crate::render::health::{has_values, snapshots, Snapshot};

fn panel(title: &str, y_desc: &str, series: Vec<Series>, r: &RunResults) -> Chart {
    Chart {
        title: title.into(),
        x_desc: "board time since boot, s".into(),
        y_desc: y_desc.into(),
        x_axis: XAxis::Linear,
        y_max: None,
        legend_right: true,
        series,
        bands: step_bands(r),
    }
}

fn line(label: &str, snaps: &[Snapshot<'_>], f: impl Fn(&Snapshot<'_>) -> Option<f64>) -> Series {
    Series {
        label: label.into(),
        points: snaps
            .iter()
            .filter_map(|s| Some(Point::single(s.at_s(), f(s)?)))
            .collect(),
    }
}

/// The figure `<run>-health` of `r`: CPU clock (MHz) and temperature (°C) panels, a
/// flags panel when any condition was flagged, a power panel (W) when `energy` is
/// aligned; `None` when no snapshot has a clock or a temperature.
pub fn health_figure(r: &RunResults, energy: Option<&Energy>) -> Option<PlotFigure> {
    let snaps = snapshots(r);
    if !has_values(&snaps) {
        return None;
    }
    let mut panels = Vec::new();
    let clock = line("CPU clock", &snaps, |s| s.clock_mhz());
    if !clock.points.is_empty() {
        panels.push(panel("CPU clock", "MHz", vec![clock], r));
    }
    let temp = line("SoC temperature", &snaps, |s| s.temp_c());
    if !temp.points.is_empty() {
        panels.push(panel("SoC temperature", "°C", vec![temp], r));
    }
    let flagged: Vec<Condition> = Condition::ALL
        .into_iter()
        .filter(|c| snaps.iter().any(|s| s.health.now().contains(c)))
        .collect();
    if !flagged.is_empty() {
        let series = flagged
            .iter()
            .map(|&c| {
                line(condition_label(c), &snaps, |s| {
                    Some(f64::from(u8::from(s.health.now().contains(&c))))
                })
            })
            .collect();
        let mut p = panel("flags set (1: flagged now)", "flagged", series, r);
        p.y_max = Some(1.6);
        panels.push(p);
    }
    if let Some(e) = energy {
        if let Ok(rep) = &e.report {
            let (offset_s, rate) = (rep.alignment.offset_s, rep.alignment.rate);
            let power = Series {
                label: "power".into(),
                points: points(&e.trace, |m| (m - offset_s) / rate),
            };
            panels.push(panel(
                &format!("power, W (meter {})", e.trace.meter),
                "W",
                vec![power],
                r,
            ));
        }
    }
    Some(PlotFigure {
        stem: format!("{}-health", file_stem(&r.run_id)),
        title: format!(
            "{}{}: health over the run ({} snapshots), the steps shaded",
            emulated_prefix(r.emulated),
            r.board,
            snaps.len()
        ),
        panels,
        columns: 1,
        section: FigureSection::Health,
        y_scale: YScale::Linear,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The throttled fixture: clock, temperature and flags panels, a point per
    /// snapshot, the steps as bands; QEMU's run: no figure.
    #[test]
    fn clock_temperature_and_flags_over_time() {
        let r = crate::results_file::load_path(std::path::Path::new(
            "tests/data/handmade-throttled.json",
        ))
        .unwrap();
        let f = health_figure(&r, None).unwrap();
        let titles: Vec<&str> = f.panels.iter().map(|p| p.title.as_str()).collect();
        assert_eq!(
            titles,
            ["CPU clock", "SoC temperature", "flags set (1: flagged now)"]
        );
        assert_eq!(f.panels[0].series[0].points.len(), 40);
        assert_eq!(f.panels[0].bands.len(), r.health.len());
        let svg = crate::plot::svg_string(&f, false).unwrap();
        assert!(
            svg.contains("SoC temperature") && svg.contains("throttling"),
            "svg"
        );
        let qemu = crate::results_file::load_path(std::path::Path::new(
            "tests/data/qemu-virt-arm64-1.13.json",
        ))
        .unwrap();
        assert!(health_figure(&qemu, None).is_none());
    }

    /// With an aligned power trace the figure gains a power panel on the same board
    /// time as the health snapshots and the steps: QEMU's run with its emulated meter,
    /// given a temperature per snapshot (QEMU has none) so there is a figure to draw.
    #[test]
    fn the_power_trace_shares_the_time_axis() {
        let path = std::path::Path::new("tests/data/qemu-virt-arm64-1.13.json");
        let mut r = crate::results_file::load_path(path).unwrap();
        for (i, h) in r.health.iter_mut().enumerate() {
            for s in [&mut h.before, &mut h.after] {
                s.temperature_millicelsius =
                    benchboot_results::Reading::ok(40_000 + i as i64 * 10, "test");
            }
        }
        let e = Energy::find(
            path,
            Some(std::path::Path::new(
                "tests/data/qemu-virt-arm64-1.13.power.json",
            )),
            &r,
        )
        .unwrap()
        .unwrap();
        assert!(e.report.is_ok(), "{:?}", e.report.as_ref().err());
        let f = health_figure(&r, Some(&e)).unwrap();
        assert!(f.title.starts_with("EMULATED"), "{}", f.title);
        let titles: Vec<&str> = f.panels.iter().map(|p| p.title.as_str()).collect();
        assert_eq!(titles[0], "SoC temperature");
        assert!(titles[1].starts_with("power, W (meter "), "{titles:?}");
        assert_eq!(f.panels[0].bands, f.panels[1].bands);
        // The trace's points lie over the steps: most of them between the first
        // snapshot and the last.
        let snaps = snapshots(&r);
        let (t0, t1) = (snaps[0].at_s(), snaps[snaps.len() - 1].at_s());
        let power = &f.panels[1].series[0].points;
        let inside = power.iter().filter(|p| p.x >= t0 && p.x <= t1).count();
        assert!(
            inside * 10 >= power.len() * 8,
            "{inside} of {}",
            power.len()
        );
    }
}
