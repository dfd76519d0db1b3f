//! Phase 1 of orphan cleanup (spec §5.6 steps 2–4): list every file that could be an orphan,
//! before any reference is read (pitfall P1).
//!
//! Candidate directories are `manifest/`, `index/` and `statistics/` under the table root; every
//! bucket directory under each data root (the table's data root and its external data roots),
//! reached through exactly `#partitionKeys` levels of `k=v` directories (a last-level partition
//! directory without bucket directories is a candidate directory itself); and `snapshot/` and
//! `changelog/` of every branch, where only names that neither start with the directory's prefix
//! (`snapshot-`, `changelog-`: Java's orphan cleaner keeps every such name, `snapshot-1.bak`
//! too) nor are `EARLIEST` or `LATEST` count (temp files of interrupted atomic writes). Nothing else is ever listed, so
//! nothing else can be deleted. Candidates are regular files modified before the cut-off, never
//! `*.managed.blob` packs.
//!
//! A directory that cannot be listed counts as empty (deleting less is always safe); the error
//! is reported.
//!
//! Candidates go into one interned [`CandidateTable`] as each listing arrives; a listing's
//! per-file locations are dropped right away.

use std::collections::HashSet;

use futures::stream::{self, StreamExt};

use super::interned::CandidateTable;
use crate::clean::control::CancelToken;
use crate::clean::report::FileClass;
use crate::storage::{DirListing, Location, Storage};
use crate::table::VersionedDir;

/// Where candidates are looked for.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// The table root (`manifest/`, `index/`, `statistics/` live here).
    pub root: Location,
    /// Metadata roots of every branch (the table root for main).
    pub branch_roots: Vec<Location>,
    /// Data roots: the table's, then its external ones.
    pub data_roots: Vec<Location>,
    /// Number of partition keys.
    pub partition_levels: usize,
}

/// Result of the listing phase.
#[derive(Debug, Default)]
pub(crate) struct Listed {
    /// Candidates, each location once.
    pub table: CandidateTable,
    /// Files seen in the candidate directories that would be candidates if old enough.
    pub files_listed: u64,
    /// Data directories that were empty when listed, with their data root.
    pub empty_dirs: Vec<(Location, Location)>,
    /// Directories that could not be listed (`"<dir>: <error>"`), sorted.
    pub errors: Vec<String>,
}

/// What a candidate directory holds, which decides which of its files count.
#[derive(Debug, Clone)]
enum DirKind {
    Manifest,
    Index,
    Statistics,
    /// `snapshot/` or `changelog/` of a branch: only temp files count.
    Versioned(VersionedDir),
    /// A bucket directory, or a partition directory without buckets, under a data root.
    Data(Location),
}

/// Lists every candidate older than `cutoff_ms` with at most `concurrency` listings in flight.
/// Each listing is added to the candidate table as soon as it arrives and then dropped.
pub(crate) async fn list_candidates(
    storage: &Storage,
    layout: &Layout,
    cutoff_ms: i64,
    concurrency: usize,
    cancel: &CancelToken,
) -> Listed {
    let mut out = Listed::default();
    let mut dirs: Vec<(Location, DirKind)> = vec![
        (layout.root.join("manifest"), DirKind::Manifest),
        (layout.root.join("index"), DirKind::Index),
        (layout.root.join("statistics"), DirKind::Statistics),
    ];
    for b in &layout.branch_roots {
        for v in [VersionedDir::snapshots(b), VersionedDir::changelogs(b)] {
            dirs.push((v.dir().clone(), DirKind::Versioned(v)));
        }
    }
    let (ready, buckets) = find_data_dirs(storage, layout, concurrency, &mut out).await;
    for ((dir, kind), listing) in ready {
        absorb(&mut out, &dir, &kind, listing, cutoff_ms);
    }
    // The metadata directories (`manifest/` is the largest single listing) go first, in one
    // stream with the bucket directories, so that they are listed alongside them.
    dirs.extend(buckets);
    let mut stream = stream::iter(dirs)
        .map(|(dir, kind)| async move {
            let r = storage.list_dir(&dir).await;
            (dir, kind, r)
        })
        .buffer_unordered(concurrency.max(1));
    while let Some((dir, kind, r)) = stream.next().await {
        if cancel.is_cancelled() {
            // The listing is incomplete: the caller checks the token next and deletes nothing.
            tracing::debug!("candidate listing stopped: cancelled");
            break;
        }
        match r {
            Ok(listing) => {
                if let DirKind::Data(root) = &kind {
                    if listing.files.is_empty() && listing.dirs.is_empty() {
                        out.empty_dirs.push((dir.clone(), root.clone()));
                    }
                }
                absorb(&mut out, &dir, &kind, listing, cutoff_ms);
            }
            Err(e) => {
                tracing::warn!(dir = %dir, error = %e, "cannot list a candidate directory; nothing in it is deleted");
                out.errors.push(format!("{dir}: {e}"));
            }
        }
    }
    out.errors.sort();
    out.empty_dirs.sort();
    tracing::debug!(
        files = out.files_listed,
        candidates = out.table.len(),
        errors = out.errors.len(),
        "listed orphan candidates"
    );
    out
}

