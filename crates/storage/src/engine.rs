//! The storage engine: timed write and read passes at one block size.
//!
//! Plain logic over [`Clock`] and `embedded_io` sinks/sources so the caps, the timed
//! region and the sums are unit-tested on the host with a mock clock. On the board the
//! sink/source is a [`SyncFile`] whose `flush` is `fsync(2)`: the flush to the device is
//! inside the timed write region (a write timed without it measures the page cache).

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
}

/// How many calls pass between two clock reads: about every 64 KiB, at least every call.
/// On a BCM2835 there is no architected timer, so `clock_gettime` is a real syscall
/// (no vDSO): reading it every 8 B write would double the syscalls being measured.
pub fn calls_per_clock_check(block_size: usize) -> u64 {
    (65_536 / block_size.max(1)).max(1) as u64
}

/// The bookkeeping both timed loops share: bytes moved, calls made, and the caps.
struct Loop {
    start: u64,
    bytes: u64,
    calls: u64,
    every: u64,
    caps: Caps,
}

impl Loop {
    fn start<C: Clock>(caps: Caps, call_size: usize, clock: &mut C) -> Loop {
        Loop {
            start: clock.now_ns(),
            bytes: 0,
            calls: 0,
            every: calls_per_clock_check(call_size),
            caps,
        }
    }

    fn byte_cap_reached(&self) -> bool {
        self.bytes >= self.caps.bytes
    }

    /// Counts one call of `n` bytes; true when the time cap has passed (checked every
    /// [`calls_per_clock_check`] calls).
    fn count<C: Clock>(&mut self, n: usize, clock: &mut C) -> bool {
        self.bytes += n as u64;
        self.calls += 1;
        self.calls.is_multiple_of(self.every) && clock.now_ns() - self.start >= self.caps.time_ns
    }

    fn finish<C: Clock>(self, stopped_by: StopReason, clock: &mut C) -> Timed {
        Timed {
            bytes: self.bytes,
            nanos: clock.now_ns() - self.start,
            stopped_by,
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
/// than one block) or `caps.time_ns` has passed, checked every
/// [`calls_per_clock_check`] writes.
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
    let mut l = Loop::start(caps, block.len(), clock);
    let stopped_by = loop {
        if l.byte_cap_reached() {
            break StopReason::Bytes;
        }
        stamp_block(block, l.bytes, tag);
        sink.write_all(block)?;
        if l.count(block.len(), clock) {
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
    let mut l = Loop::start(caps, buf.len(), clock);
    let stopped_by = loop {
        if l.byte_cap_reached() {
            break StopReason::Bytes;
        }
        let n = source.read(buf)?;
        if n == 0 {
            break StopReason::Eof;
        }
        if l.count(n, clock) {
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
