//! The hardware watchdog in QEMU: `qemu-virt-arm64` with an Intel 6300ESB watchdog on
//! its PCIe bus (`-device i6300esb`, the guest's `i6300esb` driver), plan `watchdog`:
//! PID 1 arms `/dev/watchdog` with a 5 s timeout, runs a tiny storage sweep, then its
//! main sequence goes silent on purpose. After the stall limit (worker limit 2 s + the
//! 5 s timeout) the feeding thread stops, the watchdog fires and QEMU ends
//! (`-action watchdog=poweroff`). The card holds the run, with the watchdog's timeout.

use std::time::{Duration, Instant};

use benchboot_results::{Reading, RunResults};
use xtask::qemu::{until_exit, Options};

#[test]
fn a_silent_pid1_is_reset_by_the_hardware_watchdog() {
    let _slot = benchboot_tests::qemu_slot(module_path!());
    let started = Instant::now();
    let board = xtask::load_board("qemu-virt-arm64").unwrap();
    let mut opts = Options::new(Duration::from_secs(300));
    opts.plan = "watchdog".into();
    opts.extra_args = ["-device", "i6300esb", "-action", "watchdog=poweroff"]
        .map(String::from)
        .to_vec();
    let e = until_exit(&board, &opts).unwrap();
    let console = std::fs::read_to_string(&e.console_log).unwrap();
    let at = |needle: &str| {
        console
            .find(needle)
            .unwrap_or_else(|| panic!("no `{needle}` in {}", e.console_log.display()))
    };
    // In this order: the run's end, the injected hang, the feeding stopped.
    let end = at("benchboot: end run=");
    let hang = at("benchboot: injected PID 1 hang");
    let starved = at("benchboot: watchdog: PID 1 silent for ");
    assert!(end < hang && hang < starved, "{console}");
    assert!(!console.contains(xtask::qemu::READY_MARKER), "{console}");
    assert!(e.status.success(), "QEMU's poweroff action: {:?}", e.status);

    let card = benchboot_card::read_results(&e.sd_card).unwrap();
    let r = RunResults::from_json(&card.text).unwrap();
    assert!(r.complete, "{:?}", r.events);
    assert_eq!(
        r.system.watchdog_timeout_s,
        Reading::ok(5, "/dev/watchdog"),
        "the driver took the plan's timeout"
    );
    eprintln!(
        "watchdog: PID 1 {:.1} s, QEMU ended {:.1} s after it started; whole test {:.1} s",
        e.boot_to_init.as_secs_f64(),
        e.exited_at.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
}