/// Adds the candidates of one listing of `dir` to the table. A directory already added (listed
/// twice through two roots) is skipped, so each location is a candidate once.
fn absorb(out: &mut Listed, dir: &Location, kind: &DirKind, listing: DirListing, cutoff_ms: i64) {
    if out.table.dir_id(dir).is_some() {
        tracing::debug!(dir = %dir, "directory reached twice; listed once");
        return;
    }
    let data_root = match kind {
        DirKind::Data(root) => Some(root),
        _ => None,
    };
    let Some(dir_id) = out.table.add_dir(dir, data_root) else {
        out.errors
            .push(format!("{dir}: too many candidate directories; not listed"));
        return;
    };
    let prefix = dir.as_str();
    for f in listing.files {
        let name = f.location.name();
        let Some(class) = classify(kind, name) else {
            continue;
        };
        out.files_listed += 1;
        if f.last_modified_ms >= cutoff_ms || name.ends_with(".managed.blob") {
            continue;
        }
        // The listing's location is `dir/name` unless a store spells keys differently; then
        // the file's own parent is its directory (location equality stays exact).
        let full = f.location.as_str();
        let at = if full.len() == prefix.len() + 1 + name.len()
            && full.starts_with(prefix)
            && full.as_bytes().get(prefix.len()) == Some(&b'/')
        {
            Some(dir_id)
        } else {
            f.location.parent().and_then(|p| {
                let known = out.table.dir_id(&p).is_some();
                let id = out.table.add_dir(&p, data_root)?;
                // Keep each location once even on this unusual path.
                let dup = known
                    && out.table.find(name).is_some_and(|first| {
                        out.table
                            .same_name(first)
                            .any(|c| out.table.dir_of(c) == id)
                    });
                (!dup).then_some(id)
            })
        };
        let Some(at) = at else { continue };
        if !out.table.push(at, name, f.size, class) {
            out.errors.push(format!(
                "{}: too many candidates; the rest of the directory is not a candidate",
                f.location
            ));
            return;
        }
    }
}

/// The class of a file named `name` in a directory of `kind`; `None` if it is never a candidate.
fn classify(kind: &DirKind, name: &str) -> Option<FileClass> {
    Some(match kind {
        DirKind::Manifest => {
            if name.starts_with("manifest-list-") {
                FileClass::ManifestList
            } else if name.starts_with("index-manifest-") {
                FileClass::IndexManifest
            } else if name.starts_with("manifest-") {
                FileClass::Manifest
            } else {
                FileClass::Other
            }
        }
        DirKind::Index => FileClass::Index,
        DirKind::Statistics => FileClass::Statistics,
        DirKind::Versioned(v) => {
            // As Java's orphan cleaner: no name starting with the directory's prefix (a
            // `snapshot-1.bak` too), nor the hints, is ever a candidate.
            if name == "EARLIEST" || name == "LATEST" || name.starts_with(v.prefix()) {
                return None;
            }
            FileClass::Other
        }
        DirKind::Data(_) => {
            if name.starts_with("changelog-") {
                FileClass::ChangelogData
            } else if name.starts_with("index-") {
                FileClass::Index
            } else if name.starts_with('.') || name.starts_with('_') {
                FileClass::Other
            } else {
                FileClass::Data
            }
        }
    })
}

/// Listed data directories (with their listing) and data directories still to list.
type DataDirs = (
    Vec<((Location, DirKind), DirListing)>,
    Vec<(Location, DirKind)>,
);

