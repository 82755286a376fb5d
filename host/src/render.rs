//! The seeds' tables from one results document: rows = block size, columns =
//! filesystem, cells = MiB/s (1 MiB = 1,048,576 bytes), one table per direction and
//! mode; device reads, IOPS with the A1 verdict, network. Tables are [`Grid`]s, so
//! the same content prints as terminal tables or Markdown ([`crate::report`]); and the
//! whole report of a run as one [`Doc`] ([`document`]): context, warnings, every table.

use benchboot_plan::Mode;
use benchboot_results::health::conditions_during;
use benchboot_results::network::{mbit_per_s, CpuTimes, NetDirection, NetTest, NetworkResults};
use benchboot_results::{
    a1_verdict, iops, mib_per_s, DeviceReadKind, Direction, HealthScope, RandomOp, RunResults,
    StepHealth, Summary,
};

use crate::context::{self, context, context_grid, warnings};
use crate::doc::{Block, Doc, Grid};
use crate::units::{block_size_label, duration_label_ms, duration_label_ns, size_label};

/// The MiB/s of every repetition of one cell (by the mode the plan asked for), and
/// whether any of them ran in another mode (an O_DIRECT fallback).
pub fn cell_values(
    r: &RunResults,
    target: &str,
    block_size: u64,
    dir: Direction,
    mode: Mode,
) -> (Vec<f64>, bool) {
    let ms: Vec<_> = r
        .storage
        .iter()
        .filter(|m| {
            m.target == target
                && m.block_size == block_size
                && m.direction == dir
                && m.requested_mode == mode
        })
        .collect();
    let fell_back = ms.iter().any(|m| m.mode != m.requested_mode);
    (
        ms.iter().map(|m| mib_per_s(m.bytes, m.nanos)).collect(),
        fell_back,
    )
}

/// One cell: the median, with min–max when there are several repetitions; `—` if none.
pub fn cell_text(values: &[f64]) -> String {
    match Summary::of(values) {
        None => "—".into(),
        Some(s) if s.count == 1 => format!("{:.2}", s.median),
        Some(s) => format!("{:.2} ({:.2}–{:.2})", s.median, s.min, s.max),
    }
}

/// Marks a cell that ran in sync mode although the plan asked for direct.
pub const FALLBACK_MARK: &str = "ˢ";

/// Marks a figure measured while the board's health was flagged (throttling, frequency
/// capping, under-voltage or the soft temperature limit, now or raised during the step).
pub const HEALTH_MARK: &str = "!";

/// The legend of [`HEALTH_MARK`].
pub const HEALTH_LEGEND: &str = "! the board flagged throttling, frequency capping, \
     under-voltage or the soft temperature limit during this measurement (see Warnings)";

/// [`HEALTH_MARK`] when any step covering `scope` saw a flagged condition, else "".
pub fn health_mark(health: &[StepHealth], scope: &HealthScope) -> &'static str {
    if conditions_during(health, scope).is_empty() {
        ""
    } else {
        HEALTH_MARK
    }
}

/// The target labels of the plan, in the plan's (the seeds' column) order.
pub fn target_labels(r: &RunResults) -> Vec<&str> {
    r.plan
        .storage
        .targets
        .iter()
        .map(|t| t.label.as_str())
        .collect()
}

/// The seeds' table for one direction and mode: rows = block size, columns = target,
/// cells = MiB/s median (min–max of repetitions), [`FALLBACK_MARK`] on fallbacks,
/// [`HEALTH_MARK`] where the board's health was flagged.
pub fn storage_table(r: &RunResults, dir: Direction, mode: Mode) -> Grid {
    let targets = target_labels(r);
    let mut header = vec!["block size".to_owned()];
    header.extend(targets.iter().map(|s| s.to_string()));
    let mut t = Grid::new(header);
    for &bs in &r.plan.storage.block_sizes {
        let mut row = vec![block_size_label(bs)];
        for target in &targets {
            let (values, fell_back) = cell_values(r, target, bs, dir, mode);
            let mark = if fell_back { FALLBACK_MARK } else { "" };
            let scope = HealthScope::Storage {
                target: target.to_string(),
                mode,
                block_size: bs,
            };
            row.push(format!(
                "{}{mark}{}",
                cell_text(&values),
                health_mark(&r.health, &scope)
            ));
        }
        t.push(row);
    }
    t
}

