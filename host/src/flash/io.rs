//! The writing and read-back engine of `benchboot flash`, over two small traits
//! ([`Sink`], [`Source`]) so tests can inject failures between and inside the phases.
//!
//! Order of writes: the first 1 MiB ([`HEAD`]: MBR and partition table) is zeroed
//! first unless the target is known blank, then the rest of the image goes in 4 MiB
//! chunks ([`CHUNK`]), fsync, and only then the first 1 MiB, fsync. A write that stops
//! anywhere before the end leaves a card without a partition table: it does not boot
//! half-written and nothing mounts it.

use std::fs::File;
use std::io;
#[cfg(unix)]
use std::os::unix::fs::FileExt;
#[cfg(unix)]
use std::path::{Path, PathBuf};

use benchboot_sector::{read_exact_at, AlignedBuf, RawIo, Sectors};
use sha2::{Digest, Sha256};

/// Bytes per write and per read-back: 4 MiB.
pub const CHUNK: usize = 4 << 20;
/// The region written last: 1 MiB (MBR, partition table, and the gap before the first
/// partition).
pub const HEAD: u64 = 1 << 20;

/// Where the image goes.
pub trait Sink {
    /// Writes all of `buf` at byte `offset`.
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Everything written so far to stable storage (`fsync`).
    fn sync(&mut self) -> io::Result<()>;
}

/// Where the image is read back from.
pub trait Source {
    /// Reads from byte `offset` until `buf` is full or the end of the target; returns
    /// the bytes read (fewer than `buf.len()` only at the end).
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    /// Empties the page cache of the target before reading it back, when reads do not
    /// bypass it already.
    fn drop_cache(&mut self) -> io::Result<()>;
}

/// What [`write_image`] writes and [`verify_image`] reads back: the card or file, opened.
pub trait Target: Sink + Source {
    /// Aligned I/O bypasses the system's cache (`O_DIRECT`, `F_NOCACHE`,
    /// `FILE_FLAG_NO_BUFFERING`); else it went buffered and was evicted.
    fn is_direct(&self) -> bool;
    /// After writing and verifying: tell the system the disk changed (Windows:
    /// `IOCTL_DISK_UPDATE_PROPERTIES`). Nothing by default.
    ///
    /// # Errors
    /// The system's.
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A disk that takes whole sectors only (Windows' raw disks and unbuffered files, the
/// test double [`benchboot_sector::Strict`]): unaligned requests are served by
/// [`Sectors`] (read-modify-write of a partial sector); nothing is cached, so there is
/// nothing to evict.
impl<R: RawIo> Sink for Sectors<R> {
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        Sectors::write_at(self, buf, offset)
    }

    fn sync(&mut self) -> io::Result<()> {
        self.flush()
    }
}

impl<R: RawIo> Source for Sectors<R> {
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        Sectors::read_at(self, buf, offset)
    }

