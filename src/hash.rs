//! Hash maps and sets with a fast, randomly seeded hasher (ahash), for the sets of millions of
//! locations and names that expiry and orphan removal build. The random seed keeps them
//! resistant to crafted collisions, like the standard library's default.

/// A `HashMap` with [`ahash::RandomState`].
pub type FastMap<K, V> = std::collections::HashMap<K, V, ahash::RandomState>;

/// A `HashSet` with [`ahash::RandomState`].
pub type FastSet<T> = std::collections::HashSet<T, ahash::RandomState>;
