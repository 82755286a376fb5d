//! The results journal: where PID 1 saves each results document first, outside any
//! filesystem, so that no power cut can corrupt what a finished step saved.
//!
//! The journal is a raw area of the card (the image's journal partition, p4, MBR type
//! [`MBR_TYPE`]) used as a ring of records. Each save appends one record:
//!
//! ```text
//! offset  bytes  field (little-endian)
//! 0       8      MAGIC "BBJRNL\0\x01"
//! 8       2      format VERSION (1)
//! 10      2      encoding: 0 stored, 1 deflate (RFC 1951, miniz_oxide)
//! 12      4      reserved, 0
//! 16      8      sequence number, 1.., one more than the journal's newest record
//! 24      4      payload bytes as stored (after the header)
//! 28      4      document bytes once decoded (at most MAX_DOCUMENT_BYTES)
//! 32      4      CRC-32 (IEEE) of the payload as stored
//! 36      1      run id length (1..=64)
//! 37      64     run id ([A-Za-z0-9._-]), zero padded
//! 101     23     reserved, 0
//! 124     4      CRC-32 (IEEE) of bytes 0..124
//! 128     ...    payload, then zeros to the next multiple of BLOCK
//! ```
//!
//! Rules that make a cut harmless:
//! - A record is written in one write of whole [`BLOCK`]s at a block boundary, then
//!   synced (`O_DIRECT` + `fdatasync` on the board), before the FAT copy is written.
//! - A record only ever goes after the newest one, or at the ring's start when it does
//!   not fit there; no record is larger than a third of the ring ([`Writer::max_record`]),
//!   so the new record never overlaps the newest complete one (the space before it and
//!   after it add up to at least two thirds of the ring, so one of them holds a third).
//! - No sector is rewritten by every save (no superblock, no index): the writes walk the
//!   ring, so each sector is written once per lap.
//! - Reading ([`scan`]) checks every block boundary: a record counts only when its
//!   header's and its payload's checksums both hold. A torn record (a cut inside its
//!   write) fails one of them and is skipped, never half-read; the newest record whose
//!   checksums hold is the last completed save.
//!
//! Everything here is pure or generic over [`Device`]; PID 1 implements it over the
//! partition's block device, the host reads the ring's bytes from a card or an image.
#![forbid(unsafe_code)]

use std::io;

#[cfg(test)]
mod tests;

/// First bytes of every record.
pub const MAGIC: [u8; 8] = *b"BBJRNL\0\x01";
/// Format version this code writes and reads.
pub const VERSION: u16 = 1;
/// Record alignment and write unit, bytes: 4 KiB, a multiple of every SD card's 512-byte
/// block and of the NAND page sizes (4-16 KiB) cards program, and `O_DIRECT`'s logical
/// block size on every card and USB disk.
pub const BLOCK: u64 = 4096;
/// Header bytes before the payload.
pub const HEADER_LEN: usize = 128;
/// Longest run id, bytes (the results' run id: board name, `-`, a number).
pub const MAX_RUN_ID: usize = 64;
/// Largest document a record holds once decoded, bytes: the results crate's
/// `MAX_DOCUMENT_BYTES` (64 MiB), which every reader of a document also enforces.
pub const MAX_DOCUMENT_BYTES: u32 = 64 << 20;
/// MBR partition type of the journal partition: 0xda, "Non-FS data" (fdisk's list), as
/// the raw test partition; the journal is the primary partition p4.
pub const MBR_TYPE: u8 = 0xda;
/// Partition number of the journal in benchboot's layout (crates/image/src/layout.rs).
pub const PARTITION: u8 = 4;
/// Sequence numbers above this are refused on reading (so one more never wraps), and
/// never written ([`Error::SequenceExhausted`]).
const MAX_SEQ: u64 = 1 << 62;
/// deflate level of saved documents: miniz_oxide's 1, the fastest; PID 1 saves after
/// every step. (The 116 KB QEMU document host/tests/data/rpi-zero-w-qemu.json: 7.2 KB
/// with `gzip -1`, 5.4 KB with `gzip -6`; either way two 4 KiB blocks at most.)
const LEVEL: u8 = 1;

