//! Tests of plan resolution: every preset, a user's file over its preset, and the
//! refusals (with file, line and key) a file cannot get past.
use super::*;
use crate::network::Topology;
use crate::{Mode, MIB};

fn image() -> ImageFacts {
    ImageFacts::example()
}

fn base() -> Plan {
    let mut p = Plan::example();
    p.emulated = false;
    p.network.tests = Some(crate::NetTests::hardware());
    p
}

fn run(text: &str) -> Result<Plan, PlanFileError> {
    resolve("my.toml", text, &base(), &image())
}

#[test]
fn every_preset_resolves_and_names_itself() {
    for (name, text) in PRESETS {
        let p = resolve(&preset_file(name), text, &base(), &image())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // quick v3 added its short memory step.
        let version = if name == "quick" { 3 } else { 2 };
        assert_eq!(
            p.source.preset.as_deref(),
            Some(&*format!("{name} v{version}"))
        );
        assert_eq!(p.source.sha256.len(), 64);
        assert_eq!(p.source.text, text);
    }
}

#[test]
fn seeds_is_the_write_ups_sweep() {
    let p = resolve(
        "plans/seeds.toml",
        preset("seeds").unwrap(),
        &base(),
        &image(),
    )
    .unwrap();
    let s = &p.storage;
    assert_eq!(s.block_sizes, crate::seed_block_sizes());
    assert_eq!(s.modes, [Mode::Sync, Mode::Direct]);
    assert_eq!(s.repetitions, 3);
    let labels: Vec<&str> = s.targets.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "ext2",
            "ext3",
            "ext4",
            "vfat",
            "raw",
            "disk-ext2",
            "disk-ext3",
            "disk-ext4",
            "disk-vfat"
        ]
    );
    assert!(s.targets[5..].iter().all(|t| t.optional));
    assert_eq!(s.targets[7].device, "LABEL=BBEXT4");
    assert!(s.device_reads.is_none() && s.random.is_none() && !s.verify);
    assert!(p.network.tests.is_none());
    assert_eq!(p.source.extends.as_deref(), Some("standard v2"));
}

#[test]
fn quick_is_short() {
    let p = resolve(
        "plans/quick.toml",
        preset("quick").unwrap(),
        &base(),
        &image(),
    )
    .unwrap();
    assert_eq!(p.storage.block_sizes, [512, 4096, 64 << 10, MIB]);
    assert_eq!(p.storage.repetitions, 1);
    assert_eq!(p.storage.targets.len(), 3);
    assert_eq!(p.storage.random.as_ref().unwrap().targets, ["raw"]);
    assert_eq!(p.network.tests.as_ref().unwrap().duration_ms, 5_000);
    let m = p.memory.unwrap();
    assert_eq!(
        (m.samples, m.latency_reads, m.latency_repeats),
        (3, 1_000_000, 1)
    );
    // The measurements within 15 min; the energy marks on top: two 13 s patterns, 30 s
    // idle with radios off and on each of the 3 WiFi entries of this image.
    let steps = crate::estimate::estimate(&p);
    assert_eq!(steps[0].step, "energy");
    assert_eq!(steps[0].at_most_ms, 26_000 + 4 * 30_000);
    let bound = crate::estimate::total_ms(&steps[1..]);
    assert!(bound < 15 * 60_000, "quick's bound is {bound} ms");
}

