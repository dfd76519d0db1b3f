//! Orphan removal as units an engine schedules: [`plan`] on the driver, [`execute`]
//! each unit anywhere, [`merge`] the partial results in any order and grouping, [`decide`] on
//! the driver, [`execute`] the delete units, [`finish`] on the driver. Units, partial results,
//! the plan state and the decision are versioned byte strings ([`FORMAT_VERSION`]).
//!
//! [`super::remove_orphan_files`] is this sequence in one process, through the same code.
//!
//! * A **list unit** lists the metadata directories, or a group of last-level partition
//!   directories with their bucket directories, and returns the candidates (files older than
//!   the plan's cut-off, by directory, with size and class) and the 64-bit location keys of
//!   the younger files (the decision counts the referenced ones, as the single-process run
//!   counts every referenced file whatever its age).
//! * A **read unit** reads a slice of the distinct manifests and index manifests of every
//!   version of every branch and returns the 64-bit keys of every location and name they
//!   reference, plus the files it could not read (the decision judges those).
//! * A **delete unit** deletes a batch of files (each checked again: roots, kind, no symlinked
//!   directory) and returns what it deleted and what failed.
//!
//! **Sharded decision.** Instead of merging every result on the driver and deciding there, an
//! engine may [`split`] each plan unit's result into a summary and pieces by shard, shuffle the
//! pieces by shard, and decide each shard in its own task: [`gate`] on the driver, then
//! [`decide_shard`] per shard, [`gate`] again to confirm that no version appeared meanwhile,
//! then [`conclude`] with every shard's report (see the module `sharded` for the rules). No
//! process then holds every candidate and every key: the driver holds the summaries (counters,
//! failures, empty directories) and one report per shard.
//!
//! Units carry the table root and the options minus credentials ([`work_unit`](super::work_unit)'s `is_secret`); the
//! host passes the credentials to [`execute`]. Plan units only read: running one twice, or
//! not at all, changes nothing, and the decision refuses to go on without every plan unit's
//! result (a missing read result would look like unreferenced files). Delete units only
//! delete files the decision found unreferenced, so a failed or repeated one leaves only
//! orphans behind and a later run converges.

use std::collections::HashMap;
use std::sync::Arc;

use crate::clean::control::RunControl;
use crate::clean::report::FailedDelete;
use crate::clean::shared::clock::now_millis;
use crate::clean::shared::deleter::Deleter;
use crate::clean::shared::kinds::KindRules;
use crate::error::Result;
use crate::storage::{Location, StopReads, Storage};
use crate::table::{Table, MAIN_BRANCH};

pub use super::codec::FORMAT_VERSION;
use super::config::OrphanConfig;
use super::decide::{check_ranges, Decision, PHASES};
use super::partial::{merge_bytes, Deleted, Partial};
use super::planner::State;
use super::report::OrphanReport;
use super::sharded::{self, Gate, ShardReport};
use super::work_unit::{Unit, Work};
use super::{decide as decide_step, exec, planner, prune};

/// What [`plan`] returns.
#[derive(Debug, Clone, Default)]
pub struct Planned {
    /// The driver-side state, for [`decide`].
    pub state: Vec<u8>,
    /// The units to [`execute`].
    pub units: Vec<Vec<u8>>,
}

/// What [`decide`] returns.
#[derive(Debug, Clone, Default)]
pub struct Decided {
    /// The decision, for [`finish`].
    pub decision: Vec<u8>,
    /// The delete units to [`execute`] (none in a dry run).
    pub units: Vec<Vec<u8>>,
}

fn all_bytes(units: Vec<Unit>) -> Result<Vec<Vec<u8>>> {
    units.iter().map(Unit::to_bytes).collect()
}

/// Plans a run on the table `table` belongs to (any branch: orphan removal is table-wide):
/// checks the cut-off, resolves the roots, walks the partitions, reads every version and its
/// manifest lists. Errors as [`super::remove_orphan_files`] before its first deletion.
pub async fn plan(table: &Table, cfg: &OrphanConfig, ctl: &RunControl) -> Result<Planned> {
    let main = main_of(table).await?;
    let (state, units) = planner::plan(&main, cfg, ctl).await?;
    Ok(Planned {
        state: state.to_bytes()?,
        units: all_bytes(units)?,
    })
}

