//! The meters the host reads, one module per transport, and the meter spec a person
//! gives (`KIND:WHERE`): [`open`] turns it into a [`Meter`]; [`list`] finds the ones
//! plugged in for `benchboot power list`.
//!
//! - [`serial`]: RDTech UM24C / UM25C / UM34C over a serial port or `/dev/rfcommN`.
//! - [`hid`]: FNIRSI FNB48 / FNB48S / FNB58 / C1 over USB HID (`/dev/hidrawN`, Linux).
//! - [`http_plug`]: Shelly gen1 and gen2, Tasmota and NETIO plugs over HTTP.

pub mod hid;
pub mod http_plug;
pub mod serial;

use anyhow::{bail, Result};

use super::Meter;

/// The meter specs [`open`] takes, for messages and `--help`.
pub const KINDS: &str = "rdtech:PORT (e.g. rdtech:/dev/rfcomm0, rdtech:/dev/ttyUSB0), \
     fnirsi (the first one plugged in) or fnirsi:/dev/hidrawN, shelly:http://ADDRESS (gen1), \
     shelly2:http://ADDRESS (gen2 and later), tasmota:http://ADDRESS, \
     netio:http://ADDRESS[#OUTPUT] (output 1 unless given)";

/// A meter found plugged in or paired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The spec that opens it, e.g. `rdtech:/dev/rfcomm0`.
    pub spec: String,
    /// What it is, as far as can be told without opening it, e.g. `FNIRSI FNB58` or
    /// `serial port (an RDTech UM meter answers here if it is one)`.
    pub what: String,
}

/// Every meter that can be found without talking to it: serial ports and paired
/// Bluetooth serial links ([`serial::list`]) and HID meters with a known USB id
/// ([`hid::list`]). Plugs on the network are not searched for.
pub fn list() -> Vec<Found> {
    let mut all = serial::list();
    all.extend(hid::list());
    all
}

/// Opens the meter `spec` names (`KIND:WHERE`, [`KINDS`]).
///
/// # Errors
/// An unknown kind or a missing `WHERE` (the message lists the kinds), or the meter's own
/// opening failed (no such port, no answer, not that meter).
pub fn open(spec: &str) -> Result<Box<dyn Meter>> {
    let (kind, place) = match spec.split_once(':') {
        Some((k, p)) => (k, Some(p)),
        None => (spec, None),
    };
    let need = |what: &str| -> Result<&str> {
        match place {
            Some(p) if !p.is_empty() => Ok(p),
            _ => bail!("meter `{spec}`: {kind} needs {what} after a colon; the meters: {KINDS}"),
        }
    };
    use benchboot_energy::decode::plugs::Plug;
    Ok(match kind {
        "rdtech" => Box::new(serial::Rdtech::open(need("the serial port")?)?),
        "fnirsi" => hid::open(place.filter(|p| !p.is_empty()))?,
        "shelly" => Box::new(http_plug::HttpPlug::new(
            Plug::ShellyGen1,
            need("the plug's address")?,
        )?),
        "shelly2" => Box::new(http_plug::HttpPlug::new(
            Plug::ShellyGen2,
            need("the plug's address")?,
        )?),
        "tasmota" => Box::new(http_plug::HttpPlug::new(
            Plug::Tasmota,
            need("the plug's address")?,
        )?),
        "netio" => Box::new(http_plug::HttpPlug::new(
            Plug::Netio,
            need("the NETIO's address")?,
        )?),
        _ => bail!(
            "meter `{}`: `{}` is not a kind of meter benchboot reads; the meters: {KINDS}",
            benchboot_results::text::escape(&spec.chars().take(100).collect::<String>()),
            benchboot_results::text::escape(&kind.chars().take(40).collect::<String>())
        ),
    })
}

/// Reads and writes on a file descriptor with a deadline (serial ports, hidraw nodes).
#[cfg(unix)]
pub(crate) mod fdio {
    use std::io;
    use std::os::fd::{AsFd, OwnedFd};
    use std::path::Path;
    use std::time::{Duration, Instant};

    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    use rustix::fs::{Mode, OFlags};

    /// Opens `path` read-write, non-blocking, as no controlling terminal.
    pub fn open_rw(path: &Path) -> io::Result<OwnedFd> {
        Ok(rustix::fs::open(
            path,
            OFlags::RDWR | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )?)
    }

    /// Waits until `fd` is readable or `deadline` passes; true when readable.
    pub fn wait_readable(fd: &OwnedFd, deadline: Instant) -> io::Result<bool> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            let ts = Timespec {
                tv_sec: left.as_secs() as _,
                tv_nsec: left.subsec_nanos() as _,
            };
            let mut fds = [PollFd::new(fd, PollFlags::IN)];
            match poll(&mut fds, Some(&ts)) {
                Ok(0) => return Ok(false),
                Ok(_) => {
                    let r = fds[0].revents();
                    if r.intersects(PollFlags::ERR | PollFlags::NVAL) {
                        return Err(io::Error::other("the device went away"));
                    }
                    if r.contains(PollFlags::HUP) && !r.contains(PollFlags::IN) {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "the other end hung up",
                        ));
                    }
                    return Ok(true);
                }
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Reads what is there (at most `buf.len()` bytes) once `fd` is readable, or `Ok(0)`
    /// at the deadline.
    pub fn read_within(fd: &OwnedFd, buf: &mut [u8], deadline: Instant) -> io::Result<usize> {
        loop {
            if !wait_readable(fd, deadline)? {
                return Ok(0);
            }
            match rustix::io::read(fd.as_fd(), &mut *buf) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the device went away",
                    ))
                }
                Ok(n) => return Ok(n),
                Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Writes all of `bytes` within `timeout`.
    pub fn write_all(fd: &OwnedFd, mut bytes: &[u8], timeout: Duration) -> io::Result<()> {
        let deadline = Instant::now() + timeout;
        while !bytes.is_empty() {
            match rustix::io::write(fd.as_fd(), bytes) {
                Ok(n) => bytes = &bytes[n..],
                Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => {
                    if Instant::now() >= deadline {
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            "the device takes no more bytes",
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_specs_list_the_kinds() {
        let e = format!("{:#}", open("ruler:/dev/x").err().unwrap());
        assert!(e.contains("`ruler` is not a kind of meter"), "{e}");
        assert!(
            e.contains("rdtech:PORT") && e.contains("netio:http://"),
            "{e}"
        );
        let e = format!("{:#}", open("shelly").err().unwrap());
        assert!(
            e.contains("shelly needs the plug's address after a colon"),
            "{e}"
        );
        let e = format!("{:#}", open("rdtech:").err().unwrap());
        assert!(e.contains("rdtech needs the serial port"), "{e}");
    }
}
