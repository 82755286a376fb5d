//! A small DHCPv4 server for one point-to-point link (the USB gadget Ethernet link
//! between the board and the host it is plugged into), and a minimal client for tests.
//!
//! Addressing is crates/plan's: each link is a /30, the board is `.1`, the host is
//! leased `.2` with netmask 255.255.255.252, no router and no DNS option.
//!
//! - [`codec`] parses and builds messages (RFC 2131 §2, RFC 2132 options); pure.
//! - [`server`] decides the reply to each message (RFC 2131 §4.3); pure.
//! - [`net`] is the only I/O: the UDP sockets of [`serve`] and [`client_lease`];
//!   `bindtodevice.rs` holds its one `unsafe` call (`SO_BINDTODEVICE`, which rustix
//!   cannot set), the only module allowed `unsafe_code`.

#![deny(unsafe_code)]

#[allow(unsafe_code)]
mod bindtodevice;
pub mod codec;
pub mod net;
pub mod server;

use std::net::Ipv4Addr;

pub use codec::{Message, MessageType, Op, Options, ParseError};
pub use net::{client_lease, serve};
pub use server::{reply_destination, Server, Traffic};

/// An acknowledged lease: what the server granted, or what the client was granted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The client's Ethernet address (`chaddr`).
    pub mac: [u8; 6],
    /// The leased address (`yiaddr` of the DHCPACK).
    pub address: Ipv4Addr,
    /// The server identifier (option 54): the board's address on the link.
    pub server: Ipv4Addr,
    /// Subnet mask (option 1); 0.0.0.0 if a DHCPACK had none.
    pub netmask: Ipv4Addr,
    /// Lease time (option 51), seconds; 0 if a DHCPACK had none.
    pub lease_secs: u32,
    /// When the DHCPACK was sent (server) or received (client): CLOCK_BOOTTIME in
    /// [`serve`] and [`client_lease`], the caller's clock in [`Server::handle`], ns.
    pub acked_ns: u64,
    /// The client's host name (option 12) as lossy UTF-8, if it sent one.
    pub host_name: Option<String>,
    /// The client identifier (option 61), if it sent one.
    pub client_id: Option<Vec<u8>>,
}
