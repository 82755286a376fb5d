//! PID 1's storage steps: governor, disk identity, the sweep, device reads, random IOPS
//! and verification. Every measurement runs in a forked worker ([`worker::run_worker`]), is
//! announced on the console and recorded; every failure becomes an event and the plan
//! goes on. Board health ([`health`]) is read before and after every block size of a
//! target and mode (all repetitions) and every other step. `persist` is called after
//! each block size and each step.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use benchboot_plan::{Bus, DeviceRef, Filesystem, Plan, StorageTarget, BUS_PREFIX};
use benchboot_results::name::{NameKind, SafeName};
use benchboot_results::{
    Direction, HealthScope, RandomOp, RunResults, Severity, StorageMeasurement,
};
use rustix::mount::MountFlags;
use serde::{de::DeserializeOwned, Serialize};

use benchboot_storage::engine::Caps;
use benchboot_storage::os::refuse_ram_filesystem;
use benchboot_storage::sweep::{self, Place, WholeCache};

use benchboot_console::figures;

use crate::console::{self, say, tell};
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
    in_worker_for(results, step, limit, work)
}

/// [`in_worker`] with its own time limit (a step whose plan sets one).
pub(crate) fn in_worker_for<T: Serialize + DeserializeOwned>(
    results: &mut RunResults,
    step: &str,
    limit: Duration,
    work: impl FnOnce() -> std::io::Result<T>,
) -> Option<T> {
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
    blkid::disk_of(Path::new(SYS_BLOCK), name)
}

fn kernel_name(device: &str) -> &str {
    device.trim_start_matches("/dev/")
}

/// Where PID 1 looks for the devices a plan names, and until when: one deadline shared
/// by every target and device read, so devices that never come cost the plan's
/// `device_wait_ms` once, not once each.
struct Finder<'a> {
    /// `/sys/class/block` (a fake tree in tests).
    sys_class_block: &'a Path,
    /// `/dev`.
    dev: &'a Path,
    /// Kernel name of the disk the board booted from (the one holding the results
    /// partition): never a `BUS=` disk.
    boot_disk: String,
    deadline: Instant,
}

impl Finder<'_> {
    /// The path of `wanted` ([`blkid::wait_for`] until the shared deadline): the one
    /// place `LABEL=`, `PARTLABEL=` and `BUS=` names become `/dev/` paths.
    ///
    /// # Errors
    /// Not found by the deadline, ambiguous, or an unknown bus (the message says which).
    fn find(&self, wanted: DeviceRef<'_>) -> Result<PathBuf, String> {
        let wait = self.deadline.saturating_duration_since(Instant::now());
        blkid::wait_for(
            self.sys_class_block,
            self.dev,
            wanted,
            &self.boot_disk,
            wait,
        )
    }
}

/// The severity of a target's device not being there: a warning for an optional
/// target (the run goes on without it, as planned; results have no lower level), else
/// an error.
fn missing_severity(optional: bool) -> Severity {
    if optional {
        Severity::Warning
    } else {
        Severity::Error
    }
}

/// Records that target `t` is left out because of `why` (console line and event
/// `target.<label>`, [`missing_severity`]).
fn target_missing(results: &mut RunResults, t: &StorageTarget, why: String) {
    let why = if t.optional {
        format!("{why}; optional target, left out")
    } else {
        why
    };
    say(&format!("target {}: {why}", t.label));
    results.event(
        format!("target.{}", t.label),
        missing_severity(t.optional),
        why,
    );
}

/// The targets with a `/dev/` path each: those named by `LABEL=`, `PARTLABEL=` or
/// `BUS=` are looked up ([`Finder::find`]). A name that no device (or more than one)
/// carries becomes an event `target.<label>` (an error, a warning for an optional
/// target) and the target is left out; the others go on. Paths are left as they are
/// ([`resolve`] waits for them).
fn name_devices(
    targets: &[StorageTarget],
    finder: &Finder<'_>,
    results: &mut RunResults,
) -> Vec<StorageTarget> {
    let mut named = Vec::new();
    for t in targets {
        let wanted = t.device_ref();
        if let DeviceRef::Path(_) = wanted {
            named.push(t.clone());
            continue;
        }
        match finder.find(wanted) {
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
            Err(e) => target_missing(results, t, e),
        }
    }
    named
}

