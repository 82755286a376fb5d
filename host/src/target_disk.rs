//! The disk a command is about to erase, shared by `flash`, `probe` and `prepare-disk`:
//! the whole disk a device path names ([`lookup_disk`] on Linux and macOS,
//! [`find_windows_disk`] on Windows), the refusal with every reason ([`Refused`]) and
//! the one confirmation on the terminal ([`confirm_erase`]); on Windows also the locks of
//! its volumes ([`lock_volumes`]) and what a failed open means
//! ([`windows_open_hint`]).

#[cfg(unix)]
use std::path::Path;

use anyhow::{bail, Result};

use crate::devices::{Device, Refusal, Use};

/// A device the rules refuse: every reason, each with its fix in the words of
/// `command`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refusing to write {device}:{}", list(.refusals, *.command))]
pub struct Refused {
    /// [`Device::describe`] of the device.
    pub device: String,
    pub refusals: Vec<Refusal>,
    /// The command refusing it (`flash`, `probe`): the fix of a virtual disk differs.
    pub command: Use,
}

fn list(refusals: &[Refusal], command: Use) -> String {
    refusals
        .iter()
        .map(|r| format!("\n  - {}", r.in_words(command)))
        .collect()
}

/// The whole disk `path` names, looked up by identity ([`crate::identity::lookup`]:
/// its device number, whatever the spelling) in the system's tables (`root`: `/`, or
/// a fake sysfs tree). Errors name the path after `arg` (`"--device "`, or `""` for a
/// positional argument).
///
/// # Errors
/// Not a block device, a partition (the message names its whole disk and where it is
/// mounted), or a device this machine does not list.
#[cfg(unix)]
pub fn lookup_disk(arg: &str, path: &Path, root: &Path) -> Result<Device> {
    disk_of(arg, &crate::identity::lookup(path, root)?)
}

/// The whole disk of a path looked up ([`crate::identity::Found`]), or why it is none.
///
/// # Errors
/// As [`lookup_disk`].
#[cfg(unix)]
pub fn disk_of(arg: &str, found: &crate::identity::Found) -> Result<Device> {
    use crate::identity::What;
    let given = found.given.display();
    match &found.what {
        What::Disk(d) => Ok((**d).clone()),
        What::Partition { disk, .. } => bail!(
            "{}: name the whole disk, {arg}{}",
            found.words(arg),
            disk.path.display()
        ),
        What::Unlisted { .. } => bail!(
            "{arg}{given}: not a disk this machine lists; `benchboot devices` shows the candidates"
        ),
        _ => bail!(
            "{arg}{given}: not a block device or regular file; name the whole card \
             (`benchboot devices`) or an image file"
        ),
    }
}

/// Asks `erase WHAT and DOING? type yes:` on the terminal, unless `yes`: the one
/// confirmation of `flash`, `field-test` and `prepare-disk`.
///
/// # Errors
/// Not confirmed, or no terminal on stdin to ask on (then `--yes` is required); in
/// both cases nothing has been written.
pub fn confirm_erase(what: &str, doing: &str, yes: bool) -> Result<()> {
    use std::io::{BufRead, IsTerminal};
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        bail!("no terminal to confirm on: pass --yes to erase {what} without asking");
    }
    crate::err!("erase {what} and {doing}? type yes: ");
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if answer.trim() != "yes" {
        bail!("not confirmed: nothing written");
    }
    Ok(())
}

