//! A plan file, over its presets, on one image: the [`Plan`] PID 1 runs.
//!
//! The image fixes what a plan file cannot change: the board, whether it is emulated,
//! the kernel modules, the results partition, the results link and PID 1's supervision
//! (the `base` plan the xtask built), and the card's partitions and the board's buses
//! ([`ImageFacts`]). The plan file chooses the steps, their targets and caps.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use toml::Spanned;

use crate::file::{CommandSection, NetworkSection, PlanFile, PlanFileError};
use crate::net_tests::NetTests;
use crate::network::WiredPlan;
use crate::place::line_of;
use crate::presets::{preset, preset_file, DEFAULT_PRESET, PRESETS};
use crate::spelling::WiredKind;
use crate::{Bus, CardCheckPlan, CommandStep, MemoryPlan, Plan, StorageTarget};

/// Where the xtask puts [`ImageFacts`] in the initramfs (JSON).
pub const IMAGE_FACTS_PATH: &str = "/etc/benchboot/image.json";

/// The copy of [`ImageFacts`] on the card's results partition, beside the plan file:
/// `benchboot plan write` checks a new plan against it (PID 1 reads its own copy, in the
/// initramfs, which a user cannot change by editing the card).
pub const CARD_FACTS_FILE: &str = "image.json";

/// What the image knows that a plan file does not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageFacts {
    /// The board the image is for (`boards/<name>.toml`).
    pub board: String,
    /// The card's test partitions, one per filesystem, labelled by filesystem name.
    pub card: Vec<StorageTarget>,
    /// Kernel name of the disk the board boots from (`mmcblk0`): never a raw target.
    /// The nominal name the plan's paths are built on: PID 1 finds the card by
    /// [`ImageFacts::disk_signature`] and moves them ([`Plan::on_boot_disk`]).
    pub boot_disk: String,
    /// The MBR disk signature this image wrote (bytes 440..444 of sector 0,
    /// little-endian, as `fdisk` prints it); 0: none recorded (images built before one
    /// signature per image: PID 1 keeps [`ImageFacts::boot_disk`]).
    #[serde(default)]
    pub disk_signature: u32,
    /// Buses the board reaches other disks on (board file `storage.extra`).
    pub buses: Vec<Bus>,
    /// The board's own Ethernet (board file `[ethernet]`), if it has one.
    #[serde(default)]
    pub ethernet: Option<EthernetFacts>,
    /// The board's USB host port for Ethernet adapters, when the image loads their
    /// drivers (board file `[usb-ethernet]`).
    #[serde(default)]
    pub usb_ethernet: Option<UsbEthernetFacts>,
    /// The board's WiFi radio (board file `[wifi]`), if it has one.
    #[serde(default)]
    pub wifi: Option<crate::wifi::WifiFacts>,
}

/// A board's USB host port for Ethernet adapters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsbEthernetFacts {
    /// The adapter drivers its image loads, as `/sys/class/net/<if>/device/driver`
    /// shows them (not the board's own USB Ethernet, e.g. the Pi 3 B's smsc95xx).
    pub drivers: Vec<String>,
}

/// A board's built-in Ethernet, as the board file names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EthernetFacts {
    /// Driver names as `/sys/class/net/<if>/device/driver` shows them.
    pub drivers: Vec<String>,
    /// What the port is rated for, Mbit/s.
    pub rated_mbit: Option<u32>,
}

/// The drivers a USB Ethernet adapter link looks for when the plan names none: the
/// usual adapters' (SMSC LAN75xx, ASIX AX88179 and AX88772, Realtek RTL8152/8153, and
/// the class drivers for CDC ECM / NCM adapters), as the kernel's drivers/net/usb/ name
/// them.
pub const USB_ETHERNET_DRIVERS: [&str; 6] = [
    "smsc75xx",
    "ax88179_178a",
    "r8152",
    "asix",
    "cdc_ether",
    "cdc_ncm",
];

