//! QEMU tiers beyond the Pi Zero W smoke test: each board's real image (kernel, DTB and
//! initramfs taken from its card, DTB fix-ups in a QEMU-only copy) boots in the QEMU
//! machine closest to it, PID 1 runs the short QEMU plan (`qemu-short`: the QEMU plan
//! over 5 block sizes, as the main job; qemu_virt runs all 18) on the emulated card and serves
//! the results over QEMU's usb-net / virtio-net, `benchboot fetch` gets them.
//!
//! | test | board | machine | kernel | console |
//! |---|---|---|---|---|
//! | `rpi_1b_…` | rpi-1b | `raspi1ap` (Pi 1 A+, same BCM2835) | rpi (armel) | ttyAMA0, first serial |
//! | `rpi_2b_…` | rpi-2b | `raspi2b` | armmp: sdhost, dwc2 as modules | ttyAMA0, first serial |
//! | `rpi_3b_…` | rpi-3b | `raspi3b` | arm64 | ttyS1, second serial |
//! | `rpi_4b_…` | rpi-4b | `raspi4b` (QEMU ≥ 9) | arm64, adapted DTB | ttyAMA0 (QEMU only) |
//! | `qemu_virt_armv7_…` | qemu-virt-armv7 | `virt -cpu cortex-a7` | armmp, virtio | ttyAMA0 |
//!
//! Tests of this file run in parallel: only one QEMU holds 127.0.0.1:18080, the others
//! forward a free port; each is fetched by address. Structure only, never speed.

use std::process::Command;
use std::time::{Duration, Instant};

use benchboot_image::layout::{self, Role};
use benchboot_image::plans::QEMU_SHORT;
use benchboot_results::counters::NetDirection;
use benchboot_results::RunResults;
use benchboot_tests::{checks, QemuSlot};
use xtask::qemu::{Options, Run};

/// Generous: two tiers share the 2 cores of CI (the slowest, rpi-2b, is ready ~5 min
/// after QEMU starts when alone).
const TIMEOUT: Duration = Duration::from_secs(1800);

/// Boots `board` and checks what every tier must show; returns the slot still held (the
/// caller's own checks read QEMU's files). `None` when this QEMU lacks the machine
/// (raspi4b needs QEMU 9+: `cargo xtask setup --tests` installs 10), which fails under CI.
fn tier(
    board: &str,
    machine: &str,
    cores: u32,
    pages: &[&str],
) -> Option<(QemuSlot, Run, RunResults)> {
    let slot = benchboot_tests::qemu_slot(module_path!());
    let started = Instant::now();
    let b = xtask::load_board(board).unwrap();
    let q = b.qemu.as_ref().expect("a [qemu] section");
    if !benchboot_tests::require_machine(board, &q.system, &q.machine) {
        return None;
    }
    let opts = Options {
        plan: QEMU_SHORT.into(),
        ..Options::new(TIMEOUT)
    };
    let run = xtask::qemu::run_with(&b, &opts).unwrap_or_else(|e| panic!("{board}: {e:#}"));
    checks::report_timings(board, &run, started);
    let r = checks::fetched(&run);
    checks::assert_emulated_run_of(&r, board, machine);
    checks::assert_storage_complete(&r);
    checks::assert_device_steps(&r, &b.disk);
    checks::assert_census_only_pid1(&r);
    // Every memory kernel of the CPU ran (NEON on the Cortex-A7 of rpi-2b and
    // qemu-virt-armv7, only ARMv6 and VFP ones on the ARM1176), on each core and all.
    checks::assert_memory(&r, &kernels(machine), cores, pages);
    checks::assert_console_protocol(&run, &r);
    let layout = layout::plan(&layout::Spec::default()).unwrap();
    checks::assert_fetched_matches_card(&run, &r, &layout);
    checks::assert_results_partition_clean(&run.sd_card, &layout);
    // The results link is the emulated NIC, no gadget (these machines have no UDC).
    assert_eq!(r.plan.network.interface, "eth0");
    assert!(r.plan.network.gadget.is_none() && r.network.links.is_empty());
    Some((slot, run, r))
}

/// The memory kernels a build for `machine` (`uname -m`) has, in the engine's order
/// (crates/memory/src/kernels.rs), all of which QEMU's model of the board's core runs:
/// the ARM1176 has VFP and no NEON, the Cortex-A7 both, AArch64 cores ASIMD.
fn kernels(machine: &str) -> Vec<&'static str> {
    let mut k = vec!["libc-memcpy", "libc-memset", "read-u64"];
    match machine {
        "armv6l" | "armv7l" => {
            k.extend([
                "arm-ldm-stm",
                "arm-vldm-vstm",
                "arm-stm-fill",
                "arm-strd-fill",
            ]);
            if machine == "armv7l" {
                k.extend(["neon-vld1-vst1", "neon-vst1-fill"]);
            }
        }
        "aarch64" => k.extend([
            "a64-ldp-stp",
            "a64-ld1-st1",
            "a64-ldp-stnp",
            "a64-stp-fill",
            "a64-st1-fill",
            "a64-stnp-fill",
        ]),
        other => panic!("no kernel list for {other}"),
    }
    k
}

