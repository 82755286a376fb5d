//! The driver chain of a device-tree node: everything the kernel needs before the node's
//! driver can probe (its supplies, PHYs, resets, clocks, power domains, DMA channels,
//! interrupt and GPIO controllers, pin controllers, the `mmc-pwrseq` of an SDIO slot,
//! the bus it sits on), walked from the nodes a plan depends on, with each node's
//! driver proved built in or carried as a module.
//!
//! A probe that waits on a provider without a driver defers for ever, silently: the SD
//! card of a Pi 4 never appears when its `vqmmc-supply` regulator's driver is missing.
//! Which properties name providers, and how many argument cells follow each phandle,
//! are the kernel's bindings: Documentation/devicetree/bindings/{regulator,phy,reset,
//! clock,power,dma,interrupt-controller,gpio,pinctrl,mmc/mmc-pwrseq-*}.yaml and
//! drivers/of/property.c (`of_supplier_bindings`, fw_devlink's list of the same).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::fdt::Tree;

/// Provider properties that hold one phandle and no arguments.
const SINGLE: &[&str] = &["mmc-pwrseq", "phy-handle", "interrupt-parent"];

/// Provider properties that hold phandle + arguments, with the provider's cell-count
/// property (drivers/of/property.c `of_supplier_bindings`).
const WITH_ARGS: &[(&str, &str)] = &[
    ("clocks", "#clock-cells"),
    ("resets", "#reset-cells"),
    ("phys", "#phy-cells"),
    ("power-domains", "#power-domain-cells"),
    ("dmas", "#dma-cells"),
    ("interrupts-extended", "#interrupt-cells"),
    ("mboxes", "#mbox-cells"),
    ("io-channels", "#io-channel-cells"),
    ("iommus", "#iommu-cells"),
    ("thermal-sensors", "#thermal-sensor-cells"),
    ("gpios", "#gpio-cells"),
    ("gpio", "#gpio-cells"),
];

/// Compatibles that need no driver of their own: buses the OF core populates itself
/// (drivers/of/platform.c `of_default_bus_match_table`), data nodes, and Ethernet PHYs,
/// which phylib matches by the PHY's ID over MDIO, not by compatible.
const NO_DRIVER: &[&str] = &[
    "simple-bus",
    "simple-mfd",
    "isa",
    "arm,amba-bus",
    "syscon",
    "operating-points-v2",
    "fixed-partitions",
    "ethernet-phy-ieee802.3-c22",
    "ethernet-phy-ieee802.3-c45",
];

/// What the kernel flavour offers: the compatibles its built-in drivers match, and the
/// modules (by `of:` alias) that match each compatible.
#[derive(Debug, Clone, Default)]
pub struct Drivers {
    /// Compatibles in a built-in `of_device_id` table (see [`builtin_compatibles`]).
    pub builtin: BTreeSet<String>,
    /// compatible → modules whose `of:` alias names it (canonical names).
    pub modules: BTreeMap<String, Vec<String>>,
}

/// A node waived by the board file: not checked, with the reason printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiver {
    pub node: String,
    pub reason: String,
}

/// A node whose driver is a module matched by name, not compatible: the cells of an
/// MFD (`axp20x-regulator` under an AXP209's `regulators` node), named in the board file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    pub node: String,
    pub module: String,
}

/// How one node of a chain is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Served {
    /// A built-in driver matches this compatible.
    BuiltIn(String),
    /// This module, carried by the image, matches this compatible (or the node is an
    /// MFD cell the board file names).
    Module { module: String, compatible: String },
    /// Needs no driver (a bus the OF core populates, a data node, an MDIO PHY).
    NoDriverNeeded(String),
    /// The board file waives it, for this reason.
    Waived(String),
}

/// Why a node of a chain would keep its consumer from probing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gap {
    /// The root named by the board file is not in the DTB.
    NoSuchNode,
    /// The node, or the ancestor at this path, has `status = "disabled"`.
    Disabled { at: String },
    /// No built-in driver and no module of the flavour matches any compatible.
    NoDriver,
    /// A module of the flavour matches, but the image does not carry it.
    NotCarried {
        modules: Vec<String>,
        compatible: String,
    },
}

/// One node of a chain and its verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The role of the root this chain started from (`card`, `udc`, `ethernet`...).
    pub role: String,
    /// Path of the node with the driver (the nearest node with a `compatible` at or
    /// above what was referenced).
    pub node: String,
    pub compatible: Vec<String>,
    /// How it was reached: `root`, or `<consumer path> <property>`, or `<child> parent`.
    pub via: String,
    pub verdict: Result<Served, Gap>,
}

