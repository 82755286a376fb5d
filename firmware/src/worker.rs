//! Worker supervision: PID 1 runs each measurement in a forked child under a time
//! limit, so a crash, panic, error exit or hang there is a recorded [`WorkerFailure`]
//! instead of the end of PID 1 (and so a kernel panic). Also the reaping of children:
//! PID 1 inherits every orphan.
//!
//! Above [`crate::sys`] (the fork itself) and [`crate::heart`] (a wait is progress);
//! safe code over rustix's `pipe`, `poll`, `waitpid` and `kill`.

use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use benchboot_results::WorkerFailure;
use rustix::event::{PollFd, PollFlags};
use rustix::process::{Pid, Signal, WaitOptions, WaitStatus};

use crate::{heart, sys};

// The exit status a worker uses to say it panicked (its panic message is on the pipe),
// the one `sys::spawn_child` gives a child whose panic unwinds.
use crate::sys::PANIC_EXIT;

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
    // The child runs `work`, then _exit(2) (`sys::spawn_child` keeps fork's contract:
    // a lock another thread of PID 1 held at the fork would hang the child, which the
    // limit below ends).
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

/// Most of a program's standard output [`run_program`] keeps, bytes (1 MiB); the rest
/// is read and dropped so the program never blocks on a full pipe.
pub const MAX_PROGRAM_OUTPUT: usize = 1 << 20;

/// What [`run_program`] saw.
#[derive(Debug)]
pub struct ProgramRun {
    /// `Ok(())` for exit status 0; else how it failed: could not be started, killed by
    /// a signal, still running at the limit (killed), non-zero exit.
    pub outcome: Result<(), WorkerFailure>,
    /// Its exit status when it ended on its own.
    pub exit_code: Option<i32>,
    /// Its standard output, at most [`MAX_PROGRAM_OUTPUT`] bytes (lossy UTF-8).
    pub stdout: String,
    /// True when it printed more than [`MAX_PROGRAM_OUTPUT`].
    pub truncated: bool,
    /// From the start to its end (or its kill), ns of CLOCK_BOOTTIME.
    pub elapsed_ns: u64,
}

/// Runs the program at `path` with `args` in folder `dir`, stdin from /dev/null,
/// stdout captured (a pipe), stderr on PID 1's console, bounded by `limit`: then its
/// whole process group gets SIGKILL ([`WorkerFailure::TimedOut`]). The program leads a
/// process group of its own, which is killed when it ends too, so nothing it started
/// outlives its step. The wait beats the watchdog heart at least every 100 ms. Never
/// panics: a missing binary is [`WorkerFailure::Start`].
pub fn run_program(path: &Path, args: &[String], dir: &Path, limit: Duration) -> ProgramRun {
    let started = sys::boottime_ns();
    let mut run = ProgramRun {
        outcome: Ok(()),
        exit_code: None,
        stdout: String::new(),
        truncated: false,
        elapsed_ns: 0,
    };
    let spawned = std::process::Command::new(path)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        .spawn();
    let mut program = match spawned {
        Ok(c) => c,
        Err(e) => {
            run.outcome = Err(WorkerFailure::Start {
                message: format!("cannot run {}: {e}", path.display()),
            });
            return run;
        }
    };
    let group = i32::try_from(program.id()).ok().and_then(child);
    let kill_group = || {
        if let Some(g) = group {
            let _ = rustix::process::kill_process_group(g, Signal::KILL);
        }
    };
    let deadline = Instant::now() + limit;
    let mut out = Vec::new();
    let mut pipe = program.stdout.take();
    let end = loop {
        heart::beat();
        if let Some(p) = &mut pipe {
            if !read_some(p, &mut out, &mut run.truncated, 100) {
                pipe = None;
            }
        } else {
            std::thread::sleep(Duration::from_millis(10));
        }
        match program.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if Instant::now() < deadline => {}
            Ok(None) => {
                break Err(WorkerFailure::TimedOut {
                    limit_ms: limit.as_millis() as u64,
                })
            }
            Err(e) => {
                break Err(WorkerFailure::Start {
                    message: format!("waiting for {}: {e}", path.display()),
                })
            }
        }
    };
    // Whatever it left running ends now (on a timeout: the program too); what it wrote
    // is still in the pipe: drained, for at most a second (a descendant that left the
    // group could keep writing).
    kill_group();
    if end.is_err() {
        let _ = program.wait();
    }
    let drain_until = Instant::now() + Duration::from_secs(1);
    if let Some(p) = &mut pipe {
        while Instant::now() < drain_until && read_some(p, &mut out, &mut run.truncated, 0) {}
    }
    run.stdout = String::from_utf8_lossy(&out).into_owned();
    run.elapsed_ns = sys::boottime_ns().saturating_sub(started);
    run.outcome = match end {
        Err(failure) => Err(failure),
        Ok(status) => {
            run.exit_code = status.code();
            match (status.code(), status.signal()) {
                (Some(0), _) => Ok(()),
                (Some(code), _) => Err(WorkerFailure::Exit { code }),
                (None, Some(signal)) => Err(WorkerFailure::Signal {
                    signal,
                    name: signal_name(signal).to_owned(),
                }),
                (None, None) => Err(WorkerFailure::Start {
                    message: format!("{}: ended with status {status}", path.display()),
                }),
            }
        }
    };
    run
}

