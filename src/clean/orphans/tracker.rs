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
//!   required. One without a changelog list needs its base and delta lists only when its
//!   branch's changelog producer is `none`. Nor does it need its index manifest.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use futures::stream::{self, StreamExt};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::hash::{name_key, FastMap};
use crate::spec::manifest;
use crate::spec::snapshot::VersionRefs;
use crate::storage::{Location, Storage};
use crate::table::{branch_root, list_branches, Table, VersionedDir, MAIN_BRANCH};

use super::partial::{Partial, ReadFailure};
use super::shard;
use super::work_unit::{BranchRef, ReadItem};

/// Which version of a branch: its kind and id (a tag keeps its file's location too).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
enum Version {
    Snapshot(i64),
    Changelog(i64),
    Tag { tag: String, file: String },
}

/// Identity of a version (branch index, kind and id), so each is read once even when the
/// table is listed again.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
enum VersionKey {
    Snapshot(u32, i64),
    Tag(u32, String),
    Changelog(u32, i64),
}

/// A version that references files. Its names are ids in the tracker's name tables, its label
/// and file are rebuilt when an error or a log needs them ([`Tracker::describe`]): 10 k
/// versions hold about 1 MB where strings of their own held several.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct VersionInfo {
    /// Index into [`Tracker::branches`].
    branch: u32,
    /// Kind and id.
    version: Version,
    /// Its manifest lists (ids in the list names), each with whether the version needs it.
    lists: Box<[(u32, bool)]>,
    /// Its index manifest (an id in the manifest names).
    index_manifest: Option<u32>,
    /// Its statistics file.
    statistics: Option<Box<str>>,
    /// It claims live records.
    pub records: bool,
}

impl VersionInfo {
    /// Its branch: an index into [`Tracker::branches`] (0 for the first branch discovered,
    /// the main branch).
    pub fn branch(&self) -> u32 {
        self.branch
    }

    /// A long-lived changelog.
    fn changelog(&self) -> bool {
        matches!(self.version, Version::Changelog(_))
    }
}

/// Distinct names, each stored once in one string, with an exact lookup: the lookup goes
/// through a name's 64-bit key, and a name whose key another name already holds is found in
/// a side map, so two names never share an id.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Names {
    /// Every name, one after the other.
    text: String,
    /// `ends[i]`: where name `i` ends in `text`.
    ends: Vec<u32>,
    /// Key of a name → its id (the first name with that key).
    #[serde(skip)]
    by_key: FastMap<u64, u32>,
    /// Names whose key an earlier name holds in `by_key`.
    #[serde(skip)]
    clashes: HashMap<String, u32>,
}

impl Names {
    /// Name `id` ("" if there is none).
    fn get(&self, id: u32) -> &str {
        let i = id as usize;
        let end = self.ends.get(i).map_or(0, |e| *e as usize);
        let start = match i.checked_sub(1) {
            Some(p) => self.ends.get(p).map_or(0, |e| *e as usize),
            None => 0,
        };
        self.text.get(start..end).unwrap_or("")
    }

    /// The id of `name`, if it has one.
    fn find(&self, name: &str) -> Option<u32> {
        match self.by_key.get(&name_key(name)) {
            Some(&id) if self.get(id) == name => Some(id),
            Some(_) => self.clashes.get(name).copied(),
            None => None,
        }
    }

    /// The id of `name`, given one if it has none yet.
    fn intern(&mut self, name: &str) -> Result<u32> {
        if let Some(id) = self.find(name) {
            return Ok(id);
        }
        let too_many = || Error::Unsupported("more than 4 GiB of metadata file names".into());
        let id = u32::try_from(self.ends.len()).map_err(|_| too_many())?;
        let end = u32::try_from(self.text.len() + name.len()).map_err(|_| too_many())?;
        self.text.push_str(name);
        self.ends.push(end);
        self.index(name, id);
        Ok(id)
    }