/// Walks the chain of every root (`(role, node path)`) through `tree`; each node once
/// (the first role that reached it names it). `carried` is the image's module set
/// (canonical names).
pub fn walk(
    tree: &Tree,
    roots: &[(String, String)],
    drivers: &Drivers,
    carried: &BTreeSet<String>,
    waivers: &[Waiver],
    cells: &[Cell],
) -> Vec<Link> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    // (role, node, how it was reached, reached as the parent of a node).
    let mut queue: VecDeque<(String, usize, String, bool)> = VecDeque::new();
    for (role, path) in roots {
        match tree.find(path) {
            Some(i) => queue.push_back((role.clone(), i, "root".into(), false)),
            None => out.push(Link {
                role: role.clone(),
                node: path.clone(),
                compatible: Vec::new(),
                via: "root".into(),
                verdict: Err(Gap::NoSuchNode),
            }),
        }
    }
    while let Some((role, at, via, parent_kind)) = queue.pop_front() {
        // An Ethernet PHY is matched by its PHY ID over MDIO (phylib), not by a
        // compatible: what must be there is its MDIO bus, reached as a parent.
        if via.ends_with(" phy-handle") {
            if let Some(bus) = tree.nodes[at].parent.and_then(|p| owner(tree, p)) {
                queue.push_back((
                    role.clone(),
                    bus,
                    format!("{via} (the PHY's MDIO bus)"),
                    true,
                ));
            }
            continue;
        }
        // The node with the driver: the referenced node or its nearest ancestor with a
        // compatible (a pin group's controller, a regulator under a PMIC), never the
        // board's root node.
        let Some(dev) = owner(tree, at) else { continue };
        // A node the board names (an MFD cell, a waiver), at or above the referenced
        // node, up to `dev`.
        let named = |k: usize| {
            let p = tree.path(k);
            cells.iter().any(|c| c.node == p) || waivers.iter().any(|w| w.node == p)
        };
        let mut key = dev;
        let mut n = Some(at);
        while let Some(k) = n {
            if named(k) {
                key = k;
                break;
            }
            if k == dev {
                break;
            }
            n = tree.nodes[k].parent;
        }
        if !seen.insert(key) {
            continue;
        }
        let path = tree.path(key).to_owned();
        let compatible: Vec<String> = tree.compatible(dev).iter().map(|s| s.to_string()).collect();
        let is_cpu = tree.string(dev, "device_type") == Some("cpu");
        let verdict = if let Some(w) = waivers.iter().find(|w| w.node == path) {
            Ok(Served::Waived(w.reason.clone()))
        } else if let Some(d) = tree.disabled_at(key) {
            Err(Gap::Disabled {
                at: tree.path(d).to_owned(),
            })
        } else if is_cpu {
            Ok(Served::NoDriverNeeded(
                "a CPU core (device_type = \"cpu\")".into(),
            ))
        } else if let Some(c) = cells.iter().find(|c| c.node == path) {
            if carried.contains(&crate::canonical(&c.module)) {
                Ok(Served::Module {
                    module: crate::canonical(&c.module),
                    compatible: format!("MFD cell of {}", compatible.join(" ")),
                })
            } else {
                Err(Gap::NotCarried {
                    modules: vec![crate::canonical(&c.module)],
                    compatible: format!("MFD cell of {}", compatible.join(" ")),
                })
            }
        } else {
            match serve(&compatible, drivers, carried) {
                // A parent no driver matches at all is a container (a clock domain, an
                // interconnect segment, an MDIO node the MAC's driver registers): the
                // OF core or its children's drivers populate it.
                Err(Gap::NoDriver) if parent_kind => Ok(Served::NoDriverNeeded(
                    "a container: no driver matches it; its children are populated by the \
                     OF core or their parent's driver"
                        .into(),
                )),
                v => v,
            }
        };
        out.push(Link {
            role: role.clone(),
            node: path.clone(),
            compatible,
            via,
            verdict: verdict.clone(),
        });
        if matches!(verdict, Ok(Served::Waived(_))) {
            continue;
        }
        // What the referenced node and its driver's node point at.
        let mut from = vec![at];
        if dev != at {
            from.push(dev);
        }
        for n in from {
            for (prop, target) in providers(tree, n) {
                queue.push_back((
                    role.clone(),
                    target,
                    format!("{} {prop}", tree.path(n)),
                    false,
                ));
            }
        }
        // The bus above: an I2C or SPI controller, an MFD, an SDIO host, an MDIO bus.
        if let Some(p) = tree.nodes[dev].parent.and_then(|p| owner(tree, p)) {
            queue.push_back((role.clone(), p, format!("{path} parent"), true));
        }
    }
    out
}

