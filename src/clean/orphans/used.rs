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
//! * Each manifest list, manifest and index manifest is read once, with bounded concurrency,
//!   and decoded on a blocking thread; a manifest's entries are turned into compact [`Hits`]
//!   (candidate ids grouped by directory) right there and dropped, so memory follows the
//!   candidates, not the entries. Each group's directory is resolved once per branch.
//! * What is referenced is recorded as two flags per candidate (location referenced, name
//!   referenced), not as sets of strings.
//! * A version that disappears between listing and reading is skipped (it was expired). Metadata
//!   that a version still present needs but that cannot be read (missing included, P3) is an
//!   error: nothing may be deleted then.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use futures::stream::{self, StreamExt};

use super::hits::{self, DirRef, Hits};
use super::interned::CandidateTable;
use crate::clean::control::RunControl;
use crate::error::{Error, Result};
use crate::spec::manifest;
use crate::spec::snapshot::Snapshot;
use crate::storage::{Location, Storage};
use crate::table::{list_branches, ManifestFiles, Table, VersionedDir, MAIN_BRANCH};

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
    /// Directories resolved with this branch's path factory: the candidate directory id
    /// (`None`: not a candidate directory), or `Err` when it cannot be computed.
    dirs: HashMap<DirRef, std::result::Result<Option<u32>, ()>>,
    /// Manifest lists whose manifests are all resolved for this branch.
    lists_done: HashSet<String>,
}

/// What phase 2 found.
#[derive(Debug, Default)]
pub(crate) struct UsedFiles {
    /// Per candidate id: its location is referenced.
    pub location: Vec<bool>,
    /// Per candidate id: its name is referenced (at any location).
    pub name: Vec<bool>,
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
    table: Arc<CandidateTable>,
    concurrency: usize,
    branches: Vec<Branch>,
    seen: HashSet<VersionKey>,
    /// Manifest names, interned: a list holds ids, so memory grows with the distinct manifests
    /// and one integer per list entry, not one string per list entry.
    manifest_names: Vec<String>,
    manifest_ids: HashMap<String, usize>,
    /// Manifest list name → manifest ids.
    lists: HashMap<String, Arc<Vec<usize>>>,
    /// Manifest id → its references to candidates.
    manifests: HashMap<usize, Arc<Hits>>,
    /// Index manifest name → its references to candidates.
    index_manifests: HashMap<String, Arc<Hits>>,
    /// (manifest id, branch) pairs already resolved.
    resolved: HashSet<(usize, usize)>,
    /// (index manifest, branch) pairs already resolved.
    resolved_index: HashSet<(String, usize)>,
    /// Candidate directory of manifests, manifest lists and index manifests, and of
    /// statistics files (`None`: no candidate there).
    manifest_dir: Option<u32>,
    statistics_dir: Option<u32>,
    /// Snapshot files seen in listings (any branch).
    snapshots_listed: u64,
    /// Manifest entries decoded.
    entries_seen: u64,
    /// Some version read claims live records.
    records_claimed: bool,
    used: UsedFiles,
}

/// How many times the table is listed again for versions that appeared meanwhile.
const MAX_ROUNDS: usize = 10;

/// The progress phase of reading references.
const REFERENCES_PHASE: &str = "read references";

/// Progress is reported every this many manifests read.
const PROGRESS_EVERY: u64 = 64;

/// Reads `loc` and decodes it with `decode` in the same blocking section (decoding is CPU work;
/// the async workers keep issuing reads meanwhile).
async fn read_decoded<T: Send + 'static>(
    storage: &Storage,
    loc: Location,
    decode: impl FnOnce(&[u8], &Location) -> Result<T> + Send + 'static,
) -> Result<T> {
    let at = loc.clone();
    storage
        .get_then(&loc, move |bytes| decode(&bytes, &at))
        .await
}

impl<'a> Collector<'a> {
    /// A collector for the table whose main branch is `main`, keeping references to the
    /// candidates of `table`.
    pub fn new(main: &'a Table, table: Arc<CandidateTable>, concurrency: usize) -> Self {
        let dir_of = |l: Result<Location>| {
            l.ok()
                .and_then(|l| l.parent())
                .and_then(|d| table.dir_id(&d))
        };
        let manifest_dir = dir_of(main.paths().manifest("probe"));
        let statistics_dir = dir_of(main.paths().statistics("probe"));
        let n = table.len();
        Collector {
            main,
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
            manifest_dir,
            statistics_dir,
            snapshots_listed: 0,
            entries_seen: 0,
            records_claimed: false,
            used: UsedFiles {
                location: vec![false; n],
                name: vec![false; n],
                ..Default::default()
            },
            table,
        }
    }

