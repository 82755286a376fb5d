//! Finds block devices by filesystem label (`LABEL=`) or GPT partition name
//! (`PARTLABEL=`), as `blkid -t` and udev's `/dev/disk/by-*label` links do, for PID 1,
//! which has neither.
//!
//! The recognisers are pure functions over the first [`PROBE_BYTES`] of a device:
//! - ext2/3/4 ([`probe_filesystem`]): superblock at byte 1024, `s_magic` 0xEF53 at +56,
//!   `s_volume_name` (16 bytes, NUL-padded) at +120 (kernel
//!   `Documentation/filesystems/ext4/super.rst`);
//! - FAT12/16: boot sector with a BPB, extended boot signature 0x29 at 0x26, volume
//!   label (11 bytes, space-padded) at 0x2B; FAT32 (16-bit FAT size 0): signature at
//!   0x42, label at 0x47 (Microsoft FAT specification, BPB). `NO NAME` means no label.
//!   Only the boot sector's copy is read, not the root directory's volume-label entry;
//!   the bytes are compared as they are (OEM code page), so use ASCII FAT labels;
//! - GPT ([`gpt_partitions`]): header at LBA 1 (`EFI PART`, header CRC32 and entry
//!   array CRC32 checked), partition name = 36 UTF-16LE code units at +56 of each entry;
//!   entry `i` is partition number `i + 1`, as the kernel numbers them (UEFI 2.10 §5.3).
//!
//! Whole disks are found by bus (`BUS=usb|sata|virtio`, [`bus_of_sysfs_path`]: the
//! bus device on the way from `/sys/devices` to the disk).
//!
//! The boot card is found by the MBR disk signature its image wrote
//! ([`wait_for_signature`], benchboot_plan::boot_disk), never by a kernel name.
//!
//! [`find`], [`locate`] and [`wait_for`] are the thin edge: they walk
//! `/sys/class/block` (kernel name → `/dev/<DEVNAME>`) and read the head of each device.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use benchboot_plan::boot_disk::{choose_boot_disk, mbr_signature, BootDiskError, SeenDisk};
use benchboot_plan::{Bus, DeviceRef};

/// How much of each device is read: every superblock and the usual GPT entry array (at
/// LBA 2, 128 entries of 128 bytes) lie in it, for 512 B and 4 KiB sectors.
pub const PROBE_BYTES: usize = 64 * 1024;

/// What [`probe_filesystem`] recognised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsProbe {
    /// `ext` (ext2, ext3 and ext4 share the superblock) or `vfat`.
    pub kind: &'static str,
    /// The volume label, `None` when the filesystem has none.
    pub label: Option<String>,
}

/// One used entry of a GPT.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GptPartition {
    /// Partition number as the kernel gives it (`sda<number>`, `mmcblk0p<number>`).
    pub number: u32,
    pub name: String,
}

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// A label field as text: cut at the first NUL, trailing spaces dropped; `None` if empty.
fn label_text(field: &[u8]) -> Option<String> {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    let text = String::from_utf8_lossy(&field[..end]);
    let text = text.trim_end_matches(' ');
    (!text.is_empty()).then(|| text.to_owned())
}

/// The ext2/3/4 superblock's volume name, if `buf` starts with an ext filesystem.
fn probe_ext(buf: &[u8]) -> Option<FsProbe> {
    const SB: usize = 1024;
    let sb = buf.get(SB..SB + 136)?;
    if le16(sb, 56) != 0xEF53 {
        return None;
    }
    Some(FsProbe {
        kind: "ext",
        label: label_text(&sb[120..136]),
    })
}

/// The FAT12/16/32 boot sector's volume label, if `buf` starts with a FAT boot sector.
fn probe_fat(buf: &[u8]) -> Option<FsProbe> {
    let bs = buf.get(..512)?;
    let jump = (bs[0] == 0xEB && bs[2] == 0x90) || bs[0] == 0xE9;
    let bytes_per_sector = le16(bs, 0x0B);
    let sectors_per_cluster = bs[0x0D];
    let media = bs[0x15];
    let valid = bs[510..512] == [0x55, 0xAA]
        && jump
        && matches!(bytes_per_sector, 512 | 1024 | 2048 | 4096)
        && sectors_per_cluster.is_power_of_two()
        && le16(bs, 0x0E) != 0 // reserved sectors
        && bs[0x10] != 0 // number of FATs
        && (media == 0xF0 || media >= 0xF8);
    if !valid {
        return None;
    }
    // FAT32 has a 16-bit FAT size of 0 and its 32-bit size at 0x24; its extended BPB
    // (boot signature, serial, label) sits 0x1C bytes further on.
    let fat32 = le16(bs, 0x16) == 0;
    if fat32 && le32(bs, 0x24) == 0 {
        return None;
    }
    let (signature, label) = if fat32 { (0x42, 0x47) } else { (0x26, 0x2B) };
    // Signature 0x28 has no label field; 0x29 has one.
    let label = (bs[signature] == 0x29)
        .then(|| label_text(&bs[label..label + 11]))
        .flatten()
        .filter(|l| l != "NO NAME");
    Some(FsProbe {
        kind: "vfat",
        label,
    })
}

