//! Structural checks of a built card for boards booted by U-Boot (`config = "extlinux"`
//! loaders): what the boot ROM, the SPL and U-Boot's distro boot look for, checked on the
//! image itself. The BeagleBone Black and the Banana Pi M1 have no QEMU machine, so this
//! is all that tests their cards; the QEMU-only copy of a stand-in card is checked the
//! same way before it boots.
//!
//! Formats, each from its documented source:
//! - MBR: the boot ROMs and U-Boot's distro boot take the partition with the active flag
//!   (0x80), else partition 1 (U-Boot doc/develop/distro.rst); FAT boot partition.
//! - Allwinner eGON boot header (linux-sunxi.org Boot0; U-Boot include/sunxi_image.h):
//!   an ARM branch, `eGON.BT0` at 4, checksum at 0x0c, length at 0x10. The checksum is
//!   the 32-bit little-endian word sum over `length` bytes with the checksum field taken
//!   as the seed 0x5F0A6C39; `length` is a multiple of 512 on MMC and the boot ROM loads
//!   at most 32 KiB. U-Boot's SPL adds `SPL` + version at 0x14 and, from version 2, the
//!   offset of its device-tree name at 0x20. The SPL reads U-Boot proper from card sector
//!   80 (40 KiB: the blob's offset 32 KiB; CONFIG_SYS_MMCSD_RAW_MODE_U_BOOT_SECTOR=0x50).
//! - TI GP image (AM335x TRM "image format", U-Boot tools/omapimage.c): an optional
//!   512-byte configuration header (a TOC naming `CHSETTINGS`), then the GP header: size
//!   of the image including the 8-byte header, and the load address. On GP devices the
//!   boot ROM copies it to public SRAM from 0x402F0400, at most 109 KiB (to 0x4030B800).
//! - U-Boot images: legacy uImage (magic 0x27051956, big-endian 64-byte header with CRC-32
//!   of header and data, include/image.h) or FIT (a flattened device tree, 0xd00dfeed).
//! - ARM zImage: magic 0x016F2818 at 0x24, start and end addresses at 0x28 / 0x2c
//!   (Linux Documentation/arch/arm/booting.rst); arm64 Image: `ARM\x64` at 0x38.
//! - extlinux.conf as U-Boot's boot/pxe_utils.c reads it: see [`parse_extlinux`].

pub(crate) mod blobs;
mod extlinux;
#[cfg(test)]
pub(crate) mod tests;

pub use blobs::{
    check_egon, check_gp_image, check_kernel, check_u_boot_image, egon_checksum, kernel_image_arch,
    Egon, GpImage, UBootImage, AM335X_SRAM, EGON_CHECKSUM_SEED, EGON_MAX_BYTES, FDT_MAGIC,
    SUNXI_U_BOOT_OFFSET, UIMAGE_MAGIC,
};
pub use extlinux::{
    check_extlinux, parse_extlinux, resolve, BootLabel, Extlinux, Label, EXTLINUX_CONF,
};

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use anyhow::{bail, ensure, Context, Result};
use benchboot_board::{Board, BootConfig};
use benchboot_card::{self as card, Partition};

use benchboot_image::layout::{self, Layout};

/// A loader blob written raw to the card, as [`check_card`] found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedBlob {
    /// U-Boot's output name, e.g. `u-boot-sunxi-with-spl.bin`.
    pub file: String,
    /// Byte offset on the card.
    pub offset: u64,
    /// Bytes it spans from `offset` (the SPL and the U-Boot image behind it).
    pub span: u64,
    /// What the format check found, e.g. `eGON SPL of 24576 bytes (...)`.
    pub what: String,
}

/// A loader file on the boot partition, as [`check_card`] found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedFile {
    /// Name on the boot partition, e.g. `MLO`.
    pub file: String,
    /// What the format check found, e.g. `GP image of ... bytes for 0x402f0400`.
    pub what: String,
}

