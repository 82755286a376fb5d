//! Unit tests of the image build: raw blobs, the rendered MBR, FAT and ext partitions
//! (ids, times, labels), the U-Boot card check, and what the initramfs of a shipped
//! board carries. The generated boot files and layouts are snapshot-tested in
//! `snapshot_tests.rs`.

use benchboot_plan::Filesystem;

use super::render::slice;
use super::*;
use crate::bootcheck::blobs::ZIMAGE_MAGIC;
use crate::bootcheck::tests::{egon, uimage};
use crate::bootcheck::{check_card, parse_extlinux, EXTLINUX_CONF, FDT_MAGIC, SUNXI_U_BOOT_OFFSET};
use benchboot_image::layout::{Layout, Role};

#[test]
fn raw_blobs_may_not_touch_the_mbr_each_other_or_the_first_partition() {
    let blob = |offset: u64, n: usize| RawBlob {
        offset,
        data: vec![1u8; n],
        source: "t".to_owned(),
    };
    check_raw_blobs(&[blob(8192, 554_172)], 4 << 20).unwrap();
    let err = check_raw_blobs(&[blob(0, 10)], 4 << 20)
        .unwrap_err()
        .to_string();
    assert!(err.contains("MBR"), "{err}");
    let err = check_raw_blobs(&[blob(8192, 1 << 20)], 1 << 20)
        .unwrap_err()
        .to_string();
    assert!(err.contains("first partition at 1048576"), "{err}");
    let err = check_raw_blobs(&[blob(131_072, 300_000), blob(393_216, 10)], 4 << 20)
        .unwrap_err()
        .to_string();
    assert!(err.contains("overlap"), "{err}");
}

#[test]
fn folders_start_with_dot_and_dotdot_as_fsck_wants() {
    let spec = layout::Spec {
        disk_mib: 128,
        boot_start_mib: 4,
        boot_mib: 40,
        results_mib: 8,
        journal_mib: 1,
        test_slot_mib: 8,
        tests: vec![Filesystem::Raw],
    };
    let l = layout::plan(&spec).unwrap();
    // Enough names that the FAT32 root (512-byte clusters) spans several clusters.
    let mut boot_files: Vec<BootFile> = (0..20)
        .map(|i| BootFile::new(format!("file-{i}.txt"), vec![b'x'; 10], "t"))
        .collect();
    boot_files.push(BootFile::new(EXTLINUX_CONF, b"default x\n".to_vec(), "t"));
    let contents = Contents {
        boot_files,
        raw_blobs: vec![],
        initramfs: vec![],
        radio: vec![],
        results_files: vec![BootFile::new(
            "plan.toml",
            b"extends = \"quick\"\n".to_vec(),
            "t",
        )],
    };
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("t.img");
    let stamp = Stamp::new("t", b"lock", crate::reproducible::DEFAULT_EPOCH);
    render(&img, &l, &contents, &stamp).unwrap();
    let boot = l.part(Role::Boot).unwrap();
    assert_eq!(
        read_fat_file(&img, boot, EXTLINUX_CONF).unwrap(),
        b"default x\n"
    );
    // The card carries its plan file on the results partition.
    let results = l.part(Role::Results).unwrap();
    assert_eq!(
        read_fat_file(&img, results, "plan.toml").unwrap(),
        b"extends = \"quick\"\n"
    );
    // The folder's first slots: `.` (itself), `..` (cluster 0: the root).
    let bytes = std::fs::read(&img).unwrap();
    let p = &bytes[boot.offset_bytes() as usize..];
    let le16 = |i: usize| u64::from(u16::from_le_bytes([p[i], p[i + 1]]));
    let le32 = |i: usize| u32::from_le_bytes([p[i], p[i + 1], p[i + 2], p[i + 3]]);
    let data = (le16(14) + u64::from(p[16]) * u64::from(le32(36))) * 512;
    let root = &p[(data + (u64::from(le32(44)) - 2) * 512) as usize..];
    let entry = root
        .chunks_exact(32)
        .find(|e| &e[..11] == b"EXTLINUX   ")
        .expect("extlinux/ in the root");
    let cluster = u64::from(u16::from_le_bytes([entry[26], entry[27]]));
    let slots = &p[(data + (cluster - 2) * 512) as usize..][..64];
    assert_eq!(&slots[..11], b".          ");
    assert_eq!(u16::from_le_bytes([slots[26], slots[27]]), cluster as u16);
    assert_eq!(&slots[32..43], b"..         ");
    assert_eq!(&slots[32 + 26..32 + 28], [0, 0]);
}