/// The first /30 of direct wired links (board `.1`, host `.2`); link `i` of the plan
/// takes `+ 4 i`. Apart from the gadget's 10.55.0.0/24.
pub const WIRED_SUBNET: [u8; 4] = [10, 57, 0, 0];

/// How long PID 1 waits for a wired link's interface and carrier when the plan file
/// does not say, ms.
pub const WIRED_LINK_WAIT_MS: u64 = 30_000;

/// Where a plan came from; results carry it so two runs can be told to be alike.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanSource {
    /// The file as named when it was read (`plans/quick.toml`, `plan.toml` on the card);
    /// empty for a plan made without a plan file (e.g. `benchboot storage`).
    pub file: String,
    /// `quick v3` when the text is exactly a shipped preset's.
    pub preset: Option<String>,
    /// The preset the file started from, with its version: `quick v3`.
    pub extends: Option<String>,
    /// SHA-256 of the file's bytes, lowercase hex.
    pub sha256: String,
    /// The file's text.
    pub text: String,
}

impl PlanSource {
    /// One line: `standard v2`, or `my.toml (sha256 1a2b3c4d5e6f, extends quick v3)`.
    pub fn describe(&self) -> String {
        if let Some(p) = &self.preset {
            return p.clone();
        }
        if self.file.is_empty() {
            return "built in, no plan file (a test plan, or a host run)".into();
        }
        let short = self.sha256.get(..12).unwrap_or(&self.sha256);
        match &self.extends {
            Some(e) => format!("{} (sha256 {short}, extends {e})", self.file),
            None => format!("{} (sha256 {short})", self.file),
        }
    }

    /// True when two runs used the same plan text.
    pub fn same_plan(&self, other: &PlanSource) -> bool {
        self.sha256 == other.sha256
    }
}

/// Why board `board` cannot have a `kind` link (`None`: it can): no built-in Ethernet,
/// or no USB host port with adapter drivers in its image.
pub fn unavailable_reason(kind: WiredKind, board: &str, image: &ImageFacts) -> Option<String> {
    match kind {
        WiredKind::Builtin if image.ethernet.is_none() => Some(format!(
            "{board} has no built-in Ethernet (boards/{board}.toml has no [ethernet]); \
             use link = \"usb-adapter\" with an adapter on a USB host port"
        )),
        WiredKind::UsbAdapter if image.usb_ethernet.is_none() => Some(format!(
            "{board} has no USB host port with adapter drivers in its image \
             (boards/{board}.toml has no [usb-ethernet])"
        )),
        _ => None,
    }
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `name vN` of a preset file.
fn preset_id(name: &str) -> String {
    let version = preset(name)
        .and_then(|t| PlanFile::parse(name, t).ok())
        .and_then(|f| f.version)
        .unwrap_or(0);
    format!("{name} v{version}")
}

/// A plan file as read: its own keys, and merged over every preset it extends.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The file's own keys (their spans are the file's lines).
    pub own: PlanFile,
    /// The file over its presets, nearest first.
    pub merged: PlanFile,
    /// `quick v3`: the preset it started from, `None` for a preset itself.
    pub extends: Option<String>,
}

/// Parses `text` (named `file` in errors) and every preset it extends. A file without
/// `extends` starts from [`DEFAULT_PRESET`], unless it is a shipped preset itself.
///
/// # Errors
/// [`PlanFileError`] for the file's own errors, and for an `extends` naming no preset.
pub fn load(file: &str, text: &str) -> Result<Loaded, PlanFileError> {
    let own = PlanFile::parse(file, text)?;
    let is_preset = own.name.as_deref().and_then(preset) == Some(text);
    let mut next = match &own.extends {
        Some(s) => Some((s.get_ref().clone(), Some(s.span()))),
        None if is_preset => None,
        None => Some((DEFAULT_PRESET.to_owned(), None)),
    };
    let extends = next.as_ref().map(|(n, _)| preset_id(n));
    let mut merged = own.clone();
    // Presets extend presets; the chain is at most as long as the list.
    for _ in 0..PRESETS.len() {
        let Some((name, span)) = next.take() else {
            break;
        };
        let Some(ptext) = preset(&name) else {
            let names: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
            return Err(PlanFileError {
                file: file.to_owned(),
                line: span.map(|s| line_of(text, s.start)),
                key: "extends".into(),
                message: format!("`{name}` is not a preset; use one of {}", names.join(", ")),
            });
        };
        let parent = PlanFile::parse(&preset_file(&name), ptext)?;
        next = parent.extends.as_ref().map(|s| (s.get_ref().clone(), None));
        merged = merged.over(parent);
    }
    Ok(Loaded {
        own,
        merged,
        extends,
    })
}

