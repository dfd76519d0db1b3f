//! The interned candidate table of orphan cleanup: every candidate once, as a dense `u32` id
//! with its directory (an id into a small table of directory locations), its name (in one
//! arena string), size and class. Nothing per candidate is a separate allocation.
//!
//! A candidate's location is exactly `dirs[dir].child(name)`: [`Location`]s are normalized, so
//! two locations are equal exactly when their parents and their names are, and comparing
//! `(directory id, name)` is as byte-exact as comparing whole locations.
//!
//! Names are found through a map from a 64-bit hash (ahash, randomly seeded) of the name to the
//! newest candidate with that hash, and a chain (`next`) through every older candidate with the
//! same hash; lookups compare the names themselves, so hash collisions only cost a comparison.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::clean::report::FileClass;
use crate::storage::Location;

/// End of a chain.
const NONE: u32 = u32::MAX;

/// A hasher for keys that already are well-mixed 64-bit hashes: it passes them through.
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A directory that holds candidates.
#[derive(Debug, Clone)]
pub(crate) struct CandidateDir {
    /// Its location.
    pub location: Location,
    /// The data root it lies under, for data directories (empty-directory pruning).
    pub data_root: Option<Location>,
}

/// Every candidate of one run, interned.
#[derive(Debug, Default)]
pub(crate) struct CandidateTable {
    dirs: Vec<CandidateDir>,
    dir_ids: HashMap<Location, u32>,
    /// All names, concatenated; candidate `i` is `names[ends[i-1]..ends[i]]`.
    names: String,
    ends: Vec<usize>,
    dir: Vec<u32>,
    size: Vec<u64>,
    class: Vec<FileClass>,
    /// Next older candidate whose name has the same hash.
    next: Vec<u32>,
    heads: HashMap<u64, u32, BuildHasherDefault<PassThrough>>,
    /// Hashes names for `heads` (ahash, randomly seeded; faster than the default SipHash on the
    /// millions of lookups a large table makes).
    hasher: ahash::RandomState,
}

impl CandidateTable {
    /// Number of candidates.
    pub fn len(&self) -> usize {
        self.dir.len()
    }

    /// True if there is no candidate.
    pub fn is_empty(&self) -> bool {
        self.dir.is_empty()
    }

    /// The id of directory `location`, adding it if new. `None` when the table is full.
    pub fn add_dir(&mut self, location: &Location, data_root: Option<&Location>) -> Option<u32> {
        if let Some(id) = self.dir_ids.get(location) {
            return Some(*id);
        }
        let id = u32::try_from(self.dirs.len()).ok().filter(|i| *i != NONE)?;
        self.dirs.push(CandidateDir {
            location: location.clone(),
            data_root: data_root.cloned(),
        });
        self.dir_ids.insert(location.clone(), id);
        Some(id)
    }

    /// The id of directory `location`, if it holds candidates (or was listed).
    pub fn dir_id(&self, location: &Location) -> Option<u32> {
        self.dir_ids.get(location).copied()
    }

    /// Directory `id`.
    pub fn dir(&self, id: u32) -> Option<&CandidateDir> {
        self.dirs.get(id as usize)
    }

    /// Adds a candidate; `false` when the table is full (the file is then not a candidate,
    /// which only ever deletes less). The caller adds each location once.
    pub fn push(&mut self, dir: u32, name: &str, size: u64, class: FileClass) -> bool {
        let Some(id) = u32::try_from(self.dir.len()).ok().filter(|i| *i != NONE) else {
            return false;
        };
        self.names.push_str(name);
        self.ends.push(self.names.len());
        self.dir.push(dir);
        self.size.push(size);
        self.class.push(class);
        let h = self.hasher.hash_one(name);
        let prev = self.heads.insert(h, id).unwrap_or(NONE);
        self.next.push(prev);
        true
    }

