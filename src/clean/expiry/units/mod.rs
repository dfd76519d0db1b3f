//! Snapshot expiry as units an engine schedules:
//!
//! 1. [`plan`] (driver): resolves the retention, picks the range to expire (reads only) and
//!    returns the plan state and the **candidate units**, each a slice of the delta lists (or
//!    of the changelog lists) of the expired range;
//! 2. [`execute`] each candidate unit anywhere: it reads the manifests of its lists and returns
//!    the files they free (DELETE entries not cancelled by an ADD of the same list; changelog
//!    files), with their extra files, sizes and classes; [`merge`] the results;
//! 3. [`protect`] (driver): rebuilds the candidates in plan order, reads the removed versions'
//!    metadata and every protector (retained snapshots, tags of every branch, other branches'
//!    snapshots, long-lived changelogs; consumers bound the range in step 1) and returns the
//!    **protect units**, each a slice of the protectors with the candidates' location keys;
//! 4. [`execute`] each protect unit: it reads its protectors' manifests and returns the keys
//!    of the candidates they still need; [`merge`] the results;
//! 5. [`decide`] (driver): builds the deletion plan of the single-process expiry from the
//!    candidates and the protected keys (the same code: [`DeletionPlan::from_parts_with`]),
//!    checks every path of it (roots, kinds, no symlinked directory) and returns the decision
//!    and the **delete units** (batches of data and changelog files; none in a dry run);
//! 6. [`execute`] each delete unit (each path is checked again before it goes); [`merge`];
//! 7. [`finish`] (driver), after every delete unit succeeded: removes emptied directories,
//!    deletes the manifests, index files, statistics, lists, then the snapshot files, then
//!    writes the `EARLIEST` hint, in the crash-safe order of the single-process run, and returns
//!    its report.
//!
//! Steps 3 to 5 can instead be **sharded** (`sharded.rs`: [`split`], [`gate`], [`decide_shard`],
//! [`conclude`]), so that no process holds every candidate: each shard task decides the
//! candidates of its directories with the same code, and the driver keeps only per-unit counts,
//! the protectors and the removed versions' metadata.
//!
//! Every byte string is versioned ([`FORMAT_VERSION`]) and names its plan: results of another
//! plan, a unit's result included twice and a missing result are refused
//! ([`Error::InvalidArgument`]). Units carry the table root, its branch and the options minus
//! credentials; the executing host passes the credentials. Candidate and protect units only
//! read, so a failed or repeated one changes nothing. Delete units delete only files the
//! decision planned; if one fails (or its result is lost) [`finish`] deletes nothing, so the
//! manifests, lists and snapshot files that name the files still there stay, and a rerun
//! converges.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use crate::clean::control::RunControl;
use crate::clean::expiry::plan::{
    remove_empty_dirs, stop_if_failed, Candidate, Candidates, DeletionPlan, MetadataScope,
    RemovedMetadata,
};
use crate::clean::expiry::protected::{CandidateKeys, Protector, ReferenceReader};
use crate::clean::expiry::range::ExpiryBound;
use crate::clean::expiry::removed::{added_by_lists, deleted_by_deltas};
use crate::clean::expiry::snapshots::{
    prepare, read_protectors, snapshot_files, write_earliest_if_absent,
    write_long_lived_changelogs, ExpireConfig, ExpireReport, Prepared,
};
use crate::clean::report::{DeletedPath, FailedDelete, FileClass};
use crate::clean::shared::clock::now_millis;
use crate::clean::shared::deleter::Deleter;
use crate::clean::shared::keys::SortedKeys;
use crate::error::{Error, Result};
use crate::hash::{location_key, FastSet};
use crate::spec::snapshot::Snapshot;
use crate::storage::{Location, StopReads};
use crate::table::Table;

mod sharded;
mod wire;

pub use super::unit_bytes::FORMAT_VERSION;
use super::unit_bytes::{check_header, decode, encode, Kind};
pub use sharded::{
    conclude, decide_shard, gate, gate_table_uri, gate_with, split, Gated, Paths, ShardDecided,
    Split,
};
use wire::*;
pub use wire::{Decided, Executed, Planned, SAMPLE_PATHS};