/// Finds the data directories: `partition_levels` levels of `k=v` directories under each data
/// root, then their `bucket-*` directories (or the partition directory itself when it has
/// none, which is then already listed). Also records data directories that are empty.
async fn find_data_dirs(
    storage: &Storage,
    layout: &Layout,
    concurrency: usize,
    out: &mut Listed,
) -> DataDirs {
    let mut roots = layout.data_roots.clone();
    roots.sort();
    roots.dedup();
    let mut frontier: Vec<(Location, DirKind)> = roots
        .into_iter()
        .map(|r| (r.clone(), DirKind::Data(r)))
        .collect();
    for _ in 0..layout.partition_levels {
        let listed = list_tolerant(storage, frontier, concurrency, &mut out.errors).await;
        let mut next = Vec::new();
        for ((dir, kind), listing) in listed {
            let DirKind::Data(root) = kind else { continue };
            if dir != root && listing.files.is_empty() && listing.dirs.is_empty() {
                out.empty_dirs.push((dir.clone(), root.clone()));
            }
            next.extend(
                listing
                    .dirs
                    .into_iter()
                    .filter(|d| d.name().contains('='))
                    .map(|d| (d, DirKind::Data(root.clone()))),
            );
        }
        frontier = next;
    }

    // `frontier` now holds the last-level partition directories (or the data roots).
    let listed = list_tolerant(storage, frontier, concurrency, &mut out.errors).await;
    let mut ready = Vec::new();
    let mut buckets = Vec::new();
    for ((dir, kind), listing) in listed {
        let DirKind::Data(root) = &kind else { continue };
        let bucket_dirs: Vec<Location> = listing
            .dirs
            .iter()
            .filter(|d| d.name().starts_with("bucket-"))
            .cloned()
            .collect();
        if bucket_dirs.is_empty() {
            // A partition directory without buckets holds candidates itself; a data root never.
            if dir != *root {
                if listing.files.is_empty() && listing.dirs.is_empty() {
                    out.empty_dirs.push((dir.clone(), root.clone()));
                }
                ready.push(((dir, kind), listing));
            }
        } else {
            buckets.extend(
                bucket_dirs
                    .into_iter()
                    .map(|b| (b, DirKind::Data(root.clone()))),
            );
        }
    }
    // A bucket directory reached twice is listed once.
    let mut seen: HashSet<Location> = HashSet::with_capacity(buckets.len());
    buckets.retain(|(d, _)| seen.insert(d.clone()));
    (ready, buckets)
}

/// Lists `dirs` concurrently; a directory whose listing fails counts as empty and its error is
/// appended to `errors`. Results are sorted by directory.
async fn list_tolerant(
    storage: &Storage,
    dirs: Vec<(Location, DirKind)>,
    concurrency: usize,
    errors: &mut Vec<String>,
) -> Vec<((Location, DirKind), DirListing)> {
    let mut results: Vec<_> = stream::iter(dirs)
        .map(|(dir, kind)| async move {
            let r = storage.list_dir(&dir).await;
            ((dir, kind), r)
        })
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    results.sort_by(|a, b| (a.0).0.cmp(&(b.0).0));
    let mut out = Vec::with_capacity(results.len());
    for ((dir, kind), r) in results {
        match r {
            Ok(listing) => out.push(((dir, kind), listing)),
            Err(e) => {
                tracing::warn!(dir = %dir, error = %e, "cannot list a candidate directory; nothing in it is deleted");
                errors.push(format!("{dir}: {e}"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(s: &str) -> Location {
        Location::parse(s).unwrap()
    }

    #[test]
    fn classes_and_exclusions() {
        let snap = DirKind::Versioned(VersionedDir::snapshots(&loc("/t")));
        assert_eq!(classify(&snap, "snapshot-3"), None);
        // Java's rule: any `snapshot-*` name stays (backups, odd suffixes).
        assert_eq!(classify(&snap, "snapshot-1.bak"), None);
        assert_eq!(classify(&snap, "snapshot-"), None);
        assert_eq!(classify(&snap, "snapshot-x"), None);
        assert_eq!(classify(&snap, "EARLIEST"), None);
        assert_eq!(classify(&snap, "LATEST"), None);
        assert_eq!(
            classify(&snap, ".snapshot-3.0b1c.tmp"),
            Some(FileClass::Other)
        );
        assert_eq!(classify(&snap, ".LATEST.0b1c.tmp"), Some(FileClass::Other));
        let cl = DirKind::Versioned(VersionedDir::changelogs(&loc("/t")));
        assert_eq!(classify(&cl, "changelog-9"), None);
        assert_eq!(classify(&cl, "changelog-9.bak"), None);
        assert_eq!(classify(&cl, "snapshot-9"), Some(FileClass::Other));
        let m = DirKind::Manifest;
        assert_eq!(
            classify(&m, "manifest-list-a-1"),
            Some(FileClass::ManifestList)
        );
        assert_eq!(
            classify(&m, "index-manifest-a-1"),
            Some(FileClass::IndexManifest)
        );
        assert_eq!(classify(&m, "manifest-a-1"), Some(FileClass::Manifest));
        assert_eq!(classify(&m, "x.crc"), Some(FileClass::Other));
        let d = DirKind::Data(loc("/t"));
        assert_eq!(classify(&d, "data-a-0.orc"), Some(FileClass::Data));
        assert_eq!(
            classify(&d, "changelog-a-0.orc"),
            Some(FileClass::ChangelogData)
        );
        assert_eq!(classify(&d, "index-a-0"), Some(FileClass::Index));
        assert_eq!(classify(&d, "_SUCCESS"), Some(FileClass::Other));
    }
}
