//! The decision (on the driver, spec §5.6 step 6): with every plan unit's result merged, list
//! the versions again until no new one appears (reading the new ones' manifests here), judge
//! the metadata that could not be read, keep every referenced candidate, every candidate whose
//! name is referenced at another location and every candidate the veto keeps, check every
//! remaining path, and cut the deletions into delete units.
//!
//! A candidate is kept when the key of its location is referenced; also when only the key of
//! its *name* is: that means our path resolution disagrees with the writer's (e.g. partition
//! options changed since, P18), and such candidates are kept and reported rather than risked.
//! A key collision can only keep a file.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::clean::control::RunControl;
use crate::clean::report::FileClass;
use crate::clean::shared::deleter::{Deleter, Planned};
use crate::clean::shared::kinds::KindRules;
use crate::error::{Error, Result};
use crate::hash::{name_key, DirKeys};
use crate::memory::MemoryBudget;
use crate::storage::{Location, Storage};
use crate::table::Table;

use super::codec::{from_json_bytes, to_json_bytes, Kind};
use super::config::{vetoed, OrphanConfig};
use super::keyset::KeyIndex;
use super::partial::{finish_merge, merge_into, Deleted, ListedDir, Partial};
use super::planner::{new_plan_id, numbered, read_works, State};
use super::refs;
use super::shard;
use super::tracker::{Tracker, MAX_ROUNDS};
use super::work_unit::{DeleteItem, Reach, Unit, Work};

/// Files per delete unit.
pub(crate) const FILES_PER_DELETE_UNIT: usize = 10_000;

/// Deletion phases, in order: data directories first, manifest lists and temp files last.
pub(crate) const PHASES: [&str; 6] = [
    "orphan data files",
    "orphan index files",
    "orphan statistics",
    "orphan manifests",
    "orphan manifest lists",
    "orphan temp files",
];

/// The report's fields decided on the driver.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct ReportBase {
    pub older_than_ms: i64,
    pub files_listed: u64,
    pub candidates: u64,
    pub referenced: u64,
    pub vetoed: u64,
    pub kept_name_referenced_elsewhere: Vec<String>,
    pub branches_without_schema: Vec<String>,
    pub versions_read: u64,
    pub manifests_read: u64,
    pub external_roots: Vec<String>,
    pub skipped: Vec<String>,
}

/// What the finish step needs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Decision {
    /// The id the delete units carry.
    pub plan: u64,
    /// Delete units: ids `0..units` (when `unit_ranges` is empty).
    pub units: u32,
    /// Delete units of a sharded decision: ids `first..first + count` of each shard.
    #[serde(default)]
    pub unit_ranges: Vec<(u32, u32)>,
    /// A dry run (no delete units; `dry_deleted` lists what would be deleted).
    pub dry_run: bool,
    /// When planning started (epoch ms).
    pub started_ms: i64,
    /// The report so far.
    pub base: ReportBase,
    /// Data directories to remove when empty afterwards, with their data root.
    pub prune: Vec<(String, String)>,
    /// Roots besides the table root under which deletions are allowed.
    pub delete_roots: Vec<String>,
    /// In a dry run: what would be deleted, as `(phase, path, class index, bytes)`.
    pub dry_deleted: Vec<(u8, String, u8, u64)>,
}

impl Decision {
    /// Serializes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        to_json_bytes(Kind::Decision, self)
    }

    /// Deserializes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        from_json_bytes(Kind::Decision, bytes)
    }

    /// What a dry run would delete, as partial-result records.
    pub fn dry_records(&self) -> Result<Vec<Deleted>> {
        self.dry_deleted
            .iter()
            .map(|(phase, path, class, bytes)| {
                Ok(Deleted {
                    phase: *phase,
                    path: path.clone(),
                    class: class_of(*class)?,
                    bytes: *bytes,
                })
            })
            .collect()
    }
}

pub(crate) fn class_index(c: FileClass) -> u8 {
    FileClass::ALL.iter().position(|x| *x == c).unwrap_or(0) as u8
}

pub(crate) fn class_of(i: u8) -> Result<FileClass> {
    FileClass::ALL
        .get(i as usize)
        .copied()
        .ok_or_else(|| Error::InvalidArgument(format!("unknown file class {i}")))
}

