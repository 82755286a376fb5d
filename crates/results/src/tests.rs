//! Results document tests: round trip, version checks, maths, the A1 verdict.

use super::*;

fn measurement(
    target: &str,
    bs: u64,
    direction: Direction,
    mode: Mode,
    bytes: u64,
    nanos: u64,
) -> StorageMeasurement {
    StorageMeasurement {
        target: target.into(),
        filesystem: Filesystem::Ext4,
        block_size: bs,
        direction,
        mode,
        requested_mode: mode,
        note: None,
        repetition: 0,
        bytes,
        nanos,
        stopped_by: StopReason::Bytes,
        begin_ns: None,
        latency: None,
        timeline: Vec::new(),
    }
}

pub(crate) fn sample() -> RunResults {
    let mut r = RunResults::new(
        "rpi-zero-w-abc".into(),
        Plan::example(),
        SystemInfo::default(),
    );
    r.storage.push(measurement(
        "ext4",
        4096,
        Direction::Write,
        Mode::Sync,
        1 << 20,
        500_000_000,
    ));
    r.push_census(Census::new(
        "before-storage",
        vec![Process {
            pid: 1,
            ppid: 0,
            comm: "init".into(),
        }],
        (0..40).map(|i| format!("kworker/0:{i}")).collect(),
    ));
    r.event("mount.vfat", Severity::Error, "ENODEV");
    r
}

#[test]
fn a_newer_minor_version_reads_with_the_fields_it_does_not_know_left_out() {
    let mut v: serde_json::Value = serde_json::from_str(&sample().to_json()).unwrap();
    v["schema_version"]["minor"] = (SCHEMA_MINOR + 1).into();
    // A field the results gained, one the plan gained, one deep in the plan.
    v["gpu"] = serde_json::json!({"bandwidth": [1, 2]});
    v["plan"]["gpu"] = serde_json::json!({"enabled": true});
    v["plan"]["storage"]["targets"][0]["bus"] = "usb".into();
    v["plan"]["network"]["bluetooth"] = serde_json::json!([{"channel": 6}]);
    let r = RunResults::from_json(&v.to_string()).unwrap();
    assert_eq!(r.plan, sample().plan);
    assert_eq!(r.storage, sample().storage);
    let note = r.newer_schema_note().unwrap();
    assert!(
        note.contains(&format!("1.{} is newer", SCHEMA_MINOR + 1)),
        "{note}"
    );
    assert_eq!(sample().newer_schema_note(), None);
}

#[test]
fn round_trip() {
    let mut r = sample();
    r.random.push(RandomIo {
        target: "ext4".into(),
        op: RandomOp::Read,
        block_size: 4096,
        queue_depth: 1,
        region_bytes: 1 << 24,
        ios: 1000,
        nanos: 1_000_000_000,
        latency: None,
    });
    r.verify.push(Verify {
        target: "ext4".into(),
        bytes: 4096,
        first_mismatch: Some(512),
    });
    let back = RunResults::from_json(&r.to_json()).unwrap();
    assert_eq!(back, r);
    assert!(back.census[0].only_pid1());
}

/// Saved again by Windows Notepad: UTF-8 with a byte order mark first. It was refused
/// as "not JSON" (`expected value at line 1 column 1`).
#[test]
fn a_document_behind_a_utf8_bom_is_read() {
    let r = sample();
    let text = format!("\u{feff}{}", r.to_json());
    assert_eq!(RunResults::from_json(&text).unwrap(), r);
    // Only one, and only first: a second one is an error that says where.
    let err = RunResults::from_json(&format!("\u{feff}{text}")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "results: not JSON: expected value at line 1 column 1"
    );
}

/// A device or a pipe has no end: a document reader stops one byte past the bound.
#[test]
fn read_document_is_bounded() {
    let e = crate::read_document(std::io::repeat(b' ')).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge);
    assert_eq!(
        e.to_string(),
        "more than a results document has (64 MiB at most)"
    );
    assert_eq!(crate::read_document(&b"{}"[..]).unwrap(), b"{}");
}

