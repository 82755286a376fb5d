//! Linux: the block devices of `sys/block` under a root tree (`/` on a real machine, a
//! fake tree in tests), with mounts from `proc/self/mountinfo` and swap from
//! `proc/swaps`, assembled into [`Device`]s ([`scan_linux`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::disk::{Device, Holder, Mount, Partition, Transport};

impl Transport {
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

/// One line of `/proc/self/mountinfo` (proc(5)), the fields benchboot uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    /// `major:minor` of the mounted device.
    pub dev: String,
    /// The folder of the filesystem that is mounted (`/` unless a part of it is bound).
    pub root: PathBuf,
    pub mount_point: PathBuf,
    pub fstype: String,
    pub source: String,
    /// The filesystem's own options as the kernel shows them, still escaped (`\054` for
    /// a comma inside a value): `rw,lowerdir=/l,upperdir=/u,workdir=/w` of an overlay.
    pub options: String,
}

/// Parses `/proc/self/mountinfo`: `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3
/// /dev/root rw`; octal escapes (`\040` for a space) are decoded, except in
/// [`MountEntry::options`]. Malformed lines are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let left: Vec<&str> = left.split(' ').collect();
            let mut right = right.split(' ');
            Some(MountEntry {
                dev: left.get(2)?.to_string(),
                root: PathBuf::from(unescape(left.get(3)?)),
                mount_point: PathBuf::from(unescape(left.get(4)?)),
                fstype: right.next()?.to_string(),
                source: unescape(right.next().unwrap_or("")),
                options: right.next().unwrap_or("").to_owned(),
            })
        })
        .collect()
}

/// One line of `/proc/swaps` (proc(5)), the fields benchboot uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwapArea {
    /// The swap partition's device node or the swap file's path.
    pub file: PathBuf,
    /// `partition` or `file`.
    pub kind: String,
}

/// Parses `/proc/swaps`: one [`SwapArea`] per active swap area (the header skipped).
pub fn parse_swaps(text: &str) -> Vec<SwapArea> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            Some(SwapArea {
                file: PathBuf::from(unescape(f.next()?)),
                kind: f.next()?.to_string(),
            })
        })
        .collect()
}

/// Decodes the kernel's `\ooo` octal escapes in mount tables.
pub fn unescape(s: &str) -> String {
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
    /// Its resolved path under `sys/devices` ([`Transport::from_sysfs_path`]).
    rel: String,
    /// `major:minor`.
    dev: String,
    partitions: Vec<Partition>,
    /// The holders stacked directly on the disk or one of its partitions (`on`: that
    /// component), loop devices over them included ([`stack_loops`]).
    holders: Vec<Holder>,
    /// A loop device's `loop/backing_file`, as the kernel writes it.
    backing: Option<String>,
}

/// A disk that a component (a partition, a holder) belongs to.
struct Owner {
    disk: String,
    /// For a holder, the disk's own partition (or the disk) under it, however deep the
    /// stack; `None` for the disk's own partitions.
    through: Option<String>,
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

/// What a path is by its device numbers (stat(2)), as `major:minor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatKey {
    /// A block device node: its `st_rdev`, whatever the node's name or folder.
    Block(String),
    /// Anything else: the `st_dev` of the filesystem holding it.
    On(String),
}

/// `major:minor` of a `dev_t`.
#[cfg(unix)]
pub fn dev_key(dev: u64) -> String {
    // dev_t is u64 on Linux, i32 on macOS.
    #[allow(clippy::unnecessary_cast)]
    let dev = dev as rustix::fs::Dev;
    format!("{}:{}", rustix::fs::major(dev), rustix::fs::minor(dev))
}

/// [`StatKey`] of `path` (symbolic links followed), `None` when it cannot be stat'ed
/// (or off Linux: the scan then goes by names, as in a fake tree).
pub fn stat_key(path: &Path) -> Option<StatKey> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let meta = std::fs::metadata(path).ok()?;
        Some(if meta.file_type().is_block_device() {
            StatKey::Block(dev_key(meta.rdev()))
        } else {
            StatKey::On(dev_key(meta.dev()))
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        None
    }
}

