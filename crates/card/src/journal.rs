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

use benchboot_journal::{document, document_pieces, scan, Entry, Scan, MBR_TYPE, PARTITION};
use benchboot_results::budget::{Counter, TooManyValues, MAX_DOCUMENT_VALUES};
use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::Partition;

/// Most journal bytes read from a card, whatever its MBR claims: 64 MiB (the image
/// makes 16 MiB; a hostile or damaged MBR can claim terabytes).
pub const MAX_JOURNAL_BYTES: u64 = 64 << 20;
/// Most runs [`Journal::runs`] decodes: a 16 MiB journal holds a handful of standard
/// runs; a card claiming more is damaged or crafted.
pub const MAX_RUNS: usize = 32;
/// Most document bytes [`Journal::runs`] decodes for the runs after the newest, in all:
/// 64 MiB (a deflated record of 64 KiB may claim 64 MiB; real documents are 0.1-2 MB).
pub const MAX_EARLIER_DECODED: u64 = 64 << 20;

/// A card's journal as read: its bytes and what [`scan`] found in them. Documents are
/// decoded on demand, one at a time.
#[derive(Debug)]
pub struct Journal {
    /// Where, e.g. `/dev/sdb p4 (results journal)`.
    pub place: String,
    pub scan: Scan,
    ring: Vec<u8>,
}

/// Why a journal record gave no document.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The payload does not decode to its header's length.
    #[error("{0}")]
    Decode(benchboot_journal::Error),
    /// The decoded document is not UTF-8.
    #[error("not UTF-8 text")]
    NotUtf8,
    /// The document holds more values than any results document
    /// (`benchboot_results::budget`): refused while it was decoded, never held whole.
    #[error("{0}")]
    TooManyValues(TooManyValues),
    /// The header's run id and the document's `run_id` differ (the document's id is
    /// shown escaped: it is outside input).
    #[error("the record of run {record} holds a document of run {}", document.escape_debug())]
    OtherRun {
        /// The run id in the record's header (checked: `[A-Za-z0-9._-]`).
        record: String,
        /// The run id the document names, as written.
        document: String,
    },
    /// Past the [`MAX_RUNS`] newest runs.
    #[error(
        "the journal holds more than {MAX_RUNS} runs (damaged or crafted); the {MAX_RUNS} \
         newest are read"
    )]
    TooManyRuns,
    /// Past [`MAX_EARLIER_DECODED`] bytes of earlier runs' documents.
    #[error("the earlier runs' documents pass {} MiB in all", MAX_EARLIER_DECODED >> 20)]
    EarlierRunsTooLarge,
}

impl Journal {
    /// The document of `e`: within the value budget of a results document (counted as
    /// it is decoded, in 64 KiB pieces, before it is decoded whole), decoded, UTF-8, and
    /// the run its header names (a record's header run id and its document's `run_id`
    /// must agree).
    ///
    /// # Errors
    /// [`RecordError::TooManyValues`], [`RecordError::Decode`], [`RecordError::NotUtf8`]
    /// or [`RecordError::OtherRun`].
    pub fn text(&self, e: &Entry) -> Result<String, RecordError> {
        within_budget(&self.ring, e)?;
        let d = document(&self.ring, e).map_err(RecordError::Decode)?;
        let t = String::from_utf8(d).map_err(|_| RecordError::NotUtf8)?;
        match identity(&t) {
            Some((id, _)) if id != e.header.run_id => Err(RecordError::OtherRun {
                record: e.header.run_id.clone(),
                document: id.to_owned(),
            }),
            _ => Ok(t),
        }
    }

    /// The newest record's sequence number and document (or why none).
    pub fn newest(&self) -> Option<(u64, Result<String, RecordError>)> {
        let e = self.scan.newest()?;
        Some((e.header.seq, self.text(e)))
    }

    /// Every run's newest record, newest run first, at most [`MAX_RUNS`]: run id,
    /// sequence number, document or why none. After the first run, decoding stops at
    /// [`MAX_EARLIER_DECODED`] bytes in all; the runs past a limit say so.
    pub fn runs(&self) -> Vec<(String, u64, Result<String, RecordError>)> {
        let mut decoded = 0u64;
        self.scan
            .newest_per_run()
            .into_iter()
            .enumerate()
            .map(|(i, e)| {
                let h = &e.header;
                let text = if i >= MAX_RUNS {
                    Err(RecordError::TooManyRuns)
                } else if i > 0 && decoded + u64::from(h.raw_len) > MAX_EARLIER_DECODED {
                    Err(RecordError::EarlierRunsTooLarge)
                } else {
                    if i > 0 {
                        decoded += u64::from(h.raw_len);
                    }
                    self.text(e)
                };
                (h.run_id.clone(), h.seq, text)
            })
            .collect()
    }
}

/// Counts the values of `e`'s document as it is decoded ([`document_pieces`]: one
/// 64 KiB buffer), refusing it at the first past [`MAX_DOCUMENT_VALUES`].
///
/// # Errors
/// [`RecordError::TooManyValues`], [`RecordError::Decode`].
pub fn within_budget(
    ring: &[u8],
    e: &Entry,
) -> Result<benchboot_results::budget::Tally, RecordError> {
    let mut counter = Counter::new(MAX_DOCUMENT_VALUES);
    let mut refused = None;
    document_pieces(ring, e, |piece| match counter.feed(piece) {
        Ok(()) => true,
        Err(t) => {
            refused = Some(t);
            false
        }
    })
    .map_err(RecordError::Decode)?;
    match refused {
        Some(t) => Err(RecordError::TooManyValues(t)),
        None => Ok(counter.tally()),
    }
}

