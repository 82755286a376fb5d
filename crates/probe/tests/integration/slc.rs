//! A card whose fast (SLC) cache counts every byte written since it was attached
//! ([`SlcDevice`]), run as `benchboot probe --full` runs it: the real quick probe, then
//! the real whole-card pass, both through one [`Counted`] device on a fake clock. The
//! cache size is reported with the quick probe's writes included; the idle time before
//! each phase, and what an idle pause gives back, are measured.

use benchboot_probe::counted::Counted;
use benchboot_probe::fake::{FakeClock, SlcDevice};
use benchboot_probe::full::{full_pass, Clock, FullOptions, FullReport};
use benchboot_probe::{probe, ProbeOptions, ProbeReport, Verdict};

const MIB: u64 = 1 << 20;
const S: u64 = 1_000_000_000;

/// A 256 MiB card with a 64 MiB cache at 20 MiB/s, then 5 MiB/s, reads at 1 GiB/s,
/// refilling `refill` bytes per second idle. `rest_open` ns pass between opening and
/// the quick probe, `rest_between` between the quick probe and the pass.
fn probe_full(
    refill: u64,
    rest_open: u64,
    rest_between: u64,
    idle_check_ns: u64,
) -> (ProbeReport, FullReport) {
    let clock = FakeClock::default();
    let card = SlcDevice::new(
        256 * MIB,
        clock.clone(),
        64 * MIB,
        (20 * MIB, 5 * MIB, refill, 1024 * MIB),
    );
    let mut dev = Counted::new(card, clock.clone());
    let mut c = clock.clone();
    c.sleep_ns(rest_open);
    let quick = ProbeOptions {
        nonce: 0x5eed,
        ..ProbeOptions::default()
    };
    let q = probe(&mut dev, &quick, &mut |_| {}).unwrap();
    c.sleep_ns(rest_between);
    let o = FullOptions {
        nonce: 0xfeed,
        idle_check_ns,
        ..FullOptions::default()
    };
    let f = full_pass(&mut dev, &mut c, &o, &mut |_| {}, &mut || false).unwrap();
    assert_eq!(q.verdict, Verdict::Genuine);
    assert_eq!(f.verdict(), Some(Verdict::Genuine), "{}", f.summary());
    (q, f)
}

fn near(got: u64, want: u64, within: u64, what: &str) {
    assert!(
        got.abs_diff(want) <= within,
        "{what}: {got} ({:.2} MiB) vs {want} ({:.2} MiB), within {within}",
        got as f64 / MIB as f64,
        want as f64 / MIB as f64
    );
}

#[test]
fn the_cache_size_counts_the_quick_probes_writes() {
    let (q, f) = probe_full(0, 0, 0, 0);
    let before = f.before.expect("a counted device");
    // Everything the quick probe wrote went through the one counter (its window and
    // cache flush included): a few dozen MiB.
    assert_eq!(before.written_bytes, q.bytes_written);
    assert!(before.written_bytes > 30 * MIB, "{}", before.written_bytes);
    assert_eq!(f.falls.len(), 1, "{:?}", f.falls);
    let fall = f.falls[0];
    near(
        fall.written_at.unwrap(),
        64 * MIB,
        f.interval_bytes,
        "cache",
    );
    // Its position in the pass is kept: the cache less what the quick probe took.
    near(
        fall.at - f.region.0,
        64 * MIB - before.written_bytes,
        f.interval_bytes,
        "position in the pass",
    );
    assert!((fall.before_mib_s - 20.0).abs() < 0.5, "{fall:?}");
    assert!((fall.after_mib_s - 5.0).abs() < 0.5, "{fall:?}");
    let words = f.cache_words(&fall, true).unwrap();
    let mib = |b: u64| b as f64 / MIB as f64;
    let at = fall.written_at.unwrap();
    assert_eq!(
        words,
        format!(
            "the fast cache ends after {:.1} MiB written ({:.1} MiB by the quick probe, \
             {:.1} MiB into the full pass)",
            mib(at),
            mib(before.written_bytes),
            mib(at - before.written_bytes)
        )
    );
    // Nothing rested: the pass began as the quick probe's reads ended.
    assert!(!before.since_open && before.first_write_after_open_ns == Some(0));
    assert!(before.idle_ns < S / 10, "{}", before.idle_ns);
    assert!(f.idle_check.is_none());
    let not = f.idle_check_words().unwrap();
    assert!(
        not.starts_with("what an idle pause gives back was not measured: the pass began 0.0"),
        "{not}"
    );
}

