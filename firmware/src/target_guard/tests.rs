//! Tests of PID 1's target guard over a fake sysfs: whole disks and the boot card, and
//! targets refused by device number whatever path names them.
use std::os::unix::fs::symlink;

use super::*;
use crate::test_loop::Loop;

/// A fake sysfs as the kernel lays it out: `devices/.../<disk>/<part>` directories with
/// `dev` (and `partition` for partitions), `/sys/dev/block/MAJ:MIN` and
/// `/sys/class/block/<name>` symlinks to them. Disks: mmcblk0 (179:0; p1, p2, p5, p9)
/// and sda (8:0; sda1).
fn fake_sysfs(root: &Path) -> (PathBuf, PathBuf) {
    let devices = root.join("devices");
    let dev_block = root.join("dev/block");
    let class_block = root.join("class/block");
    std::fs::create_dir_all(&dev_block).unwrap();
    std::fs::create_dir_all(&class_block).unwrap();
    let add = |dir: &Path, name: &str, num: &str, part: Option<u32>| {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("dev"), format!("{num}\n")).unwrap();
        if let Some(n) = part {
            std::fs::write(dir.join("partition"), format!("{n}\n")).unwrap();
        }
        symlink(dir, dev_block.join(num)).unwrap();
        symlink(dir, class_block.join(name)).unwrap();
    };
    let mmc = devices.join("platform/mmc0/mmcblk0");
    add(&mmc, "mmcblk0", "179:0", None);
    for (n, minor) in [(1, 1), (2, 2), (4, 4), (5, 5), (9, 9)] {
        add(
            &mmc.join(format!("mmcblk0p{n}")),
            &format!("mmcblk0p{n}"),
            &format!("179:{minor}"),
            Some(n),
        );
    }
    let sda = devices.join("usb1/host0/sda");
    add(&sda, "sda", "8:0", None);
    add(&sda.join("sda1"), "sda1", "8:1", Some(1));
    (dev_block, class_block)
}

fn dn(major: u32, minor: u32) -> DevNum {
    DevNum { major, minor }
}

fn facts() -> ImageFacts {
    ImageFacts {
        board: "rpi-zero-w".into(),
        card: vec![StorageTarget {
            label: "raw".into(),
            device: "/dev/mmcblk0p9".into(),
            filesystem: Filesystem::Raw,
            optional: false,
        }],
        boot_disk: "mmcblk0".into(),
        disk_signature: 1,
        buses: vec![],
        ethernet: None,
        usb_ethernet: None,
        wifi: None,
    }
}

#[test]
fn whole_disks_and_the_card_come_from_sysfs() {
    let dir = tempfile::tempdir().unwrap();
    let (dev_block, class_block) = fake_sysfs(dir.path());
    let sys = Sysfs {
        dev_block: &dev_block,
        class_block: &class_block,
    };
    assert_eq!(sys.whole_of(dn(179, 5)), dn(179, 0));
    assert_eq!(sys.whole_of(dn(179, 0)), dn(179, 0));
    assert_eq!(sys.whole_of(dn(8, 1)), dn(8, 0));
    assert_eq!(sys.whole_of(dn(254, 3)), dn(254, 3), "not in sysfs: itself");
    let c = card(&sys, "mmcblk0", "mmcblk0", &facts().card).unwrap();
    assert_eq!(
        c,
        Card {
            name: "mmcblk0".into(),
            whole: dn(179, 0),
            boot: Some(dn(179, 1)),
            results: Some(dn(179, 2)),
            journal: Some(dn(179, 4)),
            own_raw: vec![dn(179, 9)],
        }
    );
    assert_eq!(card(&sys, "mmcblk7", "mmcblk0", &[]), None);
    let m = mounts(
        "22 1 0:20 / / rw - rootfs rootfs rw\n36 22 179:2 / /results rw - vfat x rw\n",
        &sys,
    );
    assert_eq!(m[1].seen.whole, dn(179, 0));
    assert_eq!(m[1].at, "/results");
    assert_eq!(m[0].seen.whole, dn(0, 20));
}

