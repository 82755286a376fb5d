//! The VideoCore firmware's mailbox property interface, as far as board health needs
//! it: one-tag messages, encoded and decoded here (pure); [`crate::sys::vcio_property`]
//! hands them to the firmware through `/dev/vcio`.
//!
//! Layout (raspberrypi/firmware wiki, "Mailbox property interface"; Linux
//! `include/soc/bcm2835/raspberrypi-firmware.h`): a message is 32-bit words in host
//! byte order,
//!
//! ```text
//! u32 total size in bytes (header, tags and end tag)
//! u32 request code 0x00000000 / response code 0x80000000 (success), 0x80000001 (error)
//! tag: u32 id, u32 value buffer size in bytes, u32 request code (bit 31 clear) /
//!      response code (bit 31 set, bits 30-0 the response length), value buffer
//! u32 end tag 0
//! ```
//!
//! The firmware overwrites the value buffer with its answer; a tag it does not know is
//! left without bit 31 ("unknown tags are ignored (the response bit will not be set)").
//!
//! `/dev/vcio` exists only with the Raspberry Pi kernel's `vcio` driver
//! (drivers/char/broadcom/vcio.c in raspberrypi/linux): Debian's kernels do not build
//! it, so there the firmware's measured clocks and flags are unavailable and
//! [`crate::health`] says so.

use std::fmt;

/// Buffer request code (wiki: "0x00000000: process request").
pub const STATUS_REQUEST: u32 = 0x0000_0000;
/// Buffer response code: request successful (`RPI_FIRMWARE_STATUS_SUCCESS`).
pub const STATUS_SUCCESS: u32 = 0x8000_0000;
/// Buffer response code: error parsing the request buffer (`RPI_FIRMWARE_STATUS_ERROR`).
pub const STATUS_ERROR: u32 = 0x8000_0001;
/// Bit 31 of a tag's request/response word: set by the firmware when it answered.
pub const TAG_RESPONSE: u32 = 1 << 31;
/// The end tag (`RPI_FIRMWARE_PROPERTY_END`).
pub const PROPERTY_END: u32 = 0;

/// `RPI_FIRMWARE_GET_CLOCK_RATE`: request clock id; response clock id, rate in Hz (0:
/// no such clock).
pub const GET_CLOCK_RATE: u32 = 0x0003_0002;
/// `RPI_FIRMWARE_GET_TEMPERATURE`: request id 0; response id, thousandths of a degree C.
pub const GET_TEMPERATURE: u32 = 0x0003_0006;
/// `RPI_FIRMWARE_GET_THROTTLED`: request a reset mask (0 resets nothing; Linux's
/// raspberrypi-hwmon sends 0xffff to clear the sticky bits); response the flag word
/// of `vcgencmd get_throttled` (decoded by [`benchboot_results::Throttled`]).
pub const GET_THROTTLED: u32 = 0x0003_0046;
/// `RPI_FIRMWARE_GET_CLOCK_MEASURED` ("get clock rate measured"): request clock id;
/// response clock id, the measured rate in Hz.
pub const GET_CLOCK_RATE_MEASURED: u32 = 0x0003_0047;

/// Clock id of the ARM (`RPI_FIRMWARE_ARM_CLK_ID`).
pub const CLOCK_ARM: u32 = 3;
/// Clock id of the VideoCore core (`RPI_FIRMWARE_CORE_CLK_ID`).
pub const CLOCK_CORE: u32 = 4;

/// `IOCTL_MBOX_PROPERTY` = `_IOWR(100, 0, char *)` (vcio.c) for a pointer of
/// `pointer_bytes` bytes, by the generic ioctl layout that ARM and arm64 use
/// (include/uapi/asm-generic/ioctl.h: nr bits 0-7, type 8-15, size 16-29, direction
/// 30-31 with read = 2, write = 1).
pub const fn mbox_property_ioctl(pointer_bytes: u32) -> u32 {
    const READ_WRITE: u32 = 2 | 1;
    (READ_WRITE << 30) | (pointer_bytes << 16) | (100 << 8)
}

