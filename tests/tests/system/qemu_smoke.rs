//! QEMU smoke test of the whole slice, as the main job runs it (`cargo xtask qemu --board
//! rpi-zero-w`: [`xtask::qemu::Options::main_job`], the short QEMU plan): cross-built
//! init → real rpi-zero-w image → boot in QEMU raspi0 → storage sweep → `benchboot
//! fetch`. The whole 18-size sweep runs in `qemu_virt`, whose emulated machine is
//! far faster (its sweep of 18 sizes took 11.8 s, raspi0's of 5 sizes 47.5 s, 2026-12-07). Asserts structure, never speed (emulated throughput says nothing about
//! hardware).

use std::time::Duration;

use benchboot_image::layout;
use benchboot_image::plans::{QEMU_SHORT, QEMU_SHORT_BLOCK_SIZES};
use benchboot_plan::Mode;
use benchboot_results::SchemaVersion;
use benchboot_tests::checks;

#[test]
fn rpi_zero_w_boots_measures_and_serves_results() {
    let _slot = benchboot_tests::qemu_slot(module_path!());
    let board = xtask::load_board("rpi-zero-w").unwrap();
    let opts = xtask::qemu::Options::main_job(&board, Duration::from_secs(900));
    assert_eq!(opts.plan, QEMU_SHORT);
    let run = xtask::qemu::run_with(&board, &opts).unwrap();

    // `benchboot fetch` got the results over QEMU's network (by address: it never
    // guesses a loopback port).
    assert!(run.fetched, "the results did not come over the network");

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

    // The fetched document: every cell of every table (target x mode x block size x
    // direction, O_DIRECT below the 512 B logical block size run as sync and noted),
    // hdparm-style reads of the card, random IOPS at each depth, verification, identity,
    // and PID 1 alone in user space at every census.
    let r = checks::fetched(&run);
    assert_eq!(r.schema_version, SchemaVersion::CURRENT);
    checks::assert_emulated_run_of(&r, "rpi-zero-w", "armv6l");
    // One warning only: QEMU's card model answers the SD Status with zeros (hw/sd/sd.c
    // keeps `sd_status` zeroed), which the card's registers say. And one Info line: the
    // results journal, p4 of the card behind the sdhost driver, opened `O_DIRECT`, empty
    // on a new image.
    let notes: Vec<_> = r
        .events
        .iter()
        .filter(|e| e.severity != benchboot_results::Severity::Info)
        .collect();
    match notes.as_slice() {
        [e] => assert!(
            e.step == "device.mmcblk0"
                && e.severity == benchboot_results::Severity::Warning
                && e.message.starts_with("ssr: all zero"),
            "{e:?}"
        ),
        other => panic!("events: {other:?}"),
    }
    let journal: Vec<&str> = r
        .events
        .iter()
        .filter(|e| e.step == "journal")
        .map(|e| e.message.as_str())
        .collect();
    assert_eq!(
        journal,
        ["/dev/mmcblk0p4: 16777216 bytes, 0 record(s) of 0 run(s), newest none; 0 torn record(s) skipped"],
        "{:?}",
        r.events
    );
    // The ARM1176 has VFP and no NEON: this build has no NEON kernel, and AT_HWCAP says
    // so (a NEON instruction would be SIGILL here); no huge pages in the rpi kernel.
    checks::assert_memory(
        &r,
        &[
            "libc-memcpy",
            "libc-memset",
            "read-u64",
            "arm-ldm-stm",
            "arm-vldm-vstm",
            "arm-stm-fill",
            "arm-strd-fill",
        ],
        1,
        &["base"],
    );
    let cpu = &r.memory.as_ref().unwrap().cpu;
    assert!(cpu.model.starts_with("ARM1176"), "{}", cpu.model);
    assert!(
        cpu.features.contains(&"vfp".to_owned()) && !cpu.features.contains(&"neon".to_owned()),
        "{:?}",
        cpu.features
    );
    let targets: Vec<&str> = r
        .plan
        .storage
        .targets
        .iter()
        .map(|t| t.label.as_str())
        .collect();
    assert_eq!(targets, ["ext2", "ext3", "ext4", "vfat", "raw"]);
    assert_eq!(r.plan.storage.block_sizes, QEMU_SHORT_BLOCK_SIZES);
    assert_eq!(r.plan.storage.modes, [Mode::Sync, Mode::Direct]);
    checks::assert_storage_complete(&r);
    checks::assert_device_steps(&r, "mmcblk0");
    checks::assert_census_only_pid1(&r);

    // The console carried the protocol lines, and the card's results partition holds the
    // same run (written atomically by PID 1), consistent although QEMU was killed without
    // a power-off.
    let console = checks::assert_console_protocol(&run, &r);
    // The card's registers, decoded on the board (QEMU's model: hw/sd/sd.c).
    assert!(
        console
            .contains("benchboot: card mmcblk0: QEMU (emulated card) (0xaa, table v1) \"QEMU!\""),
        "{console}"
    );
    assert!(
        console.contains("benchboot: case=storage.ext4.direct.bs4096.r0.write value="),
        "{console}"
    );
    checks::assert_fetched_matches_card(&run, &r, &layout);
    checks::assert_results_partition_clean(&run.sd_card, &layout);

    // This run's report as an HTML page, opened in headless chromium.
    if benchboot_tests::browser::require_chromium("qemu_smoke") {
        let pages = tempfile::tempdir().unwrap();
        crate::browser::check_report_page(&r, pages.path());
    }

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