/// `hdparm -T`/`-t`-style figures: one row per disk, MiB/s.
pub fn device_read_table(r: &RunResults) -> Grid {
    let mut t = Grid::new(vec![
        "device".into(),
        "cached reads (-T), MiB/s".into(),
        "device reads (-t), MiB/s".into(),
    ]);
    let mut devices: Vec<&str> = r.device_reads.iter().map(|d| d.device.as_str()).collect();
    devices.dedup();
    for dev in devices {
        let scope = HealthScope::DeviceRead {
            device: dev.to_owned(),
        };
        let mark = health_mark(&r.health, &scope);
        let cell = |kind| format!("{}{mark}", cell_text(&device_read_values(r, dev, kind)));
        t.push(vec![
            dev.to_owned(),
            cell(DeviceReadKind::Cached),
            cell(DeviceReadKind::Buffered),
        ]);
    }
    t
}

/// "read" / "write".
pub fn random_op_label(op: RandomOp) -> &'static str {
    match op {
        RandomOp::Read => "read",
        RandomOp::Write => "write",
    }
}

/// Random IOPS: one row per target and operation, one column per queue depth
/// (median of repetitions, operations per second).
pub fn iops_table(r: &RunResults) -> Grid {
    let Some(rp) = &r.plan.storage.random else {
        return Grid::new(vec!["no random I/O in this plan".into()]);
    };
    let mut header = vec![
        "target".to_owned(),
        format!("{} random", block_size_label(rp.block_size)),
    ];
    header.extend(rp.queue_depths.iter().map(|q| format!("QD{q} IOPS")));
    let mut t = Grid::new(header);
    t.left_columns = 2;
    for target in &rp.targets {
        for op in [RandomOp::Read, RandomOp::Write] {
            let mut row = vec![target.clone(), random_op_label(op).to_owned()];
            for &qd in &rp.queue_depths {
                let v: Vec<f64> = r
                    .random
                    .iter()
                    .filter(|x| &x.target == target && x.op == op && x.queue_depth == qd)
                    .map(|x| iops(x.ios, x.nanos))
                    .collect();
                let scope = HealthScope::Random {
                    target: target.clone(),
                    op,
                    queue_depth: qd,
                };
                let mark = health_mark(&r.health, &scope);
                row.push(Summary::of(&v).map_or("—".into(), |s| format!("{:.0}{mark}", s.median)));
            }
            t.push(row);
        }
    }
    t
}

/// The A1 verdict lines, one per target of the random plan.
pub fn a1_lines(r: &RunResults) -> String {
    let mut out = String::new();
    for target in r
        .plan
        .storage
        .random
        .iter()
        .flat_map(|rp| rp.targets.iter())
    {
        match a1_verdict(r, target) {
            Some(v) => out.push_str(&format!(
                "A1 ({target}): {} — sequential write {:.0} KB/s (>= 10,000), random write {:.0} IOPS (>= 500), \
                 random read {:.0} IOPS (>= 1,500), 4 KiB at QD1\n",
                if v.passes { "PASS" } else { "FAIL" },
                v.seq_write_bps / 1000.0,
                v.random_write_iops,
                v.random_read_iops
            )),
            None => out.push_str(&format!("A1 ({target}): no verdict, a deciding figure is missing\n")),
        }
    }
    out
}

/// "board → host" / "host → board".
pub fn net_direction_label(d: NetDirection) -> &'static str {
    match d {
        NetDirection::BoardToHost => "board → host",
        NetDirection::HostToBoard => "host → board",
    }
}

/// System-wide CPU shares of a span as `usr/sys/irq/sirq/idle` percent, one decimal
/// each (user includes nice, idle includes iowait and steal); `—` for an empty span.
pub fn cpu_cell(t: &CpuTimes) -> String {
    match t.share() {
        None => "—".into(),
        Some(s) => format!(
            "{:.1}/{:.1}/{:.1}/{:.1}/{:.1}",
            s.user,
            s.system,
            s.irq,
            s.softirq,
            s.idle + s.iowait
        ),
    }
}

const CPU_HEADER: &str = "CPU % usr/sys/irq/sirq/idle";

