//! A TCP socket's kernel state, as `ss -ti` and iperf3 read it: Linux's
//! `getsockopt(IPPROTO_TCP, TCP_INFO)` (tcp(7); `struct tcp_info` in
//! linux/include/uapi/linux/tcp.h).
//!
//! - [`decode`] takes the raw bytes the kernel wrote and picks the fields by their
//!   offsets in `struct tcp_info` (native byte order); pure and unit-tested.
//! - [`read`] is the only I/O: one `getsockopt` into a byte buffer, in `sys.rs`, the only
//!   module allowed `unsafe_code` (rustix 1.1, socket2 0.6 and nix 0.29/0.31 have no
//!   getter for `TCP_INFO`). Where the kernel has none (macOS, Windows) it gives `None`.

#![deny(unsafe_code)]

#[cfg(any(target_os = "linux", target_os = "android"))]
#[allow(unsafe_code)]
mod sys;

/// The fields of `struct tcp_info` the network tests report, as the kernel gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TcpInfo {
    /// `tcpi_total_retrans`: segments retransmitted over the connection's life.
    pub total_retrans: u32,
    /// `tcpi_snd_cwnd`: the congestion window, segments.
    pub snd_cwnd: u32,
    /// `tcpi_snd_mss`: the sender's MSS, bytes.
    pub snd_mss: u32,
    /// `tcpi_rtt`: the smoothed round-trip time (srtt), µs.
    pub rtt_us: u32,
    /// `tcpi_rttvar`: the RTT's mean deviation, µs.
    pub rttvar_us: u32,
    /// `tcpi_rcv_rtt`: the receiver's RTT estimate, µs (0 until it has one).
    pub rcv_rtt_us: u32,
}

impl TcpInfo {
    /// The congestion window in bytes: `tcpi_snd_cwnd × tcpi_snd_mss`.
    pub fn cwnd_bytes(&self) -> u64 {
        u64::from(self.snd_cwnd) * u64::from(self.snd_mss)
    }
}

/// Byte offsets of the fields in `struct tcp_info` (linux/include/uapi/linux/tcp.h:
/// eight `__u8` then `__u32`s in declaration order; unchanged since Linux 2.6).
mod offset {
    pub const SND_MSS: usize = 16;
    pub const RTT: usize = 68;
    pub const RTTVAR: usize = 72;
    pub const SND_CWND: usize = 80;
    pub const RCV_RTT: usize = 92;
    pub const TOTAL_RETRANS: usize = 100;
}

/// Fewest bytes [`decode`] needs: through `tcpi_total_retrans` (104, what Linux 2.6.x
/// already filled).
pub const MIN_LEN: usize = offset::TOTAL_RETRANS + 4;

/// The fields from the bytes the kernel wrote (`len` of them, native byte order);
/// `None` when it wrote fewer than [`MIN_LEN`].
pub fn decode(bytes: &[u8]) -> Option<TcpInfo> {
    if bytes.len() < MIN_LEN {
        return None;
    }
    let u32_at = |at: usize| {
        let mut b = [0u8; 4];
        b.copy_from_slice(&bytes[at..at + 4]);
        u32::from_ne_bytes(b)
    };
    Some(TcpInfo {
        total_retrans: u32_at(offset::TOTAL_RETRANS),
        snd_cwnd: u32_at(offset::SND_CWND),
        snd_mss: u32_at(offset::SND_MSS),
        rtt_us: u32_at(offset::RTT),
        rttvar_us: u32_at(offset::RTTVAR),
        rcv_rtt_us: u32_at(offset::RCV_RTT),
    })
}

/// `getsockopt(fd, IPPROTO_TCP, TCP_INFO)` of a TCP socket, decoded. `None` where the
/// kernel has no `TCP_INFO` of this layout (every OS but Linux), when the call fails
/// (not a TCP socket, closed), or when it wrote fewer than [`MIN_LEN`] bytes.
#[cfg(unix)]
pub fn read(fd: std::os::fd::BorrowedFd<'_>) -> Option<TcpInfo> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let mut buf = [0u8; 256];
        let len = sys::tcp_info(fd, &mut buf).ok()?;
        decode(&buf[..len.min(buf.len())])
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = fd;
        None
    }
}

/// [`read`] of a `std` TCP stream; `None` on every OS but Linux.
pub fn of_stream(s: &std::net::TcpStream) -> Option<TcpInfo> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        read(s.as_fd())
    }
    #[cfg(not(unix))]
    {
        let _ = s;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(buf: &mut [u8], at: usize, v: u32) {
        buf[at..at + 4].copy_from_slice(&v.to_ne_bytes());
    }

    #[test]
    fn fields_come_from_their_offsets() {
        let mut b = vec![0xffu8; 232];
        put(&mut b, 16, 1448);
        put(&mut b, 68, 2500);
        put(&mut b, 72, 300);
        put(&mut b, 80, 10);
        put(&mut b, 92, 4000);
        put(&mut b, 100, 7);
        let i = decode(&b).unwrap();
        assert_eq!(
            i,
            TcpInfo {
                total_retrans: 7,
                snd_cwnd: 10,
                snd_mss: 1448,
                rtt_us: 2500,
                rttvar_us: 300,
                rcv_rtt_us: 4000,
            }
        );
        assert_eq!(i.cwnd_bytes(), 14_480);
    }

    #[test]
    fn a_short_answer_is_none() {
        assert_eq!(decode(&[0u8; MIN_LEN - 1]), None);
        assert!(decode(&[0u8; MIN_LEN]).is_some());
        assert_eq!(decode(&[]), None);
    }

    #[test]
    fn a_huge_window_does_not_overflow() {
        let i = TcpInfo {
            snd_cwnd: u32::MAX,
            snd_mss: u32::MAX,
            ..TcpInfo::default()
        };
        assert_eq!(i.cwnd_bytes(), u64::from(u32::MAX) * u64::from(u32::MAX));
    }

    /// A real connection on loopback: the kernel answers, with a window and an MSS.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn a_loopback_socket_has_a_window() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let a = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let i = of_stream(&a).expect("TCP_INFO on Linux");
        assert!(i.snd_cwnd > 0 && i.snd_mss > 0, "{i:?}");
        // A listener is no connection but still a TCP socket; a UDP socket is none.
        let u = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        use std::os::fd::AsFd;
        assert_eq!(read(u.as_fd()), None);
    }
}
