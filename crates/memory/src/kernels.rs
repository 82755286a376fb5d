//! The bandwidth kernels: one pass of copy, fill or read over whole buffers.
//!
//! Each kernel is a loop of the instructions a CPU moves memory with, the way
//! tinymembench's asm-opt.c and arm-neon.S / aarch64-asm.S pick them per core:
//! - every CPU: the binary's libc `memcpy` / `memset` (musl's on the board: tinymembench's
//!   "standard memcpy"/"standard memset", the figures sbc-bench publishes) and a 64-bit
//!   read loop;
//! - 32-bit ARM: LDM/STM copy and STM / STRD fill (ARMv6 and up), VFP VLDM/VSTM copy (the
//!   ARM1176's only wide loads: VFPv2, d0-d7), NEON VLD1/VST1 copy and fill (ARMv7 builds,
//!   run only when AT_HWCAP has NEON: the ARM1176 would take SIGILL);
//! - AArch64: LDP/STP copy and fill, LD1/ST1 (Advanced SIMD) copy and fill, LDP/STNP
//!   (non-temporal stores) copy and fill;
//! - x86-64 (the host): REP MOVSB / REP STOSB, SSE2 MOVNTDQ streaming copy.
//!
//! Buffers are [`Buffer`]s: 4 KiB aligned, a multiple of [`BLOCK`] bytes, so every asm
//! loop moves whole blocks with aligned accesses (the ARMv6 build is `+strict-align`).

use benchboot_results::memory::MemOp;

/// Bytes every kernel moves per loop iteration at most; buffers are whole multiples.
pub const BLOCK: usize = 128;

/// The byte a fill writes (and a copy's source holds, position-stamped: see
/// [`Buffer::stamp`]).
pub const FILL_BYTE: u8 = 0xA5;

/// What a kernel needs from the CPU beyond the build's baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    Nothing,
    /// 32-bit ARM VFP (AT_HWCAP `HWCAP_VFP`, bit 6).
    Vfp,
    /// 32-bit ARM NEON (AT_HWCAP `HWCAP_NEON`, bit 12).
    Neon,
    /// AArch64 Advanced SIMD (AT_HWCAP `HWCAP_ASIMD`, bit 1).
    Asimd,
}

impl Needs {
    /// The feature name as [`crate::cpu::features`] lists it.
    pub fn feature(self) -> Option<&'static str> {
        match self {
            Needs::Nothing => None,
            Needs::Vfp => Some("vfp"),
            Needs::Neon => Some("neon"),
            Needs::Asimd => Some("asimd"),
        }
    }
}

/// One kernel: `run(dst, src)` is one pass; a read returns what it summed (so no
/// compiler drops the loads), copy and fill return 0.
pub struct Kernel {
    /// Stable id in results (`a64-ldp-stp`).
    pub id: &'static str,
    /// tinymembench-style label.
    pub label: &'static str,
    pub op: MemOp,
    pub needs: Needs,
    pass: fn(&mut [u8], &[u8]) -> u64,
}

impl Kernel {
    /// One pass: copy `src` into `dst`, fill `dst` with [`FILL_BYTE`], or read `src`.
    ///
    /// # Panics
    /// Buffers of unequal length (copy), not a multiple of [`BLOCK`], or not 64-byte
    /// aligned: the asm loops would run past them.
    pub fn run(&self, dst: &mut [u8], src: &[u8]) -> u64 {
        let used: &[&[u8]] = match self.op {
            MemOp::Copy => {
                assert_eq!(dst.len(), src.len(), "{}: buffers of unequal size", self.id);
                &[&*dst, src]
            }
            MemOp::Fill => &[&*dst],
            MemOp::Read => &[src],
        };
        for b in used {
            assert!(
                !b.is_empty()
                    && b.len().is_multiple_of(BLOCK)
                    && (b.as_ptr() as usize).is_multiple_of(64),
                "{}: a buffer of {} B at {:p} is not whole aligned {BLOCK} B blocks",
                self.id,
                b.len(),
                b.as_ptr()
            );
        }
        (self.pass)(dst, src)
    }

