//! The seeds' tables from one results document: rows = block size, columns =
//! filesystem, cells = MiB/s (1 MiB = 1,048,576 bytes), one table per direction and
//! mode; device reads, IOPS with the A1 verdict, network; memory ([`memory`]) and the
//! clock checks ([`clock`]). Tables are [`Grid`]s, so
//! the same content prints as terminal tables or Markdown ([`crate::report`]); and the
//! whole report of a run as one [`Doc`] ([`document`]): context, warnings, every table.

use benchboot_plan::Mode;
use benchboot_results::figures::{self, Figure};
use benchboot_results::health::conditions_during;
use benchboot_results::{
    a1_verdict, A1Outcome, DeviceReadKind, Direction, HealthScope, RandomOp, RunResults,
    StepHealth, Summary, A1_EMULATED,
};

use crate::chart::{FigureSection, PlotFigure};
use crate::context::{self, context, context_grid, warnings};
use crate::doc::{Block, Doc, Grid};
use crate::power::energy::Energy;
use crate::units::{block_size_label, duration_label_ms, size_label};

pub mod clock;
pub mod health;
pub mod latency;
pub mod memory;
pub mod network;
pub mod not_run;
pub mod wifi;
pub use network::*;

/// The MiB/s of every repetition of one cell (by the mode the plan asked for), and
/// whether any of them ran in another mode (an O_DIRECT fallback).
pub fn cell_values(
    r: &RunResults,
    target: &str,
    block_size: u64,
    dir: Direction,
    mode: Mode,
) -> (Vec<f64>, bool) {
    let fs: Vec<Figure> = r
        .storage
        .iter()
        .map(figures::storage)
        .filter(|f| {
            let c = &f.context;
            c.target == target
                && c.block_size == block_size
                && c.direction == figures::direction_name(dir)
                && c.mode == mode.name()
        })
        .collect();
    let fell_back = fs.iter().any(|f| f.context.mode_ran != f.context.mode);
    (fs.iter().map(|f| f.value).collect(), fell_back)
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
                    .map(|x| figures::random(x).value)
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
        let claim = card_claim(r, target);
        match a1_verdict(r, target) {
            Some(v) => {
                let outcome = v.outcome(r.emulated);
                out.push_str(&format!(
                    "A1 ({target}): {}{} — {}, 4 KiB at QD1{}\n",
                    outcome.word(),
                    if outcome == A1Outcome::Emulated {
                        format!(", {A1_EMULATED}")
                    } else {
                        String::new()
                    },
                    v.figures_text(),
                    match (&claim, outcome) {
                        (Some(c), A1Outcome::Fail) => {
                            format!("; the card claims {c} (SSR), measures below A1")
                        }
                        (Some(c), _) => format!("; the card claims {c} (SSR)"),
                        (None, _) => String::new(),
                    }
                ))
            }
            None => out.push_str(&format!(
                "A1 ({target}): no verdict, a deciding figure is missing\n"
            )),
        }
    }
    out
}

/// The application performance class (A1/A2) the card under `target` claims in its
/// SD Status register, when the target is a partition of an SD card whose registers
/// PID 1 read.
fn card_claim(r: &RunResults, target: &str) -> Option<String> {
    let dev = r.plan.storage.targets.iter().find(|t| t.label == target)?;
    let kernel = dev.device.strip_prefix("/dev/")?;
    r.devices
        .iter()
        .filter(|d| kernel.starts_with(&d.name))
        .find_map(|d| d.card.as_ref()?.app_class())
        .map(|c| format!("{c:?}"))
}

