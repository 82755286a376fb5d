//! PID 1's waits: polling for a device, an interface or any condition with a bound, and
//! idling forever once there is nothing left to do. Every poll beats the watchdog heart
//! ([`crate::heart`]), so a long but bounded wait is progress.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::{heart, worker};

/// Waits until `path` exists, polling every 50 ms, for at most `wait`.
pub fn wait_for(path: &Path, wait: Duration) -> bool {
    wait_until(wait, || path.exists())
}

/// Polls `ok` every 50 ms until it holds or `wait` has passed; returns the last answer.
pub fn wait_until(wait: Duration, mut ok: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + wait;
    loop {
        if ok() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        heart::beat();
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sleeps forever, reaping any orphans. PID 1 must never exit.
pub fn idle_forever() -> ! {
    heart::serving();
    loop {
        worker::reap_zombies();
        std::thread::sleep(Duration::from_secs(60));
    }
}
