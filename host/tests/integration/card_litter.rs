//! Cards touched by a Mac (or Windows, or a Linux desktop): the litter they leave in the
//! results partition (`._*` AppleDouble files, `.DS_Store`, `.fseventsd`, ...) is not
//! read as earlier boots, on a card image and on a mounted folder.

use std::path::Path;

use benchboot::collect;
use benchboot_card as card;

use crate::collect_card::{fat, image};

/// The start of an AppleDouble file as macOS writes `._<name>` on FAT: magic
/// 0x00051607, version 0x00020000, filler "Mac OS X        ", 2 entries.
fn apple_double() -> String {
    let mut s = String::from("\u{0}\u{5}\u{16}\u{7}\u{0}\u{2}\u{0}\u{0}Mac OS X        ");
    s.push_str("\u{0}\u{2}\u{0}\u{0}\u{0}\u{9}\u{0}\u{0}\u{0}\u{32}");
    s
}

fn doc(id: &str) -> String {
    benchboot_results::RunResults::new(
        id.into(),
        benchboot_plan::Plan::example(),
        benchboot_results::SystemInfo::default(),
    )
    .to_json()
}

fn collect_from(from: &Path, store: &Path) -> collect::Collected {
    collect::collect(&crate::from_card(from, store)).unwrap()
}

/// The card's one earlier boot, stored; nothing else said about `runs/`.
fn assert_only_the_real_run(c: &collect::Collected, store: &Path) {
    assert_eq!(c.results.run_id, "rpi-zero-w-2222");
    assert_eq!(c.earlier.len(), 1, "{:?}", c.earlier);
    let line = c.earlier[0].replace('\\', "/");
    assert!(line.contains("runs/rpi-zero-w-1111.json"), "{line}");
    assert!(!line.contains("._"), "{line}");
    let runs = collect::runs(Some(store), false).unwrap();
    assert!(runs.contains("rpi-zero-w-1111"), "{runs}");
    assert!(!runs.contains("._"), "{runs}");
}

#[test]
fn apple_double_files_on_a_card_image_are_not_earlier_runs() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(
        dir.path(),
        &[
            fat(1, 4, Some("BOOT"), vec![]),
            fat(
                5,
                4,
                Some("BBRESULTS"),
                vec![
                    ("results.json", doc("rpi-zero-w-2222")),
                    ("._results.json", apple_double()),
                    ("runs/rpi-zero-w-1111.json", doc("rpi-zero-w-1111")),
                    ("runs/._rpi-zero-w-1111.json", apple_double()),
                    ("runs/.DS_Store", "\u{0}\u{0}\u{0}\u{1}Bud1".into()),
                    ("runs/._.DS_Store", apple_double()),
                    (".fseventsd/fseventsd-uuid", "x".into()),
                    (".Trashes/._x.json", apple_double()),
                ],
            ),
        ],
        &[],
    );
    let kept = card::read_kept_runs(&img).unwrap();
    let sources: Vec<&str> = kept.iter().map(|k| k.source.as_str()).collect();
    assert_eq!(kept.len(), 1, "{sources:?}");
    assert!(
        sources[0].ends_with("runs/rpi-zero-w-1111.json"),
        "{sources:?}"
    );
    assert!(kept[0].text.is_ok());
    assert_only_the_real_run(
        &collect_from(&img, &dir.path().join("store")),
        &dir.path().join("store"),
    );
}

#[test]
fn apple_double_files_in_a_mounted_results_folder_are_not_earlier_runs() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("BBRESULTS");
    for sub in ["runs/.Spotlight-V100", ".fseventsd", "runs/.Trash-1000"] {
        std::fs::create_dir_all(folder.join(sub)).unwrap();
    }
    std::fs::write(folder.join("results.json"), doc("rpi-zero-w-2222")).unwrap();
    std::fs::write(folder.join("._results.json"), apple_double()).unwrap();
    std::fs::write(
        folder.join("runs/rpi-zero-w-1111.json"),
        doc("rpi-zero-w-1111"),
    )
    .unwrap();
    std::fs::write(folder.join("runs/._rpi-zero-w-1111.json"), apple_double()).unwrap();
    std::fs::write(folder.join("runs/.DS_Store"), b"\0\0\0\x01Bud1").unwrap();
    let store = dir.path().join("store");
    assert_only_the_real_run(&collect_from(&folder, &store), &store);
}
