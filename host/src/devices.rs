//! `benchboot devices`: the disks a card could be on, and whether `benchboot flash` may
//! write each one, with every reason when it may not.
//!
//! Linux reads a root tree (`/` on a real machine, a fake tree in tests):
//! `sys/block/<dev>` (`size` in 512-byte sectors, `removable`, `ro`, `device/model`,
//! `device/vendor`, partitions, `holders/`), the transport from the resolved sysfs path,
//! mounts from `proc/self/mountinfo` (matched by major:minor, also through
//! device-mapper/RAID holders) and swap from `proc/swaps`. macOS parses
//! `diskutil list -plist` and `diskutil info -plist <disk>` ([`macos`]).
//!
//! The rules ([`Device::verdict`]): a device is refused when it is not removable (an
//! mmc card counts as removable), holds the running system (`/`, `/boot`, `/usr`, `/var`
//! or swap), has a filesystem mounted through a holder benchboot cannot unmount (only
//! the card's own partitions are unmounted), is read-only, or is larger than a sane card
//! ([`DEFAULT_SIZE_LIMIT`], lifted by `--allow-large`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

/// Larger than this (256 GiB) is not a card but a disk, unless `--allow-large`.
pub const DEFAULT_SIZE_LIMIT: u64 = 256 << 30;

/// Mount points that hold the running system: a disk carrying one is never written.
pub const SYSTEM_MOUNTS: &[&str] = &["/", "/boot", "/boot/efi", "/boot/firmware", "/usr", "/var"];

fn is_system_mount(mount_point: &Path) -> bool {
    SYSTEM_MOUNTS.iter().any(|m| mount_point == Path::new(m))
        || mount_point.starts_with("/System/Volumes")
}

/// How a disk is attached (Linux: from its resolved sysfs path; macOS: `BusProtocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Usb,
    Mmc,
    Ata,
    Nvme,
    Virtio,
    Scsi,
    /// loop, device-mapper, md, zram, disk images: no hardware of its own.
    Virtual,
    Unknown,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Usb => "usb",
            Transport::Mmc => "mmc",
            Transport::Ata => "ata",
            Transport::Nvme => "nvme",
            Transport::Virtio => "virtio",
            Transport::Scsi => "scsi",
            Transport::Virtual => "virtual",
            Transport::Unknown => "unknown",
        }
    }

    /// The transport of a block device from its path under `/sys/devices`, e.g.
    /// `pci0000:00/0000:00:14.0/usb2/2-1/.../block/sdb` is USB.
    pub fn from_sysfs_path(rel: &str) -> Transport {
        let parts: Vec<&str> = rel.split('/').collect();
        let any = |f: &dyn Fn(&str) -> bool| parts.iter().any(|p| f(p));
        if parts.first() == Some(&"virtual") {
            Transport::Virtual
        } else if any(&|p| p.starts_with("usb") && p[3..].chars().all(|c| c.is_ascii_digit())) {
            Transport::Usb
        } else if any(&|p| p == "mmc_host") {
            Transport::Mmc
        } else if any(&|p| p == "nvme") {
            Transport::Nvme
        } else if any(&|p| p.starts_with("virtio")) {
            Transport::Virtio
        } else if any(&|p| p.starts_with("ata")) {
            Transport::Ata
        } else if any(&|p| p.starts_with("target")) {
            Transport::Scsi
        } else {
            Transport::Unknown
        }
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One partition of a disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Partition {
    pub name: String,
    /// `major:minor` (Linux).
    pub dev: Option<String>,
}

/// One mounted filesystem on a disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mount {
    /// The block device mounted: the disk, one of its partitions or a holder (`dm-0`).
    pub device: String,
    pub mount_point: PathBuf,
    pub fstype: String,
    /// When `device` is a holder stacked on the disk (LUKS, LVM, RAID): the disk's own
    /// partition under it. Such mounts are not unmounted by benchboot.
    pub through: Option<String>,
}

/// A whole disk as found on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Device {
    /// Kernel name: `sdb`, `mmcblk0`, `disk4`.
    pub name: String,
    /// Device node: `/dev/sdb`.
    pub path: PathBuf,
    /// `major:minor` (Linux).
    pub dev: Option<String>,
    /// Capacity in bytes.
    pub size_bytes: u64,
    /// Logical block size in bytes: the alignment of `O_DIRECT` I/O.
    pub logical_block_size: u64,
    pub removable: bool,
    pub read_only: bool,
    pub transport: Transport,
    pub model: Option<String>,
    pub vendor: Option<String>,
    pub partitions: Vec<Partition>,
    pub mounts: Vec<Mount>,
    /// Active swap areas on the disk: a partition name or a swap file's path.
    pub swaps: Vec<String>,
}

