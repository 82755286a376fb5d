//! FNIRSI FNB48 / FNB48S / FNB58 / C1 meters over USB HID, behind a small transport
//! trait ([`HidTransport`]) so the meter logic is tested with replayed reports.
//!
//! Linux: the kernel's hidraw nodes (`/dev/hidrawN`, `CONFIG_HIDRAW=y` on the pinned
//! configs), found through `/sys/class/hidraw/hidrawN/device/uevent`'s
//! `HID_ID=0003:0000VVVV:0000PPPP` (bus 3 = USB), read and written as plain files: each
//! read gives one 64-byte input report; a write is the report number (0: the meters use
//! none) and the 64 bytes (kernel `Documentation/hid/hidraw.rst`). Other OSes: not
//! supported yet (record with fnirsi_logger.py and import its CSV).

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use benchboot_energy::decode::fnirsi::{self, Model, REPORT_LEN};
use benchboot_energy::Sample;

use super::Found;
use crate::power::Meter;

/// The few operations a HID meter needs.
pub trait HidTransport {
    /// Sends one 64-byte output report.
    ///
    /// # Errors
    /// The device is gone or refuses it.
    fn write_report(&mut self, report: &[u8; REPORT_LEN]) -> std::io::Result<()>;
    /// The next input report, or `None` when none came within `timeout`.
    ///
    /// # Errors
    /// The device is gone, or a report of another length came.
    fn read_report(&mut self, timeout: Duration) -> std::io::Result<Option<[u8; REPORT_LEN]>>;
}

/// The most sample reports in a row with a bad CRC before the meter gives up (1 s of
/// reports at 25 a second): one damaged report is skipped, a stream of them is not a
/// FNIRSI meter's.
pub const MAX_BAD_REPORTS: usize = 25;

/// How many sample reports one [`Meter::read`] gathers: 10 (40 samples, 0.1 s).
pub const REPORTS_PER_READ: usize = 10;

/// A FNIRSI meter on a transport.
pub struct Fnirsi<T: HidTransport> {
    t: T,
    model: Model,
    place: String,
    next_refresh: Instant,
    last: Option<fnirsi::Reading>,
    started: bool,
}

impl<T: HidTransport> Fnirsi<T> {
    /// A meter of `model` on `t`, named with `place` (the hidraw path).
    pub fn new(t: T, model: Model, place: &str) -> Fnirsi<T> {
        Fnirsi {
            t,
            model,
            place: place.to_owned(),
            next_refresh: Instant::now(),
            last: None,
            started: false,
        }
    }

    fn start(&mut self) -> Result<()> {
        for r in self.model.start() {
            self.t.write_report(&r).map_err(|e| self.io(&e))?;
        }
        self.started = true;
        self.next_refresh = Instant::now() + Duration::from_secs_f64(self.model.refresh_period_s());
        Ok(())
    }

    fn io(&self, e: &std::io::Error) -> anyhow::Error {
        anyhow::anyhow!(
            "{} {}: {}",
            self.model.name(),
            self.place,
            benchboot_input::os_words(e)
        )
    }
}

impl<T: HidTransport> Meter for Fnirsi<T> {
    fn name(&self) -> String {
        format!("{} {}", self.model.name(), self.place)
    }

    fn resolution_w(&self) -> f64 {
        self.last.map_or(5.0 * fnirsi::LSB, |r| r.resolution_w())
    }

    fn period_s(&self) -> f64 {
        fnirsi::SAMPLE_PERIOD_S
    }

