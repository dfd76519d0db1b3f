//! The local-disk [`Backend`]: the blocking `std::fs` functions of [`super::local`] run on the
//! blocking pool ([`super::blocking`]); deletes go through the physical layer
//! ([`super::beneath`]): each file is unlinked relative to its directory's handle, opened
//! beneath its allowed root with no symlink followed.

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::StreamExt;

use super::backend::{Backend, BlockingRead, DeleteScope, SectionFilter};
use super::beneath::Beneath;
use super::blocking::blocking;
use super::{local, DirListing, FileStatus, Location, NameListing};
use crate::error::{Error, Result};

/// Local deletes of one batch (and directory checks of one plan) run in at most this many
/// blocking sections.
const GROUPS: usize = 4;

/// Directories resolved per blocking section by [`LocalDisk::check_beneath`].
const DIRS_PER_SECTION: usize = 512;

/// One delete group's start in the batch, its length, and its per-file results (an error if
/// its blocking section failed as a whole).
type GroupOutcome = (usize, usize, Result<Vec<Result<()>>>);

/// Files on local disks (`file://`). Stateless.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LocalDisk;

/// Runs `op` on a clone of `loc` in a blocking section.
async fn on_pool<T: Send + 'static>(
    loc: &Location,
    op: impl FnOnce(&Location) -> Result<T> + Send + 'static,
) -> Result<T> {
    let owned = loc.clone();
    blocking(loc, move || op(&owned)).await
}

/// The error each file of a delete group gets when its blocking section failed as a whole.
fn group_failed(e: &Error) -> Error {
    failed_as_part("local delete task", e)
}

/// The error each member of a group gets when the group's blocking section (`what`) failed as
/// a whole: a panic stays a panic, a cancellation a cancellation.
pub(crate) fn failed_as_part(what: &str, e: &Error) -> Error {
    match e {
        Error::Panic(m) => Error::Panic(m.clone()),
        Error::Cancelled => Error::Cancelled,
        other => Error::Internal(format!("{what} failed: {other}")),
    }
}

impl Backend for LocalDisk {
    fn list_dir<'a>(&'a self, dir: &'a Location) -> BoxFuture<'a, Result<DirListing>> {
        Box::pin(on_pool(dir, local::list_dir))
    }

