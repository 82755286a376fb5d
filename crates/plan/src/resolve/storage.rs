//! `[storage]` on an image: the plan file's keys over the base plan's storage step, its
//! targets found on the image's card and buses.

use super::disk::disk_target;
use super::{ImageFacts, InFile};
use crate::file::{DeviceReadsSection, PlanFileError, RandomSection, StorageSection};
use crate::{DeviceReadPlan, RandomPlan, StoragePlan, StorageTarget, BUS_PREFIX};

/// `[storage]` (merged `s`, this file's own keys `own`) over the base plan's storage
/// step `st`, on `image`'s card and buses of board `board`.
pub(super) fn storage(
    st: &mut StoragePlan,
    s: &StorageSection,
    own: &StorageSection,
    image: &ImageFacts,
    board: &str,
    at: InFile<'_>,
) -> Result<(), PlanFileError> {
    let enabled = s.enabled.unwrap_or(true);
    st.targets = if enabled {
        targets(s, own.disk.is_some(), image, board, at)?
    } else {
        Vec::new()
    };
    apply_settings(st, s, enabled);
    // A built-in plan's long cell stays only while the file keeps its target, mode and
    // block size (it has no key of its own).
    st.long_cell = st.long_cell.take().filter(|c| st.long_cell_fits(c));
    let reads = s.device_reads.clone().unwrap_or_default();
    st.device_reads = if enabled && reads.enabled.unwrap_or(true) {
        Some(device_reads(
            &reads,
            &st.targets,
            &image.boot_disk,
            st.device_reads.as_ref(),
        ))
    } else {
        None
    };
    let random = s.random.clone().unwrap_or_default();
    st.random = if enabled && random.enabled.unwrap_or(true) {
        random_plan(&random, own.random.as_ref(), &st.targets, at)?
    } else {
        None
    };
    Ok(())
}

/// The storage step's targets: the card's partitions `card` names, then every
/// `[[storage.disk]]` (`own_disks`: this file sets them, so their spans are its lines).
fn targets(
    s: &StorageSection,
    own_disks: bool,
    image: &ImageFacts,
    board: &str,
    at: InFile<'_>,
) -> Result<Vec<StorageTarget>, PlanFileError> {
    let mut targets: Vec<StorageTarget> = Vec::new();
    for fs in s.card.clone().unwrap_or_default() {
        match image.card.iter().find(|t| t.filesystem == fs) {
            Some(t) => targets.push(t.clone()),
            None => {
                return Err(at.err(
                    "storage.card",
                    None,
                    format!("this image's card has no {} partition", fs.name()),
                ))
            }
        }
    }
    for (i, d) in s.disk.clone().unwrap_or_default().iter().enumerate() {
        let key = format!("storage.disk[{i}]");
        let t = disk_target(d, image, board, &targets).map_err(|(k, m)| {
            let sp = match k {
                "whole-disk" => d.whole_disk.as_ref().map(toml::Spanned::span),
                _ => d.device.as_ref().map(toml::Spanned::span),
            };
            at.err(&format!("{key}.{k}"), sp.filter(|_| own_disks), m)
        })?;
        if let Some(why) = label_clash(&targets, &t) {
            return Err(at.err(&format!("{key}.label"), None, why));
        }
        targets.push(t);
    }
    Ok(targets)
}

/// Why disk target `t` cannot join `earlier`: its label is one of theirs, in any case
/// or spelling (`None`: it can).
fn label_clash(earlier: &[StorageTarget], t: &StorageTarget) -> Option<String> {
    let x = earlier.iter().find(|x| {
        crate::spelling::folded_name(&x.label) == crate::spelling::folded_name(&t.label)
    })?;
    Some(if x.label == t.label {
        format!(
            "`{}` is already a target's label; give this disk another",
            t.label
        )
    } else {
        crate::clash_message("label", &x.label, &t.label)
    })
}

