//! `benchboot`: the host tool. Fetches results from a board and prints them.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use benchboot::{fetch, render};
use clap::{Parser, Subcommand};

mod peer;

#[derive(Parser)]
#[command(
    name = "benchboot",
    version,
    about = "Measure what single-board computers really move"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Download results from a board's results server, save them, print the tables.
    ///
    /// Examples: benchboot fetch   (finds a board on its USB gadget link)
    ///           benchboot fetch --addr 127.0.0.1:8080 --out run.json
    Fetch {
        /// HOST:PORT of the board's results server. Default: find the board
        /// ($BENCHBOOT_BOARD, then the gadget links 10.55.0.1/.5/.9:8080, then the
        /// board's link-local address on each USB network link). Never 127.0.0.1, where
        /// any local user can listen: name a QEMU board (--addr 127.0.0.1:18080).
        #[arg(long)]
        addr: Option<String>,
        /// Where to save the JSON (default: benchboot-results/<run id>.json).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Give up after this many seconds.
        #[arg(long, default_value_t = 30)]
        timeout: u64,
    },
    /// Run the board's storage engine on this machine, in a folder on the disk to test.
    ///
    /// Example: benchboot storage --path /mnt/usb --block-sizes 4096,1048576 --repetitions 3
    #[cfg(unix)]
    Storage(benchboot::storage::StorageArgs),
    /// Not on Windows: the storage engine needs POSIX file I/O.
    #[cfg(not(unix))]
    Storage(Unsupported),
    /// Run the board's memory engine on this machine: bandwidth per kernel and core set,
    /// latency, the CPU clock (tinymembench's and sbc-bench's methods).
    ///
    /// Defaults are the hardware plan's step (0.5 s samples, 5 of them, latency 1 KiB ...
    /// 64 MiB, 4 M reads x 3 repeats, huge pages, every core).
    #[command(after_help = "Examples:
  benchboot memory
  benchboot memory --out host-memory.json && benchboot report host-memory.json --plots plots/
  benchboot memory --samples 1 --sample-ms 50 --latency-max-mib 16 --no-huge-pages   (quick)")]
    #[cfg(unix)]
    Memory(benchboot::memory::MemoryArgs),
    /// Not on Windows: the memory engine pins threads per CPU and reads /proc and /sys
    /// (Linux).
    #[cfg(not(unix))]
    Memory(Unsupported),
    /// Serve the board's network tests: the host end, like `iperf3 -s`.
    ///
    /// TCP throughput both ways, round trips and HTTP, for up to 8 boards at once (2
    /// from one address), until stopped. The board's plan must name the same port
    /// (network.tests.peer_port).
    ///
    /// Like `iperf3 -s`, it listens on every interface by default: anyone who can reach
    /// the port can start a test. Use --listen to serve one address only (the gadget
    /// link's, say). UDP runs use the same port number in UDP and go only to the address
    /// of the board's own control connection; runs longer than 10 min (1 min warm-up)
    /// and UDP above --max-udp-bitrate are refused; a connection whose first line is
    /// not in within 5 s, or a session that runs no test for 120 s, is closed; the HTTP
    /// objects of every board share 1 GiB. Every session is logged on stderr.
    ///
    /// Example: benchboot peer --listen 0.0.0.0:5202
    ///
    /// Example (board on a LAN, no peer address in its plan): benchboot peer --announce
    ///
    /// Example (QEMU user network, board_http_port 8080 forwarded from host port
    /// 18081): benchboot peer --board-address 127.0.0.1:18081
    ///
    /// Example (the board as WiFi access point): benchboot peer --wifi
    Peer {
        /// ADDRESS:PORT to listen on, e.g. 0.0.0.0:5202 (all interfaces) or
        /// 10.55.0.2:5202 (the gadget link only).
        #[arg(long, default_value = "0.0.0.0:5202")]
        listen: std::net::SocketAddr,
        /// Broadcast `benchboot-peer 1 port=PORT` once a second to
        /// 255.255.255.255:5202 (UDP), so a board on the LAN finds this peer.
        #[arg(long)]
        announce: bool,
        /// HOST:PORT where the board's HTTP server is reached from here when a NAT
        /// stands between (the board's plan fixes network.tests.board_http_port):
        /// replaces the host and port of the URL the board asks this peer to fetch.
        #[arg(long)]
        board_address: Option<std::net::SocketAddr>,
        /// Join the WiFi networks the board offers over the results link (UDP 5203 on
        /// the --listen address; the board as access point, one network per channel it
        /// sweeps) with this host's WiFi adapter: nmcli on Linux, networksetup on
        /// macOS; Windows: join by hand. Only an offer from the board at the other end
        /// of a point-to-point link of this host (the gadget link's /30, a direct
        /// cable's), holding a session with this peer over that link, for that board's
        /// own SSID (bb-<board>-...), is taken; others are refused with the reason (a
        /// board on a LAN: join by hand). The peer keeps serving on every interface.
        #[arg(long)]
        wifi: bool,
        /// UDP port the WiFi offers are listened for on, at the --listen address.
        #[arg(long, hide = true, default_value_t = benchboot_netbench::wifi_offer::WIFI_OFFER_PORT)]
        wifi_offer_port: u16,
        /// This host's addresses as ADDRESS/PREFIX (10.55.0.2/30), instead of reading
        /// them from the system: for tests over loopback, where no link is
        /// point-to-point.
        #[arg(long, hide = true, value_delimiter = ',')]
        wifi_host_addresses: Vec<benchboot::point_to_point::HostAddr>,
        /// Highest UDP load offered or taken, bit/s with k, M or G: 1G, the fastest
        /// link of any board (Gigabit Ethernet on the Pi 4 B and Banana Pi M1); at most
        /// 100G, the plan's own limit (loopback benchmarks).
        #[arg(long, default_value = "1G", value_parser = peer::parse_max_udp_bitrate)]
        max_udp_bitrate: u64,
    },
    /// Join stdin and stdout to a TCP connection (QEMU's guest forwards run it).
    #[command(hide = true)]
    Relay {
        /// ADDRESS:PORT to connect to.
        to: std::net::SocketAddr,
    },
    /// Run the board's network tests from this machine against a `benchboot peer`.
    ///
    /// Example: benchboot net --peer 127.0.0.1:5202 --streams 1,4 --duration-ms 10000
    #[command(hide = true)]
    Net(peer::NetArgs),
    /// Print the tables of a saved results file or a stored run (as `report` does).
    ///
    /// Example: benchboot show benchboot-results/rpi-zero-w-0123abcd.json
    ///
    /// Example: benchboot show rpi-zero-w-0123   (a stored run id, or its start)
    ///
    /// Example: benchboot show run.json --power trace.json   (with the energy of each step)
    Show {
        /// A results JSON file, or a run id (or its start) from `benchboot runs`.
        run: String,
        /// The power trace recorded during the run (JSON, as `benchboot power record`
        /// writes it): adds the energy section.
        #[arg(long, value_name = "TRACE.json")]
        power: Option<PathBuf>,
    },
    /// Wait for a board, download its results and keep them in the local results store.
    ///
    /// A board serves its results once its run is done; a board without a USB OTG port
    /// leaves them on its card's results partition (BBRESULTS) instead.
    #[command(after_help = "Examples:
  benchboot collect                           (finds the board on its USB gadget link)
  benchboot collect --addr 127.0.0.1:18080    (a QEMU board, cargo xtask qemu)
  sudo benchboot collect --from-card /dev/sdb (the card, read-only)
  benchboot collect --from-card /media/$USER/BBRESULTS
  benchboot collect --from-file saved/results.json   (a results document saved elsewhere)
  benchboot collect --json | jq -r .json_path")]
    Collect(benchboot::collect::CollectArgs),
    /// List the runs in the local results store.
    #[command(after_help = "Examples:
  benchboot runs
  benchboot runs --json | jq -r '.[].run_id'")]
    Runs(benchboot::collect::RunsArgs),
    /// Report one run: the seeds' tables, context and warnings; tables, Markdown, CSV,
    /// JSON, plots.
    #[command(after_help = "Examples:
  benchboot report benchboot-results/rpi-zero-w-0123abcd.json
  benchboot report run.json --format markdown > run.md
  benchboot report run.json --format csv > run.csv      (one row per measurement)
  benchboot report run.json --json | jq '.storage[0]'
  benchboot report run.json --plots plots/              (PNG + SVG)")]
    Report(benchboot::report::ReportArgs),
    /// Compare runs side by side, or with built-in references: ratios, spread, rank test.
    #[command(after_help = "Examples:
  benchboot compare pi-zero.json banana-pi.json
  benchboot compare rpi-zero-w-0123 rpi-zero-w-4567   (stored run ids from `benchboot runs`)
  benchboot compare run.json --reference pi-model-b-usb-hdd --plots plots/
  benchboot compare a.json b.json --format csv > compare.csv
  benchboot compare --list-references")]
    Compare(benchboot::compare::CompareArgs),
    /// List the disks a card could be on, and whether `benchboot flash` may write each.
    #[command(after_help = "Examples:
  benchboot devices
  benchboot devices --json | jq -r '.[] | select(.writable) | .path'")]
    Devices(benchboot::devices::DevicesArgs),
    /// Write an image to a card (or a file), then read it back and compare SHA-256.
    ///
    /// Refuses fixed disks, the system's disk, read-only cards and disks larger than
    /// 256 GiB, with every reason; unmounts the card's own partitions (Windows: locks and
    /// dismounts its volumes); writes the first 1 MiB last, so an interrupted write
    /// leaves a card that does not boot.
    #[command(after_help = "Examples:
  benchboot flash target/images/rpi-zero-w.img --device /dev/sdb --dry-run
  sudo benchboot flash target/images/rpi-zero-w.img --device /dev/mmcblk0
  benchboot flash target/images/rpi-zero-w.img --device card.img --yes   (to a file)
  sudo benchboot flash target/images/rpi-zero-w.img --device /dev/sdb --probe   (fake card check first)
  benchboot flash rpi-zero-w.img --device \\\\.\\PhysicalDrive2   (Windows, elevated prompt)
  benchboot flash rpi-zero-w.img --device E:   (Windows: the disk holding volume E:)")]
    Flash(benchboot::flash::FlashArgs),
    /// Is the card what it claims? Writes position-stamped blocks from its first to its
    /// claimed last sector and reads them back: real size, wrap-around, dropped writes,
    /// I/O errors. Destroys the card's data; exits non-zero for a fake or failing card.
    ///
    /// Refuses the disks `benchboot flash` refuses; asks first (--yes without a
    /// terminal).
    #[command(after_help = "Examples:
  sudo benchboot probe /dev/sdb
  sudo benchboot probe /dev/mmcblk0 --yes --json probe.json
  benchboot probe \\\\.\\PhysicalDrive2 --full   (Windows, elevated prompt)")]
    Probe(benchboot::probe::ProbeArgs),
    /// Partition and format a USB or SATA test disk: four equal primary partitions,
    /// ext2, ext3, ext4 and FAT32, labelled BBEXT2, BBEXT3, BBEXT4 and BBVFAT.
    ///
    /// Refuses the system's disk, a disk with anything mounted, read-only and virtual
    /// disks and disks larger than 256 GiB (--allow-large), with every reason; asks
    /// first (--yes without a terminal). A regular file (an image) works the same way.
    #[command(after_help = "Examples:
  benchboot prepare-disk /dev/sdb --dry-run
  sudo benchboot prepare-disk /dev/sdb
  truncate -s 256M disk.img && benchboot prepare-disk disk.img --yes   (an image for QEMU)")]
    #[cfg(unix)]
    PrepareDisk(benchboot::prepare_disk::PrepareDiskArgs),
    /// Not on Windows: the test disk's ext2/3/4 partitions need Linux's mke2fs.
    #[cfg(not(unix))]
    PrepareDisk(Unsupported),
    /// Field test one board: build its image, flash a card, say what to plug where, wait
    /// for the board, collect its results into the store and print the report.
    ///
    /// The card is refused exactly as `benchboot flash` refuses it (checked before the
    /// build, and again before writing), and erased only after confirmation (--yes
    /// without a terminal). Gadget boards get the host end of their network tests
    /// (`benchboot peer`) for as long as this runs. Steps: card, build (`cargo xtask
    /// image` in the source tree, or --image), flash, plug in, wait, collect, report.
    #[command(after_help = "Examples:
  benchboot field-test --board rpi-zero-w --device /dev/sdb --dry-run
  benchboot field-test --board rpi-zero-w --device /dev/sdb      (you in the disk group)
  cargo xtask image --board rpi-1b
  sudo benchboot field-test --board rpi-1b --device /dev/sdb --image target/images/rpi-1b.img
  benchboot field-test --board beaglebone-black --device /dev/sdc --timeout 14400 --yes

