//! Object-store backend (memory, S3, GCS, Azure) over the `object_store` crate.
//!
//! Keys are built with [`object_store::path::Path::parse`], which keeps the raw key (unlike
//! `Path::from`, which percent-encodes `%` and friends), so names round-trip byte-exact.

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore, PutMode, PutOptions, PutPayload};

use super::backend::{Backend, BlockingRead, DeleteScope, SectionFilter};
use super::{DirListing, FileStatus, Location, NameListing, Removal};
use crate::error::{Error, Result};

/// Objects per batched delete request (the S3 DeleteObjects limit).
pub(crate) const DELETE_CHUNK: usize = 1000;

/// The object key of `loc`, exactly as written in the location.
pub(crate) fn key_of(loc: &Location) -> Result<Path> {
    Path::parse(loc.key())
        .map_err(|e| Error::InvalidArgument(format!("{loc} is not a valid object key: {e}")))
}

/// The listing prefix of a directory location (`None` for the bucket root).
fn prefix_of(dir: &Location) -> Result<Option<Path>> {
    if dir.key().is_empty() {
        Ok(None)
    } else {
        key_of(dir).map(Some)
    }
}

/// Maps an object_store error on `loc` to the crate's error (`NotFound` kept distinct).
pub(crate) fn os_error(loc: &Location, e: object_store::Error) -> Error {
    match e {
        object_store::Error::NotFound { .. } => Error::NotFound {
            path: loc.to_string(),
        },
        object_store::Error::NotImplemented | object_store::Error::NotSupported { .. } => {
            Error::Unsupported(format!("{loc}: {e}"))
        }
        e => Error::storage(loc.as_str(), e),
    }
}

fn status(root: &Location, meta: ObjectMeta) -> FileStatus {
    FileStatus {
        location: root.join(meta.location.as_ref()),
        size: meta.size,
        last_modified_ms: meta.last_modified.timestamp_millis(),
    }
}

/// The error of a failed listing of `dir`: `NotFound` too is a storage error here, never
/// "missing, so empty".
fn list_error(dir: &Location, e: object_store::Error) -> Error {
    match e {
        object_store::Error::NotFound { .. } => Error::storage(dir.as_str(), e),
        e => os_error(dir, e),
    }
}

/// Immediate children of `dir` (a delimiter listing). A prefix with no object under it lists
/// as empty; every error of the store, `NotFound` included, is an error, never an empty
/// listing (an empty listing of `snapshot/` would be taken for a table without snapshots).
pub(crate) async fn list_dir(store: &dyn ObjectStore, dir: &Location) -> Result<DirListing> {
    let prefix = prefix_of(dir)?;
    let root = dir.store_root();
    let res = store
        .list_with_delimiter(prefix.as_ref())
        .await
        .map_err(|e| list_error(dir, e))?;
    let mut out = DirListing::default();
    for meta in res.objects {
        // A "directory marker" object (`dir/`) parses to the prefix itself: not a child.
        if Some(&meta.location) == prefix.as_ref() {
            continue;
        }
        out.files.push(status(&root, meta));
    }
    out.dirs = res
        .common_prefixes
        .iter()
        .map(|p| root.join(p.as_ref()))
        .collect();
    out.files.sort_by(|a, b| a.location.cmp(&b.location));
    out.dirs.sort();
    Ok(out)
}

/// Every object below `dir`; every error of the store is an error (as [`list_dir`]).
pub(crate) async fn list_tree(store: &dyn ObjectStore, dir: &Location) -> Result<Vec<FileStatus>> {
    let prefix = prefix_of(dir)?;
    let root = dir.store_root();
    let metas: Vec<ObjectMeta> = store
        .list(prefix.as_ref())
        .try_collect()
        .await
        .map_err(|e| list_error(dir, e))?;
    let mut files: Vec<FileStatus> = metas
        .into_iter()
        .filter(|m| Some(&m.location) != prefix.as_ref())
        .map(|m| status(&root, m))
        .collect();
    files.sort_by(|a, b| a.location.cmp(&b.location));
    Ok(files)
}

/// Metadata of one object; `None` if absent.
pub(crate) async fn head(store: &dyn ObjectStore, loc: &Location) -> Result<Option<FileStatus>> {
    let key = key_of(loc)?;
    match store.head(&key).await {
        Ok(meta) => Ok(Some(FileStatus {
            location: loc.clone(),
            size: meta.size,
            last_modified_ms: meta.last_modified.timestamp_millis(),
        })),
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(os_error(loc, e)),
    }
}

/// Whole content of one object.
pub(crate) async fn get(store: &dyn ObjectStore, loc: &Location) -> Result<bytes::Bytes> {
    let key = key_of(loc)?;
    let res = store.get(&key).await.map_err(|e| os_error(loc, e))?;
    res.bytes().await.map_err(|e| os_error(loc, e))
}

