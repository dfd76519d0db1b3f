//! Planning shared by every capability that removes versions (snapshot expiry, changelog
//! expiry, tag deletion): which data files the removed versions free, which metadata files
//! nothing else names, and the crash-safe order in which they go.

use std::collections::HashSet;
use std::sync::Arc;

use futures::stream::{self, StreamExt};

use crate::clean::report::FileClass;
use crate::clean::shared::deleter::{Deleter, Planned};
use crate::clean::shared::references::{
    read_index_files_sized, CandidateNames, Protector, ReferenceReader, Slim,
};
use crate::error::{Error, Result};
use crate::hash::{location_key, name_key, FastMap, FastSet};
use crate::spec::manifest::FileKind;
use crate::spec::snapshot::Snapshot;
use crate::storage::Location;
use crate::table::{DataFileLocator, ManifestFiles, PathFactory, Table};

/// A data or changelog file that may become unreferenced, with its extra files.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Data or changelog data.
    pub class: FileClass,
    /// `_FILE_SIZE`.
    pub bytes: u64,
    /// Extra files beside it (`.index`, ...), deleted with it.
    pub extras: Vec<Location>,
    /// [`name_key`] of its location's last segment (protection's pre-filter).
    name_key: u64,
}

impl Candidate {
    /// A candidate whose location's last segment is `name`.
    pub fn new(class: FileClass, bytes: u64, extras: Vec<Location>, name: &str) -> Candidate {
        Candidate {
            class,
            bytes,
            extras,
            name_key: name_key(name),
        }
    }
}

/// Candidates with their locations, gathered in order; a location named twice counts once,
/// as it was first gathered ([`Candidates::into_sorted`]).
#[derive(Debug, Default)]
pub struct Candidates {
    entries: Vec<(Location, Candidate)>,
}

impl Candidates {
    /// Add one (an earlier entry of the same location wins).
    pub fn push(&mut self, location: Location, candidate: Candidate) {
        self.entries.push((location, candidate));
    }

    /// Add all of `later` after these (entries of these win on the same location).
    pub fn append(&mut self, mut later: Candidates) {
        if self.entries.is_empty() {
            self.entries = later.entries;
        } else {
            self.entries.append(&mut later.entries);
        }
    }

    /// Entries gathered so far (a location named twice counts twice).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True if nothing was gathered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries as gathered.
    pub fn iter(&self) -> impl Iterator<Item = &(Location, Candidate)> {
        self.entries.iter()
    }

    /// Sorted by location, each location once (the first gathered).
    pub fn into_sorted(self) -> Vec<(Location, Candidate)> {
        let mut v = self.entries;
        // Stable: of equal locations the first gathered stays first and is kept.
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v.dedup_by(|later, earlier| later.0 == earlier.0);
        v
    }
}

/// One entry of a manifest read for candidates, reduced on the blocking pool.
enum Reduced {
    /// A file the entry deletes (delta lists) or adds (changelog lists): a candidate, with its
    /// [`crate::hash::location_key`].
    Candidate(u64, Location, Candidate),
    /// The location key of a file a delta list adds: cancels a DELETE of the same location
    /// earlier in that list.
    Added(u64),
}

/// Reduce a delta manifest: DELETE entries to candidates (with extras), ADD entries to
/// location keys; with `keep_slim`, also every entry as protection reduces it.
fn reduce_delta(
    paths: &PathFactory,
    entries: ManifestFiles<'_>,
    keep_slim: bool,
) -> Result<(Vec<Reduced>, Option<Vec<Slim>>)> {
    let mut locate = DataFileLocator::new(paths);
    let mut out = Vec::new();
    let mut slim = Vec::new();
    entries.for_each(|e| {
        out.push(match e.kind {
            FileKind::Delete => {
                let (main, extras) =
                    locate.data_file_with_extras(&e.partition, e.bucket, &e.file)?;
                if keep_slim {
                    slim.push(Slim::of(&e, main.clone(), extras.clone()));
                }
                let c = Candidate::new(
                    FileClass::Data,
                    e.file.file_size.max(0) as u64,
                    extras,
                    main.name(),
                );
                Reduced::Candidate(location_key(main.as_str()), main, c)
            }
            FileKind::Add if keep_slim => {
                let (location, extras) =
                    locate.data_file_with_extras(&e.partition, e.bucket, &e.file)?;
                let key = location_key(location.as_str());
                slim.push(Slim::of(&e, location, extras));
                Reduced::Added(key)
            }
            FileKind::Add => {
                Reduced::Added(locate.data_file_key(&e.partition, e.bucket, &e.file)?)
            }
        });
        Ok(())
    })?;
    Ok((out, keep_slim.then_some(slim)))
}

