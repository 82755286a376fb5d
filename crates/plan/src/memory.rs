//! The memory step of a plan ([`MemoryPlan`]): bandwidth per kernel and core set,
//! latency over growing blocks, as tinymembench and sbc-bench measure them
//! (ssvb/tinymembench main.c; ThomasKaiser/sbc-bench sbc-bench.sh). Plan file
//! `[memory]` ([`crate::file::MemorySection`]).

use serde::{Deserialize, Serialize};

/// What PID 1 (or `benchboot memory`) runs in the memory step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryPlan {
    /// Least time of one bandwidth sample, ms: the kernel repeats, doubling its count,
    /// until a sample lasts this long (tinymembench: 0.5 s).
    pub sample_ms: u64,
    /// Samples per kernel and core set (tinymembench: up to 10; the best is reported).
    pub samples: u32,
    /// Largest latency block, bytes (a power of two; tinymembench: 64 MiB); the buffers
    /// may be made smaller on a board with little memory (the results say so).
    pub latency_max_bytes: u64,
    /// Dependent reads per latency repeat (tinymembench: 10,000,000); the engine rounds it
    /// down to a multiple of 16, at least 16 (its loops read 16 at a time).
    pub latency_reads: u64,
    /// Repeats per block size, each at another random offset; the fastest
    /// counts (tinymembench: up to 3 by default).
    pub latency_repeats: u32,
    /// Also run the latency table with transparent huge pages where the kernel has them.
    pub huge_pages: bool,
    /// On a multi-core board, also measure libc memcpy/memset pinned to each other core
    /// and on all cores at once.
    pub per_core: bool,
    /// Wall-clock limit of the whole memory worker, ms.
    pub time_limit_ms: u64,
    /// Each bandwidth buffer, bytes, instead of the size from the LLC and MemTotal
    /// (`benchboot memory --buffer-mib`, to run at another tool's size); `None` (every
    /// built-in plan): max(32 MiB, 4 x LLC) within a quarter of MemTotal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_bytes: Option<u64>,
}

impl MemoryPlan {
    /// The hardware plan's memory step: tinymembench's 0.5 s samples and 64 MiB latency
    /// block, 5 samples, 3 repeats of 4 M reads (tinymembench does 10 M: 4 M already
    /// takes over 1 s per repeat at a Pi Zero's 300 ns).
    pub const HARDWARE: MemoryPlan = MemoryPlan {
        sample_ms: 500,
        samples: 5,
        latency_max_bytes: 64 << 20,
        latency_reads: 4_000_000,
        latency_repeats: 3,
        huge_pages: true,
        per_core: true,
        time_limit_ms: 15 * 60 * 1000,
        buffer_bytes: None,
    };

    /// The QEMU plans' memory step: every kernel and block size, short (TCG runs a
    /// guest 10-50x slower than the hardware; its figures are emulated anyway).
    pub const QEMU: MemoryPlan = MemoryPlan {
        sample_ms: 20,
        samples: 2,
        latency_max_bytes: 64 << 20,
        latency_reads: 100_000,
        latency_repeats: 1,
        huge_pages: true,
        per_core: true,
        time_limit_ms: 10 * 60 * 1000,
        buffer_bytes: None,
    };

    /// The bound on this step's duration, ms, for the plan's estimate, on a 4-core board:
    /// up to 8 kernels on the first core and libc memcpy + memset on 3 more cores and on
    /// all at once, `samples` each of up to 2 x `sample_ms` (the count doubling can
    /// overshoot by one); the latency rows (1 KiB .. max, single + dual + baseline) at a
    /// pessimistic 400 ns per read.
    pub fn estimate_ms(&self) -> u64 {
        let tests = 8 + 2 * 4;
        let bandwidth =
            crate::estimate::product(&[tests, u64::from(self.samples), 2, self.sample_ms]);
        let rows = u64::from(self.latency_max_bytes.max(1024).ilog2() - 10 + 1);
        let pages = if self.huge_pages { 2 } else { 1 };
        let reads = crate::estimate::product(&[
            rows * 2 + 1,
            pages,
            u64::from(self.latency_repeats),
            self.latency_reads,
        ]);
        // 400 ns a read; u128 so no plan's counts overflow it.
        let reads_ms = u64::try_from(u128::from(reads) * 400 / 1_000_000).unwrap_or(u64::MAX);
        bandwidth.saturating_add(reads_ms)
    }
}
