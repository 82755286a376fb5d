//! The card's results journal (p4, crates/journal), read back, and the choice between
//! its newest record and the FAT copy (`results.json` on p2).
//!
//! PID 1 appends each save to the journal before it writes the FAT copy, so the
//! journal's newest record is never older than the FAT copy of the same run. The FAT
//! copy wins only when it is newer: the journal failed (its `written_ns`, PID 1's
//! boot-time clock at the save, is later in the same run), or it holds a run the
//! journal has no record of at all (a run whose journal could not be opened).

use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use benchboot_journal::{document, scan, Scan, MBR_TYPE, PARTITION};

use crate::Partition;

/// Most journal bytes read from a card, whatever its MBR claims: 256 MiB (the image
/// makes 16 MiB; a hostile or damaged MBR can claim terabytes).
pub const MAX_JOURNAL_BYTES: u64 = 256 << 20;

/// What a card's journal holds.
#[derive(Debug)]
pub struct Journal {
    /// Where, e.g. `/dev/sdb p4 (results journal)`.
    pub place: String,
    pub scan: Scan,
    /// The newest record's document and its sequence number; `Err` when its checksums
    /// hold but it does not decode, or is not UTF-8.
    pub newest: Option<(u64, Result<String, String>)>,
    /// Every run's newest record (the first is [`Journal::newest`]'s run), newest run
    /// first: run id, sequence number, document or why none.
    pub runs: Vec<(String, u64, Result<String, String>)>,
}

/// The journal partition of `disk` (p4 of MBR type 0xda), read and scanned; `None`
/// when the disk has none (an image built before the journal, or no benchboot card).
///
/// # Errors
/// Only I/O errors of `disk`.
pub fn read<R: Read + Seek>(
    disk: &mut R,
    parts: &[Partition],
    path: &Path,
) -> io::Result<Option<Journal>> {
    let Some(p) = parts
        .iter()
        .find(|p| p.number == PARTITION && p.mbr_type == MBR_TYPE)
    else {
        return Ok(None);
    };
    disk.seek(SeekFrom::Start(p.offset))?;
    let mut ring = Vec::new();
    disk.take(p.len.min(MAX_JOURNAL_BYTES))
        .read_to_end(&mut ring)?;
    let scan = scan(&ring);
    let text = |e: &benchboot_journal::Entry| {
        document(&ring, e)
            .map_err(|e| e.to_string())
            .and_then(|d| String::from_utf8(d).map_err(|_| "not UTF-8 text".to_owned()))
    };
    let newest = scan.newest().map(|e| (e.header.seq, text(e)));
    let runs = scan
        .newest_per_run()
        .into_iter()
        .map(|e| (e.header.run_id.clone(), e.header.seq, text(e)))
        .collect();
    Ok(Some(Journal {
        place: format!("{} p{PARTITION} (results journal)", path.display()),
        scan,
        newest,
        runs,
    }))
}

/// The run id and `system.written_ns` of a results document, when it has them.
pub fn identity(text: &str) -> Option<(String, u64)> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let id = v.get("run_id")?.as_str()?.to_owned();
    let ns = v.get("system")?.get("written_ns")?.as_u64().unwrap_or(0);
    Some((id, ns))
}

/// Steps a document holds: its storage, device-read, random and verification
/// measurements (the counts PID 1's `saved` line prints).
pub fn steps(text: &str) -> usize {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
        return 0;
    };
    ["storage", "device_reads", "random", "verify"]
        .iter()
        .filter_map(|k| v.get(k)?.as_array().map(Vec::len))
        .sum()
}

/// Which copy to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    Journal,
    Fat,
}

/// Chooses between the journal's newest document and the FAT copy, both readable (see
/// the module's rule). Pure.
pub fn pick(journal_text: &str, fat_text: &str, scan: &Scan) -> Pick {
    if journal_text == fat_text {
        return Pick::Fat;
    }
    match (identity(journal_text), identity(fat_text)) {
        (Some((j, j_ns)), Some((f, f_ns))) if j == f => {
            if f_ns > j_ns {
                Pick::Fat
            } else {
                Pick::Journal
            }
        }
        // Another run: the journal's is newer when it also holds the FAT copy's run
        // (that run's saves came before), else the FAT copy is a run it never saw.
        (Some(_), Some((f, _))) => {
            if scan.records.iter().any(|e| e.header.run_id == f) {
                Pick::Journal
            } else {
                Pick::Fat
            }
        }
        (Some(_), None) => Pick::Journal,
        (None, _) => Pick::Fat,
    }
}

#[cfg(test)]
mod tests;
