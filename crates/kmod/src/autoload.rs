//! What PID 1 loads by modalias, decided from data: given the devices found under
//! `/sys/devices` (path, `modalias`, subsystem, bound or not), the image's
//! [`AliasTable`] and the modules already loaded, which modules to load in what order,
//! and which devices have no driver in the image.
//!
//! The order is kmod's for one module (libkmod-module.c `kmod_module_get_probe_list`):
//! its `softdep` `pre:` modules (each with its own chain), its `depends=` (dependencies
//! first), the module, then its `softdep` `post:` modules. Without udev the kernel
//! loads nothing by modalias (boards-and-boot.md), so this is udev's
//! `kmod load $env{MODALIAS}` rule done by PID 1.

use std::collections::BTreeSet;

use crate::table::AliasTable;

/// A device as PID 1 found it under `/sys/devices`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// Its sysfs directory, e.g. `/sys/devices/platform/soc/3f980000.usb/usb1/1-1/1-1:1.0`.
    pub path: String,
    /// Its `modalias` file, trimmed (e.g. `usb:v0BDAp8153d3100dc00...`).
    pub modalias: String,
    /// The name its `subsystem` link points at (`usb`, `platform`, `cpu`, `scsi`...);
    /// empty when it has none.
    pub subsystem: String,
    /// Whether it has a `driver` link: a driver is bound.
    pub bound: bool,
}

/// Why a module is loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// One of its `alias` patterns matches the device's modalias.
    Alias,
    /// The named module's `depends=` lists it.
    DependencyOf(String),
    /// The named module's `softdep` lists it under `pre:`.
    SoftdepPreOf(String),
    /// The named module's `softdep` lists it under `post:`.
    SoftdepPostOf(String),
}

impl std::fmt::Display for Why {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Why::Alias => f.write_str("alias"),
            Why::DependencyOf(m) => write!(f, "dependency of {m}"),
            Why::SoftdepPreOf(m) => write!(f, "softdep pre: of {m}"),
            Why::SoftdepPostOf(m) => write!(f, "softdep post: of {m}"),
        }
    }
}

/// One module to load, for one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Load {
    /// Canonical name; its file is `<MODULES_DIR>/<module>.ko`.
    pub module: String,
    /// The sysfs path of the device whose modalias asked for it.
    pub device: String,
    pub modalias: String,
    pub why: Why,
}

/// What to do after one look at `/sys/devices`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decision {
    /// Modules to load, in this order, each once.
    pub loads: Vec<Load>,
    /// Unbound devices no module of the image matches, worth telling a person
    /// ([`worth_reporting`]), in the order given.
    pub no_driver: Vec<Device>,
    /// (module, dependency): a matched module left out because the image does not
    /// carry a module its `depends=` names (a build bug: the image's resolver adds them).
    pub broken: Vec<(String, String)>,
}

/// Subsystems whose devices never have a driver bound: a `cpu` device's modalias only
/// lists CPU features for crypto modules (drivers/base/cpu.c), input handlers such as
/// evdev attach to an `input` device without binding to it (drivers/input/input.c).
pub const NEVER_BOUND: &[&str] = &["cpu", "input"];

/// Modalias kinds never reported, with why:
/// - `of:` the device tree describes the device: `cargo xtask image` proves the driver
///   chain of every node the plan needs, and nodes served by early code (the timer, the
///   interrupt controller, clocks: `TIMER_OF_DECLARE`, `IRQCHIP_DECLARE`,
///   `CLK_OF_DECLARE`) keep a device that never binds;
/// - `platform:` made by kernel code, not plugged in; several never bind (cfg80211's
///   `regulatory` device, net/wireless/reg.c; sysfb's `platform-framebuffer` without a
///   framebuffer driver; `psci-cpuidle` where PSCI has no idle states: all three seen
///   unbound in QEMU virt with the pinned arm64 kernel);
/// - `cpu:` and `input:` as [`NEVER_BOUND`] (the `cpu` root folder has no subsystem link).
pub const NOT_REPORTED: &[&str] = &["of:", "platform:", "cpu:", "input:"];

