//! `benchboot peer`: the host end of the board's network tests (like `iperf3 -s`), and
//! the hidden `benchboot net`: the board's driver run from this machine against a peer
//! (for `cargo xtask bench net` and side-by-side checks with iperf3).

use std::net::{IpAddr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use benchboot::render;
use benchboot_netbench::{driver, peer};
use benchboot_plan::NetTests;
use benchboot_results::counters::NetDirection;

/// The system-wide CPU counters sampled on this machine.
const PROC_STAT: &str = "/proc/stat";

/// Binds the peer's TCP port.
///
/// # Errors
/// The port is taken, with the fix.
fn bind(listen: SocketAddr) -> Result<TcpListener> {
    TcpListener::bind(listen).with_context(|| {
        format!(
            "listening on {listen}: is another `benchboot peer` (or iperf3 -s) on that port? \
             Stop it, or pick another port with --listen 0.0.0.0:PORT and the same \
             network.tests.peer_port in the board's plan"
        )
    })
}

/// Serves boards on `listener` until killed, with `options`, keeping its live sessions
/// in `registry`.
fn serve_on(
    listener: TcpListener,
    options: &peer::PeerOptions,
    registry: peer::Registry,
) -> Result<()> {
    benchboot::errln!(
        "benchboot peer: listening on {} (the board's network.tests.peer_port must be {}, \
         unless a forward maps it, as QEMU's guestfwd does); every interface unless --listen \
         names one, as iperf3 -s; up to {} boards at once; Ctrl-C stops",
        listener.local_addr()?,
        listener.local_addr()?.port(),
        options.max_sessions
    );
    if let Some(a) = options.board_address {
        benchboot::errln!("benchboot peer: fetching the board's HTTP object from {a}");
    }
    peer::serve_with_registry(listener, Path::new(PROC_STAT), options, registry, |line| {
        benchboot::errln!("{line}")
    })
    .context("accepting connections")?;
    Ok(())
}

/// Serves boards on `listen` until killed, with `options` (`--board-address`,
/// `--announce`).
pub fn serve(listen: SocketAddr, options: &peer::PeerOptions) -> Result<()> {
    serve_on(bind(listen)?, options, peer::Registry::new())
}

/// `benchboot peer --wifi`: finds this host's WiFi adapter (an error, before anything
/// is waited for, when there is none), listens for the boards' WiFi offers on UDP
/// `offer_port` of `listen`'s address (every interface by default, never more than
/// `--listen` names) and joins each new one that [`benchboot::wifi_join::offers::admit`]
/// lets in: from the board at the other end of a point-to-point link of this host
/// (`links`: this host's addresses, read from the system unless given), holding a live
/// session on this peer that came in on this host's end of that link and named the
/// board whose SSID it is (asking the peer's [`peer::Registry`]); and serves the peer on
/// `listen` as [`serve`] does. The board's tests over its AP come in on the address this
/// host leases there, so `listen` should be every interface (`0.0.0.0`, the default);
/// another address is served with a warning.
pub fn serve_wifi(
    listen: SocketAddr,
    offer_port: u16,
    links: benchboot::wifi_join::offers::HostLinks,
    options: &peer::PeerOptions,
) -> Result<()> {
    use benchboot::wifi_join::{self, Os, System};
    let joiner = wifi_join::find_adapter(&System::from_env(), Os::current())?;
    if !listen.ip().is_unspecified() {
        benchboot::errln!(
            "benchboot peer: warning: --listen {listen} serves that address only, and the \
             WiFi offers are listened for there only; the board's tests over its WiFi AP \
             come in on the address this host gets there (`.2` of the board's AP subnet): \
             use --listen 0.0.0.0:{}",
            listen.port()
        );
    }
    let listener = bind(listen)?;
    let sock = wifi_join::offers::bind(SocketAddr::new(listen.ip(), offer_port))?;
    benchboot::errln!(
        "benchboot peer: listening for WiFi offers on UDP {} (the board sends them over the \
         results link); joining with {}",
        sock.local_addr()?,
        joiner.describe()
    );
    let registry = peer::Registry::new();
    let live = registry.clone();
    std::thread::Builder::new()
        .name("wifi-offers".into())
        .spawn(move || {
            let never = std::sync::atomic::AtomicBool::new(false);
            let log = |l: &str| benchboot::errln!("benchboot peer: {l}");
            if let Err(e) = wifi_join::offers::serve(&sock, &joiner, &live, &links, &never, &log) {
                benchboot::errln!("benchboot peer: the WiFi offer listener stopped: {e}");
            }
        })
        .context("starting the WiFi offer listener")?;
    serve_on(listener, options, registry)
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

/// Parses a bit rate as `iperf3 -b` takes it: digits with an optional decimal suffix
/// `k`, `M`, `G` (10^3, 10^6, 10^9; either case, iperf3 scales rates by 1000), e.g.
/// `100M` = 100 000 000 bit/s; `bit/s` or `bps` may follow.
pub fn parse_bitrate(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let t = t
        .strip_suffix("bit/s")
        .or_else(|| t.strip_suffix("bps"))
        .unwrap_or(t)
        .trim_end();
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(end);
    let scale: u64 = match unit.trim() {
        "" => 1,
        "k" | "K" => 1_000,
        "m" | "M" => 1_000_000,
        "g" | "G" => 1_000_000_000,
        _ => {
            return Err(format!(
                "`{s}`: write bit/s as digits with k, M or G, e.g. 100M"
            ))
        }
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{s}`: write bit/s as digits with k, M or G, e.g. 100M"))?;
    n.checked_mul(scale)
        .ok_or_else(|| format!("`{s}` does not fit in 64 bits"))
}

/// Parses `--max-udp-bitrate` as [`parse_bitrate`] does, at most the plan's
/// [`benchboot_plan::network::MAX_UDP_BITRATE`] (100 Gbit/s).
pub fn parse_max_udp_bitrate(s: &str) -> Result<u64, String> {
    use benchboot_plan::net_tests::MAX_UDP_BITRATE;
    match parse_bitrate(s)? {
        0 => Err(format!(
            "`{s}`: the highest UDP load must be above 0, e.g. 1G"
        )),
        n if n > MAX_UDP_BITRATE => Err(format!(
            "`{s}` is more than 100G, the highest UDP load a plan may ask \
             (network.tests.udp_bitrate)"
        )),
        n => Ok(n),
    }
}

/// `benchboot net` arguments (clap); [`NetArgs::net_run`] makes the run.
#[derive(Debug, Clone, clap::Args)]
pub struct NetArgs {
    /// ADDRESS:PORT of the peer.
    #[arg(long)]
    pub peer: std::net::SocketAddr,
    /// Address the peer fetches this machine's HTTP object from (default: the
    /// address the control connection goes out on).
    #[arg(long, default_value = "0.0.0.0")]
    pub board_ip: std::net::IpAddr,
    /// Label of the link in the results.
    #[arg(long, default_value = "static")]
    pub link: String,
    /// Parallel stream counts, each a run per direction (0: no TCP runs).
    #[arg(long, value_delimiter = ',', default_value = "1,4")]
    pub streams: Vec<u32>,
    /// board-to-host (this machine sends), host-to-board, or both.
    #[arg(long, value_enum, default_value = "both")]
    pub direction: DirectionArg,
    #[arg(long, default_value_t = 10_000)]
    pub duration_ms: u64,
    #[arg(long, default_value_t = 1000)]
    pub interval_ms: u64,
    /// Warm-up measured but not counted.
    #[arg(long, default_value_t = 1000)]
    pub omit_ms: u64,
    /// TCP round trips (0 skips the latency test).
    #[arg(long, default_value_t = 1000)]
    pub latency_samples: u32,
    /// HTTP object size each way (0 skips the HTTP tests).
    #[arg(long, default_value_t = 100 << 20)]
    pub http_bytes: u64,
    /// UDP offered load per direction, bit/s of UDP payload as `iperf3 -u -b`:
    /// a number with an optional decimal suffix k, M or G (`100M` = 10^8 bit/s);
    /// 0 skips the UDP tests.
    #[arg(long, default_value = "0", value_parser = parse_bitrate)]
    pub udp_bitrate: u64,
    /// UDP payload per datagram, bytes (as `iperf3 -l`; 16 ..= 65507).
    #[arg(long, default_value_t = benchboot_plan::net_tests::DEFAULT_UDP_DATAGRAM)]
    pub udp_length: u32,
    /// How long to retry connecting to the peer.
    #[arg(long, default_value_t = 5000)]
    pub wait_ms: u64,
    /// Save the results as JSON (`-`: print them instead of the tables).
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// `--direction`'s values, as clap lists them in `--help` and in its error for any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DirectionArg {
    /// This machine sends
    BoardToHost,
    /// The peer sends
    HostToBoard,
    /// One run each way
    Both,
}

impl NetArgs {
    /// The run these arguments ask for (stream counts of 0 dropped).
    pub fn net_run(&self) -> NetRun {
        NetRun {
            peer: self.peer,
            board_ip: self.board_ip,
            link: self.link.clone(),
            tests: NetTests {
                peer_port: self.peer.port(),
                peer_wait_ms: self.wait_ms,
                duration_ms: self.duration_ms,
                interval_ms: self.interval_ms,
                omit_ms: self.omit_ms,
                streams: self.streams.iter().copied().filter(|&n| n > 0).collect(),
                latency_samples: self.latency_samples,
                http_bytes: self.http_bytes,
                board_http_port: 0,
                udp_bitrate: self.udp_bitrate,
                udp_datagram_bytes: self.udp_length,
            },
            directions: match self.direction {
                DirectionArg::BoardToHost => vec![NetDirection::BoardToHost],
                DirectionArg::HostToBoard => vec![NetDirection::HostToBoard],
                DirectionArg::Both => vec![NetDirection::BoardToHost, NetDirection::HostToBoard],
            },
            json: self.json.clone(),
        }
    }
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
        Some(p) if p == Path::new("-") => benchboot::out::json(&json),
        Some(p) => {
            benchboot::atomic_file::write(p, &json)?;
            benchboot::errln!("saved {}", p.display());
            benchboot::out!("{}", render::network_report(&results, false));
        }
        None => benchboot::out!("{}", render::network_report(&results, false)),
    }
    for e in &errors {
        benchboot::errln!("error: {e}");
    }
    if !errors.is_empty() {
        bail!("{} network test(s) failed", errors.len());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: NetArgs,
    }

    fn run_of(extra: &[&str]) -> Result<NetRun, clap::Error> {
        use clap::Parser as _;
        let argv = ["net", "--peer", "127.0.0.1:5202"].iter().chain(extra);
        Cli::try_parse_from(argv).map(|c| c.args.net_run())
    }

    #[test]
    fn directions_are_parsed_by_clap_and_streams_of_zero_dropped() {
        let both = run_of(&[]).unwrap();
        assert_eq!(
            both.directions,
            [NetDirection::BoardToHost, NetDirection::HostToBoard]
        );
        assert_eq!(both.tests.streams, [1, 4]);
        assert_eq!(both.tests.peer_port, 5202);
        let one = run_of(&["--direction", "host-to-board", "--streams", "0,2"]).unwrap();
        assert_eq!(one.directions, [NetDirection::HostToBoard]);
        assert_eq!(one.tests.streams, [2]);
        let e = run_of(&["--direction", "up"]).err().unwrap().to_string();
        assert!(
            e.contains("[possible values: board-to-host, host-to-board, both]"),
            "{e}"
        );
        let e = run_of(&["--udp-bitrate", "fast"])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("--udp-bitrate"), "{e}");
    }

    #[test]
    fn bitrates_as_iperf3_takes_them() {
        assert_eq!(parse_bitrate("0"), Ok(0));
        assert_eq!(parse_bitrate("1448"), Ok(1448));
        assert_eq!(parse_bitrate("100M"), Ok(100_000_000));
        assert_eq!(parse_bitrate("100m"), Ok(100_000_000));
        assert_eq!(parse_bitrate("5G"), Ok(5_000_000_000));
        assert_eq!(parse_bitrate("500k"), Ok(500_000));
        assert_eq!(parse_bitrate("1 Gbit/s"), Ok(1_000_000_000));
        assert_eq!(
            parse_bitrate("1 Tbit/s"),
            Err("`1 Tbit/s`: write bit/s as digits with k, M or G, e.g. 100M".into())
        );
        assert_eq!(parse_bitrate("1 G bit/s"), Ok(1_000_000_000));
        assert_eq!(parse_bitrate("20Mbps"), Ok(20_000_000));
        assert!(parse_bitrate("").is_err());
        assert!(parse_bitrate("M").is_err());
        assert!(parse_bitrate("1.5G").is_err());
        assert!(parse_bitrate("10T").is_err());
        assert!(parse_bitrate("99999999999G").is_err());
    }

    #[test]
    fn the_peer_udp_bound_stays_within_the_plan() {
        assert_eq!(parse_max_udp_bitrate("1G"), Ok(1_000_000_000));
        assert_eq!(parse_max_udp_bitrate("100G"), Ok(100_000_000_000));
        assert_eq!(
            parse_max_udp_bitrate("101G"),
            Err(
                "`101G` is more than 100G, the highest UDP load a plan may ask \
                 (network.tests.udp_bitrate)"
                    .into()
            )
        );
        assert_eq!(
            parse_max_udp_bitrate("0"),
            Err("`0`: the highest UDP load must be above 0, e.g. 1G".into())
        );
    }
}
