//! The chain walk on small hand-built DTBs.

use super::*;
use crate::fdt::tests::dtb;

fn ph(n: u8) -> [u8; 4] {
    [0, 0, 0, n]
}

/// A Pi 4-like card host: emmc2 with two regulators, one on a firmware GPIO
/// expander, a pin group on the GPIO controller.
fn pi4ish(reg_status: &'static [u8]) -> Tree {
    let gpios: &[u8] = &[0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0];
    let blob = dtb(&[
        (0, "", &[("compatible", b"raspberrypi,4-model-b\0")]),
        (1, "soc", &[("compatible", b"simple-bus\0")]),
        (
            2,
            "gpio@7e200000",
            &[
                ("compatible", b"brcm,bcm2711-gpio\0"),
                ("phandle", &ph(5)),
                ("#gpio-cells", &[0, 0, 0, 2]),
            ],
        ),
        (3, "emmc_pins", &[("phandle", &ph(6))]),
        (
            2,
            "firmware",
            &[
                ("compatible", b"raspberrypi,bcm2835-firmware\0simple-mfd\0"),
                ("phandle", &ph(7)),
            ],
        ),
        (
            3,
            "gpio",
            &[
                ("compatible", b"raspberrypi,firmware-gpio\0"),
                ("phandle", &ph(3)),
                ("#gpio-cells", &[0, 0, 0, 2]),
            ],
        ),
        (1, "emmc2bus", &[("compatible", b"simple-bus\0")]),
        (
            2,
            "mmc@7e340000",
            &[
                ("compatible", b"brcm,bcm2711-emmc2\0"),
                ("vqmmc-supply", &ph(1)),
                ("vmmc-supply", &ph(2)),
                ("pinctrl-0", &ph(6)),
            ],
        ),
        (
            1,
            "sd_io_1v8_reg",
            &[
                ("compatible", b"regulator-gpio\0"),
                ("phandle", &ph(1)),
                ("gpios", gpios),
                ("status", reg_status),
            ],
        ),
        (
            1,
            "sd_vcc_reg",
            &[("compatible", b"regulator-fixed\0"), ("phandle", &ph(2))],
        ),
    ]);
    Tree::parse(&blob).unwrap()
}

fn drivers() -> Drivers {
    let mut d = Drivers::default();
    for c in [
        "brcm,bcm2711-gpio",
        "raspberrypi,bcm2835-firmware",
        "raspberrypi,firmware-gpio",
    ] {
        d.builtin.insert(c.into());
    }
    d.modules
        .insert("brcm,bcm2711-emmc2".into(), vec!["sdhci_iproc".into()]);
    d.modules
        .insert("regulator-gpio".into(), vec!["gpio_regulator".into()]);
    d.modules
        .insert("regulator-fixed".into(), vec!["reg_fixed_voltage".into()]);
    d
}

fn carried(ms: &[&str]) -> BTreeSet<String> {
    ms.iter().map(|s| s.to_string()).collect()
}

fn gaps(links: &[Link]) -> Vec<(String, Gap)> {
    links
        .iter()
        .filter_map(|l| l.verdict.clone().err().map(|g| (l.node.clone(), g)))
        .collect()
}

#[test]
fn the_pi4_card_needs_both_regulators() {
    let t = pi4ish(b"okay\0");
    let roots = [("card".to_string(), "/emmc2bus/mmc@7e340000".to_string())];
    // The image of before: only the SD host's module.
    let links = walk(&t, &roots, &drivers(), &carried(&["sdhci_iproc"]), &[], &[]);
    assert_eq!(
        gaps(&links),
        [
            (
                "/sd_io_1v8_reg".to_string(),
                Gap::NotCarried {
                    modules: vec!["gpio_regulator".into()],
                    compatible: "regulator-gpio".into()
                }
            ),
            (
                "/sd_vcc_reg".to_string(),
                Gap::NotCarried {
                    modules: vec!["reg_fixed_voltage".into()],
                    compatible: "regulator-fixed".into()
                }
            ),
        ]
    );
    let reg = links.iter().find(|l| l.node == "/sd_io_1v8_reg").unwrap();
    assert_eq!(reg.via, "/emmc2bus/mmc@7e340000 vqmmc-supply");
    // The regulator's GPIO is on the firmware expander, whose parent is the firmware.
    let exp = links
        .iter()
        .find(|l| l.node == "/soc/firmware/gpio")
        .unwrap();
    assert_eq!(exp.via, "/sd_io_1v8_reg gpios");
    assert_eq!(
        exp.verdict,
        Ok(Served::BuiltIn("raspberrypi,firmware-gpio".into()))
    );
    assert!(links
        .iter()
        .any(|l| l.node == "/soc/firmware" && l.via == "/soc/firmware/gpio parent"));
    // The pin group is served by its controller.
    assert!(links
        .iter()
        .any(|l| l.node == "/soc/gpio@7e200000" && l.via.ends_with("pinctrl-0")));

    let links = walk(
        &t,
        &roots,
        &drivers(),
        &carried(&["sdhci_iproc", "gpio_regulator", "reg_fixed_voltage"]),
        &[],
        &[],
    );
    assert!(gaps(&links).is_empty(), "{links:#?}");
}

