//! One `[[network.wired]]` of a plan file on an image: its name, drivers, MAC and
//! topology as a [`WiredPlan`].

use std::ops::Range;

use toml::Spanned;

use super::{
    unavailable_reason, ImageFacts, USB_ETHERNET_DRIVERS, WIRED_LINK_WAIT_MS, WIRED_SUBNET,
};
use crate::file::WiredSection;
use crate::network::{Topology, WiredPlan};
use crate::spelling::WiredKind;

/// A refusal of a wired link's key: (key, its span, why).
pub(super) type WiredError = (&'static str, Option<Range<usize>>, String);

/// One `[[network.wired]]` entry (index `i`) on this image. Errors: (key, span, message).
/// A link the board lacks is not an error here: the plan carries why
/// ([`WiredPlan::unavailable`]) and PID 1 records it and runs the rest.
pub(super) fn wired_link(
    i: usize,
    w: &WiredSection,
    image: &ImageFacts,
) -> Result<WiredPlan, WiredError> {
    let kind = *w.link.get_ref();
    let name = link_name(kind, w)?;
    let unavailable = unavailable_reason(kind, &image.board, image);
    let (drivers, rated_mbit) = link_drivers(kind, w, image);
    check_drivers(&drivers)?;
    let mac = link_mac(w)?;
    let topology = topology(i, w)?;
    Ok(WiredPlan {
        name,
        kind,
        drivers,
        mac,
        topology,
        link_wait_ms: w.link_wait.map(|m| m.0).unwrap_or(WIRED_LINK_WAIT_MS),
        rated_mbit,
        host_in_namespace: None,
        unavailable,
    })
}

/// The link's name: the file's, else `eth` (built-in) or `usb-eth`; 1..=15 characters
/// of an interface name.
fn link_name(kind: WiredKind, w: &WiredSection) -> Result<String, WiredError> {
    let name = match &w.name {
        Some(n) => n.get_ref().clone(),
        None => match kind {
            WiredKind::Builtin => "eth".into(),
            WiredKind::UsbAdapter => "usb-eth".into(),
        },
    };
    if crate::file::name_problem(&name).is_some() || name.len() > 15 {
        return Err((
            "name",
            w.name.as_ref().map(Spanned::span),
            format!("`{name}`: a link name is 1..=15 of A-Z a-z 0-9 - _"),
        ));
    }
    Ok(name)
}

/// The drivers the link's interface may have (the file's, else the board's Ethernet or
/// USB adapter drivers, else [`USB_ETHERNET_DRIVERS`]) and its rated speed, Mbit/s
/// (a built-in port's only).
fn link_drivers(
    kind: WiredKind,
    w: &WiredSection,
    image: &ImageFacts,
) -> (Vec<String>, Option<u32>) {
    match (kind, &image.ethernet) {
        (WiredKind::Builtin, Some(e)) => (
            w.drivers.clone().unwrap_or_else(|| e.drivers.clone()),
            e.rated_mbit,
        ),
        (WiredKind::Builtin, None) => (w.drivers.clone().unwrap_or_default(), None),
        (WiredKind::UsbAdapter, _) => (
            w.drivers
                .clone()
                .unwrap_or_else(|| match &image.usb_ethernet {
                    Some(u) => u.drivers.clone(),
                    None => USB_ETHERNET_DRIVERS.iter().map(|d| d.to_string()).collect(),
                }),
            None,
        ),
    }
}

/// Refuses a driver name that sysfs cannot show: empty, over 64 bytes, or with a `/`.
fn check_drivers(drivers: &[String]) -> Result<(), WiredError> {
    if let Some(d) = drivers
        .iter()
        .find(|d| d.is_empty() || d.len() > 64 || d.contains('/'))
    {
        return Err((
            "drivers",
            None,
            format!("`{d}` is no driver name (as /sys/class/net/<if>/device/driver shows it)"),
        ));
    }
    Ok(())
}

/// The file's `mac`, written the one way ([`crate::network::mac_text`]), if it sets one.
fn link_mac(w: &WiredSection) -> Result<Option<String>, WiredError> {
    let Some(m) = &w.mac else { return Ok(None) };
    match crate::network::parse_mac(m.get_ref()) {
        Some(b) => Ok(Some(crate::network::mac_text(&b))),
        None => Err((
            "mac",
            Some(m.span()),
            format!(
                "`{}` is no MAC address; write six hex bytes, e.g. \"52:54:00:12:34:56\"",
                m.get_ref()
            ),
        )),
    }
}

/// The IPv4 address `v` of key `key`, as its four bytes.
fn ipv4(v: &Spanned<String>, key: &'static str) -> Result<[u8; 4], WiredError> {
    v.get_ref()
        .parse::<std::net::Ipv4Addr>()
        .map(|a| a.octets())
        .map_err(|_| {
            (
                key,
                Some(v.span()),
                format!(
                    "`{}` is no IPv4 address; write e.g. \"192.168.1.10\"",
                    v.get_ref()
                ),
            )
        })
}

/// The link's topology: `direct` (the default) or `lan`.
fn topology(i: usize, w: &WiredSection) -> Result<Topology, WiredError> {
    match w.topology.as_ref().map(|t| t.get_ref().as_str()) {
        None | Some("direct") => direct(i, w),
        Some("lan") => lan(w),
        Some(other) => Err((
            "topology",
            w.topology.as_ref().map(Spanned::span),
            format!("`{other}`: write \"direct\" (a cable to the host) or \"lan\""),
        )),
    }
}

/// A cable to the host: the board leases from the file's /30, else link `i`'s
/// ([`WIRED_SUBNET`] `+ 4 i`), for an hour; no `peer`.
fn direct(i: usize, w: &WiredSection) -> Result<Topology, WiredError> {
    if let Some(p) = &w.peer {
        return Err((
            "peer",
            Some(p.span()),
            "a direct link leases the host its address: `peer` is for topology = \"lan\"".into(),
        ));
    }
    let subnet = match &w.subnet {
        Some(s) => {
            let a = ipv4(s, "subnet")?;
            if a[3] & 3 != 0 {
                return Err((
                    "subnet",
                    Some(s.span()),
                    format!(
                        "`{}` is no /30: the last number must be a multiple of 4",
                        s.get_ref()
                    ),
                ));
            }
            a
        }
        None => (u32::from_be_bytes(WIRED_SUBNET) + 4 * i as u32).to_be_bytes(),
    };
    Ok(Topology::Direct {
        subnet,
        lease_secs: 3600,
    })
}

/// A LAN: the board takes its address from the LAN's DHCP server; the peer is the
/// file's `peer`, else the first announcing itself; no `subnet`.
fn lan(w: &WiredSection) -> Result<Topology, WiredError> {
    if let Some(s) = &w.subnet {
        return Err((
            "subnet",
            Some(s.span()),
            "on a LAN the board takes its address from the LAN's DHCP server: `subnet` is for topology = \"direct\"".into(),
        ));
    }
    Ok(Topology::Lan {
        peer: w.peer.as_ref().map(|p| ipv4(p, "peer")).transpose()?,
    })
}
