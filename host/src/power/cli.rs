//! The `benchboot power` command line: its subcommands' arguments and what each runs.

use std::path::PathBuf;

use anyhow::Result;

use super::import::{self, Import};
use super::position::Position;

/// `benchboot power`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum PowerCommand {
    /// Attach a power trace to a stored run: saved in the store as the run's trace
    /// (`power/<run>.json`), shown by `benchboot report` with the energy of each step.
    #[command(after_help = "Examples:
  benchboot power import rpi-4b-1a2b trace.json
  benchboot power import rpi-4b-1a2b um25c.csv --replace --position wall")]
    Import(ImportArgs),
    /// Print the energy of each step of a run from a results file and a trace file:
    /// idle power, the run's joules, the alignment, J, W above idle, J/GiB, nJ/bit.
    /// Exits non-zero when the trace cannot be tied to the run's steps.
    #[command(after_help = "Examples:
  benchboot power show target/results/qemu-virt-arm64-qemu.json target/results/qemu-virt-arm64-qemu.power.json
  benchboot power show run.json trace.json")]
    Show(super::show::ShowArgs),
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
        PowerCommand::Show(a) => super::show::run(a)?,
    }
    Ok(())
}
