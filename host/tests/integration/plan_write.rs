//! `benchboot plan write`: a new plan onto a card (an image file with its FAT results
//! partition, or the partition mounted as a folder), checked against the card's own
//! image facts first; a refused plan leaves the card as it was.

use std::path::Path;

use benchboot::plan::{describe, resolve_for_board, write};
use benchboot_image::plans::PlanText;
use benchboot_plan::{CARD_FACTS_FILE, CARD_PLAN_FILE};

use crate::collect_card::{fat, image};

/// The image facts of a qemu-virt-arm64 card, as `cargo xtask image` writes them.
fn facts(board: &str) -> String {
    let b = benchboot_board::load(&benchboot_board::boards_dir(), board).unwrap();
    let layout = benchboot_image::layout::plan(&Default::default()).unwrap();
    serde_json::to_string(&benchboot_image::plans::image_facts(&b, &layout)).unwrap()
}

pub(crate) fn card(dir: &Path, board: &str) -> std::path::PathBuf {
    let files = vec![
        (CARD_FACTS_FILE, facts(board)),
        (CARD_PLAN_FILE, "# the old plan\n".to_owned()),
    ];
    image(
        dir,
        &[
            fat(1, 4, Some("BOOT"), vec![]),
            fat(6, 8, Some("BBRESULTS"), files),
        ],
        &[],
    )
}

pub(crate) fn card_plan(path: &Path) -> String {
    let mut f = std::fs::File::open(path).unwrap();
    let (part, _) = benchboot_card::find_results_partition(&mut f).unwrap();
    String::from_utf8(benchboot_card::read_fat_file(&f, &part, CARD_PLAN_FILE).unwrap()).unwrap()
}

fn user(text: &str) -> PlanText {
    PlanText {
        file: "my.toml".into(),
        text: text.into(),
    }
}

#[test]
fn a_plan_goes_onto_a_card_image_and_a_bad_one_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let path = card(dir.path(), "qemu-virt-arm64");
    let quick = PlanText::from_arg("quick").unwrap();
    let said = write(&path, &quick).unwrap();
    assert!(
        said.contains("qemu-virt-arm64") && said.contains("quick v3"),
        "{said}"
    );
    assert_eq!(card_plan(&path), quick.text);
    // Written twice (plan.toml exists): replaced, not appended, no `.new` left behind.
    let mine = user("extends = \"quick\"\n[storage]\ncard = [\"ext4\"]\n");
    write(&path, &mine).unwrap();
    assert_eq!(card_plan(&path), mine.text);
    let mut f = std::fs::File::open(&path).unwrap();
    let (part, _) = benchboot_card::find_results_partition(&mut f).unwrap();
    assert!(benchboot_card::read_fat_file(&f, &part, "plan.toml.new").is_err());

    // The card's own facts decide: virt has a virtio bus, no SATA.
    let sata = user("[[storage.disk]]\nlabel = \"ssd\"\nwhole-disk = \"sata\"\ndestroy = true\n");
    let e = format!("{:#}", write(&path, &sata).unwrap_err());
    assert!(e.contains("my.toml:3: storage.disk[0].whole-disk"), "{e}");
    assert!(
        e.contains("has no sata bus (its disk buses: virtio, usb)"),
        "{e}"
    );
    assert_eq!(
        card_plan(&path),
        mine.text,
        "a refused plan changes nothing"
    );
    let virtio =
        user("[[storage.disk]]\nlabel = \"vdb\"\nwhole-disk = \"virtio\"\ndestroy = true\n");
    write(&path, &virtio).unwrap();
}

#[test]
fn a_full_results_partition_is_named_with_the_fix_and_left_as_it_was() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = card(dir.path(), "qemu-virt-arm64");
    // Fill BBRESULTS to the last cluster, as runs/ does on a small card.
    {
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let (part, _) = benchboot_card::find_results_partition(&mut f).unwrap();
        let slice =
            fscommon::StreamSlice::new(&mut f, part.offset, part.offset + part.len).unwrap();
        let fs = fatfs::FileSystem::new(slice, fatfs::FsOptions::new()).unwrap();
        let mut filler = fs.root_dir().create_file("filler").unwrap();
        let chunk = vec![0xA5u8; 4096];
        while filler.write_all(&chunk).is_ok() {}
        drop(filler);
        assert_eq!(
            fs.stats().unwrap().free_clusters(),
            0,
            "the partition is full"
        );
        fs.unmount().unwrap();
    }
    let quick = PlanText::from_arg("quick").unwrap();
    let e = format!("{:#}", write(&path, &quick).unwrap_err());
    assert_eq!(
        e,
        format!(
            "the card's results partition (BBRESULTS) is full (No space left on device): the \
             plan file needs {} B, 0 B free; copy the runs off it (`benchboot collect \
             --from-card`), delete its runs/ folder's old documents and write the plan again. \
             Nothing was changed.",
            quick.text.len()
        )
    );
    assert_eq!(card_plan(&path), "# the old plan\n", "the old plan stays");
    let mut f = std::fs::File::open(&path).unwrap();
    let (part, _) = benchboot_card::find_results_partition(&mut f).unwrap();
    let left = benchboot_card::read_fat_file(&f, &part, "plan.toml.new");
    assert!(left.is_err(), "no plan.toml.new left behind: {left:?}");
}

