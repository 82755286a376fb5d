//! Rendering tests on a hand-made results document.

use super::*;
use benchboot_plan::{Filesystem, NetworkPlan, Plan, ResultsTarget, StoragePlan, StorageTarget};
use benchboot_results::{IoMode, StopReason, StorageMeasurement, SystemInfo};

fn results() -> RunResults {
    let target = |label: &str, fs| StorageTarget {
        label: label.into(),
        device: "/dev/x".into(),
        filesystem: fs,
    };
    let plan = Plan {
        board: "rpi-zero-w".into(),
        emulated: true,
        modules: vec![],
        results: ResultsTarget {
            device: "/dev/mmcblk0p2".into(),
            file: "results.json".into(),
        },
        storage: StoragePlan {
            targets: vec![
                target("ext4", Filesystem::Ext4),
                target("vfat", Filesystem::Vfat),
            ],
            block_sizes: vec![8, 4096],
            byte_cap: 1 << 20,
            time_cap_ms: 1500,
            repetitions: 1,
            device_wait_ms: 1,
        },
        network: NetworkPlan {
            interface: "usb0".into(),
            address: [10, 0, 2, 15],
            prefix_len: 24,
            port: 8080,
            interface_wait_ms: 1,
        },
    };
    let mut r = RunResults::new("run-1".into(), plan, SystemInfo::default());
    let m = |target: &str, fs, bs, direction, bytes, nanos| StorageMeasurement {
        target: target.into(),
        filesystem: fs,
        block_size: bs,
        direction,
        mode: IoMode::Sync,
        repetition: 0,
        bytes,
        nanos,
        stopped_by: StopReason::Bytes,
    };
    r.storage.push(m(
        "ext4",
        Filesystem::Ext4,
        4096,
        Direction::Write,
        10 << 20,
        500_000_000,
    ));
    r.storage.push(m(
        "ext4",
        Filesystem::Ext4,
        4096,
        Direction::Read,
        10 << 20,
        250_000_000,
    ));
    r.storage.push(m(
        "vfat",
        Filesystem::Vfat,
        8,
        Direction::Write,
        1 << 20,
        4_000_000_000,
    ));
    r
}

#[test]
fn labels() {
    assert_eq!(block_size_label(8), "8 B");
    assert_eq!(block_size_label(4096), "4 KiB");
    assert_eq!(block_size_label(1 << 20), "1 MiB");
    assert_eq!(block_size_label(1536), "1536 B");
}

#[test]
fn write_table_has_rows_by_block_size_and_columns_by_filesystem() {
    let t = storage_table(&results(), Direction::Write).to_string();
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
fn read_table_and_report() {
    let r = results();
    let t = storage_table(&r, Direction::Read).to_string();
    assert!(t.contains("40.00"), "{t}");
    let rep = report(&r);
    assert!(rep.contains("EMULATED (QEMU)"), "{rep}");
    assert!(rep.contains("Write, MiB/s") && rep.contains("Read, MiB/s"));
}

#[test]
fn repetitions_show_median_and_spread() {
    assert_eq!(cell_text(&[1.0, 3.0, 2.0]), "2.00 (1.00–3.00)");
    assert_eq!(cell_text(&[]), "—");
}
