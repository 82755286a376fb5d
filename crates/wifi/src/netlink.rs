//! Netlink and generic netlink framing: requests built as bytes, replies split and parsed.
//!
//! Layout (RFC 3549 §2.3.2; `include/uapi/linux/netlink.h` and `genetlink.h` of the pinned
//! 6.1 kernel, every number below checked by compiling against linux-libc-dev 6.1):
//!
//! - a message is a 16-byte `struct nlmsghdr` {len u32 (header included), type u16, flags
//!   u16, seq u32, pid u32}; messages in one datagram follow each other 4-byte aligned;
//! - a generic netlink message then has a 4-byte `struct genlmsghdr` {cmd u8, version u8,
//!   reserved u16}, then attributes;
//! - an attribute is a 4-byte `struct nlattr` {len u16 (header included, padding not),
//!   type u16} and its value, padded to 4 bytes; the type's top two bits are flags
//!   ([`NLA_F_NESTED`], [`NLA_F_NET_BYTEORDER`]), masked off by [`Attrs`];
//! - integers are in host byte order (little-endian on every board and on x86_64).
//!
//! How an exchange ends (what the socket side reads until): a dump (`NLM_F_REQUEST |
//! NLM_F_DUMP`) is answered by `NLM_F_MULTI` data messages and one `NLMSG_DONE`
//! ([`Reply::Done`], or [`Reply::Error`] when the dump failed); every other request that
//! [`crate::nl80211`] builds asks for an ack (`NLM_F_REQUEST | NLM_F_ACK`) and is answered by
//! any data messages and then one `NLMSG_ERROR` ([`Reply::Ack`] or [`Reply::Error`]).

/// `sizeof(struct nlmsghdr)`.
pub const NLMSG_HDRLEN: usize = 16;
/// `sizeof(struct genlmsghdr)`.
pub const GENL_HDRLEN: usize = 4;
/// `sizeof(struct nlattr)`.
pub const NLA_HDRLEN: usize = 4;

/// Protocol number of generic netlink sockets (`socket(AF_NETLINK, SOCK_RAW, 16)`).
pub const NETLINK_GENERIC: i32 = 16;
/// Socket option (level `SOL_NETLINK` = 270) asking for extended acks; see
/// [`ext_ack_message`].
pub const NETLINK_EXT_ACK: i32 = 11;

/// A request (always set by userspace).
pub const NLM_F_REQUEST: u16 = 0x1;
/// One of several messages of a dump; the last is `NLMSG_DONE`.
pub const NLM_F_MULTI: u16 = 0x2;
/// Ask for an ack (an `NLMSG_ERROR` with error 0) on success.
pub const NLM_F_ACK: u16 = 0x4;
/// On a dump's messages: the objects changed during the dump, it may be inconsistent
/// (worth one retry).
pub const NLM_F_DUMP_INTR: u16 = 0x10;
/// `NLM_F_ROOT | NLM_F_MATCH`: return every object.
pub const NLM_F_DUMP: u16 = 0x300;
/// On an `NLMSG_ERROR`: only the request's header is echoed, not the whole request.
pub const NLM_F_CAPPED: u16 = 0x100;
/// On an `NLMSG_ERROR`: extended-ack attributes follow the echoed request.
pub const NLM_F_ACK_TLVS: u16 = 0x200;

/// Message type: nothing.
pub const NLMSG_NOOP: u16 = 1;
/// Message type: `struct nlmsgerr` {error i32 (0 = ack, else -errno), the request's header
/// (or the whole request)}, then extended-ack attributes.
pub const NLMSG_ERROR: u16 = 2;
/// Message type: end of a dump; payload an i32 (0, or -errno when the dump failed).
pub const NLMSG_DONE: u16 = 3;
/// Message type: data lost.
pub const NLMSG_OVERRUN: u16 = 4;
/// Lowest message type of a protocol family (below are the control types above).
pub const NLMSG_MIN_TYPE: u16 = 0x10;

/// Attribute type flag: the value is itself attributes.
pub const NLA_F_NESTED: u16 = 1 << 15;
/// Attribute type flag: the value is in network byte order.
pub const NLA_F_NET_BYTEORDER: u16 = 1 << 14;
/// The attribute type without its flags.
pub const NLA_TYPE_MASK: u16 = !(NLA_F_NESTED | NLA_F_NET_BYTEORDER);

/// Extended-ack attribute: the kernel's error (or warning) text, NUL-terminated.
pub const NLMSGERR_ATTR_MSG: u16 = 1;

