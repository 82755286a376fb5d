//! `[wifi]`, `qemu.wifi` and shared.toml's `[radio]`: the shipped radios field by field,
//! and every bad value refused with the file and the field named.

use super::*;

fn board_text(name: &str) -> String {
    std::fs::read_to_string(boards_dir().join(format!("{name}.toml"))).unwrap()
}

fn parse_as(name: &str, text: &str) -> Result<Board, BoardError> {
    Board::from_toml(
        &Path::new("boards").join(format!("{name}.toml")),
        text,
        &shared(),
    )
}

/// `text` (a variant of board `name`'s file) is refused naming the file, `field`, `words`.
fn refused(name: &str, text: &str, field: &str, words: &str) {
    let err = parse_as(name, text).unwrap_err().to_string();
    assert!(err.contains(&format!("boards/{name}.toml")), "{err}");
    assert!(err.contains(field), "{field}: {err}");
    assert!(err.contains(words), "{field}: {err}");
}

const BRCMFMAC_MODULES: [&str; 7] = [
    "sdhci",
    "sdhci-pltfm",
    "sdhci-iproc",
    "rfkill",
    "cfg80211",
    "brcmutil",
    "brcmfmac",
];

#[test]
fn zero_w_radio_fields() {
    let b = parse(&zero_w_text()).unwrap();
    assert_eq!(
        b.wifi(),
        Some(&WifiRadio {
            chip: "CYW43438 (BCM43430/1)".into(),
            driver: "brcmfmac".into(),
            bands: vec![Band::Ghz2],
            widths_mhz: vec![20],
            streams: 1,
            firmware: vec![
                "brcm/brcmfmac43430-sdio.bin".into(),
                "brcm/brcmfmac43430-sdio.clm_blob".into(),
                "brcm/brcmfmac43430-sdio.raspberrypi,model-zero-w.txt".into(),
            ],
            modules: BRCMFMAC_MODULES.map(String::from).to_vec(),
            firmware_missing: None,
            firmware_links: Vec::new(),
        })
    );
    assert_eq!(b.wifi_summary(), "CYW43438 (BCM43430/1), 2.4 GHz");
    // The radio's files come from shared.toml's [radio]; the Zero W's QEMU has none.
    let r = b.radio_packages.as_ref().unwrap();
    assert_eq!(
        r.firmware_packages,
        ["firmware-brcm80211", "raspi-firmware"]
    );
    assert_eq!(r.regulatory.package, "wireless-regdb");
    assert_eq!(
        r.regulatory
            .files
            .get("regulatory.db.p7s")
            .map(String::as_str),
        Some("lib/firmware/regulatory.db.p7s-debian")
    );
    assert_eq!(b.qemu.unwrap().wifi, QemuWifi::None);
}

#[test]
fn pi4_is_dual_band_to_80_mhz_and_zero_2_w_says_what_is_missing() {
    let pi4 = load(&boards_dir(), "rpi-4b").unwrap();
    let w = pi4.wifi().unwrap();
    assert_eq!(w.chip, "CYW43455 (BCM4345/6)");
    assert_eq!(
        (w.bands.as_slice(), w.widths_mhz.as_slice(), w.streams),
        (
            [Band::Ghz2, Band::Ghz5].as_slice(),
            [20, 40, 80].as_slice(),
            1
        )
    );
    assert_eq!(
        w.firmware,
        [
            "brcm/brcmfmac43455-sdio.bin",
            "brcm/brcmfmac43455-sdio.clm_blob",
            "brcm/brcmfmac43455-sdio.raspberrypi,4-model-b.txt"
        ]
    );
    assert_eq!(pi4.wifi_summary(), "CYW43455 (BCM4345/6), 2.4 + 5 GHz");
    // sdhci-iproc is in @sd-bcm2835 too: the set keeps its first place.
    assert_eq!(w.modules, BRCMFMAC_MODULES);
    let pi3 = load(&boards_dir(), "rpi-3b").unwrap();
    assert_eq!(
        pi3.wifi().unwrap().firmware[2],
        "brcm/brcmfmac43430-sdio.raspberrypi,3-model-b.txt"
    );
    let z2 = load(&boards_dir(), "rpi-zero-2-w").unwrap();
    let w = z2.wifi().unwrap();
    // The board's own NVRAM name, read from the 3 B's file (wifi.firmware-links).
    assert_eq!(
        w.firmware[2],
        "brcm/brcmfmac43430-sdio.raspberrypi,model-zero-2-w.txt"
    );
    assert_eq!(
        w.source_name(&w.firmware[2]),
        "brcm/brcmfmac43430-sdio.raspberrypi,3-model-b.txt"
    );
    let missing = w.firmware_missing.as_deref().unwrap();
    assert!(
        missing.contains("BCM43430/2") && missing.contains("brcm/brcmfmac43430b0-sdio.bin"),
        "{missing}"
    );
    assert!(
        z2.wifi_summary()
            .starts_with("CYW43438 (BCM43430/1), 2.4 GHz; firmware missing: boards whose"),
        "{}",
        z2.wifi_summary()
    );
}

