//! The one rtnetlink request PID 1 needs: move an interface into another process's
//! network namespace (`ip link set IF netns PID`). Message bytes are built and the
//! acknowledgement parsed here (pure, unit-tested); [`crate::sys::move_link_to_netns`]
//! sends it. Layouts: include/uapi/linux/netlink.h, rtnetlink.h, if_link.h.

/// `RTM_NEWLINK` (rtnetlink.h): also changes an existing link.
const RTM_NEWLINK: u16 = 16;
/// `NLM_F_REQUEST | NLM_F_ACK` (netlink.h).
const FLAGS: u16 = 0x1 | 0x4;
/// `NLMSG_ERROR` (netlink.h): carries the acknowledgement, error 0 = success.
const NLMSG_ERROR: u16 = 2;
/// `IFLA_NET_NS_PID` (if_link.h).
const IFLA_NET_NS_PID: u16 = 19;

/// Length of the request: nlmsghdr (16) + ifinfomsg (16) + one u32 attribute (8).
pub const MOVE_LEN: usize = 40;

/// `RTM_NEWLINK` for interface `ifindex` with `IFLA_NET_NS_PID = pid`, native endian.
pub fn move_request(ifindex: i32, pid: u32, seq: u32) -> [u8; MOVE_LEN] {
    let mut m = [0u8; MOVE_LEN];
    m[0..4].copy_from_slice(&(MOVE_LEN as u32).to_ne_bytes());
    m[4..6].copy_from_slice(&RTM_NEWLINK.to_ne_bytes());
    m[6..8].copy_from_slice(&FLAGS.to_ne_bytes());
    m[8..12].copy_from_slice(&seq.to_ne_bytes());
    // nlmsg_pid 0: addressed to the kernel. ifinfomsg: family AF_UNSPEC, type 0.
    m[20..24].copy_from_slice(&ifindex.to_ne_bytes());
    // ifi_flags, ifi_change 0: change nothing else.
    m[32..34].copy_from_slice(&8u16.to_ne_bytes());
    m[34..36].copy_from_slice(&IFLA_NET_NS_PID.to_ne_bytes());
    m[36..40].copy_from_slice(&pid.to_ne_bytes());
    m
}

/// Reads the kernel's answer to request `seq`: `Ok(())` for an ACK, `Err(errno)` for a
/// refusal, `Err(0)`... never: a malformed answer is `Err(-1)`.
pub fn parse_ack(reply: &[u8], seq: u32) -> Result<(), i32> {
    if reply.len() < 20 {
        return Err(-1);
    }
    let u16_at = |i: usize| u16::from_ne_bytes([reply[i], reply[i + 1]]);
    let u32_at = |i: usize| u32::from_ne_bytes(reply[i..i + 4].try_into().unwrap_or([0; 4]));
    if u16_at(4) != NLMSG_ERROR || u32_at(8) != seq {
        return Err(-1);
    }
    match i32::from_ne_bytes(reply[16..20].try_into().unwrap_or([0; 4])) {
        0 => Ok(()),
        e => Err(-e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_layout() {
        let m = move_request(7, 1234, 42);
        assert_eq!(u32::from_ne_bytes(m[0..4].try_into().unwrap()), 40);
        assert_eq!(u16::from_ne_bytes([m[4], m[5]]), 16);
        assert_eq!(u16::from_ne_bytes([m[6], m[7]]), 5);
        assert_eq!(u32::from_ne_bytes(m[8..12].try_into().unwrap()), 42);
        assert_eq!(m[16], 0, "AF_UNSPEC");
        assert_eq!(i32::from_ne_bytes(m[20..24].try_into().unwrap()), 7);
        assert_eq!(u16::from_ne_bytes([m[32], m[33]]), 8);
        assert_eq!(u16::from_ne_bytes([m[34], m[35]]), 19);
        assert_eq!(u32::from_ne_bytes(m[36..40].try_into().unwrap()), 1234);
    }

    #[test]
    fn ack_and_refusal() {
        let mut r = [0u8; 36];
        r[0..4].copy_from_slice(&36u32.to_ne_bytes());
        r[4..6].copy_from_slice(&2u16.to_ne_bytes());
        r[8..12].copy_from_slice(&42u32.to_ne_bytes());
        assert_eq!(parse_ack(&r, 42), Ok(()));
        assert_eq!(parse_ack(&r, 41), Err(-1));
        r[16..20].copy_from_slice(&(-19i32).to_ne_bytes()); // ENODEV
        assert_eq!(parse_ack(&r, 42), Err(19));
        assert_eq!(parse_ack(&r[..10], 42), Err(-1));
    }
}
