//! The context and warnings of hand-made runs: health flags, isolation, interrupts,
//! old documents, a newer schema.

use benchboot_results::{HealthScope, InterruptDelta, Reading, RunResults, StepHealth};

use super::*;
use benchboot_plan::Plan;
use benchboot_results::{Census, Health, KernelModule, Process, SystemInfo, Throttled};

fn step(name: &str, before: u32, after: u32) -> StepHealth {
    let snap = |raw: u32| Health {
        throttled: Reading::ok(Throttled::from_raw(raw), "mailbox:GET_THROTTLED"),
        ..Health::default()
    };
    StepHealth {
        step: name.into(),
        scope: HealthScope::Verify {
            target: name.into(),
        },
        before: snap(before),
        after: snap(after),
        interrupts: Reading::default(),
    }
}

fn run(health: Vec<StepHealth>) -> RunResults {
    let mut r = RunResults::new("r".into(), Plan::example(), SystemInfo::default());
    r.emulated = false;
    r.health = health;
    r
}

fn kinds(r: &RunResults) -> Vec<String> {
    health_warnings(r).into_iter().map(|w| w.kind).collect()
}

#[test]
fn flags_set_since_boot_before_the_first_step_are_an_earlier_warning_only() {
    let r = run(vec![
        step("a", 0x10000, 0x10000),
        step("b", 0x10000, 0x10000),
    ]);
    assert_eq!(kinds(&r), ["health-earlier"]);
    let w = &health_warnings(&r)[0];
    assert!(
        w.message.contains("under-voltage before step a"),
        "{}",
        w.message
    );
    assert_eq!(
        context(&r).throttled.as_deref(),
        Some("under-voltage already flagged since boot")
    );
}

#[test]
fn soft_temperature_limit_during_a_step_is_named() {
    let r = run(vec![step("a", 0, 0), step("b", 0, 0x80008)]);
    let w = health_warnings(&r);
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].kind, "health");
    assert!(
        w[0].message.starts_with(
            "soft temperature limit during 1 step(s): b (firmware flags after: 0x80008)"
        ),
        "{}",
        w[0].message
    );
}

#[test]
fn unreadable_flags_on_hardware_are_a_warning_and_none_in_qemu() {
    let mut s = step("a", 0, 0);
    s.before.throttled = Reading::unavailable("/dev/vcio: No such file or directory");
    s.after.throttled = s.before.throttled.clone();
    let mut r = run(vec![s]);
    assert_eq!(kinds(&r), ["health-unknown"]);
    assert!(health_warnings(&r)[0].message.contains("/dev/vcio"));
    assert!(context(&r)
        .throttled
        .unwrap()
        .starts_with("not readable (/dev/vcio"));
    r.emulated = true;
    assert!(kinds(&r).is_empty());
    // No health at all (schema before 1.3): nothing said, context "not recorded".
    let r = run(vec![]);
    assert!(kinds(&r).is_empty());
    assert_eq!(context(&r).throttled, None);
    assert!(context(&r).not_recorded.contains(&"throttled".to_owned()));
}

fn process(pid: u32, ppid: u32, comm: &str) -> Process {
    Process {
        pid,
        ppid,
        comm: comm.into(),
    }
}

fn with_interrupts(mut h: StepHealth, scope: HealthScope, d: &[(&str, u64)]) -> StepHealth {
    h.scope = scope;
    h.interrupts = Reading::ok(
        d.iter()
            .map(|(s, n)| InterruptDelta {
                source: (*s).into(),
                count: *n,
            })
            .collect(),
        "/proc/interrupts",
    );
    h
}

fn value<'a>(g: &'a crate::doc::Grid, key: &str) -> &'a str {
    &g.rows.iter().find(|r| r[0] == key).unwrap()[1]
}

