//! Drivers by modalias: PID 1 does what udev's `kmod load $env{MODALIAS}` rule does on a
//! distribution. It walks `/sys/devices` for devices with a `modalias` and no `driver`
//! link, loads the modules of the image's alias table that match
//! ([`benchboot_plan::MODULES_ALIAS_PATH`], made by `cargo xtask image`), their
//! dependencies and softdeps first, and records in the results what it loaded for which
//! device and which devices have no driver in the image.
//!
//! The kernel loads nothing by modalias for an init without udev (boards-and-boot.md),
//! so a USB disk or adapter, or a device the board file's lists forgot, gets no driver
//! otherwise. What to load is decided by benchboot-kmod's `autoload` (host-tested); this
//! file reads sysfs and calls `finit_module(2)` ([`crate::sys::load_module`]).
//!
//! [`scan`] runs where devices may have appeared: after the plan's modules (`boot`),
//! before the storage targets are looked for (`storage`), before each wired link is
//! looked for (`network.wired.<name>`) and at the end (`end`). [`poll`] runs inside the
//! bounded waits for a disk or an interface: it looks again only when the kernel has
//! sent a uevent since the last look (`/sys/kernel/uevent_seqnum`), so a USB disk
//! plugged in during the wait (usb-storage, then sd_mod for its SCSI disk) is served
//! while PID 1 waits for it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use benchboot_kmod::autoload::{decide, Device};
use benchboot_kmod::{canonical, AliasTable};
use benchboot_plan::{MODULES_ALIAS_PATH, MODULES_DIR};
use benchboot_results::{ModaliasLoad, NoDriver, RunResults, Severity};

use crate::console::say;
use crate::sys;

/// Where devices are looked for.
pub const SYS_DEVICES: &str = "/sys/devices";
/// The number of the kernel's last uevent (lib/kobject_uevent.c `uevent_seqnum`,
/// exposed by kernel/ksysfs.c): it changes whenever a device comes or goes.
pub const UEVENT_SEQNUM: &str = "/sys/kernel/uevent_seqnum";
/// The deepest directory below [`SYS_DEVICES`] looked into. A SCSI disk of a UAS
/// enclosure behind a Pi 4's PCIe xHCI sits 11 levels down
/// (`platform/scb/fd500000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0/usb2/2-1/2-1:1.0/
/// host0/target0:0:0/0:0:0:0`); hubs add one level each.
pub const MAX_DEPTH: usize = 24;
/// The most directories one walk reads (a Pi's `/sys/devices` has a few thousand).
pub const MAX_DIRS: usize = 20_000;
/// Walks per [`scan`]: a module loaded in one walk may bring devices for the next
/// (usb-storage's SCSI host, then its disk).
const ROUNDS: usize = 3;

/// The devices below `root` that have a `modalias`, in path order, walking real
/// directories only (sysfs links such as `subsystem`, `driver` and `port` are never
/// followed, so there are no loops), at most [`MAX_DEPTH`] deep and [`MAX_DIRS`]
/// directories. The flag says the walk stopped at a bound.
pub fn devices(root: &Path) -> (Vec<Device>, bool) {
    let mut out = Vec::new();
    let mut cut = false;
    let mut seen = 0usize;
    let mut stack: Vec<(PathBuf, usize)> = vec![(root.to_path_buf(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        seen += 1;
        if seen > MAX_DIRS {
            cut = true;
            break;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue; // gone since its parent was read (a device unplugged)
        };
        let (mut modalias, mut driver) = (false, false);
        let mut children = Vec::new();
        for e in entries.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            let name = e.file_name();
            if kind.is_dir() {
                children.push(e.path());
            } else if name == "modalias" && kind.is_file() {
                modalias = true;
            } else if name == "driver" {
                driver = true;
            }
        }
        if depth >= MAX_DEPTH && !children.is_empty() {
            cut = true;
        } else {
            children.sort();
            stack.extend(children.into_iter().rev().map(|c| (c, depth + 1)));
        }
        if !modalias {
            continue;
        }
        let Ok(raw) = std::fs::read(dir.join("modalias")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&raw).trim().to_owned();
        if text.is_empty() {
            continue;
        }
        let subsystem = std::fs::read_link(dir.join("subsystem"))
            .ok()
            .and_then(|l| l.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_default();
        out.push(Device {
            path: dir.to_string_lossy().into_owned(),
            modalias: text,
            subsystem,
            bound: driver,
        });
    }
    (out, cut)
}

/// What the scans know between calls.
struct State {
    /// `None`: the image's table could not be read (said once in the results).
    table: Option<AliasTable>,
    /// Modules loaded or tried this boot (the plan's list first): never again.
    done: BTreeSet<String>,
    /// [`UEVENT_SEQNUM`] when the last walk started.
    seqnum: Option<String>,
    /// The scan point [`poll`] records under.
    at: String,
    /// Said once: the walk hit a bound.
    cut_said: bool,
    /// Loads not yet in the results.
    loads: Vec<ModaliasLoad>,
    /// Events not yet in the results: (step, severity, message).
    events: Vec<(String, Severity, String)>,
    /// Devices without a driver as of the last walk.
    no_driver: Vec<NoDriver>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn load_table(path: &Path) -> Result<AliasTable, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "{}: {e}: drivers are loaded from the plan's list only (the image build writes \
             this table: rebuild the image)",
            path.display()
        )
    })?;
    AliasTable::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

