//! The reader of one run's protecting metadata: manifest lists, protectors' manifests reduced
//! to the entries that may name a candidate, index manifests, each read at most once, and
//! manifests fetched ahead from an object store ([`ReferenceReader::prefetch`]).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use futures::stream::{self, StreamExt, TryStreamExt};

use crate::clean::expiry::protected::protectors::{changelog_needed_lists, ProtectMode, Protector};
use crate::clean::expiry::protected::slim::{slim_of, CandidateKeys, Slim};
use crate::error::Result;
use crate::hash::FastSet;
use crate::memory::MemoryBudget;
use crate::spec::manifest::{FileKind, ManifestFileMeta};
use crate::storage::Location;
use crate::table::{ManifestFiles, PathFactory, Table};

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
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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

/// A manifest list reduced to its manifests' names and sizes, in order; each manifest taken
/// from `shared` when an earlier list named it alike (and added there otherwise).
fn listed(metas: Vec<ManifestFileMeta>, shared: &SharedManifests) -> Vec<Arc<ListedManifest>> {
    let mut held = shared.lock().unwrap_or_else(|p| p.into_inner());
    let mut out: Vec<Arc<ListedManifest>> = metas
        .into_iter()
        .map(|m| {
            let m = ListedManifest {
                file_name: m.file_name,
                file_size: m.file_size,
                added_files: m.num_added_files.clamp(0, u32::MAX as i64) as u32,
                deleted_files: m.num_deleted_files.clamp(0, u32::MAX as i64) as u32,
            };
            match held.get(&m) {
                Some(same) => same.clone(),
                None => {
                    let m = Arc::new(m);
                    held.insert(m.clone());
                    m
                }
            }
        })
        .collect();
    out.shrink_to_fit();
    out
}

/// The manifests the lists a reader read name, each once (compared whole: name, size and
/// counts).
type SharedManifests = Arc<Mutex<FastSet<Arc<ListedManifest>>>>;

/// Caches and reads for one run.
pub struct ReferenceReader<'t> {
    pub(super) table: &'t Table,
    /// Manifest lists read so far (shared by concurrent readers of one run).
    lists: SharedCache<Vec<Arc<ListedManifest>>>,
    /// The manifests of every list read (cached in `lists` or read once for a removed
    /// version), each held once however many lists name it, until [`Self::release_caches`]:
    /// on a table whose manifests were never merged every version's base list names every
    /// earlier delta manifest, and each protector's list held its own copy of each (about 100
    /// bytes a manifest and protector).
    manifests: SharedManifests,
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
    /// At most this many bytes of manifests reduced by candidate readers are kept for
    /// protection ([`ReferenceReader::cache_slim`]); past it protection reads them again.
    slim_cache_limit: u64,
}

/// At most this many bytes of delta manifests reduced by the candidate readers are kept for
/// protection ([`ReferenceReader::cache_slim`]). Past it a manifest is read again when a
/// protector names it: on a table whose manifests were never merged the kept snapshot names
/// every delta manifest, and caching them all held about 500 bytes per data file.
pub const SLIM_CACHE_BYTES: u64 = 8 << 20;

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

impl<'t> ReferenceReader<'t> {
    /// A reader for `table` (any branch: manifests are shared).
    pub fn new(table: &'t Table) -> Self {
        ReferenceReader {
            table,
            lists: SharedCache::new(),
            manifests: Arc::new(Mutex::new(FastSet::default())),
            slim: SharedCache::new(),
            index_files: SharedCache::new(),
            fetched: Mutex::new(FetchedManifests {
                budget: PREFETCH_MANIFEST_BYTES,
                content: HashMap::new(),
            }),
            memory: MemoryBudget::default(),
            slim_charged: std::sync::atomic::AtomicU64::new(0),
            slim_cache_limit: SLIM_CACHE_BYTES,
        }
    }

    /// This reader, keeping at most `bytes` of manifests reduced by candidate readers for
    /// protection instead of [`SLIM_CACHE_BYTES`] (tests and benchmarks: 0 makes protection
    /// read every manifest itself).
    #[cfg(any(test, feature = "internal-api"))]
    pub fn with_slim_cache_bytes(mut self, bytes: u64) -> Self {
        self.slim_cache_limit = bytes;
        self
    }

