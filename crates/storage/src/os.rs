//! The syscalls of the storage engine, all through rustix's safe API: opening past the
//! page cache, flushing to the device, page-cache control and the refusal of RAM
//! filesystems. One interface, an implementation per OS (Linux: the boards and Linux
//! hosts; macOS: `benchboot storage`, `flash` and `probe` on a Mac; other systems have no
//! storage engine: the host tool says so).
//!
//! | what | Linux | macOS |
//! |---|---|---|
//! | [`open_direct`] | `O_DIRECT` (open(2)) | `fcntl(F_NOCACHE, 1)` after open (fcntl(2): no O_DIRECT) |
//! | [`flush_data`] | `fdatasync(2)` | `fcntl(F_FULLFSYNC)` (fsync(2) on macOS leaves data in the drive's cache) |
//! | [`evict_file`] | flush, then `posix_fadvise(DONTNEED)` | flush, then `F_NOCACHE` on the descriptor |
//! | [`drop_caches`] | `sync` + `drop_caches=3` | not offered (`purge` is no syscall) |
//! | RAM filesystems | statfs magic tmpfs, ramfs | statfs type `tmpfs` (a `hdiutil ram://` disk is HFS/APFS: not seen) |
//!
//! [`METHOD`] says in one line what ran, for the report.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
compile_error!(
    "benchboot-storage runs on Linux and macOS (the host tool has no storage engine elsewhere)"
);

/// How this build bypasses the cache and flushes, as the report states it.
#[cfg(target_os = "linux")]
pub const METHOD: &str =
    "O_DIRECT for direct I/O, fdatasync(2) as the flush, posix_fadvise(DONTNEED) to evict";
#[cfg(target_os = "macos")]
pub const METHOD: &str =
    "F_NOCACHE for direct I/O and every read (macOS has no O_DIRECT), F_FULLFSYNC as the flush";

/// Opens `path` with `o`, past the page cache.
///
/// # Errors
/// open(2)'s; `EINVAL` where the filesystem refuses direct I/O ([`is_einval`]).
pub fn open_direct(o: &mut OpenOptions, path: &Path) -> io::Result<File> {
    open_with(o, path, true, false)
}

/// Opens `path` with `o`: past the page cache when `direct`; `exclusive` claims a block
/// device (Linux `O_EXCL`: `EBUSY` while anything has it mounted, and nothing mounts it
/// while held; macOS has no such claim on a device: `diskutil unmountDisk` comes first).
///
/// # Errors
/// open(2)'s (`EBUSY`, `EACCES`, `EINVAL` for a refused direct open, ...).
pub fn open_with(
    o: &mut OpenOptions,
    path: &Path,
    direct: bool,
    exclusive: bool,
) -> io::Result<File> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::OFlags;
        use std::os::unix::fs::OpenOptionsExt;
        let mut flags = OFlags::empty();
        if direct {
            flags |= OFlags::DIRECT;
        }
        if exclusive {
            flags |= OFlags::EXCL;
        }
        o.custom_flags(flags.bits() as i32).open(path)
    }
    #[cfg(target_os = "macos")]
    {
        let _ = exclusive;
        let f = o.open(path)?;
        if direct {
            rustix::fs::fcntl_nocache(&f, true)?;
        }
        Ok(f)
    }
}

/// Opens `path` for reading so the read comes from the device: Linux relies on the
/// eviction before it ([`evict_file`], [`drop_caches`]); macOS, which cannot evict,
/// sets `F_NOCACHE` on the descriptor.
///
/// # Errors
/// open(2)'s.
pub fn open_read_uncached(path: &Path) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true);
    #[cfg(target_os = "linux")]
    {
        o.open(path)
    }
    #[cfg(target_os = "macos")]
    {
        open_direct(&mut o, path)
    }
}

/// Writes `file`'s data through to the device.
///
/// # Errors
/// The call's error.
pub fn flush_data(file: &File) -> io::Result<()> {
    // std's sync_data: fdatasync(2) on Linux, fcntl(F_FULLFSYNC) on Apple systems.
    file.sync_data()
}

/// `sync(2)` then `3` into `/proc/sys/vm/drop_caches`: page cache, dentries and inodes
/// are dropped (Documentation/admin-guide/sysctl/vm.rst). Needs root. Linux only.
///
/// # Errors
/// The write's error; on macOS `Unsupported`.
pub fn drop_caches() -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        rustix::fs::sync();
        std::fs::write("/proc/sys/vm/drop_caches", "3")
    }
    #[cfg(target_os = "macos")]
    {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "macOS has no call that empties the whole cache: reads use F_NOCACHE",
        ))
    }
}

