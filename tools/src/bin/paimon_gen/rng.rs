//! Deterministic randomness: a SplitMix64 generator and seeded UUIDs, so the same
//! configuration and seed always give byte-identical tables (apart from file mtimes and Avro
//! sync markers).

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, good enough for choosing buckets.
#[derive(Debug, Clone)]
pub struct Rng(u64);

/// One SplitMix64 step as a pure function (also used to derive names from ids).
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(mix(seed))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// Uniform in `0..n` (`n` > 0; 0 gives 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A version-4 UUID string derived from `(seed, kind, id)`: random-looking and unique per
/// input, so names never need to be stored.
pub fn uuid(seed: u64, kind: u64, id: u64) -> String {
    let a = mix(seed ^ mix(kind.wrapping_mul(0x1000_0000_01B3) ^ id));
    let b = mix(a ^ id.rotate_left(17));
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&a.to_le_bytes());
    bytes[8..].copy_from_slice(&b.to_le_bytes());
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_stable_and_distinct() {
        assert_eq!(uuid(1, 2, 3), uuid(1, 2, 3));
        assert_ne!(uuid(1, 2, 3), uuid(1, 2, 4));
        assert_ne!(uuid(1, 2, 3), uuid(1, 3, 3));
        assert_eq!(uuid(1, 2, 3).len(), 36);
    }
}
