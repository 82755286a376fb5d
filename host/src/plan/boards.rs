//! What a plan is checked against: a board file (built into benchboot, or one of the
//! user's `--boards DIR`), or a card's own image facts (`image.json` on its results
//! partition, written by `cargo xtask image`, xtask/src/image/contents.rs), as PID 1
//! resolves the card's plan file on its copy of them (firmware/src/card_plan.rs).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use benchboot_board::{Board, Catalog};
use benchboot_image::layout::{self, Spec};
use benchboot_image::plans::{self, PlanText};
use benchboot_plan::{ImageFacts, Plan, CARD_FACTS_FILE};

/// `--boards DIR`, for the commands that take a board by name.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct BoardsArg {
    /// A folder of your own board files (`<name>.toml`, and a `shared.toml` if they name
    /// kernels, loaders or module sets the built-in one lacks). A file there wins over
    /// the built-in board of the same name; the other built-in boards stay available.
    /// Without it: the board files built into benchboot (no source tree needed).
    #[arg(long, value_name = "DIR")]
    pub boards: Option<PathBuf>,
}

impl BoardsArg {
    /// The boards this command can use.
    pub fn catalog(&self) -> Catalog {
        Catalog::with_dir(self.boards.clone())
    }
}

/// Board `name` from `catalog`, the error saying `--board NAME` and, for an unknown
/// name, every known board and where they came from.
///
/// # Errors
/// An unknown name, or a user's board file that cannot be read, parsed (file, line) or
/// used (file, field).
pub fn load_board(catalog: &Catalog, name: &str) -> Result<Board> {
    catalog
        .load(name)
        .map_err(|e| anyhow!("--board {name}: {e}"))
}

/// What a plan for a card is checked against: the board its image is for, that image's
/// facts, and a note when they are not the card's own.
#[derive(Debug)]
pub struct CardImage {
    pub board: Board,
    pub facts: ImageFacts,
    /// Set when the card has no `image.json` and the board file's facts stand in.
    pub note: Option<String>,
}

/// The largest `image.json` read from a card, bytes: the shipped boards' are under
/// 4 KiB; a larger file is no image's facts (and is not read whole into memory).
pub const MAX_FACTS_BYTES: u64 = 1024 * 1024;

/// The image a card's plan runs on, from the card's `image.json` (`facts`: its bytes,
/// `None` when the card has none), as PID 1 takes it. A card without one (made before
/// the facts travelled on the card) is checked against board `--board` with a note;
/// `board_arg` must agree with the card's facts when both are there.
///
/// # Errors
/// Damaged facts (with the line), a board the facts name that `catalog` lacks, no facts
/// and no `--board`, or a `--board` other than the card's.
pub fn card_image(
    card: &Path,
    facts: Option<&[u8]>,
    board_arg: Option<&str>,
    catalog: &Catalog,
) -> Result<CardImage> {
    let Some(bytes) = facts else {
        let Some(name) = board_arg else {
            bail!(
                "{}: no {CARD_FACTS_FILE} on the results partition (a card made before its \
                 image facts travelled on it, or not a benchboot card): give --board NAME to \
                 check against that board's file, or rebuild the card (cargo xtask image)",
                card.display()
            );
        };
        let board = load_board(catalog, name)?;
        let layout = layout::plan(&Spec::default())?;
        let facts = plans::image_facts(&board, &layout);
        let note = format!(
            "{} has no {CARD_FACTS_FILE} (an older card): checked against the board file of \
             {name} from {}, not the card's own image",
            card.display(),
            catalog.describe()
        );
        return Ok(CardImage {
            board,
            facts,
            note: Some(note),
        });
    };
    if u64::try_from(bytes.len()).map_or(true, |n| n > MAX_FACTS_BYTES) {
        bail!(
            "{}: {CARD_FACTS_FILE} is over {MAX_FACTS_BYTES} bytes: no image's facts; \
             rebuild the card (cargo xtask image)",
            card.display()
        );
    }
    let facts: ImageFacts = serde_json::from_slice(bytes).map_err(|e| {
        anyhow!(
            "{}: {CARD_FACTS_FILE} line {}: damaged ({e}); rebuild the card (cargo xtask image)",
            card.display(),
            e.line()
        )
    })?;
    if let Some(name) = board_arg.filter(|n| *n != facts.board) {
        bail!(
            "--board {name}: the card's image is for {} ({CARD_FACTS_FILE}): drop --board",
            facts.board
        );
    }
    let board = catalog.load(&facts.board).with_context(|| {
        format!(
            "{}: its {CARD_FACTS_FILE} is for board `{}`: give that board's file with \
             --boards DIR",
            card.display(),
            facts.board
        )
    })?;
    Ok(CardImage {
        board,
        facts,
        note: None,
    })
}

impl CardImage {
    /// The plan `file` becomes on this image: the board's plan, giving way to the
    /// card's plan file, resolved on the image's facts (modules aside: they depend on
    /// the kernel package, not the plan), as PID 1 resolves it.
    ///
    /// # Errors
    /// The plan file's error: file, line, key, fix.
    pub fn resolve(&self, file: &PlanText) -> Result<Plan> {
        let layout = layout::plan(&Spec::default())?;
        let mut base = plans::base(&self.board, &layout, Vec::new(), false);
        base.card_plan = true;
        Ok(benchboot_plan::resolve(
            &file.file,
            &file.text,
            &base,
            &self.facts,
        )?)
    }
}
