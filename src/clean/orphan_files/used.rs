//! Phase 2 of orphan cleanup (spec §5.6 step 5): the files that any snapshot, tag or long-lived
//! changelog of any branch references, kept only where they are candidates, so memory follows
//! the candidate set and not the table.
//!
//! * Every branch is read (P2); manifests, index files and statistics are shared, so every
//!   branch's references resolve under the table root. A branch directory without any schema
//!   (pypaimon can leave one) is read with the main branch's schema and options and reported.
//! * Every manifest entry counts, ADD or DELETE, with its extra files; every manifest list,
//!   manifest, index manifest (and every index file it names) and statistics file a version
//!   names counts.
//! * References are compared by resolved location, each branch resolving with its own path
//!   factory; the names are recorded as well so that the caller can keep a candidate whose name
//!   is referenced at another location (a disagreement between our path resolution and the
//!   writer's must never delete a file).
//! * Each manifest list, manifest and index manifest is read once, with bounded concurrency.
//! * A version that disappears between listing and reading is skipped (it was expired). Metadata
//!   that a version still present needs but that cannot be read (missing included, P3) is an
//!   error: nothing may be deleted then.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use futures::stream::{self, StreamExt};

use crate::error::{Error, Result};
use crate::spec::manifest::{IndexManifestEntry, ManifestEntry};
use crate::spec::snapshot::Snapshot;
use crate::storage::Location;
use crate::table::{list_branches, PathFactory, Table, VersionedDir, MAIN_BRANCH};

/// Identity of a version, so each is read once even when the table is listed again.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum VersionKey {
    Snapshot(String, i64),
    Tag(String, String),
    Changelog(String, i64),
}

/// A version that references files.
#[derive(Debug, Clone)]
struct Version {
    /// For logs and errors, e.g. "snapshot 5 of branch main".
    label: String,
    /// The version's own file (to tell "expired meanwhile" from "metadata missing").
    file: Location,
    snapshot: Snapshot,
    /// Index into `Collector::branches`.
    branch: usize,
    /// A long-lived changelog (`changelog/changelog-<id>`).
    changelog: bool,
}

impl Version {
    /// Whether this version needs manifest list `list`. A long-lived changelog with a
    /// changelog manifest list needs only that one (what an incremental reader of it uses,
    /// as the expiry protectors say); its base and delta lists are deleted when its snapshot
    /// expires (decoupled lifecycle, as in Java), so they are read when present, never
    /// required.
    fn requires_list(&self, list: &str) -> bool {
        match (&self.snapshot.changelog_manifest_list, self.changelog) {
            (Some(c), true) => c == list,
            _ => true,
        }
    }
}

/// One branch as read: its table (its own schema and path factory, or main's when it has none).
struct Branch {
    name: String,
    table: Table,
}

/// What phase 2 found.
#[derive(Debug, Default)]
pub(crate) struct UsedFiles {
    /// Referenced locations that are candidates.
    pub locations: HashSet<Location>,
    /// Referenced names that are names of candidates.
    pub names: HashSet<String>,
    /// Snapshots, tags and changelogs read (all branches).
    pub versions_read: u64,
    /// Manifests read.
    pub manifests_read: u64,
    /// Entries whose location could not be computed (protected by name only).
    pub unresolved: u64,
    /// Branch directories without a schema.
    pub branches_without_schema: Vec<String>,
}

