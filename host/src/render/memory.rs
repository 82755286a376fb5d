//! The memory section in tinymembench's shape: the CPU facts line, one line per
//! bandwidth test (`standard memcpy : 1234.5 MB/s (0.3%)`, the best sample and the
//! samples' spread) grouped by core set, one latency table per page kind (extra ns per
//! read over the L1 baseline, single and dual random read, with the raw ns per read
//! beside), the kernels skipped, what the plan asked that the machine lacks, and the
//! problems. The clock checks are [`super::clock`]'s.
//!
//! MB/s (10^6 B/s) and the ns over L1 come from `benchboot_results::memory`; the only
//! figure derived here is the raw ns per read of a repeat (its ns ÷ its reads).

use benchboot_results::memory::{
    BandwidthTest, Cores, LatencyRow, LatencyTable, MemoryResults, Pages,
};
use benchboot_results::{HealthScope, RunResults};

use super::{health_mark, HEALTH_LEGEND};
use crate::context::EMULATED_NOTICE;
use crate::doc::{Block, Grid};
use crate::units::{block_size_label, duration_label_ms, size_label};

/// The alert of an emulated run's memory section.
pub const EMULATED_MEMORY: &str = "EMULATED MEMORY: QEMU's TCG translates every load and \
     store, so bandwidth, latency and the clock loop measure the machine running QEMU, not \
     the board's memory";

/// The heading suffix of a section of an emulated run: ` (EMULATED (QEMU): these figures
/// say nothing about the hardware)`, else "".
pub fn emulated_mark(emulated: bool) -> String {
    if emulated {
        format!(" ({EMULATED_NOTICE})")
    } else {
        String::new()
    }
}

/// `CPU 0`, `all 4 cores`.
pub fn cores_label(c: Cores) -> String {
    match c {
        Cores::One(n) => format!("CPU {n}"),
        Cores::All(n) => format!("all {n} cores"),
    }
}

/// `cpu0`, `all4`; `base`, `huge`: as the figures' case ids spell them.
pub use benchboot_results::figures::{cores_id, pages_id};

/// `base pages (4 KiB)`, `huge pages (transparent)`.
pub fn pages_label(p: Pages) -> String {
    match p {
        Pages::Base(b) => format!("base pages ({})", block_size_label(b)),
        Pages::Huge => "huge pages (transparent)".into(),
    }
}

pub use benchboot_results::memory::{fastest_per_read_ns, per_read_ns};

/// Each repeat's ns per read over the fastest baseline, floored at 0 (single, dual): the
/// spread behind [`LatencyTable::extra_ns`], whose figure is the fastest of these.
pub fn repeat_extra_ns(t: &LatencyTable, row: &LatencyRow) -> (Vec<f64>, Vec<f64>) {
    let base = t.baseline_per_read().unwrap_or(0.0);
    let over = |ns: &[u64]| {
        per_read_ns(ns, t.reads)
            .into_iter()
            .map(|v| (v - base).max(0.0))
            .collect()
    };
    (over(&row.single_ns), over(&row.dual_ns))
}

/// The CPU facts, one line each: model, arch, cores, features; last-level cache and where
/// its size came from, MemTotal; the buffer size and why.
pub fn cpu_lines(m: &MemoryResults) -> Vec<String> {
    let c = &m.cpu;
    vec![
        format!(
            "CPU: {} ({}), {} core(s); features: {}",
            c.model,
            c.arch,
            c.cores,
            if c.features.is_empty() {
                "none reported".to_owned()
            } else {
                c.features.join(" ")
            }
        ),
        format!(
            "last-level cache {} ({}); MemTotal {}",
            size_label(c.llc_bytes),
            c.llc_source,
            size_label(c.mem_total_bytes)
        ),
        format!(
            "bandwidth buffers: {} each ({})",
            size_label(m.buffer_bytes),
            m.sizing
        ),
    ]
}

/// The bandwidth tests by core set, in the order they ran (the first CPU's every
/// kernel, each other CPU's libc, then all cores at once).
pub fn bandwidth_groups(m: &MemoryResults) -> Vec<(Cores, Vec<&BandwidthTest>)> {
    let mut out: Vec<(Cores, Vec<&BandwidthTest>)> = Vec::new();
    for t in &m.bandwidth {
        match out.iter_mut().find(|(c, _)| *c == t.cores) {
            Some((_, ts)) => ts.push(t),
            None => out.push((t.cores, vec![t])),
        }
    }
    out
}

/// One test as tinymembench prints it, its label padded to `width`:
/// `standard memcpy : 1234.5 MB/s (0.3%)`, `mark` after the figure.
pub fn bandwidth_line(t: &BandwidthTest, width: usize, mark: &str) -> String {
    match t.best_and_spread() {
        Some((best, spread)) => format!(
            "{:<width$} : {best:>8.1} MB/s ({spread:.1}%){mark}",
            t.label
        ),
        None => format!("{:<width$} : no samples", t.label),
    }
}

