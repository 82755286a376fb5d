//! DHCPv4 messages as bytes: parse and build (pure, no I/O).
//!
//! The layout is RFC 2131 §2 (figure 1): a 236-byte BOOTP header, the magic cookie
//! (RFC 2131 §3), then options in the RFC 2132 §2 format (`code`, `len`, `len` bytes;
//! `0` pad and `255` end are single bytes). Options that appear more than once are
//! concatenated (RFC 3396 §7), and values longer than 255 bytes are written as several
//! instances the same way. Option overload (option 52, RFC 2132 §9.3) is refused.
//!
//! [`Message::parse`] never panics: every length is checked before it is used, and
//! anything that does not fit the format is a [`ParseError`].

use std::net::Ipv4Addr;

/// UDP port the server listens on (RFC 2131 §4.1).
pub const SERVER_PORT: u16 = 67;
/// UDP port the client listens on (RFC 2131 §4.1).
pub const CLIENT_PORT: u16 = 68;
/// The four bytes that start the options field: 99.130.83.99 (RFC 2131 §3, RFC 2132 §2).
pub const MAGIC_COOKIE: [u8; 4] = [99, 130, 83, 99];
/// Length of the fixed BOOTP header, `op` through `file`, bytes (RFC 2131 §2, figure 1).
pub const HEADER_LEN: usize = 236;
/// Shortest message this codec accepts: header plus magic cookie, bytes.
pub const MIN_LEN: usize = HEADER_LEN + MAGIC_COOKIE.len();
/// Built messages are zero-padded to at least this many bytes, the BOOTP minimum that
/// some relay agents and old clients insist on (RFC 1542 §2.1).
pub const BOOTP_MIN_LEN: usize = 300;
/// The `flags` bit that asks the server to broadcast its reply (RFC 2131 §2, figure 2).
pub const BROADCAST_FLAG: u16 = 0x8000;
/// `htype` of 10 Mb Ethernet, whose `hlen` is 6 (RFC 1700 "Hardware Type", RFC 2131 §2).
pub const HTYPE_ETHERNET: u8 = 1;

/// Option codes (RFC 2132 section in each comment).
pub mod option {
    /// Pad, one byte, no length (§3.1).
    pub const PAD: u8 = 0;
    /// Subnet mask, 4 bytes (§3.3).
    pub const SUBNET_MASK: u8 = 1;
    /// Router list, n × 4 bytes (§3.5); this server never sends it.
    pub const ROUTER: u8 = 3;
    /// Domain name server list, n × 4 bytes (§3.8); this server never sends it.
    pub const DNS: u8 = 6;
    /// Host name, at least 1 byte (§3.14).
    pub const HOST_NAME: u8 = 12;
    /// Requested IP address, 4 bytes (§9.1).
    pub const REQUESTED_IP: u8 = 50;
    /// IP address lease time, 4 bytes, seconds (§9.2).
    pub const LEASE_TIME: u8 = 51;
    /// Option overload, 1 byte (§9.3); refused by this codec.
    pub const OVERLOAD: u8 = 52;
    /// DHCP message type, 1 byte (§9.6).
    pub const MESSAGE_TYPE: u8 = 53;
    /// Server identifier, 4 bytes (§9.7).
    pub const SERVER_ID: u8 = 54;
    /// Parameter request list, at least 1 byte (§9.8).
    pub const PARAMETER_LIST: u8 = 55;
    /// Message (text, e.g. why a DHCPNAK), at least 1 byte (§9.9).
    pub const MESSAGE: u8 = 56;
    /// Maximum DHCP message size, 2 bytes (§9.10).
    pub const MAX_SIZE: u8 = 57;
    /// Renewal (T1) time, 4 bytes, seconds (§9.11); not sent (clients default to ½ lease).
    pub const RENEWAL_TIME: u8 = 58;
    /// Rebinding (T2) time, 4 bytes, seconds (§9.12); not sent (clients default to ⅞).
    pub const REBINDING_TIME: u8 = 59;
    /// Client identifier, at least 2 bytes (§9.14).
    pub const CLIENT_ID: u8 = 61;
    /// End, one byte, no length (§3.2).
    pub const END: u8 = 255;
}

