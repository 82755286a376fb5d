//! `benchboot plan check FILE --board B` and `benchboot plan write --card CARD FILE`.
//!
//! `check` resolves a plan file (over its presets) on the board's image, exactly as
//! PID 1 will (`benchboot_plan::resolve`), and prints each step with the bound its time
//! caps set. `write` checks it the same way, against the card's own image facts
//! (`image.json` on its results partition), then replaces `plan.toml` there: in a
//! folder (the mounted FAT partition, on any OS) or inside a card or image file, once
//! [`check_card`] has looked the card up by identity (never under a mounted filesystem,
//! never a loop device's backing file, never the kernel's files).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use benchboot_board::{Board, Catalog};
use benchboot_image::layout::{self, Spec};
use benchboot_image::plans::{hardware, PlanText};
use benchboot_plan::estimate::{estimate, total_ms};
use benchboot_plan::units::fmt_span_ms;
use benchboot_plan::{Plan, CARD_FACTS_FILE, CARD_PLAN_FILE};

mod boards;
pub use boards::{card_image, load_board, BoardsArg, CardImage, MAX_FACTS_BYTES};

/// `benchboot plan ...`.
#[derive(Debug, clap::Subcommand)]
pub enum PlanCommand {
    /// Check a plan file for a board and print what will run, step by step, with the
    /// longest it can take.
    Check {
        /// A plan file, or a preset's name (quick, standard, seeds).
        file: String,
        /// The board: a board file's name (rpi-zero-w, ...; built in, or in --boards
        /// DIR). With --card: only for a card without image.json (an older card).
        #[arg(long, required_unless_present = "card")]
        board: Option<String>,
        /// Check against a card's own image (image.json on its results partition), as
        /// its PID 1 will: the results partition mounted as a folder, the card's
        /// whole-disk device, or an image file.
        #[arg(long)]
        card: Option<PathBuf>,
        #[command(flatten)]
        boards: BoardsArg,
    },
    /// Check a plan file against a card's image, then make it the card's plan
    /// (`plan.toml` on its results partition): the next boot runs it, no rebuild.
    Write {
        /// The card's results partition mounted as a folder, or the card's whole-disk
        /// device, or an image file.
        #[arg(long)]
        card: PathBuf,
        /// A plan file, or a preset's name (quick, standard, seeds).
        file: String,
        /// Only for a card without image.json (an older card): the board it is for.
        #[arg(long)]
        board: Option<String>,
        #[command(flatten)]
        boards: BoardsArg,
    },
}

/// Runs a `benchboot plan` command.
///
/// # Errors
/// The plan file's error (file, line, key, fix), an unknown board, or a card that cannot
/// be read or written.
pub fn run(cmd: &PlanCommand) -> Result<()> {
    match cmd {
        PlanCommand::Check {
            file,
            board,
            card,
            boards,
        } => {
            let text = PlanText::from_arg(file)?;
            let catalog = boards.catalog();
            let (board, plan) = match (card, board) {
                (Some(card), _) => {
                    let image = open_card_image(card, board.as_deref(), &catalog, false)?.1;
                    (image.board.clone(), image.resolve(&text)?)
                }
                (None, Some(name)) => {
                    let board = load_board(&catalog, name)?;
                    let plan = resolve_for_board(&board, &text)?;
                    (board, plan)
                }
                (None, None) => bail!("give --board NAME or --card CARD"),
            };
            crate::out!("{}", describe(&plan, &board.description));
        }
        PlanCommand::Write {
            card,
            file,
            board,
            boards,
        } => {
            let text = PlanText::from_arg(file)?;
            let written = write_with(card, &text, board.as_deref(), &boards.catalog())?;
            crate::outln!("{written}");
        }
    }
    Ok(())
}

/// The plan a plan file becomes on `board`'s image (modules aside: they depend on the
/// kernel package, not the plan).
///
/// # Errors
/// The plan file's error: file, line, key, fix.
pub fn resolve_for_board(board: &Board, file: &PlanText) -> Result<Plan> {
    let layout = layout::plan(&Spec::default())?;
    hardware(board, &layout, Vec::new(), file)
}