/// Waits up to `wait_ms` for `pipe` to be readable and reads what is there into `out`
/// (beyond [`MAX_PROGRAM_OUTPUT`] it is dropped and `truncated` set). False once the
/// pipe is closed (end of file, or an error), and with `wait_ms` 0 when nothing is
/// there now; true otherwise.
fn read_some(
    pipe: &mut std::process::ChildStdout,
    out: &mut Vec<u8>,
    truncated: &mut bool,
    wait_ms: u64,
) -> bool {
    let wait = rustix::time::Timespec {
        tv_sec: (wait_ms / 1000) as _,
        tv_nsec: ((wait_ms % 1000) * 1_000_000) as _,
    };
    let ready = {
        let mut fds = [PollFd::new(&*pipe, PollFlags::IN)];
        match rustix::event::poll(&mut fds, Some(&wait)) {
            Ok(n) => n > 0,
            Err(rustix::io::Errno::INTR) => return true,
            Err(_) => return false,
        }
    };
    if !ready {
        return wait_ms > 0;
    }
    let mut buf = [0u8; 4096];
    match io::Read::read(pipe, &mut buf) {
        Ok(0) => false,
        Ok(n) => {
            let room = MAX_PROGRAM_OUTPUT.saturating_sub(out.len());
            out.extend_from_slice(&buf[..n.min(room)]);
            *truncated |= n > room;
            true
        }
        Err(e) if e.kind() == io::ErrorKind::Interrupted => true,
        Err(_) => false,
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

    /// True once process `pid` is gone or a zombie (within 3 s).
    fn ends(pid: &str) -> bool {
        let stat = Path::new("/proc").join(pid.trim()).join("stat");
        for _ in 0..300 {
            match std::fs::read_to_string(&stat) {
                Err(_) => return true,
                Ok(s)
                    if s.rsplit(')')
                        .next()
                        .is_some_and(|r| r.trim_start().starts_with('Z')) =>
                {
                    return true
                }
                Ok(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
        false
    }

    fn sh(script: &str) -> Vec<String> {
        vec!["-c".into(), script.into()]
    }

    #[test]
    fn a_program_runs_with_its_output_captured() {
        let dir = tempfile::tempdir().unwrap();
        let run = run_program(
            Path::new("/bin/sh"),
            &sh("echo \"case=a value=$0 units=s\" ; pwd; echo to-stderr >&2"),
            dir.path(),
            10 * SECOND,
        );
        assert_eq!(run.outcome, Ok(()));
        assert_eq!(run.exit_code, Some(0));
        let here = dir.path().canonicalize().unwrap();
        assert_eq!(
            run.stdout,
            format!("case=a value=/bin/sh units=s\n{}\n", here.display())
        );
        assert!(!run.truncated);
        assert!(run.elapsed_ns > 0 && run.elapsed_ns < 10_000_000_000);

        let run = run_program(Path::new("/bin/sh"), &sh("exit 4"), dir.path(), SECOND);
        assert_eq!(run.outcome, Err(WorkerFailure::Exit { code: 4 }));
        assert_eq!(run.exit_code, Some(4));
        let run = run_program(
            Path::new("/bin/sh"),
            &sh("kill -SEGV $$"),
            dir.path(),
            SECOND,
        );
        assert_eq!(
            run.outcome,
            Err(WorkerFailure::Signal {
                signal: libc::SIGSEGV,
                name: "SIGSEGV".into()
            })
        );
        assert_eq!(run.exit_code, None);
        let run = run_program(&dir.path().join("nope"), &[], dir.path(), SECOND);
        match run.outcome {
            Err(WorkerFailure::Start { message }) => {
                assert!(
                    message.starts_with("cannot run ") && message.contains("nope"),
                    "{message}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_program_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        // A background child holding the pipe: the run ends with the program, and the
        // child with it.
        let started = Instant::now();
        let run = run_program(
            Path::new("/bin/sh"),
            &sh("sleep 30 & echo $!"),
            dir.path(),
            10 * SECOND,
        );
        assert_eq!(run.outcome, Ok(()));
        assert!(started.elapsed() < 5 * SECOND, "{:?}", started.elapsed());
        assert!(
            ends(&run.stdout),
            "background child {} still runs",
            run.stdout
        );

        // At its limit the whole group is killed.
        let run = run_program(
            Path::new("/bin/sh"),
            &sh("sleep 30 & echo $!; sleep 30"),
            dir.path(),
            Duration::from_millis(300),
        );
        assert_eq!(run.outcome, Err(WorkerFailure::TimedOut { limit_ms: 300 }));
        assert_eq!(run.exit_code, None);
        assert!((300_000_000..5_000_000_000).contains(&run.elapsed_ns));
        assert!(
            ends(&run.stdout),
            "background child {} still runs",
            run.stdout
        );
    }

    #[test]
    fn program_output_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        // 2 MiB of output: 1 MiB kept, the program not blocked.
        let run = run_program(
            Path::new("/bin/sh"),
            &sh("head -c 2097152 /dev/zero | tr '\\0' x"),
            dir.path(),
            10 * SECOND,
        );
        assert_eq!(run.outcome, Ok(()));
        assert!(run.truncated);
        assert_eq!(run.stdout.len(), MAX_PROGRAM_OUTPUT);
    }
}
