//! One QEMU test (or image build) at a time in this process.
//!
//! The system tests are one test binary, whose harness runs tests in parallel threads.
//! A test that boots QEMU, builds images or cross-builds takes [`qemu_slot`] with its
//! group (its module, `module_path!()`) first: tests of one group share the slot and
//! run side by side, as they did when each file was a test binary of its own (the QEMU
//! tiers), while a test of another group waits until the slot is free (cargo ran those
//! binaries one after the other). Timeouts start after the slot is taken.
//!
//! Each guard, when dropped, writes one line to the process's stderr past libtest's
//! capture: `qemu slot: <test> held 312.4 s (waited 0.0 s)`, so a CI log shows where the
//! system tests' wall time went (`.ci/run`'s budget; README "Setup").

use std::io::Write;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Instant;

/// The group holding the slot and how many of its tests do.
static HOLDER: Mutex<Option<(&'static str, usize)>> = Mutex::new(None);
static FREED: Condvar = Condvar::new();

/// Held while a test of `group` uses the slot; frees it on drop (also on a panic).
#[must_use = "the slot is held until this guard is dropped"]
pub struct QemuSlot {
    group: &'static str,
    asked: Instant,
    taken: Instant,
}

/// Waits until no test of another group holds the slot, then holds it for `group`
/// (pass `module_path!()`).
pub fn qemu_slot(group: &'static str) -> QemuSlot {
    let asked = Instant::now();
    let mut holder = HOLDER.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        match &mut *holder {
            None => {
                *holder = Some((group, 1));
                break;
            }
            Some((g, n)) if *g == group => {
                *n += 1;
                break;
            }
            Some(_) => {
                holder = FREED.wait(holder).unwrap_or_else(PoisonError::into_inner);
            }
        }
    }
    QemuSlot {
        group,
        asked,
        taken: Instant::now(),
    }
}

/// The line a guard writes when dropped: the test (the thread's name, as libtest names
/// it, or the group), seconds held and seconds waited for the slot.
fn held_line(test: &str, waited_s: f64, held_s: f64) -> String {
    format!("qemu slot: {test} held {held_s:.1} s (waited {waited_s:.1} s)\n")
}

impl Drop for QemuSlot {
    fn drop(&mut self) {
        let thread = std::thread::current();
        let line = held_line(
            thread.name().unwrap_or(self.group),
            (self.taken - self.asked).as_secs_f64(),
            self.taken.elapsed().as_secs_f64(),
        );
        // `io::stderr()` directly, not `eprintln!`: libtest captures only the macros.
        let _ = std::io::stderr().write_all(line.as_bytes());
        let mut holder = HOLDER.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((g, n)) = &mut *holder {
            debug_assert_eq!(*g, self.group);
            *n -= 1;
            if *n == 0 {
                *holder = None;
                FREED.notify_all();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn the_held_line_names_the_test_and_its_seconds() {
        assert_eq!(
            held_line("qemu_virt::virt_gadget", 12.04, 312.46),
            "qemu slot: qemu_virt::virt_gadget held 312.5 s (waited 12.0 s)\n"
        );
    }

    #[test]
    fn one_group_shares_another_waits() {
        static INSIDE: AtomicUsize = AtomicUsize::new(0);
        let a1 = qemu_slot("a");
        let a2 = qemu_slot("a");
        let b = std::thread::spawn(|| {
            let _b = qemu_slot("b");
            INSIDE.fetch_add(1, Ordering::SeqCst);
        });
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(INSIDE.load(Ordering::SeqCst), 0, "b ran beside a");
        drop(a1);
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(INSIDE.load(Ordering::SeqCst), 0, "b ran beside a");
        drop(a2);
        b.join().unwrap();
        assert_eq!(INSIDE.load(Ordering::SeqCst), 1);
    }
}
