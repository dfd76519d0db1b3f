//! The deletion plan of a run that removes versions (snapshot expiry, changelog expiry, tag
//! deletion): the candidates the removed versions free ([`crate::clean::expiry::removed`]) and
//! their metadata ([`RemovedMetadata`]), minus every location a kept version reads
//! ([`DeletionPlan::from_parts`]), deleted in crash-safe order ([`DeletionPlan::execute`]).

pub mod candidates;
mod files;
mod metadata;

use std::collections::HashSet;
use std::sync::Arc;

use crate::clean::expiry::plan::candidates::Bits;
pub use crate::clean::expiry::plan::candidates::{Candidate, Candidates};
pub use crate::clean::expiry::plan::files::PlannedFiles;
use crate::clean::expiry::plan::files::{sort_with_slots, KeptCandidates};
use crate::clean::expiry::plan::metadata::MetadataCandidates;
pub use crate::clean::expiry::plan::metadata::{MetadataScope, RemovedMetadata};
use crate::clean::expiry::protected::among::ReferencedMetadata;
use crate::clean::expiry::protected::{CandidateKeys, Protector, ReferenceReader};
use crate::clean::shared::deleter::{Deleter, Planned, Represented};
use crate::clean::shared::keys::SortedKeys;
use crate::error::{Error, Result};
use crate::hash::{location_key, FastSet};
use crate::spec::snapshot::Snapshot;
use crate::storage::Location;
use crate::table::Table;

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
        let metadata = MetadataCandidates::of(table, removed)?;
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
        let referenced = rr.referenced_metadata(protectors).await?;
        protect_referenced_metadata(table, &referenced, keys, &mut protect_key)?;
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
        let kept_metadata = metadata.plan_into(table, &meta_protected)?;
        plan.manifests = kept_metadata.manifests;
        plan.index_files = kept_metadata.index_files;
        plan.statistics = kept_metadata.statistics;
        plan.lists = kept_metadata.lists;
        Ok(plan)
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

/// The protectors' metadata (`referenced`) protects candidates of every kind at its locations
/// (`protect_key` is called with each location's key). A data or changelog data candidate
/// there (its key among `keys`) names metadata a kept version reads: the entry is hostile or
/// corrupt, and the plan is refused whole, as the kind rules refuse a data entry naming any
/// other metadata file.
fn protect_referenced_metadata(
    table: &Table,
    referenced: &ReferencedMetadata,
    keys: &SortedKeys,
    protect_key: &mut impl FnMut(u64),
) -> Result<()> {
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
    Ok(())
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
