//! Reading `results.json` from a card's results partition, for boards without a USB OTG
//! port: a mounted folder, or the card itself (block device or image file) read
//! read-only through its MBR and FAT, so nothing has to be mounted.
//!
//! The image's layout (crates/image/src/layout.rs): p1 FAT32 boot, p2 FAT results partition
//! labelled `BBRESULTS`, p3 extended with the test partitions. The results partition is
//! found by its label on any FAT partition, else taken to be p2.
#![forbid(unsafe_code)]

pub mod disk_labels;
pub mod journal;
pub mod mbr;

pub use mbr::partitions;

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use anyhow::{bail, Context, Result};
use benchboot_results::text::is_card_litter;
use benchboot_results::{read_document, read_document_file};

/// FAT volume label of the results partition (xtask/src/image.rs formats it so).
pub const RESULTS_LABEL: &str = "BBRESULTS";
/// The file PID 1 writes on the results partition.
pub const RESULTS_FILE: &str = "results.json";
/// Partition number of the results partition in benchboot's layout (p2).
pub const RESULTS_PARTITION: u8 = 2;
/// MBR partition type ids of FAT filesystems: FAT12, FAT16 (< 32 MiB), FAT16, FAT32
/// (CHS), FAT32 (LBA), FAT16 (LBA).
pub const FAT_TYPES: [u8; 6] = [0x01, 0x04, 0x06, 0x0b, 0x0c, 0x0e];

/// One partition of a disk, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    /// As Linux numbers it: 1-4 primary, 5 and up logical; 0 for a whole disk that is
    /// one FAT filesystem (a partition device such as `/dev/sdb2`, or a bare FAT image).
    pub number: u8,
    /// MBR type id (0 for a whole-disk filesystem).
    pub mbr_type: u8,
    /// Byte offset of the partition from the start of the disk.
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
}

impl Partition {
    /// True when the MBR type says FAT.
    pub fn is_fat_type(&self) -> bool {
        FAT_TYPES.contains(&self.mbr_type)
    }
}

/// What [`read_results`] read and from where.
#[derive(Debug, Clone)]
pub struct CardRead {
    /// The results document, as stored.
    pub text: String,
    /// Where it came from, e.g. `/dev/sdb p2 (BBRESULTS)`, `/dev/sdb p4 (results
    /// journal) record 88` or `/media/me/BBRESULTS/results.json`.
    pub source: String,
    /// What a person should know about the card: a damaged or older FAT copy, a run
    /// recovered from the journal, torn records skipped. Empty for a healthy card.
    pub notes: Vec<String>,
}

/// Reads the results document from `path`:
/// - a folder (the mounted results partition): its `results.json`;
/// - a file that starts with `{`: the results document itself;
/// - anything else (block device, image file): the results journal (p4,
///   [`journal::read`]) and the results partition found by [`find_results_partition`],
///   both read read-only; the newer of the journal's newest record and the FAT copy
///   ([`journal::pick`]), so a card whose FAT is damaged or zeroed still gives its last
///   saved step.
///
/// # Errors
/// The path cannot be opened (the message says how to get read access), or neither a
/// journal record nor a `results.json` can be read (the board has not written one yet,
/// or both copies are damaged: the message says what each was).
pub fn read_results(path: &Path) -> Result<CardRead> {
    refuse_raw_windows_device(path)?;
    let path = &absolute(path);
    let meta = std::fs::metadata(path).with_context(|| {
        format!(
            "{}: no such file, folder or device: give the card's device (e.g. /dev/sdb, \
             see lsblk), an image file, or the folder the results partition is mounted on",
            path.display()
        )
    })?;
    if meta.is_dir() {
        let file = path.join(RESULTS_FILE);
        let data = read_document_file(&file).with_context(|| {
            format!(
                "{}: no readable {RESULTS_FILE}: is {} the card's results partition \
                 ({RESULTS_LABEL}, the second one), and did the board's run start?",
                file.display(),
                path.display()
            )
        })?;
        let source = file.display().to_string();
        return Ok(CardRead {
            text: document_text(data, &source)?,
            source,
            notes: Vec::new(),
        });
    }
    let mut disk = open_card(path)?;
    read_results_from(&mut disk, path)
}

