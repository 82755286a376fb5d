//! Board files (`boards/<name>.toml`): the one place that parses them.
//!
//! A board file is read into [`RawBoard`] (serde, unknown fields refused) and then
//! validated into [`Board`]. Every error names the file, the field and the fix.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use benchboot_plan::GadgetFunction;
use serde::Deserialize;

mod catalog;
mod folder;
pub mod hardware;
pub mod lava;
mod links;
mod shared;
mod validate;
pub use benchboot_wifi::channel::Band;
pub use catalog::{Catalog, BUILTIN_DIR};
pub use folder::{
    known_list, read_board_file, MAX_BOARD_FILE_BYTES, MAX_FOLDER_ENTRIES, MAX_NAMES_LISTED,
};
pub use hardware::{
    Hardware, OptionalModule, RawCell, RawFirmwareWaiver, RawHardware, RawOptionalModule, RawWaiver,
};
pub use links::FirmwareLink;
pub use shared::{
    BootConfig, Kernel, Loader, ModuleListError, RadioPackages, RawBlob, Regulatory, Shared,
    StandInAp, Unknown, SHARED_FILE,
};

/// Why a board file could not be used. Each variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    /// The user's board folder (`--boards DIR`) cannot be listed: no folder (a file, a
    /// device, nothing there), more than [`MAX_FOLDER_ENTRIES`] entries, or the OS's
    /// error; `message` says which and what to do.
    #[error("--boards {}{message}", dir.display())]
    Folder { dir: PathBuf, message: String },
    /// A board file that is no regular file (a FIFO, a device) or is too large
    /// ([`MAX_BOARD_FILE_BYTES`]); the message names the file.
    #[error("{0}")]
    Input(#[from] benchboot_input::InputError),
    #[error("{file}: {message}")]
    Parse { file: PathBuf, message: String },
    #[error("{file}: field `{field}`: {message}")]
    Invalid {
        file: PathBuf,
        field: &'static str,
        message: String,
    },
    /// `from` says where boards were looked for: a folder, or [`Catalog::describe`].
    #[error("no board named `{name}` among {from}; known boards: {known}")]
    Unknown {
        name: String,
        from: String,
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

/// A board file as written (serde; unknown fields refused). Validated into [`Board`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawBoard {
    pub name: String,
    pub description: String,
    /// SoC, CPU cores and clock, as the README's board table shows it.
    pub cpu: String,
    pub target: RawTarget,
    pub kernel: RawKernel,
    pub boot: RawBoot,
    /// Where the console's UART is on the board; required when it boots from its card
    /// (`boot.loader`), i.e. on hardware.
    pub serial: Option<RawSerial>,
    pub modules: RawModules,
    pub storage: RawStorage,
    /// USB gadget Ethernet on the board's OTG/peripheral port; none without one.
    pub gadget: Option<RawGadget>,
    /// The board's own wired Ethernet port: the results link of boards without a USB
    /// peripheral port, a link to measure on the others.
    pub ethernet: Option<RawEthernet>,
    /// A USB host port that USB Ethernet adapters can be plugged into; none without one.
    pub usb_ethernet: Option<RawUsbEthernet>,
    /// The board's WiFi radio; none without one.
    pub wifi: Option<RawWifi>,
    pub qemu: Option<RawQemu>,
    /// Why QEMU cannot boot this board (or what its stand-in leaves out), for the README.
    pub qemu_note: Option<String>,
    /// The LAVA device type of a lab's device of this board.
    pub lava: lava::RawLava,
    /// The device-tree nodes the plan depends on, whose driver chains `cargo xtask
    /// image` proves (xtask/src/drivers.rs); required on hardware (a board with a DTB
    /// and a boot loader).
    pub hardware: Option<RawHardware>,
}

/// The board's USB peripheral port as a gadget (configfs, libcomposite).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawGadget {
    /// Functions in order of preference: `ncm`, `ecm`, `rndis`.
    pub functions: Vec<String>,
    /// Modules for the UDC and the functions (`@set` names a set of shared.toml).
    pub modules: Vec<String>,
    /// The connector the USB cable goes into, in words for the person plugging it,
    /// with how the board is powered then; required on hardware (`boot.loader`).
    pub port: Option<String>,
}

