//! Completion latency and throughput over time of storage passes (schema 1.14): fio's
//! log-linear latency histogram ([`LatencyHistogram`], serialized sparse as [`Latency`])
//! with its percentiles, and a bounded timeline of cumulative bytes ([`TimelineRecorder`],
//! [`TimelinePoint`]) whose per-interval rates are derived here ([`interval_rates`]).
//!
//! The buckets are fio's (`stat.h`: `FIO_IO_U_PLAT_BITS` 6, `FIO_IO_U_PLAT_VAL` 64,
//! `FIO_IO_U_PLAT_GROUP_NR` 29; `stat.c`: `plat_val_to_idx`, `plat_idx_to_val`,
//! `calc_clat_percentiles`), in ns as fio's `clat_ns`: values below 128 ns have a bucket
//! each; above, each power-of-two range `[2^k, 2^(k+1))` is split into 64 equal buckets,
//! so a bucket's width is at most 1/64 of its lower edge and its representative (the
//! middle) is within 1/128 (0.78 %) of any value in it. The last bucket (index 1855)
//! starts at 2^34 − 2^27 ns (about 17.05 s) and takes every longer value.

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

/// Bits of a value kept exactly within its power-of-two group (fio `stat.h`
/// `FIO_IO_U_PLAT_BITS`).
pub const PLAT_BITS: u32 = 6;
/// Buckets per group (fio `FIO_IO_U_PLAT_VAL`, 2^6).
pub const PLAT_VAL: usize = 1 << PLAT_BITS;
/// Groups (fio `FIO_IO_U_PLAT_GROUP_NR`).
pub const PLAT_GROUP_NR: usize = 29;
/// Buckets of the histogram (fio `FIO_IO_U_PLAT_NR`, 29 × 64 = 1856).
pub const PLAT_NR: usize = PLAT_GROUP_NR * PLAT_VAL;

/// The bucket of a latency of `ns` nanoseconds (fio `stat.c` `plat_val_to_idx`): the
/// value itself below 128 ns, else the group of its most significant bit and its next 6
/// bits; past the last bucket, the last ([`PLAT_NR`] − 1).
pub fn bucket_of(ns: u64) -> usize {
    let msb = if ns == 0 { 0 } else { 63 - ns.leading_zeros() };
    if msb <= PLAT_BITS {
        return ns as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) as usize) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (ns >> error_bits) as usize;
    (base + offset).min(PLAT_NR - 1)
}

/// The value fio prints for bucket `idx`, ns (fio `stat.c` `plat_idx_to_val`): the
/// value itself below 128, else the middle of the bucket, `base + (k + 0.5) · width`
/// (fio computes it in floating point and truncates to an integer). `idx` past the last
/// bucket is taken as the last.
pub fn bucket_value(idx: usize) -> u64 {
    let idx = idx.min(PLAT_NR - 1);
    if idx < PLAT_VAL << 1 {
        return idx as u64;
    }
    let error_bits = (idx >> PLAT_BITS) as u32 - 1;
    let base = 1u64 << (error_bits + PLAT_BITS);
    let k = (idx % PLAT_VAL) as u64;
    // (k + 0.5) · 2^e, truncated: k · 2^e + 2^(e-1) (e ≥ 1 here).
    base + (k << error_bits) + (1u64 << (error_bits - 1))
}

/// The lowest latency, ns, that falls in bucket `idx` (`idx` < [`PLAT_NR`]).
pub fn bucket_low(idx: usize) -> u64 {
    let idx = idx.min(PLAT_NR - 1);
    if idx < PLAT_VAL << 1 {
        return idx as u64;
    }
    let error_bits = (idx >> PLAT_BITS) as u32 - 1;
    (1u64 << (error_bits + PLAT_BITS)) + (((idx % PLAT_VAL) as u64) << error_bits)
}

