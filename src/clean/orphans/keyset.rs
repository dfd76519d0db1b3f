//! A set of 64-bit reference keys folded in from many sorted runs (the read units' results)
//! with little memory besides the set itself: one sorted, deduplicated vector, and a bounded
//! buffer of keys not merged yet. When the buffer fills, it is sorted, the keys already in the
//! set are dropped, and the rest is merged into the set in place (from the back), so the set
//! never exists twice and is never re-sorted whole.

use crate::clean::shared::keys::SortedKeys;

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

/// Membership tests of millions of sorted, deduplicated keys held elsewhere (as
/// [`KeySet::finish`] returns them): the shared sorted-key directory
/// ([`crate::clean::shared::keys::SortedKeys`]) over a borrowed slice.
pub(crate) type KeyIndex<'a> = SortedKeys<&'a [u64]>;

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
}
