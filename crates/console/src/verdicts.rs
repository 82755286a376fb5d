//! The verdicts of a run: what passed, failed or was skipped, each one line
//! (`verdict=<id> result=pass|fail|skip [why=<text>]`) printed after the figures.
//!
//! All of them come from the finished results document ([`all`]), so they are printed
//! once, in one block a second LAVA monitor reads, and the host derives the same list.

use benchboot_results::{a1_verdict, A1Outcome, Event, RunResults, Severity, A1_EMULATED};

/// pass, fail or skip (LAVA's result values; LAVA's fourth, `unknown`, is not used).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    Fail,
    Skip,
}

impl Outcome {
    /// `pass`, `fail`, `skip`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Skip => "skip",
        }
    }

    /// The outcome named `s`, if any.
    pub fn from_name(s: &str) -> Option<Outcome> {
        [Outcome::Pass, Outcome::Fail, Outcome::Skip]
            .into_iter()
            .find(|o| o.name() == s)
    }
}

/// One verdict: `id` (dotted), its outcome and, for a fail or a skip, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub id: String,
    pub outcome: Outcome,
    pub why: Option<String>,
}

fn verdict(id: impl Into<String>, outcome: Outcome, why: Option<String>) -> Verdict {
    Verdict {
        id: id.into(),
        outcome,
        why,
    }
}

fn pass_fail(id: impl Into<String>, pass: bool, why: impl FnOnce() -> String) -> Verdict {
    if pass {
        verdict(id, Outcome::Pass, None)
    } else {
        verdict(id, Outcome::Fail, Some(why()))
    }
}

/// Every verdict of `r`, in this order:
/// - `run.complete`: every step of the plan was attempted;
/// - `run.isolated`: nothing but PID 1 and its workers in user space at every census
///   (skip when none was taken);
/// - `run.errors`: no error event; then `step.<step>` fail for each step with one (its
///   first message);
/// - `verify.<target>`: the pattern read back as written;
/// - `a1.<target>`: the Raspberry Pi A1 floors (sequential write, random 4 KiB read and
///   write at QD1), where all three were measured (skip under QEMU, its why starting
///   `EMULATED`: a virtual disk is no card; the figures in MB/s as the report has them);
/// - `card.check`: the full-card check found a genuine card; `card.full`: its
///   whole-card pass (plan `full = true`) read every sector back as written (skip:
///   it stopped at its time limit with nothing bad in what it covered);
/// - `clock.<at>`: the measured clock within 9 % of cpufreq's and the firmware's (skip
///   under QEMU: no clock to compare);
/// - `wifi.<entry>`: the entry ran (skip: the plan or the radio ruled it out; fail: it
///   should have run), `wifi.check.<name>` for QEMU's checks;
/// - `command.<id>`: the plan's command ended well.
pub fn all(r: &RunResults) -> Vec<Verdict> {
    let errors: Vec<&Event> = r
        .events
        .iter()
        .filter(|e| e.severity == Severity::Error)
        .collect();
    let mut out = run_verdicts(r, &errors);
    storage_verdicts(r, &mut out);
    card_verdicts(r, &mut out);
    clock_verdicts(r, &mut out);
    wifi_verdicts(r, &errors, &mut out);
    command_verdicts(r, &mut out);
    out
}

/// `run.complete`, `run.isolated`, `run.errors`, and `step.<step>` for each step with
/// an error event among `errors` (its first message).
fn run_verdicts(r: &RunResults, errors: &[&Event]) -> Vec<Verdict> {
    let mut out = vec![pass_fail("run.complete", r.complete, || {
        "the run stopped before its last step".to_owned()
    })];
    let iso = r.isolation();
    out.push(if iso.censuses == 0 {
        verdict(
            "run.isolated",
            Outcome::Skip,
            Some("no census taken".into()),
        )
    } else {
        pass_fail("run.isolated", iso.isolated, || {
            let names: Vec<String> = iso
                .foreign
                .iter()
                .map(|(at, p)| format!("{} (pid {}) at {at}", p.comm, p.pid))
                .collect();
            format!("foreign processes: {}", names.join(", "))
        })
    });
    out.push(pass_fail("run.errors", errors.is_empty(), || {
        format!("{} error event(s)", errors.len())
    }));
    let mut steps: Vec<&str> = Vec::new();
    for e in errors {
        if !steps.contains(&e.step.as_str()) {
            steps.push(&e.step);
            out.push(verdict(
                format!("step.{}", e.step),
                Outcome::Fail,
                Some(e.message.clone()),
            ));
        }
    }
    out
}

