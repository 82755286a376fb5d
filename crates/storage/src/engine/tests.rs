//! Storage engine tests with a mock clock and mock sinks.

use super::*;
use benchboot_results::latency::LatencyHistogram;
use std::cell::Cell;
use std::rc::Rc;

/// A clock that advances by `step` ns on each read, shared with the mock sink so the
/// sink can charge time for a flush.
#[derive(Clone)]
struct MockClock {
    now: Rc<Cell<u64>>,
    step: u64,
}

impl Clock for MockClock {
    fn now_ns(&mut self) -> u64 {
        let t = self.now.get();
        self.now.set(t + self.step);
        t
    }
}

struct MockSink {
    written: u64,
    calls: u64,
    flushes: u32,
    now: Rc<Cell<u64>>,
    /// Nanoseconds each write and the flush cost.
    write_cost: u64,
    flush_cost: u64,
    fail_after: Option<u64>,
}

impl embedded_io::ErrorType for MockSink {
    type Error = embedded_io::ErrorKind;
}

impl embedded_io::Write for MockSink {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        if self.fail_after.is_some_and(|n| self.calls >= n) {
            return Err(embedded_io::ErrorKind::OutOfMemory);
        }
        self.calls += 1;
        self.written += buf.len() as u64;
        self.now.set(self.now.get() + self.write_cost);
        Ok(buf.len())
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        self.flushes += 1;
        self.now.set(self.now.get() + self.flush_cost);
        Ok(())
    }
}

fn setup(write_cost: u64, flush_cost: u64) -> (MockSink, MockClock) {
    let now = Rc::new(Cell::new(1_000));
    let sink = MockSink {
        written: 0,
        calls: 0,
        flushes: 0,
        now: now.clone(),
        write_cost,
        flush_cost,
        fail_after: None,
    };
    (sink, MockClock { now, step: 0 })
}

#[test]
fn byte_cap_stops_write_and_flush_is_timed() {
    let (mut sink, mut clock) = setup(10, 5_000_000);
    let caps = Caps {
        bytes: 1 << 20,
        time_ns: u64::MAX,
    };
    let t = timed_write(&mut sink, &mut [7u8; 4096], 1, caps, &mut clock).unwrap();
    assert_eq!(t.bytes, 1 << 20);
    assert_eq!(t.stopped_by, StopReason::Bytes);
    assert_eq!(sink.flushes, 1);
    // 256 writes x 10 ns + the 5 ms flush: the flush is inside the timed region.
    assert_eq!(t.nanos, 256 * 10 + 5_000_000);
}

#[test]
fn time_cap_stops_write_first() {
    // 8 B writes costing 1 us each, 10 ms time cap, 1 GiB byte cap.
    let (mut sink, mut clock) = setup(1_000, 0);
    let caps = Caps {
        bytes: 1 << 30,
        time_ns: 10_000_000,
    };
    let t = timed_write(&mut sink, &mut [1u8; 8], 1, caps, &mut clock).unwrap();
    assert_eq!(t.stopped_by, StopReason::Time);
    // Checked at the one timed write in each group of 8192: the first check past 10 ms
    // is the second group's, somewhere in writes 8193..=16384.
    assert_eq!(calls_per_clock_check(8), 8192);
    assert!((8_193..=16_384).contains(&sink.calls), "{}", sink.calls);
    assert_eq!((t.bytes, t.calls), (sink.calls * 8, sink.calls));
    assert_eq!(t.nanos, sink.calls * 1_000);
}

#[test]
fn write_error_is_returned() {
    let (mut sink, mut clock) = setup(1, 0);
    sink.fail_after = Some(3);
    let caps = Caps {
        bytes: 1 << 20,
        time_ns: u64::MAX,
    };
    let err = timed_write(&mut sink, &mut [0u8; 512], 1, caps, &mut clock).unwrap_err();
    assert_eq!(err, embedded_io::ErrorKind::OutOfMemory);
    assert_eq!(sink.flushes, 0);
}

struct MockSource {
    left: u64,
    now: Rc<Cell<u64>>,
    cost: u64,
}

impl embedded_io::ErrorType for MockSource {
    type Error = embedded_io::ErrorKind;
}

