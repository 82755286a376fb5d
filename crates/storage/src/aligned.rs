//! A zeroed byte buffer at an alignment of choice, for `O_DIRECT` I/O, in safe code: an
//! over-allocated `Vec<u8>` sliced from its first aligned byte.

/// A zeroed buffer of `len` bytes whose first byte is aligned to `align` bytes, for
/// `O_DIRECT` I/O (open(2): buffers must be aligned to the logical block size).
///
/// Holds `len + align - 1` bytes and hands out the `len` that start at the first
/// aligned address. The vector never grows, so its heap block (and the alignment of
/// the slice) stays put for the buffer's lifetime, moves of the buffer included.
pub struct AlignedBuf {
    storage: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuf {
    /// # Panics
    /// When `align` is not a power of two (callers pass plan-validated sizes).
    pub fn new(len: usize, align: usize) -> AlignedBuf {
        assert!(
            align.is_power_of_two(),
            "alignment {align} is not a power of two"
        );
        let storage = vec![0u8; len + align - 1];
        let addr = storage.as_ptr().addr();
        let start = (align - addr % align) % align;
        AlignedBuf {
            storage,
            start,
            len,
        }
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.storage[self.start..self.start + self.len]
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + self.len]
    }
}

/// Positioned I/O of any length through one aligned buffer, for a file opened with
/// `O_DIRECT` whose callers hold unaligned slices: the buffer starts at 1 MiB, aligned
/// to 4 KiB, and grows to the next power of two of the largest request. Offsets and
/// lengths must still be whole logical blocks (open(2)).
#[cfg(unix)]
pub struct Bounce(AlignedBuf);

#[cfg(unix)]
impl Default for Bounce {
    fn default() -> Self {
        Bounce(AlignedBuf::new(1 << 20, 4096))
    }
}

#[cfg(unix)]
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
    fn aligned_buffers_are_aligned() {
        for align in [512, 4096] {
            let b = AlignedBuf::new(8192, align);
            assert_eq!(b.as_ptr() as usize % align, 0);
            assert_eq!(b.len(), 8192);
            assert!(b.iter().all(|&x| x == 0));
        }
    }

    #[test]
    fn alignment_survives_a_move_and_writes() {
        let mut b = AlignedBuf::new(4096, 4096);
        b.fill(0xa5);
        let moved = Box::new(b);
        assert_eq!(moved.as_ptr() as usize % 4096, 0);
        assert!(moved.iter().all(|&x| x == 0xa5));
        assert_eq!(AlignedBuf::new(3, 1).len(), 3);
    }

    #[cfg(unix)]
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
