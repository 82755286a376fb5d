//! Buffer sizes: far above the last-level cache, far below what the board has.
//!
//! - bandwidth: each buffer max(32 MiB, 4 x LLC) (tinymembench's 32 MiB; STREAM's rule,
//!   each array >= 4 x the LLC: www.cs.virginia.edu/stream/ref.html), all buffers of a
//!   run together within a quarter of MemTotal (no swap on a board: the OOM killer would
//!   end the worker), shrunk to fit and said so;
//! - latency: blocks up to the plan's largest (64 MiB), within the same quarter.

/// What a run's buffers are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sizing {
    /// Each bandwidth buffer (source, destination) of the one-core runs, bytes.
    pub buffer_bytes: u64,
    /// Each buffer of each thread in the all-cores run, bytes.
    pub all_cores_buffer_bytes: u64,
    /// The largest latency block, bytes (a power of two).
    pub latency_max_bytes: u64,
    /// The rule that set them, in words, for the results.
    pub why: String,
}

const MIB: u64 = 1 << 20;
/// tinymembench's buffer (main.c `SIZE`).
pub const TINYMEMBENCH_BYTES: u64 = 32 * MIB;

/// Sizes for a machine with `llc` bytes of last-level cache, `mem_total` bytes of RAM and
/// `cores` CPUs, for a plan whose largest latency block is `latency_max`.
pub fn size(llc: u64, mem_total: u64, cores: u32, latency_max: u64) -> Sizing {
    let budget = mem_total / 4;
    let want = TINYMEMBENCH_BYTES.max((4 * llc).div_ceil(MIB) * MIB);
    let fit = |buffers: u64| (budget / buffers / MIB * MIB).max(MIB);
    let one = want.min(fit(2));
    let cores = u64::from(cores.max(1));
    let all = want.min(fit(2 * cores));
    let mut lat = latency_max.max(1024);
    while lat > budget && lat > 1024 {
        lat /= 2;
    }
    let mut why = format!(
        "each buffer max(32 MiB, 4 x LLC {} KiB) = {} MiB",
        llc >> 10,
        want / MIB
    );
    if one < want {
        why += &format!(
            "; {} MiB: source + destination within a quarter of MemTotal ({} MiB)",
            one / MIB,
            mem_total / MIB
        );
    }
    if all < want && cores > 1 {
        why += &format!(
            "; {} MiB per thread on all {cores} cores at once",
            all / MIB
        );
    }
    for (b, what) in [(one, "one-core"), (all, "all-cores")] {
        if b < 4 * llc {
            why += &format!("; the {what} buffers are below 4 x LLC: figures include cache hits");
        }
    }
    if lat < latency_max {
        why += &format!("; latency up to {} MiB (a quarter of MemTotal)", lat / MIB);
    }
    Sizing {
        buffer_bytes: one,
        all_cores_buffer_bytes: all,
        latency_max_bytes: lat,
        why,
    }
}

/// The assumed last-level cache when the kernel exports none: 1 MiB, the largest L2 of
/// the boards here (BCM2711's Cortex-A72 cluster; BCM2835 128 KiB, BCM2837 512 KiB, A20
/// 256 KiB, AM3358 256 KiB: each SoC's datasheet), so buffers stay above 4 x LLC.
pub const ASSUMED_LLC: u64 = MIB;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pi_zero_w_gets_tinymembench_s_buffers_and_64_mib_latency() {
        // MemTotal of a Zero W with the default 64 MiB GPU split: 443,844 kB.
        let s = size(128 << 10, 443_844 * 1024, 1, 64 * MIB);
        assert_eq!(s.buffer_bytes, 32 * MIB);
        assert_eq!(s.latency_max_bytes, 64 * MIB);
        assert_eq!(s.why, "each buffer max(32 MiB, 4 x LLC 128 KiB) = 32 MiB");
    }

    #[test]
    fn four_cores_on_1_gib_shrink_the_all_cores_buffers_and_say_so() {
        // Pi 3 B: 512 KiB L2, MemTotal 948 MiB.
        let s = size(512 << 10, 948 * MIB, 4, 64 * MIB);
        assert_eq!(s.buffer_bytes, 32 * MIB);
        assert_eq!(s.all_cores_buffer_bytes, 29 * MIB, "237 MiB / 8 buffers");
        assert!(
            s.why.contains("29 MiB per thread on all 4 cores"),
            "{}",
            s.why
        );
        assert!(!s.why.contains("below 4 x LLC"), "{}", s.why);
    }

    #[test]
    fn a_big_llc_sets_the_size_and_a_small_board_halves_latency() {
        let s = size(32 * MIB, 64 * 1024 * MIB, 8, 64 * MIB);
        assert_eq!(s.buffer_bytes, 128 * MIB, "4 x a 32 MiB L3");
        // 128 MiB of RAM: budget 32 MiB -> 16 MiB buffers, latency to 32 MiB.
        let s = size(ASSUMED_LLC, 128 * MIB, 1, 64 * MIB);
        assert_eq!((s.buffer_bytes, s.latency_max_bytes), (16 * MIB, 32 * MIB));
        assert!(s.why.contains("16 MiB: source + destination"), "{}", s.why);
        assert!(s.why.contains("latency up to 32 MiB"), "{}", s.why);
    }

    #[test]
    fn buffers_never_fall_below_one_mib_nor_latency_below_1_kib() {
        let s = size(4 * MIB, 8 * MIB, 4, 64 * MIB);
        assert_eq!(s.buffer_bytes, MIB);
        assert_eq!(s.latency_max_bytes, 2 * MIB);
        assert!(s.why.contains("below 4 x LLC"), "{}", s.why);
    }
}
