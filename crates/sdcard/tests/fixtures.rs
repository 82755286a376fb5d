//! Real register dumps, each with its source, decoded to the values the source states.
#![forbid(unsafe_code)]

use benchboot_sdcard::{decode, AppClass, Decoded, Layout, RawRegisters};

fn sd(cid: &str, csd: &str, scr: Option<&str>) -> RawRegisters {
    RawRegisters {
        kind: Some("SD".into()),
        cid: Some(cid.into()),
        csd: Some(csd.into()),
        scr: scr.map(Into::into),
        ..RawRegisters::default()
    }
}

/// Source: bradfa/bradfa.github.io `_posts/2014-05-07-flashbenching.md` ("Flashbenching",
/// Andrew Bradford): `head /sys/block/mmcblk1/device/*` of a Kingston-labelled 4 GB
/// microSDHC on a BeagleBone: manfid 0x000002, oemid 0x544d "TM", name SA04G, date 03/2013,
/// hwrev/fwrev 0x1, serial 0x35338909; fdisk: 3904897024 bytes.
/// MID 0x02 is Toshiba (Kingston resold Toshiba-made cards), not Kingston.
#[test]
fn toshiba_made_kingston_4gb_sysfs_dump() {
    let raw = sd(
        "02544d5341303447113533890900d371",
        "400e00325b5900001d177f800a40008d",
        Some("0235800001000000"),
    );
    let card = decode(&raw);
    let cid = card.cid.ok().unwrap();
    assert_eq!(cid.manufacturer_id, 0x02);
    assert_eq!(card.manufacturer().unwrap().name, "Toshiba/Kioxia");
    assert_eq!(cid.oem_id, "TM");
    assert_eq!(cid.product_name, "SA04G");
    assert_eq!(cid.revision, "1.1");
    assert_eq!((cid.year, cid.month), (2013, 3));
    let csd = card.csd.ok().unwrap();
    assert_eq!(csd.version, "2.0");
    assert_eq!(csd.capacity_bytes, 3_904_897_024);
    assert_eq!(csd.tran_speed_hz, 25_000_000);
    assert_eq!(csd.ccc, 0x5b5);
    let scr = card.scr.ok().unwrap();
    assert_eq!(scr.spec_version, "SD 3.0x");
    assert_eq!(scr.bus_widths, vec![1, 4]);
    assert_eq!(scr.security, 3);
    // The block device's size from the post agrees: no capacity warning.
    let w = card.warnings(3_904_897_024);
    assert!(!w.iter().any(|w| w.starts_with("capacity")), "{w:?}");
    assert!(card
        .warnings(3_904_897_024 - 512)
        .iter()
        .any(|w| w.starts_with("capacity")));
    // The serial is hashed, never stored: the redacted CID has PSN and CRC zeroed.
    assert_eq!(
        card.raw.cid.as_deref(),
        Some("02544d5341303447110000000000d300")
    );
    assert!(!serde_json::to_string(&card).unwrap().contains("35338909"));
    assert_eq!(cid.serial_sha256.len(), 64);
    assert_eq!(
        card.summary(),
        "Toshiba/Kioxia (0x02, table v1) \"SA04G\" rev 1.1, 2013-03, 3.6 GiB by CSD v2.0, SD 3.0x"
    );
}

/// Source: the Sming framework's Storage library, header `Storage/SD/CID.h`, comment
/// "Samsung 32GB EVO Plus CID: 1b 53 4d 45 42 31 51 54 30 f1 77 5f ea 01 1a b9"
/// (MID 1b, OID "SM", PNM "EB1QT", PRV 30, MDT 0x11a). Its companion test decodes the
/// CSD `400e00325b590000ee7f7f800a404055` as v2 (card not named there).
/// MDT year field 0x11 = 17 binary -> 2017; a BCD reading would give 2011.
#[test]
fn samsung_evo_plus_binary_year_not_bcd() {
    let card = decode(&sd(
        "1b534d454231515430f1775fea011ab9",
        "400e00325b590000ee7f7f800a404055",
        None,
    ));
    let cid = card.cid.ok().unwrap();
    assert_eq!(card.manufacturer().unwrap().name, "Samsung");
    assert_eq!(cid.oem_id, "SM");
    assert_eq!(cid.product_name, "EB1QT");
    assert_eq!(cid.revision, "3.0");
    assert_eq!((cid.year, cid.month), (2017, 10));
    assert_ne!(cid.year, 2011, "BCD reading of 0x11");
    assert_eq!(card.capacity_bytes(), Some((0xee7f + 1) * 512 * 1024));
    assert_eq!(card.capacity_bytes(), Some(32_010_928_128));
}

