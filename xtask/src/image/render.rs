//! Writing the image: the MBR, raw blobs, FAT partitions (boot, results, vfat test
//! partition) and ext2/3/4 test partitions, every time and id from a [`Stamp`].

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use anyhow::{ensure, Context, Result};
use benchboot_plan::Filesystem;
use xshell::{cmd, Shell};

use super::contents::{BootFile, Contents};
use crate::reproducible::Stamp;
use benchboot_image::layout::{self, Layout, Part, Role};

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
    write_mbr(
        &mut file,
        layout,
        layout::disk_signature(&stamp.board, layout),
    )?;
    for blob in &contents.raw_blobs {
        file.seek(SeekFrom::Start(blob.offset))?;
        file.write_all(&blob.data)?;
    }
    for part in &layout.parts {
        match part.role {
            Role::Boot => {
                let fat32 = Some(fatfs::FatType::Fat32);
                format_fat(&file, part, fat32, stamp)?;
                write_fat_files(&file, part, &contents.boot_files, stamp)?;
            }
            Role::Results => {
                format_fat(&file, part, None, stamp)?;
                write_fat_files(&file, part, &contents.results_files, stamp)?;
            }
            Role::Test(Filesystem::Vfat) => {
                format_fat(&file, part, None, stamp)?;
            }
            // The raw partition and the journal stay as they are: no filesystem (sparse
            // zeros in the file; a flash writes them, so no earlier record survives).
            Role::Journal | Role::Test(Filesystem::Raw | Filesystem::Dir) => {}
            Role::Test(fs) => write_ext(&mut file, part, fs, stamp)?,
        }
    }
    file.sync_all()?;
    Ok(())
}

/// Writes the MBR with `signature` at bytes 440..444 (little-endian, as `fdisk` prints
/// it): the board's own, from [`layout::disk_signature`], by which PID 1 finds the card
/// whatever the kernel names it.
fn write_mbr(file: &mut std::fs::File, layout: &Layout, signature: u32) -> Result<()> {
    let mut mbr = mbrman::MBR::new_from(file, layout::SECTOR as u32, signature.to_le_bytes())?;
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

pub(super) fn slice(
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

/// The filesystem label [`render`] gives the partition of `role`: `BOOT`, `BBRESULTS`
/// ([`benchboot_card::RESULTS_LABEL`], by which the host finds it), `VFAT`, an ext test
/// partition its filesystem's name (`ext4`); `None` for the journal and the raw
/// partition, which get no filesystem.
pub fn volume_label(role: Role) -> Option<&'static str> {
    match role {
        Role::Boot => Some("BOOT"),
        Role::Results => Some(benchboot_card::RESULTS_LABEL),
        Role::Journal | Role::Test(Filesystem::Raw | Filesystem::Dir) => None,
        Role::Test(Filesystem::Vfat) => Some("VFAT"),
        Role::Test(fs) => Some(fs.name()),
    }
}

/// The 11-byte FAT volume label field of the partition of `role`: its
/// [`volume_label`], padded with spaces.
fn fat_label(role: Role) -> Result<[u8; 11]> {
    let name = volume_label(role).unwrap_or_default();
    let mut field = [b' '; 11];
    ensure!(
        name.len() <= field.len(),
        "FAT label {name} is longer than 11 bytes"
    );
    field[..name.len()].copy_from_slice(name.as_bytes());
    Ok(field)
}

fn format_fat(
    file: &std::fs::File,
    part: &Part,
    fat_type: Option<fatfs::FatType>,
    stamp: &Stamp,
) -> Result<()> {
    let mut opts = fatfs::FormatVolumeOptions::new()
        .volume_label(fat_label(part.role)?)
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
    files: &[BootFile],
    stamp: &Stamp,
) -> Result<()> {
    let options = fatfs::FsOptions::new().time_provider(stamp.fat_clock());
    let fs = fatfs::FileSystem::new(slice(file, part)?, options)?;
    {
        let root = fs.root_dir();
        for BootFile {
            path: name, data, ..
        } in files
        {
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
/// card reader (`benchboot_card`).
pub fn read_fat_file(image: &Path, part: &Part, name: &str) -> Result<Vec<u8>> {
    let file =
        std::fs::File::open(image).with_context(|| format!("opening {}", image.display()))?;
    let p = benchboot_card::Partition {
        number: part.number,
        mbr_type: part.mbr_type,
        offset: part.offset_bytes(),
        len: part.size_bytes(),
    };
    benchboot_card::read_fat_file(file, &p, name)
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
    let label = volume_label(part.role).unwrap_or(fs.name());
    let (path, fstype) = (tmp.path(), fs.name());
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