/// How a record's payload is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// The document's bytes as they are.
    Stored = 0,
    /// Raw deflate (RFC 1951).
    Deflate = 1,
}

/// A record's header, as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub seq: u64,
    pub encoding: Encoding,
    /// Payload bytes as stored.
    pub stored_len: u32,
    /// Document bytes once decoded.
    pub raw_len: u32,
    pub payload_crc: u32,
    pub run_id: String,
}

impl Header {
    /// Bytes the record takes in the ring: header and payload rounded up to [`BLOCK`].
    pub fn record_len(&self) -> u64 {
        (HEADER_LEN as u64 + u64::from(self.stored_len)).div_ceil(BLOCK) * BLOCK
    }
}

/// One record whose checksums hold, where it is in the ring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Byte offset of the record in the ring (a multiple of [`BLOCK`]).
    pub offset: u64,
    pub header: Header,
}

impl Entry {
    /// Offset just past the record.
    pub fn end(&self) -> u64 {
        self.offset + self.header.record_len()
    }
}

/// What [`scan`] found in a ring.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// Every record whose checksums hold, by offset.
    pub records: Vec<Entry>,
    /// Offsets of headers that hold but whose payload does not (a cut inside the
    /// record's write, or damage): skipped.
    pub torn: Vec<u64>,
    /// The ring's bytes, a multiple of [`BLOCK`] (any tail shorter than one is unused).
    pub ring_len: u64,
    /// True when the payload checks stopped early: a ring full of headers that claim
    /// large payloads and fail them (damage or a hostile card) costs at most four
    /// ring-lengths of checksumming.
    pub gave_up: bool,
}

impl Scan {
    /// The newest record (highest sequence number): the last completed save.
    pub fn newest(&self) -> Option<&Entry> {
        self.records.iter().max_by_key(|e| e.header.seq)
    }

    /// The newest record of each run id, newest run first (of two records with one
    /// sequence number, the later in the ring, as [`Scan::newest`]).
    pub fn newest_per_run(&self) -> Vec<&Entry> {
        let mut best: std::collections::HashMap<&str, &Entry> = std::collections::HashMap::new();
        for e in &self.records {
            let b = best.entry(e.header.run_id.as_str()).or_insert(e);
            if b.header.seq <= e.header.seq {
                *b = e;
            }
        }
        let mut best: Vec<&Entry> = best.into_values().collect();
        best.sort_by_key(|e| (std::cmp::Reverse(e.header.seq), std::cmp::Reverse(e.offset)));
        best
    }
}

/// What can go wrong writing or decoding a record.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("journal device: {0}")]
    Io(#[from] io::Error),
    #[error(
        "a record of {record} bytes does not fit the journal: at most {max} (a third of its \
         {ring} bytes); the document is saved on the FAT copy only"
    )]
    TooLarge { record: u64, max: u64, ring: u64 },
    #[error("the document is {0} bytes: at most {MAX_DOCUMENT_BYTES} go into a record")]
    DocumentTooLarge(usize),
    #[error("run id {0:?}: 1 to 64 characters of A-Z a-z 0-9 . _ -")]
    RunId(String),
    #[error("journal record {seq} at byte {offset}: {why}")]
    Corrupt { seq: u64, offset: u64, why: String },
    #[error(
        "the journal's sequence numbers are used up (its newest record claims {0}: a \
         crafted card?); flash the card again to clear it"
    )]
    SequenceExhausted(u64),
}

/// The block device (or file, or memory) under a journal.
pub trait Device {
    /// Length in bytes.
    fn len(&self) -> u64;
    /// True when [`Device::len`] is 0.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Fills `buf` from `offset`.
    ///
    /// # Errors
    /// Any read error; a short read is an error.
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    /// Writes all of `buf` (whole [`BLOCK`]s) at `offset` (a multiple of [`BLOCK`]).
    ///
    /// # Errors
    /// Any write error; a short write is an error.
    fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()>;
    /// Makes every write so far durable (`fdatasync`).
    ///
    /// # Errors
    /// The device's flush error.
    fn sync(&mut self) -> io::Result<()>;
}