Writing a card needs root or the disk group. Under sudo, cargo is often not on root's
PATH and the results store is root's: build first as yourself, pass --image (and
--store DIR to keep the run in your own store).")]
    #[cfg(unix)]
    FieldTest(benchboot::field_test::FieldTestArgs),
    /// Not on Windows yet: run `benchboot flash`, boot the board, then `benchboot
    /// collect` and `benchboot report`.
    #[cfg(not(unix))]
    FieldTest(Unsupported),
    /// Plan files: check one for a board (what runs, how long at most), or make one the
    /// plan of a card without rebuilding it.
    #[command(
        subcommand,
        after_help = "Examples:
  benchboot plan check plans/seeds.toml --board rpi-zero-w
  benchboot plan check my.toml --board bananapi-m1
  benchboot plan check my.toml --board my-board --boards ~/my-boards   (your own board file)
  benchboot plan check my.toml --card /media/me/BBRESULTS   (against the card's image.json)
  benchboot plan write --card /media/me/BBRESULTS my.toml     (the card's FAT, mounted)
  benchboot plan write --card target/images/qemu-virt-arm64.img quick"
    )]
    Plan(benchboot::plan::PlanCommand),
    /// Power traces: record one from a meter, attach one to a stored run; `benchboot
    /// report` then shows the energy of each step.
    #[command(subcommand)]
    Power(benchboot::power::PowerCommand),
    /// Print the init's log: decode the defmt frames it stored (`log.defmt` on the card's
    /// results partition) with the unstripped init the image build kept.
    Log(benchboot::log::LogArgs),
}

