//! The syscall edge: thin wrappers over rustix, and libc where rustix has no safe API
//! (`fork`, `_exit`, the `ioctl`s of `vcio`, the watchdog, `netdevice` and ethtool,
//! `unshare`).
//! This is the only module of the crate with `unsafe` blocks (the crate root denies
//! `unsafe_code` and allows it on this module and on `log.rs`, which implements defmt's
//! `unsafe trait Logger` with no `unsafe` operation). Every wrapper here is a safe `fn`
//! (the one unsound by design, [`segfault`], is the crash the `faults` plan asks of a
//! worker) but two private `unsafe fn`s, each with its `# Safety` contract: `fork`
//! (whose only caller, `spawn_child`, keeps it for the whole crate, saying how) and
//! `ethtool_ioctl`. i2c-dev's `I2C_SLAVE` ioctl is here ([`i2c_open`]); the ARM generic
//! timer's registers are read here too, by inline `asm!`
//! ([`generic_timer`]). Nothing here calls a module of this crate but the pure
//! [`crate::netlink`].
//!
//! Each wrapper names the C call it makes; see its man page for the details.

use std::ffi::CStr;
use std::io;
use std::path::Path;

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

/// `CLOCK_BOOTTIME` in ns (includes time suspended; on a board: time since power-on of
/// the kernel).
pub fn boottime_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

mod clock;
pub use clock::{generic_timer, monotonic_ns, sleep_until_boottime, AVAILABLE_CLOCKSOURCE};

/// The generic timer's `(CNTVCT, CNTFRQ)`; run only where [`generic_timer`] found it.
#[cfg(target_arch = "aarch64")]
fn read_generic_timer() -> Result<(u64, u64), String> {
    let (count, freq): (u64, u64);
    // SAFETY: CNTVCT_EL0 and CNTFRQ_EL0 are readable at EL0 under Linux on arm64 (the
    // kernel enables EL0 access to the virtual counter, or traps and emulates it on
    // cores with an erratum); the reads touch no memory and no flags. The ISB keeps the
    // counter read from being taken early.
    unsafe {
        core::arch::asm!(
            "isb",
            "mrs {c}, cntvct_el0",
            "mrs {f}, cntfrq_el0",
            c = out(reg) count,
            f = out(reg) freq,
            options(nomem, nostack, preserves_flags),
        );
    }
    Ok((count, freq))
}

#[cfg(target_arch = "arm")]
fn read_generic_timer() -> Result<(u64, u64), String> {
    let (lo, hi, freq): (u32, u32, u32);
    // SAFETY: called only when the kernel registered the generic timer as a
    // clocksource ([`generic_timer`]), which enables PL0 reads of CNTVCT (64-bit,
    // `mrrc p15, 1, <lo>, <hi>, c14`) and with them of CNTFRQ
    // (`mrc p15, 0, <r>, c14, c0, 0`); the reads touch no memory and no flags. No ISB:
    // the ARMv6 build (arm-unknown-linux-musleabihf) has no such instruction, and a few
    // cycles of reordering are nothing against a figure in seconds.
    unsafe {
        core::arch::asm!(
            "mrrc p15, 1, {lo}, {hi}, c14",
            "mrc p15, 0, {f}, c14, c0, 0",
            lo = out(reg) lo,
            hi = out(reg) hi,
            f = out(reg) freq,
            options(nomem, nostack, preserves_flags),
        );
    }
    Ok(((u64::from(hi) << 32) | u64::from(lo), u64::from(freq)))
}

#[cfg(not(any(target_arch = "aarch64", target_arch = "arm")))]
fn read_generic_timer() -> Result<(u64, u64), String> {
    Err(format!(
        "no ARM generic timer on {} (a host build)",
        std::env::consts::ARCH
    ))
}

/// `I2C_SLAVE` of i2c-dev: the 7-bit address later `read(2)`/`write(2)` on the file talk
/// to (include/uapi/linux/i2c-dev.h, 0x0703; Documentation/i2c/dev-interface.rst).
const I2C_SLAVE: libc::Ioctl = 0x0703 as libc::Ioctl;

