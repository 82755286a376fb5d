//! The whole-card pass (`benchboot probe --full`): every sector of the region written
//! once, sequentially, with position-stamped data, every write timed; then every sector
//! read back, timed, and checked (after untimed rewrites of the region's head and tail
//! that push a write cache out: [`full_pass`]).
//!
//! What H2testw and f3write/f3read do, plus what they do not show:
//!
//! * **The write-speed profile**: MiB/s per interval of the region (at most 1 % of it,
//!   [`FullOptions::intervals`]), and the read-speed profile likewise.
//! * **Where the sustained speed falls** ([`Fall`]): most SD cards and USB sticks write
//!   into an SLC cache at full speed and slow down once it fills. The profile is cut by
//!   binary segmentation (the split that leaves the least squared error around each
//!   side's mean, kept when the two sides' medians differ by [`FALL_RATIO`] or more and
//!   each side holds [`MIN_SEGMENT`] intervals), so a fall is placed at an interval's
//!   edge: within one interval of where it happened.
//! * **Write latency** ([`Latency`]: p50, p99, p99.9, the longest and where) and
//!   **stalls** ([`Stall`]): a write that took at least twice the median of the writes
//!   around it ([`STALL_WINDOW`] each side) and [`STALL_MIN_EXCESS_NS`] more than it.
//! * **Write latency per block size** ([`FullReport::latency_by_size`]): once every
//!   sector is verified, chunks spread over the region are written again, with their
//!   own stamps, in writes of each of [`LATENCY_SIZES`]: the latency a logger's 4 KiB
//!   write meets on a card whose cache is full, beside the pass's own 4 MiB writes.
//! * **Bad regions** ([`BadRegion`]): runs of sectors that did not hold their own data,
//!   with what they held (another offset's stamp, zeros, 0xff, garbage, an I/O error),
//!   and the wrap-around period the aliases give (the gcd of offset minus the offset
//!   held).
//!
//! No two written sectors are alike ([`crate::stamp`]: each names its own offset and the
//! run's nonce, the rest a xorshift stream seeded by both), so a deduplicating or
//! compressing controller gains nothing. The stamping happens before the clock starts:
//! the timed region holds the write (or read) call alone.

use serde::{Deserialize, Serialize};

use crate::stamp;
use crate::{human, human_offset, BlockDevice, Found, ProbeError, Verdict};

mod analysis;
mod idle;
mod read_back;
mod words;

pub use analysis::falls;
use analysis::{latency, profile};
use read_back::ReadBack;

/// A monotonic clock, ns. The host and PID 1 give [`MonotonicClock`]; tests a fake one
/// that the fake device moves.
pub trait Clock {
    fn now_ns(&mut self) -> u64;
    /// Waits `ns` without I/O (the idle check's pause); a fake clock moves instead.
    fn sleep_ns(&mut self, ns: u64) {
        std::thread::sleep(std::time::Duration::from_nanos(ns));
    }
}

/// `std::time::Instant` (CLOCK_MONOTONIC on Linux), ns since the clock was made.
pub struct MonotonicClock(std::time::Instant);

impl MonotonicClock {
    pub fn new() -> MonotonicClock {
        MonotonicClock(std::time::Instant::now())
    }
}

impl Default for MonotonicClock {
    fn default() -> MonotonicClock {
        MonotonicClock::new()
    }
}

impl Clock for MonotonicClock {
    fn now_ns(&mut self) -> u64 {
        self.0.elapsed().as_nanos() as u64
    }
}

