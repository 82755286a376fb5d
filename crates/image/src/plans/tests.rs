//! Tests of the plans an image carries, over every shipped board: valid, emulated where
//! they should be, the plan file's refusals, the gadget, memory and WiFi steps per board.
use super::*;
use crate::layout::{plan, Spec};

fn load_board(name: &str) -> Result<Board, benchboot_board::BoardError> {
    benchboot_board::load(&benchboot_board::boards_dir(), name)
}
use benchboot_plan::Filesystem;

#[test]
fn qemu_plan_targets_every_test_partition() {
    let board = load_board("rpi-zero-w").unwrap();
    let layout = plan(&Spec::default()).unwrap();
    let p = qemu(&board, &layout, vec!["ext4".into()]);
    p.validate().unwrap();
    assert!(p.emulated);
    assert_eq!(
        p.storage.block_sizes.len(),
        18,
        "QEMU runs the whole structure"
    );
    assert_eq!(p.storage.modes, [Mode::Sync, Mode::Direct]);
    let t: Vec<_> = p
        .storage
        .targets
        .iter()
        .map(|t| (t.device.as_str(), t.filesystem))
        .collect();
    assert_eq!(
        t,
        [
            ("/dev/mmcblk0p5", Filesystem::Ext2),
            ("/dev/mmcblk0p6", Filesystem::Ext3),
            ("/dev/mmcblk0p7", Filesystem::Ext4),
            ("/dev/mmcblk0p8", Filesystem::Vfat),
            ("/dev/mmcblk0p9", Filesystem::Raw)
        ]
    );
    assert_eq!(p.results.device, "/dev/mmcblk0p2");
    assert_eq!(p.results.journal.as_deref(), Some("/dev/mmcblk0p4"));
    let h = hardware(&board, &layout, vec![], &PlanText::standard()).unwrap();
    h.validate().unwrap();
    assert!(!h.emulated);
    assert_eq!(h.storage.block_sizes.len(), 18);
    // The byte cap must fit on a test partition.
    let ext2 = layout.part(Role::Test(Filesystem::Ext2)).unwrap();
    assert!(h.storage.byte_cap < ext2.size_bytes());
}

/// The main job (`cargo xtask qemu --board rpi-zero-w`) boots the short QEMU plan: it
/// must keep every kind of cell the whole QEMU plan has, each path of the sweep's loop
/// included (a size below the 512 B logical block, where O_DIRECT falls back to sync;
/// sub-page, page and large direct sizes).
#[test]
fn the_main_jobs_short_plan_keeps_every_cell_kind() {
    let board = load_board("rpi-zero-w").unwrap();
    let layout = plan(&Spec::default()).unwrap();
    let whole = qemu(&board, &layout, vec![]);
    let short = qemu_short(&board, &layout, vec![]);
    short.validate().unwrap();
    let s = &short.storage;
    assert_eq!(s.targets, whole.storage.targets, "every filesystem and raw");
    assert_eq!(s.modes, [Mode::Sync, Mode::Direct]);
    assert!(s.device_reads.is_some() && s.random.is_some() && s.verify);
    assert_eq!(short.memory, whole.memory);
    assert_eq!(short.network, whole.network);
    let logical = 512;
    assert!(
        s.block_sizes.iter().any(|b| *b < logical),
        "the sync fallback"
    );
    assert!(s.block_sizes.contains(&logical));
    assert!(s.block_sizes.contains(&4096));
    assert!(s.block_sizes.iter().any(|b| *b >= MIB));
    // Every size is one the whole plan runs, in the whole plan's order.
    let mut sorted = s.block_sizes.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, s.block_sizes);
    assert!(s
        .block_sizes
        .iter()
        .all(|b| whole.storage.block_sizes.contains(b)));
}

