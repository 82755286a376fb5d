//! Links followed inside a package, brcmfmac's naming rules, and the radio files of the
//! shipped boards from the pinned packages (fetched into the cache on first use).

use super::*;

fn lock() -> Lock {
    Lock::load_repo().unwrap()
}

fn by_path(files: &[RadioFile]) -> Vec<(&str, usize, &str, RadioRole, bool)> {
    files
        .iter()
        .map(|f| {
            (
                f.path.as_str(),
                f.data.len(),
                f.package.as_str(),
                f.role,
                f.qemu_only,
            )
        })
        .collect()
}

#[test]
fn links_are_followed_inside_the_package_only() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("lib/firmware/brcm")).unwrap();
    std::fs::create_dir_all(root.join("lib/firmware/cypress")).unwrap();
    std::fs::write(root.join("lib/firmware/cypress/cy.bin"), b"fw").unwrap();
    symlink("../cypress/cy.bin", root.join("lib/firmware/brcm/a.bin")).unwrap();
    symlink("a.bin", root.join("lib/firmware/brcm/b.bin")).unwrap();
    symlink(
        "/lib/firmware/cypress/cy.bin",
        root.join("lib/firmware/brcm/abs.bin"),
    )
    .unwrap();
    symlink(
        "../cypress/gone.bin",
        root.join("lib/firmware/brcm/dangling.bin"),
    )
    .unwrap();
    symlink(
        "../../../../etc/passwd",
        root.join("lib/firmware/brcm/out.bin"),
    )
    .unwrap();
    symlink("loop2", root.join("lib/firmware/brcm/loop1")).unwrap();
    symlink("loop1", root.join("lib/firmware/brcm/loop2")).unwrap();
    let f = |rel: &str| follow(root, rel).map_err(|e| format!("{e:#}"));
    let real = Ok(Some("lib/firmware/cypress/cy.bin".to_owned()));
    assert_eq!(f("lib/firmware/brcm/a.bin"), real);
    assert_eq!(f("lib/firmware/brcm/b.bin"), real, "a link to a link");
    assert_eq!(
        f("lib/firmware/brcm/abs.bin"),
        real,
        "absolute: from the root"
    );
    assert_eq!(f("lib/firmware/cypress/cy.bin"), real);
    assert_eq!(f("lib/firmware/brcm/none.bin"), Ok(None));
    assert_eq!(f("usr/lib/none.so"), Ok(None));
    let err = f("lib/firmware/brcm/dangling.bin").unwrap_err();
    assert!(
        err.contains("a link to lib/firmware/cypress/gone.bin, which is not in the package"),
        "{err}"
    );
    let err = f("lib/firmware/brcm/out.bin").unwrap_err();
    assert!(err.contains("leaves the package"), "{err}");
    let err = f("lib/firmware/brcm/loop1").unwrap_err();
    assert!(err.contains("more than 16 links"), "{err}");
    let err = f("lib/firmware/brcm").unwrap_err();
    assert!(err.contains("not a regular file"), "{err}");
    assert_eq!(normalize("a/./b/../c"), Some("a/c".into()));
    assert_eq!(normalize("a/../.."), None);
}

fn radio(firmware: &[&str]) -> WifiRadio {
    let mut w = crate::load_board("rpi-zero-w").unwrap().wifi.unwrap();
    w.firmware = firmware.iter().map(|s| s.to_string()).collect();
    w
}

/// The Zero 2 W's DTB from its pinned kernel package.
fn zero_2_w_dtb(b: &Board, lock: &Lock) -> std::path::PathBuf {
    let (root, _) = crate::packages::unpacked(lock, &b.kernel.package).unwrap();
    let name = b.kernel.dtb.as_deref().unwrap();
    crate::walk_files(&root.join("usr/lib"))
        .unwrap()
        .into_iter()
        .find(|p| p.file_name().is_some_and(|f| f == name))
        .unwrap()
}

