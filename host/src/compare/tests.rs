//! Tests of `benchboot compare`: runs of different plans flagged, spread verdicts, the
//! reference rows of wired and WiFi entries.
use super::*;

#[test]
fn runs_of_different_plans_are_flagged() {
    let run = |sha: &str, preset: &str| {
        let mut r = RunResults::new(
            "r".into(),
            benchboot_plan::Plan::example(),
            benchboot_results::SystemInfo::default(),
        );
        r.plan.source.sha256 = sha.into();
        r.plan.source.preset = Some(preset.into());
        (PathBuf::from("x.json"), r)
    };
    assert_eq!(
        plan_warning(&[run("aa", "quick v2"), run("aa", "quick v2")]),
        None
    );
    // Documents before schema 1.6 carry no plan source: nothing to compare.
    assert_eq!(plan_warning(&[run("", "?"), run("bb", "seeds v2")]), None);
    let w = plan_warning(&[run("aa", "quick v2"), run("bb", "seeds v2")]).unwrap();
    assert!(w.contains("A ran quick v2; B ran seeds v2"), "{w}");
}

#[test]
fn spread_verdicts() {
    let a = Stat::of(&[10.0, 11.0, 12.0, 13.0]).unwrap();
    let b = Stat::of(&[20.0, 21.0, 22.0, 23.0]).unwrap();
    let v = against(&a, &b, false);
    assert_eq!(v.spread, SpreadVerdict::Apart);
    assert!((v.ratio.unwrap() - 11.5 / 21.5).abs() < 1e-12);
    assert!(v.note.contains("p = 0.029 < 0.05"), "{}", v.note);
    let c = Stat::of(&[10.0, 12.0, 14.0]).unwrap();
    let d = Stat::of(&[11.0, 13.0, 15.0]).unwrap();
    let v = against(&c, &d, false);
    assert_eq!(v.spread, SpreadVerdict::Overlap);
    assert!(v.note.contains("too few for a rank test"), "{}", v.note);
    let v = against(&c, &Stat::single(12.0), true);
    assert_eq!(v.spread, SpreadVerdict::NoSpread);
    assert!(v.test.is_none() && v.note.contains("reference"));
    let v = against(&Stat::single(10.0), &Stat::range(4.0, 5.0), true);
    assert_eq!((v.ratio, v.ratio_range), (None, Some((2.0, 2.5))));
}

/// The Banana Pi M1 run of the render tests (`eth` built-in, `usb-eth` a LAN7500 on
/// smsc75xx, `ncm` a gadget link) against the seeds' Banana Pi Ethernet figures.
#[test]
fn bananapi_wired_links_meet_their_reference_rows() {
    let run = crate::render::network::tests::wired_run();
    let refs = [
        reference::find("banana-pi-m1-gigabit-ethernet").unwrap(),
        reference::find("banana-pi-m1-usb-gigabit-adapter").unwrap(),
        reference::find("pi-zero-wh-usb-gadget").unwrap(),
    ];
    let c = compare(&[(PathBuf::from("w.json"), run.clone())], &refs).unwrap();
    let row = |dir: &str, link: &str| {
        c.rows
            .iter()
            .find(|r| r.key == Key::network(Section::Http, dir, link, 0))
            .unwrap_or_else(|| panic!("no HTTP {dir} {link}"))
    };
    let mbit = |mib_s: f64| mib_s * reference::MIB_S_TO_MBIT_S;
    // Built-in: download = host-to-board (100 MiB in 1 s = 100 MiB/s vs 96.3),
    // upload = board-to-host (100 MiB in 2 s = 50 MiB/s vs 68.2).
    let down = row("host-to-board", "eth");
    assert_eq!(down.cells[1].as_ref().unwrap().median, Some(mbit(96.3)));
    assert!(down.cells[2].is_none() && down.cells[3].is_none());
    let a = down.against[1].as_ref().unwrap();
    assert!((a.ratio.unwrap() - 100.0 / 96.3).abs() < 1e-9);
    assert_eq!(a.caveat, None);
    let up = row("board-to-host", "eth");
    assert!((up.against[1].as_ref().unwrap().ratio.unwrap() - 50.0 / 68.2).abs() < 1e-9);
    // The LAN7500 row beside the adapter only: 100 MiB in 100 s = 1 MiB/s vs 38.88.
    let usb = row("host-to-board", "usb-eth");
    assert!(usb.cells[1].is_none() && usb.cells[3].is_none());
    assert_eq!(usb.cells[2].as_ref().unwrap().median, Some(mbit(38.88)));
    assert!((usb.against[2].as_ref().unwrap().ratio.unwrap() - 1.0 / 38.88).abs() < 1e-9);
    // The gadget reference sits beside the gadget link only (it has no HTTP figure).
    let tcp = c
        .rows
        .iter()
        .find(|r| r.key == Key::network(Section::Tcp, "board-to-host", "eth", 1))
        .unwrap();
    assert!(tcp.cells[3].is_none());
    let tcp = c
        .rows
        .iter()
        .find(|r| r.key == Key::network(Section::Tcp, "board-to-host", "ncm", 4))
        .unwrap();
    assert_eq!(tcp.cells[3].as_ref().unwrap().median, Some(152.0));
    let http_ncm = row("host-to-board", "ncm");
    assert!(http_ncm.cells[1].is_none() && http_ncm.cells[2].is_none());
    assert!(c.caveats.is_empty());

    // Another adapter's driver: still compared, said to be a different adapter.
    let mut other = run;
    other.network.wired[1].facts.driver = Some("ax88179_178a".into());
    let c = compare(&[(PathBuf::from("w.json"), other)], &refs[1..2]).unwrap();
    let usb = c
        .rows
        .iter()
        .find(|r| r.key == Key::network(Section::Http, "host-to-board", "usb-eth", 0))
        .unwrap();
    let a = usb.against[1].as_ref().unwrap();
    assert_eq!(
        a.caveat.as_deref(),
        Some(
            "different adapter: this one runs the ax88179_178a driver, the reference's \
             LAN7500 runs smsc75xx"
        )
    );
    assert_eq!(
        c.caveats,
        [
            "usb-eth against B (banana-pi-m1-usb-gigabit-adapter): different adapter: this \
          one runs the ax88179_178a driver, the reference's LAN7500 runs smsc75xx"
        ]
    );
    let text = output::render(&c, crate::report::Format::Table).unwrap();
    assert!(
        text.contains("NOT THE SAME LINK: usb-eth against B"),
        "{text}"
    );
    assert!(text.contains("0.03 (different adapter)"), "{text}");
}