/// Executes one unit (a plan unit or a delete unit) anywhere: opens the table from the root and
/// options the unit carries, with `host_options` added and winning (the credentials), and
/// returns its partial result. Reads of a plan unit stop at cancellation of `ctl`.
///
/// Errors: [`crate::Error::InvalidArgument`] for bytes that are not a unit of this format
/// version; storage errors opening the table or listing; [`crate::Error::PathRefused`] for a
/// delete unit naming a path outside the table's roots or of the wrong kind; cancellation. A
/// manifest that cannot be read is not an error of the unit (it is in the result).
pub async fn execute(
    unit: &[u8],
    host_options: &HashMap<String, String>,
    ctl: &RunControl,
) -> Result<Vec<u8>> {
    let unit = Unit::from_bytes(unit)?;
    let options = unit.reach.options_with(host_options);
    let mut storage = Storage::open(&unit.reach.uri, &options)?;
    if !matches!(unit.work, Work::Delete { .. }) {
        let token = ctl.cancel.clone();
        let stop: StopReads = Arc::new(move || token.is_cancelled());
        storage = storage.stop_reads_when(stop);
    }
    let main = Table::open_branch(Arc::new(storage), &options, MAIN_BRANCH).await?;
    let concurrency = ctl.io_concurrency.max(1);
    Ok(exec::execute(&main, unit, concurrency, ctl)
        .await?
        .to_bytes())
}

/// The table root URI a unit names (for choosing an I/O concurrency before executing it).
pub fn table_uri(unit: &[u8]) -> Result<String> {
    Ok(Unit::from_bytes(unit)?.reach.uri)
}

/// Merges two partial results: associative and commutative, byte for byte; an empty byte
/// string is the neutral element. Refuses results of different plans and a unit's result
/// included twice ([`crate::Error::InvalidArgument`]).
pub fn merge(a: &[u8], b: &[u8]) -> Result<Vec<u8>> {
    merge_bytes(a, b)
}

/// Decides, on the driver, with `merged`, every plan unit's result merged: lists the versions
/// again until no new one appears, fails when metadata a version still needs could not be read
/// or when a unit's result is missing (nothing deleted), keeps what is referenced by location or
/// by name and what `cfg`'s veto keeps, checks every path, and returns the decision and the
/// delete units. The cut-off, the dry-run flag and the roots are the plan's; `cfg` gives the
/// veto.
pub async fn decide(
    table: &Table,
    cfg: &OrphanConfig,
    ctl: &RunControl,
    state: &[u8],
    merged: &[u8],
) -> Result<Decided> {
    let main = main_of(table).await?;
    let state = State::from_bytes(state)?;
    let merged = Partial::from_bytes(merged)?;
    let memory = ctl.memory_budget();
    let (decision, units) = decide_step::decide(&main, cfg, ctl, &memory, state, merged).await?;
    Ok(Decided {
        decision: decision.to_bytes()?,
        units: all_bytes(units)?,
    })
}

/// Finishes, on the driver, after every delete unit: removes the data directories left empty
/// (not in a dry run) and returns the report, as [`super::remove_orphan_files`] does. `merged`
/// is every delete unit's result merged (empty when there was none); a missing one is an
/// [`crate::Error::InvalidArgument`].
pub async fn finish(
    table: &Table,
    ctl: &RunControl,
    decision: &[u8],
    merged: &[u8],
) -> Result<OrphanReport> {
    let main = main_of(table).await?;
    let decision = Decision::from_bytes(decision)?;
    let merged = Partial::from_bytes(merged)?;
    finish_report(&main, ctl, decision, merged).await
}

