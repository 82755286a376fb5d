//! Facts about the board under test, read from /proc, sysfs and debugfs: the kernel's
//! command line and modules, disk identity (serial numbers hashed, never in clear), the
//! cpufreq governor. Kernel release, machine and memory (what a host run records too)
//! are [`benchboot_storage::system::system_info`].

use std::path::Path;

use benchboot_results::{DeviceIdentity, KernelModule, Reading};
use benchboot_sdcard::RawRegisters;
use sha2::{Digest, Sha256};

fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// Where procfs is mounted.
pub const PROC: &str = "/proc";

/// `<proc>/cmdline`, without the trailing newline.
pub fn kernel_cmdline(proc: &Path) -> Reading<String> {
    let f = proc.join("cmdline");
    match std::fs::read_to_string(&f) {
        Ok(t) => Reading::ok(t.trim_end().to_owned(), f.display().to_string()),
        Err(e) => Reading::unavailable(format!("{}: {e}", f.display())),
    }
}

/// Parses `/proc/modules` (kernel/module/procfs.c `m_show`): one line per module,
/// `name size refcount users state address [taints]`, where `users` is `-` or each user
/// followed by a comma, and a kernel without module unloading prints `-` for both
/// `refcount` and `users`.
///
/// # Errors
/// A line with fewer than three fields or a size that is not a number.
pub fn parse_modules(text: &str) -> Result<Vec<KernelModule>, String> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (Some(name), Some(size), Some(refcount)) = (f.first(), f.get(1), f.get(2)) else {
            return Err(format!("/proc/modules: short line {line:?}"));
        };
        let size_bytes = size
            .parse()
            .map_err(|_| format!("/proc/modules: size not a number in {line:?}"))?;
        let used_by = match f.get(3) {
            Some(&"-") | None => Vec::new(),
            Some(users) => users
                .split(',')
                .filter(|u| !u.is_empty())
                .map(str::to_owned)
                .collect(),
        };
        out.push(KernelModule {
            name: (*name).to_owned(),
            size_bytes,
            refcount: refcount.parse().ok(),
            used_by,
        });
    }
    Ok(out)
}

/// The modules loaded now (`<proc>/modules`); unavailable with the reason when the
/// file does not read (a kernel without module support has none) or does not parse.
pub fn modules(proc: &Path) -> Reading<Vec<KernelModule>> {
    let f = proc.join("modules");
    match std::fs::read_to_string(&f)
        .map_err(|e| format!("{}: {e}", f.display()))
        .and_then(|t| parse_modules(&t))
    {
        Ok(m) => Reading::ok(m, f.display().to_string()),
        Err(e) => Reading::unavailable(e),
    }
}

