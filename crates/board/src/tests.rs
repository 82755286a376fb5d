//! Board parsing and validation tests, including every shipped board file.

use super::*;

fn zero_w_text() -> String {
    std::fs::read_to_string(boards_dir().join("rpi-zero-w.toml")).unwrap()
}

fn shared() -> Shared {
    Shared::load(&boards_dir()).unwrap()
}

fn parse(text: &str) -> Result<Board, BoardError> {
    Board::from_toml(Path::new("boards/rpi-zero-w.toml"), text, &shared())
}

#[test]
fn every_shipped_board_file_loads() {
    let names = list(&boards_dir()).unwrap();
    assert!(names.contains(&"rpi-zero-w".to_owned()), "{names:?}");
    assert!(!names.contains(&"shared".to_owned()), "{names:?}");
    for name in &names {
        let board = load(&boards_dir(), name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&board.name, name);
        // Hardware boards (a loader on the card) say where the console and the USB
        // device port are; emulated ones need neither.
        let hardware = board.loader.is_some();
        assert_eq!(board.serial.is_some(), hardware, "{name}: [serial]");
        if let Some(g) = &board.gadget {
            assert_eq!(g.port.is_some(), hardware, "{name}: gadget.port");
        }
    }
}

/// Every board names its LAVA device type; benchboot ships templates for the three
/// boards lava-server 2023.01 lacks, and only those.
#[test]
fn lava_device_types_and_benchboot_s_own_templates() {
    let mut own = Vec::new();
    for name in list(&boards_dir()).unwrap() {
        let b = load(&boards_dir(), &name).unwrap();
        if let Some(t) = &b.lava.template {
            assert!(t.ends_with(format!("lava/{}.jinja2", b.lava.device_type)));
            own.push(b.lava.device_type.clone());
        }
        if b.loader.is_none() {
            assert_eq!(b.lava.device_type, "qemu", "{name}");
        }
    }
    own.sort();
    assert_eq!(
        own,
        [
            "bcm2835-rpi-zero-w",
            "bcm2837-rpi-zero-2-w",
            "sun7i-a20-bananapi"
        ]
    );
    let text = zero_w_text().replace(
        "device-type = \"bcm2835-rpi-zero-w\"",
        "device-type = \"rpi zero\"",
    );
    let e = parse(&text).unwrap_err().to_string();
    assert!(
        e.contains("lava.device-type") && e.contains("`rpi zero`"),
        "{e}"
    );
}

#[test]
fn zero_w_console_pins_and_usb_port() {
    let b = parse(&zero_w_text()).unwrap();
    assert_eq!(
        b.serial,
        Some(Serial {
            pins: "header pin 8 (GPIO14, TXD), pin 10 (GPIO15, RXD), pin 6 (GND)".into(),
            volts: 3.3
        })
    );
    assert_eq!(
        b.gadget.unwrap().port.as_deref(),
        Some(
            "the micro-USB port marked USB, not the one marked PWR IN (this one cable also \
             powers the board)"
        )
    );
}

