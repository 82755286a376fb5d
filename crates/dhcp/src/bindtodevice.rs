//! The crate's one `unsafe` call, on its own: `setsockopt(SO_BINDTODEVICE)`.
//!
//! rustix 1.x has no setter for `SO_BINDTODEVICE` (its `sockopt` module stops at
//! `SO_REUSEADDR`, `SO_BROADCAST`, ...), so the option is set with `libc::setsockopt`.
//! Everything else of the socket edge ([`crate::net`]) is rustix's safe API.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// `setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, name, len)` (socket(7)): the socket only
/// sees packets of interface `name`, and its packets, broadcasts included, leave through
/// it. The caller checks `name` ([`crate::net`]: 1..IFNAMSIZ bytes, no NUL).
///
/// # Errors
/// The errno of setsockopt(2): `ENODEV` (no such interface), `EPERM` (no
/// `CAP_NET_RAW`), ...
pub(crate) fn set(fd: BorrowedFd<'_>, name: &str) -> io::Result<()> {
    // SAFETY: the pointer and length describe `name`'s bytes, alive for the call; the
    // kernel copies at most IFNAMSIZ - 1 of them and adds the NUL itself
    // (net/core/sock.c, sock_setbindtodevice).
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_BINDTODEVICE,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