#[test]
fn a_user_file_overrides_its_preset() {
    let p = run(concat!(
        "extends = \"quick\"\n",
        "[storage]\n",
        "card = [\"ext4\"]\n",
        "block-sizes = [\"4 KiB\", \"1 MiB\"]\n",
        "[[storage.disk]]\n",
        "label = \"usb-ext4\"\n",
        "device = \"LABEL=BBEXT4\"\n",
        "filesystem = \"ext4\"\n",
        "[[storage.disk]]\n",
        "label = \"usb-raw\"\n",
        "whole-disk = \"usb\"\n",
        "destroy = true\n",
    ))
    .unwrap();
    let t: Vec<(&str, &str)> = p
        .storage
        .targets
        .iter()
        .map(|t| (t.label.as_str(), t.device.as_str()))
        .collect();
    assert_eq!(
        t,
        [
            ("ext4", "/dev/mmcblk0p7"),
            ("usb-ext4", "LABEL=BBEXT4"),
            ("usb-raw", "BUS=usb")
        ]
    );
    assert_eq!(p.storage.block_sizes, [4096, MIB]);
    assert_eq!(p.storage.byte_cap, 16 * MIB, "quick's cap stays");
    // quick's random target `raw` is not in this plan: dropped, not an error.
    assert!(p.storage.random.is_none());
    assert_eq!(
        p.storage.device_reads.as_ref().unwrap().disks,
        ["/dev/mmcblk0", "BUS=usb"]
    );
    assert_eq!(p.source.preset, None);
    assert_eq!(p.source.extends.as_deref(), Some("quick v3"));
    assert!(
        p.source.describe().starts_with("my.toml (sha256 "),
        "{}",
        p.source.describe()
    );
    // The fixings stay the image's.
    assert_eq!(p.results, base().results);
    assert_eq!(p.modules, base().modules);
}

#[test]
fn refusals_name_file_line_and_key() {
    let cases: [(&str, Option<usize>, &str, &str); 7] = [
        (
            "[storage]\nwhole = 1\n",
            Some(2),
            "storage",
            "unknown field `whole`",
        ),
        (
            "[[storage.disk]]\nlabel = \"ssd\"\nwhole-disk = \"sata\"\ndestroy = true\n",
            Some(3),
            "storage.disk[0].whole-disk",
            "board rpi-zero-w has no sata bus (its disk buses: usb)",
        ),
        (
            "[[storage.disk]]\nlabel = \"usb\"\n\nwhole-disk = \"usb\"\n",
            Some(4),
            "storage.disk[0].whole-disk",
            "add `destroy = true`",
        ),
        (
            "[[storage.disk]]\nlabel = \"card\"\ndevice = \"/dev/mmcblk0\"\nfilesystem = \"raw\"\ndestroy = true\n",
            Some(3),
            "storage.disk[0].device",
            "boots from",
        ),
        (
            "[storage]\ncard = [\"ext4\"]\n[storage.random]\ntargets = [\"raw\"]\n",
            Some(4),
            "storage.random.targets",
            "`raw` is not the label",
        ),
        (
            "extends = \"fast\"\n",
            Some(1),
            "extends",
            "not a preset; use one of standard, quick, seeds",
        ),
        (
            "[[storage.disk]]\nlabel = \"ext4\"\ndevice = \"LABEL=X\"\nfilesystem = \"ext4\"\n",
            Some(2),
            "storage.disk[0].label",
            "already a target's label",
        ),
    ];
    for (text, line, key, why) in cases {
        let e = run(text).unwrap_err();
        assert_eq!(e.file, "my.toml", "{text}");
        assert_eq!(e.line, line, "{text}: {e}");
        assert!(e.key.starts_with(key), "{text}: key {} in {e}", e.key);
        assert!(e.message.contains(why), "{text}: {e}");
    }
}

#[test]
fn network_and_storage_switch_off() {
    let p = run("[storage]\nenabled = false\n[network]\nenabled = false\n").unwrap();
    assert!(p.storage.targets.is_empty());
    assert!(p.storage.device_reads.is_none() && p.storage.random.is_none());
    assert!(!p.storage.verify);
    assert!(p.network.tests.is_none());
    let p = run("[network]\nduration = \"3 s\"\nstreams = [2]\n").unwrap();
    let t = p.network.tests.unwrap();
    assert_eq!((t.duration_ms, t.streams), (3_000, vec![2]));
}