    fn drop_cache(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<R: RawIo> Target for Sectors<R> {
    fn is_direct(&self) -> bool {
        true
    }
}

/// A block device or regular file opened for writing and reading back, with `O_DIRECT`
/// where the kernel and filesystem allow it (4 MiB writes from an aligned buffer) and
/// buffered I/O for unaligned tails and as a fallback (then `fsync` +
/// `posix_fadvise(DONTNEED)` before reading back).
#[cfg(unix)]
pub struct Disk {
    path: PathBuf,
    direct: Option<File>,
    buffered: File,
    align: usize,
}

#[cfg(unix)]
use benchboot_storage::os::is_einval;

#[cfg(unix)]
impl Disk {
    /// Opens `path` read-write. `align` is the logical block size (offsets and lengths
    /// of `O_DIRECT` I/O are multiples of it). `exclusive` adds `O_EXCL`: on a block
    /// device the open fails with `EBUSY` while anything has it mounted, and nothing
    /// can mount its partitions while benchboot holds it.
    ///
    /// # Errors
    /// The error of open(2) (`EBUSY`, `EACCES`, `ENOENT`, ...).
    pub fn open(path: &Path, align: usize, exclusive: bool) -> io::Result<Disk> {
        use benchboot_storage::os::open_with;
        let rw = || {
            let mut o = std::fs::OpenOptions::new();
            o.read(true).write(true);
            o
        };
        let direct = match open_with(&mut rw(), path, true, exclusive) {
            Ok(f) => Some(f),
            // tmpfs and some FUSE filesystems refuse O_DIRECT at open.
            Err(e) if is_einval(&e) => None,
            Err(e) => return Err(e),
        };
        // The exclusive claim is held by the direct descriptor when there is one.
        let buffered = open_with(&mut rw(), path, false, exclusive && direct.is_none())?;
        Ok(Disk {
            path: path.to_owned(),
            direct,
            buffered,
            align: align.max(1),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(unix)]
impl Target for Disk {
    fn is_direct(&self) -> bool {
        self.direct.is_some()
    }
}

#[cfg(unix)]
impl Sink for Disk {
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        let mut done = 0;
        if let Some(direct) = &self.direct {
            let aligned = buf.len() / self.align * self.align;
            let ok = offset.is_multiple_of(self.align as u64)
                && (buf.as_ptr() as usize).is_multiple_of(self.align)
                && aligned > 0;
            if ok {
                match direct.write_all_at(&buf[..aligned], offset) {
                    Ok(()) => done = aligned,
                    // The filesystem opened O_DIRECT but refuses the write: go buffered.
                    Err(e) if is_einval(&e) => self.direct = None,
                    Err(e) => return Err(e),
                }
            }
        }
        if done < buf.len() {
            self.buffered
                .write_all_at(&buf[done..], offset + done as u64)?;
        }
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        self.buffered.sync_all()
    }
}

#[cfg(unix)]
impl Source for Disk {
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let aligned = offset.is_multiple_of(self.align as u64)
            && (buf.as_ptr() as usize).is_multiple_of(self.align)
            && buf.len().is_multiple_of(self.align);
        let mut done = 0;
        let mut refused = false;
        if let (Some(direct), true) = (&self.direct, aligned) {
            while done < buf.len() {
                match direct.read_at(&mut buf[done..], offset + done as u64) {
                    Ok(0) => return Ok(done),
                    Ok(n) => done += n,
                    Err(e) if is_einval(&e) && done == 0 => {
                        refused = true;
                        break;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
                // O_DIRECT reads come short only at the end of the file.
                if !done.is_multiple_of(self.align) {
                    return Ok(done);
                }
            }
            if !refused {
                return Ok(done);
            }
        }
        if refused {
            // The filesystem refuses O_DIRECT reads: buffered, from an emptied cache.
            self.direct = None;
            self.drop_cache()?;
        }
        while done < buf.len() {
            match self
                .buffered
                .read_at(&mut buf[done..], offset + done as u64)
            {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    fn drop_cache(&mut self) -> io::Result<()> {
        // Also after O_DIRECT writes: the unaligned tail went through the page cache.
        benchboot_storage::os::evict_file(&self.buffered)
    }
}

/// How to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WriteOptions {
    /// Leave all-zero chunks out (the target must read as zeros there already).
    pub skip_zeros: bool,
    /// The target reads as zeros everywhere (a file just created): no need to zero the
    /// first 1 MiB before the body.
    pub known_blank: bool,
}

/// What [`write_image`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WriteReport {
    /// Image bytes written.
    pub bytes_written: u64,
    /// Image bytes left out as all-zero chunks.
    pub bytes_skipped: u64,
    pub chunks_written: u64,
    pub chunks_skipped: u64,
}

/// The chunks of an image of `len` bytes in the order they are written: (offset,
/// length), everything after [`HEAD`] in [`CHUNK`]s, then the head.
pub fn chunk_order(len: u64) -> Vec<(u64, usize)> {
    let head = len.min(HEAD);
    let mut chunks: Vec<(u64, usize)> = (head..len)
        .step_by(CHUNK)
        .map(|off| (off, (len - off).min(CHUNK as u64) as usize))
        .collect();
    if head > 0 {
        chunks.push((0, head as usize));
    }
    chunks
}

/// Writes the first `len` bytes of `image` to `sink` in [`chunk_order`]: zeroes the head
/// first (unless `known_blank`), writes the body, `sync`, then the head, `sync`.
/// `progress` gets the image bytes done so far (written or skipped) after each chunk.
/// `align` aligns the chunk buffer for `O_DIRECT`.
///
/// # Errors
/// The first error of the image or the sink; the head is then still zero (or, for a
/// blank target, unwritten).
pub fn write_image(
    image: &File,
    len: u64,
    sink: &mut dyn Sink,
    align: usize,
    opts: WriteOptions,
    progress: &mut dyn FnMut(u64),
) -> io::Result<WriteReport> {
    let mut buf = AlignedBuf::new(CHUNK, align.clamp(4096, CHUNK));
    let head = len.min(HEAD) as usize;
    if !opts.known_blank && head > 0 {
        buf[..head].fill(0);
        sink.write_at(&buf[..head], 0)?;
        sink.sync()?;
    }
    let mut report = WriteReport::default();
    let mut done = 0;
    // Compared with memcmp: fast in debug builds too.
    let zeros = vec![0u8; if opts.skip_zeros { CHUNK } else { 0 }];
    for (off, n) in chunk_order(len) {
        let data = &mut buf[..n];
        read_exact_at(image, data, off)?;
        // The head is always written: it is what makes the card a card.
        if off == 0 {
            sink.sync()?;
        }
        if opts.skip_zeros && off != 0 && data == &zeros[..n] {
            report.bytes_skipped += n as u64;
            report.chunks_skipped += 1;
        } else {
            sink.write_at(data, off)?;
            report.bytes_written += n as u64;
            report.chunks_written += 1;
        }
        done += n as u64;
        progress(done);
    }
    sink.sync()?;
    Ok(report)
}

/// Why read-back verification failed.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error(
        "verification failed: byte {offset} differs (image SHA-256 {image_sha256}, read back \
         {device_sha256}); the card or reader corrupts data: flash again, and if it fails \
         again use another card"
    )]
    Mismatch {
        /// The first byte that differs.
        offset: u64,
        image_sha256: String,
        device_sha256: String,
    },
    #[error(
        "verification failed: the target ends at byte {end}, the image has {len} bytes; \
         use a larger card"
    )]
    Short { end: u64, len: u64 },
    #[error("verification failed: reading back: {0}")]
    Io(#[from] io::Error),
}

/// What [`verify_image`] found: both sides hash to `sha256`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    pub bytes: u64,
    /// Lowercase hex.
    pub sha256: String,
}

/// Reads the first `len` bytes back from `source` (after [`Source::drop_cache`]) and
/// compares their SHA-256 with the image's. `progress` gets the bytes compared so far.
///
/// # Errors
/// [`VerifyError::Mismatch`] with the first differing byte, [`VerifyError::Short`] when
/// the target is shorter than the image, or an I/O error.
pub fn verify_image(
    image: &File,
    len: u64,
    source: &mut dyn Source,
    align: usize,
    progress: &mut dyn FnMut(u64),
) -> Result<VerifyReport, VerifyError> {
    let align = align.clamp(1, CHUNK);
    source.drop_cache()?;
    let mut want = vec![0u8; CHUNK];
    let mut got = AlignedBuf::new(CHUNK, align.max(4096));
    let (mut h_image, mut h_target) = (Sha256::new(), Sha256::new());
    let mut first_diff = None;
    let mut off = 0u64;
    while off < len {
        let n = (len - off).min(CHUNK as u64) as usize;
        read_exact_at(image, &mut want[..n], off)?;
        let ask = n.div_ceil(align) * align;
        let read = source.read_at(&mut got[..ask], off)?;
        if read < n {
            return Err(VerifyError::Short {
                end: off + read as u64,
                len,
            });
        }
        h_image.update(&want[..n]);
        h_target.update(&got[..n]);
        if first_diff.is_none() && want[..n] != got[..n] {
            let i = (0..n).find(|&i| want[i] != got[i]).unwrap_or(0);
            first_diff = Some(off + i as u64);
        }
        off += n as u64;
        progress(off);
    }
    let image_sha256 = hex(&h_image.finalize());
    let device_sha256 = hex(&h_target.finalize());
    match first_diff {
        None if image_sha256 == device_sha256 => Ok(VerifyReport {
            bytes: len,
            sha256: image_sha256,
        }),
        offset => Err(VerifyError::Mismatch {
            offset: offset.unwrap_or(0),
            image_sha256,
            device_sha256,
        }),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
