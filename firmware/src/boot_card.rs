//! The boot card found by the MBR disk signature its image wrote, and the plan moved
//! onto it: PID 1 never trusts the kernel's name for the card (a Pi 4's card may be
//! `mmcblk1`: its DTB has no `mmc*` aliases and two sdhci-iproc hosts).
//!
//! [`find`] reads the image's facts ([`IMAGE_FACTS_PATH`]: the nominal disk and the
//! signature), waits up to the plan's device wait for a whole disk carrying the
//! signature ([`blkid::wait_for_signature`]) and records the outcome
//! ([`RunResults::boot_card`], and an event when it matters); [`moved`] and
//! [`on_boot_card`] give the plan with every path on the nominal disk moved to the
//! disk found ([`Plan::on_boot_disk`]).

use std::path::Path;
use std::time::Duration;

use benchboot_plan::boot_disk::{BootDiskError, Signature};
use benchboot_plan::{ImageFacts, Plan, IMAGE_FACTS_PATH};
use benchboot_results::{BootCard, RunResults, Severity};

use crate::blkid;
use crate::console::say;

const SYS_BLOCK: &str = "/sys/class/block";
const DEV: &str = "/dev";

/// The step id of the boot card's events.
pub const STEP: &str = "boot-card";

/// What to record for the search's `outcome`: the [`BootCard`] and, when it matters,
/// an event (severity, message): info when the card is not where the image was built
/// for, a warning when no disk (or more than one) carries the signature and the plan
/// keeps `nominal`.
pub fn decide(
    nominal: &str,
    signature: u32,
    outcome: Result<String, BootDiskError>,
) -> (BootCard, Option<(Severity, String)>) {
    let sig = (signature != 0).then(|| Signature(signature).to_string());
    match outcome {
        Ok(found) => {
            let how = format!(
                "the whole disk whose MBR carries the image's disk signature {}",
                Signature(signature)
            );
            let event = (found != nominal).then(|| {
                (
                    Severity::Info,
                    format!(
                        "the card is {found}, not {nominal} as the image was built for (found \
                         by its disk signature {}): every plan path on {nominal} now names {found}",
                        Signature(signature)
                    ),
                )
            });
            let card = BootCard {
                nominal: nominal.to_owned(),
                found: Some(found),
                signature: sig,
                how,
            };
            (card, event)
        }
        Err(e) => {
            let how = format!("{e}; the plan keeps {nominal}");
            let card = BootCard {
                nominal: nominal.to_owned(),
                found: None,
                signature: sig,
                how: how.clone(),
            };
            (card, Some((Severity::Warning, how)))
        }
    }
}

fn image_facts() -> Result<ImageFacts, String> {
    let text = std::fs::read_to_string(IMAGE_FACTS_PATH)
        .map_err(|e| format!("{IMAGE_FACTS_PATH}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{IMAGE_FACTS_PATH}: {e}"))
}

/// Finds the boot card and records where ([`RunResults::boot_card`], [`decide`]'s
/// event, a console line when it is not the nominal disk). Waits at most the plan's
/// `storage.device_wait_ms`.
pub fn find(plan: &Plan, results: &mut RunResults) {
    let (nominal, signature) = match image_facts() {
        Ok(f) => (f.boot_disk, f.disk_signature),
        Err(e) => {
            let nominal = blkid::disk_of(
                Path::new(SYS_BLOCK),
                plan.results.device.trim_start_matches("/dev/"),
            );
            let why = format!("the image's facts are unreadable ({e}); the plan keeps {nominal}");
            results.event(STEP, Severity::Warning, why.clone());
            results.boot_card = Some(BootCard {
                nominal,
                found: None,
                signature: None,
                how: why,
            });
            return;
        }
    };
    let outcome = blkid::wait_for_signature(
        Path::new(SYS_BLOCK),
        Path::new(DEV),
        signature,
        Duration::from_millis(plan.storage.device_wait_ms),
    );
    let (card, event) = decide(&nominal, signature, outcome);
    if let Some((severity, message)) = event {
        say(&format!("boot card: {message}"));
        results.event(STEP, severity, message);
    }
    results.boot_card = Some(card);
}

