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
        page_files: vec![r"C:\pagefile.sys".into()],
        errors: Vec::new(),
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
        uses.contains(&r"swap on page file C:\pagefile.sys".to_owned()),
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
    m.page_files = vec![r"C:\MNT\CARD\pagefile.sys".into()];
    let (devices, _) = scan(&m);
    assert_eq!(
        devices[0].system_uses(),
        [r"the Windows directory d:/Windows"]
    );
    assert_eq!(
        devices[1].system_uses(),
        [r"swap on page file C:\MNT\CARD\pagefile.sys"]
    );
    assert!(devices[2].system_uses().is_empty());
}
