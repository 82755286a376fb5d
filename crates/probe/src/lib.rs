//! Fake-capacity probe: is the card as large as it claims?
//!
//! Plain logic over [`BlockDevice`] (PID 1 and the host give it a real block device, the
//! tests a [`fake`] one). It writes position-stamped blocks (every sector names its own
//! byte offset and the run's nonce, plus a checksum: [`stamp`]) at spread offsets from
//! the first to the claimed last sector of a region, reads them back, and reports the
//! highest offset that held its own data, the first that did not, what the bad blocks
//! held and a [`Verdict`].
//!
//! # The algorithm
//!
//! 1. **Coarse pass.** Samples: a probe block (max(4 KiB, sector)) every `d` bytes
//!    (`d` = region / 1024..16384, so at most 64 MiB apart), the last block, blocks at
//!    powers of two from the start, from the end and absolute (f3's power-of-two
//!    wraps, FAT-preserving fakes that keep the last few MiB). Written **highest
//!    first**, then a contiguous **window** at the region's start (`max(d,
//!    cache_flush_bytes)` bytes, stamped too) is written last. Then flush, reopen,
//!    read every sample.
//! 2. **Why this order exposes a wrap of any modulus.** A card that wraps at `M` stores
//!    offset `x` at `x mod M`. A later (lower) write overwrites its earlier (higher)
//!    alias, so the high block reads back the low one's stamp, never the other way
//!    round: the low, real part keeps its own data. The window is at least `d` wide and
//!    the samples are `d` apart, so for any `M` with `M + start + window <= end` some
//!    sample lands on the window's alias: it holds the stamp of `x`, and `M` divides
//!    `offset - x`. The gcd of those differences is the candidate period.
//! 3. **The check of a period.** A window wider than `M` (32 MiB of flush data on a
//!    card of 16 MiB behind its claim: the classic counterfeit) lands on itself, so the
//!    coarse pass also reads aliases *below* `M` and cannot tell the real part. A
//!    separate pass checks the candidate `m` with writes that cannot land on each other
//!    if the card does wrap at `m`: the high alias `m + start`, then 32 blocks spread
//!    over `[start, m - f)` lowest first, then flush data at `[m - f, m)` and its
//!    aliases `k m` above it (`f` = min(flush, (m - start) / 2)): as many addresses as
//!    the flush size, one place on the medium. `m` holds when every block below `m` reads its
//!    own data and `m + start` reads the stamp of `start`; samples below `m` that alias
//!    each other give a shorter period (a gcd that came out a multiple of `M`), checked
//!    in turn. Real size = `M`, exact to the sector; the coarse pass's aliases below it
//!    are not listed as bad blocks.
//! 4. **Cache.** The window is written after every sample, so the device's write cache
//!    holds window data and the samples are read from the medium. In refinement passes
//!    `cache_flush_bytes` of stamped data are written outside the interval probed,
//!    after its samples and before reading them back (f3's `overwhelm_cache`). Without
//!    it a card with a write-back cache serves the refinement samples from the cache and
//!    the real size comes out too high (the `cache_*` tests show it).
//! 5. **Refinement** (dropped writes, garbage, I/O errors): between the highest good
//!    block `g` and the first bad sector `h`, passes of 32 evenly spaced blocks (high
//!    first, flush data, read), each moving `g` up or `h` down, until `h - (g + block)`
//!    is within the resolution (`resolution_bytes`, default max(1 MiB, claimed / 4096)).
//!    Every sector is checked, so `h` is a sector, not a block.
//!
//! A 64 GiB claim costs about 1,100 blocks + a 64 MiB window in the coarse pass and
//! a few passes of 32 blocks + the flush data: a few hundred MiB at most, not the card.
//!
//! # What f3probe misses, and what this does about it
//!
//! * **Wraps whose modulus is not a power of two** (f3's bug report github.com/AltraMayor/f3/issues/144: f3probe's
//!   `find_wrap` only tests `good_block + 2^k`). Here any modulus a multiple of the
//!   sector size is found (point 2), and every sector carries its own stamp, so a
//!   modulus that splits a probe block still shows whole stamps.
//! * **I/O errors** (f3 #86: a fake 32 GB card whose writes past ~8 GB fail, reported
//!   good; #228: a 256 GB card backed by 32 GB, f3probe says only "damaged" because it
//!   stops at the first I/O error). Here an I/O error (retried once) is a finding, not
//!   the end: it is recorded with its offset and text, the probe goes on, refines the
//!   boundary below it, and reports [`Verdict::IoErrors`] with where they start *and*
//!   how much held its data below them.
//! * **Sampling luck** (f3 #93, #243: different sizes on two runs; random samples and
//!   a cache size found by trial). Here the samples are deterministic (evenly spaced +
//!   powers of two + the last block) and the last block alone catches every fake that
//!   drops, errors or wraps everything past its real size.
//! * **FAT-preserving fakes** (real first N, real last few MiB, nothing between): the
//!   blocks at the end read good, the evenly spaced ones in the middle do not; the
//!   report counts the good samples above the first bad one
//!   ([`ProbeReport::good_above_first_bad`]) instead of calling the card genuine.
//!
//! # Limits
//!
//! The probe writes only inside the region, but on a card that wraps, a write beyond
//! the real size lands on the alias below it: below `start_bytes` too (the board's
//! partitions, when PID 1 probes unpartitioned space). The blocks are not backed up
//! and restored (f3probe's non-`--destructive` mode does). A wrap whose alias falls
//! wholly below the region (`M > end - start - window`) is not seen, nor checked when
//! `M <= start + 2 blocks`.
#![forbid(unsafe_code)]

