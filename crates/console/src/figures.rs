//! The figures of a run on the console: one line per figure
//! (`case=<id> value=<number> units=<unit>`), PID 1 printing each the moment it is
//! measured and the host deriving the same list from the document ([`all`]).
//!
//! The figures themselves (ids, values, units, context) are the results crate's model,
//! [`benchboot_results::figures`], re-exported here; this module keeps what is the
//! console's: which figures it carries ([`Metric::on_console`]: not the board's CPU
//! shares). LAVA's form of an id is [`crate::lava::fold_id`].

use benchboot_results::network::NetworkResults;
use benchboot_results::RunResults;

pub use benchboot_results::figures::{
    card_check, clock, command, command_step, device_read, device_read_step, memory, network_step,
    random, random_step, storage, storage_cell, storage_step, verify, wifi_entry, Context, Figure,
    Metric,
};

/// The network figures the console carries: Mbit/s per throughput run, HTTP GET and UDP
/// run (+ its loss, %), the median round trip in µs (`network.<link>.rtt.median`).
pub fn network(n: &NetworkResults) -> Vec<Figure> {
    on_console(benchboot_results::figures::network(n))
}

/// Every figure of `r` the console carries, in the order PID 1 measures them (compare
/// as a set).
pub fn all(r: &RunResults) -> Vec<Figure> {
    on_console(benchboot_results::figures::figures(r))
}

fn on_console(figures: Vec<Figure>) -> Vec<Figure> {
    figures
        .into_iter()
        .filter(|f| f.metric.on_console())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchboot_results::network::{CpuTimes, NetDirection, ThroughputRun};

    /// A TCP run with CPU time: one figure on the console, where the model has its CPU
    /// shares beside it.
    #[test]
    fn the_console_leaves_the_boards_cpu_shares_out() {
        let n = NetworkResults {
            throughput: vec![ThroughputRun {
                link: "ncm".into(),
                direction: NetDirection::BoardToHost,
                streams: 2,
                omit_ns: 0,
                intervals: vec![],
                bytes: 125_000_000,
                nanos: 10_000_000_000,
                board_cpu: CpuTimes {
                    system: 1,
                    softirq: 1,
                    ..CpuTimes::default()
                },
                host_cpu: CpuTimes::default(),
            }],
            ..NetworkResults::default()
        };
        assert_eq!(benchboot_results::figures::network(&n).len(), 3);
        let ids: Vec<String> = network(&n).into_iter().map(|f| f.id).collect();
        assert_eq!(ids, ["network.ncm.tcp.board-to-host.s2"]);
    }
}
