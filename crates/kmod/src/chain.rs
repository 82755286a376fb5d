//! The driver chain of a device-tree node: everything the kernel needs before the node's
//! driver can probe (its supplies, PHYs, resets, clocks, power domains, DMA channels,
//! interrupt and GPIO controllers, pin controllers, the `mmc-pwrseq` of an SDIO slot,
//! the bus it sits on), walked from the nodes a plan depends on, with each node's
//! driver proved built in or carried as a module. The walk goes down too: the enabled
//! children of a depended-on node, recursively, are its driver's to populate or read
//! (a PCIe bridge's endpoint with its `resets`, a switch's ports with their `phys` and
//! `phy-handle`, a MAC's MDIO bus), so their references count as the node's own; a
//! disabled child needs nothing.
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
    ("interconnects", "#interconnect-cells"),
    ("hwlocks", "#hwlock-cells"),
    ("pwms", "#pwm-cells"),
    // Phandle lists without arguments (`DEFINE_SIMPLE_PROP(.., NULL)`): no cell-count
    // property, so every cell is a phandle.
    ("extcon", ""),
    ("nvmem-cells", ""),
    ("wakeup-parent", ""),
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

/// How a node came into a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// A node the board file names.
    Root,
    /// Named by a provider property of a node already in the chain.
    Provider,
    /// The bus or container above a node of the chain.
    Parent,
    /// A child of a root, or of such a child: the root's driver populates or parses it
    /// (a PCIe bridge's endpoint, a switch's ports, a MAC's MDIO bus).
    Child,
}

/// Walks the chain of every root (`(role, node path)`) through `tree`; each node once
/// (the first role that reached it names it). `carried` is the image's module set
/// (canonical names).
///
/// From each root it follows every provider property ([`providers`]) of the root and
/// of every enabled node below it (children, recursively: a disabled child is never
/// probed, so it needs nothing), of every provider reached and of its driver's node,
/// and the bus above each.
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
    // Raw nodes whose provider properties were followed, and whose children were.
    let mut followed = BTreeSet::new();
    let mut descended = BTreeSet::new();
    let mut waived = BTreeSet::new();
    let mut queue: VecDeque<(String, usize, String, Reach)> = VecDeque::new();
    for (role, path) in roots {
        match tree.find(path) {
            Some(i) => queue.push_back((role.clone(), i, "root".into(), Reach::Root)),
            None => out.push(Link {
                role: role.clone(),
                node: path.clone(),
                compatible: Vec::new(),
                via: "root".into(),
                verdict: Err(Gap::NoSuchNode),
            }),
        }
    }
    let follow = |queue: &mut VecDeque<_>, followed: &mut BTreeSet<usize>, role: &str, n| {
        if followed.insert(n) {
            for (prop, target) in providers(tree, n) {
                let via = format!("{} {prop}", tree.path(n));
                queue.push_back((role.to_owned(), target, via, Reach::Provider));
            }
        }
    };
    while let Some((role, at, via, reach)) = queue.pop_front() {
        // A disabled child is never probed: its parent's driver skips it.
        if reach == Reach::Child && tree.disabled_at(at).is_some() {
            continue;
        }
        // An Ethernet PHY is matched by its PHY ID over MDIO (phylib), not by a
        // compatible: what must be there is its MDIO bus, reached as a parent, and what
        // the PHY node names (its reset GPIO, which the bus drives before reading the ID).
        if via.ends_with(" phy-handle") {
            if let Some(bus) = tree.nodes[at].parent.and_then(|p| owner(tree, p)) {
                let via = format!("{via} (the PHY's MDIO bus)");
                queue.push_back((role.clone(), bus, via, Reach::Parent));
            }
            follow(&mut queue, &mut followed, &role, at);
            continue;
        }
        // The node with the driver: the referenced node or its nearest ancestor with a
        // compatible (a pin group's controller, a regulator under a PMIC, a port of a
        // switch), never the board's root node.
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
        if waived.contains(&key) {
            continue;
        }
        let first = seen.insert(key);
        if first {
            let link = judge(tree, (dev, key), reach, drivers, carried, waivers, cells);
            let stop = matches!(link.verdict, Ok(Served::Waived(_)));
            out.push(Link {
                role: role.clone(),
                via,
                ..link
            });
            if stop {
                waived.insert(key);
                continue;
            }
        }
        // What the referenced node and its driver's node point at.
        follow(&mut queue, &mut followed, &role, at);
        follow(&mut queue, &mut followed, &role, dev);
        // The nodes below a root: its driver populates them or reads their references.
        if matches!(reach, Reach::Root | Reach::Child) && descended.insert(at) {
            for c in tree.children(at) {
                let via = format!("{} child", tree.path(at));
                queue.push_back((role.clone(), c, via, Reach::Child));
            }
        }
        // The bus above: an I2C or SPI controller, an MFD, an SDIO host, an MDIO bus.
        if first {
            if let Some(p) = tree.nodes[dev].parent.and_then(|p| owner(tree, p)) {
                let via = format!("{} parent", tree.path(key));
                queue.push_back((role.clone(), p, via, Reach::Parent));
            }
        }
    }
    out
}

