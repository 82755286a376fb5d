//! QEMU smoke test of the whole slice: cross-built init → real rpi-zero-w image → boot in
//! QEMU raspi0 → storage sweep → `benchboot fetch`. Asserts structure, never speed
//! (emulated throughput says nothing about hardware).

use std::time::Duration;

use benchboot_plan::Mode;
use benchboot_results::{DeviceReadKind, Direction, RunResults, SchemaVersion, StopReason};
use xtask::layout::{self, Role};

#[test]
fn rpi_zero_w_boots_measures_and_serves_results() {
    let board = xtask::load_board("rpi-zero-w").unwrap();
    let run = xtask::qemu::run(&board, Duration::from_secs(900)).unwrap();

    // `benchboot fetch` found the board by itself (no address given).
    assert!(
        run.discovered,
        "127.0.0.1:{} was busy: fetch needed an address",
        benchboot_plan::QEMU_RESULTS_FORWARD
    );

    // The image as built passes the real tools.
    let layout = layout::plan(&layout::Spec::default()).unwrap();
    let dump = benchboot_tests::fsck_image(&run.image, &layout).unwrap();
    assert!(dump.contains("label: dos"), "{dump}");
    for (n, kind) in [
        (1, "type=c, bootable"),
        (2, "type=c"),
        (3, "type=f"),
        (5, "type=83"),
        (8, "type=c"),
        (9, "type=da"),
    ] {
        // sfdisk names the partitions of an image file `<image><n>`.
        let name = format!("{}{n} :", run.image.display());
        let line = dump
            .lines()
            .find(|l| l.starts_with(&name))
            .unwrap_or_else(|| panic!("no p{n}:\n{dump}"));
        assert!(line.contains(kind), "p{n}: {line}");
    }

    // The fetched document.
    let text = std::fs::read_to_string(&run.results).unwrap();
    let r = RunResults::from_json(&text).unwrap();
    assert_eq!(r.schema_version, SchemaVersion::CURRENT);
    assert!(r.emulated, "a QEMU run must be marked emulated");
    assert!(r.complete);
    assert_eq!(r.system.machine, "armv6l");
    assert!(r.events.is_empty(), "events: {:?}", r.events);
    let targets: Vec<&str> = r
        .plan
        .storage
        .targets
        .iter()
        .map(|t| t.label.as_str())
        .collect();
    assert_eq!(targets, ["ext2", "ext3", "ext4", "vfat", "raw"]);
    // Every cell of every table: target x mode x block size x direction, with the mode
    // that ran (O_DIRECT below the 512 B logical block size falls back to sync, noted).
    assert_eq!(r.plan.storage.block_sizes.len(), 18);
    assert_eq!(r.plan.storage.modes, [Mode::Sync, Mode::Direct]);
    for t in &targets {
        for &mode in &r.plan.storage.modes {
            for &bs in &r.plan.storage.block_sizes {
                for dir in [Direction::Write, Direction::Read] {
                    let m = r
                        .storage
                        .iter()
                        .find(|m| {
                            m.target == *t
                                && m.block_size == bs
                                && m.direction == dir
                                && m.requested_mode == mode
                        })
                        .unwrap_or_else(|| panic!("no {t} {mode:?} {bs} B {dir:?} measurement"));
                    assert!(m.bytes >= bs && m.nanos > 0, "{m:?}");
                    let fell_back = mode == Mode::Direct && bs < 512;
                    assert_eq!(m.mode, if fell_back { Mode::Sync } else { mode }, "{m:?}");
                    assert_eq!(m.note.is_some(), fell_back, "{m:?}");
                }
            }
        }
    }
    // hdparm-style reads of the card, random IOPS at each depth, verification, identity.
    let kinds: Vec<_> = r
        .device_reads
        .iter()
        .map(|d| (d.device.as_str(), d.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("/dev/mmcblk0", DeviceReadKind::Cached),
            ("/dev/mmcblk0", DeviceReadKind::Buffered)
        ]
    );
    assert!(r.device_reads.iter().all(|d| d.bytes > 0 && d.nanos > 0));
    let rp = r.plan.storage.random.as_ref().unwrap();
    assert_eq!(r.random.len(), rp.targets.len() * rp.queue_depths.len() * 2);
    assert!(
        r.random.iter().all(|x| x.ios > 0 && x.nanos > 0),
        "{:?}",
        r.random
    );
    assert_eq!(r.verify.len(), 5);
    assert!(r
        .verify
        .iter()
        .all(|v| v.first_mismatch.is_none() && v.bytes > 0));
    let card = r
        .devices
        .iter()
        .find(|d| d.name == "mmcblk0")
        .expect("identity of mmcblk0");
    assert_eq!((card.size_bytes, card.logical_block_size), (1 << 30, 512));
    // A read covers what the write pass put on the device, unless the time cap cut it.
    for w in r.storage.iter().filter(|m| m.direction == Direction::Write) {
        let rd = r
            .storage
            .iter()
            .find(|m| {
                m.direction == Direction::Read
                    && m.target == w.target
                    && m.block_size == w.block_size
                    && m.requested_mode == w.requested_mode
            })
            .unwrap();
        assert!(rd.bytes <= w.bytes, "{rd:?} read more than {w:?} wrote");
        assert!(
            rd.bytes == w.bytes || rd.stopped_by == StopReason::Time,
            "{rd:?} vs {w:?}"
        );
    }
    assert_eq!(r.census.len(), 3);
    for c in &r.census {
        assert!(c.only_pid1(), "census {}: {:?}", c.at, c.user_processes);
        assert!(c.kernel_threads > 0);
    }

    // The console carried the protocol lines, and the card's results partition holds the
    // same run (written atomically by PID 1).
    let console = std::fs::read_to_string(&run.console_log).unwrap();
    assert!(
        console.contains(&format!("benchboot: start run={}", r.run_id)),
        "{console}"
    );
    assert!(
        console.contains("case=storage.ext4.direct.bs4096.r0.write result=pass"),
        "{console}"
    );
    let card = xtask::image::read_fat_file(
        &run.sd_card,
        layout.part(Role::Results).unwrap(),
        "results.json",
    )
    .unwrap();
    let on_card = RunResults::from_json(&String::from_utf8(card).unwrap()).unwrap();
    // ...and the results partition is consistent although QEMU was killed without a
    // power-off: fsck.vfat may report only the dirty bit of a still-mounted volume.
    let p2 = benchboot_tests::extract_partition(&run.sd_card, layout.part(Role::Results).unwrap())
        .unwrap();
    let fsck = benchboot_tests::run_tool("fsck.vfat", &["-n"], p2.path()).unwrap();
    let problems: Vec<&str> = fsck
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("fsck.fat"))
        .filter(|l| !l.contains("irty bit") && !l.starts_with("Leaving filesystem"))
        .filter(|l| !l.contains(" files, "))
        .collect();
    assert!(problems.is_empty(), "{fsck}");
    assert_eq!(on_card.run_id, r.run_id);
    assert_eq!(on_card.storage, r.storage);

    // The manifest lists what went in, with checksums.
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&run.manifest).unwrap()).unwrap();
    let files = manifest["boot_files"].as_array().unwrap();
    for name in [
        "bootcode.bin",
        "start.elf",
        "fixup.dat",
        "vmlinuz",
        "initrd.img",
        "bcm2835-rpi-zero-w.dtb",
        "config.txt",
        "cmdline.txt",
    ] {
        let f = files
            .iter()
            .find(|f| f["path"] == format!("p1:/{name}"))
            .unwrap_or_else(|| panic!("{name} not in manifest"));
        assert_eq!(f["sha256"].as_str().unwrap().len(), 64);
    }
}
