//! The energy path end to end, checked on the `qemu-virt-arm64` boot `qemu_virt` already
//! runs (no boot of its own): the emulated meter's trace (QEMU's CPU time as power,
//! stamped on this host's clock) against the board's sync patterns, idle phases and step
//! windows (CLOCK_BOOTTIME). EMULATED: the watts are a model of QEMU, the path is real.

use benchboot_energy::{align, energy_report, AlignMethod, Alignment};
use benchboot_results::RunResults;
use xtask::qemu::meter::{model_joules, CpuReading};
use xtask::qemu::Run;

/// Asserts that alignment found both sync patterns, agrees with the console's arrival
/// times, and that every step's energy matches the model within its stated uncertainty
/// (and that a shifted alignment does not).
pub fn assert_energy(run: &Run, r: &RunResults) {
    let (recorded, trace_path) = run.meter.as_ref().expect("the run had the emulated meter");
    assert!(trace_path.is_file(), "{}", trace_path.display());
    let trace = &recorded.trace;
    assert!(
        trace.emulated && trace.samples.len() > 1000,
        "{}",
        trace.meter
    );
    // The board's marks: two Barker-13 patterns, the radios-off baseline and one idle
    // phase per link it brought up.
    let sync = &r.energy.sync;
    assert_eq!(
        sync.iter().map(|s| s.at.as_str()).collect::<Vec<_>>(),
        ["start", "end"]
    );
    assert!(sync.iter().all(|s| s.code == "1111100110101"), "{sync:?}");
    let phases: Vec<&str> = r.energy.idle.iter().map(|i| i.phase.as_str()).collect();
    assert_eq!(phases.first(), Some(&"radios-off"), "{phases:?}");
    assert!(phases.iter().any(|p| p.starts_with("link ")), "{phases:?}");
    // The console carried every mark; the host stamped them on arrival.
    assert!(
        trace.console.len() >= 2 * r.health.len(),
        "{}",
        trace.console.len()
    );

    let by_sync = align(trace, &r.energy).expect("the sync patterns are in the trace");
    let AlignMethod::Sync { found } = &by_sync.method else {
        panic!("aligned by {:?}, not the sync patterns", by_sync.method)
    };
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.iter().all(|f| f.correlation >= 0.9), "{found:?}");
    // QEMU's virtual clock is the host's: no skew beyond the alignment's own error.
    let span_s = (sync[1].begin_ns - sync[0].begin_ns) as f64 / 1e9;
    assert!(
        (by_sync.rate - 1.0).abs() * span_s <= 2.0 * by_sync.error_s,
        "skew {} ppm over {span_s} s, error {} s",
        by_sync.skew_ppm(),
        by_sync.error_s
    );
    // An independent clock: the console lines' arrival. Both must put the board's
    // first sync pattern at the same moment of this host's clock.
    let by_console = benchboot_energy::align::console(trace).unwrap();
    let at = sync[0].begin_ns;
    let apart = (by_sync.meter_s(at) - by_console.meter_s(at)).abs();
    assert!(
        apart <= by_sync.error_s + by_console.error_s,
        "sync and console disagree by {apart} s (errors {} + {} s)",
        by_sync.error_s,
        by_console.error_s
    );

    let report = energy_report(trace, r).unwrap();
    assert!(report.emulated);
    let idle = report.idle_w.as_ref().expect("an idle baseline");
    assert!(
        idle.value >= xtask::qemu::meter::IDLE_W && idle.value < 3.0,
        "{idle:?}"
    );
    let within = |a: &Alignment| -> (usize, usize, Vec<String>) {
        let (mut ok, mut all, mut off) = (0, 0, Vec::new());
        for s in &report.steps {
            let Ok(f) = &s.figure else { continue };
            let w = benchboot_energy::windows(r)
                .into_iter()
                .find(|w| w.step == s.step)
                .unwrap();
            let truth = truth(&recorded.cpu, a, w.begin_ns, w.end_ns);
            all += 1;
            if (f.energy_j - truth).abs() <= f.uncertainty_j {
                ok += 1;
            } else {
                off.push(format!(
                    "{}: {:.4} J ± {:.4}, model {truth:.4}",
                    s.step, f.energy_j, f.uncertainty_j
                ));
            }
        }
        (ok, all, off)
    };
    let (ok, all, off) = within(&by_sync);
    assert!(
        all >= 10,
        "only {all} steps have a figure: {:?}",
        report.steps
    );
    assert_eq!(ok, all, "outside their uncertainty: {off:?}");
    // A broken alignment (the board's clock put 0.5 s late) is caught: the model's
    // energy moves out of the figures' stated uncertainty for many steps.
    let shifted = Alignment {
        offset_s: by_sync.offset_s + 0.5,
        ..by_sync.clone()
    };
    let (ok, all, _) = within(&shifted);
    assert!(
        ok < all,
        "a 0.5 s shift went unnoticed ({ok} of {all} within)"
    );
}

/// The model's energy over a board window placed on the host's clock by `a`, J.
fn truth(cpu: &[CpuReading], a: &Alignment, begin_ns: u64, end_ns: u64) -> f64 {
    model_joules(cpu, a.meter_s(begin_ns), a.meter_s(end_ns)).unwrap()
}