/// Fails unless `merged` holds the results of exactly the units `0..units` of plan `plan`.
pub(crate) fn check_complete(merged: &Partial, plan: u64, units: u32, what: &str) -> Result<()> {
    check_ranges(merged, plan, &[(0, units)], what)
}

/// Fails unless `merged` holds the results of exactly the units of `ranges` (`(first, count)`
/// each) of plan `plan`.
pub(crate) fn check_ranges(
    merged: &Partial,
    plan: u64,
    ranges: &[(u32, u32)],
    what: &str,
) -> Result<()> {
    if merged.plan != 0 && merged.plan != plan {
        return Err(Error::InvalidArgument(format!(
            "the {what} results belong to another plan"
        )));
    }
    let have: BTreeSet<u32> = merged.units.iter().copied().collect();
    let total: u64 = ranges.iter().map(|(_, n)| u64::from(*n)).sum();
    let wanted = |u: u32| {
        ranges
            .iter()
            .any(|(first, n)| u >= *first && u64::from(u) < u64::from(*first) + u64::from(*n))
    };
    let mut missing = ranges
        .iter()
        .flat_map(|(first, n)| (0..*n).map(move |i| first.saturating_add(i)))
        .filter(|u| !have.contains(u));
    if let Some(first) = missing.next() {
        return Err(Error::InvalidArgument(format!(
            "{} of {total} {what} results are missing (unit {first} first); execute every unit \
             and merge every result; nothing deleted",
            1 + missing.count()
        )));
    }
    if let Some(extra) = have.iter().find(|u| !wanted(**u)) {
        return Err(Error::InvalidArgument(format!(
            "unit {extra} is not a {what} unit of this plan"
        )));
    }
    Ok(())
}

/// The deletion phase of a candidate in a data directory or not, of class `class`.
fn phase_of(in_data_dir: bool, class: FileClass) -> u8 {
    match (in_data_dir, class) {
        (true, _) => 0,
        (false, FileClass::Index) => 1,
        (false, FileClass::Statistics) => 2,
        (false, FileClass::Manifest) => 3,
        (false, FileClass::ManifestList | FileClass::IndexManifest) => 4,
        (false, _) => 5,
    }
}

/// What the keys say of one candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Its location is referenced: kept, counted as referenced.
    Referenced,
    /// Only its name is referenced, at another location: kept and reported.
    NameElsewhere,
    /// Not referenced: deleted unless the veto keeps it.
    Unreferenced,
}

/// The verdict of every candidate of `refs` (directory by directory, file by file), counting
/// the referenced ones into `referenced`, and how many unreferenced candidates each deletion
/// phase may get (an upper bound: the veto may keep some). Names in temporary files
/// ([`Partial::name_logs`]) are read once, against the names of the candidates no location
/// references (sorted in memory; a few per cent of the candidates).
pub(crate) fn verdicts(refs: &Partial, referenced: &mut u64) -> Result<(Vec<Verdict>, Vec<usize>)> {
    let locations = KeyIndex::new(&refs.locations);
    let names = KeyIndex::new(&refs.names);
    let logged = !refs.name_logs.is_empty();
    let mut out = Vec::with_capacity(refs.dirs.iter().map(|d| d.files.len()).sum());
    let mut open: Vec<u64> = Vec::new();
    for d in &refs.dirs {
        let dir = DirKeys::new(&d.dir);
        for f in &d.files {
            let v = if locations.contains(shard::child(&dir, &f.name)) {
                *referenced += 1;
                Verdict::Referenced
            } else {
                let name = name_key(&f.name);
                if names.contains(name) {
                    Verdict::NameElsewhere
                } else {
                    if logged {
                        open.push(name);
                    }
                    Verdict::Unreferenced
                }
            };
            out.push(v);
        }
    }
    // The logged names: which of the open names they hold.
    let mut found = Vec::new();
    let open = if logged {
        open.sort_unstable();
        open.dedup();
        found = vec![false; open.len()];
        let index = KeyIndex::new(&open);
        refs.name_logs.for_each(|run| {
            for k in run {
                let r = index.range(*k);
                if let Some(hit) = found.get_mut(r.start..r.end) {
                    hit.iter_mut().for_each(|h| *h = true);
                }
            }
        })?;
        open
    } else {
        Vec::new()
    };
    let open = KeyIndex::new(&open);
    let mut per_phase = vec![0usize; PHASES.len()];
    let mut verdict = out.iter_mut();
    for d in &refs.dirs {
        for f in &d.files {
            let Some(v) = verdict.next() else {
                return Err(Error::Internal(
                    "orphan decision: a candidate without a verdict; nothing deleted".into(),
                ));
            };
            if *v != Verdict::Unreferenced {
                continue;
            }
            if logged {
                let r = open.range(name_key(&f.name));
                if !r.is_empty() && found.get(r.start).copied().unwrap_or(false) {
                    *v = Verdict::NameElsewhere;
                    continue;
                }
            }
            per_phase[phase_of(d.data_root.is_some(), f.class) as usize] += 1;
        }
    }
    Ok((out, per_phase))
}

