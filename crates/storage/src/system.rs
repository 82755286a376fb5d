//! What the running kernel says about the machine under test (`uname`, `/proc/meminfo`):
//! the system part of a results document, on the board and on a host run alike.

use benchboot_results::{Reading, SystemInfo};

/// What the running kernel says about this machine (`uname`, `/proc/meminfo`);
/// `init_started_ns` is PID 1's start on CLOCK_BOOTTIME (0 on a host run).
pub fn system_info(init_started_ns: u64) -> SystemInfo {
    let uname = rustix::system::uname();
    let mem_total_bytes = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| parse_meminfo_total(&t))
        .unwrap_or(0);
    SystemInfo {
        kernel_release: uname.release().to_string_lossy().into_owned(),
        machine: uname.machine().to_string_lossy().into_owned(),
        mem_total_bytes,
        init_started_ns,
        written_ns: 0,
        governor: None,
        // PID 1 reads these itself (the firmware's `device::kernel_cmdline` and
        // `device::modules`); a host run (`benchboot storage`) leaves the host's out.
        kernel_cmdline: Reading::default(),
        modules: Reading::default(),
        watchdog_timeout_s: Reading::default(),
        previous_run: None,
    }
}

/// `MemTotal:  499012 kB` → bytes (proc(5): the kB there are KiB).
pub fn parse_meminfo_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_total_in_bytes() {
        let text = "MemTotal:         441396 kB\nMemFree:          400000 kB\n";
        assert_eq!(parse_meminfo_total(text), Some(441_396 * 1024));
        assert_eq!(parse_meminfo_total("MemFree: 1 kB"), None);
    }
}
