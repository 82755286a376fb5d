//! `benchboot field-test --board B --device DEV`: one board from source to report.
//!
//! The sequence ([`run_steps`]): the card is checked with the rules of `benchboot
//! flash` before anything else; the image is built (`cargo xtask image --board B` as a
//! child process in the source tree, or taken from `--image`); it is flashed with
//! `benchboot flash`'s plan, confirmation, write (first MiB last) and SHA-256 read-back;
//! a gadget board gets the host end of its network tests (`benchboot peer`) on a
//! thread; the person is told what to plug where, from the board file
//! ([`instructions`]); the board is waited for on its own link (never QEMU's
//! 127.0.0.1 forward); its results are collected into the store as `benchboot collect`
//! does, and the report is printed.
//!
//! Every effect is a method of [`Steps`]: [`System`] does the real work, tests drive
//! [`run_steps`] with fakes. The board schema has no field for connector names or
//! console pins, so [`usb_device_port`] and [`console_pins`] hold the few words per
//! board that the board files' comments state; everything else comes from the board
//! file (results link, console device and speed, description).

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use benchboot_board::{Board, BootConfig};
use benchboot_plan::{NetTests, QEMU_RESULTS_FORWARD, RESULTS_PORT};

use crate::collect::{self, Collected};
use crate::discover::{self, Candidate};
use crate::flash::{self, Destination, Target};
use crate::report::{self, Format};

/// The board's address on its results link, gadget (first function) or Ethernet.
pub const BOARD_ADDR: Ipv4Addr = Ipv4Addr::new(10, 55, 0, 1);
/// This computer's address on that link: leased by the gadget's DHCP server, or set by
/// hand on the Ethernet cable's interface (with prefix [`LINK_PREFIX`]).
pub const HOST_ADDR: Ipv4Addr = Ipv4Addr::new(10, 55, 0, 2);
/// Prefix length of the point-to-point link, bits.
pub const LINK_PREFIX: u8 = 30;
/// Default of `--timeout`, seconds: 3 h, twice the hardware plan of a Pi Zero W.
pub const DEFAULT_TIMEOUT_S: u64 = 3 * 3600;
/// How long the download of the results may take once the board answers.
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(120);
/// Without a terminal (a CI log), a line while waiting this often.
const NOTE_EVERY: Duration = Duration::from_secs(600);
/// The system-wide CPU counters the peer samples.
const PROC_STAT: &str = "/proc/stat";

/// `benchboot field-test` as clap parses it.
#[derive(Debug, Clone, clap::Args)]
pub struct FieldTestArgs {
    /// The board: the name of its file in boards/ (rpi-zero-w, rpi-4b, beaglebone-black, ...).
    #[arg(long, value_name = "NAME")]
    pub board: String,
    /// The whole card (/dev/sdb, /dev/mmcblk0, /dev/disk4), refused exactly as
    /// `benchboot flash` refuses it; a regular file makes a rehearsal (nothing boots
    /// from it).
    #[arg(long, value_name = "DEV")]
    pub device: PathBuf,
    /// Flash this image instead of building one with `cargo xtask image`.
    #[arg(long, value_name = "PATH")]
    pub image: Option<PathBuf>,
    // With --dry-run: check the card, build, print the flash plan and the
    // instructions; write nothing, wait for nothing.
    #[command(flatten)]
    pub flags: flash::WriteFlags,
    /// Seconds to wait for the board after flashing: it serves its results once its
    /// whole plan has run (about 1.5 h on a Pi Zero W).
    #[arg(long, value_name = "S", default_value_t = DEFAULT_TIMEOUT_S)]
    pub timeout: u64,
    /// HOST:PORT of the board's results server. Default: find it on its link
    /// ($BENCHBOOT_BOARD, 10.55.0.1/.5/.9:8080 when this computer holds an address on
    /// that /30, [fe80::1%usbN]:8080); never QEMU's 127.0.0.1:18080.
    #[arg(long, value_name = "HOST:PORT")]
    pub addr: Option<String>,
    /// ADDRESS:PORT the host end of a gadget board's network tests listens on (the
    /// board's network.tests.peer_port must match).
    #[arg(long, value_name = "ADDR:PORT", default_value_t = default_peer())]
    pub peer: SocketAddr,
    /// Do not start the host end of the network tests (a `benchboot peer` runs already).
    #[arg(long)]
    pub no_peer: bool,
    /// The results store folder. Default: $BENCHBOOT_STORE, else
    /// $XDG_DATA_HOME/benchboot, else ~/.local/share/benchboot.
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
}

