//! Planning shared by every capability that removes versions (snapshot expiry, changelog
//! expiry, tag deletion): which data files the removed versions free, which metadata files
//! nothing else names, and the crash-safe order in which they go.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use futures::stream::{self, StreamExt};

use crate::clean::report::FileClass;
use crate::clean::shared::candidates::Stored;
use crate::clean::shared::candidates::{spill_error, Bits};
pub use crate::clean::shared::candidates::{Candidate, Candidates};
use crate::clean::shared::deleter::{Deleter, Planned, Represented};
use crate::clean::shared::keys::SortedKeys;
use crate::clean::shared::kinds::check_possible_in;
use crate::clean::shared::names;
use crate::clean::shared::references::{
    read_index_files_sized, CandidateKeys, ListedManifest, Protector, ReferenceReader, Slim,
};
use crate::error::{Error, Result};
use crate::hash::{location_key, FastMap, FastSet};
use crate::spec::manifest::FileKind;
use crate::spec::snapshot::Snapshot;
use crate::storage::Location;
use crate::table::{DataFileLocator, ManifestFiles, PathFactory, Table};

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
    let mut out = take_reduced();
    let mut slim = Vec::new();
    entries.for_each_locator(|e| {
        out.push(match e.kind {
            FileKind::Delete => {
                let (main, extras) = locate.locate(e)?;
                if keep_slim {
                    slim.push(Slim::of(e, main.clone(), extras.clone()));
                }
                let c = Candidate::new(
                    FileClass::Data,
                    e.file_size.max(0) as u64,
                    extras,
                    main.name(),
                );
                Reduced::Candidate(location_key(main.as_str()), main, c)
            }
            FileKind::Add if keep_slim => {
                let (location, extras) = locate.locate(e)?;
                let key = location_key(location.as_str());
                // Cached until protection ends: an exact-size copy of the location (a joined
                // one has room to spare).
                slim.push(Slim::of(e, location.clone(), extras));
                Reduced::Added(key)
            }
            FileKind::Add => Reduced::Added(locate.locator_key(e)?),
        });
        Ok(())
    })?;
    slim.shrink_to_fit();
    Ok((out, keep_slim.then_some(slim)))
}

/// Emptied vectors of [`Reduced`] entries, reused by later manifests: a fresh one
/// per manifest, grown on a blocking thread and freed on another, left every thread's
/// allocator arena fragmented.
static REDUCED_VECS: std::sync::Mutex<Vec<Vec<Reduced>>> = std::sync::Mutex::new(Vec::new());

/// At most this many idle vectors are kept ...
const MAX_IDLE_REDUCED: usize = 32;

/// ... each of at most this many entries.
const MAX_KEPT_REDUCED: usize = 2048;

/// An empty vector for a manifest's reduced entries (an idle one if any).
fn take_reduced() -> Vec<Reduced> {
    REDUCED_VECS
        .lock()
        .ok()
        .and_then(|mut idle| idle.pop())
        .unwrap_or_default()
}

/// Keep `v` (emptied) for [`take_reduced`] unless enough are kept or it is large.
fn give_back_reduced(mut v: Vec<Reduced>) {
    v.clear();
    if v.capacity() == 0 || v.capacity() > MAX_KEPT_REDUCED {
        return;
    }
    if let Ok(mut idle) = REDUCED_VECS.lock() {
        if idle.len() < MAX_IDLE_REDUCED {
            idle.push(v);
        }
    }
}

/// Free the idle vectors of [`take_reduced`] once the candidates are read (the plan's peak
/// comes later).
fn release_reduced() {
    if let Ok(mut idle) = REDUCED_VECS.lock() {
        *idle = Vec::new();
    }
}

/// Reduce a manifest to the candidates its ADD entries name (extras only for data files).
fn reduce_adds(
    paths: &PathFactory,
    entries: ManifestFiles<'_>,
    class: FileClass,
) -> Result<Vec<(Location, Candidate)>> {
    let mut locate = DataFileLocator::new(paths);
    let mut out = Vec::new();
    entries.for_each_locator(|e| {
        if e.kind != FileKind::Add {
            return Ok(());
        }
        let (main, extras) = locate.locate(e)?;
        let extras = if class == FileClass::Data {
            extras
        } else {
            Vec::new()
        };
        let c = Candidate::new(class, e.file_size.max(0) as u64, extras, main.name());
        out.push((main, c));
        Ok(())
    })?;
    Ok(out)
}

