//! The emulated meter of `cargo xtask qemu --meter emulated`: a power "reading" every
//! 10 ms that follows the QEMU process's CPU time, so the board's own sync patterns,
//! idle phases and busy steps really appear in the trace.
//!
//! The model is `IDLE_W + W_PER_CORE × (CPU seconds QEMU's vCPU threads used / seconds
//! elapsed)`: one busy emulated core keeps about one host core busy under TCG, an idle
//! one (WFI) sleeps. Only the vCPU threads (named `CPU <n>/TCG` by QEMU) count: its I/O
//! and main-loop threads work for the host side of the emulated devices (the console,
//! the network stand-ins), which no board's CPU does, and blurred the board's idle slots
//! by half a watt in the first runs. The figures are a model of
//! QEMU, EMULATED, never a board's; what they prove is the path: the board's marks, the
//! alignment (the sync patterns found in a trace on the host's clock), the integration
//! and the rendering.
//!
//! CPU time is read from `/proc/<pid>/task/<tid>/schedstat` (first field: ns on a CPU,
//! Documentation/scheduler/sched-stats.rst), per vCPU thread (`comm` starting `CPU `;
//! every thread when none is named so), each thread's last value kept when it ends, so
//! the sum never runs backwards. The readings are then put on a regular [`PERIOD`] grid
//! ([`regular`]: the counter interpolated between them), as a real meter samples on its
//! own clock: a reading the host's scheduler delayed came 1 ms after the one before it
//! with 15 ms of CPU time in it, a 37 W "sample" that the integration, weighting each
//! sample by the period, counted ten times over (one step 0.26 J above the model in a
//! local run of `qemu_virt`, 2026-12-07).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use benchboot_energy::{Clock, Sample, Trace};

/// The model's idle power, W (a small board's idle, of the order of a Pi 3's).
pub const IDLE_W: f64 = 1.5;
/// The model's power per busy host core of QEMU, W.
pub const W_PER_CORE: f64 = 1.0;
/// Time between readings.
pub const PERIOD: Duration = Duration::from_millis(10);
/// Most readings kept: 4 hours at 100 per second (the QEMU runs' timeouts are far
/// shorter).
const MAX_READINGS: usize = 4 * 3600 * 100;

/// The QEMU process's CPU time at one moment: `(s since the run's origin, CPU ns)`.
pub type CpuReading = (f64, u64);

/// A running emulated meter; [`EmulatedMeter::finish`] stops it.
pub struct EmulatedMeter {
    pid: u32,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Vec<CpuReading>>>,
    /// Console lines with a board time, as they arrived: `(s since origin, board ns)`.
    pub console: Arc<Mutex<Vec<(f64, u64)>>>,
}

/// What an emulated meter recorded.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The raw CPU readings (the model's truth: [`model_joules`]).
    pub cpu: Vec<CpuReading>,
    /// The trace the readings give, with the console's stamps.
    pub trace: Trace,
}

impl EmulatedMeter {
    /// Starts reading process `pid` every [`PERIOD`], stamped as seconds since `origin`.
    pub fn start(pid: u32, origin: Instant) -> EmulatedMeter {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            let mut per_thread: BTreeMap<String, u64> = BTreeMap::new();
            let mut out = Vec::new();
            let mut next = Instant::now();
            while !flag.load(Ordering::Relaxed) && out.len() < MAX_READINGS {
                if !read_threads(pid, &mut per_thread) {
                    break; // QEMU is gone
                }
                let t = origin.elapsed().as_secs_f64();
                out.push((t, per_thread.values().sum()));
                next += PERIOD;
                std::thread::sleep(next.saturating_duration_since(Instant::now()));
            }
            out
        });
        EmulatedMeter {
            pid,
            stop,
            handle: Some(handle),
            console: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Stops the meter and saves its trace beside `results` as `<stem>.power.json`
    /// (a failure to save is said, not fatal: the run's results stand).
    pub fn finish_beside(self, results: &Path) -> (Recorded, PathBuf) {
        let recorded = self.finish();
        let path = results.with_extension("power.json");
        match serde_json::to_vec(&recorded.trace)
            .map_err(anyhow::Error::from)
            .and_then(|t| crate::write_atomically(&path, &t))
        {
            Ok(()) => eprintln!(
                "qemu: EMULATED power trace ({} readings, {} console marks) saved to {}",
                recorded.trace.samples.len(),
                recorded.trace.console.len(),
                path.display()
            ),
            Err(e) => eprintln!("qemu: the emulated trace was not saved: {e:#}"),
        }
        (recorded, path)
    }

    /// Stops the meter and returns its readings, on the regular grid, as a trace.
    pub fn finish(mut self) -> Recorded {
        self.stop.store(true, Ordering::Relaxed);
        let raw = self
            .handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let cpu = regular(&raw, PERIOD.as_secs_f64());
        let console = self.console.lock().map(|c| c.clone()).unwrap_or_default();
        let trace = model_trace(&cpu, self.pid, console);
        Recorded { cpu, trace }
    }
}