/// Every block device under `root/sys/block` (virtual ones and empty readers too; see
/// [`Device::is_candidate`]), with mounts and swap from `root/proc`. On the real
/// system (`root` is `/`) mounts, swap areas and loop devices' backing files are
/// matched by device number (stat(2)); in a fake tree by the names they show.
///
/// # Errors
/// When `root/sys/block` cannot be read.
pub fn scan_linux(root: &Path) -> Result<Vec<Device>> {
    let real = root == Path::new("/");
    let mut nodes = read_nodes(root)?;
    let by_dev = components_by_dev(&nodes);
    let mountinfo = std::fs::read_to_string(root.join("proc/self/mountinfo")).unwrap_or_default();
    let mountinfo: Vec<MountEntry> = parse_mountinfo(&mountinfo)
        .into_iter()
        .map(|m| MountEntry {
            dev: mount_dev(&m, real),
            ..m
        })
        .collect();
    stack_loops(&mut nodes, &by_dev, &mountinfo, real);
    let (owners, mut holders) = owners(&nodes);
    let mut mounts = mounts_by_disk(&mountinfo, &by_dev, &owners);
    let swaps_text = std::fs::read_to_string(root.join("proc/swaps")).unwrap_or_default();
    let mut swaps = swaps_by_disk(
        &parse_swaps(&swaps_text),
        &nodes,
        &mountinfo,
        &by_dev,
        &owners,
        real,
    );
    // A holder's partitions, by name, to the holder (`loop2p1` is on `loop2`).
    let part_of: BTreeMap<String, String> = nodes
        .iter()
        .flat_map(|(n, node)| {
            node.partitions
                .iter()
                .map(move |p| (p.name.clone(), n.clone()))
        })
        .collect();
    Ok(nodes
        .into_iter()
        .map(|(name, node)| {
            let mounts = mounts.remove(&name).unwrap_or_default();
            let swaps = swaps.remove(&name).unwrap_or_default();
            let mut holders = holders.remove(&name).unwrap_or_default();
            mark_mounted(&mut holders, &mounts, &part_of);
            device(name, node, mounts, swaps, holders)
        })
        .collect())
}

/// Component names (disks, partitions, holders) by `major:minor`.
fn components_by_dev(nodes: &BTreeMap<String, Node>) -> BTreeMap<String, String> {
    let mut by_dev = BTreeMap::new();
    for (name, node) in nodes {
        by_dev.insert(node.dev.clone(), name.clone());
        for p in &node.partitions {
            if let Some(dev) = &p.dev {
                by_dev.insert(dev.clone(), p.name.clone());
            }
        }
    }
    by_dev
}

/// The `major:minor` a mount's filesystem lies on: mountinfo's, except that a
/// filesystem with a device number of its own (btrfs: `0:45`) is on the block device
/// its source names, by that node's `st_rdev` (the real system only).
fn mount_dev(m: &MountEntry, real: bool) -> String {
    if real && m.dev.starts_with("0:") && m.source.starts_with('/') {
        if let Some(StatKey::Block(k)) = stat_key(Path::new(&m.source)) {
            return k;
        }
    }
    m.dev.clone()
}

/// The mount holding `path`: the longest mount point over it (the last mounted of
/// equals, which hides the others).
fn mount_holding<'a>(path: &Path, mountinfo: &'a [MountEntry]) -> Option<&'a MountEntry> {
    mountinfo
        .iter()
        .filter(|m| path.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.components().count())
}

/// The component a `/dev` node names in a fake tree, or a swap area's name:
/// `/dev/sdb1` is `sdb1`, `/dev/mapper/<name>` the device-mapper node of that name.
fn component_named(path: &Path, nodes: &BTreeMap<String, Node>) -> Option<String> {
    let name = path
        .strip_prefix("/dev")
        .ok()?
        .to_string_lossy()
        .into_owned();
    match name.strip_prefix("mapper/") {
        Some(dm) => nodes
            .iter()
            .find(|(_, n)| read_trim(&n.dir.join("dm/name")).as_deref() == Some(dm))
            .map(|(n, _)| n.clone()),
        None => Some(name),
    }
}

/// The component a path lies on, and whether the path is that component's device node:
/// a block device node is that device (by `st_rdev`); a file is on the filesystem
/// holding it (by `st_dev`, else the mount over it). In a fake tree (`real` false)
/// and for a removed file (`deleted`), by the names and mount points it shows.
fn component_of(
    path: &Path,
    deleted: bool,
    nodes: &BTreeMap<String, Node>,
    by_dev: &BTreeMap<String, String>,
    mountinfo: &[MountEntry],
    real: bool,
) -> Option<(String, bool)> {
    if real && !deleted {
        match stat_key(path) {
            Some(StatKey::Block(k)) => return by_dev.get(&k).map(|c| (c.clone(), true)),
            Some(StatKey::On(k)) if by_dev.contains_key(&k) => {
                return by_dev.get(&k).map(|c| (c.clone(), false))
            }
            _ => {}
        }
    }
    if path.starts_with("/dev") && !real {
        return component_named(path, nodes).map(|c| (c, true));
    }
    mount_holding(path, mountinfo).and_then(|m| by_dev.get(&m.dev).map(|c| (c.clone(), false)))
}

