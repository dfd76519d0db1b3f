//! Snapshot expiration (spec §5.2), safer than Java: a file is deleted only when no retained
//! snapshot, no tag of any branch, no snapshot of another branch and no long-lived changelog
//! still needs it. Deletion order is crash-safe: data → changelog data → empty directories →
//! manifests / index files / statistics → manifest lists / index manifests → snapshot files →
//! EARLIEST hint.

use std::collections::{BTreeMap, HashSet};
use std::ops::Bound;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::clean::control::RunControl;
use crate::clean::expiry::protectors::{other_protectors_except, snapshot_line};
use crate::clean::expiry::retention::{now_millis, AssumeRemoved, Retention, RetentionOverrides};
use crate::clean::report::{DeletionReport, FileClass};
use crate::clean::shared::deleter::{Deleter, Planned};
use crate::clean::shared::plan::{
    added_by_lists, deleted_by_deltas, manifests_by_list, DeletionPlan, MetadataScope,
    RemovedMetadata,
};
use crate::clean::shared::references::{ProtectMode, Protector, ReferenceReader};
use crate::error::{Error, Result};
use crate::spec::snapshot::Snapshot;
use crate::storage::Location;
use crate::table::Table;

/// Caller settings for snapshot expiry; unset fields take the table's options, then Paimon's
/// defaults.
#[derive(Debug, Clone, Default)]
pub struct ExpireConfig {
    /// Retention overrides (min/max retained, time retained or absolute cut-off, limit).
    pub retention: RetentionOverrides,
    /// Remove bucket and partition directories left empty (`snapshot.clean-empty-directories`).
    pub clean_empty_dirs: Option<bool>,
    /// Compute and report everything, change nothing.
    pub dry_run: bool,
    /// Lance's policy: refuse to run (naming the tags) when a tag pins a snapshot that would
    /// otherwise expire, instead of silently keeping its files.
    pub refuse_if_tags_pin_expired: bool,
    /// Tags and consumers to treat as removed (see [`AssumeRemoved`]).
    pub assume_removed: AssumeRemoved,
}

/// What an expiry run did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ExpireReport {
    /// Number of snapshots expired.
    pub snapshots_expired: u64,
    /// First expired id.
    pub first_expired: Option<i64>,
    /// Last expired id.
    pub last_expired: Option<i64>,
    /// Earliest snapshot after the run.
    pub earliest_after: Option<i64>,
    /// Long-lived changelog files written (decoupled changelog lifecycle).
    pub changelogs_written: u64,
    /// Files deleted per kind, failures and paths.
    pub deletion: DeletionReport,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
}

/// The smallest `nextSnapshot` of the table's consumers, leaving out `ignored` ids: versions
/// from there on are still to be read by a consumer.
pub(crate) async fn consumer_bound(table: &Table, ignored: &[String]) -> Result<Option<i64>> {
    Ok(table
        .consumers()
        .await?
        .iter()
        .filter(|(id, _)| !ignored.contains(id))
        .map(|(_, (c, _))| c.next_snapshot)
        .min())
}

/// The range `[begin, end)` to expire, or None.
pub(crate) async fn expire_range(
    table: &Table,
    r: &Retention,
    honour_consumers: bool,
    ignored_consumers: &[String],
    all: &BTreeMap<i64, Snapshot>,
) -> Result<Option<(i64, i64)>> {
    let storage = table.storage();
    let dir = table.snapshots();
    let (Some(latest), Some(earliest)) = (
        dir.latest_id(storage).await?,
        dir.earliest_id(storage).await?,
    ) else {
        return Ok(None);
    };
    // Ids come from metadata (any i64): bounds saturate instead of overflowing.
    let min = latest
        .saturating_sub(r.retain_max)
        .saturating_add(1)
        .max(earliest);
    let mut max_exclusive = latest.saturating_sub(r.retain_min).saturating_add(1);
    if honour_consumers {
        if let Some(c) = consumer_bound(table, ignored_consumers).await? {
            max_exclusive = max_exclusive.min(c);
        }
    }
    max_exclusive = max_exclusive.min(earliest.saturating_add(r.limit));
    let mut end = max_exclusive;
    for id in min..max_exclusive {
        if let Some(next) = all.get(&(id + 1)) {
            if r.older_than_ms <= next.time_millis {
                end = id;
                break;
            }
        }
    }
    Ok(Some((earliest, end)))
}

