//! The DHCP crate's integration tests, linked into one test binary: the server against
//! captured packets (`captured`), and server and client over veth links between network
//! namespaces (`veth`, needs root and iproute2's `ip`).
#![forbid(unsafe_code)]

mod captured;
mod veth;
