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

/// What an A1 verdict says once the run's emulation is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum A1Outcome {
    Pass,
    Fail,
    /// An emulated run: QEMU's virtual disk is no card, so the floors are not judged.
    Emulated,
}

impl A1Outcome {
    /// `PASS`, `FAIL`, `EMULATED`: the word every output prints.
    pub fn word(self) -> &'static str {
        match self {
            A1Outcome::Pass => "PASS",
            A1Outcome::Fail => "FAIL",
            A1Outcome::Emulated => "EMULATED",
        }
    }
}

/// Why an emulated run's A1 verdict is not judged.
pub const A1_EMULATED: &str = "not judged: QEMU's virtual disk is no card";

impl A1Verdict {
    /// [`A1Outcome::Emulated`] for an emulated run (`emulated`), else pass or fail.
    pub fn outcome(&self, emulated: bool) -> A1Outcome {
        match (emulated, self.passes) {
            (true, _) => A1Outcome::Emulated,
            (false, true) => A1Outcome::Pass,
            (false, false) => A1Outcome::Fail,
        }
    }

    /// The sequential write in MB/s (10^6 B/s), the unit every output gives it in.
    pub fn seq_write_mb_per_s(&self) -> f64 {
        self.seq_write_bps / 1e6
    }

    /// The three deciding figures with their floors, as the report and the console
    /// print them: `sequential write 433.0 MB/s (>= 10 MB/s), random write 2643 IOPS
    /// (>= 500), random read 3009 IOPS (>= 1,500)`; MB = 10^6 bytes.
    pub fn figures_text(&self) -> String {
        format!(
            "sequential write {:.1} MB/s (>= 10 MB/s), random write {:.0} IOPS (>= 500), \
             random read {:.0} IOPS (>= 1,500)",
            self.seq_write_mb_per_s(),
            self.random_write_iops,
            self.random_read_iops
        )
    }
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
