//! Power cuts in QEMU (`qemu-virt-arm64`, plan `powercut`: the QEMU plan's storage
//! steps over 4 block sizes, no network tests). One whole run first (its length spreads
//! the cuts), then 10 boots of the same card, each killed (SIGKILL of QEMU: the guest's
//! unwritten data is lost, as when a board's supply is pulled) at a random point of its
//! run; each boot is also the reboot after the previous cut. After every cut the card's
//! results partition is read with the host tool's card reader:
//! - the document of the boot that was cut parses, is marked partial (unless the cut came
//!   after its last step) and holds at least every step the console said was saved
//!   (`benchboot: saved ...`) before the cut;
//! - the previous boot's document is still there byte for byte (kept as
//!   `runs/<run id>.json` once the next boot got that far, else still `results.json`).
//!
//! The card reader takes the newer of the results journal's newest record (p4, written
//! first at every save) and the FAT copy, so each cut is also counted by where it
//! landed: between a journal append and its FAT copy (the reader names the journal),
//! or inside a journal append (a torn record skipped).
//!
//! A last whole run on the same card, its results partition zeroed first (no FAT to
//! mount), completes with that one error recorded, and the card gives it back from the
//! journal. The cut points come from a fixed seed
//! (`BENCHBOOT_CUT_SEED` overrides it), printed with each cut; `BENCHBOOT_CUTS` sets
//! their number (10 in CI, ~15 s each: a cut after every sector and any subset of a
//! write in flight are the journal's unit tests over fakes, `crates/journal`; these
//! prove the real path: kernel, O_DIRECT, FAT, the host's reader).

use std::path::Path;
use std::time::{Duration, Instant};

use benchboot_card as card;
use benchboot_results::RunResults;
use xtask::qemu::{cut, run_with, Options};

/// Cuts by default (`BENCHBOOT_CUTS` overrides it): 10 since 2026-12-07 (20 before,
/// 375 s of `.ci/run`'s 66 min).
const CUTS: u32 = 10;

/// splitmix64 (Steele, Lea, Flood 2014): a few lines, reproducible from the seed.
struct SplitMix(u64);
impl SplitMix {
    fn next_unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) as f64 / u64::MAX as f64
    }
}

/// The counts of the last whole `benchboot: saved ...` line of a console log (a cut can
/// stop the console in the middle of a line: the last key, `complete=`, must be there).
fn last_saved(console: &str) -> Option<Vec<(String, String)>> {
    let line = console
        .lines()
        .rev()
        .filter_map(|l| l.split_once("benchboot: saved ").map(|(_, rest)| rest))
        .find(|rest| rest.ends_with("complete=true") || rest.ends_with("complete=false"))?;
    Some(
        line.split_whitespace()
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
    )
}

fn count(saved: &[(String, String)], key: &str) -> usize {
    saved
        .iter()
        .find(|(k, _)| k == key)
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key}= in {saved:?}"))
}

/// The earlier boots' documents kept on the card (source, text); each must be readable.
fn kept_texts(sd: &Path, what: &str) -> Vec<(String, String)> {
    card::read_kept_runs(sd)
        .unwrap_or_else(|e| panic!("{what}: {e:#}"))
        .into_iter()
        .map(|k| match k.text {
            Ok(t) => (k.source, t),
            Err(e) => panic!("{what}: {}: {e:#}", k.source),
        })
        .collect()
}

/// The card's newest results document (the journal's or the FAT copy), if it has one.
fn current(sd: &Path) -> Option<String> {
    card::read_results(sd).ok().map(|c| c.text)
}

