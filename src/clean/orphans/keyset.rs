//! A set of 64-bit reference keys folded in from many sorted runs (the read units' results)
//! with little memory besides the set itself: one sorted, deduplicated vector, and a bounded
//! buffer of keys not merged yet. When the buffer fills, it is sorted, the keys already in the
//! set are dropped, and the rest is merged into the set in place (from the back), so the set
//! never exists twice and is never re-sorted whole.

/// Keys buffered before a merge: at least this many, else a quarter of the set.
const PENDING_MIN: usize = 1 << 16;

/// Sorted, deduplicated keys and a buffer of keys still to merge.
#[derive(Debug, Default)]
pub(crate) struct KeySet {
    sorted: Vec<u64>,
    pending: Vec<u64>,
}

impl KeySet {
    /// Adds `keys` (any order, duplicates allowed).
    pub fn add(&mut self, keys: &[u64]) {
        self.pending.extend_from_slice(keys);
        if self.pending.len() >= PENDING_MIN.max(self.sorted.len() / 4) {
            self.flush();
        }
    }

    /// Heap bytes held (capacities).
    pub fn bytes(&self) -> u64 {
        ((self.sorted.capacity() + self.pending.capacity()) * 8) as u64
    }

    /// Every key, sorted and deduplicated, the buffer released.
    pub fn finish(mut self) -> Vec<u64> {
        self.flush();
        self.sorted.shrink_to_fit();
        self.sorted
    }

    /// Merges the buffer into the set.
    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let mut fresh = std::mem::take(&mut self.pending);
        fresh.sort_unstable();
        fresh.dedup();
        // Only the keys not in the set yet (both sorted: one walk).
        let mut i = 0;
        fresh.retain(|k| {
            while i < self.sorted.len() && self.sorted[i] < *k {
                i += 1;
            }
            !(i < self.sorted.len() && self.sorted[i] == *k)
        });
        if !fresh.is_empty() {
            let (n, m) = (self.sorted.len(), fresh.len());
            self.sorted.reserve_exact(m);
            self.sorted.resize(n + m, 0);
            // Merge from the back: every slot written is free (beyond the keys not moved yet).
            let (mut i, mut j, mut k) = (n, m, n + m);
            while j > 0 {
                if i > 0 && self.sorted[i - 1] > fresh[j - 1] {
                    self.sorted[k - 1] = self.sorted[i - 1];
                    i -= 1;
                } else {
                    self.sorted[k - 1] = fresh[j - 1];
                    j -= 1;
                }
                k -= 1;
            }
        }
        // The buffer keeps its allocation for the next keys (it is bounded by the set).
        fresh.clear();
        self.pending = fresh;
    }
}

/// Sorted, deduplicated keys with a bucket index on their top bits, for membership tests of
/// millions of keys: a plain binary search over a set of many megabytes misses the cache at
/// almost every step, the index finds the few keys sharing a bucket in one or two lines.
///
/// The keys are hashes (uniform), so a bucket holds a handful of them; any other distribution
/// is answered correctly too, only more slowly.
#[derive(Debug)]
pub(crate) struct KeyIndex<'a> {
    keys: &'a [u64],
    /// `starts[b]`: the first key whose bucket is `b` or later; one more entry than buckets.
    /// Empty when the keys are too few (or too many for `u32` positions) for an index.
    starts: Vec<u32>,
    /// Right shift from a key to its bucket.
    shift: u32,
}

/// Keys per bucket the index aims at (at least).
const KEYS_PER_BUCKET: usize = 4;

/// Most index bits (16 M buckets, 64 MiB of positions, for 64 M keys or more).
const MAX_INDEX_BITS: u32 = 24;

impl<'a> KeyIndex<'a> {
    /// Indexes `keys`, which must be sorted ascending (as [`KeySet::finish`] returns them).
    pub fn new(keys: &'a [u64]) -> Self {
        let buckets = keys.len() / KEYS_PER_BUCKET;
        if buckets < 2 || u32::try_from(keys.len()).is_err() {
            return KeyIndex {
                keys,
                starts: Vec::new(),
                shift: 0,
            };
        }
        let bits = (usize::BITS - 1 - buckets.leading_zeros()).min(MAX_INDEX_BITS);
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
        KeyIndex {
            keys,
            starts,
            shift,
        }
    }

    /// True if `key` is one of the keys.
    pub fn contains(&self, key: u64) -> bool {
        if self.starts.is_empty() {
            return self.keys.binary_search(&key).is_ok();
        }
        let b = (key >> self.shift) as usize;
        let (Some(&lo), Some(&hi)) = (self.starts.get(b), self.starts.get(b + 1)) else {
            return self.keys.binary_search(&key).is_ok();
        };
        self.keys
            .get(lo as usize..hi as usize)
            .is_some_and(|run| run.contains(&key))
    }

    /// Heap bytes of the index (not of the keys).
    pub fn bytes(&self) -> u64 {
        (self.starts.capacity() * 4) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_runs_into_one_sorted_set() {
        let mut set = KeySet::default();
        let mut all = Vec::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for run in 0..40u64 {
            let mut keys = Vec::new();
            for _ in 0..(5_000 + run * 97) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Many repeats across runs, as files recur in many manifests.
                keys.push(x % 150_000);
            }
            all.extend_from_slice(&keys);
            set.add(&keys);
            assert!(set.bytes() > 0);
        }
        all.sort_unstable();
        all.dedup();
        assert_eq!(set.finish(), all);
        assert!(KeySet::default().finish().is_empty());
    }

    #[test]
    fn index_answers_as_a_binary_search() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut keys: Vec<u64> = (0..50_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            })
            .collect();
        // Skewed keys too: small values crowd the first bucket.
        keys.extend(0..3_000u64);
        keys.extend([u64::MAX, u64::MAX - 1, 1 << 63]);
        keys.sort_unstable();
        keys.dedup();
        for n in [0, 1, 7, 8, 9, 100, keys.len()] {
            let set = &keys[..n];
            let index = KeyIndex::new(set);
            for probe in keys.iter().copied().chain([5_000, 1 << 40, u64::MAX - 2]) {
                assert_eq!(
                    index.contains(probe),
                    set.binary_search(&probe).is_ok(),
                    "{n} keys, probe {probe}"
                );
                // Neighbours that are not keys.
                for p in [probe.wrapping_add(1), probe.wrapping_sub(1)] {
                    assert_eq!(index.contains(p), set.binary_search(&p).is_ok());
                }
            }
        }
        assert!(KeyIndex::new(&keys).bytes() > 0);
    }
}
