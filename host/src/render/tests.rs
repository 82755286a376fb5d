//! Rendering tests on a hand-made results document.

use super::*;
use benchboot_plan::{Filesystem, Plan, StorageTarget};
use benchboot_results::{DeviceRead, RandomIo, StopReason, StorageMeasurement, SystemInfo};

fn m(
    target: &str,
    bs: u64,
    direction: Direction,
    mode: Mode,
    requested: Mode,
    bytes: u64,
    nanos: u64,
) -> StorageMeasurement {
    StorageMeasurement {
        target: target.into(),
        filesystem: Filesystem::Ext4,
        block_size: bs,
        direction,
        mode,
        requested_mode: requested,
        note: None,
        repetition: 0,
        bytes,
        nanos,
        stopped_by: StopReason::Bytes,
        begin_ns: None,
        latency: None,
        timeline: Vec::new(),
    }
}

fn results() -> RunResults {
    let mut plan = Plan::example();
    plan.storage.block_sizes = vec![8, 4096];
    plan.storage.targets.push(StorageTarget {
        label: "vfat".into(),
        device: "/dev/x".into(),
        filesystem: Filesystem::Vfat,
        optional: false,
    });
    let mut r = RunResults::new("run-1".into(), plan, SystemInfo::default());
    use Mode::*;
    r.storage.push(m(
        "ext4",
        4096,
        Direction::Write,
        Sync,
        Sync,
        10 << 20,
        500_000_000,
    ));
    r.storage.push(m(
        "ext4",
        4096,
        Direction::Read,
        Sync,
        Sync,
        10 << 20,
        250_000_000,
    ));
    r.storage.push(m(
        "vfat",
        8,
        Direction::Write,
        Sync,
        Sync,
        1 << 20,
        4_000_000_000,
    ));
    r.storage.push(m(
        "vfat",
        8,
        Direction::Write,
        Sync,
        Direct,
        1 << 20,
        2_000_000_000,
    ));
    r
}

#[test]
fn write_table_has_rows_by_block_size_and_columns_by_filesystem() {
    let t = storage_table(&results(), Direction::Write, Mode::Sync).to_string();
    let lines: Vec<&str> = t.lines().collect();
    assert!(
        lines[1].contains("block size") && lines[1].contains("ext4") && lines[1].contains("vfat"),
        "{t}"
    );
    let row_8 = lines.iter().find(|l| l.contains("8 B")).unwrap();
    assert!(row_8.contains("0.25"), "{t}"); // vfat: 1 MiB in 4 s
    assert!(row_8.contains("—"), "{t}"); // ext4 has no 8 B measurement
    let row_4k = lines.iter().find(|l| l.contains("4 KiB")).unwrap();
    assert!(row_4k.contains("20.00"), "{t}"); // ext4: 10 MiB in 0.5 s
}

#[test]
fn direct_table_marks_the_sync_fallback() {
    let t = storage_table(&results(), Direction::Write, Mode::Direct).to_string();
    let row_8 = t.lines().find(|l| l.contains("8 B")).unwrap();
    assert!(row_8.contains(&format!("0.50{FALLBACK_MARK}")), "{t}");
    let rep = report(&results());
    assert!(rep.contains("ran in sync mode"), "{rep}");
}

#[test]
fn a_refused_card_plan_heads_the_report_and_the_plan_is_named() {
    let mut r = results();
    assert!(report(&r).contains("plan: built in, no plan file"));
    r.plan.source = benchboot_plan::PlanSource {
        file: "plans/quick.toml".into(),
        preset: Some("quick v2".into()),
        ..Default::default()
    };
    assert!(report(&r).contains("plan: quick v2"));
    r.plan_error = Some(benchboot_plan::PlanFileError {
        file: "plan.toml (card)".into(),
        line: Some(3),
        key: "storage.repetitions".into(),
        message: "must be at least 1".into(),
    });
    let rep = report(&r);
    assert!(
        rep.contains("PLAN REFUSED")
            && rep.contains("plan.toml (card):3: storage.repetitions: must be at least 1")
            && rep.contains("benchboot plan check FILE --board rpi-zero-w"),
        "{rep}"
    );
    assert!(!rep.contains("plan: quick v2"), "no plan ran: {rep}");
}

#[test]
fn commands_and_what_they_measured_are_listed() {
    use benchboot_results::command::{CommandMeasurement, CommandRun};
    let mut r = results();
    assert!(!report(&r).contains("Your commands"));
    r.commands = vec![
        CommandRun {
            id: "coremark".into(),
            path: "bin/coremark".into(),
            exit_code: Some(0),
            elapsed_ns: 12_300_000_000,
            measurements: vec![CommandMeasurement {
                case: "iterations".into(),
                value: 1234.5,
                units: "iterations/s".into(),
            }],
            health: None,
        },
        CommandRun {
            id: "hang".into(),
            path: "bin/hang".into(),
            exit_code: None,
            elapsed_ns: 5_000_000_000,
            measurements: vec![],
            health: None,
        },
    ];
    assert_eq!(
        command_lines(&r),
        [
            "command coremark (bin/coremark): exit 0 in 12.3 s",
            "  iterations = 1234.5 iterations/s",
            "command hang (bin/hang): did not finish (see the faults) in 5 s",
        ]
    );
    assert!(report(&r).contains("Your commands"));
}

