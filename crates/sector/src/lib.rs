//! Whole-sector I/O for disks that take nothing else, on every OS, in safe code.
//!
//! Windows' raw disks (`\\.\PhysicalDriveN`) and files opened with
//! `FILE_FLAG_NO_BUFFERING` take only reads and writes whose offset, length and buffer
//! address are whole multiples of the sector size, and fail the rest with
//! `ERROR_INVALID_PARAMETER` (Microsoft Learn, "File Buffering": "File access sizes,
//! including the optional file offset in the OVERLAPPED structure, if specified, must be
//! for a number of bytes that is an integer multiple of the volume sector size";
//! "File access buffer addresses for read and write operations should be
//! physical-sector-aligned"). Linux's `O_DIRECT` has the same rules (open(2)).
//!
//! - [`RawIo`]: positional reads and writes handed to the disk as they are (a
//!   [`std::fs::File`] is one).
//! - [`Sectors`]: any request on a [`RawIo`]: aligned ones go straight through, the rest
//!   through an aligned bounce buffer, a partial sector written by read-modify-write.
//! - [`SectorReader`]: [`std::io::Read`] + [`std::io::Seek`] over a [`Sectors`] of known
//!   length, for readers that want a stream (the card's MBR and FAT).
//! - [`Strict`]: the test double, a [`RawIo`] that refuses what a raw disk refuses.
#![forbid(unsafe_code)]

mod aligned;

use std::io::{self, Read, Seek, SeekFrom};

pub use aligned::AlignedBuf;

/// Bytes of the bounce buffer of [`Sectors`]: 1 MiB; longer unaligned requests go
/// through it in pieces.
pub const BOUNCE_BYTES: usize = 1 << 20;

/// Positional I/O handed to the disk unchanged: no alignment is added, none is checked.
pub trait RawIo {
    /// Reads up to `buf.len()` bytes at byte `offset`; the count read, 0 at the end.
    /// Whole sectors, as `O_DIRECT` and `FILE_FLAG_NO_BUFFERING` read: a count that is
    /// not is taken as the end (a file's last bytes).
    ///
    /// # Errors
    /// The disk's.
    fn read_raw(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    /// Writes up to `buf.len()` bytes at byte `offset`; the count written (whole
    /// sectors, else [`Sectors`] fails the write as short).
    ///
    /// # Errors
    /// The disk's.
    fn write_raw(&mut self, buf: &[u8], offset: u64) -> io::Result<usize>;
    /// Everything written so far to stable storage (`fsync`, `FlushFileBuffers`).
    ///
    /// # Errors
    /// The disk's.
    fn flush_raw(&mut self) -> io::Result<()>;
}

/// `pread(2)` / `ReadFile` at an offset (`seek_read`: it moves the handle's position,
/// which nothing here relies on).
fn pread(f: &std::fs::File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    #[cfg(unix)]
    return std::os::unix::fs::FileExt::read_at(f, buf, offset);
    #[cfg(windows)]
    return std::os::windows::fs::FileExt::seek_read(f, buf, offset);
}

impl RawIo for std::fs::File {
    fn read_raw(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        pread(self, buf, offset)
    }

    fn write_raw(&mut self, buf: &[u8], offset: u64) -> io::Result<usize> {
        #[cfg(unix)]
        return std::os::unix::fs::FileExt::write_at(self, buf, offset);
        #[cfg(windows)]
        return std::os::windows::fs::FileExt::seek_write(self, buf, offset);
    }

    fn flush_raw(&mut self) -> io::Result<()> {
        self.sync_all()
    }
}

impl<R: RawIo + ?Sized> RawIo for Box<R> {
    fn read_raw(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        (**self).read_raw(buf, offset)
    }
    fn write_raw(&mut self, buf: &[u8], offset: u64) -> io::Result<usize> {
        (**self).write_raw(buf, offset)
    }
    fn flush_raw(&mut self) -> io::Result<()> {
        (**self).flush_raw()
    }
}

/// Fills `buf` from `file` at `offset` (`pread`, `seek_read`), on any OS.
///
/// # Errors
/// The read's; `UnexpectedEof` when the file ends first.
pub fn read_exact_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match pread(file, &mut buf[done..], offset + done as u64) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Reads until `buf` is full or the disk ends; the count read. A count that is not
/// whole `sector`s is the end (a file's last bytes): the next read would be unaligned.
fn read_full<R: RawIo + ?Sized>(
    raw: &mut R,
    buf: &mut [u8],
    offset: u64,
    sector: usize,
) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() && done.is_multiple_of(sector) {
        match raw.read_raw(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Writes all of `buf`; a count short of it and not whole `sector`s fails (the next
/// write would be unaligned, and hide why).
fn write_full<R: RawIo + ?Sized>(
    raw: &mut R,
    buf: &[u8],
    offset: u64,
    sector: usize,
) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match raw.write_raw(&buf[done..], offset + done as u64) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) if done + n < buf.len() && !(done + n).is_multiple_of(sector) => {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    format!(
                        "short write: {n} of {} bytes at byte {}",
                        buf.len() - done,
                        offset + done as u64
                    ),
                ))
            }
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// `offset + done`, or an error where it passes the largest offset.
fn add(offset: u64, done: usize) -> io::Result<u64> {
    offset.checked_add(done as u64).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("byte {offset} + {done}: past the largest offset"),
        )
    })
}