#[test]
fn brcmfmac_names_follow_the_drivers_order() {
    // What firmware-brcm80211 + raspi-firmware hold for the 43430.
    let have = [
        "brcm/brcmfmac43430-sdio.bin",
        "brcm/brcmfmac43430-sdio.clm_blob",
        "brcm/brcmfmac43430-sdio.txt",
        "brcm/brcmfmac43430-sdio.raspberrypi,model-zero-w.txt",
        "brcm/brcmfmac43430-sdio.raspberrypi,3-model-b.txt",
    ];
    let lookup = |n: &str| Ok(have.contains(&n).then(|| "pkg 1".to_owned()));
    let zero_w = "raspberrypi,model-zero-w";
    let ok = radio(&[have[0], have[1], have[3]]);
    assert_eq!(
        brcmfmac_names(&ok, zero_w, lookup).unwrap(),
        Vec::<String>::new()
    );
    // The Zero 2 W: no board NVRAM in any package, so the generic one.
    let z2 = radio(&[have[0], have[1], have[2]]);
    assert!(brcmfmac_names(&z2, "raspberrypi,model-zero-2-w", lookup)
        .unwrap()
        .is_empty());
    // The generic NVRAM where the board's own exists: the driver never reads it.
    let p = brcmfmac_names(&z2, zero_w, lookup).unwrap().join("\n");
    assert!(
        p.contains(
            "list brcm/brcmfmac43430-sdio.raspberrypi,model-zero-w.txt (pkg 1): brcmfmac asks \
             for brcm/brcmfmac43430-sdio.raspberrypi,model-zero-w.txt, then \
             brcm/brcmfmac43430-sdio.txt on this board (DTB compatible `raspberrypi,model-zero-w`)"
        ),
        "{p}"
    );
    assert!(
        p.contains("brcmfmac never reads brcm/brcmfmac43430-sdio.txt on this board"),
        "{p}"
    );
    // Another board's NVRAM; a missing CLM blob; no .bin a package has.
    let other = radio(&[have[0], have[4]]);
    let p = brcmfmac_names(&other, zero_w, lookup).unwrap().join("\n");
    assert!(
        p.contains(
            "brcmfmac never asks for brcm/brcmfmac43430-sdio.raspberrypi,3-model-b.txt on this board"
        ),
        "{p}"
    );
    assert!(
        p.contains("list brcm/brcmfmac43430-sdio.clm_blob (pkg 1)"),
        "{p}"
    );
    let b0 = radio(&["brcm/brcmfmac43430b0-sdio.bin"]);
    let p = brcmfmac_names(&b0, zero_w, lookup).unwrap().join("\n");
    assert!(
        p.contains(
            "brcmfmac asks for brcm/brcmfmac43430b0-sdio.raspberrypi,model-zero-w.bin, then \
             brcm/brcmfmac43430b0-sdio.bin: no firmware package has either"
        ),
        "{p}"
    );
    let none = radio(&["cypress/cyfmac43430-sdio.bin"]);
    let p = brcmfmac_names(&none, zero_w, lookup).unwrap().join("\n");
    assert!(p.contains("no brcm/brcmfmac<chip>-sdio.* file"), "{p}");
}

#[test]
fn zero_w_radio_files_from_the_pinned_packages() {
    let lock = lock();
    let board = crate::load_board("rpi-zero-w").unwrap();
    let files = files(&board, &lock).unwrap();
    assert_eq!(
        by_path(&files),
        [
            (
                "lib/firmware/brcm/brcmfmac43430-sdio.bin",
                419_798,
                "firmware-brcm80211",
                RadioRole::Firmware,
                false
            ),
            (
                "lib/firmware/brcm/brcmfmac43430-sdio.clm_blob",
                4733,
                "firmware-brcm80211",
                RadioRole::Firmware,
                false
            ),
            (
                "lib/firmware/brcm/brcmfmac43430-sdio.raspberrypi,model-zero-w.txt",
                874,
                "firmware-brcm80211",
                RadioRole::Firmware,
                false
            ),
            (
                "lib/firmware/regulatory.db",
                6380,
                "wireless-regdb",
                RadioRole::Regulatory,
                false
            ),
            (
                "lib/firmware/regulatory.db.p7s",
                1118,
                "wireless-regdb",
                RadioRole::Regulatory,
                false
            ),
        ]
    );
    // Debian's links became the contents, at the names the driver asks for.
    assert_eq!(files[0].from, "lib/firmware/cypress/cyfmac43430-sdio.bin");
    assert_eq!(
        crate::sha256_hex(&files[0].data),
        "93f3c40c94340c29a40714cb04e3e89974870fcae42a844b8a4544750159f40d"
    );
    assert_eq!(
        files[2].from,
        "lib/firmware/brcm/brcmfmac43430-sdio.raspberrypi,3-model-b.txt"
    );
    assert_eq!(files[3].from, "lib/firmware/regulatory.db-debian");
    assert_eq!(
        crate::sha256_hex(&files[3].data),
        "2fb33ca0074db573e05ef7dd50bb45b63c0ff98b7e852e1105ebad536fae8e6b"
    );
    assert_eq!(
        crate::sha256_hex(&files[4].data),
        "7417102f349fc43bb96197cf77a854b42d6f7702076064a3c83ef34cc42c5a6d"
    );
    assert_eq!(files[0].mode, 0o644);
    assert_eq!(
        files[0].source(),
        "firmware-brcm80211 20230210-5: lib/firmware/cypress/cyfmac43430-sdio.bin"
    );
    let pins = pinned(&files, &lock).unwrap();
    let names: Vec<&str> = pins.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["firmware-brcm80211", "wireless-regdb"]);
}

