//! The results document: one per run, written by PID 1, read by the host tool.
//!
//! Only this crate defines the format. Figures are raw bytes and nanoseconds; units
//! (MiB/s) are derived only when rendering ([`mib_per_s`]). Readers refuse a major
//! version they do not know ([`RunResults::from_json`]).
//!
//! [`figures`] is the one figure model: every number with a unit a run holds, with its
//! case id and context ([`figures::figures`]). PID 1's console lines and LAVA's ids, the
//! host's `compare` and the report's tables, JSON, CSV and plots read it, so a new
//! results field is its type here, its figure there, and its rendering in each output
//! (ARCHITECTURE.md, "Recipe: add a results field").

#![forbid(unsafe_code)]

use benchboot_plan::{Filesystem, Mode, Plan, PlanFileError};
use serde::{Deserialize, Serialize};

pub mod a1;
pub mod budget;
pub mod command;
pub mod counters;
pub mod energy;
pub mod figures;
pub mod health;
pub mod isolation;
pub mod memory;
pub mod modalias;
pub mod name;
pub mod network;
pub mod summary;
pub mod text;
pub mod wifi;

pub use a1::{a1_verdict, A1Outcome, A1Verdict, A1_EMULATED};
pub use command::{CommandHealth, CommandMeasurement, CommandRun};
pub use energy::{BootStages, EnergyMarks};
pub use health::{Condition, Health, HealthScope, Reading, StepHealth, Throttled};
pub use isolation::{InterruptDelta, Isolation, KernelModule};
pub use memory::{ClockCheck, MemoryResults};
pub use modalias::{Modalias, ModaliasLoad, NoDriver};
pub use network::NetworkResults;
pub use summary::{iops, mb_per_s, mib_per_s, Summary};

/// Major version: bumped on any change an old reader would misread.
pub const SCHEMA_MAJOR: u32 = 1;
/// Minor version: bumped when fields are added that old readers may ignore.
pub const SCHEMA_MINOR: u32 = 14;

/// Largest results document any reader takes, bytes (64 MiB): one of a long hardware
/// plan is a few MiB; PID 1's console carries no more either
/// (`benchboot_console::document::MAX_JSON_BYTES`). A card file, a device or a pipe
/// giving more is damaged or hostile, and is never read whole.
pub const MAX_DOCUMENT_BYTES: u64 = 64 << 20;

/// Everything `r` gives, up to [`MAX_DOCUMENT_BYTES`].
///
/// # Errors
/// `r`'s own, or [`std::io::ErrorKind::FileTooLarge`] ("more than a results document
/// has (64 MiB at most)") once it gives more, after reading one byte past the bound.
pub fn read_document(r: impl std::io::Read) -> std::io::Result<Vec<u8>> {
    let mut data = Vec::new();
    std::io::Read::read_to_end(&mut r.take(MAX_DOCUMENT_BYTES + 1), &mut data)?;
    if data.len() as u64 > MAX_DOCUMENT_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!(
                "more than a results document has ({} MiB at most)",
                MAX_DOCUMENT_BYTES >> 20
            ),
        ));
    }
    Ok(data)
}

/// The results document saved at `path`, a file a person names (`report FILE`, a
/// mounted card's `results.json`), through the one reader of named files
/// (`benchboot_input::read`): a regular file of at most [`MAX_DOCUMENT_BYTES`]; a FIFO,
/// a device or a folder is refused unread.
///
/// # Errors
/// As `benchboot_input::read`: not found, not a regular file, larger than the bound,
/// a read error; each message names the file.
pub fn read_document_file(path: &std::path::Path) -> Result<Vec<u8>, benchboot_input::InputError> {
    benchboot_input::read(path, "a results document", MAX_DOCUMENT_BYTES)
}