#[test]
fn shipped_radios_and_the_qemu_stand_in() {
    let mut with_wifi = Vec::new();
    for name in list(&boards_dir()).unwrap() {
        let b = load(&boards_dir(), &name).unwrap();
        let hwsim = b.qemu.as_ref().is_some_and(|q| q.wifi == QemuWifi::Hwsim);
        assert_eq!(
            b.radio_packages.is_some(),
            b.wifi.is_some() || hwsim,
            "{name}: radio_packages"
        );
        if let Some(w) = b.wifi() {
            assert_eq!(w.driver, "brcmfmac", "{name}");
            with_wifi.push(name.clone());
        }
        if hwsim {
            assert_eq!(name, "qemu-virt-arm64");
        }
    }
    assert_eq!(
        with_wifi,
        ["rpi-3b", "rpi-4b", "rpi-zero-2-w", "rpi-zero-w"]
    );
    let virt = load(&boards_dir(), "qemu-virt-arm64").unwrap();
    assert!(virt.wifi().is_none());
    let q = virt.qemu.as_ref().unwrap();
    assert_eq!(q.wifi, QemuWifi::Hwsim);
    let hwsim: Vec<&str> = q
        .modules
        .iter()
        .map(String::as_str)
        .skip_while(|m| *m != "rfkill")
        .collect();
    assert_eq!(
        hwsim,
        [
            "rfkill",
            "cfg80211",
            "libarc4",
            "mac80211",
            "mac80211_hwsim",
            "ctr",
            "ccm",
            "cmac",
            "gf128mul",
            "ghash-generic",
            "gcm"
        ]
    );
    let ap = &virt.radio_packages.as_ref().unwrap().hwsim_ap;
    assert_eq!(
        (ap.package.as_str(), ap.program.as_str(), ap.arch.as_str()),
        ("hostapd", "usr/sbin/hostapd", "arm64")
    );
    assert_eq!(
        ap.libraries,
        [
            "libnl-3-200",
            "libnl-genl-3-200",
            "libnl-route-3-200",
            "libssl3",
            "libc6"
        ]
    );
    assert_eq!(
        virt.wifi_summary(),
        "QEMU: mac80211_hwsim radios + hostapd stand-in AP"
    );
    let bbb = load(&boards_dir(), "beaglebone-black").unwrap();
    assert!(bbb.wifi().is_none() && bbb.radio_packages.is_none());
    assert_eq!(bbb.wifi_summary(), "none");
}

