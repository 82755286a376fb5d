//! One `[[storage.disk]]` of a plan file as a [`StorageTarget`], refused when it names
//! the card the board boots from (by any spelling of its path), the card's boot or
//! results partition, or the place of a target before it ([`crate::guard`]).

use super::ImageFacts;
use crate::file::DiskSection;
use crate::guard::{host_problem, normalise_path, same_place};
use crate::{Filesystem, StorageTarget, BUS_PREFIX};

/// One `[[storage.disk]]` as a target, its `/dev/` path normalised lexically
/// ([`normalise_path`]), or `(key, why)`. `earlier`: the plan's targets before it (the
/// card's and the disks above it).
pub(super) fn disk_target(
    d: &DiskSection,
    image: &ImageFacts,
    board: &str,
    earlier: &[StorageTarget],
) -> Result<StorageTarget, (&'static str, String)> {
    let (device, filesystem) = match (&d.device, &d.whole_disk) {
        (Some(_), Some(_)) | (None, None) => {
            return Err((
                "device",
                "give either `device` (LABEL=, PARTLABEL= or a /dev/ path) or `whole-disk` \
                 (a bus), not both or neither"
                    .into(),
            ))
        }
        (None, Some(bus)) => {
            let bus = *bus.get_ref();
            if !image.buses.contains(&bus) {
                let has: Vec<&str> = image.buses.iter().map(|b| b.name()).collect();
                return Err((
                    "whole-disk",
                    format!(
                        "board {board} has no {} bus (its disk buses: {}); pick one it has \
                         or leave the disk out",
                        bus.name(),
                        if has.is_empty() {
                            "none besides the card".into()
                        } else {
                            has.join(", ")
                        }
                    ),
                ));
            }
            if d.filesystem.is_some_and(|f| f != Filesystem::Raw) {
                return Err((
                    "whole-disk",
                    "a whole disk is swept raw; leave `filesystem` out or set it to \"raw\"".into(),
                ));
            }
            (format!("{BUS_PREFIX}{}", bus.name()), Filesystem::Raw)
        }
        (Some(dev), None) => {
            let Some(fs) = d.filesystem else {
                return Err((
                    "filesystem",
                    "say what the device holds: ext2, ext3, ext4, vfat or raw".into(),
                ));
            };
            if fs == Filesystem::Dir {
                return Err((
                    "filesystem",
                    "`dir` is for host runs; use ext2, ext3, ext4, vfat or raw".into(),
                ));
            }
            (dev.get_ref().clone(), fs)
        }
    };
    let key = if d.whole_disk.is_some() {
        "whole-disk"
    } else {
        "device"
    };
    if filesystem == Filesystem::Raw && !d.destroy {
        return Err((
            key,
            format!(
                "a raw target is overwritten, whatever it holds: add `destroy = true` to \
                 `{}` if that is what you want",
                d.label.0
            ),
        ));
    }
    if let Some(why) = host_problem(&device, filesystem, &image.boot_disk) {
        return Err((key, why));
    }
    let t = StorageTarget {
        label: d.label.0.clone(),
        device: if device.starts_with('/') {
            normalise_path(&device)
        } else {
            device
        },
        filesystem,
        optional: d.optional,
    };
    if let Some(p) = t.device_problem() {
        return Err((key, p));
    }
    if let Some(x) = earlier.iter().find(|x| same_place(x, &t)) {
        return Err((
            key,
            format!(
                "`{}` is the place of target `{}` ({}) already: two targets there would \
                 overwrite each other's files; keep one, or name another partition or disk",
                t.device.escape_debug(),
                x.label,
                x.device.escape_debug()
            ),
        ));
    }
    Ok(t)
}
