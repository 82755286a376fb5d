//! Wall time per phase of a run: [`Recorder`] closes one phase at each
//! [`Recorder::phase`] call, and its [`Report`] is the closing block of `cargo xtask qemu`
//! and `target/qemu/<board>/timing.json` (written through a temporary file and a rename,
//! so a reader never sees half of it).
//!
//! Phases are consecutive: each runs from the end of the one before (or the recorder's
//! start) to its mark, so the phases add up to the total. Times are host wall time
//! ([`Instant`], monotonic), in seconds.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// The `format` of `timing.json`: bumped when a field changes meaning.
pub const FORMAT: &str = "benchboot-timing 1";

/// At most this many phases (and parts of one phase) are recorded: a console that
/// names an area per line cannot grow the report without bound.
pub const MAX_PHASES: usize = 64;

/// One phase: its name and wall time, with the parts it was measured in (the image
/// build's firmware, packages, render...; the plan's areas), if any.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    pub name: String,
    /// Wall time, seconds.
    pub secs: f64,
    /// Consecutive parts of this phase, each with its own wall time, seconds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Phase>,
}

impl Phase {
    /// A phase of `secs` seconds with no parts.
    pub fn new(name: impl Into<String>, secs: f64) -> Phase {
        Phase {
            name: name.into(),
            secs,
            parts: Vec::new(),
        }
    }
}

/// Records consecutive phases: [`Recorder::phase`] closes the phase that ran since the
/// previous call (or since the recorder started).
#[derive(Debug, Clone)]
pub struct Recorder {
    started: Instant,
    last: Instant,
    /// Time spent before the recorder started (e.g. cargo compiling xtask), outside
    /// `started..`: counted in the total.
    before: Vec<Phase>,
    phases: Vec<Phase>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::starting_at(Instant::now())
    }
}

impl Recorder {
    /// A recorder whose first phase starts at `t0`.
    pub fn starting_at(t0: Instant) -> Recorder {
        Recorder {
            started: t0,
            last: t0,
            before: Vec::new(),
            phases: Vec::new(),
        }
    }

    /// Closes the phase that ran from the previous mark until now; returns its seconds.
    pub fn phase(&mut self, name: impl Into<String>) -> f64 {
        self.phase_at(name, Instant::now())
    }

    /// Closes the phase that ran from the previous mark until `at` (an `at` before the
    /// previous mark makes a 0 s phase and moves nothing back); returns its seconds.
    pub fn phase_at(&mut self, name: impl Into<String>, at: Instant) -> f64 {
        let secs = at.saturating_duration_since(self.last).as_secs_f64();
        self.last = self.last.max(at);
        if self.phases.len() < MAX_PHASES {
            self.phases.push(Phase::new(name, secs));
        } else if let Some(p) = self.phases.last_mut() {
            // Past the cap the time still counts, in the last phase kept.
            p.secs += secs;
        }
        secs
    }

    /// Gives the phase closed last the parts it was measured in (at most
    /// [`MAX_PHASES`] kept).
    pub fn parts(&mut self, mut parts: Vec<Phase>) {
        parts.truncate(MAX_PHASES);
        if let Some(p) = self.phases.last_mut() {
            p.parts = parts;
        }
    }

    /// Time spent before the recorder started (listed first, counted in the total).
    pub fn before_start(&mut self, name: impl Into<String>, secs: f64) {
        if self.before.len() < MAX_PHASES {
            self.before.push(Phase::new(name, secs.max(0.0)));
        }
    }

    /// The phases so far, the total from the earliest time known to the last mark.
    pub fn report(&self, board: &str) -> Report {
        let phases: Vec<Phase> = self.before.iter().chain(&self.phases).cloned().collect();
        let before: f64 = self.before.iter().map(|p| p.secs).sum();
        Report {
            format: FORMAT.to_owned(),
            board: board.to_owned(),
            phases,
            total_secs: before + self.last.duration_since(self.started).as_secs_f64(),
        }
    }

    /// The parts recorded so far (for a phase of an outer recorder: see
    /// [`Recorder::phase_with`]).
    pub fn into_parts(self) -> Vec<Phase> {
        self.before.into_iter().chain(self.phases).collect()
    }

    /// `firmware 82.1 s, packages 0.4 s, ...`: the phases on one line.
    pub fn summary(&self) -> String {
        let parts: Vec<String> = self
            .phases
            .iter()
            .map(|p| format!("{} {:.1} s", p.name, p.secs))
            .collect();
        parts.join(", ")
    }
}

/// What `timing.json` holds: every phase, in order, and their total.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// [`FORMAT`].
    pub format: String,
    pub board: String,
    pub phases: Vec<Phase>,
    /// Seconds from the earliest phase's start to the last one's end.
    pub total_secs: f64,
}

