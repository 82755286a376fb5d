//! Reading results from a card: generated MBR + FAT images (results partition found by
//! label, by position, as a logical partition, as a whole-disk FAT), a mounted folder,
//! a bare JSON file; and `benchboot collect --from-card` into a store.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use benchboot::collect;
use benchboot::store::Outcome;
use benchboot_card::{self as card, Partition};

const MIB: u64 = 1 << 20;
const DISK_MIB: u64 = 24;

/// A real results document when there is one, else a generated one.
pub(crate) fn results_text() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/rpi-zero-w-qemu.json"
    );
    std::fs::read_to_string(path).unwrap_or_else(|_| {
        let mut r = benchboot_results::RunResults::new(
            "rpi-zero-w-generated".into(),
            benchboot_plan::Plan::example(),
            benchboot_results::SystemInfo::default(),
        );
        r.complete = true;
        r.to_json()
    })
}

/// One partition of a test image: MBR type, start and size in MiB, FAT label (`None`:
/// no filesystem), files on it.
pub(crate) struct P<'a> {
    sys: u8,
    start_mib: u64,
    mib: u64,
    label: Option<&'a str>,
    files: Vec<(&'a str, String)>,
}

pub(crate) fn fat(
    start_mib: u64,
    mib: u64,
    label: Option<&'static str>,
    files: Vec<(&'static str, String)>,
) -> P<'static> {
    P {
        sys: 0x0c,
        start_mib,
        mib,
        label,
        files,
    }
}

/// A partition with no filesystem (e.g. the results journal, MBR type 0xda).
pub(crate) fn raw(sys: u8, start_mib: u64, mib: u64) -> P<'static> {
    P {
        sys,
        start_mib,
        mib,
        label: None,
        files: Vec::new(),
    }
}

fn label11(l: &str) -> [u8; 11] {
    let mut b = [b' '; 11];
    b[..l.len()].copy_from_slice(l.as_bytes());
    b
}

/// Formats a FAT filesystem (label `label`, or "NO NAME") over `len` bytes at `offset`
/// of `file` and writes `files` into it.
fn put_fat(file: &File, offset: u64, len: u64, label: Option<&str>, files: &[(&str, String)]) {
    let slice = |f: &File| {
        fscommon::BufStream::new(
            fscommon::StreamSlice::new(f.try_clone().unwrap(), offset, offset + len).unwrap(),
        )
    };
    let mut opts = fatfs::FormatVolumeOptions::new();
    if let Some(l) = label {
        opts = opts.volume_label(label11(l));
    }
    let mut s = slice(file);
    fatfs::format_volume(&mut s, opts).unwrap();
    s.flush().unwrap();
    drop(s);
    let fs = fatfs::FileSystem::new(slice(file), fatfs::FsOptions::new()).unwrap();
    for (name, text) in files {
        if let Some((dir, _)) = name.rsplit_once('/') {
            fs.root_dir().create_dir(dir).unwrap();
        }
        let mut f = fs.root_dir().create_file(name).unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f.flush().unwrap();
    }
    fs.unmount().unwrap();
}

/// Writes a DISK_MIB image with the primary partitions `primary` (numbered 1.. in
/// order) and, when `logical` is not empty, an extended p4 holding them (p5..).
pub(crate) fn image(dir: &Path, primary: &[P], logical: &[P]) -> PathBuf {
    let path = dir.join("card.img");
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    file.set_len(DISK_MIB * MIB).unwrap();
    let mut mbr = mbrman::MBR::new_from(&mut file, 512, *b"test").unwrap();
    let entry = |sys: u8, start: u64, len: u64| mbrman::MBRPartitionEntry {
        boot: mbrman::BOOT_INACTIVE,
        first_chs: mbrman::CHS::empty(),
        sys,
        last_chs: mbrman::CHS::empty(),
        starting_lba: (start / 512) as u32,
        sectors: (len / 512) as u32,
    };
    for (i, p) in primary.iter().enumerate() {
        mbr[i + 1] = entry(p.sys, p.start_mib * MIB, p.mib * MIB);
    }
    let mut placed = Vec::new();
    if !logical.is_empty() {
        let start = logical[0].start_mib - 1;
        mbr[4] = entry(0x0f, start * MIB, (DISK_MIB - start) * MIB);
        for p in logical {
            // mbrman's convention: the slot starts with the EBR, the partition 1 MiB later.
            let l = mbr
                .push(
                    p.sys,
                    ((p.start_mib - 1) * MIB / 512) as u32,
                    ((p.mib + 1) * MIB / 512) as u32,
                )
                .unwrap();
            placed.push(u64::from(l.partition.starting_lba) * 512);
        }
    }
    mbr.write_into(&mut file).unwrap();
    for p in primary {
        if p.label.is_some() || !p.files.is_empty() {
            put_fat(&file, p.start_mib * MIB, p.mib * MIB, p.label, &p.files);
        }
    }
    for (p, offset) in logical.iter().zip(placed) {
        assert_eq!(offset, p.start_mib * MIB, "logical partition placement");
        put_fat(&file, offset, p.mib * MIB, p.label, &p.files);
    }
    file.sync_all().unwrap();
    path
}

