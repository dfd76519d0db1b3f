//! Planning (on the driver): the cut-off, the roots, the partition walk down to the last level,
//! the first reading of every version and its manifest lists, and the units — "list these
//! directories" (the metadata directories; groups of last-level partition directories with
//! their buckets) and "read these manifests" (slices of the distinct manifests and index
//! manifests of every version of every branch) — plus the state the decision continues from.

use serde::{Deserialize, Serialize};

use crate::clean::control::RunControl;
use crate::clean::shared::clock::now_millis;
use crate::error::{Error, Result};
use crate::storage::Location;
use crate::table::{branch_root, list_branches, Table};

use super::codec::{Kind, Reader, Writer};
use super::listing::list_tolerant;
use super::partial::Partial;
use super::shard::Sharded;
use super::tracker::Tracker;
use super::work_unit::{ListDir, ListKind, Reach, ReadItem, Unit, Work};
use super::{resolve_cutoff, OrphanConfig};

/// Last-level partition directories per list unit (each with its bucket directories).
pub(crate) const PARTITIONS_PER_UNIT: usize = 32;

/// Manifests (or index manifests) per read unit.
pub(crate) const MANIFESTS_PER_UNIT: usize = 64;

/// Steps the single-process run plans the reads in ([`plan_each`]): the first read units start
/// after about an eighth of the manifest lists is read.
pub(crate) const READ_STEPS: usize = 8;

/// Fewest versions of a step: fewer are planned in one step. Small, so that small tables
/// (the tests') are planned in steps too and every single-process run takes this path.
const MIN_VERSIONS_PER_STEP: usize = 2;

/// What the decision needs from the plan.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct State {
    /// The plan's id (units and partial results carry it).
    pub plan: u64,
    /// Units planned: ids `0..units`.
    pub units: u32,
    /// The cut-off (epoch ms).
    pub cutoff_ms: i64,
    /// A dry run.
    pub dry_run: bool,
    /// When planning started (epoch ms).
    pub started_ms: i64,
    /// Roots or directories not listed, with the reason.
    pub skipped: Vec<String>,
    /// External data roots listed.
    pub external_roots: Vec<String>,
    /// Roots besides the table root under which deletions are allowed.
    pub delete_roots: Vec<String>,
    /// The versions.
    pub tracker: Tracker,
    /// The sharded decision so far (none before its first gate).
    #[serde(default)]
    pub sharded: Option<Sharded>,
    /// What planning itself found: the partition walk's empty directories and errors, and the
    /// metadata the versions name.
    #[serde(skip)]
    pub found: Partial,
}

impl State {
    /// Serializes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let json = serde_json::to_vec(self)
            .map_err(|e| Error::Internal(format!("cannot encode the plan state: {e}")))?;
        let mut w = Writer::new(Kind::State);
        w.bytes(&json);
        w.bytes(&self.found.to_bytes());
        Ok(w.finish())
    }

    /// Deserializes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader::new(bytes, Kind::State)?;
        let mut s: State = serde_json::from_slice(r.bytes()?).map_err(|e| {
            Error::InvalidArgument(format!("not an orphan-removal plan state ({e})"))
        })?;
        s.found = Partial::from_bytes(r.bytes()?)?;
        r.end()?;
        s.tracker.rebuild();
        Ok(s)
    }
}

/// A random, non-zero plan id.
pub(crate) fn new_plan_id() -> u64 {
    let (hi, lo) = uuid::Uuid::new_v4().as_u64_pair();
    (hi ^ lo).max(1)
}

/// The table's external data roots (`data-file.external-paths`); unusable ones are skipped with
/// a reason.
fn external_roots(table: &Table, skipped: &mut Vec<String>) -> Vec<Location> {
    let mut out = Vec::new();
    for raw in table.options().data_file_external_paths() {
        match Location::parse(&raw) {
            Ok(l) if l.is_store_root() => skipped.push(format!(
                "{raw}: an external root cannot be a whole filesystem or bucket"
            )),
            Ok(l) if *table.root() == l || table.root().is_under(&l) => skipped.push(format!(
                "{raw}: an external root cannot contain the table root"
            )),
            Ok(l) => {
                if !out.contains(&l) {
                    out.push(l);
                }
            }
            Err(e) => skipped.push(format!("{raw}: {e}")),
        }
    }
    out
}

/// Plans a run on the table whose main branch is `main`: the state and every unit (the list
/// units first).
pub(crate) async fn plan(
    main: &Table,
    cfg: &OrphanConfig,
    ctl: &RunControl,
) -> Result<(State, Vec<Unit>)> {
    let mut units = Vec::new();
    let state = plan_each(main, cfg, ctl, 1, &mut |u| units.push(u)).await?;
    Ok((state, units))
}