/// A card or image opened for reading: anything that reads and seeks (a [`File`], or
/// a raw Windows disk read through `benchboot_sector::SectorReader`).
pub trait Disk: Read + Seek {}
impl<T: Read + Seek> Disk for T {}

/// [`read_results`] of a card already open (`disk`), named `path` in sources and
/// messages: the journal and the FAT copy, the newer of the two.
///
/// # Errors
/// As [`read_results`], but for opening.
pub fn read_results_from(disk: &mut dyn Disk, path: &Path) -> Result<CardRead> {
    let mut disk = disk;
    if starts_with_brace(&mut disk)? {
        // A device that starts with `{` is read no further than a document goes.
        let data =
            read_document(&mut disk).with_context(|| format!("reading {}", path.display()))?;
        let source = path.display().to_string();
        return Ok(CardRead {
            text: document_text(data, &source)?,
            source,
            notes: Vec::new(),
        });
    }
    let parts = partitions(&mut disk).with_context(|| format!("reading {}", path.display()))?;
    let mut notes = Vec::new();
    let journal = match journal::read(&mut disk, &parts, path) {
        Ok(j) => j,
        Err(e) => {
            notes.push(format!("the results journal could not be read: {e}"));
            None
        }
    };
    let fat = read_fat_copy(&mut disk, path);
    let Some(j) = journal else {
        let (text, place) = fat?;
        return Ok(CardRead {
            text,
            source: place,
            notes,
        });
    };
    if j.scan.gave_up {
        notes.push(format!(
            "{}: the scan stopped early (headers that claim more than the partition holds: \
             damaged or crafted); records past that point were not read",
            j.place
        ));
    }
    if !j.scan.torn.is_empty() {
        notes.push(format!(
            "{}: {} torn record(s) skipped (a save cut short, e.g. by a power cut)",
            j.place,
            j.scan.torn.len()
        ));
    }
    let from_journal = |text: String, seq: u64, mut notes: Vec<String>, why: String| {
        let id = journal::identity(&text).map_or("?".into(), |i| i.0);
        notes.push(format!(
            "{why}; run {} recovered from the journal, {} steps",
            id.escape_debug(),
            journal::steps(&text)
        ));
        CardRead {
            text,
            source: format!("{} record {seq}", j.place),
            notes,
        }
    };
    match (j.newest(), fat) {
        (Some((seq, Ok(jt))), Ok((ft, place))) => match journal::pick(&jt, &ft, &j.scan) {
            journal::Pick::Journal => {
                let older = journal::identity(&ft)
                    .map_or("not a results document".into(), |(id, _)| {
                        format!("run {}, {} steps", id.escape_debug(), journal::steps(&ft))
                    });
                Ok(from_journal(
                    jt,
                    seq,
                    notes,
                    format!("the FAT copy ({place}) is older ({older})"),
                ))
            }
            journal::Pick::Fat => {
                if jt != ft {
                    notes.push(format!(
                        "the journal's newest record ({seq}) is older than the FAT copy: the \
                         journal was not written for the last save(s) (see the run's \
                         journal events)"
                    ));
                }
                Ok(CardRead {
                    text: ft,
                    source: place,
                    notes,
                })
            }
        },
        (Some((seq, Ok(jt))), Err(e)) => Ok(from_journal(
            jt,
            seq,
            notes,
            format!("the FAT copy is unreadable ({e:#})"),
        )),
        (Some((seq, Err(why))), fat) => {
            notes.push(format!("{} record {seq}, the newest: {why}", j.place));
            let (text, place) = fat.with_context(|| notes.join("; "))?;
            Ok(CardRead {
                text,
                source: place,
                notes,
            })
        }
        (None, fat) => {
            let (text, place) = fat.with_context(|| {
                let mut why = vec![format!("{} holds no record", j.place)];
                why.extend(notes.iter().cloned());
                why.join("; ")
            })?;
            Ok(CardRead {
                text,
                source: place,
                notes,
            })
        }
    }
}

