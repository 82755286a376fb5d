//! The memory and clock sections of a hand-built run (a Pi Zero W's shape: one core,
//! libc and VFP kernels, base and huge pages), shared by the CSV, JSON, plot and compare
//! tests.

use super::*;
use benchboot_plan::{MemoryPlan, Plan};
use benchboot_results::memory::{BandwidthSample, ClockCheck, CpuFacts, MemOp};
use benchboot_results::SystemInfo;

fn test(
    kernel: &str,
    label: &str,
    op: MemOp,
    cores: Cores,
    samples: &[(u64, u64)],
) -> BandwidthTest {
    BandwidthTest {
        kernel: kernel.into(),
        label: label.into(),
        op,
        cores,
        samples: samples
            .iter()
            .map(|&(bytes, ns)| BandwidthSample { bytes, ns })
            .collect(),
    }
}

/// The hand-built memory results: memcpy best 400 MB/s (samples 400, 360, 320: spread
/// 10 %), memset 1600 MB/s, VFP copy 450 MB/s; base pages 4.0 ns/read baseline, 64 MiB
/// single 288 ns/read raw = 284 ns over L1, dual 150 raw = 146 over L1; huge pages
/// 64 MiB 246 ns over L1.
pub(crate) fn memory() -> MemoryResults {
    MemoryResults {
        cpu: CpuFacts {
            arch: "arm".into(),
            model: "ARM1176".into(),
            cores: 1,
            features: vec!["half".into(), "vfp".into()],
            llc_bytes: 128 << 10,
            llc_source: "sysfs cache/index1/size".into(),
            mem_total_bytes: 432 << 20,
            kernels: vec![
                "libc-memcpy".into(),
                "libc-memset".into(),
                "arm-vldm-vstm".into(),
            ],
            kernels_skipped: vec!["neon-vld1-vst1: no neon (AT_HWCAP lacks it)".into()],
        },
        buffer_bytes: 32 << 20,
        sizing: "4 x the last-level cache, at least 32 MiB".into(),
        bandwidth: vec![
            test(
                "libc-memcpy",
                "standard memcpy",
                MemOp::Copy,
                Cores::One(0),
                &[
                    (400_000_000, 1_000_000_000),
                    (360_000, 1_000_000),
                    (320, 1_000),
                ],
            ),
            test(
                "libc-memset",
                "standard memset",
                MemOp::Fill,
                Cores::One(0),
                &[(1_600_000_000, 1_000_000_000)],
            ),
            test(
                "arm-vldm-vstm",
                "VFP copy (VLDM/VSTM, 64 bytes)",
                MemOp::Copy,
                Cores::One(0),
                &[(450_000_000, 1_000_000_000), (440_000_000, 1_000_000_000)],
            ),
        ],
        latency: vec![
            LatencyTable {
                pages: Pages::Base(4096),
                core: 0,
                reads: 1000,
                baseline_ns: vec![5000, 4000],
                baseline_dual_ns: vec![],
                rows: vec![
                    LatencyRow {
                        block_bytes: 1 << 10,
                        single_ns: vec![4500, 4400],
                        dual_ns: vec![4600, 4700],
                    },
                    LatencyRow {
                        block_bytes: 64 << 20,
                        single_ns: vec![300_000, 288_000],
                        dual_ns: vec![200_000, 150_000],
                    },
                ],
            },
            LatencyTable {
                pages: Pages::Huge,
                core: 0,
                reads: 1000,
                baseline_ns: vec![4000],
                baseline_dual_ns: vec![],
                rows: vec![LatencyRow {
                    block_bytes: 64 << 20,
                    single_ns: vec![250_000],
                    dual_ns: vec![140_000],
                }],
            },
        ],
        skipped: vec![],
        problems: vec![],
    }
}

