//! The benchmark plan: what PID 1 runs, on which targets, with which caps.
//!
//! The xtask generates one plan per image (it knows the partition layout) and puts it
//! in the initramfs as JSON at [`PLAN_PATH`]; the init reads and validates it before
//! running anything. Sizes are bytes, durations milliseconds.

#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

pub mod boot_disk;
pub mod card_check;
pub mod energy;
pub mod estimate;
pub mod file;
pub mod guard;
pub mod limits;
pub mod locate;
pub mod memory;
pub mod net_steps;
pub mod net_tests;
pub mod network;
pub mod place;
pub mod presets;
pub mod resolve;
pub mod sanity;
pub mod spelling;
pub mod units;
pub mod wifi;

mod validate;

pub use card_check::CardCheckPlan;
pub use energy::EnergyPlan;
pub use file::{NotUtf8, PlanFile, PlanFileError};
pub use memory::MemoryPlan;
pub use net_tests::NetTests;
pub use network::{
    GadgetFunction, GadgetPlan, NetworkPlan, Topology, WiredPlan, BOARD_LINK_LOCAL,
    PEER_ANNOUNCE_PORT,
};
pub use resolve::{resolve, ImageFacts, PlanSource, CARD_FACTS_FILE, IMAGE_FACTS_PATH};
pub use spelling::{WifiBand, WiredKind};
pub use wifi::{AskedChannel, WifiEntry, WifiFacts, WifiPlan, WifiRole, WifiSecurity};

/// Where plans sit inside the initramfs: `<dir>/<name>.json`.
pub const PLANS_DIR: &str = "/etc/benchboot";
/// The plan run when the kernel command line names none.
pub const DEFAULT_PLAN: &str = "plan";
/// Kernel parameter that picks another plan, e.g. `benchboot.plan=qemu`.
pub const PLAN_PARAM: &str = "benchboot.plan=";
/// Where module files sit inside the initramfs (`<dir>/<name>.ko`).
pub const MODULES_DIR: &str = "/lib/modules";
/// The alias table of the modules in [`MODULES_DIR`] (`alias`, `softdep` and `depends`
/// lines; format: benchboot-kmod's `table` module), from which PID 1 loads drivers by
/// modalias.
pub const MODULES_ALIAS_PATH: &str = "/lib/modules/modules.alias";
/// TCP port of the board's read-only results server, on every interface.
pub const RESULTS_PORT: u16 = 8080;
/// The host port `cargo xtask qemu` forwards (127.0.0.1 only) to a QEMU board's results
/// port when it is free; `benchboot fetch` with no address tries it last.
pub const QEMU_RESULTS_FORWARD: u16 = 18080;
/// One MiB (2^20 bytes), the unit the seeds' tables use.
pub const MIB: u64 = 1 << 20;
/// Largest block size a plan may ask for: 64 MiB (every worker allocates one block).
pub const MAX_BLOCK_BYTES: u64 = 64 * MIB;
/// The plan file PID 1 reads from the card's FAT results partition at boot, when the
/// plan the kernel command line picked allows it ([`Plan::card_plan`]).
pub const CARD_PLAN_FILE: &str = "plan.toml";

/// Why a plan is unusable. Each variant names the field.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    /// `field` is the plan's own path, with the index of a list entry:
    /// `storage.byte_cap`, `commands[1].path`, `storage.targets[0].label`
    /// ([`locate::file_key`] spells it as a plan file does).
    #[error("plan: field `{field}`: {message}")]
    Invalid { field: String, message: String },
    #[error("plan: not valid JSON for a plan: {0}")]
    Json(String),
    #[error("plan: unknown field `{0}`: this init reads plans of its own version only")]
    UnknownField(String),
}