/// `0.0.0.0:<the hardware plan's peer port>` (5202).
fn default_peer() -> SocketAddr {
    SocketAddr::from(([0, 0, 0, 0], NetTests::hardware().peer_port))
}

/// What [`run_steps`] runs: the board, the card, and the choices of the command line.
#[derive(Debug, Clone)]
pub struct FieldTest {
    pub board: Board,
    /// `--device`, as given.
    pub device: PathBuf,
    /// `--image`: flashed as it is, no build.
    pub image: Option<PathBuf>,
    pub dry_run: bool,
    /// How long to wait for the board after flashing.
    pub timeout: Duration,
    /// Where the host end of the network tests listens (gadget boards); `None`: not
    /// started here (`--no-peer`).
    pub peer: Option<SocketAddr>,
    /// This computer's wired network interfaces, named in the Ethernet instructions.
    pub wired: Vec<String>,
}

/// The effects of a field test, one method per step, called by [`run_steps`] in this
/// order. [`System`] is the real implementation.
pub trait Steps {
    /// The rules of `benchboot flash` applied to the card alone ([`flash::check_destination`]).
    ///
    /// # Errors
    /// The card is refused (every reason), or is not a disk this machine lists.
    fn check_card(&mut self) -> Result<Destination>;
    /// Builds the board's image; returns its path.
    ///
    /// # Errors
    /// The build failed or cannot run (no source tree, no cargo).
    fn build(&mut self, board: &Board) -> Result<PathBuf>;
    /// The flash plan for `image` onto the card ([`flash::plan`]); nothing written.
    ///
    /// # Errors
    /// As [`flash::plan`]: a bad image, an image larger than the card, a refused card.
    fn plan_flash(&mut self, image: &Path) -> Result<flash::Plan>;
    /// Asks before erasing the card ([`flash::confirm`]).
    ///
    /// # Errors
    /// Not confirmed (nothing written).
    fn confirm(&mut self, plan: &flash::Plan) -> Result<()>;
    /// Writes and verifies ([`flash::execute`]).
    ///
    /// # Errors
    /// As [`flash::execute`].
    fn write(&mut self, plan: &flash::Plan) -> Result<flash::Outcome>;
    /// Starts the host end of the network tests on `listen`, in the background;
    /// returns the address it listens on (port 0 picks one).
    ///
    /// # Errors
    /// It cannot listen there (the field test goes on without it).
    fn start_peer(&mut self, listen: SocketAddr) -> Result<SocketAddr>;
    /// Waits up to `timeout` for the board's results server; returns its `HOST:PORT`.
    ///
    /// # Errors
    /// Nothing answered in time ([`run_steps`] adds what to check).
    fn wait(&mut self, board: &Board, timeout: Duration) -> Result<String>;
    /// Downloads the results from `addr` and stores them, as `benchboot collect` does.
    ///
    /// # Errors
    /// As [`collect::collect`].
    fn collect(&mut self, addr: &str) -> Result<Collected>;
    /// Tells the person `text` (one or more lines).
    fn say(&mut self, text: &str);
}

/// Refuses boards a field test cannot run: emulated ones (no boot loader on the card:
/// QEMU loads the kernel itself) and boards without a network results link.
///
/// # Errors
/// The board is one of those, with what to run instead.
pub fn check_board(board: &Board) -> Result<()> {
    let name = &board.name;
    if board.loader.is_none() {
        bail!(
            "`{name}` ({}) runs only in QEMU: its card has no boot loader, QEMU loads the \
             kernel itself; run it with `cargo xtask qemu --board {name}`",
            board.description
        );
    }
    if board.gadget.is_none() && board.ethernet.is_none() {
        bail!(
            "`{name}` has no network results link ([gadget] or [ethernet] in its board \
             file), so there is nothing to wait for: flash it with `benchboot flash`, run it, \
             then read the card with `benchboot collect --from-card DEVICE`"
        );
    }
    Ok(())
}

