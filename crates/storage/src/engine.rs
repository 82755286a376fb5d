//! The storage engine: timed write and read passes at one block size.
//!
//! Plain logic over [`Clock`] and `embedded_io` sinks/sources so the caps, the timed
//! region and the sums are unit-tested on the host with a mock clock. On the board the
//! sink/source is a [`SyncFile`] whose `flush` is `fsync(2)`: the flush to the device is
//! inside the timed write region (a write timed without it measures the page cache).

use benchboot_results::latency::{Latency, LatencyHistogram, TimelinePoint, TimelineRecorder};
use benchboot_results::StopReason;

/// A monotonic clock in nanoseconds.
pub trait Clock {
    fn now_ns(&mut self) -> u64;
}

/// `clock_gettime(CLOCK_MONOTONIC)`.
pub struct MonotonicClock;

impl Clock for MonotonicClock {
    fn now_ns(&mut self) -> u64 {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
        t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
    }
}

/// `clock_gettime(CLOCK_BOOTTIME)`, ns: the clock of the results' step windows and energy
/// marks ([`benchboot_results::StorageMeasurement::begin_ns`]). macOS has no
/// `CLOCK_BOOTTIME` (`benchboot storage` runs there too): its `CLOCK_MONOTONIC`, the clock
/// of that run's own windows.
pub fn boottime_ns() -> u64 {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let id = rustix::time::ClockId::Boottime;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let id = rustix::time::ClockId::Monotonic;
    let t = rustix::time::clock_gettime(id);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// When a timed loop stops: at `bytes` bytes or `time_ns` nanoseconds, whichever first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub bytes: u64,
    pub time_ns: u64,
}

/// What one timed pass moved and how long it took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timed {
    pub bytes: u64,
    pub nanos: u64,
    pub stopped_by: StopReason,
    /// Calls the pass made (writes, or reads that returned data).
    pub calls: u64,
}

/// How many calls pass between two clock reads: about every 64 KiB, at least every call.
/// On a BCM2835 there is no architected timer, so `clock_gettime` is a real syscall
/// (no vDSO): reading it every 8 B write would double the syscalls being measured.
pub fn calls_per_clock_check(block_size: usize) -> u64 {
    (65_536 / block_size.max(1)).max(1) as u64
}

/// What a pass records beside its sums, allocated before the timed loop (the histogram's
/// 14.5 KiB counts, the timeline's fixed 128 points) so nothing allocates inside it:
/// the completion latency of one call in each group of [`calls_per_clock_check`] calls
/// (every call at 64 KiB and up), and the cumulative bytes over time.
#[derive(Debug, Clone, Default)]
pub struct PassRecord {
    pub latency: LatencyHistogram,
    pub timeline: TimelineRecorder,
}

impl PassRecord {
    /// An empty record: histogram allocated, timeline at its first 250 ms interval.
    pub fn new() -> PassRecord {
        PassRecord::default()
    }

    /// The results' form of the pass `t`: its latency (`None` when no call was timed)
    /// and its timeline, ending at the pass's end (after the flush of a write).
    pub fn into_results(self, t: &Timed) -> (Option<Latency>, Vec<TimelinePoint>) {
        (
            self.latency.to_latency(t.calls),
            self.timeline.finish(t.nanos, t.bytes),
        )
    }
}

/// xorshift64 (Marsaglia 2003): the next state of `x` (never 0 from a non-zero state).
fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// The bookkeeping both timed loops share: bytes moved, calls made, the caps, and which
/// call of the current group is timed.
struct Loop<'r> {
    start: u64,
    bytes: u64,
    calls: u64,
    every: u64,
    caps: Caps,
    /// The position (0..every) of the timed call in the current group.
    pick: u64,
    rng: u64,
    rec: &'r mut PassRecord,
}