/// What to cover and how.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct FullOptions {
    /// First byte written (rounded up to the sector).
    pub start_bytes: u64,
    /// End of the region (exclusive); `None`: the claimed end.
    pub end_bytes: Option<u64>,
    /// Written into every stamp.
    pub nonce: u64,
    /// Bytes per write and per read ([`DEFAULT_IO_BYTES`]); less when an interval is
    /// smaller.
    pub io_bytes: u64,
    /// The profiles' intervals over the region ([`DEFAULT_INTERVALS`], at least 100: at
    /// most 1 % each).
    pub intervals: u64,
    /// Rewritten before reading back, to push a write cache out (see [`full_pass`]);
    /// [`crate::DEFAULT_CACHE_FLUSH_BYTES`] by default.
    pub cache_flush_bytes: u64,
    /// Write sizes, bytes, whose latency is sampled after the read-back
    /// ([`LATENCY_SIZES`]); sizes that are not whole sectors, or not smaller than the
    /// pass's own writes, are left out.
    #[serde(default)]
    pub latency_sizes: Vec<u64>,
    /// Bytes written per sampled size ([`LATENCY_SAMPLE_BYTES`]; at most what the pass
    /// wrote).
    #[serde(default)]
    pub latency_sample_bytes: u64,
    /// After the pass (and only when its write speed fell and every sector held), rest
    /// this long, ns, then write again until the speed falls: what an idle pause gives
    /// back ([`IdleCheck`]). 0: no check (the default).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub idle_check_ns: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// 4 MiB per write: f3write's and H2testw's order of size, and a whole erase block of
/// most cards (SD Physical Layer Simplified Specification 4.13: AU sizes up to 4 MiB for
/// SDHC).
pub const DEFAULT_IO_BYTES: u64 = 4 << 20;
/// 200 intervals: 0.5 % of the region each.
pub const DEFAULT_INTERVALS: u64 = 200;
/// Two sides of the write profile whose medians differ by this factor are a fall.
pub const FALL_RATIO: f64 = 1.5;
/// Intervals each side of a fall holds at least (a stall or two inside one interval is
/// not a fall).
pub const MIN_SEGMENT: usize = 3;
/// Writes each side of a write whose median it is compared with (64 in all).
pub const STALL_WINDOW: usize = 32;
/// A stall is at least this much over its neighbours' median: 100 ms (PX4 measured
/// 471 ms on SD cards, PX4-Autopilot PR #4460).
pub const STALL_MIN_EXCESS_NS: u64 = 100_000_000;
/// Stalls and bad regions listed at most (all are counted).
pub const MAX_LISTED: usize = 64;
/// I/Os that fail in a row before the pass gives up.
pub const MAX_FAILURES_IN_A_ROW: u32 = 64;
/// Write sizes whose latency is sampled besides the pass's own: 4 KiB (a page; what a
/// logger's or a database's small synchronous write is), 64 KiB, 512 KiB.
pub const LATENCY_SIZES: [u64; 3] = [4 << 10, 64 << 10, 512 << 10];
/// Bytes rewritten per sampled write size: 32 MiB, in chunks of the pass's write size
/// spread evenly over the region (8192 writes of 4 KiB, 64 of 512 KiB).
pub const LATENCY_SAMPLE_BYTES: u64 = 32 << 20;

impl Default for FullOptions {
    /// The whole device, nonce 0 (give a fresh one), 4 MiB I/O, 200 intervals, 32 MiB
    /// of cache flush.
    fn default() -> FullOptions {
        FullOptions {
            start_bytes: 0,
            end_bytes: None,
            nonce: 0,
            io_bytes: DEFAULT_IO_BYTES,
            intervals: DEFAULT_INTERVALS,
            cache_flush_bytes: crate::DEFAULT_CACHE_FLUSH_BYTES,
            latency_sizes: LATENCY_SIZES.to_vec(),
            latency_sample_bytes: LATENCY_SAMPLE_BYTES,
            idle_check_ns: 0,
        }
    }
}

/// One interval of a profile: `bytes` from `offset` took `ns`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct Interval {
    pub offset: u64,
    pub bytes: u64,
    pub ns: u64,
}

impl Interval {
    /// MiB/s (2^20 bytes per second); 0 for an interval that took no time.
    pub fn mib_s(&self) -> f64 {
        mib_s(self.bytes, self.ns)
    }
}