#[test]
fn wifi_errors_name_the_file_and_field() {
    let pi4 = board_text("rpi-4b");
    let zero = zero_w_text();
    let r = |name: &str, text: &str, from: &str, to: &str, field: &str, words: &str| {
        assert!(text.contains(from), "{name}: no `{from}`");
        refused(name, &text.replacen(from, to, 1), field, words);
    };
    let bands = "bands = [\"2.4\", \"5\"]";
    r(
        "rpi-4b",
        &pi4,
        bands,
        "bands = [\"2.4\", \"6\"]",
        "field `wifi.bands`",
        "`6` is not a band; use \"2.4\" or \"5\"",
    );
    r(
        "rpi-4b",
        &pi4,
        bands,
        "bands = [\"5\", \"5\"]",
        "field `wifi.bands`",
        "listed twice",
    );
    r(
        "rpi-4b",
        &pi4,
        bands,
        "bands = []",
        "field `wifi.bands`",
        "list the radio's bands",
    );
    r(
        "rpi-4b",
        &pi4,
        bands,
        "bands = [2.4]",
        "bands",
        "invalid type",
    );
    let widths = "widths-mhz = [20, 40, 80]";
    r(
        "rpi-4b",
        &pi4,
        widths,
        "widths-mhz = [20, 30]",
        "field `wifi.widths-mhz`",
        "`30` is not a channel width; use MHz: 20, 40, 80, 160",
    );
    r(
        "rpi-4b",
        &pi4,
        widths,
        "widths-mhz = [40, 20]",
        "field `wifi.widths-mhz`",
        "narrowest first",
    );
    r(
        "rpi-4b",
        &pi4,
        widths,
        "widths-mhz = [20, 20]",
        "field `wifi.widths-mhz`",
        "each width once",
    );
    r(
        "rpi-4b",
        &pi4,
        widths,
        "widths-mhz = []",
        "field `wifi.widths-mhz`",
        "starting at 20",
    );
    r(
        "rpi-zero-w",
        &zero,
        "widths-mhz = [20]",
        "widths-mhz = [20, 40, 80]",
        "field `wifi.widths-mhz`",
        "80 MHz channels exist only at 5 GHz",
    );
    r(
        "rpi-zero-w",
        &zero,
        "streams = 1",
        "streams = 0",
        "field `wifi.streams`",
        "1 to 8",
    );
    r(
        "rpi-zero-w",
        &zero,
        "streams = 1",
        "streams = 300",
        "streams",
        "invalid value",
    );
    let bin = "\"brcm/brcmfmac43430-sdio.bin\",";
    r(
        "rpi-zero-w",
        &zero,
        bin,
        "\"/lib/firmware/brcm/brcmfmac43430-sdio.bin\",",
        "field `wifi.firmware`",
        "relative path",
    );
    r(
        "rpi-zero-w",
        &zero,
        bin,
        "\"lib/firmware/brcm/brcmfmac43430-sdio.bin\",",
        "field `wifi.firmware`",
        "below /lib/firmware",
    );
    r(
        "rpi-zero-w",
        &zero,
        bin,
        "\"brcm/../cypress/cyfmac43430-sdio.bin\",",
        "field `wifi.firmware`",
        "without `.`/`..` parts",
    );
    r(
        "rpi-zero-w",
        &zero,
        bin,
        "\"brcm/brcmfmac43430-sdio.clm_blob\",",
        "field `wifi.firmware`",
        "`brcm/brcmfmac43430-sdio.clm_blob` is listed twice",
    );
    let fw = zero
        .lines()
        .skip_while(|l| !l.starts_with("firmware = ["))
        .take_while(|l| *l != "]")
        .collect::<Vec<_>>()
        .join("\n");
    r(
        "rpi-zero-w",
        &zero,
        &format!("{fw}\n]"),
        "firmware = []",
        "field `wifi.firmware`",
        "list the files the driver asks for",
    );
    r(
        "rpi-zero-w",
        &zero,
        "chip = \"CYW43438 (BCM43430/1)\"",
        "chip = \" \"",
        "field `wifi.chip`",
        "one line",
    );
    r(
        "rpi-zero-w",
        &zero,
        "driver = \"brcmfmac\"",
        "driver = \"brcmfmac.ko\"",
        "field `wifi.driver`",
        "without path or `.ko`",
    );
    r(
        "rpi-zero-w",
        &zero,
        "driver = \"brcmfmac\"",
        "driver = \"b43\"",
        "field `wifi.driver`",
        "`b43` is not among wifi.modules",
    );
    r(
        "rpi-zero-w",
        &zero,
        "modules = [\"@wifi-brcmfmac\"]",
        "modules = [\"sdhci-iproc\"]",
        "field `wifi.driver`",
        "`brcmfmac` is not among wifi.modules",
    );
    r(
        "rpi-zero-w",
        &zero,
        "modules = [\"@wifi-brcmfmac\"]",
        "modules = [\"@wifi-brcm\"]",
        "field `wifi.modules`",
        "no module set `wifi-brcm`",
    );
    r(
        "rpi-zero-w",
        &zero,
        "streams = 1",
        "streams = 1\nfirmware-missing = \"\"",
        "field `wifi.firmware-missing`",
        "one line",
    );
    r("rpi-zero-w", &zero, "streams = 1", "streams = 1\nantennas = 2", "unknown field `antennas`", "`chip`, `driver`, `bands`, `widths-mhz`, `streams`, `firmware`, `modules`, `firmware-missing`");
    r(
        "rpi-zero-w",
        &zero,
        "streams = 1\n",
        "",
        "wifi",
        "missing field `streams`",
    );
    r(
        "rpi-zero-w",
        &zero,
        "widths-mhz = [20]",
        "max-width-mhz = 20",
        "unknown field `max-width-mhz`",
        "widths-mhz",
    );
}

#[test]
fn qemu_wifi_errors_name_the_file_and_field() {
    let virt = board_text("qemu-virt-arm64");
    let hwsim = "wifi = \"hwsim\"";
    refused(
        "qemu-virt-arm64",
        &virt.replace(hwsim, "wifi = \"wmediumd\""),
        "field `qemu.wifi`",
        "`wmediumd` is not supported; use `hwsim` or leave it out",
    );
    refused(
        "qemu-virt-arm64",
        &virt.replace(", \"@wifi-hwsim\"]", "]"),
        "field `qemu.wifi`",
        "needs mac80211_hwsim among qemu.modules",
    );
    // The stand-in AP is an arm64 program: a 32-bit guest could not run it.
    let zero = zero_w_text().replace(
        "modules = [\"@qemu-usb-net\"]",
        "modules = [\"@qemu-usb-net\", \"@wifi-hwsim\"]\nwifi = \"hwsim\"",
    );
    refused(
        "rpi-zero-w",
        &zero,
        "field `qemu.wifi`",
        "stand-in AP (hostapd, boards/shared.toml) is arm64, this board's kernel armel",
    );
    // Without the line the QEMU plan has no radio.
    let b = parse_as("qemu-virt-arm64", &virt.replace(hwsim, "")).unwrap();
    assert_eq!(b.qemu.unwrap().wifi, QemuWifi::None);
    assert!(b.radio_packages.is_none());
}

