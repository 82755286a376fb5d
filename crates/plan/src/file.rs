//! The plan file a person writes (TOML): which steps run, on which targets, with
//! which caps. Parsed strictly here, merged over the preset it `extends`
//! ([`crate::presets`]), then turned into the [`crate::Plan`] PID 1 runs by
//! [`crate::resolve`].
//!
//! Every key is optional in a file: what it does not name comes from its preset
//! (`extends`, default `standard`). Errors name the file, the line, the key and the fix
//! ([`PlanFileError`]).
//!
//! ```toml
//! extends = "quick"
//!
//! [storage]
//! card = ["ext4"]                 # the card's test partitions: ext2 ext3 ext4 vfat raw
//! block-sizes = ["4 KiB", "1 MiB"]
//! repetitions = 1
//!
//! [[storage.disk]]                # a disk of your own, by filesystem label
//! label = "usb-ext4"
//! device = "LABEL=BBEXT4"
//! filesystem = "ext4"
//! ```

use serde::Deserialize;
use toml::Spanned;

use crate::place::line_of;
use crate::spelling::folded_name;
use crate::spelling::WiredKind;
use crate::units::{Bitrate, Bytes, Millis};
use crate::{Bus, Filesystem, Mode};

/// A plan file as written: every key optional, unknown keys refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PlanFile {
    /// The preset this file starts from: `quick`, `standard` (the default) or `seeds`.
    pub extends: Option<Spanned<String>>,
    /// Presets only: the preset's name (`plans/<name>.toml`).
    pub name: Option<String>,
    /// Presets only: bumped whenever the preset's content changes, so "standard v2"
    /// names one fixed plan.
    pub version: Option<u32>,
    /// One line saying what the plan is for.
    pub description: Option<String>,
    pub storage: Option<StorageSection>,
    pub network: Option<NetworkSection>,
    pub memory: Option<MemorySection>,
    /// The full-card check: destructive to the card's unpartitioned space, off unless
    /// `enabled = true`.
    pub card_check: Option<CardCheckSection>,
    /// Your own workloads, run in order after the storage steps.
    pub command: Option<Vec<CommandSection>>,
    /// The idle phases and sync patterns a host's power meter is aligned by.
    pub energy: Option<EnergySection>,
}

/// `[energy]`: what PID 1 runs so a power trace taken on the host can be tied to the
/// steps ([`crate::EnergyPlan`]).
///
/// ```toml
/// [energy]
/// idle = "30 s"          # each idle phase; "0 s": none
/// sync = true            # the busy/idle pattern (Barker 13) at the start and the end
/// sync-slot = "1 s"      # one slot of the pattern, 100 ms ..= 10 s
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct EnergySection {
    /// Length of each idle phase, at most 10 min; `"0 s"` turns them off.
    pub idle: Option<IdleLength>,
    /// Run the sync patterns at the run's start and end.
    pub sync: Option<bool>,
    /// Length of one sync slot, 100 ms ..= 10 s.
    pub sync_slot: Option<SlotLength>,
    /// An on-board power sensor PID 1 samples itself (`axp20x-usb`, `ina226 i2c-1 0x40
    /// 0.1ohm`, [`crate::energy::Sensor::parse`]); `""`: none.
    pub sensor: Option<Spanned<String>>,
}

/// An idle phase's length: 0 ..= [`crate::energy::MAX_IDLE_MS`] ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleLength(pub u64);

impl<'de> Deserialize<'de> for IdleLength {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Millis(ms) = Millis::deserialize(d)?;
        if ms > crate::energy::MAX_IDLE_MS {
            return Err(serde::de::Error::custom(crate::energy::idle_problem(ms)));
        }
        Ok(IdleLength(ms))
    }
}

/// A sync slot's length: [`crate::energy::MIN_SLOT_MS`] ..= [`crate::energy::MAX_SLOT_MS`] ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotLength(pub u64);

impl<'de> Deserialize<'de> for SlotLength {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Millis(ms) = Millis::deserialize(d)?;
        if !(crate::energy::MIN_SLOT_MS..=crate::energy::MAX_SLOT_MS).contains(&ms) {
            return Err(serde::de::Error::custom(crate::energy::slot_problem(ms)));
        }
        Ok(SlotLength(ms))
    }
}

