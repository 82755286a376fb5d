//! Storage engine tests with a mock clock and mock sinks.

use super::*;
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
    // Checked every 8192 writes: the first check past 10 ms is at 16384 writes.
    assert_eq!(calls_per_clock_check(8), 8192);
    assert_eq!(sink.calls, 16_384);
    assert_eq!(t.bytes, 16_384 * 8);
    assert_eq!(t.nanos, 16_384 * 1_000);
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
