//! Interval slicing: samples of (elapsed time, cumulative bytes, CPU counters) taken
//! during a run become per-interval figures and totals with the warm-up left out.
//!
//! Pure functions. A run's clock starts at its start instant; the first `omit_ns` are
//! warm-up (TCP slow start), then `duration_ns` are measured in intervals of
//! `interval_ns` (the last one shorter when the duration is not a multiple). Each side
//! samples at those boundaries; the receiver's bytes are the reported figures, each
//! side's CPU its own ([`merge`]).

use benchboot_results::network::{CpuTimes, NetInterval, TcpSample, TcpTotals};
use serde::{Deserialize, Serialize};

use crate::procstat::delta;
use crate::tcpstate::{self, Point};

/// Most intervals a throughput run may have, so that its `ThroughputDone` control line
/// (~500 bytes an interval at worst, TCP_INFO figures included) stays under [`crate::control::MAX_LINE`].
pub const MAX_INTERVALS: u64 = 3600;

/// One sample: time since the run's start instant, bytes so far (all streams), absolute
/// `/proc/stat` counters, and the streams' TCP_INFO (`None` where the kernel gave none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Sample {
    pub elapsed_ns: u64,
    pub bytes: u64,
    pub cpu: CpuTimes,
    pub tcp: Option<Point>,
}

/// The clock of a run, ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timing {
    /// Warm-up measured but not counted.
    pub omit_ns: u64,
    /// Report interval (> 0).
    pub interval_ns: u64,
    /// Measured span after the warm-up.
    pub duration_ns: u64,
}

/// Why [`Timing::check`] refused a clock; each message names the plan's key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TimingError {
    /// An interval under 1 ms.
    #[error("interval_ms must be at least 1")]
    IntervalTooShort,
    /// A warm-up (omitted time) over one hour.
    #[error("omit_ms must be at most one hour")]
    WarmUpTooLong,
    /// No interval, or more than [`MAX_INTERVALS`]: the count the clock gives.
    #[error("duration_ms / interval_ms must give 1 ..= {MAX_INTERVALS} intervals, not {0}")]
    Intervals(u64),
}

impl Timing {
    /// From the plan's milliseconds.
    pub fn from_ms(omit_ms: u64, interval_ms: u64, duration_ms: u64) -> Timing {
        Timing {
            omit_ns: omit_ms.saturating_mul(1_000_000),
            interval_ns: interval_ms.saturating_mul(1_000_000),
            duration_ns: duration_ms.saturating_mul(1_000_000),
        }
    }

    /// Refuses clocks this engine cannot run.
    ///
    /// # Errors
    /// [`TimingError`]: an interval under 1 ms, a warm-up over an hour, no interval at
    /// all, or more than [`MAX_INTERVALS`].
    pub fn check(&self) -> Result<(), TimingError> {
        const MS: u64 = 1_000_000;
        if self.interval_ns < MS {
            return Err(TimingError::IntervalTooShort);
        }
        if self.omit_ns > 3600 * 1000 * MS {
            return Err(TimingError::WarmUpTooLong);
        }
        let n = self.intervals();
        if n == 0 || n > MAX_INTERVALS {
            return Err(TimingError::Intervals(n));
        }
        Ok(())
    }

    /// Number of intervals: ⌈duration / interval⌉ (0 when the interval is 0).
    pub fn intervals(&self) -> u64 {
        if self.interval_ns == 0 {
            return 0;
        }
        self.duration_ns.div_ceil(self.interval_ns)
    }

    /// Boundary `k` (0 = end of the warm-up, [`Timing::intervals`] = end of the run),
    /// ns since the start instant.
    pub fn boundary(&self, k: u64) -> u64 {
        self.omit_ns
            .saturating_add(k.saturating_mul(self.interval_ns).min(self.duration_ns))
    }
}

/// Figures of one span of one side: times relative to the end of the warm-up (the
/// sample that closed it), ns; bytes and CPU jiffies within the span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Span {
    pub start_ns: u64,
    pub end_ns: u64,
    pub bytes: u64,
    pub cpu: CpuTimes,
    /// This side's TCP_INFO over the span ([`tcpstate::between`]); absent from a peer
    /// without it (an older peer, a macOS or Windows host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpSample>,
}

