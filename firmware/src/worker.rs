//! Worker supervision: PID 1 runs each measurement in a forked child under a time
//! limit, so a crash, panic, error exit or hang there is a recorded [`WorkerFailure`]
//! instead of the end of PID 1 (and so a kernel panic). Also the reaping of children:
//! PID 1 inherits every orphan.
//!
//! Above [`crate::sys`] (the fork itself) and [`crate::heart`] (a wait is progress);
//! safe code over rustix's `pipe`, `poll`, `waitpid` and `kill`.

use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use benchboot_results::WorkerFailure;
use rustix::event::{PollFd, PollFlags};
use rustix::process::{Pid, Signal, WaitOptions, WaitStatus};

use crate::{heart, sys};

/// Exit status a worker uses to say it panicked (its panic message is on the pipe).
/// 101 is what a Rust program exits with after a panic.
const PANIC_EXIT: i32 = 101;

/// Runs `work` in a forked child (`fork(2)`, `pipe(2)`, `poll(2)`, `waitpid(2)`) and
/// returns what it produced and how long it ran (ns of CLOCK_BOOTTIME). A crash, panic,
/// non-zero exit or a run past `limit` (the child is then killed with SIGKILL) becomes a
/// [`WorkerFailure`] here instead of taking PID 1 (and so the kernel) down. The wait
/// beats the watchdog heart ([`crate::heart::beat`]) at least once a second.
pub fn run_worker(
    limit: Duration,
    work: impl FnOnce() -> String,
) -> (Result<String, WorkerFailure>, u64) {
    let started = sys::boottime_ns();
    let outcome = supervise(limit, work);
    (outcome, sys::boottime_ns().saturating_sub(started))
}

