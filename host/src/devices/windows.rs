//! Windows' disks as [`Device`]s: the raw answers of `benchboot_windisk::snapshot`
//! decoded here, on every OS, so the rules are tested on recorded and published drive
//! lists ([`scan`]).
//!
//! Layouts (Microsoft's `winioctl.h`, as `windows-sys` 0.61 and mingw-w64 carry it; all
//! little-endian):
//!
//! - `STORAGE_DEVICE_DESCRIPTOR` ([`parse_descriptor`]): `Version` u32 at 0, `Size` u32
//!   at 4, `DeviceType` u8 at 8, `DeviceTypeModifier` u8 at 9, `RemovableMedia` u8 at
//!   10, `CommandQueueing` u8 at 11, `VendorIdOffset`, `ProductIdOffset`,
//!   `ProductRevisionOffset`, `SerialNumberOffset` u32 at 12, 16, 20, 24 (0: none;
//!   each a NUL-terminated ASCII string at that offset of the answer), `BusType` u32 at
//!   28 (`STORAGE_BUS_TYPE`, [`BusType`]), `RawPropertiesLength` u32 at 32.
//! - `DISK_GEOMETRY_EX` ([`parse_geometry`]): `Cylinders` i64 at 0, `MediaType` u32 at
//!   8, `TracksPerCylinder` u32 at 12, `SectorsPerTrack` u32 at 16, `BytesPerSector`
//!   u32 at 20, `DiskSize` i64 at 24.
//! - `VOLUME_DISK_EXTENTS` ([`parse_extents`]): `NumberOfDiskExtents` u32 at 0, then
//!   from 8 one `DISK_EXTENT` of 24 bytes each: `DiskNumber` u32 at 0,
//!   `StartingOffset` i64 at 8, `ExtentLength` i64 at 16.
//!
//! Every answer is treated as hostile: a short buffer, an offset past its end, a count
//! larger than the buffer holds or a string without its NUL never panics; what cannot
//! be read is `None` or a note.
//!
//! The disk a volume is on comes from its extents; the system's disk is the one under
//! the volume holding the Windows directory (rpi-imager's way), and a page file's disk
//! the one under its volume (the longest mount path that prefixes it,
//! case-insensitively, device prefixes dropped). When the Windows directory's or a page
//! file's disk cannot be told, the page files cannot be read or the volume list is not
//! whole, every disk holds the system as far as the rules go. A volume spanning disks is
//! a refusal on each ([`super::Refusal::SpannedVolume`]), mounted or not. A volume whose
//! extents cannot be read (a DVD drive, a network share) is on no disk: a note.

use std::path::PathBuf;

use benchboot_windisk::{RawVolume, Snapshot};

use super::disk::{Device, Mount, Partition, Transport};

/// `STORAGE_BUS_TYPE` (winioctl.h): the bus a disk is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BusType(pub u32);

impl BusType {
    pub const SCSI: BusType = BusType(0x1);
    pub const ATAPI: BusType = BusType(0x2);
    pub const ATA: BusType = BusType(0x3);
    pub const IEEE1394: BusType = BusType(0x4);
    pub const SSA: BusType = BusType(0x5);
    pub const FIBRE: BusType = BusType(0x6);
    pub const USB: BusType = BusType(0x7);
    pub const RAID: BusType = BusType(0x8);
    pub const ISCSI: BusType = BusType(0x9);
    pub const SAS: BusType = BusType(0xA);
    pub const SATA: BusType = BusType(0xB);
    pub const SD: BusType = BusType(0xC);
    pub const MMC: BusType = BusType(0xD);
    pub const VIRTUAL: BusType = BusType(0xE);
    pub const FILE_BACKED_VIRTUAL: BusType = BusType(0xF);
    pub const SPACES: BusType = BusType(0x10);
    pub const NVME: BusType = BusType(0x11);
    pub const SCM: BusType = BusType(0x12);
    pub const UFS: BusType = BusType(0x13);