/// The generic netlink controller's fixed family id (`GENL_ID_CTRL` = `NLMSG_MIN_TYPE`).
pub const GENL_ID_CTRL: u16 = 0x10;
/// Controller reply command carrying a family's description.
pub const CTRL_CMD_NEWFAMILY: u8 = 1;
/// Controller command: look a family up by [`CTRL_ATTR_FAMILY_NAME`].
pub const CTRL_CMD_GETFAMILY: u8 = 3;
/// Family id, u16 (the `nlmsg_type` of the family's messages).
pub const CTRL_ATTR_FAMILY_ID: u16 = 1;
/// Family name, NUL-terminated string (`"nl80211"`).
pub const CTRL_ATTR_FAMILY_NAME: u16 = 2;
/// Family version, u32.
pub const CTRL_ATTR_VERSION: u16 = 3;
/// Multicast groups: nested, one nest per group (types 1, 2, ...) of
/// [`CTRL_ATTR_MCAST_GRP_NAME`] and [`CTRL_ATTR_MCAST_GRP_ID`].
pub const CTRL_ATTR_MCAST_GROUPS: u16 = 7;
/// In a multicast group nest: its name, NUL-terminated string (`"scan"`, `"mlme"`, ...).
pub const CTRL_ATTR_MCAST_GRP_NAME: u16 = 1;
/// In a multicast group nest: its id, u32 (for `NETLINK_ADD_MEMBERSHIP`).
pub const CTRL_ATTR_MCAST_GRP_ID: u16 = 2;

/// Rounds a length up to netlink's 4-byte alignment (`NLMSG_ALIGN`, `NLA_ALIGN`).
pub const fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// Longest attribute value: `nla_len` is a u16 and counts the 4-byte header.
const MAX_ATTR_VALUE: usize = u16::MAX as usize - NLA_HDRLEN;

/// Malformed netlink bytes (or a reply lacking what it must hold).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetlinkError {
    #[error("netlink data truncated: {need} bytes needed, {have} left")]
    Truncated { need: usize, have: usize },
    #[error("netlink message length {0} is shorter than its 16-byte header")]
    BadMessageLength(usize),
    #[error("netlink attribute length {0} is shorter than its 4-byte header")]
    BadAttrLength(usize),
    #[error("netlink attribute {ty}: {got} bytes where {want} were expected")]
    AttrSize { ty: u16, want: usize, got: usize },
    #[error("netlink attribute {ty}: the string is not UTF-8")]
    BadString { ty: u16 },
    #[error("netlink message type {kind}: its {len}-byte payload is too short")]
    ShortPayload { kind: u16, len: usize },
    #[error("unexpected netlink message type {0}")]
    UnexpectedType(u16),
    #[error("{0} missing from the reply")]
    Missing(&'static str),
}

/// `N` bytes at `at`, if there are that many.
fn arr<const N: usize>(b: &[u8], at: usize) -> Option<[u8; N]> {
    b.get(at..at.checked_add(N)?)?.try_into().ok()
}

/// Builds one netlink + generic netlink message: header, attributes, [`finish`](Self::finish).
///
/// Values longer than an attribute can be (65531 bytes) are cut to that length, and a nest
/// whose content exceeds 65535 bytes gets a wrong length; the kernel then rejects the
/// message (no request PID 1 sends comes near either).
#[derive(Debug, Clone)]
pub struct MsgBuilder {
    buf: Vec<u8>,
}

impl MsgBuilder {
    /// A message of type `family` (the family id) with the generic netlink command `cmd`
    /// and `version`. The port id is 0: the kernel fills in the sending socket's.
    pub fn new(family: u16, flags: u16, seq: u32, cmd: u8, version: u8) -> MsgBuilder {
        let mut buf = Vec::with_capacity(64);
        buf.extend_from_slice(&0u32.to_ne_bytes()); // nlmsg_len, set by finish()
        buf.extend_from_slice(&family.to_ne_bytes());
        buf.extend_from_slice(&flags.to_ne_bytes());
        buf.extend_from_slice(&seq.to_ne_bytes());
        buf.extend_from_slice(&0u32.to_ne_bytes()); // nlmsg_pid
        buf.extend_from_slice(&[cmd, version, 0, 0]);
        MsgBuilder { buf }
    }

    /// An attribute with these bytes as its value.
    pub fn bytes(mut self, attr: u16, value: &[u8]) -> MsgBuilder {
        let value = &value[..value.len().min(MAX_ATTR_VALUE)];
        let len = (NLA_HDRLEN + value.len()) as u16;
        self.buf.extend_from_slice(&len.to_ne_bytes());
        self.buf.extend_from_slice(&attr.to_ne_bytes());
        self.buf.extend_from_slice(value);
        self.buf.resize(align4(self.buf.len()), 0);
        self
    }

    pub fn u8(self, attr: u16, v: u8) -> MsgBuilder {
        self.bytes(attr, &[v])
    }

    pub fn u16(self, attr: u16, v: u16) -> MsgBuilder {
        self.bytes(attr, &v.to_ne_bytes())
    }

    pub fn u32(self, attr: u16, v: u32) -> MsgBuilder {
        self.bytes(attr, &v.to_ne_bytes())
    }

    pub fn u64(self, attr: u16, v: u64) -> MsgBuilder {
        self.bytes(attr, &v.to_ne_bytes())
    }

    /// A flag attribute: present means true, no value.
    pub fn flag(self, attr: u16) -> MsgBuilder {
        self.bytes(attr, &[])
    }

