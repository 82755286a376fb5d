//! The server as a pure state machine: a request in, maybe a reply out.
//!
//! One point-to-point link, one address to give: the board is `board_ip`, the host on
//! the other end of the cable is always offered `host_ip`. Whoever asks on the link gets
//! it (there is nobody else there); the latest acknowledgement is the lease. Replies
//! carry the subnet mask, the lease time and the server identifier and nothing else: no
//! router (option 3), so the link never becomes the host's default route, and no DNS
//! server (option 6).
//!
//! Message handling follows RFC 2131 §4.3; the fields of each reply follow its table 3.
//! Relayed requests (`giaddr` set) and non-Ethernet clients are ignored: neither can be
//! the host at the other end of a USB cable.

use std::net::Ipv4Addr;

use crate::codec::{Message, MessageType, Op, Options};
use crate::Lease;

/// DHCP server state for one link.
#[derive(Debug, Clone)]
pub struct Server {
    board_ip: Ipv4Addr,
    host_ip: Ipv4Addr,
    netmask: Ipv4Addr,
    lease_secs: u32,
    lease: Option<Lease>,
    declines: u32,
    traffic: Traffic,
}

/// What a [`Server`] heard and answered since it started: message counts, for the
/// message of a link that took no lease (nothing heard: the host's packets never
/// arrived; offers but no request: the host never heard the offers).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traffic {
    /// DHCPDISCOVERs received.
    pub discovers: u32,
    /// DHCPREQUESTs received.
    pub requests: u32,
    /// Other client messages received (DHCPDECLINE, DHCPRELEASE, DHCPINFORM), and
    /// messages ignored (BOOTP, relayed, server messages, not Ethernet).
    pub other: u32,
    /// DHCPOFFERs produced.
    pub offers: u32,
    /// DHCPACKs produced (DHCPINFORM's answer included).
    pub acks: u32,
    /// DHCPNAKs produced.
    pub naks: u32,
    /// Replies the caller could not send ([`Server::send_failed`]).
    pub send_errors: u32,
}

impl std::fmt::Display for Traffic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "heard {} DHCPDISCOVER, {} DHCPREQUEST, {} other; answered {} DHCPOFFER, {} \
             DHCPACK, {} DHCPNAK; {} replies not sent",
            self.discovers,
            self.requests,
            self.other,
            self.offers,
            self.acks,
            self.naks,
            self.send_errors
        )
    }
}

impl Server {
    /// A server that identifies itself as `board_ip` (option 54) and leases `host_ip`
    /// with `netmask` for `lease_secs` seconds. The caller keeps both addresses in one
    /// subnet (crates/plan: the `.1` and `.2` of a /30).
    pub fn new(board_ip: Ipv4Addr, host_ip: Ipv4Addr, netmask: Ipv4Addr, lease_secs: u32) -> Self {
        Server {
            board_ip,
            host_ip,
            netmask,
            lease_secs,
            lease: None,
            declines: 0,
            traffic: Traffic::default(),
        }
    }

    /// The board's address, sent as the server identifier.
    pub fn board_ip(&self) -> Ipv4Addr {
        self.board_ip
    }

    /// The address this server hands out.
    pub fn host_ip(&self) -> Ipv4Addr {
        self.host_ip
    }

    /// The latest lease acknowledged (DHCPACK sent), until the client releases or
    /// declines it. Expiry is not tracked: the host renews or asks again.
    pub fn lease(&self) -> Option<&Lease> {
        self.lease.as_ref()
    }

    /// How many DHCPDECLINEs for `host_ip` arrived (the host saw the address in use).
    pub fn declines(&self) -> u32 {
        self.declines
    }

    /// What this server heard and answered so far.
    pub fn traffic(&self) -> Traffic {
        self.traffic
    }

    /// Counts a reply [`Server::handle`] returned that could not be sent.
    pub fn send_failed(&mut self) {
        self.traffic.send_errors = self.traffic.send_errors.saturating_add(1);
    }

