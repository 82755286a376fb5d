//! The SD card layout: a pure function from sizes to an MBR partition plan.
//!
//! ```text
//! 0 ─ 4 MiB    MBR + gap (room for boot blobs; SD erase blocks are 4 MiB)
//! p1           FAT32 boot: firmware, kernel, DTB, initramfs, config.txt, cmdline.txt
//! p2           FAT results partition (results.json, runs/): the copy any computer opens
//! p4           the results journal (MBR type 0xda, no filesystem): PID 1's power-cut-safe
//!              record of every save (crates/journal); after p2 on the card, though
//!              numbered after the extended partition
//! p3           extended partition, holding one logical partition per test filesystem:
//!   p5..       ext2, ext3, ext4, vfat, raw (each after its 1 MiB-aligned EBR)
//! ```
//! Logical partitions follow mbrman's `push` convention: a slot of N MiB starts with its
//! EBR, and the partition starts 1 MiB (one alignment unit) later.

use anyhow::{ensure, Result};
use benchboot_plan::Filesystem;

/// Bytes per sector (the MBR's unit).
pub const SECTOR: u64 = 512;
/// Partition alignment: 1 MiB in sectors (also mbrman's default `align`).
pub const ALIGN: u32 = 2048;
const MIB_SECTORS: u32 = 2048;

/// MBR partition type ids (the values fdisk lists).
pub const TYPE_FAT32_LBA: u8 = 0x0c;
pub const TYPE_LINUX: u8 = 0x83;
pub const TYPE_EXTENDED_LBA: u8 = 0x0f;
/// "Non-FS data": the raw test partition, written without a filesystem.
pub const TYPE_NON_FS_DATA: u8 = 0xda;

/// What a partition is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Boot,
    Results,
    /// The results journal (crates/journal): raw, written only by PID 1.
    Journal,
    Test(Filesystem),
}

/// One partition as Linux numbers it (`p1`, `p2`, `p5`...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    pub number: u8,
    pub role: Role,
    pub start_lba: u32,
    pub sectors: u32,
    pub mbr_type: u8,
}

impl Part {
    pub fn offset_bytes(&self) -> u64 {
        u64::from(self.start_lba) * SECTOR
    }
    pub fn size_bytes(&self) -> u64 {
        u64::from(self.sectors) * SECTOR
    }
}

/// Sizes in MiB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// Whole card; a power of two (QEMU's SD card model requires it).
    pub disk_mib: u32,
    pub boot_start_mib: u32,
    pub boot_mib: u32,
    pub results_mib: u32,
    /// The results journal (p4); 0: none. At least 1 MiB otherwise.
    pub journal_mib: u32,
    /// Per test filesystem, including its 1 MiB EBR slot.
    pub test_slot_mib: u32,
    pub tests: Vec<Filesystem>,
}

