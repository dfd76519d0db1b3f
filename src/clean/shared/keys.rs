//! A sorted set of 64-bit keys ([`crate::hash::location_key`], [`crate::hash::name_key`]) with
//! a radix directory: about 9 bytes a key, where a hash set of them takes 17–19,
//! with a lookup that touches one or two cache lines. Expiry owns its keys
//! ([`SortedKeys`]); orphan removal indexes keys it holds elsewhere (`SortedKeys<&[u64]>`,
//! [`SortedKeys::new`]), through the same code.
//!
//! Keys come from a fixed-seed hash, so they are spread evenly: the top bits of a key say in
//! which short run of the sorted keys it would be. Any other distribution is answered
//! correctly too, only more slowly.

/// Keys per run the directory aims at (at least): four keys share a cache line, and the
/// directory costs about one byte a key.
const KEYS_PER_RUN: usize = 4;

/// Most directory bits (16 M runs, 64 MiB of positions, for 64 M keys or more).
const MAX_BITS: u32 = 24;

/// Sorted keys (repeats kept, so that a caller can keep a value per key in a parallel
/// vector) with, for every value of their top bits, where its run starts. `K` holds the keys:
/// a `Vec<u64>` owned here, or a `&[u64]` borrowed.
#[derive(Debug, Default)]
pub struct SortedKeys<K = Vec<u64>> {
    keys: K,
    /// `starts[b]..starts[b + 1]`: the keys whose top bits are `b`. Empty when the keys are
    /// too few for a directory, or too many for `u32` positions (then a lookup is a binary
    /// search).
    starts: Vec<u32>,
    /// `64 - bits` (a key's run is `key >> shift`).
    shift: u32,
}

impl<K: AsRef<[u64]>> SortedKeys<K> {
    /// From keys already sorted ascending.
    pub fn from_sorted(keys: K) -> SortedKeys<K> {
        let (starts, shift) = directory(keys.as_ref());
        SortedKeys {
            keys,
            starts,
            shift,
        }
    }

    /// The sorted keys.
    pub fn keys(&self) -> &[u64] {
        self.keys.as_ref()
    }

    /// Number of keys (repeats counted).
    #[cfg(any(test, feature = "internal-api"))]
    pub fn len(&self) -> usize {
        self.keys().len()
    }

    /// True if there are none.
    pub fn is_empty(&self) -> bool {
        self.keys().is_empty()
    }

    /// The positions (in [`SortedKeys::keys`]) of the keys equal to `key`.
    pub fn range(&self, key: u64) -> std::ops::Range<usize> {
        let keys = self.keys();
        let (lo, hi) = match self.run(key) {
            Some(bounds) => bounds,
            None => (0, keys.len()),
        };
        let Some(run_keys) = keys.get(lo..hi) else {
            return 0..0;
        };
        let first = lo + run_keys.partition_point(|k| *k < key);
        let end = first
            + keys
                .get(first..hi)
                .unwrap_or(&[])
                .iter()
                .take_while(|k| **k == key)
                .count();
        first..end
    }

    /// True if `key` is one of the keys.
    pub fn contains(&self, key: u64) -> bool {
        let keys = self.keys();
        match self.run(key) {
            // A run holds a handful of keys: a scan beats a search.
            Some((lo, hi)) => keys.get(lo..hi).is_some_and(|run| run.contains(&key)),
            None => keys.binary_search(&key).is_ok(),
        }
    }

    /// Bounds of the run `key` would be in; `None` without a directory.
    fn run(&self, key: u64) -> Option<(usize, usize)> {
        if self.starts.is_empty() {
            return None;
        }
        let b = (key >> self.shift) as usize;
        let (Some(&lo), Some(&hi)) = (self.starts.get(b), self.starts.get(b + 1)) else {
            return None;
        };
        Some((lo as usize, hi as usize))
    }

    /// Heap bytes of the directory (not of the keys).
    pub fn directory_bytes(&self) -> u64 {
        (self.starts.capacity() * 4) as u64
    }