/// MiB/s of every `kind` read of `device`, in the order measured.
pub fn device_read_values(r: &RunResults, device: &str, kind: DeviceReadKind) -> Vec<f64> {
    r.device_reads
        .iter()
        .map(figures::device_read)
        .filter(|f| {
            f.context.target == device
                && f.context.direction == figures::device_read_kind_name(kind)
        })
        .map(|f| f.value)
        .collect()
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
        // The card's identity is in the context table; what is wrong with it here.
        if let Some(card) = &d.card {
            for w in card.warnings(d.size_bytes) {
                out.push(format!("card {}: warning: {w}", d.name));
            }
        }
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

/// Whether `r` has a storage section: a target in its plan or a storage figure (a
/// `benchboot memory` document has neither).
pub fn has_storage(r: &RunResults) -> bool {
    !r.plan.storage.targets.is_empty()
        || !r.storage.is_empty()
        || !r.device_reads.is_empty()
        || !r.random.is_empty()
}

/// The whole report of `r`: title, the headline ([`crate::headline`]: EMULATED first
/// for a QEMU run), PLAN REFUSED and LINK BELOW ITS
/// RATING alerts, context, warnings, memory (the step PID 1 runs first), the clock
/// checks, storage tables, device reads, IOPS and A1, latency per call ([`latency`]:
/// schema 1.14), network, WiFi, verification,
/// disks and census (the energy section: [`document_full`]).
pub fn document(r: &RunResults) -> Doc {
    document_with_figures(r, &[])
}

/// [`document`] with `figures` placed as [`Block::Figure`]s after the tables of their
/// section (memory, storage, network and WiFi), in their order: the HTML page's content.
pub fn document_with_figures(r: &RunResults, figures: &[PlotFigure]) -> Doc {
    document_full(r, None, figures)
}

/// [`document_with_figures`] with the energy section of `energy` (a power trace of the
/// run: [`crate::power::energy`]) after the network and WiFi sections, its figure after it.
pub fn document_full(r: &RunResults, energy: Option<&Energy>, figures: &[PlotFigure]) -> Doc {
    let of = |section: FigureSection| {
        figures
            .iter()
            .filter(move |f| f.section == section)
            .map(|f| Block::Figure(Box::new(f.clone())))
    };
    let mut d = Doc::default();
    d.push(Block::Title(format!(
        "benchboot report: run {} on {}",
        r.run_id, r.board
    )));
    // The headline first: the verdict in words (EMULATED for a QEMU run), then the
    // figures a person reads in ten seconds.
    d.push(crate::headline::block(r, energy));
    if let Some(e) = &r.plan_error {
        d.push(Block::Alert(format!(
            "PLAN REFUSED: the card's plan file was refused and nothing was measured: {e}. \
             Fix it, check it with `benchboot plan check FILE --board {}`, and write it \
             with `benchboot plan write --card CARD FILE`",
            r.board
        )));
    }
    for a in context::link_alerts(&r.network) {
        d.push(Block::Alert(a));
    }
    if r.plan_error.is_none() {
        d.push(Block::Text(format!("plan: {}", r.plan.source.describe())));
        let not_run = not_run::not_run_lines(r);
        if !not_run.is_empty() {
            d.push(Block::List(not_run));
        }
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
    if !r.modalias.loaded.is_empty() {
        d.push(Block::Heading("Drivers loaded by modalias".into()));
        d.push(Block::List(
            r.modalias.loaded.iter().map(|l| l.line()).collect(),
        ));
    }
    d.extend(memory::memory_blocks(r));
    d.extend(of(FigureSection::Memory));
    d.extend(clock::clock_blocks(r));
    if has_storage(r) {
        d.extend(storage_blocks(r));
        d.extend(latency::latency_blocks(r));
    }
    d.extend(crate::whole_card::report_blocks(r));
    d.extend(of(FigureSection::Storage));
    if has_network(&r.network) {
        d.extend(network_blocks(&r.network, &r.health, r.emulated));
    }
    d.extend(wifi::blocks::wifi_blocks(&r.network, r.emulated));
    d.extend(of(FigureSection::Network));
    d.extend(health::health_blocks(r));
    d.extend(of(FigureSection::Health));
    if let Some(e) = energy {
        d.extend(crate::power::energy::blocks(e));
        d.extend(of(FigureSection::Energy));
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

/// The whole report as terminal text: context, warnings, every table ([`document`]), at
/// the tables' natural width.
pub fn report(r: &RunResults) -> String {
    document(r).text()
}

/// [`report`] fitted to standard output ([`crate::doc::terminal_width`]: the terminal,
/// else `COLUMNS`, else 100 columns), as `fetch`, `storage` and `memory` print it.
pub fn report_fitted(r: &RunResults) -> String {
    document(r).text_width(crate::doc::terminal_width())
}

#[cfg(test)]
mod tests;