#[test]
fn missing_or_invalid_serial_and_port_are_named() {
    let refused = |text: &str, field: &str, words: &str| {
        let err = parse(text).unwrap_err().to_string();
        assert!(err.contains("boards/rpi-zero-w.toml"), "{err}");
        assert!(err.contains(field), "{field}: {err}");
        assert!(err.contains(words), "{field}: {err}");
    };
    let without = |prefix: &str| {
        zero_w_text()
            .lines()
            .filter(|l| !l.starts_with(prefix))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // A hardware board without the table or the port.
    let no_serial = without("pins =")
        .replace("[serial]\n", "")
        .replace("volts = 3.3\n", "");
    refused(&no_serial, "field `serial`", "add a [serial] table");
    refused(&without("port ="), "field `gadget.port`", "which connector");
    // A table without one of its fields: the parser names it.
    refused(&without("volts ="), "serial", "missing field `volts`");
    refused(&without("pins ="), "serial", "missing field `pins`");
    // Values that cannot be right.
    let volts = zero_w_text().replace("volts = 3.3", "volts = 12.0");
    refused(&volts, "field `serial.volts`", "1.8, 3.3 or 5");
    let volts = zero_w_text().replace("volts = 3.3", "volts = \"3.3 V\"");
    refused(&volts, "volts", "invalid type");
    let pins = zero_w_text().replace(
        "pins = \"header pin 8 (GPIO14, TXD), pin 10 (GPIO15, RXD), pin 6 (GND)\"",
        "pins = \" \"",
    );
    refused(&pins, "field `serial.pins`", "TX, RX and GND");
    let port = zero_w_text().replace(
        "port = \"the micro-USB port marked USB",
        "port = \"\\nthe micro-USB port marked USB",
    );
    refused(&port, "field `gadget.port`", "one line");
    // Emulated boards need neither.
    let virt = std::fs::read_to_string(boards_dir().join("qemu-virt-arm64.toml")).unwrap();
    let b = Board::from_toml(Path::new("boards/qemu-virt-arm64.toml"), &virt, &shared()).unwrap();
    assert!(b.serial.is_none() && b.gadget.unwrap().port.is_none());
}

#[test]
fn zero_w_fields() {
    let b = parse(&zero_w_text()).unwrap();
    assert_eq!(b.triple, "arm-unknown-linux-musleabihf");
    assert_eq!(b.arch, Arch::Arm);
    assert_eq!(b.zig_triple, "arm-linux-musleabihf");
    assert_eq!(b.kernel.dtb.as_deref(), Some("bcm2835-rpi-zero-w.dtb"));
    assert_eq!(
        b.kernel.dtb_fixups[0],
        DtbFixup::Set {
            node: "/soc/usb@7e980000".into(),
            property: "dr_mode".into(),
            value: "peripheral".into()
        }
    );
    assert_eq!(
        (b.kernel.flavour.as_str(), b.kernel.arch.as_str()),
        ("rpi", "armel")
    );
    assert_eq!(b.kernel.package, "linux-image-6.1.0-50-rpi");
    let l = b.loader.as_ref().unwrap();
    assert_eq!(l.files, ["bootcode.bin", "start.elf", "fixup.dat"]);
    assert_eq!(l.config, BootConfig::ConfigTxt);
    assert_eq!(b.boot.cmdline, "console=ttyS1,115200 loglevel=4 rootwait");
    assert_eq!(
        b.modules,
        [
            "crc32c_generic",
            "ext4",
            "vfat",
            "nls_cp437",
            "nls_ascii",
            "cpufreq-dt",
            "raspberrypi-cpufreq",
            "raspberrypi-hwmon"
        ],
        "@filesystems then @health-rpi, expanded in order"
    );
    assert_eq!(
        b.gadget.as_ref().unwrap().modules,
        ["usb_f_ncm", "usb_f_ecm", "usb_f_rndis"]
    );
    assert_eq!(b.results_link(), "USB gadget (NCM, ECM, RNDIS) + card");
    let g = b.gadget.as_ref().unwrap();
    assert_eq!(
        g.functions,
        [
            GadgetFunction::Ncm,
            GadgetFunction::Ecm,
            GadgetFunction::Rndis
        ]
    );
    let q = b.qemu.unwrap();
    assert_eq!(q.machine, "raspi0");
    assert_eq!(q.console_serial_index, 1);
    assert_eq!(q.network, QemuNetwork::UsbNet);
}

#[test]
fn unknown_field_is_named() {
    let text = zero_w_text().replace("[storage]\n", "[storage]\ncolour = \"red\"\n");
    let err = parse(&text).unwrap_err().to_string();
    assert!(err.contains("boards/rpi-zero-w.toml"), "{err}");
    assert!(err.contains("colour"), "{err}");
}

#[test]
fn arch_mismatch_is_refused() {
    let text = zero_w_text().replace("flavour = \"rpi\"", "flavour = \"arm64\"");
    let err = parse(&text).unwrap_err().to_string();
    assert!(err.contains("kernel.flavour"), "{err}");
    assert!(err.contains("armel, armhf"), "{err}");
    let text = zero_w_text().replace("flavour = \"rpi\"", "flavour = \"rpi5\"");
    let err = parse(&text).unwrap_err().to_string();
    assert!(err.contains("arm64, armmp, rpi"), "{err}");
}

#[test]
fn unknown_triple_lists_known_ones() {
    let text = zero_w_text().replace(
        "triple = \"arm-unknown-linux-musleabihf\"",
        "triple = \"riscv64gc-unknown-linux-musl\"",
    );
    let err = parse(&text).unwrap_err().to_string();
    assert!(err.contains("target.triple"), "{err}");
    assert!(err.contains("aarch64-unknown-linux-musl"), "{err}");
}

#[test]
fn name_must_match_file() {
    let err = Board::from_toml(Path::new("boards/other.toml"), &zero_w_text(), &shared())
        .unwrap_err()
        .to_string();
    assert!(err.contains("field `name`"), "{err}");
}

#[test]
fn module_with_ko_suffix_is_refused() {
    let text = zero_w_text().replace("\"@filesystems\"", "\"vfat.ko\"");
    let err = parse(&text).unwrap_err().to_string();
    assert!(err.contains("modules.load"), "{err}");
    let text = zero_w_text().replace("\"@filesystems\"", "\"@filesystem\"");
    let err = parse(&text).unwrap_err().to_string();
    assert!(
        err.contains("modules.load") && err.contains("no module set `filesystem`"),
        "{err}"
    );
    assert!(err.contains("@filesystems"), "{err}");
}

#[test]
fn config_txt_may_not_set_kernel() {
    let text = zero_w_text().replace("\"enable_uart=1\"", "\"kernel=zImage\"");
    let err = parse(&text).unwrap_err().to_string();
    assert!(err.contains("boot.config-txt"), "{err}");
}

#[test]
fn unknown_board_lists_known() {
    let err = load(&boards_dir(), "rpi-9").unwrap_err().to_string();
    assert!(err.contains("rpi-zero-w"), "{err}");
    // Files of boards/ that are not boards, and paths, are unknown boards too.
    for name in ["shared", "../boards/rpi-4b", "./rpi-4b"] {
        let err = load(&boards_dir(), name).unwrap_err();
        assert!(
            matches!(&err, BoardError::Unknown { name: n, .. } if n == name),
            "{name}: {err}"
        );
    }
}

#[test]
fn virt_board_has_no_firmware_or_dtb_and_tests_the_gadget_on_dummy_hcd() {
    let b = load(&boards_dir(), "qemu-virt-arm64").unwrap();
    assert!(b.loader.is_none() && b.kernel.dtb.is_none());
    assert_eq!(b.arch, Arch::Aarch64);
    let q = b.qemu.unwrap();
    assert_eq!(
        (q.network, q.drive),
        (QemuNetwork::VirtioNet, QemuDrive::Virtio)
    );
    assert!(q.gadget_dummy_hcd);
}

#[test]
fn gadget_errors_name_the_field() {
    let dup = zero_w_text().replace(
        "functions = [\"ncm\", \"ecm\", \"rndis\"]",
        "functions = [\"ncm\", \"ncm\"]",
    );
    let err = parse(&dup).unwrap_err().to_string();
    assert!(
        err.contains("gadget.functions") && err.contains("twice"),
        "{err}"
    );
    let eem = zero_w_text().replace(
        "functions = [\"ncm\", \"ecm\", \"rndis\"]",
        "functions = [\"eem\"]",
    );
    let err = parse(&eem).unwrap_err().to_string();
    assert!(err.contains("`eem`"), "{err}");
    let no_gadget = zero_w_text()
        .replace("[gadget]", "[unused]")
        .replace("[unused]\n", "")
        .replace(
            "network = \"usb-net\"",
            "network = \"usb-net\"\ngadget = \"dummy-hcd\"",
        );
    let cut = no_gadget
        .lines()
        .filter(|l| {
            !l.starts_with("functions =")
                && !l.starts_with("modules = [\"@gadget")
                && !l.starts_with("port =")
        })
        .collect::<Vec<_>>()
        .join("\n");
    let err = parse(&cut).unwrap_err().to_string();
    assert!(err.contains("qemu.gadget"), "{err}");
}

#[test]
fn config_txt_needs_a_config_txt_loader() {
    let text = zero_w_text().replace("loader = \"raspi-firmware\"", "loader = \"u-boot-am335x\"");
    let err = parse(&text).unwrap_err().to_string();
    assert!(err.contains("boot.config-txt"), "{err}");
    let text = zero_w_text().replace("loader = \"raspi-firmware\"", "loader = \"grub\"");
    let err = parse(&text).unwrap_err().to_string();
    assert!(
        err.contains("boot.loader") && err.contains("u-boot-bananapi"),
        "{err}"
    );
}

#[test]
fn console_lives_in_boot_console_only() {
    let text = zero_w_text().replace("cmdline = \"", "cmdline = \"console=tty1 ");
    let err = parse(&text).unwrap_err().to_string();
    assert!(
        err.contains("boot.cmdline") && err.contains("boot.console"),
        "{err}"
    );
}

#[test]
fn dtb_fixup_needs_exactly_one_action() {
    let text = zero_w_text().replace(
        "value = \"peripheral\"",
        "value = \"peripheral\"\ndelete-node = true",
    );
    let err = parse(&text).unwrap_err().to_string();
    assert!(
        err.contains("kernel.dtb-fixups") && err.contains("one of the three"),
        "{err}"
    );
    let text = zero_w_text().replace(
        "property = \"dr_mode\"\nvalue = \"host\"",
        "delete-property = \"dr_mode\"",
    );
    let b = parse(&text).unwrap();
    assert_eq!(
        b.qemu.unwrap().dtb_fixups,
        [DtbFixup::DeleteProperty {
            node: "/soc/usb@7e980000".into(),
            property: "dr_mode".into()
        }]
    );
}

#[test]
fn u_boot_boards_use_extlinux_and_raw_blobs() {
    let bpi = load(&boards_dir(), "bananapi-m1").unwrap();
    let l = bpi.loader.as_ref().unwrap();
    assert_eq!(l.config, BootConfig::Extlinux);
    assert_eq!(
        l.raw,
        [RawBlob {
            file: "u-boot-sunxi-with-spl.bin".into(),
            offset: 8192
        }]
    );
    assert_eq!(bpi.extra_storage[0].bus, StorageBus::Sata);
    let q = bpi.qemu.as_ref().unwrap();
    assert_eq!((q.boot, q.network), (QemuBoot::Card, QemuNetwork::None));
    assert_eq!(
        q.loader.as_ref().unwrap().dir,
        "usr/lib/u-boot/Bananapi_M2_Ultra"
    );
    let bbb = load(&boards_dir(), "beaglebone-black").unwrap();
    assert_eq!(bbb.loader.as_ref().unwrap().files, ["MLO", "u-boot.img"]);
    assert!(bbb.qemu.is_none() && bbb.qemu_note.is_some());
    let pi3 = load(&boards_dir(), "rpi-3b").unwrap();
    assert_eq!(pi3.results_link(), "Ethernet (eth0) + card");
    assert_eq!(
        pi3.ethernet.unwrap().modules,
        ["phy-generic", "dwc2", "smsc95xx"]
    );
}

fn rpi_3b_text() -> String {
    std::fs::read_to_string(boards_dir().join("rpi-3b.toml")).unwrap()
}

fn parse_3b(text: &str) -> Result<Board, BoardError> {
    Board::from_toml(Path::new("boards/rpi-3b.toml"), text, &shared())
}

/// `text`'s parse error, which must name the file, `field` and `words`.
fn refused_3b(text: &str, field: &str, words: &str) {
    let err = parse_3b(text).unwrap_err().to_string();
    assert!(err.contains("boards/rpi-3b.toml"), "{err}");
    assert!(err.contains(field), "{field}: {err}");
    assert!(err.contains(words), "{field}: {err}");
}

#[test]
fn ethernet_drivers_and_rating() {
    let pi3 = parse_3b(&rpi_3b_text()).unwrap();
    assert_eq!(
        pi3.ethernet,
        Some(Ethernet {
            interface: "eth0".into(),
            modules: vec!["phy-generic".into(), "dwc2".into(), "smsc95xx".into()],
            drivers: vec!["smsc95xx".into()],
            rated_mbit: 100,
        })
    );
    assert_eq!(
        pi3.results_ethernet().map(|e| e.interface.as_str()),
        Some("eth0")
    );
    let pi4 = load(&boards_dir(), "rpi-4b").unwrap();
    let e = pi4.ethernet.as_ref().unwrap();
    assert_eq!(
        (e.drivers.as_slice(), e.rated_mbit),
        (["bcmgenet".to_owned()].as_slice(), 1000)
    );
    assert_eq!(e.modules, ["broadcom", "mdio-bcm-unimac", "genet"]);
    // With a gadget, the gadget carries the results: the Ethernet is a link to measure.
    assert!(pi4.results_ethernet().is_none());
    assert_eq!(pi4.results_link(), "USB gadget (NCM, ECM, RNDIS) + card");
    assert_eq!(
        pi4.wired_links(),
        "Ethernet 1000 Mbit/s (bcmgenet) + USB adapters"
    );
    let bpi = load(&boards_dir(), "bananapi-m1").unwrap();
    assert_eq!(bpi.ethernet.as_ref().unwrap().drivers, ["sun7i-dwmac"]);
    let bbb = load(&boards_dir(), "beaglebone-black").unwrap();
    let e = bbb.ethernet.as_ref().unwrap();
    assert_eq!((e.drivers[0].as_str(), e.rated_mbit), ("cpsw-switch", 100));
}

#[test]
fn ethernet_errors_name_the_file_and_field() {
    let text = rpi_3b_text();
    refused_3b(
        &text.replace("rated-mbit = 100", "rated-mbit = 0"),
        "field `ethernet.rated-mbit`",
        "`0` is not an Ethernet link speed",
    );
    refused_3b(
        &text.replace("rated-mbit = 100", "rated-mbit = 1001"),
        "field `ethernet.rated-mbit`",
        "10, 100, 1000, 2500, 5000, 10000",
    );
    refused_3b(
        &text.replace("rated-mbit = 100", "rated-mbit = \"100M\""),
        "rated-mbit",
        "invalid type",
    );
    refused_3b(
        &text.replace("rated-mbit = 100\n", ""),
        "ethernet",
        "missing field `rated-mbit`",
    );
    let ethernet_drivers = "drivers = [\"smsc95xx\"]";
    assert!(text.contains(ethernet_drivers));
    refused_3b(
        &text.replace(ethernet_drivers, "drivers = []"),
        "field `ethernet.drivers`",
        "/sys/class/net/<if>/device/driver",
    );
    refused_3b(
        &text.replace(ethernet_drivers, "drivers = [\"smsc95xx\", \"smsc95xx\"]"),
        "field `ethernet.drivers`",
        "listed twice",
    );
    refused_3b(
        &text.replace(ethernet_drivers, "drivers = [\"bus/usb/smsc95xx\"]"),
        "field `ethernet.drivers`",
        "as sysfs shows it",
    );
    refused_3b(
        &text.replace(&format!("{ethernet_drivers}\n"), ""),
        "ethernet",
        "missing field `drivers`",
    );
    refused_3b(
        &text.replace("rated-mbit = 100", "rated-mbit = 100\nspeed = 100"),
        "unknown field `speed`",
        "`interface`, `modules`, `drivers`, `rated-mbit`",
    );
}

#[test]
fn usb_ethernet_modules_drivers_and_port() {
    let pi3 = parse_3b(&rpi_3b_text()).unwrap();
    let u = pi3.usb_ethernet.unwrap();
    assert_eq!(
        u.modules,
        [
            "phy-generic",
            "dwc2",
            "smsc75xx",
            "ax88179_178a",
            "r8152",
            "asix",
            "cdc_ether",
            "cdc_ncm"
        ],
        "@dwc2 then @usb-ethernet, expanded in order"
    );
    assert_eq!(u.drivers.len(), 6);
    assert!(u.port.contains("USB-A"), "{}", u.port);
    // The Zero W's one data port is the gadget's: no adapters.
    let zero = parse(&zero_w_text()).unwrap();
    assert!(zero.usb_ethernet.is_none() && zero.ethernet.is_none());
    assert_eq!(zero.wired_links(), "none");

    let text = rpi_3b_text();
    refused_3b(
        &text.replace("modules = [\"@dwc2\", \"@usb-ethernet\"]", "modules = []"),
        "field `usb-ethernet.modules`",
        "@usb-ethernet",
    );
    refused_3b(
        &text.replace("\"@usb-ethernet\"]", "\"@usb-ether\"]"),
        "field `usb-ethernet.modules`",
        "no module set `usb-ether`",
    );
    let usb_drivers = "drivers = [\"smsc75xx\", \"ax88179_178a\", \"r8152\", \"asix\", \"cdc_ether\", \"cdc_ncm\"]";
    assert!(text.contains(usb_drivers));
    refused_3b(
        &text.replace(usb_drivers, "drivers = []"),
        "field `usb-ethernet.drivers`",
        "PID 1 finds the interface by its driver",
    );
    refused_3b(
        &text.replace("port = \"one of the four", "port = \"\\none of the four"),
        "field `usb-ethernet.port`",
        "one line",
    );
    refused_3b(
        &text.replace("[usb-ethernet]\n", "[usb-ethernet]\nhubs = 1\n"),
        "unknown field `hubs`",
        "`modules`, `drivers`, `port`",
    );
}

#[test]
fn every_shipped_ethernet_has_drivers_and_a_rating() {
    let mut with_ethernet = Vec::new();
    for name in list(&boards_dir()).unwrap() {
        let b = load(&boards_dir(), &name).unwrap();
        if let Some(e) = &b.ethernet {
            assert!(!e.drivers.is_empty(), "{name}: ethernet.drivers");
            assert!(
                ETHERNET_RATES_MBIT.contains(&e.rated_mbit),
                "{name}: ethernet.rated-mbit {}",
                e.rated_mbit
            );
            assert!(!e.modules.is_empty(), "{name}: ethernet.modules");
            with_ethernet.push(name.clone());
        }
        if let Some(u) = &b.usb_ethernet {
            assert!(!u.drivers.is_empty(), "{name}: usb-ethernet.drivers");
            assert!(
                u.modules.iter().any(|m| m == "cdc_ncm"),
                "{name}: usb-ethernet.modules {:?}",
                u.modules
            );
        }
        // Without a gadget, the Ethernet is the results link; with one, it is measured.
        assert_eq!(
            b.results_ethernet().is_some(),
            b.gadget.is_none() && b.ethernet.is_some(),
            "{name}"
        );
    }
    assert_eq!(
        with_ethernet,
        [
            "bananapi-m1",
            "beaglebone-black",
            "rpi-1b",
            "rpi-2b",
            "rpi-3b",
            "rpi-4b"
        ]
    );
}

#[test]
fn shared_file_errors_name_the_entry() {
    let text = std::fs::read_to_string(boards_dir().join(SHARED_FILE)).unwrap();
    let bad = text.replace(
        "release = \"6.1.0-50-armmp\"",
        "release = \"6.1.0-51-armmp\"",
    );
    let err = Shared::from_toml(Path::new("boards/shared.toml"), &bad)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("boards/shared.toml") && err.contains("kernels.armmp"),
        "{err}"
    );
    let bad = text.replace("files = [\"MLO\", \"u-boot.img\"]", "files = [\"x/MLO\"]");
    let err = Shared::from_toml(Path::new("boards/shared.toml"), &bad)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("loaders.u-boot-am335x") && err.contains("bare file name"),
        "{err}"
    );
}