#[test]
fn render_small_image_and_read_back() {
    let spec = layout::Spec {
        disk_mib: 128,
        boot_start_mib: 4,
        boot_mib: 40,
        results_mib: 8,
        journal_mib: 1,
        test_slot_mib: 8,
        tests: vec![Filesystem::Vfat],
    };
    let l = layout::plan(&spec).unwrap();
    let contents = Contents {
        boot_files: vec![
            BootFile::new("config.txt", b"kernel=vmlinuz\n".to_vec(), "t"),
            BootFile::new(EXTLINUX_CONF, b"default x\n".to_vec(), "t"),
        ],
        raw_blobs: vec![RawBlob {
            offset: 8192,
            data: vec![0xa5; 1000],
            source: "t".into(),
        }],
        initramfs: vec![],
        radio: vec![],
        results_files: vec![],
    };
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("t.img");
    let stamp = Stamp::new("t", b"lock", crate::reproducible::DEFAULT_EPOCH);
    render(&img, &l, &contents, &stamp).unwrap();
    let boot = l.part(Role::Boot).unwrap();
    assert_eq!(
        read_fat_file(&img, boot, "config.txt").unwrap(),
        b"kernel=vmlinuz\n"
    );
    assert_eq!(
        read_fat_file(&img, boot, EXTLINUX_CONF).unwrap(),
        b"default x\n"
    );
    let bytes = std::fs::read(&img).unwrap();
    assert_eq!(&bytes[8191..8194], [0, 0xa5, 0xa5]);
    assert_eq!(&bytes[9191..9193], [0xa5, 0]);
    let mut f = std::fs::File::open(&img).unwrap();
    let mbr = mbrman::MBR::read_from(&mut f, 512).unwrap();
    assert_eq!(mbr[1].starting_lba, boot.start_lba);
    assert_eq!(mbr[1].sys, layout::TYPE_FAT32_LBA);
    assert_eq!(mbr[3].sys, layout::TYPE_EXTENDED_LBA);
    // The journal: p4, after the results partition, before the extended one.
    let j = l.part(Role::Journal).unwrap();
    assert_eq!(
        (mbr[4].sys, mbr[4].starting_lba, mbr[4].sectors),
        (0xda, j.start_lba, 2048)
    );
    assert_eq!(mbr[4].starting_lba + mbr[4].sectors, mbr[3].starting_lba);
    assert_eq!(mbr.logical_partitions.len(), 1);
    assert_eq!(
        mbr.logical_partitions[0].partition.starting_lba,
        l.part(Role::Test(Filesystem::Vfat)).unwrap().start_lba
    );
}

/// Renders a small image with a FAT32 boot partition (files in a sub-folder too),
/// a FAT results partition and ext4 + vfat test partitions.
fn render_small(dir: &Path, name: &str, stamp: &Stamp) -> (PathBuf, Layout) {
    let spec = layout::Spec {
        disk_mib: 128,
        boot_start_mib: 4,
        boot_mib: 40,
        results_mib: 8,
        journal_mib: 1,
        test_slot_mib: 8,
        tests: vec![Filesystem::Ext4, Filesystem::Vfat],
    };
    let l = layout::plan(&spec).unwrap();
    let contents = Contents {
        boot_files: vec![
            BootFile::new("b.txt", b"second".to_vec(), "t"),
            BootFile::new("a.txt", b"first".to_vec(), "t"),
            BootFile::new(EXTLINUX_CONF, b"default x\n".to_vec(), "t"),
        ],
        raw_blobs: vec![],
        initramfs: vec![],
        radio: vec![],
        results_files: vec![],
    };
    let img = dir.join(name);
    render(&img, &l, &contents, stamp).unwrap();
    (img, l)
}

