//! Orphan file removal (spec §5.6): delete old files in the table's own directories that no
//! snapshot, tag or long-lived changelog of any branch references — never a file in flight.
//!
//! The run, in order:
//! 1. **Cut-off.** Only files modified before `older_than_ms` may be deleted (default: now − 1
//!    day). A cut-off in the future is refused; so is one within the last hour unless the
//!    caller promises that no writer is running (pitfall P6).
//! 2. **Candidates first** (P1): `manifest/`, `index/`, `statistics/`, every bucket directory of
//!    the data root and, when declared owned, of each `data-file.external-paths` root (through `#partitionKeys` levels
//!    of `k=v` directories; a last-level partition directory without bucket directories is a
//!    candidate directory itself), and temp files in `snapshot/` and `changelog/` of every
//!    branch. Never `schema/`, `tag/`, `consumer/`, `service/`, `metadata/`, `branch/*`
//!    metadata other than temp files in `snapshot/` and `changelog/`, `snapshot-N`,
//!    `changelog-N`, `EARLIEST`, `LATEST`, `*.managed.blob`, files at the table root, or anything
//!    outside these directories. See [`listing`](self) for details.
//! 3. **References** of every snapshot, tag and long-lived changelog of EVERY branch (P2), as
//!    64-bit keys of locations and names. The table is listed again after every listing until
//!    no new version appears. Unreadable metadata that a version still present needs — a missing
//!    manifest list, manifest or index manifest included (P3) — aborts the run before anything
//!    is deleted; the error names the file. So does an empty reference set while snapshots
//!    exist, a layout directory (`manifest/`, `snapshot/`, `branch/`, ...) that is not a
//!    readable directory, and an empty snapshot listing of main while manifests, index or
//!    statistics files or data exist. A table created but never committed is a no-op.
//! 4. **Decide.** A candidate is kept when its resolved location is referenced; also when only
//!    its *name* is referenced, at another location: that means our path resolution disagrees
//!    with the writer's (e.g. partition options changed since, P18), and such candidates are
//!    kept and listed in [`OrphanReport::kept_name_referenced_elsewhere`] rather than risked.
//!    The caller's veto runs last.
//! 5. **Delete** through the guarded, batched `Deleter`: data, changelog and index files in
//!    data directories, then `index/`, `statistics/`, manifests, index manifests, manifest
//!    lists, then temp files. Then bucket and partition directories left empty are removed
//!    (never a data root, so never the table root). A dry run deletes nothing and reports the
//!    same set.
//!
//! Branch directories without a readable schema (pypaimon's `create_branch` can leave one) do
//! not abort the run, unlike Java: they are reported in
//! [`OrphanReport::branches_without_schema`], and their snapshots, tags and changelogs still
//! count as references, resolved with the main branch's schema and options. A branch whose
//! schema exists but cannot be parsed aborts the run.
//!
//! External data roots are neither listed nor cleaned unless the caller states that they belong
//! to this table alone ([`OrphanConfig::external_roots_owned`]); they are reported in
//! [`OrphanReport::skipped`]. Paimon writes external files under `<root>/<partition>/bucket-N`
//! without the table name, so two tables sharing one external root see each other's live files
//! as orphans. With the opt-in, the roots are added as delete roots for this run only.
//!
//! The run is a sequence of units ([`units`]): planning, list units and read units, the
//! decision, delete units, the finish. [`remove_orphan_files`] runs them in one process; an
//! engine can run the units on its workers through the same code (see `docs/architecture.md`,
//! "Orphan files").

mod codec;
mod decide;
mod exec;
mod keyset;
mod listing;
mod partial;
mod planner;
mod prune;
mod refs;
mod tracker;
mod unit;
pub mod units;

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use futures::stream::{self, StreamExt};
use serde::Serialize;

use crate::clean::control::RunControl;
use crate::clean::report::DeletionReport;
use crate::error::{Error, Result};
use crate::storage::Location;
use crate::table::{Table, MAIN_BRANCH};
use keyset::{KeyLog, KeySet, SharedKeyIndex};
use partial::{finish_merge, merge_all, merge_into, Partial};
use unit::{Unit, Work};

/// One day in milliseconds: the default age of the youngest file that may be deleted.
pub const DEFAULT_OLDER_THAN_MS: i64 = 24 * 60 * 60 * 1000;

/// Without [`OrphanConfig::no_writers_running`], a cut-off must be at least this old (1 hour).
pub const MIN_WINDOW_WITH_WRITERS_MS: i64 = 60 * 60 * 1000;

