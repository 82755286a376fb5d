//! What runs on the board: the PID 1 init ([`init`]) and the benchmark engines.
//!
//! Engines ([`storage`]) are plain Rust over small traits (a clock, an `embedded_io`
//! sink/source) and are unit-tested on the host. Syscalls live in [`sys`] (the only
//! module with `unsafe`) and in the thin file wrappers of [`storage::SyncFile`].

pub mod blkid;
pub mod census;
pub mod console;
pub mod device;
pub mod faults;
pub mod gadget;
pub mod health;
pub mod http;
pub mod init;
pub mod interrupts;
pub mod log;
pub mod mailbox;
pub mod netlink;
pub mod network;
pub mod steps;
pub mod storage;
pub mod sweep;
pub mod sys;
pub mod watchdog;
