//! Tests of the wired link facts on texts as the kernel writes them.

use std::collections::HashMap;

use super::*;

/// A sysfs attribute reader over `attrs` (name, trimmed text); absent names read as
/// unreadable, as a down interface's `speed` and `carrier` do (EINVAL).
fn sysfs(attrs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = attrs
        .iter()
        .map(|&(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    move |name| map.get(name).cloned()
}

#[test]
fn speeds_as_sysfs_writes_them() {
    assert_eq!(speed_mbit(Some("100")), Some(100));
    assert_eq!(speed_mbit(Some("2500")), Some(2500));
    for unknown in ["-1", "4294967295", "0", "", "fast", "-100"] {
        assert_eq!(speed_mbit(Some(unknown)), None, "{unknown:?}");
    }
    assert_eq!(speed_mbit(None), None);
    for (text, want) in [
        ("5000", Some(5000.0)),
        ("480", Some(480.0)),
        ("1.5", Some(1.5)),
        ("53.3-480", None),
        ("", None),
        ("inf", None),
    ] {
        assert_eq!(usb_speed_mbit(text), want, "{text:?}");
    }
}

/// A Raspberry Pi 3B's smsc95xx at 100 Mb/s full duplex, then with its cable out
/// (speed and carrier unreadable, duplex `unknown`), then a gigabit adapter at half
/// duplex: each attribute read on its own.
#[test]
fn sysfs_facts_of_a_link_up_and_down() {
    let up = sysfs_facts(sysfs(&[
        ("speed", "100"),
        ("duplex", "full"),
        ("mtu", "1500"),
        ("carrier", "1"),
        ("operstate", "up"),
    ]));
    assert_eq!(
        (up.speed_mbit, up.duplex.as_deref(), up.mtu, up.carrier),
        (Some(100), Some("full"), Some(1500), true)
    );
    assert_eq!(
        (up.driver, up.autoneg, up.rated_mbit, up.usb),
        (None, None, None, None)
    );
    let down = sysfs_facts(sysfs(&[("duplex", "unknown"), ("mtu", "1500")]));
    assert_eq!(
        (down.speed_mbit, down.duplex, down.mtu, down.carrier),
        (None, None, Some(1500), false)
    );
    let half = sysfs_facts(sysfs(&[
        ("speed", "1000"),
        ("duplex", "half"),
        ("mtu", "9000"),
        ("carrier", "0"),
    ]));
    assert_eq!(
        (
            half.speed_mbit,
            half.duplex.as_deref(),
            half.mtu,
            half.carrier
        ),
        (Some(1000), Some("half"), Some(9000), false)
    );
    let odd = sysfs_facts(sysfs(&[("speed", "-1"), ("duplex", "Full"), ("mtu", "x")]));
    assert_eq!((odd.speed_mbit, odd.duplex, odd.mtu), (None, None, None));
}

/// /proc/net/dev as Linux 6.1 prints it (captured on a Debian machine, names and
/// counters changed): two header lines, names right-aligned. The firmware's link tests
/// read the same capture.
const PROC_NET_DEV: &str = include_str!("testdata/proc_net_dev.txt");

#[test]
fn proc_net_dev_gives_each_interface_its_counters() {
    let got = parse_proc_net_dev(PROC_NET_DEV);
    let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["lo", "usb1", "eth0"]);
    assert_eq!(
        got[2].1,
        IfCounters {
            rx_bytes: 741_246_073,
            rx_packets: 19_442,
            rx_errors: 1,
            rx_dropped: 2,
            tx_bytes: 863_213,
            tx_packets: 11_319,
            tx_errors: 3,
            tx_dropped: 4,
        }
    );
    assert_eq!(
        counters_text(&got[1].1),
        "rx 0 packets (0 errors, 0 dropped), tx 10 (0, 7)"
    );
}

#[test]
fn proc_net_dev_skips_what_does_not_fit() {
    // Short lines, words, a negative, an overflow, no name, nothing: no panic, no entry.
    let text = "eth0: 1 2 3\nusb0: a b c d e f g h i j k l m n o p\n\
                usb1: -1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n\
                usb2: 99999999999999999999 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n\
                : 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n\n:::\n";
    assert!(parse_proc_net_dev(text).is_empty());
    assert!(parse_proc_net_dev("").is_empty());
    // The good line among them still counts.
    let mixed = format!("{text}  wlan0: 5 6 0 0 0 0 0 0 7 8 0 0 0 0 0 0\n");
    let got = parse_proc_net_dev(&mixed);
    assert_eq!(got.len(), 1);
    assert_eq!(
        (got[0].0.as_str(), got[0].1.rx_packets, got[0].1.tx_packets),
        ("wlan0", 6, 8)
    );
}

/// `/proc/net/route` as a little-endian kernel writes it (x86_64, arm): eth2 and
/// wlan0 both on 10.56.0.0/24, eth0 on 10.0.2.0/24 with the default route.
#[cfg(target_endian = "little")]
#[test]
fn a_second_route_into_the_same_subnet_is_found() {
    let table =
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
        eth0\t00000000\t0202000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n\
        eth0\t0002000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n\
        eth2\t0000380A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n\
        wlan0\t0000380A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n\
        wlan0\t00003C0A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";
    assert_eq!(
        other_route(table, "wlan0", [10, 56, 0, 1]).as_deref(),
        Some("eth2")
    );
    assert_eq!(other_route(table, "wlan0", [10, 60, 0, 1]), None);
    // Only the default route elsewhere: wlan0's own /24 wins.
    assert_eq!(other_route(table, "eth2", [10, 0, 2, 2]), None);
    // No route over wlan0 at all: nothing to say here.
    assert_eq!(other_route(table, "wlan0", [192, 168, 1, 1]), None);
}
