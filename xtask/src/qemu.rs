//! `cargo xtask qemu --board NAME`: the main job. Builds the image, boots the kernel,
//! DTB and initramfs taken from the card's own boot partition in QEMU with the image
//! as SD card, waits for the init's ready line, runs `benchboot fetch`, stops QEMU.
//!
//! `qemu.boot = "card"` boards boot with no `-kernel`: the machine's boot ROM runs the
//! loader of a QEMU-only copy of the card ([`card_stand_in`]: e.g. the Banana Pi M1's
//! card with the M2 Ultra's SPL and DTB for `bpim2u`), so SPL, U-Boot and extlinux.conf
//! are exercised for real. `qemu.network = "none"`: after the ready line QEMU is stopped
//! and the results are read from the card's results partition (`benchboot collect
//! --from-card`'s reader).
//!
//! QEMU's user-mode network forwards 127.0.0.1:<free port> on the host to the board's
//! results server; nothing leaves this machine.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use benchboot_board::{Board, Qemu, QemuNetwork};

use crate::image;
use crate::timing::{self, Recorder};
use benchboot_plan::QEMU_RESULTS_FORWARD;

mod args;
pub mod console;
use args::{boot_args, card_copy, qemu_args, qemu_of};
mod devices;
pub use devices::{usb_disk_args, with_console, UsbDisk, UsbTransport};

pub mod meter;

mod options;
pub use options::Options;

mod wired;
use wired::{wired_stand_ins, WiredStandIns};

/// The line PID 1 prints once results are on disk and served (firmware console.rs).
pub const READY_MARKER: &str = "benchboot: ready";
/// The first line PID 1 prints.
pub const START_MARKER: &str = "benchboot: start";
/// Kernel parameter that selects the short emulated plan.
pub const QEMU_PLAN_PARAM: &str = "benchboot.plan=qemu";

/// What a QEMU run produced.
#[derive(Debug, Clone)]
pub struct Run {
    pub image: PathBuf,
    pub manifest: PathBuf,
    /// `qemu.boot = "card"`: the QEMU-only copy of the card ([`card_stand_in`]), as
    /// built, before QEMU booted a copy of it.
    pub qemu_card: Option<image::Built>,
    /// The copy of the image QEMU booted (and wrote to).
    pub sd_card: PathBuf,
    /// Everything the board printed on its console.
    pub console_log: PathBuf,
    /// The results document as fetched by `benchboot fetch`, or read from the card's
    /// results partition (`qemu.network = "none"`).
    pub results: PathBuf,
    /// From QEMU start to the init's start line (kernel boot to PID 1).
    pub boot_to_init: Duration,
    /// From QEMU start to the ready line (boot + the whole plan).
    pub boot_to_ready: Duration,
    /// True when `benchboot fetch` got the results over QEMU's network (always by
    /// address: `fetch` never guesses a loopback port); false when they came from the
    /// card.
    pub fetched: bool,
    /// What the emulated meter recorded ([`Options::meter`]), its trace saved beside the
    /// results as `<board>-qemu.power.json`.
    pub meter: Option<(meter::Recorded, PathBuf)>,
    /// Wall time per phase, as printed at the end and saved as
    /// `target/qemu/<board>/timing.json` ([`timing_path`]).
    pub timing: timing::Report,
}