/// fio's completion-latency histogram of one pass or thread: [`PLAT_NR`] counts (14.5 KiB,
/// allocated once by [`LatencyHistogram::new`], before any timed loop), with the count,
/// min, max and sum of the values, ns. [`LatencyHistogram::record`] is O(1) and allocates
/// nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatencyHistogram {
    counts: Box<[u64; PLAT_NR]>,
    count: u64,
    min_ns: u64,
    max_ns: u64,
    sum_ns: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram; its only allocation.
    pub fn new() -> LatencyHistogram {
        let counts: Box<[u64; PLAT_NR]> = vec![0u64; PLAT_NR]
            .into_boxed_slice()
            .try_into()
            .unwrap_or_else(|_| unreachable!("the vector has PLAT_NR counts"));
        LatencyHistogram {
            counts,
            count: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
        }
    }

    /// Counts one latency of `ns` nanoseconds (past the last bucket: in the last one).
    pub fn record(&mut self, ns: u64) {
        self.counts[bucket_of(ns)] += 1;
        self.count += 1;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns = self.sum_ns.saturating_add(ns);
    }

    /// Adds `other`'s values (another thread's, another pass's).
    pub fn merge(&mut self, other: &LatencyHistogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.count += other.count;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        self.sum_ns = self.sum_ns.saturating_add(other.sum_ns);
    }

    /// Values recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The values recorded in bucket `idx` (0 past the last bucket).
    pub fn bucket_count(&self, idx: usize) -> u64 {
        self.counts.get(idx).copied().unwrap_or(0)
    }

    /// The document's form, with `calls` the calls the pass made (≥ the values
    /// recorded when one call in a group was timed); `None` when nothing was recorded.
    /// `calls` below the count is raised to it.
    pub fn to_latency(&self, calls: u64) -> Option<Latency> {
        if self.count == 0 {
            return None;
        }
        let buckets = self
            .counts
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c > 0)
            .map(|(i, &c)| (i as u16, c))
            .collect();
        Some(Latency {
            count: self.count,
            calls: calls.max(self.count),
            min_ns: self.min_ns,
            max_ns: self.max_ns,
            sum_ns: self.sum_ns,
            buckets,
        })
    }
}

/// A pass's completion latencies as the results document holds them: fio's histogram,
/// sparse. Read from strangers' documents through checks ([`Latency`]'s `Deserialize`
/// refuses more than [`PLAT_NR`] buckets, indexes not strictly ascending or past the
/// last, empty buckets, counts not summing to `count`, `count` of 0 or above `calls`,
/// `min_ns` above `max_ns`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "LatencyDoc")]
pub struct Latency {
    /// Latencies recorded (timed calls), ≥ 1.
    pub count: u64,
    /// Calls the pass made; `count` < `calls` when one call in a group was timed (the
    /// sweep's sampling: "1 in 16 calls timed").
    pub calls: u64,
    /// Shortest and longest latency, exact, ns.
    pub min_ns: u64,
    pub max_ns: u64,
    /// Sum of the latencies, ns (mean = `sum_ns / count`); saturates at 2^64 − 1.
    pub sum_ns: u64,
    /// `(bucket index, count)` of every non-empty bucket, ascending ([`bucket_of`]).
    pub buckets: Vec<(u16, u64)>,
}

/// fio's usual completion-latency percentiles of one [`Latency`], ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Percentiles {
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    /// Exact, not a bucket's value.
    pub max_ns: u64,
}

impl Latency {
    /// The `q`-quantile (0 < `q` ≤ 1, e.g. 0.99), ns, by fio's method
    /// (`calc_clat_percentiles`): the first bucket where the running count reaches
    /// ⌈q · count⌉, given as that bucket's value ([`bucket_value`]: its middle, as fio
    /// prints it), held within the exact `min_ns..=max_ns` (a bucket's middle can lie
    /// past the slowest call; fio prints it even so). `q` ≥ 1 gives the exact maximum;
    /// `q` ≤ 0 the first bucket's value.
    pub fn percentile(&self, q: f64) -> u64 {
        if q >= 1.0 {
            return self.max_ns;
        }
        // ⌈q · count⌉ ≥ 1; the 1e-9 keeps 0.99 × 1000 at 990 under f64 rounding.
        let rank = ((q * self.count as f64 - 1e-9).ceil() as u64).max(1);
        let mut seen = 0u64;
        for &(idx, c) in &self.buckets {
            seen += c;
            if seen >= rank {
                return bucket_value(idx as usize).min(self.max_ns).max(self.min_ns);
            }
        }
        self.buckets
            .last()
            .map_or(self.max_ns, |&(i, _)| bucket_value(i as usize))
    }

    /// p50, p90, p99, p99.9 (fio's values) and the exact maximum, ns.
    pub fn percentiles(&self) -> Percentiles {
        Percentiles {
            p50_ns: self.percentile(0.50),
            p90_ns: self.percentile(0.90),
            p99_ns: self.percentile(0.99),
            p999_ns: self.percentile(0.999),
            max_ns: self.max_ns,
        }
    }

    /// Mean latency, ns (`sum_ns / count`).
    pub fn mean_ns(&self) -> u64 {
        self.sum_ns / self.count.max(1)
    }

    /// The histogram back, to merge several passes (e.g. repetitions).
    pub fn to_histogram(&self) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for &(i, c) in &self.buckets {
            h.counts[i as usize] += c;
        }
        h.count = self.count;
        h.min_ns = self.min_ns;
        h.max_ns = self.max_ns;
        h.sum_ns = self.sum_ns;
        h
    }
}

