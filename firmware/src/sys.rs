//! The syscall edge: thin wrappers over rustix, and libc where rustix has no safe API.
//! This is the only module with `unsafe`.
//!
//! Each wrapper names the C call it makes; see its man page for the details.

use std::ffi::CStr;
use std::io;
use std::path::Path;

use benchboot_results::WorkerFailure;
use rustix::mount::MountFlags;

/// `mount(2)`. `EBUSY` (already mounted there) counts as success, so mounts are idempotent.
pub fn mount(source: &str, target: &str, fstype: &str, flags: MountFlags) -> io::Result<()> {
    std::fs::create_dir_all(target)?;
    match rustix::mount::mount(source, target, fstype, flags, None::<&CStr>) {
        Ok(()) | Err(rustix::io::Errno::BUSY) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// `finit_module(2)` of `path` with no parameters. `EEXIST` (already loaded) is success.
pub fn load_module(path: &Path) -> io::Result<()> {
    let file = std::fs::File::open(path)?;
    match rustix::system::finit_module(&file, c"", 0) {
        Ok(()) | Err(rustix::io::Errno::EXIST) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// `sync(2)` then `3` into `/proc/sys/vm/drop_caches`: page cache, dentries and inodes
/// are dropped (Documentation/admin-guide/sysctl/vm.rst).
pub fn drop_caches() -> io::Result<()> {
    rustix::fs::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3")
}

/// `posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)` after `fdatasync`: the file's clean
/// pages leave the page cache (posix_fadvise(2)); works without root.
pub fn evict_file(file: &std::fs::File) -> io::Result<()> {
    rustix::fs::fdatasync(file)?;
    rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::DontNeed)?;
    Ok(())
}

/// `statfs(2)` magic numbers of filesystems that live in RAM (include/uapi/linux/magic.h).
pub const TMPFS_MAGIC: u64 = 0x0102_1994;
pub const RAMFS_MAGIC: u64 = 0x8584_58f6;

/// Refuses a directory whose filesystem lives in RAM: measuring it measures memory.
pub fn refuse_ram_filesystem(dir: &Path) -> Result<(), String> {
    let st = rustix::fs::statfs(dir).map_err(|e| format!("statfs {}: {e}", dir.display()))?;
    #[allow(clippy::unnecessary_cast)] // f_type's type differs between targets
    let magic = st.f_type as u64;
    if magic == TMPFS_MAGIC || magic == RAMFS_MAGIC {
        return Err(format!(
            "{} is on a RAM filesystem (statfs magic {magic:#x}): it would measure memory, not storage; \
             pick a directory on the disk to test",
            dir.display()
        ));
    }
    Ok(())
}

/// A zeroed buffer aligned to `align` bytes, for `O_DIRECT` I/O (open(2): buffers must
/// be aligned to the logical block size).
pub struct AlignedBuf {
    ptr: std::ptr::NonNull<u8>,
    layout: std::alloc::Layout,
}

impl AlignedBuf {
    /// # Panics
    /// When `align` is not a power of two or `len` is 0 (callers pass plan-validated sizes).
    pub fn new(len: usize, align: usize) -> AlignedBuf {
        let layout =
            std::alloc::Layout::from_size_align(len.max(1), align).expect("power-of-two alignment");
        // SAFETY: layout has a non-zero size.
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr =
            std::ptr::NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, layout }
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for layout.size() initialised bytes for our lifetime.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in new() with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

// SAFETY: AlignedBuf owns its allocation like a Vec<u8>.
unsafe impl Send for AlignedBuf {}

/// `O_DIRECT` for `OpenOptionsExt::custom_flags`.
pub const O_DIRECT: i32 = libc::O_DIRECT;

/// `CLOCK_BOOTTIME` in ns (includes time suspended; on a board: time since power-on of
/// the kernel).
pub fn boottime_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// `IOCTL_MBOX_PROPERTY` of the Raspberry Pi `vcio` driver: `_IOWR(100, 0, char *)`
/// (drivers/char/broadcom/vcio.c; [`crate::mailbox::mbox_property_ioctl`]).
pub const IOCTL_MBOX_PROPERTY: libc::Ioctl = libc::_IOWR::<*mut libc::c_char>(100, 0);

/// Hands a mailbox property message ([`crate::mailbox::encode`]) to the firmware:
/// `open(2)` of `dev` (`/dev/vcio`) and `ioctl(fd, IOCTL_MBOX_PROPERTY, msg)`. The driver
/// reads the total size from `msg[0]`, copies that many bytes in, and the answer back
/// over them; it sets `msg[1]` to 0x80000000 on success and fails the call (EINVAL) when
/// the firmware answered 0x80000001.
///
/// # Errors
/// `dev` missing (no vcio driver: Debian's kernels), `msg[0]` not within `msg`, or the
/// ioctl's errno.
pub fn vcio_property(dev: &Path, msg: &mut [u32]) -> io::Result<()> {
    let size = msg.first().copied().unwrap_or(0) as usize;
    if size < 12 || !size.is_multiple_of(4) || size > msg.len() * 4 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "mailbox message size {size} does not fit its {} words",
                msg.len()
            ),
        ));
    }
    let file = std::fs::File::open(dev)?;
    // SAFETY: msg is valid for reads and writes of msg[0] bytes (checked above), which is
    // all the driver copies in and out.
    let r = unsafe {
        libc::ioctl(
            std::os::fd::AsRawFd::as_raw_fd(&file),
            IOCTL_MBOX_PROPERTY,
            msg.as_mut_ptr(),
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `WDIOC_SETTIMEOUT` = `_IOWR('W', 6, int)`, `WDIOC_GETTIMEOUT` = `_IOR('W', 7, int)`
/// and `WDIOC_KEEPALIVE` = `_IOR('W', 5, int)` (include/uapi/linux/watchdog.h).
const WDIOC_SETTIMEOUT: libc::Ioctl = libc::_IOWR::<libc::c_int>(b'W' as u32, 6);
const WDIOC_GETTIMEOUT: libc::Ioctl = libc::_IOR::<libc::c_int>(b'W' as u32, 7);
const WDIOC_KEEPALIVE: libc::Ioctl = libc::_IOR::<libc::c_int>(b'W' as u32, 5);

/// `open(2)` of a watchdog device (which starts its timer) and
/// `ioctl(WDIOC_SETTIMEOUT, timeout_s)`; returns the open device and the timeout the
/// driver runs with, s. A driver that refuses the value (sunxi_wdt's maximum is 16 s:
/// EINVAL) keeps its own, read back with `WDIOC_GETTIMEOUT`; 0 when even that is
/// unknown. Once open, the device is always returned: closing it without the magic
/// close would leave the timer running unfed ("watchdog did not stop!") and reset the
/// board.
///
/// # Errors
/// Only the `open(2)`: the device missing or busy.
pub fn watchdog_open(dev: &Path, timeout_s: u32) -> io::Result<(std::fs::File, u32)> {
    let file = std::fs::OpenOptions::new().write(true).open(dev)?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
    let mut t: libc::c_int = timeout_s.min(i32::MAX as u32) as libc::c_int;
    // SAFETY: the ioctl reads and writes one int through a valid pointer.
    if unsafe { libc::ioctl(fd, WDIOC_SETTIMEOUT, &mut t as *mut libc::c_int) } < 0 {
        t = 0;
        // SAFETY: the ioctl writes one int through a valid pointer.
        if unsafe { libc::ioctl(fd, WDIOC_GETTIMEOUT, &mut t as *mut libc::c_int) } < 0 {
            t = 0;
        }
    }
    Ok((file, t.max(0) as u32))
}

/// `ioctl(WDIOC_KEEPALIVE)`: feeds the watchdog.
///
/// # Errors
/// The ioctl's errno.
pub fn watchdog_feed(file: &std::fs::File) -> io::Result<()> {
    let mut dummy: libc::c_int = 0;
    // SAFETY: the ioctl reads one int through a valid pointer.
    let r = unsafe {
        libc::ioctl(
            std::os::fd::AsRawFd::as_raw_fd(file),
            WDIOC_KEEPALIVE,
            &mut dummy as *mut libc::c_int,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Exit status a worker uses to say it panicked (its panic message is on the pipe).
/// 101 is what a Rust program exits with after a panic.
const PANIC_EXIT: i32 = 101;

/// Runs `work` in a forked child (`fork(2)`, `pipe(2)`, `poll(2)`, `waitpid(2)`) and
/// returns what it produced and how long it ran (ns of CLOCK_BOOTTIME). A crash, panic,
/// non-zero exit or a run past `limit` (the child is then killed with SIGKILL) becomes a
/// [`WorkerFailure`] here instead of taking PID 1 (and so the kernel) down. The wait
/// beats the watchdog heart ([`crate::watchdog::beat`]) at least once a second.
pub fn run_worker(
    limit: std::time::Duration,
    work: impl FnOnce() -> String,
) -> (Result<String, WorkerFailure>, u64) {
    let started = boottime_ns();
    let outcome = supervise(limit, work);
    (outcome, boottime_ns().saturating_sub(started))
}

fn supervise(
    limit: std::time::Duration,
    work: impl FnOnce() -> String,
) -> Result<String, WorkerFailure> {
    let start_failed = |e: &dyn std::fmt::Display| WorkerFailure::Start {
        message: e.to_string(),
    };
    let (read_end, write_end) = rustix::pipe::pipe().map_err(|e| start_failed(&e))?;
    // SAFETY: PID 1's main thread forks while no other thread of it holds a lock the
    // child needs (musl's malloc is fork-safe); the child runs `work`, then _exit(2).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(start_failed(&io::Error::last_os_error()));
    }
    if pid == 0 {
        drop(read_end);
        let fd = std::os::fd::AsRawFd::as_raw_fd(&write_end);
        // PID 1's hook would keep the child alive: a worker reports its panic and ends.
        std::panic::set_hook(Box::new(move |info| {
            let msg = info.to_string().replace('\n', " ");
            // SAFETY: write(2) of a valid buffer to the pipe this child owns; _exit(2).
            unsafe {
                libc::write(fd, msg.as_ptr().cast(), msg.len());
                libc::_exit(PANIC_EXIT);
            }
        }));
        let out = work();
        let mut file = std::fs::File::from(write_end);
        let ok = io::Write::write_all(&mut file, out.as_bytes()).is_ok();
        // SAFETY: _exit ends the child without running PID 1's atexit handlers.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    drop(write_end);
    let deadline = std::time::Instant::now() + limit;
    let mut out = Vec::new();
    let mut pipe = std::fs::File::from(read_end);
    let mut open = true;
    let status = loop {
        crate::watchdog::beat();
        if !open {
            let mut status = 0;
            // SAFETY: status is a valid out-pointer.
            let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if r == pid {
                break status;
            }
            if r < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return Err(start_failed(&io::Error::last_os_error()));
            }
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            kill_and_reap(pid);
            return Err(WorkerFailure::TimedOut {
                limit_ms: limit.as_millis() as u64,
            });
        }
        if open {
            let mut pfd = libc::pollfd {
                fd: std::os::fd::AsRawFd::as_raw_fd(&pipe),
                events: libc::POLLIN,
                revents: 0,
            };
            let wait_ms = left.as_millis().clamp(1, 1000) as libc::c_int;
            // SAFETY: one valid pollfd.
            if unsafe { libc::poll(&mut pfd, 1, wait_ms) } > 0 {
                let mut buf = [0u8; 4096];
                match io::Read::read(&mut pipe, &mut buf) {
                    Ok(0) => open = false,
                    Ok(n) => out.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => open = false,
                }
            }
        } else {
            std::thread::sleep(std::time::Duration::from_millis(
                left.as_millis().min(10) as u64
            ));
        }
    };
    let out = String::from_utf8_lossy(&out).into_owned();
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        return Err(WorkerFailure::Signal {
            signal,
            name: signal_name(signal).to_owned(),
        });
    }
    match libc::WEXITSTATUS(status) {
        0 => Ok(out),
        PANIC_EXIT => Err(WorkerFailure::Panic { message: out }),
        code => Err(WorkerFailure::Exit { code }),
    }
}

/// The name of a Linux signal number (signal(7); the same numbers on ARM and x86 for
/// these), or `"?"`.
pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGSYS => "SIGSYS",
        _ => "?",
    }
}

/// Reaps any exited children without blocking (`waitpid(-1, WNOHANG)`): PID 1 inherits
/// orphans.
pub fn reap_zombies() {
    loop {
        let mut status = 0;
        // SAFETY: status is a valid out-pointer.
        let r = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if r <= 0 {
            break;
        }
    }
}

/// Forks a child that runs `body` and `_exit`s with its return value; returns the
/// child's pid at once (the caller ends it with [`kill_and_reap`]). Call it only while
/// no other thread holds a lock the child needs (musl's malloc is fork-safe).
pub fn spawn_child(body: impl FnOnce() -> i32) -> io::Result<i32> {
    // SAFETY: plain fork(2); the child only runs `body` and then _exit(2).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        let code = body();
        // SAFETY: _exit ends the child without running PID 1's atexit handlers.
        unsafe { libc::_exit(code) };
    }
    Ok(pid)
}

/// The exit status of child `pid` if it has ended (`waitpid(WNOHANG)`, which reaps it);
/// `None` while it runs.
pub fn exit_code(pid: i32) -> Option<i32> {
    let mut status = 0;
    // SAFETY: status is a valid out-pointer.
    let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    (r == pid).then(|| {
        if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            128 + libc::WTERMSIG(status)
        }
    })
}

