//! A disk as this machine shows it ([`Device`]): its transport, partitions, mounts
//! and swap, however it was found (sysfs or diskutil).

use std::path::PathBuf;

use serde::Serialize;

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
    /// Its number on the disk (Linux: sysfs `partition`), when the system says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number: Option<u32>,
}

/// A block device stacked on the disk (Linux): device-mapper (LUKS, LVM), md RAID, or
/// a loop device whose backing file lies on one of the disk's filesystems or whose
/// backing device is the disk or one of its partitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Holder {
    /// Its kernel name: `dm-0`, `md0`, `loop3`.
    pub name: String,
    /// The disk's own component under it (the disk or one of its partitions), however
    /// deep the stack: `sdb1`.
    pub on: String,
    /// A loop device's backing file as the kernel names it (`/media/card/disk.img`,
    /// ` (deleted)` after a removed one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backing_file: Option<PathBuf>,
    /// The holder it is stacked on (`dm-0` under LVM over LUKS); `None` when it sits
    /// on `on` itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// A filesystem is mounted on it, on one of its partitions or on a holder stacked
    /// on it.
    pub mounted: bool,
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
    /// Windows: the disks a volume spanning several lies on (`PhysicalDrive1`,
    /// `PhysicalDrive2`); empty for a volume on one disk and on Linux and macOS.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub spans: Vec<String>,
}

/// A whole disk as found on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Device {
    /// Kernel name: `sdb`, `mmcblk0`, `disk4`, `PhysicalDrive1`.
    pub name: String,
    /// Device node: `/dev/sdb`, `\\.\PhysicalDrive1`.
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
    /// What is stacked on the disk (Linux: `holders/`, and loop devices over it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub holders: Vec<Holder>,
    /// A loop device's backing file as the kernel names it (Linux:
    /// `loop/backing_file`); `None` for every other disk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backing_file: Option<PathBuf>,
    pub mounts: Vec<Mount>,
    /// Active swap areas on the disk: a partition name or a swap file's path (Windows:
    /// its page files, `C:\pagefile.sys`).
    pub swaps: Vec<String>,
    /// What else of the running system the scan found on the disk (Windows: `the
    /// Windows directory C:\WINDOWS`); mounts and swap are judged from their own fields.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub system: Vec<String>,
    /// An SD card in a reader on the host's own mmc bus (not behind USB): what its
    /// registers say, one line (crates/sdcard `Card::summary`). A card in a USB reader
    /// shows only the reader (its registers never reach the host).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card: Option<String>,
}

impl Device {
    /// One line for people: `/dev/sdb (Generic STORAGE DEVICE, usb, 29.7 GiB)`; the
    /// vendor and model (the device's own words) escaped
    /// ([`benchboot_results::text::escape`]).
    pub fn describe(&self) -> String {
        let model = [self.vendor.as_deref(), self.model.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        let model = benchboot_results::text::escape(&model);
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

/// `29.7 GiB`, `256 MiB`: [`crate::units::size_label`] (the largest exact binary unit,
/// else one decimal; `u64::MAX` prints as `none`).
pub fn human_bytes(bytes: u64) -> String {
    crate::units::size_label(bytes)
}