/// The sweep's keys the file sets (block sizes, modes, caps, repetitions, device wait,
/// governor) over `st`; verification only when storage is `enabled`.
fn apply_settings(st: &mut StoragePlan, s: &StorageSection, enabled: bool) {
    if let Some(b) = &s.block_sizes {
        st.block_sizes = b.iter().map(|b| b.0).collect();
    }
    if let Some(m) = &s.modes {
        st.modes.clone_from(m);
    }
    if let Some(c) = &s.byte_cap {
        st.byte_cap = c.get_ref().0;
    }
    if let Some(c) = s.time_cap {
        st.time_cap_ms = c.0;
    }
    if let Some(r) = s.repetitions {
        st.repetitions = r.0;
    }
    if let Some(w) = s.device_wait {
        st.device_wait_ms = w.0;
    }
    if let Some(g) = &s.governor {
        st.governor = (!g.is_empty()).then(|| g.clone());
    }
    st.verify = enabled && s.verify.unwrap_or(st.verify);
}

/// The device reads of the boot disk `/dev/<boot_disk>` and every whole-disk target:
/// the file's chunk (bytes) and durations (ms) over the base plan's `old`, else
/// hdparm's (2 MiB, 2 s cached, 3 s buffered).
fn device_reads(
    reads: &DeviceReadsSection,
    targets: &[StorageTarget],
    boot_disk: &str,
    old: Option<&DeviceReadPlan>,
) -> DeviceReadPlan {
    let mut disks = vec![format!("/dev/{boot_disk}")];
    disks.extend(
        targets
            .iter()
            .filter(|t| t.device.starts_with(BUS_PREFIX))
            .map(|t| t.device.clone()),
    );
    DeviceReadPlan {
        disks,
        chunk_bytes: reads
            .chunk
            .as_ref()
            .map(|c| c.get_ref().0)
            .or(old.map(|o| o.chunk_bytes))
            .unwrap_or(2 << 20),
        cached_ms: reads
            .cached
            .map(|c| c.0)
            .or(old.map(|o| o.cached_ms))
            .unwrap_or(2_000),
        buffered_ms: reads
            .buffered
            .map(|c| c.0)
            .or(old.map(|o| o.buffered_ms))
            .unwrap_or(3_000),
    }
}

/// `[storage.random]` on the plan's `targets`: `None` when none of its labels is one.
/// A label this file names (`own`) must be a target; a preset's that this file dropped
/// goes. The region (default 64 MiB) must hold a block (default 4096 B).
fn random_plan(
    random: &RandomSection,
    own: Option<&RandomSection>,
    targets: &[StorageTarget],
    at: InFile<'_>,
) -> Result<Option<RandomPlan>, PlanFileError> {
    let named = own.and_then(|r| r.targets.as_ref());
    let wanted: Vec<String> = random
        .targets
        .as_ref()
        .map(|t| t.get_ref().iter().map(|l| l.0.clone()).collect())
        .unwrap_or_default();
    let present: Vec<String> = wanted
        .iter()
        .filter(|l| targets.iter().any(|t| &&t.label == l))
        .cloned()
        .collect();
    // Targets this file named must exist; a preset's that this file dropped go.
    if let (Some(n), Some(missing)) = (named, wanted.iter().find(|l| !present.contains(l))) {
        return Err(at.err(
            "storage.random.targets",
            Some(n.span()),
            format!("`{missing}` is not the label of a storage target of this plan"),
        ));
    }
    let region = random.region.as_ref().map(|r| r.get_ref().0);
    let block = random.block_size.map(|b| b.0).unwrap_or(4096);
    if let Some(r) = region.filter(|&r| r < block) {
        let sp = own.and_then(|r| r.region.as_ref()).map(toml::Spanned::span);
        return Err(at.err(
            "storage.random.region",
            sp,
            format!("{r} B holds no {block} B block; make it at least the block size"),
        ));
    }
    Ok((!present.is_empty()).then(|| RandomPlan {
        targets: present,
        block_size: block,
        region_bytes: region.unwrap_or(64 << 20),
        duration_ms: random.duration.map(|d| d.0).unwrap_or(10_000),
        queue_depths: random
            .queue_depths
            .as_ref()
            .map(|q| q.iter().map(|d| d.0).collect())
            .unwrap_or_else(|| vec![1]),
    }))
}