    /// True when a CPU with `features` (names as [`crate::cpu::features`]) can run it.
    pub fn runs_on(&self, features: &[String]) -> bool {
        self.needs
            .feature()
            .is_none_or(|f| features.iter().any(|x| x == f))
    }
}

/// Where tinymembench puts its buffers (util.c `alloc_four_nonaliased_buffers`): each
/// starts [`SRC_OFFSET`] or [`DST_OFFSET`] bytes past a 1 MiB boundary (`ALIGN_PADDING`),
/// offsets taken from the patterns `0xAAAAAAAA` and `0x55555555` masked to whole 128 B
/// lines below 1 MiB, so source and destination lines fall in different cache sets and
/// their distance modulo a page is tinymembench's. Copy figures move with that layout
/// (cache-set conflicts, loads aliasing earlier stores 4 KiB apart), so benchboot takes
/// tinymembench's rather than its old page + 17 lines (the layout it used before).
pub const BUFFER_ALIGN: usize = 1 << 20;
/// The source's offset past [`BUFFER_ALIGN`]: `0xAAAAAAAA & 0xFFF80` = 699,008 B.
pub const SRC_OFFSET: usize = 0xAAAA_AAAA & (BUFFER_ALIGN - 1) & !127;
/// The destination's offset past [`BUFFER_ALIGN`]: `0x55555555 & 0xFFF80` = 349,440 B.
pub const DST_OFFSET: usize = 0x5555_5555 & (BUFFER_ALIGN - 1) & !127;

/// A buffer of `len` bytes starting `offset` bytes past a [`BUFFER_ALIGN`] (1 MiB)
/// boundary: [`SRC_OFFSET`] and [`DST_OFFSET`] lay a source and a destination out as
/// tinymembench does. Backed by an over-allocated `Vec<u8>` (safe code).
pub struct Buffer {
    storage: Vec<u8>,
    start: usize,
    len: usize,
}

impl Buffer {
    /// # Panics
    /// An `offset` that is not a whole number of 64 B cache lines.
    pub fn new(len: usize, offset: usize) -> Buffer {
        assert!(
            offset.is_multiple_of(64),
            "offset {offset} is not cache-line aligned"
        );
        let storage = vec![0u8; len + offset + BUFFER_ALIGN];
        let start = storage.as_ptr().align_offset(BUFFER_ALIGN) + offset;
        Buffer {
            storage,
            start,
            len,
        }
    }

    pub fn bytes(&self) -> &[u8] {
        &self.storage[self.start..self.start + self.len]
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + self.len]
    }

    /// Writes every byte (so every page is faulted in before timing) with a pattern that
    /// differs per 8-byte word: a copy that skips or repeats a part shows.
    pub fn stamp(&mut self, seed: u64) {
        for (i, w) in self.bytes_mut().chunks_exact_mut(8).enumerate() {
            let v = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed;
            w.copy_from_slice(&v.to_le_bytes());
        }
    }
}

/// Every kernel this build has, in the order they run (libc first, as tinymembench).
pub fn all() -> &'static [Kernel] {
    KERNELS
}

const fn k(
    id: &'static str,
    label: &'static str,
    op: MemOp,
    needs: Needs,
    pass: fn(&mut [u8], &[u8]) -> u64,
) -> Kernel {
    Kernel {
        id,
        label,
        op,
        needs,
        pass,
    }
}

const COPY: MemOp = MemOp::Copy;
const FILL: MemOp = MemOp::Fill;
const READ: MemOp = MemOp::Read;
const ANY: Needs = Needs::Nothing;