/// The disks of the device reads as `/dev/` paths: `BUS=<bus>` entries found as
/// targets are ([`Finder::find`], the same disk a `BUS=` target of the plan got);
/// one not found is an event `device-read.<entry>` (a warning when an optional target
/// names the same bus, else an error) and is skipped.
fn device_read_disks(
    disks: &[String],
    targets: &[StorageTarget],
    finder: &Finder<'_>,
    results: &mut RunResults,
) -> Vec<String> {
    let mut out = Vec::new();
    for d in disks {
        let Some(bus) = d.strip_prefix(BUS_PREFIX) else {
            out.push(d.clone());
            continue;
        };
        match finder.find(DeviceRef::WholeDisk(Bus::from_name(bus))) {
            Ok(path) => {
                say(&format!("device read {d}: {}", path.display()));
                out.push(path.display().to_string());
            }
            Err(e) => {
                let optional = targets.iter().any(|t| &t.device == d && t.optional);
                let why = if optional {
                    format!("{e}; skipped (its target is optional)")
                } else {
                    format!("{e}; skipped")
                };
                say(&format!("device read {d}: {why}"));
                results.event(format!("device-read.{d}"), missing_severity(optional), why);
            }
        }
    }
    out
}

/// Why a target cannot be measured: its device is not there (for an optional target
/// a warning), or it is and cannot be used (an error).
enum Unusable {
    Missing(String),
    Broken(String),
}

impl From<String> for Unusable {
    fn from(why: String) -> Self {
        Unusable::Broken(why)
    }
}