#[test]
fn an_unknown_kernel_or_loader_lists_the_known_ones() {
    let s = shared();
    let e = s.kernel("rpi5").unwrap_err();
    assert_eq!((e.what, e.name.as_str()), ("kernel flavour", "rpi5"));
    let known: Vec<&String> = s.kernels.keys().collect();
    assert_eq!(e.known.iter().collect::<Vec<_>>(), known);
    assert_eq!(
        e.to_string(),
        format!(
            "no kernel flavour `rpi5` in shared.toml; known: {}",
            e.known.join(", ")
        )
    );
    let e = s
        .expand_modules(&["@filesystems".into(), "@nosuch".into()])
        .unwrap_err();
    let ModuleListError::UnknownSet(u) = &e else {
        panic!("{e:?}")
    };
    assert_eq!((u.what, u.name.as_str()), ("module set", "nosuch"));
    assert!(e
        .to_string()
        .starts_with("`@nosuch`: no module set `nosuch` in shared.toml; known sets: @dwc2, "));
    assert_eq!(
        s.expand_modules(&["ext4.ko".into()]),
        Err(ModuleListError::BadName(
            "`ext4.ko`: give the module name without path or `.ko`".into()
        ))
    );
    let e = s.loader("grub").unwrap_err();
    assert_eq!((e.what, e.name.as_str()), ("boot loader", "grub"));
    assert!(e.known.iter().any(|l| l == "u-boot-am335x"), "{e}");
    assert!(s.kernel("armmp").is_ok() && s.loader("u-boot-am335x").is_ok());
}

