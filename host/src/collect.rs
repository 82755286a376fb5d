//! `benchboot collect` and `benchboot runs`: get a run's results from a board (over its
//! USB gadget link, or from its card) into the local results store ([`crate::store`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use benchboot_card as card;
use benchboot_results::text::{escape, escape_json, escape_lines};
use benchboot_results::RunResults;

use crate::fetch;
use crate::got::Got;
use crate::store::{self, Outcome, RunRow, Store};

/// `benchboot collect`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct CollectArgs {
    /// HOST:PORT of the board's results server. Default: find the board
    /// ($BENCHBOOT_BOARD, then the gadget links 10.55.0.1/.5/.9:8080, then the board's
    /// link-local address on each USB network link). Never 127.0.0.1, where any local
    /// user can listen: name a QEMU board (--addr 127.0.0.1:18080).
    #[arg(long, conflicts_with_all = ["from_card", "from_log", "from_lava"])]
    pub addr: Option<String>,
    /// Read the card instead (boards without a USB OTG port): its block device
    /// (/dev/sdb, needs root), an image file, or the folder its results partition
    /// (BBRESULTS) is mounted on; or a results JSON saved elsewhere (`--from-file`).
    #[arg(long, visible_alias = "from-file", value_name = "PATH", conflicts_with_all = ["from_log", "from_lava"])]
    pub from_card: Option<PathBuf>,
    /// Rebuild the run from a saved console log instead: a serial capture or a LAVA job
    /// log holding the document PID 1 prints at the end of its run (every chunk
    /// checked; LAVA's stored results checked against it).
    #[arg(long, value_name = "FILE", conflicts_with = "from_lava")]
    pub from_log: Option<PathBuf>,
    /// Rebuild the run from a LAVA job: its URL (https://HOST/scheduler/job/ID; the log
    /// and results come from the REST API) or a downloaded job log.
    #[arg(long, value_name = "URL|FILE")]
    pub from_lava: Option<String>,
    /// (--from-log, --from-lava) The run to take when the log holds several.
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,
    /// (--from-lava URL) A LAVA API token, for a job that is not public. Default:
    /// $LAVA_TOKEN.
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// (--from-log, --from-lava) Store the run even when LAVA's stored results disagree
    /// with the document (the document is checked by its SHA-256 either way).
    #[arg(long)]
    pub no_lava_check: bool,
    /// The results store folder. Default: $BENCHBOOT_STORE, else
    /// $XDG_DATA_HOME/benchboot, else ~/.local/share/benchboot.
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// Seconds to wait for the board to answer (it serves results once its run is
    /// done), and for the download.
    #[arg(long, value_name = "S", default_value_t = 300)]
    pub timeout: u64,
    /// Print the stored run as JSON (run_id, board, json_path, outcome, ...).
    #[arg(long)]
    pub json: bool,
}

/// `benchboot runs`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct RunsArgs {
    /// The results store folder. Default: $BENCHBOOT_STORE, else
    /// $XDG_DATA_HOME/benchboot, else ~/.local/share/benchboot.
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// Rebuild the store's index (benchboot.db) from its documents (runs/*.json): a
    /// damaged database is moved aside as benchboot.db.damaged-<time>.
    #[arg(long)]
    pub reindex: bool,
    /// Print the runs as a JSON array (same as `--format json`).
    #[arg(long)]
    pub json: bool,
    /// Output format: a table, JSON, Markdown, or HTML (one page with every run's
    /// headline figures, each run's report written beside it; needs `-o FILE`).
    #[arg(long, value_enum, default_value_t = RunsFormat::Table)]
    pub format: RunsFormat,
    /// Write the output to FILE instead of printing it (`--format html`: the page, its
    /// runs' reports beside it).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `benchboot runs --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum RunsFormat {
    #[default]
    Table,
    Json,
    Markdown,
    Html,
}