/// Plans a snapshot expiry of `table`'s branch as units: resolves the retention and the range
/// (reads only; the errors of [`super::snapshots::expire_snapshots`] before its first
/// deletion, including Lance's refusal) and returns the plan state and the candidate units.
pub async fn plan(table: &Table, cfg: &ExpireConfig, ctl: &RunControl) -> Result<Planned> {
    let started_ms = now_millis();
    let plan = plan_id(table);
    let reach = Reach::of(table);
    let mut kept_by = Some(ExpiryBound::NoSnapshots);
    let (outcome, units) = match prepare(table, cfg, ctl).await? {
        Prepared::Nothing => (Outcome::Nothing, Vec::new()),
        Prepared::HintOnly { earliest, bound } => {
            kept_by = Some(bound);
            (Outcome::HintOnly { earliest }, Vec::new())
        }
        Prepared::AllKept { end, bound } => {
            kept_by = Some(bound);
            (Outcome::AllKept { end }, Vec::new())
        }
        Prepared::Expire(run) => {
            kept_by = Some(run.bound.clone());
            let changelog_lists: Vec<String> = run
                .expired
                .iter()
                .filter_map(|s| s.changelog_manifest_list.clone())
                .collect();
            let mut units = Vec::new();
            let mut index = 0u32;
            let mut slices = |lists: &[String], changelog: bool| -> Result<u32> {
                let mut n = 0;
                for slice in lists.chunks(LISTS_PER_UNIT) {
                    units.push(encode(
                        Kind::Unit,
                        &Unit {
                            plan,
                            stage: Stage::Candidates,
                            index,
                            reach: reach.clone(),
                            work: Work::Candidates {
                                changelog,
                                lists: slice.to_vec(),
                            },
                        },
                        &[],
                    )?);
                    index += 1;
                    n += 1;
                }
                Ok(n)
            };
            let data_units = slices(&run.delta_lists, false)?;
            let changelog_units = slices(&changelog_lists, true)?;
            let outcome = Outcome::Expire {
                begin: run.begin,
                end: run.end,
                clean_dirs: run.settings.clean_dirs,
                decoupled: run.settings.retention.changelog_decoupled,
                skip_tags: cfg.assume_removed.tags.clone(),
                expired: snapshots_json(&run.expired)?,
                kept: snapshots_json(&run.kept)?,
                sizes: run.sizes.into_iter().collect(),
                data_units,
                changelog_units,
                protect: None,
            };
            (outcome, units)
        }
    };
    tracing::info!(units = units.len(), "snapshot expiry planned as units");
    let state = State {
        plan,
        started_ms,
        reach,
        dry_run: cfg.dry_run,
        outcome,
        kept_by,
    };
    Ok(Planned {
        state: encode(Kind::State, &state, &[])?,
        units,
    })
}

/// The table root URI a unit names (for choosing an I/O concurrency before executing it).
pub fn table_uri(unit: &[u8]) -> Result<String> {
    let (u, _): (Unit, _) = decode(Kind::Unit, unit)?;
    Ok(u.reach.uri)
}

/// Executes one unit (candidate, protect or delete) anywhere: opens the table's branch from the
/// root and options the unit carries, with `host_options` added and winning (the
/// credentials), and returns its partial result. Reads stop at cancellation of `ctl`.
///
/// Errors: [`Error::InvalidArgument`] for bytes that are not a unit of this format version, and
/// for a delete unit of a decision whose paths go to the tasks ([`Paths::ToTasks`]: execute it
/// with [`execute_handing_paths`]; nothing deleted); storage errors opening the table; a
/// protect unit whose protectors' metadata cannot be read (strict, as the single-process
/// run); [`Error::PathRefused`] for a delete unit naming a path outside the table's roots or
/// of the wrong kind; cancellation. A file a delete unit cannot delete is in its result, not
/// an error.
pub async fn execute(
    unit: &[u8],
    host_options: &HashMap<String, String>,
    ctl: &RunControl,
) -> Result<Vec<u8>> {
    Ok(execute_unit(unit, host_options, ctl, false).await?.result)
}

