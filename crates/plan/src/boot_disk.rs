//! The boot card found by what the image wrote, never by a kernel name.
//!
//! Every image writes its own MBR disk signature ([`crate::ImageFacts::disk_signature`],
//! bytes 440..444 of sector 0, little-endian, the number `fdisk -l` prints as "Disk
//! identifier: 0x…"). Kernel names are not stable: a Raspberry Pi 4's pinned DTB has no
//! `mmc*` aliases and two sdhci-iproc hosts (the Arasan one for WiFi, emmc2 for the
//! card), so the card may come up as `mmcblk1` although the image was built for
//! `mmcblk0`. PID 1 reads the signature of every whole disk, [`choose_boot_disk`] picks
//! the one carrying the image's, and [`crate::Plan::on_boot_disk`] moves every plan
//! path derived from the nominal disk onto it.
//!
//! Pure: the reads are PID 1's (firmware/src/blkid.rs).

use std::fmt;

use crate::Plan;

/// Byte offset of the 32-bit disk signature in an MBR (sector 0): 440..444
/// (the "disk signature" / "NT disk identifier" field of the classic MBR layout; the
/// partition table starts at 446).
pub const MBR_SIGNATURE_OFFSET: usize = 440;

/// The disk signature `sector0` carries, as `fdisk` prints it (bytes 440..444,
/// little-endian); `None` when `sector0` is shorter than 444 bytes or has no MBR boot
/// signature `55 AA` at 510 (when it is 512 bytes or longer): an unpartitioned disk's
/// bytes there mean nothing.
pub fn mbr_signature(sector0: &[u8]) -> Option<u32> {
    let b = sector0.get(MBR_SIGNATURE_OFFSET..MBR_SIGNATURE_OFFSET + 4)?;
    if sector0.len() >= 512 && sector0[510..512] != [0x55, 0xaa] {
        return None;
    }
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// A disk signature as `fdisk` and `blkid` (`PTUUID`) print it: `0x1a2b3c4d`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature(pub u32);

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#010x}", self.0)
    }
}

/// One whole disk as PID 1 saw it: its kernel name (`mmcblk1`, `sda`) and the signature
/// in its sector 0, or why it could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenDisk {
    pub name: String,
    pub signature: Result<Option<u32>, String>,
}

/// Why no single disk is the boot card.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BootDiskError {
    /// The image recorded no signature (built before signatures were per image).
    #[error("the image records no disk signature (built before benchboot wrote one per image)")]
    NoSignature,
    /// No disk carries it; `seen` lists what was looked at.
    #[error("no disk carries the image's disk signature {signature} (seen: {seen})")]
    NotFound { signature: Signature, seen: String },
    /// More than one disk carries it (e.g. a USB stick flashed with the same image).
    #[error(
        "disks {disks} all carry the image's disk signature {signature}: the card cannot be \
         told from a copy of itself; unplug the other disk (a copy of this image?) and boot again"
    )]
    Ambiguous { signature: Signature, disks: String },
}