/// The field test: check the card, build (unless [`FieldTest::image`]), flash, start
/// the peer (gadget boards), instruct, wait, collect, report; every message through
/// [`Steps::say`]. Stops at the first failing step: a refused card or flash plan, or a
/// confirmation not given, stops before anything is written. Returns the collected run
/// (`None` for a dry run).
///
/// # Errors
/// The first failing step's error; a wait that timed out lists what to check.
pub fn run_steps(ft: &FieldTest, steps: &mut dyn Steps) -> Result<Option<Collected>> {
    let b = &ft.board;
    check_board(b)?;
    steps.say(&format!(
        "field test of {} ({}) with the card {}",
        b.name,
        b.description,
        ft.device.display()
    ));
    let dest = steps.check_card()?;
    steps.say(&format!(
        "[1/7] card: {} may be written (the rules of benchboot flash)",
        describe_destination(&dest)
    ));
    let image = match &ft.image {
        Some(image) => {
            steps.say(&format!(
                "[2/7] build: skipped, flashing {} (--image)",
                image.display()
            ));
            image.clone()
        }
        None => {
            steps.say(&format!(
                "[2/7] build: cargo xtask image --board {}",
                b.name
            ));
            let image = steps.build(b)?;
            steps.say(&format!("[2/7] built {}", image.display()));
            image
        }
    };
    steps.say("[3/7] flash");
    let plan = steps.plan_flash(&image)?;
    steps.say(&plan.describe());
    let card = Card::of(&plan.target, &ft.device);
    if ft.dry_run {
        steps.say("dry run: nothing written, nothing waited for");
        let peer = match (b.gadget.is_some(), ft.peer) {
            (false, _) => Peer::NotNeeded,
            (true, Some(addr)) => Peer::Started(addr),
            (true, None) => Peer::External,
        };
        steps.say(&format!(
            "[4/7] plug in (after a real run)\n{}",
            instructions(b, &card, &peer, &ft.wired)
        ));
        return Ok(None);
    }
    steps.confirm(&plan)?;
    let outcome = steps.write(&plan)?;
    steps.say(&flash::done_lines(&plan, &outcome));
    let peer = match (b.gadget.is_some(), ft.peer) {
        (false, _) => Peer::NotNeeded,
        (true, None) => Peer::External,
        (true, Some(addr)) => match steps.start_peer(addr) {
            Ok(bound) => Peer::Started(bound),
            Err(e) => {
                steps.say(&format!(
                    "warning: the host end of the network tests could not listen on {addr} \
                     ({e:#}); if a `benchboot peer` runs there already, fine; otherwise the \
                     board's network tests fail (its storage results do not depend on them)"
                ));
                Peer::Failed(addr)
            }
        },
    };
    steps.say(&format!(
        "[4/7] plug in\n{}",
        instructions(b, &card, &peer, &ft.wired)
    ));
    steps.say(&format!(
        "[5/7] wait: for {} on {} (up to {}; Ctrl-C stops waiting, the board still writes \
         its results to the card)",
        b.name,
        link_words(b),
        span(ft.timeout)
    ));
    let addr = steps
        .wait(b, ft.timeout)
        .map_err(|e| anyhow!("{e:#}\n{}", what_to_check(b, &card)))?;
    steps.say(&format!("[5/7] found the board at {addr}"));
    steps.say("[6/7] collect");
    let c = steps.collect(&addr)?;
    for w in collect::warnings(&c.results) {
        steps.say(&format!("warning: {w}"));
    }
    if c.results.board != b.name {
        steps.say(&format!(
            "warning: the board that answered says it is `{}`, not `{}`: another board on \
             this link? Its run is stored all the same",
            c.results.board, b.name
        ));
    }
    steps.say(&collect::summary(&c));
    steps.say("[7/7] report");
    steps.say(&report::render(&c.results, Format::Table)?);
    steps.say(&format!(
        "more: benchboot report {} --format markdown | --plots DIR",
        c.row.run_id
    ));
    Ok(Some(c))
}

fn describe_destination(d: &Destination) -> String {
    match &d.target {
        Target::Disk { device, .. } => device.describe(),
        Target::File { .. } => format!(
            "{} (a regular file: a rehearsal, nothing boots from it)",
            d.path.display()
        ),
    }
}

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