/// `[memory]`: memory bandwidth and latency (tinymembench's method), before storage.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MemorySection {
    pub enabled: Option<bool>,
    /// Least duration of one bandwidth sample (tinymembench: 0.5 s).
    pub sample: Option<Millis>,
    /// Samples per kernel; the best is reported with the spread.
    pub samples: Option<Count<{ crate::limits::MAX_COUNT }>>,
    /// Largest latency block, a power of two from 1 KiB (tinymembench: 64 MiB).
    pub latency_max: Option<Spanned<Bytes>>,
    /// Dependent reads per latency repeat (rounded down to a multiple of 16, at least 16).
    pub latency_reads: Option<Count<{ crate::limits::MAX_LATENCY_READS as u32 }>>,
    /// Repeats per latency block; the fastest counts.
    pub latency_repeats: Option<Count<{ crate::limits::MAX_COUNT }>>,
    /// Also measure latency with transparent huge pages where the kernel has them.
    pub huge_pages: Option<bool>,
    /// On multi-core boards, libc memcpy/memset on each core and on all at once too.
    pub per_core: Option<bool>,
}

/// `[card-check]`: the fake-capacity probe over the boot card's unpartitioned space
/// (crates/plan/src/card_check.rs). Destructive there, so it runs only with
/// `enabled = true`; the section without it is refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CardCheckSection {
    pub enabled: Option<Spanned<bool>>,
    /// Resolution of the real-size estimate, a power of two from 4 KiB (default 1 MiB).
    pub resolution: Option<Spanned<Bytes>>,
    /// Data written past the card's own write cache before reading back (default 32 MiB).
    pub cache_flush: Option<Bytes>,
    /// Wall-clock limit of the check (default 20 min).
    pub time_limit: Option<Millis>,
    /// Also write and read back every sector of the region, each I/O timed (default
    /// false): the speed profile, where the write speed falls, stalls.
    pub full: Option<bool>,
}

/// `[storage]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct StorageSection {
    /// Run the storage steps at all.
    pub enabled: Option<bool>,
    /// The card's test partitions to sweep, by filesystem: any of ext2, ext3, ext4, vfat,
    /// raw (the image makes one of each).
    pub card: Option<Vec<Filesystem>>,
    /// Block sizes of the sweep, in the order they run: bytes or `"4 KiB"`.
    pub block_sizes: Option<Vec<BlockSize>>,
    pub modes: Option<Vec<Mode>>,
    /// Per block size and direction, stop after this many bytes...
    pub byte_cap: Option<Spanned<Bytes>>,
    /// ...or after this long, whichever comes first.
    pub time_cap: Option<Millis>,
    pub repetitions: Option<Count>,
    /// How long PID 1 waits for a target's device to appear.
    pub device_wait: Option<Millis>,
    /// cpufreq governor set before measuring; `""` leaves the kernel's.
    pub governor: Option<String>,
    /// Write a position-stamped pattern on every target and read it back.
    pub verify: Option<bool>,
    pub device_reads: Option<DeviceReadsSection>,
    pub random: Option<RandomSection>,
    /// Disks of your own besides the card.
    pub disk: Option<Vec<DiskSection>>,
}

/// `[storage.device-reads]`: `hdparm -T` / `-t`-style reads of every disk measured.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DeviceReadsSection {
    pub enabled: Option<bool>,
    /// Read size; hdparm uses 2 MiB (hdparm(8)).
    pub chunk: Option<Spanned<Bytes>>,
    /// How long the cached (`-T`) reads run; hdparm: 2 s.
    pub cached: Option<Millis>,
    /// How long the device (`-t`) reads run; hdparm: 3 s.
    pub buffered: Option<Millis>,
}

/// `[storage.random]`: random `O_DIRECT` I/O (IOPS).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RandomSection {
    pub enabled: Option<bool>,
    /// Target labels (`raw`, `ext4`, or a disk's label).
    pub targets: Option<Spanned<Vec<Label>>>,
    pub block_size: Option<BlockSize>,
    /// The region the offsets fall in.
    pub region: Option<Spanned<Bytes>>,
    pub duration: Option<Millis>,
    /// Each depth N is N threads of synchronous I/O (fio `psync`, `numjobs=N`), 1..=256.
    pub queue_depths: Option<Vec<Depth>>,
}