/// `/dev/i2c-<bus>` opened read-write and pointed at `address` (`ioctl(I2C_SLAVE)`).
///
/// # Errors
/// No such bus (the `i2c-dev` driver not loaded, or no such adapter), or the kernel's
/// refusal of the address (EBUSY: a kernel driver holds it).
pub fn i2c_open(bus: u8, address: u8) -> io::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/dev/i2c-{bus}"))?;
    // SAFETY: I2C_SLAVE takes the address by value (an unsigned long) and touches no
    // memory of this process; the fd is open for the whole call.
    let r = unsafe {
        libc::ioctl(
            std::os::fd::AsRawFd::as_raw_fd(&file),
            I2C_SLAVE,
            libc::c_ulong::from(address),
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file)
}

/// One 16-bit register of an I2C device opened by [`i2c_open`]: `write(2)` of the
/// register pointer, then `read(2)` of two bytes, most significant first (the INA2xx
/// register protocol, TI SBOS547 "Serial Interface").
///
/// # Errors
/// The adapter's error (ENXIO/EREMOTEIO: no device answered at the address).
pub fn i2c_read_word(file: &std::fs::File, register: u8) -> io::Result<u16> {
    use std::io::{Read, Write};
    let mut f = file;
    f.write_all(&[register])?;
    let mut b = [0u8; 2];
    f.read_exact(&mut b)?;
    Ok(u16::from_be_bytes(b))
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

/// Exit status of a child of [`spawn_child`] whose `body` panicked: 101, what a Rust
/// program exits with after a panic.
pub const PANIC_EXIT: i32 = 101;

/// `fork(2)`: a copy of this process in which only the calling thread goes on. Returns
/// the child's pid in the parent, 0 in the child.
///
/// # Safety
/// In the parent this is a plain system call. The child is a copy of a process that may
/// have had other threads, now gone with whatever they were in the middle of; until it
/// ends with `_exit(2)` (or `execve(2)`) the caller must make sure the child:
/// - never returns or unwinds into the caller's frames, nor runs `exit(3)`'s handlers:
///   they belong to the parent (PID 1's steps would run twice, its destructors and
///   atexit handlers twice);
/// - reads no state another thread may have been changing at the fork without the
///   lock that guards it (a lock another thread held stays held in the child: waiting
///   on it is a hang, which the caller must be able to end, e.g. a worker's limit);
/// - calls only what is safe in the child of a multi-threaded process: POSIX promises
///   only async-signal-safe functions; musl (1.2.2 on) and glibc also leave `malloc`
///   and their other internal locks consistent in the child (they take them around
///   `fork(2)`), which a Rust global allocator other than libc's need not do.
unsafe fn fork() -> io::Result<libc::pid_t> {
    // SAFETY: fork(2) takes no arguments; what the child may then do is this function's
    // contract, which its caller keeps.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(pid)
    }
}

/// Forks a child that runs `body` and `_exit`s with its return value ([`PANIC_EXIT`] if
/// `body` panics and the panic unwinds); returns the child's pid at once (the caller ends
/// it with [`crate::worker::kill_and_reap`] or reaps it). In the parent `body` is dropped
/// without being called, so whatever it captures by value is dropped there too.
///
/// What `body` may do: any code of this crate and its engines. A lock that one of PID 1's
/// other threads (watchdog, HTTP server, DHCP and link watchers) held at the fork stays
/// held in the child, so a child that may wait on such a lock must run under a limit
/// ([`crate::worker::run_worker`]); the log only tries its lock ([`crate::log`]).
pub(crate) fn spawn_child(body: impl FnOnce() -> i32) -> io::Result<i32> {
    // SAFETY: fork's three conditions hold for the child here:
    // - it leaves `body` only through _exit(2): a panic that unwinds out of `body` is
    //   caught below (the firmware's own profile aborts instead), so it never returns
    //   or unwinds into the caller's frames nor runs exit(3)'s handlers;
    // - this crate and the engines share mutable state between threads only behind
    //   std's locks and atomics (safe code has no other; the crate's unsafe code is
    //   this module and the log's std mutex), and none keys a critical section to a
    //   thread's identity (std's ThreadId is never reused): in the child a lock held by
    //   a thread that is gone stays locked, a hang, never a read of half-done state;
    // - the global allocator is libc's malloc (neither this crate nor the init binary
    //   sets another): musl on the board, glibc for the host's tests, both of which keep
    //   malloc and their internal locks usable in the child of a multi-threaded parent.
    let pid = unsafe { fork() }?;
    if pid == 0 {
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
        match code {
            Ok(code) => exit_now(code),
            Err(payload) => {
                // Not dropped: a panicking destructor would unwind out of the child.
                std::mem::forget(payload);
                exit_now(PANIC_EXIT)
            }
        }
    }
    Ok(pid)
}