/// The journal partition of `disk` (p4 of MBR type 0xda), read (at most
/// [`MAX_JOURNAL_BYTES`]) and scanned; `None` when the disk has none (an image built
/// before the journal, or no benchboot card).
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
    Ok(Some(Journal {
        place: format!("{} p{PARTITION} (results journal)", path.display()),
        scan: scan(&ring),
        ring,
    }))
}

/// What [`identity`] and [`steps`] read of a document: these fields only, every other
/// value skipped unbuilt (`IgnoredAny`), so neither builds more than a run id whatever
/// the text holds (it may be a FAT copy no budget has checked yet). A field of another
/// type reads as absent, as it did through `serde_json::Value`.
#[derive(Deserialize)]
struct Glance {
    #[serde(default)]
    run_id: Loose<String>,
    #[serde(default)]
    system: Loose<System>,
    #[serde(default)]
    storage: Loose<Count>,
    #[serde(default)]
    device_reads: Loose<Count>,
    #[serde(default)]
    random: Loose<Count>,
    #[serde(default)]
    verify: Loose<Count>,
}

#[derive(Default)]
struct System {
    /// `None`: no such key; `Some(None)`: not a whole number.
    written_ns: Option<Option<u64>>,
}

/// An array's length, its elements skipped unbuilt.
struct Count(usize);

/// `Some` when the value is of the type wanted, else `None`, nothing built.
struct Loose<T>(Option<T>);

impl<T> Default for Loose<T> {
    fn default() -> Self {
        Loose(None)
    }
}

/// What each [`Loose`] type takes from a JSON value; every other value is skipped
/// unbuilt and reads as `None`.
trait Wanted: Sized {
    fn from_u64(_: u64) -> Option<Self> {
        None
    }
    fn from_str(_: &str) -> Option<Self> {
        None
    }
    /// From an array of `n` elements (already skipped).
    fn from_len(_: usize) -> Option<Self> {
        None
    }
    fn from_map<'de, A: serde::de::MapAccess<'de>>(a: A) -> Result<Option<Self>, A::Error> {
        skip_map(a).map(|()| None)
    }
}

impl Wanted for String {
    fn from_str(v: &str) -> Option<Self> {
        Some(v.to_owned())
    }
}

impl Wanted for u64 {
    fn from_u64(v: u64) -> Option<Self> {
        Some(v)
    }
}

impl Wanted for Count {
    fn from_len(n: usize) -> Option<Self> {
        Some(Count(n))
    }
}

impl Wanted for System {
    fn from_map<'de, A: serde::de::MapAccess<'de>>(mut a: A) -> Result<Option<Self>, A::Error> {
        let mut sys = System::default();
        while let Some(k) = a.next_key::<Key>()? {
            if k.0 {
                sys.written_ns = Some(a.next_value::<Loose<u64>>()?.0);
            } else {
                a.next_value::<IgnoredAny>()?;
            }
        }
        Ok(Some(sys))
    }
}

/// The one visitor of every [`Loose`] type.
struct LooseVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: Wanted> serde::de::Visitor<'de> for LooseVisitor<T> {
    type Value = Loose<T>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Loose(None))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Loose(None))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Loose(None))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Loose(None))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Loose(T::from_u64(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Loose(T::from_str(v)))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
        skip_seq(a).map(|n| Loose(T::from_len(n)))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
        T::from_map(a).map(Loose)
    }
}

/// Whether a key of `system` is `written_ns` (no key is kept).
struct Key(bool);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Key;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, v: &str) -> Result<Key, E> {
                Ok(Key(v == "written_ns"))
            }
        }
        d.deserialize_str(V)
    }
}

fn skip_seq<'de, A: serde::de::SeqAccess<'de>>(mut a: A) -> Result<usize, A::Error> {
    let mut n = 0;
    while a.next_element::<IgnoredAny>()?.is_some() {
        n += 1;
    }
    Ok(n)
}

fn skip_map<'de, A: serde::de::MapAccess<'de>>(mut a: A) -> Result<(), A::Error> {
    while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

impl<'de, T: Wanted> Deserialize<'de> for Loose<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Loose<T>, D::Error> {
        d.deserialize_any(LooseVisitor(std::marker::PhantomData))
    }
}

fn glance(text: &str) -> Option<Glance> {
    serde_json::from_str(text).ok()
}

/// The run id and `system.written_ns` of a results document, when it has them.
pub fn identity(text: &str) -> Option<(String, u64)> {
    let g = glance(text)?;
    let id = g.run_id.0?;
    // As `Value` read it: no `system.written_ns` key is no identity; a key that is no
    // whole number is 0.
    let ns = g.system.0?.written_ns?.unwrap_or(0);
    Some((id, ns))
}

/// Steps a document holds: its storage, device-read, random and verification
/// measurements (the counts PID 1's `saved` line prints).
pub fn steps(text: &str) -> usize {
    let Some(g) = glance(text) else {
        return 0;
    };
    [g.storage, g.device_reads, g.random, g.verify]
        .into_iter()
        .filter_map(|c| c.0.map(|c| c.0))
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
