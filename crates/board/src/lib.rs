//! Board files (`boards/<name>.toml`): the one place that parses them.
//!
//! A board file is read into [`RawBoard`] (serde, unknown fields refused) and then
//! validated into [`Board`]. Every error names the file, the field and the fix.

use std::path::{Path, PathBuf};

use benchboot_plan::GadgetFunction;
use serde::Deserialize;

/// Why a board file could not be used. Each variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    #[error("{file}: cannot read board file: {source}")]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("{file}: {message}")]
    Parse { file: PathBuf, message: String },
    #[error("{file}: field `{field}`: {message}")]
    Invalid {
        file: PathBuf,
        field: &'static str,
        message: String,
    },
    #[error("no board named `{name}` in {dir}; known boards: {known}")]
    Unknown {
        name: String,
        dir: PathBuf,
        known: String,
    },
}

/// The CPU architecture family of a Rust target, as Debian and the kernel see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    /// 32-bit ARM (ARMv6 or ARMv7), EABI hard-float userland.
    Arm,
    /// 64-bit ARM.
    Aarch64,
}

/// Rust targets the firmware is built for, with the zig triple that links them.
/// Source: toolchain.md (checked on these machines).
pub const TARGETS: &[(&str, Arch, &str)] = &[
    (
        "arm-unknown-linux-musleabihf",
        Arch::Arm,
        "arm-linux-musleabihf",
    ),
    (
        "armv7-unknown-linux-musleabihf",
        Arch::Arm,
        "arm-linux-musleabihf",
    ),
    (
        "aarch64-unknown-linux-musl",
        Arch::Aarch64,
        "aarch64-linux-musl",
    ),
];

