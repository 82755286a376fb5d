//! Linux: the block devices of `sys/block` under a root tree (`/` on a real machine, a
//! fake tree in tests), with mounts from `proc/self/mountinfo` and swap from
//! `proc/swaps`, assembled into [`Device`]s ([`scan_linux`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::disk::{Device, Mount, Partition, Transport};

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
    /// Its resolved path under `sys/devices` ([`Transport::from_sysfs_path`]).
    rel: String,
    /// `major:minor`.
    dev: String,
    partitions: Vec<Partition>,
    /// The holders stacked directly on the disk or one of its partitions.
    holders: Vec<Holder>,
}

/// A holder (`dm-0`, `md0`) stacked on a component (the disk or a partition).
#[derive(Clone)]
struct Holder {
    /// The component it sits on: `sdb` or `sdb2`.
    on: String,
    /// The holder's name in `sys/block`.
    name: String,
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

/// Every block device under `root/sys/block` (virtual ones and empty readers too; see
/// [`Device::is_candidate`]), with mounts and swap from `root/proc`.
///
/// # Errors
/// When `root/sys/block` cannot be read.
pub fn scan_linux(root: &Path) -> Result<Vec<Device>> {
    let nodes = read_nodes(root)?;
    let owners = owners(&nodes);
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
    let mut mounts = mounts_by_disk(&mountinfo, &by_dev, &owners);
    let swaps_text = std::fs::read_to_string(root.join("proc/swaps")).unwrap_or_default();
    let mut swaps = swaps_by_disk(
        &parse_swaps(&swaps_text),
        &nodes,
        &mountinfo,
        &by_dev,
        &owners,
    );
    Ok(nodes
        .into_iter()
        .map(|(name, node)| {
            let mounts = mounts.remove(&name).unwrap_or_default();
            let swaps = swaps.remove(&name).unwrap_or_default();
            device(name, node, mounts, swaps)
        })
        .collect())
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
        let mut holders: Vec<Holder> = dir_names(&dir.join("holders"))
            .into_iter()
            .map(|h| Holder {
                on: name.clone(),
                name: h,
            })
            .collect();
        let mut partitions = Vec::new();
        for part in dir_names(&dir) {
            let pdir = dir.join(&part);
            if pdir.join("partition").is_file() {
                for h in dir_names(&pdir.join("holders")) {
                    holders.push(Holder {
                        on: part.clone(),
                        name: h,
                    });
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
    Ok(nodes)
}

/// Everything that belongs to each disk, by component name: the disk, its partitions,
/// and the holders over them, followed transitively (dm-crypt over a partition, LVM on
/// that).
fn owners(nodes: &BTreeMap<String, Node>) -> BTreeMap<String, Vec<Owner>> {
    let mut owners: BTreeMap<String, Vec<Owner>> = BTreeMap::new();
    for (name, node) in nodes {
        let own =
            std::iter::once(name.clone()).chain(node.partitions.iter().map(|p| p.name.clone()));
        for c in own {
            owners.entry(c).or_default().push(Owner {
                disk: name.clone(),
                through: None,
            });
        }
        // Holders still to visit, each with the disk's own component under the stack.
        let mut stack: Vec<Holder> = node.holders.clone();
        let mut seen = BTreeSet::new();
        while let Some(Holder {
            on: part,
            name: holder,
        }) = stack.pop()
        {
            if !seen.insert(holder.clone()) {
                continue;
            }
            if let Some(h) = nodes.get(&holder) {
                stack.extend(h.holders.iter().map(|hh| Holder {
                    on: part.clone(),
                    name: hh.name.clone(),
                }));
            }
            owners.entry(holder).or_default().push(Owner {
                disk: name.clone(),
                through: Some(part),
            });
        }
    }
    owners
}

/// The mounts of `mountinfo` on each disk, by disk name; `by_dev` maps `major:minor` to
/// component names.
fn mounts_by_disk(
    mountinfo: &[MountEntry],
    by_dev: &BTreeMap<&str, &str>,
    owners: &BTreeMap<String, Vec<Owner>>,
) -> BTreeMap<String, Vec<Mount>> {
    let mut mounts: BTreeMap<String, Vec<Mount>> = BTreeMap::new();
    for m in mountinfo {
        let Some(component) = by_dev.get(m.dev.as_str()) else {
            continue;
        };
        for owner in owners.get(*component).into_iter().flatten() {
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

/// The active swap areas on each disk, by disk name: a partition by its name (a
/// device-mapper one through `/dev/mapper/<name>`), a swap file by its path, on the
/// disk holding its filesystem.
fn swaps_by_disk(
    areas: &[SwapArea],
    nodes: &BTreeMap<String, Node>,
    mountinfo: &[MountEntry],
    by_dev: &BTreeMap<&str, &str>,
    owners: &BTreeMap<String, Vec<Owner>>,
) -> BTreeMap<String, Vec<String>> {
    let mut swaps: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for SwapArea { file, kind } in areas {
        let component = if kind == "partition" || file.starts_with("/dev") {
            let name = file
                .strip_prefix("/dev")
                .unwrap_or(file)
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
fn device(name: String, node: Node, mounts: Vec<Mount>, swaps: Vec<String>) -> Device {
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
