//! `cargo xtask <verb>`: dispatches to one module per verb.
#![forbid(unsafe_code)]

use anyhow::Result;
use clap::{Parser, Subcommand};

mod bench_net;

#[derive(Parser)]
#[command(name = "cargo xtask", about = "benchboot build automation")]
struct Cli {
    #[command(subcommand)]
    verb: Verb,
}

#[derive(Subcommand)]
enum Verb {
    /// Install what the build and tests need (apt, pip, rustup components).
    Setup {
        /// Print the commands instead of running them.
        #[arg(long)]
        dry_run: bool,
    },
    /// Cross-build the static init for a board (or a bare target) and gate it.
    Firmware {
        #[arg(long, conflicts_with = "target")]
        board: Option<String>,
        /// A Rust target triple, built for its baseline CPU.
        #[arg(long)]
        target: Option<String>,
    },
    /// Cross-build the host tool for macOS and Windows (zig as C compiler and linker) and
    /// check each binary is a Mach-O / PE executable of its machine.
    Host {
        /// A target triple (repeat it): aarch64-apple-darwin, x86_64-apple-darwin,
        /// x86_64-pc-windows-gnu. Default: all three.
        #[arg(long)]
        target: Vec<String>,
    },
    /// Build target/images/<board>.img and its manifest.
    Image {
        #[arg(long)]
        board: String,
        /// The default plan built in and written onto the card as `plan.toml`: a preset
        /// (`quick`, `standard`, `seeds`) or a plan file.
        #[arg(long, default_value = "standard")]
        plan: String,
    },
    /// Build the image if needed, boot it in QEMU, fetch and print the results.
    Qemu {
        #[arg(long)]
        board: String,
        /// Give up after this many seconds.
        #[arg(long, default_value_t = 900)]
        timeout: u64,
        /// Run this plan file (or preset: quick, standard, seeds) instead of the short
        /// QEMU plan: written onto the card copy with `benchboot plan write`, taken by
        /// PID 1 at boot (plan `qemu-card`). Figures stay emulated.
        #[arg(long)]
        card_plan: Option<String>,
    },
    /// Benchmarks (not tests): `storage` runs benchboot, dd and fio side by side;
    /// `memory` benchboot's memory engine and tinymembench; `net` benchboot's TCP engine
    /// and iperf3 over loopback, `net-udp` its UDP runs and `iperf3 -u`, `net-http` its
    /// HTTP runs and nginx + curl.
    Bench {
        /// What to benchmark: `storage`, `memory`, `net`, `net-udp` or `net-http`.
        what: String,
        /// Folder on the disk to measure (default target/bench).
        #[arg(long)]
        path: Option<std::path::PathBuf>,
        /// Runs per tool and cell (medians are compared).
        #[arg(long, default_value_t = 3)]
        runs: u32,
        /// (net) Measured seconds per run, after a 1 s warm-up.
        #[arg(long, default_value_t = 5)]
        seconds: u64,
    },
    /// Write a board's LAVA job definitions (flasher, TFTP, qemu routes) and the files
    /// they name into target/images/<board>.lava/ (ARCHITECTURE.md, README "Board farms").
    Lava {
        #[arg(long)]
        board: String,
        /// The image's default plan: a preset (`quick`, `standard`, `seeds`) or a plan
        /// file; the jobs' timeouts come from its estimate.
        #[arg(long, default_value = "standard")]
        plan: String,
        /// The URL the lab serves the written files from (`https://...`, `file:///...`).
        #[arg(long, value_name = "URL")]
        artifacts: String,
        /// Another folder for the jobs and files.
        #[arg(long, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
        /// A user command of the lab's device dictionary to run after the test, the
        /// board still up (e.g. one that fetches results.json over the lab network).
        #[arg(long, value_name = "NAME")]
        fetch_command: Option<String>,
        /// Write the job files only (no image build, no artefacts, no SHA-256s).
        #[arg(long)]
        jobs_only: bool,
    },
    /// Refresh boards/packages.lock.toml from the Debian mirror's current index.
    Lock,
    /// Check every board file against the pinned packages and print the README's board
    /// table.
    Boards {
        /// Write the table into README.md instead of printing it.
        #[arg(long)]
        write_readme: bool,
    },
}

fn main() -> Result<()> {
    match Cli::parse().verb {
        Verb::Setup { dry_run } => xtask::setup::run(dry_run),
        Verb::Firmware { board, target } => {
            let cpu = match (board, target) {
                (Some(b), _) => xtask::firmware::CpuTarget::of_board(&xtask::load_board(&b)?),
                (None, Some(t)) => xtask::firmware::CpuTarget::baseline(&t)?,
                (None, None) => anyhow::bail!("give --board NAME or --target TRIPLE"),
            };
            xtask::firmware::build(&cpu).map(drop)
        }
        Verb::Host { target } => {
            let targets = if target.is_empty() {
                xtask::host_cross::TARGETS.iter().collect()
            } else {
                target
                    .iter()
                    .map(|t| xtask::host_cross::HostTarget::of(t))
                    .collect::<Result<Vec<_>>>()?
            };
            for path in xtask::host_cross::build(&targets)? {
                println!("{}", path.display());
            }
            Ok(())
        }
        Verb::Image { board, plan } => {
            let board = xtask::load_board(&board)?;
            let plan = benchboot_image::plans::PlanText::from_arg(&plan)?;
            xtask::image::run_with(&board, &xtask::image::image_path(&board), &plan).map(drop)
        }
        Verb::Qemu {
            board,
            timeout,
            card_plan,
        } => {
            let mut opts = xtask::qemu::Options::new(std::time::Duration::from_secs(timeout));
            opts.card_plan = card_plan;
            xtask::qemu::run_with(&xtask::load_board(&board)?, &opts).map(drop)
        }
        Verb::Bench {
            what,
            path,
            runs,
            seconds,
        } => match what.as_str() {
            "storage" => xtask::bench::storage(path, runs),
            "memory" => xtask::bench_memory::memory(runs),
            "net" => bench_net::net(runs, seconds),
            "net-udp" => bench_net::udp(runs, seconds),
            "net-http" => bench_net::http(runs),
            other => anyhow::bail!(
                "no bench named `{other}`: use `storage`, `memory`, `net`, `net-udp` or \
                 `net-http`"
            ),
        },
        Verb::Lava {
            board,
            plan,
            artifacts,
            out,
            fetch_command,
            jobs_only,
        } => {
            let board = xtask::load_board(&board)?;
            let out = out.unwrap_or_else(|| xtask::lava::default_out(&board));
            let w = xtask::lava::run(&xtask::lava::Options {
                plan: benchboot_image::plans::PlanText::from_arg(&plan)?,
                artifacts,
                out,
                fetch_command,
                artifacts_too: !jobs_only,
                board,
            })?;
            for p in w.jobs.iter().chain(&w.device_types).chain(&w.artifacts) {
                println!("{}", p.display());
            }
            Ok(())
        }
        Verb::Lock => xtask::lock::run(),
        Verb::Boards { write_readme } => xtask::boards::run(write_readme),
    }
}
