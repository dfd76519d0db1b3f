//! What still references files: the versions that protect them (retained snapshots, tags of
//! every branch, other branches' snapshots, long-lived changelogs), and for a set of candidate
//! files, which of them any such version still needs.
//!
//! Protectors' manifest lists and manifests are read at most once per run; their manifests are
//! decoded and immediately filtered down to the candidates, so memory follows the candidate
//! set, not the table. Manifests read to find candidates (`clean::expiry::plan`) are reduced to
//! candidates as they are decoded and not kept; a protector naming one of them reads it again.

pub mod protectors;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use futures::stream::{self, StreamExt, TryStreamExt};

use crate::clean::shared::keys::SortedKeys;
use crate::error::Result;
use crate::hash::{location_key, FastMap, FastSet};
use crate::memory::MemoryBudget;
use crate::spec::manifest::{FileKind, FileLocator, ManifestEntry, ManifestFileMeta};
use crate::spec::snapshot::Snapshot;
use crate::storage::Location;
use crate::table::{DataFileLocator, ManifestFiles, PathFactory, Table};

/// How a protecting version is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtectMode {
    /// A readable version (snapshot, tag): its live files (base + delta merged) and the ADDs of
    /// its changelog list; all of its manifest lists, manifests, index files and statistics.
    Full,
    /// A snapshot after an already-`Full` one of the same line: files its delta (and changelog
    /// list) adds; all of its metadata. (Any file live in it is live in the earlier `Full`
    /// version or added by one of these deltas.)
    DeltaAdds,
    /// A long-lived changelog: what an incremental reader of it uses. Data: the files its
    /// changelog list adds; without a changelog list, with changelog producer `none`, the data
    /// files its delta adds (with another producer, nothing: its data was compacted away or
    /// is read through later changelog lists, and Java deletes it at snapshot expiry). Never
    /// the files of its base list (those are a full read, which a changelog is not).
    /// Metadata: its changelog list, else its delta and base lists (Java keeps both) and their
    /// manifests; never its index manifest or statistics (they go with the snapshot).
    Changelog,
}

/// One version that keeps files alive.
#[derive(Debug, Clone)]
pub struct Protector {
    /// For logs and errors, e.g. "tag t1 (branch main)".
    pub label: String,
    /// The version's snapshot document.
    pub snapshot: Snapshot,
    /// How to read it.
    pub mode: ProtectMode,
}

/// A file entry reduced to what protection needs.
#[derive(Debug, Clone)]
pub(crate) struct Slim {
    pub(crate) kind: FileKind,
    pub(crate) level: i32,
    pub(crate) location: Location,
    /// Its extra files (beside it): a version that reads the entry reads them too.
    pub(crate) extras: Vec<Location>,
    /// The rest of the entry's Paimon identifier (spec §3.7), exact: with `location` and
    /// `level` it tells whether a DELETE removes an ADD in a version's merge. Readers merge by
    /// identifier, so a DELETE under another identifier leaves a file live even at the same
    /// location (a crafted or confused entry must not free a file a reader still reads).
    ident: Box<[u8]>,
}

impl Slim {
    /// `e` located at `location`, with its extra files at `extras`.
    pub(crate) fn of(e: &FileLocator<'_>, location: Location, extras: Vec<Location>) -> Slim {
        Slim {
            kind: e.kind,
            level: e.level,
            location,
            extras,
            ident: identifier_rest(e),
        }
    }

    /// About what the entry holds (for the memory bound).
    fn heap_bytes(&self) -> u64 {
        (std::mem::size_of::<Slim>()
            + self.location.as_str().len()
            + self.ident.len()
            + self
                .extras
                .iter()
                .map(|x| 24 + x.as_str().len())
                .sum::<usize>()) as u64
    }

    /// Every location the entry names: the file, then its extra files.
    fn locations(&self) -> impl Iterator<Item = &Location> {
        std::iter::once(&self.location).chain(&self.extras)
    }
}

/// The manifest lists a long-lived changelog `c` needs (a missing one is an error): its
/// changelog manifest list when it has one (a changelog reader reads only that); otherwise,
/// with changelog producer `none` (`producer_none`), its base and delta lists (the reader
/// reads the files its delta adds); otherwise none (no reader reads anything of it).
pub(crate) fn changelog_needed_lists(c: &Snapshot, producer_none: bool) -> Vec<String> {
    match &c.changelog_manifest_list {
        Some(l) => vec![l.clone()],
        None if producer_none => vec![c.base_manifest_list.clone(), c.delta_manifest_list.clone()],
        None => Vec::new(),
    }
}