/// Source: ironsheep/P2-uSD-FS `DOCs/cards/sandisk-sn64g-64gb.md` (label "SanDisk Extreme
/// 64GB U3 A2 microSD XC I V30"; CID/CSD/OCR/SCR read over SPI): MDT 0x16B = 2022-11,
/// C_SIZE 0x1DBD3, SD 6.x. Year field 0x16 = 22 binary; BCD would read 2016.
#[test]
fn sandisk_extreme_64gb_spi_dump() {
    let raw = RawRegisters {
        ocr: Some("c0ff8000".into()),
        ..sd(
            "035344534e363447867e650771016b8d",
            "400e0032db790001dbd37f800a4040f9",
            Some("0245848700000000"),
        )
    };
    let card = decode(&raw);
    let cid = card.cid.ok().unwrap();
    assert_eq!(card.manufacturer().unwrap().name, "SanDisk");
    assert_eq!(
        (cid.oem_id.as_str(), cid.product_name.as_str()),
        ("SD", "SN64G")
    );
    assert_eq!(cid.revision, "8.6");
    assert_eq!((cid.year, cid.month), (2022, 11));
    assert_eq!(card.capacity_bytes(), Some(121_812 * 512 * 1024));
    assert_eq!(card.capacity_bytes(), Some(63_864_569_856));
    assert_eq!(card.csd.ok().unwrap().ccc, 0xdb7);
    let scr = card.scr.ok().unwrap();
    assert_eq!(scr.spec_version, "SD 6.xx");
    assert!(scr.sd_spec4);
    assert_eq!(scr.sd_specx, 2);
    let ocr = card.ocr.ok().unwrap();
    assert!(ocr.powered_up && ocr.ccs && !ocr.s18a);
    assert_eq!(ocr.vdd_window_mv, Some((2700, 3600)));
}

/// Source: an `lshal` dump in the code index (HAL's mmc.* properties read from sysfs;
/// the search tool did not name its repository): SanDisk SD02G, mmc.date 05/2007,
/// mmc.scr 0225000000000000. CSD v1.0: C_SIZE 3876, C_SIZE_MULT 7, READ_BL_LEN 10.
#[test]
fn sandisk_2gb_csd_v1() {
    let card = decode(&sd(
        "035344534430324780206bb243007500",
        "002600325f5a83c93efbcfff92804000",
        Some("0225000000000000"),
    ));
    let cid = card.cid.ok().unwrap();
    assert_eq!(cid.product_name, "SD02G");
    assert_eq!(cid.revision, "8.0");
    assert_eq!((cid.year, cid.month), (2007, 5));
    let csd = card.csd.ok().unwrap();
    assert_eq!(csd.version, "1.0");
    assert_eq!(
        (csd.c_size, csd.c_size_mult, csd.read_bl_len),
        (3876, Some(7), 10)
    );
    assert_eq!(csd.capacity_bytes, 3877 * (1 << 9) * (1 << 10));
    assert_eq!(csd.capacity_bytes, 2_032_664_576);
    assert_eq!(card.scr.ok().unwrap().spec_version, "SD 2.00");
}

