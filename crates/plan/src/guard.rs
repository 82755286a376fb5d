//! What no storage target may be: the boot card, the partitions benchboot's image
//! lives on, something mounted, or the place another target already writes.
//!
//! Two checks, one rule set:
//! - on the host (`plan check`, `plan write`, the image build), by name: a path is
//!   normalised lexically ([`normalise_path`]) and compared with the nominal boot disk,
//!   its boot partition (p1, label [`BOOT_LABEL`]), results partition (p2, label
//!   [`RESULTS_LABEL`]) and results journal (p4), and with the other targets ([`host_problem`], [`same_place`]);
//! - on the board, by device identity, before anything is written
//!   ([`board_refusal`]): PID 1 stats every target (following symlinks) to its device
//!   number, finds its whole disk in sysfs, and compares those numbers with the boot
//!   card's (found by its MBR disk signature, [`crate::boot_disk`]), with
//!   `/proc/self/mountinfo` ([`parse_mountinfo`]) and with the targets before it.
//!
//! Pure: the stat, sysfs and mountinfo reads are PID 1's (firmware/src/target_guard.rs).

use std::fmt;
use std::path::{Component, Path};

use crate::{DeviceRef, Filesystem, StorageTarget};

/// Partition number of the boot FAT in every benchboot image (crates/image/src/layout.rs:
/// p1 boot, p2 results, p3 extended, p5.. test partitions).
pub const BOOT_PARTITION: u32 = 1;
/// Partition number of the results partition (crates/image/src/layout.rs,
/// `benchboot_card::RESULTS_PARTITION`).
pub const RESULTS_PARTITION: u32 = 2;
/// Partition number of the results journal (crates/image/src/layout.rs,
/// `benchboot_journal::PARTITION`): no filesystem, written only by PID 1.
pub const JOURNAL_PARTITION: u32 = 4;
/// FAT volume label of the boot partition (xtask/src/image/render.rs formats it so).
pub const BOOT_LABEL: &str = "BOOT";
/// FAT volume label of the results partition (`benchboot_card::RESULTS_LABEL`).
pub const RESULTS_LABEL: &str = "BBRESULTS";

