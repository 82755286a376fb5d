//! `benchboot power`: record a power trace beside a run, import one, list the meters.
pub mod cli;
pub mod import;
pub mod meter;
pub mod position;
pub mod record;
pub mod trace_file;

pub use cli::{run, PowerCommand};
pub use meter::Meter;
pub mod meters;