#[test]
fn read_table_and_report() {
    let r = results();
    let t = storage_table(&r, Direction::Read, Mode::Sync).to_string();
    assert!(t.contains("40.00"), "{t}");
    let rep = report(&r);
    assert!(rep.contains("EMULATED (QEMU)"), "{rep}");
    assert!(
        rep.contains("Write, MiB/s, mode sync") && rep.contains("Read, MiB/s, mode direct"),
        "{rep}"
    );
}

#[test]
fn device_reads_iops_and_a1() {
    let mut r = results();
    r.device_reads.push(DeviceRead {
        device: "/dev/mmcblk0".into(),
        kind: DeviceReadKind::Cached,
        bytes: 300 << 20,
        nanos: 2_000_000_000,
    });
    r.random.push(RandomIo {
        target: "ext4".into(),
        op: RandomOp::Read,
        block_size: 4096,
        queue_depth: 4,
        region_bytes: 1 << 24,
        ios: 4321,
        nanos: 1_000_000_000,
        latency: None,
    });
    let d = device_read_table(&r).to_string();
    assert!(d.contains("/dev/mmcblk0") && d.contains("150.00"), "{d}");
    let t = iops_table(&r).to_string();
    assert!(t.contains("QD4 IOPS") && t.contains("4321"), "{t}");
    // No QD1 figures and no direct sequential write: no verdict, said so.
    assert!(a1_lines(&r).contains("no verdict"), "{}", a1_lines(&r));
}

#[test]
fn repetitions_show_median_and_spread() {
    assert_eq!(cell_text(&[1.0, 3.0, 2.0]), "2.00 (1.00–3.00)");
    assert_eq!(cell_text(&[]), "—");
}

/// The card's own claim (SSR APP_PERF_CLASS) beside the A1 verdict benchboot measured,
/// in one line; the card's identity in the context table. The SSR is the one
/// crates/sdcard/tests/fixtures.rs builds from the spec's table (A2, C10 U3 V30), the
/// CID/CSD a real Toshiba-made 4 GB card's (its source there).
#[test]
fn a_card_that_claims_a2_and_measures_below_a1_is_one_line() {
    let mut r = results();
    // A card's registers: a board's run (an emulated one's A1 is not judged).
    r.emulated = false;
    let mut ssr = [0u8; 64];
    (ssr[0], ssr[8], ssr[14], ssr[15], ssr[21]) = (0x80, 0x04, 0x30, 30, 0x02);
    let card = benchboot_sdcard::decode(&benchboot_sdcard::RawRegisters {
        kind: Some("SD".into()),
        cid: Some("02544d5341303447113533890900d371".into()),
        csd: Some("400e00325b5900001d177f800a40008d".into()),
        ssr: Some(ssr.iter().map(|b| format!("{b:02x}")).collect()),
        ..Default::default()
    });
    r.devices.push(benchboot_results::DeviceIdentity {
        name: "mmcblk0".into(),
        size_bytes: 3_904_897_024,
        card: Some(card),
        ..Default::default()
    });
    r.plan.storage.block_sizes = vec![1 << 20];
    r.plan.storage.random = Some(benchboot_plan::RandomPlan {
        targets: vec!["ext4".into()],
        block_size: 4096,
        region_bytes: 1 << 24,
        duration_ms: 1000,
        queue_depths: vec![1],
    });
    // 1 MiB direct writes at 20 MB/s; 4 KiB QD1: 300 write and 2,000 read IOPS.
    r.storage.push(m(
        "ext4",
        1 << 20,
        Direction::Write,
        Mode::Direct,
        Mode::Direct,
        20_000_000,
        1_000_000_000,
    ));
    for (op, ios) in [(RandomOp::Write, 300), (RandomOp::Read, 2000)] {
        r.random.push(RandomIo {
            target: "ext4".into(),
            op,
            block_size: 4096,
            queue_depth: 1,
            region_bytes: 1 << 24,
            ios,
            nanos: 1_000_000_000,
            latency: None,
        });
    }
    let a1 = a1_lines(&r);
    assert!(
        a1.contains("A1 (ext4): FAIL")
            && a1.contains("sequential write 20.0 MB/s (>= 10 MB/s)")
            && a1.contains("random write 300 IOPS")
            && a1.contains("; the card claims A2 (SSR), measures below A1"),
        "{a1}"
    );
    r.emulated = true;
    let a1 = a1_lines(&r);
    assert!(
        a1.starts_with("A1 (ext4): EMULATED, not judged: QEMU's virtual disk is no card — ")
            && !a1.contains("FAIL")
            && !a1.contains("below A1"),
        "{a1}"
    );
    let ctx = context_grid(&context(&r)).to_string();
    assert!(ctx.contains("card (its registers)"), "{ctx}");
    assert!(
        ctx.contains("Toshiba/Kioxia") && ctx.contains("SA04G"),
        "{ctx}"
    );
    assert!(ctx.contains("A2"), "{ctx}");
    // Its CSD agrees with the block device: no capacity warning among the lines.
    assert!(
        !detail_lines(&r).join("\n").contains("capacity"),
        "{:?}",
        detail_lines(&r)
    );
}