/// `[[storage.disk]]`: a target besides the card's partitions.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DiskSection {
    /// The name in results and tables.
    pub label: Label,
    /// `LABEL=<filesystem label>`, `PARTLABEL=<GPT partition name>` or a `/dev/` path.
    pub device: Option<Spanned<String>>,
    /// Instead of `device`: the first whole disk on this bus (`usb`, `sata`, `virtio`)
    /// that is not the disk the board booted from; swept raw.
    pub whole_disk: Option<Spanned<Bus>>,
    /// What the device holds; `raw` for a whole disk.
    pub filesystem: Option<Filesystem>,
    /// A raw target (a partition or a whole disk) is overwritten: it runs only with
    /// `destroy = true`.
    #[serde(default)]
    pub destroy: bool,
    /// A device not found is a warning, not an error (a preset's disks, present or not).
    #[serde(default)]
    pub optional: bool,
}

/// `[network]`: throughput, latency and HTTP against the peer on the results link.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct NetworkSection {
    pub enabled: Option<bool>,
    /// Measured time per throughput run, after the warm-up.
    pub duration: Option<Millis>,
    pub interval: Option<Millis>,
    /// Warm-up measured but not counted.
    pub omit: Option<Millis>,
    /// Parallel stream counts, each run in both directions.
    pub streams: Option<Vec<Depth>>,
    pub latency_samples: Option<Count<{ crate::limits::MAX_COUNT }>>,
    /// Size of the HTTP object served from RAM.
    pub http: Option<Bytes>,
    /// How long the board retries reaching the peer.
    pub peer_wait: Option<Millis>,
    /// UDP runs at this offered load, each direction (`"100 Mbit/s"`); `"0 bit/s"` skips
    /// them.
    pub udp_bitrate: Option<Bitrate>,
    /// UDP payload per datagram (iperf3 `-l`).
    pub udp_datagram: Option<Spanned<Bytes>>,
    /// Wired links to measure besides the results link, in order.
    pub wired: Option<Vec<WiredSection>>,
    /// WiFi: the board as AP sweeping channels, or as a client of the user's AP.
    pub wifi: Option<WifiSection>,
}

/// `[network.wifi]`: WiFi throughput per band, channel and width.
///
/// ```toml
/// [network.wifi]
/// role = "ap"                     # the board is the AP (default), or "client"
/// country = "DE"                  # ISO 3166-1 alpha-2; default "00" (world: 2.4 GHz only)
/// channels = [                    # AP: the sweep, one measurement each
///   { band = "2.4", channel = 1, width = 20 },
///   { band = "5", channel = 36, width = 80 },
/// ]
/// security = "wpa2"               # AP: "wpa2" (passphrase made per test) or "open"
/// # client: ssid = "home", passphrase = "...", peer = "192.168.1.10"
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct WifiSection {
    pub enabled: Option<bool>,
    /// `ap` or `client`.
    pub role: Option<Spanned<String>>,
    pub country: Option<Spanned<String>>,
    pub channels: Option<Vec<Spanned<WifiChannelSection>>>,
    /// AP: `open` or `wpa2`.
    pub security: Option<Spanned<String>>,
    /// Client: the user's AP.
    pub ssid: Option<Spanned<String>>,
    pub passphrase: Option<Spanned<String>>,
    /// Client: the peer's IPv4 address; default, the first peer announcing itself.
    pub peer: Option<Spanned<String>>,
    /// How long to wait for a station to join (AP) or to associate and lease (client).
    pub connect_wait: Option<Millis>,
    /// Warm-up of each WiFi run, measured but not counted (at least 3 s).
    pub warm_up: Option<Millis>,
}

/// One channel of `[network.wifi] channels`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WifiChannelSection {
    /// `"2.4"` or `"5"`.
    pub band: crate::spelling::WifiBand,
    pub channel: u8,
    /// MHz: 20, 40, 80 or 160.
    pub width: u32,
}

/// `[[network.wired]]`: a wired link the same network tests run over.
///
/// ```toml
/// [[network.wired]]
/// link = "usb-adapter"            # or "builtin": the board's own Ethernet
/// drivers = ["r8152"]             # default: the usual USB Ethernet drivers
/// topology = "lan"                # or "direct" (a cable to the host, the default)
/// peer = "192.168.1.10"           # LAN: default, the peer announcing itself
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct WiredSection {
    /// The link's name in results; default `eth` (builtin) or `usb-eth`.
    pub name: Option<Spanned<String>>,
    pub link: Spanned<WiredKind>,
    /// The interface's driver is one of these; default: the board's Ethernet drivers
    /// (builtin) or the usual USB Ethernet drivers (usb-adapter).
    pub drivers: Option<Vec<String>>,
    /// Or the interface with this MAC.
    pub mac: Option<Spanned<String>>,
    /// `direct` (default) or `lan`.
    pub topology: Option<Spanned<String>>,
    /// LAN: the peer's IPv4 address; default, the first peer announcing itself.
    pub peer: Option<Spanned<String>>,
    /// Direct: the /30 the board leases from (default 10.57.0.0, the next link's +4).
    pub subnet: Option<Spanned<String>>,
    /// How long to wait for the interface and its carrier (default 30 s).
    pub link_wait: Option<Millis>,
}

