//! Read units: the keys of every file a slice of manifests and index manifests references.
//!
//! * Every manifest entry counts, ADD or DELETE, with its extra files; every index file an
//!   index manifest names counts; and the manifests and index manifests themselves.
//! * A reference is recorded twice: the key of its name ([`name_key`]) and, for each branch
//!   whose versions use the manifest, the key of its resolved location ([`shard::child`]), each
//!   branch resolving with its own path factory (a branch without a schema uses main's). A file
//!   whose location cannot be computed is recorded by name only, so a candidate of that name is
//!   kept wherever it is.
//! * A manifest is read, decoded and turned into keys in one blocking section, one entry at a
//!   time; only the keys stay. Directories are resolved once per partition, bucket and branch.
//! * A file that cannot be read is not an error here: it is returned as a [`ReadFailure`], and
//!   the decision (which knows which versions need it and whether they still exist) decides.

use std::sync::{Arc, Mutex};

use futures::stream::{self, StreamExt};

use crate::clean::control::RunControl;
use crate::error::{Error, Result};
use crate::hash::{name_key, DirKeys, FastMap};
use crate::spec::manifest::{self, FileLocator, IndexManifestEntry};
use crate::storage::Location;
use crate::table::{PathFactory, Table};

use super::partial::{Partial, ReadFailure};
use super::shard;
use super::work_unit::{BranchRef, ReadItem};

/// A read unit sorts and deduplicates its keys once they pass this many (then twice as many
/// as after the last time).
const UNIT_KEYS_COMPACT_MIN: usize = 1 << 16;

/// The progress phase of reading references.
pub(crate) const REFERENCES_PHASE: &str = "read references";

/// A directory as resolved for one branch.
#[derive(Debug, Clone)]
enum Resolved {
    /// The directory, hashed once for the keys of its files.
    Dir(DirKeys),
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

impl Keys {
    /// Sorts and deduplicates (a manifest names most files more than once across branches and
    /// extra files seldom, but the merged result only keeps distinct keys anyway). The vectors
    /// keep their capacity: they are copied into the unit's keys and freed right after, so
    /// shrinking them would only copy them once more.
    fn compact(&mut self) {
        self.locations.sort_unstable();
        self.locations.dedup();
        self.names.sort_unstable();
        self.names.dedup();
    }
}

/// The directories of one partition's buckets, each as resolved for every branch.
type BucketDirs = FastMap<(i32, DirOf), Arc<[Resolved]>>;

/// Each directory as resolved for each branch of one set of branches, by serialized partition,
/// then bucket and which directory (looked up by the borrowed partition bytes: no allocation
/// per entry); shared by every manifest of a read unit read for that set, so a directory is
/// resolved once per unit, not once per manifest.
type SharedDirs = Mutex<FastMap<Box<[u8]>, BucketDirs>>;

/// The last partition (serialized), bucket and directory looked up, with what each branch
/// resolved it to.
type LastDirs = (Vec<u8>, i32, DirOf, Arc<[Resolved]>);

/// Turns entries into keys for the branches `paths`.
struct Sink<'a> {
    paths: &'a [Arc<PathFactory>],
    /// The directories resolved so far for these branches.
    cache: &'a SharedDirs,
    /// The partition, bucket and directory of the last lookup and what it found (entries of a
    /// manifest mostly come in runs of one partition and bucket).
    last: Option<LastDirs>,
    keys: Keys,
}

