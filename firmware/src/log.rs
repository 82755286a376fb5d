//! The init's log: [`defmt`] frames encoded on the board into a bounded buffer in RAM,
//! stored with the results as `log.defmt`, decoded on the host by `benchboot log --elf
//! <board>.init.elf --frames log.defmt` (host/src/log.rs).
//!
//! # Why defmt
//! A `defmt::info!("…{=u32}…", x)` call writes the 16-bit index of its format string, a
//! timestamp and the raw bytes of its arguments into memory: no formatting, no
//! allocation (the buffer is reserved at the first call), no syscall where the kernel's
//! vDSO serves the timestamp (`CLOCK_BOOTTIME` through [`crate::sys::boottime_ns`]; ARMv7
//! and aarch64 boards with the architected timer; on an ARM1176 Pi Zero/1 it is one
//! `clock_gettime` syscall). About 2 µs a frame under qemu-user, so it may be called
//! during a measurement. The strings stay
//! behind in the unstripped ELF (symbols of a `.defmt` section that is never loaded,
//! `defmt-sections.x`), which `cargo xtask image` keeps as
//! `target/images/<board>.init.elf`; the image carries the stripped init. The serial
//! console keeps its own short human-readable lines ([`crate::console::say`]).
//!
//! # Levels
//! `DEFMT_LOG` at build time (`.cargo/config.toml`: `debug`) decides which levels are
//! compiled in at all; statements below it cost nothing.
//!
//! # Frame format
//! defmt wire format version 4, rzCOBS encoding (defmt's default): each log call is one
//! frame = string index (u16), timestamp (`{=u64:us}`: µs of `CLOCK_BOOTTIME`, LEB128),
//! then the arguments, all rzCOBS-encoded and ended by one `0x00`. The stream starts with
//! one `0x00`. [`snapshot`] (and so `log.defmt`) is such a stream: frames back to back,
//! always whole. Measured on armv7, each frame with its `0x00`: one `{=u32}` 8-10 bytes;
//! `{=f32}` + `{=bool}` 12; a `{=str}` costs its length + 1, so a 27-character step name
//! makes 37 and step name + direction + two `{=u64}` 52. rzCOBS leaves zero bytes out,
//! so sizes move by a byte or two with the values.
//!
//! # Bound, and when it is full
//! [`CAPACITY`] bytes. The first frame that does not fit whole is dropped and the log
//! stops there: that frame and every later one are only counted, so the log is the
//! run's beginning without holes. [`snapshot`] then ends with one more warning frame
//! that says how many were dropped (it is not counted against the bound).
//!
//! # Threads and processes
//! Any thread may log. A log call only *tries* the buffer's mutex (a few times, yielding
//! in between): a frame that cannot get it is dropped and counted instead of waited
//! for. That keeps a forked worker safe when it was forked while another thread held
//! the mutex (it would otherwise block forever), and a log call nested in another's
//! arguments from deadlocking. A forked worker logs into its own copy of the buffer,
//! which ends with it: log in PID 1 around the worker, not inside it.
//!
//! `defmt::Logger` is an `unsafe trait` (its contract: `acquire`/`release` pair up per
//! thread); the implementation below holds the guard of a `std` mutex per thread and
//! uses no `unsafe` operation.

use std::cell::RefCell;
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

/// The frames' file on the results partition, beside `results.json`: [`snapshot`].
pub const FILE: &str = "log.defmt";

/// Bytes of frames kept in RAM (reserved at the first log call): about 26 000 frames
/// of one number, 5 000 that carry a step name.
pub const CAPACITY: usize = 256 * 1024;
/// Largest `log.defmt` PID 1 reads back from the card (to keep it with the previous
/// run): 16 MiB, 64 times [`CAPACITY`], as the host's `benchboot log --frames`
/// (host/src/log.rs `MAX_FRAMES_BYTES`).
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// Tries of the buffer's mutex per log call before the frame is dropped.
const TRIES: u32 = 64;

/// Frames being encoded into a bounded byte buffer.
struct Buffer {
    encoder: defmt::Encoder,
    bytes: Vec<u8>,
    capacity: usize,
    /// Where the frame being written starts (to cut it off if it does not fit).
    frame_start: usize,
    /// The frame being written does not fit.
    overflow: bool,
    /// The frame being written is not encoded at all (the buffer was already full).
    skip: bool,
    /// A frame did not fit: every later one is dropped.
    full: bool,
    frames: u32,
    dropped: u32,
}

impl Buffer {
    const fn new(capacity: usize) -> Buffer {
        Buffer {
            encoder: defmt::Encoder::new(),
            bytes: Vec::new(),
            capacity,
            frame_start: 0,
            overflow: false,
            skip: false,
            full: false,
            frames: 0,
            dropped: 0,
        }
    }

