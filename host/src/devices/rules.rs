//! The rules ([`Device::verdict`]): whether `benchboot flash` may write a device, with
//! every reason when it may not, and the card's own mounts to unmount first.

use std::path::{Path, PathBuf};

use super::disk::{human_bytes, Device, Transport};

/// Larger than this (256 GiB) is not a card but a disk, unless `--allow-large`.
pub const DEFAULT_SIZE_LIMIT: u64 = 256 << 30;

/// Mount points that hold the running system: a disk carrying one is never written.
pub const SYSTEM_MOUNTS: &[&str] = &["/", "/boot", "/boot/efi", "/boot/firmware", "/usr", "/var"];

fn is_system_mount(mount_point: &Path) -> bool {
    SYSTEM_MOUNTS.iter().any(|m| mount_point == Path::new(m))
        || mount_point.starts_with("/System/Volumes")
}

/// Why a device may not be written. `Display` gives the reason and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("no medium: the reader is empty; insert the card")]
    NoMedium,
    #[error("{}", virtual_words(backing_file.as_deref(), Use::Flash))]
    Virtual {
        /// A loop device's backing file, as the kernel names it.
        backing_file: Option<PathBuf>,
    },
    #[error(
        "not removable ({transport}): a fixed disk, not a card; put the card in a USB \
         reader or the SD slot and pick it from `benchboot devices`"
    )]
    NotRemovable { transport: Transport },
    #[error("holds the running system ({}): this disk is never written", uses.join(", "))]
    HoldsSystem { uses: Vec<String> },
    #[error(
        "{} is mounted through {holder}, which sits on {part}: unmount it and {} first",
        mount_point.display(),
        release(holder)
    )]
    MountedThroughHolder {
        mount_point: PathBuf,
        holder: String,
        part: String,
    },
    #[error("{}", held_words(holder, part, backing_file.as_deref()))]
    Held {
        holder: String,
        part: String,
        /// A loop device's backing file (on `part`'s filesystem); `None` for a loop
        /// over `part` itself and for device-mapper and md holders.
        backing_file: Option<PathBuf>,
    },
    #[error(
        "{} is a volume spanning {}: benchboot does not take such a volume apart; delete \
         it in Disk Management first",
        mount_point.display(),
        disks.join(", ")
    )]
    SpannedVolume {
        mount_point: PathBuf,
        disks: Vec<String>,
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
            Refusal::Virtual { .. } => "virtual",
            Refusal::NotRemovable { .. } => "not-removable",
            Refusal::HoldsSystem { .. } => "holds-system",
            Refusal::MountedThroughHolder { .. } => "mounted-through-holder",
            Refusal::Held { .. } => "held",
            Refusal::SpannedVolume { .. } => "spanned-volume",
            Refusal::ReadOnly => "read-only",
            Refusal::TooLarge { .. } => "too-large",
        }
    }
}

/// The command a refusal is said for: only the way out of [`Refusal::Virtual`]
/// differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// `flash` (and `field-test`, `devices`): an image file goes as `--device FILE`.
    Flash,
    /// `probe`: `--allow-virtual` lifts the refusal.
    Probe,
    /// `prepare-disk`: an image file is its positional `DEV`.
    PrepareDisk,
}

impl Refusal {
    /// The reason and what to do, in the words of `command` ([`Use`]); `Display` is
    /// `flash`'s.
    pub fn in_words(&self, command: Use) -> String {
        match self {
            Refusal::Virtual { backing_file } => virtual_words(backing_file.as_deref(), command),
            r => r.to_string(),
        }
    }
}

