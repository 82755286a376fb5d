//! The network part of a plan: the results link, the USB gadget that carries it on
//! hardware, and the throughput / latency / HTTP tests run over it.
//!
//! Addresses: each gadget function gets its own /30 (RFC 3021 would allow /31, but hosts'
//! DHCP clients expect a network and broadcast address): function `i` (0-based, in plan
//! order) uses `subnet + 4 i`; the board is `.1` of it, the host is leased `.2`. With the
//! default subnet `10.55.0.0` that is board 10.55.0.1 / host 10.55.0.2 for the first
//! function, 10.55.0.5 / 10.55.0.6 for the second, 10.55.0.9 / 10.55.0.10 for the third.

use serde::{Deserialize, Serialize};

use crate::net_tests::{NetTests, MAX_DURATION_MS, MAX_OMIT_MS, MAX_UDP_BITRATE};
use crate::spelling::WiredKind;

/// The board's well-known IPv6 link-local address on every gadget link, `fe80::1`
/// (RFC 4291 §2.5.6), next to the kernel's own EUI-64 one: the host tool tries
/// `[fe80::1%<interface>]` on its USB network interfaces when no IPv4 lease is there.
pub const BOARD_LINK_LOCAL: [u8; 16] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];

/// The results link and, optionally, the gadget and the network tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkPlan {
    /// Interface with a static address, e.g. `eth0` (QEMU's usb-net or virtio-net); empty when
    /// the gadget is the only link, or (emulated plans only) when there is no link and
    /// the harness reads the results partition of the card.
    pub interface: String,
    /// IPv4 address of the board on that interface.
    pub address: [u8; 4],
    pub prefix_len: u8,
    /// TCP port of the read-only results server (all interfaces).
    pub port: u16,
    /// How long to wait for the interface to appear, ms.
    pub interface_wait_ms: u64,
    /// USB gadget Ethernet set up by PID 1 through configfs; `None` on boards without an
    /// OTG/peripheral port.
    #[serde(default)]
    pub gadget: Option<GadgetPlan>,
    /// Throughput, latency, HTTP and UDP tests against a peer; `None` skips them. The
    /// same tests run over the gadget link and over every wired link.
    #[serde(default)]
    pub tests: Option<NetTests>,
    /// Wired links to measure (built-in Ethernet, USB Ethernet adapters), in order.
    #[serde(default)]
    pub wired: Vec<WiredPlan>,
    /// WiFi, after the wired links: the board's AP sweeping channels or the board as a
    /// client; `None` skips it.
    #[serde(default)]
    pub wifi: Option<crate::wifi::WifiPlan>,
}

/// How the board and the peer reach each other over a wired link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Topology {
    /// A cable straight to the host: the board is `.1` of `subnet`/30 and its DHCP
    /// server leases `.2` to the host (no router, no DNS), as on the gadget link; the
    /// peer is at the leased address.
    Direct { subnet: [u8; 4], lease_secs: u32 },
    /// The board on a LAN: it takes a DHCP lease from the LAN's server; the peer is at
    /// `peer`, or (`None`) the first `benchboot peer --announce` heard on the link
    /// ([`PEER_ANNOUNCE_PORT`]).
    Lan { peer: Option<[u8; 4]> },
}

impl Topology {
    /// `direct` / `lan`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Direct { .. } => "direct",
            Self::Lan { .. } => "lan",
        }
    }
}

/// UDP port `benchboot peer --announce` broadcasts its presence to, once a second, and
/// a board on a LAN with no peer address in its plan listens on: the peer's control
/// port (5202) itself, in UDP.
pub const PEER_ANNOUNCE_PORT: u16 = 5202;

/// One wired link to measure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WiredPlan {
    /// The link's name in results and tables (`eth`, `usb-eth`): 1..=15 of
    /// `[A-Za-z0-9_-]`, unique among the plan's links.
    pub name: String,
    pub kind: WiredKind,
    /// PID 1 takes the first interface whose driver (`/sys/class/net/<if>/device/driver`)
    /// is one of these (interface names vary: eth0, eth1, usb0, enx...); empty: any
    /// driver. For a built-in link, the board file's drivers.
    pub drivers: Vec<String>,
    /// Or the interface with this MAC (`aa:bb:cc:dd:ee:ff`, lower case); checked first.
    #[serde(default)]
    pub mac: Option<String>,
    pub topology: Topology,
    /// How long to wait for the interface to appear and report carrier, ms.
    pub link_wait_ms: u64,
    /// What the port is rated for, Mbit/s (1000 for a GbE port, board file
    /// `ethernet.rated-mbit`): a lower negotiated speed is a warning in the results.
    #[serde(default)]
    pub rated_mbit: Option<u32>,
    /// QEMU only: the other end of the cable is an interface of this same guest with
    /// this MAC; PID 1 moves it into a network namespace whose child plays the host
    /// (direct: takes the lease, runs the peer; LAN: is the DHCP server and the peer,
    /// announcing itself).
    #[serde(default)]
    pub host_in_namespace: Option<String>,
    /// Why this board cannot have this link (no built-in Ethernet, no USB host port):
    /// PID 1 records it as an error and runs the rest of the plan.
    #[serde(default)]
    pub unavailable: Option<String>,
}

