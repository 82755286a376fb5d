//! Reading a card whose results live in the journal (p4) as well as the FAT copy (p2):
//! the newer copy is read, a FAT copy that is zeroed or older costs nothing, and
//! `benchboot collect --from-card` says which copy it used and what was damaged.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use benchboot::collect;
use benchboot_card as card;
use benchboot_journal::{Device, Writer};

use crate::collect_card::{fat, image, raw, results_text};

const MIB: u64 = 1 << 20;
/// Where the test card's partitions lie, MiB: p2 results at 5 (4 MiB), p4 journal at 10.
const P2: u64 = 5;
const P4: u64 = 10;

/// The card's journal partition in the image file.
struct Slice {
    file: File,
    offset: u64,
    len: u64,
}

impl Device for Slice {
    fn len(&self) -> u64 {
        self.len
    }
    fn read_at(&mut self, o: u64, b: &mut [u8]) -> io::Result<()> {
        self.file.seek(SeekFrom::Start(self.offset + o))?;
        self.file.read_exact(b)
    }
    fn write_at(&mut self, o: u64, b: &[u8]) -> io::Result<()> {
        self.file.seek(SeekFrom::Start(self.offset + o))?;
        self.file.write_all(b)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }
}

/// The QEMU run's document as PID 1 saved it after `steps` storage measurements, at
/// boot time `written_ns`.
fn save(run: &str, steps: usize, written_ns: u64) -> String {
    let mut v: serde_json::Value = serde_json::from_str(&results_text()).unwrap();
    v["run_id"] = run.into();
    v["system"]["written_ns"] = written_ns.into();
    v["storage"].as_array_mut().unwrap().truncate(steps);
    v["complete"] = false.into();
    serde_json::to_string_pretty(&v).unwrap()
}

/// A card: p1 boot, p2 results holding `fat_copy` as results.json, p4 a 4 MiB journal
/// holding `journal` (run id, document) in order.
fn card_with(dir: &Path, fat_copy: &str, journal: &[(&str, String)]) -> PathBuf {
    let img = image(
        dir,
        &[
            fat(1, 4, Some("BOOT"), vec![]),
            fat(
                P2,
                4,
                Some("BBRESULTS"),
                vec![("results.json", fat_copy.to_owned())],
            ),
            raw(0x83, 9, 1),
            raw(0xda, P4, 4),
        ],
        &[],
    );
    let dev = Slice {
        file: OpenOptions::new()
            .read(true)
            .write(true)
            .open(&img)
            .unwrap(),
        offset: P4 * MIB,
        len: 4 * MIB,
    };
    let mut w = Writer::open(dev).unwrap().0;
    for (run, text) in journal {
        w.append(run, text.as_bytes()).unwrap();
    }
    img
}

fn zero(img: &Path, offset: u64, len: u64) {
    let mut f = OpenOptions::new().write(true).open(img).unwrap();
    f.seek(SeekFrom::Start(offset)).unwrap();
    f.write_all(&vec![0u8; len as usize]).unwrap();
}

/// Measurements of a document: storage, device reads, random IOPS, verification.
fn steps_of(text: &str) -> usize {
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    let n = |k: &str| v[k].as_array().map_or(0, Vec::len);
    n("storage") + n("device_reads") + n("random") + n("verify")
}