/// serde_json's message without its ` at line L column C` tail (said apart).
fn serde_json_message(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

/// serde's words for a number's Rust type in plain words: `expected u32` is `expected
/// a whole number from 0 to 4294967295`.
fn plain_serde(msg: &str) -> String {
    const TYPES: &[(&str, &str)] = &[
        ("expected u8", "expected a whole number from 0 to 255"),
        ("expected u16", "expected a whole number from 0 to 65535"),
        (
            "expected u32",
            "expected a whole number from 0 to 4294967295",
        ),
        (
            "expected u64",
            "expected a whole number from 0 to 18446744073709551615",
        ),
        (
            "expected i32",
            "expected a whole number from -2147483648 to 2147483647",
        ),
        ("expected i64", "expected a whole number"),
        ("expected f64", "expected a number"),
        ("expected f32", "expected a number"),
    ];
    let mut out = msg.to_owned();
    for (rust, words) in TYPES {
        if let Some(i) = out.find(rust) {
            let end = i + rust.len();
            // `expected u32` only, not a longer word that starts the same.
            if !out[end..].starts_with(|c: char| c.is_ascii_alphanumeric()) {
                out.replace_range(i..end, words);
            }
        }
    }
    out
}

/// Why a results document could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("results: not JSON: {0}")]
    Json(String),
    #[error("results: no `schema_version.major` field: this is not a benchboot results document")]
    NoVersion,
    #[error("results: `schema_version.major` is {0}, not a whole number: the document is damaged")]
    BadVersion(String),
    #[error(
        "results: schema version {found}.x is not supported by this benchboot (it reads {SCHEMA_MAJOR}.x): \
         update benchboot on the host to match the image"
    )]
    UnsupportedVersion { found: u64 },
    #[error("results: schema {SCHEMA_MAJOR}.x document does not match: {0}")]
    Shape(String),
    /// Past the value budget ([`budget::MAX_DOCUMENT_VALUES`]), refused before anything
    /// was built from it.
    #[error("results: {0}")]
    TooManyValues(#[from] budget::TooManyValues),
    /// A value the board cannot have written ([`RunResults::check_values`]).
    #[error("results: {field}: {why}; the document is damaged or was not written by benchboot")]
    Value { field: String, why: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaVersion {
    pub major: u32,
    pub minor: u32,
}

impl SchemaVersion {
    pub const CURRENT: SchemaVersion = SchemaVersion {
        major: SCHEMA_MAJOR,
        minor: SCHEMA_MINOR,
    };
}

/// One run on one board.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResults {
    pub schema_version: SchemaVersion,
    /// Unique per boot: board name, kernel boot id.
    pub run_id: String,
    pub board: String,
    /// Copied from the plan: true means QEMU, never a hardware result.
    pub emulated: bool,
    pub system: SystemInfo,
    pub plan: Plan,
    /// Snapshots of every user-space process, taken between steps.
    pub census: Vec<Census>,
    /// Whether only PID 1 and its own workers were in user space at every census
    /// ([`RunResults::push_census`]; `None`: no census taken, or a document before 1.4:
    /// see [`RunResults::isolation`]).
    #[serde(default)]
    pub isolated: Option<bool>,
    pub storage: Vec<StorageMeasurement>,
    /// `hdparm -T`/`-t`-style reads per disk.
    #[serde(default)]
    pub device_reads: Vec<DeviceRead>,
    /// Random-I/O runs (IOPS).
    #[serde(default)]
    pub random: Vec<RandomIo>,
    /// Pattern verification per target.
    #[serde(default)]
    pub verify: Vec<Verify>,
    /// Identity of every disk measured.
    #[serde(default)]
    pub devices: Vec<DeviceIdentity>,
    /// Gadget links and network tests.
    #[serde(default)]
    pub network: NetworkResults,
    /// The memory step: bandwidth and latency ([`memory`], schema 1.9; `None` when the
    /// plan has no memory step or in older documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryResults>,
    /// The CPU clock measured by a calibrated loop before and after the memory step and
    /// before the storage and network steps, beside cpufreq's and the firmware's figure
    /// (schema 1.9).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clock_checks: Vec<ClockCheck>,
    /// The full-card check, when the plan has one and it ran (schema 1.10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_check: Option<CardCheck>,
    /// Board health (clock, temperature, throttle flags) before and after every step
    /// (schema 1.3; empty in older documents).
    #[serde(default)]
    pub health: Vec<StepHealth>,
    /// Benchmark workers that crashed, panicked, exited with an error status or ran
    /// past their time limit (schema 1.5). Each also has an error [`Event`].
    #[serde(default)]
    pub faults: Vec<WorkerFault>,
    /// The plan's own workloads (`commands`), in the order they ran, with what they
    /// measured (schema 1.6; absent when the plan has none). A failed run also has a
    /// [`WorkerFault`] and an error [`Event`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandRun>,
    /// Drivers PID 1 loaded by modalias and devices with no driver in the image
    /// ([`modalias`], schema 1.11; empty in older documents).
    #[serde(default, skip_serializing_if = "Modalias::is_empty")]
    pub modalias: Modalias,
    /// Failures and warnings of steps, in order. A failed step never stops the run.
    pub events: Vec<Event>,
    /// True once every step of the plan has been attempted.
    pub complete: bool,
    /// The plan file on the card that PID 1 refused (schema 1.6): nothing was measured,
    /// and the error says which file, line and key to fix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_error: Option<PlanFileError>,
    /// Where PID 1 found the boot card and how (schema 1.11; `None` in older documents
    /// and host runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_card: Option<BootCard>,
    /// Per health fact, whether this board gave it (and from which source) or not (and
    /// why), over every snapshot of the run ([`health::health_facts`]; empty in older
    /// documents: a reader derives it from [`RunResults::health`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub health_facts: Vec<health::FactState>,
    /// The idle baselines, sync patterns and on-board power samples a power trace is
    /// tied to the steps by ([`energy`], schema 1.13; empty in older documents).
    #[serde(default, skip_serializing_if = "EnergyMarks::is_empty")]
    pub energy: EnergyMarks,
    /// The boot's stages ([`energy::BootStages`], schema 1.13; "not recorded" in older
    /// documents).
    #[serde(default)]
    pub boot: BootStages,
}

/// The boot card as PID 1 found it: by the MBR disk signature the image wrote
/// (benchboot_plan::boot_disk), never by a kernel name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootCard {
    /// The kernel name the image's paths were built on (board file `storage.disk`,
    /// e.g. `mmcblk0`).
    pub nominal: String,
    /// The whole disk carrying the image's signature (e.g. `mmcblk1`); `None`: none
    /// did, the plan kept `nominal`.
    pub found: Option<String>,
    /// The signature looked for, as `fdisk` prints it (`0x1a2b3c4d`); `None`: the image
    /// records none.
    pub signature: Option<String>,
    /// How it was found, or why not, in words.
    pub how: String,
}