pub mod counted;
mod engine;
pub mod fake;
pub mod full;
pub mod stamp;

use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use engine::{coarse_offsets, spread, Run, Stats, WrapCheck};

/// A block device as the probe sees it. Offsets and lengths the probe passes are
/// multiples of [`BlockDevice::block_bytes`].
pub trait BlockDevice {
    /// Claimed size, bytes.
    fn size_bytes(&self) -> u64;
    /// The unit of I/O, bytes (logical block size, >= 512; the probe writes blocks of at
    /// least this, aligned).
    fn block_bytes(&self) -> u64;
    fn write_at(&mut self, offset: u64, buf: &[u8]) -> std::io::Result<()>;
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<()>;
    /// Push writes to the medium (fsync / flush the device cache).
    fn flush(&mut self) -> std::io::Result<()>;
    /// Close and open again, dropping any cache the OS keeps for this handle (O_DIRECT +
    /// BLKFLSBUF on Linux).
    fn reopen(&mut self) -> std::io::Result<()>;
    /// What was written to the device since benchboot opened it, when it is counted
    /// ([`counted::Counted`] wraps it); `None` for a device that is not.
    fn tally(&mut self) -> Option<counted::Tally> {
        None
    }
}

/// What to probe and how.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProbeOptions {
    /// First byte the probe may write (rounded up to the sector).
    pub start_bytes: u64,
    /// End of the region (exclusive); `None`: the claimed end.
    pub end_bytes: Option<u64>,
    /// Written into every stamp: data of an earlier run is told apart ([`Found::Stale`]).
    pub nonce: u64,
    /// Refine the real-size estimate until the gap is at most this; `None`:
    /// [`default_resolution`].
    pub resolution_bytes: Option<u64>,
    /// Data written elsewhere before reading back, to push out the device's cache; 0 =
    /// none.
    pub cache_flush_bytes: u64,
}

/// The default cache flush: 32 MiB (SD cards and USB sticks cache a few MiB).
pub const DEFAULT_CACHE_FLUSH_BYTES: u64 = 32 << 20;