/// BOOTP message op code (RFC 2131 §2, `op`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// 1: client to server.
    BootRequest = 1,
    /// 2: server to client.
    BootReply = 2,
}

/// DHCP message type, the value of option 53 (RFC 2132 §9.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageType {
    Discover = 1,
    Offer = 2,
    Request = 3,
    Decline = 4,
    Ack = 5,
    Nak = 6,
    Release = 7,
    Inform = 8,
}

impl MessageType {
    /// The type for an option 53 value, `None` outside 1..=8.
    pub fn from_u8(v: u8) -> Option<MessageType> {
        use MessageType::*;
        Some(match v {
            1 => Discover,
            2 => Offer,
            3 => Request,
            4 => Decline,
            5 => Ack,
            6 => Nak,
            7 => Release,
            8 => Inform,
            _ => return None,
        })
    }
}

/// Why bytes are not a DHCP message this codec accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("{len} bytes is shorter than the {MIN_LEN}-byte BOOTP header and magic cookie")]
    TooShort { len: usize },
    #[error("op {0} is neither BOOTREQUEST (1) nor BOOTREPLY (2)")]
    BadOp(u8),
    #[error("hlen {0} is longer than the 16-byte chaddr field")]
    BadHlen(u8),
    #[error("magic cookie {0:?} is not 99.130.83.99 (RFC 2131 §3)")]
    BadCookie([u8; 4]),
    #[error("option {code} at byte {offset} runs past the end of the message")]
    Truncated { code: u8, offset: usize },
    #[error("the options end without the end option (255)")]
    MissingEnd,
    #[error("option {code} is {len} bytes long, it must be {expected}")]
    BadLength {
        code: u8,
        len: usize,
        expected: usize,
    },
    #[error("DHCP message type {0} is not 1..=8 (RFC 2132 §9.6)")]
    BadMessageType(u8),
    #[error("option overload (52) is not supported")]
    Overload,
}

/// The options this server reads or writes, decoded; everything else in `other`.
///
/// Variable-length values are kept as sent (RFC 2132's minimum lengths are not enforced:
/// the server only reports them). Fixed-length options of the wrong length are errors.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Options {
    /// Option 53.
    pub message_type: Option<MessageType>,
    /// Option 1.
    pub subnet_mask: Option<Ipv4Addr>,
    /// Option 12, raw bytes (not always UTF-8; some clients add a trailing NUL).
    pub host_name: Option<Vec<u8>>,
    /// Option 50.
    pub requested_ip: Option<Ipv4Addr>,
    /// Option 51, seconds (`u32::MAX` is "infinite", RFC 2132 §9.2).
    pub lease_secs: Option<u32>,
    /// Option 54.
    pub server_id: Option<Ipv4Addr>,
    /// Option 55: the option codes the client asks for, in its order of preference.
    pub parameter_list: Option<Vec<u8>>,
    /// Option 56, text.
    pub message: Option<Vec<u8>>,
    /// Option 57, bytes.
    pub max_size: Option<u16>,
    /// Option 61: type byte (1 = Ethernet) then the identifier.
    pub client_id: Option<Vec<u8>>,
    /// Every other option as `(code, value)`, in order of first appearance.
    pub other: Vec<(u8, Vec<u8>)>,
}

impl Options {
    /// The value of an option in `other`, if present.
    pub fn get_other(&self, code: u8) -> Option<&[u8]> {
        self.other
            .iter()
            .find(|(c, _)| *c == code)
            .map(|(_, v)| v.as_slice())
    }
}

