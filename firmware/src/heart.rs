//! The main sequence's heartbeat: PID 1 beats it whenever it makes progress (a console
//! line, a persisted document, a worker-wait tick) and says once when results are
//! served. The watchdog's feeding thread ([`crate::watchdog`]) reads it.
//!
//! Below the console, the waits and the worker supervision that beat it, and below the
//! watchdog that reads it: two atomics and nothing else.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::sys;

static LAST_BEAT_NS: AtomicU64 = AtomicU64::new(0);
static SERVING: AtomicBool = AtomicBool::new(false);

/// The main sequence made progress now. Cheap: one atomic store.
pub fn beat() {
    LAST_BEAT_NS.store(sys::boottime_ns(), Ordering::Relaxed);
}

/// When the main sequence last beat, ns of CLOCK_BOOTTIME (0: never).
pub fn last_beat_ns() -> u64 {
    LAST_BEAT_NS.load(Ordering::Relaxed)
}

/// Results are being served: feed for the rest of the boot.
pub fn serving() {
    SERVING.store(true, Ordering::Relaxed);
}

/// Whether [`serving`] was called.
pub fn is_serving() -> bool {
    SERVING.load(Ordering::Relaxed)
}