/// The largest sector [`Sectors`] takes, bytes.
pub const MAX_SECTOR: usize = 64 << 10;

/// Any read or write on a disk that takes whole sectors only: requests whose offset,
/// length and buffer address are multiples of the sector go to the disk as they are;
/// the rest through a [`BOUNCE_BYTES`] aligned buffer, a partial first or last sector
/// read first and written back whole (read-modify-write).
pub struct Sectors<R> {
    raw: R,
    sector: usize,
    bounce: AlignedBuf,
}

impl<R: RawIo> Sectors<R> {
    /// `raw` with sectors of `sector` bytes: a power of two, 512 or 4096 for disks
    /// (others are rounded up to one; 0 is taken as 1, more than [`MAX_SECTOR`] as it).
    pub fn new(raw: R, sector: usize) -> Sectors<R> {
        let sector = sector.clamp(1, MAX_SECTOR).next_power_of_two();
        Sectors {
            raw,
            sector,
            bounce: AlignedBuf::new(BOUNCE_BYTES.max(sector), sector.max(4096)),
        }
    }

    /// The sector size in bytes.
    pub fn sector(&self) -> usize {
        self.sector
    }

    pub fn get_ref(&self) -> &R {
        &self.raw
    }

    pub fn get_mut(&mut self) -> &mut R {
        &mut self.raw
    }

    pub fn into_inner(self) -> R {
        self.raw
    }

    fn whole(&self, addr: usize, offset: u64, len: usize) -> bool {
        let s = self.sector;
        addr.is_multiple_of(s) && offset.is_multiple_of(s as u64) && len >= s
    }

    /// Reads from byte `offset` until `buf` is full or the disk ends; the count read
    /// (fewer than `buf.len()` only at the end).
    ///
    /// # Errors
    /// The disk's.
    pub fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let s = self.sector;
        let mut done = 0;
        while done < buf.len() {
            let at = add(offset, done)?;
            let rest = &mut buf[done..];
            if self.whole(rest.as_ptr() as usize, at, rest.len()) {
                let n = rest.len() / s * s;
                add(at, n)?;
                let got = read_full(&mut self.raw, &mut rest[..n], at, s)?;
                done += got;
                if got < n {
                    return Ok(done);
                }
                continue;
            }
            let start = at / s as u64 * s as u64;
            let skip = (at - start) as usize;
            let span = (skip + rest.len()).div_ceil(s) * s;
            let span = span.min(self.bounce.len());
            add(start, span)?;
            let got = read_full(&mut self.raw, &mut self.bounce[..span], start, s)?;
            if got <= skip {
                return Ok(done);
            }
            let n = (got - skip).min(rest.len());
            rest[..n].copy_from_slice(&self.bounce[skip..skip + n]);
            done += n;
            if got < span {
                return Ok(done);
            }
        }
        Ok(done)
    }

    /// Writes all of `buf` at byte `offset`. The bytes of a partial sector outside
    /// `buf` are read first and written back unchanged (zeros past the end of a file).
    ///
    /// # Errors
    /// The disk's.
    pub fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        let s = self.sector;
        let mut done = 0;
        while done < buf.len() {
            let at = add(offset, done)?;
            let rest = &buf[done..];
            if self.whole(rest.as_ptr() as usize, at, rest.len()) {
                let n = rest.len() / s * s;
                add(at, n)?;
                write_full(&mut self.raw, &rest[..n], at, s)?;
                done += n;
                continue;
            }
            let start = at / s as u64 * s as u64;
            let skip = (at - start) as usize;
            let n = rest.len().min(self.bounce.len() - skip);
            let end = skip + n;
            let span = end.div_ceil(s) * s;
            add(start, span)?;
            // The partial sectors' other bytes: read, so they are written back as they were.
            if skip > 0 {
                self.fill_sector(0, start)?;
            }
            let last = end / s * s;
            if !end.is_multiple_of(s) && (last > 0 || skip == 0) {
                self.fill_sector(last, start + last as u64)?;
            }
            self.bounce[skip..end].copy_from_slice(&rest[..n]);
            write_full(&mut self.raw, &self.bounce[..span], start, s)?;
            done += n;
        }
        Ok(())
    }

    /// Reads the sector at byte `at` of the disk into the bounce buffer at `into`,
    /// zeros where the disk ends.
    fn fill_sector(&mut self, into: usize, at: u64) -> io::Result<()> {
        let s = self.sector;
        let got = read_full(&mut self.raw, &mut self.bounce[into..into + s], at, s)?;
        self.bounce[into + got..into + s].fill(0);
        Ok(())
    }

    /// Everything written to stable storage.
    ///
    /// # Errors
    /// The disk's.
    pub fn flush(&mut self) -> io::Result<()> {
        self.raw.flush_raw()
    }
}

