//! Memory in a comparison: a run's figures (every bandwidth test, every latency row, as
//! tinymembench reports them: the best sample, the fastest repeat over L1) and the
//! memory reference's rows for the runs' boards, one entry each.

use std::collections::BTreeMap;

use anyhow::Result;
use benchboot_results::memory::Cores;
use benchboot_results::RunResults;

use crate::figure::{Key, Stat};
use crate::reference::memory::{rows_for, MemoryRow};
use crate::render::memory::{cores_label, pages_id, repeat_extra_ns};

/// The caveat of a reference figure set beside an emulated first run.
pub const EMULATED_CAVEAT: &str =
    "EMULATED: the first run's figures are QEMU's TCG, not the board's memory";

/// Every memory figure of `r`: bandwidth per kernel and core set (all samples, the best
/// as central figure), latency per page kind, chain and block size (each repeat's ns
/// over L1, the fastest as central figure); an emulated run has no latency over L1
/// (QEMU's TCG models no caches), so none is compared.
pub fn run_figures(r: &RunResults) -> Vec<(Key, Stat)> {
    let mut out = Vec::new();
    let Some(m) = &r.memory else {
        return out;
    };
    for t in &m.bandwidth {
        let speeds: Vec<f64> = t.samples.iter().map(|s| s.mb_per_s()).collect();
        if let Some((best, _)) = t.best_and_spread() {
            let key = Key::memory_bandwidth(&t.kernel, &t.label, &cores_label(t.cores));
            out.extend(Stat::best_of(&speeds, best).map(|s| (key, s)));
        }
    }
    for t in m.latency.iter().filter(|_| !r.emulated) {
        for row in &t.rows {
            let Some((single, dual)) = t.extra_ns(row) else {
                continue;
            };
            let (singles, duals) = repeat_extra_ns(t, row);
            for (chain, values, best) in [("single", singles, single), ("dual", duals, dual)] {
                let key = Key::memory_latency(pages_id(t.pages), chain, row.block_bytes);
                out.extend(Stat::best_of(&values, best).map(|s| (key, s)));
            }
        }
    }
    out
}

/// The label of the core set a run's first CPU ran every kernel on (`CPU 0`): what a
/// reference's bandwidth figure (target empty) is set beside.
pub fn first_cpu_label(r: &RunResults) -> Option<String> {
    r.memory
        .as_ref()?
        .bandwidth
        .iter()
        .find_map(|t| match t.cores {
            Cores::One(_) => Some(cores_label(t.cores)),
            Cores::All(_) => None,
        })
}

/// One memory reference row as a comparison entry: its name (`<reference>/<id>`), the
/// row, its figures and each figure's other method.
pub struct RowEntry {
    pub name: String,
    pub row: MemoryRow,
    pub figures: BTreeMap<Key, Stat>,
    pub other_methods: BTreeMap<Key, String>,
}