/// Which connector is a gadget board's USB device port, and whether it powers the
/// board; `None` for any other board (the schema has no field for it). The connectors
/// are those the board files' comments name (the Zero's OTG port marked USB, the Pi
/// 4's USB-C power port, the BeagleBone's USB0 mini-B, the Banana Pi's mini-USB OTG);
/// the power notes are these boards' documented power inputs.
pub fn usb_device_port(board: &str) -> Option<&'static str> {
    Some(match board {
        "rpi-zero-w" | "rpi-zero-2-w" => {
            "the micro-USB port marked USB, not the one marked PWR IN (this one cable \
             also powers the board)"
        }
        "rpi-4b" => {
            "the USB-C port, which is also its power input (this computer powers the board)"
        }
        "beaglebone-black" => "the mini-USB port (USB0; it can power the board too)",
        "bananapi-m1" => "the mini-USB OTG port (power the board from its own supply)",
        _ => return None,
    })
}

/// Where the serial console's pins are (3.3 V TTL), for the boards where that is
/// certain: every Raspberry Pi (firmware with config.txt: the UART on GPIO14/15 of the
/// header), the BeagleBone Black's J1 and the Banana Pi's debug header; `None` for any
/// other board.
pub fn console_pins(board: &Board) -> Option<&'static str> {
    if board
        .loader
        .as_ref()
        .is_some_and(|l| l.config == BootConfig::ConfigTxt)
    {
        return Some("header pin 8 (GPIO14, TXD), pin 10 (GPIO15, RXD), pin 6 (GND)");
    }
    match board.name.as_str() {
        "beaglebone-black" => Some("the 6-pin J1 header: pin 1 GND, pin 4 RXD, pin 5 TXD"),
        "bananapi-m1" => Some("the 3-pin UART0 debug header (TX, RX, GND)"),
        _ => None,
    }
}

/// `boot.console` split: `ttyS1,115200` is `("ttyS1", Some(115200))` (baud; the
/// speed is the digits after the comma, `115200n8` included).
pub fn console(board: &Board) -> (&str, Option<u32>) {
    let (dev, rest) = board
        .boot
        .console
        .split_once(',')
        .unwrap_or((board.boot.console.as_str(), ""));
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    (dev, digits.parse().ok())
}

fn console_line(board: &Board) -> String {
    let (dev, speed) = console(board);
    let speed = speed.map_or_else(
        || "the kernel's default speed".to_string(),
        |s| format!("{s} baud"),
    );
    let pins =
        console_pins(board).map_or_else(|| "the board's console UART".to_string(), str::to_string);
    format!(
        "serial console, to watch it: {dev} at {speed}, 8N1, 3.3 V TTL on {pins}; \
         the adapter's RX to the board's TX, TX to RX, GND to GND; it prints `benchboot: \
         ready` once the results are served"
    )
}

fn link_words(b: &Board) -> String {
    match (&b.gadget, &b.ethernet) {
        (Some(_), _) => "its USB gadget link".into(),
        (None, Some(e)) => format!("its Ethernet link ({})", e.interface),
        (None, None) => "no link".into(),
    }
}

/// `IFACE` and what it stands for: the interface the cable is in is not known here, so
/// the command never names one (it could be this computer's own uplink).
fn wired_words(wired: &[String]) -> (&'static str, String) {
    let which = if wired.is_empty() {
        " (IFACE: the wired interface the cable is in, see `ip -br link`)".to_string()
    } else {
        format!(
            " (IFACE: the one the cable is in; wired interfaces here: {})",
            wired.join(", ")
        )
    };
    ("IFACE", which)
}