/// True for a run id a record may carry: 1 to [`MAX_RUN_ID`] bytes of `[A-Za-z0-9._-]`.
pub fn valid_run_id(id: &str) -> bool {
    (1..=MAX_RUN_ID).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The record of document `doc` of run `run_id` with sequence number `seq`: header,
/// deflated payload (stored as is when deflate does not shrink it), zeros to a multiple
/// of [`BLOCK`].
///
/// # Errors
/// [`Error::RunId`], [`Error::DocumentTooLarge`].
pub fn encode(seq: u64, run_id: &str, doc: &[u8]) -> Result<Vec<u8>, Error> {
    if !valid_run_id(run_id) {
        return Err(Error::RunId(run_id.to_owned()));
    }
    let raw_len = u32::try_from(doc.len())
        .ok()
        .filter(|n| *n <= MAX_DOCUMENT_BYTES)
        .ok_or(Error::DocumentTooLarge(doc.len()))?;
    let deflated = miniz_oxide::deflate::compress_to_vec(doc, LEVEL);
    let (encoding, payload) = if deflated.len() < doc.len() {
        (Encoding::Deflate, deflated.as_slice())
    } else {
        (Encoding::Stored, doc)
    };
    let header = Header {
        seq,
        encoding,
        // Deflate never grows a document below MAX_DOCUMENT_BYTES past u32.
        stored_len: payload.len() as u32,
        raw_len,
        payload_crc: crc32fast::hash(payload),
        run_id: run_id.to_owned(),
    };
    let mut rec = Vec::with_capacity(header.record_len() as usize);
    rec.extend_from_slice(&header_bytes(&header));
    rec.extend_from_slice(payload);
    rec.resize(header.record_len() as usize, 0);
    Ok(rec)
}

/// The [`HEADER_LEN`] bytes of `h`, its checksum last.
pub fn header_bytes(h: &Header) -> [u8; HEADER_LEN] {
    let mut b = [0u8; HEADER_LEN];
    b[0..8].copy_from_slice(&MAGIC);
    b[8..10].copy_from_slice(&VERSION.to_le_bytes());
    b[10..12].copy_from_slice(&(h.encoding as u16).to_le_bytes());
    b[16..24].copy_from_slice(&h.seq.to_le_bytes());
    b[24..28].copy_from_slice(&h.stored_len.to_le_bytes());
    b[28..32].copy_from_slice(&h.raw_len.to_le_bytes());
    b[32..36].copy_from_slice(&h.payload_crc.to_le_bytes());
    let id = h.run_id.as_bytes();
    let n = id.len().min(MAX_RUN_ID);
    b[36] = n as u8;
    b[37..37 + n].copy_from_slice(&id[..n]);
    let crc = crc32fast::hash(&b[..124]);
    b[124..128].copy_from_slice(&crc.to_le_bytes());
    b
}

/// The header at the start of `b`, when it is one: magic, version, checksum, encoding,
/// run id, sequence number and lengths all valid. Never panics.
pub fn parse_header(b: &[u8]) -> Option<Header> {
    let b = b.get(..HEADER_LEN)?;
    let u16_at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
    let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    if b[..8] != MAGIC || u16_at(8) != VERSION || crc32fast::hash(&b[..124]) != u32_at(124) {
        return None;
    }
    let encoding = match u16_at(10) {
        0 => Encoding::Stored,
        1 => Encoding::Deflate,
        _ => return None,
    };
    let seq = u64::from_le_bytes(b[16..24].try_into().ok()?);
    let (stored_len, raw_len) = (u32_at(24), u32_at(28));
    let n = usize::from(b[36]);
    let run_id = std::str::from_utf8(b.get(37..37 + n)?).ok()?;
    let plausible = seq > 0
        && seq <= MAX_SEQ
        && raw_len <= MAX_DOCUMENT_BYTES
        && (encoding == Encoding::Deflate || stored_len == raw_len)
        && valid_run_id(run_id);
    plausible.then(|| Header {
        seq,
        encoding,
        stored_len,
        raw_len,
        payload_crc: u32_at(32),
        run_id: run_id.to_owned(),
    })
}

/// Every record of `ring` whose checksums hold, checking each [`BLOCK`] boundary (the
/// ring's bytes as read from the card; a tail shorter than a block is ignored). Pure;
/// never panics, whatever the bytes.
pub fn scan(ring: &[u8]) -> Scan {
    let ring_len = ring.len() as u64 / BLOCK * BLOCK;
    let mut scan = Scan {
        ring_len,
        ..Scan::default()
    };
    let mut budget = ring_len.saturating_mul(4);
    let mut at = 0u64;
    while at < ring_len {
        let Some(h) = parse_header(&ring[at as usize..]) else {
            at += BLOCK;
            continue;
        };
        let end = at + h.record_len();
        let payload_end = at + HEADER_LEN as u64 + u64::from(h.stored_len);
        if end > ring_len {
            scan.torn.push(at);
            at += BLOCK;
            continue;
        }
        if budget < u64::from(h.stored_len) {
            scan.gave_up = true;
            break;
        }
        budget -= u64::from(h.stored_len);
        let payload = &ring[at as usize + HEADER_LEN..payload_end as usize];
        if crc32fast::hash(payload) == h.payload_crc {
            scan.records.push(Entry {
                offset: at,
                header: h,
            });
            at = end;
        } else {
            scan.torn.push(at);
            at += BLOCK;
        }
    }
    scan
}

/// The document `e` holds, decoded from `ring` (the bytes [`scan`] found it in).
///
/// # Errors
/// [`Error::Corrupt`] when the payload does not decode to exactly the header's length
/// (a record whose checksum holds but that was written wrong, or a crafted one).
pub fn document(ring: &[u8], e: &Entry) -> Result<Vec<u8>, Error> {
    let mut doc = Vec::new();
    document_pieces(ring, e, |piece| {
        doc.extend_from_slice(piece);
        true
    })?;
    let h = &e.header;
    if doc.len() != h.raw_len as usize {
        return Err(Error::Corrupt {
            seq: h.seq,
            offset: e.offset,
            why: format!(
                "decodes to {} bytes, the header says {}",
                doc.len(),
                h.raw_len
            ),
        });
    }
    Ok(doc)
}

/// Bytes [`document_pieces`] decodes at a time: 64 KiB.
pub const PIECE: usize = 64 << 10;

/// The document `e` holds, decoded from `ring` piece by piece ([`PIECE`] bytes at a
/// time into one buffer) and given to `each`, which returns false to stop: a reader
/// can judge a document (its value budget) without holding it decoded, so a record
/// that inflates to 64 MiB costs 64 KiB until it is accepted. Returns the bytes given.
///
/// # Errors
/// [`Error::Corrupt`] when the payload runs past the ring, its checksum fails, deflate
/// fails, or it decodes to more than its header's length. (A shorter document is not
/// an error here: [`document`] says so.)
pub fn document_pieces(
    ring: &[u8],
    e: &Entry,
    mut each: impl FnMut(&[u8]) -> bool,
) -> Result<u64, Error> {
    use miniz_oxide::inflate::stream::{inflate, InflateState};
    use miniz_oxide::{DataFormat, MZError, MZFlush, MZStatus};
    let h = &e.header;
    let corrupt = |why: String| Error::Corrupt {
        seq: h.seq,
        offset: e.offset,
        why,
    };
    let start = e.offset as usize + HEADER_LEN;
    let payload = ring
        .get(start..start + h.stored_len as usize)
        .ok_or_else(|| corrupt("the payload runs past the ring".into()))?;
    if crc32fast::hash(payload) != h.payload_crc {
        return Err(corrupt("the payload's checksum fails".into()));
    }
    if h.encoding == Encoding::Stored {
        for piece in payload.chunks(PIECE) {
            if !each(piece) {
                break;
            }
        }
        return Ok(payload.len() as u64);
    }
    let mut state = InflateState::new_boxed(DataFormat::Raw);
    let mut buf = vec![0u8; PIECE];
    let (mut input, mut given) = (payload, 0u64);
    loop {
        let r = inflate(&mut state, input, &mut buf, MZFlush::None);
        input = &input[r.bytes_consumed..];
        given += r.bytes_written as u64;
        if given > u64::from(h.raw_len) {
            return Err(corrupt(format!(
                "decodes to more than the {} bytes the header says",
                h.raw_len
            )));
        }
        if r.bytes_written > 0 && !each(&buf[..r.bytes_written]) {
            return Ok(given);
        }
        match r.status {
            Ok(MZStatus::StreamEnd) => return Ok(given),
            Ok(_) if r.bytes_consumed > 0 || r.bytes_written > 0 => {}
            Ok(_) | Err(MZError::Buf) => {
                return Err(corrupt("deflate: the payload ends early".into()))
            }
            Err(e) => return Err(corrupt(format!("deflate: {e:?}"))),
        }
    }
}

/// Where one append went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    /// Byte offset of the record in the ring.
    pub offset: u64,
    /// Bytes written (whole blocks).
    pub bytes: u64,
    pub seq: u64,
    /// True when this record went to the ring's start (a new lap).
    pub wrapped: bool,
}

