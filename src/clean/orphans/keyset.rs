//! A set of 64-bit reference keys folded in from many sorted runs (the read units' results)
//! with little memory besides the set itself: one sorted, deduplicated vector, and a bounded
//! buffer of keys not merged yet. When the buffer fills, it is sorted, the keys already in the
//! set are dropped, and the rest is merged into the set in place (from the back), so the set
//! never exists twice and is never re-sorted whole.

use crate::clean::shared::keys::SortedKeys;
use crate::clean::shared::spill::RecordLog;
use crate::error::{Error, Result};

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

/// [`KeyIndex`] owning its keys, for sharing (in an `Arc`) with the listing's blocking
/// sections ([`crate::storage::StatFilter`]); [`SortedKeys::into_keys`] gives them back.
pub(crate) type SharedKeyIndex = SortedKeys<Vec<u64>>;

/// The error of a [`KeyLog`]'s temporary file.
fn spill_error(e: std::io::Error) -> Error {
    Error::storage(
        std::env::temp_dir().display().to_string(),
        format!("the temporary file of the reference names failed: {e}"),
    )
}

/// Bytes of keys a [`KeyLog`] keeps in memory before it moves to a temporary file.
const LOG_IN_MEMORY: usize = 1 << 20;

/// Keys per record of a [`KeyLog`].
const KEYS_PER_RECORD: usize = 8192;

/// Keys looked up only once, at the end (the names of the references: only candidates that
/// no location references are checked against them): appended as they come, in any order
/// and with repeats, to a log that moves to an anonymous temporary file past 1 MiB
/// ([`RecordLog`]), and read back once ([`KeyLog::for_each`]). Orphan removal thus never
/// holds the name keys (8 bytes a referenced file) while it lists the table.
#[derive(Debug)]
pub(crate) struct KeyLog {
    log: RecordLog,
    keys: u64,
}

impl Default for KeyLog {
    fn default() -> Self {
        KeyLog {
            log: RecordLog::new(LOG_IN_MEMORY),
            keys: 0,
        }
    }
}

impl KeyLog {
    /// Appends `keys`. Fails if the temporary file cannot be created or written.
    pub fn add(&mut self, keys: &[u64]) -> Result<()> {
        for chunk in keys.chunks(KEYS_PER_RECORD) {
            self.log
                .push(|buf| {
                    buf.reserve(chunk.len() * 8);
                    for k in chunk {
                        buf.extend_from_slice(&k.to_le_bytes());
                    }
                })
                .map_err(spill_error)?;
            self.keys += chunk.len() as u64;
        }
        Ok(())
    }

    /// Keys appended (repeats counted).
    pub fn len(&self) -> u64 {
        self.keys
    }

    /// Heap bytes held (the in-memory part or the write buffer).
    pub fn bytes(&self) -> u64 {
        self.log.heap_bytes()
    }

    /// Done appending: the write buffer goes to the file.
    pub fn finish(mut self) -> Result<KeyLog> {
        self.log.finish().map_err(spill_error)?;
        Ok(self)
    }

    /// Calls `f` with the keys, a run at a time, in the order appended. A record cut short or
    /// a file that cannot be read is an error.
    pub fn for_each(&self, mut f: impl FnMut(&[u64])) -> Result<()> {
        let mut reader = self.log.reader();
        let mut keys = Vec::with_capacity(KEYS_PER_RECORD);
        while let Some(record) = reader.next_record() {
            let record = record.map_err(spill_error)?;
            if record.len() % 8 != 0 {
                return Err(spill_error(std::io::Error::other(
                    "a record of keys is cut short",
                )));
            }
            keys.clear();
            keys.extend(record.chunks_exact(8).map(|b| {
                let mut k = [0u8; 8];
                k.copy_from_slice(b);
                u64::from_le_bytes(k)
            }));
            f(&keys);
        }
        Ok(())
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
    fn a_key_log_gives_back_every_key_in_order_in_memory_and_spilled() {
        for n in [0usize, 5, 20_000, 300_000] {
            let keys: Vec<u64> = (0..n as u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .collect();
            let mut log = KeyLog::default();
            for part in keys.chunks(7_777) {
                log.add(part).unwrap();
            }
            let log = log.finish().unwrap();
            assert_eq!(log.len(), n as u64);
            // Past 1 MiB the keys live in the file: only a write buffer stays.
            if n * 8 > LOG_IN_MEMORY {
                assert!(log.bytes() < LOG_IN_MEMORY as u64);
            }
            let mut back = Vec::new();
            log.for_each(|run| back.extend_from_slice(run)).unwrap();
            assert_eq!(back, keys);
        }
    }
}
