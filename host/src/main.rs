//! `benchboot`: the host tool. Fetches results from a board and prints them.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use benchboot::{fetch, render};
use benchboot_results::RunResults;
use clap::{Parser, Subcommand};

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
    /// Example: benchboot fetch --addr 127.0.0.1:8080 --out run.json
    Fetch {
        /// HOST:PORT of the board's results server.
        #[arg(long)]
        addr: String,
        /// Where to save the JSON (default: benchboot-results/<run id>.json).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Give up after this many seconds.
        #[arg(long, default_value_t = 30)]
        timeout: u64,
    },
    /// Print the tables of a saved results file.
    ///
    /// Example: benchboot show benchboot-results/rpi-zero-w-0123abcd.json
    Show { file: PathBuf },
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Fetch { addr, out, timeout } => {
            let (results, text) = fetch::fetch(&addr, Duration::from_secs(timeout))?;
            let path = out.unwrap_or_else(|| {
                PathBuf::from("benchboot-results").join(format!("{}.json", results.run_id))
            });
            let saved = fetch::save(&path, &text)?;
            print!("{}", render::report(&results));
            println!("saved {}", saved.display());
        }
        Command::Show { file } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            let results =
                RunResults::from_json(&text).with_context(|| format!("{}", file.display()))?;
            print!("{}", render::report(&results));
        }
    }
    Ok(())
}