/// The manifest lists of a long-lived changelog `c` without a changelog manifest list of a
/// table whose changelog producer is not `none`: no reader needs them, but while present
/// they keep the metadata they name. Paimon Java deletes them when it turns a snapshot into
/// such a changelog, so only their absence ("not found") is tolerated.
fn changelog_optional_lists(c: &Snapshot, producer_none: bool) -> Vec<String> {
    if c.changelog_manifest_list.is_none() && !producer_none {
        vec![c.base_manifest_list.clone(), c.delta_manifest_list.clone()]
    } else {
        Vec::new()
    }
}

/// The parts of an entry's identifier that its location does not already fix, encoded
/// without ambiguity (length-prefixed): partition bytes (distinct rows may share a directory),
/// bucket, extra files, embedded index and, with an external path, that path and the file
/// name (without one, the location ends in the bucket directory and the name).
fn identifier_rest(e: &FileLocator<'_>) -> Box<[u8]> {
    fn put(out: &mut Vec<u8>, bytes: &[u8]) {
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    let mut out = Vec::with_capacity(e.partition.len() + 16);
    put(&mut out, e.partition);
    out.extend_from_slice(&e.bucket.to_le_bytes());
    out.extend_from_slice(&(e.extra_files.len() as u64).to_le_bytes());
    for x in &e.extra_files {
        put(&mut out, x.as_bytes());
    }
    match e.embedded_index {
        Some(i) => {
            out.push(1);
            put(&mut out, i);
        }
        None => out.push(0),
    }
    match e.external_path {
        Some(p) => {
            out.push(1);
            put(&mut out, p.as_bytes());
            put(&mut out, e.file_name.as_bytes());
        }
        None => out.push(0),
    }
    out.into_boxed_slice()
}

/// The locations of a candidate set (its files and their extra files), as 64-bit keys
/// ([`crate::hash::location_key`]): the pre-filter that keeps protectors' manifests down to
/// the entries that may name a candidate. A location that shares a key with a candidate's only
/// passes the filter; whether it is a candidate is then decided on its exact location.
///
/// Held sorted ([`SortedKeys`], about 10 bytes a location).
///
/// The data and changelog candidates' keys are held apart from the few other candidates'
/// (the removed versions' metadata, [`CandidateKeys::with_more`]): the first are indexed by
/// slot by the plan, and protection looks for both.
#[derive(Debug, Default)]
pub struct CandidateKeys(SortedKeys, SortedKeys);

impl CandidateKeys {
    /// From the locations' keys.
    pub fn new(keys: SortedKeys) -> CandidateKeys {
        CandidateKeys(keys, SortedKeys::default())
    }

    /// With `more` candidates' keys besides (the metadata of removed versions).
    pub fn with_more(self, more: SortedKeys) -> CandidateKeys {
        CandidateKeys(self.0, more)
    }

    /// From the locations.
    pub fn from_locations<'a>(locations: impl Iterator<Item = &'a Location>) -> CandidateKeys {
        CandidateKeys::new(SortedKeys::from_unsorted(
            locations.map(|l| location_key(l.as_str())).collect(),
        ))
    }

    /// The sorted keys (given to [`CandidateKeys::new`]).
    pub fn sorted(&self) -> &SortedKeys {
        &self.0
    }

    /// The other candidates' sorted keys (given to [`CandidateKeys::with_more`]).
    pub fn more(&self) -> &SortedKeys {
        &self.1
    }

    /// True if a location with this key may be a candidate.
    pub fn may_contain(&self, key: u64) -> bool {
        self.0.contains(key) || self.1.contains(key)
    }

    /// True if there are no candidates.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty() && self.1.is_empty()
    }
}

/// An index file named by an index manifest, with its size from the entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexFile {
    /// Where it is.
    pub location: Location,
    /// `_FILE_SIZE`.
    pub bytes: u64,
}

/// A manifest as a manifest list names it, reduced to what expiry reads of it (its name and
/// size). A decoded [`ManifestFileMeta`] holds its partition statistics as slices of the
/// decompressed list, so caching those would keep every list's decompressed blocks alive
/// (about 130 bytes per data file at medium size).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedManifest {
    /// `_FILE_NAME`: name of the manifest file in `manifest/`.
    pub file_name: String,
    /// `_FILE_SIZE`.
    pub file_size: i64,
    /// `_NUM_ADDED_FILES` (clamped to `0..=u32::MAX`): a hint for sizing, never trusted.
    pub added_files: u32,
    /// `_NUM_DELETED_FILES` (clamped likewise): a hint for sizing, never trusted.
    pub deleted_files: u32,
}