    /// Bytes of reduced manifests held for protection now (charged to the run's budget).
    #[cfg(any(test, feature = "internal-api"))]
    pub fn slim_cached_bytes(&self) -> u64 {
        self.slim_charged.load(std::sync::atomic::Ordering::Relaxed)
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
        let read: Vec<Option<(String, Vec<Arc<ListedManifest>>)>> = stream::iter(todo)
            .map(|n| async move {
                match self.read_listed(&n).await {
                    Ok(v) => Ok(Some((n, v))),
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

    /// Read list `name` and reduce it to [`ListedManifest`]s in the task that decodes it, each
    /// manifest held once with the cached lists' ([`SharedManifests`]).
    async fn read_listed(&self, name: &str) -> Result<Vec<Arc<ListedManifest>>> {
        let shared = self.manifests.clone();
        self.table
            .reader()
            .manifest_list_reduced(self.table.paths(), name, move |v| listed(v, &shared))
            .await
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
    ///
    /// Kept only while the cache holds at most the reader's limit ([`SLIM_CACHE_BYTES`]) and
    /// the run's budget allows it; otherwise dropped, and protection reads the manifest again.
    pub(crate) fn cache_slim(&self, name: String, entries: Vec<Slim>) {
        use std::sync::atomic::Ordering;
        let bytes: u64 = entries.iter().map(Slim::heap_bytes).sum();
        let fits = self
            .slim_charged
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                held.checked_add(bytes)
                    .filter(|after| *after <= self.slim_cache_limit)
            })
            .is_ok();
        if !fits {
            return;
        }
        if self
            .memory
            .charge("manifests reduced for protection", bytes)
            .is_err()
        {
            self.slim_charged.fetch_sub(bytes, Ordering::Relaxed);
            return;
        }
        self.slim.insert_all([(name, entries)]);
    }

    /// True once [`ReferenceReader::cache_slim`] keeps nothing more (its limit reached): a
    /// candidate reader then need not reduce a manifest for protection.
    pub(crate) fn slim_cache_full(&self) -> bool {
        self.slim_charged.load(std::sync::atomic::Ordering::Relaxed) >= self.slim_cache_limit
    }

    /// Drop what this reader cached (manifest lists, reduced manifests, index manifests,
    /// fetched manifest bytes) once a plan no longer needs it; a later call reads again what
    /// it needs.
    pub fn release_caches(&self) {
        self.lists.map().clear();
        self.lists.map().shrink_to_fit();
        *self.manifests.lock().unwrap_or_else(|p| p.into_inner()) = FastSet::default();
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

    /// True when manifest `name` is held reduced for protection.
    pub(super) fn is_slim_cached(&self, name: &str) -> bool {
        self.slim.contains(name)
    }

    /// Manifest `name` as protection reduced it (empty if not loaded).
    pub(super) fn cached_slim(&self, name: &str) -> Arc<Vec<Slim>> {
        self.slim.get(name).unwrap_or_default()
    }

    /// A loaded list's manifests (empty if never loaded).
    pub fn list(&self, name: &str) -> Arc<Vec<Arc<ListedManifest>>> {
        self.lists.get(name).unwrap_or_default()
    }

    /// [`ReferenceReader::list_uncached`] that tells an absent list apart: `None` when the
    /// list is not on disk.
    pub async fn list_if_present(
        &self,
        name: &str,
    ) -> Result<Option<Arc<Vec<Arc<ListedManifest>>>>> {
        if let Some(v) = self.lists.get(name) {
            return Ok(Some(v));
        }
        match self.read_listed(name).await {
            Ok(v) => Ok(Some(Arc::new(v))),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Read one manifest and reduce it in the task that decodes it (see
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

    /// Manifest `name` reduced for protection: as cached, else read (strictly) and reduced to
    /// the entries that may name a candidate, not cached (protection streams each manifest
    /// once). With it, whether it was read now (false: it came from the cache).
    pub(super) async fn reduced_for_protection(
        &self,
        name: String,
        candidate_keys: Arc<CandidateKeys>,
    ) -> Result<(Arc<Vec<Slim>>, bool)> {
        if let Some(v) = self.slim.get(&name) {
            return Ok((v, false));
        }
        let paths = self.table.paths_arc();
        let reduce =
            move |p: &PathFactory, entries: ManifestFiles<'_>| slim_of(p, entries, &candidate_keys);
        let fetched = self
            .fetched
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .content
            .remove(&name);
        let slim = match fetched {
            Some(bytes) => {
                self.table
                    .reader()
                    .manifest_bytes_reduced(paths, &name, bytes, reduce)
                    .await?
            }
            None => self.manifest_reduced(paths, &name, false, reduce).await?,
        };
        Ok((Arc::new(slim), true))
    }

    pub(super) async fn load_slim(
        &self,
        names: &[String],
        candidate_keys: &Arc<CandidateKeys>,
    ) -> Result<()> {
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
    pub(super) fn lists_of_all(&self, protectors: &[Protector]) -> Vec<String> {
        protectors.iter().flat_map(|p| self.lists_of(p)).collect()
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
    pub(super) fn manifests_of_lists(&self, lists: &[String]) -> Vec<Arc<ListedManifest>> {
        let mut out = Vec::new();
        for l in lists {
            out.extend(self.list(l).iter().cloned());
        }
        out
    }

    /// The names of the manifests the (loaded) `lists` name, each once, in first-appearance
    /// order.
    pub(super) fn distinct_manifests_of_lists(&self, lists: &[String]) -> Vec<String> {
        let held: Vec<_> = lists.iter().map(|l| self.list(l)).collect();
        let mut seen: HashSet<&str> = HashSet::new();
        held.iter()
            .flat_map(|l| l.iter())
            .filter(|m| seen.insert(m.file_name.as_str()))
            .map(|m| m.file_name.clone())
            .collect()
    }

    /// The sizes of `names` as the loaded lists give them (absent: not in a loaded list).
    pub(super) fn manifest_sizes<'n>(&self, names: &'n [String]) -> HashMap<&'n str, u64> {
        let wanted: HashSet<&str> = names.iter().map(String::as_str).collect();
        let mut out = HashMap::with_capacity(wanted.len());
        for list in self.lists.map().values() {
            for m in list.iter() {
                if let Some(n) = wanted.get(m.file_name.as_str()) {
                    out.insert(*n, m.file_size.max(0) as u64);
                }
            }
        }
        out
    }

    /// The index manifests the (non-changelog) protectors name.
    pub(super) fn index_manifests_of(protectors: &[Protector]) -> Vec<String> {
        protectors
            .iter()
            .filter(|p| p.mode != ProtectMode::Changelog)
            .filter_map(|p| p.snapshot.index_manifest.clone())
            .collect()
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

fn distinct<'a>(names: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut seen = HashSet::new();
    names.filter(|n| seen.insert(n.as_str())).cloned().collect()
}