/// The console UART's connector, for a person with a USB serial adapter.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawSerial {
    /// Which pins carry TX, RX and GND, in words: `header pin 8 (GPIO14, TXD), ...`.
    pub pins: String,
    /// The UART's logic level, volts: 1.8, 3.3 or 5.
    pub volts: f64,
}

/// The board's own Ethernet port.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawEthernet {
    /// Kernel interface name, e.g. `eth0`.
    pub interface: String,
    /// Modules of the controller, its MDIO bus and its PHY (`@set` allowed).
    #[serde(default)]
    pub modules: Vec<String>,
    /// The kernel driver(s) of the port as `/sys/class/net/<if>/device/driver` names
    /// them (the `name` of the driver's `platform_driver` / `usb_driver`, not always
    /// the module's name): PID 1 finds the interface by driver, since names vary.
    pub drivers: Vec<String>,
    /// What the port is rated for, Mbit/s: 10, 100, 1000, 2500, 5000 or 10000.
    pub rated_mbit: u32,
}

/// A USB host port that USB Ethernet adapters can be plugged into.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawUsbEthernet {
    /// Modules of the USB host controller and of the adapters' drivers (`@set` allowed,
    /// e.g. `@usb-ethernet`).
    pub modules: Vec<String>,
    /// The adapters' drivers as `/sys/class/net/<if>/device/driver` names them: the
    /// interface PID 1 takes for an adapter has one of these.
    pub drivers: Vec<String>,
    /// The connector(s) an adapter goes into, in words for the person plugging it.
    pub port: String,
}

/// The board's WiFi radio as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawWifi {
    /// The radio chip in words, with the name it reports: `CYW43438 (BCM43430/1)`.
    pub chip: String,
    /// The kernel module that drives it: `brcmfmac`.
    pub driver: String,
    /// `"2.4"`, `"5"`.
    pub bands: Vec<String>,
    /// Channel widths the radio supports, MHz, narrowest first: `[20, 40, 80]`.
    pub widths_mhz: Vec<u32>,
    /// Spatial streams (1 on every Raspberry Pi).
    pub streams: u8,
    /// The files the driver asks for, as it names them below `/lib/firmware`.
    pub firmware: Vec<String>,
    /// The SD host and the driver's modules (`@set` allowed).
    pub modules: Vec<String>,
    /// What no package provides, in one line (e.g. a later chip revision's firmware),
    /// for the image and PID 1 to report.
    pub firmware_missing: Option<String>,
    /// `firmware` files the pinned packages hold under another name (a link a later
    /// package version adds), each read from that name, with why.
    #[serde(default)]
    pub firmware_links: Vec<FirmwareLink>,
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
    /// A flavour of shared.toml: `rpi`, `armmp`, `arm64`.
    pub flavour: String,
    /// DTB file name in the kernel package; none where the machine provides its own
    /// (QEMU virt generates one).
    pub dtb: Option<String>,
    #[serde(default)]
    pub dtb_fixups: Vec<RawDtbFixup>,
}

/// One DTB edit as written: `property` + `value` sets a string property,
/// `delete-property` removes one, `delete-node = true` removes the node.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawDtbFixup {
    /// Absolute node path, e.g. `/soc/usb@7e980000`.
    pub node: String,
    pub property: Option<String>,
    pub value: Option<String>,
    pub delete_property: Option<String>,
    #[serde(default)]
    pub delete_node: bool,
}

/// One edit of a DTB before it goes on the card (or into a QEMU-only copy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DtbFixup {
    /// Sets a string property (`fdtput -t s`).
    Set {
        node: String,
        property: String,
        value: String,
    },
    /// Removes a property (`fdtput -d`).
    DeleteProperty { node: String, property: String },
    /// Removes a node and its children (`fdtput -r`).
    DeleteNode { node: String },
}

