//! The operations one kind of store offers ([`Backend`]), implemented by the local disk
//! ([`super::local::LocalDisk`]) and by `object_store` stores ([`super::object::ObjectBackend`]).
//!
//! A backend does what it is asked on the locations it serves; it knows nothing of the table
//! root, the delete guard or cancellation. [`super::Storage`] wraps every call in those layers:
//! the delete guard ([`super::guard`]) before every write and delete, the read-stopping layer
//! ([`super::stop`]) around every read. Calls are per operation, never per file: listings
//! return whole directories and deletes take whole batches, so one dynamic call (and one boxed
//! future) serves thousands of files.

use bytes::Bytes;
use futures::future::BoxFuture;

use std::sync::Arc;

use super::{DirHook, DirListing, FileStatus, Location, NameListing, Removal, StatFilter};
use crate::error::Result;

/// What a batch of deletes may touch, handed to the backend by the delete guard after it
/// checked every location: the allowed roots (for the local disk's physical check, which
/// opens each directory beneath its root with no symlink followed) and the test hook.
pub(crate) struct DeleteScope {
    /// Every allowed root, table root first.
    pub(crate) roots: Vec<Location>,
    /// Test hook called for each local directory before anything in it is unlinked.
    pub(crate) before_unlink: Option<DirHook>,
}

impl DeleteScope {
    /// The table root (what a failed blocking section is reported against).
    pub(crate) fn table_root(&self) -> Option<&Location> {
        self.roots.first()
    }
}

/// The caller's [`StatFilter`] of a batched listing, with the index (in the caller's list of
/// directories) of the first directory a backend call lists: directory `i` of the call is the
/// caller's `first + i`.
pub(crate) type SectionFilter = Option<(Arc<dyn StatFilter>, usize)>;

/// A blocking read of one whole file, for backends whose reads are system calls.
pub(crate) type BlockingRead = fn(&Location) -> Result<Bytes>;

/// The operations of one store, on locations it serves. `Send + Sync`, shared in an `Arc`.
pub(crate) trait Backend: Send + Sync {
    /// Immediate children of `dir`, as `Storage::list_dir` documents.
    fn list_dir<'a>(&'a self, dir: &'a Location) -> BoxFuture<'a, Result<DirListing>>;

    /// Immediate children of each of `dirs`, files by name, as `Storage::list_dirs_by_name`
    /// documents; one result per input, in input order. The local disk lists them all in one
    /// blocking section, reading the size and time of only the regular files `filter` wants;
    /// object stores one request after the other (the storage hands them one directory per
    /// call, so that their requests run concurrently), with every file's size and time.
    fn list_dirs_by_name<'a>(
        &'a self,
        dirs: &'a [Location],
        filter: SectionFilter,
    ) -> BoxFuture<'a, Vec<Result<NameListing>>>;

    /// Immediate children of a metadata directory, as `Storage::list_metadata_dir` documents.
    fn list_metadata_dir<'a>(&'a self, dir: &'a Location) -> BoxFuture<'a, Result<DirListing>>;

    /// Checks directories of the table's layout, as `Storage::check_layout_dirs` documents.
    fn check_dirs<'a>(&'a self, dirs: &'a [Location]) -> BoxFuture<'a, Result<()>>;

    /// Every file below `dir`, sorted.
    fn list_tree<'a>(&'a self, dir: &'a Location) -> BoxFuture<'a, Result<Vec<FileStatus>>>;

    /// Size and modification time of a file; `None` if absent.
    fn head<'a>(&'a self, loc: &'a Location) -> BoxFuture<'a, Result<Option<FileStatus>>>;

    /// Whole content of a file; `NotFound` if absent.
    fn get<'a>(&'a self, loc: &'a Location) -> BoxFuture<'a, Result<Bytes>>;

    /// The blocking form of [`Backend::get`] when this backend's reads are system calls (the
    /// local disk), so a read and the decoding of its content can share one blocking
    /// section; `None` for backends that read over the network.
    fn blocking_get(&self) -> Option<BlockingRead>;

    /// Writes `data`, replacing any existing file.
    fn put<'a>(&'a self, loc: &'a Location, data: Bytes) -> BoxFuture<'a, Result<()>>;

    /// Creates the file only if nothing exists there yet (`Ok(true)` if this call created it).
    fn put_if_absent<'a>(&'a self, loc: &'a Location, data: Bytes) -> BoxFuture<'a, Result<bool>>;

    /// Deletes a batch of files the delete guard allowed, with at most `concurrency`
    /// operations in flight; one result per input, in input order, saying what the delete
    /// found ([`Removal`]: an absent file is no error).
    fn delete_batch<'a>(
        &'a self,
        scope: &'a DeleteScope,
        locs: Vec<Location>,
        concurrency: usize,
    ) -> BoxFuture<'a, Vec<Result<Removal>>>;

    /// Removes `dir` if it is an empty directory (`Ok(true)`); stores without directories
    /// answer `Ok(false)`.
    fn delete_dir_if_empty<'a>(
        &'a self,
        scope: &'a DeleteScope,
        dir: &'a Location,
    ) -> BoxFuture<'a, Result<bool>>;
}