/// Why a device may not be written. `Display` gives the reason and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("no medium: the reader is empty; insert the card")]
    NoMedium,
    #[error(
        "a virtual device (loop, device-mapper, RAID), not a card; to write an image \
         file, pass that file's path as --device"
    )]
    Virtual,
    #[error(
        "not removable ({transport}): a fixed disk, not a card; put the card in a USB \
         reader or the SD slot and pick it from `benchboot devices`"
    )]
    NotRemovable { transport: Transport },
    #[error("holds the running system ({}): this disk is never written", uses.join(", "))]
    HoldsSystem { uses: Vec<String> },
    #[error(
        "{} is mounted through {holder}, which sits on {part}: unmount it and close \
         {holder} first (`cryptsetup close`, `vgchange -an` or `mdadm --stop`)",
        mount_point.display()
    )]
    MountedThroughHolder {
        mount_point: PathBuf,
        holder: String,
        part: String,
    },
    #[error(
        "read-only: the card's lock switch is on or the kernel set it read-only; slide \
         the switch away from LOCK and insert the card again"
    )]
    ReadOnly,
    #[error(
        "{} is larger than a sane card ({} limit): pass --allow-large if this really is \
         the card",
        human_bytes(*size_bytes),
        human_bytes(*limit_bytes)
    )]
    TooLarge { size_bytes: u64, limit_bytes: u64 },
}

impl Refusal {
    /// A stable kebab-case code for scripts (`--json`).
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::NoMedium => "no-medium",
            Refusal::Virtual => "virtual",
            Refusal::NotRemovable { .. } => "not-removable",
            Refusal::HoldsSystem { .. } => "holds-system",
            Refusal::MountedThroughHolder { .. } => "mounted-through-holder",
            Refusal::ReadOnly => "read-only",
            Refusal::TooLarge { .. } => "too-large",
        }
    }
}

/// What the rules allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Larger devices are refused ([`Refusal::TooLarge`]), in bytes.
    pub max_bytes: u64,
}

impl Limits {
    /// [`DEFAULT_SIZE_LIMIT`], or no size limit with `--allow-large`.
    pub fn new(allow_large: bool) -> Limits {
        Limits {
            max_bytes: if allow_large {
                u64::MAX
            } else {
                DEFAULT_SIZE_LIMIT
            },
        }
    }
}

/// The rules applied to one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Every reason the device may not be written; empty when it may.
    pub refusals: Vec<Refusal>,
    /// The card's own mounted filesystems, deepest first: unmounted before writing.
    pub unmount: Vec<PathBuf>,
}

impl Verdict {
    pub fn writable(&self) -> bool {
        self.refusals.is_empty()
    }
}

impl Device {
    /// What of the running system the disk holds: `/ on nvme0n1p2`, `swap on sda3`.
    pub fn system_uses(&self) -> Vec<String> {
        let mounts = self
            .mounts
            .iter()
            .filter(|m| is_system_mount(&m.mount_point));
        let mounts = mounts.map(|m| format!("{} on {}", m.mount_point.display(), m.device));
        let swaps = self.swaps.iter().map(|s| format!("swap on {s}"));
        mounts.chain(swaps).collect()
    }

    /// The rules of the module docs applied to this device.
    pub fn verdict(&self, limits: &Limits) -> Verdict {
        let mut refusals = Vec::new();
        if self.transport == Transport::Virtual {
            refusals.push(Refusal::Virtual);
        } else if self.size_bytes == 0 {
            refusals.push(Refusal::NoMedium);
        }
        if !self.removable && !matches!(self.transport, Transport::Mmc | Transport::Virtual) {
            refusals.push(Refusal::NotRemovable {
                transport: self.transport,
            });
        }
        let uses = self.system_uses();
        if !uses.is_empty() {
            refusals.push(Refusal::HoldsSystem { uses });
        }
        for m in &self.mounts {
            if let (Some(part), false) = (&m.through, is_system_mount(&m.mount_point)) {
                refusals.push(Refusal::MountedThroughHolder {
                    mount_point: m.mount_point.clone(),
                    holder: m.device.clone(),
                    part: part.clone(),
                });
            }
        }
        if self.read_only {
            refusals.push(Refusal::ReadOnly);
        }
        if self.size_bytes > limits.max_bytes {
            refusals.push(Refusal::TooLarge {
                size_bytes: self.size_bytes,
                limit_bytes: limits.max_bytes,
            });
        }
        let mut unmount: Vec<PathBuf> = self
            .mounts
            .iter()
            .filter(|m| m.through.is_none() && !is_system_mount(&m.mount_point))
            .map(|m| m.mount_point.clone())
            .collect();
        unmount.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
        Verdict { refusals, unmount }
    }

