//! The idle check ([`super::FullOptions::idle_check_ns`]): what an idle pause gives back
//! of a card's fast cache. Cards move SLC contents to TLC/QLC while idle, so after a
//! pause writes go fast again for a while; the check rests, then writes the region
//! again from its start until the speed falls, and reports how much came back fast.

use super::read_back::ReadBack;
use super::{Fall, FullOptions, IdleCheck};
use crate::{human, stamp};

/// Slow writes in a row that end the check: the speed fell (one slow write is a stall).
pub const SLOW_IN_A_ROW: u32 = 3;
/// The pause is taken in slices of at most this, ns, with a look at `stop` between them
/// (Ctrl-C, a time limit): 100 ms.
const PAUSE_SLICE_NS: u64 = 100_000_000;

/// Rests `opts.idle_check_ns`, then rewrites `[a, b)` from `a` in the pass's writes
/// with the pass's own stamps (the data does not change) until [`SLOW_IN_A_ROW`]
/// writes in a row are slower than the geometric mean of `fall`'s speeds, or until
/// twice `cache` bytes (the fast cache the pass found) and [`SLOW_IN_A_ROW`] writes
/// more are written: the cost is the pause, what comes back at the fast speed and
/// three writes at the slow one. A flush (untimed) at the end.
pub(super) fn idle_check(
    rb: &mut ReadBack<'_>,
    (a, b): (u64, u64),
    fall: &Fall,
    cache: u64,
    opts: &FullOptions,
    stop: &mut dyn FnMut() -> bool,
) -> IdleCheck {
    let threshold = (fall.before_mib_s * fall.after_mib_s).sqrt();
    // Bytes per second at the threshold.
    let threshold_b_s = threshold * f64::from(1u32 << 20);
    let mut out = IdleCheck {
        asked_ns: opts.idle_check_ns,
        idle_ns: 0,
        fast_bytes: 0,
        written_bytes: 0,
        fell: false,
        threshold_mib_s: threshold,
        stopped: None,
    };
    let t0 = rb.clock.now_ns();
    let mut left = opts.idle_check_ns;
    while left > 0 {
        if stop() {
            out.stopped = Some("interrupted during the pause".into());
            return out;
        }
        let d = left.min(PAUSE_SLICE_NS);
        rb.clock.sleep_ns(d);
        left -= d;
    }
    out.idle_ns = match rb.dev.tally() {
        Some(t) => t.idle_ns().0,
        None => rb.clock.now_ns().saturating_sub(t0),
    };
    let io = rb.io;
    let cap = cache
        .saturating_mul(2)
        .saturating_add(u64::from(SLOW_IN_A_ROW) * io)
        .min(b - a);
    let mut slow_run = 0u32;
    let mut slow_from = 0u64;
    let mut o = a;
    while o < a + cap {
        if stop() {
            out.stopped = Some(format!(
                "interrupted after writing {} again",
                human(out.written_bytes)
            ));
            break;
        }
        let len = io.min(b - o);
        let buf = &mut rb.buf[..len as usize];
        stamp::stamp(buf, o, opts.nonce, rb.sector as usize);
        let t = rb.clock.now_ns();
        let r = rb.dev.write_at(o, buf);
        let ns = rb.clock.now_ns().saturating_sub(t);
        if let Err(e) = r {
            out.stopped = Some(format!("a write failed: {e}"));
            break;
        }
        // Slow: len / (ns / 1e9) < threshold_b_s, without dividing by a zero time.
        let slow = len as f64 * 1e9 < threshold_b_s * ns as f64;
        if slow {
            if slow_run == 0 {
                slow_from = out.written_bytes;
            }
            slow_run += 1;
        } else {
            slow_run = 0;
        }
        out.written_bytes += len;
        o += len;
        if slow_run >= SLOW_IN_A_ROW {
            out.fell = true;
            break;
        }
    }
    out.fast_bytes = if slow_run > 0 {
        slow_from
    } else {
        out.written_bytes
    };
    let _ = rb.dev.flush();
    out
}