#[test]
fn the_idle_gaps_before_each_phase_and_the_cache_they_gave_back() {
    // 2 s between opening and the quick probe (the cache was full: nothing to give
    // back), 30 s between it and the pass at 1 MiB/s: 30 MiB back.
    let (_, f) = probe_full(MIB, 2 * S, 30 * S, 0);
    let b = f.before.unwrap();
    assert_eq!(b.first_write_after_open_ns, Some(2 * S));
    // The quick probe's reads after its last write (at 1 GiB/s) and the 30 s.
    assert!(
        (30 * S..30 * S + S / 10).contains(&b.idle_ns),
        "{}",
        b.idle_ns
    );
    let fall = f.falls[0];
    near(
        fall.written_at.unwrap(),
        94 * MIB,
        f.interval_bytes,
        "cache",
    );
    let idle = f.idle_words().unwrap();
    assert!(
        idle.starts_with("idle 2.00 s from opening the card to the quick probe's first write (before that: unknown), 30.0"),
        "{idle}"
    );
    assert!(
        idle.ends_with(" from the quick probe's last write to the full pass"),
        "{idle}"
    );
}

#[test]
fn an_idle_pause_gives_back_what_the_card_refills() {
    // 16 s idle after the pass at 2 MiB/s: 32 MiB come back fast, then 5 MiB/s.
    let (_, f) = probe_full(2 * MIB, 0, 0, 16 * S);
    let c = f.idle_check.as_ref().expect("the check ran");
    assert!(c.fell, "{c:?}");
    assert_eq!(c.stopped, None);
    assert_eq!(c.idle_ns, 16 * S);
    near(c.fast_bytes, 32 * MIB, f.io_bytes, "given back");
    assert!((c.threshold_mib_s - 10.0).abs() < 0.2, "{c:?}");
    // Three slow writes after the fast ones, no more.
    near(
        c.written_bytes,
        c.fast_bytes + 3 * f.io_bytes,
        f.io_bytes,
        "written",
    );
    let w = f.idle_check_words().unwrap();
    assert!(
        w.starts_with(
            "after 16.00 s idle 32.0 MiB came back fast (> 10.0 MiB/s), then the speed fell"
        ),
        "{w}"
    );
    // Without a refill nothing comes back: the first writes are slow.
    let (_, f) = probe_full(0, 0, 0, 16 * S);
    let c = f.idle_check.unwrap();
    assert!(c.fell && c.fast_bytes == 0, "{c:?}");
}

#[test]
fn a_device_not_counted_keeps_the_fall_in_the_pass_alone() {
    let clock = FakeClock::default();
    let mut card = SlcDevice::new(
        256 * MIB,
        clock.clone(),
        64 * MIB,
        (20 * MIB, 5 * MIB, 0, 1024 * MIB),
    );
    let o = FullOptions::default();
    let f = full_pass(&mut card, &mut clock.clone(), &o, &mut |_| {}, &mut || {
        false
    })
    .unwrap();
    assert_eq!(f.before, None);
    assert_eq!(f.falls[0].written_at, None);
    assert_eq!(f.cache_words(&f.falls[0], true), None);
    near(f.falls[0].at, 64 * MIB, f.interval_bytes, "fall");
}
