//! U-Boot's legacy image header (`mkimage -A <arch> -O linux -T ramdisk -C none`), put
//! in front of benchboot's initramfs for the LAVA TFTP route: LAVA's u-boot device
//! types (`add_header: u-boot`) pass the ramdisk's address to `bootz` without a size,
//! so U-Boot must read it from this header (U-Boot include/image.h,
//! `struct legacy_img_hdr`; all fields big-endian).

/// `IH_MAGIC`.
const MAGIC: u32 = 0x2705_1956;
/// `IH_OS_LINUX`.
const OS_LINUX: u8 = 5;
/// `IH_TYPE_RAMDISK`.
const TYPE_RAMDISK: u8 = 3;
/// `IH_COMP_NONE`: the kernel unpacks the gzip'd cpio itself.
const COMP_NONE: u8 = 0;
/// `IH_NMLEN`.
const NAME_BYTES: usize = 32;

/// The CPU architecture field (`IH_ARCH_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    /// `IH_ARCH_ARM` (2).
    Arm,
    /// `IH_ARCH_ARM64` (22).
    Arm64,
}

impl Arch {
    fn code(self) -> u8 {
        match self {
            Arch::Arm => 2,
            Arch::Arm64 => 22,
        }
    }
}

/// `data` (a gzip'd cpio) behind a legacy ramdisk header named `name` (cut to 31
/// bytes), stamped `time` (seconds since 1970: the image's reproducible time).
///
/// # Panics
/// When `data` is 4 GiB or more (a header field is 32 bits).
pub fn ramdisk(data: &[u8], name: &str, arch: Arch, time: u32) -> Vec<u8> {
    let size = u32::try_from(data.len()).expect("a ramdisk under 4 GiB");
    let mut h = Vec::with_capacity(64 + data.len());
    h.extend_from_slice(&MAGIC.to_be_bytes());
    h.extend_from_slice(&0u32.to_be_bytes()); // header CRC, below
    h.extend_from_slice(&time.to_be_bytes());
    h.extend_from_slice(&size.to_be_bytes());
    h.extend_from_slice(&0u32.to_be_bytes()); // load address: U-Boot keeps it in place
    h.extend_from_slice(&0u32.to_be_bytes()); // entry point: none for a ramdisk
    h.extend_from_slice(&crc32(data).to_be_bytes());
    h.extend_from_slice(&[OS_LINUX, arch.code(), TYPE_RAMDISK, COMP_NONE]);
    let mut n = [0u8; NAME_BYTES];
    let name = name.as_bytes();
    let len = name.len().min(NAME_BYTES - 1);
    n[..len].copy_from_slice(&name[..len]);
    h.extend_from_slice(&n);
    let hcrc = crc32(&h);
    h[4..8].copy_from_slice(&hcrc.to_be_bytes());
    h.extend_from_slice(data);
    h
}

fn crc32(data: &[u8]) -> u32 {
    let mut c = flate2::Crc::new();
    c.update(data);
    c.sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootcheck::blobs::{check_u_boot_image, UBootImage};

    #[test]
    fn the_header_is_what_u_boot_and_bootcheck_read() {
        let data = b"\x1f\x8b gzip'd cpio stand-in".repeat(100);
        let img = ramdisk(
            &data,
            "benchboot initramfs bananapi-m1 (long name)",
            Arch::Arm,
            1_704_067_200,
        );
        assert_eq!(img.len(), 64 + data.len());
        assert_eq!(&img[..4], &[0x27, 0x05, 0x19, 0x56]);
        assert_eq!(&img[8..12], &1_704_067_200u32.to_be_bytes());
        assert_eq!(img[28..32], [5, 2, 3, 0], "linux, arm, ramdisk, none");
        assert_eq!(
            check_u_boot_image(&img).unwrap(),
            UBootImage::Legacy {
                data_bytes: data.len() as u32,
                name: "benchboot initramfs bananapi-m1".into()
            }
        );
        assert_eq!(&img[64..], &data[..]);
        // One flipped byte of the data fails its CRC.
        let mut bad = img.clone();
        bad[100] ^= 1;
        assert!(check_u_boot_image(&bad).is_err());
        assert_eq!(ramdisk(b"x", "a", Arch::Arm64, 0)[29], 22);
    }
}
