//! The whole-card pass against devices built to a timing (fast for the first N MiB then
//! slow; a stall every M MiB) on a fake clock, and against the fakes of the quick probe:
//! the fall within one interval of N, every stall with its length, the real size.

use benchboot_probe::fake::{FakeClock, FakeDevice, Model, TimedDevice, Timing};
use benchboot_probe::full::{full_pass, FullOptions, FullReport};
use benchboot_probe::{Found, Verdict};

const MIB: u64 = 1 << 20;

fn timing() -> Timing {
    Timing {
        knee: u64::MAX,
        fast: 80 * MIB,
        slow: 80 * MIB,
        stall_every: 0,
        stall_ns: 0,
        read: 90 * MIB,
        write_op_ns: 0,
    }
}

fn run(claimed: u64, model: Model, timing: Timing, opts: &FullOptions) -> FullReport {
    let clock = FakeClock::default();
    let mut dev = TimedDevice {
        inner: FakeDevice::new(claimed, 512, model),
        timing,
        clock: clock.clone(),
    };
    let mut c = clock;
    full_pass(&mut dev, &mut c, opts, &mut |_| {}, &mut || false).unwrap()
}

fn opts() -> FullOptions {
    FullOptions {
        nonce: 0xfeed,
        ..FullOptions::default()
    }
}

#[test]
fn a_genuine_card_every_sector_and_its_speeds() {
    let r = run(256 * MIB, Model::Genuine, timing(), &opts());
    assert_eq!(r.verdict(), Some(Verdict::Genuine), "{}", r.summary());
    assert_eq!((r.written_bytes, r.read_bytes), (256 * MIB, 256 * MIB));
    assert_eq!((r.good_bytes, r.bad_bytes), (256 * MIB, 0));
    // Intervals of at most 1 % of the device, covering it.
    assert!(r.interval_bytes * 100 <= 256 * MIB, "{}", r.interval_bytes);
    assert_eq!(
        r.write_profile.iter().map(|i| i.bytes).sum::<u64>(),
        256 * MIB
    );
    assert!((r.write_mib_s() - 80.0).abs() < 0.01, "{}", r.write_mib_s());
    assert!((r.read_mib_s() - 90.0).abs() < 0.01, "{}", r.read_mib_s());
    assert!(r.falls.is_empty() && r.stalls.is_empty(), "{r:?}");
    assert!(r
        .summary()
        .starts_with("full pass: every sector held its data"));
}

#[test]
fn the_fall_within_one_interval_of_the_cache_size() {
    for (claimed, knee) in [
        (256 * MIB, 64 * MIB),
        (256 * MIB, 100 * MIB + 3 * 512),
        (192 * MIB, 150 * MIB),
        (64 * MIB, 5 * MIB),
    ] {
        let t = Timing {
            knee,
            fast: 90 * MIB,
            slow: 9 * MIB,
            ..timing()
        };
        let r = run(claimed, Model::Genuine, t, &opts());
        assert_eq!(r.falls.len(), 1, "{knee}: {:?}", r.falls);
        let f = r.falls[0];
        assert!(
            f.at.abs_diff(knee) <= r.interval_bytes,
            "fall at {} vs {knee}, interval {}",
            f.at,
            r.interval_bytes
        );
        assert!((f.before_mib_s - 90.0).abs() < 0.5, "{f:?}");
        assert!((f.after_mib_s - 9.0).abs() < 0.5, "{f:?}");
        assert!(r.stalls.is_empty(), "{:?}", r.stalls);
    }
}

#[test]
fn every_stall_with_its_length() {
    for (claimed, every, stall_ms) in [
        (256 * MIB, 16 * MIB, 471),
        (128 * MIB, 20 * MIB, 250),
        (96 * MIB, 8 * MIB, 120),
    ] {
        let t = Timing {
            stall_every: every,
            stall_ns: stall_ms * 1_000_000,
            ..timing()
        };
        let r = run(claimed, Model::Genuine, t, &opts());
        let want: Vec<u64> = (1..)
            .map(|k| k * every)
            .take_while(|&o| o < claimed)
            .collect();
        assert_eq!(r.stall_count, want.len() as u64, "{:?}", r.stalls);
        for (s, w) in r.stalls.iter().zip(&want) {
            // The write that holds the stall's offset.
            assert!(s.at <= *w && *w < s.at + r.io_bytes, "{s:?} vs {w}");
            assert_eq!(s.excess_ns, stall_ms * 1_000_000, "{s:?}");
        }
        let lat = r.write_latency.unwrap();
        assert_eq!(lat.max_ns - lat.p50_ns, stall_ms * 1_000_000);
        assert!(r.falls.is_empty(), "{:?}", r.falls);
    }
}

