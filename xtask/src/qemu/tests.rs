//! The QEMU runner's pure helpers: the kernel command line, the card stand-in, ports.

use super::*;

#[test]
fn append_joins_card_cmdline_board_extras_and_plan() {
    assert_eq!(
        append("console=ttyS1,115200 rootwait\n", "initcall_blacklist=x"),
        "console=ttyS1,115200 rootwait initcall_blacklist=x benchboot.plan=qemu"
    );
    assert_eq!(append("a", ""), "a benchboot.plan=qemu");
}

#[test]
fn card_stand_in_takes_the_qemu_loader_dtb_fixups_and_command_line() {
    let board = crate::load_board("bananapi-m1").unwrap();
    let s = card_stand_in(&board).unwrap();
    assert_eq!(s.name, "bananapi-m1", "results must name the board");
    // The R40's DTB is not the board's: its [hardware] paths are not checked there.
    assert!(board.hardware.is_some() && s.hardware.is_none());
    assert_eq!(
        s.loader.as_ref().unwrap().dir,
        "usr/lib/u-boot/Bananapi_M2_Ultra"
    );
    assert_eq!(
        s.kernel.dtb.as_deref(),
        Some("sun8i-r40-bananapi-m2-ultra.dtb")
    );
    // The A20 DTB's dr_mode fix-up does not apply to the R40 DTB: only QEMU's.
    let q = board.qemu.as_ref().unwrap();
    assert_eq!(s.kernel.dtb_fixups, q.dtb_fixups);
    assert!(s.kernel.dtb_fixups.iter().all(|f| f.node() == "/aliases"));
    assert_eq!(
        s.boot.cmdline,
        format!("{} {} {QEMU_PLAN_PARAM}", board.boot.cmdline, q.append)
    );
    let conf = image::extlinux_conf(&s, s.kernel.dtb.as_deref());
    assert!(
        conf.contains(&format!("\tappend {}\n", s.boot.cmdline)),
        "{conf}"
    );
    // Applied: the stand-in's own [qemu] replaces and appends nothing more.
    let sq = s.qemu.as_ref().unwrap();
    assert!(sq.loader.is_none() && sq.dtb.is_none() && sq.dtb_fixups.is_empty());
    assert!(sq.append.is_empty());
    assert!(card_image_path(&board).ends_with("qemu/bananapi-m1/card.img"));
    // A board without [qemu] has no stand-in.
    let mut none = board.clone();
    none.qemu = None;
    assert!(card_stand_in(&none).is_err());
}

#[test]
fn the_main_job_boots_the_short_plan_where_qemu_boots_the_kernel() {
    let t = Duration::from_secs(1);
    let zero = crate::load_board("rpi-zero-w").unwrap();
    assert_eq!(Options::main_job(&zero, t).plan, "qemu-short");
    // The card's extlinux.conf names the `qemu` plan: a card boot keeps it.
    let bpi = crate::load_board("bananapi-m1").unwrap();
    assert_eq!(Options::main_job(&bpi, t).plan, "qemu");
    // Every other caller keeps the whole QEMU plan.
    assert_eq!(Options::new(t).plan, "qemu");
}
