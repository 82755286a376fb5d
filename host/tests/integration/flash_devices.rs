//! Flash safety against fake sysfs/proc trees (`tests/fixtures/sysfs/`, built by its
//! `regenerate.sh`): every unsafe device is refused with the right reasons, the safe
//! ones are accepted with the right mount points to unmount.

use std::path::{Path, PathBuf};

use benchboot::devices::{self, Device, Limits, Refusal, Transport};
use benchboot::flash;

fn fixture(tree: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sysfs")
        .join(tree)
}

fn scan(tree: &str) -> Vec<Device> {
    devices::scan_linux(&fixture(tree)).expect("fixture scans")
}

pub fn device<'a>(all: &'a [Device], name: &str) -> &'a Device {
    all.iter()
        .find(|d| d.name == name)
        .unwrap_or_else(|| panic!("{name} in fixture"))
}

/// One device of a fixture tree (Linux: a sysfs tree; macOS: one Mac's `diskutil`
/// captures) and what the rules must say about it.
pub struct Case {
    pub tree: &'static str,
    pub name: &'static str,
    pub allow_large: bool,
    /// Refusal codes, in order; empty: accepted.
    pub refused: &'static [&'static str],
    /// Mount points unmounted before writing, when accepted.
    pub unmount: &'static [&'static str],
}

pub const fn case(
    tree: &'static str,
    name: &'static str,
    allow_large: bool,
    refused: &'static [&'static str],
    unmount: &'static [&'static str],
) -> Case {
    Case {
        tree,
        name,
        allow_large,
        refused,
        unmount,
    }
}

const CASES: &[Case] = &[
    // The system disk: fixed, holds /, /boot/efi and swap, and is 477 GiB.
    case(
        "desktop",
        "nvme0n1",
        false,
        &["not-removable", "holds-system", "too-large"],
        &[],
    ),
    case(
        "desktop",
        "nvme0n1",
        true,
        &["not-removable", "holds-system"],
        &[],
    ),
    // A card in a USB reader.
    case("desktop", "sdb", false, &[], &[]),
    // An mmc card: removable=0 in sysfs, but mmc counts as removable.
    case("desktop", "mmcblk0", false, &[], &[]),
    // A mounted card: its own partitions are unmounted (deepest first, then in order).
    case(
        "desktop",
        "sdc",
        false,
        &[],
        &["/media/x", "/media/my card"],
    ),
    // A read-only card (lock switch).
    case("desktop", "sdd", false, &["read-only"], &[]),
    // A 2 TB USB disk: fixed and too large; --allow-large lifts only the size.
    case(
        "desktop",
        "sde",
        false,
        &["not-removable", "too-large"],
        &[],
    ),
    case("desktop", "sde", true, &["not-removable"], &[]),
    // A 1 TB card: too large unless asked.
    case("desktop", "sdh", false, &["too-large"], &[]),
    case("desktop", "sdh", true, &[], &[]),
    // A card whose partition is mounted through dm-crypt: not ours to unmount.
    case("desktop", "sdf", false, &["mounted-through-holder"], &[]),
    // A card holding an active swap file.
    case("desktop", "sdg", false, &["holds-system"], &[]),
    // A virtual block device (loop).
    case("desktop", "loop1", false, &["virtual"], &[]),
    // A card holding disk images: one backs loop2, mounted at /mnt/inner; a removed one
    // still backs loop3. Its own /media/imgs cannot be unmounted under them.
    case(
        "desktop",
        "sdi",
        false,
        &["mounted-through-holder", "held"],
        &[],
    ),
    // A card whose partition loop4 reads directly.
    case("desktop", "sdj", false, &["held"], &[]),
    // A Pi booted from its card: / and /boot/firmware on mmcblk0.
    case("card-root", "mmcblk0", false, &["holds-system"], &[]),
    // ...and a card in a USB reader on that Pi, mounted at /media/x.
    case("card-root", "sda", false, &[], &["/media/x"]),
];

