//! Snapshot expiry's decision split by shard, so that no process holds every candidate:
//!
//! 1. [`split`] each candidate unit's result (or any merge of them) into a **summary** (how many
//!    candidates each unit found) and one **piece** per shard: the candidates whose directory
//!    falls in that shard ([`shard_of_location`]). A file, its extra files (always beside it)
//!    and every other candidate at the same location share a directory, so each shard holds
//!    every slot the single-process decision compares with them. The engine shuffles the
//!    pieces by shard and merges them ([`super::merge`]); only the summaries reach the driver.
//! 2. [`gate`] (driver), with every unit's summary: reads the removed versions' metadata and
//!    every protector, decides the metadata (manifests, index files, statistics, lists) with
//!    [`DeletionPlan::from_parts_with`] over no data candidates, checks it and the snapshot
//!    files, and returns the decision so far and the **gate** for the shard tasks (the
//!    protectors: proportional to versions, not to files).
//! 3. [`decide_shard`] (one task per shard, anywhere), with every unit's piece of its shard:
//!    decides its data and changelog files with [`DeletionPlan::from_parts_with`] (the
//!    single-process verdicts, its protection read over the shard's candidates only), checks
//!    every path of them ([`DeletionPlan::check`]: roots, kinds, no symlinked directory) and
//!    returns its report and its delete units (ids from `shard × (u32::MAX / shards)` on).
//! 4. [`conclude`] (driver), with every shard's report exactly once: the decision for
//!    [`super::finish`], which takes the delete units' results and then deletes the metadata in
//!    the crash-safe order.
//!
//! Every file carries its place in the single-process run's gathering order ([`Seq`]), so
//! the report lists the deleted files in the single-process run's order.
//!
//! The gate also fixes where the freed data and changelog paths go ([`Paths`]): back to the
//! driver in the shard reports and delete results (the default), or to the tasks that freed
//! them, with counts per class, every failure and a sample of 20 paths to the driver.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::super::unit_bytes::{decode, encode, Kind};
use super::wire::{
    add_tallies, class_of, decode_state, is_false, keep_first, plan_id, results_of_part,
    snapshots_of, tally, Decision, Outcome, Part, Partial, Reach, Sampled, Seq, ShardedDecision,
    Stage, Tally, Unit, UnitResult, WireCandidate, WireFile, WireProtector, Work,
    FILES_PER_DELETE_UNIT,
};
use crate::clean::control::RunControl;
use crate::clean::expiry::plan::{
    Candidate, Candidates, DeletionPlan, MetadataScope, RemovedMetadata,
};
use crate::clean::expiry::protected::{Protector, ReferenceReader};
use crate::clean::expiry::snapshots::{read_protectors, snapshot_files};
use crate::clean::orphans::shard::{shard_of, MAX_SHARDS};
use crate::clean::shared::deleter::{Deleter, Planned as PlannedFile};
use crate::error::{Error, Result};
use crate::hash::location_key;
use crate::memory::{hashed, Charge, MemoryBudget};
use crate::spec::snapshot::Snapshot;
use crate::storage::{Location, StopReads};

/// The shard, of `shards`, of a file at `location`: taken from its directory's key, so that a
/// file and its extra files always share a shard.
pub(crate) fn shard_of_location(location: &str, shards: u32) -> u32 {
    let dir = location.rsplit_once('/').map_or(location, |(d, _)| d);
    shard_of(location_key(dir), shards)
}

/// Fails unless `shards` is a valid shard count.
fn check_shards(shards: u32) -> Result<()> {
    if (1..=MAX_SHARDS).contains(&shards) {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "a shard count must be 1 to {MAX_SHARDS}, not {shards}"
        )))
    }
}

/// What [`split`] returns.
#[derive(Debug, Clone, Default)]
pub struct Split {
    /// For the driver: how many candidates each unit found.
    pub summary: Vec<u8>,
    /// One piece per shard, in shard order: that shard's candidates.
    pub pieces: Vec<Vec<u8>>,
}