/// Sends SIGKILL to `pid` and waits for it.
pub fn kill_and_reap(pid: i32) {
    let mut status = 0;
    // SAFETY: plain kill(2) / waitpid(2) with a valid out-pointer.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, &mut status, 0);
    }
}

/// Moves the calling (single-threaded) process into a new network namespace
/// (`unshare(CLONE_NEWNET)`): it then sees only its own `lo`.
pub fn unshare_netns() -> io::Result<()> {
    // SAFETY: only NEWNET is unshared, not the file table: no fd is invalidated.
    unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::NEWNET) }
        .map_err(io::Error::from)
}

/// The kernel's index of interface `ifname` in PID 1's namespace (sysfs).
fn ifindex(ifname: &str) -> io::Result<i32> {
    std::fs::read_to_string(format!("/sys/class/net/{ifname}/ifindex"))?
        .trim()
        .parse()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{ifname} ifindex: {e}")))
}

/// Moves interface `ifname` (seen in PID 1's namespace) into the network namespace of
/// process `pid`, over rtnetlink ([`crate::netlink`]).
pub fn move_link_to_netns(ifname: &str, pid: u32) -> io::Result<()> {
    use rustix::net::{netlink, recv, sendto, socket, AddressFamily, RecvFlags, SendFlags};
    let index = ifindex(ifname)?;
    // Protocol 0 is NETLINK_ROUTE (rustix: pass `None` for the default).
    let sock = socket(AddressFamily::NETLINK, rustix::net::SocketType::RAW, None)?;
    let seq = 1;
    let req = crate::netlink::move_request(index, pid, seq);
    sendto(
        &sock,
        &req,
        SendFlags::empty(),
        &netlink::SocketAddrNetlink::new(0, 0),
    )?;
    let mut reply = [0u8; 512];
    let (n, _) = recv(&sock, &mut reply, RecvFlags::empty())?;
    crate::netlink::parse_ack(&reply[..n], seq).map_err(|errno| {
        if errno > 0 {
            io::Error::from_raw_os_error(errno)
        } else {
            io::Error::new(io::ErrorKind::InvalidData, "malformed netlink reply")
        }
    })
}

