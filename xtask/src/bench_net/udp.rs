//! `cargo xtask bench net-udp`: benchboot's UDP runs against `iperf3 -u` over loopback,
//! at [`UDP_RATES`] offered, both directions.

use std::process::Command;

use anyhow::{Context, Result};
use benchboot_results::network::mbit_per_s;

use super::{
    benchboot_net, client, clock_ticks_per_s, host_line, median, start_servers, Servers, OMIT_S,
};

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
    // Loopback carries more than a board's 1 Gbit/s link, the peer's default bound.
    let s = start_servers(&["--max-udp-bitrate", "100G"])?;
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
                let bb = || benchboot_udp_run(&s, dir, rate, seconds, hz);
                let ip = || iperf3_udp_run(&s, reverse, rate, seconds, hz);
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
    print_udp_table(&cells, &directions);
    Ok(())
}

/// One `benchboot net` UDP run against the peer at `rate` bit/s offered in direction
/// `dir`: (received Mbit/s, loss %, process CPU s per GB received).
fn benchboot_udp_run(
    s: &Servers,
    dir: &str,
    rate: u64,
    seconds: u64,
    hz: f64,
) -> Result<(f64, f64, f64)> {
    let (r, t) = benchboot_net(
        &s.host,
        s.bb_addr,
        &s.peer,
        &[
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
        ],
    )?;
    let run = r.udp.first().context("benchboot net: no UDP run")?;
    // The results crate's loss (the console's and the report's); a run whose receiver
    // saw nothing has none and is left out of the median.
    let loss = run.loss_pct().unwrap_or(f64::NAN);
    let cpu_per_gb = (t as f64 / hz) / (run.bytes.max(1) as f64 / 1e9);
    Ok((mbit_per_s(run.bytes, run.nanos), loss, cpu_per_gb))
}

/// The reference run: `iperf3 -u` (`-R` for host-to-board), the same three figures.
fn iperf3_udp_run(
    s: &Servers,
    reverse: bool,
    rate: u64,
    seconds: u64,
    hz: f64,
) -> Result<(f64, f64, f64)> {
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
}

/// The table of medians per offered rate and direction, and the method's words.
fn print_udp_table(cells: &[UdpCell], directions: &[(&str, bool)]) {
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
}