mod catalog;
mod wifi;

#[test]
fn hardware_roots_are_required_and_checked() {
    let pi3 = parse_3b(&rpi_3b_text()).unwrap();
    let hw = pi3.hardware.unwrap();
    assert_eq!(
        hw.roots[0],
        ("card".to_string(), "/soc/mmc@7e202000".to_string())
    );
    assert!(hw
        .roots
        .iter()
        .any(|(r, n)| r == "radio" && n == "/soc/mmc@7e300000"));
    assert!(hw.roots.iter().any(|(r, _)| r == "usb-host"));
    assert!(hw.waive.iter().all(|w| !w.reason.is_empty()));
    // A hardware board without [hardware], a root that is not a path, a missing root
    // for a part the board has, a waiver without its reason.
    let text = rpi_3b_text();
    let start = text.find("[hardware]").unwrap();
    let end = start + text[start..].find("\n[").unwrap() + 1;
    let without = format!("{}{}", &text[..start], &text[end..]);
    refused_3b(&without, "hardware", "a hardware board needs [hardware]");
    refused_3b(
        &text.replace("card = \"/soc/mmc@7e202000\"", "card = \"mmc@7e202000\""),
        "hardware.card",
        "give the node's full path",
    );
    refused_3b(
        &text.replace("radio = \"/soc/mmc@7e300000\"\n", ""),
        "hardware.radio",
        "missing: name the DTB node",
    );
    refused_3b(
        &text.replace(
            "reason = \"a clock input of cprman taken by name, not a supplier it waits for; no display is used\" },\n]",
            "reason = \" \" },\n]",
        ),
        "hardware.waive",
        "a waiver needs its reason",
    );
}