    /// One line for people: `/dev/sdb (Generic STORAGE DEVICE, usb, 29.7 GiB)`.
    pub fn describe(&self) -> String {
        let model = [self.vendor.as_deref(), self.model.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        let model = if model.is_empty() {
            String::new()
        } else {
            format!("{model}, ")
        };
        format!(
            "{} ({model}{}, {})",
            self.path.display(),
            self.transport,
            human_bytes(self.size_bytes)
        )
    }

    /// Worth listing: real hardware, with a medium or a removable (empty) reader.
    pub fn is_candidate(&self) -> bool {
        self.transport != Transport::Virtual && (self.size_bytes > 0 || self.removable)
    }
}

/// `29.7 GiB`: binary units, one decimal.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes == u64::MAX {
        return "none".into();
    }
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

// ---------------------------------------------------------------------------- Linux

/// One line of `/proc/self/mountinfo` (proc(5)), the fields benchboot uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    /// `major:minor` of the mounted device.
    pub dev: String,
    pub mount_point: PathBuf,
    pub fstype: String,
    pub source: String,
}

/// Parses `/proc/self/mountinfo`: `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3
/// /dev/root rw`; octal escapes (`\040` for a space) are decoded. Malformed lines are
/// skipped.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let left: Vec<&str> = left.split(' ').collect();
            let mut right = right.split(' ');
            Some(MountEntry {
                dev: left.get(2)?.to_string(),
                mount_point: PathBuf::from(unescape(left.get(4)?)),
                fstype: right.next()?.to_string(),
                source: unescape(right.next().unwrap_or("")),
            })
        })
        .collect()
}

/// Parses `/proc/swaps`: (file name, type) per active swap area.
pub fn parse_swaps(text: &str) -> Vec<(PathBuf, String)> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            Some((PathBuf::from(unescape(f.next()?)), f.next()?.to_string()))
        })
        .collect()
}

/// Decodes the kernel's `\ooo` octal escapes in mount tables.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], oct) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A block device of `sys/block`, before it is assembled into a [`Device`].
struct Node {
    dir: PathBuf,
    rel: String,
    dev: String,
    partitions: Vec<Partition>,
    /// Holders per component: (component, holder name).
    holders: Vec<(String, String)>,
}

fn read_trim(path: &Path) -> Option<String> {
    let s = std::fs::read_to_string(path).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_owned())
}

fn read_num(path: &Path) -> u64 {
    read_trim(path).and_then(|s| s.parse().ok()).unwrap_or(0)
}