    fn start(&mut self) {
        self.skip = self.full;
        if self.skip {
            return;
        }
        if self.bytes.capacity() < self.capacity {
            self.bytes.reserve_exact(self.capacity - self.bytes.len());
        }
        self.overflow = false;
        self.encode(|e, out| e.start_frame(out));
        self.frame_start = self.bytes.len();
    }

    fn write(&mut self, data: &[u8]) {
        if self.skip {
            return;
        }
        self.encode(|e, out| e.write(data, out));
    }

    fn end(&mut self) {
        if self.skip {
            self.dropped = self.dropped.saturating_add(1);
            return;
        }
        self.encode(|e, out| e.end_frame(out));
        if self.overflow {
            self.bytes.truncate(self.frame_start);
            self.full = true;
            self.dropped = self.dropped.saturating_add(1);
        } else {
            self.frames = self.frames.saturating_add(1);
        }
    }

    /// Runs one encoder call with its output going to [`push`] (the split borrow lets
    /// the encoder and the bytes it writes to be borrowed at once).
    fn encode(&mut self, call: impl FnOnce(&mut defmt::Encoder, &mut dyn FnMut(&[u8]))) {
        let Buffer {
            encoder,
            bytes,
            capacity,
            overflow,
            ..
        } = self;
        call(encoder, &mut |b| push(bytes, *capacity, overflow, b));
    }
}

/// Appends encoded bytes while they fit: never past `capacity`, so never a reallocation.
fn push(bytes: &mut Vec<u8>, capacity: usize, overflow: &mut bool, data: &[u8]) {
    if *overflow || bytes.len() + data.len() > capacity {
        *overflow = true;
    } else {
        bytes.extend_from_slice(data);
    }
}

/// The log of this process.
static LOG: Mutex<Buffer> = Mutex::new(Buffer::new(CAPACITY));

/// What this thread's current frame goes to.
enum Frame {
    Idle,
    /// The shared buffer, locked for the frame.
    Shared(MutexGuard<'static, Buffer>),
    /// The buffer of [`capture`].
    Captured(Buffer),
    /// No buffer could be had: the frame is counted as dropped.
    Dropped,
}

thread_local! {
    static FRAME: RefCell<Frame> = const { RefCell::new(Frame::Idle) };
    /// Set while [`capture`] runs on this thread.
    static CAPTURE: RefCell<Option<Buffer>> = const { RefCell::new(None) };
}

/// Frames that could not get the buffer at all (see the module docs).
static UNLOCKED_DROPS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

fn lock_shared() -> Option<MutexGuard<'static, Buffer>> {
    for _ in 0..TRIES {
        match LOG.try_lock() {
            Ok(g) => return Some(g),
            Err(TryLockError::Poisoned(p)) => return Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => std::thread::yield_now(),
        }
    }
    None
}

#[defmt::global_logger]
struct Logger;

// The one `unsafe` outside `sys.rs` (allowed on this module's `mod` line in lib.rs).
// SAFETY: no unsafe operation here: defmt declares `Logger` an `unsafe trait`, whose
// contract is that `acquire` is thread-safe and that the frame state it tracks is per
// execution context, with `flush`, `release` and `write` as `unsafe fn` that defmt's
// macros call only between an `acquire` and its `release` on the same thread. Both hold:
// the frame state is a thread-local, the buffer is behind a `std` mutex (or a frame is
// dropped), and the bodies below are safe code; implementing the trait needs the keyword.
unsafe impl defmt::Logger for Logger {
    fn acquire() {
        let frame = match CAPTURE.with(|c| c.borrow_mut().take()) {
            Some(mut b) => {
                b.start();
                Frame::Captured(b)
            }
            None => match lock_shared() {
                Some(mut g) => {
                    g.start();
                    Frame::Shared(g)
                }
                None => Frame::Dropped,
            },
        };
        FRAME.with(|f| *f.borrow_mut() = frame);
    }

    unsafe fn flush() {}

    unsafe fn release() {
        let frame = FRAME.with(|f| std::mem::replace(&mut *f.borrow_mut(), Frame::Idle));
        match frame {
            Frame::Shared(mut g) => g.end(),
            Frame::Captured(mut b) => {
                b.end();
                CAPTURE.with(|c| *c.borrow_mut() = Some(b));
            }
            Frame::Dropped => {
                UNLOCKED_DROPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Frame::Idle => {}
        }
    }

    unsafe fn write(bytes: &[u8]) {
        FRAME.with(|f| match &mut *f.borrow_mut() {
            Frame::Shared(g) => g.write(bytes),
            Frame::Captured(b) => b.write(bytes),
            Frame::Idle | Frame::Dropped => {}
        });
    }
}

defmt::timestamp!("{=u64:us}", crate::sys::boottime_ns() / 1_000);

/// How the log stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// Bytes of frames kept.
    pub bytes: usize,
    /// Frames kept.
    pub frames: u32,
    /// Frames dropped: the buffer was full, or busy for too long.
    pub dropped: u32,
}

