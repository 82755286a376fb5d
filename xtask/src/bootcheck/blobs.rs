//! The loader and kernel blobs a U-Boot card carries, each checked in the format its
//! boot ROM, SPL or U-Boot loads (sources in the parent module's header): the Allwinner
//! eGON SPL, the TI GP image, U-Boot's legacy uImage / FIT, the ARM zImage and arm64 Image.

use anyhow::{bail, ensure, Context, Result};
use benchboot_board::Arch;

/// Seed of the eGON checksum (the checksum field's value while summing).
pub const EGON_CHECKSUM_SEED: u32 = 0x5F0A_6C39;
/// The most an Allwinner boot ROM loads as SPL (linux-sunxi.org BROM).
pub const EGON_MAX_BYTES: u32 = 32 * 1024;
/// Where the sunxi SPL finds U-Boot proper, from the start of its own blob (sector 80 of
/// the card, the SPL being at sector 16).
pub const SUNXI_U_BOOT_OFFSET: usize = 32 * 1024;
/// AM335x public SRAM the boot ROM downloads a GP image to (TRM, GP devices).
pub const AM335X_SRAM: std::ops::Range<u32> = 0x402F_0400..0x4030_B800;
/// ARM zImage magic at byte 0x24 (Linux Documentation/arch/arm/booting.rst).
pub(crate) const ZIMAGE_MAGIC: u32 = 0x016F_2818;
/// Legacy U-Boot image magic (include/image.h).
pub const UIMAGE_MAGIC: u32 = 0x2705_1956;
/// Flattened device tree magic (FIT images and DTBs).
pub const FDT_MAGIC: u32 = 0xD00D_FEED;

fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

pub(super) fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// What an eGON SPL header says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Egon {
    /// Bytes the boot ROM loads and checksums.
    pub length: u32,
    pub checksum: u32,
    /// U-Boot's SPL signature version (`SPL` + version at 0x14), if present.
    pub spl_version: Option<u8>,
    /// The device tree U-Boot's SPL was built for (SPL version 2 and later).
    pub dt_name: Option<String>,
}

/// The eGON checksum of `blob[..length]`: the word sum with the checksum field as seed.
pub fn egon_checksum(blob: &[u8], length: usize) -> u32 {
    blob[..length]
        .chunks_exact(4)
        .enumerate()
        .map(|(i, w)| {
            if i == 3 {
                EGON_CHECKSUM_SEED
            } else {
                u32::from_le_bytes([w[0], w[1], w[2], w[3]])
            }
        })
        .fold(0u32, u32::wrapping_add)
}

/// Checks an Allwinner eGON boot header at the start of `blob` as the boot ROM does.
///
/// # Errors
/// No branch instruction, no `eGON.BT0`, a length the boot ROM refuses or a wrong
/// checksum.
pub fn check_egon(blob: &[u8]) -> Result<Egon> {
    ensure!(
        blob.len() >= 0x30,
        "{} bytes: too short for an eGON header",
        blob.len()
    );
    ensure!(
        blob[3] == 0xEA,
        "no ARM branch at byte 0 ({:02x?}): the boot ROM jumps there",
        &blob[..4]
    );
    ensure!(
        &blob[4..12] == b"eGON.BT0",
        "no eGON.BT0 magic at byte 4 (found {:?})",
        String::from_utf8_lossy(&blob[4..12])
    );
    let checksum = le32(blob, 0x0c).unwrap_or(0);
    let length = le32(blob, 0x10).unwrap_or(0);
    ensure!(
        length > 0 && length.is_multiple_of(512),
        "eGON length {length}: must be a non-zero multiple of 512 on MMC"
    );
    ensure!(
        length <= EGON_MAX_BYTES,
        "eGON length {length}: the boot ROM loads at most {EGON_MAX_BYTES} bytes"
    );
    ensure!(
        length as usize <= blob.len(),
        "eGON length {length} runs past the blob ({} bytes)",
        blob.len()
    );
    let sum = egon_checksum(blob, length as usize);
    ensure!(
        sum == checksum,
        "eGON checksum {checksum:#010x} does not match the sum {sum:#010x} over {length} bytes"
    );
    let spl_version = (&blob[0x14..0x17] == b"SPL").then_some(blob[0x17]);
    let dt_name = match spl_version {
        Some(v) if v >= 2 => le32(blob, 0x20)
            .filter(|&o| o != 0 && (o as usize) < length as usize)
            .map(|o| {
                let s = &blob[o as usize..length as usize];
                let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
                String::from_utf8_lossy(&s[..end]).into_owned()
            }),
        _ => None,
    };
    Ok(Egon {
        length,
        checksum,
        spl_version,
        dt_name,
    })
}

/// A U-Boot image header: what kind and how many bytes it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UBootImage {
    /// Legacy uImage: 64-byte header + `data_bytes`, both CRCs checked.
    Legacy { data_bytes: u32, name: String },
    /// FIT: a device tree of `fdt_bytes` (external data may follow).
    Fit { fdt_bytes: u32 },
}

impl UBootImage {
    /// Bytes the image spans at least.
    pub fn bytes(&self) -> u64 {
        match self {
            UBootImage::Legacy { data_bytes, .. } => 64 + u64::from(*data_bytes),
            UBootImage::Fit { fdt_bytes } => u64::from(*fdt_bytes),
        }
    }
}

