//! `benchboot probe` against real kernel block devices: a loop device over one file of a
//! FUSE filesystem (`benchboot_tests::fake_card`) whose storage wraps at N, drops writes
//! past N, fails past N or writes at a pace its sleeps set, and a loop device over a
//! sparse file (genuine).
//!
//! Needs root, /dev/fuse and losetup: fails (does not skip) without them, as CI runs
//! as root on this kind of machine. Loop devices and the mount go on drop, also on
//! panic.

use std::path::Path;
use std::process::Command;

use benchboot_probe::{Found, ProbeReport, Verdict};
use benchboot_tests::fake_card::{Loop, Model, SECTOR};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// [`benchboot_tests::fake_card::fake`], which fails here (does not skip) without root,
/// /dev/fuse or losetup.
fn fake(size: u64, model: Model) -> benchboot_tests::fake_card::Fake {
    benchboot_tests::fake_card::fake(size, model)
        .unwrap_or_else(|e| panic!("{e:#} (the probe test needs root, /dev/fuse and losetup)"))
}

fn run_probe(tool: &Path, dev: &Path, out: &Path) -> (bool, ProbeReport, String) {
    run_probe_with(tool, dev, out, &["--cache-flush-mib", "8"])
}

fn run_probe_with(
    tool: &Path,
    dev: &Path,
    out: &Path,
    args: &[&str],
) -> (bool, ProbeReport, String) {
    let o = Command::new(tool)
        .arg("probe")
        .arg(dev)
        .args(["--yes", "--allow-virtual"])
        .args(args)
        .arg("--json")
        .arg(out)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let json = std::fs::read_to_string(out).unwrap_or_else(|e| panic!("{e}: {text}"));
    let report: ProbeReport = serde_json::from_str(&json).unwrap();
    (o.status.success(), report, text)
}

/// The run id `benchboot probe --full` says it stored (`stored        run ID in ...`).
fn stored_run(text: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix("stored        run ")?.split(' ').next())
        .unwrap_or_else(|| panic!("no stored run: {text}"))
        .to_owned()
}

fn assert_real(r: &ProbeReport, real: u64, text: &str) {
    let got = r
        .real_bytes
        .unwrap_or_else(|| panic!("no real size: {text}"));
    assert!(
        got.abs_diff(real) <= r.resolution_bytes,
        "real size {got} vs {real} (resolution {}): {text}",
        r.resolution_bytes
    );
    let fb = r.first_bad.unwrap();
    assert!(
        fb >= real && fb - real <= r.resolution_bytes,
        "first bad {fb} vs {real}: {text}"
    );
}