/// Reads references for one run.
pub(crate) struct Collector<'a> {
    main: &'a Table,
    candidate_names: &'a HashSet<String>,
    candidate_locations: &'a HashSet<Location>,
    concurrency: usize,
    branches: Vec<Branch>,
    seen: HashSet<VersionKey>,
    /// Manifest names, interned: a list holds ids, so memory grows with the distinct manifests
    /// and one integer per list entry, not one string per list entry.
    manifest_names: Vec<String>,
    manifest_ids: HashMap<String, usize>,
    /// Manifest list name → manifest ids.
    lists: HashMap<String, Arc<Vec<usize>>>,
    /// Manifest id → its entries that name a candidate.
    manifests: HashMap<usize, Arc<Vec<ManifestEntry>>>,
    /// Index manifest name → its entries that name a candidate.
    index_manifests: HashMap<String, Arc<Vec<IndexManifestEntry>>>,
    /// (manifest id, branch) pairs already resolved.
    resolved: HashSet<(usize, usize)>,
    /// (index manifest, branch) pairs already resolved.
    resolved_index: HashSet<(String, usize)>,
    /// Snapshot files seen in listings (any branch).
    snapshots_listed: u64,
    /// Manifest entries decoded.
    entries_seen: u64,
    /// Some version read claims live records.
    records_claimed: bool,
    used: UsedFiles,
}

/// A manifest read: its entry count and the entries that name a candidate.
type Hits = (usize, Vec<ManifestEntry>);

/// How many times the table is listed again for versions that appeared meanwhile.
const MAX_ROUNDS: usize = 10;

impl<'a> Collector<'a> {
    /// A collector for the table whose main branch is `main`.
    pub fn new(
        main: &'a Table,
        candidate_names: &'a HashSet<String>,
        candidate_locations: &'a HashSet<Location>,
        concurrency: usize,
    ) -> Self {
        Collector {
            main,
            candidate_names,
            candidate_locations,
            concurrency: concurrency.max(1),
            branches: Vec::new(),
            seen: HashSet::new(),
            manifest_names: Vec::new(),
            manifest_ids: HashMap::new(),
            lists: HashMap::new(),
            manifests: HashMap::new(),
            index_manifests: HashMap::new(),
            resolved: HashSet::new(),
            resolved_index: HashSet::new(),
            snapshots_listed: 0,
            entries_seen: 0,
            records_claimed: false,
            used: UsedFiles::default(),
        }
    }

    /// Reads every version of every branch, then lists the table again until no new version
    /// appears, and checks that the result is plausible. `check` runs between rounds (the
    /// caller's cancellation).
    pub async fn collect(mut self, check: impl Fn() -> Result<()>) -> Result<UsedFiles> {
        let mut rounds = 0;
        loop {
            check()?;
            let new = self.discover().await?;
            if new.is_empty() {
                break;
            }
            if rounds == MAX_ROUNDS {
                return Err(Error::Conflict(format!(
                    "new snapshots, tags or changelogs kept appearing over {MAX_ROUNDS} listings; nothing deleted"
                )));
            }
            rounds += 1;
            tracing::debug!(versions = new.len(), round = rounds, "reading references");
            self.process(new).await?;
        }
        if self.snapshots_listed > 0 && self.used.versions_read == 0 {
            return Err(Error::Conflict(
                "snapshot files exist but none could be read; nothing deleted".into(),
            ));
        }
        if self.records_claimed && self.entries_seen == 0 {
            return Err(Error::Conflict(
                "snapshots claim records but no manifest entry was read; nothing deleted".into(),
            ));
        }
        Ok(self.used)
    }

    /// The index of branch `name`, opening it on first use.
    async fn branch_index(&mut self, name: &str) -> Result<usize> {
        if let Some(i) = self.branches.iter().position(|b| b.name == name) {
            return Ok(i);
        }
        let table = if name == MAIN_BRANCH {
            self.main.clone()
        } else {
            match self.main.branch(name).await {
                Ok(t) => t,
                Err(Error::NotFound { .. }) => {
                    tracing::warn!(branch = %name, "branch directory has no schema; its snapshots, tags and changelogs are read with the main branch's schema");
                    self.used.branches_without_schema.push(name.to_string());
                    self.main.with_branch_root_of(name)
                }
                Err(e) => return Err(e),
            }
        };
        self.branches.push(Branch {
            name: name.to_string(),
            table,
        });
        Ok(self.branches.len() - 1)
    }