/// Expire snapshots of `table`'s branch.
pub async fn expire_snapshots(
    table: &Table,
    cfg: &ExpireConfig,
    ctl: &RunControl,
) -> Result<ExpireReport> {
    let started = Instant::now();
    let now = now_millis();
    let r = Retention::resolve_snapshot(table.options(), &cfg.retention, now)?;
    let decoupled = r.changelog_decoupled;
    let clean_dirs = match cfg.clean_empty_dirs {
        Some(v) => v,
        None => table
            .options()
            .get_bool("snapshot.clean-empty-directories")?
            .or(table
                .options()
                .get_bool("snapshot.expire.clean-empty-directories")?)
            .unwrap_or(false),
    };
    let changelog_only = decoupled
        && table
            .options()
            .get_bool("consumer.changelog-only")?
            .unwrap_or(false);
    let storage = table.storage();
    let (all, sizes) = read_snapshots_sized(table).await?;
    let mut report = ExpireReport::default();
    let mut deleter = Deleter::for_table(table, ctl, cfg.dry_run);

    let Some((earliest, end)) = expire_range(
        table,
        &r,
        !changelog_only,
        &cfg.assume_removed.consumers,
        &all,
    )
    .await?
    else {
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        return Ok(report);
    };
    let dir = table.snapshots();
    if end <= earliest {
        if !cfg.dry_run && !storage.exists(&dir.hint_location("EARLIEST")).await? {
            write_hint(table, &dir.hint_location("EARLIEST"), earliest).await?;
        }
        report.earliest_after = Some(earliest);
        report.deletion = deleter.report;
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        return Ok(report);
    }
    let Some(end_snapshot) = all.get(&end).cloned() else {
        return Err(Error::Conflict(format!(
            "snapshot {end}, the first one to keep, is missing; refusing to expire (nothing deleted)"
        )));
    };
    let expired: Vec<Snapshot> = all.range(earliest..end).map(|(_, s)| s.clone()).collect();
    let Some(begin) = expired.first().map(|s| s.id) else {
        report.earliest_after = Some(end);
        report.deletion = deleter.report;
        return Ok(report);
    };

    if cfg.refuse_if_tags_pin_expired {
        let pinned: Vec<String> = table
            .tags()
            .await?
            .into_iter()
            .filter(|(n, _)| !cfg.assume_removed.tags.contains(n))
            .filter(|(_, t)| t.snapshot.id < end)
            .map(|(n, t)| format!("{n} (snapshot {})", t.snapshot.id))
            .collect();
        if !pinned.is_empty() {
            return Err(Error::Conflict(format!(
                "tags pin snapshots older than the retention window: {}",
                pinned.join(", ")
            )));
        }
    }
    ctl.cancel.check()?;

    // Candidates: files deleted by the deltas of (begin, end] (an ADD of the same location in
    // the same delta cancels: level upgrade), and changelog files of [begin, end). The
    // protectors and their lists are read first, with the delta lists; then the delta
    // manifests, each decoded once: one a protector names is also kept for protection. On
    // object stores the protectors' other manifests and index manifests are fetched meanwhile
    // (`ReferenceReader::prefetch`). The changelog candidates and the expired versions' own
    // metadata (lists, index manifests) are read alongside all of it.
    let mut rr = ReferenceReader::new(table);
    let delta_lists: Vec<String> = all
        .range(begin + 1..=end)
        .map(|(_, s)| s.delta_manifest_list.clone())
        .collect();
    let changelog_lists: Vec<String> = expired
        .iter()
        .filter_map(|s| s.changelog_manifest_list.clone())
        .collect();
    let kept: Vec<Snapshot> = std::iter::once(end_snapshot.clone())
        .chain(
            all.range((Bound::Excluded(end), Bound::Unbounded))
                .map(|(_, s)| s.clone()),
        )
        .collect();
    let gather_protectors = async {
        // The kept snapshots of this branch (their lists read first: known already), every
        // tag, other branches, changelogs, and (decoupled lifecycle) the expired snapshots that
        // become long-lived changelogs now.
        let mut protectors = snapshot_line(&format!("branch {}", table.branch_name()), &kept);
        let (mut others, mut named) = futures::try_join!(
            other_protectors_except(table, &cfg.assume_removed.tags),
            rr.protector_manifests(&protectors),
        )?;
        if decoupled {
            others.extend(expired.iter().map(|s| Protector {
                label: format!("new changelog {}", s.id),
                snapshot: s.clone(),
                mode: ProtectMode::Changelog,
            }));
        }
        named.extend(rr.protector_manifests(&others).await?);
        protectors.append(&mut others);
        Ok::<_, Error>((protectors, named))
    };
    let deltas_and_protectors = async {
        let ((protectors, named), ()) =
            futures::try_join!(gather_protectors, rr.load_lists(&delta_lists, true))?;
        let read_by_candidates: HashSet<String> = manifests_by_list(&rr, &delta_lists)
            .into_iter()
            .map(|(_, m)| m)
            .filter(|m| named.contains(m))
            .collect();
        let (candidates, ()) = futures::try_join!(
            deleted_by_deltas(&rr, table, &delta_lists, &named),
            rr.prefetch(&protectors, &read_by_candidates),
        )?;
        Ok::<_, Error>((candidates, protectors))
    };
    let ((mut candidates, protectors), changelog_candidates, removed_metadata) = futures::try_join!(
        deltas_and_protectors,
        added_by_lists(&rr, table, &changelog_lists, FileClass::ChangelogData),
        RemovedMetadata::read(&rr, table, &expired, MetadataScope::All),
    )?;
    candidates.append(changelog_candidates);
    ctl.cancel.check()?;
    tracing::debug!(
        candidates = candidates.len(),
        protectors = protectors.len(),
        "candidates and protectors read"
    );
    let plan =
        DeletionPlan::from_parts(&mut rr, table, candidates, removed_metadata, &protectors).await?;
    tracing::debug!(data_files = plan.data.len(), "deletion plan ready");
    ctl.cancel.check()?;
    let snapshot_files: Vec<Planned> = expired
        .iter()
        .map(|s| Planned {
            location: dir.location(s.id),
            class: FileClass::SnapshotMeta,
            bytes: sizes.get(&s.id).copied(),
        })
        .collect();
    // The snapshot files go after the plan: they are checked with it, before anything goes.
    deleter.check_plan(&snapshot_files).await?;
    plan.execute(table, &mut deleter, clean_dirs).await?;
    if decoupled && !cfg.dry_run {
        let cl = table.changelogs();
        for s in &expired {
            storage
                .put(
                    &cl.location(s.id),
                    bytes::Bytes::from(changelog_of(s).to_json()?),
                )
                .await?;
            report.changelogs_written += 1;
        }
        if let Some(last) = expired.last() {
            write_hint(table, &cl.hint_location("LATEST"), last.id).await?;
        }
    }
    deleter.delete("snapshot files", snapshot_files).await?;
    // A snapshot file left behind must stay visible to a rerun: no EARLIEST past it.
    crate::clean::shared::plan::stop_if_failed(&deleter)?;
    if !cfg.dry_run {
        write_hint(table, &dir.hint_location("EARLIEST"), end).await?;
    }

    report.snapshots_expired = expired.len() as u64;
    report.first_expired = Some(begin);
    report.last_expired = expired.last().map(|s| s.id);
    report.earliest_after = Some(end);
    report.deletion = deleter.report;
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    tracing::info!(
        expired = report.snapshots_expired,
        files = report.deletion.total_files(),
        "expired snapshots"
    );
    Ok(report)
}

