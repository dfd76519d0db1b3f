//! Long-lived changelog expiry (spec §5.4): changelogs outlive their snapshots when the
//! changelog lifecycle is decoupled; they expire here by `changelog.*` retention, and with
//! `delete_all` every changelog older than the earliest snapshot goes.

use std::collections::HashSet;
use std::time::Instant;

use serde::Serialize;

use crate::clean::control::RunControl;
use crate::clean::expiry::protectors::{changelog_label, other_protectors_except, snapshot_line};
use crate::clean::expiry::retention::{now_millis, AssumeRemoved, Retention, RetentionOverrides};
use crate::clean::expiry::snapshots::{consumer_bound, write_hint};
use crate::clean::report::{DeletionReport, FileClass};
use crate::clean::shared::deleter::{Deleter, Planned};
use crate::clean::shared::plan::{added_by_lists, deleted_by_deltas, DeletionPlan, MetadataScope};
use crate::clean::shared::references::{ProtectMode, ReferenceReader};
use crate::error::{Error, Result};
use crate::spec::snapshot::Snapshot;
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

/// The ids a changelog expiry works with.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    latest_snap: i64,
    earliest_cl: i64,
    latest_cl: i64,
}

/// The first changelog id that retention `r` keeps (changelogs `[earliest_cl, end)` expire), or
/// `None` when none expires: Paimon's rules — retain max/min counted from the latest snapshot,
/// the consumers' next snapshot, the expire limit, then the time rule.
async fn retention_end(
    table: &Table,
    r: &Retention,
    b: Bounds,
    ignored_consumers: &[String],
    all: &std::collections::BTreeMap<i64, Snapshot>,
) -> Result<Option<i64>> {
    // Ids come from metadata (any i64): bounds saturate instead of overflowing.
    let min = b
        .latest_snap
        .saturating_sub(r.retain_max)
        .saturating_add(1)
        .max(b.earliest_cl);
    let mut max_exclusive = b.latest_snap.saturating_sub(r.retain_min).saturating_add(1);
    if let Some(c) = consumer_bound(table, ignored_consumers).await? {
        max_exclusive = max_exclusive.min(c);
    }
    max_exclusive = max_exclusive
        .min(b.earliest_cl.saturating_add(r.limit))
        .min(b.latest_cl);
    if max_exclusive <= b.earliest_cl {
        return Ok(None);
    }
    let mut end = max_exclusive;
    for id in min..=max_exclusive {
        if let Some(c) = all.get(&id) {
            if r.older_than_ms <= c.time_millis {
                end = id;
                break;
            }
        }
    }
    Ok(Some(end))
}

/// The long-lived changelogs of `table`'s branch that a changelog expiry with the table's own
/// retention would expire now (`changelogs`: all of them, by id). An interrupted changelog
/// expiry can leave these half-deleted (their metadata gone before their files, the crash-safe
/// order); they are expiring anyway, so a missing manifest of theirs does not block other work.
pub(crate) async fn expiring_now(
    table: &Table,
    changelogs: &std::collections::BTreeMap<i64, Snapshot>,
) -> Result<std::ops::Range<i64>> {
    let storage = table.storage();
    let r = Retention::resolve_changelog(
        table.options(),
        &RetentionOverrides::default(),
        now_millis(),
    )?;
    let (Some(latest_snap), Some(earliest_cl), Some(latest_cl)) = (
        table.snapshots().latest_id(storage).await?,
        changelogs.keys().next().copied(),
        changelogs.keys().next_back().copied(),
    ) else {
        return Ok(0..0);
    };
    let bounds = Bounds {
        latest_snap,
        earliest_cl,
        latest_cl,
    };
    Ok(
        match retention_end(table, &r, bounds, &[], changelogs).await? {
            Some(end) => earliest_cl..end,
            None => 0..0,
        },
    )
}

/// The version with id `end` that a changelog expiry keeps: the changelog `end`, else the
/// snapshot `end`, else none (a gap).
async fn first_kept_version(
    table: &Table,
    changelogs: &std::collections::BTreeMap<i64, Snapshot>,
    end: i64,
) -> Result<Option<Snapshot>> {
    if let Some(c) = changelogs.get(&end) {
        return Ok(Some(c.clone()));
    }
    table.snapshots().try_read(table.storage(), end).await
}

