//! The Mann–Whitney U test (Wilcoxon rank-sum test), two-sided: is one run's set of
//! repetitions shifted against the other's by more than chance would give?
//!
//! Sources:
//! - H. B. Mann and D. R. Whitney, "On a test of whether one of two random variables is
//!   stochastically larger than the other", Annals of Mathematical Statistics 18 (1947),
//!   pp. 50–60: the statistic U₁ = R₁ − n₁(n₁+1)/2 (R₁ the rank sum of sample 1,
//!   U₁ + U₂ = n₁n₂) and its exact null distribution (every assignment of the pooled
//!   ranks to the samples equally likely).
//! - Normal approximation with tie correction (mean n₁n₂/2, variance
//!   n₁n₂/12 · ((N+1) − Σ(tᵢ³ − tᵢ)/(N(N−1))), tᵢ the sizes of tied groups, and a
//!   continuity correction of ½): e.g. Wikipedia, "Mann–Whitney U test", section
//!   "Normal approximation and tie correction"; scipy.stats.mannwhitneyu computes the
//!   same.
//! - The worked example of the tests: R. Shier, "Statistics: 2.3 The Mann-Whitney U
//!   Test", Mathematics Learning Support Centre (2004), as reproduced in the
//!   scipy.stats.mannwhitneyu documentation: U = 17 and 3, exact two-sided p = 0.111,
//!   normal approximation 0.0864 (no continuity correction) and 0.1113 (with).
//! - erfc: the Chebyshev fit `erfcc` of Press et al., Numerical Recipes in C, 2nd ed.
//!   (1992), §6.2, fractional error below 1.2 × 10⁻⁷.
//!
//! With ties the exact test enumerates the assignments of the actual mid-ranks (a
//! permutation test), so it stays exact.

use serde::{Deserialize, Serialize};

/// How the p-value was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Exact null distribution (all C(N, n₁) assignments of the ranks).
    Exact,
    /// Normal approximation with tie and continuity correction.
    Normal,
}

/// Result of a two-sided Mann–Whitney U test of `x` against `y`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// U of `x`: the number of pairs (xᵢ, yⱼ) with xᵢ > yⱼ, ties counted ½.
    pub u_x: f64,
    /// U of `y` (= n_x n_y − u_x).
    pub u_y: f64,
    /// Two-sided p-value.
    pub p: f64,
    pub method: Method,
    /// The smallest two-sided p any data of these sizes could give (no ties):
    /// 2 / C(N, n_x). Above the significance level the test cannot decide anything.
    pub min_p: f64,
}

/// Exact enumeration up to this many pooled values (C(40, 20) ≈ 1.4·10¹¹ still counts
/// exactly in an f64).
const EXACT_MAX_N: usize = 40;

/// Mid-ranks (1-based; tied values share the mean of their ranks), in input order,
/// and the sizes of the tied groups.
fn midranks(values: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let mut idx: Vec<usize> = (0..values.len()).collect();
    idx.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut ties = Vec::new();
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && values[idx[j + 1]] == values[idx[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            ranks[k] = rank;
        }
        ties.push(j - i + 1);
        i = j + 1;
    }
    (ranks, ties)
}

/// C(n, k) as f64.
pub fn binomial(n: usize, k: usize) -> f64 {
    let k = k.min(n - k.min(n));
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// 2 / C(n_x + n_y, n_x), at most 1: the best two-sided p samples of these sizes allow.
pub fn min_two_sided_p(n_x: usize, n_y: usize) -> f64 {
    (2.0 / binomial(n_x + n_y, n_x)).min(1.0)
}

/// Complementary error function (Numerical Recipes `erfcc`).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let ans = t * poly.exp();
    if x >= 0.0 {
        ans
    } else {
        2.0 - ans
    }
}

/// Two-sided p of the normal approximation, `continuity`: subtract ½ from |U − mean|.
pub fn normal_p(x: &[f64], y: &[f64], continuity: bool) -> Option<f64> {
    let (n1, n2) = (x.len() as f64, y.len() as f64);
    if x.is_empty() || y.is_empty() {
        return None;
    }
    let pooled: Vec<f64> = x.iter().chain(y).copied().collect();
    let (ranks, ties) = midranks(&pooled);
    let n = n1 + n2;
    let r1: f64 = ranks[..x.len()].iter().sum();
    let u1 = r1 - n1 * (n1 + 1.0) / 2.0;
    let mean = n1 * n2 / 2.0;
    let tie: f64 = ties.iter().map(|&t| (t * t * t - t) as f64).sum();
    let var = n1 * n2 / 12.0 * ((n + 1.0) - tie / (n * (n - 1.0)));
    if var <= 0.0 {
        return Some(1.0); // every value equal: no evidence of a shift
    }
    let d = (u1 - mean).abs() - if continuity { 0.5 } else { 0.0 };
    let z = d.max(0.0) / var.sqrt();
    Some(erfc(z / std::f64::consts::SQRT_2).min(1.0))
}

