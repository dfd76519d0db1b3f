//! Storage: local disks and object stores behind one small backend trait, wrapped in layers.
//!
//! * Each store is a `Backend` (`backend.rs`): the local disk (`disk.rs`, `std::fs` functions of
//!   `local.rs` on the blocking pool) or an `object_store` store (`object.rs`). [`Storage`]
//!   calls the backend serving a location once per operation (or per batch of deletes), inside
//!   its layers: the delete guard (`guard.rs`) before every write and delete, the read-stopping
//!   test (`stop.rs`) around every read.
//! * [`Location`] is a normalized absolute address (`file:///…`, `memory:///…`, `s3://bucket/…`,
//!   `gs://…`, `az://…`); names are byte-exact, never percent-decoded.
//! * [`Storage`] is opened on a table root. Local paths are served directly with `std::fs`
//!   (byte-exact names, hidden files listed, empty directories removable); every other scheme goes
//!   through `object_store`, one store per `(scheme, authority)`, opened lazily with the same
//!   options, so data files on another bucket (external paths) work too.
//! * Deletion is guarded ([`Storage::check_deletable`]): only locations strictly under the table
//!   root or an added delete root can be deleted, compared component-wise on normalized
//!   locations. On local disks a second, physical layer deletes relative to directory handles
//!   opened beneath the allowed root with no symlink followed (`openat2` with `RESOLVE_BENEATH |
//!   RESOLVE_NO_SYMLINKS`, else a component-by-component `O_NOFOLLOW` walk; then `unlinkat`), so
//!   neither a symlink nor a directory swapped for one during the run can redirect a deletion;
//!   [`Storage::check_beneath`] runs the same resolution up front, before anything is deleted.
//!   Writes (`put`, `put_if_absent`) obey the logical guard.
//! * Local reads take only regular files: a FIFO, socket or device where a file is expected
//!   (read, `head`, or listed) is an error, and files are opened with `O_NONBLOCK` so a FIFO
//!   cannot block a read.
//!
//! Options are described in [`config`]. All async methods need a tokio runtime (local I/O runs on
//! the blocking pool).

#[cfg(feature = "s3")]
mod aws_profile;
#[cfg(feature = "azure")]
mod azure;
mod backend;
mod beneath;
mod blocking;
pub mod config;
mod disk;
#[cfg(feature = "gcs")]
mod gcs;
mod guard;
mod listing;
mod local;
mod location;
mod object;
mod removal;
mod stop;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::ObjectStore;

use crate::error::{Error, Result};
use backend::{Backend, DeleteScope};
pub use beneath::DirHook;
pub use blocking::max_blocking_sections;
pub(crate) use blocking::{blocking, decode};
use config::StoreConfig;
use disk::LocalDisk;
use guard::DeleteGuard;
pub use listing::{DirListing, FileStatus, NameListing, NamedStatus, SizeAndTime, StatFilter};
pub use location::Location;
use object::ObjectBackend;
pub use removal::Removal;
use stop::ReadStop;
pub use stop::StopReads;

/// Access to a table's storage. `Send + Sync`; share it in an `Arc`.
///
/// Every operation finds the backend (`Backend`) serving its location (the local disk, or the object
/// store of its `scheme://authority`) and calls it once, wrapped in the storage's layers: the
/// delete guard before writes and deletes, the read-stopping test around reads.
pub struct Storage {
    /// Which locations may be deleted or written.
    guard: DeleteGuard,
    /// Reads fail with [`Error::Cancelled`] once its test says so ([`Storage::stop_reads_when`]).
    reads: ReadStop,
    config: StoreConfig,
    /// Test hook: see [`Storage::before_unlink_in_dir`].
    before_unlink: Option<DirHook>,
    /// Object-store backends by `scheme://authority`, opened on first use.
    stores: Mutex<HashMap<String, Arc<dyn Backend>>>,
}

impl fmt::Debug for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Storage")
            .field("root", self.guard.root())
            .field("delete_roots", &self.guard.extra_roots())
            .field("config", &self.config)
            .finish()
    }
}

/// Directories one blocking section lists at most ([`Storage::list_dirs_by_name`]): few, since
/// a section holds every listing it made until the caller takes them, and candidate
/// directories hold thousands of files.
pub const DIRS_PER_SECTION: usize = 2;

/// Files one blocking section reads at most ([`Storage::get_many_then`]).
pub const FILES_PER_SECTION: usize = 16;

/// The local-disk backend, shared by every storage.
static LOCAL_DISK: once_cell::sync::Lazy<Arc<dyn Backend>> =
    once_cell::sync::Lazy::new(|| Arc::new(LocalDisk));

impl Storage {
    /// Opens the storage of the table rooted at `root_uri` (see [`Location::parse`] for the
    /// accepted forms). `options` carries credentials, endpoint, region and retry settings
    /// ([`config`]). The root's object store, if any, is built now so bad options fail early;
    /// stores for other buckets are built on first use with the same options.
    pub fn open(root_uri: &str, options: &HashMap<String, String>) -> Result<Storage> {
        let root = Location::parse(root_uri)?;
        if root.is_store_root() {
            return Err(Error::InvalidArgument(format!(
                "table root {root} is the root of its filesystem or bucket"
            )));
        }
        let storage = Storage {
            guard: DeleteGuard::new(root),
            reads: ReadStop::default(),
            config: StoreConfig::new(options)?,
            before_unlink: None,
            stores: Mutex::new(HashMap::new()),
        };
        let _ = storage.backend(storage.root())?;
        tracing::debug!(root = %storage.root(), "opened storage");
        Ok(storage)
    }