impl Default for ProbeOptions {
    /// The whole device, nonce 0 (give a fresh one), default resolution and flush.
    fn default() -> ProbeOptions {
        ProbeOptions {
            start_bytes: 0,
            end_bytes: None,
            nonce: 0,
            resolution_bytes: None,
            cache_flush_bytes: DEFAULT_CACHE_FLUSH_BYTES,
        }
    }
}

/// The resolution used when [`ProbeOptions::resolution_bytes`] is `None`: max(1 MiB,
/// claimed / 4096).
pub fn default_resolution(claimed_bytes: u64) -> u64 {
    (1u64 << 20).max(claimed_bytes / 4096)
}

/// Why the probe could not start. I/O errors during the probe are findings in the
/// report, not errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    #[error("block size {0} is not a power of two >= 512")]
    BlockSize(u64),
    #[error(
        "region {start}..{end} holds less than one probe block ({block} bytes); \
         give a larger region"
    )]
    EmptyRegion { start: u64, end: u64, block: u64 },
    #[error("region end {end} is past the device's claimed size {size}")]
    OutsideDevice { end: u64, size: u64 },
}

/// What a bad block held.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Found {
    /// The stamp of another offset from this run: the card wraps, this offset lands on
    /// `holds`.
    Alias {
        holds: u64,
    },
    /// A stamp from another run (another nonce): the write never reached the medium.
    Stale {
        holds: u64,
        nonce: u64,
    },
    /// All zeros: the write was dropped.
    Zeros,
    /// All 0xff: the write was dropped.
    Ones,
    /// Something else.
    Garbage {
        differ_bytes: u64,
    },
    ReadError {
        error: String,
    },
    WriteError {
        error: String,
    },
}

impl Found {
    /// What sector `s`, read back from byte `at` of a run with `nonce`, held; `None`:
    /// its own stamp.
    pub fn of_sector(s: &[u8], at: u64, nonce: u64) -> Option<Found> {
        Some(match stamp::classify(s, at, nonce) {
            stamp::Sector::Own => return None,
            stamp::Sector::Other { offset, nonce: n } if n == nonce => {
                Found::Alias { holds: offset }
            }
            stamp::Sector::Other { offset, nonce } => Found::Stale {
                holds: offset,
                nonce,
            },
            stamp::Sector::Zeros => Found::Zeros,
            stamp::Sector::Ones => Found::Ones,
            stamp::Sector::Garbage { differ_bytes } => Found::Garbage { differ_bytes },
        })
    }

    pub fn is_io_error(&self) -> bool {
        matches!(self, Found::ReadError { .. } | Found::WriteError { .. })
    }

    /// In words, for the report.
    pub fn describe(&self) -> String {
        match self {
            Found::Alias { holds } => {
                format!("the data of offset {} (wrap-around)", human_offset(*holds))
            }
            Found::Stale { holds, nonce } => format!(
                "an earlier run's stamp of offset {} (nonce {nonce:#x}): the write was dropped",
                human_offset(*holds)
            ),
            Found::Zeros => "all zeros (write dropped)".into(),
            Found::Ones => "all 0xff (write dropped)".into(),
            Found::Garbage { differ_bytes } => {
                format!("garbage ({differ_bytes} bytes of the sector differ)")
            }
            Found::ReadError { error } => format!("read error: {error}"),
            Found::WriteError { error } => format!("write error: {error}"),
        }
    }
}

/// A sector that did not hold its own data.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct BadBlock {
    /// Byte offset of the first bad sector of the probe block.
    pub offset: u64,
    pub found: Found,
}

/// What the probe concluded.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// Every stamped block read back.
    Genuine,
    /// Blocks past about `real_bytes` do not hold their data.
    Fake { real_bytes: u64 },
    /// Reads or writes failed, the first at `first_at`.
    IoErrors { first_at: u64 },
}

