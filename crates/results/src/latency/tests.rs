//! Histogram buckets against fio's, percentiles, merge, the document reader's checks and
//! the timeline recorder.

use super::*;

#[test]
fn values_below_128_ns_have_a_bucket_each() {
    for v in 0..128u64 {
        assert_eq!(bucket_of(v), v as usize);
        assert_eq!(bucket_value(v as usize), v);
    }
}

/// Hand-computed from fio `stat.c`: `plat_val_to_idx` (msb, error_bits = msb − 6,
/// base = (error_bits + 1) << 6, offset = 63 & (v >> error_bits)) and `plat_idx_to_val`
/// (2^(error_bits + 6) + (k + 0.5) · 2^error_bits).
#[test]
fn buckets_at_group_edges_match_fio() {
    let cases: &[(u64, usize, u64)] = &[
        (128, 128, 129),
        (129, 128, 129),
        (130, 129, 131),
        (255, 191, 255),
        (256, 192, 258),
        (259, 192, 258),
        (260, 193, 262),
        (511, 255, 510),
        (512, 256, 516),
        (1_000_000, 954, 1_003_520),
        (50_000_000, 1311, 50_069_504),
        (1 << 33, 1792, (1 << 33) + (1 << 26)),
        ((1 << 34) - 1, 1855, 17_112_760_320),
        (1 << 34, 1855, 17_112_760_320),
        (u64::MAX, 1855, 17_112_760_320),
    ];
    for &(v, idx, val) in cases {
        assert_eq!(bucket_of(v), idx, "bucket of {v}");
        assert_eq!(bucket_value(idx), val, "value of bucket {idx}");
        assert!(bucket_low(idx) <= v.min(bucket_low(1855) + (1 << 27) - 1));
    }
}

#[test]
fn every_bucket_holds_its_own_range_and_its_value_is_within_1_in_128() {
    for idx in 0..PLAT_NR - 1 {
        let (lo, hi) = (bucket_low(idx), bucket_low(idx + 1) - 1);
        assert_eq!(bucket_of(lo), idx);
        assert_eq!(bucket_of(hi), idx);
        let v = bucket_value(idx);
        assert!(lo <= v && v <= hi + 1, "{idx}: {lo}..={hi} value {v}");
        assert!((v - lo) * 128 <= lo.max(1) || idx < 128, "{idx}");
    }
}

fn known() -> LatencyHistogram {
    // 990 calls at 1 ms, 10 at 50 ms, interleaved.
    let mut h = LatencyHistogram::new();
    for i in 0..1000 {
        h.record(if i % 100 == 37 { 50_000_000 } else { 1_000_000 });
    }
    h
}

/// A bucket's middle is an estimate; the exact min and max bound every percentile.
#[test]
fn a_percentile_never_lies_outside_the_calls_seen() {
    let mut h = LatencyHistogram::new();
    for _ in 0..10 {
        h.record(1_000_000);
    }
    let l = h.to_latency(10).unwrap();
    // Bucket 954 spans 999,424..=1,007,615 (middle 1,003,520): every call was 1 ms.
    assert_eq!(l.percentiles().p50_ns, 1_000_000);
    assert_eq!(l.percentiles().p999_ns, 1_000_000);
}

#[test]
fn percentiles_follow_fios_rank_rule() {
    let l = known().to_latency(16_000).unwrap();
    assert_eq!((l.count, l.calls), (1000, 16_000));
    assert_eq!(l.buckets, vec![(954, 990), (1311, 10)]);
    assert_eq!(
        l.percentiles(),
        Percentiles {
            p50_ns: 1_003_520,
            p90_ns: 1_003_520,
            // rank ⌈0.99 · 1000⌉ = 990: the last 1 ms call.
            p99_ns: 1_003_520,
            // The 50 ms bucket's middle (50,069,504) is past the slowest call: held at it.
            p999_ns: 50_000_000,
            max_ns: 50_000_000,
        }
    );
    assert_eq!(l.mean_ns(), (990 * 1_000_000 + 10 * 50_000_000) / 1000);

    let mut h = LatencyHistogram::new();
    for v in 1..=100 {
        h.record(v);
    }
    let l = h.to_latency(100).unwrap();
    assert_eq!(l.percentile(0.5), 50);
    assert_eq!(l.percentile(0.9), 90);
    assert_eq!(l.percentile(0.99), 99);
    assert_eq!(l.percentile(0.999), 100);
    assert_eq!(l.percentile(0.0), 1);
    assert_eq!((l.min_ns, l.max_ns, l.sum_ns), (1, 100, 5050));
}

