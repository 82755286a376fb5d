//! The manifest written beside an image (`<board>.manifest.json`): every partition, file
//! and raw blob with its bytes, SHA-256 and source package, the radio (its files by
//! package, the QEMU-only ones marked), the unstripped init and the module load order
//! per plan.

use std::path::Path;

use anyhow::Result;
use benchboot_board::{Board, QemuWifi};
use benchboot_plan::DEFAULT_PLAN;
use serde::Serialize;

use super::contents::Contents;
use crate::initramfs::Node;
use crate::packages::{self};
use crate::radio::RadioRole;
use benchboot_image::layout::{Layout, Role};

/// The manifest written beside the image.
#[derive(Debug, Serialize)]
pub struct Manifest {
    pub board: String,
    pub image: String,
    pub image_bytes: u64,
    pub image_sha256: String,
    /// The MBR disk signature, as `fdisk` prints it (`0x1a2b3c4d`): PID 1 finds the card
    /// by it ([`benchboot_image::layout::disk_signature`]).
    pub disk_signature: String,
    pub packages: Vec<packages::Pinned>,
    pub partitions: Vec<ManifestPart>,
    pub boot_files: Vec<ManifestFile>,
    /// The results partition's files as built (the plan file; PID 1 adds results).
    pub results_files: Vec<ManifestFile>,
    /// Boot loader blobs written raw before the first partition, by offset.
    pub raw_blobs: Vec<ManifestBlob>,
    pub initramfs_files: Vec<ManifestFile>,
    /// The board's radio as its file says (none without one).
    pub wifi: Option<ManifestWifi>,
    /// Every radio file of the initramfs (firmware, regulatory.db, QEMU's stand-in AP)
    /// with the package and the file in it it came from.
    pub radio_files: Vec<ManifestRadioFile>,
    /// The unstripped init beside the image (`<board>.init.elf`): `benchboot log` decodes
    /// the init's `log.defmt` with it.
    pub init_elf: ManifestFile,
    /// Module load order per plan.
    pub modules: Vec<(String, Vec<String>)>,
}

#[derive(Debug, Serialize)]
pub struct ManifestPart {
    pub number: u8,
    pub role: String,
    pub start_bytes: u64,
    pub size_bytes: u64,
    pub mbr_type: String,
}

#[derive(Debug, Serialize)]
pub struct ManifestFile {
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
    pub source: String,
}

/// The radio of the board file (`[wifi]`) and of its QEMU plan (`qemu.wifi`).
#[derive(Debug, Serialize)]
pub struct ManifestWifi {
    /// `[wifi]`: none on a board without its own radio.
    pub chip: Option<String>,
    pub driver: Option<String>,
    /// `2.4`, `5`.
    pub bands: Vec<String>,
    pub widths_mhz: Vec<u32>,
    pub streams: Option<u8>,
    /// What no package provides (`wifi.firmware-missing`).
    pub firmware_missing: Option<String>,
    /// `hwsim` when the QEMU plan has mac80211_hwsim radios and the stand-in AP.
    pub qemu: Option<String>,
}

/// One radio file of the initramfs.
#[derive(Debug, Serialize)]
pub struct ManifestRadioFile {
    /// Its path in the initramfs: `/lib/firmware/brcm/brcmfmac43430-sdio.bin`.
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
    pub package: String,
    pub version: String,
    /// The file in the package, links followed: `lib/firmware/cypress/cyfmac43430-sdio.bin`.
    pub from: String,
    /// `firmware`, `regulatory` or `stand-in-ap`.
    pub role: RadioRole,
    /// Only for QEMU runs (the stand-in AP): never needed on hardware.
    pub qemu_only: bool,
}

/// A boot loader blob written raw on the card.
#[derive(Debug, Serialize)]
pub struct ManifestBlob {
    /// Byte offset on the card.
    pub offset_bytes: u64,
    pub bytes: u64,
    pub sha256: String,
    /// Package and file inside it, e.g. `u-boot-sunxi (usr/lib/u-boot/Bananapi/...)`.
    pub source: String,
}