impl Report {
    /// The closing block: one line a phase (its parts indented below it), seconds with
    /// one decimal and the share of the total, then the total in minutes and seconds.
    pub fn render(&self) -> String {
        let width = self
            .phases
            .iter()
            .flat_map(|p| {
                std::iter::once(p.name.len()).chain(p.parts.iter().map(|q| q.name.len() + 2))
            })
            .max()
            .unwrap_or(0);
        let share = |s: f64| {
            if self.total_secs > 0.0 {
                100.0 * s / self.total_secs
            } else {
                0.0
            }
        };
        let mut out = format!("time: where the {} run's wall time went\n", self.board);
        for p in &self.phases {
            out += &format!(
                "time:   {:<width$}  {:>7.1} s  {:>3.0} %\n",
                p.name,
                p.secs,
                share(p.secs)
            );
            for q in &p.parts {
                out += &format!(
                    "time:     {:<w$}  {:>7.1} s\n",
                    q.name,
                    q.secs,
                    w = width - 2
                );
            }
        }
        let total = Duration::from_secs_f64(self.total_secs.max(0.0)).as_secs();
        out += &format!(
            "time:   {:<width$}  {:>7.1} s  ({} min {:02} s)",
            "total",
            self.total_secs,
            total / 60,
            total % 60
        );
        out
    }

    /// Writes the report as pretty JSON to `path` (temporary file, then rename).
    ///
    /// # Errors
    /// The folder cannot be created or the file written.
    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        crate::write_atomically(path, serde_json::to_string_pretty(self)?.as_bytes())
    }
}

/// The parts of PID 1's plan, from its start line at `start` to its ready line at
/// `ready`: the time before the first area's first step (`setup`), then each area from
/// its first step's begin mark to the next area's (the last one to `ready`). `areas`:
/// (area, when its first `mark begin` line came), in console order. Each area's time
/// includes what PID 1 does between its steps (saving results, clock readings).
pub fn plan_parts(start: Instant, areas: &[(String, Instant)], ready: Instant) -> Vec<Phase> {
    if areas.is_empty() {
        let secs = ready.saturating_duration_since(start).as_secs_f64();
        return vec![Phase::new("the plan (no step marks on the console)", secs)];
    }
    let mut parts = Vec::new();
    let mut last = ("PID 1 before the first step", start);
    for (area, at) in areas.iter().take(MAX_PHASES) {
        parts.push(Phase::new(
            last.0,
            at.saturating_duration_since(last.1).as_secs_f64(),
        ));
        last = (area.as_str(), (*at).max(last.1));
    }
    parts.push(Phase::new(
        last.0,
        ready.saturating_duration_since(last.1).as_secs_f64(),
    ));
    parts
}

/// How long cargo ran before this process started (`cargo xtask` is `cargo run`:
/// compiling xtask when it changed, then starting it), from the start times of this
/// process and its parent in `/proc/<pid>/stat` (field 22, `starttime`, in clock ticks
/// since boot: proc(5)). `None` off Linux, or when the parent is not cargo.
pub fn cargo_lead() -> Option<f64> {
    let own = std::fs::read_to_string("/proc/self/stat").ok()?;
    let (ppid, own_start) = stat_fields(&own)?;
    let comm = std::fs::read_to_string(format!("/proc/{ppid}/comm")).ok()?;
    if comm.trim() != "cargo" {
        return None;
    }
    let parent = std::fs::read_to_string(format!("/proc/{ppid}/stat")).ok()?;
    let (_, parent_start) = stat_fields(&parent)?;
    Some(own_start.checked_sub(parent_start)? as f64 / USER_HZ)
}

/// The kernel's clock ticks a second in `/proc` times (`USER_HZ`, which
/// `sysconf(_SC_CLK_TCK)` returns): 100 on every Linux architecture this runs on
/// (the kernel's include/asm-generic/param.h; only alpha and ia64 differ, 1024).
const USER_HZ: f64 = 100.0;

/// `(ppid, starttime)` from one `/proc/<pid>/stat` line: fields 4 and 22 (proc(5)),
/// counted after the `)` that closes the command name (which may hold spaces or
/// parentheses itself).
pub fn stat_fields(stat: &str) -> Option<(u32, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    // After the name: field 3 (state) is the first, so field N is at N - 3.
    let fields: Vec<&str> = rest.split_whitespace().take(20).collect();
    let ppid = fields.get(4 - 3)?.parse().ok()?;
    let start = fields.get(22 - 3)?.parse().ok()?;
    Some((ppid, start))
}

#[cfg(test)]
mod tests;
