//! The UDP engine, like `iperf3 -u`: a sender paced to an offered load and a receiver
//! that counts datagrams by sequence number.
//!
//! Every datagram is `datagram_bytes` long and starts with a [`HEADER`]-byte header,
//! big-endian: the 64-bit sequence number, then the sender's send time in ns since the
//! run's start on its own monotonic clock; the rest is filler. The receiver's counts are
//! the run's figures (as iperf3 reports the receiver side):
//!
//! - received: datagrams counted (duplicates are not counted again);
//! - lost: highest sequence number + 1 - received, never negative (datagrams lost at
//!   the very end of a run are not known to the receiver, as in iperf3);
//! - out of order: datagrams that arrived after one with a higher sequence number;
//! - jitter: RFC 3550 §6.4.1 interarrival jitter, `J += (|D| - J) / 16`, where `D` is the
//!   difference of the transit times (arrival time - send time) of consecutive
//!   arrivals. The two clocks need not agree: only differences of transit times count.
//!
//! Warm-up (`omit`, as `iperf3 -O`): datagrams whose send time is before `omit_ns` are
//! sent and ignored by the receiver. Sequence numbers start at 0 again with the first
//! datagram sent at or after `omit_ns`, so the measured ones are numbered 0, 1, 2, ...
//! and "sent" is the number of those.
//!
//! The receiver keeps a window of the last [`WINDOW`] sequence numbers to tell
//! duplicates from late arrivals; a datagram older than that is not counted (so it
//! counts as lost). Datagrams of the wrong length, from another source or with a
//! sequence number far beyond what the run can send are junk and ignored.
//!
//! Pacing: datagram `k` is due `k * datagram_bytes * 8 / bitrate` s after the start. The
//! sender sleeps while it is ahead and sends what is due when it is behind, but never
//! more than [`MAX_BURST`] behind: a sender that cannot keep up moves its schedule on
//! (its offered load drops) rather than bunching datagrams.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::thread;
use std::time::{Duration, Instant};

use benchboot_results::network::CpuTimes;
use serde::{Deserialize, Serialize};

use crate::interval::Timing;
use crate::{procstat, Context, NetError};

/// Header bytes: sequence number (u64) and send time, ns (u64), big-endian.
pub const HEADER: usize = 16;

/// Largest datagram payload, bytes: the largest IPv4 UDP payload (65535 - 20 - 8).
pub const MAX_DATAGRAM: u32 = 65507;

/// Sequence numbers the receiver remembers behind the highest one (duplicate check).
pub const WINDOW: u64 = 1 << 16;

/// Longest the sender may lag behind its schedule before it moves it on, ns (5 ms:
/// a few scheduler time slices). iperf3 catches up on any lag (its rate is averaged
/// over the whole run), which can bunch a long stall's datagrams into one burst; here
/// a stall longer than this lowers the offered load instead, and `sent` shows it.
pub const MAX_BURST: u64 = 5_000_000;

/// The receiver's read timeout: how often it looks at its clock when nothing arrives.
pub const POLL: Duration = Duration::from_millis(20);

/// After its window closed, the receiver keeps reading until nothing has come for
/// this long (datagrams in flight, a sender whose clock started later).
pub const IDLE_END: Duration = Duration::from_millis(100);

/// ... but never longer than this past the window's end.
pub const MAX_TAIL: Duration = Duration::from_secs(2);

/// How long a sender may go without one successful send before the run fails.
pub const SEND_STALL: Duration = Duration::from_secs(1);

/// Each send may block this long at most (a full socket buffer).
pub const SEND_TIMEOUT: Duration = Duration::from_millis(500);

/// Magic of the board's hello datagram (see [`hello`]).
pub const HELLO_MAGIC: &[u8; 10] = b"BBUDPHELLO";

/// Bytes of a hello datagram: magic, session id (u64), test id (u64), big-endian.
pub const HELLO_LEN: usize = HELLO_MAGIC.len() + 16;