fn decoy() -> String {
    "{\"decoy\": true}".into()
}

#[test]
fn labelled_results_partition_of_the_layout() {
    let dir = tempfile::tempdir().unwrap();
    let text = results_text();
    let img = image(
        dir.path(),
        &[
            fat(1, 8, Some("BOOT"), vec![("results.json", decoy())]),
            fat(
                9,
                4,
                Some("BBRESULTS"),
                vec![("results.json", text.clone())],
            ),
        ],
        &[],
    );
    let before = std::fs::read(&img).unwrap();
    let read = card::read_results(&img).unwrap();
    assert_eq!(read.text, text);
    assert_eq!(read.source, format!("{} p2 (BBRESULTS)", img.display()));
    assert!(
        before == std::fs::read(&img).unwrap(),
        "the image was written to"
    );

    let mut f = File::open(&img).unwrap();
    let parts = card::partitions(&mut f).unwrap();
    assert_eq!(
        parts[1],
        Partition {
            number: 2,
            mbr_type: 0x0c,
            offset: 9 * MIB,
            len: 4 * MIB
        }
    );
    assert_eq!(
        card::read_fat_file(&mut f, &parts[0], "results.json").unwrap(),
        decoy().into_bytes()
    );
    assert_eq!(
        card::fat_label(&mut f, &parts[0]).unwrap().as_deref(),
        Some("BOOT")
    );
}

#[test]
fn the_label_wins_over_the_position() {
    let dir = tempfile::tempdir().unwrap();
    let text = results_text();
    let img = image(
        dir.path(),
        &[
            fat(1, 4, Some("BOOT"), vec![]),
            fat(5, 4, Some("OTHER"), vec![("results.json", decoy())]),
            fat(
                9,
                4,
                Some("BBRESULTS"),
                vec![("results.json", text.clone())],
            ),
        ],
        &[],
    );
    let read = card::read_results(&img).unwrap();
    assert_eq!(read.text, text);
    assert!(read.source.ends_with(" p3 (BBRESULTS)"), "{}", read.source);
}

#[test]
fn an_unlabelled_p2_is_the_results_partition() {
    let dir = tempfile::tempdir().unwrap();
    let text = results_text();
    let img = image(
        dir.path(),
        &[
            fat(1, 4, Some("BOOT"), vec![]),
            fat(5, 4, None, vec![("results.json", text.clone())]),
        ],
        &[],
    );
    let read = card::read_results(&img).unwrap();
    assert_eq!(read.text, text);
    assert_eq!(read.source, format!("{} p2", img.display()));
}

#[test]
fn a_labelled_logical_partition_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let text = results_text();
    let raw = P {
        sys: 0x83,
        start_mib: 5,
        mib: 4,
        label: None,
        files: vec![],
    };
    let img = image(
        dir.path(),
        &[fat(1, 4, Some("BOOT"), vec![]), raw],
        &[fat(
            11,
            4,
            Some("BBRESULTS"),
            vec![("results.json", text.clone())],
        )],
    );
    let read = card::read_results(&img).unwrap();
    assert_eq!(read.text, text);
    assert!(read.source.ends_with(" p5 (BBRESULTS)"), "{}", read.source);
}

#[test]
fn a_partition_device_holding_fat_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let text = results_text();
    let img = dir.path().join("sdb2.img");
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&img)
        .unwrap();
    f.set_len(4 * MIB).unwrap();
    put_fat(
        &f,
        0,
        4 * MIB,
        Some("BBRESULTS"),
        &[("results.json", text.clone())],
    );
    let read = card::read_results(&img).unwrap();
    assert_eq!(read.text, text);
    assert_eq!(read.source, format!("{} (BBRESULTS)", img.display()));
}