#[test]
fn a_target_that_is_no_block_device_or_absent_is_refused_with_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let (dev_block, class_block) = fake_sysfs(dir.path());
    let sys = Sysfs {
        dev_block: &dev_block,
        class_block: &class_block,
    };
    let file = dir.path().join("plain");
    std::fs::write(&file, b"x").unwrap();
    let e = seen(&file, &sys).unwrap_err();
    assert!(e.contains("plain is no block device"), "{e}");
    let e = seen(&dir.path().join("absent"), &sys).unwrap_err();
    assert!(e.starts_with("stat ") && e.contains("absent"), "{e}");

    let mut g = Guard::new(sys, "mmcblk0", Some(&facts()), "");
    let t = StorageTarget {
        label: "x".into(),
        device: file.display().to_string(),
        filesystem: Filesystem::Raw,
        optional: false,
    };
    assert!(g.check(&t).unwrap_err().contains("no block device"));
}

#[test]
fn an_unknown_boot_card_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (dev_block, class_block) = fake_sysfs(dir.path());
    let sys = Sysfs {
        dev_block: &dev_block,
        class_block: &class_block,
    };
    let mut g = Guard::new(sys, "vda", None, "");
    let t = StorageTarget {
        label: "usb".into(),
        device: "/dev/sda1".into(),
        filesystem: Filesystem::Ext4,
        optional: false,
    };
    let e = g.check(&t).unwrap_err();
    assert!(
        e.contains("the boot card vda has no device number") && e.contains("nothing is written"),
        "{e}"
    );
}

#[test]
fn the_boot_card_by_a_symlink_or_a_roundabout_path_is_refused_by_its_number() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("card.img");
    std::fs::File::create(&file)
        .unwrap()
        .set_len(4 << 20)
        .unwrap();
    let card_dev = Loop::attach(&file);
    let name = card_dev.0.file_name().unwrap().to_str().unwrap().to_owned();
    let num = std::fs::read_to_string(format!("/sys/class/block/{name}/dev")).unwrap();
    // The real /sys/dev/block; the card's name in a class/block of our own, so that the
    // loop device is the boot card.
    let class_block = dir.path().join("class");
    std::fs::create_dir_all(class_block.join(&name)).unwrap();
    std::fs::write(class_block.join(&name).join("dev"), &num).unwrap();
    let link = dir.path().join("by-id-card");
    symlink(&card_dev.0, &link).unwrap();
    let roundabout = format!("/dev/./../dev//{name}");
    for (device, fs) in [
        (link.display().to_string(), Filesystem::Raw),
        (roundabout.clone(), Filesystem::Raw),
        (roundabout, Filesystem::Ext4),
    ] {
        let sys = Sysfs {
            dev_block: Path::new("/sys/dev/block"),
            class_block: &class_block,
        };
        let mut g = Guard::new(sys, &name, None, "");
        let t = StorageTarget {
            label: "card".into(),
            device: device.clone(),
            filesystem: fs,
            optional: false,
        };
        let e = g.check(&t).unwrap_err();
        assert_eq!(
            e,
            format!(
                "not written: {device}: device {} is {name}, the boot card's whole disk \
                 (found by its disk signature); benchboot never writes the card outside its \
                 test partitions",
                num.trim()
            )
        );
    }
    // With a trailing `/` the device is no directory: refused before any open (open(2)
    // would fail the same way).
    let sys = Sysfs {
        dev_block: Path::new("/sys/dev/block"),
        class_block: &class_block,
    };
    let slash = StorageTarget {
        label: "card".into(),
        device: format!("/dev/{name}/"),
        filesystem: Filesystem::Raw,
        optional: false,
    };
    let e = Guard::new(sys, &name, None, "").check(&slash).unwrap_err();
    assert!(e.contains("Not a directory"), "{e}");
    // Another loop device is no card: accepted, and a second target on it is refused
    // naming both.
    let other_file = dir.path().join("usb.img");
    std::fs::File::create(&other_file)
        .unwrap()
        .set_len(4 << 20)
        .unwrap();
    let other = Loop::attach(&other_file);
    let sys = Sysfs {
        dev_block: Path::new("/sys/dev/block"),
        class_block: &class_block,
    };
    let mut g = Guard::new(sys, &name, None, "");
    let t = |label: &str| StorageTarget {
        label: label.into(),
        device: other.0.display().to_string(),
        filesystem: Filesystem::Raw,
        optional: false,
    };
    g.check(&t("usb")).unwrap();
    let e = g.check(&t("again")).unwrap_err();
    assert!(
        e.contains("target `usb`") && e.contains("target `again`"),
        "{e}"
    );
}