/// One question to the firmware.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Property {
    /// The rate the firmware set for a clock (`GET_CLOCK_RATE`).
    ClockRate(u32),
    /// The rate the firmware measures for a clock (`GET_CLOCK_RATE_MEASURED`).
    ClockRateMeasured(u32),
    /// The SoC temperature (`GET_TEMPERATURE`, id 0).
    Temperature,
    /// The throttle flags (`GET_THROTTLED`), without resetting the sticky bits.
    Throttled,
}

impl Property {
    /// The tag id.
    pub fn tag(self) -> u32 {
        match self {
            Property::ClockRate(_) => GET_CLOCK_RATE,
            Property::ClockRateMeasured(_) => GET_CLOCK_RATE_MEASURED,
            Property::Temperature => GET_TEMPERATURE,
            Property::Throttled => GET_THROTTLED,
        }
    }

    /// How the results name it as a source, e.g. `mailbox:GET_CLOCK_RATE_MEASURED(ARM)`.
    pub fn source(self) -> String {
        let clock = |id: u32| match id {
            CLOCK_ARM => "ARM".to_owned(),
            CLOCK_CORE => "CORE".to_owned(),
            other => other.to_string(),
        };
        match self {
            Property::ClockRate(id) => format!("mailbox:GET_CLOCK_RATE({})", clock(id)),
            Property::ClockRateMeasured(id) => {
                format!("mailbox:GET_CLOCK_RATE_MEASURED({})", clock(id))
            }
            Property::Temperature => "mailbox:GET_TEMPERATURE".into(),
            Property::Throttled => "mailbox:GET_THROTTLED".into(),
        }
    }

    /// The value buffer as sent: big enough for the response (8 bytes for the clock
    /// and temperature tags, 4 for the flags).
    fn request_value(self) -> Vec<u32> {
        match self {
            Property::ClockRate(id) | Property::ClockRateMeasured(id) => vec![id, 0],
            Property::Temperature => vec![0, 0],
            Property::Throttled => vec![0],
        }
    }

    /// Bytes the response value must have.
    fn response_len(self) -> usize {
        match self {
            Property::Throttled => 4,
            _ => 8,
        }
    }
}

/// The whole message for `p`, as words: size, request code, one tag, end tag.
pub fn encode(p: Property) -> Vec<u32> {
    let value = p.request_value();
    let words = 2 + 3 + value.len() + 1;
    let mut m = Vec::with_capacity(words);
    m.push((words * 4) as u32);
    m.push(STATUS_REQUEST);
    m.push(p.tag());
    m.push((value.len() * 4) as u32);
    m.push(0); // tag request code: bit 31 clear, the rest reserved
    m.extend(value);
    m.push(PROPERTY_END);
    m
}

/// Words as the bytes the firmware reads (host byte order).
pub fn to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_ne_bytes()).collect()
}

/// Bytes (host byte order) as words; a trailing partial word is dropped.
pub fn from_bytes(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Why a response gives no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailboxError {
    /// The buffer ends before the word the response needs.
    Truncated {
        needed_words: usize,
        got_words: usize,
    },
    /// Buffer response code 0x80000001: the firmware could not parse the request.
    Firmware,
    /// A buffer code that is neither success nor error (e.g. the request came back
    /// unprocessed).
    Status(u32),
    /// The first tag is not the one asked.
    WrongTag { expected: u32, found: u32 },
    /// Bit 31 of the tag's response word is clear: the firmware ignored the tag.
    NotAnswered { tag: u32 },
    /// The response value is shorter than the tag's documented response.
    ShortValue {
        tag: u32,
        expected: usize,
        got: usize,
    },
    /// The response names another clock or sensor than the one asked.
    WrongId { expected: u32, found: u32 },
    /// `GET_CLOCK_RATE*` answered 0 Hz: "the clock does not exist".
    NoSuchClock(u32),
}

impl fmt::Display for MailboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated {
                needed_words,
                got_words,
            } => write!(
                f,
                "response truncated: {got_words} word(s), {needed_words} needed"
            ),
            Self::Firmware => write!(
                f,
                "the firmware answered 0x80000001 (error parsing the request)"
            ),
            Self::Status(s) => write!(f, "unexpected buffer response code {s:#010x}"),
            Self::WrongTag { expected, found } => {
                write!(f, "response tag {found:#010x}, asked {expected:#010x}")
            }
            Self::NotAnswered { tag } => {
                write!(
                    f,
                    "the firmware did not answer tag {tag:#010x} (unknown to it)"
                )
            }
            Self::ShortValue { tag, expected, got } => write!(
                f,
                "tag {tag:#010x}: response value of {got} byte(s), {expected} expected"
            ),
            Self::WrongId { expected, found } => {
                write!(f, "response for id {found}, asked {expected}")
            }
            Self::NoSuchClock(id) => write!(f, "clock {id} does not exist (rate 0)"),
        }
    }
}