#[test]
fn every_plan_of_an_image_is_valid_and_the_test_plans_are_emulated() {
    let layout = plan(&Spec::default()).unwrap();
    let virt = load_board("qemu-virt-arm64").unwrap();
    let all = all(
        &virt,
        &layout,
        vec![],
        vec!["i6300esb".into()],
        &PlanText::standard(),
    )
    .unwrap();
    let names: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "plan",
            "qemu",
            "qemu-short",
            "qemu-lava",
            "qemu-card",
            "faults",
            "watchdog",
            "powercut"
        ]
    );
    for (name, p) in &all {
        p.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(p.emulated, *name != "plan", "{name}");
        assert!(p.supervision.worker_limit_ms > 0);
    }
    let get = |n: &str| &all.iter().find(|(x, _)| *x == n).unwrap().1;
    let f = get("faults");
    assert_eq!(
        f.faults,
        [Fault::Segfault, Fault::Panic, Fault::Hang, Fault::Pid1Panic]
    );
    assert_eq!(f.supervision.worker_limit_ms, 5_000);
    assert_eq!(f.storage.targets.len(), 1);
    assert!(f.network.gadget.is_none() && f.network.tests.is_none());
    let w = get("watchdog");
    assert_eq!(w.faults, [Fault::Pid1Hang]);
    assert_eq!(
        (
            w.supervision.worker_limit_ms,
            w.supervision.watchdog_timeout_s
        ),
        (2_000, 5)
    );
    let c = get("powercut");
    assert!(c.faults.is_empty());
    assert_eq!(c.storage.block_sizes, [512, 4096, 64 * 1024, MIB]);
    assert_eq!(c.storage.targets.len(), 5);
    assert!(c.storage.random.is_some() && c.storage.verify);
    assert!(c.network.gadget.is_none());
    assert_eq!(get("plan").supervision, Supervision::default());
    // Only the default plan and qemu-card give way to the card's plan file.
    for (name, p) in &all {
        assert_eq!(p.card_plan, ["plan", "qemu-card"].contains(name), "{name}");
    }
    assert_eq!(get("plan").source.preset.as_deref(), Some("standard v2"));
    for n in ["qemu", "faults", "powercut"] {
        assert_eq!(get(n).supervision.watchdog_timeout_s, 0, "{n}");
    }
    // Supervision and persistence tests boot storage only; the QEMU plan has both.
    for n in ["faults", "watchdog", "powercut"] {
        assert!(
            get(n).memory.is_none() && get(n).card_check.is_none(),
            "{n}"
        );
    }
    assert!(get("qemu").memory.is_some());
    let short = get(QEMU_SHORT);
    assert_eq!(short.storage.block_sizes, [256, 512, 4096, 64 * 1024, MIB]);
    // The whole QEMU plan on a virtio disk has one long cell (a storage timeline in
    // QEMU's report); no plan built on it has.
    let long = get("qemu")
        .storage
        .long_cell
        .clone()
        .expect("the long cell");
    assert_eq!(
        (long.target.as_str(), long.mode, long.block_size),
        ("ext4", Mode::Direct, 4096)
    );
    assert_eq!(
        get("qemu").storage.cell_caps("ext4", Mode::Direct, 4096),
        (32 * MIB, 3_000)
    );
    assert_eq!(
        get("qemu").storage.cell_caps("ext4", Mode::Sync, 4096),
        (256 * 1024, 250)
    );
    for (name, p) in all.iter().filter(|(n, _)| *n != "qemu") {
        assert_eq!(p.storage.long_cell, None, "{name}");
    }
    let mut whole = get("qemu").clone();
    whole.storage.block_sizes = short.storage.block_sizes.clone();
    whole.storage.long_cell = None;
    assert_eq!(
        short, &whole,
        "the short plan differs in its block sizes (and the long cell) only"
    );
    // An SD machine (~2 MB/s emulated) gets none.
    let zero = load_board("rpi-zero-w").unwrap();
    let zero_qemu = with_long_cell(&zero, qemu(&zero, &layout, vec![]));
    assert_eq!(zero_qemu.storage.long_cell, None);
}