/// [`execute`] for any unit, including the delete units of a decision whose paths go to the
/// tasks ([`Paths::ToTasks`]): their result holds the files and bytes deleted per class, every
/// failure (path and error) and the first [`SAMPLE_PATHS`] deleted paths, and
/// [`Executed::paths`] every path the unit deleted, for the executing task to keep where it
/// wants. For every other unit the paths are empty and the result is [`execute`]'s.
pub async fn execute_handing_paths(
    unit: &[u8],
    host_options: &HashMap<String, String>,
    ctl: &RunControl,
) -> Result<Executed> {
    execute_unit(unit, host_options, ctl, true).await
}

async fn execute_unit(
    unit: &[u8],
    host_options: &HashMap<String, String>,
    ctl: &RunControl,
    hands_paths: bool,
) -> Result<Executed> {
    let (unit, keys): (Unit, Vec<u64>) = decode(Kind::Unit, unit)?;
    let stop = match unit.work {
        Work::Delete { paths_to_task, .. } => {
            if paths_to_task && !hands_paths {
                return Err(Error::InvalidArgument(
                    "this delete unit hands its deleted paths to the task: execute it with \
                     the call that returns them; nothing deleted"
                        .into(),
                ));
            }
            None
        }
        _ => {
            let token = ctl.cancel.clone();
            let stop: StopReads = Arc::new(move || token.is_cancelled());
            Some(stop)
        }
    };
    let table = unit.reach.open(host_options, stop).await?;
    let mut paths = Vec::new();
    let result = match unit.work {
        Work::Candidates { changelog, lists } => {
            UnitResult::Candidates(read_candidates(&table, ctl, changelog, &lists).await?)
        }
        Work::Protect {
            protectors,
            data_keys,
        } => {
            let protectors: Vec<Protector> = protectors
                .iter()
                .map(WireProtector::protector)
                .collect::<Result<_>>()?;
            let split = (data_keys as usize).min(keys.len());
            let mut data = keys;
            let meta = data.split_off(split);
            UnitResult::Protected(read_protected(&table, ctl, &protectors, data, meta).await?)
        }
        Work::Delete {
            files,
            seqs,
            paths_to_task,
        } => {
            // The gathering order of each path as the report shows it, to hand back.
            let order: HashMap<String, Seq> = files
                .iter()
                .zip(&seqs)
                .map(|(f, q)| Ok((table.paths().display(&Location::parse(&f.location)?), *q)))
                .collect::<Result<_>>()?;
            let files = planned_all(&files)?;
            let mut deleter = Deleter::for_table(&table, ctl, false).handing_paths_back();
            deleter.check_plan(&files).await?;
            deleter.delete("data files", files).await?;
            let handed = deleter.take_handed();
            let seq_of = |p: &str| {
                order
                    .get(p)
                    .copied()
                    .ok_or_else(|| Error::Internal(format!("{p} was deleted but not given")))
            };
            let failed = deleter
                .report
                .failed
                .iter()
                .map(|f| (f.path.clone(), f.error.clone()))
                .collect();
            if paths_to_task {
                let (counts, sample, all) = tally(handed, seq_of)?;
                paths = all;
                UnitResult::Tallied {
                    counts,
                    sample,
                    failed,
                }
            } else {
                let deleted: Vec<(u8, String, u64)> = handed
                    .into_iter()
                    .map(|(c, p, b)| (c.code(), p, b))
                    .collect();
                let seqs = if order.is_empty() {
                    Vec::new()
                } else {
                    deleted
                        .iter()
                        .map(|(_, p, _)| seq_of(p))
                        .collect::<Result<_>>()?
                };
                UnitResult::Deleted {
                    deleted,
                    failed,
                    seqs,
                }
            }
        }
    };
    let mut results = BTreeMap::new();
    results.insert(unit.index, result);
    let result = encode(
        Kind::Partial,
        &Partial {
            plan: unit.plan,
            stage: unit.stage,
            part: Part::Whole,
            results,
        },
        &[],
    )?;
    Ok(Executed { result, paths })
}