/// Each sampled write size's latency, exact on the fake clock: a write costs its
/// command overhead plus its bytes at the card's speed, and a chunk that starts at a
/// stall's offset holds the stall in its first write of every size.
#[test]
fn the_latency_of_each_write_size() {
    let op = 300_000;
    // 256 MiB in 200 intervals: writes (and sampled chunks) of 2621 sectors.
    let io = 256 * MIB / 200 / 512 * 512;
    let every = 16 * io;
    let stall = 180_000_000;
    let t = Timing {
        write_op_ns: op,
        stall_every: every,
        stall_ns: stall,
        ..timing()
    };
    let ns = |bytes: u64| op + bytes * 1_000_000_000 / (80 * MIB);
    let r = run(256 * MIB, Model::Genuine, t, &opts());
    assert_eq!(r.verdict(), Some(Verdict::Genuine), "{}", r.summary());
    let main = r.write_latency.unwrap();
    assert_eq!((main.io_bytes, main.p50_ns), (io, ns(io)));
    let sizes: Vec<u64> = r.latency_by_size.iter().map(|l| l.io_bytes).collect();
    assert_eq!(sizes, vec![4 << 10, 64 << 10, 512 << 10]);
    // 32 MiB of each size: 26 chunks, each in whole writes (the shorter last one of a
    // chunk not counted).
    let chunks = (32 * MIB).div_ceil(io);
    for l in &r.latency_by_size {
        assert_eq!(l.count, chunks * (io / l.io_bytes), "{l:?}");
        assert_eq!(l.p50_ns, ns(l.io_bytes), "{l:?}");
        assert_eq!(l.max_ns, ns(l.io_bytes) + stall, "{l:?}");
        assert!(l.max_at > 0 && l.max_at % every == 0, "{l:?}");
    }
    // The rewrites leave the data as it was: still every sector held.
    assert_eq!(r.good_bytes, 256 * MIB);
    // Sizes that are not whole sectors or not below the pass's writes are left out.
    let o = benchboot_probe::full::FullOptions {
        latency_sizes: vec![4 << 10, 1000, io, 8 * MIB],
        latency_sample_bytes: 8 * MIB,
        ..opts()
    };
    let r = run(256 * MIB, Model::Genuine, t, &o);
    assert_eq!(r.latency_by_size.len(), 1, "{:?}", r.latency_by_size);
    assert_eq!(
        r.latency_by_size[0].count,
        (8 * MIB).div_ceil(io) * (io / 4096)
    );
    // A region smaller than the sample: each chunk once, nothing past the region.
    let clock = FakeClock::default();
    let mut dev = TimedDevice {
        inner: FakeDevice::new(3 * MIB + 512, 512, Model::Genuine),
        timing: t,
        clock: clock.clone(),
    };
    let r = full_pass(
        &mut dev,
        &mut clock.clone(),
        &opts(),
        &mut |_| {},
        &mut || false,
    )
    .unwrap();
    assert!(
        r.latency_by_size
            .iter()
            .all(|l| l.count * l.io_bytes <= 3 * MIB + 512),
        "{:?}",
        r.latency_by_size
    );
    let whole = (3 * MIB + 512) / r.io_bytes;
    assert_eq!(
        r.latency_by_size[0].count,
        whole * (r.io_bytes / 4096),
        "{:?}",
        r.latency_by_size
    );
    assert!(dev.inner.highest_write_end <= 3 * MIB + 512);
}