/// One side's view of a run: every interval, and the total after the warm-up.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Sliced {
    pub intervals: Vec<Span>,
    pub total: Span,
    /// A sample closed the last boundary: the run was not cut short.
    pub complete: bool,
}

/// Slices samples (in time order) at the boundaries of `t`.
///
/// Boundary `k` is closed by the first sample taken at or after it; the warm-up ends at
/// the first sample at or after `omit_ns`, which is time 0 of every span. Samples in
/// between are ignored; a sample late past several boundaries closes one longer interval.
/// Samples after the last boundary are ignored. No sample at or after `omit_ns` gives an
/// empty result; a run cut short gives fewer intervals.
pub fn slice(samples: &[Sample], t: &Timing) -> Sliced {
    let n = t.intervals();
    let omit = t.boundary(0);
    let Some(first) = samples.iter().position(|s| s.elapsed_ns >= omit) else {
        return Sliced::default();
    };
    let base = samples[first];
    let rel = |s: &Sample| s.elapsed_ns.saturating_sub(base.elapsed_ns);
    let mut prev = base;
    let mut intervals = Vec::with_capacity(n as usize);
    let mut k = 1;
    let mut complete = n == 0;
    for s in &samples[first + 1..] {
        if k > n {
            break;
        }
        if s.elapsed_ns < t.boundary(k) {
            continue;
        }
        intervals.push(Span {
            start_ns: rel(&prev),
            end_ns: rel(s),
            bytes: s.bytes.saturating_sub(prev.bytes),
            cpu: delta(&prev.cpu, &s.cpu),
            tcp: tcpstate::between(prev.tcp, s.tcp),
        });
        prev = *s;
        while k <= n && t.boundary(k) <= s.elapsed_ns {
            k += 1;
        }
        complete = k > n;
    }
    Sliced {
        intervals,
        total: Span {
            start_ns: 0,
            end_ns: rel(&prev),
            bytes: prev.bytes.saturating_sub(base.bytes),
            cpu: delta(&base.cpu, &prev.cpu),
            tcp: tcpstate::between(base.tcp, prev.tcp),
        },
        complete,
    }
}

/// A run put together from both sides.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Merged {
    /// The receiver's intervals, with each side's CPU of the interval of the same index.
    pub intervals: Vec<NetInterval>,
    /// Received after the warm-up, and over how long.
    pub bytes: u64,
    pub nanos: u64,
    pub board_cpu: CpuTimes,
    pub host_cpu: CpuTimes,
    /// Each side's TCP_INFO totals over its intervals ([`TcpTotals::of`]).
    pub board_tcp: Option<TcpTotals>,
    pub host_tcp: Option<TcpTotals>,
}