impl embedded_io::Read for MockSource {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let n = (buf.len() as u64).min(self.left) as usize;
        self.left -= n as u64;
        self.now.set(self.now.get() + self.cost);
        Ok(n)
    }
}

#[test]
fn read_stops_at_end_of_file() {
    let now = Rc::new(Cell::new(0));
    let mut src = MockSource {
        left: 10_000,
        now: now.clone(),
        cost: 100,
    };
    let mut clock = MockClock { now, step: 0 };
    let caps = Caps {
        bytes: u64::MAX,
        time_ns: u64::MAX,
    };
    let t = timed_read(&mut src, &mut [0u8; 4096], caps, &mut clock).unwrap();
    assert_eq!(t.bytes, 10_000);
    assert_eq!(t.stopped_by, StopReason::Eof);
    // Three reads returning data plus the one that saw EOF.
    assert_eq!(t.nanos, 400);
}

#[test]
fn read_stops_at_byte_cap() {
    let now = Rc::new(Cell::new(0));
    let mut src = MockSource {
        left: 1 << 30,
        now: now.clone(),
        cost: 1,
    };
    let mut clock = MockClock { now, step: 0 };
    let caps = Caps {
        bytes: 65_536,
        time_ns: u64::MAX,
    };
    let t = timed_read(&mut src, &mut [0u8; 4096], caps, &mut clock).unwrap();
    assert_eq!((t.bytes, t.stopped_by), (65_536, StopReason::Bytes));
}

#[test]
fn pattern_is_seeded_and_not_zero() {
    let a = pattern_block(4096, 42);
    assert!(a == pattern_block(4096, 42), "same seed, same block");
    assert!(a != pattern_block(4096, 43), "another seed, another block");
    assert!(a.iter().filter(|&&b| b == 0).count() < 100);
}

#[test]
fn real_file_write_then_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.dat");
    let mut block = pattern_block(4096, 1);
    let caps = Caps {
        bytes: 256 * 1024,
        time_ns: u64::MAX,
    };
    let mut f = SyncFile(std::fs::File::create(&path).unwrap());
    let w = timed_write(&mut f, &mut block, 1, caps, &mut MonotonicClock).unwrap();
    assert_eq!(w.bytes, 256 * 1024);
    assert!(w.nanos > 0);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 256 * 1024);
    let mut f = SyncFile(std::fs::File::open(&path).unwrap());
    let caps = Caps {
        bytes: u64::MAX,
        time_ns: u64::MAX,
    };
    let r = timed_read(&mut f, &mut vec![0u8; 4096], caps, &mut MonotonicClock).unwrap();
    assert_eq!((r.bytes, r.stopped_by), (256 * 1024, StopReason::Eof));
}

#[test]
fn pattern_mismatch_is_reported_at_its_offset() {
    let start = 1 << 20;
    let mut buf = vec![0u8; 64 * 1024];
    fill_pattern(&mut buf, start, 7);
    assert_eq!(first_mismatch(&buf, start, 7), None);
    buf[12_345] ^= 0x01;
    buf[20_000] ^= 0xff;
    assert_eq!(first_mismatch(&buf, start, 7), Some(start + 12_345));
}

#[test]
fn wrapped_data_does_not_verify() {
    // A fake-capacity card returns the data of offset 0 when offset 1 GiB is read.
    let mut low = vec![0u8; 4096];
    fill_pattern(&mut low, 0, 3);
    assert_eq!(first_mismatch(&low, 1 << 30, 3), Some(1 << 30));
}

#[test]
fn random_offsets_are_aligned_and_inside() {
    let offs: Vec<u64> = RandomOffsets::new(1, 1 << 20, 4096).take(10_000).collect();
    assert!(offs.iter().all(|o| o % 4096 == 0 && *o < 1 << 20));
    let distinct: std::collections::BTreeSet<_> = offs.iter().collect();
    assert_eq!(distinct.len(), 256, "every slot of the region is visited");
}

/// A sink that keeps what a deduplicating controller would look at: the file as
/// written (sector by sector), and for each call how many bytes of the block changed
/// since the call before (per-byte work in the loop, a refill or a scramble of the whole
/// block, would change nearly all of them).
#[derive(Default)]
struct DedupeSink {
    file: Vec<u8>,
    last: Vec<u8>,
    most_changed: usize,
    now: Rc<Cell<u64>>,
    cost: u64,
}

