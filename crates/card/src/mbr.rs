//! The MBR partition table of a card, read read-only: the four primary entries and the
//! chain of extended boot records (EBRs) behind an extended one, bounded in length.
//!
//! A hostile or damaged card can chain 131,000 EBRs into a 96 MiB image (one per
//! sector pair); read through mbrman, that took 82 s and its partition list made a
//! 3.6 MB error line. The chain here is read no further than [`MAX_LOGICAL`] records,
//! one 512-byte read each, in strictly increasing order (as mbrman and Linux require,
//! so it cannot loop).

use std::io::{self, Read, Seek, SeekFrom};

use crate::Partition;

/// Bytes per sector of the MBR.
pub const SECTOR: u64 = 512;

/// Most logical partitions read from the EBR chain: 64. benchboot's image makes five
/// (p5-p9: ext2, ext3, ext4, vfat, raw; crates/image/src/layout.rs), cards partitioned
/// by fdisk or a desktop tool a handful; Linux's own MBR parser stops at 256
/// partitions a disk (`DISK_MAX_PARTS`). Past this the chain is not followed (as Linux
/// past its limit): the partitions before are read, numbered p5 to p68.
pub const MAX_LOGICAL: usize = 64;

/// MBR type ids of an extended partition (mbrman's and Linux's list).
const EXTENDED: [u8; 5] = [0x05, 0x0f, 0x85, 0xc5, 0xd5];

/// One 16-byte partition entry: type, first sector (LBA), sectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    sys: u8,
    lba: u64,
    sectors: u64,
}

/// The four entries of the table sector at byte `at`, or `None` without the `55 AA`
/// signature (no table) or on a short read past the disk's end.
fn table<R: Read + Seek>(disk: &mut R, at: u64) -> io::Result<Option<[Entry; 4]>> {
    let mut s = [0u8; SECTOR as usize];
    disk.seek(SeekFrom::Start(at))?;
    if let Err(e) = disk.read_exact(&mut s) {
        return match e.kind() {
            io::ErrorKind::UnexpectedEof => Ok(None),
            _ => Err(e),
        };
    }
    if s[510..512] != [0x55, 0xaa] {
        return Ok(None);
    }
    let entry = |i: usize| {
        let e = &s[446 + 16 * i..446 + 16 * (i + 1)];
        let u32_at = |o: usize| u64::from(u32::from_le_bytes([e[o], e[o + 1], e[o + 2], e[o + 3]]));
        Entry {
            sys: e[4],
            lba: u32_at(8),
            sectors: u32_at(12),
        }
    };
    Ok(Some([entry(0), entry(1), entry(2), entry(3)]))
}

/// The partitions of an MBR disk, primary then logical, those that start inside the disk
/// (lengths clipped to its end). Empty when there is no MBR (no `55 AA` signature);
/// primaries only when the chain of extended boot records is broken (an EBR without its
/// signature, or one that does not lie after the one before); at most [`MAX_LOGICAL`]
/// logical ones.
///
/// # Errors
/// Only I/O errors of `disk`.
pub fn partitions<R: Read + Seek>(disk: &mut R) -> io::Result<Vec<Partition>> {
    let disk_len = disk.seek(SeekFrom::End(0))?;
    let Some(primary) = table(disk, 0)? else {
        return Ok(Vec::new());
    };
    let mut found: Vec<(usize, Entry)> = primary
        .iter()
        .enumerate()
        .map(|(i, e)| (i + 1, *e))
        .collect();
    if let Some(ext) = primary.iter().find(|e| EXTENDED.contains(&e.sys)) {
        found.extend(logical(disk, ext.lba)?.unwrap_or_default());
    }
    Ok(found
        .into_iter()
        .filter(|(_, e)| e.sys != 0 && !EXTENDED.contains(&e.sys) && e.sectors > 0)
        .filter_map(|(n, e)| {
            let offset = e.lba * SECTOR;
            (offset < disk_len).then(|| Partition {
                number: u8::try_from(n).unwrap_or(u8::MAX),
                mbr_type: e.sys,
                offset,
                len: (e.sectors * SECTOR).min(disk_len - offset),
            })
        })
        .collect())
}

/// The logical partitions of the extended partition starting at sector `ext`, numbered
/// from 5 by their place in the chain (as mbrman and Linux number them), absolute
/// sectors; `None` when the chain is broken.
fn logical<R: Read + Seek>(disk: &mut R, ext: u64) -> io::Result<Option<Vec<(usize, Entry)>>> {
    let mut out = Vec::new();
    let mut rel = 0u64;
    while out.len() < MAX_LOGICAL {
        let Some([data, next, ..]) = table(disk, (ext + rel) * SECTOR)? else {
            // An empty extended partition need not hold an EBR.
            return Ok((rel == 0).then_some(out));
        };
        out.push((
            5 + out.len(),
            Entry {
                lba: ext + rel + data.lba,
                ..data
            },
        ));
        if next.lba == 0 {
            break;
        }
        if next.lba <= rel {
            return Ok(None);
        }
        rel = next.lba;
    }
    Ok(Some(out))
}
