//! The headline on the real QEMU documents and the hardware-shaped fixture
//! (`tests/data`, see its README): the lines a reader sees, the target chosen, the
//! EMULATED marks.

use std::path::Path;

use super::*;

fn load(name: &str) -> RunResults {
    crate::results_file::load_path(&Path::new("tests/data").join(name)).unwrap()
}

/// (label, figure, note) of every figure line.
fn lines(h: &Headline) -> Vec<(String, String, String)> {
    h.facts()
        .into_iter()
        .map(|f| (f.label, f.figure, f.note))
        .collect()
}

fn line<'a>(all: &'a [(String, String, String)], label: &str) -> &'a (String, String, String) {
    all.iter()
        .find(|l| l.0 == label)
        .unwrap_or_else(|| panic!("no {label} line in {all:#?}"))
}

/// The schema-1.13 QEMU run with its emulated meter's trace: every line the run has, in
/// order, each marked EMULATED; the verdict first; ext4 on the boot disk chosen (not
/// ext2, the plan's first target); no latency figure and no A1 verdict.
#[test]
fn a_qemu_run_opens_with_emulated_and_marks_every_figure() {
    let r = load("qemu-virt-arm64-1.13.json");
    let trace =
        crate::power::trace_file::read(Path::new("tests/data/qemu-virt-arm64-1.13.power.json"))
            .unwrap();
    let e = Energy::of(trace, "trace".into(), &r);
    let h = headline(&r, Some(&e));
    assert_eq!(
        h.verdict(),
        [
            "EMULATED (QEMU): these figures say nothing about the hardware",
            "Run complete: every step of the plan ran; 2 failures (see Warnings)."
        ]
    );
    let facts = h.facts();
    assert!(facts.iter().all(|f| f.emulated), "{facts:#?}");
    let labels: Vec<&str> = facts.iter().map(|f| f.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "seq. write / read",
            "4 KiB random r / w",
            "TCP ncm",
            "TCP ecm",
            "TCP rndis",
            "TCP virtio-direct",
            "TCP virtio-lan",
            "TCP wifi-ch1-20",
            "TCP wifi-ch36-40",
            "TCP wifi-ch36-80",
            "memcpy",
            "memory latency",
            "card",
            "energy"
        ]
    );
    let all = lines(&h);
    // ext4 (/dev/vda7) at 1 MiB direct: the document's one repetition wrote 200.60 and
    // read 853.23 MiB/s.
    let s = h.sequential.as_ref().unwrap();
    assert_eq!(
        (s.target.as_str(), s.on_card, s.block_size, s.mode.as_str()),
        ("ext4", true, 1 << 20, "direct")
    );
    assert!((s.write.unwrap() - 200.6028).abs() < 1e-3, "{s:?}");
    assert_eq!(
        line(&all, "seq. write / read"),
        &(
            "seq. write / read".into(),
            "201 / 853 MiB/s".into(),
            "ext4 on the card, 1 MiB blocks (largest run), direct, one repetition".into()
        )
    );
    // 943 reads in 0.301197280 s, 769 writes in 0.304304336 s at QD1 on ext4.
    assert_eq!(line(&all, "4 KiB random r / w").1, "3,131 / 2,527 IOPS");
    assert_eq!(
        line(&all, "4 KiB random r / w").2,
        "read / write, ext4 on the card, QD1; no A1 verdict under QEMU"
    );
    assert_eq!(
        line(&all, "TCP ncm"),
        &(
            "TCP ncm".into(),
            "384 / 330 Mbit/s".into(),
            "USB gadget: board→host / host→board, best run".into()
        )
    );
    // ecm's best: two streams each way.
    assert_eq!(
        h.tcp[1].board_to_host.map(|x| x.1),
        Some(2),
        "{:?}",
        h.tcp[1]
    );
    // The directions' order is said once, on the first link's line.
    assert_eq!(line(&all, "TCP virtio-lan").2, "wired");
    assert_eq!(line(&all, "TCP wifi-ch1-20").2, "WiFi");
    assert_eq!(line(&all, "TCP wifi-ch36-80").1, "304 / 306 Mbit/s");
    assert_eq!(
        line(&all, "memcpy"),
        &(
            "memcpy".into(),
            "2,425 / 2,581 MB/s".into(),
            "libc, one core (cpu0) / all 2 cores, best sample".into()
        )
    );
    assert_eq!(h.latency, Some(Latency::NotUnderQemu));
    assert_eq!(
        line(&all, "memory latency"),
        &(
            "memory latency".into(),
            "—".into(),
            "not measurable under QEMU: TCG has no caches".into()
        )
    );
    assert_eq!(
        line(&all, "card"),
        &(
            "card".into(),
            "vda, 1.0 GiB".into(),
            "no card registers; card check: genuine".into()
        )
    );
    // The energy section's own figures, from the trace beside the document.
    let rep = e.report.as_ref().unwrap();
    let run = rep.run.as_ref().unwrap().figure.as_ref().unwrap();
    assert_eq!(
        h.energy.as_ref().unwrap().run_j,
        Some((run.energy_j, run.uncertainty_j))
    );
    assert_eq!(
        line(&all, "energy"),
        &(
            "energy".into(),
            "599.54 ± 0.50 J".into(),
            "the run (231 s, sync to sync); idle 1.522 ± 0.060 W".into()
        )
    );
}

