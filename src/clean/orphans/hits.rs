//! Compact references of one manifest or index manifest to candidates.
//!
//! A decoded manifest is turned into [`Hits`] at once (on a blocking thread, next to the
//! decoder) and its entries are dropped: what is kept is one candidate id per referenced name
//! that is a candidate, grouped by the directory the writer put the file in. The directory is
//! resolved later, once per group and branch, with that branch's path factory.
//!
//! Matching stays byte-exact: a reference matches a candidate when the candidate's name equals
//! the referenced name and its directory equals the resolved directory, and a [`Location`] is
//! the same exactly when its parent and its name are.

use std::collections::HashMap;

use super::interned::CandidateTable;
use crate::error::Result;
use crate::spec::manifest::{IndexManifestEntry, ManifestEntry};
use crate::storage::Location;
use crate::table::{ManifestFiles, PathFactory};

/// Where a group of referenced names lives, before a branch's path factory resolves it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum DirRef {
    /// A data or changelog file without external path: its bucket directory.
    Bucket {
        /// Serialized partition.
        partition: Box<[u8]>,
        /// Bucket.
        bucket: i32,
    },
    /// An index file without external path: its bucket directory or `index/`, by the branch's
    /// options.
    Index {
        /// Serialized partition.
        partition: Box<[u8]>,
        /// Bucket.
        bucket: i32,
        /// A global index file (always in `index/`).
        global: bool,
    },
    /// A fixed directory: the parent of an external path.
    Fixed(Location),
}

impl DirRef {
    /// True if `self` is the bucket (`index` `None`) or index directory of `partition` and
    /// `bucket`.
    fn is_local(&self, p: &[u8], b: i32, index: Option<bool>) -> bool {
        match (self, index) {
            (DirRef::Bucket { partition, bucket }, None) => *bucket == b && **partition == *p,
            (
                DirRef::Index {
                    partition,
                    bucket,
                    global,
                },
                Some(g),
            ) => *bucket == b && *global == g && **partition == *p,
            _ => false,
        }
    }

    /// The directory `self` names for a branch with path factory `paths`.
    pub fn resolve(&self, paths: &PathFactory) -> Result<Option<Location>> {
        Ok(match self {
            DirRef::Bucket { partition, bucket } => Some(paths.bucket_dir(partition, *bucket)?),
            DirRef::Index {
                partition,
                bucket,
                global,
            } => {
                // The directory does not depend on the name; any plain name finds it.
                let probe = IndexManifestEntry {
                    partition: partition.to_vec(),
                    bucket: *bucket,
                    is_global: *global,
                    file_name: "probe".to_string(),
                    ..Default::default()
                };
                paths.index_file(&probe)?.parent()
            }
            DirRef::Fixed(l) => Some(l.clone()),
        })
    }
}

/// Referenced names in one directory: one candidate id per name (see
/// [`CandidateTable::same_name`]).
#[derive(Debug, Clone)]
pub(crate) struct Group {
    /// The directory.
    pub dir: DirRef,
    /// The names, as candidate ids.
    pub names: Vec<u32>,
}

/// The references of one manifest or index manifest that name candidates.
#[derive(Debug, Clone, Default)]
pub(crate) struct Hits {
    /// Names referenced at a location, by directory. Every one of them is also a referenced
    /// name.
    pub groups: Vec<Group>,
    /// Referenced names that are not in a group (their entry's location cannot be computed,
    /// or an external path names the file differently).
    pub names_only: Vec<u32>,
    /// Entries naming a candidate whose location cannot be computed.
    pub unresolved: u64,
}

/// Builds [`Hits`], grouping by directory.
#[derive(Default)]
struct Builder {
    hits: Hits,
    groups: HashMap<DirRef, usize>,
    /// The last group used: entries of one directory usually come together.
    last: Option<(DirRef, usize)>,
}

impl Builder {
    /// Adds the references of one manifest entry (its data file and extra files) that name
    /// candidates.
    fn add_entry(&mut self, table: &CandidateTable, e: &ManifestEntry) {
        let f = &e.file;
        let named = table.find(&f.file_name);
        if named.is_none() && !f.extra_files.iter().any(|x| table.find(x).is_some()) {
            return;
        }
        if let Some(ext) = &f.external_path {
            self.add_external(table, ext, named, &f.extra_files);
            return;
        }
        if !plain(&f.file_name) || !f.extra_files.iter().all(|x| plain(x)) {
            self.hits.unresolved += 1;
            self.hits.names_only.extend(named);
            self.hits
                .names_only
                .extend(f.extra_files.iter().filter_map(|x| table.find(x)));
            return;
        }
        if let Some(id) = named {
            self.add_local(&e.partition, e.bucket, None, id);
        }
        for x in &f.extra_files {
            if let Some(id) = table.find(x) {
                self.add_local(&e.partition, e.bucket, None, id);
            }
        }
    }