/// The plan PID 1 runs: plan file `text` (named `file`) over its presets, on `base`'s
/// image fixings and `image`'s disks.
///
/// # Errors
/// [`PlanFileError`] naming file, line and key: a parse error, a disk on a bus the
/// board lacks, a raw target without `destroy = true`, a raw target on the boot disk,
/// a label used twice, a random target that is no target, a plan that then fails
/// [`Plan::validate`].
pub fn resolve(
    file: &str,
    text: &str,
    base: &Plan,
    image: &ImageFacts,
) -> Result<Plan, PlanFileError> {
    let Loaded {
        own,
        merged,
        extends,
    } = load(file, text)?;
    let at = InFile { file, text };
    // Spans are this file's only where this file set the key.
    let own_storage = own.storage.clone().unwrap_or_default();
    let s = merged.storage.clone().unwrap_or_default();
    let enabled = s.enabled.unwrap_or(true);

    let mut plan = base.clone();
    storage::storage(&mut plan.storage, &s, &own_storage, image, &base.board, at)?;
    network(&mut plan, &merged, &own, image, at)?;

    if let Some(m) = &merged.memory {
        plan.memory = memory(m, own.memory.as_ref(), base.memory)
            .map_err(|(k, sp, msg)| at.err(&format!("memory.{k}"), sp, msg))?;
    }

    if let Some(c) = &merged.card_check {
        plan.card_check = card_check(c, own.card_check.as_ref(), plan.emulated)
            .map_err(|(k, sp, msg)| at.err(&format!("card-check.{k}"), sp, msg))?;
    }

    plan.energy = energy::energy(
        merged.energy.as_ref(),
        own.energy.as_ref(),
        &base.energy,
        plan.emulated,
    )
    .map_err(|(k, sp, msg)| at.err(&format!("energy.{k}"), sp, msg))?;

    plan.commands = merged
        .command
        .clone()
        .unwrap_or_default()
        .iter()
        .map(command_step)
        .collect();
    plan.source = plan_source(file, text, &own, extends);
    let card_len = if enabled {
        s.card.as_ref().map_or(0, Vec::len)
    } else {
        0
    };
    plan.validate().map_err(|e| match e {
        crate::PlanError::Invalid { field, message } => {
            crate::locate::invalid_in_file(file, text, &field, message, card_len)
        }
        other => at.err(crate::file::WHOLE_FILE, None, other.to_string()),
    })?;
    Ok(plan)
}

/// The plan file being resolved, for its errors.
#[derive(Clone, Copy)]
struct InFile<'a> {
    /// The file as named.
    file: &'a str,
    /// Its text.
    text: &'a str,
}

impl InFile<'_> {
    /// The error at `key`: on the line of `span` (in this file), else on the line
    /// nearest to one naming `key`.
    fn err(
        &self,
        key: &str,
        span: Option<std::ops::Range<usize>>,
        message: String,
    ) -> PlanFileError {
        PlanFileError {
            file: self.file.to_owned(),
            line: span
                .map(|s| line_of(self.text, s.start))
                .or_else(|| crate::locate::nearest_line(self.text, key)),
            key: key.to_owned(),
            message,
        }
    }
}

/// Where the plan came from: file `file` with text `text`, the preset it is (when its
/// text is one's) and the one it `extends`.
fn plan_source(file: &str, text: &str, own: &PlanFile, extends: Option<String>) -> PlanSource {
    let is_preset = own.name.as_deref().and_then(preset) == Some(text);
    PlanSource {
        file: file.to_owned(),
        preset: is_preset.then(|| preset_id(own.name.as_deref().unwrap_or_default())),
        extends,
        sha256: sha256_hex(text),
        text: text.to_owned(),
    }
}

