//! `cargo xtask bench net`: benchboot's network engine against `iperf3` over loopback:
//! same duration, warm-up, interval and stream counts (1 and 4), both directions,
//! interleaved run by run; prints the median Mbit/s, the CPU time of client and server
//! processes (user + sys, from `/proc/<pid>/stat` for the servers and this process's
//! reaped-children counters for the clients) and the ratios benchboot / iperf3.
//!
//! A benchmark, not a test: it asserts nothing, it reports. Target: benchboot
//! at 0.98 x iperf3's throughput or better, with no more CPU time.
//!
//! benchboot side: `benchboot peer` (the host end) and the hidden `benchboot net` (the
//! board's driver run here), like `iperf3 -s` and `iperf3 -c [-R]`.
//!
//! `cargo xtask bench net-udp` does the same for UDP against `iperf3 -u -b RATE -l LEN`
//! ([`UDP_RATES`], [`UDP_LEN`]): achieved Mbit/s at the receiver, loss %, and CPU time
//! per received byte. `cargo xtask bench net-http` compares benchboot's HTTP runs (both
//! ways, [`HTTP_BYTES`] from RAM) with nginx serving the same size of file from
//! /dev/shm to `curl -o /dev/null`.

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

/// Offered loads compared, bit/s of UDP payload (`iperf3 -u -b 1G` and `-b 5G`).
pub const UDP_RATES: [u64; 2] = [1_000_000_000, 5_000_000_000];
/// UDP payload per datagram, bytes (`iperf3 -l`; the plan's default).
pub const UDP_LEN: u32 = 1448;

/// From `iperf3 -u -J`: the receiver's figures after the warm-up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UdpFigures {
    pub bits_per_second: f64,
    pub bytes: f64,
    pub lost_percent: f64,
}

/// `end.sum_received` of `iperf3 -u -J` (iperf3 3.x: the receiver side as the server
/// reported it).
pub fn parse_iperf3_udp(json: &str) -> Option<UdpFigures> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    let r = &v["end"]["sum_received"];
    Some(UdpFigures {
        bits_per_second: r["bits_per_second"].as_f64()?,
        bytes: r["bytes"].as_f64()?,
        lost_percent: r["lost_percent"].as_f64()?,
    })
}

/// Both servers (benchboot peer and iperf3 -s) on loopback.
struct Servers {
    host: std::path::PathBuf,
    peer: Server,
    bb_addr: SocketAddr,
    iperf: Server,
    ip_port: u16,
}