/// What the receiver counted over the measured span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Counts {
    /// Datagrams received, duplicates not counted again.
    pub received: u64,
    /// Highest sequence number + 1 - received, never negative.
    pub lost: u64,
    /// Datagrams that arrived after one with a higher sequence number.
    pub out_of_order: u64,
    /// Payload bytes of the received datagrams.
    pub bytes: u64,
    /// RFC 3550 §6.4.1 interarrival jitter at the end of the run, ns.
    pub jitter_ns: u64,
}

/// Writes the header into the first [`HEADER`] bytes of `buf`.
pub fn put_header(buf: &mut [u8], seq: u64, send_ns: u64) {
    buf[..8].copy_from_slice(&seq.to_be_bytes());
    buf[8..16].copy_from_slice(&send_ns.to_be_bytes());
}

/// `(sequence number, send time ns)` of a datagram; `None` when shorter than [`HEADER`].
pub fn header(buf: &[u8]) -> Option<(u64, u64)> {
    let seq = u64::from_be_bytes(buf.get(..8)?.try_into().ok()?);
    let ns = u64::from_be_bytes(buf.get(8..16)?.try_into().ok()?);
    Some((seq, ns))
}

/// The hello datagram the board sends from its UDP socket to the peer's before a run,
/// so that the peer learns the address and port it comes from (as a NAT maps them), as
/// iperf3's UDP client does.
pub fn hello(session: u64, test: u64) -> [u8; HELLO_LEN] {
    let mut b = [0u8; HELLO_LEN];
    b[..10].copy_from_slice(HELLO_MAGIC);
    b[10..18].copy_from_slice(&session.to_be_bytes());
    b[18..26].copy_from_slice(&test.to_be_bytes());
    b
}

/// `(session, test)` of a hello datagram; `None` for anything else.
pub fn parse_hello(buf: &[u8]) -> Option<(u64, u64)> {
    if buf.len() != HELLO_LEN || !buf.starts_with(HELLO_MAGIC) {
        return None;
    }
    let session = u64::from_be_bytes(buf[10..18].try_into().ok()?);
    let test = u64::from_be_bytes(buf[18..26].try_into().ok()?);
    Some((session, test))
}

/// Refuses loads this engine cannot offer.
pub fn check(bitrate: u64, datagram_bytes: u32) -> Result<(), NetError> {
    if bitrate == 0 {
        return Err(NetError::Invalid(
            "udp bitrate must be above 0 bit/s".into(),
        ));
    }
    if !(HEADER as u32..=MAX_DATAGRAM).contains(&datagram_bytes) {
        return Err(NetError::Invalid(format!(
            "udp datagram must be {HEADER} ..= {MAX_DATAGRAM} bytes, not {datagram_bytes}"
        )));
    }
    Ok(())
}

/// Datagrams a sender paced to `bitrate` (bit/s) sends in `span_ns`, rounded up.
pub fn datagrams_in(span_ns: u64, bitrate: u64, datagram_bytes: u32) -> u64 {
    let bits = u128::from(span_ns) * u128::from(bitrate);
    let per = u128::from(datagram_bytes) * 8 * 1_000_000_000;
    u64::try_from(bits.div_ceil(per.max(1))).unwrap_or(u64::MAX)
}

/// The sender's schedule: when datagram `k` is due, ns since the start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pacer {
    bits_ns: u128,
    bitrate: u128,
    /// How far the schedule was moved on because the sender fell behind, ns.
    slip_ns: u64,
}

impl Pacer {
    pub fn new(bitrate: u64, datagram_bytes: u32) -> Pacer {
        Pacer {
            bits_ns: u128::from(datagram_bytes) * 8 * 1_000_000_000,
            bitrate: u128::from(bitrate.max(1)),
            slip_ns: 0,
        }
    }