/// True if `name` is one plain path segment ([`crate::table::paths::child`]'s rule).
fn plain(name: &str) -> bool {
    !(name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\0'))
}

impl<'a> Sink<'a> {
    fn new(paths: &'a [Arc<PathFactory>], cache: &'a SharedDirs) -> Self {
        Sink {
            paths,
            cache,
            last: None,
            keys: Keys::default(),
        }
    }

    /// The directory of `partition`/`bucket` for every branch.
    fn dirs(&self, partition: &[u8], bucket: i32, of: DirOf) -> Arc<[Resolved]> {
        let paths = self.paths;
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if !cache.contains_key(partition) {
            cache.insert(Box::from(partition), FastMap::default());
        }
        let Some(by_bucket) = cache.get_mut(partition) else {
            return Arc::from(Vec::new());
        };
        let found = by_bucket.entry((bucket, of)).or_insert_with(|| {
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
                        Ok(Some(d)) => Resolved::Dir(DirKeys::new(d.as_str())),
                        Ok(None) => Resolved::Nothing,
                        Err(_) => Resolved::Unresolvable,
                    }
                })
                .collect()
        });
        Arc::clone(found)
    }

    /// Records `name` and `extras` (plain) in the directory of `partition`/`bucket` of each
    /// branch.
    fn local(&mut self, partition: &[u8], bucket: i32, of: DirOf, name: &str, extras: &[&str]) {
        let hit = matches!(&self.last, Some((p, b, o, _)) if **p == *partition && *b == bucket && *o == of);
        if !hit {
            let found = self.dirs(partition, bucket, of);
            match &mut self.last {
                Some((p, b, o, d)) => {
                    p.clear();
                    p.extend_from_slice(partition);
                    (*b, *o, *d) = (bucket, of, found);
                }
                None => self.last = Some((partition.to_vec(), bucket, of, found)),
            }
        }
        let Some((_, _, _, dirs)) = &self.last else {
            return;
        };
        let keys = &mut self.keys;
        for d in dirs.iter() {
            match d {
                Resolved::Dir(dir) => {
                    keys.locations.push(shard::child(dir, name));
                    keys.locations
                        .extend(extras.iter().map(|x| shard::child(dir, x)));
                }
                Resolved::Nothing => {}
                Resolved::Unresolvable => keys.unresolved += 1 + extras.len() as u64,
            }
        }
    }

    /// Records a file at external location `ext` with extra files `extras` beside it.
    fn external(&mut self, ext: &str, extras: &[&str]) {
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
        self.keys.locations.push(shard::location(loc.as_str()));
        let dir = DirKeys::new(dir.as_str());
        for x in extras {
            self.keys.locations.push(shard::child(&dir, x));
        }
    }

    fn entry(&mut self, e: &FileLocator<'_>) {
        self.keys.entries += 1;
        self.keys.names.push(name_key(e.file_name));
        self.keys
            .names
            .extend(e.extra_files.iter().map(|x| name_key(x)));
        if let Some(ext) = e.external_path {
            self.external(ext, &e.extra_files);
            return;
        }
        if !plain(e.file_name) || !e.extra_files.iter().all(|x| plain(x)) {
            self.keys.unresolved += 1;
            return;
        }
        self.local(
            e.partition,
            e.bucket,
            DirOf::Bucket,
            e.file_name,
            &e.extra_files,
        );
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
                &e.file_name,
                &[],
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
    let tables = branch_paths(main, branches).await?;
    let paths = main.paths();
    let storage = main.storage();
    for it in &items {
        // The manifests and index manifests themselves are referenced.
        out.names.push(name_key(&it.name));
        if let Ok(loc) = paths.manifest(&it.name) {
            out.locations.push(shard::location(loc.as_str()));
        }
    }
    // Every manifest's location, and what decoding it needs (its branches' path factories);
    // read several to a blocking section.
    let mut locs: Vec<Location> = Vec::with_capacity(items.len());
    let mut jobs: Vec<(bool, Vec<Arc<PathFactory>>, Arc<SharedDirs>)> =
        Vec::with_capacity(items.len());
    // One directory cache per set of branches (usually one set: every branch, or main).
    let mut caches: FastMap<Vec<u32>, Arc<SharedDirs>> = FastMap::default();
    let mut of_loc: Vec<usize> = Vec::with_capacity(items.len());
    let mut unlocated: Vec<(usize, Error)> = Vec::new();
    for (n, it) in items.iter().enumerate() {
        match paths.manifest(&it.name) {
            Ok(loc) => {
                let used: Vec<Arc<PathFactory>> = it
                    .branches
                    .iter()
                    .filter_map(|b| tables.get(*b as usize).cloned())
                    .collect();
                let cache = caches.entry(it.branches.clone()).or_default();
                locs.push(loc);
                jobs.push((it.index, used, Arc::clone(cache)));
                of_loc.push(n);
            }
            Err(e) => unlocated.push((n, e)),
        }
    }
    let at: Arc<Vec<String>> = Arc::new(locs.iter().map(|l| l.as_str().to_string()).collect());
    let jobs = Arc::new(jobs);
    let decoded = storage
        .get_many_then(&locs, concurrency, move |i, bytes| {
            let (Some((index, used, cache)), Some(at)) = (jobs.get(i), at.get(i)) else {
                return Err(Error::Internal("a manifest read without its job".into()));
            };
            let mut sink = Sink::new(used, cache);
            if *index {
                let all = manifest::decode_index_manifest(&bytes, at)?;
                for e in &all {
                    sink.index_entry(e);
                }
            } else {
                manifest::for_each_file_locator(&bytes, at, |e| {
                    sink.entry(e);
                    Ok(())
                })?;
            }
            let mut keys = sink.keys;
            keys.compact();
            Ok(keys)
        })
        .map(|(i, r)| (of_loc.get(i).copied().unwrap_or(usize::MAX), r));
    let mut stream = stream::iter(unlocated.into_iter().map(|(n, e)| (n, Err(e)))).chain(decoded);
    // The unit's keys are sorted and deduplicated whenever they double (manifests of one unit
    // name many of the same files).
    let mut compact_at = UNIT_KEYS_COMPACT_MIN;
    while let Some((n, r)) = stream.next().await {
        ctl.cancel.check()?;
        let Some(it) = items.get(n) else {
            return Err(Error::Internal(
                "a manifest read without its item; nothing deleted".into(),
            ));
        };
        match r {
            Ok(keys) => absorb_keys(it, keys, out, &mut compact_at),
            Err(Error::Cancelled) => return Err(Error::Cancelled),
            Err(e) => {
                tracing::debug!(file = %it.name, error = %e, "cannot read a manifest; the decision judges it");
                out.failures.push(ReadFailure::new(it.index, &it.name, &e));
            }
        }
    }
    Ok(())
}