/// `benchboot collect`: collects, prints the warnings (partial, emulated) on stderr and
/// where the run was stored (or the stored row as JSON) on stdout.
///
/// # Errors
/// As [`collect`].
pub fn run(args: &CollectArgs) -> Result<()> {
    let c = collect(&Options {
        addr: args.addr.clone(),
        from_card: args.from_card.clone(),
        from_log: match (&args.from_log, &args.from_lava) {
            (Some(f), _) => Some(LogSource::File(f.clone())),
            (None, Some(l)) => Some(LogSource::Lava(l.clone())),
            (None, None) => None,
        },
        run: args.run.clone(),
        token: args
            .token
            .clone()
            .or_else(|| std::env::var("LAVA_TOKEN").ok()),
        lava_check: !args.no_lava_check,
        store: args.store.clone(),
        timeout: Duration::from_secs(args.timeout),
        progress: true,
    })?;
    // The lines quote the document, the card's file names and LAVA's results.
    for w in warnings(&c.results) {
        crate::errln!("warning: {}", escape_lines(&w));
    }
    for n in &c.card {
        crate::errln!("card: {}", escape_lines(n));
    }
    for e in &c.earlier {
        crate::errln!("earlier boot: {}", escape_lines(e));
    }
    if let Some(l) = &c.lava {
        crate::errln!("{}", escape_lines(l));
    }
    if args.json {
        crate::out::json(&to_json(&c));
    } else {
        crate::out!("{}", summary(&c));
    }
    Ok(())
}

/// `benchboot runs`: prints [`runs`], after [`store::reindex`] for `--reindex` (what it
/// did on stderr).
///
/// # Errors
/// As [`runs`].
pub fn run_runs(args: &RunsArgs) -> Result<()> {
    if args.reindex {
        let done = store::reindex(&store::default_dir(args.store.as_deref())?)?;
        for l in done.lines() {
            crate::errln!("{l}");
        }
    }
    let format = if args.json {
        RunsFormat::Json
    } else {
        args.format
    };
    let emit = |text: &str| -> Result<()> {
        match &args.out {
            Some(path) => {
                crate::atomic_file::check_output(path)?;
                crate::atomic_file::write(path, text)?;
                crate::errln!("wrote {}", path.display());
            }
            None if format == RunsFormat::Json => crate::out::json(text),
            None => crate::out::text(crate::out::Stream::Out, text),
        }
        Ok(())
    };
    match format {
        RunsFormat::Table | RunsFormat::Json => {
            emit(&runs(args.store.as_deref(), format == RunsFormat::Json)?)
        }
        RunsFormat::Markdown | RunsFormat::Html => {
            let dir = store::default_dir(args.store.as_deref())?;
            let rows = match Store::open_existing(&dir)? {
                Some(s) => s.list()?,
                None => Vec::new(),
            };
            if format == RunsFormat::Markdown {
                let page: Vec<_> = rows.iter().map(crate::runs_page::PageRun::of).collect();
                return emit(&crate::runs_page::document(&page, &dir).markdown());
            }
            let Some(out) = &args.out else {
                bail!(
                    "--format html writes a page and a report per run: name the page with \
                     -o FILE (e.g. -o runs/index.html)"
                );
            };
            for f in crate::runs_page::write(&rows, &dir, out)? {
                crate::errln!("wrote {}", f.display());
            }
            Ok(())
        }
    }
}

/// Where to collect from and where to store.
#[derive(Debug, Clone)]
pub struct Options {
    /// `HOST:PORT` of the board's results server; `None` finds it ([`crate::discover::discover`]).
    pub addr: Option<String>,
    /// Read from the card instead: a mounted folder, a block device or an image file.
    pub from_card: Option<PathBuf>,
    /// Rebuild from a console log instead ([`crate::from_log`]).
    pub from_log: Option<LogSource>,
    /// Of several runs in a log, this one.
    pub run: Option<String>,
    /// A LAVA API token.
    pub token: Option<String>,
    /// Refuse a run whose LAVA results disagree with its document.
    pub lava_check: bool,
    /// The store folder; `None`: [`store::default_dir`].
    pub store: Option<PathBuf>,
    /// How long to wait for the board to answer, and for the download.
    pub timeout: Duration,
    /// Show a spinner on stderr while waiting (drawn only on a terminal).
    pub progress: bool,
}

