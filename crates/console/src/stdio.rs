//! What the kernel gave PID 1 as its standard fds: the console, or nothing at all.
//!
//! The kernel opens `/dev/console` (char 5:1) for /init as fds 0, 1 and 2 (init/main.c
//! `console_on_rootfs`). When no console is registered, e.g. `console=` names a tty the
//! kernel does not have (`console=ttyS0` on a BeagleBone Black, whose armmp UARTs are
//! `ttyO0..5`), the open fails, the kernel logs [`KERNEL_NO_CONSOLE`] and /init starts
//! with fds 0-2 closed. Rust's runtime reopens closed fds 0-2 on `/dev/null` before
//! `main` (std `sys::pal::unix::init`, `sanitize_standard_fds`) and aborts when it cannot,
//! which is why every initramfs carries `/dev/null`. PID 1 then writes its console lines
//! to `/dev/null`: the run goes on, and [`missing_console`] says so in the results.

/// The line the kernel logs when it cannot open `/dev/console` for /init (init/main.c
/// `console_on_rootfs`, Linux 6.1).
pub const KERNEL_NO_CONSOLE: &str = "Warning: unable to open an initial console.";

/// What fd 1 of PID 1 is, from `fstat(2)`'s `st_mode` and `st_rdev`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdout {
    /// Char device 5:1, `/dev/console` (Documentation/admin-guide/devices.txt).
    Console,
    /// Char device 1:3, `/dev/null`: the kernel had no console to give.
    Null,
    /// Anything else (another tty, a pipe, a file): not ours to judge.
    Other,
}

impl Stdout {
    /// Classifies a file by whether it is a character device and its device number.
    pub fn classify(char_device: bool, major: u32, minor: u32) -> Stdout {
        match (char_device, major, minor) {
            (true, 5, 1) => Stdout::Console,
            (true, 1, 3) => Stdout::Null,
            _ => Stdout::Other,
        }
    }
}

/// The device names of every `console=` on the kernel command line, in order, each
/// without its options (`console=ttyS1,115200` → `ttyS1`).
pub fn console_names(cmdline: &str) -> Vec<&str> {
    cmdline
        .split_whitespace()
        .filter_map(|p| p.strip_prefix("console="))
        .map(|v| v.split(',').next().unwrap_or(v))
        .collect()
}

/// The warning PID 1 records when it started with no console (`stdout` is
/// [`Stdout::Null`]): what happened, the `console=` names of `cmdline` that match no
/// tty, whether the kernel's log (`kernel_log`, when it could be read) has
/// [`KERNEL_NO_CONSOLE`], and what to do. `None` when PID 1 has a console. Names from
/// the command line are escaped (no control characters reach a terminal).
pub fn missing_console(stdout: Stdout, cmdline: &str, kernel_log: Option<&str>) -> Option<String> {
    if stdout != Stdout::Null {
        return None;
    }
    let names: Vec<String> = console_names(cmdline)
        .iter()
        .map(|n| format!("console={}", n.escape_debug()))
        .collect();
    let kernel = match kernel_log {
        Some(log) if log.contains(KERNEL_NO_CONSOLE) => {
            format!("; the kernel logged \"{KERNEL_NO_CONSOLE}\"")
        }
        Some(_) => String::new(),
        None => "; the kernel log could not be read".into(),
    };
    let cause = if names.is_empty() {
        "the command line has no console= and the kernel registered no console of its own"
            .to_owned()
    } else {
        format!(
            "{} names no tty this kernel registered",
            names.join(" and ")
        )
    };
    Some(format!(
        "PID 1 started with no console: fds 0-2 are /dev/null (char 1:3){kernel}; {cause}. \
         The run went on and its console lines were lost; set console= to the board's \
         serial port ([boot] console of its board file) to see them"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdout_by_device_number() {
        assert_eq!(Stdout::classify(true, 5, 1), Stdout::Console);
        assert_eq!(Stdout::classify(true, 1, 3), Stdout::Null);
        // ttyAMA0 (204:64), a pipe, a regular file: not judged.
        assert_eq!(Stdout::classify(true, 204, 64), Stdout::Other);
        assert_eq!(Stdout::classify(false, 1, 3), Stdout::Other);
    }

    #[test]
    fn console_names_drop_options() {
        assert_eq!(
            console_names("loglevel=4 console=ttyS1,115200 rootwait console=tty0"),
            ["ttyS1", "tty0"]
        );
        assert!(console_names("quiet").is_empty());
    }

    #[test]
    fn missing_console_names_the_cause_and_the_fix() {
        let cmdline = "console=ttyNONE0,115200 loglevel=4 benchboot.plan=qemu";
        let log = "<3>[    0.9] Warning: unable to open an initial console.\n";
        assert_eq!(missing_console(Stdout::Console, cmdline, Some(log)), None);
        assert_eq!(missing_console(Stdout::Other, cmdline, Some(log)), None);
        let m = missing_console(Stdout::Null, cmdline, Some(log)).unwrap();
        assert!(m.contains("fds 0-2 are /dev/null"), "{m}");
        assert!(m.contains("console=ttyNONE0 names no tty"), "{m}");
        assert!(m.contains(KERNEL_NO_CONSOLE), "{m}");
        assert!(m.contains("[boot] console"), "{m}");
        let m = missing_console(Stdout::Null, "quiet", None).unwrap();
        assert!(
            m.contains("no console=") && m.contains("could not be read"),
            "{m}"
        );
        assert!(!m.contains(KERNEL_NO_CONSOLE), "{m}");
        // A control character on the command line does not reach a terminal.
        let m = missing_console(Stdout::Null, "console=tty\u{1b}[2J", Some("")).unwrap();
        assert!(!m.contains('\u{1b}'), "{m}");
        assert!(m.contains("console=tty\\u{1b}[2J"), "{m}");
    }
}
