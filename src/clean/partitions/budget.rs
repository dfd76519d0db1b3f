//! What a partition drop, preview or expiry holds that grows with the table, charged to the
//! run's memory bound ([`crate::clean::RunControl::max_memory`], [`MemoryBudget`]): the live
//! entries merged from the latest snapshot's manifests and the plan (the DELETE entries of the
//! commit, the partitions selected). Every charge happens before the commit writes anything, so
//! a run stopped by its bound has committed nothing.
//!
//! The merge itself runs in shared code that does not charge as it goes, so it is charged in two
//! steps: before the merge, a floor read from the manifest lists (the live entries they count,
//! ADD minus DELETE, at the size of an entry without its strings: the merge holds at least that
//! when it ends); once merged, the estimate of the live entries with their strings replaces it.

use crate::error::Result;
use crate::memory::{hashed, MemoryBudget};
use crate::spec::manifest::{ManifestEntry, SimpleStats};
use crate::spec::snapshot::Snapshot;
use crate::table::Table;

/// About what one decoded entry holds on the heap and inline.
pub(crate) fn entry_bytes(e: &ManifestEntry) -> u64 {
    let f = &e.file;
    let stats = |s: &SimpleStats| {
        s.min_values.len() + s.max_values.len() + s.null_counts.as_ref().map_or(0, |v| v.len() * 16)
    };
    let strings = |v: &Option<Vec<String>>| {
        v.as_ref()
            .map_or(0, |v| v.iter().map(|s| 24 + s.len()).sum::<usize>())
    };
    (std::mem::size_of::<ManifestEntry>()
        + e.partition.len()
        + f.file_name.len()
        + f.extra_files.iter().map(|s| 24 + s.len()).sum::<usize>()
        + f.embedded_index.as_ref().map_or(0, Vec::len)
        + f.external_path.as_ref().map_or(0, String::len)
        + f.min_key.len()
        + f.max_key.len()
        + stats(&f.key_stats)
        + stats(&f.value_stats)
        + strings(&f.value_stats_cols)
        + strings(&f.write_cols)
        + f.write_cols_sequences.as_ref().map_or(0, |v| v.len() * 8)) as u64
}

/// Bytes of a set of partitions (serialized rows) in a hash set.
pub(crate) fn partition_set_bytes<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> u64 {
    parts
        .into_iter()
        .map(|p| hashed(std::mem::size_of::<Vec<u8>>()) + p.len() as u64)
        .sum()
}

/// Charges to one budget, released when dropped (or by [`Charges::release_all`]).
pub(crate) struct Charges {
    budget: MemoryBudget,
    held: u64,
}

impl Charges {
    /// Nothing charged yet to `budget`.
    pub(crate) fn new(budget: MemoryBudget) -> Self {
        Charges { budget, held: 0 }
    }

    /// Charges `bytes` for `what`; past the bound nothing is charged and the error names it.
    pub(crate) fn charge(&mut self, what: &str, bytes: u64) -> Result<()> {
        self.budget.charge(what, bytes)?;
        self.held += bytes;
        Ok(())
    }

    /// Gives back everything charged so far.
    pub(crate) fn release_all(&mut self) {
        self.budget.release(self.held);
        self.held = 0;
    }

    /// Charges the live entries `live` of a merge (exact estimate).
    pub(crate) fn charge_live(&mut self, live: &[ManifestEntry]) -> Result<()> {
        let bytes = live.iter().map(entry_bytes).sum();
        self.charge("live entries merged from the manifests", bytes)
    }

    /// Charges the least the merge of `snapshot`'s manifests holds: the live entries the
    /// manifest lists count (ADD minus DELETE), at the size of an entry without its strings.
    /// Reads the two manifest lists (small), not the manifests.
    pub(crate) async fn charge_merge_floor(
        &mut self,
        table: &Table,
        snapshot: &Snapshot,
    ) -> Result<()> {
        let (mut added, mut deleted): (u64, u64) = (0, 0);
        for list in [&snapshot.base_manifest_list, &snapshot.delta_manifest_list] {
            for m in table.reader().manifest_list(table.paths(), list).await? {
                added = added.saturating_add(m.num_added_files.max(0) as u64);
                deleted = deleted.saturating_add(m.num_deleted_files.max(0) as u64);
            }
        }
        let live = added.saturating_sub(deleted);
        let floor = live.saturating_mul(std::mem::size_of::<ManifestEntry>() as u64);
        self.charge("entries held while merging the manifests", floor)
    }
}

impl Drop for Charges {
    fn drop(&mut self) {
        self.release_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_are_released_when_dropped_and_fail_past_the_bound() {
        let budget = MemoryBudget::new(Some(10_000));
        let e = ManifestEntry {
            partition: vec![0; 100],
            ..Default::default()
        };
        let one = entry_bytes(&e);
        assert!(one >= 100 + std::mem::size_of::<ManifestEntry>() as u64);
        {
            let mut c = Charges::new(budget.clone());
            c.charge_live(std::slice::from_ref(&e)).unwrap();
            assert_eq!(budget.used(), one);
            let err = c.charge("the plan", 10_000).unwrap_err().to_string();
            assert!(
                err.contains("max_memory") && err.contains("the plan"),
                "{err}"
            );
            assert_eq!(budget.used(), one);
        }
        assert_eq!(budget.used(), 0);
        assert_eq!(
            partition_set_bytes([&[1u8, 2][..], &[3u8][..]]),
            2 * hashed(std::mem::size_of::<Vec<u8>>()) + 3
        );
    }
}