/// Splits candidate units' results (one unit's or any merge of them, not split yet) into a
/// summary for the driver and one piece per shard. Summaries merge with summaries, and pieces
/// of one shard with pieces of that shard ([`super::merge`]).
pub fn split(result: &[u8], shards: u32) -> Result<Split> {
    check_shards(shards)?;
    let (p, _): (Partial, _) = decode(Kind::Partial, result)?;
    if p.stage != Stage::Candidates || p.part != Part::Whole {
        return Err(Error::InvalidArgument(format!(
            "only whole results of candidate units split by shard, not {:?} results of {:?} \
             units",
            p.part, p.stage
        )));
    }
    let mut counts = BTreeMap::new();
    let mut pieces: Vec<BTreeMap<u32, UnitResult>> = vec![BTreeMap::new(); shards as usize];
    for (unit, r) in p.results {
        let UnitResult::Candidates(list) = r else {
            return Err(Error::InvalidArgument(
                "a candidate unit's result holds no candidates".into(),
            ));
        };
        counts.insert(unit, UnitResult::Counted(list.len() as u64));
        let mut mine: Vec<Vec<WireCandidate>> = vec![Vec::new(); shards as usize];
        for (pos, mut c) in list.into_iter().enumerate() {
            c.seq = Some(pos as u32);
            mine[shard_of_location(&c.location, shards) as usize].push(c);
        }
        for (s, list) in mine.into_iter().enumerate() {
            pieces[s].insert(unit, UnitResult::Candidates(list));
        }
    }
    let summary = encode(
        Kind::Partial,
        &Partial {
            plan: p.plan,
            stage: Stage::Candidates,
            part: Part::Summary { of: shards },
            results: counts,
        },
        &[],
    )?;
    let pieces = pieces
        .into_iter()
        .enumerate()
        .map(|(s, results)| {
            encode(
                Kind::Partial,
                &Partial {
                    plan: p.plan,
                    stage: Stage::Candidates,
                    part: Part::Shard {
                        id: s as u32,
                        of: shards,
                    },
                    results,
                },
                &[],
            )
        })
        .collect::<Result<_>>()?;
    Ok(Split { summary, pieces })
}

/// Where a sharded run's freed data and changelog paths go: the host chooses at the gate
/// ([`gate_with`]), and the gate, the shard reports, the delete units and the decision carry
/// the choice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Paths {
    /// Every path comes back to the driver: in the shard reports of a dry run, in the delete
    /// units' results, and in the final report (the same report as the single-process run).
    #[default]
    InResults,
    /// Each path goes to the task that freed it ([`ShardDecided::paths`] in a dry run,
    /// [`super::Executed::paths`] of a delete unit executed with
    /// [`super::execute_handing_paths`]); shard reports and delete-unit results carry files and
    /// bytes per class, every failure and the first [`super::SAMPLE_PATHS`] paths, so the
    /// driver's share grows with shards and units, not with files. The final report has the
    /// single-process run's counts and failures, the metadata files the driver deleted and the
    /// sample, and says its paths are elsewhere (`paths_elsewhere`).
    ToTasks,
}

/// What every shard task gets.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Gate {
    plan: u64,
    id: u64,
    shards: u32,
    reach: Reach,
    dry_run: bool,
    /// Candidate units: ids `0..candidate_units`.
    candidate_units: u32,
    protectors: Vec<WireProtector>,
    /// The freed paths go to the tasks ([`Paths::ToTasks`]).
    #[serde(default, skip_serializing_if = "is_false")]
    paths_to_tasks: bool,
}

/// What one shard decided.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ShardReport {
    plan: u64,
    id: u64,
    shard: u32,
    shards: u32,
    /// Its delete units: ids `first_unit..first_unit + units`.
    first_unit: u32,
    units: u32,
    /// The directories of its data and changelog files.
    dirs: Vec<String>,
    /// In a dry run, the files it would delete, with their gathering order.
    dry_files: Vec<WireFile>,
    dry_seqs: Vec<Seq>,
    /// With the paths going to the tasks, in a dry run: what it would delete, per class.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    dry_counts: Vec<Tally>,
    /// With the paths going to the tasks, in a dry run: the first paths it would delete.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    dry_sample: Vec<Sampled>,
}

