//! The driver's view of the versions (spec §5.6 step 5): every snapshot, tag and long-lived
//! changelog of every branch, their manifest lists, and which manifests are planned for
//! reading for which branch. It is part of the plan state, so the decision continues where the
//! plan stopped: it lists the table again until no new version appears, and judges the
//! metadata the units could not read.
//!
//! * Every branch is read (P2). A branch directory without any schema (pypaimon can leave one)
//!   is read with the main branch's schema and options and reported; a branch whose schema
//!   exists but cannot be parsed aborts the run.
//! * A version that disappears between listing and reading is skipped (it was expired).
//!   Metadata that a version still present needs but that cannot be read (missing included,
//!   P3) is an error: nothing may be deleted then.
//! * A long-lived changelog with a changelog manifest list needs only that list (what an
//!   incremental reader of it uses); its base and delta lists are read when present, never
//!   required. Nor does it need its index manifest.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use futures::stream::{self, StreamExt};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::hash::{location_key, name_key};
use crate::spec::manifest;
use crate::spec::snapshot::Snapshot;
use crate::storage::{Location, Storage};
use crate::table::{branch_root, list_branches, Table, VersionedDir, MAIN_BRANCH};

use super::partial::{Partial, ReadFailure};
use super::unit::{BranchRef, ReadItem};

/// Identity of a version, so each is read once even when the table is listed again.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
enum VersionKey {
    Snapshot(String, i64),
    Tag(String, String),
    Changelog(String, i64),
}

/// A version that references files.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct VersionInfo {
    /// For logs and errors, e.g. "snapshot 5 of branch main".
    pub label: String,
    /// The version's own file (to tell "expired meanwhile" from "metadata missing").
    pub file: String,
    /// Index into [`Tracker::branches`].
    pub branch: u32,
    /// A long-lived changelog.
    pub changelog: bool,
    /// Its manifest lists, each with whether the version needs it.
    pub lists: Vec<(String, bool)>,
    /// Its index manifest.
    pub index_manifest: Option<String>,
    /// Its statistics file.
    pub statistics: Option<String>,
    /// It claims live records.
    pub records: bool,
}

impl VersionInfo {
    fn new(label: String, file: &Location, branch: u32, changelog: bool, s: &Snapshot) -> Self {
        let lists = s
            .manifest_lists()
            .map(|l| {
                // A changelog with a changelog list needs only that one.
                let required = match (&s.changelog_manifest_list, changelog) {
                    (Some(c), true) => c == l,
                    _ => true,
                };
                (l.to_string(), required)
            })
            .collect();
        VersionInfo {
            label,
            file: file.as_str().to_string(),
            branch,
            changelog,
            lists,
            index_manifest: s.index_manifest.clone(),
            statistics: s.statistics.clone(),
            records: s.total_record_count.unwrap_or(0) > 0,
        }
    }
}

/// How many times the table is listed again for versions that appeared meanwhile.
pub(crate) const MAX_ROUNDS: usize = 10;

/// The versions of one run and what is planned for them.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Tracker {
    /// Branches seen, in order of discovery (main first).
    pub branches: Vec<BranchRef>,
    /// Branch directories without a schema.
    pub branches_without_schema: Vec<String>,
    seen: BTreeSet<VersionKey>,
    /// Versions whose manifest lists were read (or not needed).
    pub versions: Vec<VersionInfo>,
    /// Manifest names, interned (lists hold ids).
    manifest_names: Vec<String>,
    #[serde(skip)]
    manifest_ids: HashMap<String, u32>,
    /// Manifest list name → manifest ids.
    lists: BTreeMap<String, Vec<u32>>,
    /// (manifest id, branch) pairs planned for reading.
    planned: BTreeSet<(u32, u32)>,
    /// (index manifest, branch) pairs planned for reading.
    planned_index: BTreeSet<(String, u32)>,
    /// Most snapshot files seen in one branch's listing.
    pub snapshots_listed: u64,
    /// Listings after the first.
    pub rounds: usize,
}