/// How many of the young files' location keys ([`Partial::young`]) are referenced.
pub(crate) fn young_referenced(refs: &Partial) -> u64 {
    if refs.young.is_empty() {
        return 0;
    }
    let locations = KeyIndex::new(&refs.locations);
    refs.young
        .iter()
        .filter(|k| locations.contains(**k))
        .count() as u64
}

/// Decides. `main` is the main branch, `state` the plan's state and `merged` every plan unit's
/// result merged; `memory` the run's budget. Returns the decision and the delete units (none
/// in a dry run).
///
/// The steps: read the versions that appeared since planning ([`read_new_versions`]), judge
/// what could not be read ([`versions_read`]), count ([`report_base`]), give each candidate
/// its verdict by the keys alone ([`verdicts`]), then plan the deletions with the veto
/// ([`plan_deletions`]), check every one of them before any, and cut them into delete units
/// ([`delete_works`]) or list them for a dry run ([`dry_deleted`]).
pub(crate) async fn decide(
    main: &Table,
    cfg: &OrphanConfig,
    ctl: &RunControl,
    memory: &MemoryBudget,
    mut state: State,
    merged: Partial,
) -> Result<(Decision, Vec<Unit>)> {
    check_complete(&merged, state.plan, state.units, "plan unit")?;
    // The candidates and keys, held until the deletions are planned.
    let held = merged.key_bytes() + merged.candidate_bytes();
    memory.charge("orphan removal's candidates and reference keys", held)?;
    let storage = main.storage().clone();
    let mut found = std::mem::take(&mut state.found);
    read_new_versions(main, ctl, &mut state.tracker, &mut found).await?;
    // Into the large result, so that its keys and candidates are not copied.
    let mut refs = merged;
    merge_into(&mut refs, found)?;
    finish_merge(&mut refs)?;
    let versions_read = versions_read(&storage, main, &state.tracker, &refs).await?;
    ctl.cancel.check()?;
    let mut base = report_base(&state, &mut refs, versions_read);
    ctl.progress("list candidates", base.candidates, base.candidates, 0);

    // Keep what is referenced, by location or by name, and what the veto keeps. First each
    // candidate's verdict by the keys alone (one byte each); then the keys go, and only then
    // are the locations of the files to delete built: the keys and the deletion plan are
    // never held together.
    let (verdicts, per_phase) = verdicts(&refs, &mut base.referenced)?;
    refs.locations = Vec::new();
    refs.names = Vec::new();
    refs.name_logs = Default::default();
    let key_bytes = held.saturating_sub(refs.candidate_bytes());
    memory.release(key_bytes);
    let candidates_held = held - key_bytes;
    let mut prune: Vec<(String, String)> = std::mem::take(&mut refs.empty_dirs);
    let dirs = std::mem::take(&mut refs.dirs);
    let (mut phases, kept_elsewhere) =
        plan_deletions(cfg, dirs, verdicts, per_phase, &mut base, &mut prune)?;
    // The candidates are not needed any more.
    drop(refs);
    memory.release(candidates_held);
    base.kept_name_referenced_elsewhere = kept_elsewhere
        .iter()
        .map(|l| main.paths().display(l))
        .collect();
    for p in &mut phases {
        // In place (a stable sort would take a buffer of half the plan); ties broken by class
        // and size, so the order depends on the values alone (dry run and real run alike).
        p.sort_unstable_by(|a, b| {
            (&a.location, a.class, a.bytes).cmp(&(&b.location, b.class, b.bytes))
        });
    }
    prune.sort();
    prune.dedup();
    ctl.cancel.check()?;

    // Every check (root, kind, no symlinked directory) for every deletion, before any.
    let roots: Vec<Location> = state
        .delete_roots
        .iter()
        .map(|r| Location::parse(r))
        .collect::<Result<_>>()?;
    let delete_storage = storage.with_delete_roots(&roots);
    let checker =
        Deleter::new(&delete_storage, KindRules::of(main), ctl, true).with_memory(memory.clone());
    checker.check_plan(phases.iter().flatten()).await?;

    let mut decision = Decision {
        plan: new_plan_id(),
        units: 0,
        unit_ranges: Vec::new(),
        dry_run: state.dry_run,
        started_ms: state.started_ms,
        base,
        prune,
        delete_roots: state.delete_roots.clone(),
        dry_deleted: Vec::new(),
    };
    if state.dry_run {
        decision.dry_deleted = dry_deleted(delete_storage.root(), phases);
        return Ok((decision, Vec::new()));
    }
    let works = delete_works(&state.delete_roots, phases);
    let units = numbered(decision.plan, 0, &Reach::of(main), works)?;
    decision.units = units.len() as u32;
    Ok((decision, units))
}

