//! `benchboot prepare-disk DEV`: the write-ups' layout on a USB or SATA disk in one
//! command, for a plan's `LABEL=` targets: an MBR with four primary partitions of equal
//! size, 1 MiB aligned, formatted ext2, ext3, ext4 and FAT32 with the labels of
//! [`benchboot_card::disk_labels`] (`BBEXT2`, `BBEXT3`, `BBEXT4`, `BBVFAT`).
//!
//! Plan first ([`plan`]: the rules of [`crate::devices`] as `benchboot flash` applies
//! them, the layout ([`layout`], pure), the tools), then [`execute`]: old signatures
//! zeroed (the first and last MiB, the first 64 KiB of each partition), the MBR, fsync;
//! then each filesystem. On a regular file (an image for QEMU or the tests) each
//! filesystem is made through the file at its partition's offset (`mke2fs -E
//! offset=BYTES` with a size in KiB, `mkfs.fat --offset SECTORS` with a size in KiB);
//! on a block device the kernel re-reads the partition table (`blockdev --rereadpt`)
//! and the partitions (`/dev/sdb1`, `/dev/mmcblk0p1`) are formatted. ext inode tables
//! and journals are written out in full (`lazy_itable_init=0,lazy_journal_init=0`), so
//! no background initialisation runs while a board measures, and ext blocks are 4 KiB
//! whatever the disk's size.
//!
//! Refused, with every reason and nothing written: a system disk, a disk with anything
//! mounted (unmount it first: unlike a card it may hold someone's files), a read-only,
//! virtual or too large disk (`--allow-large`), a fixed disk other than USB or SATA, a
//! disk smaller than [`MIN_DISK_BYTES`]. It asks first (`--yes` without a terminal);
//! `--dry-run` prints the plan.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use benchboot_card::disk_labels;

use crate::devices::{Device, Limits, Refusal, Transport, Use};
use crate::units::size_label;

/// 1 MiB: where partitions start and how they are sized (also the gap before p1).
pub const ALIGN_BYTES: u64 = 1 << 20;
/// The smallest partition made, bytes: FAT32 needs 65,525 clusters (about 33 MiB with
/// 512-byte clusters); ext3/4 their journal.
pub const MIN_PARTITION_BYTES: u64 = 40 << 20;
/// The smallest disk: the 1 MiB gap and four partitions of [`MIN_PARTITION_BYTES`].
pub const MIN_DISK_BYTES: u64 = ALIGN_BYTES + 4 * MIN_PARTITION_BYTES;
/// Zeroed at the start of each partition before formatting, bytes: old superblocks
/// (ext's at 1 KiB, FAT's boot sector, the first metadata of others) cannot linger.
const WIPE_BYTES: u64 = 64 << 10;
/// How long to wait for the partitions' device nodes after the re-read.
const NODE_WAIT: Duration = Duration::from_secs(10);

/// The MBR type of a Linux filesystem.
pub const TYPE_LINUX: u8 = 0x83;
/// The MBR type of FAT32 (LBA).
pub const TYPE_FAT32_LBA: u8 = 0x0c;

/// The command line of `benchboot prepare-disk`.
#[derive(Debug, Clone, clap::Args)]
pub struct PrepareDiskArgs {
    /// The whole disk (`/dev/sdb`) or an existing regular file (an image, e.g. made
    /// with `truncate -s 256M disk.img`). Everything on it is erased.
    pub device: PathBuf,
    /// Print the partitions that would be made; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Prepare a disk larger than 256 GiB.
    #[arg(long)]
    pub allow_large: bool,
    /// Do not ask for confirmation (required without a terminal).
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// A filesystem of the prepared disk, in partition order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiskFs {
    Ext2,
    Ext3,
    Ext4,
    Vfat,
}

impl DiskFs {
    /// p1 to p4.
    pub const ALL: [DiskFs; 4] = [DiskFs::Ext2, DiskFs::Ext3, DiskFs::Ext4, DiskFs::Vfat];

