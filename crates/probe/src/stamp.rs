//! The stamped sector: what the probe writes at every sector of a probe block, and how a
//! sector read back is classified.
//!
//! Every logical sector (the device's `block_bytes`, >= 512) carries its own header, so a
//! card whose wrap-around modulus is not a multiple of the probe block still shows whole
//! stamps, and the first bad sector is found to the sector:
//!
//! | bytes | what |
//! |-------|------|
//! | 0..8 | magic `BBPROBE1` |
//! | 8..16 | the sector's own byte offset on the device, little-endian |
//! | 16..24 | the run's nonce |
//! | 24..32 | checksum of the whole sector with these 8 bytes taken as zero |
//! | 32.. | filler: a xorshift stream seeded by offset and nonce |

/// The first 8 bytes of every stamped sector.
pub const MAGIC: [u8; 8] = *b"BBPROBE1";

fn get(s: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&s[at..at + 8]);
    u64::from_le_bytes(w)
}

fn put(s: &mut [u8], at: usize, v: u64) {
    s[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn seed(offset: u64, nonce: u64) -> u64 {
    // splitmix64 of the pair: never zero in practice, forced odd to be sure.
    let mut z = offset ^ nonce.rotate_left(32) ^ 0x9e37_79b9_7f4a_7c15;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) | 1
}

fn next(mut x: u64) -> u64 {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}

fn checksum(s: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ s.len() as u64;
    for (i, w) in s.chunks_exact(8).enumerate() {
        let w = if i == 3 { 0 } else { get(w, 0) };
        h = (h ^ w).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(23);
    }
    h
}

/// Writes the stamp of the sector at byte `offset` into `s` (a sector, length a multiple
/// of 8, at least 64).
pub fn stamp_sector(s: &mut [u8], offset: u64, nonce: u64) {
    s[..8].copy_from_slice(&MAGIC);
    put(s, 8, offset);
    put(s, 16, nonce);
    put(s, 24, 0);
    let mut x = seed(offset, nonce);
    for at in (32..s.len()).step_by(8) {
        x = next(x);
        put(s, at, x);
    }
    let c = checksum(s);
    put(s, 24, c);
}

/// Stamps every `sector`-byte sector of `buf`, the first at byte `offset`.
pub fn stamp(buf: &mut [u8], offset: u64, nonce: u64, sector: usize) {
    for (i, s) in buf.chunks_exact_mut(sector).enumerate() {
        stamp_sector(s, offset + (i * sector) as u64, nonce);
    }
}

/// What one sector read back held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sector {
    /// Its own stamp, from this run.
    Own,
    /// A whole, valid stamp of another offset and/or another run.
    Other {
        offset: u64,
        nonce: u64,
    },
    Zeros,
    Ones,
    /// Anything else: `differ_bytes` bytes differ from the stamp expected.
    Garbage {
        differ_bytes: u64,
    },
}

/// Classifies sector `s` read back from byte `expected` of a run with `nonce`.
pub fn classify(s: &[u8], expected: u64, nonce: u64) -> Sector {
    if s[..8] == MAGIC && get(s, 24) == checksum(s) {
        let (offset, n) = (get(s, 8), get(s, 16));
        if offset == expected && n == nonce {
            return Sector::Own;
        }
        return Sector::Other { offset, nonce: n };
    }
    if s.iter().all(|&b| b == 0) {
        return Sector::Zeros;
    }
    if s.iter().all(|&b| b == 0xff) {
        return Sector::Ones;
    }
    let mut want = vec![0u8; s.len()];
    stamp_sector(&mut want, expected, nonce);
    let differ_bytes = s.iter().zip(&want).filter(|(a, b)| a != b).count() as u64;
    Sector::Garbage { differ_bytes }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_other_zero_ones_garbage() {
        let mut s = vec![0u8; 512];
        stamp_sector(&mut s, 4096, 7);
        assert_eq!(classify(&s, 4096, 7), Sector::Own);
        assert_eq!(
            classify(&s, 8192, 7),
            Sector::Other {
                offset: 4096,
                nonce: 7
            }
        );
        assert_eq!(
            classify(&s, 4096, 8),
            Sector::Other {
                offset: 4096,
                nonce: 7
            }
        );
        s[100] ^= 1;
        assert_eq!(classify(&s, 4096, 7), Sector::Garbage { differ_bytes: 1 });
        assert_eq!(classify(&[0u8; 512], 0, 7), Sector::Zeros);
        assert_eq!(classify(&[0xffu8; 512], 0, 7), Sector::Ones);
    }

    #[test]
    fn every_sector_names_itself() {
        let mut b = vec![0u8; 4096];
        stamp(&mut b, 1 << 20, 3, 512);
        for i in 0..8u64 {
            let s = &b[(i * 512) as usize..][..512];
            assert_eq!(classify(s, (1 << 20) + i * 512, 3), Sector::Own);
        }
    }
}
