//! The largest counts a plan may ask for, below both the plan file's reader
//! (`file.rs`: its `Count` types refuse a value past them with the range) and
//! `sanity.rs` (which checks a resolved plan, JSON plans included, against them).

/// Most dependent reads per latency repeat: 1e9 (tinymembench does 1e7; 1e9 at a Pi
/// Zero's 300 ns is 5 min per block and repeat).
pub const MAX_LATENCY_READS: u64 = 1_000_000_000;

/// Most latency repeats, bandwidth samples and network round trips a plan may ask for:
/// 10,000 (tinymembench: 3 repeats, 10 samples; ping's default is 1 a second).
pub const MAX_COUNT: u32 = 10_000;