/// MiB/s of every `kind` read of `device`, in the order measured.
pub fn device_read_values(r: &RunResults, device: &str, kind: DeviceReadKind) -> Vec<f64> {
    r.device_reads
        .iter()
        .filter(|d| d.device == device && d.kind == kind)
        .map(|d| mib_per_s(d.bytes, d.nanos))
        .collect()
}

/// Mbit/s of every interval of a throughput run (10^6 bit/s).
pub fn interval_mbits(r: &benchboot_results::network::ThroughputRun) -> Vec<f64> {
    r.intervals
        .iter()
        .map(|i| mbit_per_s(i.bytes, i.end_ns.saturating_sub(i.start_ns)))
        .collect()
}

fn net_mark(health: &[StepHealth], link: &str, test: NetTest) -> &'static str {
    health_mark(
        health,
        &HealthScope::Network {
            link: link.to_owned(),
            test,
        },
    )
}

/// Throughput runs: one row per run, counted at the receiver after the warm-up;
/// [`HEALTH_MARK`] on the rates of runs the board's health flagged.
pub fn throughput_table(n: &NetworkResults, health: &[StepHealth]) -> Grid {
    let mut t = Grid::new(vec![
        "link".into(),
        "direction".into(),
        "streams".into(),
        "Mbit/s".into(),
        "MiB/s".into(),
        "per interval Mbit/s".into(),
        format!("board {CPU_HEADER}"),
        format!("host {CPU_HEADER}"),
    ]);
    t.left_columns = 2;
    for r in &n.throughput {
        let per = interval_mbits(r);
        let mark = net_mark(health, &r.link, NetTest::of_throughput(r));
        t.push(vec![
            r.link.clone(),
            net_direction_label(r.direction).into(),
            r.streams.to_string(),
            format!("{:.1}{mark}", mbit_per_s(r.bytes, r.nanos)),
            format!("{:.2}{mark}", mib_per_s(r.bytes, r.nanos)),
            Summary::of(&per).map_or("—".into(), |s| format!("{:.1}–{:.1}", s.min, s.max)),
            cpu_cell(&r.board_cpu),
            cpu_cell(&r.host_cpu),
        ]);
    }
    t
}

/// Nearest-rank percentile `p` (0 < p <= 100) of sorted values.
pub fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// TCP round trips: min, median, p99 and max per run, µs ([`HEALTH_MARK`] on the
/// median where the board's health was flagged).
pub fn latency_table(n: &NetworkResults, health: &[StepHealth]) -> Grid {
    let mut t = Grid::new(vec![
        "link".into(),
        "round trips".into(),
        "min µs".into(),
        "median µs".into(),
        "p99 µs".into(),
        "max µs".into(),
    ]);
    for r in &n.latency {
        let mut v = r.rtt_ns.clone();
        v.sort_unstable();
        let us = |x: Option<u64>| x.map_or("—".into(), |ns| format!("{:.1}", ns as f64 / 1e3));
        let mark = net_mark(health, &r.link, NetTest::Latency);
        let median = Summary::of(&v.iter().map(|&x| x as f64).collect::<Vec<_>>())
            .map_or("—".into(), |s| format!("{:.1}{mark}", s.median / 1e3));
        t.push(vec![
            r.link.clone(),
            v.len().to_string(),
            us(v.first().copied()),
            median,
            us(percentile(&v, 99.0)),
            us(v.last().copied()),
        ]);
    }
    t
}

/// HTTP GETs of an object held in RAM by the sender ([`HEALTH_MARK`] on the rates
/// where the board's health was flagged).
pub fn http_table(n: &NetworkResults, health: &[StepHealth]) -> Grid {
    let mut t = Grid::new(vec![
        "link".into(),
        "direction".into(),
        "MiB".into(),
        "seconds".into(),
        "MiB/s".into(),
        "Mbit/s".into(),
        format!("board {CPU_HEADER}"),
        format!("host {CPU_HEADER}"),
    ]);
    t.left_columns = 2;
    for h in &n.http {
        let mark = net_mark(health, &h.link, NetTest::of_http(h));
        t.push(vec![
            h.link.clone(),
            net_direction_label(h.direction).into(),
            format!("{:.1}", h.bytes as f64 / (1u64 << 20) as f64),
            format!("{:.2}", h.nanos as f64 / 1e9),
            format!("{:.2}{mark}", mib_per_s(h.bytes, h.nanos)),
            format!("{:.1}{mark}", mbit_per_s(h.bytes, h.nanos)),
            cpu_cell(&h.board_cpu),
            cpu_cell(&h.host_cpu),
        ]);
    }
    t
}