/// Bytes `at..at + n` of partition `number` of `image`.
fn part_bytes(image: &[u8], l: &Layout, number: u8, at: u64, n: usize) -> Vec<u8> {
    let p = l.parts.iter().find(|p| p.number == number).unwrap();
    let start = usize::try_from(p.offset_bytes() + at).unwrap();
    image[start..start + n].to_vec()
}

#[test]
fn render_is_reproducible_and_ids_follow_the_stamp() {
    use crate::reproducible::{fat_date_time, DEFAULT_EPOCH};
    let dir = tempfile::tempdir().unwrap();
    let stamp = Stamp::new("rpi-zero-w", b"lock 1", DEFAULT_EPOCH);
    let (a, l) = render_small(dir.path(), "a.img", &stamp);
    let (b, _) = render_small(dir.path(), "b.img", &stamp);
    let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    assert!(a == b, "the same stamp gave two different images");
    // The MBR carries the board's own disk signature (PID 1 finds the card by it).
    let signature = layout::disk_signature("rpi-zero-w", &l);
    assert_eq!(
        benchboot_plan::boot_disk::mbr_signature(&a[..512]),
        Some(signature)
    );
    assert_ne!(&a[440..444], b"bbt1");

    // The ids are the stamp's: FAT volume id (BPB, FAT32 at 0x43, FAT16 at 0x27),
    // ext UUID and hash seed (superblock at 1024: 0x68 and 0xEC), ext creation and
    // write times (0x108 and 0x30), root directory owner 0:0 (inode 2).
    let le32 = |v: Vec<u8>| u32::from_le_bytes(v.try_into().unwrap());
    let uuid_hex = |u: String| u.replace('-', "");
    let hex = |v: Vec<u8>| v.iter().map(|x| format!("{x:02x}")).collect::<String>();
    assert_eq!(le32(part_bytes(&a, &l, 1, 0x43, 4)), stamp.fat_volume_id(1));
    assert_eq!(le32(part_bytes(&a, &l, 2, 0x27, 4)), stamp.fat_volume_id(2));
    let ext = l
        .parts
        .iter()
        .find(|p| p.role == Role::Test(Filesystem::Ext4));
    let ext = ext.unwrap().number;
    let sb = |at: u64, n: usize| part_bytes(&a, &l, ext, 1024 + at, n);
    assert_eq!(hex(sb(0x68, 16)), uuid_hex(stamp.ext_uuid(ext)));
    assert_eq!(hex(sb(0xec, 16)), uuid_hex(stamp.ext_hash_seed(ext)));
    assert_eq!(u64::from(le32(sb(0x108, 4))), DEFAULT_EPOCH);
    assert_eq!(u64::from(le32(sb(0x30, 4))), DEFAULT_EPOCH);
    // The labels are volume_label's (the layout snapshots show them): FAT's 11-byte
    // field (FAT32 at 0x47, FAT16 at 0x2B), ext's s_volume_name (0x78, 16 bytes).
    assert_eq!(part_bytes(&a, &l, 1, 0x47, 11), b"BOOT       ");
    assert_eq!(part_bytes(&a, &l, 2, 0x2b, 11), b"BBRESULTS  ");
    assert_eq!(sb(0x78, 16), b"ext4\0\0\0\0\0\0\0\0\0\0\0\0");
    let vfat = l.part(Role::Test(Filesystem::Vfat)).unwrap().number;
    assert_eq!(part_bytes(&a, &l, vfat, 0x2b, 11), b"VFAT       ");

    // Every FAT entry carries the stamp's time; the files are in the order given.
    let boot = l.part(Role::Boot).unwrap();
    let f = std::fs::File::open(dir.path().join("a.img")).unwrap();
    let fs = fatfs::FileSystem::new(slice(&f, boot).unwrap(), fatfs::FsOptions::new()).unwrap();
    let entries: Vec<_> = fs.root_dir().iter().map(Result::unwrap).collect();
    let names: Vec<String> = entries.iter().map(fatfs::DirEntry::file_name).collect();
    assert_eq!(names, ["b.txt", "a.txt", "extlinux"]);
    for e in &entries {
        assert_eq!(
            e.modified(),
            fat_date_time(DEFAULT_EPOCH),
            "{}",
            e.file_name()
        );
        assert_eq!(
            e.created(),
            fat_date_time(DEFAULT_EPOCH),
            "{}",
            e.file_name()
        );
    }
    drop(entries);
    drop(fs);

    // Another lock: other ids, so this test can fail.
    let other = Stamp::new("rpi-zero-w", b"lock 2", DEFAULT_EPOCH);
    let (c, _) = render_small(dir.path(), "c.img", &other);
    let c = std::fs::read(c).unwrap();
    assert_ne!(
        part_bytes(&c, &l, 1, 0x43, 4),
        part_bytes(&a, &l, 1, 0x43, 4)
    );
    assert_ne!(
        part_bytes(&c, &l, ext, 1024 + 0x68, 16),
        part_bytes(&a, &l, ext, 1024 + 0x68, 16)
    );
    assert_eq!(le32(part_bytes(&c, &l, 1, 0x43, 4)), other.fat_volume_id(1));

    // Another time: other FAT and ext times, nothing else.
    let later = Stamp::new("rpi-zero-w", b"lock 1", DEFAULT_EPOCH + 86_400);
    let (d, _) = render_small(dir.path(), "d.img", &later);
    let d = std::fs::read(d).unwrap();
    assert_eq!(
        u64::from(le32(part_bytes(&d, &l, ext, 1024 + 0x108, 4))),
        DEFAULT_EPOCH + 86_400
    );
    assert_eq!(
        part_bytes(&d, &l, 1, 0x43, 4),
        part_bytes(&a, &l, 1, 0x43, 4)
    );
    assert!(a != d);
}

