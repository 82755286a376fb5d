//! The syscalls of the storage engine, all through rustix's safe API: page-cache
//! control, `O_DIRECT`, and the refusal of RAM filesystems (`statfs`).
//!
//! Each function names the C call it makes; see its man page for the details.

use std::io;
use std::path::Path;

/// `sync(2)` then `3` into `/proc/sys/vm/drop_caches`: page cache, dentries and inodes
/// are dropped (Documentation/admin-guide/sysctl/vm.rst). Needs root.
pub fn drop_caches() -> io::Result<()> {
    rustix::fs::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3")
}

/// `posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)` after `fdatasync`: the file's clean
/// pages leave the page cache (posix_fadvise(2)); works without root.
pub fn evict_file(file: &std::fs::File) -> io::Result<()> {
    rustix::fs::fdatasync(file)?;
    rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::DontNeed)?;
    Ok(())
}

/// `O_DIRECT` for `OpenOptionsExt::custom_flags` (open(2)).
pub const O_DIRECT: i32 = rustix::fs::OFlags::DIRECT.bits() as i32;

/// Whether `e` is `EINVAL`: what open(2) and I/O answer when a filesystem refuses
/// `O_DIRECT`.
pub fn is_einval(e: &io::Error) -> bool {
    e.raw_os_error() == Some(rustix::io::Errno::INVAL.raw_os_error())
}

/// `statfs(2)` magic numbers of filesystems that live in RAM (include/uapi/linux/magic.h).
pub const TMPFS_MAGIC: u64 = 0x0102_1994;
pub const RAMFS_MAGIC: u64 = 0x8584_58f6;

/// Refuses a directory whose filesystem lives in RAM: measuring it measures memory.
///
/// # Errors
/// The reason, naming `dir`: `statfs(2)` failed, or its magic is tmpfs's or ramfs's.
pub fn refuse_ram_filesystem(dir: &Path) -> Result<(), String> {
    let st = rustix::fs::statfs(dir).map_err(|e| format!("statfs {}: {e}", dir.display()))?;
    #[allow(clippy::unnecessary_cast)] // f_type's type differs between targets
    let magic = st.f_type as u64;
    if magic == TMPFS_MAGIC || magic == RAMFS_MAGIC {
        return Err(format!(
            "{} is on a RAM filesystem (statfs magic {magic:#x}): it would measure memory, not storage; \
             pick a directory on the disk to test",
            dir.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tmpfs_is_refused_and_disk_is_not() {
        let err = refuse_ram_filesystem(Path::new("/dev/shm")).unwrap_err();
        assert!(
            err.contains("RAM filesystem") && err.contains("/dev/shm"),
            "{err}"
        );
        refuse_ram_filesystem(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
    }

    #[test]
    fn o_direct_and_einval_are_the_kernels() {
        assert_eq!(O_DIRECT, libc::O_DIRECT);
        assert!(is_einval(&io::Error::from_raw_os_error(libc::EINVAL)));
        assert!(!is_einval(&io::Error::from_raw_os_error(libc::EIO)));
    }
}