#[test]
fn isolation_interrupts_cmdline_and_modules_in_the_context() {
    let storage = |bs| HealthScope::Storage {
        target: "ext4".into(),
        mode: benchboot_plan::Mode::Sync,
        block_size: bs,
    };
    let mut r = run(vec![
        with_interrupts(
            step("storage.ext4.sync.bs512", 0, 0),
            storage(512),
            &[
                ("104 mmc1", 12_000),
                ("180 arch_timer", 900),
                ("IPI0 Rescheduling interrupts", 4),
            ],
        ),
        with_interrupts(
            step("storage.ext4.sync.bs4096", 0, 0),
            storage(4096),
            &[
                ("104 mmc1", 345),
                ("180 arch_timer", 100),
                ("62 DMA IRQ", 2),
            ],
        ),
        with_interrupts(
            step("verify.ext4", 0, 0),
            HealthScope::Verify {
                target: "ext4".into(),
            },
            &[],
        ),
    ]);
    let init = process(1, 0, "benchboot-init");
    r.push_census(Census::new(
        "before-storage",
        vec![init.clone()],
        vec!["kthreadd".into(); 72],
    ));
    r.push_census(Census::new(
        "after-storage",
        vec![init.clone(), process(40, 1, "benchboot-init")],
        vec!["kthreadd".into(); 74],
    ));
    r.system.kernel_cmdline =
        Reading::ok("console=ttyS0 benchboot.plan=plan".into(), "/proc/cmdline");
    r.system.modules = Reading::ok(
        vec![KernelModule {
            name: "dwc2".into(),
            size_bytes: 1,
            refcount: Some(0),
            used_by: vec![],
        }],
        "/proc/modules",
    );
    let c = context(&r);
    assert_eq!(c.interrupts.len(), 2);
    assert_eq!(
        (
            c.interrupts[0].group.as_str(),
            c.interrupts[0].steps,
            c.interrupts[0].total,
            c.interrupts[0].sources
        ),
        ("storage", 2, 13_351, 4)
    );
    assert_eq!(c.interrupts[0].top[0].count, 12_345);
    let g = context_grid(&c);
    assert_eq!(
        value(&g, "isolation"),
        "PID 1 + its own workers only (up to 1 at once) in user space at all 2 censuses; \
         72–74 kernel threads"
    );
    assert_eq!(
        value(&g, "interrupts during storage"),
        "104 mmc1 12,345; 180 arch_timer 1,000; IPI0 Rescheduling interrupts 4 (+1 more \
         source(s); 13,351 in all over 2 step(s))"
    );
    assert_eq!(
        value(&g, "interrupts during verify"),
        "none counted over 1 step(s)"
    );
    assert_eq!(
        value(&g, "kernel command line"),
        "console=ttyS0 benchboot.plan=plan"
    );
    assert_eq!(value(&g, "modules"), "1 loaded: dwc2");
    assert!(
        warnings(&r).iter().all(|w| w.kind != "census"),
        "workers are allowed"
    );
    for k in ["isolation", "interrupts", "kernel_cmdline", "modules"] {
        assert!(!c.not_recorded.contains(&k.to_owned()), "{k}");
    }

    // A foreign process: the verdict says who, and a warning.
    r.push_census(Census::new(
        "after-network",
        vec![init, process(77, 2, "modprobe")],
        vec![],
    ));
    let g = context_grid(&context(&r));
    assert!(
        value(&g, "isolation").starts_with(
            "NOT ISOLATED: foreign user-space process(es) 77 modprobe (parent 2) at after-network"
        ),
        "{}",
        value(&g, "isolation")
    );
    let w: Vec<Warning> = warnings(&r)
        .into_iter()
        .filter(|w| w.kind == "census")
        .collect();
    assert_eq!(w.len(), 1);
    assert!(
        w[0].message.contains("after-network") && w[0].message.contains("77 modprobe (parent 2)")
    );
}

#[test]
fn old_documents_say_not_recorded_and_unreadable_interrupts_say_why() {
    let r = run(vec![step("a", 0, 0)]);
    let c = context(&r);
    for k in ["isolation", "interrupts", "kernel_cmdline", "modules"] {
        assert!(c.not_recorded.contains(&k.to_owned()), "{k}");
    }
    let g = context_grid(&c);
    assert_eq!(value(&g, "isolation"), "not recorded");
    assert_eq!(value(&g, "interrupts"), "not recorded");
    let mut s = step("a", 0, 0);
    s.interrupts = Reading::unavailable("/proc/interrupts: No such file or directory");
    let g = context_grid(&context(&run(vec![s])));
    assert_eq!(
        value(&g, "interrupts"),
        "not readable (/proc/interrupts: No such file or directory)"
    );
}