/// `[network]` (merged, and this file's `own`) over the base plan's network step: its
/// wired links and WiFi on `image`, the hardware tests when a link needs them, its keys
/// over the tests; nothing when `enabled = false`.
fn network(
    plan: &mut Plan,
    merged: &PlanFile,
    own: &PlanFile,
    image: &ImageFacts,
    at: InFile<'_>,
) -> Result<(), PlanFileError> {
    let n = merged.network.clone().unwrap_or_default();
    let own_wired = own.network.as_ref().is_some_and(|n| n.wired.is_some());
    wired_links(&mut plan.network.wired, &n, own_wired, image, at)?;
    let own_wifi = own.network.as_ref().is_some_and(|n| n.wifi.is_some());
    plan.network.wifi = crate::wifi::resolve(
        n.wifi.as_ref(),
        image.wifi.as_ref(),
        &image.board,
        plan.emulated,
    )
    .map_err(|(k, sp, m)| at.err(&format!("network.wifi.{k}"), sp.filter(|_| own_wifi), m))?;
    if (!plan.network.wired.is_empty() || plan.network.wifi.is_some())
        && plan.network.tests.is_none()
    {
        plan.network.tests = Some(NetTests::hardware());
    }
    if !n.enabled.unwrap_or(true) {
        plan.network.tests = None;
        plan.network.wired.clear();
        plan.network.wifi = None;
    } else if let Some(t) = &mut plan.network.tests {
        // Only a link with a peer has tests (the base plan says which).
        apply_test_keys(t, &n);
    }
    Ok(())
}

/// Every `[[network.wired]]` of `n` on `image`, after the base plan's `wired`, refused
/// when a name repeats (in any case or spelling). `own_wired`: this file sets them.
fn wired_links(
    wired: &mut Vec<WiredPlan>,
    n: &NetworkSection,
    own_wired: bool,
    image: &ImageFacts,
    at: InFile<'_>,
) -> Result<(), PlanFileError> {
    for (i, w) in n.wired.clone().unwrap_or_default().iter().enumerate() {
        let wp = wired::wired_link(i, w, image).map_err(|(k, sp, m)| {
            at.err(
                &format!("network.wired[{i}].{k}"),
                sp.filter(|_| own_wired),
                m,
            )
        })?;
        if wired.iter().any(|x| {
            crate::spelling::folded_name(&x.name) == crate::spelling::folded_name(&wp.name)
        }) {
            return Err(at.err(
                &format!("network.wired[{i}].name"),
                Some(w.name.as_ref().map_or_else(|| w.link.span(), Spanned::span))
                    .filter(|_| own_wired),
                format!(
                    "`{}` names another link already; give this one another name",
                    wp.name
                ),
            ));
        }
        wired.push(wp);
    }
    Ok(())
}

/// `[network]`'s keys over the network tests `t`: durations and intervals (ms), stream
/// counts, latency samples, HTTP bytes, peer wait (ms), UDP bitrate and datagram bytes.
fn apply_test_keys(t: &mut NetTests, n: &NetworkSection) {
    if let Some(v) = n.duration {
        t.duration_ms = v.0;
    }
    if let Some(v) = n.interval {
        t.interval_ms = v.0;
    }
    if let Some(v) = n.omit {
        t.omit_ms = v.0;
    }
    if let Some(v) = &n.streams {
        t.streams = v.iter().map(|d| d.0).collect();
    }
    if let Some(v) = n.latency_samples {
        t.latency_samples = v.0;
    }
    if let Some(v) = n.http {
        t.http_bytes = v.0;
    }
    if let Some(v) = n.peer_wait {
        t.peer_wait_ms = v.0;
    }
    if let Some(v) = n.udp_bitrate {
        t.udp_bitrate = v.0;
    }
    if let Some(v) = &n.udp_datagram {
        t.udp_datagram_bytes = u32::try_from(v.get_ref().0).unwrap_or(u32::MAX);
    }
}