/// `path` with `.`, `..`, repeated and trailing `/` resolved lexically, as the kernel
/// would walk it were every component a directory (`/dev/../dev//sda/` → `/dev/sda`);
/// `..` above `/` stays at `/`. Symlinks are not followed (the host cannot see the
/// board's `/dev`): the board checks by device number. A relative path is returned as
/// it is.
pub fn normalise_path(path: &str) -> String {
    if !path.starts_with('/') {
        return path.to_owned();
    }
    let mut parts: Vec<&str> = Vec::new();
    for c in Path::new(path).components() {
        match c {
            Component::Normal(n) => parts.push(n.to_str().unwrap_or_default()),
            Component::ParentDir => {
                parts.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    format!("/{}", parts.join("/"))
}

/// The kernel name a normalised `/dev/<name>` path gives (`sda1`); `None` for a path
/// nested deeper (`/dev/disk/by-id/...`) or outside `/dev`.
pub fn kernel_name(normalised: &str) -> Option<&str> {
    normalised
        .strip_prefix("/dev/")
        .filter(|n| !n.is_empty() && !n.contains('/'))
}

/// True when `name` is `disk` or one of its partitions by the kernel's naming
/// ([`crate::boot_disk::remap_device`]).
fn on_disk(name: &str, disk: &str) -> bool {
    crate::boot_disk::remap_device(&format!("/dev/{name}"), disk, disk).is_some()
}

/// Why the host refuses target device `device` (`filesystem` on it) of a plan for an
/// image whose boot disk is `boot_disk` (kernel name, `mmcblk0`); `None`: the host sees
/// nothing wrong (the board checks again by identity). `device` is as the file wrote it.
/// Refused: a path that does not name a device node directly under `/dev` (PID 1 has no
/// udev, so `/dev/disk/by-*` links never exist on the board), the boot disk itself,
/// any of its partitions used raw, and a filesystem on its boot or results partition
/// (by path or by the labels [`BOOT_LABEL`] and [`RESULTS_LABEL`]).
pub fn host_problem(device: &str, filesystem: Filesystem, boot_disk: &str) -> Option<String> {
    let shown = device.escape_debug().to_string();
    let fix = "name a disk or partition that is not the card (BUS=usb, LABEL=, or \
               /dev/sda1), or use the card's own test partitions (storage.card)";
    let target = StorageTarget {
        label: String::new(),
        device: device.to_owned(),
        filesystem,
        optional: false,
    };
    match target.device_ref() {
        DeviceRef::Label(n) if n == BOOT_LABEL || n == RESULTS_LABEL => {
            let what = if n == BOOT_LABEL {
                "the card's boot partition (p1): test files would fill the FAT the board boots from"
            } else {
                "the card's results partition (p2): test files would fill the partition the results are saved on"
            };
            Some(format!("`{shown}` is {what}; {fix}"))
        }
        DeviceRef::Path(p) if p.starts_with('/') => {
            let n = normalise_path(p);
            let spelled = if n == p {
                String::new()
            } else {
                format!(" (that is {n})")
            };
            let Some(name) = kernel_name(&n) else {
                return Some(format!(
                    "`{shown}`{spelled} is no device node directly under /dev: the board \
                     has no udev, so /dev/disk/by-* links and other nested names do not \
                     exist there; name it by its kernel name (/dev/sda1), LABEL=, \
                     PARTLABEL= or BUS="
                ));
            };
            let part = |k| crate::boot_disk::partition_path(boot_disk, k);
            if name == boot_disk {
                Some(format!(
                    "`{shown}`{spelled} is the disk the board boots from; benchboot never \
                     overwrites it: {fix}"
                ))
            } else if filesystem == Filesystem::Raw && on_disk(name, boot_disk) {
                Some(format!(
                    "`{shown}`{spelled} is a partition of the disk the board boots from, \
                     written raw; benchboot never overwrites the card: {fix}"
                ))
            } else if n == part(BOOT_PARTITION) {
                Some(format!(
                    "`{shown}`{spelled} is the card's boot partition (p1, {BOOT_LABEL}): \
                     test files would fill the FAT the board boots from; {fix}"
                ))
            } else if n == part(RESULTS_PARTITION) {
                Some(format!(
                    "`{shown}`{spelled} is the card's results partition (p2, \
                     {RESULTS_LABEL}): test files would fill the partition the results \
                     are saved on; {fix}"
                ))
            } else if n == part(JOURNAL_PARTITION) {
                Some(format!(
                    "`{shown}`{spelled} is the card's results journal (p4): it holds no \
                     filesystem, and a test would overwrite the saved results; {fix}"
                ))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// True when targets `a` and `b` (devices as resolved: paths normalised) name the same
/// place, or one's raw disk holds the other: the same path, `LABEL=`, `PARTLABEL=` or
/// `BUS=`, or a raw whole-disk path and a partition of it.
pub fn same_place(a: &StorageTarget, b: &StorageTarget) -> bool {
    let (da, db) = (normalise_path(&a.device), normalise_path(&b.device));
    if da == db {
        return true;
    }
    let holds = |raw: &StorageTarget, disk: &str, other: &str| {
        raw.filesystem == Filesystem::Raw
            && matches!((kernel_name(disk), kernel_name(other)), (Some(d), Some(o)) if on_disk(o, d))
    };
    holds(a, &da, &db) || holds(b, &db, &da)
}

/// A block device number, `major:minor` as `/sys/dev/block/` and mountinfo write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DevNum {
    pub major: u32,
    pub minor: u32,
}

impl DevNum {
    /// `179:2` → 179, 2; `None` for anything else.
    pub fn parse(text: &str) -> Option<DevNum> {
        let (a, b) = text.trim().split_once(':')?;
        Some(DevNum {
            major: a.parse().ok()?,
            minor: b.parse().ok()?,
        })
    }
}

impl fmt::Display for DevNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.major, self.minor)
    }
}

/// A block device as PID 1 found it: its number and its whole disk's (the same for a
/// whole disk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    pub dev: DevNum,
    pub whole: DevNum,
}

/// The boot card's devices, as PID 1 found them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    /// Kernel name of the boot card (`mmcblk0`), for messages.
    pub name: String,
    /// Its whole-disk device number.
    pub whole: DevNum,
    /// Its boot partition (p1), when found.
    pub boot: Option<DevNum>,
    /// Its results partition (p2, the plan's `results.device`), when found.
    pub results: Option<DevNum>,
    /// Its results journal (p4, the plan's `results.journal`), when found.
    pub journal: Option<DevNum>,
    /// The image's own raw test partitions on it (`storage.card = ["raw"]`): the only
    /// parts of the card written raw.
    pub own_raw: Vec<DevNum>,
}

/// One mount of `/proc/self/mountinfo`: the device number of what is mounted (field 3),
/// its whole disk (the same when it is no partition, or no block device), and where
/// (field 5, as the kernel escapes it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub seen: Seen,
    pub at: String,
}

