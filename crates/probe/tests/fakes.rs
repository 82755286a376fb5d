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