#[test]
fn a_zeroed_fat_copy_gives_the_run_back_from_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let run = "rpi-zero-w-0a1b2c3d4e5f";
    // An earlier boot's three saves, then this boot's six.
    let earlier = "rpi-zero-w-99";
    let mut journal: Vec<(&str, String)> = (1..=3)
        .map(|i| (earlier, save(earlier, i, i as u64)))
        .collect();
    let saves: Vec<(&str, String)> = (1..=6).map(|i| (run, save(run, i, i as u64))).collect();
    journal.extend(saves.iter().cloned());
    let img = card_with(dir.path(), &saves[5].1, &journal);
    // The FAT copy destroyed: the whole results partition zeroed.
    zero(&img, P2 * MIB, 4 * MIB);
    let read = card::read_results(&img).unwrap();
    assert_eq!(read.text, saves[5].1);
    assert_eq!(
        read.source,
        format!("{} p4 (results journal) record 9", img.display())
    );
    let n = steps_of(&saves[5].1);
    assert!(
        read.notes
            .iter()
            .any(|l| l.starts_with("the FAT copy is unreadable (")
                && l.ends_with(&format!(
                    "; run {run} recovered from the journal, {n} steps"
                ))),
        "{:?}",
        read.notes
    );

    // collect --from-card stores it and says so.
    let store = dir.path().join("store");
    let c = collect::collect(&crate::from_card(&img, &store)).unwrap();
    assert_eq!(c.results.run_id, run);
    assert_eq!(c.results.storage.len(), 6);
    assert!(
        c.row.source.ends_with("p4 (results journal) record 9"),
        "{}",
        c.row.source
    );
    // The earlier boot, its runs/ copy gone with the FAT: stored from the journal.
    assert_eq!(c.earlier.len(), 2, "{:?}", c.earlier);
    assert!(
        c.earlier[0].starts_with("not read: "),
        "runs/: {:?}",
        c.earlier
    );
    assert!(
        c.earlier[1].ends_with("p4 (results journal) record 3: partial run rpi-zero-w-99: stored"),
        "{:?}",
        c.earlier
    );
    assert!(
        c.card
            .iter()
            .any(|l| l.contains("recovered from the journal")),
        "{:?}",
        c.card
    );
}

#[test]
fn the_newer_copy_wins_and_the_other_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let run = "rpi-4b-77";
    let saves: Vec<(&str, String)> = (1..=4)
        .map(|i| (run, save(run, i, 100 * i as u64)))
        .collect();
    // A cut after the journal's record 4, before its FAT copy: the FAT copy is save 3.
    let img = card_with(dir.path(), &saves[2].1, &saves);
    let read = card::read_results(&img).unwrap();
    assert_eq!(read.text, saves[3].1);
    assert!(
        read.source.ends_with("p4 (results journal) record 4"),
        "{}",
        read.source
    );
    assert!(
        read.notes
            .iter()
            .any(|l| l.contains("p2 (BBRESULTS)) is older (run rpi-4b-77,")),
        "{:?}",
        read.notes
    );
    // Both copies the same: the FAT copy is read, and nothing to say.
    let img = card_with(dir.path(), &saves[3].1, &saves);
    let read = card::read_results(&img).unwrap();
    assert_eq!(read.text, saves[3].1);
    assert_eq!(read.source, format!("{} p2 (BBRESULTS)", img.display()));
    assert!(read.notes.is_empty(), "{:?}", read.notes);
    // The journal failed after save 2: the FAT copy, later in the same run, wins.
    let img = card_with(dir.path(), &saves[3].1, &saves[..2]);
    let read = card::read_results(&img).unwrap();
    assert_eq!(read.text, saves[3].1);
    assert!(
        read.notes[0].contains("older than the FAT copy"),
        "{:?}",
        read.notes
    );
}

#[test]
fn a_torn_newest_record_is_skipped_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let run = "bananapi-m2u-5";
    let saves: Vec<(&str, String)> = (1..=3).map(|i| (run, save(run, i, i as u64))).collect();
    let img = card_with(dir.path(), &saves[1].1, &saves);
    assert_eq!(card::read_results(&img).unwrap().text, saves[2].1);
    let mut f = File::open(&img).unwrap();
    let parts = card::partitions(&mut f).unwrap();
    let j = card::journal::read(&mut f, &parts, &img).unwrap().unwrap();
    let third = &j.scan.records[2];
    // Record 3 torn: its header survives, the tail of its payload never made it.
    let payload_end = third.offset + 128 + u64::from(third.header.stored_len);
    zero(&img, P4 * MIB + payload_end - 100, 100);
    let read = card::read_results(&img).unwrap();
    assert_eq!(read.text, saves[1].1, "save 2: in both copies");
    assert!(
        read.notes
            .iter()
            .any(|l| l.contains("1 torn record(s) skipped")),
        "{:?}",
        read.notes
    );
}

