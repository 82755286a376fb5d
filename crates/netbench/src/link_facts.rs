//! What the kernel says about a wired link, read from the texts it writes: the
//! interface's sysfs attributes (speed, duplex, MTU, carrier; a USB adapter's bus
//! speed), the counters of `/proc/<pid>/net/dev` and the routes of `/proc/net/route`.
//!
//! Pure: each function takes the text (or a reader of sysfs attributes by name) and
//! never touches a file, so PID 1 reads the files (`firmware/src/link.rs`) and these
//! rules are tested on captured texts here. Formats: the kernel's
//! Documentation/ABI/testing/sysfs-class-net and sysfs-bus-usb, proc(5).

use benchboot_results::counters::IfCounters;
use benchboot_results::network::LinkFacts;

/// The negotiated speed in `<if>/speed`, Mbit/s. `None` when the kernel does not know
/// it: the file unreadable (`None` in: EINVAL while the link is down), `-1`
/// (SPEED_UNKNOWN), its unsigned form 4294967295 (older kernels), 0 or not a number.
pub fn speed_mbit(text: Option<&str>) -> Option<u32> {
    let v: i64 = text?.parse().ok()?;
    u32::try_from(v).ok().filter(|&v| v != 0 && v != u32::MAX)
}

/// The facts sysfs alone gives about an interface, from `attr` (the trimmed text of the
/// interface's attribute file by name, `None` when unreadable): `speed` ([`speed_mbit`]),
/// `duplex` (`full` / `half`; `unknown` or anything else is `None`), `mtu` (bytes) and
/// `carrier` (`1`; unreadable on a down interface: false). Every other field is left at
/// its default for the caller (driver, USB, the ethtool ioctls, the plan's rating).
pub fn sysfs_facts(attr: impl Fn(&str) -> Option<String>) -> LinkFacts {
    LinkFacts {
        speed_mbit: speed_mbit(attr("speed").as_deref()),
        duplex: attr("duplex").filter(|d| d == "full" || d == "half"),
        mtu: attr("mtu").and_then(|m| m.parse().ok()),
        carrier: attr("carrier").is_some_and(|c| c == "1"),
        ..LinkFacts::default()
    }
}

/// A USB device's `speed` (sysfs-bus-usb: Mbit/s as the kernel writes it, `1.5`, `12`,
/// `480`, `5000`, `10000`) as a number; `None` when it is not one (`53.3-480`, wireless
/// USB's range, or empty).
pub fn usb_speed_mbit(text: &str) -> Option<f64> {
    text.parse().ok().filter(|s: &f64| s.is_finite())
}

/// The interfaces and counters of `/proc/<pid>/net/dev` (proc(5)), the one view PID 1
/// has of another network namespace (`/sys/class/net` shows its own): two header lines,
/// then per interface `name: rx_bytes rx_packets rx_errs rx_drop fifo frame compressed
/// multicast tx_bytes tx_packets tx_errs tx_drop fifo colls carrier compressed`. Lines
/// that do not fit (short, not numbers) are skipped, never a panic.
pub fn parse_proc_net_dev(text: &str) -> Vec<(String, IfCounters)> {
    text.lines()
        .filter_map(|line| {
            let (name, fields) = line.split_once(':')?;
            let v: Vec<u64> = fields
                .split_whitespace()
                .map(str::parse)
                .collect::<Result<_, _>>()
                .ok()?;
            let name = name.trim();
            if name.is_empty() || v.len() < 16 {
                return None;
            }
            Some((
                name.to_owned(),
                IfCounters {
                    rx_bytes: v[0],
                    rx_packets: v[1],
                    rx_errors: v[2],
                    rx_dropped: v[3],
                    tx_bytes: v[8],
                    tx_packets: v[9],
                    tx_errors: v[10],
                    tx_dropped: v[11],
                },
            ))
        })
        .collect()
}

/// One interface's packet counters for a message: `rx 3 packets (0 errors, 0 dropped),
/// tx 5 (0, 2)`.
pub fn counters_text(c: &IfCounters) -> String {
    format!(
        "rx {} packets ({} errors, {} dropped), tx {} ({}, {})",
        c.rx_packets, c.rx_errors, c.rx_dropped, c.tx_packets, c.tx_errors, c.tx_dropped
    )
}

/// Another interface than `ifname` that `/proc/net/route` (the text of `route_table`)
/// sends traffic for `peer` over, by a route at least as specific as the one over
/// `ifname` (a wired LAN link left up in the same subnet as the WiFi lease): the tests
/// would measure that interface instead. `None`: `ifname` carries it. Each line is
/// `Iface Destination Gateway Flags RefCnt Use Metric Mask ...` with the addresses in
/// hex of the kernel's `__be32` as a host-order integer (net/ipv4/fib_trie.c).
pub fn other_route(route_table: &str, ifname: &str, peer: [u8; 4]) -> Option<String> {
    let peer = u32::from_be_bytes(peer);
    let routes: Vec<(&str, u32, u32)> = route_table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let hex = |s: &str| {
                u32::from_str_radix(s, 16)
                    .ok()
                    .map(|v| u32::from_be_bytes(v.to_ne_bytes()))
            };
            Some((*f.first()?, hex(f.get(1)?)?, hex(f.get(7)?)?))
        })
        .filter(|&(_, dest, mask)| peer & mask == dest)
        .collect();
    let ours = routes
        .iter()
        .filter(|r| r.0 == ifname)
        .map(|r| r.2.count_ones())
        .max()?;
    routes
        .iter()
        .find(|r| r.0 != ifname && r.2.count_ones() >= ours)
        .map(|r| r.0.to_owned())
}

#[cfg(test)]
mod tests;
