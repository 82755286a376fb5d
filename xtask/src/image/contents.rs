//! Everything an image is made of, gathered before anything is written: boot files
//! (kernel, DTB, initramfs, loader files and configuration), raw loader blobs and the
//! initramfs entries (with a radio's firmware, regulatory.db and QEMU's stand-in AP:
//! [`crate::radio`]), each with its source.

use std::path::{Path, PathBuf};

use anyhow::{ensure, Context, Result};
use benchboot_board::{Board, Loader, SHARED_FILE};
use benchboot_plan::{
    CARD_FACTS_FILE, CARD_PLAN_FILE, IMAGE_FACTS_PATH, MODULES_ALIAS_PATH, MODULES_DIR, PLANS_DIR,
};

use super::boot_config::{cmdline_txt, loader_config, INITRAMFS_FILE, KERNEL_FILE};
use crate::dtb::apply_dtb_fixups;
use crate::initramfs::{self, Node};
use benchboot_image::layout::{self, Layout};
use benchboot_image::plans;
use benchboot_image::plans::PlanText;

use crate::modules;
use crate::radio::{RadioFile, RadioRole};

/// Everything an image is made of, before rendering.
pub struct Contents {
    /// The files of the boot partition.
    pub boot_files: Vec<BootFile>,
    /// Boot loader blobs written raw before the first partition.
    pub raw_blobs: Vec<RawBlob>,
    /// The initramfs entries: (path in the archive, node, source).
    pub initramfs: Vec<(String, Node, String)>,
    /// The files of the FAT results partition: the plan file PID 1 reads at boot
    /// ([`benchboot_plan::CARD_PLAN_FILE`]), which a user may replace.
    pub results_files: Vec<BootFile>,
    /// The radio's files among [`Contents::initramfs`], for the manifest.
    pub radio: Vec<RadioFile>,
}

/// One file of a FAT partition of the card: the boot partition, or the results
/// partition (its plan file).
#[derive(Debug, Clone)]
pub struct BootFile {
    /// Path on the partition, `/`-separated, e.g. `extlinux/extlinux.conf`.
    pub path: String,
    pub data: Vec<u8>,
    /// Where it came from (package, board file), for the manifest.
    pub source: String,
}

impl BootFile {
    pub fn new(path: impl Into<String>, data: Vec<u8>, source: impl Into<String>) -> BootFile {
        BootFile {
            path: path.into(),
            data,
            source: source.into(),
        }
    }
}

/// A boot loader blob written raw to the card, before the first partition.
#[derive(Debug, Clone)]
pub struct RawBlob {
    /// Byte offset on the card.
    pub offset: u64,
    pub data: Vec<u8>,
    /// Package and file inside it, for the manifest.
    pub source: String,
}

/// Finds `name` anywhere under `dir` (arm64 DTBs sit in vendor sub-folders).
fn find_file(dir: &Path, name: &str) -> Result<PathBuf> {
    crate::walk_files(dir)?
        .into_iter()
        .find(|p| p.file_name().is_some_and(|f| f == name))
        .with_context(|| format!("{name} is not in {}", dir.display()))
}

/// Reads one file of a loader from its unpacked package.
fn loader_file(loader: &Loader, root: &Path, file: &str) -> Result<Vec<u8>> {
    let p = root.join(&loader.dir).join(file);
    std::fs::read(&p).with_context(|| {
        format!(
            "boards/{SHARED_FILE}: loaders.{}: {file} is not in package {} ({})",
            loader.name,
            loader.package,
            p.display()
        )
    })
}

/// Adds `path` (relative) with the folders above it that `entries` lacks, parents first
/// (the cpio order the kernel needs).
fn push_with_parents(entries: &mut Vec<Entry>, path: &str, node: Node, source: String) {
    let mut at = 0;
    while let Some(i) = path[at..].find('/') {
        let dir = &path[..at + i];
        if !entries.iter().any(|(p, _, _)| p == dir) {
            entries.push((dir.to_owned(), Node::Dir, "benchboot".into()));
        }
        at += i + 1;
    }
    entries.push((path.to_owned(), node, source));
}

