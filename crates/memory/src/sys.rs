//! The engine's one system call over a raw address range, `madvise(2)`, behind a safe
//! wrapper that takes the range as a borrowed buffer (Linux only: transparent huge pages
//! are Linux's). With [`crate::kernels`] (the asm loops) and [`crate::mhz`] (the add
//! loops) one of the crate's three modules allowed `unsafe`.

use std::mem::MaybeUninit;

/// The whole pages inside the bytes `start .. start + len` with pages of `page` bytes:
/// `(first page's address, bytes)`, `None` when no whole page fits (the partial pages at
/// the ends are not the buffer's alone).
pub fn whole_pages(start: usize, len: usize, page: usize) -> Option<(usize, usize)> {
    let aligned = start.next_multiple_of(page);
    let end = (start + len) / page * page;
    (end > aligned).then(|| (aligned, end - aligned))
}

/// `madvise(2)` over the whole pages inside `buf` ([`whole_pages`]): `MADV_HUGEPAGE`
/// when `huge`, else `MADV_NOHUGEPAGE` (Linux transparent huge pages). Done before the
/// pages are first touched, it decides how the kernel backs them; the contents do not
/// change. `Ok(())` without a call when no whole page lies inside `buf`.
///
/// # Errors
/// The call's errno: `EINVAL` from a kernel built without transparent huge pages.
pub fn advise_huge_pages(buf: &mut [MaybeUninit<u8>], huge: bool) -> rustix::io::Result<()> {
    let page = rustix::param::page_size();
    let Some((at, len)) = whole_pages(buf.as_mut_ptr() as usize, std::mem::size_of_val(buf), page)
    else {
        return Ok(());
    };
    let advice = if huge {
        rustix::mm::Advice::LinuxHugepage
    } else {
        rustix::mm::Advice::LinuxNoHugepage
    };
    // SAFETY: `at .. at + len` lies inside `buf` (whole_pages rounds inwards), which this
    // function borrows mutably, so no other reference sees the pages while the call runs;
    // the two advices only change how the kernel backs the pages (huge or base pages),
    // never what they hold or whether they are mapped.
    unsafe { rustix::mm::madvise(at as *mut std::ffi::c_void, len, advice) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_pages_inside_the_buffer_are_advised() {
        // 10 bytes into a page, 3 pages long: the two whole pages in the middle.
        assert_eq!(whole_pages(4096 + 10, 3 * 4096, 4096), Some((8192, 8192)));
        // Exactly aligned: all of it.
        assert_eq!(whole_pages(8192, 2 * 4096, 4096), Some((8192, 8192)));
        // Less than a whole page inside: nothing.
        assert_eq!(whole_pages(4096 + 10, 4096, 4096), None);
        assert_eq!(whole_pages(4096, 100, 4096), None);
        assert_eq!(whole_pages(4096, 0, 4096), None);
    }

    /// The wrapper on this machine, over a vector's unwritten capacity as the latency
    /// table uses it: a buffer too small for a whole page is no call, and base pages are
    /// granted (a kernel without THP refuses `NOHUGEPAGE` with `EINVAL`, the only error
    /// allowed here); the vector is written and read normally afterwards.
    #[test]
    fn advising_a_vectors_capacity_works_here() {
        let mut tiny = [MaybeUninit::new(7u8); 16];
        assert_eq!(advise_huge_pages(&mut tiny, true), Ok(()));
        let page = rustix::param::page_size();
        let mut v: Vec<u8> = Vec::with_capacity(4 * page);
        match advise_huge_pages(v.spare_capacity_mut(), false) {
            Ok(()) | Err(rustix::io::Errno::INVAL) => {}
            Err(e) => panic!("madvise(MADV_NOHUGEPAGE): {e}"),
        }
        v.resize(4 * page, 0x5a);
        assert!(v.iter().all(|&b| b == 0x5a));
    }
}
