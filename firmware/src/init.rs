//! PID 1: one straight sequence of steps, from the kernel's hand-over to serving results.
//!
//! First the pseudo-filesystems ([`MOUNTS`]): a failed mount is printed and recorded in
//! the document as an event (`mount.proc`, ...: an error, a warning for the optional
//! debugfs), and the run goes on, its steps failing on their own where they needed it.
//! Only a missing or unusable built-in plan ends the sequence early: with no plan there
//! is nothing to run and no document to serve, so PID 1 says why on the console and
//! idles. Every later failure is recorded as an [`Event`](benchboot_results::Event) and
//! the run goes on. Results are written to the results partition after every step
//! ([`Run::save`]), so what finished is on stable storage before the next step starts;
//! the previous boot's document is kept under `runs/` first. Then the card's plan file
//! ([`CARD_PLAN_FILE`]) replaces the built-in plan when that gives way to it
//! ([`crate::card_plan`]); a file it refuses means nothing is measured, the error is in
//! the document, and the board is served as usual. [`run`] never returns; a panic of
//! PID 1 goes to [`on_panic`], which records it and serves the results as they stood.

use std::net::{SocketAddr, SocketAddrV6, TcpListener};
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use benchboot_energy::marks::SyncAt;
use benchboot_plan::{plan_name, plan_path, Plan, BOARD_LINK_LOCAL, CARD_PLAN_FILE, MODULES_DIR};
use benchboot_results::name::SafeName;
use benchboot_results::{RunResults, Severity};
use rustix::mount::MountFlags;

use crate::console::{say, tell, READY};
use crate::journal::Saved;
use crate::wait::{idle_forever, wait_for};
use crate::{census, device, faults, heart, http, sys, watchdog, worker};

/// Pseudo-filesystems PID 1 mounts itself (the kernel does not auto-mount devtmpfs for
/// an initramfs): (source, target, type, essential). A failed mount is an error event
/// when essential, a warning otherwise.
pub const MOUNTS: &[(&str, &str, &str, bool)] = &[
    ("proc", "/proc", "proc", true),
    ("sysfs", "/sys", "sysfs", true),
    ("devtmpfs", "/dev", "devtmpfs", true),
    // For the SD bus clock (mmcN/ios), which the document records when it can.
    ("debugfs", "/sys/kernel/debug", "debugfs", false),
];

/// Where the results partition is mounted.
const RESULTS_MNT: &str = "/results";

/// One run as PID 1 carries it from step to step: the plan in force, the document, and
/// whether the results partition is mounted.
struct Run {
    plan: Plan,
    results: RunResults,
    mounted: bool,
}

impl Run {
    /// Writes the document where it is kept, after a step ([`persist`]).
    fn save(&mut self) {
        persist(&self.plan, &mut self.results, self.mounted);
    }
}

/// Runs the whole sequence, then serves results forever.
pub fn run() -> ! {
    let started = sys::boottime_ns();
    let unmounted = mount_pseudo_filesystems();
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
    let mut run = start(plan, &cmdline, started, unmounted);
    let refused = run.results.plan_error.is_some();
    take_census("before-storage", &mut run.results);
    run.save();
    if refused {
        say(&format!(
            "nothing measured: fix {CARD_PLAN_FILE} on the results partition (the error is \
             in results.json, plan_error) and boot again"
        ));
    } else {
        measure(&mut run);
    }
    take_census("after-storage", &mut run.results);
    run.results.complete = true;
    run.save();
    let errors = run
        .results
        .events
        .iter()
        .filter(|e| e.severity == Severity::Error)
        .count();
    say(&format!(
        "end run={} measurements={} errors={errors}",
        run.results.run_id,
        run.results.storage.len()
    ));
    network(&mut run, refused);
    faults::pid1_faults_if_planned(&run.results);
    serve(&run.plan, &mut run.results, run.mounted, "")
}

/// Mounts [`MOUNTS`]; returns the failures as events to record once the document exists.
fn mount_pseudo_filesystems() -> Vec<(String, Severity, String)> {
    let mut failed = Vec::new();
    for (source, target, fstype, essential) in MOUNTS {
        if let Err(e) = sys::mount(source, target, fstype, MountFlags::empty()) {
            let event = mount_failure(fstype, target, *essential, &e);
            say(&event.2);
            failed.push(event);
        }
    }
    failed
}

