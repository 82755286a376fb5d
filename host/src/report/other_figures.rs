//! The figures of a run that no section of the report's own shows: a plan command's,
//! the card check's, any metric added to the results crate's model. The CSV writes each
//! as a `figure` row and the JSON lists them in `figures`, both from
//! [`benchboot_results::figures::figures`] alone, so a new figure reaches every output
//! with no code of theirs (as hyperfine's exporters write whatever metrics exist).

use benchboot_results::figures::{figures, Figure, Metric};
use benchboot_results::RunResults;
use serde::{Deserialize, Serialize};

/// Whether the report's own sections (the tables, the CSV's sections, the JSON's cells)
/// show figures of `m`. A metric not named here, a new one too, is written as a figure.
pub fn in_own_section(m: Metric) -> bool {
    matches!(
        m,
        Metric::Storage
            | Metric::DeviceRead
            | Metric::Random
            | Metric::Verify
            | Metric::Clock
            | Metric::MemoryBandwidth
            | Metric::MemoryLatency
            | Metric::Tcp
            | Metric::TcpBoardCpuSystem
            | Metric::TcpBoardCpuSoftirq
            | Metric::TcpRetransmits
            | Metric::TcpSrtt
            | Metric::RoundTrip
            | Metric::Http
            | Metric::Udp
            | Metric::UdpLoss
            | Metric::WifiFrequency
            | Metric::WifiWidth
            | Metric::WifiCentre
            | Metric::WifiSignal
    )
}

/// The figures of `all` no section of the report's own shows, in the model's order.
pub fn others(all: Vec<Figure>) -> Vec<Figure> {
    all.into_iter()
        .filter(|f| !in_own_section(f.metric))
        .collect()
}

/// The figures of `r` no section of the report's own shows; of an emulated run, none
/// the emulator cannot give ([`Metric::emulator_gives`], as the console leaves them out).
pub fn of_run(r: &RunResults) -> Vec<Figure> {
    let mut v = others(figures(r));
    v.retain(|f| !r.emulated || f.metric.emulator_gives());
    v
}

/// One figure as the JSON writes it: what it measures, its case id, value and units,
/// and where it was measured (empty and absent fields: does not apply).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureCell {
    /// [`Metric::name`]: `card-check`, `command`, ...
    pub metric: String,
    /// The dotted case id, as the console prints it (`command.sysbench.events`).
    pub id: String,
    pub value: f64,
    pub units: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub target: String,
    /// The mode asked, a command's case, a memory kernel, a page kind.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mode: String,
    /// The mode that ran, where it differs from the one asked.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mode_ran: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub direction: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_size_bytes: Option<u64>,
    /// Queue depth or streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repetition: Option<u32>,
}

