//! Rates are computed only in `crates/results` (ARCHITECTURE.md, invariants): MiB/s,
//! MB/s, Mbit/s, IOPS and UDP loss each have one definition there
//! (`summary.rs`, `network.rs`), which PID 1's console figures and every host output
//! call. A function defined in the host tool whose name says it computes a rate
//! (`*per_s*`, `*loss_pct*`, `iops`) is refused: call the results crate's instead.
//! Test files (`tests.rs`, `tests/`) may define their own helpers.

use crate::files::is_test_file;
use crate::lex;
use crate::Violation;

/// Whether `name` reads as a rate computed from raw counts.
fn names_a_rate(name: &str) -> bool {
    name.contains("per_s") || name.contains("loss_pct") || name == "iops"
}

/// The rate functions defined in one non-test `.rs` file of `host/src/`.
pub fn rates_outside_results(path: &str, text: &str) -> Vec<Violation> {
    if !path.starts_with("host/src/") || !path.ends_with(".rs") || is_test_file(path) {
        return Vec::new();
    }
    let code = lex::lex(text).code;
    let toks = lex::tokens(&code);
    toks.windows(2)
        .filter(|w| w[0].text == "fn" && names_a_rate(w[1].text))
        .map(|w| {
            Violation::new(
                path,
                lex::line_of(text, w[1].at),
                format!(
                    "`fn {}` computes a rate outside crates/results: call \
                     `benchboot_results::{{mib_per_s, mb_per_s, iops}}`, \
                     `network::mbit_per_s` or `UdpRun::loss_pct`",
                    w[1].text
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_defined_in_the_host_is_refused() {
        let src = "//! x\nfn table() {}\npub fn mb_per_s(b: u64, ns: u64) -> f64 { 0.0 }\n\
                   fn udp_loss_pct(u: &UdpRun) -> Option<f64> { None }\nfn iops() {}\n";
        let v = rates_outside_results("host/src/render/network.rs", src);
        let got: Vec<usize> = v.iter().map(|v| v.line).collect();
        assert_eq!(got, [3, 4, 5], "{v:?}");
        assert!(v[0].message.contains("`fn mb_per_s`"), "{}", v[0]);
        // The results crate, test files, calls and words in comments pass.
        assert!(rates_outside_results("crates/results/src/summary.rs", src).is_empty());
        assert!(rates_outside_results("host/src/render/tests.rs", src).is_empty());
        let calls = "//! fn mb_per_s\nfn f() { let x = mb_per_s(1, 2); u.loss_pct(); }\n\
                     fn iops_table() {}\n";
        assert!(rates_outside_results("host/src/report/tidy.rs", calls).is_empty());
    }
}