    /// Handles one client message received at `now_ns` (the caller's clock, ns; the
    /// board uses CLOCK_BOOTTIME) and returns the reply to send, if any. Where to send
    /// it is [`reply_destination`].
    ///
    /// - DHCPDISCOVER: DHCPOFFER of `host_ip` (RFC 2131 §4.3.1).
    /// - DHCPREQUEST (§4.3.2): *selecting* (server id present): ours and asking for
    ///   `host_ip` → DHCPACK, ours and asking for another address → DHCPNAK, another
    ///   server's id → no reply (the client chose that server). *init-reboot* (requested
    ///   address, no server id) and *renewing/rebinding* (`ciaddr`, no server id):
    ///   `host_ip` → DHCPACK, any other address → DHCPNAK (it is wrong for this link).
    /// - DHCPDECLINE (§4.3.3), DHCPRELEASE (§4.3.4) for `host_ip`: the lease is dropped,
    ///   no reply. A declined address cannot be retired: it is the only one there is.
    /// - DHCPINFORM (§4.3.5): DHCPACK with the mask, no address and no lease time.
    /// - Anything else, replies from other servers, BOOTP without option 53: ignored.
    ///
    /// Every call is counted in [`Server::traffic`].
    pub fn handle(&mut self, msg: &Message, now_ns: u64) -> Option<Message> {
        let t = &mut self.traffic;
        let heard = match (msg.op, msg.options.message_type) {
            (Op::BootRequest, Some(MessageType::Discover)) => &mut t.discovers,
            (Op::BootRequest, Some(MessageType::Request)) => &mut t.requests,
            _ => &mut t.other,
        };
        *heard = heard.saturating_add(1);
        let reply = self.answer(msg, now_ns);
        let t = &mut self.traffic;
        if let Some(kind) = reply.as_ref().and_then(|r| r.options.message_type) {
            let said = match kind {
                MessageType::Offer => &mut t.offers,
                MessageType::Nak => &mut t.naks,
                _ => &mut t.acks,
            };
            *said = said.saturating_add(1);
        }
        reply
    }

    fn answer(&mut self, msg: &Message, now_ns: u64) -> Option<Message> {
        if msg.op != Op::BootRequest || !msg.giaddr.is_unspecified() {
            return None;
        }
        let mac = msg.ethernet_mac()?;
        let o = &msg.options;
        match o.message_type? {
            MessageType::Discover => Some(self.reply(msg, MessageType::Offer)),
            MessageType::Request => {
                let ciaddr = Some(msg.ciaddr).filter(|a| !a.is_unspecified());
                let wanted = o.requested_ip.or(ciaddr);
                match o.server_id {
                    // The client chose another server's offer (§4.3.2 "selecting").
                    Some(id) if id != self.board_ip => return None,
                    // Neither a requested address nor ciaddr: not a valid DHCPREQUEST.
                    None if wanted.is_none() => return None,
                    _ => {}
                }
                if wanted != Some(self.host_ip) {
                    return Some(self.nak(msg, wanted));
                }
                self.lease = Some(Lease {
                    mac,
                    address: self.host_ip,
                    server: self.board_ip,
                    netmask: self.netmask,
                    lease_secs: self.lease_secs,
                    acked_ns: now_ns,
                    host_name: o.host_name.as_deref().map(text),
                    client_id: o.client_id.clone(),
                });
                Some(self.reply(msg, MessageType::Ack))
            }
            MessageType::Decline => {
                let ours = o.server_id.is_none_or(|id| id == self.board_ip);
                if ours && o.requested_ip == Some(self.host_ip) {
                    self.declines += 1;
                    self.lease = None;
                }
                None
            }
            MessageType::Release => {
                let ours = o.server_id.is_none_or(|id| id == self.board_ip);
                if ours && msg.ciaddr == self.host_ip {
                    self.lease = None;
                }
                None
            }
            MessageType::Inform => Some(self.reply(msg, MessageType::Inform)),
            MessageType::Offer | MessageType::Ack | MessageType::Nak => None,
        }
    }