/// Plans as [`plan`] does, handing each unit to `emit` as soon as it is planned: the list
/// units first (ids from 0), then the read units, in up to `steps` steps over the versions
/// (their manifest lists read, then their manifests not planned yet cut into read units), so
/// that a caller can execute the first read units while the planner reads the other versions'
/// lists. The units together are those of one step over every version (grouped in more, less
/// full read units when there are several steps). Returns the state, its `units` the number
/// of units emitted.
pub(crate) async fn plan_each<F: FnMut(Unit)>(
    main: &Table,
    cfg: &OrphanConfig,
    ctl: &RunControl,
    steps: usize,
    emit: &mut F,
) -> Result<State> {
    let started_ms = now_millis();
    let cutoff = resolve_cutoff(cfg, started_ms)?;
    let storage = main.storage().clone();
    let root = storage.root().clone();
    let mut state = State {
        plan: new_plan_id(),
        cutoff_ms: cutoff,
        dry_run: cfg.dry_run,
        started_ms,
        ..Default::default()
    };
    let data_roots = data_roots(main, cfg, &mut state);
    ctl.cancel.check()?;

    // Listed once for the metadata directories and the versions (the decision lists them
    // again, with the versions). A `branch/` that cannot be listed stops the run: without the
    // branches' references, the files only they read would look like orphans.
    let branches = list_branches(&storage).await?;
    let branch_roots: Vec<Location> = branches.iter().map(|b| branch_root(&root, b)).collect();
    let metadata = metadata_dirs(&root, &branch_roots);

    let list_conc = cfg.list_concurrency.unwrap_or(ctl.io_concurrency).max(1);
    let frontier = walk_partitions(main, data_roots, list_conc, ctl, &mut state).await?;

    if main.snapshots().list_ids(&storage).await?.is_empty() {
        refuse_content_without_snapshots(main, &frontier, list_conc, &mut state).await?;
        state.found.canonicalize();
        return Ok(state);
    }

    // The list units, emitted first.
    let reach = Reach::of(main);
    let works = list_works(cutoff, metadata, &frontier);
    state.units = emit_numbered(state.plan, 0, &reach, works, emit)?;
    emit_read_steps(main, ctl, branches, steps, &reach, &mut state, emit).await?;
    state.found.canonicalize();
    tracing::info!(
        units = state.units,
        versions = state.tracker.versions.len(),
        cutoff,
        "orphan removal planned"
    );
    Ok(state)
}

/// The data roots whose partitions are listed: the data root (unless it leads outside the
/// table root) and, when declared owned, the external data roots that deletions are allowed
/// under. Records in `state` the roots deletions may touch and why a root is skipped.
fn data_roots(main: &Table, cfg: &OrphanConfig, state: &mut State) -> Vec<Location> {
    let storage = main.storage();
    let root = storage.root();
    let data_root = main.paths().data_root().clone();
    let mut ext_roots = external_roots(main, &mut state.skipped);
    if !cfg.external_roots_owned {
        // Shared directories: another table's live files would look like orphans here.
        for r in ext_roots.drain(..) {
            tracing::info!(root = %r, "external data root not cleaned (not declared owned)");
            state.skipped.push(format!(
                "{r}: external data root not cleaned: Paimon writes external files without the \
                 table name, so tables configured with the same root share its directories; \
                 declare the roots owned by this table alone (external_roots_owned) to clean them"
            ));
        }
    }
    let delete_storage = storage.with_delete_roots(&ext_roots);
    state.delete_roots = ext_roots.iter().map(|r| r.as_str().to_string()).collect();
    let mut data_roots = Vec::new();
    let data_prefix = match data_root.relative_to(root) {
        Some(prefix) => {
            data_roots.push(data_root.clone());
            prefix.to_string()
        }
        None => {
            state.skipped.push(format!(
                "{data_root}: data-file.path-directory leads outside the table root"
            ));
            String::new()
        }
    };
    for r in &ext_roots {
        if delete_storage.check_deletable(&r.join("x")).is_err() {
            state
                .skipped
                .push(format!("{r}: deletions are not allowed there"));
            continue;
        }
        state.external_roots.push(r.to_string());
        data_roots.push(if data_prefix.is_empty() {
            r.clone()
        } else {
            r.join(&data_prefix)
        });
    }
    data_roots
}

/// The metadata directories of one list unit: `manifest/`, `index/`, `statistics/`, and the
/// snapshot and changelog directories of every branch.
fn metadata_dirs(root: &Location, branch_roots: &[Location]) -> Vec<ListDir> {
    let mut metadata = vec![
        ListDir {
            dir: root.join("manifest").as_str().to_string(),
            kind: ListKind::Manifest,
        },
        ListDir {
            dir: root.join("index").as_str().to_string(),
            kind: ListKind::Index,
        },
        ListDir {
            dir: root.join("statistics").as_str().to_string(),
            kind: ListKind::Statistics,
        },
    ];
    for b in branch_roots {
        for kind in [ListKind::Snapshots, ListKind::Changelogs] {
            metadata.push(ListDir {
                dir: b.as_str().to_string(),
                kind,
            });
        }
    }
    metadata
}