    /// The keys back, the directory dropped.
    pub fn into_keys(self) -> K {
        self.keys
    }
}

impl SortedKeys {
    /// From keys in any order (sorted here; repeats kept).
    pub fn from_unsorted(mut keys: Vec<u64>) -> SortedKeys {
        keys.sort_unstable();
        keys.shrink_to_fit();
        SortedKeys::from_sorted(keys)
    }

    /// About the bytes held: the keys and the directory.
    pub fn heap_bytes(&self) -> u64 {
        self.keys.capacity() as u64 * 8 + self.directory_bytes()
    }
}

impl<'a> SortedKeys<&'a [u64]> {
    /// Indexes `keys`, held elsewhere, which must be sorted ascending.
    pub fn new(keys: &'a [u64]) -> Self {
        SortedKeys::from_sorted(keys)
    }
}

/// The run directory of sorted `keys` and its shift: no directory for fewer than two runs'
/// worth of keys or more keys than `u32` positions can address.
fn directory(keys: &[u64]) -> (Vec<u32>, u32) {
    let runs = keys.len() / KEYS_PER_RUN;
    if runs < 2 || u32::try_from(keys.len()).is_err() {
        return (Vec::new(), 64);
    }
    let bits = (usize::BITS - 1 - runs.leading_zeros()).min(MAX_BITS);
    let shift = 64 - bits;
    let mut starts = Vec::with_capacity((1usize << bits) + 1);
    let mut at = 0usize;
    for b in 0..(1u64 << bits) {
        while at < keys.len() && (keys[at] >> shift) < b {
            at += 1;
        }
        starts.push(at as u32);
    }
    starts.push(keys.len() as u32);
    (starts, shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_key_and_its_repeats_and_nothing_else() {
        for n in [0usize, 1, 2, 3, 4, 5, 17, 1000, 4096] {
            let mut keys: Vec<u64> = (0..n as u64)
                .map(|i| crate::hash::name_key(&i.to_string()))
                .collect();
            if n > 2 {
                keys.push(keys[1]);
                keys.push(u64::MAX);
                keys.push(0);
            }
            let set = SortedKeys::from_unsorted(keys.clone());
            assert!(set.keys().windows(2).all(|w| w[0] <= w[1]));
            for k in &keys {
                let r = set.range(*k);
                let expected = keys.iter().filter(|x| *x == k).count();
                assert_eq!(r.len(), expected, "key {k} of {n}");
                assert!(set.keys()[r].iter().all(|x| x == k));
            }
            for i in 0..200u64 {
                let k = crate::hash::name_key(&format!("absent-{i}"));
                assert_eq!(set.contains(k), keys.contains(&k));
                assert!(set.range(k).is_empty() || keys.contains(&k));
            }
            assert!(set.heap_bytes() >= set.len() as u64 * 8);
        }
    }

    #[test]
    fn a_borrowed_view_answers_as_a_binary_search() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut keys: Vec<u64> = (0..50_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            })
            .collect();
        // Skewed keys too: small values crowd the first run.
        keys.extend(0..3_000u64);
        keys.extend([u64::MAX, u64::MAX - 1, 1 << 63]);
        keys.sort_unstable();
        keys.dedup();
        for n in [0, 1, 7, 8, 9, 100, keys.len()] {
            let set = &keys[..n];
            let index = SortedKeys::new(set);
            for probe in keys.iter().copied().chain([5_000, 1 << 40, u64::MAX - 2]) {
                assert_eq!(
                    index.contains(probe),
                    set.binary_search(&probe).is_ok(),
                    "{n} keys, probe {probe}"
                );
                assert_eq!(index.range(probe).len(), usize::from(set.contains(&probe)));
                // Neighbours that are not keys.
                for p in [probe.wrapping_add(1), probe.wrapping_sub(1)] {
                    assert_eq!(index.contains(p), set.binary_search(&p).is_ok());
                }
            }
        }
        assert!(SortedKeys::new(&keys).directory_bytes() > 0);
        assert_eq!(SortedKeys::new(&keys[..3]).directory_bytes(), 0);
    }
}
