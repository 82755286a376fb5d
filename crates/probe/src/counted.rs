//! Every write to a device since benchboot opened it, counted at the [`BlockDevice`]
//! edge: [`Counted`] wraps the device the quick probe, the whole-card pass and its
//! rewrites all go through, so "how much had been written when the write speed fell"
//! is one counter, not a sum of each step's own figures.
//!
//! A card's fast (SLC) cache fills with every byte written to it, whoever wrote it, and
//! empties into the slower TLC/QLC medium while the card is idle. The counter is what
//! the card saw from benchboot; what it was written, and how long it rested, before
//! benchboot opened it is unknown.

use std::io;

use crate::full::Clock;
use crate::BlockDevice;

/// What [`Counted`] saw, times in ns since it was made (the device opened).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Bytes of the writes that succeeded (a failed write's bytes are not counted: how
    /// much of it reached the card is unknown).
    pub written_bytes: u64,
    /// Writes that succeeded.
    pub writes: u64,
    /// The clock when the tally was taken, ns.
    pub now_ns: u64,
    /// When the first write (failed or not) started, ns; `None` before any.
    pub first_write_start_ns: Option<u64>,
    /// When the last write (failed or not) ended, ns; `None` before any.
    pub last_write_end_ns: Option<u64>,
}

impl Tally {
    /// How long the device has been idle of writes, ns: since the last write ended, or
    /// since it was opened when there was none (`since_open`).
    pub fn idle_ns(&self) -> (u64, bool) {
        match self.last_write_end_ns {
            Some(t) => (self.now_ns.saturating_sub(t), false),
            None => (self.now_ns, true),
        }
    }
}

/// A [`BlockDevice`] that counts the bytes written through it and times each write's
/// start and end on its own [`Clock`] (made when the device was opened). It changes no
/// I/O: reads, flushes and reopens pass through untouched.
pub struct Counted<D, C> {
    inner: D,
    clock: C,
    tally: Tally,
}

impl<D: BlockDevice, C: Clock> Counted<D, C> {
    /// Wraps `inner`, just opened; `clock` reads 0 or near it now (a new
    /// [`crate::full::MonotonicClock`]; a test's fake clock).
    pub fn new(inner: D, mut clock: C) -> Counted<D, C> {
        let now_ns = clock.now_ns();
        Counted {
            inner,
            clock,
            tally: Tally {
                now_ns,
                ..Tally::default()
            },
        }
    }

    /// The device wrapped.
    pub fn inner(&self) -> &D {
        &self.inner
    }

    /// The device wrapped, to change it (a test's fake) without counting.
    pub fn inner_mut(&mut self) -> &mut D {
        &mut self.inner
    }
}

impl<D: BlockDevice, C: Clock> BlockDevice for Counted<D, C> {
    fn size_bytes(&self) -> u64 {
        self.inner.size_bytes()
    }

    fn block_bytes(&self) -> u64 {
        self.inner.block_bytes()
    }

    fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let t0 = self.clock.now_ns();
        let r = self.inner.write_at(offset, buf);
        let t1 = self.clock.now_ns();
        self.tally.first_write_start_ns.get_or_insert(t0);
        self.tally.last_write_end_ns = Some(t1);
        if r.is_ok() {
            self.tally.written_bytes = self.tally.written_bytes.saturating_add(buf.len() as u64);
            self.tally.writes += 1;
        }
        r
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_at(offset, buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }

    fn reopen(&mut self) -> io::Result<()> {
        self.inner.reopen()
    }

    fn tally(&mut self) -> Option<Tally> {
        Some(Tally {
            now_ns: self.clock.now_ns(),
            ..self.tally
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::{FakeDevice, Model};

    /// A clock that moves 5 ns every time it is read.
    struct Ticks(u64);

    impl Clock for Ticks {
        fn now_ns(&mut self) -> u64 {
            self.0 += 5;
            self.0
        }
    }

    #[test]
    fn counts_the_writes_that_succeed_and_times_them() {
        let d = FakeDevice::new(1 << 20, 512, Model::IoErrors { real: 4096 });
        let mut c = Counted::new(d, Ticks(0));
        let t = c.tally().unwrap();
        assert_eq!((t.written_bytes, t.first_write_start_ns), (0, None));
        assert_eq!(t.idle_ns(), (10, true));
        c.write_at(0, &[7u8; 2048]).unwrap();
        c.write_at(2048, &[7u8; 1024]).unwrap();
        // Past the fake's real size: fails, timed, not counted.
        assert!(c.write_at(8192, &[7u8; 512]).is_err());
        let mut buf = [0u8; 512];
        c.read_at(0, &mut buf).unwrap();
        let t = c.tally().unwrap();
        assert_eq!((t.written_bytes, t.writes), (3072, 2));
        assert_eq!(t.first_write_start_ns, Some(15));
        assert_eq!(t.last_write_end_ns, Some(40));
        assert_eq!(t.idle_ns(), (5, false));
        assert_eq!(c.inner().highest_write_end, 3072);
        // A device not wrapped has no tally.
        let mut bare = FakeDevice::new(1 << 20, 512, Model::Genuine);
        assert_eq!(bare.tally(), None);
    }
}

#[cfg(test)]
mod compat {
    use crate::full::{Fall, FullOptions};

    /// A fall and options of a document before schema 1.14 read, and nothing new is
    /// written for a device that was not counted.
    #[test]
    fn documents_before_the_count_read_and_none_is_left_out() {
        let f: Fall =
            serde_json::from_str(r#"{"at":1048576,"before_mib_s":20.0,"after_mib_s":5.0}"#)
                .unwrap();
        assert_eq!(f.written_at, None);
        assert_eq!(
            serde_json::to_string(&f).unwrap(),
            r#"{"at":1048576,"before_mib_s":20.0,"after_mib_s":5.0}"#
        );
        let o = serde_json::to_value(FullOptions::default()).unwrap();
        assert!(o.get("idle_check_ns").is_none(), "{o}");
    }
}
