//! [`Plan::validate`]: whether a plan can run, one check per part of the plan, each
//! naming the field to change.

use crate::{
    clash_message, file, network, sanity, Bus, CommandStep, DeviceReadPlan, Plan, PlanError,
    RandomPlan, StoragePlan, BUS_PREFIX, MAX_BLOCK_BYTES, MIB,
};

impl Plan {
    /// Checks the plan can run: non-empty lists, caps above zero, sane sizes.
    ///
    /// # Errors
    /// [`PlanError::Invalid`] naming the field and what to change.
    pub fn validate(&self) -> Result<(), PlanError> {
        if self.supervision.worker_limit_ms == 0 {
            return Err(invalid("supervision.worker_limit_ms", "must be above 0 ms"));
        }
        if !self.faults.is_empty() && !self.emulated {
            return Err(invalid(
                "faults",
                "fault injection is for QEMU plans (emulated: true) only; remove it",
            ));
        }
        let s = &self.storage;
        check_sweep(s)?;
        check_targets(s)?;
        if let Some(d) = &s.device_reads {
            check_device_reads(d)?;
        }
        if let Some(r) = &s.random {
            check_random(r, s)?;
        }
        check_commands(&self.commands)?;
        self.check_links()?;
        sanity::check(self).map_err(|(field, message)| PlanError::Invalid { field, message })
    }

    /// The results target, the network plan, the card check, and that a board on
    /// hardware has a link to serve its results on.
    fn check_links(&self) -> Result<(), PlanError> {
        if !self.results.device.starts_with("/dev/") {
            return Err(invalid("results.device", "must be a /dev/ path"));
        }
        if self.results.file.is_empty() || self.results.file.contains('/') {
            return Err(invalid("results.file", "must be a bare file name"));
        }
        network::check(&self.network).map_err(|(field, message)| PlanError::Invalid {
            field: field.to_string(),
            message,
        })?;
        if let Some(c) = &self.card_check {
            c.check().map_err(|(field, message)| PlanError::Invalid {
                field: field.into(),
                message,
            })?;
        }
        // Only an emulated board may go without a link: the harness reads its card.
        if !self.emulated && !self.network.has_link() {
            return Err(invalid(
                "network.interface",
                "name an interface or add a gadget (only an emulated plan may serve its \
                 results from the card alone)",
            ));
        }
        Ok(())
    }
}

/// [`PlanError::Invalid`] of `field`, saying `message`.
fn invalid(field: &str, message: &str) -> PlanError {
    PlanError::Invalid {
        field: field.to_owned(),
        message: message.to_owned(),
    }
}

/// The sweep's lists and caps: block sizes in 1 B ..= 64 MiB, caps and repetitions
/// above zero, at least one mode.
fn check_sweep(s: &StoragePlan) -> Result<(), PlanError> {
    if s.block_sizes.is_empty() {
        return Err(invalid(
            "storage.block_sizes",
            "list at least one block size",
        ));
    }
    if let Some(bs) = s
        .block_sizes
        .iter()
        .find(|&&b| b == 0 || b > MAX_BLOCK_BYTES)
    {
        return Err(PlanError::Invalid {
            field: "storage.block_sizes".into(),
            message: format!("{bs} is outside 1 B ..= 64 MiB"),
        });
    }
    if s.byte_cap == 0 {
        return Err(invalid("storage.byte_cap", "must be above 0 bytes"));
    }
    if s.time_cap_ms == 0 {
        return Err(invalid("storage.time_cap_ms", "must be above 0 ms"));
    }
    if s.repetitions == 0 {
        return Err(invalid("storage.repetitions", "must be at least 1"));
    }
    if let Some(c) = &s.long_cell {
        if !s.long_cell_fits(c) {
            return Err(PlanError::Invalid {
                field: "storage.long_cell".into(),
                message: format!(
                    "{} {} {} B is no cell of the sweep: name one of its targets, modes and block sizes",
                    c.target,
                    c.mode.name(),
                    c.block_size
                ),
            });
        }
        if c.byte_cap == 0 || c.time_cap_ms == 0 {
            return Err(invalid(
                "storage.long_cell",
                "its byte_cap and time_cap_ms must be above 0",
            ));
        }
    }
    check_target_labels_differ(s)?;
    if s.modes.is_empty() {
        return Err(invalid(
            "storage.modes",
            "list at least one of sync, direct",
        ));
    }
    Ok(())
}

