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
//! else can be deleted. Candidates are the listed files (never `*.managed.blob` packs) that a
//! version references, whatever their age (their age is never read), and the unreferenced ones
//! modified before the cut-off.
//!
//! Against the references (the single-process run), a local listing `stat`s only the regular
//! files whose location no version references ([`Unreferenced`], a
//! [`crate::storage::StatFilter`]): the others are counted by name and directory-entry type
//! alone. Without them (a list unit run anywhere), every file's age is read and the location
//! keys of the files younger than the cut-off are returned ([`Partial::young`]): the decision
//! counts those a version references, so both runs report the same counts.
//!
//! A data directory (partition or bucket) that cannot be listed counts as empty (deleting less
//! is safe there); the error is reported. A directory of the layout (`manifest/`, `index/`,
//! `statistics/`, a branch's `snapshot/` or `changelog/`) that cannot be listed fails the unit,
//! and with it the run: only a directory that truly does not exist lists as empty.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use futures::stream::{self, StreamExt};

use crate::clean::control::RunControl;
use crate::clean::report::FileClass;
use crate::error::Result;
use crate::hash::DirKeys;
use crate::storage::{
    DirListing, FileStatus, Location, NameListing, NamedStatus, StatFilter, Storage,
};
use crate::table::VersionedDir;

use super::keyset::SharedKeyIndex;
use super::partial::{Candidate, ListedDir, Partial};
use super::shard;
use super::work_unit::{ListDir, ListKind};

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

/// Packs Paimon keeps whatever references say: never candidates.
const MANAGED_BLOB: &str = ".managed.blob";

/// The [`StatFilter`] of a listing against the references: a regular file needs its size and
/// age only if its name makes it a candidate of its directory's kind, it is not a
/// `*.managed.blob` pack, and no version references its location ([`shard::child_of`] of directory
/// and name). A key collision can only make a file look referenced, which keeps it.
struct Unreferenced {
    keys: Arc<SharedKeyIndex>,
    /// The kind of each directory of the listing call, by index.
    kinds: Vec<DirKind>,
}

impl StatFilter for Unreferenced {
    fn select(&self, index: usize, dir: &Location, names: &[&str], want: &mut [bool]) {
        // A directory of unknown kind: every file is `stat`ed (as without a filter).
        let Some(kind) = self.kinds.get(index) else {
            return;
        };
        let own = DirKeys::new(dir.as_str());
        let mut probes: Vec<(u64, u32)> = Vec::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            if classify(kind, name).is_none() || name.ends_with(MANAGED_BLOB) {
                if let Some(w) = want.get_mut(i) {
                    *w = false;
                }
            } else {
                probes.push((shard::child(&own, name), i as u32));
            }
        }
        // In ascending key order: lookups in a set of many megabytes then walk it forwards
        // instead of missing the cache at random.
        probes.sort_unstable_by_key(|p| p.0);
        for (key, i) in probes {
            if self.keys.contains(key) {
                if let Some(w) = want.get_mut(i as usize) {
                    *w = false;
                }
            }
        }
    }
}

/// The filter of a listing of directories of `kinds` against `referenced`, if any.
fn filter_of(
    referenced: Option<&Arc<SharedKeyIndex>>,
    kinds: Vec<DirKind>,
) -> Option<Arc<dyn StatFilter>> {
    referenced.map(|keys| {
        Arc::new(Unreferenced {
            keys: Arc::clone(keys),
            kinds,
        }) as Arc<dyn StatFilter>
    })
}