fn dir_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every block device under `root/sys/block` (virtual ones and empty readers too; see
/// [`Device::is_candidate`]), with mounts and swap from `root/proc`.
///
/// # Errors
/// When `root/sys/block` cannot be read.
pub fn scan_linux(root: &Path) -> Result<Vec<Device>> {
    let sys_block = root.join("sys/block");
    let sys_devices = root.join("sys/devices").canonicalize().ok();
    let mut nodes = BTreeMap::new();
    let entries = std::fs::read_dir(&sys_block)
        .with_context(|| format!("reading {}: is sysfs mounted?", sys_block.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let dir = entry.path();
        let rel = match (dir.canonicalize(), &sys_devices) {
            (Ok(real), Some(base)) => real
                .strip_prefix(base)
                .map(|r| r.to_string_lossy().into_owned())
                .unwrap_or_default(),
            _ => String::new(),
        };
        let mut holders: Vec<(String, String)> = dir_names(&dir.join("holders"))
            .into_iter()
            .map(|h| (name.clone(), h))
            .collect();
        let mut partitions = Vec::new();
        for part in dir_names(&dir) {
            let pdir = dir.join(&part);
            if pdir.join("partition").is_file() {
                for h in dir_names(&pdir.join("holders")) {
                    holders.push((part.clone(), h));
                }
                let dev = read_trim(&pdir.join("dev"));
                partitions.push(Partition { name: part, dev });
            }
        }
        let dev = read_trim(&dir.join("dev")).unwrap_or_default();
        let node = Node {
            dir,
            rel,
            dev,
            partitions,
            holders,
        };
        nodes.insert(name, node);
    }

    // Everything that belongs to each disk, by name: (disk, component it sits on when a
    // holder). Holders are followed transitively (dm-crypt over a partition, LVM on that).
    let mut owners: BTreeMap<String, Vec<(String, Option<String>)>> = BTreeMap::new();
    for (name, node) in &nodes {
        let own =
            std::iter::once(name.clone()).chain(node.partitions.iter().map(|p| p.name.clone()));
        for c in own {
            owners.entry(c).or_default().push((name.clone(), None));
        }
        let mut stack: Vec<(String, String)> = node
            .holders
            .iter()
            .map(|(c, h)| (h.clone(), c.clone()))
            .collect();
        let mut seen = BTreeSet::new();
        while let Some((holder, part)) = stack.pop() {
            if !seen.insert(holder.clone()) {
                continue;
            }
            if let Some(h) = nodes.get(&holder) {
                stack.extend(h.holders.iter().map(|(_, hh)| (hh.clone(), part.clone())));
            }
            owners
                .entry(holder)
                .or_default()
                .push((name.clone(), Some(part)));
        }
    }
    let mut by_dev: BTreeMap<&str, &str> = BTreeMap::new();
    for (name, node) in &nodes {
        by_dev.insert(node.dev.as_str(), name.as_str());
        for p in &node.partitions {
            if let Some(dev) = &p.dev {
                by_dev.insert(dev.as_str(), p.name.as_str());
            }
        }
    }

    let mountinfo = std::fs::read_to_string(root.join("proc/self/mountinfo")).unwrap_or_default();
    let mountinfo = parse_mountinfo(&mountinfo);
    let mut mounts: BTreeMap<String, Vec<Mount>> = BTreeMap::new();
    for m in &mountinfo {
        let Some(component) = by_dev.get(m.dev.as_str()) else {
            continue;
        };
        for (disk, through) in owners.get(*component).into_iter().flatten() {
            mounts.entry(disk.clone()).or_default().push(Mount {
                device: component.to_string(),
                mount_point: m.mount_point.clone(),
                fstype: m.fstype.clone(),
                through: through.clone(),
            });
        }
    }

    let swaps_text = std::fs::read_to_string(root.join("proc/swaps")).unwrap_or_default();
    let mut swaps: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (file, kind) in parse_swaps(&swaps_text) {
        let component = if kind == "partition" || file.starts_with("/dev") {
            let name = file
                .strip_prefix("/dev")
                .unwrap_or(&file)
                .to_string_lossy()
                .into_owned();
            match name.strip_prefix("mapper/") {
                Some(dm) => nodes
                    .iter()
                    .find(|(_, n)| read_trim(&n.dir.join("dm/name")).as_deref() == Some(dm))
                    .map(|(n, _)| n.clone()),
                None => Some(name),
            }
        } else {
            // A swap file: it pins the filesystem holding it (longest mount point prefix).
            mountinfo
                .iter()
                .filter(|m| file.starts_with(&m.mount_point))
                .max_by_key(|m| m.mount_point.components().count())
                .and_then(|m| by_dev.get(m.dev.as_str()).map(|c| c.to_string()))
        };
        let label = if kind == "partition" {
            component.clone().unwrap_or_default()
        } else {
            file.display().to_string()
        };
        for (disk, _) in component.iter().flat_map(|c| owners.get(c)).flatten() {
            swaps.entry(disk.clone()).or_default().push(label.clone());
        }
    }

    Ok(nodes
        .into_iter()
        .map(|(name, node)| {
            let device = node.dir.join("device");
            Device {
                path: PathBuf::from("/dev").join(&name),
                dev: Some(node.dev),
                size_bytes: read_num(&node.dir.join("size")) * 512,
                logical_block_size: match read_num(&node.dir.join("queue/logical_block_size")) {
                    0 => 512,
                    n => n,
                },
                removable: read_num(&node.dir.join("removable")) == 1,
                read_only: read_num(&node.dir.join("ro")) == 1,
                transport: Transport::from_sysfs_path(&node.rel),
                model: read_trim(&device.join("model")).or_else(|| read_trim(&device.join("name"))),
                // virtio and nvme put a PCI id (`0x1af4`) there, not a name.
                vendor: read_trim(&device.join("vendor")).filter(|v| !v.starts_with("0x")),
                partitions: node.partitions,
                mounts: mounts.remove(&name).unwrap_or_default(),
                swaps: swaps.remove(&name).unwrap_or_default(),
                name,
            }
        })
        .collect())
}

/// The devices of this machine: sysfs on Linux, `diskutil` on macOS.
///
/// # Errors
/// When the system's tables cannot be read, or on another OS (pass an image file
/// path as `--device` there).
pub fn scan_system() -> Result<Vec<Device>> {
    #[cfg(target_os = "linux")]
    {
        scan_linux(Path::new("/"))
    }
    #[cfg(target_os = "macos")]
    {
        macos::scan(&|args| {
            let out = std::process::Command::new("diskutil").args(args).output()?;
            if !out.status.success() {
                return Err(std::io::Error::other(format!(
                    "diskutil {}: {}",
                    args.join(" "),
                    String::from_utf8_lossy(&out.stderr).trim()
                )));
            }
            Ok(out.stdout)
        })
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        anyhow::bail!(
            "listing disks is implemented for Linux and macOS only; to write an image file, \
             pass that file's path as --device"
        )
    }
}

// ---------------------------------------------------------------------------- output

#[derive(Serialize)]
struct RefusalJson {
    reason: &'static str,
    message: String,
}

#[derive(Serialize)]
struct DeviceJson<'a> {
    #[serde(flatten)]
    device: &'a Device,
    writable: bool,
    refusals: Vec<RefusalJson>,
    unmount: &'a [PathBuf],
}

/// `benchboot devices --json`: the candidates with their verdicts, as a JSON array.
pub fn to_json(devices: &[Device], limits: &Limits) -> String {
    let verdicts: Vec<Verdict> = devices.iter().map(|d| d.verdict(limits)).collect();
    let rows: Vec<DeviceJson> = devices
        .iter()
        .zip(&verdicts)
        .map(|(device, v)| DeviceJson {
            device,
            writable: v.writable(),
            refusals: v
                .refusals
                .iter()
                .map(|r| RefusalJson {
                    reason: r.code(),
                    message: r.to_string(),
                })
                .collect(),
            unmount: &v.unmount,
        })
        .collect();
    serde_json::to_string_pretty(&rows).expect("devices serialise")
}

/// `benchboot devices`: a table, then every reason for each refused device.
pub fn to_table(devices: &[Device], limits: &Limits) -> String {
    use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header([
        "device",
        "size",
        "transport",
        "model",
        "removable",
        "mounted at",
        "flash",
    ]);
    let mut notes = String::new();
    for d in devices {
        let v = d.verdict(limits);
        let model = [d.vendor.as_deref(), d.model.as_deref()]
            .into_iter()
            .flatten();
        let mounts: Vec<String> = d
            .mounts
            .iter()
            .map(|m| m.mount_point.display().to_string())
            .collect();
        t.add_row([
            d.path.display().to_string(),
            human_bytes(d.size_bytes),
            d.transport.to_string(),
            model.collect::<Vec<_>>().join(" "),
            match (d.removable, d.transport) {
                (true, _) => "yes",
                (false, Transport::Mmc) => "yes (mmc)",
                (false, _) => "no",
            }
            .to_string(),
            mounts.join("\n"),
            if v.writable() { "ok" } else { "refused" }.to_string(),
        ]);
        for r in &v.refusals {
            notes.push_str(&format!("{}: {r}\n", d.path.display()));
        }
    }
    if devices.is_empty() {
        return "no disks found\n".into();
    }
    format!("{t}\n{notes}")
}

/// The command line of `benchboot devices`.
#[derive(Debug, Clone, clap::Args)]
pub struct DevicesArgs {
    /// Print a JSON array (every field, `writable`, `refusals` with reason codes).
    #[arg(long)]
    pub json: bool,
    /// Do not refuse disks larger than a sane card (256 GiB).
    #[arg(long)]
    pub allow_large: bool,
    /// Read sysfs and proc under this folder instead of `/` (Linux; for fake trees).
    #[arg(long, hide = true, default_value = "/")]
    pub root: PathBuf,
}

/// `benchboot devices`: the candidate disks of this machine and their verdicts.
///
/// # Errors
/// When the system's disk tables cannot be read.
pub fn run(args: &DevicesArgs) -> Result<()> {
    let limits = Limits::new(args.allow_large);
    let all = if args.root == Path::new("/") {
        scan_system()?
    } else {
        scan_linux(&args.root)?
    };
    let devices: Vec<Device> = all.into_iter().filter(Device::is_candidate).collect();
    if args.json {
        println!("{}", to_json(&devices, &limits));
    } else {
        print!("{}", to_table(&devices, &limits));
    }
    Ok(())
}

// ---------------------------------------------------------------------------- macOS

/// macOS: `diskutil list -plist` and `diskutil info -plist <disk>` turned into
/// [`Device`]s. Pure parsers; [`scan`] takes the command runner, so tests feed it
/// captured output.
pub mod macos {
    use super::{Device, Mount, Partition, Transport};
    use anyhow::{Context, Result};
    use plist::{Dictionary, Value};
    use std::path::PathBuf;

    /// A whole disk of `diskutil list -plist` (`AllDisksAndPartitions`).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ListedDisk {
        pub id: String,
        /// Bytes.
        pub size: u64,
        /// (partition or volume id, mount point) for everything on the disk.
        pub volumes: Vec<(String, Option<String>)>,
        /// For a synthesized APFS container: the partitions it lives on (`disk0s2`).
        pub physical_stores: Vec<String>,
    }

    /// The fields of `diskutil info -plist <disk>` that the rules need.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct DiskInfo {
        pub id: String,
        pub node: String,
        pub size: u64,
        pub internal: bool,
        pub removable: bool,
        pub writable: bool,
        pub bus: String,
        pub media_name: Option<String>,
        pub block_size: u64,
    }

    fn dict(v: &Value) -> Option<&Dictionary> {
        v.as_dictionary()
    }
    fn string(d: &Dictionary, k: &str) -> Option<String> {
        d.get(k)
            .and_then(Value::as_string)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    }
    fn uint(d: &Dictionary, k: &str) -> Option<u64> {
        d.get(k).and_then(Value::as_unsigned_integer)
    }
    fn boolean(d: &Dictionary, k: &str) -> Option<bool> {
        d.get(k).and_then(Value::as_boolean)
    }
    fn array<'a>(d: &'a Dictionary, k: &str) -> impl Iterator<Item = &'a Dictionary> {
        d.get(k)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(dict)
    }

    /// Parses `diskutil list -plist`.
    ///
    /// # Errors
    /// When the text is not a plist with `AllDisksAndPartitions`.
    pub fn parse_list(xml: &[u8]) -> Result<Vec<ListedDisk>> {
        let v = Value::from_reader_xml(xml).context("diskutil list -plist: not a plist")?;
        let root = dict(&v).context("diskutil list -plist: not a dictionary")?;
        let disks = root
            .get("AllDisksAndPartitions")
            .and_then(Value::as_array)
            .context("diskutil list -plist: no AllDisksAndPartitions")?;
        Ok(disks
            .iter()
            .filter_map(dict)
            .filter_map(|d| {
                let id = string(d, "DeviceIdentifier")?;
                let mut volumes = vec![(id.clone(), string(d, "MountPoint"))];
                volumes.retain(|(_, mp)| mp.is_some());
                for p in array(d, "Partitions").chain(array(d, "APFSVolumes")) {
                    let Some(pid) = string(p, "DeviceIdentifier") else {
                        continue;
                    };
                    volumes.push((pid.clone(), string(p, "MountPoint")));
                    for s in array(p, "MountedSnapshots") {
                        let sid = string(s, "SnapshotBSD").unwrap_or_else(|| pid.clone());
                        volumes.push((sid, string(s, "SnapshotMountPoint")));
                    }
                }
                let physical_stores = array(d, "APFSPhysicalStores")
                    .filter_map(|s| string(s, "DeviceIdentifier"))
                    .collect();
                Some(ListedDisk {
                    id,
                    size: uint(d, "Size").unwrap_or(0),
                    volumes,
                    physical_stores,
                })
            })
            .collect())
    }

    /// Parses `diskutil info -plist <disk>`.
    ///
    /// # Errors
    /// When the text is not a plist dictionary or is diskutil's error document.
    pub fn parse_info(xml: &[u8]) -> Result<DiskInfo> {
        let v = Value::from_reader_xml(xml).context("diskutil info -plist: not a plist")?;
        let d = dict(&v).context("diskutil info -plist: not a dictionary")?;
        if boolean(d, "Error") == Some(true) {
            anyhow::bail!(
                "diskutil: {}",
                string(d, "ErrorMessage").unwrap_or_default()
            );
        }
        let id = string(d, "DeviceIdentifier").context("diskutil info: no DeviceIdentifier")?;
        Ok(DiskInfo {
            node: string(d, "DeviceNode").unwrap_or_else(|| format!("/dev/{id}")),
            size: uint(d, "Size")
                .or_else(|| uint(d, "TotalSize"))
                .unwrap_or(0),
            // Missing keys read the safe way: internal, not removable, read-only.
            internal: boolean(d, "Internal").unwrap_or(true),
            removable: boolean(d, "Removable").unwrap_or(false)
                || boolean(d, "RemovableMedia").unwrap_or(false),
            writable: boolean(d, "WritableMedia").unwrap_or(false),
            bus: string(d, "BusProtocol").unwrap_or_default(),
            media_name: string(d, "MediaName"),
            block_size: uint(d, "DeviceBlockSize").unwrap_or(512),
            id,
        })
    }

    /// `BusProtocol` to [`Transport`].
    pub fn transport(bus: &str) -> Transport {
        match bus {
            "USB" => Transport::Usb,
            "Secure Digital" => Transport::Mmc,
            "SATA" | "ATA" => Transport::Ata,
            "PCI-Express" | "PCI" | "NVMe" | "Apple Fabric" => Transport::Nvme,
            "Disk Image" | "Virtual Interface" => Transport::Virtual,
            "SAS" | "SCSI" => Transport::Scsi,
            _ => Transport::Unknown,
        }
    }

    fn whole_disk_of(id: &str) -> &str {
        let digits = id[4.min(id.len())..]
            .chars()
            .take_while(char::is_ascii_digit)
            .count();
        &id[..(4 + digits).min(id.len())]
    }

    /// The physical disks of `diskutil list -plist`, each with `diskutil info -plist`.
    /// Volumes of a synthesized APFS container count on the disk holding its physical
    /// store, so the internal SSD is the disk that holds `/`. `run` runs `diskutil`
    /// with the given arguments and returns its standard output.
    ///
    /// # Errors
    /// When `diskutil` fails or prints something else than a plist.
    pub fn scan(run: &dyn Fn(&[&str]) -> std::io::Result<Vec<u8>>) -> Result<Vec<Device>> {
        let listed = parse_list(&run(&["list", "-plist"]).context("running diskutil list")?)?;
        let mut devices = Vec::new();
        for disk in listed.iter().filter(|d| d.physical_stores.is_empty()) {
            let info =
                parse_info(&run(&["info", "-plist", &disk.id]).context("running diskutil info")?)?;
            let mut mounts = Vec::new();
            let stacked = listed.iter().filter(|c| {
                c.physical_stores
                    .iter()
                    .any(|s| whole_disk_of(s) == disk.id)
            });
            for (vol, mp) in disk.volumes.iter().chain(stacked.flat_map(|c| &c.volumes)) {
                let seen = mounts.iter().any(|m: &Mount| {
                    &m.device == vol
                        && m.mount_point.as_os_str() == mp.as_deref().unwrap_or_default()
                });
                if let (Some(mp), false) = (mp, seen) {
                    mounts.push(Mount {
                        device: vol.clone(),
                        mount_point: PathBuf::from(mp),
                        fstype: String::new(),
                        through: None,
                    });
                }
            }
            let transport = transport(&info.bus);
            devices.push(Device {
                name: disk.id.clone(),
                path: PathBuf::from(&info.node),
                dev: None,
                size_bytes: if info.size > 0 { info.size } else { disk.size },
                logical_block_size: info.block_size,
                // An internal SD slot is removable too; other internal disks are not.
                removable: info.removable && (!info.internal || transport == Transport::Mmc),
                read_only: !info.writable,
                transport,
                model: info.media_name.clone(),
                vendor: None,
                partitions: disk
                    .volumes
                    .iter()
                    .filter(|(v, _)| v != &disk.id)
                    .map(|(v, _)| Partition {
                        name: v.clone(),
                        dev: None,
                    })
                    .collect(),
                mounts,
                swaps: vec![],
            });
        }
        Ok(devices)
    }
}