/// Bytes and times from the `receiver`'s slices (it may be `board` or `host`), CPU from
/// each side's own, TCP_INFO likewise. A side with fewer intervals leaves zeros (CPU)
/// and absent TCP figures in the rest.
pub fn merge(receiver: &Sliced, board: &Sliced, host: &Sliced) -> Merged {
    let cpu = |s: &Sliced, i: usize| s.intervals.get(i).map(|x| x.cpu).unwrap_or_default();
    let tcp = |s: &Sliced, i: usize| s.intervals.get(i).and_then(|x| x.tcp);
    let totals = |s: &Sliced| TcpTotals::of(s.intervals.iter().filter_map(|x| x.tcp));
    Merged {
        intervals: receiver
            .intervals
            .iter()
            .enumerate()
            .map(|(i, r)| NetInterval {
                start_ns: r.start_ns,
                end_ns: r.end_ns,
                bytes: r.bytes,
                board_cpu: cpu(board, i),
                host_cpu: cpu(host, i),
                board_tcp: tcp(board, i),
                host_tcp: tcp(host, i),
            })
            .collect(),
        bytes: receiver.total.bytes,
        nanos: receiver
            .total
            .end_ns
            .saturating_sub(receiver.total.start_ns),
        board_cpu: board.total.cpu,
        host_cpu: host.total.cpu,
        board_tcp: totals(board),
        host_tcp: totals(host),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn cpu(user: u64, system: u64, idle: u64) -> CpuTimes {
        CpuTimes {
            user,
            system,
            idle,
            ..CpuTimes::default()
        }
    }

    fn s(ms: u64, bytes: u64, c: CpuTimes) -> Sample {
        Sample {
            elapsed_ns: ms * MS,
            bytes,
            cpu: c,
            tcp: None,
        }
    }

    #[test]
    fn timing_counts_and_places_boundaries() {
        let t = Timing::from_ms(200, 100, 250);
        assert_eq!(t.intervals(), 3);
        assert_eq!(
            (0..=3).map(|k| t.boundary(k) / MS).collect::<Vec<_>>(),
            [200, 300, 400, 450]
        );
        assert_eq!(Timing::from_ms(0, 0, 100).intervals(), 0);
        assert!(t.check().is_ok());
        assert_eq!(
            Timing::from_ms(0, 0, 100).check(),
            Err(TimingError::IntervalTooShort)
        );
        assert_eq!(
            Timing::from_ms(0, 10, 0).check(),
            Err(TimingError::Intervals(0))
        );
        assert_eq!(
            Timing::from_ms(0, 1, 3_600_001).check(),
            Err(TimingError::Intervals(3_600_001))
        );
        assert_eq!(
            Timing::from_ms(0, 1, 3_600_001)
                .check()
                .unwrap_err()
                .to_string(),
            format!(
                "duration_ms / interval_ms must give 1 ..= {MAX_INTERVALS} intervals, not 3600001"
            )
        );
        assert_eq!(
            Timing::from_ms(u64::MAX, 10, 100).check(),
            Err(TimingError::WarmUpTooLong)
        );
    }

    #[test]
    fn warm_up_is_left_out_and_intervals_are_exact() {
        // 100 ms warm-up, 3 intervals of 100 ms; samples a little late, as a sleeping
        // sampler's are.
        let t = Timing::from_ms(100, 100, 300);
        let samples = [
            s(0, 0, cpu(0, 0, 0)),
            s(101, 5_000, cpu(1, 2, 7)), // end of warm-up: time 0
            s(150, 9_000, cpu(2, 2, 8)), // inside interval 1: ignored
            s(201, 15_000, cpu(3, 5, 14)),
            s(302, 27_000, cpu(6, 8, 19)),
            s(401, 40_000, cpu(8, 12, 23)),
            s(450, 99_000, cpu(9, 9, 99)), // past the end: ignored
        ];
        let r = slice(&samples, &t);
        assert_eq!(
            r.intervals,
            vec![
                Span {
                    start_ns: 0,
                    end_ns: 100 * MS,
                    bytes: 10_000,
                    cpu: cpu(2, 3, 7),
                    tcp: None,
                },
                Span {
                    start_ns: 100 * MS,
                    end_ns: 201 * MS,
                    bytes: 12_000,
                    cpu: cpu(3, 3, 5),
                    tcp: None,
                },
                Span {
                    start_ns: 201 * MS,
                    end_ns: 300 * MS,
                    bytes: 13_000,
                    cpu: cpu(2, 4, 4),
                    tcp: None,
                },
            ]
        );
        assert_eq!(
            r.total,
            Span {
                start_ns: 0,
                end_ns: 300 * MS,
                bytes: 35_000,
                cpu: cpu(7, 10, 16),
                tcp: None,
            }
        );
        let sum: u64 = r.intervals.iter().map(|i| i.bytes).sum();
        assert_eq!(sum, r.total.bytes);
        assert!(r.complete);
    }

    #[test]
    fn a_late_sample_closes_one_longer_interval() {
        let t = Timing::from_ms(0, 100, 400);
        let samples = [
            s(0, 0, cpu(0, 0, 0)),
            s(100, 10, cpu(1, 0, 0)),
            s(310, 40, cpu(4, 0, 0)), // slept through boundary 200 and 300
            s(400, 50, cpu(5, 0, 0)),
        ];
        let r = slice(&samples, &t);
        let spans: Vec<(u64, u64, u64)> = r
            .intervals
            .iter()
            .map(|i| (i.start_ns / MS, i.end_ns / MS, i.bytes))
            .collect();
        assert_eq!(spans, [(0, 100, 10), (100, 310, 30), (310, 400, 10)]);
        assert_eq!((r.total.end_ns / MS, r.total.bytes), (400, 50));
        assert!(r.complete);
    }

    #[test]
    fn short_or_empty_runs() {
        let t = Timing::from_ms(100, 100, 300);
        // Stopped after one interval: one interval, totals up to there.
        let r = slice(&[s(100, 0, cpu(0, 0, 0)), s(200, 7, cpu(1, 1, 1))], &t);
        assert_eq!(r.intervals.len(), 1);
        assert_eq!((r.total.end_ns, r.total.bytes), (100 * MS, 7));
        assert!(!r.complete);
        // Never got past the warm-up.
        assert_eq!(slice(&[s(0, 0, cpu(0, 0, 0))], &t), Sliced::default());
        assert_eq!(slice(&[], &t), Sliced::default());
    }

    #[test]
    fn merge_takes_bytes_from_the_receiver_and_cpu_from_each_side() {
        let span = |start: u64, bytes: u64, c: CpuTimes| Span {
            start_ns: start * MS,
            end_ns: (start + 100) * MS,
            bytes,
            cpu: c,
            tcp: None,
        };
        let host = Sliced {
            intervals: vec![span(0, 10, cpu(1, 0, 0)), span(100, 20, cpu(2, 0, 0))],
            total: Span {
                start_ns: 0,
                end_ns: 200 * MS,
                bytes: 30,
                cpu: cpu(3, 0, 0),
                tcp: None,
            },
            complete: true,
        };
        let board = Sliced {
            intervals: vec![span(0, 0, cpu(0, 5, 0))], // one interval short
            total: Span {
                start_ns: 0,
                end_ns: 100 * MS,
                bytes: 0,
                cpu: cpu(0, 5, 0),
                tcp: None,
            },
            complete: false,
        };
        let m = merge(&host, &board, &host);
        assert_eq!((m.bytes, m.nanos), (30, 200 * MS));
        assert_eq!((m.board_cpu, m.host_cpu), (cpu(0, 5, 0), cpu(3, 0, 0)));
        assert_eq!(m.intervals.len(), 2);
        assert_eq!(m.intervals[1].bytes, 20);
        assert_eq!(m.intervals[1].host_cpu, cpu(2, 0, 0));
        assert_eq!(m.intervals[1].board_cpu, CpuTimes::default());
    }

    /// Each interval's TCP figures come from the samples that bound it; the run's
    /// totals add the intervals' retransmits (the warm-up's left out) and take the
    /// worst srtt; a side without TCP_INFO has none, not zeros.
    #[test]
    fn tcp_figures_follow_the_intervals_and_add_up() {
        let p = |retrans: u64, srtt: u32| Point {
            retrans,
            cwnd_bytes: 14_480,
            srtt_sum_us: u64::from(srtt) * 2,
            srtt_max_us: srtt + 100,
            rttvar_sum_us: 200,
            streams: 2,
        };
        let t = Timing::from_ms(100, 100, 200);
        let with = |ms: u64, tcp: Option<Point>| Sample {
            tcp,
            ..s(ms, ms * 10, cpu(0, 0, 0))
        };
        let board = slice(
            &[
                with(0, Some(p(0, 1000))),
                with(100, Some(p(5, 1000))), // warm-up's 5 left out
                with(200, Some(p(9, 2000))),
                with(300, Some(p(9, 4000))),
            ],
            &t,
        );
        let tcp: Vec<_> = board.intervals.iter().map(|i| i.tcp.unwrap()).collect();
        assert_eq!(
            tcp.iter()
                .map(|x| (x.retransmits, x.srtt_us, x.srtt_max_us, x.rttvar_us))
                .collect::<Vec<_>>(),
            [(4, 2000, 2100, 100), (0, 4000, 4100, 100)]
        );
        assert_eq!(board.total.tcp.unwrap().retransmits, 4);
        let host = slice(&[with(100, None), with(200, None), with(300, None)], &t);
        assert_eq!(host.intervals.len(), 2);
        assert!(host.intervals.iter().all(|i| i.tcp.is_none()));
        let m = merge(&host, &board, &host);
        assert_eq!(
            m.board_tcp,
            Some(TcpTotals {
                retransmits: 4,
                srtt_us: 3000,
                srtt_max_us: 4100,
            })
        );
        assert_eq!(m.host_tcp, None);
        assert_eq!(m.intervals[0].board_tcp, Some(tcp[0]));
        assert_eq!(m.intervals[1].host_tcp, None);
    }
}