/// Executes a list unit: lists `dirs` with at most `concurrency` listings in flight and adds
/// their candidates to `out`.
///
/// With `referenced` (the indexed keys of referenced locations, [`shard::child_of`] of directory and
/// name), a listed file whose key is among them is only counted ([`Partial::referenced`]),
/// whatever its age, not held: the decision would keep it anyway, and references only grow
/// during a run. On a local disk such a file is not even `stat`ed ([`Unreferenced`]). The
/// other files are candidates if modified before `cutoff_ms`. A key collision can only keep a
/// file.
///
/// Without `referenced`, files modified before `cutoff_ms` are candidates, and the location
/// keys of the younger ones go to [`Partial::young`] (the decision counts the referenced ones).
pub(crate) async fn list(
    storage: &Storage,
    dirs: Vec<ListDir>,
    cutoff_ms: i64,
    concurrency: usize,
    ctl: &RunControl,
    referenced: Option<&Arc<SharedKeyIndex>>,
    out: &mut Partial,
) -> Result<()> {
    let (mut plain, partitions) = by_kind(dirs)?;
    list_partitions(
        storage,
        &partitions,
        cutoff_ms,
        concurrency,
        referenced,
        &mut plain,
        out,
    )
    .await;
    ctl.cancel.check()?;
    let (plain_dirs, kinds): (Vec<Location>, Vec<DirKind>) = plain.into_iter().unzip();
    let mut stream = storage.list_dirs_by_name_filtered(
        &plain_dirs,
        concurrency,
        filter_of(referenced, kinds.clone()),
    );
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
                absorb(
                    out,
                    dir,
                    kind,
                    listing,
                    cutoff_ms,
                    referenced.map(|k| k.as_ref()),
                );
            }
            // A directory of the layout (`manifest/`, `index/`, `statistics/`, a branch's
            // `snapshot/` or `changelog/`) that cannot be listed stops the run.
            Err(e) if !matches!(kind, DirKind::Data(_)) => return Err(e),
            Err(e) => {
                tracing::warn!(dir = %dir, error = %e, "cannot list a candidate directory; nothing in it is deleted");
                out.errors.push(format!("{dir}: {e}"));
            }
        }
    }
    // A listing cut short by a cancellation is not a result.
    ctl.cancel.check()
}

/// A unit's directories by how they are listed: the directories listed as they are, with
/// their kinds, and the last-level partition directories, with their data roots.
type ByKind = (Vec<(Location, DirKind)>, Vec<(Location, Location)>);

/// Sorts `dirs` into [`ByKind`].
fn by_kind(dirs: Vec<ListDir>) -> Result<ByKind> {
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
    Ok((plain, partitions))
}

/// Lists the last-level partition directories `partitions` (each with its data root): their
/// bucket directories go to `plain` (each once), to be listed with the other directories; a
/// partition directory without buckets holds candidates itself, absorbed into `out` here.
async fn list_partitions(
    storage: &Storage,
    partitions: &[(Location, Location)],
    cutoff_ms: i64,
    concurrency: usize,
    referenced: Option<&Arc<SharedKeyIndex>>,
    plain: &mut Vec<(Location, DirKind)>,
    out: &mut Partial,
) {
    let part_dirs: Vec<Location> = partitions.iter().map(|(d, _)| d.clone()).collect();
    let part_kinds = partitions
        .iter()
        .map(|(_, root)| DirKind::Data(root.clone()))
        .collect();
    let mut listed = storage.list_dirs_by_name_filtered(
        &part_dirs,
        concurrency,
        filter_of(referenced, part_kinds),
    );
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
                    referenced.map(|k| k.as_ref()),
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
}