/// How many candidates loaded `lists` name, by their manifests' counts (`count`), as a hint
/// for [`Candidates::reserve`]. The counts are not trusted: a manifest counts for at most one
/// entry a byte, and the total is capped.
fn slots_hint(
    rr: &ReferenceReader,
    lists: &[String],
    count: impl Fn(&ListedManifest) -> u32,
) -> usize {
    const MAX_HINT: u64 = 1 << 26;
    let mut seen: HashSet<&str> = HashSet::new();
    let mut total: u64 = 0;
    for l in lists {
        if !seen.insert(l.as_str()) {
            continue;
        }
        total += rr
            .list(l)
            .iter()
            .map(|m| (count(m) as u64).min(m.file_size.max(0) as u64))
            .sum::<u64>();
        if total >= MAX_HINT {
            return MAX_HINT as usize;
        }
    }
    total as usize
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
    let mut out = Candidates::with_budget(rr.memory());
    // Sized once from the lists' DELETE counts (a hint: growth by doubling left the earlier,
    // smaller copies as holes in the heap).
    out.reserve(slots_hint(rr, delta_lists, |m| m.deleted_files));
    let mut per_list = ListDeletes::default();
    let mut current = None;
    while let Some(next) = read.next().await {
        let (i, mut reduced) = next?;
        if current != Some(i) {
            per_list.take(&mut out)?;
            current = Some(i);
        }
        for r in reduced.drain(..) {
            match r {
                Reduced::Candidate(key, loc, c) => per_list.insert(key, loc, c),
                Reduced::Added(key) => per_list.cancel(key),
            }
        }
        give_back_reduced(reduced);
    }
    drop(read);
    release_reduced();
    per_list.take(&mut out)?;
    Ok(out)
}

/// One delta list's DELETEs by location key, in the order they came (the plan deletes in
/// gathering order, which must not depend on a hash map's seed: a dry run and the real run
/// report alike).
#[derive(Default)]
struct ListDeletes {
    /// Index in `order` by location key.
    at: FastMap<u64, usize>,
    /// In arrival order; `None` once cancelled (or replaced by a later DELETE of the same
    /// location, which takes its place at the end).
    order: Vec<Option<(Location, Candidate)>>,
}

impl ListDeletes {
    fn insert(&mut self, key: u64, l: Location, c: Candidate) {
        if let Some(i) = self.at.insert(key, self.order.len()) {
            self.order[i] = None;
        }
        self.order.push(Some((l, c)));
    }

    fn cancel(&mut self, key: u64) {
        if self.at.is_empty() {
            return;
        }
        if let Some(i) = self.at.remove(&key) {
            self.order[i] = None;
        }
    }

    /// Move the remaining DELETEs into `out`, in arrival order (between lists the earlier
    /// list's entry wins).
    fn take(&mut self, out: &mut Candidates) -> Result<()> {
        self.at.clear();
        for (l, c) in self.order.drain(..).flatten() {
            out.push(l, c)?;
        }
        Ok(())
    }
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
    let mut out = Candidates::with_budget(rr.memory());
    out.reserve(slots_hint(rr, lists, |m| m.added_files));
    while let Some(reduced) = read.next().await {
        for (l, c) in reduced? {
            out.push(l, c)?;
        }
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
        // the same in a dry run and the real run) and the list is dropped. A list that is not
        // on disk (removed by an earlier run, or by Java's snapshot expiry for a long-lived
        // changelog that no longer needs it) is not planned: a report lists only files that
        // left the disk, and a dry run says what the real run does.
        let mut manifests: Vec<(String, u64)> = Vec::new();
        let mut absent: HashSet<usize> = HashSet::new();
        {
            let lists_ref = &lists;
            let mut read =
                stream::iter(base_lists.into_iter().chain(other_lists))
                    .map(|i| async move {
                        Ok::<_, Error>((i, rr.list_if_present(&lists_ref[i].0).await?))
                    })
                    .buffered(rr.concurrency());
            let mut manifest_seen: HashSet<String> = HashSet::new();
            while let Some(next) = read.next().await {
                let (i, metas) = next?;
                let Some(metas) = metas else {
                    absent.insert(i);
                    continue;
                };
                for m in metas.iter() {
                    if !manifest_seen.contains(&m.file_name) {
                        manifest_seen.insert(m.file_name.clone());
                        manifests.push((m.file_name.clone(), m.file_size.max(0) as u64));
                    }
                }
            }
        }
        let lists: Vec<(String, Option<u64>)> = lists
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !absent.contains(i))
            .map(|(_, l)| l)
            .collect();
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

impl RemovedMetadata {
    /// The location keys of the files [`DeletionPlan::from_parts`] deletes of this metadata
    /// unless a protector names them, sorted.
    pub(crate) fn location_keys(&self, table: &Table) -> Result<SortedKeys> {
        Ok(MetadataCandidates::of(table, self)?.keys())
    }
}

/// The metadata files of removed versions that a plan deletes unless a protector names them,
/// located, in plan order: manifests, index files, statistics, then lists and index
/// manifests (each location once, a list before a manifest of the same name).
#[derive(Debug, Default)]
struct MetadataCandidates {
    /// Each file with the phase it goes in.
    files: Vec<(MetadataPhase, Planned)>,
}

/// The phase of [`DeletionPlan`] a metadata file goes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MetadataPhase {
    Manifests,
    IndexFiles,
    Statistics,
    Lists,
}