#[test]
fn errors_name_the_card_and_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    // Results partition there, results.json not yet.
    let img = image(
        dir.path(),
        &[
            fat(1, 4, Some("BOOT"), vec![]),
            fat(5, 4, Some("BBRESULTS"), vec![]),
        ],
        &[],
    );
    let err = format!("{:#}", card::read_results(&img).unwrap_err());
    assert!(
        err.contains(&format!(
            "{} p2 (BBRESULTS) has no results.json",
            img.display()
        )),
        "{err}"
    );
    assert!(err.contains("boot the card"), "{err}");

    // Not a card at all.
    let zeros = dir.path().join("zeros.img");
    File::create(&zeros).unwrap().set_len(MIB).unwrap();
    let err = format!("{:#}", card::read_results(&zeros).unwrap_err());
    assert!(err.contains(&zeros.display().to_string()), "{err}");
    assert!(err.contains("no MBR partition table"), "{err}");

    // Partitions, none of them a results partition: they are listed.
    let raw = P {
        sys: 0x83,
        start_mib: 5,
        mib: 4,
        label: None,
        files: vec![],
    };
    let img = image(dir.path(), &[fat(1, 4, Some("BOOT"), vec![]), raw], &[]);
    let err = format!("{:#}", card::read_results(&img).unwrap_err());
    assert!(
        err.contains("p1 type 0x0c, label BOOT; p2 type 0x83"),
        "{err}"
    );

    let missing = dir.path().join("nothing-here");
    let err = format!("{:#}", card::read_results(&missing).unwrap_err());
    assert!(
        err.contains("nothing-here") && err.contains("lsblk"),
        "{err}"
    );
}

#[test]
fn a_mounted_folder_and_a_bare_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = results_text();
    let mnt = dir.path().join("BBRESULTS");
    std::fs::create_dir(&mnt).unwrap();
    let err = format!("{:#}", card::read_results(&mnt).unwrap_err());
    assert!(
        err.contains(&mnt.join("results.json").display().to_string()),
        "{err}"
    );

    std::fs::write(mnt.join("results.json"), &text).unwrap();
    let read = card::read_results(&mnt).unwrap();
    assert_eq!(read.text, text);
    assert_eq!(read.source, mnt.join("results.json").display().to_string());

    let read = card::read_results(&mnt.join("results.json")).unwrap();
    assert_eq!(read.text, text);
}

#[test]
fn collect_from_card_into_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let text = results_text();
    let img = image(
        dir.path(),
        &[
            fat(1, 4, Some("BOOT"), vec![]),
            fat(
                5,
                4,
                Some("BBRESULTS"),
                vec![("results.json", text.clone())],
            ),
        ],
        &[],
    );
    let store = dir.path().join("store");
    let opts = collect::Options {
        addr: None,
        from_card: Some(img.clone()),
        from_log: None,
        run: None,
        token: None,
        lava_check: true,
        store: Some(store.clone()),
        timeout: std::time::Duration::from_secs(1),
        progress: false,
    };
    let c = collect::collect(&opts).unwrap();
    assert_eq!(c.outcome, Outcome::Inserted);
    assert_eq!(c.row.source, format!("{} p2 (BBRESULTS)", img.display()));
    assert_eq!(std::fs::read_to_string(&c.row.json_path).unwrap(), text);
    assert_eq!(c.db, store.join("benchboot.db"));
    let s = collect::summary(&c);
    assert!(
        s.contains(&format!("stored in {}", c.row.json_path.display())),
        "{s}"
    );

    // Collected again: the same row, updated.
    let again = collect::collect(&opts).unwrap();
    assert_eq!(again.outcome, Outcome::Updated);
    assert_eq!(
        collect::runs(Some(&store), false)
            .unwrap()
            .matches(&c.results.run_id)
            .count(),
        1
    );
}

/// `collect`'s lines about earlier boots: as many as `expected`, each containing its text.
fn assert_earlier(earlier: &[String], expected: &[&str]) {
    assert_eq!(earlier.len(), expected.len(), "{earlier:?}");
    for (line, want) in earlier.iter().zip(expected) {
        // Paths as Windows writes them too.
        let line = line.replace('\\', "/");
        assert!(line.contains(want), "{want:?} not in {earlier:?}");
    }
}