/// Source: qemu/qemu `hw/sd/sd.c` sd_set_cid (MID 0xaa, OID "XY", PNM "QEMU!", PRV 0x01,
/// PSN deadbeef, MDT 2006-02, CRC7) and sd_set_csd for a 1 GiB image (size <=
/// SDSC_MAX_CAPACITY: CSD v1.0, csize = (size >> 18) - 1 = 4095, C_SIZE_MULT 7,
/// READ_BL_LEN 9, TRAN_SPEED 0x32), sd_set_scr (spec 3.01: 02 25 80 ..), sd_set_sdstatus
/// (all zero). Bytes derived here from that source, CRC7 computed as QEMU does.
#[test]
fn qemu_emulated_card_1gib() {
    let raw = RawRegisters {
        ssr: Some("0".repeat(128)),
        ..sd(
            "aa585951454d552101deadbeef006219",
            "002600325f59e3ffffffdfff926000b5",
            Some("0225800000000000"),
        )
    };
    let card = decode(&raw);
    let cid = card.cid.ok().unwrap();
    assert_eq!(cid.manufacturer_id, 0xaa);
    assert_eq!(
        (cid.oem_id.as_str(), cid.product_name.as_str()),
        ("XY", "QEMU!")
    );
    assert_eq!(cid.revision, "0.1");
    assert_eq!((cid.year, cid.month), (2006, 2));
    assert_eq!(card.capacity_bytes(), Some(1_073_741_824));
    assert_eq!(card.csd.ok().unwrap().version, "1.0");
    assert_eq!(card.scr.ok().unwrap().spec_version, "SD 3.0x");
    assert!(card.ssr.ok().unwrap().all_zero);
    assert!(card
        .warnings(1 << 30)
        .iter()
        .any(|w| w.contains("all zero")));
}

/// SSR: no published raw `ssr` dump was found, so this one is built field by field from
/// table 4-44 (DAT_BUS_WIDTH 4-bit, SPEED_CLASS 4 = C10, AU_SIZE 9 = 4 MiB,
/// UHS_SPEED_GRADE 3, VIDEO_SPEED_CLASS 30, APP_PERF_CLASS 2, DISCARD_SUPPORT 1).
#[test]
fn ssr_classes_from_the_spec_table() {
    let mut b = [0u8; 64];
    b[0] = 0x80; // [511:510] = 2: 4-bit
    b[8] = 0x04; // [447:440] SPEED_CLASS 4
    b[10] = 0x90; // [431:428] AU_SIZE 9
    b[14] = 0x30; // [399:396] UHS_SPEED_GRADE 3
    b[15] = 30; // [391:384] VIDEO_SPEED_CLASS
    b[21] = 0x02; // [339:336] APP_PERF_CLASS 2
    b[24] = 0x02; // [313] DISCARD_SUPPORT
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    let card = decode(&RawRegisters {
        kind: Some("SD".into()),
        ssr: Some(hex),
        ..RawRegisters::default()
    });
    let s = card.ssr.ok().unwrap();
    assert_eq!(s.bus_width_bits, 4);
    assert_eq!(s.speed_class, Some(10));
    assert_eq!(s.au_size_bytes, Some(4 << 20));
    assert_eq!(s.uhs_speed_grade, 3);
    assert_eq!(s.video_speed_class, 30);
    assert!(s.discard);
    assert_eq!(card.app_class(), Some(AppClass::A2));
    assert_eq!(s.classes_label(), "C10 U3 V30 A2");
}

/// Source: cloudmesh/cloudmesh-pi-cluster `cloudmesh/sd-card/benchmarks.md`, Raspberry
/// Pi 4 `sudo cat /sys/kernel/debug/mmc0/ios` without sdhci quirks2.
const PI4_IOS: &str = "clock:\t\t50000000 Hz\nactual clock:\t50000000 Hz\nvdd:\t\t21 (3.3 ~ 3.4 V)\nbus mode:\t2 (push-pull)\nchip select:\t0 (don't care)\npower mode:\t2 (on)\nbus width:\t2 (4 bits)\ntiming spec:\t7 (sd uhs DDR50)\nsignal voltage:\t1 (1.80 V)\ndriver type:\t0 (driver type B)\n";