impl MetadataCandidates {
    /// The metadata of `removed`, located.
    fn of(table: &Table, removed: &RemovedMetadata) -> Result<MetadataCandidates> {
        let paths = table.paths();
        let mut out = MetadataCandidates::default();
        let mut named: HashSet<&str> = HashSet::new();
        for (l, _) in &removed.lists {
            named.insert(l.as_str());
        }
        for (m, size) in &removed.manifests {
            if named.insert(m.as_str()) {
                out.push(
                    MetadataPhase::Manifests,
                    paths.manifest(m)?,
                    FileClass::Manifest,
                    Some(*size),
                );
            }
        }
        for (l, size) in &removed.lists {
            out.push(
                MetadataPhase::Lists,
                paths.manifest(l)?,
                FileClass::ManifestList,
                *size,
            );
        }
        if removed.scope == MetadataScope::ChangelogOnly {
            return Ok(out);
        }
        for (f, size) in &removed.index_files {
            out.push(
                MetadataPhase::IndexFiles,
                f.clone(),
                FileClass::Index,
                Some(*size),
            );
        }
        for (im, size) in &removed.index_manifests {
            if named.insert(im.as_str()) {
                out.push(
                    MetadataPhase::Lists,
                    paths.manifest(im)?,
                    FileClass::IndexManifest,
                    *size,
                );
            }
        }
        for st in &removed.statistics {
            out.push(
                MetadataPhase::Statistics,
                paths.statistics(st)?,
                FileClass::Statistics,
                None,
            );
        }
        Ok(out)
    }

    fn push(
        &mut self,
        phase: MetadataPhase,
        location: Location,
        class: FileClass,
        bytes: Option<u64>,
    ) {
        self.files.push((
            phase,
            Planned {
                location,
                class,
                bytes,
            },
        ));
    }

    /// Their location keys, sorted.
    fn keys(&self) -> SortedKeys {
        SortedKeys::from_unsorted(
            self.files
                .iter()
                .map(|(_, p)| location_key(p.location.as_str()))
                .collect(),
        )
    }

    /// Into `plan`'s phases, but those whose location key is `protected`.
    fn plan_into(self, plan: &mut DeletionPlan, protected: &FastSet<u64>) {
        for (phase, p) in self.files {
            if protected.contains(&location_key(p.location.as_str())) {
                continue;
            }
            match phase {
                MetadataPhase::Manifests => plan.manifests.push(p),
                MetadataPhase::IndexFiles => plan.index_files.push(p),
                MetadataPhase::Statistics => plan.statistics.push(p),
                MetadataPhase::Lists => plan.lists.push(p),
            }
        }
    }
}

/// The candidates of a plan with, per slot (see [`Candidates::decide`]), whether it goes.
#[derive(Debug)]
struct KeptCandidates {
    cands: Candidates,
    /// Per slot: set if its location is deleted (by this slot).
    ok: Bits,
    /// The first error reading the records back (an iteration ends early on one).
    failed: std::sync::Mutex<Option<String>>,
}

/// Reads a plan's data or changelog data files back from the candidates' records, in
/// gathering order: each candidate's own file, then its extra files, those whose slot goes.
struct PlanIter<'a> {
    kept: &'a KeptCandidates,
    records: crate::clean::shared::spill::RecordReader<'a>,
    changelog: bool,
    /// The slot of the next record's own file.
    slot: usize,
    /// Files of the current record still to yield (reversed).
    ready: Vec<Planned>,
    /// The name buffer of [`Candidates::decode_with`].
    name: String,
}

impl PlanIter<'_> {
    fn fail(&self, e: std::io::Error) {
        tracing::error!(error = %e, "plan: the candidates' temporary file could not be read");
        let mut f = self.kept.failed.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            *f = Some(e.to_string());
        }
    }
}

impl Iterator for PlanIter<'_> {
    type Item = Planned;

    fn next(&mut self) -> Option<Planned> {
        loop {
            if let Some(p) = self.ready.pop() {
                return Some(p);
            }
            let k = self.kept;
            let rec = match self.records.next_record()? {
                Ok(rec) => rec,
                Err(e) => {
                    self.fail(e);
                    return None;
                }
            };
            let Some(n) = Candidates::extras_in(rec) else {
                self.fail(std::io::Error::other("malformed record"));
                return None;
            };
            let s = self.slot;
            self.slot += 1 + n;
            if k.cands.changelog.get(s) != self.changelog || !(s..s + 1 + n).any(|i| k.ok.get(i)) {
                continue;
            }
            let Some(r) = k.cands.decode_with(rec, &mut self.name) else {
                self.fail(std::io::Error::other("malformed record"));
                return None;
            };
            // An extra file goes only with its candidate's own file ([`Candidates::decide`]).
            for (j, x) in r.extras.into_iter().enumerate().rev() {
                if k.ok.get(s + 1 + j) {
                    self.ready.push(Planned {
                        location: x,
                        class: r.class,
                        bytes: None,
                    });
                }
            }
            if k.ok.get(s) {
                self.ready.push(Planned {
                    location: r.location,
                    class: r.class,
                    bytes: Some(r.bytes),
                });
            }
        }
    }
}

/// The error of a record that does not parse.
fn malformed() -> Error {
    spill_error(std::io::Error::other("malformed record"))
}

/// Data or changelog data files of a plan, held as the candidates they came from (their
/// records, see [`Candidates`], and a bit a location): each file's [`Planned`] is built as it
/// is read, so a plan of millions of files never holds their locations at once.
#[derive(Debug, Clone, Default)]
pub struct PlannedFiles {
    from: Option<Arc<KeptCandidates>>,
    changelog: bool,
    len: usize,
}

impl PlannedFiles {
    fn of(kept: &Arc<KeptCandidates>, changelog: bool) -> PlannedFiles {
        // Counted without reading the records.
        let len = (0..kept.cands.slots())
            .filter(|i| kept.ok.get(*i) && kept.cands.changelog.get(*i) == changelog)
            .count();
        PlannedFiles {
            from: Some(kept.clone()),
            changelog,
            len,
        }
    }