#[test]
fn a_disabled_provider_and_a_missing_root_are_gaps() {
    let t = pi4ish(b"disabled\0");
    let roots = [
        ("card".to_string(), "/emmc2bus/mmc@7e340000".to_string()),
        ("udc".to_string(), "/soc/usb@7e980000".to_string()),
    ];
    let all = carried(&["sdhci_iproc", "gpio_regulator", "reg_fixed_voltage"]);
    let links = walk(&t, &roots, &drivers(), &all, &[], &[]);
    assert_eq!(
        gaps(&links),
        [
            ("/soc/usb@7e980000".to_string(), Gap::NoSuchNode),
            (
                "/sd_io_1v8_reg".to_string(),
                Gap::Disabled {
                    at: "/sd_io_1v8_reg".into()
                }
            ),
        ]
    );
    // A waiver stops the walk there, with its reason.
    let w = [Waiver {
        node: "/sd_io_1v8_reg".into(),
        reason: "test".into(),
    }];
    let links = walk(&t, &roots[..1], &drivers(), &all, &w, &[]);
    assert!(gaps(&links).is_empty());
    assert!(!links.iter().any(|l| l.node == "/soc/firmware/gpio"));
}

#[test]
fn no_driver_and_no_driver_needed() {
    let d = drivers();
    let none = carried(&[]);
    assert_eq!(
        serve(&["acme,widget".into()], &d, &none),
        Err(Gap::NoDriver)
    );
    assert_eq!(
        serve(&["ethernet-phy-ieee802.3-c22".into()], &d, &none),
        Ok(Served::NoDriverNeeded("ethernet-phy-ieee802.3-c22".into()))
    );
    // The most specific compatible with a driver wins; built in beats a module.
    let mut d2 = d.clone();
    d2.builtin.insert("regulator-fixed".into());
    assert_eq!(
        serve(&["regulator-fixed".into()], &d2, &none),
        Ok(Served::BuiltIn("regulator-fixed".into()))
    );
}

#[test]
fn mfd_cells_named_by_the_board() {
    let blob = dtb(&[
        (0, "", &[("compatible", b"lemaker,bananapi\0")]),
        (1, "cpus", &[]),
        (
            2,
            "cpu@0",
            &[("compatible", b"arm,cortex-a7\0"), ("cpu-supply", &ph(9))],
        ),
        (
            1,
            "i2c@1c2ac00",
            &[("compatible", b"allwinner,sun7i-a20-i2c\0")],
        ),
        (2, "pmic@34", &[("compatible", b"x-powers,axp209\0")]),
        (3, "regulators", &[]),
        (4, "dcdc2", &[("phandle", &ph(9))]),
    ]);
    let t = Tree::parse(&blob).unwrap();
    let mut d = Drivers::default();
    d.builtin.insert("x-powers,axp209".into());
    d.builtin.insert("arm,cortex-a7".into());
    d.modules
        .insert("allwinner,sun7i-a20-i2c".into(), vec!["i2c_mv64xxx".into()]);
    let roots = [("cpufreq".to_string(), "/cpus/cpu@0".to_string())];
    let cell = [Cell {
        node: "/i2c@1c2ac00/pmic@34/regulators".into(),
        module: "axp20x-regulator".into(),
    }];
    let links = walk(&t, &roots, &d, &carried(&[]), &[], &cell);
    // Without the cell named, the PMIC's built-in MFD driver looks enough: the
    // board file must name it (and then the module must be carried).
    assert_eq!(
        gaps(&links),
        [
            (
                "/i2c@1c2ac00/pmic@34/regulators".to_string(),
                Gap::NotCarried {
                    modules: vec!["axp20x_regulator".into()],
                    compatible: "MFD cell of x-powers,axp209".into()
                }
            ),
            (
                "/i2c@1c2ac00".to_string(),
                Gap::NotCarried {
                    modules: vec!["i2c_mv64xxx".into()],
                    compatible: "allwinner,sun7i-a20-i2c".into()
                }
            ),
        ]
    );
}

