//! Tests of the boot check: eGON, GP, U-Boot image and kernel headers, and extlinux.conf
//! as U-Boot reads it.
use benchboot_board::Arch;

use super::blobs::{crc32, ZIMAGE_MAGIC};
use super::*;

/// A minimal eGON SPL of `length` bytes with a valid checksum and a DT name.
pub(crate) fn egon(length: usize, dt: &str) -> Vec<u8> {
    let mut b = vec![0u8; length];
    b[..4].copy_from_slice(&[0x16, 0, 0, 0xea]);
    b[4..12].copy_from_slice(b"eGON.BT0");
    b[0x10..0x14].copy_from_slice(&(length as u32).to_le_bytes());
    b[0x14..0x18].copy_from_slice(b"SPL\x02");
    b[0x20..0x24].copy_from_slice(&0x2cu32.to_le_bytes());
    b[0x2c..0x2c + dt.len()].copy_from_slice(dt.as_bytes());
    b[0x100] = 0x5a;
    let sum = egon_checksum(&b, length);
    b[0x0c..0x10].copy_from_slice(&sum.to_le_bytes());
    b
}

pub(crate) fn uimage(data: &[u8], name: &str) -> Vec<u8> {
    let mut h = vec![0u8; 64];
    h[..4].copy_from_slice(&UIMAGE_MAGIC.to_be_bytes());
    h[12..16].copy_from_slice(&(data.len() as u32).to_be_bytes());
    h[24..28].copy_from_slice(&crc32(data).to_be_bytes());
    h[32..32 + name.len()].copy_from_slice(name.as_bytes());
    let hcrc = crc32(&h);
    h[4..8].copy_from_slice(&hcrc.to_be_bytes());
    [h, data.to_vec()].concat()
}

#[test]
fn egon_header_checksum_and_limits() {
    let b = egon(8192, "sun7i-a20-bananapi");
    let e = check_egon(&b).unwrap();
    assert_eq!(e.length, 8192);
    assert_eq!(e.spl_version, Some(2));
    assert_eq!(e.dt_name.as_deref(), Some("sun7i-a20-bananapi"));
    // Any changed byte inside `length` breaks the checksum.
    let mut bad = b.clone();
    bad[4000] ^= 1;
    let err = check_egon(&bad).unwrap_err().to_string();
    assert!(err.contains("checksum"), "{err}");
    // ...outside it does not matter to the boot ROM.
    let mut tail = [b.clone(), vec![0xff; 100]].concat();
    tail[8192] = 0;
    check_egon(&tail).unwrap();
    let mut magic = b.clone();
    magic[8] = b'X';
    assert!(check_egon(&magic)
        .unwrap_err()
        .to_string()
        .contains("eGON.BT0"));
    let err = check_egon(&egon(40 * 1024, "x")).unwrap_err().to_string();
    assert!(err.contains("at most 32768"), "{err}");
    let mut odd = egon(8192, "x");
    odd[0x10..0x14].copy_from_slice(&1000u32.to_le_bytes());
    assert!(check_egon(&odd).unwrap_err().to_string().contains("512"));
}

#[test]
fn u_boot_images_legacy_with_crcs_and_fit() {
    let u = uimage(b"u-boot proper", "U-Boot test");
    assert_eq!(
        check_u_boot_image(&u).unwrap(),
        UBootImage::Legacy {
            data_bytes: 13,
            name: "U-Boot test".into()
        }
    );
    assert_eq!(check_u_boot_image(&u).unwrap().bytes(), 77);
    let mut bad = u.clone();
    bad[70] ^= 1;
    assert!(check_u_boot_image(&bad)
        .unwrap_err()
        .to_string()
        .contains("data CRC"));
    let mut bad = u.clone();
    bad[40] ^= 1;
    assert!(check_u_boot_image(&bad)
        .unwrap_err()
        .to_string()
        .contains("header CRC"));
    let mut fit = vec![0u8; 100];
    fit[..4].copy_from_slice(&FDT_MAGIC.to_be_bytes());
    fit[4..8].copy_from_slice(&64u32.to_be_bytes());
    assert_eq!(
        check_u_boot_image(&fit).unwrap(),
        UBootImage::Fit { fdt_bytes: 64 }
    );
    assert!(check_u_boot_image(&[0u8; 100]).is_err());
}

fn mlo(config_header: bool, size: u32, load: u32, len: usize) -> Vec<u8> {
    let mut b = vec![0u8; len];
    let at = if config_header {
        b[..4].copy_from_slice(&0x40u32.to_le_bytes());
        b[20..30].copy_from_slice(b"CHSETTINGS");
        512
    } else {
        0
    };
    b[at..at + 4].copy_from_slice(&size.to_le_bytes());
    b[at + 4..at + 8].copy_from_slice(&load.to_le_bytes());
    b
}

