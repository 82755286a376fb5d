//! The driver-chain check of a hardware image (`cargo xtask image`, `cargo xtask boards`):
//! on the board's own DTB (its hardware fix-ups applied, never the QEMU-only ones),
//! every node the plan depends on (board file `[hardware]`) and everything it
//! references (crates/kmod `chain`) must be served by a driver the kernel builds in or
//! a module the image carries, and `console=` must name a built-in serial driver of the
//! console UART. A gap fails the build naming node, compatible, module and the fix.
//! The chains go down as well as out: a node's enabled children (a PCIe endpoint's
//! `resets`, a switch port's `phys` and `phy-handle`) and every provider property
//! fw_devlink follows. A `usb-host` root's companion (an enabled node on the very same
//! `phys`: an EHCI's OHCI) must be a root too.
//!
//! Its tests (`drivers/pinned.rs`, `drivers/mutation.rs`) run on the pinned packages:
//! every module of every hardware board's lists, dropped in turn, must fail the check
//! or be declared in the board's `[hardware] optional-modules` with why.
//!
//! Built in: the compatibles of the `of_device_id` tables in the decompressed kernel
//! image ([`benchboot_kmod::chain::builtin_compatibles`]). Modules: their `of:` aliases
//! (`.modinfo`, [`crate::modules::infos`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{bail, Context, Result};
use benchboot_board::Board;
use benchboot_kmod::chain::{self, Cell, Drivers, Gap, Link, Served, Waiver};
use benchboot_kmod::fdt::Tree;

/// Serial drivers and the tty names they register: (kernel config symbol, name
/// prefix, the compatibles of its `of_device_id` table), from the 6.1 sources:
/// drivers/tty/serial/amba-pl011.c (`ttyAMA`, an AMBA device matched by periph ID;
/// the DT names it `arm,pl011`), 8250/8250_bcm2835aux.c, 8250/8250_dw.c,
/// omap-serial.c (`OMAP_SERIAL_NAME` "ttyO"), 8250/8250_omap.c, 8250/8250_of.c.
const SERIAL_DRIVERS: &[(&str, &str, &[&str])] = &[
    ("SERIAL_AMBA_PL011", "ttyAMA", &["arm,pl011"]),
    ("SERIAL_8250_BCM2835AUX", "ttyS", &["brcm,bcm2835-aux-uart"]),
    ("SERIAL_8250_DW", "ttyS", &["snps,dw-apb-uart"]),
    (
        "SERIAL_OMAP",
        "ttyO",
        &["ti,omap2-uart", "ti,omap3-uart", "ti,omap4-uart"],
    ),
    (
        "SERIAL_8250_OMAP",
        "ttyS",
        &[
            "ti,am3352-uart",
            "ti,am4372-uart",
            "ti,dra742-uart",
            "ti,omap2-uart",
            "ti,omap3-uart",
            "ti,omap4-uart",
        ],
    ),
    (
        "SERIAL_OF_PLATFORM",
        "ttyS",
        &["ns16550a", "ns16550", "ns16450", "ns8250"],
    ),
];

/// The decompressed kernel image: arm64's `Image` as it is, an ARM zImage's XZ stream
/// (the first `FD 37 7A 58 5A 00` that decodes: the decompressor's own code holds the
/// magic too).
pub fn kernel_image(vmlinuz: &[u8]) -> Result<Vec<u8>> {
    // arm64 Image header: "ARM\x64" at byte 56 (Documentation/arm64/booting.rst).
    if vmlinuz.get(56..60) == Some(b"ARMd") {
        return Ok(vmlinuz.to_vec());
    }
    let magic = b"\xfd7zXZ\x00";
    let mut at = 0;
    while let Some(i) = vmlinuz[at..].windows(6).position(|w| w == magic) {
        let start = at + i;
        if let Some(out) = xz_stream(&vmlinuz[start..]) {
            return Ok(out);
        }
        at = start + 1;
    }
    bail!("no XZ stream that decodes in the zImage (is the kernel XZ-compressed?)")
}

/// The one XZ stream at the start of `data`, decoded up to its end (the zImage's
/// trailing size word and padding are not part of it); `None` if it does not decode.
fn xz_stream(data: &[u8]) -> Option<Vec<u8>> {
    let mut s = xz2::stream::Stream::new_stream_decoder(u64::MAX, 0).ok()?;
    let mut out = Vec::with_capacity(64 << 20);
    loop {
        let before = s.total_in() as usize;
        if out.capacity() == out.len() {
            out.reserve(16 << 20);
        }
        match s.process_vec(&data[before..], &mut out, xz2::stream::Action::Run) {
            Ok(xz2::stream::Status::StreamEnd) => return Some(out),
            Ok(_) if s.total_in() as usize == data.len() && out.len() < out.capacity() => {
                return None
            }
            Ok(_) => {}
            Err(_) => return None,
        }
    }
}