/// Expire long-lived changelogs of `table`'s branch.
pub async fn expire_changelogs(
    table: &Table,
    cfg: &ChangelogExpireConfig,
    ctl: &RunControl,
) -> Result<ChangelogExpireReport> {
    let started = Instant::now();
    let r = Retention::resolve_changelog(table.options(), &cfg.retention, now_millis())?;
    let storage = table.storage();
    let snaps = table.snapshots();
    let cls = table.changelogs();
    let mut report = ChangelogExpireReport::default();
    let (Some(latest_snap), Some(earliest_snap), Some(latest_cl), Some(earliest_cl)) = (
        snaps.latest_id(storage).await?,
        snaps.earliest_id(storage).await?,
        cls.latest_id(storage).await?,
        cls.earliest_id(storage).await?,
    ) else {
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        return Ok(report);
    };
    let all: std::collections::BTreeMap<i64, Snapshot> = table
        .all_changelogs()
        .await?
        .into_iter()
        .map(|c| (c.id, c))
        .collect();

    let end = if cfg.delete_all {
        if latest_cl >= earliest_snap {
            return Err(Error::Conflict(format!(
                "cannot delete all changelogs: changelog {latest_cl} is not older than the earliest snapshot {earliest_snap}"
            )));
        }
        latest_cl.checked_add(1).ok_or_else(|| {
            Error::Conflict(format!(
                "cannot delete all changelogs: changelog id {latest_cl} has no successor (i64 overflow)"
            ))
        })?
    } else {
        let bounds = Bounds {
            latest_snap,
            earliest_cl,
            latest_cl,
        };
        match retention_end(table, &r, bounds, &cfg.assume_removed.consumers, &all).await? {
            Some(end) => end,
            None => {
                report.elapsed_ms = started.elapsed().as_millis() as u64;
                return Ok(report);
            }
        }
    };
    let expired: Vec<Snapshot> = all
        .range(earliest_cl..end)
        .map(|(_, c)| c.clone())
        .collect();
    if expired.is_empty() {
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        return Ok(report);
    }
    ctl.cancel.check()?;

    // Candidates: changelog files of expired changelogs, and the files their deltas removed
    // (kept until now for readers of changelogs without a changelog list; with a changelog
    // list, usually gone at snapshot expiry already, their lists with them: absent lists read
    // as empty). Also the files the first kept version's delta removed: they were live in the
    // last expired changelog, which may have been all that kept them (a decoupled snapshot
    // expiry leaves them for it), and nothing would look at them again while that version
    // lives (never, once it is the latest snapshot). Protection decides about each.
    let mut rr = ReferenceReader::new(table);
    let changelog_lists: Vec<String> = expired
        .iter()
        .filter_map(|c| c.changelog_manifest_list.clone())
        .collect();
    let mut delta_lists: Vec<String> = expired
        .iter()
        .map(|c| c.delta_manifest_list.clone())
        .collect();
    if let Some(next) = first_kept_version(table, &all, end).await? {
        if !delta_lists.contains(&next.delta_manifest_list) {
            delta_lists.push(next.delta_manifest_list);
        }
    }
    // Protectors (gathered while the candidates are read): every snapshot, every tag, other
    // branches, the remaining changelogs.
    let no_manifests = HashSet::new();
    let gather_protectors = async {
        let (snapshots, others) = futures::try_join!(
            table.all_snapshots(),
            other_protectors_except(table, &cfg.assume_removed.tags),
        )?;
        let mut protectors = snapshot_line(&format!("branch {}", table.branch_name()), &snapshots);
        // The expired changelogs themselves do not protect anything.
        let expiring: std::collections::HashSet<String> = expired
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
    candidates.append(changelog_candidates);
    ctl.cancel.check()?;
    let plan = DeletionPlan::build(
        &mut rr,
        table,
        candidates,
        &expired,
        MetadataScope::ChangelogOnly,
        &protectors,
    )
    .await?;
    let mut deleter = Deleter::for_table(table, ctl, cfg.dry_run);
    let files: Vec<Planned> = expired
        .iter()
        .map(|c| Planned {
            location: cls.location(c.id),
            class: FileClass::ChangelogMeta,
            bytes: None,
        })
        .collect();
    // The changelog files go after the plan: they are checked with it, before anything goes.
    deleter.check_plan(&files).await?;
    plan.execute(table, &mut deleter, false).await?;
    deleter.delete("changelog files", files).await?;
    // A changelog file left behind must stay visible to a rerun: no EARLIEST past it.
    crate::clean::shared::plan::stop_if_failed(&deleter)?;
    if !cfg.dry_run {
        if cfg.delete_all {
            for hint in ["EARLIEST", "LATEST"] {
                let loc = cls.hint_location(hint);
                storage.delete_files(vec![loc], 1).await;
            }
        } else {
            write_hint(table, &cls.hint_location("EARLIEST"), end).await?;
        }
    }
    report.changelogs_expired = expired.len() as u64;
    report.first_expired = expired.first().map(|c| c.id);
    report.last_expired = expired.last().map(|c| c.id);
    report.deletion = deleter.report;
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}
