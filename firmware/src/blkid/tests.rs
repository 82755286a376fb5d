//! Tests of the filesystem probe: labels and types of images made by mkfs (skipped when
//! the tool is missing) and of hand-built superblocks.
use super::*;
use std::process::Command;

/// Runs `tool args` (looked up on PATH, then in /usr/sbin and /sbin). `None`, with the
/// reason printed, when the tool is not installed; a failing run panics.
fn run_tool(tool: &str, args: &[&str]) -> Option<()> {
    let found = std::iter::once(PathBuf::from(tool))
        .chain(["/usr/sbin", "/sbin"].map(|d| Path::new(d).join(tool)))
        .find_map(|t| match Command::new(&t).args(args).output() {
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            other => Some(other),
        });
    let Some(out) = found else {
        println!("skipped: {tool} is not installed (apt-get install e2fsprogs dosfstools fdisk)");
        return None;
    };
    let out = out.unwrap_or_else(|e| panic!("{tool}: {e}"));
    assert!(
        out.status.success(),
        "{tool} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(())
}

/// A zeroed file of `mib` MiB in `dir`.
fn blank(dir: &Path, name: &str, mib: u64) -> PathBuf {
    let path = dir.join(name);
    File::create(&path).unwrap().set_len(mib << 20).unwrap();
    path
}

fn probe_file(path: &Path) -> Option<FsProbe> {
    probe_filesystem(&head(path).unwrap())
}

#[test]
fn a_missing_tool_skips() {
    assert_eq!(run_tool("benchboot-no-such-mkfs", &[]), None);
}

#[test]
fn crc32_check_value() {
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32(b""), 0);
}

#[test]
fn ext_labels_from_mkfs() {
    let dir = tempfile::tempdir().unwrap();
    for (kind, label) in [("ext4", "BBEXT4"), ("ext2", "sixteen-bytes-ok")] {
        let img = blank(dir.path(), kind, 8);
        let path = img.to_str().unwrap();
        if run_tool("mkfs.ext4", &["-q", "-F", "-t", kind, "-L", label, path]).is_none() {
            return;
        }
        assert_eq!(
            probe_file(&img),
            Some(FsProbe {
                kind: "ext",
                label: Some(label.into())
            })
        );
    }
    let img = blank(dir.path(), "nolabel", 8);
    run_tool("mkfs.ext4", &["-q", "-F", img.to_str().unwrap()]).unwrap();
    assert_eq!(
        probe_file(&img),
        Some(FsProbe {
            kind: "ext",
            label: None
        })
    );
}

#[test]
fn fat_labels_from_mkfs() {
    let dir = tempfile::tempdir().unwrap();
    for (bits, mib, label) in [
        ("12", 2, "BBFAT12"),
        ("16", 16, "BBFAT16"),
        ("32", 64, "BB FAT 32"),
    ] {
        let img = blank(dir.path(), &format!("fat{bits}"), mib);
        let path = img.to_str().unwrap();
        if run_tool("mkfs.vfat", &["-F", bits, "-n", label, path]).is_none() {
            return;
        }
        let buf = head(&img).unwrap();
        assert_eq!(le16(&buf, 0x16) == 0, bits == "32", "FAT{bits} layout");
        assert_eq!(
            probe_filesystem(&buf),
            Some(FsProbe {
                kind: "vfat",
                label: Some(label.into())
            }),
            "FAT{bits}"
        );
        // Without -n, mkfs.vfat writes "NO NAME": no label.
        run_tool("mkfs.vfat", &["-F", bits, path]).unwrap();
        assert_eq!(
            probe_file(&img),
            Some(FsProbe {
                kind: "vfat",
                label: None
            }),
            "FAT{bits} without label"
        );
    }
}