    /// Files planned (extra files included).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The planned files in gathering order: each file, then its extra files. Each location
    /// comes at most once (and not in both a plan's data and changelog data files). If the
    /// candidates' temporary file cannot be read the iteration ends early:
    /// [`PlannedFiles::read_error`] then says so.
    pub fn iter(&self) -> impl Iterator<Item = Planned> + Send + '_ {
        let changelog = self.changelog;
        let len = self.len;
        self.from
            .iter()
            .filter(move |_| len > 0)
            .flat_map(move |k| PlanIter {
                kept: k,
                records: k.cands.reader(),
                changelog,
                slot: 0,
                ready: Vec::new(),
                name: String::new(),
            })
    }

    /// What [`Deleter::check_plan`] needs of these files without building them all: the
    /// first file of each (directory, class) group in plan order, pushed to `out`, and the
    /// count and text length of the others, added to `rest`.
    ///
    /// The checks of a data or changelog data file ([`crate::storage::Storage::check_deletable`],
    /// [`crate::clean::shared::kinds::KindRules::check`], the physical check of its
    /// directory) depend only on its directory and class for a file named by one plain
    /// segment, as every file of an interned directory is: so the first of a group passes
    /// exactly when all of them do, and the first file refused in plan order is the same.
    /// Only the length of each file's own name is its own: it is checked here for every file
    /// that is not a group's first ([`check_possible_in`]).
    fn representatives(&self, out: &mut Vec<Planned>, rest: &mut Represented) -> Result<()> {
        let Some(k) = self.from.as_ref().filter(|_| self.len > 0) else {
            return Ok(());
        };
        let mut groups: FastSet<(u32, FileClass)> = FastSet::default();
        let mut refused: Option<Error> = None;
        let mut records = k.cands.reader();
        let mut slot = 0usize;
        while let Some(rec) = records.next_record() {
            let rec = rec.map_err(spill_error)?;
            let (class, n) = Candidates::header(rec).ok_or_else(malformed)?;
            let s = slot;
            slot += 1 + n;
            if k.cands.changelog.get(s) != self.changelog || !(s..s + 1 + n).any(|i| k.ok.get(i)) {
                continue;
            }
            let mut j = s;
            k.cands
                .for_each_stored(rec, |stored| {
                    let goes = k.ok.get(j);
                    j += 1;
                    if !goes {
                        return;
                    }
                    let first = match &stored {
                        Stored::InDir(d, _, _) => groups.insert((*d, class)),
                        Stored::Whole(_) => true,
                    };
                    if first {
                        out.push(Planned {
                            location: stored.location(),
                            class,
                            bytes: None,
                        });
                    } else {
                        // The directory's checks hold for it; its name's length is its own.
                        if let Stored::InDir(_, dir, packed) = &stored {
                            if let Err(e) = check_possible_in(
                                dir,
                                names::unpacked_len(packed),
                                stored.text_len(),
                            ) {
                                refused.get_or_insert(e);
                            }
                        }
                        rest.files += 1;
                        rest.path_bytes += stored.text_len() as u64;
                    }
                })
                .ok_or_else(malformed)?;
            if let Some(e) = refused.take() {
                return Err(e);
            }
        }
        Ok(())
    }

    /// An error if an iteration ended early because the candidates' temporary file could not
    /// be read.
    pub fn read_error(&self) -> Result<()> {
        let Some(k) = &self.from else {
            return Ok(());
        };
        let failed = k.failed.lock().unwrap_or_else(|p| p.into_inner());
        match failed.as_ref() {
            None => Ok(()),
            Some(e) => Err(spill_error(std::io::Error::other(e.clone()))),
        }
    }
}

/// Everything one run deletes, grouped so it can go in crash-safe order.
#[derive(Debug, Default)]
pub struct DeletionPlan {
    /// Data files and their extra files.
    pub data: PlannedFiles,
    /// Changelog data files.
    pub changelog_data: PlannedFiles,
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
    ///
    /// Protection is one set of locations across every kind: every location a protector
    /// reads (its live data and changelog files with their extra files, its manifest lists,
    /// manifests, index manifests, index files and statistics) keeps every candidate at that
    /// location, whatever kind the candidate claims. An index entry of a removed version whose
    /// external path names a data file a protector reads therefore frees nothing, nor does a
    /// DELETE entry naming a protector's index file. (A candidate at a location its kind
    /// cannot have, such as a schema or a version file, is refused by the kind rules before
    /// anything is deleted.)
    pub async fn from_parts(
        rr: &mut ReferenceReader<'_>,
        table: &Table,
        candidates: Candidates,
        removed: RemovedMetadata,
        protectors: &[Protector],
    ) -> Result<DeletionPlan> {
        DeletionPlan::from_parts_with(rr, table, candidates, removed, protectors, None).await
    }