#[test]
fn fakes_with_their_real_size_and_what_they_held() {
    let claimed = 256 * MIB;
    // Wraps at 48 MiB + 5 sectors: the period, exact.
    let real = 48 * MIB + 5 * 512;
    let r = run(claimed, Model::Wrap { real }, timing(), &opts());
    assert_eq!(r.wraps_at, Some(real), "{}", r.summary());
    assert_eq!(r.verdict(), Some(Verdict::Fake { real_bytes: real }));
    // At most `real` bytes can hold their own data; the rest their alias's.
    assert!(r.good_bytes <= real, "{}", r.good_bytes);
    assert!(r.bad.iter().all(|b| matches!(b.found, Found::Alias { .. })));
    assert!(
        r.summary().contains("a wrap-around fake of 48.0 MiB"),
        "{}",
        r.summary()
    );

    // Drops writes past 100 MiB + 7 sectors: zeros from there.
    let real = 100 * MIB + 7 * 512;
    let r = run(claimed, Model::Drop { real, fill: 0 }, timing(), &opts());
    assert_eq!(r.verdict(), Some(Verdict::Fake { real_bytes: real }));
    assert_eq!(r.bad.len(), 1);
    assert_eq!(r.bad[0].start, real);
    assert_eq!(r.bad[0].end, claimed);
    assert_eq!(r.bad[0].found, Found::Zeros);
    assert_eq!((r.good_bytes, r.bad_bytes), (real, claimed - real));

    // I/O errors past 30 MiB + 1 sector.
    let real = 30 * MIB + 512;
    let r = run(claimed, Model::IoErrors { real }, timing(), &opts());
    let Some(Verdict::IoErrors { first_at }) = r.verdict() else {
        panic!("{}", r.summary())
    };
    assert!(
        first_at <= real && real - first_at < r.io_bytes,
        "{first_at}"
    );
    assert!(r.bad.iter().all(|b| b.found.is_io_error()));
    // A failed write is one bad region, counted once (not read back again).
    // The pass gives up after 64 failed writes in a row and says so.
    assert_eq!(r.bad_region_count, 1, "{:?}", r.bad);
    assert_eq!(r.bad[0].end, r.written_bytes, "{:?}", r.bad);
    // What was written before the failures is read back and held.
    assert_eq!(r.good_bytes, r.bad[0].start);
    assert_eq!(r.good_bytes + r.bad_bytes, r.written_bytes);
    assert!(
        r.stopped
            .as_deref()
            .unwrap()
            .starts_with("64 writes in a row failed"),
        "{:?}",
        r.stopped
    );
}

#[test]
fn a_write_cache_does_not_hide_a_fake_tail() {
    // 4 MiB of the 256 stored nowhere, all inside the last 8 MiB written: a card's
    // 8 MiB write cache would answer their read-back without the rewrite.
    let claimed = 256 * MIB;
    let real = 252 * MIB;
    for flush in [0, 8 * MIB] {
        let clock = FakeClock::default();
        let mut dev = TimedDevice {
            inner: FakeDevice::new(claimed, 512, Model::Drop { real, fill: 0 }).with_cache(8 * MIB),
            timing: timing(),
            clock: clock.clone(),
        };
        let o = FullOptions {
            cache_flush_bytes: flush,
            ..opts()
        };
        let r = full_pass(&mut dev, &mut clock.clone(), &o, &mut |_| {}, &mut || false).unwrap();
        if flush == 0 {
            assert_eq!(r.verdict(), Some(Verdict::Genuine), "the cache hides it");
        } else {
            assert_eq!(
                r.verdict(),
                Some(Verdict::Fake { real_bytes: real }),
                "{}",
                r.summary()
            );
            assert_eq!(r.bad_bytes, claimed - real);
        }
        assert!(dev.inner.highest_write_end <= claimed);
    }
}