/// Where the sustained write speed falls: the profile's medians before and after.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Fall {
    /// Byte offset of the first interval after the fall (its position in the pass:
    /// `at - region.0` bytes into it).
    pub at: u64,
    pub before_mib_s: f64,
    pub after_mib_s: f64,
    /// Bytes written to the device since benchboot opened it (the quick probe's writes
    /// and the pass's, [`crate::counted::Counted`]) before the first write of that
    /// interval: for the first fall, the size of the fast cache the card had when it
    /// was opened, within one interval. `None` when the device was not counted (and in
    /// documents before schema 1.14).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_at: Option<u64>,
}

/// What the device saw before the pass's first write, from its tally
/// ([`crate::counted::Tally`]; schema 1.14).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct Before {
    /// Bytes written since benchboot opened the device (in `benchboot probe --full` and
    /// PID 1's card check: the quick probe's, its window and cache flushes included).
    pub written_bytes: u64,
    /// ns from opening the device to its first write (the quick probe's); `None` when
    /// nothing was written before the pass. How long the card rested before benchboot
    /// opened it is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_write_after_open_ns: Option<u64>,
    /// ns the device was idle of writes before the pass's first write: since the last
    /// earlier write ended, or since it was opened (`since_open`) when there was none.
    pub idle_ns: u64,
    pub since_open: bool,
}

/// What an idle pause gave back ([`FullOptions::idle_check_ns`], schema 1.14): after
/// the pass the device rests, then the region is written again from its start (the
/// pass's own stamps: the data does not change) until the speed falls.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct IdleCheck {
    /// The pause asked for, ns.
    pub asked_ns: u64,
    /// ns the device was idle of writes before the check's first write (by its tally;
    /// the pause alone when it is not counted).
    pub idle_ns: u64,
    /// Bytes written fast before the speed fell: the fast cache the pause gave back.
    pub fast_bytes: u64,
    /// Bytes the check wrote in all.
    pub written_bytes: u64,
    /// Whether the speed fell within what was written; `false`: `fast_bytes` is a lower
    /// bound (the cap, twice the cache the pass found, was reached, or it stopped).
    pub fell: bool,
    /// A write slower than this is slow: the geometric mean of the pass's first fall's
    /// speeds before and after, MiB/s.
    pub threshold_mib_s: f64,
    /// Why the check ended before the speed fell or the cap (Ctrl-C, a time limit, a
    /// failed write).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// The distribution of write latencies, ns, for writes of `io_bytes`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct Latency {
    pub io_bytes: u64,
    pub count: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
    /// Offset of the longest write.
    pub max_at: u64,
}

/// A write that stalled: it took `ns`, `excess_ns` over its neighbours' median.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct Stall {
    pub at: u64,
    pub ns: u64,
    pub excess_ns: u64,
}

/// A run of sectors `[start, end)` that did not hold their own data; `found` is what the
/// first held (the run goes on while the next sector holds the same kind: for another
/// offset's stamp, at the same distance).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct BadRegion {
    pub start: u64,
    pub end: u64,
    pub found: Found,
}

