//! `benchboot field-test --board B --device DEV`: one board from source to report.
//!
//! The sequence ([`run_steps`]): the card is checked with the rules of `benchboot
//! flash` before anything else; the image is built (`cargo xtask image --board B` as a
//! child process in the source tree, or taken from `--image`); it is flashed with
//! `benchboot flash`'s plan, confirmation, write (first MiB last) and SHA-256 read-back;
//! a board with network tests (a gadget board, or one whose results link is its
//! Ethernet) gets their host end (`benchboot peer`) on a thread; the person is told what to plug where, from the board file
//! ([`instructions`]); the board is waited for on its own link (never QEMU's
//! 127.0.0.1 forward); its results are collected into the store as `benchboot collect`
//! does, and the report is printed.
//!
//! Every effect is a method of [`Steps`]: [`System`] (`system.rs`) does the real work,
//! tests drive [`run_steps`] with fakes. What the person is told (`guide.rs`) comes from
//! the board file: description, results link, console device and speed (`boot.console`),
//! console pins and level (`[serial]`), the USB device port (`gadget.port`).

mod guide;
mod system;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use benchboot_board::Board;
use benchboot_plan::NetTests;

use crate::collect::{self, Collected};
use crate::discover;
use crate::flash::{self, Destination, Target};
use crate::report::{self, Format};

pub use guide::{
    console, console_pins, instructions, span, usb_device_port, what_to_check, Card, Console, Peer,
};
pub use system::{image_path, source_tree, source_tree_from, wired_interfaces, System};

/// The board's address on its results link, gadget (first function) or Ethernet.
pub const BOARD_ADDR: Ipv4Addr = Ipv4Addr::new(10, 55, 0, 1);
/// This computer's address on that link: leased by the gadget's DHCP server, or set by
/// hand on the Ethernet cable's interface (with prefix [`LINK_PREFIX`]).
pub const HOST_ADDR: Ipv4Addr = Ipv4Addr::new(10, 55, 0, 2);
/// Prefix length of the point-to-point link, bits.
pub const LINK_PREFIX: u8 = 30;
/// Default of `--timeout`, seconds: 3 h, twice the hardware plan of a Pi Zero W.
pub const DEFAULT_TIMEOUT_S: u64 = 3 * 3600;

/// `benchboot field-test` as clap parses it.
#[derive(Debug, Clone, clap::Args)]
pub struct FieldTestArgs {
    /// The board: the name of its board file (rpi-zero-w, rpi-4b, beaglebone-black, ...;
    /// built in, or in --boards DIR).
    #[arg(long, value_name = "NAME")]
    pub board: String,
    #[command(flatten)]
    pub boards: crate::plan::BoardsArg,
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

/// True when the board's hardware plan runs network tests against a peer: over its
/// gadget, or (no gadget) over the Ethernet that carries its results.
fn has_network_tests(b: &Board) -> bool {
    b.gadget.is_some() || b.results_ethernet().is_some()
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
        let peer = match (has_network_tests(b), ft.peer) {
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
    let peer = match (has_network_tests(b), ft.peer) {
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
        guide::link_words(b),
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

/// `benchboot field-test`: loads the board (built in, or from `--boards DIR`), checks
/// `--addr`, then [`run_steps`] with [`System`] (which builds the image in the source
/// tree, when there is one, unless `--image` gives it).
///
/// # Errors
/// An unknown or unusable board (the known ones listed), a bad `--addr`, or the first
/// failing step.
pub fn run(args: &FieldTestArgs) -> Result<()> {
    let tree = source_tree();
    let board = crate::plan::load_board(&args.boards.catalog(), &args.board)?;
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