#[test]
fn a_newer_minor_schema_is_a_warning() {
    let mut r = run(Vec::new());
    assert!(warnings(&r).iter().all(|w| w.kind != "schema-newer"));
    r.schema_version.minor = benchboot_results::SCHEMA_MINOR + 94;
    let w: Vec<_> = warnings(&r)
        .into_iter()
        .filter(|w| w.kind == "schema-newer")
        .collect();
    assert_eq!(w.len(), 1);
    let newer = format!("1.{}", benchboot_results::SCHEMA_MINOR + 94);
    assert!(w[0].message.contains(&newer), "{}", w[0].message);
}

#[test]
fn clean_flags_say_so() {
    let r = run(vec![step("a", 0, 0)]);
    assert!(kinds(&r).is_empty());
    assert_eq!(
        context(&r).throttled.as_deref(),
        Some("none flagged in 2 snapshot(s) (firmware flags)")
    );
}

// The host run's plan comes from `benchboot storage`, which Windows builds lack.
#[cfg(unix)]
#[test]
fn run_length_is_from_pid_1_start_on_a_board_and_says_host_run_on_the_host() {
    let mut board = run(Vec::new());
    board.system.init_started_ns = 2_000_000_000;
    board.system.written_ns = 14_500_000_000;
    let g = context_grid(&context(&board));
    assert_eq!(value(&g, "run length"), "12.5 s from PID 1 start");
    assert!(!context(&board).host_run);

    let host_plan = crate::storage::plan(&crate::storage::HostRun {
        dir: "/mnt/usb".into(),
        block_sizes: vec![4096],
        modes: vec![benchboot_plan::Mode::Sync],
        byte_cap: 1 << 20,
        time_cap_ms: 1000,
        repetitions: 1,
        random: None,
        verify: false,
    });
    let mut host = RunResults::new("host-1".into(), host_plan, SystemInfo::default());
    host.system.written_ns = 3_240_000_000;
    let c = context(&host);
    assert!(c.host_run);
    assert_eq!(
        value(&context_grid(&c), "run length"),
        "3.2 s, a host run (benchboot storage), not timed from PID 1 start"
    );
    assert_eq!(
        value(&context_grid(&c), "hardware"),
        "this computer (benchboot storage), not a board"
    );
    // A host document from before the command timed itself: both clocks 0.
    host.system.written_ns = 0;
    assert_eq!(
        value(&context_grid(&context(&host)), "run length"),
        "not recorded: a host run (benchboot storage), no PID 1 start"
    );
    // `benchboot memory`'s document: a memory step, no storage target.
    let mem_plan = crate::memory::plan(benchboot_plan::MemoryPlan::HARDWARE);
    let mut mem = RunResults::new("host-2".into(), mem_plan, SystemInfo::default());
    mem.system.written_ns = 1_500_000_000;
    let g = context_grid(&context(&mem));
    assert_eq!(
        (value(&g, "hardware"), value(&g, "run length")),
        (
            "this computer (benchboot memory), not a board",
            "1.5 s, a host run (benchboot memory), not timed from PID 1 start"
        )
    );
    assert_eq!(
        value(&context_grid(&context(&board)), "hardware"),
        "real board"
    );
    // The JSON of a board run does not gain the field.
    let json = serde_json::to_string(&context(&board)).unwrap();
    assert!(!json.contains("host_run"), "{json}");
    assert!(serde_json::to_string(&c)
        .unwrap()
        .contains("\"host_run\":true"));
}

