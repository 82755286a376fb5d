//! Fake block devices for tests: genuine, wrapping, dropping, failing, FAT-preserving,
//! with or without a small write-back cache. Storage is sparse (only sectors written
//! are kept), so a "64 GiB" card costs what the probe writes.

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::io;
use std::rc::Rc;

use crate::BlockDevice;

/// How the medium behind the claimed size behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// Stores every offset.
    Genuine,
    /// Stores offset `x` at `x % real`.
    Wrap { real: u64 },
    /// Drops writes at and past `real`; reads there return `fill` bytes.
    Drop { real: u64, fill: u8 },
    /// Reads and writes at and past `real` fail with EIO.
    IoErrors { real: u64 },
    /// Stores the first `real` bytes and the last `tail` bytes; drops the rest (reads
    /// `fill`): a fake that keeps its FAT at both ends.
    KeepTail { real: u64, tail: u64, fill: u8 },
}

/// A fake card.
#[derive(Debug)]
pub struct FakeDevice {
    pub claimed: u64,
    pub sector: u64,
    pub model: Model,
    data: HashMap<u64, Vec<u8>>,
    /// Capacity of the write-back cache in sectors (0: none).
    cache_sectors: usize,
    cache: HashMap<u64, (u64, Vec<u8>)>,
    order: VecDeque<(u64, u64)>,
    seq: u64,
    /// The highest byte written + 1 (the probe must stay inside its region).
    pub lowest_write: u64,
    pub highest_write_end: u64,
    pub flushes: u64,
    pub reopens: u64,
}

impl FakeDevice {
    pub fn new(claimed: u64, sector: u64, model: Model) -> FakeDevice {
        FakeDevice {
            claimed,
            sector,
            model,
            data: HashMap::new(),
            cache_sectors: 0,
            cache: HashMap::new(),
            order: VecDeque::new(),
            seq: 0,
            lowest_write: u64::MAX,
            highest_write_end: 0,
            flushes: 0,
            reopens: 0,
        }
    }

    /// Adds a write-back cache of `bytes` that serves the most recent writes to reads
    /// (by logical offset), whatever the medium did with them; flush and reopen do not
    /// empty it (it is the card's own).
    pub fn with_cache(mut self, bytes: u64) -> FakeDevice {
        self.cache_sectors = (bytes / self.sector) as usize;
        self
    }

    /// Where logical sector `s` (a byte offset) is stored, or what it reads as.
    fn place(&self, off: u64) -> Result<Option<u64>, u8> {
        match self.model {
            Model::Genuine => Ok(Some(off)),
            Model::Wrap { real } => Ok(Some(off % real)),
            Model::Drop { real, fill } => {
                if off < real {
                    Ok(Some(off))
                } else {
                    Err(fill)
                }
            }
            Model::IoErrors { .. } => Ok(Some(off)),
            Model::KeepTail { real, tail, fill } => {
                if off < real || off >= self.claimed - tail {
                    Ok(Some(off))
                } else {
                    Err(fill)
                }
            }
        }
    }

    fn check(&self, offset: u64, len: usize) -> io::Result<()> {
        if !offset.is_multiple_of(self.sector) || !(len as u64).is_multiple_of(self.sector) {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        if offset + len as u64 > self.claimed {
            return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
        }
        if let Model::IoErrors { real } = self.model {
            if offset + len as u64 > real {
                return Err(io::Error::other("Input/output error (fake)"));
            }
        }
        Ok(())
    }
}

impl BlockDevice for FakeDevice {
    fn size_bytes(&self) -> u64 {
        self.claimed
    }

    fn block_bytes(&self) -> u64 {
        self.sector
    }

    fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.check(offset, buf.len())?;
        self.lowest_write = self.lowest_write.min(offset);
        self.highest_write_end = self.highest_write_end.max(offset + buf.len() as u64);
        for (i, s) in buf.chunks_exact(self.sector as usize).enumerate() {
            let off = offset + i as u64 * self.sector;
            if let Ok(Some(p)) = self.place(off) {
                self.data.insert(p, s.to_vec());
            }
            if self.cache_sectors > 0 {
                self.seq += 1;
                self.cache.insert(off, (self.seq, s.to_vec()));
                self.order.push_back((off, self.seq));
                while self.cache.len() > self.cache_sectors {
                    let Some((o, q)) = self.order.pop_front() else {
                        break;
                    };
                    if self.cache.get(&o).is_some_and(|(sq, _)| *sq == q) {
                        self.cache.remove(&o);
                    }
                }
            }
        }
        Ok(())
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.check(offset, buf.len())?;
        for (i, s) in buf.chunks_exact_mut(self.sector as usize).enumerate() {
            let off = offset + i as u64 * self.sector;
            if let Some((_, c)) = self.cache.get(&off) {
                s.copy_from_slice(c);
                continue;
            }
            match self.place(off) {
                Ok(Some(p)) => match self.data.get(&p) {
                    Some(d) => s.copy_from_slice(d),
                    None => s.fill(0),
                },
                Ok(None) => s.fill(0),
                Err(fill) => s.fill(fill),
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flushes += 1;
        Ok(())
    }

    fn reopen(&mut self) -> io::Result<()> {
        self.reopens += 1;
        Ok(())
    }
}

/// A fake clock, ns, that a [`TimedDevice`] moves.
#[derive(Debug, Clone, Default)]
pub struct FakeClock(pub Rc<Cell<u64>>);

impl crate::full::Clock for FakeClock {
    fn now_ns(&mut self) -> u64 {
        self.0.get()
    }

    /// Moves the clock by `ns` (a pause that costs no test time).
    fn sleep_ns(&mut self, ns: u64) {
        self.0.set(self.0.get().saturating_add(ns));
    }
}

/// How long a [`TimedDevice`]'s I/O takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Writes below this offset go at `fast` bytes/s (an SLC cache of this size), the
    /// rest at `slow`.
    pub knee: u64,
    pub fast: u64,
    pub slow: u64,
    /// A write that starts at or crosses a multiple of this offset (not 0) stalls for
    /// `stall_ns` more; 0: never.
    pub stall_every: u64,
    pub stall_ns: u64,
    /// Reads, bytes/s.
    pub read: u64,
    /// Each write's fixed cost, ns, whatever its size (a card's command overhead).
    pub write_op_ns: u64,
}

/// A [`FakeDevice`] whose I/O takes the time [`Timing`] says on a [`FakeClock`].
#[derive(Debug)]
pub struct TimedDevice {
    pub inner: FakeDevice,
    pub timing: Timing,
    pub clock: FakeClock,
}

fn ns(bytes: u64, per_s: u64) -> u64 {
    (u128::from(bytes) * 1_000_000_000 / u128::from(per_s.max(1))) as u64
}

impl BlockDevice for TimedDevice {
    fn size_bytes(&self) -> u64 {
        self.inner.size_bytes()
    }

    fn block_bytes(&self) -> u64 {
        self.inner.block_bytes()
    }

    fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let t = self.timing;
        let end = offset + buf.len() as u64;
        let fast = t.knee.clamp(offset, end) - offset;
        let mut d = t.write_op_ns + ns(fast, t.fast) + ns(end - offset - fast, t.slow);
        if t.stall_every > 0 {
            let first = offset.div_ceil(t.stall_every).max(1) * t.stall_every;
            if first < end {
                d += t.stall_ns;
            }
        }
        self.clock.0.set(self.clock.0.get() + d);
        self.inner.write_at(offset, buf)
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.clock
            .0
            .set(self.clock.0.get() + ns(buf.len() as u64, self.timing.read));
        self.inner.read_at(offset, buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }

    fn reopen(&mut self) -> io::Result<()> {
        self.inner.reopen()
    }
}

/// A card whose fast (SLC) cache counts the bytes written since it was attached,
/// wherever they land: `cache_bytes` go at `fast` bytes/s, then every write at `slow`;
/// each ns the card spends without I/O gives back `refill` bytes/s of cache (folding
/// SLC into TLC/QLC while idle), up to `cache_bytes`. Reads at `read` bytes/s. Time
/// moves on a [`FakeClock`] only through I/O and [`crate::full::Clock::sleep_ns`] (or
/// a test moving it).
#[derive(Debug)]
pub struct SlcDevice {
    pub inner: FakeDevice,
    pub clock: FakeClock,
    pub cache_bytes: u64,
    pub fast: u64,
    pub slow: u64,
    pub refill: u64,
    pub read: u64,
    /// Fast bytes left.
    pub left: u64,
    /// When the last I/O ended, ns.
    last_io_end_ns: u64,
}

impl SlcDevice {
    /// A genuine card of `claimed` bytes (512-byte sectors) just attached: its cache
    /// empty of data (`cache_bytes` left), the clock where it stands.
    pub fn new(
        claimed: u64,
        clock: FakeClock,
        cache_bytes: u64,
        (fast, slow, refill, read): (u64, u64, u64, u64),
    ) -> SlcDevice {
        let now = clock.0.get();
        SlcDevice {
            inner: FakeDevice::new(claimed, 512, Model::Genuine),
            clock,
            cache_bytes,
            fast,
            slow,
            refill,
            read,
            left: cache_bytes,
            last_io_end_ns: now,
        }
    }

    /// Gives back the cache the idle time since the last I/O earned.
    fn rest(&mut self) {
        let idle = self.clock.0.get().saturating_sub(self.last_io_end_ns);
        let back = (u128::from(idle) * u128::from(self.refill) / 1_000_000_000) as u64;
        self.left = self.left.saturating_add(back).min(self.cache_bytes);
    }

    fn advance(&mut self, ns: u64) {
        let t = self.clock.0.get().saturating_add(ns);
        self.clock.0.set(t);
        self.last_io_end_ns = t;
    }
}

impl BlockDevice for SlcDevice {
    fn size_bytes(&self) -> u64 {
        self.inner.size_bytes()
    }

    fn block_bytes(&self) -> u64 {
        self.inner.block_bytes()
    }

    fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.rest();
        let len = buf.len() as u64;
        let fast = len.min(self.left);
        self.left -= fast;
        self.advance(ns(fast, self.fast) + ns(len - fast, self.slow));
        self.inner.write_at(offset, buf)
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.rest();
        self.advance(ns(buf.len() as u64, self.read));
        self.inner.read_at(offset, buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }

    fn reopen(&mut self) -> io::Result<()> {
        self.inner.reopen()
    }
}

/// What a card check holds for a genuine card of `claimed` bytes (512-byte sectors)
/// whose writes go at `fast` bytes/s up to `knee` and `slow` after it, reads at `read`
/// bytes/s: the quick probe, then the whole-card pass on a [`FakeClock`]. For the tests
/// of what renders and compares a pass.
pub fn probed_in_full(
    claimed: u64,
    knee: u64,
    fast: u64,
    slow: u64,
    read: u64,
) -> crate::ProbeReport {
    let mut d = FakeDevice::new(claimed, 512, Model::Genuine);
    let mut report = crate::probe(&mut d, &crate::ProbeOptions::default(), &mut |_| {})
        .expect("a genuine fake probes");
    let clock = FakeClock::default();
    let mut dev = TimedDevice {
        inner: d,
        timing: Timing {
            knee,
            fast,
            slow,
            stall_every: 0,
            stall_ns: 0,
            read,
            write_op_ns: 0,
        },
        clock: clock.clone(),
    };
    let o = crate::full::FullOptions::default();
    report.full = Some(
        crate::full::full_pass(&mut dev, &mut clock.clone(), &o, &mut |_| {}, &mut || false)
            .expect("a genuine fake passes"),
    );
    report
}