    /// Adds `id` in the bucket directory (`index` `None`) or index directory of `partition`
    /// and `bucket`, allocating only for a new group.
    fn add_local(&mut self, partition: &[u8], bucket: i32, index: Option<bool>, id: u32) {
        if let Some((d, g)) = &self.last {
            if d.is_local(partition, bucket, index) {
                if let Some(group) = self.hits.groups.get_mut(*g) {
                    group.names.push(id);
                    return;
                }
            }
        }
        let partition: Box<[u8]> = partition.into();
        let dir = match index {
            None => DirRef::Bucket { partition, bucket },
            Some(global) => DirRef::Index {
                partition,
                bucket,
                global,
            },
        };
        self.add(dir, id);
    }

    fn add(&mut self, dir: DirRef, id: u32) {
        if let Some((d, g)) = &self.last {
            if *d == dir {
                if let Some(group) = self.hits.groups.get_mut(*g) {
                    group.names.push(id);
                    return;
                }
            }
        }
        let g = match self.groups.get(&dir) {
            Some(g) => *g,
            None => {
                let g = self.hits.groups.len();
                self.hits.groups.push(Group {
                    dir: dir.clone(),
                    names: Vec::new(),
                });
                self.groups.insert(dir.clone(), g);
                g
            }
        };
        if let Some(group) = self.hits.groups.get_mut(g) {
            group.names.push(id);
        }
        self.last = Some((dir, g));
    }

    /// Adds the file at external location `ext` (`name` is the name the metadata gives it,
    /// `named` its candidate id if any) and its extra files `extras` (same directory).
    fn add_external(
        &mut self,
        table: &CandidateTable,
        ext: &str,
        named: Option<u32>,
        extras: &[String],
    ) {
        let at = Location::parse(ext)
            .ok()
            .and_then(|l| Some((l.parent()?, l)))
            .filter(|_| extras.iter().all(|x| plain(x)));
        let Some((dir, loc)) = at else {
            self.hits.unresolved += 1;
            self.hits.names_only.extend(named);
            self.hits
                .names_only
                .extend(extras.iter().filter_map(|x| table.find(x)));
            return;
        };
        match (table.find(loc.name()), named) {
            (Some(at), Some(n)) if at == n => self.add(DirRef::Fixed(dir.clone()), at),
            (at, n) => {
                self.hits.names_only.extend(n);
                if let Some(at) = at {
                    // A location is referenced under a name the metadata does not give it:
                    // it counts as referenced, its name too (keeping more is safe).
                    self.add(DirRef::Fixed(dir.clone()), at);
                }
            }
        }
        for x in extras {
            if let Some(id) = table.find(x) {
                self.add(DirRef::Fixed(dir.clone()), id);
            }
        }
    }
}

/// True if `name` is one plain path segment ([`crate::table::paths::child`]'s rule).
fn plain(name: &str) -> bool {
    !(name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\0'))
}

/// The references of manifest `entries` (ADD and DELETE alike) that name candidates: each
/// entry's data file and extra files; with the number of entries seen. Entries are decoded one
/// at a time with the fields that locate files.
pub(crate) fn of_manifest(
    table: &CandidateTable,
    entries: ManifestFiles<'_>,
) -> Result<(usize, Hits)> {
    let mut b = Builder::default();
    let mut seen = 0usize;
    entries.for_each(|e| {
        seen += 1;
        b.add_entry(table, &e);
        Ok(())
    })?;
    Ok((seen, b.hits))
}

/// The references of index manifest `entries` that name candidates.
pub(crate) fn of_index_manifest(table: &CandidateTable, entries: &[IndexManifestEntry]) -> Hits {
    let mut b = Builder::default();
    for e in entries {
        let Some(id) = table.find(&e.file_name) else {
            continue;
        };
        match &e.external_path {
            Some(ext) => b.add_external(table, ext, Some(id), &[]),
            None => b.add_local(&e.partition, e.bucket, Some(e.is_global), id),
        }
    }
    b.hits
}
