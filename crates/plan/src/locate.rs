//! Where a key sits in a plan file: the line an error names and the key as the file
//! spells it. [`crate::Plan::validate`] names the fields of the resolved plan
//! (`storage.byte_cap`, `commands[0].path`); a person wrote `byte-cap` under
//! `[storage]` and `path` under the first `[[command]]`. [`file_key`] maps one to the
//! other, [`key_line`] finds the line (spans from `toml_edit`, the parser under `toml`).

use crate::file::PlanFileError;
use crate::place::line_of;

/// One step of a dotted key path: `disk[0]` is `("disk", Some(0))`.
fn segments(key: &str) -> Vec<(&str, Option<usize>)> {
    key.split('.')
        .map(|seg| match seg.split_once('[') {
            Some((name, rest)) => (name, rest.trim_end_matches(']').parse().ok()),
            None => (seg, None),
        })
        .collect()
}

/// Byte range of `key` (a dotted path with indexes: `storage.disk[0].label`,
/// `storage.card[1]`) in `text`, or of the deepest part of it the file names. The
/// second value is true when the whole key was found.
fn key_span(text: &str, key: &str) -> Option<(std::ops::Range<usize>, bool)> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let mut table: Option<&dyn toml_edit::TableLike> = Some(doc.as_table());
    let mut found: Option<std::ops::Range<usize>> = None;
    for (name, index) in segments(key) {
        let Some((k, item)) = table.and_then(|t| t.get_key_value(name)) else {
            return found.map(|s| (s, false));
        };
        found = k.span().or(found);
        table = item.as_table_like();
        let Some(i) = index else { continue };
        if let Some(t) = item.as_array_of_tables().and_then(|a| a.get(i)) {
            found = t.span().or(found);
            table = Some(t);
        } else if let Some(v) = item.as_array().and_then(|a| a.get(i)) {
            found = v.span().or(found);
            table = v.as_inline_table().map(|t| t as &dyn toml_edit::TableLike);
        } else {
            return found.map(|s| (s, false));
        }
    }
    found.map(|s| (s, true))
}

/// 1-based line of `key` (dotted, with indexes: `command[0].path`) in plan file `text`,
/// when the file names it; `None` when it does not (the value came from a preset).
pub fn key_line(text: &str, key: &str) -> Option<usize> {
    match key_span(text, key)? {
        (span, true) => Some(line_of(text, span.start)),
        (_, false) => None,
    }
}

/// 1-based line of `key`, or of the nearest table around it the file names (a key a
/// preset set, refused with what this file set beside it).
pub fn nearest_line(text: &str, key: &str) -> Option<usize> {
    key_span(text, key).map(|(span, _)| line_of(text, span.start))
}

/// The plan-file key a field of the resolved plan ([`crate::Plan`], as
/// [`crate::PlanError::Invalid`] names it) comes from, spelled as a plan file spells
/// it: `storage.byte_cap` -> `storage.byte-cap`, `commands[2].time_limit_ms` ->
/// `command[2].time-limit`, `storage.targets[1].label` -> `storage.card[1]` (the card's
/// partitions come first, then each `[[storage.disk]]`). `card_len` is how many
/// targets the card's partitions gave. A field no plan file sets (`results.device`)
/// comes back unchanged.
pub fn file_key(field: &str, card_len: usize) -> String {
    const FIXED: &[(&str, &str)] = &[
        ("storage.block_sizes", "storage.block-sizes"),
        ("storage.byte_cap", "storage.byte-cap"),
        ("storage.time_cap_ms", "storage.time-cap"),
        ("storage.device_wait_ms", "storage.device-wait"),
        (
            "storage.device_reads.chunk_bytes",
            "storage.device-reads.chunk",
        ),
        (
            "storage.device_reads.cached_ms",
            "storage.device-reads.cached",
        ),
        (
            "storage.device_reads.buffered_ms",
            "storage.device-reads.buffered",
        ),
        ("storage.random.region_bytes", "storage.random.region"),
        ("storage.random.block_size", "storage.random.block-size"),
        ("storage.random.duration_ms", "storage.random.duration"),
        ("storage.random.queue_depths", "storage.random.queue-depths"),
        ("network.tests.duration_ms", "network.duration"),
        ("network.tests.interval_ms", "network.interval"),
        ("network.tests.omit_ms", "network.omit"),
        ("network.tests.streams", "network.streams"),
        ("network.tests.latency_samples", "network.latency-samples"),
        ("network.tests.http_bytes", "network.http"),
        ("network.tests.peer_wait_ms", "network.peer-wait"),
        ("network.tests.udp_bitrate", "network.udp-bitrate"),
        ("network.tests.udp_datagram_bytes", "network.udp-datagram"),
        ("card_check.resolution_bytes", "card-check.resolution"),
        ("card_check.cache_flush_bytes", "card-check.cache-flush"),
        ("card_check.time_limit_ms", "card-check.time-limit"),
        ("memory.sample_ms", "memory.sample"),
        ("energy.idle_ms", "energy.idle"),
        ("energy.slot_ms", "energy.sync-slot"),
        ("memory.latency_max_bytes", "memory.latency-max"),
        ("memory.latency_reads", "memory.latency-reads"),
        ("memory.latency_repeats", "memory.latency-repeats"),
    ];
    // A list entry: `storage.block_sizes[1]` -> `storage.block-sizes[1]`.
    let (bare, index) = match field.strip_suffix(']').and_then(|f| f.rsplit_once('[')) {
        Some((bare, i)) if !bare.contains('[') => (bare, format!("[{i}]")),
        _ => (field, String::new()),
    };
    if let Some((_, k)) = FIXED.iter().find(|(f, _)| *f == bare) {
        return format!("{k}{index}");
    }
    if let Some(rest) = field.strip_prefix("commands[") {
        let rest = rest
            .replace("].time_limit_ms", "].time-limit")
            .replace('_', "-");
        return format!("command[{rest}");
    }
    if let Some(rest) = field.strip_prefix("storage.targets[") {
        let (i, what) = rest.split_once("].").unwrap_or((rest, ""));
        let i: usize = i.trim_end_matches(']').parse().unwrap_or(0);
        return if i < card_len {
            format!("storage.card[{i}]")
        } else {
            format!("storage.disk[{}].{what}", i - card_len)
        };
    }
    if let Some(rest) = field.strip_prefix("network.wired[") {
        return format!(
            "network.wired[{}",
            rest.replace("topology.", "").replace('_', "-")
        );
    }
    field.to_owned()
}

/// A refusal of [`crate::Plan::validate`] as the plan file's error: the key as the file
/// spells it ([`file_key`]) and its line in `text` (or the line of the nearest table
/// around it the file names). `card_len`: as in [`file_key`].
pub fn invalid_in_file(
    file: &str,
    text: &str,
    field: &str,
    message: String,
    card_len: usize,
) -> PlanFileError {
    let mut key = file_key(field, card_len);
    // "Duration under one interval": the file names one of the two.
    if key == "network.duration" && key_line(text, &key).is_none() {
        key = "network.interval".into();
    }
    PlanFileError {
        file: file.to_owned(),
        line: nearest_line(text, &key),
        key,
        message,
    }
}

#[cfg(test)]
mod tests;