/// What [`gate`] returns.
#[derive(Debug, Clone, Default)]
pub struct Gated {
    /// The decision so far, for [`conclude`].
    pub decision: Vec<u8>,
    /// For every shard task ([`decide_shard`]).
    pub gate: Vec<u8>,
}

/// What [`decide_shard`] returns.
#[derive(Debug, Clone, Default)]
pub struct ShardDecided {
    /// For the driver ([`conclude`]): no file lists but in a dry run.
    pub report: Vec<u8>,
    /// The shard's delete units, to [`super::execute`] (none in a dry run); with
    /// [`Paths::ToTasks`], to [`super::execute_handing_paths`].
    pub units: Vec<Vec<u8>>,
    /// With [`Paths::ToTasks`], in a dry run: every path the shard would delete, as the report
    /// shows it, in the single-process order, for the task to keep; otherwise empty.
    pub paths: Vec<String>,
}

/// The table root URI a gate names (for choosing an I/O concurrency before deciding a shard).
pub fn gate_table_uri(gate: &[u8]) -> Result<String> {
    let (g, _): (Gate, _) = decode(Kind::Gate, gate)?;
    Ok(g.reach.uri)
}

/// After the candidate units, with `summary` (every candidate unit's summary from [`split`]
/// into `shards`, merged): reads the removed versions' metadata and every protector, decides
/// and checks the metadata and the snapshot files, and returns the decision so far and the
/// gate for the shard tasks. Nothing is deleted by this call.
///
/// Errors: [`Error::InvalidArgument`] for foreign bytes, a missing or doubled summary or
/// summaries of another shard count; [`Error::PathRefused`]; storage and format errors reading
/// the removed versions' or the protectors' metadata.
pub async fn gate(
    table: &crate::table::Table,
    ctl: &RunControl,
    state: &[u8],
    summary: &[u8],
    shards: u32,
) -> Result<Gated> {
    gate_with(table, ctl, state, summary, shards, Paths::InResults).await
}

/// [`gate`], with `paths` choosing where the freed data and changelog paths go
/// ([`Paths::ToTasks`]: to the tasks, with counts, failures and a sample to the driver).
pub async fn gate_with(
    table: &crate::table::Table,
    ctl: &RunControl,
    state: &[u8],
    summary: &[u8],
    shards: u32,
    paths: Paths,
) -> Result<Gated> {
    check_shards(shards)?;
    let paths_to_tasks = paths == Paths::ToTasks;
    let st = decode_state(table, state)?;
    let id = plan_id(table);
    let mut decision = Decision::empty(&st);
    decision.sharded = Some(ShardedDecision {
        id,
        shards,
        concluded: false,
        unit_ranges: Vec::new(),
        dry_seqs: Vec::new(),
        paths_to_tasks,
        dry_counts: Vec::new(),
        dry_sample: Vec::new(),
    });
    let mut gate = Gate {
        plan: st.plan,
        id,
        shards,
        reach: st.reach.clone(),
        dry_run: st.dry_run,
        candidate_units: 0,
        protectors: Vec::new(),
        paths_to_tasks,
    };
    let part = Part::Summary { of: shards };
    let Outcome::Expire {
        decoupled,
        skip_tags,
        expired,
        kept,
        sizes,
        data_units,
        changelog_units,
        protect,
        ..
    } = &st.outcome
    else {
        results_of_part(summary, st.plan, Stage::Candidates, part, &[])?;
        return Ok(Gated {
            decision: encode(Kind::Decision, &decision, &[])?,
            gate: encode(Kind::Gate, &gate, &[])?,
        });
    };
    if protect.is_some() {
        return Err(Error::InvalidArgument(
            "the plan state has been through protect: it goes on unsharded".into(),
        ));
    }
    gate.candidate_units = *data_units + *changelog_units;
    let counted = results_of_part(
        summary,
        st.plan,
        Stage::Candidates,
        part,
        &[(0, gate.candidate_units)],
    )?;
    let candidates = total_count(&counted)?;
    let expired = snapshots_of(expired)?;
    let kept = snapshots_of(kept)?;
    let mut rr = ReferenceReader::new(table).with_memory(ctl.memory_budget());
    let (protectors, _) =
        read_protectors(&rr, table, &kept, &expired, *decoupled, skip_tags).await?;
    let sizes: BTreeMap<i64, u64> = sizes.iter().copied().collect();
    let snapshot_files = snapshot_files(table, &expired, &sizes);
    let plan = checked_metadata_plan(
        &mut rr,
        table,
        ctl,
        st.dry_run,
        &expired,
        &protectors,
        &snapshot_files,
    )
    .await?;
    decision.set_metadata(&plan, &snapshot_files);
    gate.protectors = protectors
        .iter()
        .map(WireProtector::of)
        .collect::<Result<_>>()?;
    tracing::info!(
        candidates,
        shards,
        protectors = gate.protectors.len(),
        "snapshot expiry: shard gate"
    );
    Ok(Gated {
        decision: encode(Kind::Decision, &decision, &[])?,
        gate: encode(Kind::Gate, &gate, &[])?,
    })
}