/// Sets an IPv4 address on `ifname` and brings it up: `SIOCSIFADDR`, `SIOCSIFNETMASK`,
/// `SIOCSIFFLAGS` with `IFF_UP` (netdevice(7)).
pub fn ifconfig_up(ifname: &str, address: [u8; 4], prefix_len: u8) -> io::Result<()> {
    let mask: u32 = if prefix_len == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(prefix_len.min(32)))
    };
    // SAFETY: plain socket(2) call.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh, owned descriptor.
    let sock = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    let raw = std::os::fd::AsRawFd::as_raw_fd(&sock);
    let set_addr = |request: libc::Ioctl, addr: [u8; 4]| -> io::Result<()> {
        let mut req = ifreq(ifname)?;
        let sin = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: 0,
            sin_addr: libc::in_addr {
                s_addr: u32::from_ne_bytes(addr),
            },
            sin_zero: [0; 8],
        };
        // SAFETY: sockaddr_in fits in the ifreq union's sockaddr (both 16 bytes).
        unsafe {
            std::ptr::copy_nonoverlapping(
                (&sin as *const libc::sockaddr_in).cast::<u8>(),
                &mut req.ifr_ifru as *mut _ as *mut u8,
                std::mem::size_of::<libc::sockaddr_in>(),
            );
        }
        ioctl(raw, request, &mut req)
    };
    set_addr(libc::SIOCSIFADDR as libc::Ioctl, address)?;
    set_addr(libc::SIOCSIFNETMASK as libc::Ioctl, mask.to_be_bytes())?;
    let mut req = ifreq(ifname)?;
    ioctl(raw, libc::SIOCGIFFLAGS as libc::Ioctl, &mut req)?;
    // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
    unsafe { req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short };
    ioctl(raw, libc::SIOCSIFFLAGS as libc::Ioctl, &mut req)
}