/// Reads the references of the versions that appeared since planning into `found`, listing
/// again until no new one appears (at most [`MAX_ROUNDS`] listings, else a conflict).
pub(crate) async fn read_new_versions(
    main: &Table,
    ctl: &RunControl,
    tracker: &mut Tracker,
    found: &mut Partial,
) -> Result<()> {
    let io = ctl.io_concurrency.max(1);
    loop {
        ctl.cancel.check()?;
        let new = tracker.discover(main, io).await?;
        if new.is_empty() {
            return Ok(());
        }
        if tracker.rounds == MAX_ROUNDS {
            return Err(Error::Conflict(format!(
                "new snapshots, tags or changelogs kept appearing over {MAX_ROUNDS} listings; nothing deleted"
            )));
        }
        tracker.rounds += 1;
        tracing::debug!(
            versions = new.len(),
            round = tracker.rounds,
            "reading references"
        );
        let from = tracker.read_lists(main, new, io, found).await?;
        let items = tracker.plan_reads(from);
        // Read here, through the same code as a read unit.
        for work in read_works(tracker, items) {
            if let Work::Read { branches, items } = work {
                refs::read(main, &branches, items, io, ctl, found).await?;
            }
        }
    }
}

/// Judges the metadata that could not be read ([`Tracker::judge`]) and returns how many
/// versions' references were read. Refuses a run whose references cannot be complete: snapshot
/// files exist but none was read, or snapshots claim records but no manifest entry was read.
pub(crate) async fn versions_read(
    storage: &Storage,
    main: &Table,
    tracker: &Tracker,
    refs: &Partial,
) -> Result<u64> {
    let dropped = tracker.judge(storage, main, &refs.failures).await?;
    let kept = (0..tracker.versions.len()).filter(|i| !dropped.contains(i));
    let mut versions_read = 0u64;
    let mut records_claimed = false;
    for i in kept {
        versions_read += 1;
        records_claimed |= tracker.versions[i].records;
    }
    if tracker.snapshots_listed > 0 && versions_read == 0 {
        return Err(Error::Conflict(
            "snapshot files exist but none could be read; nothing deleted".into(),
        ));
    }
    if records_claimed && refs.entries_seen == 0 {
        return Err(Error::Conflict(
            "snapshots claim records but no manifest entry was read; nothing deleted".into(),
        ));
    }
    if refs.unresolved > 0 {
        tracing::warn!(
            entries = refs.unresolved,
            "references whose location could not be computed are protected by name"
        );
    }
    Ok(versions_read)
}

/// The report's counts before the verdicts. Young files (list units run without the
/// references) that a version references count as referenced candidates, as the
/// single-process run counts them while listing; their keys are released here.
pub(crate) fn report_base(state: &State, refs: &mut Partial, versions_read: u64) -> ReportBase {
    let young_referenced = young_referenced(refs);
    refs.young = Vec::new();
    let mut base = ReportBase {
        older_than_ms: state.cutoff_ms,
        files_listed: refs.files_listed,
        candidates: refs.candidates() + young_referenced,
        referenced: refs.referenced + young_referenced,
        branches_without_schema: state.tracker.branches_without_schema.clone(),
        versions_read,
        manifests_read: refs.manifests_read,
        external_roots: state.external_roots.clone(),
        skipped: state.skipped.clone(),
        ..Default::default()
    };
    base.skipped.extend(refs.errors.iter().cloned());
    base
}