/// No two targets' labels clash ([`file::name_clash`]).
fn check_target_labels_differ(s: &StoragePlan) -> Result<(), PlanError> {
    if let Some((a, b)) = file::name_clash(s.targets.iter().map(|t| t.label.as_str())) {
        return Err(PlanError::Invalid {
            field: format!(
                "storage.targets[{}].label",
                second_of(&s.targets, |t| &t.label, b)
            ),
            message: clash_message("label", a, b),
        });
    }
    Ok(())
}

/// Every target's device and label.
fn check_targets(s: &StoragePlan) -> Result<(), PlanError> {
    for (i, t) in s.targets.iter().enumerate() {
        if let Some(message) = t.device_problem() {
            return Err(PlanError::Invalid {
                field: format!("storage.targets[{i}].device"),
                message,
            });
        }
        if let Some(message) = file::name_problem(&t.label) {
            return Err(PlanError::Invalid {
                field: format!("storage.targets[{i}].label"),
                message,
            });
        }
    }
    Ok(())
}

/// The device reads: a chunk of 1 B ..= 64 MiB, disks as `/dev/` paths or whole disks
/// on a bus.
fn check_device_reads(d: &DeviceReadPlan) -> Result<(), PlanError> {
    if d.chunk_bytes == 0 || d.chunk_bytes > 64 * MIB {
        return Err(invalid(
            "storage.device_reads.chunk_bytes",
            "must be 1 B ..= 64 MiB",
        ));
    }
    let whole_disk = |x: &str| {
        x.strip_prefix(BUS_PREFIX)
            .is_some_and(|b| Bus::from_name(b).is_some())
    };
    if d.disks
        .iter()
        .any(|x| !x.starts_with("/dev/") && !whole_disk(x))
    {
        return Err(invalid(
            "storage.device_reads.disks",
            "must be /dev/ paths or BUS=<usb|sata|virtio>",
        ));
    }
    Ok(())
}

/// Random I/O: a region holding a block, depths in 1..=256, targets among `s`'s.
fn check_random(r: &RandomPlan, s: &StoragePlan) -> Result<(), PlanError> {
    if r.block_size == 0 || r.region_bytes < r.block_size {
        return Err(invalid(
            "storage.random.region_bytes",
            "must hold at least one block",
        ));
    }
    if r.queue_depths.is_empty() || r.queue_depths.iter().any(|&q| q == 0 || q > 256) {
        return Err(invalid(
            "storage.random.queue_depths",
            "list depths in 1..=256",
        ));
    }
    if let Some(l) = r
        .targets
        .iter()
        .find(|l| !s.targets.iter().any(|t| &t.label == *l))
    {
        return Err(PlanError::Invalid {
            field: "storage.random.targets".into(),
            message: format!("`{l}` is not the label of a storage target"),
        });
    }
    Ok(())
}

/// The commands: ids that differ and are names, paths inside the results partition,
/// time limits above zero.
fn check_commands(commands: &[CommandStep]) -> Result<(), PlanError> {
    if let Some((a, b)) = file::name_clash(commands.iter().map(|c| c.id.as_str())) {
        return Err(PlanError::Invalid {
            field: format!("commands[{}].id", second_of(commands, |c| &c.id, b)),
            message: clash_message("id", a, b),
        });
    }
    for (i, c) in commands.iter().enumerate() {
        if let Some(message) = file::name_problem(&c.id) {
            return Err(PlanError::Invalid {
                field: format!("commands[{i}].id"),
                message,
            });
        }
        if c.path.is_empty() || c.path.starts_with('/') || c.path.split('/').any(|p| p == "..") {
            return Err(invalid(
                &format!("commands[{i}].path"),
                "must be a path inside the results partition, e.g. bin/coremark",
            ));
        }
        if c.time_limit_ms == 0 {
            return Err(invalid(
                &format!("commands[{i}].time_limit_ms"),
                "must be above 0 ms",
            ));
        }
    }
    Ok(())
}

/// Index of the last entry of `items` named `name` (the second of a clashing pair).
fn second_of<T>(items: &[T], name_of: impl Fn(&T) -> &String, name: &str) -> usize {
    items.iter().rposition(|x| name_of(x) == name).unwrap_or(0)
}