/// The filesystem `buf` (the first bytes of a device, ideally [`PROBE_BYTES`]) starts
/// with, and its label. ext is tried first: its superblock lies past the boot sector,
/// which mkfs.ext4 may leave behind from an earlier FAT.
pub fn probe_filesystem(buf: &[u8]) -> Option<FsProbe> {
    probe_ext(buf).or_else(|| probe_fat(buf))
}

/// CRC-32 (IEEE 802.3, reflected, as GPT uses).
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xEDB8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

/// The used partitions of the GPT in `buf` (the first bytes of a whole disk) for
/// logical sectors of `sector` bytes, or `None` when there is no valid primary GPT (bad
/// signature or CRC, or an entry array outside `buf`).
pub fn gpt_partitions(buf: &[u8], sector: usize) -> Option<Vec<GptPartition>> {
    let hdr = buf.get(sector..sector + 92)?;
    if &hdr[..8] != b"EFI PART" {
        return None;
    }
    let header_size = le32(hdr, 12) as usize;
    if header_size < 92 || header_size > sector {
        return None;
    }
    let mut header = buf.get(sector..sector + header_size)?.to_vec();
    header[16..20].fill(0); // the CRC is computed with its own field zeroed
    if crc32(&header) != le32(hdr, 16) {
        return None;
    }
    let entry_size = le32(hdr, 84) as usize;
    if entry_size < 128 || !entry_size.is_multiple_of(8) {
        return None;
    }
    let count = le32(hdr, 80) as usize;
    let start = usize::try_from(le64(hdr, 72)).ok()?.checked_mul(sector)?;
    let array = buf.get(start..start.checked_add(count.checked_mul(entry_size)?)?)?;
    if crc32(array) != le32(hdr, 88) {
        return None;
    }
    Some(
        array
            .chunks_exact(entry_size)
            .enumerate()
            .filter(|(_, e)| e[..16].iter().any(|&b| b != 0)) // type GUID 0: unused
            .map(|(i, e)| {
                let units: Vec<u16> = e[56..128]
                    .chunks_exact(2)
                    .map(|u| u16::from_le_bytes([u[0], u[1]]))
                    .take_while(|&u| u != 0)
                    .collect();
                GptPartition {
                    number: i as u32 + 1,
                    name: String::from_utf16_lossy(&units),
                }
            })
            .collect(),
    )
}

/// Up to [`PROBE_BYTES`] from the start of `path`.
fn head(path: &Path) -> io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(PROBE_BYTES);
    File::open(path)?
        .take(PROBE_BYTES as u64)
        .read_to_end(&mut buf)?;
    Ok(buf)
}

fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_owned())
}

/// `/dev/<DEVNAME>` of the sysfs block device directory `sys` (DEVNAME from its
/// `uevent`, else the directory name).
fn dev_path(sys: &Path, dev: &Path) -> PathBuf {
    let devname = std::fs::read_to_string(sys.join("uevent"))
        .ok()
        .and_then(|u| {
            u.lines()
                .find_map(|l| l.strip_prefix("DEVNAME=").map(str::to_owned))
        })
        .or_else(|| sys.file_name().map(|n| n.to_string_lossy().into_owned()));
    dev.join(devname.unwrap_or_default())
}

/// Block devices with data: the entries of `sys_class_block` whose `size` is not 0.
fn block_devices(sys_class_block: &Path) -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = std::fs::read_dir(sys_class_block)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| read_trimmed(&p.join("size")).is_some_and(|s| s != "0"))
        .collect();
    all.sort();
    all
}

/// Partition `number` of the disk whose sysfs directory is `disk`: the child directory
/// whose `partition` file holds that number.
fn partition_dir(disk: &Path, number: u32) -> Option<PathBuf> {
    std::fs::read_dir(disk)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| read_trimmed(&p.join("partition")) == Some(number.to_string()))
}