/// A USB function that carries Ethernet frames (kernel: drivers/usb/gadget/function).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GadgetFunction {
    /// CDC NCM: Linux, macOS, Windows 10+ (native driver).
    Ncm,
    /// CDC ECM: Linux, macOS.
    Ecm,
    /// RNDIS: Windows (with Microsoft OS descriptors) and Linux.
    Rndis,
}

impl GadgetFunction {
    /// The configfs function type, as in `functions/<type>.<instance>`.
    pub fn configfs_type(self) -> &'static str {
        match self {
            Self::Ncm => "ncm",
            Self::Ecm => "ecm",
            Self::Rndis => "rndis",
        }
    }
}

/// The configfs gadget (Documentation/usb/gadget_configfs.rst).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GadgetPlan {
    /// Functions in order; RNDIS goes into its own configuration that the Microsoft OS
    /// descriptors point Windows at.
    pub functions: Vec<GadgetFunction>,
    /// Test mode: bring the functions up one at a time (each bound, tested, torn down)
    /// instead of one composite gadget.
    pub in_turn: bool,
    /// UDC to bind (a name in /sys/class/udc); `None` takes the first one listed.
    pub udc: Option<String>,
    pub vendor_id: u16,
    pub product_id: u16,
    pub manufacturer: String,
    /// Product string the host shows; the board name by default.
    pub product: String,
    /// Base of the link subnets (see the module docs).
    pub subnet: [u8; 4],
    /// DHCP lease time handed to the host, seconds.
    pub lease_secs: u32,
    /// How long to wait for the UDC and for a host to take a lease, ms.
    pub link_wait_ms: u64,
    /// `dummy_hcd` test set-up: the USB host side is this same kernel. PID 1 moves each
    /// host-side interface into its own network namespace and runs the peer there.
    pub host_in_namespace: bool,
}

impl GadgetPlan {
    /// Board and host addresses of function `index`'s /30 link.
    pub fn link_addresses(&self, index: usize) -> ([u8; 4], [u8; 4]) {
        let base = u32::from_be_bytes(self.subnet) + 4 * index as u32;
        ((base + 1).to_be_bytes(), (base + 2).to_be_bytes())
    }

    /// Linux Foundation vendor id 0x1d6b, product 0x0104 "Multifunction Composite
    /// Gadget" (the ids the kernel's own composite gadgets use; usb.ids).
    pub fn default_for(board: &str) -> GadgetPlan {
        GadgetPlan {
            functions: vec![
                GadgetFunction::Ncm,
                GadgetFunction::Ecm,
                GadgetFunction::Rndis,
            ],
            in_turn: false,
            udc: None,
            vendor_id: 0x1d6b,
            product_id: 0x0104,
            manufacturer: "benchboot".into(),
            product: format!("benchboot {board}"),
            subnet: [10, 55, 0, 0],
            lease_secs: 3600,
            link_wait_ms: 120_000,
            host_in_namespace: false,
        }
    }
}

impl NetworkPlan {
    /// True when the plan names a results link: a static interface or a gadget.
    pub fn has_link(&self) -> bool {
        !self.interface.is_empty() || self.gadget.is_some()
    }
}

/// A problem of the network part: (field, message).
type Problem = (String, String);

/// The problem of `field`, saying `message`.
fn bad(field: &str, message: &str) -> Result<(), Problem> {
    Err((field.to_owned(), message.to_owned()))
}

/// Checks the network part; returns (field, message) for the first problem. Whether a
/// plan may go without a link is [`crate::Plan::validate`]'s call.
/// A wired link's field carries its index: `network.wired[1].name`.
pub(crate) fn check(n: &NetworkPlan) -> Result<(), Problem> {
    if n.prefix_len > 32 {
        return bad("network.prefix_len", "must be 0..=32");
    }
    if n.port == 0 {
        return bad("network.port", "must be a TCP port above 0");
    }
    if n.interface.len() > 15 {
        return bad(
            "network.interface",
            "must be at most 15 characters (IFNAMSIZ)",
        );
    }
    if let Some(g) = &n.gadget {
        check_gadget(g)?;
    }
    if let Some(t) = &n.tests {
        check_tests(t, n.port)?;
    }
    check_wired(n)
}