/// One initramfs entry: path (relative, no leading `/`), node, where it came from.
type Entry = (String, Node, String);

/// A module the image carries: its name and the `.ko` file.
type ModuleFile = (String, PathBuf);

/// Everything the image of `board` carries: the boot partition's files (loader, kernel,
/// DTB, command line, initramfs), the loader's raw blobs, the initramfs's entries (PID 1
/// `init`, the plans, the modules and their alias table, the radio's files) and the
/// results partition's files.
///
/// # Errors
/// A file a board file names is missing from its package, a plan does not validate, raw
/// blobs collide, or a file cannot be read; each names the board file and key.
pub(super) fn gather(
    board: &Board,
    init: &Path,
    kernel_root: &Path,
    loader_root: Option<&Path>,
    layout: &Layout,
    plan_file: &PlanText,
    radio: Vec<RadioFile>,
) -> Result<Contents> {
    let board_file = format!("boards/{}.toml", board.name);
    let (mut boot_files, raw_blobs) = loader_files(board, loader_root, layout, &board_file)?;
    boot_files.extend(kernel_files(board, kernel_root, &board_file)?);
    let (hw_modules, qemu_modules) = module_files(board, kernel_root, &board_file)?;
    let names = |v: &[ModuleFile]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    let plans = plans::all(
        board,
        layout,
        names(&hw_modules),
        names(&qemu_modules),
        plan_file,
    )?;
    for (name, plan) in &plans {
        plan.validate()
            .with_context(|| format!("{board_file}: plan `{name}`"))?;
    }
    let mut initramfs = base_entries(board, init)?;
    for (name, plan) in &plans {
        let json = serde_json::to_vec_pretty(plan)?;
        initramfs.push((
            format!("{}/{name}.json", rel(PLANS_DIR)),
            Node::File(json, 0o644),
            "xtask plans".into(),
        ));
    }
    initramfs.push((
        rel(IMAGE_FACTS_PATH),
        Node::File(
            serde_json::to_vec_pretty(&plans::image_facts(board, layout))?,
            0o644,
        ),
        "xtask plans (card partitions, boot disk, buses)".into(),
    ));
    initramfs.extend(module_entries(&qemu_modules, &board.kernel.package)?);
    radio_entries(&mut initramfs, &radio, &board_file)?;
    let archive = initramfs::build(
        &initramfs
            .iter()
            .map(|(p, n, _)| (p.clone(), n.clone()))
            .collect::<Vec<_>>(),
    )?;
    boot_files.push(BootFile::new(
        INITRAMFS_FILE,
        archive,
        "benchboot initramfs",
    ));
    let results_files = vec![
        BootFile::new(
            CARD_PLAN_FILE,
            plan_file.text.clone().into_bytes(),
            plan_file.file.clone(),
        ),
        BootFile::new(
            CARD_FACTS_FILE,
            serde_json::to_vec_pretty(&plans::image_facts(board, layout))?,
            "xtask plans (what `benchboot plan write` checks a plan against)",
        ),
    ];
    Ok(Contents {
        boot_files,
        raw_blobs,
        initramfs,
        results_files,
        radio,
    })
}

/// A path of the board's file system as an initramfs path (no leading `/`).
fn rel(p: &str) -> String {
    p.trim_start_matches('/').to_owned()
}

/// The loader's files and its configuration on the boot partition, and its raw blobs
/// (checked against each other, the MBR and the first partition).
fn loader_files(
    board: &Board,
    loader_root: Option<&Path>,
    layout: &Layout,
    board_file: &str,
) -> Result<(Vec<BootFile>, Vec<RawBlob>)> {
    let mut boot_files = Vec::new();
    let mut raw_blobs = Vec::new();
    if let (Some(l), Some(root)) = (&board.loader, loader_root) {
        for f in &l.files {
            boot_files.push(BootFile::new(f, loader_file(l, root, f)?, &l.package));
        }
        for b in &l.raw {
            let source = format!("{} ({}/{})", l.package, l.dir, b.file);
            raw_blobs.push(RawBlob {
                offset: b.offset,
                data: loader_file(l, root, &b.file)?,
                source,
            });
        }
        if let Some((path, text)) = loader_config(board) {
            boot_files.push(BootFile::new(path, text.into_bytes(), board_file));
        }
    }
    let first_part = layout
        .parts
        .iter()
        .map(|p| p.offset_bytes())
        .min()
        .unwrap_or(0);
    check_raw_blobs(&raw_blobs, first_part)
        .with_context(|| format!("boards/{SHARED_FILE}: loaders raw blobs of {board_file}"))?;
    Ok((boot_files, raw_blobs))
}