/// A Pi 4 on Debian's arm64 kernel: no vcio, no raspberrypi-hwmon; cpufreq and the
/// thermal zone answer. The report says fact by fact which is real and which unknown.
#[test]
fn the_context_says_which_health_facts_are_real_and_which_unknown() {
    let no_uv = "this kernel (6.1.0-50-arm64) has no raspberrypi-hwmon";
    let snap = Health {
        cpufreq_khz: Reading::ok(
            1_500_000,
            "/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
        ),
        temperature_millicelsius: Reading::ok(45_000, "/sys/class/thermal/thermal_zone0/temp"),
        throttled: Reading::unavailable("/dev/vcio: No such file or directory"),
        under_voltage_alarm: Reading::unavailable(no_uv),
        ..Health::default()
    };
    let mut r = run(vec![StepHealth {
        step: "memory".into(),
        scope: HealthScope::Memory,
        before: snap.clone(),
        after: snap,
        interrupts: Reading::default(),
    }]);
    let c = context(&r);
    let row = |k: &str| {
        c.health_facts
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(
        row("health: under-voltage").unwrap(),
        format!("unknown: {no_uv}")
    );
    assert_eq!(
        row("health: temperature").unwrap(),
        "real (/sys/class/thermal/thermal_zone0/temp)"
    );
    assert_eq!(
        row("health: throttle flags").unwrap(),
        "unknown: /dev/vcio: No such file or directory"
    );
    assert_eq!(c.health_facts.len(), 7, "every fact, real or not");
    let grid = format!("{:?}", context_grid(&c));
    assert!(grid.contains("health: cpufreq clock"), "{grid}");
    let w = health_warnings(&r);
    assert!(
        w.iter()
            .any(|w| w.kind == "health-unknown" && w.message.contains(no_uv)),
        "{w:?}"
    );
    // Control characters from a board never reach the terminal.
    r.health_facts = benchboot_results::health::health_facts([&Health {
        temperature_millicelsius: Reading::ok(1, "zone (\u{1b}[2J)"),
        ..Health::default()
    }]);
    let c = context(&r);
    assert!(c.health_facts.iter().all(|(_, v)| !v.contains('\u{1b}')));
    // No health recorded (an old document): no rows.
    assert!(context(&run(vec![])).health_facts.is_empty());
}

#[test]
fn devices_without_a_driver_are_warnings_and_modalias_loads_a_report_section() {
    use benchboot_results::{ModaliasLoad, NoDriver};
    let mut r = run(Vec::new());
    let usb = "/sys/devices/platform/soc/3f980000.usb/usb1/1-1";
    r.modalias.loaded.push(ModaliasLoad {
        module: "usb_storage".into(),
        device: format!("{usb}/1-1.2/1-1.2:1.0"),
        modalias: "usb:v0781p5581d0100dc00dsc00dp00ic08isc06ip50in00".into(),
        why: "alias".into(),
        at: "storage".into(),
        error: None,
    });
    r.modalias.no_driver.push(NoDriver {
        device: format!("{usb}/1-1.3/1-1.3:1.0"),
        modalias: "usb:v0BDAp8153d3100dc00dsc00dp00icFFisc00ip00in00".into(),
        subsystem: "usb".into(),
        at: "network.wired.lan".into(),
    });
    // A device's own bytes never reach the terminal raw.
    r.modalias.no_driver.push(NoDriver {
        device: format!("{usb}/1-1.4/1-1.4:1.0"),
        modalias: "acme:\x1b[2J\x1b]0;title\x07".into(),
        subsystem: "acme".into(),
        at: "end".into(),
    });
    let w: Vec<(String, String)> = warnings(&r)
        .into_iter()
        .filter(|w| w.kind == "no-driver")
        .map(|w| (w.kind, w.message))
        .collect();
    assert_eq!(w.len(), 2);
    assert_eq!(
        w[0].1,
        format!(
            "USB 0bda:8153 (interface class ff, vendor specific): no driver in this image \
             ({usb}/1-1.3/1-1.3:1.0, seen at scan network.wired.lan)"
        )
    );
    assert!(
        w[1].1
            .starts_with("acme:\\x1b[2J\\x1b]0;title\\x07: no driver"),
        "{}",
        w[1].1
    );
    let text = crate::render::report(&r);
    assert!(text.contains("Drivers loaded by modalias"), "{text}");
    assert!(
        text.contains(&format!(
            "usb_storage for USB 0781:5581 (interface class 08, mass storage) at \
             {usb}/1-1.2/1-1.2:1.0 (scan: storage)"
        )),
        "{text}"
    );
    assert!(text.contains("no-driver: USB 0bda:8153"), "{text}");
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
}

#[test]
fn the_context_says_where_the_boot_card_was_found() {
    let mut r = run(Vec::new());
    assert_eq!(context(&r).boot_card, None, "not recorded");
    r.boot_card = Some(benchboot_results::BootCard {
        nominal: "mmcblk0".into(),
        found: Some("mmcblk1".into()),
        signature: Some("0xdeadbeef".into()),
        how: "the whole disk whose MBR carries the image's disk signature 0xdeadbeef".into(),
    });
    let c = context(&r);
    assert_eq!(
        c.boot_card.as_deref(),
        Some("mmcblk1: the whole disk whose MBR carries the image's disk signature 0xdeadbeef")
    );
    assert!(format!("{:?}", context_grid(&c)).contains("boot card"));
    r.boot_card.as_mut().unwrap().found = None;
    r.boot_card.as_mut().unwrap().how = "no disk carries it\u{1b}".into();
    let line = context(&r).boot_card.unwrap();
    assert!(
        line.starts_with("mmcblk0 (the image's name for it, not found): no disk"),
        "{line}"
    );
    assert!(!line.contains('\u{1b}'));
}

#[test]
fn the_card_check_line_carries_the_whole_card_pass_and_its_fall() {
    const MIB: u64 = 1 << 20;
    let mut r = run(Vec::new());
    assert_eq!(card_check_line(&r), None);
    let report =
        benchboot_probe::fake::probed_in_full(64 * MIB, 16 * MIB, 40 * MIB, 4 * MIB, 20 * MIB);
    r.card_check = Some(benchboot_results::CardCheck {
        device: "/dev/mmcblk0".into(),
        report,
    });
    let line = card_check_line(&r).unwrap();
    assert!(
        line.starts_with("/dev/mmcblk0: genuine: 64.0 MiB claimed"),
        "{line}"
    );
    assert!(
        line.contains("; full pass: every sector held its data; wrote 64.0 MiB at "),
        "{line}"
    );
    assert!(
        line.ends_with("; write speed falls at 16.0 MiB: 40.0 -> 4.0 MiB/s"),
        "{line}"
    );
    // A document from elsewhere: a fall before its region, a count past u64, a stop.
    let f = r.card_check.as_mut().unwrap().report.full.as_mut().unwrap();
    f.region.0 = u64::MAX - 5;
    f.written_bytes = u64::MAX;
    f.stopped = Some("interrupted".into());
    f.bad.clear();
    f.first_bad = None;
    let line = card_check_line(&r).unwrap();
    assert!(line.contains("full pass: stopped before the end"), "{line}");
    assert!(line.ends_with("falls at 0 B: 40.0 -> 4.0 MiB/s"), "{line}");
}

/// The boot's stages in the context: seconds for each measured stage, QEMU's own start
/// marked EMULATED, a stage with no figure with its reason; nothing for old documents.
#[test]
fn the_context_gives_the_boot_time_by_stage() {
    use benchboot_results::Reading;
    let mut r = run(Vec::new());
    assert_eq!(context(&r).boot, None);
    r.boot.kernel_to_init_ns = Reading::ok(1_920_000_000, "CLOCK_BOOTTIME at PID 1's start");
    r.boot.init_to_first_step_ns = Reading::ok(4_200_000_000, "CLOCK_BOOTTIME");
    r.boot.before_kernel_ns = Reading::unavailable("BCM2835: no ARM generic timer");
    r.boot.init_to_link_ns = Reading::unavailable("no results link\u{1b}[2J");
    let line = context(&r).boot.unwrap();
    assert_eq!(
        line,
        "before the kernel's clock: not measured (BCM2835: no ARM generic timer); \
         kernel to PID 1 1.92 s; PID 1 to the first step 4.20 s; \
         PID 1 to the results link: not measured (no results link\\u{1b}[2J)"
    );
    r.emulated = true;
    r.boot.before_kernel_ns = Reading::ok(310_000_000, "CNTVCT/CNTFRQ under QEMU");
    assert!(context(&r)
        .boot
        .unwrap()
        .starts_with("before the kernel's clock 0.31 s (EMULATED: QEMU's own start);"));
    let g = context_grid(&context(&r));
    assert!(value(&g, "boot time by stage").starts_with("before the kernel's clock 0.31 s"));
}