/// A card that booted three times: the earlier two documents kept under `runs/` (one
/// partial), one not a document; `collect --from-card` stores the current one and the
/// readable earlier ones, and says what it did with each.
#[test]
fn collect_from_card_keeps_the_earlier_boots() {
    let dir = tempfile::tempdir().unwrap();
    let doc = |id: &str, complete: bool| {
        let mut r = benchboot_results::RunResults::new(
            id.into(),
            benchboot_plan::Plan::example(),
            benchboot_results::SystemInfo::default(),
        );
        r.complete = complete;
        r.to_json()
    };
    let img = image(
        dir.path(),
        &[
            fat(1, 4, Some("BOOT"), vec![]),
            fat(
                5,
                4,
                Some("BBRESULTS"),
                vec![
                    ("results.json", doc("rpi-zero-w-3333", true)),
                    ("runs/rpi-zero-w-1111.json", doc("rpi-zero-w-1111", false)),
                    ("runs/rpi-zero-w-2222.json", doc("rpi-zero-w-2222", true)),
                    // A copy of the current run: not stored over the live document.
                    ("runs/rpi-zero-w-3333.json", doc("rpi-zero-w-3333", true)),
                    ("runs/unreadable.json", "{\"run_".into()),
                    ("runs/rpi-zero-w-2222.defmt", "\u{0}\u{ff}".into()),
                ],
            ),
        ],
        &[],
    );
    let kept = card::read_kept_runs(&img).unwrap();
    let names: Vec<&str> = kept
        .iter()
        .map(|k| k.source.rsplit(' ').next().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "runs/rpi-zero-w-1111.json",
            "runs/rpi-zero-w-2222.json",
            "runs/rpi-zero-w-3333.json",
            "runs/unreadable.json"
        ]
    );
    let store = dir.path().join("store");
    let c = collect::collect(&crate::from_card(&img, &store)).unwrap();
    assert_eq!(c.results.run_id, "rpi-zero-w-3333");
    assert_eq!(c.outcome, Outcome::Inserted);
    assert_earlier(
        &c.earlier,
        &[
            "runs/rpi-zero-w-1111.json: partial run rpi-zero-w-1111: stored",
            "complete run rpi-zero-w-2222",
            "runs/rpi-zero-w-3333.json: run rpi-zero-w-3333 is the current run",
            "runs/unreadable.json: not a results document",
        ],
    );
    let runs = collect::runs(Some(&store), false).unwrap();
    for id in ["rpi-zero-w-1111", "rpi-zero-w-2222", "rpi-zero-w-3333"] {
        assert!(runs.contains(id), "{runs}");
    }
    // A card that booted once has no runs/ folder: nothing earlier.
    let once_dir = dir.path().join("once");
    std::fs::create_dir_all(&once_dir).unwrap();
    let once = image(
        &once_dir,
        &[
            fat(1, 4, Some("BOOT"), vec![]),
            fat(
                5,
                4,
                Some("BBRESULTS"),
                vec![("results.json", doc("x", true))],
            ),
        ],
        &[],
    );
    assert!(card::read_kept_runs(&once).unwrap().is_empty());
}

/// Makes the folder `name` (an 8.3 name, upper case) of the root of the FAT12/16 at
/// `offset` of `img` loop: its first cluster's FAT entry points at itself and the
/// cluster's free slots become deleted entries, so it has no end marker. fatfs walks
/// such a folder for ever.
fn loop_folder(img: &Path, offset: u64, name: &str) {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = OpenOptions::new().read(true).write(true).open(img).unwrap();
    let mut bs = [0u8; 512];
    f.seek(SeekFrom::Start(offset)).unwrap();
    f.read_exact(&mut bs).unwrap();
    let u16_at = |i: usize| u64::from(u16::from_le_bytes([bs[i], bs[i + 1]]));
    let u32_at = |i: usize| u64::from(u32::from_le_bytes(bs[i..i + 4].try_into().unwrap()));
    let (bps, spc, reserved, fats) = (u16_at(11), u64::from(bs[13]), u16_at(14), u64::from(bs[16]));
    let (root_entries, fat_sectors) = (u16_at(17), u16_at(22));
    assert!(fat_sectors > 0, "FAT12/16 expected");
    let total = if u16_at(19) != 0 {
        u16_at(19)
    } else {
        u32_at(32)
    };
    let root_sectors = (root_entries * 32).div_ceil(bps);
    let root = reserved + fats * fat_sectors;
    let data = root + root_sectors;
    let fat12 = (total - data) / spc < 4085;
    let mut dir = vec![0u8; (root_entries * 32) as usize];
    f.seek(SeekFrom::Start(offset + root * bps)).unwrap();
    f.read_exact(&mut dir).unwrap();
    let short = format!("{name:<11}");
    let entry = dir
        .chunks(32)
        .find(|e| &e[..11] == short.as_bytes())
        .expect("folder in the root");
    let cluster = u64::from(u16::from_le_bytes([entry[26], entry[27]]));
    for copy in 0..fats {
        let fat = offset + (reserved + copy * fat_sectors) * bps;
        if fat12 {
            let at = fat + cluster + cluster / 2;
            let mut b = [0u8; 2];
            f.seek(SeekFrom::Start(at)).unwrap();
            f.read_exact(&mut b).unwrap();
            let mut v = u16::from_le_bytes(b);
            v = if cluster % 2 == 0 {
                (v & 0xf000) | cluster as u16
            } else {
                (v & 0x000f) | ((cluster as u16) << 4)
            };
            f.seek(SeekFrom::Start(at)).unwrap();
            f.write_all(&v.to_le_bytes()).unwrap();
        } else {
            f.seek(SeekFrom::Start(fat + cluster * 2)).unwrap();
            f.write_all(&(cluster as u16).to_le_bytes()).unwrap();
        }
    }
    let at = offset + (data + (cluster - 2) * spc) * bps;
    let mut c = vec![0u8; (spc * bps) as usize];
    f.seek(SeekFrom::Start(at)).unwrap();
    f.read_exact(&mut c).unwrap();
    for slot in c.chunks_mut(32).filter(|e| e[0] == 0) {
        slot[0] = 0xe5;
    }
    f.seek(SeekFrom::Start(at)).unwrap();
    f.write_all(&c).unwrap();
    f.sync_all().unwrap();
}