    /// Makes every later read of this storage (`list_dir`, `list_tree`, `list_dirs`, `head`,
    /// `exists`, `get`) fail with [`Error::Cancelled`] before it starts once `stop` returns true:
    /// a cancelled run then stops at its next read instead of at its next cancellation check.
    /// Writes and deletes are not affected.
    ///
    /// A read already under way races the test too (looked at every 20 ms): once it says stop,
    /// the read returns [`Error::Cancelled`] without waiting for its I/O, so a read stuck on a
    /// hung mount or an unanswering server cannot hold a cancelled run. The blocking thread of
    /// a stuck local read is left behind until its system call returns.
    ///
    /// Only for runs whose every read error either aborts the run or makes it delete less (a
    /// failed read must never be taken for an absent file); the C ABI uses it for orphan-file
    /// removal, which reads everything before it deletes anything.
    pub fn stop_reads_when(mut self, stop: StopReads) -> Storage {
        self.reads = ReadStop::when(stop);
        self
    }

    /// Test hook: `hook` is called with each local directory's path after the directory's
    /// handle was opened for deletes and before anything in it is unlinked — the moment at
    /// which swapping the directory for a symlink would have redirected a path-based unlink.
    #[doc(hidden)]
    pub fn before_unlink_in_dir(mut self, hook: DirHook) -> Storage {
        self.before_unlink = Some(hook);
        self
    }

    /// The table root.
    pub fn root(&self) -> &Location {
        self.guard.root()
    }

    /// Allows deletions under `root` as well (e.g. the table's external data roots). The table
    /// root is always allowed. The root of a whole local filesystem (`file:///`) is never
    /// accepted: it is ignored with a warning.
    pub fn add_delete_root(&mut self, root: Location) {
        self.guard.allow_under(root);
    }

    /// The extra delete roots added with [`Storage::add_delete_root`].
    pub fn delete_roots(&self) -> &[Location] {
        self.guard.extra_roots()
    }

    /// A storage on the same root, with the same options and already opened (or injected)
    /// object stores, that also allows deletions under `roots` ([`Storage::add_delete_root`]
    /// rules apply). For capabilities that learn extra roots (a table's external data paths)
    /// only after the table is open and its storage is shared in an `Arc`.
    pub fn with_delete_roots(&self, roots: &[Location]) -> Storage {
        let stores = self
            .stores
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let mut guard = self.guard.clone();
        for r in roots {
            guard.allow_under(r.clone());
        }
        Storage {
            guard,
            reads: self.reads.clone(),
            config: self.config.clone(),
            before_unlink: self.before_unlink.clone(),
            stores: Mutex::new(stores),
        }
    }

    /// Uses `store` for every location on `base`'s `scheme://authority` instead of building one
    /// from the options (e.g. a throttled or fault-injecting store in tests). Not for `file://`.
    pub fn set_object_store(&self, base: &Location, store: Arc<dyn ObjectStore>) -> Result<()> {
        if base.is_local() {
            return Err(Error::InvalidArgument(format!(
                "{base}: local paths are not served by an object store"
            )));
        }
        let mut stores = self.stores.lock().unwrap_or_else(|p| p.into_inner());
        stores.insert(
            base.store_base().to_string(),
            Arc::new(ObjectBackend::new(store)),
        );
        Ok(())
    }

    /// `Ok(())` if `loc` may be deleted: it must lie strictly under the table root or under a root
    /// added with [`Storage::add_delete_root`], compared component-wise (same scheme and
    /// authority, whole segments). Otherwise [`Error::PathRefused`] — also for the table root
    /// itself and for an added root itself.
    pub fn check_deletable(&self, loc: &Location) -> Result<()> {
        self.guard.check(loc)
    }

    /// What the backends' deletes may touch: every allowed root, and the test hook.
    fn delete_scope(&self) -> DeleteScope {
        DeleteScope {
            roots: self.guard.allowed_roots(),
            before_unlink: self.before_unlink.clone(),
        }
    }

    /// The backend serving `loc`, opening (and caching) its object store on first use.
    fn backend(&self, loc: &Location) -> Result<Arc<dyn Backend>> {
        if loc.is_local() {
            return Ok(LOCAL_DISK.clone());
        }
        let base = loc.store_base();
        let mut stores = self.stores.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = stores.get(base) {
            return Ok(s.clone());
        }
        let store = config::build_object_store(loc.scheme(), loc.authority(), base, &self.config)?;
        tracing::debug!(store = base, "opened object store");
        let backend: Arc<dyn Backend> = Arc::new(ObjectBackend::new(store));
        stores.insert(base.to_string(), backend.clone());
        Ok(backend)
    }

    /// Immediate children of `dir`. A directory that truly does not exist gives an empty
    /// listing; on local disks a path that is anything else than a readable directory (a
    /// regular file, a FIFO, a dangling symlink, a symlink loop, a parent component that is
    /// not a directory, a directory that cannot be opened) is an error, and on object stores
    /// every listing error is an error. Hidden files and
    /// names with `%`, `=`, spaces or non-ASCII characters are returned exactly; on local disks,
    /// names that are not UTF-8 are skipped (with a warning).
    pub async fn list_dir(&self, dir: &Location) -> Result<DirListing> {
        self.reads
            .run(async {
                tracing::debug!(dir = %dir, "list_dir");
                self.backend(dir)?.list_dir(dir).await
            })
            .await
    }

    /// Immediate children of a metadata directory (`snapshot/`, `changelog/`, `tag/`,
    /// `branch/`, `consumer/`, `schema/`) as Paimon readers see them. On local disks symlinks
    /// are followed (a symlinked branch directory is listed as a directory), and an entry that
    /// cannot be interpreted — a name that is not UTF-8, a dangling symlink, a FIFO, socket or
    /// device — is [`Error::Malformed`], never skipped: skipping one could hide a version that
    /// protects files. Object stores list as [`Storage::list_dir`]. A directory that truly
    /// does not exist gives an empty listing; anything else that cannot be listed is an error,
    /// as for [`Storage::list_dir`].
    pub async fn list_metadata_dir(&self, dir: &Location) -> Result<DirListing> {
        self.reads
            .run(async {
                tracing::debug!(dir = %dir, "list_metadata_dir");
                self.backend(dir)?.list_metadata_dir(dir).await
            })
            .await
    }

