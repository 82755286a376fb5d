//! `cargo xtask bench net`: benchboot's TCP runs against `iperf3` over loopback, 1 and
//! 4 streams, both directions.

use std::process::Command;

use anyhow::{Context, Result};
use benchboot_results::network::mbit_per_s;

use super::{
    benchboot_net, client, clock_ticks_per_s, host_line, median, start_servers, Servers, OMIT_S,
};

/// Stream counts compared (the plan's hardware defaults).
pub const STREAMS: [u32; 2] = [1, 4];
/// From `iperf3 -J`: the receiver's bits per second after the omitted warm-up.
pub fn parse_iperf3(json: &str) -> Option<f64> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    v["end"]["sum_received"]["bits_per_second"].as_f64()
}

/// One (streams, direction) cell: per tool, Mbit/s and CPU seconds of every run.
#[derive(Default)]
struct Cell {
    bb: (Vec<f64>, Vec<f64>),
    ip: (Vec<f64>, Vec<f64>),
}

/// `cargo xtask bench net`.
pub fn net(runs: u32, seconds: u64) -> Result<()> {
    let hz = clock_ticks_per_s();
    let s = start_servers(&[])?;

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
                let bb = || benchboot_tcp_run(&s, streams, dir, seconds, hz);
                let ip = || iperf3_tcp_run(&s, streams, reverse, seconds, hz);
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
    print_tcp_table(&cells, &directions, hz);
    drop(s);
    Ok(())
}

/// One `benchboot net` TCP run with `streams` streams in direction `dir`: (received
/// Mbit/s, process CPU s).
fn benchboot_tcp_run(
    s: &Servers,
    streams: u32,
    dir: &str,
    seconds: u64,
    hz: f64,
) -> Result<(f64, f64)> {
    let (r, t) = benchboot_net(
        &s.host,
        s.bb_addr,
        &s.peer,
        &[
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
        ],
    )?;
    let run = r.throughput.first().context("benchboot net: no run")?;
    Ok((mbit_per_s(run.bytes, run.nanos), t as f64 / hz))
}

/// The reference run: `iperf3 -P streams` (`-R` for host-to-board), the same figures.
fn iperf3_tcp_run(
    s: &Servers,
    streams: u32,
    reverse: bool,
    seconds: u64,
    hz: f64,
) -> Result<(f64, f64)> {
    let mut c = Command::new("iperf3");
    c.args([
        "-c",
        "127.0.0.1",
        "-p",
        &s.ip_port.to_string(),
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
    let (out, t) = client(&mut c, &s.iperf)?;
    let bps = parse_iperf3(&out).context("unexpected iperf3 -J output")?;
    Ok((bps / 1e6, t as f64 / hz))
}

/// The table of medians per stream count and direction, and the method's words.
fn print_tcp_table(cells: &[Cell], directions: &[(&str, bool)], hz: f64) {
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
}
