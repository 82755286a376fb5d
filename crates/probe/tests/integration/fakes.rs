//! The probe against every kind of fake card in `benchboot_probe::fake`: verdict, real
//! size within the resolution, first bad offset, what the bad blocks held.

use benchboot_probe::fake::{FakeDevice, Model};
use benchboot_probe::{probe, Found, ProbeOptions, ProbeReport, Verdict};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

fn opts() -> ProbeOptions {
    ProbeOptions {
        start_bytes: 0,
        end_bytes: None,
        nonce: 0x5eed_1234,
        resolution_bytes: None,
        cache_flush_bytes: 8 * MIB,
    }
}

fn run(dev: &mut FakeDevice, o: &ProbeOptions) -> ProbeReport {
    let r = probe(dev, o, &mut |_| {}).unwrap();
    // Writes stay inside the region.
    let (start, end) = r.region;
    assert!(dev.lowest_write >= start, "wrote below the region");
    assert!(dev.highest_write_end <= end, "wrote past the region");
    assert!(dev.flushes >= 1 && dev.reopens >= 1);
    r
}

/// Sizes that are not powers of two, and one that is.
fn reals(claimed: u64) -> Vec<u64> {
    vec![
        claimed / 8,
        claimed / 3 / 512 * 512,
        claimed / 2 + 7 * 512,
        (claimed / 10) * 7 / 4096 * 4096 + 4096 * 3,
        200 * MIB + 3 * 512,
    ]
}

fn assert_near(r: &ProbeReport, real: u64) {
    let got = r.real_bytes.expect("a real size");
    assert!(
        got.abs_diff(real) <= r.resolution_bytes,
        "real size {got} vs {real}, resolution {}: {}",
        r.resolution_bytes,
        r.summary()
    );
    let fb = r.first_bad.unwrap();
    assert!(fb >= real, "first bad {fb} below the real size {real}");
    assert!(fb - real <= r.resolution_bytes, "first bad {fb} vs {real}");
    if let Some(g) = r.highest_good {
        assert!(g + r.block_bytes <= real, "good block {g} past {real}");
    }
}

#[test]
fn genuine() {
    for claimed in [GIB, 4 * GIB + 512 * 7, 64 * GIB] {
        let mut d = FakeDevice::new(claimed, 512, Model::Genuine);
        let r = run(&mut d, &opts());
        assert_eq!(r.verdict, Verdict::Genuine, "{}", r.summary());
        assert!(r.bad.is_empty());
        assert_eq!(r.first_bad, None);
        assert!(r.summary().starts_with("genuine: "), "{}", r.summary());
        // Few writes: the samples and one window.
        assert!(r.bytes_written < 80 * MIB, "{}", r.bytes_written);
    }
}

#[test]
fn wraps_at_n() {
    let claimed = 4 * GIB;
    for real in reals(claimed) {
        let mut d = FakeDevice::new(claimed, 512, Model::Wrap { real });
        let r = run(&mut d, &opts());
        assert_eq!(
            r.verdict,
            Verdict::Fake { real_bytes: real },
            "{}",
            r.summary()
        );
        assert_eq!(r.wraps_at, Some(real), "{}", r.summary());
        assert_eq!(r.first_bad, Some(real));
        assert_near(&r, real);
        let alias = r
            .bad
            .iter()
            .find_map(|b| match b.found {
                Found::Alias { holds } => Some((b.offset, holds)),
                _ => None,
            })
            .expect("an aliased block");
        assert_eq!((alias.0 - alias.1) % real, 0, "{alias:?}");
        assert!(
            r.summary().starts_with("FAKE: claims 4.0 GiB"),
            "{}",
            r.summary()
        );
    }
}

#[test]
fn drops_writes_past_n() {
    let claimed = 4 * GIB;
    for fill in [0u8, 0xff] {
        for real in reals(claimed) {
            let mut d = FakeDevice::new(claimed, 512, Model::Drop { real, fill });
            let r = run(&mut d, &opts());
            assert!(matches!(r.verdict, Verdict::Fake { .. }), "{}", r.summary());
            assert_near(&r, real);
            let want = if fill == 0 { Found::Zeros } else { Found::Ones };
            assert!(r.bad.iter().all(|b| b.found == want), "{:?}", r.bad);
            assert_eq!(r.wraps_at, None);
        }
    }
}