/// Progress of the deletion phases as the report counts them, one call per phase with the
/// phase's files and the bytes of every phase so far, so that the last call carries the run's
/// total, in a dry run as in a real one (a real run's delete units report their own batches too).
/// `records` are sorted by phase.
fn report_phase_progress(ctl: &RunControl, records: &[Deleted]) {
    let mut bytes_so_far = 0u64;
    let mut start = 0;
    while start < records.len() {
        let phase = records[start].phase;
        let end = records[start..]
            .iter()
            .position(|d| d.phase != phase)
            .map_or(records.len(), |n| start + n);
        let files = (end - start) as u64;
        bytes_so_far += records[start..end].iter().map(|d| d.bytes).sum::<u64>();
        let name = PHASES.get(phase as usize).copied().unwrap_or("delete");
        ctl.progress(name, files, files, bytes_so_far);
        start = end;
    }
}

/// [`finish`] on decoded values.
pub(crate) async fn finish_report(
    main: &Table,
    ctl: &RunControl,
    decision: Decision,
    merged: Partial,
) -> Result<OrphanReport> {
    let dry_run = decision.dry_run;
    let ranges = if dry_run {
        Vec::new()
    } else if decision.unit_ranges.is_empty() {
        vec![(0, decision.units)]
    } else {
        decision.unit_ranges.clone()
    };
    check_ranges(&merged, decision.plan, &ranges, "delete unit")?;
    let roots: Vec<Location> = decision
        .delete_roots
        .iter()
        .map(|r| Location::parse(r))
        .collect::<Result<_>>()?;
    let storage = main.storage().with_delete_roots(&roots);
    let mut deleter = Deleter::new(&storage, KindRules::of(main), ctl, dry_run);
    let mut records = if dry_run {
        decision.dry_records()?
    } else {
        merged.deleted
    };
    records.sort();
    report_phase_progress(ctl, &records);
    for d in records {
        deleter.report.record(d.class, d.path, d.bytes);
    }
    deleter.report.failed = merged
        .failed
        .into_iter()
        .map(|f| FailedDelete {
            path: f.path,
            error: f.error,
        })
        .collect();
    deleter.report.dirs_removed = merged.dirs_removed;
    if !dry_run {
        let dirs: Vec<(Location, Location)> = decision
            .prune
            .iter()
            .filter_map(|(d, r)| Some((Location::parse(d).ok()?, Location::parse(r).ok()?)))
            .collect();
        prune::remove_empty_dirs(&mut deleter, dirs).await;
    }
    let b = decision.base;
    Ok(OrphanReport {
        older_than_ms: b.older_than_ms,
        files_listed: b.files_listed,
        candidates: b.candidates,
        referenced: b.referenced,
        vetoed: b.vetoed,
        kept_name_referenced_elsewhere: b.kept_name_referenced_elsewhere,
        deletion: deleter.report,
        branches_without_schema: b.branches_without_schema,
        versions_read: b.versions_read,
        manifests_read: b.manifests_read,
        external_roots: b.external_roots,
        skipped: b.skipped,
        elapsed_ms: now_millis().saturating_sub(decision.started_ms).max(0) as u64,
    })
}

/// What [`split`] returns.
#[derive(Debug, Clone, Default)]
pub struct Split {
    /// The summary (counters, failures, errors, empty directories), for [`gate`] and
    /// [`conclude`] on the driver, once merged with every other unit's.
    pub summary: Vec<u8>,
    /// One piece per shard (its candidates and keys), for [`decide_shard`], once merged with
    /// every other unit's piece of the same shard.
    pub shards: Vec<Vec<u8>>,
}

/// What [`gate`] returns.
#[derive(Debug, Clone, Default)]
pub struct Gated {
    /// The driver's updated plan state, for the next [`gate`] and for [`conclude`].
    pub state: Vec<u8>,
    /// The gate, for every [`decide_shard`] of this round.
    pub gate: Vec<u8>,
    /// The shards must decide (again) with this gate: always after the first gate, and after
    /// a later one that found a new version. False confirms the round the shards decided.
    pub decide: bool,
}