/// The event of a failed mount: `(mount.<type>, error or warning, the words)`.
fn mount_failure(
    fstype: &str,
    target: &str,
    essential: bool,
    e: &dyn std::fmt::Display,
) -> (String, Severity, String) {
    let severity = if essential {
        Severity::Error
    } else {
        Severity::Warning
    };
    let why = format!("cannot mount {fstype} on {target}: {e}");
    (format!("mount.{fstype}"), severity, why)
}

/// From the built-in plan to the plan in force: the document begun (with the mounts
/// that failed), the modules and drivers loaded, the watchdog started, the card found,
/// the results partition mounted and the card's plan file taken.
fn start(
    plan: Plan,
    cmdline: &str,
    started: u64,
    unmounted: Vec<(String, Severity, String)>,
) -> Run {
    let mut results = RunResults::new(
        run_id(&plan.board),
        plan.clone(),
        benchboot_storage::system::system_info(started),
    );
    for (what, severity, why) in unmounted {
        results.event(what, severity, why);
    }
    results.system.kernel_cmdline = device::kernel_cmdline(Path::new(device::PROC));
    crate::energy::boot_started(started, plan.emulated, &mut results);
    // A console= naming no tty: fds 0-2 are /dev/null, the run goes on (console.rs).
    if let Some(why) = crate::console::missing_console(cmdline) {
        results.event("console", Severity::Warning, why);
    }
    tell!(
        info,
        format!("start run={} board={}", results.run_id, plan.board);
        "start run={=str} board={=str} plan={=str}",
        results.run_id.as_str(),
        plan.board.as_str(),
        plan_name(cmdline)
    );
    if plan.emulated {
        say("emulated run (QEMU): figures are not hardware results");
    }
    // Loopback first: the network tests talk to the board's own addresses too.
    if let Err(e) = sys::link_up("lo") {
        results.event("network.lo", Severity::Warning, e.to_string());
    }
    load_modules(&plan, &mut results);
    // Then the drivers of the devices present, by modalias (no udev does it).
    crate::modalias::scan("boot", &mut results);
    // After the modules: the watchdog's driver may be one of them.
    results.system.watchdog_timeout_s = watchdog::start(&plan.supervision);
    results.system.modules = device::modules(Path::new(device::PROC));
    // The card by its image's disk signature, not by the kernel's name for it.
    crate::boot_card::find(&plan, &mut results);
    let on_card = crate::boot_card::moved(&plan, &results);
    crate::journal::open(&on_card, &mut results);
    let mounted = mount_results(&on_card, &mut results);
    defmt::info!("results partition mounted: {=bool}", mounted);
    if mounted {
        keep_previous_run(&plan, &mut results);
    }
    let results_dir = mounted.then_some(Path::new(RESULTS_MNT));
    let plan = crate::card_plan::take_card_plan(plan, results_dir, &mut results);
    let plan = crate::boot_card::on_boot_card(plan, &mut results);
    Run {
        plan,
        results,
        mounted,
    }
}

/// The measuring steps of an accepted plan, the document saved after each.
fn measure(run: &mut Run) {
    // The energy marks: the start pattern, then an idle phase with no link up.
    crate::energy::set_plan(&run.plan.energy, &mut run.results);
    crate::energy::sync(SyncAt::Start, &mut run.results);
    crate::energy::idle("radios-off", &mut run.results);
    if !run.plan.energy.is_off() {
        run.save();
    }
    if !run.plan.faults.is_empty() {
        faults::run_worker_faults(&mut run.results);
        run.save();
    }
    crate::memory::run_memory(&run.plan, &mut run.results);
    run.save();
    crate::memory::clock_check(&mut run.results, "before-storage");
    let Run {
        plan,
        results,
        mounted,
    } = run;
    let mounted = *mounted;
    crate::steps::run_storage(plan, results, &mut |r| persist(plan, r, mounted));
    crate::card_check::run_card_check(plan, results);
    persist(plan, results, mounted);
    crate::commands::run_commands(Path::new(RESULTS_MNT), mounted, results, &mut |r| {
        persist(plan, r, mounted)
    });
}