#[test]
fn plan_check_and_plan_write_print_the_warnings() {
    let b = benchboot_board::load(&benchboot_board::boards_dir(), "rpi-zero-w").unwrap();
    let slip = user(
        "extends = \"quick\"\n[storage]\nbyte-cap = \"4 KiB\"\nblock-sizes = [\"4 KiB\", \"1 MiB\"]\ntime-cap = \"20 min\"\nrepetitions = 10\n",
    );
    let text = describe(&resolve_for_board(&b, &slip).unwrap(), &b.description);
    let warnings: Vec<&str> = text.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(
        warnings,
        [
            "  warning: my.toml:5: storage.time-cap: the time caps allow up to 80 h 14 min in \
             total (over 24 h); is that meant?",
            "  warning: my.toml:3: storage.byte-cap: 4 KiB is below the largest block size, \
             1 MiB: a cell of a larger block moves one block, past the cap (one call: no \
             sustained rate)",
        ],
        "{text}"
    );
    // plan write says them too, after what it wrote.
    let dir = tempfile::tempdir().unwrap();
    let path = card(dir.path(), "qemu-virt-arm64");
    let said = write(&path, &slip).unwrap();
    assert!(
        said.contains("\nwarning: my.toml:3: storage.byte-cap: 4 KiB is below"),
        "{said}"
    );
}

#[test]
fn a_plan_goes_into_a_mounted_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(CARD_FACTS_FILE), facts("rpi-zero-w")).unwrap();
    let seeds = PlanText::from_arg("seeds").unwrap();
    write(dir.path(), &seeds).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join(CARD_PLAN_FILE)).unwrap(),
        seeds.text
    );
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "no temp file left: {names:?}");
}

#[test]
fn a_folder_that_is_no_benchboot_card_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let e = format!(
        "{:#}",
        write(dir.path(), &PlanText::standard()).unwrap_err()
    );
    assert!(
        e.contains("no image.json") && e.contains("cargo xtask image"),
        "{e}"
    );
    assert!(!dir.path().join(CARD_PLAN_FILE).exists());
}

#[test]
fn plan_check_prints_every_step_with_its_bound() {
    let b = benchboot_board::load(&benchboot_board::boards_dir(), "rpi-zero-w").unwrap();
    let p = resolve_for_board(&b, &PlanText::from_arg("seeds").unwrap()).unwrap();
    let text = describe(&p, &b.description);
    assert!(
        text.starts_with("plan seeds v2 for rpi-zero-w (Raspberry Pi Zero W)\n"),
        "{text}"
    );
    // 9 targets x 2 modes x 18 sizes x 3 reps x 2 directions x 10 s = 19440 s.
    assert!(
        text.contains("9 targets (ext2, ext3, ext4, vfat, raw, disk-ext2"),
        "{text}"
    );
    assert!(
        text.contains("x 2 modes x 18 sizes (8 B .. 1 MiB) x 3 reps, <= 64 MiB or 10 s"),
        "{text}"
    );
    assert!(
        text.contains("10 s per cell and direction (write, read): at most 5 h 24 min"),
        "{text}"
    );
    // + the memory step's bound (MemoryPlan::HARDWARE: 6 min 56 s) + the energy marks
    // (two 13 s sync patterns, 30 s idle with radios off: 56 s).
    assert!(
        text.contains(
            "sync pattern 1111100110101 at the start and the end, 1 s slots; idle 30 s with \
             radios off: at most 56 s"
        ),
        "{text}"
    );
    assert!(text.contains("total: at most 5 h 31 min"), "{text}");
    assert!(text.contains("optional targets"), "{text}");
    assert!(
        text.contains(
            "on the board every target is checked by device number before anything is \
             written (LABEL=, PARTLABEL= and BUS= names too): never the boot card"
        ),
        "{text}"
    );
}

#[test]
fn the_presets_look_for_the_labels_prepare_disk_writes() {
    let b = benchboot_board::load(&benchboot_board::boards_dir(), "rpi-2b").unwrap();
    let p = resolve_for_board(&b, &PlanText::standard()).unwrap();
    let wanted: Vec<String> = p
        .storage
        .targets
        .iter()
        .filter(|t| t.optional)
        .map(|t| t.device.clone())
        .collect();
    let made: Vec<String> = benchboot_card::disk_labels::ALL
        .iter()
        .map(|l| format!("LABEL={l}"))
        .collect();
    assert_eq!(wanted, made);
}

#[test]
fn the_plan_example_in_docs_is_a_valid_plan() {
    let readme = include_str!("../../../docs/plans.md");
    let plans = readme
        .split("# Plans")
        .nth(1)
        .expect("docs/plans.md has a Plans heading");
    let text = plans
        .split("```toml\n")
        .nth(1)
        .and_then(|t| t.split("```").next())
        .expect("a toml block in the Plans section");
    let b = benchboot_board::load(&benchboot_board::boards_dir(), "rpi-2b").unwrap();
    let p = resolve_for_board(&b, &user(text)).unwrap_or_else(|e| panic!("{e:#}"));
    let labels: Vec<&str> = p.storage.targets.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(labels, ["ext4", "raw", "ssd-ext4", "ssd-raw"]);
    assert_eq!(p.storage.targets[3].device, "BUS=usb");
    assert_eq!(
        p.storage.random.as_ref().unwrap().targets,
        ["raw", "ssd-ext4"]
    );
    assert_eq!(p.commands[0].time_limit_ms, 300_000);
    let check = describe(&p, &b.description);
    assert!(
        check.contains("4 targets (ext4, raw, ssd-ext4, ssd-raw) x 2 modes x 4 sizes"),
        "{check}"
    );
}
