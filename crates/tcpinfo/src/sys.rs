//! The crate's one `unsafe` call, on its own: `getsockopt(IPPROTO_TCP, TCP_INFO)`.
//!
//! rustix 1.1, socket2 0.6 and nix 0.29/0.31 have no getter for `TCP_INFO`, so it is
//! read with `libc::getsockopt` into a byte buffer this module owns; the fields are
//! picked out of the bytes safely ([`crate::decode`]).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// `getsockopt(fd, IPPROTO_TCP, TCP_INFO, buf, &len)` (tcp(7)): the kernel copies
/// `min(len, sizeof(struct tcp_info))` bytes of the socket's `struct tcp_info`
/// (net/ipv4/tcp.c, do_tcp_getsockopt) and says how many. Returns that count.
///
/// # Errors
/// The errno of getsockopt(2): `EOPNOTSUPP`/`ENOPROTOOPT` (not a TCP socket), `EBADF`.
pub(crate) fn tcp_info(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    let mut len = libc::socklen_t::try_from(buf.len()).unwrap_or(libc::socklen_t::MAX);
    // SAFETY: the pointer and `len` describe `buf`, owned by the caller and alive for the
    // call; the kernel writes at most `len` bytes into it and stores the count in `len`.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(usize::try_from(len).unwrap_or(0).min(buf.len()))
}
