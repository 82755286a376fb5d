//! Tests of finding a wired link by MAC or driver, and its facts, over a fake sysfs tree.
use super::*;
use std::os::unix::fs::symlink;

/// A fake sysfs: `devices/`, `bus/` and `class/net/` under a tempdir, linked the way
/// the kernel links them (relative symlinks).
struct Sysfs {
    dir: tempfile::TempDir,
}

const LAN7500_MAC: [u8; 6] = [0x00, 0x80, 0x0f, 0x75, 0x00, 0x01];

impl Sysfs {
    fn new() -> Sysfs {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("class/net")).unwrap();
        Sysfs { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn net(&self) -> PathBuf {
        self.root().join("class/net")
    }

    fn write(dir: &Path, attrs: &[(&str, &str)]) {
        std::fs::create_dir_all(dir).unwrap();
        for (name, value) in attrs {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, format!("{value}\n")).unwrap();
        }
    }

    /// A USB device at `devices/<parent>/<path>` with its attributes.
    fn usb_device(&self, devpath: &str, attrs: &[(&str, &str)]) {
        Sysfs::write(&self.root().join("devices").join(devpath), attrs);
    }

    /// Interface `name` of the device at `devices/<devpath>` (`None`: a virtual
    /// interface, under `devices/virtual/net`), its device bound to `driver`.
    fn interface(
        &self,
        name: &str,
        devpath: Option<&str>,
        driver: Option<&str>,
        attrs: &[(&str, &str)],
    ) {
        let devices = self.root().join("devices");
        let (dev_rel, if_dir) = match devpath {
            Some(p) => (p.to_owned(), devices.join(p).join("net").join(name)),
            None => (
                format!("virtual/net/{name}"),
                devices.join("virtual/net").join(name),
            ),
        };
        Sysfs::write(&if_dir, attrs);
        if let Some(p) = devpath {
            let last = Path::new(p).file_name().unwrap().to_str().unwrap();
            symlink(format!("../../../{last}"), if_dir.join("device")).unwrap();
            if let Some(d) = driver {
                let depth = p.split('/').count() + 1;
                let up = "../".repeat(depth);
                let target = format!("{up}bus/usb/drivers/{d}");
                symlink(target, devices.join(p).join("driver")).unwrap();
            }
        }
        let class = if devpath.is_some() {
            format!("../../devices/{dev_rel}/net/{name}")
        } else {
            format!("../../devices/{dev_rel}")
        };
        symlink(class, self.net().join(name)).unwrap();
    }
}

const LAN7500_USB: &str = "platform/soc/3f980000.usb/usb1/1-1/1-1.3";

/// A LAN7500 USB adapter (smsc75xx) on hub port 3, up at 1000 Mbit/s; a second one at
/// full speed (12) on port 4; the Raspberry Pi's built-in smsc95xx (on the board's own
/// USB hub), its link down; a platform MAC with no USB; `lo`.
fn board() -> Sysfs {
    let s = Sysfs::new();
    s.usb_device(
        LAN7500_USB,
        &[
            ("speed", "480"),
            ("idVendor", "0424"),
            ("idProduct", "7500"),
            ("manufacturer", "SMSC"),
            ("product", "LAN7500"),
            ("devpath", "1.3"),
        ],
    );
    s.interface(
        "eth1",
        Some(&format!("{LAN7500_USB}/1-1.3:1.0")),
        Some("smsc75xx"),
        &[
            ("address", "00:80:0f:75:00:01"),
            ("speed", "1000"),
            ("duplex", "full"),
            ("mtu", "1500"),
            ("carrier", "1"),
        ],
    );
    let slow = "platform/soc/3f980000.usb/usb1/1-1/1-1.4";
    s.usb_device(
        slow,
        &[
            ("speed", "12"),
            ("idVendor", "0424"),
            ("idProduct", "7500"),
            ("product", "LAN7500"),
        ],
    );
    s.interface(
        "eth2",
        Some(&format!("{slow}/1-1.4:1.0")),
        Some("smsc75xx"),
        &[
            ("address", "00:80:0f:75:00:02"),
            ("speed", "100"),
            ("duplex", "half"),
            ("mtu", "1500"),
            ("carrier", "1"),
        ],
    );
    let builtin = "platform/soc/3f980000.usb/usb1/1-1/1-1.1";
    s.usb_device(
        builtin,
        &[
            ("speed", "480"),
            ("idVendor", "0424"),
            ("idProduct", "ec00"),
        ],
    );
    // Down: speed -1, duplex unknown, no readable carrier (EINVAL in the kernel).
    s.interface(
        "eth0",
        Some(&format!("{builtin}/1-1.1:1.0")),
        Some("smsc95xx"),
        &[
            ("address", "b8:27:eb:00:00:01"),
            ("speed", "-1"),
            ("duplex", "unknown"),
            ("mtu", "1500"),
        ],
    );
    s.interface(
        "end0",
        Some("platform/soc/ff540000.ethernet"),
        Some("rk_gmac-dwmac"),
        &[
            ("address", "02:00:00:00:00:03"),
            ("speed", "4294967295"),
            ("mtu", "1500"),
            ("carrier", "0"),
        ],
    );
    s.interface(
        "lo",
        None,
        None,
        &[("address", "00:00:00:00:00:00"), ("mtu", "65536")],
    );
    s
}