/// A manifest list reduced to its manifests' names and sizes, in order.
fn listed(metas: Vec<ManifestFileMeta>) -> Vec<ListedManifest> {
    let mut out: Vec<ListedManifest> = metas
        .into_iter()
        .map(|m| ListedManifest {
            file_name: m.file_name,
            file_size: m.file_size,
            added_files: m.num_added_files.clamp(0, u32::MAX as i64) as u32,
            deleted_files: m.num_deleted_files.clamp(0, u32::MAX as i64) as u32,
        })
        .collect();
    out.shrink_to_fit();
    out
}

/// Caches and reads for one run.
pub struct ReferenceReader<'t> {
    table: &'t Table,
    /// Manifest lists read so far (shared by concurrent readers of one run).
    lists: SharedCache<Vec<ListedManifest>>,
    /// Protectors' manifests reduced to the entries that may name a candidate.
    slim: SharedCache<Vec<Slim>>,
    /// Index manifests read so far (shared by concurrent readers of one run).
    index_files: SharedCache<Vec<IndexFile>>,
    /// Protectors' manifests fetched ahead from an object store, not decoded yet.
    fetched: Mutex<FetchedManifests>,
    /// What the run may hold ([`crate::clean::RunControl::max_memory`]): candidates and the
    /// reduced manifests are charged to it.
    memory: MemoryBudget,
    /// What the reduced manifests charged to `memory` (released with them).
    slim_charged: std::sync::atomic::AtomicU64,
}

/// Up to this many bytes of protectors' manifests are fetched from an object store while the
/// candidates are read (see [`ReferenceReader::prefetch`]).
pub const PREFETCH_MANIFEST_BYTES: u64 = 64 << 20;

/// Values read once per run by file name, shared by the concurrent readers of one run.
#[derive(Debug)]
struct SharedCache<V>(Mutex<HashMap<String, Arc<V>>>);

