//! The results document: one per run, written by PID 1, read by the host tool.
//!
//! Only this crate defines the format. Figures are raw bytes and nanoseconds; units
//! (MiB/s) are derived only when rendering ([`mib_per_s`]). Readers refuse a major
//! version they do not know ([`RunResults::from_json`]).

use benchboot_plan::{Filesystem, Plan};
use serde::{Deserialize, Serialize};

pub mod summary;

pub use summary::{mib_per_s, Summary};

/// Major version: bumped on any change an old reader would misread.
pub const SCHEMA_MAJOR: u32 = 1;
/// Minor version: bumped when fields are added that old readers may ignore.
pub const SCHEMA_MINOR: u32 = 0;

/// Why a results document could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("results: not JSON: {0}")]
    Json(String),
    #[error("results: no `schema_version.major` field: this is not a benchboot results document")]
    NoVersion,
    #[error(
        "results: schema version {found}.x is not supported by this benchboot (it reads {SCHEMA_MAJOR}.x): \
         update benchboot on the host to match the image"
    )]
    UnsupportedVersion { found: u64 },
    #[error("results: schema {SCHEMA_MAJOR}.x document does not match: {0}")]
    Shape(String),
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
    pub storage: Vec<StorageMeasurement>,
    /// Failures and warnings of steps, in order. A failed step never stops the run.
    pub events: Vec<Event>,
    /// True once every step of the plan has been attempted.
    pub complete: bool,
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
}

/// The user-space processes alive at one moment (kernel threads are counted only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Census {
    /// Which moment, e.g. `before-storage`.
    pub at: String,
    pub user_processes: Vec<Process>,
    pub kernel_threads: u32,
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

/// How the I/O was done, and so what the timed region contains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoMode {
    /// Buffered I/O. Write: `write(2)` loop then `fsync(2)`, both timed. Read: the page
    /// cache is dropped (`sync` + `drop_caches=3`) before the timed `read(2)` loop.
    /// Comparable to the seeds' `dd` + `sync`.
    Sync,
}

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
    pub mode: IoMode,
    /// 0-based.
    pub repetition: u32,
    /// Bytes moved inside the timed region.
    pub bytes: u64,
    /// Length of the timed region (CLOCK_MONOTONIC), ns.
    pub nanos: u64,
    pub stopped_by: StopReason,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
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

impl RunResults {
    /// An empty document for a run of `plan`.
    pub fn new(run_id: String, plan: Plan, system: SystemInfo) -> RunResults {
        RunResults {
            schema_version: SchemaVersion::CURRENT,
            run_id,
            board: plan.board.clone(),
            emulated: plan.emulated,
            system,
            plan,
            census: Vec::new(),
            storage: Vec::new(),
            events: Vec::new(),
            complete: false,
        }
    }

    /// Reads a document, checking the schema's major version before anything else.
    ///
    /// # Errors
    /// [`ResultsError::UnsupportedVersion`] for another major version,
    /// [`ResultsError::NoVersion`] when the field is missing, else
    /// [`ResultsError::Json`]/[`ResultsError::Shape`].
    pub fn from_json(text: &str) -> Result<RunResults, ResultsError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ResultsError::Json(e.to_string()))?;
        let major = value
            .get("schema_version")
            .and_then(|v| v.get("major"))
            .and_then(|v| v.as_u64())
            .ok_or(ResultsError::NoVersion)?;
        if major != u64::from(SCHEMA_MAJOR) {
            return Err(ResultsError::UnsupportedVersion { found: major });
        }
        serde_json::from_value(value).map_err(|e| ResultsError::Shape(e.to_string()))
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
}

#[cfg(test)]
mod tests;