#[test]
fn its_extlinux_conf_reads_as_u_boot_reads_it() {
    let board = crate::load_board("bananapi-m1").unwrap();
    let text = extlinux_conf(&board, board.kernel.dtb.as_deref());
    let c = parse_extlinux(&text).unwrap();
    assert_eq!(c.default.as_deref(), Some("benchboot"));
    assert_eq!((c.prompt, c.timeout), (Some(0), Some(1)));
    assert!(c.ignored.is_empty(), "{:?}", c.ignored);
    let l = c.boot_label().unwrap();
    assert_eq!(l.kernel.as_deref(), Some("/vmlinuz"));
    assert_eq!(l.initrd.as_deref(), Some("/initrd.img"));
    assert_eq!(l.fdt.as_deref(), Some("/sun7i-a20-bananapi.dtb"));
    assert_eq!(
        l.append.as_deref(),
        Some("console=ttyS0,115200 loglevel=4 rootwait")
    );
}

/// A whole small card with stand-in blobs and files, checked end to end.
#[test]
fn small_card_passes_and_a_broken_blob_is_named() {
    use crate::initramfs::Node;
    use benchboot_image::layout::{plan, Role, Spec};
    let board = crate::load_board("bananapi-m1").unwrap();
    let spec = Spec {
        disk_mib: 64,
        boot_start_mib: 4,
        boot_mib: 34,
        results_mib: 8,
        journal_mib: 1,
        test_slot_mib: 4,
        tests: vec![benchboot_plan::Filesystem::Raw],
    };
    let l = plan(&spec).unwrap();
    let mut zimage = vec![0u8; 0x400];
    zimage[0x24..0x28].copy_from_slice(&ZIMAGE_MAGIC.to_le_bytes());
    zimage[0x2c..0x30].copy_from_slice(&0x400u32.to_le_bytes());
    let mut dtb = vec![0u8; 64];
    dtb[..4].copy_from_slice(&FDT_MAGIC.to_be_bytes());
    dtb[4..8].copy_from_slice(&64u32.to_be_bytes());
    let initrd = crate::initramfs::build(&[
        ("init".into(), Node::File(b"\x7fELF".to_vec(), 0o755)),
        ("etc".into(), Node::Dir),
        ("etc/benchboot".into(), Node::Dir),
        (
            "etc/benchboot/plan.json".into(),
            Node::File(b"{}".to_vec(), 0o644),
        ),
    ])
    .unwrap();
    let spl = egon(8192, "sun7i-a20-bananapi");
    let mut blob = spl.clone();
    blob.resize(SUNXI_U_BOOT_OFFSET, 0);
    blob.extend(uimage(&[7u8; 5000], "U-Boot"));
    let contents = |blob: Vec<u8>| Contents {
        boot_files: vec![
            BootFile::new(
                EXTLINUX_CONF,
                extlinux_conf(&board, board.kernel.dtb.as_deref()).into_bytes(),
                "t",
            ),
            BootFile::new(KERNEL_FILE, zimage.clone(), "t"),
            BootFile::new(INITRAMFS_FILE, initrd.clone(), "t"),
            BootFile::new("sun7i-a20-bananapi.dtb", dtb.clone(), "t"),
        ],
        raw_blobs: vec![RawBlob {
            offset: 8192,
            data: blob,
            source: "t".into(),
        }],
        initramfs: vec![],
        radio: vec![],
        results_files: vec![],
    };
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("card.img");
    let stamp = crate::reproducible::Stamp::new("t", b"lock", 0);
    render(&img, &l, &contents(blob.clone()), &stamp).unwrap();
    let r = check_card(&board, &img, &l).unwrap();
    assert_eq!(r.boot_partition.offset, 4 << 20);
    assert_eq!(
        r.raw_blobs[0].span,
        (SUNXI_U_BOOT_OFFSET + 64 + 5000) as u64
    );
    assert_eq!(r.label.plan, "plan");
    assert!(
        r.summary().contains("built for sun7i-a20-bananapi"),
        "{}",
        r.summary()
    );
    assert_eq!(l.part(Role::Boot).unwrap().number, 1);

    // U-Boot proper damaged: the data CRC fails, and the message says where.
    let mut broken = blob.clone();
    broken[SUNXI_U_BOOT_OFFSET + 100] ^= 0xff;
    render(&img, &l, &contents(broken), &stamp).unwrap();
    let err = format!("{:#}", check_card(&board, &img, &l).unwrap_err());
    assert!(
        err.contains("u-boot-sunxi-with-spl.bin at byte 8192") && err.contains("data CRC"),
        "{err}"
    );
    // An SPL for another board.
    let mut other = egon(8192, "sun8i-r40-bananapi-m2-ultra");
    other.resize(SUNXI_U_BOOT_OFFSET, 0);
    other.extend(uimage(&[7u8; 5000], "U-Boot"));
    render(&img, &l, &contents(other), &stamp).unwrap();
    let err = format!("{:#}", check_card(&board, &img, &l).unwrap_err());
    assert!(
        err.contains("built for sun8i-r40-bananapi-m2-ultra"),
        "{err}"
    );
}