/// The disk a Windows `--device` names, among `all` (the scan of this machine), or
/// `None` when `given` is no disk or volume name (a file, then):
/// - `\\.\PhysicalDriveN` (also `\\?\` or `//./` before it, any case): that disk;
/// - `E:`, `E:\`, `\\.\E:`: the disk holding the volume mounted there;
/// - `\\?\Volume{GUID}\`, the whole name: the disk holding that volume.
///
/// `arg` names the option in messages (`"--device "`, or `""`).
///
/// # Errors
/// A disk or volume this machine does not list, or a volume that spans disks (naming
/// them: give one disk).
pub fn find_windows_disk(arg: &str, given: &str, all: &[Device]) -> Result<Option<Device>> {
    let unified = given.replace('/', "\\").to_ascii_uppercase();
    let device_path = unified
        .strip_prefix(r"\\.\")
        .or_else(|| unified.strip_prefix(r"\\?\"));
    let bare = device_path.unwrap_or(&unified);
    if let Some(n) = device_path.and_then(|p| p.strip_prefix("PHYSICALDRIVE")) {
        let found = n
            .parse::<u32>()
            .ok()
            .and_then(|n| all.iter().find(|d| d.name == format!("PhysicalDrive{n}")));
        return match found {
            Some(d) => Ok(Some(d.clone())),
            None => bail!(
                "{arg}{given}: not a disk this machine lists; `benchboot devices` shows the \
                 candidates"
            ),
        };
    }
    let drive = bare.trim_end_matches('\\');
    let is_drive =
        drive.len() == 2 && drive.ends_with(':') && drive.as_bytes()[0].is_ascii_alphabetic();
    let is_volume = device_path.is_some_and(|p| p.starts_with("VOLUME{"));
    if !is_drive && !is_volume {
        return Ok(None);
    }
    // Names compared whole, in any case, without the trailing backslash.
    let same = |a: &str, b: &str| {
        a.trim_end_matches('\\')
            .eq_ignore_ascii_case(b.trim_end_matches('\\'))
    };
    let holds = |d: &&Device| {
        if is_drive {
            d.mounts
                .iter()
                .any(|m| same(&m.mount_point.to_string_lossy(), drive))
        } else {
            d.partitions.iter().any(|p| {
                let name = p.name.strip_prefix(r"\\?\").unwrap_or(&p.name);
                same(name, bare)
            })
        }
    };
    let on: Vec<&Device> = all.iter().filter(holds).collect();
    match on[..] {
        [d] => Ok(Some(d.clone())),
        [] => bail!(
            "{arg}{given}: no disk this machine lists holds that volume (a network drive, a \
             DVD?); `benchboot devices` shows the disks and their volumes"
        ),
        _ => bail!(
            "{arg}{given}: that volume spans {}: name one disk (\\\\.\\PhysicalDriveN)",
            on.iter()
                .map(|d| d.path.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// What to do about a failed open of a Windows disk or file, by its error code
/// (winerror.h): 5 access denied, 32 sharing violation, 19 write protected, 2/3 not
/// found, 21 not ready (no card). `command` is the benchboot command to run again.
pub fn windows_open_hint(e: &std::io::Error, command: &str) -> String {
    match e.raw_os_error() {
        Some(5) => format!(
            "access is denied; a disk is opened only from an elevated prompt: open \
             Terminal or PowerShell with \"Run as administrator\" and run benchboot \
             {command} there"
        ),
        Some(32) => "another program has it open (File Explorer, an antivirus scan, a disk \
             tool): close it and try again"
            .into(),
        Some(19) => "the card is write-protected: check its lock switch".into(),
        Some(2 | 3) => "no such disk or file: `benchboot devices` lists the disks".into(),
        Some(21) => "the reader has no card in it".into(),
        _ => "check the card and the reader".into(),
    }
}

/// `now` (the same disk number scanned again after the question) is still `before`:
/// the same size, bus, removable flag, vendor and model, and no part of the running
/// system on it. A card pulled while the question waited, and another disk that took
/// its number, fail here.
///
/// # Errors
/// What differs, and to run the command again.
pub fn still_the_same(before: &Device, now: Option<&Device>) -> Result<()> {
    let id = |d: &Device| {
        (
            d.size_bytes,
            d.transport,
            d.removable,
            d.vendor.clone(),
            d.model.clone(),
        )
    };
    match now {
        Some(now) if id(now) == id(before) && now.system_uses().is_empty() => Ok(()),
        Some(now) => bail!(
            "{} changed since it was checked: it was {}, it is now {}; nothing was written: \
             check `benchboot devices` and run the command again",
            before.path.display(),
            before.describe(),
            now.describe()
        ),
        None => bail!(
            "{} is gone since it was checked (unplugged?); nothing was written",
            before.path.display()
        ),
    }
}

/// Scans again, checks the disk is still the one judged ([`still_the_same`]), then
/// locks and dismounts every volume on it as it is now (mounted or not, its
/// `partitions`) and holds the locks; says each on stderr.
///
/// # Errors
/// The disk changed, or a volume that could not be locked (open files on it, or no
/// elevated prompt).
#[cfg(windows)]
pub fn lock_volumes(judged: &Device) -> Result<Vec<benchboot_windisk::VolumeLock>> {
    let all = crate::devices::scan_system()?;
    let now = all.iter().find(|d| d.path == judged.path);
    still_the_same(judged, now)?;
    let device = now.unwrap_or(judged);
    let mut locks = Vec::new();
    for p in &device.partitions {
        let shown: Vec<String> = device
            .mounts
            .iter()
            .filter(|m| m.device == p.name)
            .map(|m| m.mount_point.display().to_string())
            .collect();
        let shown = if shown.is_empty() {
            p.name.clone()
        } else {
            shown.join(", ")
        };
        match benchboot_windisk::lock_volume(&p.name) {
            Ok(l) => {
                crate::errln!("locked and dismounted {shown}");
                locks.push(l);
            }
            Err(e) => bail!(
                "could not lock {shown} on {} for writing ({e}); {}",
                device.path.display(),
                match e.raw_os_error() {
                    Some(5) => "close every program and File Explorer window using it, and run \
                                benchboot from an elevated prompt (Run as administrator)"
                        .to_string(),
                    _ => windows_open_hint(&e, "again"),
                }
            ),
        }
    }
    Ok(locks)
}
