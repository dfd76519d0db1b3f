//! Read units: the keys of every file a slice of manifests and index manifests references.
//!
//! * Every manifest entry counts, ADD or DELETE, with its extra files; every index file an
//!   index manifest names counts; and the manifests and index manifests themselves.
//! * A reference is recorded twice: the key of its name ([`name_key`]) and, for each branch
//!   whose versions use the manifest, the key of its resolved location ([`child_key`]), each
//!   branch resolving with its own path factory (a branch without a schema uses main's). A file
//!   whose location cannot be computed is recorded by name only, so a candidate of that name is
//!   kept wherever it is.
//! * A manifest is read, decoded and turned into keys in one blocking section, one entry at a
//!   time; only the keys stay. Directories are resolved once per partition, bucket and branch.
//! * A file that cannot be read is not an error here: it is returned as a [`ReadFailure`], and
//!   the decision (which knows which versions need it and whether they still exist) decides.

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::{self, StreamExt};

use crate::clean::control::RunControl;
use crate::error::{Error, Result};
use crate::hash::{child_key, location_key, name_key};
use crate::spec::manifest::{self, IndexManifestEntry, ManifestEntry};
use crate::storage::Location;
use crate::table::{ManifestFiles, PathFactory, Table};

use super::partial::{Partial, ReadFailure};
use super::unit::{BranchRef, ReadItem};

/// The progress phase of reading references.
pub(crate) const REFERENCES_PHASE: &str = "read references";

/// A directory as resolved for one branch.
#[derive(Debug, Clone)]
enum Resolved {
    /// The directory.
    Dir(String),
    /// No directory (never expected; nothing to record).
    Nothing,
    /// Cannot be computed: the names are kept wherever they are.
    Unresolvable,
}

/// Which directory of a partition and bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum DirOf {
    Bucket,
    Index { global: bool },
}

/// Keys of one file's references.
#[derive(Debug, Default)]
struct Keys {
    locations: Vec<u64>,
    names: Vec<u64>,
    entries: u64,
    unresolved: u64,
}

/// A partition (serialized), a bucket and which of its directories.
type DirKey = (Box<[u8]>, i32, DirOf);

/// Turns entries into keys for the branches `paths`.
struct Sink<'a> {
    paths: &'a [Arc<PathFactory>],
    /// Each directory as resolved for each branch.
    cache: HashMap<DirKey, Vec<Resolved>>,
    keys: Keys,
}

