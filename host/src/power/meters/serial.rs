//! RDTech UM24C / UM25C / UM34C meters over a serial port: a USB serial adapter on the
//! meter's UART, or its Bluetooth SPP link bound as `/dev/rfcommN` (`rfcomm bind`).
//! One byte `0xF0` asks for one 130-byte frame (`benchboot_energy::decode::rdtech`).
//!
//! Unix only (Linux, macOS): the port is a terminal device set raw at 9600 baud through
//! termios (rustix), no C library and no system framework, so the macOS cross build
//! links. The `serialport` crate was not used: on macOS it links IOKit and CoreFoundation
//! for port listing, which the zig cross build without Apple's SDK cannot link. On
//! Windows this meter says it is not supported yet: record with rd-usb or sigrok and
//! import the CSV.

use std::time::Instant;

use anyhow::Result;
use benchboot_energy::decode::rdtech::{self, Model, Reading};
use benchboot_energy::Sample;

use super::Found;
use crate::power::Meter;

/// An RDTech UM meter on a serial port.
pub struct Rdtech {
    #[cfg(unix)]
    fd: std::os::fd::OwnedFd,
    path: String,
    model: Model,
    last: Option<Reading>,
    last_request: Option<Instant>,
}

/// The serial ports a meter may be on: `/dev/rfcomm*` (a bound Bluetooth link),
/// `/dev/ttyUSB*` and `/dev/ttyACM*` on Linux; `/dev/cu.*` on macOS.
pub fn list() -> Vec<Found> {
    let prefixes: &[(&str, &str)] = if cfg!(target_os = "macos") {
        &[("cu.", "serial port")]
    } else if cfg!(unix) {
        &[
            ("rfcomm", "Bluetooth serial link"),
            ("ttyUSB", "USB serial adapter"),
            ("ttyACM", "USB serial (CDC ACM)"),
        ]
    } else {
        &[]
    };
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/dev") else {
        return out;
    };
    let mut names: Vec<String> = dir
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    for name in names {
        if let Some((_, what)) = prefixes.iter().find(|(p, _)| name.starts_with(p)) {
            out.push(Found {
                spec: format!("rdtech:/dev/{name}"),
                what: format!("{what} (an RDTech UM meter if one answers there)"),
            });
        }
    }
    out
}

#[cfg(unix)]
impl Rdtech {
    /// Opens `path`, sets it raw at 9600 baud, and asks for one frame to learn the model.
    ///
    /// # Errors
    /// The port cannot be opened or is not a terminal, or no valid frame comes within
    /// a second (the message says what to check).
    pub fn open(path: &str) -> Result<Rdtech> {
        use anyhow::Context;
        use rustix::termios::{tcgetattr, tcsetattr, OptionalActions};
        let fd = super::fdio::open_rw(std::path::Path::new(path))
            .map_err(|e| anyhow::anyhow!("{path}: {}", benchboot_input::os_words(&e)))?;
        let mut t = tcgetattr(&fd)
            .with_context(|| format!("{path} is not a serial port (no terminal settings)"))?;
        t.make_raw();
        t.set_speed(rdtech::BAUD)
            .with_context(|| format!("{path}: setting {} baud", rdtech::BAUD))?;
        tcsetattr(&fd, OptionalActions::Now, &t)
            .with_context(|| format!("{path}: setting the port raw"))?;
        let mut m = Rdtech {
            fd,
            path: path.to_owned(),
            model: Model::Um25c,
            last: None,
            last_request: None,
        };
        let r = m.poll().with_context(|| {
            format!(
                "{path}: no RDTech UM meter answered; is the meter on, paired and bound to \
                 this port (rfcomm bind), and is no other program reading it?"
            )
        })?;
        m.model = r.model;
        Ok(m)
    }

    /// Sends `0xF0` and reads one frame, resynchronising on the model id as libsigrok
    /// does; at most [`rdtech::TIMEOUT_S`] waiting.
    fn poll(&mut self) -> Result<Reading> {
        use std::time::Duration;
        let timeout = Duration::from_secs_f64(rdtech::TIMEOUT_S);
        super::fdio::write_all(&self.fd, &[rdtech::REQUEST], timeout)?;
        self.last_request = Some(Instant::now());
        let deadline = Instant::now() + timeout;
        // Twice a frame: room to skip noise before the model id, never more.
        let mut buf = [0u8; 2 * rdtech::FRAME_LEN];
        let mut have = 0;
        let mut refused = None;
        loop {
            if let Some(at) = rdtech::sync(&buf[..have]) {
                buf.copy_within(at..have, 0);
                have -= at;
            } else if have > 1 {
                buf.copy_within(have - 1..have, 0);
                have = 1;
            }
            if have >= rdtech::FRAME_LEN {
                match rdtech::decode(&buf[..rdtech::FRAME_LEN]) {
                    Ok(r) => {
                        self.last = Some(r);
                        return Ok(r);
                    }
                    // A bad frame: drop its first byte and look for the next model id.
                    Err(e) => {
                        refused = Some(e);
                        buf.copy_within(1..have, 0);
                        have -= 1;
                        continue;
                    }
                }
            }
            let n = super::fdio::read_within(&self.fd, &mut buf[have..], deadline)
                .map_err(|e| anyhow::anyhow!("{}: {}", self.path, benchboot_input::os_words(&e)))?;
            if n == 0 {
                if let Some(e) = refused {
                    anyhow::bail!("{}: {e}", self.path);
                }
                anyhow::bail!(
                    "{}: {} of {} bytes of a frame came within {} s",
                    self.path,
                    have,
                    rdtech::FRAME_LEN,
                    rdtech::TIMEOUT_S
                );
            }
            have += n;
        }
    }
}