    /// As `blkid` and `mke2fs -t` name it.
    pub fn name(self) -> &'static str {
        match self {
            DiskFs::Ext2 => "ext2",
            DiskFs::Ext3 => "ext3",
            DiskFs::Ext4 => "ext4",
            DiskFs::Vfat => "vfat",
        }
    }

    /// Its filesystem label ([`disk_labels`]).
    pub fn label(self) -> &'static str {
        match self {
            DiskFs::Ext2 => disk_labels::EXT2,
            DiskFs::Ext3 => disk_labels::EXT3,
            DiskFs::Ext4 => disk_labels::EXT4,
            DiskFs::Vfat => disk_labels::VFAT,
        }
    }

    /// Its MBR partition type.
    pub fn mbr_type(self) -> u8 {
        match self {
            DiskFs::Vfat => TYPE_FAT32_LBA,
            _ => TYPE_LINUX,
        }
    }
}

/// One partition to make. Offsets and sizes are in bytes, whole MiB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedPartition {
    /// 1 to 4.
    pub number: u8,
    pub fs: DiskFs,
    /// From the start of the disk.
    pub offset: u64,
    pub size: u64,
}

/// The four partitions of a disk of `disk_bytes`: from 1 MiB on, each the same whole
/// number of MiB (the rest of the disk, under 4 MiB, stays unused).
///
/// # Errors
/// A disk smaller than [`MIN_DISK_BYTES`], or too large for an MBR (partitions must
/// end below 2^32 sectors of `sector_bytes`).
pub fn layout(disk_bytes: u64, sector_bytes: u64) -> Result<Vec<PlannedPartition>> {
    if disk_bytes < MIN_DISK_BYTES {
        bail!(
            "{} is too small: four partitions of at least {} each need {}; use a larger \
             disk (or image file: truncate -s 256M FILE)",
            size_label(disk_bytes),
            size_label(MIN_PARTITION_BYTES),
            size_label(MIN_DISK_BYTES)
        );
    }
    let size = (disk_bytes - ALIGN_BYTES) / 4 / ALIGN_BYTES * ALIGN_BYTES;
    let end = ALIGN_BYTES + 4 * size;
    if end / sector_bytes > u64::from(u32::MAX) {
        bail!(
            "{} is too large for an MBR with {sector_bytes}-byte sectors (at most {}): \
             partition it with GPT yourself",
            size_label(disk_bytes),
            size_label(u64::from(u32::MAX) * sector_bytes)
        );
    }
    Ok(DiskFs::ALL
        .iter()
        .zip(1u8..)
        .map(|(&fs, number)| PlannedPartition {
            number,
            fs,
            offset: ALIGN_BYTES + u64::from(number - 1) * size,
            size,
        })
        .collect())
}

/// What DEV is, once the rules have accepted it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A regular file: each filesystem is made through it at its offset.
    File,
    /// A whole disk: its partitions are formatted after the kernel re-reads the table.
    Disk(Box<Device>),
}

/// The programs [`execute`] runs, found before anything is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tools {
    pub mke2fs: PathBuf,
    pub mkfs_fat: PathBuf,
    /// `blockdev`, for a block device's re-read of the partition table.
    pub blockdev: Option<PathBuf>,
}

/// Everything [`execute`] will do; [`Plan::describe`] prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The file or whole-disk node written.
    pub path: PathBuf,
    pub target: Target,
    /// Size of the file or disk, bytes.
    pub disk_bytes: u64,
    /// Bytes per MBR sector: the disk's logical block size (512 for a file).
    pub sector_bytes: u64,
    pub parts: Vec<PlannedPartition>,
    pub tools: Tools,
}

