//! The card's plan file at boot: PID 1 runs [`CARD_PLAN_FILE`] from the results
//! partition instead of the plan built in, when that gives way to it
//! ([`Plan::card_plan`]). [`choose_plan`] is the decision, pure; [`take_card_plan`]
//! reads the files and records a refusal (`results.plan_error`, an error event
//! `plan.card`), after which the caller measures nothing and serves the results.

use std::path::Path;

use benchboot_plan::{ImageFacts, Plan, PlanFileError, CARD_PLAN_FILE, IMAGE_FACTS_PATH};
use benchboot_results::{RunResults, Severity};

use crate::console::{say, tell};

/// How the card's plan file is named in errors, events and `plan.source.file`.
pub const CARD_PLAN_NAME: &str = "plan.toml (card)";

/// The plan this boot runs, given the built-in plan `base`, the card's plan file
/// (`None`: no [`CARD_PLAN_FILE`] on the results partition; `Some(Err)`: there but
/// unreadable, with why) and the image's facts ([`IMAGE_FACTS_PATH`], read only when
/// needed: `None` when not read). Pure.
///
/// `Ok(None)`: run `base` (it does not give way to the card, [`Plan::card_plan`], or the
/// card has no plan file); `Ok(Some(plan))`: the card's file resolved over `base`.
///
/// # Errors
/// The [`PlanFileError`] to record: the card's file unreadable or wrong (file, line,
/// key), or the image's facts unreadable (then the file is [`IMAGE_FACTS_PATH`]).
pub fn choose_plan(
    base: &Plan,
    card_file: Option<Result<String, String>>,
    facts: Option<Result<String, String>>,
) -> Result<Option<Plan>, PlanFileError> {
    if !base.card_plan {
        return Ok(None);
    }
    let Some(text) = card_file else {
        return Ok(None);
    };
    let whole = |file: &str, line: Option<usize>, message: String| PlanFileError {
        file: file.to_owned(),
        line,
        key: benchboot_plan::file::WHOLE_FILE.into(),
        message,
    };
    let text = text.map_err(|e| whole(CARD_PLAN_NAME, None, format!("cannot read it: {e}")))?;
    let broken_image = "the image is broken: rebuild it (cargo xtask image)";
    let facts = facts
        .unwrap_or_else(|| Err("not read".into()))
        .map_err(|e| {
            whole(
                IMAGE_FACTS_PATH,
                None,
                format!("cannot read it: {e}; {broken_image}"),
            )
        })?;
    let facts: ImageFacts = serde_json::from_str(&facts).map_err(|e| {
        whole(
            IMAGE_FACTS_PATH,
            Some(e.line()),
            format!("not the image's facts: {e}; {broken_image}"),
        )
    })?;
    benchboot_plan::resolve(CARD_PLAN_NAME, &text, base, &facts).map(Some)
}