/// `CONFIG_<symbol>=y|m` of a kernel's `boot/config-*`, as a map symbol → value.
pub fn kernel_config(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("CONFIG_"))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// What one kernel flavour offers, read once per check.
pub struct Flavour {
    pub drivers: Drivers,
    pub config: BTreeMap<String, String>,
    /// Every module's `firmware=` files.
    pub firmware: BTreeMap<String, Vec<String>>,
    /// Every module's direct dependencies ([`crate::modules::dependencies`]).
    pub deps: BTreeMap<String, Vec<String>>,
}

impl Flavour {
    /// Reads the flavour's kernel image, config and modules from its unpacked package.
    pub fn load(kernel_root: &Path, release: &str) -> Result<Flavour> {
        let vmlinuz = kernel_root.join("boot").join(format!("vmlinuz-{release}"));
        let image = kernel_image(
            &std::fs::read(&vmlinuz).with_context(|| format!("reading {}", vmlinuz.display()))?,
        )
        .with_context(|| vmlinuz.display().to_string())?;
        let config_path = kernel_root.join("boot").join(format!("config-{release}"));
        let config = kernel_config(
            &std::fs::read_to_string(&config_path)
                .with_context(|| format!("reading {}", config_path.display()))?,
        );
        let mut drivers = Drivers {
            builtin: chain::builtin_compatibles(&image),
            modules: BTreeMap::new(),
        };
        let mut firmware = BTreeMap::new();
        let infos = crate::modules::infos(kernel_root, release)?;
        let deps = crate::modules::dependencies(&infos);
        for (name, (_, info)) in infos {
            for c in info.of_compatibles() {
                let e = drivers.modules.entry(c.to_owned()).or_default();
                if !e.contains(&name) {
                    e.push(name.clone());
                }
            }
            firmware.insert(name, info.firmware);
        }
        Ok(Flavour {
            drivers,
            config,
            firmware,
            deps,
        })
    }

    /// The modules an image that loads `wanted` carries: `wanted` and everything they
    /// depend on, as [`crate::modules::resolve`] orders them (canonical names).
    ///
    /// # Errors
    /// A module this flavour does not have, or a dependency cycle.
    pub fn carried(&self, wanted: &[String]) -> Result<BTreeSet<String>> {
        Ok(crate::modules::load_order(wanted, &self.deps)?
            .into_iter()
            .collect())
    }
}

/// The result of a check: every link of every chain, and the problems (empty: sound).
pub struct Report {
    pub links: Vec<Link>,
    pub problems: Vec<String>,
}

impl Report {
    /// One line per node: what serves it and how it was reached (the explanation of
    /// every module the hardware needs).
    pub fn lines(&self) -> Vec<String> {
        self.links
            .iter()
            .map(|l| {
                let how = match &l.verdict {
                    Ok(Served::BuiltIn(c)) => format!("built in ({c})"),
                    Ok(Served::Module { module, compatible }) => {
                        format!("module {module} ({compatible})")
                    }
                    Ok(Served::NoDriverNeeded(c)) => format!("no driver needed ({c})"),
                    Ok(Served::Waived(r)) => format!("waived: {r}"),
                    Err(g) => format!("GAP: {g:?}"),
                };
                format!("{:<9} {} <- {}: {how}", l.role, l.node, l.via)
            })
            .collect()
    }
}

