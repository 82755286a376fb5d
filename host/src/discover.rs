//! Finding a board with no address given: the places a board can be, in order, and a
//! quick TCP probe of each.
//!
//! Order: `$BENCHBOOT_BOARD`; the board's end of each gadget link (10.55.0.1, .5, .9:
//! one /30 per function, crates/plan/src/network.rs), probed only when this host has an
//! address on that /30; the board's well-known IPv6 link-local address `fe80::1` on
//! every USB network interface of this host (Linux: driver cdc_ncm, cdc_ether or
//! rndis_host). Never a loopback port: any local user can listen there and answer in a
//! board's name, so `cargo xtask qemu`'s forward (127.0.0.1:18080) is named with
//! `--addr` or `$BENCHBOOT_BOARD`, never guessed.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV6, ToSocketAddrs};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use benchboot_plan::{GadgetPlan, BOARD_LINK_LOCAL, QEMU_RESULTS_FORWARD, RESULTS_PORT};

/// Environment variable that names the board (`HOST:PORT`) for `benchboot fetch`.
pub const BOARD_ENV: &str = "BENCHBOOT_BOARD";
/// Host-side drivers of the gadget's functions (drivers/net/usb).
pub const USB_NET_DRIVERS: &[&str] = &["cdc_ncm", "cdc_ether", "rndis_host"];

/// One place to try: printed and passed on as `label` (`HOST:PORT`,
/// `[fe80::1%usb0]:8080`), reached at `addr`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub label: String,
    pub addr: SocketAddr,
    /// Probe only when this host has an address on the board's /30.
    pub needs_link: bool,
}

/// One of this host's network interfaces on a USB network driver: a gadget board's
/// link, where the board answers on its link-local address.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct UsbLink {
    /// The interface name: `usb0`, `enx0211...`.
    pub name: String,
    /// Its interface index (the scope of a link-local address).
    pub ifindex: u32,
}

/// The candidates for `env` (`$BENCHBOOT_BOARD`) and this host's USB network links.
///
/// # Errors
/// `env` is not a `HOST:PORT` that resolves.
pub fn candidates(env: Option<&str>, usb: &[UsbLink]) -> Result<Vec<Candidate>> {
    let mut v = Vec::new();
    if let Some(e) = env.filter(|s| !s.is_empty()) {
        let addr = parse_addr(e).with_context(|| format!("{BOARD_ENV}={e}"))?;
        v.push(Candidate {
            label: e.to_owned(),
            addr,
            needs_link: false,
        });
    }
    let g = GadgetPlan::default_for("");
    for i in 0..g.functions.len() {
        let ip = Ipv4Addr::from(g.link_addresses(i).0);
        v.push(Candidate {
            label: format!("{ip}:{RESULTS_PORT}"),
            addr: SocketAddr::from((ip, RESULTS_PORT)),
            needs_link: true,
        });
    }
    let ll = Ipv6Addr::from(BOARD_LINK_LOCAL);
    for UsbLink { name, ifindex } in usb {
        v.push(Candidate {
            label: format!("[{ll}%{name}]:{RESULTS_PORT}"),
            addr: SocketAddr::V6(SocketAddrV6::new(ll, RESULTS_PORT, 0, *ifindex)),
            needs_link: false,
        });
    }
    Ok(v)
}

/// This host's network interfaces bound to a [`USB_NET_DRIVERS`] driver, from a
/// `/sys/class/net`-shaped folder, sorted by name; empty where there is none (macOS).
pub fn usb_net_interfaces(sys_class_net: &Path) -> Vec<UsbLink> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(sys_class_net)
        .into_iter()
        .flatten()
        .flatten()
    {
        let dir = e.path();
        let driver = std::fs::read_link(dir.join("device/driver"))
            .ok()
            .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()));
        if !driver.is_some_and(|d| USB_NET_DRIVERS.contains(&d.as_str())) {
            continue;
        }
        let index = std::fs::read_to_string(dir.join("ifindex"))
            .ok()
            .and_then(|s| s.trim().parse().ok());
        if let Some(ifindex) = index {
            v.push(UsbLink {
                name: e.file_name().to_string_lossy().into_owned(),
                ifindex,
            });
        }
    }
    v.sort();
    v
}

/// `HOST:PORT`, `[v6]:PORT`, or `[fe80::…%IFACE]:PORT` (zone as interface name or index,
/// which URLs cannot carry) to one socket address.
///
/// # Errors
/// Not of that shape, an unknown interface, or a host name that does not resolve.
pub fn parse_addr(s: &str) -> Result<SocketAddr> {
    if let Some((ip, rest)) = s.strip_prefix('[').and_then(|r| r.split_once('%')) {
        let (zone, port) = rest
            .split_once("]:")
            .with_context(|| format!("`{s}`: give [ADDRESS%INTERFACE]:PORT"))?;
        let ip: Ipv6Addr = ip
            .parse()
            .with_context(|| format!("`{s}`: bad IPv6 address"))?;
        let port: u16 = port.parse().with_context(|| format!("`{s}`: bad port"))?;
        let index = match zone.parse::<u32>() {
            Ok(i) => i,
            Err(_) => benchboot_results::name::SafeName::new(
                benchboot_results::name::NameKind::FileName,
                zone,
            )
            .ok()
            .and_then(|zone| {
                std::fs::read_to_string(
                    Path::new("/sys/class/net")
                        .join(zone.as_str())
                        .join("ifindex"),
                )
                .ok()
            })
            .and_then(|t| t.trim().parse().ok())
            .with_context(|| format!("`{s}`: no network interface `{zone}` here"))?,
        };
        return Ok(SocketAddr::V6(SocketAddrV6::new(ip, port, 0, index)));
    }
    s.to_socket_addrs()
        .with_context(|| format!("`{s}`: give HOST:PORT, e.g. 10.55.0.1:8080"))?
        .next()
        .with_context(|| format!("`{s}` resolves to no address"))
}

