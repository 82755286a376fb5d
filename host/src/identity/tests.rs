//! The identity lookup's pure parts (kernel filesystems, losetup's answer, the words of
//! a partition), and lookups of this machine's proc, sysfs and /dev that need no root.

use super::*;
use crate::devices::{Mount, Transport};

fn fs(magic: u64, fstype: &str, at: &str) -> Fs {
    Fs {
        magic,
        fstype: Some(fstype.into()),
        mount_point: Some(at.into()),
    }
}

#[test]
fn the_kernels_filesystems_are_known_by_magic_and_devtmpfs_by_its_type() {
    assert_eq!(
        fs(0x9fa0, "proc", "/proc").kernel_own(),
        Some("proc, the kernel's process information")
    );
    // The magic decides, whatever mountinfo calls it or wherever it is mounted.
    assert_eq!(
        fs(0x6265_6572, "whatever", "/mnt/x").kernel_own(),
        Some("sysfs, the kernel's device tree")
    );
    assert_eq!(
        fs(0xde5e_81e4, "efivarfs", "/sys/firmware/efi/efivars").kernel_own(),
        Some("efivarfs, the firmware's EFI variables")
    );
    // devtmpfs reports tmpfs's magic: told by its type, or by being /dev.
    assert_eq!(
        fs(TMPFS_MAGIC, "devtmpfs", "/dev").kernel_own(),
        Some("devtmpfs, the device nodes")
    );
    assert_eq!(
        fs(TMPFS_MAGIC, "tmpfs", "/dev").kernel_own(),
        Some("devtmpfs, the device nodes")
    );
    // tmpfs elsewhere (/dev/shm, /tmp) and disks hold ordinary files.
    assert_eq!(fs(TMPFS_MAGIC, "tmpfs", "/dev/shm").kernel_own(), None);
    assert_eq!(fs(0xef53, "ext4", "/").kernel_own(), None);
    // macOS: statfs names devfs (no magic).
    assert_eq!(
        fs(0, "devfs", "/dev").kernel_own(),
        Some("devfs, the device nodes")
    );
    let magics: Vec<u64> = KERNEL_FILESYSTEMS.iter().map(|(m, _)| *m).collect();
    let mut unique = magics.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), magics.len(), "a magic listed twice");
}

#[test]
fn losetups_answer_gives_each_backing_files_inode() {
    // util-linux 2.38 as root; loop1's backing file was removed; loop2 asked without
    // the right to open the device.
    let text = "/dev/loop0 12 259:0\n/dev/loop1 4063234 \\x20\\x20254:0\\x20\\x20\n/dev/loop2  \n";
    assert_eq!(
        parse_losetup(text),
        [
            (
                "loop0".to_owned(),
                FileId {
                    dev: "259:0".into(),
                    ino: 12
                }
            ),
            (
                "loop1".to_owned(),
                FileId {
                    dev: "254:0".into(),
                    ino: 4_063_234
                }
            ),
        ]
    );
}

fn card() -> Device {
    Device {
        name: "sdb".into(),
        path: "/dev/sdb".into(),
        dev: Some("8:16".into()),
        size_bytes: 62_333_952 * 512,
        logical_block_size: 512,
        removable: true,
        read_only: false,
        transport: Transport::Usb,
        model: Some("STORAGE DEVICE".into()),
        vendor: Some("Generic".into()),
        partitions: vec![
            Partition {
                name: "sdb1".into(),
                dev: Some("8:17".into()),
                number: Some(1),
            },
            Partition {
                name: "sdb2".into(),
                dev: Some("8:18".into()),
                number: Some(2),
            },
        ],
        holders: Vec::new(),
        backing_file: None,
        mounts: vec![Mount {
            device: "sdb2".into(),
            mount_point: "/media/pi/BBRESULTS".into(),
            fstype: "vfat".into(),
            through: None,
            spans: Vec::new(),
        }],
        swaps: Vec::new(),
        system: Vec::new(),
        card: None,
    }
}

#[test]
fn a_partition_is_said_with_its_node_number_disk_and_mounts() {
    let part = |given: &str, n: usize| Found {
        given: given.into(),
        what: What::Partition {
            disk: Box::new(card()),
            partition: card().partitions[n].clone(),
        },
    };
    assert_eq!(
        part("/dev/disk/by-label/BBRESULTS", 1).words(""),
        "/dev/disk/by-label/BBRESULTS is /dev/sdb2, partition 2 of /dev/sdb (Generic \
         STORAGE DEVICE, usb, 29.7 GiB), mounted at /media/pi/BBRESULTS"
    );
    assert_eq!(
        part("/dev/sdb1", 0).words("--card "),
        "--card /dev/sdb1 is partition 1 of /dev/sdb (Generic STORAGE DEVICE, usb, 29.7 GiB)"
    );
    let disk = Found {
        given: "/dev/disk/by-id/usb-Generic".into(),
        what: What::Disk(Box::new(card())),
    };
    assert_eq!(
        disk.words("--device "),
        "--device /dev/disk/by-id/usb-Generic is /dev/sdb (Generic STORAGE DEVICE, usb, \
         29.7 GiB)"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn files_and_folders_of_proc_sysfs_and_dev_are_the_kernels() {
    let root = Path::new("/");
    let status = lookup(Path::new("/proc/self/status"), root).unwrap();
    let What::File { fs, uses, .. } = &status.what else {
        panic!("{status:?}");
    };
    assert_eq!(fs.magic, 0x9fa0);
    assert!(uses.is_empty());
    let e = status
        .refuse_kernel_files("--device ", "name a card")
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "--device /proc/self/status is on proc, the kernel's process information, statfs \
         magic 0x9fa0: the kernel's own files, never written; name a card"
    );
    let sys = lookup(Path::new("/sys/kernel"), root).unwrap();
    assert!(
        matches!(&sys.what, What::Folder { fs } if fs.magic == 0x6265_6572),
        "{sys:?}"
    );
    let new = lookup(Path::new("/dev/benchboot-none"), root).unwrap();
    let e = new.refuse_kernel_files("", "name a card").unwrap_err();
    assert_eq!(
        e.to_string(),
        "/dev/benchboot-none: no such file, and its folder /dev is on devtmpfs, the device \
         nodes, statfs magic 0x1021994: the kernel's own files, never written; name a card"
    );
    // An ordinary file: nothing to refuse, whatever folder it is in.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("card.img");
    std::fs::write(&file, b"x").unwrap();
    let found = lookup(&file, root).unwrap();
    assert!(matches!(&found.what, What::File { uses, .. } if uses.is_empty()));
    found.refuse_kernel_files("", "").unwrap();
    found.refuse_in_use("").unwrap();
    assert_eq!(
        lookup(&dir.path().join("none/x.img"), root).unwrap().what,
        What::Nowhere {
            folder: dir.path().join("none")
        }
    );
    assert_eq!(
        lookup(Path::new("/dev/null"), root).unwrap().what,
        What::Other {
            kind: "character device"
        }
    );
}

#[cfg(unix)]
#[test]
fn a_path_that_cannot_be_stated_is_said_in_the_oss_words_only() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("card.img");
    std::fs::write(&file, b"x").unwrap();
    let below = file.join("x");
    let e = lookup(&below, Path::new("/")).unwrap_err();
    assert_eq!(
        format!("{e:#}"),
        format!("{}: not a directory", below.display())
    );
}