#[test]
fn builtin_tables_are_found_in_an_image() {
    let mut img = vec![0xAAu8; 16];
    let mut entry = vec![0u8; 64];
    let mut compat = b"ti,omap3-uart".to_vec();
    compat.resize(128, 0);
    entry.extend(compat);
    entry.extend([1, 2, 3, 4, 5, 6, 7, 8]);
    img.extend(&entry);
    // An entry with a type (`{ .type = "serial", .compatible = "ns16550" }`).
    let mut typed = vec![0u8; 32];
    typed.extend(b"serial");
    typed.resize(64, 0);
    let mut compat = b"ns16550".to_vec();
    compat.resize(128, 0);
    typed.extend(compat);
    typed.extend([9; 8]);
    img.extend(&typed);
    // An earlycon_id after another's `setup` pointer: name[15] + name_term, then a
    // 128-byte compatible: not a driver.
    img.extend([0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe]);
    img.extend([0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe]);
    let mut early = [0x10u8, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe].to_vec();
    early.extend([0u8; 8]);
    let mut name = b"uart".to_vec();
    name.resize(16, 0);
    early.extend(name);
    let mut compat = b"ns16550a".to_vec();
    compat.resize(128, 0);
    early.extend(compat);
    img.extend(&early);
    img.extend(b"\0regulator-fixed\0notpadded");
    img.extend(vec![0x55; 200]);
    let found = builtin_compatibles(&img);
    assert!(found.contains("ti,omap3-uart"));
    assert!(found.contains("ns16550"));
    assert!(
        !found.contains("ns16550a"),
        "an earlycon entry is no driver"
    );
    assert!(!found.contains("regulator-fixed"));
}