/// The kernel, the DTB (its `dtb-fixups` applied) and `cmdline.txt`.
fn kernel_files(board: &Board, kernel_root: &Path, board_file: &str) -> Result<Vec<BootFile>> {
    let release = &board.kernel.release;
    let kpkg = &board.kernel.package;
    let kernel = kernel_root.join("boot").join(format!("vmlinuz-{release}"));
    let kernel_data = std::fs::read(&kernel).with_context(|| {
        format!(
            "{board_file}: kernel.release: {} not found",
            kernel.display()
        )
    })?;
    let mut files = vec![BootFile::new(KERNEL_FILE, kernel_data, kpkg)];
    if let Some(dtb_name) = &board.kernel.dtb {
        let dtb_src = find_file(
            &kernel_root
                .join("usr/lib")
                .join(format!("linux-image-{release}")),
            dtb_name,
        )
        .with_context(|| format!("{board_file}: kernel.dtb"))?;
        let dtb = apply_dtb_fixups(&std::fs::read(&dtb_src)?, &board.kernel.dtb_fixups)
            .with_context(|| format!("{board_file}: kernel.dtb-fixups"))?;
        files.push(BootFile::new(dtb_name, dtb, format!("{kpkg} + dtb-fixups")));
    }
    files.push(BootFile::new(
        "cmdline.txt",
        cmdline_txt(board).into_bytes(),
        board_file,
    ));
    Ok(files)
}

/// The modules of the hardware plan and of the QEMU plan, in load order: the hardware
/// plan loads the board's set, the links' (gadget, Ethernet, USB Ethernet adapters, the
/// WiFi radio) and the extra storage's; the QEMU plan adds its own (QEMU's radios among
/// them) and keeps the hardware plan's list as its prefix.
fn module_files(
    board: &Board,
    kernel_root: &Path,
    board_file: &str,
) -> Result<(Vec<ModuleFile>, Vec<ModuleFile>)> {
    let release = &board.kernel.release;
    let hw_wanted = crate::drivers::hardware_modules(board);
    let mut hw_modules = modules::resolve(kernel_root, release, &hw_wanted).with_context(|| {
        format!(
            "{board_file}: modules.load / gadget.modules / ethernet.modules / \
                 usb-ethernet.modules / wifi.modules / storage.extra.modules"
        )
    })?;
    let mut qemu_wanted = hw_wanted.clone();
    if let Some(q) = &board.qemu {
        qemu_wanted.extend(q.modules.iter().cloned());
    }
    let mut qemu_modules = modules::resolve(kernel_root, release, &qemu_wanted)
        .with_context(|| format!("{board_file}: qemu.modules"))?;
    // benchboot's /dev/vcio (modules.vcio, xtask/src/vcio.rs), last: it needs only the
    // firmware driver every flavour builds in.
    if let Some(ko) = crate::vcio::for_board(board, kernel_root)? {
        qemu_modules.insert(hw_modules.len(), (crate::vcio::MODULE.into(), ko.clone()));
        hw_modules.push((crate::vcio::MODULE.into(), ko));
    }
    Ok((hw_modules, qemu_modules))
}