/// UDP runs at an offered load, counted at the receiver ([`HEALTH_MARK`] on the rates
/// where the board's health was flagged).
pub fn udp_table(n: &NetworkResults, health: &[StepHealth]) -> Grid {
    let mut t = Grid::new(vec![
        "link".into(),
        "direction".into(),
        "offered Mbit/s".into(),
        "datagram B".into(),
        "sent".into(),
        "received".into(),
        "lost %".into(),
        "out of order".into(),
        "Mbit/s".into(),
        "jitter µs".into(),
        format!("board {CPU_HEADER}"),
        format!("host {CPU_HEADER}"),
    ]);
    t.left_columns = 2;
    for u in &n.udp {
        let mark = net_mark(health, &u.link, NetTest::of_udp(u));
        let known = u.received + u.lost;
        t.push(vec![
            u.link.clone(),
            net_direction_label(u.direction).into(),
            format!("{:.1}", u.target_bitrate as f64 / 1e6),
            u.datagram_bytes.to_string(),
            u.sent.to_string(),
            u.received.to_string(),
            if known == 0 {
                "—".into()
            } else {
                format!("{:.2}", 100.0 * u.lost as f64 / known as f64)
            },
            u.out_of_order.to_string(),
            format!("{:.1}{mark}", mbit_per_s(u.bytes, u.nanos)),
            format!("{:.1}", u.jitter_ns as f64 / 1e3),
            cpu_cell(&u.board_cpu),
            cpu_cell(&u.host_cpu),
        ]);
    }
    t
}

/// True when there is anything network to show.
pub fn has_network(n: &NetworkResults) -> bool {
    !(n.throughput.is_empty() && n.latency.is_empty() && n.http.is_empty() && n.udp.is_empty())
}

/// True when a step of `health` covering a network test saw a flagged condition.
fn network_flagged(health: &[StepHealth]) -> bool {
    health
        .iter()
        .any(|h| matches!(h.scope, HealthScope::Network { .. }) && !h.during().is_empty())
}

/// The network section as blocks: throughput, latency and HTTP tables with their units
/// (and the [`HEALTH_MARK`] legend when a test was flagged).
pub fn network_blocks(n: &NetworkResults, health: &[StepHealth], emulated: bool) -> Vec<Block> {
    let mut out = Vec::new();
    let mark = if emulated {
        " (EMULATED: QEMU's virtual network, not the board's)"
    } else {
        ""
    };
    if !n.throughput.is_empty() {
        let omit = n.throughput.iter().map(|r| r.omit_ns).max().unwrap_or(0);
        out.push(Block::Heading(format!(
            "TCP throughput{mark}: counted at the receiver after a {} warm-up; \
             Mbit/s = 10^6 bit/s, MiB/s = 2^20 B/s; CPU = system-wide /proc/stat shares",
            duration_label_ns(omit)
        )));
        out.push(Block::Grid(throughput_table(n, health)));
    }
    if !n.latency.is_empty() {
        out.push(Block::Heading(format!(
            "TCP round trips{mark} (1 byte each way, TCP_NODELAY)"
        )));
        out.push(Block::Grid(latency_table(n, health)));
    }
    if !n.http.is_empty() {
        out.push(Block::Heading(format!(
            "HTTP GET of an object in the sender's RAM{mark} (request to last byte)"
        )));
        out.push(Block::Grid(http_table(n, health)));
    }
    if !n.udp.is_empty() {
        out.push(Block::Heading(format!(
            "UDP at an offered load{mark}, as iperf3 -u: counted at the receiver by sequence \
             number after the warm-up; lost % = lost / (received + lost); Mbit/s = 10^6 bit/s \
             of payload; jitter per RFC 3550"
        )));
        out.push(Block::Grid(udp_table(n, health)));
    }
    if network_flagged(health) {
        out.push(Block::Text(HEALTH_LEGEND.into()));
    }
    out
}

/// The network section as terminal text (no health records: the host's own runs).
pub fn network_report(n: &NetworkResults, emulated: bool) -> String {
    Doc {
        blocks: network_blocks(n, &[], emulated),
    }
    .text()
}

