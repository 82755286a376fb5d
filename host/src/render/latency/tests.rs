//! The latency tables on a made-up run whose latencies are known: each value below is
//! the fio bucket value of a recorded latency, as fio would print it.

use super::*;
use benchboot_plan::{Filesystem, Plan, StorageTarget};
use benchboot_results::latency::{bucket_of, bucket_value, LatencyHistogram, TimelinePoint};
use benchboot_results::{RandomIo, StopReason, StorageMeasurement, SystemInfo};

/// A [`Latency`] of `calls` calls, `timed` as (ns, how many).
pub(crate) fn latency(timed: &[(u64, u64)], calls: u64) -> Latency {
    let mut h = LatencyHistogram::new();
    for &(ns, n) in timed {
        for _ in 0..n {
            h.record(ns);
        }
    }
    h.to_latency(calls).unwrap()
}

/// What a percentile of `ns` prints as: its bucket's value.
pub(crate) fn shown(ns: u64) -> String {
    latency_label(bucket_value(bucket_of(ns)))
}

fn pass(bs: u64, dir: Direction, rep: u32, nanos: u64) -> StorageMeasurement {
    StorageMeasurement {
        target: "ext4".into(),
        filesystem: Filesystem::Ext4,
        block_size: bs,
        direction: dir,
        mode: Mode::Direct,
        requested_mode: Mode::Direct,
        note: None,
        repetition: rep,
        bytes: 16 << 20,
        nanos,
        stopped_by: StopReason::Bytes,
        begin_ns: None,
        latency: None,
        timeline: Vec::new(),
    }
}

/// ext4 (direct): 4 KiB write in two repetitions of 8,000 calls, 500 timed each (490 at
/// 1 ms, 10 at 50 ms: pooled p99 = 50 ms); 64 KiB write, every one of 100 calls timed
/// (95 at 2 ms, 5 at 8 ms) and a 3 s timeline that falls from 16 to 4 MiB/s halfway;
/// 64 KiB read of 1 s with 4 points (too short for a timeline). Random read QD1: 999
/// I/Os at 400 µs and one at 20 ms. vfat: a pass with no latency (an older engine).
pub(crate) fn latency_run() -> RunResults {
    let mut plan = Plan::example();
    plan.storage.block_sizes = vec![4096, 65536];
    plan.storage.modes = vec![Mode::Direct];
    plan.storage.targets.push(StorageTarget {
        label: "vfat".into(),
        device: "/dev/x".into(),
        filesystem: Filesystem::Vfat,
        optional: false,
    });
    let mut r = RunResults::new("run-l".into(), plan, SystemInfo::default());
    for rep in 0..2 {
        let mut p = pass(4096, Direction::Write, rep, 3_000_000_000);
        p.latency = Some(latency(&[(1_000_000, 490), (50_000_000, 10)], 8000));
        r.storage.push(p);
    }
    let mut p = pass(65536, Direction::Write, 0, 3_000_000_000);
    p.latency = Some(latency(&[(2_000_000, 95), (8_000_000, 5)], 100));
    let mut bytes = 0;
    p.timeline = (1..=12u64)
        .map(|i| {
            bytes += if i <= 6 { 4 << 20 } else { 1 << 20 };
            TimelinePoint {
                end_ns: i * 250_000_000,
                bytes,
            }
        })
        .collect();
    r.storage.push(p);
    let mut p = pass(65536, Direction::Read, 0, 1_000_000_000);
    p.timeline = (1..=4u64)
        .map(|i| TimelinePoint {
            end_ns: i * 250_000_000,
            bytes: i << 22,
        })
        .collect();
    r.storage.push(p);
    let mut p = pass(4096, Direction::Write, 0, 1_000_000_000);
    p.target = "vfat".into();
    r.storage.push(p);
    r.random.push(RandomIo {
        target: "ext4".into(),
        op: RandomOp::Read,
        block_size: 4096,
        queue_depth: 1,
        region_bytes: 64 << 20,
        ios: 1000,
        nanos: 1_000_000_000,
        latency: Some(latency(&[(400_000, 999), (20_000_000, 1)], 1000)),
    });
    r
}