/// A caller's veto on deleting one file: return `true` to KEEP the file (like paimon-cpp's
/// file-retain condition). Called once per file that would otherwise be deleted, before
/// anything is deleted, possibly from a library thread.
pub type VetoFn = Arc<dyn Fn(&Location) -> bool + Send + Sync>;

/// Settings of one orphan cleanup run.
#[derive(Clone, Default)]
pub struct OrphanConfig {
    /// Absolute cut-off in epoch milliseconds: only files modified before it may be deleted.
    /// Default: now − 1 day. A cut-off in the future is refused; one within the last hour is
    /// refused unless `no_writers_running` is set.
    pub older_than_ms: Option<i64>,
    /// Compute and report everything, change nothing.
    pub dry_run: bool,
    /// The caller guarantees that no writer (no job, no engine, no other process) is writing
    /// or committing to this table during the run, so the cut-off may be as recent as "now"
    /// (Lance's `delete_unverified`).
    ///
    /// DANGER: a writer writes its data files and manifests *before* it commits the snapshot
    /// that references them. Any file written but not yet committed is, to this cleanup,
    /// indistinguishable from an orphan; with a recent cut-off it is deleted, and the commit
    /// that follows publishes a snapshot whose files are gone — lost data. Only set this when
    /// every writer of the table is stopped.
    pub no_writers_running: bool,
    /// Directory listings in flight at once (default: [`RunControl::io_concurrency`]).
    pub list_concurrency: Option<usize>,
    /// Deletions in flight at once (default: [`RunControl::io_concurrency`]). Metadata reads
    /// always use [`RunControl::io_concurrency`].
    pub delete_concurrency: Option<usize>,
    /// Optional veto: return `true` to keep a file that would otherwise be deleted.
    pub veto: Option<VetoFn>,
    /// The caller states that the table's external data roots (`data-file.external-paths`)
    /// belong to this table alone. Default false: external roots are not listed and nothing
    /// in them is deleted (they are reported in [`OrphanReport::skipped`]).
    ///
    /// DANGER: Paimon writes external data files at `<root>/<partition>/bucket-N/` without the
    /// table's name, so two tables configured with one root share those directories, and each
    /// table's live files are orphans to the other. Set this only when no other table writes
    /// under any of this table's external roots.
    pub external_roots_owned: bool,
}

impl fmt::Debug for OrphanConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OrphanConfig")
            .field("older_than_ms", &self.older_than_ms)
            .field("dry_run", &self.dry_run)
            .field("no_writers_running", &self.no_writers_running)
            .field("list_concurrency", &self.list_concurrency)
            .field("delete_concurrency", &self.delete_concurrency)
            .field("veto", &self.veto.as_ref().map(|_| "<callback>"))
            .field("external_roots_owned", &self.external_roots_owned)
            .finish()
    }
}

/// What an orphan cleanup run found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OrphanReport {
    /// The cut-off used (epoch ms): only files modified before it were candidates.
    pub older_than_ms: i64,
    /// Files seen in the candidate directories that would be candidates if they were old
    /// enough (so not `snapshot-N`, `changelog-N` or hint files).
    pub files_listed: u64,
    /// Candidates examined: the listed files (temp files only in `snapshot/` and
    /// `changelog/`; never `*.managed.blob`) that a version references, whatever their age,
    /// plus the unreferenced ones older than the cut-off. So `candidates == referenced +
    /// vetoed + kept_name_referenced_elsewhere + deleted + failed`.
    pub candidates: u64,
    /// Listed files kept because a version references their location, whatever their age
    /// (their age is not read: on a local disk they are not even `stat`ed).
    pub referenced: u64,
    /// Candidates kept because the caller's veto said so.
    pub vetoed: u64,
    /// Candidates kept because their name is referenced at another location (path resolution
    /// disagreement; see the module documentation), relative to the table root where possible.
    pub kept_name_referenced_elsewhere: Vec<String>,
    /// Deleted (in a dry run: deletable) files and bytes per kind, failed deletions,
    /// directories removed, and every path.
    pub deletion: DeletionReport,
    /// Branch directories without a schema; their snapshots and tags were still read.
    pub branches_without_schema: Vec<String>,
    /// Snapshots, tags and long-lived changelogs whose references were read (all branches).
    pub versions_read: u64,
    /// Manifests read (each at most once).
    pub manifests_read: u64,
    /// External data roots that were listed (only with
    /// [`OrphanConfig::external_roots_owned`]).
    pub external_roots: Vec<String>,
    /// Roots or directories not listed, with the reason; nothing in them was deleted.
    pub skipped: Vec<String>,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
}

