//! What a benchboot card holds, as both the xtask (which builds it) and the host tool
//! (`benchboot plan check`, which explains it) need it: the card's partition
//! [`layout`] and the [`plans`] an image carries, made from a board file and a plan file.
//!
//! Pure: no I/O but reading a plan file named on a command line
//! ([`plans::PlanText::from_arg`]).

#![forbid(unsafe_code)]

pub mod layout;
pub mod plans;