/// The `(major:minor, mount point)` of each line of a `/proc/<pid>/mountinfo` text
/// (proc(5): `36 35 98:0 /mnt1 /mnt2 rw ...`); lines that do not parse are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<(DevNum, String)> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split(' ').skip(2);
            let dev = DevNum::parse(f.next()?)?;
            let at = f.nth(1)?;
            Some((dev, at.to_owned()))
        })
        .collect()
}

/// Why PID 1 refuses to write target `t`, found as `seen`, on a board whose boot card
/// is `card` with `mounts` mounted; `earlier` are the targets accepted before it (same
/// order as the plan). `None`: it may be written. Refused:
/// - the card's whole disk, under any name;
/// - a partition of the card written raw, except the image's own raw test partition;
/// - the card's boot or results partition, whatever the filesystem;
/// - a device mounted now, or (raw) a disk with a mounted partition;
/// - the device of an earlier target, a partition of an earlier raw disk target, or
///   (raw) the disk of an earlier target's partition: the message names both.
pub fn board_refusal(
    t: &StorageTarget,
    seen: Seen,
    earlier: &[(StorageTarget, Seen)],
    card: &Card,
    mounts: &[Mount],
) -> Option<String> {
    let raw = t.filesystem == Filesystem::Raw;
    let dev = seen.dev;
    let c = &card.name;
    let never = "benchboot never writes the card outside its test partitions";
    let dev_is = |d: Option<DevNum>| d == Some(dev);
    if dev == card.whole {
        return Some(format!(
            "device {dev} is {c}, the boot card's whole disk (found by its disk \
             signature); {never}"
        ));
    }
    if Some(dev) == card.boot {
        return Some(format!(
            "device {dev} is the boot card's boot partition ({c} p{BOOT_PARTITION}, \
             {BOOT_LABEL}); {never}"
        ));
    }
    if dev_is(card.journal) {
        return Some(format!(
            "device {dev} is the boot card's results journal ({c} \
             p{JOURNAL_PARTITION}); {never}"
        ));
    }
    if Some(dev) == card.results {
        return Some(format!(
            "device {dev} is the boot card's results partition ({c} p{RESULTS_PARTITION}, \
             {RESULTS_LABEL}); {never}"
        ));
    }
    if raw && seen.whole == card.whole && !card.own_raw.contains(&dev) {
        return Some(format!(
            "device {dev} is a partition of {c}, the boot card, written raw; {never}"
        ));
    }
    if let Some(m) = mounts
        .iter()
        .find(|m| m.seen.dev == dev || (raw && m.seen.whole == dev))
    {
        let what = if m.seen.dev == dev {
            String::new()
        } else {
            format!(" (its partition {})", m.seen.dev)
        };
        return Some(format!(
            "device {dev}{what} is mounted at {}; a target must not be in use",
            m.at.escape_debug()
        ));
    }
    let other_raw = |o: &StorageTarget| o.filesystem == Filesystem::Raw;
    if let Some((o, s)) = earlier.iter().find(|(o, s)| {
        s.dev == dev || (other_raw(o) && seen.whole == s.dev) || (raw && s.whole == dev)
    }) {
        let devs = if s.dev == dev {
            format!("device {dev}")
        } else {
            format!("devices {} and {dev}, one inside the other", s.dev)
        };
        return Some(format!(
            "target `{}` ({}) and target `{}` ({}) are on one place ({devs}): each \
             would overwrite the other's files; keep one",
            o.label,
            o.device.escape_debug(),
            t.label,
            t.device.escape_debug()
        ));
    }
    None
}

#[cfg(test)]
#[path = "guard/tests.rs"]
mod tests;