    fn index(&mut self, name: &str, id: u32) {
        match self.by_key.entry(name_key(name)) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(id);
            }
            std::collections::hash_map::Entry::Occupied(_) => {
                self.clashes.insert(name.to_string(), id);
            }
        }
    }

    /// Number of names.
    fn len(&self) -> usize {
        self.ends.len()
    }

    /// Rebuilds the lookup after deserialization.
    fn rebuild(&mut self) {
        self.by_key = FastMap::with_capacity_and_hasher(self.len(), Default::default());
        self.clashes = HashMap::new();
        for id in 0..self.len() as u32 {
            let name = self.get(id).to_string();
            self.index(&name, id);
        }
    }

    /// Releases the spare capacity of the growing buffers.
    fn shrink(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
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
    /// Manifest list names, interned (versions hold ids).
    list_names: Names,
    /// Manifest and index manifest names, interned (lists and versions hold ids).
    manifest_names: Names,
    /// For each manifest list id: its manifests, a range of `list_manifest_runs` (`None`: not
    /// read).
    list_spans: Vec<Option<(u32, u32)>>,
    /// The manifest ids of every list read, list after list, runs of consecutive ids
    /// shortened ([`encode_ids`]): a table whose manifests were never merged has lists that
    /// name every earlier manifest, so the ids as they are grow with the square of the
    /// snapshots, while their runs stay a few per list.
    list_manifest_runs: Vec<u32>,
    /// (manifest id, branch) pairs planned for reading.
    planned: BTreeSet<(u32, u32)>,
    /// (index manifest id, branch) pairs planned for reading.
    planned_index: BTreeSet<(u32, u32)>,
    /// Most snapshot files seen in one branch's listing.
    pub snapshots_listed: u64,
    /// Listings after the first.
    pub rounds: usize,
    /// Per branch index: whether its changelog producer is `none` (missing: taken as `none`,
    /// which requires the most of a changelog).
    #[serde(default)]
    producer_none: Vec<bool>,
}

impl Tracker {
    /// Rebuilds the lookup maps after deserialization.
    pub fn rebuild(&mut self) {
        self.list_names.rebuild();
        self.manifest_names.rebuild();
    }