/// A Pi 4's VL805 behind its PCIe bridge, and a BeagleBone Black's switch: what the
/// references below a root need (the endpoint's `resets`, a port's `phys` and its PHY's
/// MDIO bus), but not what a disabled child names.
#[test]
fn the_children_of_a_root_are_walked() {
    let blob = dtb(&[
        (0, "", &[("compatible", b"raspberrypi,4-model-b\0")]),
        (
            1,
            "firmware",
            &[("compatible", b"raspberrypi,bcm2835-firmware\0simple-mfd\0")],
        ),
        (
            2,
            "reset",
            &[
                ("compatible", b"raspberrypi,firmware-reset\0"),
                ("#reset-cells", &[0, 0, 0, 1]),
                ("phandle", &ph(1)),
            ],
        ),
        (
            1,
            "gmii-sel",
            &[
                ("compatible", b"ti,am3352-phy-gmii-sel\0"),
                ("#phy-cells", &[0, 0, 0, 2]),
                ("phandle", &ph(2)),
            ],
        ),
        (
            1,
            "unused-phy",
            &[("compatible", b"acme,phy\0"), ("phandle", &ph(4))],
        ),
        (1, "pcie", &[("compatible", b"brcm,bcm2711-pcie\0")]),
        (2, "pci@0,0", &[("device_type", b"pci\0")]),
        (3, "usb@0,0", &[("resets", &[0, 0, 0, 1, 0, 0, 0, 0])]),
        (3, "wifi@1", &[("compatible", b"pci14e4,43a0\0")]),
        (1, "switch", &[("compatible", b"ti,cpsw-switch\0")]),
        (2, "ethernet-ports", &[]),
        (
            3,
            "port@1",
            &[
                ("phys", &[0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1]),
                ("phy-handle", &ph(3)),
            ],
        ),
        (3, "port@2", &[("phys", &ph(4)), ("status", b"disabled\0")]),
        (2, "mdio", &[("compatible", b"ti,davinci_mdio\0")]),
        (3, "ethernet-phy@0", &[("phandle", &ph(3))]),
    ]);
    let t = Tree::parse(&blob).unwrap();
    let mut d = Drivers::default();
    for c in ["raspberrypi,bcm2835-firmware", "brcm,bcm2711-pcie"] {
        d.builtin.insert(c.into());
    }
    for (c, m) in [
        ("raspberrypi,firmware-reset", "reset_raspberrypi"),
        ("ti,am3352-phy-gmii-sel", "phy_gmii_sel"),
        ("ti,cpsw-switch", "ti_cpsw_new"),
        ("ti,davinci_mdio", "davinci_mdio"),
        ("acme,phy", "acme_phy"),
    ] {
        d.modules.insert(c.into(), vec![m.into()]);
    }
    let roots = [
        ("usb-host".to_string(), "/pcie".to_string()),
        ("ethernet".to_string(), "/switch".to_string()),
    ];
    let links = walk(&t, &roots, &d, &carried(&["ti_cpsw_new"]), &[], &[]);
    let not_carried = |m: &str, c: &str| Gap::NotCarried {
        modules: vec![m.into()],
        compatible: c.into(),
    };
    assert_eq!(
        gaps(&links),
        [
            (
                "/switch/mdio".to_string(),
                not_carried("davinci_mdio", "ti,davinci_mdio")
            ),
            (
                "/firmware/reset".to_string(),
                not_carried("reset_raspberrypi", "raspberrypi,firmware-reset")
            ),
            (
                "/gmii-sel".to_string(),
                not_carried("phy_gmii_sel", "ti,am3352-phy-gmii-sel")
            ),
        ]
    );
    let via = |n: &str| links.iter().find(|l| l.node == n).unwrap().via.clone();
    assert_eq!(via("/firmware/reset"), "/pcie/pci@0,0/usb@0,0 resets");
    assert_eq!(via("/gmii-sel"), "/switch/ethernet-ports/port@1 phys");
    // A PCI endpoint's compatible names its IDs: its bus matches it, no driver needed.
    let wifi = links
        .iter()
        .find(|l| l.node == "/pcie/pci@0,0/wifi@1")
        .unwrap();
    assert!(
        matches!(wifi.verdict, Ok(Served::NoDriverNeeded(_))),
        "{wifi:?}"
    );
    // The disabled port's PHY is never asked for.
    assert!(!links.iter().any(|l| l.node == "/unused-phy"), "{links:#?}");
    let all = carried(&[
        "ti_cpsw_new",
        "reset_raspberrypi",
        "phy_gmii_sel",
        "davinci_mdio",
    ]);
    assert!(gaps(&walk(&t, &roots, &d, &all, &[], &[])).is_empty());
}

/// `interrupts` without an `interrupt-parent` of its own takes its controller from the
/// nearest ancestor's (drivers/of/irq.c `of_irq_find_parent`); `extcon` is a list of
/// phandles without arguments.
#[test]
fn inherited_interrupt_parents_and_extcon() {
    let blob = dtb(&[
        (0, "", &[("compatible", b"acme,board\0")]),
        (
            1,
            "intc",
            &[
                ("compatible", b"acme,intc\0"),
                ("#interrupt-cells", &[0, 0, 0, 1]),
                ("phandle", &ph(1)),
            ],
        ),
        (
            1,
            "usbphy",
            &[("compatible", b"acme,usb-phy\0"), ("phandle", &ph(2))],
        ),
        (
            1,
            "soc",
            &[
                ("compatible", b"simple-bus\0"),
                ("interrupt-parent", &ph(1)),
            ],
        ),
        (
            2,
            "usb",
            &[
                ("compatible", b"acme,musb\0"),
                ("interrupts", &[0, 0, 0, 7]),
                ("extcon", &[0, 0, 0, 2, 0, 0, 0, 0]),
            ],
        ),
    ]);
    let t = Tree::parse(&blob).unwrap();
    let mut d = Drivers::default();
    d.builtin.insert("acme,musb".into());
    d.modules
        .insert("acme,intc".into(), vec!["acme_intc".into()]);
    d.modules
        .insert("acme,usb-phy".into(), vec!["acme_phy".into()]);
    let roots = [("udc".to_string(), "/soc/usb".to_string())];
    let links = walk(&t, &roots, &d, &carried(&[]), &[], &[]);
    let got: Vec<(String, String)> = links
        .iter()
        .filter(|l| l.verdict.is_err())
        .map(|l| (l.node.clone(), l.via.clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("/intc".to_string(), "/soc/usb interrupts".to_string()),
            ("/usbphy".to_string(), "/soc/usb extcon".to_string()),
        ]
    );
}