#[test]
fn commands_become_steps() {
    let p = run("[[command]]\nid = \"coremark\"\npath = \"bin/coremark\"\nargs = [\"-i\", \"10\"]\ntime-limit = \"5 min\"\n").unwrap();
    assert_eq!(
        p.commands,
        [CommandStep {
            id: "coremark".into(),
            path: "bin/coremark".into(),
            args: vec!["-i".into(), "10".into()],
            time_limit_ms: 300_000,
        }]
    );
    let e = run("[[command]]\nid = \"x\"\npath = \"/bin/sh\"\ntime-limit = \"1 s\"\n").unwrap_err();
    assert_eq!(e.to_string(), "my.toml:3: command[0].path: must be a path inside the results partition, e.g. bin/coremark");
}

#[test]
fn wired_links_resolve_with_their_defaults_and_refuse_what_cannot_be() {
    let p = run(
        "[[network.wired]]\nlink = \"usb-adapter\"\ntopology = \"lan\"\npeer = \"192.168.1.10\"\n\
         [[network.wired]]\nlink = \"builtin\"\nname = \"eth\"\n",
    )
    .unwrap();
    let w = &p.network.wired;
    assert_eq!(w.len(), 2);
    assert_eq!(w[0].name, "usb-eth");
    assert_eq!(w[0].drivers, crate::resolve::USB_ETHERNET_DRIVERS);
    assert_eq!(
        w[0].topology,
        Topology::Lan {
            peer: Some([192, 168, 1, 10])
        }
    );
    // The Zero W's image has no adapter drivers and no Ethernet: both say why, for PID 1
    // to record while the rest of the plan runs.
    assert!(w[0]
        .unavailable
        .as_ref()
        .unwrap()
        .contains("[usb-ethernet]"));
    assert!(w[1]
        .unavailable
        .as_ref()
        .unwrap()
        .contains("no built-in Ethernet"));
    // The second link's /30 follows the first's.
    assert_eq!(
        w[1].topology,
        Topology::Direct {
            subnet: [10, 57, 0, 4],
            lease_secs: 3600
        }
    );
    assert_eq!(w[1].link_wait_ms, 30_000);

    let mut img = image();
    img.usb_ethernet = Some(crate::resolve::UsbEthernetFacts {
        drivers: vec!["r8152".into(), "asix".into()],
    });
    img.ethernet = Some(crate::resolve::EthernetFacts {
        drivers: vec!["smsc95xx".into()],
        rated_mbit: Some(100),
    });
    let p = resolve(
        "my.toml",
        "[[network.wired]]\nlink = \"builtin\"\n[[network.wired]]\nlink = \"usb-adapter\"\ndrivers = [\"r8152\"]\nmac = \"AA:BB:CC:00:11:22\"\n",
        &base(),
        &img,
    )
    .unwrap();
    let w = &p.network.wired;
    assert_eq!(
        (w[0].drivers.clone(), w[0].rated_mbit),
        (vec!["smsc95xx".to_owned()], Some(100))
    );
    assert!(w.iter().all(|w| w.unavailable.is_none()));
    assert_eq!(w[1].mac.as_deref(), Some("aa:bb:cc:00:11:22"));

    for (text, key, says) in [
        (
            "[[network.wired]]\nlink = \"usb\"\n",
            "network.wired",
            "usb-adapter",
        ),
        (
            "[[network.wired]]\nlink = \"builtin\"\nmac = \"aa:bb\"\n",
            "network.wired[0].mac",
            "six hex bytes",
        ),
        (
            "[[network.wired]]\nlink = \"builtin\"\ntopology = \"star\"\n",
            "network.wired[0].topology",
            "\"lan\"",
        ),
        (
            "[[network.wired]]\nlink = \"builtin\"\npeer = \"10.0.0.1\"\n",
            "network.wired[0].peer",
            "topology = \"lan\"",
        ),
        (
            "[[network.wired]]\nlink = \"builtin\"\ntopology = \"lan\"\npeer = \"10.0.0\"\n",
            "network.wired[0].peer",
            "IPv4",
        ),
        (
            "[[network.wired]]\nlink = \"builtin\"\nsubnet = \"10.9.9.2\"\n",
            "network.wired[0].subnet",
            "multiple of 4",
        ),
        (
            "[[network.wired]]\nlink = \"builtin\"\n[[network.wired]]\nlink = \"builtin\"\n",
            "network.wired[1].name",
            "another link",
        ),
        (
            "[network]\nudp-bitrate = \"10 MB/s\"\n",
            "network.udp-bitrate",
            "Mbit/s",
        ),
    ] {
        let e = run(text).unwrap_err();
        assert!(e.key.starts_with(key), "{text}: {e}");
        assert!(e.to_string().contains(says), "{text}: {e}");
        assert!(e.line.is_some(), "{text}: {e}");
    }
}