/// What [`check_card`] found.
#[derive(Debug, Clone)]
pub struct CardReport {
    /// The partition the boot ROM and distro boot take (active flag).
    pub boot_partition: Partition,
    /// The loader's raw blobs in the gap before p1, as checked.
    pub raw_blobs: Vec<CheckedBlob>,
    /// The loader's files on the boot partition, as checked.
    pub loader_files: Vec<CheckedFile>,
    pub extlinux: Extlinux,
    pub label: BootLabel,
}

impl CardReport {
    /// One line for logs.
    pub fn summary(&self) -> String {
        let mut parts = vec![format!(
            "boot partition p{} (active, FAT) at {} MiB",
            self.boot_partition.number,
            self.boot_partition.offset >> 20
        )];
        for b in &self.raw_blobs {
            parts.push(format!(
                "{} at {}..{}: {}",
                b.file,
                b.offset,
                b.offset + b.span,
                b.what
            ));
        }
        for f in &self.loader_files {
            parts.push(format!("{}: {}", f.file, f.what));
        }
        parts.push(format!(
            "extlinux label {}: {} ({}), {}, {}, append {:?}",
            self.label.name,
            self.label.kernel,
            self.label.kernel_kind,
            self.label.initrd,
            self.label.fdt.as_deref().unwrap_or("no fdt"),
            self.label.append
        ));
        format!("boot check passed: {}", parts.join("; "))
    }
}

/// Checks a built card of a U-Boot board against the board file and the layout: the MBR
/// (layout as planned, one active FAT partition: p1), the loader's raw blobs in the gap
/// before p1 and its files on p1 in the formats their boot ROM / SPL load, and the
/// extlinux.conf distro boot reads ([`check_extlinux`]).
///
/// # Errors
/// A board without an `extlinux` loader, or every problem found.
pub fn check_card(board: &Board, image: &Path, layout: &Layout) -> Result<CardReport> {
    let Some(loader) = board
        .loader
        .as_ref()
        .filter(|l| l.config == BootConfig::Extlinux)
    else {
        bail!(
            "{}: the boot check covers U-Boot (extlinux) loaders only",
            board.name
        );
    };
    let mut disk = File::open(image).with_context(|| format!("opening {}", image.display()))?;
    let mut problems: Vec<String> = Vec::new();

    // The partition table: as planned, and exactly one active partition, p1, FAT.
    let parts = card::partitions(&mut disk)?;
    ensure!(!parts.is_empty(), "no MBR partition table");
    for want in &layout.parts {
        match parts.iter().find(|p| p.number == want.number) {
            Some(p)
                if (p.offset, p.len, p.mbr_type)
                    == (want.offset_bytes(), want.size_bytes(), want.mbr_type) => {}
            Some(p) => problems.push(format!(
                "p{}: type {:#04x} at {}+{} bytes, planned {:#04x} at {}+{}",
                p.number,
                p.mbr_type,
                p.offset,
                p.len,
                want.mbr_type,
                want.offset_bytes(),
                want.size_bytes()
            )),
            None => problems.push(format!("p{} is missing", want.number)),
        }
    }
    let mbr = mbrman::MBR::read_from(&mut disk, layout::SECTOR as u32)?;
    let active: Vec<usize> = mbr
        .iter()
        .filter(|(_, e)| e.is_used() && e.boot == mbrman::BOOT_ACTIVE)
        .map(|(i, _)| i)
        .collect();
    ensure!(
        active == [1],
        "active partitions {active:?}: the boot ROM and distro boot need p1 alone marked active"
    );
    let boot = *parts
        .iter()
        .find(|p| p.number == 1)
        .context("no partition 1")?;
    if !boot.is_fat_type() {
        problems.push(format!("p1 has type {:#04x}, not FAT", boot.mbr_type));
    }
    let first_part = parts.iter().map(|p| p.offset).min().unwrap_or(0);

    // Raw blobs, in the gap between the MBR and the first partition.
    let mut raw_blobs = Vec::new();
    for blob in &loader.raw {
        let mut head = vec![0u8; usize::try_from(first_part.saturating_sub(blob.offset))?];
        disk.seek(SeekFrom::Start(blob.offset))?;
        disk.read_exact(&mut head)
            .with_context(|| format!("reading {} at {}", blob.file, blob.offset))?;
        match check_raw(&blob.file, &head, board) {
            Ok((span, what)) => raw_blobs.push(CheckedBlob {
                file: blob.file.clone(),
                offset: blob.offset,
                span,
                what,
            }),
            Err(e) => problems.push(format!("{} at byte {}: {e:#}", blob.file, blob.offset)),
        }
    }

    // Loader files on the boot partition's root, where the boot ROM / SPL look.
    let mut read =
        |name: &str| -> Result<Vec<u8>> { Ok(card::read_fat_file(&mut disk, &boot, name)?) };
    let mut loader_files = Vec::new();
    for f in &loader.files {
        match read(f).and_then(|d| check_file(f, &d)) {
            Ok(what) => loader_files.push(CheckedFile {
                file: f.clone(),
                what,
            }),
            Err(e) => problems.push(format!("p1:/{f}: {e:#}")),
        }
    }

    let conf_text = read(EXTLINUX_CONF)
        .and_then(|d| Ok(String::from_utf8(d)?))
        .with_context(|| format!("p1:/{EXTLINUX_CONF}"))?;
    let extlinux = parse_extlinux(&conf_text).context(EXTLINUX_CONF)?;
    let label = match check_extlinux(&extlinux, board, &mut read) {
        Ok(l) => Some(l),
        Err(e) => {
            problems.push(format!("{EXTLINUX_CONF}: {e:#}"));
            None
        }
    };
    ensure!(
        problems.is_empty(),
        "{}: {} problem(s):\n{}",
        image.display(),
        problems.len(),
        problems.join("\n")
    );
    Ok(CardReport {
        boot_partition: boot,
        raw_blobs,
        loader_files,
        extlinux,
        label: label.expect("checked"),
    })
}

