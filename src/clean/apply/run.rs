//! Applying a plan: refuse it whole, or delete what it lists and no present version reads.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use futures::stream::{self, StreamExt};
use serde::Serialize;

use crate::clean::control::RunControl;
use crate::clean::report::{DeletionReport, FileClass};
use crate::clean::shared::clock::now_millis;
use crate::clean::shared::deleter::{Deleter, Planned};
use crate::error::{Error, Result};
use crate::storage::{Location, Storage};
use crate::table::{branch_root, Table, VersionedDir};

use super::plan::{
    class_of, consumers_of, fingerprint, identity, is_version_file, location_of, Plan, PLAN_FORMAT,
    PLAN_VERSION,
};
use super::refs::{referenced_now, Excluded, Referenced};

/// The default bound on a plan's age: 24 hours.
pub const DEFAULT_MAX_PLAN_AGE_MS: i64 = 24 * 3600 * 1000;

/// The largest bound a caller may set on a plan's age: 30 days.
pub const MAX_PLAN_AGE_BOUND_MS: i64 = 30 * 24 * 3600 * 1000;

/// How far in the future a plan's creation time may lie (clocks of two machines).
const CLOCK_SKEW_MS: i64 = 5 * 60 * 1000;

/// How to apply a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyConfig {
    /// Refuse a plan older than this (milliseconds, 1 to [`MAX_PLAN_AGE_BOUND_MS`]).
    pub max_plan_age_ms: i64,
    /// Check and report, delete nothing.
    pub dry_run: bool,
}

impl Default for ApplyConfig {
    fn default() -> Self {
        ApplyConfig {
            max_plan_age_ms: DEFAULT_MAX_PLAN_AGE_MS,
            dry_run: false,
        }
    }
}

/// A planned file that was kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedFile {
    /// Its path as the plan lists it.
    pub path: String,
    /// Its kind.
    pub kind: String,
    /// Why it was kept.
    pub reason: String,
}

/// The outcome of applying a plan.
#[derive(Debug, Default, Serialize)]
pub struct ApplyReport {
    /// The table.
    pub table: String,
    /// The command that made the plan.
    pub command: String,
    /// When the plan was made (epoch milliseconds).
    pub plan_created_ms: i64,
    /// Its age when applied (milliseconds).
    pub plan_age_ms: i64,
    /// Files the plan lists.
    pub planned: u64,
    /// Planned files already gone (deleted by an earlier, interrupted apply or by hand).
    pub already_gone: u64,
    /// Planned files kept, with the reason.
    pub skipped: Vec<SkippedFile>,
    /// Versions read to find what is referenced now.
    pub versions_read: u64,
    /// What was deleted (or, in a dry run, would be).
    pub deletion: DeletionReport,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
}

/// A planned file, resolved.
struct Resolved {
    path: String,
    class: FileClass,
    location: Location,
    bytes: Option<u64>,
    fingerprint: Option<String>,
}

/// The refusal of a whole plan: nothing is deleted.
fn refuse(why: String) -> Error {
    Error::Conflict(format!("plan refused, nothing deleted: {why}"))
}

/// Applies `plan` to the table at `storage` (opened at the plan's table root, with the
/// caller's options `overrides`). See the [module documentation](super) for what is deleted
/// and what keeps a file. A refused plan is [`Error::Conflict`] (age, identity, retention) or
/// [`Error::PathRefused`] (a path outside the table or where no file of its kind lives);
/// nothing is deleted then.
pub async fn apply_plan(
    storage: Arc<Storage>,
    overrides: &std::collections::HashMap<String, String>,
    plan: &Plan,
    cfg: &ApplyConfig,
    ctl: &RunControl,
) -> Result<ApplyReport> {
    let started = Instant::now();
    let age = check_header(plan, cfg)?;
    check_identity(&storage, plan).await?;
    let table = Table::open_branch(storage.clone(), overrides, &plan.branch).await?;
    let root = storage.root().clone();
    let broot = branch_root(&root, &plan.branch);

    let files = resolve_files(&root, plan)?;
    // The guard, kind and physical checks of the operations, for the whole plan first.
    let mut deleter = Deleter::for_table(&table, ctl, cfg.dry_run);
    deleter
        .check_plan(files.iter().map(|f| Planned {
            location: f.location.clone(),
            class: f.class,
            bytes: f.bytes,
        }))
        .await?;

    let excluded = versions_deleted(&broot, &plan.branch, &files)?;
    check_retention(&storage, plan, &broot, &excluded, &files).await?;
    ctl.cancel.check()?;

    let mut report = ApplyReport {
        table: plan.table.clone(),
        command: plan.command.clone(),
        plan_created_ms: plan.created_ms,
        plan_age_ms: age,
        planned: files.len() as u64,
        ..Default::default()
    };
    let referenced = referenced_now(&table, &excluded, ctl).await?;
    report.versions_read = referenced.versions;
    ctl.cancel.check()?;

    let phases = sort_into_phases(&storage, &files, &referenced, &broot, ctl, &mut report).await?;
    let Some(deleted) = delete_in_phases(&mut deleter, phases).await? else {
        // A version file left behind must stay visible to a rerun: stop here.
        report.deletion = deleter.report;
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        return Ok(report);
    };
    if !cfg.dry_run {
        rewrite_hints(&storage, &broot, deleted).await?;
    }
    report.deletion = deleter.report;
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    tracing::info!(
        deleted = report.deletion.total_files(),
        skipped = report.skipped.len(),
        dry_run = cfg.dry_run,
        "plan applied"
    );
    Ok(report)
}

