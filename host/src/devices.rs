//! `benchboot devices`: the disks a card could be on, and whether `benchboot flash` may
//! write each one, with every reason when it may not.
//!
//! Linux reads a root tree (`/` on a real machine, a fake tree in tests):
//! `sys/block/<dev>` (`size` in 512-byte sectors, `removable`, `ro`, `device/model`,
//! `device/vendor`, partitions, `holders/`, a loop device's `loop/backing_file`), the
//! transport from the resolved sysfs path, mounts from `proc/self/mountinfo` (matched by
//! major:minor, also through device-mapper/RAID holders and loop devices, which stack on
//! the disk their backing file or device is on) and swap from `proc/swaps` (`linux.rs`). macOS parses
//! `diskutil list -plist` and `diskutil info -plist <disk>` ([`macos`]). Windows decodes
//! the IOCTL answers `benchboot_windisk::snapshot` gathers ([`windows`]: bus type,
//! removable flag, size, vendor/product, the volumes on each disk, the Windows
//! directory's and the page files' disks). All give [`Device`]s (`disk.rs`); the rules
//! (`rules.rs`) judge them; `output.rs` prints them.
//!
//! The rules ([`Device::verdict`]): a device is refused when it is not removable (an
//! mmc card counts as removable), holds the running system (`/`, `/boot`, `/usr`, `/var`
//! or swap), has a filesystem mounted through a holder benchboot cannot unmount (only
//! the card's own partitions are unmounted), a holder with nothing mounted (a loop
//! device over a file on it, an open LUKS or LVM mapping) or a volume spanning disks
//! (Windows), is
//! read-only, or is larger than a sane card ([`DEFAULT_SIZE_LIMIT`], lifted by
//! `--allow-large`). On Windows the system's disk is the one holding the Windows
//! directory, and the page files count as swap.

mod disk;
mod linux;
pub mod macos;
mod output;
mod rules;
pub mod windows;

use std::path::{Path, PathBuf};

use anyhow::Result;

pub use disk::{human_bytes, Device, Holder, Mount, Partition, Transport};
#[cfg(unix)]
pub use linux::dev_key;
pub use linux::{
    parse_mountinfo, parse_swaps, scan_linux, stat_key, unescape, MountEntry, StatKey, SwapArea,
};
pub use output::{to_json, to_table};
pub use rules::{Limits, Refusal, Use, Verdict, DEFAULT_SIZE_LIMIT, SYSTEM_MOUNTS};

/// The devices of this machine: sysfs on Linux, `diskutil` on macOS, the disk and
/// volume IOCTLs on Windows (with a note on stderr for each query that failed).
///
/// # Errors
/// When the system's tables cannot be read, or on another OS (the message names the
/// tools to use there).
pub fn scan_system() -> Result<Vec<Device>> {
    #[cfg(target_os = "linux")]
    {
        scan_linux(Path::new("/"))
    }
    #[cfg(target_os = "macos")]
    {
        macos::scan(&|args| {
            let out = std::process::Command::new("diskutil").args(args).output()?;
            if !out.status.success() {
                return Err(std::io::Error::other(format!(
                    "diskutil {}: {}",
                    args.join(" "),
                    String::from_utf8_lossy(&out.stderr).trim()
                )));
            }
            Ok(out.stdout)
        })
    }
    #[cfg(windows)]
    {
        let (devices, notes) = windows::scan(&benchboot_windisk::snapshot());
        for n in notes {
            crate::errln!("note: {}", benchboot_results::text::escape(&n));
        }
        Ok(devices)
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
    {
        anyhow::bail!("listing disks is implemented for Linux, macOS and Windows only")
    }
}

/// The command line of `benchboot devices`.
#[derive(Debug, Clone, clap::Args)]
pub struct DevicesArgs {
    /// Print a JSON array (every field, `writable`, `refusals` with reason codes).
    #[arg(long)]
    pub json: bool,
    /// Do not refuse disks larger than a sane card (256 GiB).
    #[arg(long)]
    pub allow_large: bool,
    /// Read sysfs and proc under this folder instead of `/` (Linux; for fake trees).
    #[arg(long, hide = true, default_value = "/")]
    pub root: PathBuf,
}

/// `benchboot devices`: the candidate disks of this machine and their verdicts.
///
/// # Errors
/// When the system's disk tables cannot be read.
pub fn run(args: &DevicesArgs) -> Result<()> {
    let limits = Limits::new(args.allow_large);
    let all = if args.root == Path::new("/") {
        scan_system()?
    } else {
        scan_linux(&args.root)?
    };
    let devices: Vec<Device> = all.into_iter().filter(Device::is_candidate).collect();
    if args.json {
        crate::out::json(&to_json(&devices, &limits));
    } else {
        crate::out!("{}", to_table(&devices, &limits));
    }
    Ok(())
}