fn has_module(r: &RunResults, name: &str) -> bool {
    r.plan.modules.iter().any(|m| m == name)
}

#[test]
fn rpi_1b_boots_in_raspi1ap_and_serves_results() {
    let (_slot, _, r) = tier("rpi-1b", "armv6l", 1, &["base"]).unwrap();
    // The rpi flavour has sdhost and dwc2 built in: only the results link's module.
    assert!(has_module(&r, "cdc_ether"), "{:?}", r.plan.modules);
    assert!(!has_module(&r, "dwc2"), "{:?}", r.plan.modules);
}

#[test]
fn rpi_2b_boots_in_raspi2b_with_sdhost_and_dwc2_as_modules() {
    let (_slot, _, r) = tier("rpi-2b", "armv7l", 4, &["base"]).unwrap();
    // armmp: the card is reached through sdhost (bcm2835) and usb-net through dwc2,
    // both loaded by PID 1; phy-generic before dwc2 (no 10 s deferred probe).
    for m in ["bcm2835", "sdhci_iproc", "phy_generic", "dwc2", "cdc_ether"] {
        assert!(has_module(&r, m), "{m} not loaded: {:?}", r.plan.modules);
    }
    let pos = |m: &str| r.plan.modules.iter().position(|x| x == m).unwrap();
    assert!(pos("phy_generic") < pos("dwc2"), "{:?}", r.plan.modules);
}

#[test]
fn rpi_3b_boots_in_raspi3b_on_the_second_serial() {
    // The ready line was read from QEMU's second -serial (the mini-UART, ttyS1).
    let (_slot, run, r) = tier("rpi-3b", "aarch64", 4, &["base", "huge"]).unwrap();
    assert!(has_module(&r, "dwc2") && has_module(&r, "bcm2835"));
    assert_firmware_facts_through_vcio(&r);
    assert_usb_adapter_on_a_lan(&run, &r);
}

/// modules.vcio: benchboot_vcio.ko gives PID 1 `/dev/vcio` on Debian's kernel, so the
/// firmware's facts come from the mailbox. QEMU's property channel
/// (hw/misc/bcm2835_property.c, QEMU 9.0+) answers GET_THROTTLED with 0 and
/// GET_CLOCK_RATE with 700 MHz for the ARM clock; GET_CLOCK_MEASURED (0x00030047) it
/// marks answered with no value, so the measured clocks stay unavailable.
fn assert_firmware_facts_through_vcio(r: &RunResults) {
    use benchboot_results::Reading;
    assert!(has_module(r, "benchboot_vcio"), "{:?}", r.plan.modules);
    let h = &r.health.first().expect("health snapshots").before;
    assert_eq!(
        h.arm_set_hz,
        Reading::ok(700_000_000, "mailbox:GET_CLOCK_RATE(ARM)")
    );
    assert_eq!(h.throttled.source(), Some("mailbox:GET_THROTTLED"), "{h:?}");
    assert_eq!(h.throttled.value().map(|t| t.raw), Some(0), "{h:?}");
    let Reading::Unavailable { reason } = &h.arm_measured_hz else {
        panic!("QEMU has no GET_CLOCK_MEASURED: {h:?}")
    };
    assert!(reason.contains("0x00030047"), "{reason}");
}

