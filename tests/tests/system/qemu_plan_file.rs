//! Plans travel with the card (`qemu-virt-arm64`, plan `qemu-card`): one built card gets
//! a plan of the user's own by `benchboot plan write` (ext4 of the card, two block
//! sizes, sync only, plus the four partitions of a disk made by `benchboot prepare-disk`
//! on an image file and attached as a second virtio disk) and boots with no rebuild:
//! the run follows that plan and the results show the extra disk's targets by label.
//! Then a broken plan file on the same card: the board boots, measures nothing,
//! records the error (file, line, key) and serves it.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use benchboot_image::layout::{self, Role};
use benchboot_plan::CARD_PLAN_FILE;
use benchboot_results::Direction;
use sha2::{Digest, Sha256};
use xtask::qemu::{run_with, Options};

/// The user's plan: what the run must follow.
const PLAN: &str = r#"# benchboot plan-file test: written onto a built card, no rebuild.
extends = "quick"

[storage]
card = ["ext4"]
block-sizes = ["4 KiB", "64 KiB"]
modes = ["sync"]
byte-cap = "256 KiB"
time-cap = "250 ms"

[storage.device-reads]
cached = "300 ms"
buffered = "300 ms"

[storage.random]
enabled = false

[[storage.disk]]
label = "usb-ext4"
device = "LABEL=BBEXT4"
filesystem = "ext4"

[[storage.disk]]
label = "usb-vfat"
device = "LABEL=BBVFAT"
filesystem = "vfat"

[network]
enabled = false
"#;

/// A plan that parses but cannot run: PID 1 must say so, not run the built-in plan.
const BROKEN: &str = "extends = \"quick\"\n[storage]\nrepetitions = 0\n";

fn benchboot(args: &[&str]) -> String {
    let tool = xtask::qemu::build_host_tool(false).unwrap();
    let out = Command::new(&tool).args(args).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "benchboot {args:?}: {text}");
    text
}

/// Replaces the card's plan file directly (past `benchboot plan write`, which would
/// refuse it).
fn put_plan_raw(card: &Path, text: &str) {
    let layout = layout::plan(&layout::Spec::default()).unwrap();
    let p2 = layout.part(Role::Results).unwrap();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(card)
        .unwrap();
    let slice =
        fscommon::StreamSlice::new(file, p2.offset_bytes(), p2.offset_bytes() + p2.size_bytes())
            .unwrap();
    let fs = fatfs::FileSystem::new(slice, fatfs::FsOptions::new()).unwrap();
    let mut f = fs.root_dir().create_file(CARD_PLAN_FILE).unwrap();
    f.truncate().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    drop(f);
    fs.unmount().unwrap();
}