/// `verify.<target>` for each verified target, `a1.<target>` for each target with all
/// three A1 figures (its why in MB/s).
fn storage_verdicts(r: &RunResults, out: &mut Vec<Verdict>) {
    for v in &r.verify {
        out.push(pass_fail(
            format!("verify.{}", v.target),
            v.first_mismatch.is_none(),
            || {
                format!(
                    "read back wrong from byte {}",
                    v.first_mismatch.unwrap_or_default()
                )
            },
        ));
    }
    let mut a1_targets: Vec<&str> = r.random.iter().map(|x| x.target.as_str()).collect();
    a1_targets.dedup();
    for t in a1_targets {
        if let Some(a) = a1_verdict(r, t) {
            let id = format!("a1.{t}");
            out.push(match a.outcome(r.emulated) {
                A1Outcome::Pass => verdict(id, Outcome::Pass, None),
                A1Outcome::Fail => verdict(id, Outcome::Fail, Some(a.figures_text())),
                A1Outcome::Emulated => verdict(
                    id,
                    Outcome::Skip,
                    Some(format!("EMULATED, {A1_EMULATED}: {}", a.figures_text())),
                ),
            });
        }
    }
}

/// `card.check`, and `card.full` when the check made a whole-card pass.
fn card_verdicts(r: &RunResults, out: &mut Vec<Verdict>) {
    let Some(c) = &r.card_check else { return };
    out.push(pass_fail(
        "card.check",
        matches!(c.report.verdict, benchboot_probe::Verdict::Genuine),
        || c.report.summary(),
    ));
    if let Some(f) = &c.report.full {
        out.push(match f.verdict() {
            // Stopped at the time limit with nothing bad in what it covered.
            None => verdict("card.full", Outcome::Skip, Some(f.summary())),
            Some(v) => pass_fail("card.full", v == benchboot_probe::Verdict::Genuine, || {
                f.summary()
            }),
        });
    }
}

/// `clock.<at>` for each clock check (skip under QEMU).
fn clock_verdicts(r: &RunResults, out: &mut Vec<Verdict>) {
    for c in &r.clock_checks {
        let id = format!("clock.{}", c.at);
        out.push(if r.emulated {
            verdict(
                id,
                Outcome::Skip,
                Some("emulated: no clock to compare".into()),
            )
        } else {
            let m = c.mismatches();
            pass_fail(id, m.is_empty(), || m.join("; "))
        });
    }
}

/// `wifi.<entry>` for each WiFi entry (a skipped one fails when its step has an error
/// among `errors`), `wifi.check.<name>` for each of QEMU's checks.
fn wifi_verdicts(r: &RunResults, errors: &[&Event], out: &mut Vec<Verdict>) {
    for e in &r.network.wifi.entries {
        let step = format!("network.wifi.{}", e.link);
        let failed = errors.iter().any(|x| x.step == step);
        out.push(match (&e.skipped, failed) {
            (None, _) => verdict(format!("wifi.{}", e.link), Outcome::Pass, None),
            (Some(why), true) => {
                verdict(format!("wifi.{}", e.link), Outcome::Fail, Some(why.clone()))
            }
            (Some(why), false) => {
                verdict(format!("wifi.{}", e.link), Outcome::Skip, Some(why.clone()))
            }
        });
    }
    for c in &r.network.wifi.checks {
        out.push(pass_fail(
            format!("wifi.check.{}", c.name),
            c.passed,
            || c.detail.clone(),
        ));
    }
}

