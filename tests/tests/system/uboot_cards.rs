//! The cards of the U-Boot boards QEMU cannot boot (BeagleBone Black: AM335x; Banana Pi
//! M1: Allwinner A20), built for real and checked the way their boot ROM, SPL and
//! U-Boot's distro boot read them (xtask/src/bootcheck.rs), plus the real tools
//! (`sfdisk --dump`, `fsck.vfat -n`) and the manifest's SHA-256 of every loader piece.

use std::io::{Read, Seek, SeekFrom};
use std::sync::Mutex;

use benchboot_image::layout::{self, Role};
use xtask::bootcheck;

/// The two boards share the armv7 firmware build folder: one build at a time.
static BUILD: Mutex<()> = Mutex::new(());

struct Checked {
    image: std::path::PathBuf,
    manifest: serde_json::Value,
    report: bootcheck::CardReport,
    layout: layout::Layout,
}

fn build_and_check(name: &str) -> Checked {
    let board = xtask::load_board(name).unwrap();
    let built = {
        let _one = BUILD.lock().unwrap_or_else(|e| e.into_inner());
        xtask::image::run(&board).unwrap()
    };
    let layout = layout::plan(&layout::Spec::default()).unwrap();
    let report = bootcheck::check_card(&board, &built.image, &layout).unwrap();
    eprintln!("{name}: {}", report.summary());

    // The real tools agree: an MBR whose only bootable partition is p1, FAT32 at
    // 4 MiB, and a clean boot filesystem.
    let dump = benchboot_tests::check_tool("sfdisk", &["--dump"], &built.image).unwrap();
    assert!(dump.contains("label: dos"), "{dump}");
    let p1 = format!("{}1 : start=        8192,", built.image.display());
    let line = dump
        .lines()
        .find(|l| l.starts_with(&p1))
        .unwrap_or_else(|| {
            panic!("p1 does not start at sector 8192 (4 MiB):\n{dump}");
        });
    assert!(line.contains("type=c, bootable"), "{line}");
    assert_eq!(dump.matches("bootable").count(), 1, "{dump}");
    let boot = layout.part(Role::Boot).unwrap();
    let p1 = benchboot_tests::extract_partition(&built.image, boot).unwrap();
    benchboot_tests::check_tool("fsck.vfat", &["-n"], p1.path()).unwrap();

    // The label distro boot takes: the card's kernel, initramfs and DTB, the board's
    // console, the hardware plan.
    let l = &report.label;
    assert_eq!(l.kernel, "vmlinuz");
    assert!(l.kernel_kind.starts_with("ARM zImage"), "{l:?}");
    assert_eq!(l.initrd, "initrd.img");
    assert_eq!(l.fdt.as_deref(), board.kernel.dtb.as_deref());
    assert!(
        l.append
            .split_whitespace()
            .any(|w| w == format!("console={}", board.boot.console)),
        "{l:?}"
    );
    assert_eq!(l.plan, "plan");
    assert_eq!(report.boot_partition.offset, 4 << 20);

    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&built.manifest).unwrap()).unwrap();
    Checked {
        image: built.image,
        manifest,
        report,
        layout,
    }
}

#[test]
fn bananapi_m1_card_has_the_sunxi_spl_at_8_kib_and_extlinux() {
    let _slot = benchboot_tests::qemu_slot(module_path!());
    let c = build_and_check("bananapi-m1");
    // One raw blob: the eGON SPL + U-Boot proper at 8 KiB, ending before p1.
    let [xtask::bootcheck::CheckedBlob {
        file,
        offset,
        span,
        what,
    }] = c.report.raw_blobs.as_slice()
    else {
        panic!("{:?}", c.report.raw_blobs);
    };
    assert_eq!(
        (file.as_str(), *offset),
        ("u-boot-sunxi-with-spl.bin", 8192)
    );
    assert!(
        what.contains("eGON SPL") && what.contains("built for sun7i-a20-bananapi"),
        "{what}"
    );
    let p1 = c.layout.part(Role::Boot).unwrap().offset_bytes();
    assert!(offset + span <= p1, "{offset}+{span} runs into p1 at {p1}");
    // The manifest lists it (offset, size, SHA-256, package) and the card holds it.
    let blobs = c.manifest["raw_blobs"].as_array().unwrap();
    assert_eq!(blobs.len(), 1, "{blobs:?}");
    let b = &blobs[0];
    assert_eq!(b["offset_bytes"], 8192);
    let bytes = b["bytes"].as_u64().unwrap();
    assert!(bytes >= *span && offset + bytes <= p1, "{b}");
    assert!(
        b["source"]
            .as_str()
            .unwrap()
            .starts_with("u-boot-sunxi (usr/lib/u-boot/Bananapi/"),
        "{b}"
    );
    let mut card = std::fs::File::open(&c.image).unwrap();
    card.seek(SeekFrom::Start(8192)).unwrap();
    let mut on_card = vec![0u8; usize::try_from(bytes).unwrap()];
    card.read_exact(&mut on_card).unwrap();
    assert_eq!(xtask::sha256_hex(&on_card), b["sha256"].as_str().unwrap());
    assert!(c.report.loader_files.is_empty());
}

#[test]
fn beaglebone_black_card_has_mlo_and_u_boot_img_on_the_active_fat() {
    let _slot = benchboot_tests::qemu_slot(module_path!());
    let c = build_and_check("beaglebone-black");
    assert!(c.report.raw_blobs.is_empty());
    let files: Vec<&str> = c
        .report
        .loader_files
        .iter()
        .map(|f| f.file.as_str())
        .collect();
    assert_eq!(files, ["MLO", "u-boot.img"]);
    let mlo = &c.report.loader_files[0].what;
    assert!(
        mlo.starts_with("GP image of ") && mlo.contains("for 0x402f0400"),
        "{mlo}"
    );
    // As on the card, with the SHA-256 the manifest names.
    let boot = c.layout.part(Role::Boot).unwrap();
    let listed = c.manifest["boot_files"].as_array().unwrap();
    for f in files {
        let data = xtask::image::read_fat_file(&c.image, boot, f).unwrap();
        let entry = listed
            .iter()
            .find(|e| e["path"] == format!("p1:/{f}"))
            .unwrap_or_else(|| panic!("{f} not in the manifest"));
        assert_eq!(entry["sha256"].as_str().unwrap(), xtask::sha256_hex(&data));
        assert_eq!(entry["source"], "u-boot-omap");
    }
    assert_eq!(c.manifest["raw_blobs"].as_array().unwrap().len(), 0);
}