/// The deletions, per phase, of the candidates in `dirs` by their `verdicts` (in the same
/// order): referenced ones are skipped, those referenced by name elsewhere kept and returned
/// (sorted), unreferenced ones asked about through the veto (counted into `base.vetoed`) and
/// otherwise planned. A data directory that loses a file goes to `prune`.
pub(crate) fn plan_deletions(
    cfg: &OrphanConfig,
    dirs: Vec<ListedDir>,
    verdicts: Vec<Verdict>,
    per_phase: Vec<usize>,
    base: &mut ReportBase,
    prune: &mut Vec<(String, String)>,
) -> Result<(Vec<Vec<Planned>>, Vec<Location>)> {
    let mut kept_elsewhere: Vec<Location> = Vec::new();
    let mut phases: Vec<Vec<Planned>> = per_phase.iter().map(|n| Vec::with_capacity(*n)).collect();
    let mut verdict = verdicts.iter();
    for d in dirs {
        let dir = Location::parse(&d.dir)?;
        let mut any = false;
        for f in &d.files {
            match verdict.next() {
                Some(Verdict::Referenced) => continue,
                Some(Verdict::NameElsewhere) => {
                    let loc = dir.child(&f.name);
                    tracing::warn!(path = %loc, "kept: its name is referenced at another location");
                    kept_elsewhere.push(loc);
                }
                Some(Verdict::Unreferenced) => {
                    // Copied at its exact length: a child's buffer grew by doubling, and
                    // every planned deletion holds its location until the deletions.
                    let loc = dir.child(&f.name).clone();
                    if vetoed(cfg, &loc)? {
                        base.vetoed += 1;
                    } else {
                        any = true;
                        let phase = phase_of(d.data_root.is_some(), f.class);
                        phases[phase as usize].push(Planned {
                            location: loc,
                            class: f.class,
                            bytes: Some(f.size),
                        });
                    }
                }
                None => {
                    return Err(Error::Internal(
                        "orphan decision: a candidate without a verdict; nothing deleted".into(),
                    ))
                }
            }
        }
        if any {
            if let Some(root) = d.data_root {
                prune.push((d.dir, root));
            }
        }
    }
    kept_elsewhere.sort();
    Ok((phases, kept_elsewhere))
}

/// What a dry run would delete, as `(phase, path, class index, bytes)`, paths relative to
/// `root` where possible.
pub(crate) fn dry_deleted(
    root: &Location,
    phases: Vec<Vec<Planned>>,
) -> Vec<(u8, String, u8, u64)> {
    let mut out = Vec::with_capacity(phases.iter().map(Vec::len).sum());
    for (phase, files) in phases.into_iter().enumerate() {
        for p in files {
            let path = p
                .location
                .relative_to(root)
                .map(String::from)
                .unwrap_or_else(|| p.location.as_str().to_string());
            out.push((
                phase as u8,
                path,
                class_index(p.class),
                p.bytes.unwrap_or(0),
            ));
        }
    }
    out
}

/// The planned deletions cut into delete units of at most [`FILES_PER_DELETE_UNIT`] files, in
/// phase order; each unit may delete under `delete_roots`.
pub(crate) fn delete_works(delete_roots: &[String], phases: Vec<Vec<Planned>>) -> Vec<Work> {
    let mut works = Vec::new();
    for (phase, files) in phases.into_iter().enumerate() {
        // Consumed as the units are built: the paths are not held twice.
        let mut files = files.into_iter().peekable();
        while files.peek().is_some() {
            works.push(Work::Delete {
                delete_roots: delete_roots.to_vec(),
                files: files
                    .by_ref()
                    .take(FILES_PER_DELETE_UNIT)
                    .map(|p| DeleteItem {
                        phase: phase as u8,
                        location: p.location.as_str().to_string(),
                        class: class_index(p.class),
                        bytes: p.bytes.unwrap_or(0),
                    })
                    .collect(),
            });
        }
    }
    works
}