#[test]
fn other_major_version_is_refused_by_name() {
    let text = sample()
        .to_json()
        .replacen("\"major\": 1", "\"major\": 2", 1);
    let err = RunResults::from_json(&text).unwrap_err();
    assert!(
        matches!(err, ResultsError::UnsupportedVersion { found: 2 }),
        "{err}"
    );
    assert!(err.to_string().contains("update benchboot"));
}

#[test]
fn missing_version_is_refused() {
    let err = RunResults::from_json("{\"board\": \"x\"}").unwrap_err();
    assert!(matches!(err, ResultsError::NoVersion));
}

#[test]
fn a_version_that_is_not_a_whole_number_is_named() {
    for bad in ["-1", "\"1.1\"", "1.5"] {
        let text = sample()
            .to_json()
            .replacen("\"major\": 1", &format!("\"major\": {bad}"), 1);
        let err = RunResults::from_json(&text).unwrap_err();
        assert!(
            matches!(&err, ResultsError::BadVersion(v) if v == bad),
            "{err}"
        );
        assert!(err.to_string().contains("not a whole number"), "{err}");
    }
}

#[test]
fn values_the_board_cannot_write_are_refused_by_field() {
    let refused = |edit: &dyn Fn(&mut RunResults), field: &str| {
        let mut r = sample();
        r.random.push(random(RandomOp::Read, 1, 1000));
        edit(&mut r);
        match RunResults::from_json(&r.to_json()) {
            Err(ResultsError::Value { field: f, .. }) => assert_eq!(f, field),
            other => panic!("{field}: {other:?}"),
        }
    };
    refused(&|r| r.storage[0].block_size = 0, "storage[0].block_size");
    refused(&|r| r.storage[0].nanos = 0, "storage[0].nanos");
    refused(&|r| r.random[0].block_size = 0, "random[0].block_size");
    refused(&|r| r.random[0].ios = u64::MAX, "random[0].ios");
    refused(&|r| r.random[0].nanos = 0, "random[0].nanos");
    // Nothing moved in no time is an empty pass, not a damaged document.
    let mut r = sample();
    r.storage[0].bytes = 0;
    r.storage[0].nanos = 0;
    assert!(RunResults::from_json(&r.to_json()).is_ok());
    let err = RunResults::from_json(&{
        let mut r = sample();
        r.storage[0].nanos = 0;
        r.to_json()
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "results: storage[0].nanos: 0 ns for 1048576 bytes: a timed region cannot be \
         empty; the document is damaged or was not written by benchboot"
    );
}

#[test]
fn minor_version_0_documents_still_read() {
    // 1.0 had no device_reads/random/verify/devices and no requested_mode/note.
    let mut v: serde_json::Value = serde_json::from_str(&sample().to_json()).unwrap();
    let o = v.as_object_mut().unwrap();
    for k in ["device_reads", "random", "verify", "devices"] {
        o.remove(k);
    }
    let m = o["storage"][0].as_object_mut().unwrap();
    m.remove("requested_mode");
    m.remove("note");
    let back = RunResults::from_json(&v.to_string()).unwrap();
    assert_eq!(back.storage[0].requested_mode, Mode::Sync);
}

#[test]
fn minor_version_2_documents_without_health_still_read() {
    // 1.2 had no `health`; it reads as no snapshots.
    let mut r = sample();
    r.health.push(StepHealth {
        step: "verify.ext4".into(),
        scope: HealthScope::Verify {
            target: "ext4".into(),
        },
        before: Health::default(),
        after: Health {
            at_ns: 5,
            throttled: Reading::ok(Throttled::from_raw(0x50005), "mailbox:GET_THROTTLED"),
            ..Health::default()
        },
        interrupts: Reading::default(),
    });
    let back = RunResults::from_json(&r.to_json()).unwrap();
    assert_eq!(back, r, "health round-trips");
    let mut v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("health");
    o["schema_version"]["minor"] = 2.into();
    let old = RunResults::from_json(&v.to_string()).unwrap();
    assert!(old.health.is_empty());
    assert_eq!(old.schema_version.minor, 2);
}

/// A 1.4 document: census verdicts and kernel thread names, interrupts per step, the
/// kernel command line and the modules.
fn isolation_sample() -> RunResults {
    let mut r = sample();
    r.system.kernel_cmdline = Reading::ok(
        "console=ttyAMA0 benchboot.plan=qemu rdinit=/init".to_owned(),
        "/proc/cmdline",
    );
    r.system.modules = Reading::ok(
        vec![KernelModule {
            name: "dwc2".into(),
            size_bytes: 180_224,
            refcount: Some(0),
            used_by: vec![],
        }],
        "/proc/modules",
    );
    r.health.push(StepHealth {
        step: "storage.ext4.sync.bs4096".into(),
        scope: HealthScope::Storage {
            target: "ext4".into(),
            mode: Mode::Sync,
            block_size: 4096,
        },
        before: Health::default(),
        after: Health::default(),
        interrupts: Reading::ok(
            vec![
                InterruptDelta {
                    source: "104 mmc1".into(),
                    count: 12_345,
                },
                InterruptDelta {
                    source: "IPI0 Rescheduling interrupts".into(),
                    count: 7,
                },
            ],
            "/proc/interrupts",
        ),
    });
    r
}

#[test]
fn isolation_proof_round_trips() {
    let r = isolation_sample();
    assert_eq!(r.schema_version.minor, SCHEMA_MINOR);
    assert_eq!(r.isolated, Some(true));
    assert_eq!(r.census[0].kernel_thread_names.len(), 40);
    let back = RunResults::from_json(&r.to_json()).unwrap();
    assert_eq!(back, r);
    let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(v["census"][0]["isolated"], true);
    assert_eq!(v["census"][0]["foreign"], serde_json::json!([]));
    assert_eq!(
        v["health"][0]["interrupts"]["value"][0],
        serde_json::json!({"source": "104 mmc1", "count": 12345})
    );
}

#[test]
fn minor_version_3_documents_without_the_isolation_proof_still_read() {
    // 1.3 had no run/census verdict, kernel thread names, interrupts, command line or
    // modules: they read as "not recorded" and the verdict is worked out.
    let mut v: serde_json::Value = serde_json::from_str(&isolation_sample().to_json()).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("isolated");
    o["schema_version"]["minor"] = 3.into();
    for k in ["kernel_cmdline", "modules"] {
        o["system"].as_object_mut().unwrap().remove(k);
    }
    let c = o["census"][0].as_object_mut().unwrap();
    for k in ["kernel_thread_names", "isolated", "foreign"] {
        c.remove(k);
    }
    o["health"][0].as_object_mut().unwrap().remove("interrupts");
    let old = RunResults::from_json(&v.to_string()).unwrap();
    assert_eq!(old.isolated, None);
    assert_eq!(old.census[0].isolated, None);
    assert!(old.census[0].is_isolated());
    assert!(old.isolation().isolated);
    assert_eq!(old.census[0].kernel_threads, 40);
    assert!(old.system.kernel_cmdline.value().is_none());
    assert!(old.system.modules.value().is_none());
    assert!(old.health[0].interrupts.value().is_none());
}

#[test]
fn mib_per_s_uses_binary_megabytes() {
    assert_eq!(mib_per_s(1 << 20, 1_000_000_000), 1.0);
    assert_eq!(mib_per_s(10 << 20, 500_000_000), 20.0);
    assert_eq!(mib_per_s(5, 0), 0.0);
    assert_eq!(iops(1500, 500_000_000), 3000.0);
}

#[test]
fn summary_median() {
    let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
    assert_eq!((s.min, s.median, s.max, s.count), (1.0, 2.0, 3.0, 3));
    let s = Summary::of(&[4.0, 1.0, 2.0, 3.0]).unwrap();
    assert_eq!(s.median, 2.5);
    assert!(Summary::of(&[]).is_none());
}

#[test]
fn census_with_another_process_is_not_pid1_only() {
    let mut c = sample().census.remove(0);
    c.user_processes.push(Process {
        pid: 77,
        ppid: 1,
        comm: "sh".into(),
    });
    assert!(!c.only_pid1());
}

fn random(op: RandomOp, qd: u32, ios: u64) -> RandomIo {
    RandomIo {
        target: "raw".into(),
        op,
        block_size: 4096,
        queue_depth: qd,
        region_bytes: 1 << 26,
        ios,
        nanos: 1_000_000_000,
        latency: None,
    }
}

#[test]
fn a1_verdict_uses_the_published_thresholds() {
    let mut plan = Plan::example();
    plan.storage.block_sizes = vec![4096, 1 << 20];
    let mut r = RunResults::new("x".into(), plan, SystemInfo::default());
    // 12 MB/s direct sequential write at 1 MiB; 4 KiB blocks do not count.
    r.storage.push(measurement(
        "raw",
        1 << 20,
        Direction::Write,
        Mode::Direct,
        12_000_000,
        1_000_000_000,
    ));
    r.storage.push(measurement(
        "raw",
        4096,
        Direction::Write,
        Mode::Direct,
        99_000_000,
        1_000_000_000,
    ));
    r.random.push(random(RandomOp::Write, 1, 600));
    r.random.push(random(RandomOp::Read, 1, 1_600));
    r.random.push(random(RandomOp::Read, 8, 9_999));
    let v = a1_verdict(&r, "raw").unwrap();
    assert_eq!(
        (v.seq_write_bps, v.random_write_iops, v.random_read_iops),
        (12e6, 600.0, 1600.0)
    );
    assert!(v.passes);
    // 1,499 random-read IOPS at depth 1 fails, whatever depth 8 did.
    r.random[1].ios = 1_499;
    assert!(!a1_verdict(&r, "raw").unwrap().passes);
    // 9,999 KB/s sequential write fails.
    r.random[1].ios = 1_600;
    r.storage[0].bytes = 9_999_000;
    assert!(!a1_verdict(&r, "raw").unwrap().passes);
    // A missing figure gives no verdict at all.
    assert!(a1_verdict(&r, "ext4").is_none());
}

#[test]
fn worker_faults_are_recorded_with_an_event() {
    let mut r = sample();
    let before = r.events.len();
    r.worker_fault(
        "fault.segfault",
        WorkerFailure::Signal {
            signal: 11,
            name: "SIGSEGV".into(),
        },
        12_500_000,
    );
    r.worker_fault(
        "fault.hang",
        WorkerFailure::TimedOut { limit_ms: 3000 },
        3_001_000_000,
    );
    let events = &r.events[before..];
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].severity, Severity::Error);
    assert_eq!(
        events[0].message,
        "worker killed by signal 11 (SIGSEGV) after 0.013 s"
    );
    assert_eq!(
        events[1].message,
        "worker still running at its 3000 ms limit: killed after 3.001 s"
    );
    let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(
        v["faults"][0],
        serde_json::json!({"step": "fault.segfault", "elapsed_ns": 12_500_000u64,
            "how": "signal", "signal": 11, "name": "SIGSEGV"})
    );
    assert_eq!(v["faults"][1]["how"], "timed-out");
    let back = RunResults::from_json(&r.to_json()).unwrap();
    assert_eq!(back.faults, r.faults);
    // A 1.4 document has no `faults`: read as none.
    let mut old = v.clone();
    old.as_object_mut().unwrap().remove("faults");
    assert!(RunResults::from_json(&old.to_string())
        .unwrap()
        .faults
        .is_empty());
}