#[test]
fn a_usb_adapter_at_high_speed() {
    let s = board();
    let f = facts(&s.net(), "eth1");
    assert_eq!(
        f,
        LinkFacts {
            driver: Some("smsc75xx".into()),
            speed_mbit: Some(1000),
            duplex: Some("full".into()),
            mtu: Some(1500),
            carrier: true,
            usb: Some(UsbFacts {
                speed: "480".into(),
                speed_mbit: Some(480.0),
                path: "1-1.3".into(),
                vendor_id: Some(0x0424),
                product_id: Some(0x7500),
                manufacturer: Some("SMSC".into()),
                product: Some("LAN7500".into()),
            }),
            ..LinkFacts::default()
        }
    );
    assert_eq!(f.degraded(), None);
}

#[test]
fn a_usb_adapter_at_full_speed_is_degraded() {
    let s = board();
    let f = facts(&s.net(), "eth2");
    let usb = f.usb.clone().unwrap();
    assert_eq!((usb.speed.as_str(), usb.speed_mbit), ("12", Some(12.0)));
    assert_eq!(usb.path, "1-1.4");
    assert_eq!(usb.manufacturer, None);
    assert_eq!(f.duplex.as_deref(), Some("half"));
    assert!(f.degraded().unwrap().contains("12 Mbit/s"));
}

#[test]
fn a_builtin_smsc95xx_with_its_link_down() {
    let s = board();
    let f = facts(&s.net(), "eth0");
    assert_eq!(f.driver.as_deref(), Some("smsc95xx"));
    assert_eq!(f.speed_mbit, None, "speed -1 is unknown");
    assert_eq!(f.duplex, None, "duplex unknown");
    assert!(!f.carrier, "carrier unreadable on a down link");
    assert_eq!(f.mtu, Some(1500));
    let usb = f.usb.unwrap();
    assert_eq!(
        (usb.path.as_str(), usb.product_id, usb.product),
        ("1-1.1", Some(0xec00), None)
    );
    // A down link whose speed cannot even be read (EINVAL): unknown too.
    std::fs::remove_file(s.net().join("eth0/speed")).unwrap();
    assert_eq!(facts(&s.net(), "eth0").speed_mbit, None);
}

#[test]
fn a_platform_mac_is_not_usb() {
    let s = board();
    let f = facts(&s.net(), "end0");
    assert_eq!(f.driver.as_deref(), Some("rk_gmac-dwmac"));
    assert_eq!(f.speed_mbit, None, "4294967295 is SPEED_UNKNOWN unsigned");
    assert!(!f.carrier);
    assert_eq!(f.usb, None);
}

#[test]
fn virtual_and_missing_interfaces() {
    let s = board();
    let lo = facts(&s.net(), "lo");
    assert_eq!(
        lo,
        LinkFacts {
            mtu: Some(65536),
            ..LinkFacts::default()
        }
    );
    assert_eq!(facts(&s.net(), "nope"), LinkFacts::default());
    assert_eq!(
        facts(Path::new("/nonexistent"), "eth0"),
        LinkFacts::default()
    );
}

#[test]
fn usb_speeds_as_sysfs_writes_them() {
    let s = Sysfs::new();
    for (dev, speed, want) in [
        ("usb2/2-1", "5000", Some(5000.0)),
        ("usb3/3-1", "1.5", Some(1.5)),
        ("usb4/4-1", "53.3-480", None),
    ] {
        s.usb_device(dev, &[("speed", speed), ("idVendor", "0bda")]);
        let intf = s.root().join("devices").join(dev).join("x:1.0");
        std::fs::create_dir_all(&intf).unwrap();
        let u = usb_facts(&intf).unwrap();
        assert_eq!((u.speed.as_str(), u.speed_mbit), (speed, want));
        assert_eq!(u.vendor_id, Some(0x0bda));
    }
}