/// Earlier boots' documents that cannot be read are a line each; the current run and
/// the readable earlier ones are stored all the same, and a folder whose cluster chain
/// loops ends in an error instead of a hang.
#[test]
fn unreadable_earlier_boots_are_lines_not_failures() {
    let dir = tempfile::tempdir().unwrap();
    let doc = |id: &str| {
        benchboot_results::RunResults::new(
            id.into(),
            benchboot_plan::Plan::example(),
            benchboot_results::SystemInfo::default(),
        )
        .to_json()
    };
    let collect = |from: &Path, store: &str| {
        collect::collect(&crate::from_card(from, &dir.path().join(store))).unwrap()
    };
    // A mounted folder: a file that is not UTF-8, an empty one, a folder named *.json.
    let folder = dir.path().join("mounted");
    std::fs::create_dir_all(folder.join("runs/x.json")).unwrap();
    std::fs::write(folder.join("results.json"), doc("now")).unwrap();
    std::fs::write(folder.join("runs/a.json"), doc("before")).unwrap();
    std::fs::write(folder.join("runs/b.json"), b"\xff\xfe{").unwrap();
    std::fs::write(folder.join("runs/c.json"), b"").unwrap();
    let c = collect(&folder, "s1");
    assert_eq!(c.results.run_id, "now");
    assert_earlier(
        &c.earlier,
        &[
            "runs/a.json: partial run before",
            "runs/b.json is not UTF-8 text",
            "runs/c.json is empty",
        ],
    );
    // `runs` a plain file: one line.
    std::fs::remove_dir_all(folder.join("runs")).unwrap();
    std::fs::write(folder.join("runs"), "x").unwrap();
    let c = collect(&folder, "s2");
    assert_earlier(&c.earlier, &["runs: not read"]);
    // A bare results document has no earlier boots (it is not read as a disk).
    let bare = dir.path().join("bare.json");
    std::fs::write(&bare, doc("bare")).unwrap();
    let c = collect(&bare, "s3");
    assert_eq!((c.results.run_id.as_str(), c.earlier.len()), ("bare", 0));
    // A card whose runs/ folder loops.
    let img = image(
        dir.path(),
        &[
            fat(1, 4, Some("BOOT"), vec![]),
            fat(
                5,
                4,
                Some("BBRESULTS"),
                vec![("results.json", doc("card")), ("runs/old.json", doc("old"))],
            ),
        ],
        &[],
    );
    loop_folder(&img, 5 * MIB, "RUNS");
    let started = std::time::Instant::now();
    let c = collect(&img, "s4");
    assert_eq!(c.results.run_id, "card");
    assert_earlier(&c.earlier, &["runs/: not read"]);
    assert!(
        c.earlier[0].contains("cluster chain loops"),
        "{:?}",
        c.earlier
    );
    eprintln!("looping folder refused after {:?}", started.elapsed());
    assert!(collect::runs(Some(&dir.path().join("s4")), false)
        .unwrap()
        .contains("card"));
}