#[test]
fn a_reformatted_device_shows_its_new_filesystem() {
    let dir = tempfile::tempdir().unwrap();
    let img = blank(dir.path(), "img", 64);
    let path = img.to_str().unwrap();
    if run_tool("mkfs.ext4", &["-q", "-F", "-L", "OLDEXT", path]).is_none()
        || run_tool("mkfs.vfat", &["-F", "32", "-n", "NEWFAT", path]).is_none()
    {
        return;
    }
    assert_eq!(probe_file(&img).unwrap().label.as_deref(), Some("NEWFAT"));
    run_tool("mkfs.ext4", &["-q", "-F", "-L", "NEWEXT", path]).unwrap();
    assert_eq!(probe_file(&img).unwrap().label.as_deref(), Some("NEWEXT"));
}

/// An ext superblock at 1024 with `name` as `s_volume_name`.
fn ext_image(name: &[u8]) -> Vec<u8> {
    let mut d = vec![0u8; 4096];
    d[1024 + 56..1024 + 58].copy_from_slice(&0xEF53u16.to_le_bytes());
    d[1024 + 120..1024 + 120 + name.len()].copy_from_slice(name);
    d
}

/// A FAT32 boot sector (mkfs.fat's jump and BPB) labelled `label` (11 bytes).
fn fat32_image(signature: u8, label: &[u8; 11]) -> Vec<u8> {
    let mut d = vec![0u8; 4096];
    d[..3].copy_from_slice(&[0xEB, 0x58, 0x90]);
    d[0x0B..0x0D].copy_from_slice(&512u16.to_le_bytes());
    d[0x0D] = 8;
    d[0x0E] = 32;
    d[0x10] = 2;
    d[0x15] = 0xF8;
    d[0x24..0x28].copy_from_slice(&1000u32.to_le_bytes());
    d[0x42] = signature;
    d[0x47..0x52].copy_from_slice(label);
    d[510..512].copy_from_slice(&[0x55, 0xAA]);
    d
}

#[test]
fn hand_built_superblocks() {
    // 16 bytes, no NUL: the whole field is the name.
    assert_eq!(
        probe_filesystem(&ext_image(b"0123456789abcdef"))
            .unwrap()
            .label
            .as_deref(),
        Some("0123456789abcdef")
    );
    assert_eq!(probe_filesystem(&ext_image(b"")).unwrap().label, None);
    let mut wrong_magic = ext_image(b"X");
    wrong_magic[1024 + 56] = 0x54;
    assert_eq!(probe_filesystem(&wrong_magic), None);
    // Too short to hold a superblock.
    assert_eq!(probe_filesystem(&ext_image(b"X")[..1100]), None);

    assert_eq!(
        probe_filesystem(&fat32_image(0x29, b"CARD       "))
            .unwrap()
            .label
            .as_deref(),
        Some("CARD")
    );
    assert_eq!(
        probe_filesystem(&fat32_image(0x29, b"NO NAME    "))
            .unwrap()
            .label,
        None
    );
    // Extended boot signature 0x28: no label field.
    assert_eq!(
        probe_filesystem(&fat32_image(0x28, b"CARD       "))
            .unwrap()
            .label,
        None
    );
    // An MBR: 0x55AA but no BPB.
    let mut mbr = vec![0u8; 512];
    mbr[0x1BE] = 0x80;
    mbr[510..512].copy_from_slice(&[0x55, 0xAA]);
    assert_eq!(probe_filesystem(&mbr), None);
    let mut bad_sector = fat32_image(0x29, b"CARD       ");
    bad_sector[0x0B..0x0D].copy_from_slice(&500u16.to_le_bytes());
    assert_eq!(probe_filesystem(&bad_sector), None);
}