fn start_servers() -> Result<Servers> {
    if Command::new("iperf3").arg("--version").output().is_err() {
        bail!("iperf3 is not installed: run `cargo xtask setup` (or apt-get install iperf3)");
    }
    let host = xtask::qemu::build_host_tool(true)?;
    let (bb_port, ip_port) = (free_port()?, free_port()?);
    let bb_addr: SocketAddr = ([127, 0, 0, 1], bb_port).into();
    // Loopback carries more than a board's 1 Gbit/s link, the peer's default bound.
    let mut peer = Server(
        Command::new(&host)
            .args([
                "peer",
                "--listen",
                &bb_addr.to_string(),
                "--max-udp-bitrate",
                "100G",
            ])
            .stderr(Stdio::null())
            .spawn()
            .context("starting benchboot peer")?,
    );
    let iperf = Server(
        Command::new("iperf3")
            .args(["-s", "-B", "127.0.0.1", "-p", &ip_port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting iperf3 -s")?,
    );
    wait_listening(bb_addr, &mut peer)?;
    std::thread::sleep(Duration::from_millis(500));
    let mut s = Servers {
        host,
        peer,
        bb_addr,
        iperf,
        ip_port,
    };
    if let Some(status) = s.iperf.0.try_wait()? {
        bail!("iperf3 -s exited: {status}");
    }
    Ok(s)
}

/// Per tool and cell: Mbit/s, loss %, CPU s per GB received, of every run.
#[derive(Default)]
struct UdpCell {
    bb: [Vec<f64>; 3],
    ip: [Vec<f64>; 3],
}

fn push3(v: &mut [Vec<f64>; 3], x: (f64, f64, f64)) {
    v[0].push(x.0);
    v[1].push(x.1);
    v[2].push(x.2);
}

/// `cargo xtask bench net-udp`.
pub fn udp(runs: u32, seconds: u64) -> Result<()> {
    let s = start_servers()?;
    let hz = clock_ticks_per_s();
    let directions = [("board-to-host", false), ("host-to-board", true)];
    let mut cells: Vec<UdpCell> = (0..UDP_RATES.len() * 2)
        .map(|_| UdpCell::default())
        .collect();
    println!(
        "bench net-udp: loopback, {UDP_LEN} B datagrams, {seconds} s per run after a {OMIT_S} s \
         warm-up; {runs} runs per tool and cell after one warm-up run, interleaved, median"
    );
    for run_no in 0..=runs {
        let keep = run_no > 0;
        for (ri, &rate) in UDP_RATES.iter().enumerate() {
            for (di, &(dir, reverse)) in directions.iter().enumerate() {
                let bb = || -> Result<(f64, f64, f64)> {
                    let (out, t) = client(
                        Command::new(&s.host).args([
                            "net",
                            "--peer",
                            &s.bb_addr.to_string(),
                            "--streams",
                            "0",
                            "--direction",
                            dir,
                            "--duration-ms",
                            &(seconds * 1000).to_string(),
                            "--omit-ms",
                            &(OMIT_S * 1000).to_string(),
                            "--latency-samples",
                            "0",
                            "--http-bytes",
                            "0",
                            "--udp-bitrate",
                            &rate.to_string(),
                            "--udp-length",
                            &UDP_LEN.to_string(),
                            "--json",
                            "-",
                        ]),
                        &s.peer,
                    )?;
                    let r: NetworkResults =
                        serde_json::from_str(&out).context("benchboot net --json output")?;
                    let run = r.udp.first().context("benchboot net: no UDP run")?;
                    let loss = 100.0 * run.lost as f64 / (run.lost + run.received).max(1) as f64;
                    let cpu_per_gb = (t as f64 / hz) / (run.bytes.max(1) as f64 / 1e9);
                    Ok((mbit_per_s(run.bytes, run.nanos), loss, cpu_per_gb))
                };
                let ip = || -> Result<(f64, f64, f64)> {
                    let mut c = Command::new("iperf3");
                    c.args([
                        "-c",
                        "127.0.0.1",
                        "-p",
                        &s.ip_port.to_string(),
                        "-u",
                        "-b",
                        &rate.to_string(),
                        "-l",
                        &UDP_LEN.to_string(),
                        "-t",
                        &seconds.to_string(),
                        "-O",
                        &OMIT_S.to_string(),
                        "-J",
                    ]);
                    if reverse {
                        c.arg("-R");
                    }
                    let (out, t) = client(&mut c, &s.iperf)?;
                    let f = parse_iperf3_udp(&out).context("unexpected iperf3 -u -J output")?;
                    let cpu_per_gb = (t as f64 / hz) / (f.bytes.max(1.0) / 1e9);
                    Ok((f.bits_per_second / 1e6, f.lost_percent, cpu_per_gb))
                };
                let (b, i) = if (run_no as usize + ri + di).is_multiple_of(2) {
                    let b = bb()?;
                    (b, ip()?)
                } else {
                    let i = ip()?;
                    (bb()?, i)
                };
                let cell = &mut cells[ri * 2 + di];
                if keep {
                    push3(&mut cell.bb, b);
                    push3(&mut cell.ip, i);
                }
                eprintln!(
                    "  run {run_no}{} {} Mbit/s offered {dir}: benchboot {:.0} Mbit/s {:.1} % lost \
                     {:.2} CPU s/GB, iperf3 {:.0} Mbit/s {:.1} % lost {:.2} CPU s/GB",
                    if keep { "" } else { " (warm-up)" },
                    rate / 1_000_000,
                    b.0,
                    b.1,
                    b.2,
                    i.0,
                    i.1,
                    i.2
                );
            }
        }
    }
    println!(
        "{:>8} {:>13} {:>10} {:>10} {:>7} {:>8} {:>8} {:>9} {:>9} {:>8}",
        "offered",
        "direction",
        "bb Mbit/s",
        "iperf3",
        "bb/ip",
        "bb loss%",
        "ip loss%",
        "bb CPU/GB",
        "ip CPU/GB",
        "CPU/byte"
    );
    for (ri, &rate) in UDP_RATES.iter().enumerate() {
        for (di, &(dir, _)) in directions.iter().enumerate() {
            let c = &cells[ri * 2 + di];
            let b: Vec<f64> = c.bb.iter().map(|v| median(v)).collect();
            let i: Vec<f64> = c.ip.iter().map(|v| median(v)).collect();
            println!(
                "{:>7}M {dir:>13} {:>10.0} {:>10.0} {:>7.3} {:>8.1} {:>8.1} {:>9.2} {:>9.2} {:>8.3}",
                rate / 1_000_000,
                b[0],
                i[0],
                b[0] / i[0],
                b[1],
                i[1],
                b[2],
                i[2],
                b[2] / i[2]
            );
        }
    }
    println!(
        "Mbit/s = 10^6 bit/s of UDP payload at the receiver after the warm-up; loss % = lost / \
         (lost + received) as the receiver counts; CPU/GB = user + sys s of client and server \
         processes over the whole run per 10^9 payload bytes received; CPU/byte = bb / iperf3. \
         Host: {}",
        host_line()
    );
    Ok(())
}

/// Size of the HTTP object each way, bytes (the plan's largest, 1 GiB).
pub const HTTP_BYTES: u64 = 1 << 30;

/// Busy jiffies (user + nice + system + irq + softirq: fields 1, 2, 3, 6, 7) of the
/// `cpu ` line of a `/proc/stat` text (proc(5)).
pub fn parse_busy_jiffies(stat: &str) -> Option<u64> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let f: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|w| w.parse().ok())
        .collect::<Option<_>>()?;
    Some(f.get(..3)?.iter().sum::<u64>() + f.get(5..7)?.iter().sum::<u64>())
}

