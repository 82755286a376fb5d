//! `benchboot peer`: the host end of the board's network tests (like `iperf3 -s`), and
//! the hidden `benchboot net`: the board's driver run from this machine against a peer
//! (for `cargo xtask bench net` and side-by-side checks with iperf3).

use std::net::{IpAddr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use benchboot::render;
use benchboot_netbench::{driver, peer};
use benchboot_plan::NetTests;
use benchboot_results::network::NetDirection;

/// The system-wide CPU counters sampled on this machine.
const PROC_STAT: &str = "/proc/stat";

/// Serves boards on `listen` until killed.
pub fn serve(listen: SocketAddr) -> Result<()> {
    let listener = TcpListener::bind(listen).with_context(|| {
        format!(
            "listening on {listen}: is another `benchboot peer` (or iperf3 -s) on that port? \
             Stop it, or pick another port with --listen 0.0.0.0:PORT and the same \
             network.tests.peer_port in the board's plan"
        )
    })?;
    eprintln!(
        "benchboot peer: listening on {} (the board's network.tests.peer_port must be {}); \
         one board at a time; Ctrl-C stops",
        listener.local_addr()?,
        listen.port()
    );
    peer::serve_with_log(listener, Path::new(PROC_STAT), |line| eprintln!("{line}"))
        .context("accepting connections")?;
    Ok(())
}

/// What `benchboot net` runs.
#[derive(Debug, Clone)]
pub struct NetRun {
    pub peer: SocketAddr,
    /// Where the peer can reach this machine's HTTP server (unspecified: the address of
    /// the control connection).
    pub board_ip: IpAddr,
    pub link: String,
    pub tests: NetTests,
    pub directions: Vec<NetDirection>,
    /// Save the network results as JSON here; `-` prints them instead of the tables.
    pub json: Option<PathBuf>,
}

/// Parses `board-to-host`, `host-to-board` or `both`.
pub fn parse_directions(s: &str) -> Result<Vec<NetDirection>> {
    Ok(match s {
        "board-to-host" => vec![NetDirection::BoardToHost],
        "host-to-board" => vec![NetDirection::HostToBoard],
        "both" => vec![NetDirection::BoardToHost, NetDirection::HostToBoard],
        other => {
            bail!("--direction: `{other}` is not a direction; use board-to-host, host-to-board or both")
        }
    })
}

/// Runs the driver against the peer; fails when any test failed (after printing what
/// did work).
pub fn net(run: &NetRun) -> Result<()> {
    let (results, errors) = driver::run_directions(
        run.peer,
        run.board_ip,
        &run.link,
        &run.tests,
        &run.directions,
        Path::new(PROC_STAT),
    );
    let json = serde_json::to_string_pretty(&results)?;
    match run.json.as_deref() {
        Some(p) if p == Path::new("-") => println!("{json}"),
        Some(p) => {
            benchboot::atomic_file::write(p, &json)?;
            eprintln!("saved {}", p.display());
            print!("{}", render::network_report(&results, false));
        }
        None => print!("{}", render::network_report(&results, false)),
    }
    for e in &errors {
        eprintln!("error: {e}");
    }
    if !errors.is_empty() {
        bail!("{} network test(s) failed", errors.len());
    }
    Ok(())
}