/// What the board said about itself (`uname`, `/proc`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SystemInfo {
    /// `uname -r`.
    pub kernel_release: String,
    /// `uname -m`, e.g. `armv6l`.
    pub machine: String,
    /// `MemTotal` of /proc/meminfo, bytes.
    pub mem_total_bytes: u64,
    /// CLOCK_BOOTTIME when PID 1 started, ns.
    pub init_started_ns: u64,
    /// CLOCK_BOOTTIME when the results were last written, ns.
    pub written_ns: u64,
    /// The cpufreq governor in force while measuring (`None`: no cpufreq).
    #[serde(default)]
    pub governor: Option<String>,
    /// `/proc/cmdline` (schema 1.4).
    #[serde(default)]
    pub kernel_cmdline: Reading<String>,
    /// `/proc/modules` once PID 1 has loaded the plan's modules (schema 1.4).
    #[serde(default)]
    pub modules: Reading<Vec<KernelModule>>,
    /// The hardware watchdog's timeout as the driver took it, s, or why none is armed
    /// (schema 1.5).
    #[serde(default)]
    pub watchdog_timeout_s: Reading<u32>,
    /// Where PID 1 kept the previous boot's results document on the results partition
    /// before this run started writing its own (e.g. `runs/<run id>.json`; schema 1.5).
    #[serde(default)]
    pub previous_run: Option<String>,
}