#[test]
fn merge_is_recording_both() {
    let mut a = LatencyHistogram::new();
    let mut b = LatencyHistogram::new();
    let mut all = LatencyHistogram::new();
    for v in [5u64, 300, 70_000, 1 << 40] {
        a.record(v);
        all.record(v);
    }
    for v in [2u64, 300, 9_999_999] {
        b.record(v);
        all.record(v);
    }
    a.merge(&b);
    assert_eq!(a, all);
    assert_eq!(a.count(), 7);
    assert_eq!(a.bucket_count(bucket_of(300)), 2);
    assert_eq!(a.bucket_count(1855), 1);
    let l = a.to_latency(7).unwrap();
    assert_eq!((l.min_ns, l.max_ns), (2, 1 << 40));
    assert_eq!(l.to_histogram(), all);
    assert_eq!(LatencyHistogram::new().to_latency(5), None);
}

#[test]
fn latency_round_trips_and_calls_never_fall_below_count() {
    let l = known().to_latency(3).unwrap();
    assert_eq!(l.calls, 1000);
    let v = serde_json::to_value(&l).unwrap();
    assert_eq!(v["buckets"], serde_json::json!([[954, 990], [1311, 10]]));
    assert_eq!(serde_json::from_value::<Latency>(v).unwrap(), l);
}

type Edit = Box<dyn FnOnce(&mut serde_json::Value)>;

fn refused(edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut v = serde_json::to_value(known().to_latency(1000).unwrap()).unwrap();
    edit(&mut v);
    serde_json::from_value::<Latency>(v)
        .unwrap_err()
        .to_string()
}

#[test]
fn the_reader_refuses_each_bad_latency() {
    use serde_json::json;
    let too_many: Vec<_> = (0..=PLAT_NR).map(|i| json!([i, 1])).collect();
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(move |v| v["buckets"] = json!(too_many)),
            "buckets: more than 1856 entries",
        ),
        (
            Box::new(|v| v["buckets"] = json!([[1856, 1000]])),
            "buckets[0]: index 1856 is past fio's last bucket (1855)",
        ),
        (
            Box::new(|v| v["buckets"] = json!([[954, 500], [954, 500]])),
            "buckets[1]: index 954 is not above the one before",
        ),
        (
            Box::new(|v| v["buckets"] = json!([[1311, 10], [954, 990]])),
            "buckets[1]: index 954 is not above",
        ),
        (
            Box::new(|v| v["buckets"] = json!([[954, 1000], [1000, 0]])),
            "buckets[1]: an empty bucket",
        ),
        (
            Box::new(|v| v["buckets"] = json!([[954, 990]])),
            "buckets: the counts add up to 990, not to count 1000",
        ),
        (
            Box::new(|v| v["calls"] = json!(999)),
            "count: 1000 latencies from 999 calls",
        ),
        (Box::new(|v| v["count"] = json!(0)), "count: 0 latencies"),
        (
            Box::new(|v| v["min_ns"] = json!(60_000_000)),
            "min_ns: 60000000 ns is above max_ns 50000000 ns",
        ),
    ];
    for (edit, want) in cases {
        let e = refused(edit);
        assert!(e.contains(want), "{e}\nwanted: {want}");
    }
}

#[test]
fn a_results_document_names_the_pass_of_a_bad_latency() {
    let mut r = crate::tests::sample();
    r.storage[0].latency = known().to_latency(1000);
    let mut v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    v["storage"][0]["latency"]["buckets"][1][0] = 2000.into();
    let e = crate::RunResults::from_json(&v.to_string())
        .unwrap_err()
        .to_string();
    assert!(e.contains("at storage[0].latency"), "{e}");
    assert!(e.contains("index 2000 is past fio's last bucket"), "{e}");
}