/// What to plug where, for `board`: the card into the board, the serial console (the
/// board file's console device and speed), the results link (gadget: the USB device
/// port to this computer, DHCP gives this computer 10.55.0.2; Ethernet: a cable to
/// this computer and the `ip addr add 10.55.0.2/30` command for it, `wired` naming the
/// candidates), the peer, and that the results also land on the card's results
/// partition, with the `collect --from-card` command.
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
            let port = usb_device_port(&board.name)
                .unwrap_or("the board's USB device (OTG) port; power the board as usual");
            let functions: Vec<String> = g
                .functions
                .iter()
                .map(|f| f.configfs_type().to_uppercase())
                .collect();
            let tests = match peer {
                Peer::Started(a) => {
                    format!("measures the link against the benchboot peer this command runs on {a}")
                }
                Peer::External => {
                    "measures the link against `benchboot peer`, which you run (--no-peer)".into()
                }
                Peer::Failed(a) => format!(
                    "tries to measure the link against a benchboot peer on {a}, which this \
                     command could not start"
                ),
                Peer::NotNeeded => "runs its network tests".into(),
            };
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
            let (iface, which) = wired_words(wired);
            (
                format!(
                    "Connect the {name}'s Ethernet port to this computer with a cable, directly \
                     (the board has the fixed address {BOARD_ADDR}/{LINK_PREFIX} and no DHCP \
                     server), and power the board from its own supply. Give this computer's \
                     end {HOST_ADDR}/{LINK_PREFIX}{which}:\n       \
                     sudo ip addr add {HOST_ADDR}/{LINK_PREFIX} dev {iface}\n     \
                     If NetworkManager manages {iface}, it may replace that address when the \
                     link comes up: `sudo nmcli device set {iface} managed no` first."
                ),
                format!(
                    "Then the board runs its storage plan, brings up {} at \
                     {BOARD_ADDR}/{LINK_PREFIX} and serves its results at \
                     {BOARD_ADDR}:{RESULTS_PORT} (this board's plan has no network tests).",
                    e.interface
                ),
            )
        }
        (None, None) => (
            "Power the board: it has no network results link.".into(),
            "Then the board runs its plan.".into(),
        ),
    };
    format!(
        "  1. {insert}\n  2. Optional: {}.\n  3. {connect}\n{then}\nThe results also land on \
         the card's results partition (BBRESULTS): if nothing answers here, power the board \
         off, put the card back in this computer and run\n  {}\n",
        console_line(board),
        card.collect_command()
    )
}

/// What to check when no board answered in time, for `board` and `card`.
pub fn what_to_check(board: &Board, card: &Card) -> String {
    let (dev, speed) = console(board);
    let speed = speed.map_or_else(String::new, |s| format!(", {s} baud"));
    let mut s = format!(
        "what to check:\n  - the board is powered and booted: its serial console ({dev}{speed}) \
         shows its progress and `benchboot: ready` once it serves its results;\n"
    );
    if board.gadget.is_some() {
        let port = usb_device_port(&board.name).unwrap_or("the board's USB device (OTG) port");
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

/// The places a field-tested board can answer: [`discover::candidates`] without QEMU's
/// 127.0.0.1 forward (another QEMU run on this machine must not pass for the board),
/// unless `$BENCHBOOT_BOARD` (`env`) names it.
///
/// # Errors
/// `env` is not a `HOST:PORT` that resolves.
pub fn field_candidates(env: Option<&str>, usb: &[(String, u32)]) -> Result<Vec<Candidate>> {
    let qemu = SocketAddr::from((Ipv4Addr::LOCALHOST, QEMU_RESULTS_FORWARD));
    let mut list = discover::candidates(env, usb)?;
    // $BENCHBOOT_BOARD comes first; naming the forward keeps that one entry only.
    let mut named = env.is_some_and(|e| !e.is_empty());
    list.retain(|c| {
        let keep = c.addr != qemu || named;
        named = false;
        keep
    });
    Ok(list)
}

/// The benchboot source tree at `start` or above it: a folder holding `Cargo.toml`,
/// `xtask/Cargo.toml` and `boards/shared.toml`.
pub fn source_tree_from(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|d| {
            d.join("Cargo.toml").is_file()
                && d.join("xtask/Cargo.toml").is_file()
                && d.join("boards/shared.toml").is_file()
        })
        .map(Path::to_path_buf)
}

/// The source tree of the current folder, else the one this binary was built from
/// (`CARGO_MANIFEST_DIR` at build time) when it is still there.
pub fn source_tree() -> Option<PathBuf> {
    std::env::current_dir()
        .ok()
        .and_then(|d| source_tree_from(&d))
        .or_else(|| source_tree_from(Path::new(env!("CARGO_MANIFEST_DIR"))))
}

/// Where `cargo xtask image --board <board>` writes in `tree`:
/// `<target>/images/<board>.img`, `<target>` being `$CARGO_TARGET_DIR` (`target_env`;
/// relative to `tree`, where the build runs) or `tree/target`.
pub fn image_path(tree: &Path, board: &str, target_env: Option<&std::ffi::OsStr>) -> PathBuf {
    target_env
        .filter(|t| !t.is_empty())
        .map_or_else(|| tree.join("target"), |t| tree.join(t))
        .join("images")
        .join(format!("{board}.img"))
}

/// This computer's wired network interfaces from a `/sys/class/net`-shaped folder:
/// backed by a device, not wireless, not a USB gadget link; sorted.
pub fn wired_interfaces(sys_class_net: &Path) -> Vec<String> {
    let usb: Vec<String> = discover::usb_net_interfaces(sys_class_net)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let mut v: Vec<String> = std::fs::read_dir(sys_class_net)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let d = e.path();
            d.join("device").exists()
                && !d.join("wireless").exists()
                && !d.join("phy80211").exists()
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !usb.contains(n))
        .collect();
    v.sort();
    v
}