    /// The enum's name without `BusType` (`Usb`, `FileBackedVirtual`), or the number.
    pub fn name(self) -> String {
        const NAMES: [&str; 20] = [
            "Unknown",
            "Scsi",
            "Atapi",
            "Ata",
            "1394",
            "Ssa",
            "Fibre",
            "Usb",
            "RAID",
            "iScsi",
            "Sas",
            "Sata",
            "Sd",
            "Mmc",
            "Virtual",
            "FileBackedVirtual",
            "Spaces",
            "Nvme",
            "SCM",
            "Ufs",
        ];
        NAMES
            .get(self.0 as usize)
            .map_or_else(|| format!("bus type {:#x}", self.0), |s| (*s).to_owned())
    }

    /// The transport benchboot's rules know it as: a VHD (`Virtual`,
    /// `FileBackedVirtual`) and a Storage Spaces disk are virtual, SD and MMC slots
    /// mmc, SATA/ATA/ATAPI ata.
    pub fn transport(self) -> Transport {
        match self {
            BusType::USB => Transport::Usb,
            BusType::SD | BusType::MMC => Transport::Mmc,
            BusType::ATA | BusType::ATAPI | BusType::SATA => Transport::Ata,
            BusType::NVME => Transport::Nvme,
            BusType::VIRTUAL | BusType::FILE_BACKED_VIRTUAL | BusType::SPACES => Transport::Virtual,
            BusType::SCSI | BusType::SAS | BusType::ISCSI | BusType::FIBRE | BusType::RAID => {
                Transport::Scsi
            }
            _ => Transport::Unknown,
        }
    }
}

/// What benchboot reads of a `STORAGE_DEVICE_DESCRIPTOR`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Descriptor {
    /// SCSI peripheral device type (0: a direct-access disk).
    pub device_type: u8,
    /// `RemovableMedia`: the medium can be taken out (a card reader, most USB sticks).
    pub removable: bool,
    pub bus: BusType,
    pub vendor: Option<String>,
    pub product: Option<String>,
    pub revision: Option<String>,
    pub serial: Option<String>,
}

/// The header's length: the fields up to and with `RawPropertiesLength`.
const DESCRIPTOR_HEADER: usize = 36;
/// Longest string read from a descriptor, bytes.
const MAX_STRING: usize = 256;

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn i64_at(b: &[u8], at: usize) -> Option<i64> {
    Some(i64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The string at `offset` of the answer: up to its NUL (or [`MAX_STRING`] bytes),
/// spaces trimmed; `None` for offset 0, an offset outside the answer or an empty string.
/// Bytes that are not ASCII are kept as U+FFFD: the text is the device's, escaped when
/// printed.
fn string_at(b: &[u8], offset: u32) -> Option<String> {
    let start = offset as usize;
    if start == 0 || start >= b.len() {
        return None;
    }
    let rest = &b[start..b.len().min(start + MAX_STRING)];
    let end = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
    let s: String = rest[..end]
        .iter()
        .map(|&c| if c.is_ascii() { c as char } else { '\u{fffd}' })
        .collect();
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_owned())
}

/// Decodes a `STORAGE_DEVICE_DESCRIPTOR` (layout in the module doc); the answer may be
/// shorter than its `Size` says (strings past the end are `None`).
///
/// # Errors
/// An answer shorter than the 36-byte header.
pub fn parse_descriptor(b: &[u8]) -> Result<Descriptor, String> {
    if b.len() < DESCRIPTOR_HEADER {
        return Err(format!(
            "STORAGE_DEVICE_DESCRIPTOR of {} bytes, shorter than its {DESCRIPTOR_HEADER}-byte \
             header",
            b.len()
        ));
    }
    let at = |i: usize| u32_at(b, i).unwrap_or(0);
    Ok(Descriptor {
        device_type: b[8],
        removable: b[10] != 0,
        bus: BusType(at(28)),
        vendor: string_at(b, at(12)),
        product: string_at(b, at(16)),
        revision: string_at(b, at(20)),
        serial: string_at(b, at(24)),
    })
}

/// What benchboot reads of a `DISK_GEOMETRY_EX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// `MEDIA_TYPE`: 11 `RemovableMedia`, 12 `FixedMedia`.
    pub media_type: u32,
    pub bytes_per_sector: u32,
    /// Bytes (negative values read as 0).
    pub size_bytes: u64,
}