/// The entries of a gzip'd newc archive: (name, mode, size, SHA-256 of the contents).
fn cpio_entries(gz: &[u8]) -> Vec<(String, u32, u64, String)> {
    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(gz), &mut raw).unwrap();
    let mut rest = &raw[..];
    let mut out = Vec::new();
    loop {
        let mut r = cpio::newc::Reader::new(rest).unwrap();
        if r.entry().is_trailer() {
            break;
        }
        let (name, mode, size) = (
            r.entry().name().to_owned(),
            r.entry().mode(),
            u64::from(r.entry().file_size()),
        );
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut r, &mut data).unwrap();
        out.push((name, mode, size, crate::sha256_hex(&data)));
        rest = r.finish().unwrap();
    }
    out
}

/// [`contents::gather`] for a shipped board with a stand-in init, from the pinned
/// packages (as `cargo xtask image` does, minus the firmware build and the render).
fn gathered(name: &str) -> (benchboot_board::Board, Contents) {
    let board = crate::load_board(name).unwrap();
    let lock = Lock::load_repo().unwrap();
    let (kernel_root, _) = packages::unpacked(&lock, &board.kernel.package).unwrap();
    let loader_root = board
        .loader
        .as_ref()
        .map(|l| packages::unpacked(&lock, &l.package).unwrap().0);
    let dir = tempfile::tempdir().unwrap();
    let init = dir.path().join("init");
    std::fs::write(&init, b"\x7fELF stand-in").unwrap();
    let layout = layout::plan(&layout::Spec::default()).unwrap();
    let radio = crate::radio::files(&board, &lock).unwrap();
    let c = contents::gather(
        &board,
        &init,
        &kernel_root,
        loader_root.as_deref(),
        &layout,
        &PlanText::standard(),
        radio,
    )
    .unwrap();
    (board, c)
}

