//! `Sectors`, `SectorReader` and `Strict` over a disk in memory and a file: every
//! request reaches the double as whole sectors, and lands byte for byte.

use super::*;

/// xorshift64*: the same cases on every run and OS.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn disk(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

#[test]
fn every_request_reaches_a_strict_disk_as_whole_sectors_and_lands_exactly() {
    for sector in [512usize, 4096] {
        let len = 3 * BOUNCE_BYTES + 3 * sector;
        let mut model = disk(len);
        let mut sectors = Sectors::new(Strict::new(MemDisk(model.clone()), sector), sector);
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ sector as u64);
        // A buffer whose slices start at every address offset.
        let mut scratch = vec![0u8; 2 * BOUNCE_BYTES + 2 * sector + 64];
        for case in 0..2000 {
            let long = case % 50 == 0;
            let n = if long {
                rng.below(2 * BOUNCE_BYTES as u64 + sector as u64) as usize + 1
            } else {
                rng.below(3 * sector as u64) as usize + 1
            };
            // Sector-aligned offsets and lengths a third of the time.
            let (off, n) = if case % 3 == 0 {
                let s = sector as u64;
                (
                    rng.below(len as u64 / s) * s,
                    (n.div_ceil(sector) * sector).min(len),
                )
            } else {
                (rng.below(len as u64), n)
            };
            let n = n.min(len - off as usize);
            let shift = rng.below(64) as usize;
            let buf = &mut scratch[shift..shift + n];
            if rng.below(2) == 0 {
                for (i, b) in buf.iter_mut().enumerate() {
                    *b = (case as usize + i) as u8 ^ 0x5a;
                }
                sectors.write_at(buf, off).unwrap();
                model[off as usize..off as usize + n].copy_from_slice(buf);
            } else {
                let got = sectors.read_at(buf, off).unwrap();
                assert_eq!(got, n, "case {case}: read {n} at {off}");
                assert!(
                    buf[..] == model[off as usize..off as usize + n],
                    "case {case}: read {n} at {off} (shift {shift}) differs"
                );
            }
        }
        let strict = sectors.into_inner();
        assert_eq!(strict.refused, 0);
        assert!(strict.passed > 2000);
        assert!(strict.inner.0 == model, "sector {sector}: the disk differs");
    }
}

#[test]
fn the_strict_double_refuses_what_a_raw_disk_refuses() {
    let mut s = Strict::new(MemDisk(vec![0; 8192]), 512);
    let mut buf = AlignedBuf::new(1024, 4096);
    assert_eq!(s.read_raw(&mut buf[..512], 512).unwrap(), 512);
    for (len, off, shift) in [(511, 0, 0), (512, 1, 0), (512, 0, 1), (1000, 512, 0)] {
        let e = s.read_raw(&mut buf[shift..shift + len], off).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("not whole 512-byte sectors"), "{e}");
    }
    let e = s.write_raw(&buf[..100], 0).unwrap_err();
    assert!(
        e.to_string().starts_with("write of 100 bytes at byte 0"),
        "{e}"
    );
    assert_eq!((s.refused, s.passed), (5, 1));
}

#[test]
fn a_partial_sector_keeps_its_other_bytes_and_the_end_of_a_disk_is_a_short_read() {
    let mut d = Sectors::new(Strict::new(MemDisk(disk(4096)), 512), 512);
    // Bytes 510..514: the end of sector 0 and the start of sector 1.
    d.write_at(&[1, 2, 3, 4], 510).unwrap();
    let want = {
        let mut m = disk(4096);
        m[510..514].copy_from_slice(&[1, 2, 3, 4]);
        m
    };
    assert!(d.get_ref().inner.0 == want);
    // Asking past the end: what there is.
    let mut buf = vec![0u8; 1000];
    assert_eq!(d.read_at(&mut buf, 4096 - 300).unwrap(), 300);
    assert_eq!(buf[..300], want[4096 - 300..]);
    assert_eq!(d.read_at(&mut buf, 4096).unwrap(), 0);
    assert_eq!(d.read_at(&mut buf, 1 << 40).unwrap(), 0);
    // A write past the end fails as the disk fails it, not silently.
    assert!(d.write_at(&[9; 10], 4090).is_err());
    assert_eq!(d.get_ref().refused, 0);
}

