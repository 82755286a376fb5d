//! `benchboot peer --wifi`: the host joins the WiFi network each board offers
//! ([`benchboot_netbench::wifi_offer`]: while the board's AP for one sweep entry waits
//! for a station, it sends one offer a second over the results link to UDP
//! [`WIFI_OFFER_PORT`](benchboot_netbench::wifi_offer::WIFI_OFFER_PORT)), so the board's
//! tests over its AP reach the peer this command keeps serving on every interface.
//!
//! The operating system is at the edges, one module each, pure where it can be (parse
//! what a tool prints, build its arguments) and tested on every host: [`linux`]
//! (`nmcli`, else the `iw` / `wpa_supplicant` commands to type), [`macos`]
//! (`networksetup`), [`windows`] (not supported yet: what to do by hand). [`offers`]
//! listens for the offers and decides which to join. Programs are looked up on the
//! PATH given in [`System`], so tests put fake tools first.

pub mod linux;
pub mod macos;
pub mod offers;
pub mod windows;

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Output;

use anyhow::Result;
use benchboot_netbench::wifi_offer::WifiOffer;

/// Where programs and network interfaces are looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct System {
    /// The `PATH` programs are searched on (and that they run with).
    pub path: OsString,
    /// `/sys/class/net` (Linux, for the interfaces when `nmcli` is absent).
    pub sys_class_net: PathBuf,
}

impl System {
    /// This machine: `$PATH` and `/sys/class/net`.
    pub fn from_env() -> System {
        System {
            path: std::env::var_os("PATH").unwrap_or_default(),
            sys_class_net: PathBuf::from("/sys/class/net"),
        }
    }

    /// The first executable file called `name` on [`System::path`].
    pub fn find(&self, name: &str) -> Option<PathBuf> {
        std::env::split_paths(&self.path)
            .map(|dir| dir.join(name))
            .find(|p| is_executable(p))
    }

    /// Runs `program` with `args` (and this PATH), collecting its output.
    ///
    /// # Errors
    /// When it cannot be started.
    pub fn output(&self, program: &Path, args: &[String]) -> io::Result<Output> {
        std::process::Command::new(program)
            .args(args)
            .env("PATH", &self.path)
            .stdin(std::process::Stdio::null())
            .output()
    }
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// The operating systems `--wifi` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    Macos,
    Windows,
    Other,
}

impl Os {
    /// The one this binary was built for.
    pub fn current() -> Os {
        if cfg!(target_os = "linux") {
            Os::Linux
        } else if cfg!(target_os = "macos") {
            Os::Macos
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Other
        }
    }
}

/// How this host joins an offered network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Joiner {
    /// NetworkManager: `nmcli device wifi connect SSID [password P] ifname DEVICE`.
    Nmcli {
        nmcli: PathBuf,
        device: String,
        sys: System,
    },
    /// No `nmcli`: the commands to type for `interface` are printed ([`linux::by_hand`]).
    Iw { interface: String },
    /// macOS: `networksetup -setairportnetwork DEVICE SSID [PASSWORD]`.
    Networksetup {
        program: PathBuf,
        device: String,
        sys: System,
    },
    /// Joining is not supported here yet: what to do by hand is printed.
    ByHand { os: Os },
}

/// What came of one offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Joined; the tool's own words.
    Joined(String),
    /// The tool failed; its words (the offer is tried again later).
    Failed(String),
    /// Nothing was run: the person is told what to do.
    ByHand(String),
}

/// The offer's SSID as text; `None` when it is not UTF-8 (the board's own SSIDs are
/// ASCII: `bb-<board>-ch1-20`).
pub fn ssid_text(o: &WifiOffer) -> Option<&str> {
    std::str::from_utf8(&o.ssid).ok()
}

/// `WPA2` / `open`.
pub fn security_word(o: &WifiOffer) -> &'static str {
    if o.passphrase.is_some() {
        "WPA2"
    } else {
        "open"
    }
}

/// How this host will join offers, found before any offer is waited for.
///
/// # Errors
/// When the host has no WiFi adapter: what was looked for and the fix.
pub fn find_adapter(sys: &System, os: Os) -> Result<Joiner> {
    match os {
        Os::Linux => linux::find(sys),
        Os::Macos => macos::find(sys),
        Os::Windows | Os::Other => Ok(Joiner::ByHand { os }),
    }
}

impl Joiner {
    /// In a few words, for the log: `nmcli on wlan0`.
    pub fn describe(&self) -> String {
        match self {
            Joiner::Nmcli { device, .. } => format!("nmcli on {device}"),
            Joiner::Iw { interface } => {
                format!("nothing: nmcli is absent, the commands for {interface} are printed")
            }
            Joiner::Networksetup { device, .. } => format!("networksetup on {device}"),
            Joiner::ByHand { .. } => "nothing: join each offered network by hand".into(),
        }
    }

    /// Joins the network `offer` names (blocks until the tool returns).
    pub fn join(&self, offer: &WifiOffer) -> Outcome {
        let Some(ssid) = ssid_text(offer) else {
            return Outcome::ByHand(format!(
                "the offered SSID is not text ({} bytes): join it by hand",
                offer.ssid.len()
            ));
        };
        match self {
            Joiner::Nmcli { nmcli, device, sys } => {
                linux::join(sys, nmcli, &linux::connect_args(device, ssid, offer))
            }
            Joiner::Iw { interface } => Outcome::ByHand(linux::by_hand(interface, ssid, offer)),
            Joiner::Networksetup {
                program,
                device,
                sys,
            } => macos::join(sys, program, &macos::join_args(device, ssid, offer)),
            Joiner::ByHand { os } => Outcome::ByHand(windows::by_hand(*os, ssid, offer)),
        }
    }
}

/// `'it''s'` → a word a POSIX shell reads back as `it's`.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@%+=,".contains(c))
    {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests;
