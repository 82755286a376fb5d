//! Faults injected on purpose (plan field `faults`, QEMU plans only): the proof that a
//! benchmark worker crashing, panicking or hanging is recorded and the plan goes on,
//! and that PID 1's own panic path keeps the results served.

use benchboot_plan::Fault;
use benchboot_results::RunResults;

use crate::console::say;
use crate::steps::in_worker;

/// Runs each worker fault of the plan (segfault, panic, hang) as step `fault.<kind>` in
/// a supervised worker, like any benchmark. [`Fault::Pid1Panic`] is left to
/// [`pid1_faults_if_planned`].
pub fn run_worker_faults(results: &mut RunResults) {
    let faults: Vec<Fault> = results.plan.faults.clone();
    for fault in faults {
        let step = fault.step();
        let body: fn() -> std::io::Result<()> = match fault {
            Fault::Segfault => segfault,
            Fault::Panic => || panic!("injected panic (plan.faults)"),
            Fault::Hang => hang,
            Fault::Pid1Panic | Fault::Pid1Hang => continue,
        };
        if in_worker(results, &step, body).is_some() {
            // A fault that did not fault is a broken test, not a pass.
            say(&format!("{step}: the injected fault did not happen"));
            results.event(
                &step,
                benchboot_results::Severity::Error,
                "the injected fault did not happen",
            );
        }
    }
}

/// PID 1's own faults, called after the last step, before the results are served:
/// [`Fault::Pid1Panic`] panics; [`Fault::Pid1Hang`] stops the main sequence for good
/// (no console line, no beat), which only the hardware watchdog ends.
pub fn pid1_faults_if_planned(results: &RunResults) {
    if results.plan.faults.contains(&Fault::Pid1Panic) {
        panic!("injected PID 1 panic (plan.faults)");
    }
    if results.plan.faults.contains(&Fault::Pid1Hang) {
        say("injected PID 1 hang (plan.faults): the main sequence stops here");
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
}

fn segfault() -> std::io::Result<()> {
    crate::sys::segfault()
}

fn hang() -> std::io::Result<()> {
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchboot_plan::Plan;
    use benchboot_results::WorkerFailure;

    #[test]
    fn each_worker_fault_is_recorded_and_the_plan_goes_on() {
        let mut plan = Plan::example();
        plan.supervision.worker_limit_ms = 500;
        plan.faults = vec![Fault::Segfault, Fault::Panic, Fault::Hang, Fault::Pid1Panic];
        let mut r = RunResults::new("t".into(), plan, benchboot_storage::system::system_info(0));
        run_worker_faults(&mut r);
        let got: Vec<(&str, &WorkerFailure)> = r
            .faults
            .iter()
            .map(|f| (f.step.as_str(), &f.failure))
            .collect();
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(
            got[0],
            (
                "fault.segfault",
                &WorkerFailure::Signal {
                    signal: libc::SIGSEGV,
                    name: "SIGSEGV".into()
                }
            )
        );
        assert_eq!(got[1].0, "fault.panic");
        assert!(
            matches!(got[1].1, WorkerFailure::Panic { message } if message.contains("injected panic")),
            "{got:?}"
        );
        assert_eq!(
            got[2],
            ("fault.hang", &WorkerFailure::TimedOut { limit_ms: 500 })
        );
        assert!(r.faults[2].elapsed_ns >= 500_000_000);
        assert_eq!(r.events.len(), 3);
    }
}