#[test]
fn a_clock_that_stands_still_or_jumps_gives_no_fall_and_no_panic() {
    struct Odd(u64);
    impl benchboot_probe::full::Clock for Odd {
        fn now_ns(&mut self) -> u64 {
            self.0 += 1;
            if self.0.is_multiple_of(2) {
                u64::MAX
            } else {
                0
            }
        }
    }
    let mut d = FakeDevice::new(64 * MIB, 512, Model::Genuine);
    let r = full_pass(&mut d, &mut Odd(0), &opts(), &mut |_| {}, &mut || false).unwrap();
    assert!(r.falls.is_empty());
    assert_eq!(r.verdict(), Some(Verdict::Genuine));
    let mut d = FakeDevice::new(64 * MIB, 512, Model::Genuine);
    let mut still = FakeClock::default();
    let r = full_pass(&mut d, &mut still, &opts(), &mut |_| {}, &mut || false).unwrap();
    assert!(r.falls.is_empty() && r.stalls.is_empty(), "{:?}", r.falls);
}

#[test]
fn a_stop_reports_what_was_covered() {
    let clock = FakeClock::default();
    let mut dev = TimedDevice {
        inner: FakeDevice::new(256 * MIB, 512, Model::Genuine),
        timing: timing(),
        clock: clock.clone(),
    };
    let mut calls = 0;
    let mut c = clock;
    let r = full_pass(&mut dev, &mut c, &opts(), &mut |_| {}, &mut || {
        calls += 1;
        calls > 10
    })
    .unwrap();
    assert_eq!(r.written_bytes, 10 * r.io_bytes);
    assert_eq!(r.read_bytes, 0);
    assert!(r
        .stopped
        .as_deref()
        .unwrap()
        .starts_with("interrupted after writing"));
    assert_eq!(r.verdict(), None, "not genuine: {}", r.summary());
    assert!(
        r.summary().contains("stopped before the end"),
        "{}",
        r.summary()
    );
    // A stop in the read-back: what was read, and still no verdict.
    let clock = FakeClock::default();
    let mut dev = TimedDevice {
        inner: FakeDevice::new(256 * MIB, 512, Model::Genuine),
        timing: timing(),
        clock: clock.clone(),
    };
    let mut calls = 0;
    let writes = (256 * MIB).div_ceil(r.io_bytes);
    let r = full_pass(
        &mut dev,
        &mut clock.clone(),
        &opts(),
        &mut |_| {},
        &mut || {
            calls += 1;
            calls > writes + 20
        },
    )
    .unwrap();
    assert_eq!(r.written_bytes, 256 * MIB);
    assert_eq!(r.read_bytes, 20 * r.io_bytes);
    assert_eq!(r.verdict(), None, "{}", r.summary());
    assert!(
        r.stopped
            .as_deref()
            .unwrap()
            .starts_with("interrupted after reading back"),
        "{:?}",
        r.stopped
    );
}

