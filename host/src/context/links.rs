//! What the report must say loudly about the wired links: a link below its rating
//! ([`LinkFacts::degraded`](benchboot_results::network::LinkFacts::degraded)) and
//! interface errors or drops during the tests.

use benchboot_results::network::{NetworkResults, WiredLink};

/// The prefix of a degraded link's alert.
pub const LINK_BELOW_RATING: &str = "LINK BELOW ITS RATING";

/// Interface errors and drops (rx + tx) summed over every test's counter span, packets.
pub fn errors_and_drops(w: &WiredLink) -> u64 {
    w.counters
        .iter()
        .map(|c| c.before.trouble_since(&c.after))
        .fold(0, u64::saturating_add)
}

/// One alert per degraded wired link: `LINK BELOW ITS RATING: eth: negotiated 100 Mb/s
/// on a port rated 1000 Mb/s (...)`, in the order the links were brought up.
pub fn link_alerts(n: &NetworkResults) -> Vec<String> {
    n.wired
        .iter()
        .filter_map(|w| {
            w.facts
                .degraded()
                .map(|why| format!("{LINK_BELOW_RATING}: {}: {why}", w.name))
        })
        .collect()
}

/// One line per wired link whose interface counted errors or drops during the tests.
pub fn link_error_lines(n: &NetworkResults) -> Vec<String> {
    n.wired
        .iter()
        .filter_map(|w| {
            let k = errors_and_drops(w);
            (k > 0).then(|| {
                format!(
                    "{} ({}): {k} interface error(s) or drop(s) during the tests \
                     (/sys/class/net/{}/statistics)",
                    w.name, w.interface, w.interface
                )
            })
        })
        .collect()
}