/// What the whole-card pass found.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FullReport {
    pub claimed_bytes: u64,
    /// (start, end) bytes, end exclusive.
    pub region: (u64, u64),
    pub sector_bytes: u64,
    pub io_bytes: u64,
    pub interval_bytes: u64,
    /// Bytes written and the time of the writes plus the final flush, ns.
    pub written_bytes: u64,
    pub write_ns: u64,
    /// The final flush (fsync) alone, ns.
    pub flush_ns: u64,
    pub read_bytes: u64,
    pub read_ns: u64,
    pub write_profile: Vec<Interval>,
    pub read_profile: Vec<Interval>,
    pub falls: Vec<Fall>,
    pub write_latency: Option<Latency>,
    /// The write latency of each sampled smaller size ([`FullOptions::latency_sizes`]),
    /// measured after the read-back; empty when the pass stopped before it or found the
    /// card bad.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_by_size: Vec<Latency>,
    /// Why the latency sampling ended before its last size (a stop, failing writes);
    /// the sizes sampled until then are in `latency_by_size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_stopped: Option<String>,
    /// Stalls, in order (at most [`MAX_LISTED`]).
    pub stalls: Vec<Stall>,
    pub stall_count: u64,
    /// Bytes read back that held their own data, and that did not.
    pub good_bytes: u64,
    pub bad_bytes: u64,
    pub first_bad: Option<u64>,
    /// Bad regions, in order (at most [`MAX_LISTED`]).
    pub bad: Vec<BadRegion>,
    pub bad_region_count: u64,
    /// The wrap-around period the aliases give.
    pub wraps_at: Option<u64>,
    /// Why the pass did not cover the region (interrupted, too many failures).
    pub stopped: Option<String>,
    /// What the device saw before the pass (schema 1.14; `None` when it was not
    /// counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Before>,
    /// What an idle pause gave back, when [`FullOptions::idle_check_ns`] asked
    /// (schema 1.14).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_check: Option<IdleCheck>,
}

/// Which half of the pass, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FullPhase {
    Write,
    Read,
    /// The writes of each sampled size ([`FullOptions::latency_sizes`]).
    Latency,
}

/// Progress: `done` of `total` bytes of `phase`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FullProgress {
    pub phase: FullPhase,
    pub done: u64,
    pub total: u64,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Bad sectors merged into regions as they are read.
#[derive(Default)]
struct BadRegions {
    list: Vec<BadRegion>,
    open: Option<(BadRegion, (u8, u64))>,
    count: u64,
    bytes: u64,
    first: Option<u64>,
    period: u64,
}

impl BadRegions {
    fn add(&mut self, at: u64, len: u64, found: Found) {
        let key = match &found {
            Found::Alias { holds } => (0, at.wrapping_sub(*holds)),
            Found::Stale { holds, .. } => (1, at.wrapping_sub(*holds)),
            Found::Zeros => (2, 0),
            Found::Ones => (3, 0),
            Found::Garbage { .. } => (4, 0),
            Found::ReadError { .. } => (5, 0),
            Found::WriteError { .. } => (6, 0),
        };
        if let Found::Alias { holds } = found {
            self.period = gcd(self.period, at.abs_diff(holds));
        }
        self.bytes += len;
        self.first = Some(self.first.map_or(at, |f| f.min(at)));
        if let Some((r, k)) = &mut self.open {
            if r.end == at && *k == key {
                r.end += len;
                return;
            }
        }
        self.close();
        self.count += 1;
        self.open = Some((
            BadRegion {
                start: at,
                end: at + len,
                found,
            },
            key,
        ));
    }

    fn close(&mut self) {
        if let Some((r, _)) = self.open.take() {
            if self.list.len() < MAX_LISTED {
                self.list.push(r);
            }
        }
    }
}