/// A disk head with a primary GPT (128 entries at LBA 2) holding `parts`
/// (entry index, name) for `sector`-byte sectors.
fn gpt_disk(sector: usize, parts: &[(usize, &str)]) -> Vec<u8> {
    let mut d = vec![0u8; PROBE_BYTES];
    let array = 2 * sector;
    for &(i, name) in parts {
        let e = &mut d[array + i * 128..array + (i + 1) * 128];
        e[..16].copy_from_slice(&[0xAF; 16]); // type GUID
        e[16] = i as u8 + 1; // unique GUID
        e[32..40].copy_from_slice(&(2048u64 * (i as u64 + 1)).to_le_bytes());
        for (k, u) in name.encode_utf16().enumerate() {
            e[56 + 2 * k..58 + 2 * k].copy_from_slice(&u.to_le_bytes());
        }
    }
    let array_crc = crc32(&d[array..array + 128 * 128]);
    let h = &mut d[sector..sector + 92];
    h[..8].copy_from_slice(b"EFI PART");
    h[8..12].copy_from_slice(&0x0001_0000u32.to_le_bytes());
    h[12..16].copy_from_slice(&92u32.to_le_bytes());
    h[24..32].copy_from_slice(&1u64.to_le_bytes());
    h[72..80].copy_from_slice(&2u64.to_le_bytes());
    h[80..84].copy_from_slice(&128u32.to_le_bytes());
    h[84..88].copy_from_slice(&128u32.to_le_bytes());
    h[88..92].copy_from_slice(&array_crc.to_le_bytes());
    let crc = crc32(h);
    h[16..20].copy_from_slice(&crc.to_le_bytes());
    d
}

#[test]
fn hand_built_gpt() {
    let long = "abcdefghijklmnopqrstuvwxyz0123456789"; // 36 units: no NUL after it
    let names = [(0, "boot"), (2, "bénch ✓"), (127, long)];
    for sector in [512, 4096] {
        let disk = gpt_disk(sector, &names);
        let parts = gpt_partitions(&disk, sector).unwrap();
        let got: Vec<(u32, &str)> = parts.iter().map(|p| (p.number, p.name.as_str())).collect();
        assert_eq!(
            got,
            [(1, "boot"), (3, "bénch ✓"), (128, long)],
            "{sector} B sectors"
        );
        // Read with the wrong sector size, there is no header at LBA 1.
        let other = if sector == 512 { 4096 } else { 512 };
        assert_eq!(gpt_partitions(&disk, other), None);
    }
    let good = gpt_disk(512, &names);
    let mut bad_header = good.clone();
    bad_header[512 + 80] = 127; // entry count changed, header CRC not
    assert_eq!(gpt_partitions(&bad_header, 512), None);
    let mut bad_entry = good.clone();
    bad_entry[1024 + 56] = b'B'; // a name changed, array CRC not
    assert_eq!(gpt_partitions(&bad_entry, 512), None);
    // The entry array must lie in what was read.
    assert_eq!(gpt_partitions(&good[..1024 + 4096], 512), None);
    assert_eq!(gpt_partitions(&[], 512), None);
}

#[test]
fn gpt_names_from_sfdisk() {
    let dir = tempfile::tempdir().unwrap();
    let img = blank(dir.path(), "disk", 8);
    let script = dir.path().join("script");
    std::fs::write(
        &script,
        "label: gpt\nstart=2048, size=2048, name=\"boot\"\nsize=4096, name=\"bénch data\"\n",
    )
    .unwrap();
    let sh = format!("sfdisk --quiet {} < {}", img.display(), script.display());
    if run_tool("sfdisk", &["--version"]).is_none() {
        return;
    }
    run_tool("sh", &["-c", &sh]).unwrap();
    let parts = gpt_partitions(&head(&img).unwrap(), 512).unwrap();
    let got: Vec<(u32, &str)> = parts.iter().map(|p| (p.number, p.name.as_str())).collect();
    assert_eq!(got, [(1, "boot"), (2, "bénch data")]);
}

