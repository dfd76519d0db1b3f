//! Planning shared by every capability that removes versions (snapshot expiry, changelog
//! expiry, tag deletion): which data files the removed versions free, which metadata files
//! nothing else names, and the crash-safe order in which they go.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use futures::stream::{self, StreamExt};

use crate::clean::report::FileClass;
use crate::clean::shared::deleter::{Deleter, Planned};
use crate::clean::shared::keys::SortedKeys;
use crate::clean::shared::names;
use crate::clean::shared::references::{
    read_index_files_sized, CandidateKeys, Protector, ReferenceReader, Slim,
};
use crate::error::{Error, Result};
use crate::hash::{child_key, location_key, FastMap, FastSet};
use crate::memory::MemoryBudget;
use crate::spec::manifest::FileKind;
use crate::spec::snapshot::Snapshot;
use crate::storage::Location;
use crate::table::{DataFileLocator, ManifestFiles, PathFactory, Table};

/// A data or changelog file that may become unreferenced, with its extra files (what
/// [`Candidates::push`] takes).
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Data or changelog data.
    pub class: FileClass,
    /// `_FILE_SIZE`.
    pub bytes: u64,
    /// Extra files beside it (`.index`, ...), deleted with it.
    pub extras: Vec<Location>,
}

impl Candidate {
    /// A candidate whose location's last segment is `name` (the name is taken from the
    /// location when it is pushed; the parameter stays for callers).
    pub fn new(class: FileClass, bytes: u64, extras: Vec<Location>, _name: &str) -> Candidate {
        Candidate {
            class,
            bytes,
            extras,
        }
    }
}

/// [`Entry::dir`] of a location kept whole ([`Candidates::whole`], indexed by
/// [`Entry::name`]).
const WHOLE: u32 = u32::MAX;
/// [`Entry::extras`] of a candidate without extra files.
const NO_EXTRAS: u32 = u32::MAX;

/// One candidate, compact: its interned directory, its name in the arena, size, class and, if
/// it has extra files, their index in the side table.
#[derive(Debug, Clone, Copy)]
struct Entry {
    bytes: u64,
    /// Offset of the name in the arena shifted left by 16, ORed with its length (an index into
    /// `whole` for a location kept whole).
    name: u64,
    dir: u32,
    extras: u32,
    /// Gathering order (of equal locations the first gathered is kept): lets the sort be an
    /// unstable one, which needs no scratch buffer (a stable sort's takes half the entries).
    seq: u32,
    class: FileClass,
}

/// What one entry holds besides its name.
const ENTRY_BYTES: u64 = std::mem::size_of::<Entry>() as u64;

/// Candidates with their locations, gathered in order; a location named twice counts once,
/// as it was first gathered.
///
/// Held compactly (issue 19): an entry is 32 bytes and its packed file name (about 27 bytes for
/// a Paimon data file, [`names`]), where a `Location` with its record took about 220. Each
/// location is split into its directory, interned (a table has few partition/bucket
/// directories next to millions of files), and its last segment, kept packed in one arena. A location that does not split back exactly is kept whole (none the table
/// layer makes). What it holds is charged to the run's [`MemoryBudget`], if it has one.
#[derive(Debug, Default)]
pub struct Candidates {
    dirs: Vec<Location>,
    dir_ids: FastMap<String, u32>,
    /// The names, packed ([`names::pack`]: a Paimon data file name takes about half).
    names: Vec<u8>,
    entries: Vec<Entry>,
    whole: Vec<Location>,
    extras: Vec<Vec<Location>>,
    budget: Option<MemoryBudget>,
    charged: u64,
}

impl Drop for Candidates {
    fn drop(&mut self) {
        if let Some(b) = &self.budget {
            b.release(self.charged);
        }
    }
}

impl Candidates {
    /// Empty, charging what it holds to `budget` (released when dropped).
    pub fn with_budget(budget: MemoryBudget) -> Candidates {
        let mut c = Candidates::default();
        c.budget = Some(budget);
        c
    }

