//! This host's point-to-point links: the /30 and /31 subnets it holds an address in,
//! where the one other address can only be the board's. The gadget links are such
//! subnets (10.55.0.0/30, .4/30, .8/30: one per USB function, `plan::GadgetPlan`), and
//! so is a cable straight to the board (`plan::Topology::Direct`): the board is `.1`
//! and its DHCP server leases the host `.2` with the netmask 255.255.255.252
//! (`firmware/src/network.rs`, `LINK_NETMASK`). On a LAN anyone can hold any address,
//! so a LAN address says nothing about who sent something.
//!
//! The rule is pure and takes the host's addresses as given ([`link_to`],
//! [`same_slash_30`]); reading them is the one system call, at the edge ([`read`]).

use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr};
use std::str::FromStr;

/// One IPv4 address of this host with the prefix length of its subnet:
/// `10.55.0.2/30`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostAddr {
    pub addr: Ipv4Addr,
    /// 0..=32.
    pub prefix_len: u8,
}

impl HostAddr {
    /// The other end of its link when its subnet is point-to-point: the other usable
    /// address of a /30 (`.1` ↔ `.2`; the network and broadcast addresses are no
    /// host's) or the other address of a /31 (RFC 3021). `None` for any other prefix,
    /// and for the network or broadcast address of a /30.
    pub fn other_end(&self) -> Option<Ipv4Addr> {
        let a = u32::from(self.addr);
        match self.prefix_len {
            31 => Some(Ipv4Addr::from(a ^ 1)),
            30 => match a & 3 {
                1 => Some(Ipv4Addr::from(a + 1)),
                2 => Some(Ipv4Addr::from(a - 1)),
                _ => None,
            },
            _ => None,
        }
    }
}

impl fmt::Display for HostAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix_len)
    }
}

impl FromStr for HostAddr {
    type Err = String;

    /// `ADDRESS/PREFIX`, an IPv4 address and a prefix length 0..=32.
    fn from_str(s: &str) -> Result<HostAddr, String> {
        let bad = || format!("`{s}`: give ADDRESS/PREFIX, e.g. 10.55.0.2/30");
        let (addr, prefix) = s.split_once('/').ok_or_else(bad)?;
        let addr: Ipv4Addr = addr.parse().map_err(|_| bad())?;
        let prefix_len: u8 = prefix.parse().map_err(|_| bad())?;
        if prefix_len > 32 {
            return Err(bad());
        }
        Ok(HostAddr { addr, prefix_len })
    }
}

/// This host's address on the point-to-point link whose other end is `peer`, among
/// the host's addresses `host` ([`HostAddr::other_end`]); `None` when `peer` is not the
/// other end of any (a LAN address, loopback, IPv6). An IPv4-mapped IPv6 `peer` counts
/// as its IPv4 address.
pub fn link_to(host: &[HostAddr], peer: IpAddr) -> Option<HostAddr> {
    let IpAddr::V4(peer) = peer.to_canonical() else {
        return None;
    };
    host.iter().copied().find(|h| h.other_end() == Some(peer))
}

/// True when `a` and `b` are two different addresses of one /30: the board's gadget
/// address and the source address this host reaches it from (`discover::on_link`).
pub fn same_slash_30(a: Ipv4Addr, b: Ipv4Addr) -> bool {
    u32::from(a) & !3 == u32::from(b) & !3 && a != b
}

