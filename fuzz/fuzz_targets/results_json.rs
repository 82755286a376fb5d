//! The results reader: what the host does with a document a board (or a card, or a
//! file) hands it: UTF-8 check, `RunResults::from_json`, then the figures every
//! renderer derives from it. And the value budget (`budget::tally`) it runs first:
//! it counts at least what serde builds, in pieces as whole.
#![no_main]

use benchboot_results::budget::{self, Counter, MAX_DOCUMENT_VALUES};
use benchboot_results::health::conditions_during;
use benchboot_results::network::mbit_per_s;
use benchboot_results::counters::NetTest;
use benchboot_results::{a1_verdict, iops, mib_per_s, RunResults, Summary};
use libfuzzer_sys::fuzz_target;

/// Values and object keys of `v`, as serde builds them.
fn count(v: &serde_json::Value) -> u64 {
    match v {
        serde_json::Value::Array(a) => 1 + a.iter().map(count).sum::<u64>(),
        serde_json::Value::Object(o) => 1 + o.values().map(|v| 1 + count(v)).sum::<u64>(),
        _ => 1,
    }
}

fuzz_target!(|data: &[u8]| {
    // The budget's pre-scan: any bytes; the same count fed in two pieces as whole;
    // never fewer values than serde builds from a text it accepts (equal but for the
    // keys an object names twice: serde keeps the last).
    let whole = budget::tally(data, MAX_DOCUMENT_VALUES).expect("16 KiB is within the budget");
    let cut = data.first().map_or(0, |&b| usize::from(b)).min(data.len());
    let mut c = Counter::new(MAX_DOCUMENT_VALUES);
    c.feed(&data[..cut]).unwrap();
    c.feed(&data[cut..]).unwrap();
    assert_eq!(c.tally(), whole);
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) {
        assert!(count(&v) <= whole.values, "tally vs serde");
        // A budget one short refuses it, at a byte inside it.
        if whole.values > 0 {
            let e = budget::tally(data, whole.values - 1).unwrap_err();
            assert!(e.at < data.len() as u64);
        }
    }
    // As host/src/report.rs `load_path`: not UTF-8 is refused before parsing.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let r = match RunResults::from_json(text) {
        Ok(r) => r,
        Err(e) => {
            // Every error is one short line, whatever it quotes.
            let m = e.to_string();
            assert!(m.chars().count() < 600, "{} chars: {m}", m.chars().count());
            return;
        }
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
