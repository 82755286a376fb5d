//! Results document tests: round trip, version checks, maths.

use super::*;
use benchboot_plan::{NetworkPlan, ResultsTarget, StoragePlan};

fn plan() -> Plan {
    Plan {
        board: "rpi-zero-w".into(),
        emulated: true,
        modules: vec![],
        results: ResultsTarget {
            device: "/dev/mmcblk0p2".into(),
            file: "results.json".into(),
        },
        storage: StoragePlan {
            targets: vec![],
            block_sizes: vec![4096],
            byte_cap: 1 << 20,
            time_cap_ms: 1000,
            repetitions: 1,
            device_wait_ms: 1000,
        },
        network: NetworkPlan {
            interface: "usb0".into(),
            address: [10, 0, 2, 15],
            prefix_len: 24,
            port: 8080,
            interface_wait_ms: 1000,
        },
    }
}

fn sample() -> RunResults {
    let mut r = RunResults::new("rpi-zero-w-abc".into(), plan(), SystemInfo::default());
    r.storage.push(StorageMeasurement {
        target: "ext4".into(),
        filesystem: Filesystem::Ext4,
        block_size: 4096,
        direction: Direction::Write,
        mode: IoMode::Sync,
        repetition: 0,
        bytes: 1 << 20,
        nanos: 500_000_000,
        stopped_by: StopReason::Bytes,
    });
    r.census.push(Census {
        at: "before-storage".into(),
        user_processes: vec![Process {
            pid: 1,
            ppid: 0,
            comm: "init".into(),
        }],
        kernel_threads: 40,
    });
    r.event("mount.vfat", Severity::Error, "ENODEV");
    r
}

#[test]
fn round_trip() {
    let r = sample();
    let back = RunResults::from_json(&r.to_json()).unwrap();
    assert_eq!(back, r);
    assert!(back.census[0].only_pid1());
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
fn mib_per_s_uses_binary_megabytes() {
    assert_eq!(mib_per_s(1 << 20, 1_000_000_000), 1.0);
    assert_eq!(mib_per_s(10 << 20, 500_000_000), 20.0);
    assert_eq!(mib_per_s(5, 0), 0.0);
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
