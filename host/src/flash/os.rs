//! What `flash` asks of the OS: the card's filesystems out of the way ([`unmount_all`]:
//! unmount on Linux and macOS, lock and dismount on Windows), the target opened past the
//! cache ([`open_target`]), the errors of opening it in words, macOS's raw node and
//! eject.

#[cfg(unix)]
use anyhow::bail;
#[cfg(target_os = "macos")]
use anyhow::Context;
use anyhow::Result;
use std::path::{Path, PathBuf};

use super::io::Target;
use super::Plan;
use crate::devices::Device;

/// Opens what `plan` writes. Linux and macOS: [`super::io::Disk`] (`O_DIRECT` /
/// `F_NOCACHE` where the system allows it; `O_EXCL` on a disk when `exclusive`).
/// Windows: `FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH`, every request in whole
/// sectors of `plan.align` bytes ([`benchboot_sector::Sectors`]); a file keeps the
/// length it would have had written the ordinary way.
///
/// # Errors
/// The open's.
#[cfg_attr(windows, allow(unused_variables))]
pub fn open_target(plan: &Plan, exclusive: bool) -> std::io::Result<Box<dyn Target>> {
    #[cfg(unix)]
    return Ok(Box::new(super::io::Disk::open(
        &plan.path, plan.align, exclusive,
    )?));
    #[cfg(windows)]
    {
        let file = benchboot_windisk::open_unbuffered(&plan.path, true)?;
        let keep_len = match plan.target {
            super::Target::File { .. } => Some(file.metadata()?.len().max(plan.image_bytes)),
            super::Target::Disk { .. } => None,
        };
        Ok(Box::new(windows::Unbuffered {
            sectors: benchboot_sector::Sectors::new(file, plan.align),
            keep_len,
        }))
    }
}

/// `a` and `b` are the same file (the image given as its own target).
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
            _ => false,
        }
    }
    #[cfg(windows)]
    {
        match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}

#[cfg(windows)]
mod windows {
    use std::fs::File;
    use std::io;

    use benchboot_sector::Sectors;

    use crate::flash::io::{Sink, Source, Target};

    /// A disk or file opened unbuffered: whole sectors only.
    pub struct Unbuffered {
        pub sectors: Sectors<File>,
        /// A file: the length to leave it at (a partial last sector is written whole,
        /// which would lengthen it). `None` for a disk.
        pub keep_len: Option<u64>,
    }

    impl Sink for Unbuffered {
        fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
            self.sectors.write_at(buf, offset)
        }

        fn sync(&mut self) -> io::Result<()> {
            self.sectors.flush()?;
            if let Some(keep) = self.keep_len {
                let f = self.sectors.get_ref();
                if f.metadata()?.len() > keep {
                    f.set_len(keep)?;
                }
            }
            Ok(())
        }
    }

    impl Source for Unbuffered {
        fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
            self.sectors.read_at(buf, offset)
        }

        fn drop_cache(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Target for Unbuffered {
        fn is_direct(&self) -> bool {
            true
        }

        fn finish(&mut self) -> io::Result<()> {
            match self.keep_len {
                Some(_) => Ok(()),
                None => benchboot_windisk::update_properties(self.sectors.get_ref()),
            }
        }
    }
}

/// macOS writes through the raw node (`/dev/rdisk4`), which bypasses the buffer cache.
pub fn raw_node(path: &Path) -> PathBuf {
    if cfg!(target_os = "macos") {
        if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
            if name.starts_with("disk") {
                return path.with_file_name(format!("r{name}"));
            }
        }
    }
    path.to_owned()
}

/// The error of opening the card or file `path` for writing, with what to do.
pub fn open_error(path: &Path, e: std::io::Error) -> anyhow::Error {
    #[cfg(windows)]
    return anyhow::anyhow!(
        "opening {}: {e}: {}",
        path.display(),
        crate::target_disk::windows_open_hint(&e, "flash")
    );
    #[cfg(unix)]
    open_error_unix(path, e)
}