/// Source: linux-mmc mailing list (archive linux-mailinglist-archives/linux-mmc
/// .vger.kernel.org.0), a reply comparing a UHS and a non-UHS card: mmc1 ios with the
/// UHS card.
const UHS_IOS: &str = "clock:\t\t150000000 Hz\nactual clock:\t148500000 Hz\nvdd:\t\t18 (3.0 ~ 3.1 V)\nbus mode:\t2 (push-pull)\nchip select:\t0 (don't care)\npower mode:\t2 (on)\nbus width:\t2 (4 bits)\ntiming spec:\t6 (sd uhs SDR104)\nsignal voltage:\t1 (1.80 V)\ndriver type:\t0 (driver type B)\n";

#[test]
fn real_ios_texts() {
    let card = decode(&RawRegisters {
        ios: Some(PI4_IOS.into()),
        ..RawRegisters::default()
    });
    let ios = card.ios.ok().unwrap();
    assert_eq!(ios.clock_hz, 50_000_000);
    assert_eq!(ios.actual_clock_hz, Some(50_000_000));
    assert_eq!(ios.bus_width_bits, 4);
    assert_eq!((ios.timing_code, ios.timing.as_str()), (7, "sd uhs DDR50"));
    assert_eq!(ios.signal_voltage.as_deref(), Some("1.80 V"));
    assert_eq!(ios.label(), "DDR, sd uhs DDR50, 4-bit");

    let uhs = decode(&RawRegisters {
        ios: Some(UHS_IOS.into()),
        ..RawRegisters::default()
    });
    let ios = uhs.ios.ok().unwrap();
    assert_eq!(ios.effective_clock_hz(), 148_500_000);
    assert_eq!(ios.label(), "SDR, sd uhs SDR104, 4-bit");
    assert_eq!(ios.summary(), "sd uhs SDR104 4-bit at 149 MHz");
}

/// An emulated host's ios: constructed in debugfs.c's mmc_ios_show format with the
/// values a QEMU SD card at high speed gives (no `actual clock` line: drivers that do
/// not report one omit it). Not a captured dump.
#[test]
fn emulated_ios_without_actual_clock() {
    let text = "clock:\t\t50000000 Hz\nvdd:\t\t21 (3.3 ~ 3.4 V)\nbus mode:\t2 (push-pull)\nchip select:\t0 (don't care)\npower mode:\t2 (on)\nbus width:\t2 (4 bits)\ntiming spec:\t2 (sd high-speed)\nsignal voltage:\t0 (3.30 V)\ndriver type:\t0 (driver type B)\n";
    let card = decode(&RawRegisters {
        ios: Some(text.into()),
        ..RawRegisters::default()
    });
    let ios = card.ios.ok().unwrap();
    assert_eq!(ios.actual_clock_hz, None);
    assert_eq!(ios.summary(), "sd high-speed 4-bit at 50 MHz");
}

/// MMC: the JEDEC CID layout, never the SD one. Source: mike548141/sdinfo rpi-sdinfo.py
/// lists eMMC CID `45010053454d31364790e03506aebf4d` as "ChromeBook Internal eMMC",
/// MID 0x45, OEM 0x0100, name SEM16, rev 0x4? (their key; PRV [55:48] = 0x90 here).
#[test]
fn mmc_cid_uses_jedec_layout_and_csd_is_not_decoded() {
    let card = decode(&RawRegisters {
        kind: Some("MMC".into()),
        cid: Some("45010053454d31364790e03506aebf4d".into()),
        csd: Some("d0270032ff5983ffffffffef8a4040d3".into()),
        ..RawRegisters::default()
    });
    let cid = card.cid.ok().unwrap();
    assert_eq!(cid.layout, Layout::Mmc);
    assert_eq!(cid.manufacturer_id, 0x45);
    assert_eq!(cid.product_name, "SEM16G");
    assert_eq!(cid.revision, "9.0");
    match &card.csd {
        Decoded::Invalid { reason } => assert!(reason.contains("MMC: not decoded")),
        other => panic!("{other:?}"),
    }
    assert!(card.summary().contains("MMC: CSD not decoded"));
}

