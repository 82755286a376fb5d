//! The server against DHCP messages captured from real clients (and the replies of real
//! servers, for the codec).
//!
//! Sources (hex copied from public test data; `{n}` stands for n zero bytes so the long
//! runs of chaddr padding, sname and file need not be copied by hand):
//!
//! - Wireshark's sample capture `dhcp.pcap` (a Windows XP-era client 00:0b:82:01:fc:42
//!   and its server 192.168.0.1), as hex in FreeRADIUS
//!   `src/tests/unit/protocols/dhcpv4/client-server.txt` (commit 96ee43b6); the
//!   DISCOVER also appears as `DISCOVER_BYTES` in smoltcp `src/wire/dhcpv4.rs`.
//! - PacketFence `t/util-dhcp.t` (inverse-inc/packetfence, commit 1748fec9): whole
//!   Ethernet frames captured with Net::Pcap: a CentOS 5 ISC dhclient DISCOVER, a Windows
//!   ("MSFT 5.0") INIT-REBOOT REQUEST and the ACK its server sent. Their UDP checksums
//!   are verified below, so the bytes are exactly the captured ones.
//! - lholota/dhcp-dotnet `src/LH.Dhcp.vNext.UnitTests/TestData/DhcpTestPackets.*.cs`
//!   (commit a094262f): a Hyper-V PXE ROM DISCOVER with the broadcast flag, and an
//!   OFFER that overloads the file field (to check that overload is refused).

use std::net::Ipv4Addr;

use benchboot_dhcp::codec::{option, BOOTP_MIN_LEN, BROADCAST_FLAG, HTYPE_ETHERNET};
use benchboot_dhcp::{reply_destination, Message, MessageType, Op, ParseError, Server};

/// Wireshark dhcp.pcap frame 1: DISCOVER, no broadcast flag, client id, option 50 of
/// 0.0.0.0, parameter list 1, 3, 6, 42.
const PCAP_DISCOVER: &str = "0101060000003d1d{21}0b8201fc42{202}638253633501013d0701000b8201fc42\
                             32040000000037040103062aff{7}";
/// Frame 2: the server's OFFER of 192.168.0.10.
const PCAP_OFFER: &str = "0201060000003d1d{8}c0a8000ac0a8000100000000000b8201fc42{202}\
                          638253633501020104ffffff003a04000007083b0400000c4e330400000e10\
                          3604c0a80001ff{26}";
/// Frame 3: REQUEST in the selecting state (server id 192.168.0.1, requested
/// 192.168.0.10); this client changed the xid between DISCOVER and REQUEST.
const PCAP_REQUEST: &str = "0101060000003d1e{21}0b8201fc42{202}638253633501033d0701000b8201fc42\
                            3204c0a8000a3604c0a8000137040103062aff00";
/// Frame 4: the server's ACK.
const PCAP_ACK: &str = "0201060000003d1e{8}c0a8000a{9}0b8201fc42{202}638253633501053a0400000708\
                        3b0400000c4e330400000e103604c0a800010104ffffff00ff{26}";

/// PacketFence "centos5 dhcp discover": ISC dhclient, requested address
/// 192.168.200.100, host name "TestingLaptop", a long parameter list (router, DNS,
/// classless routes 121, WPAD 252, ...). Ethernet + IPv4 + UDP + DHCP.
const PF_DHCLIENT_DISCOVER: &str = "fffffffffffff04da2cbd9c5080045100148000000008011399600000000\
     ffffffff0044004301344246010106000ea2614a{20}f04da2cbd9c5{202}638253633501013204c0a8c864\
     0c0d54657374696e674c6170746f703711011c02030f06770c2c2f1a792a79f9fc2aff{16}";
/// PacketFence "centos6 dhcp request": a Windows client (vendor class "MSFT 5.0", host
/// name "inverse-eeepc") in INIT-REBOOT: requested 172.21.150.100, no server id.
const PF_WINDOWS_REQUEST: &str = "ffffffffffff90e6ba70e74b08004500014816c10000801122e500000000\
     ffffffff004400430134339201010600d11b0641{20}90e6ba70e74b{202}638253633501033d070190e6ba\
     70e74b3204ac1596640c0d696e76657273652d65656570633c084d53465420352e30370c010f03062c2e2f\
     1f2179f92bff0000";
/// PacketFence "centos6 dhcp ack": the real server's answer to that request (router and
/// DNS included, unlike ours).
const PF_WINDOWS_ACK: &str = "90e6ba70e74bdeadbeef0150080045100148000000008011b504ac159601\
     ac159664004300440134e23f02010600d11b0641{8}ac159664{8}90e6ba70e74b{202}63825363350105\
     3604ac1596013304000151800104ffffff000f12696e6c696e652e644d6163426f6f6b50726f0304ac1596\
     01060404020202ff000000000000";