/// A fake `/sys/class/block` + `/dev`: disk `sda` (GPT: sda1 "bench", sda2 "other")
/// whose partitions hold ext filesystems labelled `BBUSB` and `SECOND`, and a whole
/// disk `sdb` with a FAT filesystem labelled `label_b`.
fn fake_system(root: &Path, label_b: &[u8; 11]) -> (PathBuf, PathBuf) {
    let (sys, dev) = (root.join("sys/class/block"), root.join("dev"));
    std::fs::create_dir_all(&dev).unwrap();
    let sda = sys.join("sda");
    std::fs::create_dir_all(sda.join("queue")).unwrap();
    std::fs::write(sda.join("queue/logical_block_size"), "512\n").unwrap();
    std::fs::write(sda.join("size"), "16384\n").unwrap();
    std::fs::write(
        sda.join("uevent"),
        "MAJOR=8\nMINOR=0\nDEVNAME=sda\nDEVTYPE=disk\n",
    )
    .unwrap();
    std::fs::write(
        dev.join("sda"),
        gpt_disk(512, &[(0, "bench"), (1, "other")]),
    )
    .unwrap();
    for (n, label) in [(1, "BBUSB"), (2, "SECOND")] {
        let part = sda.join(format!("sda{n}"));
        std::fs::create_dir_all(&part).unwrap();
        std::fs::write(part.join("partition"), format!("{n}\n")).unwrap();
        std::fs::write(part.join("size"), "2048\n").unwrap();
        std::os::unix::fs::symlink(&part, sys.join(format!("sda{n}"))).unwrap();
        std::fs::write(dev.join(format!("sda{n}")), ext_image(label.as_bytes())).unwrap();
    }
    let sdb = sys.join("sdb");
    std::fs::create_dir_all(&sdb).unwrap();
    std::fs::write(sdb.join("size"), "8192\n").unwrap();
    std::fs::write(dev.join("sdb"), fat32_image(0x29, label_b)).unwrap();
    // An empty card reader: size 0, no medium to read.
    std::fs::create_dir_all(sys.join("sdc")).unwrap();
    std::fs::write(sys.join("sdc/size"), "0\n").unwrap();
    (sys, dev)
}

#[test]
fn labels_found_through_sysfs() {
    let root = tempfile::tempdir().unwrap();
    let (sys, dev) = fake_system(root.path(), b"CARD       ");
    let find = |r| find(&sys, &dev, r);
    assert_eq!(find(DeviceRef::Label("BBUSB")), [dev.join("sda1")]);
    assert_eq!(find(DeviceRef::Label("SECOND")), [dev.join("sda2")]);
    assert_eq!(find(DeviceRef::Label("CARD")), [dev.join("sdb")]);
    assert_eq!(find(DeviceRef::PartLabel("bench")), [dev.join("sda1")]);
    assert_eq!(find(DeviceRef::PartLabel("other")), [dev.join("sda2")]);
    assert!(
        find(DeviceRef::Label("bench")).is_empty(),
        "a partition name is no filesystem label"
    );
    assert!(find(DeviceRef::PartLabel("BBUSB")).is_empty());
    assert_eq!(
        find(DeviceRef::Path("/dev/sdz9")),
        [PathBuf::from("/dev/sdz9")]
    );
    assert_eq!(
        wait_for(
            &sys,
            &dev,
            DeviceRef::PartLabel("bench"),
            "mmcblk0",
            Duration::ZERO
        ),
        Ok(dev.join("sda1"))
    );
}

#[test]
fn missing_and_ambiguous_labels_are_errors() {
    let root = tempfile::tempdir().unwrap();
    let (sys, dev) = fake_system(root.path(), b"BBUSB      ");
    let start = Instant::now();
    let err = wait_for(
        &sys,
        &dev,
        DeviceRef::Label("NOPE"),
        "mmcblk0",
        Duration::from_millis(250),
    )
    .unwrap_err();
    assert!(start.elapsed() >= Duration::from_millis(250), "waited");
    assert_eq!(err, "no block device has LABEL=NOPE (waited 250 ms)");
    let err = wait_for(
        &sys,
        &dev,
        DeviceRef::Label("BBUSB"),
        "mmcblk0",
        Duration::ZERO,
    )
    .unwrap_err();
    assert!(
        err.contains("LABEL=BBUSB is ambiguous") && err.contains("sda1") && err.contains("sdb"),
        "{err}"
    );
}