static KERNELS: &[Kernel] = &[
    k("libc-memcpy", "standard memcpy", COPY, ANY, libc_memcpy),
    k("libc-memset", "standard memset", FILL, ANY, libc_memset),
    k(
        "read-u64",
        "read (64-bit loads, summed)",
        READ,
        ANY,
        read_u64,
    ),
    #[cfg(target_arch = "arm")]
    k(
        "arm-ldm-stm",
        "ARM copy (LDM/STM, 16 bytes)",
        COPY,
        ANY,
        arm::ldm_stm,
    ),
    #[cfg(target_arch = "arm")]
    k(
        "arm-vldm-vstm",
        "VFP copy (VLDM/VSTM, 64 bytes)",
        COPY,
        Needs::Vfp,
        arm::vldm_vstm,
    ),
    #[cfg(target_arch = "arm")]
    k(
        "arm-stm-fill",
        "ARM fill (STM, 16 bytes)",
        FILL,
        ANY,
        arm::stm_fill,
    ),
    #[cfg(target_arch = "arm")]
    k(
        "arm-strd-fill",
        "ARM fill (STRD, 8 bytes)",
        FILL,
        ANY,
        arm::strd_fill,
    ),
    #[cfg(all(target_arch = "arm", bb_armv7))]
    k(
        "neon-vld1-vst1",
        "NEON copy (VLD1/VST1, 64 bytes)",
        COPY,
        Needs::Neon,
        arm::neon_copy,
    ),
    #[cfg(all(target_arch = "arm", bb_armv7))]
    k(
        "neon-vst1-fill",
        "NEON fill (VST1, 64 bytes)",
        FILL,
        Needs::Neon,
        arm::neon_fill,
    ),
    #[cfg(target_arch = "aarch64")]
    k(
        "a64-ldp-stp",
        "A64 copy (LDP/STP, 64 bytes)",
        COPY,
        ANY,
        a64::ldp_stp,
    ),
    #[cfg(target_arch = "aarch64")]
    k(
        "a64-ld1-st1",
        "A64 SIMD copy (LD1/ST1, 64 bytes)",
        COPY,
        Needs::Asimd,
        a64::ld1_st1,
    ),
    #[cfg(target_arch = "aarch64")]
    k(
        "a64-ldp-stnp",
        "A64 copy, non-temporal stores (LDP/STNP)",
        COPY,
        Needs::Asimd,
        a64::ldp_stnp,
    ),
    #[cfg(target_arch = "aarch64")]
    k(
        "a64-stp-fill",
        "A64 fill (STP, 64 bytes)",
        FILL,
        ANY,
        a64::stp_fill,
    ),
    #[cfg(target_arch = "aarch64")]
    k(
        "a64-st1-fill",
        "A64 SIMD fill (ST1, 64 bytes)",
        FILL,
        Needs::Asimd,
        a64::st1_fill,
    ),
    #[cfg(target_arch = "aarch64")]
    k(
        "a64-stnp-fill",
        "A64 fill, non-temporal stores (STNP)",
        FILL,
        Needs::Asimd,
        a64::stnp_fill,
    ),
    #[cfg(target_arch = "x86_64")]
    k(
        "x86-rep-movsb",
        "x86 copy (REP MOVSB)",
        COPY,
        ANY,
        x86::rep_movsb,
    ),
    #[cfg(target_arch = "x86_64")]
    k(
        "x86-rep-stosb",
        "x86 fill (REP STOSB)",
        FILL,
        ANY,
        x86::rep_stosb,
    ),
    #[cfg(target_arch = "x86_64")]
    k(
        "x86-sse2-movntdq",
        "SSE2 copy, non-temporal stores (MOVNTDQ)",
        COPY,
        ANY,
        x86::movntdq,
    ),
];

/// `memcpy(3)` of the binary's libc: slice copies lower to a `memcpy` call.
fn libc_memcpy(dst: &mut [u8], src: &[u8]) -> u64 {
    dst.copy_from_slice(src);
    std::hint::black_box(&dst);
    0
}

/// `memset(3)` of the binary's libc.
fn libc_memset(dst: &mut [u8], _: &[u8]) -> u64 {
    dst.fill(FILL_BYTE);
    std::hint::black_box(&dst);
    0
}

/// Every 64-bit word read and summed: the sum is returned, so the loads stay.
fn read_u64(_: &mut [u8], src: &[u8]) -> u64 {
    let sum = src.chunks_exact(8).fold(0u64, |a, w| {
        a.wrapping_add(u64::from_le_bytes([
            w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7],
        ]))
    });
    std::hint::black_box(sum)
}

/// The fill pattern in a register.
#[cfg(any(target_arch = "arm", target_arch = "aarch64"))]
const FILL_WORD: u64 = u64::from_ne_bytes([FILL_BYTE; 8]);