/// The path factory of each of a unit's `branches` (by position), to locate their entries.
async fn branch_paths(main: &Table, branches: &[BranchRef]) -> Result<Vec<Arc<PathFactory>>> {
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
    Ok(tables)
}

/// Adds the keys one read item's manifest references to `out`, sorting and deduplicating
/// `out`'s keys whenever they pass `compact_at` (which then doubles).
fn absorb_keys(it: &ReadItem, keys: Keys, out: &mut Partial, compact_at: &mut usize) {
    if !it.index {
        out.manifests_read += 1;
        out.entries_seen += keys.entries;
    }
    out.locations.extend(keys.locations);
    out.names.extend(keys.names);
    out.unresolved += keys.unresolved;
    if out.locations.len() + out.names.len() > *compact_at {
        out.compact_keys();
        *compact_at = (2 * (out.locations.len() + out.names.len())).max(UNIT_KEYS_COMPACT_MIN);
    }
}

#[cfg(test)]
mod tests {
    //! The keys the fast locator decode records must be exactly those of the full decoder (a
    //! missed reference would delete a live file).

    use std::collections::HashMap;
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::spec::manifest::{
        decode_index_manifest, decode_manifest, encode_manifest, ManifestCompression,
        ManifestEntry, MetadataFileKind, WriterSchema,
    };
    use crate::storage::Storage;

    /// The sorted location and name keys `Sink` records for one manifest, fed by the fast
    /// locator decode (`fast`) or by the full decoder.
    fn sink_keys(paths: &[Arc<PathFactory>], bytes: &[u8], fast: bool) -> Result<Keys> {
        let cache = SharedDirs::default();
        let mut sink = Sink::new(paths, &cache);
        if fast {
            manifest::for_each_file_locator(bytes, "m", |e| {
                sink.entry(e);
                Ok(())
            })?;
        } else {
            for e in decode_manifest(bytes, "m")? {
                sink.entry(&FileLocator::of(&e));
            }
        }
        let mut keys = sink.keys;
        keys.compact();
        Ok(keys)
    }

