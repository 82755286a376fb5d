//! The SD Association's A1 application performance class, as Raspberry Pi's SD card test
//! applies it: sequential write of at least 10,000 KB/s (KB = 1,000 bytes), random
//! 4 KiB write of at least 500 IOPS, random 4 KiB read of at least 1,500 IOPS (SD
//! Physical Layer Simplified Specification, "Application Performance Class";
//! Raspberry Pi `agnostics` sdtest).

use crate::{iops, Direction, Mode, RandomOp, RunResults};

/// Sequential write floor, bytes per second (10,000 KB/s).
pub const A1_SEQ_WRITE_BPS: f64 = 10_000_000.0;
/// Random 4 KiB write floor, IOPS.
pub const A1_RANDOM_WRITE_IOPS: f64 = 500.0;
/// Random 4 KiB read floor, IOPS.
pub const A1_RANDOM_READ_IOPS: f64 = 1_500.0;

/// The three deciding figures and the verdict, for one target.
#[derive(Debug, Clone, PartialEq)]
pub struct A1Verdict {
    pub target: String,
    /// Best sequential write (direct mode, blocks >= 64 KiB, median of repetitions), B/s.
    pub seq_write_bps: f64,
    /// Random 4 KiB write at queue depth 1, IOPS (median).
    pub random_write_iops: f64,
    /// Random 4 KiB read at queue depth 1, IOPS (median).
    pub random_read_iops: f64,
    pub passes: bool,
}

/// The A1 verdict for `target`, or `None` when a deciding figure was not measured.
pub fn a1_verdict(r: &RunResults, target: &str) -> Option<A1Verdict> {
    let seq = r
        .plan
        .storage
        .block_sizes
        .iter()
        .filter(|&&bs| bs >= 64 * 1024)
        .filter_map(|&bs| {
            let v: Vec<f64> = r
                .storage
                .iter()
                .filter(|m| m.target == target && m.block_size == bs)
                .filter(|m| m.direction == Direction::Write && m.mode == Mode::Direct)
                .map(|m| m.bytes as f64 / (m.nanos.max(1) as f64 / 1e9))
                .collect();
            crate::Summary::of(&v).map(|s| s.median)
        })
        .fold(None, |best: Option<f64>, x| {
            Some(best.map_or(x, |b| b.max(x)))
        })?;
    let rnd = |op| {
        let v: Vec<f64> = r
            .random
            .iter()
            .filter(|x| {
                x.target == target && x.op == op && x.queue_depth == 1 && x.block_size == 4096
            })
            .map(|x| iops(x.ios, x.nanos))
            .collect();
        crate::Summary::of(&v).map(|s| s.median)
    };
    let (w, rd) = (rnd(RandomOp::Write)?, rnd(RandomOp::Read)?);
    Some(A1Verdict {
        target: target.to_owned(),
        seq_write_bps: seq,
        random_write_iops: w,
        random_read_iops: rd,
        passes: seq >= A1_SEQ_WRITE_BPS && w >= A1_RANDOM_WRITE_IOPS && rd >= A1_RANDOM_READ_IOPS,
    })
}