#[cfg(target_arch = "arm")]
mod arm {
    //! 32-bit ARM loops (ARM state). Registers r6, r7, r9, r11 are not ours to name
    //! (LLVM's base and frame pointers, the platform register), so the data goes through
    //! r3-r5, r8 and the VFP/NEON d0-d7.
    use super::FILL_WORD;
    use core::arch::asm;

    pub fn ldm_stm(dst: &mut [u8], src: &[u8]) -> u64 {
        // SAFETY: `Kernel::run` checked both are `len` bytes of whole aligned 128 B
        // blocks; the loop reads `src` and writes `dst` exactly `len` bytes.
        unsafe {
            asm!(
                "2:",
                "ldmia {s}!, {{r3, r4, r5, r8}}",
                "stmia {d}!, {{r3, r4, r5, r8}}",
                "ldmia {s}!, {{r3, r4, r5, r8}}",
                "stmia {d}!, {{r3, r4, r5, r8}}",
                "subs {n}, {n}, #32",
                "bgt 2b",
                s = inout(reg) src.as_ptr() => _,
                d = inout(reg) dst.as_mut_ptr() => _,
                n = inout(reg) dst.len() => _,
                out("r3") _, out("r4") _, out("r5") _, out("r8") _,
                options(nostack),
            );
        }
        0
    }

    pub fn vldm_vstm(dst: &mut [u8], src: &[u8]) -> u64 {
        // SAFETY: as `ldm_stm`; d0-d7 exist on every VFP (VFPv2 has d0-d15).
        unsafe {
            asm!(
                "2:",
                "vldmia {s}!, {{d0-d7}}",
                "vstmia {d}!, {{d0-d7}}",
                "subs {n}, {n}, #64",
                "bgt 2b",
                s = inout(reg) src.as_ptr() => _,
                d = inout(reg) dst.as_mut_ptr() => _,
                n = inout(reg) dst.len() => _,
                out("d0") _, out("d1") _, out("d2") _, out("d3") _,
                out("d4") _, out("d5") _, out("d6") _, out("d7") _,
                options(nostack),
            );
        }
        0
    }

    pub fn stm_fill(dst: &mut [u8], _: &[u8]) -> u64 {
        let w = FILL_WORD as u32;
        // SAFETY: writes exactly `dst.len()` bytes of whole aligned blocks.
        unsafe {
            asm!(
                "2:",
                "stmia {d}!, {{r3, r4, r5, r8}}",
                "stmia {d}!, {{r3, r4, r5, r8}}",
                "subs {n}, {n}, #32",
                "bgt 2b",
                d = inout(reg) dst.as_mut_ptr() => _,
                n = inout(reg) dst.len() => _,
                in("r3") w, in("r4") w, in("r5") w, in("r8") w,
                options(nostack),
            );
        }
        0
    }

    pub fn strd_fill(dst: &mut [u8], _: &[u8]) -> u64 {
        let w = FILL_WORD as u32;
        // SAFETY: as `stm_fill`; STRD wants an even/odd pair: r4, r5.
        unsafe {
            asm!(
                "2:",
                "strd r4, r5, [{d}], #8",
                "strd r4, r5, [{d}], #8",
                "strd r4, r5, [{d}], #8",
                "strd r4, r5, [{d}], #8",
                "subs {n}, {n}, #32",
                "bgt 2b",
                d = inout(reg) dst.as_mut_ptr() => _,
                n = inout(reg) dst.len() => _,
                in("r4") w, in("r5") w,
                options(nostack),
            );
        }
        0
    }

    #[cfg(bb_armv7)]
    pub fn neon_copy(dst: &mut [u8], src: &[u8]) -> u64 {
        // SAFETY: as `ldm_stm`; run only where AT_HWCAP has NEON (`Kernel::runs_on`).
        unsafe {
            asm!(
                ".fpu neon",
                "2:",
                "vld1.8 {{d0-d3}}, [{s}]!",
                "vld1.8 {{d4-d7}}, [{s}]!",
                "vst1.8 {{d0-d3}}, [{d}]!",
                "vst1.8 {{d4-d7}}, [{d}]!",
                "subs {n}, {n}, #64",
                "bgt 2b",
                s = inout(reg) src.as_ptr() => _,
                d = inout(reg) dst.as_mut_ptr() => _,
                n = inout(reg) dst.len() => _,
                out("d0") _, out("d1") _, out("d2") _, out("d3") _,
                out("d4") _, out("d5") _, out("d6") _, out("d7") _,
                options(nostack),
            );
        }
        0
    }