/// What the probe found.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProbeReport {
    /// The device's claimed size, bytes.
    pub claimed_bytes: u64,
    /// The region probed: (start, end), bytes, end exclusive.
    pub region: (u64, u64),
    /// The device's sector (every sector is stamped and checked).
    pub sector_bytes: u64,
    /// The probe block: the unit of a sample, bytes.
    pub block_bytes: u64,
    /// The highest probe block (offset) below [`ProbeReport::first_bad`] that held its
    /// own data (of all samples, for a genuine card).
    pub highest_good: Option<u64>,
    /// The first sector found not to hold its own data (for a wrap: the modulus).
    pub first_bad: Option<u64>,
    /// Bad sectors found, lowest first (at most [`MAX_BAD_LISTED`]).
    pub bad: Vec<BadBlock>,
    /// All bad samples, also those not listed.
    pub bad_count: u64,
    /// Good samples above the first bad one (a FAT-preserving fake keeps its last MiB;
    /// meaningless for a wrap, whose samples nothing overwrote read back fine).
    pub good_above_first_bad: u64,
    /// The wrap-around modulus, when the card wraps.
    pub wraps_at: Option<u64>,
    /// The estimate of what the card really holds, bytes from 0 (None: genuine).
    pub real_bytes: Option<u64>,
    pub verdict: Verdict,
    /// The resolution aimed at, bytes.
    pub resolution_bytes: u64,
    /// The gap left between the highest good block's end and the first bad sector.
    pub uncertainty_bytes: u64,
    pub samples: u64,
    pub passes: u32,
    /// Probe blocks (and window / flush blocks) written and read.
    pub blocks_written: u64,
    pub blocks_read: u64,
    pub bytes_written: u64,
    pub bytes_read: u64,
    pub nanos: u64,
    /// Set when the probe had to stop early (a flush or reopen failed).
    pub aborted: Option<String>,
    /// The whole-card pass (`benchboot probe --full`), when it ran after the probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full: Option<full::FullReport>,
}

/// Bad sectors listed in a report at most.
pub const MAX_BAD_LISTED: usize = 64;

/// What the probe is doing, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Writing the samples of a pass.
    Write,
    /// Writing the window / cache flush data.
    Flush,
    /// Reading a pass's samples back.
    Read,
}

/// Progress of the probe: `done` of `total` units of the current phase of `pass`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub pass: u32,
    pub phase: Phase,
    pub done: u64,
    pub total: u64,
    pub blocks_written: u64,
    pub blocks_read: u64,
}

/// Bytes as people read them: "1.0 GiB", "512 B".
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// An offset in words: "8.0 GiB (8589934592)".
pub fn human_offset(bytes: u64) -> String {
    format!("{} ({bytes})", human(bytes))
}

impl ProbeReport {
    /// One line: "genuine: 1.0 GiB claimed, all 2113 stamped blocks read back" / "FAKE:
    /// claims 64.0 GiB, holds about 8.0 GiB (first bad at ...; what it held)" / "FAKE:
    /// claims 256.0 MiB, holds 16.0 MiB: a wrap-around fake of 16.0 MiB (...)".
    pub fn summary(&self) -> String {
        let claimed = human(self.claimed_bytes);
        let region = if self.region == (0, self.claimed_bytes) {
            String::new()
        } else {
            format!(
                " (probed {}..{})",
                human(self.region.0),
                human(self.region.1)
            )
        };
        let what = self
            .bad
            .iter()
            .find(|b| Some(b.offset) >= self.first_bad)
            .or(self.bad.first())
            .map(|b| b.found.describe())
            .unwrap_or_default();
        let holds = self
            .real_bytes
            .map(|r| format!("holds about {}", human(r)))
            .unwrap_or_default();
        let aborted = self
            .aborted
            .as_ref()
            .map(|a| format!("; stopped early: {a}"))
            .unwrap_or_default();
        match &self.verdict {
            Verdict::Genuine => format!(
                "genuine: {claimed} claimed, all {} stamped blocks read back{region}{aborted}",
                self.samples
            ),
            Verdict::Fake { .. } => match self.wraps_at {
                // A wrap's size is exact: the period, checked.
                Some(m) => format!(
                    "FAKE: claims {claimed}, holds {}: a wrap-around fake of {} (every write \
                     past it lands on its offset modulo {}, over the data below){region}{aborted}",
                    human(m),
                    human_offset(m),
                    human(m)
                ),
                None => {
                    let first = self.first_bad.map(human_offset).unwrap_or_default();
                    format!(
                        "FAKE: claims {claimed}, {holds} (first bad at {first}; {what}){region}{aborted}"
                    )
                }
            },
            Verdict::IoErrors { first_at } => format!(
                "I/O ERRORS: claims {claimed}, first error at {}; {holds} ({} bad samples){region}{aborted}",
                human_offset(*first_at),
                self.bad_count
            ),
        }
    }
}