#[cfg(unix)]
fn open_error_unix(path: &Path, e: std::io::Error) -> anyhow::Error {
    let p = path.display();
    let hint = match e.raw_os_error().map(rustix::io::Errno::from_raw_os_error) {
        Some(rustix::io::Errno::BUSY) => format!(
            "something still has it open or mounted (see `lsof {p}`); close it and flash again"
        ),
        Some(rustix::io::Errno::ACCESS | rustix::io::Errno::PERM) => {
            "run benchboot flash as root (sudo), or add yourself to the disk group".into()
        }
        Some(rustix::io::Errno::ROFS) => "the card is read-only: check its lock switch".into(),
        _ => "check the card and the reader".into(),
    };
    anyhow::anyhow!("opening {p}: {e}: {hint}")
}

/// macOS: `diskutil eject` once the card is written and verified, so it can be pulled
/// (Finder would otherwise mount the new image's FAT volume and warn on removal). A
/// failure is a warning: the card is already written.
#[cfg(target_os = "macos")]
pub fn eject(device: &Device) {
    let ok = std::process::Command::new("diskutil")
        .arg("eject")
        .arg(&device.path)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        crate::errln!(
            "warning: diskutil eject {} failed: eject the card in Finder before removing it",
            device.path.display()
        );
    }
}

/// What is held while the card is written: its volumes' locks on Windows; nothing on
/// Linux and macOS, where its filesystems are unmounted.
pub struct Held {
    #[cfg(windows)]
    _locks: Vec<benchboot_windisk::VolumeLock>,
}

/// Takes the card's own filesystems away before it is written: macOS `diskutil
/// unmountDisk` (the whole disk's volumes); Linux umount(2) of each mount point (deepest
/// first), umount(8) as a fallback; Windows locks and dismounts every volume on the disk
/// (`FSCTL_LOCK_VOLUME`, `FSCTL_DISMOUNT_VOLUME`), mounted or not, and holds the locks.
///
/// # Errors
/// What could not be unmounted or locked, with what to close.
#[cfg_attr(windows, allow(unused_variables))]
pub fn unmount_all(device: &Device, mount_points: &[PathBuf]) -> Result<Held> {
    #[cfg(windows)]
    {
        Ok(Held {
            _locks: crate::target_disk::lock_volumes(device)?,
        })
    }
    #[cfg(unix)]
    {
        unmount_unix(device, mount_points)?;
        Ok(Held {})
    }
}

#[cfg(unix)]
fn unmount_unix(device: &Device, mount_points: &[PathBuf]) -> Result<()> {
    if mount_points.is_empty() {
        return Ok(());
    }
    #[cfg(target_os = "macos")]
    {
        let status = std::process::Command::new("diskutil")
            .arg("unmountDisk")
            .arg(&device.path)
            .status()
            .context("running diskutil unmountDisk")?;
        if !status.success() {
            bail!(
                "could not unmount {}: quit the programs using it, eject its volumes in \
                 Finder, and flash again",
                device.describe()
            );
        }
        Ok(())
    }
    #[cfg(target_os = "linux")]
    {
        for mp in mount_points {
            let m = mp.display();
            match rustix::mount::unmount(mp, rustix::mount::UnmountFlags::empty()) {
                // EINVAL: not a mount point (any more).
                Ok(()) | Err(rustix::io::Errno::INVAL) => continue,
                Err(e) => {
                    // umount(8) can also undo mounts a user may undo (fstab `user`).
                    let ok = std::process::Command::new("umount")
                        .arg(mp)
                        .status()
                        .is_ok_and(|s| s.success());
                    if !ok {
                        bail!(
                            "could not unmount {m} on {} ({e}): close what uses it, run \
                             `sudo umount {m}` (or flash with sudo), and flash again",
                            device.path.display()
                        );
                    }
                }
            }
            crate::errln!("unmounted {m}");
        }
        Ok(())
    }
}