#[test]
fn usb_device_found_above_a_deeper_device() {
    // A driver whose net device hangs below the USB interface: the nearest ancestor
    // with idVendor is the USB device.
    let s = Sysfs::new();
    s.usb_device("usb1/1-1", &[("speed", "480"), ("idVendor", "0b95")]);
    let deep = s.root().join("devices/usb1/1-1/1-1:1.0/extra");
    std::fs::create_dir_all(&deep).unwrap();
    assert_eq!(usb_facts(&deep).unwrap().path, "1-1");
    assert_eq!(usb_facts(&s.root().join("devices/none")), None);
}

#[test]
fn find_by_mac_over_drivers() {
    let s = board();
    let smsc95 = vec!["smsc95xx".to_owned()];
    assert_eq!(
        find_interface(&s.net(), None, &smsc95, &[]).as_deref(),
        Some("eth0")
    );
    assert_eq!(
        find_interface(&s.net(), Some(&LAN7500_MAC), &smsc95, &[]).as_deref(),
        Some("eth1")
    );
    // The address file's case does not matter.
    std::fs::write(s.net().join("eth1/address"), "00:80:0F:75:00:01\n").unwrap();
    assert_eq!(
        find_interface(&s.net(), Some(&LAN7500_MAC), &[], &[]).as_deref(),
        Some("eth1")
    );
    assert_eq!(find_interface(&s.net(), Some(&[9; 6]), &smsc95, &[]), None);
    // The MAC of an interface already in use: none.
    assert_eq!(
        find_interface(&s.net(), Some(&LAN7500_MAC), &[], &["eth1".into()]),
        None
    );
}

#[test]
fn find_skips_excluded_interfaces() {
    let s = board();
    let smsc75 = vec!["smsc75xx".to_owned()];
    assert_eq!(
        find_interface(&s.net(), None, &smsc75, &[]).as_deref(),
        Some("eth1")
    );
    assert_eq!(
        find_interface(&s.net(), None, &smsc75, &["eth1".into()]).as_deref(),
        Some("eth2")
    );
    assert_eq!(
        find_interface(&s.net(), None, &smsc75, &["eth1".into(), "eth2".into()]),
        None
    );
    let both = vec!["cdc_ether".to_owned(), "rk_gmac-dwmac".to_owned()];
    assert_eq!(
        find_interface(&s.net(), None, &both, &[]).as_deref(),
        Some("end0")
    );
    assert_eq!(find_interface(&s.net(), None, &["r8152".into()], &[]), None);
    assert_eq!(
        find_interface(Path::new("/nonexistent"), None, &[], &[]),
        None
    );
}

#[test]
fn find_any_real_nic_in_name_order() {
    let s = board();
    // No drivers: any interface with a device, first by name: end0 < eth0 < eth1.
    assert_eq!(
        find_interface(&s.net(), None, &[], &[]).as_deref(),
        Some("end0")
    );
    assert_eq!(
        find_interface(&s.net(), None, &[], &["end0".into(), "eth0".into()]).as_deref(),
        Some("eth1")
    );
    // Only virtual interfaces left: none (lo has no device).
    let all: Vec<String> = ["end0", "eth0", "eth1", "eth2"].map(String::from).into();
    assert_eq!(find_interface(&s.net(), None, &[], &all), None);

    // Created in an order that is not the name order: still the first by name.
    let s = Sysfs::new();
    for (i, name) in ["usb1", "eth9", "eth10", "enx00800f750001"]
        .iter()
        .enumerate()
    {
        s.interface(
            name,
            Some(&format!("usb{i}/{i}-1/{i}-1:1.0")),
            Some("cdc_ether"),
            &[("address", "02:00:00:00:00:01")],
        );
    }
    let cdc = vec!["cdc_ether".to_owned()];
    for _ in 0..3 {
        assert_eq!(
            find_interface(&s.net(), None, &cdc, &[]).as_deref(),
            Some("enx00800f750001")
        );
    }
    // Two with the same MAC: the first by name too.
    assert_eq!(
        find_interface(
            &s.net(),
            Some(&[2, 0, 0, 0, 0, 1]),
            &[],
            &["enx00800f750001".into()]
        )
        .as_deref(),
        Some("eth10")
    );
}