/// Every reason the rules refuse `device` for prepare-disk, each with its fix: those of
/// [`Device::verdict`] (system disk, read-only, virtual, mounted through a holder, too
/// large), except that a fixed USB or SATA disk is what this command is for; plus every
/// filesystem of the disk that is mounted (unmount it first).
pub fn refusals(device: &Device, limits: &Limits) -> Vec<String> {
    let verdict = device.verdict(limits);
    let mut out: Vec<String> = verdict
        .refusals
        .iter()
        .filter_map(|r| match r {
            Refusal::NotRemovable { transport } => match transport {
                Transport::Usb | Transport::Ata => None,
                t => Some(format!(
                    "a fixed {t} disk: prepare-disk makes USB or SATA test disks only"
                )),
            },
            Refusal::TooLarge {
                size_bytes,
                limit_bytes,
            } => Some(format!(
                "{} is larger than {}: pass --allow-large if this really is the test disk",
                size_label(*size_bytes),
                size_label(*limit_bytes)
            )),
            r => Some(r.in_words(Use::PrepareDisk)),
        })
        .collect();
    for mp in &verdict.unmount {
        out.push(format!(
            "{} is mounted: unmount it first (`umount {}`); prepare-disk never unmounts \
             a disk's filesystems for you",
            mp.display(),
            mp.display()
        ));
    }
    out
}

/// A disk the rules refuse: every reason, each with its fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refusing to prepare {device}:{}", .reasons.iter().map(|r| format!("\n  - {r}")).collect::<String>())]
pub struct Refused {
    /// [`Device::describe`] of the disk.
    pub device: String,
    pub reasons: Vec<String>,
}

/// Finds `name` on `PATH`, then in the sbin folders a user's `PATH` often lacks.
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn tool(name: &str, package: &str) -> Result<PathBuf> {
    find_tool(name).with_context(|| {
        if cfg!(target_os = "macos") {
            format!(
                "{name} not found on PATH: the ext2/3/4 and FAT32 partitions need it \
                 (Homebrew: brew install {package}, then put `$(brew --prefix {package})/sbin` \
                 on PATH: it is keg-only; macOS's newfs_msdos cannot write ext), or \
                 prepare the disk on Linux; nothing written"
            )
        } else {
            format!("{name} not found on PATH or in /usr/sbin: install {package} (apt-get install {package}); nothing written")
        }
    })
}

/// Works out the plan for `args`, refusing what must not be written. `root` is where
/// sysfs and proc are (`/`; a fake tree in tests).
///
/// # Errors
/// DEV missing (a file must exist: its size is the disk's), a partition instead of a
/// whole disk, a disk the rules refuse ([`Refused`]), too small ([`layout`]), not
/// writable by this user, or mke2fs / mkfs.fat / blockdev missing.
pub fn plan(args: &PrepareDiskArgs, root: &Path) -> Result<Plan> {
    use crate::identity::What;
    let dev = &args.device;
    let found = crate::identity::lookup(dev, root)?;
    let (target, disk_bytes, sector_bytes) = match &found.what {
        What::New { .. } | What::Nowhere { .. } => bail!(
            "{}: no such disk or file: name a whole disk from `benchboot devices`, or \
             create an image file first (truncate -s 256M {})",
            dev.display(),
            dev.display()
        ),
        What::File { .. } => {
            found.refuse_kernel_files("", "name a whole disk or an image file")?;
            found.refuse_in_use("")?;
            let len = std::fs::metadata(dev)
                .with_context(|| dev.display().to_string())?
                .len();
            (Target::File, len, 512)
        }
        _ => {
            let device = crate::target_disk::disk_of("", &found)?;
            let reasons = refusals(&device, &Limits::new(args.allow_large));
            if !reasons.is_empty() {
                return Err(Refused {
                    device: device.describe(),
                    reasons,
                }
                .into());
            }
            let (size, sector) = (device.size_bytes, device.logical_block_size.max(512));
            (Target::Disk(Box::new(device)), size, sector)
        }
    };
    let parts = layout(disk_bytes, sector_bytes).with_context(|| dev.display().to_string())?;
    if rustix::fs::access(dev, rustix::fs::Access::WRITE_OK).is_err() {
        bail!(
            "{}: not writable by this user: run benchboot prepare-disk as root (sudo), or \
             add yourself to the disk group; nothing written",
            dev.display()
        );
    }
    let tools = Tools {
        mke2fs: tool("mke2fs", "e2fsprogs")?,
        mkfs_fat: tool("mkfs.fat", "dosfstools")?,
        blockdev: match target {
            Target::Disk(_) if !cfg!(target_os = "linux") => bail!(
                "{}: prepare-disk writes a disk's partitions through Linux (blockdev, \
                 udev); on {} prepare an image file and write it with `benchboot flash`, \
                 or run prepare-disk on Linux; nothing written",
                dev.display(),
                std::env::consts::OS
            ),
            Target::Disk(_) => Some(tool("blockdev", "util-linux")?),
            Target::File => None,
        },
    };
    Ok(Plan {
        path: dev.clone(),
        target,
        disk_bytes,
        sector_bytes,
        parts,
        tools,
    })
}

