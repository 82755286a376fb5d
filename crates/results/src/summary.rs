//! Result maths: throughput units (MiB/s, MB/s, IOPS; Mbit/s is
//! [`crate::network::mbit_per_s`], UDP loss [`crate::network::UdpRun::loss_pct`]) and min / median / max over repetitions.

/// Throughput in MiB/s (1 MiB = 1,048,576 bytes) from raw bytes and nanoseconds.
/// Returns 0.0 when `nanos` is 0 (nothing was timed).
pub fn mib_per_s(bytes: u64, nanos: u64) -> f64 {
    if nanos == 0 {
        return 0.0;
    }
    (bytes as f64 / (1u64 << 20) as f64) / (nanos as f64 / 1e9)
}

/// Throughput in MB/s (1 MB = 10^6 bytes) from raw bytes and nanoseconds; 0.0 when
/// `nanos` is 0.
pub fn mb_per_s(bytes: u64, nanos: u64) -> f64 {
    if nanos == 0 {
        return 0.0;
    }
    bytes as f64 * 1e3 / nanos as f64
}

/// Operations per second from a count and nanoseconds; 0.0 when `nanos` is 0.
pub fn iops(ios: u64, nanos: u64) -> f64 {
    if nanos == 0 {
        return 0.0;
    }
    ios as f64 / (nanos as f64 / 1e9)
}

/// Min / median / max of a set of repetitions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub min: f64,
    pub median: f64,
    pub max: f64,
    pub count: usize,
}

impl Summary {
    /// `None` for an empty set. The median of an even count is the mean of the middle two.
    /// NaN values are ignored.
    pub fn of(values: &[f64]) -> Option<Summary> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Some(Summary {
            min: v[0],
            median,
            max: v[n - 1],
            count: n,
        })
    }
}
