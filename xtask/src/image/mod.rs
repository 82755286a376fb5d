//! `cargo xtask image --board NAME`: assembles `target/images/<board>.img` and its
//! manifest (`<board>.manifest.json`: every file, its source package and SHA-256).
//!
//! Plan first, then write: [`benchboot_image::layout::plan`] computes the partitions, this module
//! renders them. The image is written to a temporary file and renamed at the end, so a
//! failed build never leaves a half-written image under the final name.
//!
//! Reproducible: the same board and lock file give the same bytes; times, filesystem
//! ids and hash seeds come from a [`Stamp`] ([`crate::reproducible`]).

mod boot_config;
mod contents;
mod manifest;
mod render;
#[cfg(test)]
mod snapshot_tests;
#[cfg(test)]
mod tests;

pub use boot_config::{
    cmdline_txt, config_txt, extlinux_conf, loader_config, INITRAMFS_FILE, KERNEL_FILE,
};
pub use contents::{check_raw_blobs, BootFile, Contents, RawBlob};
pub use manifest::{Manifest, ManifestBlob, ManifestFile, ManifestPart};
pub use render::{read_fat_file, render, volume_label};

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use benchboot_board::{Board, BootConfig};

use crate::firmware::{self, CpuTarget};
use crate::packages::{self, Lock};
use crate::reproducible::Stamp;
use benchboot_image::layout::{self};
use benchboot_image::plans::PlanText;

/// Paths of a built image.
#[derive(Debug, Clone)]
pub struct Built {
    pub image: PathBuf,
    pub manifest: PathBuf,
    /// Wall time of each build phase (firmware, packages, modules+initramfs, driver
    /// chains, render, manifest, boot check), seconds.
    pub phases: Vec<crate::timing::Phase>,
}

/// Where `image` writes for `board`.
pub fn image_path(board: &Board) -> PathBuf {
    crate::target_dir()
        .join("images")
        .join(format!("{}.img", board.name))
}

/// Builds the firmware, fetches the pinned packages and writes image + manifest, with
/// the `standard` plan.
pub fn run(board: &Board) -> Result<Built> {
    run_to(board, &image_path(board))
}

/// As [`run`], into `image` (the manifest goes beside it as `<stem>.manifest.json`):
/// QEMU-only copies of a card are built from a stand-in board to their own path.
pub fn run_to(board: &Board, image: &Path) -> Result<Built> {
    run_with(board, image, &PlanText::standard())
}

/// As [`run_to`], with plan file `plan` built in as the default plan and written onto
/// the card's results partition as `plan.toml` (`cargo xtask image --plan`).
///
/// # Errors
/// The plan file's error (file, line, key), before anything is built.
pub fn run_with(board: &Board, image: &Path, plan: &PlanText) -> Result<Built> {
    let t0 = Instant::now();
    let mut phase = crate::timing::Recorder::default();
    // A bad plan file is refused before minutes of building.
    benchboot_image::plans::hardware(
        board,
        &layout::plan(&layout::Spec::default())?,
        Vec::new(),
        plan,
    )?;
    let init = firmware::build(&CpuTarget::of_board(board))?;
    phase.phase("firmware");
    let lock = Lock::load_repo()?;
    let (kernel_root, kernel_pkg) = packages::unpacked(&lock, &board.kernel.package)?;
    let mut pinned = vec![kernel_pkg];
    let loader_root = match &board.loader {
        Some(l) => {
            let (root, pkg) = packages::unpacked(&lock, &l.package)?;
            pinned.push(pkg);
            Some(root)
        }
        None => None,
    };
    let radio = crate::radio::files(board, &lock)?;
    pinned.extend(crate::radio::pinned(&radio, &lock)?);
    phase.phase("packages");
    let layout = layout::plan(&layout::Spec::default())?;
    let contents = contents::gather(
        board,
        &init,
        &kernel_root,
        loader_root.as_deref(),
        &layout,
        plan,
        radio,
    )?;
    phase.phase("modules+initramfs");
    let firmware: Vec<String> = contents.radio.iter().map(|f| f.path.clone()).collect();
    if let Some(report) = crate::drivers::check_board(board, &kernel_root, &firmware)? {
        anyhow::ensure!(
            report.problems.is_empty(),
            "the driver chains of {}'s hardware have {} gap(s); a board built so would \
             give no results where they are:\n  {}",
            board.name,
            report.problems.len(),
            report.problems.join("\n  ")
        );
        eprintln!(
            "image: driver chains proved on the hardware DTB: {} node(s), every one built in, \
             carried or waived",
            report.links.len()
        );
    }
    phase.phase("driver chains");
    let dir = image.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.", board.name))
        .suffix(".img.tmp")
        .tempfile_in(dir)?;
    render(
        tmp.path(),
        &layout,
        &contents,
        &Stamp::for_board(&board.name)?,
    )?;
    tmp.as_file().sync_all()?;
    tmp.persist(image)
        .with_context(|| format!("renaming into {}", image.display()))?;
    phase.phase("render");
    let elf = std::fs::read(firmware::unstripped(&init))?;
    let elf_path = image.with_extension("init.elf");
    crate::write_atomically(&elf_path, &elf)?;
    let init_elf = manifest::file_entry(
        elf_path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default(),
        &elf,
        &format!(
            "firmware/ ({}), unstripped: benchboot log --elf",
            board.triple
        ),
    );
    let manifest = manifest::build(board, image, &layout, &contents, pinned, init_elf)?;
    let manifest_path = image.with_extension("manifest.json");
    crate::write_atomically(
        &manifest_path,
        serde_json::to_string_pretty(&manifest)?.as_bytes(),
    )?;
    phase.phase("manifest");
    if board
        .loader
        .as_ref()
        .is_some_and(|l| l.config == BootConfig::Extlinux)
    {
        let report = crate::bootcheck::check_card(board, image, &layout)?;
        eprintln!("image: {}", report.summary());
        phase.phase("boot check");
    }
    eprintln!(
        "image: wrote {} ({} MiB) and {} in {:.1} s ({})",
        image.display(),
        layout.disk_bytes >> 20,
        manifest_path.display(),
        t0.elapsed().as_secs_f64(),
        phase.summary()
    );
    Ok(Built {
        image: image.to_owned(),
        manifest: manifest_path,
        phases: phase.into_parts(),
    })
}