/// Writes and reads back every sector of the region (see the module doc). `progress` is
/// called after every I/O; `stop` before every I/O (Ctrl-C): when it says so the pass
/// ends, flushes what it wrote and reports what it covered.
///
/// A card's write cache holds the last data written, and would answer the read-back of
/// the region's tail from the cache: before reading the tail the pass rewrites the
/// region's first [`FullOptions::cache_flush_bytes`] (the same stamps), and before
/// reading that head it rewrites the tail, each time pushing the other out to the
/// medium (f3's `overwhelm_cache`, done with the region's own data). A region smaller
/// than twice the flush size flushes with half of itself.
///
/// # Errors
/// Only when the pass cannot start (block size, region), as [`crate::probe`].
pub fn full_pass(
    dev: &mut dyn BlockDevice,
    clock: &mut dyn Clock,
    opts: &FullOptions,
    progress: &mut dyn FnMut(FullProgress),
    stop: &mut dyn FnMut() -> bool,
) -> Result<FullReport, ProbeError> {
    let claimed = dev.size_bytes();
    let g = geometry(dev, opts)?;
    let (start, end, sector, io, interval) = (g.start, g.end, g.sector, g.io, g.interval);
    let span = end - start;
    let mut bad = BadRegions::default();
    let w = write_pass(dev, clock, &g, opts, &mut bad, progress, stop);
    let (writes, written_end, mut stopped) = (w.writes, w.end, w.stopped);
    let t0 = clock.now_ns();
    let flushed = dev.flush();
    let flush_ns = clock.now_ns().saturating_sub(t0);
    if let Err(e) = &flushed {
        stopped.get_or_insert(format!("flush: {e}"));
    }

    let mut rb = ReadBack {
        dev,
        clock,
        sector,
        io,
        nonce: opts.nonce,
        buf: w.buf,
        failed: w.failed,
        reads: Vec::with_capacity(writes.len()),
        good_bytes: 0,
        failures: 0,
    };
    // A Ctrl-C or a failed flush ends the pass; writes that kept failing do not: what
    // was written before them is read back.
    let mut read_back = false;
    if !w.interrupted && flushed.is_ok() {
        let region = (start, written_end);
        match read_back::read_back(&mut rb, region, opts, &mut bad, progress, stop) {
            Ok(()) => read_back = true,
            Err((why, done)) => {
                let before = stopped.take().map(|s| format!("{s}; ")).unwrap_or_default();
                stopped = Some(format!(
                    "{before}{why} after reading back {} of {}",
                    human(done),
                    human(span)
                ));
            }
        }
    }
    // Every sector is verified and held: rewriting chunks with their own stamps changes
    // nothing the verdict rests on. A stop here ends the sampling, not the verdict. A
    // card found bad is not sampled (its latency is moot, and a dying card would be
    // written for hours).
    let (latency_by_size, latency_stopped) = if read_back && stopped.is_none() && bad.count == 0 {
        sample_latencies(&mut rb, (start, written_end), opts, progress, stop)
    } else {
        (Vec::new(), None)
    };
    bad.close();
    bad.list.sort_by_key(|r| r.start);

    let (write_latency, stalls, stall_count) = latency(&writes, io);
    let write_profile = profile(&writes, start, interval);
    let falls = falls_written_at(falls(&write_profile), &writes, &w.counted);
    let idle_check = match falls.first() {
        Some(fall)
            if opts.idle_check_ns > 0 && read_back && stopped.is_none() && bad.count == 0 =>
        {
            let cache = fall.written_at.unwrap_or(fall.at - start);
            Some(idle::idle_check(
                &mut rb,
                (start, written_end),
                fall,
                cache,
                opts,
                stop,
            ))
        }
        _ => None,
    };
    let mut reads = rb.reads;
    reads.sort_by_key(|r| r.0);
    let period = bad.period;
    Ok(FullReport {
        claimed_bytes: claimed,
        region: (start, end),
        sector_bytes: sector,
        io_bytes: io,
        interval_bytes: interval,
        written_bytes: written_end - start,
        write_ns: total(&writes, |w| w.2).saturating_add(flush_ns),
        flush_ns,
        read_bytes: total(&reads, |r| r.1),
        read_ns: total(&reads, |r| r.2),
        read_profile: profile(&reads, start, interval),
        write_profile,
        falls,
        write_latency,
        latency_by_size,
        latency_stopped,
        stalls,
        stall_count,
        good_bytes: rb.good_bytes,
        bad_bytes: bad.bytes,
        first_bad: bad.first,
        bad_region_count: bad.count,
        bad: bad.list,
        wraps_at: (period >= sector && period % sector == 0).then_some(period),
        stopped,
        before: w.before,
        idle_check,
    })
}