/// Whether an unbound device no module of the image matches is worth telling a person:
/// what the board found on its buses (USB, PCI, SDIO, SCSI, MMC, virtio, HID...), not
/// [`NEVER_BOUND`] subsystems, not [`NOT_REPORTED`] kinds, and not a PCI host bridge
/// (class 06:00, `bc06sc00`: Linux binds no driver to one; QEMU virt's 1b36:0008).
pub fn worth_reporting(d: &Device) -> bool {
    let host_bridge = d.modalias.starts_with("pci:") && d.modalias.contains("bc06sc00");
    !d.bound
        && !NEVER_BOUND.contains(&d.subsystem.as_str())
        && !NOT_REPORTED.iter().any(|p| d.modalias.starts_with(p))
        && !host_bridge
}

/// Decides what to load for `devices` (bound ones are skipped) with `table`; `done`
/// holds the modules already loaded or tried this boot (canonical names), which are
/// never loaded again. A device whose modalias matches modules that are all in `done`
/// is neither loaded for nor reported: its driver is in the image.
pub fn decide(devices: &[Device], table: &AliasTable, done: &BTreeSet<String>) -> Decision {
    let mut d = Decision::default();
    let mut planned: BTreeSet<String> = done.clone();
    for dev in devices.iter().filter(|dev| !dev.bound) {
        let matched = table.modules_for(&dev.modalias);
        if matched.is_empty() {
            if worth_reporting(dev) {
                d.no_driver.push(dev.clone());
            }
            continue;
        }
        let mut walk = Walk {
            dev,
            table,
            planned: &mut planned,
            visiting: BTreeSet::new(),
            d: &mut d,
        };
        for m in matched {
            walk.visiting.clear();
            walk.chain(m, Why::Alias);
        }
    }
    d
}

/// One device's walk through the module table: what it is for, what is planned so far
/// (this boot), the modules on the current path (to stop at softdep cycles) and where
/// the decision goes.
struct Walk<'a> {
    dev: &'a Device,
    table: &'a AliasTable,
    planned: &'a mut BTreeSet<String>,
    visiting: BTreeSet<String>,
    d: &'a mut Decision,
}