    /// A NUL-terminated string.
    pub fn str(self, attr: u16, s: &str) -> MsgBuilder {
        let mut v = Vec::with_capacity(s.len() + 1);
        v.extend_from_slice(s.as_bytes());
        v.push(0);
        self.bytes(attr, &v)
    }

    /// A nested attribute holding what `f` adds. Its type is flagged [`NLA_F_NESTED`], as the
    /// kernel's own `nla_nest_start` does since 5.2; nl80211 reads nests with or without the
    /// flag (its replies, from `nla_nest_start_noflag`, and iw's requests have none).
    pub fn nest(mut self, attr: u16, f: impl FnOnce(MsgBuilder) -> MsgBuilder) -> MsgBuilder {
        let start = self.buf.len();
        self.buf.extend_from_slice(&[0; NLA_HDRLEN]);
        let mut b = f(self);
        let len = (b.buf.len() - start).min(u16::MAX as usize) as u16;
        if let Some(h) = b.buf.get_mut(start..start + NLA_HDRLEN) {
            h[..2].copy_from_slice(&len.to_ne_bytes());
            h[2..].copy_from_slice(&(attr | NLA_F_NESTED).to_ne_bytes());
        }
        b
    }

    /// The message, with its length filled in.
    pub fn finish(mut self) -> Vec<u8> {
        let len = self.buf.len() as u32;
        self.buf[..4].copy_from_slice(&len.to_ne_bytes());
        self.buf
    }
}

/// One netlink message of a received datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    /// `nlmsg_type`: the family id for data, or `NLMSG_ERROR` / `NLMSG_DONE` / ...
    pub kind: u16,
    pub flags: u16,
    pub seq: u32,
    /// What follows the 16-byte header.
    pub payload: &'a [u8],
}

/// Splits a received datagram into its messages.
pub fn split_messages(buf: &[u8]) -> Result<Vec<Message<'_>>, NetlinkError> {
    let mut out = Vec::new();
    let mut rest = buf;
    while !rest.is_empty() {
        let truncated = |need| NetlinkError::Truncated {
            need,
            have: rest.len(),
        };
        let hdr: [u8; NLMSG_HDRLEN] = arr(rest, 0).ok_or(truncated(NLMSG_HDRLEN))?;
        let len = u32::from_ne_bytes([hdr[0], hdr[1], hdr[2], hdr[3]]) as usize;
        if len < NLMSG_HDRLEN {
            return Err(NetlinkError::BadMessageLength(len));
        }
        let msg = rest.get(..len).ok_or(truncated(len))?;
        out.push(Message {
            kind: u16::from_ne_bytes([hdr[4], hdr[5]]),
            flags: u16::from_ne_bytes([hdr[6], hdr[7]]),
            seq: u32::from_ne_bytes([hdr[8], hdr[9], hdr[10], hdr[11]]),
            payload: &msg[NLMSG_HDRLEN..],
        });
        rest = rest.get(align4(len)..).unwrap_or(&[]);
    }
    Ok(out)
}

/// What one generic netlink message says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply<'a> {
    /// A data message: its command and its attributes (read them with [`Attrs::new`] or
    /// a parser of [`crate::nl80211`]).
    Data { cmd: u8, attrs: &'a [u8] },
    /// The request succeeded (`NLMSG_ERROR` with error 0).
    Ack,
    /// End of a dump.
    Done,
    /// The request (or dump) failed with this errno (positive: 22 = EINVAL, 95 =
    /// EOPNOTSUPP, 16 = EBUSY, ...).
    Error(i32),
}

/// Reads one message as a generic netlink reply.
pub fn genl_reply<'a>(m: &Message<'a>) -> Result<Reply<'a>, NetlinkError> {
    let short = NetlinkError::ShortPayload {
        kind: m.kind,
        len: m.payload.len(),
    };
    let code = arr::<4>(m.payload, 0).map(i32::from_ne_bytes);
    match m.kind {
        NLMSG_ERROR => match code.ok_or(short)? {
            0 => Ok(Reply::Ack),
            e => Ok(Reply::Error(e.saturating_abs())),
        },
        // Older kernels sent an empty NLMSG_DONE; 6.1 sends the dump's result code.
        NLMSG_DONE => match code {
            Some(e) if e < 0 => Ok(Reply::Error(e.saturating_abs())),
            _ => Ok(Reply::Done),
        },
        kind if kind >= NLMSG_MIN_TYPE => match (m.payload.first(), m.payload.get(GENL_HDRLEN..)) {
            (Some(&cmd), Some(attrs)) => Ok(Reply::Data { cmd, attrs }),
            _ => Err(short),
        },
        kind => Err(NetlinkError::UnexpectedType(kind)),
    }
}

