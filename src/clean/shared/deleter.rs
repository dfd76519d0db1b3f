//! Batched, guarded, kind-checked, idempotent deletion with a report; honours dry run,
//! cancellation and the crash-injection point of [`RunControl`].

use std::borrow::Borrow;

use futures::stream::{self, FuturesOrdered, StreamExt};

use crate::clean::control::RunControl;
use crate::clean::report::{DeletionReport, FailedDelete, FileClass, PATHS_IN_MEMORY};
use crate::clean::shared::keys::SortedKeys;
use crate::clean::shared::kinds::{check_possible, KindRules};
use crate::error::{Error, Result};
use crate::hash::{location_key, FastSet};
use crate::memory::{hashed, MemoryBudget};
use crate::storage::{Location, Removal, Storage};
use crate::table::Table;

/// Files per delete batch (also the cancellation and progress granularity), up to
/// [`MAX_BATCH`] to end it where a directory ends.
const BATCH: usize = 1000;

/// Most files of a batch that ends at a directory boundary ([`next_batch`]).
const MAX_BATCH: usize = 2 * BATCH;

/// Batches in flight at once.
const WINDOW: usize = 3;

/// A file planned for deletion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// Where it is.
    pub location: Location,
    /// What it is.
    pub class: FileClass,
    /// Its size when metadata knows it.
    pub bytes: Option<u64>,
}

/// Files a plan holds besides those passed to [`Deleter::check_plan_represented`]: how many,
/// and the length of their locations' text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Represented {
    /// Files.
    pub(crate) files: u64,
    /// Bytes of their locations' text.
    pub(crate) path_bytes: u64,
}

/// Deletes planned files and accumulates a [`DeletionReport`].
pub struct Deleter<'a> {
    storage: &'a Storage,
    kinds: KindRules,
    control: &'a RunControl,
    dry_run: bool,
    /// [`location_key`]s of every location passed for deletion so far.
    seen: Seen,
    /// The run's memory bound ([`RunControl::max_memory`]), shared with its planning.
    memory: MemoryBudget,
    deleted_so_far: u64,
    /// Planned files found absent (counted for the tests: the report leaves them out).
    #[cfg(test)]
    absent_files: u64,
    /// With [`Deleter::handing_paths_back`]: the files recorded since the last
    /// [`Deleter::take_handed`] (class, path as the report shows it, size), instead of the
    /// report's path list.
    handed: Option<Vec<(FileClass, String, u64)>>,
    /// The report so far.
    pub report: DeletionReport,
}

impl<'a> Deleter<'a> {
    /// A deleter over `storage` that deletes a file only where `kinds` lets a file of its class
    /// be; with `dry_run` nothing is ever changed.
    pub fn new(
        storage: &'a Storage,
        kinds: KindRules,
        control: &'a RunControl,
        dry_run: bool,
    ) -> Self {
        Deleter {
            storage,
            kinds,
            control,
            dry_run,
            seen: Seen::default(),
            memory: control.memory_budget(),
            deleted_so_far: 0,
            #[cfg(test)]
            absent_files: 0,
            handed: None,
            report: DeletionReport {
                dry_run,
                ..Default::default()
            },
        }
    }

    /// A deleter over `table`'s storage with the kind rules of `table`'s branch
    /// ([`KindRules::of`]).
    pub fn for_table(table: &'a Table, control: &'a RunControl, dry_run: bool) -> Self {
        Deleter::new(table.storage(), KindRules::of(table), control, dry_run)
    }

    /// This deleter charges to `memory` (a run's budget shared with its planning) instead of a
    /// fresh budget of [`RunControl::max_memory`].
    pub fn with_memory(mut self, memory: MemoryBudget) -> Self {
        self.memory = memory;
        self
    }

    /// The files this deleter records go to [`Deleter::take_handed`] instead of the report's
    /// path list (the report still counts them): for a caller that keeps them itself.
    pub fn handing_paths_back(mut self) -> Self {
        self.handed = Some(Vec::new());
        self
    }

