//! `benchboot power`: record a power trace beside a run, import one, list the meters,
//! show what a trace says about a run's steps ([`energy`], [`show`]).
pub mod cli;
pub mod energy;
pub mod import;
pub mod meter;
pub mod position;
pub mod record;
pub mod show;
pub mod trace_file;

pub use cli::{run, PowerCommand};
pub use meter::Meter;
pub mod meters;