/// The kernel's text explaining an error (or warning on an ack), e.g. `"invalid channel"`:
/// present only when the socket enabled [`NETLINK_EXT_ACK`] and the kernel had one
/// (`netlink_ack` in `net/netlink/af_netlink.c`).
pub fn ext_ack_message<'a>(m: &Message<'a>) -> Option<&'a str> {
    if m.kind != NLMSG_ERROR || m.flags & NLM_F_ACK_TLVS == 0 {
        return None;
    }
    // struct nlmsgerr: error, then the request's header only (capped) or the whole request.
    let echoed = if m.flags & NLM_F_CAPPED != 0 {
        NLMSG_HDRLEN
    } else {
        u32::from_ne_bytes(arr(m.payload, 4)?) as usize
    };
    let tlvs = m.payload.get(4usize.checked_add(align4(echoed))?..)?;
    Attrs::new(tlvs).ok()?.get_str(NLMSGERR_ATTR_MSG).ok()?
}

/// The attributes of one message or nest: iterates `(type, value)` with the type's
/// [`NLA_F_NESTED`] / [`NLA_F_NET_BYTEORDER`] flags masked off.
///
/// [`Attrs::new`] checks every length once, so iterating cannot fail; the `get_*` helpers
/// look from the iterator's current position (the start, for a fresh one) and return the
/// first attribute of that type, `Ok(None)` when absent and an error when its size is
/// wrong. [`Attrs::default`] is an empty set.
#[derive(Debug, Clone, Copy, Default)]
pub struct Attrs<'a> {
    rest: &'a [u8],
}

impl<'a> Attrs<'a> {
    /// Checks that `buf` is a whole sequence of attributes.
    pub fn new(buf: &'a [u8]) -> Result<Attrs<'a>, NetlinkError> {
        let mut rest = buf;
        while !rest.is_empty() {
            let len = arr::<2>(rest, 0).map(u16::from_ne_bytes);
            let len = match len {
                Some(len) if rest.len() >= NLA_HDRLEN => usize::from(len),
                _ => {
                    return Err(NetlinkError::Truncated {
                        need: NLA_HDRLEN,
                        have: rest.len(),
                    })
                }
            };
            if len < NLA_HDRLEN {
                return Err(NetlinkError::BadAttrLength(len));
            }
            if len > rest.len() {
                return Err(NetlinkError::Truncated {
                    need: len,
                    have: rest.len(),
                });
            }
            rest = rest.get(align4(len)..).unwrap_or(&[]);
        }
        Ok(Attrs { rest: buf })
    }

    /// The value of the first attribute of type `ty`.
    pub fn get(&self, ty: u16) -> Option<&'a [u8]> {
        let mut it = *self;
        it.find(|&(t, _)| t == ty).map(|(_, v)| v)
    }

    /// Whether an attribute of type `ty` is present (how flags read).
    pub fn has(&self, ty: u16) -> bool {
        self.get(ty).is_some()
    }

    /// A value of exactly `N` bytes (a MAC address, a PMK, ...).
    pub fn get_array<const N: usize>(&self, ty: u16) -> Result<Option<[u8; N]>, NetlinkError> {
        match self.get(ty) {
            None => Ok(None),
            Some(v) => v.try_into().map(Some).map_err(|_| NetlinkError::AttrSize {
                ty,
                want: N,
                got: v.len(),
            }),
        }
    }

    pub fn get_u8(&self, ty: u16) -> Result<Option<u8>, NetlinkError> {
        Ok(self.get_array(ty)?.map(u8::from_ne_bytes))
    }

    pub fn get_u16(&self, ty: u16) -> Result<Option<u16>, NetlinkError> {
        Ok(self.get_array(ty)?.map(u16::from_ne_bytes))
    }

    pub fn get_u32(&self, ty: u16) -> Result<Option<u32>, NetlinkError> {
        Ok(self.get_array(ty)?.map(u32::from_ne_bytes))
    }

    pub fn get_u64(&self, ty: u16) -> Result<Option<u64>, NetlinkError> {
        Ok(self.get_array(ty)?.map(u64::from_ne_bytes))
    }

    pub fn get_i8(&self, ty: u16) -> Result<Option<i8>, NetlinkError> {
        Ok(self.get_array(ty)?.map(i8::from_ne_bytes))
    }

    pub fn get_i32(&self, ty: u16) -> Result<Option<i32>, NetlinkError> {
        Ok(self.get_array(ty)?.map(i32::from_ne_bytes))
    }

    /// A string, up to its first NUL (the kernel NUL-terminates them).
    pub fn get_str(&self, ty: u16) -> Result<Option<&'a str>, NetlinkError> {
        let Some(v) = self.get(ty) else {
            return Ok(None);
        };
        let v = v.split(|&b| b == 0).next().unwrap_or_default();
        std::str::from_utf8(v)
            .map(Some)
            .map_err(|_| NetlinkError::BadString { ty })
    }

    /// The attributes nested in the first attribute of type `ty`.
    pub fn nested(&self, ty: u16) -> Result<Option<Attrs<'a>>, NetlinkError> {
        self.get(ty).map(Attrs::new).transpose()
    }
}

