//! List units (spec §5.6 steps 2–4): list every file that could be an orphan.
//!
//! Candidate directories are `manifest/`, `index/` and `statistics/` under the table root; every
//! bucket directory under each data root (the table's data root and its owned external data
//! roots), reached through exactly `#partitionKeys` levels of `k=v` directories (the planner
//! walks all but the last level; a list unit lists last-level partition directories and their
//! `bucket-*` directories, and a last-level partition directory without bucket directories is
//! a candidate directory itself); and `snapshot/` and `changelog/` of every branch, where only
//! names that neither start with the directory's prefix (`snapshot-`, `changelog-`: Java's
//! orphan cleaner keeps every such name, `snapshot-1.bak` too) nor are `EARLIEST` or `LATEST`
//! count (temp files of interrupted atomic writes). Nothing else is ever listed, so nothing
//! else can be deleted. Candidates are regular files modified before the cut-off, never
//! `*.managed.blob` packs.
//!
//! A directory that cannot be listed counts as empty (deleting less is always safe); the error
//! is reported.

use std::collections::{BTreeMap, HashSet};

use futures::stream::{self, StreamExt};

use crate::clean::control::RunControl;
use crate::clean::report::FileClass;
use crate::error::Result;
use crate::hash::{child_key, DirKeys};
use crate::storage::{DirListing, Location, NameListing, NamedStatus, Storage};
use crate::table::VersionedDir;

use super::keyset::KeyIndex;
use super::partial::{Candidate, ListedDir, Partial};
use super::unit::{ListDir, ListKind};

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

/// Executes a list unit: lists `dirs` with at most `concurrency` listings in flight and adds
/// their candidates older than `cutoff_ms` to `out`.
///
/// With `referenced` (the indexed keys of referenced locations, [`child_key`] of directory and
/// name), a candidate whose key is among them is only counted ([`Partial::referenced`]), not
/// held: the decision would keep it anyway, and references only grow during a run. A key
/// collision can only keep a file.
pub(crate) async fn list(
    storage: &Storage,
    dirs: Vec<ListDir>,
    cutoff_ms: i64,
    concurrency: usize,
    ctl: &RunControl,
    referenced: Option<&KeyIndex<'_>>,
    out: &mut Partial,
) -> Result<()> {
    let mut plain: Vec<(Location, DirKind)> = Vec::new();
    let mut partitions: Vec<(Location, Location)> = Vec::new();
    for d in dirs {
        let loc = Location::parse(&d.dir)?;
        match d.kind {
            ListKind::Manifest => plain.push((loc, DirKind::Manifest)),
            ListKind::Index => plain.push((loc, DirKind::Index)),
            ListKind::Statistics => plain.push((loc, DirKind::Statistics)),
            ListKind::Snapshots => {
                let v = VersionedDir::snapshots(&loc);
                plain.push((v.dir().clone(), DirKind::Versioned(v)));
            }
            ListKind::Changelogs => {
                let v = VersionedDir::changelogs(&loc);
                plain.push((v.dir().clone(), DirKind::Versioned(v)));
            }
            ListKind::Partition { root } => partitions.push((loc, Location::parse(&root)?)),
        }
    }
    // Last-level partition directories: their buckets, or themselves.
    let part_dirs: Vec<Location> = partitions.iter().map(|(d, _)| d.clone()).collect();
    let mut listed = storage.list_dirs_by_name(&part_dirs, concurrency);
    let mut seen: HashSet<Location> = HashSet::new();
    while let Some((i, r)) = listed.next().await {
        let (Some(dir), Some((_, root))) = (part_dirs.get(i), partitions.get(i)) else {
            continue;
        };
        let listing = match r {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(dir = %dir, error = %e, "cannot list a candidate directory; nothing in it is deleted");
                out.errors.push(format!("{dir}: {e}"));
                continue;
            }
        };
        let buckets: Vec<Location> = listing
            .dirs
            .iter()
            .filter(|d| d.name().starts_with("bucket-"))
            .cloned()
            .collect();
        if buckets.is_empty() {
            // A partition directory without buckets holds candidates itself; a data root never.
            if dir != root {
                if listing.is_empty() {
                    out.empty_dirs
                        .push((dir.as_str().to_string(), root.as_str().to_string()));
                }
                absorb(
                    out,
                    dir,
                    &DirKind::Data(root.clone()),
                    listing,
                    cutoff_ms,
                    referenced,
                );
            }
        } else {
            // A bucket directory reached twice is listed once.
            plain.extend(
                buckets
                    .into_iter()
                    .filter(|b| seen.insert(b.clone()))
                    .map(|b| (b, DirKind::Data(root.clone()))),
            );
        }
    }
    drop(listed);
    ctl.cancel.check()?;
    let (plain_dirs, kinds): (Vec<Location>, Vec<DirKind>) = plain.into_iter().unzip();
    let mut stream = storage.list_dirs_by_name(&plain_dirs, concurrency);
    while let Some((i, r)) = stream.next().await {
        ctl.cancel.check()?;
        let (Some(dir), Some(kind)) = (plain_dirs.get(i), kinds.get(i)) else {
            continue;
        };
        match r {
            Ok(listing) => {
                if let DirKind::Data(root) = kind {
                    if listing.is_empty() {
                        out.empty_dirs
                            .push((dir.as_str().to_string(), root.as_str().to_string()));
                    }
                }
                absorb(out, dir, kind, listing, cutoff_ms, referenced);
            }
            Err(e) => {
                tracing::warn!(dir = %dir, error = %e, "cannot list a candidate directory; nothing in it is deleted");
                out.errors.push(format!("{dir}: {e}"));
            }
        }
    }
    // A listing cut short by a cancellation is not a result.
    ctl.cancel.check()
}