/// The real [`Steps`]: sysfs and proc under `root`, `cargo xtask image` in `tree`, the
/// flash module, a peer thread, TCP probes, the results store.
#[derive(Debug, Clone)]
pub struct System {
    /// Where sysfs and proc are (`/`).
    pub root: PathBuf,
    /// The source tree to build in; `None`: building fails with what to do.
    pub tree: Option<PathBuf>,
    /// `--device` and the flash choices; `image` is filled in per plan.
    pub flash: flash::Options,
    /// `--addr`: wait for this address only.
    pub addr: Option<SocketAddr>,
    /// `--addr` as given (the label collected from).
    pub addr_label: Option<String>,
    /// `--store`.
    pub store: Option<PathBuf>,
}

impl Steps for System {
    fn check_card(&mut self) -> Result<Destination> {
        flash::check_destination(&self.flash.device, self.flash.allow_large, &self.root)
    }

    fn build(&mut self, board: &Board) -> Result<PathBuf> {
        let name = &board.name;
        let Some(tree) = &self.tree else {
            bail!(
                "cannot build: `cargo xtask image` runs in a benchboot source tree, and neither \
                 this folder nor the tree benchboot was built from is one; run field-test \
                 inside a checkout, or pass --image PATH"
            );
        };
        if rustix::process::geteuid().is_root() && std::env::var_os("SUDO_USER").is_some() {
            eprintln!(
                "note: building as root (sudo) leaves root-owned files in target/; next time \
                 build as yourself (`cargo xtask image --board {name}`) and pass --image"
            );
        }
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = std::process::Command::new(&cargo)
            .args(["xtask", "image", "--board", name])
            .current_dir(tree)
            .status()
            .with_context(|| {
                format!(
                    "running {} (cargo not on PATH? under sudo root's PATH often lacks it): \
                     build as yourself with `cargo xtask image --board {name}` in {}, then pass \
                     --image",
                    Path::new(&cargo).display(),
                    tree.display()
                )
            })?;
        if !status.success() {
            bail!(
                "cargo xtask image --board {name} failed in {} ({status}); its output is above",
                tree.display()
            );
        }
        let image = image_path(tree, name, std::env::var_os("CARGO_TARGET_DIR").as_deref());
        if !image.is_file() {
            bail!(
                "cargo xtask image --board {name} succeeded, but {} is not there",
                image.display()
            );
        }
        Ok(image)
    }

    fn plan_flash(&mut self, image: &Path) -> Result<flash::Plan> {
        let opts = flash::Options {
            image: image.to_owned(),
            ..self.flash.clone()
        };
        flash::plan(&opts, &self.root)
    }

    fn confirm(&mut self, plan: &flash::Plan) -> Result<()> {
        flash::confirm(plan, self.flash.yes)
    }

    fn write(&mut self, plan: &flash::Plan) -> Result<flash::Outcome> {
        flash::execute_with_progress(plan)
    }