#[cfg(not(unix))]
impl Rdtech {
    /// Not on this OS yet.
    ///
    /// # Errors
    /// Always.
    pub fn open(path: &str) -> Result<Rdtech> {
        anyhow::bail!(
            "rdtech:{path}: reading a serial meter is not supported on this OS yet; record \
             with rd-usb or sigrok-cli and give the CSV (time_s,volts,amps) to benchboot \
             power import"
        )
    }

    fn poll(&mut self) -> Result<Reading> {
        anyhow::bail!("not supported on this OS")
    }
}

impl Meter for Rdtech {
    fn name(&self) -> String {
        format!("{} {}", self.model.name(), self.path)
    }

    fn resolution_w(&self) -> f64 {
        let (v, a) = self.last.map_or((5.0, 0.0), |r| (r.volts, r.amps));
        self.model.resolution_w(v, a)
    }

    fn period_s(&self) -> f64 {
        rdtech::POLL_PERIOD_S
    }

    fn read(&mut self, origin: Instant) -> Result<Vec<Sample>> {
        if let Some(at) = self.last_request {
            let next = at + std::time::Duration::from_secs_f64(rdtech::POLL_PERIOD_S);
            if let Some(wait) = next.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        let r = self.poll()?;
        let t = Instant::now()
            .saturating_duration_since(origin)
            .as_secs_f64();
        Ok(vec![r.sample(t)])
    }

    fn counter_j(&mut self) -> Option<f64> {
        self.last.map(|r| r.counter_j())
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::fd::OwnedFd;
    use std::time::Duration;

    use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};

    /// A pseudo-terminal whose master side a thread drives as a UM25C: each `0xF0` read
    /// is answered with `noise` then the frame of `reading`, until the slave side is
    /// closed (the master stays open till then: closing it would hang up the slave and
    /// drop what it has not read). Gives the slave's path and the count of answers.
    fn emulate(reading: Reading, noise: &'static [u8]) -> (String, std::thread::JoinHandle<usize>) {
        let master: OwnedFd = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
        grantpt(&master).unwrap();
        unlockpt(&master).unwrap();
        let path = ptsname(&master, Vec::new()).unwrap().into_string().unwrap();
        let h = std::thread::spawn(move || {
            let mut served = 0;
            let mut b = [0u8; 16];
            let frame = rdtech::encode(&reading);
            loop {
                let deadline = Instant::now() + Duration::from_secs(10);
                let n = match crate::power::meters::fdio::read_within(&master, &mut b, deadline) {
                    Ok(n) => n,
                    // The meter closed the slave side: done.
                    Err(_) => break,
                };
                if n == 0 {
                    break;
                }
                for _ in b[..n].iter().filter(|&&x| x == rdtech::REQUEST) {
                    let mut out = noise.to_vec();
                    out.extend_from_slice(&frame);
                    let fd = &master;
                    crate::power::meters::fdio::write_all(fd, &out, Duration::from_secs(5))
                        .unwrap();
                    served += 1;
                }
            }
            served
        });
        (path, h)
    }

    #[test]
    fn a_um25c_on_a_pty_is_read_end_to_end() {
        let reading = Reading {
            model: Model::Um25c,
            volts: 5.123,
            amps: 0.4567,
            meter_watts: 2.339,
            temp_c: 31.0,
            group: 2,
            group_mah: 120,
            group_mwh: 612,
        };
        // Noise before the frame: the reader resynchronises on the model id.
        let (path, h) = emulate(reading, &[0x00, 0x13, 0x37]);
        let mut m = Rdtech::open(&path).unwrap();
        assert_eq!(m.name(), format!("rdtech-um25c {path}"));
        let origin = Instant::now();
        let s = m.read(origin).unwrap();
        assert_eq!(s.len(), 1);
        assert!((s[0].watts - 5.123 * 0.4567).abs() < 1e-9, "{}", s[0].watts);
        assert_eq!(s[0].volts, Some(5.123));
        assert!(s[0].t_s >= 0.0 && s[0].t_s < 2.0);
        let first_request = m.last_request.unwrap();
        let s2 = m.read(origin).unwrap();
        assert!(s2[0].t_s > s[0].t_s, "{} then {}", s[0].t_s, s2[0].t_s);
        // Requests are paced by the meter's period (the samples' times are arrivals,
        // which a loaded machine delays by any amount, so they are not compared).
        let paced = m.last_request.unwrap() - first_request;
        assert!(
            paced.as_secs_f64() >= rdtech::POLL_PERIOD_S,
            "requests {paced:?} apart"
        );
        assert_eq!(m.counter_j(), Some(612.0 * 3.6));
        assert!((m.resolution_w() - (5.123 * 1e-4 + 0.4567 * 1e-3)).abs() < 1e-12);
        drop(m);
        assert_eq!(h.join().unwrap(), 3);
    }

    #[test]
    fn a_silent_port_and_a_non_port_are_said() {
        let master: OwnedFd = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
        grantpt(&master).unwrap();
        unlockpt(&master).unwrap();
        let path = ptsname(&master, Vec::new()).unwrap().into_string().unwrap();
        let e = format!("{:#}", Rdtech::open(&path).err().unwrap());
        assert!(e.contains("no RDTech UM meter answered"), "{e}");
        assert!(
            e.contains("0 of 130 bytes of a frame came within 1 s"),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("plain");
        std::fs::write(&f, b"").unwrap();
        let e = format!("{:#}", Rdtech::open(f.to_str().unwrap()).err().unwrap());
        assert!(e.contains("is not a serial port"), "{e}");
        let e = format!("{:#}", Rdtech::open("/nonexistent/tty").err().unwrap());
        assert!(e.starts_with("/nonexistent/tty: "), "{e}");
    }
}