/// The rows of the memory reference `reference` (its CSV `csv`) for the boards of `runs`.
///
/// # Errors
/// No row for any of the runs' boards (the message lists the boards with rows).
pub fn row_entries(reference: &str, csv: &str, runs: &[&RunResults]) -> Result<Vec<RowEntry>> {
    let mut boards: Vec<&str> = Vec::new();
    for r in runs {
        if !boards.contains(&r.board.as_str()) {
            boards.push(&r.board);
        }
    }
    Ok(rows_for(csv, &boards)?
        .into_iter()
        .map(|(n, row)| {
            let mut figures = BTreeMap::new();
            let mut other_methods = BTreeMap::new();
            for (k, s, other) in row.figures() {
                if let Some(o) = other {
                    other_methods.insert(k.clone(), format!("other method: {o}, not tinymembench"));
                }
                figures.insert(k, s);
            }
            RowEntry {
                name: format!("{reference}/{}", row.id(n)),
                row,
                figures,
                other_methods,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::compare::{compare, output, Comparison, Row};
    use crate::figure::Section;
    use crate::reference;
    use crate::render::memory::tests::memory_run;

    fn against_reference(r: RunResults) -> Comparison {
        let refs = [reference::find("sbc-bench-memory").unwrap()];
        compare(&[(PathBuf::from("mem.json"), r)], &refs).unwrap()
    }

    fn row<'a>(c: &'a Comparison, k: &Key) -> &'a Row {
        c.rows
            .iter()
            .find(|r| &r.key == k)
            .unwrap_or_else(|| panic!("no row {k:?}"))
    }

    /// The hand-built Pi Zero W run (memcpy best 400 MB/s, memset 1600, 64 MiB at 284 ns
    /// over L1) beside sbc-bench's two Pi Zero rows (426 / 1672 / 284 on 5.10, 400 /
    /// 1590 on 4.14 without latency).
    #[test]
    fn a_pi_zero_run_meets_each_published_pi_zero_row() {
        let c = against_reference(memory_run());
        let names: Vec<&str> = c.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            ["run-mem", "sbc-bench-memory/3Njz", "sbc-bench-memory/1niO"]
        );
        assert!(c.entries[1]
            .description
            .starts_with("BCM2835 at 1000 MHz, kernel 5.10, armhf userland; tinymembench"));
        assert!(c.entries[2].description.contains("results/1niO.txt"));
        let memcpy = row(
            &c,
            &Key::memory_bandwidth("libc-memcpy", "standard memcpy", "CPU 0"),
        );
        let a = memcpy.cells[0].as_ref().unwrap();
        assert_eq!((a.median, a.n, a.min), (Some(400.0), 3, 320.0));
        assert_eq!(memcpy.cells[1].as_ref().unwrap().median, Some(426.0));
        assert_eq!(memcpy.cells[2].as_ref().unwrap().median, Some(400.0));
        let ratio = memcpy.against[1].as_ref().unwrap().ratio.unwrap();
        assert!((ratio - 400.0 / 426.0).abs() < 1e-12, "{ratio}");
        assert_eq!(memcpy.against[1].as_ref().unwrap().caveat, None);
        let memset = row(
            &c,
            &Key::memory_bandwidth("libc-memset", "standard memset", "CPU 0"),
        );
        assert!(
            (memset.against[2].as_ref().unwrap().ratio.unwrap() - 1600.0 / 1590.0).abs() < 1e-12
        );
        let deep = row(&c, &Key::memory_latency("base", "single", 64 << 20));
        assert_eq!(deep.against[1].as_ref().unwrap().ratio, Some(1.0));
        assert!(deep.cells[2].is_none(), "the 4.14 row has no latency");
        // The VFP copy and the huge pages have no reference figure.
        let huge = row(&c, &Key::memory_latency("huge", "single", 64 << 20));
        assert!(huge.cells[1].is_none() && huge.cells[2].is_none());
        // Published 1 MiB figure, not measured by this run: a row of its own.
        let mib = row(&c, &Key::memory_latency("base", "single", 1 << 20));
        assert!(mib.cells[0].is_none() && mib.cells[1].is_some());
        assert!(c.notice.is_none() && c.caveats.is_empty());
        let text = output::render(&c, crate::report::Format::Table).unwrap();
        assert!(
            text.contains("Memory bandwidth, MB/s (10^6 B/s), best sample, CPU 0"),
            "{text}"
        );
        assert!(
            text.contains("Memory cells: tinymembench's figure"),
            "{text}"
        );
        assert!(text.contains("kernel 5.10"), "{text}");
        assert!(
            text.contains("Memory latency, base pages, single random read: ns per read over L1"),
            "{text}"
        );
        assert_eq!(output::section_rows(&c, Section::MemoryBandwidth).len(), 3);
    }

    #[test]
    fn an_emulated_run_is_labelled_in_the_notice_entries_and_cells() {
        let mut r = memory_run();
        r.emulated = true;
        let c = against_reference(r);
        assert!(c
            .notice
            .as_deref()
            .unwrap()
            .starts_with("EMULATED (QEMU): A (run-mem)"));
        let memcpy = row(
            &c,
            &Key::memory_bandwidth("libc-memcpy", "standard memcpy", "CPU 0"),
        );
        assert_eq!(
            memcpy.against[1].as_ref().unwrap().caveat.as_deref(),
            Some(EMULATED_CAVEAT)
        );
        let text = output::render(&c, crate::report::Format::Table).unwrap();
        assert!(text.contains("run, EMULATED"), "{text}");
        assert!(text.contains("0.94 (EMULATED)"), "{text}");
        let csv = output::render(&c, crate::report::Format::Csv).unwrap();
        assert!(csv.contains("QEMU's TCG, not the board's memory"), "{csv}");
    }

    #[test]
    fn a_figure_of_another_method_says_so_and_a_board_without_rows_is_refused() {
        let mut r = memory_run();
        r.board = "beaglebone-black".into();
        let c = against_reference(r.clone());
        assert_eq!(c.entries[1].name, "sbc-bench-memory/row-13");
        let memcpy = row(
            &c,
            &Key::memory_bandwidth("libc-memcpy", "standard memcpy", "CPU 0"),
        );
        assert_eq!(
            memcpy.against[1].as_ref().unwrap().caveat.as_deref(),
            Some("other method: lmbench bw_mem bcopy 16mb, not tinymembench")
        );
        r.board = "host".into();
        let refs = [reference::find("sbc-bench-memory").unwrap()];
        let e = compare(&[(PathBuf::from("h.json"), r)], &refs)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("no row for host"), "{e}");
    }

    #[test]
    fn two_runs_compare_every_test_and_row() {
        let a = memory_run();
        let mut b = memory_run();
        b.run_id = "run-b".into();
        let c = compare(
            &[(PathBuf::from("a.json"), a), (PathBuf::from("b.json"), b)],
            &[],
        )
        .unwrap();
        let vfp = row(
            &c,
            &Key::memory_bandwidth("arm-vldm-vstm", "VFP copy (VLDM/VSTM, 64 bytes)", "CPU 0"),
        );
        assert_eq!(vfp.against[1].as_ref().unwrap().ratio, Some(1.0));
        let dual = row(&c, &Key::memory_latency("base", "dual", 64 << 20));
        assert_eq!(dual.cells[0].as_ref().unwrap().values, [196.0, 146.0]);
        // Base pages single, then dual, then huge pages: one table each.
        let order: Vec<(&str, &str)> = c
            .rows
            .iter()
            .filter(|r| r.key.section == Section::MemoryLatency)
            .map(|r| (r.key.mode.as_str(), r.key.direction.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                ("base", "single"),
                ("base", "single"),
                ("base", "dual"),
                ("base", "dual"),
                ("huge", "single"),
                ("huge", "dual")
            ]
        );
    }
}