/// The processes alive at one moment: user space listed, kernel threads counted and
/// named, and the verdict ([`isolation`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Census {
    /// Which moment, e.g. `before-storage`.
    pub at: String,
    pub user_processes: Vec<Process>,
    pub kernel_threads: u32,
    /// Every kernel thread's `comm`, in pid order (schema 1.4).
    #[serde(default)]
    pub kernel_thread_names: Vec<String>,
    /// True when only PID 1 and its own workers were in user space
    /// ([`Census::foreign_among`]); `None` in documents before 1.4
    /// ([`Census::is_isolated`] works it out).
    #[serde(default)]
    pub isolated: Option<bool>,
    /// The user-space processes that were neither PID 1 nor its workers.
    #[serde(default)]
    pub foreign: Vec<Process>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Process {
    pub pid: u32,
    pub ppid: u32,
    /// `/proc/<pid>/comm`.
    pub comm: String,
}

impl Census {
    /// True when PID 1 is the only user-space process.
    pub fn only_pid1(&self) -> bool {
        self.user_processes.len() == 1 && self.user_processes[0].pid == 1
    }
}

/// Which way the bytes went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Write,
    Read,
}

/// How the I/O was done ([`Mode`] of the plan crate: one definition for plan and results).
pub type IoMode = Mode;

/// What ended a timed loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StopReason {
    /// The plan's byte cap was reached.
    Bytes,
    /// The plan's time cap was reached first.
    Time,
    /// (Read) the end of the file written before.
    Eof,
}

/// One timed pass over one target at one block size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StorageMeasurement {
    pub target: String,
    pub filesystem: Filesystem,
    pub block_size: u64,
    pub direction: Direction,
    /// The mode that ran.
    pub mode: IoMode,
    /// The mode the plan asked for; differs from `mode` only for a fallback.
    #[serde(default = "default_mode")]
    pub requested_mode: IoMode,
    /// Why `mode` differs from `requested_mode`, e.g. a block below the logical block size.
    #[serde(default)]
    pub note: Option<String>,
    /// 0-based.
    pub repetition: u32,
    /// Bytes moved inside the timed region.
    pub bytes: u64,
    /// Length of the timed region (CLOCK_MONOTONIC), ns.
    pub nanos: u64,
    pub stopped_by: StopReason,
    /// `CLOCK_BOOTTIME` when this pass (the write, or the read) began, ns, as the storage
    /// worker read it just before the timed region: energy is split by direction on it
    /// (schema 1.13; `None` in older documents and host runs' copies without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub begin_ns: Option<u64>,
}

fn default_mode() -> IoMode {
    Mode::Sync
}

/// `hdparm -T` (cached) or `-t` (buffered device) reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceReadKind {
    /// The same chunk read again and again from the page cache: memory and bus speed.
    Cached,
    /// Sequential reads from the device after dropping the caches.
    Buffered,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceRead {
    pub device: String,
    pub kind: DeviceReadKind,
    pub bytes: u64,
    pub nanos: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RandomOp {
    Read,
    Write,
}

/// One random-I/O run: `ios` completed operations of `block_size` bytes in `nanos`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RandomIo {
    pub target: String,
    pub op: RandomOp,
    pub block_size: u64,
    pub queue_depth: u32,
    pub region_bytes: u64,
    pub ios: u64,
    pub nanos: u64,
}

/// A pattern written and read back over `bytes` of a target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verify {
    pub target: String,
    pub bytes: u64,
    /// Byte offset of the first byte that read back wrong; `None` when all matched.
    pub first_mismatch: Option<u64>,
}

