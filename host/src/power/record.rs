//! `benchboot power record`: reads a [`Meter`] until Ctrl-C or a duration, stamping
//! every sample on this host's monotonic clock (seconds since the recording's origin
//! `Instant`), and writes the trace atomically every [`SAVE_EVERY`] so a cut (a crash,
//! a pulled cable, a power cut) loses at most those seconds.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;
use benchboot_energy::{Clock, Sample, Trace, MAX_SAMPLES};

use super::{trace_file, Meter};

/// How often the trace file is written while recording: five seconds (500 samples at
/// 100 samples/s lost at most; each write is the whole file, so rarer for long traces:
/// [`save_interval`]).
pub const SAVE_EVERY: Duration = Duration::from_secs(5);

/// What to record and where.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The trace file, written whole or not at all.
    pub out: PathBuf,
    /// Stop after this long; `None`: at Ctrl-C only.
    pub duration: Option<Duration>,
    /// Where the meter sits, in words (`between supply and board`, `at the wall`).
    pub position: Option<String>,
    /// The least time between writes of the file ([`SAVE_EVERY`]; see [`save_interval`]).
    pub save_every: Duration,
}

/// Why the recording ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stopped {
    /// The duration passed.
    Duration,
    /// Ctrl-C (the stop flag was set).
    Interrupted,
    /// [`MAX_SAMPLES`] samples held.
    Full,
    /// The meter failed: its error, in words. What was read is saved.
    Meter(String),
}

/// What [`record`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub path: PathBuf,
    pub samples: usize,
    /// Samples left out: not after the one before them, or not finite numbers.
    pub dropped: usize,
    /// Times the file was written.
    pub saves: usize,
    pub stopped: Stopped,
}

/// The interval between saves for a trace of `samples` samples: `every`, and one
/// second more per 100,000 samples held (a write of the whole trace, about 6 MiB per
/// 100,000 samples, stays a small share of the time).
pub fn save_interval(every: Duration, samples: usize) -> Duration {
    every + Duration::from_secs((samples / 100_000) as u64)
}

/// Records `meter` into `rec.out` until `stop` is set (Ctrl-C), `rec.duration` has
/// passed since `origin`, [`MAX_SAMPLES`] are held, or the meter fails. Samples are as
/// the meter stamps them (seconds since `origin`); one not after the sample before it,
/// or holding a value that is not a finite number, is left out and counted. The file is
/// written at the start (an empty trace: the path is known to be writable), every
/// [`save_interval`], and at the end.
///
/// # Errors
/// The trace file cannot be written (the meter's own failure is a [`Stopped::Meter`]:
/// the trace up to it is kept).
pub fn record(
    meter: &mut dyn Meter,
    rec: &Recording,
    origin: Instant,
    stop: &AtomicBool,
) -> Result<Recorded> {
    // The meter's counter at its first reading (a plug knows it only once it answered).
    let mut counter_start = meter.counter_j();
    let mut trace = Trace {
        meter: meter.name(),
        clock: Clock::Host,
        emulated: meter.emulated(),
        resolution_w: meter.resolution_w(),
        period_s: meter.period_s(),
        position: rec.position.clone(),
        samples: Vec::new(),
        counter_j: None,
        console: Vec::new(),
    };
    let mut done = Recorded {
        path: rec.out.clone(),
        samples: 0,
        dropped: 0,
        saves: 0,
        stopped: Stopped::Interrupted,
    };
    save(&rec.out, &trace, &mut done)?;
    let mut saved_at = Instant::now();
    done.stopped = loop {
        if stop.load(Ordering::SeqCst) {
            break Stopped::Interrupted;
        }
        if rec.duration.is_some_and(|d| origin.elapsed() >= d) {
            break Stopped::Duration;
        }
        if trace.samples.len() >= MAX_SAMPLES {
            break Stopped::Full;
        }
        let read = match meter.read(origin) {
            Ok(read) => read,
            Err(e) => break Stopped::Meter(format!("{e:#}")),
        };
        done.dropped += keep(&mut trace.samples, read);
        if counter_start.is_none() {
            counter_start = meter.counter_j();
        }
        if saved_at.elapsed() >= save_interval(rec.save_every, trace.samples.len()) {
            save(&rec.out, &trace, &mut done)?;
            saved_at = Instant::now();
        }
    };
    if let (Some(a), Some(b)) = (counter_start, meter.counter_j()) {
        trace.counter_j = Some((a, b));
    }
    save(&rec.out, &trace, &mut done)?;
    done.samples = trace.samples.len();
    Ok(done)
}

/// Appends the samples of `read` that are finite and after the last one held, up to
/// [`MAX_SAMPLES`]; returns how many it left out for their time or values.
fn keep(samples: &mut Vec<Sample>, read: Vec<Sample>) -> usize {
    let mut dropped = 0;
    for s in read {
        if samples.len() >= MAX_SAMPLES {
            break;
        }
        let finite = [Some(s.t_s), Some(s.watts), s.volts, s.amps]
            .iter()
            .flatten()
            .all(|v| v.is_finite());
        let after = samples.last().is_none_or(|l| s.t_s > l.t_s);
        if finite && after {
            samples.push(s);
        } else {
            dropped += 1;
        }
    }
    dropped
}

fn save(path: &Path, trace: &Trace, done: &mut Recorded) -> Result<()> {
    trace_file::write(path, trace)?;
    done.saves += 1;
    Ok(())
}