#[test]
fn udp_load_comes_from_the_file() {
    let p = run("[network]\nudp-bitrate = \"250 Mbit/s\"\nudp-datagram = \"1 KiB\"\n").unwrap();
    let t = p.network.tests.unwrap();
    assert_eq!((t.udp_bitrate, t.udp_datagram_bytes), (250_000_000, 1024));
}

mod wifi {
    use super::*;
    use crate::{WifiBand, WifiRole, WifiSecurity};

    fn wifi(text: &str) -> crate::WifiPlan {
        run(text).unwrap().network.wifi.expect("a WiFi step")
    }

    #[test]
    fn a_radio_board_sweeps_1_6_11_as_ap_by_default() {
        let w = wifi("extends = \"quick\"\n");
        assert_eq!(
            w.role,
            WifiRole::AccessPoint {
                security: WifiSecurity::Wpa2Psk
            }
        );
        assert_eq!(w.country, "00");
        let names: Vec<&str> = w.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["wifi-ch1-20", "wifi-ch6-20", "wifi-ch11-20"]);
        assert_eq!(w.entries[0].ssid.as_deref(), Some("bb-rpi-zero-w-ch1-20"));
        assert!(w.entries.iter().all(|e| e.skip.is_none()));
        assert!(w.problems.is_empty());
        assert_eq!((w.warmup_ms, w.connect_wait_ms), (3000, 120_000));
        let off = run("[network.wifi]\nenabled = false\n").unwrap();
        assert!(off.network.wifi.is_none());
    }

    #[test]
    fn what_the_radio_lacks_is_skipped_with_the_reason() {
        let w = wifi(
            "[network.wifi]\ncountry = \"DE\"\nchannels = [{ band = \"2.4\", channel = 6, width = 20 }, { band = \"5\", channel = 36, width = 40 }, { band = \"2.4\", channel = 15, width = 20 }, { band = \"2.4\", channel = 6, width = 40 }]\n",
        );
        assert_eq!(w.entries[0].skip, None);
        let s = w.entries[1].skip.as_deref().unwrap();
        assert!(
            s.contains("no 5 GHz radio") && s.contains("CYW43438"),
            "{s}"
        );
        let s = w.entries[2].skip.as_deref().unwrap();
        assert!(s.contains("channel 15 is not a 2.4 GHz channel"), "{s}");
        let s = w.entries[3].skip.as_deref().unwrap();
        assert!(s.contains("cannot use 40 MHz"), "{s}");
        assert_eq!(w.entries[1].asked.unwrap().band, WifiBand::Ghz5);
    }

    #[test]
    fn bad_country_and_passphrase_are_problems_not_refusals() {
        let w = wifi("[network.wifi]\nrole = \"client\"\ncountry = \"XY\"\nssid = \"home\"\npassphrase = \"short\"\n");
        assert_eq!(w.problems.len(), 2, "{:?}", w.problems);
        assert!(
            w.problems[0].contains("`XY` is not a country code"),
            "{}",
            w.problems[0]
        );
        assert!(
            w.problems[1].contains("8 to 63") && w.problems[1].contains("has 5 characters"),
            "{}",
            w.problems[1]
        );
        let w = wifi("[network.wifi]\ncountry = \"de\"\n");
        assert!(
            w.problems[0].contains("upper case: \"DE\""),
            "{:?}",
            w.problems
        );
        let w = wifi("[network.wifi]\nrole = \"client\"\n");
        assert!(
            w.problems[0].contains("give the AP's `ssid`"),
            "{:?}",
            w.problems
        );
        let mut img = image();
        img.wifi = None;
        let w = resolve("my.toml", "[network.wifi]\n", &base(), &img)
            .unwrap()
            .network
            .wifi
            .unwrap();
        assert!(
            w.problems[0].contains("has no WiFi radio"),
            "{:?}",
            w.problems
        );
        assert!(resolve("my.toml", "extends = \"quick\"\n", &base(), &img)
            .unwrap()
            .network
            .wifi
            .is_none());
    }

    #[test]
    fn wrong_keys_for_the_role_are_refused_with_the_line() {
        let e = run("[network.wifi]\nrole = \"mesh\"\n").unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("network.wifi.role", Some(2)));
        assert!(e.message.contains("\"ap\""), "{e}");
        let e = run("[network.wifi]\n\nssid = \"home\"\n").unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("network.wifi.ssid", Some(3)));
        let e = run("[network.wifi]\nwarm-up = \"1 s\"\n").unwrap_err();
        assert!(e.message.contains("at least \"3 s\""), "{e}");
        let e = run("[network.wifi]\nchannels = [{ band = \"6\", channel = 1, width = 20 }]\n")
            .unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        let e = run("[network.wifi]\nchannels = [{ band = \"2.4\", channel = 1, width = 20 }, { band = \"2.4\", channel = 1, width = 20 }]\n").unwrap_err();
        assert!(e.message.contains("listed twice"), "{e}");
    }

    #[test]
    fn results_get_the_ssid_hash_and_no_passphrase() {
        let text = "[network.wifi]\nrole = \"client\"\nssid = \"home-net\"\npassphrase = \"correct horse\"\n";
        let p = run(text).unwrap();
        let r = p.redacted();
        let json = serde_json::to_string(&r).unwrap();
        assert!(
            !json.contains("home-net") && !json.contains("correct horse"),
            "{json}"
        );
        assert!(
            json.contains(&crate::wifi::ssid_hash(b"home-net")),
            "{json}"
        );
        assert_eq!(r.source.sha256, p.source.sha256);
        assert_eq!(crate::wifi::ssid_hash(b"home-net").len(), 16);
    }
}