/// What the kernel says about a disk. Serial numbers are never stored in clear.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct DeviceIdentity {
    /// Kernel name, e.g. `mmcblk0`.
    pub name: String,
    /// `device/model` (SCSI/USB) or `device/name` (SD/MMC CID product name).
    pub model: Option<String>,
    pub size_bytes: u64,
    pub logical_block_size: u64,
    pub physical_block_size: u64,
    /// SD/MMC: CID manufacturer id (`device/manfid`).
    pub manfid: Option<String>,
    /// SD/MMC: manufacturing date (`device/date`).
    pub date: Option<String>,
    /// SHA-256 of the serial number (`device/serial`), hex.
    pub serial_sha256: Option<String>,
    /// SD/MMC bus clock, Hz (debugfs `mmcN/ios`).
    pub bus_clock_hz: Option<u64>,
    /// SD/MMC: the card's own registers (CID with its serial zeroed, CSD, SCR, SSR, OCR)
    /// and the host's `ios`, raw and decoded (crates/sdcard; schema 1.10). `None` for
    /// other disks and older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card: Option<benchboot_sdcard::Card>,
    /// The drivers bound on the way from the disk to the root of `/sys/devices`, nearest
    /// first, each once (`/sys/block/<name>/device/driver`, then each parent device's
    /// `driver` link), as seen on QEMU virt: `["sd", "uas", "usb", "xhci_hcd",
    /// "pci-host-generic"]` for a UAS disk behind xHCI on PCIe, `["sd", "usb-storage",
    /// ...]` for a bulk-only one, `["virtio_blk", "virtio-mmio"]` for a virtio disk; an
    /// SD card's starts with `mmcblk` and its host's driver. Schema 1.11; empty in older
    /// documents.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drivers: Vec<String>,
}

/// The fake-capacity probe PID 1 ran over `device`'s unpartitioned space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardCheck {
    /// The whole disk, e.g. `/dev/mmcblk0`.
    pub device: String,
    pub report: benchboot_probe::ProbeReport,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing, nothing failed (e.g. the boot card found under another name than
    /// the image was built for).
    Info,
    Warning,
    Error,
}

/// A step that failed or warned; the run went on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Step id, e.g. `mount.ext4` or `storage.ext4.bs4096`.
    pub step: String,
    pub severity: Severity,
    pub message: String,
}

/// A benchmark worker that did not end well: which step, how, after how long.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerFault {
    pub step: String,
    /// From fork to the end of the worker (or its kill), ns.
    pub elapsed_ns: u64,
    #[serde(flatten)]
    pub failure: WorkerFailure,
}

/// How a worker failed, as PID 1's supervisor saw it (`waitpid(2)` status, the pipe).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "kebab-case")]
pub enum WorkerFailure {
    /// `fork(2)`/`pipe(2)`/`waitpid(2)` failed: the worker never ran or was lost.
    Start { message: String },
    /// Killed by a signal (e.g. 11 SIGSEGV; 6 SIGABRT is an abort).
    Signal { signal: i32, name: String },
    /// The worker panicked; the panic message with its source location.
    Panic { message: String },
    /// Still running at the plan's `supervision.worker_limit_ms`: killed (SIGKILL).
    TimedOut { limit_ms: u64 },
    /// Exited with a non-zero status.
    Exit { code: i32 },
}

impl std::fmt::Display for WorkerFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Start { message } => write!(f, "worker could not be run: {message}"),
            Self::Signal { signal, name } => write!(f, "worker killed by signal {signal} ({name})"),
            Self::Panic { message } => write!(f, "worker panicked: {message}"),
            Self::TimedOut { limit_ms } => {
                write!(f, "worker still running at its {limit_ms} ms limit: killed")
            }
            Self::Exit { code } => write!(f, "worker exited with status {code}"),
        }
    }
}