/// [`Refusal::Virtual`] for `command`: a loop device's backing file named when known.
fn virtual_words(backing_file: Option<&Path>, command: Use) -> String {
    let what = match backing_file {
        Some(f) => format!("a loop device over {}", f.display()),
        None => "a virtual device (loop, device-mapper, RAID, a VHD)".to_owned(),
    };
    let file = backing_file.map(|f| f.display().to_string());
    match (command, file) {
        (Use::Flash, None) => {
            format!("{what}, not a card; to write an image file, pass that file's path as --device")
        }
        (Use::Flash, Some(f)) => format!(
            "{what}, not a card; to write that image file, detach the loop device first \
             (`losetup -d`) and pass --device {f}"
        ),
        (Use::Probe, _) => format!(
            "{what}, not a card; pass --allow-virtual to probe it anyway (a test of the \
             probe itself: a file cannot be fake)"
        ),
        (Use::PrepareDisk, None) => format!(
            "{what}, not a test disk; to prepare an image file, name that file instead \
             (`benchboot prepare-disk FILE`)"
        ),
        (Use::PrepareDisk, Some(f)) => format!(
            "{what}, not a test disk; to prepare that image file, detach the loop device \
             first (`losetup -d`) and run `benchboot prepare-disk {f}`"
        ),
    }
}

/// How to take holder `name` off the disk: detach a loop device, stop an md array,
/// close a device-mapper one.
fn release(holder: &str) -> String {
    if holder.starts_with("loop") {
        format!("detach {holder} (`losetup -d /dev/{holder}`)")
    } else if holder.starts_with("md") {
        format!("stop {holder} (`mdadm --stop /dev/{holder}`)")
    } else {
        format!("close {holder} (`cryptsetup close` or `vgchange -an`)")
    }
}

/// [`Refusal::Held`] in words.
fn held_words(holder: &str, part: &str, backing_file: Option<&Path>) -> String {
    let what = match backing_file {
        Some(f) => format!(
            "{holder} is a loop device over {}, a file on {part}",
            f.display()
        ),
        None if holder.starts_with("loop") => format!("{holder} is a loop device over {part}"),
        None => format!("{holder} sits on {part}"),
    };
    format!("{what}: {} first", release(holder))
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
        mounts
            .chain(swaps)
            .chain(self.system.iter().cloned())
            .collect()
    }

    /// The rules of the module docs applied to this device.
    pub fn verdict(&self, limits: &Limits) -> Verdict {
        let mut refusals = Vec::new();
        if self.transport == Transport::Virtual {
            refusals.push(Refusal::Virtual {
                backing_file: self.backing_file.clone(),
            });
        } else if self.size_bytes == 0 {
            refusals.push(Refusal::NoMedium);
        }
        if !self.removable && !matches!(self.transport, Transport::Mmc | Transport::Virtual) {
            refusals.push(Refusal::NotRemovable {
                transport: self.transport,
            });
        }
        let uses = self.system_uses();
        // The system's disk is never written: the loop devices over files on it
        // (snaps, images) are not worth a reason each.
        let system = !uses.is_empty();
        if system {
            refusals.push(Refusal::HoldsSystem { uses });
        }
        let said = |name: &str| !(system && name.starts_with("loop"));
        for m in self.mounts.iter().filter(|m| said(&m.device)) {
            if let (Some(part), false) = (&m.through, is_system_mount(&m.mount_point)) {
                refusals.push(Refusal::MountedThroughHolder {
                    mount_point: m.mount_point.clone(),
                    holder: m.device.clone(),
                    part: part.clone(),
                });
            }
        }
        // A holder nothing is mounted through still holds its part open: a loop device
        // (its file keeps the filesystem busy), an open LUKS or LVM mapping.
        for h in self.holders.iter().filter(|h| !h.mounted && said(&h.name)) {
            refusals.push(Refusal::Held {
                holder: h.name.clone(),
                part: h.on.clone(),
                backing_file: h.backing_file.clone(),
            });
        }
        for m in self.mounts.iter().filter(|m| !m.spans.is_empty()) {
            let r = Refusal::SpannedVolume {
                mount_point: m.mount_point.clone(),
                disks: m.spans.clone(),
            };
            if !refusals.contains(&r) {
                refusals.push(r);
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
            .filter(|m| {
                m.through.is_none() && m.spans.is_empty() && !is_system_mount(&m.mount_point)
            })
            .map(|m| m.mount_point.clone())
            .collect();
        unmount.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
        Verdict { refusals, unmount }
    }
}