/// The partition walk: every partition level but the last (which the list units list), from
/// `data_roots`; returns the last level's directories, each with its data root. Empty
/// partition directories and listing errors go to `state.found`.
async fn walk_partitions(
    main: &Table,
    data_roots: Vec<Location>,
    list_conc: usize,
    ctl: &RunControl,
    state: &mut State,
) -> Result<Vec<(Location, Location)>> {
    let storage = main.storage();
    let mut roots = data_roots;
    roots.sort();
    roots.dedup();
    let mut frontier: Vec<(Location, Location)> =
        roots.into_iter().map(|r| (r.clone(), r)).collect();
    for _ in 0..main.schema().partition_keys.len() {
        let listed = list_tolerant(storage, frontier, list_conc, &mut state.found.errors).await;
        let mut next = Vec::new();
        for ((dir, root), listing) in listed {
            if dir != root && listing.files.is_empty() && listing.dirs.is_empty() {
                state
                    .found
                    .empty_dirs
                    .push((dir.as_str().to_string(), root.as_str().to_string()));
            }
            next.extend(
                listing
                    .dirs
                    .into_iter()
                    .filter(|d| d.name().contains('='))
                    .map(|d| (d, root.clone())),
            );
        }
        frontier = next;
        ctl.cancel.check()?;
    }
    Ok(frontier)
}

/// No snapshot on main: there is nothing to decide orphans against. A table that holds
/// manifests or data all the same (its `snapshot/` unreadable, or emptied on an object
/// store, where an unreadable prefix lists as empty) is refused; one that was created but
/// never committed (only its schema) is a no-op: no unit, nothing listed or deleted.
async fn refuse_content_without_snapshots(
    main: &Table,
    frontier: &[(Location, Location)],
    list_conc: usize,
    state: &mut State,
) -> Result<()> {
    let storage = main.storage();
    if let Some(what) = content_without_snapshots(
        storage,
        storage.root(),
        frontier,
        &state.found.errors,
        list_conc,
    )
    .await?
    {
        return Err(Error::Conflict(format!(
            "{} lists no snapshot while {what} exists: orphan removal cannot tell what is \
             referenced (is the snapshot directory readable?); nothing deleted",
            main.snapshots().dir()
        )));
    }
    tracing::info!("no snapshot, manifest or data file: orphan removal has nothing to do");
    state.skipped.push(format!(
        "{}: no snapshot on main and no manifest, index, statistics or data file; nothing \
         listed, nothing deleted",
        main.snapshots().dir()
    ));
    Ok(())
}

/// The list units' work: the metadata directories, then the partitions of the walk's
/// `frontier` in chunks of [`PARTITIONS_PER_UNIT`].
fn list_works(cutoff: i64, metadata: Vec<ListDir>, frontier: &[(Location, Location)]) -> Vec<Work> {
    let mut works = vec![Work::List {
        cutoff_ms: cutoff,
        dirs: metadata,
    }];
    for chunk in frontier.chunks(PARTITIONS_PER_UNIT) {
        works.push(Work::List {
            cutoff_ms: cutoff,
            dirs: chunk
                .iter()
                .map(|(d, r)| ListDir {
                    dir: d.as_str().to_string(),
                    kind: ListKind::Partition {
                        root: r.as_str().to_string(),
                    },
                })
                .collect(),
        });
    }
    works
}