fn initrd(c: &Contents) -> Vec<(String, u32, u64, String)> {
    let f = c
        .boot_files
        .iter()
        .find(|f| f.path == INITRAMFS_FILE)
        .unwrap();
    cpio_entries(&f.data)
}

fn plan_modules(c: &Contents, plan: &str) -> Vec<String> {
    let (_, node, _) = c
        .initramfs
        .iter()
        .find(|(p, _, _)| *p == format!("etc/benchboot/{plan}.json"))
        .unwrap();
    let crate::initramfs::Node::File(json, _) = node else {
        panic!("{plan}.json is not a file")
    };
    serde_json::from_slice::<benchboot_plan::Plan>(json)
        .unwrap()
        .modules
}

#[test]
fn zero_w_initramfs_holds_its_radio_firmware_and_regulatory_db() {
    let (_, c) = gathered("rpi-zero-w");
    let entries = initrd(&c);
    let find = |name: &str| {
        entries
            .iter()
            .position(|e| e.0 == name)
            .unwrap_or_else(|| panic!("{name} not in the initramfs"))
    };
    // The files at the names the driver asks for, with the package's contents (Debian's
    // links followed), folders before them.
    let bin = &entries[find("lib/firmware/brcm/brcmfmac43430-sdio.bin")];
    assert_eq!(
        (bin.1, bin.2, bin.3.as_str()),
        (
            0o100_644,
            419_798,
            "93f3c40c94340c29a40714cb04e3e89974870fcae42a844b8a4544750159f40d"
        )
    );
    let db = &entries[find("lib/firmware/regulatory.db")];
    assert_eq!(
        (db.2, db.3.as_str()),
        (
            6380,
            "2fb33ca0074db573e05ef7dd50bb45b63c0ff98b7e852e1105ebad536fae8e6b"
        )
    );
    let nvram = &entries[find("lib/firmware/brcm/brcmfmac43430-sdio.raspberrypi,model-zero-w.txt")];
    assert_eq!(nvram.2, 874);
    find("lib/firmware/brcm/brcmfmac43430-sdio.clm_blob");
    find("lib/firmware/regulatory.db.p7s");
    assert!(find("lib") < find("lib/firmware"));
    assert!(find("lib/firmware") < find("lib/firmware/brcm"));
    assert!(find("lib/firmware/brcm") < find("lib/firmware/brcm/brcmfmac43430-sdio.bin"));
    assert_eq!(entries[find("lib/firmware/brcm")].1, 0o040_755);
    // No stand-in AP on a hardware board.
    assert!(entries
        .iter()
        .all(|e| !e.0.starts_with("usr") && e.0 != "tmp"));
    // The radio's modules, the SD host first, in both plans; the manifest lists the files.
    let hw = plan_modules(&c, "plan");
    let radio: Vec<&str> = hw
        .iter()
        .map(String::as_str)
        .skip_while(|m| *m != "sdhci")
        .collect();
    assert_eq!(
        radio,
        [
            "sdhci",
            "sdhci_pltfm",
            "sdhci_iproc",
            "rfkill",
            "cfg80211",
            "brcmutil",
            "brcmfmac"
        ]
    );
    let qemu = plan_modules(&c, "qemu");
    assert_eq!(
        qemu[..hw.len()],
        hw[..],
        "the QEMU plan loads the radio too"
    );
    assert!(qemu.contains(&"cdc_ether".to_owned()), "{qemu:?}");
    for m in ["brcmfmac", "cfg80211", "sdhci_iproc"] {
        find(&format!("lib/modules/{m}.ko"));
    }
    let paths: Vec<&str> = c.radio.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths.len(), 5, "{paths:?}");
}

