//! `cargo xtask bench net`: benchboot's network engine against `iperf3` over loopback:
//! same duration, warm-up, interval and stream counts (1 and 4), both directions,
//! interleaved run by run; prints the median Mbit/s, the CPU time of client and server
//! processes (user + sys, from `/proc/<pid>/stat` for the servers and this process's
//! reaped-children counters for the clients) and the ratios benchboot / iperf3.
//!
//! A benchmark, not a test: it asserts nothing, it reports. Target: benchboot at
//! 0.98 x iperf3's throughput or better, with no more CPU time.
//!
//! benchboot side: `benchboot peer` (the host end) and the hidden `benchboot net` (the
//! board's driver run here), like `iperf3 -s` and `iperf3 -c [-R]`.
//!
//! `cargo xtask bench net-udp` does the same for UDP against `iperf3 -u -b RATE -l LEN`
//! ([`UDP_RATES`], [`UDP_LEN`]): achieved Mbit/s at the receiver, loss %, and CPU time
//! per received byte. `cargo xtask bench net-http` compares benchboot's HTTP runs (both
//! ways, [`HTTP_BYTES`] from RAM) with nginx serving the same size of file from
//! /dev/shm to `curl -o /dev/null`.
//!
//! Split by protocol: `tcp.rs` (`bench net`), `udp.rs` (`bench net-udp`), `http.rs`
//! (`bench net-http`); this module holds what they share: the server processes, CPU
//! time from `/proc`, medians and the closing host line.

mod http;
mod tcp;
#[cfg(test)]
mod tests;
mod udp;

pub use http::{http, parse_busy_jiffies, parse_curl, HTTP_BYTES};
pub use tcp::{net, parse_iperf3, STREAMS};
pub use udp::{parse_iperf3_udp, udp, UdpFigures, UDP_LEN, UDP_RATES};

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use benchboot_results::network::NetworkResults;
use benchboot_results::Summary;

/// Warm-up left out of both tools' figures, s (`iperf3 -O`).
pub const OMIT_S: u64 = 1;

/// `(utime + stime)` of a `/proc/<pid>/stat` text, clock ticks (fields 14 and 15; the
/// command name in field 2 may hold spaces and parentheses, so fields are counted after
/// its last `)`).
pub fn parse_proc_times(stat: &str, children: bool) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state): field n is f[n - 3].
    let (a, b) = if children { (16, 17) } else { (14, 15) };
    Some(f.get(a - 3)?.parse::<u64>().ok()? + f.get(b - 3)?.parse::<u64>().ok()?)
}

fn ticks(path: &str, children: bool) -> Result<u64> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    parse_proc_times(&text, children).with_context(|| format!("unexpected {path}"))
}

fn clock_ticks_per_s() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// A server process, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Server {
    /// CPU ticks of the server so far (every thread).
    fn ticks(&self) -> Result<u64> {
        ticks(&format!("/proc/{}/stat", self.0.id()), false)
    }
}

/// Both servers on loopback, for `bench net` and `bench net-udp`: `benchboot peer`
/// (the host tool just built) and `iperf3 -s`, each on a free port.
struct Servers {
    host: std::path::PathBuf,
    peer: Server,
    bb_addr: SocketAddr,
    iperf: Server,
    ip_port: u16,
}

/// Builds the host tool and starts both [`Servers`] (`peer_args` added to
/// `benchboot peer --listen ADDR`), waiting until both listen.
///
/// # Errors
/// iperf3 missing, the build failing, a server not starting or exiting early.
fn start_servers(peer_args: &[&str]) -> Result<Servers> {
    if Command::new("iperf3").arg("--version").output().is_err() {
        bail!(
            "iperf3 is not installed: run `cargo xtask setup --tests` (or apt-get install iperf3)"
        );
    }
    let host = crate::qemu::build_host_tool(true)?;
    let (bb_port, ip_port) = (free_port()?, free_port()?);
    let bb_addr: SocketAddr = ([127, 0, 0, 1], bb_port).into();
    let mut peer = Server(
        Command::new(&host)
            .args(["peer", "--listen", &bb_addr.to_string()])
            .args(peer_args)
            .stderr(Stdio::null())
            .spawn()
            .context("starting benchboot peer")?,
    );
    let mut iperf = Server(
        Command::new("iperf3")
            .args(["-s", "-B", "127.0.0.1", "-p", &ip_port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting iperf3 -s")?,
    );
    wait_listening(bb_addr, &mut peer)?;
    // iperf3 -s treats a bare connect as a failed test: give it time to listen instead.
    std::thread::sleep(Duration::from_millis(500));
    if let Some(status) = iperf.0.try_wait()? {
        bail!("iperf3 -s exited: {status}");
    }
    Ok(Servers {
        host,
        peer,
        bb_addr,
        iperf,
        ip_port,
    })
}

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Waits until something listens on `addr` (a connect that is closed at once).
fn wait_listening(addr: SocketAddr, server: &mut Server) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Some(status) = server.0.try_wait()? {
            bail!("the server on {addr} exited: {status}");
        }
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    bail!("nothing listens on {addr} after 10 s")
}

/// Runs a client to its end: stdout, and client + server CPU ticks of the run.
fn client(cmd: &mut Command, server: &Server) -> Result<(String, u64)> {
    let (c0, s0) = (ticks("/proc/self/stat", true)?, server.ticks()?);
    let out = cmd
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("running {cmd:?}"))?;
    let (c1, s1) = (ticks("/proc/self/stat", true)?, server.ticks()?);
    if !out.status.success() {
        bail!(
            "{cmd:?} failed: {}{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
    }
    Ok((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        (c1 - c0) + (s1 - s0),
    ))
}

/// One `benchboot net ... --json -` run of the host tool `host` against the peer at
/// `peer_addr` (`args` between `--peer ADDR` and `--json -`): its network results and
/// the CPU ticks of this process's children and the peer over the run ([`client`]).
///
/// # Errors
/// The run fails, or its output is not a network results document.
fn benchboot_net(
    host: &Path,
    peer_addr: SocketAddr,
    peer: &Server,
    args: &[&str],
) -> Result<(NetworkResults, u64)> {
    let (out, t) = client(
        Command::new(host)
            .args(["net", "--peer", &peer_addr.to_string()])
            .args(args)
            .args(["--json", "-"]),
        peer,
    )?;
    let r = serde_json::from_str(&out).context("benchboot net --json output")?;
    Ok((r, t))
}

fn median(v: &[f64]) -> f64 {
    Summary::of(v).map_or(0.0, |s| s.median)
}

fn host_line() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string(Path::new("/proc/cpuinfo"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_default();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{cpus} CPUs, {model}, Linux {}", kernel.trim())
}
