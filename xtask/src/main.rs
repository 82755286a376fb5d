//! `cargo xtask <verb>`: parses the typed verbs of [`xtask::cli`] and dispatches each to
//! its module of the library; nothing else lives here.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use xtask::cli::{Bench, Cli, Verb};

/// Runs the verb; a failure is one `error: ...` line with its causes (`{:#}`), exit
/// status 1, never a backtrace (returning the error from `main` would print anyhow's
/// backtrace whenever `RUST_BACKTRACE=1` is set).
fn main() -> ExitCode {
    match run(Cli::parse().verb) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(verb: Verb) -> Result<()> {
    match verb {
        Verb::Setup { dry_run, tests } => xtask::setup::run(dry_run, tests),
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
            meter,
        } => {
            let board = xtask::load_board(&board)?;
            let timeout = std::time::Duration::from_secs(timeout);
            let mut opts = xtask::qemu::Options::main_job(&board, timeout);
            opts.card_plan = card_plan;
            opts.meter = meter.is_some();
            xtask::qemu::run_with(&board, &opts).map(drop)
        }
        Verb::Bench { what } => match what {
            Bench::Storage { path, runs } => xtask::bench::storage(path, runs.runs),
            Bench::Memory { runs } => xtask::bench_memory::memory(runs.runs),
            Bench::Net { runs, seconds } => xtask::bench_net::net(runs.runs, seconds.seconds),
            Bench::NetUdp { runs, seconds } => xtask::bench_net::udp(runs.runs, seconds.seconds),
            Bench::NetHttp { runs } => xtask::bench_net::http(runs.runs),
            Bench::Card {
                runs,
                dir,
                size_mib,
            } => xtask::bench_card::card(runs.runs, dir, size_mib),
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
        Verb::Dist { boards, hosts, out } => {
            let opts = xtask::dist::Options {
                out: out.unwrap_or_else(xtask::dist::default_out),
                boards: xtask::dist::boards(boards.as_deref())?,
                hosts: xtask::dist::hosts(hosts.as_deref())?,
            };
            xtask::dist::run(&opts).map(drop)
        }
        Verb::Lock => xtask::lock::run(),
        Verb::Boards { write_readme } => xtask::boards::run(write_readme),
    }
}