/// The WiFi run of the render tests (`wifi-ch1-20`: 20 MHz HT, HTTP 4 MiB/s into the
/// board; `wifi-ch36-80` obtained 40 MHz HT, 6 MiB/s) against the seeds' WiFi rows.
#[test]
fn wifi_references_sit_beside_entries_of_their_width_as_a_different_radio() {
    let run = crate::render::wifi::tests::wifi_run();
    let refs = [
        reference::find("pi-model-b-wifi-11n-20mhz").unwrap(),
        reference::find("pi-model-b-wifi-11n-40mhz").unwrap(),
        reference::find("pi-model-b-wifi-11ag").unwrap(),
        reference::find("wetab-wifi-11n-40mhz").unwrap(),
    ];
    let c = compare(&[(PathBuf::from("wifi.json"), run.clone())], &refs).unwrap();
    let row = |link: &str| {
        c.rows
            .iter()
            .find(|r| r.key == Key::network(Section::Http, "host-to-board", link, 0))
            .unwrap_or_else(|| panic!("no HTTP row for {link}"))
    };
    let mbit = |mib_s: f64| mib_s * reference::MIB_S_TO_MBIT_S;
    // 20 MHz HT: the 802.11n 20 MHz row only (3.77-6.15 MiB/s).
    let ch1 = row("wifi-ch1-20");
    let present: Vec<bool> = ch1.cells.iter().map(Option::is_some).collect();
    assert_eq!(present, [true, true, false, false, false]);
    let s = ch1.cells[1].as_ref().unwrap();
    assert_eq!((s.median, s.min, s.max), (None, mbit(3.77), mbit(6.15)));
    let a = ch1.against[1].as_ref().unwrap();
    let (lo, hi) = a.ratio_range.unwrap();
    assert!((lo - 4.0 / 6.15).abs() < 1e-9 && (hi - 4.0 / 3.77).abs() < 1e-9);
    assert_eq!(
        a.caveat.as_deref(),
        Some("different radio: a USB dongle on a Pi model B; this run's is the CYW43455")
    );
    // Obtained 40 MHz (asked 80): both 802.11n 40 MHz rows.
    let ch36 = row("wifi-ch36-80");
    let present: Vec<bool> = ch36.cells.iter().map(Option::is_some).collect();
    assert_eq!(present, [true, false, true, false, true]);
    let a = ch36.against[4].as_ref().unwrap();
    assert_eq!(
        a.caveat.as_deref(),
        Some("different radio: an AR9285 mini PCIe card in a WeTab; this run's is the CYW43455")
    );
    // No entry ran without HT: the a/g figure stands in a row of its own.
    let ag: Vec<&Row> = c.rows.iter().filter(|r| r.cells[3].is_some()).collect();
    assert_eq!(ag.len(), 1);
    assert_eq!(
        ag[0].key,
        Key::network(Section::Http, "host-to-board", "", 0)
    );
    assert!(c.caveats.contains(
        &"wifi-ch1-20 against B (pi-model-b-wifi-11n-20mhz): different radio: a USB \
          dongle on a Pi model B; this run's is the CYW43455"
            .to_owned()
    ));
    let text = output::render(&c, crate::report::Format::Table).unwrap();
    assert!(text.contains("(different radio)"), "{text}");
    // A wired link never meets a WiFi reference.
    let wired = crate::render::network::tests::wired_run();
    let c = compare(&[(PathBuf::from("w.json"), wired)], &refs[..1]).unwrap();
    assert!(c
        .rows
        .iter()
        .all(|r| r.cells[1].is_none() || r.key.target.is_empty()));
}