/// Each loop device becomes a holder of the component its backing file lies on (or
/// its backing device is): a loop over a file on a card's partition is stacked on
/// that partition, as dm-crypt over it would be.
fn stack_loops(
    nodes: &mut BTreeMap<String, Node>,
    by_dev: &BTreeMap<String, String>,
    mountinfo: &[MountEntry],
    real: bool,
) {
    let mut stacked = Vec::new();
    for (name, node) in nodes.iter() {
        let Some(backing) = &node.backing else {
            continue;
        };
        let (path, deleted) = match backing.strip_suffix(" (deleted)") {
            Some(p) => (p, true),
            None => (backing.as_str(), false),
        };
        let on = component_of(Path::new(path), deleted, nodes, by_dev, mountinfo, real);
        if let Some((on, device)) = on.filter(|(on, _)| on != name) {
            stacked.push(Holder {
                name: name.clone(),
                on,
                // A loop over the partition itself reads no file on it.
                backing_file: (!device).then(|| PathBuf::from(backing)),
                via: None,
                mounted: false,
            });
        }
    }
    for h in stacked {
        let owner = nodes
            .iter()
            .find(|(n, node)| **n == h.on || node.partitions.iter().any(|p| p.name == h.on))
            .map(|(n, _)| n.clone());
        if let Some(node) = owner.and_then(|n| nodes.get_mut(&n)) {
            node.holders.push(h);
        }
    }
}

/// The block devices of `root/sys/block` with their partitions and holders, by name.
fn read_nodes(root: &Path) -> Result<BTreeMap<String, Node>> {
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
        let holder = |on: &str, h: String| Holder {
            name: h,
            on: on.to_owned(),
            backing_file: None,
            via: None,
            mounted: false,
        };
        let mut holders: Vec<Holder> = dir_names(&dir.join("holders"))
            .into_iter()
            .map(|h| holder(&name, h))
            .collect();
        let mut partitions = Vec::new();
        for part in dir_names(&dir) {
            let pdir = dir.join(&part);
            if pdir.join("partition").is_file() {
                for h in dir_names(&pdir.join("holders")) {
                    holders.push(holder(&part, h));
                }
                let dev = read_trim(&pdir.join("dev"));
                let number = read_trim(&pdir.join("partition")).and_then(|n| n.parse().ok());
                partitions.push(Partition {
                    name: part,
                    dev,
                    number,
                });
            }
        }
        let dev = read_trim(&dir.join("dev")).unwrap_or_default();
        let backing = read_trim(&dir.join("loop/backing_file"));
        let node = Node {
            dir,
            rel,
            dev,
            partitions,
            holders,
            backing,
        };
        nodes.insert(name, node);
    }
    Ok(nodes)
}

/// Everything that belongs to each disk, by component name: the disk, its partitions,
/// and the holders over them and their partitions, followed transitively (dm-crypt
/// over a partition, LVM on that, a loop device over a file there). Also every
/// holder on each disk, by disk name, `on` the disk's own component under it.
#[allow(clippy::type_complexity)]
fn owners(
    nodes: &BTreeMap<String, Node>,
) -> (BTreeMap<String, Vec<Owner>>, BTreeMap<String, Vec<Holder>>) {
    let mut owners: BTreeMap<String, Vec<Owner>> = BTreeMap::new();
    let mut holders: BTreeMap<String, Vec<Holder>> = BTreeMap::new();
    for (name, node) in nodes {
        let own =
            std::iter::once(name.clone()).chain(node.partitions.iter().map(|p| p.name.clone()));
        for c in own {
            owners.entry(c).or_default().push(Owner {
                disk: name.clone(),
                through: None,
            });
        }
        // Holders still to visit, each with the disk's own component under the stack
        // and the holder it is stacked on.
        let mut stack: Vec<Holder> = node.holders.clone();
        let mut seen = BTreeSet::new();
        while let Some(Holder {
            on: part,
            name: holder,
            via,
            backing_file,
            ..
        }) = stack.pop()
        {
            if !seen.insert(holder.clone()) {
                continue;
            }
            let h = nodes.get(&holder);
            holders.entry(name.clone()).or_default().push(Holder {
                name: holder.clone(),
                on: part.clone(),
                backing_file,
                via,
                mounted: false,
            });
            if let Some(h) = h {
                stack.extend(h.holders.iter().map(|hh| Holder {
                    on: part.clone(),
                    via: Some(holder.clone()),
                    ..hh.clone()
                }));
                // A holder's own partitions (a partitioned loop device) are on it too.
                for p in &h.partitions {
                    owners.entry(p.name.clone()).or_default().push(Owner {
                        disk: name.clone(),
                        through: Some(part.clone()),
                    });
                }
            }
            owners.entry(holder).or_default().push(Owner {
                disk: name.clone(),
                through: Some(part),
            });
        }
    }
    (owners, holders)
}