    /// Add one (an earlier entry of the same location wins). Fails only past the memory bound.
    pub fn push(&mut self, location: Location, candidate: Candidate) -> Result<()> {
        let s = location.as_str();
        let split = s.rsplit_once('/').filter(|(_, n)| {
            // Packed, a name takes at most one byte more: its length fits 16 bits.
            !n.is_empty() && *n != "." && *n != ".." && n.len() < (1 << 16) - 1
        });
        let mut cost = ENTRY_BYTES;
        let mut at = None;
        if let Some((dir, name)) = split {
            if let Some(&d) = self.dir_ids.get(dir) {
                at = Some((d, name));
            } else if let Some(p) = location.parent() {
                // `dir + "/" + name` is then `location` exactly for every `name` without a
                // `/` (`Location::join` appends one segment after a separator).
                if p.as_str() == dir && self.dirs.len() < (WHOLE - 1) as usize {
                    let d = self.dirs.len() as u32;
                    cost += 2 * (dir.len() as u64 + 24) + 16;
                    self.dir_ids.insert(dir.to_string(), d);
                    self.dirs.push(p);
                    at = Some((d, name));
                }
            }
        }
        let (dir, name) = match at {
            Some((d, name)) => {
                let off = self.names.len();
                names::pack(name, &mut self.names);
                let len = self.names.len() - off;
                cost += len as u64;
                (d, ((off as u64) << 16) | len as u64)
            }
            None => {
                cost += 24 + s.len() as u64;
                self.whole.push(location.clone());
                (WHOLE, (self.whole.len() - 1) as u64)
            }
        };
        let extras = if candidate.extras.is_empty() {
            NO_EXTRAS
        } else {
            cost += 24
                + candidate
                    .extras
                    .iter()
                    .map(|x| 24 + x.as_str().len() as u64)
                    .sum::<u64>();
            self.extras.push(candidate.extras);
            (self.extras.len() - 1) as u32
        };
        let seq = u32::try_from(self.entries.len())
            .map_err(|_| Error::Internal("more than 2^32 candidate files".into()))?;
        self.entries.push(Entry {
            bytes: candidate.bytes,
            name,
            dir,
            extras,
            seq,
            class: candidate.class,
        });
        if let Some(b) = &self.budget {
            b.charge("candidate files", cost)?;
            self.charged += cost;
        }
        Ok(())
    }

    /// Add all of `later` after these (entries of these win on the same location). Fails only
    /// past the memory bound.
    pub fn append(&mut self, mut later: Candidates) -> Result<()> {
        let entries = std::mem::take(&mut later.entries);
        let mut extras = std::mem::take(&mut later.extras);
        for e in entries {
            let location = later.location_of(&e);
            let x = match extras.get_mut(e.extras as usize) {
                Some(x) => std::mem::take(x),
                None => Vec::new(),
            };
            self.push(
                location,
                Candidate {
                    class: e.class,
                    bytes: e.bytes,
                    extras: x,
                },
            )?;
        }
        Ok(())
    }

