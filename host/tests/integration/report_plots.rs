//! Plots of `report` and `compare` rendered into a temporary folder: every file non-empty,
//! PNGs with the PNG signature, SVGs with an `<svg` root; emulated runs say so in the plot.

use std::path::PathBuf;

use benchboot::compare::{compare, output::compare_plots};
use benchboot::plot::report_plots;
use benchboot::reference;
use benchboot::report::load_run;

const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

fn check(files: &[PathBuf]) {
    assert!(!files.is_empty());
    for f in files {
        let bytes = std::fs::read(f).unwrap();
        assert!(!bytes.is_empty(), "{}", f.display());
        match f.extension().and_then(|e| e.to_str()) {
            Some("png") => assert_eq!(bytes[..8], PNG_SIGNATURE, "{}", f.display()),
            Some("svg") => {
                let text = String::from_utf8(bytes).unwrap();
                assert!(text.trim_start().starts_with("<svg"), "{}", f.display());
                assert!(text.trim_end().ends_with("</svg>"), "{}", f.display());
            }
            other => panic!("unexpected plot file {other:?}"),
        }
    }
}

#[test]
fn report_plots_storage_and_network() {
    let dir = tempfile::tempdir().unwrap();
    let (_, r) = load_run("tests/data/qemu-virt-arm64-qemu.json").unwrap();
    let files = report_plots(&r, dir.path()).unwrap();
    check(&files);
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for expect in [
        "qemu-virt-arm64-18896690b97f-storage-sync-write.png",
        "qemu-virt-arm64-18896690b97f-storage-direct-read.svg",
        "qemu-virt-arm64-18896690b97f-net-ncm.png",
        "qemu-virt-arm64-18896690b97f-net-rndis.svg",
    ] {
        assert!(
            names.iter().any(|n| n == expect),
            "{expect} not in {names:?}"
        );
    }
    // 2 modes × 2 directions + 3 links, each as PNG and SVG.
    assert_eq!(files.len(), 14);
    let svg = std::fs::read_to_string(
        dir.path()
            .join("qemu-virt-arm64-18896690b97f-storage-sync-write.svg"),
    )
    .unwrap();
    assert!(svg.contains("EMULATED (QEMU"), "the title marks emulation");
    assert!(
        svg.contains("4 KiB") && svg.contains("MiB/s"),
        "axis labels are text"
    );
}

#[test]
fn hardware_run_plots_do_not_say_emulated() {
    let dir = tempfile::tempdir().unwrap();
    let (_, r) = load_run("tests/data/handmade-a.json").unwrap();
    let files = report_plots(&r, dir.path()).unwrap();
    check(&files);
    for f in files.iter().filter(|f| f.extension().unwrap() == "svg") {
        assert!(!std::fs::read_to_string(f).unwrap().contains("EMULATED"));
    }
}

#[test]
fn compare_plots_overlay_runs_and_a_reference() {
    let dir = tempfile::tempdir().unwrap();
    let runs = vec![
        load_run("tests/data/rpi-zero-w-qemu.json").unwrap(),
        load_run("tests/data/qemu-virt-arm64-qemu.json").unwrap(),
    ];
    let refs = [reference::find("pi-model-b-usb-hdd").unwrap()];
    let c = compare(&runs, &refs).unwrap();
    let files = compare_plots(&c, dir.path()).unwrap();
    check(&files);
    // sync and direct × write and read, PNG and SVG.
    assert_eq!(files.len(), 8);
    let svg = std::fs::read_to_string(dir.path().join("compare-storage-sync-write.svg")).unwrap();
    assert!(svg.contains("EMULATED"));
    assert!(
        svg.contains("C: pi-model-b-usb-hdd"),
        "the reference is a line of its own"
    );
}

#[test]
fn plot_folder_that_cannot_be_made_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let (_, r) = load_run("tests/data/handmade-a.json").unwrap();
    let e = format!("{:#}", report_plots(&r, &file.join("plots")).unwrap_err());
    assert!(e.contains("a-file"), "{e}");
}
