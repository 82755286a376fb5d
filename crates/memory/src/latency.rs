//! Memory latency by tinymembench's method (ssvb/tinymembench main.c,
//! `random_read_test` and `random_dual_read_test`, vendored in xtask/bench/tinymembench):
//! byte reads at addresses an LCG draws inside a block, each read's byte OR'd into the
//! LCG's state, so the next address waits for the last load and no two loads of one
//! chain overlap. The same loop over a 2-byte block (mask 1: always an L1 hit) is the
//! baseline subtracted from every row, so a figure is the time a load takes over an L1
//! hit, the LCG's arithmetic cancelled
//! ([`benchboot_results::memory::LatencyTable::extra_ns`]).
//!
//! The addresses are uniformly random bytes of the block, with repeats: a block larger
//! than the caches still hits them in proportion (a 64 MiB block on a 1 MiB L2 about
//! 1.5 %), which is what tinymembench's published tables measure. A pointer chase through
//! every cache line once per lap (lmbench's lat_mem_rd, this engine's method until
//! 2026-12) never hits, and read 9-13 % above tinymembench at 64 MiB on this project's
//! build machine (32 MiB L3; README, `cargo xtask bench memory`).

/// The LCG tinymembench draws addresses with: ANSI C's `rand()` example constants
/// (ISO C 7.20.2.2: `next = next * 1103515245 + 12345`), mod 2^32.
#[inline(always)]
fn lcg(seed: u32) -> u32 {
    seed.wrapping_mul(1_103_515_245).wrapping_add(12_345)
}

/// One step of `random_read_test`: advances `seed` three times and returns the address
/// (before the mask): bits 0-7 from the first draw's bits 16-23, bits 8-15 from the
/// second's 16-23, bits 16-30 from the third's 16-30.
#[inline(always)]
fn single_address(seed: &mut u32) -> u32 {
    *seed = lcg(*seed);
    let mut v = (*seed >> 16) & 0xFF;
    *seed = lcg(*seed);
    v |= (*seed >> 8) & 0xFF00;
    *seed = lcg(*seed);
    v | (*seed & 0x7FFF_0000)
}

/// One step of `random_dual_read_test`: advances `seed` five times and returns the two
/// addresses (after the mask `mask`), computed before either is read.
#[inline(always)]
fn dual_addresses(seed: &mut u32, mask: u32) -> (u32, u32) {
    *seed = lcg(*seed);
    let mut v1 = (*seed >> 8) & 0xFF00;
    *seed = lcg(*seed);
    let mut v2 = (*seed >> 8) & 0xFF00;
    *seed = lcg(*seed);
    v1 |= *seed & 0x7FFF_0000;
    *seed = lcg(*seed);
    v2 |= *seed & 0x7FFF_0000;
    *seed = lcg(*seed);
    v1 |= (*seed >> 16) & 0xFF;
    v2 |= *seed >> 24;
    v2 &= mask;
    ((v1 ^ v2) & mask, v2)
}

/// The mask of a block of `2^nbits` bytes.
fn mask(block: &[u8], nbits: u32) -> u32 {
    assert!(
        (1..=31).contains(&nbits) && block.len() >= 1 << nbits,
        "latency block: {} bytes, 2^{nbits} asked",
        block.len()
    );
    (1u32 << nbits) - 1
}

/// `reads` dependent byte reads (rounded down to a multiple of 16, tinymembench's
/// unrolling) at LCG addresses in `block[..2^nbits]`, from seed 0. Returns the final
/// seed (so the loads are not dead code; over a zeroed block it depends only on
/// `reads`).
///
/// # Panics
/// When `nbits` is not 1..=31 or `block` is shorter than `2^nbits` bytes.
#[inline(never)]
pub fn random_read(block: &[u8], reads: u64, nbits: u32) -> u32 {
    let mask = mask(block, nbits);
    let mut seed = 0u32;
    for _ in 0..reads / 16 {
        for _ in 0..16 {
            let v = single_address(&mut seed);
            seed |= u32::from(block[(v & mask) as usize]);
        }
    }
    std::hint::black_box(seed)
}

