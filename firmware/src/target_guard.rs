//! PID 1's check of every storage target by device identity, before anything is
//! written: the edge of [`benchboot_plan::guard::board_refusal`].
//!
//! A target's path is stat(2)ed, following symlinks, to its device number (`st_rdev`);
//! its whole disk is the parent of `/sys/dev/block/MAJ:MIN` when that entry has a
//! `partition` file (Documentation/ABI/stable/sysfs-block), else itself. The boot
//! card is the disk [`crate::boot_card`] found by its MBR disk signature (or, without
//! one, the disk holding the results partition); its p1 and p2 and the image's own raw
//! test partitions come from sysfs by name. Mounts are `/proc/self/mountinfo`'s
//! `major:minor` (proc(5)). A refusal is the target's error event; the run goes on.

use std::path::{Path, PathBuf};

use benchboot_plan::boot_disk::{partition_path, remap_device};
use benchboot_plan::guard::{
    board_refusal, parse_mountinfo, Card, DevNum, Mount, Seen, BOOT_PARTITION, JOURNAL_PARTITION,
    RESULTS_PARTITION,
};
use benchboot_plan::{Filesystem, ImageFacts, StorageTarget, IMAGE_FACTS_PATH};

/// Where the kernel lists block devices by number, and by name.
pub struct Sysfs<'a> {
    /// `/sys/dev/block`.
    pub dev_block: &'a Path,
    /// `/sys/class/block`.
    pub class_block: &'a Path,
}

/// The board's sysfs.
pub fn board_sysfs() -> Sysfs<'static> {
    Sysfs {
        dev_block: Path::new("/sys/dev/block"),
        class_block: Path::new("/sys/class/block"),
    }
}

impl Sysfs<'_> {
    /// The device number of kernel name `name` (`/sys/class/block/<name>/dev`).
    fn number_of(&self, name: &str) -> Option<DevNum> {
        DevNum::parse(&std::fs::read_to_string(self.class_block.join(name).join("dev")).ok()?)
    }

    /// The whole disk holding device `dev`: the parent directory's `dev` when
    /// `/sys/dev/block/<dev>` is a partition, else `dev` itself.
    pub fn whole_of(&self, dev: DevNum) -> DevNum {
        let entry = self.dev_block.join(dev.to_string());
        if !entry.join("partition").exists() {
            return dev;
        }
        std::fs::canonicalize(&entry)
            .ok()
            .and_then(|p| p.parent().map(|d| d.join("dev")))
            .and_then(|f| std::fs::read_to_string(f).ok())
            .and_then(|t| DevNum::parse(&t))
            .unwrap_or(dev)
    }
}

/// What device `path` is (stat(2), following symlinks) and its whole disk.
///
/// # Errors
/// The stat's error, or `path` is no block device.
pub fn seen(path: &Path, sys: &Sysfs<'_>) -> Result<Seen, String> {
    let st = rustix::fs::stat(path).map_err(|e| format!("stat {}: {e}", path.display()))?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::BlockDevice {
        return Err(format!(
            "{} is no block device; a target is a disk or a partition",
            path.display()
        ));
    }
    let dev = DevNum {
        major: rustix::fs::major(st.st_rdev),
        minor: rustix::fs::minor(st.st_rdev),
    };
    Ok(Seen {
        dev,
        whole: sys.whole_of(dev),
    })
}

/// The boot card's devices: disk `name`, its p1, p2 and the image's raw test
/// partitions (`image_card`: the image's card targets on disk `nominal`). `None` when
/// sysfs has no number for `name`.
pub fn card(
    sys: &Sysfs<'_>,
    name: &str,
    nominal: &str,
    image_card: &[StorageTarget],
) -> Option<Card> {
    let part = |n| {
        let p = partition_path(name, n);
        sys.number_of(p.trim_start_matches("/dev/"))
    };
    let own_raw = image_card
        .iter()
        .filter(|t| t.filesystem == Filesystem::Raw)
        .filter_map(|t| remap_device(&t.device, nominal, name))
        .filter_map(|p| sys.number_of(p.trim_start_matches("/dev/")))
        .collect();
    Some(Card {
        name: name.to_owned(),
        whole: sys.number_of(name)?,
        boot: part(BOOT_PARTITION),
        results: part(RESULTS_PARTITION),
        journal: part(JOURNAL_PARTITION),
        own_raw,
    })
}

/// The mounts of `mountinfo` (a `/proc/self/mountinfo` text), each with its whole disk.
pub fn mounts(mountinfo: &str, sys: &Sysfs<'_>) -> Vec<Mount> {
    parse_mountinfo(mountinfo)
        .into_iter()
        .map(|(dev, at)| Mount {
            seen: Seen {
                dev,
                whole: if dev.major == 0 {
                    dev
                } else {
                    sys.whole_of(dev)
                },
            },
            at,
        })
        .collect()
}

/// The check of one run: the card and the mounts as they were before the first target,
/// and the targets accepted so far.
pub struct Guard<'a> {
    sys: Sysfs<'a>,
    /// The boot card, or why it is unknown (then nothing is written).
    card: Result<Card, String>,
    mounts: Vec<Mount>,
    accepted: Vec<(StorageTarget, Seen)>,
}

impl<'a> Guard<'a> {
    /// The guard over `sys` for the boot card `boot_disk` (kernel name, where it was
    /// found), `facts` the image's (`None`: unreadable, the card's raw partition is then
    /// refused too) and the `mountinfo` text.
    pub fn new(
        sys: Sysfs<'a>,
        boot_disk: &str,
        facts: Option<&ImageFacts>,
        mountinfo: &str,
    ) -> Guard<'a> {
        let (nominal, image_card) = match facts {
            Some(f) => (f.boot_disk.as_str(), f.card.as_slice()),
            None => (boot_disk, &[][..]),
        };
        let card = card(&sys, boot_disk, nominal, image_card).ok_or_else(|| {
            format!(
                "the boot card {boot_disk} has no device number in {}: nothing is written \
                 while the card cannot be told from a target",
                sys.class_block.display()
            )
        });
        let mounts = mounts(mountinfo, &sys);
        Guard {
            sys,
            card,
            mounts,
            accepted: Vec::new(),
        }
    }

    /// The board's guard: [`board_sysfs`], the image's facts from [`IMAGE_FACTS_PATH`] and
    /// `/proc/self/mountinfo`, for the boot card `boot_disk` (kernel name).
    pub fn on_board(boot_disk: &str) -> Guard<'static> {
        let facts: Option<ImageFacts> = std::fs::read_to_string(IMAGE_FACTS_PATH)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        Guard::new(board_sysfs(), boot_disk, facts.as_ref(), &mountinfo)
    }

    /// Whether target `t` (its device a path now) may be written: `Err(why)` names the
    /// device and what it is (the boot card, mounted, another target's).
    ///
    /// # Errors
    /// The refusal, or the device unreadable / no block device.
    pub fn check(&mut self, t: &StorageTarget) -> Result<(), String> {
        let card = self.card.as_ref().map_err(Clone::clone)?;
        let s = seen(&PathBuf::from(&t.device), &self.sys)?;
        if let Some(why) = board_refusal(t, s, &self.accepted, card, &self.mounts) {
            return Err(format!("not written: {}: {why}", t.device.escape_debug()));
        }
        self.accepted.push((t.clone(), s));
        Ok(())
    }
}

#[cfg(test)]
#[path = "target_guard/tests.rs"]
mod tests;
