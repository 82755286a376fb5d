//! The process census: proof that nothing but PID 1 and its own workers ran in user
//! space; kernel threads are listed by name.
//!
//! Kernel threads are told apart by `PF_KTHREAD` (0x00200000, include/linux/sched.h) in
//! the `flags` field of `/proc/<pid>/stat` (proc(5), field 9).

use benchboot_results::{Census, Process};

/// `PF_KTHREAD` from include/linux/sched.h.
pub const PF_KTHREAD: u64 = 0x0020_0000;

/// The fields of one `/proc/<pid>/stat` line that the census needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub pid: u32,
    pub comm: String,
    pub ppid: u32,
    pub flags: u64,
}

/// Parses a `/proc/<pid>/stat` line. `comm` may hold spaces and parentheses, so it is
/// taken between the first `(` and the last `)`. `None` for a malformed line.
pub fn parse_stat(line: &str) -> Option<Stat> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    let pid = line[..open].trim().parse().ok()?;
    let comm = line.get(open + 1..close)?.to_owned();
    let rest: Vec<&str> = line[close + 1..].split_whitespace().collect();
    // rest[0] = state (field 3), rest[1] = ppid (4), rest[6] = flags (9).
    let ppid = rest.get(1)?.parse().ok()?;
    let flags = rest.get(6)?.parse().ok()?;
    Some(Stat {
        pid,
        comm,
        ppid,
        flags,
    })
}

/// Sorts stat entries into a census: user-space processes listed, kernel threads named
/// (in pid order), and the verdict ([`Census::new`]: PID 1 and its workers only?).
pub fn census_of(at: &str, stats: impl IntoIterator<Item = Stat>) -> Census {
    let mut user_processes = Vec::new();
    let mut kernel = Vec::new();
    for s in stats {
        if s.flags & PF_KTHREAD != 0 {
            kernel.push((s.pid, s.comm));
        } else {
            user_processes.push(Process {
                pid: s.pid,
                ppid: s.ppid,
                comm: s.comm,
            });
        }
    }
    kernel.sort_by_key(|k| k.0);
    Census::new(
        at,
        user_processes,
        kernel.into_iter().map(|k| k.1).collect(),
    )
}

