//! The card opened for the probe ([`ProbeDisk`]), as [`benchboot_probe::BlockDevice`]:
//! Linux and macOS `O_DIRECT | O_EXCL` (buffered + evicted where the kernel refuses
//! `O_DIRECT`), through an aligned buffer; Windows `FILE_FLAG_NO_BUFFERING |
//! FILE_FLAG_WRITE_THROUGH` in whole sectors ([`benchboot_sector::Sectors`]), its length
//! from `IOCTL_DISK_GET_LENGTH_INFO`.

use std::fs::File;
use std::io;
use std::path::Path;
#[cfg(unix)]
use std::path::PathBuf;

use benchboot_probe::BlockDevice;
#[cfg(unix)]
use benchboot_sector::AlignedBuf;
use benchboot_sector::{RawIo, Sectors};
#[cfg(unix)]
use std::os::unix::fs::FileExt;

/// A block device opened for the probe: `O_DIRECT` (buffered + evicted where the
/// kernel refuses it), `O_EXCL`, I/O through an aligned buffer.
#[cfg(unix)]
pub struct ProbeDisk {
    path: PathBuf,
    file: File,
    direct: bool,
    sector: u64,
    size: u64,
    buf: AlignedBuf,
}

#[cfg(unix)]
fn open(path: &Path, direct: bool) -> io::Result<File> {
    benchboot_storage::os::open_with(
        std::fs::OpenOptions::new().read(true).write(true),
        path,
        direct,
        true,
    )
}

#[cfg(unix)]
impl ProbeDisk {
    /// Opens `path` (a block device) with `sector` its logical block size.
    ///
    /// # Errors
    /// The error of open(2) (`EBUSY` while mounted, `EACCES`, ...) or of finding its
    /// size.
    pub fn open(path: &Path, sector: u64) -> io::Result<ProbeDisk> {
        let (file, direct) = match open(path, true) {
            Ok(f) => (f, true),
            Err(e) if benchboot_storage::os::is_einval(&e) => (open(path, false)?, false),
            Err(e) => return Err(e),
        };
        let size = {
            use std::io::Seek;
            let mut f = &file;
            f.seek(io::SeekFrom::End(0))?
        };
        Ok(ProbeDisk {
            path: path.to_owned(),
            file,
            direct,
            sector: sector.max(512),
            size,
            buf: AlignedBuf::new(1 << 20, 4096),
        })
    }

    pub fn is_direct(&self) -> bool {
        self.direct
    }

    fn room(&mut self, len: usize) {
        if self.buf.len() < len {
            self.buf = AlignedBuf::new(len, 4096);
        }
    }
}

#[cfg(unix)]
impl BlockDevice for ProbeDisk {
    fn size_bytes(&self) -> u64 {
        self.size
    }

    fn block_bytes(&self) -> u64 {
        self.sector
    }

    fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.room(buf.len());
        self.buf[..buf.len()].copy_from_slice(buf);
        self.file.write_all_at(&self.buf[..buf.len()], offset)
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.room(buf.len());
        self.file
            .read_exact_at(&mut self.buf[..buf.len()], offset)?;
        buf.copy_from_slice(&self.buf[..buf.len()]);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.sync_all()?;
        if !self.direct {
            benchboot_storage::os::evict_file(&self.file)?;
        }
        // BLKFLSBUF: the buffer cache of the device, if anything went through it.
        let _ = std::process::Command::new("blockdev")
            .arg("--flushbufs")
            .arg(&self.path)
            .stderr(std::process::Stdio::null())
            .status();
        Ok(())
    }

    fn reopen(&mut self) -> io::Result<()> {
        // Close first: O_EXCL would refuse a second descriptor.
        let old = std::mem::replace(&mut self.file, File::open("/dev/null")?);
        drop(old);
        self.file = open(&self.path, self.direct)?;
        Ok(())
    }
}

/// A card as the probe sees it, on a disk that takes whole sectors only: every request
/// through [`Sectors`]; `reopen` gives a fresh handle (the probe closes and opens the
/// card between writing and reading back). Windows' [`ProbeDisk`] is one over its
/// unbuffered handle; tests run one over `benchboot_sector::Strict`.
pub struct SectorDisk<R> {
    sectors: Sectors<R>,
    sector: u64,
    size: u64,
    reopen: Box<dyn FnMut() -> io::Result<R>>,
}

impl<R: RawIo> SectorDisk<R> {
    /// `raw`, a disk of `size` bytes in sectors of `sector` bytes (at least 512).
    pub fn new(
        raw: R,
        sector: u64,
        size: u64,
        reopen: Box<dyn FnMut() -> io::Result<R>>,
    ) -> SectorDisk<R> {
        let sector = sector.max(512);
        SectorDisk {
            sectors: Sectors::new(raw, sector as usize),
            sector,
            size,
            reopen,
        }
    }

    /// Nothing goes through a cache.
    pub fn is_direct(&self) -> bool {
        true
    }
}

impl<R: RawIo> BlockDevice for SectorDisk<R> {
    fn size_bytes(&self) -> u64 {
        self.size
    }

    fn block_bytes(&self) -> u64 {
        self.sector
    }

    fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.sectors.write_at(buf, offset)
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        if self.sectors.read_at(buf, offset)? < buf.len() {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.sectors.flush()
    }

    fn reopen(&mut self) -> io::Result<()> {
        let raw = (self.reopen)()?;
        self.sectors = Sectors::new(raw, self.sector as usize);
        Ok(())
    }
}

/// A disk opened for the probe on Windows: unbuffered, write-through, whole sectors.
#[cfg(windows)]
pub type ProbeDisk = SectorDisk<File>;

#[cfg(windows)]
impl SectorDisk<File> {
    /// Opens `path` (`\\.\PhysicalDriveN`) with `sector` its logical block size, the
    /// disk's length from `IOCTL_DISK_GET_LENGTH_INFO`.
    ///
    /// # Errors
    /// The open's (`ERROR_ACCESS_DENIED` without an elevated prompt), or the length's.
    pub fn open(path: &Path, sector: u64) -> io::Result<ProbeDisk> {
        let file = benchboot_windisk::open_unbuffered(path, true)?;
        let size = benchboot_windisk::disk_length(&file)?;
        let path = path.to_owned();
        Ok(SectorDisk::new(
            file,
            sector,
            size,
            Box::new(move || benchboot_windisk::open_unbuffered(&path, true)),
        ))
    }
}
