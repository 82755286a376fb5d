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
    let t = timed_write(&mut sink, &[7u8; 4096], caps, &mut clock).unwrap();
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
    let t = timed_write(&mut sink, &[1u8; 8], caps, &mut clock).unwrap();
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
    let err = timed_write(&mut sink, &[0u8; 512], caps, &mut clock).unwrap_err();
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
    let block = pattern_block(4096, 1);
    let caps = Caps {
        bytes: 256 * 1024,
        time_ns: u64::MAX,
    };
    let mut f = SyncFile(std::fs::File::create(&path).unwrap());
    let w = timed_write(&mut f, &block, caps, &mut MonotonicClock).unwrap();
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