/// Checks `board`'s hardware DTB (`dtb`, fix-ups applied) against `flavour` and the
/// modules the image carries (`carried`, canonical names); `firmware_present` answers
/// whether the image holds `/lib/firmware/<file>`.
///
/// # Errors
/// Only a DTB that cannot be read; every gap is a problem in the report.
pub fn check(
    board: &Board,
    dtb: &[u8],
    flavour: &Flavour,
    carried: &BTreeSet<String>,
    firmware_present: &dyn Fn(&str) -> bool,
) -> Result<Report> {
    let file = format!("boards/{}.toml", board.name);
    let Some(hw) = &board.hardware else {
        return Ok(Report {
            links: Vec::new(),
            problems: Vec::new(),
        });
    };
    let tree = Tree::parse(dtb).with_context(|| format!("{file}: kernel.dtb"))?;
    let waivers: Vec<Waiver> = hw
        .waive
        .iter()
        .map(|w| Waiver {
            node: w.node.clone(),
            reason: w.reason.clone(),
        })
        .collect();
    let cells: Vec<Cell> = hw
        .cells
        .iter()
        .map(|c| Cell {
            node: c.node.clone(),
            module: c.module.clone(),
        })
        .collect();
    let links = chain::walk(
        &tree,
        &hw.roots,
        &flavour.drivers,
        carried,
        &waivers,
        &cells,
    );
    let mut problems = Vec::new();
    for l in &links {
        let what = format!(
            "{file}: hardware.{}: {} ({})",
            l.role,
            l.node,
            if l.compatible.is_empty() {
                "no compatible".to_owned()
            } else {
                l.compatible.join(", ")
            }
        );
        let via = if l.via == "root" {
            String::new()
        } else {
            format!(", needed through {}", l.via)
        };
        match &l.verdict {
            Ok(Served::Module { module, .. }) => {
                for f in flavour.firmware.get(module).into_iter().flatten() {
                    let waived = hw.firmware_waive.iter().any(|w| w.file == *f);
                    if !firmware_present(f) && !waived {
                        problems.push(format!(
                            "{what}{via}: module {module} asks for firmware {f}, which the image \
                             does not carry: add it, or waive it in [hardware] firmware-waive \
                             with the reason it is never asked for on this board"
                        ));
                    }
                }
            }
            Ok(_) => {}
            Err(Gap::NoSuchNode) => problems.push(format!(
                "{what}: no such node in {}: name a node of the DTB",
                board.kernel.dtb.as_deref().unwrap_or("the DTB")
            )),
            Err(Gap::Disabled { at }) => problems.push(format!(
                "{what}{via}: disabled (status at {at}), so its consumer never probes: \
                 enable it with a kernel.dtb-fixups entry, or waive the node with a reason"
            )),
            Err(Gap::NoDriver) => problems.push(format!(
                "{what}{via}: no driver in the {} kernel matches any compatible (none built \
                 in, no module's of: alias): waive the node with a reason, or pick a kernel \
                 that drives it",
                board.kernel.flavour
            )),
            Err(Gap::NotCarried {
                modules,
                compatible,
            }) => problems.push(format!(
                "{what}{via}: {compatible} is driven by module {}, which the image does not \
                 load: add \"{}\" to the board's module list for this role (modules.load, \
                 gadget/ethernet/usb-ethernet/wifi/storage.extra modules), or waive the node \
                 with a reason",
                modules.join(" or "),
                modules[0].replace('_', "-")
            )),
        }
    }
    problems.extend(companion_problems(&file, &hw.roots, &tree));
    problems.extend(console_problem(board, &tree, &flavour.config));
    Ok(Report { links, problems })
}

/// An enabled node with the very `phys` of a `usb-host` root (same PHY, same
/// arguments) drives the same port: an EHCI's OHCI companion, which takes the port's
/// USB 1.1 devices (keyboards, some adapters) the EHCI hands over. Each must be a
/// `usb-host` root too, so its driver is proved like the root's.
fn companion_problems(file: &str, roots: &[(String, String)], tree: &Tree) -> Vec<String> {
    let hosts: Vec<usize> = (roots.iter())
        .filter(|(role, _)| role == "usb-host")
        .filter_map(|(_, path)| tree.find(path))
        .collect();
    let mut out = Vec::new();
    for &h in &hosts {
        let Some(phys) = tree.prop(h, "phys") else {
            continue;
        };
        for n in 1..tree.nodes.len() {
            let named = roots.iter().any(|(_, p)| p == tree.path(n));
            if n == h || named || tree.prop(n, "phys") != Some(phys) {
                continue;
            }
            if tree.disabled_at(n).is_some() {
                continue;
            }
            out.push(format!(
                "{file}: hardware.usb-host: {} ({}) has the same phys as {}: the same \
                 port's companion controller (USB 1.1 devices on that port are its): add \
                 it to hardware.usb-host, and its driver to the USB lists",
                tree.path(n),
                tree.compatible(n).join(", "),
                tree.path(h)
            ));
        }
    }
    out
}

/// The modules the hardware plan loads, before their dependencies: `modules.load`, then
/// the links' (gadget, Ethernet, USB Ethernet adapters, the WiFi radio), then the extra
/// storage's, each once.
pub fn hardware_modules(board: &Board) -> Vec<String> {
    let mut wanted = board.modules.clone();
    let links = board.gadget.iter().map(|g| &g.modules);
    let links = links.chain(board.ethernet.iter().map(|e| &e.modules));
    let links = links.chain(board.usb_ethernet.iter().map(|u| &u.modules));
    let links = links.chain(board.wifi.iter().map(|w| &w.modules));
    let storage = board.extra_storage.iter().map(|e| &e.modules);
    for m in links.chain(storage).flatten() {
        if !wanted.contains(m) {
            wanted.push(m.clone());
        }
    }
    wanted
}

