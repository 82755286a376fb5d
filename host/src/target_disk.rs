//! The disk a command is about to erase, shared by `flash`, `probe` and `prepare-disk`:
//! the whole disk a device path names ([`lookup_disk`]), the refusal with every reason
//! ([`Refused`]) and the one confirmation on the terminal ([`confirm_erase`]).

use std::path::Path;

use anyhow::{bail, Result};

use crate::devices::{self, Device, Refusal};

/// A device the rules refuse: every reason, each with its fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refusing to write {device}:{}", list(.refusals))]
pub struct Refused {
    /// [`Device::describe`] of the device.
    pub device: String,
    pub refusals: Vec<Refusal>,
}

fn list(refusals: &[Refusal]) -> String {
    refusals.iter().map(|r| format!("\n  - {r}")).collect()
}

/// The whole disk `path` (a block device node) is, found in the system's tables
/// (`root`: `/`, or a fake sysfs tree). Also used by `benchboot prepare-disk`. Errors
/// name the path after `arg` (`"--device "`, or `""` for a positional argument).
///
/// # Errors
/// Not a block device, a partition (the message names its whole disk), or a device
/// this machine does not list.
pub fn lookup_disk(
    arg: &str,
    path: &Path,
    meta: &std::fs::Metadata,
    root: &Path,
) -> Result<Device> {
    let all = if root == Path::new("/") {
        devices::scan_system()?
    } else {
        devices::scan_linux(root)?
    };
    #[cfg(target_os = "linux")]
    let key = {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        if !meta.file_type().is_block_device() {
            bail!(
                "{arg}{}: not a block device or regular file; name the whole card \
                 (`benchboot devices`) or an image file",
                path.display()
            );
        }
        let rdev = meta.rdev();
        let key = format!("{}:{}", rustix::fs::major(rdev), rustix::fs::minor(rdev));
        move |d: &Device, part: Option<&devices::Partition>| match part {
            Some(p) => p.dev.as_deref() == Some(key.as_str()),
            None => d.dev.as_deref() == Some(key.as_str()),
        }
    };
    #[cfg(not(target_os = "linux"))]
    let key = {
        let _ = meta;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = name.strip_prefix('r').map(str::to_owned).unwrap_or(name);
        move |d: &Device, part: Option<&devices::Partition>| match part {
            Some(p) => p.name == name,
            None => d.name == name,
        }
    };
    if let Some(d) = all.iter().find(|d| key(d, None)) {
        return Ok(d.clone());
    }
    for d in &all {
        if let Some(p) = d.partitions.iter().find(|p| key(d, Some(p))) {
            bail!(
                "{arg}{} is partition {} of {}: name the whole disk, {arg}{}",
                path.display(),
                p.name,
                d.describe(),
                d.path.display()
            );
        }
    }
    bail!(
        "{arg}{}: not a disk this machine lists; `benchboot devices` shows the candidates",
        path.display()
    )
}

/// Asks `erase WHAT and DOING? type yes:` on the terminal, unless `yes`: the one
/// confirmation of `flash`, `field-test` and `prepare-disk`.
///
/// # Errors
/// Not confirmed, or no terminal on stdin to ask on (then `--yes` is required); in
/// both cases nothing has been written.
pub fn confirm_erase(what: &str, doing: &str, yes: bool) -> Result<()> {
    use std::io::{BufRead, IsTerminal, Write};
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        bail!("no terminal to confirm on: pass --yes to erase {what} without asking");
    }
    eprint!("erase {what} and {doing}? type yes: ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if answer.trim() != "yes" {
        bail!("not confirmed: nothing written");
    }
    Ok(())
}
