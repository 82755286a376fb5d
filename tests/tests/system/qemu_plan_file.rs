//! Plans travel with the card (`qemu-virt-arm64`, plan `qemu-card`): one built card gets
//! a plan of the user's own by `benchboot plan write` (ext4 of the card, two block
//! sizes, sync only, plus two partitions of a disk made by `benchboot prepare-disk`
//! on an image file and attached as a second virtio disk, plus two USB disks) and boots
//! with no rebuild: the run follows that plan and the results show the extra disks'
//! targets by label. Then a broken plan file on the same card: the board boots, measures
//! nothing, records the error (file, line, key) and serves it.
//!
//! The first boot also walks two paths QEMU's virtio disks never did, at no extra
//! boot:
//! - Real USB disks: a bulk-only disk (`usb-storage`) and a UAS disk (`usb-uas`) on
//!   QEMU's xHCI, found by filesystem label as `/dev/sdX` through xhci-pci, usb-storage
//!   or uas, and sd_mod (`BLK_DEV_SD=m`: nothing else gives a USB disk its `sdX`), and
//!   measured. The results name the driver chain of each disk. By label, not by
//!   `whole-disk = "usb"`: with two USB disks which one is `sda` is the kernel's choice.
//! - A `console=` naming a tty the kernel does not have (`ttyNONE0`): the kernel starts
//!   PID 1 with fds 0-2 closed, Rust's runtime opens `/dev/null` for them (which the
//!   initramfs must carry, else PID 1 aborts and the kernel panics), PID 1 records that
//!   it had no console, runs the plan, and the results are fetched over the network with
//!   no ready line to wait for.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use benchboot_image::layout::{self, Role};
use benchboot_plan::CARD_PLAN_FILE;
use benchboot_results::Direction;
use sha2::{Digest, Sha256};
use xtask::qemu::{run_with, Options, UsbDisk, UsbTransport};

/// Sizes of the two USB disks, bytes: different, so the results tell them apart.
const BOT_BYTES: u64 = 24 << 20;
const UAS_BYTES: u64 = 40 << 20;

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
label = "disk-ext4"
device = "LABEL=BBEXT4"
filesystem = "ext4"

[[storage.disk]]
label = "disk-vfat"
device = "LABEL=BBVFAT"
filesystem = "vfat"

[[storage.disk]]
label = "bot-vfat"
device = "LABEL=USBBOT"
filesystem = "vfat"

[[storage.disk]]
label = "uas-ext4"
device = "LABEL=USBUAS"
filesystem = "ext4"

# The card's own ext4 partition again, by its label: the host cannot tell, the board
# refuses it by device number (two targets on one partition).
[[storage.disk]]
label = "card-again"
device = "LABEL=ext4"
filesystem = "ext4"

[network]
enabled = false
"#;

/// A plan that parses but cannot run: PID 1 must say so, not run the built-in plan.
const BROKEN: &str = "extends = \"quick\"\n[storage]\nrepetitions = 0\n";

fn benchboot(args: &[&str]) -> String {
    let tool = xtask::qemu::build_host_tool(false).unwrap();
    // Tables at their natural width: the test reads the content.
    let out = Command::new(&tool)
        .args(args)
        .env("COLUMNS", "10000")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "benchboot {args:?}: {text}");
    text
}