    /// The manifest ids of list `list`, in order (none if it was not read).
    fn manifests_of(&self, list: u32) -> ManifestIds<'_> {
        encoded_span(&self.list_spans, &self.list_manifest_runs, list)
    }

    /// Records the manifest ids of list `list`, in order.
    fn set_list(&mut self, list: u32, ids: &[u32]) -> Result<()> {
        let too_many = || Error::Unsupported("more than 2^31 manifest list entries".into());
        let start = u32::try_from(self.list_manifest_runs.len()).map_err(|_| too_many())?;
        encode_ids(ids, &mut self.list_manifest_runs).ok_or_else(too_many)?;
        let end = u32::try_from(self.list_manifest_runs.len()).map_err(|_| too_many())?;
        if self.list_spans.len() <= list as usize {
            self.list_spans.resize(list as usize + 1, None);
        }
        if let Some(span) = self.list_spans.get_mut(list as usize) {
            *span = Some((start, end));
        }
        Ok(())
    }

    /// True once list `list` was read.
    fn list_read(&self, list: u32) -> bool {
        matches!(self.list_spans.get(list as usize), Some(Some(_)))
    }

    /// A version's label for logs and errors (e.g. "snapshot 5 of branch main") and its own
    /// file (to tell "expired meanwhile" from "metadata missing").
    fn describe(&self, root: &Location, v: &VersionInfo) -> Result<(String, Location)> {
        let branch = self
            .branches
            .get(v.branch as usize)
            .map_or(MAIN_BRANCH, |b| b.name.as_str());
        let broot = branch_root(root, branch);
        Ok(match &v.version {
            Version::Snapshot(id) => (
                format!("snapshot {id} of branch {branch}"),
                VersionedDir::snapshots(&broot).location(*id),
            ),
            Version::Changelog(id) => (
                format!("changelog {id} of branch {branch}"),
                VersionedDir::changelogs(&broot).location(*id),
            ),
            Version::Tag { tag, file } => (
                format!("tag {tag} of branch {branch}"),
                Location::parse(file)?,
            ),
        })
    }

    /// The version read from `s`.
    fn version_info(
        &mut self,
        branch: u32,
        version: Version,
        s: &VersionRefs,
    ) -> Result<VersionInfo> {
        let changelog = matches!(version, Version::Changelog(_));
        let producer_none = self
            .producer_none
            .get(branch as usize)
            .copied()
            .unwrap_or(true);
        let mut lists = Vec::with_capacity(3);
        for l in s.manifest_lists() {
            // A changelog with a changelog list needs only that one; one without needs its
            // base and delta lists with producer `none` only (no reader reads it otherwise).
            let required = match (&s.changelog_manifest_list, changelog) {
                (Some(c), true) => c == l,
                (None, true) => producer_none,
                _ => true,
            };
            let id = self.list_names.intern(l)?;
            if self.list_spans.len() <= id as usize {
                self.list_spans.resize(id as usize + 1, None);
            }
            lists.push((id, required));
        }
        let index_manifest = match &s.index_manifest {
            Some(im) => Some(self.manifest_names.intern(im)?),
            None => None,
        };
        Ok(VersionInfo {
            branch,
            version,
            lists: lists.into_boxed_slice(),
            index_manifest,
            statistics: s.statistics.as_deref().map(Box::from),
            records: s.total_record_count.unwrap_or(0) > 0,
        })
    }

    /// The index of branch `name`, checking its schema on first use.
    async fn branch_index(&mut self, main: &Table, name: &str) -> Result<u32> {
        if let Some(i) = self.branches.iter().position(|b| b.name == name) {
            return Ok(i as u32);
        }
        let main_none = main.options().changelog_producer_none();
        let (own_schema, producer_none) = if name == MAIN_BRANCH {
            (true, main_none)
        } else {
            match main.branch(name).await {
                Ok(b) => (true, b.options().changelog_producer_none()),
                Err(Error::NotFound { .. }) => {
                    tracing::warn!(branch = %name, "branch directory has no schema; its snapshots, tags and changelogs are read with the main branch's schema");
                    self.branches_without_schema.push(name.to_string());
                    (false, main_none)
                }
                Err(e) => return Err(e),
            }
        };
        self.branches.push(BranchRef {
            name: name.to_string(),
            own_schema,
        });
        let index = self.branches.len() - 1;
        if self.producer_none.len() < index {
            // State from before this field: unknown branches count as `none`.
            self.producer_none.resize(index, true);
        }
        self.producer_none.truncate(index);
        self.producer_none.push(producer_none);
        Ok((self.branches.len() - 1) as u32)
    }

    /// Every version not read yet, over all branches. Versions that vanish while being read
    /// are skipped.
    pub async fn discover(&mut self, main: &Table, concurrency: usize) -> Result<Vec<VersionInfo>> {
        let branches = list_branches(main.storage()).await?;
        self.discover_in(main, branches, concurrency).await
    }

    /// [`Tracker::discover`] in the branches `branches` (as [`list_branches`] just listed
    /// them: the planner lists them once for its own directories and for this).
    pub async fn discover_in(
        &mut self,
        main: &Table,
        branches: Vec<String>,
        concurrency: usize,
    ) -> Result<Vec<VersionInfo>> {
        let storage = main.storage().clone();
        let root = storage.root().clone();
        let mut out = Vec::new();
        for name in branches {
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
                        VersionKey::Snapshot(b, id)
                    } else {
                        VersionKey::Changelog(b, id)
                    }
                };
                let todo: Vec<i64> = ids
                    .into_iter()
                    .filter(|id| !self.seen.contains(&key(*id)))
                    .collect();
                // Several read and parsed to a blocking section, in the order of `todo`.
                let read = dir.try_read_refs_many(&storage, &todo, concurrency).await;
                for (id, r) in read {
                    self.seen.insert(key(id));
                    let what = if snapshots { "snapshot" } else { "changelog" };
                    match r? {
                        Some(s) => {
                            let version = if snapshots {
                                Version::Snapshot(id)
                            } else {
                                Version::Changelog(id)
                            };
                            out.push(self.version_info(b, version, &s)?);
                        }
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
                .filter(|(tag, _)| !self.seen.contains(&VersionKey::Tag(b, tag.clone())))
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
                self.seen.insert(VersionKey::Tag(b, tag.clone()));
                let bytes = match r {
                    Ok(b) => b,
                    Err(e) if e.is_not_found() => {
                        tracing::info!(branch = %name, tag = %tag, "tag vanished while listed; skipped");
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                // Only the snapshot part matters here; tag-only keys stay in `extra`.
                let snapshot = VersionRefs::parse(&bytes, loc.as_str())?;
                let version = Version::Tag {
                    tag,
                    file: loc.as_str().to_string(),
                };
                out.push(self.version_info(b, version, &snapshot)?);
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
        let need = lists_needed(&new);
        let todo: Vec<u32> = need
            .keys()
            .copied()
            .filter(|l| !self.list_read(*l))
            .collect();
        let failed = self.intern_lists(main, &todo, concurrency).await?;
        let dropped = self.fail_or_drop_all(main, failed, &need, &new).await?;
        Ok(self.keep_versions(main, new, &dropped, refs))
    }

    /// Reads the manifest lists `todo` and interns their manifests' names; returns the lists
    /// that could not be read, with their errors, in the order of their names.
    async fn intern_lists(
        &mut self,
        main: &Table,
        todo: &[u32],
        concurrency: usize,
    ) -> Result<Vec<(u32, Error)>> {
        let paths = main.paths();
        let storage = main.storage();
        // Each list's manifests are interned as soon as it is read: only the lists in flight
        // hold their names. Several lists are read to a blocking section.
        let list_names = &self.list_names;
        let mut locs: Vec<Location> = Vec::with_capacity(todo.len());
        let mut of_loc: Vec<usize> = Vec::with_capacity(todo.len());
        let mut unlocated: Vec<(usize, Result<Vec<String>>)> = Vec::new();
        for (n, l) in todo.iter().enumerate() {
            match paths.manifest(list_names.get(*l)) {
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
        let mut failed: Vec<(u32, Error)> = Vec::new();
        let mut ids: Vec<u32> = Vec::new();
        while let Some((n, r)) = read.next().await {
            let Some(l) = todo.get(n).copied() else {
                return Err(Error::Internal(
                    "a manifest list read without its name; nothing deleted".into(),
                ));
            };
            match r {
                Ok(names) => {
                    ids.clear();
                    for n in names {
                        ids.push(self.manifest_names.intern(&n)?);
                    }
                    self.set_list(l, &ids)?;
                }
                Err(e) => failed.push((l, e)),
            }
        }
        drop(read);
        self.list_manifest_runs.shrink_to_fit();
        self.manifest_names.shrink();
        self.list_names.shrink();
        failed.sort_by(|a, b| self.list_names.get(a.0).cmp(self.list_names.get(b.0)));
        Ok(failed)
    }

    /// For each list that could not be read (`failed`), fails the run if a version that
    /// needs it still exists, else drops the versions that need it (they vanished); returns
    /// the dropped versions' indexes in `new`.
    async fn fail_or_drop_all(
        &self,
        main: &Table,
        failed: Vec<(u32, Error)>,
        need: &BTreeMap<u32, Vec<usize>>,
        new: &[VersionInfo],
    ) -> Result<BTreeSet<usize>> {
        let paths = main.paths();
        let storage = main.storage();
        let root = storage.root().clone();
        let mut dropped: BTreeSet<usize> = BTreeSet::new();
        for (l, e) in failed {
            let loc = paths.manifest(self.list_names.get(l))?;
            let mut needed_by = Vec::new();
            for i in need.get(&l).map(Vec::as_slice).unwrap_or(&[]) {
                if dropped.contains(i) {
                    continue;
                }
                if let Some(v) = new.get(*i) {
                    needed_by.push(self.describe(&root, v)?);
                }
            }
            if fail_or_drop(storage, e, "manifest list", &loc, &needed_by).await? {
                dropped.extend(need.get(&l).into_iter().flatten().copied());
            }
        }
        Ok(dropped)
    }

    /// Appends the versions of `new` not `dropped` to [`Tracker::versions`], recording the
    /// metadata they name (manifest lists, index manifest, statistics) in `refs`; returns the
    /// index of the first one.
    fn keep_versions(
        &mut self,
        main: &Table,
        new: Vec<VersionInfo>,
        dropped: &BTreeSet<usize>,
        refs: &mut Partial,
    ) -> usize {
        let paths = main.paths();
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
                    refs.locations.push(shard::location(loc.as_str()));
                }
            };
            for (l, _) in v.lists.iter() {
                let l = self.list_names.get(*l);
                note(l, manifest_dir(l));
            }
            if let Some(im) = v.index_manifest {
                let im = self.manifest_names.get(im);
                note(im, manifest_dir(im));
            }
            if let Some(st) = &v.statistics {
                note(st, statistics_dir(st));
            }
            self.versions.push(v);
        }
        self.versions.shrink_to_fit();
        first
    }

    /// The manifests and index manifests the versions from index `from` on need read, for
    /// their branches, that are not planned yet; sorted by name.
    pub fn plan_reads(&mut self, from: usize) -> Vec<ReadItem> {
        let end = self.versions.len();
        self.plan_reads_in(from..end, None)
    }

    /// [`Tracker::plan_reads`] for the versions `range` (indices in [`Tracker::versions`]).
    /// With `along`, versions whose lists are read but whose reads are planned later: a
    /// manifest planned here for one branch is planned for the branches of `along` that need
    /// it too, in the same item, so that it is read once, as if every version were planned in
    /// one call (those pairs are then planned; `along`'s own call plans the rest).
    pub fn plan_reads_in(
        &mut self,
        range: std::ops::Range<usize>,
        along: Option<std::ops::Range<usize>>,
    ) -> Vec<ReadItem> {
        // Manifest id (and index manifest id) → the branches of `along` needing it.
        let mut later: FastMap<u32, BTreeSet<u32>> = FastMap::default();
        let mut later_index: FastMap<u32, BTreeSet<u32>> = FastMap::default();
        for v in along.and_then(|r| self.versions.get(r)).unwrap_or(&[]) {
            for (l, _) in v.lists.iter() {
                for id in self.manifests_of(*l) {
                    later.entry(id).or_default().insert(v.branch);
                }
            }
            if let Some(im) = v.index_manifest {
                later_index.entry(im).or_default().insert(v.branch);
            }
        }
        let mut items: BTreeMap<(bool, &str), BTreeSet<u32>> = BTreeMap::new();
        // `planned` as one bit per (branch, manifest id): every entry of every list of every
        // version is looked up (hundreds of thousands), few are new.
        let ids = self.manifest_names.len();
        let mut seen: Vec<Vec<bool>> = vec![vec![false; ids]; self.branches.len()];
        let mut mark = |id: u32, branch: u32| -> bool {
            let slot = seen
                .get_mut(branch as usize)
                .and_then(|b| b.get_mut(id as usize));
            match slot {
                Some(b) => !std::mem::replace(b, true),
                // Out of range cannot happen (ids are interned, branches registered); the
                // tree decides then.
                None => true,
            }
        };
        for &(id, branch) in &self.planned {
            mark(id, branch);
        }
        let versions = self.versions.get(range).unwrap_or(&[]);
        for v in versions {
            for (l, _) in v.lists.iter() {
                let ids = encoded_span(&self.list_spans, &self.list_manifest_runs, *l);
                for id in ids {
                    if mark(id, v.branch) && self.planned.insert((id, v.branch)) {
                        let item = items
                            .entry((false, self.manifest_names.get(id)))
                            .or_default();
                        item.insert(v.branch);
                        for &b in later.get(&id).into_iter().flatten() {
                            if mark(id, b) && self.planned.insert((id, b)) {
                                item.insert(b);
                            }
                        }
                    }
                }
            }
            if let Some(im) = v.index_manifest {
                if self.planned_index.insert((im, v.branch)) {
                    let item = items
                        .entry((true, self.manifest_names.get(im)))
                        .or_default();
                    item.insert(v.branch);
                    for &b in later_index.get(&im).into_iter().flatten() {
                        if self.planned_index.insert((im, b)) {
                            item.insert(b);
                        }
                    }
                }
            }
        }
        items
            .into_iter()
            .map(|((index, name), branches)| ReadItem {
                name: name.to_string(),
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
        let root = storage.root().clone();
        // Manifests first, then index manifests (a version dropped for a manifest does not
        // need its index manifest any more).
        let mut ordered: Vec<&ReadFailure> = failures.iter().collect();
        ordered.sort_by_key(|f| (f.index, f.name.clone()));
        for f in ordered {
            let loc = main.paths().manifest(&f.name)?;
            let err = f.error();
            let id = self.manifest_names.find(&f.name);
            let needed: Vec<usize> = if f.index {
                // A long-lived changelog does not need its index manifest (no changelog reader
                // reads deletion vectors or indexes of it): absent, it names nothing for it.
                let absent = err.is_not_found();
                (0..self.versions.len())
                    .filter(|i| !dropped.contains(i))
                    .filter(|i| {
                        let v = &self.versions[*i];
                        id.is_some() && v.index_manifest == id && !(absent && v.changelog())
                    })
                    .collect()
            } else {
                (0..self.versions.len())
                    .filter(|i| !dropped.contains(i))
                    .filter(|i| {
                        self.versions[*i].lists.iter().any(|(l, required)| {
                            *required && id.is_some_and(|id| self.manifests_of(*l).any(|m| m == id))
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
            let mut users = Vec::with_capacity(needed.len());
            for i in &needed {
                if let Some(v) = self.versions.get(*i) {
                    users.push(self.describe(&root, v)?);
                }
            }
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
    needed_by: &[(String, Location)],
) -> Result<bool> {
    if !err.is_not_found() {
        let by = needed_by
            .first()
            .map_or("a version", |(label, _)| label.as_str());
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
    for (label, file) in needed_by {
        if storage.exists(file).await? {
            return Err(Error::NotFound {
                path: format!(
                    "{loc} ({what} needed by {label}, which still exists); nothing deleted"
                ),
            });
        }
    }
    for (label, _) in needed_by {
        tracing::info!(version = %label, missing = %loc, "version expired while being read; skipped");
    }
    Ok(true)
}

/// For each manifest list the `new` versions name, the versions that need it (a list a
/// version names but does not require has no entry of that version).
fn lists_needed(new: &[VersionInfo]) -> BTreeMap<u32, Vec<usize>> {
    let mut need: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, v) in new.iter().enumerate() {
        for (l, required) in v.lists.iter() {
            let users = need.entry(*l).or_default();
            if *required {
                users.push(i);
            }
        }
    }
    need
}

/// Marks a run in [`encode_ids`]: the first id of the run (with this bit set), then its length.
const RUN: u32 = 1 << 31;

/// Appends `ids` to `out`, each run of at least 3 consecutive ids as two words (its first id
/// with [`RUN`] set, then its length): never longer than the ids themselves. `None` (nothing
/// appended) if an id has the [`RUN`] bit.
fn encode_ids(ids: &[u32], out: &mut Vec<u32>) -> Option<()> {
    if ids.iter().any(|id| id & RUN != 0) {
        return None;
    }
    let mut i = 0;
    while i < ids.len() {
        let mut j = i + 1;
        while j < ids.len() && ids[j - 1].checked_add(1) == Some(ids[j]) {
            j += 1;
        }
        if j - i >= 3 {
            out.push(ids[i] | RUN);
            out.push((j - i) as u32);
        } else {
            out.extend_from_slice(&ids[i..j]);
        }
        i = j;
    }
    Some(())
}

/// The ids of list `list` as [`encode_ids`] wrote them into `runs` at `spans[list]`.
fn encoded_span<'a>(spans: &[Option<(u32, u32)>], runs: &'a [u32], list: u32) -> ManifestIds<'a> {
    let words = match spans.get(list as usize) {
        Some(Some((start, end))) => runs.get(*start as usize..*end as usize).unwrap_or(&[]),
        _ => &[],
    };
    ManifestIds { words, run: None }
}

/// The ids of one list, decoded from [`encode_ids`]'s words.
#[derive(Debug, Clone)]
struct ManifestIds<'a> {
    words: &'a [u32],
    /// The next id of the current run and how many are left.
    run: Option<(u32, u32)>,
}

impl Iterator for ManifestIds<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if let Some((next, left)) = self.run {
            self.run = (left > 1).then(|| (next.wrapping_add(1), left - 1));
            return Some(next);
        }
        let (&w, rest) = self.words.split_first()?;
        if w & RUN == 0 {
            self.words = rest;
            return Some(w);
        }
        let (&len, rest) = rest.split_first()?;
        self.words = rest;
        let first = w & !RUN;
        if len > 1 {
            self.run = Some((first + 1, len - 1));
        }
        Some(first)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn manifest_ids_round_trip_and_runs_take_two_words() {
        let cases: Vec<Vec<u32>> = vec![
            vec![],
            vec![7],
            vec![1, 2],
            vec![1, 2, 3],
            vec![5, 4, 3, 2],
            vec![0, 1, 2, 3, 9, 10, 42, 43, 44, 45, 46, 1, 1, 1],
            vec![u32::MAX >> 1, 3, 4, 5],
            (0..10_000)
                .chain(20_000..20_001)
                .chain(10_000..10_500)
                .collect(),
        ];
        for ids in &cases {
            let mut words = Vec::new();
            super::encode_ids(ids, &mut words).unwrap();
            assert!(words.len() <= ids.len(), "{ids:?}: {words:?}");
            let spans = vec![None, Some((0, words.len() as u32))];
            let back: Vec<u32> = super::encoded_span(&spans, &words, 1).collect();
            assert_eq!(&back, ids);
            assert_eq!(super::encoded_span(&spans, &words, 0).count(), 0);
        }
        // A list naming every earlier manifest (never merged): a run, not the ids.
        let mut words = Vec::new();
        let every: Vec<u32> = (0..12_000).collect();
        super::encode_ids(&every, &mut words).unwrap();
        assert_eq!(words.len(), 2);
        assert!(super::encode_ids(&[1 << 31], &mut words).is_none());
    }

    use super::*;

    /// A version for [`tracker_with`]: its branch, its lists (each a list of manifest
    /// numbers) and its index manifest number.
    type TestVersion = (u32, Vec<Vec<u32>>, Option<u32>);

    /// A tracker with `branches` branches and `versions`, every list read.
    fn tracker_with(branches: u32, versions: &[TestVersion]) -> Tracker {
        let mut t = Tracker::default();
        for b in 0..branches {
            t.branches.push(BranchRef {
                name: format!("b{b}"),
                own_schema: true,
            });
        }
        for (i, (branch, lists, index)) in versions.iter().enumerate() {
            let mut ids = Vec::new();
            for (j, manifests) in lists.iter().enumerate() {
                let id = t.list_names.intern(&format!("list-{i}-{j}")).unwrap();
                let ms: Vec<u32> = manifests
                    .iter()
                    .map(|m| {
                        t.manifest_names
                            .intern(&format!("manifest-{m:03}"))
                            .unwrap()
                    })
                    .collect();
                t.set_list(id, &ms).unwrap();
                ids.push((id, true));
            }
            let index_manifest =
                index.map(|n| t.manifest_names.intern(&format!("index-{n:03}")).unwrap());
            t.versions.push(VersionInfo {
                branch: *branch,
                version: Version::Snapshot(i as i64),
                lists: ids.into_boxed_slice(),
                index_manifest,
                statistics: None,
                records: true,
            });
        }
        t
    }

    /// Every (name, index, branch) a plan reads, with how many items name it.
    fn reads(items: &[ReadItem]) -> BTreeMap<(String, bool), Vec<u32>> {
        let mut out: BTreeMap<(String, bool), Vec<u32>> = BTreeMap::new();
        for i in items {
            out.entry((i.name.clone(), i.index))
                .or_default()
                .extend(i.branches.iter().copied());
        }
        out
    }

    #[test]
    fn planning_in_steps_reads_each_manifest_once_for_the_same_branches() {
        // Branch 1's versions (placed first, as the stepped planner reads their lists first)
        // share manifests and index manifests with branch 0's, some only its own.
        let mut versions = vec![
            (1, vec![vec![3, 4, 90]], Some(1)),
            (1, vec![vec![40, 91], vec![92]], Some(7)),
            (2, vec![vec![4, 41, 93]], Some(9)),
        ];
        for v in 0..40u32 {
            versions.push((0, vec![vec![v, v + 1, v / 3], vec![v + 2]], Some(v / 5)));
        }
        let mut one = tracker_with(3, &versions);
        // One step over the same versions, in the order a one-step plan holds them.
        let all = one.plan_reads(0);
        let mut stepped = tracker_with(3, &versions);
        let others = 0..3;
        let mut items = Vec::new();
        for from in (3..versions.len()).step_by(7) {
            let end = (from + 7).min(versions.len());
            items.extend(stepped.plan_reads_in(from..end, Some(others.clone())));
        }
        items.extend(stepped.plan_reads_in(others, None));
        let (a, b) = (reads(&all), reads(&items));
        assert_eq!(a, b);
        // Each manifest in exactly one item, every branch once.
        assert_eq!(items.len(), all.len());
        for branches in b.values() {
            let mut d = branches.clone();
            d.dedup();
            assert_eq!(&d, branches);
        }
        assert_eq!(one.planned, stepped.planned);
        assert_eq!(one.planned_index, stepped.planned_index);
        // Shared with branch 1 and planned in a step of branch 0: one item, both branches.
        assert_eq!(b[&("manifest-004".to_string(), false)], vec![0, 1, 2]);
        assert_eq!(b[&("index-001".to_string(), true)], vec![0, 1]);
        assert_eq!(b[&("manifest-090".to_string(), false)], vec![1]);
    }

    #[test]
    fn names_are_interned_once_and_found_exactly() {
        let mut names = Names::default();
        let all: Vec<String> = (0..500).map(|i| format!("manifest-{i:04x}-0")).collect();
        let ids: Vec<u32> = all.iter().map(|n| names.intern(n).unwrap()).collect();
        for (n, id) in all.iter().zip(&ids) {
            assert_eq!(names.intern(n).unwrap(), *id);
            assert_eq!(names.find(n), Some(*id));
            assert_eq!(names.get(*id), n);
        }
        assert_eq!(names.len(), all.len());
        assert_eq!(names.find("manifest-absent"), None);
        // Through serialization: the lookup is rebuilt.
        let json = serde_json::to_string(&names).unwrap();
        let mut back: Names = serde_json::from_str(&json).unwrap();
        back.rebuild();
        for (n, id) in all.iter().zip(&ids) {
            assert_eq!(back.find(n), Some(*id));
        }
    }

    #[test]
    fn names_whose_keys_clash_keep_their_own_ids() {
        let mut names = Names::default();
        let a = names.intern("a").unwrap();
        // As if "b" had the key of "a": the key's slot is taken by another name.
        names.by_key.insert(name_key("b"), a);
        assert_eq!(names.find("b"), None);
        let b = names.intern("b").unwrap();
        assert_ne!(a, b);
        assert_eq!(names.find("a"), Some(a));
        assert_eq!(names.find("b"), Some(b));
        assert_eq!(names.intern("b").unwrap(), b);
        assert_eq!(names.get(b), "b");
    }
}