/// Flushes `file` ([`flush_data`]), then takes its pages out of the cache:
/// `posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)` on Linux (works without root); on macOS
/// `F_NOCACHE` on this descriptor (reads are opened with it: [`open_read_uncached`]).
///
/// # Errors
/// The calls' errors.
pub fn evict_file(file: &File) -> io::Result<()> {
    flush_data(file)?;
    #[cfg(target_os = "linux")]
    {
        rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::DontNeed)?;
    }
    #[cfg(target_os = "macos")]
    {
        rustix::fs::fcntl_nocache(file, true)?;
    }
    Ok(())
}

/// Whether `e` is `EINVAL`: what open(2) and I/O answer when a filesystem refuses
/// direct I/O.
pub fn is_einval(e: &io::Error) -> bool {
    e.raw_os_error() == Some(rustix::io::Errno::INVAL.raw_os_error())
}

/// `statfs(2)` magic numbers of filesystems that live in RAM (include/uapi/linux/magic.h).
pub const TMPFS_MAGIC: u64 = 0x0102_1994;
pub const RAMFS_MAGIC: u64 = 0x8584_58f6;

/// Why [`refuse_ram_filesystem`] refused a directory.
#[derive(Debug, thiserror::Error)]
pub enum RamFsError {
    /// `statfs(2)` on the directory failed.
    #[error("statfs {}: {error}", dir.display())]
    Statfs {
        /// The directory asked about.
        dir: std::path::PathBuf,
        /// The kernel's error (in the message, so not also a `source`).
        error: io::Error,
    },
    /// The directory is on tmpfs or ramfs; `how` is the evidence (`statfs magic 0x1021994`).
    #[error(
        "{} is on a RAM filesystem ({how}): it would measure memory, not storage; pick a \
         directory on the disk to test",
        dir.display()
    )]
    Ram {
        /// The directory asked about.
        dir: std::path::PathBuf,
        /// `statfs magic <hex>` (Linux) or `statfs type tmpfs` (macOS).
        how: String,
    },
}

/// Refuses a directory whose filesystem lives in RAM: measuring it measures memory.
///
/// # Errors
/// [`RamFsError`], naming `dir`: `statfs(2)` failed, or it is tmpfs or ramfs.
pub fn refuse_ram_filesystem(dir: &Path) -> Result<(), RamFsError> {
    let st = rustix::fs::statfs(dir).map_err(|e| RamFsError::Statfs {
        dir: dir.to_owned(),
        error: e.into(),
    })?;
    #[cfg(target_os = "linux")]
    let ram = {
        #[allow(clippy::unnecessary_cast)] // f_type's type differs between targets
        let magic = st.f_type as u64;
        (magic == TMPFS_MAGIC || magic == RAMFS_MAGIC).then(|| format!("statfs magic {magic:#x}"))
    };
    #[cfg(target_os = "macos")]
    let ram = {
        let name: String = st
            .f_fstypename
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8 as char)
            .collect();
        (name == "tmpfs").then(|| format!("statfs type {name}"))
    };
    match ram {
        Some(how) => Err(RamFsError::Ram {
            dir: dir.to_owned(),
            how,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn tmpfs_is_refused_and_disk_is_not() {
        let err = refuse_ram_filesystem(Path::new("/dev/shm")).unwrap_err();
        assert!(
            matches!(&err, RamFsError::Ram { dir, how }
                if dir == Path::new("/dev/shm") && how == "statfs magic 0x1021994"),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "/dev/shm is on a RAM filesystem (statfs magic 0x1021994): it would measure \
             memory, not storage; pick a directory on the disk to test"
        );
        assert!(matches!(
            refuse_ram_filesystem(Path::new("/no/such/dir")),
            Err(RamFsError::Statfs { .. })
        ));
        refuse_ram_filesystem(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn o_direct_and_einval_are_the_kernels() {
        assert_eq!(rustix::fs::OFlags::DIRECT.bits() as i32, libc::O_DIRECT);
        assert!(is_einval(&io::Error::from_raw_os_error(libc::EINVAL)));
        assert!(!is_einval(&io::Error::from_raw_os_error(libc::EIO)));
    }

    /// A direct open of a file on this disk works or is refused with EINVAL (tmpfs);
    /// a flush and an eviction of a written file succeed.
    #[test]
    fn direct_open_flush_and_evict() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![7u8; 8192]).unwrap();
        let f = File::options().write(true).open(&p).unwrap();
        flush_data(&f).unwrap();
        evict_file(&f).unwrap();
        match open_direct(OpenOptions::new().read(true), &p) {
            Ok(_) => {}
            Err(e) => assert!(is_einval(&e), "{e}"),
        }
        open_read_uncached(&p).unwrap();
    }
}