    /// Every file below `dir`, recursively, sorted by location (local directory symlinks are
    /// not followed). A directory that truly does not exist gives an empty list; anything else
    /// that cannot be listed is an error, as for [`Storage::list_dir`].
    pub async fn list_tree(&self, dir: &Location) -> Result<Vec<FileStatus>> {
        self.reads
            .run(async {
                tracing::debug!(dir = %dir, "list_tree");
                self.backend(dir)?.list_tree(dir).await
            })
            .await
    }

    /// Checks directories of the table's layout (`snapshot/`, `tag/`, `manifest/`, ...) without
    /// listing them: on a local disk each must be a directory this process can open (symlinks
    /// followed) or truly absent (nothing at the path, its nearest existing ancestor a
    /// directory, decided with `lstat`); a regular file, FIFO, socket or device, a dangling
    /// symlink or a symlink loop, at the path or at a parent component, and a directory that
    /// cannot be opened are errors naming the path. Object stores have no directories:
    /// nothing to check.
    pub async fn check_layout_dirs(&self, dirs: &[Location]) -> Result<()> {
        let Some(first) = dirs.first() else {
            return Ok(());
        };
        self.reads
            .run(async {
                tracing::debug!(dirs = dirs.len(), first = %first, "check_layout_dirs");
                self.backend(first)?.check_dirs(dirs).await
            })
            .await
    }

    /// Lists many directories with at most `concurrency` listings in flight (0 is taken as 1).
    /// Results come back in the order of `dirs`; the first failure fails the whole call.
    pub async fn list_dirs(
        &self,
        dirs: &[Location],
        concurrency: usize,
    ) -> Result<Vec<(Location, DirListing)>> {
        let mut out: Vec<(usize, Location, DirListing)> = Vec::with_capacity(dirs.len());
        let mut stream = futures::stream::iter(dirs.iter().enumerate())
            .map(|(i, d)| async move { (i, d, self.list_dir(d).await) })
            .buffer_unordered(concurrency.max(1));
        while let Some((i, d, r)) = stream.next().await {
            out.push((i, d.clone(), r?));
        }
        out.sort_by_key(|(i, _, _)| *i);
        Ok(out.into_iter().map(|(_, d, l)| (d, l)).collect())
    }