/// True when this host reaches `board` over a link it has an address on: the source
/// address the kernel picks for it is in the board's /30 (a UDP `connect` sends
/// nothing). A gadget address is never probed through a default route, where a router
/// or proxy could answer in the board's name.
pub fn on_link(board: Ipv4Addr) -> bool {
    let Ok(sock) = std::net::UdpSocket::bind("0.0.0.0:0") else {
        return false;
    };
    if sock.connect((board, 9)).is_err() {
        return false;
    }
    match sock.local_addr() {
        Ok(SocketAddr::V4(local)) => crate::point_to_point::same_slash_30(*local.ip(), board),
        _ => false,
    }
}

/// One round over `list`, in order: a TCP connect (1 s timeout) to each candidate,
/// skipping a [`Candidate::needs_link`] one while this host has no address on its /30
/// ([`on_link`]). Returns the label of the first that accepts.
pub fn probe_round(list: &[Candidate]) -> Option<String> {
    list.iter()
        .find(|c| {
            let skip = match c.addr {
                SocketAddr::V4(v4) if c.needs_link => !on_link(*v4.ip()),
                _ => false,
            };
            !skip && std::net::TcpStream::connect_timeout(&c.addr, Duration::from_secs(1)).is_ok()
        })
        .map(|c| c.label.clone())
}

/// Finds a board: tries every [`candidates`] place (1 s connect timeout each), round
/// after round, until one accepts a TCP connection or `timeout` passes; returns its
/// label (an address [`crate::fetch::fetch`] takes).
///
/// # Errors
/// A bad `$BENCHBOOT_BOARD`, or no candidate answered in time (the message lists them
/// and what to check).
pub fn discover(timeout: Duration) -> Result<String> {
    let until = Instant::now() + timeout;
    loop {
        // Interfaces come and go while the board boots: look again every round.
        let usb = usb_net_interfaces(Path::new("/sys/class/net"));
        let list = candidates(std::env::var(BOARD_ENV).ok().as_deref(), &usb)?;
        if let Some(found) = probe_round(&list) {
            return Ok(found);
        }
        if Instant::now() >= until {
            let tried: Vec<_> = list.iter().map(|c| c.label.as_str()).collect();
            bail!(
                "no board answered at {} within {} s: is the cable in the board's USB data \
                 port, and did this host take a DHCP lease on the new interface? Or name it: \
                 benchboot fetch --addr HOST:PORT (a board in `cargo xtask qemu`: --addr \
                 127.0.0.1:{QEMU_RESULTS_FORWARD})",
                tried.join(", "),
                timeout.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_in_order() {
        let usb0 = UsbLink {
            name: "usb0".into(),
            ifindex: 7,
        };
        let c = candidates(Some("192.168.7.2:8080"), &[usb0]).unwrap();
        let labels: Vec<_> = c.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "192.168.7.2:8080",
                "10.55.0.1:8080",
                "10.55.0.5:8080",
                "10.55.0.9:8080",
                "[fe80::1%usb0]:8080",
            ]
        );
        assert_eq!(
            c[4].addr,
            SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(BOARD_LINK_LOCAL),
                8080,
                0,
                7
            ))
        );
        assert!(c[1].needs_link && !c[0].needs_link && !c[4].needs_link);
        // Nothing named, no USB link: the gadget's three addresses, never a loopback
        // port another local user could answer on.
        let bare = candidates(None, &[]).unwrap();
        assert_eq!(bare.len(), 3);
        assert!(bare
            .iter()
            .all(|c| c.needs_link && !c.addr.ip().is_loopback()));
        let err = format!("{:#}", candidates(Some("nonsense"), &[]).unwrap_err());
        assert!(err.contains("BENCHBOOT_BOARD=nonsense"), "{err}");
    }

    // A /sys/class/net-shaped tree with symlinks: Linux's layout.
    #[cfg(unix)]
    #[test]
    fn usb_interfaces_by_driver() {
        let dir = tempfile::tempdir().unwrap();
        let drivers = dir.path().join("drivers");
        for (name, driver, index) in [
            ("usb0", "cdc_ncm", 5),
            ("enp0s1", "virtio_net", 2),
            ("usb1", "rndis_host", 9),
        ] {
            let d = dir.path().join("net").join(name);
            std::fs::create_dir_all(d.join("device")).unwrap();
            std::fs::create_dir_all(drivers.join(driver)).unwrap();
            std::os::unix::fs::symlink(drivers.join(driver), d.join("device/driver")).unwrap();
            std::fs::write(d.join("ifindex"), format!("{index}\n")).unwrap();
        }
        std::fs::create_dir_all(dir.path().join("net/lo")).unwrap();
        assert_eq!(
            usb_net_interfaces(&dir.path().join("net")),
            [("usb0", 5), ("usb1", 9)].map(|(name, ifindex)| UsbLink {
                name: name.into(),
                ifindex
            })
        );
    }

    #[test]
    fn scoped_addresses_parse() {
        assert_eq!(
            parse_addr("[fe80::1%3]:8080").unwrap(),
            SocketAddr::V6(SocketAddrV6::new("fe80::1".parse().unwrap(), 8080, 0, 3))
        );
        assert_eq!(
            parse_addr("127.0.0.1:80").unwrap(),
            SocketAddr::from(([127, 0, 0, 1], 80))
        );
        let err = format!("{:#}", parse_addr("[fe80::1%nosuchif9]:8080").unwrap_err());
        assert!(err.contains("nosuchif9"), "{err}");
        assert!(parse_addr("10.55.0.1").is_err());
    }
}