/// The FAT copy: `results.json` on the results partition, and where it was read.
fn read_fat_copy<D: Read + Seek>(disk: &mut D, path: &Path) -> Result<(String, String)> {
    let (part, label) = find_results_partition(disk).with_context(|| {
        format!(
            "{}: is this a benchboot card or image? (it needs an MBR with a FAT partition \
             labelled {RESULTS_LABEL}, or a FAT p2)",
            path.display()
        )
    })?;
    let place = describe(path, &part, label.as_deref());
    let data = match read_fat_file(&mut *disk, &part, RESULTS_FILE) {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => bail!(
            "{place} has no {RESULTS_FILE}: the board has not written results yet (PID 1 \
             writes it once the first block size is done); boot the card in the board and \
             let the run go on"
        ),
        Err(e) => return Err(e).with_context(|| format!("reading {RESULTS_FILE} from {place}")),
    };
    let source = format!("{place} {RESULTS_FILE}");
    Ok((document_text(data, &source)?, place))
}

/// Every run the results journal holds, its newest record each, newest run first, as
/// [`KeptRun`]s (source `/dev/sdb p4 (results journal) record 88`): the runs a card
/// still gives back when its FAT copies (`results.json`, `runs/`) are damaged or gone.
/// Empty for a folder, a bare document, or a card without a journal.
///
/// # Errors
/// As [`read_results`] for opening the card; the journal's I/O errors.
pub fn read_journal_runs(path: &Path) -> Result<Vec<KeptRun>> {
    refuse_raw_windows_device(path)?;
    let path = &absolute(path);
    let Some(mut disk) = open_disk(path)? else {
        return Ok(Vec::new());
    };
    read_journal_runs_from(&mut disk, path)
}

/// [`read_journal_runs`] of a card already open (see [`read_results_from`]).
///
/// # Errors
/// The journal's I/O errors.
pub fn read_journal_runs_from(disk: &mut dyn Disk, path: &Path) -> Result<Vec<KeptRun>> {
    let mut disk = disk;
    let parts = partitions(&mut disk).with_context(|| format!("reading {}", path.display()))?;
    let Some(j) = journal::read(&mut disk, &parts, path)
        .with_context(|| format!("reading the results journal of {}", path.display()))?
    else {
        return Ok(Vec::new());
    };
    Ok(j.runs()
        .into_iter()
        .map(|(_, seq, text)| {
            let source = format!("{} record {seq}", j.place);
            KeptRun {
                text: text.map_err(|why| anyhow::anyhow!("{why}")),
                source,
            }
        })
        .collect())
}

/// The text of a results document read from `source`.
///
/// # Errors
/// Not UTF-8, or empty (PID 1 writes a temp file and renames it, so an empty document
/// means a save that did not reach the card, e.g. power cut mid-write on vfat).
fn document_text(data: Vec<u8>, source: &str) -> Result<String> {
    if data.iter().all(u8::is_ascii_whitespace) {
        bail!(
            "{source} is empty: the board's save did not reach the card (power cut while \
             writing?); boot the card again for a new run"
        );
    }
    String::from_utf8(data).map_err(|_| {
        anyhow::anyhow!(
            "{source} is not UTF-8 text, so not a results document: the file or the card is \
             damaged (check it with fsck.vfat -n)"
        )
    })
}

/// The folder of the results partition where PID 1 keeps earlier boots' documents
/// (`runs/<run id>.json`; firmware init.rs `keep_previous_run`).
pub const KEPT_RUNS_DIR: &str = "runs";

/// One earlier boot's document kept on the card, or why it could not be read.
#[derive(Debug)]
pub struct KeptRun {
    /// Where it lies, e.g. `/dev/sdb p2 (BBRESULTS) runs/rpi-zero-w-1111.json`.
    pub source: String,
    /// The document as stored.
    pub text: Result<String>,
}

