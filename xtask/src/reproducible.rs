//! Reproducible images: the same board built twice from the same lock file gives a
//! byte-identical image (and manifest).
//!
//! Everything an image build would otherwise take from the clock, a random source or
//! the user running it is fixed, in one place:
//!
//! - **Time**: [`source_date_epoch`], `SOURCE_DATE_EPOCH` when set (the
//!   reproducible-builds.org convention), else [`DEFAULT_EPOCH`]. FAT directory entries
//!   get it through a fixed [`fatfs::TimeProvider`] ([`Stamp::fat_clock`]); mke2fs through
//!   `E2FSPROGS_FAKE_TIME` (superblock and inode times: e2fsprogs 1.47.0 reads that
//!   variable in libext2fs and ignores `SOURCE_DATE_EPOCH`). The initramfs cpio carries
//!   mtime 0 (see [`crate::initramfs::build`]), the gzip header no time.
//! - **Identifiers**: FAT volume ids, ext UUIDs and ext directory hash seeds come from
//!   [`seed`]: SHA-256 over the lock file's bytes, the board name and what is seeded
//!   (the partition number and the field), so a changed lock (say, a new kernel) gives
//!   new identifiers and the same lock the same ones. The MBR disk signature is
//!   the board's and the layout's ([`benchboot_image::layout::disk_signature`]).
//! - **Owner and order**: the ext root directory belongs to 0:0 whoever runs mke2fs;
//!   FAT files and initramfs entries are written in the order [`crate::image`] gives
//!   them, which is itself fixed (board file order, sorted module index).
//!
//! What this does not cover: another host's tools. A different e2fsprogs version or
//! `/etc/mke2fs.conf` (default features), or a host whose `char` is unsigned (the ext
//! superblock then says `unsigned_directory_hash`), gives a different, equally
//! reproducible, image.

use std::sync::{Mutex, PoisonError};

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

use crate::packages::LOCK_FILE;

/// The image time when `SOURCE_DATE_EPOCH` is not set: 2024-01-01T00:00:00Z.
pub const DEFAULT_EPOCH: u64 = 1_704_067_200;

/// Seconds since 1970-01-01T00:00:00Z that every timestamp of an image carries:
/// `SOURCE_DATE_EPOCH` (<https://reproducible-builds.org/specs/source-date-epoch/>) when
/// set and not empty, else [`DEFAULT_EPOCH`].
///
/// # Errors
/// When `SOURCE_DATE_EPOCH` is not a non-negative decimal integer (the specification
/// asks tools to fail rather than guess).
pub fn source_date_epoch() -> Result<u64> {
    parse_epoch(std::env::var("SOURCE_DATE_EPOCH").ok().as_deref())
}

fn parse_epoch(value: Option<&str>) -> Result<u64> {
    match value.map(str::trim) {
        None | Some("") => Ok(DEFAULT_EPOCH),
        Some(v) => match v.parse::<u64>() {
            Ok(t) if v.bytes().all(|b| b.is_ascii_digit()) => Ok(t),
            _ => bail!(
                "SOURCE_DATE_EPOCH={v:?} is not a number of seconds since 1970 (as `date +%s` prints)"
            ),
        },
    }
}

/// The 16 bytes every identifier of an image is cut from: the first half of
/// SHA-256(domain ‖ SHA-256(`lock_bytes`) ‖ length of `board` ‖ `board` ‖ `what`).
/// `lock_bytes` is the lock file as stored (`boards/packages.lock.toml`); `what` names
/// the field and its partition, e.g. `p5 ext uuid`.
pub fn seed(board: &str, lock_bytes: &[u8], what: &str) -> [u8; 16] {
    let mut h = Sha256::new();
    h.update(b"benchboot image seed v1\0");
    h.update(Sha256::digest(lock_bytes));
    h.update((board.len() as u64).to_le_bytes());
    h.update(board.as_bytes());
    h.update(what.as_bytes());
    let digest = h.finalize();
    let mut out = [0u8; 16];
    out.copy_from_slice(&digest[..16]);
    out
}

/// What one image build is stamped with: the seed inputs (board and lock file) and the
/// time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    pub board: String,
    /// The lock file's bytes.
    pub lock: Vec<u8>,
    /// Seconds since 1970 (UTC).
    pub epoch: u64,
}

impl Stamp {
    pub fn new(board: &str, lock: &[u8], epoch: u64) -> Stamp {
        Stamp {
            board: board.to_owned(),
            lock: lock.to_vec(),
            epoch,
        }
    }

