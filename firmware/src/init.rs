//! PID 1: one straight sequence of steps, from the kernel's hand-over to serving results.
//!
//! Essential steps (pseudo-filesystems, the plan) end the sequence early on failure;
//! every other failure is recorded as an [`Event`](benchboot_results::Event) and the run
//! goes on. Results are written to the results partition after every step, so what
//! finished is on stable storage before the next step starts. [`run`] never returns.

use std::path::Path;
use std::time::{Duration, Instant};

use benchboot_plan::{plan_name, plan_path, Plan, MODULES_DIR};
use benchboot_results::{RunResults, Severity};
use rustix::mount::MountFlags;

use crate::console::{say, READY};
use crate::{census, device, http, sys};

/// Pseudo-filesystems PID 1 mounts itself (the kernel does not auto-mount devtmpfs for
/// an initramfs): (source, target, type).
pub const MOUNTS: &[(&str, &str, &str)] = &[
    ("proc", "/proc", "proc"),
    ("sysfs", "/sys", "sysfs"),
    ("devtmpfs", "/dev", "devtmpfs"),
    // For the SD bus clock (mmcN/ios); optional.
    ("debugfs", "/sys/kernel/debug", "debugfs"),
];

/// Where the results partition is mounted.
const RESULTS_MNT: &str = "/results";

/// Runs the whole sequence, then serves results forever.
pub fn run() -> ! {
    let started = sys::boottime_ns();
    for (source, target, fstype) in MOUNTS {
        if let Err(e) = sys::mount(source, target, fstype, MountFlags::empty()) {
            say(&format!("cannot mount {fstype} on {target}: {e}"));
        }
    }
    let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    let path = plan_path(plan_name(&cmdline));
    let plan = match std::fs::read_to_string(&path)
        .map_err(|e| format!("{path}: {e}"))
        .and_then(|t| Plan::from_json(&t).map_err(|e| format!("{path}: {e}")))
    {
        Ok(p) => p,
        Err(e) => {
            say(&format!("no usable plan, nothing to run: {e}"));
            idle_forever();
        }
    };
    let mut results = RunResults::new(
        run_id(&plan.board),
        plan.clone(),
        device::system_info(started),
    );
    results.system.kernel_cmdline = device::kernel_cmdline(Path::new(device::PROC));
    say(&format!(
        "start run={} board={}",
        results.run_id, plan.board
    ));
    if plan.emulated {
        say("emulated run (QEMU): figures are not hardware results");
    }
    // Loopback first: the network tests talk to the board's own addresses too.
    if let Err(e) = sys::link_up("lo") {
        results.event("network.lo", Severity::Warning, e.to_string());
    }
    load_modules(&plan, &mut results);
    results.system.modules = device::modules(Path::new(device::PROC));
    let results_ok = mount_results(&plan, &mut results);
    take_census("before-storage", &mut results);
    persist(&plan, &mut results, results_ok);
    crate::steps::run_storage(&plan, &mut results, &mut |r| persist(&plan, r, results_ok));
    take_census("after-storage", &mut results);
    results.complete = true;
    persist(&plan, &mut results, results_ok);
    let errors = results
        .events
        .iter()
        .filter(|e| e.severity == Severity::Error)
        .count();
    say(&format!(
        "end run={} measurements={} errors={errors}",
        results.run_id,
        results.storage.len()
    ));
    crate::network::run_gadget(&plan, &mut results);
    take_census("after-network", &mut results);
    check_modules(&mut results);
    let listener = bring_up_network(&plan, &mut results);
    persist(&plan, &mut results, results_ok);
    let body = results.to_json();
    match listener {
        Some(l) => {
            let at = served_addresses(&plan, &results)
                .iter()
                .map(|a| {
                    format!(
                        "http://{}:{}{}",
                        dotted(*a),
                        plan.network.port,
                        http::RESULTS_PATH
                    )
                })
                .collect::<Vec<_>>()
                .join(" ");
            say(&format!(
                "{} serving {at} (read-only)",
                READY.trim_start_matches("benchboot: "),
            ));
            http::serve(&l, &body)
        }
        None => {
            say("ready without network: results are on the results partition only");
            idle_forever()
        }
    }
}

/// Sleeps forever, reaping any orphans. PID 1 must never exit.
pub fn idle_forever() -> ! {
    loop {
        sys::reap_zombies();
        std::thread::sleep(Duration::from_secs(60));
    }
}