/// Plan units run at once by the single-process run (each with its own concurrency).
const UNITS_IN_FLIGHT: usize = 4;

/// [`UNITS_IN_FLIGHT`] on a local table root: there a read unit's reads are blocking sections
/// (several manifests each, [`crate::storage::Storage::get_many_then`]), and two units keep
/// the cores busy while one finishes its last section; more only start more threads, each with
/// its own allocator arena and decoder state.
const LOCAL_UNITS_IN_FLIGHT: usize = 2;

/// List units the single-process run runs at once: one, each with the list concurrency (a
/// listing of a bucket directory is held whole until it is filtered, so listings in flight are
/// what the listing phase holds).
const LIST_UNITS_IN_FLIGHT: usize = 1;

/// What the single-process run has charged to the run's memory budget for one structure.
struct Charged<'a> {
    memory: &'a crate::memory::MemoryBudget,
    what: &'static str,
    bytes: u64,
}

impl Charged<'_> {
    /// Charges or releases the difference to `now` bytes.
    fn set(&mut self, now: u64) -> Result<()> {
        if now > self.bytes {
            self.memory.charge(self.what, now - self.bytes)?;
        } else {
            self.memory.release(self.bytes - now);
        }
        self.bytes = now;
        Ok(())
    }
}

impl Drop for Charged<'_> {
    fn drop(&mut self) {
        self.memory.release(self.bytes);
    }
}