/// The sum of one field (`of`) of `(offset, bytes, ns)` I/Os, saturating.
/// Places each fall in bytes written since the device was opened: `counted[i]` is the
/// device's count just before write `i` of `writes` (offset-sorted, the pass's own
/// order). Without a count for every write (a device not counted) the falls keep only
/// their place in the pass.
fn falls_written_at(
    mut falls: Vec<Fall>,
    writes: &[(u64, u64, u64)],
    counted: &[u64],
) -> Vec<Fall> {
    if counted.len() == writes.len() {
        for f in &mut falls {
            let i = writes.partition_point(|x| x.0 < f.at);
            f.written_at = counted.get(i).copied();
        }
    }
    falls
}

fn total(ios: &[(u64, u64, u64)], of: impl Fn(&(u64, u64, u64)) -> u64) -> u64 {
    ios.iter().fold(0u64, |a, w| a.saturating_add(of(w)))
}

/// The pass's sizes, bytes: its region, sector, I/O (whole sectors, at most 64 MiB and
/// an interval) and profile interval (whole I/Os).
struct Geometry {
    start: u64,
    end: u64,
    sector: u64,
    io: u64,
    interval: u64,
}

/// The pass's sizes on `dev` for `opts`.
fn geometry(dev: &mut dyn BlockDevice, opts: &FullOptions) -> Result<Geometry, ProbeError> {
    let sector = dev.block_bytes();
    let (start, end) = crate::region(dev, opts.start_bytes, opts.end_bytes, sector)?;
    let span = end - start;
    let interval = (span / opts.intervals.clamp(100, 1 << 20)).max(sector) / sector * sector;
    let io = opts.io_bytes.clamp(sector, 64 << 20).min(interval) / sector * sector;
    Ok(Geometry {
        start,
        end,
        sector,
        io,
        interval: interval / io * io,
    })
}

/// What the writes left: each one's `(offset, bytes, ns)`, the ranges that failed, where
/// they ended, and why they stopped early (`interrupted`: a Ctrl-C); their buffer.
struct Written {
    buf: Vec<u8>,
    writes: Vec<(u64, u64, u64)>,
    /// Per write, the bytes the device's tally counted before it (empty when the device
    /// is not counted).
    counted: Vec<u64>,
    /// The device's tally before the first write.
    before: Option<Before>,
    failed: Vec<(u64, u64)>,
    end: u64,
    stopped: Option<String>,
    interrupted: bool,
}

/// Writes the region's stamps, lowest first, each write timed alone; stops at a Ctrl-C
/// or after [`MAX_FAILURES_IN_A_ROW`] failed writes (each failed range is bad).
fn write_pass(
    dev: &mut dyn BlockDevice,
    clock: &mut dyn Clock,
    g: &Geometry,
    opts: &FullOptions,
    bad: &mut BadRegions,
    progress: &mut dyn FnMut(FullProgress),
    stop: &mut dyn FnMut() -> bool,
) -> Written {
    let (start, end, io) = (g.start, g.end, g.io);
    let span = end - start;
    let mut w = Written {
        buf: vec![0u8; io as usize],
        writes: Vec::with_capacity(span.div_ceil(io) as usize),
        counted: Vec::new(),
        before: dev.tally().map(|t| {
            let (idle_ns, since_open) = t.idle_ns();
            Before {
                written_bytes: t.written_bytes,
                first_write_after_open_ns: t.first_write_start_ns,
                idle_ns,
                since_open,
            }
        }),
        failed: Vec::new(),
        end: start,
        stopped: None,
        interrupted: false,
    };
    let mut failures = 0u32;
    let mut o = start;
    while o < end {
        if stop() {
            w.interrupted = true;
            w.stopped = Some(format!(
                "interrupted after writing {} of {}",
                human(o - start),
                human(span)
            ));
            break;
        }
        let len = io.min(end - o);
        let b = &mut w.buf[..len as usize];
        stamp::stamp(b, o, opts.nonce, g.sector as usize);
        let t0 = clock.now_ns();
        let r = dev.write_at(o, b);
        let t1 = clock.now_ns();
        match r {
            Ok(()) => {
                failures = 0;
                w.writes.push((o, len, t1.saturating_sub(t0)));
                if let Some(t) = dev.tally() {
                    w.counted.push(t.written_bytes.saturating_sub(len));
                }
            }
            Err(e) => {
                bad.add(
                    o,
                    len,
                    Found::WriteError {
                        error: e.to_string(),
                    },
                );
                w.failed.push((o, len));
                failures += 1;
                if failures >= MAX_FAILURES_IN_A_ROW {
                    w.stopped = Some(format!(
                        "{failures} writes in a row failed, the last at {}",
                        human_offset(o)
                    ));
                    o += len;
                    break;
                }
            }
        }
        o += len;
        progress(FullProgress {
            phase: FullPhase::Write,
            done: o - start,
            total: span,
        });
    }
    w.end = o;
    w
}

