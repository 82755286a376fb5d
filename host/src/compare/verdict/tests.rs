//! Tests of the verdicts in words: the geometric mean, the grouping of places and the
//! sentence of one section.
use super::*;

#[test]
fn geometric_mean_of_known_ratios() {
    // 1.25 · 0.8 = 1: the mean of a ratio and its inverse is 1.
    assert!((geometric_mean(&[1.25, 0.8]).unwrap() - 1.0).abs() < 1e-12);
    // (2 · 8)^(1/2) = 4; (1 · 2 · 4)^(1/3) = 2.
    assert!((geometric_mean(&[2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
    assert!((geometric_mean(&[1.0, 2.0, 4.0]).unwrap() - 2.0).abs() < 1e-12);
    assert_eq!(geometric_mean(&[]), None);
    assert_eq!(geometric_mean(&[1.0, 0.0]), None);
}

#[test]
fn lists_read_as_words() {
    let s = |v: &[&str]| and_list(&v.iter().map(|x| x.to_string()).collect::<Vec<_>>());
    assert_eq!(s(&["ext4"]), "ext4");
    assert_eq!(s(&["ext4", "raw"]), "ext4 and raw");
    assert_eq!(s(&["ext2", "ext4", "raw"]), "ext2, ext4 and raw");
}

#[test]
fn percents_read_as_words() {
    assert_eq!(percent_words(&[1.25, 1.25]), "25 %");
    assert_eq!(percent_words(&[0.9, 0.9]), "10 %");
    assert_eq!(percent_words(&[1.004]), "0.4 %");
    // Within 5 points: one figure, their geometric mean (√(1.21 · 1.25) = 1.2298).
    assert_eq!(percent_words(&[1.21, 1.25]), "23 %");
    assert_eq!(percent_words(&[2.0]), "100 % (2.00×)");
    assert_eq!(percent_words(&[0.5]), "50 % (0.50×)");
    assert_eq!(percent_words(&[0.25, 0.45]), "55–75 %");
    // A range past twice as fast: in multiples.
    assert_eq!(percent_words(&[1.53, 28.16]), "1.53–28.16×");
}