fn busy_jiffies() -> Result<u64> {
    let text = std::fs::read_to_string("/proc/stat")?;
    parse_busy_jiffies(&text).context("unexpected /proc/stat")
}

/// nginx serving one file from a folder of its own under /dev/shm (removed on drop).
struct Nginx {
    server: Server,
    dir: std::path::PathBuf,
    addr: SocketAddr,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.server.0.kill();
        let _ = self.server.0.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn start_nginx(bytes: u64) -> Result<Nginx> {
    if Command::new("nginx").arg("-v").output().is_err() {
        bail!("nginx is not installed: apt-get install nginx");
    }
    let dir = std::path::PathBuf::from(format!(
        "/dev/shm/benchboot-bench-nginx-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(dir.join("www"))?;
    {
        use std::io::Write;
        let mut f = std::fs::File::create(dir.join("www/blob"))?;
        let chunk: Vec<u8> = (0..1u32 << 20)
            .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8 | 1)
            .collect();
        let mut left = bytes;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            f.write_all(&chunk[..n])?;
            left -= n as u64;
        }
    }
    let addr: SocketAddr = ([127, 0, 0, 1], free_port()?).into();
    let d = dir.display();
    // One worker as one process (one board is measured at a time here), sendfile
    // on as nginx ships it, no access log.
    let conf = format!(
        "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\n\
         error_log {d}/error.log;\nevents {{ worker_connections 64; }}\n\
         http {{\n  access_log off;\n  sendfile on;\n  tcp_nopush on;\n\
           client_body_temp_path {d}/tmp;\n  proxy_temp_path {d}/tmp;\n\
           fastcgi_temp_path {d}/tmp;\n  uwsgi_temp_path {d}/tmp;\n  scgi_temp_path {d}/tmp;\n\
           server {{ listen {addr}; root {d}/www; }}\n}}\n"
    );
    std::fs::write(dir.join("nginx.conf"), conf)?;
    let child = Command::new("nginx")
        .arg("-p")
        .arg(&dir)
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        .arg("-e")
        .arg(dir.join("error.log"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("starting nginx")?;
    let mut n = Nginx {
        server: Server(child),
        dir,
        addr,
    };
    wait_listening(addr, &mut n.server)?;
    Ok(n)
}

/// `curl -o /dev/null -w '%{size_download} %{time_total}'` → (bytes, s).
pub fn parse_curl(out: &str) -> Option<(f64, f64)> {
    let mut w = out.split_whitespace();
    let bytes = w.next()?.parse().ok()?;
    let secs = w.next()?.parse().ok()?;
    Some((bytes, secs))
}

/// `cargo xtask bench net-http`.
pub fn http(runs: u32) -> Result<()> {
    let host = xtask::qemu::build_host_tool(true)?;
    let hz = clock_ticks_per_s();
    let bb_addr: SocketAddr = ([127, 0, 0, 1], free_port()?).into();
    let mut peer = Server(
        Command::new(&host)
            .args(["peer", "--listen", &bb_addr.to_string()])
            .stderr(Stdio::null())
            .spawn()
            .context("starting benchboot peer")?,
    );
    wait_listening(bb_addr, &mut peer)?;
    let nginx = start_nginx(HTTP_BYTES)?;
    let url = format!("http://{}/blob", nginx.addr);
    println!(
        "bench net-http: loopback, {} MiB each way from RAM; {runs} runs per tool after one \
         warm-up run, interleaved, median. benchboot: `benchboot net` (its GET from the peer, \
         then the peer's GET from it) against `benchboot peer`; reference: nginx (sendfile, \
         one worker) serving a file on /dev/shm to `curl -o /dev/null`, twice",
        HTTP_BYTES >> 20
    );
    // Per tool: [host-to-board Mbit/s, board-to-host Mbit/s, transfer busy jiffies per
    // GB (system-wide, both transfers), process CPU s per GB (whole run)].
    let mut bb: [Vec<f64>; 4] = Default::default();
    let mut rf: [Vec<f64>; 4] = Default::default();
    let gb = 2.0 * HTTP_BYTES as f64 / 1e9;
    for run_no in 0..=runs {
        let keep = run_no > 0;
        let run_bb = || -> Result<[f64; 4]> {
            let (out, t) = client(
                Command::new(&host).args([
                    "net",
                    "--peer",
                    &bb_addr.to_string(),
                    "--streams",
                    "0",
                    "--latency-samples",
                    "0",
                    "--http-bytes",
                    &HTTP_BYTES.to_string(),
                    "--json",
                    "-",
                ]),
                &peer,
            )?;
            let r: NetworkResults =
                serde_json::from_str(&out).context("benchboot net --json output")?;
            let [h2b, b2h] = r.http.as_slice() else {
                bail!(
                    "benchboot net: expected two HTTP runs, got {}",
                    r.http.len()
                );
            };
            // The fetching side's /proc/stat over its GET: system-wide, transfer only.
            let busy = |c: &benchboot_results::network::CpuTimes| {
                (c.user + c.nice + c.system + c.irq + c.softirq) as f64
            };
            Ok([
                mbit_per_s(h2b.bytes, h2b.nanos),
                mbit_per_s(b2h.bytes, b2h.nanos),
                (busy(&h2b.board_cpu) + busy(&b2h.host_cpu)) / gb,
                t as f64 / hz / gb,
            ])
        };
        let run_ref = || -> Result<[f64; 4]> {
            let mut rates = [0.0; 2];
            let mut busy = 0u64;
            let mut ticks_total = 0u64;
            for rate in &mut rates {
                let b0 = busy_jiffies()?;
                let (out, t) = client(
                    Command::new("curl").args([
                        "-s",
                        "-o",
                        "/dev/null",
                        "-w",
                        "%{size_download} %{time_total}",
                        &url,
                    ]),
                    &nginx.server,
                )?;
                busy += busy_jiffies()? - b0;
                ticks_total += t;
                let (bytes, secs) = parse_curl(&out).context("unexpected curl -w output")?;
                if bytes as u64 != HTTP_BYTES {
                    bail!("curl got {bytes} of {HTTP_BYTES} bytes");
                }
                *rate = bytes * 8.0 / secs / 1e6;
            }
            Ok([
                rates[0],
                rates[1],
                busy as f64 / gb,
                ticks_total as f64 / hz / gb,
            ])
        };
        let (b, f) = if run_no % 2 == 0 {
            let b = run_bb()?;
            (b, run_ref()?)
        } else {
            let f = run_ref()?;
            (run_bb()?, f)
        };
        if keep {
            for k in 0..4 {
                bb[k].push(b[k]);
                rf[k].push(f[k]);
            }
        }
        eprintln!(
            "  run {run_no}{}: benchboot {:.0} / {:.0} Mbit/s, {:.1} busy jiffies/GB, {:.3} CPU s/GB; \
             nginx+curl {:.0} / {:.0} Mbit/s, {:.1} busy jiffies/GB, {:.3} CPU s/GB",
            if keep { "" } else { " (warm-up)" },
            b[0],
            b[1],
            b[2],
            b[3],
            f[0],
            f[1],
            f[2],
            f[3]
        );
    }
    let b: Vec<f64> = bb.iter().map(|v| median(v)).collect();
    let f: Vec<f64> = rf.iter().map(|v| median(v)).collect();
    println!(
        "{:>30} {:>11} {:>11} {:>7}",
        "", "benchboot", "nginx+curl", "bb/ref"
    );
    let rows = [
        ("host-to-board Mbit/s", 0),
        ("board-to-host Mbit/s", 1),
        ("transfer busy jiffies/GB", 2),
        ("process CPU s/GB", 3),
    ];
    for (name, k) in rows {
        println!(
            "{name:>30} {:>11.2} {:>11.2} {:>7.3}",
            b[k],
            f[k],
            b[k] / f[k]
        );
    }
    println!(
        "Mbit/s = 10^6 bit/s of body from sending the request to the last byte (benchboot's \
         HttpRun; curl's time_total). transfer busy jiffies/GB: system-wide /proc/stat user + \
         nice + system + irq + softirq over each GET (benchboot: the fetching side's reading; \
         reference: around each curl), per 10^9 body bytes, {hz} jiffies/s: other load on \
         this machine counts too. process CPU s/GB: user + sys of client and server processes \
         over the whole run (benchboot fills both objects in RAM first; nginx's file was \
         written before). Host: {}",
        host_line()
    );
    drop(nginx);
    drop(peer);
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
    fn iperf3_udp_json_receiver_figures() {
        // iperf3 3.12 -u -J (trimmed): sum_received is the server's receive side.
        let j = r#"{"end":{"sum":{"bits_per_second":9.0e8},"sum_sent":{"bits_per_second":9.08e8,"bytes":227186856,"lost_percent":0},
            "sum_received":{"bits_per_second":3.49e8,"bytes":87370872,"lost_percent":73.01}}}"#;
        assert_eq!(
            parse_iperf3_udp(j),
            Some(UdpFigures {
                bits_per_second: 3.49e8,
                bytes: 87370872.0,
                lost_percent: 73.01
            })
        );
        assert_eq!(parse_iperf3_udp(r#"{"end":{}}"#), None);
    }

    #[test]
    fn busy_jiffies_leave_idle_iowait_and_steal_out() {
        let stat = "cpu  10 20 30 1000 50 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n";
        assert_eq!(parse_busy_jiffies(stat), Some(10 + 20 + 30 + 6 + 7));
        assert_eq!(parse_busy_jiffies("cpu  1 2 3 4\n"), None);
        assert_eq!(parse_busy_jiffies("intr 1\n"), None);
    }

    #[test]
    fn curl_write_out() {
        assert_eq!(
            parse_curl("1073741824 0.412345"),
            Some((1073741824.0, 0.412345))
        );
        assert_eq!(parse_curl("x"), None);
    }

    #[test]
    fn iperf3_json_receiver_rate() {
        let j = r#"{"start":{},"end":{"sum_sent":{"bits_per_second":2.0e10},"sum_received":{"bits_per_second":1.95e10}}}"#;
        assert_eq!(parse_iperf3(j), Some(1.95e10));
        assert_eq!(parse_iperf3(r#"{"error":"unable to connect"}"#), None);
    }
}
