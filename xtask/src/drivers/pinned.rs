//! The driver-chain check against the pinned kernels and DTBs themselves (fetched and
//! unpacked like `cargo xtask boards` does).

use super::*;

fn board(name: &str) -> Board {
    crate::load_board(name).unwrap()
}

fn problems(b: &Board) -> Vec<String> {
    let lock = crate::packages::Lock::load_repo().unwrap();
    let (root, _) = crate::packages::unpacked(&lock, &b.kernel.package).unwrap();
    let firmware: Vec<String> = crate::radio::files(b, &lock)
        .unwrap()
        .into_iter()
        .map(|f| f.path)
        .collect();
    check_board(b, &root, &firmware).unwrap().unwrap().problems
}

/// `b` with module `m` taken out of every hardware list (`modules.load`, gadget,
/// Ethernet, USB Ethernet, WiFi, extra storage), `-` and `_` alike.
pub(super) fn without_module(mut b: Board, m: &str) -> Board {
    let m = benchboot_kmod::canonical(m);
    let keep = |v: &mut Vec<String>| v.retain(|x| benchboot_kmod::canonical(x) != m);
    keep(&mut b.modules);
    b.gadget.iter_mut().for_each(|g| keep(&mut g.modules));
    b.ethernet.iter_mut().for_each(|e| keep(&mut e.modules));
    b.usb_ethernet.iter_mut().for_each(|u| keep(&mut u.modules));
    b.wifi.iter_mut().for_each(|w| keep(&mut w.modules));
    b.extra_storage
        .iter_mut()
        .for_each(|e| keep(&mut e.modules));
    b
}

fn one_naming(ps: &[String], words: &[&str]) {
    assert!(
        ps.iter().any(|p| words.iter().all(|w| p.contains(w))),
        "no problem names {words:?}: {ps:#?}"
    );
}

/// Every hardware board's image passes, and the QEMU tiers have nothing to check.
#[test]
fn every_hardware_board_passes() {
    for b in crate::boards::all().unwrap() {
        let name = b.name.clone();
        if b.hardware.is_none() {
            assert!(b.kernel.dtb.is_none() || b.loader.is_none(), "{name}");
            continue;
        }
        assert_eq!(problems(&b), Vec::<String>::new(), "{name}");
    }
}

/// The rows of the review the check must catch, each as the board file had it.
#[test]
fn the_reviewed_gaps_fail_naming_node_and_module() {
    // Pi 4: emmc2's two regulators.
    let ps = problems(&without_module(board("rpi-4b"), "gpio-regulator"));
    one_naming(
        &ps,
        &[
            "hardware.card",
            "/sd_io_1v8_reg",
            "regulator-gpio",
            "gpio_regulator",
            "vqmmc-supply",
        ],
    );
    let ps = problems(&without_module(board("rpi-4b"), "fixed"));
    one_naming(&ps, &["/sd_vcc_reg", "regulator-fixed", "vmmc-supply"]);
    // BeagleBone Black: the console's name, and USB0's VBUS interrupt on the PMIC.
    let mut b = board("beaglebone-black");
    b.boot.console = "ttyS0,115200".into();
    one_naming(
        &problems(&b),
        &["boot.console `ttyS0`", "SERIAL_OMAP=y", "use console=ttyO0"],
    );
    let ps = problems(&without_module(board("beaglebone-black"), "tps65217"));
    one_naming(
        &ps,
        &[
            "hardware.udc",
            "tps@24",
            "ti,tps65217",
            "interrupts-extended",
        ],
    );
    // Banana Pi: the AXP209 behind the USB PHY, its I2C bus, its regulators' cell.
    let ps = problems(&without_module(board("bananapi-m1"), "axp20x_usb_power"));
    one_naming(
        &ps,
        &[
            "hardware.udc",
            "pmic@34/usb-power",
            "axp20x_usb_power",
            "usb0_vbus_power-supply",
        ],
    );
    let ps = problems(&without_module(board("bananapi-m1"), "i2c-mv64xxx"));
    one_naming(&ps, &["/soc/i2c@1c2ac00", "i2c_mv64xxx"]);
    let ps = problems(&without_module(board("bananapi-m1"), "axp20x-regulator"));
    one_naming(
        &ps,
        &["hardware.cpu", "pmic@34/regulators", "axp20x_regulator"],
    );
    let ps = problems(&without_module(board("bananapi-m1"), "sun4i-ts"));
    one_naming(&ps, &["hardware.thermal", "sun4i_ts"]);
    let ps = problems(&without_module(board("bananapi-m1"), "axp20x_adc"));
    one_naming(&ps, &["hardware.also", "pmic@34/adc", "axp20x_adc"]);
}