impl std::error::Error for MailboxError {}

/// The answer to `p` in `response` (the message [`encode`] made, after the firmware
/// wrote to it): a rate in Hz, thousandths of a degree C, or the flag word.
///
/// # Errors
/// Any [`MailboxError`]; a short buffer is an error, never a panic.
pub fn decode(p: Property, response: &[u32]) -> Result<u32, MailboxError> {
    let word = |i: usize| {
        response.get(i).copied().ok_or(MailboxError::Truncated {
            needed_words: i + 1,
            got_words: response.len(),
        })
    };
    match word(1)? {
        STATUS_SUCCESS => {}
        STATUS_ERROR => return Err(MailboxError::Firmware),
        other => return Err(MailboxError::Status(other)),
    }
    let tag = word(2)?;
    if tag != p.tag() {
        return Err(MailboxError::WrongTag {
            expected: p.tag(),
            found: tag,
        });
    }
    let code = word(4)?;
    if code & TAG_RESPONSE == 0 {
        return Err(MailboxError::NotAnswered { tag });
    }
    let len = (code & !TAG_RESPONSE) as usize;
    if len < p.response_len() {
        return Err(MailboxError::ShortValue {
            tag,
            expected: p.response_len(),
            got: len,
        });
    }
    match p {
        Property::Throttled => word(5),
        Property::ClockRate(id) | Property::ClockRateMeasured(id) => {
            let (found, rate) = (word(5)?, word(6)?);
            if found != id {
                return Err(MailboxError::WrongId {
                    expected: id,
                    found,
                });
            }
            if rate == 0 {
                return Err(MailboxError::NoSuchClock(id));
            }
            Ok(rate)
        }
        Property::Temperature => {
            let (found, value) = (word(5)?, word(6)?);
            if found != 0 {
                return Err(MailboxError::WrongId { expected: 0, found });
            }
            Ok(value)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the firmware would write back: success, the response bit and length, the
    /// value.
    fn answer(p: Property, value: &[u32]) -> Vec<u32> {
        let mut m = encode(p);
        m[1] = STATUS_SUCCESS;
        m[4] = TAG_RESPONSE | p.response_len() as u32;
        m[5..5 + value.len()].copy_from_slice(value);
        m
    }

    #[test]
    fn get_throttled_message_is_the_documented_layout() {
        let m = encode(Property::Throttled);
        assert_eq!(
            m,
            [
                28,          // total size: 7 words
                0x0000_0000, // request
                0x0003_0046, // GET_THROTTLED
                4,           // value buffer size
                0,           // tag request code
                0,           // value: reset mask 0 (keep the sticky bits)
                0,           // end tag
            ]
        );
        // Host byte order; the boards and this x86_64 host are little-endian.
        #[cfg(target_endian = "little")]
        assert_eq!(
            to_bytes(&m),
            [
                0x1c, 0, 0, 0, 0, 0, 0, 0, 0x46, 0x00, 0x03, 0x00, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 0, 0,
            ]
        );
        assert_eq!(from_bytes(&to_bytes(&m)), m);
    }

    #[test]
    fn get_clock_rate_measured_arm_message_is_the_documented_layout() {
        let m = encode(Property::ClockRateMeasured(CLOCK_ARM));
        assert_eq!(
            m,
            [
                32,          // total size: 8 words
                0x0000_0000, // request
                0x0003_0047, // GET_CLOCK_RATE_MEASURED
                8,           // value buffer: clock id + rate
                0,           // tag request code
                3,           // clock id: ARM
                0,           // room for the rate
                0,           // end tag
            ]
        );
        #[cfg(target_endian = "little")]
        assert_eq!(
            to_bytes(&m),
            [
                0x20, 0, 0, 0, 0, 0, 0, 0, 0x47, 0x00, 0x03, 0x00, 8, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0,
                0, 0, 0, 0, 0, 0, 0, 0, 0,
            ]
        );
        assert_eq!(
            encode(Property::ClockRate(CLOCK_CORE))[2..6],
            [0x0003_0002, 8, 0, 4]
        );
        assert_eq!(
            encode(Property::Temperature)[2..7],
            [0x0003_0006, 8, 0, 0, 0]
        );
    }

    #[test]
    fn successful_responses_decode() {
        let p = Property::ClockRateMeasured(CLOCK_ARM);
        assert_eq!(decode(p, &answer(p, &[3, 999_999_000])), Ok(999_999_000));
        let p = Property::Throttled;
        assert_eq!(decode(p, &answer(p, &[0x50005])), Ok(0x50005));
        let p = Property::Temperature;
        assert_eq!(decode(p, &answer(p, &[0, 48_312])), Ok(48_312));
        // The same through bytes.
        let p = Property::ClockRate(CLOCK_CORE);
        let bytes = to_bytes(&answer(p, &[4, 400_000_000]));
        assert_eq!(decode(p, &from_bytes(&bytes)), Ok(400_000_000));
    }

    #[test]
    fn error_codes_and_unanswered_tags_are_errors() {
        let p = Property::Throttled;
        let mut m = answer(p, &[5]);
        m[1] = STATUS_ERROR;
        assert_eq!(decode(p, &m), Err(MailboxError::Firmware));
        // Sent back untouched: still the request code.
        assert_eq!(decode(p, &encode(p)), Err(MailboxError::Status(0)));
        // Success overall, but the firmware ignored the tag.
        let mut m = encode(p);
        m[1] = STATUS_SUCCESS;
        assert_eq!(
            decode(p, &m),
            Err(MailboxError::NotAnswered { tag: GET_THROTTLED })
        );
        // Answer for another tag, clock or a missing clock.
        let q = Property::ClockRateMeasured(CLOCK_ARM);
        assert_eq!(
            decode(p, &answer(q, &[3, 1])),
            Err(MailboxError::WrongTag {
                expected: GET_THROTTLED,
                found: GET_CLOCK_RATE_MEASURED
            })
        );
        assert_eq!(
            decode(q, &answer(q, &[4, 1])),
            Err(MailboxError::WrongId {
                expected: 3,
                found: 4
            })
        );
        assert_eq!(
            decode(q, &answer(q, &[3, 0])),
            Err(MailboxError::NoSuchClock(3))
        );
        // A response length below the documented one.
        let mut m = answer(q, &[3, 1]);
        m[4] = TAG_RESPONSE | 4;
        assert!(matches!(
            decode(q, &m),
            Err(MailboxError::ShortValue {
                expected: 8,
                got: 4,
                ..
            })
        ));
        assert!(MailboxError::Firmware.to_string().contains("0x80000001"));
    }

    #[test]
    fn short_buffers_are_errors_not_panics() {
        let p = Property::ClockRateMeasured(CLOCK_ARM);
        let full = answer(p, &[3, 700_000_000]);
        for n in 0..7 {
            let got = decode(p, &full[..n]);
            assert!(
                matches!(got, Err(MailboxError::Truncated { got_words, .. }) if got_words == n),
                "{n} words: {got:?}"
            );
        }
        assert_eq!(decode(p, &full[..7]), Ok(700_000_000));
        // A partial trailing word is dropped, not read.
        assert_eq!(from_bytes(&[1, 0, 0, 0, 9, 9]), [1]);
        assert_eq!(
            decode(Property::Throttled, &[]),
            Err(MailboxError::Truncated {
                needed_words: 2,
                got_words: 0
            })
        );
    }

    #[test]
    fn ioctl_number_is_iowr_100_0_char_pointer() {
        // 32-bit ARM (and a 32-bit process's compat ioctl) and arm64.
        assert_eq!(mbox_property_ioctl(4), 0xC004_6400);
        assert_eq!(mbox_property_ioctl(8), 0xC008_6400);
        // Cross-check with libc's _IOWR on this host.
        assert_eq!(
            libc::_IOWR::<*mut libc::c_char>(100, 0) as u32,
            mbox_property_ioctl(std::mem::size_of::<*mut libc::c_char>() as u32)
        );
    }
}