#[test]
fn the_memory_step_is_on_by_default_tuned_by_memory_and_off_with_enabled_false() {
    let p = run("").unwrap();
    assert_eq!(p.memory, Some(crate::MemoryPlan::HARDWARE));
    let p = run(
        "[memory]\nsample = \"1 s\"\nsamples = 3\nlatency-max = \"16 MiB\"\nhuge-pages = false\n",
    )
    .unwrap();
    let m = p.memory.unwrap();
    assert_eq!(
        (m.sample_ms, m.samples, m.latency_max_bytes, m.huge_pages),
        (1000, 3, 16 << 20, false)
    );
    assert_eq!(
        m.latency_reads,
        crate::MemoryPlan::HARDWARE.latency_reads,
        "untouched keys keep the base's"
    );
    assert_eq!(run("[memory]\nenabled = false\n").unwrap().memory, None);
    let e = run("[memory]\nlatency-max = \"3 MiB\"\n").unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (Some(2), "memory.latency-max"));
    assert!(e.message.contains("not a power of two from 1 KiB"), "{e}");
    // The latency loops' addresses are 31 bits: 2 GiB is the largest block.
    assert!(run("[memory]\nlatency-max = \"2 GiB\"\n").is_ok());
    let e = run("[memory]\nlatency-max = \"4 GiB\"\n").unwrap_err();
    assert!(e.message.contains("to 2 GiB"), "{e}");
    let e = run("[memory]\nsampel = \"1 s\"\n").unwrap_err();
    assert!(e.to_string().contains("sampel"), "{e}");
}

