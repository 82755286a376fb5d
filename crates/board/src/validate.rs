//! [`RawBoard::validate`]: a board file as written into a [`Board`], one function per
//! section of the file, checked in the order the file reads (name, target, kernel,
//! boot, serial, modules, storage, gadget, ethernet, usb-ethernet, wifi, qemu). The first
//! problem found is the error; it names the file and the field.

use crate::hardware::{Features, InFile};
use crate::QemuWifi;
use std::path::Path;

use benchboot_plan::GadgetFunction;
use benchboot_wifi::channel::{Band, Width};

use crate::shared::{check_relative_path, BootConfig, Kernel, Loader, Shared};
use crate::{
    debian_arches, Arch, Board, BoardError, BoardKernel, Boot, DtbFixup, Ethernet, ExtraStorage,
    Gadget, RawBoard, RawBoot, RawDtbFixup, RawEthernet, RawGadget, RawKernel, RawSerial,
    RawStorage, RawTarget, RawUsbEthernet, RawWifi, Serial, StorageBus, UsbEthernet, WifiRadio,
    ETHERNET_RATES_MBIT, TARGETS, WIFI_BANDS, WIFI_WIDTHS_MHZ,
};

/// The file being validated and the shared pieces it names.
pub(crate) struct Check<'a> {
    file: &'a Path,
    shared: &'a Shared,
}

/// What [`Check::target`] finds for a target triple.
struct Target {
    arch: Arch,
    /// The triple as zig spells it.
    zig_triple: &'static str,
}

/// What [`Check::storage`] gives: the test disk and the storage besides it.
struct Storage {
    disk: String,
    extra: Vec<ExtraStorage>,
}

