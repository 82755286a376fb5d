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
    card_check, command, command_step, device_read, device_read_step, network_step, random,
    random_step, storage, storage_cell, storage_step, verify, wifi_entry, Context, Figure, Metric,
};
use benchboot_results::memory::{ClockCheck, MemoryResults};

/// The network figures the console carries: Mbit/s per throughput run, HTTP GET and UDP
/// run (+ its loss, %), the median round trip in µs (`network.<link>.rtt.median`).
pub fn network(n: &NetworkResults) -> Vec<Figure> {
    on_console(benchboot_results::figures::network(n))
}

/// The memory figures the console carries: the bandwidths (MB/s), and the latency rows
/// (ns over L1) unless the run is emulated (`emulated`: QEMU's TCG models no caches,
/// [`Metric::emulator_gives`]).
pub fn memory(m: &MemoryResults, emulated: bool) -> Vec<Figure> {
    for_run(benchboot_results::figures::memory(m), emulated)
}

/// The clock check's figure (MHz), `None` for an emulated run (TCG has no clock).
pub fn clock(c: &ClockCheck, emulated: bool) -> Option<Figure> {
    for_run(vec![benchboot_results::figures::clock(c)], emulated)
        .into_iter()
        .next()
}

/// Every figure of `r` the console carries, in the order PID 1 measures them (compare
/// as a set): under emulation none the emulator cannot give ([`Metric::emulator_gives`]).
pub fn all(r: &RunResults) -> Vec<Figure> {
    for_run(benchboot_results::figures::figures(r), r.emulated)
}

fn on_console(figures: Vec<Figure>) -> Vec<Figure> {
    for_run(figures, false)
}

fn for_run(figures: Vec<Figure>, emulated: bool) -> Vec<Figure> {
    figures
        .into_iter()
        .filter(|f| f.metric.on_console() && (!emulated || f.metric.emulator_gives()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchboot_results::counters::NetDirection;
    use benchboot_results::network::{CpuTimes, ThroughputRun};

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
                board_tcp: None,
                host_tcp: None,
            }],
            ..NetworkResults::default()
        };
        assert_eq!(benchboot_results::figures::network(&n).len(), 3);
        let ids: Vec<String> = network(&n).into_iter().map(|f| f.id).collect();
        assert_eq!(ids, ["network.ncm.tcp.board-to-host.s2"]);
    }
}