#[test]
fn a_file_of_any_length_reads_and_grows_through_whole_sectors() {
    let f = tempfile::tempfile().unwrap();
    f.set_len(1000).unwrap();
    let mut d = Sectors::new(Strict::new(f, 512), 512);
    d.write_at(b"tail", 998).unwrap();
    let f = d.into_inner().inner;
    // The read-modify-write of the last sector wrote it whole, zeros past the old end.
    assert_eq!(f.metadata().unwrap().len(), 1024);
    let mut back = [0xffu8; 26];
    read_exact_at(&f, &mut back, 998).unwrap();
    assert_eq!(&back[..4], b"tail");
    assert!(back[4..].iter().all(|&b| b == 0));
    let e = read_exact_at(&f, &mut back, 1010).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
}

#[test]
fn the_stream_reader_seeks_from_the_end_and_stops_there() {
    let data = disk(5000);
    let mut r = SectorReader::new(
        Sectors::new(Strict::new(MemDisk(data.clone()), 512), 512),
        4608,
    );
    assert_eq!(r.seek(SeekFrom::End(-8)).unwrap(), 4600);
    let mut buf = Vec::new();
    r.read_to_end(&mut buf).unwrap();
    assert_eq!(buf, data[4600..4608]);
    assert_eq!(r.seek(SeekFrom::Start(3)).unwrap(), 3);
    let mut three = [0u8; 3];
    r.read_exact(&mut three).unwrap();
    assert_eq!(three, data[3..6]);
    assert_eq!(
        r.seek(SeekFrom::Current(-7)).unwrap_err().kind(),
        io::ErrorKind::InvalidInput
    );
    assert_eq!((r.len(), r.is_empty()), (4608, false));
}

/// A disk that answers in pieces: a short count that is not whole sectors.
struct Dribble(MemDisk, usize);

impl RawIo for Dribble {
    fn read_raw(&mut self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let n = buf.len().min(self.1);
        self.0.read_raw(&mut buf[..n], offset)
    }
    fn write_raw(&mut self, buf: &[u8], offset: u64) -> io::Result<usize> {
        let n = buf.len().min(self.1);
        self.0.write_raw(&buf[..n], offset)
    }
    fn flush_raw(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn hostile_offsets_sizes_and_short_writes_are_errors_not_panics() {
    let mut d = Sectors::new(MemDisk(disk(4096)), 512);
    for off in [u64::MAX, u64::MAX - 100, u64::MAX - 1000] {
        let e = d.write_at(&[1; 1024], off).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{off}: {e}");
        let mut buf = [0u8; 1024];
        let e = d.read_at(&mut buf, off).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{off}: {e}");
    }
    // Aligned and in range of u64, past the disk: the disk's own error.
    assert!(d.write_at(&[1; 1024], u64::MAX - 4095).is_err());
    assert!(d.get_ref().0 == disk(4096), "nothing was written");
    // Sector sizes are kept in range: a huge one is clamped, not allocated.
    assert_eq!(
        Sectors::new(MemDisk::default(), usize::MAX / 2 + 2).sector(),
        MAX_SECTOR
    );
    assert_eq!(Sectors::new(MemDisk::default(), 0).sector(), 1);
    // A write the disk takes only in part, not whole sectors: said as short.
    let mut d = Sectors::new(Dribble(MemDisk(disk(4096)), 100), 512);
    let e = d.write_at(&[7; 1024], 512).unwrap_err();
    assert_eq!(e.to_string(), "short write: 100 of 1024 bytes at byte 512");
}