    /// The name of candidate `id` ("" for an unknown id).
    pub fn name(&self, id: u32) -> &str {
        let i = id as usize;
        let end = self.ends.get(i).copied().unwrap_or(0);
        let start = if i == 0 {
            0
        } else {
            self.ends.get(i - 1).copied().unwrap_or(end)
        };
        self.names.get(start..end).unwrap_or("")
    }

    /// The directory id of candidate `id`.
    pub fn dir_of(&self, id: u32) -> u32 {
        self.dir.get(id as usize).copied().unwrap_or(NONE)
    }

    /// Size in bytes of candidate `id` (from the listing).
    pub fn size(&self, id: u32) -> u64 {
        self.size.get(id as usize).copied().unwrap_or(0)
    }

    /// Class of candidate `id`.
    pub fn class(&self, id: u32) -> FileClass {
        self.class
            .get(id as usize)
            .copied()
            .unwrap_or(FileClass::Other)
    }

    /// The location of candidate `id`.
    pub fn location(&self, id: u32) -> Option<Location> {
        let dir = self.dir(self.dir_of(id))?;
        Some(dir.location.child(self.name(id)))
    }

    /// Some candidate named `name` (the newest), if any. Pass it to [`Self::same_name`] for
    /// all of them.
    pub fn find(&self, name: &str) -> Option<u32> {
        let h = self.hasher.hash_one(name);
        let mut id = self.heads.get(&h).copied().unwrap_or(NONE);
        while id != NONE {
            if self.name(id) == name {
                return Some(id);
            }
            id = self.next.get(id as usize).copied().unwrap_or(NONE);
        }
        None
    }

    /// Every candidate with the same name as `first`, a result of [`Self::find`].
    pub fn same_name(&self, first: u32) -> SameName<'_> {
        SameName {
            table: self,
            name: self.name(first),
            id: first,
        }
    }
}

/// Iterator over the candidates sharing one name.
pub(crate) struct SameName<'a> {
    table: &'a CandidateTable,
    name: &'a str,
    id: u32,
}

impl Iterator for SameName<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        while self.id != NONE {
            let id = self.id;
            self.id = self.table.next.get(id as usize).copied().unwrap_or(NONE);
            if self.table.name(id) == self.name {
                return Some(id);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(s: &str) -> Location {
        Location::parse(s).unwrap()
    }

    #[test]
    fn names_dirs_and_duplicates() {
        let mut t = CandidateTable::default();
        let a = t
            .add_dir(&loc("/t/dt=1/bucket-0"), Some(&loc("/t")))
            .unwrap();
        let b = t
            .add_dir(&loc("/t/dt=2/bucket-0"), Some(&loc("/t")))
            .unwrap();
        let m = t.add_dir(&loc("/t/manifest"), None).unwrap();
        assert_eq!(t.add_dir(&loc("/t/dt=1/bucket-0"), None), Some(a));
        assert!(t.push(a, "data-1.orc", 10, FileClass::Data));
        assert!(t.push(b, "data-1.orc", 11, FileClass::Data));
        assert!(t.push(m, "manifest-x", 12, FileClass::Manifest));
        assert!(t.push(a, "data-%2F.orc", 13, FileClass::Data));
        assert_eq!(t.len(), 4);
        assert_eq!(t.find("nope"), None);
        let first = t.find("data-1.orc").unwrap();
        let mut all: Vec<u32> = t.same_name(first).collect();
        all.sort();
        assert_eq!(all, vec![0, 1]);
        assert_eq!(t.same_name(t.find("manifest-x").unwrap()).count(), 1);
        assert_eq!(t.location(3).unwrap(), loc("/t/dt=1/bucket-0/data-%2F.orc"));
        assert_eq!(t.location(1).unwrap(), loc("/t/dt=2/bucket-0/data-1.orc"));
        assert_eq!(t.size(2), 12);
        assert_eq!(t.class(2), FileClass::Manifest);
        assert_eq!(t.dir_id(&loc("/t/manifest")), Some(m));
        assert_eq!(t.dir_id(&loc("/t/index")), None);
        assert_eq!(t.name(99), "");
        assert_eq!(t.location(99), None);
    }
}