/// The initramfs's folders, its two device nodes and PID 1 (`init`, from `init`).
fn base_entries(board: &Board, init: &Path) -> Result<Vec<Entry>> {
    let mut entries: Vec<Entry> = Vec::new();
    for d in ["dev", "proc", "sys", "mnt", "results", "etc", "lib"] {
        entries.push((d.into(), Node::Dir, "benchboot".into()));
    }
    entries.push((rel(PLANS_DIR), Node::Dir, "benchboot".into()));
    entries.push((rel(MODULES_DIR), Node::Dir, "benchboot".into()));
    entries.push((
        "dev/console".into(),
        Node::CharDev(5, 1),
        "benchboot".into(),
    ));
    // With no console (a `console=` naming a tty no built-in driver provides) the kernel
    // starts /init with fds 0-2 closed; Rust's runtime then opens /dev/null for them and
    // aborts when it is missing ("Attempted to kill init! exitcode=0x00000004"). A wrong
    // console costs the console, never the run. devtmpfs mounted over /dev later has it
    // too. (1, 3): Documentation/admin-guide/devices.txt.
    entries.push(("dev/null".into(), Node::CharDev(1, 3), "benchboot".into()));
    entries.push((
        "init".into(),
        Node::File(std::fs::read(init)?, 0o755),
        format!("firmware/ ({})", board.triple),
    ));
    Ok(entries)
}

/// The modules' `.ko` files and the alias table PID 1 loads drivers by modalias from
/// (their aliases, softdeps and depends=: no udev on the board does it).
fn module_entries(modules: &[ModuleFile], kpkg: &str) -> Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for (name, path) in modules {
        let data = std::fs::read(path)?;
        entries.push((
            format!("{}/{name}.ko", rel(MODULES_DIR)),
            Node::File(data, 0o644),
            if name == crate::vcio::MODULE {
                format!(
                    "{} (built against the headers of {kpkg})",
                    crate::vcio::SOURCE_DIR
                )
            } else {
                kpkg.to_owned()
            },
        ));
    }
    let mut infos = Vec::new();
    for (name, path) in modules {
        let info = benchboot_kmod::ModInfo::parse(&modules::modinfo(path)?);
        infos.push((name.clone(), info));
    }
    let table = benchboot_kmod::AliasTable::build(infos.iter().map(|(n, i)| (n.as_str(), i)));
    entries.push((
        rel(MODULES_ALIAS_PATH),
        Node::File(table.to_text().into_bytes(), 0o644),
        format!("xtask (the .modinfo of the modules above, {kpkg})"),
    ));
    Ok(entries)
}

/// The radio: firmware and regulatory.db below /lib/firmware, QEMU's stand-in AP at its
/// Debian paths, and /tmp for the configuration PID 1 writes it; each path once.
fn radio_entries(entries: &mut Vec<Entry>, radio: &[RadioFile], board_file: &str) -> Result<()> {
    if radio.iter().any(|f| f.role == RadioRole::StandInAp) {
        entries.push((
            "tmp".into(),
            Node::Dir,
            "benchboot (the stand-in AP's configuration)".into(),
        ));
    }
    for f in radio {
        ensure!(
            !entries.iter().any(|(p, _, _)| *p == f.path),
            "{board_file}: /{} is in the initramfs twice",
            f.path
        );
        push_with_parents(
            entries,
            &f.path,
            Node::File(f.data.clone(), f.mode),
            f.source(),
        );
    }
    Ok(())
}

/// Raw blobs must not overlap each other, the MBR (sector 0) or the first partition.
///
/// # Errors
/// Names the offsets and sizes that collide.
pub fn check_raw_blobs(blobs: &[RawBlob], first_partition: u64) -> Result<()> {
    let mut spans: Vec<(u64, u64)> = blobs
        .iter()
        .map(|b| (b.offset, b.offset + b.data.len() as u64))
        .collect();
    spans.sort();
    for &(start, end) in &spans {
        ensure!(
            start >= layout::SECTOR,
            "a blob at byte {start} overwrites the MBR (sector 0)"
        );
        ensure!(
            end <= first_partition,
            "the blob at {start}..{end} runs into the first partition at {first_partition}"
        );
    }
    for w in spans.windows(2) {
        ensure!(
            w[0].1 <= w[1].0,
            "blobs {}..{} and {}..{} overlap",
            w[0].0,
            w[0].1,
            w[1].0,
            w[1].1
        );
    }
    Ok(())
}
