//! `benchboot plan check FILE --board B` and `benchboot plan write --card CARD FILE`.
//!
//! `check` resolves a plan file (over its presets) on the board's image, exactly as
//! PID 1 will (`benchboot_plan::resolve`), and prints each step with the bound its time
//! caps set. `write` checks it the same way, against the card's own image facts
//! (`image.json` on its results partition), then replaces `plan.toml` there: in a
//! folder (the mounted FAT partition, on any OS) or inside a card or image file.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use benchboot_board::Board;
use benchboot_image::layout::{self, Spec};
use benchboot_image::plans::{hardware, PlanText};
use benchboot_plan::estimate::{estimate, total_ms};
use benchboot_plan::units::fmt_span_ms;
use benchboot_plan::{ImageFacts, Plan, CARD_FACTS_FILE, CARD_PLAN_FILE};

/// `benchboot plan ...`.
#[derive(Debug, clap::Subcommand)]
pub enum PlanCommand {
    /// Check a plan file for a board and print what will run, step by step, with the
    /// longest it can take.
    Check {
        /// A plan file, or a preset's name (quick, standard, seeds).
        file: String,
        /// The board (`boards/<name>.toml`).
        #[arg(long)]
        board: String,
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
    },
}

/// Runs a `benchboot plan` command.
///
/// # Errors
/// The plan file's error (file, line, key, fix), an unknown board, or a card that cannot
/// be read or written.
pub fn run(cmd: &PlanCommand) -> Result<()> {
    match cmd {
        PlanCommand::Check { file, board } => {
            let board = load_board(board)?;
            let plan = resolve_for_board(&board, &PlanText::from_arg(file)?)?;
            print!("{}", describe(&plan, &board.description));
        }
        PlanCommand::Write { card, file } => {
            let text = PlanText::from_arg(file)?;
            let written = write(card, &text)?;
            println!("{written}");
        }
    }
    Ok(())
}

fn load_board(name: &str) -> Result<Board> {
    benchboot_board::load(&benchboot_board::boards_dir(), name).with_context(|| {
        format!("--board {name}: no such board file (see `cargo xtask boards` for the list)")
    })
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
    out.push_str(&format!(
        "total: at most {} from the time caps, plus boot and what no cap bounds\n",
        fmt_span_ms(total_ms(&steps))
    ));
    out
}

/// Checks `file` against the card's image facts, then replaces the card's plan file.
/// Returns one line saying what was written where.
///
/// # Errors
/// The card holds no image facts (not a benchboot card, or one built before plan
/// files), the plan file is refused for that image, or the write fails; nothing is
/// changed then.
pub fn write(card: &Path, file: &PlanText) -> Result<String> {
    let mut target = CardTarget::open(card)?;
    let facts_text = target.read(CARD_FACTS_FILE).with_context(|| {
        format!(
            "{}: no {CARD_FACTS_FILE} on the results partition: not a benchboot card, or one \
             built before plan files (rebuild it with `cargo xtask image`)",
            card.display()
        )
    })?;
    let facts: ImageFacts = serde_json::from_slice(&facts_text)
        .with_context(|| format!("{}: {CARD_FACTS_FILE} is damaged", card.display()))?;
    let board = load_board(&facts.board)?;
    let plan = resolve_for_board(&board, file)?;
    target.replace(CARD_PLAN_FILE, file.text.as_bytes())?;
    Ok(format!(
        "wrote {} to {} ({}) as {CARD_PLAN_FILE}: the next boot runs it; {}",
        file.file,
        card.display(),
        facts.board,
        plan.source.describe()
    ))
}

/// The results partition of a card: a mounted folder, or a FAT inside a disk or file.
enum CardTarget {
    Folder(PathBuf),
    Disk { file: File, offset: u64, len: u64 },
}

impl CardTarget {
    fn open(card: &Path) -> Result<CardTarget> {
        let meta = std::fs::metadata(card).with_context(|| format!("--card {}", card.display()))?;
        if meta.is_dir() {
            return Ok(CardTarget::Folder(card.to_owned()));
        }
        refuse_mounted(card)?;
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
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

    fn read(&mut self, name: &str) -> Result<Vec<u8>> {
        match self {
            CardTarget::Folder(dir) => Ok(std::fs::read(dir.join(name))?),
            CardTarget::Disk { file, offset, len } => {
                let fs = fat(file, *offset, *len)?;
                let mut data = Vec::new();
                fs.root_dir().open_file(name)?.read_to_end(&mut data)?;
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
                crate::atomic_file::write(&dir.join(name), &String::from_utf8_lossy(data))
            }
            CardTarget::Disk { file, offset, len } => {
                let fs = fat(file, *offset, *len)?;
                let root = fs.root_dir();
                let tmp = format!("{name}.new");
                let mut f = root.create_file(&tmp)?;
                f.truncate()?;
                f.write_all(data)?;
                f.flush()?;
                drop(f);
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

/// A card whose partitions are mounted is written through the folder, never under the
/// mounted filesystem's feet.
fn refuse_mounted(card: &Path) -> Result<()> {
    let Ok(devices) = crate::devices::scan_system() else {
        return Ok(());
    };
    let Some(d) = devices.iter().find(|d| d.path == card) else {
        return Ok(());
    };
    if let Some(m) = d.mounts.first() {
        bail!(
            "{}: a partition is mounted at {}: give that folder as --card (the results \
             partition, BBRESULTS), or unmount the card first",
            card.display(),
            m.mount_point.display()
        );
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
