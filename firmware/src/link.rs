//! Wired links as sysfs describes them: finding the interface a plan means, its
//! counters, and the facts the results record about it ([`LinkFacts`]).
//!
//! No udev and no `ethtool` binary on the board: everything here reads files under a
//! `net_root` (`/sys/class/net` on the board, a fake tree in the tests), as the kernel's
//! Documentation/ABI/testing/sysfs-class-net and sysfs-bus-usb describe them. Only
//! [`full_facts`] goes further, to the ethtool ioctls of [`crate::sys`]. What the texts
//! mean (speed, duplex, carrier, `/proc/net/dev`, `/proc/net/route`) is
//! `benchboot_netbench::link_facts`, tested there on captured texts; this file reads the
//! files.

use std::io;
use std::path::{Path, PathBuf};

pub use benchboot_netbench::link_facts::{counters_text, other_route, parse_proc_net_dev};
use benchboot_netbench::link_facts::{sysfs_facts, usb_speed_mbit};
use benchboot_results::counters::IfCounters;
use benchboot_results::network::{LinkFacts, UsbFacts};

use crate::sys;

/// Where the kernel lists the network interfaces of this namespace.
pub const SYS_CLASS_NET: &str = "/sys/class/net";

/// The attribute files of `<if>/statistics/` read by [`counters`], in [`IfCounters`]'
/// field order.
const COUNTER_FILES: [&str; 8] = [
    "rx_bytes",
    "tx_bytes",
    "rx_packets",
    "tx_packets",
    "rx_errors",
    "tx_errors",
    "rx_dropped",
    "tx_dropped",
];

fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_owned())
}

/// `aa:bb:cc:dd:ee:ff` (either case) as bytes.
fn parse_mac(text: &str) -> Option<[u8; 6]> {
    let mut mac = [0u8; 6];
    let mut parts = text.trim().split(':');
    for byte in &mut mac {
        let part = parts.next()?;
        if part.len() != 2 {
            return None;
        }
        *byte = u8::from_str_radix(part, 16).ok()?;
    }
    parts.next().is_none().then_some(mac)
}

/// The driver bound to interface `ifname`'s device: the last component of the
/// `<if>/device/driver` symlink (sysfs-class-net: `device`; the driver model's `driver`
/// link). `None` for a virtual interface (no `device`) or an unbound device.
pub fn driver(net_root: &Path, ifname: &str) -> Option<String> {
    let link = std::fs::read_link(net_root.join(ifname).join("device/driver")).ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

/// The interface of `net_root` (`/sys/class/net`) a plan means, not one of `exclude`
/// (interfaces already in use):
/// - with `mac`: the one whose `address` (sysfs-class-net) is `mac`; `drivers` is then
///   not consulted;
/// - else the first, by name, whose device's driver ([`driver`]) is one of `drivers`;
///   with no `drivers`, the first that has a `device` at all (a real NIC: not `lo`,
///   `dummy`, `veth` or a bridge).
///
/// `None` when no interface fits (or `net_root` cannot be read).
pub fn find_interface(
    net_root: &Path,
    mac: Option<&[u8; 6]>,
    drivers: &[String],
    exclude: &[String],
) -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(net_root)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !exclude.contains(n))
        .collect();
    names.sort();
    names.into_iter().find(|name| {
        let dir = net_root.join(name);
        match mac {
            Some(mac) => read_trimmed(&dir.join("address"))
                .and_then(|a| parse_mac(&a))
                .is_some_and(|a| a == *mac),
            None if drivers.is_empty() => dir.join("device").exists(),
            None => driver(net_root, name).is_some_and(|d| drivers.contains(&d)),
        }
    })
}

/// The interface counters of `ifname` now: `<if>/statistics/{rx,tx}_{bytes,packets,
/// errors,dropped}` (sysfs-class-net; bytes and packets since the interface was
/// created).
///
/// # Errors
/// A counter file missing or unreadable (the error names it), or not a number
/// (`InvalidData`).
pub fn counters(net_root: &Path, ifname: &str) -> io::Result<IfCounters> {
    let dir = net_root.join(ifname).join("statistics");
    let mut values = [0u64; COUNTER_FILES.len()];
    for (value, file) in values.iter_mut().zip(COUNTER_FILES) {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        *value = text.trim().parse().map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {:?}: {e}", path.display(), text.trim()),
            )
        })?;
    }
    let [rx_bytes, tx_bytes, rx_packets, tx_packets, rx_errors, tx_errors, rx_dropped, tx_dropped] =
        values;
    Ok(IfCounters {
        rx_bytes,
        tx_bytes,
        rx_packets,
        tx_packets,
        rx_errors,
        tx_errors,
        rx_dropped,
        tx_dropped,
    })
}

/// `<if> (<who>): carrier 1, rx 3 packets (...), tx 5 (...)` from `net_root`
/// (`/sys/class/net`): what a failed link's message says of an interface PID 1 sees.
/// Unreadable parts are said so (`carrier unknown`, `no counters (why)`).
pub fn state_text(net_root: &Path, ifname: &str, who: &str) -> String {
    let carrier =
        read_trimmed(&net_root.join(ifname).join("carrier")).unwrap_or_else(|| "unknown".into());
    let counters = match counters(net_root, ifname) {
        Ok(c) => counters_text(&c),
        Err(e) => format!("no counters ({e})"),
    };
    format!("{ifname} ({who}): carrier {carrier}, {counters}")
}