impl<V> SharedCache<V> {
    fn new() -> Self {
        SharedCache(Mutex::new(HashMap::new()))
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<V>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn get(&self, name: &str) -> Option<Arc<V>> {
        self.map().get(name).cloned()
    }

    fn contains(&self, name: &str) -> bool {
        self.map().contains_key(name)
    }

    /// Of `names`, the distinct ones not cached yet, in order.
    fn missing(&self, names: &[String]) -> Vec<String> {
        let map = self.map();
        distinct(names.iter().filter(|n| !map.contains_key(*n)))
    }

    fn insert_all(&self, read: impl IntoIterator<Item = (String, V)>) {
        let mut map = self.map();
        for (n, v) in read {
            map.insert(n, Arc::new(v));
        }
    }
}

/// Manifest contents fetched ahead, and what the budget still allows.
#[derive(Debug)]
struct FetchedManifests {
    budget: u64,
    content: HashMap<String, bytes::Bytes>,
}

/// Metadata a set of versions references.
#[derive(Debug, Default)]
pub struct ReferencedMetadata {
    /// Manifest list, manifest and index manifest names (all in `manifest/`).
    pub manifest_dir_names: HashSet<String>,
    /// Index file locations.
    pub index_files: HashSet<Location>,
    /// Statistics file names.
    pub statistics: HashSet<String>,
}

impl<'t> ReferenceReader<'t> {
    /// A reader for `table` (any branch: manifests are shared).
    pub fn new(table: &'t Table) -> Self {
        ReferenceReader {
            table,
            lists: SharedCache::new(),
            slim: SharedCache::new(),
            index_files: SharedCache::new(),
            fetched: Mutex::new(FetchedManifests {
                budget: PREFETCH_MANIFEST_BYTES,
                content: HashMap::new(),
            }),
            memory: MemoryBudget::default(),
            slim_charged: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// This reader, charging what it and the plans built with it hold to `memory` (the
    /// run's budget, [`crate::clean::shared::deleter::Deleter::memory`]).
    pub fn with_memory(mut self, memory: MemoryBudget) -> Self {
        self.memory = memory;
        self
    }

    /// The run's memory budget (unbounded unless [`ReferenceReader::with_memory`] set one).
    pub fn memory(&self) -> MemoryBudget {
        self.memory.clone()
    }

    /// The number of reads kept in flight.
    pub fn concurrency(&self) -> usize {
        self.table.reader().concurrency()
    }

    /// Read (once) the given manifest lists. With `tolerate_missing`, absent lists read as
    /// empty; otherwise absence is an error. An absent list is not cached: a later strict load
    /// of it still fails. Concurrent callers may share one reader.
    pub async fn load_lists(&self, names: &[String], tolerate_missing: bool) -> Result<()> {
        let todo = self.lists.missing(names);
        let table = self.table;
        let read: Vec<Option<(String, Vec<ListedManifest>)>> = stream::iter(todo)
            .map(|n| async move {
                match table.reader().manifest_list(table.paths(), &n).await {
                    Ok(v) => Ok(Some((n, listed(v)))),
                    Err(e) if tolerate_missing && e.is_not_found() => Ok(None),
                    Err(e) => Err(e),
                }
            })
            .buffer_unordered(self.concurrency())
            .try_collect()
            .await?;
        self.lists.insert_all(read.into_iter().flatten());
        Ok(())
    }

    /// Read (strictly, once, concurrently) the manifest lists of `protectors`; returns the
    /// manifests they name.
    pub async fn protector_manifests(&self, protectors: &[Protector]) -> Result<HashSet<String>> {
        let lists: Vec<String> = self.lists_of_all(protectors);
        self.load_lists(&lists, false).await?;
        let mut out = HashSet::new();
        for l in &lists {
            for m in self.list(l).iter() {
                if !out.contains(&m.file_name) {
                    out.insert(m.file_name.clone());
                }
            }
        }
        Ok(out)
    }

    /// Cache every entry of manifest `name`, read in full by a candidate reader, as protection
    /// would reduce it: protection then finds it at hand instead of decoding it again. (The
    /// cache holds, per manifest, a superset of the entries that name a candidate; protection
    /// confirms each on its exact location.)
    pub(crate) fn cache_slim(&self, name: String, entries: Vec<Slim>) {
        self.slim.insert_all([(name, entries)]);
    }

    /// Drop what this reader cached (manifest lists, reduced manifests, index manifests,
    /// fetched manifest bytes) once a plan no longer needs it; a later call reads again what
    /// it needs.
    pub fn release_caches(&self) {
        self.lists.map().clear();
        self.lists.map().shrink_to_fit();
        self.release_slim();
        self.index_files.map().clear();
        self.index_files.map().shrink_to_fit();
        let mut fetched = self.fetched.lock().unwrap_or_else(|p| p.into_inner());
        fetched.content = HashMap::new();
    }

    /// Drop the reduced manifests of protection ([`ReferenceReader::protected_among`]) once
    /// its result is taken.
    pub fn release_slim(&self) {
        self.slim.map().clear();
        self.slim.map().shrink_to_fit();
        let charged = self
            .slim_charged
            .swap(0, std::sync::atomic::Ordering::Relaxed);
        self.memory.release(charged);
    }

    /// A loaded list's manifests (empty if never loaded).
    pub fn list(&self, name: &str) -> Arc<Vec<ListedManifest>> {
        self.lists.get(name).unwrap_or_default()
    }

    /// A list from the cache, else read (and not cached: used for lists read once, such as
    /// those of removed versions). With `tolerate_missing`, an absent list reads as empty.
    pub async fn list_uncached(
        &self,
        name: &str,
        tolerate_missing: bool,
    ) -> Result<Arc<Vec<ListedManifest>>> {
        if let Some(v) = self.lists.get(name) {
            return Ok(v);
        }
        match self
            .table
            .reader()
            .manifest_list(self.table.paths(), name)
            .await
        {
            Ok(v) => Ok(Arc::new(listed(v))),
            Err(e) if tolerate_missing && e.is_not_found() => Ok(Arc::default()),
            Err(e) => Err(e),
        }
    }

    /// [`ReferenceReader::list_uncached`] that tells an absent list apart: `None` when the
    /// list is not on disk.
    pub async fn list_if_present(&self, name: &str) -> Result<Option<Arc<Vec<ListedManifest>>>> {
        if let Some(v) = self.lists.get(name) {
            return Ok(Some(v));
        }
        match self
            .table
            .reader()
            .manifest_list(self.table.paths(), name)
            .await
        {
            Ok(v) => Ok(Some(Arc::new(listed(v)))),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Read one manifest in full (not cached). With `tolerate_missing`, an absent one reads as
    /// empty.
    pub async fn manifest(&self, name: &str, tolerate_missing: bool) -> Result<Vec<ManifestEntry>> {
        match self.table.reader().manifest(self.table.paths(), name).await {
            Ok(v) => Ok(v),
            Err(e) if tolerate_missing && e.is_not_found() => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// Read one manifest and reduce it in the blocking task that decodes it (see
    /// [`crate::table::MetadataReader::manifest_reduced`]). With `tolerate_missing`, an absent
    /// manifest reduces to `T::default()`.
    pub async fn manifest_reduced<T: Default + Send + 'static>(
        &self,
        paths: &Arc<PathFactory>,
        name: &str,
        tolerate_missing: bool,
        reduce: impl FnOnce(&PathFactory, ManifestFiles<'_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        match self
            .table
            .reader()
            .manifest_reduced(paths, name, reduce)
            .await
        {
            Ok(v) => Ok(v),
            Err(e) if tolerate_missing && e.is_not_found() => Ok(T::default()),
            Err(e) => Err(e),
        }
    }

    async fn load_slim(&self, names: &[String], candidate_keys: &Arc<CandidateKeys>) -> Result<()> {
        let todo = self.slim.missing(names);
        let paths = self.table.paths_arc();
        let this = self;
        let read: Vec<(String, Vec<Slim>)> = stream::iter(todo)
            .map(|n| {
                let filter = candidate_keys.clone();
                async move {
                    let reduce = move |p: &PathFactory, entries: ManifestFiles<'_>| {
                        slim_of(p, entries, &filter)
                    };
                    let fetched = this
                        .fetched
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .content
                        .remove(&n);
                    let slim = match fetched {
                        Some(bytes) => {
                            this.table
                                .reader()
                                .manifest_bytes_reduced(paths, &n, bytes, reduce)
                                .await?
                        }
                        None => this.manifest_reduced(paths, &n, false, reduce).await?,
                    };
                    Ok::<_, crate::error::Error>((n, slim))
                }
            })
            .buffer_unordered(self.concurrency())
            .try_collect()
            .await?;
        // Held until the run ends (protection reads them per protector).
        let bytes: u64 = read
            .iter()
            .flat_map(|(_, v)| v.iter())
            .map(Slim::heap_bytes)
            .sum();
        self.memory
            .charge("protection's reduced manifests", bytes)?;
        self.slim_charged
            .fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
        self.slim.insert_all(read);
        Ok(())
    }

    /// The manifest lists protector `p` needs (read strictly).
    fn lists_of(&self, p: &Protector) -> Vec<String> {
        let s = &p.snapshot;
        match p.mode {
            ProtectMode::Full | ProtectMode::DeltaAdds => {
                s.manifest_lists().map(String::from).collect()
            }
            ProtectMode::Changelog => {
                changelog_needed_lists(s, self.table.options().changelog_producer_none())
            }
        }
    }

    /// The manifest lists of all `protectors` (repeats included).
    fn lists_of_all(&self, protectors: &[Protector]) -> Vec<String> {
        protectors.iter().flat_map(|p| self.lists_of(p)).collect()
    }

    /// Of the `candidates`, those that some protector still needs. Any metadata a protector
    /// needs that cannot be read is an error (nothing may then be deleted).
    pub async fn protected_files(
        &mut self,
        protectors: &[Protector],
        candidates: &HashSet<Location>,
    ) -> Result<FastSet<Location>> {
        let names = CandidateKeys::from_locations(candidates.iter());
        self.protected_among(protectors, Arc::new(names), |l| candidates.contains(l))
            .await
    }

    /// Of the candidates (files whose names pass `candidate_keys`, located where
    /// `is_candidate` says), those that some protector still needs. Any metadata a protector
    /// needs that cannot be read is an error (nothing may then be deleted). Slim entries are cached per
    /// manifest for the candidate names of the first call; later calls must pass the same
    /// (or a smaller) candidate set.
    pub async fn protected_among(
        &mut self,
        protectors: &[Protector],
        candidate_keys: Arc<CandidateKeys>,
        is_candidate: impl Fn(&Location) -> bool,
    ) -> Result<FastSet<Location>> {
        let mut protected = FastSet::default();
        self.protect_among(protectors, candidate_keys, is_candidate, |l| {
            if !protected.contains(l) {
                protected.insert(l.clone());
            }
        })
        .await?;
        Ok(protected)
    }

    /// [`ReferenceReader::protected_among`] without building the set: `protect` is called
    /// with every candidate location some protector still needs (possibly more than once).
    pub async fn protect_among(
        &mut self,
        protectors: &[Protector],
        candidate_keys: Arc<CandidateKeys>,
        is_candidate: impl Fn(&Location) -> bool,
        mut protect: impl FnMut(&Location),
    ) -> Result<()> {
        if candidate_keys.is_empty() {
            return Ok(());
        }
        let all_lists: Vec<String> = self.lists_of_all(protectors);
        self.load_lists(&all_lists, false).await?;
        let manifests = self.manifests_of_lists(&all_lists);
        self.load_slim(&manifests, &candidate_keys).await?;
        // Each manifest's entries that name a candidate, found once per manifest (protectors
        // share most manifests): a slim manifest holds what passed the name filter, which
        // also passes names that only share a key with a candidate's.
        let mut slims: HashMap<&str, Arc<Vec<Slim>>> = HashMap::new();
        for m in &manifests {
            if !slims.contains_key(m.as_str()) {
                slims.insert(m.as_str(), self.slim.get(m).unwrap_or_default());
            }
        }
        let relevant: HashMap<&str, Vec<&Slim>> = slims
            .iter()
            .map(|(m, slim)| {
                let kept = slim
                    .iter()
                    .filter(|e| e.locations().any(&is_candidate))
                    .collect();
                (*m, kept)
            })
            .collect();

        let producer_none = self.table.options().changelog_producer_none();
        for p in protectors {
            let s = &p.snapshot;
            let slim_of_list = |list: &str| -> Vec<&[&Slim]> {
                self.list(list)
                    .iter()
                    .filter_map(|m| relevant.get(m.file_name.as_str()).map(Vec::as_slice))
                    .collect()
            };
            let mut adds_only: Vec<String> = Vec::new();
            match p.mode {
                ProtectMode::Full => {
                    // Merge base then delta by identifier (location, level and the rest,
                    // exactly as readers merge), over candidates only (the merge is per
                    // key); every live entry then protects its location, whatever entry a
                    // candidate came from.
                    let mut live: FastMap<(&Location, i32, &[u8]), &Slim> = FastMap::default();
                    for list in [&s.base_manifest_list, &s.delta_manifest_list] {
                        for m in slim_of_list(list) {
                            for e in m.iter() {
                                let key = (&e.location, e.level, &e.ident[..]);
                                match e.kind {
                                    FileKind::Add => {
                                        live.insert(key, *e);
                                    }
                                    FileKind::Delete => {
                                        live.remove(&key);
                                    }
                                }
                            }
                        }
                    }
                    for e in live.into_values() {
                        for l in e.locations() {
                            protect(l);
                        }
                    }
                    adds_only.extend(s.changelog_manifest_list.clone());
                }
                ProtectMode::DeltaAdds => {
                    adds_only.push(s.delta_manifest_list.clone());
                    adds_only.extend(s.changelog_manifest_list.clone());
                }
                ProtectMode::Changelog => match &s.changelog_manifest_list {
                    Some(c) => adds_only.push(c.clone()),
                    None if producer_none => adds_only.push(s.delta_manifest_list.clone()),
                    None => {}
                },
            }
            for list in adds_only {
                for m in slim_of_list(&list) {
                    for e in m.iter().filter(|e| e.kind == FileKind::Add) {
                        for l in e.locations() {
                            protect(l);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Read (once, concurrently) the given index manifests. With `tolerate_missing` an absent
    /// index manifest names nothing. Concurrent callers may share one reader.
    pub async fn load_index_manifests(
        &self,
        names: &[String],
        tolerate_missing: bool,
    ) -> Result<()> {
        let todo = self.index_files.missing(names);
        let table = self.table;
        let read: Vec<(String, Vec<IndexFile>)> = stream::iter(todo)
            .map(|n| async move {
                let files = read_index_files(table, &n, tolerate_missing).await?;
                Ok::<_, crate::error::Error>((n, files))
            })
            .buffer_unordered(self.concurrency())
            .try_collect()
            .await?;
        self.index_files.insert_all(read);
        Ok(())
    }

    /// Index files named by an index manifest (read once). With `tolerate_missing` an absent
    /// index manifest names nothing.
    pub async fn index_files_of(
        &self,
        name: &str,
        tolerate_missing: bool,
    ) -> Result<Arc<Vec<IndexFile>>> {
        if let Some(v) = self.index_files.get(name) {
            return Ok(v);
        }
        let files = read_index_files(self.table, name, tolerate_missing).await?;
        self.index_files.insert_all([(name.to_string(), files)]);
        Ok(self.index_files.get(name).unwrap_or_default())
    }

    /// On an object store, read (strictly, concurrently) the metadata of `protectors` that does
    /// not depend on the candidates: their manifest lists and index manifests, and their
    /// manifests' bytes (not decoded: that needs the candidates' names), up to
    /// [`PREFETCH_MANIFEST_BYTES`] per run. A later [`ReferenceReader::protected_among`] or
    /// [`ReferenceReader::referenced_metadata`] then finds them at hand instead of waiting
    /// rounds of requests. Meant to run alongside the candidate readers.
    ///
    /// On a local disk it reads nothing: there reading is decoding, CPU work that would only
    /// compete with the candidate readers for the cores (measured slower at medium size).
    ///
    /// Manifests in `skip` are not fetched (a candidate reader reads them and caches them for
    /// protection, see [`crate::clean::expiry::plan::deleted_by_deltas`]).
    pub async fn prefetch(&self, protectors: &[Protector], skip: &HashSet<String>) -> Result<()> {
        if self.table.root().is_local() {
            return Ok(());
        }
        let lists: Vec<String> = self.lists_of_all(protectors);
        let index_manifests = Self::index_manifests_of(protectors);
        let manifests = async {
            self.load_lists(&lists, false).await?;
            self.fetch_manifests(&lists, skip).await
        };
        futures::try_join!(
            manifests,
            self.load_index_manifests(&index_manifests, false),
        )?;
        Ok(())
    }

    /// Fetch the manifests of loaded `lists` that are neither reduced nor fetched yet, in
    /// order, while the byte budget lasts. An absent manifest is skipped: the strict read that
    /// needs it reports it.
    async fn fetch_manifests(&self, lists: &[String], skip: &HashSet<String>) -> Result<()> {
        let mut todo: Vec<String> = Vec::new();
        {
            let mut fetched = self.fetched.lock().unwrap_or_else(|p| p.into_inner());
            let mut seen: HashSet<String> = HashSet::new();
            'lists: for l in lists {
                for m in self.list(l).iter() {
                    let size = m.file_size.max(0) as u64;
                    if !seen.insert(m.file_name.clone())
                        || skip.contains(&m.file_name)
                        || self.slim.contains(&m.file_name)
                        || fetched.content.contains_key(&m.file_name)
                    {
                        continue;
                    }
                    if size > fetched.budget {
                        break 'lists;
                    }
                    fetched.budget -= size;
                    todo.push(m.file_name.clone());
                }
            }
        }
        let storage = self.table.storage();
        let paths = self.table.paths();
        let read: Vec<Option<(String, bytes::Bytes)>> = stream::iter(todo)
            .map(|n| async move {
                match storage.get(&paths.manifest(&n)?).await {
                    Ok(b) => Ok(Some((n, b))),
                    Err(e) if e.is_not_found() => Ok(None),
                    Err(e) => Err(e),
                }
            })
            .buffer_unordered(self.concurrency())
            .try_collect()
            .await?;
        let mut fetched = self.fetched.lock().unwrap_or_else(|p| p.into_inner());
        for (n, b) in read.into_iter().flatten() {
            fetched.content.insert(n, b);
        }
        Ok(())
    }

    /// The manifests of loaded lists, in order (repeats included).
    fn manifests_of_lists(&self, lists: &[String]) -> Vec<String> {
        lists
            .iter()
            .flat_map(|l| {
                self.list(l)
                    .iter()
                    .map(|m| m.file_name.clone())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The index manifests the (non-changelog) protectors name.
    fn index_manifests_of(protectors: &[Protector]) -> Vec<String> {
        protectors
            .iter()
            .filter(|p| p.mode != ProtectMode::Changelog)
            .filter_map(|p| p.snapshot.index_manifest.clone())
            .collect()
    }

    /// Every metadata file the protectors reference (strict: unreadable metadata is an error).
    pub async fn referenced_metadata(
        &mut self,
        protectors: &[Protector],
    ) -> Result<ReferencedMetadata> {
        let mut out = ReferencedMetadata::default();
        let mut lists: Vec<String> = self.lists_of_all(protectors);
        self.load_lists(&lists, false).await?;
        let producer_none = self.table.options().changelog_producer_none();
        let optional: Vec<String> = protectors
            .iter()
            .filter(|p| p.mode == ProtectMode::Changelog)
            .flat_map(|p| changelog_optional_lists(&p.snapshot, producer_none))
            .collect();
        self.load_lists(&optional, true).await?;
        lists.extend(optional);
        for l in &lists {
            if !out.manifest_dir_names.contains(l) {
                out.manifest_dir_names.insert(l.clone());
            }
            for m in self.list(l).iter() {
                if !out.manifest_dir_names.contains(&m.file_name) {
                    out.manifest_dir_names.insert(m.file_name.clone());
                }
            }
        }
        self.load_index_manifests(&Self::index_manifests_of(protectors), false)
            .await?;
        for p in protectors {
            if p.mode == ProtectMode::Changelog {
                // A changelog reader reads neither statistics nor index files (Java deletes
                // both at snapshot expiry).
                continue;
            }
            if let Some(s) = &p.snapshot.statistics {
                out.statistics.insert(s.clone());
            }
            if let Some(im) = &p.snapshot.index_manifest {
                if out.manifest_dir_names.contains(im) {
                    // Read already (same index manifest as an earlier protector).
                    continue;
                }
                out.manifest_dir_names.insert(im.clone());
                let files = self.index_files_of(im, false).await?;
                out.index_files
                    .extend(files.iter().map(|f| f.location.clone()));
            }
        }
        Ok(out)
    }
}

/// The ADD entries of an index manifest as index files.
pub(crate) async fn read_index_files(
    table: &Table,
    name: &str,
    tolerate_missing: bool,
) -> Result<Vec<IndexFile>> {
    Ok(read_index_files_sized(table, name, tolerate_missing)
        .await?
        .map(|(files, _)| files)
        .unwrap_or_default())
}

/// [`read_index_files`] with the index manifest's own size; `None` for a missing one (with
/// `tolerate_missing`).
pub(crate) async fn read_index_files_sized(
    table: &Table,
    name: &str,
    tolerate_missing: bool,
) -> Result<Option<(Vec<IndexFile>, u64)>> {
    let (entries, size) = match table
        .reader()
        .index_manifest_sized(table.paths(), name)
        .await
    {
        Ok(v) => v,
        Err(e) if tolerate_missing && e.is_not_found() => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut files = Vec::with_capacity(entries.len());
    for e in entries.iter().filter(|e| e.kind == FileKind::Add) {
        files.push(IndexFile {
            location: table.paths().index_file(e)?,
            bytes: e.file_size.max(0) as u64,
        });
    }
    Ok(Some((files, size)))
}

fn slim_of(
    paths: &PathFactory,
    entries: ManifestFiles<'_>,
    candidate_keys: &CandidateKeys,
) -> Result<Vec<Slim>> {
    let mut locate = DataFileLocator::new(paths);
    let mut out = Vec::new();
    entries.for_each_locator(|e| {
        // An entry passes if its location or one of its extra files' (beside it, under their
        // own names) may be a candidate's. An external path always passes, and so does an
        // entry that cannot be located: its exact location decides (or its error stops the
        // run, as any unreadable metadata of a protector does).
        if e.external_path.is_none() {
            let mut may = |name: &str| -> bool {
                locate
                    .file_key(e.partition, e.bucket, name, None)
                    .map_or(true, |k| candidate_keys.may_contain(k))
            };
            let passes = may(e.file_name) || e.extra_files.iter().any(|x| may(x));
            if !passes {
                return Ok(());
            }
        }
        let (location, extras) = locate.locate(e)?;
        // Held until protection ends: an exact-size copy of the location (a joined one has
        // room to spare).
        out.push(Slim::of(e, location.clone(), extras));
        Ok(())
    })?;
    out.shrink_to_fit();
    Ok(out)
}

fn distinct<'a>(names: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut seen = HashSet::new();
    names.filter(|n| seen.insert(n.as_str())).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::manifest::DataFileMeta;
    use crate::spec::options::TableOptions;

    fn entry(name: &str, external: Option<&str>) -> ManifestEntry {
        ManifestEntry {
            kind: FileKind::Add,
            partition: Vec::new(),
            bucket: 0,
            total_buckets: 1,
            file: DataFileMeta {
                file_name: name.to_string(),
                external_path: external.map(String::from),
                ..Default::default()
            },
        }
    }

    #[test]
    fn the_key_filter_keeps_candidate_locations_their_extras_and_every_external_path() {
        let root = Location::parse("file:///t").unwrap();
        let options = TableOptions::new(&HashMap::new(), &HashMap::new());
        let paths = PathFactory::new(&root, &options, Vec::new()).unwrap();
        let names = CandidateKeys::from_locations(
            [
                Location::parse("file:///t/bucket-0/data-1.orc").unwrap(),
                Location::parse("file:///t/bucket-0/x.index").unwrap(),
                // Same name, another directory: no key match for `data-9.orc` below.
                Location::parse("file:///t/other/data-9.orc").unwrap(),
            ]
            .iter(),
        );
        let mut with_extra = entry("data-4.orc", None);
        with_extra.file.extra_files = vec!["x.index".into()];
        let entries = vec![
            entry("data-1.orc", None),
            entry("data-2.orc", None),
            // Same location as a candidate could have, under another file name.
            entry("data-3.orc", Some("file:///ext/data-1.orc")),
            // Its extra file is a candidate.
            with_extra,
            entry("data-9.orc", None),
        ];
        let bytes =
            crate::spec::manifest::encode_manifest(&entries, None, Default::default()).unwrap();
        let at = Location::parse("file:///t/manifest/manifest-1").unwrap();
        let slim = slim_of(&paths, ManifestFiles::new(&bytes, &at), &names).unwrap();
        let kept: Vec<&str> = slim.iter().map(|s| s.location.as_str()).collect();
        assert_eq!(
            kept,
            vec![
                "file:///t/bucket-0/data-1.orc",
                "file:///ext/data-1.orc",
                "file:///t/bucket-0/data-4.orc"
            ]
        );
    }
}