/// What `plan check` prints: the source, every step with its bound, the total.
pub fn describe(plan: &Plan, board: &str) -> String {
    let mut out = format!(
        "plan {} for {} ({board})\n",
        plan.source.describe(),
        plan.board
    );
    let steps = estimate(plan);
    let width = steps.iter().map(|s| s.step.len()).max().unwrap_or(0);
    for s in &steps {
        let bound = if s.at_most_ms == 0 {
            "no time cap".to_owned()
        } else {
            format!("at most {}", fmt_span_ms(s.at_most_ms))
        };
        out.push_str(&format!("  {:width$}  {}: {bound}\n", s.step, s.what));
        if let Some(u) = &s.unbounded {
            out.push_str(&format!("  {:width$}  not bounded by a cap: {u}\n", ""));
        }
    }
    let optional: Vec<&str> = plan
        .storage
        .targets
        .iter()
        .filter(|t| t.optional)
        .map(|t| t.label.as_str())
        .collect();
    if !optional.is_empty() {
        out.push_str(&format!(
            "  optional targets (skipped with a warning when not plugged in): {}\n",
            optional.join(", ")
        ));
    }
    if !plan.storage.targets.is_empty() {
        out.push_str(
            "  on the board every target is checked by device number before anything is \
             written (LABEL=, PARTLABEL= and BUS= names too): never the boot card, its boot \
             or results partition, a mounted device or another target's device; a refused \
             target is an error event and the rest runs\n",
        );
    }
    for w in &plan.network.wired {
        let how = match &w.mac {
            Some(m) => format!("MAC {m}"),
            None if w.drivers.is_empty() => "any driver".to_owned(),
            None => format!("driver {}", w.drivers.join(" or ")),
        };
        out.push_str(&format!(
            "  wired {}: {} by {how}, {} topology\n",
            w.name,
            w.kind.name(),
            w.topology.name()
        ));
        if let Some(why) = &w.unavailable {
            out.push_str(&format!(
                "  warning: wired {}: {why}; PID 1 records it as an error and runs the rest\n",
                w.name
            ));
        }
    }
    if let Some(w) = &plan.network.wifi {
        out.push_str(&wifi_lines(w));
    }
    for w in plan.warnings() {
        out.push_str(&format!("  warning: {w}\n"));
    }
    out.push_str(&format!(
        "total: at most {} from the time caps, plus boot and what no cap bounds\n",
        fmt_span_ms(total_ms(&steps))
    ));
    out
}

/// [`write_with`] the built-in boards, for a card with image facts.
///
/// # Errors
/// As [`write_with`].
pub fn write(card: &Path, file: &PlanText) -> Result<String> {
    write_with(card, file, None, &Catalog::builtin())
}

/// Opens `card` (to `write` its plan, or only to read) and finds the image its plan
/// runs on ([`card_image`]); prints the note of a card without image facts to stderr.
fn open_card_image(
    card: &Path,
    board: Option<&str>,
    catalog: &Catalog,
    write: bool,
) -> Result<(CardTarget, CardImage)> {
    let mut target = CardTarget::open(card, write)?;
    let facts = match target.read(CARD_FACTS_FILE) {
        Ok(bytes) => Some(bytes),
        Err(e)
            if e.downcast_ref::<std::io::Error>().map(std::io::Error::kind)
                == Some(std::io::ErrorKind::NotFound) =>
        {
            None
        }
        Err(e) => return Err(e.context(format!("{}: reading {CARD_FACTS_FILE}", card.display()))),
    };
    let image = card_image(card, facts.as_deref(), board, catalog)?;
    if let Some(note) = &image.note {
        crate::errln!("note: {note}");
    }
    Ok((target, image))
}

