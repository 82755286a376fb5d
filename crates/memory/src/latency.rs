//! Memory latency by dependent reads: each load's address is the value the last load
//! returned, so no two loads overlap (lmbench's lat_mem_rd, ramlat). The chain visits
//! the block's cache-line slots in a random order that is one single cycle (Sattolo's
//! algorithm), so every slot is read once per lap and no short cycle stays in cache.
//! tinymembench computes its random addresses with an LCG instead; both report the time
//! over an L1 hit: here the same chase over one slot (the L1 load and the loop) is the
//! baseline subtracted ([`benchboot_results::memory::LatencyTable::extra_ns`]).

/// Bytes between chain entries: one 64-byte cache line (Cortex-A7/A53/A72, x86); the
/// ARM1176's 32-byte lines are then read every other line, still one miss per load.
pub const SLOT: usize = 64;

/// Words per slot.
const SLOT_WORDS: usize = SLOT / std::mem::size_of::<usize>();

/// A small, fast, seeded PRNG (xorshift64*, Vigna 2016) for chain orders and offsets:
/// what it must be is reproducible per seed, not cryptographic.
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

/// A random cyclic permutation of `0..n`: `next[i]` follows `i`, and following `next`
/// from any slot visits all `n` before returning (Sattolo 1986; Knuth TAOCP vol. 2,
/// 3.4.2).
pub fn single_cycle(n: usize, rng: &mut Rng) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.below(i);
        order.swap(i, j);
    }
    let mut next = vec![0; n];
    for i in 0..n {
        next[order[i]] = order[(i + 1) % n];
    }
    next
}

/// Lays a chain over `block` (whole slots): each slot's first word holds the word
/// index of the next slot's. Returns the word index to start from.
pub fn lay_chain(block: &mut [usize], rng: &mut Rng) -> usize {
    let n = (block.len() / SLOT_WORDS).max(1);
    let next = single_cycle(n, rng);
    for (i, &j) in next.iter().enumerate() {
        block[i * SLOT_WORDS] = j * SLOT_WORDS;
    }
    0
}

/// `reads` dependent loads from `start`; returns where the chain ended (so the loads
/// are not dead code). Unrolled by 8 to keep the loop's own cost small; the baseline
/// has the same loop.
#[inline(never)]
pub fn chase(block: &[usize], start: usize, reads: u64) -> usize {
    let mut i = start;
    for _ in 0..reads / 8 {
        i = block[i];
        i = block[i];
        i = block[i];
        i = block[i];
        i = block[i];
        i = block[i];
        i = block[i];
        i = block[i];
    }
    for _ in 0..reads % 8 {
        i = block[i];
    }
    std::hint::black_box(i)
}

/// Two chains at once: `steps` loads on each, interleaved; independent, so a core that
/// keeps several misses in flight does both in about the time of one.
#[inline(never)]
pub fn chase_two(block: &[usize], a: usize, b: usize, steps: u64) -> (usize, usize) {
    let (mut i, mut j) = (a, b);
    for _ in 0..steps / 4 {
        i = block[i];
        j = block[j];
        i = block[i];
        j = block[j];
        i = block[i];
        j = block[j];
        i = block[i];
        j = block[j];
    }
    for _ in 0..steps % 4 {
        i = block[i];
        j = block[j];
    }
    std::hint::black_box((i, j))
}

/// The slot half a lap round the chain from `start`: the second chain's start, so the
/// two never read the same line at the same time.
pub fn half_lap(block: &[usize], start: usize) -> usize {
    let n = (block.len() / SLOT_WORDS).max(1);
    let mut i = start;
    for _ in 0..n / 2 {
        i = block[i];
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_is_one_cycle_through_every_slot() {
        for n in [1, 2, 3, 16, 1000, 4096] {
            let next = single_cycle(n, &mut Rng::new(n as u64));
            let mut seen = vec![false; n];
            let mut i = 0;
            for _ in 0..n {
                assert!(!seen[i], "n={n}: slot {i} visited twice in one lap");
                seen[i] = true;
                i = next[i];
            }
            assert_eq!(i, 0, "n={n}: the lap does not close");
            assert!(seen.iter().all(|&s| s));
            if n > 1 {
                assert!((0..n).all(|k| next[k] != k), "n={n}: a fixed point");
            }
        }
    }

    #[test]
    fn a_laid_chain_visits_every_slot_of_the_block_then_returns() {
        let slots = 512;
        let mut block = vec![0usize; slots * SLOT_WORDS];
        let start = lay_chain(&mut block, &mut Rng::new(7));
        let mut i = start;
        let mut visited = std::collections::HashSet::new();
        for _ in 0..slots {
            assert_eq!(i % SLOT_WORDS, 0, "an entry off a slot start");
            visited.insert(i);
            i = block[i];
        }
        assert_eq!(visited.len(), slots);
        assert_eq!(i, start);
        assert_eq!(chase(&block, start, slots as u64), start, "a whole lap");
        assert_eq!(
            chase(&block, start, 2 * slots as u64 + 8),
            chase(&block, start, 8)
        );
        let h = half_lap(&block, start);
        assert_eq!(chase(&block, start, (slots / 2) as u64), h);
        let (a, b) = chase_two(&block, start, h, slots as u64);
        assert_eq!((a, b), (start, h));
    }

    #[test]
    fn the_order_depends_on_the_seed() {
        assert_ne!(
            single_cycle(64, &mut Rng::new(1)),
            single_cycle(64, &mut Rng::new(2))
        );
        assert_eq!(
            single_cycle(64, &mut Rng::new(3)),
            single_cycle(64, &mut Rng::new(3))
        );
    }
}