/// The gadget: functions listed once each, a subnet with a /30 per function in its /24,
/// one-line USB strings, a lease of at least 60 s.
fn check_gadget(g: &GadgetPlan) -> Result<(), Problem> {
    if g.functions.is_empty() {
        return bad(
            "network.gadget.functions",
            "list at least one of ncm, ecm, rndis",
        );
    }
    let mut seen = g.functions.clone();
    seen.sort_by_key(|f| f.configfs_type());
    seen.dedup();
    if seen.len() != g.functions.len() {
        return bad("network.gadget.functions", "list each function once");
    }
    if g.subnet[3] & 3 != 0 || g.subnet[3] as usize + 4 * g.functions.len() > 256 {
        return bad(
            "network.gadget.subnet",
            "must be a multiple of 4 with room for one /30 per function in its /24",
        );
    }
    for (field, s) in [
        ("network.gadget.manufacturer", &g.manufacturer),
        ("network.gadget.product", &g.product),
    ] {
        // USB string descriptors hold at most 126 UTF-16 code units (USB 2.0 §9.6.7).
        if s.is_empty() || s.encode_utf16().count() > 126 || s.contains('\n') {
            return bad(field, "must be one line of 1..=126 characters");
        }
    }
    if g.lease_secs < 60 {
        return bad("network.gadget.lease_secs", "must be at least 60 s");
    }
    Ok(())
}

/// The tests: a peer port apart from the results port `results_port`, durations (ms),
/// streams, HTTP bytes, UDP bitrate and datagram bytes within what the peer accepts.
fn check_tests(t: &NetTests, results_port: u16) -> Result<(), Problem> {
    if t.peer_port == 0 || t.peer_port == results_port {
        return bad(
            "network.tests.peer_port",
            "must be a TCP port above 0, not the results port",
        );
    }
    if t.interval_ms == 0 || t.duration_ms < t.interval_ms {
        return bad(
            "network.tests.duration_ms",
            "must be at least one interval (interval_ms > 0)",
        );
    }
    if t.streams.is_empty() || t.streams.iter().any(|&s| s == 0 || s > 64) {
        return bad("network.tests.streams", "list stream counts in 1..=64");
    }
    if t.http_bytes == 0 || t.http_bytes > 1 << 30 {
        return bad(
            "network.tests.http_bytes",
            "must be 1 B ..= 1 GiB (it is held in RAM)",
        );
    }
    if t.duration_ms > MAX_DURATION_MS {
        return bad(
            "network.tests.duration_ms",
            "must be at most 10 min (600000 ms): the peer refuses longer runs",
        );
    }
    if t.omit_ms > MAX_OMIT_MS {
        return bad(
            "network.tests.omit_ms",
            "must be at most 1 min (60000 ms): the peer refuses longer warm-ups",
        );
    }
    if t.udp_bitrate > MAX_UDP_BITRATE {
        return bad("network.tests.udp_bitrate", "must be at most 100 Gbit/s");
    }
    // 65507 B: the largest IPv4 UDP payload (65535 - 20 - 8).
    if !(16..=65507).contains(&t.udp_datagram_bytes) {
        return bad(
            "network.tests.udp_datagram_bytes",
            "must be 16 ..= 65507 bytes (16 holds the sequence number and send time)",
        );
    }
    Ok(())
}

/// Every wired link: a name apart from every other link's (the gadget's functions
/// included), its MAC, its direct topology's /30 and lease.
fn check_wired(n: &NetworkPlan) -> Result<(), Problem> {
    let mut names: Vec<&str> = n
        .gadget
        .iter()
        .flat_map(|g| g.functions.iter().map(|f| f.configfs_type()))
        .collect();
    for (i, w) in n.wired.iter().enumerate() {
        check_wired_name(i, &w.name, &names)?;
        names.push(&w.name);
        if let Some(mac) = &w.mac {
            if parse_mac(mac).is_none() {
                return bad(
                    &format!("network.wired[{i}].mac"),
                    "must be six hex bytes separated by colons, e.g. 52:54:00:12:34:56",
                );
            }
        }
        if let Topology::Direct { subnet, lease_secs } = &w.topology {
            if subnet[3] & 3 != 0 {
                return bad(
                    &format!("network.wired[{i}].topology.subnet"),
                    "must be a multiple of 4 (a /30)",
                );
            }
            if *lease_secs < 60 {
                return bad(
                    &format!("network.wired[{i}].topology.lease_secs"),
                    "must be at least 60 s",
                );
            }
        }
    }
    Ok(())
}