/// When `line` is one of PID 1's energy mark lines: its board time, stamped with its
/// arrival (seconds since `origin`) into `stamps` when a meter runs. True for a mark line.
pub fn stamp(stamps: Option<&Mutex<Vec<(f64, u64)>>>, line: &str, origin: Instant) -> bool {
    let Some(board_ns) = benchboot_energy::marks::parse(line).map(|m| m.t_ns()) else {
        return false;
    };
    if let Some(Ok(mut s)) = stamps.map(Mutex::lock) {
        s.push((origin.elapsed().as_secs_f64(), board_ns));
    }
    true
}

/// Adds every vCPU thread's CPU ns now to `per_thread` (every thread's when the process
/// names none `CPU <n>/...`; threads that ended keep their last value). False when the
/// process is gone.
fn read_threads(pid: u32, per_thread: &mut BTreeMap<String, u64>) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    let mut all = Vec::new();
    let mut vcpus = Vec::new();
    for task in tasks.flatten() {
        let Some(ns) = schedstat_ns(&task.path().join("schedstat")) else {
            continue;
        };
        let tid = task.file_name().to_string_lossy().into_owned();
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.starts_with("CPU ") {
            vcpus.push((tid.clone(), ns));
        }
        all.push((tid, ns));
    }
    per_thread.extend(if vcpus.is_empty() { all } else { vcpus });
    true
}

/// The first field of a schedstat file: ns spent on a CPU.
fn schedstat_ns(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path)
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The CPU counter of `cpu` at `t_s`, interpolated between the readings around it;
/// `None` outside them.
fn counter_at(cpu: &[CpuReading], t_s: f64) -> Option<f64> {
    let i = cpu.partition_point(|r| r.0 < t_s);
    if i == 0 {
        return cpu.first().filter(|r| r.0 == t_s).map(|r| r.1 as f64);
    }
    let (lo, hi) = (cpu.get(i - 1)?, cpu.get(i)?);
    let f = (t_s - lo.0) / (hi.0 - lo.0);
    Some(lo.1 as f64 + f * (hi.1 as f64 - lo.1 as f64))
}

/// `cpu` on a grid of `period_s` from its first reading to its last, the counter
/// interpolated between the readings (never backwards: theirs never does).
pub fn regular(cpu: &[CpuReading], period_s: f64) -> Vec<CpuReading> {
    let (Some(first), Some(last)) = (cpu.first(), cpu.last()) else {
        return Vec::new();
    };
    let n = ((last.0 - first.0) / period_s).floor().max(0.0) as usize;
    (0..=n)
        .filter_map(|k| {
            let t = first.0 + k as f64 * period_s;
            counter_at(cpu, t).map(|c| (t, c.round() as u64))
        })
        .collect()
}

/// The model's power between two readings, W.
fn watts(a: CpuReading, b: CpuReading) -> Option<f64> {
    let dt = b.0 - a.0;
    (dt > 0.0).then(|| IDLE_W + W_PER_CORE * (b.1.saturating_sub(a.1) as f64 / 1e9) / dt)
}

/// The trace of `cpu`: one sample per interval between readings, at its middle, the
/// model's mean power over it.
pub fn model_trace(cpu: &[CpuReading], pid: u32, console: Vec<(f64, u64)>) -> Trace {
    let samples = cpu
        .windows(2)
        .filter_map(|w| watts(w[0], w[1]).map(|p| Sample::watts((w[0].0 + w[1].0) / 2.0, p)))
        .collect();
    Trace {
        meter: format!("emulated (QEMU pid {pid}: {IDLE_W} W + {W_PER_CORE} W per busy host core)"),
        clock: Clock::Host,
        emulated: true,
        // The CPU counter's ns over a 10 ms interval: far below a real meter's step.
        resolution_w: 0.001,
        period_s: PERIOD.as_secs_f64(),
        position: Some("a model of QEMU's CPU time, no meter".into()),
        samples,
        counter_j: None,
        console,
    }
}

