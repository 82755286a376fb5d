//! `cargo xtask bench net`: benchboot's network engine against `iperf3` over loopback:
//! same duration, warm-up, interval and stream counts (1 and 4), both directions,
//! interleaved run by run; prints the median Mbit/s, the CPU time of client and server
//! processes (user + sys, from `/proc/<pid>/stat` for the servers and this process's
//! reaped-children counters for the clients) and the ratios benchboot / iperf3.
//!
//! A benchmark, not a test: it asserts nothing, it reports. Target (issue 4): benchboot
//! at 0.98 x iperf3's throughput or better, with no more CPU time.
//!
//! benchboot side: `benchboot peer` (the host end) and the hidden `benchboot net` (the
//! board's driver run here), like `iperf3 -s` and `iperf3 -c [-R]`.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use benchboot_results::network::{mbit_per_s, NetworkResults};
use benchboot_results::Summary;

/// Stream counts compared (the plan's hardware defaults).
pub const STREAMS: [u32; 2] = [1, 4];
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

/// From `iperf3 -J`: the receiver's bits per second after the omitted warm-up.
pub fn parse_iperf3(json: &str) -> Option<f64> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    v["end"]["sum_received"]["bits_per_second"].as_f64()
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

fn median(v: &[f64]) -> f64 {
    Summary::of(v).map_or(0.0, |s| s.median)
}

/// One (streams, direction) cell: per tool, Mbit/s and CPU seconds of every run.
#[derive(Default)]
struct Cell {
    bb: (Vec<f64>, Vec<f64>),
    ip: (Vec<f64>, Vec<f64>),
}

pub fn net(runs: u32, seconds: u64) -> Result<()> {
    if Command::new("iperf3").arg("--version").output().is_err() {
        bail!("iperf3 is not installed: run `cargo xtask setup` (or apt-get install iperf3)");
    }
    let host = xtask::qemu::build_host_tool(true)?;
    let hz = clock_ticks_per_s();
    let (bb_port, ip_port) = (free_port()?, free_port()?);
    let bb_addr: SocketAddr = ([127, 0, 0, 1], bb_port).into();
    let mut peer = Server(
        Command::new(&host)
            .args(["peer", "--listen", &bb_addr.to_string()])
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

    let directions = [("board-to-host", false), ("host-to-board", true)];
    let mut cells: Vec<Cell> = (0..STREAMS.len() * 2).map(|_| Cell::default()).collect();
    println!(
        "bench net: loopback, {seconds} s per run after a {OMIT_S} s warm-up, 1 s intervals; \
         {runs} runs per tool and cell after one warm-up run, interleaved (order alternating), median"
    );
    for run_no in 0..=runs {
        let keep = run_no > 0;
        for (si, &streams) in STREAMS.iter().enumerate() {
            for (di, &(dir, reverse)) in directions.iter().enumerate() {
                let cell = &mut cells[si * 2 + di];
                let bb = || -> Result<(f64, f64)> {
                    let (out, t) = client(
                        Command::new(&host).args([
                            "net",
                            "--peer",
                            &bb_addr.to_string(),
                            "--streams",
                            &streams.to_string(),
                            "--direction",
                            dir,
                            "--duration-ms",
                            &(seconds * 1000).to_string(),
                            "--omit-ms",
                            &(OMIT_S * 1000).to_string(),
                            "--interval-ms",
                            "1000",
                            "--latency-samples",
                            "0",
                            "--http-bytes",
                            "0",
                            "--json",
                            "-",
                        ]),
                        &peer,
                    )?;
                    let r: NetworkResults =
                        serde_json::from_str(&out).context("benchboot net --json output")?;
                    let run = r.throughput.first().context("benchboot net: no run")?;
                    Ok((mbit_per_s(run.bytes, run.nanos), t as f64 / hz))
                };
                let ip = || -> Result<(f64, f64)> {
                    let mut c = Command::new("iperf3");
                    c.args([
                        "-c",
                        "127.0.0.1",
                        "-p",
                        &ip_port.to_string(),
                        "-t",
                        &seconds.to_string(),
                        "-O",
                        &OMIT_S.to_string(),
                        "-i",
                        "1",
                        "-P",
                        &streams.to_string(),
                        "-J",
                    ]);
                    if reverse {
                        c.arg("-R");
                    }
                    let (out, t) = client(&mut c, &iperf)?;
                    let bps = parse_iperf3(&out).context("unexpected iperf3 -J output")?;
                    Ok((bps / 1e6, t as f64 / hz))
                };
                let (b, i) = if (run_no as usize + si + di).is_multiple_of(2) {
                    let b = bb()?;
                    (b, ip()?)
                } else {
                    let i = ip()?;
                    (bb()?, i)
                };
                if keep {
                    cell.bb.0.push(b.0);
                    cell.bb.1.push(b.1);
                    cell.ip.0.push(i.0);
                    cell.ip.1.push(i.1);
                }
                eprintln!(
                    "  run {run_no}{} {streams} stream(s) {dir}: benchboot {:.0} Mbit/s {:.2} s CPU, iperf3 {:.0} Mbit/s {:.2} s CPU",
                    if keep { "" } else { " (warm-up)" },
                    b.0,
                    b.1,
                    i.0,
                    i.1
                );
            }
        }
    }
    println!(
        "{:>7} {:>13} {:>11} {:>11} {:>7} {:>9} {:>9} {:>7} {:>10}",
        "streams",
        "direction",
        "bb Mbit/s",
        "iperf3",
        "bb/ip",
        "bb CPU s",
        "ip CPU s",
        "bb/ip",
        "CPU/bit"
    );
    for (si, &streams) in STREAMS.iter().enumerate() {
        for (di, &(dir, _)) in directions.iter().enumerate() {
            let c = &cells[si * 2 + di];
            let (bm, im) = (median(&c.bb.0), median(&c.ip.0));
            let (bc, ic) = (median(&c.bb.1), median(&c.ip.1));
            println!(
                "{streams:>7} {dir:>13} {bm:>11.0} {im:>11.0} {:>7.3} {bc:>9.2} {ic:>9.2} {:>7.3} {:>10.3}",
                bm / im,
                bc / ic,
                (bc / bm) / (ic / im)
            );
        }
    }
    println!(
        "Mbit/s = 10^6 bit/s at the receiver after the warm-up. CPU s = user + sys of client and \
         server processes over the whole run (warm-up and set-up included), {hz} ticks/s; \
         CPU/bit = (bb CPU / bb Mbit/s) / (iperf3 CPU / iperf3 Mbit/s). Host: {}",
        host_line()
    );
    drop(peer);
    drop(iperf);
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_times_count_fields_after_the_name() {
        // proc(5): pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
        // majflt cmajflt utime stime cutime cstime ...
        let stat = "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 150 25 7 3 20 0 1 0";
        assert_eq!(parse_proc_times(stat, false), Some(175));
        assert_eq!(parse_proc_times(stat, true), Some(10));
        assert_eq!(parse_proc_times("garbage", false), None);
    }

    #[test]
    fn iperf3_json_receiver_rate() {
        let j = r#"{"start":{},"end":{"sum_sent":{"bits_per_second":2.0e10},"sum_received":{"bits_per_second":1.95e10}}}"#;
        assert_eq!(parse_iperf3(j), Some(1.95e10));
        assert_eq!(parse_iperf3(r#"{"error":"unable to connect"}"#), None);
    }
}
