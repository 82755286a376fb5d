//! `cargo xtask image --board NAME`: assembles `target/images/<board>.img` and its
//! manifest (`<board>.manifest.json`: every file, its source package and SHA-256).
//!
//! Plan first, then write: [`crate::layout::plan`] computes the partitions, this module
//! renders them. The image is written to a temporary file and renamed at the end, so a
//! failed build never leaves a half-written image under the final name.
//!
//! Reproducible: the same board and lock file give the same bytes; times, filesystem
//! ids and hash seeds come from a [`Stamp`] ([`crate::reproducible`]).

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{ensure, Context, Result};
use benchboot_board::{Board, BootConfig, DtbFixup, Loader, SHARED_FILE};
use benchboot_plan::{Filesystem, DEFAULT_PLAN, MODULES_DIR, PLANS_DIR};
use serde::Serialize;
use xshell::{cmd, Shell};

use crate::firmware::{self, CpuTarget};
use crate::initramfs::{self, Node};
use crate::layout::{self, Layout, Part, Role};
use crate::packages::{self, Lock};
use crate::reproducible::Stamp;
use crate::{modules, plans};

/// File names on the boot partition.
pub const KERNEL_FILE: &str = "vmlinuz";
pub const INITRAMFS_FILE: &str = "initrd.img";

/// Everything an image is made of, before rendering.
pub struct Contents {
    /// (path on the boot partition, `/`-separated, bytes, source).
    pub boot_files: Vec<(String, Vec<u8>, String)>,
    /// Boot loader blobs written raw before the first partition: (byte offset on the
    /// card, bytes, source).
    pub raw_blobs: Vec<(u64, Vec<u8>, String)>,
    pub initramfs: Vec<(String, Node, String)>,
}