#[test]
fn every_unsafe_device_is_refused_and_safe_ones_accepted() {
    let failures = judge(CASES, &scan);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Each case's device from `scan(tree)`, judged by the rules and by
/// `flash::check_device`: what differs from the case, one line each.
pub fn judge(cases: &[Case], scan: &dyn Fn(&str) -> Vec<Device>) -> Vec<String> {
    let mut failures = Vec::new();
    for &Case {
        tree,
        name,
        allow_large,
        refused: want,
        unmount,
    } in cases
    {
        let all = scan(tree);
        let d = device(&all, name);
        let limits = Limits::new(allow_large);
        let v = d.verdict(&limits);
        let got: Vec<&str> = v.refusals.iter().map(Refusal::code).collect();
        if got != want {
            failures.push(format!(
                "{tree}/{name} allow_large={allow_large}: {got:?}, want {want:?}"
            ));
        }
        match flash::check_device(d, &limits) {
            Ok(to_unmount) => {
                let want: Vec<PathBuf> = unmount.iter().map(PathBuf::from).collect();
                if !got.is_empty() || to_unmount != want {
                    failures.push(format!("{tree}/{name}: accepted, unmount {to_unmount:?}"));
                }
            }
            Err(refused) => {
                let text = refused.to_string();
                // The error names the device and lists every reason.
                if !text.contains(&format!("/dev/{name}")) || refused.refusals != v.refusals {
                    failures.push(format!("{tree}/{name}: {text}"));
                }
                for r in &v.refusals {
                    if !text.contains(&r.to_string()) {
                        failures.push(format!("{tree}/{name}: `{r}` missing from {text}"));
                    }
                }
            }
        }
    }
    failures
}

#[test]
fn every_listed_fixture_device_has_a_case() {
    for tree in ["desktop", "card-root"] {
        for d in scan(tree).iter().filter(|d| d.is_candidate()) {
            assert!(
                CASES.iter().any(|c| c.tree == tree && c.name == d.name),
                "{tree}/{} has no case",
                d.name
            );
        }
    }
}

#[test]
fn reasons_name_what_to_do() {
    let all = scan("desktop");
    let text = |name: &str| {
        flash::check_device(device(&all, name), &Limits::new(false))
            .unwrap_err()
            .to_string()
    };
    let system = text("nvme0n1");
    assert!(system.starts_with(
        "refusing to write /dev/nvme0n1 (Samsung SSD 970 EVO Plus 500GB, nvme, 476.9 GiB):"
    ));
    assert!(system.contains("/ on nvme0n1p2"), "{system}");
    assert!(system.contains("/boot/efi on nvme0n1p1"), "{system}");
    assert!(system.contains("swap on nvme0n1p3"), "{system}");
    assert!(system.contains("put the card in a USB reader"), "{system}");
    assert!(text("sdd").contains("lock switch"));
    assert!(text("sde").contains("pass --allow-large"));
    let luks = text("sdf");
    assert!(
        luks.contains("/media/secret is mounted through dm-0, which sits on sdf1"),
        "{luks}"
    );
    assert!(luks.contains("cryptsetup close"), "{luks}");
    assert!(text("sdg").contains("swap on /media/swapcard/swapfile"));
    // Loop devices stack on the card holding their backing file (or device).
    let images = text("sdi");
    assert!(
        images.contains(
            "/mnt/inner is mounted through loop2, which sits on sdi1: unmount it and detach \
             loop2 (`losetup -d /dev/loop2`) first"
        ),
        "{images}"
    );
    assert!(
        images.contains(
            "loop3 is a loop device over /media/imgs/old.img (deleted), a file on sdi1: \
             detach loop3 (`losetup -d /dev/loop3`) first"
        ),
        "{images}"
    );
    assert!(
        text("sdj").contains(
            "loop4 is a loop device over sdj1: detach loop4 (`losetup -d /dev/loop4`) first"
        ),
        "{}",
        text("sdj")
    );
    // A loop device is refused by name of its backing file, with each command's way out.
    let loop1 = flash::check_device(device(&all, "loop1"), &Limits::new(false)).unwrap_err();
    assert_eq!(
        loop1.to_string(),
        "refusing to write /dev/loop1 (virtual, 100 MiB):\n  - a loop device over \
         /home/me/qemu.img, not a card; to write that image file, detach the loop device \
         first (`losetup -d`) and pass --device /home/me/qemu.img"
    );
    let virt = &loop1.refusals[0];
    assert_eq!(
        virt.in_words(devices::Use::Probe),
        "a loop device over /home/me/qemu.img, not a card; pass --allow-virtual to probe it \
         anyway (a test of the probe itself: a file cannot be fake)"
    );
    assert_eq!(
        virt.in_words(devices::Use::PrepareDisk),
        "a loop device over /home/me/qemu.img, not a test disk; to prepare that image file, \
         detach the loop device first (`losetup -d`) and run `benchboot prepare-disk \
         /home/me/qemu.img`"
    );
    let pi = scan("card-root");
    let pi = flash::check_device(device(&pi, "mmcblk0"), &Limits::new(false)).unwrap_err();
    assert_eq!(
        pi.refusals,
        vec![Refusal::HoldsSystem {
            uses: vec![
                "/ on mmcblk0p2".into(),
                "/boot/firmware on mmcblk0p1".into(),
                "swap on /var/swap".into()
            ]
        }]
    );
}

#[test]
fn sysfs_fields_are_read() {
    let all = scan("desktop");
    let sdb = device(&all, "sdb");
    assert_eq!(sdb.path, Path::new("/dev/sdb"));
    assert_eq!(sdb.dev.as_deref(), Some("8:16"));
    assert_eq!(sdb.size_bytes, 62_333_952 * 512);
    assert_eq!(sdb.logical_block_size, 512);
    assert_eq!(sdb.transport, Transport::Usb);
    assert_eq!(sdb.vendor.as_deref(), Some("Generic"));
    assert_eq!(sdb.model.as_deref(), Some("STORAGE DEVICE"));
    assert!(sdb.removable && !sdb.read_only);
    assert_eq!(sdb.partitions.len(), 1);
    assert_eq!(sdb.partitions[0].dev.as_deref(), Some("8:17"));
    let mmc = device(&all, "mmcblk0");
    assert_eq!(
        (mmc.transport, mmc.model.as_deref()),
        (Transport::Mmc, Some("SN64G"))
    );
    // A card on the host's own mmc bus shows its registers (a USB reader's does not).
    let card = mmc.card.as_deref().expect("the card's registers");
    assert!(
        card.contains("SanDisk") && card.contains("SN64G") && card.contains("2022-11"),
        "{card}"
    );
    assert!(sdb.card.is_none());
    let table = benchboot::devices::to_table(&all, &benchboot::devices::Limits::new(false));
    assert!(
        table.contains("/dev/mmcblk0: the card's registers: ")
            && table.contains("benchboot probe /dev/mmcblk0"),
        "{table}"
    );
    assert_eq!(device(&all, "nvme0n1").transport, Transport::Nvme);
    assert_eq!(device(&all, "loop1").transport, Transport::Virtual);
    assert!(device(&all, "sdd").read_only);
    let sdc = device(&all, "sdc");
    assert_eq!(sdc.mounts.len(), 2);
    assert_eq!(sdc.mounts[1].mount_point, Path::new("/media/my card"));
    assert_eq!(sdc.mounts[1].fstype, "ext4");
    // Empty loop devices and device-mapper nodes are not candidates.
    let listed: Vec<&str> = all
        .iter()
        .filter(|d| d.is_candidate())
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(
        listed,
        ["mmcblk0", "nvme0n1", "sdb", "sdc", "sdd", "sde", "sdf", "sdg", "sdh", "sdi", "sdj"]
    );
    let pi = scan("card-root");
    assert_eq!(device(&pi, "sda").transport, Transport::Usb);
    assert_eq!(device(&pi, "mmcblk0").transport, Transport::Mmc);
}

#[test]
fn transports_from_sysfs_paths() {
    let cases = [
        (
            "pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block/sdb",
            Transport::Usb,
        ),
        (
            "platform/soc/20980000.usb/usb1/1-1/1-1:1.0/host0/target0:0:0/0:0:0:0/block/sda",
            Transport::Usb,
        ),
        (
            "platform/soc/20202000.mmc/mmc_host/mmc0/mmc0:aaaa/block/mmcblk0",
            Transport::Mmc,
        ),
        (
            "pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1",
            Transport::Nvme,
        ),
        (
            "pci0000:00/0000:00:02.0/virtio1/block/vda",
            Transport::Virtio,
        ),
        (
            "pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda",
            Transport::Ata,
        ),
        (
            "pci0000:00/0000:00:10.0/host2/target2:0:0/2:0:0:0/block/sda",
            Transport::Scsi,
        ),
        ("virtual/block/loop0", Transport::Virtual),
        ("", Transport::Unknown),
    ];
    for (path, want) in cases {
        assert_eq!(Transport::from_sysfs_path(path), want, "{path}");
    }
}

#[test]
fn mountinfo_and_swaps_parse() {
    let m = devices::parse_mountinfo(
        "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n\
         415 28 8:34 / /media/my\\040card rw,relatime shared:223 - ext4 /dev/sdc2 rw\n\
         garbage\n",
    );
    assert_eq!(m.len(), 2);
    assert_eq!(m[0].dev, "98:0");
    assert_eq!(m[0].mount_point, Path::new("/mnt2"));
    assert_eq!(
        (m[0].fstype.as_str(), m[0].source.as_str()),
        ("ext3", "/dev/root")
    );
    assert_eq!(m[1].mount_point, Path::new("/media/my card"));
    // The mounted folder and the filesystem's own options (an overlay's layers).
    assert_eq!(m[0].root, Path::new("/mnt1"));
    assert_eq!(m[0].options, "rw,errors=continue");
    let s = devices::parse_swaps(
        "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/sda3 partition\t8388604\t0\t-2\n",
    );
    assert_eq!(
        s,
        vec![devices::SwapArea {
            file: PathBuf::from("/dev/sda3"),
            kind: "partition".to_string()
        }]
    );
}

#[test]
fn json_lists_verdicts_with_codes() {
    let all: Vec<Device> = scan("desktop")
        .into_iter()
        .filter(Device::is_candidate)
        .collect();
    let json: serde_json::Value =
        serde_json::from_str(&devices::to_json(&all, &Limits::new(false))).unwrap();
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), all.len());
    let sdc = rows.iter().find(|r| r["name"] == "sdc").unwrap();
    assert_eq!(sdc["writable"], true);
    assert_eq!(sdc["transport"], "usb");
    assert_eq!(sdc["unmount"][1], "/media/my card");
    let nvme = rows.iter().find(|r| r["name"] == "nvme0n1").unwrap();
    assert_eq!(nvme["writable"], false);
    assert_eq!(nvme["refusals"][0]["reason"], "not-removable");
    let table = devices::to_table(&all, &Limits::new(false));
    assert!(table.contains("/dev/sdd: read-only"), "{table}");
}

#[test]
fn a_dry_run_on_a_mounted_card_shows_the_unmounts() {
    let all = scan("desktop");
    let sdc = device(&all, "sdc").clone();
    let unmount = flash::check_device(&sdc, &Limits::new(false)).unwrap();
    let plan = flash::Plan {
        image: PathBuf::from("target/images/rpi-zero-w.img"),
        image_bytes: 1 << 30,
        path: sdc.path.clone(),
        target: flash::Target::Disk {
            device: Box::new(sdc),
            unmount,
        },
        align: 512,
        write: flash::io::WriteOptions::default(),
        verify: true,
    };
    let text = plan.describe();
    assert!(
        text.contains("target   /dev/sdc (Mass Storage Device, usb, 14.8 GiB)\n"),
        "{text}"
    );
    assert!(
        text.contains("unmount  /media/x, /media/my card\n"),
        "{text}"
    );
    assert!(text.contains("1. 1 MiB of zeros at byte 0"), "{text}");
    assert!(
        text.contains("O_DIRECT aligned to 512 B; all-zero chunks written"),
        "{text}"
    );
}