/// One DHCP message (RFC 2131 §2, figure 1), header fields by their RFC names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub op: Op,
    /// Hardware address type ([`HTYPE_ETHERNET`]).
    pub htype: u8,
    /// Hardware address length, bytes (6 for Ethernet); at most 16.
    pub hlen: u8,
    /// Relay hops; 0 from a client.
    pub hops: u8,
    /// Transaction id chosen by the client, echoed by the server.
    pub xid: u32,
    /// Seconds since the client began acquiring or renewing.
    pub secs: u16,
    /// [`BROADCAST_FLAG`] and 15 reserved bits.
    pub flags: u16,
    /// Client's own address, only when it can already answer ARP for it.
    pub ciaddr: Ipv4Addr,
    /// "Your" address: what the server offers or acknowledges.
    pub yiaddr: Ipv4Addr,
    /// Next bootstrap server; 0.0.0.0 from this server (there is none).
    pub siaddr: Ipv4Addr,
    /// Relay agent address; 0.0.0.0 without a relay.
    pub giaddr: Ipv4Addr,
    /// Client hardware address, the first `hlen` bytes used, the rest zero.
    pub chaddr: [u8; 16],
    /// Server host name field (NUL-terminated text or zeros).
    pub sname: [u8; 64],
    /// Boot file name field (NUL-terminated text or zeros).
    pub file: [u8; 128],
    pub options: Options,
}

impl Default for Message {
    fn default() -> Self {
        Message {
            op: Op::BootRequest,
            htype: HTYPE_ETHERNET,
            hlen: 6,
            hops: 0,
            xid: 0,
            secs: 0,
            flags: 0,
            ciaddr: Ipv4Addr::UNSPECIFIED,
            yiaddr: Ipv4Addr::UNSPECIFIED,
            siaddr: Ipv4Addr::UNSPECIFIED,
            giaddr: Ipv4Addr::UNSPECIFIED,
            chaddr: [0; 16],
            sname: [0; 64],
            file: [0; 128],
            options: Options::default(),
        }
    }
}

impl Message {
    /// Whether the client asked for a broadcast reply ([`BROADCAST_FLAG`]).
    pub fn broadcast(&self) -> bool {
        self.flags & BROADCAST_FLAG != 0
    }

    /// The client's Ethernet MAC (`chaddr`), `None` unless `htype` is Ethernet and
    /// `hlen` is 6.
    pub fn ethernet_mac(&self) -> Option<[u8; 6]> {
        if self.htype != HTYPE_ETHERNET || self.hlen != 6 {
            return None;
        }
        let mut mac = [0; 6];
        mac.copy_from_slice(&self.chaddr[..6]);
        Some(mac)
    }

    /// Parses one message from a UDP payload.
    pub fn parse(bytes: &[u8]) -> Result<Message, ParseError> {
        if bytes.len() < MIN_LEN {
            return Err(ParseError::TooShort { len: bytes.len() });
        }
        let op = match bytes[0] {
            1 => Op::BootRequest,
            2 => Op::BootReply,
            other => return Err(ParseError::BadOp(other)),
        };
        let hlen = bytes[2];
        if hlen > 16 {
            return Err(ParseError::BadHlen(hlen));
        }
        let cookie: [u8; 4] = array(&bytes[HEADER_LEN..MIN_LEN]);
        if cookie != MAGIC_COOKIE {
            return Err(ParseError::BadCookie(cookie));
        }
        let ip = |at: usize| Ipv4Addr::from(array::<4>(&bytes[at..at + 4]));
        Ok(Message {
            op,
            htype: bytes[1],
            hlen,
            hops: bytes[3],
            xid: u32::from_be_bytes(array(&bytes[4..8])),
            secs: u16::from_be_bytes(array(&bytes[8..10])),
            flags: u16::from_be_bytes(array(&bytes[10..12])),
            ciaddr: ip(12),
            yiaddr: ip(16),
            siaddr: ip(20),
            giaddr: ip(24),
            chaddr: array(&bytes[28..44]),
            sname: array(&bytes[44..108]),
            file: array(&bytes[108..236]),
            options: parse_options(&bytes[MIN_LEN..], MIN_LEN)?,
        })
    }