#[test]
fn image_plan_files_and_their_refusals() {
    let layout = plan(&Spec::default()).unwrap();
    let zero = load_board("rpi-zero-w").unwrap();
    let facts = image_facts(&zero, &layout);
    assert_eq!(facts.card.len(), 5);
    assert_eq!(facts.boot_disk, "mmcblk0");
    assert_eq!(
        facts.disk_signature,
        crate::layout::disk_signature("rpi-zero-w", &layout)
    );
    assert!(
        facts.buses.is_empty(),
        "the Zero W's one USB port is the gadget"
    );
    let quick = PlanText::from_arg("quick").unwrap();
    assert_eq!(quick.file, "plans/quick.toml");
    let p = hardware(&zero, &layout, vec![], &quick).unwrap();
    assert_eq!(p.storage.repetitions, 1);
    assert_eq!(p.source.preset.as_deref(), Some("quick v3"));
    let sata = PlanText {
        file: "ssd.toml".into(),
        text: "[[storage.disk]]\nlabel = \"ssd\"\nwhole-disk = \"sata\"\ndestroy = true\n".into(),
    };
    let e = hardware(&zero, &layout, vec![], &sata)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("ssd.toml:3: storage.disk[0].whole-disk: board rpi-zero-w has no sata bus"),
        "{e}"
    );
    let bpi = load_board("bananapi-m1").unwrap();
    let p = hardware(&bpi, &layout, vec![], &sata).unwrap();
    assert_eq!(p.storage.targets.last().unwrap().device, "BUS=sata");
    assert!(PlanText::from_arg("/nonexistent/plan.toml")
        .unwrap_err()
        .to_string()
        .contains("neither a preset"));
}