/// Marks each holder a filesystem is mounted through: mounted on it, on one of its
/// partitions (`part_of`) or on a holder stacked on it, however high.
fn mark_mounted(holders: &mut [Holder], mounts: &[Mount], part_of: &BTreeMap<String, String>) {
    let via: BTreeMap<String, Option<String>> = holders
        .iter()
        .map(|h| (h.name.clone(), h.via.clone()))
        .collect();
    let mut used = BTreeSet::new();
    for m in mounts.iter().filter(|m| m.through.is_some()) {
        let mut at = Some(part_of.get(&m.device).unwrap_or(&m.device).clone());
        while let Some(name) = at {
            if !via.contains_key(&name) || !used.insert(name.clone()) {
                break;
            }
            at = via.get(&name).cloned().flatten();
        }
    }
    for h in holders {
        h.mounted = used.contains(&h.name);
    }
}

/// The mounts of `mountinfo` on each disk, by disk name; `by_dev` maps `major:minor` to
/// component names.
fn mounts_by_disk(
    mountinfo: &[MountEntry],
    by_dev: &BTreeMap<String, String>,
    owners: &BTreeMap<String, Vec<Owner>>,
) -> BTreeMap<String, Vec<Mount>> {
    let mut mounts: BTreeMap<String, Vec<Mount>> = BTreeMap::new();
    for m in mountinfo {
        let Some(component) = by_dev.get(m.dev.as_str()) else {
            continue;
        };
        for owner in owners.get(component).into_iter().flatten() {
            mounts.entry(owner.disk.clone()).or_default().push(Mount {
                device: component.to_string(),
                mount_point: m.mount_point.clone(),
                fstype: m.fstype.clone(),
                through: owner.through.clone(),
                spans: Vec::new(),
            });
        }
    }
    mounts
}

/// The active swap areas on each disk, by disk name: a partition by its device number
/// (a fake tree: by its name, a device-mapper one through `/dev/mapper/<name>`), a swap
/// file by the filesystem holding it.
fn swaps_by_disk(
    areas: &[SwapArea],
    nodes: &BTreeMap<String, Node>,
    mountinfo: &[MountEntry],
    by_dev: &BTreeMap<String, String>,
    owners: &BTreeMap<String, Vec<Owner>>,
    real: bool,
) -> BTreeMap<String, Vec<String>> {
    let mut swaps: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for SwapArea { file, kind } in areas {
        let component = if kind == "partition" && !real {
            component_named(file, nodes)
        } else {
            component_of(file, false, nodes, by_dev, mountinfo, real).map(|(c, _)| c)
        };
        let label = if kind == "partition" {
            component.clone().unwrap_or_default()
        } else {
            file.display().to_string()
        };
        for owner in component.iter().flat_map(|c| owners.get(c)).flatten() {
            swaps
                .entry(owner.disk.clone())
                .or_default()
                .push(label.clone());
        }
    }
    swaps
}

/// The [`Device`] of one node: sizes and flags read from its `sys/block` folder.
fn device(
    name: String,
    node: Node,
    mounts: Vec<Mount>,
    swaps: Vec<String>,
    holders: Vec<Holder>,
) -> Device {
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
        holders,
        backing_file: node.backing.map(PathBuf::from),
        mounts,
        swaps,
        system: Vec::new(),
        // The registers are there only for a card on the mmc bus (drivers/mmc/core/sd.c).
        card: device.join("cid").exists().then(|| {
            let card =
                benchboot_sdcard::decode(&benchboot_sdcard::RawRegisters::read(&device, None));
            card.summary()
        }),
        name,
    }
}