/// PID 1's end of the journal: appends records after the newest one.
pub struct Writer<D: Device> {
    dev: D,
    ring_len: u64,
    next: u64,
    seq: u64,
}

impl<D: Device> Writer<D> {
    /// Reads the whole ring, finds its newest record and makes ready to write after it
    /// (at the start, sequence 1, on a ring with none). Returns what the scan found
    /// too (earlier runs' records stay readable until the ring comes round to them).
    ///
    /// # Errors
    /// The device's read error.
    pub fn open(mut dev: D) -> io::Result<(Self, Scan, Vec<u8>)> {
        let len = dev.len() / BLOCK * BLOCK;
        let mut ring = vec![0u8; len as usize];
        // In 1 MiB reads: the device's bounce buffer (O_DIRECT) stays that small.
        for (i, chunk) in ring.chunks_mut(1 << 20).enumerate() {
            dev.read_at(i as u64 * (1 << 20), chunk)?;
        }
        let scan = scan(&ring);
        let (next, seq) = scan
            .newest()
            .map_or((0, 1), |e| (e.end(), e.header.seq + 1));
        let w = Writer {
            dev,
            ring_len: len,
            next,
            seq,
        };
        Ok((w, scan, ring))
    }

    /// Largest record the ring takes, bytes: a third of it, in whole blocks.
    pub fn max_record(&self) -> u64 {
        self.ring_len / 3 / BLOCK * BLOCK
    }