/// A refusal of a `[memory]` key: (key, its span in this file, why).
type MemoryRefusal = Refusal;

/// A refusal of a section's key: (key, its span in this file, why).
pub(crate) type Refusal = (&'static str, Option<std::ops::Range<usize>>, String);

/// `[memory]` over the base plan's memory step (the hardware default when it has none).
fn memory(
    m: &crate::file::MemorySection,
    own: Option<&crate::file::MemorySection>,
    base: Option<MemoryPlan>,
) -> Result<Option<MemoryPlan>, MemoryRefusal> {
    if !m.enabled.unwrap_or(true) {
        return Ok(None);
    }
    let mut p = base.unwrap_or(MemoryPlan::HARDWARE);
    if let Some(v) = m.sample {
        p.sample_ms = v.0;
    }
    if let Some(v) = m.samples {
        p.samples = v.0;
    }
    if let Some(v) = &m.latency_max {
        let bytes = v.get_ref().0;
        // tinymembench's LCG draws 31-bit addresses (crates/memory/src/latency.rs).
        if bytes < 1024 || !bytes.is_power_of_two() || bytes > 1 << 31 {
            let span = own.and_then(|o| o.latency_max.as_ref()).map(Spanned::span);
            return Err((
                "latency-max",
                span,
                format!(
                    "{bytes} B is not a power of two from 1 KiB to 2 GiB; write e.g. \"64 MiB\""
                ),
            ));
        }
        p.latency_max_bytes = bytes;
    }
    if let Some(v) = m.latency_reads {
        p.latency_reads = u64::from(v.0);
    }
    if let Some(v) = m.latency_repeats {
        p.latency_repeats = v.0;
    }
    if let Some(v) = m.huge_pages {
        p.huge_pages = v;
    }
    if let Some(v) = m.per_core {
        p.per_core = v;
    }
    Ok(Some(p))
}

/// `[card-check]`: off unless `enabled = true` (destructive to the unpartitioned
/// space); the hardware or QEMU defaults under the keys the file names.
fn card_check(
    c: &crate::file::CardCheckSection,
    own: Option<&crate::file::CardCheckSection>,
    emulated: bool,
) -> Result<Option<CardCheckPlan>, MemoryRefusal> {
    let span =
        |f: fn(&crate::file::CardCheckSection) -> Option<std::ops::Range<usize>>| own.and_then(f);
    match c.enabled.as_ref().map(|e| *e.get_ref()) {
        Some(true) => {}
        Some(false) => return Ok(None),
        None => {
            return Err((
                "enabled",
                span(|o| o.resolution.as_ref().map(Spanned::span)),
                "the full-card check overwrites the card's unpartitioned space: write                  `enabled = true` to run it (or remove [card-check])"
                    .into(),
            ))
        }
    }
    let mut p = if emulated {
        CardCheckPlan::QEMU
    } else {
        CardCheckPlan::HARDWARE
    };
    if let Some(v) = &c.resolution {
        let bytes = v.get_ref().0;
        if bytes < 4096 || !bytes.is_power_of_two() {
            return Err((
                "resolution",
                span(|o| o.resolution.as_ref().map(Spanned::span)),
                format!("{bytes} B is not a power of two from 4 KiB; write e.g. \"1 MiB\""),
            ));
        }
        p.resolution_bytes = bytes;
    }
    if let Some(v) = c.cache_flush {
        p.cache_flush_bytes = v.0;
    }
    if let Some(v) = c.time_limit {
        p.time_limit_ms = v.0;
    }
    if let Some(v) = c.full {
        p.full = v;
    }
    Ok(Some(p))
}

fn command_step(c: &CommandSection) -> CommandStep {
    CommandStep {
        id: c.id.0.clone(),
        path: c.path.get_ref().clone(),
        args: c.args.clone(),
        time_limit_ms: c.time_limit.0,
    }
}

mod disk;
mod energy;
mod example;
mod storage;
mod wired;

#[cfg(test)]
mod tests;
