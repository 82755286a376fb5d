//! TCP internals of a run's streams at each sample: every stream's `TCP_INFO`
//! (crates/tcpinfo) folded into one [`Point`], and two points into the interval's
//! [`TcpSample`]. Pure: the sampler ([`crate::tcp::sample`]) passes what it read.

use benchboot_results::network::TcpSample;
use benchboot_tcpinfo::TcpInfo;
use serde::{Deserialize, Serialize};

/// All streams of one side at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Point {
    /// `tcpi_total_retrans` summed over the streams, each stream's last count kept once
    /// it can no longer be read, so the sum never goes back.
    pub retrans: u64,
    /// `tcpi_snd_cwnd × tcpi_snd_mss` summed over the streams read now, bytes.
    pub cwnd_bytes: u64,
    /// `tcpi_rtt` summed over the streams read now, µs.
    pub srtt_sum_us: u64,
    /// The largest `tcpi_rtt` of them, µs.
    pub srtt_max_us: u32,
    /// `tcpi_rttvar` summed over the streams read now, µs.
    pub rttvar_sum_us: u64,
    /// Streams read now.
    pub streams: u32,
}

/// Folds each sample's per-stream reads into [`Point`]s, remembering every stream's
/// last retransmit count.
#[derive(Debug, Clone, Default)]
pub struct Tracker {
    last_retrans: Vec<Option<u32>>,
}

impl Tracker {
    /// The point of one sample: `reads[i]` is stream `i`'s TCP_INFO, `None` when it
    /// could not be read (the stream ended and its socket is gone, or no Linux kernel).
    /// `None` when no stream has ever been read: no kernel figures at all, which must
    /// read as absent, never as zero.
    pub fn observe(&mut self, reads: &[Option<TcpInfo>]) -> Option<Point> {
        if self.last_retrans.len() < reads.len() {
            self.last_retrans.resize(reads.len(), None);
        }
        let mut p = Point::default();
        for (i, r) in reads.iter().enumerate() {
            let Some(r) = r else { continue };
            self.last_retrans[i] = Some(r.total_retrans);
            p.cwnd_bytes = p.cwnd_bytes.saturating_add(r.cwnd_bytes());
            p.srtt_sum_us = p.srtt_sum_us.saturating_add(u64::from(r.rtt_us));
            p.srtt_max_us = p.srtt_max_us.max(r.rtt_us);
            p.rttvar_sum_us = p.rttvar_sum_us.saturating_add(u64::from(r.rttvar_us));
            p.streams += 1;
        }
        if self.last_retrans.iter().all(Option::is_none) {
            return None;
        }
        p.retrans = self
            .last_retrans
            .iter()
            .flatten()
            .map(|&x| u64::from(x))
            .sum();
        Some(p)
    }
}

/// The interval from `prev` to `end`: retransmits are the change of the summed count
/// (0, not a wrap, should it go back); window and RTTs are `end`'s, RTTs as means
/// over the streams read then. `None` unless both ends have a point.
pub fn between(prev: Option<Point>, end: Option<Point>) -> Option<TcpSample> {
    let (prev, end) = (prev?, end?);
    let mean = |sum: u64| {
        if end.streams == 0 {
            0
        } else {
            u32::try_from(sum / u64::from(end.streams)).unwrap_or(u32::MAX)
        }
    };
    Some(TcpSample {
        retransmits: end.retrans.saturating_sub(prev.retrans),
        cwnd_bytes: end.cwnd_bytes,
        srtt_us: mean(end.srtt_sum_us),
        srtt_max_us: end.srtt_max_us,
        rttvar_us: mean(end.rttvar_sum_us),
        streams: end.streams,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(retrans: u32, cwnd: u32, rtt: u32) -> Option<TcpInfo> {
        Some(TcpInfo {
            total_retrans: retrans,
            snd_cwnd: cwnd,
            snd_mss: 1000,
            rtt_us: rtt,
            rttvar_us: rtt / 2,
            rcv_rtt_us: 0,
        })
    }

    #[test]
    fn retransmits_are_the_change_of_the_counter() {
        let mut t = Tracker::default();
        let a = t.observe(&[info(5, 10, 2000)]);
        let b = t.observe(&[info(9, 20, 3000)]);
        let s = between(a, b).unwrap();
        assert_eq!(
            s,
            TcpSample {
                retransmits: 4,
                cwnd_bytes: 20_000,
                srtt_us: 3000,
                srtt_max_us: 3000,
                rttvar_us: 1500,
                streams: 1,
            }
        );
    }

    #[test]
    fn streams_are_summed_and_averaged() {
        let mut t = Tracker::default();
        let a = t.observe(&[info(1, 10, 1000), info(2, 30, 4000)]);
        let b = t.observe(&[info(3, 10, 1000), info(2, 30, 4000)]);
        let s = between(a, b).unwrap();
        assert_eq!(
            (
                s.retransmits,
                s.cwnd_bytes,
                s.srtt_us,
                s.srtt_max_us,
                s.streams
            ),
            (2, 40_000, 2500, 4000, 2)
        );
    }

    /// A stream whose socket can no longer be read keeps its last count: the sum does
    /// not fall by it (which the saturating delta would hide as 0, and the next
    /// interval would then count its old retransmits again).
    #[test]
    fn a_stream_that_ends_early_keeps_its_count() {
        let mut t = Tracker::default();
        let a = t.observe(&[info(5, 10, 1000), info(7, 10, 1000)]);
        let b = t.observe(&[info(6, 10, 1000), None]);
        let c = t.observe(&[info(8, 10, 3000), None]);
        assert_eq!(b.unwrap().retrans, 13);
        assert_eq!(between(a, b).unwrap().retransmits, 1);
        let s = between(b, c).unwrap();
        assert_eq!((s.retransmits, s.streams, s.srtt_us), (2, 1, 3000));
        // Every stream gone: the count stands, no window, no RTT.
        let d = t.observe(&[None, None]);
        let s = between(c, d).unwrap();
        assert_eq!(
            (s.retransmits, s.streams, s.cwnd_bytes, s.srtt_us),
            (0, 0, 0, 0)
        );
    }

    #[test]
    fn no_kernel_figures_are_absent_not_zero() {
        let mut t = Tracker::default();
        assert_eq!(t.observe(&[None, None]), None);
        assert_eq!(t.observe(&[]), None);
        assert_eq!(between(None, Some(Point::default())), None);
        assert_eq!(between(Some(Point::default()), None), None);
    }
}