    /// DHCPOFFER, DHCPACK, or (for `Inform`) the DHCPACK answering a DHCPINFORM.
    fn reply(&self, req: &Message, kind: MessageType) -> Message {
        let inform = kind == MessageType::Inform;
        Message {
            op: Op::BootReply,
            hops: 0,
            secs: 0,
            // Table 3: OFFER 0; ACK the request's ciaddr (INFORM: the client's address).
            ciaddr: if kind == MessageType::Offer {
                Ipv4Addr::UNSPECIFIED
            } else {
                req.ciaddr
            },
            yiaddr: if inform {
                Ipv4Addr::UNSPECIFIED
            } else {
                self.host_ip
            },
            siaddr: Ipv4Addr::UNSPECIFIED,
            sname: [0; 64],
            file: [0; 128],
            options: Options {
                message_type: Some(if inform { MessageType::Ack } else { kind }),
                server_id: Some(self.board_ip),
                lease_secs: (!inform).then_some(self.lease_secs),
                subnet_mask: Some(self.netmask),
                ..Options::default()
            },
            // xid, flags, giaddr, htype, hlen and chaddr from the client (table 3).
            ..req.clone()
        }
    }

    fn nak(&self, req: &Message, wanted: Option<Ipv4Addr>) -> Message {
        let why = match wanted {
            Some(a) => format!("{a} is not available here, ask for {}", self.host_ip),
            None => format!("no address requested, ask for {}", self.host_ip),
        };
        Message {
            op: Op::BootReply,
            hops: 0,
            secs: 0,
            ciaddr: Ipv4Addr::UNSPECIFIED,
            yiaddr: Ipv4Addr::UNSPECIFIED,
            siaddr: Ipv4Addr::UNSPECIFIED,
            sname: [0; 64],
            file: [0; 128],
            options: Options {
                message_type: Some(MessageType::Nak),
                server_id: Some(self.board_ip),
                message: Some(why.into_bytes()),
                ..Options::default()
            },
            ..req.clone()
        }
    }
}

/// Option 12 as text for reports: lossy UTF-8, trailing NULs dropped.
fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).trim_end_matches('\0').to_owned()
}