impl FigureCell {
    pub fn of(f: &Figure) -> FigureCell {
        let c = &f.context;
        FigureCell {
            metric: f.metric.name().into(),
            id: f.id.clone(),
            value: f.value,
            units: f.units.clone(),
            target: c.target.clone(),
            mode: c.mode.clone(),
            mode_ran: if c.mode_ran == c.mode {
                String::new()
            } else {
                c.mode_ran.clone()
            },
            direction: c.direction.clone(),
            block_size_bytes: (c.block_size > 0).then_some(c.block_size),
            param: (c.param > 0).then_some(c.param),
            repetition: c.repetition,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchboot_results::figures::Context;
    use benchboot_results::CommandMeasurement;
    use std::path::{Path, PathBuf};

    use crate::compare::compare;
    use crate::figure::Section;
    use crate::report::{summary::summary, tidy};

    fn every_figure() -> RunResults {
        crate::results_file::load_path(Path::new("../crates/results/tests/data/every-figure.json"))
            .unwrap()
    }

    /// A figure as (id, value, units).
    type Written = (String, f64, String);

    /// The CSV's `figure` rows and the JSON's `figures`.
    fn outputs(r: &RunResults) -> (Vec<Written>, Vec<Written>) {
        let csv = tidy::rows(r)
            .into_iter()
            .filter(|x| x.section == "figure")
            .map(|x| (x.figure, x.value.unwrap(), x.units))
            .collect();
        let json = summary(r)
            .figures
            .into_iter()
            .map(|f| (f.id, f.value, f.units))
            .collect();
        (csv, json)
    }

    /// Every figure of the model reaches the CSV and the JSON: the ones no section
    /// shows (the card check's real size, the command's) as figures, with the model's
    /// id, value and units, in the CSV through its text too.
    #[test]
    fn every_figure_no_section_shows_is_written_as_a_figure() {
        let r = every_figure();
        let want: Vec<Written> = figures(&r)
            .into_iter()
            .filter(|f| !in_own_section(f.metric))
            .map(|f| (f.id, f.value, f.units))
            .collect();
        // Latency p99 per storage pass and random run (96 and 8 in the fixture: the
        // latency tables show percentiles, not these figures), the card's real size and
        // the command's two.
        let ids: Vec<&str> = want.iter().map(|w| w.0.as_str()).collect();
        let count = |end: &str, start: &str| {
            ids.iter()
                .filter(|i| i.starts_with(start) && i.ends_with(end))
                .count()
        };
        assert_eq!(
            (count(".p99", "storage."), count(".p99", "random.")),
            (96, 8)
        );
        assert_eq!(
            ids[104..],
            [
                "card.check",
                "command.coremark.score",
                "command.coremark.threads"
            ]
        );
        assert_eq!(ids.len(), 107);
        let (csv, json) = outputs(&r);
        assert_eq!((&csv, &json), (&want, &want));
        let text = tidy::to_csv(&tidy::rows(&r)).unwrap();
        let back = tidy::from_csv(&text).unwrap();
        let row = back
            .iter()
            .find(|x| x.figure == "command.coremark.score")
            .unwrap();
        assert_eq!(
            (
                row.metric.as_str(),
                row.target.as_str(),
                row.requested_mode.as_str()
            ),
            ("command", "coremark", "score")
        );
    }

    /// A figure the exporters know nothing of (a new command measurement, in units no
    /// code names) reaches the CSV, the JSON and compare with no change to them.
    #[test]
    fn a_new_figure_reaches_csv_json_and_compare_untouched() {
        let mut a = every_figure();
        a.commands[0].measurements.push(CommandMeasurement {
            case: "frobs".into(),
            value: 42.0,
            units: "frobs/s".into(),
        });
        let want = (
            "command.coremark.frobs".to_owned(),
            42.0,
            "frobs/s".to_owned(),
        );
        let (csv, json) = outputs(&a);
        assert!(csv.contains(&want), "{csv:?}");
        assert!(json.contains(&want), "{json:?}");
        let mut b = a.clone();
        b.run_id = "every-figure-b".into();
        b.commands[0].measurements.last_mut().unwrap().value = 21.0;
        let c = compare(
            &[(PathBuf::from("a.json"), a), (PathBuf::from("b.json"), b)],
            &[],
        )
        .unwrap();
        let row = c
            .rows
            .iter()
            .find(|r| r.key.section == Section::Figure && r.key.mode == "frobs")
            .expect("a compare row for the new figure");
        assert_eq!(
            (row.key.metric.as_str(), row.unit.as_str()),
            ("command", "frobs/s")
        );
        let medians: Vec<Option<f64>> = row.cells.iter().map(|s| s.as_ref()?.median).collect();
        assert_eq!(medians, [Some(42.0), Some(21.0)]);
        assert_eq!(row.against[1].as_ref().and_then(|x| x.ratio), Some(2.0));
    }

    /// Every figure the model says compare compares has a row in a comparison of two
    /// runs (memory's per-sample rows aside).
    #[test]
    fn compare_has_a_row_for_every_compared_figure() {
        let a = every_figure();
        let mut b = a.clone();
        b.run_id = "every-figure-b".into();
        let all = figures(&a);
        let c = compare(
            &[(PathBuf::from("a.json"), a), (PathBuf::from("b.json"), b)],
            &[],
        )
        .unwrap();
        for f in all.iter().filter(|f| f.metric.compared()) {
            if matches!(f.metric, Metric::MemoryBandwidth | Metric::MemoryLatency) {
                continue;
            }
            let k = crate::figure::Key::of(f).unwrap_or_else(|| panic!("no key: {}", f.id));
            assert!(c.rows.iter().any(|r| r.key == k), "no row for {}", f.id);
        }
        assert!(all.iter().any(|f| f.metric == Metric::Command));
    }

    /// The p99 latency per call of each storage pass and random-I/O run (schema 1.14)
    /// is a figure of the model: the CSV and the JSON write it with no code of theirs,
    /// in µs, beside nothing else of the run's figures.
    #[test]
    fn p99_latency_reaches_csv_and_json_as_figures() {
        let r = crate::render::latency::tests::latency_run();
        // Each p99 falls in the bucket of the run's slowest calls: held at them.
        let want: Vec<Written> = [
            ("storage.ext4.direct.bs4096.r0.write.p99", 50_000.0),
            ("storage.ext4.direct.bs4096.r1.write.p99", 50_000.0),
            ("storage.ext4.direct.bs65536.r0.write.p99", 8_000.0),
            ("random.ext4.read.qd1.p99", 400.0),
        ]
        .map(|(id, v)| (id.to_owned(), v, "us".to_owned()))
        .into();
        let (csv, json) = outputs(&r);
        assert_eq!((&csv, &json), (&want, &want));
    }

    #[test]
    fn a_cell_leaves_out_what_does_not_apply() {
        let f = Figure {
            metric: Metric::CardSpeed,
            id: "card.full.write".into(),
            value: 12.5,
            units: "MiB/s".into(),
            context: Context {
                target: "/dev/sdb".into(),
                direction: "write".into(),
                ..Context::default()
            },
        };
        let j = serde_json::to_value(FigureCell::of(&f)).unwrap();
        assert_eq!(
            j,
            serde_json::json!({"metric": "card-speed", "id": "card.full.write", "value": 12.5,
                "units": "MiB/s", "target": "/dev/sdb", "direction": "write"})
        );
    }
}
