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
    #[error(
        "a virtual device (loop, device-mapper, RAID, a VHD), not a card; to write an \
         image file, pass that file's path as --device"
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
            Refusal::Virtual => "virtual",
            Refusal::NotRemovable { .. } => "not-removable",
            Refusal::HoldsSystem { .. } => "holds-system",
            Refusal::MountedThroughHolder { .. } => "mounted-through-holder",
            Refusal::SpannedVolume { .. } => "spanned-volume",
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
        mounts
            .chain(swaps)
            .chain(self.system.iter().cloned())
            .collect()
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