/// A command this system lacks: its arguments are taken and ignored, the error says why
/// and what to use instead.
#[cfg(not(unix))]
#[derive(clap::Args)]
struct Unsupported {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    _args: Vec<String>,
}

/// The error of a command this system lacks.
#[cfg(not(unix))]
fn unsupported(command: &str, instead: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "`benchboot {command}` is not available on {}: {instead}",
        std::env::consts::OS
    )
}

/// Runs the command; a failure prints `error: ` and the whole context chain (`{:#}`,
/// control characters escaped: `benchboot_results::text::escape_lines`) to stderr and
/// exits with status 1: a person's mistake is a message, never a backtrace
/// (also under `RUST_BACKTRACE=1`). Usage errors exit with clap's status 2.
fn main() -> ExitCode {
    quiet_caught_fat_panics();
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Messages quote their input (a run id, a board name, a log line): escaped.
            let message = benchboot::out::without_os_error_codes(&format!("{e:#}"));
            benchboot::errln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// A panic inside fatfs is caught by `benchboot_card::fat_guard` and becomes an error
/// naming the damage (fatfs subtracts unchecked on a damaged card's cluster 0 or 1):
/// its default panic message, printed before the error, is dropped. Every other panic
/// is printed as before.
fn quiet_caught_fat_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let in_fatfs = info
            .location()
            .is_some_and(|l| l.file().replace('\\', "/").contains("/fatfs-"));
        if !in_fatfs {
            default(info);
        }
    }));
}