/// Checks `file` against the card's image facts (`image.json`, as PID 1 resolves it;
/// on a card without them, board `board` of `catalog`'s, with a note), then replaces
/// the card's plan file. Returns one line saying what was written where.
///
/// # Errors
/// The card holds no image facts and no `board` is given, the plan file is refused for
/// that image, or the write fails; nothing is changed then.
pub fn write_with(
    card: &Path,
    file: &PlanText,
    board: Option<&str>,
    catalog: &Catalog,
) -> Result<String> {
    let (mut target, image) = open_card_image(card, board, catalog, true)?;
    let plan = image.resolve(file)?;
    target.replace(CARD_PLAN_FILE, file.text.as_bytes())?;
    let warnings: String = plan
        .warnings()
        .iter()
        .map(|w| format!("\nwarning: {w}"))
        .collect();
    Ok(format!(
        "wrote {} to {} ({}) as {CARD_PLAN_FILE}: the next boot runs it; {}{warnings}",
        file.file,
        card.display(),
        image.board.name,
        plan.source.describe()
    ))
}

/// The results partition of a card: a mounted folder, or a FAT inside a disk or file.
enum CardTarget {
    Folder(PathBuf),
    Disk { file: File, offset: u64, len: u64 },
}

impl CardTarget {
    /// Opens `card`; to `write`, only once [`check_card`] accepts it (a card only read
    /// is opened read-only, wherever it is mounted).
    fn open(card: &Path, write: bool) -> Result<CardTarget> {
        let meta = std::fs::metadata(card).with_context(|| format!("--card {}", card.display()))?;
        #[cfg(unix)]
        if write {
            check_card(card, Path::new("/"))?;
        }
        #[cfg(windows)]
        if write && !meta.is_dir() {
            check_windows_card(card)?;
        }
        if meta.is_dir() {
            return Ok(CardTarget::Folder(card.to_owned()));
        }
        // A FIFO would block the open below for ever, `/dev/zero` take the write.
        benchboot_input::check(
            card,
            &meta,
            "a card or an image of one",
            benchboot_input::Accept::FileOrDisk,
        )?;
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(write)
            .open(card)
            .with_context(|| format!("opening {} to write its plan file", card.display()))?;
        let (part, _) = benchboot_card::find_results_partition(&mut file)
            .with_context(|| format!("--card {}", card.display()))?;
        Ok(CardTarget::Disk {
            file,
            offset: part.offset,
            len: part.len,
        })
    }

    /// File `name`'s first [`MAX_FACTS_BYTES`] + 1 bytes (a longer one is refused by
    /// its reader, never read whole).
    fn read(&mut self, name: &str) -> Result<Vec<u8>> {
        match self {
            // A regular file only (a FIFO in the folder is refused, not waited on).
            CardTarget::Folder(dir) => {
                let (file, _) = benchboot_input::open(
                    &dir.join(name),
                    "a file of the card's results partition",
                    benchboot_input::Accept::File,
                )
                .map_err(std::io::Error::from)?;
                let mut data = Vec::new();
                file.take(MAX_FACTS_BYTES + 1).read_to_end(&mut data)?;
                Ok(data)
            }
            CardTarget::Disk { file, offset, len } => {
                let fs = fat(file, *offset, *len)?;
                let mut data = Vec::new();
                fs.root_dir()
                    .open_file(name)?
                    .take(MAX_FACTS_BYTES + 1)
                    .read_to_end(&mut data)?;
                Ok(data)
            }
        }
    }

    /// Replaces `name`: a folder by temp file + rename (atomic); a FAT inside a disk by
    /// writing `<name>.new` in full, then removing `name` and renaming (a cut between
    /// the two leaves no plan file, and PID 1 runs the plan built in).
    fn replace(&mut self, name: &str, data: &[u8]) -> Result<()> {
        match self {
            CardTarget::Folder(dir) => {
                // atomic_file removes its temp file on any failure.
                crate::atomic_file::write(&dir.join(name), &String::from_utf8_lossy(data)).map_err(
                    |e| {
                        let full = e
                            .chain()
                            .any(|c| c.downcast_ref::<std::io::Error>().is_some_and(is_full));
                        if full {
                            no_room(dir, data.len(), folder_free(dir), &e.root_cause())
                        } else {
                            e
                        }
                    },
                )
            }
            CardTarget::Disk { file, offset, len } => {
                let fs = fat(file, *offset, *len)?;
                let root = fs.root_dir();
                let tmp = format!("{name}.new");
                let written = (|| -> std::io::Result<()> {
                    let mut f = root.create_file(&tmp)?;
                    f.truncate()?;
                    f.write_all(data)?;
                    f.flush()
                })();
                if let Err(e) = written {
                    // Nothing half-written stays behind: the old plan file is untouched.
                    let _ = root.remove(&tmp);
                    let free = fs
                        .stats()
                        .ok()
                        .map(|s| u64::from(s.free_clusters()) * u64::from(s.cluster_size()));
                    drop(root);
                    let _ = fs.unmount();
                    return Err(if is_full(&e) {
                        no_room(
                            Path::new("the card's results partition (BBRESULTS)"),
                            data.len(),
                            free,
                            &e,
                        )
                    } else {
                        anyhow::Error::new(e).context(format!("writing {tmp} on the card"))
                    });
                }
                if root.open_file(name).is_ok() {
                    root.remove(name)?;
                }
                root.rename(&tmp, &root, name)?;
                drop(root);
                fs.unmount()?;
                file.sync_all()?;
                Ok(())
            }
        }
    }
}