/// dhcp-dotnet `Discover`: Hyper-V PXE client 00:15:5d:00:50:30, hops 2, secs 4,
/// broadcast flag, max size 1260, options 97, 93, 94, 60 "PXEClient:...", 548 bytes.
const PXE_DISCOVER: &str = "010106025e005030000480{18}155d005030{202}63825363350101371801020305\
     060b0c0d0f1011122b363c438081828384858687390204ec61110086257cde4edc8a4e8940a4847f362d09\
     5d0200005e030102013c20505845436c69656e743a417263683a30303030303a554e44493a303032303031\
     ff{212}";
/// dhcp-dotnet `OfferWithOverloadedFileName`: option 52 = 1, options inside `file`.
const OVERLOADED_OFFER: &str =
    "02010600c3c58a5f0000800000000000c0a80167{8}deadc0decafe{10}736f6d652d7365727665722d6e\
     616d65{48}0f0b6578616d706c652e6f72674318736f6d652d66696c652d6e616d652d696e2d6f7074696f\
     6eff{88}638253633501023604c0a8010233040000012c0104ffffff000408c0a80167c0a801680708c0a8\
     0167c0a801680804c0a8016c0cf864756d6d792d686f73746e616d65616161616161616161616161616161\
     61616161616161616161616161616161616161616161616161616161616161616161616161616161616161\
     61616161616161616161616161616161616161616161616161616161626262626262626262626262626262\
     62626262626262626262626262626262636363636363636363636363636363636363636363636363636363\
     63636363636363636363636464646464646464646464646464646464646464646464646464646464646464\
     64646465656565656565656565656565656565656565656565656565656565656565656565656565656565\
     65656565340101ff";

/// Hex with `{n}` for n zero bytes; whitespace ignored.
fn hex(s: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest: &str = &s.split_whitespace().collect::<String>();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('{') {
            let (n, r) = r.split_once('}').unwrap();
            out.resize(out.len() + n.parse::<usize>().unwrap(), 0);
            rest = r;
        } else {
            out.push(u8::from_str_radix(&rest[..2], 16).unwrap());
            rest = &rest[2..];
        }
    }
    out
}