    /// Entries gathered so far (a location named twice counts twice).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True if nothing was gathered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every gathered location, in order (built one at a time).
    pub fn locations(&self) -> impl Iterator<Item = Location> + '_ {
        self.entries.iter().map(|e| self.location_of(e))
    }

    /// The packed last segment of an entry's location in the arena (not for an entry kept
    /// whole).
    fn packed_of(&self, e: &Entry) -> &[u8] {
        let off = (e.name >> 16) as usize;
        let len = (e.name & 0xffff) as usize;
        self.names.get(off..off + len).unwrap_or(&[])
    }

    /// The last segment of an entry's location, unpacked into `buf` (cleared first).
    fn name_into<'b>(&self, e: &Entry, buf: &'b mut String) -> &'b str {
        buf.clear();
        if e.dir == WHOLE {
            buf.push_str(self.whole[e.name as usize].name());
        } else {
            names::unpack_into(self.packed_of(e), buf);
        }
        buf.as_str()
    }

    /// An entry's location, rebuilt.
    fn location_of(&self, e: &Entry) -> Location {
        match self.dirs.get(e.dir as usize) {
            Some(d) => d.join(&names::unpack(self.packed_of(e))),
            None => self.whole[e.name as usize].clone(),
        }
    }

    /// True if `l` is the location of `e`, compared without rebuilding it.
    fn is_at(&self, e: &Entry, l: &Location) -> bool {
        match self.dirs.get(e.dir as usize) {
            Some(d) => {
                let mut buf = String::new();
                let name = self.name_into(e, &mut buf);
                let s = l.as_str();
                s.len() == d.as_str().len() + 1 + name.len()
                    && s.starts_with(d.as_str())
                    && s.ends_with(name)
                    && s.as_bytes()[d.as_str().len()] == b'/'
            }
            None => self.whole[e.name as usize] == *l,
        }
    }

    /// [`crate::hash::location_key`] of an entry's location, without rebuilding it (`buf`
    /// holds its name meanwhile).
    fn key_of(&self, e: &Entry, buf: &mut String) -> u64 {
        match self.dirs.get(e.dir as usize) {
            Some(d) => child_key(d.as_str(), self.name_into(e, buf)),
            None => location_key(self.whole[e.name as usize].as_str()),
        }
    }

    /// The extra files of an entry.
    fn extras_of(&self, e: &Entry) -> &[Location] {
        self.extras
            .get(e.extras as usize)
            .map_or(&[][..], Vec::as_slice)
    }

    /// Sort by directory, then name, and keep each location once (the first gathered). The
    /// order is fixed by the locations alone, so a dry run and the real run plan alike.
    fn sort_dedup(&mut self) {
        // Directories ranked by their strings: entries compare by (rank, name).
        let mut order: Vec<u32> = (0..self.dirs.len() as u32).collect();
        order.sort_by(|a, b| self.dirs[*a as usize].cmp(&self.dirs[*b as usize]));
        let mut rank = vec![0u32; self.dirs.len()];
        for (r, d) in order.into_iter().enumerate() {
            rank[d as usize] = r as u32;
        }
        let mut entries = std::mem::take(&mut self.entries);
        {
            let this = &*self;
            let rank_of = |e: &Entry| rank.get(e.dir as usize).copied().unwrap_or(WHOLE);
            // Of equal locations the first gathered (lowest `seq`) comes first and is kept.
            entries.sort_unstable_by(|a, b| {
                rank_of(a)
                    .cmp(&rank_of(b))
                    .then_with(|| match (a.dir, b.dir) {
                        (WHOLE, WHOLE) => {
                            this.whole[a.name as usize].cmp(&this.whole[b.name as usize])
                        }
                        _ => names::cmp_packed(this.packed_of(a), this.packed_of(b)),
                    })
                    .then_with(|| a.seq.cmp(&b.seq))
            });
            entries.dedup_by(|later, earlier| {
                later.dir == earlier.dir
                    && match later.dir {
                        WHOLE => {
                            this.whole[later.name as usize] == this.whole[earlier.name as usize]
                        }
                        _ => this.packed_of(later) == this.packed_of(earlier),
                    }
            });
        }
        entries.shrink_to_fit();
        self.entries = entries;
        // The arena grew by doubling: give back its slack.
        self.names.shrink_to_fit();
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
    let mut out = Candidates::with_budget(rr.memory());
    // This list's DELETEs by location key, in the order they came.
    let mut per_list: FastMap<u64, (Location, Candidate)> = FastMap::default();
    let mut current = None;
    while let Some(next) = read.next().await {
        let (i, reduced) = next?;
        if current != Some(i) {
            take_list(&mut out, &mut per_list)?;
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
    take_list(&mut out, &mut per_list)?;
    Ok(out)
}

/// Move one list's remaining DELETEs into `out`. Their order among themselves does not matter:
/// they are distinct locations, and between lists the earlier list's entry wins.
fn take_list(
    out: &mut Candidates,
    per_list: &mut FastMap<u64, (Location, Candidate)>,
) -> Result<()> {
    for (_, (l, c)) in per_list.drain() {
        out.push(l, c)?;
    }
    Ok(())
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

/// The sorted candidates of a plan with, per slot (see [`DeletionPlan::from_parts`]), whether
/// it may be deleted.
#[derive(Debug)]
struct KeptCandidates {
    cands: Candidates,
    deletable: Vec<bool>,
    /// First slot of each side-table entry of extra files.
    extra_base: Vec<u32>,
}

impl KeptCandidates {
    /// The planned files of entry `e` (at index `i`): none if the file is protected (its
    /// extra files then stay too), else the file and its deletable extra files.
    fn planned(&self, i: usize, e: &Entry) -> impl Iterator<Item = Planned> + '_ {
        let keep = self.deletable.get(i).copied().unwrap_or(false);
        let base = self
            .extra_base
            .get(e.extras as usize)
            .map_or(0, |b| *b as usize);
        let class = e.class;
        let main = keep.then(|| Planned {
            location: self.cands.location_of(e),
            class,
            bytes: Some(e.bytes),
        });
        let extras = if keep { self.cands.extras_of(e) } else { &[] };
        main.into_iter().chain(
            extras
                .iter()
                .enumerate()
                .filter(move |(j, _)| self.deletable.get(base + j).copied().unwrap_or(false))
                .map(move |(_, x)| Planned {
                    location: x.clone(),
                    class,
                    bytes: None,
                }),
        )
    }
}

/// Data or changelog data files of a plan, held as the compact candidates they came from
/// (about 32 bytes and the name per file, see [`Candidates`]): each file's [`Planned`] is
/// built as it is read, so a plan of millions of files never holds their locations at once.
#[derive(Debug, Clone, Default)]
pub struct PlannedFiles {
    from: Option<Arc<KeptCandidates>>,
    changelog: bool,
    len: usize,
}

impl PlannedFiles {
    fn of(kept: &Arc<KeptCandidates>, changelog: bool) -> PlannedFiles {
        // Counted without building the locations.
        let len = kept
            .cands
            .entries
            .iter()
            .enumerate()
            .filter(|(i, e)| {
                (e.class == FileClass::ChangelogData) == changelog
                    && kept.deletable.get(*i).copied().unwrap_or(false)
            })
            .map(|(_, e)| {
                let base = kept
                    .extra_base
                    .get(e.extras as usize)
                    .map_or(0, |b| *b as usize);
                1 + (0..kept.cands.extras_of(e).len())
                    .filter(|j| kept.deletable.get(base + j).copied().unwrap_or(false))
                    .count()
            })
            .sum();
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

    /// The planned files in order: each file, then its extra files.
    pub fn iter(&self) -> impl Iterator<Item = Planned> + Send + '_ {
        let changelog = self.changelog;
        self.from.iter().flat_map(move |k| {
            k.cands
                .entries
                .iter()
                .enumerate()
                .filter(move |(_, e)| (e.class == FileClass::ChangelogData) == changelog)
                .flat_map(move |(i, e)| k.planned(i, e))
        })
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
    pub async fn from_parts(
        rr: &mut ReferenceReader<'_>,
        table: &Table,
        candidates: Candidates,
        removed: RemovedMetadata,
        protectors: &[Protector],
    ) -> Result<DeletionPlan> {
        let mut cands = candidates;
        cands.sort_dedup();
        let n = cands.entries.len();
        // Every location a candidate would delete has a slot: entry i's file is slot i, the
        // extra files of all entries follow; protection may name any of them (a crafted
        // entry's "extra file" can be a file some version reads).
        let mut extra_base = vec![u32::MAX; cands.extras.len()];
        let mut extra_slots: Vec<(u32, u32)> = Vec::new();
        for e in &cands.entries {
            if e.extras != NO_EXTRAS {
                extra_base[e.extras as usize] = (n + extra_slots.len()) as u32;
                for j in 0..cands.extras_of(e).len() {
                    extra_slots.push((e.extras, j as u32));
                }
            }
        }
        let slots = n + extra_slots.len();
        let budget = rr.memory();
        // The sorted keys with their slots and the per-slot flags, held until protection ends
        // (the keys are also protection's filter): about 15 bytes a slot.
        let index_bytes = slots as u64 * (8 + 4 + 2 + 1);
        budget.charge("the candidates' lookup index", index_bytes)?;
        // Every slot's location key, sorted, with the slot of each in a parallel vector: a key
        // hit is confirmed on the exact location.
        let mut unsorted: Vec<u64> = Vec::with_capacity(slots);
        let mut buf = String::new();
        for e in &cands.entries {
            unsorted.push(cands.key_of(e, &mut buf));
        }
        for (x, j) in &extra_slots {
            unsorted.push(location_key(
                cands.extras[*x as usize][*j as usize].as_str(),
            ));
        }
        let (sorted, slot_at) = sort_with_slots(unsorted);
        let filter = Arc::new(CandidateKeys::new(sorted));
        let keys = filter.sorted();
        let at_slot = |slot: u32, l: &Location| -> bool {
            match cands.entries.get(slot as usize) {
                Some(e) => cands.is_at(e, l),
                None => {
                    let (x, j) = extra_slots[slot as usize - n];
                    cands.extras[x as usize][j as usize] == *l
                }
            }
        };
        // The lowest slot at `l`, if any.
        let find = |l: &Location| -> Option<u32> {
            slot_at[keys.range(location_key(l.as_str()))]
                .iter()
                .copied()
                .filter(|s| at_slot(*s, l))
                .min()
        };
        // Per slot: may it be deleted? (Protection marks the slots it needs as it goes.)
        let mut deletable = vec![true; slots];
        rr.protect_among(
            protectors,
            filter.clone(),
            |l| find(l).is_some(),
            |l| {
                if let Some(i) = find(l) {
                    deletable[i as usize] = false;
                }
            },
        )
        .await?;
        // Protection's reduced manifests are not needed again.
        rr.release_slim();
        // Every slot of a location gathered twice follows the others: slots at one location
        // share a key, so only groups of equal keys are compared.
        let keys = filter.sorted().keys();
        let mut g = 0;
        while g < keys.len() {
            let k = keys[g];
            let end = g + keys[g..].iter().take_while(|key| **key == k).count();
            if end - g > 1 {
                for a in g..end {
                    let sa = slot_at[a];
                    if deletable[sa as usize] {
                        continue;
                    }
                    let at = match cands.entries.get(sa as usize) {
                        Some(e) => cands.location_of(e),
                        None => {
                            let (x, j) = extra_slots[sa as usize - n];
                            cands.extras[x as usize][j as usize].clone()
                        }
                    };
                    for sb in &slot_at[g..end] {
                        if at_slot(*sb, &at) {
                            deletable[*sb as usize] = false;
                        }
                    }
                }
            }
            g = end;
        }
        drop(filter);
        drop(slot_at);
        drop(extra_slots);
        budget.release(index_bytes);
        let referenced = rr.referenced_metadata(protectors).await?;
        // Nor are the lists it read: the plan holds what it needs.
        rr.release_caches();
        let mut plan = DeletionPlan::default();
        let kept = Arc::new(KeptCandidates {
            cands,
            deletable,
            extra_base,
        });
        plan.data = PlannedFiles::of(&kept, false);
        plan.changelog_data = PlannedFiles::of(&kept, true);

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
            let mut dirs: FastSet<Location> = FastSet::default();
            for p in self.data.iter().chain(self.changelog_data.iter()) {
                if let Some(d) = p.location.parent() {
                    dirs.insert(d);
                }
            }
            dirs.into_iter().collect()
        } else {
            Vec::new()
        };
        deleter
            .delete_each("data files", self.data.len() as u64, self.data.iter())
            .await?;
        deleter
            .delete_each(
                "changelog files",
                self.changelog_data.len() as u64,
                self.changelog_data.iter(),
            )
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

/// `keys` (indexed by slot) sorted, with the slot of each sorted key (ordered by key, then
/// slot). The keys are reordered in place: the only other memory is the slots and a flag a
/// key, where sorting (key, slot) pairs takes 16 bytes a key.
fn sort_with_slots(mut keys: Vec<u64>) -> (SortedKeys, Vec<u32>) {
    let mut slots: Vec<u32> = (0..keys.len() as u32).collect();
    slots.sort_unstable_by_key(|s| (keys[*s as usize], *s));
    // keys[i] becomes keys[slots[i]], one cycle of the permutation at a time.
    let mut done = vec![false; keys.len()];
    for start in 0..keys.len() {
        if done[start] {
            continue;
        }
        let first = keys[start];
        let mut at = start;
        loop {
            done[at] = true;
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
    fn compact_candidates_give_back_exact_locations_sorted_once_first_wins() {
        let budget = MemoryBudget::default();
        let mut c = Candidates::with_budget(budget.clone());
        c.push(
            loc("file:///t/dt=2/bucket-0/b.orc"),
            cand(FileClass::Data, 2, &[]),
        )
        .unwrap();
        c.push(
            loc("file:///t/dt=1/bucket-0/a.orc"),
            cand(FileClass::Data, 1, &["file:///t/dt=1/bucket-0/a.orc.index"]),
        )
        .unwrap();
        // The same location again: the first gathered wins.
        c.push(
            loc("file:///t/dt=2/bucket-0/b.orc"),
            cand(FileClass::ChangelogData, 99, &[]),
        )
        .unwrap();
        // A store root has no directory to intern: kept whole.
        c.push(loc("memory:///x"), cand(FileClass::Data, 3, &[]))
            .unwrap();
        assert_eq!(c.len(), 4);
        assert!(budget.used() > 0);
        let mut later = Candidates::default();
        later
            .push(
                loc("file:///t/dt=1/bucket-0/c.orc"),
                cand(FileClass::ChangelogData, 4, &[]),
            )
            .unwrap();
        c.append(later).unwrap();
        c.sort_dedup();
        let got: Vec<(String, FileClass, u64)> = c
            .entries
            .iter()
            .map(|e| (c.location_of(e).as_str().to_string(), e.class, e.bytes))
            .collect();
        assert_eq!(
            got,
            vec![
                ("file:///t/dt=1/bucket-0/a.orc".into(), FileClass::Data, 1),
                (
                    "file:///t/dt=1/bucket-0/c.orc".into(),
                    FileClass::ChangelogData,
                    4
                ),
                ("file:///t/dt=2/bucket-0/b.orc".into(), FileClass::Data, 2),
                ("memory:///x".into(), FileClass::Data, 3),
            ]
        );
        for e in &c.entries {
            let l = c.location_of(e);
            assert!(c.is_at(e, &l));
            assert_eq!(c.key_of(e, &mut String::new()), location_key(l.as_str()));
            assert!(!c.is_at(e, &loc("file:///t/dt=1/bucket-0/zz.orc")));
        }
        assert_eq!(
            c.extras_of(&c.entries[0]),
            &[loc("file:///t/dt=1/bucket-0/a.orc.index")][..]
        );
        let used = budget.used();
        drop(c);
        assert!(used > 0 && budget.used() == 0, "released on drop");
    }

    #[test]
    fn an_entry_stays_32_bytes() {
        assert_eq!(std::mem::size_of::<Entry>(), 32);
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

    #[test]
    fn candidates_past_the_bound_fail() {
        let mut c = Candidates::with_budget(MemoryBudget::new(Some(40)));
        let e = c
            .push(
                loc("file:///t/dt=1/bucket-0/a-long-enough-name.orc"),
                cand(FileClass::Data, 1, &[]),
            )
            .unwrap_err();
        assert!(e.to_string().contains("candidate files"), "{e}");
    }
}