fn run(command: Command) -> Result<()> {
    match command {
        Command::Fetch { addr, out, timeout } => {
            let addr = match addr {
                Some(a) => a,
                None => {
                    let found = benchboot::discover::discover(Duration::from_secs(timeout))?;
                    benchboot::errln!("found a board at {found}");
                    found
                }
            };
            let (results, text) = fetch::fetch(&addr, Duration::from_secs(timeout))?;
            let path = match out {
                Some(out) => out,
                None => fetch::default_path(&results)?,
            };
            let saved = fetch::save(&path, &text)?;
            benchboot::out!("{}", render::report_fitted(&results));
            benchboot::outln!("saved {}", saved.display());
        }
        #[cfg(unix)]
        Command::Storage(args) => benchboot::storage::run_command(&args)?,
        #[cfg(not(unix))]
        Command::Storage(_) => {
            return Err(unsupported(
                "storage",
                "the storage engine needs POSIX file I/O (Linux: O_DIRECT; macOS: F_NOCACHE); \
                 run it on Linux or macOS",
            ))
        }
        #[cfg(unix)]
        Command::Memory(args) => benchboot::memory::run_command(&args)?,
        #[cfg(not(unix))]
        Command::Memory(_) => {
            return Err(unsupported(
                "memory",
                "it pins threads per CPU and reads /proc and /sys; run it on Linux",
            ))
        }
        Command::Peer {
            listen,
            announce,
            board_address,
            wifi,
            wifi_offer_port,
            wifi_host_addresses,
            max_udp_bitrate,
        } => {
            let options = benchboot_netbench::peer::PeerOptions {
                board_address,
                announce_to: announce.then_some(benchboot_netbench::announce::BROADCAST),
                max_udp_bitrate,
                ..Default::default()
            };
            if wifi {
                use benchboot::wifi_join::offers::HostLinks;
                let links = if wifi_host_addresses.is_empty() {
                    HostLinks::System
                } else {
                    HostLinks::Given(wifi_host_addresses)
                };
                peer::serve_wifi(listen, wifi_offer_port, links, &options)?;
            } else {
                peer::serve(listen, &options)?;
            }
        }
        #[cfg(unix)]
        Command::Relay { to } => benchboot::relay::run(to)?,
        #[cfg(not(unix))]
        Command::Relay { .. } => {
            return Err(unsupported(
                "relay",
                "QEMU's guest forwards run it on Linux",
            ))
        }
        Command::Net(args) => peer::net(&args.net_run())?,
        Command::Report(args) => benchboot::report::run(&args)?,
        Command::Compare(args) => benchboot::compare::run(&args)?,
        Command::Devices(args) => benchboot::devices::run(&args)?,
        Command::Flash(args) => benchboot::flash::run_args(&args)?,
        Command::Probe(args) => benchboot::probe::run(&args)?,
        #[cfg(unix)]
        Command::PrepareDisk(args) => benchboot::prepare_disk::run(&args)?,
        #[cfg(unix)]
        Command::FieldTest(args) => benchboot::field_test::run(&args)?,
        #[cfg(not(unix))]
        Command::PrepareDisk(_) => {
            return Err(unsupported(
                "prepare-disk",
                "the test disk's ext2, ext3 and ext4 partitions need Linux's mke2fs",
            ))
        }
        #[cfg(not(unix))]
        Command::FieldTest(_) => {
            return Err(unsupported(
                "field-test",
                "its steps (the image build, the sudo and disk-group checks) are Linux's and \
                 macOS's; run `benchboot flash`, boot the board, then `benchboot collect` and \
                 `benchboot report`",
            ))
        }
        Command::Log(args) => benchboot::log::run(&args)?,
        Command::Plan(cmd) => benchboot::plan::run(&cmd)?,
        Command::Power(cmd) => benchboot::power::run(&cmd)?,
        Command::Collect(args) => benchboot::collect::run(&args)?,
        Command::Runs(args) => benchboot::collect::run_runs(&args)?,
        Command::Show { run, power } => {
            let file = benchboot::report::resolve_run(&run)?;
            let results = benchboot::results_file::load_path(&file)?;
            let energy = benchboot::power::energy::Energy::find(&file, power.as_deref(), &results)?;
            let doc = render::document_full(&results, energy.as_ref(), &[]);
            benchboot::out!("{}", doc.text_width(benchboot::doc::terminal_width()));
        }
    }
    Ok(())
}