/// `plan` on the disk [`find`] found (itself when none was found, or the nominal one).
pub fn moved(plan: &Plan, results: &RunResults) -> Plan {
    match &results.boot_card {
        Some(BootCard {
            nominal,
            found: Some(actual),
            ..
        }) => plan.on_boot_disk(nominal, actual),
        _ => plan.clone(),
    }
}

/// The plan PID 1 runs, moved onto the card found ([`moved`]); the results record it.
/// A raw target naming the disk the card was found on would overwrite the card: it is
/// dropped with an error event saying so ([`Plan::raw_targets_on`]).
pub fn on_boot_card(plan: Plan, results: &mut RunResults) -> Plan {
    let Some(BootCard {
        nominal,
        found: Some(actual),
        ..
    }) = results.boot_card.clone()
    else {
        return plan;
    };
    if nominal == actual {
        return plan;
    }
    for label in plan.raw_targets_on(&actual) {
        results.event(
            format!("target.{label}"),
            Severity::Error,
            format!(
                "not written: it names {actual}, where the boot card was found (the image \
                 was built for {nominal}); benchboot never overwrites the card. Name the \
                 disk by bus (BUS=usb) instead"
            ),
        );
    }
    let moved = moved(&plan, results);
    results.plan = moved.redacted();
    moved
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn found_where_built_for_is_quiet() {
        let (card, event) = decide("mmcblk0", 0xdead_beef, Ok("mmcblk0".into()));
        assert_eq!(card.found.as_deref(), Some("mmcblk0"));
        assert_eq!(card.signature.as_deref(), Some("0xdeadbeef"));
        assert!(
            card.how.contains("disk signature 0xdeadbeef"),
            "{}",
            card.how
        );
        assert_eq!(event, None);
    }

    #[test]
    fn found_elsewhere_is_an_info_event() {
        let (card, event) = decide("mmcblk0", 0xdead_beef, Ok("mmcblk1".into()));
        assert_eq!(card.found.as_deref(), Some("mmcblk1"));
        let (severity, message) = event.unwrap();
        assert_eq!(severity, Severity::Info);
        assert_eq!(
            message,
            "the card is mmcblk1, not mmcblk0 as the image was built for (found by its disk \
             signature 0xdeadbeef): every plan path on mmcblk0 now names mmcblk1"
        );
    }

    #[test]
    fn not_found_or_ambiguous_keeps_the_nominal_disk_with_a_warning() {
        let err = BootDiskError::Ambiguous {
            signature: Signature(0xdead_beef),
            disks: "mmcblk0, sda".into(),
        };
        let (card, event) = decide("mmcblk0", 0xdead_beef, Err(err));
        assert_eq!(card.found, None);
        let (severity, message) = event.unwrap();
        assert_eq!(severity, Severity::Warning);
        assert!(message.contains("mmcblk0, sda") && message.ends_with("the plan keeps mmcblk0"));
        let (card, _) = decide("mmcblk0", 0, Err(BootDiskError::NoSignature));
        assert_eq!(card.signature, None);
        assert!(
            card.how.contains("records no disk signature"),
            "{}",
            card.how
        );
    }

    #[test]
    fn the_plan_run_is_on_the_card_found_and_the_results_say_so() {
        let plan = Plan::example();
        let mut results = RunResults::new(
            "t".into(),
            plan.clone(),
            benchboot_results::SystemInfo::default(),
        );
        assert_eq!(moved(&plan, &results), plan, "nothing found yet");
        let (card, _) = decide("mmcblk0", 7, Ok("mmcblk1".into()));
        results.boot_card = Some(card);
        assert_eq!(moved(&plan, &results).results.device, "/dev/mmcblk1p2");
        let run = on_boot_card(plan, &mut results);
        assert_eq!(run.storage.targets[0].device, "/dev/mmcblk1p7");
        assert_eq!(results.plan.storage.targets[0].device, "/dev/mmcblk1p7");
        assert!(results.events.is_empty());
    }
}