pub(super) fn file_entry(path: String, data: &[u8], source: &str) -> ManifestFile {
    ManifestFile {
        path,
        bytes: data.len() as u64,
        sha256: crate::sha256_hex(data),
        source: source.to_owned(),
    }
}

pub(super) fn build(
    board: &Board,
    image: &Path,
    layout: &Layout,
    c: &Contents,
    packages: Vec<packages::Pinned>,
    init_elf: ManifestFile,
) -> Result<Manifest> {
    let modules = |plan: &str| -> Vec<String> {
        c.initramfs
            .iter()
            .find(|(p, _, _)| p.ends_with(&format!("/{plan}.json")))
            .and_then(|(_, n, _)| match n {
                Node::File(d, _) => serde_json::from_slice::<benchboot_plan::Plan>(d).ok(),
                _ => None,
            })
            .map(|p| p.modules)
            .unwrap_or_default()
    };
    Ok(Manifest {
        board: board.name.clone(),
        image: image
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default(),
        image_bytes: layout.disk_bytes,
        image_sha256: crate::sha256_file(image)?,
        disk_signature: benchboot_plan::boot_disk::Signature(
            benchboot_image::layout::disk_signature(&board.name, layout),
        )
        .to_string(),
        packages,
        partitions: layout
            .parts
            .iter()
            .map(|p| ManifestPart {
                number: p.number,
                role: match p.role {
                    Role::Boot => "boot".into(),
                    Role::Results => "results".into(),
                    Role::Journal => "journal".into(),
                    Role::Test(fs) => format!("test-{}", fs.name()),
                },
                start_bytes: p.offset_bytes(),
                size_bytes: p.size_bytes(),
                mbr_type: format!("{:#04x}", p.mbr_type),
            })
            .collect(),
        boot_files: c
            .boot_files
            .iter()
            .map(|f| file_entry(format!("p1:/{}", f.path), &f.data, &f.source))
            .collect(),
        results_files: c
            .results_files
            .iter()
            .map(|f| file_entry(format!("p2:/{}", f.path), &f.data, &f.source))
            .collect(),
        raw_blobs: {
            let mut blobs: Vec<ManifestBlob> = c
                .raw_blobs
                .iter()
                .map(|b| ManifestBlob {
                    offset_bytes: b.offset,
                    bytes: b.data.len() as u64,
                    sha256: crate::sha256_hex(&b.data),
                    source: b.source.clone(),
                })
                .collect();
            blobs.sort_by_key(|b| b.offset_bytes);
            blobs
        },
        initramfs_files: c
            .initramfs
            .iter()
            .filter_map(|(p, n, s)| match n {
                Node::File(d, _) => Some(file_entry(format!("/{p}"), d, s)),
                _ => None,
            })
            .collect(),
        wifi: wifi(board),
        radio_files: c
            .radio
            .iter()
            .map(|f| ManifestRadioFile {
                path: format!("/{}", f.path),
                bytes: f.data.len() as u64,
                sha256: crate::sha256_hex(&f.data),
                package: f.package.clone(),
                version: f.version.clone(),
                from: f.from.clone(),
                role: f.role,
                qemu_only: f.qemu_only,
            })
            .collect(),
        init_elf,
        modules: vec![
            (DEFAULT_PLAN.into(), modules(DEFAULT_PLAN)),
            ("qemu".into(), modules("qemu")),
        ],
    })
}

fn wifi(board: &Board) -> Option<ManifestWifi> {
    let w = board.wifi();
    let hwsim = board
        .qemu
        .as_ref()
        .is_some_and(|q| q.wifi == QemuWifi::Hwsim);
    if w.is_none() && !hwsim {
        return None;
    }
    Some(ManifestWifi {
        chip: w.map(|w| w.chip.clone()),
        driver: w.map(|w| w.driver.clone()),
        bands: w
            .map(|w| w.bands.iter().map(|b| b.name().to_owned()).collect())
            .unwrap_or_default(),
        widths_mhz: w.map(|w| w.widths_mhz.clone()).unwrap_or_default(),
        streams: w.map(|w| w.streams),
        firmware_missing: w.and_then(|w| w.firmware_missing.clone()),
        qemu: hwsim.then(|| "hwsim".to_owned()),
    })
}