/// `command.<id>` for each command: pass unless it has a worker fault.
fn command_verdicts(r: &RunResults, out: &mut Vec<Verdict>) {
    for c in &r.commands {
        let step = crate::figures::command_step(&c.id);
        let fault = r.faults.iter().find(|f| f.step == step);
        out.push(pass_fail(step, fault.is_none(), || {
            fault.map(|f| f.failure.to_string()).unwrap_or_default()
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchboot_results::{Event, Process, Verify};

    fn run() -> RunResults {
        let text = include_str!("../../../host/tests/data/qemu-virt-arm64-qemu.json");
        RunResults::from_json(text).unwrap()
    }

    #[test]
    fn a_clean_emulated_run() {
        let r = run();
        let v = all(&r);
        let get = |id: &str| {
            v.iter()
                .find(|x| x.id == id)
                .unwrap_or_else(|| panic!("{id}: {v:#?}"))
        };
        assert_eq!(get("run.complete").outcome, Outcome::Pass);
        assert_eq!(get("run.isolated").outcome, Outcome::Pass);
        assert_eq!(get("run.errors").outcome, Outcome::Pass);
        assert_eq!(get("verify.ext4").outcome, Outcome::Pass);
        for c in &r.clock_checks {
            assert_eq!(get(&format!("clock.{}", c.at)).outcome, Outcome::Skip);
        }
        assert!(v.iter().all(|x| x.outcome != Outcome::Fail), "{v:#?}");
    }

    /// The A1 verdicts of a QEMU run are skipped as EMULATED with the figures in MB/s
    /// (the report's unit); the same run taken for hardware passes. Its console carries
    /// no latency or clock figure; as hardware it would.
    #[test]
    fn an_emulated_a1_is_skipped_and_no_figure_the_emulator_cannot_give_is_printed() {
        let text = include_str!("../../../host/tests/data/qemu-virt-arm64-1.13.json");
        let mut r = RunResults::from_json(text).unwrap();
        let v = all(&r);
        let a1: Vec<&Verdict> = v.iter().filter(|x| x.id.starts_with("a1.")).collect();
        assert_eq!(a1.len(), 2, "{v:#?}");
        for a in &a1 {
            assert_eq!(a.outcome, Outcome::Skip, "{a:?}");
            assert!(
                a.why
                    .as_deref()
                    .unwrap()
                    .starts_with("EMULATED, not judged"),
                "{a:?}"
            );
        }
        let raw = v.iter().find(|x| x.id == "a1.raw").unwrap();
        // 432,960,949 B/s in the document: 433.0 MB/s.
        assert!(
            raw.why
                .as_deref()
                .unwrap()
                .contains("sequential write 433.0 MB/s"),
            "{raw:?}"
        );
        // The 3 fails are the run's error events (no USB Ethernet adapter under QEMU);
        // the 8 skips: the 2 A1 verdicts, 4 clock checks, 2 WiFi entries the plan ruled out.
        let end = crate::lines::verdicts_end(&r.run_id, &v);
        assert!(end.ends_with("pass=14 fail=3 skip=8"), "{end}");
        let not_given = |r: &RunResults| {
            crate::figures::all(r)
                .iter()
                .filter(|f| !f.metric.emulator_gives())
                .count()
        };
        assert_eq!(not_given(&r), 0);
        r.emulated = false;
        assert_eq!(not_given(&r), 34 + 4, "34 latency rows, 4 clock checks");
        let v = all(&r);
        let raw = v.iter().find(|x| x.id == "a1.raw").unwrap();
        assert_eq!((raw.outcome, raw.why.as_deref()), (Outcome::Pass, None));
    }

    #[test]
    fn failures_say_why() {
        let mut r = run();
        r.complete = false;
        r.verify = vec![Verify {
            target: "ext4".into(),
            bytes: 4096,
            first_mismatch: Some(512),
        }];
        r.events = vec![
            Event {
                step: "gadget.ecm".into(),
                severity: Severity::Error,
                message: "no DHCP lease taken".into(),
            },
            Event {
                step: "gadget.ecm".into(),
                severity: Severity::Error,
                message: "second".into(),
            },
            Event {
                step: "clock.x".into(),
                severity: Severity::Warning,
                message: "a warning is no verdict".into(),
            },
        ];
        let sshd = Process {
            pid: 77,
            ppid: 1,
            comm: "sshd".into(),
        };
        let mut seen = r.census[0].clone();
        seen.at = "after-storage".into();
        seen.user_processes.push(sshd.clone());
        seen.isolated = Some(false);
        seen.foreign = vec![sshd];
        r.census.push(seen);
        let v = all(&r);
        let get = |id: &str| v.iter().find(|x| x.id == id).unwrap();
        assert_eq!(get("run.complete").outcome, Outcome::Fail);
        assert_eq!(get("run.errors").why.as_deref(), Some("2 error event(s)"));
        let steps: Vec<&Verdict> = v.iter().filter(|x| x.id.starts_with("step.")).collect();
        assert_eq!(steps.len(), 1, "one verdict per step: {steps:?}");
        assert_eq!(steps[0].why.as_deref(), Some("no DHCP lease taken"));
        assert_eq!(
            get("verify.ext4").why.as_deref(),
            Some("read back wrong from byte 512")
        );
        let iso = get("run.isolated");
        assert_eq!(iso.outcome, Outcome::Fail);
        assert!(
            iso.why.as_deref().unwrap().contains("sshd (pid 77)"),
            "{iso:?}"
        );
    }
}
