//! Tests of the target guard: path normalisation, the host refusing the card by any
//! spelling, two targets on one place, the board's device-number tables.
use super::*;

/// The boot disk's raw node spelled every way the brief names, and their combinations.
const BOOT_SPELLINGS: [&str; 5] = [
    "/dev/mmcblk0",
    "/dev/./mmcblk0",
    "//dev//mmcblk0",
    "/dev/../dev/mmcblk0",
    "/dev/mmcblk0/",
];

#[test]
fn paths_normalise_lexically() {
    for p in BOOT_SPELLINGS {
        assert_eq!(normalise_path(p), "/dev/mmcblk0", "{p}");
    }
    let cases = [
        ("/dev/sda1", "/dev/sda1"),
        ("/../../dev/sda", "/dev/sda"),
        ("/dev/./././sda/.", "/dev/sda"),
        ("/dev/disk/by-id/../../mmcblk0p2", "/dev/mmcblk0p2"),
        ("/", "/"),
        ("/..", "/"),
        ("dev/sda", "dev/sda"),
        ("LABEL=x", "LABEL=x"),
    ];
    for (p, want) in cases {
        assert_eq!(normalise_path(p), want, "{p}");
    }
    // Every mix of separators, `.` and `x/..` detours around each component.
    let seps = ["/", "//", "/./", "/.//", "/x/../", "/./y/../"];
    let mut n = 0;
    for a in seps {
        for b in seps {
            for tail in ["", "/", "/.", "//"] {
                let p = format!("{a}dev{b}mmcblk0{tail}");
                assert_eq!(normalise_path(&p), "/dev/mmcblk0", "{p}");
                n += 1;
            }
        }
    }
    assert_eq!(n, 144);
}

#[test]
fn kernel_names_are_one_component_under_dev() {
    assert_eq!(kernel_name("/dev/sda1"), Some("sda1"));
    assert_eq!(kernel_name("/dev/disk/by-id/usb-x"), None);
    assert_eq!(kernel_name("/dev/"), None);
    assert_eq!(kernel_name("/mnt/sda"), None);
}

fn problem(device: &str, fs: Filesystem) -> Option<String> {
    host_problem(device, fs, "mmcblk0")
}

#[test]
fn the_host_refuses_the_card_by_any_spelling() {
    let fses = [
        Filesystem::Raw,
        Filesystem::Ext4,
        Filesystem::Ext2,
        Filesystem::Vfat,
    ];
    let seps = ["/", "//", "/./", "/x/../"];
    let mut refused = 0;
    for a in seps {
        for b in seps {
            for tail in ["", "/"] {
                for fs in fses {
                    let whole = format!("{a}dev{b}mmcblk0{tail}");
                    let e = problem(&whole, fs).unwrap_or_else(|| panic!("{whole}"));
                    assert!(e.contains("the disk the board boots from"), "{e}");
                    for (n, what) in [
                        (1, "boot partition"),
                        (2, "results partition"),
                        (4, "results journal (p4)"),
                    ] {
                        let p = format!("{a}dev{b}mmcblk0p{n}{tail}");
                        let e = problem(&p, fs).unwrap_or_else(|| panic!("{p}"));
                        let want = if fs == Filesystem::Raw {
                            "a partition of the disk the board boots from"
                        } else {
                            what
                        };
                        assert!(e.contains(want), "{p} {fs:?}: {e}");
                        assert!(e.contains("storage.card"), "the fix: {e}");
                        if p != format!("/dev/mmcblk0p{n}") {
                            assert!(e.contains(&format!("(that is /dev/mmcblk0p{n})")), "{e}");
                        }
                    }
                    refused += 4;
                }
            }
        }
    }
    assert_eq!(refused, 4 * 4 * 2 * 4 * 4);
    // Raw on any partition of the card; a filesystem on its test partitions is fine.
    assert!(problem("/dev/mmcblk0p9", Filesystem::Raw).is_some());
    assert_eq!(problem("/dev/mmcblk0p7", Filesystem::Ext4), None);
    assert_eq!(problem("/dev/./mmcblk0p5/", Filesystem::Vfat), None);
    // Other disks whose names start the same way.
    assert_eq!(problem("/dev/mmcblk01", Filesystem::Raw), None);
    assert_eq!(problem("/dev/mmcblk1", Filesystem::Raw), None);
    assert_eq!(problem("/dev/sda", Filesystem::Raw), None);
    // The card's labels.
    for (l, what) in [
        ("LABEL=BOOT", "boot partition"),
        ("LABEL=BBRESULTS", "results partition"),
    ] {
        let e = problem(l, Filesystem::Ext4).unwrap();
        assert!(e.contains(what) && e.contains(l), "{e}");
    }
    assert_eq!(problem("LABEL=BBUSB", Filesystem::Ext4), None);
    assert_eq!(problem("BUS=usb", Filesystem::Raw), None);
}

