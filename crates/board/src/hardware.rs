//! `[hardware]`: the device-tree nodes a board's plan depends on, whose driver chains
//! `cargo xtask image` proves (xtask/src/drivers.rs), and their checks.

use std::path::Path;

use serde::Deserialize;

use crate::BoardError;

/// `[hardware]`: the DTB nodes each part of the plan needs (node paths as `fdtget`
/// takes them), and what the check may not demand.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawHardware {
    /// The SD host of the boot card.
    pub card: Option<String>,
    /// The first CPU: its `cpu-supply` and clocks are cpufreq's chain.
    pub cpu: Option<String>,
    /// The USB device controller of `[gadget]`.
    pub udc: Option<String>,
    /// The MAC of `[ethernet]`.
    pub ethernet: Option<String>,
    /// The USB host controllers behind `[usb-ethernet]` and USB disks.
    #[serde(default)]
    pub usb_host: Vec<String>,
    /// The SATA controller of a `bus = "sata"` disk.
    pub sata: Option<String>,
    /// The SD host the `[wifi]` radio sits on.
    pub radio: Option<String>,
    /// The SoC temperature sensor.
    pub thermal: Option<String>,
    /// The SoC watchdog.
    pub watchdog: Option<String>,
    /// Further nodes a driver needs that no DT reference shows (an IIO channel a driver
    /// asks for by name).
    #[serde(default)]
    pub also: Vec<String>,
    /// Nodes the check skips, each with the reason (e.g. a regulator no driver of this
    /// kernel serves, and what the board loses).
    #[serde(default)]
    pub waive: Vec<RawWaiver>,
    /// Nodes served by an MFD cell (a platform driver matched by name, not by a
    /// compatible): the node and the module.
    #[serde(default)]
    pub cells: Vec<RawCell>,
    /// Firmware files a module names but never asks for on this board, with why.
    #[serde(default)]
    pub firmware_waive: Vec<RawFirmwareWaiver>,
    /// Modules of the board's hardware lists (`modules.load`, the gadget's, Ethernet's,
    /// USB Ethernet's, WiFi's, extra storage's; `@set` allowed) whose removal the check
    /// cannot catch, each with why (no DT node names it: a filesystem, a USB adapter's
    /// driver, a PHY driver phylib matches by PHY ID; or a dependency of another listed
    /// module, loaded anyway). The drivers mutation test fails on a module whose
    /// removal passes the check and is not here, and on one here whose removal fails it.
    #[serde(default)]
    pub optional_modules: Vec<RawOptionalModule>,
}

/// A module the driver-chain check cannot prove needed, and why.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOptionalModule {
    /// A module name (`ext4`) or a module set (`@filesystems`).
    pub module: String,
    pub why: String,
}

/// One module of `[hardware] optional-modules`, sets expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionalModule {
    /// The module as the board's lists spell it.
    pub module: String,
    pub why: String,
}

/// A node the driver-chain check skips.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWaiver {
    pub node: String,
    pub reason: String,
}

/// A node served by an MFD cell's module.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCell {
    pub node: String,
    pub module: String,
}

/// A `firmware=` file the check does not demand.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFirmwareWaiver {
    pub file: String,
    pub reason: String,
}

/// `[hardware]` validated: the roots as (role, node path), in the order checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hardware {
    pub roots: Vec<(String, String)>,
    pub waive: Vec<RawWaiver>,
    pub cells: Vec<RawCell>,
    pub firmware_waive: Vec<RawFirmwareWaiver>,
    /// Filled by [`InFile::optional_modules`] once the module lists are expanded.
    pub optional_modules: Vec<OptionalModule>,
}

/// What a board has, for the roots `[hardware]` must name.
pub(crate) struct Features {
    pub(crate) hardware: bool,
    pub(crate) gadget: bool,
    pub(crate) ethernet: bool,
    pub(crate) usb_host: bool,
    pub(crate) sata: bool,
    pub(crate) radio: bool,
}

/// The board file a `[hardware]` section is checked in: its errors name it.
pub(crate) struct InFile<'a>(pub(crate) &'a Path);