impl State {
    fn new(plan_modules: &[String], table_path: &Path) -> State {
        let mut events = Vec::new();
        let table = match load_table(table_path) {
            Ok(t) => Some(t),
            Err(e) => {
                say(&format!("modalias: {e}"));
                events.push(("modalias".to_owned(), Severity::Warning, e));
                None
            }
        };
        State {
            table,
            done: plan_modules.iter().map(|m| canonical(m)).collect(),
            seqnum: None,
            at: String::new(),
            cut_said: false,
            loads: Vec::new(),
            events,
            no_driver: Vec::new(),
        }
    }

    /// Walks `root` up to [`ROUNDS`] times, loading what the table matches with `load`
    /// (a module's name → `finit_module`'s answer), and updates the devices without a
    /// driver.
    fn walk(&mut self, root: &Path, load: &mut dyn FnMut(&str) -> std::io::Result<()>) {
        let Some(table) = self.table.take() else {
            return;
        };
        self.walk_with(&table, root, load);
        self.table = Some(table);
    }

    fn walk_with(
        &mut self,
        table: &AliasTable,
        root: &Path,
        load: &mut dyn FnMut(&str) -> std::io::Result<()>,
    ) {
        self.seqnum = std::fs::read_to_string(UEVENT_SEQNUM).ok();
        for _ in 0..ROUNDS {
            let (found, cut) = devices(root);
            if cut && !self.cut_said {
                self.cut_said = true;
                self.events.push((
                    "modalias".into(),
                    Severity::Warning,
                    format!(
                        "{}: stopped at {MAX_DIRS} folders or {MAX_DEPTH} levels: devices past \
                         that were not looked at",
                        root.display()
                    ),
                ));
            }
            let d = decide(&found, table, &self.done);
            for (m, dep) in &d.broken {
                if self.done.insert(m.clone()) {
                    self.events.push((
                        format!("module.{m}"),
                        Severity::Error,
                        format!(
                            "a device needs {m}, but {dep}, which it depends on, is not in \
                             the image"
                        ),
                    ));
                }
            }
            self.note_no_driver(&d.no_driver);
            if d.loads.is_empty() {
                break;
            }
            for l in d.loads {
                self.done.insert(l.module.clone());
                let error = load(&l.module).err().map(|e| e.to_string());
                let rec = ModaliasLoad {
                    module: l.module.clone(),
                    device: l.device,
                    modalias: l.modalias,
                    why: l.why.to_string(),
                    at: self.at.clone(),
                    error,
                };
                say(&format!("modalias: {}", rec.line()));
                if rec.error.is_some() {
                    self.events.push((
                        format!("module.{}", rec.module),
                        Severity::Error,
                        rec.line(),
                    ));
                }
                self.loads.push(rec);
            }
        }
    }

    /// The devices without a driver after a walk: new ones are said and recorded with
    /// this scan point, known ones keep theirs, ones that got a driver or a module are
    /// dropped, ones that went away stay (they were there without a driver).
    fn note_no_driver(&mut self, now: &[Device]) {
        let same = |n: &NoDriver, d: &Device| n.device == d.path && n.modalias == d.modalias;
        let mut next: Vec<NoDriver> = self
            .no_driver
            .drain(..)
            .filter(|n| now.iter().any(|d| same(n, d)) || !Path::new(&n.device).exists())
            .collect();
        for d in now {
            if !next.iter().any(|n| same(n, d)) {
                let n = NoDriver {
                    device: d.path.clone(),
                    modalias: d.modalias.clone(),
                    subsystem: d.subsystem.clone(),
                    at: self.at.clone(),
                };
                say(&format!("modalias: {}", n.line()));
                next.push(n);
            }
        }
        self.no_driver = next;
    }