/// Overwriting put (atomic on every object store).
pub(crate) async fn put(store: &dyn ObjectStore, loc: &Location, data: bytes::Bytes) -> Result<()> {
    let key = key_of(loc)?;
    let opts = PutOptions {
        mode: PutMode::Overwrite,
        ..Default::default()
    };
    store
        .put_opts(&key, PutPayload::from(data), opts)
        .await
        .map(|_| ())
        .map_err(|e| os_error(loc, e))
}

/// Conditional create (`If-None-Match: *` on S3); `Ok(false)` if the object already exists.
///
/// object_store retries a request whose answer was lost (connection closed after sending, or
/// a 5xx from a server that had applied it): the retry of a conditional create that did land
/// then gets 412, which alone would read as "someone else created it" and make a committer
/// discard files its own published snapshot references. So on "already exists" the object is
/// read back: byte-identical content means this call's earlier try created it (`Ok(true)`).
pub(crate) async fn put_if_absent(
    store: &dyn ObjectStore,
    loc: &Location,
    data: bytes::Bytes,
) -> Result<bool> {
    let key = key_of(loc)?;
    let opts = PutOptions {
        mode: PutMode::Create,
        ..Default::default()
    };
    match store
        .put_opts(&key, PutPayload::from(data.clone()), opts)
        .await
    {
        Ok(_) => Ok(true),
        Err(object_store::Error::AlreadyExists { .. })
        | Err(object_store::Error::Precondition { .. }) => match get(store, loc).await {
            Ok(existing) if existing == data => {
                tracing::info!(path = %loc, "conditional put: the object holds exactly our bytes (an earlier try landed)");
                Ok(true)
            }
            Ok(_) => Ok(false),
            Err(Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(e),
        },
        Err(e) => Err(os_error(loc, e)),
    }
}

/// Deletes one chunk (at most [`DELETE_CHUNK`] objects) with the store's batched
/// `delete_stream`, returning one result per input, in input order: [`Removal::Absent`] where
/// the store said the object was not there (GCS, Azure), else [`Removal::Unconfirmed`] (S3's
/// `DeleteObjects` and the memory store answer the same whether or not it was).
pub(crate) async fn delete_chunk(
    store: Arc<dyn ObjectStore>,
    locs: Vec<Location>,
) -> Vec<Result<Removal>> {
    let mut keys = Vec::with_capacity(locs.len());
    let mut results: Vec<Option<Result<Removal>>> = Vec::with_capacity(locs.len());
    for loc in &locs {
        match key_of(loc) {
            Ok(k) => {
                keys.push(k);
                results.push(None);
            }
            Err(e) => results.push(Some(Err(e))),
        }
    }
    // Index of each key in `locs`, in the order they are sent.
    let pending: Vec<usize> = (0..locs.len()).filter(|i| results[*i].is_none()).collect();
    let input = futures::stream::iter(keys.clone().into_iter().map(Ok)).boxed();
    let outcomes: Vec<object_store::Result<Path>> = store.delete_stream(input).collect().await;

    // delete_stream promises one outcome per key in input order; check what can be checked.
    let in_order = outcomes.len() == keys.len()
        && outcomes
            .iter()
            .zip(&keys)
            .all(|(outcome, key)| outcome.as_ref().map_or(true, |path| path == key));
    if in_order {
        // One outcome per key, in input order (the documented contract of delete_stream).
        for (i, outcome) in pending.iter().zip(outcomes) {
            results[*i] = Some(match outcome {
                Ok(_) => Ok(Removal::Unconfirmed),
                Err(object_store::Error::NotFound { .. }) => Ok(Removal::Absent),
                Err(e) => Err(os_error(&locs[*i], e)),
            });
        }
    } else {
        // A request-level failure collapsed part of the batch into fewer errors (or the store
        // reordered): keys reported deleted are done, every other key gets the first error.
        let mut first_error: Option<String> = None;
        let mut done = std::collections::HashMap::new();
        for outcome in outcomes {
            match outcome {
                Ok(p) => {
                    done.insert(p, Removal::Unconfirmed);
                }
                Err(object_store::Error::NotFound { path, .. }) => {
                    if let Ok(p) = Path::parse(&path) {
                        done.insert(p, Removal::Absent);
                    }
                }
                Err(e) => {
                    first_error.get_or_insert_with(|| e.to_string());
                }
            }
        }
        let message = first_error.unwrap_or_else(|| "batched delete gave no result".to_string());
        for i in pending {
            let found = key_of(&locs[i]).ok().and_then(|k| done.get(&k).copied());
            results[i] = Some(match found {
                Some(r) => Ok(r),
                None => Err(Error::storage(locs[i].as_str(), &message)),
            });
        }
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(Error::Internal("delete result missing".into()))))
        .collect()
}