    /// Lists many directories as [`Storage::list_dir`] does, the files of each by name
    /// ([`NameListing`]: no [`Location`] per file), with at most `concurrency` listings in
    /// flight (0 is taken as 1). On a local disk several directories are listed in one blocking
    /// section (at most [`DIRS_PER_SECTION`], fewer when there are few directories, so that
    /// `concurrency` sections still run at once); object stores list each directory in its own
    /// request, `concurrency` at once. Results come as they are ready, in no particular order,
    /// one per directory; a failed listing fails only its directory (a section that fails as a
    /// whole, e.g. cancelled by [`Storage::stop_reads_when`], fails each of its directories).
    /// Each result comes with the index of its directory in `dirs`.
    pub fn list_dirs_by_name<'a>(
        &'a self,
        dirs: &'a [Location],
        concurrency: usize,
    ) -> BoxStream<'a, (usize, Result<NameListing>)> {
        self.list_dirs_by_name_filtered(dirs, concurrency, None)
    }

    /// [`Storage::list_dirs_by_name`], where on a local disk only the regular files `filter`
    /// wants are `stat`ed for their size and modification time, in the listing's blocking
    /// section ([`StatFilter::select`] gets each directory's index in `dirs`); the others come
    /// with [`NamedStatus::status`] `None`, by name and directory-entry type alone (a name and
    /// its type cost no `stat` where the filesystem fills the entry type). Symlinks, entries of
    /// unknown type and special files are classified as [`Storage::list_dir`] does. Object
    /// stores return every file's size and time (they come with the names) and never ask
    /// `filter`. Without a filter, every file has its status.
    pub fn list_dirs_by_name_filtered<'a>(
        &'a self,
        dirs: &'a [Location],
        concurrency: usize,
        filter: Option<Arc<dyn StatFilter>>,
    ) -> BoxStream<'a, (usize, Result<NameListing>)> {
        let concurrency = concurrency.max(1);
        let groups = section_groups(dirs, concurrency, DIRS_PER_SECTION);
        futures::stream::iter(groups)
            .map(move |(first, n)| {
                let filter = filter.clone().map(|f| (f, first));
                async move {
                let group = &dirs[first..first + n];
                let listed = match group.first().map(|d| self.backend(d)) {
                    Some(Ok(backend)) => {
                        self.reads
                            .run(async {
                                tracing::debug!(dirs = group.len(), first = %group[0], "list_dirs_by_name");
                                Ok(backend.list_dirs_by_name(group, filter).await)
                            })
                            .await
                    }
                    Some(Err(e)) => Err(e),
                    None => Ok(Vec::new()),
                };
                let results = one_per_member(listed, n, "listing");
                futures::stream::iter((first..first + n).zip(results))
                }
            })
            .buffer_unordered(concurrency)
            .flatten()
            .boxed()
    }

    /// Size and modification time of a file; `None` if absent (a local directory also gives
    /// `None`: this is about files).
    pub async fn head(&self, loc: &Location) -> Result<Option<FileStatus>> {
        self.reads
            .run(async { self.backend(loc)?.head(loc).await })
            .await
    }

    /// True if the file exists (see [`Storage::head`]).
    pub async fn exists(&self, loc: &Location) -> Result<bool> {
        Ok(self.head(loc).await?.is_some())
    }

    /// Whole content of a file; [`Error::NotFound`] if absent.
    pub async fn get(&self, loc: &Location) -> Result<bytes::Bytes> {
        self.reads
            .run(async {
                tracing::debug!(path = %loc, "get");
                self.backend(loc)?.get(loc).await
            })
            .await
    }

    /// Reads a whole file and hands its content to `then` (decoding), which runs on the
    /// runtime's worker threads ([`decode`]): on a local disk the read is a blocking section
    /// first; from an object store the content is fetched first. [`Error::NotFound`] if absent.
    pub async fn get_then<T, F>(&self, loc: &Location, then: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(bytes::Bytes) -> Result<T> + Send + 'static,
    {
        self.reads
            .run(async {
                tracing::debug!(path = %loc, "get");
                let backend = self.backend(loc)?;
                match backend.blocking_get() {
                    Some(read) => {
                        let l = loc.clone();
                        let bytes = blocking(loc, move || read(&l)).await?;
                        decode(loc, move || then(bytes)).await
                    }
                    None => {
                        let bytes = backend.get(loc).await?;
                        decode(loc, move || then(bytes)).await
                    }
                }
            })
            .await
    }

    /// Reads many whole files and hands each one's content, with its index in `locs`, to
    /// `then` on the runtime's worker threads, as [`Storage::get_then`] does for one file, with
    /// at most `concurrency` reads in flight (0 is taken as 1). On a local disk several files
    /// are read in one blocking section (at most [`FILES_PER_SECTION`], fewer when there are few
    /// files, so that `concurrency` sections still run at once), which hands each file to the
    /// workers as it is read and waits for it (one file's content at a time); from an object store
    /// each file is fetched in its own request, `concurrency` at once. Results come as they are
    /// ready, in no particular order, one per location with its index; [`Error::NotFound`] for
    /// an absent file. A failure (a panic in `then` included) fails only its file, except a
    /// blocking section that fails as a whole (a cancellation by [`Storage::stop_reads_when`]):
    /// then each of its files gets the error.
    pub fn get_many_then<'a, T, F>(
        &'a self,
        locs: &'a [Location],
        concurrency: usize,
        then: F,
    ) -> BoxStream<'a, (usize, Result<T>)>
    where
        T: Send + 'static,
        F: Fn(usize, bytes::Bytes) -> Result<T> + Send + Sync + 'static,
    {
        let concurrency = concurrency.max(1);
        let then = Arc::new(then);
        let groups = section_groups(locs, concurrency, FILES_PER_SECTION);
        futures::stream::iter(groups)
            .map(move |(first, n)| {
                let then = Arc::clone(&then);
                async move {
                    let group = &locs[first..first + n];
                    let read = self
                        .reads
                        .run(self.get_group_then(first, group, then))
                        .await;
                    let results = one_per_member(read, n, "reading");
                    futures::stream::iter((first..first + n).zip(results))
                }
            })
            .buffer_unordered(concurrency)
            .flatten()
            .boxed()
    }

    /// One group of [`Storage::get_many_then`]: the files `group` (indices from `first` on), all
    /// served by one backend. One result per file, in order.
    async fn get_group_then<T, F>(
        &self,
        first: usize,
        group: &[Location],
        then: Arc<F>,
    ) -> Result<Vec<Result<T>>>
    where
        T: Send + 'static,
        F: Fn(usize, bytes::Bytes) -> Result<T> + Send + Sync + 'static,
    {
        let Some(at) = group.first() else {
            return Ok(Vec::new());
        };
        tracing::debug!(files = group.len(), first = %at, "get_many");
        let backend = self.backend(at)?;
        match backend.blocking_get() {
            Some(read) => {
                let owned = group.to_vec();
                blocking(at, move || {
                    Ok(owned
                        .iter()
                        .enumerate()
                        .map(|(i, l)| {
                            let bytes = read(l)?;
                            let then = Arc::clone(&then);
                            blocking::decode_from_blocking(l, move || then(first + i, bytes))
                        })
                        .collect())
                })
                .await
            }
            None => {
                let mut out = Vec::with_capacity(group.len());
                for (i, l) in group.iter().enumerate() {
                    let r = match backend.get(l).await {
                        Ok(bytes) => {
                            let then = Arc::clone(&then);
                            decode(l, move || then(first + i, bytes)).await
                        }
                        Err(e) => Err(e),
                    };
                    out.push(r);
                }
                Ok(out)
            }
        }
    }

    /// Writes `data`, replacing any existing file (hint files). Atomic where the backend allows:
    /// local disks write a hidden temp file `.<name>.<uuid>.tmp` and rename it; object-store puts
    /// are atomic. Missing local parent directories are created. The delete guard applies.
    pub async fn put(&self, loc: &Location, data: bytes::Bytes) -> Result<()> {
        self.check_deletable(loc)?;
        tracing::debug!(path = %loc, bytes = data.len(), "put");
        self.backend(loc)?.put(loc, data).await
    }

    /// Creates the file only if nothing exists there yet: `Ok(true)` if this call created it,
    /// `Ok(false)` if it already existed. Exclusive across processes: local disks write a temp
    /// file and hard-link it onto the target (falling back to `O_EXCL` where links are not
    /// supported); object stores use a conditional put (`PutMode::Create`; when it reports
    /// "exists", the object is read back and byte-identical content counts as created by this
    /// call, since object_store may have retried a create whose first answer was lost). The
    /// delete guard applies.
    pub async fn put_if_absent(&self, loc: &Location, data: bytes::Bytes) -> Result<bool> {
        self.check_deletable(loc)?;
        tracing::debug!(path = %loc, bytes = data.len(), "put_if_absent");
        self.backend(loc)?.put_if_absent(loc, data).await
    }

    /// Deletes files, with at most `concurrency` operations in flight (0 is taken as 1), and
    /// returns one result per input, in input order: [`Storage::delete_files_found`] with an
    /// absent file counted as deleted (idempotent), for callers to whom the difference does
    /// not matter.
    pub async fn delete_files(
        &self,
        locs: Vec<Location>,
        concurrency: usize,
    ) -> Vec<(Location, Result<()>)> {
        self.delete_files_found(locs, concurrency)
            .await
            .into_iter()
            .map(|(l, r)| (l, r.map(|_| ())))
            .collect()
    }

    /// Deletes files, with at most `concurrency` operations in flight (0 is taken as 1), and
    /// returns one result per input, in input order, saying what each delete found
    /// ([`Removal`]).
    ///
    /// Every location is checked against the guard ([`Storage::check_deletable`]) before
    /// anything is deleted; refused ones get [`Error::PathRefused`] and are left alone while the
    /// others proceed. On local disks each file is unlinked relative to its directory's handle,
    /// opened beneath its allowed root with no symlink followed (a directory reached through a
    /// symlink is refused with [`Error::PathRefused`]). A file that is already absent is no
    /// error: [`Removal::Absent`] where the store says so (local disks, GCS, Azure),
    /// [`Removal::Unconfirmed`] where it cannot tell (S3, the memory store). Directories are
    /// never deleted (a local directory gives an error). Object stores use the store's batched
    /// delete (`delete_stream`, up to 1000 keys per S3 request).
    pub async fn delete_files_found(
        &self,
        locs: Vec<Location>,
        concurrency: usize,
    ) -> Vec<(Location, Result<Removal>)> {
        let concurrency = concurrency.max(1);
        let mut results: Vec<Option<Result<Removal>>> = (0..locs.len()).map(|_| None).collect();

        // 1. The guard, for every file, before any deletion; the allowed files grouped by the
        //    backend serving them (one backend call per group, never one per file).
        let mut batches: Vec<Batch<'_>> = Vec::new();
        let mut last: Option<usize> = None;
        for (i, loc) in locs.iter().enumerate() {
            if let Err(e) = self.check_deletable(loc) {
                tracing::warn!(path = %loc, error = %e, "delete refused");
                results[i] = Some(Err(e));
                continue;
            }
            let base = loc.store_base();
            let known = match last {
                Some(b) if batches[b].base == base => Some(b),
                _ => batches.iter().position(|b| b.base == base),
            };
            let b = match known {
                Some(b) => b,
                None => match self.backend(loc) {
                    Ok(backend) => {
                        batches.push(Batch {
                            base,
                            local: loc.is_local(),
                            backend,
                            files: Vec::new(),
                        });
                        batches.len() - 1
                    }
                    Err(e) => {
                        results[i] = Some(Err(e));
                        continue;
                    }
                },
            };
            batches[b].files.push(i);
            last = Some(b);
        }

        // 2. Each backend deletes its batch: local files first, then object stores by base.
        batches.sort_by(|a, b| (!a.local, a.base).cmp(&(!b.local, b.base)));
        let scope = self.delete_scope();
        for batch in &batches {
            let files: Vec<Location> = batch.files.iter().map(|i| locs[*i].clone()).collect();
            let done = batch.backend.delete_batch(&scope, files, concurrency).await;
            for (i, r) in batch.files.iter().zip(done) {
                results[*i] = Some(r);
            }
        }
        drop(batches);

        let out: Vec<(Location, Result<Removal>)> = locs
            .into_iter()
            .zip(results)
            .map(|(l, r)| {
                let r = r.unwrap_or_else(|| Err(Error::Internal(format!("no result for {l}"))));
                (l, r)
            })
            .collect();
        let failed = out.iter().filter(|(_, r)| r.is_err()).count();
        tracing::debug!(files = out.len(), failed, "delete_files");
        out
    }

    /// Removes `dir` if it is an empty directory (non-recursive `rmdir`): `Ok(true)` if removed,
    /// `Ok(false)` if it is not empty or does not exist. Object stores have no directories:
    /// always `Ok(false)`. The guard applies (never the table root or an added root itself);
    /// on local disks the directory is removed with `unlinkat(parent, name, AT_REMOVEDIR)`
    /// relative to its parent's handle, opened beneath an allowed root with no symlink
    /// followed (a symlink in its place is refused, never followed).
    pub async fn delete_dir_if_empty(&self, dir: &Location) -> Result<bool> {
        self.check_deletable(dir)?;
        let backend = self.backend(dir)?;
        let removed = backend
            .delete_dir_if_empty(&self.delete_scope(), dir)
            .await?;
        if dir.is_local() {
            tracing::debug!(dir = %dir, removed, "delete_dir_if_empty");
        }
        Ok(removed)
    }

    /// The physical check of a deletion plan, before anything is deleted: every local
    /// location's directory must resolve beneath its allowed root with no symlinked component
    /// (a directory that does not exist passes: nothing in it can be deleted). The first
    /// violation is [`Error::PathRefused`]. Locations on object stores have no physical layer
    /// and pass. Each distinct directory is resolved once, in a few blocking sections.
    ///
    /// The deletes themselves resolve the same way again ([`Storage::delete_files`]): this check
    /// makes a plan fail as a whole rather than part-way.
    pub async fn check_beneath<'l>(
        &self,
        locs: impl IntoIterator<Item = &'l Location>,
    ) -> Result<()> {
        let mut dirs: std::collections::HashSet<&str> = std::collections::HashSet::new();
        let mut todo: Vec<Location> = Vec::new();
        for l in locs {
            if !l.is_local() {
                continue;
            }
            let dir = match l.as_str().rsplit_once('/') {
                Some((d, _)) => d,
                None => l.as_str(),
            };
            if dirs.insert(dir) {
                todo.push(l.clone());
            }
        }
        if todo.is_empty() {
            return Ok(());
        }
        LocalDisk
            .check_beneath(&self.guard.allowed_roots(), todo)
            .await
    }
}

