//! Board parsing and validation tests, including every shipped board file.

use super::*;

fn zero_w_text() -> String {
    std::fs::read_to_string(boards_dir().join("rpi-zero-w.toml")).unwrap()
}

fn parse(text: &str) -> Result<Board, BoardError> {
    Board::from_toml(Path::new("boards/rpi-zero-w.toml"), text)
}

#[test]
fn every_shipped_board_file_loads() {
    let names = list(&boards_dir()).unwrap();
    assert!(names.contains(&"rpi-zero-w".to_owned()), "{names:?}");
    for name in &names {
        let board = load(&boards_dir(), name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&board.name, name);
    }
}

#[test]
fn zero_w_fields() {
    let b = parse(&zero_w_text()).unwrap();
    assert_eq!(b.triple, "arm-unknown-linux-musleabihf");
    assert_eq!(b.arch, Arch::Arm);
    assert_eq!(b.zig_triple, "arm-linux-musleabihf");
    assert_eq!(b.kernel.dtb.as_deref(), Some("bcm2835-rpi-zero-w.dtb"));
    assert_eq!(b.kernel.dtb_fixups[0].value, "peripheral");
    assert_eq!(
        b.firmware.as_ref().unwrap().files,
        ["bootcode.bin", "start.elf", "fixup.dat"]
    );
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
    let text = zero_w_text().replace("arch = \"armel\"", "arch = \"arm64\"");
    let err = parse(&text).unwrap_err().to_string();
    assert!(err.contains("kernel.arch"), "{err}");
    assert!(err.contains("armel, armhf"), "{err}");
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
    let err = Board::from_toml(Path::new("boards/other.toml"), &zero_w_text())
        .unwrap_err()
        .to_string();
    assert!(err.contains("field `name`"), "{err}");
}

#[test]
fn module_with_ko_suffix_is_refused() {
    let text = zero_w_text().replace("\"vfat\"", "\"vfat.ko\"");
    let err = parse(&text).unwrap_err().to_string();
    assert!(err.contains("modules.load"), "{err}");
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
}

#[test]
fn virt_board_has_no_firmware_or_dtb_and_tests_the_gadget_on_dummy_hcd() {
    let b = load(&boards_dir(), "qemu-virt-arm64").unwrap();
    assert!(b.firmware.is_none() && b.kernel.dtb.is_none());
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
        .filter(|l| !l.starts_with("functions =") && !l.starts_with("modules = [\"usb_f"))
        .collect::<Vec<_>>()
        .join("\n");
    let err = parse(&cut).unwrap_err().to_string();
    assert!(err.contains("qemu.gadget"), "{err}");
}