/// `[[command]]`: a static binary on the results partition, run as a worker.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CommandSection {
    /// The step id in results (`command.<id>`).
    pub id: Label,
    /// Path relative to the results partition, e.g. `bin/coremark`.
    pub path: Spanned<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// Killed (SIGKILL) and recorded as a fault after this long.
    pub time_limit: Millis,
}

/// A name that becomes a mount point, a step id, a file name and a console case id:
/// 1 to [`MAX_NAME_BYTES`] of `a-z A-Z 0-9 - _`, starting with a letter or digit.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Label(pub String);

/// Longest [`Label`], bytes.
pub const MAX_NAME_BYTES: usize = 32;

/// Why `name` cannot be a [`Label`], if it cannot.
pub fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return Some(format!(
            "`{name}` is {} bytes; a name is 1 to {MAX_NAME_BYTES}",
            name.len()
        ));
    }
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if let Some(c) = name.chars().find(|&c| !ok(c)) {
        return Some(format!(
            "`{name}` holds {c:?}; a name is letters, digits, `-` and `_` only (it becomes a \
             mount point, a file name and a console case id)"
        ));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Some(format!("`{name}` must start with a letter or digit"));
    }
    None
}

/// The first two of `names` that are one name once folded ([`folded_name`]).
pub fn name_clash<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<(&'a str, &'a str)> {
    let mut seen: Vec<(String, &str)> = Vec::new();
    for n in names {
        let f = folded_name(n);
        if let Some((_, first)) = seen.iter().find(|(x, _)| *x == f) {
            return Some((first, n));
        }
        seen.push((f, n));
    }
    None
}

impl<'de> Deserialize<'de> for Label {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        match name_problem(&s) {
            Some(p) => Err(serde::de::Error::custom(p)),
            None => Ok(Label(s)),
        }
    }
}

/// A block size: 1 B ..= [`crate::MAX_BLOCK_BYTES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockSize(pub u64);

impl<'de> Deserialize<'de> for BlockSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Bytes(b) = Bytes::deserialize(d)?;
        if b == 0 || b > crate::MAX_BLOCK_BYTES {
            return Err(serde::de::Error::custom(format!(
                "block size {b} B is outside 1 B ..= 64 MiB"
            )));
        }
        Ok(BlockSize(b))
    }
}

/// A count from 1 to `MAX` (repetitions, samples, reads): a value outside, a negative
/// one or one past `u64` included, is refused with the range (`0 is outside
/// 1..=10000`), so the fix is in the message; below 1 where `MAX` is only `u32`'s own,
/// `must be at least 1`, as the plan's check says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count<const MAX: u32 = { u32::MAX }>(pub u32);

impl<'de, const MAX: u32> Deserialize<'de> for Count<MAX> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<const MAX: u32>;
        impl<const MAX: u32> serde::de::Visitor<'_> for Visit<MAX> {
            type Value = Count<MAX>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "a whole number in 1..={MAX}")
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Self::Value, E> {
                self.visit_i128(i128::from(n))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Self::Value, E> {
                self.visit_i128(i128::from(n))
            }
            fn visit_i128<E: serde::de::Error>(self, n: i128) -> Result<Self::Value, E> {
                match u32::try_from(n) {
                    Ok(c) if (1..=MAX).contains(&c) => Ok(Count(c)),
                    // A count bounded only by its type: the range's end says nothing.
                    _ if n < 1 && MAX == u32::MAX => Err(E::custom("must be at least 1")),
                    _ => Err(E::custom(format!("{n} is outside 1..={MAX}"))),
                }
            }
        }
        d.deserialize_any(Visit::<MAX>)
    }
}

/// A queue depth or stream count, 1..=256.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Depth(pub u32);

impl<'de> Deserialize<'de> for Depth {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match u32::deserialize(d)? {
            n @ 1..=256 => Ok(Depth(n)),
            n => Err(serde::de::Error::custom(format!("{n} is outside 1..=256"))),
        }
    }
}

