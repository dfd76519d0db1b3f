//! Long-lived changelog expiry (spec §5.4): changelogs outlive their snapshots when the
//! changelog lifecycle is decoupled; they expire here by `changelog.*` retention, and with
//! `delete_all` every changelog older than the earliest snapshot goes.

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use futures::StreamExt;
use serde::Serialize;

use crate::clean::control::RunControl;
use crate::clean::expiry::plan::{Candidate, Candidates, DeletionPlan, MetadataScope};
use crate::clean::expiry::protected::protectors::{
    changelog_label, other_protectors_except, snapshot_line,
};
use crate::clean::expiry::protected::{ProtectMode, ReferenceReader};
use crate::clean::expiry::range::{changelog_end, ChangelogIds};
use crate::clean::expiry::removed::{added_by_lists, deleted_by_deltas};
use crate::clean::expiry::retention::{AssumeRemoved, Retention, RetentionOverrides};
use crate::clean::report::{DeletionReport, FileClass};
use crate::clean::shared::clock::now_millis;
use crate::clean::shared::deleter::{Deleter, Planned};
use crate::error::{Error, Result};
use crate::memory::MemoryBudget;
use crate::spec::snapshot::Snapshot;
use crate::storage::Location;
use crate::table::Table;

/// Caller settings for changelog expiry.
#[derive(Debug, Clone, Default)]
pub struct ChangelogExpireConfig {
    /// Retention overrides (unset: `changelog.*`, then the snapshot values, then defaults).
    pub retention: RetentionOverrides,
    /// Remove every changelog older than the earliest snapshot, whatever the retention
    /// (for tables whose lifecycle was decoupled and no longer is; pitfall P9).
    pub delete_all: bool,
    /// Compute and report, change nothing.
    pub dry_run: bool,
    /// Tags and consumers to treat as removed (see [`AssumeRemoved`]).
    pub assume_removed: AssumeRemoved,
}

/// What a changelog expiry did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ChangelogExpireReport {
    /// Number of changelogs expired.
    pub changelogs_expired: u64,
    /// First expired id.
    pub first_expired: Option<i64>,
    /// Last expired id.
    pub last_expired: Option<i64>,
    /// Files deleted per kind, failures and paths.
    pub deletion: DeletionReport,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
}

/// The version with id `end` that a changelog expiry keeps: the changelog `end`, else the
/// snapshot `end`, else none (a gap).
async fn first_kept_version(
    table: &Table,
    changelogs: &BTreeMap<i64, Snapshot>,
    end: i64,
) -> Result<Option<Snapshot>> {
    if let Some(c) = changelogs.get(&end) {
        return Ok(Some(c.clone()));
    }
    table.snapshots().try_read(table.storage(), end).await
}