/// The hardware-shaped run (an SD card with registers): no EMULATED anywhere, the card
/// by name, manufacturer and size, A1 met in words, latency past the LLC.
#[test]
fn a_hardware_run_names_its_card_and_a1_verdict() {
    let r = load("handmade-card.json");
    let h = headline(&r, None);
    assert_eq!(
        h.verdict(),
        ["Run complete: every step of the plan ran; no failures."]
    );
    assert!(h.facts().iter().all(|f| !f.emulated));
    let all = lines(&h);
    assert_eq!(line(&all, "seq. write / read").1, "20.1 / 85.3 MiB/s");
    assert_eq!(
        line(&all, "4 KiB random r / w"),
        &(
            "4 KiB random r / w".into(),
            "6,886 / 5,557 IOPS".into(),
            "read / write, ext4 on the card, QD1; meets A1, the card claims A2".into()
        )
    );
    assert_eq!(
        line(&all, "memory latency").2,
        "64 MiB block (64x the 1 MiB LLC), 4 KiB pages, a random read over L1"
    );
    let card = h.card.as_ref().unwrap();
    assert_eq!(
        (
            card.manufacturer.as_deref(),
            card.name.as_deref(),
            card.size_bytes
        ),
        (Some("SanDisk"), Some("SN64G"), Some(63_864_569_856))
    );
    assert_eq!(
        line(&all, "card"),
        &(
            "card".into(),
            "SanDisk SN64G, 59.5 GiB".into(),
            "mmcblk0; size by its CSD; claims C10 U3 V30 A2; card check: genuine".into()
        )
    );
    assert!(h.energy.is_none());
    assert!(!all.iter().any(|l| l.0 == "energy"));
}

/// The card's ext4 first, then its raw target, then the rest; a target off the card
/// only when the card has none with the figure.
#[test]
fn the_target_is_the_cards_ext4_else_raw() {
    let r = load("handmade-card.json");
    let h = headline(&r, None);
    assert_eq!(h.sequential.as_ref().unwrap().target, "ext4");
    assert_eq!(h.random.as_ref().unwrap().target, "ext4");
    // Without ext4's figures: raw (the plan's last target, after ext2, ext3, vfat).
    let mut no_ext4 = r.clone();
    no_ext4.storage.retain(|m| m.target != "ext4");
    no_ext4.random.retain(|m| m.target != "ext4");
    let h = headline(&no_ext4, None);
    let s = h.sequential.as_ref().unwrap();
    assert_eq!(
        (s.target.as_str(), s.device.as_str()),
        ("raw", "/dev/mmcblk0p9")
    );
    assert_eq!(h.random.as_ref().unwrap().target, "raw");
    // ext4 moved off the card: the card's raw wins over it.
    let mut moved = r.clone();
    for t in &mut moved.plan.storage.targets {
        if t.label == "ext4" {
            t.device = "/dev/sda1".into();
        }
    }
    let h = headline(&moved, None);
    assert_eq!(h.sequential.as_ref().unwrap().target, "raw");
    assert_eq!(h.random.as_ref().unwrap().target, "raw");
    assert!(h.random.as_ref().unwrap().on_card);
    // Only ext2 measured: ext2, at its own largest block.
    let mut ext2 = r.clone();
    ext2.storage
        .retain(|m| m.target == "ext2" && m.block_size <= 4096);
    let s = headline(&ext2, None).sequential.unwrap();
    assert_eq!((s.target.as_str(), s.block_size), ("ext2", 4096));
}

/// A run below A1 says which floor it missed; an incomplete run says so first.
#[test]
fn below_a1_and_incomplete_in_words() {
    let r = load("handmade-a.json");
    let h = headline(&r, None);
    assert_eq!(
        h.verdict(),
        ["Run INCOMPLETE: not every step of the plan ran; 1 failure (see Warnings)."]
    );
    let all = lines(&h);
    // Median of 1600/1610/1620/1630 reads and 450..480 writes.
    assert_eq!(
        line(&all, "4 KiB random r / w"),
        &(
            "4 KiB random r / w".into(),
            "1,615 / 465 IOPS".into(),
            "read / write, ext4, QD1; below A1 (write 465 < 500 IOPS)".into()
        )
    );
    assert_eq!(
        line(&all, "seq. write / read"),
        &(
            "seq. write / read".into(),
            "43.0 / 64.5 MiB/s".into(),
            "ext4, 1 MiB blocks (largest run), direct, median of 4".into()
        )
    );
    assert_eq!(line(&all, "TCP ecm").1, "152 / 108 Mbit/s");
}

/// The Zero W under QEMU (schema 1.1: no card registers, no boot card record): its
/// disk by the kernel's model, EMULATED on every line, no card check.
#[test]
fn an_old_qemu_document_names_its_disk() {
    let r = load("rpi-zero-w-qemu.json");
    let h = headline(&r, None);
    let facts = h.facts();
    assert!(facts.iter().all(|f| f.emulated));
    let all = lines(&h);
    assert_eq!(
        line(&all, "card"),
        &(
            "card".into(),
            "QEMU!, 1.0 GiB".into(),
            "mmcblk0; no card registers; no card check in this run".into()
        )
    );
    assert_eq!(line(&all, "seq. write / read").1, "139 / 109 MiB/s");
    assert!(h.tcp.is_empty() && h.memcpy.is_none() && h.latency.is_none());
}