impl KeptRun {
    /// The kept run at `source` whose bytes were `read`: its text, or why it is none
    /// (the read failed, or as [`document_text`]).
    fn read(source: String, read: io::Result<Vec<u8>>) -> KeptRun {
        KeptRun {
            text: read
                .map_err(anyhow::Error::new)
                .and_then(|data| document_text(data, &source)),
            source,
        }
    }
}

/// Reads every earlier boot's document (`*.json`) kept under [`KEPT_RUNS_DIR`] on a card
/// image or device, or the mounted results partition folder, in name order. What other
/// systems leave there (a Mac's `._<name>.json` AppleDouble files, `.DS_Store`, ...:
/// [`is_card_litter`]) is skipped, never reported as a damaged run. None when
/// the folder is missing (a card that booted once) or `path` is a bare results document.
/// A file that cannot be read, and a `runs` that is not a readable folder, are entries
/// with an error, so the others are still read.
///
/// # Errors
/// As [`read_results`] for opening the card and finding the partition.
pub fn read_kept_runs(path: &Path) -> Result<Vec<KeptRun>> {
    refuse_raw_windows_device(path)?;
    let path = &absolute(path);
    if path.is_dir() {
        return Ok(kept_runs_in_folder(&path.join(KEPT_RUNS_DIR)));
    }
    let Some(mut disk) = open_disk(path)? else {
        return Ok(Vec::new());
    };
    read_kept_runs_from(&mut disk, path)
}

/// [`read_kept_runs`] of a card already open (see [`read_results_from`]).
///
/// # Errors
/// No results partition, or it is not FAT.
pub fn read_kept_runs_from(disk: &mut dyn Disk, path: &Path) -> Result<Vec<KeptRun>> {
    let mut disk = disk;
    let (part, label) = find_results_partition(&mut disk)
        .with_context(|| format!("{}: no results partition", path.display()))?;
    let place = describe(path, &part, label.as_deref());
    let runs = fat_guard(|| {
        let fs = open_fat(&mut disk, &part)?;
        let folder_error = |e| vec![KeptRun::read(format!("{place} {KEPT_RUNS_DIR}/"), Err(e))];
        let dir = match fs.root_dir().open_dir(KEPT_RUNS_DIR) {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Ok(folder_error(e)),
        };
        let mut files = Vec::new();
        for e in dir.iter() {
            match e {
                Ok(e) if e.is_file() => files.push(e),
                Ok(_) => {}
                Err(e) => return Ok(folder_error(e)),
            }
        }
        files.sort_by_key(|e| e.file_name());
        // Each kept run's defmt log (`<run id>.defmt`) lies beside it; a Mac's
        // AppleDouble `._<run id>.json` is no document.
        files.retain(|e| e.file_name().ends_with(".json") && !is_card_litter(&e.file_name()));
        Ok(kept_within_bounds(
            files
                .iter()
                .map(|e| format!("{place} {KEPT_RUNS_DIR}/{}", e.file_name())),
            |i| read_document(files[i].to_file()),
        ))
    });
    runs.with_context(|| format!("{place}: not FAT"))
}

/// Most earlier runs read from a card's `runs/`: 256 (PID 1 keeps one per boot; a
/// card booted daily for most of a year). The runs past it are listed as not read.
pub const MAX_KEPT_RUNS: usize = 256;
/// Bytes of earlier runs' documents after which no more are read from a card: 256 MiB
/// (the document that passes it is the last read, so at most 256 MiB + one document of
/// at most 64 MiB are held; real ones are 0.1-4 MiB). The runs past it are listed as
/// not read.
pub const MAX_KEPT_BYTES: u64 = 256 << 20;

/// The kept runs named by `sources`, the `i`-th read by `read(i)`, within
/// [`MAX_KEPT_RUNS`] and [`MAX_KEPT_BYTES`]: those past either bound are errors that
/// say so, unread.
fn kept_within_bounds(
    sources: impl Iterator<Item = String>,
    mut read: impl FnMut(usize) -> io::Result<Vec<u8>>,
) -> Vec<KeptRun> {
    let mut total = 0u64;
    sources
        .enumerate()
        .map(|(i, source)| {
            let data = if i >= MAX_KEPT_RUNS {
                Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("not read: more than {MAX_KEPT_RUNS} kept runs (damaged or crafted)"),
                ))
            } else if total > MAX_KEPT_BYTES {
                Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "not read: the kept runs before it pass {} MiB in all",
                        MAX_KEPT_BYTES >> 20
                    ),
                ))
            } else {
                read(i).inspect(|d| total += d.len() as u64)
            };
            KeptRun::read(source, data)
        })
        .collect()
}