/// The IPv4 addresses of this host's interfaces with their prefix lengths
/// (`getifaddrs(3)`); an address whose netmask is not contiguous is left out.
///
/// # Errors
/// When the system call fails.
#[cfg(unix)]
pub fn read() -> io::Result<Vec<HostAddr>> {
    let mut out = Vec::new();
    for ifa in nix::ifaddrs::getifaddrs().map_err(io::Error::from)? {
        let (Some(addr), Some(mask)) = (ifa.address, ifa.netmask) else {
            continue;
        };
        let (Some(addr), Some(mask)) = (addr.as_sockaddr_in(), mask.as_sockaddr_in()) else {
            continue;
        };
        let mask = u32::from(mask.ip());
        let prefix_len = mask.leading_ones();
        if mask.checked_shl(prefix_len).unwrap_or(0) != 0 {
            continue;
        }
        out.push(HostAddr {
            addr: addr.ip(),
            prefix_len: prefix_len as u8,
        });
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Not read on this system yet.
///
/// # Errors
/// Always: what to do instead.
#[cfg(not(unix))]
pub fn read() -> io::Result<Vec<HostAddr>> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "this host's addresses are not read on this system yet",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(s: &str) -> HostAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_other_end_of_a_slash_30_or_31_and_of_nothing_else() {
        assert_eq!(h("10.55.0.2/30").other_end(), Some([10, 55, 0, 1].into()));
        assert_eq!(h("10.55.0.1/30").other_end(), Some([10, 55, 0, 2].into()));
        assert_eq!(h("10.55.0.6/30").other_end(), Some([10, 55, 0, 5].into()));
        assert_eq!(h("10.55.0.3/30").other_end(), None);
        assert_eq!(h("10.55.0.0/30").other_end(), None);
        assert_eq!(h("10.57.0.0/31").other_end(), Some([10, 57, 0, 1].into()));
        assert_eq!(h("10.57.0.1/31").other_end(), Some([10, 57, 0, 0].into()));
        assert_eq!(h("192.168.1.20/24").other_end(), None);
        assert_eq!(h("127.0.0.1/8").other_end(), None);
        assert_eq!(h("10.0.0.1/32").other_end(), None);
    }

    #[test]
    fn a_peer_is_on_a_link_of_this_host_only_as_its_other_end() {
        let host = [
            h("127.0.0.1/8"),
            h("192.168.1.20/24"),
            h("10.55.0.2/30"),
            h("10.55.0.6/30"),
        ];
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(link_to(&host, ip("10.55.0.1")), Some(h("10.55.0.2/30")));
        assert_eq!(link_to(&host, ip("10.55.0.5")), Some(h("10.55.0.6/30")));
        assert_eq!(
            link_to(&host, ip("::ffff:10.55.0.1")),
            Some(h("10.55.0.2/30"))
        );
        // The broadcast of the /30, a LAN neighbour, loopback, this host itself, IPv6.
        for stranger in [
            "10.55.0.3",
            "10.55.0.9",
            "192.168.1.21",
            "127.0.0.3",
            "10.55.0.2",
            "fe80::1",
        ] {
            assert_eq!(link_to(&host, ip(stranger)), None, "{stranger}");
        }
    }

    #[test]
    fn addresses_parse_as_address_slash_prefix() {
        assert_eq!(
            h("10.55.0.2/30"),
            HostAddr {
                addr: [10, 55, 0, 2].into(),
                prefix_len: 30
            }
        );
        assert_eq!(h("10.55.0.2/30").to_string(), "10.55.0.2/30");
        for bad in ["10.55.0.2", "10.55.0.2/33", "x/30", "10.55.0.2/", "::1/64"] {
            assert_eq!(
                bad.parse::<HostAddr>().unwrap_err(),
                format!("`{bad}`: give ADDRESS/PREFIX, e.g. 10.55.0.2/30")
            );
        }
    }

    #[test]
    fn gadget_addresses_need_a_local_link() {
        assert!(same_slash_30(
            Ipv4Addr::new(10, 55, 0, 2),
            Ipv4Addr::new(10, 55, 0, 1)
        ));
        assert!(!same_slash_30(
            Ipv4Addr::new(10, 55, 0, 6),
            Ipv4Addr::new(10, 55, 0, 1)
        ));
        assert!(!same_slash_30(
            Ipv4Addr::new(192, 0, 2, 2),
            Ipv4Addr::new(10, 55, 0, 1)
        ));
    }

    /// This machine's own addresses: loopback is there, never as a point-to-point link.
    #[cfg(target_os = "linux")]
    #[test]
    fn this_hosts_addresses_are_read_with_their_prefixes() {
        let got = read().unwrap();
        assert!(got.contains(&h("127.0.0.1/8")), "{got:?}");
        assert_eq!(link_to(&got, "127.0.0.3".parse().unwrap()), None);
    }
}