    /// [`DeletionPlan::from_parts`], with the locations the protectors still need among the
    /// candidates given as their location keys (`found_protected`, found by protect units with
    /// [`ReferenceReader::protect_among`] over the same candidates' keys) instead of read here
    /// (`None` reads them here). The protectors' metadata is read here either way.
    pub async fn from_parts_with(
        rr: &mut ReferenceReader<'_>,
        table: &Table,
        candidates: Candidates,
        removed: RemovedMetadata,
        protectors: &[Protector],
        found_protected: Option<&[u64]>,
    ) -> Result<DeletionPlan> {
        let mut cands = candidates;
        cands.finish()?;
        let slots = cands.slots();
        let budget = rr.memory();
        // Besides the keys (charged with the candidates): the slot of each sorted key, the
        // keys' radix directory and the per-slot flags, held until protection ends.
        let index_bytes = slots as u64 * (4 + 2) + (slots as u64).div_ceil(8) * 2;
        budget.charge("the candidates' lookup index", index_bytes)?;
        // The removed versions' metadata, located (few files next to the data files).
        let metadata = MetadataCandidates::of(table, &removed)?;
        // Every slot's location key, sorted in place, with the slot of each in a parallel
        // vector. Protection works on keys alone: a location that shares a key with a
        // candidate's keeps it (a 64-bit collision only ever keeps a file).
        let (sorted, slot_at) = sort_with_slots(std::mem::take(&mut cands.keys));
        let filter = Arc::new(CandidateKeys::new(sorted).with_more(metadata.keys()));
        let keys = filter.sorted();
        let meta_keys = filter.more();
        // Per sorted position (the first of each run of equal keys): protected?
        let mut protected = Bits::zeros(slots);
        // The metadata candidates' keys that a protector names.
        let mut meta_protected: FastSet<u64> = FastSet::default();
        let mut protect_key = |k: u64| {
            let r = keys.range(k);
            if !r.is_empty() {
                protected.set(r.start);
            }
            if meta_keys.contains(k) {
                meta_protected.insert(k);
            }
        };
        match found_protected {
            Some(found) => found.iter().for_each(|k| protect_key(*k)),
            None => {
                rr.protect_among(
                    protectors,
                    filter.clone(),
                    |l| {
                        let k = location_key(l.as_str());
                        keys.contains(k) || meta_keys.contains(k)
                    },
                    |l| protect_key(location_key(l.as_str())),
                )
                .await?
            }
        }
        // Protection's reduced manifests are not needed again.
        rr.release_slim();
        // The protectors' metadata protects candidates of every kind at its locations. A data
        // or changelog data candidate there names metadata a kept version reads: the entry is
        // hostile or corrupt, and the plan is refused whole, as the kind rules refuse a data
        // entry naming any other metadata file.
        let referenced = rr.referenced_metadata(protectors).await?;
        let refuse_data_at = |l: &Location, what: &str| -> Result<()> {
            if keys.range(location_key(l.as_str())).is_empty() {
                return Ok(());
            }
            Err(Error::PathRefused {
                path: l.to_string(),
                reason: format!(
                    "the plan deletes it as a data file (an entry of a removed version names \
                     it), but a kept version reads it as {what}; the metadata naming it is \
                     invalid"
                ),
            })
        };
        for name in &referenced.manifest_dir_names {
            let l = table.paths().manifest(name)?;
            refuse_data_at(&l, "a manifest, manifest list or index manifest")?;
            protect_key(location_key(l.as_str()));
        }
        for f in &referenced.index_files {
            refuse_data_at(f, "an index file")?;
            protect_key(location_key(f.as_str()));
        }
        for name in &referenced.statistics {
            let l = table.paths().statistics(name)?;
            refuse_data_at(&l, "a statistics file")?;
            protect_key(location_key(l.as_str()));
        }
        drop(referenced);
        let ok = cands.decide(keys.keys(), &slot_at, &protected);
        drop(protected);
        drop(slot_at);
        drop(filter);
        budget.release(index_bytes);
        // Nor are the lists it read: the plan holds what it needs.
        rr.release_caches();
        let mut plan = DeletionPlan::default();
        let kept = Arc::new(KeptCandidates {
            cands,
            ok,
            failed: std::sync::Mutex::new(None),
        });
        plan.data = PlannedFiles::of(&kept, false);
        plan.changelog_data = PlannedFiles::of(&kept, true);
        metadata.plan_into(&mut plan, &meta_protected);
        Ok(plan)
    }