/// Adds the candidates of one listing of `dir` to `out`, grouped by the directory each file is
/// in (`dir`, unless a store spells keys differently: those files are grouped by their
/// listing location's parent); those whose location key is in `referenced` are only counted.
///
/// The keys of one listing are looked up together, in ascending order: lookups of a set of
/// many megabytes then walk it forwards instead of missing the cache at random.
fn absorb(
    out: &mut Partial,
    dir: &Location,
    kind: &DirKind,
    listing: NameListing,
    cutoff_ms: i64,
    referenced: Option<&KeyIndex<'_>>,
) {
    let data_root = match kind {
        DirKind::Data(root) => Some(root.as_str().to_string()),
        _ => None,
    };
    let prefix = dir.as_str();
    // Files directly in `dir` (the usual case): the old enough ones, by name.
    let mut old: Vec<(NamedStatus<'_>, FileClass)> = Vec::with_capacity(listing.file_count());
    for f in listing.files() {
        let Some(class) = classify(kind, f.name) else {
            continue;
        };
        out.files_listed += 1;
        if f.last_modified_ms >= cutoff_ms || f.name.ends_with(".managed.blob") {
            continue;
        }
        old.push((f, class));
    }
    let mut held = vec![true; old.len()];
    if let Some(keys) = referenced {
        // `dir` hashed once for the keys of its own files.
        let own = DirKeys::new(prefix);
        let mut probes: Vec<(u64, u32)> = old
            .iter()
            .enumerate()
            .map(|(i, (f, _))| (own.child(f.name), i as u32))
            .collect();
        probes.sort_unstable_by_key(|p| p.0);
        for (key, i) in probes {
            if keys.contains(key) {
                if let Some(h) = held.get_mut(i as usize) {
                    *h = false;
                }
                out.referenced += 1;
            }
        }
    }
    let mut own: Vec<Candidate> = old
        .iter()
        .zip(&held)
        .filter(|(_, h)| **h)
        .map(|((f, class), _)| Candidate {
            name: f.name.to_string(),
            size: f.size,
            class: *class,
        })
        .collect();
    drop(old);
    // The others by their parent.
    let mut groups: BTreeMap<String, Vec<Candidate>> = BTreeMap::new();
    for f in listing.elsewhere {
        let name = f.location.name();
        let Some(class) = classify(kind, name) else {
            continue;
        };
        out.files_listed += 1;
        if f.last_modified_ms >= cutoff_ms || name.ends_with(".managed.blob") {
            continue;
        }
        let Some(parent) = f.location.parent() else {
            continue;
        };
        if let Some(keys) = referenced {
            if keys.contains(child_key(parent.as_str(), name)) {
                out.referenced += 1;
                continue;
            }
        }
        groups
            .entry(parent.as_str().to_string())
            .or_default()
            .push(Candidate {
                name: name.to_string(),
                size: f.size,
                class,
            });
    }
    if !own.is_empty() {
        own.shrink_to_fit();
        groups.entry(prefix.to_string()).or_default().extend(own);
    }
    out.dirs
        .extend(groups.into_iter().map(|(dir, files)| ListedDir {
            dir,
            data_root: data_root.clone(),
            files,
        }));
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

/// Lists `dirs` (each with its data root) concurrently; a directory whose listing fails counts
/// as empty and its error is appended to `errors`. Results are sorted by directory.
pub(crate) async fn list_tolerant(
    storage: &Storage,
    dirs: Vec<(Location, Location)>,
    concurrency: usize,
    errors: &mut Vec<String>,
) -> Vec<((Location, Location), DirListing)> {
    let mut results: Vec<_> = stream::iter(dirs)
        .map(|(dir, root)| async move {
            let r = storage.list_dir(&dir).await;
            ((dir, root), r)
        })
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    results.sort_by(|a, b| (a.0).0.cmp(&(b.0).0));
    let mut out = Vec::with_capacity(results.len());
    for ((dir, root), r) in results {
        match r {
            Ok(listing) => out.push(((dir, root), listing)),
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