#[test]
fn command_runs_round_trip_and_older_documents_have_none() {
    let mut r = sample();
    let text = r.to_json();
    assert!(!text.contains("\"commands\""), "no commands, no field");
    assert!(RunResults::from_json(&text).unwrap().commands.is_empty());
    r.commands.push(CommandRun {
        id: "coremark".into(),
        path: "bin/coremark".into(),
        exit_code: None,
        elapsed_ns: 5_000_000_000,
        measurements: command::parse_output("case=score value=812.25 units=iterations/s\n"),
        health: Some(CommandHealth {
            before: Health::default(),
            after: Health::default(),
            interrupts: Reading::Unavailable {
                reason: "not read".into(),
            },
        }),
    });
    let text = r.to_json();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["commands"][0]["measurements"][0]["value"], 812.25);
    assert_eq!(v["commands"][0]["exit_code"], serde_json::Value::Null);
    assert_eq!(
        v["commands"][0]["health"]["interrupts"]["reason"],
        "not read"
    );
    assert_eq!(RunResults::from_json(&text).unwrap(), r);
}

/// A document of the right version but the wrong shape says where (the key path, line
/// and column) and what in words: never a Rust type name.
#[test]
fn a_shape_error_names_the_key_and_says_the_range_in_words() {
    let r = RunResults::new(
        "r".into(),
        benchboot_plan::Plan::example(),
        SystemInfo::default(),
    );
    let mut v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    v["schema_version"]["minor"] = serde_json::json!(u64::MAX);
    let e = RunResults::from_json(&v.to_string())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(
            "results: schema 1.x document does not match: at schema_version.minor: invalid \
             value: integer `18446744073709551615`, expected a whole number from 0 to \
             4294967295 (line 1 column "
        ),
        "{e}"
    );
    assert!(!e.contains("u32"), "{e}");
    v["schema_version"]["minor"] = 1.into();
    v["storage"] = serde_json::json!([{ "bytes": "many" }]);
    let e = RunResults::from_json(&v.to_string())
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not match: at storage[0]"), "{e}");
}

