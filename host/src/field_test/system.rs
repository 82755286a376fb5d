//! The real [`Steps`] ([`System`]): the flash module on this machine's disks, `cargo
//! xtask image` in the source tree, a peer thread, TCP probes of the board's link, the
//! results store; and what they look up on this computer (the source tree, its wired
//! interfaces, where the board can answer).

use benchboot_results::name::{NameKind, SafeName};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use benchboot_board::Board;

use super::guide::{link_words, span};
use super::Steps;
use crate::collect::{self, Collected};
use crate::discover::{self, Candidate};
use crate::flash::{self, Destination};

/// How long the download of the results may take once the board answers.
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(120);
/// Without a terminal (a CI log), a line while waiting this often.
const NOTE_EVERY: Duration = Duration::from_secs(600);
/// The system-wide CPU counters the peer samples.
const PROC_STAT: &str = "/proc/stat";

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

/// The checkout this binary was built from (`CARGO_MANIFEST_DIR` at build time), except
/// in the release and cross builds (`BENCHBOOT_NO_BUILD_TREE` set by `cargo xtask
/// host`/`dist`), which must not carry a path of the machine that built them.
const BUILD_TREE: Option<&str> = if option_env!("BENCHBOOT_NO_BUILD_TREE").is_some() {
    None
} else {
    Some(env!("CARGO_MANIFEST_DIR"))
};

/// The source tree of the current folder, else the one this binary was built from
/// ([`BUILD_TREE`]) when it is still there.
pub fn source_tree() -> Option<PathBuf> {
    std::env::current_dir()
        .ok()
        .and_then(|d| source_tree_from(&d))
        .or_else(|| BUILD_TREE.and_then(|t| source_tree_from(Path::new(t))))
}

/// Where `cargo xtask image --board <board>` writes in `tree`:
/// `<target>/images/<board>.img`, `<target>` being `$CARGO_TARGET_DIR` (`target_env`;
/// relative to `tree`, where the build runs) or `tree/target`.
pub fn image_path(tree: &Path, board: &SafeName, target_env: Option<&std::ffi::OsStr>) -> PathBuf {
    let images = target_env
        .filter(|t| !t.is_empty())
        .map_or_else(|| tree.join("target"), |t| tree.join(t))
        .join("images");
    board.path_in(&images, "img")
}

/// This computer's wired network interfaces from a `/sys/class/net`-shaped folder:
/// backed by a device, not wireless, not a USB gadget link; sorted.
pub fn wired_interfaces(sys_class_net: &Path) -> Vec<String> {
    let usb: Vec<String> = discover::usb_net_interfaces(sys_class_net)
        .into_iter()
        .map(|l| l.name)
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
            crate::errln!(
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
        let board = SafeName::new(NameKind::Board, name)?;
        let image = image_path(
            tree,
            &board,
            std::env::var_os("CARGO_TARGET_DIR").as_deref(),
        );
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
            let log = |line: &str| crate::errln!("peer: {line}");
            if let Err(e) =
                benchboot_netbench::peer::serve_with_log(listener, Path::new(PROC_STAT), log)
            {
                crate::errln!("peer: stopped: {e}");
            }
        });
        Ok(bound)
    }

    fn wait(&mut self, board: &Board, timeout: Duration) -> Result<String> {
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
        let terminal = crate::out::is_terminal(crate::out::Stream::Err);
        let start = Instant::now();
        let mut next_note = NOTE_EVERY;
        loop {
            let list = match &fixed {
                Some(l) => l.clone(),
                None => {
                    let usb = discover::usb_net_interfaces(&self.root.join("sys/class/net"));
                    discover::candidates(env.as_deref(), &usb)?
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
                crate::errln!(
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
            from_log: None,
            run: None,
            token: None,
            lava_check: true,
            store: self.store.clone(),
            timeout: DOWNLOAD_TIMEOUT,
            progress: true,
        })
    }

    fn say(&mut self, text: &str) {
        if text.ends_with('\n') {
            crate::out!("{text}");
        } else {
            crate::outln!("{text}");
        }
    }
}