/// Checks the plan's format, the age bound and the plan's age; returns the age in ms.
fn check_header(plan: &Plan, cfg: &ApplyConfig) -> Result<i64> {
    if plan.format != PLAN_FORMAT || plan.version != PLAN_VERSION {
        return Err(Error::InvalidArgument(format!(
            "not a plan this version reads: format '{}' version {} (expected '{PLAN_FORMAT}' \
             version {PLAN_VERSION})",
            plan.format, plan.version
        )));
    }
    if !(1..=MAX_PLAN_AGE_BOUND_MS).contains(&cfg.max_plan_age_ms) {
        return Err(Error::InvalidArgument(format!(
            "the plan age bound must be 1 ms to 30 days, not {} ms",
            cfg.max_plan_age_ms
        )));
    }
    let now = now_millis();
    let age = now.saturating_sub(plan.created_ms);
    if age > cfg.max_plan_age_ms {
        return Err(refuse(format!(
            "the plan is {} s old, older than the bound of {} s (make a new plan)",
            age / 1000,
            cfg.max_plan_age_ms / 1000
        )));
    }
    if plan.created_ms > now.saturating_add(CLOCK_SKEW_MS) {
        return Err(refuse(format!(
            "the plan is dated {} ms in the future",
            plan.created_ms - now
        )));
    }
    Ok(age)
}

/// Refuses a plan made for another table, or for a table since replaced or dropped.
async fn check_identity(storage: &Storage, plan: &Plan) -> Result<()> {
    if storage.root().as_str() != plan.table {
        return Err(Error::InvalidArgument(format!(
            "the plan is for {}, not {}",
            plan.table,
            storage.root()
        )));
    }
    match identity(storage).await? {
        Some(now_id) if now_id == plan.identity => {}
        Some(now_id) => {
            return Err(refuse(format!(
                "the table was replaced: {} is {} now, {} in the plan",
                now_id.schema_file, now_id.fingerprint, plan.identity.fingerprint
            )))
        }
        None => {
            return Err(refuse(format!(
                "the table was dropped or replaced: {} is gone",
                plan.identity.schema_file
            )))
        }
    }
    Ok(())
}

/// Every planned path resolved below the root, with a known kind (each location once).
fn resolve_files(root: &Location, plan: &Plan) -> Result<Vec<Resolved>> {
    // Every path resolves below the root, with a known kind.
    let mut files: Vec<Resolved> = Vec::with_capacity(plan.files.len());
    let mut distinct = BTreeSet::new();
    for f in &plan.files {
        let class = class_of(&f.kind).ok_or_else(|| Error::PathRefused {
            path: f.path.clone(),
            reason: format!("unknown kind '{}'", f.kind),
        })?;
        let location = location_of(root, &f.path)?;
        if !distinct.insert(location.as_str().to_string()) {
            continue;
        }
        files.push(Resolved {
            path: f.path.clone(),
            class,
            location,
            bytes: f.bytes,
            fingerprint: f.fingerprint.clone(),
        });
    }
    Ok(files)
}

