//! `windows.rs` over answers built as Windows lays them out, over published drive lists
//! rebuilt as IOCTL answers, and over wine 8.0's own answers recorded here.

use super::*;
use crate::devices::{Limits, Refusal};
use benchboot_windisk::RawDisk;

const GIB: u64 = 1 << 30;

/// A `STORAGE_DEVICE_DESCRIPTOR` as Windows lays it out (module doc): the header, then
/// the vendor, product, revision and serial strings, each NUL-terminated, their offsets
/// in the header (0 for a string left out).
fn descriptor(bus: BusType, removable: bool, strings: [Option<&str>; 4]) -> Vec<u8> {
    let mut b = vec![0u8; 40];
    b[0..4].copy_from_slice(&40u32.to_le_bytes());
    b[10] = u8::from(removable);
    b[28..32].copy_from_slice(&bus.0.to_le_bytes());
    for (i, s) in strings.iter().enumerate() {
        if let Some(s) = s {
            let at = b.len() as u32;
            b[12 + 4 * i..16 + 4 * i].copy_from_slice(&at.to_le_bytes());
            b.extend_from_slice(s.as_bytes());
            b.push(0);
        }
    }
    let size = b.len() as u32;
    b[4..8].copy_from_slice(&size.to_le_bytes());
    b
}

/// A `DISK_GEOMETRY_EX`: media type, sector size and size in bytes.
fn geometry(media_type: u32, sector: u32, size: u64) -> Vec<u8> {
    let mut b = vec![0u8; 40];
    b[8..12].copy_from_slice(&media_type.to_le_bytes());
    b[20..24].copy_from_slice(&sector.to_le_bytes());
    b[24..32].copy_from_slice(&(size as i64).to_le_bytes());
    b
}

/// A `VOLUME_DISK_EXTENTS` over `(disk, start, length)` runs.
fn extents(runs: &[(u32, u64, u64)]) -> Vec<u8> {
    let mut b = vec![0u8; 8];
    b[0..4].copy_from_slice(&(runs.len() as u32).to_le_bytes());
    for &(disk, start, len) in runs {
        let mut e = vec![0u8; 24];
        e[0..4].copy_from_slice(&disk.to_le_bytes());
        e[8..16].copy_from_slice(&(start as i64).to_le_bytes());
        e[16..24].copy_from_slice(&(len as i64).to_le_bytes());
        b.extend(e);
    }
    b
}