/// The region `[start, end)` of `dev` to write, rounded inward to its sectors.
///
/// # Errors
/// A sector size that is not a power of two >= 512, an end past the claimed size, a
/// region smaller than `least` bytes.
pub(crate) fn region(
    dev: &dyn BlockDevice,
    start_bytes: u64,
    end_bytes: Option<u64>,
    least: u64,
) -> Result<(u64, u64), ProbeError> {
    let claimed = dev.size_bytes();
    let sector = dev.block_bytes();
    if sector < 512 || !sector.is_power_of_two() {
        return Err(ProbeError::BlockSize(sector));
    }
    let end_req = end_bytes.unwrap_or(claimed);
    if end_req > claimed {
        return Err(ProbeError::OutsideDevice {
            end: end_req,
            size: claimed,
        });
    }
    // Saturates: a start past the claimed end is refused below, never wrapped to 0.
    let start = start_bytes.div_ceil(sector).saturating_mul(sector);
    let end = end_req / sector * sector;
    if end < start || end - start < least {
        return Err(ProbeError::EmptyRegion {
            start: start_bytes,
            end: end_req,
            block: least,
        });
    }
    Ok((start, end))
}

/// Probes `dev` as `opts` say; `progress` is called after every block.
///
/// # Errors
/// Only when the probe cannot start: a block size that is not a power of two >= 512,
/// a region past the device's claimed end or smaller than one probe block.
pub fn probe(
    dev: &mut dyn BlockDevice,
    opts: &ProbeOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<ProbeReport, ProbeError> {
    let t0 = Instant::now();
    let claimed = dev.size_bytes();
    let sector = dev.block_bytes();
    let block = sector.max(4096);
    let (start, end) = region(dev, opts.start_bytes, opts.end_bytes, block)?;
    let resolution = opts
        .resolution_bytes
        .unwrap_or_else(|| default_resolution(claimed))
        .max(sector);
    let mut run = Run {
        dev,
        progress,
        sector,
        block,
        start,
        end,
        nonce: opts.nonce,
        flush_bytes: opts.cache_flush_bytes / sector * sector,
        buf: vec![0u8; block as usize],
        samples: BTreeMap::new(),
        stats: Stats::default(),
        pass: 0,
        aborted: None,
    };
    let (coarse, stride) = coarse_offsets(start, end, block);
    let window = stride.max(run.flush_bytes).min(end - start) / sector * sector;
    run.pass(&coarse, &[], Some((start, start + window)));

    let wrap = find_wrap(&mut run);
    let wraps_at = wrap.map(|(m, _)| m);
    if wraps_at.is_none() {
        refine(&mut run, resolution);
    }

    // A wrap's blocks below its period are the real part: a coarse sample there that
    // read an alias was overwritten by a higher write of this run (the window, when it
    // is wider than the period), and the check read it back whole.
    let bads: Vec<BadBlock> = run
        .samples
        .values()
        .flatten()
        .filter(|b| wraps_at.is_none_or(|m| b.offset >= m))
        .cloned()
        .collect();
    let bad_count = bads.len() as u64;
    let first_io = bads
        .iter()
        .find(|b| b.found.is_io_error())
        .map(|b| b.offset);
    let (first_bad, highest_good, real_bytes, uncertainty) = boundary(&run, wrap);
    let good_above_first_bad = first_bad.map_or(0, |h| {
        run.samples
            .iter()
            .filter(|(&o, v)| o > h && v.is_none())
            .count() as u64
    });
    let verdict = match (first_io, real_bytes) {
        (Some(first_at), _) => Verdict::IoErrors { first_at },
        (None, Some(real_bytes)) => Verdict::Fake { real_bytes },
        (None, None) if run.aborted.is_some() => Verdict::IoErrors { first_at: start },
        (None, None) => Verdict::Genuine,
    };
    let samples = run.samples.len() as u64;
    Ok(ProbeReport {
        claimed_bytes: claimed,
        region: (start, end),
        sector_bytes: sector,
        block_bytes: block,
        highest_good,
        first_bad,
        bad: bads.into_iter().take(MAX_BAD_LISTED).collect(),
        bad_count,
        good_above_first_bad,
        wraps_at,
        real_bytes,
        verdict,
        resolution_bytes: resolution,
        uncertainty_bytes: uncertainty,
        samples,
        passes: run.pass,
        blocks_written: run.stats.blocks_written,
        blocks_read: run.stats.blocks_read,
        bytes_written: run.stats.bytes_written,
        bytes_read: run.stats.bytes_read,
        nanos: t0.elapsed().as_nanos() as u64,
        aborted: run.aborted,
        full: None,
    })
}

/// The period the card wraps at, if it does, with the highest good offset below it:
/// each check settles the modulus the samples suggest or gives a proper divisor of it.
fn find_wrap(run: &mut Run<'_>) -> Option<(u64, u64)> {
    let mut candidate = run.modulus();
    // Each check either settles the candidate or gives a proper divisor of it: at most
    // log2(m) rounds; 16 is plenty.
    for _ in 0..16 {
        let m = candidate?;
        match run.check_wrap(m) {
            WrapCheck::Holds { highest_good } => return Some((m, highest_good)),
            WrapCheck::Shorter(s) => candidate = Some(s),
            WrapCheck::No => return None,
        }
    }
    None
}

/// Samples between the highest good block and the first bad sector until the gap is
/// within `resolution` bytes (at most 64 passes, or until the run aborts).
fn refine(run: &mut Run<'_>, resolution: u64) {
    let (start, block, sector) = (run.start, run.block, run.sector);
    // Refinement between the highest good block and the first bad sector.
    for _ in 0..64 {
        if run.aborted.is_some() {
            break;
        }
        let Some(h) = run.first_bad() else { break };
        let lo = run.highest_good_below(h).map_or(start, |g| g + block);
        if h.saturating_sub(lo) <= resolution || h < lo + block {
            break;
        }
        let offs = spread(lo, h, block, sector, 32);
        if offs.is_empty() {
            break;
        }
        let flush = run.flush_window(lo, h);
        run.pass(&offs, &[], flush);
    }
}

/// Where the real capacity ends: (first bad offset, highest good offset, real bytes,
/// uncertainty bytes); a `wrap` (period, highest good) is exact.
fn boundary(
    run: &Run<'_>,
    wrap: Option<(u64, u64)>,
) -> (Option<u64>, Option<u64>, Option<u64>, u64) {
    match wrap {
        Some((m, good)) => (Some(m), Some(good), Some(m), 0),
        None => match run.first_bad() {
            None => (None, run.samples.keys().next_back().copied(), None, 0),
            Some(h) => {
                let g = run.highest_good_below(h);
                let lo = g.map_or(run.start, |g| g + run.block);
                (Some(h), g, Some(h), h.saturating_sub(lo))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes() {
        assert_eq!(human(512), "512 B");
        assert_eq!(human(1 << 30), "1.0 GiB");
        assert_eq!(human(64 << 30), "64.0 GiB");
    }
}