/// An `object_store` store (memory, S3, GCS, Azure) as a [`Backend`]: one per
/// `scheme://authority`.
pub(crate) struct ObjectBackend {
    store: Arc<dyn ObjectStore>,
}

impl ObjectBackend {
    /// The backend over `store`.
    pub(crate) fn new(store: Arc<dyn ObjectStore>) -> ObjectBackend {
        ObjectBackend { store }
    }
}

impl Backend for ObjectBackend {
    fn list_dir<'a>(&'a self, dir: &'a Location) -> BoxFuture<'a, Result<DirListing>> {
        Box::pin(list_dir(self.store.as_ref(), dir))
    }

    /// Every file with its size and time (the store returns them with the names): `filter` is
    /// not asked.
    fn list_dirs_by_name<'a>(
        &'a self,
        dirs: &'a [Location],
        _filter: SectionFilter,
    ) -> BoxFuture<'a, Vec<Result<NameListing>>> {
        Box::pin(async move {
            let mut out = Vec::with_capacity(dirs.len());
            for d in dirs {
                out.push(
                    list_dir(self.store.as_ref(), d)
                        .await
                        .and_then(|l| NameListing::from_listing(d, l)),
                );
            }
            out
        })
    }

    /// Object stores have no symlinks or special files: as [`Backend::list_dir`].
    fn list_metadata_dir<'a>(&'a self, dir: &'a Location) -> BoxFuture<'a, Result<DirListing>> {
        Box::pin(list_dir(self.store.as_ref(), dir))
    }

    fn list_tree<'a>(&'a self, dir: &'a Location) -> BoxFuture<'a, Result<Vec<FileStatus>>> {
        Box::pin(list_tree(self.store.as_ref(), dir))
    }

    /// Object stores have no directories, so nothing to check: an unreadable "directory" is
    /// an empty prefix there, which the capabilities guard against themselves (orphan removal
    /// refuses a table without snapshots that holds manifests or data).
    fn check_dirs<'a>(&'a self, _dirs: &'a [Location]) -> BoxFuture<'a, Result<()>> {
        Box::pin(async { Ok(()) })
    }

    fn head<'a>(&'a self, loc: &'a Location) -> BoxFuture<'a, Result<Option<FileStatus>>> {
        Box::pin(head(self.store.as_ref(), loc))
    }

    fn get<'a>(&'a self, loc: &'a Location) -> BoxFuture<'a, Result<Bytes>> {
        Box::pin(get(self.store.as_ref(), loc))
    }

    fn blocking_get(&self) -> Option<BlockingRead> {
        None
    }

    fn put<'a>(&'a self, loc: &'a Location, data: Bytes) -> BoxFuture<'a, Result<()>> {
        Box::pin(put(self.store.as_ref(), loc, data))
    }

    fn put_if_absent<'a>(&'a self, loc: &'a Location, data: Bytes) -> BoxFuture<'a, Result<bool>> {
        Box::pin(put_if_absent(self.store.as_ref(), loc, data))
    }

    /// Batched deletes ([`delete_chunk`], at most [`DELETE_CHUNK`] keys a request), with up
    /// to `concurrency` chunks in flight.
    fn delete_batch<'a>(
        &'a self,
        _scope: &'a DeleteScope,
        locs: Vec<Location>,
        concurrency: usize,
    ) -> BoxFuture<'a, Vec<Result<Removal>>> {
        Box::pin(async move {
            let total = locs.len();
            let mut chunks: Vec<(usize, Vec<Location>)> =
                Vec::with_capacity(total.div_ceil(DELETE_CHUNK));
            let mut rest = locs.into_iter();
            let mut start = 0;
            while start < total {
                chunks.push((start, rest.by_ref().take(DELETE_CHUNK).collect()));
                start += DELETE_CHUNK;
            }
            let done: Vec<(usize, Vec<Result<Removal>>)> = futures::stream::iter(chunks)
                .map(|(start, chunk)| {
                    let store = self.store.clone();
                    async move { (start, delete_chunk(store, chunk).await) }
                })
                .buffer_unordered(concurrency.max(1))
                .collect()
                .await;
            let mut results: Vec<Option<Result<Removal>>> = (0..total).map(|_| None).collect();
            for (start, rs) in done {
                for (slot, r) in results[start..].iter_mut().zip(rs) {
                    *slot = Some(r);
                }
            }
            results
                .into_iter()
                .map(|r| r.unwrap_or_else(|| Err(Error::Internal("delete result missing".into()))))
                .collect()
        })
    }

    /// Object stores have no directories: `Ok(false)`.
    fn delete_dir_if_empty<'a>(
        &'a self,
        _scope: &'a DeleteScope,
        _dir: &'a Location,
    ) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async { Ok(false) })
    }
}