/// A whole run on one board.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Board name (`boards/<name>.toml`).
    pub board: String,
    /// True when the plan was made for QEMU: figures are emulated, never hardware results.
    pub emulated: bool,
    /// Kernel modules (names without `.ko`) in load order, dependencies first.
    pub modules: Vec<String>,
    pub results: ResultsTarget,
    pub storage: StoragePlan,
    pub network: NetworkPlan,
    /// The memory step (bandwidth, latency), run before the storage steps; `None`: none
    /// (plan file `[memory] enabled = false`, or plans before schema 1.9).
    #[serde(default)]
    pub memory: Option<MemoryPlan>,
    /// The full-card check (the fake-capacity probe over the boot card's unpartitioned
    /// space), after the storage steps; `None` (the default): not run. Schema 1.10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_check: Option<CardCheckPlan>,
    /// The idle phases and sync patterns a power trace is aligned by (plan file
    /// `[energy]`; schema 1.13); plans before it: [`EnergyPlan::OFF`].
    #[serde(default, skip_serializing_if = "EnergyPlan::is_off")]
    pub energy: EnergyPlan,
    /// How PID 1 bounds each benchmark worker and feeds the hardware watchdog
    /// (plans before schema 1.5 have none: the defaults).
    #[serde(default)]
    pub supervision: Supervision,
    /// Faults PID 1 injects, for the fault-injection test (QEMU plans only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<Fault>,
    /// Workloads of the user's own, run after the storage steps (plan file `[[command]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandStep>,
    /// True when PID 1 takes the plan file on the card ([`CARD_PLAN_FILE`]) over this
    /// one: the image's default plan; never the fault and power-cut test plans.
    #[serde(default)]
    pub card_plan: bool,
    /// Where the plan came from: preset and version, or the file's SHA-256 and text
    /// (schema 1.6; empty in older documents).
    #[serde(default)]
    pub source: PlanSource,
}

/// A static binary on the results partition that PID 1 runs as a worker, recording its
/// `case=<id> value=<n> units=<u>` output lines as measurements.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandStep {
    /// Step id suffix: the step is `command.<id>`.
    pub id: String,
    /// Path relative to the results partition's mount point.
    pub path: String,
    pub args: Vec<String>,
    /// Wall-clock limit, ms; then SIGKILL and a fault.
    pub time_limit_ms: u64,
}

/// PID 1's limits on its own work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Supervision {
    /// Wall-clock limit of one benchmark worker (one repetition of one cell, one device
    /// read, one random-I/O run, one verification), ms. A worker still running then is
    /// killed (SIGKILL), recorded as a fault, and the plan goes on.
    pub worker_limit_ms: u64,
    /// Hardware watchdog timeout, s (`WDIOC_SETTIMEOUT`, kernel doc
    /// Documentation/watchdog/watchdog-api.rst); 0 leaves `/dev/watchdog` closed. PID 1
    /// feeds it while its main sequence shows progress: a main sequence silent for
    /// `worker_limit_ms` + this timeout stops the feeding and the board resets.
    pub watchdog_timeout_s: u32,
}

impl Default for Supervision {
    /// 10 minutes per worker: the slowest hardware cell, a 64 MiB write and its fsync
    /// on a 1 MB/s card, takes about 70 s; 60 s of watchdog.
    fn default() -> Self {
        Supervision {
            worker_limit_ms: 600_000,
            watchdog_timeout_s: 60,
        }
    }
}

/// A fault PID 1 injects on purpose, to prove it survives one (plan field `faults`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fault {
    /// A worker writes through a null pointer (SIGSEGV).
    Segfault,
    /// A worker panics.
    Panic,
    /// A worker sleeps past `supervision.worker_limit_ms`.
    Hang,
    /// PID 1 itself panics after the last step, before serving results.
    Pid1Panic,
    /// PID 1's main sequence stops after the last step (sleeps without a sign of life):
    /// the hardware watchdog, no longer fed, must reset the board.
    Pid1Hang,
}

impl Fault {
    /// The step id the fault runs as, e.g. `fault.segfault`.
    pub fn step(self) -> String {
        let name = serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        format!("fault.{name}")
    }
}

/// The partition that receives `results.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultsTarget {
    /// Block device, e.g. `/dev/mmcblk0p2` (FAT).
    pub device: String,
    /// File name on that partition.
    pub file: String,
    /// The results journal's block device (`/dev/mmcblk0p4`, crates/journal), written
    /// before the FAT copy at every save; `None`: an image without one.
    #[serde(default)]
    pub journal: Option<String>,
}

