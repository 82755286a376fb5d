//! Fault injection in QEMU (`qemu-virt-arm64`, plan `faults`): a benchmark worker that
//! segfaults, one that panics and one that hangs past its 5 s limit are each recorded
//! (step, how, elapsed) and the plan goes on to its storage steps; then PID 1 itself
//! panics, and its panic path records that and still serves the results, which the
//! host fetches over QEMU's forwarded port.

use std::time::{Duration, Instant};

use benchboot_image::layout::{self, Role};
use benchboot_results::{Severity, WorkerFailure};
use xtask::qemu::{run_with, Options};

#[test]
fn worker_faults_and_a_pid1_panic_are_recorded_and_results_served() {
    let _slot = benchboot_tests::qemu_slot(module_path!());
    let started = Instant::now();
    let board = xtask::load_board("qemu-virt-arm64").unwrap();
    let mut opts = Options::new(Duration::from_secs(600));
    opts.plan = "faults".into();
    let run = run_with(&board, &opts).unwrap();
    let r = benchboot_tests::checks::fetched(&run);
    assert!(r.emulated && r.complete, "{:?}", r.events);
    assert_eq!(r.plan.supervision.worker_limit_ms, 5_000);

    // Each worker fault: its step, how it ended, how long it ran.
    let faults: Vec<(&str, &WorkerFailure, u64)> = r
        .faults
        .iter()
        .map(|f| (f.step.as_str(), &f.failure, f.elapsed_ns))
        .collect();
    assert_eq!(faults.len(), 3, "{faults:?}");
    assert_eq!(faults[0].0, "fault.segfault");
    assert_eq!(
        faults[0].1,
        &WorkerFailure::Signal {
            signal: 11,
            name: "SIGSEGV".into()
        }
    );
    assert_eq!(faults[1].0, "fault.panic");
    match faults[1].1 {
        WorkerFailure::Panic { message } => {
            assert!(
                message.contains("injected panic (plan.faults)"),
                "{message}"
            );
            assert!(message.contains("faults.rs"), "the location: {message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(faults[2].0, "fault.hang");
    assert_eq!(faults[2].1, &WorkerFailure::TimedOut { limit_ms: 5_000 });
    assert!(
        (5_000_000_000..30_000_000_000).contains(&faults[2].2),
        "killed at its limit: {} ns",
        faults[2].2
    );

    // The plan went on: both block sizes of the ext4 sweep, write and read.
    assert_eq!(r.storage.len(), 4, "{:?}", r.storage);
    assert!(r.storage.iter().all(|m| m.target == "ext4" && m.bytes > 0));
    // The workers were reaped, the killed one too: PID 1 alone after the storage steps.
    let after = r.census.iter().find(|c| c.at == "after-storage").unwrap();
    assert!(after.only_pid1(), "{:?}", after.user_processes);

    // PID 1's own panic: an error event, served, and written to the card.
    let pid1: Vec<_> = r.events.iter().filter(|e| e.step == "pid1").collect();
    assert_eq!(pid1.len(), 1, "{:?}", r.events);
    assert_eq!(pid1[0].severity, Severity::Error);
    assert!(
        pid1[0]
            .message
            .contains("injected PID 1 panic (plan.faults)"),
        "{}",
        pid1[0].message
    );
    let console = std::fs::read_to_string(&run.console_log).unwrap();
    assert!(console.contains("benchboot: PID 1 panicked:"), "{console}");
    assert!(console.contains("after a PID 1 panic"), "{console}");
    assert!(!console.contains("Attempted to kill init"), "{console}");
    let layout = layout::plan(&layout::Spec::default()).unwrap();
    let on_card = benchboot_tests::checks::card_results(&run.sd_card, &layout);
    assert_eq!(on_card.run_id, r.run_id);
    assert_eq!(on_card.faults, r.faults);
    assert!(on_card.events.iter().any(|e| e.step == "pid1"));
    // The init's defmt log on the card decodes with the ELF the image build kept, and
    // tells the same story.
    let frames = xtask::image::read_fat_file(
        &run.sd_card,
        layout.part(Role::Results).unwrap(),
        "log.defmt",
    )
    .unwrap();
    let elf = std::fs::read(run.image.with_extension("init.elf")).unwrap();
    let log = benchboot::log::decode(&elf, &frames).unwrap();
    assert_eq!((log.malformed, log.trailing_bytes), (0, 0));
    let text: Vec<String> = log.lines.iter().map(benchboot::log::format_line).collect();
    let has = |level: &str, needle: &str| {
        log.lines
            .iter()
            .any(|l| l.level == level && l.message.contains(needle))
    };
    assert!(has("info", &format!("start run={}", r.run_id)), "{text:#?}");
    assert!(
        has("error", "fault.segfault: worker killed by signal 11"),
        "{text:#?}"
    );
    assert!(
        has("error", "fault.hang: worker still running"),
        "{text:#?}"
    );
    assert!(has("error", "PID 1 panicked"), "{text:#?}");
    eprintln!(
        "faults: ready {:.1} s after QEMU started; whole test {:.1} s",
        run.boot_to_ready.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
}
