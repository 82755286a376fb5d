//! The plan's own workloads (`commands`, plan file `[[command]]`): after the storage
//! steps, each binary on the results partition runs as step `command.<id>` under PID 1's
//! supervision ([`worker::run_program`]: time limit, then SIGKILL of its process group),
//! between two health snapshots (kept in its [`CommandRun`]); the `case=<id> value=<n> units=<u>` lines it prints
//! are its measurements ([`benchboot_results::command`]). A binary that is missing,
//! exits non-zero, dies or runs too long is an event and a fault; the plan goes on.

use std::path::Path;
use std::time::Duration;

use benchboot_plan::CommandStep;
use benchboot_results::command::{parse_output, CommandHealth, CommandRun};
use benchboot_results::{RunResults, Severity};

use crate::console::{self, say, tell};
use crate::{health, interrupts, worker};

/// The step id of command `id`: `command.<id>`.
pub fn step_id(id: &str) -> String {
    benchboot_console::figures::command_step(id)
}

/// Runs every command of `results.plan` in order, each binary at `<dir>/<path>` with
/// `dir` (the results partition's mount point) as its working folder; `mounted` false
/// (no results partition) makes each a fault without running anything. `persist` is
/// called after each command.
pub fn run_commands(
    dir: &Path,
    mounted: bool,
    results: &mut RunResults,
    persist: &mut dyn FnMut(&mut RunResults),
) {
    let commands: Vec<CommandStep> = results.plan.commands.clone();
    for c in &commands {
        run_one(c, dir, mounted, results);
        persist(results);
    }
}

fn run_one(c: &CommandStep, dir: &Path, mounted: bool, results: &mut RunResults) {
    let step = step_id(&c.id);
    let path = dir.join(&c.path);
    let limit = Duration::from_millis(c.time_limit_ms);
    say(&format!(
        "{step}: {} {} (limit {} ms)",
        c.path,
        c.args.join(" "),
        c.time_limit_ms
    ));
    let (run, health) = if mounted {
        let before = health::take_for(&step);
        let run = worker::run_program(&path, &c.args, dir, limit);
        let after = health::take_after_for(&step);
        let health = CommandHealth {
            interrupts: interrupts::reading(&before.interrupts, &after.interrupts),
            before: before.health,
            after: after.health,
        };
        (run, Some(health))
    } else {
        let run = worker::ProgramRun {
            outcome: Err(benchboot_results::WorkerFailure::Start {
                message: format!(
                    "{}: the results partition is not mounted, so the binary cannot be \
                     there",
                    c.path
                ),
            }),
            exit_code: None,
            stdout: String::new(),
            truncated: false,
            elapsed_ns: 0,
        };
        (run, None)
    };
    record(c, run, health, results);
}