/// [`read_kept_runs`] of a mounted results partition: the `*.json` files of `dir`.
fn kept_runs_in_folder(dir: &Path) -> Vec<KeptRun> {
    let mut names: Vec<_> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension().is_some_and(|x| x == "json")
                    && !p.is_dir()
                    && !p
                        .file_name()
                        .is_some_and(|n| is_card_litter(&n.to_string_lossy()))
            })
            .collect(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => return vec![KeptRun::read(dir.display().to_string(), Err(e))],
    };
    names.sort();
    kept_within_bounds(names.iter().map(|f| f.display().to_string()), |i| {
        read_document_file(&names[i]).map_err(io::Error::from)
    })
}

/// Sources are stored, so they name the card absolutely (symlinks such as
/// /dev/disk/by-id/... kept as given).
fn absolute(path: &Path) -> std::path::PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

/// `/dev/sdb p2 (BBRESULTS)`, or just the path for a whole-disk filesystem.
fn describe(path: &Path, part: &Partition, label: Option<&str>) -> String {
    let mut s = path.display().to_string();
    if part.number != 0 {
        s.push_str(&format!(" p{}", part.number));
    }
    if let Some(l) = label {
        s.push_str(&format!(" ({l})"));
    }
    s
}

/// Windows' raw disks (`\\.\PhysicalDriveN`, `\\.\E:`) take only whole-sector reads
/// at sector offsets and report no length to a seek: a [`File`] of one cannot be read
/// here, so this says what works instead of failing half-way. The host tool on Windows
/// opens such a disk itself and reads it with [`read_results_from`] through a sector
/// reader. (Windows also mounts the card's FAT results partition by itself and gives it
/// a drive letter.)
///
/// # Errors
/// `path` names a Windows device namespace path.
pub fn refuse_raw_windows_device(path: &Path) -> Result<()> {
    let p = path.to_string_lossy();
    if is_raw_windows_device(path) {
        bail!(
            "{p}: a raw Windows disk is read only through whole sectors: give it to \
             benchboot on Windows (as administrator), or give the card's {RESULTS_LABEL} \
             volume as Windows mounts it (e.g. E:\\, see File Explorer or `Get-Volume`), or \
             an image file of the card"
        );
    }
    Ok(())
}