/// Expire long-lived changelogs of `table`'s branch: picks the expired range
/// ([`expired_range`]), plans what it frees ([`plan_deletions`]), then deletes in crash-safe
/// order and moves the hint ([`delete_and_move_hint`]).
pub async fn expire_changelogs(
    table: &Table,
    cfg: &ChangelogExpireConfig,
    ctl: &RunControl,
) -> Result<ChangelogExpireReport> {
    let started = Instant::now();
    let mut report = ChangelogExpireReport::default();
    let Some(range) = expired_range(table, cfg).await? else {
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        return Ok(report);
    };
    ctl.cancel.check()?;
    // The deleter first: planning charges the same budget as the deletions (one bound for
    // the whole run).
    let mut deleter = Deleter::for_table(table, ctl, cfg.dry_run);
    let plan = plan_deletions(table, cfg, ctl, deleter.memory(), &range).await?;
    delete_and_move_hint(table, cfg, &mut deleter, plan, &range).await?;
    report.changelogs_expired = range.expired.len() as u64;
    report.first_expired = range.expired.first().map(|c| c.id);
    report.last_expired = range.expired.last().map(|c| c.id);
    report.deletion = deleter.report;
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// The changelogs a run expires: every changelog of the branch by id, the expired ones (in
/// id order) and `end`, the first id kept.
struct ExpiredRange {
    all: BTreeMap<i64, Snapshot>,
    expired: Vec<Snapshot>,
    end: i64,
}

/// Resolves the retention and picks the expired range; `None` when nothing expires (no
/// snapshot or changelog, the retention keeps them all).
async fn expired_range(table: &Table, cfg: &ChangelogExpireConfig) -> Result<Option<ExpiredRange>> {
    let retention = Retention::resolve_changelog(table.options(), &cfg.retention, now_millis())?;
    let storage = table.storage();
    let snapshot_dir = table.snapshots();
    let changelog_dir = table.changelogs();
    let (
        Some(latest_snapshot),
        Some(earliest_snapshot),
        Some(latest_changelog),
        Some(earliest_changelog),
    ) = (
        snapshot_dir.latest_id(storage).await?,
        snapshot_dir.earliest_id(storage).await?,
        changelog_dir.latest_id(storage).await?,
        changelog_dir.earliest_id(storage).await?,
    )
    else {
        return Ok(None);
    };
    let all: BTreeMap<i64, Snapshot> = table
        .all_changelogs()
        .await?
        .into_iter()
        .map(|c| (c.id, c))
        .collect();
    let end = if cfg.delete_all {
        if latest_changelog >= earliest_snapshot {
            return Err(Error::Conflict(format!(
                "cannot delete all changelogs: changelog {latest_changelog} is not older than the earliest snapshot {earliest_snapshot}"
            )));
        }
        latest_changelog.checked_add(1).ok_or_else(|| {
            Error::Conflict(format!(
                "cannot delete all changelogs: changelog id {latest_changelog} has no successor (i64 overflow)"
            ))
        })?
    } else {
        let ids = ChangelogIds {
            latest_snapshot,
            earliest_changelog,
            latest_changelog,
        };
        match changelog_end(table, &retention, ids, &cfg.assume_removed.consumers, &all).await? {
            Some(end) => end,
            None => return Ok(None),
        }
    };
    let expired: Vec<Snapshot> = all
        .range(earliest_changelog..end)
        .map(|(_, c)| c.clone())
        .collect();
    if expired.is_empty() {
        return Ok(None);
    }
    Ok(Some(ExpiredRange { all, expired, end }))
}

/// The deletion plan of an expired range.
///
/// Candidates: changelog files of expired changelogs, and the files their deltas removed
/// (kept until now for readers of changelogs without a changelog list; with a changelog
/// list, usually gone at snapshot expiry already, their lists with them: absent lists read
/// as empty). Also the files the first kept version's delta removed: they were live in the
/// last expired changelog, which may have been all that kept them (a decoupled snapshot
/// expiry leaves them for it), and nothing would look at them again while that version
/// lives (never, once it is the latest snapshot). Only files still on disk count: a
/// candidate's extra files count when they are, even if its own file is gone.
/// Protectors (gathered while the candidates are read): every snapshot, every tag, other
/// branches, the remaining changelogs. Protection decides about each candidate.
async fn plan_deletions(
    table: &Table,
    cfg: &ChangelogExpireConfig,
    ctl: &RunControl,
    memory: MemoryBudget,
    range: &ExpiredRange,
) -> Result<DeletionPlan> {
    let expired = &range.expired;
    let mut rr = ReferenceReader::new(table).with_memory(memory);
    let changelog_lists: Vec<String> = expired
        .iter()
        .filter_map(|c| c.changelog_manifest_list.clone())
        .collect();
    let mut delta_lists: Vec<String> = expired
        .iter()
        .map(|c| c.delta_manifest_list.clone())
        .collect();
    if let Some(next) = first_kept_version(table, &range.all, range.end).await? {
        if !delta_lists.contains(&next.delta_manifest_list) {
            delta_lists.push(next.delta_manifest_list);
        }
    }
    let no_manifests = HashSet::new();
    let gather_protectors = async {
        let (snapshots, others) = futures::try_join!(
            table.all_snapshots(),
            other_protectors_except(table, &cfg.assume_removed.tags),
        )?;
        let mut protectors = snapshot_line(&format!("branch {}", table.branch_name()), &snapshots);
        // The expired changelogs themselves do not protect anything.
        let expiring: HashSet<String> = expired
            .iter()
            .map(|c| changelog_label(c.id, table.branch_name()))
            .collect();
        protectors.extend(
            others
                .into_iter()
                .filter(|p| !(p.mode == ProtectMode::Changelog && expiring.contains(&p.label))),
        );
        rr.prefetch(&protectors, &no_manifests).await?;
        Ok::<_, crate::error::Error>(protectors)
    };
    let (mut candidates, changelog_candidates, protectors) = futures::try_join!(
        deleted_by_deltas(&rr, table, &delta_lists, &no_manifests),
        added_by_lists(&rr, table, &changelog_lists, FileClass::ChangelogData),
        gather_protectors,
    )?;
    candidates.append(changelog_candidates)?;
    ctl.cancel.check()?;
    let candidates = on_disk_only(table, candidates, rr.memory(), rr.concurrency()).await?;
    ctl.cancel.check()?;
    DeletionPlan::build(
        &mut rr,
        table,
        candidates,
        expired,
        MetadataScope::ChangelogOnly,
        &protectors,
    )
    .await
}

/// Deletes in crash-safe order: checks the plan and the changelog files before anything
/// goes, deletes the plan's files, then the changelog files, and only when nothing failed
/// moves the `EARLIEST` hint past them (with `delete_all`, removes both hints).
async fn delete_and_move_hint(
    table: &Table,
    cfg: &ChangelogExpireConfig,
    deleter: &mut Deleter<'_>,
    plan: DeletionPlan,
    range: &ExpiredRange,
) -> Result<()> {
    let changelog_dir = table.changelogs();
    let files: Vec<Planned> = range
        .expired
        .iter()
        .map(|c| Planned {
            location: changelog_dir.location(c.id),
            class: FileClass::ChangelogMeta,
            bytes: None,
        })
        .collect();
    // The changelog files go after the plan: they are checked with it, before anything goes.
    deleter.check_plan(&files).await?;
    plan.execute(table, deleter, false).await?;
    deleter.delete("changelog files", files).await?;
    // A changelog file left behind must stay visible to a rerun: no EARLIEST past it.
    crate::clean::expiry::plan::stop_if_failed(deleter)?;
    if cfg.dry_run {
        return Ok(());
    }
    if cfg.delete_all {
        for hint in ["EARLIEST", "LATEST"] {
            let loc = changelog_dir.hint_location(hint);
            table.storage().delete_files(vec![loc], 1).await;
        }
    } else {
        changelog_dir
            .write_hint(table.storage(), "EARLIEST", range.end)
            .await?;
    }
    Ok(())
}

/// Candidates read per round of existence checks in [`on_disk_only`].
const PRESENCE_ROUND: usize = 1024;

/// The candidates whose file is on disk, each with those of its extra files that are, and
/// those whose file is gone but some of whose extra files are not (pushed with
/// [`Candidates::push_gone`]: the extra files are garbage of the expired range like any other
/// candidate's, decided by the same protection, and the gone file is never reported). A
/// changelog's delta can name files that are already gone: a decoupled snapshot expiry
/// deletes the compacted-away files itself and leaves the changelog pointing at them (Paimon
/// Java does), and a tag's changelog expiry or an interrupted run may have taken others.
/// Deleting an absent file is a no-op the storage layer counts as done, so without this the
/// report would name files the run never removed. One `HEAD` per candidate location.
async fn on_disk_only(
    table: &Table,
    mut cands: Candidates,
    memory: MemoryBudget,
    concurrency: usize,
) -> Result<Candidates> {
    cands.finish()?;
    let storage = table.storage();
    let mut out = Candidates::with_budget(memory);
    let mut records = cands.reader();
    let mut name = String::new();
    let mut absent = 0usize;
    loop {
        let mut round = Vec::with_capacity(PRESENCE_ROUND);
        while round.len() < PRESENCE_ROUND {
            let Some(rec) = records.next_record() else {
                break;
            };
            let rec = rec.map_err(crate::clean::expiry::plan::candidates::spill_error)?;
            let r = cands.decode_with(rec, &mut name).ok_or_else(|| {
                crate::clean::expiry::plan::candidates::spill_error(std::io::Error::other(
                    "malformed candidate record",
                ))
            })?;
            round.push(r);
        }
        if round.is_empty() {
            break;
        }
        let locations: Vec<&Location> = round
            .iter()
            .flat_map(|r| std::iter::once(&r.location).chain(r.extras.iter()))
            .collect();
        let present: Vec<bool> = futures::stream::iter(locations)
            .map(|l| async move { storage.head(l).await.map(|st| st.is_some()) })
            .buffered(concurrency.max(1))
            .collect::<Vec<Result<bool>>>()
            .await
            .into_iter()
            .collect::<Result<_>>()?;
        let mut at = 0;
        for r in round {
            let own = present[at];
            let n = r.extras.len();
            let extras: Vec<Location> = r
                .extras
                .into_iter()
                .zip(&present[at + 1..at + 1 + n])
                .filter(|(_, here)| **here)
                .map(|(l, _)| l)
                .collect();
            at += 1 + n;
            absent += usize::from(!own) + (n - extras.len());
            if own {
                out.push(r.location, Candidate::new(r.class, r.bytes, extras, ""))?;
            } else if !extras.is_empty() {
                out.push_gone(r.location, Candidate::new(r.class, r.bytes, extras, ""))?;
            }
        }
    }
    if absent > 0 {
        tracing::debug!(
            absent,
            "changelog expiry: candidate files already gone, not reported"
        );
    }
    Ok(out)
}