/// Decodes a `DISK_GEOMETRY_EX`.
///
/// # Errors
/// An answer shorter than its 32 bytes of fields.
pub fn parse_geometry(b: &[u8]) -> Result<Geometry, String> {
    match (u32_at(b, 8), u32_at(b, 20), i64_at(b, 24)) {
        (Some(media_type), Some(bytes_per_sector), Some(size)) => Ok(Geometry {
            media_type,
            bytes_per_sector,
            size_bytes: u64::try_from(size).unwrap_or(0),
        }),
        _ => Err(format!(
            "DISK_GEOMETRY_EX of {} bytes, shorter than its 32 bytes of fields",
            b.len()
        )),
    }
}

/// One `DISK_EXTENT`: a run of a volume on a disk, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    pub disk: u32,
    pub start: u64,
    pub length: u64,
}

/// Decodes a `VOLUME_DISK_EXTENTS`: the extents its count names that the answer holds
/// (a count past the end gives those that fit).
pub fn parse_extents(b: &[u8]) -> Vec<Extent> {
    let n = u32_at(b, 0).unwrap_or(0) as usize;
    (0..n.min(b.len() / 24))
        .map_while(|i| {
            let at = 8 + 24 * i;
            Some(Extent {
                disk: u32_at(b, at)?,
                start: u64::try_from(i64_at(b, at + 8)?).unwrap_or(0),
                length: u64::try_from(i64_at(b, at + 16)?).unwrap_or(0),
            })
        })
        .collect()
}

/// A path in the form paths are matched in: forward slashes as backslashes, the NT and
/// Win32 device prefixes (`\??\`, `\\?\`, `\\.\`, `\DosDevices\`) dropped, lower-cased,
/// with a trailing backslash (`c:\windows\`).
fn norm(p: &str) -> String {
    let mut s = p.replace('/', "\\").to_lowercase();
    for prefix in [r"\??\", r"\\?\", r"\\.\", r"\dosdevices\"] {
        if let Some(rest) = s.strip_prefix(prefix) {
            s = rest.to_owned();
            break;
        }
    }
    if !s.ends_with('\\') {
        s.push('\\');
    }
    s
}

/// The volume holding `path`: the one with the longest mount path prefixing it.
fn volume_of<'a>(volumes: &'a [RawVolume], path: &str) -> Option<&'a RawVolume> {
    let p = norm(path);
    volumes
        .iter()
        .flat_map(|v| v.paths.iter().map(move |m| (v, norm(m))))
        .filter(|(_, m)| p.starts_with(m.as_str()))
        .max_by_key(|(_, m)| m.len())
        .map(|(v, _)| v)
}