/// Which of `disks` carries `signature`: the boot card.
///
/// # Errors
/// `signature` 0 (none recorded), no disk carrying it, or more than one.
pub fn choose_boot_disk(signature: u32, disks: &[SeenDisk]) -> Result<String, BootDiskError> {
    if signature == 0 {
        return Err(BootDiskError::NoSignature);
    }
    let carrying: Vec<&str> = disks
        .iter()
        .filter(|d| d.signature == Ok(Some(signature)))
        .map(|d| d.name.as_str())
        .collect();
    match carrying.as_slice() {
        [one] => Ok((*one).to_owned()),
        [] => Err(BootDiskError::NotFound {
            signature: Signature(signature),
            seen: if disks.is_empty() {
                "no whole disk in /sys/class/block".into()
            } else {
                disks
                    .iter()
                    .map(|d| match &d.signature {
                        Ok(Some(s)) => format!("{} {}", d.name, Signature(*s)),
                        Ok(None) => format!("{} no MBR", d.name),
                        Err(e) => format!("{} unreadable: {e}", d.name),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        }),
        many => Err(BootDiskError::Ambiguous {
            signature: Signature(signature),
            disks: many.join(", "),
        }),
    }
}

/// The kernel's path for partition `n` of `disk`: `/dev/mmcblk0p5`, but `/dev/sda5`
/// (a disk name ending in a digit takes a `p` before the number: block/partitions/core.c,
/// `disk_name()`).
pub fn partition_path(disk: &str, n: u32) -> String {
    if disk.ends_with(|c: char| c.is_ascii_digit()) {
        format!("/dev/{disk}p{n}")
    } else {
        format!("/dev/{disk}{n}")
    }
}

/// `path` on disk `actual` when it names disk `nominal` or one of its partitions
/// (`/dev/mmcblk0` → `/dev/mmcblk1`, `/dev/mmcblk0p5` → `/dev/sda5`); `None` when it
/// names something else (`/dev/mmcblk01` is not a partition of `mmcblk0`; `LABEL=` and
/// `BUS=` names are not paths).
pub fn remap_device(path: &str, nominal: &str, actual: &str) -> Option<String> {
    let rest = path.strip_prefix("/dev/")?.strip_prefix(nominal)?;
    if rest.is_empty() {
        return Some(format!("/dev/{actual}"));
    }
    let number = if nominal.ends_with(|c: char| c.is_ascii_digit()) {
        rest.strip_prefix('p')?
    } else {
        rest
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) || number.starts_with('0') {
        return None;
    }
    Some(partition_path(actual, number.parse().ok()?))
}

impl Plan {
    /// Labels of the raw storage targets whose path names disk `actual` or one of its
    /// partitions as written: when the card was found as `actual` (not the nominal
    /// name), such a target would overwrite the boot card, so
    /// [`Plan::on_boot_disk`] drops them and PID 1 says why.
    pub fn raw_targets_on(&self, actual: &str) -> Vec<String> {
        self.storage
            .targets
            .iter()
            .filter(|t| {
                t.filesystem == crate::Filesystem::Raw
                    && remap_device(&t.device, actual, actual).is_some()
            })
            .map(|t| t.label.clone())
            .collect()
    }

    /// This plan with every path on disk `nominal` (the board file's `storage.disk`, as
    /// the image built its paths) moved to disk `actual` (where the card was found): the
    /// results device, every storage target and the device reads. Paths on other disks,
    /// `LABEL=`/`PARTLABEL=`/`BUS=` names and everything else stay as they are, except
    /// the raw targets naming `actual` itself ([`Plan::raw_targets_on`]): they would
    /// overwrite the boot card and are dropped (from the random step too).
    pub fn on_boot_disk(&self, nominal: &str, actual: &str) -> Plan {
        let mut p = self.clone();
        if nominal == actual {
            return p;
        }
        let dropped = self.raw_targets_on(actual);
        p.storage.targets.retain(|t| !dropped.contains(&t.label));
        if let Some(r) = &mut p.storage.random {
            r.targets.retain(|l| !dropped.contains(l));
        }
        let moved = |d: &mut String| {
            if let Some(m) = remap_device(d, nominal, actual) {
                *d = m;
            }
        };
        moved(&mut p.results.device);
        if let Some(j) = &mut p.results.journal {
            moved(j);
        }
        for t in &mut p.storage.targets {
            moved(&mut t.device);
        }
        if let Some(r) = &mut p.storage.device_reads {
            for d in &mut r.disks {
                moved(d);
            }
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DeviceReadPlan;

    fn sector0(sig: [u8; 4]) -> Vec<u8> {
        let mut s = vec![0u8; 512];
        s[440..444].copy_from_slice(&sig);
        s[510] = 0x55;
        s[511] = 0xaa;
        s
    }

    #[test]
    fn the_signature_is_bytes_440_to_444_little_endian() {
        assert_eq!(mbr_signature(&sector0(*b"bbt1")), Some(0x3174_6262));
        assert_eq!(Signature(0x3174_6262).to_string(), "0x31746262");
        assert_eq!(Signature(7).to_string(), "0x00000007");
        let mut no_mbr = sector0(*b"bbt1");
        no_mbr[510] = 0;
        assert_eq!(mbr_signature(&no_mbr), None);
        assert_eq!(mbr_signature(&[0; 100]), None);
    }

    fn seen(name: &str, sig: Result<Option<u32>, &str>) -> SeenDisk {
        SeenDisk {
            name: name.into(),
            signature: sig.map_err(str::to_owned),
        }
    }

    #[test]
    fn the_card_is_the_one_disk_carrying_the_signature() {
        // A Pi 4: the card came up second, behind the Arasan host's index.
        let disks = [
            seen("mmcblk0", Ok(None)),
            seen("mmcblk1", Ok(Some(0xdead_beef))),
            seen("sda", Ok(Some(0x1234))),
        ];
        assert_eq!(choose_boot_disk(0xdead_beef, &disks).unwrap(), "mmcblk1");
    }

    #[test]
    fn two_disks_with_the_signature_are_refused_naming_both() {
        let disks = [
            seen("mmcblk0", Ok(Some(0xdead_beef))),
            seen("sda", Ok(Some(0xdead_beef))),
        ];
        let e = choose_boot_disk(0xdead_beef, &disks).unwrap_err();
        assert_eq!(
            e,
            BootDiskError::Ambiguous {
                signature: Signature(0xdead_beef),
                disks: "mmcblk0, sda".into()
            }
        );
        let text = e.to_string();
        assert!(
            text.contains("mmcblk0, sda") && text.contains("0xdeadbeef"),
            "{text}"
        );
        assert!(text.contains("unplug the other disk"), "{text}");
    }

    #[test]
    fn no_disk_with_the_signature_lists_what_was_seen() {
        let disks = [
            seen("mmcblk0", Ok(Some(0x1))),
            seen("sda", Err("Input/output error")),
            seen("vda", Ok(None)),
        ];
        let e = choose_boot_disk(0xdead_beef, &disks)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "no disk carries the image's disk signature 0xdeadbeef (seen: mmcblk0 0x00000001, \
             sda unreadable: Input/output error, vda no MBR)"
        );
        assert!(choose_boot_disk(0xdead_beef, &[])
            .unwrap_err()
            .to_string()
            .contains("no whole disk"));
        assert_eq!(choose_boot_disk(0, &disks), Err(BootDiskError::NoSignature));
    }

    #[test]
    fn partition_paths_follow_the_kernels_naming() {
        assert_eq!(partition_path("mmcblk1", 5), "/dev/mmcblk1p5");
        assert_eq!(partition_path("sda", 5), "/dev/sda5");
        assert_eq!(partition_path("nvme0n1", 2), "/dev/nvme0n1p2");
        assert_eq!(partition_path("vda", 2), "/dev/vda2");
    }

    #[test]
    fn remap_moves_the_disk_and_its_partitions_only() {
        let r = |p: &str, n: &str, a: &str| remap_device(p, n, a);
        assert_eq!(
            r("/dev/mmcblk0p5", "mmcblk0", "mmcblk1").unwrap(),
            "/dev/mmcblk1p5"
        );
        assert_eq!(
            r("/dev/mmcblk0p12", "mmcblk0", "sda").unwrap(),
            "/dev/sda12"
        );
        assert_eq!(r("/dev/mmcblk0", "mmcblk0", "sda").unwrap(), "/dev/sda");
        assert_eq!(r("/dev/sda5", "sda", "mmcblk0").unwrap(), "/dev/mmcblk0p5");
        assert_eq!(r("/dev/vda2", "vda", "vdb").unwrap(), "/dev/vdb2");
        // Not the nominal disk's: another disk whose name starts the same way.
        assert_eq!(r("/dev/mmcblk01", "mmcblk0", "mmcblk1"), None);
        assert_eq!(r("/dev/mmcblk0boot0", "mmcblk0", "mmcblk1"), None);
        assert_eq!(r("/dev/mmcblk0p", "mmcblk0", "mmcblk1"), None);
        assert_eq!(r("/dev/sdab1", "sda", "sdb"), None);
        assert_eq!(r("/dev/sda01", "sda", "sdb"), None);
        assert_eq!(r("/dev/sdb1", "sda", "sdc"), None);
        assert_eq!(r("LABEL=ext4", "sda", "sdc"), None);
        assert_eq!(r("BUS=usb", "sda", "sdc"), None);
    }

    #[test]
    fn every_path_of_the_card_moves_to_the_disk_found() {
        let mut plan = Plan::example();
        plan.storage.targets.push(crate::StorageTarget {
            label: "usb".into(),
            device: "/dev/sda1".into(),
            filesystem: crate::Filesystem::Ext4,
            optional: true,
        });
        plan.storage.targets.push(crate::StorageTarget {
            label: "stick".into(),
            device: "BUS=usb".into(),
            filesystem: crate::Filesystem::Raw,
            optional: true,
        });
        plan.storage.device_reads = Some(DeviceReadPlan {
            disks: vec!["/dev/mmcblk0".into(), "BUS=usb".into()],
            chunk_bytes: 2 << 20,
            cached_ms: 2_000,
            buffered_ms: 3_000,
        });
        let moved = plan.on_boot_disk("mmcblk0", "mmcblk1");
        assert_eq!(moved.results.device, "/dev/mmcblk1p2");
        assert_eq!(moved.results.journal.as_deref(), Some("/dev/mmcblk1p4"));
        let devices: Vec<&str> = moved
            .storage
            .targets
            .iter()
            .map(|t| t.device.as_str())
            .collect();
        assert_eq!(devices, ["/dev/mmcblk1p7", "/dev/sda1", "BUS=usb"]);
        assert_eq!(
            moved.storage.device_reads.as_ref().unwrap().disks,
            ["/dev/mmcblk1", "BUS=usb"]
        );
        // Nothing else changes.
        let mut back = moved.clone();
        back.results = plan.results.clone();
        back.storage = plan.storage.clone();
        assert_eq!(back, plan);

        // The card found as a USB disk (a card reader): sda, no `p`.
        let on_sda = plan.on_boot_disk("mmcblk0", "sda");
        assert_eq!(on_sda.results.device, "/dev/sda2");
        assert_eq!(on_sda.results.journal.as_deref(), Some("/dev/sda4"));
        assert_eq!(on_sda.storage.targets[0].device, "/dev/sda7");
        // Found where it was built for: the same plan.
        assert_eq!(plan.on_boot_disk("mmcblk0", "mmcblk0"), plan);
    }

    #[test]
    fn a_raw_target_naming_the_disk_the_card_was_found_on_is_dropped() {
        // The plan names sda as a USB test disk, but the card itself came up as sda
        // (a card reader): writing it raw would overwrite the card.
        let mut plan = Plan::example();
        plan.storage.targets.push(crate::StorageTarget {
            label: "usb-raw".into(),
            device: "/dev/sda".into(),
            filesystem: crate::Filesystem::Raw,
            optional: true,
        });
        plan.storage.random = Some(crate::RandomPlan {
            targets: vec!["ext4".into(), "usb-raw".into()],
            block_size: 4096,
            region_bytes: 1 << 20,
            duration_ms: 1_000,
            queue_depths: vec![1],
        });
        assert_eq!(plan.raw_targets_on("sda"), ["usb-raw"]);
        assert!(plan.raw_targets_on("mmcblk0").is_empty(), "ext4 is not raw");
        let moved = plan.on_boot_disk("mmcblk0", "sda");
        let labels: Vec<&str> = moved
            .storage
            .targets
            .iter()
            .map(|t| t.label.as_str())
            .collect();
        assert_eq!(labels, ["ext4"]);
        assert_eq!(moved.storage.targets[0].device, "/dev/sda7");
        assert_eq!(moved.storage.random.unwrap().targets, ["ext4"]);
    }
}