    /// Datagram `k`'s due time, ns since the start.
    pub fn due(&self, k: u64) -> u64 {
        let at = u128::from(k) * self.bits_ns / self.bitrate;
        u64::try_from(at)
            .unwrap_or(u64::MAX)
            .saturating_add(self.slip_ns)
    }

    /// At `now_ns`, with datagram `k` next: how long to sleep (`Some`) or send now
    /// (`None`). Moves the schedule on when `k` is more than [`MAX_BURST`] overdue.
    pub fn wait(&mut self, k: u64, now_ns: u64) -> Option<u64> {
        let due = self.due(k);
        if due > now_ns {
            return Some(due - now_ns);
        }
        let late = now_ns - due;
        if late > MAX_BURST {
            self.slip_ns += late - MAX_BURST;
        }
        None
    }
}

/// The receiver's counting of one run, fed one datagram at a time (pure: no clock,
/// no socket).
#[derive(Debug, Clone)]
pub struct Tally {
    omit_ns: u64,
    max_seq: u64,
    /// Bit `s % WINDOW` is set when sequence number `s` (within the window) came.
    seen: Vec<u64>,
    highest: Option<u64>,
    counts: Counts,
    last_transit: Option<i128>,
    jitter: f64,
}

impl Tally {
    /// Datagrams sent before `omit_ns` are warm-up; sequence numbers above `max_seq`
    /// are junk.
    pub fn new(omit_ns: u64, max_seq: u64) -> Tally {
        Tally {
            omit_ns,
            max_seq,
            seen: vec![0; (WINDOW / 64) as usize],
            highest: None,
            counts: Counts::default(),
            last_transit: None,
            jitter: 0.0,
        }
    }

    fn bit(&mut self, seq: u64) -> (&mut u64, u64) {
        let i = seq % WINDOW;
        (&mut self.seen[(i / 64) as usize], 1 << (i % 64))
    }

    /// One datagram of `len` payload bytes: its header and its arrival time (ns on the
    /// receiver's clock). True when it counted (not warm-up, junk, a duplicate or too
    /// late for the window).
    pub fn record(&mut self, seq: u64, send_ns: u64, arrival_ns: u64, len: usize) -> bool {
        if send_ns < self.omit_ns || seq > self.max_seq {
            return false;
        }
        match self.highest {
            Some(h) if seq <= h => {
                if h - seq >= WINDOW {
                    return false; // too old to tell from a duplicate: counts as lost
                }
                let (word, mask) = self.bit(seq);
                if *word & mask != 0 {
                    return false; // duplicate
                }
                *word |= mask;
                self.counts.out_of_order += 1;
            }
            h => {
                // New highest: forget the sequence numbers the window slides past.
                let from = h.map_or(0, |h| h + 1);
                if seq - from >= WINDOW {
                    self.seen.iter_mut().for_each(|w| *w = 0);
                } else {
                    for s in from..seq {
                        let (word, mask) = self.bit(s);
                        *word &= !mask;
                    }
                }
                let (word, mask) = self.bit(seq);
                *word |= mask;
                self.highest = Some(seq);
            }
        }
        self.counts.received += 1;
        self.counts.bytes += len as u64;
        // RFC 3550 §6.4.1, in ns instead of RTP timestamp units.
        let transit = i128::from(arrival_ns) - i128::from(send_ns);
        if let Some(last) = self.last_transit {
            let d = (transit - last).unsigned_abs() as f64;
            self.jitter += (d - self.jitter) / 16.0;
        }
        self.last_transit = Some(transit);
        true
    }

    pub fn counts(&self) -> Counts {
        let mut c = self.counts;
        c.lost = self
            .highest
            .map_or(0, |h| (h + 1).saturating_sub(c.received));
        c.jitter_ns = self.jitter.round() as u64;
        c
    }
}

/// What a sender did: measured datagrams sent and its CPU over the measured span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sent {
    pub sent: u64,
    pub cpu: CpuTimes,
}