    /// The files recorded since the last call, in order, with their class, their path as the
    /// report shows it and their size (empty without [`Deleter::handing_paths_back`]).
    pub fn take_handed(&mut self) -> Vec<(FileClass, String, u64)> {
        self.handed.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Records one deleted (or, in a dry run, deletable) file.
    fn record(&mut self, class: FileClass, loc: &Location, size: u64) {
        let path = self.display(loc);
        match &mut self.handed {
            Some(h) => {
                self.report.count_only(class, size);
                h.push((class, path, size));
            }
            None => self.report.record(class, path, size),
        }
    }

    /// Notes a planned file that was not there: not reported as deleted.
    fn absent(&mut self, loc: &Location) {
        #[cfg(test)]
        {
            self.absent_files += 1;
        }
        tracing::debug!(path = %loc, "planned file already gone: not reported as deleted");
    }

    /// Planned files found absent so far (never reported as deleted): by the delete itself
    /// where the store says so, or by the `HEAD` that sized a file whose size metadata does
    /// not give.
    #[cfg(test)]
    pub fn absent_files(&self) -> u64 {
        self.absent_files
    }

    /// Every check a deletion must pass, for a whole plan, before its first deletion (also in a
    /// dry run, which must refuse what the real run refuses):
    /// * logical: each location lies strictly under an allowed root
    ///   ([`Storage::check_deletable`]) and where a file of its class may be
    ///   ([`KindRules::check`]);
    /// * possible: a file can exist at each location on its store (path component and path
    ///   lengths, [`check_possible`]);
    /// * physical: each local location's directory resolves beneath its allowed root with no
    ///   symlinked component ([`Storage::check_beneath`]).
    ///
    /// The first violation is returned ([`Error::PathRefused`]); nothing has been deleted then.
    /// The unlinks themselves go through directory handles opened the same way, so nothing
    /// swapped in after this check can redirect them.
    pub async fn check_plan<P: Borrow<Planned>>(
        &self,
        files: impl IntoIterator<Item = P>,
    ) -> Result<()> {
        self.check_plan_represented(files, Represented::default())
            .await
    }

    /// [`Deleter::check_plan`] of a plan given as `files` that stand for the others: `more`
    /// counts the files not passed, each of which passes every check exactly when a file
    /// passed does and lies in a directory of one (see
    /// [`crate::clean::expiry::plan::DeletionPlan::check`]). They count towards what the run
    /// charges before its first deletion.
    pub(crate) async fn check_plan_represented<P: Borrow<Planned>>(
        &self,
        files: impl IntoIterator<Item = P>,
        more: Represented,
    ) -> Result<()> {
        // One location per directory is enough for the physical check (it checks the
        // directory of each location it is given): the plan is read once, not held.
        let mut dirs: FastSet<String> = FastSet::default();
        let mut per_dir: Vec<Location> = Vec::new();
        let mut files_seen = more.files;
        let mut path_bytes = more.path_bytes;
        for p in files {
            let p = p.borrow();
            // First: its error names a long path shortened.
            check_possible(&p.location)?;
            self.storage.check_deletable(&p.location)?;
            self.kinds.check(p.class, &p.location)?;
            files_seen += 1;
            path_bytes += p.location.as_str().len() as u64;
            let s = p.location.as_str();
            let dir = s.rsplit_once('/').map_or(s, |(d, _)| d);
            if !dirs.contains(dir) {
                dirs.insert(dir.to_string());
                per_dir.push(p.location.clone());
            }
        }
        // The run keeps a key per file, and the report the first paths in memory (the rest
        // go to its temporary file, see `DeletedPaths`): charged now, before the first
        // deletion, so that a bound passed here deletes nothing.
        let in_memory =
            files_seen.min(PATHS_IN_MEMORY.saturating_sub(self.report.paths.in_memory()) as u64);
        let held_path_bytes = path_bytes
            .checked_mul(in_memory)
            .map_or(path_bytes, |b| b / files_seen.max(1));
        self.memory.charge(
            "the report's paths",
            files_seen * hashed(8)
                + in_memory * std::mem::size_of::<crate::clean::report::DeletedPath>() as u64
                + held_path_bytes,
        )?;
        self.storage.check_beneath(per_dir.iter()).await
    }

    /// The run control this deleter honours.
    pub fn control(&self) -> &RunControl {
        self.control
    }

    /// The run's memory budget ([`RunControl::max_memory`]); planning charges what it holds
    /// to the same budget.
    pub fn memory(&self) -> MemoryBudget {
        self.memory.clone()
    }

    /// Delete `files` (each location at most once per run), in batches, in the given order.
    /// Every location is checked by the storage guard and the kind rules first; a refused one
    /// is an error for the whole run (it means metadata points outside the table or names a
    /// file as what it is not), raised before anything in its batch is deleted. Callers run
    /// [`Deleter::check_plan`] on everything they will delete before the first call, so that
    /// such an error comes before any deletion at all.
    ///
    /// Up to [`WINDOW`] batches are in flight at once, so that recording one batch's results
    /// overlaps the next batch's unlinks. Cancellation and the crash-injection allowance are
    /// taken when a batch is submitted; on any error no further batch is submitted and the
    /// batches in flight are awaited before the error is returned, so nothing is deleted after
    /// this call returns.
    pub async fn delete(&mut self, phase: &str, files: Vec<Planned>) -> Result<()> {
        // Each location at most once: not seen in an earlier call, nor earlier in this one.
        // Locations are compared by 64-bit key: two sharing one would keep the second file,
        // never delete a file twice or one not planned.
        self.seen.set.reserve(files.len());
        let files: Vec<Planned> = files
            .into_iter()
            .filter(|p| self.seen.insert(location_key(p.location.as_str())))
            .collect();
        let total = files.len() as u64;
        self.delete_batches(phase, total, files.into_iter()).await
    }

    /// [`Deleter::delete`] of files built one at a time (a compact plan's data files, see
    /// [`crate::clean::expiry::plan::PlannedFiles`]): only the batches in flight are held.
    /// `total` is how many `files` yields (progress reports it). `files` must yield each
    /// location at most once (a plan's files do); a location already seen earlier in this run
    /// is skipped as by [`Deleter::delete`].
    ///
    /// The phase's keys are then kept sorted (about 10 bytes a file, where the hash set
    /// [`Deleter::delete`] fills takes about 18), so that later calls skip them.
    pub async fn delete_each(
        &mut self,
        phase: &str,
        total: u64,
        files: impl Iterator<Item = Planned>,
    ) -> Result<()> {
        let seen = std::mem::take(&mut self.seen);
        let mut keys: Vec<u64> = Vec::with_capacity(total as usize);
        let res = {
            let (seen, keys) = (&seen, &mut keys);
            let files = files.filter(move |p| {
                let k = location_key(p.location.as_str());
                let new = !seen.contains(k);
                if new {
                    keys.push(k);
                }
                new
            });
            self.delete_batches(phase, total, files).await
        };
        self.seen = seen;
        keys.sort_unstable();
        debug_assert!(
            keys.windows(2).all(|w| w[0] != w[1]),
            "delete_each: a location came twice"
        );
        keys.shrink_to_fit();
        self.seen.phases.push(SortedKeys::from_sorted(keys));
        res
    }

    /// The batches of [`Deleter::delete`] and [`Deleter::delete_each`] (their files already
    /// filtered to those not seen before).
    async fn delete_batches(
        &mut self,
        phase: &str,
        total: u64,
        rest: impl Iterator<Item = Planned>,
    ) -> Result<()> {
        let mut rest = rest.peekable();
        let mut done = 0u64;
        let storage = self.storage;
        let concurrency = self.control.io_concurrency.max(1);
        let dry_run = self.dry_run;
        let mut submitted_deletes = self.deleted_so_far;
        let mut in_flight = FuturesOrdered::new();
        let mut stop: Option<Error> = None;
        loop {
            while stop.is_none() && in_flight.len() < WINDOW {
                let chunk = next_batch(&mut rest);
                if chunk.is_empty() {
                    break;
                }
                if let Err(e) = self.control.cancel.check() {
                    stop = Some(e);
                    break;
                }
                if let Err(e) = self.check_batch(&chunk) {
                    stop = Some(e);
                    break;
                }
                let mut allowed = chunk.len();
                if let Some(limit) = self.control.fail_after_deletes {
                    allowed = allowed.min(limit.saturating_sub(submitted_deletes) as usize);
                }
                if allowed < chunk.len() && !dry_run {
                    stop = Some(Error::Internal(format!(
                        "injected failure after {} deletions",
                        submitted_deletes + allowed as u64
                    )));
                }
                submitted_deletes += allowed as u64;
                in_flight.push_back(run_batch(storage, chunk, allowed, dry_run, concurrency));
            }
            let Some(batch) = in_flight.next().await else {
                break;
            };
            let (chunk, sizes, results) = batch;
            if dry_run {
                for (p, size) in chunk.iter().zip(sizes) {
                    match size {
                        Size::Absent => self.absent(&p.location),
                        Size::Bytes(size) => self.record(p.class, &p.location, size),
                    }
                }
            } else {
                for ((p, size), res) in chunk.iter().zip(sizes).zip(results) {
                    match (res, size) {
                        (Ok(removal), size) => {
                            self.deleted_so_far += 1;
                            // Counted when the store says the file went, or cannot tell and
                            // the file was there when sized; not when either saw it absent.
                            match (removal, size) {
                                (Removal::Removed | Removal::Unconfirmed, Size::Bytes(b)) => {
                                    self.record(p.class, &p.location, b);
                                }
                                (Removal::Removed, Size::Absent) => {
                                    self.record(p.class, &p.location, 0);
                                }
                                (Removal::Absent, _) | (Removal::Unconfirmed, Size::Absent) => {
                                    self.absent(&p.location);
                                }
                            }
                        }
                        (Err(e @ Error::PathRefused { .. }), _) => {
                            if stop.is_none() {
                                stop = Some(e);
                            }
                        }
                        (Err(e), _) => {
                            tracing::warn!(path = %p.location, error = %e, "delete failed");
                            self.report.failed.push(FailedDelete {
                                path: self.display(&p.location),
                                error: e.to_string(),
                            });
                        }
                    }
                }
            }
            done += chunk.len() as u64;
            self.control
                .progress(phase, done, total, self.report.total_bytes());
        }
        match stop {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The guard's and the kind rules' check of every file of a batch: a data or changelog
    /// data file named by one plain segment is checked once per directory (its outcome
    /// depends on nothing else: see [`crate::clean::expiry::plan::DeletionPlan::check`]);
    /// whether its name can exist, per file.
    fn check_batch(&self, chunk: &[Planned]) -> Result<()> {
        let mut passed: Option<(&str, FileClass)> = None;
        for p in chunk {
            // A name's own length is checked per file: the directory says nothing of it.
            check_possible(&p.location)?;
            let (dir, name) = p.location.as_str().rsplit_once('/').unwrap_or(("", ""));
            let by_dir = matches!(p.class, FileClass::Data | FileClass::ChangelogData)
                && !name.is_empty()
                && name != "."
                && name != "..";
            if by_dir && passed == Some((dir, p.class)) {
                continue;
            }
            self.storage.check_deletable(&p.location)?;
            self.kinds.check(p.class, &p.location)?;
            passed = by_dir.then_some((dir, p.class));
        }
        Ok(())
    }

    /// Try to remove a directory if it is empty (never in a dry run). Returns true if removed.
    pub async fn remove_dir_if_empty(&mut self, dir: &Location) -> bool {
        if self.dry_run || self.storage.check_deletable(dir).is_err() {
            return false;
        }
        match self.storage.delete_dir_if_empty(dir).await {
            Ok(true) => {
                self.report.dirs_removed += 1;
                true
            }
            _ => false,
        }
    }

    fn display(&self, loc: &Location) -> String {
        loc.relative_to(self.storage.root())
            .map(String::from)
            .unwrap_or_else(|| loc.as_str().to_string())
    }
}

/// The [`location_key`]s of every location passed for deletion in a run: a hash set for the
/// calls of [`Deleter::delete`], sorted keys for each [`Deleter::delete_each`] (whose files
/// are distinct already).
#[derive(Default)]
struct Seen {
    set: FastSet<u64>,
    phases: Vec<SortedKeys>,
}

impl Seen {
    fn contains(&self, key: u64) -> bool {
        self.set.contains(&key) || self.phases.iter().any(|p| p.contains(key))
    }

    /// True if `key` was not seen before (it is now).
    fn insert(&mut self, key: u64) -> bool {
        !self.phases.iter().any(|p| p.contains(key)) && self.set.insert(key)
    }
}

/// The directory part of a location (everything before its last `/`).
fn parent_of(loc: &Location) -> &str {
    let s = loc.as_str();
    s.rsplit_once('/').map_or(s, |(d, _)| d)
}

/// The next batch: [`BATCH`] files, then (up to [`MAX_BATCH`]) the files that follow in the
/// same directory as the last one. Plans in path order then give batches in flight distinct
/// directories: concurrent unlinks in one local directory only wait on its lock.
fn next_batch<I: Iterator<Item = Planned>>(rest: &mut std::iter::Peekable<I>) -> Vec<Planned> {
    let mut chunk: Vec<Planned> = rest.by_ref().take(BATCH).collect();
    if chunk.len() == BATCH {
        if let Some(last) = chunk.last().map(|p| p.location.clone()) {
            let dir = parent_of(&last);
            while chunk.len() < MAX_BATCH {
                match rest.next_if(|p| parent_of(&p.location) == dir) {
                    Some(p) => chunk.push(p),
                    None => break,
                }
            }
        }
    }
    chunk
}

/// A planned file's size for the report, or that the `HEAD` sizing it found nothing.
#[derive(Debug, Clone, Copy)]
enum Size {
    Bytes(u64),
    Absent,
}

/// One batch: its sizes (from metadata, else a `HEAD`), then, unless in a dry run, the
/// deletion of its first `allowed` files. Returns the batch with one size per file and one
/// result per attempted deletion (in order).
async fn run_batch(
    storage: &Storage,
    chunk: Vec<Planned>,
    allowed: usize,
    dry_run: bool,
    concurrency: usize,
) -> (Vec<Planned>, Vec<Size>, Vec<Result<Removal>>) {
    let sizes = sizes(storage, &chunk, concurrency).await;
    if dry_run {
        return (chunk, sizes, Vec::new());
    }
    // The locations go to the storage and come back with their results (not copied).
    let mut chunk = chunk;
    let mut kept = chunk.split_off(allowed.min(chunk.len()));
    let mut meta: Vec<(FileClass, Option<u64>)> = Vec::with_capacity(chunk.len());
    let locs: Vec<Location> = chunk
        .into_iter()
        .map(|p| {
            meta.push((p.class, p.bytes));
            p.location
        })
        .collect();
    let mut results = Vec::with_capacity(locs.len());
    let mut chunk: Vec<Planned> = Vec::with_capacity(meta.len() + kept.len());
    for ((location, r), (class, bytes)) in storage
        .delete_files_found(locs, concurrency)
        .await
        .into_iter()
        .zip(meta)
    {
        chunk.push(Planned {
            location,
            class,
            bytes,
        });
        results.push(r);
    }
    chunk.append(&mut kept);
    (chunk, sizes, results)
}

/// Sizes for the report: from metadata where the plan has them; a `HEAD` only for the rest
/// (extra files, index manifests, version files), concurrently. A `HEAD` that finds nothing
/// says the file is absent (on object stores, whose deletes do not say, the only sign of it);
/// one that fails gives size 0.
async fn sizes(storage: &Storage, chunk: &[Planned], concurrency: usize) -> Vec<Size> {
    if chunk.iter().all(|p| p.bytes.is_some()) {
        return chunk
            .iter()
            .map(|p| Size::Bytes(p.bytes.unwrap_or(0)))
            .collect();
    }
    stream::iter(chunk.iter())
        .map(|p| async move {
            match p.bytes {
                Some(b) => Size::Bytes(b),
                None => match storage.head(&p.location).await {
                    Ok(Some(st)) => Size::Bytes(st.size),
                    Ok(None) => Size::Absent,
                    Err(_) => Size::Bytes(0),
                },
            }
        })
        .buffered(concurrency)
        .collect()
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a store whose deletes do not say whether a file was there (the memory store, like
    /// S3), a file the sizing `HEAD` found absent is not reported, in the dry run as in the
    /// real run; one the metadata sized is (the documented limit on such stores). On a local
    /// disk the unlink says it.
    #[test]
    fn files_found_absent_are_not_reported() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let local = Location::from_local_path(&tmp.path().join("t")).unwrap();
        let memory = Location::parse("memory:///w/t").unwrap();
        for (root, on_object_store) in [(local, false), (memory, true)] {
            let storage = Storage::open(root.as_str(), &Default::default()).unwrap();
            let ctl = RunControl::default();
            let planned = |name: &str, class, bytes| Planned {
                location: root.join(name),
                class,
                bytes,
            };
            let files = vec![
                planned("manifest/manifest-here", FileClass::Manifest, None),
                planned("manifest/manifest-gone", FileClass::Manifest, None),
                planned("bucket-0/data-here.orc", FileClass::Data, Some(4)),
                planned("bucket-0/data-gone.orc", FileClass::Data, Some(4)),
            ];
            rt.block_on(async {
                for name in ["manifest/manifest-here", "bucket-0/data-here.orc"] {
                    storage
                        .put(&root.join(name), bytes::Bytes::from_static(b"here"))
                        .await
                        .unwrap();
                }
            });
            let run = |dry_run: bool| {
                let mut d = Deleter::new(
                    &storage,
                    KindRules::unpartitioned(root.clone()),
                    &ctl,
                    dry_run,
                );
                rt.block_on(d.delete("files", files.clone())).unwrap();
                let paths: Vec<String> = d.report.paths.iter().map(|p| p.path).collect();
                (paths, d.report.total_bytes(), d.absent_files())
            };
            let mut expected = vec![
                "manifest/manifest-here".to_string(),
                "bucket-0/data-here.orc".to_string(),
            ];
            let mut absent = 2;
            if on_object_store {
                // Sized by metadata, deleted without an answer: counted.
                expected.push("bucket-0/data-gone.orc".to_string());
                absent = 1;
            }
            let dry = run(true);
            let real = run(false);
            let root_text = root.as_str();
            assert_eq!(real.0, expected, "{root_text}");
            assert_eq!(real.1, 4 * expected.len() as u64, "{root_text}");
            assert_eq!(real.2, absent, "{root_text}");
            // The dry run drops what its `HEAD` found absent; it cannot know of the rest.
            let dry_expected = vec![
                "manifest/manifest-here".to_string(),
                "bucket-0/data-here.orc".to_string(),
                "bucket-0/data-gone.orc".to_string(),
            ];
            assert_eq!(dry.0, dry_expected, "{root_text}");
            assert_eq!(dry.2, 1, "{root_text}");
        }
    }

    #[test]
    fn a_key_seen_in_any_call_is_seen_once() {
        let mut seen = Seen::default();
        assert!(seen.insert(1) && !seen.insert(1));
        // A `delete_each` phase's keys, sorted.
        seen.phases.push(SortedKeys::from_sorted(vec![2, 5, 9]));
        for k in [1, 2, 5, 9] {
            assert!(seen.contains(k) && !seen.insert(k), "{k}");
        }
        assert!(!seen.contains(3) && seen.insert(3) && seen.contains(3));
    }
}