/// Removes orphan files of the table `table` belongs to (every branch; `table` may be opened
/// on any branch). See the module documentation for the rules.
///
/// This is the single-process run of the units ([`units`]): plan, execute every plan unit here,
/// merge, decide, execute the delete units in order, finish — the same code a distributed run
/// schedules on an engine's workers. Here the read units run first, from the first step of the
/// planning on (while the planner reads the other versions' manifest lists), and their keys
/// are folded into one sorted set as they come; the list units then list against it, so only the
/// candidates no location references are held, and on a local disk only those files are
/// `stat`ed for their age (a distributed run holds every old candidate until the decision). The keys and the candidates are charged to the run's memory bound
/// ([`RunControl::max_memory`]): past it the run fails before anything is deleted.
pub async fn remove_orphan_files(
    table: &Table,
    cfg: &OrphanConfig,
    ctl: &RunControl,
) -> Result<OrphanReport> {
    let memory = ctl.memory_budget();
    let main = main_of(table).await?;
    let local = local_control(&main, ctl);
    let ctl = &local;
    let list_conc = cfg.list_concurrency.unwrap_or(ctl.io_concurrency).max(1);
    let io = ctl.io_concurrency.max(1);
    let units_in_flight = if main.storage().root().is_local() {
        LOCAL_UNITS_IN_FLIGHT
    } else {
        UNITS_IN_FLIGHT
    };

    // Planning and the references at once: the read units run as the planner hands them over
    // (it reads the versions' manifest lists a step at a time), the list units wait for the
    // references. The references are folded as they come: only sorted, deduplicated keys stay.
    let mut keys_charge = Charged {
        memory: &memory,
        what: "orphan removal's reference keys",
        bytes: 0,
    };
    let mut merged = Partial::default();
    // The names only at the decision, against the few candidates no location references:
    // logged to a temporary file meanwhile.
    let (mut locations, mut names) = (KeySet::default(), KeyLog::default());
    let mut lists: Vec<Unit> = Vec::new();
    let (reads_tx, reads_rx) = futures::channel::mpsc::unbounded::<Unit>();
    // Read items handed over so far (the progress total grows with the plan).
    let read_total = std::sync::atomic::AtomicU64::new(0);
    let planning = {
        let (lists, read_total, main) = (&mut lists, &read_total, &main);
        async move {
            let reads_tx = reads_tx;
            let mut emit = |u: Unit| match &u.work {
                Work::Read { items, .. } => {
                    let n = items.iter().filter(|i| !i.index).count() as u64;
                    let before = read_total.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
                    if before == 0 && n > 0 {
                        // The phase starts with its first read unit.
                        ctl.progress(refs::REFERENCES_PHASE, 0, n, 0);
                    }
                    // The receiver only goes away when reading failed: that error is the run's.
                    let _ = reads_tx.unbounded_send(u);
                }
                _ => lists.push(u),
            };
            let state = planner::plan_each(main, cfg, ctl, planner::READ_STEPS, &mut emit).await?;
            ctl.cancel.check()?;
            Ok::<_, Error>(state)
            // `reads_tx` is dropped here: the reading ends once the last read unit is done.
        }
    };
    let reading = async {
        let mut read_done = 0u64;
        let mut results = reads_rx
            .map(|u| exec::execute_unordered(&main, u, io, ctl, None))
            .buffer_unordered(units_in_flight);
        while let Some(p) = results.next().await {
            let mut p = p?;
            let total = read_total.load(std::sync::atomic::Ordering::Relaxed);
            if p.manifests_read > 0 {
                read_done += p.manifests_read;
                ctl.progress(refs::REFERENCES_PHASE, read_done.min(total), total, 0);
            }
            locations.add(&std::mem::take(&mut p.locations));
            names.add(&std::mem::take(&mut p.names))?;
            merge_into(&mut merged, p)?;
            keys_charge.set(locations.bytes() + names.bytes())?;
        }
        Ok::<_, Error>(read_done)
    };
    let (state, read_done) = futures::try_join!(planning, reading)?;
    let read_total = read_total.into_inner();
    if read_done < read_total || read_total == 0 {
        ctl.progress(
            refs::REFERENCES_PHASE,
            read_done.min(read_total),
            read_total,
            0,
        );
    }
    // The keys planning found (manifest lists, statistics) too: the decision then finds them
    // folded in and does not grow the large vectors again.
    let mut state = state;
    locations.add(&std::mem::take(&mut state.found.locations));
    names.add(&std::mem::take(&mut state.found.names))?;
    merged.locations = locations.finish();
    merged.add_name_log(names.finish()?);
    keys_charge.set(merged.key_bytes())?;
    ctl.cancel.check()?;

    // Then the listing, against the location keys: referenced files are only counted.
    let mut candidates_charge = Charged {
        memory: &memory,
        what: "orphan removal's candidate files",
        bytes: 0,
    };
    let mut listed = Partial::default();
    {
        // Owned behind an `Arc`: the listing's blocking sections look keys up too (a file
        // whose location is referenced is not even `stat`ed), and the keys come back after.
        let referenced = Arc::new(SharedKeyIndex::from_sorted(std::mem::take(
            &mut merged.locations,
        )));
        keys_charge.set(merged.key_bytes() + referenced.heap_bytes())?;
        let shared = &referenced;
        let mut results = stream::iter(lists)
            .map(|u| {
                let conc = match u.work {
                    Work::List { .. } => list_conc,
                    _ => io,
                };
                exec::execute_unordered(&main, u, conc, ctl, Some(shared))
            })
            .buffer_unordered(LIST_UNITS_IN_FLIGHT);
        while let Some(p) = results.next().await {
            let p = p?;
            let bytes = candidates_charge.bytes + p.candidate_bytes();
            candidates_charge.set(bytes)?;
            merge_into(&mut listed, p)?;
        }
        drop(results);
        // Every listing is done, so nothing else holds the keys; were one still held, a copy.
        merged.locations = match Arc::try_unwrap(referenced) {
            Ok(index) => index.into_keys(),
            Err(shared) => shared.keys().to_vec(),
        };
    }
    ctl.cancel.check()?;
    merge_into(&mut merged, listed)?;
    finish_merge(&mut merged)?;
    // The decision charges what it holds itself.
    drop(keys_charge);
    drop(candidates_charge);
    let (decision, delete_units) = decide::decide(&main, cfg, ctl, &memory, state, merged).await?;
    ctl.cancel.check()?;
    // Delete units one after the other, in phase order (as the single-process run always did).
    let delete_conc = cfg.delete_concurrency.unwrap_or(ctl.io_concurrency).max(1);
    let mut deleted = Vec::with_capacity(delete_units.len());
    for u in delete_units {
        deleted.push(exec::execute(&main, u, delete_conc, ctl).await?);
    }
    let report = units::finish_report(&main, ctl, decision, merge_all(deleted)?).await?;
    tracing::info!(
        deleted = report.deletion.total_files(),
        bytes = report.deletion.total_bytes(),
        failed = report.deletion.failed.len(),
        dirs = report.deletion.dirs_removed,
        dry_run = cfg.dry_run,
        "orphan cleanup done"
    );
    Ok(report)
}