#[test]
fn loop_devices_fake_and_genuine() {
    let _slot = benchboot_tests::qemu_slot(module_path!());
    let tool = xtask::qemu::build_host_tool(false).unwrap();
    let work = tempfile::tempdir().unwrap();
    let claimed = 4 * GIB;

    // Genuine: a sparse file of the same claimed size.
    let sparse = work.path().join("genuine.img");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(claimed)
        .unwrap();
    let dev = Loop::attach(&sparse).unwrap();
    let (ok, r, text) = run_probe(&tool, &dev.0, &work.path().join("genuine.json"));
    eprintln!("{text}");
    assert!(ok, "a genuine loop device exits 0: {text}");
    assert_eq!(r.verdict, Verdict::Genuine, "{text}");
    assert_eq!(r.claimed_bytes, claimed);
    assert!(text.contains("genuine: 4.0 GiB claimed"), "{text}");
    drop(dev);

    // Wraps at 1 GiB + 3 MiB + 5 sectors: not a power of two.
    let real = GIB + 3 * MIB + 5 * SECTOR;
    let card = fake(claimed, Model::Wrap { real });
    let (ok, r, text) = run_probe(&tool, &card.dev.0, &work.path().join("wrap.json"));
    eprintln!("{text}");
    assert!(!ok, "a fake exits non-zero: {text}");
    assert_eq!(r.verdict, Verdict::Fake { real_bytes: real }, "{text}");
    assert_eq!(r.wraps_at, Some(real), "{text}");
    assert_real(&r, real, &text);
    let (at, holds) = r
        .bad
        .iter()
        .find_map(|b| match b.found {
            Found::Alias { holds } => Some((b.offset, holds)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no aliased block: {text}"));
    assert_eq!((at - holds) % real, 0, "{at} holds {holds}: {text}");
    assert!(text.contains("FAKE: claims 4.0 GiB"), "{text}");
    drop(card);

    // Wraps below the default 32 MiB of cache flush data, the classic counterfeit (a few
    // MiB of flash behind the claim): the period, exact, and said in words.
    for (claimed, real) in [
        (256 * MIB, 16 * MIB),
        (GIB, 48 * MIB + 5 * SECTOR),
        (64 * MIB, 3 * MIB + SECTOR),
    ] {
        let card = fake(claimed, Model::Wrap { real });
        let (ok, r, text) = run_probe_with(
            &tool,
            &card.dev.0,
            &work.path().join("small-wrap.json"),
            &[],
        );
        eprintln!("{text}");
        assert!(!ok, "{text}");
        assert_eq!(r.verdict, Verdict::Fake { real_bytes: real }, "{text}");
        assert_eq!(
            (r.wraps_at, r.first_bad),
            (Some(real), Some(real)),
            "{text}"
        );
        assert!(r.bad.iter().all(|b| b.offset >= real), "{text}");
        let words = format!(
            "is a wrap-around fake: it claims {} but holds {};",
            benchboot_probe::human(claimed),
            benchboot_probe::human(real)
        );
        assert!(text.contains(&words), "{words}: {text}");
        drop(card);
    }

    // The whole-card pass on kernel block devices: one whose writes slow to 16 MiB/s
    // past 24 MiB (the fall, within one interval), one that stalls 300 ms at every
    // 16 MiB (each stall, with its length), one that drops writes past 40 MiB + 3
    // sectors (the bad region, to the sector).
    let small = 64 * MIB;
    let store = work.path().join("store");
    let store_arg = store.to_str().unwrap();
    let full = |model: Model, name: &str| {
        let card = fake(small, model);
        let (ok, r, text) = run_probe_with(
            &tool,
            &card.dev.0,
            &work.path().join(name),
            &["--cache-flush-mib", "8", "--full", "--store", store_arg],
        );
        eprintln!("{text}");
        let f = r
            .full
            .clone()
            .unwrap_or_else(|| panic!("no whole-card pass in the JSON: {text}"));
        assert_eq!(f.written_bytes, small, "{text}");
        assert!(f.interval_bytes * 100 <= small, "{text}");
        (ok, f, text)
    };
    let knee = 24 * MIB;
    let (ok, f, text) = full(
        Model::Timed {
            knee,
            fast: 128 * MIB,
            slow: 16 * MIB,
            stall_every: 0,
            stall_ms: 0,
            read: 0,
        },
        "knee.json",
    );
    assert!(ok, "{text}");
    assert_eq!(f.falls.len(), 1, "{text}");
    assert!(f.falls[0].at.abs_diff(knee) <= f.interval_bytes, "{text}");
    let after = f.falls[0].after_mib_s;
    assert!((12.0..=16.5).contains(&after), "{after}: {text}");
    assert!(text.contains("falls at      24.0 MiB"), "{text}");
    // Each size's latency, sampled after the read-back (the sizes below the pass's
    // own writes of 327.5 KiB: 512 KiB is left out on this small device).
    assert_eq!(
        f.latency_by_size
            .iter()
            .map(|l| l.io_bytes)
            .collect::<Vec<_>>(),
        vec![4096, 65536],
        "{text}"
    );
    assert!(text.contains("writes of   4.0 KiB: p50"), "{text}");
    // The run is in the store: its report has the pass and draws its profile, and
    // compare sets it beside another run with a row per figure.
    let id = stored_run(&text);
    assert!(id.starts_with("host-probe-"), "{id}");
    let plots = work.path().join("plots");
    let o = Command::new(&tool)
        .env("COLUMNS", "10000")
        .args(["report", &id, "--store", store_arg, "--plots"])
        .arg(&plots)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(report.contains("The whole card: /dev/loop"), "{report}");
    assert!(report.contains("falls at      24.0 MiB"), "{report}");
    assert!(
        plots.join(format!("{id}-card-profile.svg")).is_file(),
        "{report}"
    );
    let (ok, f, text) = full(
        Model::Timed {
            knee: u64::MAX,
            fast: 128 * MIB,
            slow: 1,
            stall_every: 16 * MIB,
            stall_ms: 300,
            read: 0,
        },
        "stalls.json",
    );
    assert!(ok, "{text}");
    // Each stall found with its length. A busy CI machine may add a hiccup of its own
    // (the fake clock's unit test counts them exactly).
    for k in 1..=3u64 {
        let at = k * 16 * MIB;
        let s = f
            .stalls
            .iter()
            .find(|s| s.at <= at && at < s.at + f.io_bytes)
            .unwrap_or_else(|| panic!("no stall at {at}: {text}"));
        assert!(
            (290..450).contains(&(s.excess_ns / 1_000_000)),
            "{s:?}: {text}"
        );
    }
    let stalls_id = stored_run(&text);
    let o = Command::new(&tool)
        .env("COLUMNS", "10000")
        .args(["compare", &id, &stalls_id, "--store", store_arg, "--plots"])
        .arg(&plots)
        .output()
        .unwrap();
    let cmp = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{cmp}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        cmp.contains("write, sustained (after the fast cache)"),
        "{cmp}"
    );
    assert!(plots.join("compare-card-profile.svg").is_file(), "{cmp}");
    let real = 40 * MIB + 3 * SECTOR;
    let (ok, f, text) = full(Model::Drop { real }, "full-drop.json");
    assert!(!ok, "{text}");
    assert_eq!(f.first_bad, Some(real), "{text}");
    assert_eq!((f.good_bytes, f.bad_bytes), (real, small - real), "{text}");
    assert!(text.contains("bad regions   1"), "{text}");

    // Drops writes past 1.5 GiB + 7 sectors (reads zeros).
    let real = GIB + GIB / 2 + 7 * SECTOR;
    let card = fake(claimed, Model::Drop { real });
    let (ok, r, text) = run_probe(&tool, &card.dev.0, &work.path().join("drop.json"));
    eprintln!("{text}");
    assert!(!ok, "{text}");
    assert!(matches!(r.verdict, Verdict::Fake { .. }), "{text}");
    assert_real(&r, real, &text);
    assert!(r.bad.iter().all(|b| b.found == Found::Zeros), "{text}");
    drop(card);

    // EIO past 700 MiB + 3 sectors.
    let real = 700 * MIB + 3 * SECTOR;
    let card = fake(claimed, Model::Eio { real });
    let (ok, r, text) = run_probe(&tool, &card.dev.0, &work.path().join("eio.json"));
    eprintln!("{text}");
    assert!(!ok, "{text}");
    let Verdict::IoErrors { first_at } = r.verdict else {
        panic!("{text}")
    };
    assert!(first_at.abs_diff(real) <= r.resolution_bytes, "{text}");
    assert_real(&r, real, &text);
    assert!(r.bad.iter().all(|b| b.found.is_io_error()), "{text}");
    drop(card);
}