/// The clock checks: before the memory step the loop measured 700 MHz while cpufreq said
/// 1000 (a mismatch) and the firmware 699; after it 1000 MHz as claimed.
pub(crate) fn clock_checks() -> Vec<ClockCheck> {
    let check = |at: &str, measured_hz, cpufreq_khz, firmware_hz| ClockCheck {
        at: at.into(),
        cpu: 0,
        measured_hz,
        short_ops: 1,
        short_ns: 1,
        long_ops: 2,
        long_ns: 2,
        cpufreq_khz: Some(cpufreq_khz),
        firmware_hz: Some(firmware_hz),
    };
    vec![
        check("before-memory", 700_000_000, 1_000_000, 699_000_000),
        check("after-memory", 1_000_000_000, 1_000_000, 1_000_000_000),
    ]
}

/// A hardware run of `rpi-zero-w` with [`memory`] and [`clock_checks`].
pub(crate) fn memory_run() -> RunResults {
    let mut plan = Plan::example();
    plan.board = "rpi-zero-w".into();
    plan.emulated = false;
    plan.memory = Some(MemoryPlan::HARDWARE);
    let mut r = RunResults::new("run-mem".into(), plan, SystemInfo::default());
    r.memory = Some(memory());
    r.clock_checks = clock_checks();
    r
}

fn text_of(blocks: Vec<Block>) -> String {
    crate::doc::Doc { blocks }.text()
}

#[test]
fn bandwidth_lines_show_the_best_sample_and_the_spread_in_tinymembench_shape() {
    let lines = bandwidth_lines(&memory(), "");
    let w = "VFP copy (VLDM/VSTM, 64 bytes)".len();
    assert_eq!(
        lines,
        [
            "CPU 0:".to_owned(),
            format!("  {:<w$} :    400.0 MB/s (10.0%)", "standard memcpy"),
            format!("  {:<w$} :   1600.0 MB/s (0.0%)", "standard memset"),
            "  VFP copy (VLDM/VSTM, 64 bytes) :    450.0 MB/s (1.6%)".to_owned(),
        ]
    );
}

#[test]
fn bandwidth_groups_by_core_set_in_run_order() {
    let mut m = memory();
    let copy = |cores| {
        test(
            "libc-memcpy",
            "standard memcpy",
            MemOp::Copy,
            cores,
            &[(3_000, 1_000)],
        )
    };
    m.bandwidth.push(copy(Cores::One(1)));
    m.bandwidth.push(copy(Cores::All(2)));
    m.bandwidth.push(test(
        "libc-memset",
        "standard memset",
        MemOp::Fill,
        Cores::One(1),
        &[],
    ));
    let lines = bandwidth_lines(&m, "!");
    let heads: Vec<&String> = lines.iter().filter(|l| !l.starts_with(' ')).collect();
    assert_eq!(heads, ["CPU 0:", "CPU 1:", "all 2 cores at once:"]);
    let cpu1 = lines.iter().position(|l| l == "CPU 1:").unwrap();
    assert!(
        lines[cpu1 + 1].ends_with(":   3000.0 MB/s (0.0%)!"),
        "{}",
        lines[cpu1 + 1]
    );
    assert!(
        lines[cpu1 + 2].ends_with("standard memset                : no samples"),
        "{lines:?}"
    );
}

