//! PID 1's storage steps: governor, disk identity, the sweep, device reads, random IOPS
//! and verification. Every measurement runs in a forked worker ([`worker::run_worker`]), is
//! announced on the console and recorded; every failure becomes an event and the plan
//! goes on. Board health ([`health`]) is read before and after every block size of a
//! target and mode (all repetitions) and every other step. `persist` is called after
//! each block size and each step.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use benchboot_plan::{DeviceRef, Filesystem, Plan, StorageTarget};
use benchboot_results::{
    iops, mib_per_s, Direction, HealthScope, RandomOp, RunResults, Severity, StorageMeasurement,
};
use rustix::mount::MountFlags;
use serde::{de::DeserializeOwned, Serialize};

use benchboot_storage::engine::Caps;
use benchboot_storage::os::refuse_ram_filesystem;
use benchboot_storage::sweep::{self, Place, WholeCache};

use crate::console::{case_line, say, tell, CaseResult};
use crate::{blkid, device, health, sys, wait, worker};

/// Where test partition `<label>` is mounted: `/mnt/<label>`.
const TARGETS_MNT: &str = "/mnt";
const SYS_BLOCK: &str = "/sys/class/block";
const DEV: &str = "/dev";

/// Runs `work` in a worker process, bounded by the plan's `supervision.worker_limit_ms`;
/// its value comes back as JSON. An error the work returns is an error event of `step`;
/// a crash, panic, error exit or a run past the limit is a [`WorkerFault`] (and an
/// event). Both are announced on the console; `None` then.
///
/// [`WorkerFault`]: benchboot_results::WorkerFault
pub(crate) fn in_worker<T: Serialize + DeserializeOwned>(
    results: &mut RunResults,
    step: &str,
    work: impl FnOnce() -> std::io::Result<T>,
) -> Option<T> {
    let limit = Duration::from_millis(results.plan.supervision.worker_limit_ms);
    defmt::debug!("{=str}: worker starts", step);
    let (outcome, elapsed_ns) = worker::run_worker(limit, || match work() {
        Ok(v) => serde_json::to_string(&v).unwrap_or_default(),
        Err(e) => format!("error: {e}"),
    });
    defmt::debug!("{=str}: worker ended after {=u64} ns", step, elapsed_ns);
    if let Ok(out) = &outcome {
        if let Ok(v) = serde_json::from_str::<T>(out) {
            return Some(v);
        }
    }
    say(&case_line(step, CaseResult::Fail, 0.0, "-"));
    match outcome {
        Ok(out) => {
            tell!(error, format!("{step}: {out}"); "{=str}: {=str}", step, out.as_str());
            results.event(step, Severity::Error, out);
        }
        Err(failure) => {
            tell!(
                error,
                format!("{step}: {failure}");
                "{=str}: {}",
                step,
                defmt::Display2Format(&failure)
            );
            results.worker_fault(step, failure, elapsed_ns);
        }
    }
    None
}

/// `mmcblk0p5` → `mmcblk0` (the disk holding a partition), via sysfs.
fn disk_of(name: &str) -> String {
    let dev = Path::new(SYS_BLOCK).join(name);
    if dev.join("partition").exists() {
        if let Some(disk) = dev.canonicalize().ok().and_then(|p| {
            p.parent()
                .and_then(|d| d.file_name())
                .map(|f| f.to_string_lossy().into_owned())
        }) {
            return disk;
        }
    }
    name.to_owned()
}

fn kernel_name(device: &str) -> &str {
    device.trim_start_matches("/dev/")
}