/// The links and the network tests (only the results link when the plan was refused:
/// the board stays reachable for `benchboot fetch`), then the closing checks.
fn network(run: &mut Run, refused: bool) {
    let mut link_plan = run.plan.clone();
    if refused {
        link_plan.network.tests = None;
        link_plan.network.wired.clear();
        link_plan.network.wifi = None;
    } else {
        crate::memory::clock_check(&mut run.results, "before-network");
    }
    crate::network::run_gadget(&link_plan, &mut run.results);
    crate::wired::run_wired(&link_plan, &mut run.results);
    crate::wifi::run_wifi(&link_plan, &mut run.results);
    // The end pattern, after the last network test (nothing when the plan was refused:
    // the marks were never set).
    crate::energy::sync(SyncAt::End, &mut run.results);
    take_census("after-network", &mut run.results);
    crate::modalias::scan("end", &mut run.results);
    check_modules(&mut run.results);
    run.save();
}

/// Brings up the results link, writes the document a last time, prints the closing
/// blocks (verdicts and the whole document, for readers of the console alone:
/// [`crate::console::report`]) and serves it forever (or, with no link, idles: the card
/// holds the results). `why` is added to the ready line.
fn serve(plan: &Plan, results: &mut RunResults, mounted: bool, why: &str) -> ! {
    let listeners = bring_up_network(plan, results);
    persist(plan, results, mounted);
    let body: &'static str = Box::leak(results.to_json().into_boxed_str());
    crate::console::report(results, body);
    match listeners {
        Some(ls) => {
            let at = ls
                .iter()
                .filter_map(|l| l.local_addr().ok())
                .map(|a| format!("http://{a}{}", benchboot_netbench::http::head::RESULTS_PATH))
                .collect::<Vec<_>>()
                .join(" ");
            say(&format!(
                "{} serving {at} (read-only){why}",
                READY.trim_start_matches("benchboot: "),
            ));
            heart::serving();
            http::serve_all(ls, body)
        }
        None => {
            say(&format!(
                "ready without network: results are on the results partition only{why}"
            ));
            idle_forever()
        }
    }
}

/// What PID 1's panic path needs: the plan, whether the results partition is mounted,
/// and the document as [`persist`] last wrote it (a copy, not JSON: reading JSON back
/// would link every results type's deserializer into the init).
struct Recovery {
    plan: Plan,
    mounted: bool,
    results: RunResults,
}

static RECOVERY: Mutex<Option<Recovery>> = Mutex::new(None);
/// Panics of PID 1's other threads (DHCP servers, the watchdog feeder), recorded as
/// events at the next [`persist`].
static THREAD_PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// The results server's sockets, bound once ([`bring_up_network`]).
static LISTENERS: OnceLock<Vec<TcpListener>> = OnceLock::new();

