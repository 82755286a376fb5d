//! When two documents with one run id are one run, and what the store names a
//! document when they are not.
//!
//! A run id is the board's name and its kernel's random boot id, so two runs meet under
//! one id only when a document was copied, edited or forged: a card passed from board
//! to board, a cloned card image. A stored document is replaced only by another copy of
//! the same run ([`RunIdentity::differences`] empty): same board, same start
//! (`system.init_started_ns`, PID 1's start on the board's boot clock: the same in every
//! copy the run writes, unlike `written_ns`) and the same boot card. Any other document
//! with that id is kept beside it, as `<run id>.<n>` ([`copy_name`]).

use benchboot_results::name::{NameKind, SafeName};
use benchboot_results::RunResults;
use serde::Serialize;

/// True when `a` and `b` are copies of one run: one run id and no
/// [`RunIdentity::differences`] (the store's rule; `compare` refuses such a pair, and
/// `collect` does not store a kept copy of the run it just stored).
pub fn is_same_run(a: &RunResults, b: &RunResults) -> bool {
    a.run_id == b.run_id
        && RunIdentity::of(a)
            .differences(&RunIdentity::of(b))
            .is_empty()
}

/// The most documents the store keeps under one run id (the first and its copies
/// `.2`...): a run id holds a random boot id, so more than one is already a copied or
/// forged document; the bound keeps a hostile card from filling the store under one id.
pub const MAX_SAME_ID: u32 = 16;

/// What tells one run from another run with the same id.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct RunIdentity {
    /// The board's name (`board`).
    pub board: String,
    /// When PID 1 started, ns on the board's boot clock (`system.init_started_ns`; 0
    /// for a host run).
    pub started_ns: u64,
    /// The boot card's MBR disk signature as the image wrote it (`boot_card.signature`,
    /// e.g. `0x1a2b3c4d`); `None`: not recorded.
    pub card_signature: Option<String>,
    /// SHA-256 of the boot card's serial number, hex (the `devices` entry of the boot
    /// disk); `None`: the boot disk was not identified, or not yet when this copy was
    /// written.
    pub card_serial_sha256: Option<String>,
}

impl RunIdentity {
    /// The identity `r` records.
    pub fn of(r: &RunResults) -> RunIdentity {
        let boot = r.boot_card.as_ref();
        let disk = boot.map(|c| c.found.as_deref().unwrap_or(&c.nominal));
        RunIdentity {
            board: r.board.clone(),
            started_ns: r.system.init_started_ns,
            card_signature: boot.and_then(|c| c.signature.clone()),
            card_serial_sha256: disk.and_then(|d| {
                r.devices
                    .iter()
                    .find(|x| x.name == d)
                    .and_then(|x| x.serial_sha256.clone())
            }),
        }
    }

    /// What tells this copy from the `stored` one, in words, one item each; empty when
    /// they are copies of one run. A card fact that one of the two lacks is no
    /// difference: a copy written before the disks were identified has no serial yet.
    pub fn differences(&self, stored: &RunIdentity) -> Vec<String> {
        let mut d = Vec::new();
        if self.board != stored.board {
            d.push(format!("board {} (stored: {})", self.board, stored.board));
        }
        if self.started_ns != stored.started_ns {
            d.push(format!(
                "started {} after power-on (stored: {})",
                seconds(self.started_ns),
                seconds(stored.started_ns)
            ));
        }
        if let (Some(a), Some(b)) = (&self.card_signature, &stored.card_signature) {
            if a != b {
                d.push(format!("boot card signature {a} (stored: {b})"));
            }
        }
        if let (Some(a), Some(b)) = (&self.card_serial_sha256, &stored.card_serial_sha256) {
            if a != b {
                d.push(format!(
                    "another boot card (serial hash {}..., stored: {}...)",
                    short(a),
                    short(b)
                ));
            }
        }
        d
    }
}

/// `ns` as seconds with milliseconds: `3.412 s`.
fn seconds(ns: u64) -> String {
    format!(
        "{}.{:03} s",
        ns / 1_000_000_000,
        ns % 1_000_000_000 / 1_000_000
    )
}

/// The first 12 characters of a hash, enough to tell two apart in a message.
fn short(hash: &str) -> &str {
    hash.char_indices()
        .nth(12)
        .map_or(hash, |(i, _)| &hash[..i])
}

/// The name of the `n`th document kept under run id `id` (`n` from 2): `<id>.<n>`,
/// through the one gate ([`SafeName::new`]).
///
/// # Errors
/// The name breaks a rule of the gate (a run id near its 128-byte limit).
pub fn copy_name(id: &str, n: u32) -> Result<SafeName, benchboot_results::name::NameError> {
    SafeName::new(NameKind::RunId, &format!("{id}.{n}"))
}

/// True when `stem` is the name the store gives a document of run `id`: `id` itself,
/// or `<id>.<n>` with `n` from 2 to [`MAX_SAME_ID`] written plainly ([`copy_name`]).
pub fn is_name_of(stem: &str, id: &str) -> bool {
    if stem == id {
        return true;
    }
    let Some(n) = stem.strip_prefix(id).and_then(|s| s.strip_prefix('.')) else {
        return false;
    };
    !n.starts_with('0')
        && n.bytes().all(|b| b.is_ascii_digit())
        && n.parse::<u32>()
            .is_ok_and(|n| (2..=MAX_SAME_ID).contains(&n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(board: &str, started_ns: u64, sig: Option<&str>, serial: Option<&str>) -> RunIdentity {
        RunIdentity {
            board: board.into(),
            started_ns,
            card_signature: sig.map(Into::into),
            card_serial_sha256: serial.map(Into::into),
        }
    }

    #[test]
    fn each_fact_that_differs_is_named() {
        let stored = id(
            "rpi-zero-w",
            2_001_000_000,
            Some("0x1a2b3c4d"),
            Some("ab".repeat(32).as_str()),
        );
        assert!(stored.differences(&stored).is_empty());
        // A copy written before the disks were identified: the same run.
        let early = id("rpi-zero-w", 2_001_000_000, Some("0x1a2b3c4d"), None);
        assert!(early.differences(&stored).is_empty());
        let other = id(
            "rpi-4b",
            3_412_000_000,
            Some("0x00000001"),
            Some("cd".repeat(32).as_str()),
        );
        assert_eq!(
            other.differences(&stored),
            [
                "board rpi-4b (stored: rpi-zero-w)",
                "started 3.412 s after power-on (stored: 2.001 s)",
                "boot card signature 0x00000001 (stored: 0x1a2b3c4d)",
                "another boot card (serial hash cdcdcdcdcdcd..., stored: abababababab...)",
            ]
        );
    }

    #[test]
    fn copy_names_read_back_and_nothing_else_does() {
        assert_eq!(copy_name("rpi-4b-77", 2).unwrap().as_str(), "rpi-4b-77.2");
        assert!(copy_name(&"x".repeat(127), 2).is_err());
        assert!(is_name_of("rpi-4b-77", "rpi-4b-77"));
        assert!(is_name_of("rpi-4b-77.2", "rpi-4b-77"));
        assert!(is_name_of("rpi-4b-77.16", "rpi-4b-77"));
        for other in [
            "rpi-4b-77.1",
            "rpi-4b-77.02",
            "rpi-4b-77.17",
            "rpi-4b-77.x",
            "rpi-4b-7",
            "rpi-4b-77-2",
        ] {
            assert!(!is_name_of(other, "rpi-4b-77"), "{other}");
        }
    }
}