/// The node with the driver for node `i`: `i` or its nearest ancestor with a
/// `compatible`, excluding the root (the board's own compatible needs no driver).
fn owner(tree: &Tree, i: usize) -> Option<usize> {
    let mut at = Some(i);
    while let Some(n) = at {
        if n == 0 {
            return None;
        }
        if !tree.compatible(n).is_empty() {
            return Some(n);
        }
        at = tree.nodes[n].parent;
    }
    None
}

/// The provider nodes node `i` names, with the property naming each.
pub fn providers(tree: &Tree, i: usize) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (name, _) in &tree.nodes[i].props {
        let single = name.ends_with("-supply") || SINGLE.contains(&name.as_str());
        let pinctrl = name
            .strip_prefix("pinctrl-")
            .is_some_and(|n| n.parse::<u32>().is_ok());
        if single || pinctrl {
            for ph in tree.cells(i, name) {
                if let Some(t) = tree.by_phandle(ph) {
                    out.push((name.clone(), t));
                }
                if single {
                    break;
                }
            }
            continue;
        }
        let cells_prop = WITH_ARGS
            .iter()
            .find(|(p, _)| p == name)
            .map(|(_, c)| *c)
            .or_else(|| name.ends_with("-gpios").then_some("#gpio-cells"));
        let Some(cells_prop) = cells_prop else {
            continue;
        };
        let v = tree.cells(i, name);
        let mut k = 0;
        while k < v.len() {
            let ph = v[k];
            k += 1;
            if ph == 0 {
                continue; // a hole in a GPIO list
            }
            let Some(t) = tree.by_phandle(ph) else { break };
            let args = tree.cells(t, cells_prop).first().copied().unwrap_or(0) as usize;
            out.push((name.clone(), t));
            k = k.saturating_add(args);
        }
    }
    out
}

/// How a node with these compatibles is served, most specific compatible first.
pub fn serve(
    compatible: &[String],
    drivers: &Drivers,
    carried: &BTreeSet<String>,
) -> Result<Served, Gap> {
    if let Some(c) = compatible.iter().find(|c| NO_DRIVER.contains(&c.as_str())) {
        return Ok(Served::NoDriverNeeded(c.clone()));
    }
    for c in compatible {
        if drivers.builtin.contains(c) {
            return Ok(Served::BuiltIn(c.clone()));
        }
        if let Some(ms) = drivers.modules.get(c) {
            if let Some(m) = ms.iter().find(|m| carried.contains(*m)) {
                return Ok(Served::Module {
                    module: m.clone(),
                    compatible: c.clone(),
                });
            }
        }
    }
    for c in compatible {
        if let Some(ms) = drivers.modules.get(c) {
            return Err(Gap::NotCarried {
                modules: ms.clone(),
                compatible: c.clone(),
            });
        }
    }
    Err(Gap::NoDriver)
}

/// The compatibles of a kernel image's built-in `of_device_id` tables: each entry is
/// `char name[32]; char type[32]; char compatible[128]; const void *data`
/// (include/linux/mod_devicetable.h), so a built-in driver's compatible sits in the
/// decompressed image as a printable string padded with NULs to 128 bytes, after two
/// 32-byte fields that are each empty or a NUL-terminated string. That second test
/// keeps out the other 128-byte compatible fields of the image, the earlycon table's
/// (`struct earlycon_id { char name[15]; char name_term; char compatible[128]; ... }`,
/// include/linux/serial_core.h: e.g. `ns16550a` in a kernel whose 8250_of is a module).
pub fn builtin_compatibles(image: &[u8]) -> BTreeSet<String> {
    const FIELD: usize = 128;
    const NAME: usize = 32;
    // Empty, or printable bytes then NULs to the end of the field.
    let field_ok = |f: &[u8]| {
        let end = f.iter().position(|&b| b == 0).unwrap_or(f.len());
        end < f.len()
            && f[..end].iter().all(|b| (0x20..0x7f).contains(b))
            && f[end..].iter().all(|&b| b == 0)
    };
    let mut out = BTreeSet::new();
    let mut i = 0;
    while i < image.len() {
        let start = i;
        while i < image.len() && (0x21..0x7f).contains(&image[i]) {
            i += 1;
        }
        let len = i - start;
        if (2..FIELD).contains(&len)
            && start >= 2 * NAME
            && start + FIELD <= image.len()
            && image[i..start + FIELD].iter().all(|&b| b == 0)
            && field_ok(&image[start - 2 * NAME..start - NAME])
            && field_ok(&image[start - NAME..start])
        {
            if let Ok(s) = std::str::from_utf8(&image[start..i]) {
                out.insert(s.to_owned());
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
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
}