/// The planned files still there at the size the plan recorded and referenced by no present
/// version, by deletion phase and in version order; the others are counted or reported as
/// kept in `report`.
async fn sort_into_phases(
    storage: &Storage,
    files: &[Resolved],
    referenced: &Referenced,
    broot: &Location,
    ctl: &RunControl,
    report: &mut ApplyReport,
) -> Result<BTreeMap<u8, Vec<(i64, Planned)>>> {
    // What is still there, at the size the plan recorded.
    let heads: Vec<Result<Option<u64>>> = stream::iter(files.iter())
        .map(|f| async move { Ok(storage.head(&f.location).await?.map(|s| s.size)) })
        .buffered(ctl.io_concurrency.max(1))
        .collect()
        .await;
    let mut phases: BTreeMap<u8, Vec<(i64, Planned)>> = BTreeMap::new();
    for (f, head) in files.iter().zip(heads) {
        let Some(size) = head? else {
            report.already_gone += 1;
            continue;
        };
        let keep = |reason: &str| SkippedFile {
            path: f.path.clone(),
            kind: super::plan::class_name(f.class),
            reason: reason.to_string(),
        };
        if !is_version_file(f.class) && f.bytes.is_some_and(|b| b != size) {
            report.skipped.push(keep(
                "its size differs from the plan's: not the reviewed file",
            ));
            continue;
        }
        if referenced.contains(&f.location) {
            report
                .skipped
                .push(keep("a version present now references it"));
            continue;
        }
        let order = version_id(broot, f).unwrap_or(0);
        phases.entry(phase_of(f.class)).or_default().push((
            order,
            Planned {
                location: f.location.clone(),
                class: f.class,
                bytes: Some(size),
            },
        ));
    }
    for s in &report.skipped {
        tracing::info!(path = %s.path, reason = %s.reason, "planned file kept");
    }
    Ok(phases)
}

/// Which kinds of version file went (snapshots, changelogs).
#[derive(Debug, Clone, Copy, Default)]
struct DeletedVersions {
    snapshots: bool,
    changelogs: bool,
}

/// Deletes the phases in order; None when a deletion failed (the run stops there).
async fn delete_in_phases(
    deleter: &mut Deleter<'_>,
    phases: BTreeMap<u8, Vec<(i64, Planned)>>,
) -> Result<Option<DeletedVersions>> {
    let mut deleted = DeletedVersions::default();
    for (phase, mut planned) in phases {
        planned.sort_by_key(|(order, _)| *order);
        deleted.snapshots |= planned
            .iter()
            .any(|(_, p)| p.class == FileClass::SnapshotMeta);
        deleted.changelogs |= planned
            .iter()
            .any(|(_, p)| p.class == FileClass::ChangelogMeta);
        let name = PHASE_NAMES.get(phase as usize).copied().unwrap_or("files");
        deleter
            .delete(name, planned.into_iter().map(|(_, p)| p).collect())
            .await?;
        if !deleter.report.failed.is_empty() {
            return Ok(None);
        }
    }
    Ok(Some(deleted))
}

/// Moves `EARLIEST` to the first version left of each kind that lost versions, or removes the
/// hints when none is left.
async fn rewrite_hints(
    storage: &Storage,
    broot: &Location,
    deleted: DeletedVersions,
) -> Result<()> {
    for (dir, deleted) in [
        (VersionedDir::snapshots(broot), deleted.snapshots),
        (VersionedDir::changelogs(broot), deleted.changelogs),
    ] {
        if !deleted {
            continue;
        }
        match dir.list_ids(storage).await?.first() {
            Some(first) => dir.write_hint(storage, "EARLIEST", *first).await?,
            None => {
                let hints = ["EARLIEST", "LATEST"]
                    .map(|h| dir.hint_location(h))
                    .to_vec();
                for (loc, r) in storage.delete_files(hints, 2).await {
                    if let Err(e) = r {
                        tracing::warn!(hint = %loc, error = %e, "hint not removed");
                    }
                }
            }
        }
    }
    Ok(())
}

/// The deletion phases, in crash-safe order.
const PHASE_NAMES: [&str; 5] = [
    "tag and consumer files",
    "data files",
    "manifests, index files, statistics",
    "manifest lists, index manifests",
    "snapshot and changelog files",
];

/// The phase of a file class (an index into [`PHASE_NAMES`]).
fn phase_of(class: FileClass) -> u8 {
    match class {
        FileClass::TagMeta | FileClass::ConsumerMeta => 0,
        FileClass::Data | FileClass::ChangelogData | FileClass::Other => 1,
        FileClass::Manifest | FileClass::Index | FileClass::Statistics => 2,
        FileClass::ManifestList | FileClass::IndexManifest => 3,
        FileClass::SnapshotMeta | FileClass::ChangelogMeta => 4,
    }
}