/// Debian architectures whose kernels can boot each [`Arch`].
fn debian_arches(arch: Arch) -> &'static [&'static str] {
    match arch {
        Arch::Arm => &["armel", "armhf"],
        Arch::Aarch64 => &["arm64"],
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawBoard {
    pub name: String,
    pub description: String,
    pub target: RawTarget,
    pub kernel: RawKernel,
    /// Boot firmware files copied to the boot partition (Raspberry Pi); none for
    /// machines that take the kernel directly (QEMU virt).
    pub firmware: Option<RawFirmware>,
    pub boot: RawBoot,
    pub modules: RawModules,
    pub storage: RawStorage,
    /// USB gadget Ethernet on the board's OTG/peripheral port; none without one.
    pub gadget: Option<RawGadget>,
    pub qemu: Option<RawQemu>,
}

/// The board's USB peripheral port as a gadget (configfs, libcomposite).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawGadget {
    /// Functions in order of preference: `ncm`, `ecm`, `rndis`.
    pub functions: Vec<String>,
    /// Modules for the UDC and the functions (dependencies are resolved from .modinfo).
    pub modules: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawTarget {
    pub triple: String,
    pub rustc_cpu: String,
    pub zig_cpu: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawKernel {
    pub package: String,
    pub release: String,
    pub arch: String,
    /// DTB file name in the kernel package; none where the machine provides its own
    /// (QEMU virt generates one).
    pub dtb: Option<String>,
    #[serde(default)]
    pub dtb_fixups: Vec<DtbFixup>,
}

/// One string property written into the DTB before it goes on the card.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DtbFixup {
    /// Absolute node path, e.g. `/soc/usb@7e980000`.
    pub node: String,
    pub property: String,
    pub value: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawFirmware {
    pub package: String,
    pub dir: String,
    pub files: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawBoot {
    #[serde(default)]
    pub config_txt: Vec<String>,
    pub cmdline: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawModules {
    pub load: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawStorage {
    pub disk: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawQemu {
    pub system: String,
    pub machine: String,
    pub console_serial_index: u8,
    #[serde(default)]
    pub append: String,
    #[serde(default)]
    pub args: Vec<String>,
    pub network: String,
    /// How the card image is attached: `sd` (default) or `virtio`.
    #[serde(default)]
    pub drive: Option<String>,
    /// `dummy-hcd`: the QEMU plan tests the gadget against the kernel's dummy_hcd
    /// (both USB ends in the guest); absent: the QEMU plan has no gadget.
    #[serde(default)]
    pub gadget: Option<String>,
    #[serde(default)]
    pub modules: Vec<String>,
    #[serde(default)]
    pub dtb_fixups: Vec<DtbFixup>,
}

/// A validated board. Built only by [`Board::from_toml`] / [`load`].
#[derive(Debug, Clone)]
pub struct Board {
    pub name: String,
    pub description: String,
    /// Rust target triple of the firmware, e.g. `arm-unknown-linux-musleabihf`.
    pub triple: String,
    pub arch: Arch,
    /// CPU for `rustc -C target-cpu=`.
    pub rustc_cpu: String,
    /// The same CPU as zig spells it for `-mcpu=`.
    pub zig_cpu: String,
    /// Target triple as zig spells it for `-target`.
    pub zig_triple: String,
    pub kernel: RawKernel,
    pub firmware: Option<RawFirmware>,
    pub boot: RawBoot,
    /// Modules the init loads (names without `.ko`), before dependency resolution.
    pub modules: Vec<String>,
    pub gadget: Option<Gadget>,
    /// Kernel name of the SD card / disk holding the test partitions, e.g. `mmcblk0`.
    pub disk: String,
    pub qemu: Option<Qemu>,
}

/// How the QEMU smoke tier boots this board.
#[derive(Debug, Clone)]
pub struct Qemu {
    pub system: String,
    pub machine: String,
    /// Which `-serial` carries the console (0 = first).
    pub console_serial_index: u8,
    /// Appended to the card's cmdline.txt for QEMU only.
    pub append: String,
    pub args: Vec<String>,
    pub network: QemuNetwork,
    /// Extra modules for the QEMU-only results link.
    pub modules: Vec<String>,
    /// Applied to a QEMU-only copy of the card's DTB (the card keeps its own).
    pub dtb_fixups: Vec<DtbFixup>,
    pub drive: QemuDrive,
    /// True: the QEMU plan runs the gadget against `dummy_hcd` inside the guest.
    pub gadget_dummy_hcd: bool,
}

/// The board's gadget: functions and the modules that provide them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gadget {
    pub functions: Vec<GadgetFunction>,
    pub modules: Vec<String>,
}

/// How QEMU attaches the card image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QemuDrive {
    /// `-drive if=sd` (the Pi machines' SD controller); the guest sees `mmcblk0`.
    Sd,
    /// virtio-blk on virtio-mmio (`virt`); the guest sees `vda`.
    Virtio,
}

/// The emulated device that carries the results link in QEMU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QemuNetwork {
    /// `-device usb-net`: the guest binds it with cdc_ether as `usb0`.
    UsbNet,
    /// `-device virtio-net-device` (virtio-mmio, `virt`): the guest's `eth0`.
    VirtioNet,
}

impl Board {
    /// Parses and validates one board file's text. `file` is used in error messages.
    ///
    /// # Errors
    /// [`BoardError::Parse`] for TOML/shape errors (unknown or missing fields),
    /// [`BoardError::Invalid`] for values that parse but cannot work.
    pub fn from_toml(file: &Path, text: &str) -> Result<Board, BoardError> {
        let raw: RawBoard = toml::from_str(text).map_err(|e| BoardError::Parse {
            file: file.to_owned(),
            message: e.to_string(),
        })?;
        raw.validate(file)
    }
}

impl RawBoard {
    /// Checks every field that can be checked without the packages themselves.
    pub fn validate(self, file: &Path) -> Result<Board, BoardError> {
        let bad = |field: &'static str, message: String| BoardError::Invalid {
            file: file.to_owned(),
            field,
            message,
        };
        if let Some(stem) = file.file_stem().and_then(|s| s.to_str()) {
            if stem != self.name {
                return Err(bad(
                    "name",
                    format!(
                        "is `{}` but the file is `{stem}.toml`: make them equal",
                        self.name
                    ),
                ));
            }
        }
        if self.name.is_empty()
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(bad("name", "use lowercase letters, digits and `-`".into()));
        }
        let Some(&(_, arch, zig_triple)) =
            TARGETS.iter().find(|(t, _, _)| *t == self.target.triple)
        else {
            let known: Vec<_> = TARGETS.iter().map(|t| t.0).collect();
            return Err(bad(
                "target.triple",
                format!(
                    "`{}` is not supported; use one of {}",
                    self.target.triple,
                    known.join(", ")
                ),
            ));
        };
        if !debian_arches(arch).contains(&self.kernel.arch.as_str()) {
            return Err(bad(
                "kernel.arch",
                format!(
                    "`{}` kernels cannot run `{}` binaries; use one of {}",
                    self.kernel.arch,
                    self.target.triple,
                    debian_arches(arch).join(", ")
                ),
            ));
        }
        if !self.kernel.package.ends_with(&self.kernel.release) {
            return Err(bad(
                "kernel.release",
                format!(
                    "`{}` does not match package `{}` (Debian names it linux-image-<release>)",
                    self.kernel.release, self.kernel.package
                ),
            ));
        }
        if let Some(dtb) = &self.kernel.dtb {
            if !dtb.ends_with(".dtb") || dtb.contains("..") {
                return Err(bad(
                    "kernel.dtb",
                    "give a file name ending in `.dtb`".into(),
                ));
            }
        } else if !self.kernel.dtb_fixups.is_empty() {
            return Err(bad(
                "kernel.dtb-fixups",
                "there is no `kernel.dtb` to fix up: name the DTB or drop the fix-ups".into(),
            ));
        }
        let qemu_fixups = self.qemu.iter().flat_map(|q| q.dtb_fixups.iter());
        for fixup in self.kernel.dtb_fixups.iter().chain(qemu_fixups) {
            if !fixup.node.starts_with('/') {
                return Err(bad(
                    "kernel.dtb-fixups.node",
                    format!("`{}` must be an absolute node path", fixup.node),
                ));
            }
        }
        let fw_files = self.firmware.iter().flat_map(|f| f.files.iter());
        if self.firmware.as_ref().is_some_and(|f| f.files.is_empty()) {
            return Err(bad("firmware.files", "list the boot firmware files".into()));
        }
        for f in fw_files {
            if f.contains('/') || f.is_empty() {
                return Err(bad(
                    "firmware.files",
                    format!("`{f}` must be a bare file name"),
                ));
            }
        }
        if self.boot.cmdline.contains('\n') {
            return Err(bad("boot.cmdline", "must be one line".into()));
        }
        for line in &self.boot.config_txt {
            let key = line.split('=').next().unwrap_or("").trim();
            if ["kernel", "initramfs", "device_tree"].contains(&key)
                || line.starts_with("initramfs ")
            {
                return Err(bad(
                    "boot.config-txt",
                    format!("`{line}`: the image plan writes `{key}` itself; remove the line"),
                ));
            }
        }
        let modules = self.modules.load;
        check_module_names(&modules).map_err(|m| bad("modules.load", m))?;
        if self.storage.disk.is_empty() || self.storage.disk.contains('/') {
            return Err(bad(
                "storage.disk",
                "give the kernel name, e.g. `mmcblk0`".into(),
            ));
        }
        let gadget = match self.gadget {
            None => None,
            Some(g) => {
                let mut functions = Vec::new();
                for f in &g.functions {
                    let func = match f.as_str() {
                        "ncm" => GadgetFunction::Ncm,
                        "ecm" => GadgetFunction::Ecm,
                        "rndis" => GadgetFunction::Rndis,
                        other => {
                            return Err(bad(
                                "gadget.functions",
                                format!("`{other}` is not one of ncm, ecm, rndis"),
                            ))
                        }
                    };
                    if functions.contains(&func) {
                        return Err(bad("gadget.functions", format!("`{f}` is listed twice")));
                    }
                    functions.push(func);
                }
                if functions.is_empty() {
                    return Err(bad(
                        "gadget.functions",
                        "list at least one of ncm, ecm, rndis".into(),
                    ));
                }
                check_module_names(&g.modules).map_err(|m| bad("gadget.modules", m))?;
                Some(Gadget {
                    functions,
                    modules: g.modules,
                })
            }
        };
        let qemu = match self.qemu {
            None => None,
            Some(q) => {
                let network = match q.network.as_str() {
                    "usb-net" => QemuNetwork::UsbNet,
                    "virtio-net" => QemuNetwork::VirtioNet,
                    other => {
                        return Err(bad(
                            "qemu.network",
                            format!("`{other}` is not supported; use `usb-net` or `virtio-net`"),
                        ))
                    }
                };
                let drive = match q.drive.as_deref() {
                    None | Some("sd") => QemuDrive::Sd,
                    Some("virtio") => QemuDrive::Virtio,
                    Some(other) => {
                        return Err(bad(
                            "qemu.drive",
                            format!("`{other}` is not supported; use `sd` or `virtio`"),
                        ))
                    }
                };
                let gadget_dummy_hcd = match q.gadget.as_deref() {
                    None => false,
                    Some("dummy-hcd") if gadget.is_some() => true,
                    Some("dummy-hcd") => {
                        return Err(bad(
                            "qemu.gadget",
                            "needs a [gadget] section to test".into(),
                        ))
                    }
                    Some(other) => {
                        return Err(bad(
                            "qemu.gadget",
                            format!("`{other}` is not supported; use `dummy-hcd` or leave it out"),
                        ))
                    }
                };
                check_module_names(&q.modules).map_err(|m| bad("qemu.modules", m))?;
                Some(Qemu {
                    system: q.system,
                    machine: q.machine,
                    console_serial_index: q.console_serial_index,
                    append: q.append,
                    args: q.args,
                    network,
                    modules: q.modules,
                    dtb_fixups: q.dtb_fixups,
                    drive,
                    gadget_dummy_hcd,
                })
            }
        };
        Ok(Board {
            name: self.name,
            description: self.description,
            triple: self.target.triple,
            arch,
            rustc_cpu: self.target.rustc_cpu,
            zig_cpu: self.target.zig_cpu,
            zig_triple: zig_triple.to_owned(),
            kernel: self.kernel,
            firmware: self.firmware,
            boot: self.boot,
            modules,
            gadget,
            disk: self.storage.disk,
            qemu,
        })
    }
}

fn check_module_names(names: &[String]) -> Result<(), String> {
    for m in names {
        if m.is_empty() || m.ends_with(".ko") || m.contains('/') {
            return Err(format!("`{m}`: give the module name without path or `.ko`"));
        }
    }
    Ok(())
}

/// Loads `<dir>/<name>.toml`.
///
/// # Errors
/// [`BoardError::Unknown`] (listing the known boards) when the file does not exist,
/// else as [`Board::from_toml`].
pub fn load(dir: &Path, name: &str) -> Result<Board, BoardError> {
    let file = dir.join(format!("{name}.toml"));
    if !file.is_file() {
        let known = list(dir).unwrap_or_default().join(", ");
        return Err(BoardError::Unknown {
            name: name.to_owned(),
            dir: dir.to_owned(),
            known,
        });
    }
    let text = std::fs::read_to_string(&file).map_err(|source| BoardError::Read {
        file: file.clone(),
        source,
    })?;
    Board::from_toml(&file, &text)
}

/// Names of the board files in `dir`, sorted.
pub fn list(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "toml") {
            if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
                if !stem.ends_with(".lock") && stem != "packages" {
                    names.push(stem.to_owned());
                }
            }
        }
    }
    names.sort();
    Ok(names)
}

/// The `boards/` folder of this repository.
pub fn boards_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../boards")
}

#[cfg(test)]
mod tests;