/// Every device under `sys_class_block` (e.g. `/sys/class/block`) whose filesystem
/// label ([`DeviceRef::Label`]) or GPT partition name ([`DeviceRef::PartLabel`]) is the
/// one asked for, as paths under `dev` (e.g. `/dev`). A [`DeviceRef::Path`] is itself.
/// Devices that cannot be read (no medium, no permission) are skipped.
pub fn find(sys_class_block: &Path, dev: &Path, wanted: DeviceRef<'_>) -> Vec<PathBuf> {
    let mut found = Vec::new();
    match wanted {
        DeviceRef::Path(p) => found.push(PathBuf::from(p)),
        DeviceRef::Label(name) => {
            for sys in block_devices(sys_class_block) {
                let path = dev_path(&sys, dev);
                let Ok(buf) = head(&path) else { continue };
                if probe_filesystem(&buf).and_then(|p| p.label).as_deref() == Some(name) {
                    found.push(path);
                }
            }
        }
        DeviceRef::PartLabel(name) => {
            let disks = block_devices(sys_class_block)
                .into_iter()
                .filter(|s| !s.join("partition").exists());
            for disk in disks {
                let Ok(buf) = head(&dev_path(&disk, dev)) else {
                    continue;
                };
                let logical = read_trimmed(&disk.join("queue/logical_block_size"))
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(512);
                let Some(parts) = [logical, 512, 4096]
                    .into_iter()
                    .find_map(|sector| gpt_partitions(&buf, sector))
                else {
                    continue;
                };
                for p in parts.iter().filter(|p| p.name == name) {
                    if let Some(sys) = partition_dir(&disk, p.number) {
                        found.push(dev_path(&sys, dev));
                    }
                }
            }
        }
        DeviceRef::WholeDisk(bus) => {
            let disks = block_devices(sys_class_block)
                .into_iter()
                .filter(|s| !s.join("partition").exists());
            for disk in disks.filter(|d| bus.is_some() && disk_bus(d) == bus) {
                found.push(dev_path(&disk, dev));
            }
        }
    }
    found
}

/// The bus of whole disk `sys` (`/sys/class/block/<name>`, a link into
/// `/sys/devices/...`): USB when a `usbN` hub is on the way, SATA when an `ataN` port
/// is, virtio when a `virtioN` device is.
pub fn disk_bus(sys: &Path) -> Option<Bus> {
    let real = std::fs::canonicalize(sys).ok()?;
    bus_of_sysfs_path(&real.to_string_lossy())
}