    #[cfg(bb_armv7)]
    pub fn neon_fill(dst: &mut [u8], _: &[u8]) -> u64 {
        // SAFETY: as `stm_fill`; NEON only where AT_HWCAP has it.
        unsafe {
            asm!(
                ".fpu neon",
                "vdup.8 q0, {b}",
                "vmov q1, q0",
                "2:",
                "vst1.8 {{d0-d3}}, [{d}]!",
                "vst1.8 {{d0-d3}}, [{d}]!",
                "subs {n}, {n}, #64",
                "bgt 2b",
                b = in(reg) u32::from(super::FILL_BYTE),
                d = inout(reg) dst.as_mut_ptr() => _,
                n = inout(reg) dst.len() => _,
                out("d0") _, out("d1") _, out("d2") _, out("d3") _,
                options(nostack),
            );
        }
        0
    }
}

#[cfg(target_arch = "aarch64")]
mod a64 {
    //! AArch64 loops, 64 bytes per iteration.
    use super::FILL_WORD;
    use core::arch::asm;

    pub fn ldp_stp(dst: &mut [u8], src: &[u8]) -> u64 {
        // SAFETY: `Kernel::run` checked both are `len` bytes of whole aligned blocks.
        unsafe {
            asm!(
                "2:",
                "ldp {a}, {b}, [{s}]",
                "ldp {c}, {e}, [{s}, #16]",
                "stp {a}, {b}, [{d}]",
                "stp {c}, {e}, [{d}, #16]",
                "ldp {a}, {b}, [{s}, #32]",
                "ldp {c}, {e}, [{s}, #48]",
                "stp {a}, {b}, [{d}, #32]",
                "stp {c}, {e}, [{d}, #48]",
                "add {s}, {s}, #64",
                "add {d}, {d}, #64",
                "subs {n}, {n}, #64",
                "b.gt 2b",
                s = inout(reg) src.as_ptr() => _,
                d = inout(reg) dst.as_mut_ptr() => _,
                n = inout(reg) dst.len() => _,
                a = out(reg) _, b = out(reg) _, c = out(reg) _, e = out(reg) _,
                options(nostack),
            );
        }
        0
    }

    pub fn ld1_st1(dst: &mut [u8], src: &[u8]) -> u64 {
        // SAFETY: as `ldp_stp`.
        unsafe {
            asm!(
                "2:",
                "ld1 {{v0.16b, v1.16b, v2.16b, v3.16b}}, [{s}], #64",
                "st1 {{v0.16b, v1.16b, v2.16b, v3.16b}}, [{d}], #64",
                "subs {n}, {n}, #64",
                "b.gt 2b",
                s = inout(reg) src.as_ptr() => _,
                d = inout(reg) dst.as_mut_ptr() => _,
                n = inout(reg) dst.len() => _,
                out("v0") _, out("v1") _, out("v2") _, out("v3") _,
                options(nostack),
            );
        }
        0
    }

    pub fn ldp_stnp(dst: &mut [u8], src: &[u8]) -> u64 {
        // SAFETY: as `ldp_stp`.
        unsafe {
            asm!(
                "2:",
                "ldp q0, q1, [{s}]",
                "ldp q2, q3, [{s}, #32]",
                "stnp q0, q1, [{d}]",
                "stnp q2, q3, [{d}, #32]",
                "add {s}, {s}, #64",
                "add {d}, {d}, #64",
                "subs {n}, {n}, #64",
                "b.gt 2b",
                s = inout(reg) src.as_ptr() => _,
                d = inout(reg) dst.as_mut_ptr() => _,
                n = inout(reg) dst.len() => _,
                out("v0") _, out("v1") _, out("v2") _, out("v3") _,
                options(nostack),
            );
        }
        0
    }