/// The whole check of `board` against its unpacked kernel: the DTB from the package
/// with `kernel.dtb-fixups` applied, the hardware module set resolved with its
/// dependencies, firmware looked up among `firmware_files` (paths in the initramfs,
/// `lib/firmware/...`). `Ok(None)`: the board has no `[hardware]`.
///
/// # Errors
/// A DTB, kernel or module that cannot be read (not a gap).
pub fn check_board(
    board: &Board,
    kernel_root: &Path,
    firmware_files: &[String],
) -> Result<Option<Report>> {
    let Some(dtb) = hardware_dtb(board, kernel_root)? else {
        return Ok(None);
    };
    let flavour = Flavour::load(kernel_root, &board.kernel.release)?;
    let carried = flavour.carried(&hardware_modules(board))?;
    let present = |f: &str| {
        firmware_files
            .iter()
            .any(|p| p == &format!("lib/firmware/{f}"))
    };
    check(board, &dtb, &flavour, &carried, &present).map(Some)
}

/// The DTB the check reads: `kernel.dtb` from the unpacked kernel package under
/// `usr/lib/linux-image-<release>/`, with the board's `kernel.dtb-fixups` (the
/// hardware ones, never `qemu.dtb-fixups`) applied. `Ok(None)`: no `[hardware]`.
///
/// # Errors
/// The DTB is not in the package, or cannot be read or fixed up.
pub fn hardware_dtb(board: &Board, kernel_root: &Path) -> Result<Option<Vec<u8>>> {
    let (Some(_), Some(dtb_name)) = (&board.hardware, &board.kernel.dtb) else {
        return Ok(None);
    };
    let release = &board.kernel.release;
    let dtb_dir = kernel_root
        .join("usr/lib")
        .join(format!("linux-image-{release}"));
    let src = crate::walk_files(&dtb_dir)?
        .into_iter()
        .find(|p| p.file_name().is_some_and(|f| f == dtb_name.as_str()))
        .with_context(|| {
            format!(
                "boards/{}.toml: kernel.dtb {dtb_name} not in the kernel package",
                board.name
            )
        })?;
    let dtb = crate::dtb::apply_dtb_fixups(&std::fs::read(&src)?, &board.kernel.dtb_fixups)?;
    Ok(Some(dtb))
}

/// `console=<prefix><index>` must be a tty a built-in serial driver of the UART at
/// `aliases/serial<index>` registers: a module comes too late for `/dev/console`, and
/// a wrong name leaves PID 1 without a console.
fn console_problem(
    board: &Board,
    tree: &Tree,
    config: &BTreeMap<String, String>,
) -> Option<String> {
    let file = format!("boards/{}.toml", board.name);
    let tty = board.boot.console.split(',').next().unwrap_or_default();
    let digits = tty.len() - tty.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (prefix, index) = tty.split_at(tty.len() - digits);
    if index.is_empty() {
        return Some(format!(
            "{file}: boot.console `{tty}` has no index: e.g. ttyS0"
        ));
    }
    let alias = format!("serial{index}");
    let Some(node) = tree.find(&alias) else {
        return Some(format!(
            "{file}: boot.console `{tty}`: the DTB has no aliases/{alias}: pick the index of \
             a UART the DTB aliases"
        ));
    };
    let compatible = tree.compatible(node);
    let builtin: Vec<(&str, &str)> = SERIAL_DRIVERS
        .iter()
        .filter(|(sym, _, compats)| {
            config.get(*sym).map(String::as_str) == Some("y")
                && compats.iter().any(|c| compatible.contains(c))
        })
        .map(|(sym, p, _)| (*sym, *p))
        .collect();
    if builtin.iter().any(|(_, p)| *p == prefix) {
        return None;
    }
    let fix = match builtin.first() {
        Some((sym, p)) => format!("CONFIG_{sym}=y names it {p}{index}: use console={p}{index}"),
        None => "no serial driver built into this kernel drives it: pick another UART".into(),
    };
    Some(format!(
        "{file}: boot.console `{tty}`: {alias} is {} ({}): {fix}",
        tree.path(node),
        compatible.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_lines() {
        let c = kernel_config("# comment\nCONFIG_SERIAL_OMAP=y\n# CONFIG_SERIAL_8250_OMAP is not set\nCONFIG_USB_UAS=m\n");
        assert_eq!(c.get("SERIAL_OMAP").map(String::as_str), Some("y"));
        assert_eq!(c.get("USB_UAS").map(String::as_str), Some("m"));
        assert!(!c.contains_key("SERIAL_8250_OMAP"));
    }
}

/// The check against the pinned kernels and DTBs themselves (fetched and unpacked like
/// `cargo xtask boards` does).
#[cfg(test)]
mod pinned;

/// Each module of each hardware board's lists dropped in turn, on the pinned kernels.
#[cfg(test)]
mod mutation;