    /// Moves what happened into `results`.
    fn flush(&mut self, results: &mut RunResults) {
        results.modalias.loaded.append(&mut self.loads);
        results.modalias.no_driver = self.no_driver.clone();
        for (step, severity, message) in self.events.drain(..) {
            results.event(step, severity, message);
        }
    }
}

fn load_from_image(module: &str) -> std::io::Result<()> {
    sys::load_module(&Path::new(MODULES_DIR).join(format!("{module}.ko")))
}

/// Looks at every device now, loads what matches (see the module docs), and records it
/// in `results` under scan point `at` (`boot`, `storage`, `network.wired.<name>`,
/// `end`). Never fails: a module that does not load is an error event and a
/// [`ModaliasLoad`] with its error; the run goes on.
pub fn scan(at: &str, results: &mut RunResults) {
    let mut guard = STATE.lock().unwrap_or_else(|p| p.into_inner());
    let state = guard
        .get_or_insert_with(|| State::new(&results.plan.modules, Path::new(MODULES_ALIAS_PATH)));
    state.at = at.to_owned();
    state.walk(Path::new(SYS_DEVICES), &mut load_from_image);
    state.flush(results);
}

/// Inside a bounded wait: looks again (as [`scan`], under the last scan's point) only
/// when the kernel has sent a uevent since the last look; what it does reaches the
/// results at the next [`scan`]. Does nothing before the first [`scan`] and in any
/// process but PID 1 (host tests of the waits).
pub fn poll() {
    if std::process::id() != 1 {
        return;
    }
    let Ok(mut guard) = STATE.try_lock() else {
        return;
    };
    let Some(state) = guard.as_mut() else {
        return;
    };
    if std::fs::read_to_string(UEVENT_SEQNUM).ok() == state.seqnum {
        return;
    }
    state.walk(Path::new(SYS_DEVICES), &mut load_from_image);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    const STICK: &str = "usb:v0781p5581d0100dc00dsc00dp00ic08isc06ip50in00";

    fn results() -> RunResults {
        RunResults::new(
            "t".into(),
            benchboot_plan::Plan::example(),
            benchboot_results::SystemInfo::default(),
        )
    }

    const RTL8153: &str = "usb:v0BDAp8153d3100dc00dsc00dp00icFFisc00ip00in00";

    /// A device folder with its modalias, subsystem link and, if `driver`, a driver link.
    fn device(root: &Path, rel: &str, modalias: &str, subsystem: &str, driver: bool) -> PathBuf {
        let d = root.join("devices").join(rel);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("modalias"), format!("{modalias}\n")).unwrap();
        let bus = root.join("bus").join(subsystem);
        std::fs::create_dir_all(bus.join("drivers/x")).unwrap();
        symlink(&bus, d.join("subsystem")).unwrap();
        if driver {
            symlink(bus.join("drivers/x"), d.join("driver")).unwrap();
        }
        d
    }

    fn table_file(dir: &Path) -> PathBuf {
        let p = dir.join("modules.alias");
        std::fs::write(
            &p,
            "alias usb:v*p*d*dc*dsc*dp*ic08isc06ip50in* usb_storage\n\
             alias scsi:t-0x00* sd_mod\n\
             depends usbcore:\n\
             depends scsi_mod:\n\
             depends usb_storage: usbcore scsi_mod\n\
             depends sd_mod: scsi_mod\n",
        )
        .unwrap();
        p
    }

    #[test]
    fn the_walk_reads_real_folders_only() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        let usb = device(root, "platform/usb/1-1/1-1:1.0", STICK, "usb", false);
        device(root, "platform/usb/1-1/1-1:1.1", RTL8153, "usb", true);
        // A link back up (sysfs has `port`, `subsystem`, `device` links): never followed.
        symlink(root.join("devices"), usb.join("loop")).unwrap();
        std::fs::create_dir_all(root.join("devices/platform/usb/empty")).unwrap();
        let (found, cut) = devices(&root.join("devices"));
        assert!(!cut);
        let got: Vec<(&str, &str, bool)> = found
            .iter()
            .map(|d| (d.modalias.as_str(), d.subsystem.as_str(), d.bound))
            .collect();
        assert_eq!(got, [(STICK, "usb", false), (RTL8153, "usb", true)]);
        assert_eq!(found[0].path, usb.to_string_lossy());
    }

    #[test]
    fn the_walk_stops_at_its_depth() {
        let t = tempfile::tempdir().unwrap();
        let deep = (0..MAX_DEPTH + 2)
            .map(|i| format!("d{i}"))
            .collect::<Vec<_>>()
            .join("/");
        device(t.path(), &deep, STICK, "usb", false);
        let (found, cut) = devices(&t.path().join("devices"));
        assert!(cut);
        assert!(found.is_empty());
    }

    #[test]
    fn loads_once_records_and_reports() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        let stick = device(root, "platform/usb/1-1/1-1:1.0", STICK, "usb", false);
        let adapter = device(root, "platform/usb/1-2/1-2:1.0", RTL8153, "usb", false);
        device(
            root,
            "system/cpu/cpu0",
            "cpu:type:aarch64:feature:,0001",
            "cpu",
            false,
        );
        let mut state = State::new(&["usbcore".to_owned()], &table_file(root));
        state.at = "boot".into();
        let mut loaded = Vec::new();
        state.walk(&root.join("devices"), &mut |m| {
            loaded.push(m.to_owned());
            if m == "usb_storage" {
                // Loading the driver binds the stick and brings its SCSI disk.
                symlink(root.join("bus/usb/drivers/x"), stick.join("driver")).unwrap();
                device(
                    root,
                    "platform/usb/1-1/1-1:1.0/host0/0:0:0:0",
                    "scsi:t-0x00",
                    "scsi",
                    false,
                );
            }
            Ok(())
        });
        // usbcore came with the plan; the SCSI disk's sd_mod in the next round.
        assert_eq!(loaded, ["scsi_mod", "usb_storage", "sd_mod"]);
        let mut r = results();
        state.flush(&mut r);
        let m = &r.modalias;
        let got: Vec<(&str, &str, &str)> = m
            .loaded
            .iter()
            .map(|l| (l.module.as_str(), l.why.as_str(), l.at.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("scsi_mod", "dependency of usb_storage", "boot"),
                ("usb_storage", "alias", "boot"),
                ("sd_mod", "alias", "boot")
            ]
        );
        assert_eq!(m.loaded[1].device, stick.to_string_lossy());
        // The adapter has no driver in the image; the CPU never binds one.
        assert_eq!(m.no_driver.len(), 1);
        assert_eq!(m.no_driver[0].device, adapter.to_string_lossy());
        assert_eq!(m.no_driver[0].at, "boot");
        assert!(r.events.is_empty(), "{:?}", r.events);
        // A later scan loads nothing again and keeps the adapter's first scan point.
        state.at = "storage".into();
        state.walk(&root.join("devices"), &mut |m| panic!("{m} loaded twice"));
        state.flush(&mut r);
        assert_eq!(r.modalias.loaded.len(), 3);
        assert_eq!(r.modalias.no_driver[0].at, "boot");
        // Its driver bound after all (a built-in driver's late probe): dropped.
        symlink(root.join("bus/usb/drivers/x"), adapter.join("driver")).unwrap();
        state.walk(&root.join("devices"), &mut |m| panic!("{m}"));
        state.flush(&mut r);
        assert!(r.modalias.no_driver.is_empty());
    }

    #[test]
    fn a_failed_load_is_an_error_event_and_a_missing_table_a_warning() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        device(root, "platform/usb/1-1/1-1:1.0", STICK, "usb", false);
        let mut state = State::new(
            &["usbcore".to_owned(), "scsi_mod".to_owned()],
            &table_file(root),
        );
        state.at = "storage".into();
        state.walk(&root.join("devices"), &mut |_| {
            Err(std::io::Error::from_raw_os_error(libc::ENOEXEC))
        });
        let mut r = results();
        state.flush(&mut r);
        assert_eq!(r.modalias.loaded.len(), 1);
        let e = r.modalias.loaded[0].error.as_deref().unwrap();
        assert!(e.contains("Exec format error"), "{e}");
        assert_eq!(r.events.len(), 1);
        assert_eq!(r.events[0].step, "module.usb_storage");
        assert_eq!(r.events[0].severity, Severity::Error);

        let mut none = State::new(&[], &root.join("nope"));
        none.walk(&root.join("devices"), &mut |m| panic!("{m}"));
        let mut r = results();
        none.flush(&mut r);
        assert_eq!(r.events.len(), 1);
        assert_eq!(r.events[0].severity, Severity::Warning);
        assert!(
            r.events[0].message.contains("rebuild the image"),
            "{:?}",
            r.events
        );
    }
}
