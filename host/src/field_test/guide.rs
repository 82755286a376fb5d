//! What a field test tells the person: what to plug where ([`instructions`]), what to
//! check when the board does not answer ([`what_to_check`]), and the words both use.
//! Every fact about the board comes from its board file.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use benchboot_board::Board;
use benchboot_plan::RESULTS_PORT;

use super::{BOARD_ADDR, HOST_ADDR, LINK_PREFIX};
use crate::flash::Target;

/// The card as the instructions name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Card {
    /// A card in this computer: its device node (`/dev/sdb`).
    Disk(PathBuf),
    /// A regular file standing in for the card.
    File(PathBuf),
}

impl Card {
    /// From a flash target; `device` is `--device` (used for a file).
    pub fn of(target: &Target, device: &Path) -> Card {
        match target {
            Target::Disk { device, .. } => Card::Disk(device.path.clone()),
            Target::File { .. } => Card::File(device.to_owned()),
        }
    }

    /// The command that reads the results from this card.
    pub fn collect_command(&self) -> String {
        match self {
            Card::Disk(p) => format!("sudo benchboot collect --from-card {}", p.display()),
            Card::File(p) => format!("benchboot collect --from-card {}", p.display()),
        }
    }
}

/// The host end of a gadget board's network tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// An Ethernet board: its plan has no network tests.
    NotNeeded,
    /// Listening on this address for as long as the field test runs.
    Started(SocketAddr),
    /// `--no-peer`: the person runs `benchboot peer`.
    External,
    /// Could not listen on this address.
    Failed(SocketAddr),
}

/// Which connector is a gadget board's USB device port, with how the board is powered
/// then: the board file's `gadget.port`; `None` for a board without one (no gadget, or
/// an emulated board).
pub fn usb_device_port(board: &Board) -> Option<&str> {
    board.gadget.as_ref()?.port.as_deref()
}

/// Where the serial console's pins are: the board file's `serial.pins`; `None` for an
/// emulated board.
pub fn console_pins(board: &Board) -> Option<&str> {
    board.serial.as_ref().map(|s| s.pins.as_str())
}

/// The console the board file names (`boot.console`, e.g. `ttyS1,115200`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Console<'a> {
    /// The kernel's device name: `ttyS1`.
    pub device: &'a str,
    /// Speed in baud: the digits after the comma (`115200n8` included); `None` without.
    pub baud: Option<u32>,
}

/// `boot.console` split: `ttyS1,115200` is device `ttyS1` at 115200 baud.
pub fn console(board: &Board) -> Console<'_> {
    let (device, rest) = board
        .boot
        .console
        .split_once(',')
        .unwrap_or((board.boot.console.as_str(), ""));
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Console {
        device,
        baud: digits.parse().ok(),
    }
}

fn console_line(board: &Board) -> String {
    let Console { device, baud } = console(board);
    let speed = baud.map_or_else(
        || "the kernel's default speed".to_string(),
        |s| format!("{s} baud"),
    );
    let wiring = match &board.serial {
        Some(s) => format!("{} V TTL on {}", s.volts, s.pins),
        None => "3.3 V TTL on the board's console UART".into(),
    };
    format!(
        "serial console, to watch it: {device} at {speed}, 8N1, {wiring}; \
         the adapter's RX to the board's TX, TX to RX, GND to GND; it prints `benchboot: \
         ready` once the results are served"
    )
}

/// The board's results link in words: `its USB gadget link`, `its Ethernet link (eth0)`.
pub(super) fn link_words(b: &Board) -> String {
    match (&b.gadget, &b.ethernet) {
        (Some(_), _) => "its USB gadget link".into(),
        (None, Some(e)) => format!("its Ethernet link ({})", e.interface),
        (None, None) => "no link".into(),
    }
}

/// What the `ip addr add` command names for the interface the cable is in: that one is
/// not known here, so the command never names a real one (it could be this computer's
/// own uplink).
const IFACE: &str = "IFACE";

/// What [`IFACE`] stands for, `wired` naming this computer's wired interfaces.
fn iface_words(wired: &[String]) -> String {
    if wired.is_empty() {
        format!(" ({IFACE}: the wired interface the cable is in, see `ip -br link`)")
    } else {
        format!(
            " ({IFACE}: the one the cable is in; wired interfaces here: {})",
            wired.join(", ")
        )
    }
}

/// What the board does with its network tests, given how the peer runs; `link` names
/// the measured link.
fn tests_words(peer: &Peer, link: &str) -> String {
    match peer {
        Peer::Started(a) => {
            format!("measures {link} against the benchboot peer this command runs on {a}")
        }
        Peer::External => {
            format!("measures {link} against `benchboot peer`, which you run (--no-peer)")
        }
        Peer::Failed(a) => format!(
            "tries to measure {link} against a benchboot peer on {a}, which this \
             command could not start"
        ),
        Peer::NotNeeded => "runs its network tests".into(),
    }
}