impl Walk<'_> {
    /// Adds `m` and what it needs to the decision's loads in kmod's order; false when
    /// it cannot be loaded (not carried, or a `depends=` of it is not).
    fn chain(&mut self, m: &str, why: Why) -> bool {
        if self.planned.contains(m) {
            return true;
        }
        if !self.visiting.insert(m.to_owned()) {
            // A cycle (softdeps may form one): the module is on its way already.
            return true;
        }
        let Some(depends) = self.table.depends_of(m) else {
            // A softdep naming a module the flavour builds in or the image leaves out is
            // fine; the caller judges a missing dependency.
            return false;
        };
        let soft = self.table.softdeps_of(m).cloned().unwrap_or_default();
        for p in &soft.pre {
            self.chain(p, Why::SoftdepPreOf(m.to_owned()));
        }
        for dep in depends {
            if !self.chain(dep, Why::DependencyOf(m.to_owned())) {
                self.d.broken.push((m.to_owned(), dep.clone()));
                return false;
            }
        }
        self.planned.insert(m.to_owned());
        self.d.loads.push(Load {
            module: m.to_owned(),
            device: self.dev.path.clone(),
            modalias: self.dev.modalias.clone(),
            why,
        });
        for p in &soft.post {
            self.chain(p, Why::SoftdepPostOf(m.to_owned()));
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ModInfo;

    const STICK: &str = "usb:v0781p5581d0100dc00dsc00dp00ic08isc06ip50in00";
    const UAS_SSD: &str = "usb:v174Cp55AAd0100dc00dsc00dp00ic08isc06ip62in01";
    const RTL8153: &str = "usb:v0BDAp8153d3100dc00dsc00dp00icFFisc00ip00in00";

    /// The modules of a USB-disk image of the arm64 flavour, abridged from the pinned
    /// kernel's `.modinfo`: usb-storage depends on usbcore and scsi_mod, uas on those
    /// and usb-storage; sd_mod matches SCSI disks (type 0x00, 0x07, 0x0E).
    fn table() -> AliasTable {
        let infos: Vec<(&str, ModInfo)> = vec![
            ("usb-common", ModInfo::parse(b"depends=\0")),
            ("usbcore", ModInfo::parse(b"depends=usb-common\0")),
            ("scsi_common", ModInfo::parse(b"depends=\0")),
            ("scsi_mod", ModInfo::parse(b"depends=scsi_common\0")),
            (
                "usb-storage",
                ModInfo::parse(
                    b"alias=usb:v*p*d*dc*dsc*dp*ic08isc06ip50in*\0depends=usbcore,scsi_mod\0",
                ),
            ),
            (
                "uas",
                ModInfo::parse(
                    b"alias=usb:v*p*d*dc*dsc*dp*ic08isc06ip62in*\0depends=usbcore,scsi_mod,usb-storage\0",
                ),
            ),
            (
                "sd_mod",
                ModInfo::parse(
                    b"alias=scsi:t-0x00*\0alias=scsi:t-0x07*\0alias=scsi:t-0x0E*\0depends=scsi_mod,scsi_common\0",
                ),
            ),
            (
                "genet",
                ModInfo::parse(
                    b"softdep=pre: mdio-bcm-unimac post: bcm-phy-lib\0alias=of:N*T*Cbrcm,bcm2711-genet-v5C*\0depends=\0",
                ),
            ),
            ("mdio-bcm-unimac", ModInfo::parse(b"depends=\0")),
            ("bcm-phy-lib", ModInfo::parse(b"depends=\0")),
            ("broken", ModInfo::parse(b"alias=usb:v1234p*\0depends=not_here\0")),
        ];
        AliasTable::build(infos.iter().map(|(n, i)| (*n, i)))
    }

    fn dev(path: &str, modalias: &str, subsystem: &str, bound: bool) -> Device {
        Device {
            path: path.into(),
            modalias: modalias.into(),
            subsystem: subsystem.into(),
            bound,
        }
    }

    fn order(d: &Decision) -> Vec<&str> {
        d.loads.iter().map(|l| l.module.as_str()).collect()
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_usb_disk_gets_usb_storage_after_its_dependencies() {
        let d = decide(
            &[dev("/sys/devices/u/1-1:1.0", STICK, "usb", false)],
            &table(),
            &BTreeSet::new(),
        );
        assert_eq!(
            order(&d),
            [
                "usb_common",
                "usbcore",
                "scsi_common",
                "scsi_mod",
                "usb_storage"
            ]
        );
        let last = d.loads.last().unwrap();
        assert_eq!(
            (last.device.as_str(), last.modalias.as_str(), &last.why),
            ("/sys/devices/u/1-1:1.0", STICK, &Why::Alias)
        );
        assert_eq!(d.loads[0].why, Why::DependencyOf("usbcore".into()));
        assert!(d.no_driver.is_empty() && d.broken.is_empty());
        // With the gadget/host modules already loaded, only the driver itself.
        let d = decide(
            &[dev("/sys/devices/u/1-1:1.0", STICK, "usb", false)],
            &table(),
            &set(&["usb_common", "usbcore", "scsi_common", "scsi_mod"]),
        );
        assert_eq!(order(&d), ["usb_storage"]);
    }

    #[test]
    fn a_uas_interface_gets_uas_and_a_scsi_disk_sd_mod() {
        let done = set(&["usb_common", "usbcore", "scsi_common", "scsi_mod"]);
        let d = decide(
            &[dev("/sys/devices/u/2-1:1.0", UAS_SSD, "usb", false)],
            &table(),
            &done,
        );
        assert_eq!(order(&d), ["usb_storage", "uas"]);
        assert_eq!(d.loads[0].why, Why::DependencyOf("uas".into()));
        let d = decide(
            &[dev(
                "/sys/devices/u/host0/target0:0:0/0:0:0:0",
                "scsi:t-0x00",
                "scsi",
                false,
            )],
            &table(),
            &done,
        );
        assert_eq!(order(&d), ["sd_mod"]);
    }

    #[test]
    fn an_unknown_adapter_has_no_driver_and_bound_devices_are_skipped() {
        let devices = [
            dev("/sys/devices/u/1-2:1.0", RTL8153, "usb", false),
            // Bound already (a built-in driver): nothing to load even though it matches.
            dev("/sys/devices/u/1-1:1.0", STICK, "usb", true),
        ];
        let d = decide(&devices, &table(), &BTreeSet::new());
        assert!(d.loads.is_empty(), "{:?}", d.loads);
        assert_eq!(d.no_driver, [devices[0].clone()]);
    }

    #[test]
    fn what_is_not_worth_reporting() {
        let devices = [
            dev(
                "/sys/devices/system/cpu/cpu0",
                "cpu:type:aarch64:feature:,0000,0001",
                "cpu",
                false,
            ),
            dev(
                "/sys/devices/virtual/input/input0",
                "input:b0019v0000p0001e0000-e0,1,k74,ramlsfw",
                "input",
                false,
            ),
            dev(
                "/sys/devices/platform/timer",
                "of:NtimerT(null)Carm,armv8-timer",
                "platform",
                false,
            ),
            dev(
                "/sys/devices/platform/axp20x-adc",
                "platform:axp20x-adc",
                "platform",
                false,
            ),
            // Seen unbound in QEMU virt (pinned arm64 kernel): none is news.
            dev(
                "/sys/devices/system/cpu",
                "cpu:type:aarch64:feature:,0000",
                "",
                false,
            ),
            dev(
                "/sys/devices/platform/regulatory.0",
                "platform:regulatory",
                "platform",
                false,
            ),
            dev(
                "/sys/devices/platform/4010000000.pcie/pci0000:00/0000:00:00.0",
                "pci:v00001B36d00000008sv00001AF4sd00001100bc06sc00i00",
                "pci",
                false,
            ),
            // News: a PCI device (virtio-rng) and a SCSI CD-ROM with no driver here.
            dev(
                "/sys/devices/pci0000:00/0000:00:01.0",
                "pci:v00001AF4d00001005sv00001AF4sd00000004bc00scFFi00",
                "pci",
                false,
            ),
            dev("/sys/devices/u/0:0:0:1", "scsi:t-0x05", "scsi", false),
        ];
        let d = decide(&devices, &table(), &BTreeSet::new());
        let reported: Vec<&str> = d.no_driver.iter().map(|x| x.modalias.as_str()).collect();
        assert_eq!(
            reported,
            [devices[7].modalias.as_str(), devices[8].modalias.as_str()]
        );
    }

    #[test]
    fn a_module_is_loaded_once_per_boot() {
        let devices = [
            dev("/sys/devices/u/1-1:1.0", STICK, "usb", false),
            dev("/sys/devices/u/1-3:1.0", STICK, "usb", false),
            dev("/sys/devices/u/2-1:1.0", UAS_SSD, "usb", false),
        ];
        let d = decide(&devices, &table(), &BTreeSet::new());
        assert_eq!(
            order(&d),
            [
                "usb_common",
                "usbcore",
                "scsi_common",
                "scsi_mod",
                "usb_storage",
                "uas"
            ]
        );
        // The second stick asked for nothing: its driver was planned for the first.
        assert!(d.loads.iter().all(|l| l.device != "/sys/devices/u/1-3:1.0"));
        assert!(d.no_driver.is_empty());
        // Next scan: everything above is done; the still-unbound stick costs nothing.
        let done: BTreeSet<String> = d.loads.iter().map(|l| l.module.clone()).collect();
        let again = decide(&devices, &table(), &done);
        assert_eq!(again, Decision::default());
    }

    #[test]
    fn softdeps_pre_before_post_after() {
        let d = decide(
            &[dev(
                "/sys/devices/platform/scb/fd580000.ethernet",
                "of:NethernetT(null)Cbrcm,bcm2711-genet-v5Cbrcm,genet-v5",
                "platform",
                false,
            )],
            &table(),
            &BTreeSet::new(),
        );
        assert_eq!(order(&d), ["mdio_bcm_unimac", "genet", "bcm_phy_lib"]);
        assert_eq!(d.loads[0].why, Why::SoftdepPreOf("genet".into()));
        assert_eq!(d.loads[2].why, Why::SoftdepPostOf("genet".into()));
        assert_eq!(d.loads[2].why.to_string(), "softdep post: of genet");
    }

    #[test]
    fn a_missing_dependency_leaves_the_module_out_and_says_so() {
        let d = decide(
            &[dev(
                "/sys/devices/u/1-4:1.0",
                "usb:v1234p0001d0000dc00dsc00dp00ic00isc00ip00in00",
                "usb",
                false,
            )],
            &table(),
            &BTreeSet::new(),
        );
        assert!(d.loads.is_empty());
        assert_eq!(d.broken, [("broken".to_owned(), "not_here".to_owned())]);
        assert!(
            d.no_driver.is_empty(),
            "it has a driver in the image, a broken one"
        );
    }

    #[test]
    fn softdep_cycles_end() {
        let a = ModInfo::parse(b"alias=x:a\0softdep=pre: b\0depends=\0");
        let b = ModInfo::parse(b"softdep=pre: a\0depends=\0");
        let t = AliasTable::build([("a", &a), ("b", &b)]);
        let d = decide(&[dev("/d", "x:a", "x", false)], &t, &BTreeSet::new());
        assert_eq!(order(&d), ["b", "a"]);
    }
}