/// The bandwidth lines: a `CPU 0:` / `all 4 cores at once:` line per core set, then its
/// tests indented, labels padded to the longest.
pub fn bandwidth_lines(m: &MemoryResults, mark: &str) -> Vec<String> {
    let width = m
        .bandwidth
        .iter()
        .map(|t| t.label.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = Vec::new();
    for (cores, tests) in bandwidth_groups(m) {
        out.push(match cores {
            Cores::One(_) => format!("{}:", cores_label(cores)),
            Cores::All(_) => format!("{} at once:", cores_label(cores)),
        });
        for t in tests {
            out.push(format!("  {}", bandwidth_line(t, width, mark)));
        }
    }
    out
}

/// Under a latency table of an emulated run: why its "over L1" columns are empty.
pub const EMULATED_LATENCY: &str = "QEMU (TCG) models no caches: a read costs the same at \
     every block size, so there is no latency over L1 to see (the columns say `no caches`) \
     and no latency plot is drawn; the raw ns/read columns are the speed of the machine \
     running QEMU";

/// One latency table: rows = block size, columns = single and dual random read in ns
/// over L1 (tinymembench's figures: the fastest repeat less the baseline) and the raw
/// ns per read of the fastest repeat of each. For an emulated run (`emulated`) the over-L1
/// cells say `no caches` instead of the near-zero differences TCG gives
/// ([`EMULATED_LATENCY`]).
pub fn latency_grid(t: &LatencyTable, emulated: bool) -> Grid {
    let mut g = Grid::new(vec![
        "block size".into(),
        "single random read, ns".into(),
        "dual random read, ns".into(),
        "single, raw ns/read".into(),
        "dual, raw ns/read".into(),
    ]);
    let cell = |v: Option<f64>| v.map_or("—".into(), |v| format!("{v:.1}"));
    for row in &t.rows {
        let extra = t.extra_ns(row);
        let over_l1 = |v: Option<f64>| {
            if emulated {
                "no caches".into()
            } else {
                cell(v)
            }
        };
        g.push(vec![
            block_size_label(row.block_bytes),
            over_l1(extra.map(|e| e.0)),
            over_l1(extra.map(|e| e.1)),
            cell(fastest_per_read_ns(&row.single_ns, t.reads)),
            cell(fastest_per_read_ns(&row.dual_ns, t.reads)),
        ]);
    }
    g
}

/// How a latency table was measured, under it.
fn latency_how(t: &LatencyTable) -> String {
    let repeats = t.baseline_ns.len();
    format!(
        "L1 baseline (the same loop over 2 bytes, always a hit): {} ns/read, subtracted \
         from every row; {} dependent random byte reads per repeat (tinymembench's LCG), \
         fastest of {repeats} repeat(s) at random offsets; dual = two reads a step, ns per \
         step, over its own baseline",
        t.baseline_per_read()
            .map_or("—".into(), |b| format!("{b:.1}")),
        crate::units::grouped(t.reads)
    )
}

/// How the bandwidth was measured: the plan's sample time and count when it has them.
fn bandwidth_how(r: &RunResults, m: &MemoryResults) -> String {
    let samples = match &r.plan.memory {
        Some(p) => format!(
            "the best of {} sample(s) of at least {} each",
            p.samples,
            duration_label_ms(p.sample_ms)
        ),
        None => "the best sample".into(),
    };
    format!(
        "MB/s = 10^6 B/s over {} buffers, a copy's bytes counted once (tinymembench); {samples}, \
         (%) = the samples' standard deviation as a share of the best; all cores at once: \
         one pinned thread per CPU with its own buffers, all threads' bytes over the common span",
        size_label(m.buffer_bytes)
    )
}

/// The memory section: heading (EMULATED for a QEMU run, with its alert), the CPU facts,
/// the bandwidth lines, a latency table per page kind, skipped kernels and tests,
/// problems. Empty when the run has no memory results.
pub fn memory_blocks(r: &RunResults) -> Vec<Block> {
    let Some(m) = &r.memory else {
        return Vec::new();
    };
    let mark = health_mark(&r.health, &HealthScope::Memory);
    let mut out = vec![Block::Heading(format!(
        "Memory: bandwidth and latency (tinymembench's method){}",
        emulated_mark(r.emulated)
    ))];
    if r.emulated {
        out.push(Block::Alert(EMULATED_MEMORY.into()));
    }
    out.push(Block::Text(cpu_lines(m).join("\n")));
    if !m.bandwidth.is_empty() {
        out.push(Block::Text(bandwidth_how(r, m)));
        out.push(Block::Pre(bandwidth_lines(m, mark)));
    }
    for t in &m.latency {
        out.push(Block::Heading(format!(
            "Latency, {}, CPU {}: ns per read over L1{mark}",
            pages_label(t.pages),
            t.core
        )));
        out.push(Block::Grid(latency_grid(t, r.emulated)));
        out.push(Block::Text(latency_how(t)));
        if r.emulated {
            out.push(Block::Text(EMULATED_LATENCY.into()));
        }
    }
    let skipped: Vec<String> = m
        .cpu
        .kernels_skipped
        .iter()
        .map(|k| format!("kernel skipped: {k}"))
        .chain(m.skipped.iter().map(|s| format!("not run: {s}")))
        .collect();
    if !skipped.is_empty() {
        out.push(Block::List(skipped));
    }
    if !m.problems.is_empty() {
        out.push(Block::List(
            m.problems.iter().map(|p| format!("PROBLEM: {p}")).collect(),
        ));
    }
    if !mark.is_empty() {
        out.push(Block::Text(HEALTH_LEGEND.into()));
    }
    out
}

#[cfg(test)]
pub(crate) mod tests;