    /// The message as a UDP payload: header, cookie, options, end, zero padding up to
    /// [`BOOTP_MIN_LEN`].
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(BOOTP_MIN_LEN);
        b.extend_from_slice(&[self.op as u8, self.htype, self.hlen, self.hops]);
        b.extend_from_slice(&self.xid.to_be_bytes());
        b.extend_from_slice(&self.secs.to_be_bytes());
        b.extend_from_slice(&self.flags.to_be_bytes());
        for a in [self.ciaddr, self.yiaddr, self.siaddr, self.giaddr] {
            b.extend_from_slice(&a.octets());
        }
        b.extend_from_slice(&self.chaddr);
        b.extend_from_slice(&self.sname);
        b.extend_from_slice(&self.file);
        b.extend_from_slice(&MAGIC_COOKIE);
        let o = &self.options;
        if let Some(t) = o.message_type {
            put(&mut b, option::MESSAGE_TYPE, &[t as u8]);
        }
        if let Some(a) = o.server_id {
            put(&mut b, option::SERVER_ID, &a.octets());
        }
        if let Some(s) = o.lease_secs {
            put(&mut b, option::LEASE_TIME, &s.to_be_bytes());
        }
        if let Some(a) = o.subnet_mask {
            put(&mut b, option::SUBNET_MASK, &a.octets());
        }
        if let Some(a) = o.requested_ip {
            put(&mut b, option::REQUESTED_IP, &a.octets());
        }
        if let Some(s) = o.max_size {
            put(&mut b, option::MAX_SIZE, &s.to_be_bytes());
        }
        for (code, v) in [
            (option::PARAMETER_LIST, &o.parameter_list),
            (option::CLIENT_ID, &o.client_id),
            (option::HOST_NAME, &o.host_name),
            (option::MESSAGE, &o.message),
        ] {
            if let Some(v) = v {
                put(&mut b, code, v);
            }
        }
        for (code, v) in &o.other {
            put(&mut b, *code, v);
        }
        b.push(option::END);
        if b.len() < BOOTP_MIN_LEN {
            b.resize(BOOTP_MIN_LEN, option::PAD);
        }
        b
    }
}

/// Writes one option, split into 255-byte instances when longer (RFC 3396 §5).
fn put(b: &mut Vec<u8>, code: u8, value: &[u8]) {
    if value.is_empty() {
        b.extend_from_slice(&[code, 0]);
    }
    for chunk in value.chunks(255) {
        b.extend_from_slice(&[code, chunk.len() as u8]);
        b.extend_from_slice(chunk);
    }
}

/// Copies a slice whose length the caller has already checked into an array.
fn array<const N: usize>(s: &[u8]) -> [u8; N] {
    let mut a = [0; N];
    a.copy_from_slice(&s[..N]);
    a
}