#[test]
fn needs_two_entries_and_a_run() {
    let e = compare(&[], &[]).unwrap_err().to_string();
    assert!(e.contains("at least one run"), "{e}");
    let r = RunResults::new(
        "r".into(),
        benchboot_plan::Plan::example(),
        benchboot_results::SystemInfo::default(),
    );
    let e = compare(&[("r.json".into(), r)], &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--reference") && e.contains("--list-references"),
        "{e}"
    );
}

#[test]
fn a_run_given_twice_is_said_not_compared() {
    let run = |id: &str| {
        RunResults::new(
            id.into(),
            benchboot_plan::Plan::example(),
            benchboot_results::SystemInfo::default(),
        )
    };
    let e = compare(
        &[("a.json".into(), run("r1")), ("a.json".into(), run("r1"))],
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("run r1 is given twice (a.json is given twice)"),
        "{e}"
    );
    let e = compare(
        &[
            ("a.json".into(), run("r1")),
            ("b.json".into(), run("r2")),
            ("c.json".into(), run("r1")),
        ],
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("a.json and c.json hold it"), "{e}");
    // The id is printed escaped.
    let e = compare(
        &[
            ("a.json".into(), run("x\u{1b}[2J")),
            ("b.json".into(), run("x\u{1b}[2J")),
        ],
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("run x\\u{1b}[2J is given twice"), "{e}");
    compare(
        &[("a.json".into(), run("r1")), ("b.json".into(), run("r2"))],
        &[],
    )
    .unwrap();
    // Another board's run under the same id (a card passed around: the store keeps it
    // as `r1.2`) is another run, and is compared.
    let mut other = run("r1");
    other.board = "rpi-4b".into();
    compare(
        &[("a.json".into(), run("r1")), ("b.json".into(), other)],
        &[],
    )
    .unwrap();
}

/// Beside each storage and random-I/O cell's throughput ratio, the p99 ratio B÷A with
/// its way: B's 4 KiB writes wait twice as long at p99 (worse), its random reads half
/// as long (better); the 64 KiB cell is the same. The p99 figures also get rows of
/// their own (section figure, µs), as CSV and JSON do.
#[test]
fn storage_cells_show_the_p99_ratio_and_which_way_is_better() {
    use crate::doc::{Block, Grid};
    use crate::render::latency::tests::{latency, latency_run};
    use benchboot_results::latency::{bucket_of, bucket_value};
    let a = latency_run();
    let mut b = latency_run();
    b.run_id = "run-l-b".into();
    for m in b.storage.iter_mut().filter(|m| m.block_size == 4096) {
        if m.latency.is_some() {
            m.latency = Some(latency(&[(1_000_000, 490), (100_000_000, 10)], 8000));
        }
    }
    b.random[0].latency = Some(latency(&[(200_000, 999), (10_000_000, 1)], 1000));
    let c = compare(
        &[(PathBuf::from("a.json"), a), (PathBuf::from("b.json"), b)],
        &[],
    )
    .unwrap();
    let doc = output::document(&c);
    let grid = |title: &str| -> Grid {
        let at = doc
            .blocks
            .iter()
            .position(|b| matches!(b, Block::Heading(h) if h == title))
            .unwrap_or_else(|| panic!("no table {title}"));
        match &doc.blocks[at + 1] {
            Block::Grid(g) => g.clone(),
            other => panic!("{other:?}"),
        }
    };
    let bv = |ns: u64| bucket_value(bucket_of(ns)) as f64;
    let g = grid("Write, MiB/s, mode direct, target ext4");
    assert_eq!(
        g.header,
        ["block size", "A", "B", "A÷B", "A vs B", "p99 B÷A"]
    );
    let p99: Vec<&str> = g.rows.iter().map(|r| r[5].as_str()).collect();
    let worse = format!("{:.2} (worse)", bv(100_000_000) / bv(50_000_000));
    assert_eq!(p99, [worse.as_str(), "1.00 (same)"]);
    let g = grid("Random I/O (O_DIRECT), IOPS");
    let last = g.header.len() - 1;
    assert_eq!(g.header[last], "p99 B÷A");
    let better = format!("{:.2} (better)", bv(200_000) / bv(400_000));
    assert_eq!(g.rows[0][last], better);
    let text = doc.text();
    assert!(text.contains("lower latency is better"), "{text}");
    assert!(c
        .rows
        .iter()
        .any(|r| r.key.metric == "storage-latency-p99" && r.unit == "us"));
}