/// The device node of partition `number` of the whole disk `disk`: `/dev/sdb1`, and
/// `/dev/mmcblk0p1`, `/dev/nvme0n1p1` when the disk's name ends in a digit.
pub fn partition_node(disk: &Path, number: u8) -> PathBuf {
    let name = disk.to_string_lossy();
    if name.ends_with(|c: char| c.is_ascii_digit()) {
        PathBuf::from(format!("{name}p{number}"))
    } else {
        PathBuf::from(format!("{name}{number}"))
    }
}

impl Plan {
    /// The plan in words: the target, then one line per partition.
    pub fn describe(&self) -> String {
        let what = match &self.target {
            Target::File => format!("{} (regular file)", self.path.display()),
            Target::Disk(d) => d.describe(),
        };
        let mut s = format!(
            "target   {what}: {}, everything on it erased\n\
             write    MBR ({} B sectors), 4 primary partitions of {} each, from {} on\n",
            size_label(self.disk_bytes),
            self.sector_bytes,
            size_label(self.parts[0].size),
            size_label(ALIGN_BYTES),
        );
        s += &self.table();
        s
    }

    /// One line per partition: number (or node), offset, size, filesystem, label.
    pub fn table(&self) -> String {
        let mut s = format!(
            "{:<14} {:>12} {:>12} {:<10} {}\n",
            "partition", "offset", "size", "filesystem", "label"
        );
        for p in &self.parts {
            let name = match &self.target {
                Target::File => format!("p{}", p.number),
                Target::Disk(d) => partition_node(&d.path, p.number).display().to_string(),
            };
            s += &format!(
                "{name:<14} {:>12} {:>12} {:<10} {}\n",
                size_label(p.offset),
                size_label(p.size),
                p.fs.name(),
                p.fs.label()
            );
        }
        s
    }
}

/// Carries out `plan`: zero the old signatures, write the MBR, fsync, then make each
/// filesystem (through the file at its offset, or on the re-read partition nodes).
/// `progress` gets a line per step.
///
/// # Errors
/// Open (busy, permission), write and fsync failures, a failed re-read, partition
/// nodes that do not appear, and a failing mke2fs / mkfs.fat (with its output); each
/// names DEV and says how to go on.
pub fn execute(plan: &Plan, progress: &mut dyn FnMut(&str)) -> Result<()> {
    let dev = plan.path.display();
    let mut disk = open(plan).map_err(|e| open_error(&plan.path, e))?;
    write_table(&mut disk, plan).with_context(|| {
        format!("writing the partition table of {dev}; run benchboot prepare-disk again")
    })?;
    drop(disk);
    progress(&format!("wrote the MBR of {dev}"));
    if let Target::Disk(d) = &plan.target {
        reread(plan, d)?;
    }
    for p in &plan.parts {
        let (path, offset) = match &plan.target {
            Target::File => (plan.path.clone(), Some(p.offset)),
            Target::Disk(d) => (partition_node(&d.path, p.number), None),
        };
        let mut cmd = mkfs_command(&plan.tools, p, &path, offset);
        let out = cmd
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("running {}", cmd.get_program().to_string_lossy()))?;
        if !out.status.success() {
            bail!(
                "making {} on p{} of {dev} failed ({}):\n{}{}\nthe disk is half prepared: \
                 run benchboot prepare-disk again",
                p.fs.name(),
                p.number,
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr).trim_end()
            );
        }
        progress(&format!(
            "made {} ({}) on p{}",
            p.fs.name(),
            p.fs.label(),
            p.number
        ));
    }
    Ok(())
}

fn open(plan: &Plan) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(true);
    if matches!(plan.target, Target::Disk(_)) {
        // O_EXCL on a block device: EBUSY when mounted or held by another user.
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(rustix::fs::OFlags::EXCL.bits() as i32);
    }
    o.open(&plan.path)
}