#[test]
fn latency_table_has_ns_over_l1_and_raw_ns_per_read() {
    let m = memory();
    let g = latency_grid(&m.latency[0], false);
    assert_eq!(
        g.header,
        [
            "block size",
            "single random read, ns",
            "dual random read, ns",
            "single, raw ns/read",
            "dual, raw ns/read"
        ]
    );
    assert_eq!(g.rows[0], ["1 KiB", "0.4", "0.6", "4.4", "4.6"]);
    assert_eq!(g.rows[1], ["64 MiB", "284.0", "146.0", "288.0", "150.0"]);
    let (single, dual) = repeat_extra_ns(&m.latency[0], &m.latency[0].rows[1]);
    assert_eq!((single, dual), (vec![296.0, 284.0], vec![196.0, 146.0]));
    // Under QEMU: no caches to see, said instead of near-zero differences.
    let g = latency_grid(&m.latency[0], true);
    assert_eq!(g.rows[0], ["1 KiB", "no caches", "no caches", "4.4", "4.6"]);
    let mut r = memory_run();
    r.emulated = true;
    let text: Vec<String> = memory_blocks(&r)
        .iter()
        .filter_map(|b| match b {
            Block::Text(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        text.iter()
            .filter(|t| t.as_str() == EMULATED_LATENCY)
            .count(),
        r.memory.as_ref().unwrap().latency.len(),
        "{text:?}"
    );
}

#[test]
fn the_section_has_the_cpu_facts_tables_per_page_kind_and_skips() {
    let mut r = memory_run();
    if let Some(m) = &mut r.memory {
        m.skipped
            .push("latency with huge pages: THP is `never`".into());
        m.problems
            .push("libc-memcpy: byte 7 of the destination is wrong".into());
    }
    let text = text_of(memory_blocks(&r));
    for want in [
        "Memory: bandwidth and latency (tinymembench's method)\n",
        "CPU: ARM1176 (arm), 1 core(s); features: half vfp\n",
        "last-level cache 128 KiB (sysfs cache/index1/size); MemTotal 432 MiB\n",
        "bandwidth buffers: 32 MiB each (4 x the last-level cache, at least 32 MiB)\n",
        "the best of 5 sample(s) of at least 500 ms each",
        "Latency, base pages (4 KiB), CPU 0: ns per read over L1\n",
        "Latency, huge pages (transparent), CPU 0: ns per read over L1\n",
        "L1 baseline (the same loop over 2 bytes, always a hit): 4.0 ns/read",
        "1,000 dependent random byte reads per repeat (tinymembench's LCG), fastest of 2 repeat(s)",
        "- kernel skipped: neon-vld1-vst1: no neon (AT_HWCAP lacks it)\n",
        "- not run: latency with huge pages: THP is `never`\n",
        "- PROBLEM: libc-memcpy: byte 7 of the destination is wrong\n",
    ] {
        assert!(text.contains(want), "no {want:?} in\n{text}");
    }
    assert!(!text.contains("EMULATED"), "{text}");
    // The whole report carries the section, and no empty storage one for a document
    // without storage targets.
    r.plan.storage.targets.clear();
    r.plan.storage.random = None;
    let report = crate::render::report(&r);
    assert!(report.contains("standard memcpy"), "{report}");
    assert!(!report.contains("\nStorage\n"), "{report}");
}

#[test]
fn an_emulated_run_says_so_in_the_heading_and_an_alert() {
    let mut r = memory_run();
    r.emulated = true;
    r.plan.emulated = true;
    let text = text_of(memory_blocks(&r));
    assert!(
        text.starts_with(
            "\nMemory: bandwidth and latency (tinymembench's method) (EMULATED (QEMU): these \
             figures say nothing about the hardware)\nEMULATED MEMORY: "
        ),
        "{text}"
    );
    let clock = text_of(crate::render::clock::clock_blocks(&r));
    assert!(clock.contains("vs firmware (EMULATED (QEMU)"), "{clock}");
    assert!(
        !clock.contains("CLOCK MISMATCH") && clock.contains("no mismatch is judged"),
        "{clock}"
    );
}

#[test]
fn the_clock_table_and_a_warning_per_mismatch() {
    let r = memory_run();
    let blocks = crate::render::clock::clock_blocks(&r);
    let grid = blocks
        .iter()
        .find_map(|b| match b {
            Block::Grid(g) => Some(g),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        grid.header,
        ["at", "CPU", "measured MHz", "cpufreq MHz", "firmware MHz"]
    );
    assert_eq!(grid.rows[0], ["before-memory", "0", "700", "1000", "699"]);
    assert_eq!(grid.rows[1], ["after-memory", "0", "1000", "1000", "1000"]);
    let text = text_of(blocks);
    assert!(
        text.contains(
            "- CLOCK MISMATCH before-memory: cpufreq says 1000 MHz, measured 700 MHz (-30 %)\n"
        ),
        "{text}"
    );
    assert_eq!(text.matches("CLOCK MISMATCH").count(), 1, "{text}");
    assert!(crate::render::report(&r).contains("CLOCK MISMATCH before-memory"));
}

#[test]
fn markdown_keeps_the_bandwidth_columns_in_a_text_block() {
    let md = crate::doc::Doc {
        blocks: memory_blocks(&memory_run()),
    }
    .markdown();
    assert!(md.contains("```text\nCPU 0:\n  standard memcpy "), "{md}");
}