impl<'r> Loop<'r> {
    fn start<C: Clock>(
        caps: Caps,
        call_size: usize,
        seed: u64,
        rec: &'r mut PassRecord,
        clock: &mut C,
    ) -> Loop<'r> {
        Loop {
            start: clock.now_ns(),
            bytes: 0,
            calls: 0,
            every: calls_per_clock_check(call_size),
            caps,
            pick: 0,
            rng: splitmix64(seed) | 1,
            rec,
        }
    }

    fn byte_cap_reached(&self) -> bool {
        self.bytes >= self.caps.bytes
    }

    /// Makes the loop's next call through `f`: timed (a clock read just before and just
    /// after it, nothing else between) when it is its group's pick, a position drawn by
    /// xorshift at each group's start so a device's periodic stall cannot alias the
    /// sample. Returns `f`'s value and the timed span's ends, ns.
    fn call<C: Clock, T, E>(
        &mut self,
        clock: &mut C,
        f: impl FnOnce() -> Result<T, E>,
    ) -> Result<(T, Option<(u64, u64)>), E> {
        let pos = self.calls % self.every;
        if pos == 0 && self.every > 1 {
            self.pick = xorshift(&mut self.rng) % self.every;
        }
        if pos != self.pick {
            return Ok((f()?, None));
        }
        let t0 = clock.now_ns();
        let v = f()?;
        let t1 = clock.now_ns();
        Ok((v, Some((t0, t1))))
    }

    /// Counts one call of `n` bytes and records its `span` when it was timed (latency,
    /// timeline); true when the time cap has passed, read at the timed call's end.
    fn count(&mut self, n: usize, span: Option<(u64, u64)>) -> bool {
        self.bytes += n as u64;
        self.calls += 1;
        let Some((t0, t1)) = span else {
            return false;
        };
        let elapsed = t1.saturating_sub(self.start);
        self.rec.latency.record(t1.saturating_sub(t0));
        self.rec.timeline.offer(elapsed, self.bytes);
        elapsed >= self.caps.time_ns
    }

    fn finish<C: Clock>(self, stopped_by: StopReason, clock: &mut C) -> Timed {
        Timed {
            bytes: self.bytes,
            nanos: clock.now_ns() - self.start,
            stopped_by,
            calls: self.calls,
        }
    }
}

/// Bytes between two stamps: 512 B, the smallest logical sector of any disk here and
/// the unit fio's `scramble_buffers` stamps (fio HOWTO), so no sector a controller may
/// deduplicate or compress is written twice alike.
pub const STAMP_STRIDE: u64 = 512;
/// Bytes of one stamp: the sector's absolute byte offset, then the write's tag (both
/// little-endian `u64`).
pub const STAMP_BYTES: usize = 16;

/// Stamps the `block` that will be written at byte `offset`: at every multiple of
/// [`STAMP_STRIDE`] in `offset..offset + block.len()`, the 16 bytes `[position, tag]`.
/// A stamp that straddles the block's start or end gets the bytes that fall inside, so
/// across consecutive blocks of any size (1 B up) every 512 B sector of the file starts
/// with its own position: no two sectors of one pass are alike, and two passes (or two
/// random writes) with different `tag`s differ at every sector.
///
/// Cost: 16 bytes stored per 512 B (3 % of the bytes, 1/8 of the cache lines), nothing
/// per byte; `cargo xtask bench storage` prints it per 4 MiB block.
pub fn stamp_block(block: &mut [u8], offset: u64, tag: u64) {
    let end = offset + block.len() as u64;
    // The first stamp that reaches into the block may start up to 15 bytes before it.
    let mut p = offset
        .saturating_sub(STAMP_BYTES as u64 - 1)
        .next_multiple_of(STAMP_STRIDE);
    let mut stamp = [0u8; STAMP_BYTES];
    while p < end {
        stamp[..8].copy_from_slice(&p.to_le_bytes());
        stamp[8..].copy_from_slice(&tag.to_le_bytes());
        if p >= offset && p + STAMP_BYTES as u64 <= end {
            let at = (p - offset) as usize;
            block[at..at + STAMP_BYTES].copy_from_slice(&stamp);
        } else {
            for (i, &b) in stamp.iter().enumerate() {
                let a = p + i as u64;
                if (offset..end).contains(&a) {
                    block[(a - offset) as usize] = b;
                }
            }
        }
        p += STAMP_STRIDE;
    }
}

