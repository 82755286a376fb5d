//! The nl80211 socket: generic netlink (`AF_NETLINK`, `NETLINK_GENERIC`) at the syscall
//! edge; every message is built and parsed by `benchboot_wifi` (pure, unit-tested).
//!
//! One request at a time: send, then read replies with its sequence number until the
//! ack, the end of the dump or an error (the errno, with the kernel's extended-ack text
//! when it gave one).

use std::io;
use std::os::fd::OwnedFd;

use benchboot_wifi::channel::Chandef;
use benchboot_wifi::netlink::{self, Reply};
use benchboot_wifi::nl80211::{
    self, ApParams, Bss, ConnectParams, IfType, Interface, Reg, Station, Wiphy,
};
use rustix::net::{netlink as nl, recv, sendto, socket, AddressFamily, RecvFlags, SendFlags};

/// A generic netlink socket bound to the nl80211 family.
pub struct Radio {
    sock: OwnedFd,
    family: u16,
    seq: u32,
}

/// Big enough for one message of a split wiphy dump (the kernel sizes dump messages to
/// the reader's buffer up to 32 KiB, `netlink_dump`).
const RECV_BUF: usize = 64 * 1024;

fn bad(e: netlink::NetlinkError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

impl Radio {
    /// Opens the socket and resolves the `nl80211` family (`CTRL_CMD_GETFAMILY`).
    ///
    /// # Errors
    /// No netlink, or no nl80211 family (cfg80211 not loaded).
    pub fn open() -> io::Result<Radio> {
        let sock = socket(
            AddressFamily::NETLINK,
            rustix::net::SocketType::RAW,
            Some(nl::GENERIC),
        )?;
        // The kernel's explanation of a refusal comes with the error (NETLINK_EXT_ACK).
        let _ = rustix::net::sockopt::set_socket_recv_buffer_size(&sock, RECV_BUF);
        crate::sys::netlink_ext_ack(&sock);
        let mut r = Radio {
            sock,
            family: 0,
            seq: 1,
        };
        let replies = r.exchange(netlink::ctrl_get_family("nl80211", r.seq))?;
        let fam = replies
            .first()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no nl80211 family"))?;
        r.family = netlink::parse_family(fam).map_err(bad)?.id;
        Ok(r)
    }

    /// Sends `req` (built with the current sequence number) and collects the attributes
    /// of every data reply.
    fn exchange(&mut self, req: Vec<u8>) -> io::Result<Vec<Vec<u8>>> {
        let seq = self.seq;
        self.seq = self.seq.wrapping_add(1);
        sendto(
            &self.sock,
            &req,
            SendFlags::empty(),
            &nl::SocketAddrNetlink::new(0, 0),
        )?;
        let mut buf = vec![0u8; RECV_BUF];
        let mut out = Vec::new();
        loop {
            let (n, _) = recv(&self.sock, &mut buf, RecvFlags::empty())?;
            for m in netlink::split_messages(&buf[..n]).map_err(bad)? {
                if m.seq != seq {
                    continue;
                }
                match netlink::genl_reply(&m).map_err(bad)? {
                    Reply::Data { attrs, .. } => out.push(attrs.to_vec()),
                    Reply::Ack | Reply::Done => return Ok(out),
                    Reply::Error(errno) => {
                        let base = io::Error::from_raw_os_error(errno);
                        return Err(match netlink::ext_ack_message(&m) {
                            Some(why) => io::Error::new(base.kind(), format!("{base}: {why}")),
                            None => base,
                        });
                    }
                }
            }
        }
    }

    fn call(&mut self, build: impl FnOnce(u16, u32) -> Vec<u8>) -> io::Result<Vec<Vec<u8>>> {
        let req = build(self.family, self.seq);
        self.exchange(req)
    }

    /// Every radio (`GET_WIPHY`, split dump).
    pub fn wiphys(&mut self) -> io::Result<Vec<Wiphy>> {
        let msgs = self.call(nl80211::get_wiphy_dump)?;
        let refs: Vec<&[u8]> = msgs.iter().map(Vec::as_slice).collect();
        nl80211::parse_wiphys(&refs).map_err(bad)
    }

    /// Every wireless interface with a netdev.
    pub fn interfaces(&mut self) -> io::Result<Vec<Interface>> {
        let msgs = self.call(nl80211::get_interface_dump)?;
        Ok(msgs
            .iter()
            .filter_map(|m| nl80211::parse_interface(m).ok())
            .collect())
    }

    pub fn interface(&mut self, ifindex: u32) -> io::Result<Interface> {
        let msgs = self.call(|f, s| nl80211::get_interface(f, s, ifindex))?;
        let m = msgs
            .first()
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        nl80211::parse_interface(m).map_err(bad)
    }

    /// Changes the interface type (the interface must be down).
    pub fn set_type(&mut self, ifindex: u32, t: IfType) -> io::Result<()> {
        self.call(|f, s| nl80211::set_interface_type(f, s, ifindex, t))
            .map(drop)
    }

    pub fn set_reg(&mut self, alpha2: &str) -> io::Result<()> {
        self.call(|f, s| nl80211::req_set_reg(f, s, alpha2))
            .map(drop)
    }

    /// The global regulatory domain.
    pub fn reg(&mut self) -> io::Result<Reg> {
        let msgs = self.call(|f, s| nl80211::get_reg(f, s, None))?;
        let m = msgs
            .first()
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        nl80211::parse_reg(m).map_err(bad)
    }

    pub fn set_power_save(&mut self, ifindex: u32, on: bool) -> io::Result<()> {
        self.call(|f, s| nl80211::set_power_save(f, s, ifindex, on))
            .map(drop)
    }

    pub fn power_save(&mut self, ifindex: u32) -> io::Result<Option<bool>> {
        let msgs = self.call(|f, s| nl80211::get_power_save(f, s, ifindex))?;
        match msgs.first() {
            Some(m) => nl80211::parse_power_save(m).map_err(bad),
            None => Ok(None),
        }
    }

    pub fn trigger_scan(&mut self, ifindex: u32, freqs: &[u32], ssids: &[&[u8]]) -> io::Result<()> {
        self.call(|f, s| nl80211::trigger_scan(f, s, ifindex, freqs, ssids))
            .map(drop)
    }

    /// The kernel's current scan results (BSS list) for the interface.
    pub fn scan_results(&mut self, ifindex: u32) -> io::Result<Vec<Bss>> {
        let msgs = self.call(|f, s| nl80211::get_scan_dump(f, s, ifindex))?;
        Ok(msgs
            .iter()
            .filter_map(|m| nl80211::parse_bss(m).ok())
            .collect())
    }

    pub fn connect(&mut self, ifindex: u32, p: &ConnectParams) -> io::Result<()> {
        self.call(|f, s| nl80211::connect(f, s, ifindex, p))
            .map(drop)
    }

    pub fn disconnect(&mut self, ifindex: u32) -> io::Result<()> {
        self.call(|f, s| nl80211::disconnect(f, s, ifindex))
            .map(drop)
    }

    pub fn stations(&mut self, ifindex: u32) -> io::Result<Vec<Station>> {
        let msgs = self.call(|f, s| nl80211::get_station_dump(f, s, ifindex))?;
        Ok(msgs
            .iter()
            .filter_map(|m| nl80211::parse_station(m).ok())
            .collect())
    }

    pub fn start_ap(&mut self, ifindex: u32, p: &ApParams) -> io::Result<()> {
        self.call(|f, s| nl80211::start_ap(f, s, ifindex, p))
            .map(drop)
    }

    pub fn stop_ap(&mut self, ifindex: u32) -> io::Result<()> {
        self.call(|f, s| nl80211::stop_ap(f, s, ifindex)).map(drop)
    }

    pub fn join_ibss(
        &mut self,
        ifindex: u32,
        ssid: &[u8],
        c: Chandef,
        bssid: Option<[u8; 6]>,
    ) -> io::Result<()> {
        self.call(|f, s| nl80211::join_ibss(f, s, ifindex, ssid, c, bssid))
            .map(drop)
    }

    pub fn leave_ibss(&mut self, ifindex: u32) -> io::Result<()> {
        self.call(|f, s| nl80211::leave_ibss(f, s, ifindex))
            .map(drop)
    }

    /// Moves radio `wiphy` (with its interfaces) into the network namespace of `pid`.
    pub fn move_wiphy(&mut self, wiphy: u32, pid: u32) -> io::Result<()> {
        self.call(|f, s| nl80211::set_wiphy_netns(f, s, wiphy, pid))
            .map(drop)
    }
}
