//! The hardware watchdog: PID 1 arms `/dev/watchdog` and feeds it while its main
//! sequence shows progress, so a board whose kernel or PID 1 hangs resets by itself.
//!
//! Interface: kernel doc Documentation/watchdog/watchdog-api.rst. Opening the device
//! starts the timer; `WDIOC_SETTIMEOUT` sets its timeout (the driver may round it and
//! writes back what it took); `WDIOC_KEEPALIVE` feeds it. PID 1 never closes the device,
//! so the "magic close" (`V`) that would disarm it is never written.
//!
//! The feeding runs on its own thread, but only while the main sequence beats
//! ([`heart::beat`]: every console line, every persisted document, every worker-wait
//! tick): a main sequence silent for longer than the stall limit stops the feeding and
//! the watchdog resets the board one timeout later. Once results are served
//! ([`heart::serving`]) the thread feeds for good: the server loop bounds every client
//! itself.

use std::time::Duration;

use benchboot_plan::Supervision;
use benchboot_results::Reading;

use crate::{console, heart, sys};

/// The watchdog device of the kernel's watchdog core.
pub const DEVICE: &str = "/dev/watchdog";

/// How long the main sequence may stay silent before the feeding stops, ns: one worker's
/// whole limit (a worker's wait beats, but a step's own code between workers does not)
/// plus the watchdog timeout.
pub fn stall_limit_ns(s: &Supervision) -> u64 {
    s.worker_limit_ms
        .saturating_mul(1_000_000)
        .saturating_add(u64::from(s.watchdog_timeout_s).saturating_mul(1_000_000_000))
}

/// Whether to feed the watchdog at `now_ns` (CLOCK_BOOTTIME): always once serving, else
/// while the last beat is younger than `stall_ns`.
pub fn should_feed(now_ns: u64, last_beat_ns: u64, stall_ns: u64, serving: bool) -> bool {
    serving || now_ns.saturating_sub(last_beat_ns) < stall_ns
}

/// Arms the watchdog with the plan's timeout and starts the feeding thread. Returns the
/// timeout the driver took, or why there is no watchdog (no device: QEMU machines and
/// kernels without the driver; `watchdog_timeout_s = 0` in the plan).
pub fn start(s: &Supervision) -> Reading<u32> {
    if s.watchdog_timeout_s == 0 {
        return Reading::unavailable("plan: supervision.watchdog_timeout_s = 0");
    }
    heart::beat();
    let file = match sys::watchdog_open(std::path::Path::new(DEVICE), s.watchdog_timeout_s) {
        Ok((f, took)) => (f, took),
        Err(e) => return Reading::unavailable(format!("{DEVICE}: {e}")),
    };
    let (file, took) = file;
    let stall = stall_limit_ns(s);
    // Feed at a quarter of the timeout the driver runs with, at least every second
    // (every second when it is unknown: `took` = 0).
    let period = Duration::from_millis((u64::from(took) * 250).max(1000));
    let spawned = std::thread::Builder::new()
        .name("watchdog".into())
        .spawn(move || {
            let mut told = false;
            loop {
                let now = sys::boottime_ns();
                let last = heart::last_beat_ns();
                if should_feed(now, last, stall, heart::is_serving()) {
                    let _ = sys::watchdog_feed(&file);
                    told = false;
                } else if !told {
                    console::print_line(&format!(
                        "watchdog: PID 1 silent for {} s; no longer fed, the board resets \
                         within {took} s",
                        now.saturating_sub(last) / 1_000_000_000
                    ));
                    told = true;
                }
                std::thread::sleep(period);
            }
        });
    match spawned {
        Ok(_) => Reading::ok(took, DEVICE),
        // The device is open and armed but nobody feeds it: it resets the board one
        // timeout from now. Say so; nothing can disarm it without the magic close.
        Err(e) => Reading::unavailable(format!("{DEVICE}: feeding thread: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stall_limit_is_a_worker_limit_plus_the_timeout() {
        let s = Supervision {
            worker_limit_ms: 3_000,
            watchdog_timeout_s: 15,
        };
        assert_eq!(stall_limit_ns(&s), 18_000_000_000);
        let huge = Supervision {
            worker_limit_ms: u64::MAX,
            watchdog_timeout_s: u32::MAX,
        };
        assert_eq!(stall_limit_ns(&huge), u64::MAX);
    }

    #[test]
    fn feeds_while_beating_or_serving() {
        let stall = 10;
        assert!(should_feed(100, 95, stall, false));
        assert!(
            !should_feed(100, 90, stall, false),
            "silent for the whole limit"
        );
        assert!(should_feed(100, 0, stall, true), "serving feeds for good");
        // A beat stamped after `now` was read (another core) still counts as fresh.
        assert!(should_feed(100, 101, stall, false));
    }

    #[test]
    fn no_device_or_a_zero_timeout_is_unavailable_with_the_reason() {
        let off = Supervision {
            worker_limit_ms: 1,
            watchdog_timeout_s: 0,
        };
        assert_eq!(
            start(&off),
            Reading::unavailable("plan: supervision.watchdog_timeout_s = 0")
        );
    }
}