/// `path` is in Windows' device namespace: `\\.\PhysicalDrive1`, `\\.\E:`,
/// `//./PhysicalDrive2`, `\\?\GLOBALROOT\...`.
pub fn is_raw_windows_device(path: &Path) -> bool {
    let p = path.to_string_lossy();
    p.starts_with(r"\\.\") || p.starts_with(r"\\?\GLOBALROOT") || p.starts_with("//./")
}

fn open_advice(path: &Path) -> String {
    format!(
        "opening {} read-only: reading a card needs read access to the device (run as \
         root, or be in the disk group), or mount its results partition and give that folder",
        path.display()
    )
}

/// `path` opened read-only as a card (a block device; on macOS `/dev/rdiskN`) or a
/// file, through the one reader of named files (`benchboot_input::open`): a FIFO, a
/// socket or another device (`/dev/zero`) is refused, not waited on or read for ever.
///
/// # Errors
/// Opening's, with how to get read access; [`benchboot_input::InputError::NotAFile`].
fn open_card(path: &Path) -> Result<File> {
    match benchboot_input::open(
        path,
        "a card or an image of one",
        benchboot_input::Accept::FileOrDisk,
    ) {
        Ok((f, _)) => Ok(f),
        Err(e @ benchboot_input::InputError::NotAFile { .. }) => Err(e.into()),
        Err(e) => Err(anyhow::Error::new(e).context(open_advice(path))),
    }
}

/// `path` opened as a card or an image; `None` for a folder (a mounted results
/// partition) or a bare results document, which hold no partitions.
///
/// # Errors
/// The open's, with how to get read access.
fn open_disk(path: &Path) -> Result<Option<File>> {
    if path.is_dir() {
        return Ok(None);
    }
    let mut disk = open_card(path)?;
    if starts_with_brace(&mut disk)? {
        return Ok(None);
    }
    Ok(Some(disk))
}

/// True when the first non-blank byte is `{` (a JSON document rather than a disk).
fn starts_with_brace<D: Read + Seek>(f: &mut D) -> Result<bool> {
    let mut head = [0u8; 64];
    let n = f.read(&mut head)?;
    f.seek(SeekFrom::Start(0))?;
    Ok(head[..n]
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{'))
}

/// Finds the results partition: the first FAT-typed partition whose volume label is
/// [`RESULTS_LABEL`], else p2 when it holds a FAT filesystem, else the whole disk when
/// it is one FAT filesystem. Returns the partition and its label, if it has one.
///
/// # Errors
/// None of these; the message lists the partitions seen.
pub fn find_results_partition<R: Read + Seek>(disk: &mut R) -> Result<(Partition, Option<String>)> {
    let parts = partitions(disk)?;
    let mut labels = Vec::new();
    for p in parts.iter().filter(|p| p.is_fat_type()) {
        if let Ok(label) = fat_label(&mut *disk, p) {
            if label.as_deref() == Some(RESULTS_LABEL) {
                return Ok((*p, label));
            }
            labels.push((p.number, label));
        }
    }
    if let Some(p) = parts.iter().find(|p| p.number == RESULTS_PARTITION) {
        if let Ok(label) = fat_label(&mut *disk, p) {
            return Ok((*p, label));
        }
    }
    let len = disk.seek(SeekFrom::End(0))?;
    let whole = Partition {
        number: 0,
        mbr_type: 0,
        offset: 0,
        len,
    };
    if let Ok(label) = fat_label(&mut *disk, &whole) {
        return Ok((whole, label));
    }
    let seen = if parts.is_empty() {
        "no MBR partition table and no FAT filesystem".to_owned()
    } else {
        // At most the first eight: the message is one line (a hostile table has 68).
        let mut seen = parts
            .iter()
            .take(8)
            .map(|p| {
                let label = labels
                    .iter()
                    .find(|(n, _)| *n == p.number)
                    .map(|(_, l)| format!(", label {}", l.as_deref().unwrap_or("none")))
                    .unwrap_or_default();
                format!("p{} type {:#04x}{label}", p.number, p.mbr_type)
            })
            .collect::<Vec<_>>()
            .join("; ");
        if parts.len() > 8 {
            seen.push_str(&format!("; and {} more", parts.len() - 8));
        }
        seen
    };
    bail!("no results partition (FAT labelled {RESULTS_LABEL}, or a FAT p{RESULTS_PARTITION}): found {seen}")
}

/// The volume label of the FAT filesystem on `part`: the root folder's volume entry
/// (what `fatlabel` and Windows set), else the boot sector's; `None` when blank or
/// `NO NAME`.
///
/// # Errors
/// I/O errors, or no FAT filesystem on `part`.
pub fn fat_label<R: Read + Seek>(disk: R, part: &Partition) -> io::Result<Option<String>> {
    fat_guard(|| {
        let fs = open_fat_within(disk, part, LABEL_READ_BUDGET)?;
        let label = match fs.read_volume_label_from_root_dir()? {
            Some(l) => l,
            None => fs.volume_label(),
        };
        let label = label.trim().to_owned();
        Ok((!label.is_empty() && label != "NO NAME").then_some(label))
    })
}

/// Runs `f`, which reads a FAT through fatfs, a panic inside it becoming an
/// [`io::ErrorKind::InvalidData`] error. fatfs 0.3.6 (the newest release) subtracts
/// unchecked where a damaged card gives it cluster 0 or 1 (a directory entry's first
/// cluster, a FAT entry of 1: `cluster - 2` in `sector_from_cluster`), which panics
/// where overflow is checked (debug builds, the fuzz targets); found by the
/// `card_image` fuzz target. Nothing fatfs holds outlives `f`.
pub fn fat_guard<T>(f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the FAT filesystem is damaged (a file or folder points into its reserved \
             clusters); check it with fsck.vfat -n",
        ))
    })
}

