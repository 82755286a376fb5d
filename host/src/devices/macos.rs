//! macOS: `diskutil list -plist` and `diskutil info -plist <disk>` turned into
//! [`Device`]s. Pure parsers; [`scan`] takes the command runner, so tests feed it
//! captured output.

use std::path::PathBuf;

use anyhow::{Context, Result};
use plist::{Dictionary, Value};

use super::disk::{Device, Mount, Partition, Transport};

/// A whole disk of `diskutil list -plist` (`AllDisksAndPartitions`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedDisk {
    pub id: String,
    /// Bytes.
    pub size: u64,
    /// Everything on the disk: the disk itself when mounted, its partitions, APFS
    /// volumes and their mounted snapshots.
    pub volumes: Vec<Volume>,
    /// For a synthesized APFS container: the partitions it lives on (`disk0s2`).
    pub physical_stores: Vec<String>,
}

/// One partition, volume or snapshot of a listed disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Volume {
    /// Its BSD name: `disk2s1`, `disk1s5s1`.
    pub id: String,
    /// Where it is mounted; `None`: not mounted.
    pub mount_point: Option<String>,
}

impl Volume {
    /// `id`, mounted at `mount_point`.
    pub fn new(id: String, mount_point: Option<String>) -> Volume {
        Volume { id, mount_point }
    }
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
/// A count of bytes. diskutil writes some as `<real>`: a Cruzer Fit's `Size` in
/// `diskutil list -plist` is `<real>1.5682240512E10</real>` (hst-imager's capture,
/// `tests/fixtures/diskutil/intel-macbook-usb-stick/list.plist`).
fn uint(d: &Dictionary, k: &str) -> Option<u64> {
    let v = d.get(k)?;
    v.as_unsigned_integer().or_else(|| {
        v.as_real()
            .filter(|r| r.fract() == 0.0 && (0.0..=u64::MAX as f64).contains(r))
            .map(|r| r as u64)
    })
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
            let mut volumes = vec![Volume::new(id.clone(), string(d, "MountPoint"))];
            volumes.retain(|v| v.mount_point.is_some());
            for p in array(d, "Partitions").chain(array(d, "APFSVolumes")) {
                let Some(pid) = string(p, "DeviceIdentifier") else {
                    continue;
                };
                volumes.push(Volume::new(pid.clone(), string(p, "MountPoint")));
                for s in array(p, "MountedSnapshots") {
                    let sid = string(s, "SnapshotBSD").unwrap_or_else(|| pid.clone());
                    volumes.push(Volume::new(sid, string(s, "SnapshotMountPoint")));
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
        for vol in disk.volumes.iter().chain(stacked.flat_map(|c| &c.volumes)) {
            let mp = &vol.mount_point;
            let seen = mounts.iter().any(|m: &Mount| {
                m.device == vol.id && m.mount_point.as_os_str() == mp.as_deref().unwrap_or_default()
            });
            if let (Some(mp), false) = (mp, seen) {
                mounts.push(Mount {
                    device: vol.id.clone(),
                    mount_point: PathBuf::from(mp),
                    fstype: String::new(),
                    through: None,
                    spans: Vec::new(),
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
            // An internal SD slot is removable too; other internal disks are not. The
            // slot of recent Macs ("Built In SDXC Reader") is on the SD bus ("Secure
            // Digital"); that of older MacBooks is a reader on the internal USB bus: "Protocol: USB",
            // "Device Location: Internal", "Removable Media: Removable" (etcher #983
            // and #2357 show its card as "(internal, physical)"; google/santa #1055).
            removable: info.removable
                && (!info.internal || matches!(transport, Transport::Mmc | Transport::Usb)),
            read_only: !info.writable,
            transport,
            model: info.media_name.clone(),
            vendor: None,
            // diskutil does not show an SD card's registers.
            card: None,
            partitions: disk
                .volumes
                .iter()
                .filter(|v| v.id != disk.id)
                .map(|v| Partition {
                    name: v.id.clone(),
                    dev: None,
                    number: None,
                })
                .collect(),
            holders: Vec::new(),
            backing_file: None,
            mounts,
            swaps: vec![],
            system: Vec::new(),
        });
    }
    Ok(devices)
}