/// Identity of disk `name` from `<sys_block>/<name>/` (size is in 512-byte sectors,
/// Documentation/ABI/stable/sysfs-block) and, for SD/MMC, the bus clock from
/// `<debugfs>/mmcN/ios` when debugfs is mounted and the card's registers (`device/cid`,
/// `csd`, `scr`, `ssr`, `ocr`, drivers/mmc/core/sd.c) decoded, its serial hashed.
pub fn identify(sys_block: &Path, debugfs: &Path, name: &str) -> DeviceIdentity {
    let dir = sys_block.join(name);
    let num = |rel: &str| read_trimmed(&dir.join(rel)).and_then(|s| s.parse::<u64>().ok());
    let text = |rel: &str| read_trimmed(&dir.join(rel));
    let serial_sha256 = text("device/serial").map(|s| {
        Sha256::digest(s.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    });
    let ios_file = name
        .strip_prefix("mmcblk")
        .map(|n| debugfs.join(format!("mmc{n}/ios")));
    let bus_clock_hz = ios_file
        .as_deref()
        .and_then(read_trimmed)
        .and_then(|ios| parse_ios_clock(&ios));
    // SD/MMC only: the card's registers from the mmc sysfs attributes beside `name`.
    let card = ios_file
        .as_deref()
        .filter(|_| dir.join("device/cid").exists())
        .map(|ios| benchboot_sdcard::decode(&RawRegisters::read(&dir.join("device"), Some(ios))));
    DeviceIdentity {
        name: name.to_owned(),
        model: text("device/model").or_else(|| text("device/name")),
        size_bytes: num("size").unwrap_or(0) * 512,
        logical_block_size: num("queue/logical_block_size").unwrap_or(0),
        physical_block_size: num("queue/physical_block_size").unwrap_or(0),
        manfid: text("device/manfid"),
        date: text("device/date"),
        serial_sha256,
        bus_clock_hz,
        card,
        drivers: driver_chain(&dir.join("device")),
    }
}

/// The drivers bound on the way from `device` (a sysfs device folder or a link to one,
/// e.g. `/sys/block/sda/device`) up to the root of `/sys/devices`, nearest first, each
/// name once: every folder's `driver` link (drivers/base/core.c
/// `device_add` → `bus_add_device`/`driver_sysfs_add`) names the driver bound to that
/// device. A USB disk on QEMU virt gives `["sd", "uas" or "usb-storage", "usb",
/// "xhci_hcd", "pci-host-generic"]`: the SCSI disk driver (sd_mod), the USB interface's
/// transport, the USB device and hub driver, the host controller (xhci-pci), the PCIe
/// host bridge. Empty when `device` does not resolve.
pub fn driver_chain(device: &Path) -> Vec<String> {
    let Ok(mut dir) = std::fs::canonicalize(device) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    loop {
        if let Some(name) = std::fs::read_link(dir.join("driver"))
            .ok()
            .and_then(|l| l.file_name().map(|n| n.to_string_lossy().into_owned()))
        {
            if !out.contains(&name) {
                out.push(name);
            }
        }
        if dir.file_name().is_some_and(|n| n == "devices") || !dir.pop() {
            break;
        }
    }
    out
}

/// The `clock:` line of debugfs `mmcN/ios` (drivers/mmc/core/debugfs.c), e.g.
/// `clock:\t\t50000000 Hz`.
pub fn parse_ios_clock(ios: &str) -> Option<u64> {
    ios.lines()
        .find_map(|l| l.trim().strip_prefix("clock:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// Writes `governor` to every `cpu*/cpufreq/scaling_governor` under `cpu_root`; returns
/// the governor in force after, or `Ok(None)` when there is no cpufreq (nothing to set).
///
/// # Errors
/// When a governor file exists but refuses the value (named in the message).
pub fn set_governor(cpu_root: &Path, governor: &str) -> Result<Option<String>, String> {
    let Ok(entries) = std::fs::read_dir(cpu_root) else {
        return Ok(None);
    };
    let mut set = None;
    for e in entries.flatten() {
        let f = e.path().join("cpufreq/scaling_governor");
        if !f.exists() {
            continue;
        }
        std::fs::write(&f, governor).map_err(|err| format!("{}: {err}", f.display()))?;
        set = read_trimmed(&f);
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sd_card_identity_with_hashed_serial() {
        let root = tempfile::tempdir().unwrap();
        let d = root.path().join("block/mmcblk0");
        std::fs::create_dir_all(d.join("device")).unwrap();
        std::fs::create_dir_all(d.join("queue")).unwrap();
        for (f, v) in [
            ("size", "62333952"),
            ("queue/logical_block_size", "512"),
            ("queue/physical_block_size", "512"),
            ("device/name", "SC32G"),
            ("device/manfid", "0x000003"),
            ("device/date", "06/2021"),
            ("device/serial", "0x1234abcd"),
            // A Toshiba-made (MID 0x02) 4 GB card: crates/sdcard/tests/fixtures.rs has
            // its source; serial 0x35338909.
            ("device/type", "SD"),
            ("device/cid", "02544d5341303447113533890900d371"),
            ("device/csd", "400e00325b5900001d177f800a40008d"),
        ] {
            std::fs::write(d.join(f), format!("{v}\n")).unwrap();
        }
        let dbg = root.path().join("debug/mmc0");
        std::fs::create_dir_all(&dbg).unwrap();
        std::fs::write(
            dbg.join("ios"),
            "clock:\t\t50000000 Hz\nvdd:\t\t21 (3.3 ~ 3.4 V)\n",
        )
        .unwrap();
        let id = identify(
            &root.path().join("block"),
            &root.path().join("debug"),
            "mmcblk0",
        );
        assert_eq!(id.size_bytes, 62_333_952 * 512);
        assert_eq!(id.model.as_deref(), Some("SC32G"));
        assert_eq!(id.manfid.as_deref(), Some("0x000003"));
        assert_eq!(id.bus_clock_hz, Some(50_000_000));
        let card = id.card.as_ref().expect("the card's registers");
        assert_eq!(card.manufacturer().unwrap().name, "Toshiba/Kioxia");
        assert_eq!(card.capacity_bytes(), Some(3_904_897_024));
        // The stored CID has its serial zeroed; the document carries neither serial.
        let json = serde_json::to_string(&id).unwrap();
        assert!(!json.contains("35338909"), "{json}");
        assert_eq!(card.raw.cid.as_deref().map(str::len), Some(32));
        let hash = id.serial_sha256.unwrap();
        assert_eq!(hash.len(), 64);
        assert!(!hash.contains("1234abcd"));
        assert!(!serde_json::to_string(&identify(
            &root.path().join("block"),
            root.path(),
            "mmcblk0"
        ))
        .unwrap()
        .contains("1234abcd"));
    }

    /// A fake sysfs with the layout QEMU virt gives a UAS disk behind qemu-xhci (seen in
    /// the qemu-virt-arm64 plan-file boot): the drivers of every level, nearest first,
    /// each once (the USB device and its root hub are both "usb").
    #[test]
    fn driver_chain_of_a_usb_disk_from_its_sysfs_path() {
        use std::os::unix::fs::symlink;
        let root = tempfile::tempdir().unwrap();
        let sys = root.path();
        let drivers = sys.join("bus/drivers");
        for d in ["sd", "uas", "usb", "xhci_hcd", "pci-host-generic"] {
            std::fs::create_dir_all(drivers.join(d)).unwrap();
        }
        let bridge = sys.join("devices/platform/4010000000.pcie");
        let pci = bridge.join("pci0000:00/0000:00:02.0");
        let usb_dev = pci.join("usb2/2-1");
        let intf = usb_dev.join("2-1:1.0");
        let scsi = intf.join("host0/target0:0:0/0:0:0:0");
        std::fs::create_dir_all(scsi.join("block/sda")).unwrap();
        for (dir, drv) in [
            (&scsi, "sd"),
            (&intf, "uas"),
            (&usb_dev, "usb"),
            (&pci.join("usb2"), "usb"),
            (&pci, "xhci_hcd"),
            (&bridge, "pci-host-generic"),
        ] {
            symlink(drivers.join(drv), dir.join("driver")).unwrap();
        }
        symlink(&scsi, scsi.join("block/sda/device")).unwrap();
        std::fs::create_dir_all(sys.join("block")).unwrap();
        symlink(scsi.join("block/sda"), sys.join("block/sda")).unwrap();
        let want = ["sd", "uas", "usb", "xhci_hcd", "pci-host-generic"];
        assert_eq!(driver_chain(&sys.join("block/sda/device")), want);
        let id = identify(&sys.join("block"), sys, "sda");
        assert_eq!(id.drivers, want);
        assert!(serde_json::to_string(&id)
            .unwrap()
            .contains(r#""drivers":["sd","uas""#));
        // No such disk, or a device with no driver anywhere up: nothing claimed.
        assert!(driver_chain(&sys.join("block/sdz/device")).is_empty());
        let loop0 = sys.join("devices/virtual/block/loop0");
        std::fs::create_dir_all(&loop0).unwrap();
        assert!(driver_chain(&loop0).is_empty());
    }

    /// Lines in the layout of kernel/module/procfs.c (names of the gadget modules the
    /// QEMU virt plan loads, sizes made up; addresses are zero for a reader without
    /// CAP_SYSLOG), a module with a taint flag, and one from a kernel without
    /// CONFIG_MODULE_UNLOAD.
    const MODULES: &str = "\
usb_f_ncm 40960 2 - Live 0x0000000000000000
u_ether 28672 3 usb_f_rndis,usb_f_ecm,usb_f_ncm, Live 0x0000000000000000
libcomposite 81920 4 usb_f_rndis,usb_f_ecm,usb_f_ncm, Live 0x0000000000000000
dummy_hcd 36864 0 - Live 0x0000000000000000
8021q 32768 0 [permanent], Live 0xbf000000 (O)
crc16 16384 - - Live 0x00000000
";

    #[test]
    fn proc_modules_lines_with_users_taints_and_no_unload() {
        let m = parse_modules(MODULES).unwrap();
        assert_eq!(m.len(), 6);
        assert_eq!(
            m[0],
            KernelModule {
                name: "usb_f_ncm".into(),
                size_bytes: 40_960,
                refcount: Some(2),
                used_by: vec![],
            }
        );
        assert_eq!(m[1].used_by, ["usb_f_rndis", "usb_f_ecm", "usb_f_ncm"]);
        assert_eq!(m[2].refcount, Some(4));
        assert_eq!(m[4].used_by, ["[permanent]"]);
        assert_eq!((m[5].refcount, m[5].used_by.len()), (None, 0));
        assert_eq!(parse_modules("").unwrap(), []);
        assert!(parse_modules("lonely\n").is_err());
        assert!(parse_modules("x big 0 - Live 0x0\n")
            .unwrap_err()
            .contains("size"));
    }

    #[test]
    fn cmdline_and_modules_from_a_proc_folder_or_why_not() {
        let root = tempfile::tempdir().unwrap();
        let proc = root.path();
        assert!(matches!(kernel_cmdline(proc), Reading::Unavailable { .. }));
        let Reading::Unavailable { reason } = modules(proc) else {
            panic!("no modules file")
        };
        assert!(reason.contains("modules"), "{reason}");
        std::fs::write(
            proc.join("cmdline"),
            "console=ttyAMA0 rdinit=/init benchboot.plan=qemu\n",
        )
        .unwrap();
        std::fs::write(proc.join("modules"), MODULES).unwrap();
        assert_eq!(
            kernel_cmdline(proc).value().map(String::as_str),
            Some("console=ttyAMA0 rdinit=/init benchboot.plan=qemu")
        );
        assert_eq!(modules(proc).value().map(Vec::len), Some(6));
        assert!(modules(proc).source().unwrap().ends_with("modules"));
        std::fs::write(proc.join("modules"), "garbage\n").unwrap();
        assert!(modules(proc).value().is_none());
    }

    #[test]
    fn governor_is_set_where_cpufreq_exists() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(set_governor(root.path(), "performance"), Ok(None));
        let g = root.path().join("cpu0/cpufreq");
        std::fs::create_dir_all(&g).unwrap();
        std::fs::write(g.join("scaling_governor"), "ondemand\n").unwrap();
        assert_eq!(
            set_governor(root.path(), "performance"),
            Ok(Some("performance".into()))
        );
    }
}