/// A [`Sectors`] of `len` bytes read as a stream: [`Read`] and [`Seek`] (from the end
/// too, which a raw disk's handle cannot answer), so a reader of files and partition
/// tables can read a raw disk.
pub struct SectorReader<R> {
    sectors: Sectors<R>,
    len: u64,
    pos: u64,
}

impl<R: RawIo> SectorReader<R> {
    /// `sectors`, whose disk holds `len` bytes.
    pub fn new(sectors: Sectors<R>, len: u64) -> SectorReader<R> {
        SectorReader {
            sectors,
            len,
            pos: 0,
        }
    }

    /// The disk's length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn into_inner(self) -> Sectors<R> {
        self.sectors
    }
}

impl<R: RawIo> Read for SectorReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.len.saturating_sub(self.pos);
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let got = self.sectors.read_at(&mut buf[..n], self.pos)?;
        self.pos += got as u64;
        Ok(got)
    }
}

impl<R: RawIo> Seek for SectorReader<R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let (base, delta) = match to {
            SeekFrom::Start(n) => (n, 0),
            SeekFrom::End(d) => (self.len, d),
            SeekFrom::Current(d) => (self.pos, d),
        };
        self.pos = base
            .checked_add_signed(delta)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        Ok(self.pos)
    }
}

/// The test double: a [`RawIo`] with a raw disk's rules. A read or write whose offset,
/// length or buffer address is not a multiple of the sector fails as Windows fails it
/// (`ERROR_INVALID_PARAMETER`, 87; "File Buffering" on Microsoft Learn), and is counted in
/// `refused`; the others go to `inner`.
pub struct Strict<R> {
    pub inner: R,
    pub sector: usize,
    /// Requests refused for their alignment.
    pub refused: u64,
    /// Requests passed on, reads and writes.
    pub passed: u64,
}

impl<R> Strict<R> {
    pub fn new(inner: R, sector: usize) -> Strict<R> {
        Strict {
            inner,
            sector: sector.max(1),
            refused: 0,
            passed: 0,
        }
    }

    fn check(&mut self, what: &str, addr: usize, len: usize, offset: u64) -> io::Result<()> {
        let s = self.sector;
        if addr.is_multiple_of(s) && len.is_multiple_of(s) && offset.is_multiple_of(s as u64) {
            self.passed += 1;
            return Ok(());
        }
        self.refused += 1;
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{what} of {len} bytes at byte {offset} from address {addr:#x}: not whole \
                 {s}-byte sectors (ERROR_INVALID_PARAMETER, 87)"
            ),
        ))
    }
}

impl<R: RawIo> RawIo for Strict<R> {
    fn read_raw(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        self.check("read", buf.as_ptr() as usize, buf.len(), offset)?;
        self.inner.read_raw(buf, offset)
    }

    fn write_raw(&mut self, buf: &[u8], offset: u64) -> io::Result<usize> {
        self.check("write", buf.as_ptr() as usize, buf.len(), offset)?;
        self.inner.write_raw(buf, offset)
    }

    fn flush_raw(&mut self) -> io::Result<()> {
        self.inner.flush_raw()
    }
}

/// A disk in memory (tests): reads past its end return 0, writes past it fail.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemDisk(pub Vec<u8>);

impl RawIo for MemDisk {
    fn read_raw(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let at = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.0.len());
        let n = buf.len().min(self.0.len() - at);
        buf[..n].copy_from_slice(&self.0[at..at + n]);
        Ok(n)
    }

    fn write_raw(&mut self, buf: &[u8], offset: u64) -> io::Result<usize> {
        let at = usize::try_from(offset).unwrap_or(usize::MAX);
        if at
            .checked_add(buf.len())
            .is_none_or(|end| end > self.0.len())
        {
            return Err(io::Error::other("write past the end of the disk"));
        }
        self.0[at..at + buf.len()].copy_from_slice(buf);
        Ok(buf.len())
    }

    fn flush_raw(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