/// How the log of this process stands.
pub fn stats() -> Stats {
    let b = LOG.lock().unwrap_or_else(PoisonError::into_inner);
    Stats {
        bytes: b.bytes.len(),
        frames: b.frames,
        dropped: b
            .dropped
            .saturating_add(UNLOCKED_DROPS.load(std::sync::atomic::Ordering::Relaxed)),
    }
}

/// A copy of every frame logged so far: what to write as `log.defmt`. When frames were
/// dropped it ends with one more warning frame that says how many. The log goes on.
pub fn snapshot() -> Vec<u8> {
    let mut bytes = LOG
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .bytes
        .clone();
    let dropped = stats().dropped;
    if dropped > 0 {
        let (notice, _) = capture(256, || {
            defmt::warn!(
                "log: {=u32} frames dropped (buffer of {=usize} bytes full, or busy)",
                dropped,
                CAPACITY
            )
        });
        bytes.extend_from_slice(&notice);
    }
    bytes
}

/// Runs `f` with this thread's log calls encoded into a buffer of its own of `capacity`
/// bytes instead of the shared one, with the same rules; returns those frames (a whole
/// stream) and how many were dropped. For [`snapshot`]'s notice and for tests.
pub fn capture(capacity: usize, f: impl FnOnce()) -> (Vec<u8>, u32) {
    let previous = CAPTURE.with(|c| c.borrow_mut().replace(Buffer::new(capacity)));
    f();
    let b = CAPTURE
        .with(|c| std::mem::replace(&mut *c.borrow_mut(), previous))
        .expect("capture: the buffer is back after each frame");
    (b.bytes, b.dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames in a stream: the leading 0x00 is not one; every frame ends with 0x00.
    fn frames(stream: &[u8]) -> Vec<&[u8]> {
        assert_eq!(stream.first(), Some(&0), "a stream starts with 0x00");
        assert_eq!(stream.last(), Some(&0), "a stream ends on a whole frame");
        stream[1..stream.len() - 1].split(|&b| b == 0).collect()
    }

    #[test]
    fn frames_are_whole_and_zero_terminated() {
        let (bytes, dropped) = capture(1024, || {
            defmt::info!("plan loaded");
            defmt::info!("block size {=u32} B: {=u64} ns", 4096, 123_456_789);
        });
        assert_eq!(dropped, 0);
        let f = frames(&bytes);
        assert_eq!(f.len(), 2, "{bytes:x?}");
        // Index (2) + timestamp (LEB128 of µs since boot) + rzCOBS overhead; rzCOBS
        // leaves zero bytes out, so sizes move by a byte or two with the values.
        assert!((4..=12).contains(&f[0].len()), "{:x?}", f[0]);
        assert!(f[1].len() >= f[0].len() + 4, "{:x?}", f[1]);
    }

    #[test]
    fn a_full_buffer_drops_whole_frames_and_counts_them() {
        // Arguments without zero bytes: their frames' sizes do not depend on the values.
        let big = || defmt::info!("tick {=u64}", 0x1122_3344_5566_7788);
        let (one, _) = capture(1024, big);
        let (small, _) = capture(1024, || defmt::info!("x"));
        let (big_len, small_len) = (one.len() - 1, small.len() - 1);
        assert!(small_len + 4 < big_len, "{small:x?} vs {one:x?}");
        // Room for the leading 0x00, two big frames and less than a third.
        let room = 1 + 2 * big_len + (small_len + big_len) / 2;
        let (bytes, dropped) = capture(room, || (0..5).for_each(|_| big()));
        assert_eq!((frames(&bytes).len(), dropped), (2, 3));
        assert!(bytes.len() <= room);
        // Once full it stays full: a small frame that would fit is not slipped in after
        // a drop, so the log has no holes.
        let (bytes, dropped) = capture(room, || {
            (0..3).for_each(|_| big());
            defmt::info!("x");
        });
        assert_eq!((frames(&bytes).len(), dropped), (2, 2));
    }

    #[test]
    fn captures_nest_and_leave_the_shared_log_alone() {
        let before = stats();
        let (outer, _) = capture(1024, || {
            defmt::info!("outer");
            let (inner, _) = capture(1024, || defmt::info!("inner"));
            assert_eq!(frames(&inner).len(), 1);
        });
        assert_eq!(frames(&outer).len(), 1);
        // Other tests may log into the shared buffer meanwhile, never less.
        assert!(stats().frames >= before.frames);
    }

    #[test]
    fn the_shared_log_keeps_frames_and_snapshots_copy_them() {
        defmt::debug!("shared {=str}", "frame");
        let s = stats();
        assert!(s.frames >= 1 && s.bytes > 0, "{s:?}");
        let snap = snapshot();
        assert!(snap.len() >= s.bytes);
        assert!(!frames(&snap).is_empty());
    }
}