/// What only the walk below a root and the companion rule see: the Pi 4's VL805 reset
/// (the PCIe endpoint's `resets`), the BeagleBone Black's port PHY (`phys` of a port of
/// the switch) and MDIO bus (a child of the switch), the Banana Pi's OHCI companions.
#[test]
fn children_and_companions_fail_naming_node_and_module() {
    let ps = problems(&without_module(board("rpi-4b"), "reset-raspberrypi"));
    one_naming(
        &ps,
        &[
            "hardware.usb-host",
            "/soc/firmware/reset",
            "raspberrypi,firmware-reset",
            "reset_raspberrypi",
            "/scb/pcie@7d500000/pci@0,0/usb@0,0 resets",
        ],
    );
    let ps = problems(&without_module(board("beaglebone-black"), "phy-gmii-sel"));
    one_naming(
        &ps,
        &[
            "hardware.ethernet",
            "scm_conf@0/phy-gmii-sel",
            "ti,am3352-phy-gmii-sel",
            "switch@0/ethernet-ports/port@1 phys",
        ],
    );
    let ps = problems(&without_module(board("beaglebone-black"), "davinci_mdio"));
    one_naming(
        &ps,
        &[
            "hardware.ethernet",
            "switch@0/mdio@1000",
            "davinci_mdio",
            "switch@0 child",
        ],
    );
    let ps = problems(&without_module(board("bananapi-m1"), "ohci-platform"));
    one_naming(
        &ps,
        &[
            "hardware.usb-host",
            "/soc/usb@1c14400",
            "generic-ohci",
            "ohci_platform",
        ],
    );
    one_naming(&ps, &["/soc/usb@1c1c400", "ohci_platform"]);
    // The board file as it was: two EHCI roots, their OHCIs unnamed.
    let mut b = board("bananapi-m1");
    let hw = b.hardware.as_mut().unwrap();
    hw.roots.retain(|(_, n)| !n.ends_with("400"));
    let ps = problems(&without_module(b, "ohci-platform"));
    one_naming(
        &ps,
        &[
            "hardware.usb-host: /soc/usb@1c14400",
            "same phys as /soc/usb@1c14000",
        ],
    );
    one_naming(&ps, &["/soc/usb@1c1c400", "same phys as /soc/usb@1c1c000"]);
}

/// Any module a chain needs, taken away, fails naming that module; any provider
/// disabled fails naming the node.
#[test]
fn removing_any_needed_module_or_disabling_a_provider_fails() {
    let lock = crate::packages::Lock::load_repo().unwrap();
    let mut tried = 0;
    for b in crate::boards::all().unwrap() {
        let name = b.name.clone();
        if b.hardware.is_none() {
            continue;
        }
        let (root, _) = crate::packages::unpacked(&lock, &b.kernel.package).unwrap();
        let flavour = Flavour::load(&root, &b.kernel.release).unwrap();
        let dtb = hardware_dtb(&b, &root).unwrap().unwrap();
        let carried = flavour.carried(&hardware_modules(&b)).unwrap();
        let yes = |_: &str| true;
        let report = check(&b, &dtb, &flavour, &carried, &yes).unwrap();
        assert!(report.problems.is_empty(), "{name}: {:#?}", report.problems);
        for l in &report.links {
            let Ok(Served::Module { module, .. }) = &l.verdict else {
                continue;
            };
            let mut less = carried.clone();
            less.remove(module);
            let ps = check(&b, &dtb, &flavour, &less, &yes).unwrap().problems;
            one_naming(&ps, &[&l.node, module, "does not load"]);
            tried += 1;
        }
        // A provider disabled: the first node reached through a reference.
        let provider = report
            .links
            .iter()
            .find(|l| l.via.ends_with("-supply") || l.via.ends_with(" phys"))
            .or_else(|| {
                report.links.iter().find(|l| {
                    l.via != "root" && !l.via.ends_with("parent") && !l.via.ends_with(" child")
                })
            })
            .unwrap();
        let fix = benchboot_board::DtbFixup::Set {
            node: provider.node.clone(),
            property: "status".into(),
            value: "disabled".into(),
        };
        let off = crate::dtb::apply_dtb_fixups(&dtb, &[fix]).unwrap();
        let ps = check(&b, &off, &flavour, &carried, &yes).unwrap().problems;
        one_naming(&ps, &[&provider.node, "disabled"]);
    }
    assert!(tried >= 20, "only {tried} module links tried");
}
