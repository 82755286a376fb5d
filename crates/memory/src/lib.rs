//! The memory engine, shared by PID 1 (in a forked worker) and the host
//! (`benchboot memory`): the same code measures a board and the machine it is compared
//! with.
//!
//! - [`kernels`]: copy, fill and read loops per CPU (libc's memcpy/memset; ARM LDM/STM,
//!   VFP VLDM/VSTM, NEON VLD1/VST1; AArch64 LDP/STP, LD1/ST1, STNP; x86-64 REP MOVSB,
//!   SSE2 streaming stores), each chosen by what the CPU reports at run time;
//! - [`timing`]: a sample repeats a kernel, doubling the count, until it lasts the plan's
//!   sample time (tinymembench's `bandwidth_bench_helper`); every sample kept;
//! - [`latency`]: tinymembench's dependent random byte reads (an LCG fed by each loaded
//!   byte), single and dual, minus the same loops over 2 bytes (the L1 hit, the loop);
//! - [`mhz`]: the CPU clock from two dependent-add loops (wtarreau/mhz's method);
//! - [`sizing`]: buffer sizes from the last-level cache and MemTotal;
//! - [`cpu`]: what `/proc/cpuinfo`, sysfs and AT_HWCAP say about the CPU;
//! - [`run`]: the whole step, pinned per core and on all cores at once;
//! - `sys` (Linux): `madvise(2)` behind a safe wrapper.
//!
//! Raw bytes and ns go into [`benchboot_results::memory`]; units are derived there.
//!
//! `unsafe` is denied but in three modules, which allow it on their `mod` line and say
//! why each block holds: [`kernels`] (the asm loops), [`mhz`] (the add loops) and `sys`.
#![deny(unsafe_code)]

pub mod cpu;
#[allow(unsafe_code)]
pub mod kernels;
pub mod latency;
#[allow(unsafe_code)]
pub mod mhz;
pub mod run;
pub mod sizing;
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod sys;
pub mod timing;

pub use run::{run, Outcome};

/// The one clock of the engine: CLOCK_MONOTONIC, ns (not CLOCK_BOOTTIME: suspend does
/// not happen here, and MONOTONIC is vDSO-fast on every kernel here).
pub fn now_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}