/// A disk image of `bytes` holding one filesystem over the whole disk (no partition
/// table), labelled `label`: `mkfs.<fs>` of e2fsprogs or dosfstools.
fn whole_disk_image(path: &Path, bytes: u64, fs: &str, label: &str) {
    std::fs::File::create(path).unwrap().set_len(bytes).unwrap();
    let mut mkfs = Command::new(format!("mkfs.{fs}"));
    match fs {
        "vfat" => mkfs.args(["-n", label]),
        _ => mkfs.args(["-q", "-F", "-L", label]),
    };
    let out = mkfs.arg(path).output().unwrap();
    assert!(out.status.success(), "mkfs.{fs}: {out:?}");
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
    let bot = dir.path().join("usb-bot.img");
    whole_disk_image(&bot, BOT_BYTES, "vfat", "USBBOT");
    let uas = dir.path().join("usb-uas.img");
    whole_disk_image(&uas, UAS_BYTES, "ext4", "USBUAS");
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
    opts.usb_disks = vec![
        UsbDisk {
            image: bot,
            transport: UsbTransport::BulkOnly,
        },
        UsbDisk {
            image: uas,
            transport: UsbTransport::Uas,
        },
    ];
    opts.console = Some("ttyNONE0".into());
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
    assert_eq!(
        labels,
        [
            "ext4",
            "disk-ext4",
            "disk-vfat",
            "bot-vfat",
            "uas-ext4",
            "card-again"
        ]
    );
    // Every cell it asked for, and nothing else: 5 targets x 2 sizes x sync x write, read
    // (`card-again` refused).
    let mut cells: Vec<(String, u64, Direction)> = r
        .storage
        .iter()
        .map(|m| (m.target.clone(), m.block_size, m.direction))
        .collect();
    cells.sort_by(|a, b| (&a.0, a.1, a.2 as u8).cmp(&(&b.0, b.1, b.2 as u8)));
    cells.dedup();
    assert_eq!(cells.len(), 20, "{cells:?}");
    assert!(r
        .storage
        .iter()
        .all(|m| m.bytes > 0 && m.mode == benchboot_plan::Mode::Sync));
    for label in ["disk-ext4", "disk-vfat", "bot-vfat", "uas-ext4"] {
        assert!(
            r.storage
                .iter()
                .any(|m| m.target == label && m.block_size == 65536),
            "{label} measured"
        );
    }
    assert!(r.random.is_empty(), "random I/O was switched off");
    // The gadget's leases are qemu_virt's subject, not this test's: a gadget function
    // that took no lease on either attempt (the known ECM flake: the host side sends
    // nothing, its carrier never comes up; PID 1 bounces the board's interface after
    // 5 s, `gadget.<f>.kick`, and the event says what each end saw) is not counted
    // here. The gadget events are printed for the record.
    for e in r.events.iter().filter(|e| e.step.starts_with("gadget.")) {
        eprintln!("first boot: {:?} {}: {}", e.severity, e.step, e.message);
    }
    let errors: Vec<_> = r
        .events
        .iter()
        .filter(|e| e.severity == benchboot_results::Severity::Error)
        .filter(|e| !e.step.starts_with("gadget."))
        .collect();
    // The only error: `card-again`, the card's ext4 partition by label, refused by PID 1
    // by device number before anything was written, naming both targets.
    // Every event on failure: a gadget link's warnings say what each end saw.
    assert_eq!(errors.len(), 1, "{:?}", r.events);
    assert_eq!(errors[0].step, "target.card-again", "{errors:?}");
    assert!(
        errors[0].message.starts_with(
            "not written: /dev/vda7: target `ext4` (/dev/vda7) and target `card-again` \
             (/dev/vda7) are on one place (device "
        ),
        "{errors:?}"
    );
    assert!(!r.storage.iter().any(|m| m.target == "card-again"));
    // The disks measured, by kernel name, with the drivers bound to each: the card and
    // the prepared disk on virtio, the USB disks as sdX through sd_mod, the bulk-only one
    // by usb-storage, the UAS one by uas, both behind xhci-pci (driver xhci_hcd). Seen:
    // the UAS disk is sda (usb-storage waits delay_use = 1 s before its scan), but the
    // test does not depend on it.
    let names: Vec<&str> = r.devices.iter().map(|d| d.name.as_str()).collect();
    let virtio = r
        .devices
        .iter()
        .find(|d| d.name == "vdb")
        .unwrap_or_else(|| panic!("the prepared disk is the second virtio disk, vdb: {names:?}"));
    assert_eq!(
        virtio.drivers.first().map(String::as_str),
        Some("virtio_blk")
    );
    for (bytes, transport) in [(BOT_BYTES, "usb-storage"), (UAS_BYTES, "uas")] {
        let d = r
            .devices
            .iter()
            .find(|d| d.size_bytes == bytes)
            .unwrap_or_else(|| panic!("no {bytes}-byte disk among {:?}", r.devices));
        assert!(
            d.name.starts_with("sd") && d.name[2..].bytes().all(|b| b.is_ascii_lowercase()),
            "{}: a USB disk is sdX",
            d.name
        );
        // The USB device and its root hub ("usb"), qemu-xhci (xhci-pci's "xhci_hcd"),
        // virt's PCIe host bridge (pcie-host-ecam-generic, "pci-host-generic").
        assert_eq!(
            d.drivers,
            ["sd", transport, "usb", "xhci_hcd", "pci-host-generic"],
            "{}",
            d.name
        );
        assert_eq!(d.logical_block_size, 512, "{}", d.name);
    }
    for label in ["bot-vfat", "uas-ext4"] {
        let cells: Vec<_> = r.storage.iter().filter(|m| m.target == label).collect();
        assert_eq!(cells.len(), 4, "{label}: 2 sizes x write, read: {cells:?}");
        assert!(
            cells.iter().all(|m| m.bytes > 0 && m.nanos > 0),
            "{label}: {cells:?}"
        );
    }
    // PID 1's modalias scans (boot, storage, end) found every USB interface and SCSI
    // disk with its driver: none is reported as a device with no driver in the image.
    assert!(
        r.modalias.no_driver.is_empty(),
        "{:?}",
        r.modalias.no_driver
    );
    // No console: the kernel said so, PID 1's fds 0-2 were /dev/null, and it recorded
    // that (a warning; the run went on). Nothing came on the serial port.
    let warned: Vec<&str> = r
        .events
        .iter()
        .filter(|e| e.step == "console")
        .map(|e| e.message.as_str())
        .collect();
    assert_eq!(warned.len(), 1, "{:?}", r.events);
    for part in [
        "fds 0-2 are /dev/null",
        "console=ttyNONE0 names no tty",
        benchboot_console::stdio::KERNEL_NO_CONSOLE,
    ] {
        assert!(warned[0].contains(part), "{part}: {}", warned[0]);
    }
    assert!(r
        .system
        .kernel_cmdline
        .value()
        .is_some_and(|c| c.contains("console=ttyNONE0") && !c.contains("ttyAMA0")));
    // This run's start line never reached the serial port (the log may hold another
    // boot's lines: target/qemu/<board>/ is shared by every QEMU run of the board).
    let console = std::fs::read(&run.console_log).unwrap();
    let console = String::from_utf8_lossy(&console);
    assert!(
        !console.contains(&format!("start run={}", r.run_id)),
        "the serial port carried PID 1's console: {console}"
    );
    benchboot_tests::checks::report_timings("plan file", &run, started);

    // A broken plan file: nothing measured, the error served (on the board's console).
    put_plan_raw(&card, BROKEN);
    opts.console = None;
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