    pub fn stp_fill(dst: &mut [u8], _: &[u8]) -> u64 {
        // SAFETY: writes exactly `dst.len()` bytes of whole aligned blocks.
        unsafe {
            asm!(
                "2:",
                "stp {w}, {w}, [{d}]",
                "stp {w}, {w}, [{d}, #16]",
                "stp {w}, {w}, [{d}, #32]",
                "stp {w}, {w}, [{d}, #48]",
                "add {d}, {d}, #64",
                "subs {n}, {n}, #64",
                "b.gt 2b",
                w = in(reg) FILL_WORD,
                d = inout(reg) dst.as_mut_ptr() => _,
                n = inout(reg) dst.len() => _,
                options(nostack),
            );
        }
        0
    }

    pub fn st1_fill(dst: &mut [u8], _: &[u8]) -> u64 {
        // SAFETY: as `stp_fill`.
        unsafe {
            asm!(
                "dup v0.2d, {w}",
                "mov v1.16b, v0.16b",
                "mov v2.16b, v0.16b",
                "mov v3.16b, v0.16b",
                "2:",
                "st1 {{v0.16b, v1.16b, v2.16b, v3.16b}}, [{d}], #64",
                "subs {n}, {n}, #64",
                "b.gt 2b",
                w = in(reg) FILL_WORD,
                d = inout(reg) dst.as_mut_ptr() => _,
                n = inout(reg) dst.len() => _,
                out("v0") _, out("v1") _, out("v2") _, out("v3") _,
                options(nostack),
            );
        }
        0
    }

    pub fn stnp_fill(dst: &mut [u8], _: &[u8]) -> u64 {
        // SAFETY: as `stp_fill`.
        unsafe {
            asm!(
                "dup v0.2d, {w}",
                "mov v1.16b, v0.16b",
                "2:",
                "stnp q0, q1, [{d}]",
                "stnp q0, q1, [{d}, #32]",
                "add {d}, {d}, #64",
                "subs {n}, {n}, #64",
                "b.gt 2b",
                w = in(reg) FILL_WORD,
                d = inout(reg) dst.as_mut_ptr() => _,
                n = inout(reg) dst.len() => _,
                out("v0") _, out("v1") _,
                options(nostack),
            );
        }
        0
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! x86-64 loops (the host side of a comparison).
    use core::arch::asm;

    pub fn rep_movsb(dst: &mut [u8], src: &[u8]) -> u64 {
        // SAFETY: REP MOVSB copies exactly RCX bytes from RSI to RDI (DF is clear by ABI).
        unsafe {
            asm!(
                "rep movsb",
                inout("rcx") dst.len() => _,
                inout("rdi") dst.as_mut_ptr() => _,
                inout("rsi") src.as_ptr() => _,
                options(nostack, preserves_flags),
            );
        }
        0
    }

    pub fn rep_stosb(dst: &mut [u8], _: &[u8]) -> u64 {
        // SAFETY: REP STOSB writes exactly RCX bytes at RDI.
        unsafe {
            asm!(
                "rep stosb",
                inout("rcx") dst.len() => _,
                inout("rdi") dst.as_mut_ptr() => _,
                in("al") super::FILL_BYTE,
                options(nostack, preserves_flags),
            );
        }
        0
    }

    pub fn movntdq(dst: &mut [u8], src: &[u8]) -> u64 {
        // SAFETY: `Kernel::run` checked whole 64-byte-aligned blocks (MOVDQA/MOVNTDQ need
        // 16); SSE2 is part of x86-64; SFENCE orders the streaming stores before return.
        unsafe {
            asm!(
                "2:",
                "movdqa xmm0, [{s}]",
                "movdqa xmm1, [{s} + 16]",
                "movdqa xmm2, [{s} + 32]",
                "movdqa xmm3, [{s} + 48]",
                "movntdq [{d}], xmm0",
                "movntdq [{d} + 16], xmm1",
                "movntdq [{d} + 32], xmm2",
                "movntdq [{d} + 48], xmm3",
                "add {s}, 64",
                "add {d}, 64",
                "sub {n}, 64",
                "jnz 2b",
                "sfence",
                s = inout(reg) src.as_ptr() => _,
                d = inout(reg) dst.as_mut_ptr() => _,
                n = inout(reg) dst.len() => _,
                out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
                options(nostack),
            );
        }
        0
    }
}

#[cfg(test)]
mod tests;
