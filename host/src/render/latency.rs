//! Latency per call of the storage passes (schema 1.14): per filesystem target, one
//! table of fio's completion-latency percentiles (p50, p90, p99, p99.9, max, in ns, µs,
//! ms or s) for every storage cell (mode asked × direction × block size, repetitions
//! pooled) and one for the random I/O at each queue depth, with how many calls were
//! timed ("1 in 16": the sweep times one call in each group between clock checks).
//! Documents without latency (before schema 1.14) get no block at all, so their report
//! reads as before.

use benchboot_plan::Mode;
use benchboot_results::latency::{Latency, Percentiles};
use benchboot_results::{Direction, RandomOp, RunResults};

use crate::doc::{Block, Grid};
use crate::render::{random_op_label, target_labels};
use crate::units::{block_size_label, grouped, latency_label};

/// The pooled latency of several passes (a cell's repetitions): their histograms merged
/// ([`Latency::to_histogram`]), the calls summed; `None` for no pass with latency.
pub fn pooled<'a>(passes: impl IntoIterator<Item = &'a Latency>) -> Option<Latency> {
    let mut passes = passes.into_iter();
    let first = passes.next()?;
    let mut h = first.to_histogram();
    let mut calls = first.calls;
    for l in passes {
        h.merge(&l.to_histogram());
        calls = calls.saturating_add(l.calls);
    }
    h.to_latency(calls)
}

/// The pooled latency of one storage cell of `r` (every repetition of `target`, block
/// size, direction, by the mode the plan asked for, as the throughput tables group
/// them); `None` when no pass of it carries latency.
pub fn cell_latency(
    r: &RunResults,
    target: &str,
    block_size: u64,
    dir: Direction,
    mode: Mode,
) -> Option<Latency> {
    pooled(
        r.storage
            .iter()
            .filter(|m| {
                m.target == target
                    && m.block_size == block_size
                    && m.direction == dir
                    && m.requested_mode == mode
            })
            .filter_map(|m| m.latency.as_ref()),
    )
}

/// The pooled latency of one random-I/O cell (every repetition of `target`, `op` at
/// queue depth `qd`).
pub fn random_latency(r: &RunResults, target: &str, op: RandomOp, qd: u32) -> Option<Latency> {
    pooled(
        r.random
            .iter()
            .filter(|x| x.target == target && x.op == op && x.queue_depth == qd)
            .filter_map(|x| x.latency.as_ref()),
    )
}

/// How many of the calls were timed: `all` (every call: random I/O, blocks of 64 KiB
/// and more), else `1 in N` with N = calls ÷ timed calls, rounded.
pub fn timed_text(l: &Latency) -> String {
    if l.count >= l.calls {
        "all".into()
    } else {
        let n = (l.calls as f64 / l.count.max(1) as f64).round() as u64;
        format!("1 in {}", grouped(n))
    }
}

/// The five percentile cells of a row: p50, p90, p99, p99.9, max ([`latency_label`]).
pub fn percentile_cells(p: &Percentiles) -> Vec<String> {
    [p.p50_ns, p.p90_ns, p.p99_ns, p.p999_ns, p.max_ns]
        .into_iter()
        .map(latency_label)
        .collect()
}

/// The percentile headers after the label columns.
const PERCENTILE_HEADERS: [&str; 7] = ["p50", "p90", "p99", "p99.9", "max", "timed", "calls"];

fn percentile_row(mut labels: Vec<String>, l: &Latency) -> Vec<String> {
    labels.extend(percentile_cells(&l.percentiles()));
    labels.push(timed_text(l));
    labels.push(grouped(l.calls));
    labels
}

/// The sequential table of `target`: one row per mode asked, direction and block size
/// that has latency (the plan's order), p50 … max per call, timed calls, calls; `None`
/// when no cell of the target has latency.
pub fn storage_latency_table(r: &RunResults, target: &str) -> Option<Grid> {
    let mut header: Vec<String> = ["mode", "direction", "block size"].map(String::from).into();
    header.extend(PERCENTILE_HEADERS.map(String::from));
    let mut g = Grid::new(header);
    g.left_columns = 3;
    for &mode in &r.plan.storage.modes {
        for (dir, name) in [(Direction::Write, "write"), (Direction::Read, "read")] {
            for &bs in &r.plan.storage.block_sizes {
                if let Some(l) = cell_latency(r, target, bs, dir, mode) {
                    let labels = vec![mode.name().to_owned(), name.into(), block_size_label(bs)];
                    g.push(percentile_row(labels, &l));
                }
            }
        }
    }
    (!g.rows.is_empty()).then_some(g)
}

/// The random-I/O table of `target`: one row per operation and queue depth with
/// latency; `None` when none has.
pub fn random_latency_table(r: &RunResults, target: &str) -> Option<Grid> {
    let rp = r.plan.storage.random.as_ref()?;
    let mut header: Vec<String> = vec!["op".into(), "QD".into()];
    header.extend(PERCENTILE_HEADERS.map(String::from));
    let mut g = Grid::new(header);
    g.left_columns = 2;
    for op in [RandomOp::Read, RandomOp::Write] {
        for &qd in &rp.queue_depths {
            if let Some(l) = random_latency(r, target, op, qd) {
                let labels = vec![random_op_label(op).to_owned(), qd.to_string()];
                g.push(percentile_row(labels, &l));
            }
        }
    }
    (!g.rows.is_empty()).then_some(g)
}

/// Every target of the plan, storage targets first, then random-I/O targets not among
/// them.
fn all_targets(r: &RunResults) -> Vec<String> {
    let mut out: Vec<String> = target_labels(r).into_iter().map(String::from).collect();
    for t in r.plan.storage.random.iter().flat_map(|rp| &rp.targets) {
        if !out.contains(t) {
            out.push(t.clone());
        }
    }
    out
}

/// The latency section: a lead saying how calls were timed and what the percentiles
/// are, then per target its sequential and random-I/O tables. Empty when no pass of `r`
/// carries latency (documents before schema 1.14).
pub fn latency_blocks(r: &RunResults) -> Vec<Block> {
    let mut tables = Vec::new();
    for target in all_targets(r) {
        if let Some(g) = storage_latency_table(r, &target) {
            tables.push(Block::Heading(format!(
                "Latency per call, {target}: sequential write(2) / read(2)"
            )));
            tables.push(Block::Grid(g));
        }
        if let Some(g) = random_latency_table(r, &target) {
            let bs = r
                .plan
                .storage
                .random
                .as_ref()
                .map_or(String::new(), |rp| block_size_label(rp.block_size));
            tables.push(Block::Heading(format!(
                "Latency per call, {target}: random {bs} pread(2)/pwrite(2), O_DIRECT"
            )));
            tables.push(Block::Grid(g));
        }
    }
    if tables.is_empty() {
        return tables;
    }
    let mut out = vec![
        Block::Heading("Storage latency per call".into()),
        Block::Text(
            "completion latency of one call (the syscall alone, fio's clat), repetitions \
             pooled; percentiles by fio's method from its log-linear buckets (64 per power \
             of two: a bucket's middle is within 0.8 % of every value in it), held within the \
             calls' min and max, max exact. The sweep times one call in each group between \
             clock checks (timed: 1 in N), at a random place in the group; random I/O times \
             every call"
                .into(),
        ),
    ];
    out.extend(tables);
    out
}

#[cfg(test)]
pub(crate) mod tests;