/// `_exit(2)`: ends this process at once with `code`, without running atexit handlers
/// or unwinding (what a forked child of PID 1 must do: the handlers are PID 1's).
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit(2) takes no pointers and never returns.
    unsafe { libc::_exit(code) }
}

/// A write through the null pointer: the real segmentation fault the `faults` plan
/// asks of a worker (SIGSEGV from the kernel, not a signal sent). Never returns; call it
/// only in a forked worker, whose death is the point.
pub fn segfault() -> ! {
    // SAFETY: none: the fault is the point; the kernel kills the process at the write.
    unsafe { std::ptr::null_mut::<u8>().write_volatile(1) };
    unreachable!("a write through the null pointer returned")
}

/// `close_range(3, ~0, 0)`: closes every descriptor above stderr (for tests of a
/// worker that closed its pipe).
#[cfg(test)]
pub fn close_descriptors_above_stderr() {
    // SAFETY: closes this process's own descriptors; the callers (forked test
    // children) use none of them afterwards.
    unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
}

/// Moves the calling (single-threaded) process into a new network namespace
/// (`unshare(CLONE_NEWNET)`): it then sees only its own `lo`.
pub fn unshare_netns() -> io::Result<()> {
    // SAFETY: only NEWNET is unshared, not the file table: no fd is invalidated.
    unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::NEWNET) }
        .map_err(io::Error::from)
}

/// `ioctl(SIOCGIFINDEX)` (rustix's `name_to_index`): the kernel's index of interface
/// `ifname` in the caller's network namespace, asked through `sock` (any socket will do,
/// netdevice(7)).
fn ifindex(sock: &std::os::fd::OwnedFd, ifname: &str) -> io::Result<i32> {
    let index = rustix::net::netdevice::name_to_index(sock, ifname)?;
    i32::try_from(index).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{ifname}: index {index}"),
        )
    })
}

/// Moves interface `ifname` (seen in PID 1's namespace) into the network namespace of
/// process `pid`, over rtnetlink ([`crate::netlink`]).
pub fn move_link_to_netns(ifname: &str, pid: u32) -> io::Result<()> {
    use rustix::net::{netlink, recv, sendto, socket, AddressFamily, RecvFlags, SendFlags};
    // Protocol 0 is NETLINK_ROUTE (rustix: pass `None` for the default).
    let sock = socket(AddressFamily::NETLINK, rustix::net::SocketType::RAW, None)?;
    let index = ifindex(&dgram_socket(AddressFamily::INET)?, ifname)?;
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
    let sock = dgram_socket(rustix::net::AddressFamily::INET)?;
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
    let sock = dgram_socket(rustix::net::AddressFamily::INET6)?;
    let index = ifindex(&sock, ifname)?;
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

/// Makes the program `cmd` starts die with its parent: `prctl(PR_SET_PDEATHSIG,
/// SIGKILL)` between fork and exec (a QEMU stand-in's hostapd must not outlive the
/// namespace child that runs it).
pub fn die_with_parent(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the hook only calls prctl(2), which is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
                .map_err(io::Error::from)
        });
    }
}

