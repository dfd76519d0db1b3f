//! A sorted set of 64-bit location keys ([`crate::hash::location_key`]) with a radix
//! directory: about 10 bytes a key, where a hash set of them takes 17–19 (issue 19), with a
//! lookup that touches one or two cache lines.
//!
//! Keys come from a fixed-seed hash, so they are spread evenly: the top bits of a key say in
//! which short run of the sorted keys it would be.

/// Sorted location keys (repeats kept, so that a caller can keep a value per key in a parallel
/// vector) with, for every value of their top bits, where its run starts.
#[derive(Debug, Default)]
pub struct SortedKeys {
    keys: Vec<u64>,
    /// `starts[b]..starts[b + 1]`: the keys whose top bits are `b`.
    starts: Vec<u32>,
    /// `64 - bits` (a key's run is `key >> shift`); 64 when `starts` has one run.
    shift: u32,
}

impl SortedKeys {
    /// From keys already sorted ascending.
    pub fn from_sorted(keys: Vec<u64>) -> SortedKeys {
        // About two keys a run: the directory costs about 2 bytes a key.
        let bits = match keys.len() {
            0..=3 => 0,
            n => (usize::BITS - 1 - (n / 2).leading_zeros()).min(26),
        };
        let runs = 1usize << bits;
        let shift = 64 - bits;
        let run_of = |k: u64| -> usize {
            if bits == 0 {
                0
            } else {
                (k >> shift) as usize
            }
        };
        let mut starts = Vec::with_capacity(runs + 1);
        let mut at = 0usize;
        for r in 0..runs {
            while at < keys.len() && run_of(keys[at]) < r {
                at += 1;
            }
            starts.push(at as u32);
        }
        starts.push(keys.len() as u32);
        SortedKeys {
            keys,
            starts,
            shift,
        }
    }

    /// From keys in any order (sorted here; repeats kept). More than `u32::MAX` keys cannot
    /// be indexed: callers bound their candidates well below that.
    pub fn from_unsorted(mut keys: Vec<u64>) -> SortedKeys {
        keys.sort_unstable();
        keys.shrink_to_fit();
        SortedKeys::from_sorted(keys)
    }

    /// The sorted keys.
    pub fn keys(&self) -> &[u64] {
        &self.keys
    }

    /// Number of keys (repeats counted).
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True if there are none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The positions (in [`SortedKeys::keys`]) of the keys equal to `key`.
    pub fn range(&self, key: u64) -> std::ops::Range<usize> {
        let run = if self.shift >= 64 {
            0
        } else {
            (key >> self.shift) as usize
        };
        let (Some(&lo), Some(&hi)) = (self.starts.get(run), self.starts.get(run + 1)) else {
            return 0..0;
        };
        let (lo, hi) = (lo as usize, hi as usize);
        let Some(run_keys) = self.keys.get(lo..hi) else {
            return 0..0;
        };
        let first = lo + run_keys.partition_point(|k| *k < key);
        let end = first
            + self.keys[first..hi]
                .iter()
                .take_while(|k| **k == key)
                .count();
        first..end
    }

    /// True if `key` is one of the keys.
    pub fn contains(&self, key: u64) -> bool {
        !self.range(key).is_empty()
    }

    /// About the bytes held.
    pub fn heap_bytes(&self) -> u64 {
        (self.keys.capacity() * 8 + self.starts.capacity() * 4) as u64
    }
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
            }
        }
    }
}