/// The latency of writes of each of `opts.latency_sizes` (see [`LATENCY_SIZES`]): each
/// rewrites the same chunks of the pass's write size, spread evenly over `[a, b)` (those
/// whose first write failed left out), with their own stamps, each write timed; a flush
/// (untimed) after each size. A failed write, and a chunk's shorter last write, are
/// left out of the figures.
fn sample_latencies(
    rb: &mut ReadBack<'_>,
    (a, b): (u64, u64),
    opts: &FullOptions,
    progress: &mut dyn FnMut(FullProgress),
    stop: &mut dyn FnMut() -> bool,
) -> (Vec<Latency>, Option<String>) {
    let io = rb.io;
    let mut sizes: Vec<u64> = opts
        .latency_sizes
        .iter()
        .copied()
        .filter(|&s| s > 0 && s % rb.sector == 0 && s < io)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let whole = (b - a) / io;
    let n = opts.latency_sample_bytes.div_ceil(io).min(whole);
    let chunks: Vec<u64> = (0..n)
        .map(|k| a + (u128::from(whole) * u128::from(k) / u128::from(n)) as u64 * io)
        .filter(|&o| !rb.write_failed(o, io))
        .collect();
    let total = chunks.len() as u64 * io * sizes.len() as u64;
    let mut done = 0;
    let mut failures = 0u32;
    let mut out = Vec::new();
    for &size in &sizes {
        let mut writes = Vec::new();
        for &c in &chunks {
            for o in (c..c + io).step_by(size as usize) {
                let why = if stop() {
                    Some("interrupted".to_owned())
                } else if failures >= MAX_FAILURES_IN_A_ROW {
                    Some(format!("{failures} writes in a row failed"))
                } else {
                    None
                };
                if let Some(why) = why {
                    out.extend(latency(&writes, size).0);
                    return (
                        out,
                        Some(format!("{why} while writing {} at a time", human(size))),
                    );
                }
                // The chunk's last write may be shorter: written, not counted.
                let len = size.min(c + io - o);
                let buf = &mut rb.buf[..len as usize];
                stamp::stamp(buf, o, opts.nonce, rb.sector as usize);
                let t0 = rb.clock.now_ns();
                let r = rb.dev.write_at(o, buf);
                let t1 = rb.clock.now_ns();
                if r.is_ok() {
                    failures = 0;
                    writes.push((o, len, t1.saturating_sub(t0)));
                } else {
                    failures += 1;
                }
                done += len;
                progress(FullProgress {
                    phase: FullPhase::Latency,
                    done,
                    total,
                });
            }
        }
        let _ = rb.dev.flush();
        out.extend(latency(&writes, size).0);
    }
    (out, None)
}

/// Bytes over nanoseconds in MiB/s (2^20 bytes per second); 0 for an empty span.
fn mib_s(bytes: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        bytes as f64 / (1u64 << 20) as f64 / (ns as f64 / 1e9)
    }
}