/// The id of a planned snapshot or changelog file of the branch at `broot` (`None` for any
/// other file).
fn version_id(broot: &Location, f: &Resolved) -> Option<i64> {
    let dir = match f.class {
        FileClass::SnapshotMeta => VersionedDir::snapshots(broot),
        FileClass::ChangelogMeta => VersionedDir::changelogs(broot),
        _ => return None,
    };
    if f.location.parent().as_ref() != Some(dir.dir()) {
        return None;
    }
    dir.parse_id(f.location.name())
}

/// The versions of the plan's branch that the plan deletes. A version file the plan lists
/// that is not a version of that branch (say a snapshot file of another branch) is refused:
/// the kind rules allow none there, and it must not exclude a version from protection.
fn versions_deleted(broot: &Location, branch: &str, files: &[Resolved]) -> Result<Excluded> {
    let mut out = Excluded {
        branch: branch.to_string(),
        ..Default::default()
    };
    let tag_dir = broot.join("tag");
    for f in files {
        match f.class {
            FileClass::SnapshotMeta | FileClass::ChangelogMeta => {
                let id = version_id(broot, f).ok_or_else(|| Error::PathRefused {
                    path: f.path.clone(),
                    reason: format!("not a version file of branch {branch}"),
                })?;
                if f.class == FileClass::SnapshotMeta {
                    out.snapshots.insert(id);
                } else {
                    out.changelogs.insert(id);
                }
            }
            FileClass::TagMeta if f.location.parent().as_ref() == Some(&tag_dir) => {
                if let Some(tag) = f.location.name().strip_prefix("tag-") {
                    out.tags.insert(tag.to_string());
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Refuses the plan when the retention it relied on no longer holds: a version file it
/// deletes changed, the branch was rolled back, a planned snapshot is the latest now or would
/// leave an older one behind, or a consumer the plan keeps reads a planned snapshot.
async fn check_retention(
    storage: &Storage,
    plan: &Plan,
    broot: &Location,
    excluded: &Excluded,
    files: &[Resolved],
) -> Result<()> {
    // Version files: unchanged since the plan (or gone: an interrupted apply deleted them).
    for f in files.iter().filter(|f| is_version_file(f.class)) {
        let bytes = match storage.get(&f.location).await {
            Ok(b) => b,
            Err(e) if e.is_not_found() => continue,
            Err(e) => return Err(e),
        };
        let now = fingerprint(&bytes);
        if f.fingerprint.as_deref() != Some(now.as_str()) {
            return Err(refuse(format!(
                "{} changed since the plan (or the plan has no fingerprint of it)",
                f.path
            )));
        }
    }
    if excluded.snapshots.is_empty() {
        return Ok(());
    }
    let then = plan
        .branches
        .iter()
        .find(|b| b.name == plan.branch)
        .cloned()
        .unwrap_or_default();
    let ids = VersionedDir::snapshots(broot).list_ids(storage).await?;
    let (Some(latest), Some(planned_max)) = (ids.last().copied(), excluded.snapshots.last()) else {
        return Ok(());
    };
    if then.latest_snapshot.is_some_and(|l| latest < l) {
        return Err(refuse(format!(
            "branch {} was rolled back: its latest snapshot is {latest}, {} at planning",
            plan.branch,
            then.latest_snapshot.unwrap_or_default()
        )));
    }
    if *planned_max >= latest {
        return Err(refuse(format!(
            "snapshot {planned_max} is the latest snapshot of branch {} now",
            plan.branch
        )));
    }
    if let Some(hole) = ids
        .iter()
        .find(|id| *id < planned_max && !excluded.snapshots.contains(id))
    {
        return Err(refuse(format!(
            "snapshot {hole} is kept but older than the planned snapshot {planned_max}"
        )));
    }
    let consumer_files: BTreeSet<String> = files
        .iter()
        .filter(|f| f.class == FileClass::ConsumerMeta)
        .filter_map(|f| {
            f.location
                .name()
                .strip_prefix("consumer-")
                .map(String::from)
        })
        .collect();
    let consumers = consumers_of(storage, broot).await?;
    for (id, next) in &consumers {
        if !consumer_files.contains(id) && next <= planned_max {
            return Err(refuse(format!(
                "consumer {id} reads from snapshot {next}, which the plan deletes (up to \
                 {planned_max})"
            )));
        }
    }
    Ok(())
}