/// Reduce a manifest to the candidates its ADD entries name (extras only for data files).
fn reduce_adds(
    paths: &PathFactory,
    entries: ManifestFiles<'_>,
    class: FileClass,
) -> Result<Vec<(Location, Candidate)>> {
    let mut locate = DataFileLocator::new(paths);
    let mut out = Vec::new();
    entries.for_each(|e| {
        if e.kind != FileKind::Add {
            return Ok(());
        }
        let (main, extras) = locate.data_file_with_extras(&e.partition, e.bucket, &e.file)?;
        let extras = if class == FileClass::Data {
            extras
        } else {
            Vec::new()
        };
        let c = Candidate::new(class, e.file.file_size.max(0) as u64, extras, main.name());
        out.push((main, c));
        Ok(())
    })?;
    Ok(out)
}

/// The manifests of `lists` in list order, each with the index of the list naming it.
pub(crate) fn manifests_by_list(rr: &ReferenceReader, lists: &[String]) -> Vec<(usize, String)> {
    lists
        .iter()
        .enumerate()
        .flat_map(|(i, l)| {
            rr.list(l)
                .iter()
                .map(|m| (i, m.file_name.clone()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Files the given delta lists delete: per list, DELETE entries, cancelled by an ADD of the
/// same location later in that list (a level upgrade). Missing lists and manifests read as
/// empty (an interrupted earlier run may have removed them after their data).
///
/// Manifests are read concurrently and consumed in list order; each is reduced to locations
/// in the blocking task that decodes it, and its entries are dropped there. ADD entries are
/// reduced to 64-bit location keys: two locations sharing a key could only cancel a DELETE
/// wrongly, which keeps a file, never deletes one.
///
/// A delta manifest that `protector_manifests` names is also cached whole as protection
/// reduces it ([`ReferenceReader::cache_slim`]), so that protection does not decode it again.
/// (Such a manifest's entries are mostly candidates: protection would keep them anyway.)
pub async fn deleted_by_deltas(
    rr: &ReferenceReader<'_>,
    table: &Table,
    delta_lists: &[String],
    protector_manifests: &HashSet<String>,
) -> Result<Candidates> {
    rr.load_lists(delta_lists, true).await?;
    let tasks = manifests_by_list(rr, delta_lists);
    let paths = table.paths_arc();
    let mut read = stream::iter(tasks)
        .map(|(i, n)| async move {
            let keep_slim = protector_manifests.contains(&n);
            let (reduced, slim) = rr
                .manifest_reduced(paths, &n, true, move |p, entries| {
                    reduce_delta(p, entries, keep_slim).map(Some)
                })
                .await?
                .unwrap_or_default();
            // `None` for a manifest read as absent: never cached, protection reads it strictly.
            if let Some(slim) = slim {
                rr.cache_slim(n, slim);
            }
            Ok::<_, Error>((i, reduced))
        })
        .buffered(rr.concurrency());
    let mut out = Candidates::default();
    // This list's DELETEs by location key, in the order they came.
    let mut per_list: FastMap<u64, (Location, Candidate)> = FastMap::default();
    let mut current = None;
    while let Some(next) = read.next().await {
        let (i, reduced) = next?;
        if current != Some(i) {
            take_list(&mut out, &mut per_list);
            current = Some(i);
        }
        for r in reduced {
            match r {
                Reduced::Candidate(key, loc, c) => {
                    per_list.insert(key, (loc, c));
                }
                Reduced::Added(key) => {
                    if !per_list.is_empty() {
                        per_list.remove(&key);
                    }
                }
            }
        }
    }
    take_list(&mut out, &mut per_list);
    Ok(out)
}

/// Move one list's remaining DELETEs into `out`. Their order among themselves does not matter:
/// they are distinct locations, and between lists the earlier list's entry wins.
fn take_list(out: &mut Candidates, per_list: &mut FastMap<u64, (Location, Candidate)>) {
    out.entries.extend(per_list.drain().map(|(_, v)| v));
}

/// Files the given lists ADD (changelog lists; Java deletes changelog files without extras).
/// Missing lists and manifests read as empty. Manifests are reduced to candidates in the
/// blocking task that decodes them.
pub async fn added_by_lists(
    rr: &ReferenceReader<'_>,
    table: &Table,
    lists: &[String],
    class: FileClass,
) -> Result<Candidates> {
    rr.load_lists(lists, true).await?;
    let tasks = manifests_by_list(rr, lists);
    let paths = table.paths_arc();
    let mut read = stream::iter(tasks)
        .map(|(_, n)| async move {
            rr.manifest_reduced(paths, &n, true, move |p, entries| {
                reduce_adds(p, entries, class)
            })
            .await
        })
        .buffered(rr.concurrency());
    let mut out = Candidates::default();
    while let Some(reduced) = read.next().await {
        out.entries.extend(reduced?);
    }
    Ok(out)
}

/// The metadata of removed versions that may become unreferenced: their manifest lists, the
/// manifests those name, their index manifests and the index files those name, and their
/// statistics files, each distinct, with sizes where metadata has them. It needs only the
/// removed versions, so it can be read while the candidates are (see
/// [`DeletionPlan::from_parts`]); what the protectors still reference is taken out later.
#[derive(Debug)]
pub struct RemovedMetadata {
    scope: MetadataScope,
    lists: Vec<(String, Option<u64>)>,
    manifests: Vec<(String, u64)>,
    /// Index manifests with their sizes once read (`None`: missing).
    index_manifests: Vec<(String, Option<u64>)>,
    index_files: Vec<(Location, u64)>,
    statistics: Vec<String>,
}

impl RemovedMetadata {
    /// Read the lists (base lists first: the others are usually being cached by the candidate
    /// readers meanwhile) and, for [`MetadataScope::All`], index manifests of `removed`,
    /// concurrently. Missing lists and index manifests name nothing (an interrupted earlier run
    /// may have removed them).
    pub async fn read(
        rr: &ReferenceReader<'_>,
        table: &Table,
        removed: &[Snapshot],
        scope: MetadataScope,
    ) -> Result<RemovedMetadata> {
        let mut seen: HashSet<String> = HashSet::new();
        let mut lists: Vec<(String, Option<u64>)> = Vec::new();
        let mut base_lists: Vec<usize> = Vec::new();
        let mut other_lists: Vec<usize> = Vec::new();
        for s in removed {
            for l in lists_in_scope(s, scope) {
                if seen.insert(l.clone()) {
                    if l == s.base_manifest_list {
                        base_lists.push(lists.len());
                    } else {
                        other_lists.push(lists.len());
                    }
                    let size = list_size(s, &l);
                    lists.push((l, size));
                }
            }
        }
        // Each list's manifests are taken as it arrives (in this fixed order, so the plan is
        // the same in a dry run and the real run) and the list is dropped.
        let mut manifests: Vec<(String, u64)> = Vec::new();
        {
            let lists_ref = &lists;
            let mut read = stream::iter(base_lists.into_iter().chain(other_lists))
                .map(|i| rr.list_uncached(&lists_ref[i].0, true))
                .buffered(rr.concurrency());
            let mut manifest_seen: HashSet<String> = HashSet::new();
            while let Some(metas) = read.next().await {
                for m in metas?.iter() {
                    if !manifest_seen.contains(&m.file_name) {
                        manifest_seen.insert(m.file_name.clone());
                        manifests.push((m.file_name.clone(), m.file_size.max(0) as u64));
                    }
                }
            }
        }
        let mut out = RemovedMetadata {
            scope,
            lists,
            manifests,
            index_manifests: Vec::new(),
            index_files: Vec::new(),
            statistics: Vec::new(),
        };
        if scope == MetadataScope::ChangelogOnly {
            return Ok(out);
        }

        let mut statistics_seen: HashSet<&str> = HashSet::new();
        for s in removed {
            if let Some(im) = &s.index_manifest {
                if seen.insert(im.clone()) {
                    out.index_manifests.push((im.clone(), None));
                }
            }
            if let Some(st) = &s.statistics {
                if statistics_seen.insert(st) {
                    out.statistics.push(st.clone());
                }
            }
        }
        let mut index_seen: FastSet<Location> = FastSet::default();
        let names: Vec<String> = out.index_manifests.iter().map(|(n, _)| n.clone()).collect();
        let mut read = stream::iter(names.into_iter().enumerate())
            .map(|(i, im)| async move {
                Ok::<_, Error>((i, read_index_files_sized(table, &im, true).await?))
            })
            .buffered(rr.concurrency());
        while let Some(next) = read.next().await {
            let (i, Some((files, size))) = next? else {
                continue;
            };
            out.index_manifests[i].1 = Some(size);
            for f in files {
                if !index_seen.contains(&f.location) {
                    index_seen.insert(f.location.clone());
                    out.index_files.push((f.location, f.bytes));
                }
            }
        }
        Ok(out)
    }
}

/// Everything one run deletes, grouped so it can go in crash-safe order.
#[derive(Debug, Default)]
pub struct DeletionPlan {
    /// Data files and their extra files.
    pub data: Vec<Planned>,
    /// Changelog data files.
    pub changelog_data: Vec<Planned>,
    /// Manifests.
    pub manifests: Vec<Planned>,
    /// Index files.
    pub index_files: Vec<Planned>,
    /// Statistics files.
    pub statistics: Vec<Planned>,
    /// Manifest lists and index manifests (after what they name).
    pub lists: Vec<Planned>,
}

/// Which metadata of a removed version to consider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataScope {
    /// Lists, manifests, index manifest and index files, statistics.
    All,
    /// Only the lists (and their manifests) that an incremental changelog reader uses; index
    /// and statistics stay for snapshot expiry (Java's changelog expiry does the same).
    ChangelogOnly,
}

impl DeletionPlan {
    /// Plan the deletion of `candidates` minus what `protectors` still need, and of the
    /// metadata of `removed` versions that no protector names.
    pub async fn build(
        rr: &mut ReferenceReader<'_>,
        table: &Table,
        candidates: Candidates,
        removed: &[Snapshot],
        scope: MetadataScope,
        protectors: &[Protector],
    ) -> Result<DeletionPlan> {
        let removed = RemovedMetadata::read(rr, table, removed, scope).await?;
        DeletionPlan::from_parts(rr, table, candidates, removed, protectors).await
    }

    /// [`DeletionPlan::build`] from metadata already read with [`RemovedMetadata::read`].
    pub async fn from_parts(
        rr: &mut ReferenceReader<'_>,
        table: &Table,
        candidates: Candidates,
        removed: RemovedMetadata,
        protectors: &[Protector],
    ) -> Result<DeletionPlan> {
        let sorted = candidates.into_sorted();
        // Every location a candidate would delete — the file, then its extra files — has a
        // slot; protection may name any of them (a crafted entry's "extra file" can be a file
        // some version reads). Exact lookup by location (hashing beats a binary search of
        // string comparisons: protection confirms every entry that passed the name filter here,
        // serially).
        let mut first_slot = Vec::with_capacity(sorted.len());
        let mut position: FastMap<&str, usize> = FastMap::default();
        let mut slots = 0usize;
        for (l, c) in &sorted {
            first_slot.push(slots);
            for loc in std::iter::once(l).chain(&c.extras) {
                // A location named twice keeps the first slot: protecting it keeps it.
                position.entry(loc.as_str()).or_insert(slots);
                slots += 1;
            }
        }
        let find = |l: &Location| position.get(l.as_str()).copied();
        let names = CandidateNames::from_keys(sorted.iter().flat_map(|(_, c)| {
            std::iter::once(c.name_key).chain(c.extras.iter().map(|x| name_key(x.name())))
        }));
        let protected = rr
            .protected_among(protectors, Arc::new(names), |l| find(l).is_some())
            .await?;
        // Per slot: may it be deleted?
        let mut deletable = vec![true; slots];
        for l in &protected {
            if let Some(i) = find(l) {
                deletable[i] = false;
            }
        }
        drop(protected);
        // Every slot of a location gathered twice follows its first slot.
        let mut slot = 0usize;
        for (l, c) in &sorted {
            for loc in std::iter::once(l).chain(&c.extras) {
                if let Some(first) = find(loc) {
                    if !deletable[first] {
                        deletable[slot] = false;
                    }
                }
                slot += 1;
            }
        }
        drop(position);
        let referenced = rr.referenced_metadata(protectors).await?;
        let mut plan = DeletionPlan::default();

        plan.data.reserve(sorted.len());
        for ((loc, c), first) in sorted.into_iter().zip(first_slot) {
            // A protected file keeps its extra files too (as before extras were checked).
            if !deletable[first] {
                continue;
            }
            let target = if c.class == FileClass::ChangelogData {
                &mut plan.changelog_data
            } else {
                &mut plan.data
            };
            target.push(Planned {
                location: loc,
                class: c.class,
                bytes: Some(c.bytes),
            });
            for (i, x) in c.extras.into_iter().enumerate() {
                if deletable[first + 1 + i] {
                    target.push(Planned {
                        location: x,
                        class: c.class,
                        bytes: None,
                    });
                }
            }
        }

        // Lists and manifests of the removed versions that no protector names (a list a
        // protector names has every manifest of it named too).
        let unreferenced = |name: &str| !referenced.manifest_dir_names.contains(name);
        let mut planned: HashSet<&str> = HashSet::new();
        for (l, _) in &removed.lists {
            planned.insert(l.as_str());
        }
        for (m, size) in &removed.manifests {
            if unreferenced(m) && planned.insert(m.as_str()) {
                plan.manifests.push(Planned {
                    location: table.paths().manifest(m)?,
                    class: FileClass::Manifest,
                    bytes: Some(*size),
                });
            }
        }
        for (l, size) in &removed.lists {
            if unreferenced(l) {
                plan.lists.push(Planned {
                    location: table.paths().manifest(l)?,
                    class: FileClass::ManifestList,
                    bytes: *size,
                });
            }
        }
        if removed.scope == MetadataScope::ChangelogOnly {
            return Ok(plan);
        }

        // Index manifests and the index files no protector names; statistics likewise.
        for (f, size) in removed.index_files {
            if !referenced.index_files.contains(&f) {
                plan.index_files.push(Planned {
                    location: f,
                    class: FileClass::Index,
                    bytes: Some(size),
                });
            }
        }
        for (im, size) in &removed.index_manifests {
            if unreferenced(im) && planned.insert(im.as_str()) {
                plan.lists.push(Planned {
                    location: table.paths().manifest(im)?,
                    class: FileClass::IndexManifest,
                    bytes: *size,
                });
            }
        }
        for st in &removed.statistics {
            if !referenced.statistics.contains(st) {
                plan.statistics.push(Planned {
                    location: table.paths().statistics(st)?,
                    class: FileClass::Statistics,
                    bytes: None,
                });
            }
        }
        Ok(plan)
    }

    /// Every planned file, in execution order.
    pub fn files(&self) -> impl Iterator<Item = &Planned> {
        self.data
            .iter()
            .chain(&self.changelog_data)
            .chain(&self.manifests)
            .chain(&self.index_files)
            .chain(&self.statistics)
            .chain(&self.lists)
    }

    /// Delete in crash-safe order: data → changelog data → empty directories → manifests →
    /// index files → statistics → lists and index manifests. The caller then removes the
    /// version files and writes hints. Nothing is deleted unless the whole plan passes
    /// [`Deleter::check_plan`] (callers check the version files they delete afterwards before
    /// calling this).
    pub async fn execute(
        self,
        table: &Table,
        deleter: &mut Deleter<'_>,
        clean_empty_dirs: bool,
    ) -> Result<()> {
        // Every check, for the whole plan, before the first deletion: metadata that points
        // outside the table's roots, or names a file as a class it is not, or a directory
        // reached through a symlink stops the run with nothing deleted.
        deleter.check_plan(self.files()).await?;
        let touched: Vec<Location> = if clean_empty_dirs {
            self.data
                .iter()
                .chain(self.changelog_data.iter())
                .filter_map(|p| p.location.parent())
                .collect()
        } else {
            Vec::new()
        };
        deleter.delete("data files", self.data).await?;
        deleter
            .delete("changelog files", self.changelog_data)
            .await?;
        stop_if_failed(deleter)?;
        if clean_empty_dirs {
            remove_empty_dirs(table, deleter, touched).await;
        }
        deleter.delete("manifests", self.manifests).await?;
        stop_if_failed(deleter)?;
        deleter.delete("index files", self.index_files).await?;
        deleter.delete("statistics", self.statistics).await?;
        stop_if_failed(deleter)?;
        deleter.delete("manifest lists", self.lists).await?;
        stop_if_failed(deleter)?;
        Ok(())
    }
}

/// After a phase: if any deletion failed, stop before deleting (or hinting past) the metadata
/// (manifests, lists, version files, EARLIEST) through which a rerun finds the files that are still there; otherwise they
/// would be left for good (crash-safe order, design rule 5). Nothing referenced is at stake.
pub(crate) fn stop_if_failed(deleter: &Deleter<'_>) -> Result<()> {
    let failed = &deleter.report.failed;
    match failed.first() {
        None => Ok(()),
        Some(first) => Err(Error::storage(
            first.path.clone(),
            format!(
                "{} deletion(s) failed (first: {}); stopped before deleting the metadata that \
                 lists them, so a rerun can finish",
                failed.len(),
                first.error
            ),
        )),
    }
}

/// The size a snapshot records for one of its manifest lists (`baseManifestListSize`,
/// `deltaManifestListSize`, `changelogManifestListSize`), if any.
fn list_size(s: &Snapshot, list: &str) -> Option<u64> {
    let key = if list == s.base_manifest_list {
        "baseManifestListSize"
    } else if list == s.delta_manifest_list {
        "deltaManifestListSize"
    } else if s.changelog_manifest_list.as_deref() == Some(list) {
        "changelogManifestListSize"
    } else {
        return None;
    };
    s.extra
        .get(key)
        .and_then(|v| v.as_i64())
        .filter(|n| *n >= 0)
        .map(|n| n as u64)
}

fn lists_in_scope(s: &Snapshot, scope: MetadataScope) -> Vec<String> {
    match scope {
        MetadataScope::All => s.manifest_lists().map(String::from).collect(),
        MetadataScope::ChangelogOnly => match &s.changelog_manifest_list {
            Some(c) => vec![c.clone()],
            None => vec![s.base_manifest_list.clone(), s.delta_manifest_list.clone()],
        },
    }
}

/// Remove bucket directories left empty, then their partition directories, deepest first,
/// never above the data root. Failures mean "not empty" and are ignored.
pub async fn remove_empty_dirs(table: &Table, deleter: &mut Deleter<'_>, dirs: Vec<Location>) {
    let data_root = table.paths().data_root().clone();
    let levels = table.schema().partition_keys.len();
    let mut bucket_dirs: Vec<Location> = dirs
        .into_iter()
        .filter(|d| d.is_under(&data_root))
        .collect();
    bucket_dirs.sort();
    bucket_dirs.dedup();
    let mut parents: HashSet<Location> = HashSet::new();
    for d in bucket_dirs {
        if d.name().starts_with("bucket-") && deleter.remove_dir_if_empty(&d).await {
            if let Some(p) = d.parent() {
                parents.insert(p);
            }
        }
    }
    for _ in 0..levels {
        let mut next = HashSet::new();
        let mut level: Vec<Location> = parents.drain().collect();
        level.sort();
        for p in level {
            if p == data_root || !p.is_under(&data_root) || !p.name().contains('=') {
                continue;
            }
            if deleter.remove_dir_if_empty(&p).await {
                if let Some(pp) = p.parent() {
                    next.insert(pp);
                }
            }
        }
        parents = next;
    }
}