/// A console log to rebuild a run from.
#[derive(Debug, Clone)]
pub enum LogSource {
    /// A saved capture or LAVA job log.
    File(PathBuf),
    /// A LAVA job URL, or a downloaded LAVA job log.
    Lava(String),
}

/// What [`collect`] did.
#[derive(Debug, Clone)]
pub struct Collected {
    pub results: RunResults,
    pub outcome: Outcome,
    /// The stored row (the one kept, for [`Outcome::KeptStored`]).
    pub row: RunRow,
    /// [`Outcome::KeptBoth`]: the stored runs with its run id kept beside it and what
    /// tells them apart ([`store::Stored::beside`]).
    pub beside: Vec<String>,
    /// The store's database file.
    pub db: PathBuf,
    /// From a card: one line per earlier boot's document kept on it (`runs/`), stored
    /// too, or why it was not.
    pub earlier: Vec<String>,
    /// From a LAVA log: how LAVA's stored results compare with the document.
    pub lava: Option<String>,
    /// From a card: what it found damaged or older, and which copy it used (a FAT copy
    /// unreadable, the run recovered from the results journal).
    pub card: Vec<String>,
}

/// Collects one run: from the card when `from_card` is set, else over the network, then
/// stores it ([`Store::put`]).
///
/// # Errors
/// No board answered in time, the card has no results, the document is not one this
/// benchboot reads, or the store cannot be written; each message names what it tried.
pub fn collect(opts: &Options) -> Result<Collected> {
    let mut lava_note = None;
    let got = match (&opts.from_card, &opts.from_log) {
        (Some(path), _) => from_card(path)?,
        (None, Some(src)) => {
            let f = match src {
                LogSource::File(p) => crate::from_log::from_log(p, opts.run.as_deref())?,
                LogSource::Lava(s) => crate::from_log::from_lava(
                    s,
                    opts.run.as_deref(),
                    opts.token.as_deref(),
                    opts.timeout,
                )?,
            };
            if let Some(c) = &f.lava {
                if !c.problems.is_empty() && opts.lava_check {
                    anyhow::bail!(
                        "{}: LAVA's stored results disagree with the run's document in {} \
                         place(s); nothing stored:\n  {}\n(the document itself passed its \
                         checks: --no-lava-check stores it anyway)",
                        f.got.source,
                        c.problems.len(),
                        c.problems.join("\n  ")
                    );
                }
                lava_note = Some(format!(
                    "LAVA's results: {} figure(s) and verdict(s) match the document{}",
                    c.matched,
                    if c.problems.is_empty() {
                        String::new()
                    } else {
                        format!("; {} disagree(s) (--no-lava-check)", c.problems.len())
                    }
                ));
            }
            f.got
        }
        (None, None) => from_network(opts.addr.as_deref(), opts.timeout, opts.progress)?,
    };
    // Before the store is opened, so a refused document leaves no new store behind.
    store::run_file_name(&got.results.run_id)?;
    let dir = store::default_dir(opts.store.as_deref())?;
    let mut store = Store::open(&dir)?;
    let stored = store.put(&got.results, &got.text, &got.source, unix_now())?;
    let mut earlier = Vec::new();
    if let Some(path) = &opts.from_card {
        // The current run is stored already: a problem with the earlier ones is a line
        // each, never a failed collect.
        let mut seen = vec![got.results.run_id.clone()];
        match with_card(path, card::read_kept_runs, card::read_kept_runs_from) {
            Ok(kept) => {
                seen.extend(
                    kept.iter().filter_map(|k| {
                        card::journal::identity(k.text.as_ref().ok()?).map(|i| i.0)
                    }),
                );
                earlier.extend(kept.iter().map(|k| store_kept(&mut store, k, &got.results)))
            }
            Err(e) => earlier.push(format!("not read: {e:#}")),
        }
        // Runs only the journal still holds (their FAT copies damaged or gone).
        match with_card(path, card::read_journal_runs, card::read_journal_runs_from) {
            Ok(runs) => {
                for k in runs {
                    let id = k
                        .text
                        .as_ref()
                        .ok()
                        .and_then(|t| card::journal::identity(t));
                    if id.is_some_and(|(id, _)| seen.contains(&id)) {
                        continue;
                    }
                    earlier.push(store_kept(&mut store, &k, &got.results));
                }
            }
            Err(e) => earlier.push(format!("results journal not read: {e:#}")),
        }
    }
    Ok(Collected {
        results: got.results,
        outcome: stored.outcome,
        row: stored.row,
        beside: stored.beside,
        db: store.db_path(),
        earlier,
        lava: lava_note,
        card: got.notes,
    })
}