    /// `board` built from the repository's lock file at [`source_date_epoch`].
    ///
    /// # Errors
    /// An unreadable lock file or a malformed `SOURCE_DATE_EPOCH`.
    pub fn for_board(board: &str) -> Result<Stamp> {
        let path = crate::repo_root().join(LOCK_FILE);
        let lock = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        Ok(Stamp::new(board, &lock, source_date_epoch()?))
    }

    fn seed(&self, what: &str) -> [u8; 16] {
        seed(&self.board, &self.lock, what)
    }

    /// The volume id (serial number) of the FAT filesystem on partition `part`.
    pub fn fat_volume_id(&self, part: u8) -> u32 {
        let s = self.seed(&format!("p{part} fat volume id"));
        u32::from_le_bytes([s[0], s[1], s[2], s[3]])
    }

    /// The filesystem UUID of the ext2/3/4 filesystem on partition `part` (`mke2fs -U`).
    pub fn ext_uuid(&self, part: u8) -> String {
        uuid(self.seed(&format!("p{part} ext uuid")))
    }

    /// The directory hash seed of the ext2/3/4 filesystem on partition `part`
    /// (`mke2fs -E hash_seed=`).
    pub fn ext_hash_seed(&self, part: u8) -> String {
        uuid(self.seed(&format!("p{part} ext hash seed")))
    }

    /// A FAT clock stopped at [`Stamp::epoch`] (UTC, clamped to what FAT can hold:
    /// 1980-01-01 to 2107-12-31).
    pub fn fat_clock(&self) -> &'static dyn fatfs::TimeProvider {
        fat_clock(self.epoch)
    }
}

/// Formats 16 bytes as an RFC 9562 version 8 (custom) UUID: version and variant bits
/// set, the rest from `b`.
pub fn uuid(mut b: [u8; 16]) -> String {
    b[6] = (b[6] & 0x0f) | 0x80;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// A [`fatfs::TimeProvider`] that always answers the same time.
#[derive(Debug)]
struct FixedFatTime {
    epoch: u64,
    at: fatfs::DateTime,
}

impl fatfs::TimeProvider for FixedFatTime {
    fn get_current_date(&self) -> fatfs::Date {
        self.at.date
    }
    fn get_current_date_time(&self) -> fatfs::DateTime {
        self.at
    }
}

/// fatfs wants a `&'static` provider: one is made (and kept) per distinct epoch.
fn fat_clock(epoch: u64) -> &'static FixedFatTime {
    static CLOCKS: Mutex<Vec<&'static FixedFatTime>> = Mutex::new(Vec::new());
    let mut clocks = CLOCKS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(c) = clocks.iter().find(|c| c.epoch == epoch) {
        return c;
    }
    let c: &'static FixedFatTime = Box::leak(Box::new(FixedFatTime {
        epoch,
        at: fat_date_time(epoch),
    }));
    clocks.push(c);
    c
}

/// `epoch` as a FAT date and time (UTC), clamped to 1980-01-01 00:00:00 ..
/// 2107-12-31 23:59:59.
pub fn fat_date_time(epoch: u64) -> fatfs::DateTime {
    const FAT_MIN: u64 = 315_532_800; // 1980-01-01T00:00:00Z
    const FAT_MAX: u64 = 4_354_819_199; // 2107-12-31T23:59:59Z
    let t = epoch.clamp(FAT_MIN, FAT_MAX);
    let (year, month, day) = civil_from_days(t / 86_400);
    let secs = t % 86_400;
    // Every value below fits a u16: the year is at most 2107, the rest smaller.
    let u = |v: u64| u16::try_from(v).unwrap_or(u16::MAX);
    fatfs::DateTime {
        date: fatfs::Date {
            year: u(year),
            month: u(month),
            day: u(day),
        },
        time: fatfs::Time {
            hour: u(secs / 3600),
            min: u(secs / 60 % 60),
            sec: u(secs % 60),
            millis: 0,
        },
    }
}