/// `setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)`: errors on this netlink socket come
/// with the kernel's explanation (include/uapi/linux/netlink.h). Best effort.
pub fn netlink_ext_ack(sock: &std::os::fd::OwnedFd) {
    const SOL_NETLINK: libc::c_int = 270;
    const NETLINK_EXT_ACK: libc::c_int = 11;
    let on: libc::c_int = 1;
    // SAFETY: `on` outlives the call; the length is its size.
    unsafe {
        libc::setsockopt(
            std::os::fd::AsRawFd::as_raw_fd(sock),
            SOL_NETLINK,
            NETLINK_EXT_ACK,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// Takes `ifname` down (`SIOCSIFFLAGS` without `IFF_UP`): nl80211 changes an
/// interface's type only while it is down.
pub fn link_down(ifname: &str) -> io::Result<()> {
    let sock = dgram_socket(rustix::net::AddressFamily::INET)?;
    let raw = std::os::fd::AsRawFd::as_raw_fd(&sock);
    let mut req = ifreq(ifname)?;
    ioctl(raw, libc::SIOCGIFFLAGS as libc::Ioctl, &mut req)?;
    // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
    unsafe { req.ifr_ifru.ifru_flags &= !(libc::IFF_UP as libc::c_short) };
    ioctl(raw, libc::SIOCSIFFLAGS as libc::Ioctl, &mut req)
}

/// The kernel's log buffer as text (`syslog(2)` `SYSLOG_ACTION_READ_ALL`: the whole
/// ring, not consumed), up to 1 MiB.
pub fn kernel_log() -> io::Result<String> {
    const SYSLOG_ACTION_READ_ALL: libc::c_int = 3;
    const SYSLOG_ACTION_SIZE_BUFFER: libc::c_int = 10;
    // SAFETY: SIZE_BUFFER takes no buffer.
    let size = unsafe { libc::klogctl(SYSLOG_ACTION_SIZE_BUFFER, std::ptr::null_mut(), 0) };
    let size = usize::try_from(size).unwrap_or(0).clamp(4096, 1 << 20);
    let mut buf = vec![0u8; size];
    // SAFETY: the kernel writes at most `len` bytes into `buf`, which is that long.
    let n = unsafe {
        libc::klogctl(
            SYSLOG_ACTION_READ_ALL,
            buf.as_mut_ptr().cast(),
            size as libc::c_int,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Brings `ifname` up with no address (for `lo`, whose address the kernel sets).
pub fn link_up(ifname: &str) -> io::Result<()> {
    let sock = dgram_socket(rustix::net::AddressFamily::INET)?;
    let raw = std::os::fd::AsRawFd::as_raw_fd(&sock);
    let mut req = ifreq(ifname)?;
    ioctl(raw, libc::SIOCGIFFLAGS as libc::Ioctl, &mut req)?;
    // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
    unsafe { req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short };
    ioctl(raw, libc::SIOCSIFFLAGS as libc::Ioctl, &mut req)
}

/// `ETHTOOL_GSET`, `ETHTOOL_GDRVINFO` and `ETHTOOL_GLINKSETTINGS`: the `cmd` word of the
/// struct `SIOCETHTOOL` carries (include/uapi/linux/ethtool.h).
const ETHTOOL_GSET: u32 = 0x1;
const ETHTOOL_GDRVINFO: u32 = 0x3;
const ETHTOOL_GLINKSETTINGS: u32 = 0x4c;
/// `AUTONEG_ENABLE` of the `autoneg` fields (include/uapi/linux/ethtool.h).
const AUTONEG_ENABLE: u8 = 0x01;

/// `struct ethtool_drvinfo` (include/uapi/linux/ethtool.h): `ETHTOOL_GDRVINFO`'s answer,
/// 196 bytes. Only `u32`s and byte arrays: the same layout on every Linux ABI.
#[repr(C)]
#[allow(dead_code)] // Fields kept for the kernel's layout, not read.
struct EthtoolDrvinfo {
    cmd: u32,
    driver: [u8; 32],
    version: [u8; 32],
    fw_version: [u8; 32],
    bus_info: [u8; 32],
    erom_version: [u8; 32],
    reserved2: [u8; 12],
    n_priv_flags: u32,
    n_stats: u32,
    testinfo_len: u32,
    eedump_len: u32,
    regdump_len: u32,
}

/// `struct ethtool_cmd` (include/uapi/linux/ethtool.h): the legacy `ETHTOOL_GSET`
/// answer, 44 bytes (deprecated for `ETHTOOL_GLINKSETTINGS`; kernels before 4.6 have only
/// this one).
#[repr(C)]
#[allow(dead_code)] // Fields kept for the kernel's layout, not read.
struct EthtoolCmd {
    cmd: u32,
    supported: u32,
    advertising: u32,
    speed: u16,
    duplex: u8,
    port: u8,
    phy_address: u8,
    transceiver: u8,
    autoneg: u8,
    mdio_support: u8,
    maxtxpkt: u32,
    maxrxpkt: u32,
    speed_hi: u16,
    eth_tp_mdix: u8,
    eth_tp_mdix_ctrl: u8,
    lp_advertising: u32,
    reserved: [u32; 2],
}

/// The most link mode words the kernel can ask for: `link_mode_masks_nwords` is a `__s8`.
const LINK_MODE_MASKS_MAX_NWORDS: usize = i8::MAX as usize;

/// `struct ethtool_link_settings` (include/uapi/linux/ethtool.h, 48 bytes) followed by
/// room for its flexible `link_mode_masks[]`: `map_supported`, `map_advertising` and
/// `map_lp_advertising`, `link_mode_masks_nwords` `u32`s each.
#[repr(C)]
#[allow(dead_code)] // Fields kept for the kernel's layout, not read.
struct EthtoolLinkSettings {
    cmd: u32,
    speed: u32,
    duplex: u8,
    port: u8,
    phy_address: u8,
    autoneg: u8,
    mdio_support: u8,
    eth_tp_mdix: u8,
    eth_tp_mdix_ctrl: u8,
    link_mode_masks_nwords: i8,
    transceiver: u8,
    master_slave_cfg: u8,
    master_slave_state: u8,
    rate_matching: u8,
    reserved: [u32; 7],
    link_mode_masks: [u32; 3 * LINK_MODE_MASKS_MAX_NWORDS],
}

// The uapi sizes, checked by every build (the board's 32-bit ARM ones among them): the
// ethtool structs have no pointer and no padding, so one layout on every ABI; `ifreq`
// (libc's, per target) is the 16-byte name and a union of 16 bytes on 32-bit targets,
// 24 on 64-bit ones (`struct ifmap`'s unsigned longs), its `ifr_data` pointer first.
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<EthtoolDrvinfo>() == 196);
    assert!(size_of::<EthtoolCmd>() == 44);
    assert!(offset_of!(EthtoolLinkSettings, link_mode_masks) == 48);
    assert!(offset_of!(libc::ifreq, ifr_ifru) == libc::IFNAMSIZ);
    assert!(size_of::<libc::ifreq>() == if size_of::<usize>() == 4 { 32 } else { 40 });
};

/// `ioctl(sock, SIOCETHTOOL, &ifreq)` with `ifr_data` pointing at `data`, over an AF_INET
/// datagram socket (the ethtool ioctl interface, include/uapi/linux/ethtool.h).
///
/// # Safety
/// `data` must be the whole struct the command in its first `u32` copies in and out
/// (the kernel reads the command from there and copies that struct's size).
unsafe fn ethtool_ioctl<T>(ifname: &str, data: &mut T) -> io::Result<()> {
    let sock = dgram_socket(rustix::net::AddressFamily::INET)?;
    let mut req = ifreq(ifname)?;
    // A pointer in the union: 4 bytes on 32-bit ARM, 8 on 64-bit, as libc defines it.
    req.ifr_ifru.ifru_data = (data as *mut T).cast::<libc::c_char>();
    let raw = std::os::fd::AsRawFd::as_raw_fd(&sock);
    // SAFETY: req is a valid ifreq whose ifr_data points at `data`, valid for reads and
    // writes of the struct its command names (this fn's contract), and lives until the
    // call returns.
    let r = unsafe {
        libc::ioctl(
            raw,
            libc::SIOCETHTOOL as libc::Ioctl,
            &mut req as *mut libc::ifreq,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The text of a NUL-padded `char[]` of the ethtool structs (lossy UTF-8).
fn c_text(field: &[u8]) -> String {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    String::from_utf8_lossy(&field[..end]).into_owned()
}

/// `ETHTOOL_GDRVINFO` of `ifname` (include/uapi/linux/ethtool.h, `struct
/// ethtool_drvinfo`): (driver, driver version, firmware version, bus info), as the
/// driver wrote them (empty when it wrote nothing). A driver without `get_drvinfo`
/// answers for its device's parent driver; with no parent device either (`lo`, `dummy`)
/// the kernel answers `EOPNOTSUPP`.
///
/// # Errors
/// The ioctl's errno: `ENODEV` (no such interface), `EOPNOTSUPP`; a name of
/// `IFNAMSIZ` bytes or more is `InvalidInput`.
pub fn ethtool_drvinfo(ifname: &str) -> io::Result<(String, String, String, String)> {
    // SAFETY: EthtoolDrvinfo is plain old data; all-zero is a valid value.
    let mut info: EthtoolDrvinfo = unsafe { std::mem::zeroed() };
    info.cmd = ETHTOOL_GDRVINFO;
    // SAFETY: GDRVINFO copies one struct ethtool_drvinfo in and out.
    unsafe { ethtool_ioctl(ifname, &mut info) }?;
    Ok((
        c_text(&info.driver),
        c_text(&info.version),
        c_text(&info.fw_version),
        c_text(&info.bus_info),
    ))
}

/// Whether autonegotiation is on for `ifname`: `ETHTOOL_GLINKSETTINGS` (the kernel's
/// two-step handshake: asked with `link_mode_masks_nwords` = 0 it answers the number of
/// mask words it wants, negated; asked again with that number it fills the struct),
/// else, where the kernel predates it (`EOPNOTSUPP`), the legacy `ETHTOOL_GSET`
/// (include/uapi/linux/ethtool.h).
///
/// # Errors
/// The ioctl's errno (`ENODEV`, `EOPNOTSUPP` for a driver without link settings: `lo`);
/// `InvalidData` when the handshake does not settle.
pub fn ethtool_autoneg(ifname: &str) -> io::Result<bool> {
    match link_settings(ifname) {
        Ok(ls) => Ok(ls.autoneg == AUTONEG_ENABLE),
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => {
            Ok(legacy_settings(ifname)?.autoneg == AUTONEG_ENABLE)
        }
        Err(e) => Err(e),
    }
}

/// `ETHTOOL_GLINKSETTINGS` with its handshake (see [`ethtool_autoneg`]).
fn link_settings(ifname: &str) -> io::Result<Box<EthtoolLinkSettings>> {
    // SAFETY: EthtoolLinkSettings is plain old data; all-zero is a valid value.
    let mut ls: Box<EthtoolLinkSettings> = Box::new(unsafe { std::mem::zeroed() });
    ls.cmd = ETHTOOL_GLINKSETTINGS;
    // SAFETY: with link_mode_masks_nwords = 0 the kernel copies the 48-byte header of
    // struct ethtool_link_settings in and back out.
    unsafe { ethtool_ioctl(ifname, &mut *ls) }?;
    let nwords = -i16::from(ls.link_mode_masks_nwords);
    if nwords <= 0 || nwords as usize > LINK_MODE_MASKS_MAX_NWORDS {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{ifname}: ETHTOOL_GLINKSETTINGS handshake answered {nwords} words"),
        ));
    }
    // SAFETY: as above.
    *ls = unsafe { std::mem::zeroed() };
    ls.cmd = ETHTOOL_GLINKSETTINGS;
    ls.link_mode_masks_nwords = nwords as i8;
    // SAFETY: the kernel copies the header and 3 × nwords mask words in and out;
    // link_mode_masks has room for 3 × 127, the most an __s8 can ask for.
    unsafe { ethtool_ioctl(ifname, &mut *ls) }?;
    if i16::from(ls.link_mode_masks_nwords) != nwords {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{ifname}: ETHTOOL_GLINKSETTINGS handshake did not settle"),
        ));
    }
    Ok(ls)
}

/// The legacy `ETHTOOL_GSET` (struct ethtool_cmd).
fn legacy_settings(ifname: &str) -> io::Result<EthtoolCmd> {
    // SAFETY: EthtoolCmd is plain old data; all-zero is a valid value.
    let mut cmd: EthtoolCmd = unsafe { std::mem::zeroed() };
    cmd.cmd = ETHTOOL_GSET;
    // SAFETY: GSET copies one struct ethtool_cmd in and out.
    unsafe { ethtool_ioctl(ifname, &mut cmd) }?;
    Ok(cmd)
}

/// `socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0)`: a socket for the `netdevice`
/// ioctls (netdevice(7): any socket will do).
fn dgram_socket(family: rustix::net::AddressFamily) -> io::Result<std::os::fd::OwnedFd> {
    Ok(rustix::net::socket_with(
        family,
        rustix::net::SocketType::DGRAM,
        rustix::net::SocketFlags::CLOEXEC,
        None,
    )?)
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
mod tests;
