//! The Banana Pi M1's U-Boot route booted for real: QEMU has no A20 machine, but its
//! `bpim2u` (Banana Pi M2 Ultra, Allwinner R40) runs the sunxi boot ROM. A QEMU-only copy
//! of the card with the M2 Ultra's SPL at 8 KiB and the R40 DTB boots boot ROM → SPL →
//! U-Boot → extlinux.conf → kernel → PID 1, with no `-kernel`; the QEMU plan's storage
//! sweep runs on the emulated SD card and, with no network, the harness reads the
//! results from the card's results partition. Structure only, never speed.

use std::time::Duration;

use benchboot_image::layout::{self, Role};
use benchboot_plan::Filesystem;
use benchboot_tests::checks;

#[test]
fn bananapi_m1_boots_through_spl_u_boot_and_extlinux_in_bpim2u() {
    let _slot = benchboot_tests::qemu_slot(module_path!());
    let board = xtask::load_board("bananapi-m1").unwrap();
    let q = board.qemu.as_ref().unwrap();
    if !benchboot_tests::require_machine("bananapi-m1 in bpim2u", &q.system, &q.machine) {
        return;
    }
    let t0 = std::time::Instant::now();
    let run = xtask::qemu::run(&board, Duration::from_secs(1200)).unwrap();
    eprintln!(
        "bpim2u: init {:.1} s, ready {:.1} s after QEMU started; whole run {:.1} s",
        run.boot_to_init.as_secs_f64(),
        run.boot_to_ready.as_secs_f64(),
        t0.elapsed().as_secs_f64()
    );
    assert!(!run.fetched, "no network: the results come from the card");
    let card = run
        .qemu_card
        .as_ref()
        .expect("a QEMU-only copy of the card");
    assert_ne!(card.image, run.image);

    // The console: boot ROM → SPL → U-Boot → distro boot's extlinux label → kernel → PID 1.
    let console = std::fs::read_to_string(&run.console_log).unwrap();
    let at = |needle: &str| {
        console
            .find(needle)
            .unwrap_or_else(|| panic!("no {needle:?} on the console:\n{console}"))
    };
    let order = [
        at("U-Boot SPL 2023.01"),
        at("Trying to boot from MMC1"),
        at("U-Boot 2023.01"),
        at("CPU:   Allwinner R40"),
        at("Found /extlinux/extlinux.conf"),
        at("1:\tbenchboot"),
        at("append: console=ttyS0,115200 "),
        at("Retrieving file: /sun8i-r40-bananapi-m2-ultra.dtb"),
        at("Starting kernel ..."),
        at("benchboot: start run="),
        at("benchboot: ready"),
    ];
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "{order:?}\n{console}"
    );
    let append = console[order[6]..].lines().next().unwrap();
    assert!(append.contains(xtask::qemu::QEMU_PLAN_PARAM), "{append}");

    // The document PID 1 left on the card's results partition: the same checks as
    // every tier (tests/src/checks.rs), then what is particular to this route.
    let r = checks::fetched(&run);
    checks::assert_emulated_run_of(&r, "bananapi-m1", "armv7l");
    checks::assert_storage_complete(&r);
    checks::assert_device_steps(&r, "mmcblk0");
    checks::assert_census_only_pid1(&r);
    checks::assert_console_protocol(&run, &r);
    assert!(!r.plan.network.has_link(), "{:?}", r.plan.network);
    let targets: Vec<(&str, Filesystem)> = r
        .plan
        .storage
        .targets
        .iter()
        .map(|t| (t.device.as_str(), t.filesystem))
        .collect();
    assert_eq!(
        targets,
        [
            ("/dev/mmcblk0p5", Filesystem::Ext2),
            ("/dev/mmcblk0p6", Filesystem::Ext3),
            ("/dev/mmcblk0p7", Filesystem::Ext4),
            ("/dev/mmcblk0p8", Filesystem::Vfat),
            ("/dev/mmcblk0p9", Filesystem::Raw)
        ]
    );

    // The results partition QEMU wrote is consistent, and the boot partition of the
    // QEMU-only copy passes fsck as built.
    let layout = layout::plan(&layout::Spec::default()).unwrap();
    checks::assert_results_partition_clean(&run.sd_card, &layout);
    let p1 =
        benchboot_tests::extract_partition(&card.image, layout.part(Role::Boot).unwrap()).unwrap();
    benchboot_tests::check_tool("fsck.vfat", &["-n"], p1.path()).unwrap();
}