    fn start_peer(&mut self, listen: SocketAddr) -> Result<SocketAddr> {
        let listener =
            std::net::TcpListener::bind(listen).with_context(|| format!("binding {listen}"))?;
        let bound = listener.local_addr()?;
        std::thread::spawn(move || {
            let log = |line: &str| eprintln!("peer: {line}");
            if let Err(e) =
                benchboot_netbench::peer::serve_with_log(listener, Path::new(PROC_STAT), log)
            {
                eprintln!("peer: stopped: {e}");
            }
        });
        Ok(bound)
    }

    fn wait(&mut self, board: &Board, timeout: Duration) -> Result<String> {
        use std::io::IsTerminal;
        let env = std::env::var(discover::BOARD_ENV).ok();
        let fixed = match (&self.addr, &self.addr_label) {
            (Some(addr), Some(label)) => Some(vec![Candidate {
                label: label.clone(),
                addr: *addr,
                needs_link: false,
            }]),
            _ => None,
        };
        let spinner = indicatif::ProgressBar::new_spinner();
        if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
            spinner.set_style(style);
        }
        spinner.set_message(format!(
            "waiting for {} on {}",
            board.name,
            link_words(board)
        ));
        spinner.enable_steady_tick(Duration::from_millis(120));
        let terminal = std::io::stderr().is_terminal();
        let start = Instant::now();
        let mut next_note = NOTE_EVERY;
        loop {
            let list = match &fixed {
                Some(l) => l.clone(),
                None => {
                    let usb = discover::usb_net_interfaces(&self.root.join("sys/class/net"));
                    field_candidates(env.as_deref(), &usb)?
                }
            };
            if let Some(found) = discover::probe_round(&list) {
                spinner.finish_and_clear();
                return Ok(found);
            }
            let waited = start.elapsed();
            if waited >= timeout {
                spinner.finish_and_clear();
                let tried: Vec<&str> = list.iter().map(|c| c.label.as_str()).collect();
                bail!(
                    "no board answered at {} within {}",
                    tried.join(", "),
                    span(timeout)
                );
            }
            if !terminal && waited >= next_note {
                eprintln!(
                    "still waiting for {}: {} of {}",
                    board.name,
                    span(waited),
                    span(timeout)
                );
                next_note += NOTE_EVERY;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    fn collect(&mut self, addr: &str) -> Result<Collected> {
        collect::collect(&collect::Options {
            addr: Some(addr.to_owned()),
            from_card: None,
            store: self.store.clone(),
            timeout: DOWNLOAD_TIMEOUT,
            progress: true,
        })
    }

    fn say(&mut self, text: &str) {
        if text.ends_with('\n') {
            print!("{text}");
        } else {
            println!("{text}");
        }
    }
}

/// `benchboot field-test`: loads the board from the source tree's `boards/`, checks
/// `--addr`, then [`run_steps`] with [`System`].
///
/// # Errors
/// No `boards/` folder (run inside a checkout), an unknown or unusable board (the known
/// ones listed), a bad `--addr`, or the first failing step.
pub fn run(args: &FieldTestArgs) -> Result<()> {
    let tree = source_tree();
    let boards = match &tree {
        Some(t) => t.join("boards"),
        None => bail!(
            "field-test reads boards/{}.toml from a benchboot source tree: run it inside a \
             checkout (this folder and the tree benchboot was built from are none)",
            args.board
        ),
    };
    let board = benchboot_board::load(&boards, &args.board)?;
    let addr = match &args.addr {
        Some(a) => Some(discover::parse_addr(a).context("--addr")?),
        None => None,
    };
    let wired = if board.gadget.is_none() {
        wired_interfaces(Path::new("/sys/class/net"))
    } else {
        Vec::new()
    };
    let ft = FieldTest {
        board,
        device: args.device.clone(),
        image: args.image.clone(),
        dry_run: args.flags.dry_run,
        timeout: Duration::from_secs(args.timeout),
        peer: (!args.no_peer).then_some(args.peer),
        wired,
    };
    let mut system = System {
        root: PathBuf::from("/"),
        tree,
        flash: args.flags.options(PathBuf::new(), args.device.clone()),
        addr,
        addr_label: args.addr.clone(),
        store: args.store.clone(),
    };
    run_steps(&ft, &mut system).map(drop)
}

#[cfg(test)]
mod tests;
