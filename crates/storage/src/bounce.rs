//! Positioned I/O of any length through one aligned buffer ([`Bounce`]), for files
//! opened with `O_DIRECT` whose callers hold unaligned slices.

use benchboot_sector::AlignedBuf;

/// Positioned I/O of any length through one aligned buffer, for a file opened with
/// `O_DIRECT` whose callers hold unaligned slices: the buffer starts at 1 MiB, aligned
/// to 4 KiB, and grows to the next power of two of the largest request. Offsets and
/// lengths must still be whole logical blocks (open(2)).
pub struct Bounce(AlignedBuf);

impl Default for Bounce {
    fn default() -> Self {
        Bounce(AlignedBuf::new(1 << 20, 4096))
    }
}

impl Bounce {
    /// The buffer, grown to at least `len` bytes.
    fn buf(&mut self, len: usize) -> &mut [u8] {
        if self.0.len() < len {
            self.0 = AlignedBuf::new(len.next_power_of_two(), 4096);
        }
        &mut self.0[..len]
    }

    /// Fills `out` from `file` at `offset`.
    ///
    /// # Errors
    /// pread(2)'s; a short read is `UnexpectedEof`.
    pub fn read_at(
        &mut self,
        file: &std::fs::File,
        offset: u64,
        out: &mut [u8],
    ) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        let b = self.buf(out.len());
        file.read_exact_at(b, offset)?;
        out.copy_from_slice(b);
        Ok(())
    }

    /// Writes all of `data` to `file` at `offset`.
    ///
    /// # Errors
    /// pwrite(2)'s.
    pub fn write_at(
        &mut self,
        file: &std::fs::File,
        offset: u64,
        data: &[u8],
    ) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        let b = self.buf(data.len());
        b.copy_from_slice(data);
        file.write_all_at(b, offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounced_io_round_trips_and_grows() {
        let dir = tempfile::tempdir().unwrap();
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(dir.path().join("f"))
            .unwrap();
        let mut b = Bounce::default();
        let data: Vec<u8> = (0..(3 << 20)).map(|i| (i % 251) as u8).collect();
        b.write_at(&f, 4096, &data).unwrap();
        assert_eq!(b.0.len(), 4 << 20);
        let mut back = vec![0u8; data.len()];
        b.read_at(&f, 4096, &mut back).unwrap();
        assert_eq!(back, data);
        let mut past = vec![0u8; 8192];
        let e = b.read_at(&f, 3 << 20, &mut past).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
    }
}