/// RFC 1071 ones' complement sum, folded.
fn ones_sum(data: &[u8], mut sum: u32) -> u32 {
    for pair in data.chunks(2) {
        let hi = u32::from(pair[0]) << 8;
        sum += hi | pair.get(1).copied().map_or(0, u32::from);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum
}

/// The UDP payload of an Ethernet II / IPv4 / UDP frame, after checking the IPv4 header
/// checksum and the UDP checksum (so the copied hex is byte for byte the capture).
fn udp_payload(frame: &[u8]) -> Vec<u8> {
    assert_eq!(&frame[12..14], &[0x08, 0x00], "IPv4 ethertype");
    let ip = &frame[14..];
    let ihl = usize::from(ip[0] & 0xf) * 4;
    assert_eq!(ones_sum(&ip[..ihl], 0), 0xffff, "IPv4 header checksum");
    assert_eq!(ip[9], 17, "UDP");
    let udp = &ip[ihl..];
    let len = usize::from(u16::from_be_bytes([udp[4], udp[5]]));
    let mut pseudo = ip[12..20].to_vec();
    pseudo.extend_from_slice(&[0, 17]);
    pseudo.extend_from_slice(&(len as u16).to_be_bytes());
    assert_eq!(
        ones_sum(&udp[..len], ones_sum(&pseudo, 0)),
        0xffff,
        "UDP checksum"
    );
    udp[8..len].to_vec()
}

fn mac(m: &Message) -> [u8; 6] {
    m.ethernet_mac().unwrap()
}

/// The fields every reply copies from the request (RFC 2131 table 3).
fn assert_echoes(reply: &Message, req: &Message) {
    assert_eq!(reply.op, Op::BootReply);
    assert_eq!(reply.htype, req.htype);
    assert_eq!(reply.hlen, req.hlen);
    assert_eq!(reply.hops, 0);
    assert_eq!(reply.xid, req.xid);
    assert_eq!(reply.secs, 0);
    assert_eq!(reply.flags, req.flags);
    assert_eq!(reply.giaddr, Ipv4Addr::UNSPECIFIED);
    assert_eq!(reply.chaddr, req.chaddr);
    assert_eq!(reply.sname, [0; 64]);
    assert_eq!(reply.file, [0; 128]);
}

/// The bytes on the wire: padded to the BOOTP minimum, and no router, DNS, T1/T2 or
/// any option beyond the ones named.
fn assert_wire(reply: &Message) -> Message {
    let bytes = reply.encode();
    assert!(bytes.len() >= BOOTP_MIN_LEN);
    let back = Message::parse(&bytes).unwrap();
    assert_eq!(&back, reply);
    assert!(back.options.other.is_empty(), "{:?}", back.options.other);
    for code in [option::ROUTER, option::DNS, option::RENEWAL_TIME] {
        assert_eq!(back.options.get_other(code), None);
    }
    assert_eq!(back.options.host_name, None);
    assert_eq!(back.options.client_id, None);
    assert_eq!(back.options.parameter_list, None);
    back
}

fn plan_server() -> Server {
    Server::new(
        Ipv4Addr::new(10, 55, 0, 1),
        Ipv4Addr::new(10, 55, 0, 2),
        Ipv4Addr::new(255, 255, 255, 252),
        3600,
    )
}

#[test]
fn captured_packets_parse() {
    let d = Message::parse(&hex(PCAP_DISCOVER)).unwrap();
    assert_eq!(hex(PCAP_DISCOVER).len(), 272);
    assert_eq!(
        (d.op, d.htype, d.hlen, d.xid),
        (Op::BootRequest, 1, 6, 0x3d1d)
    );
    assert_eq!(mac(&d), [0x00, 0x0b, 0x82, 0x01, 0xfc, 0x42]);
    assert_eq!(d.options.message_type, Some(MessageType::Discover));
    assert_eq!(
        d.options.client_id.as_deref(),
        Some(&[1, 0x00, 0x0b, 0x82, 0x01, 0xfc, 0x42][..])
    );
    assert_eq!(d.options.requested_ip, Some(Ipv4Addr::UNSPECIFIED));
    assert_eq!(
        d.options.parameter_list.as_deref(),
        Some(&[1, 3, 6, 42][..])
    );

    // A real server's OFFER and ACK.
    let o = Message::parse(&hex(PCAP_OFFER)).unwrap();
    assert_eq!(o.options.message_type, Some(MessageType::Offer));
    assert_eq!(o.yiaddr, Ipv4Addr::new(192, 168, 0, 10));
    assert_eq!(o.siaddr, Ipv4Addr::new(192, 168, 0, 1));
    assert_eq!(o.options.lease_secs, Some(3600));
    assert_eq!(
        o.options.get_other(option::RENEWAL_TIME),
        Some(&[0, 0, 7, 8][..])
    );
    let a = Message::parse(&hex(PCAP_ACK)).unwrap();
    assert_eq!(a.options.message_type, Some(MessageType::Ack));
    assert_eq!(a.options.subnet_mask, Some(Ipv4Addr::new(255, 255, 255, 0)));

    let w = Message::parse(&udp_payload(&hex(PF_DHCLIENT_DISCOVER))).unwrap();
    assert_eq!(w.options.host_name.as_deref(), Some(&b"TestingLaptop"[..]));
    assert_eq!(
        w.options.requested_ip,
        Some(Ipv4Addr::new(192, 168, 200, 100))
    );
    assert_eq!(
        w.options.parameter_list.as_deref(),
        Some(&[1, 28, 2, 3, 15, 6, 119, 12, 44, 47, 26, 121, 42, 121, 249, 252, 42][..])
    );

    let p = Message::parse(&hex(PXE_DISCOVER)).unwrap();
    assert_eq!(hex(PXE_DISCOVER).len(), 548);
    assert!(p.broadcast());
    assert_eq!((p.hops, p.secs), (2, 4));
    assert_eq!(p.options.max_size, Some(1260));
    assert_eq!(
        p.options.get_other(60),
        Some(&b"PXEClient:Arch:00000:UNDI:002001"[..])
    );
    let codes: Vec<u8> = p.options.other.iter().map(|(c, _)| *c).collect();
    assert_eq!(codes, [97, 93, 94, 60]);

    assert_eq!(
        Message::parse(&hex(OVERLOADED_OFFER)),
        Err(ParseError::Overload)
    );
}

/// The Wireshark exchange replayed against a server configured like the capture's
/// (192.168.0.1 leasing 192.168.0.10 for an hour): our OFFER and ACK carry what the
/// real server's did, minus T1/T2, with siaddr 0.0.0.0 (no next boot server).
#[test]
fn wireshark_exchange_against_a_server_like_the_captured_one() {
    let board = Ipv4Addr::new(192, 168, 0, 1);
    let host = Ipv4Addr::new(192, 168, 0, 10);
    let mask = Ipv4Addr::new(255, 255, 255, 0);
    let mut s = Server::new(board, host, mask, 3600);
    let discover = Message::parse(&hex(PCAP_DISCOVER)).unwrap();
    let real_offer = Message::parse(&hex(PCAP_OFFER)).unwrap();

    let offer = s.handle(&discover, 1_000).unwrap();
    assert_echoes(&offer, &discover);
    assert_eq!(offer.flags & BROADCAST_FLAG, 0);
    assert_eq!(offer.ciaddr, Ipv4Addr::UNSPECIFIED);
    assert_eq!(offer.yiaddr, real_offer.yiaddr);
    assert_eq!(offer.siaddr, Ipv4Addr::UNSPECIFIED);
    let o = assert_wire(&offer).options;
    assert_eq!(o.message_type, Some(MessageType::Offer));
    assert_eq!(o.server_id, real_offer.options.server_id);
    assert_eq!(o.lease_secs, real_offer.options.lease_secs);
    assert_eq!(o.subnet_mask, real_offer.options.subnet_mask);
    assert_eq!((o.requested_ip, o.max_size, o.message), (None, None, None));
    // No ciaddr: broadcast (the capture's server unicast to yiaddr at the MAC layer).
    assert_eq!(reply_destination(&discover, &offer), Ipv4Addr::BROADCAST);
    assert!(s.lease().is_none());

    let request = Message::parse(&hex(PCAP_REQUEST)).unwrap();
    let real_ack = Message::parse(&hex(PCAP_ACK)).unwrap();
    let ack = s.handle(&request, 2_000).unwrap();
    assert_echoes(&ack, &request);
    assert_eq!(ack.xid, 0x3d1e);
    assert_eq!(ack.ciaddr, real_ack.ciaddr);
    assert_eq!(ack.yiaddr, real_ack.yiaddr);
    assert_eq!(ack.siaddr, real_ack.siaddr);
    let o = assert_wire(&ack).options;
    assert_eq!(o.message_type, Some(MessageType::Ack));
    assert_eq!(o.server_id, real_ack.options.server_id);
    assert_eq!(o.lease_secs, real_ack.options.lease_secs);
    assert_eq!(o.subnet_mask, real_ack.options.subnet_mask);
    assert_eq!(reply_destination(&request, &ack), Ipv4Addr::BROADCAST);

    let lease = s.lease().unwrap();
    assert_eq!(lease.mac, mac(&request));
    assert_eq!(
        (lease.address, lease.server, lease.netmask),
        (host, board, mask)
    );
    assert_eq!((lease.lease_secs, lease.acked_ns), (3600, 2_000));
    assert_eq!(lease.client_id, request.options.client_id);
    assert_eq!(lease.host_name, None);
}

/// The same client on a benchboot link: it is offered the link's .2 whatever it asked
/// before, and its REQUEST naming the capture's server (192.168.0.1) is not ours, so it
/// gets no answer (RFC 2131 §4.3.2).
#[test]
fn wireshark_client_on_a_benchboot_link() {
    let mut s = plan_server();
    let discover = Message::parse(&hex(PCAP_DISCOVER)).unwrap();
    let offer = s.handle(&discover, 0).unwrap();
    assert_echoes(&offer, &discover);
    assert_eq!(offer.yiaddr, Ipv4Addr::new(10, 55, 0, 2));
    let o = assert_wire(&offer).options;
    assert_eq!(o.server_id, Some(Ipv4Addr::new(10, 55, 0, 1)));
    assert_eq!(o.subnet_mask, Some(Ipv4Addr::new(255, 255, 255, 252)));
    assert_eq!(o.lease_secs, Some(3600));

    let request = Message::parse(&hex(PCAP_REQUEST)).unwrap();
    assert_eq!(s.handle(&request, 0), None);
    assert!(s.lease().is_none());
}

/// ISC dhclient asks for its old address and for router, DNS, classless routes, WPAD:
/// it gets the link's .2 and only mask, lease time and server id.
#[test]
fn dhclient_discover_gets_the_link_address_and_no_router() {
    let mut s = plan_server();
    let discover = Message::parse(&udp_payload(&hex(PF_DHCLIENT_DISCOVER))).unwrap();
    assert_eq!(discover.xid, 0x0ea2614a);
    let offer = s.handle(&discover, 0).unwrap();
    assert_echoes(&offer, &discover);
    assert_eq!(mac(&offer), [0xf0, 0x4d, 0xa2, 0xcb, 0xd9, 0xc5]);
    assert_eq!(offer.yiaddr, Ipv4Addr::new(10, 55, 0, 2));
    assert_eq!(
        (offer.ciaddr, offer.siaddr),
        (Ipv4Addr::UNSPECIFIED, Ipv4Addr::UNSPECIFIED)
    );
    let o = assert_wire(&offer).options;
    assert_eq!(o.message_type, Some(MessageType::Offer));
    assert_eq!(o.subnet_mask, Some(Ipv4Addr::new(255, 255, 255, 252)));
    assert_eq!(reply_destination(&discover, &offer), Ipv4Addr::BROADCAST);
}

/// Windows rebooting onto a benchboot link asks for the address it had elsewhere: NAK
/// (broadcast), so it starts over with a DISCOVER. On a server that does own that
/// address the same request is ACKed and the lease names the host.
#[test]
fn windows_init_reboot_is_naked_elsewhere_and_acked_at_home() {
    let request = Message::parse(&udp_payload(&hex(PF_WINDOWS_REQUEST))).unwrap();
    assert_eq!(request.options.server_id, None);
    assert_eq!(request.options.get_other(60), Some(&b"MSFT 5.0"[..]));

    let mut s = plan_server();
    let nak = s.handle(&request, 0).unwrap();
    assert_echoes(&nak, &request);
    assert_eq!(nak.ciaddr, Ipv4Addr::UNSPECIFIED);
    assert_eq!(nak.yiaddr, Ipv4Addr::UNSPECIFIED);
    assert_eq!(nak.siaddr, Ipv4Addr::UNSPECIFIED);
    let bytes = nak.encode();
    let o = Message::parse(&bytes).unwrap().options;
    assert_eq!(o.message_type, Some(MessageType::Nak));
    assert_eq!(o.server_id, Some(Ipv4Addr::new(10, 55, 0, 1)));
    assert_eq!((o.lease_secs, o.subnet_mask), (None, None));
    assert!(o.message.is_some());
    assert!(o.other.is_empty());
    assert_eq!(reply_destination(&request, &nak), Ipv4Addr::BROADCAST);
    assert!(s.lease().is_none());

    let real_ack = Message::parse(&udp_payload(&hex(PF_WINDOWS_ACK))).unwrap();
    let board = real_ack.options.server_id.unwrap();
    let mut home = Server::new(
        board,
        real_ack.yiaddr,
        real_ack.options.subnet_mask.unwrap(),
        86_400,
    );
    let ack = home.handle(&request, 5).unwrap();
    assert_echoes(&ack, &request);
    assert_eq!(ack.yiaddr, real_ack.yiaddr);
    assert_eq!(ack.ciaddr, real_ack.ciaddr);
    assert_eq!(ack.siaddr, real_ack.siaddr);
    let o = assert_wire(&ack).options;
    assert_eq!(o.lease_secs, real_ack.options.lease_secs);
    assert_eq!(o.server_id, Some(board));
    // The real server sent router and DNS; ours never does.
    assert!(real_ack.options.get_other(option::ROUTER).is_some());
    assert!(real_ack.options.get_other(option::DNS).is_some());
    let lease = home.lease().unwrap();
    assert_eq!(lease.mac, [0x90, 0xe6, 0xba, 0x70, 0xe7, 0x4b]);
    assert_eq!(lease.host_name.as_deref(), Some("inverse-eeepc"));
    assert_eq!(
        lease.client_id.as_deref(),
        Some(&[1, 0x90, 0xe6, 0xba, 0x70, 0xe7, 0x4b][..])
    );
    assert_eq!(lease.acked_ns, 5);
}

/// A PXE ROM sets the broadcast flag: the OFFER keeps it and is broadcast.
#[test]
fn pxe_broadcast_flag_is_echoed_and_honoured() {
    let mut s = plan_server();
    let discover = Message::parse(&hex(PXE_DISCOVER)).unwrap();
    let offer = s.handle(&discover, 0).unwrap();
    assert_echoes(&offer, &discover);
    assert_eq!(offer.htype, HTYPE_ETHERNET);
    assert_eq!(offer.flags, BROADCAST_FLAG);
    assert_eq!(offer.hops, 0, "hops is not echoed");
    assert_eq!(offer.yiaddr, Ipv4Addr::new(10, 55, 0, 2));
    assert_wire(&offer);
    assert_eq!(reply_destination(&discover, &offer), Ipv4Addr::BROADCAST);
}
