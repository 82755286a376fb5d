//! The phase recorder's tests: consecutive phases and their total, parts, the block as
//! printed, timing.json written whole, the caps, `/proc/<pid>/stat` fields, the plan's areas.

use super::*;

fn at(t0: Instant, ms: u64) -> Instant {
    t0 + Duration::from_millis(ms)
}

#[test]
fn phases_are_consecutive_and_add_up_to_the_total() {
    let t0 = Instant::now();
    let mut r = Recorder::starting_at(t0);
    r.before_start("cargo run (compile xtask)", 2.5);
    assert_eq!(r.phase_at("host tool", at(t0, 1_500)), 1.5);
    assert_eq!(r.phase_at("image", at(t0, 4_000)), 2.5);
    // A mark before the previous one: a 0 s phase, nothing moves back.
    assert_eq!(r.phase_at("late", at(t0, 3_000)), 0.0);
    assert_eq!(r.phase_at("boot to PID 1", at(t0, 10_000)), 6.0);
    let rep = r.report("rpi-zero-w");
    let names: Vec<&str> = rep.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "cargo run (compile xtask)",
            "host tool",
            "image",
            "late",
            "boot to PID 1"
        ]
    );
    assert_eq!(rep.total_secs, 12.5);
    let sum: f64 = rep.phases.iter().map(|p| p.secs).sum();
    assert_eq!(sum, rep.total_secs);
    assert_eq!(rep.format, FORMAT);
}

#[test]
fn parts_stay_under_their_phase_and_the_block_shows_both() {
    let t0 = Instant::now();
    let mut inner = Recorder::starting_at(t0);
    inner.phase_at("firmware", at(t0, 82_000));
    inner.phase_at("packages", at(t0, 82_500));
    assert_eq!(inner.summary(), "firmware 82.0 s, packages 0.5 s");
    let mut r = Recorder::starting_at(t0);
    r.phase_at("image", at(t0, 90_000));
    r.parts(inner.into_parts());
    r.phase_at("QEMU", at(t0, 300_000));
    let rep = r.report("rpi-zero-w");
    assert_eq!(rep.phases[0].parts.len(), 2);
    assert_eq!(
        rep.render(),
        "time: where the rpi-zero-w run's wall time went\n\
         time:   image          90.0 s   30 %\n\
         time:     firmware     82.0 s\n\
         time:     packages      0.5 s\n\
         time:   QEMU          210.0 s   70 %\n\
         time:   total         300.0 s  (5 min 00 s)"
    );
}

#[test]
fn the_report_round_trips_through_json_and_is_written_whole() {
    let t0 = Instant::now();
    let mut r = Recorder::starting_at(t0);
    r.phase_at("image", at(t0, 1_250));
    let rep = r.report("b");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("qemu/b/timing.json");
    rep.write(&path).unwrap();
    let back: Report = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(back, rep);
    // No parts: no `parts` key.
    assert!(!std::fs::read_to_string(&path).unwrap().contains("parts"));
    // Nothing but the file itself is left in the folder (no temporary file).
    assert_eq!(
        std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
        1
    );
}

#[test]
fn a_flood_of_phases_is_capped_and_its_time_still_counted() {
    let t0 = Instant::now();
    let mut r = Recorder::starting_at(t0);
    for i in 0..(MAX_PHASES as u64 + 10) {
        r.phase_at(format!("area{i}"), at(t0, (i + 1) * 1_000));
    }
    let rep = r.report("b");
    assert_eq!(rep.phases.len(), MAX_PHASES);
    assert_eq!(rep.phases.last().unwrap().secs, 11.0);
    assert_eq!(rep.total_secs, (MAX_PHASES + 10) as f64);
}

#[test]
fn proc_stat_fields_are_read_after_the_command_name() {
    // A command name with spaces and a `)` of its own (proc(5): field 2 is in parentheses).
    let line = "4242 (x (y) z) S 4100 4242 4100 34816 4242 4194304 1 0 0 0 3 1 0 0 20 0 1 0 \
                987654 12345678 900 18446744073709551615";
    assert_eq!(stat_fields(line), Some((4100, 987_654)));
    assert_eq!(stat_fields("4242 (cargo) S 1"), None);
    assert_eq!(stat_fields("no parenthesis"), None);
}

#[test]
fn the_plan_is_split_at_each_new_area() {
    let t0 = Instant::now();
    let areas = vec![
        ("memory".to_string(), at(t0, 2_000)),
        ("storage".to_string(), at(t0, 10_000)),
        ("random".to_string(), at(t0, 100_000)),
    ];
    let parts = plan_parts(at(t0, 500), &areas, at(t0, 130_000));
    let got: Vec<(&str, f64)> = parts.iter().map(|p| (p.name.as_str(), p.secs)).collect();
    assert_eq!(
        got,
        [
            ("PID 1 before the first step", 1.5),
            ("memory", 8.0),
            ("storage", 90.0),
            ("random", 30.0)
        ]
    );
    // No marks at all: the whole plan is one part.
    let one = plan_parts(t0, &[], at(t0, 4_000));
    assert_eq!(
        one,
        [Phase::new("the plan (no step marks on the console)", 4.0)]
    );
}
