//! The `benchboot power` command line: its subcommands' arguments and what each runs.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;

use super::import::{self, Import};
use super::position::Position;
use super::record::{self, Recording};

/// `benchboot power`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum PowerCommand {
    /// Attach a power trace to a stored run: saved in the store as the run's trace
    /// (`power/<run>.json`), shown by `benchboot report` with the energy of each step.
    #[command(after_help = "Examples:
  benchboot power import rpi-4b-1a2b trace.json
  benchboot power import rpi-4b-1a2b um25c.csv --replace --position wall")]
    Import(ImportArgs),
    /// Record a power trace from a meter until Ctrl-C or --for: run it beside the board
    /// (from power-on, so the trace holds the boot and both sync patterns), then attach
    /// the file to the run with `benchboot power import`.
    #[command(after_help = "Examples:
  benchboot power record --meter rdtech:/dev/rfcomm0 --out run.power.json
  benchboot power record --meter fnirsi --out run.power.json --for 900 --position board
  benchboot power record --meter shelly2:http://192.168.1.20 --out wall.json --position wall")]
    Record(RecordArgs),
    /// List the meters this machine can see: serial ports and Bluetooth serial links (an
    /// RDTech UM meter answers on one), FNIRSI USB meters. Plugs on the network are not
    /// searched for: name them with --meter shelly:http://ADDRESS etc.
    List,
    /// Print the energy of each step of a run from a results file and a trace file:
    /// idle power, the run's joules, the alignment, J, W above idle, J/GiB, nJ/bit.
    /// Exits non-zero when the trace cannot be tied to the run's steps.
    #[command(after_help = "Examples:
  benchboot power show target/results/qemu-virt-arm64-qemu.json target/results/qemu-virt-arm64-qemu.power.json
  benchboot power show run.json trace.json")]
    Show(super::show::ShowArgs),
}

/// `benchboot power record` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct RecordArgs {
    /// The meter, KIND:WHERE: rdtech:/dev/rfcomm0, fnirsi (the first found) or
    /// fnirsi:/dev/hidraw3, shelly:http://ADDRESS, shelly2:http://ADDRESS,
    /// tasmota:http://ADDRESS, netio:http://ADDRESS[#OUTPUT] (`benchboot power list`).
    #[arg(long)]
    pub meter: String,
    /// The trace file (JSON), written every few seconds, whole or not at all.
    #[arg(long)]
    pub out: PathBuf,
    /// Stop after this many seconds (default: at Ctrl-C).
    #[arg(long = "for", value_name = "SECONDS")]
    pub seconds: Option<f64>,
    /// Where the meter sits: `board` (between the supply and the board's power input) or
    /// `wall` (the supply's losses included).
    #[arg(long, value_enum)]
    pub position: Option<Position>,
}

/// `benchboot power import` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct ImportArgs {
    /// The stored run: its run id (or its start) from `benchboot runs`.
    pub run: String,
    /// The trace: a .json as `benchboot power record` writes it, or a meter's .csv (header
    /// `time_s,watts` or `time_s,volts,amps`).
    pub trace: PathBuf,
    /// Replace the trace the run has already.
    #[arg(long)]
    pub replace: bool,
    /// Where the meter sat: `board` (between the supply and the board's power input) or
    /// `wall` (the supply's losses included); replaces what the trace says.
    #[arg(long, value_enum)]
    pub position: Option<Position>,
    /// The results store folder. Default: $BENCHBOOT_STORE, else
    /// $XDG_DATA_HOME/benchboot, else ~/.local/share/benchboot.
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
}

/// Runs `benchboot power ...`.
///
/// # Errors
/// The subcommand's.
pub fn run(cmd: &PowerCommand) -> Result<()> {
    match cmd {
        PowerCommand::Import(a) => {
            let dir = crate::store::default_dir(a.store.as_deref())?;
            let done = import::import(
                &dir,
                &Import {
                    run: a.run.clone(),
                    file: a.trace.clone(),
                    replace: a.replace,
                    position: a.position.map(|p| p.words().to_owned()),
                },
            )?;
            crate::outln!("{}", import::summary(&done));
        }
        PowerCommand::Record(a) => {
            let duration = match a.seconds {
                Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
                Some(s) => anyhow::bail!("--for {s}: give a number of seconds above 0"),
                None => None,
            };
            let mut meter = super::meters::open(&a.meter)?;
            static STOP: AtomicBool = AtomicBool::new(false);
            let _ = ctrlc::set_handler(|| STOP.store(true, Ordering::SeqCst));
            crate::errln!(
                "power: recording {} into {} ({}); Ctrl-C stops",
                meter.name(),
                a.out.display(),
                duration.map_or("until Ctrl-C".to_owned(), |d| format!(
                    "for {} s",
                    d.as_secs_f64()
                ))
            );
            let rec = Recording {
                out: a.out.clone(),
                duration,
                position: a.position.map(|p| p.words().to_owned()),
                save_every: record::SAVE_EVERY,
            };
            let done = record::record(meter.as_mut(), &rec, Instant::now(), &STOP)?;
            crate::outln!("{}", record::summary(&done));
        }
        PowerCommand::List => {
            let found = super::meters::list();
            if found.is_empty() {
                crate::outln!(
                    "no meter found (no serial port, Bluetooth serial link or FNIRSI USB \
                     meter); plugs on the network are named with --meter, e.g. \
                     shelly2:http://ADDRESS"
                );
            }
            for f in &found {
                crate::outln!("{:<28} {}", f.spec, f.what);
            }
        }
        PowerCommand::Show(a) => super::show::run(a)?,
    }
    Ok(())
}