impl DtbFixup {
    /// The node the edit applies to.
    pub fn node(&self) -> &str {
        match self {
            DtbFixup::Set { node, .. }
            | DtbFixup::DeleteProperty { node, .. }
            | DtbFixup::DeleteNode { node } => node,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawBoot {
    /// A loader of shared.toml; none where QEMU takes the kernel directly.
    pub loader: Option<String>,
    /// Serial console as the kernel names it, with its speed: `ttyS1,115200`.
    pub console: String,
    /// Extra config.txt lines (`config-txt` loaders only); kernel=, initramfs and
    /// device_tree= are written by the image plan.
    #[serde(default)]
    pub config_txt: Vec<String>,
    /// Kernel parameters after `console=`.
    pub cmdline: String,
    /// What the person at the bench must do while powering the board on for it to boot
    /// this card (the BeagleBone Black's S2 button), in one sentence; field-test says it.
    pub power_on: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawModules {
    pub load: Vec<String>,
    /// `vcio = true`: the image builds and loads benchboot's `/dev/vcio` module
    /// (firmware/vcio, built by xtask/src/vcio.rs) so PID 1 reads the Raspberry Pi firmware's
    /// throttle flags and clocks. Only for boards with a hardware DTB (`kernel.dtb`);
    /// the image build checks the DTB has a `raspberrypi,bcm2835-firmware` node.
    #[serde(default)]
    pub vcio: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawStorage {
    pub disk: String,
    /// Other storage the board can test besides the card.
    #[serde(default)]
    pub extra: Vec<RawExtraStorage>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawExtraStorage {
    /// `usb` or `sata`.
    pub bus: String,
    #[serde(default)]
    pub modules: Vec<String>,
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
    /// `usb-net`, `virtio-net`, or `none` (results read from the card afterwards).
    pub network: String,
    /// How the card image is attached: `sd` (default) or `virtio`.
    #[serde(default)]
    pub drive: Option<String>,
    /// `kernel` (default): QEMU loads kernel, DTB and initramfs from the card's boot
    /// partition. `card`: the machine's boot ROM runs the card's own loader.
    #[serde(default)]
    pub boot: Option<String>,
    /// A loader of shared.toml replacing the board's in a QEMU-only copy of the card.
    pub loader: Option<String>,
    /// A DTB replacing the board's in the QEMU-only copy (stand-in machines).
    pub dtb: Option<String>,
    /// `dummy-hcd`: the QEMU plan tests the gadget against the kernel's dummy_hcd
    /// (both USB ends in the guest); absent: the QEMU plan has no gadget.
    #[serde(default)]
    pub gadget: Option<String>,
    /// Wired-link tests in the QEMU plan: `usb-net-lan` (the emulated usb-net adapter
    /// on QEMU's user network, peer on the host) or `virtio-pair` (two more NICs on one
    /// QEMU hub, the far end in a namespace of the guest); absent: none.
    #[serde(default)]
    pub wired: Option<String>,
    /// Radios in the QEMU plan: `hwsim` (mac80211_hwsim in the guest, the stand-in AP
    /// in the initramfs); absent: none.
    #[serde(default)]
    pub wifi: Option<String>,
    #[serde(default)]
    pub modules: Vec<String>,
    #[serde(default)]
    pub dtb_fixups: Vec<RawDtbFixup>,
}

/// A validated board. Built only by [`Board::from_toml`] / [`load`].
#[derive(Debug, Clone)]
pub struct Board {
    pub name: String,
    pub description: String,
    /// SoC, cores, clock.
    pub cpu: String,
    /// Rust target triple of the firmware, e.g. `arm-unknown-linux-musleabihf`.
    pub triple: String,
    pub arch: Arch,
    /// CPU for `rustc -C target-cpu=`.
    pub rustc_cpu: String,
    /// The same CPU as zig spells it for `-mcpu=`.
    pub zig_cpu: String,
    /// Target triple as zig spells it for `-target`.
    pub zig_triple: String,
    pub kernel: BoardKernel,
    /// Boot firmware / boot loader; none for machines that take the kernel directly.
    pub loader: Option<Loader>,
    pub boot: Boot,
    /// Where the console's UART is ([`Serial`]); none for emulated boards.
    pub serial: Option<Serial>,
    /// Modules the init loads (names without `.ko`, sets expanded), before dependency
    /// resolution.
    pub modules: Vec<String>,
    /// True: the image carries and loads `benchboot_vcio.ko` (board file `modules.vcio`),
    /// built for this kernel by `xtask::vcio`, last in the hardware load order.
    pub vcio: bool,
    pub gadget: Option<Gadget>,
    /// The board's own Ethernet port: the results link when the board has no gadget
    /// ([`Board::results_ethernet`]), else a link to measure.
    pub ethernet: Option<Ethernet>,
    /// USB Ethernet adapters on a USB host port; none without one.
    pub usb_ethernet: Option<UsbEthernet>,
    /// The board's WiFi radio ([`Board::wifi`]); none without one.
    pub wifi: Option<WifiRadio>,
    /// Where radio files come from (shared.toml `[radio]`): set when the board has a
    /// radio, its own ([`Board::wifi`]) or QEMU's (`qemu.wifi`).
    pub radio_packages: Option<RadioPackages>,
    /// Kernel name of the SD card / disk holding the test partitions, e.g. `mmcblk0`.
    pub disk: String,
    pub extra_storage: Vec<ExtraStorage>,
    pub qemu: Option<Qemu>,
    pub qemu_note: Option<String>,
    pub lava: lava::Lava,
    /// The DTB nodes whose driver chains the image build proves; `None` for boards
    /// without a DTB of their own (QEMU virt).
    pub hardware: Option<Hardware>,
}

/// The board's kernel: a shared flavour plus the board's DTB.
#[derive(Debug, Clone)]
pub struct BoardKernel {
    /// Flavour name in shared.toml.
    pub flavour: String,
    pub package: String,
    pub release: String,
    /// Debian architecture of the kernel package.
    pub arch: String,
    pub dtb: Option<String>,
    pub dtb_fixups: Vec<DtbFixup>,
}

/// Boot configuration.
#[derive(Debug, Clone)]
pub struct Boot {
    /// `ttyS1,115200`.
    pub console: String,
    pub config_txt: Vec<String>,
    /// The whole kernel command line: `console=<console> <cmdline>`.
    pub cmdline: String,
    /// What to do at power-on for the board to boot the card (`boot.power-on`).
    pub power_on: Option<String>,
}

/// The console UART's connector on the board (the kernel's device and speed are
/// [`Boot::console`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Serial {
    /// Which pins carry TX, RX and GND: `the 6-pin J1 header: pin 1 GND, pin 4 RXD, pin
    /// 5 TXD`.
    pub pins: String,
    /// Logic level, volts: 1.8, 3.3 or 5 (a TTL adapter must match it).
    pub volts: f64,
}

/// The board's own Ethernet port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ethernet {
    /// Kernel interface name, e.g. `eth0` (the results link's static address goes on
    /// it; a measured link is found by [`Ethernet::drivers`]).
    pub interface: String,
    /// Controller, MDIO and PHY modules (sets expanded).
    pub modules: Vec<String>,
    /// Driver names as `/sys/class/net/<if>/device/driver` reports them, e.g.
    /// `smsc95xx`, `bcmgenet`, `sun7i-dwmac`, `cpsw-switch`; at least one.
    pub drivers: Vec<String>,
    /// What the port is rated for, Mbit/s (100 or 1000 on the shipped boards).
    pub rated_mbit: u32,
}

/// USB Ethernet adapters on the board's USB host port(s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsbEthernet {
    /// Host controller and adapter driver modules (sets expanded).
    pub modules: Vec<String>,
    /// The adapters' driver names as `/sys/class/net/<if>/device/driver` reports them;
    /// at least one.
    pub drivers: Vec<String>,
    /// The connector(s) an adapter goes into: `one of the four USB-A ports`.
    pub port: String,
}

/// The board's WiFi radio, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WifiRadio {
    /// `CYW43438 (BCM43430/1)`.
    pub chip: String,
    /// The driver's module: `brcmfmac` (one of [`WifiRadio::modules`]).
    pub driver: String,
    /// The bands the radio works in, each once, in file order.
    pub bands: Vec<Band>,
    /// Channel widths, MHz, ascending, 20 first; 80 and 160 only with 5 GHz.
    pub widths_mhz: Vec<u32>,
    /// Spatial streams, 1..=8.
    pub streams: u8,
    /// The files the driver asks for, below `/lib/firmware` (`brcm/brcmfmac43430-sdio.bin`),
    /// each once; the initramfs holds their contents at exactly these names.
    pub firmware: Vec<String>,
    /// SD host and driver modules (sets expanded); the driver among them.
    pub modules: Vec<String>,
    /// What no package provides, for the image and PID 1 to report.
    pub firmware_missing: Option<String>,
    /// Files of [`WifiRadio::firmware`] read from another name of the packages.
    pub firmware_links: Vec<FirmwareLink>,
}

impl WifiRadio {
    /// `2.4 + 5 GHz`.
    pub fn bands_label(&self) -> String {
        let names: Vec<&str> = self.bands.iter().map(|b| b.name()).collect();
        format!("{} GHz", names.join(" + "))
    }
}

/// Channel widths a radio can list, MHz (802.11n/ac).
pub const WIFI_WIDTHS_MHZ: &[u32] = &[20, 40, 80, 160];

/// Bands a board file can name, as it writes them.
pub const WIFI_BANDS: &[Band] = &[Band::Ghz2, Band::Ghz5];

/// Link speeds an Ethernet port can be rated for, Mbit/s (IEEE 802.3).
pub const ETHERNET_RATES_MBIT: &[u32] = &[10, 100, 1000, 2500, 5000, 10000];

/// Storage besides the card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtraStorage {
    pub bus: StorageBus,
    pub modules: Vec<String>,
}

/// The bus of [`ExtraStorage`]: the plan's [`Bus`] (a plan's whole-disk targets name
/// it, and a plan naming a bus the board lacks is refused).
pub use benchboot_plan::Bus as StorageBus;

/// How the QEMU smoke tier boots this board.
#[derive(Debug, Clone)]
pub struct Qemu {
    pub system: String,
    pub machine: String,
    /// Which `-serial` carries the console (0 = first).
    pub console_serial_index: u8,
    /// Appended to the kernel command line for QEMU only.
    pub append: String,
    pub args: Vec<String>,
    pub network: QemuNetwork,
    /// Extra modules for the QEMU-only results link (sets expanded).
    pub modules: Vec<String>,
    /// Applied to a QEMU-only copy of the DTB (the card keeps its own).
    pub dtb_fixups: Vec<DtbFixup>,
    pub drive: QemuDrive,
    pub boot: QemuBoot,
    /// Replaces the board's loader in a QEMU-only copy of the card.
    pub loader: Option<Loader>,
    /// Replaces the board's DTB in a QEMU-only copy of the card.
    pub dtb: Option<String>,
    /// True: the QEMU plan runs the gadget against `dummy_hcd` inside the guest.
    pub gadget_dummy_hcd: bool,
    /// The wired-link tests of the QEMU plan.
    pub wired: QemuWired,
    /// The radios of the QEMU plan.
    pub wifi: QemuWifi,
}

/// Radios in the QEMU plan (board file `qemu.wifi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QemuWifi {
    None,
    /// mac80211_hwsim's simulated radios (two by default) in the guest, `mac80211_hwsim`
    /// among `qemu.modules`; the initramfs holds regulatory.db and the QEMU-only stand-in
    /// AP ([`StandInAp`], shared.toml `radio.hwsim-ap`).
    Hwsim,
}