/// The number of candidates in the candidate units' merged summaries.
fn total_count(counted: &BTreeMap<u32, UnitResult>) -> Result<u64> {
    counted
        .values()
        .map(|r| match r {
            UnitResult::Counted(n) => Ok(*n),
            _ => Err(Error::InvalidArgument(
                "a candidate unit's summary holds no count".into(),
            )),
        })
        .sum()
}

/// The verdicts on the expired versions' own metadata (manifests, lists, index and statistics
/// files): the single-process code over no data candidates. Checks those paths and the
/// snapshot files (roots, kinds, no symlinked directory) before returning the plan.
async fn checked_metadata_plan(
    rr: &mut ReferenceReader<'_>,
    table: &crate::table::Table,
    ctl: &RunControl,
    dry_run: bool,
    expired: &[Snapshot],
    protectors: &[Protector],
    snapshot_files: &[PlannedFile],
) -> Result<DeletionPlan> {
    let removed = RemovedMetadata::read(rr, table, expired, MetadataScope::All).await?;
    let plan = DeletionPlan::from_parts_with(
        rr,
        table,
        Candidates::with_budget(ctl.memory_budget()),
        removed,
        protectors,
        None,
    )
    .await?;
    ctl.cancel.check()?;
    let deleter = Deleter::for_table(table, ctl, dry_run);
    deleter.check_plan(snapshot_files).await?;
    plan.check(&deleter, &[]).await?;
    Ok(plan)
}

/// What one location of a shard's gathering order holds (its key, its place, its share of
/// the map), for the run's budget.
fn order_entry_bytes(location: &str) -> u64 {
    hashed(std::mem::size_of::<String>() + std::mem::size_of::<Seq>()) + location.len() as u64
}

/// The candidates of a shard's piece in gathering order, and the gathering order of each
/// location: its first file slot, else its first extra slot (the slot the single-process
/// decision deletes it as). Both are charged to `memory`; the order's charge is returned with
/// it and given back when dropped.
fn shard_candidates(
    memory: &MemoryBudget,
    results: BTreeMap<u32, UnitResult>,
) -> Result<(Candidates, HashMap<String, Seq>, Charge)> {
    let mut out = Candidates::with_budget(memory.clone());
    let mut order: HashMap<String, Seq> = HashMap::new();
    let mut order_charge = Charge::new(memory, "the shard's gathering order");
    for (unit, r) in results {
        let UnitResult::Candidates(list) = r else {
            return Err(Error::InvalidArgument(
                "a shard's piece holds no candidates".into(),
            ));
        };
        for c in list {
            let Some(pos) = c.seq else {
                return Err(Error::InvalidArgument(
                    "a shard's piece holds a candidate without its position".into(),
                ));
            };
            let mut grown = 0;
            match order.get(&c.location) {
                Some((_, _, slot)) if *slot == 0 => {}
                _ => {
                    if order.insert(c.location.clone(), (unit, pos, 0)).is_none() {
                        grown += order_entry_bytes(&c.location);
                    }
                }
            }
            for (i, x) in c.extras.iter().enumerate() {
                if !order.contains_key(x) {
                    order.insert(x.clone(), (unit, pos, i as u32 + 1));
                    grown += order_entry_bytes(x);
                }
            }
            order_charge.set(order_charge.bytes() + grown)?;
            out.push(
                Location::parse(&c.location)?,
                Candidate {
                    class: class_of(c.class)?,
                    bytes: c.bytes,
                    extras: c
                        .extras
                        .iter()
                        .map(|x| Location::parse(x))
                        .collect::<Result<_>>()?,
                },
            )?;
        }
    }
    Ok((out, order, order_charge))
}