#[test]
fn cli_collect_from_card_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let text = results_text();
    let img = image(
        dir.path(),
        &[
            fat(1, 4, Some("BOOT"), vec![]),
            fat(
                5,
                4,
                Some("BBRESULTS"),
                vec![("results.json", text.clone())],
            ),
        ],
        &[],
    );
    let store = dir.path().join("store");
    let bin = env!("CARGO_BIN_EXE_benchboot");
    let out = std::process::Command::new(bin)
        .args(["collect", "--json", "--from-card"])
        .arg(&img)
        .arg("--store")
        .arg(&store)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let run_id = benchboot_results::RunResults::from_json(&text)
        .unwrap()
        .run_id;
    assert_eq!(v["run_id"], run_id.as_str());
    assert_eq!(v["outcome"], "inserted");
    let json_path = v["json_path"].as_str().unwrap();
    assert_eq!(std::fs::read_to_string(json_path).unwrap(), text);

    let out = std::process::Command::new(bin)
        .args(["runs", "--json", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["run_id"], run_id.as_str());

    let out = std::process::Command::new(bin)
        .args(["runs", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains(&run_id), "{table}");
}

/// A raw Windows disk takes whole sectors only (`collect --from-card \\.\PhysicalDrive2`
/// reads it through `benchboot_sector::SectorReader`): the card reader gives the same
/// document, earlier boots and journal runs through the test double that refuses
/// anything else, at 512- and 4096-byte sectors.
#[test]
fn a_card_read_in_whole_sectors_only_gives_the_same_runs() {
    use benchboot_sector::{SectorReader, Sectors, Strict};
    let dir = tempfile::tempdir().unwrap();
    let text = results_text();
    let img = image(
        dir.path(),
        &[
            fat(1, 4, Some("BOOT"), vec![]),
            fat(
                5,
                4,
                Some("BBRESULTS"),
                vec![
                    ("results.json", text.clone()),
                    ("runs/rpi-zero-w-1111.json", decoy()),
                ],
            ),
        ],
        &[],
    );
    let len = std::fs::metadata(&img).unwrap().len();
    for sector in [512, 4096] {
        let raw = || {
            SectorReader::new(
                Sectors::new(Strict::new(File::open(&img).unwrap(), sector), sector),
                len,
            )
        };
        let mut disk = raw();
        let read = card::read_results_from(&mut disk, &img).unwrap();
        assert_eq!(read.text, text);
        assert_eq!(read.source, format!("{} p2 (BBRESULTS)", img.display()));
        let strict = disk.into_inner().into_inner();
        assert_eq!(strict.refused, 0);
        assert!(strict.passed > 3, "{}", strict.passed);
        let kept = card::read_kept_runs_from(&mut raw(), &img).unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].text.as_ref().unwrap(), &decoy());
        assert!(card::read_journal_runs_from(&mut raw(), &img)
            .unwrap()
            .is_empty());
    }
}

/// A card whose `results.json` points into the FAT's reserved clusters: `collect` says
/// the filesystem is damaged, with no panic message before it (fatfs subtracts
/// unchecked there; the panic is caught, and the host prints nothing of it).
#[test]
fn a_damaged_fat_is_one_error_line_not_a_panic_message() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(
        dir.path(),
        &[
            fat(1, 4, Some("BOOT"), vec![]),
            fat(
                5,
                4,
                Some("BBRESULTS"),
                vec![("results.json", results_text())],
            ),
        ],
        &[],
    );
    // The 8.3 entry of `results.json` in p2: its first cluster (low word at +26) set
    // to 1, a reserved cluster.
    let mut d = std::fs::read(&img).unwrap();
    let p2 = (5 * MIB) as usize;
    let at = p2
        + d[p2..]
            .windows(11)
            .position(|w| w.starts_with(b"RESULT~1"))
            .expect("the short name of results.json");
    d[at + 26..at + 28].copy_from_slice(&1u16.to_le_bytes());
    std::fs::write(&img, &d).unwrap();
    let store = dir.path().join("store");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_benchboot"))
        .args(["collect", "--from-card"])
        .arg(&img)
        .arg("--store")
        .arg(&store)
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "error: reading results.json from {} p2 (BBRESULTS): the FAT filesystem is \
             damaged (a file or folder points into its reserved clusters); check it with \
             fsck.vfat -n",
            img.display()
        )
    );
}
