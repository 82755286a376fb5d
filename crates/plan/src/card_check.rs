//! The optional full-card check ([`CardCheckPlan`]): the fake-capacity probe
//! (crates/probe) run by PID 1 over the boot card's unpartitioned space, for cards
//! already flashed. Destructive to that space only, off unless a plan file says
//! `[card-check] enabled = true` ([`crate::file::CardCheckSection`]).

use serde::{Deserialize, Serialize};

/// What PID 1 runs in the card-check step, after the storage steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CardCheckPlan {
    /// Resolution of the real-size estimate, bytes (the probe refines the boundary
    /// between its highest good and lowest bad block until the gap is at most this;
    /// it may use a coarser one on a very large region and says so).
    pub resolution_bytes: u64,
    /// Data written elsewhere in the region before reading back, bytes, to push the
    /// card's own write cache out (f3probe's reason for writing more than it reads).
    pub cache_flush_bytes: u64,
    /// Least unpartitioned space worth checking, bytes: below it the step is skipped
    /// with the reason (an image that fills the card leaves nothing to check).
    pub min_region_bytes: u64,
    /// Wall-clock limit of the check's worker, ms.
    pub time_limit_ms: u64,
    /// After the probe, the whole-card pass over the region (crates/probe/src/full.rs):
    /// every sector written and read back, each I/O timed: the speed profile, where the
    /// sustained write speed falls, stalls, bad regions. It stops itself at 90 % of
    /// `time_limit_ms` and says what it covered. Plans written before it read `false`.
    #[serde(default)]
    pub full: bool,
}

impl CardCheckPlan {
    /// A check for hardware: 1 MiB resolution, 32 MiB written past the card's cache,
    /// at least 16 MiB of unpartitioned space, 20 minutes at most.
    pub const HARDWARE: CardCheckPlan = CardCheckPlan {
        resolution_bytes: 1 << 20,
        cache_flush_bytes: 32 << 20,
        min_region_bytes: 16 << 20,
        time_limit_ms: 20 * 60 * 1000,
        full: false,
    };

    /// The QEMU plans' check: the same probe with a smaller cache flush (QEMU's card
    /// has no cache to push out; the emulated card writes a few MB/s).
    pub const QEMU: CardCheckPlan = CardCheckPlan {
        cache_flush_bytes: 1 << 20,
        time_limit_ms: 5 * 60 * 1000,
        ..CardCheckPlan::HARDWARE
    };

    /// The bound on this step's duration, ms (the worker's limit: the probe's writes are
    /// few, but a card's speed is what it is checking).
    pub fn estimate_ms(&self) -> u64 {
        self.time_limit_ms
    }

    /// Checks the step; returns (field, message) for the first problem.
    pub(crate) fn check(&self) -> Result<(), (&'static str, String)> {
        if self.resolution_bytes < 4096 || !self.resolution_bytes.is_power_of_two() {
            return Err((
                "card_check.resolution_bytes",
                format!(
                    "{} B: must be a power of two from 4 KiB",
                    self.resolution_bytes
                ),
            ));
        }
        if self.time_limit_ms == 0 {
            return Err(("card_check.time_limit_ms", "must be above 0 ms".into()));
        }
        Ok(())
    }
}