    fn read(&mut self, origin: Instant) -> Result<Vec<Sample>> {
        if !self.started {
            self.start()?;
        }
        let deadline = Instant::now() + Duration::from_secs(1);
        let mut out = Vec::with_capacity(REPORTS_PER_READ * fnirsi::SAMPLES_PER_REPORT);
        let mut bad = 0;
        while out.len() < REPORTS_PER_READ * fnirsi::SAMPLES_PER_REPORT {
            if Instant::now() >= self.next_refresh {
                self.t
                    .write_report(&fnirsi::refresh())
                    .map_err(|e| self.io(&e))?;
                self.next_refresh =
                    Instant::now() + Duration::from_secs_f64(self.model.refresh_period_s());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            let Some(report) = self.t.read_report(left).map_err(|e| self.io(&e))? else {
                break;
            };
            let now = Instant::now()
                .saturating_duration_since(origin)
                .as_secs_f64();
            match fnirsi::decode(&report) {
                Ok(None) => {}
                Ok(Some(four)) => {
                    bad = 0;
                    // The four samples end at the report's arrival, 10 ms apart (as
                    // fnirsi_logger.py stamps them).
                    for (i, r) in four.iter().enumerate() {
                        let back = (fnirsi::SAMPLES_PER_REPORT - 1 - i) as f64;
                        out.push(r.sample(now - back * fnirsi::SAMPLE_PERIOD_S));
                    }
                    self.last = Some(four[3]);
                }
                Err(e) => {
                    bad += 1;
                    if bad >= MAX_BAD_REPORTS {
                        bail!(
                            "{}: {MAX_BAD_REPORTS} reports in a row refused, the last: {e}",
                            self.name()
                        );
                    }
                }
            }
        }
        if out.is_empty() {
            bail!(
                "{}: no samples within a second: is the meter's screen on the main page, and \
                 is no other program reading it?",
                self.name()
            );
        }
        Ok(out)
    }
}

/// Reads `HID_ID=BUS:VVVVVVVV:PPPPPPPP` out of a hidraw device's `uevent` text: the
/// USB vendor and product id when the bus is USB (3).
pub fn usb_ids(uevent: &str) -> Option<(u16, u16)> {
    let id = uevent.lines().find_map(|l| l.strip_prefix("HID_ID="))?;
    let mut parts = id.trim().split(':');
    let bus = u32::from_str_radix(parts.next()?, 16).ok()?;
    let vid = u32::from_str_radix(parts.next()?, 16).ok()?;
    let pid = u32::from_str_radix(parts.next()?, 16).ok()?;
    if bus != 3 || parts.next().is_some() {
        return None;
    }
    Some((u16::try_from(vid).ok()?, u16::try_from(pid).ok()?))
}

/// The hidraw nodes whose device is a known FNIRSI model, sorted by node.
#[cfg(target_os = "linux")]
fn found() -> Vec<(String, Model)> {
    let Ok(dir) = std::fs::read_dir("/sys/class/hidraw") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in dir.flatten() {
        let Ok(name) = e.file_name().into_string() else {
            continue;
        };
        let uevent = e.path().join("device/uevent");
        // A uevent is a few hundred bytes; 4 KiB bounds it.
        let Ok(text) = benchboot_input::read_text(&uevent, "a HID device's uevent", 4096) else {
            continue;
        };
        if let Some(m) = usb_ids(&text).and_then(|(v, p)| Model::from_ids(v, p)) {
            out.push((format!("/dev/{name}"), m));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[cfg(not(target_os = "linux"))]
fn found() -> Vec<(String, Model)> {
    Vec::new()
}

/// The FNIRSI meters plugged in (Linux).
pub fn list() -> Vec<Found> {
    found()
        .into_iter()
        .map(|(path, m)| Found {
            spec: format!("fnirsi:{path}"),
            what: format!("FNIRSI {}", &m.name()["fnirsi-".len()..].to_uppercase()),
        })
        .collect()
}

/// Opens the FNIRSI meter at `path`, or the first one found.
///
/// # Errors
/// None found, the node is not a known FNIRSI model, it cannot be opened (permissions:
/// the message says so), or this OS has no hidraw.
pub fn open(path: Option<&str>) -> Result<Box<dyn Meter>> {
    #[cfg(target_os = "linux")]
    {
        let all = found();
        let (path, model) = match path {
            None => match all.first() {
                Some(f) => f.clone(),
                None => bail!(
                    "no FNIRSI meter found (none of the hidraw devices has a FNIRSI USB id): \
                     is it plugged in by its USB-C data port?"
                ),
            },
            Some(p) => match all.iter().find(|(q, _)| q == p) {
                Some(f) => f.clone(),
                None => bail!(
                    "{p}: not a FNIRSI meter's hidraw node (found: {}); `benchboot power \
                     list` shows them",
                    if all.is_empty() {
                        "none".to_owned()
                    } else {
                        all.iter()
                            .map(|(q, _)| q.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ),
            },
        };
        let t = Hidraw::open(&path)?;
        Ok(Box::new(Fnirsi::new(t, model, &path)))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        bail!(
            "reading a FNIRSI meter over USB HID is supported on Linux only so far; record \
             with fnirsi_logger.py and give its CSV (time_s,volts,amps) to benchboot power \
             import"
        )
    }
}

/// A hidraw node, read and written as a file.
#[cfg(target_os = "linux")]
pub struct Hidraw {
    fd: std::os::fd::OwnedFd,
}

#[cfg(target_os = "linux")]
impl Hidraw {
    /// Opens `path` read-write.
    ///
    /// # Errors
    /// It cannot be opened; permission denied says how to get access.
    pub fn open(path: &str) -> Result<Hidraw> {
        match super::fdio::open_rw(std::path::Path::new(path)) {
            Ok(fd) => {
                // Judged by what was opened, not by its name: a report written to
                // anything but a hidraw node (a disk, under a hidraw-looking name) would
                // overwrite its first bytes.
                let subsystem = hidraw_subsystem(&fd);
                if subsystem.as_deref() != Some("hidraw") {
                    bail!(
                        "{path}: not a hidraw device (its subsystem: {}); nothing was written",
                        subsystem
                            .as_deref()
                            .unwrap_or("none: not a character device")
                    );
                }
                Ok(Hidraw { fd })
            }
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => bail!(
                "{path}: permission denied: install a udev rule giving your user the FNIRSI \
                 ids (baryluk/fnirsi-usb-power-data-logger udev/90-usb-power-meter.rules) \
                 and plug the meter in again"
            ),
            Err(e) => bail!("{path}: {}", benchboot_input::os_words(&e)),
        }
    }
}

/// The kernel subsystem of the character device `fd` is open on
/// (`/sys/dev/char/<major>:<minor>/subsystem`), `None` for anything else.
#[cfg(target_os = "linux")]
fn hidraw_subsystem(fd: &std::os::fd::OwnedFd) -> Option<String> {
    let st = rustix::fs::fstat(fd).ok()?;
    if !rustix::fs::FileType::from_raw_mode(st.st_mode).is_char_device() {
        return None;
    }
    let (major, minor) = (rustix::fs::major(st.st_rdev), rustix::fs::minor(st.st_rdev));
    let link = std::fs::read_link(format!("/sys/dev/char/{major}:{minor}/subsystem")).ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

#[cfg(target_os = "linux")]
impl HidTransport for Hidraw {
    fn write_report(&mut self, report: &[u8; REPORT_LEN]) -> std::io::Result<()> {
        let mut b = [0u8; REPORT_LEN + 1];
        b[1..].copy_from_slice(report);
        super::fdio::write_all(&self.fd, &b, Duration::from_secs(1))
    }

    fn read_report(&mut self, timeout: Duration) -> std::io::Result<Option<[u8; REPORT_LEN]>> {
        // One read is one report; a longer one would be cut, so ask for one byte more.
        let mut b = [0u8; REPORT_LEN + 1];
        let n = super::fdio::read_within(&self.fd, &mut b, Instant::now() + timeout)?;
        match n {
            0 => Ok(None),
            REPORT_LEN => {
                let mut r = [0u8; REPORT_LEN];
                r.copy_from_slice(&b[..REPORT_LEN]);
                Ok(Some(r))
            }
            n => Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("a report of {n} bytes, not {REPORT_LEN}: not a FNIRSI meter"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Only a hidraw node is written to: /dev/null (a character device of `mem`) and a
    /// regular file are refused after opening, by what they are.
    #[cfg(target_os = "linux")]
    #[test]
    fn only_a_hidraw_node_is_opened_for_reports() {
        let e = Hidraw::open("/dev/null").err().unwrap().to_string();
        assert!(
            e.contains("not a hidraw device (its subsystem: mem)"),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("disk.img");
        std::fs::write(&f, [0u8; 512]).unwrap();
        let e = Hidraw::open(f.to_str().unwrap()).err().unwrap().to_string();
        assert!(e.contains("not a character device"), "{e}");
        assert_eq!(std::fs::read(&f).unwrap(), [0u8; 512]);
    }

    /// Replays reports; records what was written.
    struct Replay {
        reports: VecDeque<[u8; REPORT_LEN]>,
        written: Vec<[u8; REPORT_LEN]>,
    }

    impl HidTransport for Replay {
        fn write_report(&mut self, r: &[u8; REPORT_LEN]) -> std::io::Result<()> {
            self.written.push(*r);
            Ok(())
        }
        fn read_report(&mut self, _: Duration) -> std::io::Result<Option<[u8; REPORT_LEN]>> {
            Ok(self.reports.pop_front())
        }
    }

    fn reading(volts: f64, amps: f64) -> fnirsi::Reading {
        fnirsi::Reading {
            volts,
            amps,
            dp_volts: 0.6,
            dn_volts: 0.6,
            temp_c: 30.0,
        }
    }

    #[test]
    fn replayed_reports_give_stamped_samples() {
        let mut reports = VecDeque::new();
        // The FNB58's first answer is of another type: skipped.
        let mut other = [0u8; REPORT_LEN];
        other[0] = 0xaa;
        other[1] = 0x03;
        reports.push_back(other);
        for k in 0..REPORTS_PER_READ {
            let a = 0.1 * (k + 1) as f64;
            reports.push_back(fnirsi::encode(&[
                reading(5.0, a),
                reading(5.0, a),
                reading(5.0, a),
                reading(5.1, a),
            ]));
        }
        // One damaged report among them is skipped.
        let mut bad = reports[3];
        bad[20] ^= 1;
        reports.insert(4, bad);
        let t = Replay {
            reports,
            written: Vec::new(),
        };
        let mut m = Fnirsi::new(t, Model::Fnb58, "/dev/hidraw3");
        assert_eq!(m.name(), "fnirsi-fnb58 /dev/hidraw3");
        let s = m.read(Instant::now()).unwrap();
        assert_eq!(s.len(), REPORTS_PER_READ * 4);
        assert!((s[0].watts - 0.5).abs() < 1e-9, "{}", s[0].watts);
        assert!((s[3].watts - 5.1 * 0.1).abs() < 1e-9, "{}", s[3].watts);
        assert!((s[39].watts - 5.1).abs() < 1e-9, "{}", s[39].watts);
        assert!((s[3].t_s - s[0].t_s - 0.03).abs() < 1e-9);
        // The FNB58's start: aa 81, aa 82, aa 82.
        let w = &m.t.written;
        assert_eq!(
            w.iter().take(3).map(|r| r[1]).collect::<Vec<_>>(),
            [0x81, 0x82, 0x82]
        );
        assert_eq!(w[0], fnirsi::request(0x81));
        assert!((m.resolution_w() - (5.1 + 1.0) * 1e-5).abs() < 1e-12);
    }

    #[test]
    fn silence_and_garbage_are_errors() {
        let t = Replay {
            reports: VecDeque::new(),
            written: Vec::new(),
        };
        let mut m = Fnirsi::new(t, Model::Fnb48, "/dev/hidraw0");
        let e = m.read(Instant::now()).unwrap_err().to_string();
        assert!(e.contains("no samples within a second"), "{e}");
        assert_eq!(m.t.written[2][1], 0x83);
        let mut junk = [0u8; REPORT_LEN];
        junk[0] = 0xaa;
        junk[1] = 0x04;
        let t = Replay {
            reports: std::iter::repeat_n(junk, MAX_BAD_REPORTS).collect(),
            written: Vec::new(),
        };
        let mut m = Fnirsi::new(t, Model::C1, "/dev/hidraw1");
        let e = m.read(Instant::now()).unwrap_err().to_string();
        assert!(e.contains("25 reports in a row refused"), "{e}");
        assert!(e.contains("CRC"), "{e}");
    }

    #[test]
    fn uevent_ids() {
        let u = "DRIVER=hid-generic\nHID_ID=0003:00002E3C:00005558\nHID_NAME=FNIRSI FNB-58\n";
        assert_eq!(usb_ids(u), Some((0x2e3c, 0x5558)));
        assert_eq!(usb_ids("HID_ID=0005:00002E3C:00005558\n"), None); // Bluetooth bus
        assert_eq!(usb_ids("HID_ID=0003:zz:00005558\n"), None);
        assert_eq!(usb_ids("HID_ID=0003:00012E3C:00005558\n"), None);
        assert_eq!(usb_ids("HID_NAME=x\n"), None);
    }
}