/// The versions, then step by step their manifest lists and the manifests to read, emitted as
/// read units numbered from `state.units`, which ends as the number of units emitted.
async fn emit_read_steps<F: FnMut(Unit)>(
    main: &Table,
    ctl: &RunControl,
    branches: Vec<String>,
    steps: usize,
    reach: &Reach,
    state: &mut State,
    emit: &mut F,
) -> Result<()> {
    let io = ctl.io_concurrency.max(1);
    let new = state.tracker.discover_in(main, branches, io).await?;
    if !new.is_empty() {
        state.tracker.rounds = 1;
    }
    let versions_per_step = new.len().div_ceil(steps.max(1)).max(MIN_VERSIONS_PER_STEP);
    if new.len() <= versions_per_step {
        let from = state
            .tracker
            .read_lists(main, new, io, &mut state.found)
            .await?;
        let items = state.tracker.plan_reads(from);
        state.units = emit_reads(state.plan, state.units, reach, &state.tracker, items, emit)?;
        return Ok(());
    }
    // The other branches' lists first (a branch usually has few versions of its own): a
    // manifest a step of the main branch plans is planned for them in the same item, so each
    // is read once, as in one step; the rest of theirs is planned last.
    let (first, others): (Vec<_>, Vec<_>) = new.into_iter().partition(|v| v.branch() == 0);
    let others_from = state
        .tracker
        .read_lists(main, others, io, &mut state.found)
        .await?;
    let others = others_from..state.tracker.versions.len();
    let mut first = first.into_iter().peekable();
    while first.peek().is_some() {
        let step: Vec<_> = first.by_ref().take(versions_per_step).collect();
        let from = state
            .tracker
            .read_lists(main, step, io, &mut state.found)
            .await?;
        let end = state.tracker.versions.len();
        let items = state.tracker.plan_reads_in(from..end, Some(others.clone()));
        state.units = emit_reads(state.plan, state.units, reach, &state.tracker, items, emit)?;
        ctl.cancel.check()?;
    }
    let items = state.tracker.plan_reads_in(others, None);
    state.units = emit_reads(state.plan, state.units, reach, &state.tracker, items, emit)?;
    Ok(())
}

/// What a table without snapshots holds that only a snapshot could reference, if anything:
/// a file in `manifest/`, `index/` or `statistics/`, a partition directory of the walk's
/// `frontier`, a `bucket-*` directory under a data root, or a directory the walk could not
/// list (`walk_errors`: it may hold any of these). Listing errors are errors.
async fn content_without_snapshots(
    storage: &crate::storage::Storage,
    root: &Location,
    frontier: &[(Location, Location)],
    walk_errors: &[String],
    concurrency: usize,
) -> Result<Option<String>> {
    for dir in ["manifest", "index", "statistics"] {
        let listing = storage.list_dir(&root.join(dir)).await?;
        if let Some(f) = listing.files.first() {
            return Ok(Some(format!("the file {}", f.location)));
        }
    }
    if let Some(e) = walk_errors.first() {
        return Ok(Some(format!(
            "a data directory that cannot be listed ({e})"
        )));
    }
    if let Some((dir, _)) = frontier.iter().find(|(d, r)| d != r) {
        return Ok(Some(format!("the partition directory {dir}")));
    }
    let roots: Vec<Location> = frontier.iter().map(|(d, _)| d.clone()).collect();
    for (_, listing) in storage.list_dirs(&roots, concurrency).await? {
        if let Some(b) = listing
            .dirs
            .iter()
            .find(|d| d.name().starts_with("bucket-"))
        {
            return Ok(Some(format!("the bucket directory {b}")));
        }
    }
    Ok(None)
}

/// Numbers `works` from `first` on ([`numbered`]) and hands each unit to `emit`; returns the
/// next id.
fn emit_numbered<F: FnMut(Unit)>(
    plan: u64,
    first: u32,
    reach: &Reach,
    works: Vec<Work>,
    emit: &mut F,
) -> Result<u32> {
    let units = numbered(plan, first, reach, works)?;
    let next = u32::try_from(units.len())
        .ok()
        .and_then(|n| n.checked_add(first))
        .ok_or_else(|| Error::Unsupported("more than 2^32 units in one plan".into()))?;
    units.into_iter().for_each(emit);
    Ok(next)
}

/// [`emit_numbered`] of the read units of `items` ([`read_works`]).
fn emit_reads<F: FnMut(Unit)>(
    plan: u64,
    first: u32,
    reach: &Reach,
    tracker: &Tracker,
    items: Vec<ReadItem>,
    emit: &mut F,
) -> Result<u32> {
    emit_numbered(plan, first, reach, read_works(tracker, items), emit)
}

/// Read works for `items`, [`MANIFESTS_PER_UNIT`] at a time, each resolving for every branch.
pub(crate) fn read_works(tracker: &Tracker, items: Vec<ReadItem>) -> Vec<Work> {
    items
        .chunks(MANIFESTS_PER_UNIT)
        .map(|c| Work::Read {
            branches: tracker.branches.clone(),
            items: c.to_vec(),
        })
        .collect()
}

/// Units of plan `plan` with ids from `first` on.
pub(crate) fn numbered(
    plan: u64,
    first: u32,
    reach: &Reach,
    works: Vec<Work>,
) -> Result<Vec<Unit>> {
    works
        .into_iter()
        .enumerate()
        .map(|(i, work)| {
            let id = u32::try_from(i)
                .ok()
                .and_then(|i| i.checked_add(first))
                .ok_or_else(|| Error::Unsupported("more than 2^32 units in one plan".into()))?;
            Ok(Unit {
                plan,
                id,
                reach: reach.clone(),
                work,
            })
        })
        .collect()
}