/// Checks a U-Boot image (legacy uImage with its CRCs, or FIT) at the start of `data`.
///
/// # Errors
/// Neither magic, a CRC mismatch, or a size past the end of `data`.
pub fn check_u_boot_image(data: &[u8]) -> Result<UBootImage> {
    match be32(data, 0) {
        Some(UIMAGE_MAGIC) => {
            ensure!(data.len() >= 64, "uImage header cut short");
            let mut header = data[..64].to_vec();
            let hcrc = be32(&header, 4).unwrap_or(0);
            header[4..8].fill(0);
            ensure!(
                crc32(&header) == hcrc,
                "uImage header CRC {hcrc:#010x} does not match"
            );
            let size = be32(data, 12).unwrap_or(0);
            let end = 64 + size as usize;
            ensure!(
                end <= data.len(),
                "uImage data of {size} bytes runs past the end ({} bytes)",
                data.len()
            );
            let dcrc = be32(data, 24).unwrap_or(0);
            ensure!(
                crc32(&data[64..end]) == dcrc,
                "uImage data CRC {dcrc:#010x} does not match"
            );
            let name = &data[32..64];
            let name_end = name.iter().position(|&b| b == 0).unwrap_or(32);
            Ok(UBootImage::Legacy {
                data_bytes: size,
                name: String::from_utf8_lossy(&name[..name_end]).into_owned(),
            })
        }
        Some(FDT_MAGIC) => {
            let size = be32(data, 4).unwrap_or(0);
            ensure!(
                size >= 40 && size as usize <= data.len(),
                "FIT of {size} bytes in {} bytes",
                data.len()
            );
            Ok(UBootImage::Fit { fdt_bytes: size })
        }
        _ => bail!(
            "no U-Boot image: neither uImage ({UIMAGE_MAGIC:#x}) nor FIT ({FDT_MAGIC:#x}) magic"
        ),
    }
}

pub(super) fn crc32(data: &[u8]) -> u32 {
    let mut c = flate2::Crc::new();
    c.update(data);
    c.sum()
}

/// What a TI GP image (MLO) says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpImage {
    /// True when a configuration header (TOC with `CHSETTINGS`) precedes the GP header.
    pub config_header: bool,
    /// Image size, the 8-byte GP header included.
    pub size: u32,
    pub load_address: u32,
}

/// Checks a TI GP image for an AM335x GP device: where the GP header is, that the file
/// holds what it announces and that it fits the SRAM the boot ROM copies it to.
///
/// # Errors
/// A size or load address the boot ROM cannot use.
pub fn check_gp_image(data: &[u8]) -> Result<GpImage> {
    // The TOC's first item: offset, size, 12 reserved bytes, a 12-byte name.
    let config_header = data.get(20..30) == Some(b"CHSETTINGS".as_slice());
    let at = if config_header { 512 } else { 0 };
    let size = le32(data, at).context("no GP header: file too short")?;
    let load_address = le32(data, at + 4).context("no GP header: file too short")?;
    ensure!(
        size > 8 && (size as usize) <= data.len() - at,
        "GP header size {size}: the file holds {} bytes from the header on",
        data.len() - at
    );
    ensure!(
        AM335X_SRAM.contains(&load_address)
            && u64::from(load_address) + u64::from(size) - 8 <= u64::from(AM335X_SRAM.end),
        "GP image of {size} bytes at {load_address:#010x}: the boot ROM loads into \
         {:#010x}..{:#010x} only",
        AM335X_SRAM.start,
        AM335X_SRAM.end
    );
    Ok(GpImage {
        config_header,
        size,
        load_address,
    })
}

/// The CPU architecture a kernel image is built for, read from its header.
///
/// - 32-bit ARM zImage: magic `0x016f2818` (little-endian) at byte 0x24
///   (Linux Documentation/arch/arm/booting.rst, "zImage header").
/// - arm64 Image: magic `ARM\x64` at byte 0x38 (Documentation/arch/arm64/booting.rst).
///
/// # Errors
/// When neither header is present (a compressed arm64 Image, or not a kernel).
pub fn kernel_image_arch(image: &[u8]) -> Result<Arch> {
    let le32 = |at: usize| {
        image
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    if le32(0x24) == Some(ZIMAGE_MAGIC) {
        return Ok(Arch::Arm);
    }
    if image.get(0x38..0x3c) == Some(b"ARM\x64") {
        return Ok(Arch::Aarch64);
    }
    bail!("neither an ARM zImage (magic 0x016f2818 at 0x24) nor an arm64 Image (ARM\\x64 at 0x38)")
}

/// Checks that `data` is a kernel image the board's boot loader can start: an ARM zImage
/// (`bootz`) for 32-bit boards, an arm64 Image (`booti`) for 64-bit ones (the header
/// magic read by [`kernel_image_arch`]); a zImage must hold the bytes its
/// start and end addresses announce.
///
/// # Errors
/// No kernel header, one for the other architecture, or a zImage cut short.
pub fn check_kernel(data: &[u8], arch: Arch) -> Result<String> {
    let found = kernel_image_arch(data)?;
    ensure!(found == arch, "a {found:?} kernel for an {arch:?} board");
    match arch {
        Arch::Arm => {
            let (start, end) = (le32(data, 0x28).unwrap_or(0), le32(data, 0x2c).unwrap_or(0));
            let len = end.wrapping_sub(start);
            ensure!(
                end > start && len as usize <= data.len(),
                "zImage spans {start:#x}..{end:#x} but the file has {} bytes",
                data.len()
            );
            Ok(format!("ARM zImage ({len} bytes)"))
        }
        Arch::Aarch64 => Ok(format!("arm64 Image ({} bytes)", data.len())),
    }
}
