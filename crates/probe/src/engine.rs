//! The probe's engine: the sample offsets, one pass (write highest first, partners,
//! flush window; flush, reopen; read back), the state of every sample.

use std::collections::BTreeMap;

use crate::stamp;
use crate::{BadBlock, BlockDevice, Found, Phase, Progress};

/// The coarse pass's sample offsets (sorted, unique) and their stride.
pub(crate) fn coarse_offsets(start: u64, end: u64, block: u64) -> (Vec<u64>, u64) {
    let last = end - block;
    let span = end - start;
    let k = (span / (64 << 20)).clamp(1024, 16384);
    let stride = (span / k).div_ceil(block).max(1) * block;
    let mut v: Vec<u64> = (0..)
        .map(|i| start + i * stride)
        .take_while(|&o| o <= last)
        .collect();
    v.push(last);
    for i in 0..64 {
        let Some(step) = block.checked_shl(i).filter(|&s| s <= span) else {
            break;
        };
        if start + step <= last {
            v.push(start + step);
        }
        if let Some(o) = last.checked_sub(step).filter(|&o| o >= start) {
            v.push(o);
        }
    }
    for i in 12..64 {
        let p = 1u64 << i;
        if p >= start && p <= last {
            v.push(p);
        }
        if p >= start + block && p - block <= last {
            v.push(p - block);
        }
    }
    v.sort_unstable();
    v.dedup();
    (v, stride)
}

/// Up to `n` block offsets spread evenly over `[lo, hi)` (sector-aligned, each block
/// wholly inside), always including the block just below `hi`.
pub(crate) fn spread(lo: u64, hi: u64, block: u64, sector: u64, n: u64) -> Vec<u64> {
    if hi < lo + block {
        return Vec::new();
    }
    let room = hi - block - lo;
    let step = (room / n).div_ceil(sector).max(1) * sector;
    let step = step.max(block.min(room.max(sector)));
    let mut v: Vec<u64> = (0..)
        .map(|i| lo + i * step)
        .take_while(|&o| o + block <= hi)
        .collect();
    v.push(hi - block);
    v.sort_unstable();
    v.dedup();
    v
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// What [`Run::check_wrap`] found for a candidate period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WrapCheck {
    /// The card wraps at the candidate; the block below it held its own data.
    Holds { highest_good: u64 },
    /// The samples below the candidate aliased each other: try this shorter period.
    Shorter(u64),
    /// Not a wrap at the candidate (or it could not be checked).
    No,
}

#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub(crate) blocks_written: u64,
    pub(crate) blocks_read: u64,
    pub(crate) bytes_written: u64,
    pub(crate) bytes_read: u64,
}

pub(crate) struct Run<'a> {
    pub(crate) dev: &'a mut dyn BlockDevice,
    pub(crate) progress: &'a mut dyn FnMut(Progress),
    pub(crate) sector: u64,
    pub(crate) block: u64,
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) nonce: u64,
    pub(crate) flush_bytes: u64,
    pub(crate) buf: Vec<u8>,
    /// Every sample's latest outcome: None = held its own data.
    pub(crate) samples: BTreeMap<u64, Option<BadBlock>>,
    pub(crate) stats: Stats,
    pub(crate) pass: u32,
    pub(crate) aborted: Option<String>,
}