/// Sends `datagram_bytes`-byte datagrams from `sock` to `to`, paced to `bitrate` bit/s,
/// for `t.omit_ns + t.duration_ns` after `start`. CPU is read at the first measured
/// datagram and at the end.
pub fn send(
    sock: &UdpSocket,
    to: SocketAddr,
    start: Instant,
    t: &Timing,
    bitrate: u64,
    datagram_bytes: u32,
    cpu: &mut procstat::Reader,
) -> Result<Sent, NetError> {
    check(bitrate, datagram_bytes)?;
    sock.set_write_timeout(Some(SEND_TIMEOUT))
        .ctx("udp: socket options")?;
    let mut buf = crate::tcp::pattern(datagram_bytes as usize);
    let end = t.omit_ns.saturating_add(t.duration_ns);
    let mut pacer = Pacer::new(bitrate, datagram_bytes);
    let mut before = None;
    let mut first_measured: Option<u64> = None;
    let mut k = 0u64;
    // Since when sends have been failing (no clock read per datagram when they work).
    let mut failing: Option<Instant> = None;
    loop {
        let now = start.elapsed().as_nanos() as u64;
        if now >= end {
            break;
        }
        if let Some(ahead) = pacer.wait(k, now) {
            thread::sleep(Duration::from_nanos(ahead.min(end - now)));
            continue;
        }
        let seq = if now >= t.omit_ns {
            let first = *first_measured.get_or_insert_with(|| {
                before = Some(cpu.read());
                k
            });
            k - first
        } else {
            k
        };
        put_header(&mut buf, seq, now);
        match sock.send_to(&buf, to) {
            Ok(_) => {
                k += 1;
                failing = None;
            }
            // A full buffer (ENOBUFS, a send timeout) or an ICMP error from an earlier
            // datagram: this one was not sent; try it again, for a while.
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                if failing.get_or_insert_with(Instant::now).elapsed() > SEND_STALL {
                    return Err(NetError::io(format!("udp: sending to {to}"), e));
                }
                thread::sleep(Duration::from_micros(200));
            }
        }
    }
    let after = cpu.read();
    let sent = first_measured.map_or(0, |f| k - f);
    Ok(Sent {
        sent,
        cpu: before.map_or_else(CpuTimes::default, |b| procstat::delta(&b, &after)),
    })
}

/// Receives the datagrams `from` sends (paced to `bitrate`, `datagram_bytes` each) on
/// `sock` until `t.omit_ns + t.duration_ns` after `start` and then until nothing came
/// for [`IDLE_END`] (at most [`MAX_TAIL`] longer). Returns the counts and the CPU from
/// the end of the warm-up to the end of the window, by this end's clock.
pub fn receive(
    sock: &UdpSocket,
    from: SocketAddr,
    start: Instant,
    t: &Timing,
    bitrate: u64,
    datagram_bytes: u32,
    cpu: &mut procstat::Reader,
) -> Result<(Counts, CpuTimes), NetError> {
    check(bitrate, datagram_bytes)?;
    sock.set_read_timeout(Some(POLL))
        .ctx("udp: socket options")?;
    let len = datagram_bytes as usize;
    // One byte more than a datagram: a longer one shows as longer (and is junk).
    let mut buf = vec![0u8; len + 1];
    // A sender can send no more than its schedule allows, plus one burst.
    let max_seq = datagrams_in(t.duration_ns + MAX_BURST, bitrate, datagram_bytes) + 1024;
    let mut tally = Tally::new(t.omit_ns, max_seq);
    let end = t.omit_ns.saturating_add(t.duration_ns);
    let (idle, tail) = (IDLE_END.as_nanos() as u64, MAX_TAIL.as_nanos() as u64);
    let mut before = (t.omit_ns == 0).then(|| cpu.read());
    let mut after = None;
    let mut last_arrival = 0u64;
    loop {
        let got = sock.recv_from(&mut buf);
        let now = start.elapsed().as_nanos() as u64;
        if before.is_none() && now >= t.omit_ns {
            before = Some(cpu.read());
        }
        if after.is_none() && now >= end {
            after = Some(cpu.read());
        }
        match got {
            Ok((n, src)) if n == len && src == from => {
                last_arrival = now;
                if let Some((seq, send_ns)) = header(&buf[..n]) {
                    tally.record(seq, send_ns, now, n);
                }
            }
            Ok(_) => {} // junk: another source, another length
            Err(e) if crate::quiet_receive(&e) => {}
            Err(e) => return Err(NetError::io("udp: receiving", e)),
        }
        if now >= end && (now.saturating_sub(last_arrival) >= idle || now >= end + tail) {
            break;
        }
    }
    let after = after.unwrap_or_else(|| cpu.read());
    let cpu = before.map_or_else(CpuTimes::default, |b| procstat::delta(&b, &after));
    Ok((tally.counts(), cpu))
}