#[test]
fn gp_image_header_size_and_load_address() {
    // As u-boot-omap's MLO: a CH, then the GP header; size = file - 512.
    let g = check_gp_image(&mlo(true, 109_736, 0x402F_0400, 110_248)).unwrap();
    assert_eq!(
        g,
        GpImage {
            config_header: true,
            size: 109_736,
            load_address: 0x402F_0400
        }
    );
    assert!(
        !check_gp_image(&mlo(false, 1000, 0x402F_0400, 1000))
            .unwrap()
            .config_header
    );
    let err = check_gp_image(&mlo(true, 200_000, 0x402F_0400, 110_248))
        .unwrap_err()
        .to_string();
    assert!(err.contains("holds 109736 bytes"), "{err}");
    let err = check_gp_image(&mlo(false, 1000, 0x8000_0000, 1000))
        .unwrap_err()
        .to_string();
    assert!(err.contains("loads into"), "{err}");
    // 109 KiB at most: the image (without its GP header) must end by 0x4030B800.
    let max = 0x1B400 + 8;
    check_gp_image(&mlo(false, max, 0x402F_0400, max as usize)).unwrap();
    assert!(check_gp_image(&mlo(false, max + 4, 0x402F_0400, max as usize + 4)).is_err());
}

#[test]
fn kernel_headers() {
    let mut z = vec![0u8; 0x40];
    z[0x24..0x28].copy_from_slice(&0x016f_2818u32.to_le_bytes());
    assert_eq!(kernel_image_arch(&z).unwrap(), Arch::Arm);
    let mut i = vec![0u8; 0x40];
    i[0x38..0x3c].copy_from_slice(b"ARM\x64");
    assert_eq!(kernel_image_arch(&i).unwrap(), Arch::Aarch64);
    let gz = [0x1f, 0x8b, 8, 0];
    assert!(kernel_image_arch(&gz).is_err());
}

#[test]
fn kernel_magic() {
    let mut z = vec![0u8; 0x1000];
    z[0x24..0x28].copy_from_slice(&ZIMAGE_MAGIC.to_le_bytes());
    z[0x2c..0x30].copy_from_slice(&0x1000u32.to_le_bytes());
    assert_eq!(
        check_kernel(&z, Arch::Arm).unwrap(),
        "ARM zImage (4096 bytes)"
    );
    z[0x2c..0x30].copy_from_slice(&0x2000u32.to_le_bytes());
    assert!(check_kernel(&z, Arch::Arm).is_err());
    assert!(check_kernel(&z, Arch::Aarch64).is_err());
    let mut i = vec![0u8; 0x100];
    i[0x38..0x3c].copy_from_slice(b"ARM\x64");
    check_kernel(&i, Arch::Aarch64).unwrap();
}

#[test]
fn extlinux_as_u_boot_reads_it() {
    // pxe_utils' rules: keywords in any case, `linux` = `kernel`, `devicetree` =
    // `fdt`, the first initrd/fdt wins, `initrd=` in append counts, any other
    // keyword ends the label, comments only where a token starts, values verbatim.
    let c = parse_extlinux(
        "# c\nMENU title x\nlabel a\n  LINUX /a#conf\n  devicetree /a.dtb\n  \
         append x=1 initrd=/i1 y # not a comment\n  initrd /i2\n  kernel /lost\n\
         label b\n  kernel /k\r\n  menu default\n  fdt /b1.dtb\n  fdt /b2.dtb\n  \
         append lost\ntimeout 30\n",
    )
    .unwrap();
    assert_eq!(c.labels.len(), 2);
    let a = &c.labels[0];
    assert_eq!(a.kernel.as_deref(), Some("/a"));
    assert_eq!(a.fdt.as_deref(), Some("/a.dtb"));
    assert_eq!(a.initrd.as_deref(), Some("/i1"));
    assert_eq!(
        a.append.as_deref(),
        Some("x=1 initrd=/i1 y # not a comment")
    );
    let b = &c.labels[1];
    assert_eq!(b.kernel.as_deref(), Some("/k\r"), "CR kept, as U-Boot");
    assert_eq!(b.fdt.as_deref(), Some("/b1.dtb"));
    assert_eq!(b.append, None, "a second fdt ended the label");
    assert_eq!(
        c.ignored,
        ["/i2", "  kernel /lost", "/b2.dtb", "  append lost"]
    );
    assert_eq!(c.default.as_deref(), Some("b"), "menu default");
    assert_eq!(c.timeout, Some(30));
    assert!(parse_extlinux("label x\n kernel\n").is_err());
    assert!(parse_extlinux("label\n").is_err());
    // An unknown default: U-Boot tries the labels in order.
    let c = parse_extlinux("default z\nlabel y\n kernel /k\n").unwrap();
    assert_eq!(c.boot_label().unwrap().name, "y");
    assert_eq!(resolve("extlinux/extlinux.conf", "/vmlinuz"), "vmlinuz");
    assert_eq!(resolve("extlinux/extlinux.conf", "k"), "extlinux/k");
}

#[test]
fn extlinux_check_names_every_problem() {
    let board = crate::load_board("bananapi-m1").unwrap();
    let conf = parse_extlinux(
        "default benchboot\nlabel benchboot\n kernel /vmlinuz\n initrd /initrd.img\n \
         fdt /other.dtb\n append console=ttyS1,115200\n",
    )
    .unwrap();
    let mut read = |p: &str| -> Result<Vec<u8>> {
        match p {
            "vmlinuz" => Ok(vec![0u8; 0x100]),
            _ => bail!("no such file"),
        }
    };
    let err = check_extlinux(&conf, &board, &mut read)
        .unwrap_err()
        .to_string();
    for want in [
        "initrd \"/initrd.img\": no such file",
        "fdt \"/other.dtb\": no such file",
        "neither an ARM zImage",
        "lacks console=ttyS0,115200",
    ] {
        assert!(err.contains(want), "{want}: {err}");
    }
}