/// Records one command's run: its [`CommandRun`] (measurements also of a failed run),
/// a console figure per measurement (`command.<id>.<case>`), and for a failure a fault
/// and an error event; a warning event when it printed more than
/// [`worker::MAX_PROGRAM_OUTPUT`].
fn record(
    c: &CommandStep,
    run: worker::ProgramRun,
    health: Option<CommandHealth>,
    results: &mut RunResults,
) {
    let step = step_id(&c.id);
    let measurements = parse_output(&run.stdout);
    if run.truncated {
        results.event(
            &step,
            Severity::Warning,
            format!(
                "printed more than {} bytes; the rest was not read for measurements",
                worker::MAX_PROGRAM_OUTPUT
            ),
        );
    }
    if let Err(failure) = run.outcome {
        tell!(
            error,
            format!("{step}: {failure}");
            "{=str}: {}",
            step.as_str(),
            defmt::Display2Format(&failure)
        );
        results.worker_fault(&step, failure, run.elapsed_ns);
    } else if measurements.is_empty() {
        results.event(
            &step,
            Severity::Warning,
            "exited 0 but printed no `case=<id> value=<number> units=<unit>` line",
        );
    }
    let record = CommandRun {
        id: c.id.clone(),
        path: c.path.clone(),
        exit_code: run.exit_code,
        elapsed_ns: run.elapsed_ns,
        measurements,
        health,
    };
    console::figures(&benchboot_console::figures::command(&record));
    results.commands.push(record);
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchboot_plan::Plan;
    use benchboot_results::WorkerFailure;
    use std::os::unix::fs::PermissionsExt;

    /// A shell script `bin/<name>` under `dir`.
    fn script(dir: &Path, name: &str, body: &str) {
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let path = bin.join(name);
        std::fs::write(
            &path,
            format!("#!/bin/sh\n[ -n \"$BB_PROBE\" ] && exit 0\n{body}\n"),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        // A fork in another test thread can hold the new file's writer descriptor until
        // its own exec (ETXTBSY, fs/exec.c `deny_write_access`); once one exec succeeds,
        // none is left.
        for _ in 0..1000 {
            match std::process::Command::new(&path)
                .env("BB_PROBE", "1")
                .status()
            {
                Err(e) if e.raw_os_error() == Some(26) => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                r => {
                    r.unwrap();
                    return;
                }
            }
        }
        panic!("{} stayed busy (ETXTBSY) for 10 s", path.display());
    }

    fn step(id: &str, args: &[&str], time_limit_ms: u64) -> CommandStep {
        CommandStep {
            id: id.into(),
            path: format!("bin/{id}"),
            args: args.iter().map(|a| a.to_string()).collect(),
            time_limit_ms,
        }
    }

    #[test]
    fn commands_run_in_order_and_their_lines_are_measurements() {
        let dir = tempfile::tempdir().unwrap();
        script(
            dir.path(),
            "good",
            "echo hello\necho \"case=$1 value=$2 units=ops/s\"\necho case=cwd value=1 units=$(basename \"$PWD\") >&2\ncase=x\necho 'case=second value=-0.5 units=s'",
        );
        script(
            dir.path(),
            "fails",
            "echo case=partial value=3 units=ms\nexit 3",
        );
        script(
            dir.path(),
            "hangs",
            "echo case=early value=1 units=s\nsleep 30",
        );
        let mut plan = Plan::example();
        plan.commands = vec![
            step("good", &["score", "812.5"], 10_000),
            step("fails", &[], 10_000),
            step("missing", &[], 10_000),
            step("hangs", &[], 300),
        ];
        let mut r = RunResults::new("t".into(), plan, benchboot_storage::system::system_info(0));
        let mut persisted = 0;
        run_commands(dir.path(), true, &mut r, &mut |_| persisted += 1);
        assert_eq!(persisted, 4);
        let ids: Vec<&str> = r.commands.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["good", "fails", "missing", "hangs"]);

        let good = &r.commands[0];
        assert_eq!(good.exit_code, Some(0));
        let got: Vec<(&str, f64, &str)> = good
            .measurements
            .iter()
            .map(|m| (m.case.as_str(), m.value, m.units.as_str()))
            .collect();
        assert_eq!(got, [("score", 812.5, "ops/s"), ("second", -0.5, "s")]);
        assert!(good.elapsed_ns > 0);

        assert_eq!(r.commands[1].exit_code, Some(3));
        assert_eq!(r.commands[1].measurements[0].case, "partial");
        assert_eq!(r.commands[2].exit_code, None);
        assert!(r.commands[2].measurements.is_empty());
        assert_eq!(r.commands[3].exit_code, None);
        assert_eq!(r.commands[3].measurements[0].case, "early");
        assert!(r.commands[3].elapsed_ns >= 300_000_000);

        let faults: Vec<(&str, &WorkerFailure)> = r
            .faults
            .iter()
            .map(|f| (f.step.as_str(), &f.failure))
            .collect();
        assert_eq!(faults.len(), 3, "{faults:?}");
        assert_eq!(
            faults[0],
            ("command.fails", &WorkerFailure::Exit { code: 3 })
        );
        assert_eq!(faults[1].0, "command.missing");
        assert!(
            matches!(faults[1].1, WorkerFailure::Start { message }
                if message.contains("bin/missing") && message.contains("No such file")),
            "{faults:?}"
        );
        assert_eq!(
            faults[2],
            ("command.hangs", &WorkerFailure::TimedOut { limit_ms: 300 })
        );
        let errors: Vec<&str> = r
            .events
            .iter()
            .filter(|e| e.severity == Severity::Error)
            .map(|e| e.step.as_str())
            .collect();
        assert_eq!(
            errors,
            ["command.fails", "command.missing", "command.hangs"]
        );
        // Health around every run, before no later than after.
        for c in &r.commands[..2] {
            let h = c.health.as_ref().expect("health around every run");
            assert!(h.before.at_ns <= h.after.at_ns, "{}", c.id);
        }
        assert!(r.health.is_empty(), "not among the other steps' scopes");
    }

    #[test]
    fn without_the_results_partition_nothing_runs() {
        let dir = tempfile::tempdir().unwrap();
        script(dir.path(), "good", "echo case=a value=1 units=s");
        let mut plan = Plan::example();
        plan.commands = vec![step("good", &[], 1000)];
        let mut r = RunResults::new("t".into(), plan, benchboot_storage::system::system_info(0));
        run_commands(dir.path(), false, &mut r, &mut |_| {});
        assert!(r.commands[0].measurements.is_empty());
        assert!(
            matches!(&r.faults[0].failure, WorkerFailure::Start { message }
                if message.contains("not mounted")),
            "{:?}",
            r.faults
        );
        assert_eq!(r.commands[0].health, None, "nothing ran");
    }

    #[test]
    fn a_quiet_success_is_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        script(dir.path(), "quiet", "true");
        let mut plan = Plan::example();
        plan.commands = vec![step("quiet", &[], 5000)];
        let mut r = RunResults::new("t".into(), plan, benchboot_storage::system::system_info(0));
        run_commands(dir.path(), true, &mut r, &mut |_| {});
        assert!(r.faults.is_empty());
        assert_eq!(r.events.len(), 1);
        assert_eq!(r.events[0].severity, Severity::Warning);
        assert!(r.events[0].message.contains("no `case="), "{:?}", r.events);
    }
}