impl Tracker {
    /// Rebuilds the lookup maps after deserialization.
    pub fn rebuild(&mut self) {
        self.manifest_ids = self
            .manifest_names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i as u32))
            .collect();
    }

    fn manifest_id(&mut self, name: String) -> u32 {
        if let Some(id) = self.manifest_ids.get(&name) {
            return *id;
        }
        let id = self.manifest_names.len() as u32;
        self.manifest_ids.insert(name.clone(), id);
        self.manifest_names.push(name);
        id
    }

    /// The index of branch `name`, checking its schema on first use.
    async fn branch_index(&mut self, main: &Table, name: &str) -> Result<u32> {
        if let Some(i) = self.branches.iter().position(|b| b.name == name) {
            return Ok(i as u32);
        }
        let own_schema = if name == MAIN_BRANCH {
            true
        } else {
            match main.branch(name).await {
                Ok(_) => true,
                Err(Error::NotFound { .. }) => {
                    tracing::warn!(branch = %name, "branch directory has no schema; its snapshots, tags and changelogs are read with the main branch's schema");
                    self.branches_without_schema.push(name.to_string());
                    false
                }
                Err(e) => return Err(e),
            }
        };
        self.branches.push(BranchRef {
            name: name.to_string(),
            own_schema,
        });
        Ok((self.branches.len() - 1) as u32)
    }

    /// Every version not read yet, over all branches. Versions that vanish while being read
    /// are skipped.
    pub async fn discover(&mut self, main: &Table, concurrency: usize) -> Result<Vec<VersionInfo>> {
        let storage = main.storage().clone();
        let root = storage.root().clone();
        let mut out = Vec::new();
        for name in list_branches(&storage).await? {
            let b = self.branch_index(main, &name).await?;
            let broot = branch_root(&root, &name);
            for (dir, snapshots) in [
                (VersionedDir::snapshots(&broot), true),
                (VersionedDir::changelogs(&broot), false),
            ] {
                let ids: Vec<i64> = dir.list_ids(&storage).await?;
                if snapshots {
                    self.snapshots_listed = self.snapshots_listed.max(ids.len() as u64);
                }
                let key = |id| {
                    if snapshots {
                        VersionKey::Snapshot(name.clone(), id)
                    } else {
                        VersionKey::Changelog(name.clone(), id)
                    }
                };
                let todo: Vec<i64> = ids
                    .into_iter()
                    .filter(|id| !self.seen.contains(&key(*id)))
                    .collect();
                // Several read and parsed to a blocking section, in the order of `todo`.
                let read = dir.try_read_many(&storage, &todo, concurrency).await;
                for (id, r) in read {
                    self.seen.insert(key(id));
                    let what = if snapshots { "snapshot" } else { "changelog" };
                    match r? {
                        Some(s) => out.push(VersionInfo::new(
                            format!("{what} {id} of branch {name}"),
                            &dir.location(id),
                            b,
                            !snapshots,
                            &s,
                        )),
                        None => {
                            tracing::info!(branch = %name, id, "{what} vanished while listed (expired); skipped")
                        }
                    }
                }
            }
            let tag_dir = broot.join("tag");
            let tag_files: Vec<(String, Location)> = storage
                .list_metadata_dir(&tag_dir)
                .await?
                .files
                .into_iter()
                .filter_map(|f| {
                    let tag = f.location.name().strip_prefix("tag-")?.to_string();
                    Some((tag, f.location))
                })
                .filter(|(tag, _)| {
                    !self
                        .seen
                        .contains(&VersionKey::Tag(name.clone(), tag.clone()))
                })
                .collect();
            let mut read: Vec<(String, Location, Result<bytes::Bytes>)> = stream::iter(tag_files)
                .map(|(tag, loc)| {
                    let storage = &storage;
                    async move {
                        let r = storage.get(&loc).await;
                        (tag, loc, r)
                    }
                })
                .buffer_unordered(concurrency.max(1))
                .collect()
                .await;
            read.sort_by(|a, b| a.0.cmp(&b.0));
            for (tag, loc, r) in read {
                self.seen.insert(VersionKey::Tag(name.clone(), tag.clone()));
                let bytes = match r {
                    Ok(b) => b,
                    Err(e) if e.is_not_found() => {
                        tracing::info!(branch = %name, tag = %tag, "tag vanished while listed; skipped");
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                // Only the snapshot part matters here; tag-only keys stay in `extra`.
                let snapshot = Snapshot::parse(&bytes, loc.as_str())?;
                out.push(VersionInfo::new(
                    format!("tag {tag} of branch {name}"),
                    &loc,
                    b,
                    false,
                    &snapshot,
                ));
            }
        }
        Ok(out)
    }

    /// Reads the manifest lists of `new` versions (each list once per run) and keeps the
    /// versions that remain (a version whose needed list is missing and which vanished itself
    /// is dropped; one that still exists fails the run). The metadata the kept versions name
    /// (manifest lists, statistics) is recorded in `refs`. Returns the index of the first kept
    /// version in [`Tracker::versions`].
    pub async fn read_lists(
        &mut self,
        main: &Table,
        new: Vec<VersionInfo>,
        concurrency: usize,
        refs: &mut Partial,
    ) -> Result<usize> {
        let paths = main.paths();
        let storage = main.storage();
        let mut need: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, v) in new.iter().enumerate() {
            for (l, required) in &v.lists {
                let users = need.entry(l.clone()).or_default();
                if *required {
                    users.push(i);
                }
            }
        }
        let todo: Vec<String> = need
            .keys()
            .filter(|l| !self.lists.contains_key(*l))
            .cloned()
            .collect();
        // Each list's manifests are interned as soon as it is read: only the lists in flight
        // hold their names. Several lists are read to a blocking section.
        let mut locs: Vec<Location> = Vec::with_capacity(todo.len());
        let mut of_loc: Vec<usize> = Vec::with_capacity(todo.len());
        let mut unlocated: Vec<(usize, Result<Vec<String>>)> = Vec::new();
        for (n, l) in todo.iter().enumerate() {
            match paths.manifest(l) {
                Ok(loc) => {
                    locs.push(loc);
                    of_loc.push(n);
                }
                Err(e) => unlocated.push((n, Err(e))),
            }
        }
        let at: Arc<Vec<String>> = Arc::new(locs.iter().map(|l| l.as_str().to_string()).collect());
        let decoded = storage
            .get_many_then(&locs, concurrency, move |i, b| {
                let at = at.get(i).map_or("", String::as_str);
                let list = manifest::decode_manifest_list(&b, at)?;
                let mut names = Vec::with_capacity(list.len());
                names.extend(list.into_iter().map(|m| m.file_name));
                Ok(names)
            })
            .map(|(i, r)| (of_loc.get(i).copied().unwrap_or(usize::MAX), r));
        let mut read = stream::iter(unlocated).chain(decoded);
        let mut failed: Vec<(String, Error)> = Vec::new();
        while let Some((n, r)) = read.next().await {
            let Some(l) = todo.get(n).cloned() else {
                return Err(Error::Internal(
                    "a manifest list read without its name; nothing deleted".into(),
                ));
            };
            match r {
                Ok(names) => {
                    let ids = names.into_iter().map(|n| self.manifest_id(n)).collect();
                    self.lists.insert(l, ids);
                }
                Err(e) => failed.push((l, e)),
            }
        }
        drop(read);
        // Failures in the order of the lists' names, as before.
        failed.sort_by(|a, b| a.0.cmp(&b.0));
        let mut dropped: BTreeSet<usize> = BTreeSet::new();
        for (l, e) in failed {
            let loc = paths.manifest(&l)?;
            let needed_by: Vec<&VersionInfo> = need
                .get(&l)
                .map(Vec::as_slice)
                .unwrap_or(&[])
                .iter()
                .filter(|i| !dropped.contains(*i))
                .filter_map(|i| new.get(*i))
                .collect();
            if fail_or_drop(storage, e, "manifest list", &loc, &needed_by).await? {
                dropped.extend(need.get(&l).into_iter().flatten().copied());
            }
        }
        let first = self.versions.len();
        let manifest_dir = |n: &str| paths.manifest(n).ok();
        let statistics_dir = |n: &str| paths.statistics(n).ok();
        for (i, v) in new.into_iter().enumerate() {
            if dropped.contains(&i) {
                continue;
            }
            let mut note = |name: &str, loc: Option<Location>| {
                refs.names.push(name_key(name));
                if let Some(loc) = loc {
                    refs.locations.push(location_key(loc.as_str()));
                }
            };
            for (l, _) in &v.lists {
                note(l, manifest_dir(l));
            }
            if let Some(im) = &v.index_manifest {
                note(im, manifest_dir(im));
            }
            if let Some(st) = &v.statistics {
                note(st, statistics_dir(st));
            }
            self.versions.push(v);
        }
        Ok(first)
    }

    /// The manifests and index manifests the versions from index `from` on need read, for
    /// their branches, that are not planned yet; sorted by name.
    pub fn plan_reads(&mut self, from: usize) -> Vec<ReadItem> {
        let mut items: BTreeMap<(bool, String), BTreeSet<u32>> = BTreeMap::new();
        let versions = self.versions.get(from..).unwrap_or(&[]);
        for v in versions {
            for (l, _) in &v.lists {
                for &id in self.lists.get(l).map(Vec::as_slice).unwrap_or(&[]) {
                    if self.planned.insert((id, v.branch)) {
                        if let Some(name) = self.manifest_names.get(id as usize) {
                            items
                                .entry((false, name.clone()))
                                .or_default()
                                .insert(v.branch);
                        }
                    }
                }
            }
            if let Some(im) = &v.index_manifest {
                if self.planned_index.insert((im.clone(), v.branch)) {
                    items
                        .entry((true, im.clone()))
                        .or_default()
                        .insert(v.branch);
                }
            }
        }
        items
            .into_iter()
            .map(|((index, name), branches)| ReadItem {
                name,
                index,
                branches: branches.into_iter().collect(),
            })
            .collect()
    }

    /// Judges the metadata the read units could not read: a failure fails the run unless the
    /// file is missing and every version that needs it vanished too (then those versions are
    /// dropped). Returns the versions dropped.
    pub async fn judge(
        &self,
        storage: &Storage,
        main: &Table,
        failures: &[ReadFailure],
    ) -> Result<BTreeSet<usize>> {
        let mut dropped: BTreeSet<usize> = BTreeSet::new();
        // Manifests first, then index manifests (a version dropped for a manifest does not
        // need its index manifest any more).
        let mut ordered: Vec<&ReadFailure> = failures.iter().collect();
        ordered.sort_by_key(|f| (f.index, f.name.clone()));
        for f in ordered {
            let loc = main.paths().manifest(&f.name)?;
            let err = f.error();
            let needed: Vec<usize> = if f.index {
                // A long-lived changelog does not need its index manifest (no changelog reader
                // reads deletion vectors or indexes of it): absent, it names nothing for it.
                let absent = err.is_not_found();
                (0..self.versions.len())
                    .filter(|i| !dropped.contains(i))
                    .filter(|i| {
                        let v = &self.versions[*i];
                        v.index_manifest.as_deref() == Some(f.name.as_str())
                            && !(absent && v.changelog)
                    })
                    .collect()
            } else {
                let id = self.manifest_ids.get(&f.name).copied();
                (0..self.versions.len())
                    .filter(|i| !dropped.contains(i))
                    .filter(|i| {
                        self.versions[*i].lists.iter().any(|(l, required)| {
                            *required
                                && self
                                    .lists
                                    .get(l)
                                    .is_some_and(|ids| id.is_some_and(|id| ids.contains(&id)))
                        })
                    })
                    .collect()
            };
            if f.index && needed.is_empty() {
                // Only versions already dropped (or changelogs) use it: as if never read.
                continue;
            }
            let what = if f.index {
                "index manifest"
            } else {
                "manifest"
            };
            let users: Vec<&VersionInfo> = needed
                .iter()
                .filter_map(|i| self.versions.get(*i))
                .collect();
            if fail_or_drop(storage, err, what, &loc, &users).await? {
                dropped.extend(needed);
            }
        }
        Ok(dropped)
    }
}

/// A metadata file `loc` could not be read. If it is missing and every version that needs it
/// has vanished too (expired concurrently), returns true (drop them); otherwise the run fails,
/// naming the file and a version that still needs it.
async fn fail_or_drop(
    storage: &Storage,
    err: Error,
    what: &str,
    loc: &Location,
    needed_by: &[&VersionInfo],
) -> Result<bool> {
    if !err.is_not_found() {
        let by = needed_by.first().map_or("a version", |v| v.label.as_str());
        let context = |message: String| format!("{message} (needed by {by}); nothing deleted");
        return Err(match err {
            Error::Malformed {
                kind,
                path,
                message,
            } => Error::Malformed {
                kind,
                path,
                message: context(message),
            },
            Error::Storage { path, message } => Error::Storage {
                path,
                message: context(message),
            },
            other => other,
        });
    }
    for v in needed_by {
        let file = Location::parse(&v.file)?;
        if storage.exists(&file).await? {
            return Err(Error::NotFound {
                path: format!(
                    "{loc} ({what} needed by {}, which still exists); nothing deleted",
                    v.label
                ),
            });
        }
    }
    for v in needed_by {
        tracing::info!(version = %v.label, missing = %loc, "version expired while being read; skipped");
    }
    Ok(true)
}