/// Adds IPv6 address `addr`/`prefix_len` to `ifname` (`SIOCSIFADDR` on an AF_INET6
/// socket with `struct in6_ifreq`, ipv6(7)). The interface must be up.
pub fn add_ipv6(ifname: &str, addr: [u8; 16], prefix_len: u32) -> io::Result<()> {
    let index = ifindex(ifname)?;
    // SAFETY: plain socket(2) call.
    let fd = unsafe { libc::socket(libc::AF_INET6, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh, owned descriptor.
    let sock = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    let mut req = libc::in6_ifreq {
        ifr6_addr: libc::in6_addr { s6_addr: addr },
        ifr6_prefixlen: prefix_len,
        ifr6_ifindex: index,
    };
    // SAFETY: req is a valid in6_ifreq for SIOCSIFADDR on an AF_INET6 socket.
    let r = unsafe {
        libc::ioctl(
            std::os::fd::AsRawFd::as_raw_fd(&sock),
            libc::SIOCSIFADDR as libc::Ioctl,
            &mut req as *mut libc::in6_ifreq,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Brings `ifname` up with no address (for `lo`, whose address the kernel sets).
pub fn link_up(ifname: &str) -> io::Result<()> {
    // SAFETY: plain socket(2) call.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh, owned descriptor.
    let sock = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    let raw = std::os::fd::AsRawFd::as_raw_fd(&sock);
    let mut req = ifreq(ifname)?;
    ioctl(raw, libc::SIOCGIFFLAGS as libc::Ioctl, &mut req)?;
    // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
    unsafe { req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short };
    ioctl(raw, libc::SIOCSIFFLAGS as libc::Ioctl, &mut req)
}

fn ifreq(ifname: &str) -> io::Result<libc::ifreq> {
    if ifname.is_empty() || ifname.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "interface name length",
        ));
    }
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(ifname.bytes()) {
        *dst = src as libc::c_char;
    }
    Ok(req)
}

fn ioctl(fd: libc::c_int, request: libc::Ioctl, req: &mut libc::ifreq) -> io::Result<()> {
    // SAFETY: req is a valid ifreq for these SIOC* requests.
    let r = unsafe { libc::ioctl(fd, request, req as *mut libc::ifreq) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: std::time::Duration = std::time::Duration::from_secs(1);

    #[test]
    fn worker_returns_output_and_its_time() {
        let (out, ns) = run_worker(10 * SECOND, || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            "hello".into()
        });
        assert_eq!(out, Ok("hello".into()));
        assert!((20_000_000..10_000_000_000).contains(&ns), "{ns} ns");
    }

    #[test]
    fn worker_faults_are_failures_not_crashes() {
        // What a panic under panic = "abort" does without our hook.
        let (r, _) = run_worker(10 * SECOND, || std::process::abort());
        assert_eq!(
            r,
            Err(WorkerFailure::Signal {
                signal: libc::SIGABRT,
                name: "SIGABRT".into()
            })
        );
        let (r, _) = run_worker(10 * SECOND, || {
            // SAFETY: none; the fault is the point (the child dies of SIGSEGV).
            unsafe { std::ptr::null_mut::<u8>().write_volatile(1) };
            String::new()
        });
        assert_eq!(
            r,
            Err(WorkerFailure::Signal {
                signal: libc::SIGSEGV,
                name: "SIGSEGV".into()
            })
        );
        let (r, _) = run_worker(10 * SECOND, || panic!("boom at step 3"));
        match r {
            Err(WorkerFailure::Panic { message }) => {
                assert!(message.contains("boom at step 3"), "{message}")
            }
            other => panic!("{other:?}"),
        }
        let (r, _) = run_worker(10 * SECOND, || {
            // SAFETY: _exit(2) in the child.
            unsafe { libc::_exit(7) }
        });
        assert_eq!(r, Err(WorkerFailure::Exit { code: 7 }));
    }

    #[test]
    fn a_hung_worker_is_killed_at_its_limit() {
        let limit = std::time::Duration::from_millis(300);
        let (r, ns) = run_worker(limit, || loop {
            std::thread::sleep(SECOND);
        });
        assert_eq!(r, Err(WorkerFailure::TimedOut { limit_ms: 300 }));
        assert!((300_000_000..5_000_000_000).contains(&ns), "{ns} ns");
        // A worker that closed its pipe and then hangs is bounded too.
        let (r, _) = run_worker(limit, || {
            // SAFETY: closing this child's own copies of every descriptor above 2.
            unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
            loop {
                std::thread::sleep(SECOND);
            }
        });
        assert_eq!(r, Err(WorkerFailure::TimedOut { limit_ms: 300 }));
    }

    #[test]
    fn aligned_buffers_are_aligned() {
        for align in [512, 4096] {
            let b = AlignedBuf::new(8192, align);
            assert_eq!(b.as_ptr() as usize % align, 0);
            assert_eq!(b.len(), 8192);
            assert!(b.iter().all(|&x| x == 0));
        }
    }

    #[test]
    fn tmpfs_is_refused_and_disk_is_not() {
        let err = refuse_ram_filesystem(Path::new("/dev/shm")).unwrap_err();
        assert!(
            err.contains("RAM filesystem") && err.contains("/dev/shm"),
            "{err}"
        );
        refuse_ram_filesystem(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
    }

    #[test]
    fn vcio_edge_checks_the_size_and_reports_errno() {
        let mut msg = crate::mailbox::encode(crate::mailbox::Property::Throttled);
        let err = vcio_property(Path::new("/nonexistent/vcio"), &mut msg).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        // A character device without the ioctl: ENOTTY, nothing written.
        let err = vcio_property(Path::new("/dev/null"), &mut msg).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOTTY));
        assert_eq!(
            msg,
            crate::mailbox::encode(crate::mailbox::Property::Throttled)
        );
        // A size word larger than the buffer never reaches the kernel.
        let mut short = [64, 0, 0];
        let err = vcio_property(Path::new("/dev/null"), &mut short).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(
            IOCTL_MBOX_PROPERTY as u32,
            crate::mailbox::mbox_property_ioctl(std::mem::size_of::<usize>() as u32)
        );
    }

    #[test]
    fn ifreq_refuses_long_names() {
        assert!(ifreq("a-very-long-interface-name").is_err());
        assert!(ifreq("usb0").is_ok());
    }
}
