//! The results reader: what the host does with a document a board (or a card, or a
//! file) hands it: UTF-8 check, `RunResults::from_json`, then the figures every
//! renderer derives from it.
#![no_main]

use benchboot_results::health::conditions_during;
use benchboot_results::network::{mbit_per_s, NetTest};
use benchboot_results::{a1_verdict, iops, mib_per_s, RunResults, Summary};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // As host/src/report.rs `load_path`: not UTF-8 is refused before parsing.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(r) = RunResults::from_json(text) else {
        return;
    };
    let rates: Vec<f64> = r
        .storage
        .iter()
        .map(|m| mib_per_s(m.bytes, m.nanos))
        .collect();
    let _ = Summary::of(&rates);
    let per_second: Vec<f64> = r.random.iter().map(|x| iops(x.ios, x.nanos)).collect();
    let _ = Summary::of(&per_second);
    for d in &r.device_reads {
        let _ = mib_per_s(d.bytes, d.nanos);
    }
    for t in &r.plan.storage.targets {
        let _ = a1_verdict(&r, &t.label);
    }
    for h in &r.health {
        let _ = (
            h.during(),
            h.earlier(),
            h.before.cpu_clock_hz(),
            h.after.cpu_clock_hz(),
        );
        let _ = conditions_during(&r.health, &h.scope);
    }
    for t in &r.network.throughput {
        let _ = (mbit_per_s(t.bytes, t.nanos), NetTest::of_throughput(t));
        let _ = (t.board_cpu.share(), t.host_cpu.share());
        for i in &t.intervals {
            let _ = mbit_per_s(i.bytes, i.end_ns.saturating_sub(i.start_ns));
            let _ = (i.board_cpu.share(), i.host_cpu.share());
        }
    }
    for h in &r.network.http {
        let _ = (mbit_per_s(h.bytes, h.nanos), NetTest::of_http(h));
        let _ = (h.board_cpu.share(), h.host_cpu.share());
    }
    for l in &r.network.latency {
        let rtts: Vec<f64> = l.rtt_ns.iter().map(|&n| n as f64).collect();
        let _ = Summary::of(&rtts);
    }
    // What was read can be written and read back (the host saves what it fetched).
    let again = RunResults::from_json(&r.to_json());
    assert!(again.is_ok(), "re-reading to_json failed: {again:?}");
});