impl RunResults {
    /// An empty document for a run of `plan`.
    pub fn new(run_id: String, plan: Plan, system: SystemInfo) -> RunResults {
        // A WiFi client's SSID and passphrase never reach the results.
        let plan = plan.redacted();
        RunResults {
            schema_version: SchemaVersion::CURRENT,
            run_id,
            board: plan.board.clone(),
            emulated: plan.emulated,
            system,
            plan,
            census: Vec::new(),
            isolated: None,
            storage: Vec::new(),
            device_reads: Vec::new(),
            random: Vec::new(),
            verify: Vec::new(),
            devices: Vec::new(),
            network: NetworkResults::default(),
            memory: None,
            clock_checks: Vec::new(),
            card_check: None,
            health: Vec::new(),
            faults: Vec::new(),
            commands: Vec::new(),
            modalias: Modalias::default(),
            events: Vec::new(),
            complete: false,
            plan_error: None,
            boot_card: None,
            health_facts: Vec::new(),
            energy: EnergyMarks::default(),
            boot: BootStages::default(),
        }
    }

    /// Reads a document, checking the schema's major version before anything else.
    ///
    /// # Errors
    /// [`ResultsError::UnsupportedVersion`] for another major version,
    /// [`ResultsError::NoVersion`] when the field is missing,
    /// [`ResultsError::BadVersion`] when it is not a whole number,
    /// [`ResultsError::TooManyValues`] past the value budget (checked first, before
    /// anything is built: [`budget`]), else
    /// [`ResultsError::Json`]/[`ResultsError::Shape`], then
    /// [`ResultsError::Value`] from [`RunResults::check_values`].
    ///
    /// A leading byte order mark (U+FEFF: a document saved by Windows Notepad) is
    /// skipped: JSON (RFC 8259 §8.1) lets a parser ignore one.
    pub fn from_json(text: &str) -> Result<RunResults, ResultsError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        budget::tally(text.as_bytes(), budget::MAX_DOCUMENT_VALUES)?;
        /// The version alone: every other field is skipped unbuilt (serde's
        /// `IgnoredAny`), so checking the version costs no more memory than it takes.
        #[derive(Deserialize)]
        struct Probe {
            #[serde(default)]
            schema_version: Option<serde_json::Value>,
        }
        let probe: Probe = serde_json::from_str(text).map_err(|e| match e.classify() {
            serde_json::error::Category::Data => ResultsError::NoVersion,
            _ => ResultsError::Json(budget::clip(&e.to_string(), budget::MAX_QUOTED_CHARS).into()),
        })?;
        let major = probe
            .schema_version
            .as_ref()
            .and_then(|v| v.get("major"))
            .ok_or(ResultsError::NoVersion)?;
        let major = major
            .as_u64()
            .ok_or_else(|| ResultsError::BadVersion(budget::clip(&major.to_string(), 40).into()))?;
        if major != u64::from(SCHEMA_MAJOR) {
            return Err(ResultsError::UnsupportedVersion { found: major });
        }
        // Parsed from the text, not from a `Value`, so a shape error says where: the
        // key path and the line and column, e.g. `at storage[3].bytes: invalid type:
        // string "many", expected a whole number (line 12 column 14)`.
        let mut de = serde_json::Deserializer::from_str(text);
        let results: RunResults = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let at = e.path().to_string();
            let inner = e.into_inner();
            let msg = format!(
                "at {}: {} (line {} column {})",
                budget::clip(&at, 120),
                plain_serde(&serde_json_message(&inner)),
                inner.line(),
                inner.column()
            );
            ResultsError::Shape(budget::clip(&msg, budget::MAX_QUOTED_CHARS).into())
        })?;
        results.check_values()?;
        Ok(results)
    }

    /// A note when the document is of a newer minor schema version than this reader:
    /// it was read, and the fields this benchboot does not know were left out (the minor
    /// version's promise, [`SCHEMA_MINOR`]).
    pub fn newer_schema_note(&self) -> Option<String> {
        let v = self.schema_version;
        (v.major == SCHEMA_MAJOR && v.minor > SCHEMA_MINOR).then(|| {
            format!(
                "results schema {}.{} is newer than this benchboot's {SCHEMA_MAJOR}.{SCHEMA_MINOR}: \
                 read it, leaving out the fields this version does not know (update \
                 benchboot to see them)",
                v.major, v.minor
            )
        })
    }

    /// Refuses measurements the board cannot have written, which would otherwise turn
    /// into nonsense figures (0 MiB/s presented as a result) or overflow in the
    /// reports: a block size of 0 bytes, a timed region of 0 ns that moved bytes, and
    /// random I/O whose `ios x block_size` does not fit in u64 bytes.
    ///
    /// # Errors
    /// [`ResultsError::Value`] naming the first such field, e.g. `storage[3].nanos`.
    pub fn check_values(&self) -> Result<(), ResultsError> {
        let bad = |field: String, why: String| Err(ResultsError::Value { field, why });
        let timed = |field: &str, moved: u64, unit: &str, nanos: u64| {
            if moved > 0 && nanos == 0 {
                bad(
                    format!("{field}.nanos"),
                    format!("0 ns for {moved} {unit}: a timed region cannot be empty"),
                )
            } else {
                Ok(())
            }
        };
        for (i, m) in self.storage.iter().enumerate() {
            if m.block_size == 0 {
                return bad(format!("storage[{i}].block_size"), "0 bytes".into());
            }
            timed(&format!("storage[{i}]"), m.bytes, "bytes", m.nanos)?;
        }
        for (i, d) in self.device_reads.iter().enumerate() {
            timed(&format!("device_reads[{i}]"), d.bytes, "bytes", d.nanos)?;
        }
        if let Some(m) = &self.memory {
            for (i, t) in m.bandwidth.iter().enumerate() {
                for (j, s) in t.samples.iter().enumerate() {
                    timed(
                        &format!("memory.bandwidth[{i}].samples[{j}]"),
                        s.bytes,
                        "bytes",
                        s.ns,
                    )?;
                }
            }
            for (i, t) in m.latency.iter().enumerate() {
                if t.reads == 0 {
                    return bad(
                        format!("memory.latency[{i}].reads"),
                        "0 reads per repeat".into(),
                    );
                }
                for (j, r) in t.rows.iter().enumerate() {
                    if let Some(0) = r.single_ns.iter().chain(&r.dual_ns).min() {
                        return bad(
                            format!("memory.latency[{i}].rows[{j}]"),
                            format!("0 ns for {} dependent reads", t.reads),
                        );
                    }
                }
            }
        }
        for (i, r) in self.random.iter().enumerate() {
            if r.block_size == 0 {
                return bad(format!("random[{i}].block_size"), "0 bytes".into());
            }
            if r.ios.checked_mul(r.block_size).is_none() {
                return bad(
                    format!("random[{i}].ios"),
                    format!(
                        "{} ios of {} bytes is more than 2^64 bytes",
                        r.ios, r.block_size
                    ),
                );
            }
            timed(&format!("random[{i}]"), r.ios, "ios", r.nanos)?;
        }
        for (i, t) in self.network.throughput.iter().enumerate() {
            timed(
                &format!("network.throughput[{i}]"),
                t.bytes,
                "bytes",
                t.nanos,
            )?;
        }
        Ok(())
    }

    /// Pretty JSON, as written to the results partition and served.
    pub fn to_json(&self) -> String {
        // Serialising plain data structs with string keys cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Records a failed or warned step.
    pub fn event(
        &mut self,
        step: impl Into<String>,
        severity: Severity,
        message: impl Into<String>,
    ) {
        self.events.push(Event {
            step: step.into(),
            severity,
            message: message.into(),
        });
    }

    /// Records a worker's failure: a [`WorkerFault`] and an error [`Event`] of `step`
    /// saying what happened and after how long.
    pub fn worker_fault(&mut self, step: &str, failure: WorkerFailure, elapsed_ns: u64) {
        self.event(
            step,
            Severity::Error,
            format!("{failure} after {:.3} s", elapsed_ns as f64 / 1e9),
        );
        self.faults.push(WorkerFault {
            step: step.to_owned(),
            elapsed_ns,
            failure,
        });
    }
}

#[cfg(test)]
mod tests;