#[test]
fn a_card_without_a_journal_reads_as_before_and_a_blank_one_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let text = results_text();
    let img = image(
        dir.path(),
        &[
            fat(1, 4, Some("BOOT"), vec![]),
            fat(
                P2,
                4,
                Some("BBRESULTS"),
                vec![("results.json", text.clone())],
            ),
        ],
        &[],
    );
    let read = card::read_results(&img).unwrap();
    assert_eq!((read.text, read.notes.len()), (text, 0));
    // A new card: an empty journal and no results.json yet.
    let img = image(
        dir.path(),
        &[
            fat(1, 4, Some("BOOT"), vec![]),
            fat(P2, 4, Some("BBRESULTS"), vec![]),
            raw(0x83, 9, 1),
            raw(0xda, P4, 4),
        ],
        &[],
    );
    let err = format!("{:#}", card::read_results(&img).unwrap_err());
    assert!(
        err.contains("p4 (results journal) holds no record")
            && err.contains("has no results.json: the board has not written results yet"),
        "{err}"
    );
}

/// A card passed around: its journal holds a record with the id of a run already in
/// the store, written later (a larger `written_ns`), but by another board that started
/// at another time. It is another run: the stored document is not replaced; both are
/// kept, the newcomer as `<run id>.2`, and the line says so in words.
#[test]
fn another_runs_record_with_a_stored_run_id_is_kept_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let id = "rpi-zero-w-5a5a";
    // The run as its own board wrote it, collected first.
    let first = dir.path().join("first");
    std::fs::create_dir_all(&first).unwrap();
    let original = save(id, 2, 10);
    std::fs::write(first.join("results.json"), &original).unwrap();
    let c = collect::collect(&crate::from_card(&first, &store)).unwrap();
    assert_eq!(c.row.json_path, store.join(format!("runs/{id}.json")));

    // Another board's record under that id, written "later", in the journal of a card
    // whose current run is another one.
    let mut v: serde_json::Value = serde_json::from_str(&save(id, 3, 999_000_000_000)).unwrap();
    v["board"] = "rpi-4b".into();
    v["system"]["init_started_ns"] = 7_500_000_000u64.into();
    let stranger = serde_json::to_string_pretty(&v).unwrap();
    let current = save("rpi-4b-c0c0", 1, 5);
    let img = card_with(
        dir.path(),
        &current,
        &[(id, stranger.clone()), ("rpi-4b-c0c0", current.clone())],
    );
    let c = collect::collect(&crate::from_card(&img, &store)).unwrap();
    assert_eq!(c.results.run_id, "rpi-4b-c0c0");
    let line = c
        .earlier
        .iter()
        .find(|l| l.contains("record 1"))
        .unwrap_or_else(|| panic!("{:?}", c.earlier));
    assert!(
        line.ends_with(&format!(
            "p4 (results journal) record 1: partial run {id}: stored as {id}.2 beside another \
             run with run id {id} ({id}: board rpi-4b (stored: rpi-zero-w), started 7.500 s \
             after power-on (stored: 4.233 s)); both kept: `benchboot report {id}.2` shows \
             this one"
        )),
        "{line}"
    );
    assert!(
        !line.contains("Updated") && !line.contains("Inserted"),
        "{line}"
    );
    // The stored document is as its board wrote it; the stranger's is beside it.
    let runs = store.join("runs");
    assert_eq!(
        std::fs::read_to_string(runs.join(format!("{id}.json"))).unwrap(),
        original
    );
    assert_eq!(
        std::fs::read_to_string(runs.join(format!("{id}.2.json"))).unwrap(),
        stranger
    );
    let listed = collect::runs(Some(&store), false).unwrap();
    assert!(
        listed.contains(&format!(
            "{id}.2: another run with run id {id} (board rpi-4b), kept beside it: \
             `benchboot report {id}.2` shows it"
        )),
        "{listed}"
    );
    // Each by its own name.
    assert_eq!(
        benchboot::store::resolve(id, Some(&store)).unwrap(),
        runs.join(format!("{id}.json"))
    );
    assert_eq!(
        benchboot::store::resolve(&format!("{id}.2"), Some(&store)).unwrap(),
        runs.join(format!("{id}.2.json"))
    );
    // Collecting the card again changes nothing: the same run's copy is kept.
    let again = collect::collect(&crate::from_card(&img, &store)).unwrap();
    assert!(
        again.earlier.iter().any(|l| l.ends_with(&format!(
            "record 1: partial run {id}: stored, replacing the earlier copy of the same run"
        ))),
        "{:?}",
        again.earlier
    );
    assert_eq!(std::fs::read_dir(&runs).unwrap().count(), 3);
}