/// The storage section: how it was timed, then one table per mode and direction
/// (headings `Write, MiB/s, mode sync`), the fallback legend, device reads, IOPS, A1.
pub fn storage_blocks(r: &RunResults) -> Vec<Block> {
    let mut out = Vec::new();
    let reps = r.plan.storage.repetitions;
    out.push(Block::Heading("Storage".into()));
    out.push(Block::Text(format!(
        "write = write(2) loop + fsync(2), timed together; read after the page cache is \
         dropped; cap {} or {} per cell, {reps} repetition(s){}",
        size_label(r.plan.storage.byte_cap),
        duration_label_ms(r.plan.storage.time_cap_ms),
        if reps > 1 {
            "; cells are median (min–max)"
        } else {
            ""
        }
    )));
    for mode in &r.plan.storage.modes {
        for (dir, name) in [(Direction::Write, "Write"), (Direction::Read, "Read")] {
            out.push(Block::Heading(format!(
                "{name}, MiB/s, mode {}",
                mode.name()
            )));
            out.push(Block::Grid(storage_table(r, dir, *mode)));
        }
    }
    if r.storage.iter().any(|m| m.mode != m.requested_mode) {
        out.push(Block::Text(format!(
            "{FALLBACK_MARK} ran in sync mode: below the logical block size O_DIRECT is impossible"
        )));
    }
    let storage_flagged = r.health.iter().any(|h| {
        matches!(
            h.scope,
            HealthScope::Storage { .. }
                | HealthScope::DeviceRead { .. }
                | HealthScope::Random { .. }
        ) && !h.during().is_empty()
    });
    if !r.device_reads.is_empty() {
        out.push(Block::Heading("Device reads (like hdparm -T / -t)".into()));
        out.push(Block::Grid(device_read_table(r)));
    }
    if !r.random.is_empty() {
        out.push(Block::Heading(
            "Random I/O (O_DIRECT; queue depth N = N threads of synchronous I/O)".into(),
        ));
        out.push(Block::Grid(iops_table(r)));
        out.push(Block::Text(a1_lines(r).trim_end().to_owned()));
    }
    if storage_flagged {
        out.push(Block::Text(HEALTH_LEGEND.into()));
    }
    out
}

/// Verification, disk identity and census lines.
pub fn detail_lines(r: &RunResults) -> Vec<String> {
    let mut out = Vec::new();
    for v in &r.verify {
        let scope = HealthScope::Verify {
            target: v.target.clone(),
        };
        let mark = health_mark(&r.health, &scope);
        out.push(match v.first_mismatch {
            None => format!(
                "verify {}: {} bytes read back as written{mark}",
                v.target, v.bytes
            ),
            Some(at) => format!(
                "verify {}: MISMATCH at byte {at} of {}{mark}",
                v.target, v.bytes
            ),
        });
    }
    for d in &r.devices {
        out.push(format!(
            "device {}: {} {} MiB, logical/physical block {}/{} B{}{}",
            d.name,
            d.model.as_deref().unwrap_or("?"),
            d.size_bytes >> 20,
            d.logical_block_size,
            d.physical_block_size,
            d.bus_clock_hz.map_or(String::new(), |c| format!(
                ", bus clock {:.1} MHz",
                c as f64 / 1e6
            )),
            d.manfid
                .as_deref()
                .map_or(String::new(), |m| format!(", manfid {m}"))
        ));
    }
    for c in &r.census {
        let verdict = if c.only_pid1() {
            "only PID 1 in user space".to_owned()
        } else if c.is_isolated() {
            format!("PID 1 and {} worker(s) only", c.workers())
        } else {
            let who: Vec<String> = c
                .offenders()
                .iter()
                .map(|p| format!("{}:{}", p.pid, p.comm))
                .collect();
            format!("FOREIGN PROCESSES RAN: {}", who.join(", "))
        };
        let names: Vec<String> = c
            .user_processes
            .iter()
            .map(|p| format!("{}:{}", p.pid, p.comm))
            .collect();
        out.push(format!(
            "census {}: {verdict} ({}; {} kernel threads)",
            c.at,
            names.join(", "),
            c.kernel_threads
        ));
    }
    out
}