/// raspi3b's usb-net measured as a USB Ethernet adapter (qemu.wired = "usb-net-lan"):
/// found by its driver, a lease from QEMU's user network (slirp's DHCP server at
/// 10.0.2.2), the peer on this machine behind the guest forward, TCP both ways, round
/// trips and HTTP both ways; what the kernel says the link is; QEMU's usb-net is a
/// full-speed (12 Mbit/s) USB device, so the run carries the full-speed warning.
fn assert_usb_adapter_on_a_lan(run: &Run, r: &RunResults) {
    let tests = r.plan.network.tests.as_ref().expect("network tests");
    let w = match r.network.wired.as_slice() {
        [w] => w,
        other => panic!("one wired link expected: {other:?}"),
    };
    assert_eq!(
        (w.name.as_str(), w.kind.as_str()),
        ("usb-eth", "usb-adapter")
    );
    assert_eq!(w.facts.driver.as_deref(), Some("cdc_ether"), "{w:?}");
    assert!(w.facts.carrier, "{w:?}");
    let usb = w.facts.usb.as_ref().expect("USB facts of the adapter");
    assert_eq!(usb.speed, "12", "{usb:?}");
    assert!(!usb.path.is_empty(), "{usb:?}");
    assert_eq!(w.topology, "lan");
    assert_eq!(w.board_address, [10, 0, 2, 15]);
    assert_eq!(w.dhcp_server, Some([10, 0, 2, 2]));
    assert_eq!(w.peer_address, Some([10, 0, 2, 100]));
    assert_eq!(w.peer_found_by.as_deref(), Some("plan"));
    let warned = r.events.iter().any(|e| {
        e.step == "network.wired.usb-eth" && e.message.contains("enumerated at 12 Mbit/s")
    });
    assert!(warned, "no full-speed warning: {:?}", r.events);
    for &streams in &tests.streams {
        for dir in [NetDirection::BoardToHost, NetDirection::HostToBoard] {
            let t = r
                .network
                .throughput
                .iter()
                .find(|t| t.link == "usb-eth" && t.streams == streams && t.direction == dir)
                .unwrap_or_else(|| panic!("no usb-eth {dir:?} x{streams} run"));
            assert!(t.bytes > 0 && !t.intervals.is_empty(), "{t:?}");
            assert_eq!(t.intervals.iter().map(|i| i.bytes).sum::<u64>(), t.bytes);
            assert!(t.board_cpu.total() > 0 && t.host_cpu.total() > 0, "{t:?}");
        }
    }
    let lat = r
        .network
        .latency
        .iter()
        .find(|l| l.link == "usb-eth")
        .unwrap();
    assert_eq!(lat.rtt_ns.len(), tests.latency_samples as usize);
    for dir in [NetDirection::BoardToHost, NetDirection::HostToBoard] {
        let h = r
            .network
            .http
            .iter()
            .find(|h| h.link == "usb-eth" && h.direction == dir)
            .unwrap_or_else(|| panic!("no usb-eth HTTP {dir:?}"));
        assert_eq!(h.bytes, tests.http_bytes, "{h:?}");
        assert!(h.board_cpu.total() > 0 && h.host_cpu.total() > 0, "{h:?}");
    }
    // Counters around each of the 2 x streams TCP runs, the round trips and both GETs.
    assert_eq!(
        w.counters.len(),
        tests.streams.len() * 2 + 1 + 2,
        "{:?}",
        w.counters
    );
    assert!(w
        .counters
        .iter()
        .all(|c| c.after.rx_bytes > c.before.rx_bytes));
    // What `cargo xtask qemu --board rpi-3b` prints: the link's table with its facts.
    let shown = std::process::Command::new(xtask::qemu::build_host_tool(false).unwrap())
        .arg("show")
        .arg(&run.results)
        .env("COLUMNS", "10000")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("LINK BELOW ITS RATING: usb-eth"), "{text}");
    assert!(text.contains("driver cdc_ether"), "{text}");
    assert!(text.contains("USB 12M at"), "{text}");
}

#[test]
fn rpi_4b_boots_in_raspi4b_with_a_qemu_only_dtb() {
    let Some((_slot, run, _)) = tier("rpi-4b", "aarch64", 4, &["base", "huge"]) else {
        return;
    };
    // The card keeps the real DTB (USB-C port as peripheral, emmc2 on); only QEMU's copy
    // is adapted (dwc2 as host for usb-net, emmc2 and the unmodelled blocks off).
    let board = xtask::load_board("rpi-4b").unwrap();
    let name = board.kernel.dtb.as_deref().unwrap();
    let layout = layout::plan(&layout::Spec::default()).unwrap();
    let card_dtb = tempfile::NamedTempFile::new().unwrap();
    let bytes =
        xtask::image::read_fat_file(&run.image, layout.part(Role::Boot).unwrap(), name).unwrap();
    std::fs::write(card_dtb.path(), bytes).unwrap();
    let qemu_dtb = xtask::qemu::work_dir(&board).join(name);
    let get = |file: &std::path::Path, node: &str, prop: &str| {
        let out = Command::new("fdtget")
            .args(["-t", "s"])
            .arg(file)
            .args([node, prop])
            .output()
            .expect("fdtget (device-tree-compiler)");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let usb = ("/soc/usb@7e980000", "dr_mode");
    let emmc2 = ("/emmc2bus/mmc@7e340000", "status");
    assert_eq!(get(card_dtb.path(), usb.0, usb.1), "peripheral");
    assert_eq!(get(&qemu_dtb, usb.0, usb.1), "host");
    assert_eq!(get(card_dtb.path(), emmc2.0, emmc2.1), "okay");
    assert_eq!(get(&qemu_dtb, emmc2.0, emmc2.1), "disabled");
    let console = std::fs::read_to_string(&run.console_log).unwrap();
    assert!(console.contains("benchboot: ready serving"), "{console}");
}

#[test]
fn qemu_virt_armv7_boots_in_virt_cortex_a7() {
    let (_slot, run, r) = tier("qemu-virt-armv7", "armv7l", 2, &["base"]).unwrap();
    assert!(has_module(&r, "virtio_blk") && has_module(&r, "virtio_net"));
    checks::assert_card_check_genuine(&r, &std::fs::read_to_string(&run.console_log).unwrap());
}