#[test]
fn io_errors_past_n() {
    let claimed = 4 * GIB;
    for real in reals(claimed) {
        let mut d = FakeDevice::new(claimed, 512, Model::IoErrors { real });
        let r = run(&mut d, &opts());
        let Verdict::IoErrors { first_at } = r.verdict else {
            panic!("{}", r.summary())
        };
        assert_near(&r, real);
        // The block holding the first bad sector fails as a whole: within one block.
        assert!(
            first_at.abs_diff(real) <= r.resolution_bytes,
            "{first_at} vs {real}"
        );
        assert!(r.bad.iter().all(|b| b.found.is_io_error()));
        assert!(r.summary().starts_with("I/O ERRORS"), "{}", r.summary());
    }
}

#[test]
fn keeps_first_n_and_last_mib() {
    let claimed = 4 * GIB;
    for real in reals(claimed) {
        let mut d = FakeDevice::new(
            claimed,
            512,
            Model::KeepTail {
                real,
                tail: 4 * MIB,
                fill: 0,
            },
        );
        let r = run(&mut d, &opts());
        assert!(matches!(r.verdict, Verdict::Fake { .. }), "{}", r.summary());
        assert_near(&r, real);
        assert!(r.good_above_first_bad > 0, "the tail reads good");
    }
}

#[test]
fn a_write_back_cache_hides_the_fake_without_flush_data() {
    let claimed = 4 * GIB;
    // Between two coarse samples (4 MiB apart), so refinement has to find it.
    let real = 1_498 * MIB + 512 * 5;
    let fake = || FakeDevice::new(claimed, 512, Model::Drop { real, fill: 0 }).with_cache(2 * MIB);
    // With flush data: found, to the resolution.
    let r = run(&mut fake(), &opts());
    assert_near(&r, real);
    // Without: the refinement passes' samples come back from the cache, the estimate
    // is off by more than the resolution.
    let no_flush = ProbeOptions {
        cache_flush_bytes: 0,
        ..opts()
    };
    let r = run(&mut fake(), &no_flush);
    let got = r.real_bytes.unwrap();
    assert!(
        got.abs_diff(real) > r.resolution_bytes,
        "without flush data the cache should mislead: {}",
        r.summary()
    );
}

#[test]
fn only_inside_the_region() {
    let claimed = 4 * GIB;
    let o = ProbeOptions {
        start_bytes: 256 * MIB + 512,
        end_bytes: Some(3 * GIB),
        ..opts()
    };
    let mut d = FakeDevice::new(claimed, 512, Model::Genuine);
    let r = run(&mut d, &o);
    assert_eq!(r.verdict, Verdict::Genuine);
    assert_eq!(r.region, (256 * MIB + 512, 3 * GIB));
    let real = 2 * GIB + 3 * 512;
    for model in [Model::Drop { real, fill: 0 }, Model::Wrap { real }] {
        let mut d = FakeDevice::new(claimed, 512, model);
        let r = run(&mut d, &o);
        assert!(matches!(r.verdict, Verdict::Fake { .. }), "{}", r.summary());
        assert_near(&r, real);
    }
}

#[test]
fn stale_data_of_an_earlier_run_is_not_taken_for_good() {
    let claimed = GIB;
    let real = 300 * MIB;
    let mut d = FakeDevice::new(claimed, 512, Model::Genuine);
    run(&mut d, &opts());
    // Now the card "stops storing" past `real`: it keeps the first run's data.
    d.model = Model::Drop { real, fill: 0 };
    let mut d2 = d;
    let r = run(
        &mut d2,
        &ProbeOptions {
            nonce: 99,
            ..opts()
        },
    );
    assert!(matches!(r.verdict, Verdict::Fake { .. }), "{}", r.summary());
    assert_near(&r, real);
}

#[test]
fn the_period_check_stays_inside_the_region() {
    // The check's flush copies step by the period: none may end past the region (here
    // 100 MiB of 128, a wrap at 60 MiB; a 56 MiB wrap of a 256 MiB claim).
    for (claimed, end, real) in [
        (128 * MIB, Some(100 * MIB), 60 * MIB),
        (256 * MIB, None, 56 * MIB),
        (256 * MIB, Some(200 * MIB), 90 * MIB + 512),
    ] {
        let mut d = FakeDevice::new(claimed, 512, Model::Wrap { real });
        let o = ProbeOptions {
            end_bytes: end,
            cache_flush_bytes: 32 * MIB,
            ..opts()
        };
        let r = run(&mut d, &o);
        assert_eq!(r.wraps_at, Some(real), "{}", r.summary());
    }
}

