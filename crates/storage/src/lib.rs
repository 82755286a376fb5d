//! The storage test engine, shared by PID 1 (each step in a forked worker) and the host
//! tool (`benchboot storage --path DIR`, in process), so both measure with the same code.
//!
//! - [`engine`]: the timed write and read passes, plain logic over a [`engine::Clock`] and
//!   `embedded_io` sinks/sources (unit-tested with a mock clock), the verification
//!   pattern and the random offsets.
//! - [`sweep`]: the plan's steps over real files and devices (sync/direct pass, device
//!   reads, random I/O, verification), page-cache control behind a trait.
//! - [`os`]: the few syscalls those need (page cache, `O_DIRECT`, `statfs`), all through
//!   rustix's safe API; [`AlignedBuf`] is an `O_DIRECT` buffer without `unsafe`.
//! - [`system`]: what the running kernel says about the machine under test.
//!
//! Plain std and rustix: no `unsafe` (`forbid`), no libc (but in one test, to check
//! rustix's flags against it).

#![forbid(unsafe_code)]

#[cfg(unix)]
mod bounce;
pub mod engine;
pub mod os;
pub mod sweep;
pub mod system;

pub use benchboot_sector::AlignedBuf;
#[cfg(unix)]
pub use bounce::Bounce;
