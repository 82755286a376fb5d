//! Everything of a power trace that comes from outside, by the first byte: PID 1's mark
//! lines (`marks::parse`, any console line), a meter's CSV (`decode::csv::trace`), an
//! RDTech UM frame, a FNIRSI HID report, a plug's answer (each plug), and a trace JSON
//! (bounded `Trace` deserialization) aligned and integrated against a fixed run
//! (`energy_report`: the alignment and the integration on a stranger's samples).
#![no_main]

use benchboot_energy::decode::{csv, fnirsi, plugs::Plug, rdtech};
use benchboot_energy::{energy_report, marks, Trace};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    match which % 6 {
        0 => {
            for line in text.lines() {
                if let Some(m) = marks::parse(line) {
                    let _ = m.t_ns();
                }
            }
        }
        1 => {
            if let Ok(t) = csv::trace("fuzz.csv", &text) {
                assert!(t.samples.len() <= benchboot_energy::MAX_SAMPLES);
                assert!(t.samples.windows(2).all(|w| w[1].t_s > w[0].t_s));
            }
        }
        2 => {
            let _ = rdtech::decode(rest);
        }
        3 => {
            let _ = fnirsi::decode(rest);
        }
        4 => {
            for plug in [Plug::ShellyGen1, Plug::ShellyGen2, Plug::Tasmota, Plug::Netio] {
                let _ = plug.decode(rest, 1);
            }
        }
        _ => {
            let Ok(trace) = serde_json::from_slice::<Trace>(rest) else {
                return;
            };
            let run = run();
            if let Ok(rep) = energy_report(&trace, &run) {
                for s in &rep.steps {
                    if let Ok(f) = &s.figure {
                        assert!(f.energy_j.is_finite() && f.uncertainty_j.is_finite());
                    }
                }
            }
        }
    }
});

/// A run with two sync patterns, an idle phase and one memory step.
fn run() -> benchboot_results::RunResults {
    use benchboot_results::energy::{IdleMark, SyncMark};
    let mut r = benchboot_results::RunResults::new(
        "fuzz".into(),
        benchboot_plan::Plan::example(),
        Default::default(),
    );
    let sync = |at: &str, begin_ns: u64| SyncMark {
        at: at.into(),
        begin_ns,
        slot_ns: 250_000_000,
        code: "1111100110101".into(),
        end_ns: begin_ns + 13 * 250_000_000,
    };
    r.energy.sync = vec![sync("start", 1_000_000_000), sync("end", 20_000_000_000)];
    r.energy.idle = vec![IdleMark {
        phase: "radios-off".into(),
        begin_ns: 4_500_000_000,
        end_ns: 5_000_000_000,
    }];
    r
}