#[test]
fn a_label_that_appears_late_is_waited_for() {
    let root = tempfile::tempdir().unwrap();
    let (sys, dev) = fake_system(root.path(), b"CARD       ");
    let late = sys.join("sdd");
    let writer = {
        let (late, dev) = (late.clone(), dev.clone());
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            std::fs::write(dev.join("sdd"), ext_image(b"LATE")).unwrap();
            std::fs::create_dir_all(&late).unwrap();
            std::fs::write(late.join("size"), "64\n").unwrap();
        })
    };
    let got = wait_for(
        &sys,
        &dev,
        DeviceRef::Label("LATE"),
        "mmcblk0",
        Duration::from_secs(10),
    );
    writer.join().unwrap();
    assert_eq!(got, Ok(dev.join("sdd")));
}

#[test]
fn buses_from_real_sysfs_paths() {
    let cases = [
        (
            "/sys/devices/platform/soc/3f980000.usb/usb1/1-1/1-1:1.0/host0/target0:0:0/0:0:0:0/block/sda",
            Some(Bus::Usb),
        ),
        (
            "/sys/devices/platform/soc/1c18000.sata/ata1/host0/target0:0:0/0:0:0:0/block/sda",
            Some(Bus::Sata),
        ),
        (
            "/sys/devices/pci0000:00/0000:00:1f.2/ata3/host2/target2:0:0/2:0:0:0/block/sdb",
            Some(Bus::Sata),
        ),
        (
            "/sys/devices/platform/a003c00.virtio_mmio/virtio1/block/vdb",
            Some(Bus::Virtio),
        ),
        // virtio-scsi: the disk hangs off a virtio device too.
        (
            "/sys/devices/pci0000:00/0000:00:02.0/virtio0/host0/target0:0:0/0:0:0:0/block/sda",
            Some(Bus::Virtio),
        ),
        // A USB-SATA bridge is a USB disk.
        (
            "/sys/devices/platform/soc/3f980000.usb/usb1/1-1/1-1:1.0/host0/target0:0:0/0:0:0:0/ata1/block/sda",
            Some(Bus::Usb),
        ),
        // The SD card: on no bus of these.
        (
            "/sys/devices/platform/soc/3f202000.mmc/mmc_host/mmc0/mmc0:aaaa/block/mmcblk0",
            None,
        ),
        // Names that only start like a bus: `usb` with no number, `ata_piix`.
        ("/sys/devices/platform/usb/block/sdz", None),
        ("/sys/devices/pci0000:00/ata_piix/block/sdy", None),
        ("", None),
    ];
    for (path, bus) in cases {
        assert_eq!(bus_of_sysfs_path(path), bus, "{path}");
    }
}

/// A disk `name` at `devpath` (under `root/sys/devices/`) with `parts` partitions,
/// linked from `root/sys/class/block` as the kernel does, and its `/dev` nodes.
fn sysfs_disk(root: &Path, devpath: &str, name: &str, parts: u32) {
    let class = root.join("sys/class/block");
    let dev = root.join("dev");
    std::fs::create_dir_all(&class).unwrap();
    std::fs::create_dir_all(&dev).unwrap();
    let disk = root
        .join("sys/devices")
        .join(devpath)
        .join("block")
        .join(name);
    std::fs::create_dir_all(&disk).unwrap();
    std::fs::write(disk.join("size"), "2048\n").unwrap();
    std::fs::write(
        disk.join("uevent"),
        format!("DEVNAME={name}\nDEVTYPE=disk\n"),
    )
    .unwrap();
    std::os::unix::fs::symlink(&disk, class.join(name)).unwrap();
    std::fs::write(dev.join(name), vec![0u8; 4096]).unwrap();
    for n in 1..=parts {
        let part_name = if name.ends_with(|c: char| c.is_ascii_digit()) {
            format!("{name}p{n}")
        } else {
            format!("{name}{n}")
        };
        let part = disk.join(&part_name);
        std::fs::create_dir_all(&part).unwrap();
        std::fs::write(part.join("size"), "64\n").unwrap();
        std::fs::write(part.join("partition"), format!("{n}\n")).unwrap();
        std::os::unix::fs::symlink(&part, class.join(&part_name)).unwrap();
        std::fs::write(dev.join(&part_name), vec![0u8; 4096]).unwrap();
    }
}

