//! Which versions expire now: the id ranges snapshot and changelog expiry compute from the
//! resolved retention, the consumers' next snapshots and the versions' times. Protectors use the
//! changelog range too (a changelog expiring anyway may be half-deleted).

use std::collections::BTreeMap;

use crate::clean::expiry::consumers::consumer_bound;
use crate::clean::expiry::retention::{Retention, RetentionOverrides};
use crate::clean::shared::clock::now_millis;
use crate::error::Result;
use crate::spec::snapshot::Snapshot;
use crate::table::Table;

/// The snapshots `[begin, end)` that `retention` expires now (`all`: the branch's snapshots by
/// id, as listed; `begin` is the first of them), or None when the branch has no snapshot. `honour_consumers`: no snapshot from the
/// smallest `nextSnapshot` of the consumers (but `ignored_consumers`) on expires.
pub(crate) async fn snapshot_range(
    table: &Table,
    retention: &Retention,
    honour_consumers: bool,
    ignored_consumers: &[String],
    all: &BTreeMap<i64, Snapshot>,
) -> Result<Option<(i64, i64)>> {
    let storage = table.storage();
    let dir = table.snapshots();
    // The earliest is the first listed snapshot, whatever `EARLIEST` says: one below the hint
    // is expired whole like any other (its files are candidates, its file goes last), never
    // left unprotected. The latest trusts `LATEST` only as `VersionedDir::latest_id` does; a
    // hint below the listed maximum counts the retention from the hint (keeping more), and
    // every listed snapshot from `end` on protects its files.
    let (Some(latest), Some(&earliest)) = (dir.latest_id(storage).await?, all.keys().next()) else {
        return Ok(None);
    };
    // Ids come from metadata (any i64): bounds saturate instead of overflowing.
    let min = latest
        .saturating_sub(retention.retain_max)
        .saturating_add(1)
        .max(earliest);
    let mut max_exclusive = latest
        .saturating_sub(retention.retain_min)
        .saturating_add(1);
    if honour_consumers {
        if let Some(next_read) = consumer_bound(table, ignored_consumers).await? {
            max_exclusive = max_exclusive.min(next_read);
        }
    }
    max_exclusive = max_exclusive.min(earliest.saturating_add(retention.limit));
    let mut end = max_exclusive;
    for id in min..max_exclusive {
        if let Some(next) = all.get(&(id + 1)) {
            if retention.older_than_ms <= next.time_millis {
                end = id;
                break;
            }
        }
    }
    Ok(Some((earliest, end)))
}

/// The ids a changelog expiry works with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChangelogIds {
    /// The branch's latest snapshot.
    pub(crate) latest_snapshot: i64,
    /// The earliest long-lived changelog.
    pub(crate) earliest_changelog: i64,
    /// The latest long-lived changelog.
    pub(crate) latest_changelog: i64,
}

/// The first changelog id that `retention` keeps (changelogs `[earliest_changelog, end)`
/// expire), or `None` when none expires: Paimon's rules — retain max/min counted from the
/// latest snapshot, the consumers' next snapshot, the expire limit, then the time rule.
pub(crate) async fn changelog_end(
    table: &Table,
    retention: &Retention,
    ids: ChangelogIds,
    ignored_consumers: &[String],
    all: &BTreeMap<i64, Snapshot>,
) -> Result<Option<i64>> {
    // Ids come from metadata (any i64): bounds saturate instead of overflowing.
    let min = ids
        .latest_snapshot
        .saturating_sub(retention.retain_max)
        .saturating_add(1)
        .max(ids.earliest_changelog);
    let mut max_exclusive = ids
        .latest_snapshot
        .saturating_sub(retention.retain_min)
        .saturating_add(1);
    if let Some(next_read) = consumer_bound(table, ignored_consumers).await? {
        max_exclusive = max_exclusive.min(next_read);
    }
    max_exclusive = max_exclusive
        .min(ids.earliest_changelog.saturating_add(retention.limit))
        .min(ids.latest_changelog);
    if max_exclusive <= ids.earliest_changelog {
        return Ok(None);
    }
    let mut end = max_exclusive;
    for id in min..=max_exclusive {
        if let Some(changelog) = all.get(&id) {
            if retention.older_than_ms <= changelog.time_millis {
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
    changelogs: &BTreeMap<i64, Snapshot>,
) -> Result<std::ops::Range<i64>> {
    let storage = table.storage();
    let retention = Retention::resolve_changelog(
        table.options(),
        &RetentionOverrides::default(),
        now_millis(),
    )?;
    let (Some(latest_snapshot), Some(earliest_changelog), Some(latest_changelog)) = (
        table.snapshots().latest_id(storage).await?,
        changelogs.keys().next().copied(),
        changelogs.keys().next_back().copied(),
    ) else {
        return Ok(0..0);
    };
    let ids = ChangelogIds {
        latest_snapshot,
        earliest_changelog,
        latest_changelog,
    };
    Ok(
        match changelog_end(table, &retention, ids, &[], changelogs).await? {
            Some(end) => earliest_changelog..end,
            None => 0..0,
        },
    )
}