/// Reads the file `name` (a path inside the filesystem, `/`-separated) from the FAT
/// filesystem on `part` of `disk`, read-only: nothing is ever written to `disk`. At
/// most `benchboot_results::MAX_DOCUMENT_BYTES` (64 MiB): the files read from a card
/// are results documents and smaller (a FAT file can claim 4 GiB).
///
/// # Errors
/// I/O errors, no FAT filesystem on `part`, [`io::ErrorKind::NotFound`] when the
/// file is not there, [`io::ErrorKind::FileTooLarge`] past the bound.
pub fn read_fat_file<R: Read + Seek>(disk: R, part: &Partition, name: &str) -> io::Result<Vec<u8>> {
    fat_guard(|| {
        let fs = open_fat(disk, part)?;
        let file = fs.root_dir().open_file(name)?;
        read_document(file)
    })
}

type FatOn<R> = fatfs::FileSystem<fscommon::BufStream<fscommon::StreamSlice<ReadOnly<R>>>>;

/// Bytes [`fat_label`] may read of one partition: 4 MiB (the boot sector, FSInfo, the
/// root folder's first clusters and their FAT sectors: the label is its first entry on
/// every card formatted by mkfs.fat or Windows). Labels are read from every FAT-typed
/// partition, so a hostile table of 68 partitions over one huge root folder costs 272
/// MiB of reads, not 68 times the card.
pub const LABEL_READ_BUDGET: u64 = 4 << 20;

/// Mounts the FAT filesystem of `part` over a read-only, partition-offset view of `disk`,
/// allowed to read [`read_budget`] bytes in all.
fn open_fat<R: Read + Seek>(disk: R, part: &Partition) -> io::Result<FatOn<R>> {
    open_fat_within(disk, part, read_budget(part.len))
}

/// [`open_fat`] allowed to read `budget` bytes in all.
fn open_fat_within<R: Read + Seek>(disk: R, part: &Partition, budget: u64) -> io::Result<FatOn<R>> {
    let disk = ReadOnly {
        inner: disk,
        budget,
        partition_len: part.len,
    };
    let slice = fscommon::StreamSlice::new(disk, part.offset, part.offset + part.len)?;
    fatfs::FileSystem::new(fscommon::BufStream::new(slice), fatfs::FsOptions::new())
}

/// Bytes one mounted FAT may read: every file once is at most the partition's length;
/// four times that plus 64 MiB leaves room for the FAT and folders read again. A folder
/// or file whose cluster chain loops back on itself would make fatfs read for ever;
/// the budget turns that into an error.
pub fn read_budget(partition_len: u64) -> u64 {
    partition_len.saturating_mul(4).saturating_add(64 << 20)
}

/// A read-only stream for fatfs, which asks for `Write` but writes nothing when it only
/// reads (no accessed dates, dirty flag left as found): any write is refused, and reads
/// stop with [`io::ErrorKind::InvalidData`] once `budget` bytes were read.
struct ReadOnly<T> {
    inner: T,
    budget: u64,
    partition_len: u64,
}

impl<T: Read> Read for ReadOnly<T> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.budget == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "read {} bytes from a FAT partition of {} bytes without reaching the \
                     end of a file or folder: a cluster chain loops or the filesystem is \
                     damaged (check it with fsck.vfat -n)",
                    read_budget(self.partition_len),
                    self.partition_len
                ),
            ));
        }
        let len = buf
            .len()
            .min(usize::try_from(self.budget).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..len])?;
        self.budget -= n as u64;
        Ok(n)
    }
}

impl<T: Seek> Seek for ReadOnly<T> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}

impl<T> Write for ReadOnly<T> {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "the card is read read-only",
        ))
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