#[test]
fn the_card_check_runs_only_when_enabled_and_refuses_a_bad_resolution() {
    assert_eq!(run("").unwrap().card_check, None, "off by default");
    let e = run("[card-check]\nresolution = \"1 MiB\"\n").unwrap_err();
    assert_eq!(e.key, "card-check.enabled");
    assert!(e.message.contains("enabled = true"), "{e}");
    assert_eq!(
        run("[card-check]\nenabled = false\n").unwrap().card_check,
        None
    );
    let c = run("[card-check]\nenabled = true\nresolution = \"4 MiB\"\ncache-flush = \"8 MiB\"\n")
        .unwrap()
        .card_check
        .unwrap();
    assert_eq!(
        (c.resolution_bytes, c.cache_flush_bytes, c.time_limit_ms),
        (
            4 << 20,
            8 << 20,
            crate::CardCheckPlan::HARDWARE.time_limit_ms
        )
    );
    assert!(!c.full, "the whole-card pass is asked for");
    let c = run("[card-check]\nenabled = true\nfull = true\ntime-limit = \"2 h\"\n")
        .unwrap()
        .card_check
        .unwrap();
    assert!(c.full);
    assert_eq!(c.time_limit_ms, 2 * 3600 * 1000);
    // A plan written before the key reads without it.
    let mut v = serde_json::to_value(c).unwrap();
    v.as_object_mut().unwrap().remove("full");
    let old: crate::CardCheckPlan = serde_json::from_value(v).unwrap();
    assert!(!old.full);
    let e = run("[card-check]\nenabled = true\nresolution = \"3 MiB\"\n").unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (Some(3), "card-check.resolution"));
    assert!(e.message.contains("power of two from 4 KiB"), "{e}");
    let steps: Vec<String> =
        crate::estimate::estimate(&run("[card-check]\nenabled = true\n").unwrap())
            .into_iter()
            .map(|s| s.step)
            .collect();
    assert!(steps.contains(&"card-check".to_owned()), "{steps:?}");
}

#[test]
fn image_facts_before_disk_signatures_read_as_none_recorded() {
    let mut v = serde_json::to_value(image()).unwrap();
    assert_eq!(v["disk_signature"], 0x1a2b_3c4d);
    v.as_object_mut().unwrap().remove("disk_signature");
    let old: ImageFacts = serde_json::from_value(v).unwrap();
    assert_eq!(old.disk_signature, 0);
    assert_eq!(old.boot_disk, "mmcblk0");
}

/// A plan file with one `[[storage.disk]]` (device on line 3); the error it gets.
fn one_disk(device: &str, fs: &str) -> PlanFileError {
    let text = format!(
        "[[storage.disk]]\nlabel = \"bad\"\ndevice = \"{device}\"\nfilesystem = \"{fs}\"\n\
         destroy = true\n"
    );
    run(&text).expect_err(&text)
}

#[test]
fn the_boot_disk_spelled_five_ways_is_refused_naming_file_line_key_and_fix() {
    for device in [
        "/dev/mmcblk0",
        "/dev/./mmcblk0",
        "//dev//mmcblk0",
        "/dev/../dev/mmcblk0",
        "/dev/mmcblk0/",
    ] {
        let e = one_disk(device, "raw");
        assert_eq!(
            (e.file.as_str(), e.line, e.key.as_str()),
            ("my.toml", Some(3), "storage.disk[0].device"),
            "{device}: {e}"
        );
        assert!(
            e.message.starts_with(&format!("`{device}`"))
                && e.message.contains("the disk the board boots from")
                && e.message.contains("BUS=usb"),
            "{device}: {e}"
        );
        if device != "/dev/mmcblk0" {
            assert!(e.message.contains("(that is /dev/mmcblk0)"), "{e}");
        }
        let shown = e.to_string();
        assert!(
            shown.starts_with("my.toml:3: storage.disk[0].device: `"),
            "{shown}"
        );
    }
}