/// The candidates of `lists`, in plan order, as the single-process run reads them.
async fn read_candidates(
    table: &Table,
    ctl: &RunControl,
    changelog: bool,
    lists: &[String],
) -> Result<Vec<WireCandidate>> {
    let rr = ReferenceReader::new(table).with_memory(ctl.memory_budget());
    let cands = if changelog {
        added_by_lists(&rr, table, lists, FileClass::ChangelogData).await?
    } else {
        deleted_by_deltas(&rr, table, lists, &HashSet::new()).await?
    };
    let mut out = Vec::with_capacity(cands.len());
    let mut records = cands.reader();
    while let Some(rec) = records.next_record() {
        let rec = rec.map_err(crate::clean::expiry::plan::candidates::spill_error)?;
        let r = cands
            .decode(rec)
            .ok_or_else(|| Error::Internal("a candidate record does not parse".into()))?;
        out.push(WireCandidate {
            location: r.location.as_str().to_string(),
            class: r.class.code(),
            bytes: r.bytes,
            extras: r.extras.iter().map(|x| x.as_str().to_string()).collect(),
            seq: None,
        });
    }
    Ok(out)
}

/// The keys, among `data` and `meta` (sorted), of the locations `protectors` still need.
async fn read_protected(
    table: &Table,
    ctl: &RunControl,
    protectors: &[Protector],
    data: Vec<u64>,
    meta: Vec<u64>,
) -> Result<Vec<u64>> {
    let mut rr = ReferenceReader::new(table).with_memory(ctl.memory_budget());
    let filter = Arc::new(
        CandidateKeys::new(SortedKeys::from_sorted(data)).with_more(SortedKeys::from_sorted(meta)),
    );
    let mut protected: FastSet<u64> = FastSet::default();
    let f = filter.clone();
    rr.protect_among(
        protectors,
        filter,
        |l| {
            let k = location_key(l.as_str());
            f.sorted().contains(k) || f.more().contains(k)
        },
        |l| {
            protected.insert(location_key(l.as_str()));
        },
    )
    .await?;
    let mut out: Vec<u64> = protected.into_iter().collect();
    out.sort_unstable();
    Ok(out)
}

/// Merges two partial results of one stage of one plan: associative and commutative, byte
/// for byte; an empty byte string is the neutral element. Refuses results of different plans
/// or stages and a unit's result included twice ([`Error::InvalidArgument`]).
pub fn merge(a: &[u8], b: &[u8]) -> Result<Vec<u8>> {
    // With the neutral element the other side is returned as it is, its header checked (its
    // body is read by whoever takes the merge).
    if a.is_empty() {
        if !b.is_empty() {
            check_header(Kind::Partial, b)?;
        }
        return Ok(b.to_vec());
    }
    if b.is_empty() {
        check_header(Kind::Partial, a)?;
        return Ok(a.to_vec());
    }
    let (mut pa, _): (Partial, _) = decode(Kind::Partial, a)?;
    let (pb, _): (Partial, _) = decode(Kind::Partial, b)?;
    if pa.plan != pb.plan || pa.stage != pb.stage {
        return Err(Error::InvalidArgument(
            "partial results of different plans or stages".into(),
        ));
    }
    if pa.part != pb.part {
        return Err(Error::InvalidArgument(format!(
            "partial results of different parts ({:?} and {:?})",
            pa.part, pb.part
        )));
    }
    for (i, r) in pb.results {
        if pa.results.insert(i, r).is_some() {
            return Err(Error::InvalidArgument(format!(
                "the result of unit {i} is included twice"
            )));
        }
    }
    encode(Kind::Partial, &pa, &[])
}