    /// Reads every version of every branch, then lists the table again until no new version
    /// appears, and checks that the result is plausible. The run's cancellation is checked
    /// between rounds and steps, per manifest read and per version recorded; progress is
    /// reported as phase "read references" (manifests read of manifests to read).
    pub async fn collect(mut self, ctl: &RunControl) -> Result<UsedFiles> {
        let check = || ctl.cancel.check();
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
            self.process(new, ctl).await?;
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
            dirs: HashMap::new(),
            lists_done: HashSet::new(),
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

    /// Reads the references of `versions`. `check` (the caller's cancellation) runs between
    /// steps, per manifest read and per version recorded: everything here only reads, so
    /// stopping anywhere is safe.
    async fn process(&mut self, versions: Vec<Version>, ctl: &RunControl) -> Result<()> {
        let check = || ctl.cancel.check();
        let main = self.main;
        let paths = main.paths();
        let storage = main.storage();
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
                let r = match paths.manifest(&l) {
                    Ok(loc) => {
                        read_decoded(storage, loc, |b, p| {
                            let list = manifest::decode_manifest_list(b, p.as_str())?;
                            Ok(list.into_iter().map(|m| m.file_name).collect())
                        })
                        .await
                    }
                    Err(e) => Err(e),
                };
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

        // 2. Manifests, each read once, kept as their references to candidates.
        check()?;
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
        // Index manifests are read alongside the manifests: every version's, including those
        // of versions a failed list dropped (reading more is harmless; a failure counts only
        // for the versions that remain, judged after the manifests).
        let mut index_users: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, v) in versions.iter().enumerate() {
            if let Some(im) = &v.snapshot.index_manifest {
                index_users.entry(im.clone()).or_default().push(i);
            }
        }
        let todo_index: Vec<String> = index_users
            .keys()
            .filter(|m| !self.index_manifests.contains_key(*m))
            .cloned()
            .collect();
        let index_table = Arc::clone(&self.table);
        let index_read = stream::iter(todo_index)
            .map(|m| {
                let table = Arc::clone(&index_table);
                async move {
                    let r = match paths.manifest(&m) {
                        Ok(loc) => {
                            read_decoded(storage, loc, move |b, p| {
                                let all = manifest::decode_index_manifest(b, p.as_str())?;
                                Ok(hits::of_index_manifest(&table, &all))
                            })
                            .await
                        }
                        Err(e) => Err(e),
                    };
                    (m, r)
                }
            })
            .buffer_unordered(self.concurrency)
            .collect::<Vec<(String, Result<Hits>)>>();
        let to_read = todo.len() as u64;
        let mut done: u64 = 0;
        ctl.progress(REFERENCES_PHASE, 0, to_read, 0);
        let table = &self.table;
        let mut stream = stream::iter(todo)
            .map(|(id, m)| {
                let table = Arc::clone(table);
                async move {
                    let r = match paths.manifest(&m) {
                        Ok(loc) => {
                            read_decoded(storage, loc, move |b, at| {
                                hits::of_manifest(&table, ManifestFiles::new(b, at))
                            })
                            .await
                        }
                        Err(e) => Err(e),
                    };
                    (id, m, r)
                }
            })
            .buffer_unordered(self.concurrency);
        let manifests_read = async {
            let mut got = Vec::new();
            while let Some(next) = stream.next().await {
                check()?;
                done += 1;
                if done % PROGRESS_EVERY == 0 || done == to_read {
                    ctl.progress(REFERENCES_PHASE, done, to_read, 0);
                }
                got.push(next);
            }
            Ok::<_, Error>(got)
        };
        let (index_read, manifests_read) = futures::join!(index_read, manifests_read);
        drop(stream);
        let mut failed = Vec::new();
        for (id, m, r) in manifests_read? {
            match r {
                Ok((n, hits)) => {
                    self.entries_seen += n as u64;
                    self.used.manifests_read += 1;
                    self.manifests.insert(id, Arc::new(hits));
                }
                Err(e) => failed.push((id, m, e)),
            }
        }
        for (id, m, e) in failed {
            let loc = paths.manifest(&m)?;
            let needed_by: Vec<usize> = (0..versions.len())
                .filter(|i| !dropped.contains(i))
                .filter(|i| {
                    let v = &versions[*i];
                    v.snapshot.manifest_lists().any(|l| {
                        v.requires_list(l) && self.lists.get(l).is_some_and(|ids| ids.contains(&id))
                    })
                })
                .collect();
            self.fail_or_drop(e, "manifest", &loc, &needed_by, &versions, &mut dropped)
                .await?
        }

        // 3. Index manifests (read alongside the manifests, above).
        check()?;
        for (m, r) in index_read {
            match r {
                Ok(hits) => {
                    self.index_manifests.insert(m, Arc::new(hits));
                }
                Err(e) => {
                    let loc = paths.manifest(&m)?;
                    // A long-lived changelog does not need its index manifest (no changelog
                    // reader reads deletion vectors or indexes of it): Java deletes it at
                    // snapshot expiry and its changelog still names it. Absent, it names
                    // nothing for a changelog, as in Java's orphan cleaner.
                    let absent = e.is_not_found();
                    let needed_by: Vec<usize> = index_users
                        .get(&m)
                        .map(Vec::as_slice)
                        .unwrap_or(&[])
                        .iter()
                        .copied()
                        .filter(|i| !dropped.contains(i))
                        .filter(|i| !(absent && versions[*i].changelog))
                        .collect();
                    if needed_by.is_empty() {
                        // Only versions already dropped use it: as if never read.
                        continue;
                    }
                    self.fail_or_drop(
                        e,
                        "index manifest",
                        &loc,
                        &needed_by,
                        &versions,
                        &mut dropped,
                    )
                    .await?
                }
            }
        }

        // 4. Record every reference of the versions still standing.
        for (i, v) in versions.iter().enumerate() {
            check()?;
            if dropped.contains(&i) {
                continue;
            }
            self.used.versions_read += 1;
            if v.snapshot.total_record_count.unwrap_or(0) > 0 {
                self.records_claimed = true;
            }
            let b = v.branch;
            for l in v.snapshot.manifest_lists() {
                self.note_metadata(l, self.manifest_dir);
                if self.branches[b].lists_done.contains(l) {
                    continue;
                }
                let ids = self.lists.get(l).cloned().unwrap_or_default();
                for &id in ids.iter() {
                    if !self.resolved.insert((id, b)) {
                        continue;
                    }
                    if let Some(m) = self.manifest_names.get(id).cloned() {
                        self.note_metadata(&m, self.manifest_dir);
                    }
                    if let Some(hits) = self.manifests.get(&id).cloned() {
                        self.note_hits(b, &hits);
                    }
                }
                self.branches[b].lists_done.insert(l.to_string());
            }
            if let Some(im) = &v.snapshot.index_manifest {
                self.note_metadata(im, self.manifest_dir);
                if self.resolved_index.insert((im.clone(), b)) {
                    if let Some(hits) = self.index_manifests.get(im).cloned() {
                        self.note_hits(b, &hits);
                    }
                }
            }
            if let Some(st) = &v.snapshot.statistics {
                self.note_metadata(st, self.statistics_dir);
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

    /// Marks every candidate named like candidate `id` as name-referenced.
    fn note_name(&mut self, id: u32) {
        if self.used.name.get(id as usize).copied().unwrap_or(true) {
            return;
        }
        for c in self.table.same_name(id) {
            if let Some(f) = self.used.name.get_mut(c as usize) {
                *f = true;
            }
        }
    }

    /// Marks the candidate named like candidate `id` in directory `dir` as referenced.
    fn note_location(&mut self, id: u32, dir: u32) {
        for c in self.table.same_name(id) {
            if self.table.dir_of(c) == dir {
                if let Some(f) = self.used.location.get_mut(c as usize) {
                    *f = true;
                }
            }
        }
    }

    /// Records a referenced metadata file (manifest list, manifest, index manifest, statistics)
    /// whose candidate directory is `dir`.
    fn note_metadata(&mut self, name: &str, dir: Option<u32>) {
        let Some(id) = self.table.find(name) else {
            return;
        };
        self.note_name(id);
        if let Some(dir) = dir {
            self.note_location(id, dir);
        }
    }

    /// Records the references of one manifest or index manifest, resolved for branch `b`.
    fn note_hits(&mut self, b: usize, hits: &Hits) {
        for &id in &hits.names_only {
            self.note_name(id);
        }
        self.used.unresolved += hits.unresolved;
        for g in &hits.groups {
            for &id in &g.names {
                self.note_name(id);
            }
            let dir = match self.branches[b].dirs.get(&g.dir) {
                Some(d) => *d,
                None => {
                    let d = match g.dir.resolve(self.branches[b].table.paths()) {
                        Ok(dir) => Ok(dir.and_then(|d| self.table.dir_id(&d))),
                        Err(e) => {
                            tracing::warn!(dir = ?g.dir, error = %e, "cannot resolve the directory of referenced files; kept by name");
                            Err(())
                        }
                    };
                    self.branches[b].dirs.insert(g.dir.clone(), d);
                    d
                }
            };
            match dir {
                Ok(Some(dir)) => {
                    for &id in &g.names {
                        self.note_location(id, dir);
                    }
                }
                Ok(None) => {}
                Err(()) => self.used.unresolved += g.names.len() as u64,
            }
        }
    }
}