/// True for "no space left on device": ENOSPC from the OS, or the FAT writer's own
/// (fatfs 0.3 says it as an `Other` error with that text).
fn is_full(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::StorageFull || e.to_string().contains("No space left")
}

/// Free bytes of the filesystem holding `dir`, where the OS says (Unix: statvfs(3)).
fn folder_free(dir: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        rustix::fs::statvfs(dir)
            .ok()
            .map(|s| s.f_bavail.saturating_mul(s.f_frsize))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

/// `plan write` onto a full results partition: which, what the plan needs, what is
/// free, the fix; the card is as it was.
fn no_room(
    partition: &Path,
    need: usize,
    free: Option<u64>,
    e: &dyn std::fmt::Display,
) -> anyhow::Error {
    let free = free.map_or_else(String::new, |f| format!(", {f} B free"));
    anyhow::anyhow!(
        "{} is full ({e}): the plan file needs {need} B{free}; copy the runs off it \
         (`benchboot collect --from-card`), delete its runs/ folder's old documents and \
         write the plan again. Nothing was changed.",
        partition.display()
    )
}

/// The FAT filesystem at `offset`, `len` bytes, of `file`.
fn fat(
    file: &mut File,
    offset: u64,
    len: u64,
) -> Result<fatfs::FileSystem<fscommon::StreamSlice<&mut File>>> {
    file.seek(SeekFrom::Start(0))?;
    let slice = fscommon::StreamSlice::new(file, offset, offset + len)?;
    Ok(fatfs::FileSystem::new(
        slice,
        fatfs::FsOptions::new().time_provider(&UtcClock),
    )?)
}

/// The time a file written onto the card carries: now, in UTC (FAT has no time zone;
/// Linux and macOS show FAT times as UTC unless told otherwise).
#[derive(Debug)]
struct UtcClock;

impl fatfs::TimeProvider for UtcClock {
    fn get_current_date(&self) -> fatfs::Date {
        self.get_current_date_time().date
    }

    fn get_current_date_time(&self) -> fatfs::DateTime {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let c = crate::units::civil_utc(now);
        fatfs::DateTime {
            date: fatfs::Date {
                // FAT dates run 1980 ..= 2107.
                year: c.year.clamp(1980, 2107) as u16,
                month: c.month as u16,
                day: c.day as u16,
            },
            time: fatfs::Time {
                hour: c.hour as u16,
                min: c.minute as u16,
                sec: c.second as u16,
                millis: 0,
            },
        }
    }
}

/// What `--card` names, judged by identity ([`crate::identity::lookup`]; `root` is
/// where sysfs and proc are): a folder or an image file on none of the kernel's own
/// filesystems, a file nothing holds (a loop device's backing file would be written
/// under its filesystem's cached FAT), or a whole card none of whose filesystems is
/// mounted (written through the mounted folder instead, never under its feet). A
/// partition is named with its disk and mounts.
///
/// # Errors
/// Each of those, with what to give instead.
#[cfg(unix)]
pub fn check_card(card: &Path, root: &Path) -> Result<()> {
    use crate::identity::What;
    let found = crate::identity::lookup(card, root)?;
    let given = card.display();
    const FIX: &str = "give the card's results partition (BBRESULTS) mounted as a folder, \
                       the card's whole-disk device or an image file";
    match &found.what {
        What::New { .. } | What::Nowhere { .. } => bail!("--card {given}: no such file or folder"),
        What::Folder { .. } | What::File { .. } => {
            found.refuse_kernel_files("--card ", FIX)?;
            found.refuse_in_use("--card ")
        }
        What::Disk(d) => {
            if let Some(m) = d.mounts.first() {
                bail!(
                    "{}: {} is mounted at {}: give that folder as --card (the results \
                     partition, BBRESULTS), or unmount the card first",
                    found.words("--card "),
                    d.path.with_file_name(&m.device).display(),
                    m.mount_point.display()
                );
            }
            let refusals: Vec<String> = d
                .verdict(&crate::devices::Limits::new(true))
                .refusals
                .iter()
                .filter(|r| {
                    matches!(
                        r,
                        crate::devices::Refusal::Held { .. }
                            | crate::devices::Refusal::HoldsSystem { .. }
                    )
                })
                .map(|r| format!("\n  - {r}"))
                .collect();
            if !refusals.is_empty() {
                bail!(
                    "refusing to write {}:{}",
                    found.words("--card "),
                    refusals.concat()
                );
            }
            Ok(())
        }
        What::Partition { disk, partition } => {
            let mounted = disk.mounts.iter().find(|m| m.device == partition.name);
            match mounted {
                Some(m) => bail!(
                    "{}: give that folder as --card: --card {}",
                    found.words("--card "),
                    m.mount_point.display()
                ),
                None => bail!(
                    "{}: name the whole card, --card {} (plan write finds its results \
                     partition), or mount the partition and give that folder",
                    found.words("--card "),
                    disk.path.display()
                ),
            }
        }
        What::Unlisted { .. } => bail!(
            "--card {given}: a block device this machine does not list; `benchboot devices` \
             shows the cards"
        ),
        What::Other { kind } => bail!("--card {given}: a {kind}; {FIX}"),
    }
}

/// Windows: a card (`\\.\PhysicalDriveN`, or a volume naming its disk) with a mounted
/// volume is written through that volume's folder, never under its feet.
#[cfg(windows)]
fn check_windows_card(card: &Path) -> Result<()> {
    let all = crate::devices::scan_system()?;
    let given = card.to_string_lossy();
    if let Some(d) = crate::target_disk::find_windows_disk("--card ", &given, &all)? {
        if let Some(m) = d.mounts.first() {
            bail!(
                "--card {given}: a volume of {} is mounted at {}: give that folder as --card \
                 (the results partition, BBRESULTS), or take the card's volumes offline first",
                d.describe(),
                m.mount_point.display()
            );
        }
    }
    Ok(())
}

/// The WiFi step as `plan check` tells it: role, country, each entry (skipped ones with
/// the reason) and the problems PID 1 will record as errors.
fn wifi_lines(w: &benchboot_plan::WifiPlan) -> String {
    use benchboot_plan::WifiRole;
    let mut out = String::new();
    let role = match &w.role {
        WifiRole::AccessPoint { security } => format!(
            "the board as AP ({}), joined by `benchboot peer --wifi`",
            security.name()
        ),
        WifiRole::Client { passphrase, .. } => format!(
            "the board as client of your AP ({})",
            if passphrase.is_some() {
                "WPA2-PSK"
            } else {
                "open"
            }
        ),
    };
    out.push_str(&format!("  wifi: {role}, country {}\n", w.country));
    for e in &w.entries {
        let what = e
            .asked
            .map_or_else(|| "the AP's own channel".to_owned(), |a| a.describe());
        match &e.skip {
            None => out.push_str(&format!("  wifi {}: {what}\n", e.name)),
            Some(why) => out.push_str(&format!(
                "  warning: wifi {}: {what} is skipped: {why}\n",
                e.name
            )),
        }
    }
    for p in &w.problems {
        out.push_str(&format!(
            "  warning: wifi: {p}; PID 1 records it as an error, skips WiFi and runs the rest\n"
        ));
    }
    out
}