impl Default for Spec {
    fn default() -> Self {
        Spec {
            disk_mib: 1024,
            boot_start_mib: 4,
            boot_mib: 64,
            results_mib: 32,
            // A QEMU run's record is ~8-20 KiB (a deflated document in 4 KiB blocks) and
            // a run saves ~200 times: 16 MiB holds several whole runs.
            journal_mib: 16,
            test_slot_mib: 97,
            tests: [Filesystem::ALL.as_slice(), &[Filesystem::Raw]].concat(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub disk_bytes: u64,
    /// Primary and logical partitions, by number.
    pub parts: Vec<Part>,
    /// The extended partition (p3): start and length in sectors.
    pub extended: (u32, u32),
    /// Per logical partition: its slot (EBR start, slot length in sectors).
    pub slots: Vec<(u32, u32)>,
}

impl Layout {
    pub fn part(&self, role: Role) -> Option<&Part> {
        self.parts.iter().find(|p| p.role == role)
    }
}

/// Computes the layout.
///
/// # Errors
/// When the disk size is not a power of two or the partitions do not fit.
pub fn plan(spec: &Spec) -> Result<Layout> {
    ensure!(
        spec.disk_mib.is_power_of_two(),
        "disk size {} MiB: QEMU's SD model needs a power of two",
        spec.disk_mib
    );
    ensure!(
        spec.test_slot_mib >= 3,
        "test slot of {} MiB: needs at least 3 MiB (EBR + data)",
        spec.test_slot_mib
    );
    ensure!(
        spec.boot_start_mib >= 1,
        "boot partition must start at 1 MiB or later (MBR)"
    );
    let mib = |m: u32| m * MIB_SECTORS;
    let boot = Part {
        number: 1,
        role: Role::Boot,
        start_lba: mib(spec.boot_start_mib),
        sectors: mib(spec.boot_mib),
        mbr_type: TYPE_FAT32_LBA,
    };
    let results = Part {
        number: 2,
        role: Role::Results,
        start_lba: boot.start_lba + boot.sectors,
        sectors: mib(spec.results_mib),
        mbr_type: TYPE_FAT32_LBA,
    };
    let mut parts = vec![boot, results];
    let mut ext_start = results.start_lba + results.sectors;
    if spec.journal_mib > 0 {
        parts.push(Part {
            number: benchboot_journal::PARTITION,
            role: Role::Journal,
            start_lba: ext_start,
            sectors: mib(spec.journal_mib),
            mbr_type: benchboot_journal::MBR_TYPE,
        });
        ext_start += mib(spec.journal_mib);
    }
    let disk_sectors = mib(spec.disk_mib);
    ensure!(
        ext_start < disk_sectors,
        "boot, results and journal partitions do not fit in {} MiB",
        spec.disk_mib
    );
    let extended = (ext_start, disk_sectors - ext_start);
    let mut slots = Vec::new();
    let mut slot = ext_start;
    for (i, fs) in spec.tests.iter().enumerate() {
        let len = mib(spec.test_slot_mib);
        ensure!(
            slot + len <= disk_sectors,
            "test partition {} ({}) does not fit in {} MiB: grow disk_mib or shrink test_slot_mib",
            i + 5,
            fs.name(),
            spec.disk_mib
        );
        slots.push((slot, len));
        parts.push(Part {
            number: 5 + i as u8,
            role: Role::Test(*fs),
            start_lba: slot + ALIGN,
            sectors: len - ALIGN,
            mbr_type: match fs {
                Filesystem::Vfat => TYPE_FAT32_LBA,
                Filesystem::Raw => TYPE_NON_FS_DATA,
                _ => TYPE_LINUX,
            },
        });
        slot += len;
    }
    Ok(Layout {
        disk_bytes: u64::from(disk_sectors) * SECTOR,
        parts,
        extended,
        slots,
    })
}

/// The kernel's name for partition `n` of `disk`: `mmcblk0p5`, but `sda5`
/// ([`benchboot_plan::boot_disk::partition_path`]).
pub fn partition_device(disk: &str, n: u8) -> String {
    benchboot_plan::boot_disk::partition_path(disk, u32::from(n))
}

/// The MBR disk signature (bytes 440..444 of sector 0, little-endian) of `board`'s
/// image with `layout`: the first 4 bytes of SHA-256(`benchboot disk signature v1\0` ‖
/// board name ‖ `\0` ‖ disk bytes ‖ each partition's number, start LBA, sectors and
/// type), never 0 (0 means "none recorded" in [`benchboot_plan::ImageFacts`]). The
/// same board and layout give the same signature (reproducible images); PID 1 finds
/// the card by it ([`benchboot_plan::boot_disk`]).
pub fn disk_signature(board: &str, layout: &Layout) -> u32 {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(b"benchboot disk signature v1\0");
    h.update(board.as_bytes());
    h.update([0]);
    h.update(layout.disk_bytes.to_le_bytes());
    for p in &layout.parts {
        h.update([p.number, p.mbr_type]);
        h.update(p.start_lba.to_le_bytes());
        h.update(p.sectors.to_le_bytes());
    }
    let d = h.finalize();
    match u32::from_le_bytes([d[0], d[1], d[2], d[3]]) {
        0 => 1,
        s => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_layout() {
        let l = plan(&Spec::default()).unwrap();
        assert_eq!(l.disk_bytes, 1024 << 20);
        let numbers: Vec<u8> = l.parts.iter().map(|p| p.number).collect();
        assert_eq!(numbers, [1, 2, 4, 5, 6, 7, 8, 9]);
        // The journal sits between the results partition and the extended one.
        let j = l.part(Role::Journal).unwrap();
        assert_eq!(
            (j.offset_bytes(), j.size_bytes(), j.mbr_type),
            (100 << 20, 16 << 20, 0xda)
        );
        assert_eq!(l.extended.0, 116 * 2048);
        assert_eq!(
            l.part(Role::Test(Filesystem::Raw)).unwrap().mbr_type,
            TYPE_NON_FS_DATA
        );
        let boot = l.part(Role::Boot).unwrap();
        assert_eq!(
            (boot.offset_bytes(), boot.size_bytes()),
            (4 << 20, 64 << 20)
        );
        let ext4 = l.part(Role::Test(Filesystem::Ext4)).unwrap();
        assert_eq!(ext4.number, 7);
        let without = plan(&Spec {
            journal_mib: 0,
            ..Spec::default()
        })
        .unwrap();
        assert_eq!(without.part(Role::Journal), None);
        assert_eq!(without.extended.0, 100 * 2048);
        assert_eq!(ext4.size_bytes(), 96 << 20);
        assert_eq!(
            l.part(Role::Test(Filesystem::Vfat)).unwrap().mbr_type,
            TYPE_FAT32_LBA
        );
    }

    #[test]
    fn partitions_are_aligned_and_disjoint_and_inside() {
        let l = plan(&Spec::default()).unwrap();
        let mut spans: Vec<(u32, u32)> = l
            .parts
            .iter()
            .map(|p| (p.start_lba, p.start_lba + p.sectors))
            .collect();
        spans.extend(l.slots.iter().map(|&(s, _)| (s, s + 1))); // each EBR sector
        spans.sort();
        for w in spans.windows(2) {
            assert!(w[0].1 <= w[1].0, "overlap: {w:?}");
        }
        for p in &l.parts {
            assert_eq!(p.start_lba % ALIGN, 0, "p{} unaligned", p.number);
            assert!(u64::from(p.start_lba + p.sectors) * SECTOR <= l.disk_bytes);
        }
    }

    #[test]
    fn too_small_disk_is_refused_with_the_fix() {
        let spec = Spec {
            disk_mib: 512,
            ..Spec::default()
        };
        let err = plan(&spec).unwrap_err().to_string();
        assert!(err.contains("grow disk_mib"), "{err}");
        let spec = Spec {
            disk_mib: 500,
            ..Spec::default()
        };
        assert!(plan(&spec)
            .unwrap_err()
            .to_string()
            .contains("power of two"));
    }

    #[test]
    fn device_names() {
        assert_eq!(partition_device("mmcblk0", 5), "/dev/mmcblk0p5");
        assert_eq!(partition_device("sda", 2), "/dev/sda2");
    }

    #[test]
    fn disk_signatures_are_per_board_and_layout_and_stable() {
        let l = plan(&Spec::default()).unwrap();
        let a = disk_signature("rpi-4b", &l);
        assert_eq!(a, disk_signature("rpi-4b", &l), "reproducible");
        assert_ne!(a, 0);
        assert_ne!(a, u32::from_le_bytes(*b"bbt1"), "not the old fixed bytes");
        assert_ne!(a, disk_signature("rpi-3b", &l));
        let bigger = plan(&Spec {
            disk_mib: 2048,
            ..Spec::default()
        })
        .unwrap();
        assert_ne!(a, disk_signature("rpi-4b", &bigger));
    }
}