#[test]
fn a_card_runs_the_plan_written_onto_it_and_reports_a_broken_one() {
    let _slot = benchboot_tests::qemu_slot(module_path!());
    let started = Instant::now();
    let board = xtask::load_board("qemu-virt-arm64").unwrap();
    let built = xtask::image::run(&board).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let card = dir.path().join("card.img");
    std::fs::copy(&built.image, &card).unwrap();
    let plan = dir.path().join("my-plan.toml");
    std::fs::write(&plan, PLAN).unwrap();
    let disk = dir.path().join("disk.img");
    std::fs::File::create(&disk)
        .unwrap()
        .set_len(256 << 20)
        .unwrap();
    benchboot(&["prepare-disk", disk.to_str().unwrap(), "--yes"]);
    let said = benchboot(&[
        "plan",
        "write",
        "--card",
        card.to_str().unwrap(),
        plan.to_str().unwrap(),
    ]);
    assert!(said.contains("qemu-virt-arm64"), "{said}");

    let mut opts = Options::new(Duration::from_secs(600));
    opts.plan = "qemu-card".into();
    opts.card = Some(card.clone());
    opts.extra_disks = vec![disk.clone()];
    let run = run_with(&board, &opts).unwrap();
    let r = benchboot_tests::checks::fetched(&run);
    assert!(r.emulated && r.complete, "{:?}", r.events);
    assert_eq!(r.plan_error, None);
    // PID 1 found the card by the disk signature its image wrote, among the virtio
    // and USB disks, and ran the plan on it.
    let mut sector0 = [0u8; 512];
    std::io::Read::read_exact(&mut std::fs::File::open(&card).unwrap(), &mut sector0).unwrap();
    let signature = benchboot_plan::boot_disk::mbr_signature(&sector0).unwrap();
    let boot_card = r.boot_card.as_ref().expect("results.boot_card");
    assert_eq!(boot_card.found.as_deref(), Some("vda"), "{boot_card:?}");
    assert_eq!(
        boot_card.signature,
        Some(format!("{signature:#010x}")),
        "{boot_card:?}"
    );
    assert!(
        !r.events.iter().any(|e| e.step == "boot-card"),
        "{:?}",
        r.events
    );
    // The plan is the one written, text and hash.
    let sha: String = Sha256::digest(PLAN.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(r.plan.source.sha256, sha);
    assert_eq!(r.plan.source.text, PLAN);
    assert_eq!(r.plan.source.extends.as_deref(), Some("quick v3"));
    let labels: Vec<&str> = r
        .plan
        .storage
        .targets
        .iter()
        .map(|t| t.label.as_str())
        .collect();
    assert_eq!(labels, ["ext4", "usb-ext4", "usb-vfat"]);
    // Every cell it asked for, and nothing else: 3 targets x 2 sizes x sync x write, read.
    let mut cells: Vec<(String, u64, Direction)> = r
        .storage
        .iter()
        .map(|m| (m.target.clone(), m.block_size, m.direction))
        .collect();
    cells.sort_by(|a, b| (&a.0, a.1, a.2 as u8).cmp(&(&b.0, b.1, b.2 as u8)));
    cells.dedup();
    assert_eq!(cells.len(), 12, "{cells:?}");
    assert!(r
        .storage
        .iter()
        .all(|m| m.bytes > 0 && m.mode == benchboot_plan::Mode::Sync));
    for label in ["usb-ext4", "usb-vfat"] {
        assert!(
            r.storage
                .iter()
                .any(|m| m.target == label && m.block_size == 65536),
            "{label} measured"
        );
    }
    assert!(r.random.is_empty(), "random I/O was switched off");
    let errors: Vec<_> = r
        .events
        .iter()
        .filter(|e| e.severity == benchboot_results::Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let console = std::fs::read_to_string(&run.console_log).unwrap();
    // The extra disk's labels were found on the second virtio disk, not the card.
    assert!(console.contains("LABEL=BBEXT4 is /dev/vdb3"), "{console}");
    assert!(console.contains("LABEL=BBVFAT is /dev/vdb4"), "{console}");
    benchboot_tests::checks::report_timings("plan file", &run, started);

    // A broken plan file: nothing measured, the error served.
    put_plan_raw(&card, BROKEN);
    let run = run_with(&board, &opts).unwrap();
    let r = benchboot_tests::checks::fetched(&run);
    let e = r
        .plan_error
        .as_ref()
        .expect("the refused plan is in the results");
    assert_eq!(
        (e.line, e.key.as_str()),
        (Some(3), "storage.repetitions"),
        "{e}"
    );
    assert!(e.message.contains("at least 1"), "{e}");
    assert!(
        r.storage.is_empty() && r.device_reads.is_empty(),
        "nothing ran"
    );
    assert!(
        r.events
            .iter()
            .any(|ev| ev.severity == benchboot_results::Severity::Error
                && ev.message.contains("storage.repetitions")),
        "{:?}",
        r.events
    );
    let report = benchboot(&["show", run.results.to_str().unwrap()]);
    assert!(report.contains("PLAN REFUSED"), "{report}");
}