/// The storage plan: the sweep (every target × mode × block size, write then read), then
/// device reads, random IOPS and verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoragePlan {
    pub targets: Vec<StorageTarget>,
    /// Block sizes in bytes, in the order they run.
    pub block_sizes: Vec<u64>,
    /// I/O modes of the sweep, each run for every block size.
    pub modes: Vec<Mode>,
    /// Per block size and direction, stop after this many bytes...
    pub byte_cap: u64,
    /// ...or this many milliseconds, whichever comes first.
    pub time_cap_ms: u64,
    /// Repetitions of each (target, mode, block size); every one is kept.
    pub repetitions: u32,
    /// How long to wait for the target partitions to appear, ms.
    pub device_wait_ms: u64,
    /// `hdparm -T`/`-t`-style reads of each disk; `None` skips them.
    pub device_reads: Option<DeviceReadPlan>,
    /// Random 4 KiB IOPS; `None` skips them.
    pub random: Option<RandomPlan>,
    /// Write a position-stamped pattern and read it back on every target.
    pub verify: bool,
    /// cpufreq governor to set before measuring (e.g. `performance`), where cpufreq exists.
    pub governor: Option<String>,
    /// One cell of the sweep run under its own caps ([`LongCell`]); `None`: every cell
    /// under `byte_cap` / `time_cap_ms`. Set only by built-in plans (no plan-file key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_cell: Option<LongCell>,
}

/// A cell of the sweep (target × mode × block size, write then read) run long enough to
/// show its throughput over time: the QEMU plan's caps (250 ms) are far below the
/// report's 2 s timeline threshold, so this one cell proves the timeline in QEMU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LongCell {
    /// A [`StorageTarget::label`] of the plan.
    pub target: String,
    /// One of the plan's modes.
    pub mode: Mode,
    /// One of the plan's block sizes, bytes.
    pub block_size: u64,
    /// Stop after this many bytes (write; the read reads what was written)...
    pub byte_cap: u64,
    /// ...or this many milliseconds, whichever comes first.
    pub time_cap_ms: u64,
}

impl StoragePlan {
    /// The caps of one cell, (bytes, ms): the [`LongCell`]'s where it names this cell,
    /// else the plan's `byte_cap` and `time_cap_ms`.
    pub fn cell_caps(&self, target: &str, mode: Mode, block_size: u64) -> (u64, u64) {
        match &self.long_cell {
            Some(c) if c.target == target && c.mode == mode && c.block_size == block_size => {
                (c.byte_cap, c.time_cap_ms)
            }
            _ => (self.byte_cap, self.time_cap_ms),
        }
    }

    /// Whether the long cell names a target, mode and block size of this plan (a plan
    /// file that drops one of them drops the long cell: [`crate::resolve`]).
    pub fn long_cell_fits(&self, c: &LongCell) -> bool {
        self.targets.iter().any(|t| t.label == c.target)
            && self.modes.contains(&c.mode)
            && self.block_sizes.contains(&c.block_size)
    }
}

/// How the sweep moves bytes; recorded with every measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Buffered I/O. Write: `write(2)` loop then `fsync(2)`, both timed. Read: the page
    /// cache is dropped before the timed `read(2)` loop. Comparable to the seeds'
    /// `dd` + `sync`.
    Sync,
    /// `O_DIRECT`: buffers, offsets and lengths aligned to the device's logical block
    /// size; the write region ends with `fsync(2)`. Sizes below the logical block size
    /// cannot be direct and run as [`Mode::Sync`] (the result says so).
    Direct,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Sync => "sync",
            Mode::Direct => "direct",
        }
    }
}

/// `hdparm -T` (cached reads of the first `chunk_bytes`, i.e. memory and bus) and
/// `hdparm -t` (sequential reads from the device after dropping caches), per disk.
/// hdparm uses 2 MiB chunks, 2 s for -T and 3 s for -t (hdparm(8)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceReadPlan {
    /// Whole-disk block devices, e.g. `/dev/mmcblk0`, or `BUS=usb` for the whole disk
    /// a raw target of that bus found ([`BUS_PREFIX`]).
    pub disks: Vec<String>,
    pub chunk_bytes: u64,
    pub cached_ms: u64,
    pub buffered_ms: u64,
}

/// Random I/O at `block_size` over a region of `region_bytes` on each named target,
/// `O_DIRECT` (the page cache cannot serve it), at each queue depth. Depth N is N
/// threads each issuing synchronous I/O (fio `psync` with `numjobs=N`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RandomPlan {
    /// Target labels, e.g. `["raw", "ext4"]`.
    pub targets: Vec<String>,
    pub block_size: u64,
    pub region_bytes: u64,
    pub duration_ms: u64,
    pub queue_depths: Vec<u32>,
}

