//! The single-process run of orphan removal ([`remove_orphan_files`]): the units of
//! [`units`](super::units) executed in this process, the read units while the planner still
//! plans, the list units against the folded reference keys, then the decision and the delete
//! units in phase order.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use futures::channel::mpsc::UnboundedSender;
use futures::stream::{self, StreamExt};

use crate::clean::control::RunControl;
use crate::error::{Error, Result};
use crate::memory::Charge;
use crate::table::Table;

use super::config::OrphanConfig;
use super::keyset::{KeyLog, KeySet, SharedKeyIndex};
use super::partial::{finish_merge, merge_all, merge_into, Partial};
use super::planner::State;
use super::report::OrphanReport;
use super::units::main_of;
use super::work_unit::{Unit, Work};
use super::{decide, exec, planner, refs, units};

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

/// Removes orphan files of the table `table` belongs to (every branch; `table` may be opened
/// on any branch). See the module documentation for the rules.
///
/// This is the single-process run of the units ([`units`]): plan, execute every plan unit here,
/// merge, decide, execute the delete units in order, finish — the same code a distributed run
/// schedules on an engine's workers. Here the read units run first, from the first step of the
/// planning on (while the planner reads the other versions' manifest lists), and their keys
/// are folded into one sorted set as they come; the list units then list against it, so only the
/// candidates no location references are held, and on a local disk only those files are
/// `stat`ed for their age (a distributed run holds every old candidate until the decision). The
/// keys and the candidates are charged to the run's memory bound
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
    let mut keys_charge = Charge::new(&memory, "orphan removal's reference keys");
    let (state, mut merged, lists) = plan_and_read(&main, cfg, ctl, &mut keys_charge).await?;
    ctl.cancel.check()?;
    let mut candidates_charge = Charge::new(&memory, "orphan removal's candidate files");
    let listed = list_unreferenced(
        &main,
        cfg,
        ctl,
        lists,
        &mut merged,
        &mut keys_charge,
        &mut candidates_charge,
    )
    .await?;
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

/// Planning and the references at once: the read units run as the planner hands them over
/// (it reads the versions' manifest lists a step at a time), the list units wait for the
/// references. The references are folded as they come: only sorted, deduplicated keys stay,
/// charged to `keys_charge`. Returns the plan's state, the merged read results with every
/// location key (planning's own included) and the name keys in a log, and the list units.
async fn plan_and_read(
    main: &Table,
    cfg: &OrphanConfig,
    ctl: &RunControl,
    keys_charge: &mut Charge,
) -> Result<(State, Partial, Vec<Unit>)> {
    let io = ctl.io_concurrency.max(1);
    let units_in_flight = if main.storage().root().is_local() {
        LOCAL_UNITS_IN_FLIGHT
    } else {
        UNITS_IN_FLIGHT
    };
    let mut merged = Partial::default();
    // The names only at the decision, against the few candidates no location references:
    // logged to a temporary file meanwhile.
    let (mut locations, mut names) = (KeySet::default(), KeyLog::default());
    let mut lists: Vec<Unit> = Vec::new();
    let (reads_tx, reads_rx) = futures::channel::mpsc::unbounded::<Unit>();
    // Read items handed over so far (the progress total grows with the plan).
    let read_total = AtomicU64::new(0);
    let planning = plan_handing_over(main, cfg, ctl, &mut lists, &read_total, reads_tx);
    let reading = async {
        let mut read_done = 0u64;
        let mut results = reads_rx
            .map(|u| exec::execute_unordered(main, u, io, ctl, None))
            .buffer_unordered(units_in_flight);
        while let Some(p) = results.next().await {
            let mut p = p?;
            let total = read_total.load(Ordering::Relaxed);
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
    let (mut state, read_done) = futures::try_join!(planning, reading)?;
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
    locations.add(&std::mem::take(&mut state.found.locations));
    names.add(&std::mem::take(&mut state.found.names))?;
    merged.locations = locations.finish();
    merged.add_name_log(names.finish()?);
    keys_charge.set(merged.key_bytes())?;
    Ok((state, merged, lists))
}

/// Plans, handing each read unit to `reads_tx` as the planner emits it (counting its manifests
/// into `read_total`, the progress total) and keeping the list units in `lists`. The sender is
/// dropped at the end, so the reading ends once the last read unit is done.
async fn plan_handing_over(
    main: &Table,
    cfg: &OrphanConfig,
    ctl: &RunControl,
    lists: &mut Vec<Unit>,
    read_total: &AtomicU64,
    reads_tx: UnboundedSender<Unit>,
) -> Result<State> {
    let mut emit = |u: Unit| match &u.work {
        Work::Read { items, .. } => {
            let n = items.iter().filter(|i| !i.index).count() as u64;
            let before = read_total.fetch_add(n, Ordering::Relaxed);
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
    Ok(state)
}

/// Runs the list units against the location keys of `merged` (a referenced file is only
/// counted, and on a local disk not even `stat`ed) and returns their merged results: the
/// candidates no location references, charged to `candidates_charge`.
async fn list_unreferenced(
    main: &Table,
    cfg: &OrphanConfig,
    ctl: &RunControl,
    lists: Vec<Unit>,
    merged: &mut Partial,
    keys_charge: &mut Charge,
    candidates_charge: &mut Charge,
) -> Result<Partial> {
    let list_conc = cfg.list_concurrency.unwrap_or(ctl.io_concurrency).max(1);
    let io = ctl.io_concurrency.max(1);
    let mut listed = Partial::default();
    // Owned behind an `Arc`: the listing's blocking sections look keys up too, and the keys
    // come back after.
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
            exec::execute_unordered(main, u, conc, ctl, Some(shared))
        })
        .buffer_unordered(LIST_UNITS_IN_FLIGHT);
    while let Some(p) = results.next().await {
        let p = p?;
        let bytes = candidates_charge.bytes() + p.candidate_bytes();
        candidates_charge.set(bytes)?;
        merge_into(&mut listed, p)?;
    }
    drop(results);
    // Every listing is done, so nothing else holds the keys; were one still held, a copy.
    merged.locations = match Arc::try_unwrap(referenced) {
        Ok(index) => index.into_keys(),
        Err(shared) => shared.keys().to_vec(),
    };
    Ok(listed)
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