#[test]
fn repetitions_pool_into_one_histogram() {
    let r = latency_run();
    let l = cell_latency(&r, "ext4", 4096, Direction::Write, Mode::Direct).unwrap();
    assert_eq!((l.count, l.calls, l.max_ns), (1000, 16000, 50_000_000));
    let p = l.percentiles();
    assert_eq!(p.p50_ns, bucket_value(bucket_of(1_000_000)));
    // 20 of 1000 at 50 ms: the 990th value is one of them.
    assert_eq!(
        p.p99_ns, 50_000_000,
        "the slowest calls' bucket, held at them"
    );
    assert_eq!(timed_text(&l), "1 in 16");
    assert!(cell_latency(&r, "vfat", 4096, Direction::Write, Mode::Direct).is_none());
    assert!(cell_latency(&r, "ext4", 4096, Direction::Read, Mode::Direct).is_none());
}

#[test]
fn the_sequential_table_has_a_row_per_cell_with_latency() {
    let r = latency_run();
    let g = storage_latency_table(&r, "ext4").unwrap();
    assert_eq!(
        g.header,
        [
            "mode",
            "direction",
            "block size",
            "p50",
            "p90",
            "p99",
            "p99.9",
            "max",
            "timed",
            "calls"
        ]
    );
    let ms1 = shown(1_000_000);
    // The p99s fall in the slowest calls' buckets: held at those calls (the max).
    let ms50 = "50.0 ms";
    let ms2 = shown(2_000_000);
    let ms8 = "8.00 ms";
    assert_eq!(
        g.rows,
        [
            vec![
                "direct", "write", "4 KiB", &ms1, &ms1, &ms50, &ms50, "50.0 ms", "1 in 16",
                "16,000"
            ],
            vec!["direct", "write", "64 KiB", &ms2, &ms2, &ms8, &ms8, "8.00 ms", "all", "100"],
        ]
    );
    assert_eq!(ms1, "1.00 ms", "1 ms is a bucket's value to three figures");
    assert!(storage_latency_table(&r, "vfat").is_none());
}

#[test]
fn the_random_table_has_a_row_per_queue_depth_with_latency() {
    let r = latency_run();
    let g = random_latency_table(&r, "ext4").unwrap();
    // Every call took 400 µs: min = max holds every percentile there.
    let us400 = "400 µs";
    assert_eq!(
        g.rows,
        [vec![
            "read", "1", &us400, &us400, &us400, &us400, "20.0 ms", "all", "1,000"
        ]]
    );
}

/// The section: after the lead, ext4's two tables; vfat has none.
#[test]
fn the_section_names_each_table() {
    let r = latency_run();
    let blocks = latency_blocks(&r);
    let headings: Vec<&str> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Heading(h) => Some(h.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        headings,
        [
            "Storage latency per call",
            "Latency per call, ext4: sequential write(2) / read(2)",
            "Latency per call, ext4: random 4 KiB pread(2)/pwrite(2), O_DIRECT"
        ]
    );
}

/// A document without latency (before schema 1.14) reads exactly as before: no block,
/// and the whole report is the same text with latency taken out of a run that had it.
#[test]
fn a_document_without_latency_renders_as_before() {
    let mut r = latency_run();
    r.storage.iter_mut().for_each(|m| {
        m.latency = None;
        m.timeline.clear();
    });
    r.random.iter_mut().for_each(|x| x.latency = None);
    assert!(latency_blocks(&r).is_empty());
    assert!(crate::plot::latency::latency_figures(&r).is_empty());
    assert!(crate::plot::latency::timeline_figures(&r).is_empty());
    let text = crate::render::document(&r).text();
    assert!(!text.contains("Latency per call"), "{text}");
}

/// A target label from a stranger's document goes through the tables' escaping: the
/// escape character prints as `\u{1b}` in the text and the Markdown.
#[test]
fn a_hostile_target_label_is_escaped() {
    let mut r = latency_run();
    let evil = "ext4\u{1b}[31m";
    r.plan.storage.targets[0].label = evil.into();
    r.storage.iter_mut().for_each(|m| m.target = evil.into());
    let d = crate::doc::Doc {
        blocks: latency_blocks(&r),
    };
    for out in [d.text(), d.markdown()] {
        assert!(!out.contains('\u{1b}'), "{out}");
        assert!(out.contains("ext4\\u{1b}[31m"), "{out}");
    }
}