#[test]
fn virt_initramfs_holds_the_qemu_only_stand_in_ap_and_hwsim_modules() {
    let (_, c) = gathered("qemu-virt-arm64");
    let entries = initrd(&c);
    let has = |name: &str| entries.iter().find(|e| e.0 == name);
    let hostapd = has("usr/sbin/hostapd").unwrap();
    assert_eq!(
        (hostapd.1, hostapd.2, hostapd.3.as_str()),
        (
            0o100_755,
            1_971_008,
            "6ab55ccb9e623c2d43e7313fc89e1da27ab7cbd7f2f8f9bc8962d285fc5cbdd3"
        )
    );
    let loader = has("lib/ld-linux-aarch64.so.1").unwrap();
    assert_eq!(
        (loader.1, loader.3.as_str()),
        (
            0o100_755,
            "17538b8f9889a470c061f69a8fea8124da89627311cd16546c133a89f09056df"
        )
    );
    for lib in [
        "lib/aarch64-linux-gnu/libnl-3.so.200",
        "lib/aarch64-linux-gnu/libnl-genl-3.so.200",
        "usr/lib/aarch64-linux-gnu/libnl-route-3.so.200",
        "usr/lib/aarch64-linux-gnu/libssl.so.3",
        "usr/lib/aarch64-linux-gnu/libcrypto.so.3",
        "lib/aarch64-linux-gnu/libc.so.6",
        "lib/aarch64-linux-gnu/libm.so.6",
        "lib/firmware/regulatory.db",
        "lib/firmware/regulatory.db.p7s",
    ] {
        assert!(has(lib).is_some(), "{lib}");
    }
    assert_eq!(has("tmp").map(|e| e.1), Some(0o040_755));
    // Nothing else of those packages: only what hostapd's NEEDED entries name.
    let so: Vec<&str> = entries
        .iter()
        .filter(|e| e.0.contains(".so"))
        .map(|e| e.0.as_str())
        .collect();
    assert_eq!(so.len(), 8, "{so:?}");
    // hwsim, mac80211 and the WPA2 crypto in the QEMU plan only.
    let hw = plan_modules(&c, "plan");
    let qemu = plan_modules(&c, "qemu");
    for m in [
        "mac80211_hwsim",
        "mac80211",
        "cfg80211",
        "libarc4",
        "gcm",
        "ghash_generic",
        "ccm",
        "cmac",
        "ctr",
        "gf128mul",
    ] {
        assert!(qemu.iter().any(|q| q == m), "{m}: {qemu:?}");
        assert!(!hw.iter().any(|q| q == m), "{m} in the hardware plan");
        assert!(has(&format!("lib/modules/{m}.ko")).is_some(), "{m}.ko");
    }
    // The manifest marks the stand-in QEMU-only.
    let ap: Vec<&str> = c
        .radio
        .iter()
        .filter(|f| f.qemu_only)
        .map(|f| f.path.as_str())
        .collect();
    assert_eq!(ap.len(), 9, "{ap:?}");
}

