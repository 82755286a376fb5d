//! PID 1's console protocol: what a board farm (LAVA), the QEMU tests and a person with
//! a serial cable read off the console, with no shell and no network.
//!
//! Every line starts with [`PREFIX`]. In the order a run prints them:
//!
//! | line (after `benchboot: `) | when |
//! |---|---|
//! | `start run=<id> board=<name>` | once, first |
//! | `sync start t_ns=<n> slot_ns=<n> code=<bits>`, `idle <phase> begin\|end t_ns=<n>` | the energy marks' start pattern and idle phases, when the plan has them (`benchboot_energy::marks`) |
//! | `mark begin\|end <step> t_ns=<n>` | at each step window's edges, with the energy marks on |
//! | `case=<id> value=<number> units=<unit>` | each figure, as it is measured ([`figures`]); an emulated run prints none of memory latency or the CPU clock (QEMU has neither caches nor a clock of its own) |
//! | `sync end ...` | the end pattern, after the last network test |
//! | `figures end run=<id> count=<n>` | after the last figure (network included) |
//! | `document begin run=<id> ...`, `document <i>/<n> <base64> <crc32>`, `document end run=<id>` | the whole results document ([`document`]) |
//! | `verdicts begin run=<id>` | then the verdicts of the whole run ([`verdicts`]) |
//! | `verdict=<id> result=pass\|fail\|skip [why=<text>]` | one per verdict; under QEMU the A1 verdicts are `skip` with `why=EMULATED, ...` |
//! | `verdicts end run=<id> pass=<n> fail=<n> skip=<n>` | last: a farm stops reading here |
//! | `ready ...` | results served (or on the card only) |
//!
//! Human progress lines come between them; they never start with `case=`, `verdict=`
//! or `document `. A figure line has no result (LAVA stores a monitor match without a
//! `result` group as a number with units, [`lava`]); what passes or fails is a verdict,
//! printed after the figures so a second LAVA monitor reads them.
//!
//! The figures and verdicts are pure functions of the results document: the host
//! checks what a farm stored against the document ([`lava::check`]).

#![forbid(unsafe_code)]

pub mod document;
pub mod figures;
pub mod lava;
pub mod lines;
#[cfg(feature = "log-file")]
pub mod log_file;
pub mod stdio;
pub mod verdicts;

pub use figures::Figure;
pub use verdicts::{Outcome, Verdict};

/// Prefix of every line PID 1 prints.
pub const PREFIX: &str = "benchboot:";

/// Longest case id on the console, bytes: LAVA's test case name is at most 100
/// characters (lava_results_app `TestCase.name`, `max_length=100`).
pub const MAX_CASE_ID_BYTES: usize = 100;
