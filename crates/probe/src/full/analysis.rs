//! The whole-card pass's figures from its timed I/Os: the speed profile, the falls of
//! the sustained speed, the latency distribution and the stalls (see the parent module's
//! doc for the methods).

use super::{
    Fall, Interval, Latency, Stall, FALL_RATIO, MAX_LISTED, MIN_SEGMENT, STALL_MIN_EXCESS_NS,
    STALL_WINDOW,
};

/// The profile of `(offset, bytes, ns)` I/Os cut at `interval` bytes from `start`.
pub(super) fn profile(ios: &[(u64, u64, u64)], start: u64, interval: u64) -> Vec<Interval> {
    let mut out: Vec<Interval> = Vec::new();
    for &(offset, bytes, ns) in ios {
        let k = (offset - start) / interval;
        match out.last_mut() {
            Some(last) if (last.offset - start) / interval == k => {
                last.bytes += bytes;
                last.ns = last.ns.saturating_add(ns);
            }
            _ => out.push(Interval { offset, bytes, ns }),
        }
    }
    out
}

/// The median of `v` (sorted in place); 0 when empty.
pub(super) fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The falls of the sustained speed in `profile` (binary segmentation, see the module
/// doc), in order of offset.
pub fn falls(profile: &[Interval]) -> Vec<Fall> {
    let speeds: Vec<f64> = profile.iter().map(Interval::mib_s).collect();
    // An interval the clock saw take no time has no speed: no profile to cut.
    if speeds.iter().any(|s| !s.is_finite() || *s <= 0.0) {
        return Vec::new();
    }
    let mut cuts = Vec::new();
    segment(&speeds, 0, speeds.len(), 0, &mut cuts);
    cuts.sort_unstable();
    // Each cut against its neighbouring cuts: the speed of the segments either side.
    let mut out = Vec::new();
    for (i, &c) in cuts.iter().enumerate() {
        let lo = if i == 0 { 0 } else { cuts[i - 1] };
        let hi = cuts.get(i + 1).copied().unwrap_or(speeds.len());
        let before = median(&mut speeds[lo..c].to_vec());
        let after = median(&mut speeds[c..hi].to_vec());
        if before >= after * FALL_RATIO {
            out.push(Fall {
                at: profile[c].offset,
                before_mib_s: before,
                after_mib_s: after,
                written_at: None,
            });
        }
    }
    out
}

fn segment(s: &[f64], lo: usize, hi: usize, depth: u32, cuts: &mut Vec<usize>) {
    if depth >= 4 || hi - lo < 2 * MIN_SEGMENT {
        return;
    }
    // Prefix sums for the squared error of each side around its mean.
    let n = hi - lo;
    let mut sum = vec![0.0; n + 1];
    let mut sq = vec![0.0; n + 1];
    for i in 0..n {
        sum[i + 1] = sum[i] + s[lo + i];
        sq[i + 1] = sq[i] + s[lo + i] * s[lo + i];
    }
    let sse = |a: usize, b: usize| {
        let m = (b - a) as f64;
        let t = sum[b] - sum[a];
        (sq[b] - sq[a]) - t * t / m
    };
    let Some(k) = (MIN_SEGMENT..=n - MIN_SEGMENT)
        .min_by(|&a, &b| (sse(0, a) + sse(a, n)).total_cmp(&(sse(0, b) + sse(b, n))))
    else {
        return;
    };
    let left = median(&mut s[lo..lo + k].to_vec());
    let right = median(&mut s[lo + k..hi].to_vec());
    let (big, small) = if left > right {
        (left, right)
    } else {
        (right, left)
    };
    if big < small * FALL_RATIO {
        return;
    }
    cuts.push(lo + k);
    segment(s, lo, lo + k, depth + 1, cuts);
    segment(s, lo + k, hi, depth + 1, cuts);
}

/// The latency distribution of `(offset, bytes, ns)` writes of `io_bytes` (the last,
/// shorter write left out) and the stalls among them.
pub(super) fn latency(
    ios: &[(u64, u64, u64)],
    io_bytes: u64,
) -> (Option<Latency>, Vec<Stall>, u64) {
    let full: Vec<(u64, u64)> = ios
        .iter()
        .filter(|w| w.1 == io_bytes)
        .map(|&(o, _, ns)| (o, ns))
        .collect();
    if full.is_empty() {
        return (None, Vec::new(), 0);
    }
    let mut ns: Vec<u64> = full.iter().map(|w| w.1).collect();
    ns.sort_unstable();
    let pct = |p: f64| ns[((ns.len() - 1) as f64 * p).round() as usize];
    let (max_at, max_ns) = full
        .iter()
        .copied()
        // The first of equals.
        .max_by_key(|w| (w.1, std::cmp::Reverse(w.0)))
        .expect("not empty");
    let lat = Latency {
        io_bytes,
        count: full.len() as u64,
        p50_ns: pct(0.5),
        p99_ns: pct(0.99),
        p999_ns: pct(0.999),
        max_ns,
        max_at,
    };
    let mut stalls = Vec::new();
    let mut count = 0;
    let mut window = Vec::with_capacity(2 * STALL_WINDOW + 1);
    for (i, &(at, t)) in full.iter().enumerate() {
        window.clear();
        let lo = i.saturating_sub(STALL_WINDOW);
        let hi = (i + STALL_WINDOW + 1).min(full.len());
        window.extend(full[lo..hi].iter().map(|w| w.1));
        window.sort_unstable();
        let med = window[window.len() / 2];
        if t >= med.saturating_mul(2) && t >= med.saturating_add(STALL_MIN_EXCESS_NS) {
            count += 1;
            if stalls.len() < MAX_LISTED {
                stalls.push(Stall {
                    at,
                    ns: t,
                    excess_ns: t - med,
                });
            }
        }
    }
    (Some(lat), stalls, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(offset: u64, mib_s: f64) -> Interval {
        Interval {
            offset,
            bytes: 1 << 20,
            ns: (1e9 / mib_s) as u64,
        }
    }

    #[test]
    fn one_fall_at_its_interval() {
        let p: Vec<Interval> = (0..100)
            .map(|i| iv(i << 20, if i < 37 { 80.0 } else { 12.0 }))
            .collect();
        let f = falls(&p);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].at, 37 << 20);
        assert!((f[0].before_mib_s - 80.0).abs() < 0.01, "{f:?}");
        assert!((f[0].after_mib_s - 12.0).abs() < 0.01, "{f:?}");
    }

    #[test]
    fn two_falls_and_no_fall_from_noise_or_a_rise() {
        let p: Vec<Interval> = (0..120)
            .map(|i| {
                let base = if i < 20 {
                    90.0
                } else if i < 70 {
                    40.0
                } else {
                    9.0
                };
                // +-10 % noise and one slow interval (a stall) at 50.
                let noise = 1.0 + 0.1 * ((i * 7919 % 21) as f64 - 10.0) / 10.0;
                iv(i << 20, if i == 50 { 15.0 } else { base * noise })
            })
            .collect();
        let f = falls(&p);
        assert_eq!(
            f.iter().map(|f| f.at).collect::<Vec<_>>(),
            vec![20 << 20, 70 << 20],
            "{f:?}"
        );
        // Noise alone, and a rise: no fall.
        let flat: Vec<Interval> = (0..100)
            .map(|i| iv(i << 20, 50.0 * (1.0 + 0.2 * ((i % 5) as f64 - 2.0) / 2.0)))
            .collect();
        assert!(falls(&flat).is_empty());
        let rise: Vec<Interval> = (0..100)
            .map(|i| iv(i << 20, if i < 50 { 10.0 } else { 40.0 }))
            .collect();
        assert!(falls(&rise).is_empty());
    }

    #[test]
    fn stalls_against_their_neighbours() {
        // 4 MiB writes of 50 ms, one of 650 ms every 40, and a slow half (200 ms) with no
        // stall: the slow half is not a stall, each long write is, with its excess.
        let ios: Vec<(u64, u64, u64)> = (0..400u64)
            .map(|i| {
                let base = if i < 200 { 50_000_000 } else { 200_000_000 };
                let ns = if i % 40 == 7 && i < 200 {
                    650_000_000
                } else {
                    base
                };
                (i << 22, 4 << 20, ns)
            })
            .collect();
        let (lat, stalls, count) = latency(&ios, 4 << 20);
        let lat = lat.unwrap();
        assert_eq!(count, 5);
        assert_eq!(
            stalls.iter().map(|s| s.at >> 22).collect::<Vec<_>>(),
            vec![7, 47, 87, 127, 167]
        );
        assert!(stalls.iter().all(|s| s.excess_ns == 600_000_000));
        assert_eq!(lat.max_ns, 650_000_000);
        assert_eq!(lat.max_at, 7 << 22);
        assert_eq!(lat.p50_ns, 200_000_000);
        assert_eq!(lat.count, 400);
    }
}