/// One place to measure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StorageTarget {
    /// Short name used in results and tables, e.g. `ext4`.
    pub label: String,
    /// Block device: a path (`/dev/mmcblk0p7`, `/dev/sda1`), `LABEL=<filesystem label>`
    /// or `PARTLABEL=<GPT partition name>` (found by PID 1 when the storage step starts,
    /// see [`DeviceRef`]); for [`Filesystem::Dir`] a directory.
    pub device: String,
    pub filesystem: Filesystem,
    /// A device not found when the storage step starts is a warning, not an error (a
    /// preset's prepared-disk targets, plugged in or not).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
}

/// A bus a board reaches disks on besides its card (board file `storage.extra`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bus {
    /// USB mass storage on a host port (`/sys/block/sdX` under a `usb` device).
    Usb,
    /// SATA (AHCI, `ata` in the sysfs path), e.g. the Allwinner A20's.
    Sata,
    /// virtio-blk (QEMU `virt` machines only).
    Virtio,
}

impl Bus {
    pub fn name(self) -> &'static str {
        match self {
            Bus::Usb => "usb",
            Bus::Sata => "sata",
            Bus::Virtio => "virtio",
        }
    }

    /// How a table of boards says it: `USB disk`, `SATA`, `virtio disk`.
    pub fn describe(self) -> &'static str {
        match self {
            Bus::Usb => "USB disk",
            Bus::Sata => "SATA",
            Bus::Virtio => "virtio disk",
        }
    }

    /// The bus named `name` (`usb`, `sata`, `virtio`).
    pub fn from_name(name: &str) -> Option<Bus> {
        [Bus::Usb, Bus::Sata, Bus::Virtio]
            .into_iter()
            .find(|b| b.name() == name)
    }
}

/// Prefix of a [`StorageTarget::device`] naming a whole disk by bus: `BUS=usb` is the
/// first disk on the USB bus (kernel name order) that is not the disk PID 1 booted from.
pub const BUS_PREFIX: &str = "BUS=";

/// Prefix of a [`StorageTarget::device`] named by filesystem label.
pub const LABEL_PREFIX: &str = "LABEL=";
/// Prefix of a [`StorageTarget::device`] named by GPT partition name.
pub const PARTLABEL_PREFIX: &str = "PARTLABEL=";
/// Longest filesystem label: ext2/3/4 `s_volume_name` (16 bytes; FAT holds 11).
pub const MAX_LABEL_BYTES: usize = 16;
/// Longest GPT partition name, in UTF-16 code units (UEFI 2.10 §5.3.3).
pub const MAX_PARTLABEL_UNITS: usize = 36;

/// How a [`StorageTarget`] names its device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceRef<'a> {
    /// A path: `/dev/...`, or the folder of a [`Filesystem::Dir`] target.
    Path(&'a str),
    /// `LABEL=<name>`: the device whose filesystem (ext2/3/4 volume name, FAT volume
    /// label) carries `name`.
    Label(&'a str),
    /// `PARTLABEL=<name>`: the GPT partition named `name`.
    PartLabel(&'a str),
    /// `BUS=<bus>`: a whole disk on that bus ([`BUS_PREFIX`]); `None` for an unknown name.
    WholeDisk(Option<Bus>),
}

impl std::fmt::Display for DeviceRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceRef::Path(p) => f.write_str(p),
            DeviceRef::Label(n) => write!(f, "{LABEL_PREFIX}{n}"),
            DeviceRef::PartLabel(n) => write!(f, "{PARTLABEL_PREFIX}{n}"),
            DeviceRef::WholeDisk(b) => {
                write!(f, "{BUS_PREFIX}{}", b.map_or("?", Bus::name))
            }
        }
    }
}