#[test]
fn the_cards_boot_and_results_partitions_are_refused_by_path_and_label() {
    let cases = [
        ("/dev/mmcblk0p1", "vfat", "boot partition (p1, BOOT)"),
        ("/dev//mmcblk0p1/", "ext4", "(that is /dev/mmcblk0p1)"),
        (
            "/dev/mmcblk0p2",
            "vfat",
            "results partition (p2, BBRESULTS)",
        ),
        (
            "/dev/./mmcblk0p2",
            "ext4",
            "the partition the results are saved on",
        ),
        ("LABEL=BOOT", "vfat", "the FAT the board boots from"),
        (
            "LABEL=BBRESULTS",
            "vfat",
            "the partition the results are saved on",
        ),
        (
            "/dev/mmcblk0p7",
            "raw",
            "a partition of the disk the board boots from",
        ),
        ("/dev/disk/by-label/BBRESULTS", "vfat", "no udev"),
        (
            "/dev/disk/by-id/usb-SanDisk-0:0",
            "raw",
            "/dev/disk/by-* links",
        ),
    ];
    for (device, fs, why) in cases {
        let e = one_disk(device, fs);
        assert_eq!(e.line, Some(3), "{device}: {e}");
        assert_eq!(e.key, "storage.disk[0].device", "{device}: {e}");
        assert!(e.message.contains(why), "{device}: {e}");
        assert!(
            e.message.contains("storage.card") || e.message.contains("kernel name"),
            "the fix: {e}"
        );
    }
    // A test partition of the card, and a USB disk, by a roundabout path: accepted,
    // kept normalised.
    let p = run(
        "[[storage.disk]]\nlabel = \"usb\"\ndevice = \"/dev/./sda1/\"\nfilesystem = \"ext4\"\n",
    )
    .unwrap();
    let usb = p.storage.targets.iter().find(|t| t.label == "usb").unwrap();
    assert_eq!(usb.device, "/dev/sda1");
}

#[test]
fn two_targets_on_one_place_are_refused_naming_both() {
    let cases = [
        // The card's ext4 partition (storage.card) again, as a disk.
        (
            "[storage]\ncard = [\"ext4\"]\n[[storage.disk]]\nlabel = \"again\"\n\
             device = \"/dev/mmcblk0p7\"\nfilesystem = \"ext4\"\n",
            5,
            "target `ext4` (/dev/mmcblk0p7)",
        ),
        (
            "[[storage.disk]]\nlabel = \"a\"\ndevice = \"/dev/sda1\"\nfilesystem = \"ext4\"\n\
             [[storage.disk]]\nlabel = \"b\"\ndevice = \"//dev/sda1/\"\nfilesystem = \"ext4\"\n",
            7,
            "target `a` (/dev/sda1)",
        ),
        (
            "[[storage.disk]]\nlabel = \"a\"\ndevice = \"LABEL=BBUSB\"\nfilesystem = \"ext4\"\n\
             [[storage.disk]]\nlabel = \"b\"\ndevice = \"LABEL=BBUSB\"\nfilesystem = \"vfat\"\n",
            7,
            "target `a` (LABEL=BBUSB)",
        ),
        (
            "[[storage.disk]]\nlabel = \"a\"\ndevice = \"/dev/sda\"\nfilesystem = \"raw\"\n\
             destroy = true\n[[storage.disk]]\nlabel = \"b\"\ndevice = \"/dev/sda2\"\n\
             filesystem = \"ext4\"\n",
            8,
            "target `a` (/dev/sda)",
        ),
        (
            "[[storage.disk]]\nlabel = \"a\"\nwhole-disk = \"usb\"\ndestroy = true\n\
             [[storage.disk]]\nlabel = \"b\"\nwhole-disk = \"usb\"\ndestroy = true\n",
            7,
            "target `a` (BUS=usb)",
        ),
    ];
    for (text, line, other) in cases {
        let e = run(text).expect_err(text);
        assert_eq!(e.file, "my.toml");
        assert_eq!(e.line, Some(line), "{text}: {e}");
        let key_ok = e.key.ends_with("].device") || e.key.ends_with("].whole-disk");
        assert!(e.key.starts_with("storage.disk[") && key_ok, "{e}");
        assert!(
            e.message.contains(other) && e.message.contains("keep one"),
            "{text}: {e}"
        );
    }
}