#[test]
fn the_zero_2_w_takes_its_own_nvram_by_link_and_the_pi_4_its_own() {
    let lock = lock();
    let z2 = crate::load_board("rpi-zero-2-w").unwrap();
    let files_z2 = files(&z2, &lock).unwrap();
    let nvram = &files_z2[2];
    // The 3 B's NVRAM (874 bytes, the same SHA-256 in firmware-brcm80211 20230210-5
    // and 20250410-2, which links the Zero 2 W's name to it), at the board's name: not
    // raspi-firmware's generic brcmfmac43430-sdio.txt of placeholder values.
    assert_eq!(
        (
            nvram.path.as_str(),
            nvram.from.as_str(),
            nvram.package.as_str(),
            nvram.data.len()
        ),
        (
            "lib/firmware/brcm/brcmfmac43430-sdio.raspberrypi,model-zero-2-w.txt",
            "lib/firmware/brcm/brcmfmac43430-sdio.raspberrypi,3-model-b.txt",
            "firmware-brcm80211",
            874
        )
    );
    assert_eq!(
        crate::sha256_hex(&nvram.data),
        "489c12a33e0fd0899cd27bfb316b30944f0b9dd571c266a0aa3704b35817b788"
    );
    assert!(!files_z2
        .iter()
        .any(|f| f.path.ends_with("brcmfmac43430-sdio.txt")));
    // The driver's order on the Zero 2 W's DTB: the board's name first, which the
    // image holds; without the link no package has it, and the check says which
    // package version would.
    let dtb = zero_2_w_dtb(&z2, &lock);
    assert_eq!(check(&z2, &lock, Some(&dtb)).unwrap(), Vec::<String>::new());
    let mut unlinked = z2.clone();
    unlinked.wifi.as_mut().unwrap().firmware_links.clear();
    let ps = check(&unlinked, &lock, Some(&dtb)).unwrap().join("\n");
    assert!(
        ps.contains(
            "wifi.firmware: brcm/brcmfmac43430-sdio.raspberrypi,model-zero-2-w.txt is in none \
             of the firmware packages"
        ),
        "{ps}"
    );
    let pi4 = files(&crate::load_board("rpi-4b").unwrap(), &lock).unwrap();
    assert_eq!(pi4[0].from, "lib/firmware/cypress/cyfmac43455-sdio.bin");
    assert_eq!(
        crate::sha256_hex(&pi4[0].data),
        "d408faa9d0d5b1a2f9912dcea53ab0be48217288e398406d117f0edafe7c3edd"
    );
    assert_eq!(
        (pi4[2].path.as_str(), pi4[2].data.len()),
        (
            "lib/firmware/brcm/brcmfmac43455-sdio.raspberrypi,4-model-b.txt",
            1883
        )
    );
    // No radio, no files.
    let bbb = crate::load_board("beaglebone-black").unwrap();
    assert!(files(&bbb, &lock).unwrap().is_empty());
}

