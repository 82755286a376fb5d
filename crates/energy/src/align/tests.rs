//! The alignment's tests: synthetic runs and meters with known offsets and skews.

use super::*;
use crate::synth::{Lcg, Meter, Run};

/// The largest miss of `a` against the meter's true clock over the run, s.
fn miss(a: &Alignment, m: &Meter, run: &Run) -> f64 {
    let mut worst: f64 = 0.0;
    let mut b = run.sync[0].0;
    while b <= run.sync[1].0 {
        let got = a.meter_s((b * 1e9).round() as u64);
        worst = worst.max((got - m.meter_s(b)).abs());
        b += 1.0;
    }
    worst
}

fn found(a: &Alignment) -> usize {
    match &a.method {
        AlignMethod::Sync { found } => found.len(),
        _ => 0,
    }
}

#[test]
fn a_100_hz_meter_gives_offset_and_skew_within_the_stated_error() {
    let run = Run::standard();
    let m = Meter::usb(1);
    let a = align(&m.trace(&run), &run.results().energy).unwrap();
    assert_eq!(found(&a), 2);
    let off = (a.offset_s - m.offset_s).abs();
    let skew = (a.rate - m.rate) * 1e6;
    eprintln!(
        "100 Hz: offset off by {:.2} ms, skew {:.1} ppm (true 50), error_s {:.2} ms, worst miss {:.2} ms",
        off * 1e3,
        a.skew_ppm(),
        a.error_s * 1e3,
        miss(&a, &m, &run) * 1e3
    );
    assert!(miss(&a, &m, &run) <= a.error_s, "{a:?}");
    // The skew itself: two ends each within error_s over ~120 s apart.
    let span = run.sync[1].0 - run.sync[0].0;
    assert!(
        skew.abs() * 1e-6 * span <= 2.0 * a.error_s,
        "{skew} ppm off"
    );
    // A 100 Hz meter places the board's clock to a few ms.
    assert!(a.error_s < 0.01, "{}", a.error_s);
    let AlignMethod::Sync { found } = &a.method else {
        unreachable!()
    };
    for f in found {
        // A little less: the meter smears each edge over its period.
        assert!(
            (f.contrast_w - (run.busy_w - run.base_w)).abs() < 0.05,
            "{f:?}"
        );
        assert!(f.correlation > 0.99, "{f:?}");
    }
    assert_eq!((found[0].at.as_str(), found[1].index), ("start", 1));
}

#[test]
fn over_many_seeds_the_miss_stays_within_error_s() {
    let run = Run::standard();
    let (mut worst_ratio, mut worst_err): (f64, f64) = (0.0, 0.0);
    for seed in 0..150 {
        let mut rng = Lcg(seed * 7 + 3);
        let m = Meter {
            period_s: 0.1,
            offset_s: 100.0 + 5000.0 * rng.next_f64(),
            rate: 1.0 + (rng.next_f64() - 0.5) * 200e-6,
            noise_w: 0.01 + 0.05 * rng.next_f64(),
            jitter_s: 0.005 * rng.next_f64(),
            resolution_w: 0.01,
            drop: 0.03,
            ..Meter::usb(seed)
        };
        let a = align(&m.trace(&run), &run.results().energy)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(found(&a), 2, "seed {seed}");
        let x = miss(&a, &m, &run);
        assert!(
            x <= a.error_s,
            "seed {seed}: missed by {x} s, error_s {}",
            a.error_s
        );
        worst_ratio = worst_ratio.max(x / a.error_s);
        worst_err = worst_err.max(a.error_s);
    }
    eprintln!(
        "10 Hz, 150 seeds: worst miss / error_s {worst_ratio:.2}, largest error_s {:.1} ms",
        worst_err * 1e3
    );
}

#[test]
fn a_1_hz_plug_finds_2_s_slots_and_refuses_half_second_ones() {
    let run = Run::new(2.0, 0.0);
    let m = Meter::plug(5);
    let a = align(&m.trace(&run), &run.results().energy).unwrap();
    eprintln!(
        "1 Hz, 2 s slots: error_s {:.0} ms, miss {:.0} ms, skew {:.0} ppm",
        a.error_s * 1e3,
        miss(&a, &m, &run) * 1e3,
        a.skew_ppm()
    );
    assert_eq!(found(&a), 2);
    assert!(miss(&a, &m, &run) <= a.error_s);
    let run = Run::standard();
    let e = align(&m.trace(&run), &run.results().energy).unwrap_err();
    assert_eq!(
        e.to_string(),
        "sync pattern `start` not found in the power trace: its slots (0.500 s) are \
         shorter than 2 samples of this meter (1 s): the pattern cannot show in the trace"
    );
}