/// Wired link `i`'s `name`: 1..=15 of A-Z a-z 0-9 - _, none of the `earlier` links'
/// names in any case or spelling.
fn check_wired_name(i: usize, name: &str, earlier: &[&str]) -> Result<(), Problem> {
    if name.is_empty()
        || name.len() > 15
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return bad(
            &format!("network.wired[{i}].name"),
            "must be 1..=15 of A-Z a-z 0-9 - _",
        );
    }
    if earlier
        .iter()
        .any(|n| crate::spelling::folded_name(n) == crate::spelling::folded_name(name))
    {
        return bad(
            &format!("network.wired[{i}].name"),
            "must differ from every other link's name (and from ncm, ecm, rndis), also \
             in case and `-`/`_`: a board farm (LAVA) keys results by the name lower-cased \
             with `-` as `_`",
        );
    }
    Ok(())
}

/// `aa:bb:cc:dd:ee:ff` (either case) as bytes.
pub fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let mut out = [0u8; 6];
    let mut parts = s.split(':');
    for b in &mut out {
        let p = parts.next()?;
        if p.len() != 2 {
            return None;
        }
        *b = u8::from_str_radix(p, 16).ok()?;
    }
    parts.next().is_none().then_some(out)
}

/// `aa:bb:cc:dd:ee:ff`, lower case.
pub fn mac_text(mac: &[u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The /30 of a direct wired link: (board `.1`, host `.2`).
pub fn direct_addresses(subnet: [u8; 4]) -> ([u8; 4], [u8; 4]) {
    let base = u32::from_be_bytes(subnet);
    ((base + 1).to_be_bytes(), (base + 2).to_be_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_function_gets_its_own_slash_30() {
        let g = GadgetPlan::default_for("rpi-zero-w");
        assert_eq!(g.link_addresses(0), ([10, 55, 0, 1], [10, 55, 0, 2]));
        assert_eq!(g.link_addresses(1), ([10, 55, 0, 5], [10, 55, 0, 6]));
        assert_eq!(g.link_addresses(2), ([10, 55, 0, 9], [10, 55, 0, 10]));
    }

    fn plan_with(g: GadgetPlan) -> NetworkPlan {
        NetworkPlan {
            interface: String::new(),
            address: [0; 4],
            prefix_len: 0,
            port: 8080,
            interface_wait_ms: 0,
            gadget: Some(g),
            tests: Some(NetTests::hardware()),
            wired: Vec::new(),
            wifi: None,
        }
    }

    #[test]
    fn gadget_checks_name_the_field() {
        let ok = plan_with(GadgetPlan::default_for("x"));
        check(&ok).unwrap();
        let mut g = GadgetPlan::default_for("x");
        g.functions.push(GadgetFunction::Ncm);
        assert_eq!(
            check(&plan_with(g)).unwrap_err().0,
            "network.gadget.functions"
        );
        let mut g = GadgetPlan::default_for("x");
        g.subnet = [10, 55, 0, 2];
        assert_eq!(check(&plan_with(g)).unwrap_err().0, "network.gadget.subnet");
        let mut g = GadgetPlan::default_for("x");
        g.product = "p".repeat(127);
        assert_eq!(
            check(&plan_with(g)).unwrap_err().0,
            "network.gadget.product"
        );
        let mut n = plan_with(GadgetPlan::default_for("x"));
        n.tests.as_mut().unwrap().peer_port = 8080;
        assert_eq!(check(&n).unwrap_err().0, "network.tests.peer_port");
        n.gadget = None;
        n.tests = None;
        assert!(!n.has_link());
        check(&n).unwrap();
    }

    #[test]
    fn runs_longer_than_the_peer_serves_are_refused() {
        let mut n = plan_with(GadgetPlan::default_for("x"));
        let t = n.tests.as_mut().unwrap();
        t.duration_ms = MAX_DURATION_MS;
        t.omit_ms = MAX_OMIT_MS;
        check(&n).unwrap();
        n.tests.as_mut().unwrap().duration_ms = 3_600_000;
        let e = check(&n).unwrap_err();
        assert_eq!(e.0, "network.tests.duration_ms");
        assert!(e.1.contains("at most 10 min (600000 ms)"), "{}", e.1);
        let t = n.tests.as_mut().unwrap();
        t.duration_ms = 30_000;
        t.omit_ms = 3_600_000;
        let e = check(&n).unwrap_err();
        assert_eq!(e.0, "network.tests.omit_ms");
        assert!(e.1.contains("at most 1 min (60000 ms)"), "{}", e.1);
    }
}