/// `steps` (rounded down to a multiple of 16) steps of two reads each, at two LCG
/// addresses in `block[..2^nbits]` drawn before either load: independent of each other,
/// so a core that keeps two misses in flight does both in about the time of one; the
/// next step waits for both. From seed 0; returns the final seed.
///
/// # Panics
/// As [`random_read`].
#[inline(never)]
pub fn random_dual_read(block: &[u8], steps: u64, nbits: u32) -> u32 {
    let mask = mask(block, nbits);
    let mut seed = 0u32;
    for _ in 0..steps / 16 {
        for _ in 0..16 {
            let (v1, v2) = dual_addresses(&mut seed, mask);
            seed |= u32::from(block[v2 as usize]);
            seed = seed.wrapping_add(u32::from(block[v1 as usize]));
        }
    }
    std::hint::black_box(seed)
}

/// A small, fast, seeded PRNG (xorshift64*, Vigna 2016) for the blocks' offsets: what
/// it must be is reproducible per seed, not cryptographic.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (n > 0; the modulo bias is below 2^-40 for every n here).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The golden values below come from tinymembench's own C (main.c's non-ARM
    // RANDOM_MEM_ACCESS macros, copied into a harness with `unsigned char` buffers and
    // a loop that records the first addresses), built with gcc -O2 on x86_64.

    #[test]
    fn the_addresses_are_tinymembenchs() {
        let mut seed = 0;
        let got: Vec<u32> = (0..4)
            .map(|_| single_address(&mut seed) & ((1 << 20) - 1))
            .collect();
        assert_eq!(got, [318_464, 1_026_661, 662_957, 845_274]);
        let mut seed = 0;
        let (a1, a2) = dual_addresses(&mut seed, (1 << 20) - 1);
        let (b1, b2) = dual_addresses(&mut seed, (1 << 20) - 1);
        // The C reads v2 first, then v1.
        assert_eq!([a2, a1, b2, b1], [384_013, 122_023, 699_680, 504_570]);
    }

    #[test]
    fn the_final_seeds_are_tinymembenchs() {
        let zero = vec![0u8; 1 << 20];
        assert_eq!(random_read(&zero, 16, 20), 3_452_649_360);
        assert_eq!(random_dual_read(&zero, 16, 20), 2_490_222_064);
        // Loaded bytes feed the seed: the baseline's 2-byte block, then a pattern.
        let mut ones = zero.clone();
        ones[0] = 1;
        ones[1] = 2;
        assert_eq!(random_read(&ones, 32, 1), 4_180_017_698);
        assert_eq!(random_dual_read(&ones, 32, 1), 1_394_112_240);
        let pattern: Vec<u8> = (0..1u32 << 20).map(|i| (i * 7 + 3) as u8).collect();
        assert_eq!(random_read(&pattern, 992, 20), 1_140_487_087);
        assert_eq!(random_dual_read(&pattern, 992, 20), 1_960_151_257);
        // 1000 is rounded down to 992 reads, tinymembench's unrolling by 16.
        assert_eq!(random_read(&pattern, 1000, 20), 1_140_487_087);
    }

    #[test]
    fn reads_stay_inside_the_block() {
        // A block of exactly 2^nbits bytes: an address past it would panic.
        for nbits in [1, 2, 10, 12] {
            let block = vec![0xa5u8; 1 << nbits];
            random_read(&block, 4096, nbits);
            random_dual_read(&block, 4096, nbits);
        }
    }

    #[test]
    #[should_panic(expected = "latency block: 1024 bytes, 2^11 asked")]
    fn a_block_too_short_for_its_bits_is_refused() {
        random_read(&[0; 1024], 16, 11);
    }
}
