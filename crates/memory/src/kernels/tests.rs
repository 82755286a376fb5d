//! Tests of the memory kernels: every copy, fill and read kernel touches every byte and
//! no more, ids and labels, NEON gating, buffer shapes and placement.
use super::*;

fn features() -> Vec<String> {
    crate::cpu::features(crate::cpu::hwcap())
}

/// Every kernel this CPU runs does what it says over the whole buffer, and leaves
/// the bytes past it alone.
#[test]
fn every_kernel_copies_fills_or_reads_every_byte_and_no_more() {
    let len = 64 * 1024 + BLOCK;
    let feats = features();
    let mut ran = 0;
    for k in all().iter().filter(|k| k.runs_on(&feats)) {
        let mut src = Buffer::new(len + 64, 0);
        src.stamp(0x1234);
        let mut dst = Buffer::new(len + 64, 1088);
        dst.stamp(0x9999);
        let guard = dst.bytes()[len..].to_vec();
        let sum = {
            let s = &src.bytes()[..len];
            let d = &mut dst.bytes_mut()[..len];
            k.run(d, s)
        };
        match k.op {
            MemOp::Copy => assert!(dst.bytes()[..len] == src.bytes()[..len], "{}", k.id),
            MemOp::Fill => assert!(
                dst.bytes()[..len].iter().all(|&b| b == FILL_BYTE),
                "{}",
                k.id
            ),
            MemOp::Read => {
                let want = src.bytes()[..len].chunks_exact(8).fold(0u64, |a, w| {
                    a.wrapping_add(u64::from_le_bytes(w.try_into().unwrap()))
                });
                assert_eq!(sum, want, "{}", k.id);
            }
        }
        assert_eq!(
            dst.bytes()[len..],
            guard[..],
            "{} wrote past the buffer",
            k.id
        );
        ran += 1;
    }
    assert!(ran >= 3, "only {ran} kernels ran");
    // Under qemu-arm -cpu cortex-a7 (tests/arm32_units) AT_HWCAP has NEON: its
    // kernels ran above.
    #[cfg(bb_armv7)]
    if feats.iter().any(|f| f == "neon") {
        assert_eq!(
            ran, 9,
            "ARMv7 with NEON: libc x 2, read, LDM/STM, VFP, STM, STRD, NEON x 2"
        );
    }
    #[cfg(target_arch = "x86_64")]
    assert_eq!(ran, 6);
}

#[test]
fn ids_are_unique_and_labels_say_the_operation() {
    let mut ids: Vec<_> = all().iter().map(|k| k.id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), all().len());
    for k in all() {
        let word = match k.op {
            MemOp::Copy => "copy",
            MemOp::Fill => "fill",
            MemOp::Read => "read",
        };
        assert!(
            k.label.contains(word) || k.label.starts_with("standard mem"),
            "{}: {}",
            k.id,
            k.label
        );
    }
}

#[test]
fn neon_kernels_need_neon_and_a_cpu_without_it_skips_them() {
    let no_neon = vec!["vfp".to_owned()];
    for k in all() {
        if k.id.starts_with("neon-") {
            assert_eq!(k.needs, Needs::Neon);
            assert!(!k.runs_on(&no_neon));
        }
    }
    let vfp = all().iter().find(|k| k.needs == Needs::Vfp);
    if let Some(v) = vfp {
        assert!(v.runs_on(&no_neon));
    }
}

#[test]
#[should_panic(expected = "not whole aligned")]
fn a_buffer_that_is_not_whole_blocks_is_refused() {
    let mut b = Buffer::new(4096, 0);
    let k = &all()[1];
    k.run(&mut b.bytes_mut()[..100], &[]);
}

#[test]
fn buffers_sit_where_tinymembench_puts_them() {
    assert_eq!((SRC_OFFSET, DST_OFFSET), (0xAAA80, 0x55500));
    for off in [0, 64, SRC_OFFSET, DST_OFFSET] {
        let b = Buffer::new(8192, off);
        assert_eq!(b.bytes().as_ptr() as usize % BUFFER_ALIGN, off);
        assert_eq!(b.bytes().len(), 8192);
    }
    // tinymembench's source and destination: 0x55580 B apart modulo 1 MiB, 0x580
    // modulo a 4 KiB page (glibc's large-copy loop choice depends on it).
    let (src, dst) = (Buffer::new(4096, SRC_OFFSET), Buffer::new(4096, DST_OFFSET));
    let apart = (src.bytes().as_ptr() as usize).wrapping_sub(dst.bytes().as_ptr() as usize);
    assert_eq!(apart % 4096, 0x580);
}