fn dotted(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

fn run_id(board: &str) -> String {
    let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let short: String = boot_id
        .trim()
        .chars()
        .filter(|c| *c != '-')
        .take(12)
        .collect();
    format!("{board}-{short}")
}

fn load_modules(plan: &Plan, results: &mut RunResults) {
    for name in &plan.modules {
        let path = Path::new(MODULES_DIR).join(format!("{name}.ko"));
        match sys::load_module(&path) {
            Ok(()) => {}
            Err(e) => {
                say(&format!("module {name}: {e}"));
                results.event(format!("module.{name}"), Severity::Error, e.to_string());
            }
        }
    }
}

/// Waits until `path` exists, polling every 50 ms, for at most `wait`.
pub fn wait_for(path: &Path, wait: Duration) -> bool {
    wait_until(wait, || path.exists())
}

/// Polls `ok` every 50 ms until it holds or `wait` has passed; returns the last answer.
pub fn wait_until(wait: Duration, mut ok: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + wait;
    loop {
        if ok() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn mount_results(plan: &Plan, results: &mut RunResults) -> bool {
    let dev = Path::new(&plan.results.device);
    if !wait_for(dev, Duration::from_millis(plan.storage.device_wait_ms)) {
        results.event(
            "mount.results",
            Severity::Error,
            format!("{} never appeared", dev.display()),
        );
        return false;
    }
    match sys::mount(
        &plan.results.device,
        RESULTS_MNT,
        "vfat",
        MountFlags::NOATIME,
    ) {
        Ok(()) => true,
        Err(e) => {
            say(&format!("cannot mount results partition: {e}"));
            results.event("mount.results", Severity::Error, e.to_string());
            false
        }
    }
}

fn take_census(at: &str, results: &mut RunResults) {
    sys::reap_zombies();
    match census::take(at, Path::new("/proc")) {
        Ok(c) => {
            say(&format!(
                "census {at}: {} user-space process(es), {} kernel threads, {}",
                c.user_processes.len(),
                c.kernel_threads,
                if c.foreign.is_empty() {
                    "isolated"
                } else {
                    "NOT ISOLATED"
                }
            ));
            if !c.foreign.is_empty() {
                let who: Vec<String> = c
                    .foreign
                    .iter()
                    .map(|p| format!("{} {} (parent {})", p.pid, p.comm, p.ppid))
                    .collect();
                results.event(
                    format!("census.{at}"),
                    Severity::Warning,
                    format!(
                        "user-space process(es) besides PID 1 and its workers: {}",
                        who.join(", ")
                    ),
                );
            }
            results.push_census(c);
        }
        Err(e) => results.event(format!("census.{at}"), Severity::Error, e.to_string()),
    }
}

/// Reads `/proc/modules` again at the end of the run: a module that appeared after
/// PID 1 loaded the plan's is a warning (the kernel loaded it for someone), and the
/// document keeps the final list.
fn check_modules(results: &mut RunResults) {
    let now = device::modules(Path::new(device::PROC));
    let (Some(then), Some(new)) = (results.system.modules.value(), now.value()) else {
        return;
    };
    let added: Vec<&str> = new
        .iter()
        .filter(|m| !then.iter().any(|t| t.name == m.name))
        .map(|m| m.name.as_str())
        .collect();
    if !added.is_empty() {
        results.event(
            "modules",
            Severity::Warning,
            format!(
                "module(s) loaded during the run, not by PID 1: {}",
                added.join(", ")
            ),
        );
    }
    results.system.modules = now;
}

/// Writes `results.json` atomically: temp file, `fsync`, rename, `fsync` of the file
/// again, `fsync` of the folder.
///
/// The second file `fsync` matters on vfat: a rename over an existing file attaches the
/// inode to the old directory slot, and that slot's size and first cluster are written
/// only at inode write-back (fs/fat/namei_vfat.c `vfat_rename`), not by the folder's
/// `fsync`. Without it a power cut leaves the old slot pointing at freed clusters (seen
/// in QEMU: fsck.vfat "Contains a free cluster").
fn persist(plan: &Plan, results: &mut RunResults, mounted: bool) {
    if !mounted {
        return;
    }
    results.system.written_ns = sys::boottime_ns();
    let dir = Path::new(RESULTS_MNT);
    let tmp = dir.join(format!("{}.tmp", plan.results.file));
    let dst = dir.join(&plan.results.file);
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        std::io::Write::write_all(&mut f, results.to_json().as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, &dst)?;
        f.sync_all()?;
        std::fs::File::open(dir)?.sync_all()
    };
    if let Err(e) = write() {
        say(&format!("cannot write {}: {e}", dst.display()));
        results.event("results.write", Severity::Error, e.to_string());
    }
}

/// The board's addresses the results server can be reached at: the static interface's
/// and every gadget link's that is still up (composite mode keeps its links).
fn served_addresses(plan: &Plan, results: &RunResults) -> Vec<[u8; 4]> {
    let mut v = Vec::new();
    if !plan.network.interface.is_empty() {
        v.push(plan.network.address);
    }
    if plan.network.gadget.as_ref().is_some_and(|g| !g.in_turn) {
        v.extend(results.network.links.iter().map(|l| l.board_address));
    }
    v
}

/// Brings up the static interface (if the plan names one) and binds the
/// results server on every address.
fn bring_up_network(plan: &Plan, results: &mut RunResults) -> Option<std::net::TcpListener> {
    let n = &plan.network;
    let static_up = !n.interface.is_empty() && bring_up_static(plan, results);
    let gadget_up =
        n.gadget.as_ref().is_some_and(|g| !g.in_turn) && !results.network.links.is_empty();
    if !static_up && !gadget_up {
        return None;
    }
    match std::net::TcpListener::bind(("0.0.0.0", n.port)) {
        Ok(l) => Some(l),
        Err(e) => {
            say(&format!("cannot listen on port {}: {e}", n.port));
            results.event("network.listen", Severity::Error, e.to_string());
            None
        }
    }
}

fn bring_up_static(plan: &Plan, results: &mut RunResults) -> bool {
    let n = &plan.network;
    let sysfs = Path::new("/sys/class/net").join(&n.interface);
    if !wait_for(&sysfs, Duration::from_millis(n.interface_wait_ms)) {
        let msg = format!("interface {} never appeared", n.interface);
        say(&msg);
        results.event("network.up", Severity::Error, msg);
        return false;
    }
    if let Err(e) = sys::ifconfig_up(&n.interface, n.address, n.prefix_len) {
        say(&format!("cannot configure {}: {e}", n.interface));
        results.event("network.up", Severity::Error, e.to_string());
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_table_has_the_pseudo_filesystems() {
        let targets: Vec<_> = MOUNTS.iter().map(|m| m.1).collect();
        assert_eq!(targets, ["/proc", "/sys", "/dev", "/sys/kernel/debug"]);
    }

    #[test]
    fn dotted_quad() {
        assert_eq!(dotted([10, 0, 2, 15]), "10.0.2.15");
    }
}
