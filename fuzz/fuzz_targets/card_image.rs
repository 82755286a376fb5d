//! A card image as `collect --from-card` reads it, over memory: the MBR and its EBR
//! chain (`partitions`), the results partition by label (`find_results_partition`,
//! every FAT-typed partition mounted for its label), the newer of the journal's record
//! and the FAT copy (`read_results_from`), the earlier runs kept on the FAT and in the
//! journal (`read_kept_runs_from`, `read_journal_runs_from`).
#![no_main]

use std::io::Cursor;
use std::path::Path;

use benchboot_card::mbr::MAX_LOGICAL;
use benchboot_card::{
    find_results_partition, partitions, read_journal_runs_from, read_kept_runs_from,
    read_results_from,
};
use libfuzzer_sys::fuzz_target;

/// Every message is one short line (the partition list of a hostile table made one of
/// 3.6 MB).
fn short(m: &str) {
    assert!(m.chars().count() < 2000, "{} chars: {m}", m.chars().count());
}

/// libFuzzer's panic hook aborts at any panic, even one that is caught. fatfs panics
/// on a damaged FAT (an unchecked `cluster - 2`), which the card reader catches
/// (`benchboot_card::fat_guard`) and turns into an error: such panics are let through
/// to be caught; any other goes to libFuzzer's hook (a crash), and one of fatfs's that
/// escapes the reader still aborts in libfuzzer-sys's own `catch_unwind`.
fn let_fatfs_panics_be_caught() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let fuzzer_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info
                .location()
                .is_some_and(|l| l.file().contains("/fatfs-"))
            {
                fuzzer_hook(info);
            }
        }));
    });
}

fuzz_target!(|data: &[u8]| {
    let_fatfs_panics_be_caught();
    let len = data.len() as u64;
    let mut disk = Cursor::new(data);
    let parts = partitions(&mut disk).expect("memory reads cannot fail");
    assert!(parts.len() <= 4 + MAX_LOGICAL, "{}", parts.len());
    for p in &parts {
        // Inside the disk, numbered as Linux numbers them.
        assert!(p.offset < len && p.offset + p.len <= len, "{p:?}");
        assert!((1..=4).contains(&p.number) || (5..=4 + MAX_LOGICAL as u8).contains(&p.number));
    }
    if let Err(e) = find_results_partition(&mut disk) {
        short(&format!("{e:#}"));
    }
    let path = Path::new("card.img");
    match read_results_from(&mut disk, path) {
        Ok(r) => {
            assert!(!r.text.trim().is_empty());
            for n in &r.notes {
                short(n);
            }
        }
        Err(e) => short(&format!("{e:#}")),
    }
    if let Ok(runs) = read_kept_runs_from(&mut disk, path) {
        for k in runs {
            if let Err(e) = k.text {
                short(&format!("{e:#}"));
            }
        }
    }
    if let Ok(runs) = read_journal_runs_from(&mut disk, path) {
        for k in runs {
            if let Err(e) = k.text {
                short(&format!("{e:#}"));
            }
        }
    }
});