impl embedded_io::ErrorType for DedupeSink {
    type Error = embedded_io::ErrorKind;
}

impl embedded_io::Write for DedupeSink {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        if self.last.len() == buf.len() {
            let changed = self.last.iter().zip(buf).filter(|(a, b)| a != b).count();
            self.most_changed = self.most_changed.max(changed);
        }
        self.last = buf.to_vec();
        self.file.extend_from_slice(buf);
        self.now.set(self.now.get() + self.cost);
        Ok(buf.len())
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

impl DedupeSink {
    /// Distinct 512 B sectors of the file, and how many sectors it has.
    fn distinct_sectors(&self) -> (usize, usize) {
        let sectors: std::collections::HashSet<&[u8]> =
            self.file.chunks(STAMP_STRIDE as usize).collect();
        (
            sectors.len(),
            self.file.len().div_ceil(STAMP_STRIDE as usize),
        )
    }
}

#[test]
fn every_sector_a_pass_writes_is_distinct_at_every_block_size() {
    for bs in [1usize, 7, 8, 24, 100, 511, 512, 1000, 4096, 65_536, 4 << 20] {
        let now = Rc::new(Cell::new(0));
        let mut sink = DedupeSink {
            now: now.clone(),
            cost: 3,
            ..DedupeSink::default()
        };
        let mut clock = MockClock { now, step: 0 };
        // The same pattern block every call, as the sweep hands it over.
        let mut block = pattern_block(bs, 5);
        let caps = Caps {
            bytes: (64 << 10).max(2 * bs as u64),
            time_ns: u64::MAX,
        };
        let t = timed_write(&mut sink, &mut block, 0xbb, caps, &mut clock).unwrap();
        let calls = t.bytes / bs as u64;
        let (distinct, sectors) = sink.distinct_sectors();
        assert_eq!(distinct, sectors, "{bs} B blocks: sectors alike");
        // Every sector starts with its own position and the pass's tag.
        for (i, s) in sink.file.chunks_exact(512).enumerate() {
            assert_eq!(s[..8], (i as u64 * 512).to_le_bytes(), "{bs} B, sector {i}");
            assert_eq!(s[8..16], 0xbbu64.to_le_bytes(), "{bs} B, sector {i}");
        }
        // No per-byte work between two calls: at most the stamps changed (16 B per
        // 512 B, and a block smaller than a stamp may change whole).
        let stamps = bs.div_ceil(512) + 1;
        assert!(
            sink.most_changed <= (stamps * STAMP_BYTES).min(bs),
            "{bs} B: {} bytes changed between two calls",
            sink.most_changed
        );
        // The fake clock moves only in the sink: the timed region is the calls' own time.
        assert_eq!(t.nanos, calls * 3, "{bs} B");
    }
}

#[test]
fn two_passes_with_other_tags_share_no_sector() {
    let write = |tag| {
        let now = Rc::new(Cell::new(0));
        let mut sink = DedupeSink {
            now: now.clone(),
            ..DedupeSink::default()
        };
        let mut block = pattern_block(4096, 5);
        let caps = Caps {
            bytes: 1 << 20,
            time_ns: u64::MAX,
        };
        timed_write(
            &mut sink,
            &mut block,
            tag,
            caps,
            &mut MockClock { now, step: 0 },
        )
        .unwrap();
        sink.file
    };
    let (a, b) = (write(1), write(2));
    assert_eq!(a.len(), b.len());
    assert!(a.chunks(512).zip(b.chunks(512)).all(|(x, y)| x != y));
}

#[test]
fn a_stamp_that_straddles_blocks_is_split_between_them() {
    // Blocks of 5 B from offset 510: the stamp of sector 512 falls in three blocks.
    let mut file = vec![0xeeu8; 540];
    for off in (510..535).step_by(5) {
        let mut b = [0u8; 5];
        stamp_block(&mut b, off as u64, 9);
        file[off..off + 5].copy_from_slice(&b);
    }
    assert_eq!(file[512..520], 512u64.to_le_bytes());
    assert_eq!(file[520..528], 9u64.to_le_bytes());
    // Bytes outside every stamp keep what the block held (zeros here).
    assert_eq!(file[510..512], [0, 0]);
    assert_eq!(file[528..535], [0; 7]);
}

/// A device whose every call costs what `cost(call index)` says, charged to the shared
/// fake clock.
struct FakeDevice<F: FnMut(u64) -> u64> {
    calls: u64,
    now: Rc<Cell<u64>>,
    cost: F,
}

impl<F: FnMut(u64) -> u64> embedded_io::ErrorType for FakeDevice<F> {
    type Error = embedded_io::ErrorKind;
}

impl<F: FnMut(u64) -> u64> embedded_io::Write for FakeDevice<F> {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        let c = (self.cost)(self.calls);
        self.calls += 1;
        self.now.set(self.now.get() + c);
        Ok(buf.len())
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

const MS: u64 = 1_000_000;

/// 99 % of calls at 1 ms, 1 % at 50 ms: one slow call at a pseudo-random place in each
/// run of 100 (its own xorshift, not the engine's).
fn one_in_100_slow() -> impl FnMut(u64) -> u64 {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut slow_at = 0;
    move |i| {
        if i % 100 == 0 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            slow_at = x % 100;
        }
        if i % 100 == slow_at {
            50 * MS
        } else {
            MS
        }
    }
}

/// Writes `calls` blocks of `block` bytes to `dev` through the engine.
fn write_through<F: FnMut(u64) -> u64>(
    block: usize,
    calls: u64,
    cost: F,
) -> (Timed, PassRecord, u64) {
    let now = Rc::new(Cell::new(0));
    let mut dev = FakeDevice {
        calls: 0,
        now: now.clone(),
        cost,
    };
    let caps = Caps {
        bytes: calls * block as u64,
        time_ns: u64::MAX,
    };
    let mut rec = PassRecord::new();
    let mut clock = MockClock { now, step: 0 };
    let mut buf = vec![0u8; block];
    let t = timed_write_recorded(&mut dev, &mut buf, 3, caps, &mut clock, &mut rec).unwrap();
    (t, rec, dev.calls)
}

fn within_one_bucket(found: u64, truth: u64) -> bool {
    use benchboot_results::latency::bucket_of;
    bucket_of(found).abs_diff(bucket_of(truth)) <= 1
}

#[test]
fn the_engine_finds_the_percentiles_of_a_device_with_stalls() {
    // 64 KiB: every call timed.
    let (t, rec, calls) = write_through(65_536, 20_000, one_in_100_slow());
    let (l, _) = rec.into_results(&t);
    let l = l.unwrap();
    assert_eq!((calls, l.calls, l.count), (20_000, 20_000, 20_000));
    let p = l.percentiles();
    // fio's rank rule: p99 is the 19,800th of 20,000, the last 1 ms call.
    assert!(within_one_bucket(p.p50_ns, MS), "{p:?}");
    assert!(within_one_bucket(p.p99_ns, MS), "{p:?}");
    assert!(within_one_bucket(p.p999_ns, 50 * MS), "{p:?}");
    assert_eq!(p.max_ns, 50 * MS);
    assert_eq!(l.min_ns, MS);
    assert_eq!(l.sum_ns, 19_800 * MS + 200 * 50 * MS);
}

#[test]
fn sampled_calls_see_the_stalls_at_their_true_share() {
    // 4 KiB: one call in each group of 16 timed, 20,000 of 320,000.
    let (t, rec, _) = write_through(4096, 320_000, one_in_100_slow());
    let l = rec.into_results(&t).0.unwrap();
    assert_eq!((l.calls, l.count), (320_000, 20_000));
    let slow = l
        .buckets
        .iter()
        .filter(|&&(i, _)| i as usize == benchboot_results::latency::bucket_of(50 * MS))
        .map(|&(_, c)| c)
        .sum::<u64>();
    assert!(
        (140..=260).contains(&slow),
        "{slow} of 20,000 sampled calls slow"
    );
    let p = l.percentiles();
    assert!(within_one_bucket(p.p50_ns, MS), "{p:?}");
    assert!(within_one_bucket(p.p999_ns, 50 * MS), "{p:?}");
    assert_eq!(p.max_ns, 50 * MS);
}

#[test]
fn a_stall_in_step_with_the_groups_is_not_aliased() {
    // Every 16th call of a 4 KiB pass stalls: a sample taken at a fixed place in each
    // group of 16 would see all stalls or none; the random pick sees 1 in 16.
    let (t, rec, _) = write_through(4096, 160_000, |i| if i % 16 == 5 { 20 * MS } else { MS });
    let l = rec.into_results(&t).0.unwrap();
    let slow: u64 = l
        .buckets
        .iter()
        .filter(|&&(i, _)| i as usize == benchboot_results::latency::bucket_of(20 * MS))
        .map(|&(_, c)| c)
        .sum();
    assert_eq!(l.count, 10_000);
    assert!(
        (500..=750).contains(&slow),
        "{slow} of 10,000 sampled calls slow"
    );
}

#[test]
fn the_timeline_shows_a_device_that_slows_halfway() {
    // 4 KiB writes at 10 us for the first 50,000 calls (0.5 s, 390.6 MiB/s), then 40 us
    // (2 s, 97.7 MiB/s).
    let (t, rec, _) = write_through(4096, 100_000, |i| if i < 50_000 { 10_000 } else { 40_000 });
    let (_, timeline) = rec.into_results(&t);
    assert_eq!(t.nanos, 2_500_000_000);
    let rates = benchboot_results::latency::interval_rates(&timeline);
    assert_eq!(rates.len(), 10, "{rates:?}");
    let fast = 4096.0 / 10e-6 / (1 << 20) as f64;
    let near = |r: f64, want: f64| (r / want - 1.0).abs() < 0.02;
    assert!(near(rates[0].mib_per_s, fast), "{rates:?}");
    assert!(near(rates[1].mib_per_s, fast), "{rates:?}");
    for r in &rates[3..] {
        assert!(near(r.mib_per_s, fast / 4.0), "{rates:?}");
    }
    assert_eq!(timeline.last().unwrap().bytes, 100_000 * 4096);
}

#[test]
fn random_io_times_every_op_without_its_preparation_and_threads_merge() {
    let now = Rc::new(Cell::new(0));
    let mut clock = MockClock {
        now: now.clone(),
        step: 0,
    };
    let mut run = |seed: u64, slow_every: u64| {
        let mut hist = LatencyHistogram::new();
        let mut buf = [0u8; 4096];
        let mut n = 0u64;
        let ios = random_loop(
            &mut clock,
            0,
            u64::MAX,
            RandomOffsets::new(seed, 1 << 20, 4096).take(1_000),
            &mut buf,
            &mut hist,
            // The stamping costs 1 s: it must not show in the latencies.
            |_, _, _| now.set(now.get() + 1_000 * MS),
            |_, _| -> Result<(), ()> {
                n += 1;
                let c = if n.is_multiple_of(slow_every) {
                    8 * MS
                } else {
                    200_000
                };
                now.set(now.get() + c);
                Ok(())
            },
        )
        .unwrap();
        (ios, hist)
    };
    let (a, mut ha) = run(1, 100);
    let (b, hb) = run(2, 50);
    assert_eq!((a, b), (1_000, 1_000));
    ha.merge(&hb);
    let l = ha.to_latency(2_000).unwrap();
    assert_eq!((l.count, l.min_ns, l.max_ns), (2_000, 200_000, 8 * MS));
    // 30 of 2,000 at 8 ms: p99 (rank 1,980) is one of them, p90 is not.
    let p = l.percentiles();
    assert!(within_one_bucket(p.p90_ns, 200_000), "{p:?}");
    assert!(within_one_bucket(p.p99_ns, 8 * MS), "{p:?}");
}

#[test]
fn random_io_stops_at_its_deadline_after_one_op_at_least() {
    let now = Rc::new(Cell::new(0));
    let mut clock = MockClock {
        now: now.clone(),
        step: 0,
    };
    let mut hist = LatencyHistogram::new();
    let ios = random_loop(
        &mut clock,
        0,
        1,
        RandomOffsets::new(1, 1 << 20, 4096),
        &mut [0u8; 512],
        &mut hist,
        |_, _, _| {},
        |_, _| -> Result<(), ()> {
            now.set(now.get() + 5);
            Ok(())
        },
    )
    .unwrap();
    assert_eq!((ios, hist.count()), (1, 1));
}