fn open_error(path: &Path, e: std::io::Error) -> anyhow::Error {
    let p = path.display();
    let hint = match e.raw_os_error().map(rustix::io::Errno::from_raw_os_error) {
        Some(rustix::io::Errno::BUSY) => {
            format!("something has it open or mounted (see `lsof {p}`); close it and try again")
        }
        Some(rustix::io::Errno::ACCESS | rustix::io::Errno::PERM) => {
            "run benchboot prepare-disk as root (sudo), or add yourself to the disk group".into()
        }
        _ => "check the disk and its cable".into(),
    };
    anyhow::anyhow!("opening {p}: {e}: {hint}; nothing written")
}

/// Zeros the first and last MiB (old MBR, GPT and its backup) and the first
/// [`WIPE_BYTES`] of each partition, then writes the MBR and fsyncs.
fn write_table(disk: &mut File, plan: &Plan) -> Result<()> {
    let zero = |disk: &mut File, at: u64, len: u64| -> std::io::Result<()> {
        disk.seek(SeekFrom::Start(at))?;
        disk.write_all(&vec![0u8; len as usize])
    };
    let head = ALIGN_BYTES.min(plan.disk_bytes);
    zero(disk, 0, head)?;
    for p in &plan.parts {
        zero(disk, p.offset, WIPE_BYTES.min(p.size))?;
    }
    let tail = plan.disk_bytes.saturating_sub(ALIGN_BYTES).max(head);
    zero(disk, tail, plan.disk_bytes - tail)?;
    let sector = plan.sector_bytes;
    let signature = disk_signature();
    let mut mbr = mbrman::MBR::new_from(disk, sector as u32, signature)?;
    for p in &plan.parts {
        mbr[usize::from(p.number)] = mbrman::MBRPartitionEntry {
            boot: mbrman::BOOT_INACTIVE,
            first_chs: mbrman::CHS::empty(),
            sys: p.fs.mbr_type(),
            last_chs: mbrman::CHS::empty(),
            starting_lba: (p.offset / sector) as u32,
            sectors: (p.size / sector) as u32,
        };
    }
    mbr.write_into(disk)?;
    disk.sync_all()?;
    Ok(())
}

/// A disk signature that differs from disk to disk (Linux's `PARTUUID=<sig>-01`): from
/// the clock and the process id.
fn disk_signature() -> [u8; 4] {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mixed = now.as_nanos() as u64 ^ (u64::from(std::process::id()) << 32);
    let folded = (mixed ^ (mixed >> 32)) as u32;
    // Never 0: some tools take a zero signature for "none".
    folded.max(1).to_le_bytes()
}