#[test]
fn the_stand_in_ap_brings_exactly_the_libraries_hostapd_needs() {
    let lock = lock();
    let virt = crate::load_board("qemu-virt-arm64").unwrap();
    let files = files(&virt, &lock).unwrap();
    let ap: Vec<(&str, &str, &str)> = files
        .iter()
        .filter(|f| f.role == RadioRole::StandInAp)
        .map(|f| (f.path.as_str(), f.package.as_str(), f.from.as_str()))
        .collect();
    assert_eq!(
        ap,
        [
            ("usr/sbin/hostapd", "hostapd", "usr/sbin/hostapd"),
            (
                "lib/ld-linux-aarch64.so.1",
                "libc6",
                "lib/aarch64-linux-gnu/ld-linux-aarch64.so.1"
            ),
            (
                "lib/aarch64-linux-gnu/libnl-3.so.200",
                "libnl-3-200",
                "lib/aarch64-linux-gnu/libnl-3.so.200.26.0"
            ),
            (
                "lib/aarch64-linux-gnu/libnl-genl-3.so.200",
                "libnl-genl-3-200",
                "lib/aarch64-linux-gnu/libnl-genl-3.so.200.26.0"
            ),
            (
                "usr/lib/aarch64-linux-gnu/libnl-route-3.so.200",
                "libnl-route-3-200",
                "usr/lib/aarch64-linux-gnu/libnl-route-3.so.200.26.0"
            ),
            (
                "usr/lib/aarch64-linux-gnu/libssl.so.3",
                "libssl3",
                "usr/lib/aarch64-linux-gnu/libssl.so.3"
            ),
            (
                "usr/lib/aarch64-linux-gnu/libcrypto.so.3",
                "libssl3",
                "usr/lib/aarch64-linux-gnu/libcrypto.so.3"
            ),
            (
                "lib/aarch64-linux-gnu/libm.so.6",
                "libc6",
                "lib/aarch64-linux-gnu/libm.so.6"
            ),
            (
                "lib/aarch64-linux-gnu/libc.so.6",
                "libc6",
                "lib/aarch64-linux-gnu/libc.so.6"
            ),
        ]
    );
    assert!(files
        .iter()
        .all(|f| f.qemu_only == (f.role == RadioRole::StandInAp)));
    let hostapd = &files[2];
    assert_eq!(hostapd.path, "usr/sbin/hostapd");
    assert_eq!(
        crate::sha256_hex(&hostapd.data),
        "6ab55ccb9e623c2d43e7313fc89e1da27ab7cbd7f2f8f9bc8962d285fc5cbdd3"
    );
    assert_eq!(hostapd.mode, 0o755);
    assert!(
        hostapd.source().ends_with("(QEMU only)"),
        "{}",
        hostapd.source()
    );
    let d = elf_dynamic(&hostapd.data, object::Architecture::Aarch64).unwrap();
    assert_eq!(d.interp.as_deref(), Some("/lib/ld-linux-aarch64.so.1"));
    assert!(d.runpath.is_empty());
    let err = elf_dynamic(&hostapd.data, object::Architecture::Arm).unwrap_err();
    assert!(err.to_string().contains("built for Aarch64"), "{err}");
    // regulatory.db first (virt has no radio of its own), then the stand-in.
    let regdb: Vec<&str> = files[..2].iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        regdb,
        [
            "lib/firmware/regulatory.db",
            "lib/firmware/regulatory.db.p7s"
        ]
    );
    let stand_in: usize = files[2..].iter().map(|f| f.data.len()).sum();
    assert_eq!(stand_in, 10_568_416, "hostapd and its libraries, bytes");
}

#[test]
fn check_names_a_missing_file_and_a_wrong_library_list() {
    let lock = lock();
    let mut zero = crate::load_board("rpi-zero-w").unwrap();
    if let Some(w) = &mut zero.wifi {
        w.firmware[1] = "brcm/brcmfmac43430-sdio.clm".into();
    }
    let p = collect(&zero, &lock).unwrap().problems.join("\n");
    assert!(
        p.contains(
            "boards/rpi-zero-w.toml: wifi.firmware: brcm/brcmfmac43430-sdio.clm is in none of the \
             firmware packages (firmware-brcm80211 20230210-5, raspi-firmware 1.20220830+ds-1; \
             boards/shared.toml radio.firmware-packages)"
        ),
        "{p}"
    );
    let err = files(&zero, &lock).unwrap_err().to_string();
    assert!(err.contains("cargo xtask boards"), "{err}");
    let mut virt = crate::load_board("qemu-virt-arm64").unwrap();
    if let Some(r) = &mut virt.radio_packages {
        r.hwsim_ap.libraries = vec!["libnl-3-200".into(), "libc6".into(), "libssl3".into()];
        r.hwsim_ap.libraries.push("firmware-brcm80211".into());
    }
    let p = collect(&virt, &lock).unwrap().problems.join("\n");
    assert!(
        p.contains(
            "radio.hwsim-ap.libraries: libnl-genl-3.so.200 (NEEDED by /usr/sbin/hostapd) is in \
             none of libnl-3-200, libc6, libssl3, firmware-brcm80211 below /lib/aarch64-linux-gnu, \
             /usr/lib/aarch64-linux-gnu, /lib, /usr/lib: add the package that ships it"
        ),
        "{p}"
    );
    assert!(
        p.contains("firmware-brcm80211 is pinned for all, the stand-in for arm64"),
        "{p}"
    );
    assert!(
        p.contains(
            "firmware-brcm80211 provides none of the libraries usr/sbin/hostapd needs: remove it"
        ),
        "{p}"
    );
}