/// Decides shard `shard` (anywhere): `piece` is every candidate unit's piece of that shard,
/// merged. Opens the table from the gate with `host_options` added and winning (the
/// credentials), decides the shard's data and changelog files as the single-process run does,
/// checks every one of them and returns the shard's report and its delete units. Nothing is
/// deleted by this call.
///
/// Errors: [`Error::InvalidArgument`] for foreign bytes, another shard's piece or a missing or
/// doubled unit's piece; [`Error::PathRefused`]; storage and format errors reading the
/// protectors' metadata (strict, as the single-process run); cancellation.
pub async fn decide_shard(
    gate: &[u8],
    shard: u32,
    piece: &[u8],
    host_options: &HashMap<String, String>,
    ctl: &RunControl,
) -> Result<ShardDecided> {
    let (g, _): (Gate, _) = decode(Kind::Gate, gate)?;
    if shard >= g.shards {
        return Err(Error::InvalidArgument(format!(
            "shard {shard} of {} does not exist",
            g.shards
        )));
    }
    let results = results_of_part(
        piece,
        g.plan,
        Stage::Candidates,
        Part::Shard {
            id: shard,
            of: g.shards,
        },
        &[(0, g.candidate_units)],
    )?;
    let token = ctl.cancel.clone();
    let stop: StopReads = Arc::new(move || token.is_cancelled());
    let table = g.reach.open(host_options, Some(stop)).await?;
    let protectors: Vec<Protector> = g
        .protectors
        .iter()
        .map(WireProtector::protector)
        .collect::<Result<_>>()?;
    let memory = ctl.memory_budget();
    let (cands, order, order_charge) = shard_candidates(&memory, results)?;
    let mut rr = ReferenceReader::new(&table).with_memory(memory);
    let no_metadata = RemovedMetadata::read(&rr, &table, &[], MetadataScope::All).await?;
    let plan =
        DeletionPlan::from_parts_with(&mut rr, &table, cands, no_metadata, &protectors, None)
            .await?;
    ctl.cancel.check()?;
    // Every check of the shard's files before any of them is deleted.
    let deleter = Deleter::for_table(&table, ctl, g.dry_run);
    let dirs = plan.check(&deleter, &[]).await?;
    let (files, seqs) = planned_in_order(&plan, &order)?;
    drop(order);
    drop(order_charge);
    let mut dirs: Vec<String> = dirs.iter().map(|d| d.as_str().to_string()).collect();
    dirs.sort();
    let stride = u32::MAX / g.shards;
    let first_unit = shard * stride;
    let mut report = ShardReport {
        plan: g.plan,
        id: g.id,
        shard,
        shards: g.shards,
        first_unit,
        units: 0,
        dirs,
        dry_files: Vec::new(),
        dry_seqs: Vec::new(),
        dry_counts: Vec::new(),
        dry_sample: Vec::new(),
    };
    let mut units = Vec::new();
    let mut paths = Vec::new();
    if g.dry_run && g.paths_to_tasks {
        let (counts, sample, all) = dry_tally(&table, ctl, files, seqs).await?;
        report.dry_counts = counts;
        report.dry_sample = sample;
        paths = all;
    } else if g.dry_run {
        report.dry_files = files;
        report.dry_seqs = seqs;
    } else {
        units = shard_delete_units(&g, shard, first_unit, &files, &seqs)?;
        report.units = units.len() as u32;
    }
    tracing::info!(
        shard,
        delete_units = units.len(),
        "snapshot expiry: shard decided"
    );
    Ok(ShardDecided {
        report: encode(Kind::ShardReport, &report, &[])?,
        units,
        paths,
    })
}