/// Writes `block` repeatedly from offset 0, then flushes; times the whole region
/// including the flush.
///
/// Before each write the block is stamped with its position ([`stamp_block`], `tag`
/// names the pass): a deduplicating or compressing controller sees every sector of the
/// pass distinct, at 16 bytes stored per 512 B and no per-byte work.
///
/// Stops once at least `caps.bytes` are written (the last block may pass the cap by less
/// than one block) or `caps.time_ns` has passed, checked at the one timed write of each
/// group of [`calls_per_clock_check`] writes.
///
/// # Errors
/// The first error of the sink (`write` or `flush`).
pub fn timed_write<W: embedded_io::Write, C: Clock>(
    sink: &mut W,
    block: &mut [u8],
    tag: u64,
    caps: Caps,
    clock: &mut C,
) -> Result<Timed, W::Error> {
    timed_write_recorded(sink, block, tag, caps, clock, &mut PassRecord::new())
}

/// [`timed_write`], recording into `rec` the latency of one write in each group of
/// [`calls_per_clock_check`] (the `write_all` alone, not the stamping) and the timeline
/// ([`Loop::call`]). The flush is in the pass's time and the timeline's last point, not
/// in the latencies (as fio's `end_fsync`).
///
/// # Errors
/// The first error of the sink (`write` or `flush`).
pub fn timed_write_recorded<W: embedded_io::Write, C: Clock>(
    sink: &mut W,
    block: &mut [u8],
    tag: u64,
    caps: Caps,
    clock: &mut C,
    rec: &mut PassRecord,
) -> Result<Timed, W::Error> {
    let mut l = Loop::start(caps, block.len(), tag, rec, clock);
    let stopped_by = loop {
        if l.byte_cap_reached() {
            break StopReason::Bytes;
        }
        stamp_block(block, l.bytes, tag);
        let ((), span) = l.call(clock, || sink.write_all(block))?;
        if l.count(block.len(), span) {
            break StopReason::Time;
        }
    };
    sink.flush()?;
    Ok(l.finish(stopped_by, clock))
}

/// Reads into `buf` until end of file, `caps.bytes`, or `caps.time_ns`; times the loop.
///
/// # Errors
/// The first error of the source.
pub fn timed_read<R: embedded_io::Read, C: Clock>(
    source: &mut R,
    buf: &mut [u8],
    caps: Caps,
    clock: &mut C,
) -> Result<Timed, R::Error> {
    timed_read_recorded(source, buf, caps, clock, &mut PassRecord::new())
}

/// [`timed_read`], recording into `rec` the latency of one read in each group of
/// [`calls_per_clock_check`] (the read that sees end of file is not counted) and the
/// timeline.
///
/// # Errors
/// The first error of the source.
pub fn timed_read_recorded<R: embedded_io::Read, C: Clock>(
    source: &mut R,
    buf: &mut [u8],
    caps: Caps,
    clock: &mut C,
    rec: &mut PassRecord,
) -> Result<Timed, R::Error> {
    let mut l = Loop::start(caps, buf.len(), buf.len() as u64, rec, clock);
    let stopped_by = loop {
        if l.byte_cap_reached() {
            break StopReason::Bytes;
        }
        let (n, span) = l.call(clock, || source.read(buf))?;
        if n == 0 {
            break StopReason::Eof;
        }
        if l.count(n, span) {
            break StopReason::Time;
        }
    };
    Ok(l.finish(stopped_by, clock))
}