/// (year, month 1-12, day 1-31) of day `days` after 1970-01-01 (proleptic Gregorian;
/// Howard Hinnant's `civil_from_days`, for non-negative days).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_depends_on_lock_board_and_what_and_nothing_else() {
        let a = seed("rpi-zero-w", b"lock 1", "p5 ext uuid");
        assert_eq!(a, seed("rpi-zero-w", b"lock 1", "p5 ext uuid"));
        assert_ne!(a, seed("rpi-zero-w", b"lock 2", "p5 ext uuid"));
        assert_ne!(a, seed("qemu-virt-arm64", b"lock 1", "p5 ext uuid"));
        assert_ne!(a, seed("rpi-zero-w", b"lock 1", "p6 ext uuid"));
        assert_ne!(a, seed("rpi-zero-w", b"lock 1", "p5 ext hash seed"));
        // The board name is length-prefixed: moving bytes between board and what
        // changes the seed.
        assert_ne!(seed("ab", b"", "c"), seed("a", b"", "bc"));
        // Pinned, so a change of the derivation (and of every image id) is deliberate.
        let hex: String = seed("rpi-zero-w", b"", "p1 fat volume id")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(hex, PINNED_SEED, "the seed derivation changed");
    }

    /// seed("rpi-zero-w", b"", "p1 fat volume id"), computed independently (Python hashlib).
    const PINNED_SEED: &str = "2c85f01aeb2d079f8c9937b56eea29ad";

    #[test]
    fn stamp_ids_differ_per_partition_and_field() {
        let s = Stamp::new("rpi-zero-w", b"lock", DEFAULT_EPOCH);
        assert_ne!(s.fat_volume_id(1), s.fat_volume_id(2));
        assert_ne!(s.ext_uuid(5), s.ext_uuid(6));
        assert_ne!(s.ext_uuid(5), s.ext_hash_seed(5));
        let other = Stamp::new("rpi-zero-w", b"lock, changed", DEFAULT_EPOCH);
        assert_ne!(s.fat_volume_id(1), other.fat_volume_id(1));
        assert_ne!(s.ext_uuid(5), other.ext_uuid(5));
    }

    #[test]
    fn uuid_is_version_8_rfc_variant() {
        let u = uuid([0xff; 16]);
        assert_eq!(u, "ffffffff-ffff-8fff-bfff-ffffffffffff");
        let u = uuid([0; 16]);
        assert_eq!(u, "00000000-0000-8000-8000-000000000000");
    }

    #[test]
    fn epoch_from_the_environment_value() {
        assert_eq!(parse_epoch(None).unwrap(), DEFAULT_EPOCH);
        assert_eq!(parse_epoch(Some("")).unwrap(), DEFAULT_EPOCH);
        assert_eq!(parse_epoch(Some("1700000000")).unwrap(), 1_700_000_000);
        assert_eq!(parse_epoch(Some("1700000000\n")).unwrap(), 1_700_000_000);
        for bad in ["-1", "+5", "1.5", "yesterday", "0x10"] {
            let err = parse_epoch(Some(bad)).unwrap_err().to_string();
            assert!(err.contains("SOURCE_DATE_EPOCH"), "{bad}: {err}");
        }
    }

    #[test]
    fn fat_dates_in_utc_and_clamped() {
        let dt = |y, mo, d, h, mi, s| fatfs::DateTime {
            date: fatfs::Date {
                year: y,
                month: mo,
                day: d,
            },
            time: fatfs::Time {
                hour: h,
                min: mi,
                sec: s,
                millis: 0,
            },
        };
        assert_eq!(fat_date_time(DEFAULT_EPOCH), dt(2024, 1, 1, 0, 0, 0));
        // `date -u -d @1709251199`: Thu Feb 29 23:59:59 UTC 2024 (a leap day).
        assert_eq!(fat_date_time(1_709_251_199), dt(2024, 2, 29, 23, 59, 59));
        // `date -u -d @951782400`: Tue Feb 29 00:00:00 UTC 2000.
        assert_eq!(fat_date_time(951_782_400), dt(2000, 2, 29, 0, 0, 0));
        assert_eq!(fat_date_time(0), dt(1980, 1, 1, 0, 0, 0));
        assert_eq!(fat_date_time(u64::MAX), dt(2107, 12, 31, 23, 59, 59));
    }

    #[test]
    fn one_fat_clock_per_epoch() {
        let a = Stamp::new("b", b"", 1_000_000_000);
        let p1 = a.fat_clock() as *const dyn fatfs::TimeProvider as *const u8;
        let p2 = a.fat_clock() as *const dyn fatfs::TimeProvider as *const u8;
        assert_eq!(p1, p2);
        assert_eq!(
            a.fat_clock().get_current_date_time(),
            fat_date_time(1_000_000_000)
        );
    }
}