    /// Checks one manifest: the fast keys are the full decoder's (or both fail), and every file
    /// the full decoder locates (data or changelog file, its extra files, at its external path
    /// when it has one) is among them. Returns the entries checked.
    fn check_manifest(paths: &[Arc<PathFactory>], bytes: &[u8], what: &str) -> usize {
        let (fast, full) = (
            sink_keys(paths, bytes, true),
            sink_keys(paths, bytes, false),
        );
        let (fast, full) = match (fast, full) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(_), Err(_)) => return 0,
            (a, b) => panic!("{what}: fast {:?} vs full {:?}", a.err(), b.err()),
        };
        assert_eq!(fast.locations, full.locations, "{what}");
        assert_eq!(fast.names, full.names, "{what}");
        assert_eq!(
            (fast.entries, fast.unresolved),
            (full.entries, full.unresolved),
            "{what}"
        );
        let entries: Vec<ManifestEntry> = decode_manifest(bytes, "m").unwrap_or_default();
        for e in &entries {
            for p in paths {
                let Ok(locs) = p.data_file_with_extras(&e.partition, e.bucket, &e.file) else {
                    continue;
                };
                for l in locs {
                    assert!(
                        fast.locations
                            .binary_search(&shard::location(l.as_str()))
                            .is_ok()
                            || fast.names.binary_search(&name_key(l.name())).is_ok(),
                        "{what}: {} not referenced",
                        l.as_str()
                    );
                }
            }
        }
        entries.len()
    }

    /// Every manifest (and index manifest) of the table at `root` and its branches, checked.
    /// Returns (manifest entries, index files) checked.
    fn check_table(root: &Path) -> (usize, usize) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let Ok(storage) = Storage::open(&root.display().to_string(), &HashMap::new()) else {
            return (0, 0);
        };
        let Ok(table) = rt.block_on(Table::open(Arc::new(storage), &HashMap::new())) else {
            return (0, 0);
        };
        let paths = vec![Arc::clone(table.paths_arc())];
        let mut dirs = vec![root.join("manifest")];
        if let Ok(rd) = std::fs::read_dir(root.join("branch")) {
            dirs.extend(rd.flatten().map(|b| b.path().join("manifest")));
        }
        let (mut entries, mut index_files) = (0, 0);
        for dir in dirs {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for f in rd.flatten() {
                let name = f.file_name().to_string_lossy().to_string();
                let Ok(bytes) = std::fs::read(f.path()) else {
                    continue;
                };
                let what = f.path().display().to_string();
                if name.starts_with("index-manifest-") {
                    let Ok(all) = decode_index_manifest(&bytes, "m") else {
                        continue;
                    };
                    let cache = SharedDirs::default();
                    let mut sink = Sink::new(&paths, &cache);
                    for e in &all {
                        sink.index_entry(e);
                    }
                    let mut keys = sink.keys;
                    keys.compact();
                    for e in &all {
                        let l = paths[0].index_file(e).unwrap();
                        assert!(
                            keys.locations
                                .binary_search(&shard::location(l.as_str()))
                                .is_ok(),
                            "{what}: {} not referenced",
                            l.as_str()
                        );
                        // A deletion vector's data file is referenced by its own manifest.
                        index_files += 1;
                    }
                } else if name.starts_with("manifest-") && !name.starts_with("manifest-list-") {
                    entries += check_manifest(&paths, &bytes, &what);
                    // The same entries with extra files and external paths, in the table's own
                    // writer schema where it is Avro (else the built-in one).
                    if let Ok(mut all) = decode_manifest(&bytes, "m") {
                        for (i, e) in all.iter_mut().enumerate() {
                            e.file.extra_files = vec![format!("{}.index", e.file.file_name)];
                            if i % 2 == 1 {
                                e.file.external_path =
                                    Some(format!("file:///elsewhere/dir-{i}/{}", e.file.file_name));
                            }
                        }
                        let schema =
                            WriterSchema::from_file(MetadataFileKind::Manifest, &bytes, "m").ok();
                        let crafted = encode_manifest(
                            &all,
                            schema.as_ref(),
                            ManifestCompression::Zstd { level: 1 },
                        )
                        .unwrap();
                        entries += check_manifest(&paths, &crafted, &format!("{what} (crafted)"));
                    }
                }
            }
        }
        (entries, index_files)
    }

    /// Table roots below `dir` (directories with a `schema` directory), at most 4 levels deep.
    fn tables_below(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        if dir.join("schema").is_dir() {
            out.push(dir.to_path_buf());
            return;
        }
        if depth == 0 {
            return;
        }
        if let Ok(rd) = std::fs::read_dir(dir) {
            let mut subs: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
            subs.sort();
            for s in subs.iter().filter(|s| s.is_dir()) {
                tables_below(s, depth - 1, out);
            }
        }
    }

    /// The Java-written fixture tables (`PAIMON_FIXTURES`: Avro and ORC manifests, deletion
    /// vectors, external paths, branches) and any tables below `PAIMON_REFS_TABLES`
    /// (paimon-gen or pypaimon tables: changelog files, deletion vectors).
    #[test]
    fn fast_keys_are_the_full_decoders_on_real_tables() {
        let mut roots = Vec::new();
        // The Java fixtures: `PAIMON_FIXTURES`, else the shared directory beside the checkout.
        let fixtures = [
            std::env::var("PAIMON_FIXTURES").ok().map(PathBuf::from),
            Some(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../shared/fixtures/java-written-tables"),
            ),
        ]
        .into_iter()
        .flatten()
        .find(|d| d.join("INDEX.md").exists())
        .and_then(|d| d.canonicalize().ok());
        let fixtures_found = fixtures.is_some();
        if let Some(d) = fixtures {
            tables_below(&d, 4, &mut roots);
        }
        if let Ok(d) = std::env::var("PAIMON_REFS_TABLES") {
            tables_below(Path::new(&d), 4, &mut roots);
        }
        if !fixtures_found {
            assert_ne!(
                std::env::var("PAIMON_REQUIRE_FIXTURES").as_deref(),
                Ok("1"),
                "PAIMON_REQUIRE_FIXTURES=1 but the Java fixture tables were not found"
            );
        }
        if roots.is_empty() {
            assert_ne!(
                std::env::var("PAIMON_REQUIRE_FIXTURES").as_deref(),
                Ok("1"),
                "PAIMON_REQUIRE_FIXTURES=1 but the Java fixture tables were not found"
            );
            eprintln!("SKIP: no tables (set PAIMON_FIXTURES)");
            return;
        }
        let (mut entries, mut index_files) = (0, 0);
        for r in &roots {
            let (e, i) = check_table(r);
            entries += e;
            index_files += i;
        }
        eprintln!(
            "{} tables, {entries} entries, {index_files} index files",
            roots.len()
        );
        assert!(entries > 0 && index_files > 0);
    }
}