#[test]
fn nested_dev_paths_are_refused_with_why() {
    for p in [
        "/dev/disk/by-id/mmc-SD64G_0x1234",
        "/dev/disk/by-label/BBRESULTS",
        "/dev/disk/by-path/platform-fe340000.mmc",
        "/dev/block/179:0",
        "/dev/mapper/x",
        "/mnt/sda",
    ] {
        let e = problem(p, Filesystem::Raw).unwrap_or_else(|| panic!("{p}"));
        assert!(
            e.contains("no udev") && e.contains("/dev/disk/by-*") && e.contains("LABEL="),
            "{e}"
        );
    }
    // Control characters are shown escaped.
    let e = problem("/dev/disk/\u{1b}[2J", Filesystem::Raw).unwrap();
    assert!(!e.contains('\u{1b}') && e.contains("\\u{1b}[2J"), "{e}");
}

fn target(label: &str, device: &str, fs: Filesystem) -> StorageTarget {
    StorageTarget {
        label: label.into(),
        device: device.into(),
        filesystem: fs,
        optional: false,
    }
}

#[test]
fn two_targets_on_one_place_are_found() {
    use Filesystem::{Ext4, Raw};
    let same = [
        (("/dev/sda1", Ext4), ("/dev/./sda1/", Raw)),
        (("LABEL=X", Ext4), ("LABEL=X", Ext4)),
        (("PARTLABEL=p", Raw), ("PARTLABEL=p", Raw)),
        (("BUS=usb", Raw), ("BUS=usb", Raw)),
        (("/dev/sda", Raw), ("/dev/sda1", Ext4)),
        (("/dev/mmcblk1p5", Ext4), ("//dev/mmcblk1", Raw)),
    ];
    for ((da, fa), (db, fb)) in same {
        let (a, b) = (target("a", da, fa), target("b", db, fb));
        assert!(same_place(&a, &b), "{da} {db}");
        assert!(same_place(&b, &a), "{db} {da}");
    }
    let apart = [
        (("/dev/sda1", Ext4), ("/dev/sda2", Ext4)),
        (("/dev/sda", Ext4), ("/dev/sda1", Ext4)),
        (("/dev/sda", Raw), ("/dev/sdab1", Ext4)),
        (("LABEL=X", Ext4), ("LABEL=Y", Ext4)),
        (("BUS=usb", Raw), ("BUS=sata", Raw)),
    ];
    for ((da, fa), (db, fb)) in apart {
        let (a, b) = (target("a", da, fa), target("b", db, fb));
        assert!(!same_place(&a, &b), "{da} {db}");
        assert!(!same_place(&b, &a), "{db} {da}");
    }
}

#[test]
fn mountinfo_gives_device_and_mount_point() {
    let text = "22 1 0:20 / / rw,relatime - rootfs rootfs rw\n\
                36 22 179:2 / /results rw,noatime - vfat /dev/mmcblk0p2 rw\n\
                37 22 8:1 / /mnt/with\\040space rw - ext4 /dev/sda1 rw\n\
                garbage\n\
                38 22 x:y / /bad rw - ext4 /dev/sdb rw\n";
    let d = |a, b| DevNum { major: a, minor: b };
    assert_eq!(
        parse_mountinfo(text),
        [
            (d(0, 20), "/".to_owned()),
            (d(179, 2), "/results".to_owned()),
            (d(8, 1), "/mnt/with\\040space".to_owned()),
        ]
    );
    assert_eq!(DevNum::parse(" 179:0\n"), Some(d(179, 0)));
    assert_eq!(DevNum::parse("179"), None);
    assert_eq!(d(8, 16).to_string(), "8:16");
}

const fn dn(major: u32, minor: u32) -> DevNum {
    DevNum { major, minor }
}

/// A board: the card mmcblk0 (179:0; p1 179:1, p2 179:2, p4 179:4 the journal,
/// p5..p9 179:5..179:9, p9 the
/// image's raw test partition), a USB disk sda (8:0; sda1 8:1, sda2 8:2), results
/// mounted, sda2 mounted by someone.
fn card() -> Card {
    Card {
        name: "mmcblk0".into(),
        whole: dn(179, 0),
        boot: Some(dn(179, 1)),
        results: Some(dn(179, 2)),
        journal: Some(dn(179, 4)),
        own_raw: vec![dn(179, 9)],
    }
}

fn mounts() -> Vec<Mount> {
    vec![
        Mount {
            seen: Seen {
                dev: dn(0, 20),
                whole: dn(0, 20),
            },
            at: "/".into(),
        },
        Mount {
            seen: Seen {
                dev: dn(179, 2),
                whole: dn(179, 0),
            },
            at: "/results".into(),
        },
        Mount {
            seen: Seen {
                dev: dn(8, 2),
                whole: dn(8, 0),
            },
            at: "/mnt/other".into(),
        },
    ]
}

fn whole_of(d: DevNum) -> DevNum {
    match d.major {
        179 => dn(179, 0),
        8 => dn(8, d.minor / 16 * 16),
        _ => d,
    }
}

fn seen(d: DevNum) -> Seen {
    Seen {
        dev: d,
        whole: whole_of(d),
    }
}