impl StorageTarget {
    /// How [`StorageTarget::device`] names the device. A [`Filesystem::Dir`] target's
    /// device is always a path (`benchboot storage --path` takes any folder name).
    pub fn device_ref(&self) -> DeviceRef<'_> {
        let d = self.device.as_str();
        if self.filesystem == Filesystem::Dir {
            return DeviceRef::Path(d);
        }
        if let Some(n) = d.strip_prefix(LABEL_PREFIX) {
            DeviceRef::Label(n)
        } else if let Some(n) = d.strip_prefix(PARTLABEL_PREFIX) {
            DeviceRef::PartLabel(n)
        } else if let Some(n) = d.strip_prefix(BUS_PREFIX) {
            DeviceRef::WholeDisk(Bus::from_name(n))
        } else {
            DeviceRef::Path(d)
        }
    }

    /// Why [`StorageTarget::device`] is unusable, if it is.
    pub fn device_problem(&self) -> Option<String> {
        let who = format!("target `{}`", self.label);
        match self.device_ref() {
            DeviceRef::Path(_) if self.filesystem == Filesystem::Dir => None,
            DeviceRef::Path(p) if p.starts_with("/dev/") => None,
            DeviceRef::Path(p) => Some(format!(
                "{who}: `{p}` must be a /dev/ path, {LABEL_PREFIX}<filesystem label> or \
                 {PARTLABEL_PREFIX}<GPT partition name>"
            )),
            DeviceRef::Label("") => Some(format!(
                "{who}: {LABEL_PREFIX} needs a name, e.g. {LABEL_PREFIX}BBUSB"
            )),
            DeviceRef::PartLabel("") => Some(format!(
                "{who}: {PARTLABEL_PREFIX} needs a name, e.g. {PARTLABEL_PREFIX}bench"
            )),
            DeviceRef::Label(n) if n.len() > MAX_LABEL_BYTES => Some(format!(
                "{who}: `{n}` is {} bytes; a filesystem label holds at most {MAX_LABEL_BYTES} \
                 (ext) or 11 (FAT)",
                n.len()
            )),
            DeviceRef::Label(_) if self.filesystem == Filesystem::Raw => Some(format!(
                "{who}: a raw target is overwritten, and the filesystem that carries the \
                 label with it; name the partition by {PARTLABEL_PREFIX} or /dev/ path"
            )),
            DeviceRef::PartLabel(n) if n.encode_utf16().count() > MAX_PARTLABEL_UNITS => {
                Some(format!(
                    "{who}: `{n}` is longer than a GPT partition name ({MAX_PARTLABEL_UNITS} \
                     UTF-16 code units)"
                ))
            }
            DeviceRef::WholeDisk(None) => Some(format!(
                "{who}: `{}` names no bus; use {BUS_PREFIX}usb, {BUS_PREFIX}sata or \
                 {BUS_PREFIX}virtio",
                self.device
            )),
            DeviceRef::WholeDisk(Some(_)) if self.filesystem != Filesystem::Raw => Some(format!(
                "{who}: a whole disk is swept raw; set filesystem = \"raw\""
            )),
            DeviceRef::Label(_) | DeviceRef::PartLabel(_) | DeviceRef::WholeDisk(_) => None,
        }
    }
}

/// What a target holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Filesystem {
    Ext2,
    Ext3,
    Ext4,
    Vfat,
    /// No filesystem: the partition's block device is written and read directly.
    Raw,
    /// An already-mounted directory (host runs: `benchboot storage --path DIR`).
    Dir,
}

impl Filesystem {
    /// The test filesystems of an image, in the seeds' column order.
    pub const ALL: [Filesystem; 4] = [Self::Ext2, Self::Ext3, Self::Ext4, Self::Vfat];

    /// The name `mount(2)` takes (ext2/ext3 are served by the ext4 driver in Debian's
    /// kernels, which registers all three names: CONFIG_EXT4_USE_FOR_EXT2), or the
    /// kind's name for [`Filesystem::Raw`] and [`Filesystem::Dir`].
    pub fn name(self) -> &'static str {
        match self {
            Self::Ext2 => "ext2",
            Self::Ext3 => "ext3",
            Self::Ext4 => "ext4",
            Self::Vfat => "vfat",
            Self::Raw => "raw",
            Self::Dir => "dir",
        }
    }

    /// True when PID 1 must mount the target before measuring.
    pub fn is_mounted_by_init(self) -> bool {
        !matches!(self, Self::Raw | Self::Dir)
    }
}

/// The plan named on a kernel command line (`/proc/cmdline`), or [`DEFAULT_PLAN`].
/// Names other than `[a-z0-9_-]+` are ignored (no path tricks).
pub fn plan_name(cmdline: &str) -> &str {
    cmdline
        .split_whitespace()
        .rev()
        .filter_map(|w| w.strip_prefix(PLAN_PARAM))
        .find(|n| {
            !n.is_empty()
                && n.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        })
        .unwrap_or(DEFAULT_PLAN)
}

/// Path of plan `name` inside the initramfs.
pub fn plan_path(name: &str) -> String {
    format!("{PLANS_DIR}/{name}.json")
}

/// The seeds' block sizes: 8 B, 16 B, ... 1 MiB (18 powers of two).
pub fn seed_block_sizes() -> Vec<u64> {
    (3..=20).map(|shift| 1u64 << shift).collect()
}