#[test]
fn counters_parse_and_a_missing_file_is_an_error() {
    let s = board();
    let stats: Vec<(String, String)> = COUNTER_FILES
        .iter()
        .enumerate()
        .map(|(i, f)| {
            (
                format!("statistics/{f}"),
                (1000 * (i as u64 + 1)).to_string(),
            )
        })
        .collect();
    let attrs: Vec<(&str, &str)> = stats
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    Sysfs::write(&s.net().join("eth1"), &attrs);
    // The last one larger than u32.
    std::fs::write(
        s.net().join("eth1/statistics/tx_dropped"),
        "18446744073709551615\n",
    )
    .unwrap();
    assert_eq!(
        counters(&s.net(), "eth1").unwrap(),
        IfCounters {
            rx_bytes: 1000,
            tx_bytes: 2000,
            rx_packets: 3000,
            tx_packets: 4000,
            rx_errors: 5000,
            tx_errors: 6000,
            rx_dropped: 7000,
            tx_dropped: u64::MAX,
        }
    );
    std::fs::remove_file(s.net().join("eth1/statistics/rx_dropped")).unwrap();
    let err = counters(&s.net(), "eth1").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    assert!(err.to_string().contains("rx_dropped"), "{err}");
    std::fs::write(s.net().join("eth1/statistics/rx_dropped"), "-3\n").unwrap();
    let err = counters(&s.net(), "eth1").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    assert!(err.to_string().contains("rx_dropped"), "{err}");
    assert!(counters(&s.net(), "nope").is_err());
}

#[test]
fn macs_as_sysfs_writes_them() {
    assert_eq!(parse_mac("00:80:0f:75:00:01\n"), Some(LAN7500_MAC));
    assert_eq!(parse_mac("00:80:0F:75:00:01"), Some(LAN7500_MAC));
    for bad in [
        "",
        "00:80:0f:75:00",
        "00:80:0f:75:00:01:02",
        "0:80:0f:75:00:01",
        "zz:80:0f:75:00:01",
    ] {
        assert_eq!(parse_mac(bad), None, "{bad:?}");
    }
}

/// The real `lo` of this machine through [`full_facts`]: no device, so no sysfs driver;
/// ETHTOOL_GDRVINFO and the link settings answer EOPNOTSUPP, so those stay `None`; the
/// plan's rating is passed through.
#[test]
fn full_facts_of_the_loopback() {
    let f = full_facts(Path::new(SYS_CLASS_NET), "lo", Some(1000));
    assert_eq!(f.driver, None);
    assert_eq!(
        (f.driver_version, f.firmware_version, f.bus_info),
        (None, None, None)
    );
    assert_eq!(f.autoneg, None);
    assert_eq!(f.rated_mbit, Some(1000));
    assert_eq!(f.usb, None);
    assert!(f.mtu.is_some());
}

/// /proc/net/dev as Linux 6.1 prints it: the capture `crates/netbench`'s link-fact
/// tests parse.
const PROC_NET_DEV: &str =
    include_str!("../../../crates/netbench/src/link_facts/testdata/proc_net_dev.txt");

#[test]
fn a_failed_links_message_says_what_each_end_saw() {
    let s = Sysfs::new();
    let attrs: Vec<(String, String)> = COUNTER_FILES
        .iter()
        .enumerate()
        .map(|(i, f)| (format!("statistics/{f}"), i.to_string()))
        .chain([("carrier".to_owned(), "1".to_owned())])
        .collect();
    let attrs: Vec<(&str, &str)> = attrs
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    Sysfs::write(&s.net().join("usb0"), &attrs);
    assert_eq!(
        state_text(&s.net(), "usb0", "board"),
        "usb0 (board): carrier 1, rx 2 packets (4 errors, 6 dropped), tx 3 (5, 7)"
    );
    // A down interface has no readable carrier; a vanished one no counters either.
    std::fs::remove_file(s.net().join("usb0/carrier")).unwrap();
    assert!(
        state_text(&s.net(), "usb0", "board").starts_with("usb0 (board): carrier unknown, rx 2")
    );
    let gone = state_text(&s.net(), "usb9", "board");
    assert!(
        gone.starts_with("usb9 (board): carrier unknown, no counters (")
            && gone.contains("rx_bytes"),
        "{gone}"
    );
    assert_eq!(
        namespace_state_text(PROC_NET_DEV, "usb1", "host side"),
        "usb1 (host side): rx 0 packets (0 errors, 0 dropped), tx 10 (0, 7)"
    );
    assert_eq!(
        namespace_state_text(PROC_NET_DEV, "usb2", "host side"),
        "usb2 is not in the host side's namespace"
    );
    assert_eq!(
        namespace_state_text("", "usb1", "host side"),
        "usb1 is not in the host side's namespace"
    );
}