#[test]
fn garbage_never_panics_and_names_the_register() {
    let inputs = [
        "",
        "0",
        "zz",
        "0x",
        "ü",
        "0353445",
        &"f".repeat(31),
        &"0".repeat(33),
        &"a".repeat(1000),
        "\n\n",
        "0x0x12",
    ];
    for s in inputs {
        let raw = RawRegisters {
            kind: Some("SD".into()),
            cid: Some(s.into()),
            csd: Some(s.into()),
            scr: Some(s.into()),
            ssr: Some(s.into()),
            ocr: Some(s.into()),
            ios: Some(s.into()),
        };
        let card = decode(&raw);
        let _ = card.summary();
        let _ = card.warnings(12345);
        let _ = raw.redacted();
        for (d, name, digits) in [
            (invalid(&card.cid), "cid", "32"),
            (invalid(&card.csd), "csd", "32"),
            (invalid(&card.scr), "scr", "16"),
            (invalid(&card.ssr), "ssr", "128"),
            (invalid(&card.ocr), "ocr", "8"),
        ] {
            let reason = d.unwrap_or_else(|| panic!("{name} {s:?} must be invalid"));
            assert!(
                reason.starts_with(name) && reason.contains(digits),
                "{reason}"
            );
        }
        assert!(invalid(&card.ios).is_some());
    }
    let bad = decode(&RawRegisters {
        csd: Some("400e00325b59".into()),
        scr: Some("02358000010000".into()),
        ssr: Some("00".into()),
        ocr: Some("0x0030000".into()),
        ..RawRegisters::default()
    });
    for (d, want) in [
        (invalid(&bad.csd), "csd: 12 hex digits, expected 32"),
        (invalid(&bad.scr), "scr: 14 hex digits, expected 16"),
        (invalid(&bad.ssr), "ssr: 2 hex digits, expected 128"),
        (invalid(&bad.ocr), "ocr: 7 hex digits, expected 8"),
    ] {
        assert_eq!(d.as_deref(), Some(want));
    }
    // Even garbage ios and an unknown type decode without panicking.
    let odd = decode(&RawRegisters {
        kind: Some("XYZ".into()),
        cid: Some("00".repeat(16)),
        ios: Some("clock: lots\nbus width: 9 (x bits)".into()),
        ..RawRegisters::default()
    });
    assert!(matches!(odd.cid, Decoded::Invalid { .. }));
    assert!(matches!(odd.ios, Decoded::Invalid { .. }));
}

fn invalid<T>(d: &Decoded<T>) -> Option<String> {
    match d {
        Decoded::Invalid { reason } => Some(reason.clone()),
        _ => None,
    }
}

#[test]
fn serde_shape_and_round_trip() {
    let card = decode(&sd(
        "02544d5341303447113533890900d371",
        "400e00325b5900001d177f800a40008d",
        None,
    ));
    let json = serde_json::to_value(&card).unwrap();
    assert_eq!(json["cid"]["status"], "ok");
    assert_eq!(json["cid"]["value"]["product_name"], "SA04G");
    assert_eq!(json["scr"], serde_json::json!({"status": "missing"}));
    let back: benchboot_sdcard::Card = serde_json::from_value(json).unwrap();
    assert_eq!(back, card);
    let invalid: Decoded<u8> = Decoded::Invalid { reason: "x".into() };
    assert_eq!(
        serde_json::to_string(&invalid).unwrap(),
        r#"{"status":"invalid","reason":"x"}"#
    );
}

#[test]
fn reader_treats_missing_files_as_none() {
    let dir = std::env::temp_dir().join(format!("benchboot-sdcard-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("type"), "SD\n").unwrap();
    std::fs::write(dir.join("cid"), "02544d5341303447113533890900d371\n").unwrap();
    std::fs::write(dir.join("ocr"), "0x00300000\n").unwrap();
    let raw = RawRegisters::read(&dir, Some(&dir.join("no-such-ios")));
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(raw.kind.as_deref(), Some("SD"));
    assert_eq!(raw.ssr, None);
    assert_eq!(raw.ios, None);
    let card = decode(&raw);
    assert_eq!(card.ocr.ok().unwrap().vdd_window_mv, Some((3200, 3400)));
    assert!(card
        .warnings(0)
        .iter()
        .any(|w| w.contains("not exposed by this kernel")));
}