/// One line for a person: what was recorded, where, and why it stopped.
pub fn summary(done: &Recorded) -> String {
    let why = match &done.stopped {
        Stopped::Duration => "the duration passed".to_owned(),
        Stopped::Interrupted => "stopped (Ctrl-C)".to_owned(),
        Stopped::Full => format!("{MAX_SAMPLES} samples, the most a trace holds"),
        Stopped::Meter(e) => format!("the meter failed: {e}"),
    };
    let dropped = if done.dropped > 0 {
        format!(
            "; {} left out (not after the sample before, or not a number)",
            done.dropped
        )
    } else {
        String::new()
    };
    format!(
        "recorded {} samples into {} ({why}){dropped}",
        done.samples,
        done.path.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A meter that gives `per_read` samples 10 ms apart per read and fails after
    /// `reads` reads; the stop flag is set after `stop_after` reads.
    struct Fake<'a> {
        n: usize,
        reads: usize,
        stop_after: usize,
        stop: &'a AtomicBool,
        counter: f64,
        seen: &'a AtomicUsize,
        /// The trace file, and how many samples it held at each read.
        file: Option<(PathBuf, Vec<usize>)>,
    }

    impl Meter for Fake<'_> {
        fn name(&self) -> String {
            "fake meter".into()
        }
        fn resolution_w(&self) -> f64 {
            0.01
        }
        fn period_s(&self) -> f64 {
            0.01
        }
        fn read(&mut self, _origin: Instant) -> Result<Vec<Sample>> {
            self.seen.fetch_add(1, Ordering::SeqCst);
            if let Some((path, on_disk)) = &mut self.file {
                on_disk.push(trace_file::read(path).unwrap().samples.len());
            }
            if self.n == self.reads {
                anyhow::bail!("the cable is gone");
            }
            self.n += 1;
            if self.n == self.stop_after {
                self.stop.store(true, Ordering::SeqCst);
            }
            let t = self.n as f64 * 0.02;
            // The second sample of each read repeats the first's time: left out.
            Ok(vec![
                Sample::watts(t, 2.0),
                Sample::watts(t, 9.0),
                Sample::watts(t + 0.01, 3.0),
            ])
        }
        fn counter_j(&mut self) -> Option<f64> {
            self.counter += 10.0;
            Some(self.counter)
        }
    }

    fn rec(dir: &Path) -> Recording {
        Recording {
            out: dir.join("t.json"),
            duration: None,
            position: Some("at the wall".into()),
            save_every: SAVE_EVERY,
        }
    }

    #[test]
    fn ctrl_c_ends_it_and_the_file_holds_every_sample() {
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let seen = AtomicUsize::new(0);
        let mut m = Fake {
            n: 0,
            reads: 100,
            stop_after: 4,
            stop: &stop,
            counter: 0.0,
            seen: &seen,
            file: None,
        };
        let r = rec(dir.path());
        let done = record(&mut m, &r, Instant::now(), &stop).unwrap();
        assert_eq!(done.stopped, Stopped::Interrupted);
        assert_eq!((done.samples, done.dropped, done.saves), (8, 4, 2));
        let t = trace_file::read(&r.out).unwrap();
        assert_eq!(t.samples.len(), 8);
        assert_eq!(t.samples[0], Sample::watts(0.02, 2.0));
        assert_eq!(t.samples[1], Sample::watts(0.03, 3.0));
        assert_eq!(t.meter, "fake meter");
        assert_eq!(t.clock, Clock::Host);
        assert_eq!(t.position.as_deref(), Some("at the wall"));
        assert_eq!(t.counter_j, Some((10.0, 20.0)));
        assert_eq!(
            summary(&done),
            format!(
                "recorded 8 samples into {} (stopped (Ctrl-C)); 4 left out (not after the \
                 sample before, or not a number)",
                r.out.display()
            )
        );
    }

    #[test]
    fn a_failing_meter_keeps_what_was_read() {
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let seen = AtomicUsize::new(0);
        let mut m = Fake {
            n: 0,
            reads: 3,
            stop_after: 0,
            stop: &stop,
            counter: 0.0,
            seen: &seen,
            file: None,
        };
        let r = rec(dir.path());
        let done = record(&mut m, &r, Instant::now(), &stop).unwrap();
        assert_eq!(done.stopped, Stopped::Meter("the cable is gone".into()));
        assert_eq!(trace_file::read(&r.out).unwrap().samples.len(), 6);
    }

    #[test]
    fn the_duration_ends_it() {
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let seen = AtomicUsize::new(0);
        let mut m = Fake {
            n: 0,
            reads: 1000,
            stop_after: 0,
            stop: &stop,
            counter: 0.0,
            seen: &seen,
            file: None,
        };
        let mut r = rec(dir.path());
        r.duration = Some(Duration::ZERO);
        let done = record(&mut m, &r, Instant::now(), &stop).unwrap();
        assert_eq!(done.stopped, Stopped::Duration);
        assert_eq!(seen.load(Ordering::SeqCst), 0);
        assert_eq!(trace_file::read(&r.out).unwrap().samples, []);
    }

    #[test]
    fn the_file_on_disk_keeps_up_while_recording() {
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let seen = AtomicUsize::new(0);
        let mut r = rec(dir.path());
        r.save_every = Duration::ZERO;
        let file = Some((r.out.clone(), Vec::new()));
        let mut m = Fake {
            n: 0,
            reads: 100,
            stop_after: 4,
            stop: &stop,
            counter: 0.0,
            seen: &seen,
            file,
        };
        let done = record(&mut m, &r, Instant::now(), &stop).unwrap();
        // A cut at any read loses only that read's samples.
        assert_eq!(m.file.unwrap().1, [0, 2, 4, 6]);
        assert_eq!((done.samples, done.saves), (8, 6));
    }

    #[test]
    fn saves_come_less_often_as_the_trace_grows() {
        assert_eq!(save_interval(SAVE_EVERY, 0), Duration::from_secs(5));
        assert_eq!(
            save_interval(SAVE_EVERY, 1_000_000),
            Duration::from_secs(15)
        );
    }
}