/// How the QEMU plan tests wired links (board file `qemu.wired`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QemuWired {
    None,
    /// The machine's usb-net is a USB Ethernet adapter (`cdc_ether`) on QEMU's user
    /// network: LAN topology (slirp's DHCP), the peer on the host behind a guest
    /// forward (`guestfwd`), the board's HTTP server behind a host forward.
    UsbNetLan,
    /// Two more virtio-net NICs on one QEMU hub (a cable inside QEMU): the board's end
    /// and, moved into a network namespace, the host's; direct and LAN topologies.
    VirtioPair,
}

/// The board's gadget: functions and the modules that provide them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gadget {
    pub functions: Vec<GadgetFunction>,
    pub modules: Vec<String>,
    /// The connector the USB cable goes into, with how the board is powered then:
    /// `the mini-USB OTG port (power the board from its own supply)`; none for
    /// emulated boards.
    pub port: Option<String>,
}

/// How QEMU attaches the card image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QemuDrive {
    /// `-drive if=sd` (the Pi machines' SD controller); the guest sees `mmcblk0`.
    Sd,
    /// virtio-blk on virtio-mmio (`virt`); the guest sees `vda`.
    Virtio,
}

/// How QEMU starts the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QemuBoot {
    /// `-kernel`/`-dtb`/`-initrd` taken from the card's boot partition.
    Kernel,
    /// The machine's boot ROM runs the card's loader (SPL, U-Boot, extlinux).
    Card,
}