/// A dry run's verdicts on a shard's files, as the single-process dry run records them (in
/// its order, sizing what metadata does not size, leaving out what is already gone): counts
/// per class, the first paths, and every path.
async fn dry_tally(
    table: &crate::table::Table,
    ctl: &RunControl,
    files: Vec<WireFile>,
    seqs: Vec<Seq>,
) -> Result<(Vec<Tally>, Vec<Sampled>, Vec<String>)> {
    let mut ordered: Vec<(Seq, WireFile)> = seqs.into_iter().zip(files).collect();
    ordered.sort_by_key(|(q, _)| *q);
    let mut order: HashMap<String, Seq> = HashMap::with_capacity(ordered.len());
    let mut planned = Vec::with_capacity(ordered.len());
    for (q, f) in ordered {
        let p = f.planned()?;
        order.insert(table.paths().display(&p.location), q);
        planned.push(p);
    }
    let mut deleter = Deleter::for_table(table, ctl, true).handing_paths_back();
    let n = planned.len() as u64;
    deleter
        .delete_each("data files", n, planned.into_iter())
        .await?;
    tally(deleter.take_handed(), |p| {
        order
            .get(p)
            .copied()
            .ok_or_else(|| Error::Internal(format!("{p} was recorded but not planned")))
    })
}

/// The data and changelog files a shard's plan deletes, each with its place in the
/// single-process order; fails if the plan could not read what it needs.
fn planned_in_order(
    plan: &DeletionPlan,
    order: &HashMap<String, Seq>,
) -> Result<(Vec<WireFile>, Vec<Seq>)> {
    let mut files = Vec::with_capacity(plan.data.len() + plan.changelog_data.len());
    let mut seqs = Vec::with_capacity(files.capacity());
    for p in plan.data.iter().chain(plan.changelog_data.iter()) {
        let seq = order.get(p.location.as_str()).copied().ok_or_else(|| {
            Error::Internal(format!("{} is planned but was no candidate", p.location))
        })?;
        files.push(WireFile::of(&p));
        seqs.push(seq);
    }
    plan.data.read_error()?;
    plan.changelog_data.read_error()?;
    Ok((files, seqs))
}

/// A shard's delete units: batches of its files numbered from `first_unit`, at most the
/// shard's share of the unit numbers (more is refused, nothing deleted).
fn shard_delete_units(
    g: &Gate,
    shard: u32,
    first_unit: u32,
    files: &[WireFile],
    seqs: &[Seq],
) -> Result<Vec<Vec<u8>>> {
    let stride = u32::MAX / g.shards;
    let n = files.len().div_ceil(FILES_PER_DELETE_UNIT);
    if n as u64 > u64::from(stride) {
        return Err(Error::InvalidArgument(format!(
            "shard {shard} has {n} delete units, more than the {stride} a shard of {} may \
             number; use more shards; nothing deleted",
            g.shards
        )));
    }
    files
        .chunks(FILES_PER_DELETE_UNIT)
        .zip(seqs.chunks(FILES_PER_DELETE_UNIT))
        .enumerate()
        .map(|(i, (f, q))| {
            encode(
                Kind::Unit,
                &Unit {
                    plan: g.plan,
                    stage: Stage::Delete,
                    index: first_unit + i as u32,
                    reach: g.reach.clone(),
                    work: Work::Delete {
                        files: f.to_vec(),
                        seqs: q.to_vec(),
                        paths_to_task: g.paths_to_tasks,
                    },
                },
                &[],
            )
        })
        .collect()
}