#[test]
fn the_initramfs_carries_the_alias_table_of_its_modules() {
    let (_, c) = gathered("rpi-4b");
    let (_, node, source) = c
        .initramfs
        .iter()
        .find(|(p, _, _)| *p == "lib/modules/modules.alias")
        .expect("lib/modules/modules.alias in the initramfs entries (and so in the manifest)");
    assert!(source.contains("linux-image"), "{source}");
    let crate::initramfs::Node::File(text, mode) = node else {
        panic!("modules.alias is not a file")
    };
    assert_eq!(*mode, 0o644);
    let t = benchboot_kmod::AliasTable::parse(std::str::from_utf8(text).unwrap()).unwrap();
    // One `depends` line per .ko the image carries, and no other.
    let entries = initrd(&c);
    let mut kos: Vec<String> = entries
        .iter()
        .filter_map(|e| e.0.strip_prefix("lib/modules/")?.strip_suffix(".ko"))
        .map(str::to_owned)
        .collect();
    let mut listed: Vec<String> = t.depends.iter().map(|(m, _)| m.clone()).collect();
    kos.sort();
    listed.sort();
    assert_eq!(listed, kos);
    assert!(entries.iter().any(|e| e.0 == "lib/modules/modules.alias"));
    // The pinned arm64 kernel's own aliases and depends= (modinfo of the .ko files).
    // Both match either protocol (uas.c's id table has USB_PR_BULK: a device may offer
    // UAS in another alternate setting; usb-storage's has USB_PR_UAS), so a stick and
    // a UAS enclosure load both, as udev would, and the drivers pick.
    for m in [
        "usb:v0781p5581d0100dc00dsc00dp00ic08isc06ip50in00",
        "usb:v174Cp55AAd0100dc00dsc00dp00ic08isc06ip62in01",
    ] {
        assert_eq!(t.modules_for(m), ["usb_storage", "uas"]);
    }
    assert_eq!(t.modules_for("scsi:t-0x00"), ["sd_mod"]);
    let deps = t.depends_of("uas").unwrap();
    for d in ["usbcore", "scsi_mod", "usb_storage"] {
        assert!(deps.iter().any(|x| x == d), "uas depends on {d}: {deps:?}");
    }
    let loads = benchboot_kmod::decide(
        &[benchboot_kmod::Device {
            path: "/sys/devices/platform/scb/fd500000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0/usb2/2-1/2-1:1.0".into(),
            modalias: "usb:v174Cp55AAd0100dc00dsc00dp00ic08isc06ip62in01".into(),
            subsystem: "usb".into(),
            bound: false,
        }],
        &t,
        &std::collections::BTreeSet::new(),
    )
    .loads;
    let order: Vec<&str> = loads.iter().map(|l| l.module.as_str()).collect();
    let at = |m: &str| {
        order
            .iter()
            .position(|x| *x == m)
            .unwrap_or_else(|| panic!("{m}: {order:?}"))
    };
    assert!(
        at("usbcore") < at("usb_storage") && at("usb_storage") < at("uas"),
        "{order:?}"
    );
    assert!(at("scsi_mod") < at("uas"), "{order:?}");
}

/// modules.vcio: rpi-3b's image carries benchboot_vcio.ko (built for its kernel, the
/// kernel's vermagic) and both plans load it after the board's modules; the Zero W
/// (rpi flavour, raspberrypi-hwmon) does not.
#[test]
fn vcio_boards_carry_and_load_benchboot_vcio_last() {
    let (board, c) = gathered("rpi-3b");
    let hw = plan_modules(&c, "plan");
    assert_eq!(
        hw.last().map(String::as_str),
        Some(crate::vcio::MODULE),
        "{hw:?}"
    );
    let qemu = plan_modules(&c, "qemu");
    assert_eq!(
        qemu[..hw.len()],
        hw[..],
        "the QEMU plan keeps the hardware prefix"
    );
    let (_, node, source) = c
        .initramfs
        .iter()
        .find(|(p, _, _)| p == "lib/modules/benchboot_vcio.ko")
        .expect("lib/modules/benchboot_vcio.ko in the initramfs");
    assert!(source.starts_with("firmware/vcio"), "{source}");
    let crate::initramfs::Node::File(ko, _) = node else {
        panic!("benchboot_vcio.ko is not a file")
    };
    let tmp = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(tmp.path(), ko).unwrap();
    let magic = crate::vcio::vermagic(&crate::modules::modinfo(tmp.path()).unwrap()).unwrap();
    assert!(
        magic.starts_with(&format!("{} SMP", board.kernel.release)),
        "{magic}"
    );
    let (_, zero_w) = gathered("rpi-zero-w");
    assert!(!plan_modules(&zero_w, "plan")
        .iter()
        .any(|m| m == crate::vcio::MODULE));
}