/// The manifest written beside the image.
#[derive(Debug, Serialize)]
pub struct Manifest {
    pub board: String,
    pub image: String,
    pub image_bytes: u64,
    pub image_sha256: String,
    pub packages: Vec<packages::Pinned>,
    pub partitions: Vec<ManifestPart>,
    pub boot_files: Vec<ManifestFile>,
    /// Boot loader blobs written raw before the first partition, by offset.
    pub raw_blobs: Vec<ManifestBlob>,
    pub initramfs_files: Vec<ManifestFile>,
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

/// Paths of a built image.
#[derive(Debug, Clone)]
pub struct Built {
    pub image: PathBuf,
    pub manifest: PathBuf,
}

/// Where `image` writes for `board`.
pub fn image_path(board: &Board) -> PathBuf {
    crate::target_dir()
        .join("images")
        .join(format!("{}.img", board.name))
}

/// Builds the firmware, fetches the pinned packages and writes image + manifest.
pub fn run(board: &Board) -> Result<Built> {
    run_to(board, &image_path(board))
}

/// As [`run`], into `image` (the manifest goes beside it as `<stem>.manifest.json`):
/// QEMU-only copies of a card are built from a stand-in board to their own path.
pub fn run_to(board: &Board, image: &Path) -> Result<Built> {
    let t0 = Instant::now();
    let mut phase = Phases::default();
    let init = firmware::build(&CpuTarget::of_board(board))?;
    phase.mark("firmware");
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
    phase.mark("packages");
    let layout = layout::plan(&layout::Spec::default())?;
    let contents = contents(board, &init, &kernel_root, loader_root.as_deref(), &layout)?;
    phase.mark("modules+initramfs");
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
    phase.mark("render");
    let elf = std::fs::read(firmware::unstripped(&init))?;
    let elf_path = image.with_extension("init.elf");
    crate::write_atomically(&elf_path, &elf)?;
    let init_elf = file_entry(
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
    let manifest = manifest(board, image, &layout, &contents, pinned, init_elf)?;
    let manifest_path = image.with_extension("manifest.json");
    crate::write_atomically(
        &manifest_path,
        serde_json::to_string_pretty(&manifest)?.as_bytes(),
    )?;
    phase.mark("manifest");
    if board
        .loader
        .as_ref()
        .is_some_and(|l| l.config == BootConfig::Extlinux)
    {
        let report = crate::bootcheck::check_card(board, image, &layout)?;
        eprintln!("image: {}", report.summary());
        phase.mark("boot check");
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
    })
}

/// Wall time per build phase, for the closing line.
struct Phases {
    last: Instant,
    done: Vec<(&'static str, f64)>,
}

impl Default for Phases {
    fn default() -> Self {
        Phases {
            last: Instant::now(),
            done: Vec::new(),
        }
    }
}

impl Phases {
    fn mark(&mut self, name: &'static str) {
        self.done.push((name, self.last.elapsed().as_secs_f64()));
        self.last = Instant::now();
    }
    fn summary(&self) -> String {
        let parts: Vec<String> = self
            .done
            .iter()
            .map(|(n, s)| format!("{n} {s:.1} s"))
            .collect();
        parts.join(", ")
    }
}

/// Finds `name` anywhere under `dir` (arm64 DTBs sit in vendor sub-folders).
fn find_file(dir: &Path, name: &str) -> Result<PathBuf> {
    crate::walk_files(dir)?
        .into_iter()
        .find(|p| p.file_name().is_some_and(|f| f == name))
        .with_context(|| format!("{name} is not in {}", dir.display()))
}

/// config.txt for the Raspberry Pi firmware: names the kernel, initramfs and DTB (when
/// the board has one), then the board's own lines.
pub fn config_txt(board: &Board) -> String {
    let mut s = format!(
        "# Generated by `cargo xtask image --board {0}` from boards/{0}.toml.\n\
         kernel={KERNEL_FILE}\ninitramfs {INITRAMFS_FILE} followkernel\n",
        board.name
    );
    if let Some(dtb) = &board.kernel.dtb {
        s.push_str(&format!("device_tree={dtb}\n"));
    }
    for line in &board.boot.config_txt {
        s.push_str(line);
        s.push('\n');
    }
    s
}

/// cmdline.txt: one line, the board's kernel parameters (console first).
pub fn cmdline_txt(board: &Board) -> String {
    format!("{}\n", board.boot.cmdline.trim())
}

/// Where U-Boot's distro boot looks first on the bootable partition
/// (U-Boot doc/develop/distro.rst).
pub const EXTLINUX_CONF: &str = "extlinux/extlinux.conf";

/// `extlinux/extlinux.conf` for U-Boot's distro boot: one label, booted at once, naming
/// the kernel, the DTB (`dtb`), the initramfs and the command line. Paths are from the
/// root of the boot partition.
pub fn extlinux_conf(board: &Board, dtb: Option<&str>) -> String {
    let mut s = format!(
        "# Generated by `cargo xtask image --board {0}` from boards/{0}.toml.\n\
         default benchboot\nprompt 0\ntimeout 1\n\nlabel benchboot\n\
         \tkernel /{KERNEL_FILE}\n\tinitrd /{INITRAMFS_FILE}\n",
        board.name
    );
    if let Some(dtb) = dtb {
        s.push_str(&format!("\tfdt /{dtb}\n"));
    }
    s.push_str(&format!("\tappend {}\n", board.boot.cmdline.trim()));
    s
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

fn contents(
    board: &Board,
    init: &Path,
    kernel_root: &Path,
    loader_root: Option<&Path>,
    layout: &Layout,
) -> Result<Contents> {
    let release = &board.kernel.release;
    let kpkg = &board.kernel.package;
    let board_file = format!("boards/{}.toml", board.name);
    let mut boot_files = Vec::new();
    let mut raw_blobs = Vec::new();
    if let (Some(l), Some(root)) = (&board.loader, loader_root) {
        for f in &l.files {
            boot_files.push((f.clone(), loader_file(l, root, f)?, l.package.clone()));
        }
        for b in &l.raw {
            let source = format!("{} ({}/{})", l.package, l.dir, b.file);
            raw_blobs.push((b.offset, loader_file(l, root, &b.file)?, source));
        }
        let config = match l.config {
            BootConfig::ConfigTxt => ("config.txt", config_txt(board)),
            BootConfig::Extlinux => (
                EXTLINUX_CONF,
                extlinux_conf(board, board.kernel.dtb.as_deref()),
            ),
        };
        boot_files.push((config.0.into(), config.1.into_bytes(), board_file.clone()));
    }
    let first_part = layout
        .parts
        .iter()
        .map(|p| p.offset_bytes())
        .min()
        .unwrap_or(0);
    check_raw_blobs(&raw_blobs, first_part)
        .with_context(|| format!("boards/{SHARED_FILE}: loaders raw blobs of {board_file}"))?;
    let kernel = kernel_root.join("boot").join(format!("vmlinuz-{release}"));
    let kernel_data = std::fs::read(&kernel).with_context(|| {
        format!(
            "boards/{}.toml: kernel.release: {} not found",
            board.name,
            kernel.display()
        )
    })?;
    boot_files.push((KERNEL_FILE.into(), kernel_data, kpkg.clone()));
    if let Some(dtb_name) = &board.kernel.dtb {
        let dtb_src = find_file(
            &kernel_root
                .join("usr/lib")
                .join(format!("linux-image-{release}")),
            dtb_name,
        )
        .with_context(|| format!("boards/{}.toml: kernel.dtb", board.name))?;
        let dtb = apply_dtb_fixups(&std::fs::read(&dtb_src)?, &board.kernel.dtb_fixups)
            .with_context(|| format!("boards/{}.toml: kernel.dtb-fixups", board.name))?;
        boot_files.push((dtb_name.clone(), dtb, format!("{kpkg} + dtb-fixups")));
    }
    boot_files.push((
        "cmdline.txt".into(),
        cmdline_txt(board).into_bytes(),
        board_file.clone(),
    ));

    // Modules: the hardware plan loads the board's set, the results link's and the extra
    // storage's; the QEMU plan adds its own.
    let mut hw_wanted = board.modules.clone();
    let link_modules = board.gadget.iter().map(|g| &g.modules);
    let link_modules = link_modules.chain(board.ethernet.iter().map(|e| &e.modules));
    let storage_modules = board.extra_storage.iter().map(|e| &e.modules);
    for m in link_modules.chain(storage_modules).flatten() {
        if !hw_wanted.contains(m) {
            hw_wanted.push(m.clone());
        }
    }
    let hw_modules = modules::resolve(kernel_root, release, &hw_wanted).with_context(|| {
        format!(
            "{board_file}: modules.load / gadget.modules / ethernet.modules / \
                 storage.extra.modules"
        )
    })?;
    let mut qemu_wanted = hw_wanted.clone();
    if let Some(q) = &board.qemu {
        qemu_wanted.extend(q.modules.iter().cloned());
    }
    let qemu_modules = modules::resolve(kernel_root, release, &qemu_wanted)
        .with_context(|| format!("boards/{}.toml: qemu.modules", board.name))?;
    let names = |v: &[(String, PathBuf)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    let plans = plans::all(board, layout, names(&hw_modules), names(&qemu_modules));
    for (name, plan) in &plans {
        plan.validate()
            .with_context(|| format!("boards/{}.toml: plan `{name}`", board.name))?;
    }

    let rel = |p: &str| p.trim_start_matches('/').to_owned();
    let mut initramfs: Vec<(String, Node, String)> = Vec::new();
    for d in ["dev", "proc", "sys", "mnt", "results", "etc", "lib"] {
        initramfs.push((d.into(), Node::Dir, "benchboot".into()));
    }
    initramfs.push((rel(PLANS_DIR), Node::Dir, "benchboot".into()));
    initramfs.push((rel(MODULES_DIR), Node::Dir, "benchboot".into()));
    initramfs.push((
        "dev/console".into(),
        Node::CharDev(5, 1),
        "benchboot".into(),
    ));
    let init_data = std::fs::read(init)?;
    initramfs.push((
        "init".into(),
        Node::File(init_data, 0o755),
        format!("firmware/ ({})", board.triple),
    ));
    for (name, plan) in &plans {
        let json = serde_json::to_vec_pretty(plan)?;
        initramfs.push((
            format!("{}/{name}.json", rel(PLANS_DIR)),
            Node::File(json, 0o644),
            "xtask plans".into(),
        ));
    }
    for (name, path) in &qemu_modules {
        let data = std::fs::read(path)?;
        initramfs.push((
            format!("{}/{name}.ko", rel(MODULES_DIR)),
            Node::File(data, 0o644),
            kpkg.clone(),
        ));
    }
    let archive = initramfs::build(
        &initramfs
            .iter()
            .map(|(p, n, _)| (p.clone(), n.clone()))
            .collect::<Vec<_>>(),
    )?;
    boot_files.push((INITRAMFS_FILE.into(), archive, "benchboot initramfs".into()));
    Ok(Contents {
        boot_files,
        raw_blobs,
        initramfs,
    })
}

/// Raw blobs must not overlap each other, the MBR (sector 0) or the first partition.
///
/// # Errors
/// Names the offsets and sizes that collide.
pub fn check_raw_blobs(blobs: &[(u64, Vec<u8>, String)], first_partition: u64) -> Result<()> {
    let mut spans: Vec<(u64, u64)> = blobs
        .iter()
        .map(|(o, d, _)| (*o, *o + d.len() as u64))
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

/// Applies `fixups` to a DTB with `fdtput` (device-tree-compiler) and checks each with
/// `fdtget`; returns the new DTB.
///
/// # Errors
/// A node or property that does not exist, or an edit that does not read back.
pub fn apply_dtb_fixups(dtb: &[u8], fixups: &[DtbFixup]) -> Result<Vec<u8>> {
    if fixups.is_empty() {
        return Ok(dtb.to_vec());
    }
    let tmp = tempfile::NamedTempFile::new()?;
    std::fs::write(tmp.path(), dtb)?;
    let sh = Shell::new()?;
    let file = tmp.path();
    let hint = "(apt-get install device-tree-compiler)";
    for f in fixups {
        match f {
            DtbFixup::Set {
                node,
                property,
                value,
            } => {
                cmd!(sh, "fdtput -t s {file} {node} {property} {value}")
                    .quiet()
                    .run()
                    .with_context(|| format!("setting {node} {property} {hint}"))?;
                let got = cmd!(sh, "fdtget -t s {file} {node} {property}")
                    .quiet()
                    .read()?;
                ensure!(
                    got.trim() == value,
                    "fdtput did not set {node} {property}: reads back {got:?}"
                );
            }
            DtbFixup::DeleteProperty { node, property } => {
                cmd!(sh, "fdtput -d {file} {node} {property}")
                    .quiet()
                    .run()
                    .with_context(|| format!("deleting {node} {property} {hint}"))?;
            }
            DtbFixup::DeleteNode { node } => {
                cmd!(sh, "fdtput -r {file} {node}")
                    .quiet()
                    .run()
                    .with_context(|| format!("deleting node {node} {hint}"))?;
            }
        }
    }
    Ok(std::fs::read(file)?)
}

/// Writes the whole image into `path`, every time and id from `stamp`: the same
/// arguments give the same bytes.
pub fn render(path: &Path, layout: &Layout, contents: &Contents, stamp: &Stamp) -> Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    file.set_len(layout.disk_bytes)?;
    write_mbr(&mut file, layout)?;
    for (offset, data, _) in &contents.raw_blobs {
        file.seek(SeekFrom::Start(*offset))?;
        file.write_all(data)?;
    }
    for part in &layout.parts {
        match part.role {
            Role::Boot => {
                let fat32 = Some(fatfs::FatType::Fat32);
                format_fat(&file, part, *b"BOOT       ", fat32, stamp)?;
                let files: Vec<(&str, &[u8])> = contents
                    .boot_files
                    .iter()
                    .map(|(n, d, _)| (n.as_str(), d.as_slice()))
                    .collect();
                write_fat_files(&file, part, &files, stamp)?;
            }
            Role::Results => format_fat(&file, part, *b"BBRESULTS  ", None, stamp)?,
            Role::Test(Filesystem::Vfat) => {
                format_fat(&file, part, *b"VFAT       ", None, stamp)?;
            }
            // The raw partition stays as it is: no filesystem (sparse zeros in the file).
            Role::Test(Filesystem::Raw | Filesystem::Dir) => {}
            Role::Test(fs) => write_ext(&mut file, part, fs, stamp)?,
        }
    }
    file.sync_all()?;
    Ok(())
}

fn write_mbr(file: &mut std::fs::File, layout: &Layout) -> Result<()> {
    // A fixed disk signature keeps images reproducible.
    let mut mbr = mbrman::MBR::new_from(file, layout::SECTOR as u32, *b"bbt1")?;
    mbr.align = layout::ALIGN;
    let entry = |boot: bool, sys: u8, start: u32, sectors: u32| mbrman::MBRPartitionEntry {
        boot: if boot {
            mbrman::BOOT_ACTIVE
        } else {
            mbrman::BOOT_INACTIVE
        },
        first_chs: mbrman::CHS::empty(),
        sys,
        last_chs: mbrman::CHS::empty(),
        starting_lba: start,
        sectors,
    };
    for p in layout.parts.iter().filter(|p| p.number <= 4) {
        mbr[usize::from(p.number)] =
            entry(p.role == Role::Boot, p.mbr_type, p.start_lba, p.sectors);
    }
    mbr[3] = entry(
        false,
        layout::TYPE_EXTENDED_LBA,
        layout.extended.0,
        layout.extended.1,
    );
    let logical: Vec<&Part> = layout.parts.iter().filter(|p| p.number >= 5).collect();
    for (p, &(slot, len)) in logical.iter().zip(&layout.slots) {
        let l = mbr.push(p.mbr_type, slot, len)?;
        ensure!(
            (l.partition.starting_lba, l.partition.sectors) == (p.start_lba, p.sectors),
            "mbrman placed p{} at {}+{}, the layout says {}+{}",
            p.number,
            l.partition.starting_lba,
            l.partition.sectors,
            p.start_lba,
            p.sectors
        );
    }
    mbr.write_into(file)?;
    Ok(())
}

fn slice(
    file: &std::fs::File,
    part: &Part,
) -> Result<fscommon::BufStream<fscommon::StreamSlice<std::fs::File>>> {
    let f = file.try_clone()?;
    let s = fscommon::StreamSlice::new(
        f,
        part.offset_bytes(),
        part.offset_bytes() + part.size_bytes(),
    )?;
    Ok(fscommon::BufStream::new(s))
}

fn format_fat(
    file: &std::fs::File,
    part: &Part,
    label: [u8; 11],
    fat_type: Option<fatfs::FatType>,
    stamp: &Stamp,
) -> Result<()> {
    let mut opts = fatfs::FormatVolumeOptions::new()
        .volume_label(label)
        .volume_id(stamp.fat_volume_id(part.number));
    if let Some(t) = fat_type {
        opts = opts.fat_type(t);
        if t == fatfs::FatType::Fat32 {
            // FAT32 needs >= 65525 clusters: 512 B clusters on a 64 MiB partition.
            opts = opts.bytes_per_cluster(512);
        }
    }
    let mut s = slice(file, part)?;
    fatfs::format_volume(&mut s, opts)
        .with_context(|| format!("formatting p{} as FAT", part.number))?;
    s.flush()?;
    Ok(())
}

/// Writes `files` in the order given, every directory entry dated `stamp`'s time.
fn write_fat_files(
    file: &std::fs::File,
    part: &Part,
    files: &[(&str, &[u8])],
    stamp: &Stamp,
) -> Result<()> {
    let options = fatfs::FsOptions::new().time_provider(stamp.fat_clock());
    let fs = fatfs::FileSystem::new(slice(file, part)?, options)?;
    {
        let root = fs.root_dir();
        for (name, data) in files {
            if let Some((dir, _)) = name.rsplit_once('/') {
                root.create_dir(dir)
                    .with_context(|| format!("creating {dir}/ on p{}", part.number))?;
            }
            let mut f = root
                .create_file(name)
                .with_context(|| format!("creating {name} on p{}", part.number))?;
            f.truncate()?;
            f.write_all(data)
                .with_context(|| format!("writing {name} on p{}", part.number))?;
            f.flush()?;
        }
    }
    fs.unmount()?;
    fix_dot_entries(file, part)
}

/// fatfs 0.3 starts every folder it creates with a long-name entry before `.` and
/// another before `..`, and on FAT32 points a first-level folder's `..` at the root's
/// cluster instead of 0 (rafalh/rust-fatfs#100, #99; U-Boot reads such a folder, fsck.fat
/// reports "Expected a valid '.' entry in this slot"). Rewrites the first four slots of
/// every folder in the root as `.`, `..` (cluster 0: the root) and two deleted slots.
fn fix_dot_entries(file: &std::fs::File, part: &Part) -> Result<()> {
    use std::os::unix::fs::FileExt;
    let base = part.offset_bytes();
    let mut bs = [0u8; 512];
    file.read_exact_at(&mut bs, base)?;
    let u16_at = |b: &[u8], i: usize| u64::from(u16::from_le_bytes([b[i], b[i + 1]]));
    let u32_at = |b: &[u8], i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let (bps, spc) = (u16_at(&bs, 11), u64::from(bs[13]));
    let (reserved, fats, root_entries) = (u16_at(&bs, 14), u64::from(bs[16]), u16_at(&bs, 17));
    let fat32 = u16_at(&bs, 22) == 0;
    let fat_sectors = if fat32 {
        u64::from(u32_at(&bs, 36))
    } else {
        u16_at(&bs, 22)
    };
    ensure!(
        bps >= 512 && spc > 0,
        "p{}: no FAT boot sector",
        part.number
    );
    let root_sectors = (root_entries * 32).div_ceil(bps);
    let data = base + (reserved + fats * fat_sectors + root_sectors) * bps;
    let cluster_bytes = bps * spc;
    let at_cluster = |c: u32| data + (u64::from(c) - 2) * cluster_bytes;
    // The root folder: a cluster chain on FAT32, a fixed region before the data on FAT16.
    let root_cluster = if fat32 { u32_at(&bs, 44) } else { 0 };
    let mut root = Vec::new();
    if fat32 {
        let mut c = root_cluster;
        while (2..0x0FFF_FFF8).contains(&c) {
            let mut buf = vec![0u8; usize::try_from(cluster_bytes)?];
            file.read_exact_at(&mut buf, at_cluster(c))?;
            root.extend(buf);
            let mut next = [0u8; 4];
            file.read_exact_at(&mut next, base + reserved * bps + u64::from(c) * 4)?;
            c = u32::from_le_bytes(next) & 0x0FFF_FFFF;
        }
    } else {
        root = vec![0u8; usize::try_from(root_sectors * bps)?];
        file.read_exact_at(&mut root, data - root_sectors * bps)?;
    }
    for e in root.chunks_exact(32) {
        if e[0] == 0 {
            break;
        }
        if e[0] == 0xE5 || e[11] == 0x0F || e[11] & 0x18 != 0x10 || e[0] == b'.' {
            continue;
        }
        let cluster = (u32::from(u16::from_le_bytes([e[20], e[21]])) << 16)
            | u32::from(u16::from_le_bytes([e[26], e[27]]));
        let mut slots = [0u8; 128];
        file.read_exact_at(&mut slots, at_cluster(cluster))?;
        let name = |i: usize| &slots[i * 32..i * 32 + 11];
        if slots[11] == 0x0F && name(1) == b".          " && name(3) == b"..         " {
            let mut fixed = [0u8; 128];
            fixed[..32].copy_from_slice(&slots[32..64]);
            fixed[32..64].copy_from_slice(&slots[96..128]);
            fixed[64..96].copy_from_slice(&slots[..32]);
            fixed[96..128].copy_from_slice(&slots[64..96]);
            fixed[64] = 0xE5;
            fixed[96] = 0xE5;
            // `..` of a first-level folder names the root: cluster 0 (FAT spec).
            fixed[32 + 20..32 + 22].fill(0);
            fixed[32 + 26..32 + 28].fill(0);
            file.write_all_at(&fixed, at_cluster(cluster))?;
        }
    }
    Ok(())
}

/// Reads one file from a FAT partition of an image (QEMU takes the kernel, DTB and
/// initramfs from the card's own boot partition), read-only, through the host tool's
/// card reader (`benchboot::card`).
pub fn read_fat_file(image: &Path, part: &Part, name: &str) -> Result<Vec<u8>> {
    let file =
        std::fs::File::open(image).with_context(|| format!("opening {}", image.display()))?;
    let p = benchboot::card::Partition {
        number: part.number,
        mbr_type: part.mbr_type,
        offset: part.offset_bytes(),
        len: part.size_bytes(),
    };
    benchboot::card::read_fat_file(file, &p, name)
        .with_context(|| format!("{}: p{} has no {name}", image.display(), part.number))
}

/// Makes an ext2/3/4 filesystem with mke2fs in a temporary file and copies it in.
/// Reproducible: UUID and directory hash seed from `stamp`, every time (superblock,
/// inodes) `stamp.epoch` through `E2FSPROGS_FAKE_TIME`, the root directory owned by
/// 0:0 whoever runs it, inode tables and journal written out in full (no lazy init).
fn write_ext(file: &mut std::fs::File, part: &Part, fs: Filesystem, stamp: &Stamp) -> Result<()> {
    let tmp = tempfile::NamedTempFile::new()?;
    tmp.as_file().set_len(part.size_bytes())?;
    let sh = Shell::new()?;
    let (path, fstype, label) = (tmp.path(), fs.name(), fs.name());
    let uuid = stamp.ext_uuid(part.number);
    let extended = format!(
        "lazy_itable_init=0,lazy_journal_init=0,root_owner=0:0,hash_seed={}",
        stamp.ext_hash_seed(part.number)
    );
    cmd!(
        sh,
        "mke2fs -q -F -t {fstype} -L {label} -U {uuid} -E {extended} {path}"
    )
    .env("E2FSPROGS_FAKE_TIME", stamp.epoch.to_string())
    .quiet()
    .run()
    .with_context(|| format!("mke2fs for p{} (apt-get install e2fsprogs)", part.number))?;
    let mut src = std::fs::File::open(path)?;
    file.seek(SeekFrom::Start(part.offset_bytes()))?;
    let copied = std::io::copy(&mut src, file)?;
    ensure!(
        copied == part.size_bytes(),
        "copied {copied} bytes of p{}",
        part.number
    );
    Ok(())
}

fn file_entry(path: String, data: &[u8], source: &str) -> ManifestFile {
    ManifestFile {
        path,
        bytes: data.len() as u64,
        sha256: crate::sha256_hex(data),
        source: source.to_owned(),
    }
}

fn manifest(
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
        packages,
        partitions: layout
            .parts
            .iter()
            .map(|p| ManifestPart {
                number: p.number,
                role: match p.role {
                    Role::Boot => "boot".into(),
                    Role::Results => "results".into(),
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
            .map(|(n, d, s)| file_entry(format!("p1:/{n}"), d, s))
            .collect(),
        raw_blobs: {
            let mut blobs: Vec<ManifestBlob> = c
                .raw_blobs
                .iter()
                .map(|(offset, d, s)| ManifestBlob {
                    offset_bytes: *offset,
                    bytes: d.len() as u64,
                    sha256: crate::sha256_hex(d),
                    source: s.clone(),
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
        init_elf,
        modules: vec![
            (DEFAULT_PLAN.into(), modules(DEFAULT_PLAN)),
            ("qemu".into(), modules("qemu")),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_txt_names_kernel_initramfs_and_dtb() {
        let board = crate::load_board("rpi-zero-w").unwrap();
        let c = config_txt(&board);
        assert!(c.contains("\nkernel=vmlinuz\n"), "{c}");
        assert!(c.contains("\ninitramfs initrd.img followkernel\n"), "{c}");
        assert!(c.contains("\ndevice_tree=bcm2835-rpi-zero-w.dtb\n"), "{c}");
        assert!(c.ends_with("enable_uart=1\nupstream_kernel=1\n"), "{c}");
        assert_eq!(cmdline_txt(&board).lines().count(), 1);
    }

    #[test]
    fn raw_blobs_may_not_touch_the_mbr_each_other_or_the_first_partition() {
        let blob = |o: u64, n: usize| (o, vec![1u8; n], "t".to_owned());
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
    fn extlinux_conf_names_kernel_dtb_initrd_and_cmdline() {
        let board = crate::load_board("bananapi-m1").unwrap();
        let c = extlinux_conf(&board, board.kernel.dtb.as_deref());
        assert!(c.contains("\ndefault benchboot\n"), "{c}");
        assert!(
            c.contains("\tkernel /vmlinuz\n\tinitrd /initrd.img\n"),
            "{c}"
        );
        assert!(c.contains("\tfdt /sun7i-a20-bananapi.dtb\n"), "{c}");
        assert!(
            c.ends_with("\tappend console=ttyS0,115200 loglevel=4 rootwait\n"),
            "{c}"
        );
    }

    #[test]
    fn folders_start_with_dot_and_dotdot_as_fsck_wants() {
        let spec = layout::Spec {
            disk_mib: 128,
            boot_start_mib: 4,
            boot_mib: 40,
            results_mib: 8,
            test_slot_mib: 8,
            tests: vec![Filesystem::Raw],
        };
        let l = layout::plan(&spec).unwrap();
        // Enough names that the FAT32 root (512-byte clusters) spans several clusters.
        let mut boot_files: Vec<(String, Vec<u8>, String)> = (0..20)
            .map(|i| (format!("file-{i}.txt"), vec![b'x'; 10], "t".into()))
            .collect();
        boot_files.push((EXTLINUX_CONF.into(), b"default x\n".to_vec(), "t".into()));
        let contents = Contents {
            boot_files,
            raw_blobs: vec![],
            initramfs: vec![],
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
            test_slot_mib: 8,
            tests: vec![Filesystem::Vfat],
        };
        let l = layout::plan(&spec).unwrap();
        let contents = Contents {
            boot_files: vec![
                (
                    "config.txt".into(),
                    b"kernel=vmlinuz\n".to_vec(),
                    "t".into(),
                ),
                (EXTLINUX_CONF.into(), b"default x\n".to_vec(), "t".into()),
            ],
            raw_blobs: vec![(8192, vec![0xa5; 1000], "t".into())],
            initramfs: vec![],
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
        assert_eq!(mbr.logical_partitions.len(), 1);
        assert_eq!(
            mbr.logical_partitions[0].partition.starting_lba,
            l.parts[2].start_lba
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
            test_slot_mib: 8,
            tests: vec![Filesystem::Ext4, Filesystem::Vfat],
        };
        let l = layout::plan(&spec).unwrap();
        let contents = Contents {
            boot_files: vec![
                ("b.txt".into(), b"second".to_vec(), "t".into()),
                ("a.txt".into(), b"first".to_vec(), "t".into()),
                (EXTLINUX_CONF.into(), b"default x\n".to_vec(), "t".into()),
            ],
            raw_blobs: vec![],
            initramfs: vec![],
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
}