/// Stores one earlier boot's document; says what happened to it in one line, in words.
/// A copy of the run just stored from `results.json` (the same run as `current`:
/// [`store::same_run::is_same_run`]) is not stored again: the card's live document
/// is the one the board last wrote. Another run under the current run's id is stored
/// as any other ([`Store::put`] keeps both).
fn store_kept(store: &mut Store, kept: &card::KeptRun, current: &RunResults) -> String {
    let text = match &kept.text {
        Ok(t) => t,
        Err(e) => return format!("{}: not read: {e:#}", kept.source),
    };
    match RunResults::from_json(text) {
        Ok(r) if store::same_run::is_same_run(&r, current) => format!(
            "{}: run {} is the current run, stored from results.json; this copy is not stored",
            kept.source, current.run_id
        ),
        Ok(r) => match store.put(&r, text, &kept.source, unix_now()) {
            Ok(stored) => format!(
                "{}: {} run {}: {}",
                kept.source,
                if r.complete { "complete" } else { "partial" },
                r.run_id,
                stored.describe()
            ),
            Err(e) => format!("{}: not stored: {e:#}", kept.source),
        },
        Err(e) => format!("{}: not a results document: {e}", kept.source),
    }
}

/// Waits up to `timeout` for a board (at `addr`, or the first of
/// [`fetch::candidates`] to answer), then downloads its results.
///
/// # Errors
/// Nothing answered in time (the message lists the addresses), or [`fetch::fetch`]'s.
pub fn from_network(addr: Option<&str>, timeout: Duration, progress: bool) -> Result<Got> {
    let spinner = spinner(progress);
    let found = match addr {
        Some(a) => {
            spinner.set_message(format!("waiting for the board at {a}"));
            wait_for(a, timeout)
        }
        None => {
            spinner.set_message("waiting for a board on a USB gadget link");
            crate::discover::discover(timeout)
        }
    };
    let addr = match found {
        Ok(a) => a,
        Err(e) => {
            spinner.finish_and_clear();
            return Err(e);
        }
    };
    spinner.set_message(format!("downloading http://{addr}/results.json"));
    let fetched = fetch::fetch(&addr, timeout);
    spinner.finish_and_clear();
    let (results, text) = fetched?;
    Ok(Got {
        results,
        text,
        source: addr,
        notes: Vec::new(),
    })
}

/// Reads the results from a card ([`card::read_results`]) and checks the document.
///
/// # Errors
/// [`card::read_results`]'s, or a document this benchboot cannot read.
pub fn from_card(path: &Path) -> Result<Got> {
    let read = with_card(path, card::read_results, card::read_results_from)?;
    let results = RunResults::from_json(&read.text).with_context(|| read.source.clone())?;
    Ok(Got {
        results,
        text: read.text,
        source: read.source,
        notes: read.notes,
    })
}

