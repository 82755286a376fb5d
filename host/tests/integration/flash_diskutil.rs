//! macOS: `diskutil list -plist` / `diskutil info -plist` parsed into devices and
//! judged by the same rules as on Linux (`flash_devices`), on output captured from
//! real Macs. The captures live in `tests/fixtures/diskutil/<machine>/` (`list.plist`,
//! `info-diskN.plist`); `tests/fixtures/diskutil/SOURCES.md` names the repository,
//! path and commit of each and what it shows. Machines under `derived/` are real
//! captures with a few keys edited to show a case no public capture shows (an SD
//! slot, a locked card, a disk image, ...); SOURCES.md lists every edit.

use std::path::{Path, PathBuf};

use crate::flash_devices::{case, device, judge, Case};
use benchboot::devices::macos;
use benchboot::devices::{Device, Limits, Refusal, Transport};

fn fixture(machine: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/diskutil")
        .join(machine)
}

fn read(machine: &str, file: &str) -> Vec<u8> {
    let path = fixture(machine).join(file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Stands in for `diskutil` on `machine`: answers `list -plist` and `info -plist diskN`
/// from its captures and fails on anything else, so asking about a disk the machine
/// has no capture of (a partition, an APFS container) fails the scan.
fn diskutil(machine: &str) -> impl Fn(&[&str]) -> std::io::Result<Vec<u8>> + '_ {
    move |args: &[&str]| {
        let file = match args {
            ["list", "-plist"] => "list.plist".to_string(),
            ["info", "-plist", disk] => format!("info-{disk}.plist"),
            other => {
                return Err(std::io::Error::other(format!(
                    "unexpected diskutil {other:?}"
                )))
            }
        };
        std::fs::read(fixture(machine).join(&file))
            .map_err(|e| std::io::Error::other(format!("diskutil {args:?} on {machine}: {e}")))
    }
}

fn scan(machine: &str) -> Vec<Device> {
    macos::scan(&diskutil(machine)).unwrap_or_else(|e| panic!("{machine}: {e:#}"))
}

/// Every machine under `tests/fixtures/diskutil/`.
const MACHINES: &[&str] = &[
    "intel-macbook-usb-stick",
    "intel-macbook-usb-ide-adapter",
    "apple-silicon-usb-flash-disk",
    "derived/sd-slot-card",
    "derived/sd-slot-locked-card",
    "derived/sd-slot-empty",
    "derived/macbook-usb-sd-slot",
    "derived/usb-1tb-card",
    "derived/usb-card-apfs",
    "derived/disk-image",
];

/// The macOS side of `flash_devices::CASES`, case by case where macOS has the notion.
const CASES: &[Case] = &[
    // The system disk (real): an Intel MacBook's 512 GB NVMe SSD, whose APFS container
    // disk1 holds / (a sealed snapshot), /System/Volumes/Data and /System/Volumes/VM
    // (where macOS keeps its swap files). Fixed, holds the system, and too large.
    case(
        "intel-macbook-usb-stick",
        "disk0",
        false,
        &["not-removable", "holds-system", "too-large"],
        &[],
    ),
    case(
        "intel-macbook-usb-stick",
        "disk0",
        true,
        &["not-removable", "holds-system"],
        &[],
    ),
    // A USB stick (real), its unpartitioned FAT filesystem mounted: unmounted first.
    case(
        "intel-macbook-usb-stick",
        "disk2",
        false,
        &[],
        &["/Volumes/NO NAME"],
    ),
    // A 128 GB mSATA SSD in a USB-IDE adapter (real), its partition mounted at
    // /Volumes/PC: "Removable Media: Fixed", so a fixed disk, not a card (Linux: the
    // 2 TB USB disk).
    case(
        "intel-macbook-usb-ide-adapter",
        "disk2",
        false,
        &["not-removable"],
        &[],
    ),
    case(
        "intel-macbook-usb-ide-adapter",
        "disk0",
        false,
        &["not-removable", "holds-system", "too-large"],
        &[],
    ),
    // A USB flash disk on an Apple silicon Mac (real), its FAT partition mounted.
    case(
        "apple-silicon-usb-flash-disk",
        "disk4",
        false,
        &[],
        &["/Volumes/NO NAME"],
    ),
    // Derived: a card in the built-in SDXC slot ("Secure Digital", internal): the slot
    // counts as removable (Linux: the mmc card).
    case(
        "derived/sd-slot-card",
        "disk4",
        false,
        &[],
        &["/Volumes/NO NAME"],
    ),
    // Derived: the same card with its lock switch on (Linux: the read-only card).
    case(
        "derived/sd-slot-locked-card",
        "disk4",
        false,
        &["read-only"],
        &[],
    ),
    // Derived: the slot reporting no medium (size 0).
    case("derived/sd-slot-empty", "disk4", false, &["no-medium"], &[]),
    // Derived: an older MacBook's slot, a reader on the internal USB bus.
    case(
        "derived/macbook-usb-sd-slot",
        "disk2",
        false,
        &[],
        &["/Volumes/NO NAME"],
    ),
    case(
        "derived/macbook-usb-sd-slot",
        "disk0",
        false,
        &["not-removable", "holds-system", "too-large"],
        &[],
    ),
    // Derived: a 1 TB card behind USB: too large unless asked (Linux: the 1 TB card).
    case("derived/usb-1tb-card", "disk4", false, &["too-large"], &[]),
    case(
        "derived/usb-1tb-card",
        "disk4",
        true,
        &[],
        &["/Volumes/NO NAME"],
    ),
    // Derived: a card formatted APFS, its volume mounted from the synthesized container
    // disk5 whose physical store is the card's disk4s1. Linux refuses a card mounted
    // through a holder (dm-crypt); on macOS the container's volume is the card's own:
    // `diskutil unmountDisk disk4` unmounts it, so the card is accepted.
    case(
        "derived/usb-card-apfs",
        "disk4",
        false,
        &[],
        &["/Volumes/NO NAME"],
    ),
    // Derived: an attached disk image (Linux: the loop device); read-only too.
    case(
        "derived/disk-image",
        "disk3",
        false,
        &["virtual", "read-only"],
        &[],
    ),
];

#[test]
fn every_unsafe_device_is_refused_and_safe_ones_accepted() {
    let failures = judge(CASES, &scan);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_listed_fixture_device_has_a_case() {
    for machine in MACHINES {
        for d in scan(machine).iter().filter(|d| d.is_candidate()) {
            assert!(
                CASES.iter().any(|c| c.tree == *machine && c.name == d.name),
                "{machine}/{} has no case",
                d.name
            );
        }
    }
    // ...and every machine on disk is in MACHINES.
    let root = fixture("");
    let mut on_disk = Vec::new();
    for dir in [root.clone(), root.join("derived")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.join("list.plist").is_file() {
                let rel = path.strip_prefix(&root).unwrap();
                on_disk.push(rel.to_str().unwrap().replace('\\', "/"));
            }
        }
    }
    on_disk.sort();
    let mut listed: Vec<String> = MACHINES.iter().map(|m| m.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
}

/// One of each refusal; the `match` stops compiling when a variant is added, so the
/// new one must be added here and given a macOS case (or an explanation).
fn every_refusal() -> Vec<Refusal> {
    let all = vec![
        Refusal::NoMedium,
        Refusal::Virtual { backing_file: None },
        Refusal::NotRemovable {
            transport: Transport::Usb,
        },
        Refusal::HoldsSystem { uses: vec![] },
        Refusal::MountedThroughHolder {
            mount_point: PathBuf::new(),
            holder: String::new(),
            part: String::new(),
        },
        Refusal::Held {
            holder: String::new(),
            part: String::new(),
            backing_file: None,
        },
        Refusal::SpannedVolume {
            mount_point: PathBuf::new(),
            disks: Vec::new(),
        },
        Refusal::ReadOnly,
        Refusal::TooLarge {
            size_bytes: 0,
            limit_bytes: 0,
        },
    ];
    for r in &all {
        match r {
            Refusal::NoMedium
            | Refusal::Virtual { .. }
            | Refusal::NotRemovable { .. }
            | Refusal::HoldsSystem { .. }
            | Refusal::MountedThroughHolder { .. }
            | Refusal::Held { .. }
            | Refusal::SpannedVolume { .. }
            | Refusal::ReadOnly
            | Refusal::TooLarge { .. } => {}
        }
    }
    all
}

#[test]
fn every_refusal_has_a_macos_case() {
    let exercised = |code: &str| CASES.iter().any(|c| c.refused.contains(&code));
    for r in every_refusal() {
        let code = r.code();
        if code == "mounted-through-holder" || code == "held" {
            // macOS has no device-mapper, LVM, md or loop holders (`holders` stays
            // empty: a mounted disk image is a disk of its own). What stacks on a card is
            // an APFS container (or a CoreStorage volume) whose physical store is one
            // of its partitions; `macos::scan` counts the container's volumes as the
            // card's own mounts (no `through`), because `diskutil unmountDisk` on the
            // card unmounts them too. So no macOS device can get this refusal; the
            // card formatted APFS shows the stacked mount, unmounted instead.
            assert!(!exercised(code), "{code} on macOS");
            let all = scan("derived/usb-card-apfs");
            assert!(all
                .iter()
                .flat_map(|d| &d.mounts)
                .all(|m| m.through.is_none()));
            assert!(all.iter().all(|d| d.holders.is_empty()));
            continue;
        }
        if code == "spanned-volume" {
            // A Windows volume over several disks (host/src/devices/windows.rs):
            // macOS's scan never fills `spans`.
            assert!(!exercised(code), "{code} on macOS");
            continue;
        }
        assert!(exercised(code), "no macOS case is refused with {code}");
    }
}

#[test]
fn list_parses_disks_volumes_and_apfs_stores() {
    let list = read("intel-macbook-usb-stick", "list.plist");
    let disks = macos::parse_list(&list).unwrap();
    let ids: Vec<&str> = disks.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, ["disk0", "disk1", "disk2"]);
    assert_eq!(disks[0].size, 512_110_190_592);
    // The capture writes the stick's size as <real>1.5682240512E10</real>.
    assert_eq!(disks[2].size, 15_682_240_512);
    assert_eq!(disks[1].physical_stores, ["disk0s2"]);
    assert!(disks[1]
        .volumes
        .contains(&macos::Volume::new("disk1s5s1".into(), Some("/".into()))));
    assert_eq!(
        disks[2].volumes,
        [macos::Volume::new(
            "disk2".into(),
            Some("/Volumes/NO NAME".into())
        )]
    );
}

#[test]
fn info_parses_the_fields_the_rules_need() {
    let usb = macos::parse_info(&read("intel-macbook-usb-stick", "info-disk2.plist")).unwrap();
    assert_eq!(usb.node, "/dev/disk2");
    assert_eq!(usb.size, 15_682_240_512);
    assert!(usb.removable && !usb.internal && usb.writable);
    assert_eq!(usb.bus, "USB");
    assert_eq!(usb.media_name.as_deref(), Some("Cruzer Fit"));
    let ssd = macos::parse_info(&read("intel-macbook-usb-stick", "info-disk0.plist")).unwrap();
    assert!(ssd.internal && !ssd.removable);
    assert_eq!(macos::transport(&ssd.bus), Transport::Nvme);
    let fixed =
        macos::parse_info(&read("intel-macbook-usb-ide-adapter", "info-disk2.plist")).unwrap();
    assert!(!fixed.removable && !fixed.internal && fixed.writable);
    assert_eq!(macos::transport("Secure Digital"), Transport::Mmc);
    assert_eq!(macos::transport("Apple Fabric"), Transport::Nvme);
    assert_eq!(macos::transport("Disk Image"), Transport::Virtual);
    // What DiskArbitration called a disk image's protocol on macOS 10.14 (etcher #2661).
    assert_eq!(macos::transport("Virtual Interface"), Transport::Virtual);
}

#[test]
fn the_system_ssd_is_refused_and_the_usb_stick_accepted() {
    let devices = scan("intel-macbook-usb-stick");
    let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
    // disk1 is the synthesized APFS container: its volumes count on disk0.
    assert_eq!(names, ["disk0", "disk2"]);
    let limits = Limits::new(false);
    let ssd = devices[0].verdict(&limits);
    let codes: Vec<&str> = ssd.refusals.iter().map(Refusal::code).collect();
    assert_eq!(codes, ["not-removable", "holds-system", "too-large"]);
    let Refusal::HoldsSystem { uses } = &ssd.refusals[1] else {
        panic!("{:?}", ssd.refusals)
    };
    assert!(uses.contains(&"/ on disk1s5s1".to_string()), "{uses:?}");
    // Where macOS keeps its swap files (Linux: swap on the system disk).
    assert!(
        uses.contains(&"/System/Volumes/VM on disk1s4".to_string()),
        "{uses:?}"
    );
    let stick = devices[1].verdict(&limits);
    assert!(stick.writable(), "{:?}", stick.refusals);
    assert_eq!(stick.unmount, [PathBuf::from("/Volumes/NO NAME")]);
    assert_eq!(devices[1].transport, Transport::Usb);
    assert_eq!(
        devices[1].describe(),
        "/dev/disk2 (Cruzer Fit, usb, 14.6 GiB)"
    );
}

#[test]
fn readers_and_images_get_the_right_transport() {
    let slot = scan("derived/sd-slot-card");
    let slot = device(&slot, "disk4");
    assert_eq!((slot.transport, slot.removable), (Transport::Mmc, true));
    assert_eq!(
        slot.describe(),
        "/dev/disk4 (Built In SDXC Reader, mmc, 7.6 GiB)"
    );
    // The older MacBook slot: internal, but on USB, and removable.
    let old = scan("derived/macbook-usb-sd-slot");
    let old = device(&old, "disk2");
    assert_eq!((old.transport, old.removable), (Transport::Usb, true));
    // An empty slot is still listed, so that `flash` can say "insert the card".
    let empty = scan("derived/sd-slot-empty");
    assert!(device(&empty, "disk4").is_candidate());
    // A disk image is not a candidate.
    let image = scan("derived/disk-image");
    let image = device(&image, "disk3");
    assert_eq!(image.transport, Transport::Virtual);
    assert!(!image.is_candidate() && image.read_only);
    // A fixed USB disk is listed but not removable.
    let ide = scan("intel-macbook-usb-ide-adapter");
    let ide = device(&ide, "disk2");
    assert!(!ide.removable && ide.is_candidate());
    assert_eq!(ide.partitions.len(), 1);
}

#[test]
fn a_card_formatted_apfs_carries_its_containers_mounts() {
    let all = scan("derived/usb-card-apfs");
    let names: Vec<&str> = all.iter().map(|d| d.name.as_str()).collect();
    // disk5 is the container on the card's disk4s1: not a device of its own (and no
    // `diskutil info disk5` is asked for: the stand-in would fail).
    assert_eq!(names, ["disk4"]);
    let card = &all[0];
    assert_eq!(card.mounts.len(), 1);
    assert_eq!(card.mounts[0].device, "disk5s1");
    assert_eq!(card.mounts[0].mount_point, Path::new("/Volumes/NO NAME"));
}

#[test]
fn diskutil_errors_and_garbage_are_errors() {
    let error = r#"<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict><key>Error</key><true/>
<key>ErrorMessage</key><string>Could not find disk: disk9</string></dict></plist>"#;
    let e = macos::parse_info(error.as_bytes()).unwrap_err();
    assert!(e.to_string().contains("Could not find disk: disk9"), "{e}");
    assert!(macos::parse_list(b"not a plist").is_err());
    assert!(macos::scan(&|_| Err(std::io::Error::other("no diskutil"))).is_err());
}