/// QEMU virt's disks (vda the card, vdb and vdc test disks), a USB disk and the card
/// of a real board (mmcblk0, on no bus).
fn bus_system(root: &Path) -> (PathBuf, PathBuf) {
    sysfs_disk(root, "platform/a003e00.virtio_mmio/virtio0", "vda", 2);
    sysfs_disk(root, "platform/a003c00.virtio_mmio/virtio1", "vdb", 0);
    sysfs_disk(root, "platform/a003a00.virtio_mmio/virtio2", "vdc", 1);
    sysfs_disk(
        root,
        "platform/soc/3f980000.usb/usb1/1-1/1-1:1.0/host0/target0:0:0/0:0:0:0",
        "sdb",
        1,
    );
    sysfs_disk(
        root,
        "platform/soc/3f980000.usb/usb1/1-2/1-2:1.0/host1/target1:0:0/1:0:0:0",
        "sda",
        0,
    );
    sysfs_disk(
        root,
        "platform/soc/3f202000.mmc/mmc_host/mmc0/mmc0:aaaa",
        "mmcblk0",
        2,
    );
    (root.join("sys/class/block"), root.join("dev"))
}

#[test]
fn disk_bus_follows_the_class_link() {
    let root = tempfile::tempdir().unwrap();
    let (sys, _) = bus_system(root.path());
    assert_eq!(disk_bus(&sys.join("vdb")), Some(Bus::Virtio));
    assert_eq!(disk_bus(&sys.join("sda")), Some(Bus::Usb));
    assert_eq!(disk_bus(&sys.join("mmcblk0")), None);
    // A partition sits under its disk: the same bus.
    assert_eq!(disk_bus(&sys.join("vda2")), Some(Bus::Virtio));
    assert_eq!(disk_bus(&sys.join("nothing")), None, "no such entry");
}

#[test]
fn whole_disks_by_bus_skip_the_boot_disk() {
    let root = tempfile::tempdir().unwrap();
    let (sys, dev) = bus_system(root.path());
    // find lists every whole disk on the bus, partitions never.
    let mut virtio = find(&sys, &dev, DeviceRef::WholeDisk(Some(Bus::Virtio)));
    virtio.sort();
    assert_eq!(virtio, [dev.join("vda"), dev.join("vdb"), dev.join("vdc")]);
    assert!(find(&sys, &dev, DeviceRef::WholeDisk(None)).is_empty());

    let on_bus = |bus, boot| locate(&sys, &dev, DeviceRef::WholeDisk(Some(bus)), boot);
    // QEMU booted from vda: the first other virtio disk.
    assert_eq!(on_bus(Bus::Virtio, "vda"), Ok(Some(dev.join("vdb"))));
    // Booted from elsewhere, vda is the first in kernel-name order.
    assert_eq!(on_bus(Bus::Virtio, "mmcblk0"), Ok(Some(dev.join("vda"))));
    // sda sorts before sdb whatever the order of the USB ports.
    assert_eq!(on_bus(Bus::Usb, "mmcblk0"), Ok(Some(dev.join("sda"))));
    // Booted from a USB disk: never that one.
    assert_eq!(on_bus(Bus::Usb, "sda"), Ok(Some(dev.join("sdb"))));
    assert_eq!(on_bus(Bus::Sata, "mmcblk0"), Ok(None));
    assert!(locate(&sys, &dev, DeviceRef::WholeDisk(None), "vda")
        .unwrap_err()
        .contains("BUS=? names no bus"),);
    let err = wait_for(
        &sys,
        &dev,
        DeviceRef::WholeDisk(Some(Bus::Sata)),
        "mmcblk0",
        Duration::from_millis(120),
    )
    .unwrap_err();
    assert_eq!(
        err,
        "no whole disk on the sata bus besides the boot disk mmcblk0 (waited 120 ms)"
    );
}