impl<'a> Iterator for Attrs<'a> {
    type Item = (u16, &'a [u8]);

    fn next(&mut self) -> Option<(u16, &'a [u8])> {
        let len = usize::from(u16::from_ne_bytes(arr(self.rest, 0)?));
        let ty = u16::from_ne_bytes(arr(self.rest, 2)?) & NLA_TYPE_MASK;
        let value = self.rest.get(NLA_HDRLEN..len)?;
        self.rest = self.rest.get(align4(len)..).unwrap_or(&[]);
        Some((ty, value))
    }
}

/// The `CTRL_CMD_GETFAMILY` request for a family by name (`"nl80211"`). The reply is a
/// data message for [`parse_family`] then an ack; an unknown family (no cfg80211 in the
/// kernel) is [`Reply::Error`] 2 (ENOENT).
pub fn ctrl_get_family(name: &str, seq: u32) -> Vec<u8> {
    MsgBuilder::new(
        GENL_ID_CTRL,
        NLM_F_REQUEST | NLM_F_ACK,
        seq,
        CTRL_CMD_GETFAMILY,
        1,
    )
    .str(CTRL_ATTR_FAMILY_NAME, name)
    .finish()
}

/// A generic netlink family as the controller describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Family {
    /// The `nlmsg_type` of the family's messages (dynamic: 0x1c, 0x22, ... per boot).
    pub id: u16,
    /// Multicast groups by name and id (`("scan", 5)`, `("mlme", 7)`, ...).
    pub mcast_groups: Vec<(String, u32)>,
}

impl Family {
    /// The id of a multicast group by name.
    pub fn mcast_group(&self, name: &str) -> Option<u32> {
        self.mcast_groups
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, id)| id)
    }
}

/// Parses the attributes of the controller's `CTRL_CMD_NEWFAMILY` reply (`ctrl_fill_info`
/// in `net/netlink/genetlink.c`).
pub fn parse_family(attrs: &[u8]) -> Result<Family, NetlinkError> {
    let a = Attrs::new(attrs)?;
    let id = a
        .get_u16(CTRL_ATTR_FAMILY_ID)?
        .ok_or(NetlinkError::Missing("CTRL_ATTR_FAMILY_ID"))?;
    let mut mcast_groups = Vec::new();
    for (_, group) in a.nested(CTRL_ATTR_MCAST_GROUPS)?.unwrap_or_default() {
        let g = Attrs::new(group)?;
        if let (Some(name), Some(id)) = (
            g.get_str(CTRL_ATTR_MCAST_GRP_NAME)?,
            g.get_u32(CTRL_ATTR_MCAST_GRP_ID)?,
        ) {
            mcast_groups.push((name.to_owned(), id));
        }
    }
    Ok(Family { id, mcast_groups })
}

/// Test fixtures are hex text (`crates/wifi/src/testdata/*.hex`): `#` starts a comment,
/// whitespace is ignored.
#[cfg(test)]
pub(crate) fn hex_fixture(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(|l| l.bytes().filter(|b| !b.is_ascii_whitespace()))
        .collect();
    assert!(digits.len().is_multiple_of(2), "odd number of hex digits");
    digits
        .chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
        .collect()
}

/// A tiny xorshift generator, so the malformed-input tests need no crate.
#[cfg(test)]
pub(crate) struct XorShift(pub u64);

#[cfg(test)]
impl XorShift {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One attribute as the kernel lays it out, written independently of `MsgBuilder`.
    fn nla(ty: u16, value: &[u8]) -> Vec<u8> {
        let mut v = ((4 + value.len()) as u16).to_le_bytes().to_vec();
        v.extend_from_slice(&ty.to_le_bytes());
        v.extend_from_slice(value);
        while !v.len().is_multiple_of(4) {
            v.push(0);
        }
        v
    }

    fn nlmsg(kind: u16, flags: u16, seq: u32, payload: &[u8]) -> Vec<u8> {
        let mut v = ((16 + payload.len()) as u32).to_le_bytes().to_vec();
        v.extend_from_slice(&kind.to_le_bytes());
        v.extend_from_slice(&flags.to_le_bytes());
        v.extend_from_slice(&seq.to_le_bytes());
        v.extend_from_slice(&0u32.to_le_bytes());
        v.extend_from_slice(payload);
        while !v.len().is_multiple_of(4) {
            v.push(0);
        }
        v
    }