/// The whole report of `r`: title, EMULATED banner, context, warnings, storage tables,
/// device reads, IOPS and A1, network, verification, disks and census.
pub fn document(r: &RunResults) -> Doc {
    let mut d = Doc::default();
    d.push(Block::Title(format!(
        "benchboot report: run {} on {}",
        r.run_id, r.board
    )));
    if r.emulated {
        d.push(Block::Alert(context::EMULATED_NOTICE.into()));
    }
    if let Some(e) = &r.plan_error {
        d.push(Block::Alert(format!(
            "PLAN REFUSED: the card's plan file was refused and nothing was measured: {e}. \
             Fix it, check it with `benchboot plan check FILE --board {}`, and write it \
             with `benchboot plan write --card CARD FILE`",
            r.board
        )));
    }
    if r.plan_error.is_none() {
        d.push(Block::Text(format!("plan: {}", r.plan.source.describe())));
    }
    d.push(Block::Heading("Context".into()));
    d.push(Block::Grid(context_grid(&context(r))));
    d.push(Block::Heading("Warnings".into()));
    let w = warnings(r);
    if w.is_empty() {
        d.push(Block::Text("none".into()));
    } else {
        d.push(Block::List(
            w.into_iter()
                .map(|w| format!("{}: {}", w.kind, w.message))
                .collect(),
        ));
    }
    d.extend(storage_blocks(r));
    if has_network(&r.network) {
        d.extend(network_blocks(&r.network, &r.health, r.emulated));
    }
    let commands = command_lines(r);
    if !commands.is_empty() {
        d.push(Block::Heading("Your commands".into()));
        d.push(Block::List(commands));
    }
    let details = detail_lines(r);
    if !details.is_empty() {
        d.push(Block::Heading("Verification, disks, census".into()));
        d.push(Block::List(details));
    }
    d
}

/// One line per command step and per measurement it printed: `command coremark: exit 0
/// in 12.3 s`, `  iterations = 1234.5 iterations/s` (units as the command wrote them).
pub fn command_lines(r: &RunResults) -> Vec<String> {
    let mut out = Vec::new();
    for c in &r.commands {
        let ended = match c.exit_code {
            Some(code) => format!("exit {code}"),
            None => "did not finish (see the faults)".into(),
        };
        out.push(format!(
            "command {} ({}): {ended} in {}",
            c.id,
            c.path,
            crate::units::duration_label_ns(c.elapsed_ns)
        ));
        for m in &c.measurements {
            out.push(format!("  {} = {} {}", m.case, m.value, m.units));
        }
    }
    out
}