#[test]
fn energy_defaults_by_tier_and_keys_override_them() {
    // A hardware image: 30 s idle phases, the sync patterns in 1 s slots.
    let p = run("extends = \"quick\"\n").unwrap();
    assert_eq!(p.energy, crate::EnergyPlan::HARDWARE);
    // A QEMU image: 0.5 s and 0.25 s.
    let mut q = base();
    q.emulated = true;
    let p = resolve("my.toml", "extends = \"quick\"\n", &q, &image()).unwrap();
    assert_eq!(p.energy, crate::EnergyPlan::QEMU);
    assert_eq!((p.energy.idle_ms, p.energy.slot_ms), (500, 250));
    // The file's keys win; "0 s" turns the idle phases off.
    let p = run("[energy]\nidle = \"0 s\"\nsync-slot = \"250 ms\"\n").unwrap();
    assert_eq!(p.energy.idle_ms, 0);
    assert_eq!(p.energy.slot_ms, 250);
    assert!(p.energy.sync);
    let p = run("[energy]\nsync = false\nidle = \"0s\"\n").unwrap();
    assert!(p.energy.is_off());
    // What the file set, the JSON plan carries and reads back.
    let p = run("[energy]\nidle = \"45 s\"\n").unwrap();
    let back = Plan::from_json(&serde_json::to_string(&p).unwrap()).unwrap();
    assert_eq!(back.energy.idle_ms, 45_000);
}

#[test]
fn energy_refusals_name_line_and_key() {
    let e = run("extends = \"quick\"\n\n[energy]\nidle = \"11 min\"\n").unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (Some(4), "energy.idle"), "{e}");
    assert!(e.message.contains("10 min"), "{e}");
    let e = run("[energy]\nsync = true\nsync-slot = \"50 ms\"\n").unwrap_err();
    assert_eq!(
        (e.line, e.key.as_str()),
        (Some(3), "energy.sync-slot"),
        "{e}"
    );
    assert!(e.message.contains("100 ms"), "{e}");
    let e = run("[energy]\nsync-slot = \"11 s\"\n").unwrap_err();
    assert_eq!(e.key, "energy.sync-slot", "{e}");
    let e = run("[energy]\nidle = 30\n").unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (Some(2), "energy.idle"), "{e}");
    let e = run("[energy]\nidle = \"1 s\"\nslot = \"1 s\"\n").unwrap_err();
    assert_eq!(e.line, Some(3), "{e}");
    assert!(e.message.contains("unknown field"), "{e}");
    let e = run("[energy]\n\nsensor = \"ina226 i2c-1 0x40\"\n").unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (Some(3), "energy.sensor"), "{e}");
    assert!(e.message.contains("axp20x-usb"), "{e}");
    let e = run("[energy]\nsensor = \"ina226 i2c-1 0x99 0.1ohm\"\n").unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (Some(2), "energy.sensor"), "{e}");
    assert!(e.message.contains("7-bit"), "{e}");
    // A sensor named is kept in its canonical spelling; "" is none.
    let p = run("[energy]\nsensor = \"ina226  i2c-1 0x40 100mohm\"\n").unwrap();
    assert_eq!(p.energy.sensor.as_deref(), Some("ina226 i2c-1 0x40 0.1ohm"));
    let p = run("[energy]\nsensor = \"axp20x-usb\"\nidle = \"0 s\"\nsync = false\n").unwrap();
    assert_eq!(p.energy.sensor.as_deref(), Some("axp20x-usb"));
    assert!(!p.energy.is_off());
    let p = run("[energy]\nsensor = \"\"\n").unwrap();
    assert_eq!(p.energy.sensor, None);
}

#[test]
fn a_json_plan_out_of_energy_bounds_is_refused_with_its_field() {
    let mut p = base();
    p.energy = crate::EnergyPlan {
        slot_ms: 20,
        ..crate::EnergyPlan::HARDWARE
    };
    match p.validate() {
        Err(crate::PlanError::Invalid { field, .. }) => assert_eq!(field, "energy.slot_ms"),
        other => panic!("{other:?}"),
    }
    // An older plan's JSON (no `energy`) reads, and runs none.
    let mut v = serde_json::to_value(base()).unwrap();
    v.as_object_mut().unwrap().remove("energy");
    let old = Plan::from_json(&v.to_string()).unwrap();
    assert!(old.energy.is_off());
}