#[test]
fn a_pass_begin_is_kept_and_older_documents_read_without_it() {
    let mut m = measurement("ext4", 4096, Direction::Write, Mode::Sync, 1 << 20, 1_000);
    let old = serde_json::to_value(&m).unwrap();
    assert!(old.get("begin_ns").is_none(), "{old}");
    let back: StorageMeasurement = serde_json::from_value(old).unwrap();
    assert_eq!(back.begin_ns, None);
    m.begin_ns = Some(12_345_678_901);
    let v = serde_json::to_value(&m).unwrap();
    assert_eq!(v["begin_ns"], 12_345_678_901u64);
    let back: StorageMeasurement = serde_json::from_value(v).unwrap();
    assert_eq!(back, m);
}

/// TCP_INFO figures (schema 1.14): written only when measured, read back whole, absent
/// from older documents, and a value no kernel gives (an srtt past `u32`, a negative
/// count) refused with the key's path.
#[test]
fn tcp_info_figures_round_trip_and_absurd_ones_are_refused_by_key() {
    use crate::counters::NetDirection;
    use crate::network::{NetInterval, TcpSample, TcpTotals, ThroughputRun};
    let sample_tcp = TcpSample {
        retransmits: 4,
        cwnd_bytes: 14_480,
        srtt_us: 2_500,
        srtt_max_us: 3_100,
        rttvar_us: 400,
        streams: 2,
    };
    let interval = NetInterval {
        start_ns: 0,
        end_ns: 1_000_000_000,
        bytes: 1 << 20,
        board_cpu: Default::default(),
        host_cpu: Default::default(),
        board_tcp: Some(sample_tcp),
        host_tcp: None,
    };
    let mut r = sample();
    r.network.throughput.push(ThroughputRun {
        link: "ncm".into(),
        direction: NetDirection::BoardToHost,
        streams: 2,
        omit_ns: 0,
        intervals: vec![interval.clone()],
        bytes: 1 << 20,
        nanos: 1_000_000_000,
        board_cpu: Default::default(),
        host_cpu: Default::default(),
        board_tcp: TcpTotals::of([sample_tcp]),
        host_tcp: None,
    });
    let text = r.to_json();
    assert!(!text.contains("host_tcp"), "absent figures are not written");
    let back = RunResults::from_json(&text).unwrap();
    assert_eq!(back.network.throughput, r.network.throughput);
    assert_eq!(
        back.network.throughput[0].sender_tcp(),
        Some(TcpTotals {
            retransmits: 4,
            srtt_us: 2_500,
            srtt_max_us: 3_100
        })
    );

    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let run = &mut v["network"]["throughput"][0];
    run.as_object_mut().unwrap().remove("board_tcp");
    run["intervals"][0]
        .as_object_mut()
        .unwrap()
        .remove("board_tcp");
    let old = RunResults::from_json(&v.to_string()).unwrap();
    assert_eq!(old.network.throughput[0].board_tcp, None);
    assert_eq!(old.network.throughput[0].intervals[0].board_tcp, None);

    for (key, absurd) in [
        ("srtt_us", serde_json::json!(5_000_000_000u64)),
        ("retransmits", serde_json::json!(-1)),
    ] {
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["network"]["throughput"][0]["intervals"][0]["board_tcp"][key] = absurd;
        let e = RunResults::from_json(&v.to_string())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!(
                "network.throughput[0].intervals[0].board_tcp.{key}"
            )),
            "{e}"
        );
    }
}
