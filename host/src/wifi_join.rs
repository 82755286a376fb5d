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
//! listens for the offers and decides which to join ([`offers::admit`], the one gate).
//! A joiner takes only a [`ValidOffer`]: an SSID and passphrase of the shapes a board
//! makes, checked before any tool sees them. Programs are looked up on the PATH given
//! in [`System`], so tests put fake tools first.

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
        self.output_with_input(program, args, None)
    }

    /// [`System::output`], writing `input` to its standard input (then closing it):
    /// a secret passed this way is not on its command line, which every local user
    /// can read (`/proc/PID/cmdline`). No input: standard input is `/dev/null`.
    ///
    /// # Errors
    /// When it cannot be started or its input cannot be written.
    pub fn output_with_input(
        &self,
        program: &Path,
        args: &[String],
        input: Option<&[u8]>,
    ) -> io::Result<Output> {
        use std::process::Stdio;
        let mut cmd = std::process::Command::new(program);
        cmd.args(args)
            .env("PATH", &self.path)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let Some(input) = input else {
            return cmd.stdin(Stdio::null()).output();
        };
        let mut child = cmd.stdin(Stdio::piped()).spawn()?;
        // A few dozen bytes: they fit in the pipe, so writing before reading the
        // output cannot block on a child that writes first.
        let written = match child.stdin.take() {
            Some(mut stdin) => io::Write::write_all(&mut stdin, input),
            None => Ok(()),
        };
        let out = child.wait_with_output()?;
        written.map(|()| out)
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
    /// NetworkManager: `nmcli device wifi connect SSID ifname DEVICE` for an open
    /// network, a profile activated with the passphrase on standard input for WPA2
    /// ([`linux::join_steps`]).
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

/// Longest SSID, bytes (IEEE 802.11-2020 §9.4.2.2).
pub const MAX_SSID: usize = 32;
/// Shortest and longest WPA2 passphrase, characters, each printable ASCII 0x20..=0x7e
/// (IEEE 802.11i-2004 Annex H.4.1).
pub const PASSPHRASE_LEN: std::ops::RangeInclusive<usize> = 8..=63;

/// An offer whose SSID and passphrase have the shapes a board makes: the SSID 1 to
/// [`MAX_SSID`] ASCII letters, digits and `-`, not starting with `-` (the plan makes
/// `bb-<board>-ch<channel>-<width>`, `plan::wifi::ap_ssid_prefix`), the passphrase
/// (if any) [`PASSPHRASE_LEN`] printable ASCII characters (the board makes 16 hex
/// digits). Nothing else reaches a tool's arguments, its input or a command printed
/// to type: [`Joiner::join`] takes only this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidOffer {
    offer: WifiOffer,
    ssid: String,
}

impl ValidOffer {
    /// Checks `offer`'s SSID and passphrase.
    ///
    /// # Errors
    /// Which one is not of its shape and what the shape is (the SSID escaped, the
    /// passphrase never shown).
    pub fn new(offer: &WifiOffer) -> Result<ValidOffer, String> {
        // Not starting with '-': no tool may take it for an option.
        let ssid_ok = offer.ssid.first().is_some_and(u8::is_ascii_alphanumeric)
            && offer.ssid.len() <= MAX_SSID
            && offer
                .ssid
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || *b == b'-');
        if !ssid_ok {
            return Err(format!(
                "the SSID {} is not one a board makes (1 to {MAX_SSID} ASCII letters, digits \
                 and '-', not starting with '-', as bb-<board>-ch<channel>-<width>)",
                offers::ssid_shown(offer)
            ));
        }
        if let Some(p) = &offer.passphrase {
            if !PASSPHRASE_LEN.contains(&p.len()) || !p.bytes().all(|b| (0x20..=0x7e).contains(&b))
            {
                return Err(format!(
                    "the passphrase is not a WPA2 one ({} to {} printable ASCII characters, \
                     IEEE 802.11i)",
                    PASSPHRASE_LEN.start(),
                    PASSPHRASE_LEN.end()
                ));
            }
        }
        Ok(ValidOffer {
            ssid: String::from_utf8_lossy(&offer.ssid).into_owned(),
            offer: offer.clone(),
        })
    }

    /// The SSID: ASCII letters, digits and `-`.
    pub fn ssid(&self) -> &str {
        &self.ssid
    }

    /// The WPA2 passphrase (printable ASCII); `None`: an open network.
    pub fn passphrase(&self) -> Option<&str> {
        self.offer.passphrase.as_deref()
    }

    /// The whole offer (channel, width, the board's address on its AP).
    pub fn offer(&self) -> &WifiOffer {
        &self.offer
    }
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
    pub fn join(&self, offer: &ValidOffer) -> Outcome {
        match self {
            Joiner::Nmcli { nmcli, device, sys } => {
                linux::join(sys, nmcli, &linux::join_steps(device, offer))
            }
            Joiner::Iw { interface } => Outcome::ByHand(linux::by_hand(interface, offer)),
            Joiner::Networksetup {
                program,
                device,
                sys,
            } => macos::join(sys, program, &macos::join_args(device, offer)),
            Joiner::ByHand { os } => Outcome::ByHand(windows::by_hand(*os, offer)),
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