/// The model's exact energy from `a_s` to `b_s` (seconds since the origin), J: idle
/// power times the length plus [`W_PER_CORE`] times the CPU seconds QEMU used (the
/// counter interpolated at both ends). `None` outside the readings.
pub fn model_joules(cpu: &[CpuReading], a_s: f64, b_s: f64) -> Option<f64> {
    let (a, b) = (counter_at(cpu, a_s)?, counter_at(cpu, b_s)?);
    Some(IDLE_W * (b_s - a_s) + W_PER_CORE * (b - a) / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Half a core for a second, then idle: 2 W then 1.5 W; the trace's samples sit
    /// mid-interval and the exact energy matches the model's arithmetic.
    #[test]
    fn the_model_follows_cpu_time() {
        let cpu = vec![(0.0, 0), (1.0, 500_000_000), (2.0, 500_000_000)];
        let t = model_trace(&cpu, 7, Vec::new());
        let got: Vec<(f64, f64)> = t.samples.iter().map(|s| (s.t_s, s.watts)).collect();
        assert_eq!(got, vec![(0.5, 2.0), (1.5, 1.5)]);
        assert!(t.emulated && t.meter.contains("pid 7"));
        let j = model_joules(&cpu, 0.5, 1.5).unwrap();
        assert!((j - (1.5 + 0.25)).abs() < 1e-9, "{j}");
        assert_eq!(model_joules(&cpu, -1.0, 1.0), None);
    }

    /// A reading the scheduler delayed (1 ms after the one before, 15 ms of CPU in it)
    /// is a 15.5 W spike among the raw readings' intervals; on the 10 ms grid the same
    /// CPU time is spread over its period (at most 1.5 W + the cores' share), the grid is
    /// evenly spaced, and the energy from the first to the last grid point is the same.
    #[test]
    fn a_late_reading_is_no_spike_on_the_grid() {
        let ms = |t: f64| t / 1e3;
        let raw = vec![
            (ms(0.0), 0),
            (ms(10.0), 10_000_000),
            (ms(29.0), 20_000_000),
            (ms(30.0), 34_000_000),
            (ms(40.0), 44_000_000),
            (ms(50.0), 54_000_000),
        ];
        let spikes = |cpu: &[CpuReading]| {
            model_trace(cpu, 1, Vec::new())
                .samples
                .iter()
                .map(|s| s.watts)
                .fold(0.0f64, f64::max)
        };
        assert!((spikes(&raw) - 15.5).abs() < 1e-9, "{}", spikes(&raw));
        let grid = regular(&raw, 0.010);
        let t: Vec<f64> = grid.iter().map(|r| (r.0 * 1e3).round()).collect();
        assert_eq!(t, [0.0, 10.0, 20.0, 30.0, 40.0, 50.0]);
        // 20 ms: 10 M + 10/19 of the next 10 M; 30 ms: the late reading's 34 M.
        assert_eq!(grid[2].1, 15_263_158);
        assert_eq!(grid[3].1, 34_000_000);
        assert!(spikes(&grid) < 1.5 + 2.0, "{}", spikes(&grid));
        let (a, b) = (
            model_joules(&raw, 0.0, 0.05),
            model_joules(&grid, 0.0, 0.05),
        );
        assert!((a.unwrap() - b.unwrap()).abs() < 1e-9, "{a:?} {b:?}");
        assert_eq!(regular(&[], 0.01), []);
        assert_eq!(regular(&raw[..1], 0.01), raw[..1]);
    }

    /// A mark line is stamped (when a meter runs) and said to be one; other lines not.
    #[test]
    fn mark_lines_are_stamped_on_arrival() {
        let stamps = Mutex::new(Vec::new());
        let origin = Instant::now();
        assert!(stamp(
            Some(&stamps),
            "benchboot: mark begin memory t_ns=42",
            origin
        ));
        assert!(!stamp(Some(&stamps), "benchboot: saved storage=1", origin));
        assert!(stamp(None, "benchboot: idle radios-off end t_ns=7", origin));
        let got = stamps.into_inner().unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].1, 42);
    }

    /// This process's own threads are read, and the sum grows as it works.
    #[test]
    fn reads_a_live_process() {
        let mut per = BTreeMap::new();
        assert!(read_threads(std::process::id(), &mut per));
        let before: u64 = per.values().sum();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        std::hint::black_box(x);
        assert!(read_threads(std::process::id(), &mut per));
        assert!(per.values().sum::<u64>() > before);
        assert!(!read_threads(u32::MAX, &mut per));
    }
}