/// True if `name` is one plain path segment ([`crate::table::paths::child`]'s rule).
fn plain(name: &str) -> bool {
    !(name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\0'))
}

impl<'a> Sink<'a> {
    fn new(paths: &'a [Arc<PathFactory>]) -> Self {
        Sink {
            paths,
            cache: HashMap::new(),
            keys: Keys::default(),
        }
    }

    /// The directory of `partition`/`bucket` for every branch.
    fn dirs(&mut self, partition: &[u8], bucket: i32, of: DirOf) -> &[Resolved] {
        let key = (Box::<[u8]>::from(partition), bucket, of);
        let paths = self.paths;
        self.cache.entry(key).or_insert_with(|| {
            paths
                .iter()
                .map(|p| {
                    let r = match of {
                        DirOf::Bucket => p.bucket_dir(partition, bucket).map(Some),
                        DirOf::Index { global } => {
                            // The directory does not depend on the name; any plain name finds it.
                            let probe = IndexManifestEntry {
                                partition: partition.to_vec(),
                                bucket,
                                is_global: global,
                                file_name: "probe".to_string(),
                                ..Default::default()
                            };
                            p.index_file(&probe).map(|l| l.parent())
                        }
                    };
                    match r {
                        Ok(Some(d)) => Resolved::Dir(d.as_str().to_string()),
                        Ok(None) => Resolved::Nothing,
                        Err(e) => {
                            tracing::warn!(bucket, error = %e, "cannot resolve the directory of referenced files; kept by name");
                            Resolved::Unresolvable
                        }
                    }
                })
                .collect()
        })
    }

    /// Records `names` (plain) in the directory of `partition`/`bucket` of each branch.
    fn local(&mut self, partition: &[u8], bucket: i32, of: DirOf, names: &[&str]) {
        let mut locations = Vec::new();
        let mut unresolved = 0u64;
        for d in self.dirs(partition, bucket, of) {
            match d {
                Resolved::Dir(dir) => locations.extend(names.iter().map(|n| child_key(dir, n))),
                Resolved::Nothing => {}
                Resolved::Unresolvable => unresolved += names.len() as u64,
            }
        }
        self.keys.locations.extend(locations);
        self.keys.unresolved += unresolved;
    }

    /// Records a file at external location `ext` with extra files `extras` beside it.
    fn external(&mut self, ext: &str, extras: &[String]) {
        let at = Location::parse(ext)
            .ok()
            .and_then(|l| Some((l.parent()?, l)))
            .filter(|_| extras.iter().all(|x| plain(x)));
        let Some((dir, loc)) = at else {
            self.keys.unresolved += 1;
            return;
        };
        // Referenced under its own name too (keeping more is safe).
        self.keys.names.push(name_key(loc.name()));
        self.keys.locations.push(location_key(loc.as_str()));
        for x in extras {
            self.keys.locations.push(child_key(dir.as_str(), x));
        }
    }

    fn entry(&mut self, e: &ManifestEntry) {
        self.keys.entries += 1;
        let f = &e.file;
        self.keys.names.push(name_key(&f.file_name));
        self.keys
            .names
            .extend(f.extra_files.iter().map(|x| name_key(x)));
        if let Some(ext) = &f.external_path {
            self.external(ext, &f.extra_files);
            return;
        }
        if !plain(&f.file_name) || !f.extra_files.iter().all(|x| plain(x)) {
            self.keys.unresolved += 1;
            return;
        }
        let mut names: Vec<&str> = Vec::with_capacity(1 + f.extra_files.len());
        names.push(&f.file_name);
        names.extend(f.extra_files.iter().map(String::as_str));
        self.local(&e.partition, e.bucket, DirOf::Bucket, &names);
    }

    fn index_entry(&mut self, e: &IndexManifestEntry) {
        self.keys.names.push(name_key(&e.file_name));
        match &e.external_path {
            Some(ext) => self.external(ext, &[]),
            None if plain(&e.file_name) => self.local(
                &e.partition,
                e.bucket,
                DirOf::Index {
                    global: e.is_global,
                },
                &[&e.file_name],
            ),
            None => self.keys.unresolved += 1,
        }
    }
}

/// Executes a read unit: reads `items` with at most `concurrency` reads in flight and records
/// their references in `out`. `main` is the main branch; `branches` the unit's branches.
pub(crate) async fn read(
    main: &Table,
    branches: &[BranchRef],
    items: Vec<ReadItem>,
    concurrency: usize,
    ctl: &RunControl,
    out: &mut Partial,
) -> Result<()> {
    let mut tables: Vec<Arc<PathFactory>> = Vec::with_capacity(branches.len());
    for b in branches {
        let t = if b.name == main.branch_name() {
            main.clone()
        } else if b.own_schema {
            main.branch(&b.name).await?
        } else {
            main.with_branch_root_of(&b.name)
        };
        tables.push(Arc::clone(t.paths_arc()));
    }
    let paths = main.paths();
    let storage = main.storage();
    for it in &items {
        // The manifests and index manifests themselves are referenced.
        out.names.push(name_key(&it.name));
        if let Ok(loc) = paths.manifest(&it.name) {
            out.locations.push(location_key(loc.as_str()));
        }
    }
    let tables = Arc::new(tables);
    let mut stream = stream::iter(items)
        .map(|it| {
            let tables = Arc::clone(&tables);
            async move {
                let used: Vec<Arc<PathFactory>> = it
                    .branches
                    .iter()
                    .filter_map(|b| tables.get(*b as usize).cloned())
                    .collect();
                let r = match paths.manifest(&it.name) {
                    Ok(loc) => {
                        let index = it.index;
                        let at = loc.clone();
                        storage
                            .get_then(&at, move |bytes| {
                                let mut sink = Sink::new(&used);
                                if index {
                                    let all =
                                        manifest::decode_index_manifest(&bytes, loc.as_str())?;
                                    for e in &all {
                                        sink.index_entry(e);
                                    }
                                } else {
                                    ManifestFiles::new(&bytes, &loc).for_each(|e| {
                                        sink.entry(&e);
                                        Ok(())
                                    })?;
                                }
                                Ok(sink.keys)
                            })
                            .await
                    }
                    Err(e) => Err(e),
                };
                (it, r)
            }
        })
        .buffer_unordered(concurrency.max(1));
    while let Some((it, r)) = stream.next().await {
        ctl.cancel.check()?;
        match r {
            Ok(keys) => {
                if !it.index {
                    out.manifests_read += 1;
                    out.entries_seen += keys.entries;
                }
                out.locations.extend(keys.locations);
                out.names.extend(keys.names);
                out.unresolved += keys.unresolved;
            }
            Err(Error::Cancelled) => return Err(Error::Cancelled),
            Err(e) => {
                tracing::debug!(file = %it.name, error = %e, "cannot read a manifest; the decision judges it");
                out.failures.push(ReadFailure::new(it.index, &it.name, &e));
            }
        }
    }
    Ok(())
}