/// Two-sided Mann–Whitney U test of `x` against `y`; `None` when either is empty or a
/// value is NaN. Exact up to 40 pooled values, normal approximation above.
pub fn mann_whitney(x: &[f64], y: &[f64]) -> Option<MannWhitney> {
    if x.is_empty() || y.is_empty() || x.iter().chain(y).any(|v| v.is_nan()) {
        return None;
    }
    let (n1, n2) = (x.len(), y.len());
    let pooled: Vec<f64> = x.iter().chain(y).copied().collect();
    let (ranks, _) = midranks(&pooled);
    let r1: f64 = ranks[..n1].iter().sum();
    let u_x = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let u_y = (n1 * n2) as f64 - u_x;
    let min_p = min_two_sided_p(n1, n2);
    let n = n1 + n2;
    if n > EXACT_MAX_N {
        return Some(MannWhitney {
            u_x,
            u_y,
            p: normal_p(x, y, true)?,
            method: Method::Normal,
            min_p,
        });
    }
    // Doubled mid-ranks are integers: count, for every k ≤ n1, the subsets of k ranks
    // by their doubled rank sum.
    let twice: Vec<usize> = ranks.iter().map(|r| (r * 2.0).round() as usize).collect();
    let max_sum: usize = twice.iter().sum();
    let mut ways = vec![vec![0.0f64; max_sum + 1]; n1 + 1];
    ways[0][0] = 1.0;
    for &t in &twice {
        for k in (1..=n1).rev() {
            for s in (t..=max_sum).rev() {
                let add = ways[k - 1][s - t];
                if add > 0.0 {
                    ways[k][s] += add;
                }
            }
        }
    }
    let total: f64 = ways[n1].iter().sum();
    // U from a doubled rank sum, and its distance from the mean n1 n2 / 2.
    let offset = (n1 * (n1 + 1)) as f64 / 2.0;
    let mean = (n1 * n2) as f64 / 2.0;
    let observed = (u_x - mean).abs();
    let extreme: f64 = ways[n1]
        .iter()
        .enumerate()
        .filter(|&(s, &w)| w > 0.0 && ((s as f64 / 2.0 - offset) - mean).abs() >= observed - 1e-9)
        .map(|(_, &w)| w)
        .sum();
    Some(MannWhitney {
        u_x,
        u_y,
        p: (extreme / total).min(1.0),
        method: Method::Exact,
        min_p,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shier (2004), via the scipy.stats.mannwhitneyu documentation: ages at diagnosis.
    const MALES: [f64; 5] = [19.0, 22.0, 16.0, 29.0, 24.0];
    const FEMALES: [f64; 4] = [20.0, 11.0, 17.0, 12.0];

    #[test]
    fn textbook_example_exact() {
        let t = mann_whitney(&MALES, &FEMALES).unwrap();
        assert_eq!((t.u_x, t.u_y), (17.0, 3.0));
        assert_eq!(t.method, Method::Exact);
        // P(U <= 3) = 7/126 one-sided (Mann and Whitney's table for n = 4, m = 5).
        assert!((t.p - 14.0 / 126.0).abs() < 1e-12, "{}", t.p);
        assert!((t.p - 0.111_111_111_111_111_1).abs() < 1e-12);
        // Symmetric in its arguments.
        let s = mann_whitney(&FEMALES, &MALES).unwrap();
        assert_eq!((s.u_x, s.p), (3.0, t.p));
    }

    #[test]
    fn textbook_example_normal_approximation() {
        let p = normal_p(&MALES, &FEMALES, false).unwrap();
        assert!((p - 0.086_410_732_973_7).abs() < 1e-6, "{p}");
        let p = normal_p(&MALES, &FEMALES, true).unwrap();
        assert!((p - 0.111_346_886_533_140_41).abs() < 1e-6, "{p}");
    }

    #[test]
    fn small_samples_cannot_reach_five_percent() {
        // 3 vs 3, completely separated: the best possible p is 2/20.
        let t = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert_eq!(t.u_x, 0.0);
        assert!((t.p - 0.1).abs() < 1e-12 && (t.min_p - 0.1).abs() < 1e-12);
        // 4 vs 4 can: 2/70.
        let t = mann_whitney(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]).unwrap();
        assert!((t.p - 2.0 / 70.0).abs() < 1e-12);
        assert!((min_two_sided_p(1, 1) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn ties_are_exact_by_permutation_and_identical_samples_give_one() {
        let t = mann_whitney(&[1.0, 1.0], &[1.0, 1.0]).unwrap();
        assert_eq!(t.u_x, 2.0);
        assert!((t.p - 1.0).abs() < 1e-12);
        // x = {1, 2}, y = {2, 3}: mid-ranks 1, 2.5 | 2.5, 4; U_x = 0.5. Of the 6
        // assignments, U_x ∈ {0.5, 0.5, 2, 2, 3.5, 3.5}: four are as far from 2.
        let t = mann_whitney(&[1.0, 2.0], &[2.0, 3.0]).unwrap();
        assert_eq!(t.u_x, 0.5);
        assert!((t.p - 4.0 / 6.0).abs() < 1e-12, "{}", t.p);
    }

    #[test]
    fn large_samples_use_the_normal_approximation() {
        let x: Vec<f64> = (0..30).map(f64::from).collect();
        let y: Vec<f64> = (0..30).map(|i| f64::from(i) + 100.0).collect();
        let t = mann_whitney(&x, &y).unwrap();
        assert_eq!(t.method, Method::Normal);
        assert!(t.p < 1e-9);
        assert!(mann_whitney(&[], &[1.0]).is_none());
    }

    #[test]
    fn erfc_matches_known_values() {
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
        assert!((erfc(1.0) - 0.157_299_207_050_285_13).abs() < 1e-7);
        assert!((erfc(-1.0) - 1.842_700_792_949_715).abs() < 1e-7);
    }
}