    /// Every directory in one blocking section (a section per directory costs a thread
    /// hand-off each), `filter` asked there; a section that fails as a whole fails every
    /// directory.
    fn list_dirs_by_name<'a>(
        &'a self,
        dirs: &'a [Location],
        filter: SectionFilter,
    ) -> BoxFuture<'a, Vec<Result<NameListing>>> {
        Box::pin(async move {
            let Some(first) = dirs.first() else {
                return Vec::new();
            };
            let owned = dirs.to_vec();
            match blocking(first, move || {
                Ok(owned
                    .iter()
                    .enumerate()
                    .map(|(i, d)| match &filter {
                        Some((f, at)) => local::list_dir_names(d, Some((f.as_ref(), at + i))),
                        None => local::list_dir_names(d, None),
                    })
                    .collect())
            })
            .await
            {
                Ok(all) => all,
                Err(e) => {
                    tracing::warn!(error = %e, "local listing task failed");
                    dirs.iter()
                        .map(|_| Err(failed_as_part("local listing task", &e)))
                        .collect()
                }
            }
        })
    }

    fn list_metadata_dir<'a>(&'a self, dir: &'a Location) -> BoxFuture<'a, Result<DirListing>> {
        Box::pin(on_pool(dir, local::list_metadata_dir))
    }

    fn list_tree<'a>(&'a self, dir: &'a Location) -> BoxFuture<'a, Result<Vec<FileStatus>>> {
        Box::pin(on_pool(dir, local::list_tree))
    }

    fn head<'a>(&'a self, loc: &'a Location) -> BoxFuture<'a, Result<Option<FileStatus>>> {
        Box::pin(on_pool(loc, local::head))
    }

    fn get<'a>(&'a self, loc: &'a Location) -> BoxFuture<'a, Result<Bytes>> {
        Box::pin(on_pool(loc, local::get))
    }

    fn blocking_get(&self) -> Option<BlockingRead> {
        Some(local::get)
    }

    fn put<'a>(&'a self, loc: &'a Location, data: Bytes) -> BoxFuture<'a, Result<()>> {
        Box::pin(on_pool(loc, move |l| local::put(l, &data)))
    }

    fn put_if_absent<'a>(&'a self, loc: &'a Location, data: Bytes) -> BoxFuture<'a, Result<bool>> {
        Box::pin(on_pool(loc, move |l| local::put_if_absent(l, &data)))
    }

    /// The batch in a few groups, each inside one blocking section (a section per file costs
    /// more than the unlink itself): every directory is opened beneath its allowed root once
    /// per group, so nothing swapped in meanwhile can redirect an unlink.
    fn delete_batch<'a>(
        &'a self,
        scope: &'a DeleteScope,
        locs: Vec<Location>,
        concurrency: usize,
    ) -> BoxFuture<'a, Vec<Result<()>>> {
        Box::pin(async move {
            let total = locs.len();
            let groups = concurrency.clamp(1, GROUPS);
            let per_group = total.div_ceil(groups).max(1);
            let mut work: Vec<(usize, Vec<Location>)> = Vec::with_capacity(groups);
            let mut rest = locs.into_iter();
            let mut start = 0;
            while start < total {
                work.push((start, rest.by_ref().take(per_group).collect()));
                start += per_group;
            }
            let Some(what) = scope.table_root() else {
                return (0..total)
                    .map(|_| Err(Error::Internal("delete scope without roots".into())))
                    .collect();
            };
            let done: Vec<GroupOutcome> = futures::stream::iter(work)
                .map(|(start, group)| {
                    let roots = scope.roots.clone();
                    let hook = scope.before_unlink.clone();
                    let len = group.len();
                    async move {
                        let deleted = blocking(what, move || {
                            let mut dirs = Beneath::open(&roots, hook);
                            Ok(group.iter().map(|l| dirs.remove_file(l)).collect())
                        })
                        .await;
                        (start, len, deleted)
                    }
                })
                .buffer_unordered(groups)
                .collect()
                .await;
            let mut results: Vec<Option<Result<()>>> = (0..total).map(|_| None).collect();
            for (start, len, group) in done {
                match group {
                    Ok(rs) => {
                        for (slot, r) in results[start..].iter_mut().zip(rs) {
                            *slot = Some(r);
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "local delete task failed");
                        for slot in results[start..start + len].iter_mut() {
                            *slot = Some(Err(group_failed(&e)));
                        }
                    }
                }
            }
            results
                .into_iter()
                .map(|r| r.unwrap_or_else(|| Err(Error::Internal("delete result missing".into()))))
                .collect()
        })
    }

    fn delete_dir_if_empty<'a>(
        &'a self,
        scope: &'a DeleteScope,
        dir: &'a Location,
    ) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            let roots = scope.roots.clone();
            on_pool(dir, move |d| {
                Beneath::open(&roots, None).remove_dir_if_empty(d)
            })
            .await
        })
    }
}

impl LocalDisk {
    /// The physical check of a plan's local locations (see `Storage::check_beneath`): each
    /// distinct directory resolved beneath its allowed root once, in a few blocking sections.
    pub(crate) async fn check_beneath(
        &self,
        roots: &[Location],
        dirs: Vec<Location>,
    ) -> Result<()> {
        let Some(what) = roots.first() else {
            return Err(Error::Internal("physical check without roots".into()));
        };
        let checked: Vec<Result<()>> = futures::stream::iter(dirs.chunks(DIRS_PER_SECTION))
            .map(|chunk| {
                let roots = roots.to_vec();
                let chunk = chunk.to_vec();
                async move {
                    blocking(what, move || {
                        let mut dirs = Beneath::open(&roots, None);
                        chunk.iter().try_for_each(|l| dirs.check_dir_of(l))
                    })
                    .await
                }
            })
            .buffer_unordered(GROUPS)
            .collect()
            .await;
        checked.into_iter().collect::<Result<Vec<()>>>()?;
        Ok(())
    }
}