impl InFile<'_> {
    /// [`BoardError::Invalid`] for `field` of this file.
    fn bad(&self, field: &'static str, message: impl Into<String>) -> BoardError {
        BoardError::Invalid {
            file: self.0.to_owned(),
            field,
            message: message.into(),
        }
    }

    /// `[hardware]`: required on hardware (a DTB and a boot loader), with a node for
    /// every part the board has; refused elsewhere.
    pub(crate) fn hardware(
        &self,
        raw: Option<RawHardware>,
        f: &Features,
    ) -> Result<Option<Hardware>, BoardError> {
        let Some(raw) = raw else {
            if f.hardware {
                return Err(self.bad(
                    "hardware",
                    "a hardware board needs [hardware] naming the DTB nodes its plan depends \
                     on (card, cpu, and udc/ethernet/usb-host/sata/radio for what it has)",
                ));
            }
            return Ok(None);
        };
        if !f.hardware {
            return Err(self.bad(
                "hardware",
                "only a board with its own DTB and boot loader has [hardware]",
            ));
        }
        let mut roots = Vec::new();
        let mut one = |field: &'static str, node: &Option<String>, needed: bool| match node {
            Some(n) if n.starts_with('/') => {
                roots.push((field.trim_start_matches("hardware.").to_owned(), n.clone()));
                Ok(())
            }
            Some(n) => Err(self.bad(
                field,
                format!("`{n}`: give the node's full path, e.g. /soc/mmc@7e300000"),
            )),
            None if needed => Err(self.bad(field, "missing: name the DTB node (full path)")),
            None => Ok(()),
        };
        one("hardware.card", &raw.card, true)?;
        one("hardware.cpu", &raw.cpu, true)?;
        one("hardware.udc", &raw.udc, f.gadget)?;
        one("hardware.ethernet", &raw.ethernet, f.ethernet)?;
        one("hardware.sata", &raw.sata, f.sata)?;
        one("hardware.radio", &raw.radio, f.radio)?;
        one("hardware.thermal", &raw.thermal, false)?;
        one("hardware.watchdog", &raw.watchdog, false)?;
        if f.usb_host && raw.usb_host.is_empty() {
            return Err(self.bad(
                "hardware.usb-host",
                "missing: name the USB host controller node(s)",
            ));
        }
        for n in &raw.usb_host {
            one("hardware.usb-host", &Some(n.clone()), true)?;
        }
        for n in &raw.also {
            one("hardware.also", &Some(n.clone()), true)?;
        }
        if let Some(w) = raw.waive.iter().find(|w| w.reason.trim().is_empty()) {
            return Err(self.bad(
                "hardware.waive",
                format!("{}: a waiver needs its reason", w.node),
            ));
        }
        if let Some(w) = raw
            .firmware_waive
            .iter()
            .find(|w| w.reason.trim().is_empty())
        {
            return Err(self.bad(
                "hardware.firmware-waive",
                format!("{}: a waiver needs its reason", w.file),
            ));
        }
        Ok(Some(Hardware {
            roots,
            waive: raw.waive,
            cells: raw.cells,
            firmware_waive: raw.firmware_waive,
            optional_modules: Vec::new(),
        }))
    }

    /// `[hardware] optional-modules` checked against the board's hardware module lists
    /// (`listed`, sets expanded); `expand` expands one entry's `@set`. Each entry needs
    /// its reason, names a listed module (`-` and `_` alike, as the kernel matches
    /// names) and comes once.
    pub(crate) fn optional_modules(
        &self,
        raw: &[RawOptionalModule],
        listed: &[String],
        expand: &dyn Fn(&str) -> Result<Vec<String>, BoardError>,
    ) -> Result<Vec<OptionalModule>, BoardError> {
        const FIELD: &str = "hardware.optional-modules";
        let canonical = |m: &str| m.replace('-', "_");
        let mut out: Vec<OptionalModule> = Vec::new();
        for r in raw {
            if r.why.trim().is_empty() {
                return Err(self.bad(
                    FIELD,
                    format!(
                        "`{}`: say why the check cannot catch its removal (why = \"...\")",
                        r.module
                    ),
                ));
            }
            for m in expand(&r.module)? {
                if !listed.iter().any(|l| canonical(l) == canonical(&m)) {
                    return Err(self.bad(
                        FIELD,
                        format!(
                            "`{m}` is in none of the board's module lists (modules.load, \
                             gadget/ethernet/usb-ethernet/wifi/storage.extra modules): fix \
                             the name or remove the entry"
                        ),
                    ));
                }
                if out.iter().any(|o| canonical(&o.module) == canonical(&m)) {
                    return Err(self.bad(FIELD, format!("`{m}` is declared twice: keep one entry")));
                }
                out.push(OptionalModule {
                    module: m,
                    why: r.why.clone(),
                });
            }
        }
        Ok(out)
    }
}