#[test]
fn refuses_what_it_cannot_probe() {
    let mut d = FakeDevice::new(GIB, 500, Model::Genuine);
    assert!(probe(&mut d, &opts(), &mut |_| {}).is_err());
    let mut d = FakeDevice::new(GIB, 512, Model::Genuine);
    let o = ProbeOptions {
        start_bytes: GIB - 512,
        ..opts()
    };
    assert!(probe(&mut d, &o, &mut |_| {}).is_err());
    let o = ProbeOptions {
        end_bytes: Some(2 * GIB),
        ..opts()
    };
    assert!(probe(&mut d, &o, &mut |_| {}).is_err());
    // A start that would overflow when rounded to the sector is refused, not wrapped.
    let o = ProbeOptions {
        start_bytes: u64::MAX - 10,
        ..opts()
    };
    assert!(probe(&mut d, &o, &mut |_| {}).is_err());
}

#[test]
fn report_round_trips_as_json() {
    let mut d = FakeDevice::new(GIB, 512, Model::Wrap { real: 100 * MIB });
    let r = run(&mut d, &opts());
    let j = serde_json::to_string(&r).unwrap();
    let back: ProbeReport = serde_json::from_str(&j).unwrap();
    assert_eq!(back, r);
}

#[test]
fn a_64_gib_claim_backed_by_7_5_gib_with_4k_sectors() {
    let claimed = 64 * GIB;
    let real = 7 * GIB + GIB / 2;
    for model in [
        Model::Wrap { real },
        Model::Drop { real, fill: 0xff },
        Model::IoErrors { real },
    ] {
        let mut d = FakeDevice::new(claimed, 4096, model);
        let r = run(&mut d, &opts());
        assert_near(&r, real);
        eprintln!("{}", r.summary());
        assert!(r.bytes_written < 256 * MIB, "{}", r.bytes_written);
    }
}

#[test]
fn wraps_below_the_flush_window() {
    // The classic counterfeit: a few MiB of flash behind a large claim, less than the
    // cache flush data the probe writes (32 MiB by default).
    for (claimed, real) in [
        (256 * MIB, 16 * MIB),
        (GIB, 48 * MIB + 5 * 512),
        (64 * MIB, 3 * MIB),
        (64 * GIB, 16 * MIB),
        (4 * GIB, 31 * MIB + 512),
    ] {
        // A 2 MiB write-back cache: more than half of the 3 MiB card.
        let mut d = FakeDevice::new(claimed, 512, Model::Wrap { real }).with_cache(2 * MIB);
        let o = ProbeOptions {
            cache_flush_bytes: 32 * MIB,
            ..opts()
        };
        let r = run(&mut d, &o);
        let s = r.summary();
        assert_eq!(r.verdict, Verdict::Fake { real_bytes: real }, "{s}");
        assert_eq!(r.wraps_at, Some(real), "{s}");
        assert_eq!(r.real_bytes, Some(real), "{s}");
        assert_eq!(r.first_bad, Some(real), "{s}");
        assert!(r.bad.iter().all(|b| b.offset >= real), "{:?}", r.bad);
        assert!(s.contains("wrap-around"), "{s}");
    }
}

#[test]
fn wraps_of_every_size_against_every_claim() {
    // 24 (claimed, real, sector, start, flush, cache) draws from a fixed LCG: the period
    // below, at and above the flush window, sectors of 512 and 4096 bytes, a region that
    // starts past 0, a write-back cache smaller than the flush data.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: u64| {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (x >> 33) % n
    };
    for case in 0..24 {
        let sector = if next(2) == 0 { 512 } else { 4096 };
        let claimed = (64 * MIB) << next(7);
        let start = if next(3) == 0 { 4 * MIB + sector } else { 0 };
        // 2 blocks past the start .. half the claim, to the sector.
        let lo = start + 3 * sector.max(4096);
        let real = (lo + next(claimed / 2 - lo)) / sector * sector;
        let flush = [0, 8 * MIB, 32 * MIB][next(3) as usize];
        let cache = if flush > 2 * MIB && next(2) == 0 {
            2 * MIB
        } else {
            0
        };
        let mut d = FakeDevice::new(claimed, sector, Model::Wrap { real }).with_cache(cache);
        let o = ProbeOptions {
            start_bytes: start,
            cache_flush_bytes: flush,
            ..opts()
        };
        let r = run(&mut d, &o);
        let s = format!(
            "case {case}: claimed {claimed}, real {real}, sector {sector}, start {start}, \
             flush {flush}, cache {cache}: {}",
            r.summary()
        );
        assert_eq!(r.wraps_at, Some(real), "{s}");
        assert_eq!(r.verdict, Verdict::Fake { real_bytes: real }, "{s}");
        assert_eq!(r.first_bad, Some(real), "{s}");
        assert_eq!(r.highest_good, Some(real - r.block_bytes), "{s}");
        assert!(r.bad.iter().all(|b| b.offset >= real), "{s}: {:?}", r.bad);
    }
}