/// The emulated device that carries the results link in QEMU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QemuNetwork {
    /// `-device usb-net`: the guest binds it with cdc_ether as `eth0` (QEMU 10).
    UsbNet,
    /// `-device virtio-net-device` (virtio-mmio, `virt`): the guest's `eth0`.
    VirtioNet,
    /// No network: the harness reads the results partition of the card afterwards.
    None,
}

impl Board {
    /// Parses and validates one board file's text against the shared pieces. `file` is
    /// used in error messages.
    ///
    /// # Errors
    /// [`BoardError::Parse`] for TOML/shape errors (unknown or missing fields),
    /// [`BoardError::Invalid`] for values that parse but cannot work.
    pub fn from_toml(file: &Path, text: &str, shared: &Shared) -> Result<Board, BoardError> {
        let raw: RawBoard = toml::from_str(text).map_err(|e| BoardError::Parse {
            file: file.to_owned(),
            message: e.to_string(),
        })?;
        raw.validate(file, shared)
    }

    /// The Ethernet port that carries the results: the board's [`Ethernet`] when it has
    /// no gadget. On a board with both, the gadget carries them and the Ethernet is a
    /// link to measure.
    pub fn results_ethernet(&self) -> Option<&Ethernet> {
        self.ethernet.as_ref().filter(|_| self.gadget.is_none())
    }