/// [`Latency`] as read, before its checks.
#[derive(Deserialize)]
struct LatencyDoc {
    count: u64,
    calls: u64,
    min_ns: u64,
    max_ns: u64,
    sum_ns: u64,
    #[serde(deserialize_with = "bounded_buckets")]
    buckets: Vec<(u16, u64)>,
}

fn bounded_buckets<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(u16, u64)>, D::Error> {
    bounded_vec(d, PLAT_NR, "buckets", "fio's histogram has 1856 buckets")
}

/// A sequence read into a vector of at most `max` elements: one more is refused before
/// it is built, naming `key` and `why`.
fn bounded_vec<'de, D, T>(
    d: D,
    max: usize,
    key: &'static str,
    why: &'static str,
) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Bounded<T> {
        max: usize,
        key: &'static str,
        why: &'static str,
        t: std::marker::PhantomData<T>,
    }
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Bounded<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "a list of at most {} entries", self.max)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(self.max));
            while let Some(x) = seq.next_element()? {
                if v.len() == self.max {
                    return Err(de::Error::custom(format!(
                        "{}: more than {} entries ({}): the document is damaged",
                        self.key, self.max, self.why
                    )));
                }
                v.push(x);
            }
            Ok(v)
        }
    }
    d.deserialize_seq(Bounded {
        max,
        key,
        why,
        t: std::marker::PhantomData,
    })
}

/// Why a [`Latency`] of a document was refused: the key and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}; the document is damaged or was not written by benchboot")]
pub struct LatencyError(String);

impl TryFrom<LatencyDoc> for Latency {
    type Error = LatencyError;
    fn try_from(d: LatencyDoc) -> Result<Latency, LatencyError> {
        let bad = |s: String| Err(LatencyError(s));
        if d.count == 0 {
            return bad("count: 0 latencies (a pass with none has no `latency`)".into());
        }
        if d.count > d.calls {
            return bad(format!(
                "count: {} latencies from {} calls (at most one per call)",
                d.count, d.calls
            ));
        }
        if d.min_ns > d.max_ns {
            return bad(format!(
                "min_ns: {} ns is above max_ns {} ns",
                d.min_ns, d.max_ns
            ));
        }
        let mut sum = 0u64;
        let mut last: Option<u16> = None;
        for (j, &(idx, c)) in d.buckets.iter().enumerate() {
            if usize::from(idx) >= PLAT_NR {
                return bad(format!(
                    "buckets[{j}]: index {idx} is past fio's last bucket ({})",
                    PLAT_NR - 1
                ));
            }
            if last.is_some_and(|l| idx <= l) {
                return bad(format!(
                    "buckets[{j}]: index {idx} is not above the one before: indexes ascend, each once"
                ));
            }
            if c == 0 {
                return bad(format!(
                    "buckets[{j}]: an empty bucket (only non-empty ones are listed)"
                ));
            }
            last = Some(idx);
            sum = sum.saturating_add(c);
        }
        if sum != d.count {
            return bad(format!(
                "buckets: the counts add up to {sum}, not to count {}",
                d.count
            ));
        }
        Ok(Latency {
            count: d.count,
            calls: d.calls,
            min_ns: d.min_ns,
            max_ns: d.max_ns,
            sum_ns: d.sum_ns,
            buckets: d.buckets,
        })
    }
}

/// Points a [`TimelineRecorder`] holds (128; 16 bytes each, inline, no allocation).
pub const TIMELINE_CAPACITY: usize = 128;
/// The recorder's first interval, ns (250 ms; doubled each time it fills).
pub const TIMELINE_START_INTERVAL_NS: u64 = 250_000_000;
/// Most points a document's timeline may hold (8 × [`TIMELINE_CAPACITY`], room for a
/// later recorder; more is refused unbuilt).
pub const MAX_TIMELINE_POINTS: usize = 1024;

/// One point of a pass's timeline: `bytes` moved (cumulative, since the pass began) at
/// `end_ns` after it began (CLOCK_MONOTONIC, ns).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelinePoint {
    pub end_ns: u64,
    pub bytes: u64,
}

/// Throughput between two timeline points.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct IntervalRate {
    /// Where the interval starts and ends, ns since the pass began.
    pub start_ns: u64,
    pub end_ns: u64,
    /// Bytes moved in it.
    pub bytes: u64,
    /// MiB/s ([`crate::mib_per_s`]).
    pub mib_per_s: f64,
}