#[test]
fn vcio_is_for_the_pis_with_a_hardware_dtb() {
    // The four Pis whose flavour (armmp, arm64) has neither vcio nor raspberrypi-hwmon.
    for name in ["rpi-2b", "rpi-3b", "rpi-4b", "rpi-zero-2-w"] {
        let text = std::fs::read_to_string(boards_dir().join(format!("{name}.toml"))).unwrap();
        let file = format!("boards/{name}.toml");
        let b = Board::from_toml(Path::new(&file), &text, &shared()).unwrap();
        assert!(b.vcio, "{name}");
    }
    // The rpi flavour has raspberrypi-hwmon; the Zero W does not ask for vcio.
    assert!(!parse(&zero_w_text()).unwrap().vcio);
    // A machine without a hardware DTB cannot: the field is named.
    let virt = std::fs::read_to_string(boards_dir().join("qemu-virt-arm64.toml")).unwrap();
    let virt = virt.replacen("\n[modules]\n", "\n[modules]\nvcio = true\n", 1);
    let err = Board::from_toml(Path::new("boards/qemu-virt-arm64.toml"), &virt, &shared())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("field `modules.vcio`") && err.contains("kernel.dtb"),
        "{err}"
    );
}

#[test]
fn optional_modules_are_listed_once_with_a_reason() {
    let text = rpi_3b_text();
    let hw = parse_3b(&text).unwrap().hardware.unwrap();
    // `@filesystems` expanded, each module with the entry's reason.
    let fs: Vec<&str> = (hw.optional_modules.iter())
        .filter(|o| o.why.starts_with("filesystems and their helpers"))
        .map(|o| o.module.as_str())
        .collect();
    assert_eq!(
        fs,
        ["crc32c_generic", "ext4", "vfat", "nls_cp437", "nls_ascii"]
    );
    assert!(hw.optional_modules.iter().any(|o| o.module == "brcmfmac"));
    let entry = "  { module = \"cpufreq-dt\", why = ";
    assert!(text.contains(entry));
    let with = |line: &str| text.replacen(entry, &format!("{line}\n{entry}"), 1);
    refused_3b(
        &with("  { module = \"bcm2835\", why = \"  \" },"),
        "hardware.optional-modules",
        "`bcm2835`: say why the check cannot catch its removal",
    );
    refused_3b(
        &with("  { module = \"genet\", why = \"x\" },"),
        "hardware.optional-modules",
        "`genet` is in none of the board's module lists",
    );
    refused_3b(
        &with("  { module = \"cpufreq_dt\", why = \"x\" },"),
        "hardware.optional-modules",
        "`cpufreq-dt` is declared twice: keep one entry",
    );
    refused_3b(
        &with("  { module = \"@nosuch\", why = \"x\" },"),
        "hardware.optional-modules",
        "no module set `nosuch`",
    );
    refused_3b(
        &with("  { module = \"bcm2835\", reason = \"x\" },"),
        "unknown field `reason`",
        "expected `module` or `why`",
    );
}