/// Reads every `/proc/<pid>/stat` under `proc_root` (processes that exit meanwhile are
/// skipped).
pub fn take(at: &str, proc_root: &std::path::Path) -> std::io::Result<Census> {
    let mut stats = Vec::new();
    for entry in std::fs::read_dir(proc_root)? {
        let entry = entry?;
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(text) = std::fs::read_to_string(entry.path().join("stat")) {
            if let Some(s) = parse_stat(&text) {
                stats.push(s);
            }
        }
    }
    Ok(census_of(at, stats))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Captured from a Debian 6.1 kernel.
    const INIT: &str = "1 (benchboot-init) S 0 0 0 0 -1 4194560 180 0 0 0 1 3 0 0 20 0 1 0 17 2392064 93 4294967295";
    const KTHREADD: &str =
        "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 17 0 0 4294967295";
    const ODD_COMM: &str = "77 (a (b) c) R 1 77 77 0 -1 4194304 5 0 0 0 0 0 0 0 20 0 1 0 900 1 1 1";

    #[test]
    fn parses_fields() {
        let s = parse_stat(INIT).unwrap();
        assert_eq!((s.pid, s.ppid, s.comm.as_str()), (1, 0, "benchboot-init"));
        assert_eq!(s.flags & PF_KTHREAD, 0);
        let k = parse_stat(KTHREADD).unwrap();
        assert_ne!(k.flags & PF_KTHREAD, 0);
    }

    #[test]
    fn comm_with_parens_and_spaces() {
        let s = parse_stat(ODD_COMM).unwrap();
        assert_eq!((s.pid, s.comm.as_str(), s.ppid), (77, "a (b) c", 1));
    }

    #[test]
    fn malformed_is_none() {
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (x) S"), None);
    }

    #[test]
    fn census_counts_kernel_threads_and_lists_user_processes() {
        let c = census_of("t", [INIT, KTHREADD].iter().map(|l| parse_stat(l).unwrap()));
        assert!(c.only_pid1());
        assert_eq!(c.kernel_threads, 1);
        assert_eq!(c.kernel_thread_names, ["kthreadd"]);
        let c = census_of("t", [INIT, ODD_COMM].iter().map(|l| parse_stat(l).unwrap()));
        assert!(!c.only_pid1());
        assert_eq!(c.user_processes[1].pid, 77);
        // Parent 1 but another name than PID 1's: not one of its workers.
        assert_eq!(c.isolated, Some(false));
        assert_eq!(c.foreign[0].comm, "a (b) c");
    }

    /// A fake `/proc` with PID 1, two kernel threads, one worker of PID 1 and, with
    /// `foreign`, a usermode helper the kernel started (parent kthreadd).
    fn fake_proc(root: &std::path::Path, foreign: bool) {
        let mut procs = vec![
            ("1", INIT.to_owned()),
            ("2", KTHREADD.to_owned()),
            (
                "9",
                "9 (kworker/0:1H-kblockd) I 2 0 0 0 -1 69238880 0 0 0 0 0 0 0 0 0 -20 1 0 40 0 0 4294967295".to_owned(),
            ),
            (
                "40",
                "40 (benchboot-init) S 1 1 1 0 -1 4194624 10 0 0 0 0 0 0 0 20 0 1 0 900 2392064 50 4294967295".to_owned(),
            ),
        ];
        if foreign {
            procs.push((
                "77",
                "77 (modprobe) R 2 0 0 0 -1 4194560 3 0 0 0 0 0 0 0 20 0 1 0 950 1 1 1".to_owned(),
            ));
        }
        for (pid, stat) in procs {
            std::fs::create_dir_all(root.join(pid)).unwrap();
            std::fs::write(root.join(pid).join("stat"), stat).unwrap();
        }
        // Not processes: skipped.
        std::fs::create_dir_all(root.join("sys")).unwrap();
        std::fs::write(root.join("uptime"), "1.00 1.00\n").unwrap();
        // A process that exited between readdir and open: no stat, skipped.
        std::fs::create_dir_all(root.join("55")).unwrap();
    }

    #[test]
    fn census_of_a_fake_proc_names_kernel_threads_and_allows_workers() {
        let root = tempfile::tempdir().unwrap();
        fake_proc(root.path(), false);
        let c = take("after-storage", root.path()).unwrap();
        assert_eq!(c.kernel_thread_names, ["kthreadd", "kworker/0:1H-kblockd"]);
        assert_eq!(c.kernel_threads, 2);
        let pids: Vec<u32> = c.user_processes.iter().map(|p| p.pid).collect();
        assert_eq!(pids, [1, 40]);
        assert_eq!(c.isolated, Some(true), "a worker of PID 1 is allowed");
        assert!(c.foreign.is_empty());
        assert_eq!(c.workers(), 1);
    }

    #[test]
    fn census_of_a_fake_proc_flags_a_foreign_process() {
        let root = tempfile::tempdir().unwrap();
        fake_proc(root.path(), true);
        let c = take("after-storage", root.path()).unwrap();
        assert_eq!(c.isolated, Some(false));
        assert_eq!(c.foreign.len(), 1);
        assert_eq!(
            (
                c.foreign[0].pid,
                c.foreign[0].ppid,
                c.foreign[0].comm.as_str()
            ),
            (77, 2, "modprobe")
        );
        assert_eq!(c.user_processes.len(), 3);
    }

    #[test]
    fn census_of_a_missing_proc_is_an_error() {
        let root = tempfile::tempdir().unwrap();
        assert!(take("x", &root.path().join("absent")).is_err());
    }

    #[test]
    fn host_census_finds_this_process() {
        let c = take("host", std::path::Path::new("/proc")).unwrap();
        let me = std::process::id();
        assert!(c.user_processes.iter().any(|p| p.pid == me));
    }
}