/// What to plug where, for `board`: the card into the board, the serial console (the
/// board file's console device and speed), the results link (gadget: the USB device
/// port to this computer, DHCP gives this computer 10.55.0.2; Ethernet: a cable to
/// this computer, DHCP again, or the `ip addr add 10.55.0.2/30` command for a host that
/// does not ask, `wired` naming the candidates), the peer, where a power meter goes and
/// what each position measures ([`crate::power::position::guide_paragraph`]), and that
/// the results also land on the card's results partition, with the `collect
/// --from-card` command.
pub fn instructions(board: &Board, card: &Card, peer: &Peer, wired: &[String]) -> String {
    let name = &board.description;
    let insert = match card {
        Card::Disk(p) => format!(
            "Take the card out of this computer ({}) and put it in the {name}'s SD slot, the \
             board unpowered.",
            p.display()
        ),
        Card::File(p) => format!(
            "{} is a regular file, not a card: nothing boots from it (a rehearsal).",
            p.display()
        ),
    };
    let (connect, then) = match (&board.gadget, &board.ethernet) {
        (Some(g), _) => {
            let port = usb_device_port(board)
                .unwrap_or("the board's USB device (OTG) port; power the board as usual");
            let functions: Vec<String> = g
                .functions
                .iter()
                .map(|f| f.configfs_type().to_uppercase())
                .collect();
            let tests = tests_words(peer, "the link");
            (
                format!(
                    "Connect the {name} to this computer by its USB device port: {port}. Use a \
                     data cable (some cables only charge)."
                ),
                format!(
                    "Then the board runs its storage plan (about 1.5 h on a Pi Zero W), appears \
                     here as a USB network adapter ({}), leases this computer {HOST_ADDR} by \
                     DHCP (no router, no DNS; NetworkManager takes it by itself), {tests}, and \
                     serves its results at {BOARD_ADDR}:{RESULTS_PORT}.",
                    functions.join(", ")
                ),
            )
        }
        (None, Some(e)) => {
            let which = iface_words(wired);
            (
                format!(
                    "Connect the {name}'s Ethernet port to this computer with a cable, directly, \
                     and power the board from its own supply. The board is {BOARD_ADDR}/{LINK_PREFIX} \
                     and leases this computer {HOST_ADDR} by DHCP (no router, no DNS). If this \
                     computer's end does not ask for DHCP, give it {HOST_ADDR}/{LINK_PREFIX}{which}:\n       \
                     sudo ip addr add {HOST_ADDR}/{LINK_PREFIX} dev {IFACE}\n     \
                     If NetworkManager manages {IFACE}, it may replace that address when the \
                     link comes up: `sudo nmcli device set {IFACE} managed no` first."
                ),
                format!(
                    "Then the board runs its storage plan, brings up {} at \
                     {BOARD_ADDR}/{LINK_PREFIX}, {} and serves its results at \
                     {BOARD_ADDR}:{RESULTS_PORT}.",
                    e.interface,
                    tests_words(peer, "its Ethernet link")
                ),
            )
        }
        (None, None) => (
            "Power the board: it has no network results link.".into(),
            "Then the board runs its plan.".into(),
        ),
    };
    let connect = match &board.boot.power_on {
        Some(p) => format!("{connect}\n  4. {p}"),
        None => connect,
    };
    format!(
        "  1. {insert}\n  2. Optional: {}.\n  3. {connect}\n{then}\n{}The results also land on \
         the card's results partition (BBRESULTS): if nothing answers here, power the board \
         off, put the card back in this computer and run\n  {}\n",
        console_line(board),
        crate::power::position::guide_paragraph(),
        card.collect_command()
    )
}

/// What to check when no board answered in time, for `board` and `card`.
pub fn what_to_check(board: &Board, card: &Card) -> String {
    let Console { device: dev, baud } = console(board);
    let speed = baud.map_or_else(String::new, |s| format!(", {s} baud"));
    let mut s = format!(
        "what to check:\n  - the board is powered and booted: its serial console ({dev}{speed}) \
         shows its progress and `benchboot: ready` once it serves its results;\n"
    );
    if let Some(p) = &board.boot.power_on {
        s += &format!("  - it booted this card, not another medium: {p};\n");
    }
    if board.gadget.is_some() {
        let port = usb_device_port(board).unwrap_or("the board's USB device (OTG) port");
        s += &format!(
            "  - the cable is in the board's USB device port ({port}) and carries data (some \
             cables only charge);\n  - this computer sees a new USB network interface (`ip \
             -br link`) and holds {HOST_ADDR} on it (`ip -br addr`);\n"
        );
    } else if let Some(e) = &board.ethernet {
        s += &format!(
            "  - the cable runs from the board's Ethernet port ({}) straight to this \
             computer, and this computer holds {HOST_ADDR}/{LINK_PREFIX} on that interface \
             (`ip -br addr`);\n",
            e.interface
        );
    }
    s += &format!(
        "  - it may still be measuring: wait longer with --timeout SECONDS, or later run \
         `benchboot collect`;\n  - the results are on the card either way: power the board \
         off, put the card in this computer and run `{}`",
        card.collect_command()
    );
    s
}

/// A duration for people: `45 s`, `90 min`, `3 h`, `2 h 30 min`.
pub fn span(d: Duration) -> String {
    let s = d.as_secs();
    if s < 120 {
        format!("{s} s")
    } else if s < 2 * 3600 {
        format!("{} min", s / 60)
    } else if s % 3600 < 60 {
        format!("{} h", s / 3600)
    } else {
        format!("{} h {} min", s / 3600, s % 3600 / 60)
    }
}