/// MiB/s over each interval of `points` (from 0 to the first point, then between
/// neighbours); an interval of 0 ns gives 0.0 ([`crate::mib_per_s`]).
pub fn interval_rates(points: &[TimelinePoint]) -> Vec<IntervalRate> {
    let mut prev = TimelinePoint::default();
    points
        .iter()
        .map(|&p| {
            let bytes = p.bytes.saturating_sub(prev.bytes);
            let nanos = p.end_ns.saturating_sub(prev.end_ns);
            let r = IntervalRate {
                start_ns: prev.end_ns,
                end_ns: p.end_ns,
                bytes,
                mib_per_s: crate::mib_per_s(bytes, nanos),
            };
            prev = p;
            r
        })
        .collect()
}

/// Reads a document's timeline: at most [`MAX_TIMELINE_POINTS`], `end_ns` strictly
/// ascending, `bytes` never falling.
pub(crate) fn timeline_de<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<TimelinePoint>, D::Error> {
    let v: Vec<TimelinePoint> = bounded_vec(
        d,
        MAX_TIMELINE_POINTS,
        "timeline",
        "a pass keeps 128 points",
    )?;
    for (j, w) in v.windows(2).enumerate() {
        if w[1].end_ns <= w[0].end_ns || w[1].bytes < w[0].bytes {
            return Err(de::Error::custom(format!(
                "timeline[{}]: {} bytes at {} ns after {} bytes at {} ns: points ascend in time \
                 and bytes never fall; the document is damaged",
                j + 1,
                w[1].bytes,
                w[1].end_ns,
                w[0].bytes,
                w[0].end_ns
            )));
        }
    }
    Ok(v)
}

/// Keeps a pass's timeline in a fixed array: offered `(elapsed ns, cumulative bytes)` at
/// every clock read of the timed loop, it keeps a point each time an interval boundary
/// (a multiple of the interval, first [`TIMELINE_START_INTERVAL_NS`]) has been passed.
/// When the array is full it merges neighbouring points pairwise (keeping each pair's
/// later point: the bytes are cumulative) and doubles the interval, so any pass length
/// fits in [`TIMELINE_CAPACITY`] points at no allocation.
#[derive(Debug, Clone)]
pub struct TimelineRecorder {
    points: [TimelinePoint; TIMELINE_CAPACITY],
    len: usize,
    interval_ns: u64,
    next_ns: u64,
}

impl Default for TimelineRecorder {
    fn default() -> Self {
        Self::new(TIMELINE_START_INTERVAL_NS)
    }
}

impl TimelineRecorder {
    /// An empty recorder whose first interval is `interval_ns` (≥ 1 ns).
    pub fn new(interval_ns: u64) -> TimelineRecorder {
        let interval_ns = interval_ns.max(1);
        TimelineRecorder {
            points: [TimelinePoint::default(); TIMELINE_CAPACITY],
            len: 0,
            interval_ns,
            next_ns: interval_ns,
        }
    }

    /// The interval in force, ns.
    pub fn interval_ns(&self) -> u64 {
        self.interval_ns
    }

    /// `bytes` moved by `elapsed_ns`: kept when a boundary has been passed. O(1) but at
    /// a merge (every [`TIMELINE_CAPACITY`] / 2 points), no allocation.
    pub fn offer(&mut self, elapsed_ns: u64, bytes: u64) {
        if elapsed_ns < self.next_ns {
            return;
        }
        if self.len == TIMELINE_CAPACITY {
            self.halve();
            // The boundary passed may not be one of the doubled interval.
            let last = self.points[self.len - 1].end_ns;
            self.next_ns = (last / self.interval_ns + 1) * self.interval_ns;
            if elapsed_ns < self.next_ns {
                return;
            }
        }
        self.points[self.len] = TimelinePoint {
            end_ns: elapsed_ns,
            bytes,
        };
        self.len += 1;
        self.next_ns = (elapsed_ns / self.interval_ns + 1) * self.interval_ns;
    }

    /// Merges neighbouring points pairwise (each pair's later point: the bytes are
    /// cumulative) and doubles the interval.
    fn halve(&mut self) {
        for i in 0..self.len / 2 {
            self.points[i] = self.points[2 * i + 1];
        }
        self.len /= 2;
        self.interval_ns = self.interval_ns.saturating_mul(2);
    }

    /// The points kept so far.
    pub fn points(&self) -> &[TimelinePoint] {
        &self.points[..self.len]
    }

    /// The timeline for the document, ending with the pass's own end (`elapsed_ns`,
    /// `bytes`) unless the last point already is it.
    pub fn finish(mut self, elapsed_ns: u64, bytes: u64) -> Vec<TimelinePoint> {
        let last = self.points().last().copied();
        if last.is_none_or(|l| elapsed_ns > l.end_ns) {
            if self.len == TIMELINE_CAPACITY {
                self.halve();
            }
            self.points[self.len] = TimelinePoint {
                end_ns: elapsed_ns,
                bytes,
            };
            self.len += 1;
        }
        self.points().to_vec()
    }
}

#[cfg(test)]
mod tests;