    /// What carries results to the host, for people: `USB gadget (NCM, ECM, RNDIS)`,
    /// `Ethernet (eth0)`; the card's results partition always does.
    pub fn results_link(&self) -> String {
        let mut links = Vec::new();
        if let Some(g) = &self.gadget {
            let f: Vec<&str> = g.functions.iter().map(|f| f.configfs_type()).collect();
            links.push(format!("USB gadget ({})", f.join(", ").to_uppercase()));
        }
        if let Some(e) = self.results_ethernet() {
            links.push(format!("Ethernet ({})", e.interface));
        }
        links.push("card".into());
        links.join(" + ")
    }

    /// The board's WiFi radio, if it has one.
    pub fn wifi(&self) -> Option<&WifiRadio> {
        self.wifi.as_ref()
    }

    /// The radio for people (the README's WiFi column): `CYW43455 (BCM4345/6), 2.4 + 5
    /// GHz`, with what firmware is missing; QEMU's simulated radios; or `none`.
    pub fn wifi_summary(&self) -> String {
        if let Some(w) = &self.wifi {
            let mut s = format!("{}, {}", w.chip, w.bands_label());
            if let Some(m) = &w.firmware_missing {
                s.push_str(&format!("; firmware missing: {m}"));
            }
            return s;
        }
        if self
            .qemu
            .as_ref()
            .is_some_and(|q| q.wifi == QemuWifi::Hwsim)
        {
            return "QEMU: mac80211_hwsim radios + hostapd stand-in AP".to_owned();
        }
        "none".to_owned()
    }