fn volume(guid: &str, paths: &[&str], fs: &str, runs: &[(u32, u64, u64)]) -> RawVolume {
    RawVolume {
        name: format!(r"\\?\Volume{{{guid}}}\"),
        paths: paths.iter().map(|p| (*p).to_owned()).collect(),
        filesystem: Some(fs.into()),
        extents: Some(extents(runs)),
        errors: Vec::new(),
    }
}

fn disk(number: u32, desc: Vec<u8>, geo: Option<Vec<u8>>, writable: bool) -> RawDisk {
    RawDisk {
        number,
        descriptor: Some(desc),
        geometry: geo,
        writable: Some(writable),
        errors: Vec::new(),
    }
}

#[test]
fn a_descriptor_decodes_with_its_strings() {
    let b = descriptor(
        BusType::USB,
        true,
        [
            Some("Generic-"),
            Some("SD/MMC          "),
            Some("1.00"),
            None,
        ],
    );
    let d = parse_descriptor(&b).unwrap();
    assert_eq!(
        d,
        Descriptor {
            device_type: 0,
            removable: true,
            bus: BusType::USB,
            vendor: Some("Generic-".into()),
            product: Some("SD/MMC".into()),
            revision: Some("1.00".into()),
            serial: None,
        }
    );
    assert_eq!(d.bus.name(), "Usb");
    assert_eq!(BusType(0x11).name(), "Nvme");
    assert_eq!(BusType(0x42).name(), "bus type 0x42");
    assert_eq!(BusType::FILE_BACKED_VIRTUAL.transport(), Transport::Virtual);
    assert_eq!(BusType::SD.transport(), Transport::Mmc);
    assert_eq!(BusType::SATA.transport(), Transport::Ata);
}

#[test]
fn hostile_answers_never_panic() {
    assert!(parse_descriptor(&[0; 35]).unwrap_err().contains("35 bytes"));
    assert!(parse_geometry(&[0; 31]).unwrap_err().contains("31 bytes"));
    // Offsets past the end, a string without its NUL, bytes that are not ASCII.
    let mut b = descriptor(BusType::USB, false, [Some("abc"), None, None, None]);
    b[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
    b.pop();
    b.push(0xff);
    let d = parse_descriptor(&b).unwrap();
    assert_eq!(d.vendor.as_deref(), Some("abc\u{fffd}"));
    assert_eq!(d.product, None);
    // A count of extents far past what the answer holds: those that fit.
    let mut e = extents(&[(3, 1 << 20, 1 << 30)]);
    e[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(
        parse_extents(&e),
        [Extent {
            disk: 3,
            start: 1 << 20,
            length: 1 << 30
        }]
    );
    // A negative size reads as 0.
    let g = parse_geometry(&geometry(11, 512, u64::MAX)).unwrap();
    assert_eq!(g.size_bytes, 0);
    // Random answers of every length: no panic, whatever they decode to.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for n in 0..4000usize {
        let b: Vec<u8> = (0..n % 300)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let _ = parse_descriptor(&b);
        let _ = parse_geometry(&b);
        let _ = parse_extents(&b);
    }
}

/// A machine with a system NVMe disk, a card in a USB reader, a VHD, a USB hard disk, an
/// empty reader, a locked card in the laptop's SD slot and a volume spanning two disks.
fn machine() -> Snapshot {
    let nvme = descriptor(
        BusType::NVME,
        false,
        [None, Some("Samsung SSD 970 EVO Plus 1TB"), None, None],
    );
    Snapshot {
        disks: vec![
            disk(0, nvme, Some(geometry(12, 512, 1_000_204_886_016)), true),
            disk(
                1,
                descriptor(
                    BusType::USB,
                    true,
                    [Some("Generic-"), Some("SD/MMC"), None, None],
                ),
                Some(geometry(11, 512, 31_914_983_424)),
                true,
            ),
            disk(
                2,
                descriptor(
                    BusType::FILE_BACKED_VIRTUAL,
                    false,
                    [Some("Msft"), Some("Virtual Disk"), None, None],
                ),
                Some(geometry(12, 512, GIB)),
                true,
            ),
            disk(
                3,
                descriptor(
                    BusType::USB,
                    false,
                    [Some("WD"), Some("Elements 2621"), None, None],
                ),
                Some(geometry(12, 512, 2_000_365_289_472)),
                true,
            ),
            RawDisk {
                number: 4,
                descriptor: Some(descriptor(
                    BusType::USB,
                    true,
                    [Some("Generic"), Some("STORAGE DEVICE"), None, None],
                )),
                geometry: None,
                writable: None,
                errors: vec![
                    "IOCTL_DISK_GET_DRIVE_GEOMETRY_EX: The device is not ready. (os error 21)"
                        .into(),
                ],
            },
            disk(
                5,
                descriptor(BusType::SD, true, [None, Some("SDXC Card"), None, None]),
                Some(geometry(11, 512, 63_864_569_856)),
                false,
            ),
            disk(
                6,
                descriptor(
                    BusType::USB,
                    true,
                    [Some("SanDisk"), Some("Cruzer"), None, None],
                ),
                Some(geometry(11, 512, 16 * GIB)),
                true,
            ),
            disk(
                7,
                descriptor(
                    BusType::USB,
                    true,
                    [Some("Kingston"), Some("DataTraveler"), None, None],
                ),
                Some(geometry(11, 512, 16 * GIB)),
                true,
            ),
        ],
        volumes: vec![
            volume("sys", &[r"C:\"], "NTFS", &[(0, 1 << 20, 900 * GIB)]),
            volume("boot", &[], "FAT32", &[(0, 0, 100 << 20)]),
            volume(
                "card",
                &[r"E:\", r"C:\mnt\card\"],
                "FAT32",
                &[(1, 4 << 20, 29 * GIB)],
            ),
            volume("vhd", &[r"F:\"], "NTFS", &[(2, 1 << 20, GIB - (1 << 20))]),
            volume(
                "span",
                &[r"G:\"],
                "NTFS",
                &[(6, 0, 8 * GIB), (7, 0, 8 * GIB)],
            ),
        ],
        windows_dir: Some(r"C:\WINDOWS".into()),
        page_files: Some(vec![r"C:\pagefile.sys".into()]),
        errors: Vec::new(),
        volumes_complete: true,
    }
}

#[test]
fn every_disk_with_its_verdict() {
    let (devices, notes) = scan(&machine());
    let limits = Limits::new(false);
    let codes = |n: usize| -> Vec<&'static str> {
        devices[n]
            .verdict(&limits)
            .refusals
            .iter()
            .map(Refusal::code)
            .collect()
    };
    assert_eq!(devices.len(), 8);
    let d = &devices[1];
    assert_eq!(d.path, PathBuf::from(r"\\.\PhysicalDrive1"));
    assert_eq!(
        d.describe(),
        r"\\.\PhysicalDrive1 (Generic- SD/MMC, usb, 29.7 GiB)"
    );
    assert_eq!((d.removable, d.read_only), (true, false));
    let v = d.verdict(&limits);
    assert!(v.writable(), "{:?}", v.refusals);
    // Both mount paths of the card's volume: dismounted before writing.
    let mut unmount = v.unmount.clone();
    unmount.sort();
    assert_eq!(
        unmount,
        [PathBuf::from(r"C:\mnt\card\"), PathBuf::from(r"E:\")]
    );
    assert_eq!(codes(0), ["not-removable", "holds-system", "too-large"]);
    let uses = devices[0].system_uses();
    assert!(
        uses.contains(&r"the page file C:\pagefile.sys".to_owned()),
        "{uses:?}"
    );
    assert!(
        uses.contains(&r"the Windows directory C:\WINDOWS".to_owned()),
        "{uses:?}"
    );
    assert_eq!(codes(2), ["virtual"]);
    assert!(!devices[2].is_candidate());
    assert_eq!(codes(3), ["not-removable", "too-large"]);
    assert_eq!(codes(4), ["no-medium"]);
    assert!(devices[4].is_candidate(), "an empty reader is listed");
    assert_eq!(codes(5), ["read-only"]);
    assert_eq!(devices[5].transport, Transport::Mmc);
    assert_eq!(codes(6), ["spanned-volume"]);
    assert_eq!(codes(7), ["spanned-volume"]);
    let span = devices[6].verdict(&limits).refusals[0].to_string();
    assert!(
        span.starts_with(r"G:\ is a volume spanning PhysicalDrive6, PhysicalDrive7"),
        "{span}"
    );
    assert_eq!(
        notes,
        ["PhysicalDrive4: IOCTL_DISK_GET_DRIVE_GEOMETRY_EX: The device is not ready. (os error 21)"]
    );
    // --allow-large lifts the size limit only.
    assert_eq!(
        devices[3]
            .verdict(&Limits::new(true))
            .refusals
            .iter()
            .map(Refusal::code)
            .collect::<Vec<_>>(),
        ["not-removable"]
    );
}

#[test]
fn the_system_disk_is_found_by_its_mount_path_in_any_case() {
    let mut m = machine();
    // Windows on D:, mounted under a folder of C: as well; the page file on the card's
    // volume through its folder mount.
    m.volumes[0].paths = vec![r"D:\".into()];
    m.volumes[3].paths = vec![r"c:\".into()];
    m.windows_dir = Some(r"d:/Windows".into());
    m.page_files = Some(vec![r"C:\MNT\CARD\pagefile.sys".into()]);
    let (devices, _) = scan(&m);
    assert_eq!(
        devices[0].system_uses(),
        [r"the Windows directory d:/Windows"]
    );
    assert_eq!(
        devices[1].system_uses(),
        [r"the page file C:\MNT\CARD\pagefile.sys"]
    );
    assert!(devices[2].system_uses().is_empty());
}

/// The machine wine 8.0 (Debian 8.0~repack-4) shows a Windows program, as recorded on
/// this project's build machine (2026-12-05, a program asking each IOCTL of
/// `\\.\PhysicalDrive0`): the descriptor's 40 bytes verbatim (wine's mountmgr.sys
/// `query_property`, "Faking StorageDeviceProperty data": BusTypeScsi, not removable,
/// no strings), a fixed disk of 10000 x 255 x 63 x 512 = 82,252,800,000 bytes,
/// `IOCTL_DISK_IS_WRITABLE` not supported (50), and C:'s extents with a count of 0.
fn wine_8() -> Snapshot {
    let descriptor: Vec<u8> = [
        0x28, 0, 0, 0, 0x28, 0, 0, 0, 0x07, 0, 0, 0, 0, 0, 0, 0, //
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0, //
        0, 0, 0, 0, 0, 0, 0, 0,
    ]
    .to_vec();
    Snapshot {
        disks: vec![RawDisk {
            number: 0,
            descriptor: Some(descriptor),
            geometry: Some(geometry(12, 512, 82_252_800_000)),
            writable: None,
            errors: vec![
                "IOCTL_DISK_IS_WRITABLE: The request is not supported. (os error 50)".into(),
            ],
        }],
        volumes: vec![RawVolume {
            name: r"\\?\Volume{00000000-0000-0000-0000-000000000043}\".into(),
            paths: vec![r"C:\".into()],
            filesystem: Some("NTFS".into()),
            extents: Some(vec![0; 32]),
            errors: Vec::new(),
        }],
        windows_dir: Some(r"C:\windows".into()),
        page_files: Some(Vec::new()),
        errors: Vec::new(),
        volumes_complete: true,
    }
}

#[test]
fn wine_shows_one_fixed_disk_and_it_is_refused() {
    let (devices, notes) = scan(&wine_8());
    assert_eq!(devices.len(), 1);
    let d = &devices[0];
    assert_eq!(d.describe(), r"\\.\PhysicalDrive0 (scsi, 76.6 GiB)");
    assert_eq!(
        (d.removable, d.read_only, d.size_bytes),
        (false, false, 82_252_800_000)
    );
    let v = d.verdict(&Limits::new(false));
    assert_eq!(
        v.refusals.iter().map(Refusal::code).collect::<Vec<_>>(),
        ["not-removable", "holds-system"]
    );
    assert!(
        v.refusals[1]
            .to_string()
            .contains(r"perhaps the Windows directory C:\windows: its volume names no disk"),
        "{}",
        v.refusals[1]
    );
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes[0].starts_with(
        r"perhaps the Windows directory C:\windows: its volume names no disk: every disk"
    ));
    assert_eq!(
        notes[1],
        "PhysicalDrive0: IOCTL_DISK_IS_WRITABLE: The request is not supported. (os error 50)"
    );
}

/// Drive lists published in public issues, rebuilt as the IOCTL answers they were
/// printed from (Ventoy2Disk's log prints each disk's `BusType` and `RemovableMedia`
/// from the STORAGE_DEVICE_DESCRIPTOR, its trimmed vendor and product strings, its
/// IOCTL_DISK_GET_LENGTH_INFO size, and each volume's disk extents):
///
/// - ventoy/Ventoy#2426 (Windows 11, Ventoy 1.0.91, 2023-06-11): C: on PhysicalDrive1,
///   an NVMe WDC PC SN530 of 256,060,514,304 bytes; PhysicalDrive0 a SATA Fanxiang S101
///   1TB of 1,024,209,543,168 bytes holding D:; PhysicalDrive2 a USB Kingston
///   DataTraveler 3.0, removable, of 61,991,813,632 bytes.
/// - ventoy/Ventoy#50 (Windows 10 18363, 2020-05-03): PhysicalDrive2's size query failed
///   with 21 (ERROR_NOT_READY: an empty card reader) while its volume D: exists with an
///   extent of 0 bytes; G:'s extents query failed with 50; PhysicalDrive1 a SATA
///   CT240BX500SSD1 of 240,057,409,536 bytes.
/// - ventoy/Ventoy#107 (Windows 8.1): PhysicalDrive5 a USB "Mass Storage Device",
///   removable, of 3,904,897,024 bytes; PhysicalDrive4 an ATA WDC WD30 EZRX-00MMMB0 of
///   3,000,592,982,016 bytes.
///
/// Ventoy's log gives no Windows directory: C:\Windows is assumed for #2426; #50 and
/// #107 put C: on a disk outside the excerpt (PhysicalDrive9 here).
#[test]
fn published_drive_lists_get_the_verdicts_imager_and_etcher_would() {
    let usb = |removable, vendor, product| {
        descriptor(
            BusType::USB,
            removable,
            [Some(vendor), Some(product), None, None],
        )
    };
    let fixed = |bus, product| descriptor(bus, false, [None, Some(product), None, None]);
    let snap = Snapshot {
        disks: vec![
            // ventoy/Ventoy#2426
            disk(0, fixed(BusType::SATA, "Fanxiang S101 1TB"), Some(geometry(12, 512, 1_024_209_543_168)), true),
            disk(1, fixed(BusType::NVME, "WDC PC SN530 SDBPMPZ-256G-1101"), Some(geometry(12, 512, 256_060_514_304)), true),
            disk(2, usb(true, "Kingston", "DataTraveler 3.0"), Some(geometry(11, 512, 61_991_813_632)), true),
            // ventoy/Ventoy#50
            RawDisk {
                number: 3,
                descriptor: Some(usb(true, "Generic-", "SD/MMC")),
                geometry: None,
                writable: None,
                errors: vec!["IOCTL_DISK_GET_DRIVE_GEOMETRY_EX: The device is not ready. (os error 21)".into()],
            },
            disk(4, fixed(BusType::SATA, "CT240BX500SSD1"), Some(geometry(12, 512, 240_057_409_536)), true),
            // ventoy/Ventoy#107
            disk(5, usb(true, "", "Mass Storage Device"), Some(geometry(11, 512, 3_904_897_024)), true),
            disk(6, fixed(BusType::ATA, "WDC WD30 EZRX-00MMMB0"), Some(geometry(12, 512, 3_000_592_982_016)), true),
        ],
        volumes: vec![
            volume("c", &[r"C:\"], "NTFS", &[(1, 148_702_756_864, 107_357_405_184)]),
            volume("d", &[r"D:\"], "NTFS", &[(0, 1_048_576, 1_024_201_850_880)]),
            volume("reader", &[r"H:\"], "", &[(3, 0, 0)]),
            RawVolume {
                name: r"\\?\Volume{g}\".into(),
                paths: vec![r"G:\".into()],
                filesystem: None,
                extents: None,
                errors: vec!["IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS: The request is not supported. (os error 50)".into()],
            },
        ],
        windows_dir: Some(r"C:\Windows".into()),
        page_files: Some(Vec::new()),
        errors: Vec::new(),
        volumes_complete: true,
    };
    let (devices, notes) = scan(&snap);
    let codes: Vec<Vec<&str>> = devices
        .iter()
        .map(|d| {
            d.verdict(&Limits::new(false))
                .refusals
                .iter()
                .map(Refusal::code)
                .collect()
        })
        .collect();
    assert_eq!(
        codes,
        [
            vec!["not-removable", "too-large"],
            vec!["not-removable", "holds-system"],
            vec![],
            vec!["no-medium"],
            vec!["not-removable"],
            vec![],
            vec!["not-removable", "too-large"],
        ]
    );
    assert_eq!(
        devices[2].describe(),
        r"\\.\PhysicalDrive2 (Kingston DataTraveler 3.0, usb, 57.7 GiB)"
    );
    assert_eq!(
        devices[5].describe(),
        r"\\.\PhysicalDrive5 (Mass Storage Device, usb, 3.6 GiB)"
    );
    // The empty reader's volume is still dismounted first.
    assert_eq!(
        devices[3].verdict(&Limits::new(false)).unmount,
        [PathBuf::from(r"H:\")]
    );
    assert_eq!(
        notes,
        [
            r"\\?\Volume{g}\: IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS: The request is not supported. (os error 50)",
            "PhysicalDrive3: IOCTL_DISK_GET_DRIVE_GEOMETRY_EX: The device is not ready. (os error 21)",
        ]
    );
}

/// What the rules cannot place refuses every disk: a page file named in another form or
/// on a drive with no volume, page files that could not be read, a volume list cut
/// short, the volume of a page file whose extents failed. A spanned volume mounted
/// nowhere is still refused on both disks.
#[test]
fn what_cannot_be_placed_refuses_every_disk() {
    let card = |m: &Snapshot| scan(m).0[1].verdict(&Limits::new(false));
    assert!(card(&machine()).writable());
    // Device-path forms of a page file on the card's E: land on the card.
    for form in [
        r"\\?\E:\pagefile.sys",
        r"\\.\e:\pagefile.sys",
        r"\DosDevices\E:\pagefile.sys",
    ] {
        let mut m = machine();
        m.page_files = Some(vec![form.into()]);
        let (devices, _) = scan(&m);
        assert_eq!(
            devices[1].system_uses(),
            [format!("the page file {form}")],
            "{form}"
        );
        assert!(
            devices[0]
                .system_uses()
                .iter()
                .all(|u| !u.contains("page file")),
            "{form}"
        );
    }
    let everywhere = |m: &Snapshot, what: &str| {
        let (devices, notes) = scan(m);
        for d in &devices {
            assert!(
                d.system_uses().iter().any(|u| u.starts_with(what)),
                "{}: {:?}",
                d.name,
                d.system_uses()
            );
        }
        assert!(notes.iter().any(|n| n.starts_with(what)), "{notes:?}");
    };
    let mut m = machine();
    m.page_files = Some(vec![r"Z:\pagefile.sys".into()]);
    everywhere(
        &m,
        r"perhaps the page file Z:\pagefile.sys: its volume names no disk",
    );
    let mut m = machine();
    m.page_files = None;
    everywhere(
        &m,
        "perhaps a page file: the registry's ExistingPageFiles could not be read",
    );
    let mut m = machine();
    m.volumes_complete = false;
    everywhere(&m, "perhaps the system: the list of volumes is not whole");
    let mut m = machine();
    m.volumes[2].extents = None;
    m.page_files = Some(vec![r"E:\pagefile.sys".into()]);
    everywhere(
        &m,
        r"perhaps the page file E:\pagefile.sys: its volume names no disk",
    );
    let mut m = machine();
    m.windows_dir = None;
    everywhere(
        &m,
        "perhaps the Windows directory: Windows did not say where",
    );
    // The span, unmounted.
    let mut m = machine();
    m.volumes[4].paths.clear();
    let (devices, _) = scan(&m);
    for d in &devices[6..8] {
        let codes: Vec<_> = d
            .verdict(&Limits::new(false))
            .refusals
            .iter()
            .map(Refusal::code)
            .collect();
        assert_eq!(codes, ["spanned-volume"], "{}", d.name);
    }
}

/// `--device` of `flash` and `probe` on Windows: a disk by number, by a drive letter or
/// a volume name on it; a spanned or unknown volume is an error; anything else a file.
#[test]
fn the_device_option_names_a_disk_by_number_letter_or_volume() {
    use crate::target_disk::find_windows_disk;
    let (devices, _) = scan(&machine());
    let name = |given: &str| {
        find_windows_disk("--device ", given, &devices)
            .unwrap_or_else(|e| panic!("{given}: {e:#}"))
            .map(|d| d.name)
    };
    for given in [
        r"\\.\PhysicalDrive1",
        "//./physicaldrive1",
        r"\\?\PHYSICALDRIVE1",
        "E:",
        r"e:\",
        r"\\.\E:",
        r"\\?\Volume{card}\",
    ] {
        assert_eq!(name(given).as_deref(), Some("PhysicalDrive1"), "{given}");
    }
    assert_eq!(name("C:").as_deref(), Some("PhysicalDrive0"));
    assert_eq!(name("F:").as_deref(), Some("PhysicalDrive2"));
    // Files, relative or not, a folder mount path, names without the device prefix:
    // not disk names.
    for given in [
        "card.img",
        r"C:\images\card.img",
        "D:/cards/x.img",
        r"C:\mnt\card\",
        "PhysicalDrive1",
        "PhysicalDrive1.img",
        "Volume{card}",
        "",
        ":",
        "1:",
        "E:E:",
    ] {
        assert_eq!(name(given), None, "{given}");
    }
    let err = |given: &str| {
        format!(
            "{:#}",
            find_windows_disk("--device ", given, &devices).unwrap_err()
        )
    };
    assert_eq!(
        err("G:"),
        r"--device G:: that volume spans \\.\PhysicalDrive6, \\.\PhysicalDrive7: name one disk (\\.\PhysicalDriveN)"
    );
    assert!(
        err("Z:").starts_with("--device Z:: no disk this machine lists holds that volume"),
        "{}",
        err("Z:")
    );
    // A volume is named whole: a part of its name is no volume, never another's.
    for partial in [r"\\?\Volume{car}\", r"\\?\Volume{", r"\\?\Volume{cardx}"] {
        assert!(
            err(partial).ends_with(
                "no disk this machine lists holds that volume (a network drive, a DVD?); \
                 `benchboot devices` shows the disks and their volumes"
            ),
            "{partial}: {}",
            err(partial)
        );
    }
    for missing in [
        r"\\.\PhysicalDrive9",
        r"\\.\PhysicalDriveX",
        r"\\.\PhysicalDrive",
        r"\\.\PhysicalDrive99999999999999999999",
    ] {
        assert!(
            err(missing).ends_with(
                "not a disk this machine lists; `benchboot devices` shows the candidates"
            ),
            "{missing}: {}",
            err(missing)
        );
    }
    // The card by its letter passes flash's rules; the system disk by its letter does not.
    let limits = Limits::new(false);
    let by = |l: &str| find_windows_disk("", l, &devices).unwrap().unwrap();
    assert!(by("E:").verdict(&limits).writable());
    let refused = crate::flash::check_device(&by("C:"), &limits).unwrap_err();
    assert!(
        refused
            .to_string()
            .starts_with(r"refusing to write \\.\PhysicalDrive0"),
        "{refused}"
    );
}

/// What a failed open of a disk means, by Windows' error code.
#[test]
fn a_failed_open_says_what_to_do() {
    use crate::target_disk::windows_open_hint;
    let hint = |code| windows_open_hint(&std::io::Error::from_raw_os_error(code), "flash");
    assert!(hint(5).contains("Run as administrator"), "{}", hint(5));
    assert!(
        hint(5).ends_with("run benchboot flash there"),
        "{}",
        hint(5)
    );
    assert!(hint(32).starts_with("another program has it open"));
    assert!(hint(19).contains("write-protected"));
    assert!(hint(21).contains("no card"));
    assert_eq!(hint(1117), "check the card and the reader");
}

/// Between the question and the write, the disk number must still name the disk that
/// was judged: a card swapped for another disk, or gone, stops the write.
#[test]
fn a_disk_that_changed_after_the_question_is_not_written() {
    use crate::target_disk::still_the_same;
    let (before, _) = scan(&machine());
    let card = &before[1];
    assert!(still_the_same(card, Some(card)).is_ok());
    // Another disk took the number: another size and model.
    let mut m = machine();
    m.disks[1] = RawDisk {
        number: 1,
        ..m.disks[6].clone()
    };
    let (after, _) = scan(&m);
    let e = still_the_same(card, after.iter().find(|d| d.path == card.path)).unwrap_err();
    assert_eq!(
        e.to_string(),
        r"\\.\PhysicalDrive1 changed since it was checked: it was \\.\PhysicalDrive1 (Generic- SD/MMC, usb, 29.7 GiB), it is now \\.\PhysicalDrive1 (SanDisk Cruzer, usb, 16 GiB); nothing was written: check `benchboot devices` and run the command again"
    );
    // The same disk, now with the page file on it.
    let mut m = machine();
    m.page_files = Some(vec![r"E:\pagefile.sys".into()]);
    let (after, _) = scan(&m);
    assert!(still_the_same(card, Some(&after[1])).is_err());
    let e = still_the_same(card, None).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("is gone since it was checked (unplugged?); nothing was written"),
        "{e}"
    );
}