/// Where a reply to `request` goes (RFC 2131 §4.1, with no relay agent): a DHCPNAK is
/// broadcast; a client with an address (`ciaddr`, renewing or DHCPINFORM) gets a
/// unicast to it; otherwise the reply is broadcast to 255.255.255.255. (§4.1 allows a
/// unicast to `yiaddr` when the broadcast flag is clear, which needs the client's MAC in
/// the ARP table first; broadcasting is always allowed and reaches every client.)
/// The port is always [`crate::codec::CLIENT_PORT`].
pub fn reply_destination(request: &Message, reply: &Message) -> Ipv4Addr {
    if reply.options.message_type == Some(MessageType::Nak) || request.ciaddr.is_unspecified() {
        Ipv4Addr::BROADCAST
    } else {
        request.ciaddr
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{option, BROADCAST_FLAG};

    const BOARD: Ipv4Addr = Ipv4Addr::new(10, 55, 0, 1);
    const HOST: Ipv4Addr = Ipv4Addr::new(10, 55, 0, 2);
    const MASK: Ipv4Addr = Ipv4Addr::new(255, 255, 255, 252);
    const MAC: [u8; 6] = [0x02, 0xbb, 0, 0, 0, 0x02];

    fn server() -> Server {
        Server::new(BOARD, HOST, MASK, 3600)
    }

    fn request(kind: MessageType) -> Message {
        let mut chaddr = [0; 16];
        chaddr[..6].copy_from_slice(&MAC);
        Message {
            xid: 0xfeed_f00d,
            chaddr,
            options: Options {
                message_type: Some(kind),
                ..Options::default()
            },
            ..Message::default()
        }
    }

    fn kind(m: &Message) -> MessageType {
        m.options.message_type.unwrap()
    }

    #[test]
    fn selecting_our_offer_is_acked_and_recorded() {
        let mut s = server();
        let offer = s.handle(&request(MessageType::Discover), 1).unwrap();
        assert_eq!(kind(&offer), MessageType::Offer);
        assert!(s.lease().is_none(), "an offer is not a lease");
        let mut req = request(MessageType::Request);
        req.options.server_id = Some(BOARD);
        req.options.requested_ip = Some(HOST);
        req.options.host_name = Some(b"laptop\0".to_vec());
        let ack = s.handle(&req, 42).unwrap();
        assert_eq!(kind(&ack), MessageType::Ack);
        assert_eq!(ack.yiaddr, HOST);
        assert_eq!(ack.options.lease_secs, Some(3600));
        assert_eq!(reply_destination(&req, &ack), Ipv4Addr::BROADCAST);
        let lease = s.lease().unwrap();
        assert_eq!(
            (lease.mac, lease.address, lease.server, lease.netmask),
            (MAC, HOST, BOARD, MASK)
        );
        assert_eq!((lease.acked_ns, lease.lease_secs), (42, 3600));
        assert_eq!(lease.host_name.as_deref(), Some("laptop"));
    }

    #[test]
    fn traffic_counts_what_was_heard_and_answered() {
        let mut s = server();
        assert_eq!(s.traffic(), Traffic::default());
        s.handle(&request(MessageType::Discover), 0).unwrap();
        s.handle(&request(MessageType::Discover), 0).unwrap();
        s.send_failed();
        let mut req = request(MessageType::Request);
        req.options.server_id = Some(BOARD);
        req.options.requested_ip = Some(HOST);
        s.handle(&req, 0).unwrap();
        req.options.requested_ip = Some(Ipv4Addr::new(10, 55, 0, 6));
        s.handle(&req, 0).unwrap();
        // Heard but unanswered: another server's request, a release, a BOOTP reply.
        req.options.server_id = Some(Ipv4Addr::new(192, 168, 1, 1));
        assert_eq!(s.handle(&req, 0), None);
        assert_eq!(s.handle(&request(MessageType::Release), 0), None);
        let mut reply = request(MessageType::Offer);
        reply.op = Op::BootReply;
        assert_eq!(s.handle(&reply, 0), None);
        let t = s.traffic();
        assert_eq!(
            t,
            Traffic {
                discovers: 2,
                requests: 3,
                other: 2,
                offers: 2,
                acks: 1,
                naks: 1,
                send_errors: 1,
            }
        );
        assert_eq!(
            t.to_string(),
            "heard 2 DHCPDISCOVER, 3 DHCPREQUEST, 2 other; answered 2 DHCPOFFER, 1 DHCPACK, \
             1 DHCPNAK; 1 replies not sent"
        );
    }

    #[test]
    fn selecting_another_server_is_ignored_and_a_wrong_address_naked() {
        let mut s = server();
        let mut req = request(MessageType::Request);
        req.flags = BROADCAST_FLAG;
        req.options.server_id = Some(Ipv4Addr::new(192, 168, 1, 1));
        req.options.requested_ip = Some(Ipv4Addr::new(192, 168, 1, 50));
        assert_eq!(s.handle(&req, 0), None);
        req.options.server_id = Some(BOARD);
        let nak = s.handle(&req, 0).unwrap();
        assert_eq!(kind(&nak), MessageType::Nak);
        assert_eq!(nak.options.server_id, Some(BOARD));
        assert_eq!(nak.options.lease_secs, None);
        assert_eq!(nak.options.subnet_mask, None);
        assert_eq!(nak.yiaddr, Ipv4Addr::UNSPECIFIED);
        assert_eq!(
            (nak.xid, nak.chaddr, nak.flags),
            (req.xid, req.chaddr, req.flags)
        );
        assert!(nak.options.message.is_some());
        assert!(s.lease().is_none());
    }

    #[test]
    fn renewing_is_unicast_and_a_foreign_ciaddr_is_naked_by_broadcast() {
        let mut s = server();
        let mut req = request(MessageType::Request);
        req.ciaddr = HOST;
        let ack = s.handle(&req, 7).unwrap();
        assert_eq!(kind(&ack), MessageType::Ack);
        assert_eq!((ack.ciaddr, ack.yiaddr), (HOST, HOST));
        assert_eq!(reply_destination(&req, &ack), HOST);
        assert_eq!(s.lease().unwrap().acked_ns, 7);

        req.ciaddr = Ipv4Addr::new(192, 168, 7, 20);
        let nak = s.handle(&req, 8).unwrap();
        assert_eq!(kind(&nak), MessageType::Nak);
        assert_eq!(reply_destination(&req, &nak), Ipv4Addr::BROADCAST);
        assert_eq!(s.lease().unwrap().acked_ns, 7, "a NAK keeps the old lease");
    }

    #[test]
    fn init_reboot_acks_our_address_only() {
        let mut s = server();
        let mut req = request(MessageType::Request);
        req.options.requested_ip = Some(HOST);
        assert_eq!(kind(&s.handle(&req, 0).unwrap()), MessageType::Ack);
        req.options.requested_ip = Some(Ipv4Addr::new(10, 55, 0, 6));
        assert_eq!(kind(&s.handle(&req, 0).unwrap()), MessageType::Nak);
        // Neither option 50 nor ciaddr: not a DHCPREQUEST anyone can answer.
        req.options.requested_ip = None;
        assert_eq!(s.handle(&req, 0), None);
    }

    #[test]
    fn release_and_decline_drop_the_lease() {
        let mut s = server();
        let mut req = request(MessageType::Request);
        req.options.requested_ip = Some(HOST);
        s.handle(&req, 0).unwrap();
        let mut release = request(MessageType::Release);
        release.ciaddr = HOST;
        release.options.server_id = Some(Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(s.handle(&release, 0), None);
        assert!(
            s.lease().is_some(),
            "a release to another server is not ours"
        );
        release.options.server_id = Some(BOARD);
        assert_eq!(s.handle(&release, 0), None);
        assert!(s.lease().is_none());

        s.handle(&req, 0).unwrap();
        let mut decline = request(MessageType::Decline);
        decline.options.requested_ip = Some(HOST);
        decline.options.server_id = Some(BOARD);
        assert_eq!(s.handle(&decline, 0), None);
        assert!(s.lease().is_none());
        assert_eq!(s.declines(), 1);
        // The address is still offered: there is no other.
        let offer = s.handle(&request(MessageType::Discover), 0).unwrap();
        assert_eq!(offer.yiaddr, HOST);
    }

    #[test]
    fn inform_gets_the_mask_without_a_lease() {
        let mut s = server();
        let mut req = request(MessageType::Inform);
        req.ciaddr = HOST;
        let ack = s.handle(&req, 0).unwrap();
        assert_eq!(kind(&ack), MessageType::Ack);
        assert_eq!(ack.yiaddr, Ipv4Addr::UNSPECIFIED);
        assert_eq!(ack.ciaddr, HOST);
        assert_eq!(ack.options.lease_secs, None);
        assert_eq!(ack.options.subnet_mask, Some(MASK));
        assert_eq!(reply_destination(&req, &ack), HOST);
        assert!(s.lease().is_none());
    }

    #[test]
    fn relayed_bootp_replies_and_non_ethernet_are_ignored() {
        let mut s = server();
        let mut relayed = request(MessageType::Discover);
        relayed.giaddr = Ipv4Addr::new(10, 0, 0, 1);
        assert_eq!(s.handle(&relayed, 0), None);
        let mut reply = request(MessageType::Offer);
        reply.op = Op::BootReply;
        assert_eq!(s.handle(&reply, 0), None);
        let mut bootp = request(MessageType::Discover);
        bootp.options.message_type = None;
        assert_eq!(s.handle(&bootp, 0), None);
        let mut ib = request(MessageType::Discover);
        (ib.htype, ib.hlen) = (32, 0);
        assert_eq!(s.handle(&ib, 0), None);
    }

    #[test]
    fn offers_carry_no_router_and_no_dns_even_when_asked() {
        let mut s = server();
        let mut req = request(MessageType::Discover);
        req.options.parameter_list = Some(vec![1, 3, 6, 15, 119, 121, 252]);
        let bytes = s.handle(&req, 0).unwrap().encode();
        let parsed = Message::parse(&bytes).unwrap();
        assert!(parsed.options.other.is_empty());
        assert_eq!(parsed.options.get_other(option::ROUTER), None);
        assert_eq!(parsed.options.get_other(option::DNS), None);
    }
}