fn supervise(limit: Duration, work: impl FnOnce() -> String) -> Result<String, WorkerFailure> {
    let start_failed = |e: &dyn std::fmt::Display| WorkerFailure::Start {
        message: e.to_string(),
    };
    let (read_end, write_end) = rustix::pipe::pipe().map_err(|e| start_failed(&e))?;
    // The child takes the write end out; in PID 1 it stays here and is dropped below.
    let mut write_end = Some(write_end);
    // PID 1's main thread forks while no other thread of it holds a lock the child
    // needs (musl's malloc is fork-safe); the child runs `work`, then _exit(2).
    let pid = sys::spawn_child(|| {
        let Some(pipe) = write_end.take() else {
            return 1;
        };
        let pipe = Arc::new(std::fs::File::from(pipe));
        let hook_pipe = Arc::clone(&pipe);
        // PID 1's hook would keep the child alive: a worker reports its panic and ends.
        std::panic::set_hook(Box::new(move |info| {
            let msg = info.to_string().replace('\n', " ");
            let _ = io::Write::write_all(&mut &*hook_pipe, msg.as_bytes());
            sys::exit_now(PANIC_EXIT);
        }));
        let out = work();
        let ok = io::Write::write_all(&mut &*pipe, out.as_bytes()).is_ok();
        if ok {
            0
        } else {
            1
        }
    })
    .map_err(|e| start_failed(&e))?;
    drop(write_end);
    let Some(worker) = child(pid) else {
        return Err(start_failed(&format!("fork returned pid {pid}")));
    };
    let deadline = Instant::now() + limit;
    let mut out = Vec::new();
    let mut pipe = std::fs::File::from(read_end);
    let mut open = true;
    let status = loop {
        heart::beat();
        if !open {
            match rustix::process::waitpid(Some(worker), WaitOptions::NOHANG) {
                Ok(Some((_, status))) => break status,
                Ok(None) | Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(start_failed(&io::Error::from(e))),
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            kill_and_reap(pid);
            return Err(WorkerFailure::TimedOut {
                limit_ms: limit.as_millis() as u64,
            });
        }
        if open {
            let wait_ms = left.as_millis().clamp(1, 1000) as u64;
            let wait = rustix::time::Timespec {
                tv_sec: (wait_ms / 1000) as _,
                tv_nsec: ((wait_ms % 1000) * 1_000_000) as _,
            };
            let ready = {
                let mut fds = [PollFd::new(&pipe, PollFlags::IN)];
                matches!(rustix::event::poll(&mut fds, Some(&wait)), Ok(n) if n > 0)
            };
            if ready {
                let mut buf = [0u8; 4096];
                match io::Read::read(&mut pipe, &mut buf) {
                    Ok(0) => open = false,
                    Ok(n) => out.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => open = false,
                }
            }
        } else {
            std::thread::sleep(Duration::from_millis(left.as_millis().min(10) as u64));
        }
    };
    let out = String::from_utf8_lossy(&out).into_owned();
    if let Some(signal) = status.terminating_signal() {
        return Err(WorkerFailure::Signal {
            signal,
            name: signal_name(signal).to_owned(),
        });
    }
    match exit_status(status) {
        0 => Ok(out),
        PANIC_EXIT => Err(WorkerFailure::Panic { message: out }),
        code => Err(WorkerFailure::Exit { code }),
    }
}

/// A child's pid as rustix takes it: `None` for 0 and negative numbers (process
/// groups, which no caller here means).
fn child(pid: i32) -> Option<Pid> {
    if pid > 0 {
        Pid::from_raw(pid)
    } else {
        None
    }
}

/// `WEXITSTATUS(status)`: the exit code of a child that was not killed by a signal.
fn exit_status(status: WaitStatus) -> i32 {
    status
        .exit_status()
        .unwrap_or((status.as_raw() >> 8) & 0xff)
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
    while let Ok(Some(_)) = rustix::process::waitpid(None, WaitOptions::NOHANG) {}
}

/// The exit status of child `pid` if it has ended (`waitpid(WNOHANG)`, which reaps it):
/// its exit code, or 128 + the signal that killed it; `None` while it runs.
pub fn exit_code(pid: i32) -> Option<i32> {
    let (_, status) = rustix::process::waitpid(Some(child(pid)?), WaitOptions::NOHANG)
        .ok()
        .flatten()?;
    Some(match status.terminating_signal() {
        Some(signal) => 128 + signal,
        None => exit_status(status),
    })
}

/// Sends SIGKILL to `pid` and waits for it (`kill(2)`, `waitpid(2)`). A pid that is no
/// process (0 or negative: a process group) is left alone.
pub fn kill_and_reap(pid: i32) {
    let Some(pid) = child(pid) else {
        return;
    };
    let _ = rustix::process::kill_process(pid, Signal::KILL);
    let _ = rustix::process::waitpid(Some(pid), WaitOptions::empty());
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn worker_returns_output_and_its_time() {
        let (out, ns) = run_worker(10 * SECOND, || {
            std::thread::sleep(Duration::from_millis(20));
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
        let (r, _) = run_worker(10 * SECOND, || sys::segfault());
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
        let (r, _) = run_worker(10 * SECOND, || sys::exit_now(7));
        assert_eq!(r, Err(WorkerFailure::Exit { code: 7 }));
    }

    #[test]
    fn a_hung_worker_is_killed_at_its_limit() {
        let limit = Duration::from_millis(300);
        let (r, ns) = run_worker(limit, || loop {
            std::thread::sleep(SECOND);
        });
        assert_eq!(r, Err(WorkerFailure::TimedOut { limit_ms: 300 }));
        assert!((300_000_000..5_000_000_000).contains(&ns), "{ns} ns");
        // A worker that closed its pipe and then hangs is bounded too.
        let (r, _) = run_worker(limit, || {
            sys::close_descriptors_above_stderr();
            loop {
                std::thread::sleep(SECOND);
            }
        });
        assert_eq!(r, Err(WorkerFailure::TimedOut { limit_ms: 300 }));
    }

    #[test]
    fn children_end_with_their_code_or_signal() {
        let pid = sys::spawn_child(|| 9).unwrap();
        let code = loop {
            if let Some(c) = exit_code(pid) {
                break c;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        assert_eq!(code, 9);
        let pid = sys::spawn_child(|| loop {
            std::thread::sleep(SECOND);
        })
        .unwrap();
        assert_eq!(exit_code(pid), None, "still running");
        kill_and_reap(pid);
        assert_eq!(exit_code(pid), None, "reaped: no such child any more");
        assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
        assert_eq!(signal_name(64), "?");
    }
}