/// Kills QEMU when dropped, whatever happened.
struct Guard(Child);
impl Guard {
    /// Kills QEMU now (again is harmless: the child is reaped once).
    fn stop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
impl Drop for Guard {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The kernel command line QEMU passes: the card's cmdline.txt, the board's QEMU
/// additions, and the QEMU plan.
pub fn append(cmdline_txt: &str, board_append: &str) -> String {
    [cmdline_txt.trim(), board_append.trim(), QEMU_PLAN_PARAM]
        .iter()
        .filter(|s| !s.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The board as the QEMU-only copy of its card sees it (`qemu.boot = "card"`): the
/// QEMU loader (`qemu.loader`) and DTB (`qemu.dtb`, edited by `qemu.dtb-fixups` only:
/// the board's own fix-ups name nodes of its own DTB) replace the board's where given,
/// and the kernel command line, which the card's boot configuration carries
/// (extlinux.conf's `append`), gets the QEMU additions and the QEMU plan. Name, CPU,
/// kernel, modules and storage stay the board's, so the results name the board.
///
/// # Errors
/// When the board has no `[qemu]` section.
pub fn card_stand_in(board: &Board) -> Result<Board> {
    let Some(q) = &board.qemu else {
        bail!("boards/{}.toml has no [qemu] section", board.name);
    };
    let mut b = board.clone();
    if let Some(l) = &q.loader {
        b.loader = Some(l.clone());
    }
    match &q.dtb {
        Some(dtb) => {
            b.kernel.dtb = Some(dtb.clone());
            b.kernel.dtb_fixups.clone_from(&q.dtb_fixups);
        }
        None => b.kernel.dtb_fixups.extend(q.dtb_fixups.iter().cloned()),
    }
    b.boot.cmdline = append(&board.boot.cmdline, &q.append);
    // The driver-chain check proves the board's own DTB in the board's own image; this
    // QEMU-only card carries another machine's DTB, which the board's [hardware] node
    // paths do not describe (a QEMU-only copy never stands in for that proof).
    b.hardware = None;
    // Applied above: the stand-in's own [qemu] replaces and appends nothing more.
    b.qemu = Some(Qemu {
        loader: None,
        dtb: None,
        dtb_fixups: Vec::new(),
        append: String::new(),
        ..q.clone()
    });
    Ok(b)
}

/// Where the QEMU-only copy of `board`'s card is built (`qemu.boot = "card"`): beside
/// QEMU's other files, never under `target/images/`, so it is not taken for the card.
pub fn card_image_path(board: &Board) -> PathBuf {
    work_dir(board).join("card.img")
}

/// `target/qemu/<board>/`: the console log, the card copy QEMU boots and writes.
pub fn work_dir(board: &Board) -> PathBuf {
    crate::target_dir().join("qemu").join(&board.name)
}

/// Boots `board`'s image with the QEMU plan until its ready line and fetches the results
/// ([`run_with`] with the defaults).
pub fn run(board: &Board, timeout: Duration) -> Result<Run> {
    run_with(board, &Options::new(timeout))
}

/// A QEMU that is running a board, its console read line by line on a thread.
struct Launched {
    guard: Guard,
    lines: mpsc::Receiver<String>,
    tally: std::sync::Arc<std::sync::Mutex<console::Tally>>,
    started: Instant,
    console_log: PathBuf,
    sd: PathBuf,
    port: u16,
    meter: Option<meter::EmulatedMeter>,
    built: image::Built,
    qemu_card: Option<image::Built>,
    /// When PID 1's start line came.
    start_at: Option<Instant>,
    /// The first energy mark (`mark begin <step>`) of each area of PID 1's plan, as it
    /// came; at most [`timing::MAX_PHASES`].
    areas: Vec<(String, Instant)>,
    /// The wired tests' peer on this machine, ended with QEMU.
    _peer: Option<Guard>,
}

/// Builds the image (cached when nothing changed), prepares the card QEMU writes to and
/// starts QEMU with its console on a pipe.
fn launch(board: &Board, opts: &Options, rec: &mut Recorder) -> Result<Launched> {
    let q = qemu_of(board, opts)?;
    let built = image::run(board)?;
    rec.phase("image: init cross-build, kernel packages, card");
    rec.parts(built.phases.clone());
    let work = work_dir(board);
    std::fs::create_dir_all(&work)?;
    let (boot_args, qemu_card, plan) = boot_args(board, q, opts, &built, &work)?;
    let sd = card_copy(opts, &work, qemu_card.as_ref().unwrap_or(&built))?;
    // The well-known forward lets `benchboot fetch` find the board with no address;
    // another QEMU holding it means a free port and an explicit address instead.
    let port = if port_is_free(QEMU_RESULTS_FORWARD) {
        QEMU_RESULTS_FORWARD
    } else {
        free_port()?
    };
    // The QEMU plans that measure the wired links need their far ends outside the guest.
    let stand_ins = if plan == "qemu" || plan == benchboot_image::plans::QEMU_SHORT {
        wired_stand_ins(q, &work)?
    } else {
        WiredStandIns::default()
    };
    let mut args = qemu_args(q, boot_args, &sd, &opts.extra_disks, port, &stand_ins);
    args.extend(usb_disk_args(&opts.usb_disks));
    args.extend(opts.extra_args.iter().cloned());
    eprintln!("qemu: {} {}", q.system, args.join(" "));
    eprintln!("qemu: EMULATED run: throughput figures from QEMU say nothing about the hardware");
    let started = Instant::now();
    rec.phase_at("QEMU's card copy and start", started);
    let child = Command::new(&q.system)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {} (apt-get install qemu-system-arm)", q.system))?;
    let mut guard = Guard(child);
    let meter = opts
        .meter
        .then(|| meter::EmulatedMeter::start(guard.0.id(), started));
    let stamps = meter.as_ref().map(|m| std::sync::Arc::clone(&m.console));
    let stdout = guard.0.stdout.take().context("no QEMU stdout")?;
    let console_log = work.join("console.log");
    let (tx, lines) = mpsc::channel();
    let log = std::fs::File::create(&console_log)?;
    eprintln!(
        "qemu: the console's every line goes to {}; here: boot milestones, PID 1's steps, \
         progress, verdicts",
        console_log.display()
    );
    // The marks, document chunks and figure lines stay in console.log, off the terminal.
    let tally = console::spawn_reader(stdout, log, stamps, started, tx);
    Ok(Launched {
        guard,
        lines,
        tally,
        started,
        console_log,
        sd,
        port,
        meter,
        built,
        qemu_card,
        start_at: None,
        areas: Vec::new(),
        _peer: stand_ins.peer,
    })
}

impl Launched {
    /// What the run produced, QEMU stopped (if it was not already).
    fn into_run(
        self,
        results: PathBuf,
        boot_to_init: Duration,
        boot_to_ready: Duration,
        fetched: bool,
        timing: timing::Report,
    ) -> Run {
        let meter = self.meter.map(|m| m.finish_beside(&results));
        Run {
            image: self.built.image,
            manifest: self.built.manifest,
            qemu_card: self.qemu_card,
            sd_card: self.sd,
            console_log: self.console_log,
            results,
            boot_to_init,
            boot_to_ready,
            fetched,
            meter,
            timing,
        }
    }

    /// Runs `benchboot fetch` against the forwarded results port every 3 s until the
    /// board serves its document (saved to `out`); returns when it did (from QEMU
    /// start). Before PID 1 serves, QEMU's user network accepts the connection and the
    /// guest resets it: a quick failure, tried again.
    fn fetch_when_served(
        &mut self,
        host: &Path,
        out: &Path,
        deadline: Instant,
    ) -> Result<Duration> {
        loop {
            if let Some(status) = self.guard.0.try_wait()? {
                bail!(
                    "QEMU exited ({status}) before the board served its results; console \
                     (empty without one) in {}",
                    self.console_log.display()
                );
            }
            let got = Command::new(host)
                .args(["fetch", "--timeout", "20", "--addr"])
                .arg(format!("127.0.0.1:{}", self.port))
                .arg("--out")
                .arg(out)
                .stdin(Stdio::null())
                .output()
                .with_context(|| format!("running {}", host.display()))?;
            if got.status.success() {
                return Ok(self.started.elapsed());
            }
            let last = String::from_utf8_lossy(&got.stderr).trim().to_owned();
            if Instant::now() >= deadline {
                bail!(
                    "the board served no results within {} s (last `benchboot fetch`: {last})",
                    deadline.duration_since(self.started).as_secs()
                );
            }
            // Drain the console (nothing is expected) so its pipe never fills.
            while self.lines.try_recv().is_ok() {}
            std::thread::sleep(Duration::from_secs(3));
        }
    }

    /// Notes when the first energy mark of a new area of the plan came (`mark begin
    /// storage.ext2.sync.bs512`: area `storage`).
    fn note_area(&mut self, line: &str) {
        let Some(benchboot_energy::marks::Mark::Step {
            edge: benchboot_energy::marks::Edge::Begin,
            step,
            ..
        }) = benchboot_energy::marks::parse(line)
        else {
            return;
        };
        let area = step.split('.').next().unwrap_or_default();
        if self.areas.last().map(|a| a.0.as_str()) != Some(area)
            && self.areas.len() < timing::MAX_PHASES
        {
            self.areas.push((area.to_owned(), Instant::now()));
        }
    }

    /// Reads console lines until one contains `marker`; returns when it came (from QEMU
    /// start). Notes the start line's time in `start` on the way.
    fn wait_for(
        &mut self,
        marker: &str,
        deadline: Instant,
        start: &mut Option<Duration>,
    ) -> Result<Duration> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left.min(Duration::from_secs(1))) {
                Ok(line) => {
                    if line.contains(START_MARKER) {
                        *start = Some(self.started.elapsed());
                        self.start_at = Some(Instant::now());
                    }
                    self.note_area(&line);
                    if line.contains(marker) {
                        return Ok(self.started.elapsed());
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if Instant::now() >= deadline {
                        bail!(
                            "no `{marker}` line within {} s; console in {}",
                            deadline.duration_since(self.started).as_secs(),
                            self.console_log.display()
                        );
                    }
                    if let Some(status) = self.guard.0.try_wait()? {
                        bail!(
                            "QEMU exited ({status}) before the `{marker}` line; console in {}",
                            self.console_log.display()
                        );
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => bail!(
                    "QEMU closed its console before the `{marker}` line; console in {}",
                    self.console_log.display()
                ),
            }
        }
    }
}

/// Boots the board ([`Options`]) until its ready line, then fetches the results over
/// QEMU's forwarded port with `benchboot fetch` (or, with no emulated NIC, stops QEMU
/// and reads them from the card's results partition). Ends with the wall time of each
/// phase ([`timing`]), printed last and saved as [`timing_path`].
pub fn run_with(board: &Board, opts: &Options) -> Result<Run> {
    let mut rec = Recorder::default();
    if let Some(secs) = timing::cargo_lead() {
        rec.before_start("cargo run: xtask compiled (if changed) and started", secs);
    }
    let q = board.qemu.as_ref();
    let networked = !matches!(q.map(|q| q.network), Some(QemuNetwork::None) | None);
    // The host tool fetches over the network, or prints the tables of the card's copy.
    let host = build_host_tool(false)?;
    rec.phase("host tool: cargo build -p benchboot");
    let mut l = launch(board, opts, &mut rec)?;
    let results = crate::target_dir()
        .join("results")
        .join(format!("{}-qemu.json", board.name));
    let deadline = l.started + opts.timeout;
    if opts.console.is_some() {
        // No console: nothing on the serial port, so no ready line to await. The board
        // serves its results once the plan is done: fetch until it answers.
        let boot_to_ready = l.fetch_when_served(&host, &results, deadline)?;
        l.guard.stop();
        rec.phase("QEMU: boot, plan and fetch (no console: no marks)");
        eprintln!(
            "qemu: results served {:.1} s after QEMU (boot + plan; no console)",
            boot_to_ready.as_secs_f64()
        );
        let timing = finish_timing(board, &rec)?;
        return Ok(l.into_run(results, boot_to_ready, boot_to_ready, false, timing));
    }
    let mut start = None;
    let boot_to_ready = l.wait_for(READY_MARKER, deadline, &mut start)?;
    let ready_at = l.started + boot_to_ready;
    let boot_to_init = start.unwrap_or(boot_to_ready);
    let start_at = l.start_at.unwrap_or(ready_at);
    rec.phase_at("QEMU: boot to PID 1 (loader, kernel, initramfs)", start_at);
    rec.phase_at("PID 1's plan (start line to ready line)", ready_at);
    rec.parts(timing::plan_parts(start_at, &l.areas, ready_at));
    eprintln!(
        "qemu: PID 1 started {:.1} s after QEMU; ready {:.1} s after QEMU (boot + plan)",
        boot_to_init.as_secs_f64(),
        boot_to_ready.as_secs_f64()
    );
    if networked {
        fetch_results(&mut l, &host, &results)?;
        rec.phase("results: benchboot fetch over QEMU's user network, and its report");
    } else {
        card_results(&mut l, &host, &results)?;
        rec.phase("results: read from the card, and benchboot show's report");
    }
    let (tally, log) = (std::sync::Arc::clone(&l.tally), l.console_log.clone());
    let mut run = l.into_run(
        results,
        boot_to_init,
        boot_to_ready,
        networked,
        rec.report(""),
    );
    if let Some((_, trace)) = &run.meter {
        // The energy per step, EMULATED: `benchboot power show` aligns and integrates.
        let status = Command::new(&host)
            .args(["power", "show"])
            .arg(&run.results)
            .arg(trace)
            .status()
            .with_context(|| format!("running {}", host.display()))?;
        if !status.success() {
            eprintln!("qemu: the emulated trace gave no energy figures ({status}): see above");
        }
        rec.phase("energy: benchboot power show");
    }
    eprintln!("{}", console::closing_line(&tally, &log));
    run.timing = finish_timing(board, &rec)?;
    Ok(run)
}

/// `target/qemu/<board>/timing.json`: the last run's wall time per phase
/// ([`timing::Report`]).
pub fn timing_path(board: &Board) -> PathBuf {
    work_dir(board).join("timing.json")
}

/// Prints the recorder's block (the run's last lines) and saves it as [`timing_path`].
fn finish_timing(board: &Board, rec: &Recorder) -> Result<timing::Report> {
    let report = rec.report(&board.name);
    eprintln!("{}", report.render());
    let path = timing_path(board);
    report.write(&path)?;
    eprintln!("time: saved {}", path.display());
    Ok(report)
}

/// Runs `benchboot fetch` against the board's forwarded port (it prints the report and
/// saves the document as `results`), then stops QEMU.
fn fetch_results(l: &mut Launched, host: &Path, results: &Path) -> Result<()> {
    let mut fetch = Command::new(host);
    // An emulated ARM1176 sends ~1 MB through QEMU's usb-net slowly, more so on
    // a loaded host (fetch's 30 s default timed out once beside 3 other QEMUs).
    // Always by address: `fetch` never guesses a loopback port (another local user
    // could answer there).
    fetch.args(["fetch", "--timeout", "180"]);
    fetch.args(["--addr", &format!("127.0.0.1:{}", l.port)]);
    let status = fetch
        .arg("--out")
        .arg(results)
        .status()
        .with_context(|| format!("running {}", host.display()))?;
    l.guard.stop();
    if !status.success() {
        bail!(
            "benchboot fetch failed ({status}); console in {}",
            l.console_log.display()
        );
    }
    Ok(())
}

/// No network: PID 1 wrote the results to the card (its journal, then the results
/// partition's results.json) before its ready line. Stops QEMU, reads them with the
/// card reader `benchboot collect --from-card` uses, checks the document, and prints
/// its tables with `benchboot show`.
fn card_results(l: &mut Launched, host: &Path, results: &Path) -> Result<()> {
    l.guard.stop();
    let got = benchboot_card::read_results(&l.sd)
        .with_context(|| format!("console in {}", l.console_log.display()))?;
    benchboot_results::RunResults::from_json(&got.text)
        .with_context(|| format!("{}; console in {}", got.source, l.console_log.display()))?;
    crate::write_atomically(results, got.text.as_bytes())?;
    eprintln!(
        "qemu: results from {} saved to {}",
        got.source,
        results.display()
    );
    for n in &got.notes {
        eprintln!("qemu: card: {n}");
    }
    let status = Command::new(host)
        .arg("show")
        .arg(results)
        .status()
        .with_context(|| format!("running {}", host.display()))?;
    if !status.success() {
        bail!("benchboot show {} failed ({status})", results.display());
    }
    Ok(())
}

/// What a boot that QEMU ended by itself left (a guest reset or power-off, which
/// `-no-reboot` turns into QEMU's exit).
#[derive(Debug, Clone)]
pub struct Exited {
    pub sd_card: PathBuf,
    pub console_log: PathBuf,
    /// From QEMU start to PID 1's start line.
    pub boot_to_init: Duration,
    /// From QEMU start to its exit.
    pub exited_at: Duration,
    /// QEMU's exit status.
    pub status: std::process::ExitStatus,
}

/// Boots the board ([`Options`]) and waits for QEMU to end by itself (a watchdog reset,
/// a power-off), reading the console on the way.
///
/// # Errors
/// QEMU still running at `opts.timeout` (it is killed), or could not be started.
pub fn until_exit(board: &Board, opts: &Options) -> Result<Exited> {
    let mut l = launch(board, opts, &mut Recorder::default())?;
    let deadline = l.started + opts.timeout;
    let mut boot_to_init = None;
    let status = loop {
        match l.lines.recv_timeout(Duration::from_millis(200)) {
            Ok(line) if line.contains(START_MARKER) => boot_to_init = Some(l.started.elapsed()),
            Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {}
        }
        if let Some(status) = l.guard.0.try_wait()? {
            break status;
        }
        if Instant::now() >= deadline {
            bail!(
                "QEMU still running after {} s; console in {}",
                opts.timeout.as_secs(),
                l.console_log.display()
            );
        }
    };
    let exited_at = l.started.elapsed();
    // Let the reader thread write the last lines to the log.
    while l.lines.recv_timeout(Duration::from_secs(1)).is_ok() {}
    Ok(Exited {
        sd_card: l.sd.clone(),
        console_log: l.console_log.clone(),
        boot_to_init: boot_to_init.unwrap_or(exited_at),
        exited_at,
        status,
    })
}

/// What a boot ended by a power cut left.
#[derive(Debug, Clone)]
pub struct Cut {
    /// The card as the cut left it.
    pub sd_card: PathBuf,
    /// Everything the board printed before the cut.
    pub console_log: PathBuf,
    /// From QEMU start to PID 1's start line.
    pub boot_to_init: Duration,
    /// From QEMU start to the cut.
    pub cut_at: Duration,
}

/// Boots the board ([`Options`]) and cuts its power `after` PID 1's start line: QEMU is
/// killed with SIGKILL, so whatever the guest had not yet written to its card is lost,
/// as on a board whose supply is pulled. QEMU writes the card through to the host file
/// (raw format, no QEMU cache of its own), so what the guest wrote is in the file.
pub fn cut(board: &Board, opts: &Options, after: Duration) -> Result<Cut> {
    let mut l = launch(board, opts, &mut Recorder::default())?;
    let mut start = None;
    let boot_to_init = l.wait_for(START_MARKER, l.started + opts.timeout, &mut start)?;
    let until = Instant::now() + after;
    // Keep draining the console (and the log) until the cut.
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        if left.is_zero() {
            break;
        }
        match l.lines.recv_timeout(left) {
            Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let cut_at = l.started.elapsed();
    drop(l.guard);
    // The reader thread ends with QEMU's stdout; let it flush the last lines.
    while l.lines.recv_timeout(Duration::from_secs(2)).is_ok() {}
    Ok(Cut {
        sd_card: l.sd,
        console_log: l.console_log,
        boot_to_init,
        cut_at,
    })
}

/// True when `system` (e.g. `qemu-system-arm`) has the machine `machine`
/// (`-M help`); false when it lacks it or is not installed.
pub fn has_machine(system: &str, machine: &str) -> bool {
    Command::new(system)
        .args(["-M", "help"])
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .any(|l| l.split_whitespace().next() == Some(machine))
        })
}

/// Builds the host tool (`release` for measuring with it) and returns its path.
pub fn build_host_tool(release: bool) -> Result<PathBuf> {
    let mut args = vec!["build", "--quiet", "-p", "benchboot", "--bin", "benchboot"];
    if release {
        args.push("--release");
    }
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(&args)
        .current_dir(crate::repo_root())
        .status()?;
    if !status.success() {
        bail!("building the host tool failed");
    }
    let profile = if release { "release" } else { "debug" };
    Ok(crate::target_dir().join(profile).join("benchboot"))
}

fn port_is_free(port: u16) -> bool {
    std::net::TcpListener::bind(("127.0.0.1", port)).is_ok()
}

/// A TCP port free on 127.0.0.1 right now.
fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

#[cfg(test)]
mod tests;