#[test]
fn shared_radio_errors_name_the_entry() {
    let text = std::fs::read_to_string(boards_dir().join(SHARED_FILE)).unwrap();
    let refused = |from: &str, to: &str, words: &[&str]| {
        assert!(text.contains(from), "no `{from}`");
        let err = Shared::from_toml(Path::new("boards/shared.toml"), &text.replacen(from, to, 1))
            .unwrap_err()
            .to_string();
        assert!(err.contains("boards/shared.toml"), "{err}");
        for w in words {
            assert!(err.contains(w), "{w}: {err}");
        }
    };
    refused(
        "firmware-packages = [\"firmware-brcm80211\", \"raspi-firmware\"]",
        "firmware-packages = []",
        &["field `radio.firmware-packages`", "list the packages"],
    );
    refused(
        "\"regulatory.db\" = \"lib/firmware/regulatory.db-debian\"",
        "\"x/regulatory.db\" = \"lib/firmware/regulatory.db-debian\"",
        &["field `radio.regulatory.files`", "`x/regulatory.db`"],
    );
    refused(
        "\"lib/firmware/regulatory.db-debian\"",
        "\"/lib/firmware/regulatory.db-debian\"",
        &["field `radio.regulatory.files`", "relative path"],
    );
    refused(
        "program = \"usr/sbin/hostapd\"",
        "program = \"../usr/sbin/hostapd\"",
        &["field `radio.hwsim-ap.program`"],
    );
    refused(
        "libraries = [\"libnl-3-200\", \"libnl-genl-3-200\", \"libnl-route-3-200\", \"libssl3\", \"libc6\"]",
        "libraries = []",
        &["field `radio.hwsim-ap.libraries`", "libc6 at least"],
    );
    refused(
        "[radio.hwsim-ap]",
        "[radio.stand-in]",
        &["unknown field `stand-in`"],
    );
    let cut: String = text.split("\n[radio]\n").next().unwrap().to_owned();
    refused(&text, &cut, &["missing field `radio`"]);
}

#[test]
fn firmware_links_name_a_listed_file_another_name_and_why() {
    let text = board_text("rpi-zero-2-w");
    let w = parse_as("rpi-zero-2-w", &text).unwrap().wifi.unwrap();
    let board_nvram = "brcm/brcmfmac43430-sdio.raspberrypi,model-zero-2-w.txt";
    let three_b = "brcm/brcmfmac43430-sdio.raspberrypi,3-model-b.txt";
    assert!(w.firmware.iter().any(|f| f == board_nvram));
    assert_eq!(w.source_name(board_nvram), three_b);
    assert_eq!(
        w.source_name("brcm/brcmfmac43430-sdio.bin"),
        "brcm/brcmfmac43430-sdio.bin"
    );
    let to = format!("to = \"{three_b}\"");
    assert!(text.contains(&to));
    let field = "wifi.firmware-links";
    refused(
        "rpi-zero-2-w",
        &text.replacen(
            &format!("{{ file = \"{board_nvram}\""),
            "{ file = \"brcm/brcmfmac43430-sdio.txt\"",
            1,
        ),
        field,
        "`brcm/brcmfmac43430-sdio.txt` is not in wifi.firmware",
    );
    refused(
        "rpi-zero-2-w",
        &text.replacen(&to, &format!("to = \"{board_nvram}\""), 1),
        field,
        "give the other file it is read from (to) and why",
    );
    refused(
        "rpi-zero-2-w",
        &text.replacen(&to, "to = \"../brcm/x.txt\"", 1),
        field,
        "..",
    );
    let entry_start = text.find("firmware-links = [\n").unwrap() + "firmware-links = [\n".len();
    let entry_end = entry_start + text[entry_start..].find('\n').unwrap() + 1;
    let entry = &text[entry_start..entry_end];
    refused(
        "rpi-zero-2-w",
        &text.replacen(entry, &format!("{entry}{entry}"), 1),
        field,
        "is linked twice: keep one entry",
    );
    let why_start = entry.find("why = \"").unwrap();
    let no_why = format!("{}why = \" \" }},\n", &entry[..why_start]);
    refused(
        "rpi-zero-2-w",
        &text.replacen(entry, &no_why, 1),
        field,
        "and why",
    );
}