/// PID 1's panic hook (the binary installs it). The kernel must never see PID 1 end
/// ("Attempted to kill init!"), and the firmware build aborts on panic, so this never
/// returns. On the main thread: the panic becomes an error event `pid1` of the last
/// document written, which is written again and served (the ready line says so). On
/// another thread: recorded for the next document; that thread parks.
pub fn on_panic(message: &str) -> ! {
    tell!(
        error,
        format!("PID 1 panicked: {message}");
        "PID 1 panicked: {=str}",
        message
    );
    if std::thread::current().name() != Some("main") {
        if let Ok(mut p) = THREAD_PANICS.try_lock() {
            p.push(message.to_owned());
        }
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    // try_lock: a panic inside persist holds the lock; then there is nothing to resume.
    let state = RECOVERY
        .try_lock()
        .ok()
        .and_then(|mut g| g.take())
        .map(|r| (r.plan, r.mounted, r.results));
    let Some((plan, mounted, mut results)) = state else {
        say("no results document to serve yet; parked");
        idle_forever();
    };
    results.event(
        "pid1",
        Severity::Error,
        format!("PID 1 panicked: {message}; the plan stopped there, results served as they stood"),
    );
    serve(&plan, &mut results, mounted, " after a PID 1 panic")
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
    worker::reap_zombies();
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
/// PID 1 loaded the plan's, and not by modalias ([`crate::modalias`]), is a warning (the
/// kernel loaded it for someone), and the document keeps the final list.
fn check_modules(results: &mut RunResults) {
    let now = device::modules(Path::new(device::PROC));
    let (Some(then), Some(new)) = (results.system.modules.value(), now.value()) else {
        return;
    };
    let added: Vec<&str> = new
        .iter()
        .filter(|m| !then.iter().any(|t| t.name == m.name))
        .filter(|m| !results.modalias.loaded.iter().any(|l| l.module == m.name))
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
    heart::beat();
    if let Ok(mut p) = THREAD_PANICS.try_lock() {
        for m in p.drain(..) {
            results.event(
                "pid1.thread",
                Severity::Error,
                format!("thread panicked: {m}"),
            );
        }
    }
    crate::energy::fill(results);
    results.system.written_ns = sys::boottime_ns();
    let json = results.to_json();
    // The journal first (crates/journal): from its sync on, a cut loses nothing of this
    // save, whatever then happens to the FAT copy.
    let journaled = match crate::journal::append(&results.run_id, json.as_bytes()) {
        Saved::Written(_) => true,
        Saved::Absent => false,
        Saved::Failed { error, new } => {
            if new {
                say(&format!("cannot append to the results journal: {error}"));
                results.event("journal.write", Severity::Error, error);
            }
            false
        }
    };
    let mut fat = false;
    if mounted {
        let dir = Path::new(RESULTS_MNT);
        let dst = dir.join(&plan.results.file);
        let write = |name: &str, bytes: &[u8]| -> std::io::Result<()> {
            let tmp = dir.join(format!("{name}.tmp"));
            let mut f = std::fs::File::create(&tmp)?;
            std::io::Write::write_all(&mut f, bytes)?;
            f.sync_all()?;
            std::fs::rename(&tmp, dir.join(name))?;
            f.sync_all()?;
            std::fs::File::open(dir)?.sync_all()
        };
        // The init's defmt log (firmware/src/log.rs), beside the results, the same way.
        if let Err(e) = write(crate::log::FILE, &crate::log::snapshot()) {
            if new_fat_error(crate::log::FILE, &e) {
                say(&format!("cannot write {}: {e}", crate::log::FILE));
                results.event("log.write", Severity::Warning, e.to_string());
            }
        }
        match write(&plan.results.file, json.as_bytes()) {
            Ok(()) => fat = true,
            Err(e) if new_fat_error(&plan.results.file, &e) => {
                say(&format!("cannot write {}: {e}", dst.display()));
                // The FAT copy is the convenience copy when the journal holds the save.
                let (severity, held) = if journaled {
                    (Severity::Warning, "; the results journal holds every save")
                } else {
                    (Severity::Error, "")
                };
                results.event("results.write", severity, format!("{e}{held}"));
            }
            Err(_) => {}
        }
    }
    if journaled || fat {
        say(&saved_line(results));
    }
    if let Ok(mut g) = RECOVERY.try_lock() {
        match &mut *g {
            Some(r) => r.results.clone_from(results),
            None => {
                *g = Some(Recovery {
                    plan: plan.clone(),
                    mounted,
                    results: results.clone(),
                })
            }
        }
    }
}

/// True the first time writing FAT file `name` fails with this error (a read-only
/// remount fails every save the same way: one event, not one per save).
fn new_fat_error(name: &str, e: &std::io::Error) -> bool {
    static LAST: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
    let text = e.to_string();
    // try_lock: the panic hook saves too (see crate::journal::append).
    let Ok(mut last) = LAST.try_lock() else {
        return true;
    };
    match last.iter_mut().find(|(n, _)| n == name) {
        Some((_, t)) if *t == text => false,
        Some((_, t)) => {
            *t = text;
            true
        }
        None => {
            last.push((name.to_owned(), text));
            true
        }
    }
}

/// The protocol line that says a document is on stable storage, with what it holds:
/// `saved storage=<n> device_reads=<n> random=<n> verify=<n> faults=<n> complete=<bool>`
/// (after the `benchboot:` prefix). Whatever a power cut interrupts, the card holds at
/// least what the last such line counted.
pub fn saved_line(r: &RunResults) -> String {
    format!(
        "saved storage={} device_reads={} random={} verify={} faults={} complete={}",
        r.storage.len(),
        r.device_reads.len(),
        r.random.len(),
        r.verify.len(),
        r.faults.len(),
        r.complete
    )
}

/// Where earlier boots' documents are kept on the results partition.
pub const RUNS_DIR: &str = "runs";

/// The name the previous boot's document gets under [`RUNS_DIR`]: its `run_id` made a
/// file name at the one gate, [`SafeName::lossy`] (what the gate does not allow becomes
/// `_`, at most [`benchboot_results::name::MAX_LEN`] bytes, never hidden, an option or
/// a Windows device name: the card may have been written by another computer and is
/// read on Windows too) + `.json`, or `unreadable.json` when it holds no run id (a cut
/// during its very first write). Pure.
pub fn kept_name(doc: &[u8]) -> String {
    match run_id_of(doc).filter(|id| !id.is_empty()) {
        Some(id) => SafeName::lossy(&id).with_ext("json"),
        None => "unreadable.json".into(),
    }
}

/// The string value of the first `"run_id"` key of a results document, found by a scan
/// (no JSON parser in the init for one field; `run_id` precedes any nested object in
/// a document [`RunResults::to_json`] wrote). `None` when absent or not a plain string.
fn run_id_of(doc: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(doc).ok()?;
    let after = &text[text.find("\"run_id\"")? + "\"run_id\"".len()..];
    let value = after
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix('"')?;
    let end = value.find(['"', '\\'])?;
    Some(value[..end].to_owned())
}

/// Before this run writes anything: removes a temp file a cut left behind and keeps a
/// copy of the previous boot's document as `runs/<its run id>.json` (`-2`, `-3`... if
/// taken by another document), so no boot overwrites another's results. A copy, not a
/// move: written to `runs/<id>.tmp`, fsynced, renamed inside `runs/`, the folder
/// fsynced; `results.json` itself stays until this run's first save replaces it
/// (temp + rename in its own folder). A rename across two FAT folders writes two
/// directory blocks in no set order, and a cut between them lost the only copy (the
/// power-cut test, cut 15 of seed 0xbe7c4a11ed). A document already kept (a cut before
/// the last boot's first save) is not kept twice. The document is the newer of the FAT
/// copy and the results journal's newest record ([`crate::journal::previous_document`]).
fn keep_previous_run(plan: &Plan, results: &mut RunResults) {
    let dir = Path::new(RESULTS_MNT);
    let _ = std::fs::remove_file(dir.join(format!("{}.tmp", plan.results.file)));
    let _ = std::fs::remove_file(dir.join(format!("{}.tmp", crate::log::FILE)));
    let current = dir.join(&plan.results.file);
    // The journal's newest record when the FAT copy lags it (a cut between the two
    // writes) or is gone.
    // Bounded (64 MiB, regular files only): the card may have been written by another
    // computer, and PID 1 has the board's RAM only.
    let fat = benchboot_results::read_document_file(&current).ok();
    let journal = crate::journal::take_newest();
    let Some(doc) = crate::journal::previous_document(fat, journal.clone()) else {
        return;
    };
    let in_journal = journal.as_deref() == Some(doc.as_slice());
    let runs = dir.join(RUNS_DIR);
    let keep = || -> std::io::Result<String> {
        std::fs::create_dir_all(&runs)?;
        std::fs::File::open(dir)?.sync_all()?;
        let name = kept_name(&doc);
        let stem = name.trim_end_matches(".json").to_owned();
        let mut rel = format!("{RUNS_DIR}/{name}");
        let mut n = 2;
        loop {
            match benchboot_results::read_document_file(&dir.join(&rel)) {
                // Kept already, by a boot cut before its first save.
                Ok(kept) if kept == doc => return Ok(rel),
                Ok(_) => {
                    rel = format!("{RUNS_DIR}/{stem}-{n}.json");
                    n += 1;
                }
                Err(_) => break,
            }
        }
        let copy = |bytes: &[u8], to: &Path| -> std::io::Result<()> {
            let tmp = to.with_extension("tmp");
            let mut f = std::fs::File::create(&tmp)?;
            std::io::Write::write_all(&mut f, bytes)?;
            f.sync_all()?;
            std::fs::rename(&tmp, to)?;
            f.sync_all()?;
            std::fs::File::open(&runs)?.sync_all()
        };
        copy(&doc, &dir.join(&rel))?;
        // Its log goes with it: runs/<run id>.defmt (decode with that boot's init.elf).
        if let Ok(log) = benchboot_input::read(
            &dir.join(crate::log::FILE),
            "a defmt log",
            crate::log::MAX_FILE_BYTES,
        ) {
            let _ = copy(&log, &dir.join(&rel).with_extension("defmt"));
        }
        Ok(rel)
    };
    match keep() {
        Ok(rel) => {
            say(&format!("previous run kept as {rel}"));
            results.system.previous_run = Some(rel);
        }
        Err(e) => {
            say(&format!("cannot keep the previous run: {e}"));
            // Still on the card when it is the journal's newest record.
            let (severity, held) = if in_journal {
                (Severity::Warning, "; the results journal still holds it")
            } else {
                (Severity::Error, "")
            };
            results.event("results.keep", severity, format!("{e}{held}"));
        }
    }
}

/// The board's addresses the results server can be reached at: the static interface's
/// and, on every gadget link still up (composite mode keeps its links), the link's
/// IPv4 address and `fe80::1` scoped to its interface (`benchboot fetch` tries
/// `[fe80::1%IFACE]:8080` too).
fn served_addresses(plan: &Plan, results: &RunResults) -> Vec<SocketAddr> {
    let port = plan.network.port;
    let mut v = Vec::new();
    if !plan.network.interface.is_empty() {
        v.push(SocketAddr::from((plan.network.address, port)));
    }
    if plan.network.gadget.as_ref().is_some_and(|g| !g.in_turn) {
        for l in &results.network.links {
            v.push(SocketAddr::from((l.board_address, port)));
            if let Some(index) = if_index(&l.board_interface) {
                v.push(SocketAddr::V6(SocketAddrV6::new(
                    BOARD_LINK_LOCAL.into(),
                    port,
                    0,
                    index,
                )));
            }
        }
    }
    v
}

/// An interface's index (`/sys/class/net/<name>/ifindex`).
fn if_index(name: &str) -> Option<u32> {
    std::fs::read_to_string(Path::new("/sys/class/net").join(name).join("ifindex"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Brings up the static interface (if the plan names one) and binds the results
/// server on each address of [`served_addresses`], never on 0.0.0.0: the server is
/// reachable from the results link only. Bound once; later calls (the panic path)
/// get the same sockets.
fn bring_up_network(plan: &Plan, results: &mut RunResults) -> Option<&'static [TcpListener]> {
    if let Some(ls) = LISTENERS.get() {
        return Some(ls);
    }
    let n = &plan.network;
    let static_up = !n.interface.is_empty() && bring_up_static(plan, results);
    let gadget_up =
        n.gadget.as_ref().is_some_and(|g| !g.in_turn) && !results.network.links.is_empty();
    if !static_up && !gadget_up {
        return None;
    }
    let mut bound = Vec::new();
    for at in served_addresses(plan, results) {
        match TcpListener::bind(at) {
            Ok(l) => bound.push(l),
            // fe80::1 is best effort (the link may have refused it: network.rs says so).
            Err(e) if at.is_ipv6() => say(&format!("cannot listen on {at}: {e}")),
            Err(e) => {
                say(&format!("cannot listen on {at}: {e}"));
                results.event("network.listen", Severity::Error, format!("{at}: {e}"));
            }
        }
    }
    if bound.is_empty() {
        return None;
    }
    crate::energy::results_link_up();
    Some(LISTENERS.get_or_init(|| bound))
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
mod tests;