/// Concludes the sharded decision (driver): with the decision of [`gate`] and the report of
/// every shard, each exactly once, returns the decision for [`super::finish`] (which checks
/// the table). Nothing is deleted by this call.
///
/// Errors: [`Error::InvalidArgument`] for foreign bytes, a report of another decision, a
/// missing or doubled shard, or a decision concluded already.
pub fn conclude<R: AsRef<[u8]>>(decision: &[u8], reports: &[R]) -> Result<Vec<u8>> {
    let (mut d, _): (Decision, _) = decode(Kind::Decision, decision)?;
    let Some(s) = d.sharded.as_mut() else {
        return Err(Error::InvalidArgument(
            "the decision is not a sharded one; nothing deleted".into(),
        ));
    };
    if s.concluded {
        return Err(Error::InvalidArgument(
            "the sharded decision is concluded already; nothing deleted".into(),
        ));
    }
    let mut got: Vec<ShardReport> = reports
        .iter()
        .map(|r| decode::<ShardReport>(Kind::ShardReport, r.as_ref()).map(|(r, _)| r))
        .collect::<Result<_>>()?;
    if let Some(r) = got
        .iter()
        .find(|r| r.plan != d.plan || r.id != s.id || r.shards != s.shards)
    {
        return Err(Error::InvalidArgument(format!(
            "the report of shard {} belongs to another decision; nothing deleted",
            r.shard
        )));
    }
    got.sort_by_key(|r| r.shard);
    if let Some(w) = got.windows(2).find(|w| w[0].shard == w[1].shard) {
        return Err(Error::InvalidArgument(format!(
            "shard {} reported twice; nothing deleted",
            w[0].shard
        )));
    }
    if got.len() != s.shards as usize {
        let missing = (0..s.shards)
            .find(|i| got.get(*i as usize).map(|r| r.shard) != Some(*i))
            .unwrap_or(0);
        return Err(Error::InvalidArgument(format!(
            "{} of {} shard reports are missing (shard {missing} first); nothing deleted",
            (s.shards as usize).saturating_sub(got.len()),
            s.shards
        )));
    }
    let clean_dirs = matches!(
        d.outcome,
        Outcome::Expire {
            clean_dirs: true,
            ..
        }
    );
    let mut dirs = Vec::new();
    let mut dry: Vec<(Seq, WireFile)> = Vec::new();
    for r in got {
        if r.units > 0 {
            s.unit_ranges.push((r.first_unit, r.units));
        }
        if clean_dirs {
            dirs.extend(r.dirs);
        }
        dry.extend(r.dry_seqs.into_iter().zip(r.dry_files));
        add_tallies(&mut s.dry_counts, &r.dry_counts);
        s.dry_sample.extend(r.dry_sample);
        keep_first(&mut s.dry_sample);
    }
    dry.sort_by_key(|(q, _)| *q);
    s.dry_seqs = dry.iter().map(|(q, _)| *q).collect();
    s.concluded = true;
    d.delete_units = s.unit_ranges.iter().map(|(_, n)| *n).sum();
    d.dry_files = dry.into_iter().map(|(_, f)| f).collect();
    dirs.sort();
    dirs.dedup();
    d.dirs = dirs;
    encode(Kind::Decision, &d, &[])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clean::report::FileClass;

    fn piece() -> BTreeMap<u32, UnitResult> {
        let cand = |i: u32, extras: usize| WireCandidate {
            location: format!("file:///t/dt=1/bucket-0/data-{i}.orc"),
            class: FileClass::Data.code(),
            bytes: 10,
            extras: (0..extras)
                .map(|x| format!("file:///t/dt=1/bucket-0/data-{i}.orc.{x}.index"))
                .collect(),
            seq: Some(i),
        };
        let mut out = BTreeMap::new();
        out.insert(
            0,
            UnitResult::Candidates((0..200).map(|i| cand(i, 1)).collect()),
        );
        // A location again in a later unit (one order entry) and one with two extras.
        out.insert(1, UnitResult::Candidates(vec![cand(3, 0), cand(500, 2)]));
        out
    }

    #[test]
    fn the_gathering_order_is_charged_and_a_bound_too_small_for_it_fails() {
        let budget = MemoryBudget::new(None);
        let (cands, order, charge) = shard_candidates(&budget, piece()).unwrap();
        assert_eq!(order.len(), 200 * 2 + 3);
        let want: u64 = order.keys().map(|l| order_entry_bytes(l)).sum();
        assert_eq!(charge.bytes(), want);
        let with_order = budget.used();
        assert!(with_order > want, "the candidates are charged too");
        drop((cands, order, charge));
        assert_eq!(budget.used(), 0, "everything given back");
        // Room for the candidates but not for the order too.
        let tight = MemoryBudget::new(Some(with_order - want / 2));
        let err = shard_candidates(&tight, piece()).unwrap_err();
        assert!(matches!(err, Error::MemoryLimit { .. }), "{err}");
        assert!(tight.peak() <= with_order - want / 2);
        assert_eq!(tight.used(), 0, "a failed decision keeps no charge");
    }
}