/// What [`decide_shard`] returns.
#[derive(Debug, Clone, Default)]
pub struct ShardDecided {
    /// The shard's report, for [`conclude`].
    pub report: Vec<u8>,
    /// The shard's delete units to [`execute`] (none in a dry run).
    pub units: Vec<Vec<u8>>,
}

/// Splits a plan unit's result (or several merged) into its summary and `shards` pieces (1 to
/// 65,536), by the shard of each file name: a candidate, the location keys of its name and
/// the name's key fall into one shard. The engine shuffles the pieces by shard (merging the
/// pieces of a shard with [`merge`]) and merges the summaries on the driver.
///
/// Errors: [`crate::Error::InvalidArgument`] for a shard count out of range, bytes that are not
/// a partial result, or a result already split.
pub fn split(partial: &[u8], shards: u32) -> Result<Split> {
    let (summary, pieces) = Partial::from_bytes(partial)?.split(shards)?;
    Ok(Split {
        summary: summary.to_bytes(),
        shards: pieces.iter().map(Partial::to_bytes).collect(),
    })
}

/// The gate of the sharded decision, on the driver: `state` is the plan's state (or the state
/// a previous gate returned) and `summary` every plan unit's summary merged (a missing or
/// doubled unit is refused). Lists the versions again until no new one appears, reading the
/// new ones' references; fails, with nothing deleted, when metadata a version still needs
/// could not be read. Call it once before the shards decide and again after: a gate that
/// finds a new version starts a new round ([`Gated::decide`]), whose shards decide again; one
/// that finds none confirms the round for [`conclude`].
pub async fn gate(
    table: &Table,
    ctl: &RunControl,
    state: &[u8],
    summary: &[u8],
    shards: u32,
) -> Result<Gated> {
    let main = main_of(table).await?;
    let state = State::from_bytes(state)?;
    let summary = Partial::from_bytes(summary)?;
    let (state, gate, decide) = sharded::gate(&main, ctl, state, &summary, shards).await?;
    Ok(Gated {
        state: state.to_bytes()?,
        gate: gate.to_bytes()?,
        decide,
    })
}

/// Decides shard `shard`, anywhere: `piece` is every plan unit's piece of the shard merged
/// (checked complete, each unit once), `gate` the round's gate. Keeps what is referenced by
/// location or by name and what `cfg`'s veto keeps, checks every remaining path (roots, kind,
/// no symlinked directory) and returns the shard's report and delete units.
pub async fn decide_shard(
    table: &Table,
    cfg: &OrphanConfig,
    ctl: &RunControl,
    gate: &[u8],
    shard: u32,
    piece: &[u8],
) -> Result<ShardDecided> {
    let main = main_of(table).await?;
    let gate = Gate::from_bytes(gate)?;
    let piece = Partial::from_bytes(piece)?;
    let memory = ctl.memory_budget();
    let (report, units) =
        sharded::decide_shard(&main, cfg, ctl, &memory, &gate, shard, piece).await?;
    Ok(ShardDecided {
        report: report.to_bytes()?,
        units: all_bytes(units)?,
    })
}

/// Concludes the sharded decision on the driver: `state` from the gate that confirmed the
/// round, `summary` every plan unit's summary merged, `reports` the round's report of every
/// shard, each exactly once (a missing, doubled or stale one is refused). Returns the
/// decision for [`finish`].
pub fn conclude(state: &[u8], summary: &[u8], reports: &[&[u8]]) -> Result<Vec<u8>> {
    let state = State::from_bytes(state)?;
    let summary = Partial::from_bytes(summary)?;
    let reports = reports
        .iter()
        .map(|r| ShardReport::from_bytes(r))
        .collect::<Result<Vec<_>>>()?;
    sharded::conclude(&state, summary, reports)?.to_bytes()
}

/// The main branch of `table`'s table.
pub(crate) async fn main_of(table: &Table) -> Result<Table> {
    if table.branch_name() == MAIN_BRANCH {
        Ok(table.clone())
    } else {
        table.branch(MAIN_BRANCH).await
    }
}
