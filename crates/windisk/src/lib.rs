//! Windows' disks and volumes as the OS reports them, raw: the bytes of each
//! `DeviceIoControl` answer, undecoded ([`Snapshot`]). The host tool decodes and judges
//! them (`host/src/devices/windows.rs`), so every rule runs and is tested on any OS,
//! over snapshots recorded or built from published drive lists; only [`snapshot`] (on
//! Windows) makes system calls.
//!
//! What is asked, per physical disk `\\.\PhysicalDriveN` (N = 0..[`MAX_DISKS`]), opened
//! with no access rights (query only: no elevation needed):
//! `IOCTL_STORAGE_QUERY_PROPERTY` (`StorageDeviceProperty`, standard query: the
//! `STORAGE_DEVICE_DESCRIPTOR`), `IOCTL_DISK_GET_DRIVE_GEOMETRY_EX` (sector size, media
//! type, size) and `IOCTL_DISK_IS_WRITABLE`; per volume (`FindFirstVolumeW`):
//! its mount paths (`GetVolumePathNamesForVolumeNameW`), its filesystem
//! (`GetVolumeInformationW`) and the disks under it
//! (`IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS`); the system's Windows directory
//! (`GetSystemWindowsDirectoryW`: the real one, not a Terminal Server user's private
//! copy) and the page files in use (registry `HKLM\SYSTEM\
//! CurrentControlSet\Control\Session Manager\Memory Management`, `ExistingPageFiles`).
//! Structures and codes: Microsoft's `winioctl.h` as `windows-sys` 0.61 carries it.
//!
//! The write side of `flash`, `probe` and raw `collect --from-card` (Windows only):
//! [`lock_volume`] (lock and dismount a volume, held until dropped),
//! [`open_unbuffered`] (a disk or file past the system cache), [`update_properties`]
//! (the partition table read again) and [`disk_length`].

#![deny(unsafe_code)]

use serde::{Deserialize, Serialize};

/// Physical drive numbers tried: `\\.\PhysicalDrive0` .. `\\.\PhysicalDrive63`.
pub const MAX_DISKS: u32 = 64;

/// One physical disk's answers. A failed query leaves its field `None` and says why in
/// `errors` (`IOCTL_DISK_IS_WRITABLE: The media is write protected.` is an answer:
/// `writable` false).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawDisk {
    /// N of `\\.\PhysicalDriveN`.
    pub number: u32,
    /// `STORAGE_DEVICE_DESCRIPTOR` with its strings, as returned.
    pub descriptor: Option<Vec<u8>>,
    /// `DISK_GEOMETRY_EX`, as returned.
    pub geometry: Option<Vec<u8>>,
    /// `IOCTL_DISK_IS_WRITABLE` succeeded (`true`) or failed with
    /// `ERROR_WRITE_PROTECT` (`false`).
    pub writable: Option<bool>,
    /// Queries that failed, one line each (`IOCTL_...: <the system's message>`).
    #[serde(default)]
    pub errors: Vec<String>,
}

/// One volume's answers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawVolume {
    /// `\\?\Volume{GUID}\`.
    pub name: String,
    /// Where it is mounted: `E:\`, `C:\mnt\card\` (none: not mounted).
    pub paths: Vec<String>,
    /// `FAT32`, `NTFS`, `exFAT`, ...
    pub filesystem: Option<String>,
    /// `VOLUME_DISK_EXTENTS`, as returned.
    pub extents: Option<Vec<u8>>,
    #[serde(default)]
    pub errors: Vec<String>,
}

/// Everything [`snapshot`] asks Windows, raw.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub disks: Vec<RawDisk>,
    pub volumes: Vec<RawVolume>,
    /// `C:\WINDOWS`.
    pub windows_dir: Option<String>,
    /// Page files in use: `C:\pagefile.sys`; `None` when the registry could not be read
    /// (then any disk may hold one).
    pub page_files: Option<Vec<String>>,
    /// Queries of the machine that failed (volume enumeration, registry), one line each.
    #[serde(default)]
    pub errors: Vec<String>,
    /// The volume list is whole (`FindNextVolumeW` ran to `ERROR_NO_MORE_FILES`); when
    /// false, a volume holding the system may be missing from it.
    pub volumes_complete: bool,
}

#[cfg(windows)]
#[allow(unsafe_code)]
mod sys;
#[cfg(windows)]
pub use sys::{
    disk_length, lock_volume, snapshot, update_properties, VolumeLock, LOCK_TRIES, LOCK_WAIT_MS,
};

/// `FILE_FLAG_NO_BUFFERING` (winbase.h): no system cache; offsets, lengths and buffer
/// addresses must be whole sectors.
pub const FILE_FLAG_NO_BUFFERING: u32 = 0x2000_0000;
/// `FILE_FLAG_WRITE_THROUGH` (winbase.h): a write returns once it is on the device.
pub const FILE_FLAG_WRITE_THROUGH: u32 = 0x8000_0000;

/// Opens a disk (`\\.\PhysicalDriveN`) or a file for whole-sector I/O past the system
/// cache: `FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH`, shared for reading and
/// writing (the disk's volumes stay open, locked, while it is written). `write` adds
/// write access, which needs an elevated prompt for a disk.
///
/// # Errors
/// The open's (`ERROR_ACCESS_DENIED`, 5; `ERROR_SHARING_VIOLATION`, 32; ...).
#[cfg(windows)]
pub fn open_unbuffered(path: &std::path::Path, write: bool) -> std::io::Result<std::fs::File> {
    use std::os::windows::fs::OpenOptionsExt;
    // FILE_SHARE_READ | FILE_SHARE_WRITE (winnt.h).
    std::fs::OpenOptions::new()
        .read(true)
        .write(write)
        .share_mode(0x1 | 0x2)
        .custom_flags(FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH)
        .open(path)
}
