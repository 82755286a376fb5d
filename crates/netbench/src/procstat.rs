//! System-wide CPU time from the `cpu ` line of `/proc/stat` (proc(5)).
//!
//! The line holds cumulative jiffies (USER_HZ ticks) for all CPUs since boot:
//! `user nice system idle iowait irq softirq steal guest guest_nice`. Older kernels print
//! fewer fields (iowait since 2.5.41, irq and softirq since 2.6.0, steal since 2.6.11);
//! missing ones read as 0. `guest` and `guest_nice` are already counted in `user` and
//! `nice`, so they are not added again. Sampling system-wide time (not the process's own)
//! is what shows the softirq work of a network stack (measuring.md, CPU accounting).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use benchboot_results::network::CpuTimes;

/// Parses the aggregate `cpu ` line of a `/proc/stat` text into absolute counters.
/// `None` when there is no such line or it has fewer than the 4 fields of Linux 2.4.
pub fn parse(text: &str) -> Option<CpuTimes> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let mut f = [0u64; 8];
    let mut n = 0;
    for (slot, word) in f.iter_mut().zip(line.split_whitespace().skip(1)) {
        *slot = word.parse().ok()?;
        n += 1;
    }
    if n < 4 {
        return None;
    }
    Some(CpuTimes {
        user: f[0],
        nice: f[1],
        system: f[2],
        idle: f[3],
        iowait: f[4],
        irq: f[5],
        softirq: f[6],
        steal: f[7],
    })
}

/// `after - before` field by field, saturating at 0 (a counter that went backwards, as
/// iowait can on some kernels, counts as no time).
pub fn delta(before: &CpuTimes, after: &CpuTimes) -> CpuTimes {
    CpuTimes {
        user: after.user.saturating_sub(before.user),
        nice: after.nice.saturating_sub(before.nice),
        system: after.system.saturating_sub(before.system),
        idle: after.idle.saturating_sub(before.idle),
        iowait: after.iowait.saturating_sub(before.iowait),
        irq: after.irq.saturating_sub(before.irq),
        softirq: after.softirq.saturating_sub(before.softirq),
        steal: after.steal.saturating_sub(before.steal),
    }
}

/// Reads the `cpu ` line again and again with one reused buffer. A failure reads as
/// all zeros (so a missing `/proc` costs the CPU figures, not the test) and the first
/// one is kept for [`Reader::take_error`].
#[derive(Debug)]
pub struct Reader {
    path: PathBuf,
    buf: Vec<u8>,
    error: Option<String>,
}

/// The `cpu ` line is the first one and far shorter than this.
const HEAD: usize = 4096;

impl Reader {
    pub fn new(path: &Path) -> Reader {
        Reader {
            path: path.to_owned(),
            buf: vec![0; HEAD],
            error: None,
        }
    }

    /// Absolute counters now; zeros if the file cannot be read or parsed.
    pub fn read(&mut self) -> CpuTimes {
        match self.try_read() {
            Ok(t) => t,
            Err(e) => {
                if self.error.is_none() {
                    self.error = Some(format!("reading {}: {e}", self.path.display()));
                }
                CpuTimes::default()
            }
        }
    }

    fn try_read(&mut self) -> Result<CpuTimes, String> {
        let mut f = File::open(&self.path).map_err(|e| e.to_string())?;
        // Only the head: the first line is the aggregate one.
        let mut len = 0;
        while len < HEAD {
            let n = match f.read(&mut self.buf[len..]) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.to_string()),
            };
            if n == 0 || self.buf[len..len + n].contains(&b'\n') {
                len += n;
                break;
            }
            len += n;
        }
        let text = String::from_utf8_lossy(&self.buf[..len]);
        parse(&text).ok_or_else(|| "no `cpu ` line with at least 4 fields".to_owned())
    }

    /// The first failure since the last call, if any.
    pub fn take_error(&mut self) -> Option<String> {
        self.error.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Linux 6.1 on a 4-core Pi 4 (10 fields; guest, guest_nice are not summed again).
    const LINUX_6: &str = "cpu  10132153 290696 3084719 46828483 16683 0 25195 0 175628 0\n\
cpu0 1393280 32966 572056 13343292 6130 0 17875 0 23933 0\n\
intr 199292 0 0 0\nctxt 31524232\nbtime 1700000000\n";

    #[test]
    fn reads_the_aggregate_line_of_a_current_kernel() {
        let t = parse(LINUX_6).unwrap();
        assert_eq!(
            t,
            CpuTimes {
                user: 10132153,
                nice: 290696,
                system: 3084719,
                idle: 46828483,
                iowait: 16683,
                irq: 0,
                softirq: 25195,
                steal: 0,
            }
        );
    }

    #[test]
    fn older_kernels_print_fewer_fields() {
        // 2.6.11 .. 2.6.23: 8 fields (steal, no guest).
        let t = parse("cpu  2255 34 2290 22625563 6290 127 456 7\ncpu0 1 2 3 4 5 6 7 8\n").unwrap();
        assert_eq!((t.irq, t.softirq, t.steal), (127, 456, 7));
        // 2.6.0 .. 2.6.10: 7 fields.
        let t = parse("cpu  2255 34 2290 22625563 6290 127 456\n").unwrap();
        assert_eq!((t.iowait, t.softirq, t.steal), (6290, 456, 0));
        // 2.4: user nice system idle only.
        let t = parse("cpu  2255 34 2290 22625563\ncpu0 2255 34 2290 22625563\n").unwrap();
        assert_eq!(
            t,
            CpuTimes {
                user: 2255,
                nice: 34,
                system: 2290,
                idle: 22625563,
                ..CpuTimes::default()
            }
        );
    }

    #[test]
    fn refuses_what_is_not_a_cpu_line() {
        assert_eq!(parse(""), None);
        // Only per-CPU lines: `cpu0` is not the aggregate.
        assert_eq!(parse("cpu0 1 2 3 4 5 6 7\n"), None);
        assert_eq!(parse("cpu  1 2 3\n"), None);
        assert_eq!(parse("cpu  1 2 x 4\n"), None);
    }

    #[test]
    fn delta_saturates() {
        let a = parse("cpu  100 0 50 1000 20 0 5 0\n").unwrap();
        let b = parse("cpu  150 1 80 1100 10 2 9 0\n").unwrap();
        let d = delta(&a, &b);
        assert_eq!(
            d,
            CpuTimes {
                user: 50,
                nice: 1,
                system: 30,
                idle: 100,
                iowait: 0, // went backwards: 0, not a wrap
                irq: 2,
                softirq: 4,
                steal: 0,
            }
        );
        assert_eq!(d.total(), 187);
    }

    #[test]
    fn reader_reads_a_file_and_keeps_the_first_error() {
        let dir = std::env::temp_dir().join(format!("netbench-procstat-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("stat");
        std::fs::write(&path, LINUX_6).unwrap();
        let mut r = Reader::new(&path);
        assert_eq!(r.read().user, 10132153);
        assert_eq!(r.take_error(), None);
        let mut missing = Reader::new(&dir.join("nope"));
        assert_eq!(missing.read(), CpuTimes::default());
        missing.read();
        let e = missing.take_error().unwrap();
        assert!(e.starts_with("reading ") && e.contains("nope"), "{e}");
        assert_eq!(missing.take_error(), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reads_this_machines_proc_stat() {
        let path = Path::new("/proc/stat");
        if !path.exists() {
            return;
        }
        let mut r = Reader::new(path);
        let t = r.read();
        assert!(r.take_error().is_none());
        assert!(t.total() > 0);
    }
}
