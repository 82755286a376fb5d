//! Rendering results as the seeds' tables: rows = block size, columns = filesystem,
//! cells = MiB/s (1 MiB = 1,048,576 bytes), one table for writes and one for reads.

use benchboot_results::{mib_per_s, Direction, RunResults, Severity, Summary};
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

/// The MiB/s of every repetition of one cell.
pub fn cell_values(r: &RunResults, target: &str, block_size: u64, dir: Direction) -> Vec<f64> {
    r.storage
        .iter()
        .filter(|m| m.target == target && m.block_size == block_size && m.direction == dir)
        .map(|m| mib_per_s(m.bytes, m.nanos))
        .collect()
}

/// One cell: the median, with min–max when there are several repetitions; `—` if none.
pub fn cell_text(values: &[f64]) -> String {
    match Summary::of(values) {
        None => "—".into(),
        Some(s) if s.count == 1 => format!("{:.2}", s.median),
        Some(s) => format!("{:.2} ({:.2}–{:.2})", s.median, s.min, s.max),
    }
}

/// The seeds' table for one direction.
pub fn storage_table(r: &RunResults, dir: Direction) -> Table {
    let targets: Vec<&str> = r
        .plan
        .storage
        .targets
        .iter()
        .map(|t| t.label.as_str())
        .collect();
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    let mut header = vec!["block size".to_owned()];
    header.extend(targets.iter().map(|s| s.to_string()));
    t.set_header(header);
    for &bs in &r.plan.storage.block_sizes {
        let mut row = vec![block_size_label(bs)];
        row.extend(
            targets
                .iter()
                .map(|target| cell_text(&cell_values(r, target, bs, dir))),
        );
        t.add_row(row);
    }
    for i in 0..=targets.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// The whole report: context, both tables, census verdict, and every event.
pub fn report(r: &RunResults) -> String {
    let mut out = String::new();
    let s = &r.system;
    out.push_str(&format!(
        "run {}  board {}  kernel {} ({})  RAM {} MiB\n",
        r.run_id,
        r.board,
        s.kernel_release,
        s.machine,
        s.mem_total_bytes >> 20
    ));
    if r.emulated {
        out.push_str("EMULATED (QEMU): these figures say nothing about the hardware\n");
    }
    let reps = r.plan.storage.repetitions;
    out.push_str(&format!(
        "storage: mode sync (write: write(2) loop + fsync(2) timed; read: after drop_caches), \
         cap {} MiB or {} s per cell, {reps} repetition(s){}\n\n",
        r.plan.storage.byte_cap >> 20,
        r.plan.storage.time_cap_ms as f64 / 1000.0,
        if reps > 1 {
            "; cells are median (min–max)"
        } else {
            ""
        }
    ));
    out.push_str("Write, MiB/s\n");
    out.push_str(&storage_table(r, Direction::Write).to_string());
    out.push_str("\n\nRead, MiB/s\n");
    out.push_str(&storage_table(r, Direction::Read).to_string());
    out.push('\n');
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