/// A plan file that cannot be used: where, which key, why, and what to do. Printed
/// `file:line: key: message`, the key left out when the error is the whole file's
/// (`shadow.toml:1: expected ...`, not `(file)`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, Deserialize)]
#[error(
    "{file}{}: {}{message}",
    line.map(|l| format!(":{l}")).unwrap_or_default(),
    if key == WHOLE_FILE { String::new() } else { format!("{key}: ") }
)]
pub struct PlanFileError {
    /// The file as the user named it (`plans/quick.toml`, `plan.toml` on the card).
    pub file: String,
    /// 1-based line of the offending key, when known.
    pub line: Option<usize>,
    /// Dotted key path, e.g. `storage.block-sizes[0]`; [`WHOLE_FILE`] for the whole file.
    pub key: String,
    pub message: String,
}

/// [`PlanFileError::key`] of an error about the whole file (not TOML, not UTF-8).
pub const WHOLE_FILE: &str = "(file)";

/// A plan file that is not UTF-8 text: the file, and what it looks like instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file} is not UTF-8 ({detail}): save it as UTF-8")]
pub struct NotUtf8 {
    /// The file as the user named it.
    pub file: String,
    /// `looks like UTF-16 (little-endian, with a byte-order mark)`, or
    /// `byte 0x96 at offset 41, line 3` (cp1252 and the like).
    pub detail: String,
}

/// Largest plan file read: 1 MiB (the presets are under 4 KiB; a plan file lists
/// steps, not data). A bigger file is refused before it is read into memory.
pub const MAX_PLAN_FILE_BYTES: u64 = 1 << 20;

/// The bytes of the plan file at `path`, at most [`MAX_PLAN_FILE_BYTES`] of them,
/// through the one reader of named files (`benchboot_input::read`): a FIFO, a device
/// or a folder is refused unread.
///
/// # Errors
/// The file's own (not found, not readable: that `io::ErrorKind`), `InvalidInput`
/// naming what the path is when it is no regular file, or `FileTooLarge` naming its
/// size and the bound.
pub fn read_bounded(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    Ok(benchboot_input::read(
        path,
        "a plan file",
        MAX_PLAN_FILE_BYTES,
    )?)
}

/// UTF-8 byte-order mark; Notepad writes it, TOML does not need it.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The text of plan file `file` read as `bytes`: UTF-8, a leading UTF-8 byte-order
/// mark dropped.
///
/// # Errors
/// [`NotUtf8`]: UTF-16 (by its byte-order mark, or by the zero bytes ASCII text has
/// in UTF-16), or the first byte that is not UTF-8 with its offset and line.
pub fn decode_text(file: &str, bytes: &[u8]) -> Result<String, NotUtf8> {
    let body = bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes);
    let utf16 = |how: &str| NotUtf8 {
        file: file.to_owned(),
        detail: format!("looks like UTF-16 ({how})"),
    };
    match body {
        [0xFF, 0xFE, ..] => return Err(utf16("little-endian, with a byte-order mark")),
        [0xFE, 0xFF, ..] => return Err(utf16("big-endian, with a byte-order mark")),
        _ => {}
    }
    // ASCII in UTF-16 without a mark: every other byte of the first ones is zero.
    let head = &body[..body.len().min(64)];
    let zeros_at =
        |parity: usize| head.len() >= 2 && head.iter().skip(parity).step_by(2).all(|&b| b == 0);
    if zeros_at(1) {
        return Err(utf16("little-endian, without a byte-order mark"));
    }
    if zeros_at(0) {
        return Err(utf16("big-endian, without a byte-order mark"));
    }
    match std::str::from_utf8(body) {
        Ok(t) => Ok(t.to_owned()),
        Err(e) => {
            let at = e.valid_up_to();
            let offset = at + (bytes.len() - body.len());
            let line = line_of(std::str::from_utf8(&body[..at]).unwrap_or_default(), at);
            Err(NotUtf8 {
                file: file.to_owned(),
                detail: format!(
                    "byte 0x{:02X} at offset {offset}, line {line}: cp1252 or another 8-bit \
                     encoding?",
                    body[at]
                ),
            })
        }
    }
}

