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
use super::{local, DirListing, FileStatus, Location, NameListing, Removal};
use crate::error::{Error, Result};

/// Local deletes of one batch (and directory checks of one plan) run in at most this many
/// blocking sections.
const GROUPS: usize = 4;

/// Directories resolved per blocking section by [`LocalDisk::check_beneath`].
const DIRS_PER_SECTION: usize = 512;

/// One delete group's positions in the batch and its per-file results, in the same order (an
/// error if its blocking section failed as a whole).
type GroupOutcome = (Vec<usize>, Result<Vec<Result<Removal>>>);

/// The directory part of a location (everything before its last `/`).
fn parent_of(loc: &Location) -> &str {
    let s = loc.as_str();
    s.rsplit_once('/').map_or(s, |(d, _)| d)
}

/// A batch's files in at most `groups` groups, each file with its position in the batch; a
/// directory's files stay together and in batch order (a batch in path order keeps its
/// order). With at least `groups` directories each group gets whole directories (consecutive
/// runs of about equal files), so that no two groups unlink in one directory: the kernel
/// serializes unlinks in a directory, and sections that share one only wait on its lock.
/// With fewer directories, or one holding more than twice an even share, the files are split
/// evenly instead: what follows the unlink itself (freeing a file's blocks, waiting on the
/// disk) runs outside that lock and gains from parallel sections.
fn by_directory(locs: Vec<Location>, groups: usize) -> Vec<Vec<(usize, Location)>> {
    let total = locs.len();
    // Each file's directory, found once.
    let parents: Vec<&str> = locs.iter().map(parent_of).collect();
    let mut order: Vec<usize> = (0..total).collect();
    if !parents.windows(2).all(|w| w[0] <= w[1]) {
        // Stable: each directory's files keep their order.
        order.sort_by(|a, b| parents[*a].cmp(parents[*b]));
    }
    // Directory runs, as (first position in `order`, length).
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (at, i) in order.iter().enumerate() {
        match runs.last_mut() {
            Some((first, n)) if parents[order[*first]] == parents[*i] => *n += 1,
            _ => runs.push((at, 1)),
        }
    }
    drop(parents);
    let groups = groups.clamp(1, total.max(1));
    let per_group = total.div_ceil(groups).max(1);
    let largest = runs.iter().map(|r| r.1).max().unwrap_or(0);
    if runs.len() < groups || largest > 2 * per_group {
        runs = (0..total)
            .step_by(per_group)
            .map(|first| (first, per_group.min(total - first)))
            .collect();
    }
    let mut slots: Vec<Option<Location>> = locs.into_iter().map(Some).collect();
    let mut out: Vec<Vec<(usize, Location)>> = Vec::with_capacity(groups);
    let mut current: Vec<(usize, Location)> = Vec::new();
    // Files not placed yet.
    let mut left = total;
    for (first, n) in runs {
        // A group ends where adding the next directory would take it further past an even
        // share of what is left than it stays below it.
        let groups_left = groups - out.len();
        if !current.is_empty() && groups_left > 1 {
            let target = (current.len() + left).div_ceil(groups_left);
            if 2 * current.len() + n > 2 * target {
                out.push(std::mem::take(&mut current));
            }
        }
        left -= n;
        for &i in &order[first..first + n] {
            if let Some(l) = slots.get_mut(i).and_then(Option::take) {
                current.push((i, l));
            }
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

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

    /// Every directory in one blocking section.
    fn check_dirs<'a>(&'a self, dirs: &'a [Location]) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let Some(first) = dirs.first() else {
                return Ok(());
            };
            let owned = dirs.to_vec();
            blocking(first, move || local::check_dirs(&owned)).await
        })
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

    /// The batch in a few blocking sections (a section per file costs more than the unlink
    /// itself), each given whole directories: concurrent unlinks in one directory only wait on
    /// its lock (the kernel serializes them), so a directory's files are unlinked by one
    /// section, one after the other, while other sections work in other directories. Every
    /// directory is opened beneath its allowed root once per section, so nothing swapped in
    /// meanwhile can redirect an unlink.
    fn delete_batch<'a>(
        &'a self,
        scope: &'a DeleteScope,
        locs: Vec<Location>,
        concurrency: usize,
    ) -> BoxFuture<'a, Vec<Result<Removal>>> {
        Box::pin(async move {
            let total = locs.len();
            let Some(what) = scope.table_root() else {
                return (0..total)
                    .map(|_| Err(Error::Internal("delete scope without roots".into())))
                    .collect();
            };
            let work = by_directory(locs, concurrency.clamp(1, GROUPS));
            let groups = work.len().max(1);
            let done: Vec<GroupOutcome> = futures::stream::iter(work)
                .map(|group| {
                    let roots = scope.roots.clone();
                    let hook = scope.before_unlink.clone();
                    async move {
                        let (slots, files): (Vec<usize>, Vec<Location>) = group.into_iter().unzip();
                        let deleted = blocking(what, move || {
                            let mut dirs = Beneath::open(&roots, hook);
                            Ok(files.iter().map(|l| dirs.remove_file(l)).collect())
                        })
                        .await;
                        (slots, deleted)
                    }
                })
                .buffer_unordered(groups)
                .collect()
                .await;
            let mut results: Vec<Option<Result<Removal>>> = (0..total).map(|_| None).collect();
            for (slots, group) in done {
                match group {
                    Ok(rs) => {
                        for (slot, r) in slots.into_iter().zip(rs) {
                            if let Some(s) = results.get_mut(slot) {
                                *s = Some(r);
                            }
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "local delete task failed");
                        for slot in slots {
                            if let Some(s) = results.get_mut(slot) {
                                *s = Some(Err(group_failed(&e)));
                            }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn locs(paths: &[&str]) -> Vec<Location> {
        paths
            .iter()
            .map(|p| Location::parse(&format!("file:///t/{p}")).unwrap())
            .collect()
    }

    /// Each file exactly once, with its position; a directory's files in batch order.
    fn check(input: &[Location], groups: &[Vec<(usize, Location)>]) {
        let mut seen: Vec<usize> = groups.iter().flatten().map(|(i, _)| *i).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..input.len()).collect::<Vec<_>>());
        for g in groups {
            for (i, l) in g {
                assert_eq!(&input[*i], l);
            }
            for w in g.windows(2) {
                if parent_of(&w[0].1) == parent_of(&w[1].1) {
                    assert!(w[0].0 < w[1].0);
                }
            }
        }
    }

    #[test]
    fn directories_are_not_shared_between_groups() {
        let mut paths = Vec::new();
        for d in ["a", "b", "c", "d", "e"] {
            for f in 0..7 {
                paths.push(format!("{d}/f{f}"));
            }
        }
        // Out of path order too: the groups are the same directories.
        let mut shuffled = paths.clone();
        shuffled.reverse();
        for p in [paths, shuffled] {
            let input = locs(&p.iter().map(String::as_str).collect::<Vec<_>>());
            let groups = by_directory(input.clone(), 4);
            check(&input, &groups);
            assert_eq!(groups.len(), 4);
            let dirs: Vec<Vec<&str>> = groups
                .iter()
                .map(|g| {
                    let mut d: Vec<&str> = g.iter().map(|(_, l)| parent_of(l)).collect();
                    d.dedup();
                    d
                })
                .collect();
            let mut all: Vec<&str> = dirs.iter().flatten().copied().collect();
            let n = all.len();
            all.sort_unstable();
            all.dedup();
            assert_eq!(all.len(), n, "a directory in two groups: {dirs:?}");
        }
    }

    #[test]
    fn few_or_lopsided_directories_are_split_evenly() {
        let one: Vec<String> = (0..10).map(|f| format!("m/f{f}")).collect();
        let input = locs(&one.iter().map(String::as_str).collect::<Vec<_>>());
        let groups = by_directory(input.clone(), 4);
        check(&input, &groups);
        assert_eq!(groups.len(), 4);
        assert!(groups.iter().all(|g| g.len() <= 3));

        let mut lopsided: Vec<String> = (0..40).map(|f| format!("big/f{f}")).collect();
        lopsided.extend(["x/a", "y/a", "z/a", "w/a"].map(String::from));
        let input = locs(&lopsided.iter().map(String::as_str).collect::<Vec<_>>());
        let groups = by_directory(input.clone(), 4);
        check(&input, &groups);
        assert!(groups.iter().all(|g| g.len() <= 11), "{groups:?}");

        assert!(by_directory(Vec::new(), 4).is_empty());
        let input = locs(&["a/1"]);
        let groups = by_directory(input.clone(), 4);
        check(&input, &groups);
        assert_eq!(groups.len(), 1);
    }
}