/// The verdict on node `key` (`dev`: the node with its driver, `key` itself or its
/// nearest ancestor with a compatible), as a link without its role and `via` (the
/// caller's).
fn judge(
    tree: &Tree,
    (dev, key): (usize, usize),
    reach: Reach,
    drivers: &Drivers,
    carried: &BTreeSet<String>,
    waivers: &[Waiver],
    cells: &[Cell],
) -> Link {
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
        let module = crate::canonical(&c.module);
        let compatible = format!("MFD cell of {}", compatible.join(" "));
        if carried.contains(&module) {
            Ok(Served::Module { module, compatible })
        } else {
            Err(Gap::NotCarried {
                modules: vec![module],
                compatible,
            })
        }
    } else {
        match serve(&compatible, drivers, carried) {
            // A parent no driver matches at all is a container (a clock domain, an
            // interconnect segment, an MDIO node the MAC's driver registers): the
            // OF core or its children's drivers populate it.
            Err(Gap::NoDriver) if reach == Reach::Parent => Ok(Served::NoDriverNeeded(
                "a container: no driver matches it; its children are populated by the \
                 OF core or their parent's driver"
                    .into(),
            )),
            // A child no compatible-matched driver serves is a device its bus finds by
            // its own IDs (a PCI endpoint, an SDIO function), the compatible only
            // pointing that driver at its node.
            Err(Gap::NoDriver) if reach == Reach::Child => Ok(Served::NoDriverNeeded(
                "a child its bus matches by ID (PCI, SDIO, USB), not by compatible".into(),
            )),
            v => v,
        }
    };
    Link {
        role: String::new(),
        node: path,
        compatible,
        via: String::new(),
        verdict,
    }
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

/// The provider nodes node `i` names, with the property naming each: the properties
/// of drivers/of/property.c `of_supplier_bindings` (6.1), each phandle followed by as
/// many argument cells as the provider's `#…-cells` says, and the controller an
/// `interrupts` property inherits ([`interrupt_controller`]).
pub fn providers(tree: &Tree, i: usize) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    if let Some(c) = interrupt_controller(tree, i) {
        out.push(("interrupts".to_owned(), c));
    }
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
        if cells_prop.is_empty() {
            let targets = v.iter().filter_map(|&ph| tree.by_phandle(ph));
            out.extend(targets.map(|t| (name.clone(), t)));
            continue;
        }
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

/// The interrupt controller of node `i`'s `interrupts` as the kernel finds it
/// (drivers/of/irq.c `of_irq_find_parent`): from `i`, follow `interrupt-parent` where
/// the node has one, else go to the parent, until a node with `#interrupt-cells`.
/// `None` when `i` has no `interrupts`, has `interrupts-extended` (which names its
/// controllers itself) or names its own `interrupt-parent` (followed as that).
fn interrupt_controller(tree: &Tree, i: usize) -> Option<usize> {
    let own = |p: &str| tree.prop(i, p).is_some();
    if !own("interrupts") || own("interrupts-extended") || own("interrupt-parent") {
        return None;
    }
    let mut at = i;
    // A loop in the DT ends at the node count.
    for _ in 0..tree.nodes.len() {
        let next = match tree.cells(at, "interrupt-parent").first() {
            Some(&ph) => tree.by_phandle(ph)?,
            None => tree.nodes[at].parent?,
        };
        if tree.prop(next, "#interrupt-cells").is_some() {
            return Some(next);
        }
        at = next;
    }
    None
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
mod tests;