impl PlanFile {
    /// Parses one plan file, strictly: unknown keys, wrong types and impossible values
    /// (zero block size, a name with `/`) are errors.
    ///
    /// # Errors
    /// [`PlanFileError`] with `file` = `name`, the line and the dotted key.
    pub fn parse(name: &str, text: &str) -> Result<PlanFile, PlanFileError> {
        let de = toml::Deserializer::new(text);
        let parsed: Result<PlanFile, serde_path_to_error::Error<toml::de::Error>> =
            serde_path_to_error::deserialize(de);
        parsed.map_err(|e| {
            // toml's `Spanned` shows up in the path as a private field: not a key.
            let key = e
                .path()
                .to_string()
                .replace(".$__serde_spanned_private_value", "");
            let inner = e.into_inner();
            let span = inner.span();
            // The parser's own errors (a number past 64 bits) carry a place, no path.
            let key = if key == "." {
                span.as_ref()
                    .and_then(|s| crate::place::key_at(text, s.start))
                    .unwrap_or_else(|| WHOLE_FILE.into())
            } else {
                key
            };
            let mut message = inner.message().trim().to_owned();
            if message.is_empty() {
                // toml says nothing for a control character in a comment.
                let at = span
                    .as_ref()
                    .and_then(|s| text.get(s.start..)?.chars().next());
                message = match at {
                    Some(c) if c.is_control() => format!(
                        "character U+{:04X} (a control character) is not allowed in a TOML \
                         file, comments included: delete it, or save the file again as plain \
                         text",
                        u32::from(c)
                    ),
                    _ => "not TOML here: check this line against the plan example in docs/plans.md"
                        .into(),
                };
            }
            PlanFileError {
                file: name.to_owned(),
                line: span.map(|s| line_of(text, s.start)),
                key,
                message,
            }
        })
    }

    /// This file over `parent`: every key this file names wins; lists replace lists.
    pub fn over(self, parent: PlanFile) -> PlanFile {
        PlanFile {
            extends: self.extends.or(parent.extends),
            name: self.name,
            version: self.version,
            description: self.description.or(parent.description),
            storage: merge_opt(self.storage, parent.storage, StorageSection::over),
            network: merge_opt(self.network, parent.network, NetworkSection::over),
            memory: merge_opt(self.memory, parent.memory, MemorySection::over),
            card_check: merge_opt(self.card_check, parent.card_check, CardCheckSection::over),
            command: self.command.or(parent.command),
            energy: merge_opt(self.energy, parent.energy, EnergySection::over),
        }
    }
}

fn merge_opt<T>(child: Option<T>, parent: Option<T>, f: fn(T, T) -> T) -> Option<T> {
    match (child, parent) {
        (Some(c), Some(p)) => Some(f(c, p)),
        (c, p) => c.or(p),
    }
}

/// `child.field.or(parent.field)` for every named field.
macro_rules! or_fields {
    ($c:ident, $p:ident; $($f:ident),* $(,)?) => {
        $( $c.$f = $c.$f.or($p.$f); )*
    };
}

impl StorageSection {
    fn over(mut self, p: StorageSection) -> StorageSection {
        or_fields!(self, p; enabled, card, block_sizes, modes, byte_cap, time_cap,
            repetitions, device_wait, governor, verify, disk);
        self.device_reads = merge_opt(self.device_reads, p.device_reads, |mut c, p| {
            or_fields!(c, p; enabled, chunk, cached, buffered);
            c
        });
        self.random = merge_opt(self.random, p.random, |mut c, p| {
            or_fields!(c, p; enabled, targets, block_size, region, duration, queue_depths);
            c
        });
        self
    }
}

impl EnergySection {
    fn over(mut self, p: EnergySection) -> EnergySection {
        or_fields!(self, p; idle, sync, sync_slot, sensor);
        self
    }
}

impl CardCheckSection {
    fn over(mut self, p: CardCheckSection) -> CardCheckSection {
        or_fields!(self, p; enabled, resolution, cache_flush, time_limit, full);
        self
    }
}

impl MemorySection {
    fn over(mut self, p: MemorySection) -> MemorySection {
        or_fields!(self, p; enabled, sample, samples, latency_max, latency_reads,
            latency_repeats, huge_pages, per_core);
        self
    }
}

impl NetworkSection {
    fn over(mut self, p: NetworkSection) -> NetworkSection {
        or_fields!(self, p; enabled, duration, interval, omit, streams, latency_samples,
            http, peer_wait, udp_bitrate, udp_datagram, wired);
        self.wifi = merge_opt(self.wifi, p.wifi, |mut c, p| {
            or_fields!(c, p; enabled, role, country, channels, security, ssid, passphrase,
                peer, connect_wait, warm_up);
            c
        });
        self
    }
}

#[cfg(test)]
mod tests;
