//! `benchboot power`: record a power trace beside a run, import one, list the meters.
pub mod meter;

pub use meter::Meter;
pub mod meters;