    /// The wired links the board can measure, for people: `Ethernet 1000 Mbit/s
    /// (bcmgenet) + USB adapters`, or `none`.
    pub fn wired_links(&self) -> String {
        let mut links = Vec::new();
        if let Some(e) = &self.ethernet {
            links.push(format!(
                "Ethernet {} Mbit/s ({})",
                e.rated_mbit,
                e.drivers.join(", ")
            ));
        }
        if self.usb_ethernet.is_some() {
            links.push("USB adapters".to_owned());
        }
        if links.is_empty() {
            return "none".to_owned();
        }
        links.join(" + ")
    }
}

pub(crate) fn check_module_names(names: &[String]) -> Result<(), String> {
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
/// [`BoardError::Unknown`] (listing the known boards) when `name` is not one of
/// [`list`] (no such file, a path such as `../boards/x`, or `shared`, which holds no
/// board), else as [`Board::from_toml`].
pub fn load(dir: &Path, name: &str) -> Result<Board, BoardError> {
    let file = dir.join(format!("{name}.toml"));
    let names = list(dir).unwrap_or_default();
    if !names.iter().any(|n| n == name) {
        let known = known_list(&names);
        return Err(BoardError::Unknown {
            name: name.to_owned(),
            from: dir.display().to_string(),
            known,
        });
    }
    let text = read_board_file(&file)?;
    Board::from_toml(&file, &text, &Shared::load(dir)?)
}

/// Why a board folder was not listed.
#[derive(Debug)]
pub(crate) enum Unlisted {
    /// More than [`MAX_FOLDER_ENTRIES`] entries.
    TooMany,
    /// The OS's error, of the folder or an entry.
    Io(std::io::Error),
}

/// Names of the board files in `dir`, sorted: the stems of its `*.toml` entries that
/// are no folders, `shared.toml` and `*.lock.toml` aside.
///
/// # Errors
/// The folder's own, or `InvalidInput` when it has more than [`MAX_FOLDER_ENTRIES`]
/// entries (it is read no further).
pub fn list(dir: &Path) -> std::io::Result<Vec<String>> {
    names(dir).map_err(|e| match e {
        Unlisted::Io(e) => e,
        Unlisted::TooMany => std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "more than {MAX_FOLDER_ENTRIES} entries: a board folder holds board files \
                 (the project's has a dozen); give the folder of yours"
            ),
        ),
    })
}

/// [`list`], its errors told apart.
pub(crate) fn names(dir: &Path) -> Result<Vec<String>, Unlisted> {
    let mut names = Vec::new();
    for (i, entry) in std::fs::read_dir(dir).map_err(Unlisted::Io)?.enumerate() {
        if i == MAX_FOLDER_ENTRIES {
            return Err(Unlisted::TooMany);
        }
        let entry = entry.map_err(Unlisted::Io)?;
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "toml") {
            if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
                if !stem.ends_with(".lock") && format!("{stem}.toml") != SHARED_FILE {
                    names.push(stem.to_owned());
                }
            }
        }
    }
    names.sort();
    Ok(names)
}

/// The `boards/` folder of the checkout this crate was built from: for xtask and the
/// tests, which run in one. It is gone once a binary is installed or copied: the host
/// tool takes its boards from a [`Catalog`] (built in, or a user's `--boards DIR`).
pub fn boards_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../boards")
}

#[cfg(test)]
mod tests;