/// Checks a raw blob by U-Boot's output name; returns the bytes it spans on the card and
/// a description. `head` runs from the blob's offset to the first partition.
fn check_raw(file: &str, head: &[u8], board: &Board) -> Result<(u64, String)> {
    match file {
        "u-boot-sunxi-with-spl.bin" => {
            let egon = check_egon(head)?;
            // U-Boot's SPL is built for one board: its device tree must be the card's.
            let want = board
                .kernel
                .dtb
                .as_deref()
                .map(|d| d.trim_end_matches(".dtb"));
            if let (Some(dt), Some(want)) = (&egon.dt_name, want) {
                ensure!(
                    dt == want,
                    "the SPL was built for {dt}, the card's DTB is {want}.dtb"
                );
            }
            let proper = head
                .get(SUNXI_U_BOOT_OFFSET..)
                .context("no room for U-Boot proper before the first partition")?;
            let image = check_u_boot_image(proper)
                .context("U-Boot proper, where the SPL reads it (blob offset 32 KiB)")?;
            let span = SUNXI_U_BOOT_OFFSET as u64 + image.bytes();
            Ok((
                span,
                format!(
                    "eGON SPL of {} bytes (checksum {:#010x} valid, built for {}) + {} at +32 KiB",
                    egon.length,
                    egon.checksum,
                    egon.dt_name.as_deref().unwrap_or("?"),
                    describe_image(&image)
                ),
            ))
        }
        other => bail!("no format check for a raw blob named {other}"),
    }
}

fn describe_image(image: &UBootImage) -> String {
    match image {
        UBootImage::Legacy { data_bytes, name } => {
            format!("uImage {name:?} ({data_bytes} bytes, CRCs valid)")
        }
        UBootImage::Fit { fdt_bytes } => format!("FIT ({fdt_bytes} bytes of tree)"),
    }
}

/// Checks a loader file of the boot partition by U-Boot's output name.
fn check_file(file: &str, data: &[u8]) -> Result<String> {
    match file {
        "MLO" => {
            let gp = check_gp_image(data)?;
            Ok(format!(
                "GP image of {} bytes for {:#010x}{}",
                gp.size,
                gp.load_address,
                if gp.config_header {
                    " after a CHSETTINGS configuration header"
                } else {
                    ""
                }
            ))
        }
        "u-boot.img" => Ok(describe_image(&check_u_boot_image(data)?)),
        _ => Ok(format!("{} bytes", data.len())),
    }
}