#[test]
fn the_reader_refuses_a_timeline_out_of_order_or_too_long() {
    let mut r = crate::tests::sample();
    r.storage[0].timeline = vec![
        TimelinePoint {
            end_ns: 10,
            bytes: 5,
        },
        TimelinePoint {
            end_ns: 20,
            bytes: 9,
        },
    ];
    let doc = r.to_json();
    assert_eq!(crate::RunResults::from_json(&doc).unwrap(), r);
    let mut v: serde_json::Value = serde_json::from_str(&doc).unwrap();
    v["storage"][0]["timeline"][1]["end_ns"] = 10.into();
    let e = crate::RunResults::from_json(&v.to_string())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("at storage[0].timeline") && e.contains("timeline[1]: 9 bytes at 10 ns"),
        "{e}"
    );
    v["storage"][0]["timeline"][1] = serde_json::json!({"end_ns": 30, "bytes": 4});
    let e = crate::RunResults::from_json(&v.to_string())
        .unwrap_err()
        .to_string();
    assert!(e.contains("bytes never fall"), "{e}");
    v["storage"][0]["timeline"] = (0..=MAX_TIMELINE_POINTS as u64)
        .map(|i| serde_json::json!({"end_ns": i + 1, "bytes": i}))
        .collect();
    let e = crate::RunResults::from_json(&v.to_string())
        .unwrap_err()
        .to_string();
    assert!(e.contains("timeline: more than 1024 entries"), "{e}");
}

#[test]
fn older_passes_read_without_latency_or_timeline_and_write_none() {
    let r = crate::tests::sample();
    let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert!(v["storage"][0].get("latency").is_none(), "{v}");
    assert!(v["storage"][0].get("timeline").is_none(), "{v}");
    let back = crate::RunResults::from_json(&r.to_json()).unwrap();
    assert_eq!(back.storage[0].latency, None);
    assert!(back.storage[0].timeline.is_empty());
}

#[test]
fn the_timeline_keeps_a_point_per_boundary_and_halves_itself_when_full() {
    let mut t = TimelineRecorder::new(250);
    // 10 bytes per ns-step of 100: a point at 300, 500, 800, 1000, ...
    for ns in (0..=1000u64).step_by(100) {
        t.offer(ns, ns * 10);
    }
    let ends: Vec<u64> = t.points().iter().map(|p| p.end_ns).collect();
    assert_eq!(ends, vec![300, 500, 800, 1000]);
    // Far past capacity: 250 ns intervals for 128 · 250 ns, then 500, then 1000.
    let mut t = TimelineRecorder::new(250);
    for ns in (0..=100_000u64).step_by(50) {
        t.offer(ns, ns / 2);
    }
    assert_eq!(t.interval_ns(), 1000);
    assert!(t.points().len() <= TIMELINE_CAPACITY);
    assert!(t
        .points()
        .iter()
        .all(|p| p.end_ns % 1000 == 0 && p.bytes == p.end_ns / 2));
    let pts = t.finish(100_010, 50_005);
    assert_eq!(
        pts.last(),
        Some(&TimelinePoint {
            end_ns: 100_010,
            bytes: 50_005
        })
    );
    assert!(pts.windows(2).all(|w| w[1].end_ns > w[0].end_ns));
    // The steady rate shows in every interval.
    for r in interval_rates(&pts) {
        assert_eq!(r.bytes * 2, r.end_ns - r.start_ns, "{r:?}");
    }
}

#[test]
fn interval_rates_are_mib_per_s_between_points() {
    let pts = [
        TimelinePoint {
            end_ns: 500_000_000,
            bytes: 1 << 20,
        },
        TimelinePoint {
            end_ns: 1_000_000_000,
            bytes: 3 << 20,
        },
    ];
    let r = interval_rates(&pts);
    assert_eq!(r[0].mib_per_s, 2.0);
    assert_eq!(
        (r[1].start_ns, r[1].bytes, r[1].mib_per_s),
        (500_000_000, 2 << 20, 4.0)
    );
}