/// Adds the candidates of one listing of `dir` to `out`, grouped by the directory each file is
/// in (`dir`, unless a store spells keys differently: those files are grouped by their
/// listing location's parent).
///
/// Each file the directory's kind admits by name counts as listed; `*.managed.blob` packs stop
/// there. Then the references: a file whose location key is in `referenced`, or that the
/// listing gave no status (only [`Unreferenced`] leaves it out, for such a file), is counted
/// in [`Partial::referenced`] and kept, its age unread. Only the others need their age: older
/// than `cutoff_ms`, a candidate; younger, dropped, its location key kept in
/// [`Partial::young`] when there are no references here to check it against.
///
/// The keys of one listing are looked up together, in ascending order: lookups of a set of
/// many megabytes then walk it forwards instead of missing the cache at random.
fn absorb(
    out: &mut Partial,
    dir: &Location,
    kind: &DirKind,
    listing: NameListing,
    cutoff_ms: i64,
    referenced: Option<&SharedKeyIndex>,
) {
    let data_root = match kind {
        DirKind::Data(root) => Some(root.as_str().to_string()),
        _ => None,
    };
    let prefix = dir.as_str();
    let own_files = own_candidates(out, prefix, kind, &listing, cutoff_ms, referenced);
    // The others by their parent.
    let mut groups = elsewhere_candidates(out, kind, listing.elsewhere, cutoff_ms, referenced);
    if !own_files.is_empty() {
        groups
            .entry(prefix.to_string())
            .or_default()
            .extend(own_files);
    }
    out.dirs
        .extend(groups.into_iter().map(|(dir, files)| ListedDir {
            dir,
            data_root: data_root.clone(),
            files,
        }));
}

/// The candidates among the files of `listing` directly in the directory `prefix` (the usual
/// case), counting them into `out` as [`absorb`] says.
fn own_candidates(
    out: &mut Partial,
    prefix: &str,
    kind: &DirKind,
    listing: &NameListing,
    cutoff_ms: i64,
    referenced: Option<&SharedKeyIndex>,
) -> Vec<Candidate> {
    // `dir` hashed once for the keys of its own files.
    let own = DirKeys::new(prefix);
    // Files directly in `dir` (the usual case), by name, with their keys.
    let mut open: Vec<(NamedStatus<'_>, FileClass, u64)> = Vec::with_capacity(listing.file_count());
    for f in listing.files() {
        let Some(class) = classify(kind, f.name) else {
            continue;
        };
        out.files_listed += 1;
        if f.name.ends_with(MANAGED_BLOB) {
            continue;
        }
        if f.status.is_none() {
            // Not `stat`ed: the listing's filter found its location referenced.
            out.referenced += 1;
            continue;
        }
        open.push((f, class, shard::child(&own, f.name)));
    }
    let mut held = vec![true; open.len()];
    if let Some(keys) = referenced {
        let mut probes: Vec<(u64, u32)> = open
            .iter()
            .enumerate()
            .map(|(i, (_, _, key))| (*key, i as u32))
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
    let mut own_files: Vec<Candidate> = Vec::new();
    for ((f, class, key), _) in open.iter().zip(&held).filter(|(_, h)| **h) {
        let Some(status) = f.status else {
            continue;
        };
        if status.last_modified_ms < cutoff_ms {
            own_files.push(Candidate {
                name: f.name.to_string(),
                size: status.size,
                class: *class,
            });
        } else if referenced.is_none() {
            out.young.push(*key);
        }
    }
    own_files.shrink_to_fit();
    own_files
}

/// The candidates among the files a listing gave under another spelling of the directory
/// (`elsewhere`), grouped by their parent, counting them into `out` as [`absorb`] says.
fn elsewhere_candidates(
    out: &mut Partial,
    kind: &DirKind,
    elsewhere: Vec<FileStatus>,
    cutoff_ms: i64,
    referenced: Option<&SharedKeyIndex>,
) -> BTreeMap<String, Vec<Candidate>> {
    let mut groups: BTreeMap<String, Vec<Candidate>> = BTreeMap::new();
    for f in elsewhere {
        let name = f.location.name();
        let Some(class) = classify(kind, name) else {
            continue;
        };
        out.files_listed += 1;
        if name.ends_with(MANAGED_BLOB) {
            continue;
        }
        let Some(parent) = f.location.parent() else {
            continue;
        };
        let key = shard::child_of(parent.as_str(), name);
        if let Some(keys) = referenced {
            if keys.contains(key) {
                out.referenced += 1;
                continue;
            }
        }
        if f.last_modified_ms >= cutoff_ms {
            if referenced.is_none() {
                out.young.push(key);
            }
            continue;
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
    groups
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