/// Reads, listings and decodes in flight on a local disk, per core (at least
/// [`LOCAL_IO_MIN`]): there each one is system calls and CPU work in a blocking section, so
/// more of them than a few per core only start more threads (each with its own allocator
/// arena and decoder state, held to the end of the run) and switch between them more often.
const LOCAL_IO_PER_CORE: usize = 2;

/// The least [`LOCAL_IO_PER_CORE`] allows.
const LOCAL_IO_MIN: usize = 4;

/// `ctl` for the single-process run of `main`: on a local table root the I/O concurrency is
/// capped at [`LOCAL_IO_PER_CORE`] per core (explicit `list_concurrency` and
/// `delete_concurrency` still apply as given).
fn local_control(main: &Table, ctl: &RunControl) -> RunControl {
    let mut out = ctl.clone();
    if main.storage().root().is_local() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let cap = cores.saturating_mul(LOCAL_IO_PER_CORE).max(LOCAL_IO_MIN);
        out.io_concurrency = out.io_concurrency.clamp(1, cap);
    }
    out
}

/// The main branch of `table`'s table.
pub(crate) async fn main_of(table: &Table) -> Result<Table> {
    if table.branch_name() == MAIN_BRANCH {
        Ok(table.clone())
    } else {
        table.branch(MAIN_BRANCH).await
    }
}

/// The cut-off: `older_than_ms` or now − 1 day, validated against `now`.
pub(crate) fn resolve_cutoff(cfg: &OrphanConfig, now: i64) -> Result<i64> {
    let cutoff = cfg
        .older_than_ms
        .unwrap_or(now.saturating_sub(DEFAULT_OLDER_THAN_MS));
    if cutoff > now {
        return Err(Error::InvalidArgument(format!(
            "older-than cut-off {cutoff} is in the future (now is {now}); refusing to remove orphan files"
        )));
    }
    if !cfg.no_writers_running && cutoff > now.saturating_sub(MIN_WINDOW_WITH_WRITERS_MS) {
        return Err(Error::InvalidArgument(format!(
            "older-than cut-off {cutoff} is within the last hour (now is {now}): files of writes not \
             yet committed would be deleted; use an older cut-off, or no_writers_running when every \
             writer is stopped"
        )));
    }
    Ok(cutoff)
}

/// Asks the caller's veto about `loc`; a panicking veto aborts the run (nothing deleted yet).
pub(crate) fn vetoed(cfg: &OrphanConfig, loc: &Location) -> Result<bool> {
    let Some(veto) = &cfg.veto else {
        return Ok(false);
    };
    catch_unwind(AssertUnwindSafe(|| veto(loc))).map_err(|_| {
        Error::Internal(format!(
            "the veto callback panicked on {loc}; nothing deleted"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn cfg(older_than_ms: Option<i64>, no_writers_running: bool) -> OrphanConfig {
        OrphanConfig {
            older_than_ms,
            no_writers_running,
            ..Default::default()
        }
    }

    #[test]
    fn cutoff_rules() {
        assert_eq!(
            resolve_cutoff(&cfg(None, false), NOW).unwrap(),
            NOW - DEFAULT_OLDER_THAN_MS
        );
        let hour = MIN_WINDOW_WITH_WRITERS_MS;
        assert_eq!(
            resolve_cutoff(&cfg(Some(NOW - hour), false), NOW).unwrap(),
            NOW - hour
        );
        for bad in [NOW - hour + 1, NOW, NOW + 1] {
            assert!(matches!(
                resolve_cutoff(&cfg(Some(bad), false), NOW),
                Err(Error::InvalidArgument(_))
            ));
        }
        assert_eq!(resolve_cutoff(&cfg(Some(NOW), true), NOW).unwrap(), NOW);
        assert!(matches!(
            resolve_cutoff(&cfg(Some(NOW + 1), true), NOW),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn veto_panics_become_errors() {
        let loc = Location::parse("/t/manifest/m").unwrap();
        let mut c = OrphanConfig::default();
        assert!(!vetoed(&c, &loc).unwrap());
        c.veto = Some(Arc::new(|l: &Location| l.name() == "m"));
        assert!(vetoed(&c, &loc).unwrap());
        c.veto = Some(Arc::new(|_: &Location| panic!("boom")));
        assert!(matches!(vetoed(&c, &loc), Err(Error::Internal(_))));
        assert!(format!("{c:?}").contains("<callback>"));
    }
}