/// The files of one [`Storage::delete_files`] call served by one backend.
struct Batch<'l> {
    /// `scheme://authority` of the backend.
    base: &'l str,
    local: bool,
    backend: Arc<dyn Backend>,
    /// Indices into the call's input.
    files: Vec<usize>,
}

/// Runs of consecutive locations handled in one section each, as (first index, length): local
/// locations in runs of at most `max_per` (fewer when there are few, so that `concurrency`
/// sections still run at once), every other location alone.
fn section_groups(locs: &[Location], concurrency: usize, max_per: usize) -> Vec<(usize, usize)> {
    let locals = locs.iter().filter(|l| l.is_local()).count();
    let per_section = locals.div_ceil(concurrency.max(1)).clamp(1, max_per);
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for (i, l) in locs.iter().enumerate() {
        match groups.last_mut() {
            Some((first, n)) if l.is_local() && *n < per_section && locs[*first].is_local() => {
                *n += 1
            }
            _ => groups.push((i, 1)),
        }
    }
    groups
}

/// One result per member of an `n`-member section: the section's own results, or, when the
/// section failed as a whole, its error for the first member and the same failure
/// ([`disk::failed_as_part`], `what`) for every other; a section that gave a wrong number of
/// results fails every member.
fn one_per_member<T>(section: Result<Vec<Result<T>>>, n: usize, what: &str) -> Vec<Result<T>> {
    match section {
        Ok(all) if all.len() == n => all,
        Ok(_) => (0..n)
            .map(|_| Err(Error::Internal(format!("a {what} result is missing"))))
            .collect(),
        Err(e) => {
            let mut all: Vec<Result<T>> = (1..n)
                .map(|_| Err(disk::failed_as_part(what, &e)))
                .collect();
            all.insert(0, Err(e));
            all
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(s: &str) -> Location {
        Location::parse(s).unwrap()
    }

    fn storage(root: &str) -> Storage {
        Storage::open(root, &HashMap::new()).unwrap()
    }

    fn assert_refused(s: &Storage, l: &Location) {
        assert!(
            matches!(s.check_deletable(l), Err(Error::PathRefused { .. })),
            "{l} should be refused"
        );
    }

    /// Decoding (the `then` of a read) runs on the runtime's workers, not on the blocking
    /// threads that read: with sixteen reading sections at once, the decoders are at most the
    /// two workers, so decoded entries come from at most two threads' malloc arenas.
    #[test]
    fn reads_decode_on_the_runtime_workers_only() {
        let tmp = tempfile::tempdir().unwrap();
        let root = Location::from_local_path(tmp.path()).unwrap();
        let locs: Vec<Location> = (0..64)
            .map(|i| {
                std::fs::write(tmp.path().join(format!("f-{i}")), vec![b'x'; i]).unwrap();
                root.join(&format!("f-{i}"))
            })
            .collect();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .max_blocking_threads(max_blocking_sections())
            .build()
            .unwrap();
        let s = storage(root.as_str());
        let decoders = Arc::new(Mutex::new(Vec::new()));
        let record = {
            let decoders = Arc::clone(&decoders);
            move |b: bytes::Bytes| {
                std::thread::sleep(std::time::Duration::from_millis(1));
                decoders.lock().unwrap().push(std::thread::current().id());
                Ok(b.len())
            }
        };
        rt.block_on(async {
            let r = record.clone();
            let got: Vec<(usize, Result<usize>)> =
                s.get_many_then(&locs, 16, move |_, b| r(b)).collect().await;
            assert_eq!(got.len(), locs.len());
            assert!(got.into_iter().all(|(i, n)| n.unwrap() == i));
            let got: Vec<Result<usize>> = futures::stream::iter(&locs)
                .map(|l| s.get_then(l, record.clone()))
                .buffer_unordered(16)
                .collect()
                .await;
            assert!(got.into_iter().all(|n| n.is_ok()));
        });
        let mut threads = decoders.lock().unwrap().clone();
        assert_eq!(threads.len(), 2 * locs.len());
        threads.sort_by_key(|t| format!("{t:?}"));
        threads.dedup();
        assert!(threads.len() <= 2, "decoded on {} threads", threads.len());
    }

    #[test]
    fn guard_allows_only_strictly_under_root() {
        let s = storage("/w/db.db/t");
        let root = s.root().clone();
        assert_eq!(root.as_str(), "file:///w/db.db/t");
        s.check_deletable(&root.join("snapshot/snapshot-1"))
            .unwrap();
        s.check_deletable(&root.join("dt=a%2Fb/bucket-0/data-1.orc"))
            .unwrap();
        s.check_deletable(&loc("FILE:/w/db.db/t/x")).unwrap();
        // The root itself, its parent, siblings sharing a prefix, other schemes.
        for bad in [
            "/w/db.db/t",
            "/w/db.db",
            "/",
            "/w/db.db/t2/x",
            "/w/db.db/tx",
            "/w/db.db/other/x",
            "memory:///w/db.db/t/x",
            "s3://w/db.db/t/x",
        ] {
            assert_refused(&s, &loc(bad));
        }
        // Traversal through join leaves the root and is refused.
        for rel in [
            "../t2/x",
            "a/../../t2/x",
            "../../../etc/passwd",
            "..",
            "a/..",
        ] {
            assert_refused(&s, &root.join(rel));
        }
        // A relative or '..'-laden path never even parses.
        assert!(Location::parse("/w/db.db/t/../t2/x").is_err());
        assert!(root.try_join("../x").is_err());
    }

    #[test]
    fn guard_with_external_roots() {
        let mut s = storage("memory://bucket/w/t");
        let ext = loc("memory://other/ext");
        let file = ext.join("f1=10/bucket-0/data-1.parquet");
        assert_refused(&s, &file);
        s.add_delete_root(ext.clone());
        s.add_delete_root(ext.clone());
        assert_eq!(s.delete_roots(), std::slice::from_ref(&ext));
        s.check_deletable(&file).unwrap();
        assert_refused(&s, &ext);
        assert_refused(&s, &loc("memory://other/ext2/x"));
        assert_refused(&s, &loc("memory://other/x"));
        assert_refused(&s, &loc("gs://other/ext/x"));
        // The local filesystem root is never accepted as a delete root.
        s.add_delete_root(loc("/"));
        assert_refused(&s, &loc("/etc/passwd"));
        assert_eq!(s.delete_roots().len(), 1);
    }

    #[test]
    fn derived_storage_adds_roots_and_leaves_the_original_alone() {
        let s = storage("memory://bucket/w/t");
        let ext = loc("memory://other/ext");
        let file = ext.join("p=1/bucket-0/data-1.parquet");
        let d = s.with_delete_roots(&[ext.clone(), loc("/")]);
        d.check_deletable(&file).unwrap();
        d.check_deletable(&loc("memory://bucket/w/t/x")).unwrap();
        assert_refused(&d, &ext);
        assert_refused(&d, &loc("/etc/passwd"));
        assert_eq!(d.root(), s.root());
        assert_refused(&s, &file);
        assert!(s.delete_roots().is_empty());
    }

    #[test]
    fn open_validates() {
        for bad in [
            "",
            "relative/t",
            "/",
            "s3://bucket",
            "/t/../x",
            "memory:///",
        ] {
            assert!(
                matches!(
                    Storage::open(bad, &HashMap::new()),
                    Err(Error::InvalidArgument(_))
                ),
                "{bad:?}"
            );
        }
        assert!(matches!(
            Storage::open("hdfs://nn:8020/w/t", &HashMap::new()),
            Err(Error::Unsupported(_))
        ));
        let mut bad_opts = HashMap::new();
        bad_opts.insert(config::RETRY_MAX_RETRIES.to_string(), "lots".to_string());
        assert!(Storage::open("/w/t", &bad_opts).is_err());
        let s = storage("FILE:/w/t/");
        assert_eq!(s.root().as_str(), "file:///w/t");
        assert!(format!("{s:?}").contains("file:///w/t"));
    }

    #[tokio::test]
    async fn batched_listings_and_reads_match_the_single_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let root = Location::from_local_path(tmp.path()).unwrap();
        let s = Storage::open(root.as_str(), &HashMap::new()).unwrap();
        let mut dirs = Vec::new();
        for d in 0..7 {
            let dir = root.join(&format!("p={d}"));
            for f in 0..d {
                s.put(
                    &dir.join(&format!("f-{f}")),
                    bytes::Bytes::from(vec![b'x'; f]),
                )
                .await
                .unwrap();
            }
            s.put(&dir.join("sub/inner"), bytes::Bytes::new())
                .await
                .unwrap();
            dirs.push(dir);
        }
        dirs.push(root.join("missing"));
        for conc in [1, 3, 16] {
            let mut seen = vec![false; dirs.len()];
            let mut listed = s.list_dirs_by_name(&dirs, conc);
            while let Some((i, r)) = listed.next().await {
                assert!(!std::mem::replace(&mut seen[i], true), "{i} twice");
                let by_name = r.unwrap();
                let plain = s.list_dir(&dirs[i]).await.unwrap();
                let mut names: Vec<(String, u64, i64)> = by_name
                    .files()
                    .map(|f| {
                        let st = f.status.unwrap();
                        (
                            dirs[i].join(f.name).as_str().to_string(),
                            st.size,
                            st.last_modified_ms,
                        )
                    })
                    .collect();
                names.sort();
                let want: Vec<(String, u64, i64)> = plain
                    .files
                    .iter()
                    .map(|f| (f.location.as_str().to_string(), f.size, f.last_modified_ms))
                    .collect();
                assert_eq!(names, want);
                assert_eq!(by_name.dirs, plain.dirs);
                assert!(by_name.elsewhere.is_empty());
            }
            assert!(seen.iter().all(|x| *x));
        }
        // Reads: a missing file and a failing decode fail only themselves.
        let mut locs: Vec<Location> = (1..7).map(|d| dirs[d].join("f-0")).collect();
        locs.push(root.join("p=1/absent"));
        for conc in [1, 2, 16] {
            let mut got: Vec<Option<Result<usize>>> = (0..locs.len()).map(|_| None).collect();
            let mut read = s.get_many_then(&locs, conc, |i, b| {
                if i == 2 {
                    Err(Error::Internal("refused".into()))
                } else {
                    Ok(b.len() + i)
                }
            });
            while let Some((i, r)) = read.next().await {
                assert!(got[i].replace(r).is_none());
            }
            for (i, r) in got.into_iter().enumerate() {
                match (i, r.unwrap()) {
                    (2, Err(Error::Internal(_))) => {}
                    (6, Err(e)) => assert!(e.is_not_found(), "{e}"),
                    (i, Ok(n)) => assert_eq!(n, i),
                    (i, other) => panic!("{i}: {other:?}"),
                }
            }
        }
        // A stopped storage fails every read of a batch as cancelled.
        let stopped = Storage::open(root.as_str(), &HashMap::new())
            .unwrap()
            .stop_reads_when(Arc::new(|| true));
        let all: Vec<(usize, Result<NameListing>)> =
            stopped.list_dirs_by_name(&dirs, 2).collect().await;
        assert_eq!(all.len(), dirs.len());
        assert!(all.iter().all(|(_, r)| matches!(r, Err(Error::Cancelled))));
        let all: Vec<(usize, Result<bytes::Bytes>)> = stopped
            .get_many_then(&locs, 2, |_, b| Ok(b))
            .collect()
            .await;
        assert_eq!(all.len(), locs.len());
        assert!(all.iter().all(|(_, r)| matches!(r, Err(Error::Cancelled))));
    }

    /// Wants the status of every file whose name does not start with `r`, and records which
    /// directory (by index) it was asked about.
    struct SkipR(Mutex<Vec<(usize, String)>>);

    impl StatFilter for SkipR {
        fn select(&self, index: usize, dir: &Location, names: &[&str], want: &mut [bool]) {
            self.0
                .lock()
                .unwrap()
                .push((index, dir.as_str().to_string()));
            for (n, w) in names.iter().zip(want.iter_mut()) {
                *w = !n.starts_with('r');
            }
        }
    }

    #[tokio::test]
    async fn a_filtered_listing_stats_only_the_regular_files_the_filter_wants() {
        let tmp = tempfile::tempdir().unwrap();
        let root = Location::from_local_path(tmp.path()).unwrap();
        let s = Storage::open(root.as_str(), &HashMap::new()).unwrap();
        let mut dirs = Vec::new();
        for d in 0..5 {
            let dir = root.join(&format!("p={d}"));
            for f in 0..d {
                for prefix in ["f", "r"] {
                    s.put(
                        &dir.join(&format!("{prefix}-{f}")),
                        bytes::Bytes::from(vec![b'x'; f + 1]),
                    )
                    .await
                    .unwrap();
                }
            }
            s.put(&dir.join("sub/inner"), bytes::Bytes::new())
                .await
                .unwrap();
            dirs.push(dir);
        }
        // Times before the epoch and past the millisecond read as without a filter.
        let p4 = tmp.path().join("p=4");
        for (f, back) in [("f-1", 1_500_700_000u64), ("f-2", 0)] {
            let t = std::time::UNIX_EPOCH
                + std::time::Duration::from_nanos(1_700_000_000_123_456_789)
                - std::time::Duration::from_nanos(1_700_000_000_000_000_000 + back);
            std::fs::File::options()
                .write(true)
                .open(p4.join(f))
                .unwrap()
                .set_modified(t)
                .unwrap();
        }
        // Symlinks are classified as without a filter: `stat`ed whatever their name.
        std::os::unix::fs::symlink(p4.join("f-0"), p4.join("r-link")).unwrap();
        std::os::unix::fs::symlink(p4.join("gone"), p4.join("r-broken")).unwrap();
        std::os::unix::fs::symlink(p4.join("sub"), p4.join("r-dir")).unwrap();
        dirs.push(root.join("missing"));
        for conc in [1, 2, 16] {
            let filter = Arc::new(SkipR(Mutex::new(Vec::new())));
            let mut seen = vec![false; dirs.len()];
            let mut listed =
                s.list_dirs_by_name_filtered(&dirs, conc, Some(filter.clone() as Arc<_>));
            while let Some((i, r)) = listed.next().await {
                assert!(!std::mem::replace(&mut seen[i], true), "{i} twice");
                let by_name = r.unwrap();
                let plain = s.list_dir(&dirs[i]).await.unwrap();
                let mut got: Vec<(String, Option<SizeAndTime>)> = by_name
                    .files()
                    .map(|f| (f.name.to_string(), f.status))
                    .collect();
                got.sort_by(|a, b| a.0.cmp(&b.0));
                let want: Vec<(String, Option<SizeAndTime>)> = plain
                    .files
                    .iter()
                    .map(|f| {
                        let name = f.location.name().to_string();
                        let regular = std::fs::symlink_metadata(f.location.local_path().unwrap())
                            .unwrap()
                            .is_file();
                        let status = (!(regular && name.starts_with('r'))).then_some(SizeAndTime {
                            size: f.size,
                            last_modified_ms: f.last_modified_ms,
                        });
                        (name, status)
                    })
                    .collect();
                assert_eq!(got, want, "{}", dirs[i]);
                assert_eq!(by_name.dirs, plain.dirs);
            }
            assert!(seen.iter().all(|x| *x));
            // Asked once per existing directory, with its index in `dirs`.
            let mut asked = filter.0.lock().unwrap().clone();
            asked.sort();
            let expected: Vec<(usize, String)> =
                (0..5).map(|i| (i, dirs[i].as_str().to_string())).collect();
            assert_eq!(asked, expected);
        }
        // Unfiltered listings give every status.
        let all: Vec<(usize, Result<NameListing>)> =
            s.list_dirs_by_name_filtered(&dirs, 2, None).collect().await;
        assert!(all
            .iter()
            .all(|(_, r)| r.as_ref().unwrap().files().all(|f| f.status.is_some())));
        // A named pipe fails its directory's listing, whatever its name and the filter.
        let fifo = tmp.path().join("p=3/r-fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let filter: Arc<dyn StatFilter> = Arc::new(SkipR(Mutex::new(Vec::new())));
        for f in [Some(filter), None] {
            let all: Vec<(usize, Result<NameListing>)> =
                s.list_dirs_by_name_filtered(&dirs, 2, f).collect().await;
            for (i, r) in all {
                match r {
                    Err(e) if i == 3 => assert!(e.to_string().contains("named pipe"), "{e}"),
                    r => assert!(r.is_ok() && i != 3, "{i}: {r:?}"),
                }
            }
        }
    }

    #[test]
    fn storage_is_send_sync() {
        fn check<T: Send + Sync + 'static>() {}
        check::<Storage>();
        check::<Location>();
        check::<FileStatus>();
        check::<DirListing>();
    }
}
