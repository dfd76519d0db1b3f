//! The keys of orphan removal and their shards. A run on an engine splits the merge of the
//! partial results and the decision by shard: every candidate and every reference of one file
//! name falls into the same shard, so each shard decides its candidates alone.
//!
//! A location key ([`child`], [`location`]) is the 64-bit key of the location whose top
//! [`NAME_BITS`] bits are replaced by those of the key of the location's last segment (its file
//! name, [`name_key`]). The shard of a key is taken from those top bits alone ([`shard_of`]),
//! so a location key and the name key of its file name always have the same shard. The other
//! 48 bits still come from the whole location: a collision (which only ever keeps a file) needs
//! two locations whose names agree in 16 bits and whose locations agree in 48.

use serde::{Deserialize, Serialize};

use crate::hash::{child_key, location_key, name_key, DirKeys};

/// Top bits of a location key taken from its name's key.
const NAME_BITS: u32 = 16;

/// The bits of a location key that come from its name's key.
const HIGH: u64 = !0u64 << (64 - NAME_BITS);

/// The largest shard count.
pub(crate) const MAX_SHARDS: u32 = 1 << NAME_BITS;

/// `location`'s key with the top bits of `name` (the key of its last segment).
fn graft(location: u64, name: u64) -> u64 {
    (name & HIGH) | (location & !HIGH)
}

/// The location key of `name` in the directory `dir` hashes.
pub(crate) fn child(dir: &DirKeys, name: &str) -> u64 {
    graft(dir.child(name), name_key(name))
}

/// The location key of `name` in directory `dir` (without a trailing `/`).
pub(crate) fn child_of(dir: &str, name: &str) -> u64 {
    graft(child_key(dir, name), name_key(name))
}

/// The location key of `location`.
pub(crate) fn location(location: &str) -> u64 {
    let name = location.rsplit('/').next().unwrap_or(location);
    graft(location_key(location), name_key(name))
}

/// The shard, of `shards` (1 to [`MAX_SHARDS`]), of a location or name key.
pub(crate) fn shard_of(key: u64, shards: u32) -> u32 {
    (((key >> (64 - NAME_BITS)) * u64::from(shards)) >> NAME_BITS) as u32
}

/// The sharded decision's progress, kept in the driver's plan state.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Sharded {
    /// The shard count.
    pub shards: u32,
    /// The id the delete units carry.
    pub decision: u64,
    /// The current round (a new one whenever a gate found new versions).
    pub round: u32,
    /// The last gate found no new version: the shards' reports of this round stand.
    pub confirmed: bool,
    /// Versions whose references were read (after judging what could not be read).
    pub versions_read: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_location_and_its_name_share_a_shard() {
        let dir = "s3://b/t/dt=2024-01-01/bucket-0";
        let names = (0..2000).map(|i| format!("data-{i}.orc"));
        let mut seen = vec![0u32; 7];
        for n in names {
            let full = format!("{dir}/{n}");
            let k = location(&full);
            assert_eq!(k, child_of(dir, &n));
            assert_eq!(k, child(&DirKeys::new(dir), &n));
            for shards in [1, 2, 7, 64, MAX_SHARDS] {
                assert_eq!(shard_of(k, shards), shard_of(name_key(&n), shards));
                assert!(shard_of(k, shards) < shards);
            }
            seen[shard_of(k, 7) as usize] += 1;
            // The low bits still depend on the directory.
            assert_ne!(k, child_of("s3://b/t/dt=2024-01-02/bucket-0", &n));
        }
        // Names spread over the shards.
        assert!(seen.iter().all(|n| *n > 200), "{seen:?}");
        assert_eq!(shard_of(u64::MAX, MAX_SHARDS), MAX_SHARDS - 1);
        assert_eq!(shard_of(0, 3), 0);
    }
}
