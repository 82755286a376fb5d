//! Every shipped board file against the pinned packages (fetched into the cache on first
//! use), and the README's board table against `boards/`.
#![forbid(unsafe_code)]

use xtask::boards;

#[test]
fn every_board_is_sound_against_its_pinned_packages() {
    let all = boards::all().unwrap();
    assert!(all.len() >= 10, "{} boards", all.len());
    boards::check_unique(&all).unwrap();
    let lock = xtask::packages::Lock::load_repo().unwrap();
    let mut problems = Vec::new();
    for b in &all {
        problems.extend(boards::check(b, &lock).unwrap());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn check_finds_a_missing_dtb_module_and_loader_file() {
    let lock = xtask::packages::Lock::load_repo().unwrap();
    let mut b = xtask::load_board("bananapi-m1").unwrap();
    b.kernel.dtb = Some("sun7i-a20-bananapi-m9.dtb".into());
    b.modules.push("no_such_module".into());
    if let Some(l) = &mut b.loader {
        l.raw[0].file = "u-boot-sunxi-with-spl.bin.gz".into();
    }
    let problems = boards::check(&b, &lock).unwrap().join("\n");
    assert!(
        problems.contains("kernel.dtb: sun7i-a20-bananapi-m9.dtb is not in"),
        "{problems}"
    );
    assert!(
        problems.contains("modules.load") && problems.contains("no_such_module"),
        "{problems}"
    );
    assert!(
        problems.contains("u-boot-sunxi-with-spl.bin.gz is not in u-boot-sunxi"),
        "{problems}"
    );
    // The link lists are walked too, each named by its field.
    let mut b = xtask::load_board("rpi-4b").unwrap();
    if let Some(e) = &mut b.ethernet {
        e.modules.push("no_such_phy".into());
    }
    if let Some(u) = &mut b.usb_ethernet {
        u.modules.push("no_such_adapter".into());
    }
    let problems = boards::check(&b, &lock).unwrap().join("\n");
    assert!(
        problems.contains("rpi-4b.toml: ethernet.modules: module `no_such_phy`"),
        "{problems}"
    );
    assert!(
        problems.contains("rpi-4b.toml: usb-ethernet.modules: module `no_such_adapter`"),
        "{problems}"
    );
    let mut b = xtask::load_board("rpi-3b").unwrap();
    b.arch = benchboot_board::Arch::Arm;
    let problems = boards::check(&b, &lock).unwrap().join("\n");
    assert!(problems.contains("boots Aarch64"), "{problems}");
}

#[test]
fn readme_board_table_is_current() {
    let all = boards::all().unwrap();
    let readme = xtask::repo_root().join("README.md");
    assert!(
        boards::readme_is_current(&readme, &all).unwrap(),
        "README.md's board table is stale: run `cargo xtask boards --write-readme`"
    );
}

#[test]
fn check_finds_a_missing_radio_file_module_or_nvram_name() {
    let lock = xtask::packages::Lock::load_repo().unwrap();
    let mut b = xtask::load_board("rpi-zero-w").unwrap();
    if let Some(w) = &mut b.wifi {
        w.firmware[0] = "brcm/brcmfmac43430-sdio.bin.xz".into();
        // The generic NVRAM where Debian has the Zero W's own: the driver never reads it.
        w.firmware[2] = "brcm/brcmfmac43430-sdio.txt".into();
        w.modules.push("no_such_radio".into());
    }
    let problems = boards::check(&b, &lock).unwrap().join("\n");
    assert!(
        problems.contains(
            "boards/rpi-zero-w.toml: wifi.firmware: brcm/brcmfmac43430-sdio.bin.xz is in none of \
             the firmware packages (firmware-brcm80211 20230210-5, raspi-firmware 1.20220830+ds-1"
        ),
        "{problems}"
    );
    assert!(
        problems.contains(
            "boards/rpi-zero-w.toml: wifi.firmware: list \
             brcm/brcmfmac43430-sdio.raspberrypi,model-zero-w.txt (firmware-brcm80211 20230210-5)"
        ),
        "{problems}"
    );
    assert!(
        problems
            .contains("boards/rpi-zero-w.toml: wifi.firmware: list brcm/brcmfmac43430-sdio.bin"),
        "{problems}"
    );
    assert!(
        problems.contains("rpi-zero-w.toml: wifi.modules: module `no_such_radio`"),
        "{problems}"
    );
    // The shipped radios pass, and say what they bring.
    let lines = boards::wifi_lines(&xtask::load_board("rpi-4b").unwrap(), &lock)
        .unwrap()
        .join("\n");
    assert!(
        lines.contains(
            "wifi: CYW43455 (BCM4345/6), brcmfmac, 2.4 + 5 GHz, 20/40/80 MHz, 1 stream(s)"
        ),
        "{lines}"
    );
    assert!(
        lines.contains(
            "wifi:   /lib/firmware/brcm/brcmfmac43455-sdio.bin 643651 B <- firmware-brcm80211 \
             20230210-5: lib/firmware/cypress/cyfmac43455-sdio.bin"
        ),
        "{lines}"
    );
    let lines = boards::wifi_lines(&xtask::load_board("qemu-virt-arm64").unwrap(), &lock)
        .unwrap()
        .join("\n");
    assert!(
        lines.contains("wifi (QEMU): mac80211_hwsim radios; stand-in AP 10568416 bytes, QEMU only"),
        "{lines}"
    );
    assert!(
        lines.contains("/usr/sbin/hostapd 1971008 B <- hostapd 2:2.10-12+deb12u3: usr/sbin/hostapd (QEMU only)"),
        "{lines}"
    );
}