/// No two written blocks alike: a sink that counts distinct blocks sees as many as
/// offsets written (the rewrites before the read-back repeat a block at its own
/// offset, never elsewhere).
#[test]
fn no_two_written_blocks_alike() {
    use std::collections::HashSet;
    struct Dedupe {
        seen: HashSet<Vec<u8>>,
        offsets: HashSet<u64>,
    }
    impl benchboot_probe::BlockDevice for Dedupe {
        fn size_bytes(&self) -> u64 {
            64 * MIB
        }
        fn block_bytes(&self) -> u64 {
            512
        }
        fn write_at(&mut self, at: u64, buf: &[u8]) -> std::io::Result<()> {
            for (i, s) in buf.chunks(512).enumerate() {
                self.seen.insert(s.to_vec());
                self.offsets.insert(at + i as u64 * 512);
            }
            Ok(())
        }
        fn read_at(&mut self, _: u64, _: &mut [u8]) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
        fn reopen(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut d = Dedupe {
        seen: HashSet::new(),
        offsets: HashSet::new(),
    };
    let mut c = FakeClock::default();
    full_pass(&mut d, &mut c, &opts(), &mut |_| {}, &mut || false).unwrap();
    assert_eq!(d.offsets.len() as u64, 64 * MIB / 512);
    assert_eq!(d.seen.len(), d.offsets.len());
}

/// The sustained write speed is the median from the last fall to the end: a card (or a
/// loop device over a host's page cache) that falls, then speeds up again, is not
/// judged by the dip alone.
#[test]
fn the_sustained_speed_runs_from_the_last_fall_to_the_end() {
    use benchboot_probe::full::{Fall, Interval};
    let mut r = run(64 * MIB, Model::Genuine, timing(), &opts());
    let mib_s = |offset: u64, v: f64| Interval {
        offset,
        bytes: MIB,
        ns: (1e9 / v) as u64,
    };
    // 10 intervals at 90, 30 at 10, then 60 at 40 MiB/s.
    r.write_profile = (0..100u64)
        .map(|i| {
            mib_s(
                i * MIB,
                [90.0, 10.0, 40.0][usize::from(i >= 10) + usize::from(i >= 40)],
            )
        })
        .collect();
    r.falls = vec![Fall {
        at: 10 * MIB,
        before_mib_s: 90.0,
        after_mib_s: 10.0,
        written_at: None,
    }];
    assert!(
        (r.sustained_write_mib_s() - 40.0).abs() < 1e-6,
        "{}",
        r.sustained_write_mib_s()
    );
    // No fall: the whole profile's median.
    r.falls.clear();
    assert!((r.sustained_write_mib_s() - 40.0).abs() < 1e-6);
    r.write_profile.truncate(40);
    assert!((r.sustained_write_mib_s() - 10.0).abs() < 1e-6);
    r.write_profile.clear();
    assert_eq!(r.sustained_write_mib_s(), 0.0);
}

/// The latency sampling runs only on a card found whole, gives up on one whose writes
/// start failing (after 64 in a row), and a stop during it ends the sampling with the
/// reason, the verdict untouched.
#[test]
fn the_latency_sampling_stops_on_a_dying_card_and_says_why() {
    // A fake card: no sampling.
    let r = run(
        64 * MIB,
        Model::Drop {
            real: 40 * MIB,
            fill: 0,
        },
        timing(),
        &opts(),
    );
    assert!(r.latency_by_size.is_empty() && r.latency_stopped.is_none());
    // Writes fail from the 500th on: the pass's writes and rewrites (about 410) hold, the
    // sampling meets the failures and gives up after 64.
    struct Dying {
        inner: FakeDevice,
        writes: u64,
    }
    impl benchboot_probe::BlockDevice for Dying {
        fn size_bytes(&self) -> u64 {
            self.inner.size_bytes()
        }
        fn block_bytes(&self) -> u64 {
            self.inner.block_bytes()
        }
        fn write_at(&mut self, at: u64, buf: &[u8]) -> std::io::Result<()> {
            self.writes += 1;
            if self.writes >= 500 {
                return Err(std::io::Error::other("the card went away"));
            }
            self.inner.write_at(at, buf)
        }
        fn read_at(&mut self, at: u64, buf: &mut [u8]) -> std::io::Result<()> {
            self.inner.read_at(at, buf)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.inner.flush()
        }
        fn reopen(&mut self) -> std::io::Result<()> {
            self.inner.reopen()
        }
    }
    let mut d = Dying {
        inner: FakeDevice::new(64 * MIB, 512, Model::Genuine),
        writes: 0,
    };
    let mut clock = FakeClock::default();
    let r = full_pass(&mut d, &mut clock, &opts(), &mut |_| {}, &mut || false).unwrap();
    assert_eq!(r.verdict(), Some(Verdict::Genuine), "{}", r.summary());
    assert_eq!(
        r.latency_stopped.as_deref(),
        Some("64 writes in a row failed while writing 4.0 KiB at a time")
    );
    assert_eq!(d.writes, 499 + 64);
    // A stop during the sampling: the reason, the verdict kept.
    let mut calls = 0;
    let mut d = FakeDevice::new(64 * MIB, 512, Model::Genuine);
    let r = full_pass(
        &mut d,
        &mut FakeClock::default(),
        &opts(),
        &mut |_| {},
        &mut || {
            calls += 1;
            // The pass's writes and reads take about 410 calls; stop well inside the sampling.
            calls > 1000
        },
    )
    .unwrap();
    assert_eq!(r.verdict(), Some(Verdict::Genuine));
    assert_eq!(
        r.latency_stopped.as_deref(),
        Some("interrupted while writing 4.0 KiB at a time")
    );
    assert_eq!(r.latency_by_size.len(), 1);
}