    /// Every version not read yet, over all branches. Versions that vanish while being read
    /// are skipped.
    async fn discover(&mut self) -> Result<Vec<Version>> {
        let storage = self.main.storage().clone();
        let mut out = Vec::new();
        for name in list_branches(&storage).await? {
            let b = self.branch_index(&name).await?;
            let broot = self.branches[b].table.branch_root().clone();
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
                let read: Vec<(i64, Result<Option<Snapshot>>)> = stream::iter(todo)
                    .map(|id| {
                        let dir = &dir;
                        let storage = &storage;
                        async move { (id, dir.try_read(storage, id).await) }
                    })
                    .buffer_unordered(self.concurrency)
                    .collect()
                    .await;
                for (id, r) in read {
                    self.seen.insert(key(id));
                    let what = if snapshots { "snapshot" } else { "changelog" };
                    match r? {
                        Some(snapshot) => out.push(Version {
                            label: format!("{what} {id} of branch {name}"),
                            file: dir.location(id),
                            snapshot,
                            branch: b,
                            changelog: !snapshots,
                        }),
                        None => {
                            tracing::info!(branch = %name, id, "{what} vanished while listed (expired); skipped")
                        }
                    }
                }
            }
            let tag_dir = broot.join("tag");
            let tag_files: Vec<(String, Location)> = storage
                .list_dir(&tag_dir)
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
            let read: Vec<(String, Location, Result<bytes::Bytes>)> = stream::iter(tag_files)
                .map(|(tag, loc)| {
                    let storage = &storage;
                    async move {
                        let r = storage.get(&loc).await;
                        (tag, loc, r)
                    }
                })
                .buffer_unordered(self.concurrency)
                .collect()
                .await;
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
                out.push(Version {
                    label: format!("tag {tag} of branch {name}"),
                    file: loc,
                    snapshot,
                    branch: b,
                    changelog: false,
                });
            }
        }
        Ok(out)
    }

    /// The id of manifest `name`, interned.
    fn manifest_id(&mut self, name: String) -> usize {
        if let Some(id) = self.manifest_ids.get(&name) {
            return *id;
        }
        let id = self.manifest_names.len();
        self.manifest_ids.insert(name.clone(), id);
        self.manifest_names.push(name);
        id
    }

    /// Reads the references of `versions`.
    async fn process(&mut self, versions: Vec<Version>) -> Result<()> {
        let main = self.main;
        let paths = main.paths();
        let mut dropped: HashSet<usize> = HashSet::new();

        // 1. Manifest lists.
        let mut need: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, v) in versions.iter().enumerate() {
            for l in v.snapshot.manifest_lists() {
                let users = need.entry(l.to_string()).or_default();
                if v.requires_list(l) {
                    users.push(i);
                }
            }
        }
        let todo: Vec<String> = need
            .keys()
            .filter(|l| !self.lists.contains_key(*l))
            .cloned()
            .collect();
        let read: Vec<(String, Result<Vec<String>>)> = stream::iter(todo)
            .map(|l| async move {
                let r = main
                    .reader()
                    .manifest_list(main.paths(), &l)
                    .await
                    .map(|v| v.into_iter().map(|m| m.file_name).collect());
                (l, r)
            })
            .buffer_unordered(self.concurrency)
            .collect()
            .await;
        for (l, r) in read {
            match r {
                Ok(names) => {
                    let ids = names.into_iter().map(|n| self.manifest_id(n)).collect();
                    self.lists.insert(l, Arc::new(ids));
                }
                Err(e) => {
                    let loc = paths.manifest(&l)?;
                    let needed_by = need.get(&l).map(Vec::as_slice).unwrap_or(&[]);
                    self.fail_or_drop(e, "manifest list", &loc, needed_by, &versions, &mut dropped)
                        .await?
                }
            }
        }

        // 2. Manifests, each read once, keeping only the entries that name a candidate.
        let mut needed: BTreeSet<usize> = BTreeSet::new();
        for (i, v) in versions.iter().enumerate() {
            if dropped.contains(&i) {
                continue;
            }
            for l in v.snapshot.manifest_lists() {
                if let Some(ids) = self.lists.get(l) {
                    needed.extend(ids.iter().filter(|id| !self.manifests.contains_key(*id)));
                }
            }
        }
        let todo: Vec<(usize, String)> = needed
            .into_iter()
            .filter_map(|id| Some((id, self.manifest_names.get(id)?.clone())))
            .collect();
        let names = self.candidate_names;
        let read: Vec<(usize, String, Result<Hits>)> = stream::iter(todo)
            .map(|(id, m)| async move {
                let r = main.reader().manifest(main.paths(), &m).await.map(|all| {
                    let n = all.len();
                    let hits = all
                        .into_iter()
                        .filter(|e| {
                            names.contains(&e.file.file_name)
                                || e.file.extra_files.iter().any(|x| names.contains(x))
                        })
                        .collect();
                    (n, hits)
                });
                (id, m, r)
            })
            .buffer_unordered(self.concurrency)
            .collect()
            .await;
        for (id, m, r) in read {
            match r {
                Ok((n, hits)) => {
                    self.entries_seen += n as u64;
                    self.used.manifests_read += 1;
                    self.manifests.insert(id, Arc::new(hits));
                }
                Err(e) => {
                    let loc = paths.manifest(&m)?;
                    let needed_by: Vec<usize> = (0..versions.len())
                        .filter(|i| !dropped.contains(i))
                        .filter(|i| {
                            let v = &versions[*i];
                            v.snapshot.manifest_lists().any(|l| {
                                v.requires_list(l)
                                    && self.lists.get(l).is_some_and(|ids| ids.contains(&id))
                            })
                        })
                        .collect();
                    self.fail_or_drop(e, "manifest", &loc, &needed_by, &versions, &mut dropped)
                        .await?
                }
            }
        }

        // 3. Index manifests.
        let mut index_users: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, v) in versions.iter().enumerate() {
            if let (false, Some(im)) = (dropped.contains(&i), &v.snapshot.index_manifest) {
                index_users.entry(im.clone()).or_default().push(i);
            }
        }
        let todo: Vec<String> = index_users
            .keys()
            .filter(|m| !self.index_manifests.contains_key(*m))
            .cloned()
            .collect();
        let read: Vec<(String, Result<Vec<IndexManifestEntry>>)> = stream::iter(todo)
            .map(|m| async move {
                let r = main
                    .reader()
                    .index_manifest(main.paths(), &m)
                    .await
                    .map(|all| {
                        all.into_iter()
                            .filter(|e| names.contains(&e.file_name))
                            .collect()
                    });
                (m, r)
            })
            .buffer_unordered(self.concurrency)
            .collect()
            .await;
        for (m, r) in read {
            match r {
                Ok(hits) => {
                    self.index_manifests.insert(m, Arc::new(hits));
                }
                Err(e) => {
                    let loc = paths.manifest(&m)?;
                    let needed_by = index_users.get(&m).map(Vec::as_slice).unwrap_or(&[]);
                    self.fail_or_drop(
                        e,
                        "index manifest",
                        &loc,
                        needed_by,
                        &versions,
                        &mut dropped,
                    )
                    .await?
                }
            }
        }

        // 4. Record every reference of the versions still standing.
        for (i, v) in versions.iter().enumerate() {
            if dropped.contains(&i) {
                continue;
            }
            self.used.versions_read += 1;
            if v.snapshot.total_record_count.unwrap_or(0) > 0 {
                self.records_claimed = true;
            }
            let b = v.branch;
            for l in v.snapshot.manifest_lists() {
                self.note_metadata(l, |p, n| p.manifest(n));
                let ids = self.lists.get(l).cloned().unwrap_or_default();
                for &id in ids.iter() {
                    if !self.resolved.insert((id, b)) {
                        continue;
                    }
                    if let Some(m) = self.manifest_names.get(id).cloned() {
                        self.note_metadata(&m, |p, n| p.manifest(n));
                    }
                    let hits = self.manifests.get(&id).cloned().unwrap_or_default();
                    for e in hits.iter() {
                        self.note_entry(b, e);
                    }
                }
            }
            if let Some(im) = &v.snapshot.index_manifest {
                self.note_metadata(im, |p, n| p.manifest(n));
                if self.resolved_index.insert((im.clone(), b)) {
                    let hits = self.index_manifests.get(im).cloned().unwrap_or_default();
                    for e in hits.iter() {
                        self.note_index(b, e);
                    }
                }
            }
            if let Some(st) = &v.snapshot.statistics {
                self.note_metadata(st, |p, n| p.statistics(n));
            }
        }
        Ok(())
    }

    /// A metadata file `name` could not be read. If it is missing and every version that needs
    /// it has vanished too (expired concurrently), those versions are dropped; otherwise the
    /// run fails, naming the file and a version that still needs it.
    async fn fail_or_drop(
        &self,
        err: Error,
        what: &str,
        loc: &Location,
        needed_by: &[usize],
        versions: &[Version],
        dropped: &mut HashSet<usize>,
    ) -> Result<()> {
        if !err.is_not_found() {
            let by = needed_by
                .first()
                .and_then(|i| versions.get(*i))
                .map_or("a version", |v| v.label.as_str());
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
        let storage = self.main.storage();
        for v in needed_by.iter().filter_map(|i| versions.get(*i)) {
            if storage.exists(&v.file).await? {
                return Err(Error::NotFound {
                    path: format!(
                        "{loc} ({what} needed by {}, which still exists); nothing deleted",
                        v.label
                    ),
                });
            }
        }
        for &i in needed_by {
            if let Some(v) = versions.get(i) {
                tracing::info!(version = %v.label, missing = %loc, "version expired while being read; skipped");
            }
            dropped.insert(i);
        }
        Ok(())
    }

    /// Records a referenced metadata file (manifest list, manifest, index manifest, statistics).
    fn note_metadata(&mut self, name: &str, at: impl Fn(&PathFactory, &str) -> Result<Location>) {
        if !self.candidate_names.contains(name) {
            return;
        }
        self.used.names.insert(name.to_string());
        match at(self.main.paths(), name) {
            Ok(loc) => self.note_location(loc),
            Err(e) => {
                self.used.unresolved += 1;
                tracing::warn!(name, error = %e, "cannot resolve a referenced metadata file; kept by name");
            }
        }
    }

    /// Records a manifest entry's data file and extra files, resolved for branch `b`.
    fn note_entry(&mut self, b: usize, e: &ManifestEntry) {
        for n in std::iter::once(&e.file.file_name).chain(e.file.extra_files.iter()) {
            if self.candidate_names.contains(n) {
                self.used.names.insert(n.clone());
            }
        }
        let paths = self.branches[b].table.paths();
        match paths.data_file_with_extras(&e.partition, e.bucket, &e.file) {
            Ok(locs) => {
                for l in locs {
                    self.note_location(l);
                }
            }
            Err(err) => {
                self.used.unresolved += 1;
                tracing::warn!(file = %e.file.file_name, error = %err, "cannot resolve a referenced data file; kept by name");
            }
        }
    }

    /// Records an index file, resolved for branch `b`.
    fn note_index(&mut self, b: usize, e: &IndexManifestEntry) {
        if self.candidate_names.contains(&e.file_name) {
            self.used.names.insert(e.file_name.clone());
        }
        match self.branches[b].table.paths().index_file(e) {
            Ok(l) => self.note_location(l),
            Err(err) => {
                self.used.unresolved += 1;
                tracing::warn!(file = %e.file_name, error = %err, "cannot resolve a referenced index file; kept by name");
            }
        }
    }

    fn note_location(&mut self, loc: Location) {
        if self.candidate_locations.contains(&loc) {
            self.used.locations.insert(loc);
        }
    }
}