/// The candidates in the order the single-process run gathers them: the delta lists' in list
/// order, then the changelog lists'.
fn candidates_of(ctl: &RunControl, results: BTreeMap<u32, UnitResult>) -> Result<Candidates> {
    let mut out = Candidates::with_budget(ctl.memory_budget());
    for (_, r) in results {
        let UnitResult::Candidates(list) = r else {
            return Err(Error::InvalidArgument(
                "a candidate unit's result holds no candidates".into(),
            ));
        };
        for c in list {
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
    Ok(out)
}

/// After the candidate units: rebuilds the candidates in plan order, reads the removed
/// versions' metadata and every protector, and returns the new state and the protect units.
/// `merged` is every candidate unit's result, merged.
///
/// Errors: [`Error::InvalidArgument`] for foreign bytes or a missing result; storage and
/// format errors reading what protects files (nothing is deleted by this step).
pub async fn protect(
    table: &Table,
    ctl: &RunControl,
    state: &[u8],
    merged: &[u8],
) -> Result<Planned> {
    let mut st = decode_state(table, state)?;
    let Outcome::Expire {
        decoupled,
        skip_tags,
        expired,
        kept,
        data_units,
        changelog_units,
        protect,
        ..
    } = &mut st.outcome
    else {
        results_of(merged, st.plan, Stage::Candidates, 0, 0)?;
        return Ok(Planned {
            state: encode(Kind::State, &st, &[])?,
            units: Vec::new(),
        });
    };
    if protect.is_some() {
        return Err(Error::InvalidArgument(
            "the plan state has been through protect already".into(),
        ));
    }
    let results = results_of(
        merged,
        st.plan,
        Stage::Candidates,
        0,
        *data_units + *changelog_units,
    )?;
    let expired = snapshots_of(expired)?;
    let kept = snapshots_of(kept)?;
    let cands = candidates_of(ctl, results)?;
    let rr = ReferenceReader::new(table).with_memory(ctl.memory_budget());
    let removed = RemovedMetadata::read(&rr, table, &expired, MetadataScope::All).await?;
    let meta_keys = removed.location_keys(table)?.into_keys();
    let (protectors, _) =
        read_protectors(&rr, table, &kept, &expired, *decoupled, skip_tags).await?;
    let mut data_keys = cands.keys.clone();
    data_keys.sort_unstable();
    data_keys.dedup();
    let mut meta_sorted = meta_keys.clone();
    meta_sorted.dedup();
    let mut tail = data_keys.clone();
    tail.extend(meta_sorted.iter().copied());
    let wire: Vec<WireProtector> = protectors
        .iter()
        .map(WireProtector::of)
        .collect::<Result<_>>()?;
    let mut units = Vec::new();
    if !(data_keys.is_empty() && meta_sorted.is_empty()) {
        for (i, slice) in wire.chunks(PROTECTORS_PER_UNIT).enumerate() {
            let unit = Unit {
                plan: st.plan,
                stage: Stage::Protect,
                index: i as u32,
                reach: st.reach.clone(),
                work: Work::Protect {
                    protectors: slice.to_vec(),
                    data_keys: data_keys.len() as u64,
                },
            };
            units.push(encode(Kind::Unit, &unit, &tail)?);
        }
    }
    *protect = Some(ProtectStage {
        protectors: wire,
        meta_keys: meta_sorted,
        units: units.len() as u32,
    });
    tracing::info!(
        candidates = cands.len(),
        protect_units = units.len(),
        "snapshot expiry: protect units planned"
    );
    Ok(Planned {
        state: encode(Kind::State, &st, &[])?,
        units,
    })
}

/// The keys the protect units found protected, sorted and each once.
fn protected_keys_of(results: BTreeMap<u32, UnitResult>) -> Result<Vec<u64>> {
    let mut keys: Vec<u64> = Vec::new();
    for (_, r) in results {
        let UnitResult::Protected(found) = r else {
            return Err(Error::InvalidArgument(
                "a protect unit's result holds no keys".into(),
            ));
        };
        keys.extend(found);
    }
    keys.sort_unstable();
    keys.dedup();
    Ok(keys)
}

/// Fails with a [`Error::Conflict`] when `removed` names metadata the protect units were not
/// given (`known`: the metadata candidates' keys fixed by [`protect`]).
fn check_metadata_unchanged(table: &Table, known: &[u64], removed: &RemovedMetadata) -> Result<()> {
    let known = SortedKeys::from_sorted(known.to_vec());
    if let Some(k) = removed
        .location_keys(table)?
        .keys()
        .iter()
        .find(|k| !known.contains(**k))
    {
        return Err(Error::Conflict(format!(
            "the removed versions' metadata changed since the protect step (key {k:016x}); \
             plan again (nothing deleted)"
        )));
    }
    Ok(())
}

/// The delete units of `files`, numbered from 0.
fn delete_units_of(st: &State, files: &[WireFile]) -> Result<Vec<Vec<u8>>> {
    files
        .chunks(FILES_PER_DELETE_UNIT)
        .enumerate()
        .map(|(i, slice)| {
            encode(
                Kind::Unit,
                &Unit {
                    plan: st.plan,
                    stage: Stage::Delete,
                    index: i as u32,
                    reach: st.reach.clone(),
                    work: Work::Delete {
                        files: slice.to_vec(),
                        seqs: Vec::new(),
                        paths_to_task: false,
                    },
                },
                &[],
            )
        })
        .collect()
}

/// After the protect units: builds the deletion plan of the single-process run from the
/// candidates (`candidates`: every candidate unit's result, merged, as given to [`protect`])
/// and the keys the protect units found protected (`protected`: every protect unit's result,
/// merged), checks every path, and returns the decision and the delete units (none in a dry
/// run). Nothing is deleted by this call.
///
/// Errors: [`Error::InvalidArgument`] for foreign bytes or a missing result; a
/// [`Error::Conflict`] when the removed versions' metadata changed since [`protect`];
/// [`Error::PathRefused`]; storage and format errors reading the protectors' metadata.
pub async fn decide(
    table: &Table,
    ctl: &RunControl,
    state: &[u8],
    candidates: &[u8],
    protected: &[u8],
) -> Result<Decided> {
    let st = decode_state(table, state)?;
    let mut decision = Decision::empty(&st);
    let Outcome::Expire {
        clean_dirs,
        expired,
        sizes,
        data_units,
        changelog_units,
        protect,
        ..
    } = &st.outcome
    else {
        return Ok(Decided {
            decision: encode(Kind::Decision, &decision, &[])?,
            units: Vec::new(),
        });
    };
    let Some(protect) = protect else {
        return Err(Error::InvalidArgument(
            "the plan state has not been through protect".into(),
        ));
    };
    let cand_results = results_of(
        candidates,
        st.plan,
        Stage::Candidates,
        0,
        *data_units + *changelog_units,
    )?;
    let prot_results = results_of(protected, st.plan, Stage::Protect, 0, protect.units)?;
    let expired = snapshots_of(expired)?;
    let protectors: Vec<Protector> = protect
        .protectors
        .iter()
        .map(WireProtector::protector)
        .collect::<Result<_>>()?;
    let cands = candidates_of(ctl, cand_results)?;
    let protected_keys = protected_keys_of(prot_results)?;
    let mut rr = ReferenceReader::new(table).with_memory(ctl.memory_budget());
    let removed = RemovedMetadata::read(&rr, table, &expired, MetadataScope::All).await?;
    // The protect units looked for the metadata candidates fixed by `protect`: one that
    // appeared since was not looked for.
    check_metadata_unchanged(table, &protect.meta_keys, &removed)?;
    let plan = DeletionPlan::from_parts_with(
        &mut rr,
        table,
        cands,
        removed,
        &protectors,
        Some(&protected_keys),
    )
    .await?;
    ctl.cancel.check()?;
    let sizes: BTreeMap<i64, u64> = sizes.iter().copied().collect();
    let snapshot_files = snapshot_files(table, &expired, &sizes);
    let deleter = Deleter::for_table(table, ctl, st.dry_run);
    // Every check, for the whole plan and the snapshot files, before any unit deletes.
    deleter.check_plan(&snapshot_files).await?;
    let data_dirs = plan.check(&deleter, &[]).await?;
    let files: Vec<WireFile> = plan
        .data
        .iter()
        .chain(plan.changelog_data.iter())
        .map(|p| WireFile::of(&p))
        .collect();
    plan.data.read_error()?;
    plan.changelog_data.read_error()?;
    let units = if st.dry_run {
        decision.dry_files = files;
        Vec::new()
    } else {
        delete_units_of(&st, &files)?
    };
    decision.delete_units = units.len() as u32;
    if *clean_dirs {
        decision.dirs = data_dirs.iter().map(|d| d.as_str().to_string()).collect();
    }
    decision.set_metadata(&plan, &snapshot_files);
    tracing::info!(delete_units = units.len(), "snapshot expiry decided");
    Ok(Decided {
        decision: encode(Kind::Decision, &decision, &[])?,
        units,
    })
}

/// The report of a decision that expires nothing (writing the `EARLIEST` hint where due), or
/// `None` for one that expires snapshots.
async fn finish_without_expiry(
    table: &Table,
    d: &Decision,
    deleter: Deleter<'_>,
) -> Result<Option<ExpireReport>> {
    let mut report = ExpireReport {
        kept_by: d.kept_by.clone(),
        ..ExpireReport::default()
    };
    match &d.outcome {
        Outcome::Nothing => {}
        Outcome::HintOnly { earliest } => {
            write_earliest_if_absent(table, d.dry_run, *earliest).await?;
            report.earliest_after = Some(*earliest);
            report.deletion = deleter.report;
        }
        Outcome::AllKept { end } => {
            report.earliest_after = Some(*end);
            report.deletion = deleter.report;
        }
        Outcome::Expire { .. } => return Ok(None),
    }
    report.elapsed_ms = elapsed_since(d.started_ms);
    Ok(Some(report))
}

fn elapsed_since(started_ms: i64) -> u64 {
    now_millis().saturating_sub(started_ms).max(0) as u64
}

/// The data stage's outcome into `deleter`'s report: in a dry run the decision's files, else
/// every delete unit's result (`merged`, checked complete), in the single-process run's order.
async fn record_data_stage(deleter: &mut Deleter<'_>, d: &Decision, merged: &[u8]) -> Result<()> {
    let ranges = match &d.sharded {
        None => vec![(0, d.delete_units)],
        Some(s) if s.concluded => s.unit_ranges.clone(),
        Some(_) => {
            return Err(Error::InvalidArgument(
                "the sharded decision has not been concluded with every shard's report; \
                 nothing deleted"
                    .into(),
            ))
        }
    };
    let results = results_of_part(merged, d.plan, Stage::Delete, Part::Whole, &ranges)?;
    if let Some(s) = d.sharded.as_ref().filter(|s| s.paths_to_tasks) {
        return record_tallies(deleter, s, results);
    }
    if d.dry_run {
        let files = planned_all(&d.dry_files)?;
        let n = files.len() as u64;
        deleter
            .delete_each("data files", n, files.into_iter())
            .await?;
    }
    let mut deleted_all: Vec<(Seq, u8, String, u64)> = Vec::new();
    for (_, r) in results {
        let UnitResult::Deleted {
            deleted,
            failed,
            seqs,
        } = r
        else {
            return Err(Error::InvalidArgument(
                "a delete unit's result holds no deletions".into(),
            ));
        };
        if d.sharded.is_some() && seqs.len() != deleted.len() {
            return Err(Error::InvalidArgument(
                "a delete unit's result of a sharded decision lacks the files' order".into(),
            ));
        }
        let seqs = seqs.into_iter().chain(std::iter::repeat((0, 0, 0)));
        for (q, (class, path, bytes)) in seqs.zip(deleted) {
            deleted_all.push((q, class, path, bytes));
        }
        deleter.report.failed.extend(
            failed
                .into_iter()
                .map(|(path, error)| FailedDelete { path, error }),
        );
    }
    // Unsharded results come in unit order already; sharded ones by their gathering order.
    if d.sharded.is_some() {
        deleted_all.sort_by_key(|(q, ..)| *q);
    }
    for (_, class, path, bytes) in deleted_all {
        deleter.report.record(class_of(class)?, path, bytes);
    }
    Ok(())
}

/// The data stage of a sharded decision whose paths went to the tasks: the shards' dry-run
/// counts, or every delete unit's counts, added to `deleter`'s report with the first
/// [`SAMPLE_PATHS`] paths in the single-process order and every failure; the report says its
/// paths are elsewhere.
fn record_tallies(
    deleter: &mut Deleter<'_>,
    s: &ShardedDecision,
    results: BTreeMap<u32, UnitResult>,
) -> Result<()> {
    let mut counts = s.dry_counts.clone();
    let mut sample = s.dry_sample.clone();
    for (_, r) in results {
        let UnitResult::Tallied {
            counts: c,
            sample: q,
            failed,
        } = r
        else {
            return Err(Error::InvalidArgument(
                "a delete unit's result of a decision whose paths go to the tasks holds no \
                 counts; nothing deleted by this step"
                    .into(),
            ));
        };
        add_tallies(&mut counts, &c);
        sample.extend(q);
        keep_first(&mut sample);
        deleter.report.failed.extend(
            failed
                .into_iter()
                .map(|(path, error)| FailedDelete { path, error }),
        );
    }
    for (class, files, bytes) in counts {
        let c = deleter.report.deleted.entry(class_of(class)?).or_default();
        c.files += files;
        c.bytes += bytes;
    }
    keep_first(&mut sample);
    for (_, class, path) in sample {
        deleter.report.paths.push(DeletedPath {
            class: class_of(class)?,
            path,
        });
    }
    deleter.report.paths_elsewhere = true;
    Ok(())
}

/// The metadata stage, after every data file went: emptied directories, then manifests,
/// index files, statistics, lists, the long-lived changelogs, the snapshot files and the
/// `EARLIEST` hint, stopping at the first phase with a failed deletion.
async fn delete_metadata(
    table: &Table,
    deleter: &mut Deleter<'_>,
    d: &Decision,
    decoupled: bool,
    expired: &[Snapshot],
    report: &mut ExpireReport,
) -> Result<()> {
    if !d.dirs.is_empty() {
        let dirs: Vec<Location> = d
            .dirs
            .iter()
            .map(|x| Location::parse(x))
            .collect::<Result<_>>()?;
        remove_empty_dirs(table, deleter, dirs).await;
    }
    let snapshot_files = planned_all(&d.snapshot_files)?;
    let manifests = planned_all(&d.manifests)?;
    let index_files = planned_all(&d.index_files)?;
    let statistics = planned_all(&d.statistics)?;
    let lists = planned_all(&d.lists)?;
    // The driver's part of the plan is checked again before its first deletion.
    deleter
        .check_plan(
            manifests
                .iter()
                .chain(&index_files)
                .chain(&statistics)
                .chain(&lists)
                .chain(&snapshot_files),
        )
        .await?;
    deleter.delete("manifests", manifests).await?;
    stop_if_failed(deleter)?;
    deleter.delete("index files", index_files).await?;
    deleter.delete("statistics", statistics).await?;
    stop_if_failed(deleter)?;
    deleter.delete("manifest lists", lists).await?;
    stop_if_failed(deleter)?;
    if decoupled && !d.dry_run {
        report.changelogs_written = write_long_lived_changelogs(table, expired).await?;
    }
    deleter.delete("snapshot files", snapshot_files).await?;
    stop_if_failed(deleter)?;
    Ok(())
}

/// Finishes, on the driver, after every delete unit: if any file of a delete unit could not be
/// deleted, stops with a storage error before deleting the metadata that names it (a rerun
/// finishes); otherwise removes emptied directories (with `snapshot.clean-empty-directories`),
/// deletes the manifests, index files, statistics, lists and index manifests, writes the
/// long-lived changelogs (decoupled lifecycle), deletes the snapshot files and writes the
/// `EARLIEST` hint, and returns the report of the single-process run. `merged` is every delete
/// unit's result, merged (empty when there was none). A sharded decision must have been
/// concluded ([`conclude`]) with every shard's report.
pub async fn finish(
    table: &Table,
    ctl: &RunControl,
    decision: &[u8],
    merged: &[u8],
) -> Result<ExpireReport> {
    let (d, _): (Decision, _) = decode(Kind::Decision, decision)?;
    d.reach.check_same(table)?;
    let mut deleter = Deleter::for_table(table, ctl, d.dry_run);
    let Outcome::Expire {
        begin,
        end,
        decoupled,
        expired,
        ..
    } = &d.outcome
    else {
        if let Some(report) = finish_without_expiry(table, &d, deleter).await? {
            return Ok(report);
        }
        return Err(Error::Internal("an expiry decision without expiry".into()));
    };
    let (begin, end, decoupled) = (*begin, *end, *decoupled);
    let expired = snapshots_of(expired)?;
    let mut report = ExpireReport {
        kept_by: d.kept_by.clone(),
        ..ExpireReport::default()
    };
    record_data_stage(&mut deleter, &d, merged).await?;
    // A data file left behind keeps the metadata that lists it, for a rerun.
    stop_if_failed(&deleter)?;
    delete_metadata(table, &mut deleter, &d, decoupled, &expired, &mut report).await?;
    if !d.dry_run {
        table
            .snapshots()
            .write_hint(table.storage(), "EARLIEST", end)
            .await?;
    }
    report.snapshots_expired = expired.len() as u64;
    report.first_expired = Some(begin);
    report.last_expired = expired.last().map(|s| s.id);
    report.earliest_after = Some(end);
    report.deletion = deleter.report;
    report.elapsed_ms = elapsed_since(d.started_ms);
    tracing::info!(
        expired = report.snapshots_expired,
        files = report.deletion.total_files(),
        "expired snapshots (units)"
    );
    Ok(report)
}