impl Run<'_> {
    pub(crate) fn report(&mut self, phase: Phase, done: u64, total: u64) {
        (self.progress)(Progress {
            pass: self.pass,
            phase,
            done,
            total,
            blocks_written: self.stats.blocks_written,
            blocks_read: self.stats.blocks_read,
        });
    }

    /// Writes stamped data at `offset` (`len` bytes), retrying once.
    pub(crate) fn write(&mut self, offset: u64, len: usize) -> Result<(), String> {
        if self.buf.len() < len {
            self.buf.resize(len, 0);
        }
        stamp::stamp(
            &mut self.buf[..len],
            offset,
            self.nonce,
            self.sector as usize,
        );
        let r = self
            .dev
            .write_at(offset, &self.buf[..len])
            .or_else(|_| self.dev.write_at(offset, &self.buf[..len]));
        self.stats.blocks_written += (len as u64).div_ceil(self.block);
        self.stats.bytes_written += len as u64;
        r.map_err(|e| e.to_string())
    }

    /// After a failed write of the probe block at `offset`: the first sector that fails
    /// on its own (the block's offset if none does), and its error.
    pub(crate) fn first_failing_write(&mut self, offset: u64, error: String) -> BadBlock {
        let s = self.sector as usize;
        for i in 0..(self.block / self.sector) {
            let at = offset + i * self.sector;
            let buf = &self.buf[i as usize * s..][..s];
            self.stats.bytes_written += s as u64;
            if let Err(e) = self.dev.write_at(at, buf) {
                return BadBlock {
                    offset: at,
                    found: Found::WriteError {
                        error: e.to_string(),
                    },
                };
            }
        }
        BadBlock {
            offset,
            found: Found::WriteError { error },
        }
    }

    /// Reads the probe block at `offset` back: None if every sector holds its own data.
    pub(crate) fn read(&mut self, offset: u64) -> Option<BadBlock> {
        let len = self.block as usize;
        let mut buf = std::mem::take(&mut self.buf);
        let r = self
            .dev
            .read_at(offset, &mut buf[..len])
            .or_else(|_| self.dev.read_at(offset, &mut buf[..len]));
        self.stats.blocks_read += 1;
        self.stats.bytes_read += len as u64;
        let out = match r {
            // The first sector that fails on its own (the block if none does).
            Err(e) => Some(
                buf[..len]
                    .chunks_exact_mut(self.sector as usize)
                    .enumerate()
                    .find_map(|(i, s)| {
                        let at = offset + i as u64 * self.sector;
                        self.stats.bytes_read += s.len() as u64;
                        self.dev.read_at(at, s).err().map(|e| BadBlock {
                            offset: at,
                            found: Found::ReadError {
                                error: e.to_string(),
                            },
                        })
                    })
                    .unwrap_or(BadBlock {
                        offset,
                        found: Found::ReadError {
                            error: e.to_string(),
                        },
                    }),
            ),
            Ok(()) => buf[..len]
                .chunks_exact(self.sector as usize)
                .enumerate()
                .find_map(|(i, s)| {
                    let at = offset + i as u64 * self.sector;
                    let found = Found::of_sector(s, at, self.nonce)?;
                    Some(BadBlock { offset: at, found })
                }),
        };
        self.buf = buf;
        out
    }

    /// One pass: `offs` (ascending) written highest first, then `partners`, then the
    /// flush `window`; flush, reopen; `offs` read back. Returns and records outcomes.
    pub(crate) fn pass(
        &mut self,
        offs: &[u64],
        partners: &[u64],
        window: Option<(u64, u64)>,
    ) -> BTreeMap<u64, Option<BadBlock>> {
        self.pass += 1;
        let mut out = BTreeMap::new();
        let n = offs.len() as u64;
        for (i, &o) in offs.iter().rev().enumerate() {
            if let Err(error) = self.write(o, self.block as usize) {
                let bad = self.first_failing_write(o, error);
                out.insert(o, Some(bad));
            }
            self.report(Phase::Write, i as u64 + 1, n);
        }
        for &p in partners {
            let _ = self.write(p, self.block as usize);
        }
        if let Some((a, b)) = window {
            let chunk = (1u64 << 20).max(self.block);
            let mut o = a;
            while o < b {
                let len = chunk.min(b - o);
                // A failed flush write is not a sample: the samples say what is bad.
                let _ = self.write(o, len as usize);
                o += len;
                self.report(Phase::Flush, o - a, b - a);
            }
        }
        if let Err(e) = self.dev.flush().and_then(|()| self.dev.reopen()) {
            self.aborted = Some(format!("flush/reopen: {e}"));
            for &o in offs {
                out.entry(o).or_insert(None);
            }
            self.samples.extend(out.clone());
            return out;
        }
        for (i, &o) in offs.iter().enumerate() {
            if let std::collections::btree_map::Entry::Vacant(e) = out.entry(o) {
                e.insert(self.read(o));
            }
            self.report(Phase::Read, i as u64 + 1, n);
        }
        self.samples.extend(out.clone());
        out
    }

    /// Where to write the cache flush data when probing `[lo, hi)`: below `lo` if it
    /// fits above the region's start, else above `hi`, else the region's start.
    pub(crate) fn flush_window(&self, lo: u64, hi: u64) -> Option<(u64, u64)> {
        let f = self.flush_bytes.min(self.end - self.start);
        if f == 0 {
            return None;
        }
        if self.start + f <= lo {
            Some((self.start, self.start + f))
        } else if hi + f <= self.end {
            Some((hi, hi + f))
        } else {
            Some((self.start, self.start + f))
        }
    }

    /// Checks a wrap-around candidate `m` (a period the aliases of earlier passes agree
    /// on) with one pass laid out so that nothing of it can overwrite the samples if the
    /// card does wrap at `m`:
    ///
    /// A card that wraps at `m` stores byte `x` at `x mod m`: its real part is `[0, m)`,
    /// of which the region holds `[start, m)`.
    ///
    /// 1. the high alias `start + m` (when it fits in the region) is written first;
    /// 2. then up to 32 blocks spread over `[start, m - f)`, lowest first;
    /// 3. then stamped flush data at `[k m + m - f, k m + m)` for k = K..0, `f` =
    ///    min(cache flush, (m - start) / 2), K as the cache flush size and the region
    ///    allow: distinct addresses, so they push the samples and the high alias out of
    ///    a write cache, that all land on `[m - f, m)` of the medium, inside the real
    ///    part and apart from the samples modulo `m` (a flush window at the region's
    ///    start, as the coarse pass writes, lands on every sample of a card that wraps
    ///    below its width).
    ///
    /// Then flush, reopen, and read back the samples, the last flush block and the high
    /// alias. The card wraps at `m` when every block of `[start, m)` read holds its own
    /// data and the high alias holds the stamp of `start`. A period at or below
    /// `start + 2 blocks` is not checked (its real part lies below the region).
    pub(crate) fn check_wrap(&mut self, m: u64) -> WrapCheck {
        let (start, block, sector) = (self.start, self.block, self.sector);
        if m < start + 2 * block || m > self.end {
            return WrapCheck::No;
        }
        let f = self.flush_bytes.min((m - start) / 2) / sector * sector;
        let lo_end = m - f;
        let mut offs = spread(start, lo_end, block, sector, 32);
        let high = (start + m + block <= self.end).then_some(start + m);
        self.pass += 1;
        let n = offs.len() as u64 + u64::from(high.is_some());
        let mut out = BTreeMap::new();
        let mut written = 0;
        for &o in high.iter().chain(&offs) {
            if let Err(error) = self.write(o, block as usize) {
                let bad = self.first_failing_write(o, error);
                out.insert(o, Some(bad));
            }
            written += 1;
            self.report(Phase::Write, written, n);
        }
        // The flush data: `[m - f, m)` and its aliases `[k m + m - f, k m + m)` above it,
        // highest first, up to the cache flush size: distinct addresses (a cache keyed
        // by address fills), one place on the medium (apart from the samples).
        let copies = if f == 0 {
            0
        } else {
            // Copy k ends at (k + 1) m: inside the region for k < end / m.
            self.flush_bytes.div_ceil(f).min(self.end / m)
        };
        let chunk = (1u64 << 20).max(block);
        for k in (0..copies).rev() {
            let base = lo_end + k * m;
            let mut o = base;
            while o < base + f {
                let len = chunk.min(base + f - o);
                let _ = self.write(o, len as usize);
                o += len;
                self.report(Phase::Flush, (copies - 1 - k) * f + o - base, copies * f);
            }
        }
        if let Err(e) = self.dev.flush().and_then(|()| self.dev.reopen()) {
            self.aborted = Some(format!("flush/reopen: {e}"));
            return WrapCheck::No;
        }
        // The flush data's last block: the real part reaches `start + m`.
        if f > 0 {
            offs.push(m - block);
        }
        offs.extend(high);
        for (i, &o) in offs.iter().enumerate() {
            if let std::collections::btree_map::Entry::Vacant(e) = out.entry(o) {
                e.insert(self.read(o));
            }
            self.report(Phase::Read, i as u64 + 1, offs.len() as u64);
        }
        self.samples.extend(out.clone());
        let below = out.range(..m);
        let aliases = below
            .clone()
            .filter_map(|(_, v)| match v {
                Some(BadBlock {
                    offset,
                    found: Found::Alias { holds },
                }) => Some(offset.abs_diff(*holds)),
                _ => None,
            })
            .fold(m, gcd);
        if aliases < m {
            // A shorter period: the samples below `m` landed on each other.
            return WrapCheck::Shorter(aliases);
        }
        let held = below.clone().all(|(_, v)| v.is_none());
        let aliased = high.is_none_or(|h| {
            matches!(out.get(&h), Some(Some(BadBlock { found: Found::Alias { holds }, .. })) if *holds == start)
        });
        if held && aliased {
            WrapCheck::Holds {
                highest_good: m - block,
            }
        } else {
            WrapCheck::No
        }
    }

    pub(crate) fn first_bad(&self) -> Option<u64> {
        self.samples.values().flatten().map(|b| b.offset).min()
    }

    pub(crate) fn highest_good_below(&self, h: u64) -> Option<u64> {
        self.samples
            .range(..h)
            .rev()
            .find(|(&o, v)| v.is_none() && o + self.block <= h)
            .map(|(&o, _)| o)
    }

    /// The wrap-around modulus the aliases found say: the gcd of (offset - held).
    pub(crate) fn modulus(&self) -> Option<u64> {
        let g = self
            .samples
            .values()
            .flatten()
            .filter_map(|b| match b.found {
                Found::Alias { holds } => Some(b.offset.abs_diff(holds)),
                _ => None,
            })
            .fold(0, gcd);
        (g >= self.sector && g.is_multiple_of(self.sector)).then_some(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coarse_samples_cover_the_region() {
        let (v, stride) = coarse_offsets(0, 1 << 30, 4096);
        assert_eq!(stride, 1 << 20);
        assert_eq!(v[0], 0);
        assert_eq!(*v.last().unwrap(), (1 << 30) - 4096);
        assert!(v.windows(2).all(|w| w[1] - w[0] <= stride));
        let (v, _) = coarse_offsets(1 << 20, (1 << 30) + 512, 4096);
        assert!(v
            .iter()
            .all(|&o| o >= 1 << 20 && o + 4096 <= (1 << 30) + 512));
    }

    /// A candidate twice the real period (what a gcd of aliases that are all even
    /// multiples of it gives) is not confirmed: its samples land on each other and the
    /// check names the shorter period, which then holds.
    #[test]
    fn a_multiple_of_the_period_gives_way_to_the_period() {
        use crate::fake::{FakeDevice, Model};
        const MIB: u64 = 1 << 20;
        let real = 16 * MIB + 512 * 3;
        for flush in [0, 8 * MIB, 32 * MIB] {
            let mut dev = FakeDevice::new(256 * MIB, 512, Model::Wrap { real });
            let mut progress = |_| {};
            let mut run = Run {
                dev: &mut dev,
                progress: &mut progress,
                sector: 512,
                block: 4096,
                start: 0,
                end: 256 * MIB,
                nonce: 7,
                flush_bytes: flush,
                buf: vec![0; 4096],
                samples: BTreeMap::new(),
                stats: Stats::default(),
                pass: 0,
                aborted: None,
            };
            assert_eq!(
                run.check_wrap(2 * real),
                WrapCheck::Shorter(real),
                "{flush}"
            );
            assert_eq!(
                run.check_wrap(real),
                WrapCheck::Holds {
                    highest_good: real - 4096
                },
                "{flush}"
            );
            // Past the period the check sees aliases, not a shorter period.
            assert_eq!(run.check_wrap(real / 2), WrapCheck::No, "{flush}");
        }
    }

    #[test]
    fn spread_stays_inside() {
        let v = spread(1 << 20, 5 << 20, 4096, 512, 32);
        assert!(v.len() >= 32 && v.len() <= 34, "{}", v.len());
        assert!(v.iter().all(|&o| o >= 1 << 20 && o + 4096 <= 5 << 20));
        assert_eq!(*v.last().unwrap(), (5 << 20) - 4096);
        assert_eq!(spread(0, 4096, 4096, 512, 32), vec![0]);
    }
}