#[test]
fn power_cuts_lose_no_saved_step() {
    let _slot = benchboot_tests::qemu_slot(module_path!());
    let started = Instant::now();
    let board = xtask::load_board("qemu-virt-arm64").unwrap();
    let mut opts = Options::new(Duration::from_secs(900));
    opts.plan = "powercut".into();
    let full = run_with(&board, &opts).unwrap();
    let first = benchboot_tests::checks::fetched(&full);
    assert!(
        first.complete && first.faults.is_empty(),
        "{:?}",
        first.events
    );
    let span = full.boot_to_ready.saturating_sub(full.boot_to_init);
    opts.card = Some(full.sd_card.clone());
    let mut previous = current(&full.sd_card).expect("a whole run leaves results.json");

    let seed = std::env::var("BENCHBOOT_CUT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x00be_7c4a_11ed_u64);
    let mut rng = SplitMix(seed);
    let cuts: u32 = std::env::var("BENCHBOOT_CUTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(CUTS);
    let mut partial = 0;
    let (mut fat_behind, mut torn, mut fat_lost) = (0, 0, 0);
    for k in 0..cuts {
        // A little past the run's end too: a cut while serving loses nothing either.
        let after = span.mul_f64(rng.next_unit() * 1.05);
        let c = cut(&board, &opts, after).unwrap();
        let console = std::fs::read_to_string(&c.console_log).unwrap();
        let what = format!(
            "cut {k} (seed {seed:#x}) {:.1} s after PID 1 started; console in {}",
            after.as_secs_f64(),
            c.console_log.display()
        );

        // The previous boot's document, byte for byte: kept in runs/, not yet moved, or
        // (its FAT copies lost: a cut can damage the FAT, which the kernel then mounts
        // read-only) still in the journal.
        let kept = kept_texts(&c.sd_card, &what);
        for (source, text) in &kept {
            RunResults::from_json(text).unwrap_or_else(|e| panic!("{what}: {source}: {e}"));
        }
        let now = current(&c.sd_card);
        let journal =
            card::read_journal_runs(&c.sd_card).unwrap_or_else(|e| panic!("{what}: {e:#}"));
        let in_journal = journal
            .iter()
            .any(|k| k.text.as_ref().is_ok_and(|t| *t == previous));
        let on_fat = kept.iter().any(|(_, t)| *t == previous) || now.as_deref() == Some(&previous);
        assert!(
            on_fat || in_journal,
            "{what}: the previous boot's document is gone"
        );
        if !on_fat {
            fat_lost += 1;
        }

        if let Ok(read) = card::read_results(&c.sd_card) {
            fat_behind += usize::from(read.source.contains("results journal"));
            torn += usize::from(read.notes.iter().any(|n| n.contains("torn record")));
        }
        // This boot's document, if it wrote one: whole, at least what it said it saved.
        let Some(saved) = last_saved(&console) else {
            eprintln!("{what}: cut before the first save");
            continue;
        };
        let text = now.unwrap_or_else(|| panic!("{what}: saved, yet no results.json"));
        let r = RunResults::from_json(&text).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            console.contains(&format!("benchboot: start run={}", r.run_id)),
            "{what}: results.json is not this boot's"
        );
        assert!(r.storage.len() >= count(&saved, "storage"), "{what}");
        assert!(
            r.device_reads.len() >= count(&saved, "device_reads"),
            "{what}"
        );
        assert!(r.random.len() >= count(&saved, "random"), "{what}");
        assert!(r.verify.len() >= count(&saved, "verify"), "{what}");
        if r.complete {
            // The run's last persist marks the document complete and only then prints
            // its `saved ... complete=true` line: a cut between the two leaves a complete
            // document whose line never reached the console. The console must then have
            // reached the step before that persist, and the document must hold it.
            assert!(
                console.contains("complete=true")
                    || console.contains("benchboot: census after-storage"),
                "{what}: marked complete before the run's last step"
            );
            assert!(
                r.census.iter().any(|c| c.at == "after-storage"),
                "{what}: complete without its after-storage census"
            );
        } else {
            partial += 1;
            let warnings = benchboot::collect::warnings(&r);
            assert!(
                warnings.iter().any(|w| w.contains("partial")),
                "{what}: the host must say partial: {warnings:?}"
            );
        }
        eprintln!(
            "{what}: {} storage measurements on the card, {} kept runs, {}",
            r.storage.len(),
            kept.len(),
            if r.complete { "complete" } else { "partial" }
        );
        previous = text;
    }
    assert!(
        partial >= cuts / 2,
        "most cuts land mid-run: {partial} partial"
    );

    // The reboot after the last cut runs to the end on a card whose FAT copy is gone:
    // the results partition zeroed (no filesystem to mount). PID 1 records that, runs
    // the plan, and the journal gives the whole run back.
    let layout = benchboot_image::layout::plan(&benchboot_image::layout::Spec::default()).unwrap();
    let p2 = layout.part(benchboot_image::layout::Role::Results).unwrap();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&full.sd_card)
        .unwrap();
    std::os::unix::fs::FileExt::write_all_at(
        &f,
        &vec![0u8; p2.size_bytes() as usize],
        p2.offset_bytes(),
    )
    .unwrap();
    drop(f);
    let last = run_with(&board, &opts).unwrap();
    let r = benchboot_tests::checks::fetched(&last);
    assert!(r.complete, "{:?}", r.events);
    // ext2 has no journal: a cut in the middle of its block allocation can leave the
    // test disk's ext2 needing e2fsck, and every later step on it fails with EUCLEAN
    // ("os error 117"), recorded as such (which cut does it depends on how far each boot
    // got in its time, so on the machine's load). That is the test filesystem's damage,
    // not the results': those steps are allowed to fail with exactly that error, nothing
    // else is.
    let errors: Vec<&str> = r
        .events
        .iter()
        .filter(|e| e.severity == benchboot_results::Severity::Error)
        .filter(|e| !(e.step.starts_with("storage.ext2.") && e.message.ends_with("(os error 117)")))
        .map(|e| e.step.as_str())
        .collect();
    assert_eq!(errors, ["mount.results"], "{:?}", r.events);
    let read = card::read_results(&last.sd_card).unwrap();
    let recovered = RunResults::from_json(&read.text).unwrap();
    assert_eq!(
        (
            &recovered.run_id,
            recovered.complete,
            recovered.storage.len()
        ),
        (&r.run_id, true, r.storage.len())
    );
    assert!(
        read.source.contains("p4 (results journal) record"),
        "{}",
        read.source
    );
    assert!(
        read.notes
            .iter()
            .any(|n| n.contains("the FAT copy is unreadable")),
        "{:?}",
        read.notes
    );
    eprintln!(
        "powercut: {fat_behind} cut(s) left the FAT copy behind the journal (between a \
         journal append and its FAT copy), {torn} left a torn journal record, {fat_lost} \
         boot(s) found the previous run in the journal only (its FAT copies lost)"
    );
    eprintln!(
        "powercut: {cuts} cuts ({partial} mid-run); whole test {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