    /// Every planned file, in execution order (data files built as they are read).
    pub fn files(&self) -> impl Iterator<Item = Cow<'_, Planned>> {
        self.data
            .iter()
            .chain(self.changelog_data.iter())
            .map(Cow::Owned)
            .chain(
                self.manifests
                    .iter()
                    .chain(&self.index_files)
                    .chain(&self.statistics)
                    .chain(&self.lists)
                    .map(Cow::Borrowed),
            )
    }

    /// [`Deleter::check_plan`] of `before` (files the caller deletes first) and every file of
    /// this plan, in that order, without building each data file: its data and changelog data
    /// files are checked one per (directory, class) group, the first in plan order
    /// ([`PlannedFiles::representatives`]), and counted whole. Returns the directories of the
    /// data and changelog data files (each once).
    pub async fn check(&self, deleter: &Deleter<'_>, before: &[Planned]) -> Result<Vec<Location>> {
        let mut reps: Vec<Planned> = Vec::new();
        let mut rest = Represented::default();
        self.data.representatives(&mut reps, &mut rest)?;
        self.changelog_data.representatives(&mut reps, &mut rest)?;
        deleter
            .check_plan_represented(
                before
                    .iter()
                    .chain(&reps)
                    .chain(&self.manifests)
                    .chain(&self.index_files)
                    .chain(&self.statistics)
                    .chain(&self.lists),
                rest,
            )
            .await?;
        let mut dirs: FastSet<Location> = FastSet::default();
        for p in &reps {
            if let Some(d) = p.location.parent() {
                dirs.insert(d);
            }
        }
        Ok(dirs.into_iter().collect())
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
        let data_dirs = self.check(deleter, &[]).await?;
        let touched: Vec<Location> = if clean_empty_dirs {
            data_dirs
        } else {
            Vec::new()
        };
        // Each location comes once from the plan's files (`PlannedFiles::iter`).
        deleter
            .delete_each("data files", self.data.len() as u64, self.data.iter())
            .await?;
        self.data.read_error()?;
        deleter
            .delete_each(
                "changelog files",
                self.changelog_data.len() as u64,
                self.changelog_data.iter(),
            )
            .await?;
        self.changelog_data.read_error()?;
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

/// `keys` (indexed by slot) sorted, with the slot of each sorted key (ordered by key, then
/// slot). The keys are reordered in place: the only other memory is the slots and a bit a
/// key, where sorting (key, slot) pairs takes 16 bytes a key.
fn sort_with_slots(mut keys: Vec<u64>) -> (SortedKeys, Vec<u32>) {
    let mut slots: Vec<u32> = (0..keys.len() as u32).collect();
    slots.sort_unstable_by_key(|s| (keys[*s as usize], *s));
    // keys[i] becomes keys[slots[i]], one cycle of the permutation at a time.
    let mut done = Bits::zeros(keys.len());
    for start in 0..keys.len() {
        if done.get(start) {
            continue;
        }
        let first = keys[start];
        let mut at = start;
        loop {
            done.set(at);
            let from = slots[at] as usize;
            if from == start {
                keys[at] = first;
                break;
            }
            keys[at] = keys[from];
            at = from;
        }
    }
    (SortedKeys::from_sorted(keys), slots)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(s: &str) -> Location {
        Location::parse(s).unwrap()
    }

    fn cand(class: FileClass, bytes: u64, extras: &[&str]) -> Candidate {
        Candidate::new(class, bytes, extras.iter().map(|x| loc(x)).collect(), "")
    }

    #[test]
    fn keys_sort_with_their_slots() {
        let keys = vec![5u64, 3, 9, 3, 0, 5, 5, 1];
        let (sorted, slots) = sort_with_slots(keys.clone());
        assert_eq!(sorted.keys(), &[0, 1, 3, 3, 5, 5, 5, 9][..]);
        assert_eq!(slots, vec![4, 7, 1, 3, 0, 5, 6, 2]);
        for (i, s) in slots.iter().enumerate() {
            assert_eq!(sorted.keys()[i], keys[*s as usize]);
        }
        assert_eq!(sorted.range(5), 4..7);
        assert!(sort_with_slots(Vec::new()).1.is_empty());
    }

    /// The planned files of `c` with the locations in `protect` protected, as `from_parts`
    /// decides them.
    fn plan_of(mut c: Candidates, protect: &[&str]) -> (Vec<Planned>, Vec<Planned>) {
        c.finish().unwrap();
        let slots = c.slots();
        let (sorted, slot_at) = sort_with_slots(std::mem::take(&mut c.keys));
        let mut protected = Bits::zeros(slots);
        for l in protect {
            let r = sorted.range(location_key(l));
            if !r.is_empty() {
                protected.set(r.start);
            }
        }
        let ok = c.decide(sorted.keys(), &slot_at, &protected);
        let kept = Arc::new(KeptCandidates {
            cands: c,
            ok,
            failed: std::sync::Mutex::new(None),
        });
        let data = PlannedFiles::of(&kept, false);
        let changelog = PlannedFiles::of(&kept, true);
        let d: Vec<Planned> = data.iter().collect();
        let cl: Vec<Planned> = changelog.iter().collect();
        assert_eq!((d.len(), cl.len()), (data.len(), changelog.len()));
        data.read_error().unwrap();
        for (files, all) in [(&data, &d), (&changelog, &cl)] {
            check_representatives(files, all);
        }
        (d, cl)
    }

    /// What the plan check sees of `files` (whose files are `all`) is the first file of each
    /// (directory, class) group in order, and the count and text length of the others.
    fn check_representatives(files: &PlannedFiles, all: &[Planned]) {
        let mut reps = Vec::new();
        let mut rest = Represented::default();
        files.representatives(&mut reps, &mut rest).unwrap();
        let mut groups = HashSet::new();
        let mut want = Vec::new();
        let mut want_rest = Represented::default();
        for p in all {
            let s = p.location.as_str();
            let dir = s.rsplit_once('/').unwrap().0;
            if groups.insert((dir.to_string(), p.class)) {
                want.push((s.to_string(), p.class));
            } else {
                want_rest.files += 1;
                want_rest.path_bytes += s.len() as u64;
            }
        }
        let got: Vec<(String, FileClass)> = reps
            .iter()
            .map(|p| (p.location.as_str().to_string(), p.class))
            .collect();
        assert_eq!(got, want);
        assert_eq!(rest, want_rest);
    }

    fn names(p: &[Planned]) -> Vec<(&str, FileClass, Option<u64>)> {
        p.iter()
            .map(|p| (p.location.as_str(), p.class, p.bytes))
            .collect()
    }

    #[test]
    fn first_gathered_of_a_location_goes_once_protected_ones_and_their_extras_stay() {
        for spill in [false, true] {
            let mut c = Candidates::default();
            let many = if spill { 30_000 } else { 0 };
            let push = |c: &mut Candidates, l: &str, class, bytes, extras: &[&str]| {
                c.push(loc(l), cand(class, bytes, extras)).unwrap()
            };
            push(&mut c, "file:///t/b/2.orc", FileClass::Data, 2, &[]);
            push(
                &mut c,
                "file:///t/b/1.orc",
                FileClass::Data,
                1,
                &["file:///t/b/1.orc.index"],
            );
            // Again, as changelog data: the first gathered wins.
            push(
                &mut c,
                "file:///t/b/2.orc",
                FileClass::ChangelogData,
                9,
                &[],
            );
            // Protected, so its extra file stays too.
            push(
                &mut c,
                "file:///t/b/p.orc",
                FileClass::Data,
                3,
                &["file:///t/b/p.orc.index"],
            );
            // Its extra file is protected.
            push(
                &mut c,
                "file:///t/b/4.orc",
                FileClass::Data,
                4,
                &["file:///t/b/x.index", "file:///t/b/4.orc.index"],
            );
            // Shares an extra file with a candidate that goes: deleted once.
            push(
                &mut c,
                "file:///t/b/5.orc",
                FileClass::ChangelogData,
                5,
                &["file:///t/b/1.orc.index"],
            );
            for i in 0..many {
                push(
                    &mut c,
                    &format!(
                        "file:///t/c{}/data-00799820-1fb5-481a-b44c-{i:012x}-{i}.orc",
                        i % 3
                    ),
                    FileClass::Data,
                    i,
                    &[],
                );
            }
            let (d, cl) = plan_of(c, &["file:///t/b/p.orc", "file:///t/b/x.index"]);
            assert_eq!(
                names(&d[..5]),
                vec![
                    ("file:///t/b/2.orc", FileClass::Data, Some(2)),
                    ("file:///t/b/1.orc", FileClass::Data, Some(1)),
                    ("file:///t/b/1.orc.index", FileClass::Data, None),
                    ("file:///t/b/4.orc", FileClass::Data, Some(4)),
                    ("file:///t/b/4.orc.index", FileClass::Data, None),
                ]
            );
            assert_eq!(d.len() as u64, 5 + many);
            assert_eq!(
                names(&cl),
                vec![("file:///t/b/5.orc", FileClass::ChangelogData, Some(5))]
            );
        }
    }

    #[test]
    fn a_planned_file_comes_at_most_once_whatever_the_repeats() {
        // Repeats across candidates' own files and extra files, in any roles.
        let l = |i: u64| format!("file:///t/b/{}.orc", i % 13);
        let mut c = Candidates::default();
        for i in 0..200u64 {
            let extras: Vec<String> = (1..(i % 4)).map(|j| l(i * 7 + j)).collect();
            let extras: Vec<&str> = extras.iter().map(String::as_str).collect();
            let class = if i % 3 == 0 {
                FileClass::ChangelogData
            } else {
                FileClass::Data
            };
            c.push(loc(&l(i * 5)), cand(class, i, &extras)).unwrap();
        }
        let (d, cl) = plan_of(c, &[&l(3)]);
        let mut all: Vec<&str> = d.iter().chain(&cl).map(|p| p.location.as_str()).collect();
        assert!(!all.contains(&l(3).as_str()));
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n, "a location planned twice");
        assert_eq!(n, 12);
    }

    /// An entry of a delta manifest for [`reduce_delta`] tests.
    fn delta_entry(
        kind: FileKind,
        name: &str,
        bucket: i32,
        level: i32,
        extras: &[&str],
        embedded: Option<Vec<u8>>,
        external: Option<&str>,
    ) -> crate::spec::manifest::ManifestEntry {
        crate::spec::manifest::ManifestEntry {
            kind,
            partition: vec![0, 0, 0, 0, 0, 0, 0, 0, bucket as u8],
            bucket,
            total_buckets: 4,
            file: crate::spec::manifest::DataFileMeta {
                file_name: name.to_string(),
                file_size: 100 * i64::from(bucket) - 50,
                level,
                extra_files: extras.iter().map(|x| x.to_string()).collect(),
                embedded_index: embedded,
                external_path: external.map(String::from),
                ..Default::default()
            },
        }
    }

    /// What `reduce_delta` gives, as text: candidates (key, location, size, extras), added
    /// keys and slim entries.
    fn reduced_text(
        paths: &PathFactory,
        bytes: &[u8],
        keep_slim: bool,
    ) -> std::result::Result<(Vec<String>, Vec<String>), String> {
        let at = loc("file:///t/manifest/manifest-1");
        let (reduced, slim) = reduce_delta(paths, ManifestFiles::new(bytes, &at), keep_slim)
            .map_err(|e| e.to_string())?;
        let reduced = reduced
            .iter()
            .map(|r| match r {
                Reduced::Candidate(k, l, c) => {
                    format!(
                        "C {k} {} {} {:?} {:?}",
                        l.as_str(),
                        c.bytes,
                        c.class,
                        c.extras
                    )
                }
                Reduced::Added(k) => format!("A {k}"),
            })
            .collect();
        let slim = slim
            .unwrap_or_default()
            .iter()
            .map(|s| format!("{s:?}"))
            .collect();
        Ok((reduced, slim))
    }

    /// The same, from owned entries located by [`PathFactory`] (what `reduce_delta` did before
    /// it read borrowed locators).
    fn owned_text(
        paths: &PathFactory,
        bytes: &[u8],
        keep_slim: bool,
    ) -> std::result::Result<(Vec<String>, Vec<String>), String> {
        let at = loc("file:///t/manifest/manifest-1");
        let mut reduced = Vec::new();
        let mut slim = Vec::new();
        ManifestFiles::new(bytes, &at)
            .for_each(|e| {
                if e.kind == FileKind::Add && !keep_slim {
                    let key = DataFileLocator::new(paths).data_file_key(
                        &e.partition,
                        e.bucket,
                        &e.file,
                    )?;
                    let main = paths.data_file(&e.partition, e.bucket, &e.file)?;
                    assert_eq!(key, location_key(main.as_str()));
                    reduced.push(format!("A {key}"));
                    return Ok(());
                }
                let all = paths.data_file_with_extras(&e.partition, e.bucket, &e.file)?;
                let (main, extras) = (all[0].clone(), all[1..].to_vec());
                let key = location_key(main.as_str());
                if keep_slim {
                    let l = crate::spec::manifest::FileLocator::of(&e);
                    slim.push(format!("{:?}", Slim::of(&l, main.clone(), extras.clone())));
                }
                reduced.push(match e.kind {
                    FileKind::Delete => format!(
                        "C {key} {} {} {:?} {extras:?}",
                        main.as_str(),
                        e.file.file_size.max(0),
                        FileClass::Data
                    ),
                    FileKind::Add => format!("A {key}"),
                });
                Ok(())
            })
            .map_err(|e| e.to_string())?;
        Ok((reduced, slim))
    }

    /// `reduce_delta` reads borrowed locators, yet reduces every entry exactly as the owned
    /// entries locate it: same candidates (locations, keys, sizes, extras), same added keys,
    /// same slim entries (identifiers with the embedded index and external path), level
    /// upgrades included; and a name that is not one plain segment fails it the same way.
    #[test]
    fn reduce_delta_matches_the_owned_entries() {
        use crate::spec::manifest::encode_manifest;
        let root = loc("file:///t");
        let options = crate::spec::options::TableOptions::new(
            &std::collections::HashMap::new(),
            &std::collections::HashMap::new(),
        );
        let paths = PathFactory::new(&root, &options, Vec::new()).unwrap();
        let (add, del) = (FileKind::Add, FileKind::Delete);
        let good = vec![
            delta_entry(
                del,
                "data-1.orc",
                0,
                0,
                &["data-1.index"],
                Some(vec![1, 2]),
                None,
            ),
            // A level upgrade: DELETE then ADD of the same file.
            delta_entry(
                add,
                "data-1.orc",
                0,
                1,
                &["data-1.index"],
                Some(vec![1, 2]),
                None,
            ),
            delta_entry(
                del,
                "data-2.orc",
                1,
                0,
                &[],
                None,
                Some("file:///ext/data-2.orc"),
            ),
            delta_entry(add, "data-3.orc", 2, 0, &["a.idx", "b.idx"], None, None),
            delta_entry(
                add,
                "data-4.orc",
                3,
                5,
                &[],
                Some(vec![]),
                Some("file:///e/d-4.orc"),
            ),
            delta_entry(del, "data-5.orc", 3, 5, &[], None, None),
        ];
        let bytes = encode_manifest(&good, None, Default::default()).unwrap();
        for keep_slim in [false, true] {
            let got = reduced_text(&paths, &bytes, keep_slim).unwrap();
            assert_eq!(got, owned_text(&paths, &bytes, keep_slim).unwrap());
            assert_eq!(got.0.len(), 6);
            assert_eq!(got.1.len(), if keep_slim { 6 } else { 0 });
        }

        let hostile = [
            ("../x.orc", &[][..], None),
            ("a/b.orc", &[][..], None),
            ("..", &[][..], None),
            ("data-6.orc", &["../y.index"][..], None),
            (
                "data-7.orc",
                &["a/y.index"][..],
                Some("file:///ext/data-7.orc"),
            ),
            ("data-8.orc", &[][..], Some("not a location")),
        ];
        for (name, extras, external) in hostile {
            for kind in [add, del] {
                let mut entries = good.clone();
                entries.insert(2, delta_entry(kind, name, 1, 0, extras, None, external));
                let bytes = encode_manifest(&entries, None, Default::default()).unwrap();
                for keep_slim in [false, true] {
                    let got = reduced_text(&paths, &bytes, keep_slim);
                    let want = owned_text(&paths, &bytes, keep_slim);
                    assert_eq!(got, want, "{name} {extras:?} {kind:?} {keep_slim}");
                    // An ADD reduced to its key alone never locates its extra files.
                    let extras_only = !extras.is_empty() && kind == add && !keep_slim;
                    assert_eq!(got.is_err(), !extras_only, "{name} {kind:?} {keep_slim}");
                }
            }
        }
    }
}