/// Makes a target ready to measure: waits for its device (until `deadline`, shared by
/// all targets), checks it by device identity (`guard`: never the boot card, its boot
/// or results partition, a mounted device or another target's), mounts filesystems,
/// refuses RAM filesystems, finds the O_DIRECT alignment and (raw) the capacity.
fn resolve(
    target: &StorageTarget,
    deadline: Instant,
    guard: &mut crate::target_guard::Guard<'_>,
) -> Result<Place, Unusable> {
    let wait = deadline.saturating_duration_since(Instant::now());
    if !wait::wait_for(Path::new(&target.device), wait) {
        return Err(Unusable::Missing(format!(
            "{} never appeared (waited {} ms)",
            target.device,
            wait.as_millis()
        )));
    }
    guard.check(target)?;
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
            // The plan's check refused any other label already; the gate again here,
            // so this path cannot depend on that check.
            let mnt = PathBuf::from(TARGETS_MNT).join(
                SafeName::new(NameKind::Label, &target.label)
                    .map_err(|e| e.to_string())?
                    .as_str(),
            );
            sys::mount(
                &target.device,
                &mnt.to_string_lossy(),
                fs.name(),
                MountFlags::NOATIME,
            )
            .map_err(|e| format!("mount {} ({}): {e}", target.device, fs.name()))?;
            refuse_ram_filesystem(&mnt).map_err(|e| e.to_string())?;
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

/// The sweep's caps for one cell: the plan's, or its long cell's
/// ([`benchboot_plan::StoragePlan::cell_caps`]).
fn cell_caps(
    sp: &benchboot_plan::StoragePlan,
    target: &str,
    mode: benchboot_plan::Mode,
    bs: u64,
) -> Caps {
    let (bytes, ms) = sp.cell_caps(target, mode, bs);
    Caps {
        bytes,
        time_ns: ms.saturating_mul(1_000_000),
    }
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
    crate::modalias::scan("storage", results);
    let finder = Finder {
        sys_class_block: Path::new(SYS_BLOCK),
        dev: Path::new(DEV),
        boot_disk: disk_of(kernel_name(&plan.results.device)),
        deadline: Instant::now() + Duration::from_millis(sp.device_wait_ms),
    };
    let targets = name_devices(&sp.targets, &finder, results);
    let read_disks = sp
        .device_reads
        .as_ref()
        .map(|d| device_read_disks(&d.disks, &sp.targets, &finder, results))
        .unwrap_or_default();
    let mut disks: Vec<String> = targets
        .iter()
        .map(|t| disk_of(kernel_name(&t.device)))
        .collect();
    disks.extend(read_disks.iter().map(|x| kernel_name(x).to_owned()));
    disks.sort();
    disks.dedup();
    for d in &disks {
        let id = device::identify(Path::new("/sys/block"), Path::new("/sys/kernel/debug"), d);
        if let Some(card) = &id.card {
            say(&format!("card {d}: {}", card.summary()));
            for w in card.warnings(id.size_bytes) {
                results.event(format!("device.{d}"), Severity::Warning, w);
            }
        }
        results.devices.push(id);
    }

    let mut places = Vec::new();
    let mut guard = crate::target_guard::Guard::on_board(&finder.boot_disk);
    for t in &targets {
        match resolve(t, finder.deadline, &mut guard) {
            Ok(p) => places.push(p),
            Err(Unusable::Missing(e)) => target_missing(results, t, e),
            Err(Unusable::Broken(e)) => {
                say(&format!("target {}: {e}", t.label));
                results.event(format!("target.{}", t.label), Severity::Error, e);
            }
        }
    }
    for place in &places {
        for &mode in &sp.modes {
            for &bs in &sp.block_sizes {
                let caps = cell_caps(sp, &place.target.label, mode, bs);
                let cell = figures::storage_cell(&place.target.label, mode.name(), bs);
                let scope = HealthScope::Storage {
                    target: place.target.label.clone(),
                    mode,
                    block_size: bs,
                };
                health::around(results, &cell, scope, |results| {
                    for rep in 0..sp.repetitions {
                        let step = figures::storage_step(&place.target.label, mode.name(), bs, rep);
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
                            let f = figures::storage(&m);
                            console::figure(&f);
                            defmt::info!(
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
        for disk in &read_disks {
            let step = figures::device_read_step(disk);
            let scope = HealthScope::DeviceRead {
                device: disk.clone(),
            };
            if let Some(reads) = health::around(results, &step, scope, |results| {
                in_worker(results, &step, || {
                    sweep::device_reads(Path::new(disk), d, &WholeCache)
                })
            }) {
                for r in &reads {
                    console::figure(&figures::device_read(r));
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
                    let step = figures::random_step(label, op, qd);
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
                        console::figure(&figures::random(&r));
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
                console::figure(&figures::verify(&v));
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

    /// Adds virtio disks `vda` (the boot disk, with partition `vda2`) and `vdb` to the
    /// fake system, linked from its class folder as the kernel does.
    fn add_virtio(root: &Path, sys: &Path, dev: &Path) {
        for (i, name) in ["vda", "vdb"].iter().enumerate() {
            let disk = root.join(format!(
                "devices/platform/a003{}00.virtio_mmio/virtio{i}/block/{name}",
                ['e', 'c'][i]
            ));
            std::fs::create_dir_all(&disk).unwrap();
            std::fs::write(disk.join("size"), "4096\n").unwrap();
            std::os::unix::fs::symlink(&disk, sys.join(name)).unwrap();
            std::fs::write(dev.join(name), [0u8; 512]).unwrap();
        }
        let part = root.join("devices/platform/a003e00.virtio_mmio/virtio0/block/vda/vda2");
        std::fs::create_dir_all(&part).unwrap();
        std::fs::write(part.join("size"), "64\n").unwrap();
        std::fs::write(part.join("partition"), "2\n").unwrap();
        std::os::unix::fs::symlink(&part, sys.join("vda2")).unwrap();
    }

    fn results() -> RunResults {
        RunResults::new(
            "t".into(),
            Plan::example(),
            benchboot_storage::system::system_info(0),
        )
    }

    fn events(r: &RunResults) -> Vec<(&str, Severity, &str)> {
        r.events
            .iter()
            .map(|e| (e.step.as_str(), e.severity, e.message.as_str()))
            .collect()
    }

    #[test]
    fn labels_become_paths_and_a_missing_one_is_an_event() {
        let root = tempfile::tempdir().unwrap();
        let (sys, dev) = fake_system(root.path());
        let mut results = results();
        let targets = [
            target("ext4", "/dev/mmcblk0p7"),
            target("gone", "LABEL=NOPE"),
            target("usb", "LABEL=BBUSB"),
            target("gpt", "PARTLABEL=nothing"),
        ];
        let finder = Finder {
            sys_class_block: &sys,
            dev: &dev,
            boot_disk: "mmcblk0".into(),
            deadline: Instant::now() + Duration::from_millis(200),
        };
        let named = name_devices(&targets, &finder, &mut results);
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
        let events = events(&results);
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

    #[test]
    fn bus_targets_are_the_first_disk_that_is_not_the_boot_disk() {
        let root = tempfile::tempdir().unwrap();
        let (sys, dev) = fake_system(root.path());
        add_virtio(root.path(), &sys, &dev);
        // The results partition /dev/vda2 says the board booted from vda.
        let boot_disk = blkid::disk_of(&sys, kernel_name("/dev/vda2"));
        assert_eq!(boot_disk, "vda");
        let finder = Finder {
            sys_class_block: &sys,
            dev: &dev,
            boot_disk,
            deadline: Instant::now() + Duration::from_millis(300),
        };
        let raw = |label: &str, device: &str, optional| StorageTarget {
            filesystem: Filesystem::Raw,
            optional,
            ..target(label, device)
        };
        let targets = [
            raw("disk", "BUS=virtio", false),
            raw("usb-disk", "BUS=usb", true),
            raw("sata-disk", "BUS=sata", false),
        ];
        let mut results = results();
        let started = Instant::now();
        let named = name_devices(&targets, &finder, &mut results);
        let got: Vec<(&str, String)> = named
            .iter()
            .map(|t| (t.label.as_str(), t.device.clone()))
            .collect();
        assert_eq!(got, [("disk", dev.join("vdb").display().to_string())]);
        let ev = events(&results);
        assert_eq!(ev.len(), 2, "{ev:?}");
        assert_eq!((ev[0].0, ev[0].1), ("target.usb-disk", Severity::Warning));
        // The first missing disk waited for the deadline; the next one not again.
        assert_eq!(
            ev[1],
            (
                "target.sata-disk",
                Severity::Error,
                "no whole disk on the sata bus besides the boot disk vda (waited 0 ms)"
            )
        );
        assert!(
            ev[0]
                .2
                .starts_with("no whole disk on the usb bus besides the boot disk vda (waited ")
                && ev[0].2.ends_with(" ms); optional target, left out"),
            "{ev:?}"
        );
        let waited = started.elapsed();
        assert!(
            (Duration::from_millis(290)..Duration::from_millis(2000)).contains(&waited),
            "one shared deadline, not 300 ms per missing disk: {waited:?}"
        );

        // The device reads name the same disks: the same answers, one place.
        let mut results = super::tests::results();
        let disks = [
            "/dev/vda".to_owned(),
            "BUS=virtio".to_owned(),
            "BUS=usb".to_owned(),
            "BUS=sata".to_owned(),
        ];
        let read = device_read_disks(&disks, &targets, &finder, &mut results);
        assert_eq!(
            read,
            ["/dev/vda".to_owned(), dev.join("vdb").display().to_string()]
        );
        let ev = events(&results);
        assert_eq!(ev.len(), 2, "{ev:?}");
        assert_eq!(
            (ev[0].0, ev[0].1),
            ("device-read.BUS=usb", Severity::Warning)
        );
        assert!(
            ev[0].2.ends_with("skipped (its target is optional)"),
            "{ev:?}"
        );
        assert_eq!(
            ev[1],
            (
                "device-read.BUS=sata",
                Severity::Error,
                "no whole disk on the sata bus besides the boot disk vda (waited 0 ms); skipped"
            )
        );
    }

    #[test]
    fn an_optional_path_that_never_appears_is_a_warning() {
        let root = tempfile::tempdir().unwrap();
        let missing = root.path().join("sdz1").display().to_string();
        let t = StorageTarget {
            optional: true,
            ..target("usb", &missing)
        };
        let deadline = Instant::now() + Duration::from_millis(50);
        let sys = crate::target_guard::Sysfs {
            dev_block: root.path(),
            class_block: root.path(),
        };
        let mut g = crate::target_guard::Guard::new(sys, "vda", None, "");
        let Err(Unusable::Missing(why)) = resolve(&t, deadline, &mut g) else {
            panic!("a missing device is Missing");
        };
        assert!(
            why.starts_with(&format!("{missing} never appeared (waited ")),
            "{why}"
        );
        let mut r = results();
        target_missing(&mut r, &t, why);
        assert_eq!(r.events[0].severity, Severity::Warning);
        assert_eq!(r.events[0].step, "target.usb");
        assert!(r.events[0].message.ends_with("optional target, left out"));
        // The deadline has passed: a second missing target waits no more.
        let started = Instant::now();
        assert!(matches!(
            resolve(&t, deadline, &mut g),
            Err(Unusable::Missing(_))
        ));
        assert!(started.elapsed() < Duration::from_millis(40));
    }
}