/// `<if> (<who>): rx ..., tx ...` from the text of another namespace's
/// `/proc/<pid>/net/dev` ([`parse_proc_net_dev`]; it has no carrier), or that `ifname`
/// is not there.
pub fn namespace_state_text(proc_net_dev: &str, ifname: &str, who: &str) -> String {
    match parse_proc_net_dev(proc_net_dev)
        .into_iter()
        .find(|(n, _)| n == ifname)
    {
        Some((_, c)) => format!("{ifname} ({who}): {}", counters_text(&c)),
        None => format!("{ifname} is not in the {who}'s namespace"),
    }
}

/// What the kernel says about interface `ifname` under `net_root` (`/sys/class/net`),
/// from sysfs alone (sysfs-class-net, sysfs-bus-usb): the driver ([`driver`]), the
/// negotiated `speed` (Mbit/s) and `duplex` (`full`/`half`; `unknown` is `None`), the
/// `mtu` (bytes), `carrier` (`1`; unreadable on a down interface: false) and, for a USB
/// adapter, [`usb_facts`]. Never fails: a fact that cannot be read is `None`.
/// `driver_version`, `firmware_version`, `bus_info`, `autoneg` (the ethtool ioctls) and
/// `rated_mbit` (the plan) are left `None` for the caller ([`full_facts`]).
pub fn facts(net_root: &Path, ifname: &str) -> LinkFacts {
    let dir = net_root.join(ifname);
    LinkFacts {
        driver: driver(net_root, ifname),
        usb: usb_facts(&dir.join("device")),
        ..sysfs_facts(|name| read_trimmed(&dir.join(name)))
    }
}

/// The USB device of a network interface's `device` (the USB interface, e.g.
/// `.../usb1/1-1/1-1.3/1-1.3:1.0`): its parent when that has `idVendor`, else, for a
/// device path under a USB bus (`/usb` in it), the nearest ancestor that has.
fn usb_device(device: &Path) -> Option<PathBuf> {
    let device = std::fs::canonicalize(device).ok()?;
    let parent = device.parent()?;
    if parent.join("idVendor").exists() {
        return Some(parent.to_path_buf());
    }
    if !device.to_string_lossy().contains("/usb") {
        return None;
    }
    device
        .ancestors()
        .skip(2)
        .find(|a| a.join("idVendor").exists())
        .map(Path::to_path_buf)
}

/// For the `device` of a USB network adapter: the USB device it belongs to, as
/// sysfs-bus-usb describes it (`/sys/bus/usb/devices/<path>/`): `speed` (Mbit/s as the
/// kernel writes it: `1.5`, `12`, `480`, `5000`), the path on the bus (the device's
/// directory name, `1-1.3`), `idVendor`/`idProduct` (hex) and the `manufacturer` and
/// `product` strings. `None` for a device not on USB.
pub fn usb_facts(device: &Path) -> Option<UsbFacts> {
    let usb = usb_device(device)?;
    let attr = |name: &str| read_trimmed(&usb.join(name));
    let hex = |name: &str| attr(name).and_then(|v| u16::from_str_radix(&v, 16).ok());
    let speed = attr("speed").unwrap_or_default();
    Some(UsbFacts {
        speed_mbit: usb_speed_mbit(&speed),
        speed,
        path: usb
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        vendor_id: hex("idVendor"),
        product_id: hex("idProduct"),
        manufacturer: attr("manufacturer").filter(|s| !s.is_empty()),
        product: attr("product").filter(|s| !s.is_empty()),
    })
}

/// Everything PID 1 records about `ifname`: [`facts`] from `net_root` (`/sys/class/net`), the
/// driver version, firmware version and bus info of `ETHTOOL_GDRVINFO` and the
/// autonegotiation of `ETHTOOL_GLINKSETTINGS`/`ETHTOOL_GSET` ([`sys::ethtool_drvinfo`],
/// [`sys::ethtool_autoneg`]; include/uapi/linux/ethtool.h), and the plan's
/// `rated_mbit` (Mbit/s). An ioctl that fails, or a string the driver left empty, is
/// `None`; the ioctl's driver name stands in where sysfs has none (a virtual device).
pub fn full_facts(net_root: &Path, ifname: &str, rated_mbit: Option<u32>) -> LinkFacts {
    let mut f = facts(net_root, ifname);
    let some = |s: String| (!s.is_empty()).then_some(s);
    if let Ok((driver, version, fw, bus)) = sys::ethtool_drvinfo(ifname) {
        if f.driver.is_none() {
            f.driver = some(driver);
        }
        f.driver_version = some(version);
        f.firmware_version = some(fw);
        f.bus_info = some(bus);
    }
    f.autoneg = sys::ethtool_autoneg(ifname).ok();
    f.rated_mbit = rated_mbit;
    f
}

#[cfg(test)]
mod tests;