/// The long-lived changelog a decoupled expiry writes for snapshot `s`: the snapshot without
/// its index manifest and statistics. Those go with the snapshot (as in Java, whose changelog
/// still names them once deleted); a changelog reader needs neither, and a changelog that
/// named deleted files would make every strict reader (orphan removal) refuse the table.
fn changelog_of(s: &Snapshot) -> Snapshot {
    let mut c = s.clone();
    c.index_manifest = None;
    c.statistics = None;
    c
}

/// Every snapshot of the table's branch by id, and each snapshot file's size from the listing.
async fn read_snapshots_sized(
    table: &Table,
) -> Result<(BTreeMap<i64, Snapshot>, BTreeMap<i64, u64>)> {
    let mut all = BTreeMap::new();
    let mut sizes = BTreeMap::new();
    for (s, size) in table.all_snapshots_sized().await? {
        sizes.insert(s.id, size);
        all.insert(s.id, s);
    }
    Ok((all, sizes))
}

/// Write a hint file (EARLIEST / LATEST).
pub(crate) async fn write_hint(table: &Table, loc: &Location, id: i64) -> Result<()> {
    table
        .storage()
        .put(loc, bytes::Bytes::from(id.to_string()))
        .await
}

/// A duration as whole milliseconds.
pub(crate) fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
