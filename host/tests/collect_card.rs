//! Reading results from a card: generated MBR + FAT images (results partition found by
//! label, by position, as a logical partition, as a whole-disk FAT), a mounted folder,
//! a bare JSON file; and `benchboot collect --from-card` into a store.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use benchboot::card::{self, Partition};
use benchboot::collect;
use benchboot::store::Outcome;

const MIB: u64 = 1 << 20;
const DISK_MIB: u64 = 24;

/// A real results document when there is one, else a generated one.
fn results_text() -> String {
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
struct P<'a> {
    sys: u8,
    start_mib: u64,
    mib: u64,
    label: Option<&'a str>,
    files: Vec<(&'a str, String)>,
}

fn fat(
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
fn image(dir: &Path, primary: &[P], logical: &[P]) -> PathBuf {
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
            "runs/unreadable.json"
        ]
    );
    let store = dir.path().join("store");
    let c = collect::collect(&collect::Options {
        addr: None,
        from_card: Some(img.clone()),
        store: Some(store.clone()),
        timeout: std::time::Duration::from_secs(1),
        progress: false,
    })
    .unwrap();
    assert_eq!(c.results.run_id, "rpi-zero-w-3333");
    assert_eq!(c.earlier.len(), 3, "{:?}", c.earlier);
    assert!(
        c.earlier[0].ends_with("runs/rpi-zero-w-1111.json: partial run rpi-zero-w-1111 (Inserted)"),
        "{:?}",
        c.earlier
    );
    assert!(
        c.earlier[1].contains("complete run rpi-zero-w-2222"),
        "{:?}",
        c.earlier
    );
    assert!(
        c.earlier[2].contains("runs/unreadable.json: not a results document"),
        "{:?}",
        c.earlier
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