/// The whole report as terminal text: context, warnings, every table ([`document`]).
pub fn report(r: &RunResults) -> String {
    document(r).text()
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod network_tests {
    use super::*;
    use benchboot_plan::Plan;
    use benchboot_results::network::{HttpRun, LatencyRun, NetInterval, ThroughputRun};
    use benchboot_results::SystemInfo;

    fn cpu(user: u64, system: u64, softirq: u64, idle: u64) -> CpuTimes {
        CpuTimes {
            user,
            system,
            softirq,
            idle,
            ..CpuTimes::default()
        }
    }

    /// The cells of one rendered row (outer `│`, inner `┆` borders).
    fn cells(row: &str) -> Vec<&str> {
        row.split(['│', '┆'])
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect()
    }

    fn network() -> NetworkResults {
        let interval = |start_s: u64, bytes: u64| NetInterval {
            start_ns: start_s * 1_000_000_000,
            end_ns: (start_s + 5) * 1_000_000_000,
            bytes,
            board_cpu: CpuTimes::default(),
            host_cpu: CpuTimes::default(),
        };
        NetworkResults {
            links: vec![],
            throughput: vec![ThroughputRun {
                link: "ncm".into(),
                direction: NetDirection::BoardToHost,
                streams: 4,
                omit_ns: 2_000_000_000,
                // 50 MB then 75 MB in 5 s each: 80 and 120 Mbit/s, 100 Mbit/s overall.
                intervals: vec![interval(0, 50_000_000), interval(5, 75_000_000)],
                bytes: 125_000_000,
                nanos: 10_000_000_000,
                // The Pi Zero's signature: no idle, softirq-bound.
                board_cpu: cpu(1, 47, 52, 0),
                host_cpu: cpu(2, 3, 1, 194),
            }],
            latency: vec![LatencyRun {
                link: "ncm".into(),
                // 1..=100 µs: median 50.5, p99 99 (nearest rank), max 100.
                rtt_ns: (1..=100u64).rev().map(|i| i * 1000).collect(),
            }],
            http: vec![HttpRun {
                link: "ncm".into(),
                direction: NetDirection::HostToBoard,
                bytes: 100 << 20,
                nanos: 8_000_000_000,
                board_cpu: cpu(0, 40, 60, 0),
                host_cpu: CpuTimes::default(),
            }],
            udp: vec![],
            wired: vec![],
        }
    }

    #[test]
    fn throughput_rows_carry_rates_spread_and_cpu() {
        let text = throughput_table(&network(), &[]).to_string();
        let row = text.lines().find(|l| l.contains("ncm")).unwrap();
        let cells = cells(row);
        assert_eq!(
            cells,
            [
                "ncm",
                "board → host",
                "4",
                "100.0",
                "11.92",
                "80.0–120.0",
                "1.0/47.0/0.0/52.0/0.0",
                "1.0/1.5/0.0/0.5/97.0",
            ]
        );
    }

    #[test]
    fn udp_rows_carry_counts_loss_rate_and_jitter() {
        let mut n = network();
        n.udp.push(benchboot_results::network::UdpRun {
            link: "ncm".into(),
            direction: NetDirection::HostToBoard,
            target_bitrate: 100_000_000,
            datagram_bytes: 1448,
            sent: 1000,
            received: 990,
            lost: 10,
            out_of_order: 3,
            // 990 datagrams in 0.1 s: 114.7 Mbit/s.
            bytes: 990 * 1448,
            nanos: 100_000_000,
            jitter_ns: 12_345,
            board_cpu: cpu(1, 47, 52, 0),
            host_cpu: CpuTimes::default(),
        });
        let text = udp_table(&n, &[]).to_string();
        let row = text.lines().find(|l| l.contains("ncm")).unwrap();
        assert_eq!(
            cells(row),
            [
                "ncm",
                "host → board",
                "100.0",
                "1448",
                "1000",
                "990",
                "1.00",
                "3",
                "114.7",
                "12.3",
                "1.0/47.0/0.0/52.0/0.0",
                "—",
            ]
        );
        assert!(network_report(&n, false).contains("UDP at an offered load"));
    }

    #[test]
    fn latency_row_has_min_median_p99_max_in_microseconds() {
        let text = latency_table(&network(), &[]).to_string();
        let row = text.lines().find(|l| l.contains("ncm")).unwrap();
        let cells = cells(row);
        assert_eq!(cells, ["ncm", "100", "1.0", "50.5", "99.0", "100.0"]);
        assert_eq!(percentile(&[7], 99.0), Some(7));
        assert_eq!(percentile(&[], 99.0), None);
    }

    #[test]
    fn http_row_and_empty_cpu() {
        let text = http_table(&network(), &[]).to_string();
        let row = text.lines().find(|l| l.contains("ncm")).unwrap();
        let cells = cells(row);
        // 100 MiB in 8 s = 12.5 MiB/s = 104.9 Mbit/s; the host's span was empty.
        assert_eq!(
            cells,
            [
                "ncm",
                "host → board",
                "100.0",
                "8.00",
                "12.50",
                "104.9",
                "0.0/40.0/0.0/60.0/0.0",
                "—",
            ]
        );
    }

    #[test]
    fn report_shows_the_network_section_only_when_there_is_one_and_marks_emulation() {
        let mut r = RunResults::new("run-n".into(), Plan::example(), SystemInfo::default());
        assert!(r.emulated);
        assert!(!report(&r).contains("TCP throughput"));
        r.network = network();
        let text = report(&r);
        assert!(text.contains("EMULATED (QEMU)"));
        assert!(text.contains(
            "TCP throughput (EMULATED: QEMU's virtual network, not the board's): counted at the receiver after a 2 s warm-up"
        ));
        assert!(text.contains("TCP round trips (EMULATED"));
        assert!(text.contains("HTTP GET of an object in the sender's RAM (EMULATED"));
        r.emulated = false;
        assert!(!report(&r).contains("EMULATED"));
    }
}
