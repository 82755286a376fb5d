//! The whole-card pass's read-back: every sector written read back and checked against
//! its stamp, after rewrites of the region's head and tail that push a write cache out
//! to the medium.

use super::{BadRegions, Clock, FullOptions, FullPhase, FullProgress, MAX_FAILURES_IN_A_ROW};
use crate::stamp;
use crate::{human_offset, BlockDevice, Found};

/// The state of the read-back: what was read, what held.
pub(super) struct ReadBack<'a> {
    pub(super) dev: &'a mut dyn BlockDevice,
    pub(super) clock: &'a mut dyn Clock,
    /// Sector size, bytes.
    pub(super) sector: u64,
    /// Size of one I/O, bytes.
    pub(super) io: u64,
    pub(super) nonce: u64,
    pub(super) buf: Vec<u8>,
    /// Ranges whose writes failed: already bad, not read again.
    pub(super) failed: Vec<(u64, u64)>,
    /// Each read's `(offset, bytes, ns)`.
    pub(super) reads: Vec<(u64, u64, u64)>,
    /// Bytes read back holding their own stamps.
    pub(super) good_bytes: u64,
    /// Reads failed in a row.
    pub(super) failures: u32,
}

impl ReadBack<'_> {
    /// Whether `[o, o + len)` overlaps a range whose write failed.
    pub(super) fn write_failed(&self, o: u64, len: u64) -> bool {
        self.failed.iter().any(|&(f, l)| f < o + len && o < f + l)
    }

    /// Reads `[a, b)` back, lowest first; `Err` says why it stopped.
    fn range(
        &mut self,
        a: u64,
        b: u64,
        bad: &mut BadRegions,
        progress: &mut dyn FnMut(u64),
        stop: &mut dyn FnMut() -> bool,
    ) -> Result<(), String> {
        let mut o = a;
        while o < b {
            if stop() {
                return Err("interrupted".into());
            }
            let len = self.io.min(b - o);
            if self.write_failed(o, len) {
                o += len;
                progress(len);
                continue;
            }
            let buf = &mut self.buf[..len as usize];
            let t0 = self.clock.now_ns();
            let r = self.dev.read_at(o, buf);
            let t1 = self.clock.now_ns();
            self.reads.push((o, len, t1.saturating_sub(t0)));
            match r {
                Err(e) => {
                    bad.add(
                        o,
                        len,
                        Found::ReadError {
                            error: e.to_string(),
                        },
                    );
                    self.failures += 1;
                    if self.failures >= MAX_FAILURES_IN_A_ROW {
                        return Err(format!(
                            "{} reads in a row failed, the last at {}",
                            self.failures,
                            human_offset(o)
                        ));
                    }
                }
                Ok(()) => {
                    self.failures = 0;
                    for (i, s) in buf.chunks_exact(self.sector as usize).enumerate() {
                        let at = o + i as u64 * self.sector;
                        match Found::of_sector(s, at, self.nonce) {
                            None => self.good_bytes += self.sector,
                            Some(found) => bad.add(at, self.sector, found),
                        }
                    }
                }
            }
            o += len;
            progress(len);
        }
        Ok(())
    }
}

/// Reads back the written region `[a, b)` (nothing after a Ctrl-C in the writes): the
/// tail after rewriting the head, then the head after rewriting the tail; the head is
/// whole I/Os, at least [`FullOptions::cache_flush_bytes`], at most half the region.
/// `Err`: why it stopped, and how many bytes it had read back.
pub(super) fn read_back(
    rb: &mut ReadBack<'_>,
    (a, b): (u64, u64),
    opts: &FullOptions,
    bad: &mut BadRegions,
    progress: &mut dyn FnMut(FullProgress),
    stop: &mut dyn FnMut() -> bool,
) -> Result<(), (String, u64)> {
    let io = rb.io;
    // Whole I/Os: at least the flush size, at most half of what was written.
    let f = opts
        .cache_flush_bytes
        .div_ceil(io)
        .saturating_mul(io)
        .min((b - a) / 2 / io * io);
    let total = b - a;
    let mut done = 0;
    let mut report = |n: u64| {
        done += n;
        progress(FullProgress {
            phase: FullPhase::Read,
            done,
            total,
        });
    };
    let head = (a, a + f);
    let tail = (b - f, b);
    let r = rewrite(rb, head, opts.nonce)
        .and_then(|()| rb.range(head.1, b, bad, &mut report, stop))
        .and_then(|()| rewrite(rb, tail, opts.nonce))
        .and_then(|()| rb.range(head.0, head.1, bad, &mut report, stop));
    r.map_err(|why| (why, done))
}

/// Writes `[a, b)` again with its own stamps (untimed), flushes and reopens: whatever a
/// write cache held before is on the medium now.
fn rewrite(rb: &mut ReadBack<'_>, (a, b): (u64, u64), nonce: u64) -> Result<(), String> {
    let mut o = a;
    while o < b {
        let len = rb.io.min(b - o);
        if !rb.write_failed(o, len) {
            let buf = &mut rb.buf[..len as usize];
            stamp::stamp(buf, o, nonce, rb.sector as usize);
            // A failing rewrite is found again when the range is read back.
            let _ = rb.dev.write_at(o, buf);
        }
        o += len;
    }
    rb.dev
        .flush()
        .and_then(|()| rb.dev.reopen())
        .map_err(|e| format!("flush/reopen: {e}"))
}
