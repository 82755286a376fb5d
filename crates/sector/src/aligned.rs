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
}