    #[test]
    fn builder_lays_out_header_and_padded_attributes() {
        let m = MsgBuilder::new(0x1c, NLM_F_REQUEST | NLM_F_ACK, 7, 5, 0)
            .u8(1, 0xab)
            .u16(2, 0x1234)
            .u32(3, 2)
            .u64(4, 0x0102_0304_0506_0708)
            .flag(5)
            .bytes(6, &[9, 8, 7, 6, 5])
            .str(7, "wlan0")
            .finish();
        let mut want = vec![0u8; 0];
        want.extend_from_slice(&[0, 0, 0, 0, 0x1c, 0, 5, 0, 7, 0, 0, 0, 0, 0, 0, 0]);
        want.extend_from_slice(&[5, 0, 0, 0]);
        want.extend(nla(1, &[0xab]));
        want.extend(nla(2, &[0x34, 0x12]));
        want.extend(nla(3, &[2, 0, 0, 0]));
        want.extend(nla(4, &[8, 7, 6, 5, 4, 3, 2, 1]));
        want.extend(nla(5, &[]));
        want.extend(nla(6, &[9, 8, 7, 6, 5]));
        want.extend(nla(7, b"wlan0\0"));
        let len = want.len() as u32;
        want[..4].copy_from_slice(&len.to_le_bytes());
        assert_eq!(m, want);
        assert_eq!(m.len() % 4, 0);

        let msgs = split_messages(&m).unwrap();
        assert_eq!(msgs.len(), 1);
        assert_eq!((msgs[0].kind, msgs[0].flags, msgs[0].seq), (0x1c, 5, 7));
        let Reply::Data { cmd, attrs } = genl_reply(&msgs[0]).unwrap() else {
            panic!("not data")
        };
        assert_eq!(cmd, 5);
        let a = Attrs::new(attrs).unwrap();
        assert_eq!(a.get_u8(1), Ok(Some(0xab)));
        assert_eq!(a.get_u16(2), Ok(Some(0x1234)));
        assert_eq!(a.get_u32(3), Ok(Some(2)));
        assert_eq!(a.get_u64(4), Ok(Some(0x0102_0304_0506_0708)));
        assert!(a.has(5));
        assert_eq!(a.get(6), Some(&[9, 8, 7, 6, 5][..]));
        assert_eq!(a.get_str(7), Ok(Some("wlan0")));
        assert_eq!(a.get_u32(99), Ok(None));
        assert_eq!(
            a.get_u32(1),
            Err(NetlinkError::AttrSize {
                ty: 1,
                want: 4,
                got: 1
            })
        );
        let types: Vec<u16> = a.map(|(t, _)| t).collect();
        assert_eq!(types, [1, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn nests_are_flagged_and_sized_and_read_back() {
        let m = MsgBuilder::new(0x1c, NLM_F_REQUEST, 1, 33, 0)
            .u32(3, 4)
            .nest(44, |b| b.u32(1, 2412).u32(2, 2437))
            .nest(45, |b| b.bytes(1, b"").nest(2, |b| b.u8(9, 1)))
            .finish();
        // The first nest's header: length 4 + 2 * 8, type 44 | NLA_F_NESTED.
        assert_eq!(&m[28..32], &[20, 0, 44, 0x80]);
        let msgs = split_messages(&m).unwrap();
        let Reply::Data { attrs, .. } = genl_reply(&msgs[0]).unwrap() else {
            panic!("not data")
        };
        let a = Attrs::new(attrs).unwrap();
        let freqs: Vec<u32> = a
            .nested(44)
            .unwrap()
            .unwrap()
            .map(|(_, v)| u32::from_le_bytes(v.try_into().unwrap()))
            .collect();
        assert_eq!(freqs, [2412, 2437]);
        let ssids = a.nested(45).unwrap().unwrap();
        assert_eq!(ssids.get(1), Some(&[][..]));
        assert_eq!(ssids.nested(2).unwrap().unwrap().get_u8(9), Ok(Some(1)));
    }

    #[test]
    fn acks_errors_and_done_read_as_replies() {
        // netlink_ack (net/netlink/af_netlink.c): error, then the request's header.
        let req = MsgBuilder::new(0x1c, NLM_F_REQUEST | NLM_F_ACK, 9, 46, 0).finish();
        let mut ack = 0i32.to_le_bytes().to_vec();
        ack.extend_from_slice(&req[..16]);
        let mut err = (-22i32).to_le_bytes().to_vec();
        err.extend_from_slice(&req);
        let mut buf = nlmsg(NLMSG_ERROR, NLM_F_CAPPED, 9, &ack);
        buf.extend(nlmsg(NLMSG_ERROR, 0, 9, &err));
        buf.extend(nlmsg(NLMSG_DONE, NLM_F_MULTI, 9, &0i32.to_le_bytes()));
        buf.extend(nlmsg(NLMSG_DONE, NLM_F_MULTI, 9, &(-16i32).to_le_bytes()));
        buf.extend(nlmsg(NLMSG_DONE, NLM_F_MULTI, 9, &[]));
        let replies: Vec<Reply> = split_messages(&buf)
            .unwrap()
            .iter()
            .map(|m| genl_reply(m).unwrap())
            .collect();
        assert_eq!(
            replies,
            [
                Reply::Ack,
                Reply::Error(22),
                Reply::Done,
                Reply::Error(16),
                Reply::Done
            ]
        );
        let noop = nlmsg(NLMSG_NOOP, 0, 0, &[]);
        let m = split_messages(&noop).unwrap();
        assert_eq!(genl_reply(&m[0]), Err(NetlinkError::UnexpectedType(1)));
        let short = nlmsg(0x1c, 0, 0, &[5, 0]);
        let m = split_messages(&short).unwrap();
        assert!(matches!(
            genl_reply(&m[0]),
            Err(NetlinkError::ShortPayload { .. })
        ));
    }

    #[test]
    fn extended_ack_text_is_found_after_the_echoed_request() {
        let req = MsgBuilder::new(0x1c, NLM_F_REQUEST | NLM_F_ACK, 3, 15, 0)
            .u32(3, 4)
            .str(52, "bench")
            .finish();
        let mut full = (-22i32).to_le_bytes().to_vec();
        full.extend_from_slice(&req);
        full.extend(nla(NLMSGERR_ATTR_MSG, b"invalid channel\0"));
        let mut capped = (-22i32).to_le_bytes().to_vec();
        capped.extend_from_slice(&req[..16]);
        capped.extend(nla(NLMSGERR_ATTR_MSG, b"capped\0"));
        let mut buf = nlmsg(NLMSG_ERROR, NLM_F_ACK_TLVS, 3, &full);
        buf.extend(nlmsg(
            NLMSG_ERROR,
            NLM_F_ACK_TLVS | NLM_F_CAPPED,
            3,
            &capped,
        ));
        buf.extend(nlmsg(NLMSG_ERROR, 0, 3, &full));
        let m = split_messages(&buf).unwrap();
        assert_eq!(ext_ack_message(&m[0]), Some("invalid channel"));
        assert_eq!(ext_ack_message(&m[1]), Some("capped"));
        assert_eq!(ext_ack_message(&m[2]), None);
        assert_eq!(genl_reply(&m[0]), Ok(Reply::Error(22)));
    }

    #[test]
    fn real_kernel_events_split_and_read() {
        // Two nl80211 events as the kernel sent them (nlmsghdr included), captured with
        // nlmon by rust-netlink/wl-nl80211 (src/tests/event.rs @32ccce3b,
        // test_captured_connect_result_event / test_captured_disconnect_event).
        let mut buf = hex_fixture(include_str!("testdata/event_connect.hex"));
        buf.extend(hex_fixture(include_str!("testdata/event_disconnect.hex")));
        let msgs = split_messages(&buf).unwrap();
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[0].kind, 0x32);
        let Reply::Data { cmd, attrs } = genl_reply(&msgs[0]).unwrap() else {
            panic!("not data")
        };
        assert_eq!(cmd, 46); // NL80211_CMD_CONNECT
        let a = Attrs::new(attrs).unwrap();
        assert_eq!(a.get_u32(3), Ok(Some(467))); // NL80211_ATTR_IFINDEX
        assert_eq!(a.get_array::<6>(6), Ok(Some([2, 0, 0, 0, 1, 0]))); // NL80211_ATTR_MAC
        assert_eq!(a.get_u16(72), Ok(Some(0))); // NL80211_ATTR_STATUS_CODE
        let Reply::Data { cmd, attrs } = genl_reply(&msgs[1]).unwrap() else {
            panic!("not data")
        };
        assert_eq!(cmd, 48); // NL80211_CMD_DISCONNECT
        assert_eq!(Attrs::new(attrs).unwrap().get_u16(54), Ok(Some(3))); // REASON_CODE
    }

    #[test]
    fn family_request_and_reply() {
        let req = ctrl_get_family("nl80211", 1);
        let msgs = split_messages(&req).unwrap();
        assert_eq!(msgs[0].kind, GENL_ID_CTRL);
        assert_eq!(msgs[0].flags, NLM_F_REQUEST | NLM_F_ACK);
        let Reply::Data { cmd, attrs } = genl_reply(&msgs[0]).unwrap() else {
            panic!("not data")
        };
        assert_eq!(cmd, CTRL_CMD_GETFAMILY);
        assert_eq!(
            Attrs::new(attrs).unwrap().get_str(CTRL_ATTR_FAMILY_NAME),
            Ok(Some("nl80211"))
        );
        // Hand-assembled as ctrl_fill_info (net/netlink/genetlink.c, 6.1) writes it: name,
        // id, version, header size, max attribute, (ops, left out), then the groups,
        // nests numbered from 1 holding the id before the name.
        let group = |i: u16, id: u32, name: &str| {
            let mut name = name.as_bytes().to_vec();
            name.push(0);
            let mut g = nla(CTRL_ATTR_MCAST_GRP_ID, &id.to_le_bytes());
            g.extend(nla(CTRL_ATTR_MCAST_GRP_NAME, &name));
            nla(i, &g)
        };
        let mut groups = group(1, 5, "config");
        groups.extend(group(2, 6, "scan"));
        groups.extend(group(3, 7, "regulatory"));
        groups.extend(group(4, 8, "mlme"));
        groups.extend(group(5, 9, "vendor"));
        groups.extend(group(6, 10, "nan"));
        let mut payload = vec![CTRL_CMD_NEWFAMILY, 2, 0, 0];
        payload.extend(nla(CTRL_ATTR_FAMILY_NAME, b"nl80211\0"));
        payload.extend(nla(CTRL_ATTR_FAMILY_ID, &0x1cu16.to_le_bytes()));
        payload.extend(nla(CTRL_ATTR_VERSION, &1u32.to_le_bytes()));
        payload.extend(nla(4, &0u32.to_le_bytes()));
        payload.extend(nla(5, &330u32.to_le_bytes()));
        payload.extend(nla(CTRL_ATTR_MCAST_GROUPS, &groups));
        let mut reply = nlmsg(GENL_ID_CTRL, 0, 1, &payload);
        let mut ack = 0i32.to_le_bytes().to_vec();
        ack.extend_from_slice(&req[..16]);
        reply.extend(nlmsg(NLMSG_ERROR, NLM_F_CAPPED, 1, &ack));
        let msgs = split_messages(&reply).unwrap();
        let Reply::Data { cmd, attrs } = genl_reply(&msgs[0]).unwrap() else {
            panic!("not data")
        };
        assert_eq!(cmd, CTRL_CMD_NEWFAMILY);
        let f = parse_family(attrs).unwrap();
        assert_eq!(f.id, 0x1c);
        assert_eq!(f.mcast_groups.len(), 6);
        assert_eq!(f.mcast_group("scan"), Some(6));
        assert_eq!(f.mcast_group("mlme"), Some(8));
        assert_eq!(f.mcast_group("testmode"), None);
        assert_eq!(genl_reply(&msgs[1]), Ok(Reply::Ack));
        assert_eq!(
            parse_family(&nla(CTRL_ATTR_FAMILY_NAME, b"x\0")),
            Err(NetlinkError::Missing("CTRL_ATTR_FAMILY_ID"))
        );
    }

    #[test]
    fn malformed_lengths_are_errors() {
        let good = MsgBuilder::new(0x1c, 0, 1, 5, 0).u32(3, 2).finish();
        assert!(matches!(
            split_messages(&good[..10]),
            Err(NetlinkError::Truncated { need: 16, .. })
        ));
        assert!(matches!(
            split_messages(&good[..20]),
            Err(NetlinkError::Truncated { need: 28, .. })
        ));
        let mut tiny = good.clone();
        tiny[..4].copy_from_slice(&8u32.to_le_bytes());
        assert_eq!(
            split_messages(&tiny),
            Err(NetlinkError::BadMessageLength(8))
        );
        let mut trailing = good.clone();
        trailing.extend_from_slice(&[1, 2, 3]);
        assert!(split_messages(&trailing).is_err());
        assert!(matches!(
            Attrs::new(&[8, 0, 3, 0, 1]),
            Err(NetlinkError::Truncated { need: 8, have: 5 })
        ));
        assert_eq!(
            Attrs::new(&[2, 0, 3, 0]).unwrap_err(),
            NetlinkError::BadAttrLength(2)
        );
        assert!(matches!(
            Attrs::new(&[8, 0]),
            Err(NetlinkError::Truncated { need: 4, have: 2 })
        ));
        assert_eq!(
            Attrs::new(&nla(7, b"\xff\xfe\0")).unwrap().get_str(7),
            Err(NetlinkError::BadString { ty: 7 })
        );
        // The last attribute may come without its padding.
        let a = Attrs::new(&[5, 0, 1, 0, 42]).unwrap();
        assert_eq!(a.get_u8(1), Ok(Some(42)));
        // Flags are masked off the type.
        let flagged = nla(NLA_F_NESTED | NLA_F_NET_BYTEORDER | 9, &[]);
        assert!(Attrs::new(&flagged).unwrap().has(9));
    }

    #[test]
    fn random_and_truncated_bytes_never_panic() {
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        let valid = MsgBuilder::new(0x1c, NLM_F_REQUEST, 1, 5, 0)
            .u32(3, 2)
            .nest(44, |b| b.u32(1, 2412).nest(2, |b| b.str(1, "x")))
            .str(4, "wlan0")
            .finish();
        let mut inputs: Vec<Vec<u8>> = (0..=valid.len()).map(|n| valid[..n].to_vec()).collect();
        for _ in 0..2000 {
            let n = (rng.next() % 96) as usize;
            inputs.push(rng.bytes(n));
            // Valid framing with random bits flipped.
            let mut v = valid.clone();
            let i = (rng.next() as usize) % v.len();
            v[i] ^= rng.next() as u8;
            inputs.push(v);
        }
        for input in &inputs {
            exercise(input);
        }
    }

    /// Runs every reader over some bytes, recursing into anything that parses as a nest.
    fn exercise(input: &[u8]) {
        if let Ok(msgs) = split_messages(input) {
            for m in &msgs {
                let _ = ext_ack_message(m);
                if let Ok(Reply::Data { attrs, .. }) = genl_reply(m) {
                    walk(attrs, 0);
                    let _ = parse_family(attrs);
                }
            }
        }
        walk(input, 0);
    }

    fn walk(buf: &[u8], depth: usize) {
        let Ok(a) = Attrs::new(buf) else { return };
        for (ty, v) in a {
            let _ = (a.get_u8(ty), a.get_u16(ty), a.get_u32(ty), a.get_u64(ty));
            let _ = (a.get_i8(ty), a.get_i32(ty), a.get_str(ty));
            if depth < 4 {
                walk(v, depth + 1);
            }
        }
    }
}