#[test]
fn the_board_refuses_the_card_by_identity() {
    use Filesystem::{Ext4, Raw, Vfat};
    let c = card();
    let m = mounts();
    // (device number, filesystem, refused with this in the message, or accepted).
    let cases: [(DevNum, Filesystem, Option<&str>); 18] = [
        (dn(179, 4), Raw, Some("results journal (mmcblk0 p4)")),
        (dn(179, 4), Ext4, Some("results journal (mmcblk0 p4)")),
        (dn(179, 0), Raw, Some("the boot card's whole disk")),
        (dn(179, 0), Ext4, Some("the boot card's whole disk")),
        (dn(179, 1), Raw, Some("boot partition (mmcblk0 p1, BOOT)")),
        (dn(179, 1), Vfat, Some("boot partition (mmcblk0 p1, BOOT)")),
        (
            dn(179, 2),
            Vfat,
            Some("results partition (mmcblk0 p2, BBRESULTS)"),
        ),
        (dn(179, 2), Raw, Some("results partition")),
        (
            dn(179, 5),
            Raw,
            Some("a partition of mmcblk0, the boot card, written raw"),
        ),
        (dn(179, 7), Raw, Some("written raw")),
        (dn(179, 9), Raw, None),
        (dn(179, 7), Ext4, None),
        (
            dn(8, 0),
            Raw,
            Some("(its partition 8:2) is mounted at /mnt/other"),
        ),
        (dn(8, 2), Ext4, Some("device 8:2 is mounted at /mnt/other")),
        (dn(8, 1), Raw, None),
        (dn(8, 1), Ext4, None),
        (dn(8, 16), Raw, None),
        (dn(254, 0), Raw, None),
    ];
    for (d, fs, want) in cases {
        let t = target("t", "/dev/x", fs);
        let got = board_refusal(&t, seen(d), &[], &c, &m);
        match (want, &got) {
            (None, None) => {}
            (Some(w), Some(e)) => {
                assert!(e.contains(w), "{d} {fs:?}: {e}");
                assert!(e.contains(&d.to_string()), "names the device: {e}");
            }
            _ => panic!("{d} {fs:?}: want {want:?}, got {got:?}"),
        }
    }
}

#[test]
fn the_board_rule_holds_over_every_device_and_filesystem() {
    // Every (device, filesystem) pair over three disks: the refusal is exactly the rule
    // as stated, computed independently here.
    use Filesystem::{Ext2, Ext3, Ext4, Raw, Vfat};
    let c = card();
    let m = mounts();
    let mut devices = vec![];
    for minor in 0..16 {
        devices.push(dn(179, minor));
        devices.push(dn(8, minor));
        devices.push(dn(8, 16 + minor));
    }
    let mut n = 0;
    for d in devices {
        for fs in [Ext2, Ext3, Ext4, Vfat, Raw] {
            let raw = fs == Raw;
            let s = seen(d);
            let on_card = s.whole == c.whole;
            let want = d == c.whole
                || Some(d) == c.boot
                || Some(d) == c.results
                || Some(d) == c.journal
                || (raw && on_card && !c.own_raw.contains(&d))
                || m.iter()
                    .any(|x| x.seen.dev == d || (raw && x.seen.whole == d));
            let t = target("t", "/dev/x", fs);
            assert_eq!(
                board_refusal(&t, s, &[], &c, &m).is_some(),
                want,
                "{d} {fs:?}"
            );
            n += 1;
        }
    }
    assert_eq!(n, 48 * 5);
}

#[test]
fn the_board_refuses_a_second_target_on_one_device_naming_both() {
    use Filesystem::{Ext4, Raw};
    let c = card();
    let earlier = vec![
        (target("usb", "/dev/sda1", Ext4), seen(dn(8, 1))),
        (target("disk", "BUS=sata", Raw), seen(dn(8, 16))),
    ];
    let cases = [
        (
            "/dev/link-to-sda1",
            Ext4,
            dn(8, 1),
            "`usb` (/dev/sda1)",
            "device 8:1",
        ),
        (
            "/dev/sda",
            Raw,
            dn(8, 0),
            "`usb` (/dev/sda1)",
            "devices 8:1 and 8:0",
        ),
        (
            "LABEL=X",
            Ext4,
            dn(8, 17),
            "`disk` (BUS=sata)",
            "devices 8:16 and 8:17",
        ),
        (
            "/dev/sdb",
            Raw,
            dn(8, 16),
            "`disk` (BUS=sata)",
            "device 8:16",
        ),
    ];
    for (dev, fs, d, other, devs) in cases {
        let t = target("again", dev, fs);
        let e = board_refusal(&t, seen(d), &earlier, &c, &[]).unwrap();
        assert!(e.contains(other), "{e}");
        assert!(e.contains(&format!("`again` ({dev})")), "{e}");
        assert!(e.contains(devs), "{e}");
    }
    // Another partition of a disk a filesystem target uses is fine.
    let t = target("other", "/dev/sda3", Ext4);
    assert_eq!(board_refusal(&t, seen(dn(8, 3)), &earlier, &c, &[]), None);
}