/// The targets with a `/dev/` path each: those named by `LABEL=`/`PARTLABEL=` are looked
/// up ([`blkid::wait_for`] under `sys_class_block` and `dev`), all of them until
/// `deadline`. A name that no device (or more than one) carries becomes an error event
/// `target.<label>` and the target is left out; the others go on.
fn name_devices(
    targets: &[StorageTarget],
    sys_class_block: &Path,
    dev: &Path,
    deadline: Instant,
    results: &mut RunResults,
) -> Vec<StorageTarget> {
    let mut named = Vec::new();
    for t in targets {
        let wanted = t.device_ref();
        if let DeviceRef::Path(_) = wanted {
            named.push(t.clone());
            continue;
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        match blkid::wait_for(sys_class_block, dev, wanted, wait) {
            Ok(path) => {
                say(&format!(
                    "target {}: {wanted} is {}",
                    t.label,
                    path.display()
                ));
                named.push(StorageTarget {
                    device: path.display().to_string(),
                    ..t.clone()
                });
            }
            Err(e) => {
                say(&format!("target {}: {e}", t.label));
                results.event(format!("target.{}", t.label), Severity::Error, e);
            }
        }
    }
    named
}

/// Makes a target ready to measure: waits for its device, mounts filesystems, refuses RAM
/// filesystems, finds the O_DIRECT alignment and (raw) the capacity.
fn resolve(target: &StorageTarget, wait: Duration) -> Result<Place, String> {
    if !wait::wait_for(Path::new(&target.device), wait) {
        return Err(format!("{} never appeared", target.device));
    }
    let name = kernel_name(&target.device);
    let (logical, _) = sweep::block_sizes_of(Path::new(SYS_BLOCK), name)
        .map_err(|e| format!("block size of {name}: {e}"))?;
    let (path, capacity) = match target.filesystem {
        Filesystem::Raw => {
            let sectors: u64 =
                std::fs::read_to_string(Path::new(SYS_BLOCK).join(name).join("size"))
                    .ok()
                    .and_then(|s| s.trim().parse().ok())
                    .ok_or_else(|| format!("size of {name} unknown"))?;
            (PathBuf::from(&target.device), Some(sectors * 512))
        }
        Filesystem::Dir => (PathBuf::from(&target.device), None),
        fs => {
            let mnt = PathBuf::from(TARGETS_MNT).join(&target.label);
            sys::mount(
                &target.device,
                &mnt.to_string_lossy(),
                fs.name(),
                MountFlags::NOATIME,
            )
            .map_err(|e| format!("mount {} ({}): {e}", target.device, fs.name()))?;
            refuse_ram_filesystem(&mnt)?;
            (mnt, None)
        }
    };
    Ok(Place {
        target: target.clone(),
        path,
        logical_block_size: logical,
        capacity,
    })
}

pub fn run_storage(
    plan: &Plan,
    results: &mut RunResults,
    persist: &mut dyn FnMut(&mut RunResults),
) {
    let sp = &plan.storage;
    if let Some(g) = &sp.governor {
        match device::set_governor(Path::new("/sys/devices/system/cpu"), g) {
            Ok(v) => results.system.governor = v,
            Err(e) => results.event("governor", Severity::Warning, e),
        }
    }
    let wait = Duration::from_millis(sp.device_wait_ms);
    let targets = name_devices(
        &sp.targets,
        Path::new(SYS_BLOCK),
        Path::new(DEV),
        Instant::now() + wait,
        results,
    );
    let mut disks: Vec<String> = targets
        .iter()
        .map(|t| disk_of(kernel_name(&t.device)))
        .collect();
    if let Some(d) = &sp.device_reads {
        disks.extend(d.disks.iter().map(|x| kernel_name(x).to_owned()));
    }
    disks.sort();
    disks.dedup();
    for d in &disks {
        results.devices.push(device::identify(
            Path::new("/sys/block"),
            Path::new("/sys/kernel/debug"),
            d,
        ));
    }

    let mut places = Vec::new();
    for t in &targets {
        match resolve(t, wait) {
            Ok(p) => places.push(p),
            Err(e) => {
                say(&format!("target {}: {e}", t.label));
                results.event(format!("target.{}", t.label), Severity::Error, e);
            }
        }
    }
    let caps = Caps {
        bytes: sp.byte_cap,
        time_ns: sp.time_cap_ms * 1_000_000,
    };
    for place in &places {
        for &mode in &sp.modes {
            for &bs in &sp.block_sizes {
                let cell = format!("storage.{}.{}.bs{bs}", place.target.label, mode.name());
                let scope = HealthScope::Storage {
                    target: place.target.label.clone(),
                    mode,
                    block_size: bs,
                };
                health::around(results, &cell, scope, |results| {
                    for rep in 0..sp.repetitions {
                        let step = format!("{cell}.r{rep}");
                        let pair: Option<Vec<StorageMeasurement>> =
                            in_worker(results, &step, || {
                                sweep::measure_pair(place, caps, bs, mode, rep, &WholeCache)
                            });
                        for m in pair.into_iter().flatten() {
                            let dir = if m.direction == Direction::Write {
                                "write"
                            } else {
                                "read"
                            };
                            tell!(
                                info,
                                case_line(
                                    &format!("{step}.{dir}"),
                                    CaseResult::Pass,
                                    mib_per_s(m.bytes, m.nanos),
                                    "MiB/s",
                                );
                                "{=str}.{=str}: {=u64} B in {=u64} ns",
                                step.as_str(),
                                dir,
                                m.bytes,
                                m.nanos
                            );
                            results.storage.push(m);
                        }
                    }
                });
                persist(results);
            }
        }
        place.clean_up(sweep::BENCH_FILE);
    }
    if let Some(d) = &sp.device_reads {
        for disk in &d.disks {
            let step = format!("device-read.{}", kernel_name(disk));
            let scope = HealthScope::DeviceRead {
                device: disk.clone(),
            };
            if let Some(reads) = health::around(results, &step, scope, |results| {
                in_worker(results, &step, || {
                    sweep::device_reads(Path::new(disk), d, &WholeCache)
                })
            }) {
                for r in &reads {
                    say(&case_line(
                        &format!("{step}.{:?}", r.kind).to_lowercase(),
                        CaseResult::Pass,
                        mib_per_s(r.bytes, r.nanos),
                        "MiB/s",
                    ));
                }
                results.device_reads.extend(reads);
            }
        }
        persist(results);
    }
    if let Some(rp) = &sp.random {
        for label in &rp.targets {
            let Some(place) = places.iter().find(|p| &p.target.label == label) else {
                continue;
            };
            let step = format!("random.{label}.prepare");
            let Some(region) = in_worker(results, &step, || {
                sweep::prepare_region(place, rp.region_bytes)
            }) else {
                continue;
            };
            for &qd in &rp.queue_depths {
                for op in [RandomOp::Read, RandomOp::Write] {
                    let step = format!("random.{label}.{op:?}.qd{qd}").to_lowercase();
                    let dur = Duration::from_millis(rp.duration_ms);
                    let scope = HealthScope::Random {
                        target: label.clone(),
                        op,
                        queue_depth: qd,
                    };
                    if let Some(r) = health::around(results, &step, scope, |results| {
                        in_worker(results, &step, || {
                            sweep::random_io(place, op, rp.block_size, region, qd, dur)
                        })
                    }) {
                        say(&case_line(
                            &step,
                            CaseResult::Pass,
                            iops(r.ios, r.nanos),
                            "IOPS",
                        ));
                        results.random.push(r);
                    }
                }
            }
            place.clean_up(sweep::RANDOM_FILE);
            persist(results);
        }
    }
    if sp.verify {
        for place in &places {
            let step = format!("verify.{}", place.target.label);
            let scope = HealthScope::Verify {
                target: place.target.label.clone(),
            };
            if let Some(v) = health::around(results, &step, scope, |results| {
                in_worker(results, &step, || {
                    sweep::verify(place, sp.byte_cap, 0xbb, &WholeCache)
                })
            }) {
                let ok = v.first_mismatch.is_none();
                say(&case_line(
                    &step,
                    if ok {
                        CaseResult::Pass
                    } else {
                        CaseResult::Fail
                    },
                    v.bytes as f64,
                    "bytes",
                ));
                if let Some(at) = v.first_mismatch {
                    results.event(
                        &step,
                        Severity::Error,
                        format!("pattern mismatch at byte {at}: fake capacity or failing card"),
                    );
                }
                results.verify.push(v);
            }
        }
        persist(results);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake `/sys/class/block` + `/dev` with one partition `sda1` whose ext
    /// filesystem is labelled `BBUSB`.
    fn fake_system(root: &Path) -> (PathBuf, PathBuf) {
        let (sys, dev) = (root.join("sys"), root.join("dev"));
        std::fs::create_dir_all(sys.join("sda1")).unwrap();
        std::fs::write(sys.join("sda1/size"), "64\n").unwrap();
        std::fs::write(sys.join("sda1/partition"), "1\n").unwrap();
        std::fs::create_dir_all(&dev).unwrap();
        let mut sb = vec![0u8; 4096];
        sb[1024 + 56..1024 + 58].copy_from_slice(&0xEF53u16.to_le_bytes());
        sb[1024 + 120..1024 + 125].copy_from_slice(b"BBUSB");
        std::fs::write(dev.join("sda1"), sb).unwrap();
        (sys, dev)
    }

    fn target(label: &str, device: &str) -> StorageTarget {
        StorageTarget {
            label: label.into(),
            device: device.into(),
            filesystem: Filesystem::Ext4,
            optional: false,
        }
    }

    #[test]
    fn labels_become_paths_and_a_missing_one_is_an_event() {
        let root = tempfile::tempdir().unwrap();
        let (sys, dev) = fake_system(root.path());
        let mut results = RunResults::new(
            "t".into(),
            Plan::example(),
            benchboot_storage::system::system_info(0),
        );
        let targets = [
            target("ext4", "/dev/mmcblk0p7"),
            target("gone", "LABEL=NOPE"),
            target("usb", "LABEL=BBUSB"),
            target("gpt", "PARTLABEL=nothing"),
        ];
        let deadline = Instant::now() + Duration::from_millis(200);
        let named = name_devices(&targets, &sys, &dev, deadline, &mut results);
        let got: Vec<(&str, String)> = named
            .iter()
            .map(|t| (t.label.as_str(), t.device.clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("ext4", "/dev/mmcblk0p7".to_owned()),
                ("usb", dev.join("sda1").display().to_string()),
            ],
            "the sweep goes on with the targets it found"
        );
        let events: Vec<(&str, Severity, &str)> = results
            .events
            .iter()
            .map(|e| (e.step.as_str(), e.severity, e.message.as_str()))
            .collect();
        assert_eq!(events.len(), 2, "{events:?}");
        assert_eq!(events[0].0, "target.gone");
        assert_eq!(events[0].1, Severity::Error);
        assert!(
            events[0].2.starts_with("no block device has LABEL=NOPE"),
            "{events:?}"
        );
        assert_eq!(events[1].0, "target.gpt");
        assert!(events[1].2.contains("PARTLABEL=nothing"), "{events:?}");
    }
}