/// Reads and drops whatever waits on `sock` (announcements, datagrams of an earlier
/// run), without blocking.
pub fn drain(sock: &UdpSocket) {
    if sock.set_nonblocking(true).is_err() {
        return;
    }
    let mut b = [0u8; 2048];
    for _ in 0..100_000 {
        if sock.recv_from(&mut b).is_err() {
            break;
        }
    }
    let _ = sock.set_nonblocking(false);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_is_big_endian_sequence_then_send_time() {
        let mut b = [0xAAu8; 20];
        put_header(&mut b, 0x0102_0304_0506_0708, 0x1112_1314_1516_1718);
        assert_eq!(
            b[..16],
            [1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18]
        );
        assert_eq!(b[16], 0xAA);
        assert_eq!(
            header(&b),
            Some((0x0102_0304_0506_0708, 0x1112_1314_1516_1718))
        );
        assert_eq!(header(&b[..15]), None);
    }

    #[test]
    fn hellos_round_trip_and_nothing_else_is_one() {
        let h = hello(7, 9);
        assert_eq!(h.len(), 26);
        assert_eq!(parse_hello(&h), Some((7, 9)));
        assert_eq!(parse_hello(&h[..25]), None);
        let mut data = [0u8; 26];
        put_header(&mut data, 0, 5);
        assert_eq!(parse_hello(&data), None);
    }

    #[test]
    fn in_order_datagrams_count_without_loss() {
        let mut t = Tally::new(0, 1000);
        for s in 0..10 {
            assert!(t.record(s, s * 100, s * 100 + 50, 1448));
        }
        let c = t.counts();
        assert_eq!(
            c,
            Counts {
                received: 10,
                lost: 0,
                out_of_order: 0,
                bytes: 14480,
                jitter_ns: 0
            }
        );
    }

    #[test]
    fn gaps_are_lost_until_filled_and_duplicates_are_ignored() {
        let mut t = Tally::new(0, 1000);
        for s in [0, 1, 4, 5] {
            t.record(s, 0, 0, 100);
        }
        assert_eq!(t.counts().lost, 2); // 2 and 3
        assert!(t.record(2, 0, 0, 100)); // late: out of order
        assert!(!t.record(2, 0, 0, 100)); // again: duplicate
        assert!(!t.record(5, 0, 0, 100)); // duplicate of the highest
        let c = t.counts();
        assert_eq!(
            (c.received, c.lost, c.out_of_order, c.bytes),
            (5, 1, 1, 500)
        );
    }

    #[test]
    fn warm_up_junk_and_too_old_datagrams_do_not_count() {
        let mut t = Tally::new(1_000, 10 * WINDOW);
        assert!(!t.record(0, 999, 0, 8)); // sent during the warm-up
        assert!(!t.record(10 * WINDOW + 1, 5_000, 0, 8)); // beyond what the run sends
        assert!(t.record(0, 1_000, 0, 8));
        assert!(t.record(WINDOW + 5, 2_000, 0, 8));
        // 5 is more than WINDOW behind the highest: not counted (stays lost).
        assert!(!t.record(5, 1_500, 0, 8));
        // The window slid past 10..WINDOW+5 with nothing seen: a late one counts once.
        assert!(t.record(WINDOW, 1_600, 0, 8));
        assert!(!t.record(WINDOW, 1_600, 0, 8));
        let c = t.counts();
        assert_eq!(c.received, 3);
        assert_eq!(c.lost, WINDOW + 6 - 3);
        assert_eq!(c.out_of_order, 1);
    }

    #[test]
    fn a_window_that_slides_by_less_than_its_size_forgets_what_it_passes() {
        let mut t = Tally::new(0, u64::MAX);
        assert!(t.record(3, 0, 0, 1));
        // 3 + WINDOW reuses bit 3: it must read as unseen for 3 + WINDOW, and 3 is now
        // exactly WINDOW behind (too old).
        assert!(t.record(3 + WINDOW, 0, 0, 1));
        assert!(!t.record(3, 0, 0, 1));
        assert!(t.record(2 + WINDOW, 0, 0, 1)); // slid past unseen: counts, late
        assert_eq!(t.counts().out_of_order, 1);
    }

    #[test]
    fn jitter_follows_rfc_3550() {
        // Transit times 100, 300, 200, 200 ns: D = 200, 100, 0.
        let mut t = Tally::new(0, 100);
        let arrivals = [
            (0, 0, 100),
            (1, 1000, 1300),
            (2, 2000, 2200),
            (3, 3000, 3200),
        ];
        for (s, sent, arrived) in arrivals {
            t.record(s, sent, arrived, 16);
        }
        let mut j = 0.0f64;
        for d in [200.0, 100.0, 0.0] {
            j += (d - j) / 16.0;
        }
        assert_eq!(t.counts().jitter_ns, j.round() as u64);
        assert_eq!(t.counts().jitter_ns, 17); // 12.5, 17.97, 16.85
    }

    #[test]
    fn a_constant_clock_offset_is_no_jitter() {
        // The receiver's clock is a second ahead: transit is 1 s + 10 µs each time.
        let mut t = Tally::new(0, 100);
        for s in 0..50u64 {
            let sent = s * 10_000;
            t.record(s, sent, sent + 1_000_010_000, 16);
        }
        assert_eq!(t.counts().jitter_ns, 0);
    }

    #[test]
    fn the_schedule_spaces_datagrams_by_their_bits() {
        // 1448 B at 100 Mbit/s: 1448 * 8 / 1e8 s = 115.84 µs apart.
        let p = Pacer::new(100_000_000, 1448);
        assert_eq!(p.due(0), 0);
        assert_eq!(p.due(1), 115_840);
        assert_eq!(p.due(1000), 115_840_000);
        assert_eq!(datagrams_in(1_000_000_000, 100_000_000, 1448), 8633); // 8632.6..
        assert_eq!(datagrams_in(0, 100_000_000, 1448), 0);
    }

    #[test]
    fn a_sender_that_falls_behind_bunches_at_most_a_burst() {
        let mut p = Pacer::new(100_000_000, 1448);
        assert_eq!(p.wait(10, 1_000_000), Some(158_400)); // due at 1.1584 ms
                                                          // 10 ms late for datagram 1: send now, and the schedule moves on by 8 ms.
        assert_eq!(p.wait(1, 10_115_840), None);
        assert_eq!(p.due(1), 10_115_840 - MAX_BURST);
        // So at most MAX_BURST of datagrams are overdue at once.
        let overdue = (1..).take_while(|&k| p.due(k) <= 10_115_840).count() as u64;
        assert_eq!(overdue, MAX_BURST / 115_840 + 1);
    }

    #[test]
    fn loads_out_of_range_are_refused() {
        assert!(check(0, 1448).is_err());
        assert!(check(1, 15).is_err());
        assert!(check(1, 65508).is_err());
        assert!(check(1, 16).is_ok());
        assert!(check(u64::MAX, 65507).is_ok());
    }
}