impl Plan {
    /// Parses and validates a plan document.
    ///
    /// # Errors
    /// [`PlanError::Json`] for malformed JSON, [`PlanError::UnknownField`] for a field
    /// this version does not know (PID 1's plan is input: strict), else as
    /// [`Plan::validate`]. A results reader embeds [`Plan`] leniently instead: serde's
    /// derive ignores unknown fields, so a newer minor version still reads.
    pub fn from_json(text: &str) -> Result<Plan, PlanError> {
        let mut unknown = None;
        let de = &mut serde_json::Deserializer::from_str(text);
        let plan: Plan = serde_ignored::deserialize(de, |path| {
            unknown.get_or_insert_with(|| path.to_string());
        })
        .map_err(|e| PlanError::Json(e.to_string()))?;
        if let Some(field) = unknown {
            return Err(PlanError::UnknownField(field));
        }
        plan.validate()?;
        Ok(plan)
    }

    /// A small valid plan (one ext4 target, two block sizes): for tests and examples.
    pub fn example() -> Plan {
        Plan {
            board: "rpi-zero-w".into(),
            emulated: true,
            modules: vec!["crc16".into(), "ext4".into()],
            results: ResultsTarget {
                device: "/dev/mmcblk0p2".into(),
                file: "results.json".into(),
                journal: Some("/dev/mmcblk0p4".into()),
            },
            storage: StoragePlan {
                targets: vec![StorageTarget {
                    label: "ext4".into(),
                    device: "/dev/mmcblk0p7".into(),
                    filesystem: Filesystem::Ext4,
                    optional: false,
                }],
                block_sizes: vec![512, 4096],
                modes: vec![Mode::Sync, Mode::Direct],
                byte_cap: 4 * MIB,
                time_cap_ms: 2000,
                repetitions: 1,
                device_wait_ms: 10_000,
                device_reads: None,
                random: Some(RandomPlan {
                    targets: vec!["ext4".into()],
                    block_size: 4096,
                    region_bytes: 16 * MIB,
                    duration_ms: 1000,
                    queue_depths: vec![1, 4],
                }),
                verify: true,
                governor: Some("performance".into()),
                long_cell: None,
            },
            network: NetworkPlan {
                interface: "usb0".into(),
                address: [10, 0, 2, 15],
                prefix_len: 24,
                port: 8080,
                interface_wait_ms: 10_000,
                gadget: None,
                tests: None,
                wired: Vec::new(),
                wifi: None,
            },
            memory: Some(MemoryPlan::HARDWARE),
            card_check: None,
            energy: EnergyPlan::OFF,
            supervision: Supervision::default(),
            faults: Vec::new(),
            commands: Vec::new(),
            card_plan: false,
            source: PlanSource::default(),
        }
    }

    /// The copy of the plan results carry: a WiFi client's SSID only as its hash and its
    /// passphrase removed, in the plan and in the plan file's text (whose SHA-256 stays
    /// the original's, so two runs of one file still compare as the same plan).
    pub fn redacted(&self) -> Plan {
        let mut p = self.clone();
        if let Some(w) = &mut p.network.wifi {
            if matches!(w.role, WifiRole::Client { .. }) {
                *w = w.redacted();
                p.source.text = wifi::redact_text(&p.source.text);
            }
        }
        p
    }

    /// What this plan allows but is likely a slip (a total over a day, a byte cap
    /// below a block size), one line each: `<file>:<line>: <key>: <why>` for a plan
    /// from a file (the key as the file spells it, [`locate`]), else
    /// `plan: field <field>: <why>`.
    pub fn warnings(&self) -> Vec<String> {
        sanity::warnings(self)
            .into_iter()
            .map(|(field, message)| {
                if self.source.text.is_empty() {
                    return format!("plan: field `{field}`: {message}");
                }
                let e = locate::invalid_in_file(
                    &self.source.file,
                    &self.source.text,
                    &field,
                    message,
                    0,
                );
                e.to_string()
            })
            .collect()
    }
}

/// Why two names of one kind clash: equal, or equal once folded as a farm keys them.
pub(crate) fn clash_message(what: &str, a: &str, b: &str) -> String {
    if a == b {
        format!("{what}s must be unique: `{a}` is used twice")
    } else {
        format!(
            "{what}s must be unique: `{a}` and `{b}` differ only in case or `-`/`_`, and a \
             board farm (LAVA) keys results by the name lower-cased with `-` as `_`; rename one"
        )
    }
}

#[cfg(test)]
mod tests;