/// Reads the card's plan file (when `base` gives way to it and the results partition
/// is mounted at `results_dir`) and [`IMAGE_FACTS_PATH`], and returns the plan to run
/// ([`choose_plan`]); says which on the console. A refused file leaves `base` in force
/// and `results.plan`, records `results.plan_error` and an error event `plan.card`:
/// the caller then measures nothing.
pub fn take_card_plan(base: Plan, results_dir: Option<&Path>, results: &mut RunResults) -> Plan {
    let read = |path: &Path| std::fs::read_to_string(path).map_err(|e| e.to_string());
    let card_file = match results_dir {
        Some(dir) if base.card_plan => {
            match benchboot_plan::file::read_bounded(&dir.join(CARD_PLAN_FILE)) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                // At most 1 MiB, UTF-8 only (a byte-order mark dropped); else why not.
                other => Some(other.map_err(|e| e.to_string()).and_then(|b| {
                    benchboot_plan::file::decode_text(CARD_PLAN_FILE, &b).map_err(|e| e.to_string())
                })),
            }
        }
        _ => None,
    };
    let facts = card_file
        .is_some()
        .then(|| read(Path::new(IMAGE_FACTS_PATH)));
    match choose_plan(&base, card_file, facts) {
        Ok(Some(plan)) => {
            tell!(
                info,
                format!("plan: {} (from the card's {CARD_PLAN_FILE})", plan.source.describe());
                "plan from the card: {=str}",
                plan.source.sha256.as_str()
            );
            results.plan = plan.redacted();
            plan
        }
        Ok(None) => {
            say(&format!("plan: {} (built in)", base.source.describe()));
            base
        }
        Err(e) => {
            tell!(
                error,
                format!("plan: the card's {CARD_PLAN_FILE} is refused: {e}");
                "card plan refused: {=str}",
                e.to_string().as_str()
            );
            results.event("plan.card", Severity::Error, e.to_string());
            results.plan_error = Some(e);
            base
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts_json() -> String {
        let card: Vec<benchboot_plan::StorageTarget> = benchboot_plan::Filesystem::ALL
            .iter()
            .chain([benchboot_plan::Filesystem::Raw].iter())
            .enumerate()
            .map(|(i, fs)| benchboot_plan::StorageTarget {
                label: fs.name().into(),
                device: format!("/dev/mmcblk0p{}", i + 5),
                filesystem: *fs,
                optional: false,
            })
            .collect();
        serde_json::to_string(&ImageFacts {
            board: "rpi-zero-w".into(),
            card,
            boot_disk: "mmcblk0".into(),
            disk_signature: 0,
            buses: vec![benchboot_plan::Bus::Usb],
            ethernet: None,
            usb_ethernet: None,
            wifi: None,
        })
        .unwrap()
    }

    fn card_base() -> Plan {
        let mut p = Plan::example();
        p.card_plan = true;
        p
    }

    fn choose(text: &str) -> Result<Option<Plan>, PlanFileError> {
        choose_plan(&card_base(), Some(Ok(text.into())), Some(Ok(facts_json())))
    }

    #[test]
    fn the_card_plan_runs_when_the_built_in_plan_gives_way() {
        let text = "extends = \"quick\"\n[storage]\ncard = [\"ext4\", \"vfat\"]\nrepetitions = 2\n";
        let plan = choose(text).unwrap().expect("the card's plan");
        let labels: Vec<&str> = plan
            .storage
            .targets
            .iter()
            .map(|t| t.label.as_str())
            .collect();
        assert_eq!(labels, ["ext4", "vfat"]);
        assert_eq!(plan.storage.targets[1].device, "/dev/mmcblk0p8");
        assert_eq!(plan.storage.repetitions, 2);
        assert_eq!(plan.source.file, CARD_PLAN_NAME);
        assert_eq!(plan.source.text, text);
        assert!(plan
            .source
            .describe()
            .starts_with("plan.toml (card) (sha256 "));
        // What the image fixes stays the built-in plan's.
        let base = card_base();
        assert_eq!(
            (&plan.board, &plan.results, &plan.modules),
            (&base.board, &base.results, &base.modules)
        );

        // No file on the card, or a plan that does not give way: the built-in plan.
        assert_eq!(choose_plan(&base, None, None), Ok(None));
        let mut fixed = card_base();
        fixed.card_plan = false;
        assert_eq!(
            choose_plan(&fixed, Some(Ok(text.into())), Some(Ok(facts_json()))),
            Ok(None)
        );
        // ...even a broken file is then never read.
        assert_eq!(choose_plan(&fixed, Some(Ok("[[[".into())), None), Ok(None));
    }

    #[test]
    fn a_wrong_card_plan_is_an_error_naming_file_line_and_key() {
        let e = choose("[storage]\nrepetitions = 1\ncolour = \"red\"\n").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), (CARD_PLAN_NAME, Some(3)));
        assert!(e.message.contains("unknown field `colour`"), "{e}");
        assert!(
            e.to_string().starts_with("plan.toml (card):3: storage"),
            "{e}"
        );

        let e = choose("\n[storage]\nrepetitions = 0\n").unwrap_err();
        assert_eq!(
            (e.line, e.key.as_str(), e.message.as_str()),
            (Some(3), "storage.repetitions", "must be at least 1")
        );
        // Not TOML at all.
        let e = choose("storage = [").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), (CARD_PLAN_NAME, Some(1)));
        // A disk on a bus the board lacks (resolve's own check).
        let e = choose("[[storage.disk]]\nlabel = \"d\"\nwhole-disk = \"sata\"\ndestroy = true\n")
            .unwrap_err();
        assert_eq!(e.key, "storage.disk[0].whole-disk");
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("no sata bus"), "{e}");
    }

    #[test]
    fn a_card_plan_saved_as_utf16_is_refused_saying_so() {
        let dir = tempfile::tempdir().unwrap();
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(
                "[storage]\nrepetitions = 2\n"
                    .encode_utf16()
                    .flat_map(u16::to_le_bytes),
            )
            .collect();
        std::fs::write(dir.path().join(CARD_PLAN_FILE), utf16).unwrap();
        let mut r = RunResults::new(
            "t".into(),
            card_base(),
            benchboot_storage::system::system_info(0),
        );
        let plan = take_card_plan(card_base(), Some(dir.path()), &mut r);
        assert_eq!(plan, card_base(), "the built-in plan stays");
        assert_eq!(
            r.plan_error.map(|e| e.to_string()).as_deref(),
            Some(
                "plan.toml (card): cannot read it: plan.toml is not UTF-8 (looks like \
                 UTF-16 (little-endian, with a byte-order mark)): save it as UTF-8"
            )
        );
    }

    #[test]
    fn unreadable_inputs_are_errors_too() {
        let base = card_base();
        let e = choose_plan(
            &base,
            Some(Err("stream did not contain valid UTF-8".into())),
            None,
        )
        .unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.line, e.key.as_str()),
            (CARD_PLAN_NAME, None, "(file)")
        );
        assert_eq!(
            e.message,
            "cannot read it: stream did not contain valid UTF-8"
        );

        let e = choose_plan(
            &base,
            Some(Ok("".into())),
            Some(Err("No such file or directory (os error 2)".into())),
        )
        .unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.key.as_str()),
            (IMAGE_FACTS_PATH, "(file)")
        );
        assert!(
            e.message.starts_with("cannot read it: No such file")
                && e.message.contains("rebuild it"),
            "{e}"
        );
        let e = choose_plan(&base, Some(Ok("".into())), None).unwrap_err();
        assert_eq!(e.file, IMAGE_FACTS_PATH);

        let e = choose_plan(
            &base,
            Some(Ok("".into())),
            Some(Ok("{\n\"card\": 3}".into())),
        )
        .unwrap_err();
        assert_eq!((e.file.as_str(), e.line), (IMAGE_FACTS_PATH, Some(2)));
        assert!(e.message.starts_with("not the image's facts: "), "{e}");
    }
}