/// [`disk_bus`] of a resolved sysfs path, e.g.
/// `/sys/devices/platform/soc/3f980000.usb/usb1/1-1/1-1:1.0/host0/target0:0:0/0:0:0:0/block/sda`.
pub fn bus_of_sysfs_path(path: &str) -> Option<Bus> {
    let has = |prefix: &str| {
        path.split('/').any(|c| {
            c.strip_prefix(prefix)
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
    };
    if has("usb") {
        Some(Bus::Usb)
    } else if has("ata") {
        Some(Bus::Sata)
    } else if has("virtio") {
        Some(Bus::Virtio)
    } else {
        None
    }
}

/// Kernel-name order: shorter names first, then by name (`sda` .. `sdz`, `sdaa`;
/// `mmcblk2` before `mmcblk10`), the order the kernel hands names out in.
fn kernel_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// The kernel name of the disk holding block device `name` (`mmcblk0p2` → `mmcblk0`,
/// `vda2` → `vda`, `sda` → `sda`): the parent of its `sys_class_block` entry when that
/// is a partition (it has a `partition` file), itself when the entry is a whole disk,
/// else (no sysfs entry) by the kernel's naming rule: a trailing `p<digits>` after a
/// digit goes (`mmcblk0p2`, `nvme0n1p1`), else the trailing digits (`sda1`).
pub fn disk_of(sys_class_block: &Path, name: &str) -> String {
    let sys = sys_class_block.join(name);
    if sys.join("partition").exists() {
        if let Some(disk) = std::fs::canonicalize(&sys).ok().and_then(|p| {
            p.parent()
                .and_then(|d| d.file_name())
                .map(|f| f.to_string_lossy().into_owned())
        }) {
            return disk;
        }
    } else if sys.exists() {
        return name.to_owned();
    }
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
    if stem.len() == name.len() {
        return name.to_owned();
    }
    match stem.strip_suffix('p') {
        Some(disk) if disk.ends_with(|c: char| c.is_ascii_digit()) => disk.to_owned(),
        _ => stem.to_owned(),
    }
}

/// Where `wanted` is now, as a path under `dev`; `boot_disk` (a kernel name, e.g.
/// `mmcblk0`) is the disk the board booted from. `Ok(None)`: not (yet) there.
/// - `LABEL=` / `PARTLABEL=`: the one device carrying the name ([`find`]);
/// - `BUS=<bus>`: the first whole disk on that bus in kernel-name order that is not
///   `boot_disk`: benchboot never sweeps the disk it booted from, even when asked;
/// - a path: itself, once it exists.
///
/// # Errors
/// Several devices carry the name (a benchmark writes to its target: it must not pick
/// one of them by chance), or `BUS=` names no bus benchboot knows.
pub fn locate(
    sys_class_block: &Path,
    dev: &Path,
    wanted: DeviceRef<'_>,
    boot_disk: &str,
) -> Result<Option<PathBuf>, String> {
    match wanted {
        DeviceRef::Path(p) => Ok(Path::new(p).exists().then(|| PathBuf::from(p))),
        DeviceRef::WholeDisk(None) => Err(format!(
            "{wanted} names no bus; use BUS=usb, BUS=sata or BUS=virtio"
        )),
        DeviceRef::WholeDisk(Some(_)) => {
            let mut disks: Vec<PathBuf> = find(sys_class_block, dev, wanted)
                .into_iter()
                .filter(|p| p.file_name().is_some_and(|n| n != boot_disk))
                .collect();
            disks.sort_by(|a, b| kernel_order(&a.to_string_lossy(), &b.to_string_lossy()));
            Ok(disks.into_iter().next())
        }
        DeviceRef::Label(_) | DeviceRef::PartLabel(_) => {
            let mut found = find(sys_class_block, dev, wanted);
            match found.len() {
                0 => Ok(None),
                1 => Ok(Some(found.remove(0))),
                _ => {
                    let list: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
                    Err(format!(
                        "{wanted} is ambiguous: {}; give the /dev/ path",
                        list.join(", ")
                    ))
                }
            }
        }
    }
}

/// [`locate`] again every 100 ms until the device is there or `wait` has passed.
///
/// # Errors
/// As [`locate`], and: no device answers within `wait` (the message says what was
/// looked for and how long, in ms).
pub fn wait_for(
    sys_class_block: &Path,
    dev: &Path,
    wanted: DeviceRef<'_>,
    boot_disk: &str,
    wait: Duration,
) -> Result<PathBuf, String> {
    let until = Instant::now() + wait;
    loop {
        if let Some(found) = locate(sys_class_block, dev, wanted, boot_disk)? {
            return Ok(found);
        }
        if Instant::now() >= until {
            let what = match wanted {
                DeviceRef::WholeDisk(Some(bus)) => format!(
                    "no whole disk on the {} bus besides the boot disk {boot_disk}",
                    bus.name()
                ),
                DeviceRef::Path(p) => format!("{p} never appeared"),
                _ => format!("no block device has {wanted}"),
            };
            return Err(format!("{what} (waited {} ms)", wait.as_millis()));
        }
        crate::modalias::poll();
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every whole disk under `sys_class_block` (entries with a non-zero `size` and no
/// `partition` file) with the MBR disk signature of its sector 0, read from its node
/// under `dev` ([`benchboot_plan::boot_disk::mbr_signature`]), in kernel-name order.
pub fn whole_disk_signatures(sys_class_block: &Path, dev: &Path) -> Vec<SeenDisk> {
    let mut disks: Vec<SeenDisk> = block_devices(sys_class_block)
        .into_iter()
        .filter(|s| !s.join("partition").exists())
        .map(|sys| {
            let path = dev_path(&sys, dev);
            let mut sector0 = Vec::with_capacity(512);
            let signature = File::open(&path)
                .and_then(|f| f.take(512).read_to_end(&mut sector0))
                .map(|_| mbr_signature(&sector0))
                .map_err(|e| e.to_string());
            SeenDisk {
                name: sys
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                signature,
            }
        })
        .collect();
    disks.sort_by(|a, b| kernel_order(&a.name, &b.name));
    disks
}

/// The whole disk carrying `signature` ([`choose_boot_disk`]), looked for again every
/// 100 ms until `wait` has passed: the card may come up after the modules that drive
/// its host (sdhci-iproc and its regulators on a Pi 4) have loaded.
///
/// # Errors
/// No signature recorded, two disks carrying it (at once: waiting would not help), or
/// none by the end of `wait` (what was seen then).
pub fn wait_for_signature(
    sys_class_block: &Path,
    dev: &Path,
    signature: u32,
    wait: Duration,
) -> Result<String, BootDiskError> {
    let until = Instant::now() + wait;
    loop {
        match choose_boot_disk(signature, &whole_disk_signatures(sys_class_block, dev)) {
            Err(BootDiskError::NotFound { .. }) if Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests;