#[test]
fn a_plan_file_not_in_utf8_is_named_with_what_it_looks_like() {
    let dir = std::env::temp_dir().join(format!("bb-plan-utf16-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = "extends = \"quick\"\n[storage]\nrepetitions = 2\n";
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let path = dir.join("notepad.toml");
    std::fs::write(&path, utf16).unwrap();
    let arg = path.to_str().unwrap();
    assert_eq!(
        PlanText::from_arg(arg).unwrap_err().to_string(),
        format!(
            "{arg} is not UTF-8 (looks like UTF-16 (little-endian, with a byte-order \
             mark)): save it as UTF-8"
        )
    );
    // A UTF-8 byte-order mark is dropped: the plan reads.
    std::fs::write(
        &path,
        [b"\xEF\xBB\xBF".as_slice(), text.as_bytes()].concat(),
    )
    .unwrap();
    let read = PlanText::from_arg(arg).map(|p| p.text);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(read.unwrap(), text);
}

#[test]
fn gadget_on_hardware_dummy_hcd_only_in_qemu_virt() {
    let layout = plan(&Spec::default()).unwrap();
    let zero = load_board("rpi-zero-w").unwrap();
    let hw = hardware(&zero, &layout, vec![], &PlanText::standard()).unwrap();
    let g = hw.network.gadget.as_ref().unwrap();
    assert!(!g.in_turn && !g.host_in_namespace);
    assert_eq!(g.functions.len(), 3);
    assert_eq!(hw.network.interface, "");
    assert_eq!(hw.network.tests.as_ref().unwrap().http_bytes, 100 * MIB);
    // raspi0 in QEMU has a host-only dwc2: no gadget, results over usb-net.
    let q = qemu(&zero, &layout, vec![]);
    assert!(q.network.gadget.is_none() && q.network.tests.is_none());
    assert_eq!(q.network.interface, "eth0");

    let virt = load_board("qemu-virt-arm64").unwrap();
    let q = qemu(&virt, &layout, vec![]);
    q.validate().unwrap();
    let g = q.network.gadget.as_ref().unwrap();
    assert!(g.in_turn && g.host_in_namespace);
    assert_eq!(g.udc.as_deref(), Some("dummy_udc.0"));
    assert_eq!(q.network.interface, "eth0");
    assert_eq!(q.storage.targets[0].device, "/dev/vda5");

    // bpim2u has no network: the QEMU plan names no link, the card carries results.
    let bpi = load_board("bananapi-m1").unwrap();
    let q = qemu(&bpi, &layout, vec![]);
    q.validate().unwrap();
    assert!(!q.network.has_link());
    assert!(hardware(&bpi, &layout, vec![], &PlanText::standard())
        .unwrap()
        .network
        .has_link());
}

#[test]
fn every_board_s_hardware_and_qemu_plans_have_the_memory_step() {
    let layout = plan(&Spec::default()).unwrap();
    let dir = benchboot_board::boards_dir();
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(name) = name.strip_suffix(".toml") else {
            continue;
        };
        let Ok(board) = load_board(name) else {
            continue; // shared.toml, packages.lock.toml
        };
        let hw = hardware(&board, &layout, vec![], &PlanText::standard()).unwrap();
        assert_eq!(hw.memory, Some(MemoryPlan::HARDWARE), "{name}");
        let q = qemu(&board, &layout, vec![]);
        assert_eq!(q.memory, Some(MemoryPlan::QEMU), "{name}");
        // The destructive card check: never by default on hardware; in QEMU where
        // the disk is virtio-blk (the virt boards).
        assert_eq!(hw.card_check, None, "{name}");
        let virtio = board
            .qemu
            .as_ref()
            .is_some_and(|q| q.drive == QemuDrive::Virtio);
        assert_eq!(q.card_check.is_some(), virtio, "{name}");
        assert_eq!(virtio, name.starts_with("qemu-virt"), "{name}");
        n += 1;
    }
    assert!(n >= 8, "only {n} boards");
}

#[test]
fn radio_boards_sweep_as_ap_on_hardware_and_virt_tests_its_stand_in() {
    let layout = plan(&Spec::default()).unwrap();
    let zero = load_board("rpi-zero-w").unwrap();
    let hw = hardware(&zero, &layout, vec![], &PlanText::standard()).unwrap();
    let w = hw.network.wifi.as_ref().expect("the Zero W's WiFi sweep");
    assert_eq!(
        w.role,
        WifiRole::AccessPoint {
            security: benchboot_plan::WifiSecurity::Wpa2Psk
        }
    );
    let swept: Vec<(WifiBand, u8, u32)> = w
        .entries
        .iter()
        .map(|e| e.asked.map(|a| (a.band, a.channel, a.width_mhz)).unwrap())
        .collect();
    assert_eq!(
        swept,
        [
            (WifiBand::Ghz2, 1, 20),
            (WifiBand::Ghz2, 6, 20),
            (WifiBand::Ghz2, 11, 20)
        ]
    );
    assert_eq!(w.chip.as_deref(), Some(zero.wifi().unwrap().chip.as_str()));
    assert!(w.entries.iter().all(|e| e.skip.is_none()));
    // QEMU's raspi0 models no radio: no WiFi in its plans.
    assert!(qemu(&zero, &layout, vec![]).network.wifi.is_none());
    // A board without a radio has no WiFi step.
    let bbb = load_board("beaglebone-black").unwrap();
    assert!(hardware(&bbb, &layout, vec![], &PlanText::standard())
        .unwrap()
        .network
        .wifi
        .is_none());

    let virt = load_board("qemu-virt-arm64").unwrap();
    let q = qemu(&virt, &layout, vec![]);
    q.validate().unwrap();
    let w = q.network.wifi.as_ref().unwrap();
    assert_eq!(w.country, "DE");
    assert_eq!(w.stand_in.as_ref().unwrap().hostapd, QEMU_HOSTAPD);
    let names: Vec<&str> = w.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "wifi-ch1-20",
            "wifi-ch36-40",
            "wifi-ch36-80",
            "wifi-ch52-20",
            "wifi-ch14-20"
        ]
    );
    assert_eq!(w.tests.as_ref().unwrap().streams, [1]);
    for n in ["qemu-card", "faults", "powercut", "qemu-lava"] {
        let p = all(&virt, &layout, vec![], vec![], &PlanText::standard())
            .unwrap()
            .into_iter()
            .find(|(x, _)| *x == n)
            .unwrap()
            .1;
        assert!(p.network.wifi.is_none(), "{n}");
    }
}
