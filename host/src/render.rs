//! Rendering results as the seeds' tables: rows = block size, columns = filesystem,
//! cells = MiB/s (1 MiB = 1,048,576 bytes), one table for writes and one for reads.

use benchboot_plan::Mode;
use benchboot_results::{
    a1_verdict, iops, mib_per_s, DeviceReadKind, Direction, RandomOp, RunResults, Severity, Summary,
};
use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, Table};

/// "8 B", "4 KiB", "1 MiB".
pub fn block_size_label(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (size, unit) in UNITS {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{} {unit}", bytes / size);
        }
    }
    format!("{bytes} B")
}

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

fn table(header: Vec<String>) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(header);
    t
}

fn align_right(t: &mut Table, columns: usize) {
    for i in 0..columns {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}

/// Marks a cell that ran in sync mode although the plan asked for direct.
pub const FALLBACK_MARK: &str = "ˢ";

/// The seeds' table for one direction and mode: rows = block size, columns = target.
pub fn storage_table(r: &RunResults, dir: Direction, mode: Mode) -> Table {
    let targets: Vec<&str> = r
        .plan
        .storage
        .targets
        .iter()
        .map(|t| t.label.as_str())
        .collect();
    let mut header = vec!["block size".to_owned()];
    header.extend(targets.iter().map(|s| s.to_string()));
    let mut t = table(header);
    for &bs in &r.plan.storage.block_sizes {
        let mut row = vec![block_size_label(bs)];
        for target in &targets {
            let (values, fell_back) = cell_values(r, target, bs, dir, mode);
            let mark = if fell_back { FALLBACK_MARK } else { "" };
            row.push(format!("{}{mark}", cell_text(&values)));
        }
        t.add_row(row);
    }
    align_right(&mut t, targets.len() + 1);
    t
}

/// `hdparm -T`/`-t`-style figures: one row per disk, MiB/s.
pub fn device_read_table(r: &RunResults) -> Table {
    let mut t = table(vec![
        "device".into(),
        "cached reads (-T), MiB/s".into(),
        "device reads (-t), MiB/s".into(),
    ]);
    let mut devices: Vec<&str> = r.device_reads.iter().map(|d| d.device.as_str()).collect();
    devices.dedup();
    for dev in devices {
        let cell = |kind| {
            let v: Vec<f64> = r
                .device_reads
                .iter()
                .filter(|d| d.device == dev && d.kind == kind)
                .map(|d| mib_per_s(d.bytes, d.nanos))
                .collect();
            cell_text(&v)
        };
        t.add_row(vec![
            dev.to_owned(),
            cell(DeviceReadKind::Cached),
            cell(DeviceReadKind::Buffered),
        ]);
    }
    align_right(&mut t, 3);
    t
}

/// Random IOPS: one row per target and operation, one column per queue depth.
pub fn iops_table(r: &RunResults) -> Table {
    let Some(rp) = &r.plan.storage.random else {
        return table(vec!["no random I/O in this plan".into()]);
    };
    let mut header = vec![
        "target".to_owned(),
        format!("{} random", block_size_label(rp.block_size)),
    ];
    header.extend(rp.queue_depths.iter().map(|q| format!("QD{q} IOPS")));
    let mut t = table(header);
    for target in &rp.targets {
        for op in [RandomOp::Read, RandomOp::Write] {
            let mut row = vec![target.clone(), format!("{op:?}").to_lowercase()];
            for &qd in &rp.queue_depths {
                let v: Vec<f64> = r
                    .random
                    .iter()
                    .filter(|x| &x.target == target && x.op == op && x.queue_depth == qd)
                    .map(|x| iops(x.ios, x.nanos))
                    .collect();
                row.push(Summary::of(&v).map_or("—".into(), |s| format!("{:.0}", s.median)));
            }
            t.add_row(row);
        }
    }
    align_right(&mut t, rp.queue_depths.len() + 2);
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

/// The whole report: context, both tables, census verdict, and every event.
pub fn report(r: &RunResults) -> String {
    let mut out = String::new();
    let s = &r.system;
    out.push_str(&format!(
        "run {}  board {}  kernel {} ({})  RAM {} MiB  governor {}\n",
        r.run_id,
        r.board,
        s.kernel_release,
        s.machine,
        s.mem_total_bytes >> 20,
        s.governor.as_deref().unwrap_or("none (no cpufreq)")
    ));
    if r.emulated {
        out.push_str("EMULATED (QEMU): these figures say nothing about the hardware\n");
    }
    let reps = r.plan.storage.repetitions;
    out.push_str(&format!(
        "storage: write = write(2) loop + fsync(2), timed together; read after the page cache is \
         dropped; cap {} KiB or {} s per cell, {reps} repetition(s){}\n\n",
        r.plan.storage.byte_cap >> 10,
        r.plan.storage.time_cap_ms as f64 / 1000.0,
        if reps > 1 {
            "; cells are median (min–max)"
        } else {
            ""
        }
    ));
    for mode in &r.plan.storage.modes {
        for (dir, name) in [(Direction::Write, "Write"), (Direction::Read, "Read")] {
            out.push_str(&format!("{name}, MiB/s, mode {}\n", mode.name()));
            out.push_str(&storage_table(r, dir, *mode).to_string());
            out.push('\n');
        }
    }
    if r.storage.iter().any(|m| m.mode != m.requested_mode) {
        out.push_str(&format!(
            "{FALLBACK_MARK} ran in sync mode: below the logical block size O_DIRECT is impossible\n"
        ));
    }
    if !r.device_reads.is_empty() {
        out.push_str("\nDevice reads (like hdparm -T / -t)\n");
        out.push_str(&device_read_table(r).to_string());
        out.push('\n');
    }
    if !r.random.is_empty() {
        out.push_str("\nRandom I/O (O_DIRECT; queue depth N = N threads of synchronous I/O)\n");
        out.push_str(&iops_table(r).to_string());
        out.push('\n');
        out.push_str(&a1_lines(r));
    }
    for v in &r.verify {
        match v.first_mismatch {
            None => out.push_str(&format!(
                "verify {}: {} bytes read back as written\n",
                v.target, v.bytes
            )),
            Some(at) => out.push_str(&format!(
                "verify {}: MISMATCH at byte {at} of {}\n",
                v.target, v.bytes
            )),
        }
    }
    for d in &r.devices {
        out.push_str(&format!(
            "device {}: {} {} MiB, logical/physical block {}/{} B{}{}\n",
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
            "only PID 1 in user space"
        } else {
            "OTHER PROCESSES RAN"
        };
        let names: Vec<String> = c
            .user_processes
            .iter()
            .map(|p| format!("{}:{}", p.pid, p.comm))
            .collect();
        out.push_str(&format!(
            "census {}: {verdict} ({}; {} kernel threads)\n",
            c.at,
            names.join(", "),
            c.kernel_threads
        ));
    }
    if !r.complete {
        out.push_str("warning: the run did not finish every step of its plan\n");
    }
    for e in &r.events {
        let sev = match e.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        out.push_str(&format!("{sev}: {}: {}\n", e.step, e.message));
    }
    out
}

#[cfg(test)]
mod tests;