    /// Appends `doc` of run `run_id` as the newest record and syncs it: after the
    /// newest record when it fits there, else at the ring's start.
    ///
    /// # Errors
    /// [`Error::TooLarge`] and [`Error::SequenceExhausted`] (nothing written), the
    /// device's write or sync error (the record may be torn; the previous newest is
    /// intact), [`encode`]'s errors.
    pub fn append(&mut self, run_id: &str, doc: &[u8]) -> Result<Appended, Error> {
        // A record past MAX_SEQ would be refused by every reader: invisible.
        if self.seq > MAX_SEQ {
            return Err(Error::SequenceExhausted(self.seq - 1));
        }
        let rec = encode(self.seq, run_id, doc)?;
        let bytes = rec.len() as u64;
        if bytes > self.max_record() {
            return Err(Error::TooLarge {
                record: bytes,
                max: self.max_record(),
                ring: self.ring_len,
            });
        }
        let wrapped = self.next + bytes > self.ring_len;
        let offset = if wrapped { 0 } else { self.next };
        self.dev.write_at(offset, &rec)?;
        self.dev.sync()?;
        let done = Appended {
            offset,
            bytes,
            seq: self.seq,
            wrapped,
        };
        self.next = offset + bytes;
        self.seq += 1;
        Ok(done)
    }

    /// The device, back.
    pub fn into_inner(self) -> D {
        self.dev
    }
}