#[test]
fn the_only_disk_on_a_bus_is_the_boot_disk() {
    let root = tempfile::tempdir().unwrap();
    sysfs_disk(
        root.path(),
        "platform/a003e00.virtio_mmio/virtio0",
        "vda",
        2,
    );
    let (sys, dev) = (root.path().join("sys/class/block"), root.path().join("dev"));
    assert_eq!(
        locate(&sys, &dev, DeviceRef::WholeDisk(Some(Bus::Virtio)), "vda"),
        Ok(None)
    );
}

#[test]
fn kernel_name_order() {
    let mut names = ["sdaa", "sdb", "mmcblk10", "sda", "mmcblk2"];
    names.sort_by(|a, b| kernel_order(a, b));
    assert_eq!(names, ["sda", "sdb", "sdaa", "mmcblk2", "mmcblk10"]);
}

#[test]
fn the_disk_holding_a_partition() {
    let root = tempfile::tempdir().unwrap();
    let (sys, _) = bus_system(root.path());
    // Through sysfs.
    assert_eq!(disk_of(&sys, "vda2"), "vda");
    assert_eq!(disk_of(&sys, "mmcblk0p2"), "mmcblk0");
    assert_eq!(disk_of(&sys, "sdb1"), "sdb");
    assert_eq!(disk_of(&sys, "vdb"), "vdb");
    assert_eq!(disk_of(&sys, "mmcblk0"), "mmcblk0");
    // No sysfs entry: the kernel's naming rule.
    let none = root.path().join("none");
    assert_eq!(disk_of(&none, "vda2"), "vda");
    assert_eq!(disk_of(&none, "mmcblk0p2"), "mmcblk0");
    assert_eq!(disk_of(&none, "nvme0n1p1"), "nvme0n1");
    assert_eq!(disk_of(&none, "sda12"), "sda");
    assert_eq!(disk_of(&none, "sda"), "sda");
}

/// Writes an MBR with disk signature `sig` (bytes 440..444) and the 55 AA mark into the
/// fake device node `dev/<name>`.
fn write_signature(dev: &Path, name: &str, sig: u32) {
    let mut sector0 = vec![0u8; 4096];
    sector0[440..444].copy_from_slice(&sig.to_le_bytes());
    sector0[510] = 0x55;
    sector0[511] = 0xaa;
    std::fs::write(dev.join(name), sector0).unwrap();
}

#[test]
fn the_boot_card_is_found_by_its_signature_not_its_name() {
    let root = tempfile::tempdir().unwrap();
    let (sys, dev) = bus_system(root.path());
    // A Pi 4 whose card came up as mmcblk1: add it, with the image's signature.
    sysfs_disk(
        root.path(),
        "platform/emmc2bus/fe340000.mmc/mmc_host/mmc1/mmc1:aaaa",
        "mmcblk1",
        2,
    );
    write_signature(&dev, "mmcblk1", 0xdead_beef);
    write_signature(&dev, "sda", 0x0bad_cafe);
    let seen = whole_disk_signatures(&sys, &dev);
    let names: Vec<&str> = seen.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        ["sda", "sdb", "vda", "vdb", "vdc", "mmcblk0", "mmcblk1"]
    );
    assert_eq!(seen[0].signature, Ok(Some(0x0bad_cafe)));
    assert_eq!(seen[1].signature, Ok(None), "zeros: no MBR");
    assert_eq!(
        wait_for_signature(&sys, &dev, 0xdead_beef, Duration::ZERO),
        Ok("mmcblk1".to_owned())
    );
    // A USB stick flashed with the same image: refused at once, naming both.
    write_signature(&dev, "sda", 0xdead_beef);
    let started = Instant::now();
    let err = wait_for_signature(&sys, &dev, 0xdead_beef, Duration::from_secs(5)).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "no wait on ambiguity"
    );
    assert!(err.to_string().contains("sda, mmcblk1"), "{err}");
    // Nowhere: after the wait, what was seen.
    let err = wait_for_signature(&sys, &dev, 0x1234_5678, Duration::from_millis(150)).unwrap_err();
    assert!(matches!(err, BootDiskError::NotFound { .. }), "{err}");
    assert!(err.to_string().contains("mmcblk1 0xdeadbeef"), "{err}");
}
