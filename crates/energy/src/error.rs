//! Why a power trace could not be aligned: below [`crate::align`] and the checked
//! series it builds on, both of which return it.

/// Why a trace could not be aligned.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AlignError {
    #[error("power trace: {0}")]
    Trace(String),
    #[error("sync pattern `{pattern}`: {why}")]
    BadMark { pattern: String, why: String },
    #[error("sync pattern `{pattern}` not found in the power trace: {why}")]
    SyncNotFound { pattern: String, why: String },
    #[error("console stamps: {0}")]
    Console(String),
    #[error("{0}")]
    Nothing(String),
}