/// Parses the options field; `base` is its offset in the message (for errors).
fn parse_options(bytes: &[u8], base: usize) -> Result<Options, ParseError> {
    // First pass: (code, concatenated value) in order of first appearance (RFC 3396).
    let mut raw: Vec<(u8, Vec<u8>)> = Vec::new();
    let mut i = 0;
    loop {
        let Some(&code) = bytes.get(i) else {
            return Err(ParseError::MissingEnd);
        };
        match code {
            option::PAD => i += 1,
            option::END => break,
            _ => {
                let truncated = ParseError::Truncated {
                    code,
                    offset: base + i,
                };
                let len = *bytes.get(i + 1).ok_or(truncated.clone())? as usize;
                let value = bytes.get(i + 2..i + 2 + len).ok_or(truncated)?;
                match raw.iter_mut().find(|(c, _)| *c == code) {
                    Some((_, v)) => v.extend_from_slice(value),
                    None => raw.push((code, value.to_vec())),
                }
                i += 2 + len;
            }
        }
    }
    // Second pass: decode the options we know.
    let mut o = Options::default();
    for (code, v) in raw {
        let fixed = |expected: usize| {
            if v.len() == expected {
                Ok(())
            } else {
                Err(ParseError::BadLength {
                    code,
                    len: v.len(),
                    expected,
                })
            }
        };
        let ip = |v: &[u8]| Ipv4Addr::from(array::<4>(v));
        match code {
            option::OVERLOAD => return Err(ParseError::Overload),
            option::MESSAGE_TYPE => {
                fixed(1)?;
                o.message_type =
                    Some(MessageType::from_u8(v[0]).ok_or(ParseError::BadMessageType(v[0]))?);
            }
            option::SUBNET_MASK => {
                fixed(4)?;
                o.subnet_mask = Some(ip(&v));
            }
            option::REQUESTED_IP => {
                fixed(4)?;
                o.requested_ip = Some(ip(&v));
            }
            option::SERVER_ID => {
                fixed(4)?;
                o.server_id = Some(ip(&v));
            }
            option::LEASE_TIME => {
                fixed(4)?;
                o.lease_secs = Some(u32::from_be_bytes(array(&v)));
            }
            option::MAX_SIZE => {
                fixed(2)?;
                o.max_size = Some(u16::from_be_bytes(array(&v)));
            }
            option::HOST_NAME => o.host_name = Some(v),
            option::PARAMETER_LIST => o.parameter_list = Some(v),
            option::MESSAGE => o.message = Some(v),
            option::CLIENT_ID => o.client_id = Some(v),
            _ => o.other.push((code, v)),
        }
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DISCOVER with every option this codec decodes, and one it does not.
    fn sample() -> Message {
        let mut chaddr = [0; 16];
        chaddr[..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x01]);
        Message {
            xid: 0x1234_5678,
            flags: BROADCAST_FLAG,
            chaddr,
            options: Options {
                message_type: Some(MessageType::Discover),
                subnet_mask: Some(Ipv4Addr::new(255, 255, 255, 252)),
                host_name: Some(b"host".to_vec()),
                requested_ip: Some(Ipv4Addr::new(10, 55, 0, 2)),
                lease_secs: Some(3600),
                server_id: Some(Ipv4Addr::new(10, 55, 0, 1)),
                parameter_list: Some(vec![1, 3, 6]),
                message: Some(b"hi".to_vec()),
                max_size: Some(1500),
                client_id: Some(vec![1, 2, 0, 0, 0, 0, 1]),
                other: vec![(60, b"vendor".to_vec())],
            },
            ..Message::default()
        }
    }

    #[test]
    fn encode_then_parse_is_identity_and_padded() {
        let m = sample();
        let b = m.encode();
        assert!(b.len() >= BOOTP_MIN_LEN);
        assert_eq!(&b[HEADER_LEN..MIN_LEN], &MAGIC_COOKIE);
        assert_eq!(Message::parse(&b).unwrap(), m);
        let mut small = Message::default();
        small.options.message_type = Some(MessageType::Nak);
        assert_eq!(small.encode().len(), BOOTP_MIN_LEN);
    }

    #[test]
    fn long_values_are_split_and_duplicates_concatenated() {
        let mut m = sample();
        m.options.host_name = Some(vec![b'a'; 300]);
        let b = m.encode();
        assert_eq!(Message::parse(&b).unwrap(), m);
        // Two instances of option 12 in a row (RFC 3396 §7) read as one value.
        let at = b.windows(2).position(|w| w == [12, 255]).unwrap();
        assert_eq!(b[at + 2 + 255..at + 2 + 255 + 2], [12, 45]);
    }

    #[test]
    fn malformed_input_is_a_typed_error() {
        let good = sample().encode();
        let mut b = good.clone();
        b[0] = 3;
        assert_eq!(Message::parse(&b), Err(ParseError::BadOp(3)));
        let mut b = good.clone();
        b[2] = 17;
        assert_eq!(Message::parse(&b), Err(ParseError::BadHlen(17)));
        let mut b = good.clone();
        b[HEADER_LEN] = 0;
        assert_eq!(
            Message::parse(&b),
            Err(ParseError::BadCookie([0, 130, 83, 99]))
        );
        let mut b = good[..MIN_LEN].to_vec();
        assert_eq!(Message::parse(&b), Err(ParseError::MissingEnd));
        b.extend_from_slice(&[53, 1, 9, 255]);
        assert_eq!(Message::parse(&b), Err(ParseError::BadMessageType(9)));
        let mut b = good[..MIN_LEN].to_vec();
        b.extend_from_slice(&[54, 3, 10, 55, 0, 255]);
        assert_eq!(
            Message::parse(&b),
            Err(ParseError::BadLength {
                code: 54,
                len: 3,
                expected: 4
            })
        );
        let mut b = good[..MIN_LEN].to_vec();
        b.extend_from_slice(&[53, 1, 1, 53, 1, 1, 255]);
        assert!(matches!(
            Message::parse(&b),
            Err(ParseError::BadLength { code: 53, .. })
        ));
        let mut b = good[..MIN_LEN].to_vec();
        b.extend_from_slice(&[52, 1, 3, 255]);
        assert_eq!(Message::parse(&b), Err(ParseError::Overload));
        let mut b = good[..MIN_LEN].to_vec();
        b.extend_from_slice(&[12, 5, b'a']);
        assert_eq!(
            Message::parse(&b),
            Err(ParseError::Truncated {
                code: 12,
                offset: MIN_LEN
            })
        );
        assert_eq!(
            Message::parse(&good[..100]),
            Err(ParseError::TooShort { len: 100 })
        );
    }

    /// Every prefix of a valid message: no panic, and an error whenever the cut falls
    /// before the end option.
    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let good = sample().encode();
        let end = good.iter().rposition(|&b| b == option::END).unwrap();
        for len in 0..good.len() {
            let r = Message::parse(&good[..len]);
            if len <= end {
                assert!(r.is_err(), "prefix of {len} bytes parsed");
            } else {
                assert_eq!(r.unwrap(), sample());
            }
        }
    }

    /// xorshift64 (Marsaglia 2003): deterministic, so a failure reproduces.
    struct XorShift(u64);
    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    /// Random bytes, and valid messages with random bytes changed: never a panic, and
    /// whatever parses encodes to something that parses to the same message.
    #[test]
    fn random_and_mutated_input_never_panics() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let good = sample().encode();
        let mut parsed = 0;
        for round in 0..200_000 {
            let bytes: Vec<u8> = if round % 2 == 0 {
                let len = (rng.next() % 600) as usize;
                let mut b: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                // Give some of them a plausible header so the options parser runs.
                if b.len() >= MIN_LEN && round % 4 == 0 {
                    b[0] = 1;
                    b[2] = 6;
                    b[HEADER_LEN..MIN_LEN].copy_from_slice(&MAGIC_COOKIE);
                }
                b
            } else {
                let mut b = good.clone();
                for _ in 0..1 + rng.next() % 4 {
                    let at = MIN_LEN + (rng.next() as usize) % (b.len() - MIN_LEN);
                    b[at] = rng.next() as u8;
                }
                if round % 4 == 1 {
                    let cut = (rng.next() as usize) % (b.len() + 1);
                    b.truncate(cut.max(MIN_LEN));
                }
                b
            };
            if let Ok(m) = Message::parse(&bytes) {
                parsed += 1;
                assert_eq!(Message::parse(&m.encode()).as_ref(), Ok(&m));
            }
        }
        eprintln!("{parsed} of 200000 inputs parsed");
        assert!(
            parsed > 5000,
            "only {parsed} inputs parsed: the fuzz is too weak"
        );
    }
}