/// Reads the card at `path` with `by_path`; on Windows a raw disk (`\\.\PhysicalDrive2`,
/// [`card::is_raw_windows_device`]) is opened here ([`open_raw_card`]) and read with
/// `from_disk`.
///
/// # Errors
/// The reader's, or opening the raw disk.
#[cfg_attr(not(windows), allow(unused_variables))]
fn with_card<T>(
    path: &Path,
    by_path: impl FnOnce(&Path) -> Result<T>,
    from_disk: impl FnOnce(&mut dyn card::Disk, &Path) -> Result<T>,
) -> Result<T> {
    #[cfg(windows)]
    if card::is_raw_windows_device(path) {
        return from_disk(&mut open_raw_card(path)?, path);
    }
    by_path(path)
}

/// A raw Windows disk opened read-only for the card reader: unbuffered (what the card
/// holds, not a cached copy), in whole sectors of its logical block size (from the disk
/// scan; 512 when it is not listed), its length from `IOCTL_DISK_GET_LENGTH_INFO`.
/// `\\.\E:` reads the disk holding volume E: ([`crate::target_disk::find_windows_disk`]).
///
/// # Errors
/// The open's (reading a raw disk needs an elevated prompt) or the length's.
#[cfg(windows)]
pub fn open_raw_card(path: &Path) -> Result<benchboot_sector::SectorReader<std::fs::File>> {
    let hint = |e: &std::io::Error| crate::target_disk::windows_open_hint(e, "collect");
    // `\\.\E:` names the disk holding E: (its volume alone has no partition table).
    let all = crate::devices::scan_system()?;
    let disk =
        crate::target_disk::find_windows_disk("--from-card ", &path.to_string_lossy(), &all)?;
    let (path, sector) = match &disk {
        Some(d) => (d.path.as_path(), d.logical_block_size as usize),
        None => (path, 512),
    };
    let file = benchboot_windisk::open_unbuffered(path, false)
        .map_err(|e| anyhow::anyhow!("opening {} read-only: {e}: {}", path.display(), hint(&e)))?;
    let len = benchboot_windisk::disk_length(&file)
        .with_context(|| format!("{}: the disk's length", path.display()))?;
    Ok(benchboot_sector::SectorReader::new(
        benchboot_sector::Sectors::new(file, sector),
        len,
    ))
}