/// A block of `len` bytes of a seeded xorshift pattern (not zeros: some devices and
/// filesystems treat zero blocks specially).
pub fn pattern_block(len: usize, seed: u64) -> Vec<u8> {
    // splitmix-style scramble so that nearby seeds give unrelated streams.
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// splitmix64 (Steele, Lea, Flood 2014): one 64-bit word of the verification pattern.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The verification pattern byte at absolute `offset`: every 8-byte word is stamped with
/// its own position, so data that a fake-capacity card wraps around to an earlier
/// address reads back wrong.
fn pattern_byte(offset: u64, seed: u64) -> u8 {
    let word = splitmix64(seed ^ (offset & !7));
    word.to_le_bytes()[(offset & 7) as usize]
}

/// Fills `buf` with the verification pattern for bytes `start..start + buf.len()`.
pub fn fill_pattern(buf: &mut [u8], start: u64, seed: u64) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = pattern_byte(start + i as u64, seed);
    }
}

/// The absolute offset of the first byte of `buf` (read from `start`) that differs from
/// the pattern, or `None` when all match.
pub fn first_mismatch(buf: &[u8], start: u64, seed: u64) -> Option<u64> {
    buf.iter()
        .enumerate()
        .find(|&(i, &b)| b != pattern_byte(start + i as u64, seed))
        .map(|(i, _)| start + i as u64)
}

/// The block-aligned offsets a random-I/O thread visits: xorshift64 over
/// `region / block` slots, seeded per thread.
pub struct RandomOffsets {
    state: u64,
    slots: u64,
    block: u64,
}

impl RandomOffsets {
    pub fn new(seed: u64, region: u64, block: u64) -> RandomOffsets {
        RandomOffsets {
            state: splitmix64(seed) | 1,
            slots: (region / block.max(1)).max(1),
            block,
        }
    }
}

impl Iterator for RandomOffsets {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        Some((self.state % self.slots) * self.block)
    }
}

/// One random-I/O thread's loop: at each offset of `offsets`, `prepare(buf, offset, n)`
/// (untimed: the stamping of a write, `n` the I/Os done so far), then `io(buf, offset)`
/// between two clock reads, its completion latency recorded in `hist` (allocated by the
/// caller before the clock started). At least one I/O; stops once `duration_ns` have
/// passed since `start_ns` (read at the last I/O's end) or `offsets` ends. Returns the
/// I/Os done.
///
/// # Errors
/// The first error of `io`.
#[allow(clippy::too_many_arguments)]
pub fn random_loop<C: Clock, E>(
    clock: &mut C,
    start_ns: u64,
    duration_ns: u64,
    offsets: impl Iterator<Item = u64>,
    buf: &mut [u8],
    hist: &mut LatencyHistogram,
    mut prepare: impl FnMut(&mut [u8], u64, u64),
    mut io: impl FnMut(&mut [u8], u64) -> Result<(), E>,
) -> Result<u64, E> {
    let mut ios = 0u64;
    for offset in offsets {
        prepare(buf, offset, ios);
        let t0 = clock.now_ns();
        io(buf, offset)?;
        let t1 = clock.now_ns();
        hist.record(t1.saturating_sub(t0));
        ios += 1;
        if t1.saturating_sub(start_ns) >= duration_ns {
            break;
        }
    }
    Ok(ios)
}

/// A file whose `flush` is `fsync(2)`; reads and writes retry on EINTR.
pub struct SyncFile(pub std::fs::File);

impl embedded_io::ErrorType for SyncFile {
    type Error = std::io::Error;
}

impl embedded_io::Write for SyncFile {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        loop {
            match std::io::Write::write(&mut self.0, buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                other => return other,
            }
        }
    }

    /// `fsync(2)`: data and metadata reach the device.
    fn flush(&mut self) -> Result<(), Self::Error> {
        self.0.sync_all()
    }
}

impl embedded_io::Read for SyncFile {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        loop {
            match std::io::Read::read(&mut self.0, buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                other => return other,
            }
        }
    }
}

#[cfg(test)]
mod tests;