impl Check<'_> {
    /// [`BoardError::Invalid`] for `field` of this file.
    pub(crate) fn bad(&self, field: &'static str, message: impl Into<String>) -> BoardError {
        BoardError::Invalid {
            file: self.file.to_owned(),
            field,
            message: message.into(),
        }
    }

    /// A module list with its `@set`s expanded ([`Shared::expand_modules`]).
    fn expand(&self, field: &'static str, list: &[String]) -> Result<Vec<String>, BoardError> {
        self.shared
            .expand_modules(list)
            .map_err(|e| self.bad(field, e.to_string()))
    }

    /// A loader of shared.toml by name; `None` stays `None`.
    fn loader(
        &self,
        field: &'static str,
        name: Option<&str>,
    ) -> Result<Option<Loader>, BoardError> {
        name.map(|name| {
            self.shared
                .loader(name)
                .cloned()
                .map_err(|e| self.bad(field, e.to_string()))
        })
        .transpose()
    }

    /// `name`: equal to the file's stem; lowercase letters, digits and `-`.
    fn name(&self, name: &str) -> Result<(), BoardError> {
        if let Some(stem) = self.file.file_stem().and_then(|s| s.to_str()) {
            if stem != name {
                return Err(self.bad(
                    "name",
                    format!("is `{name}` but the file is `{stem}.toml`: make them equal"),
                ));
            }
        }
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(self.bad("name", "use lowercase letters, digits and `-`"));
        }
        Ok(())
    }

    /// `target.triple`: one of [`TARGETS`].
    fn target(&self, t: &RawTarget) -> Result<Target, BoardError> {
        let Some(&(_, arch, zig_triple)) = TARGETS.iter().find(|(name, _, _)| *name == t.triple)
        else {
            let known: Vec<_> = TARGETS.iter().map(|t| t.0).collect();
            return Err(self.bad(
                "target.triple",
                format!(
                    "`{}` is not supported; use one of {}",
                    t.triple,
                    known.join(", ")
                ),
            ));
        };
        Ok(Target { arch, zig_triple })
    }

    /// `[kernel]`: a flavour of shared.toml that runs `triple`'s binaries, a DTB file
    /// name (the QEMU stand-in's too, `qemu_dtb`), fix-ups only of a named DTB.
    fn kernel(
        &self,
        k: RawKernel,
        triple: &str,
        arch: Arch,
        qemu_dtb: Option<&String>,
    ) -> Result<BoardKernel, BoardError> {
        let flavour: &Kernel = self
            .shared
            .kernel(&k.flavour)
            .map_err(|e| self.bad("kernel.flavour", e.to_string()))?;
        if !debian_arches(arch).contains(&flavour.arch.as_str()) {
            return Err(self.bad(
                "kernel.flavour",
                format!(
                    "`{}` is an {} kernel: it cannot run `{triple}` binaries; use a flavour for {}",
                    k.flavour,
                    flavour.arch,
                    debian_arches(arch).join(", ")
                ),
            ));
        }
        for dtb in k.dtb.iter().chain(qemu_dtb) {
            if !dtb.ends_with(".dtb") || dtb.contains("..") || dtb.contains('/') {
                return Err(self.bad(
                    "kernel.dtb",
                    format!("`{dtb}`: give a file name ending in `.dtb`"),
                ));
            }
        }
        if k.dtb.is_none() && !k.dtb_fixups.is_empty() {
            return Err(self.bad(
                "kernel.dtb-fixups",
                "there is no `kernel.dtb` to fix up: name the DTB or drop the fix-ups",
            ));
        }
        let dtb_fixups = self.dtb_fixups(k.dtb_fixups, "kernel.dtb-fixups")?;
        Ok(BoardKernel {
            package: flavour.package.clone(),
            release: flavour.release.clone(),
            arch: flavour.arch.clone(),
            flavour: k.flavour,
            dtb: k.dtb,
            dtb_fixups,
        })
    }

    /// `kernel.dtb-fixups` / `qemu.dtb-fixups`: absolute node paths, one action each.
    fn dtb_fixups(
        &self,
        raw: Vec<RawDtbFixup>,
        field: &'static str,
    ) -> Result<Vec<DtbFixup>, BoardError> {
        raw.into_iter()
            .map(|f| {
                if !f.node.starts_with('/') {
                    return Err(
                        self.bad(field, format!("`{}` must be an absolute node path", f.node))
                    );
                }
                match (f.property, f.value, f.delete_property, f.delete_node) {
                    (Some(property), Some(value), None, false) => Ok(DtbFixup::Set {
                        node: f.node,
                        property,
                        value,
                    }),
                    (None, None, Some(property), false) => Ok(DtbFixup::DeleteProperty {
                        node: f.node,
                        property,
                    }),
                    (None, None, None, true) => Ok(DtbFixup::DeleteNode { node: f.node }),
                    _ => Err(self.bad(
                        field,
                        format!(
                            "`{}`: give `property` + `value`, or `delete-property`, or \
                             `delete-node = true` (one of the three)",
                            f.node
                        ),
                    )),
                }
            })
            .collect()
    }

    /// `[boot]` after `boot.loader` (resolved by the caller): a one-line command line
    /// without `console=`, a console device with its speed, config.txt lines only for a
    /// `config-txt` loader and none the image plan writes itself.
    fn boot(&self, b: RawBoot, loader: Option<&Loader>) -> Result<Boot, BoardError> {
        if b.cmdline.contains('\n') {
            return Err(self.bad("boot.cmdline", "must be one line"));
        }
        if b.cmdline.contains("console=") {
            return Err(self.bad(
                "boot.cmdline",
                "name the console in `boot.console`, not in the command line",
            ));
        }
        if b.console.is_empty() || b.console.contains(' ') {
            return Err(self.bad(
                "boot.console",
                "give the kernel's console device and speed, e.g. `ttyS1,115200`",
            ));
        }
        let config_txt_loader = loader.is_some_and(|l| l.config == BootConfig::ConfigTxt);
        if !b.config_txt.is_empty() && !config_txt_loader {
            return Err(self.bad(
                "boot.config-txt",
                "only Raspberry Pi firmware reads config.txt: remove the lines or use a \
                 `config-txt` loader",
            ));
        }
        for line in &b.config_txt {
            let key = line.split('=').next().unwrap_or("").trim();
            if ["kernel", "initramfs", "device_tree"].contains(&key)
                || line.starts_with("initramfs ")
            {
                return Err(self.bad(
                    "boot.config-txt",
                    format!("`{line}`: the image plan writes `{key}` itself; remove the line"),
                ));
            }
        }
        let cmdline = format!("console={} {}", b.console, b.cmdline.trim());
        Ok(Boot {
            console: b.console,
            config_txt: b.config_txt,
            cmdline: cmdline.trim_end().to_owned(),
            power_on: b.power_on,
        })
    }

    /// `[serial]`: on hardware (`hardware`: the board boots from its card), where the
    /// console's pins are, in one line, and a UART logic level.
    fn serial(&self, s: Option<RawSerial>, hardware: bool) -> Result<Option<Serial>, BoardError> {
        let Some(s) = s else {
            if hardware {
                return Err(self.bad(
                    "serial",
                    "a board with a `boot.loader` runs on hardware: add a [serial] table with \
                     the console's `pins` and `volts`, for the person who watches it",
                ));
            }
            return Ok(None);
        };
        if s.pins.trim().is_empty() || s.pins.contains('\n') {
            return Err(self.bad(
                "serial.pins",
                "say in one line which pins carry TX, RX and GND, e.g. `header pin 8 (GPIO14, \
                 TXD), pin 10 (GPIO15, RXD), pin 6 (GND)`",
            ));
        }
        if ![1.8, 3.3, 5.0].contains(&s.volts) {
            return Err(self.bad(
                "serial.volts",
                format!("`{}` is not a UART logic level; use 1.8, 3.3 or 5", s.volts),
            ));
        }
        Ok(Some(Serial {
            pins: s.pins,
            volts: s.volts,
        }))
    }

    /// `[storage]`: the disk's kernel name, extra storage on a known bus.
    fn storage(&self, s: RawStorage) -> Result<Storage, BoardError> {
        if s.disk.is_empty() || s.disk.contains('/') {
            return Err(self.bad("storage.disk", "give the kernel name, e.g. `mmcblk0`"));
        }
        let mut extra = Vec::new();
        for e in &s.extra {
            let Some(bus) = StorageBus::from_name(&e.bus) else {
                return Err(self.bad(
                    "storage.extra.bus",
                    format!("`{}` is not one of usb, sata, virtio", e.bus),
                ));
            };
            extra.push(ExtraStorage {
                bus,
                modules: self.expand("storage.extra.modules", &e.modules)?,
            });
        }
        Ok(Storage {
            disk: s.disk,
            extra,
        })
    }

    /// `[gadget]`: known functions, each once, at least one; on hardware (`hardware`)
    /// the port in one line.
    fn gadget(&self, g: RawGadget, hardware: bool) -> Result<Gadget, BoardError> {
        let mut functions = Vec::new();
        for f in &g.functions {
            let func = match f.as_str() {
                "ncm" => GadgetFunction::Ncm,
                "ecm" => GadgetFunction::Ecm,
                "rndis" => GadgetFunction::Rndis,
                other => {
                    return Err(self.bad(
                        "gadget.functions",
                        format!("`{other}` is not one of ncm, ecm, rndis"),
                    ))
                }
            };
            if functions.contains(&func) {
                return Err(self.bad("gadget.functions", format!("`{f}` is listed twice")));
            }
            functions.push(func);
        }
        if functions.is_empty() {
            return Err(self.bad("gadget.functions", "list at least one of ncm, ecm, rndis"));
        }
        let modules = self.expand("gadget.modules", &g.modules)?;
        match &g.port {
            None if hardware => {
                return Err(self.bad(
                    "gadget.port",
                    "a board with a `boot.loader` runs on hardware: say which connector the \
                     USB cable goes into and how the board is powered then, e.g. `the mini-USB \
                     OTG port (power the board from its own supply)`",
                ))
            }
            Some(p) if p.trim().is_empty() || p.contains('\n') => {
                return Err(self.bad(
                    "gadget.port",
                    "name the connector in one line, e.g. `the USB-C port`",
                ))
            }
            _ => {}
        }
        Ok(Gadget {
            functions,
            modules,
            port: g.port,
        })
    }

    /// `[ethernet]`: an interface name, driver names, a link speed.
    fn ethernet(&self, e: RawEthernet) -> Result<Ethernet, BoardError> {
        if e.interface.is_empty() || e.interface.contains('/') {
            return Err(self.bad(
                "ethernet.interface",
                "give the kernel's interface name, e.g. `eth0`",
            ));
        }
        self.drivers("ethernet.drivers", &e.drivers)?;
        if !ETHERNET_RATES_MBIT.contains(&e.rated_mbit) {
            return Err(self.bad(
                "ethernet.rated-mbit",
                format!(
                    "`{}` is not an Ethernet link speed; give what the port is rated for, \
                     Mbit/s: one of {}",
                    e.rated_mbit,
                    ETHERNET_RATES_MBIT
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        Ok(Ethernet {
            interface: e.interface,
            modules: self.expand("ethernet.modules", &e.modules)?,
            drivers: e.drivers,
            rated_mbit: e.rated_mbit,
        })
    }

    /// `[usb-ethernet]`: modules, driver names, the port in one line.
    fn usb_ethernet(&self, u: RawUsbEthernet) -> Result<UsbEthernet, BoardError> {
        let modules = self.expand("usb-ethernet.modules", &u.modules)?;
        if modules.is_empty() {
            return Err(self.bad(
                "usb-ethernet.modules",
                "list the adapters' driver modules, e.g. `@usb-ethernet`",
            ));
        }
        self.drivers("usb-ethernet.drivers", &u.drivers)?;
        if u.port.trim().is_empty() || u.port.contains('\n') {
            return Err(self.bad(
                "usb-ethernet.port",
                "name the USB host connector(s) in one line, e.g. `one of the four USB-A ports`",
            ));
        }
        Ok(UsbEthernet {
            modules,
            drivers: u.drivers,
            port: u.port,
        })
    }

    /// `ethernet.drivers` / `usb-ethernet.drivers`: at least one, each a sysfs driver
    /// name (no `/`, no spaces), each once.
    fn drivers(&self, field: &'static str, drivers: &[String]) -> Result<(), BoardError> {
        if drivers.is_empty() {
            return Err(self.bad(
                field,
                "list the kernel driver(s) as `/sys/class/net/<if>/device/driver` names \
                 them, e.g. `smsc95xx`: PID 1 finds the interface by its driver",
            ));
        }
        for (i, d) in drivers.iter().enumerate() {
            if d.is_empty() || d.contains('/') || d.contains(char::is_whitespace) {
                return Err(self.bad(
                    field,
                    format!("`{d}`: give the driver's name as sysfs shows it, e.g. `bcmgenet`"),
                ));
            }
            if drivers[..i].contains(d) {
                return Err(self.bad(field, format!("`{d}` is listed twice")));
            }
        }
        Ok(())
    }

    /// `[wifi]`: the chip in one line, known bands and widths (80/160 MHz only with 5
    /// GHz), 1-8 streams, firmware paths below /lib/firmware, the driver among the
    /// modules, a firmware-missing note in one line.
    fn wifi(&self, w: RawWifi) -> Result<WifiRadio, BoardError> {
        let one_line = |s: &str| !s.trim().is_empty() && !s.contains('\n');
        if !one_line(&w.chip) {
            return Err(self.bad(
                "wifi.chip",
                "name the radio chip in one line, with the name it reports: `CYW43438 (BCM43430/1)`",
            ));
        }
        let mut bands: Vec<Band> = Vec::new();
        for b in &w.bands {
            let Some(band) = WIFI_BANDS.iter().copied().find(|k| k.name() == b) else {
                return Err(self.bad(
                    "wifi.bands",
                    format!("`{b}` is not a band; use \"2.4\" or \"5\" (GHz)"),
                ));
            };
            if bands.contains(&band) {
                return Err(self.bad("wifi.bands", format!("`{b}` is listed twice")));
            }
            bands.push(band);
        }
        if bands.is_empty() {
            return Err(self.bad("wifi.bands", "list the radio's bands: \"2.4\", \"5\""));
        }
        for &mhz in &w.widths_mhz {
            if Width::from_mhz(mhz).is_none() {
                return Err(self.bad(
                    "wifi.widths-mhz",
                    format!(
                        "`{mhz}` is not a channel width; use MHz: {}",
                        WIFI_WIDTHS_MHZ
                            .iter()
                            .map(u32::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
            if mhz >= 80 && !bands.contains(&Band::Ghz5) {
                return Err(self.bad(
                    "wifi.widths-mhz",
                    format!("{mhz} MHz channels exist only at 5 GHz: add \"5\" to wifi.bands or drop {mhz}"),
                ));
            }
        }
        if w.widths_mhz.first() != Some(&20) || !w.widths_mhz.windows(2).all(|p| p[0] < p[1]) {
            return Err(self.bad(
                "wifi.widths-mhz",
                "list each width once, narrowest first, starting at 20: e.g. `[20, 40, 80]`",
            ));
        }
        if !(1..=8).contains(&w.streams) {
            return Err(self.bad(
                "wifi.streams",
                format!("`{}`: give the radio's spatial streams, 1 to 8", w.streams),
            ));
        }
        if w.firmware.is_empty() {
            return Err(self.bad(
                "wifi.firmware",
                "list the files the driver asks for below /lib/firmware, e.g. \
                 `brcm/brcmfmac43430-sdio.bin`",
            ));
        }
        for (i, f) in w.firmware.iter().enumerate() {
            check_relative_path(f).map_err(|m| self.bad("wifi.firmware", m))?;
            if f.starts_with("lib/firmware/") {
                return Err(self.bad(
                    "wifi.firmware",
                    format!("`{f}`: give the name below /lib/firmware, as the driver asks for it"),
                ));
            }
            if w.firmware[..i].contains(f) {
                return Err(self.bad("wifi.firmware", format!("`{f}` is listed twice")));
            }
        }
        let modules = self.expand("wifi.modules", &w.modules)?;
        crate::check_module_names(std::slice::from_ref(&w.driver))
            .map_err(|m| self.bad("wifi.driver", m))?;
        let canonical = |m: &str| m.replace('-', "_");
        if !modules.iter().any(|m| canonical(m) == canonical(&w.driver)) {
            return Err(self.bad(
                "wifi.driver",
                format!(
                    "`{}` is not among wifi.modules: add it (e.g. `@wifi-brcmfmac`)",
                    w.driver
                ),
            ));
        }
        if let Some(m) = &w.firmware_missing {
            if !one_line(m) {
                return Err(self.bad(
                    "wifi.firmware-missing",
                    "say in one line what no package provides and which boards lack it",
                ));
            }
        }
        crate::links::check(&w.firmware, &w.firmware_links)
            .map_err(|m| self.bad("wifi.firmware-links", m))?;
        Ok(WifiRadio {
            chip: w.chip,
            driver: w.driver,
            bands,
            widths_mhz: w.widths_mhz,
            streams: w.streams,
            firmware: w.firmware,
            modules,
            firmware_missing: w.firmware_missing,
            firmware_links: w.firmware_links,
        })
    }
}

mod qemu;

impl RawBoard {
    /// Checks every field that can be checked without the packages themselves.
    ///
    /// # Errors
    /// [`BoardError::Invalid`] naming `file` and the first field that cannot work.
    pub fn validate(self, file: &Path, shared: &Shared) -> Result<Board, BoardError> {
        let check = Check { file, shared };
        check.name(&self.name)?;
        let target = check.target(&self.target)?;
        let qemu_dtb = self.qemu.as_ref().and_then(|q| q.dtb.as_ref());
        let has_dtb = self.kernel.dtb.is_some();
        let kernel = check.kernel(self.kernel, &self.target.triple, target.arch, qemu_dtb)?;
        let loader = check.loader("boot.loader", self.boot.loader.as_deref())?;
        let boot = check.boot(self.boot, loader.as_ref())?;
        let hardware = loader.is_some();
        let serial = check.serial(self.serial, hardware)?;
        let modules = check.expand("modules.load", &self.modules.load)?;
        if self.modules.vcio && !has_dtb {
            return Err(BoardError::Invalid {
                file: file.to_owned(),
                field: "modules.vcio",
                message: "`vcio = true` needs kernel.dtb: the /dev/vcio module talks to the \
                          Raspberry Pi firmware node of a hardware DTB; remove `vcio`"
                    .into(),
            });
        }
        let storage = check.storage(self.storage)?;
        let gadget = self.gadget.map(|g| check.gadget(g, hardware)).transpose()?;
        let ethernet = self.ethernet.map(|e| check.ethernet(e)).transpose()?;
        let usb_ethernet = self
            .usb_ethernet
            .map(|u| check.usb_ethernet(u))
            .transpose()?;
        let wifi = self.wifi.map(|w| check.wifi(w)).transpose()?;
        let kernel_arch = kernel.arch.clone();
        let qemu = self
            .qemu
            .map(|q| check.qemu(q, loader.as_ref(), gadget.is_some(), has_dtb, &kernel_arch))
            .transpose()?;
        let has_radio = wifi.is_some() || qemu.as_ref().is_some_and(|q| q.wifi != QemuWifi::None);
        let boards_dir = file.parent().unwrap_or(Path::new("."));
        let lava = self.lava.validate(file, boards_dir)?;
        let radio_packages = has_radio.then(|| shared.radio.clone());
        let features = Features {
            hardware: hardware && has_dtb,
            gadget: gadget.is_some(),
            ethernet: ethernet.is_some(),
            usb_host: usb_ethernet.is_some()
                || storage.extra.iter().any(|e| e.bus == StorageBus::Usb),
            sata: storage.extra.iter().any(|e| e.bus == StorageBus::Sata),
            radio: wifi.is_some(),
        };
        let optional = (self.hardware.as_ref()).map_or(Vec::new(), |h| h.optional_modules.clone());
        let mut hardware = InFile(check.file).hardware(self.hardware, &features)?;
        if let Some(hw) = &mut hardware {
            // Every hardware list, as xtask's drivers::hardware_modules gathers them.
            let links = gadget.iter().map(|g| &g.modules);
            let links = links.chain(ethernet.iter().map(|e| &e.modules));
            let links = links.chain(usb_ethernet.iter().map(|u| &u.modules));
            let links = links.chain(wifi.iter().map(|w| &w.modules));
            let storage = storage.extra.iter().map(|e| &e.modules);
            let listed: Vec<String> = (modules.iter())
                .chain(links.chain(storage).flatten())
                .cloned()
                .collect();
            let expand = |m: &str| check.expand("hardware.optional-modules", &[m.to_owned()]);
            hw.optional_modules =
                InFile(check.file).optional_modules(&optional, &listed, &expand)?;
        }
        Ok(Board {
            name: self.name,
            description: self.description,
            cpu: self.cpu,
            triple: self.target.triple,
            arch: target.arch,
            rustc_cpu: self.target.rustc_cpu,
            zig_cpu: self.target.zig_cpu,
            zig_triple: target.zig_triple.to_owned(),
            kernel,
            loader,
            boot,
            serial,
            modules,
            vcio: self.modules.vcio,
            gadget,
            ethernet,
            usb_ethernet,
            wifi,
            radio_packages,
            disk: storage.disk,
            extra_storage: storage.extra,
            qemu,
            qemu_note: self.qemu_note,
            lava,
            hardware,
        })
    }
}