/// Asks the kernel to re-read the partition table, then waits for the four nodes.
fn reread(plan: &Plan, d: &Device) -> Result<()> {
    let blockdev = plan.tools.blockdev.as_ref().expect("plan found blockdev");
    let out = Command::new(blockdev)
        .arg("--rereadpt")
        .arg(&d.path)
        .stdin(Stdio::null())
        .output()
        .context("running blockdev --rereadpt")?;
    if !out.status.success() {
        bail!(
            "the kernel did not re-read the partition table of {} ({}): {}; the MBR is \
             written: unplug and replug the disk, then run benchboot prepare-disk again",
            d.path.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let _ = Command::new(find_tool("udevadm").unwrap_or_else(|| "udevadm".into()))
        .args(["settle", "--timeout=10"])
        .status();
    let start = Instant::now();
    for p in &plan.parts {
        let node = partition_node(&d.path, p.number);
        while !node.exists() {
            if start.elapsed() > NODE_WAIT {
                bail!(
                    "{} did not appear within {} s of the re-read: unplug and replug the \
                     disk, then run benchboot prepare-disk again",
                    node.display(),
                    NODE_WAIT.as_secs()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    Ok(())
}

/// The mkfs command of one partition: `path` is the partition's node, or the file with
/// the partition at `offset` bytes.
pub fn mkfs_command(
    tools: &Tools,
    p: &PlannedPartition,
    path: &Path,
    offset: Option<u64>,
) -> Command {
    let size_kib = (p.size >> 10).to_string();
    match p.fs {
        DiskFs::Vfat => {
            let mut c = Command::new(&tools.mkfs_fat);
            c.args(["-F", "32", "-n", p.fs.label()]);
            if let Some(offset) = offset {
                // Sectors of 512 B; hidden sectors = the partition's start, as on a disk.
                let sectors = (offset / 512).to_string();
                c.args(["-h", &sectors, &format!("--offset={sectors}")]);
                c.arg(path).arg(&size_kib);
            } else {
                c.arg(path);
            }
            c
        }
        fs => {
            let mut c = Command::new(&tools.mke2fs);
            let mut extended = "lazy_itable_init=0,lazy_journal_init=0".to_owned();
            if let Some(offset) = offset {
                // nodiscard: a discard of a file punches holes, of the wrong range at worst.
                extended += &format!(",offset={offset},nodiscard");
            }
            c.args(["-q", "-F", "-t", fs.name(), "-b", "4096", "-L", fs.label()]);
            c.arg("-E").arg(extended).arg(path);
            if offset.is_some() {
                c.arg(format!("{size_kib}k"));
            }
            c
        }
    }
}

/// `benchboot prepare-disk`: plan, print it, confirm, write, print what was made.
///
/// # Errors
/// See [`plan`], [`crate::target_disk::confirm_erase`] and [`execute`].
pub fn run(args: &PrepareDiskArgs) -> Result<()> {
    let plan = plan(args, Path::new("/"))?;
    crate::out!("{}", plan.describe());
    if args.dry_run {
        crate::outln!("dry run: nothing written");
        return Ok(());
    }
    let what = match &plan.target {
        Target::Disk(d) => d.describe(),
        Target::File => plan.path.display().to_string(),
    };
    crate::target_disk::confirm_erase(&what, "partition and format it", args.yes)?;
    execute(&plan, &mut |line| crate::errln!("prepare-disk: {line}"))?;
    crate::out!("made\n{}", plan.table());
    crate::outln!(
        "done: a plan finds these as LABEL={}, LABEL={}, LABEL={}, LABEL={}",
        disk_labels::EXT2,
        disk_labels::EXT3,
        disk_labels::EXT4,
        disk_labels::VFAT
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_256_mib_file_gets_four_63_mib_partitions_from_1_mib() {
        let parts = layout(256 << 20, 512).unwrap();
        let got: Vec<(u8, &str, u64, u64)> = parts
            .iter()
            .map(|p| (p.number, p.fs.label(), p.offset >> 20, p.size >> 20))
            .collect();
        assert_eq!(
            got,
            [
                (1, "BBEXT2", 1, 63),
                (2, "BBEXT3", 64, 63),
                (3, "BBEXT4", 127, 63),
                (4, "BBVFAT", 190, 63)
            ]
        );
        // A real disk size that is no whole MiB: equal whole-MiB partitions, inside it.
        let disk = 31_914_983_424;
        let parts = layout(disk, 512).unwrap();
        assert!(parts
            .iter()
            .all(|p| p.size == parts[0].size && p.size % ALIGN_BYTES == 0));
        assert!(parts[3].offset + parts[3].size <= disk);
        assert!(disk - (parts[3].offset + parts[3].size) < 4 * ALIGN_BYTES + ALIGN_BYTES);
    }

    #[test]
    fn too_small_and_too_large_for_an_mbr_are_refused_with_the_sizes() {
        let err = layout(128 << 20, 512).unwrap_err().to_string();
        assert!(err.contains("128 MiB is too small"), "{err}");
        assert!(err.contains("at least 40 MiB each need 161 MiB"), "{err}");
        assert!(layout(MIN_DISK_BYTES, 512).is_ok());
        let err = layout(4 << 40, 512).unwrap_err().to_string();
        assert!(
            err.contains("too large for an MBR with 512-byte sectors"),
            "{err}"
        );
        // 4 KiB sectors reach 16 TiB.
        assert!(layout(4 << 40, 4096).is_ok());
    }

    #[test]
    fn partition_nodes_follow_the_kernels_naming() {
        assert_eq!(
            partition_node(Path::new("/dev/sdb"), 1),
            Path::new("/dev/sdb1")
        );
        assert_eq!(
            partition_node(Path::new("/dev/mmcblk0"), 4),
            Path::new("/dev/mmcblk0p4")
        );
        assert_eq!(
            partition_node(Path::new("/dev/nvme0n1"), 2),
            Path::new("/dev/nvme0n1p2")
        );
    }

    fn disk(transport: Transport, removable: bool) -> Device {
        Device {
            name: "sdx".into(),
            path: "/dev/sdx".into(),
            dev: Some("8:16".into()),
            size_bytes: 500 << 30,
            logical_block_size: 512,
            removable,
            read_only: false,
            transport,
            model: Some("Disk".into()),
            vendor: None,
            partitions: vec![],
            holders: Vec::new(),
            backing_file: None,
            mounts: vec![],
            swaps: vec![],
            system: Vec::new(),
            card: None,
        }
    }

    #[test]
    fn fixed_usb_and_sata_disks_may_be_prepared_others_not() {
        let large = Limits::new(true);
        assert!(refusals(&disk(Transport::Usb, false), &large).is_empty());
        assert!(refusals(&disk(Transport::Ata, false), &large).is_empty());
        assert_eq!(
            refusals(&disk(Transport::Nvme, false), &large),
            ["a fixed nvme disk: prepare-disk makes USB or SATA test disks only"]
        );
        // The size limit stands without --allow-large.
        let r = refusals(&disk(Transport::Usb, false), &Limits::new(false));
        assert_eq!(r.len(), 1);
        assert_eq!(
            r,
            ["500 GiB is larger than 256 GiB: pass --allow-large if this really is the test disk"]
        );
    }

    #[test]
    fn mounted_and_system_disks_are_refused() {
        let limits = Limits::new(true);
        let mut d = disk(Transport::Usb, false);
        d.mounts.push(crate::devices::Mount {
            device: "sdx1".into(),
            mount_point: "/media/me/USB".into(),
            fstype: "ext4".into(),
            through: None,
            spans: Vec::new(),
        });
        assert_eq!(
            refusals(&d, &limits),
            [
                "/media/me/USB is mounted: unmount it first (`umount /media/me/USB`); \
              prepare-disk never unmounts a disk's filesystems for you"
            ]
        );
        d.mounts[0].mount_point = "/".into();
        let r = refusals(&d, &limits);
        assert_eq!(r.len(), 1, "{r:?}");
        assert!(
            r[0].starts_with("holds the running system (/ on sdx1)"),
            "{r:?}"
        );
        let mut ro = disk(Transport::Ata, false);
        ro.read_only = true;
        assert!(refusals(&ro, &limits)[0].starts_with("read-only"));
    }

    #[test]
    fn file_commands_format_at_the_offset_with_the_size_in_kib() {
        let tools = Tools {
            mke2fs: "mke2fs".into(),
            mkfs_fat: "mkfs.fat".into(),
            blockdev: None,
        };
        let parts = layout(256 << 20, 512).unwrap();
        let args = |c: &Command| -> Vec<String> {
            c.get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        };
        let ext4 = mkfs_command(&tools, &parts[2], Path::new("d.img"), Some(parts[2].offset));
        assert_eq!(
            args(&ext4).join(" "),
            "-q -F -t ext4 -b 4096 -L BBEXT4 -E \
             lazy_itable_init=0,lazy_journal_init=0,offset=133169152,nodiscard d.img 64512k"
        );
        let fat = mkfs_command(&tools, &parts[3], Path::new("d.img"), Some(parts[3].offset));
        assert_eq!(
            args(&fat).join(" "),
            "-F 32 -n BBVFAT -h 389120 --offset=389120 d.img 64512"
        );
        let node = mkfs_command(&tools, &parts[0], Path::new("/dev/sdb1"), None);
        assert_eq!(
            args(&node).join(" "),
            "-q -F -t ext2 -b 4096 -L BBEXT2 -E lazy_itable_init=0,lazy_journal_init=0 /dev/sdb1"
        );
    }
}