/// Polls `addr` (a TCP connect, 1 s timeout each, every 0.5 s) until it accepts or
/// `timeout` passes.
fn wait_for(addr: &str, timeout: Duration) -> Result<String> {
    use std::net::ToSocketAddrs;
    let until = Instant::now() + timeout;
    loop {
        let sockets: Vec<_> = addr
            .to_socket_addrs()
            .with_context(|| format!("--addr {addr}: give HOST:PORT, e.g. 10.55.0.1:8080"))?
            .collect();
        if sockets
            .iter()
            .any(|s| std::net::TcpStream::connect_timeout(s, Duration::from_secs(1)).is_ok())
        {
            return Ok(addr.to_owned());
        }
        if Instant::now() >= until {
            anyhow::bail!(
                "no board answered at {addr} within {} s: is it powered, its run finished \
                 (it serves results after the ready line) and the link up? Give it longer \
                 with --timeout, or read the card: benchboot collect --from-card DEVICE",
                timeout.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn spinner(progress: bool) -> indicatif::ProgressBar {
    if !progress {
        return indicatif::ProgressBar::hidden();
    }
    let pb = indicatif::ProgressBar::new_spinner();
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
        pb.set_style(style);
    }
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

/// Now, unix time in seconds (0 before 1970), as the store records `collected_at`.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Warnings about a collected document, one line each: partial, emulated.
pub fn warnings(r: &RunResults) -> Vec<String> {
    let mut w = Vec::new();
    if !r.complete {
        let errors = r
            .events
            .iter()
            .filter(|e| e.severity == benchboot_results::Severity::Error)
            .count();
        w.push(format!(
            "run {} is partial (complete: false): the board had not attempted every step \
             when this copy was written ({errors} error events); stored anyway, collect \
             again once the run is done",
            r.run_id
        ));
    }
    if r.emulated {
        w.push(format!(
            "run {} is emulated (QEMU): its figures say nothing about the hardware",
            r.run_id
        ));
    }
    w
}

/// The lines `benchboot collect` prints for a person.
pub fn summary(c: &Collected) -> String {
    let r = &c.results;
    let state = if r.complete { "complete" } else { "partial" };
    let mut s = format!(
        "collected {} (board {}, kernel {}, {state}, {} measurements) from {}\n",
        escape(&r.run_id),
        escape(&r.board),
        escape(&r.system.kernel_release),
        c.row.counts.measurements(),
        escape(&c.row.source)
    );
    s.push_str(&match c.outcome {
        Outcome::Inserted => format!("stored in {}\n", c.row.json_path.display()),
        Outcome::Updated => format!(
            "stored in {} (replaced the earlier copy)\n",
            c.row.json_path.display()
        ),
        Outcome::KeptStored => format!(
            "not stored: the store already has a {} copy of this run, written later, in {}; \
             kept it\n",
            if c.row.complete {
                "complete"
            } else {
                "partial"
            },
            c.row.json_path.display()
        ),
        Outcome::KeptBoth => format!(
            "stored in {} beside another run with run id {} ({}); both kept: `benchboot \
             report {}` shows this one\n",
            c.row.json_path.display(),
            escape(&c.row.run_id),
            escape(&c.beside.join("; ")),
            c.row.stored_as
        ),
    });
    s.push_str(&format!(
        "database {}\nsee it: benchboot show {}\n",
        c.db.display(),
        c.row.json_path.display()
    ));
    s
}

/// `benchboot collect --json`: the stored row, plus `outcome` and `database`
/// ([`escape_json`]: no raw control or bidi character).
pub fn to_json(c: &Collected) -> String {
    let mut v = serde_json::to_value(&c.row).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.insert(
            "outcome".into(),
            serde_json::to_value(c.outcome).unwrap_or_default(),
        );
        o.insert("database".into(), c.db.display().to_string().into());
        if !c.beside.is_empty() {
            o.insert("beside".into(), c.beside.clone().into());
        }
    }
    escape_json(&serde_json::to_string_pretty(&v).unwrap_or_default()).into_owned()
}

/// `benchboot runs`: the stored runs as a table (run id, board, kernel and source
/// through [`escape`]), or JSON (an array of rows). A run stored beside another with
/// its run id is listed by its name in the store (`<run id>.<n>`, what `report` takes),
/// with a line under the table saying so.
///
/// # Errors
/// The store cannot be read.
pub fn runs(store_dir: Option<&Path>, json: bool) -> Result<String> {
    let dir = store::default_dir(store_dir)?;
    let rows = match Store::open_existing(&dir)? {
        Some(s) => s.list()?,
        None => Vec::new(),
    };
    if json {
        let json = serde_json::to_string_pretty(&rows).unwrap_or_default();
        return Ok(escape_json(&json).into_owned() + "\n");
    }
    if rows.is_empty() {
        return Ok(format!(
            "no runs stored in {} yet: benchboot collect\n",
            dir.display()
        ));
    }
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header([
        "run id",
        "board",
        "kernel",
        "state",
        "measurements",
        "collected (UTC)",
        "source",
    ]);
    let mut copies = Vec::new();
    for r in &rows {
        if r.stored_as != r.run_id {
            copies.push(format!(
                "{}: another run with run id {} (board {}), kept beside it: `benchboot report \
                 {}` shows it",
                r.stored_as,
                r.run_id,
                escape(&r.board),
                r.stored_as
            ));
        }
        let mut state = if r.complete { "complete" } else { "partial" }.to_owned();
        if r.emulated {
            state.push_str(", emulated");
        }
        // Each cell as stored: from a document or a card, so escaped.
        t.add_row([
            escape(&r.stored_as).into_owned(),
            escape(&r.board).into_owned(),
            escape(&r.kernel).into_owned(),
            state,
            r.counts.measurements().to_string(),
            crate::units::utc(r.collected_at),
            escape(&r.source).into_owned(),
        ]);
    }
    let copies: String = copies.iter().map(|l| format!("{l}\n")).collect();
    Ok(format!("{t}\n{copies}store {}\n", dir.display()))
}