#[test]
fn one_pattern_gives_rate_1_and_an_error_that_covers_the_skew() {
    let run = Run::standard();
    let m = Meter::usb(2);
    let mut marks = run.results().energy;
    marks.sync.pop();
    // The trace shows both patterns, the document only one: which is it?
    let e = align(&m.trace(&run), &marks).unwrap_err();
    assert!(e.to_string().contains("ambiguous"), "{e}");
    // A run whose end pattern never ran (the board stopped early).
    let end = run.sync[1].0;
    let run = Run {
        pieces: run.pieces.iter().copied().filter(|p| p.0 < end).collect(),
        ..Run::standard()
    };
    let a = align(&m.trace(&run), &marks).unwrap();
    assert_eq!(a.rate, 1.0);
    assert_eq!(found(&a), 1);
    let x = miss(&a, &m, &run);
    // 50 ppm over ~120 s: 6 ms; the error allows 200 ppm over the trace.
    assert!(x > 0.004 && x <= a.error_s, "{x} {}", a.error_s);
}

#[test]
fn noise_alone_or_a_trace_of_another_run_is_not_aligned() {
    let run = Run::standard();
    let marks = run.results().energy;
    // A flat, noisy trace.
    let flat = Run {
        pieces: Vec::new(),
        ..Run::standard()
    };
    let e = align(&Meter::usb(3).trace(&flat), &marks).unwrap_err();
    assert!(matches!(e, AlignError::SyncNotFound { .. }), "{e}");
    assert!(e.to_string().contains("the best match"), "{e}");
    // Another run: every long step 7 s longer, the end pattern 42 s later.
    let other = Run::new(0.5, 7.0);
    for seed in 0..5 {
        let e = align(&Meter::usb(seed).trace(&other), &marks).unwrap_err();
        assert!(e.to_string().contains("ambiguous"), "{e}");
    }
}

#[test]
fn console_stamps_give_the_offset_within_their_error_and_a_prior() {
    let run = Run::standard();
    let m = Meter {
        clock: Clock::Host,
        ..Meter::usb(4)
    };
    let mut trace = m.trace(&run);
    let mut rng = Lcg(99);
    let mut b = 6.0;
    while b < run.end_s - 1.0 {
        let late = CONSOLE_FLOOR_S + 0.02 * -(1.0 - rng.next_f64()).ln();
        trace.console.push((m.meter_s(b) + late, (b * 1e9) as u64));
        b += 0.7;
    }
    let c = console(&trace).unwrap();
    assert_eq!(
        c.method,
        AlignMethod::Console {
            lines: trace.console.len()
        }
    );
    let x = miss(&c, &m, &run);
    eprintln!(
        "console: error_s {:.1} ms, miss {:.1} ms",
        c.error_s * 1e3,
        x * 1e3
    );
    assert!(x <= c.error_s && c.error_s < 0.05, "{x} {c:?}");
    // With no sync marks, the console is the method.
    assert_eq!(align(&trace, &EnergyMarks::default()).unwrap(), c);
    // With both, the sync patterns win (found near the console's prior).
    let a = align(&trace, &run.results().energy).unwrap();
    assert_eq!(found(&a), 2);
    assert!(a.error_s < c.error_s);
}

#[test]
fn same_clock_and_hostile_inputs() {
    let run = Run::standard();
    let mut t = Meter {
        clock: Clock::Board,
        ..Meter::usb(1)
    }
    .trace(&run);
    let a = align(&t, &EnergyMarks::default()).unwrap();
    assert_eq!(
        (a.offset_s, a.rate, a.method),
        (0.0, 1.0, AlignMethod::SameClock)
    );
    t.clock = Clock::Own;
    assert!(matches!(
        align(&t, &EnergyMarks::default()),
        Err(AlignError::Nothing(_))
    ));
    t.samples[5].watts = f64::NAN;
    assert!(matches!(
        align(&t, &EnergyMarks::default()),
        Err(AlignError::Trace(_))
    ));
    let t = Meter::usb(1).trace(&run);
    let good = run.results().energy;
    type Break = fn(&mut SyncMark);
    let broken: [(&str, Break); 6] = [
        ("slot of 0 ns", |m| m.slot_ns = 0),
        ("needs both", |m| m.code = String::new()),
        ("needs both", |m| m.code = "1111".into()),
        ("more than 256", |m| m.code = "10".repeat(10_000)),
        ("before its 13 slots", |m| m.end_ns = m.begin_ns),
        ("before its 13 slots", |m| m.begin_ns = u64::MAX),
    ];
    for (want, f) in broken {
        let mut marks = good.clone();
        f(&mut marks.sync[1]);
        let e = align(&t, &marks).unwrap_err();
        assert!(e.to_string().contains(want), "{want}: {e}");
    }
    let mut marks = good.clone();
    marks.sync = vec![marks.sync[0].clone(); 17];
    assert!(align(&t, &marks)
        .unwrap_err()
        .to_string()
        .contains("more than 16"));
    // A slot so long the pattern outlasts the trace; huge times.
    let mut marks = good.clone();
    marks.sync[0].slot_ns = u64::MAX / 20;
    marks.sync[0].end_ns = u64::MAX;
    assert!(align(&t, &marks).is_err());
    let mut c = t.clone();
    c.clock = Clock::Host;
    c.console = vec![(f64::NAN, 1)];
    assert!(console(&c).is_err());
    c.console = vec![(1e300, u64::MAX), (-1e300, 0)];
    let _ = console(&c);
}
