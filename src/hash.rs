//! Hash maps and sets with a fast, randomly seeded hasher (ahash), for the sets of millions of
//! locations and names that expiry and orphan removal build. The random seed keeps them
//! resistant to crafted collisions, like the standard library's default.
//!
//! Also 64-bit *keys* of names and locations ([`name_key`], [`location_key`]) from a fixed
//! seed, so that the same string has the same key in a dry run and the real run. They stand in
//! for strings only where a collision is harmless: a pre-filter that is confirmed on the exact
//! string, or a decision whose wrong outcome keeps a file (never one that deletes a file).

use std::hash::{BuildHasher, Hash, Hasher};

/// A `HashMap` with [`ahash::RandomState`].
pub type FastMap<K, V> = std::collections::HashMap<K, V, ahash::RandomState>;

/// A `HashSet` with [`ahash::RandomState`].
pub type FastSet<T> = std::collections::HashSet<T, ahash::RandomState>;

/// The fixed seed of [`name_key`] and [`location_key`].
const KEYS: ahash::RandomState = ahash::RandomState::with_seeds(
    0x243f_6a88_85a3_08d3,
    0x1319_8a2e_0370_7344,
    0xa409_3822_299f_31d0,
    0x082e_fa98_ec4e_6c89,
);

/// A deterministic 64-bit key of a file name.
pub fn name_key(name: &str) -> u64 {
    KEYS.hash_one(name)
}

/// A deterministic 64-bit key of a location string, the same as [`child_key`] of its parent
/// and last segment (so a caller that has a directory and a name needs no joined string).
pub fn location_key(location: &str) -> u64 {
    match location.rfind('/') {
        Some(i) => child_key(&location[..i], &location[i + 1..]),
        None => child_key("", location),
    }
}

/// [`location_key`] of `dir/name`, for a `dir` without a trailing `/` and a `name` without
/// any `/`.
pub fn child_key(dir: &str, name: &str) -> u64 {
    let mut h = KEYS.build_hasher();
    dir.hash(&mut h);
    name.hash(&mut h);
    h.finish()
}

/// [`child_key`] of one directory and many names: the directory is hashed once, each name
/// then costs only its own bytes.
#[derive(Clone)]
pub struct DirKeys(ahash::AHasher);

impl DirKeys {
    /// For directory `dir` (without a trailing `/`).
    pub fn new(dir: &str) -> Self {
        let mut h = KEYS.build_hasher();
        dir.hash(&mut h);
        DirKeys(h)
    }

    /// [`child_key`] of the directory and `name`.
    pub fn child(&self, name: &str) -> u64 {
        let mut h = self.0.clone();
        name.hash(&mut h);
        h.finish()
    }
}

impl std::fmt::Debug for DirKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DirKeys")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_key_is_child_key_of_its_parts() {
        let dir = "file:///t/dt=1/bucket-0";
        let name = "data-1.orc";
        assert_eq!(location_key(&format!("{dir}/{name}")), child_key(dir, name));
        assert_ne!(
            location_key("file:///t/a/bc"),
            location_key("file:///t/ab/c")
        );
        assert_eq!(DirKeys::new(dir).child(name), child_key(dir, name));
        assert_eq!(DirKeys::new("").child("x"), child_key("", "x"));
        assert_eq!(name_key("x"), name_key("x"));
        assert_ne!(name_key("x"), name_key("y"));
    }
}