/// The disks of `snap` as [`Device`]s, in drive-number order, and notes on what could
/// not be read (one line each, for stderr).
pub fn scan(snap: &Snapshot) -> (Vec<Device>, Vec<String>) {
    let mut notes: Vec<String> = snap.errors.clone();
    let disks_of = |v: &RawVolume| -> Vec<u32> {
        let mut d: Vec<u32> = v
            .extents
            .as_deref()
            .map(parse_extents)
            .unwrap_or_default()
            .iter()
            .map(|e| e.disk)
            .collect();
        d.sort_unstable();
        d.dedup();
        d
    };
    let on_disk = |number: u32| -> Vec<&RawVolume> {
        snap.volumes
            .iter()
            .filter(|v| disks_of(v).contains(&number))
            .collect()
    };
    for v in &snap.volumes {
        for e in &v.errors {
            notes.push(format!("{}: {e}", v.name));
        }
    }
    // The disks under a path's volume; `None` when they cannot be told (no volume
    // mounted where it is, or one that names no disk: wine 8.0 answers its extents with
    // a count of 0).
    let disks_under = |path: &str| {
        volume_of(&snap.volumes, path)
            .map(disks_of)
            .filter(|d| !d.is_empty())
    };
    // What of the running system sits on which disk, and what sits on a disk that
    // cannot be told (then every disk may hold it).
    let mut holds: Vec<(u32, String)> = Vec::new();
    let mut anywhere: Vec<String> = Vec::new();
    let mut placed: Vec<(&str, String)> = Vec::new();
    match snap.windows_dir.as_deref() {
        Some(w) => placed.push((w, format!("the Windows directory {w}"))),
        None => anywhere.push("perhaps the Windows directory: Windows did not say where".into()),
    }
    match &snap.page_files {
        Some(files) => placed.extend(
            files
                .iter()
                .map(|pf| (pf.as_str(), format!("the page file {pf}"))),
        ),
        None => anywhere
            .push("perhaps a page file: the registry's ExistingPageFiles could not be read".into()),
    }
    for (path, what) in placed {
        match disks_under(path) {
            Some(d) => holds.extend(d.into_iter().map(|n| (n, what.clone()))),
            None => anywhere.push(format!("perhaps {what}: its volume names no disk")),
        }
    }
    if !snap.volumes_complete {
        anywhere.push("perhaps the system: the list of volumes is not whole".into());
    }
    for a in &anywhere {
        notes.push(format!("{a}: every disk is refused as possibly holding it"));
    }
    let mut devices = Vec::new();
    for raw in &snap.disks {
        let name = format!("PhysicalDrive{}", raw.number);
        for e in &raw.errors {
            notes.push(format!("{name}: {e}"));
        }
        let desc = raw
            .descriptor
            .as_deref()
            .map(parse_descriptor)
            .transpose()
            .unwrap_or_else(|e| {
                notes.push(format!("{name}: {e}"));
                None
            });
        let geo = raw
            .geometry
            .as_deref()
            .map(parse_geometry)
            .transpose()
            .unwrap_or_else(|e| {
                notes.push(format!("{name}: {e}"));
                None
            });
        let volumes = on_disk(raw.number);
        let mut mounts = Vec::new();
        for v in &volumes {
            let on = disks_of(v);
            let spans: Vec<String> = if on.len() > 1 {
                on.iter().map(|d| format!("PhysicalDrive{d}")).collect()
            } else {
                Vec::new()
            };
            // A spanned volume mounted nowhere is still refused, by its name.
            let name_only = [v.name.clone()];
            let points = if v.paths.is_empty() && !spans.is_empty() {
                &name_only[..]
            } else {
                &v.paths[..]
            };
            for p in points {
                mounts.push(Mount {
                    device: v.name.clone(),
                    mount_point: PathBuf::from(p),
                    fstype: v.filesystem.clone().unwrap_or_default(),
                    through: None,
                    spans: spans.clone(),
                });
            }
        }
        let system: Vec<String> = holds
            .iter()
            .filter(|(n, _)| *n == raw.number)
            .map(|(_, what)| what.clone())
            .chain(anywhere.iter().cloned())
            .collect();
        devices.push(Device {
            path: PathBuf::from(format!(r"\\.\{name}")),
            name,
            dev: None,
            size_bytes: geo.map_or(0, |g| g.size_bytes),
            logical_block_size: geo
                .map(|g| u64::from(g.bytes_per_sector))
                .filter(|&b| b >= 512 && b.is_power_of_two())
                .unwrap_or(512),
            removable: desc.as_ref().is_some_and(|d| d.removable),
            read_only: raw.writable == Some(false),
            transport: desc
                .as_ref()
                .map_or(Transport::Unknown, |d| d.bus.transport()),
            model: desc.as_ref().and_then(|d| d.product.clone()),
            vendor: desc.as_ref().and_then(|d| d.vendor.clone()),
            partitions: volumes
                .iter()
                .map(|v| Partition {
                    name: v.name.clone(),
                    dev: None,
                    number: None,
                })
                .collect(),
            holders: Vec::new(),
            backing_file: None,
            mounts,
            swaps: Vec::new(),
            system,
            card: None,
        });
    }
    (devices, notes)
}

#[cfg(test)]
#[path = "windows/tests.rs"]
mod tests;
