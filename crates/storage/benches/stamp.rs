//! What the sweep's stamps ([`stamp_block`]) cost per 4 MiB block, in the bench profile
//! (optimised, as the board's binaries are): `cargo bench -p benchboot-storage --bench
//! stamp`. `cargo xtask bench storage` runs it and prints the figures beside the disk's.
//!
//! Two figures, ns per 4 MiB block, medians of [`ROUNDS`]:
//! - `alone`: [`stamp_block`] over a block already in the cache.
//! - `stamped` and `plain`: the write loop over a sink that copies each block into a
//!   64 MiB ring, as write(2) copies it into the page cache: [`timed_write`] (stamps
//!   every block) against the same copies with no stamp, interleaved round by round.
//!   `stamped - plain` is what the stamps add to a buffered write.
//!
//! Prints one line: `stamp 4MiB: alone_ns=… stamped_ns=… plain_ns=…`.
#![forbid(unsafe_code)]

use std::convert::Infallible;
use std::time::Instant;

use benchboot_storage::engine::{pattern_block, stamp_block, timed_write, Caps, MonotonicClock};
use embedded_io::Write;

/// Bytes of one block: the largest block size of the sweep.
const BLOCK: usize = 4 << 20;
/// Blocks per timed loop.
const BLOCKS: usize = 32;
/// Rounds; the median is printed.
const ROUNDS: usize = 31;

/// Copies every write into a 64 MiB ring (larger than the last-level caches here, as
/// the page cache a 256 MiB pass writes is).
struct CopySink {
    ring: Vec<u8>,
    at: usize,
}

impl embedded_io::ErrorType for CopySink {
    type Error = Infallible;
}

impl Write for CopySink {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
        if self.at + buf.len() > self.ring.len() {
            self.at = 0;
        }
        self.ring[self.at..self.at + buf.len()].copy_from_slice(buf);
        self.at += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> Result<(), Infallible> {
        Ok(())
    }
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

fn main() {
    let mut block = pattern_block(BLOCK, 1);
    let mut sink = CopySink {
        ring: pattern_block(64 << 20, 2),
        at: 0,
    };
    let caps = Caps {
        bytes: (BLOCK * BLOCKS) as u64,
        time_ns: u64::MAX,
    };
    let (mut alone, mut stamped, mut plain) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS as u64 {
        let t = Instant::now();
        stamp_block(&mut block, round * BLOCK as u64, round);
        std::hint::black_box(&block);
        alone.push(t.elapsed().as_nanos() as u64);

        let timed = timed_write(&mut sink, &mut block, round, caps, &mut MonotonicClock);
        let Ok(timed) = timed;
        stamped.push(timed.nanos / BLOCKS as u64);

        let t = Instant::now();
        for _ in 0..BLOCKS {
            let Ok(()) = sink.write_all(&block);
        }
        std::hint::black_box(&sink.ring);
        plain.push(t.elapsed().as_nanos() as u64 / BLOCKS as u64);
    }
    println!(
        "stamp 4MiB: alone_ns={} stamped_ns={} plain_ns={}",
        median(alone),
        median(stamped),
        median(plain)
    );
}
